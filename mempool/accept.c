/*
 * mempool/accept.c: Core 29's MemPoolAccept for one transaction, the
 * flow: PreChecks, then the rules that read the pool (rules.c: limits,
 * TRUC, ReplacementChecks, CheckEphemeralSpends), PolicyScriptChecks,
 * ConsensusScriptChecks, Finalize, with Core's reject reasons and debug
 * strings, in Core's order. testmempoolaccept's package form is package.c's.
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

static void ws_release(struct mp_ws *w)
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

/* ---- the view ------------------------------------------------------------- */

static int arena_put(struct mp_ws *w, const uint8_t *p, size_t n, size_t *off)
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
static int fetch_coins(struct mp_ws *w, bool *missing)
{
	struct proto_tx *tx = w->tx;
	*missing = false;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_outpoint *op = &tx->vin[j].prevout;
		struct chain_coin *pc = &w->prev[j];
		w->off[j] = SIZE_MAX;
		struct mempool_entry *e = mp_find_txid(w->mp, &op->txid);
		if (e) {
			if (op->n >= e->tx.n_out) {
				*missing = true;
				pc->script = NULL;
				continue;
			}
			const struct proto_txout *o = &e->tx.vout[op->n];
			pc->value = o->value;
			pc->height = MEMPOOL_HEIGHT;
			pc->coinbase = false;
			pc->script = proto_txout_script(&e->tx, o);
			pc->script_len = o->script_len;
			w->heights[j] = w->tip->height + 1;
			if (mp_refs_add_unique(&w->parents, e))
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
			pc->height = MEMPOOL_HEIGHT;
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
static int note_missing(struct mp_ws *w, struct mempool_accept_result *r)
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

/* ---- PreChecks ------------------------------------------------------------- */

static int prechecks(struct mp_ws *w, struct mempool_accept_result *r)
{
	struct mempool *mp = w->mp;
	struct proto_tx *tx = w->tx;
	const struct mempool_policy *pol = &mp->policy;
	struct chain_state *st = w->st;
	int err;

	int terr = script_check_transaction(tx);
	if (terr == SCRIPT_TX_ENOMEM)
		return CHAIN_ENOMEM;
	if (terr)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, script_tx_reason(terr), NULL);
	if (proto_tx_is_coinbase(tx))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "coinbase", NULL);
	if (pol->require_standard && (err = mempool_policy_check_standard(tx, pol, st)))
		return err;
	if ((err = mempool_policy_check_nonwitness_size(tx, st)))
		return err;
	if (!chain_tx_is_final(tx, w->tip->height + 1, chain_node_mtp(w->tip)))
		return chain_reject(st, CHAIN_RESULT_TX_PREMATURE_SPEND, "non-final", NULL);

	struct mempool_entry *same = mp_find_wtxid(mp, &tx->wtxid);
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
		struct mempool_entry *s = mp_spender(mp, &tx->vin[j].prevout);
		if (!s)
			continue;
		if (!w->a->allow_replacement)
			return chain_reject(st, CHAIN_RESULT_TX_MEMPOOL_POLICY,
			                    "bip125-replacement-disallowed", NULL);
		if ((err = mp_refs_add_unique(&w->conflicts, s)))
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
	if (pol->require_standard && (err = mempool_policy_check_inputs(tx, w->prev, st)))
		return err;
	if (tx->has_witness && pol->require_standard &&
	    (err = mempool_policy_check_witness(tx, w->prev, st)))
		return err;

	w->sigops = chain_tx_sigop_cost(tx, w->prev, SCRIPT_VERIFY_STANDARD);
	w->mfee = mempool_fee_add(w->fee, mp_delta_of(mp, &tx->txid));
	w->vsize = mempool_policy_vsize(proto_tx_weight(tx), w->sigops, pol->bytes_per_sigop);
	r->fee_known = true;
	r->fee = w->fee;
	r->vsize = w->vsize;
	r->effective_feerate = mp_feerate_of(w->mfee, w->vsize);

	if (pol->require_standard &&
	    (err = mempool_policy_check_ephemeral(tx, w->fee, w->mfee, pol, st)))
		return err;
	if ((err = mempool_policy_check_sigops(w->sigops, st)))
		return err;
	if (!w->a->bypass_limits) {
		int64_t want = mempool_feerate_fee(pol->min_relay_feerate, w->vsize);
		/* TRUC transactions may go below it (in a package); they meet
		 * CheckFeeRate's same check below as reconsiderable instead. */
		if (tx->version != MEMPOOL_TRUC_VERSION && w->mfee < want)
			return chain_reject(st, CHAIN_RESULT_TX_MEMPOOL_POLICY,
			                    "min relay fee not met", "%lld < %lld",
			                    (long long)w->mfee, (long long)want);
		/* In a package the package's feerate is checked instead. */
		int64_t floor = mempool_feerate_fee(mp_min_fee(mp), w->vsize);
		if (!w->a->package_feerates && floor > 0 && w->mfee < floor)
			return chain_reject(st, CHAIN_RESULT_TX_RECONSIDERABLE,
			                    "mempool min fee not met", "%lld < %lld",
			                    (long long)w->mfee, (long long)floor);
		if (!w->a->package_feerates &&
		    (err = mempool_policy_check_min_relay_fee(w->mfee, w->vsize, pol, st)))
			return err;
	}

	if ((err = mp_check_limits(w)))
		return err;
	if ((err = mp_truc_checks(w)))
		return err;
	/* A tx spending what it would replace contradicts itself. */
	for (uint32_t i = 0; i < w->ancestors.n; i++) {
		if (mp_refs_has(&w->conflicts, w->ancestors.v[i])) {
			char ah[65];
			proto_hash_to_hex(&w->ancestors.v[i]->tx.txid, ah);
			return chain_reject(st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-spends-conflicting-tx",
			                    "%s spends conflicting transaction %s", w->hex, ah);
		}
	}
	return 0;
}

/* ---- scripts ------------------------------------------------------------------ */

static int script_checks(struct mp_ws *w)
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

static int finalize(struct mp_ws *w, struct mempool_accept_result *r)
{
	struct mempool *mp = w->mp;
	struct mempool_entry *e = xcalloc(1, sizeof(*e));
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
	/* package.c's calls, and only they, add without the trim. */
	e->in_package = w->a->no_trim;
	/* Core gives re-added block transactions sequence 0 so they sort
	 * before children already in the pool. */
	e->sequence = w->a->bypass_limits ? 0 : mp->sequence;
	if (w->all_conflicts.n)
		mp_remove_set(mp, &w->all_conflicts, MEMPOOL_REMOVED_REPLACED, false);
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

int mp_accept(struct mempool *mp, struct proto_tx *tx, const struct mp_args *a,
              struct mempool_accept_result *r)
{
	uint64_t t0 = mono_ns();
	mempool_accept_result_release(r);
	proto_tx_compute_ids(tx);
	r->txid = tx->txid;
	r->wtxid = tx->wtxid;
	struct mp_ws w = {
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
	if (a->max_feerate > 0 && mp_feerate_of(w.mfee, w.vsize) > a->max_feerate) {
		err = chain_reject(&r->state, CHAIN_RESULT_TX_MEMPOOL_POLICY,
		                   "max feerate exceeded", NULL);
		goto out;
	}
	if (w.conflicts.n && (err = mp_replacement_checks(&w)))
		goto out;
	if (mp->policy.require_standard && !a->package_feerates && (err = mp_ephemeral_spends(&w)))
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

int mempool_accept(struct mempool *mp, struct proto_tx *tx, const struct mempool_accept_opts *opts,
                   struct mempool_accept_result *r)
{
	struct mempool_accept_opts none = {0};
	if (!opts)
		opts = &none;
	struct mp_args a = {
	    .test_accept = opts->test_accept,
	    .bypass_limits = opts->bypass_limits,
	    .allow_replacement = true,
	    .allow_carveouts = true,
	    .accept_time = opts->accept_time,
	    .how = MEMPOOL_ADDED_ACCEPT,
	};
	return mp_accept(mp, tx, &a, r);
}
