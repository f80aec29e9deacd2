/*
 * mempool/package.c: submitpackage's validation, as Core 29's
 * MemPoolAccept::AcceptPackage and AcceptMultipleTransactions (package
 * feerate, package limits, TRUC's package rules, ephemeral dust over the
 * package), with Core's reasons, in Core's order.
 *
 * The flow: a package is one child with its unconfirmed parents. Each
 * member not in the pool yet is first tried alone (mp_accept, the pool
 * untrimmed); the members that failed only on their feerate, or on inputs
 * an earlier failed member creates, are then judged together. That joint
 * judgement runs in three passes over mp_accept: (A) every member's
 * PreChecks in test mode, earlier members' outputs visible as coins
 * (mp_args.package) but not as pool entries, so each member's own
 * ancestor limits count the pool only, as Core's; then the package rules;
 * (B) every member's scripts, still in test mode; (C) the members enter
 * the pool in order, trusted (their scripts passed in B). Nothing changes
 * the pool before C, so a package rejected anywhere before leaves no
 * trace. The pool is trimmed once at the end.
 *
 * Not here: package RBF (a member conflicting with the pool while judged
 * as a package fails "bip125-replacement-disallowed"; alone it may
 * replace as any transaction).
 */
#include <stdio.h>
#include <string.h>

#include "mempool/internal.h"

static int pkg_fail(struct mempool_package_state *pkg, enum mempool_package_result kind,
                    const char *reason, const char *debug)
{
	pkg->result = kind;
	snprintf(pkg->reason, sizeof(pkg->reason), "%s", reason);
	snprintf(pkg->debug, sizeof(pkg->debug), "%s", debug ? debug : "");
	return 0;
}

/* Move src into dst (dst's arrays freed); src is left as after init. */
static void move_result(struct mempool_accept_result *dst, struct mempool_accept_result *src)
{
	mempool_accept_result_release(dst);
	*dst = *src;
	mempool_accept_result_init(src);
}

/* r's effective feerate becomes `rate` over the wtxids of txs[0..m). */
static int set_effective(struct mempool_accept_result *r, int64_t rate, struct proto_tx *const *txs,
                         size_t m)
{
	struct proto_hash *v = xreallocarray(r->effective_includes, m ? m : 1, sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	for (size_t i = 0; i < m; i++)
		v[i] = txs[i]->wtxid;
	r->effective_includes = v;
	r->n_effective_includes = m;
	r->effective_feerate = rate;
	return 0;
}

/* tx's direct in-pool parents (unique, input order) into out. */
static int pool_parents(struct mempool *mp, const struct proto_tx *tx, struct mp_refs *out)
{
	uint64_t ep = mp_new_epoch(mp);
	for (uint32_t j = 0; j < tx->n_in; j++) {
		struct mempool_entry *e = mp_find_txid(mp, &tx->vin[j].prevout.txid);
		if (!e || e->mark == ep)
			continue;
		e->mark = ep;
		if (mp_refs_push(out, e))
			return CHAIN_ENOMEM;
	}
	return 0;
}

/* Every in-pool ancestor of tx (its pool parents and theirs) into out. */
static int pool_ancestors(struct mempool *mp, const struct proto_tx *tx, struct mp_refs *out)
{
	struct mp_refs parents = {0};
	int err = pool_parents(mp, tx, &parents);
	uint64_t ep = mp_new_epoch(mp);
	for (uint32_t i = 0; !err && i < parents.n; i++) {
		struct mempool_entry *p = parents.v[i];
		if (p->mark == ep)
			continue;
		p->mark = ep;
		if ((err = mp_refs_push(out, p)))
			break;
		/* mp_collect_ancestors marks p again with ep: harmless. */
		err = mp_collect_ancestors(p, ep, out);
	}
	mp_refs_release(&parents);
	return err;
}

static bool spends_txid(const struct proto_tx *tx, const struct proto_hash *txid)
{
	for (uint32_t j = 0; j < tx->n_in; j++) {
		if (proto_hash_eq(&tx->vin[j].prevout.txid, txid))
			return true;
	}
	return false;
}

/* ---- TRUC over a package (policy/truc_policy.cpp PackageTRUCChecks) ------- */

/*
 * txs[i] against its in-pool ancestors and the other members. 0, 1 with
 * msg set on a violation, or CHAIN_ENOMEM.
 */
static int truc_package_one(struct mempool *mp, struct proto_tx *const *txs, size_t m, size_t i,
                            int64_t vsize, char *msg, size_t cap)
{
	const struct proto_tx *tx = txs[i];
	struct mp_refs anc = {0};
	int ret = pool_ancestors(mp, tx, &anc);
	if (ret)
		goto out;
	size_t pkg_parents[MEMPOOL_MAX_PACKAGE_COUNT];
	size_t n_pp = 0;
	for (size_t k = 0; k < i; k++) {
		if (spends_txid(tx, &txs[k]->txid))
			pkg_parents[n_pp++] = k;
	}
	char h[65], w[65], ph[65], pw[65];
	proto_hash_to_hex(&tx->txid, h);
	proto_hash_to_hex(&tx->wtxid, w);
	if (tx->version != MEMPOOL_TRUC_VERSION) {
		/* Non-TRUC transactions cannot have TRUC parents. */
		for (uint32_t a = 0; a < anc.n; a++) {
			if (anc.v[a]->tx.version != MEMPOOL_TRUC_VERSION)
				continue;
			proto_hash_to_hex(&anc.v[a]->tx.txid, ph);
			proto_hash_to_hex(&anc.v[a]->tx.wtxid, pw);
			snprintf(msg, cap,
			         "non-version=3 tx %s (wtxid=%s) cannot spend from version=3 tx %s "
			         "(wtxid=%s)",
			         h, w, ph, pw);
			ret = 1;
			goto out;
		}
		for (size_t k = 0; k < n_pp; k++) {
			const struct proto_tx *p = txs[pkg_parents[k]];
			if (p->version != MEMPOOL_TRUC_VERSION)
				continue;
			proto_hash_to_hex(&p->txid, ph);
			proto_hash_to_hex(&p->wtxid, pw);
			snprintf(msg, cap,
			         "non-version=3 tx %s (wtxid=%s) cannot spend from version=3 tx %s "
			         "(wtxid=%s)",
			         h, w, ph, pw);
			ret = 1;
			goto out;
		}
		goto out;
	}
	if (vsize > MEMPOOL_TRUC_MAX_VSIZE) {
		snprintf(msg, cap, "version=3 tx %s (wtxid=%s) is too big: %lld > %d virtual bytes",
		         h, w, (long long)vsize, MEMPOOL_TRUC_MAX_VSIZE);
		ret = 1;
		goto out;
	}
	if (anc.n + n_pp + 1 > 2) {
		snprintf(msg, cap, "tx %s (wtxid=%s) would have too many ancestors", h, w);
		ret = 1;
		goto out;
	}
	if (anc.n + n_pp == 0)
		goto out;
	if (vsize > MEMPOOL_TRUC_CHILD_MAX_VSIZE) {
		snprintf(msg, cap,
		         "version=3 child tx %s (wtxid=%s) is too big: %lld > %d virtual bytes", h,
		         w, (long long)vsize, MEMPOOL_TRUC_CHILD_MAX_VSIZE);
		ret = 1;
		goto out;
	}
	/* Exactly one parent, in the pool or in the package. */
	const struct proto_tx *parent = anc.n ? &anc.v[0]->tx : txs[pkg_parents[0]];
	bool parent_has_child = anc.n && anc.v[0]->desc_count > 1;
	proto_hash_to_hex(&parent->txid, ph);
	proto_hash_to_hex(&parent->wtxid, pw);
	if (parent->version != MEMPOOL_TRUC_VERSION) {
		snprintf(msg, cap,
		         "version=3 tx %s (wtxid=%s) cannot spend from non-version=3 tx %s "
		         "(wtxid=%s)",
		         h, w, ph, pw);
		ret = 1;
		goto out;
	}
	for (size_t k = 0; k < m; k++) {
		if (k == i)
			continue;
		for (uint32_t j = 0; j < txs[k]->n_in; j++) {
			const struct proto_hash *in = &txs[k]->vin[j].prevout.txid;
			if (proto_hash_eq(in, &parent->txid)) {
				/* A sibling in the same package. */
				snprintf(msg, cap,
				         "tx %s (wtxid=%s) would exceed descendant count limit", ph,
				         pw);
				ret = 1;
				goto out;
			}
			if (proto_hash_eq(in, &tx->txid)) {
				/* A parent and an in-package child too. */
				char kh[65], kw[65];
				proto_hash_to_hex(&txs[k]->txid, kh);
				proto_hash_to_hex(&txs[k]->wtxid, kw);
				snprintf(msg, cap, "tx %s (wtxid=%s) would have too many ancestors",
				         kh, kw);
				ret = 1;
				goto out;
			}
		}
	}
	if (parent_has_child) {
		snprintf(msg, cap, "tx %s (wtxid=%s) would exceed descendant count limit", ph, pw);
		ret = 1;
	}
out:
	mp_refs_release(&anc);
	return ret;
}

/* ---- package limits (Core's CheckPackageLimits) ------------------------------ */

static int package_limits(struct mempool *mp, struct proto_tx *const *txs, size_t m,
                          int64_t total_vsize, char *msg, size_t cap)
{
	const struct mempool_config *cfg = &mp->cfg;
	if (m > cfg->ancestor_count) {
		snprintf(msg, cap, "package count %zu exceeds ancestor count limit [limit: %u]", m,
		         cfg->ancestor_count);
		return 1;
	}
	if (m > cfg->descendant_count) {
		snprintf(msg, cap, "package count %zu exceeds descendant count limit [limit: %u]",
		         m, cfg->descendant_count);
		return 1;
	}
	if (total_vsize > (int64_t)cfg->ancestor_vbytes) {
		snprintf(msg, cap, "package size %lld exceeds ancestor size limit [limit: %u]",
		         (long long)total_vsize, cfg->ancestor_vbytes);
		return 1;
	}
	if (total_vsize > (int64_t)cfg->descendant_vbytes) {
		snprintf(msg, cap, "package size %lld exceeds descendant size limit [limit: %u]",
		         (long long)total_vsize, cfg->descendant_vbytes);
		return 1;
	}
	struct mp_refs parents = {0}, anc = {0};
	int ret = 0;
	for (size_t i = 0; i < m && !ret; i++)
		ret = pool_parents(mp, txs[i], &parents);
	/* pool_parents dedups per tx only: make the set unique. */
	for (uint32_t a = 0; !ret && a < parents.n; a++) {
		for (uint32_t b = a + 1; b < parents.n;) {
			if (parents.v[b] == parents.v[a])
				parents.v[b] = parents.v[--parents.n];
			else
				b++;
		}
	}
	if (!ret) {
		const uint64_t lim[4] = {cfg->ancestor_count, cfg->ancestor_vbytes,
		                         cfg->descendant_count, cfg->descendant_vbytes};
		char inner[CHAIN_DEBUG_MAX - 16];
		ret = mp_calc_ancestors(mp, &parents, (uint64_t)total_vsize, m, lim, &anc, inner,
		                        sizeof(inner));
		/* Core sums every member's ancestry as one: it may overestimate,
		 * and says so, except for its own direct-parent count. */
		if (ret == 1)
			snprintf(msg, cap, "%s%s",
			         strncmp(inner, "too many unconfirmed parents", 28) ? "possibly "
			                                                            : "",
			         inner);
	}
	mp_refs_release(&parents);
	mp_refs_release(&anc);
	return ret;
}

/* ---- ephemeral dust over a package (Core's CheckEphemeralSpends) ----------- */

/* The first member leaving a parent's dust unspent, or m when none. */
static size_t unspent_dust(struct mempool *mp, struct proto_tx *const *txs, size_t m)
{
	int64_t rate = mp->policy.dust_relay_feerate;
	for (size_t i = 0; i < m; i++) {
		const struct proto_tx *tx = txs[i];
		for (uint32_t j = 0; j < tx->n_in; j++) {
			const struct proto_hash *ph = &tx->vin[j].prevout.txid;
			struct proto_tx *parent = NULL;
			for (size_t k = 0; k < m && !parent; k++) {
				if (proto_hash_eq(&txs[k]->txid, ph))
					parent = txs[k];
			}
			if (!parent) {
				struct mempool_entry *e = mp_find_txid(mp, ph);
				parent = e ? &e->tx : NULL;
			}
			if (!parent)
				continue;
			uint32_t idx[8];
			uint32_t nd = mempool_policy_dust_outputs(parent, rate, idx, 8);
			for (uint32_t d = 0; d < nd && d < 8; d++) {
				bool spent = false;
				for (uint32_t q = 0; q < tx->n_in && !spent; q++)
					spent = tx->vin[q].prevout.n == idx[d] &&
					        proto_hash_eq(&tx->vin[q].prevout.txid, ph);
				if (!spent)
					return i;
			}
		}
	}
	return m;
}

/* ---- several transactions as one (AcceptMultipleTransactions) --------------- */

/*
 * Judge txs[0..m) (m >= 2, sorted, a child and parents) as a package and,
 * when it passes, add them. res[i] (initialised) get verdicts where Core
 * gives one (`validated`); pkg the package verdict. 0 or a fatal error.
 */
static int accept_multiple(struct mempool *mp, struct proto_tx *const *txs, size_t m,
                           const struct mempool_package_opts *o, struct mempool_accept_result *res,
                           struct mempool_package_state *pkg)
{
	int64_t vsize[MEMPOOL_MAX_PACKAGE_COUNT];
	int64_t total_fee = 0, total_vsize = 0;
	char msg[CHAIN_DEBUG_MAX];
	int err;
	/* (A) PreChecks of each, earlier members' outputs visible. */
	for (size_t i = 0; i < m; i++) {
		struct mp_args a = {
		    .test_accept = true,
		    .trusted = true,
		    .no_trim = true,
		    .package_feerates = true,
		    .max_feerate = o->max_feerate,
		    .package = txs,
		    .n_package = i,
		    .accept_time = o->accept_time,
		    .how = MEMPOOL_ADDED_ACCEPT,
		};
		if ((err = mp_accept(mp, txs[i], &a, &res[i])))
			return err;
		if (!res[i].accepted) {
			res[i].validated = true;
			return pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
		}
		vsize[i] = res[i].vsize;
		total_vsize += res[i].vsize;
		total_fee = mempool_fee_add(
		    total_fee, mempool_fee_add(res[i].fee, mp_delta_of(mp, &txs[i]->txid)));
	}
	for (size_t i = 0; i < m; i++)
		res[i].accepted = false; /* judged so far, not accepted */
	/* TRUC's rules over the package. */
	for (size_t i = 0; i < m; i++) {
		int r = truc_package_one(mp, txs, m, i, vsize[i], msg, sizeof(msg));
		if (r < 0)
			return r;
		if (r)
			return pkg_fail(pkg, MEMPOOL_PACKAGE_POLICY, "TRUC-violation", msg);
	}
	/* The package feerate against the mempool minimum and the min relay fee. */
	int64_t rate = mp_feerate_of(total_fee, total_vsize);
	{
		struct mempool_accept_result *last = &res[m - 1];
		struct chain_state *st = &last->state;
		int64_t floor = mempool_feerate_fee(mp_min_fee(mp), total_vsize);
		int bad = 0;
		if (floor > 0 && total_fee < floor)
			bad = chain_reject(st, CHAIN_RESULT_TX_RECONSIDERABLE,
			                   "mempool min fee not met", "%lld < %lld",
			                   (long long)total_fee, (long long)floor);
		else
			bad = mempool_policy_check_min_relay_fee(total_fee, total_vsize,
			                                         &mp->policy, st);
		if (bad) {
			last->validated = true;
			if ((err = set_effective(last, rate, txs, m)))
				return err;
			return pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
		}
	}
	/* Ancestor and descendant limits of the package as one. */
	int r = package_limits(mp, txs, m, total_vsize, msg, sizeof(msg));
	if (r < 0)
		return r;
	if (r)
		return pkg_fail(pkg, MEMPOOL_PACKAGE_POLICY, "package-mempool-limits", msg);
	/* Every parent's ephemeral dust spent within the package. */
	if (mp->policy.require_standard) {
		size_t bad = unspent_dust(mp, txs, m);
		if (bad < m) {
			char h[65], w[65];
			proto_hash_to_hex(&txs[bad]->txid, h);
			proto_hash_to_hex(&txs[bad]->wtxid, w);
			res[bad].validated = true;
			int rc = chain_reject(
			    &res[bad].state, CHAIN_RESULT_TX_MEMPOOL_POLICY,
			    "missing-ephemeral-spends",
			    "tx %s (wtxid=%s) did not spend parent's ephemeral dust", h, w);
			(void)rc; /* always CHAIN_EINVALID: the verdict is in the state */
			return pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "unspent-dust", NULL);
		}
	}
	/* (B) Scripts, member by member. */
	for (size_t i = 0; i < m; i++) {
		struct mp_args a = {
		    .test_accept = true,
		    .no_trim = true,
		    .package_feerates = true,
		    .max_feerate = o->max_feerate,
		    .package = txs,
		    .n_package = i,
		    .accept_time = o->accept_time,
		    .how = MEMPOOL_ADDED_ACCEPT,
		};
		if ((err = mp_accept(mp, txs[i], &a, &res[i])))
			return err;
		if (!res[i].accepted) {
			for (size_t k = 0; k < m; k++)
				res[k].validated = k == i;
			return pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
		}
	}
	/* (C) Into the pool, in order; the pool is trimmed by the caller. */
	for (size_t i = 0; i < m; i++) {
		struct mp_args a = {
		    .trusted = true,
		    .no_trim = true,
		    .package_feerates = true,
		    .accept_time = o->accept_time,
		    .how = MEMPOOL_ADDED_ACCEPT,
		};
		if ((err = mp_accept(mp, txs[i], &a, &res[i])))
			return err;
		if (!res[i].accepted) {
			/* The passes above said yes: the pool disagrees with itself. */
			for (size_t k = i; k-- > 0;) {
				struct mempool_entry *e = mp_find_wtxid(mp, &txs[k]->wtxid);
				if (e)
					mp_remove_recursive(mp, e, MEMPOOL_REMOVED_REPLACED);
			}
			for (size_t k = 0; k < m; k++)
				res[k].validated = false;
			return pkg_fail(pkg, MEMPOOL_PACKAGE_MEMPOOL_ERROR,
			                "package-submission-failed", res[i].state.reason);
		}
		res[i].validated = true;
		if ((err = set_effective(&res[i], rate, txs, m)))
			return err;
	}
	return 0;
}

/* ---- submitpackage (AcceptPackage) ------------------------------------------- */

/* Core's IsChildWithParents: every member but the last is an input of the last. */
static bool child_with_parents(struct proto_tx *const *txs, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (!spends_txid(txs[n - 1], &txs[i]->txid))
			return false;
	}
	return true;
}

/* Every input of the child is a package parent or a confirmed coin. */
static int parents_unconfirmed(struct chain *c, struct proto_tx *const *txs, size_t n, bool *ok)
{
	const struct proto_tx *child = txs[n - 1];
	*ok = true;
	for (uint32_t j = 0; j < child->n_in && *ok; j++) {
		const struct proto_outpoint *op = &child->vin[j].prevout;
		bool in_package = false;
		for (size_t i = 0; i + 1 < n && !in_package; i++)
			in_package = proto_hash_eq(&txs[i]->txid, &op->txid);
		if (in_package)
			continue;
		bool cached = chain_coins_in_cache(chain_get_coins(c), op);
		struct chain_coin coin;
		int err = chain_coins_get(chain_get_coins(c), op, &coin);
		if (err == CHAIN_ENOTFOUND)
			*ok = false;
		else if (err)
			return err;
		/* A look-up for a package that may never enter: forget it again. */
		if (!cached)
			chain_coins_uncache(chain_get_coins(c), op);
	}
	return 0;
}

int mempool_submit_package(struct mempool *mp, struct proto_tx *const *txs, size_t n,
                           const struct mempool_package_opts *opts,
                           struct mempool_accept_result *results, struct mempool_package_state *pkg)
{
	struct mempool_package_opts none = {0};
	const struct mempool_package_opts *o = opts ? opts : &none;
	memset(pkg, 0, sizeof(*pkg));
	for (size_t i = 0; i < n; i++) {
		mempool_accept_result_release(&results[i]);
		proto_tx_compute_ids(txs[i]);
		results[i].txid = txs[i]->txid;
		results[i].wtxid = txs[i]->wtxid;
	}
	if (n == 0 || !mp_package_well_formed(txs, n, pkg))
		return 0;
	int err;
	if (n > 1) {
		if (!child_with_parents(txs, n))
			return pkg_fail(pkg, MEMPOOL_PACKAGE_POLICY,
			                "package-not-child-with-parents", NULL);
		bool ok;
		if ((err = parents_unconfirmed(mp->c, txs, n, &ok)))
			return err;
		if (!ok)
			return pkg_fail(pkg, MEMPOOL_PACKAGE_POLICY,
			                "package-not-child-with-unconfirmed-parents", NULL);
	}
	/* Each member alone first (Core's SingleInPackageAccept). */
	struct proto_tx *eval[MEMPOOL_MAX_PACKAGE_COUNT];
	size_t eval_idx[MEMPOOL_MAX_PACKAGE_COUNT];
	size_t n_eval = 0;
	bool quit_early = false;
	for (size_t i = 0; i < n; i++) {
		struct mempool_accept_result *r = &results[i];
		r->validated = true;
		struct mempool_entry *e = mp_find_wtxid(mp, &txs[i]->wtxid);
		if (e) {
			r->accepted = r->already_in_mempool = r->fee_known = true;
			r->vsize = e->vsize;
			r->fee = e->fee;
			continue;
		}
		e = mp_find_txid(mp, &txs[i]->txid);
		if (e) {
			/* The same txid with another witness: the pool's stands. */
			r->accepted = r->already_in_mempool = true;
			r->has_other_wtxid = true;
			r->other_wtxid = e->tx.wtxid;
			continue;
		}
		struct mp_args a = {
		    .allow_replacement = true,
		    .no_trim = true,
		    .max_feerate = o->max_feerate,
		    .accept_time = o->accept_time,
		    .how = MEMPOOL_ADDED_ACCEPT,
		};
		if ((err = mp_accept(mp, txs[i], &a, r)))
			return err;
		r->validated = true; /* mp_accept starts from a released result */
		if (r->accepted)
			continue;
		enum chain_result why = r->state.result;
		if (n == 1 || (why != CHAIN_RESULT_TX_RECONSIDERABLE &&
		               why != CHAIN_RESULT_TX_MISSING_INPUTS)) {
			/* Judging it with the others would not change the verdict. */
			quit_early = true;
			pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
		} else {
			eval_idx[n_eval] = i;
			eval[n_eval++] = txs[i];
		}
	}
	/* The rest together (Core's AcceptSubPackage). */
	if (!quit_early && n_eval == 1) {
		size_t i = eval_idx[0];
		struct mp_args a = {
		    .allow_replacement = true,
		    .no_trim = true,
		    .max_feerate = o->max_feerate,
		    .accept_time = o->accept_time,
		    .how = MEMPOOL_ADDED_ACCEPT,
		};
		if ((err = mp_accept(mp, txs[i], &a, &results[i])))
			return err;
		results[i].validated = true;
		if (!results[i].accepted)
			pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
	} else if (!quit_early && n_eval > 1) {
		struct mempool_accept_result sub[MEMPOOL_MAX_PACKAGE_COUNT];
		for (size_t k = 0; k < n_eval; k++) {
			mempool_accept_result_init(&sub[k]);
			sub[k].txid = eval[k]->txid;
			sub[k].wtxid = eval[k]->wtxid;
		}
		err = accept_multiple(mp, eval, n_eval, o, sub, pkg);
		for (size_t k = 0; k < n_eval; k++) {
			/* A member the joint judgement gave no verdict keeps its own. */
			if (!err && sub[k].validated)
				move_result(&results[eval_idx[k]], &sub[k]);
			mempool_accept_result_release(&sub[k]);
		}
		if (err)
			return err;
	}
	/* Core's LimitMempoolSize, once for the package. */
	mp_limit(mp);
	for (size_t i = 0; i < n; i++) {
		struct mempool_accept_result *r = &results[i];
		if (!r->validated || !r->accepted)
			continue;
		bool there = r->already_in_mempool ? mp_find_txid(mp, &txs[i]->txid) != NULL
		                                   : mp_find_wtxid(mp, &txs[i]->wtxid) != NULL;
		if (there)
			continue;
		mempool_accept_result_release(r);
		r->txid = txs[i]->txid;
		r->wtxid = txs[i]->wtxid;
		r->validated = true;
		int rc =
		    chain_reject(&r->state, CHAIN_RESULT_TX_MEMPOOL_POLICY, "mempool full", NULL);
		(void)rc; /* always CHAIN_EINVALID: the verdict is in the state */
		pkg_fail(pkg, MEMPOOL_PACKAGE_TX, "transaction failed", NULL);
	}
	return 0;
}

/* ---- packages (testmempoolaccept with several) ------------------------------------ */

static int package_reject(struct mempool_package_state *pkg, const char *reason)
{
	pkg->result = MEMPOOL_PACKAGE_POLICY;
	snprintf(pkg->reason, sizeof(pkg->reason), "%s", reason);
	return 0;
}

/* Core's IsWellFormedPackage with require_sorted. true when well formed. */
bool mp_package_well_formed(struct proto_tx *const *txs, size_t n,
                            struct mempool_package_state *pkg)
{
	if (n > MEMPOOL_MAX_PACKAGE_COUNT)
		return package_reject(pkg, "package-too-many-transactions"), false;
	uint64_t weight = 0;
	for (size_t i = 0; i < n; i++)
		weight += proto_tx_weight(txs[i]);
	if (n > 1 && weight > MEMPOOL_MAX_PACKAGE_WEIGHT)
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

int mempool_test_package(struct mempool *mp, struct proto_tx *const *txs, size_t n,
                         struct mempool_accept_result *results, struct mempool_package_state *pkg)
{
	memset(pkg, 0, sizeof(*pkg));
	for (size_t i = 0; i < n; i++) {
		mempool_accept_result_release(&results[i]);
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
	struct mempool_stats stats = mp->stats;
	mp->quiet = true;
	int err = 0;
	size_t added = 0;
	for (size_t i = 0; i < n; i++) {
		struct mp_args a = {.no_trim = true, .how = MEMPOOL_ADDED_ACCEPT};
		err = mp_accept(mp, txs[i], &a, &results[i]);
		if (err)
			break;
		if (!results[i].accepted) {
			for (size_t k = 0; k < i; k++)
				results[k].validated = false;
			results[i].validated = true;
			pkg->result = MEMPOOL_PACKAGE_TX;
			snprintf(pkg->reason, sizeof(pkg->reason), "transaction failed");
			break;
		}
		results[i].validated = true;
		added = i + 1;
	}
	for (size_t i = added; i-- > 0;) {
		struct mempool_entry *e = mp_find_wtxid(mp, &txs[i]->wtxid);
		if (e)
			mp_remove_recursive(mp, e, MEMPOOL_REMOVED_REPLACED);
	}
	mp->quiet = quiet;
	mp->sequence = seq;
	mp->stats = stats;
	return err;
}
