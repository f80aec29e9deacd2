/*
 * daemon/ctl/mempool_methods.c: the control methods on the mempool: getmempoolinfo,
 * getrawmempool, getmempoolentry, getmempoolancestors,
 * getmempooldescendants, getrawtransaction, sendrawtransaction,
 * testmempoolaccept, savemempool.
 *
 * The mempool belongs to the chain, so these are chain methods: they run on
 * the validation thread (ctl/request.c posts them there) and read the pool through
 * chain/mempool.h. Names, parameters, result fields in Core's order, error
 * codes and messages are Bitcoin Core 29's (rpc/mempool.cpp,
 * rpc/rawtransaction.cpp, node/transaction.cpp).
 *
 * The unbroadcast set (transactions sendrawtransaction put in the pool
 * that no peer has fetched yet) is the chain's, as Core's is the
 * mempool's; relay (txrelay/announce.c) takes txids out when a peer fetches them.
 *
 * The parameter parsers and the pieces package_methods.c shares are in
 * mempool_params.c.
 */
#include "daemon/ctl/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "index/index.h"
#include "mempool/mempool.h"
#include "json/json.h"

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

/* ---- parameters ----------------------------------------------------------- */

/* A boolean parameter (absent or null: def; ctl_args_check saw its type). */
static bool param_flag(json_t *v, bool def)
{
	return v ? json_is_true(v) : def;
}

/* ---- shared pieces ---------------------------------------------------------- */

/* Core's std::set<txiter, CompareIteratorByHash>: txids by their stored
 * (internal) bytes, the order getmempoolancestors and "spentby" list. */
static int cmp_entry_txid(const void *a, const void *b)
{
	const struct mempool_entry *x = *(const struct mempool_entry *const *)a;
	const struct mempool_entry *y = *(const struct mempool_entry *const *)b;
	return memcmp(mempool_entry_txid(x)->b, mempool_entry_txid(y)->b, 32);
}

/* Core's std::set<std::string> of hex txids ("depends"). */
static int cmp_hex(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entry's direct parents or children, xmalloc'd (*out NULL when none). */
static bool relatives(const struct mempool_entry *e, bool children,
                      const struct mempool_entry ***out, size_t *n)
{
	size_t cnt =
	    children ? mempool_entry_children(e, NULL, 0) : mempool_entry_parents(e, NULL, 0);
	*out = NULL;
	*n = 0;
	if (!cnt)
		return true;
	*out = xcalloc(cnt, sizeof(**out));
	if (!*out)
		return false;
	*n = children ? mempool_entry_children(e, *out, cnt) : mempool_entry_parents(e, *out, cnt);
	if (*n > cnt)
		*n = cnt;
	return true;
}

/* Core's entryToJSON: one mempool entry as getmempoolentry prints it. */
static json_t *entry_json(struct mempool *mp, const struct mempool_entry *e)
{
	struct mempool_entry_info in;
	mempool_entry_info(e, &in);
	json_t *o = json_object();
	json_t *fees = json_object();
	json_t *deps = json_array();
	json_t *spent = json_array();
	const struct mempool_entry **rel = NULL;
	size_t n = 0;
	if (!o || !fees || !deps || !spent)
		goto oom;
	json_object_set_new(o, "vsize", json_integer(in.vsize));
	json_object_set_new(o, "weight", json_integer(in.weight));
	json_object_set_new(o, "time", json_integer(in.time));
	json_object_set_new(o, "height", json_integer(in.height));
	json_object_set_new(o, "descendantcount", json_integer((json_int_t)in.descendant_count));
	json_object_set_new(o, "descendantsize", json_integer((json_int_t)in.descendant_size));
	json_object_set_new(o, "ancestorcount", json_integer((json_int_t)in.ancestor_count));
	json_object_set_new(o, "ancestorsize", json_integer((json_int_t)in.ancestor_size));
	json_object_set_new(o, "wtxid", json_hash(&in.wtxid));
	json_object_set_new(fees, "base", json_amount(in.fee));
	json_object_set_new(fees, "modified", json_amount(in.modified_fee));
	json_object_set_new(fees, "ancestor", json_amount(in.ancestor_fees));
	json_object_set_new(fees, "descendant", json_amount(in.descendant_fees));
	json_object_set_new(o, "fees", fees);
	fees = NULL;
	/* depends: the parents' txids as hex, sorted as strings. */
	if (!relatives(e, false, &rel, &n))
		goto oom;
	{
		char(*hex)[65] = n ? xcalloc(n, sizeof(*hex)) : NULL;
		const char **ptrs = n ? xcalloc(n, sizeof(*ptrs)) : NULL;
		if (n && (!hex || !ptrs)) {
			xfree(hex);
			xfree(ptrs);
			goto oom;
		}
		for (size_t i = 0; i < n; i++) {
			proto_hash_to_hex(mempool_entry_txid(rel[i]), hex[i]);
			ptrs[i] = hex[i];
		}
		if (n)
			qsort(ptrs, n, sizeof(*ptrs), cmp_hex);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(deps, json_string(ptrs[i]));
		xfree(hex);
		xfree(ptrs);
	}
	xfree(rel);
	rel = NULL;
	json_object_set_new(o, "depends", deps);
	deps = NULL;
	if (!relatives(e, true, &rel, &n))
		goto oom;
	if (n)
		qsort(rel, n, sizeof(*rel), cmp_entry_txid);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(spent, json_hash(mempool_entry_txid(rel[i])));
	xfree(rel);
	json_object_set_new(o, "spentby", spent);
	json_object_set_new(o, "bip125-replaceable", json_boolean(in.bip125_replaceable));
	bool unbroadcast = mempool_is_unbroadcast(mp, mempool_entry_txid(e));
	json_object_set_new(o, "unbroadcast", json_boolean(unbroadcast));
	return o;
oom:
	xfree(rel);
	json_decref(o);
	json_decref(fees);
	json_decref(deps);
	json_decref(spent);
	return NULL;
}

/* The entry a txid parameter names, or NULL with Core's error. */
static const struct mempool_entry *param_entry(struct mempool *mp, json_t *v,
                                               struct ctl_result *res)
{
	struct proto_hash h;
	if (!ctl_param_hash(v, "parameter 1", &h, res))
		return NULL;
	const struct mempool_entry *e = mempool_find(mp, &h, false);
	if (!e)
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Transaction not in mempool");
	return e;
}

/* ---- queries -------------------------------------------------------------- */

static void m_getmempoolinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res)
{
	(void)c;
	(void)args;
	struct mempool_info in;
	mempool_get_info(x->mempool, &in);
	json_t *o = json_object();
	if (!o) {
		ok(res, NULL);
		return;
	}
	json_object_set_new(o, "loaded", json_boolean(in.loaded));
	json_object_set_new(o, "size", json_integer((json_int_t)in.size));
	json_object_set_new(o, "bytes", json_integer((json_int_t)in.bytes));
	json_object_set_new(o, "usage", json_integer((json_int_t)in.usage));
	json_object_set_new(o, "total_fee", json_amount(in.total_fee));
	json_object_set_new(o, "maxmempool", json_integer((json_int_t)in.maxmempool));
	json_object_set_new(o, "mempoolminfee", json_amount(in.mempoolminfee));
	json_object_set_new(o, "minrelaytxfee", json_amount(in.minrelaytxfee));
	json_object_set_new(o, "incrementalrelayfee", json_amount(in.incrementalrelayfee));
	json_object_set_new(o, "unbroadcastcount", json_integer((json_int_t)in.unbroadcastcount));
	json_object_set_new(o, "fullrbf", json_boolean(in.fullrbf));
	ok(res, o);
}

static void m_getrawmempool(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	(void)c;
	bool verbose = param_flag(arg(args, 0), false), seq = param_flag(arg(args, 1), false);
	if (verbose && seq) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Verbose results cannot contain mempool sequence values.");
		return;
	}
	const struct mempool_entry **v = NULL;
	size_t n = 0;
	if (mempool_list(x->mempool, MEMPOOL_ORDER_DEPTH_SCORE, &v, &n)) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	json_t *o = verbose ? json_object() : json_array();
	for (size_t i = 0; o && i < n; i++) {
		if (verbose) {
			char hex[65];
			proto_hash_to_hex(mempool_entry_txid(v[i]), hex);
			json_t *e = entry_json(x->mempool, v[i]);
			if (!e || json_object_set_new(o, hex, e)) {
				json_decref(o);
				o = NULL;
			}
		} else if (json_array_append_new(o, json_hash(mempool_entry_txid(v[i])))) {
			json_decref(o);
			o = NULL;
		}
	}
	xfree(v);
	if (o && seq) {
		json_t *w = json_object();
		if (w) {
			json_object_set_new(w, "txids", o);
			json_object_set_new(w, "mempool_sequence",
			                    json_u64(mempool_sequence(x->mempool)));
		} else {
			json_decref(o);
		}
		o = w;
	}
	ok(res, o);
}

static void m_getmempoolentry(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                              struct ctl_result *res)
{
	(void)c;
	const struct mempool_entry *e = param_entry(x->mempool, arg(args, 0), res);
	if (e)
		ok(res, entry_json(x->mempool, e));
}

/* getmempoolancestors and getmempooldescendants: one body, the walk differs. */
static void relatives_method(struct mempool *mp, json_t *args, struct ctl_result *res,
                             int (*walk)(struct mempool *, const struct mempool_entry *,
                                         const struct mempool_entry ***, size_t *))
{
	bool verbose = param_flag(arg(args, 1), false);
	const struct mempool_entry *e = param_entry(mp, arg(args, 0), res);
	if (!e)
		return;
	const struct mempool_entry **v = NULL;
	size_t n = 0;
	if (walk(mp, e, &v, &n)) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_entry_txid);
	json_t *o = verbose ? json_object() : json_array();
	for (size_t i = 0; o && i < n; i++) {
		int err;
		if (verbose) {
			char hex[65];
			proto_hash_to_hex(mempool_entry_txid(v[i]), hex);
			json_t *j = entry_json(mp, v[i]);
			err = !j || json_object_set_new(o, hex, j);
		} else {
			err = json_array_append_new(o, json_hash(mempool_entry_txid(v[i])));
		}
		if (err) {
			json_decref(o);
			o = NULL;
		}
	}
	xfree(v);
	ok(res, o);
}

static void m_getmempoolancestors(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                  struct ctl_result *res)
{
	(void)c;
	relatives_method(x->mempool, args, res, mempool_ancestors);
}

static void m_getmempooldescendants(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                    struct ctl_result *res)
{
	(void)c;
	relatives_method(x->mempool, args, res, mempool_descendants);
}

/* ---- getrawtransaction ------------------------------------------------------- */

/* Core's ParseVerbosity with booleans allowed (default 0), else getInt<int>. */
static bool param_tx_verbosity(json_t *v, int *out, struct ctl_result *res)
{
	int64_t n = json_is_true(v);
	if (!json_is_boolean(v) && !ctl_arg_int(v, INT32_MIN, INT32_MAX, 0, &n, res))
		return false;
	*out = (int)n;
	return true;
}

/*
 * A block's transaction for getrawtransaction with a blockhash: the
 * block is read and searched; with verbosity 2 its undo data gives the
 * fee and prevouts. Core's TxToJSON adds the block's fields after.
 */
static void tx_in_block(struct chain *c, const struct ctl_chain_ctx *x, struct chain_node *n,
                        const struct proto_hash *txid, int verbosity, bool given,
                        struct ctl_result *res)
{
	if (!(n->status & CHAIN_HAVE_DATA)) {
		fail(res, CTL_MISC_ERROR, "Block not available");
		return;
	}
	uint8_t *raw = NULL;
	size_t len = 0;
	struct proto_block b;
	struct chain_block_undo undo;
	proto_block_init(&b);
	chain_block_undo_init(&undo);
	int err = chain_read_block(c, n, &raw, &len);
	if (err || proto_block_decode(raw, len, &b, NULL)) {
		fail(res, CTL_MISC_ERROR, "Block not available");
		goto out;
	}
	uint32_t i;
	for (i = 0; i < b.n_tx; i++) {
		if (proto_hash_eq(proto_tx_txid(&b.txs[i]), txid))
			break;
	}
	if (i == b.n_tx) {
		fail(res, CTL_INVALID_ADDRESS_OR_KEY,
		     "No such transaction found in the provided block. Use gettransaction for "
		     "wallet transactions.");
		goto out;
	}
	struct proto_tx *tx = &b.txs[i];
	if (verbosity <= 0) {
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(tx, &w);
		ok(res, w.err ? NULL : json_hex(w.buf, w.len));
		proto_writer_release(&w);
		goto out;
	}
	const struct chain_undo_coin *spent = NULL;
	if (verbosity >= 2 && i > 0 && (n->status & CHAIN_HAVE_UNDO) && n->prev &&
	    chain_read_undo(c, n, &undo) == 0 && undo.n_tx + 1 == b.n_tx &&
	    undo.n_coins[i - 1] == tx->n_in)
		spent = &undo.coins[undo.first[i - 1]];
	bool active = chain_contains(c, n);
	json_t *t = json_tx(tx, x->net, spent, JSON_TX_HEX | (spent ? JSON_TX_PREVOUT : 0));
	json_t *o = json_object();
	if (!t || !o) {
		json_decref(t);
		json_decref(o);
		ok(res, NULL);
		goto out;
	}
	/* Core says in_active_chain only when the caller named the block (not
	 * for one the transaction index found). */
	if (given)
		json_object_set_new(o, "in_active_chain", json_boolean(active));
	json_object_update(o, t);
	json_decref(t);
	json_object_set_new(o, "blockhash", json_hash(&n->hash));
	if (active) {
		json_object_set_new(o, "confirmations",
		                    json_integer(chain_tip(c)->height - n->height + 1));
		json_object_set_new(o, "time", json_integer(n->time));
		json_object_set_new(o, "blocktime", json_integer(n->time));
	} else {
		json_object_set_new(o, "confirmations", json_integer(0));
	}
	ok(res, o);
out:
	chain_block_undo_release(&undo);
	proto_block_release(&b);
	xfree(raw);
}

/*
 * Not in the mempool: the transaction index (-txindex) names the block,
 * whose copy is then answered as with a blockhash (Core's GetTransaction
 * and g_txindex->FindTx), or Core's error for why not.
 */
static void tx_from_index(struct chain *c, const struct ctl_chain_ctx *x,
                          const struct proto_hash *txid, int verbosity, struct ctl_result *res)
{
	const char *why = "No such mempool transaction. Use -txindex or provide a block hash to "
	                  "enable blockchain transaction queries. Use gettransaction for wallet "
	                  "transactions.";
	if (index_set_has(x->indexes, INDEX_TX)) {
		struct proto_hash bh;
		int32_t height;
		bool synced;
		index_set_status(x->indexes, c, INDEX_TX, &height, &synced);
		struct chain_node *n = NULL;
		if (index_tx_find(x->indexes, txid, &bh) == INDEX_OK &&
		    (n = chain_index_find(chain_get_index(c), &bh))) {
			tx_in_block(c, x, n, txid, verbosity, false, res);
			return;
		}
		why = synced
		          ? "No such mempool or blockchain transaction. Use gettransaction for "
		            "wallet transactions."
		          : "No such mempool transaction. Blockchain transactions are still in the "
		            "process of being indexed. Use gettransaction for wallet transactions.";
	}
	fail(res, CTL_INVALID_ADDRESS_OR_KEY, "%s", why);
}

static void m_getrawtransaction(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                struct ctl_result *res)
{
	struct proto_hash txid;
	int verbosity;
	if (!ctl_param_hash(arg(args, 0), "parameter 1", &txid, res))
		return;
	struct proto_block_header gen;
	chain_node_header(chain_at(c, 0), &gen);
	if (proto_hash_eq(&txid, &gen.merkle_root)) {
		fail(res, CTL_INVALID_ADDRESS_OR_KEY,
		     "The genesis block coinbase is not considered an ordinary transaction and "
		     "cannot "
		     "be retrieved");
		return;
	}
	if (!param_tx_verbosity(arg(args, 1), &verbosity, res))
		return;
	if (arg(args, 2)) {
		struct proto_hash bh;
		if (!ctl_param_hash(arg(args, 2), "parameter 3", &bh, res))
			return;
		struct chain_node *n = chain_index_find(chain_get_index(c), &bh);
		if (!n) {
			fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Block hash not found");
			return;
		}
		tx_in_block(c, x, n, &txid, verbosity, true, res);
		return;
	}
	uint8_t *raw = NULL;
	size_t len = 0;
	int err = mempool_get_raw(x->mempool, &txid, false, &raw, &len);
	if (err == CHAIN_ENOTFOUND) {
		tx_from_index(c, x, &txid, verbosity, res);
		return;
	}
	if (err) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (verbosity <= 0) {
		ctl_ok_bytes(x, res, raw, len); /* hex, or the bytes themselves in process */
		return;
	}
	/* A mempool transaction has no block, so no undo: Core prints verbosity
	 * 2 as 1 for it. */
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(raw, len, &tx, NULL))
		fail(res, CTL_INTERNAL_ERROR, "mempool transaction does not decode");
	else
		ok(res, json_tx(&tx, x->net, NULL, JSON_TX_HEX));
	proto_tx_release(&tx);
	xfree(raw);
}

/* ---- sendrawtransaction / testmempoolaccept ---------------------------------- */

/* Core's BroadcastTransaction, without relay (peerd's relay announces what
 * enters the pool); a transaction it adds joins the unbroadcast set. */
static void m_sendrawtransaction(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                 struct ctl_result *res)
{
	struct proto_tx tx;
	struct mempool_accept_result r;
	int64_t maxrate, maxburn;
	char why[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 4];
	proto_tx_init(&tx);
	mempool_accept_result_init(&r);
	if (!ctl_param_amount(arg(args, 2), 0, &maxburn, res))
		goto out;
	if (!ctl_decode_hex_tx(arg(args, 0), &tx)) {
		fail(res, CTL_DESERIALIZATION_ERROR,
		     "TX decode failed. Make sure the tx has at least one input.");
		goto out;
	}
	if (!ctl_check_burn(&tx, maxburn, res))
		goto out;
	if (!ctl_param_feerate(arg(args, 1), CTL_DEFAULT_MAX_FEERATE, &maxrate, res))
		goto out;
	int64_t max_fee = mempool_feerate_fee(maxrate, proto_tx_vsize(&tx));
	/* Already confirmed: any of its outputs in the UTXO set. */
	for (uint32_t o = 0; o < tx.n_out; o++) {
		struct proto_outpoint op = {.txid = tx.txid, .n = o};
		struct chain_coin coin;
		int err = chain_coins_get(chain_get_coins(c), &op, &coin);
		if (err == 0) {
			fail(res, CTL_ALREADY_IN_CHAIN, "Transaction outputs already in utxo set");
			goto out;
		}
		if (err != CHAIN_ENOTFOUND) {
			fail(res, CTL_MISC_ERROR, "reading the coins: %s", chain_strerror(err));
			goto out;
		}
	}
	/* The same txid in the pool (any witness): nothing to do, as Core. */
	if (mempool_find(x->mempool, &tx.txid, false)) {
		ok(res, json_hash(&tx.txid));
		goto out;
	}
	for (int pass = max_fee > 0 ? 0 : 1; pass < 2; pass++) {
		struct mempool_accept_opts opts = {.test_accept = pass == 0};
		int err = mempool_accept(x->mempool, &tx, &opts, &r);
		if (err) {
			fail(res, CTL_VERIFY_ERROR, "%s", chain_strerror(err));
			goto out;
		}
		if (!r.accepted) {
			/* Core's HandleATMPError: missing inputs and internal errors
			 * are -25, every other rejection -26; the state as text. */
			ctl_state_string(&r.state, why, sizeof(why));
			bool rejected = r.state.result != CHAIN_RESULT_TX_MISSING_INPUTS &&
			                r.state.result != CHAIN_RESULT_TX_NO_MEMPOOL;
			fail(res, rejected ? CTL_VERIFY_REJECTED : CTL_VERIFY_ERROR, "%s", why);
			goto out;
		}
		if (pass == 0 && r.fee > max_fee) {
			fail(res, CTL_VERIFY_ERROR,
			     "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)");
			goto out;
		}
	}
	if (mempool_unbroadcast_add(x->mempool, &tx.txid)) {
		fail(res, CTL_MISC_ERROR, "out of memory");
		goto out;
	}
	ok(res, json_hash(&tx.txid));
out:
	mempool_accept_result_release(&r);
	proto_tx_release(&tx);
}

/* One testmempoolaccept result object (Core's field order). */
static json_t *tma_result(const struct proto_tx *tx, const struct mempool_accept_result *r,
                          const char *package_error, int64_t maxrate, bool *exit_early)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "txid", json_hash(&tx->txid));
	json_object_set_new(o, "wtxid", json_hash(&tx->wtxid));
	if (package_error)
		json_object_set_new(o, "package-error", json_string(package_error));
	if (*exit_early || !r->validated)
		return o; /* not judged: ids only */
	if (r->accepted && !r->already_in_mempool) {
		int64_t max_fee = mempool_feerate_fee(maxrate, r->vsize);
		if (max_fee && r->fee > max_fee) {
			json_object_set_new(o, "allowed", json_false());
			json_object_set_new(o, "reject-reason", json_string("max-fee-exceeded"));
			*exit_early = true;
			return o;
		}
		json_t *fees = json_object();
		json_t *inc = json_array();
		for (size_t i = 0; inc && i < r->n_effective_includes; i++)
			json_array_append_new(inc, json_hash(&r->effective_includes[i]));
		json_object_set_new(o, "allowed", json_true());
		json_object_set_new(o, "vsize", json_integer(r->vsize));
		if (fees) {
			json_object_set_new(fees, "base", json_amount(r->fee));
			json_object_set_new(fees, "effective-feerate",
			                    json_amount(r->effective_feerate));
			json_object_set_new(fees, "effective-includes", inc ? inc : json_array());
			inc = NULL;
		}
		json_decref(inc);
		json_object_set_new(o, "fees", fees ? fees : json_null());
		return o;
	}
	json_object_set_new(o, "allowed", json_false());
	if (r->already_in_mempool && !r->state.reason[0]) {
		/* Core's PreChecks says so before anything else. */
		json_object_set_new(o, "reject-reason", json_string("txn-already-in-mempool"));
		json_object_set_new(o, "reject-details", json_string("txn-already-in-mempool"));
	} else if (r->state.result == CHAIN_RESULT_TX_MISSING_INPUTS) {
		json_object_set_new(o, "reject-reason", json_string("missing-inputs"));
	} else {
		char why[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 4];
		ctl_state_string(&r->state, why, sizeof(why));
		json_object_set_new(o, "reject-reason", json_string(r->state.reason));
		json_object_set_new(o, "reject-details", json_string(why));
	}
	return o;
}

static void m_testmempoolaccept(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                struct ctl_result *res)
{
	(void)c;
	json_t *raws = arg(args, 0);
	int64_t maxrate;
	struct ctl_package pk = {0};
	size_t n = 0;
	json_t *out = NULL;
	if (!ctl_package_count(raws, &n, res))
		return;
	if (!ctl_param_feerate(arg(args, 1), CTL_DEFAULT_MAX_FEERATE, &maxrate, res))
		return;
	if (!ctl_package_alloc(&pk, n, res))
		return;
	struct proto_tx *txs = pk.txs;
	struct mempool_accept_result *rs = pk.rs;
	for (size_t i = 0; i < n; i++) {
		if (!ctl_package_decode_tx(json_array_get(raws, i), &txs[i], res))
			goto out;
	}
	struct mempool_package_state pkg = {0};
	int err;
	if (n == 1) {
		struct mempool_accept_opts opts = {.test_accept = true};
		err = mempool_accept(x->mempool, &txs[0], &opts, &rs[0]);
		rs[0].validated = true;
	} else {
		err = mempool_test_package(x->mempool, pk.ptrs, n, rs, &pkg);
	}
	if (err) {
		fail(res, CTL_INTERNAL_ERROR, "%s", chain_strerror(err));
		goto out;
	}
	char perr[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 4];
	bool has_perr = pkg.result == MEMPOOL_PACKAGE_POLICY;
	if (has_perr)
		ctl_package_reason(&pkg, perr, sizeof(perr));
	out = json_array();
	bool exit_early = false;
	for (size_t i = 0; out && i < n; i++) {
		json_t *o =
		    tma_result(&txs[i], &rs[i], has_perr ? perr : NULL, maxrate, &exit_early);
		if (!o || json_array_append_new(out, o)) {
			json_decref(out);
			out = NULL;
		}
	}
	ok(res, out);
out:
	ctl_package_release(&pk);
}

/* ---- savemempool ---------------------------------------------------------------- */

static void m_savemempool(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                          struct ctl_result *res)
{
	(void)c;
	(void)args;
	struct mempool_info in;
	mempool_get_info(x->mempool, &in);
	if (!in.loaded) {
		fail(res, CTL_MISC_ERROR, "The mempool was not loaded yet");
		return;
	}
	if (mempool_save(x->mempool)) {
		fail(res, CTL_MISC_ERROR, "Unable to dump mempool to disk");
		return;
	}
	ok(res, json_pack("{s:s}", "filename", mempool_path(x->mempool)));
}

/* Core's prioritisetransaction: the delta applies now and to a transaction
 * still to come; the dummy (once the priority) must be 0. */
static void m_prioritisetransaction(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                    struct ctl_result *res)
{
	(void)c;
	/* ctl_args_check saw the types; Core reads them in order. */
	json_t *txid = arg(args, 0), *dummy = arg(args, 1), *delta = arg(args, 2);
	struct proto_hash h;
	int64_t fee_delta;
	if (!ctl_param_hash(txid, "txid", &h, res) ||
	    !ctl_arg_int(delta, INT64_MIN, INT64_MAX, 0, &fee_delta, res))
		return;
	if (dummy && json_is_number(dummy) && json_number_value(dummy) != 0) {
		fail(
		    res, CTL_INVALID_PARAMETER,
		    "Priority is no longer supported, dummy argument to prioritisetransaction must "
		    "be 0.");
		return;
	}
	/* Core: a dust output is allowed only at zero fee, so its fee stays put. */
	const struct mempool_entry *e = mempool_find(x->mempool, &h, false);
	const struct mempool_policy *pol = mempool_get_policy(x->mempool);
	uint32_t idx;
	if (e && pol->require_standard &&
	    mempool_policy_dust_outputs(mempool_entry_tx(e), pol->dust_relay_feerate, &idx, 1)) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Priority is not supported for transactions with dust outputs.");
		return;
	}
	if (mempool_prioritise(x->mempool, &h, fee_delta)) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	ok(res, json_true());
}

static void m_getprioritisedtransactions(struct chain *c, const struct ctl_chain_ctx *x,
                                         json_t *args, struct ctl_result *res)
{
	(void)c;
	(void)args;
	struct mempool_delta *v;
	size_t n;
	if (mempool_deltas(x->mempool, &v, &n)) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	json_t *o = json_object();
	for (size_t i = 0; o && i < n; i++) {
		json_t *d = json_object();
		if (!d)
			break;
		json_object_set_new(d, "fee_delta", json_integer((json_int_t)v[i].delta));
		json_object_set_new(d, "in_mempool", json_boolean(v[i].in_mempool));
		if (v[i].in_mempool)
			json_object_set_new(d, "modified_fee",
			                    json_integer((json_int_t)v[i].modified_fee));
		char hex[65];
		proto_hash_to_hex(&v[i].txid, hex);
		json_object_set_new(o, hex, d);
	}
	xfree(v);
	ok(res, o);
}

/* ---- the table ------------------------------------------------------------ */

const struct ctl_method ctl_mempool_methods[] = {
    {"getmempoolinfo",
     NULL,
     {{0}},
     "getmempoolinfo",
     "The mempool: loaded, size, bytes, usage, total_fee, maxmempool, mempoolminfee, "
     "minrelaytxfee, incrementalrelayfee, unbroadcastcount, fullrbf.",
     m_getmempoolinfo,
     NULL},
    {"getrawmempool",
     NULL,
     {{"verbose", CTL_ARG_BOOL, CTL_OPTIONAL}, {"mempool_sequence", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "getrawmempool ( verbose mempool_sequence )",
     "The mempool's txids (fewest ancestors, then best feerate first); verbose true: an object "
     "of getmempoolentry results by txid; mempool_sequence true: {txids, mempool_sequence}.",
     m_getrawmempool,
     NULL},
    {"getmempoolentry",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED}},
     "getmempoolentry \"txid\"",
     "One mempool transaction: vsize, weight, time, height, descendant and ancestor counts "
     "and sizes, wtxid, fees {base, modified, ancestor, descendant}, depends, spentby, "
     "bip125-replaceable, unbroadcast.",
     m_getmempoolentry,
     NULL},
    {"getmempoolancestors",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED}, {"verbose", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "getmempoolancestors \"txid\" ( verbose )",
     "The txids of a mempool transaction's in-mempool ancestors (verbose: their entries).",
     m_getmempoolancestors,
     NULL},
    {"getmempooldescendants",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED}, {"verbose", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "getmempooldescendants \"txid\" ( verbose )",
     "The txids of a mempool transaction's in-mempool descendants (verbose: their entries).",
     m_getmempooldescendants,
     NULL},
    {"getrawtransaction",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED},
      {"verbosity|verbose", CTL_ARG_ANY, CTL_OPTIONAL},
      {"blockhash", CTL_ARG_STR, CTL_OPTIONAL}},
     "getrawtransaction \"txid\" ( verbosity \"blockhash\" )",
     "A mempool transaction, one in the block blockhash, or (with -txindex) any confirmed one: "
     "0 hex (default), 1 decoded, 2 decoded with the fee and each input's prevout (block "
     "transactions only); a block's transaction has blockhash, confirmations and times.",
     m_getrawtransaction,
     NULL},
    {"sendrawtransaction",
     NULL,
     {{"hexstring", CTL_ARG_STR, CTL_REQUIRED},
      {"maxfeerate", CTL_ARG_ANY, CTL_OPTIONAL},
      {"maxburnamount", CTL_ARG_ANY, CTL_OPTIONAL}},
     "sendrawtransaction \"hexstring\" ( maxfeerate maxburnamount )",
     "Validate a transaction and add it to the mempool; its txid. maxfeerate (BTC/kvB, default "
     "0.10, 0: no limit) refuses a higher fee; maxburnamount (BTC, default 0) the most an "
     "unspendable output may hold. Errors as Core: -22 decode, -25 missing inputs "
     "or fee above maxfeerate, -26 rejected (the reason), -27 already confirmed.",
     m_sendrawtransaction,
     NULL},
    {"testmempoolaccept",
     NULL,
     {{"rawtxs", CTL_ARG_ARR, CTL_REQUIRED}, {"maxfeerate", CTL_ARG_ANY, CTL_OPTIONAL}},
     "testmempoolaccept [\"rawtx\",...] ( maxfeerate )",
     "Would the mempool take these (1-25, parents first; more than one is a package)? Per "
     "transaction: txid, wtxid, package-error, allowed, vsize, fees {base, effective-feerate, "
     "effective-includes}, reject-reason, reject-details, as Core. Changes nothing.",
     m_testmempoolaccept,
     NULL},
    {"submitpackage",
     NULL,
     {{"package", CTL_ARG_ARR, CTL_REQUIRED},
      {"maxfeerate", CTL_ARG_ANY, CTL_OPTIONAL},
      {"maxburnamount", CTL_ARG_ANY, CTL_OPTIONAL}},
     "submitpackage [\"rawtx\",...] ( maxfeerate maxburnamount )",
     "Validate a package (1-25 transactions: one child last, with its unconfirmed parents, "
     "none spending another) and add what passes to the mempool; a parent below the mempool "
     "minimum may be paid for by its child (package feerate). {package_msg, tx-results by "
     "wtxid {txid, other-wtxid, vsize, fees {base, effective-feerate, effective-includes}, "
     "error}, replaced-transactions}, as Core. maxfeerate (BTC/kvB, default 0.10, 0: none) "
     "and maxburnamount (BTC, default 0) as sendrawtransaction's.",
     ctl_m_submitpackage,
     NULL},
    {"prioritisetransaction",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED},
      {"dummy", CTL_ARG_NUM, CTL_OPTIONAL},
      {"fee_delta", CTL_ARG_NUM, CTL_REQUIRED}},
     "prioritisetransaction \"txid\" ( dummy ) fee_delta",
     "Add fee_delta satoshis (may be negative) to the fee a transaction counts with for "
     "mining, eviction and relay order, as Core; kept for a transaction not yet in the "
     "mempool. dummy must be 0 or null. Returns true.",
     m_prioritisetransaction,
     NULL},
    {"getprioritisedtransactions",
     NULL,
     {{0}},
     "getprioritisedtransactions",
     "Every prioritisetransaction delta in force, by txid: {fee_delta, in_mempool, "
     "modified_fee (when in the mempool)}, as Core.",
     m_getprioritisedtransactions,
     NULL},
    {"savemempool",
     NULL,
     {{0}},
     "savemempool",
     "Write the mempool to <netdir>/mempool.dat (Core's format); {filename}.",
     m_savemempool,
     NULL},
};

const size_t ctl_n_mempool_methods = sizeof(ctl_mempool_methods) / sizeof(ctl_mempool_methods[0]);
