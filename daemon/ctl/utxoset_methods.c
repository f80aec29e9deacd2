/*
 * daemon/ctl/utxoset_methods.c: gettxoutsetinfo as Bitcoin Core 29's
 * (rpc/blockchain.cpp): hash_type hash_serialized_3, muhash or none;
 * hash_or_height and use_index with the coinstats index (index/coinstats.c).
 *
 * Without the index (or use_index false, or hash_serialized_3) the figures
 * come from a walk over the flushed UTXO set (chain_coins_stats_each), the
 * MuHash over every coin's TxOutSer as Core's ComputeUTXOStats; with it,
 * muhash and none read the block's record, and the answer carries
 * total_unspendable_amount and block_info (the record minus its parent's)
 * in place of transactions and disk_size, as Core's.
 * A chain method: the validation thread.
 */
#include "daemon/ctl/internal.h"

#include <stdint.h>
#include <string.h>

#include "chain/chain.h"
#include "index/index.h"
#include "json/json.h"

enum hash_type { HT_SERIALIZED, HT_MUHASH, HT_NONE };

static void muhash_each(void *arg, const uint8_t *ser, size_t len)
{
	index_muhash_insert(arg, ser, len);
}

/* Core's ParseHashOrHeight: a number is a height of the active chain, else
 * a block hash. NULL with res set. */
static struct chain_node *hash_or_height(struct chain *c, json_t *v, struct ctl_result *res)
{
	if (json_is_number(v)) {
		/* Core's getInt<int>: a fraction or a value past int's range is
		 * "JSON integer out of range" (-1). */
		int64_t h;
		if (!ctl_arg_int(v, INT32_MIN, INT32_MAX, 0, &h, res))
			return NULL;
		if (h < 0) {
			ctl_fail(res, CTL_INVALID_PARAMETER, "Target block height %lld is negative",
			         (long long)h);
			return NULL;
		}
		if (h > chain_height(c)) {
			ctl_fail(res, CTL_INVALID_PARAMETER,
			         "Target block height %lld after current tip %d", (long long)h,
			         chain_height(c));
			return NULL;
		}
		return chain_at(c, (int32_t)h);
	}
	if (!json_is_string(v)) {
		/* Core's ParseHashV: UniValue's get_str on a bool, array or object. */
		ctl_fail(res, CTL_TYPE_ERROR,
		         "JSON value of type %s is not of expected type string",
		         json_is_boolean(v) ? "bool"
		         : json_is_array(v) ? "array"
		                            : "object");
		return NULL;
	}
	struct proto_hash hash;
	if (!ctl_param_hash(v, "hash_or_height", &hash, res))
		return NULL;
	struct chain_node *n = chain_index_find(chain_get_index(c), &hash);
	if (!n)
		ctl_fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Block not found");
	return n;
}

/* The answer from the index's records of n and its parent. */
static void from_index(struct index_set *s, const struct chain_node *n, enum hash_type type,
                       struct ctl_result *res)
{
	struct index_coinstats st, prev = {0};
	if (index_coinstats_find(s, n, &st) ||
	    (n->prev && index_coinstats_find(s, n->prev, &prev))) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "Unable to read UTXO set");
		return;
	}
	json_t *o = json_object(), *bi = json_object(), *un = json_object();
	if (!o || !bi || !un) {
		json_decref(o);
		json_decref(bi);
		json_decref(un);
		ctl_ok(res, NULL);
		return;
	}
	json_object_set_new(o, "height", json_integer(n->height));
	json_object_set_new(o, "bestblock", json_hash(&n->hash));
	json_object_set_new(o, "txouts", json_integer((json_int_t)st.txouts));
	json_object_set_new(o, "bogosize", json_integer((json_int_t)st.bogosize));
	if (type == HT_MUHASH) {
		struct proto_hash h;
		memcpy(h.b, st.muhash, 32);
		json_object_set_new(o, "muhash", json_hash(&h));
	}
	json_object_set_new(o, "total_amount", json_amount(st.total_amount));
	json_object_set_new(o, "total_unspendable_amount", json_amount(st.total_unspendable));
	json_object_set_new(bi, "prevout_spent",
	                    json_amount(st.total_prevout_spent - prev.total_prevout_spent));
	json_object_set_new(bi, "coinbase", json_amount(st.total_coinbase - prev.total_coinbase));
	json_object_set_new(
	    bi, "new_outputs_ex_coinbase",
	    json_amount(st.total_new_outputs_ex_coinbase - prev.total_new_outputs_ex_coinbase));
	json_object_set_new(bi, "unspendable",
	                    json_amount(st.total_unspendable - prev.total_unspendable));
	json_object_set_new(
	    un, "genesis_block",
	    json_amount(st.unspendables_genesis_block - prev.unspendables_genesis_block));
	json_object_set_new(un, "bip30",
	                    json_amount(st.unspendables_bip30 - prev.unspendables_bip30));
	json_object_set_new(un, "scripts",
	                    json_amount(st.unspendables_scripts - prev.unspendables_scripts));
	json_object_set_new(
	    un, "unclaimed_rewards",
	    json_amount(st.unspendables_unclaimed_rewards - prev.unspendables_unclaimed_rewards));
	json_object_set_new(bi, "unspendables", un);
	json_object_set_new(o, "block_info", bi);
	ctl_ok(res, o);
}

/* The answer from a walk over the UTXO set at the tip (flushed first, so
 * disk_size describes the whole set, as Core's). */
static void from_set(struct chain *c, enum hash_type type, struct ctl_result *res)
{
	struct index_muhash *m = type == HT_MUHASH ? index_muhash_new() : NULL;
	if (type == HT_MUHASH && !m) {
		ctl_ok(res, NULL);
		return;
	}
	int err = chain_flush(c);
	struct chain_utxo_stats st;
	if (!err)
		err = chain_coins_stats_each(chain_get_coins(c), &st, m ? muhash_each : NULL, m);
	if (err) {
		index_muhash_free(m);
		ctl_fail(res, CTL_INTERNAL_ERROR, "Unable to read UTXO set: %s",
		         chain_strerror(err));
		return;
	}
	struct chain_node *n = chain_index_find(chain_get_index(c), &st.best_block);
	json_t *o = json_object();
	if (!o) {
		index_muhash_free(m);
		ctl_ok(res, NULL);
		return;
	}
	json_object_set_new(o, "height", json_integer(n ? n->height : chain_height(c)));
	json_object_set_new(o, "bestblock", json_hash(&st.best_block));
	json_object_set_new(o, "txouts", json_integer((json_int_t)st.txouts));
	json_object_set_new(o, "bogosize", json_integer((json_int_t)st.bogosize));
	struct proto_hash h;
	if (type == HT_SERIALIZED) {
		memcpy(h.b, st.hash_serialized, 32);
		json_object_set_new(o, "hash_serialized_3", json_hash(&h));
	} else if (type == HT_MUHASH) {
		index_muhash_finalize(m, h.b);
		json_object_set_new(o, "muhash", json_hash(&h));
	}
	index_muhash_free(m);
	json_object_set_new(o, "total_amount", json_amount(st.total_amount));
	json_object_set_new(o, "transactions", json_integer((json_int_t)st.transactions));
	json_object_set_new(o, "disk_size", json_integer((json_int_t)st.disk_size));
	ctl_ok(res, o);
}

void ctl_m_gettxoutsetinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res)
{
	json_t *ht = ctl_arg(args, 0), *at = ctl_arg(args, 1), *ui = ctl_arg(args, 2);
	const char *name = ht ? json_string_value(ht) : "hash_serialized_3";
	enum hash_type type;
	if (name && strcmp(name, "hash_serialized_3") == 0)
		type = HT_SERIALIZED;
	else if (name && strcmp(name, "muhash") == 0)
		type = HT_MUHASH;
	else if (name && strcmp(name, "none") == 0)
		type = HT_NONE;
	else {
		ctl_fail(res, CTL_INVALID_PARAMETER, "'%s' is not a valid hash_type",
		         name ? name : "");
		return;
	}
	const bool index_requested = !ui || json_is_true(ui);
	struct index_set *s = index_set_has(x->indexes, INDEX_COINSTATS) ? x->indexes : NULL;
	struct chain_node *n = chain_tip(c);
	if (at) {
		if (!s) {
			ctl_fail(res, CTL_INVALID_PARAMETER,
			         "Querying specific block heights requires coinstatsindex");
			return;
		}
		if (type == HT_SERIALIZED) {
			ctl_fail(
			    res, CTL_INVALID_PARAMETER,
			    "hash_serialized_3 hash type cannot be queried for a specific block");
			return;
		}
		if (!index_requested) {
			ctl_fail(
			    res, CTL_INVALID_PARAMETER,
			    "Cannot set use_index to false when querying for a specific block");
			return;
		}
		if (!(n = hash_or_height(c, at, res)))
			return;
	}
	if (index_requested && s) {
		/* Core answers a block the index has passed even while it is
		 * still catching up; the tip (or a later block) waits. */
		int32_t best;
		bool synced;
		index_set_status(s, c, INDEX_COINSTATS, &best, &synced);
		if (!synced && n->height > best) {
			ctl_fail(
			    res, CTL_INTERNAL_ERROR,
			    "Unable to get data because coinstatsindex is still syncing. Current "
			    "height: %d",
			    best);
			return;
		}
	}
	if (index_requested && s && type != HT_SERIALIZED)
		from_index(s, n, type, res);
	else
		from_set(c, type, res);
}
