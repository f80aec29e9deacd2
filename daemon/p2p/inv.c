/*
 * daemon/p2p/inv.c: inv, getdata, notfound, tx, block and mempool.
 *
 *   - every inv entry is remembered in the announcing peer's bounded
 *     known-inventory set (salted SipHash fingerprints; the set is
 *     allocated on the peer's first inv, so idle peers cost nothing). A
 *     repeat announcement from the same peer is skipped at once.
 *   - each announced transaction peerd does not already have (mempool,
 *     orphanage, recent rejects, recently confirmed: txrelay/accept.c) is
 *     requested once, from one announcer at a time (Core's
 *     TxRequestTracker, simplified): up to 100 requests in flight per
 *     peer, up to 5,000 tracked announcements per peer, 100,000 in all. A
 *     request unanswered after 60 s (GETDATA_TX_INTERVAL), or answered
 *     with notfound, falls back to the next announcer; when none is left
 *     the announcement is forgotten. An orphan's missing parents are
 *     tracked here too, by txid, as announced by each of its announcers.
 *   - a received transaction goes to the mempool (txrelay/accept.c).
 *   - getdata: blocks are served from the block files (sync/serve.c),
 *     transactions from the relay mirror (txrelay/announce.c), notfound otherwise.
 *   - block invs start a headers sync (sync/download.c); block messages go to
 *     sync/download.c undecoded.
 *   - mempool: peerd does not offer bloom filters, so, as Core, the peer is
 *     disconnected.
 * Peers that negotiated wtxidrelay announce by wtxid (MSG_WTX) and others
 * by txid (MSG_TX); the other kind is ignored, as Core does.
 */
#include "daemon/p2p/p2p.h"
#include "daemon/program.h" /* the calls up that the p2p hooks replace */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/require.h"

/* The limits (INV_MAX_*, INV_GETDATA_TX_INTERVAL_MS) are in daemon.h. */
#define INV_NONE UINT32_MAX

/** One tracked announcement. Peer references are id + 1 (0 = none). */
struct inv_req {
	struct proto_hash hash;
	uint32_t type;      /**< PROTO_INV_TX or PROTO_INV_WTX, as announced */
	uint32_t next_free; /**< free-list link while unused */
	uint64_t requested; /**< peer asked (id + 1), 0 while waiting */
	uint64_t expiry_ms;
	uint64_t ann[INV_MAX_ANNOUNCERS];
	uint8_t n_ann;
	bool used;
};

/** A request chosen by the tick, sent grouped by peer. */
struct inv_pending {
	uint64_t peer;
	uint32_t slot;
};

int inv_init(struct daemon *d)
{
	struct inv_state *s = d->inv;
	memset(s, 0, sizeof(*s));
	hmap_init(&s->req_index);
	s->free_head = INV_NONE;
	return 0;
}

void inv_release(struct daemon *d)
{
	struct inv_state *s = d->inv;
	hmap_release(&s->req_index);
	xfree(s->reqs);
	s->reqs = NULL;
	xfree(s->pending);
	s->pending = NULL;
	s->pending_cap = 0;
}

uint32_t inv_tracked(const struct daemon *d)
{
	return d->inv->reqs_used;
}

void inv_peer_gone(struct peer *p)
{
	txrelay_peer_gone(p);
	if (p->known_inv) {
		hset_release(p->known_inv);
		xfree(p->known_inv);
		p->known_inv = NULL;
	}
}

static inline uint64_t ref(const struct peer *p)
{
	return p->id + 1;
}

/* The live peer behind a reference, or NULL once it is closing or gone. */
static struct peer *deref(struct daemon *d, uint64_t r)
{
	if (!r)
		return NULL;
	struct peer *p = peer_by_id(d, r - 1);
	return p && p->state == PEER_ACTIVE ? p : NULL;
}

static uint64_t hash_fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

/* 1 if the peer already announced/sent it, 0 if new, -1 out of memory. */
static int known_insert(struct peer *p, uint64_t fp)
{
	if (!p->known_inv) {
		p->known_inv = xmalloc(sizeof(*p->known_inv));
		if (!p->known_inv)
			return -1;
		hset_init(p->known_inv, INV_KNOWN_MAX);
	}
	return hset_insert(p->known_inv, fp);
}

void inv_known_add(struct peer *p, const struct proto_hash *h)
{
	(void)known_insert(p, hash_fp(p->d, h));
}

bool inv_known_has(const struct peer *p, const struct proto_hash *h)
{
	return p->known_inv && hset_contains(p->known_inv, hash_fp(p->d, h));
}

/* ---- the request tracker -------------------------------------------- */

static int req_alloc(struct inv_state *s, uint32_t *slot)
{
	if (s->free_head != INV_NONE) {
		*slot = s->free_head;
		s->free_head = s->reqs[*slot].next_free;
		return 0;
	}
	if (s->reqs_cap <= s->reqs_used) {
		uint32_t ncap = s->reqs_cap ? s->reqs_cap * 2 : 256;
		if (ncap > INV_MAX_TRACKED)
			ncap = INV_MAX_TRACKED;
		if (ncap <= s->reqs_cap)
			return -ENOSPC;
		struct inv_req *n = xreallocarray(s->reqs, ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		/* New slots go on the free list, lowest first. */
		for (uint32_t i = ncap; i-- > s->reqs_cap;) {
			n[i].used = false;
			n[i].next_free = s->free_head;
			s->free_head = i;
		}
		s->reqs = n;
		s->reqs_cap = ncap;
	}
	*slot = s->free_head;
	s->free_head = s->reqs[*slot].next_free;
	return 0;
}

static void drop_announcer(struct daemon *d, struct inv_req *e, uint8_t i)
{
	struct peer *q = peer_by_id(d, e->ann[i] - 1);
	if (q && q->tx_announced)
		q->tx_announced--;
	e->ann[i] = e->ann[--e->n_ann];
}

static void clear_request(struct daemon *d, struct inv_req *e)
{
	if (!e->requested)
		return;
	struct peer *q = peer_by_id(d, e->requested - 1);
	if (q && q->tx_inflight)
		q->tx_inflight--;
	e->requested = 0;
}

static void req_delete(struct daemon *d, uint32_t slot)
{
	struct inv_state *s = d->inv;
	struct inv_req *e = &s->reqs[slot];
	clear_request(d, e);
	while (e->n_ann)
		drop_announcer(d, e, (uint8_t)(e->n_ann - 1));
	hmap_del(&s->req_index, hash_fp(d, &e->hash));
	e->used = false;
	e->next_free = s->free_head;
	s->free_head = slot;
	s->reqs_used--;
}

static bool req_find(struct daemon *d, uint64_t fp, uint32_t *slot)
{
	return hmap_get(&d->inv->req_index, fp, slot);
}

/* The inv entry to ask `p` for e: wtxid, or txid with the witness flag. */
static void request_vec(const struct peer *p, const struct inv_req *e, struct proto_inv_vec *v)
{
	v->hash = e->hash;
	if (e->type == PROTO_INV_WTX)
		v->type = PROTO_INV_WTX;
	else
		v->type = PROTO_INV_TX |
		          ((p->services & PROTO_NODE_WITNESS) ? PROTO_INV_WITNESS_FLAG : 0);
}

static bool can_ask(const struct peer *p)
{
	return p->state == PEER_ACTIVE && !p->send_paused && p->tx_inflight < INV_MAX_PEER_INFLIGHT;
}

static void mark_requested(struct daemon *d, struct peer *p, struct inv_req *e, uint64_t now_ms)
{
	e->requested = ref(p);
	e->expiry_ms = now_ms + INV_GETDATA_TX_INTERVAL_MS;
	p->tx_inflight++;
	d->stats.tx_requested++;
}

/* Append to the getdata batch in d->out.inv. */
static int batch_add(struct daemon *d, const struct proto_inv_vec *v)
{
	struct proto_inv *inv = &d->out.inv;
	if (proto_inv_reserve(inv, inv->n + 1))
		return -ENOMEM;
	inv->v[inv->n++] = *v;
	return 0;
}

static void batch_send(struct peer *p, enum proto_cmd cmd)
{
	struct daemon *d = p->d;
	if (!d->out.inv.n)
		return;
	d->out.cmd = cmd;
	(void)peer_send_msg(p, &d->out);
	d->out.inv.n = 0;
}

/* A tx announcement from p: track it, and ask p now if possible. */
static void track(struct peer *p, const struct proto_inv_vec *v, uint64_t fp, uint64_t now_ms)
{
	struct daemon *d = p->d;
	struct inv_state *s = d->inv;
	uint32_t slot;
	if (p->tx_announced >= INV_MAX_PEER_ANNOUNCEMENTS) {
		d->stats.inv_ignored_full++;
		return;
	}
	struct inv_req *e;
	if (req_find(d, fp, &slot)) {
		e = &s->reqs[slot];
		for (uint8_t i = 0; i < e->n_ann; i++) {
			if (e->ann[i] == ref(p))
				return;
		}
		if (e->n_ann >= INV_MAX_ANNOUNCERS)
			return;
	} else {
		if (s->reqs_used >= INV_MAX_TRACKED || req_alloc(s, &slot)) {
			d->stats.inv_ignored_full++;
			return;
		}
		if (hmap_put(&s->req_index, fp, slot)) {
			s->reqs[slot].next_free = s->free_head;
			s->free_head = slot;
			d->stats.inv_ignored_full++;
			return;
		}
		e = &s->reqs[slot];
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->hash = v->hash;
		e->type = v->type == PROTO_INV_WTX ? PROTO_INV_WTX : PROTO_INV_TX;
		s->reqs_used++;
	}
	e->ann[e->n_ann++] = ref(p);
	p->tx_announced++;
	if (!e->requested && can_ask(p)) {
		struct proto_inv_vec rv;
		request_vec(p, e, &rv);
		if (batch_add(d, &rv) == 0)
			mark_requested(d, p, e, now_ms);
	}
}

static void on_inv(struct peer *p, const struct proto_inv *inv)
{
	struct daemon *d = p->d;
	uint64_t now = daemon_now_ms(d);
	d->out.inv.n = 0;
	for (uint32_t i = 0; i < inv->n; i++) {
		const struct proto_inv_vec *v = &inv->v[i];
		uint32_t base = v->type & ~(uint32_t)PROTO_INV_WITNESS_FLAG;
		if (base == PROTO_INV_TX || base == PROTO_INV_WTX) {
			d->stats.inv_tx++;
			/* Core 29 (-blocksonly): announcing a transaction to a node
			 * that asked for none breaks the protocol. */
			if (d->conf->blocksonly) {
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
			if (txaccept_inv_have(p, v))
				continue;
			track(p, v, fp, now);
		} else if (base == PROTO_INV_BLOCK) {
			d->stats.inv_block++;
			(void)known_insert(p, hash_fp(d, &v->hash));
			sync_on_block_inv(p, &v->hash);
		} else {
			d->stats.inv_other++;
		}
	}
	batch_send(p, PROTO_CMD_GETDATA);
}

void inv_getdata_resume(struct peer *p)
{
	struct daemon *d = p->d;
	const struct proto_params *pp = d->params;
	if (!p->blocks_owed || p->send_paused || p->state == PEER_CLOSING)
		return;
	d->txw.len = 0;
	d->txw.err = 0;
	proto_frame_write(&d->txw, pp->magic, "block", pp->genesis, pp->genesis_len);
	if (d->txw.err) {
		p->blocks_owed = 0;
		return;
	}
	/* One copy at a time, as Core: a send-paused peer gets no more
	 * until its queue drains (peer_flow_update calls back here). */
	while (p->blocks_owed && !p->send_paused && p->state != PEER_CLOSING) {
		p->blocks_owed--;
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
			(void)serve_queue(p, v);
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
			p->blocks_owed++;
			continue;
		}
		/* Core answers only transactions with notfound; other block
		 * kinds (filtered, compact) and unknown blocks get nothing. */
		if (base != PROTO_INV_TX && base != PROTO_INV_WTX)
			continue;
		if (txrelay_serve(p, v))
			continue;
		if (batch_add(d, v))
			break;
	}
	if (p->state == PEER_CLOSING)
		return;
	inv_getdata_resume(p);
	if (p->state == PEER_CLOSING)
		return;
	if (have_chain) {
		serve_next(p);
		return;
	}
	d->stats.notfound_sent += d->out.inv.n;
	batch_send(p, PROTO_CMD_NOTFOUND);
}

static void on_notfound(struct peer *p, const struct proto_inv *inv)
{
	struct daemon *d = p->d;
	for (uint32_t i = 0; i < inv->n; i++) {
		const struct proto_inv_vec *v = &inv->v[i];
		uint32_t slot;
		d->stats.notfound_recv++;
		if (!req_find(d, hash_fp(d, &v->hash), &slot))
			continue;
		struct inv_req *e = &d->inv->reqs[slot];
		if (e->requested != ref(p))
			continue;
		/* p does not have it after all: forget p as a source; the next
		 * tick asks another announcer. */
		clear_request(d, e);
		for (uint8_t j = 0; j < e->n_ann; j++) {
			if (e->ann[j] == ref(p)) {
				drop_announcer(d, e, j);
				break;
			}
		}
		if (!e->n_ann)
			req_delete(d, slot);
	}
}

static void on_tx(struct peer *p, struct proto_tx *tx)
{
	struct daemon *d = p->d;
	proto_tx_compute_ids(tx);
	d->stats.tx_received++;
	d->stats.tx_decoded++;
	d->stats.tx_bytes += tx->size;
	uint32_t slot;
	bool asked = false;
	if (req_find(d, hash_fp(d, &tx->wtxid), &slot) && d->inv->reqs[slot].requested == ref(p))
		asked = true;
	if (req_find(d, hash_fp(d, &tx->txid), &slot) && d->inv->reqs[slot].requested == ref(p))
		asked = true;
	if (!asked)
		d->stats.tx_unsolicited++;
	if (dlog_enabled(&d->log, DLOG_DEBUG, DLOG_INV)) {
		char hex[65];
		proto_hash_to_hex(&tx->txid, hex);
		DLOG_DBG(&d->log, DLOG_INV, "tx %s (%u bytes, %u in, %u out) from peer=%llu", hex,
		         tx->size, tx->n_in, tx->n_out, (unsigned long long)p->id);
	}
	txaccept_on_tx(p, tx);
}

uint32_t inv_take_announcers(struct daemon *d, const struct proto_hash *h, uint64_t *out,
                             uint32_t cap)
{
	uint32_t slot, n = 0;
	if (!req_find(d, hash_fp(d, h), &slot))
		return 0;
	struct inv_req *e = &d->inv->reqs[slot];
	if (!proto_hash_eq(&e->hash, h))
		return 0;
	for (uint8_t i = 0; i < e->n_ann && n < cap; i++)
		out[n++] = e->ann[i] - 1;
	req_delete(d, slot);
	return n;
}

void inv_forget(struct daemon *d, const struct proto_hash *h)
{
	uint32_t slot;
	if (req_find(d, hash_fp(d, h), &slot) && proto_hash_eq(&d->inv->reqs[slot].hash, h))
		req_delete(d, slot);
}

void inv_track_parent(struct peer *p, const struct proto_hash *txid)
{
	struct daemon *d = p->d;
	struct proto_inv_vec v = {.type = PROTO_INV_TX, .hash = *txid};
	/* Inside on_inv the batch holds that inv's requests, to this same
	 * peer: sending them with the parent's keeps the order. */
	track(p, &v, hash_fp(d, txid), daemon_now_ms(d));
	batch_send(p, PROTO_CMD_GETDATA);
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

void inv_on_tx(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	(void)m;
	/* Core 29 (-blocksonly): a transaction nobody asked for, even
	 * during initial block download, costs the connection. */
	if (d->conf->blocksonly) {
		peer_disconnect(p, "transaction sent in violation of protocol");
		return;
	}
	/* Core drops transactions during initial block download: they
	 * cannot be validated yet. */
	if (d->view->ibd)
		return;
	/* m is d->in, the daemon's own scratch message; the tx's id cache
	 * is filled in place, so use the mutable name. */
	on_tx(p, &d->in.tx);
}

void inv_on_mempool(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	peer_disconnect(p, "mempool request with bloom filters disabled");
}

void inv_on_msg(struct peer *p, const struct proto_msg *m)
{
	const struct net_msg_entry *e = &p->d->msg_table[m->cmd];
	if (e->on_msg)
		e->on_msg(p, m);
}

static int cmp_pending(const void *a, const void *b)
{
	const struct inv_pending *x = a, *y = b;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int pending_add(struct inv_state *s, size_t *n, uint64_t peer, uint32_t slot)
{
	if (*n == s->pending_cap) {
		size_t ncap = s->pending_cap ? s->pending_cap * 2 : 256;
		struct inv_pending *np = xreallocarray(s->pending, ncap, sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->pending = np;
		s->pending_cap = ncap;
	}
	s->pending[(*n)++] = (struct inv_pending){peer, slot};
	return 0;
}

void inv_tick(struct daemon *d, uint64_t now_ms)
{
	struct inv_state *s = d->inv;
	size_t n_pending = 0;
	for (uint32_t slot = 0; slot < s->reqs_cap; slot++) {
		struct inv_req *e = &s->reqs[slot];
		if (!e->used)
			continue;
		if (e->requested) {
			struct peer *q = deref(d, e->requested);
			bool expired = now_ms >= e->expiry_ms;
			if (q && !expired)
				continue;
			if (expired)
				d->stats.tx_request_timeouts++;
			uint64_t r = e->requested;
			clear_request(d, e);
			for (uint8_t j = 0; j < e->n_ann; j++) {
				if (e->ann[j] == r) {
					drop_announcer(d, e, j);
					break;
				}
			}
		}
		/* Forget announcers that went away. */
		for (uint8_t j = e->n_ann; j-- > 0;) {
			if (!deref(d, e->ann[j]))
				drop_announcer(d, e, j);
		}
		if (!e->n_ann) {
			req_delete(d, slot);
			continue;
		}
		for (uint8_t j = 0; j < e->n_ann; j++) {
			struct peer *q = deref(d, e->ann[j]);
			if (q && can_ask(q)) {
				mark_requested(d, q, e, now_ms);
				if (pending_add(s, &n_pending, e->requested, slot))
					clear_request(d, e);
				break;
			}
		}
	}
	if (!n_pending)
		return;
	struct inv_pending *pending = s->pending;
	qsort(pending, n_pending, sizeof(*pending), cmp_pending);
	for (size_t i = 0; i < n_pending;) {
		struct peer *q = deref(d, pending[i].peer);
		size_t j = i;
		d->out.inv.n = 0;
		for (; j < n_pending && pending[j].peer == pending[i].peer; j++) {
			struct proto_inv_vec v;
			if (!q)
				continue;
			request_vec(q, &s->reqs[pending[j].slot], &v);
			(void)batch_add(d, &v);
		}
		if (q)
			batch_send(q, PROTO_CMD_GETDATA);
		i = j;
	}
}
