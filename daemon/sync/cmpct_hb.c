/*
 * daemon/sync/cmpct_hb.c: BIP152 high-bandwidth mode, both ways (Core 29's
 * MaybeSetPeerAsAnnouncingHeaderAndIDs and NewPoWValidBlock).
 *
 * Asking: a peer whose block became our tip (out of initial block
 * download), and which sent sendcmpct version 2, joins the list of at most
 * 3 peers asked with sendcmpct(1, 2) to push new blocks as cmpctblocks
 * unasked; the oldest is demoted with sendcmpct(0, 2), but an inbound
 * newcomer never pushes out the last outbound peer (Core's rule: one
 * honest outbound peer keeps fast relay alive against inbound sybils).
 * Like Core, an id of a peer that left stays in the list until it is the
 * oldest and goes (it counts as neither inbound nor outbound). What those
 * peers push is taken by sync/cmpct_receive.c as any cmpctblock.
 *
 * Pushing: a peer that sent sendcmpct(1, 2) gets a new tip as a
 * cmpctblock. Core sends it from NewPoWValidBlock, before connecting. A
 * block peerd rebuilt from a cmpctblock with nothing missing does too:
 * the rebuild job (sync/cmpct_receive.c, validation thread) runs Core's
 * CheckBlock and ContextualCheckBlock on it and builds the cmpctblock
 * (sync_cmpct_hb_early_build), and the loop pushes it before handing the
 * block on (sync_cmpct_hb_push_early). Every other new block (a whole
 * one, one completed by a blocktxn, one mined or submitted) is built by
 * the chain listener of sync/cmpct_recent.c once it passed those checks
 * and pushed from there, before it is connected. The push after the
 * connect (node/'s new_tip hook) is left for peers that lacked the parent
 * then, and sends the most recent frame when it is this block's.
 *
 * Loop thread, but for the push job's work function (validation thread).
 */
#include "daemon/sync/sync.h"

#include <string.h>

#include "chain/chain.h"
#include "cmpct/cmpct.h"

struct sync_cmpct_hb_pick sync_cmpct_hb_pick(uint64_t *ids, uint32_t *n, uint64_t id, bool inbound,
                                             int (*kind)(void *ctx, uint64_t id), void *ctx)
{
	struct sync_cmpct_hb_pick r = {0};
	uint32_t outbound = 0;
	for (uint32_t i = 0; i < *n; i++) {
		if (ids[i] == id) {
			/* Already high-bandwidth: now the newest. */
			memmove(&ids[i], &ids[i + 1], (*n - i - 1) * sizeof(*ids));
			ids[*n - 1] = id;
			return r;
		}
		if (kind(ctx, ids[i]) == 0)
			outbound++;
	}
	if (inbound && *n >= SYNC_CMPCT_HB_MAX && outbound == 1 && kind(ctx, ids[0]) == 0) {
		/* The one outbound peer is the oldest: move it to second place. */
		uint64_t t = ids[0];
		ids[0] = ids[1];
		ids[1] = t;
	}
	if (*n >= SYNC_CMPCT_HB_MAX) {
		r.demote = true;
		r.demoted = ids[0];
		memmove(&ids[0], &ids[1], (*n - 1) * sizeof(*ids));
		(*n)--;
	}
	ids[(*n)++] = id;
	r.promote = true;
	return r;
}

static int peer_kind(void *ctx, uint64_t id)
{
	struct peer *p = peer_by_id(ctx, id);
	if (!p || p->state == PEER_CLOSING)
		return -1;
	return p->inbound ? 1 : 0;
}

static void send_sendcmpct(struct peer *p, bool hb)
{
	struct daemon *d = p->d;
	d->out.cmd = PROTO_CMD_SENDCMPCT;
	d->out.sendcmpct.high_bandwidth = hb;
	d->out.sendcmpct.version = PEER_CMPCT_VERSION;
	(void)peer_send_msg(p, &d->out);
}

void sync_cmpct_hb_block_from(struct peer *p, const struct proto_hash *hash)
{
	struct daemon *d = p->d;
	struct sync_state *s = d->sync;
	p->last_block_time = daemon_time(d);
	/* Core's BlockChecked: a valid block, out of initial block download,
	 * (Core: the only block in flight; peerd: the one that is now our
	 * tip), under -blocksonly never (no mempool to rebuild from). */
	if (d->view->ibd || d->conf->blocksonly || p->cmpct_version != PEER_CMPCT_VERSION)
		return;
	int32_t h = chainview_find(d, hash);
	if (h < 0 || h != chainview_height(d))
		return;
	struct sync_cmpct_hb_pick r =
	    sync_cmpct_hb_pick(s->cmpct_hb, &s->n_cmpct_hb, p->id, p->inbound, peer_kind, d);
	if (r.demote) {
		struct peer *old = peer_by_id(d, r.demoted);
		if (old && old->state == PEER_ACTIVE)
			send_sendcmpct(old, false);
	}
	if (r.promote) {
		DLOG_DBG(&d->log, DLOG_NET, "peer=%llu: asked for high-bandwidth compact blocks",
		         (unsigned long long)p->id);
		send_sendcmpct(p, true);
	}
}

bool sync_cmpct_hb_to(const struct peer *p)
{
	const struct sync_state *s = p->d->sync;
	for (uint32_t i = 0; i < s->n_cmpct_hb; i++)
		if (s->cmpct_hb[i] == p->id)
			return true;
	return false;
}

bool sync_cmpct_hb_from(const struct peer *p)
{
	return p->cmpct_high_bandwidth && p->cmpct_version == PEER_CMPCT_VERSION;
}

/* ---- pushing ------------------------------------------------------------ */

struct push_job {
	struct val_job job;
	const struct proto_params *pp;
	struct proto_hash hash;
	bool ok;
	struct proto_writer frame; /* the cmpctblock frame */
	uint32_t n;
	uint64_t ids[]; /* the peers to push to */
};

static void push_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct push_job *pj = (struct push_job *)j;
	(void)mp;
	if (!c)
		return;
	const struct chain_node *n = chain_index_find(chain_get_index(c), &pj->hash);
	uint8_t *raw = NULL;
	size_t len = 0;
	if (!n || !(n->status & CHAIN_HAVE_DATA) || chain_read_block(c, n, &raw, &len))
		return;
	pj->ok = sync_cmpct_serve_build(c, pj->pp, n, raw, len, &pj->frame);
	xfree(raw);
}

static void push_done(struct daemon *d, struct val_job *j)
{
	struct push_job *pj = (struct push_job *)j;
	for (uint32_t i = 0; i < pj->n && !j->cancelled; i++) {
		struct peer *p = peer_by_id(d, pj->ids[i]);
		if (!p || p->state != PEER_ACTIVE)
			continue;
		if (pj->ok) {
			peer_send_frame(p, PROTO_CMD_CMPCTBLOCK, pj->frame.buf, pj->frame.len);
			d->sync->cmpct_pushed++;
			continue;
		}
		/* Not built (the tip too old for compact relay, a read
		 * error): an inv, so the peer still hears of it. */
		d->out.cmd = PROTO_CMD_INV;
		if (proto_inv_reserve(&d->out.inv, 1) == 0) {
			d->out.inv.v[0] =
			    (struct proto_inv_vec){.type = PROTO_INV_BLOCK, .hash = pj->hash};
			d->out.inv.n = 1;
			(void)peer_send_msg(p, &d->out);
			d->out.inv.n = 0;
		}
	}
	proto_writer_release(&pj->frame);
	xfree(pj);
}

void sync_cmpct_hb_push(struct daemon *d, const struct chainview_update *u)
{
	/* Core's NewPoWValidBlock: one block on the tip we had, not in
	 * initial block download. */
	if (u->ibd || u->n != 1 || u->old_height < 0 || u->fork_height != u->old_height)
		return;
	const struct proto_hash *tip = &u->recs[0].hash;
	const struct chainview_rec *parent = chainview_at(d, u->old_height);
	if (!parent)
		return;
	struct push_job *pj = xmalloc(sizeof(*pj) + d->n_peers * sizeof(uint64_t));
	if (!pj)
		return;
	memset(pj, 0, sizeof(*pj));
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		/* Core: it asked for high-bandwidth, lacks this block and has
		 * its parent (peerd: known to have it or to have a best block
		 * at least that high). */
		if (p->state != PEER_ACTIVE || !p->handshake_done || !sync_cmpct_hb_from(p) ||
		    inv_known_has(p, tip) ||
		    (!inv_known_has(p, &parent->hash) && p->sync->best_height < u->old_height))
			continue;
		inv_known_add(p, tip);
		pj->ids[pj->n++] = p->id;
	}
	if (!pj->n) {
		xfree(pj);
		return;
	}
	/* Built already for the push before connecting (Core's
	 * m_most_recent_compact_block): sent as it is, no job. */
	size_t len;
	const uint8_t *recent = sync_cmpct_recent(d, tip, &len);
	if (recent) {
		for (uint32_t i = 0; i < pj->n; i++) {
			struct peer *p = peer_by_id(d, pj->ids[i]);
			peer_send_frame(p, PROTO_CMD_CMPCTBLOCK, recent, len);
			d->sync->cmpct_pushed++;
			d->sync->cmpct_recent_reused++;
		}
		xfree(pj);
		return;
	}
	proto_writer_init(&pj->frame);
	pj->job.work = push_work;
	pj->job.done = push_done;
	pj->pp = d->params;
	pj->hash = *tip;
	if (validation_post(d, &pj->job)) {
		proto_writer_release(&pj->frame);
		xfree(pj);
	}
}

/* ---- pushing before connecting ------------------------------------------ */

bool sync_cmpct_hb_early_build(struct chain *c, struct proto_block *b,
                               const struct chain_node *prev, struct proto_writer *frame)
{
	/* Core's NewPoWValidBlock: a block on our tip, out of initial block
	 * download, once CheckBlock and ContextualCheckBlock passed (a
	 * high-bandwidth peer may relay before full validation, BIP152, but
	 * never a block that fails these). */
	if (prev != chain_tip(c) || chain_in_ibd(c))
		return false;
	const struct proto_params *pp = chain_params(c);
	struct chain_state st;
	chain_state_clear(&st);
	if (chain_check_block(b, pp, true, true, &st) ||
	    chain_check_block_contextual(b, prev, pp, &st))
		return false;
	struct proto_cmpctblock cb = {0};
	bool ok = false;
	if (cmpct_build(b, proto_random_u64(), &cb) == 0) {
		size_t start = proto_frame_begin(frame);
		proto_cmpctblock_encode(&cb, frame);
		proto_frame_end(frame, start, pp->magic, "cmpctblock");
		ok = !frame->err;
	}
	proto_cmpctblock_release(&cb);
	return ok;
}

void sync_cmpct_hb_push_early(struct daemon *d, const struct proto_hash *hash,
                              const struct proto_hash *prev, int32_t prev_height,
                              const uint8_t *frame, size_t len)
{
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		/* As sync_cmpct_hb_push: asked for it, lacks it, has the parent. */
		if (p->state != PEER_ACTIVE || !p->handshake_done || !sync_cmpct_hb_from(p) ||
		    inv_known_has(p, hash) ||
		    (!inv_known_has(p, prev) && p->sync->best_height < prev_height))
			continue;
		/* Known from now on: the push after connecting skips it. */
		inv_known_add(p, hash);
		peer_send_frame(p, PROTO_CMD_CMPCTBLOCK, frame, len);
		d->sync->cmpct_pushed++;
		d->sync->cmpct_pushed_early++;
	}
}
