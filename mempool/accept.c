/*
 * chain/mempool_accept.c: Core 29's MemPoolAccept for one transaction
 * (PreChecks, ReplacementChecks, CheckEphemeralSpends, PolicyScriptChecks,
 * ConsensusScriptChecks, Finalize) and testmempoolaccept's package form,
 * with Core's reject reasons and debug strings, in Core's order.
 *
 * Coins come from a view of the mempool over the coins cache: an output of
 * a mempool transaction shadows the chain (it is not in the UTXO set yet),
 * and a coin a mempool transaction spends is still visible here: spending
 * it again is a conflict, which replacement may resolve, not a missing
 * input (Core's CCoinsViewMemPool). Scripts are checked on the chain's
 * check queue, one job per input.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mempool/internal.h"

/* Core's STANDARD_NOT_MANDATORY_VERIFY_FLAGS. */
#define MP_NOT_MANDATORY (SCRIPT_VERIFY_STANDARD & ~SCRIPT_VERIFY_CONSENSUS)

/* The work of one acceptance (Core's Workspace). */
struct ws {
	struct chain_mempool *mp;
	struct chain *c;
	struct proto_tx *tx;
	const struct mp_args *a;
	struct chain_state *st;
	struct chain_node *tip;
	struct chain_coin *prev; /* n_in */
	size_t *off;             /* script offset into arena, SIZE_MAX: points elsewhere */
	int32_t *heights;        /* n_in */
	/* coins this accept read into the cache (Core's coins_to_uncache),
	 * forgotten again on a reject */
	struct proto_outpoint *uncache;
	size_t n_uncache;
	uint8_t *arena; /* scripts of coins from the cache */
	size_t arena_len, arena_cap;
	struct mp_refs parents;       /* direct in-pool parents, unique */
	struct mp_refs conflicts;     /* direct conflicts, unique */
	struct mp_refs all_conflicts; /* conflicts and their descendants */
	struct mp_refs ancestors;
	int64_t fee, mfee, vsize, conflicting_fees, conflicting_size;
	uint32_t sigops;
	bool spends_coinbase, sibling_eviction;
	char hex[65]; /* txid */
};

static void ws_release(struct ws *w)
{
	xfree(w->prev);
	xfree(w->off);
	xfree(w->heights);
	xfree(w->uncache);
	xfree(w->arena);
	mp_refs_release(&w->parents);
	mp_refs_release(&w->conflicts);
	mp_refs_release(&w->all_conflicts);
	mp_refs_release(&w->ancestors);
}

static bool refs_has(const struct mp_refs *r, const struct chain_mempool_entry *e)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->v[i] == e)
			return true;
	}
	return false;
}

static int refs_add_unique(struct mp_refs *r, struct chain_mempool_entry *e)
{
	return refs_has(r, e) ? 0 : mp_refs_push(r, e);
}

/* Core's FormatMoney: at least two decimals, trailing zeros trimmed. */
static void format_money(int64_t v, char out[32])
{
	uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
	int n =
	    snprintf(out, 32, "%s%llu.%08llu", v < 0 ? "-" : "",
	             (unsigned long long)(a / 100000000u), (unsigned long long)(a % 100000000u));
	while (n > 0 && out[n - 1] == '0' && out[n - 3] != '.')
		out[--n] = 0;
}

/* Core's CFeeRate::ToString: "0.00001000 BTC/kvB". */
static void format_feerate(int64_t sat_per_kvb, char out[48])
{
	snprintf(out, 48, "%lld.%08lld BTC/kvB", (long long)(sat_per_kvb / 100000000),
	         (long long)(sat_per_kvb % 100000000));
}

static int64_t feerate_of(int64_t fee, int64_t vsize)
{
	return vsize > 0 ? fee * 1000 / vsize : 0;
}

/* ---- the view ------------------------------------------------------------- */

static int arena_put(struct ws *w, const uint8_t *p, size_t n, size_t *off)
{
	if (w->arena_cap - w->arena_len < n) {
		size_t cap = w->arena_cap ? w->arena_cap : 1024;
		while (cap - w->arena_len < n)
			cap *= 2;
		uint8_t *a = xrealloc(w->arena, cap);
		if (!a)
			return CHAIN_ENOMEM;
		w->arena = a;
		w->arena_cap = cap;
	}
	if (n)
		memcpy(w->arena + w->arena_len, p, n);
	*off = w->arena_len;
	w->arena_len += n;
	return 0;
}

/* The earlier package transaction with this txid, or NULL. */
static const struct proto_tx *package_tx(const struct mp_args *a, const struct proto_hash *txid)
{
	for (size_t i = 0; i < a->n_package; i++) {
		if (proto_hash_eq(&a->package[i]->txid, txid))
			return a->package[i];
	}
	return NULL;
}

/*
 * Fetch every input's coin: a mempool transaction's output first, then
 * an earlier package transaction's, then the coins cache. *missing says whether some input has
 * none.
 */
static int fetch_coins(struct ws *w, bool *missing)
{
	struct proto_tx *tx = w->tx;
	*missing = false;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_outpoint *op = &tx->vin[j].prevout;
		struct chain_coin *pc = &w->prev[j];
		w->off[j] = SIZE_MAX;
		struct chain_mempool_entry *e = mp_find_txid(w->mp, &op->txid);
		if (e) {
			if (op->n >= e->tx.n_out) {
				*missing = true;
				pc->script = NULL;
				continue;
			}
			const struct proto_txout *o = &e->tx.vout[op->n];
			pc->value = o->value;
			pc->height = CHAIN_MEMPOOL_HEIGHT;
			pc->coinbase = false;
			pc->script = proto_txout_script(&e->tx, o);
			pc->script_len = o->script_len;
			w->heights[j] = w->tip->height + 1;
			if (refs_add_unique(&w->parents, e))
				return CHAIN_ENOMEM;
			continue;
		}
		const struct proto_tx *pt = package_tx(w->a, &op->txid);
		if (pt) {
			if (op->n >= pt->n_out) {
				*missing = true;
				pc->script = NULL;
				continue;
			}
			const struct proto_txout *o = &pt->vout[op->n];
			pc->value = o->value;
			pc->height = CHAIN_MEMPOOL_HEIGHT;
			pc->coinbase = false;
			pc->script = proto_txout_script(pt, o);
			pc->script_len = o->script_len;
			w->heights[j] = w->tip->height + 1;
			continue;
		}
		struct chain_coin coin;
		if (!chain_coins_in_cache(chain_get_coins(w->c), op))
			w->uncache[w->n_uncache++] = *op;
		int err = chain_coins_get(chain_get_coins(w->c), op, &coin);
		if (err == CHAIN_ENOTFOUND) {
			*missing = true;
			pc->script = NULL;
			continue;
		}
		if (err)
			return err;
		*pc = coin;
		pc->script = NULL;
		if ((err = arena_put(w, coin.script, coin.script_len, &w->off[j])))
			return err;
		w->heights[j] = (int32_t)coin.height;
		if (coin.coinbase)
			w->spends_coinbase = true;
	}
	/* The arena has stopped moving: point the scripts into it. */
	for (uint32_t j = 0; j < tx->n_in; j++) {
		if (w->off[j] != SIZE_MAX)
			w->prev[j].script = w->arena + w->off[j];
	}
	return 0;
}

/* The txids of the missing parents, unique, for the orphanage. */
static int note_missing(struct ws *w, struct chain_accept_result *r)
{
	struct proto_tx *tx = w->tx;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		if (w->prev[j].script)
			continue;
		const struct proto_hash *h = &tx->vin[j].prevout.txid;
		bool seen = false;
		for (size_t k = 0; k < r->n_missing_parents && !seen; k++)
			seen = proto_hash_eq(&r->missing_parents[k], h);
		if (seen)
			continue;
		struct proto_hash *v =
		    xreallocarray(r->missing_parents, r->n_missing_parents + 1, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		r->missing_parents = v;
		v[r->n_missing_parents++] = *h;
	}
	return 0;
}

/* ---- ancestor and descendant limits --------------------------------------- */

struct limits {
	uint64_t anc_count, anc_size, desc_count, desc_size;
};

int mp_calc_ancestors(struct chain_mempool *mp, const struct mp_refs *parents, uint64_t vsize,
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
		struct chain_mempool_entry *s = staged.v[best];
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
			struct chain_mempool_entry *p = s->parents.v[k];
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
static int calc_ancestors(struct ws *w, const struct limits *lim, char *msg, size_t cap)
{
	uint64_t l[4] = {lim->anc_count, lim->anc_size, lim->desc_count, lim->desc_size};
	return mp_calc_ancestors(w->mp, &w->parents, (uint64_t)w->vsize, 1, l, &w->ancestors, msg,
	                         cap);
}

static int check_limits(struct ws *w)
{
	struct chain_mempool *mp = w->mp;
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
	if (!w->a->allow_carveouts || w->vsize > CHAIN_MEMPOOL_CARVEOUT_VBYTES ||
	    w->tx->version == CHAIN_TRUC_VERSION)
		return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "too-long-mempool-chain",
		                    "%s", msg);
	struct limits carve = {
	    .anc_count = 2,
	    .anc_size = lim.anc_size,
	    .desc_count = lim.desc_count + 1,
	    .desc_size = lim.desc_size + CHAIN_MEMPOOL_CARVEOUT_VBYTES,
	};
	char msg2[CHAIN_DEBUG_MAX];
	r = calc_ancestors(w, &carve, msg2, sizeof(msg2));
	if (r <= 0)
		return r;
	return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "too-long-mempool-chain", "%s",
	                    msg);
}

/* ---- TRUC (policy/truc_policy.cpp SingleTRUCChecks) ----------------------- */

static int truc_checks(struct ws *w)
{
	struct proto_tx *tx = w->tx;
	char wt[65], ph[65], pw[65];
	proto_hash_to_hex(&tx->wtxid, wt);
	bool truc = tx->version == CHAIN_TRUC_VERSION;
	for (uint32_t i = 0; i < w->ancestors.n; i++) {
		struct chain_mempool_entry *a = w->ancestors.v[i];
		bool a_truc = a->tx.version == CHAIN_TRUC_VERSION;
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
	if (w->vsize > CHAIN_TRUC_MAX_VSIZE)
		return chain_reject(
		    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		    "version=3 tx %s (wtxid=%s) is too big: %lld > %d virtual bytes", w->hex, wt,
		    (long long)w->vsize, CHAIN_TRUC_MAX_VSIZE);
	if (w->ancestors.n + 1 > 2)
		return chain_reject(w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		                    "tx %s (wtxid=%s) would have too many ancestors", w->hex, wt);
	if (w->ancestors.n == 0)
		return 0;
	if (w->vsize > CHAIN_TRUC_CHILD_MAX_VSIZE)
		return chain_reject(
		    w->st, CHAIN_RESULT_TX_MEMPOOL_POLICY, "TRUC-violation",
		    "version=3 child tx %s (wtxid=%s) is too big: %lld > %d virtual "
		    "bytes",
		    w->hex, wt, (long long)w->vsize, CHAIN_TRUC_CHILD_MAX_VSIZE);
	struct chain_mempool_entry *parent = w->ancestors.v[0];
	bool child_replaced = false;
	for (uint32_t k = 0; k < parent->children.n && !child_replaced; k++)
		child_replaced = refs_has(&w->conflicts, parent->children.v[k]);
	if (parent->desc_count + 1 > 2 && !child_replaced) {
		struct chain_mempool_entry *sibling = NULL;
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

/* ---- PreChecks ------------------------------------------------------------- */

static int prechecks(struct ws *w, struct chain_accept_result *r)
{
	struct chain_mempool *mp = w->mp;
	struct proto_tx *tx = w->tx;
	const struct chain_policy *pol = &mp->policy;
	struct chain_state *st = w->st;
	int err;

	int terr = script_check_transaction(tx);
	if (terr == SCRIPT_TX_ENOMEM)
		return CHAIN_ENOMEM;
	if (terr)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, script_tx_reason(terr), NULL);
	if (proto_tx_is_coinbase(tx))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "coinbase", NULL);
	if (pol->require_standard && (err = chain_policy_check_standard(tx, pol, st)))
		return err;
	if ((err = chain_policy_check_nonwitness_size(tx, st)))
		return err;
	if (!chain_tx_is_final(tx, w->tip->height + 1, chain_node_mtp(w->tip)))
		return chain_reject(st, CHAIN_RESULT_TX_PREMATURE_SPEND, "non-final", NULL);

	struct chain_mempool_entry *same = mp_find_wtxid(mp, &tx->wtxid);
	if (same) {
		r->already_in_mempool = true;
		return chain_reject(st, CHAIN_RESULT_TX_CONFLICT, "txn-already-in-mempool", NULL);
	}
	same = mp_find_txid(mp, &tx->txid);
	if (same) {
		r->has_other_wtxid = true;
		r->other_wtxid = same->tx.wtxid;
		return chain_reject(st, CHAIN_RESULT_TX_CONFLICT,
		                    "txn-same-nonwitness-data-in-mempool", NULL);
	}
	for (uint32_t j = 0; j < tx->n_in; j++) {
		struct chain_mempool_entry *s = mp_spender(mp, &tx->vin[j].prevout);
		if (!s)
			continue;
		if (!w->a->allow_replacement)
			return chain_reject(st, CHAIN_RESULT_TX_MEMPOOL_POLICY,
			                    "bip125-replacement-disallowed", NULL);
		if ((err = refs_add_unique(&w->conflicts, s)))
			return err;
	}

	bool missing;
	if ((err = fetch_coins(w, &missing)))
		return err;
	if (missing) {
		/* Are the inputs missing because the tx is already confirmed?
		 * Core looks in the cache only (HaveCoinInCache): optimistic
		 * and cheap, no database read for a stranger's txid. */
		struct proto_outpoint op = {.txid = tx->txid};
		for (op.n = 0; op.n < tx->n_out; op.n++) {
			struct chain_coin coin;
			if (!chain_coins_in_cache(chain_get_coins(w->c), &op))
				continue;
			err = chain_coins_get(chain_get_coins(w->c), &op, &coin);
			if (err == 0)
				return chain_reject(st, CHAIN_RESULT_TX_CONFLICT,
				                    "txn-already-known", NULL);
			if (err != CHAIN_ENOTFOUND)
				return err;
		}
		if ((err = note_missing(w, r)))
			return err;
		return chain_reject(st, CHAIN_RESULT_TX_MISSING_INPUTS,
		                    "bad-txns-inputs-missingorspent", NULL);
	}

	/* The mempool always enforces BIP68 for the next block. */
	if (!chain_tx_sequence_locks_ok(tx, true, w->heights, w->tip))
		return chain_reject(st, CHAIN_RESULT_TX_PREMATURE_SPEND, "non-BIP68-final", NULL);

	if ((err = chain_check_tx_input_values(tx, w->prev, w->tip->height + 1, &w->fee, st))) {
		if (err == CHAIN_EINVALID && st &&
		    !strcmp(st->reason, "bad-txns-premature-spend-of-coinbase"))
			st->result = CHAIN_RESULT_TX_PREMATURE_SPEND;
		return err;
	}
	if (pol->require_standard && (err = chain_policy_check_inputs(tx, w->prev, st)))
		return err;
	if (tx->has_witness && pol->require_standard &&
	    (err = chain_policy_check_witness(tx, w->prev, st)))
		return err;

	w->sigops = chain_tx_sigop_cost(tx, w->prev, SCRIPT_VERIFY_STANDARD);
	w->mfee = mp_fee_add(w->fee, mp_delta_of(mp, &tx->txid));
	w->vsize = chain_policy_vsize(proto_tx_weight(tx), w->sigops, pol->bytes_per_sigop);
	r->fee_known = true;
	r->fee = w->fee;
	r->vsize = w->vsize;
	r->effective_feerate = feerate_of(w->mfee, w->vsize);

	if (pol->require_standard &&
	    (err = chain_policy_check_ephemeral(tx, w->fee, w->mfee, pol, st)))
		return err;
	if ((err = chain_policy_check_sigops(w->sigops, st)))
		return err;
	if (!w->a->bypass_limits) {
		int64_t want = chain_feerate_fee(pol->min_relay_feerate, w->vsize);
		/* TRUC transactions may go below it (in a package); they meet
		 * CheckFeeRate's same check below as reconsiderable instead. */
		if (tx->version != CHAIN_TRUC_VERSION && w->mfee < want)
			return chain_reject(st, CHAIN_RESULT_TX_MEMPOOL_POLICY,
			                    "min relay fee not met", "%lld < %lld",
			                    (long long)w->mfee, (long long)want);
		/* In a package the package's feerate is checked instead. */
		int64_t floor = chain_feerate_fee(mp_min_fee(mp), w->vsize);
		if (!w->a->package_feerates && floor > 0 && w->mfee < floor)
			return chain_reject(st, CHAIN_RESULT_TX_RECONSIDERABLE,
			                    "mempool min fee not met", "%lld < %lld",
			                    (long long)w->mfee, (long long)floor);
		if (!w->a->package_feerates &&
		    (err = chain_policy_check_min_relay_fee(w->mfee, w->vsize, pol, st)))
			return err;
	}

	if ((err = check_limits(w)))
		return err;
	if ((err = truc_checks(w)))
		return err;
	/* A tx spending what it would replace contradicts itself. */
	for (uint32_t i = 0; i < w->ancestors.n; i++) {
		if (refs_has(&w->conflicts, w->ancestors.v[i])) {
			char ah[65];
			proto_hash_to_hex(&w->ancestors.v[i]->tx.txid, ah);
			return chain_reject(st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-spends-conflicting-tx",
			                    "%s spends conflicting transaction %s", w->hex, ah);
		}
	}
	return 0;
}

/* ---- replacement (policy/rbf.cpp) -------------------------------------------- */

static int replacement_checks(struct ws *w)
{
	struct chain_mempool *mp = w->mp;
	struct chain_state *st = w->st;
	const char *sib = w->sibling_eviction ? " (including sibling eviction)" : "";
	char reason[64];
	int64_t new_rate = feerate_of(w->mfee, w->vsize);
	/* Rule 6: a higher feerate than every direct conflict. */
	for (uint32_t i = 0; i < w->conflicts.n; i++) {
		struct chain_mempool_entry *e = w->conflicts.v[i];
		int64_t old_rate = feerate_of(e->modified_fee, e->vsize);
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
	if (count > CHAIN_MEMPOOL_MAX_REPLACEMENTS) {
		snprintf(reason, sizeof(reason), "too many potential replacements%s", sib);
		return chain_reject(
		    st, CHAIN_RESULT_TX_MEMPOOL_POLICY, reason,
		    "rejecting replacement %s; too many potential replacements (%llu > "
		    "%u)",
		    w->hex, (unsigned long long)count, CHAIN_MEMPOOL_MAX_REPLACEMENTS);
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
	char a[32], b[32];
	snprintf(reason, sizeof(reason), "insufficient fee%s", sib);
	if (w->mfee < w->conflicting_fees) {
		format_money(w->mfee, a);
		format_money(w->conflicting_fees, b);
		return chain_reject(
		    st, CHAIN_RESULT_TX_RECONSIDERABLE, reason,
		    "rejecting replacement %s, less fees than conflicting txs; %s < %s", w->hex, a,
		    b);
	}
	int64_t extra = w->mfee - w->conflicting_fees;
	int64_t relay = chain_feerate_fee(mp->policy.incremental_relay_feerate, w->vsize);
	if (extra < relay) {
		format_money(extra, a);
		format_money(relay, b);
		return chain_reject(
		    st, CHAIN_RESULT_TX_RECONSIDERABLE, reason,
		    "rejecting replacement %s, not enough additional fees to relay; %s "
		    "< %s",
		    w->hex, a, b);
	}
	return 0;
}

/* ---- ephemeral dust (policy/ephemeral_policy.cpp CheckEphemeralSpends) ----- */

static int ephemeral_spends(struct ws *w)
{
	struct proto_tx *tx = w->tx;
	int64_t rate = w->mp->policy.dust_relay_feerate;
	for (uint32_t i = 0; i < w->parents.n; i++) {
		struct chain_mempool_entry *p = w->parents.v[i];
		uint32_t idx[8];
		uint32_t n = chain_policy_dust_outputs(&p->tx, rate, idx, 8);
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

/* ---- scripts ------------------------------------------------------------------ */

static int script_checks(struct ws *w)
{
	struct proto_tx *tx = w->tx;
	struct chain_checker *ck = chain_get_checker(w->c);
	int err = 0;
	struct script_spent_output *spent = xcalloc(tx->n_in ? tx->n_in : 1, sizeof(*spent));
	struct script_precomputed *pre = xmalloc(sizeof(*pre));
	if (!spent || !pre) {
		err = CHAIN_ENOMEM;
		goto out;
	}
	for (uint32_t j = 0; j < tx->n_in; j++) {
		spent[j].amount = w->prev[j].value;
		spent[j].script = w->prev[j].script;
		spent[j].script_len = w->prev[j].script_len;
	}
	bool failed;
	uint32_t bad;
	int serr;
	/* PolicyScriptChecks: the standard flags, every input a job. */
	if ((err = chain_checker_verify_tx(ck, tx, spent, pre, SCRIPT_VERIFY_STANDARD, &failed,
	                                   &bad, &serr)))
		goto out;
	if (failed) {
		char reason[CHAIN_REASON_MAX];
		int e2 = SCRIPT_ERR_OK;
		enum chain_result kind = CHAIN_RESULT_CONSENSUS;
		if (script_verify_input(tx, bad, &spent[bad],
		                        SCRIPT_VERIFY_STANDARD & ~MP_NOT_MANDATORY, pre,
		                        &e2) == 0) {
			snprintf(reason, sizeof(reason), "non-mandatory-script-verify-flag (%s)",
			         script_error_core_string(serr));
			kind = CHAIN_RESULT_TX_NOT_STANDARD;
		} else {
			/* Core (v29.99) names the consensus run's error, not the
			 * standard run's (NULLFAIL hides a plain false). */
			snprintf(reason, sizeof(reason), CHAIN_SCRIPT_REASON_PREFIX "%s)",
			         script_error_core_string(e2 ? e2 : serr));
		}
		/* Only the witness missing: the tx itself may be fine (Core's
		 * TX_WITNESS_STRIPPED, so a peer is not blamed for a strip). */
		if (!tx->has_witness) {
			bool f1, f2;
			uint32_t b1, b2;
			int s1, s2;
			uint32_t nowit = SCRIPT_VERIFY_STANDARD &
			                 ~(SCRIPT_VERIFY_WITNESS | SCRIPT_VERIFY_CLEANSTACK);
			if ((err =
			         chain_checker_verify_tx(ck, tx, spent, pre, nowit, &f1, &b1, &s1)))
				goto out;
			if (!f1) {
				if ((err = chain_checker_verify_tx(ck, tx, spent, pre,
				                                   SCRIPT_VERIFY_STANDARD &
				                                       ~SCRIPT_VERIFY_CLEANSTACK,
				                                   &f2, &b2, &s2)))
					goto out;
				if (f2)
					kind = CHAIN_RESULT_TX_WITNESS_STRIPPED;
			}
		}
		char wt[65], ph[65];
		proto_hash_to_hex(&tx->wtxid, wt);
		proto_hash_to_hex(&tx->vin[bad].prevout.txid, ph);
		err = chain_reject(w->st, kind, reason, "input %u of %s (wtxid %s), spending %s:%u",
		                   bad, w->hex, wt, ph, tx->vin[bad].prevout.n);
		goto out;
	}
	/* ConsensusScriptChecks: the tip's block flags, which is what the
	 * script cache remembers for ConnectBlock. */
	uint32_t flags =
	    chain_block_script_flags(chain_params(w->c), &w->tip->hash, w->tip->height);
	struct chain_script_cache *sc = chain_checker_script_cache(ck);
	if (sc && chain_script_cache_has(sc, &tx->wtxid, flags, false, false))
		goto out;
	if ((err = chain_checker_verify_tx(ck, tx, spent, pre, flags, &failed, &bad, &serr)))
		goto out;
	if (failed) {
		char reason[CHAIN_REASON_MAX];
		snprintf(reason, sizeof(reason), CHAIN_SCRIPT_REASON_PREFIX "%s)",
		         script_error_core_string(serr));
		chain_logf(
		    w->c, CHAIN_LOG_ERROR,
		    "BUG! PLEASE REPORT THIS! CheckInputScripts failed against latest-block but "
		    "not STANDARD flags %s, %s",
		    w->hex, reason);
		err = chain_reject(w->st, CHAIN_RESULT_CONSENSUS, reason, NULL);
		goto out;
	}
	if (sc)
		chain_script_cache_add(sc, &tx->wtxid, flags);
out:
	xfree(spent);
	xfree(pre);
	return err;
}

/* ---- one transaction ------------------------------------------------------------ */

static int push_hash(struct proto_hash **v, size_t *n, const struct proto_hash *h)
{
	struct proto_hash *a = xreallocarray(*v, *n + 1, sizeof(*a));
	if (!a)
		return CHAIN_ENOMEM;
	a[(*n)++] = *h;
	*v = a;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int finalize(struct ws *w, struct chain_accept_result *r)
{
	struct chain_mempool *mp = w->mp;
	struct chain_mempool_entry *e = xcalloc(1, sizeof(*e));
	if (!e)
		return CHAIN_ENOMEM;
	proto_tx_init(&e->tx);
	int err = mp_tx_copy(&e->tx, w->tx);
	if (err) {
		proto_tx_release(&e->tx);
		xfree(e);
		return err;
	}
	e->fee = w->fee;
	e->modified_fee = w->mfee;
	e->time = w->a->accept_time ? w->a->accept_time : chain_now(w->c);
	e->vsize = w->vsize;
	e->sigop_cost = w->sigops;
	e->weight = proto_tx_weight(w->tx);
	e->height = w->tip->height;
	e->spends_coinbase = w->spends_coinbase;
	/* Core gives re-added block transactions sequence 0 so they sort
	 * before children already in the pool. */
	e->sequence = w->a->bypass_limits ? 0 : mp->sequence;
	if (w->all_conflicts.n)
		mp_remove_set(mp, &w->all_conflicts, CHAIN_MEMPOOL_REMOVED_REPLACED, false);
	if ((err = mp_add_entry(mp, e, &w->parents, w->a->how))) {
		proto_tx_release(&e->tx);
		mp_refs_release(&e->parents);
		mp_refs_release(&e->children);
		xfree(e);
		return err;
	}
	r->accepted = true;
	if (!w->a->bypass_limits && !w->a->no_trim) {
		mp_limit(mp);
		if (!mp_find_txid(mp, &r->txid)) {
			r->accepted = false;
			return chain_reject(w->st, CHAIN_RESULT_TX_RECONSIDERABLE, "mempool full",
			                    NULL);
		}
	}
	return 0;
}

int mp_accept(struct chain_mempool *mp, struct proto_tx *tx, const struct mp_args *a,
              struct chain_accept_result *r)
{
	uint64_t t0 = mono_ns();
	chain_accept_result_release(r);
	proto_tx_compute_ids(tx);
	r->txid = tx->txid;
	r->wtxid = tx->wtxid;
	struct ws w = {
	    .mp = mp,
	    .c = mp->c,
	    .tx = tx,
	    .a = a,
	    .st = &r->state,
	    .tip = chain_tip(mp->c),
	};
	proto_hash_to_hex(&tx->txid, w.hex);
	int err = 0;
	size_t n = tx->n_in ? tx->n_in : 1;
	w.prev = xcalloc(n, sizeof(*w.prev));
	w.off = xcalloc(n, sizeof(*w.off));
	w.heights = xcalloc(n, sizeof(*w.heights));
	w.uncache = xcalloc(n, sizeof(*w.uncache));
	if (!w.prev || !w.off || !w.heights || !w.uncache) {
		err = CHAIN_ENOMEM;
		goto out;
	}
	if ((err = prechecks(&w, r)))
		goto out;
	/* The caller's ceiling (submitpackage's maxfeerate), on the tx alone. */
	if (a->max_feerate > 0 && feerate_of(w.mfee, w.vsize) > a->max_feerate) {
		err = chain_reject(&r->state, CHAIN_RESULT_TX_MEMPOOL_POLICY,
		                   "max feerate exceeded", NULL);
		goto out;
	}
	if (w.conflicts.n && (err = replacement_checks(&w)))
		goto out;
	if (mp->policy.require_standard && !a->package_feerates && (err = ephemeral_spends(&w)))
		goto out;
	if (!a->trusted && (err = script_checks(&w)))
		goto out;
	if ((err = push_hash(&r->effective_includes, &r->n_effective_includes, &tx->wtxid)))
		goto out;
	for (uint32_t i = 0; i < w.all_conflicts.n; i++) {
		if ((err = push_hash(&r->replaced_txids, &r->n_replaced,
		                     &w.all_conflicts.v[i]->tx.txid)))
			goto out;
		r->n_replaced--;
		if ((err = push_hash(&r->replaced_wtxids, &r->n_replaced,
		                     &w.all_conflicts.v[i]->tx.wtxid)))
			goto out;
	}
	if (a->test_accept) {
		r->accepted = true;
		goto out;
	}
	err = finalize(&w, r);
out:
	if (err || !r->accepted) {
		for (size_t i = 0; i < w.n_uncache; i++)
			chain_coins_uncache(chain_get_coins(w.c), &w.uncache[i]);
	}
	ws_release(&w);
	if (err == CHAIN_EINVALID) {
		err = 0;
		r->accepted = false;
		mp->stats.rejected++;
	} else if (!err && r->accepted && !a->test_accept) {
		mp->stats.accepted++;
	}
	mp->stats.accept_ns += mono_ns() - t0;
	return err;
}

int chain_mempool_accept(struct chain *c, struct proto_tx *tx, const struct chain_accept_opts *opts,
                         struct chain_accept_result *r)
{
	struct chain_accept_opts none = {0};
	if (!opts)
		opts = &none;
	struct mp_args a = {
	    .test_accept = opts->test_accept,
	    .bypass_limits = opts->bypass_limits,
	    .allow_replacement = true,
	    .allow_carveouts = true,
	    .accept_time = opts->accept_time,
	    .how = CHAIN_MEMPOOL_ADDED_ACCEPT,
	};
	return mp_accept(mp_of(c), tx, &a, r);
}

/* ---- packages (testmempoolaccept with several) ------------------------------------ */

static int package_reject(struct chain_package_state *pkg, const char *reason)
{
	pkg->result = CHAIN_PACKAGE_POLICY;
	snprintf(pkg->reason, sizeof(pkg->reason), "%s", reason);
	return 0;
}

/* Core's IsWellFormedPackage with require_sorted. true when well formed. */
bool mp_package_well_formed(struct proto_tx *const *txs, size_t n, struct chain_package_state *pkg)
{
	if (n > CHAIN_MEMPOOL_MAX_PACKAGE_COUNT)
		return package_reject(pkg, "package-too-many-transactions"), false;
	uint64_t weight = 0;
	for (size_t i = 0; i < n; i++)
		weight += proto_tx_weight(txs[i]);
	if (n > 1 && weight > CHAIN_MEMPOOL_MAX_PACKAGE_WEIGHT)
		return package_reject(pkg, "package-too-large"), false;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = i + 1; k < n; k++) {
			if (proto_hash_eq(proto_tx_txid(txs[i]), proto_tx_txid(txs[k])))
				return package_reject(pkg, "package-contains-duplicates"), false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < txs[i]->n_in; j++) {
			for (size_t k = i + 1; k < n; k++) {
				if (proto_hash_eq(&txs[i]->vin[j].prevout.txid,
				                  proto_tx_txid(txs[k])))
					return package_reject(pkg, "package-not-sorted"), false;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (txs[i]->n_in == 0)
			return package_reject(pkg, "package-contains-duplicates"), false;
		for (uint32_t j = 0; j < txs[i]->n_in; j++) {
			const struct proto_outpoint *op = &txs[i]->vin[j].prevout;
			for (size_t k = 0; k < i; k++) {
				for (uint32_t m = 0; m < txs[k]->n_in; m++) {
					const struct proto_outpoint *o2 = &txs[k]->vin[m].prevout;
					if (o2->n == op->n && proto_hash_eq(&o2->txid, &op->txid))
						return package_reject(pkg, "conflict-in-package"),
						       false;
				}
			}
		}
	}
	return true;
}

int chain_mempool_test_package(struct chain *c, struct proto_tx *const *txs, size_t n,
                               struct chain_accept_result *results, struct chain_package_state *pkg)
{
	struct chain_mempool *mp = mp_of(c);
	memset(pkg, 0, sizeof(*pkg));
	for (size_t i = 0; i < n; i++) {
		chain_accept_result_release(&results[i]);
		proto_tx_compute_ids(txs[i]);
		results[i].txid = txs[i]->txid;
		results[i].wtxid = txs[i]->wtxid;
	}
	if (!mp_package_well_formed(txs, n, pkg))
		return 0;
	/*
	 * Each transaction is judged against the pool with the earlier ones
	 * in it: they really enter (quietly, untrimmed, no replacement, no
	 * carve-out, as Core's package test-accept), and all leave again at
	 * the end, so the pool, its sequence and its counters are as before.
	 */
	bool quiet = mp->quiet;
	uint64_t seq = mp->sequence;
	struct chain_mempool_stats stats = mp->stats;
	mp->quiet = true;
	int err = 0;
	size_t added = 0;
	for (size_t i = 0; i < n; i++) {
		struct mp_args a = {.no_trim = true, .how = CHAIN_MEMPOOL_ADDED_ACCEPT};
		err = mp_accept(mp, txs[i], &a, &results[i]);
		if (err)
			break;
		if (!results[i].accepted) {
			for (size_t k = 0; k < i; k++)
				results[k].validated = false;
			results[i].validated = true;
			pkg->result = CHAIN_PACKAGE_TX;
			snprintf(pkg->reason, sizeof(pkg->reason), "transaction failed");
			break;
		}
		results[i].validated = true;
		added = i + 1;
	}
	for (size_t i = added; i-- > 0;) {
		struct chain_mempool_entry *e = mp_find_wtxid(mp, &txs[i]->wtxid);
		if (e)
			mp_remove_recursive(mp, e, CHAIN_MEMPOOL_REMOVED_REPLACED);
	}
	mp->quiet = quiet;
	mp->sequence = seq;
	mp->stats = stats;
	return err;
}
