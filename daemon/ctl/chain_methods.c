/*
 * daemon/ctl/chain_methods.c: the control methods that read or change the chain.
 * They run on the validation thread, which owns the chain (ctl/server.c posts
 * them there and answers the client when they come back), so nothing here
 * ever runs on the loop thread.
 *
 * Names, parameters, result fields (in Core's order) and error codes are
 * Bitcoin Core 29's (rpc/blockchain.cpp, rpc/mining.cpp).
 */
#include "daemon/ctl/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "json/json.h"
#include "pool/pool.h"

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

/* ---- parameters ----------------------------------------------------------- */

#define param_hash ctl_param_hash

/* Core's ParseHashV: 64 hex digits, else RPC_INVALID_PARAMETER. */
bool ctl_param_hash(json_t *v, const char *name, struct proto_hash *out, struct ctl_result *res)
{
	if (!json_is_string(v)) {
		fail(res, CTL_TYPE_ERROR, "%s must be a string", name);
		return false;
	}
	const char *s = json_string_value(v);
	size_t n = strlen(s);
	if (n != 64) {
		fail(res, CTL_INVALID_PARAMETER, "%s must be of length 64 (not %zu, for '%s')",
		     name, n, s);
		return false;
	}
	if (proto_hash_from_hex(s, out)) {
		fail(res, CTL_INVALID_PARAMETER, "%s must be hexadecimal string (not '%s')", name,
		     s);
		return false;
	}
	return true;
}

/* The block a hash names (name: what Core's ParseHashV calls it), or NULL
 * with Core's "Block not found". */
static struct chain_node *param_block(struct chain *c, json_t *v, const char *name,
                                      struct ctl_result *res)
{
	struct proto_hash h;
	if (!param_hash(v, name, &h, res))
		return NULL;
	struct chain_node *n = chain_index_find(chain_get_index(c), &h);
	if (!n)
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Block not found");
	return n;
}

/* Core's getInt<int> (absent or null: def). */
static bool param_int(json_t *v, int64_t def, int64_t *out, struct ctl_result *res)
{
	return ctl_arg_int(v, INT32_MIN, INT32_MAX, def, out, res);
}

/* A boolean parameter (absent or null: def; ctl_args_check saw its type). */
static bool param_bool(json_t *v, bool def)
{
	return v ? json_is_true(v) : def;
}

/* ---- shared pieces -------------------------------------------------------- */

/* What the chain knows of n beyond its header (getblockheader's extra fields). */
static void node_info(struct chain *c, const struct chain_node *n, struct json_block_info *info)
{
	bool active = chain_contains(c, n);
	struct chain_node *next = active ? chain_at(c, n->height + 1) : NULL;
	info->height = n->height;
	info->confirmations = active ? chain_tip(c)->height - n->height + 1 : -1;
	info->mediantime = chain_node_mtp(n);
	info->chainwork = &n->work;
	info->n_tx = n->n_tx;
	info->next = next ? &next->hash : NULL;
}

/* Bytes of blk and rev files (Core's size_on_disk). */
static uint64_t blocks_size(const char *netdir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/blocks", netdir);
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	uint64_t total = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "blk", 3) != 0 && strncmp(e->d_name, "rev", 3) != 0)
			continue;
		char f[4352];
		struct stat st;
		snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
		if (stat(f, &st) == 0)
			total += (uint64_t)st.st_size;
	}
	closedir(dir);
	return total;
}

/*
 * Core's GuessVerificationProgress without chainTxData: peerd has no
 * transaction-count estimate for any network, so the figure is the share
 * of time since genesis that the tip covers (1 for a tip within a day).
 */
static double progress(struct chain *c)
{
	struct chain_node *tip = chain_tip(c);
	struct chain_node *gen = chain_at(c, 0);
	int64_t now = chain_now(c);
	/* Core's formula with regtest's empty chainTxData is always 1. */
	if (chain_params(c)->net == PROTO_NET_REGTEST || !chain_tip_is_old(c) || !gen ||
	    now <= (int64_t)gen->time)
		return 1.0;
	double p =
	    (double)((int64_t)tip->time - (int64_t)gen->time) / (double)(now - (int64_t)gen->time);
	return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* ---- blockchain ------------------------------------------------------------ */

static void m_getblockcount(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	(void)x;
	(void)args;
	ok(res, json_integer(chain_height(c)));
}

static void m_getbestblockhash(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                               struct ctl_result *res)
{
	(void)x;
	(void)args;
	ok(res, json_hash(&chain_tip(c)->hash));
}

static void m_getdifficulty(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	(void)x;
	(void)args;
	ok(res, json_double(chain_difficulty(chain_tip(c)->bits)));
}

static void m_getblockhash(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res)
{
	(void)x;
	int64_t h;
	if (!param_int(arg(args, 0), -1, &h, res))
		return;
	if (h < 0 || h > chain_height(c)) {
		fail(res, CTL_INVALID_PARAMETER, "Block height out of range");
		return;
	}
	ok(res, json_hash(&chain_at(c, (int32_t)h)->hash));
}

/* The loop's answers from the view (ctl_method.view_fn): no job, no thread
 * switch, the same text as the chain methods above. */
static void v_getblockcount(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, json_integer(chainview_height(d)));
}

static void v_getbestblockhash(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, json_hash(&chainview_at(d, chainview_height(d))->hash));
}

static void v_getblockhash(struct daemon *d, json_t *args, struct ctl_result *res)
{
	int64_t h;
	if (!param_int(arg(args, 0), -1, &h, res))
		return;
	if (h < 0 || h > chainview_height(d)) {
		fail(res, CTL_INVALID_PARAMETER, "Block height out of range");
		return;
	}
	ok(res, json_hash(&chainview_at(d, (int32_t)h)->hash));
}

ctl_method_fn ctl_view_fn(const struct ctl_method *m)
{
	static const struct {
		ctl_chain_fn chain_fn;
		ctl_method_fn view_fn;
	} alt[] = {{m_getblockcount, v_getblockcount},
	           {m_getbestblockhash, v_getbestblockhash},
	           {m_getblockhash, v_getblockhash}};
	for (size_t i = 0; i < sizeof(alt) / sizeof(alt[0]); i++)
		if (m->chain_fn == alt[i].chain_fn)
			return alt[i].view_fn;
	return NULL;
}

static void m_getblockchaininfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                struct ctl_result *res)
{
	(void)args;
	struct chain_node *tip = chain_tip(c);
	struct chain_node *best = chain_index_best_header(chain_get_index(c));
	char buf[65];
	json_t *o = json_object();
	if (!o) {
		ok(res, NULL);
		return;
	}
	json_object_set_new(o, "chain", json_string(x->net->name));
	json_object_set_new(o, "blocks", json_integer(tip->height));
	json_object_set_new(o, "headers", json_integer(best ? best->height : tip->height));
	json_object_set_new(o, "bestblockhash", json_hash(&tip->hash));
	json_object_set_new(o, "bits", json_hex32(tip->bits));
	json_object_set_new(o, "target", json_target(tip->bits));
	json_object_set_new(o, "difficulty", json_double(chain_difficulty(tip->bits)));
	json_object_set_new(o, "time", json_integer(tip->time));
	json_object_set_new(o, "mediantime", json_integer(chain_node_mtp(tip)));
	json_object_set_new(o, "verificationprogress", json_double(progress(c)));
	json_object_set_new(o, "initialblockdownload", json_boolean(chain_in_ibd(c)));
	chain_work_hex(&tip->work, buf);
	json_object_set_new(o, "chainwork", json_string(buf));
	json_object_set_new(o, "size_on_disk", json_integer((json_int_t)blocks_size(x->netdir)));
	ctl_prune_info(c, o);
	if (x->net->signet_challenge) { /* Core: on signet only, before warnings */
		size_t n = x->net->signet_challenge_len;
		char *hex = xmalloc(2 * n + 1);
		if (hex) {
			proto_hex_encode(x->net->signet_challenge, n, hex);
			json_object_set_new(o, "signet_challenge", json_string(hex));
			xfree(hex);
		}
	}
	json_object_set_new(o, "warnings", json_array());
	ok(res, o);
}

static void m_getblockheader(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res)
{
	(void)x;
	struct chain_node *n = param_block(c, arg(args, 0), "hash", res);
	if (!n)
		return;
	bool verbose = param_bool(arg(args, 1), true);
	if (!verbose) {
		struct proto_block_header h;
		struct proto_writer w;
		chain_node_header(n, &h);
		proto_writer_init(&w);
		proto_block_header_encode(&h, &w);
		ok(res, w.err ? NULL : json_hex(w.buf, w.len));
		proto_writer_release(&w);
		return;
	}
	struct proto_block_header h;
	struct json_block_info info;
	chain_node_header(n, &h);
	node_info(c, n, &info);
	ok(res, json_block_header(&h, &info));
}

/* Core's ParseVerbosity: a boolean (true 1, false 0) or getInt<int>. */
static bool param_verbosity(json_t *v, int *out, struct ctl_result *res)
{
	int64_t n;
	if (json_is_boolean(v))
		n = json_is_true(v);
	else if (!param_int(v, 1, &n, res))
		return false;
	*out = (int)n;
	return true;
}

static json_t *block_json(struct chain *c, const struct ctl_chain_ctx *x, struct chain_node *n,
                          struct proto_block *b, int verbosity, struct ctl_result *res)
{
	struct chain_block_undo undo;
	struct json_block_info info;
	chain_block_undo_init(&undo);
	bool have_undo = false;
	/* Fees and prevouts come from the undo data (none for genesis). */
	if (verbosity >= 2 && (n->status & CHAIN_HAVE_UNDO) && n->prev)
		have_undo = chain_read_undo(c, n, &undo) == 0;
	node_info(c, n, &info);
	json_t *o = json_block(b, &info, x->net, verbosity, have_undo ? &undo : NULL);
	chain_block_undo_release(&undo);
	if (!o)
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
	return o;
}

static void m_getblock(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                       struct ctl_result *res)
{
	int verbosity;
	struct chain_node *n = param_block(c, arg(args, 0), "blockhash", res);
	if (!n || !param_verbosity(arg(args, 1), &verbosity, res))
		return;
	if (chain_block_pruned(c, n)) {
		fail(res, CTL_MISC_ERROR, "Block not available (pruned data)");
		return;
	}
	if (!(n->status & CHAIN_HAVE_DATA)) {
		fail(res, CTL_MISC_ERROR, "Block not available (not fully downloaded)");
		return;
	}
	uint8_t *raw = NULL;
	size_t len = 0;
	int err = chain_read_block(c, n, &raw, &len);
	if (err) {
		fail(res, CTL_MISC_ERROR, "Block not found on disk: %s", chain_strerror(err));
		return;
	}
	if (verbosity <= 0) {
		ctl_ok_bytes(x, res, raw, len); /* hex, or the bytes themselves in process */
		return;
	}
	struct proto_block b;
	proto_block_init(&b);
	if (proto_block_decode(raw, len, &b, NULL)) {
		fail(res, CTL_MISC_ERROR, "Block read from disk does not decode");
	} else {
		json_t *o = block_json(c, x, n, &b, verbosity, res);
		if (o)
			ok(res, o);
	}
	proto_block_release(&b);
	xfree(raw);
}

/* ---- getchaintips ----------------------------------------------------------- */

struct tips_walk {
	struct chain *c;
	struct chain_node **v; /**< nodes off the active chain */
	size_t n, cap;
	bool oom;
};

static int collect_off_chain(struct chain_node *n, void *arg)
{
	struct tips_walk *w = arg;
	if (chain_contains(w->c, n))
		return 0;
	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 64;
		struct chain_node **nv = xreallocarray(w->v, ncap, sizeof(*nv));
		if (!nv) {
			w->oom = true;
			return 1;
		}
		w->v = nv;
		w->cap = ncap;
	}
	w->v[w->n++] = n;
	return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (struct chain_node *const *)a;
	uintptr_t y = (uintptr_t) * (struct chain_node *const *)b;
	return x < y ? -1 : x > y;
}

/* Core's order: greater height first; equal heights in a fixed order (by hash here). */
static int cmp_tips(const void *a, const void *b)
{
	const struct chain_node *x = *(struct chain_node *const *)a;
	const struct chain_node *y = *(struct chain_node *const *)b;
	if (x->height != y->height)
		return x->height > y->height ? -1 : 1;
	return memcmp(x->hash.b, y->hash.b, 32);
}

static const char *tip_status(struct chain *c, const struct chain_node *n)
{
	if (chain_contains(c, n))
		return "active";
	if (chain_node_failed(n))
		return "invalid";
	if (!n->linked)
		return "headers-only";
	if (chain_node_level(n) >= CHAIN_VALID_SCRIPTS)
		return "valid-fork";
	if (chain_node_level(n) >= CHAIN_VALID_TREE)
		return "valid-headers";
	return "unknown";
}

static void m_getchaintips(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res)
{
	(void)x;
	(void)args;
	struct tips_walk w = {.c = c};
	(void)chain_index_foreach(chain_get_index(c), collect_off_chain, &w);
	struct chain_node **prevs = w.n ? xcalloc(w.n, sizeof(*prevs)) : NULL;
	struct chain_node **tips = xcalloc(w.n + 1, sizeof(*tips));
	json_t *a = json_array();
	if (w.oom || (w.n && !prevs) || !tips || !a) {
		json_decref(a);
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		goto out;
	}
	/* A node off the active chain is a tip unless another such node
	 * builds on it (Core: setOrphans minus setPrevs). */
	for (size_t i = 0; i < w.n; i++)
		prevs[i] = w.v[i]->prev;
	/* No fork, no array: qsort's base may not be NULL even for 0 (UBSan). */
	if (w.n)
		qsort(prevs, w.n, sizeof(*prevs), cmp_ptr);
	size_t nt = 0;
	tips[nt++] = chain_tip(c);
	for (size_t i = 0; i < w.n; i++) {
		if (!bsearch(&w.v[i], prevs, w.n, sizeof(*prevs), cmp_ptr))
			tips[nt++] = w.v[i];
	}
	qsort(tips, nt, sizeof(*tips), cmp_tips);
	struct chain_node *active_tip = chain_tip(c);
	for (size_t i = 0; i < nt; i++) {
		struct chain_node *t = tips[i];
		struct chain_node *fork = chain_node_fork(t, active_tip);
		json_array_append_new(a, json_pack("{s:i, s:o, s:i, s:s}", "height", (int)t->height,
		                                   "hash", json_hash(&t->hash), "branchlen",
		                                   (int)(t->height - (fork ? fork->height : 0)),
		                                   "status", tip_status(c, t)));
	}
	ok(res, a);
out:
	xfree(prevs);
	xfree(tips);
	xfree(w.v);
}

/* ---- UTXO set ----------------------------------------------------------- */

/*
 * Core's gettxout: with include_mempool (the default) it reads through
 * CCoinsViewMemPool, so a coin a mempool transaction spends is gone and
 * the outputs of a mempool transaction are coins of height MEMPOOL_HEIGHT
 * (0 confirmations, never coinbase); a mempool transaction shadows the
 * UTXO set entirely, so one of its indexes past the last output is null.
 * Without include_mempool, the UTXO set alone.
 */
static void m_gettxout(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                       struct ctl_result *res)
{
	struct proto_outpoint op;
	int64_t n;
	/* Core reads n with getInt<uint32_t>. */
	if (!param_hash(arg(args, 0), "txid", &op.txid, res) ||
	    !ctl_arg_int(arg(args, 1), 0, UINT32_MAX, 0, &n, res))
		return;
	bool mempool = param_bool(arg(args, 2), true);
	op.n = (uint32_t)n;
	struct chain_coin coin;
	int32_t confirmations = -1; /* -1: from the UTXO set */
	if (mempool && mempool_spender(x->mempool, &op)) {
		ok(res, json_null());
		return;
	}
	const struct mempool_entry *e = mempool ? mempool_find(x->mempool, &op.txid, false) : NULL;
	if (e) {
		const struct proto_tx *tx = mempool_entry_tx(e);
		if (op.n >= tx->n_out) {
			ok(res, json_null());
			return;
		}
		const struct proto_txout *o = &tx->vout[op.n];
		memset(&coin, 0, sizeof(coin));
		coin.value = o->value;
		coin.script = proto_txout_script(tx, o);
		coin.script_len = o->script_len;
		confirmations = 0;
	} else {
		int err = chain_coins_get(chain_get_coins(c), &op, &coin);
		if (err == CHAIN_ENOTFOUND) {
			ok(res, json_null());
			return;
		}
		if (err) {
			fail(res, CTL_MISC_ERROR, "reading the coin: %s", chain_strerror(err));
			return;
		}
	}
	struct chain_node *tip = chain_tip(c);
	if (confirmations < 0)
		confirmations = tip->height - (int32_t)coin.height + 1;
	json_t *o = json_object();
	if (!o) {
		ok(res, NULL);
		return;
	}
	json_object_set_new(o, "bestblock", json_hash(&tip->hash));
	json_object_set_new(o, "confirmations", json_integer(confirmations));
	json_object_set_new(o, "value", json_amount(coin.value));
	json_object_set_new(o, "scriptPubKey",
	                    json_script_pubkey(coin.script, coin.script_len, x->net));
	json_object_set_new(o, "coinbase", json_boolean(coin.coinbase));
	ok(res, o);
}

/* ---- invalidate / reconsider ---------------------------------------------- */

/* invalidateblock and reconsiderblock: a block hash in, null or the error out. */
static void mark_block(struct chain *c, json_t *args, struct ctl_result *res,
                       int (*mark)(struct chain *, struct chain_node *, struct chain_state *))
{
	struct chain_node *n = param_block(c, arg(args, 0), "blockhash", res);
	if (!n)
		return;
	/* Core 29 answers null for genesis and changes nothing: no chain is
	 * left without it, so there is nothing to move the tip to. */
	if (!n->prev && mark == chain_invalidate) {
		ok(res, json_null());
		return;
	}
	struct chain_state st;
	chain_state_clear(&st);
	int err = mark(c, n, &st);
	if (err)
		fail(res, CTL_DATABASE_ERROR, "%s", st.reason[0] ? st.reason : chain_strerror(err));
	else
		ok(res, json_null());
}

static void m_invalidateblock(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                              struct ctl_result *res)
{
	(void)x;
	mark_block(c, args, res, chain_invalidate);
}

static void m_reconsiderblock(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                              struct ctl_result *res)
{
	(void)x;
	mark_block(c, args, res, chain_reconsider);
}

/* ---- submitblock ------------------------------------------------------------ */

/*
 * Core's UpdateUncommittedBlockStructures: a block whose coinbase commits
 * to witnesses (an output starting 6a24aa21a9ed) but carries no witness
 * gets the 32-byte zero witness nonce the commitment is computed with,
 * when segwit is active after the parent. The raw bytes are rebuilt (they
 * are what the store keeps) and decoded again into b. 0, or -1 on OOM or
 * when the rebuilt block does not decode.
 */
static int add_witness_nonce(struct chain *c, uint8_t **raw, size_t *len, struct proto_block *b)
{
	if (b->n_tx == 0)
		return 0;
	struct proto_tx *cb = &b->txs[0];
	if (cb->has_witness || cb->n_in != 1 || proto_block_witness_commitment_index(b) < 0)
		return 0;
	const struct proto_params *p = chain_params(c);
	struct chain_node *prev = chain_index_find(chain_get_index(c), &b->hdr.prev);
	if (!prev || prev->height + 1 < p->segwit_height)
		return 0;
	/* Header and tx count stay; the coinbase is written again with the
	 * witness; every other transaction is copied as it was. */
	struct proto_reader r;
	proto_reader_init(&r, *raw, *len);
	struct proto_block_header h;
	uint64_t n_tx;
	if (proto_block_header_decode(&r, &h) || proto_read_compact(&r, UINT32_MAX, &n_tx))
		return -1;
	size_t cb_start = proto_reader_offset(&r);
	size_t cb_end = cb_start + cb->size;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_write_bytes(&w, *raw, cb_start);
	proto_write_bytes(&w, *raw + cb_start, 4); /* version */
	proto_write_u8(&w, 0x00);                  /* BIP144 marker */
	proto_write_u8(&w, 0x01);                  /* flag */
	proto_write_bytes(&w, *raw + cb_start + 4, cb->size - 8);
	proto_write_u8(&w, 1);  /* one witness item for the one input */
	proto_write_u8(&w, 32); /* of 32 bytes */
	static const uint8_t zero[32];
	proto_write_bytes(&w, zero, 32);
	proto_write_bytes(&w, *raw + cb_end - 4, 4); /* locktime */
	proto_write_bytes(&w, *raw + cb_end, *len - cb_end);
	if (w.err) {
		proto_writer_release(&w);
		return -1;
	}
	xfree(*raw);
	*raw = w.buf;
	*len = w.len;
	w.buf = NULL;
	proto_writer_release(&w);
	return proto_block_decode(*raw, *len, b, NULL) ? -1 : 0;
}

static void m_submitblock(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                          struct ctl_result *res)
{
	(void)x;
	json_t *hex = arg(args, 0);
	size_t hl = json_string_length(hex);
	uint8_t *raw = xmalloc(hl / 2 + 1);
	size_t len = 0;
	struct proto_block b;
	proto_block_init(&b);
	if (!raw) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (proto_hex_decode(json_string_value(hex), hl, raw, hl / 2 + 1, &len) ||
	    proto_block_decode(raw, len, &b, NULL)) {
		fail(res, CTL_DESERIALIZATION_ERROR, "Block decode failed");
		goto out;
	}
	if (add_witness_nonce(c, &raw, &len, &b)) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		goto out;
	}
	enum chain_submit result;
	struct chain_state st;
	chain_state_clear(&st);
	int err = chain_submit_block(c, raw, len, &b, &result, &st);
	if (err) {
		fail(res, CTL_MISC_ERROR, "submitblock: %s", chain_strerror(err));
		goto out;
	}
	switch (result) {
	case CHAIN_SUBMIT_ACCEPTED:
		ok(res, json_null());
		break;
	case CHAIN_SUBMIT_DUPLICATE:
		ok(res, json_string("duplicate"));
		break;
	case CHAIN_SUBMIT_DUPLICATE_INVALID:
		ok(res, json_string("duplicate-invalid"));
		break;
	case CHAIN_SUBMIT_INCONCLUSIVE:
		ok(res, json_string("inconclusive"));
		break;
	case CHAIN_SUBMIT_REJECTED:
	default:
		ok(res, json_string(st.reason[0] ? st.reason : "rejected"));
		break;
	}
out:
	proto_block_release(&b);
	xfree(raw);
}

/* ---- verifychain -------------------------------------------------------- */

/* Core's VerifyDB: chain_verify does every level (0-4); false when a block fails. */
static void m_verifychain(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                          struct ctl_result *res)
{
	int64_t level, nblocks;
	if (!param_int(arg(args, 0), 3, &level, res) || !param_int(arg(args, 1), 6, &nblocks, res))
		return;
	/* Core's VerifyDB clamps the level to 0-4 and checks the whole chain
	 * for a depth of 0 or less. */
	level = level < 0 ? 0 : level > 4 ? 4 : level;
	(void)x;
	struct chain_state st;
	int err = chain_verify(c, (int)level, nblocks < 0 ? 0 : (int32_t)nblocks, &st);
	if (err && err != CHAIN_EINVALID) {
		fail(res, CTL_DATABASE_ERROR, "verifychain: %s", chain_strerror(err));
		return;
	}
	/* chain/ logged why, as Core does; stopped at pruned blocks is false too. */
	bool good = err == 0 && strcmp(st.reason, CHAIN_VERIFY_MISSING) != 0;
	ok(res, json_boolean(good));
}

/* ---- getstats' chain part ------------------------------------------------------ */

/* getmempoolinfo's figures (fees in sat/kvB) and the mempool's and script cache's counters. */
static json_t *getstats_mempool(struct mempool *mp)
{
	struct mempool_info in;
	struct mempool_stats ms;
	mempool_get_info(mp, &in);
	mempool_get_stats(mp, &ms);
	json_t *o = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "size",
	    (json_int_t)in.size, "bytes", (json_int_t)in.bytes, "usage", (json_int_t)in.usage,
	    "total_fee", (json_int_t)in.total_fee, "maxmempool", (json_int_t)in.maxmempool,
	    "mempoolminfee", (json_int_t)in.mempoolminfee, "minrelaytxfee",
	    (json_int_t)in.minrelaytxfee, "accepted", (json_int_t)ms.accepted, "rejected",
	    (json_int_t)ms.rejected, "replaced", (json_int_t)ms.replaced, "evicted",
	    (json_int_t)ms.evicted, "expired", (json_int_t)ms.expired, "mined",
	    (json_int_t)ms.mined, "conflicted", (json_int_t)ms.conflicted, "accept_ms",
	    (json_int_t)(ms.accept_ns / 1000000u));
	json_t *sc = json_pack("{s:I, s:I, s:I, s:I}", "hits", (json_int_t)ms.script_cache_hits,
	                       "misses", (json_int_t)ms.script_cache_misses, "entries",
	                       (json_int_t)ms.script_cache_entries, "capacity",
	                       (json_int_t)ms.script_cache_capacity);
	if (o)
		json_object_set_new(o, "script_cache", sc ? sc : json_null());
	else
		json_decref(sc);
	return o ? o : json_null();
}

void ctl_chain_getstats(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                        struct ctl_result *res)
{
	(void)args;
	struct chain_stats s;
	chain_get_stats(c, &s);
	struct chain_checker *ck = chain_get_checker(c);
	struct pool_queue_stats qs;
	chain_checker_stats(ck, &qs);
	struct chain_coins *coins = chain_get_coins(c);
	json_t *chain = json_pack(
	    "{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "height", (int)chain_height(c),
	    "blocks_connected", (json_int_t)s.blocks_connected, "blocks_disconnected",
	    (json_int_t)s.blocks_disconnected, "blocks_rejected", (json_int_t)s.blocks_rejected,
	    "reorgs", (json_int_t)s.reorgs, "flushes", (json_int_t)s.flushes, "replayed",
	    (json_int_t)s.replayed, "connect_ms", (json_int_t)(s.connect_ns / 1000000u),
	    "index_nodes", (json_int_t)s.index_nodes, "index_bytes", (json_int_t)s.index_memory);
	/* Blocks connected without their scripts (assumevalid): a test sees the rule fire. */
	if (chain)
		json_object_set_new(chain, "blocks_assumed_valid",
		                    json_integer((json_int_t)s.blocks_assumed_valid));
	json_t *cache = json_pack("{s:I, s:I, s:I}", "bytes", (json_int_t)chain_coins_memory(coins),
	                          "entries", (json_int_t)chain_coins_cached(coins), "dirty",
	                          (json_int_t)chain_coins_dirty(coins));
	json_t *o = json_pack("{s:o, s:o, s:o}", "chain", chain ? chain : json_null(),
	                      "coins_cache", cache ? cache : json_null(), "checkqueue",
	                      stats_checkqueue_json(&qs, chain_checker_workers(ck)));
	if (o)
		json_object_set_new(o, "mempool", getstats_mempool(x->mempool));
	ok(res, o);
}

/* ---- the table ------------------------------------------------------------ */

const struct ctl_method ctl_chain_methods[] = {
    {"getblockchaininfo",
     NULL,
     {{0}},
     "getblockchaininfo",
     "The active chain: chain, blocks, headers, bestblockhash, bits, target, difficulty, time, "
     "mediantime, verificationprogress, initialblockdownload, chainwork, size_on_disk, pruned, "
     "pruneheight, automatic_pruning, prune_target_size (under -prune), signet_challenge (signet "
     "only), warnings.",
     m_getblockchaininfo,
     daemon_warnings_finish},
    {"getblockcount",
     NULL,
     {{0}},
     "getblockcount",
     "Height of the active chain's tip.",
     m_getblockcount,
     NULL},
    {"getbestblockhash",
     NULL,
     {{0}},
     "getbestblockhash",
     "Hash of the active chain's tip.",
     m_getbestblockhash,
     NULL},
    {"getblockhash",
     NULL,
     {{"height", CTL_ARG_NUM, CTL_REQUIRED}},
     "getblockhash height",
     "Hash of the active chain's block at height (-8 when out of range).",
     m_getblockhash,
     NULL},
    {"getblockheader",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_REQUIRED}, {"verbose", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "getblockheader \"blockhash\" ( verbose )",
     "A header as an object (verbose true, the default) or 80 bytes of hex (false).",
     m_getblockheader,
     NULL},
    {"getblock",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_REQUIRED}, {"verbosity|verbose", CTL_ARG_ANY, CTL_OPTIONAL}},
     "getblock \"blockhash\" ( verbosity )",
     "A stored block: 0 hex; 1 (default) an object with txids; 2 transactions decoded, with "
     "fees from the block's undo data; 3 also each input's prevout.",
     m_getblock,
     NULL},
    {"getchaintips",
     NULL,
     {{0}},
     "getchaintips",
     "Every tip in the block index: height, hash, branchlen, status (active, valid-fork, "
     "valid-headers, headers-only, invalid).",
     m_getchaintips,
     NULL},
    {"getdifficulty",
     NULL,
     {{0}},
     "getdifficulty",
     "Proof-of-work difficulty of the tip, as a multiple of the minimum.",
     m_getdifficulty,
     NULL},
    {"gettxout",
     NULL,
     {{"txid", CTL_ARG_STR, CTL_REQUIRED},
      {"n", CTL_ARG_NUM, CTL_REQUIRED},
      {"include_mempool", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "gettxout \"txid\" n ( include_mempool )",
     "An unspent output, or null. With include_mempool (default true), as Core's: an output a "
     "mempool transaction spends is null, and a mempool transaction's output has "
     "confirmations 0; false: the active chain's UTXO set only.",
     m_gettxout,
     NULL},
    {"gettxoutsetinfo",
     NULL,
     {{"hash_type", CTL_ARG_STR, CTL_OPTIONAL},
      {"hash_or_height", CTL_ARG_ANY, CTL_OPTIONAL},
      {"use_index", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "gettxoutsetinfo ( \"hash_type\" hash_or_height use_index )",
     "Statistics of the UTXO set, as Core's: height, bestblock, txouts, bogosize, "
     "hash_serialized_3 or muhash (hash_type hash_serialized_3, the default, muhash or none), "
     "total_amount, then transactions and disk_size (computed over the set at the tip, "
     "flushed first) or, from -coinstatsindex for muhash and none (use_index, default true), "
     "total_unspendable_amount and block_info; hash_or_height (with the index) a block's.",
     ctl_m_gettxoutsetinfo,
     NULL},
    {"invalidateblock",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_REQUIRED}},
     "invalidateblock \"blockhash\"",
     "Mark a block and its descendants invalid and move the tip off them.",
     m_invalidateblock,
     NULL},
    {"reconsiderblock",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_REQUIRED}},
     "reconsiderblock \"blockhash\"",
     "Clear invalidateblock's marks on a block, its ancestors and descendants, and activate the "
     "best chain.",
     m_reconsiderblock,
     NULL},
    {"submitblock",
     NULL,
     {{"hexdata", CTL_ARG_STR, CTL_REQUIRED}, {"dummy", CTL_ARG_STR, CTL_OPTIONAL}},
     "submitblock \"hexdata\" ( \"dummy\" )",
     "Validate and store a block: null when accepted, else duplicate, duplicate-invalid, "
     "inconclusive or the reject reason. A coinbase witness nonce is added when the block "
     "commits to witnesses without one, as Core does.",
     m_submitblock,
     NULL},
    {"verifychain",
     NULL,
     {{"checklevel", CTL_ARG_NUM, CTL_OPTIONAL}, {"nblocks", CTL_ARG_NUM, CTL_OPTIONAL}},
     "verifychain ( checklevel nblocks )",
     "Check the last nblocks (default 6, 0 all) blocks: level 0 reads them back, 1 runs "
     "CheckBlock, 2 reads and matches their undo data, 3 (the default) disconnects them from "
     "a scratch copy of the coins, 4 connects them again with every rule. The chain is not "
     "changed. true, or false with the reason in the log.",
     m_verifychain,
     NULL},
    {"getindexinfo",
     NULL,
     {{"index_name", CTL_ARG_STR, CTL_OPTIONAL}},
     "getindexinfo ( \"index_name\" )",
     "The state of each index (-txindex, -blockfilterindex), or of the one named: synced and "
     "best_block_height.",
     ctl_m_getindexinfo,
     NULL},
    {"pruneblockchain",
     NULL,
     {{"height", CTL_ARG_NUM, CTL_REQUIRED}},
     "pruneblockchain height",
     "Delete the block and undo files whose blocks are all at or below height (or a block "
     "time, when above 1000000000); never the last 288 blocks. Needs -prune. Answers the "
     "height of the last block pruned (-1: none).",
     ctl_m_pruneblockchain,
     NULL},
    {"getblockfilter",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_REQUIRED}, {"filtertype", CTL_ARG_STR, CTL_OPTIONAL}},
     "getblockfilter \"blockhash\" ( \"filtertype\" )",
     "A block's BIP158 filter (filtertype basic, the default) and its BIP157 header, from "
     "-blockfilterindex.",
     ctl_m_getblockfilter,
     NULL},
};

const size_t ctl_n_chain_methods = sizeof(ctl_chain_methods) / sizeof(ctl_chain_methods[0]);
