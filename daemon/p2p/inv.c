/*
 * daemon/p2p/inv.c: inv, getdata, notfound and mempool.
 *
 *   - every inv entry is remembered in the announcing peer's bounded
 *     known-inventory set (salted SipHash fingerprints; the set is
 *     allocated on the peer's first inv, so idle peers cost nothing). A
 *     repeat announcement from the same peer is skipped at once.
 *   - a new transaction announcement goes up to the tx_announced hook
 *     (txrelay/accept.c asks what it lacks through its request tracker,
 *     txrelay/request.c); the requests it makes collect in the getdata
 *     batch here (inv_batch_add), sent once the whole inv is read.
 *   - getdata: with a chain, every entry goes in order to the
 *     getdata_queue hook (sync/serve.c: blocks from the block files,
 *     transactions from the relay mirror); without one (unit tests), the
 *     genesis block is served here and transactions through the
 *     getdata_tx hook (txrelay/announce.c), notfound otherwise.
 *   - notfound: each entry goes to the tx_notfound hook (the tracker asks
 *     another announcer).
 *   - block invs go to the block_announced hook (sync/download.c); tx and
 *     block messages go straight from the message table to their rooms.
 *   - mempool: peerd does not offer bloom filters, so, as Core, the peer is
 *     disconnected.
 * Peers that negotiated wtxidrelay announce by wtxid (MSG_WTX) and others
 * by txid (MSG_TX); the other kind is ignored, as Core does.
 *
 * The rooms above p2p/ (sync/, txrelay/) are reached only through
 * d->p2p_hooks (p2p.h), which the wiring fills (daemon/p2p_hooks.c).
 */
#include "daemon/p2p/p2p.h"

#include <errno.h>

void inv_peer_gone(struct peer *p)
{
	p->d->p2p_hooks->peer_gone(p);
	addr_peer_gone(p);
	if (p->p2p->known_inv) {
		hset_release(p->p2p->known_inv);
		xfree(p->p2p->known_inv);
		p->p2p->known_inv = NULL;
	}
}

static uint64_t hash_fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

/* 1 if the peer already announced/sent it, 0 if new, -1 out of memory. */
static int known_insert(struct peer *p, uint64_t fp)
{
	if (!p->p2p->known_inv) {
		p->p2p->known_inv = xmalloc(sizeof(*p->p2p->known_inv));
		if (!p->p2p->known_inv)
			return -1;
		hset_init(p->p2p->known_inv, INV_KNOWN_MAX);
	}
	return hset_insert(p->p2p->known_inv, fp);
}

void inv_known_add(struct peer *p, const struct proto_hash *h)
{
	(void)known_insert(p, hash_fp(p->d, h));
}

bool inv_known_has(const struct peer *p, const struct proto_hash *h)
{
	return p->p2p->known_inv && hset_contains(p->p2p->known_inv, hash_fp(p->d, h));
}

int inv_batch_add(struct daemon *d, const struct proto_inv_vec *v)
{
	struct proto_inv *inv = &d->out.inv;
	if (proto_inv_reserve(inv, inv->n + 1))
		return -ENOMEM;
	inv->v[inv->n++] = *v;
	return 0;
}

void inv_batch_send(struct peer *p, enum proto_cmd cmd)
{
	struct daemon *d = p->d;
	if (!d->out.inv.n)
		return;
	d->out.cmd = cmd;
	(void)peer_send_msg(p, &d->out);
	d->out.inv.n = 0;
}

static void on_inv(struct peer *p, const struct proto_inv *inv)
{
	struct daemon *d = p->d;
	/* Core's transaction requests run on its mockable clock (GetTime). */
	uint64_t now = (uint64_t)daemon_time_ms(d);
	d->out.inv.n = 0;
	for (uint32_t i = 0; i < inv->n; i++) {
		const struct proto_inv_vec *v = &inv->v[i];
		uint32_t base = v->type & ~(uint32_t)PROTO_INV_WITNESS_FLAG;
		if (base == PROTO_INV_TX || base == PROTO_INV_WTX) {
			d->stats.inv_tx++;
			/* Core 29 (-blocksonly, a block-relay-only or feeler
			 * connection): announcing a transaction to a node that
			 * asked for none breaks the protocol. */
			if (peer_rejects_txs(p)) {
				peer_disconnect(p, "transaction inv sent in violation of protocol");
				return;
			}
			/* Core: a wtxidrelay peer announces by wtxid only. */
			if (p->wtxidrelay ? v->type != PROTO_INV_WTX : v->type != PROTO_INV_TX)
				continue;
			uint64_t fp = hash_fp(d, &v->hash);
			int k = known_insert(p, fp);
			if (k == 1) {
				d->stats.inv_known_dup++;
				continue;
			}
			/* Core: nothing is asked for during initial block download. */
			if (d->view->ibd)
				continue;
			d->p2p_hooks->tx_announced(p, v, now);
		} else if (base == PROTO_INV_BLOCK) {
			d->stats.inv_block++;
			(void)known_insert(p, hash_fp(d, &v->hash));
			d->p2p_hooks->block_announced(p, &v->hash);
		} else {
			d->stats.inv_other++;
		}
	}
	inv_batch_send(p, PROTO_CMD_GETDATA);
}

void inv_getdata_resume(struct peer *p)
{
	struct daemon *d = p->d;
	const struct proto_params *pp = d->params;
	if (!p->p2p->blocks_owed || p->send_paused || p->state == PEER_CLOSING)
		return;
	d->txw.len = 0;
	d->txw.err = 0;
	proto_frame_write(&d->txw, pp->magic, "block", pp->genesis, pp->genesis_len);
	if (d->txw.err) {
		p->p2p->blocks_owed = 0;
		return;
	}
	/* One copy at a time, as Core: a send-paused peer gets no more
	 * until its queue drains (peer_flow_update calls back here). */
	while (p->p2p->blocks_owed && !p->send_paused && p->state != PEER_CLOSING) {
		p->p2p->blocks_owed--;
		peer_send_frame(p, PROTO_CMD_BLOCK, d->txw.buf, d->txw.len);
		d->stats.blocks_served++;
	}
}

static void on_getdata(struct peer *p, const struct proto_inv *inv)
{
	struct daemon *d = p->d;
	const struct proto_params *pp = d->params;
	bool have_chain = chainview_height(d) >= 0;
	d->out.inv.n = 0;
	for (uint32_t i = 0; i < inv->n && p->state != PEER_CLOSING; i++) {
		const struct proto_inv_vec *v = &inv->v[i];
		uint32_t base = v->type & ~(uint32_t)PROTO_INV_WITNESS_FLAG;
		d->stats.getdata_items++;
		if (have_chain) {
			/* Answered in order; blocks read on the validation
			 * thread (sync/serve.c). */
			(void)d->p2p_hooks->getdata_queue(p, v);
			continue;
		}
		if (base == PROTO_INV_BLOCK && proto_hash_eq(&v->hash, &pp->genesis_hash)) {
			/* No chain open (unit tests): the one block peerd has.
			 * Counted, then served until the peer is send-paused and
			 * the rest as its queue drains: queueing every copy at
			 * once let one getdata naming it 50,000 times hold ~15 MB
			 * past maxsendbuffer. While any is owed the peer stays
			 * paused, so no further message is processed and the
			 * count is bounded by one message's. */
			p->p2p->blocks_owed++;
			continue;
		}
		/* Core answers only transactions with notfound; other block
		 * kinds (filtered, compact) and unknown blocks get nothing. */
		if (base != PROTO_INV_TX && base != PROTO_INV_WTX)
			continue;
		if (d->p2p_hooks->getdata_tx(p, v))
			continue;
		if (inv_batch_add(d, v))
			break;
	}
	if (p->state == PEER_CLOSING)
		return;
	inv_getdata_resume(p);
	if (p->state == PEER_CLOSING)
		return;
	if (have_chain) {
		d->p2p_hooks->getdata_done(p);
		return;
	}
	d->stats.notfound_sent += d->out.inv.n;
	inv_batch_send(p, PROTO_CMD_NOTFOUND);
}

static void on_notfound(struct peer *p, const struct proto_inv *inv)
{
	struct daemon *d = p->d;
	for (uint32_t i = 0; i < inv->n; i++) {
		d->stats.notfound_recv++;
		d->p2p_hooks->tx_notfound(p, &inv->v[i]);
	}
}

void inv_on_inv(struct peer *p, const struct proto_msg *m)
{
	on_inv(p, &m->inv);
}

void inv_on_getdata(struct peer *p, const struct proto_msg *m)
{
	on_getdata(p, &m->inv);
}

void inv_on_notfound(struct peer *p, const struct proto_msg *m)
{
	on_notfound(p, &m->inv);
}

void inv_on_mempool(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	peer_disconnect(p, "mempool request with bloom filters disabled");
}

void inv_on_msg(struct peer *p, const struct proto_msg *m)
{
	const struct p2p_msg_entry *e = &p->d->msg_table[m->cmd];
	if (e->on_msg)
		e->on_msg(p, m);
}
