/*
 * mempool/rules.c: the acceptance rules that read the pool, each one of
 * Core 29's checks with its reasons and debug strings: the ancestor and
 * descendant limits with the CPFP carve-out (CalculateMemPoolAncestors),
 * TRUC (policy/truc_policy.cpp SingleTRUCChecks), replacement
 * (policy/rbf.cpp) and ephemeral spends (policy/ephemeral_policy.cpp
 * CheckEphemeralSpends). accept.c's flow calls them in Core's order on
 * one acceptance's workspace (struct mp_ws); the pure rules that need no
 * pool are policy.c's.
 */
#include <stdio.h>
#include <string.h>

#include "mempool/internal.h"

/* Core's CFeeRate::ToString: "0.00001000 BTC/kvB". */
static void format_feerate(int64_t sat_per_kvb, char out[48])
{
	snprintf(out, 48, "%lld.%08lld BTC/kvB", (long long)(sat_per_kvb / 100000000),
	         (long long)(sat_per_kvb % 100000000));
}

/* ---- ancestor and descendant limits --------------------------------------- */

struct limits {
	uint64_t anc_count, anc_size, desc_count, desc_size;
};

int mp_calc_ancestors(struct mempool *mp, const struct mp_refs *parents, uint64_t vsize,
                      uint64_t count, const uint64_t lim[4], struct mp_refs *out, char *msg,
                      size_t cap)
{
	/* The staged set is walked in txid order (Core's set ordering), so
	 * the limit reported first is Core's. */
	struct mp_refs staged = {0};
	out->n = 0;
	uint64_t in_anc = mp_new_epoch(mp);
	uint64_t in_staged = mp_new_epoch(mp);
	int ret = 0;
	for (uint32_t i = 0; i < parents->n; i++) {
		parents->v[i]->mark = in_staged;
		if (mp_refs_push(&staged, parents->v[i])) {
			ret = CHAIN_ENOMEM;
			goto out;
		}
		if (staged.n + count > lim[0]) {
			snprintf(msg, cap, "too many unconfirmed parents [limit: %llu]",
			         (unsigned long long)lim[0]);
			ret = 1;
			goto out;
		}
	}
	uint64_t total = vsize;
	while (staged.n) {
		uint32_t best = 0;
		for (uint32_t i = 1; i < staged.n; i++) {
			if (memcmp(staged.v[i]->tx.txid.b, staged.v[best]->tx.txid.b, 32) < 0)
				best = i;
		}
		struct mempool_entry *s = staged.v[best];
		staged.v[best] = staged.v[--staged.n];
		s->mark = in_anc;
		if (mp_refs_push(out, s)) {
			ret = CHAIN_ENOMEM;
			goto out;
		}
		total += (uint64_t)s->vsize;
		char hex[65];
		if (s->desc_size + vsize > lim[3]) {
			proto_hash_to_hex(&s->tx.txid, hex);
			snprintf(msg, cap, "exceeds descendant size limit for tx %s [limit: %llu]",
			         hex, (unsigned long long)lim[3]);
			ret = 1;
			goto out;
		} else if (s->desc_count + count > lim[2]) {
			proto_hash_to_hex(&s->tx.txid, hex);
			snprintf(msg, cap, "too many descendants for tx %s [limit: %llu]", hex,
			         (unsigned long long)lim[2]);
			ret = 1;
			goto out;
		} else if (total > lim[1]) {
			snprintf(msg, cap, "exceeds ancestor size limit [limit: %llu]",
			         (unsigned long long)lim[1]);
			ret = 1;
			goto out;
		}
		for (uint32_t k = 0; k < s->parents.n; k++) {
			struct mempool_entry *p = s->parents.v[k];
			if (p->mark != in_anc && p->mark != in_staged) {
				p->mark = in_staged;
				if (mp_refs_push(&staged, p)) {
					ret = CHAIN_ENOMEM;
					goto out;
				}
			}
			if (staged.n + out->n + count > lim[0]) {
				snprintf(msg, cap, "too many unconfirmed ancestors [limit: %llu]",
				         (unsigned long long)lim[0]);
				ret = 1;
				goto out;
			}
		}
	}
out:
	mp_refs_release(&staged);
	return ret;
}

/* Core's CalculateMemPoolAncestors for the new tx. */
static int calc_ancestors(struct mp_ws *w, const struct limits *lim, char *msg, size_t cap)
{
	uint64_t l[4] = {lim->anc_count, lim->anc_size, lim->desc_count, lim->desc_size};
	return mp_calc_ancestors(w->mp, &w->parents, (uint64_t)w->vsize, 1, l, &w->ancestors, msg,
	                         cap);
}

int mp_check_limits(struct mp_ws *w)
{
	struct mempool *mp = w->mp;
	struct limits lim = {
	    .anc_count = mp->cfg.ancestor_count,
	    .anc_size = mp->cfg.ancestor_vbytes,
	    .desc_count = mp->cfg.descendant_count,
	    .desc_size = mp->cfg.descendant_vbytes,
	};
	/* One direct conflict: its descendants are about to go, so count
	 * the limits as if they had (Core's RBF allowance). */
	if (w->conflicts.n == 1 && w->a->allow_carveouts) {
		lim.desc_count += 1;
		lim.desc_size += w->conflicts.v[0]->desc_size;
	}
	char msg[CHAIN_DEBUG_MAX];
	int r = calc_ancestors(w, &lim, msg, sizeof(msg));
	if (r <= 0)
		return r;
	/* The CPFP carve-out: a small tx with a single ancestor may be one
	 * more descendant than the limit allows. */
	if (!w->a->allow_carveouts || w->vsize > MEMPOOL_CARVEOUT_VBYTES ||
	    w->tx->version == MEMPOOL_TRUC_VERSION)
		return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "too-long-mempool-chain",
		                    "%s", msg);
	struct limits carve = {
	    .anc_count = 2,
	    .anc_size = lim.anc_size,
	    .desc_count = lim.desc_count + 1,
	    .desc_size = lim.desc_size + MEMPOOL_CARVEOUT_VBYTES,
	};
	char msg2[CHAIN_DEBUG_MAX];
	r = calc_ancestors(w, &carve, msg2, sizeof(msg2));
	if (r <= 0)
		return r;
	return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "too-long-mempool-chain", "%s",
	                    msg);
}

/* ---- TRUC (policy/truc_policy.cpp SingleTRUCChecks) ----------------------- */

int mp_truc_checks(struct mp_ws *w)
{
	struct proto_tx *tx = w->tx;
	char wt[65], ph[65], pw[65];
	proto_hash_to_hex(&tx->wtxid, wt);
	bool truc = tx->version == MEMPOOL_TRUC_VERSION;
	for (uint32_t i = 0; i < w->ancestors.n; i++) {
		struct mempool_entry *a = w->ancestors.v[i];
		bool a_truc = a->tx.version == MEMPOOL_TRUC_VERSION;
		if (truc == a_truc)
			continue;
		proto_hash_to_hex(&a->tx.txid, ph);
		proto_hash_to_hex(&a->tx.wtxid, pw);
		return chain_reject(
		    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		    truc ? "version=3 tx %s (wtxid=%s) cannot spend from non-version=3 "
		           "tx %s (wtxid=%s)"
		         : "non-version=3 tx %s (wtxid=%s) cannot spend from "
		           "version=3 tx %s (wtxid=%s)",
		    w->hex, wt, ph, pw);
	}
	if (!truc)
		return 0;
	if (w->vsize > MEMPOOL_TRUC_MAX_VSIZE)
		return chain_reject(
		    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		    "version=3 tx %s (wtxid=%s) is too big: %lld > %d virtual bytes", w->hex, wt,
		    (long long)w->vsize, MEMPOOL_TRUC_MAX_VSIZE);
	if (w->ancestors.n + 1 > 2)
		return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		                    "tx %s (wtxid=%s) would have too many ancestors", w->hex, wt);
	if (w->ancestors.n == 0)
		return 0;
	if (w->vsize > MEMPOOL_TRUC_CHILD_MAX_VSIZE)
		return chain_reject(
		    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		    "version=3 child tx %s (wtxid=%s) is too big: %lld > %d virtual "
		    "bytes",
		    w->hex, wt, (long long)w->vsize, MEMPOOL_TRUC_CHILD_MAX_VSIZE);
	struct mempool_entry *parent = w->ancestors.v[0];
	bool child_replaced = false;
	for (uint32_t k = 0; k < parent->children.n && !child_replaced; k++)
		child_replaced = mp_refs_has(&w->conflicts, parent->children.v[k]);
	if (parent->desc_count + 1 > 2 && !child_replaced) {
		struct mempool_entry *sibling = NULL;
		if (parent->desc_count == 2 && parent->children.n == 1 &&
		    parent->children.v[0]->anc_count == 2)
			sibling = parent->children.v[0];
		if (sibling && w->a->allow_replacement) {
			/* Sibling eviction: judge replacing it by the RBF rules. */
			if (mp_refs_push(&w->conflicts, sibling))
				return CHAIN_ENOMEM;
			w->sibling_eviction = true;
			return 0;
		}
		proto_hash_to_hex(&parent->tx.txid, ph);
		proto_hash_to_hex(&parent->tx.wtxid, pw);
		return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		                    "tx %s (wtxid=%s) would exceed descendant count limit", ph, pw);
	}
	return 0;
}

/* ---- replacement (policy/rbf.cpp) -------------------------------------------- */

int mp_replacement_checks(struct mp_ws *w)
{
	struct mempool *mp = w->mp;
	struct chain_state *st = w->st;
	const char *sib = w->sibling_eviction ? " (including sibling eviction)" : "";
	char reason[64];
	int64_t new_rate = mp_feerate_of(w->mfee, w->vsize);
	/* Rule 6: a higher feerate than every direct conflict. */
	for (uint32_t i = 0; i < w->conflicts.n; i++) {
		struct mempool_entry *e = w->conflicts.v[i];
		int64_t old_rate = mp_feerate_of(e->modified_fee, e->vsize);
		if (new_rate <= old_rate) {
			char a[48], b[48];
			format_feerate(new_rate, a);
			format_feerate(old_rate, b);
			snprintf(reason, sizeof(reason), "insufficient fee%s", sib);
			return chain_reject(
			    st, CHAIN_RESULT_TX_RECONSIDERABLE, reason,
			    "rejecting replacement %s; new feerate %s <= old feerate %s", w->hex, a,
			    b);
		}
	}
	/* Rule 5: not too many evicted. */
	uint64_t count = 0;
	for (uint32_t i = 0; i < w->conflicts.n; i++)
		count += w->conflicts.v[i]->desc_count;
	if (count > MEMPOOL_MAX_REPLACEMENTS) {
		snprintf(reason, sizeof(reason), "too many potential replacements%s", sib);
		return chain_reject(
		    st, CHAIN_RESULT_TX_MEMPOOL_POLICY, reason,
		    "rejecting replacement %s; too many potential replacements (%llu > "
		    "%u)",
		    w->hex, (unsigned long long)count, MEMPOOL_MAX_REPLACEMENTS);
	}
	uint64_t ep = mp_new_epoch(mp);
	w->all_conflicts.n = 0;
	for (uint32_t i = 0; i < w->conflicts.n; i++) {
		int err = mp_collect_descendants(mp, w->conflicts.v[i], ep, &w->all_conflicts);
		if (err)
			return err;
	}
	/* Rule 2: no new unconfirmed inputs but the conflicts' own parents. */
	struct proto_tx *tx = w->tx;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_hash *ph = &tx->vin[j].prevout.txid;
		bool theirs = false;
		for (uint32_t i = 0; i < w->conflicts.n && !theirs; i++) {
			const struct proto_tx *ct = &w->conflicts.v[i]->tx;
			for (uint32_t k = 0; k < ct->n_in && !theirs; k++)
				theirs = proto_hash_eq(&ct->vin[k].prevout.txid, ph);
		}
		if (!theirs && mp_find_txid(mp, ph)) {
			snprintf(reason, sizeof(reason), "replacement-adds-unconfirmed%s", sib);
			return chain_reject(st, CHAIN_RESULT_TX_MEMPOOL_POLICY, reason,
			                    "replacement %s adds unconfirmed input, idx %u", w->hex,
			                    j);
		}
	}
	/* Rules 3 and 4: more fees than everything evicted, plus its own relay. */
	w->conflicting_fees = 0;
	w->conflicting_size = 0;
	for (uint32_t i = 0; i < w->all_conflicts.n; i++) {
		w->conflicting_fees += w->all_conflicts.v[i]->modified_fee;
		w->conflicting_size += w->all_conflicts.v[i]->vsize;
	}
	char a[PROTO_MONEY_STRLEN], b[PROTO_MONEY_STRLEN];
	snprintf(reason, sizeof(reason), "insufficient fee%s", sib);
	if (w->mfee < w->conflicting_fees) {
		proto_format_money(w->mfee, a);
		proto_format_money(w->conflicting_fees, b);
		return chain_reject(
		    st, CHAIN_RESULT_TX_RECONSIDERABLE, reason,
		    "rejecting replacement %s, less fees than conflicting txs; %s < %s", w->hex, a,
		    b);
	}
	int64_t extra = w->mfee - w->conflicting_fees;
	int64_t relay = mempool_feerate_fee(mp->policy.incremental_relay_feerate, w->vsize);
	if (extra < relay) {
		proto_format_money(extra, a);
		proto_format_money(relay, b);
		return chain_reject(
		    st, CHAIN_RESULT_TX_RECONSIDERABLE, reason,
		    "rejecting replacement %s, not enough additional fees to relay; %s "
		    "< %s",
		    w->hex, a, b);
	}
	return 0;
}

/* ---- ephemeral dust (policy/ephemeral_policy.cpp CheckEphemeralSpends) ----- */

int mp_ephemeral_spends(struct mp_ws *w)
{
	struct proto_tx *tx = w->tx;
	int64_t rate = w->mp->policy.dust_relay_feerate;
	for (uint32_t i = 0; i < w->parents.n; i++) {
		struct mempool_entry *p = w->parents.v[i];
		uint32_t idx[8];
		uint32_t n = mempool_policy_dust_outputs(&p->tx, rate, idx, 8);
		for (uint32_t d = 0; d < n && d < 8; d++) {
			bool spent = false;
			for (uint32_t j = 0; j < tx->n_in && !spent; j++)
				spent = tx->vin[j].prevout.n == idx[d] &&
				        proto_hash_eq(&tx->vin[j].prevout.txid, &p->tx.txid);
			if (!spent) {
				char wt[65];
				proto_hash_to_hex(&tx->wtxid, wt);
				return chain_reject(
				    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY,
				    "missing-ephemeral-spends",
				    "tx %s (wtxid=%s) did not spend parent's ephemeral dust",
				    w->hex, wt);
			}
		}
	}
	return 0;
}
