/*
 * daemon/ctl/mining_methods.c: generatetoaddress and generateblock, as Bitcoin
 * Core 29's rpc/mining.cpp has them. Like every chain method they run on
 * the validation thread (ctl/request.c posts them there), so a block is made,
 * checked and connected with nothing else touching the chain between.
 *
 * The block is mining/miner.c's. generateblock takes raw transactions or
 * txids of mempool transactions, and its coinbase claims the subsidy only,
 * as Core's (its template is made from no mempool, the transactions are
 * added after, so their fees go unclaimed). generatetoaddress fills each
 * block from the mempool as Core's BlockAssembler does
 * (mining_assemble) and claims the fees. What differs from
 * Core: only the raw() and addr() descriptors, which need no wallet, are
 * understood.
 */
#include "daemon/ctl/internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "mining/mining.h"
#include "json/json.h"
#include "script/script.h"

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

/** Longest coinbase output script accepted (Core's MAX_SCRIPT_SIZE). */
#define MINING_MAX_SPK 10000u

/* Core's RPC_INTERNAL_ERROR answer when ProcessNewBlock refuses a block it made. */
static void not_accepted(struct ctl_result *res, const struct chain_state *st)
{
	fail(res, CTL_INTERNAL_ERROR, "ProcessNewBlock, block not accepted: %s",
	     st->reason[0] ? st->reason : "rejected");
}

/* Core's RPC_VERIFY_ERROR text: BlockValidationState::ToString. */
static void test_failed(struct ctl_result *res, const struct chain_state *st)
{
	if (st->debug[0])
		fail(res, CTL_VERIFY_ERROR, "TestBlockValidity failed: %s, %s", st->reason,
		     st->debug);
	else
		fail(res, CTL_VERIFY_ERROR, "TestBlockValidity failed: %s", st->reason);
}

/* A block's mempool transactions (Core's BlockAssembler), serialized into one buffer. */
struct block_txs {
	struct mining_tx *v;
	size_t n;
	struct proto_writer w;
};

static void block_txs_release(struct block_txs *t)
{
	xfree(t->v);
	proto_writer_release(&t->w);
	memset(t, 0, sizeof(*t));
}

/* What a block on the tip takes from the mempool now, within -blockmaxweight,
 * -blockreservedweight and -blockmintxfee. 0 or CHAIN_ENOMEM. */
static int block_txs_fill(struct chain *c, struct mempool *mp, const struct peerd_conf *conf,
                          struct block_txs *t)
{
	struct mining_block_opts o = MINING_BLOCK_OPTS_DEFAULT;
	if (conf) {
		o.max_weight = conf->blockmaxweight;
		o.reserved_weight = conf->blockreservedweight;
		o.min_fee_rate = conf->blockmintxfee;
	}
	const struct mempool_entry **es;
	size_t n;
	int err = mining_assemble(c, mp, &o, &es, &n);
	if (err)
		return err;
	/* getmininginfo's currentblockweight and currentblocktx, as Core's CreateNewBlock sets
	 * them. */
	uint64_t weight = o.reserved_weight;
	for (size_t i = 0; i < n; i++)
		weight += proto_tx_weight(mempool_entry_tx(es[i]));
	ctl_mining_note_block(weight, n);
	t->n = 0;
	t->w.len = 0;
	t->w.err = 0;
	if (!n)
		return 0;
	struct mining_tx *v = xreallocarray(t->v, n, sizeof(*v));
	if (!v) {
		xfree(es);
		return CHAIN_ENOMEM;
	}
	t->v = v;
	/* Lengths first, pointers after: the buffer moves as it grows. */
	for (size_t i = 0; i < n; i++) {
		size_t at = t->w.len;
		proto_tx_encode(mempool_entry_tx(es[i]), &t->w);
		v[i].len = t->w.len - at;
	}
	xfree(es);
	if (t->w.err)
		return CHAIN_ENOMEM;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		v[i].raw = t->w.buf + off;
		off += v[i].len;
	}
	t->n = n;
	return 0;
}

/*
 * Core's generateBlocks: n blocks to spk, each a new template from the
 * mempool, maxtries nonces in all; answers the hashes (fewer when the
 * tries ran out or peerd shuts down).
 */
static void generate_blocks(struct chain *c, const struct ctl_chain_ctx *x, int64_t n,
                            const uint8_t *spk, size_t spk_len, uint64_t max_tries,
                            struct ctl_result *res)
{
	json_t *hashes = json_array();
	if (!hashes) {
		ok(res, NULL);
		return;
	}
	struct mining_args a = {
	    .spk = spk, .spk_len = (uint32_t)spk_len, .submit = true, .interrupt = x->interrupt};
	struct block_txs txs = {0};
	proto_writer_init(&txs.w);
	/* As Core's loop: a shutdown ends it with the blocks so far. */
	while (n > 0 && !(x->interrupt && atomic_load(x->interrupt))) {
		struct mining_block m;
		struct chain_state st;
		/* A new template each time, as Core's: the last block took some. */
		int err = block_txs_fill(c, x->mempool, x->conf, &txs);
		a.txs = txs.v;
		a.n_txs = txs.n;
		if (!err)
			err = mining_generate(c, &a, &max_tries, &m, &st);
		if (err == CHAIN_ENOTFOUND && max_tries > 0)
			continue; /* the nonces ran out: a new template, as Core */
		if (err == CHAIN_ENOTFOUND)
			break; /* out of tries: the blocks so far, as Core */
		if (err == CHAIN_EINVALID) {
			json_decref(hashes);
			test_failed(res, &st);
			goto out;
		}
		if (err) {
			json_decref(hashes);
			fail(res, CTL_INTERNAL_ERROR, "mining failed: %s", chain_strerror(err));
			goto out;
		}
		enum chain_submit r = m.submitted;
		struct proto_hash h = m.hash;
		mining_block_release(&m);
		if (r != CHAIN_SUBMIT_ACCEPTED) {
			json_decref(hashes);
			not_accepted(res, &st);
			goto out;
		}
		json_array_append_new(hashes, json_hash(&h));
		n--;
	}
	ok(res, hashes);
out:
	block_txs_release(&txs);
}
static void m_generatetoaddress(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                struct ctl_result *res)
{
	json_t *addr = arg(args, 1);
	/* Core reads both as int (getInt<int>: out of range is RPC_MISC_ERROR);
	 * a negative maxtries becomes a huge uint64_t, and a count of 0 or
	 * less mines nothing. */
	int64_t n, t;
	if (!ctl_arg_int(arg(args, 0), INT32_MIN, INT32_MAX, 0, &n, res) ||
	    !ctl_arg_int(arg(args, 2), INT32_MIN, INT32_MAX, (int64_t)MINING_MAX_TRIES, &t, res))
		return;
	uint64_t max_tries = (uint64_t)t;
	uint8_t spk[SCRIPT_ADDRESS_SPK_MAX];
	size_t spk_len;
	if (script_address_decode(json_string_value(addr), x->net, spk, sizeof(spk), &spk_len, NULL,
	                          0)) {
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Error: Invalid address");
		return;
	}
	generate_blocks(c, x, n, spk, spk_len, max_tries, res);
}

/* Core's generatetodescriptor: generatetoaddress with a descriptor (raw() and
 * addr() here: peerd has no wallet to expand the key ones) and maxtries read
 * as an unsigned 64-bit number. */
static void m_generatetodescriptor(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                                   struct ctl_result *res)
{
	json_t *desc = arg(args, 1);
	int64_t n, t;
	if (!ctl_arg_int(arg(args, 0), INT32_MIN, INT32_MAX, 0, &n, res) ||
	    !ctl_arg_int(arg(args, 2), 0, INT64_MAX, (int64_t)MINING_MAX_TRIES, &t, res))
		return;
	uint8_t spk[MINING_MAX_SPK];
	size_t spk_len;
	char why[sizeof(res->err_msg)]; /* Core quotes the whole descriptor */
	if (script_descriptor_parse(json_string_value(desc), x->net, spk, sizeof(spk), &spk_len,
	                            why, sizeof(why))) {
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "%s", why);
		return;
	}
	generate_blocks(c, x, n, spk, spk_len, (uint64_t)t, res);
}

/* Whether s[0..n) are all hex digits (Core's IsHex also wants n even, not 0). */
static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		      (ch >= 'A' && ch <= 'F')))
			return false;
	}
	return true;
}

/* Core's submitheader: one header into the index (not the block), after its parent. */
static void m_submitheader(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res)
{
	(void)x;
	json_t *hex = arg(args, 0);
	/* Core's DecodeHexBlockHeader: even-length hex; bytes past the 80 are ignored. */
	size_t hl = json_string_length(hex);
	uint8_t raw[PROTO_BLOCK_HEADER_SIZE];
	size_t len = 0;
	struct proto_block_header h;
	struct proto_reader r;
	bool ok_hex = hl > 0 && hl % 2 == 0 && all_hex(json_string_value(hex), hl);
	size_t take = hl < 2 * sizeof(raw) ? hl : 2 * sizeof(raw);
	if (ok_hex && proto_hex_decode(json_string_value(hex), take, raw, sizeof(raw), &len) == 0) {
		proto_reader_init(&r, raw, len);
		ok_hex = proto_block_header_decode(&r, &h) == 0;
	} else {
		ok_hex = false;
	}
	if (!ok_hex) {
		fail(res, CTL_DESERIALIZATION_ERROR, "Block header decode failed");
		return;
	}
	if (!chain_index_find(chain_get_index(c), &h.prev)) {
		char ph[65];
		proto_hash_to_hex(&h.prev, ph);
		fail(res, CTL_VERIFY_ERROR, "Must submit previous header (%s) first", ph);
		return;
	}
	struct chain_node *last;
	struct chain_state st;
	chain_state_clear(&st);
	int err = chain_accept_headers(c, &h, 1, &last, &st);
	if (err == CHAIN_EINVALID)
		fail(res, CTL_VERIFY_ERROR, "%s", st.reason);
	else if (err)
		fail(res, CTL_VERIFY_ERROR, "%s", chain_strerror(err));
	else
		ok(res, json_null());
}

/*
 * generateblock's output: a descriptor first, then an address, as Core's
 * getScriptFromDescriptor and DecodeDestination. false with res set.
 */
static bool output_script(json_t *v, const struct proto_params *net, uint8_t *spk, size_t *len,
                          struct ctl_result *res)
{
	const char *s = json_string_value(v);
	char why[SCRIPT_ADDRESS_WHY_MAX];
	int rc = script_descriptor_parse(s, net, spk, MINING_MAX_SPK, len, why, sizeof(why));
	if (rc == 0)
		return true;
	if (script_address_decode(s, net, spk, MINING_MAX_SPK, len, NULL, 0) == 0)
		return true;
	if (rc == SCRIPT_ADDRESS_ENONE)
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Error: Invalid address or descriptor (%s)",
		     why);
	else
		fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Error: Invalid address or descriptor");
	return false;
}

/* Whether s is 64 hex digits: Core reads it as a txid, not a transaction. */
static bool is_txid(const char *s, size_t n)
{
	return n == 64 && all_hex(s, n);
}

/*
 * The transactions parameter into raw bytes: a txid is the mempool
 * transaction of that txid (Core's mempool.get), anything else must decode
 * (Core's DecodeHexTx). *out and its bytes are xmalloc'd: free with
 * free_txs. false with res set.
 */
static bool param_txs(struct mempool *mp, json_t *v, struct mining_tx **out, size_t *n,
                      struct ctl_result *res)
{
	*out = NULL;
	*n = 0;
	size_t count = json_array_size(v);
	struct mining_tx *txs = count ? xcalloc(count, sizeof(*txs)) : NULL;
	if (count && !txs) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return false;
	}
	*out = txs;
	struct proto_tx tx;
	proto_tx_init(&tx);
	bool good = true;
	for (size_t i = 0; good && i < count; i++) {
		json_t *e = json_array_get(v, i);
		if (!ctl_json_want(e, CTL_ARG_STR, res)) {
			good = false;
			break;
		}
		const char *s = json_string_value(e);
		size_t sl = json_string_length(e);
		if (is_txid(s, sl)) {
			struct proto_hash id;
			uint8_t *raw = NULL;
			size_t len = 0;
			int err = proto_hash_from_hex(s, &id)
			              ? CHAIN_ENOTFOUND
			              : mempool_get_raw(mp, &id, false, &raw, &len);
			if (err == CHAIN_ENOTFOUND)
				fail(res, CTL_INVALID_ADDRESS_OR_KEY,
				     "Transaction %s not in mempool.", s);
			else if (err)
				fail(res, CTL_INTERNAL_ERROR, "out of memory");
			if (err) {
				good = false;
				break;
			}
			txs[i].raw = raw;
			txs[i].len = len;
			(*n)++;
			continue;
		}
		uint8_t *raw = xmalloc(sl / 2 + 1);
		size_t len = 0;
		if (!raw) {
			fail(res, CTL_INTERNAL_ERROR, "out of memory");
			good = false;
			break;
		}
		txs[i].raw = raw;
		(*n)++;
		/* A transaction without inputs reads as a witness marker inside a
		 * block: Core's hint says so, and so peerd refuses it here (Core
		 * decodes it and TestBlockValidity says bad-txns-vin-empty). */
		if (sl == 0 || proto_hex_decode(s, sl, raw, sl / 2 + 1, &len) ||
		    proto_tx_decode_buf(raw, len, &tx, NULL) || tx.n_in == 0) {
			fail(res, CTL_DESERIALIZATION_ERROR,
			     "Transaction decode failed for %s. Make sure the tx has at least one "
			     "input.",
			     s);
			good = false;
			break;
		}
		txs[i].len = len;
	}
	proto_tx_release(&tx);
	return good;
}

static void free_txs(struct mining_tx *txs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xfree((void *)txs[i].raw);
	xfree(txs);
}

static void m_generateblock(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	uint8_t *spk = xmalloc(MINING_MAX_SPK);
	size_t spk_len = 0, n_txs = 0;
	struct mining_tx *txs = NULL;
	json_t *submit_v = arg(args, 2);
	if (!spk) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (!output_script(arg(args, 0), x->net, spk, &spk_len, res) ||
	    !param_txs(x->mempool, arg(args, 1), &txs, &n_txs, res))
		goto out;
	bool submit = !submit_v || json_is_true(submit_v);
	/* Core's generateblock assembles from no mempool, then adds the transactions. */
	ctl_mining_note_block(
	    x->conf ? x->conf->blockreservedweight : MINING_BLOCK_RESERVED_WEIGHT_DEFAULT, 0);
	struct mining_args a = {
	    .spk = spk,
	    .spk_len = (uint32_t)spk_len,
	    .txs = txs,
	    .n_txs = n_txs,
	    .submit = submit,
	    .subsidy_only = true,
	    .interrupt = x->interrupt,
	};
	uint64_t max_tries = MINING_MAX_TRIES;
	struct mining_block m;
	struct chain_state st;
	int err = mining_generate(c, &a, &max_tries, &m, &st);
	if (err == CHAIN_EINVALID) {
		test_failed(res, &st);
		goto out;
	}
	if (err == CHAIN_ENOTFOUND) {
		fail(res, CTL_MISC_ERROR, "Failed to make block.");
		goto out;
	}
	if (err == CHAIN_EARG) {
		fail(res, CTL_DESERIALIZATION_ERROR,
		     "Block with these transactions does not decode");
		goto out;
	}
	if (err) {
		fail(res, CTL_INTERNAL_ERROR, "mining failed: %s", chain_strerror(err));
		goto out;
	}
	if (submit && m.submitted != CHAIN_SUBMIT_ACCEPTED) {
		not_accepted(res, &st);
	} else {
		json_t *o = json_object();
		if (o) {
			json_object_set_new(o, "hash", json_hash(&m.hash));
			if (!submit)
				json_object_set_new(o, "hex", json_hex(m.raw, m.len));
		}
		ok(res, o);
	}
	mining_block_release(&m);
out:
	free_txs(txs, n_txs);
	xfree(spk);
}

const struct ctl_method ctl_mining_methods[] = {
    {"generateblock",
     NULL,
     {{"output", CTL_ARG_STR, CTL_REQUIRED},
      {"transactions", CTL_ARG_ARR, CTL_REQUIRED},
      {"submit", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "generateblock \"output\" [\"rawtx/txid\",...] ( submit )",
     "Mine a block on the tip with these transactions, in order: raw, or the txid of a mempool "
     "transaction. The coinbase pays the subsidy only (the fees go unclaimed, as Core's) to "
     "output: an address, or a raw(HEX) or addr(ADDRESS) descriptor. Returns {\"hash\"}, and "
     "\"hex\" (the block, not submitted) when submit is false.",
     m_generateblock,
     NULL},
    {"generatetodescriptor",
     NULL,
     {{"num_blocks", CTL_ARG_NUM, CTL_REQUIRED},
      {"descriptor", CTL_ARG_STR, CTL_REQUIRED},
      {"maxtries", CTL_ARG_NUM, CTL_OPTIONAL}},
     "generatetodescriptor num_blocks \"descriptor\" ( maxtries )",
     "generatetoaddress with the coinbase paying to a descriptor: raw(HEX) or addr(ADDRESS) "
     "(the key descriptors need a wallet, which peerd has not), checksum optional. Returns the "
     "block hashes.",
     m_generatetodescriptor,
     NULL},
    {"submitheader",
     NULL,
     {{"hexdata", CTL_ARG_STR, CTL_REQUIRED}},
     "submitheader \"hexdata\"",
     "Add a block header (80 bytes, hex) to the index, as Core: its parent must be known "
     "(-25 \"Must submit previous header (hash) first\"), an invalid one answers -25 with the "
     "reject reason. null on success; the block itself can follow by submitblock or a peer.",
     m_submitheader,
     NULL},
    {"generatetoaddress",
     NULL,
     {{"nblocks", CTL_ARG_NUM, CTL_REQUIRED},
      {"address", CTL_ARG_STR, CTL_REQUIRED},
      {"maxtries", CTL_ARG_NUM, CTL_OPTIONAL}},
     "generatetoaddress nblocks \"address\" ( maxtries )",
     "Mine nblocks blocks on the tip to address (any network; meant for regtest), trying at "
     "most maxtries nonces in all (default 1000000). Returns the block hashes (fewer when the "
     "tries ran out). Each block takes what Core's BlockAssembler would from the mempool "
     "(best ancestor feerate first, prioritisetransaction counted, 1 sat/vB at least) and "
     "its coinbase claims their fees.",
     m_generatetoaddress,
     NULL},
    {"getdeploymentinfo",
     NULL,
     {{"blockhash", CTL_ARG_STR, CTL_OPTIONAL}},
     "getdeploymentinfo ( \"blockhash\" )",
     "Deployment status at a block (default the tip), as Core's: the buried soft forks "
     "(bip34, bip66, bip65, csv, segwit: active for the block after it) and the BIP9 ones "
     "(testdummy on regtest, taproot) with their state, the next block's, since when, and "
     "while signalling the period's statistics and a '#'/'-' string of its blocks.",
     ctl_m_getdeploymentinfo,
     NULL},
    {"getblocktemplate",
     NULL,
     {{"template_request", CTL_ARG_OBJ, CTL_REQUIRED}},
     "getblocktemplate {\"mode\":\"str\",\"capabilities\":[\"str\",...],\"rules\":[\"segwit\","
     "\"str\",...],\"longpollid\":\"str\",\"data\":\"hex\"}",
     "A block template as Core's (BIPs 22, 23, 9 and 145): the transactions Core's "
     "BlockAssembler would choose with fee, sigops, weight and depends, coinbasevalue, the "
     "default witness commitment, version with the BIP9 deployments signalled, rules, "
     "vbavailable, target, bits, mintime, curtime. \"rules\" must hold \"segwit\". Kept until "
     "the tip changes, or the mempool changed and 5 s passed, as Core's. mode \"proposal\" with "
     "\"data\" (a block on the tip) answers null when it is valid, else the reject reason. A "
     "longpollid naming the tip waits until the tip changes, or a minute passed and the "
     "mempool changed (checked every 10 s after), as Core's.",
     ctl_m_getblocktemplate,
     NULL},
    {"getmininginfo",
     NULL,
     {{0}},
     "getmininginfo",
     "Mining-related information as Core's: blocks, currentblockweight and currentblocktx (of "
     "the last block assembled), bits, difficulty, target, networkhashps (last 120 blocks), "
     "pooledtx, chain, next (height, bits, difficulty, target), warnings.",
     ctl_m_getmininginfo,
     daemon_warnings_finish},
    {"getnetworkhashps",
     NULL,
     {{"nblocks", CTL_ARG_NUM, CTL_OPTIONAL}, {"height", CTL_ARG_NUM, CTL_OPTIONAL}},
     "getnetworkhashps ( nblocks height )",
     "The estimated network hashes per second, as Core's: the work of the nblocks blocks "
     "(default 120, -1 since the last difficulty change) before the block at height (default "
     "-1, the tip) over the time they span.",
     ctl_m_getnetworkhashps,
     NULL},
};

const size_t ctl_n_mining_methods = sizeof(ctl_mining_methods) / sizeof(ctl_mining_methods[0]);
