/*
 * daemon/txrelay/package.c: 1p1c package relay, as Core 28+'s TxDownloadManager
 * (node/txdownloadman_impl.cpp Find1P1CPackage, then ProcessNewPackage).
 *
 * A transaction from a peer that fails only because its own feerate is too
 * low (CHAIN_RESULT_TX_RECONSIDERABLE: below the mempool minimum, or a
 * zero-fee TRUC parent) lands in the reconsiderable filter and is never
 * validated alone again. But a child paying for it may be waiting in the
 * orphanage (it came first, or came after and had the parent asked for
 * again: the filter does not count as "have" when resolving orphans). Then
 * the two go to mempool_submit_package as one package; what enters
 * the pool is announced by txrelay/announce.c from the pool's own events, and the
 * child leaves the orphanage through those too (txaccept_parent_accepted).
 *
 * Children announced by the same peer are preferred, as Core does (a peer
 * flooding fake children cannot starve the honest one), then anyone's.
 */
#include "daemon/txrelay/package.h"

#include <errno.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"

struct pkg_job {
	struct val_job job;
	uint64_t peer;
	uint8_t *raw[2];
	size_t len[2];
	int err;
	bool accepted; /* both in the pool after */
	struct mempool_package_state pkg;
	struct proto_hash child_wtxid;
};

static void pkg_job_free(struct pkg_job *pj)
{
	xfree(pj->raw[0]);
	xfree(pj->raw[1]);
	xfree(pj);
}

static void pkg_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct pkg_job *pj = (struct pkg_job *)j;
	if (!c) {
		pj->err = -ENOENT;
		return;
	}
	struct proto_tx tx[2];
	struct proto_tx *ptrs[2] = {&tx[0], &tx[1]};
	struct mempool_accept_result r[2];
	for (int i = 0; i < 2; i++) {
		proto_tx_init(&tx[i]);
		mempool_accept_result_init(&r[i]);
	}
	if (proto_tx_decode_buf(pj->raw[0], pj->len[0], &tx[0], NULL) ||
	    proto_tx_decode_buf(pj->raw[1], pj->len[1], &tx[1], NULL)) {
		pj->err = -EINVAL;
		goto out;
	}
	/* From the network: no fee ceiling (Core's client_maxfeerate none). */
	pj->err = mempool_submit_package(mp, ptrs, 2, NULL, r, &pj->pkg);
	pj->accepted =
	    !pj->err && r[0].validated && r[0].accepted && r[1].validated && r[1].accepted;
out:
	for (int i = 0; i < 2; i++) {
		proto_tx_release(&tx[i]);
		mempool_accept_result_release(&r[i]);
	}
}

static void pkg_done(struct daemon *d, struct val_job *j)
{
	struct pkg_job *pj = (struct pkg_job *)j;
	if (!j->cancelled && !pj->err && !d->shutting_down) {
		char hex[65];
		proto_hash_to_hex(&pj->child_wtxid, hex);
		if (pj->accepted) {
			d->stats.tx_accepted += 2;
			DLOG_DBG(&d->log, DLOG_INV,
			         "1p1c package with child %s from peer=%llu accepted", hex,
			         (unsigned long long)pj->peer);
		} else {
			DLOG_DBG(&d->log, DLOG_INV,
			         "1p1c package with child %s from peer=%llu not accepted: %s", hex,
			         (unsigned long long)pj->peer, pj->pkg.reason);
			/* The child alone will not do better: forget it. */
			(void)orphan_erase(&d->txr->orphans, &pj->child_wtxid);
		}
		txaccept_orphan_kick(d);
	}
	pkg_job_free(pj);
}

/* The newest-first scan is not needed: any child will do, the sender's first. */
static const struct orphan_tx *find_child(const struct orphanage *o, const struct proto_hash *txid,
                                          uint64_t peer)
{
	const struct orphan_tx *other = NULL;
	for (uint32_t i = 0; i < o->n; i++) {
		const struct orphan_tx *e = &o->v[i];
		bool spends = false;
		for (uint32_t k = 0; k < e->n_in && !spends; k++)
			spends = proto_hash_eq(&e->prevouts[k].txid, txid);
		if (!spends)
			continue;
		for (uint32_t a = 0; a < e->n_ann; a++) {
			if (e->announcers[a] == peer)
				return e;
		}
		if (!other)
			other = e;
	}
	return other;
}

bool txpackage_try_1p1c(struct daemon *d, uint64_t peer, const uint8_t *raw, size_t len,
                        const struct proto_hash *txid)
{
	const struct orphan_tx *child = find_child(&d->txr->orphans, txid, peer);
	if (!child)
		return false;
	struct pkg_job *pj = xcalloc(1, sizeof(*pj));
	if (!pj)
		return false;
	pj->raw[0] = xmalloc(len ? len : 1);
	pj->raw[1] = xmalloc(child->len ? child->len : 1);
	if (!pj->raw[0] || !pj->raw[1]) {
		pkg_job_free(pj);
		return false;
	}
	memcpy(pj->raw[0], raw, len);
	memcpy(pj->raw[1], child->raw, child->len);
	pj->len[0] = len;
	pj->len[1] = child->len;
	pj->peer = peer;
	pj->child_wtxid = child->wtxid;
	pj->job.work = pkg_work;
	pj->job.done = pkg_done;
	if (validation_post(d, &pj->job)) {
		pkg_job_free(pj);
		return false;
	}
	return true;
}
