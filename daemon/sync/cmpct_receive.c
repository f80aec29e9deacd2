/*
 * daemon/sync/cmpct_receive.c: receiving BIP152 compact blocks (Core 29's
 * net_processing.cpp, the CMPCTBLOCK and BLOCKTXN branches).
 *
 * A cmpctblock goes to the validation thread, which owns the chain and
 * the mempool: when Core would rebuild it (its parent known, more work
 * than our tip, at most tip + 2, close to synced unless already being
 * fetched), it is rebuilt there from the mempool (cmpct/). Everything held: the rebuilt bytes come
 * back and enter the same path as a `block` message (sync_on_block). Some missing: the partial
 * comes back, is kept for that peer, and the missing indexes go out in a getblocktxn; the peer's
 * blocktxn fills it here. A short-id collision or a rebuilt block that does not match its header
 * (Core's READ_STATUS_FAILED) asks the peer for the whole block instead; an invalid compact block
 * (READ_STATUS_INVALID) is misbehaviour, as Core. Any other is treated as a header (Core does so
 * for blocks it will not fetch compactly), or fetched whole when we had asked that peer for it. A
 * block another peer is already sending: only the first in flight asks getblocktxn (then
 * high-bandwidth peers, Core's rule); with 3 others it is rebuilt only if nothing is missing.
 *
 * The download asks a single next-on-tip block compactly where Core
 * would (sync_cmpct_getdata_cmd, called by sync/download.c); getblocktxn and
 * getdata MSG_CMPCT_BLOCK are answered by sync/cmpct_serve.c.
 *
 * A cmpctblock a high-bandwidth peer pushes unasked (sync/cmpct_hb.c
 * chose it) is taken here the same way.
 *
 * The candidates are the mempool's, then the ring of transactions peerd
 * saw but did not keep (node/extratxn.c, Core's vExtraTxnForCompact).
 *
 * Not yet (doc/p2p.md, "Compact blocks"): the partial kept in the
 * download window's in-flight entry.
 *
 * A partial of a peer that left stays until a newer one takes its slot
 * (peer ids are never reused, and there are PENDING_MAX slots).
 *
 * Loop thread, but for the job's work function (validation thread).
 */
#include "daemon/sync/sync.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "chain/chain.h"
#include "cmpct/cmpct.h"
#include "daemon/sync/internal.h"
#include "mempool/mempool.h"

/* Partials waiting for a blocktxn, at most (Core keeps one per block in
 * flight; a peer has few). The oldest goes first. */
#define PENDING_MAX 8u

/* Peers one block may be downloading from at once, compact partials and
 * a full getdata together (Core's MAX_CMPCTBLOCKS_INFLIGHT_PER_BLOCK). */
#define INFLIGHT_PER_BLOCK 3u

/* A cmpctblock is rebuilt only for a block at most this far above the
 * tip (Core: "a bit conservative just to be extra careful about DoS"). */
#define MAX_AHEAD 2

struct sync_cmpct_pending {
	bool used;
	uint64_t peer_id;
	uint64_t seq; /**< age, for replacing the oldest */
	struct proto_hash hash;
	size_t came; /**< the cmpctblock's bytes */
	struct cmpct_partial pb;
};

/** The room's compact-block state (d->sync->cmpct). Loop thread. */
struct sync_cmpct_state {
	struct sync_cmpct_pending pend[PENDING_MAX];
	uint64_t seq;
	uint64_t received;    /**< cmpctblock messages taken */
	uint64_t rebuilt;     /**< rebuilt from the mempool alone */
	uint64_t rebuilt_txn; /**< rebuilt after a getblocktxn round */
	uint64_t fallback;    /**< fell back to the whole block */
	uint64_t invalid;     /**< invalid compact blocks (misbehaviour) */
	uint64_t as_header;   /**< not on our tip: taken as a header */
	uint64_t getblocktxn_sent;
	uint64_t asked;       /**< getdata MSG_CMPCT_BLOCK sent */
	uint64_t bytes_saved; /**< block bytes not sent: rebuilt size less what came */
	uint64_t extra_used;  /**< transactions found in the extra ring (node/extratxn.c) */
	uint64_t gave_up;     /**< not the first in flight: neither getblocktxn nor getdata */
	uint64_t whole;       /**< in flight but too far or not better: the whole block asked */
};

/* OUT_GETDATA: asked of this peer already, but Core would not rebuild it
 * (no more work than the tip, or too far above it): the whole block. */
enum outcome { OUT_NONE, OUT_HEADER, OUT_INVALID, OUT_FAILED, OUT_BLOCK, OUT_MISSING, OUT_GETDATA };

struct sync_cmpct_job {
	struct val_job job;
	struct daemon *d; /* for the extra ring (node/extratxn.c, the validation thread's) */
	uint64_t peer_id;
	/* At posting (loop thread), Core's already_in_flight and
	 * requested_block_from_this_peer: */
	uint32_t others; /* other peers downloading this block (partials, the window's getdata) */
	bool asked_here; /* the window asked this peer for it */
	bool outbound_others; /* one of them outbound (IsBlockRequestedFromOutbound) */
	bool optimistic;      /* others >= INFLIGHT_PER_BLOCK: rebuild only if nothing is missing */
	uint8_t *raw;         /* the cmpctblock's bytes */
	size_t raw_len;
	enum outcome out;
	struct proto_block_header hdr;
	struct proto_hash hash;
	struct cmpct_partial pb;
	struct proto_writer block; /* the rebuilt block (OUT_BLOCK) */
	struct proto_writer early; /* its cmpctblock for high-bandwidth peers, before connecting */
};

static struct sync_cmpct_state *state(struct daemon *d)
{
	if (!d->sync->cmpct) {
		d->sync->cmpct = xmalloc(sizeof(struct sync_cmpct_state));
		if (d->sync->cmpct) {
			memset(d->sync->cmpct, 0, sizeof(struct sync_cmpct_state));
			for (uint32_t i = 0; i < PENDING_MAX; i++)
				cmpct_partial_init_empty(&d->sync->cmpct->pend[i].pb);
		}
	}
	return d->sync->cmpct;
}

void sync_cmpct_release(struct daemon *d)
{
	xfree(d->sync->cmpct_recent);
	d->sync->cmpct_recent = NULL;
	struct sync_cmpct_state *s = d->sync->cmpct;
	if (!s)
		return;
	for (uint32_t i = 0; i < PENDING_MAX; i++)
		cmpct_partial_release(&s->pend[i].pb);
	xfree(s);
	d->sync->cmpct = NULL;
}

/* ---- validation thread --------------------------------------------------- */

/* The candidates: the mempool's, then the extra ring's, as Core's InitData. */
struct pool_walk {
	const struct mempool_entry **e;
	size_t n, i;
	struct daemon *d;
	uint32_t n_extra, j;
};

static bool pool_next(void *ctx, struct cmpct_candidate *c)
{
	struct pool_walk *w = ctx;
	if (w->i < w->n) {
		const struct mempool_entry *e = w->e[w->i++];
		c->tx = mempool_entry_tx(e);
		c->wtxid = mempool_entry_wtxid(e);
		c->extra = false;
		return true;
	}
	while (w->j < w->n_extra) {
		const struct proto_tx *tx = node_extratxn_at(w->d, w->j++);
		if (!tx)
			continue;
		c->tx = tx;
		c->wtxid = &tx->wtxid;
		c->extra = true;
		return true;
	}
	return false;
}

static void job_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct sync_cmpct_job *cj = (struct sync_cmpct_job *)j;
	struct proto_cmpctblock cb = {0};
	struct proto_reader r;
	struct pool_walk w = {0};
	cj->out = OUT_NONE;
	if (!c)
		return;
	proto_reader_init(&r, cj->raw, cj->raw_len);
	if (proto_cmpctblock_decode(&r, &cb))
		goto out; /* the loop decoded these very bytes */
	struct chain_index *idx = chain_get_index(c);
	const struct chain_node *known = chain_index_find(idx, &cj->hash);
	if (known && (known->status & CHAIN_HAVE_DATA))
		goto out; /* nothing to do: we have it */
	/* Core's conditions (net_processing's CMPCTBLOCK branch), after the
	 * header: a parent we do not know, or not close to synced (the tip
	 * older than 20 block intervals, CanDirectFetch), goes to the header
	 * sync; no more work than our tip, or farther than tip + 2: the whole
	 * block if we asked this peer for it, else only its header. */
	const struct chain_node *tip = chain_tip(c);
	const struct chain_node *prev = chain_index_find(idx, &cb.hdr.prev);
	if (!prev) {
		cj->out = OUT_HEADER;
		goto out;
	}
	struct chain_work work;
	chain_work_of_bits(cb.hdr.bits, &work);
	chain_work_add(&work, &prev->work);
	bool direct = (int64_t)tip->time > base_time() - 20 * chain_params(c)->pow_target_spacing;
	if (chain_work_cmp(&work, &tip->work) <= 0 || (known && known->n_tx) ||
	    prev->height + 1 > tip->height + MAX_AHEAD) {
		cj->out = cj->asked_here ? OUT_GETDATA : OUT_HEADER;
		goto out;
	}
	if (!direct && !cj->asked_here && !cj->others) {
		cj->out = OUT_HEADER;
		goto out;
	}
	if (mp && mempool_list(mp, MEMPOOL_ORDER_TIME, &w.e, &w.n))
		w.n = 0;
	w.d = cj->d;
	w.n_extra = node_extratxn_count(cj->d);
	int err = cmpct_partial_init(&cj->pb, &cb, pool_next, &w);
	xfree(w.e);
	if (err) {
		/* Optimistic: Core ignores its failures. */
		cj->out = cj->optimistic          ? OUT_NONE
		          : err == CMPCT_EINVALID ? OUT_INVALID
		                                  : OUT_FAILED;
		goto out;
	}
	if (cj->pb.n_missing) {
		cj->out = cj->optimistic ? OUT_NONE : OUT_MISSING;
		goto out;
	}
	struct proto_block b;
	proto_block_init(&b);
	proto_writer_init(&cj->block);
	err = cmpct_partial_fill(&cj->pb, NULL, 0, true, &cj->block, &b);
	if (err == 0 && !sync_cmpct_hb_early_build(c, &b, prev, &cj->early))
		proto_writer_release(&cj->early);
	else if (err == 0)
		/* Pushed from here: the chain listener (sync/cmpct_recent.c)
		 * need not build it again when the block is accepted. */
		cj->d->sync->cmpct_fast_height = prev->height + 1;
	proto_block_release(&b);
	cj->out = err == 0 ? OUT_BLOCK : err == CMPCT_EINVALID ? OUT_INVALID : OUT_FAILED;
out:
	proto_cmpctblock_release(&cb);
}

/* ---- loop thread --------------------------------------------------------- */

static void ask_block(struct peer *p, const struct proto_hash *hash)
{
	struct daemon *d = p->d;
	if (proto_inv_reserve(&d->out.inv, 1))
		return;
	d->out.inv.v[0].type = PROTO_INV_WITNESS_BLOCK;
	d->out.inv.v[0].hash = *hash;
	d->out.inv.n = 1;
	d->out.cmd = PROTO_CMD_GETDATA;
	(void)peer_send_msg(p, &d->out);
}

/* A rebuilt block: into the block path, as if it had come whole. */
static void take_block(struct peer *p, struct sync_cmpct_state *s, const struct proto_writer *w,
                       size_t came)
{
	uint8_t cs[4];
	proto_checksum(w->buf, w->len, cs);
	if (w->len > came)
		s->bytes_saved += w->len - came;
	sync_on_block(p, w->buf, w->len, proto_le32(cs));
}

static struct sync_cmpct_pending *pending_slot(struct sync_cmpct_state *s, uint64_t peer_id)
{
	struct sync_cmpct_pending *best = &s->pend[0];
	for (uint32_t i = 0; i < PENDING_MAX; i++) {
		struct sync_cmpct_pending *e = &s->pend[i];
		if (e->used && e->peer_id == peer_id)
			return e; /* one partial a peer: a new one replaces it */
		if (!e->used)
			best = e;
		else if (best->used && e->seq < best->seq)
			best = e;
	}
	return best;
}

static void job_done(struct daemon *d, struct val_job *j)
{
	struct sync_cmpct_job *cj = (struct sync_cmpct_job *)j;
	struct peer *p = j->cancelled ? NULL : peer_by_id(d, cj->peer_id);
	struct sync_cmpct_state *s = state(d);
	if (!p || !s || p->state != PEER_ACTIVE)
		goto out;
	switch (cj->out) {
	case OUT_NONE:
		break;
	case OUT_HEADER: {
		struct proto_headers h = {.h = &cj->hdr, .n = 1, .cap = 1};
		s->as_header++;
		sync_on_headers(p, &h);
		break;
	}
	case OUT_INVALID:
		s->invalid++;
		ban_misbehaving(p, "invalid compact block");
		break;
	case OUT_GETDATA:
		s->whole++;
		ask_block(p, &cj->hash);
		break;
	case OUT_FAILED:
		/* Core: the first in flight asks the whole block; the others
		 * give up and wait for it. */
		if (cj->others) {
			s->gave_up++;
			break;
		}
		s->fallback++;
		ask_block(p, &cj->hash);
		break;
	case OUT_BLOCK:
		s->rebuilt++;
		s->extra_used += cj->pb.extra_count;
		if (cj->early.len) {
			/* Built while the parent was the tip: still ours? */
			int32_t height = chainview_height(d);
			const struct chainview_rec *tip = chainview_at(d, height);
			if (!d->view->ibd && tip && proto_hash_eq(&tip->hash, &cj->hdr.prev))
				sync_cmpct_hb_push_early(d, &cj->hash, &cj->hdr.prev, height,
				                         cj->early.buf, cj->early.len);
			sync_cmpct_recent_set(d, &cj->hash, &cj->early.buf, cj->early.len);
			cj->early.len = 0;
		}
		take_block(p, s, &cj->block, cj->raw_len);
		break;
	case OUT_MISSING: {
		/* Core: the first in flight asks what is missing; after it, only
		 * a high-bandwidth peer of ours, and an inbound one only while an
		 * outbound peer downloads it too (IsBlockRequestedFromOutbound:
		 * take what we can get) or fewer than two others do (the last
		 * slot kept for an outbound one). The rest give up. */
		if (cj->others && !(sync_cmpct_hb_to(p) && (!p->inbound || cj->outbound_others ||
		                                            cj->others < INFLIGHT_PER_BLOCK - 1))) {
			s->gave_up++;
			break;
		}
		struct sync_cmpct_pending *e = pending_slot(s, p->id);
		cmpct_partial_release(&e->pb);
		e->pb = cj->pb; /* moved: the job's copy is not released */
		cmpct_partial_init_empty(&cj->pb);
		e->used = true;
		e->peer_id = p->id;
		e->hash = cj->hash;
		e->seq = ++s->seq;
		e->came = cj->raw_len;
		s->extra_used += e->pb.extra_count;
		if (cmpct_partial_request(&e->pb, &d->out.getblocktxn))
			break;
		d->out.cmd = PROTO_CMD_GETBLOCKTXN;
		if (peer_send_msg(p, &d->out) == 0)
			s->getblocktxn_sent++;
		break;
	}
	}
out:
	cmpct_partial_release(&cj->pb);
	proto_writer_release(&cj->block);
	proto_writer_release(&cj->early);
	xfree(cj->raw);
	xfree(cj);
}

void sync_cmpct_on_cmpctblock(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	struct sync_cmpct_state *s = state(d);
	if (!s || sync_importing(p, "cmpctblock"))
		return;
	s->received++;
	struct sync_cmpct_job *cj = xmalloc(sizeof(*cj));
	if (!cj)
		return;
	memset(cj, 0, sizeof(*cj));
	cmpct_partial_init_empty(&cj->pb);
	proto_writer_init(&cj->block);
	proto_writer_init(&cj->early);
	cj->job.work = job_work;
	cj->job.done = job_done;
	cj->d = d;
	cj->peer_id = p->id;
	cj->hdr = m->cmpctblock.hdr;
	proto_block_header_hash(&cj->hdr, &cj->hash);
	/* The proof of work before any work of ours: a walk of the mempool
	 * costs the validation thread far more than this message cost the
	 * peer (Core runs the header through ProcessNewBlockHeaders first,
	 * and punishes a bad one, "invalid header via cmpctblock"). */
	if (!proto_check_pow(&cj->hash, cj->hdr.bits, &d->params->pow_limit)) {
		xfree(cj);
		s->invalid++;
		ban_misbehaving(p, "invalid header via cmpctblock");
		return;
	}
	inv_known_add(p, &cj->hash);
	for (uint32_t i = 0; i < PENDING_MAX; i++) {
		const struct sync_cmpct_pending *e = &s->pend[i];
		if (!e->used || !proto_hash_eq(&e->hash, &cj->hash))
			continue;
		if (e->peer_id == p->id) {
			/* Core: "Peer sent us compact block we were already syncing!" */
			DLOG_DBG(&d->log, DLOG_NET,
			         "peer=%llu sent a compact block already being synced",
			         (unsigned long long)p->id);
			xfree(cj);
			return;
		}
		/* A partial of a peer that left downloads nothing (Core drops
		 * its in-flight entries at the disconnect). */
		const struct peer *q = peer_by_id(d, e->peer_id);
		if (q && q->state == PEER_ACTIVE) {
			cj->others++;
			cj->outbound_others |= !q->inbound;
		}
	}
	for (uint32_t i = 0; i < d->sync->n_win; i++) {
		const struct sync_block *b = &d->sync->win[i];
		if (b->peer && !b->received && proto_hash_eq(&b->hash, &cj->hash)) {
			if (b->peer == p->id + 1) {
				cj->asked_here = true;
			} else {
				const struct peer *q = peer_by_id(d, b->peer - 1);
				cj->others++;
				cj->outbound_others |= q && !q->inbound;
			}
		}
	}
	cj->optimistic = cj->others >= INFLIGHT_PER_BLOCK && !cj->asked_here;
	/* The job decodes its own copy: d->in is the next message's. */
	struct proto_writer w;
	proto_writer_init(&w);
	proto_cmpctblock_encode(&m->cmpctblock, &w);
	cj->raw = w.buf;
	cj->raw_len = w.len;
	if (w.err || validation_post(d, &cj->job)) {
		proto_writer_release(&w);
		xfree(cj);
	}
}

void sync_cmpct_on_blocktxn(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	struct sync_cmpct_state *s = state(d);
	if (!s || sync_importing(p, "blocktxn"))
		return;
	struct sync_cmpct_pending *e = NULL;
	for (uint32_t i = 0; i < PENDING_MAX; i++)
		if (s->pend[i].used && s->pend[i].peer_id == p->id &&
		    proto_hash_eq(&s->pend[i].hash, &m->blocktxn.block))
			e = &s->pend[i];
	if (!e) {
		/* Core: "Peer sent us block transactions for block we weren't expecting". */
		DLOG_DBG(&d->log, DLOG_MSG, "unexpected blocktxn from peer=%llu",
		         (unsigned long long)p->id);
		return;
	}
	struct proto_writer w;
	struct proto_block b;
	proto_writer_init(&w);
	proto_block_init(&b);
	size_t came = e->came;
	for (uint32_t i = 0; i < m->blocktxn.n; i++)
		came += m->blocktxn.txs[i].size;
	int err = cmpct_partial_fill(&e->pb, m->blocktxn.txs, m->blocktxn.n, true, &w, &b);
	proto_block_release(&b);
	e->used = false;
	struct proto_hash hash = e->hash;
	cmpct_partial_release(&e->pb);
	if (err == 0) {
		s->rebuilt_txn++;
		take_block(p, s, &w, came);
	} else if (err == CMPCT_EINVALID) {
		s->invalid++;
		ban_misbehaving(p, "invalid compact block/non-matching block transactions");
	} else {
		s->fallback++;
		ask_block(p, &hash);
	}
	proto_writer_release(&w);
}

enum proto_cmd sync_cmpct_getdata_cmd(struct peer *p, struct proto_inv *inv)
{
	struct daemon *d = p->d;
	const struct sync_state *s = d->sync;
	/* Core's HeadersDirectFetchBlocks: one block asked, the only one in
	 * flight, the next on our tip, of a peer that sent sendcmpct version
	 * 2, out of initial block download, and not -blocksonly (no mempool
	 * to rebuild from): ask it compactly. */
	if (inv->n == 1 && !d->conf->blocksonly && s->n_win == 1 &&
	    s->win[0].height == s->tip_height + 1 &&
	    proto_hash_eq(&s->win[0].hash, &inv->v[0].hash) &&
	    p->cmpct_version == PEER_CMPCT_VERSION && !d->view->ibd) {
		inv->v[0].type = PROTO_INV_CMPCT_BLOCK;
		if (state(d))
			d->sync->cmpct->asked++;
	}
	return PROTO_CMD_GETDATA;
}

json_t *sync_cmpct_stats_json(struct daemon *d)
{
	const struct sync_cmpct_state *s = d->sync->cmpct;
	struct sync_cmpct_state zero = {0};
	if (!s)
		s = &zero;
	json_t *o = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "hb_pushed",
	    (json_int_t)d->sync->cmpct_pushed, "hb_peers", (json_int_t)d->sync->n_cmpct_hb, "asked",
	    (json_int_t)s->asked, "received", (json_int_t)s->received, "rebuilt_from_mempool",
	    (json_int_t)s->rebuilt, "rebuilt_with_getblocktxn", (json_int_t)s->rebuilt_txn,
	    "fallback_full_block", (json_int_t)s->fallback, "invalid", (json_int_t)s->invalid,
	    "as_header", (json_int_t)s->as_header, "getblocktxn_sent",
	    (json_int_t)s->getblocktxn_sent, "bytes_saved", (json_int_t)s->bytes_saved,
	    "extra_txs_used", (json_int_t)s->extra_used);
	if (o) {
		json_object_set_new(o, "gave_up", json_integer((json_int_t)s->gave_up));
		json_object_set_new(o, "whole_block_asked", json_integer((json_int_t)s->whole));
		json_object_set_new(o, "hb_pushed_before_connect",
		                    json_integer((json_int_t)d->sync->cmpct_pushed_early));
		json_object_set_new(o, "recent_reused",
		                    json_integer((json_int_t)d->sync->cmpct_recent_reused));
	}
	return o;
}
