/*
 * daemon/txrelay/accept.c: a received transaction on its way to the mempool, as
 * Core 29's net_processing and TxDownloadManager handle it (ProcessMessage
 * "tx", ProcessValidTx, ProcessInvalidTx, MempoolRejectedTx,
 * ProcessOrphanTx, AlreadyHaveTx, MaybePunishNodeForTx).
 *
 *   tx message ─► already have it? (orphanage, recent rejects, recently
 *   confirmed, mempool mirror) ─► no: a job for the validation thread,
 *   mempool_accept ─► the result on the loop:
 *     accepted:  announced by txrelay/announce.c (from the mempool's own event), its
 *                orphans go to their announcers' work sets;
 *     missing inputs: an orphan, unless a parent was rejected; the missing
 *                parents are asked (by txid) of the sender and of every
 *                other peer that announced it (Core's orphan resolution
 *                candidates), who become its announcers;
 *     reconsiderable (fee too low alone): remembered apart, never tried
 *                again alone; with a child from the orphanage it goes
 *                to package validation (1p1c, txrelay/package.c);
 *     witness stripped: nothing remembered (another peer may send the
 *                real one);
 *     anything else: its wtxid (and, for non-standard inputs, its txid)
 *                goes to the recent rejects and is never asked again
 *                until the tip moves.
 *   Punishment as Core 29: only a consensus failure (TX_CONSENSUS, which
 *   includes mandatory script flags) is Misbehaving; policy failures,
 *   conflicts and missing inputs are not the peer's fault.
 *
 * The tx message comes here straight from the message table
 * (txaccept_on_tx_msg), and a transaction inv entry through p2p's
 * tx_announced hook (txaccept_tx_announced), which asks for what peerd
 * lacks through the request tracker (txrelay/request.c).
 *
 * Orphans are reconsidered one at a time (one job with the validation
 * thread), each for the announcer whose work set holds it, as Core's
 * ProcessOrphanTx does between a peer's messages.
 */
#include "daemon/txrelay/internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "daemon/txrelay/package.h"

struct tx_job {
	struct val_job job;
	struct daemon *d; /**< set once posted: its bytes count in the queue */
	uint64_t peer;
	bool first_time; /**< false: an orphan being reconsidered */
	uint8_t *raw;
	size_t len;
	int err;
	struct mempool_accept_result r;
	/* The pool after an accept, for Core's -debug=mempool line (validation thread). */
	uint64_t pool_size, pool_usage;
	uint32_t n_cand;
	uint64_t cand[TXREQUEST_MAX_ANNOUNCERS]; /**< other announcers of the tx */
};

static uint64_t fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

bool txaccept_already_have(struct daemon *d, const struct proto_hash *h, bool wtxid,
                           bool include_reconsiderable)
{
	struct txrelay_state *r = d->txr;
	/* By txid the orphanage is asked with the txid taken as a wtxid: a
	 * transaction without witness has them equal, and a txid match
	 * alone could hide a malleated copy. */
	if (orphan_get(&r->orphans, h))
		return true;
	uint64_t k = fp(d, h);
	if (include_reconsiderable && hset_contains(&r->reconsiderable, k))
		return true;
	if (hset_contains(&r->confirmed, k))
		return true;
	return hset_contains(&r->rejects, k) || txrelay_find(d, h, wtxid) != NULL;
}

static bool peer_live(struct peer *p)
{
	return p && p->state == PEER_ACTIVE;
}

/* The parents of an orphan that peerd still lacks. Returns the count; txids in out. */
static uint32_t missing_parents(struct daemon *d, const struct orphan_tx *o, struct proto_hash *out,
                                uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < o->n_in && n < cap; i++) {
		const struct proto_hash *t = &o->prevouts[i].txid;
		bool dup = false;
		for (uint32_t k = 0; k < n && !dup; k++)
			dup = proto_hash_eq(&out[k], t);
		if (dup || txaccept_already_have(d, t, false, false))
			continue;
		out[n++] = *t;
	}
	return n;
}

/* Core's MaybeAddOrphanResolutionCandidate: ask p for the parents. */
static bool add_candidate(struct peer *p, const struct proto_hash *wtxid,
                          const struct proto_hash *parents, uint32_t n)
{
	struct daemon *d = p->d;
	if (!peer_live(p) || orphan_have_from_peer(&d->txr->orphans, wtxid, p->id))
		return false;
	/* As for announcements: a peer tracked for too many already is not asked. */
	if (p->txreq->tx_announced + n > TXREQUEST_MAX_PEER_ANNOUNCEMENTS)
		return false;
	for (uint32_t i = 0; i < n; i++)
		txrequest_track_parent(p, &parents[i]);
	return true;
}

bool txaccept_inv_have(struct peer *p, const struct proto_inv_vec *v)
{
	struct daemon *d = p->d;
	bool wtxid = v->type == PROTO_INV_WTX;
	if (wtxid) {
		const struct orphan_tx *o = orphan_get(&d->txr->orphans, &v->hash);
		if (o) {
			/* An orphan we try to resolve: this peer can help. */
			struct proto_hash parents[64];
			uint32_t n = missing_parents(d, o, parents, 64);
			if (n && add_candidate(p, &o->wtxid, parents, n))
				(void)orphan_add_announcer(&d->txr->orphans, &v->hash, p->id);
			return true;
		}
	}
	return txaccept_already_have(d, &v->hash, wtxid, true);
}

void txaccept_tx_announced(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms)
{
	if (txaccept_inv_have(p, v))
		return;
	txrequest_add(p, v, now_ms);
}

/* ---- the validation thread's part -------------------------------------------- */

static void tx_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct tx_job *tj = (struct tx_job *)j;
	if (!c) {
		tj->err = -ENOENT;
		return;
	}
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(tj->raw, tj->len, &tx, NULL)) {
		tj->err = -EINVAL;
	} else {
		proto_tx_compute_ids(&tx);
		tj->err = mempool_accept(mp, &tx, NULL, &tj->r);
		if (!tj->err && tj->r.accepted) {
			struct mempool_info mi;
			mempool_get_info(mp, &mi);
			tj->pool_size = mi.size;
			tj->pool_usage = mi.usage;
		}
	}
	proto_tx_release(&tx);
}

/* ---- results on the loop ---------------------------------------------------------- */

static void job_free(struct tx_job *tj)
{
	if (tj->d)
		tj->d->txr->st.queue_bytes -= tj->len;
	mempool_accept_result_release(&tj->r);
	xfree(tj->raw);
	xfree(tj);
}

static void reject_insert(struct daemon *d, struct hset *s, const struct proto_hash *h)
{
	(void)hset_insert(s, fp(d, h));
	txrequest_forget(d, h);
}

/*
 * Core's MempoolRejectedTx for TX_MISSING_INPUTS on a first failure.
 * Returns Core's m_should_add_extra_compact_tx: whether the transaction
 * goes to the compact-block ring (node/extratxn.c): yes, unless it was
 * already an orphan (then it went in when it first came).
 */
static bool handle_orphan(struct daemon *d, struct tx_job *tj, struct peer *p)
{
	struct txrelay_state *r = d->txr;
	const struct mempool_accept_result *res = &tj->r;
	if (hset_contains(&r->rejects, fp(d, &res->wtxid)))
		return true;
	/* A rejected parent dooms it; one parent rejected for its fee alone
	 * might still get in with this child as a package (not in the mempool). */
	bool rejected_parent = false, reconsiderable_seen = false;
	for (size_t i = 0; i < res->n_missing_parents && !rejected_parent; i++) {
		const struct proto_hash *t = &res->missing_parents[i];
		uint64_t k = fp(d, t);
		if (hset_contains(&r->rejects, k)) {
			rejected_parent = true;
		} else if (hset_contains(&r->reconsiderable, k) && !txrelay_find(d, t, false)) {
			if (reconsiderable_seen)
				rejected_parent = true;
			reconsiderable_seen = true;
		}
	}
	if (rejected_parent) {
		DLOG_DBG(&d->log, DLOG_INV, "not keeping orphan with rejected parents (peer=%llu)",
		         (unsigned long long)tj->peer);
		reject_insert(d, &r->rejects, &res->txid);
		reject_insert(d, &r->rejects, &res->wtxid);
		return true;
	}
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(tj->raw, tj->len, &tx, NULL)) {
		proto_tx_release(&tx);
		return false;
	}
	proto_tx_compute_ids(&tx);
	bool extra = orphan_get(&r->orphans, &tx.wtxid) == NULL;
	struct proto_hash parents[64];
	uint32_t n = 0;
	for (size_t i = 0; i < res->n_missing_parents && n < 64; i++) {
		if (!txaccept_already_have(d, &res->missing_parents[i], false, false))
			parents[n++] = res->missing_parents[i];
	}
	int64_t now = daemon_time(d);
	/* The sender first, then whoever else announced it. */
	uint64_t cands[1 + TXREQUEST_MAX_ANNOUNCERS];
	uint32_t nc = 0;
	cands[nc++] = tj->peer;
	for (uint32_t i = 0; i < tj->n_cand; i++)
		cands[nc++] = tj->cand[i];
	bool kept = false;
	for (uint32_t i = 0; i < nc; i++) {
		struct peer *q = peer_by_id(d, cands[i]);
		if (!q || !add_candidate(q, &tx.wtxid, parents, n))
			continue;
		if (orphan_add(&r->orphans, &tx, tj->raw, tj->len, q->id, now) == 1)
			kept = true;
	}
	if (p) {
		for (uint32_t i = 0; i < n; i++)
			inv_known_add(p, &parents[i]);
	}
	if (kept)
		d->stats.tx_orphaned++;
	/* An orphan counts as had: not asked for again. */
	txrequest_forget(d, &tx.txid);
	txrequest_forget(d, &tx.wtxid);
	(void)orphan_limit(&r->orphans, ORPHAN_MAX, now);
	proto_tx_release(&tx);
	return extra;
}

/* Core's MaybePunishNodeForTx. */
static void maybe_punish(struct daemon *d, struct peer *p, const struct chain_state *st)
{
	if (st->result != CHAIN_RESULT_CONSENSUS || !peer_live(p))
		return;
	d->stats.tx_punished++;
	char why[CHAIN_REASON_MAX + 32];
	snprintf(why, sizeof(why), "invalid transaction: %s", st->reason);
	ban_misbehaving(p, why);
}

static void tx_done(struct daemon *d, struct val_job *j)
{
	struct tx_job *tj = (struct tx_job *)j;
	struct txrelay_state *r = d->txr;
	if (!tj->first_time)
		r->orphan_busy = false;
	if (j->cancelled || tj->err || d->shutting_down) {
		job_free(tj);
		return;
	}
	const struct mempool_accept_result *res = &tj->r;
	struct peer *p = peer_by_id(d, tj->peer);
	char hex[65], whex[65];
	if (res->accepted) {
		d->stats.tx_accepted++;
		if (!tj->first_time)
			r->orphans.accepted++;
		else if (p)
			p->last_tx_time = daemon_time(d); /* Core's m_last_tx_time */
		/* Core's ProcessValidTx line, word for word (-debug=mempool). */
		if (dlog_enabled(&d->log, DLOG_DEBUG, DLOG_MEMPOOL)) {
			proto_hash_to_hex(&res->txid, hex);
			proto_hash_to_hex(&res->wtxid, whex);
			DLOG_DBG(
			    &d->log, DLOG_MEMPOOL,
			    "AcceptToMemoryPool: peer=%llu: accepted %s (wtxid=%s) (poolsz %llu "
			    "txn, %llu kB)",
			    (unsigned long long)tj->peer, hex, whex,
			    (unsigned long long)tj->pool_size,
			    (unsigned long long)(tj->pool_usage / 1000));
		}
		job_free(tj);
		txaccept_orphan_kick(d);
		return;
	}
	if (res->already_in_mempool) {
		job_free(tj);
		txaccept_orphan_kick(d);
		return;
	}
	d->stats.tx_rejected++;
	enum chain_result kind = res->state.result;
	/* Core's ProcessInvalidTx line (-debug=mempoolrej); the verdict as
	 * TxValidationState::ToString: reason, then ", " and the debug text. */
	if (dlog_enabled(&d->log, DLOG_DEBUG, DLOG_MEMPOOLREJ)) {
		proto_hash_to_hex(&res->txid, hex);
		proto_hash_to_hex(&res->wtxid, whex);
		DLOG_DBG(&d->log, DLOG_MEMPOOLREJ,
		         "%s (wtxid=%s) from peer=%llu was not accepted: %s%s%s", hex, whex,
		         (unsigned long long)tj->peer, res->state.reason,
		         res->state.debug[0] ? ", " : "", res->state.debug);
	}
	/* Core's ProcessInvalidTx: a first failure goes to the compact-block
	 * ring (node/extratxn.c, under 100 kB), but a witness-stripped copy
	 * (not the transaction a block would hold) and an orphan already held. */
	bool extra = tj->first_time && kind != CHAIN_RESULT_TX_WITNESS_STRIPPED;
	if (kind == CHAIN_RESULT_TX_MISSING_INPUTS) {
		if (tj->first_time)
			extra = handle_orphan(d, tj, p);
	} else {
		if (kind == CHAIN_RESULT_TX_RECONSIDERABLE) {
			reject_insert(d, &r->reconsiderable, &res->wtxid);
			/* A child in the orphanage may pay for it (1p1c). */
			(void)txpackage_try_1p1c(d, tj->peer, tj->raw, tj->len, &res->txid);
		} else if (kind != CHAIN_RESULT_TX_WITNESS_STRIPPED) {
			/* The wtxid only: a txid may stand for a malleated copy. */
			reject_insert(d, &r->rejects, &res->wtxid);
			/* Non-standard inputs do not depend on the witness. */
			if (kind == CHAIN_RESULT_TX_INPUTS_NOT_STANDARD &&
			    !proto_hash_eq(&res->txid, &res->wtxid))
				reject_insert(d, &r->rejects, &res->txid);
		}
		/* An orphan that failed for another reason is done with. */
		(void)orphan_erase(&r->orphans, &res->wtxid);
		maybe_punish(d, p, &res->state);
	}
	if (extra)
		node_extratxn_post(d, tj->raw, tj->len);
	job_free(tj);
	txaccept_orphan_kick(d);
}

static struct tx_job *job_new(uint64_t peer, const uint8_t *raw, size_t len, bool first)
{
	struct tx_job *tj = xcalloc(1, sizeof(*tj));
	if (!tj)
		return NULL;
	tj->raw = xmalloc(len ? len : 1);
	if (!tj->raw) {
		xfree(tj);
		return NULL;
	}
	memcpy(tj->raw, raw, len);
	tj->len = len;
	tj->peer = peer;
	tj->first_time = first;
	tj->job.work = tx_work;
	tj->job.done = tx_done;
	mempool_accept_result_init(&tj->r);
	return tj;
}

/* Hand a job to the validation thread, within the queue's byte budget. */
static int post(struct daemon *d, struct tx_job *tj)
{
	struct relay_stats *st = &d->txr->st;
	if (st->queue_bytes + tj->len > RELAY_MAX_QUEUE_BYTES) {
		st->queue_dropped++;
		return -ENOSPC;
	}
	if (validation_post(d, &tj->job))
		return -ESHUTDOWN;
	tj->d = d;
	st->queue_bytes += tj->len;
	return 0;
}

void txaccept_orphan_kick(struct daemon *d)
{
	struct txrelay_state *r = d->txr;
	uint64_t peer;
	while (!r->orphan_busy && !d->shutting_down && orphan_next_worker(&r->orphans, &peer)) {
		const struct orphan_tx *o = orphan_take_work(&r->orphans, peer);
		if (!o)
			continue;
		struct tx_job *tj = job_new(peer, o->raw, o->len, false);
		if (!tj)
			return;
		if (post(d, tj)) {
			job_free(tj);
			return;
		}
		r->orphan_busy = true;
		r->st.orphan_jobs++;
	}
}

void txaccept_parent_accepted(struct daemon *d, const struct proto_hash *txid,
                              const struct proto_hash *wtxid, uint32_t n_out)
{
	struct txrelay_state *r = d->txr;
	txrequest_forget(d, txid);
	txrequest_forget(d, wtxid);
	(void)orphan_erase(&r->orphans, wtxid);
	(void)orphan_add_children_to_workset(&r->orphans, txid, n_out);
}

void txaccept_on_tx_msg(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	(void)m;
	/* Core 29 (-blocksonly, a block-relay-only or feeler connection):
	 * a transaction nobody asked for, even during initial block
	 * download, costs the connection. */
	if (peer_rejects_txs(p)) {
		peer_disconnect(p, "transaction sent in violation of protocol");
		return;
	}
	/* Core drops transactions during initial block download: they
	 * cannot be validated yet. */
	if (d->view->ibd)
		return;
	/* m is d->in, the daemon's own scratch message; the tx's id cache
	 * is filled in place, so use the mutable name. */
	struct proto_tx *tx = &d->in.tx;
	proto_tx_compute_ids(tx);
	d->stats.tx_received++;
	d->stats.tx_decoded++;
	d->stats.tx_bytes += tx->size;
	bool asked = false;
	if (txrequest_asked(p, &tx->wtxid))
		asked = true;
	if (txrequest_asked(p, &tx->txid))
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

void txaccept_on_tx(struct peer *p, struct proto_tx *tx)
{
	struct daemon *d = p->d;
	proto_tx_compute_ids(tx);
	inv_known_add(p, p->wtxidrelay ? &tx->wtxid : &tx->txid);
	/* Who else announced it: candidates to resolve it if it is an orphan. */
	uint64_t cand[TXREQUEST_MAX_ANNOUNCERS];
	uint32_t n_cand = txrequest_take_announcers(d, &tx->wtxid, cand, TXREQUEST_MAX_ANNOUNCERS);
	if (!proto_hash_eq(&tx->txid, &tx->wtxid))
		n_cand += txrequest_take_announcers(d, &tx->txid, cand + n_cand,
		                                    TXREQUEST_MAX_ANNOUNCERS - n_cand);
	bool reconsiderable = hset_contains(&d->txr->reconsiderable, fp(d, &tx->wtxid));
	if (txaccept_already_have(d, &tx->wtxid, true, false) || reconsiderable) {
		/* Nothing learned and nobody punished: the filters may err. */
		d->stats.tx_already_have++;
		/* Not again alone; but with a child from the orphanage (Core's
		 * Find1P1CPackage on a reconsiderable reject). */
		if (reconsiderable && !txaccept_already_have(d, &tx->wtxid, true, false)) {
			struct proto_writer pw;
			proto_writer_init(&pw);
			proto_tx_encode(tx, &pw);
			if (!pw.err)
				(void)txpackage_try_1p1c(d, p->id, pw.buf, pw.len, &tx->txid);
			proto_writer_release(&pw);
		}
		return;
	}
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(tx, &w);
	if (w.err) {
		proto_writer_release(&w);
		return;
	}
	struct tx_job *tj = xcalloc(1, sizeof(*tj));
	if (!tj) {
		proto_writer_release(&w);
		return;
	}
	tj->raw = w.buf;
	tj->len = w.len;
	tj->peer = p->id;
	tj->first_time = true;
	tj->job.work = tx_work;
	tj->job.done = tx_done;
	mempool_accept_result_init(&tj->r);
	for (uint32_t i = 0; i < n_cand; i++) {
		if (cand[i] != p->id && tj->n_cand < TXREQUEST_MAX_ANNOUNCERS)
			tj->cand[tj->n_cand++] = cand[i];
	}
	if (post(d, tj))
		job_free(tj);
}
