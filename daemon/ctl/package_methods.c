/*
 * daemon/ctl/package_methods.c: submitpackage, as Bitcoin Core 29's
 * (rpc/mempool.cpp): the argument checks and their errors, the topology
 * check (a child with parents that do not spend each other), then
 * mempool_submit_package on the validation thread, and Core's
 * answer: package_msg ("success" or the package state), tx-results keyed
 * by wtxid (txid, other-wtxid or vsize and fees {base, effective-feerate,
 * effective-includes}, or error), replaced-transactions.
 *
 * Relay needs nothing here: what enters the pool is announced by peerd's
 * relay like any accepted transaction (Core's BroadcastTransaction of the
 * package's members).
 */
#include "daemon/ctl/internal.h"

#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"

/* Core's IsChildWithParentsTree: every member but the last is a parent of
 * the last, and no parent spends another. */
static bool child_with_parents_tree(struct proto_tx *txs, size_t n)
{
	const struct proto_tx *child = &txs[n - 1];
	for (size_t i = 0; i + 1 < n; i++) {
		bool parent = false;
		for (uint32_t j = 0; j < child->n_in && !parent; j++)
			parent = proto_hash_eq(&child->vin[j].prevout.txid, &txs[i].txid);
		if (!parent)
			return false;
		for (uint32_t j = 0; j < txs[i].n_in; j++) {
			for (size_t k = 0; k + 1 < n; k++) {
				if (proto_hash_eq(&txs[i].vin[j].prevout.txid, &txs[k].txid))
					return false;
			}
		}
	}
	return true;
}

static json_t *hash_array(const struct proto_hash *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_hash(&v[i]));
	return a;
}

/* One tx-results entry; NULL when Core leaves the member out (no verdict). */
static json_t *tx_result(const struct mempool_accept_result *r)
{
	if (!r->validated)
		return NULL;
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "txid", json_hash(&r->txid));
	if (r->has_other_wtxid) {
		json_object_set_new(o, "other-wtxid", json_hash(&r->other_wtxid));
	} else if (!r->accepted) {
		char why[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 4];
		ctl_state_string(&r->state, why, sizeof(why));
		json_object_set_new(o, "error", json_string(why));
	} else {
		json_object_set_new(o, "vsize", json_integer(r->vsize));
		json_t *fees = json_object();
		if (fees) {
			json_object_set_new(fees, "base", json_amount(r->fee));
			/* Not for a tx already there: whether a package paid for it
			 * when it came is not known (Core's comment). */
			if (!r->already_in_mempool) {
				json_object_set_new(fees, "effective-feerate",
				                    json_amount(r->effective_feerate));
				json_object_set_new(
				    fees, "effective-includes",
				    hash_array(r->effective_includes, r->n_effective_includes));
			}
		}
		json_object_set_new(o, "fees", fees ? fees : json_null());
	}
	return o;
}

void ctl_m_submitpackage(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                         struct ctl_result *res)
{
	(void)c;
	json_t *raws = ctl_arg(args, 0);
	struct ctl_package pk = {0};
	size_t n = 0;
	int64_t maxrate, maxburn;
	json_t *out = NULL;
	if (!ctl_package_count(raws, &n, res))
		return;
	if (!ctl_param_feerate(ctl_arg(args, 1), CTL_DEFAULT_MAX_FEERATE, &maxrate, res))
		return;
	if (!ctl_param_amount(ctl_arg(args, 2), 0, &maxburn, res))
		return;
	if (!ctl_package_alloc(&pk, n, res))
		return;
	struct proto_tx *txs = pk.txs;
	struct mempool_accept_result *rs = pk.rs;
	/* Decode and burn check per member, in order: a burn in the first
	 * member is reported before a bad second one, as Core's loop does. */
	for (size_t i = 0; i < n; i++) {
		if (!ctl_package_decode_tx(json_array_get(raws, i), &txs[i], res) ||
		    !ctl_check_burn(&txs[i], maxburn, res))
			goto out;
	}
	if (n > 1 && !child_with_parents_tree(txs, n)) {
		ctl_fail(res, CTL_VERIFY_ERROR,
		         "package topology disallowed. not child-with-parents or parents depend on "
		         "each other.");
		goto out;
	}
	struct mempool_package_opts opts = {.max_feerate = maxrate};
	struct mempool_package_state pkg;
	int err = mempool_submit_package(x->mempool, pk.ptrs, n, &opts, rs, &pkg);
	if (err) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "%s", chain_strerror(err));
		goto out;
	}
	if (pkg.result == MEMPOOL_PACKAGE_MEMPOOL_ERROR) {
		ctl_fail(res, CTL_VERIFY_ERROR, "%s", pkg.reason);
		goto out;
	}
	char msg[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 4] = "success";
	if (pkg.result != MEMPOOL_PACKAGE_UNSET)
		ctl_package_reason(&pkg, msg, sizeof(msg));
	/* Core keeps the replaced txids in a std::set<Txid>: unique, byte order. */
	size_t cap_rep = 0, n_rep = 0;
	for (size_t i = 0; i < n; i++)
		cap_rep += rs[i].n_replaced;
	out = json_object();
	json_t *map = json_object();
	json_t *replaced = json_array();
	struct proto_hash *rep = xcalloc(cap_rep ? cap_rep : 1, sizeof(*rep));
	if (!out || !map || !replaced || !rep) {
		xfree(rep);
		json_decref(map);
		json_decref(replaced);
		json_decref(out);
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *o = tx_result(&rs[i]);
		if (o) {
			char wt[65];
			proto_hash_to_hex(&txs[i].wtxid, wt);
			json_object_set_new(map, wt, o);
		}
		if (!rs[i].validated || !rs[i].accepted || rs[i].already_in_mempool)
			continue;
		for (size_t k = 0; k < rs[i].n_replaced; k++) {
			size_t p = 0;
			while (p < n_rep && memcmp(rep[p].b, rs[i].replaced_txids[k].b, 32) < 0)
				p++;
			if (p < n_rep && proto_hash_eq(&rep[p], &rs[i].replaced_txids[k]))
				continue;
			memmove(&rep[p + 1], &rep[p], (n_rep - p) * sizeof(rep[0]));
			rep[p] = rs[i].replaced_txids[k];
			n_rep++;
		}
	}
	for (size_t k = 0; k < n_rep; k++)
		json_array_append_new(replaced, json_hash(&rep[k]));
	xfree(rep);
	json_object_set_new(out, "package_msg", json_string(msg));
	json_object_set_new(out, "tx-results", map);
	json_object_set_new(out, "replaced-transactions", replaced);
	ctl_ok(res, out);
out:
	ctl_package_release(&pk);
}
