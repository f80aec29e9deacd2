/*
 * daemon/txrelay/announce.c: relaying mempool transactions as Core 29's
 * net_processing does (RelayTransaction, SendMessages' trickle,
 * FindTxForGetData). The feefilter is in feefilter.c, the unbroadcast set's
 * retries in unbroadcast.c; what the three share is in internal.h.
 *
 * The mempool belongs to the validation thread; the loop must never wait
 * for it. So the loop keeps a mirror: for every mempool transaction its
 * ids, fee, vsize, ancestor count and an entry sequence, and for the
 * newest RELAY_RAW_MAX_BYTES of them the raw bytes. The mirror is fed by
 * the mempool's own events: the validation thread collects every addition
 * and removal while a job runs (txrelay_feed_take, after each job) and
 * hands them over as one result, queued before the job's own result, so
 * whoever posted the job sees the mempool it left. The same feed carries
 * the transactions of newly connected blocks (read back on the validation
 * thread: Core's BlockConnected), which feed the recently-confirmed filter,
 * the orphanage's EraseForBlock and getdata of the most recent block's
 * transactions (Core's m_most_recent_block_txs), and the rolling minimum
 * fee for feefilter. An accept from any source (a peer, an orphan,
 * sendrawtransaction) is announced: Core's BroadcastTransaction relays
 * too. Transactions loaded from mempool.dat or re-added by a reorg are
 * mirrored but not announced, as Core.
 *
 * Announcements (Core's trickle): every peer has a queue of entries to
 * announce; a timer (RELAY_TIMER_MS, Core's message handler period) sends
 * a peer its queue when its Poisson timer fires: all inbound peers share
 * one timer (average 5 s; a spy with many inbound connections learns
 * nothing from when each hears of a transaction), each outbound peer draws
 * its own (average 2 s). At most min(1000, 35 + queue/1000*5) per trickle,
 * fewest in-mempool ancestors first (parents before children), then
 * higher feerate. Never what the peer is known to have (it announced or
 * sent it, or was told), never below its feefilter, never a transaction
 * gone from the mempool. After each trickle the peer may fetch whatever
 * entered the mempool before it (Core's m_last_inv_sequence).
 *
 * Entries past the raw budget keep their place in the mirror (for
 * AlreadyHave and ordering) without bytes; a getdata for one is answered
 * with notfound. Getdata comes seconds after an announcement, and the
 * budget holds minutes of a busy network's transactions.
 */
#include "daemon/txrelay/txrelay.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "daemon/txrelay/internal.h"

#define SLOT_NONE UINT32_MAX

/* ---- the feed: validation thread -> loop ---------------------------------- */

enum feed_kind { FEED_ADDED, FEED_REMOVED };

struct feed_item {
	uint8_t kind;   /**< enum feed_kind */
	uint8_t reason; /**< enum mempool_addition / _removal */
	struct proto_hash txid, wtxid;
	int64_t fee, modified_fee, vsize;
	uint64_t ancestors;
	uint32_t n_out;
	bool unbroadcast; /**< FEED_ADDED: in the chain's unbroadcast set */
	uint8_t *raw;     /**< FEED_ADDED: the tx with witness (xmalloc'd) */
	uint32_t len;
};

struct relay_feed {
	struct val_job job;
	struct feed_item *items;
	uint32_t n, cap;
	/* connected blocks */
	bool tip_changed, disconnected, blocks_read;
	struct relay_block_tx *btx; /**< every connected block's txs; the tip's last */
	uint32_t n_btx, cap_btx;
	uint32_t tip_first; /**< btx[tip_first..] are the tip block's, with bytes in tip_buf */
	uint8_t *tip_buf;
	struct proto_outpoint *spent; /**< inputs of the connected blocks' transactions */
	uint32_t n_spent, cap_spent;
};

static void feed_done(struct daemon *d, struct val_job *j);

static struct relay_feed *feed_get(struct txrelay_state *r)
{
	if (!r->feed) {
		r->feed = xcalloc(1, sizeof(*r->feed));
		if (r->feed)
			r->feed->job.done = feed_done;
	}
	return r->feed;
}

static void feed_free(struct relay_feed *f)
{
	for (uint32_t i = 0; i < f->n; i++)
		xfree(f->items[i].raw);
	xfree(f->items);
	xfree(f->btx);
	xfree(f->tip_buf);
	xfree(f->spent);
	xfree(f);
}

static struct feed_item *feed_push(struct txrelay_state *r)
{
	struct relay_feed *f = feed_get(r);
	if (!f)
		return NULL;
	if (f->n == f->cap) {
		uint32_t ncap = f->cap ? f->cap * 2 : 16;
		struct feed_item *n = xreallocarray(f->items, ncap, sizeof(*n));
		if (!n)
			return NULL;
		f->items = n;
		f->cap = ncap;
	}
	struct feed_item *it = &f->items[f->n++];
	memset(it, 0, sizeof(*it));
	return it;
}

/* Validation thread: a mempool event. */
static void on_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	struct daemon *d = arg;
	struct feed_item *it = feed_push(d->txr);
	if (!it)
		return;
	struct mempool_entry_info info;
	mempool_entry_info(e, &info);
	it->kind = FEED_ADDED;
	it->reason = (uint8_t)how;
	it->txid = info.txid;
	it->wtxid = info.wtxid;
	it->fee = info.fee;
	it->modified_fee = info.modified_fee;
	it->vsize = info.vsize;
	it->ancestors = info.ancestor_count;
	const struct proto_tx *tx = mempool_entry_tx(e);
	it->n_out = tx->n_out;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(tx, &w);
	if (w.err) {
		proto_writer_release(&w);
		return;
	}
	it->raw = w.buf;
	it->len = (uint32_t)w.len;
}

static void on_removed(void *arg, const struct mempool_entry *e, enum mempool_removal why)
{
	struct daemon *d = arg;
	/* Core's ProcessValidTx: what a replacement evicted may still be
	 * mined (a miner that saw it first): keep it for compact blocks. */
	if (why == MEMPOOL_REMOVED_REPLACED)
		node_extratxn_add(d, mempool_entry_tx(e));
	struct feed_item *it = feed_push(d->txr);
	if (!it)
		return;
	it->kind = FEED_REMOVED;
	it->reason = (uint8_t)why;
	it->txid = *mempool_entry_txid(e);
	it->wtxid = *mempool_entry_wtxid(e);
}

static int btx_push(struct relay_feed *f, const struct proto_hash *txid,
                    const struct proto_hash *wtxid)
{
	if (f->n_btx == f->cap_btx) {
		uint32_t ncap = f->cap_btx ? f->cap_btx * 2 : 64;
		struct relay_block_tx *n = xreallocarray(f->btx, ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->btx = n;
		f->cap_btx = ncap;
	}
	f->btx[f->n_btx++] = (struct relay_block_tx){.txid = *txid, .wtxid = *wtxid};
	return 0;
}

static int spent_push(struct relay_feed *f, const struct proto_outpoint *op)
{
	if (f->n_spent == f->cap_spent) {
		uint32_t ncap = f->cap_spent ? f->cap_spent * 2 : 64;
		struct proto_outpoint *n = xreallocarray(f->spent, ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->spent = n;
		f->cap_spent = ncap;
	}
	f->spent[f->n_spent++] = *op;
	return 0;
}

/* Validation thread: one connected block's transactions into the feed. */
static int read_block(struct chain *c, struct relay_feed *f, const struct chain_node *n, bool tip)
{
	uint8_t *raw = NULL;
	size_t len = 0;
	int err = chain_read_block(c, n, &raw, &len);
	if (err)
		return err;
	struct proto_block b;
	proto_block_init(&b);
	struct proto_writer w;
	proto_writer_init(&w);
	if (proto_block_decode(raw, len, &b, NULL)) {
		err = -EINVAL;
		goto out;
	}
	if (tip)
		f->tip_first = f->n_btx;
	for (uint32_t i = 0; i < b.n_tx; i++) {
		struct proto_tx *tx = &b.txs[i];
		proto_tx_compute_ids(tx);
		if ((err = btx_push(f, &tx->txid, &tx->wtxid)))
			goto out;
		if (tip) {
			size_t off = w.len;
			proto_tx_encode(tx, &w);
			f->btx[f->n_btx - 1].off = (uint32_t)off;
			f->btx[f->n_btx - 1].len = (uint32_t)(w.len - off);
		}
		if (proto_tx_is_coinbase(tx))
			continue;
		for (uint32_t k = 0; k < tx->n_in; k++) {
			if ((err = spent_push(f, &tx->vin[k].prevout)))
				goto out;
		}
	}
	if (w.err) {
		err = -ENOMEM;
		goto out;
	}
	if (tip) {
		f->tip_buf = w.buf;
		w.buf = NULL;
	}
out:
	proto_writer_release(&w);
	proto_block_release(&b);
	xfree(raw);
	return err;
}

/* Validation thread: what the tip's move means for relay. */
static void feed_tip(struct daemon *d, struct chain *c)
{
	struct txrelay_state *r = d->txr;
	struct chain_node *tip = chain_tip(c);
	if (tip == r->feed_tip)
		return;
	const struct chain_node *old = r->feed_tip;
	r->feed_tip = tip;
	struct relay_feed *f = feed_get(r);
	if (!f || !old)
		return;
	f->tip_changed = true;
	struct chain_node *fork = chain_node_fork((struct chain_node *)old, tip);
	if (fork != old)
		f->disconnected = true;
	/* During initial block download nothing is relayed: no reads. */
	if (!fork || tip->height - fork->height > (int32_t)RELAY_FEED_MAX_BLOCKS || chain_in_ibd(c))
		return;
	/* Oldest first, the tip last. */
	struct chain_node *path[RELAY_FEED_MAX_BLOCKS];
	uint32_t k = 0;
	for (struct chain_node *n = tip; n && n != fork && k < RELAY_FEED_MAX_BLOCKS; n = n->prev)
		path[k++] = n;
	f->blocks_read = true;
	for (uint32_t i = k; i-- > 0;) {
		if (read_block(c, f, path[i], i == 0)) {
			f->blocks_read = false;
			break;
		}
	}
}

struct val_job *txrelay_feed_take(struct daemon *d, struct chain *c, struct mempool *mp)
{
	struct txrelay_state *r = d->txr;
	if (!c)
		return NULL;
	if (!r->feed_started) {
		r->feed_started = true;
		r->feed_tip = chain_tip(c);
		struct mempool_events ev = {.added = on_added, .removed = on_removed, .arg = d};
		mempool_set_events(mp, &ev);
		/* What mempool.dat loaded before the callbacks were there. */
		const struct mempool_entry **es = NULL;
		size_t n = 0;
		if (mempool_list(mp, MEMPOOL_ORDER_DEPTH_SCORE, &es, &n) == 0) {
			for (size_t i = 0; i < n; i++)
				on_added(d, es[i], MEMPOOL_ADDED_LOAD);
		}
		xfree(es);
	}
	atomic_store_explicit(&r->minfee, mempool_min_fee(mp), memory_order_relaxed);
	feed_tip(d, c);
	struct relay_feed *f = r->feed;
	/* sendrawtransaction joins the set after its accept fired `added`
	 * (and mempool.dat's set is read after its transactions): ask now. */
	for (uint32_t i = 0; f && i < f->n; i++) {
		if (f->items[i].kind == FEED_ADDED)
			f->items[i].unbroadcast = mempool_is_unbroadcast(mp, &f->items[i].txid);
	}
	r->feed = NULL;
	return f ? &f->job : NULL;
}

/* ---- the mirror ------------------------------------------------------------ */

static uint64_t fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

static struct relay_tx *slot_of(const struct daemon *d, const struct hmap *m, uint64_t key)
{
	uint32_t s;
	if (!hmap_get(m, key, &s))
		return NULL;
	return &d->txr->v[s];
}

const struct relay_tx *txrelay_find(const struct daemon *d, const struct proto_hash *h, bool wtxid)
{
	const struct relay_tx *e =
	    slot_of(d, wtxid ? &d->txr->by_wtxid : &d->txr->by_txid, fp(d, h));
	if (e && !proto_hash_eq(wtxid ? &e->wtxid : &e->txid, h))
		return NULL;
	return e;
}

static void drop_raw(struct txrelay_state *r, struct relay_tx *e)
{
	if (!e->raw)
		return;
	r->raw_bytes -= e->len;
	xfree(e->raw);
	e->raw = NULL;
}

static void entry_delete(struct daemon *d, struct relay_tx *e)
{
	struct txrelay_state *r = d->txr;
	uint32_t slot = (uint32_t)(e - r->v);
	drop_raw(r, e);
	hmap_del(&r->by_txid, fp(d, &e->txid));
	hmap_del(&r->by_wtxid, fp(d, &e->wtxid));
	hmap_del(&r->by_seq, e->seq);
	e->used = false;
	e->next_free = r->free_head;
	r->free_head = slot;
	r->used--;
}

static struct relay_tx *entry_alloc(struct txrelay_state *r)
{
	if (r->free_head == SLOT_NONE) {
		uint32_t ncap = r->cap ? r->cap * 2 : 256;
		struct relay_tx *n = xreallocarray(r->v, ncap, sizeof(*n));
		if (!n)
			return NULL;
		for (uint32_t i = ncap; i-- > r->cap;) {
			n[i].used = false;
			n[i].next_free = r->free_head;
			r->free_head = i;
		}
		r->v = n;
		r->cap = ncap;
	}
	struct relay_tx *e = &r->v[r->free_head];
	r->free_head = e->next_free;
	memset(e, 0, sizeof(*e));
	e->used = true;
	r->used++;
	return e;
}

/* Keep the raw bytes within budget, dropping the oldest entries' first. */
static void raw_trim(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	while (r->raw_bytes > RELAY_RAW_MAX_BYTES && r->raw_floor <= r->seq) {
		struct relay_tx *e = slot_of(d, &r->by_seq, r->raw_floor);
		if (e && e->raw) {
			drop_raw(r, e);
			r->st.raw_dropped++;
		}
		r->raw_floor++;
	}
}

/* The feed's item takes its place in the mirror (owning the raw bytes). */
static struct relay_tx *entry_add(struct daemon *d, struct feed_item *it)
{
	struct txrelay_state *r = d->txr;
	struct relay_tx *old = slot_of(d, &r->by_wtxid, fp(d, &it->wtxid));
	if (old)
		entry_delete(d, old);
	if ((old = slot_of(d, &r->by_txid, fp(d, &it->txid))))
		entry_delete(d, old);
	struct relay_tx *e = entry_alloc(r);
	if (!e)
		return NULL;
	uint32_t slot = (uint32_t)(e - r->v);
	e->txid = it->txid;
	e->wtxid = it->wtxid;
	e->fee = it->fee;
	e->modified_fee = it->modified_fee;
	e->vsize = it->vsize;
	e->ancestors = it->ancestors;
	e->unbroadcast = it->unbroadcast;
	e->seq = ++r->seq;
	if (hmap_put(&r->by_txid, fp(d, &e->txid), slot) ||
	    hmap_put(&r->by_wtxid, fp(d, &e->wtxid), slot) || hmap_put(&r->by_seq, e->seq, slot)) {
		entry_delete(d, e);
		return NULL;
	}
	e->raw = it->raw;
	e->len = it->len;
	it->raw = NULL;
	r->raw_bytes += e->len;
	raw_trim(d);
	return e;
}

const struct relay_tx *txrelay_mirror_add(struct daemon *d, const struct relay_tx *meta,
                                          const uint8_t *raw, size_t len, bool announce)
{
	struct feed_item it;
	memset(&it, 0, sizeof(it));
	it.txid = meta->txid;
	it.wtxid = meta->wtxid;
	it.fee = meta->fee;
	it.modified_fee = meta->modified_fee;
	it.vsize = meta->vsize;
	it.ancestors = meta->ancestors;
	it.raw = xmalloc(len ? len : 1);
	if (!it.raw)
		return NULL;
	memcpy(it.raw, raw, len);
	it.len = (uint32_t)len;
	const struct relay_tx *e = entry_add(d, &it);
	xfree(it.raw);
	if (e && announce)
		txrelay_relay_to_all(d, e);
	return e;
}

/* ---- announcements --------------------------------------------------------- */

uint64_t txrelay_exp_delay_ms(uint64_t avg_ms)
{
	/* Core's rand_exp_duration: -ln(U) times the mean, U uniform in (0, 1]. */
	double u = (double)((proto_random_u64() >> 11) + 1) * (1.0 / 9007199254740992.0);
	return (uint64_t)(-log(u) * (double)avg_ms);
}

/* Core's RelayTransaction: queue for every peer that has finished its handshake. */
void txrelay_relay_to_all(struct daemon *d, const struct relay_tx *e)
{
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		struct relay_peer *rp = p->txr;
		if (!rp || p->state != PEER_ACTIVE || !p->relaytxes)
			continue;
		const struct proto_hash *h = p->wtxidrelay ? &e->wtxid : &e->txid;
		if (inv_known_has(p, h))
			continue;
		if (rp->n >= RELAY_PEER_QUEUE_MAX) {
			d->txr->st.queue_full++;
			continue;
		}
		if (rp->n == rp->cap) {
			uint32_t ncap = rp->cap ? rp->cap * 2 : 64;
			uint64_t *q = xreallocarray(rp->q, ncap, sizeof(*q));
			if (!q)
				continue;
			rp->q = q;
			rp->cap = ncap;
		}
		rp->q[rp->n++] = e->seq;
		d->txr->st.queued++;
	}
}

/* Core's CompareDepthAndScore, best first. */
static int cmp_announce(const void *a, const void *b)
{
	const struct relay_tx *x = *(const struct relay_tx *const *)a;
	const struct relay_tx *y = *(const struct relay_tx *const *)b;
	if (x->ancestors != y->ancestors)
		return x->ancestors < y->ancestors ? -1 : 1;
	/* Higher feerate first: compare fee_x / vsize_x with fee_y / vsize_y. */
	__int128 fx = (__int128)x->modified_fee * y->vsize;
	__int128 fy = (__int128)y->modified_fee * x->vsize;
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return memcmp(x->txid.b, y->txid.b, sizeof(x->txid.b));
}

uint32_t txrelay_pick(struct peer *p, const struct relay_tx **out)
{
	struct daemon *d = p->d;
	struct relay_peer *rp = p->txr;
	uint32_t n = 0;
	size_t queued = rp->n;
	for (uint32_t i = 0; i < rp->n; i++) {
		const struct relay_tx *e = slot_of(d, &d->txr->by_seq, rp->q[i]);
		if (!e) {
			d->txr->st.skipped_gone++;
			continue;
		}
		const struct proto_hash *h = p->wtxidrelay ? &e->wtxid : &e->txid;
		if (inv_known_has(p, h)) {
			d->txr->st.skipped_known++;
			continue;
		}
		if (e->fee < mempool_feerate_fee(p->feefilter, e->vsize)) {
			d->txr->st.skipped_feefilter++;
			continue;
		}
		out[n++] = e;
	}
	qsort(out, n, sizeof(*out), cmp_announce);
	/* Core: the target grows with the backlog, up to the maximum. */
	size_t max = RELAY_BROADCAST_TARGET + (queued / 1000) * 5;
	if (max > RELAY_BROADCAST_MAX)
		max = RELAY_BROADCAST_MAX;
	uint32_t take = n < max ? n : (uint32_t)max;
	/* What is not sent now stays queued, in no particular order. */
	uint32_t k = 0;
	for (uint32_t i = take; i < n; i++)
		rp->q[k++] = out[i]->seq;
	rp->n = k;
	return take;
}

static void announce(struct peer *p, const struct relay_tx *const *es, uint32_t n)
{
	struct daemon *d = p->d;
	struct proto_inv *inv = &d->out.inv;
	if (proto_inv_reserve(inv, n))
		return;
	inv->n = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct proto_hash *h = p->wtxidrelay ? &es[i]->wtxid : &es[i]->txid;
		inv->v[inv->n++] = (struct proto_inv_vec){
		    .type = p->wtxidrelay ? PROTO_INV_WTX : PROTO_INV_TX, .hash = *h};
		inv_known_add(p, h);
	}
	d->out.cmd = PROTO_CMD_INV;
	if (peer_send_msg(p, &d->out) == 0) {
		d->txr->st.announced += n;
		d->txr->st.inv_msgs++;
	}
	inv->n = 0;
}

static void trickle_peer(struct peer *p, uint64_t now)
{
	struct daemon *d = p->d;
	struct relay_peer *rp = p->txr;
	if (rp->next_inv_ms >= now)
		return;
	/* Core's NextInvToInbounds: one shared timer for inbound peers. */
	if (p->inbound) {
		if (d->txr->inbound_next_ms < now)
			d->txr->inbound_next_ms =
			    now + txrelay_exp_delay_ms(RELAY_INBOUND_INTERVAL_MS);
		rp->next_inv_ms = d->txr->inbound_next_ms;
	} else {
		rp->next_inv_ms = now + txrelay_exp_delay_ms(RELAY_OUTBOUND_INTERVAL_MS);
	}
	if (!p->relaytxes)
		rp->n = 0;
	if (rp->n) {
		struct txrelay_state *r = d->txr;
		if (r->pick_cap < rp->n) {
			const struct relay_tx **es = xreallocarray(r->pick, rp->n, sizeof(*es));
			if (es) {
				r->pick = es;
				r->pick_cap = rp->n;
			}
		}
		if (r->pick_cap >= rp->n) {
			uint32_t n = txrelay_pick(p, r->pick);
			if (n)
				announce(p, r->pick, n);
		}
		if (!rp->n && rp->cap > 1024) {
			xfree(rp->q);
			rp->q = NULL;
			rp->cap = 0;
		}
	}
	d->txr->st.trickles++;
	/* Whatever is in the mempool now may be fetched by this peer. */
	rp->last_inv_seq = d->txr->seq + 1;
}

void txrelay_trickle(struct daemon *d, uint64_t now)
{
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (!p->txr || p->state != PEER_ACTIVE || p->send_paused)
			continue;
		txrelay_maybe_feefilter(p, now);
		if (p->state == PEER_ACTIVE)
			trickle_peer(p, now);
	}
}

static void on_timer(uv_timer_t *t)
{
	struct daemon *d = t->data;
	/* Inv trickles and feefilters on Core's mockable clock; the
	 * rebroadcast on the loop's (Core's scheduler is not mocked). */
	txrelay_trickle(d, (uint64_t)daemon_time_ms(d));
	txrelay_rebroadcast_tick(d, daemon_now_ms(d));
}

void txrelay_peer_ready(struct peer *p)
{
	struct daemon *d = p->d;
	if (p->txr)
		return;
	p->txr = xcalloc(1, sizeof(*p->txr));
	if (!p->txr)
		return;
	/* Core: m_next_inv_send_time starts at zero, so the first trickle
	 * (empty) runs at once and draws the next one. */
	p->txr->last_inv_seq = 1;
	txrelay_maybe_feefilter(p, (uint64_t)daemon_time_ms(d));
}

void txrelay_peer_gone(struct peer *p)
{
	struct daemon *d = p->d;
	if (p->txr) {
		xfree(p->txr->q);
		xfree(p->txr);
		p->txr = NULL;
	}
	(void)orphan_erase_for_peer(&d->txr->orphans, p->id);
}

void txrelay_ibd_over(struct daemon *d)
{
	uint64_t now = (uint64_t)daemon_time_ms(d);
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->state == PEER_ACTIVE && p->txr)
			txrelay_maybe_feefilter(p, now);
	}
}

void txrelay_new_tip(struct daemon *d)
{
	/* Core's ActiveTipChange: a rejected transaction may be valid on the new tip. */
	hset_release(&d->txr->rejects);
	hset_release(&d->txr->reconsiderable);
}

/* ---- getdata ---------------------------------------------------------------- */

static void send_tx(struct peer *p, const uint8_t *raw, size_t len, bool witness)
{
	struct daemon *d = p->d;
	const struct proto_params *pp = d->params;
	struct proto_writer *w = &d->txw;
	w->len = 0;
	w->err = 0;
	if (witness) {
		proto_frame_write(w, pp->magic, "tx", raw, len);
	} else {
		/* MSG_TX without the witness flag: the legacy serialization. */
		struct proto_tx tx;
		proto_tx_init(&tx);
		if (proto_tx_decode_buf(raw, len, &tx, NULL)) {
			proto_tx_release(&tx);
			return;
		}
		size_t start = proto_frame_begin(w);
		proto_tx_encode_stripped(&tx, w);
		proto_frame_end(w, start, pp->magic, "tx");
		proto_tx_release(&tx);
	}
	if (w->err)
		return;
	peer_send_frame(p, PROTO_CMD_TX, w->buf, w->len);
}

bool txrelay_serve(struct peer *p, const struct proto_inv_vec *v)
{
	struct daemon *d = p->d;
	struct txrelay_state *r = d->txr;
	uint32_t base = v->type & ~(uint32_t)PROTO_INV_WITNESS_FLAG;
	bool by_wtxid = base == PROTO_INV_WTX;
	bool witness = by_wtxid || (v->type & PROTO_INV_WITNESS_FLAG);
	r->st.getdata_tx++;
	const struct relay_tx *e = txrelay_find(d, &v->hash, by_wtxid);
	uint64_t last = p->txr ? p->txr->last_inv_seq : 0;
	if (e && e->seq < last && e->raw) {
		send_tx(p, e->raw, e->len, witness);
		r->st.served++;
		if (e->unbroadcast)
			txrelay_unbroadcast_served(d, (struct relay_tx *)e);
		return true;
	}
	/* Or one of the most recent block's (by txid or wtxid alike, as Core). */
	uint32_t i;
	if (r->block.n && hmap_get(&r->block.idx, fp(d, &v->hash), &i) && i < r->block.n) {
		const struct relay_block_tx *b = &r->block.v[i];
		if (proto_hash_eq(&b->txid, &v->hash) || proto_hash_eq(&b->wtxid, &v->hash)) {
			send_tx(p, r->block.buf + b->off, b->len, witness);
			r->st.served_block++;
			return true;
		}
	}
	r->st.notfound++;
	return false;
}

/* ---- applying a feed on the loop ------------------------------------------- */

static void block_txs_release(struct relay_block_txs *b)
{
	xfree(b->buf);
	xfree(b->v);
	hmap_release(&b->idx);
	memset(b, 0, sizeof(*b));
}

/* The connected blocks: Core's BlockConnected for relay and orphans. */
static void apply_blocks(struct daemon *d, struct relay_feed *f)
{
	struct txrelay_state *r = d->txr;
	if (f->disconnected)
		hset_release(&r->confirmed);
	if (!f->blocks_read)
		return;
	for (uint32_t i = 0; i < f->n_btx; i++) {
		const struct relay_block_tx *b = &f->btx[i];
		(void)hset_insert(&r->confirmed, fp(d, &b->txid));
		if (!proto_hash_eq(&b->txid, &b->wtxid))
			(void)hset_insert(&r->confirmed, fp(d, &b->wtxid));
		txrequest_forget(d, &b->txid);
		txrequest_forget(d, &b->wtxid);
		(void)orphan_erase(&r->orphans, &b->wtxid);
	}
	(void)orphan_erase_spending(&r->orphans, f->spent, f->n_spent);
	/* The tip's transactions replace the last block's for getdata. */
	if (!f->tip_buf)
		return;
	block_txs_release(&r->block);
	uint32_t n = f->n_btx - f->tip_first;
	r->block.v = xreallocarray(NULL, n ? n : 1, sizeof(*r->block.v));
	if (!r->block.v)
		return;
	memcpy(r->block.v, f->btx + f->tip_first, n * sizeof(*r->block.v));
	r->block.n = n;
	r->block.buf = f->tip_buf;
	f->tip_buf = NULL;
	for (uint32_t i = 0; i < n; i++) {
		(void)hmap_put(&r->block.idx, fp(d, &r->block.v[i].txid), i);
		(void)hmap_put(&r->block.idx, fp(d, &r->block.v[i].wtxid), i);
	}
}

static void feed_done(struct daemon *d, struct val_job *j)
{
	struct relay_feed *f = (struct relay_feed *)j;
	struct txrelay_state *r = d->txr;
	if (j->cancelled || d->shutting_down) {
		feed_free(f);
		return;
	}
	r->st.feeds++;
	for (uint32_t i = 0; i < f->n; i++) {
		struct feed_item *it = &f->items[i];
		if (it->kind == FEED_REMOVED) {
			struct relay_tx *e = slot_of(d, &r->by_wtxid, fp(d, &it->wtxid));
			if (e && proto_hash_eq(&e->wtxid, &it->wtxid)) {
				entry_delete(d, e);
				r->st.removed++;
			}
			continue;
		}
		const struct relay_tx *e = entry_add(d, it);
		if (!e)
			continue;
		r->st.added++;
		if (it->reason != MEMPOOL_ADDED_ACCEPT)
			continue;
		txrelay_relay_to_all(d, e);
		txaccept_parent_accepted(d, &it->txid, &it->wtxid, it->n_out);
	}
	apply_blocks(d, f);
	feed_free(f);
	txaccept_orphan_kick(d);
}

/* ---- lifecycle, stats ---------------------------------------------------------- */

int txrelay_init(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	memset(r, 0, sizeof(*r));
	r->free_head = SLOT_NONE;
	r->raw_floor = 1;
	hmap_init(&r->by_txid);
	hmap_init(&r->by_wtxid);
	hmap_init(&r->by_seq);
	hmap_init(&r->block.idx);
	hset_init(&r->rejects, RELAY_REJECTS_MAX);
	hset_init(&r->reconsiderable, RELAY_REJECTS_MAX);
	hset_init(&r->confirmed, RELAY_CONFIRMED_MAX);
	orphan_init(&r->orphans, NULL, NULL);
	atomic_init(&r->minfee, 0);
	txrelay_feefilter_init(r);
	return 0;
}

void txrelay_release(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	for (uint32_t i = 0; i < r->cap; i++) {
		if (r->v[i].used)
			xfree(r->v[i].raw);
	}
	xfree(r->v);
	r->v = NULL;
	r->cap = r->used = 0;
	hmap_release(&r->by_txid);
	hmap_release(&r->by_wtxid);
	hmap_release(&r->by_seq);
	xfree(r->pick);
	r->pick = NULL;
	r->pick_cap = 0;
	block_txs_release(&r->block);
	hset_release(&r->rejects);
	hset_release(&r->reconsiderable);
	hset_release(&r->confirmed);
	orphan_release(&r->orphans);
	if (r->feed) {
		feed_free(r->feed);
		r->feed = NULL;
	}
}

int txrelay_start(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	int err = uv_timer_init(d->loop, &r->timer);
	if (err)
		return err;
	r->timer.data = d;
	r->timer_on = true;
	return uv_timer_start(&r->timer, on_timer, RELAY_TIMER_MS, RELAY_TIMER_MS);
}

static void timer_closed(uv_handle_t *h)
{
	(void)h;
}

void txrelay_stop(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	if (!r->timer_on)
		return;
	r->timer_on = false;
	uv_timer_stop(&r->timer);
	if (!uv_is_closing((uv_handle_t *)&r->timer))
		uv_close((uv_handle_t *)&r->timer, timer_closed);
}

json_t *txrelay_stats_json(struct daemon *d)
{
	const struct txrelay_state *r = d->txr;
	const struct relay_stats *s = &r->st;
	const struct orphanage *o = &r->orphans;
	json_t *orph = json_pack(
	    "{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "count", (int)o->n, "weight",
	    (json_int_t)o->total_weight, "announcements", (json_int_t)o->total_announcements,
	    "added", (json_int_t)o->added, "expired", (json_int_t)o->expired, "evicted",
	    (json_int_t)o->evicted, "too_heavy", (json_int_t)o->too_heavy, "erased_for_block",
	    (json_int_t)o->erased_for_block, "accepted", (json_int_t)o->accepted);
	json_t *j = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "mempool_mirror", (json_int_t)r->used, "raw_bytes", (json_int_t)r->raw_bytes, "queued",
	    (json_int_t)s->queued, "announced", (json_int_t)s->announced, "trickles",
	    (json_int_t)s->trickles, "inv_messages", (json_int_t)s->inv_msgs, "skipped_known",
	    (json_int_t)s->skipped_known, "skipped_gone", (json_int_t)s->skipped_gone,
	    "skipped_feefilter", (json_int_t)s->skipped_feefilter, "requested",
	    (json_int_t)s->getdata_tx, "served", (json_int_t)s->served, "served_from_block",
	    (json_int_t)s->served_block, "notfound", (json_int_t)s->notfound, "feefilters_sent",
	    (json_int_t)s->feefilters_sent, "recent_rejects", (json_int_t)hset_count(&r->rejects),
	    "recent_confirmed", (json_int_t)hset_count(&r->confirmed));
	json_object_set_new(j, "raw_dropped", json_integer((json_int_t)s->raw_dropped));
	json_object_set_new(j, "queue_full", json_integer((json_int_t)s->queue_full));
	json_object_set_new(j, "validation_queue_bytes", json_integer((json_int_t)s->queue_bytes));
	json_object_set_new(j, "validation_queue_dropped",
	                    json_integer((json_int_t)s->queue_dropped));
	json_object_set_new(j, "block_txs", json_integer((json_int_t)r->block.n));
	json_object_set_new(j, "orphans", orph);
	return j;
}
