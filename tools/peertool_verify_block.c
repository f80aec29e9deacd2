/*
 * tools/peertool_verify_block.c: verify-block. Every input script of a
 * block runs as one job on the pool/ check queue against outputs from the
 * prevouts file (tools/peertool_prevouts.c) or, with --utxo, a chain's
 * UTXO set; outputs created earlier in the block satisfy later inputs
 * without either. Options, help and the report's pieces are
 * tools/peertool_verify.c's.
 *
 * verify-block also runs the block rules around the scripts, each verdict
 * Core's reject reason: all of CheckBlock (proof of work unless --no-pow,
 * merkle root, sizes, coinbase, every transaction, legacy sigops), then
 * ContextualCheckBlock. Without a chain the contextual checks get a
 * stand-in parent at the block's height (--height or BIP34) whose
 * median time is just under the block's own: a lock time is called
 * non-final only when it is for certain. With --utxo DATADIR the parent
 * comes from that chain's index, the header's contextual checks run too,
 * the spent outputs come from its UTXO set (no prevouts file), and the
 * whole of ConnectBlock runs in just-check mode (Core's TestBlockValidity):
 * the block must build on that chain's tip, and nothing is written.
 *
 * A block's flags are Bitcoin Core's GetBlockScriptFlags for its height on
 * --chain: given with --height, else read from the coinbase's BIP34 push,
 * else unknown, when today's consensus set applies. --flags overrides.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "chain/chain.h"
#include "pool/pool.h"
#include "script/script.h"
#include "base/opt.h"
#include "tools/peertool.h"
#include "json/json.h"
#include "tools/peertool_verify.h"

/** Longest BIP34 height push: 4 bytes hold every non-negative int32. */
#define VERIFY_BIP34_MAX_PUSH 4u
/**
 * Missing spent outputs named one by one; the rest are counted. A mainnet
 * block given no prevouts named all 4,599 before its verdict (issue 18).
 */
#define VERIFY_MISSING_NAMED 10u

/* ---- block height: --height, or the coinbase's BIP34 push (flags: chain/rules.c) --- */

/* Where a block's height came from; names as printed in "height_source". */
enum height_source { HEIGHT_UNKNOWN, HEIGHT_OPTION, HEIGHT_BIP34, HEIGHT_PARENT };
static const char *const HEIGHT_SOURCE_NAMES[] = {"unknown", "option", "bip34", "parent"};

/*
 * BIP34's height in a coinbase scriptSig: only when it starts with exactly
 * the bytes Core's check wants, `CScript() << height` (OP_0, OP_1..OP_16,
 * else a minimal little-endian push), so any height read here is one Core
 * would accept. 0 with *height set, or -1.
 */
static int bip34_height(const uint8_t *s, size_t len, int64_t *height)
{
	if (len == 0)
		return -1;
	uint8_t op = s[0];
	if (op == 0x00) { /* OP_0 */
		*height = 0;
		return 0;
	}
	if (op >= 0x51 && op <= 0x60) { /* OP_1..OP_16 */
		*height = op - 0x50;
		return 0;
	}
	if (op < 1 || op > VERIFY_BIP34_MAX_PUSH || len - 1 < op)
		return -1;
	const uint8_t *num = s + 1;
	/* Minimal: no zero top byte unless it holds the sign of the one below;
	 * a set sign bit is a negative number, never a height. */
	if (num[op - 1] & 0x80)
		return -1;
	if (num[op - 1] == 0 && (op == 1 || !(num[op - 2] & 0x80)))
		return -1;
	int64_t v = 0;
	for (unsigned i = 0; i < op; i++)
		v |= (int64_t)num[i] << (8 * i);
	if (v <= 16) /* Core writes these as an opcode, never as a push */
		return -1;
	*height = v;
	return 0;
}

/* The height from the coinbase of a version >= 2 block (BIP34), or -1. */
static int64_t block_bip34_height(const struct proto_block *b)
{
	int64_t h;
	if (b->hdr.version < 2 || b->n_tx == 0 || !proto_tx_is_coinbase(&b->txs[0]))
		return -1;
	const struct proto_tx *cb = &b->txs[0];
	if (bip34_height(proto_txin_script(cb, &cb->vin[0]), cb->vin[0].script_len, &h))
		return -1;
	return h;
}

/* ---- verify-block ---------------------------------------------------------------- */

/* One input check on the queue: plain data, valid after memcpy. */
struct verify_job {
	uint32_t tx;
	uint32_t in;
	const struct script_spent_output *spent; /* into the round's spent array */
	int32_t *result;                         /* this input's slot in the results array */
};

struct verify_round {
	const struct proto_block *b;
	const struct script_precomputed *pre; /* per tx */
	uint32_t flags;
};

/* Never fails the round: every input gets its own result, so a failure
 * does not skip the others. */
static int verify_job_run(void *job, void *arg)
{
	const struct verify_job *j = job;
	const struct verify_round *r = arg;
	int err;
	int rc =
	    script_verify_input(&r->b->txs[j->tx], j->in, j->spent, r->flags, &r->pre[j->tx], &err);
	*j->result = rc ? err : SCRIPT_ERR_OK;
	return 0;
}

static int queue_par(int par)
{
	if (par == 0)
		return POOL_PAR_AUTO;
	if (par == 1)
		return POOL_PAR_NONE;
	return par - 1; /* the controller is one of the threads */
}

/*
 * Resolve every input's spent output, in block order: an output of an
 * earlier transaction of the block, else the prevouts file. The missing
 * ones are counted in *missing and the first `named` of them printed.
 * 0 when none is missing, 1 when some are, -1 after printing that memory
 * ran out.
 */
static int resolve_block(const char *cmd, struct proto_block *b, struct prevmap *m,
                         struct script_spent_output *spent, const size_t *first_in, size_t named,
                         size_t *missing)
{
	struct prevmap in_block;
	size_t outs = 0;
	int rc = -1;
	*missing = 0;
	for (uint32_t t = 0; t < b->n_tx; t++)
		outs += b->txs[t].n_out;
	if (peertool_prevmap_init(&in_block, outs)) {
		peertool_error(cmd, "out of memory");
		return -1;
	}
	for (uint32_t t = 0; t < b->n_tx; t++) {
		struct proto_tx *tx = &b->txs[t];
		if (!(t == 0 && proto_tx_is_coinbase(tx))) {
			for (uint32_t i = 0; i < tx->n_in; i++) {
				const struct prev_entry *e =
				    peertool_prevmap_get(&in_block, &tx->vin[i].prevout);
				if (!e)
					e = peertool_prevmap_get(m, &tx->vin[i].prevout);
				if (!e && *missing < named) {
					char hex[65];
					proto_hash_to_hex(&tx->vin[i].prevout.txid, hex);
					peertool_error(cmd,
					               "missing prevout %s:%" PRIu32 " (tx %" PRIu32
					               " input %" PRIu32 ")",
					               hex, tx->vin[i].prevout.n, t, i);
				}
				if (!e) {
					++*missing;
					continue;
				}
				spent[first_in[t] + i] = e->out;
			}
		}
		proto_tx_compute_ids(tx);
		for (uint32_t o = 0; o < tx->n_out; o++) {
			struct prev_entry e = {0};
			e.op.txid = tx->txid;
			e.op.n = o;
			e.out.amount = tx->vout[o].value;
			e.out.script = proto_txout_script(tx, &tx->vout[o]);
			e.out.script_len = tx->vout[o].script_len;
			if (peertool_prevmap_put(&in_block, &e)) {
				peertool_error(cmd, "out of memory");
				goto out;
			}
		}
	}
	rc = *missing ? 1 : 0;
out:
	peertool_prevmap_release(&in_block);
	return rc;
}

/* Run every job on the check queue; 0, or 1 after printing why not. */
static int run_jobs(const char *cmd, int par, struct verify_round *round, struct pool_vec *jobs)
{
	struct pool_queue *q = NULL;
	struct pool_queue_config cfg = {
	    .job_size = sizeof(struct verify_job),
	    .run = verify_job_run,
	    .release = NULL,
	    .par = queue_par(par),
	};
	int err = pool_queue_new(&q, &cfg);
	if (err) {
		peertool_error(cmd, "cannot start the check queue: %s", pool_strerror(err));
		return 1;
	}
	pool_queue_begin(q, round);
	err = pool_queue_take_vec(q, jobs);
	int verdict = pool_queue_complete(q);
	pool_queue_free(q);
	if (err) {
		peertool_error(cmd, "cannot queue jobs: %s", pool_strerror(err));
		return 1;
	}
	(void)verdict; /* jobs never fail the round; results carry the verdicts */
	return 0;
}

/* ---- the block rules around the scripts ---------------------------------------- */

/* What each stage said: "ok", Core's reject reason, or why it did not run. */
struct block_checks {
	char check[CHAIN_REASON_MAX];   /* CheckBlock */
	char context[CHAIN_REASON_MAX]; /* Contextual{CheckBlockHeader,CheckBlock} */
	char connect[CHAIN_REASON_MAX]; /* ConnectBlock, just checking (--utxo only) */
	const char *reject;             /* the first reason, or NULL */
	bool unsure;                    /* a stage that matters could not run */
	struct chain_node parent;       /* the stand-in parent without --utxo */
};

/* Record a stage's result; the first rejection is the block's reason. */
static int stage(struct block_checks *bc, char *slot, int err, const struct chain_state *st)
{
	if (err == 0) {
		snprintf(slot, CHAIN_REASON_MAX, "ok");
		return 0;
	}
	if (err != CHAIN_EINVALID)
		return err;
	snprintf(slot, CHAIN_REASON_MAX, "%s", st->reason);
	if (!bc->reject)
		bc->reject = slot;
	return 0;
}

/*
 * ContextualCheckBlock without the parent: a stand-in one block below
 * `height` whose median time past is the block's time less a second, the
 * latest Core's time-too-old allows. Lock times at or past the block's time
 * are non-final for certain; earlier ones may pass that the real parent
 * would refuse. The rest (BIP34, witness commitment, weight) needs only the
 * height. 0 or a chain error.
 */
static int context_without_parent(struct block_checks *bc, struct proto_block *b,
                                  const struct proto_params *p, int64_t height)
{
	struct chain_state st;
	chain_state_clear(&st);
	if (height < 0) {
		snprintf(bc->context, sizeof(bc->context), "skipped: height unknown");
		return 0;
	}
	memset(&bc->parent, 0, sizeof(bc->parent));
	bc->parent.height = (int32_t)height - 1;
	bc->parent.time = b->hdr.time ? b->hdr.time - 1 : 0;
	const struct chain_node *prev = height > 0 ? &bc->parent : NULL;
	return stage(bc, bc->context, chain_check_block_contextual(b, prev, p, &st), &st);
}

/*
 * Every spent output the chain's UTXO set holds, into m (outputs of the
 * block itself are found by resolve_block). 0 or a chain error.
 */
static int prevouts_from_coins(struct chain *c, const struct proto_block *b, struct prevmap *m)
{
	struct chain_coins *coins = chain_get_coins(c);
	for (uint32_t t = 1; t < b->n_tx; t++) {
		const struct proto_tx *tx = &b->txs[t];
		for (uint32_t i = 0; i < tx->n_in; i++) {
			struct chain_coin coin;
			struct prev_entry e = {0};
			int err = chain_coins_get(coins, &tx->vin[i].prevout, &coin);
			if (err == CHAIN_ENOTFOUND)
				continue;
			if (err)
				return err;
			e.op = tx->vin[i].prevout;
			e.out.amount = coin.value;
			e.out.script_len = coin.script_len;
			/* The coin's script is borrowed until the next lookup: copy it. */
			if (peertool_prevmap_append_script(m, coin.script, coin.script_len,
			                                   &e.script_off) ||
			    peertool_prevmap_put(m, &e))
				return CHAIN_ENOMEM;
		}
	}
	peertool_prevmap_fix_scripts(m);
	return 0;
}

/*
 * --utxo: the parent from the chain's index, the contextual checks of the
 * header and the block, then ConnectBlock in just-check mode when the
 * block builds on the tip (Core's TestBlockValidity), and the spent
 * outputs for the per-input report. *height gets the block's height.
 * 0, 1 after printing why the chain cannot be used, or a chain error.
 */
static int check_on_chain(const char *cmd, const struct verify_args *a, struct chain **cp,
                          int *lock_fd, struct proto_block *b, bool block_ok,
                          struct block_checks *bc, struct prevmap *m, int64_t *height, json_t *root)
{
	const struct proto_params *p = a->chain;
	char netdir[4096];
	struct chain_config cfg = {.params = p, .dir = netdir, .par = a->par};
	struct chain_state st;
	int err;
	chain_state_clear(&st);
	snprintf(bc->connect, sizeof(bc->connect), "not run");
	/* Not created: chain_open would make a chain where a typo points. */
	if (peertool_netdir(cmd, a->utxo, p, false, netdir, sizeof(netdir), lock_fd))
		return 1;
	if ((err = chain_open(cp, &cfg))) {
		peertool_error(cmd, "cannot open the chain in %s: %s", netdir, chain_strerror(err));
		return 1;
	}
	struct chain *c = *cp;
	struct chain_node *prev = chain_index_find(chain_get_index(c), &b->hdr.prev);
	json_object_set_new(root, "utxo", json_string(a->utxo));
	json_object_set_new(root, "tip", json_hash(&chain_tip(c)->hash));
	if (!prev) {
		snprintf(bc->context, sizeof(bc->context), "prev-blk-not-found");
		bc->reject = bc->context;
		return 0;
	}
	*height = prev->height + 1;
	if (peertool_prevmap_init(m, 64))
		return CHAIN_ENOMEM;
	if ((err = prevouts_from_coins(c, b, m)))
		return err;
	/* The header's checks need only the header; the block's assume CheckBlock
	 * passed (a coinbase to read the height from, ids computed). */
	err = chain_check_header_contextual(&b->hdr, prev, (int64_t)time(NULL), p, &st);
	if (err == 0 && block_ok)
		err = chain_check_block_contextual(b, prev, p, &st);
	if ((err = stage(bc, bc->context, err, &st)))
		return err;
	if (!block_ok && !strcmp(bc->context, "ok"))
		snprintf(bc->context, sizeof(bc->context), "not run (the header's passed)");
	if (prev != chain_tip(c)) {
		snprintf(bc->connect, sizeof(bc->connect),
		         "skipped: the parent is not the tip of %s's chain", a->utxo);
		bc->unsure = true;
		return 0;
	}
	if (!block_ok || bc->reject)
		return 0; /* Core connects only what passed the checks before */
	struct chain_node node = {.prev = prev, .height = prev->height + 1};
	proto_block_header_hash(&b->hdr, &node.hash);
	node.version = b->hdr.version;
	node.time = b->hdr.time;
	node.bits = b->hdr.bits;
	node.nonce = b->hdr.nonce;
	node.merkle_root = b->hdr.merkle_root;
	struct chain_connect_info info;
	err = chain_connect_block(chain_get_coins(c), chain_get_checker(c), b, &node, p, true, NULL,
	                          &info, &st);
	if ((err = stage(bc, bc->connect, err, &st)))
		return err;
	if (!strcmp(bc->connect, "ok")) {
		json_t *ci = json_object();
		json_object_set_new(ci, "fees", json_integer(info.fees));
		json_object_set_new(ci, "inputs", json_integer(info.inputs));
		json_object_set_new(ci, "sigops", json_integer(info.sigops));
		json_object_set_new(root, "connect_info", ci);
	}
	return 0;
}

static json_t *checks_json(const struct block_checks *bc, bool utxo)
{
	json_t *o = json_object();
	json_object_set_new(o, "check_block", json_string(bc->check));
	json_object_set_new(o, "contextual", json_string(bc->context));
	if (utxo)
		json_object_set_new(o, "connect", json_string(bc->connect));
	return o;
}

int peertool_verify_block(int argc, char **argv)
{
	const char *cmd = argv[0];
	struct verify_args a;
	struct prevmap m = {0};
	struct proto_block b;
	struct pool_vec jobs;
	struct script_spent_output *spent = NULL;
	struct script_precomputed *pre = NULL;
	size_t *first_in = NULL;
	int32_t *results = NULL;
	int *checks = NULL;
	uint8_t *data = NULL;
	struct chain *chain = NULL;
	int lock_fd = -1;
	struct block_checks bc;
	struct chain_state st;
	json_t *root = NULL;
	bool scripts_run = false;
	size_t len, off = 0, n_inputs = 0, valid = 0, total_in = 0, n_missing = 0;
	int rc = peertool_verify_parse_args(argc, argv, true, &a);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	proto_block_init(&b);
	pool_vec_init(&jobs, sizeof(struct verify_job));
	memset(&bc, 0, sizeof(bc));
	chain_state_clear(&st);
	rc = 1;
	if (a.prevouts && peertool_prevouts_load(cmd, a.prevouts, &m))
		goto out;
	if (!(data = peertool_read_input(cmd, a.input, 0, &len)))
		goto out;
	int err = proto_block_decode(data, len, &b, &off);
	if (err) {
		peertool_error(cmd, "invalid block at byte %zu: %s (%s)", off, proto_strerror(err),
		               proto_errname(err));
		goto out;
	}
	struct proto_hash hash;
	proto_block_header_hash(&b.hdr, &hash);
	enum height_source hsrc = HEIGHT_OPTION;
	int64_t height = a.height;
	if (height < 0) {
		height = block_bip34_height(&b);
		hsrc = height < 0 ? HEIGHT_UNKNOWN : HEIGHT_BIP34;
	}

	/* CheckBlock, then what needs the parent (or a stand-in), then on a chain
	 * ConnectBlock: Core's order, the first failure the block's reason. */
	if (!(root = json_object()))
		goto oom;
	err = stage(&bc, bc.check, chain_check_block(&b, a.chain, !a.no_pow, true, &st), &st);
	if (!err && a.utxo) {
		int64_t h = -1;
		err = check_on_chain(cmd, &a, &chain, &lock_fd, &b, !bc.reject, &bc, &m, &h, root);
		if (err == 1)
			goto out;
		if (h >= 0) {
			if (a.height >= 0 && a.height != h)
				peertool_error(cmd,
				               "--height %" PRId64
				               " ignored: the parent in %s puts "
				               "the block at %" PRId64,
				               a.height, a.utxo, h);
			height = h;
			hsrc = HEIGHT_PARENT;
		}
		if (!m.v && peertool_prevmap_init(&m, 0))
			goto oom;
	} else if (!err && bc.reject) {
		/* ContextualCheckBlock assumes a block that passed CheckBlock. */
		snprintf(bc.context, sizeof(bc.context), "not run");
	} else if (!err) {
		err = context_without_parent(&bc, &b, a.chain, height);
	}
	if (err) {
		peertool_error(cmd, "%s", chain_strerror(err));
		goto out;
	}
	uint32_t flags =
	    a.flags_given ? a.flags : chain_block_script_flags(a.chain, &hash, (int32_t)height);
	if (hsrc == HEIGHT_UNKNOWN && !a.flags_given)
		peertool_error(cmd, "block height unknown (no BIP34 height in a version >= 2 "
		                    "coinbase): using today's consensus flags; --height N gives "
		                    "the rules of its time");

	first_in = xcalloc(b.n_tx + 1, sizeof(*first_in));
	pre = xcalloc(b.n_tx ? b.n_tx : 1, sizeof(*pre));
	checks = xcalloc(b.n_tx ? b.n_tx : 1, sizeof(*checks));
	if (!first_in || !pre || !checks)
		goto oom;
	for (uint32_t t = 0; t < b.n_tx; t++)
		first_in[t + 1] = first_in[t] + b.txs[t].n_in;
	total_in = first_in[b.n_tx];
	spent = xcalloc(total_in ? total_in : 1, sizeof(*spent));
	results = xcalloc(total_in ? total_in : 1, sizeof(*results));
	if (!spent || !results)
		goto oom;
	/* On a chain, a spent output it lacks is ConnectBlock's to report
	 * (bad-txns-inputs-missingorspent), and a block the checks above
	 * rejected needs none for its verdict: then the scripts are not run
	 * and the report says why. Otherwise a missing one leaves no verdict:
	 * the first few are named, the rest counted. */
	size_t named = a.utxo || bc.reject ? 0 : VERIFY_MISSING_NAMED;
	int res = resolve_block(cmd, &b, &m, spent, first_in, named, &n_missing);
	if (res < 0)
		goto out;
	scripts_run = res == 0;
	if (n_missing > named && named)
		peertool_error(cmd, "... and %zu more", n_missing - named);
	if (n_missing && !a.utxo) {
		peertool_error(cmd, "%zu spent outputs missing%s", n_missing,
		               bc.reject ? ": the scripts were not run" : "");
		if (!bc.reject)
			goto out;
	}

	double t0 = peertool_verify_now_ms();
	for (uint32_t t = 0; t < b.n_tx && scripts_run; t++) {
		struct proto_tx *tx = &b.txs[t];
		if (t == 0 && proto_tx_is_coinbase(tx))
			continue;
		checks[t] = script_check_transaction(tx);
		if (checks[t])
			continue;
		script_precompute(&pre[t], tx, spent + first_in[t], false);
		for (uint32_t i = 0; i < tx->n_in; i++) {
			struct verify_job j = {t, i, &spent[first_in[t] + i],
			                       &results[first_in[t] + i]};
			if (pool_vec_push(&jobs, &j))
				goto oom;
		}
	}
	struct verify_round round = {&b, pre, flags};
	if (run_jobs(cmd, a.par, &round, &jobs))
		goto out;
	double ms = peertool_verify_now_ms() - t0;

	json_t *txs = json_array();
	const char *script_reject = NULL;
	char script_reason[256]; /* Core's longest script error fits */
	for (uint32_t t = 0; t < b.n_tx && scripts_run; t++) {
		struct proto_tx *tx = &b.txs[t];
		json_t *o = json_object(), *ins = json_array();
		const char *reject = checks[t] ? script_tx_reason(checks[t]) : NULL;
		bool coinbase = t == 0 && proto_tx_is_coinbase(tx);
		json_object_set_new(o, "txid", json_hash(&tx->txid));
		json_object_set_new(o, "check", json_string(reject ? reject : "ok"));
		if (coinbase)
			json_object_set_new(o, "coinbase", json_true());
		for (uint32_t i = 0; i < tx->n_in && !coinbase; i++) {
			int e = results[first_in[t] + i];
			n_inputs++;
			valid += !reject && e == SCRIPT_ERR_OK;
			if (!reject && e != SCRIPT_ERR_OK && !script_reject) {
				/* Core's reason for the first failing input in block order */
				snprintf(script_reason, sizeof(script_reason),
				         "mandatory-script-verify-flag-failed (%s)",
				         script_error_core_string(e));
				script_reject = script_reason;
			}
			json_array_append_new(ins, peertool_verify_input_json(
			                               tx, i, &spent[first_in[t] + i], e, reject));
		}
		json_object_set_new(o, "inputs", ins);
		json_array_append_new(txs, o);
	}
	const char *reject = bc.reject ? bc.reject : script_reject;
	bool ok = !reject && !bc.unsure && scripts_run && valid == n_inputs;
	json_object_set_new(root, "hash", json_hash(&hash));
	json_object_set_new(root, "chain", json_string(a.chain->name));
	json_object_set_new(root, "height", height < 0 ? json_null() : json_integer(height));
	json_object_set_new(root, "height_source", json_string(HEIGHT_SOURCE_NAMES[hsrc]));
	json_object_set_new(root, "flags", peertool_verify_flags_json(flags));
	json_object_set_new(root, "flags_source",
	                    json_string(a.flags_given            ? "option"
	                                : hsrc == HEIGHT_UNKNOWN ? "consensus"
	                                                         : "height"));
	json_object_set_new(root, "par", json_integer(a.par));
	json_object_set_new(root, "checks", checks_json(&bc, a.utxo != NULL));
	if (!scripts_run) {
		char why[64];
		snprintf(why, sizeof(why), "skipped: %zu spent outputs missing", n_missing);
		json_object_set_new(root, "scripts", json_string(why));
	}
	json_object_set_new(root, "reject_reason", reject ? json_string(reject) : json_null());
	json_object_set_new(root, "verdict",
	                    json_string(ok                           ? "valid"
	                                : reject || valid < n_inputs ? "invalid"
	                                                             : "inconclusive"));
	json_object_set_new(root, "txs", txs);
	json_object_set_new(root, "summary",
	                    peertool_verify_summary_json(b.n_tx, n_inputs, valid, ms));
	rc = peertool_verify_print(cmd, root);
	root = NULL; /* peertool_verify_print took it */
	if (!rc)
		rc = ok ? 0 : 1;
	goto out;
oom:
	peertool_error(cmd, "out of memory");
out:
	json_decref(root);
	if (chain && chain_close(chain))
		peertool_error(cmd, "closing the chain in %s failed", a.utxo);
	if (lock_fd >= 0)
		close(lock_fd);
	pool_vec_release(&jobs, NULL, NULL);
	xfree(first_in);
	xfree(pre);
	xfree(checks);
	xfree(spent);
	xfree(results);
	xfree(data);
	proto_block_release(&b);
	peertool_prevmap_release(&m);
	return rc;
}
