/*
 * tests/unit/test_chain_state.c: the whole chain against Bitcoin Core.
 *
 * Core's own regtest chain (tests/data/regtest, made by Core's wallet) is
 * submitted block by block; at each checkpoint the tip, its chain work and
 * the UTXO set's gettxoutsetinfo figures must equal what Core reported on
 * the same chain. Then the stale branch and the reorg that replaced it;
 * reopening; a crash (a child process that exits without closing); and
 * crafted blocks for the rules ConnectBlock enforces, with Core's reasons
 * and Core's precedence with and without worker threads; mangled copies of
 * known blocks answered as Core 29's submitblock does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"

#define REGTEST_MAGIC 0xdab5bffau

/* ---- fixtures: the chain files, Core's answers, a temporary directory ---- */

struct rec {
	const uint8_t *raw;
	size_t len;
};

struct blocks {
	uint8_t *buf;
	struct rec *v;
	size_t n;
};

static void load_blocks(const char *rel, struct blocks *out)
{
	size_t len;
	out->buf = tu_read_file(tu_vector(rel), &len);
	out->v = calloc(4096, sizeof(*out->v));
	out->n = 0;
	size_t off = 0;
	while (off + 8 <= len) {
		uint32_t magic = (uint32_t)out->buf[off] | (uint32_t)out->buf[off + 1] << 8 |
		                 (uint32_t)out->buf[off + 2] << 16 |
		                 (uint32_t)out->buf[off + 3] << 24;
		uint32_t sz = (uint32_t)out->buf[off + 4] | (uint32_t)out->buf[off + 5] << 8 |
		              (uint32_t)out->buf[off + 6] << 16 | (uint32_t)out->buf[off + 7] << 24;
		assert_int_equal(magic, REGTEST_MAGIC);
		assert_true(off + 8 + sz <= len);
		out->v[out->n].raw = out->buf + off + 8;
		out->v[out->n].len = sz;
		out->n++;
		off += 8 + sz;
	}
	assert_int_equal(off, len);
}

static void free_blocks(struct blocks *b)
{
	free(b->buf);
	free(b->v);
}

struct fixture {
	char dir[TU_TMPDIR_MAX];
	struct blocks main_chain; /* heights 1..265 */
	struct blocks stale;      /* heights 261..263 of the losing branch */
	json_t *core;             /* regtest_chain.json */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	tu_tmpdir(f->dir, "chain");
	load_blocks("regtest/regtest_chain.dat", &f->main_chain);
	load_blocks("regtest/regtest_stale_branch.dat", &f->stale);
	assert_int_equal(f->main_chain.n, 265);
	assert_int_equal(f->stale.n, 3);
	json_error_t jerr;
	f->core = json_load_file(tu_vector("regtest/regtest_chain.json"), 0, &jerr);
	if (!f->core)
		fail_msg("regtest_chain.json: %s", jerr.text);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tu_rmtree(f->dir);
	free_blocks(&f->main_chain);
	free_blocks(&f->stale);
	json_decref(f->core);
	free(f);
	return 0;
}

static struct chain *open_chain_with(const struct fixture *f, int par, size_t dbcache,
                                     bool replay_in_steps)
{
	struct chain_config cfg = {
	    .params = proto_params(PROTO_NET_REGTEST),
	    .dir = f->dir,
	    .dbcache_bytes = dbcache,
	    .par = par,
	    .replay_in_steps = replay_in_steps,
	};
	struct chain *c = NULL;
	int err = chain_open(&c, &cfg);
	if (err)
		fail_msg("chain_open: %s", chain_strerror(err));
	return c;
}

static struct chain *open_chain(const struct fixture *f, int par, size_t dbcache)
{
	return open_chain_with(f, par, dbcache, false);
}

static enum chain_submit submit(struct chain *c, const struct rec *r, struct chain_state *st)
{
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(r->raw, r->len, &b, NULL), 0);
	enum chain_submit res;
	int err = chain_submit_block(c, r->raw, r->len, &b, &res, st);
	proto_block_release(&b);
	if (err)
		fail_msg("chain_submit_block: %s", chain_strerror(err));
	return res;
}

static void submit_range(struct chain *c, const struct blocks *bl, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct chain_state st;
		enum chain_submit res = submit(c, &bl->v[i], &st);
		if (res != CHAIN_SUBMIT_ACCEPTED)
			fail_msg("block record %zu: result %d reason '%s' (%s)", i, res, st.reason,
			         st.debug);
	}
}

/* The tip, its work and the UTXO figures equal Core's at a checkpoint. */
static void expect_checkpoint(struct chain *c, const struct fixture *f, const char *name)
{
	json_t *cp = json_object_get(json_object_get(f->core, "checkpoints"), name);
	assert_non_null(cp);
	char hex[65];
	proto_hash_to_hex(&chain_tip(c)->hash, hex);
	assert_string_equal(hex, json_string_value(json_object_get(cp, "bestblockhash")));
	assert_int_equal(chain_height(c), json_integer_value(json_object_get(cp, "height")));
	chain_work_hex(&chain_tip(c)->work, hex);
	assert_string_equal(hex, json_string_value(json_object_get(cp, "chainwork")));

	json_t *ti = json_object_get(cp, "gettxoutsetinfo");
	struct chain_utxo_stats s;
	assert_int_equal(chain_coins_stats(chain_get_coins(c), &s), 0);
	uint8_t rev[32];
	for (int i = 0; i < 32; i++)
		rev[i] = s.hash_serialized[31 - i];
	proto_hex_encode(rev, 32, hex);
	assert_string_equal(hex, json_string_value(json_object_get(ti, "hash_serialized_3")));
	assert_int_equal(s.txouts, json_integer_value(json_object_get(ti, "txouts")));
	assert_int_equal(s.transactions, json_integer_value(json_object_get(ti, "transactions")));
	assert_int_equal(s.bogosize, json_integer_value(json_object_get(ti, "bogosize")));
	double btc = json_number_value(json_object_get(ti, "total_amount"));
	assert_int_equal(s.total_amount, (int64_t)(btc * 1e8 + 0.5));
}

/* ---- Core's chain, checkpoint by checkpoint, then the reorg ------------------ */

static void run_core_chain(void **state, int par, size_t dbcache)
{
	struct fixture *f = *state;
	struct chain *c = open_chain(f, par, dbcache);
	assert_int_equal(chain_height(c), 0);
	submit_range(c, &f->main_chain, 0, 140);
	expect_checkpoint(c, f, "after-maturity");
	submit_range(c, &f->main_chain, 140, 260);
	expect_checkpoint(c, f, "tip");
	submit_range(c, &f->stale, 0, 3);
	expect_checkpoint(c, f, "stale-branch-tip");
	/* The longer branch: 261..264 are not enough work until 265 arrives
	 * (4 blocks against 3: the fourth already wins). */
	for (size_t i = 260; i < 265; i++) {
		struct chain_state st;
		enum chain_submit res = submit(c, &f->main_chain.v[i], &st);
		if (res != CHAIN_SUBMIT_ACCEPTED && res != CHAIN_SUBMIT_INCONCLUSIVE)
			fail_msg("record %zu: %d %s", i, res, st.reason);
	}
	expect_checkpoint(c, f, "after-reorg");
	struct chain_stats cs;
	chain_get_stats(c, &cs);
	assert_int_equal(cs.reorgs, 1);
	assert_int_equal(cs.blocks_disconnected, 3);
	/* the stale tip is a valid fork of three blocks */
	struct proto_hash h;
	const char *stale_tip =
	    json_string_value(json_array_get(json_object_get(f->core, "stale_branch_hashes"), 2));
	assert_non_null(stale_tip);
	size_t n;
	uint8_t *b = tu_unhex(stale_tip, &n);
	for (int i = 0; i < 32; i++)
		h.b[i] = b[31 - i];
	free(b);
	struct chain_node *st_node = chain_index_find(chain_get_index(c), &h);
	assert_non_null(st_node);
	assert_int_equal(chain_node_level(st_node), CHAIN_VALID_SCRIPTS);
	assert_false(chain_contains(c, st_node));
	assert_int_equal(chain_node_fork(st_node, chain_tip(c))->height, 260);
	/* resubmitting is a duplicate, as Core's submitblock says */
	struct chain_state st;
	assert_int_equal(submit(c, &f->main_chain.v[100], &st), CHAIN_SUBMIT_DUPLICATE);
	assert_int_equal(chain_close(c), 0);

	/* Everything is on disk: reopening finds the same tip and coins. */
	c = open_chain(f, par, dbcache);
	expect_checkpoint(c, f, "after-reorg");
	/* verifychain at every level over the whole chain, and the chain unchanged */
	for (int level = 0; level <= 4; level++) {
		if (chain_verify(c, level, 0, &st))
			fail_msg("verifychain level %d: %s (%s)", level, st.reason, st.debug);
	}
	expect_checkpoint(c, f, "after-reorg");
	assert_int_equal(chain_close(c), 0);
}

/* Damaged undo data is what verifychain level 2 and up are for. */
static void test_verify_finds_damaged_undo(void **state)
{
	struct fixture *f = *state;
	struct chain *c = open_chain(f, 2, 0);
	submit_range(c, &f->main_chain, 0, 150);
	struct chain_state st;
	assert_int_equal(chain_verify(c, 4, 10, &st), 0);
	assert_int_equal(chain_close(c), 0);
	/* Flip a byte in the middle of the last undo record's data. */
	char path[400];
	snprintf(path, sizeof(path), "%s/blocks/rev00000.dat", f->dir);
	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, -60, SEEK_END), 0);
	int byte = fgetc(fp);
	assert_int_equal(fseek(fp, -60, SEEK_END), 0);
	fputc(byte ^ 0x55, fp);
	fclose(fp);
	c = open_chain(f, 2, 0);
	assert_int_equal(chain_verify(c, 1, 10, &st), 0);
	assert_int_equal(chain_verify(c, 2, 10, &st), CHAIN_EINVALID);
	assert_non_null(strstr(st.debug, "undo"));
	assert_int_equal(chain_height(c), 150);
	assert_int_equal(chain_close(c), 0);
}

static void test_core_chain_workers(void **state)
{
	run_core_chain(state, 2, 0);
}

static void test_core_chain_inline_tiny_cache(void **state)
{
	/* par=1: checks in place; a cache so small it flushes after every block */
	run_core_chain(state, 1, 1);
}

/* A child connects 200 blocks and dies without closing: the parent opens
 * the same directory and must reach the same tip and coins, from the
 * block files, as a run that was not killed. */
static void crash_after_200(struct fixture *f)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct chain *c = open_chain(f, 2, 0);
		for (size_t i = 0; i < 200; i++) {
			struct chain_state st;
			if (submit(c, &f->main_chain.v[i], &st) != CHAIN_SUBMIT_ACCEPTED)
				_exit(2);
		}
		_exit(0); /* no close, no flush: like kill -9 */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_crash_replay(void **state)
{
	struct fixture *f = *state;
	crash_after_200(f);
	struct chain *c = open_chain(f, 2, 0);
	assert_int_equal(chain_height(c), 200);
	struct chain_stats cs;
	chain_get_stats(c, &cs);
	assert_true(cs.replayed >= 199);
	submit_range(c, &f->main_chain, 200, 260);
	expect_checkpoint(c, f, "tip");
	assert_int_equal(chain_close(c), 0);
}

/* The same crash under replay_in_steps (peerd's): chain_open reads the
 * blocks but leaves them unconnected, pending as a reindex's connect; a
 * close before any step (a stop during the start) leaves them for the
 * next open, and chain_reindex_step's bounded steps end at the same tip. */
static void test_crash_replay_in_steps(void **state)
{
	struct fixture *f = *state;
	crash_after_200(f);
	struct chain *c = open_chain_with(f, 2, 0, true);
	assert_int_equal(chain_height(c), 0);
	assert_true(chain_reindex_pending(c));
	assert_int_equal(chain_reindex_mode(c), CHAIN_REINDEX_NONE);
	assert_int_equal(chain_close(c), 0);

	/* The close stored the blocks' index entries: nothing is read again,
	 * but they are still to connect, in steps. */
	c = open_chain_with(f, 2, 0, true);
	assert_int_equal(chain_height(c), 0);
	assert_true(chain_reindex_pending(c));
	for (int i = 0; i < 1000 && chain_reindex_pending(c); i++)
		assert_int_equal(chain_reindex_step(c), 0);
	assert_false(chain_reindex_pending(c));
	assert_int_equal(chain_height(c), 200);
	submit_range(c, &f->main_chain, 200, 260);
	expect_checkpoint(c, f, "tip");
	assert_int_equal(chain_close(c), 0);

	/* Flushed at the close: nothing left to replay. */
	c = open_chain_with(f, 2, 0, true);
	assert_false(chain_reindex_pending(c));
	assert_int_equal(chain_height(c), 260);
	assert_int_equal(chain_close(c), 0);
}

/* ---- crafted blocks -------------------------------------------------------------------- */

/* A transaction spending `prev` (txid in internal order, output n) with
 * scriptSig `sig`, paying `value` to OP_TRUE. Legacy serialization. */
static void put_tx(struct proto_writer *w, const struct proto_hash *prev, uint32_t n,
                   const uint8_t *sig, size_t sig_len, int64_t value)
{
	proto_write_u32le(w, 2);
	proto_write_compact(w, 1);
	proto_write_hash(w, prev);
	proto_write_u32le(w, n);
	proto_write_varbytes(w, sig, sig_len);
	proto_write_u32le(w, 0xffffffffu);
	proto_write_compact(w, 1);
	proto_write_u64le(w, (uint64_t)value);
	const uint8_t op_true = 0x51;
	proto_write_varbytes(w, &op_true, 1);
	proto_write_u32le(w, 0);
}

static void put_coinbase(struct proto_writer *w, int32_t height, int64_t value)
{
	struct proto_hash zero = {{0}};
	uint8_t sig[8];
	size_t n = 0;
	/* BIP34: the height as a minimal script number push, then one more byte */
	uint8_t num[4];
	size_t nl = 0;
	for (int32_t v = height; v; v >>= 8)
		num[nl++] = (uint8_t)(v & 0xff);
	if (num[nl - 1] & 0x80)
		num[nl++] = 0;
	sig[n++] = (uint8_t)nl;
	memcpy(sig + n, num, nl);
	n += nl;
	sig[n++] = 0x00;
	put_tx(w, &zero, 0xffffffffu, sig, n, value);
}

/* Assemble a block on `prev` from raw transactions; merkle root and proof of work done. */
static void make_block(const struct chain_node *prev, const uint8_t *txs, size_t txs_len,
                       size_t n_tx, struct proto_writer *out)
{
	struct proto_block_header h = {
	    .version = 0x20000000,
	    .prev = prev->hash,
	    .time = prev->time + 1,
	    .bits = 0x207fffff,
	};
	for (;;) {
		proto_writer_init(out);
		proto_block_header_encode(&h, out);
		proto_write_compact(out, n_tx);
		proto_write_bytes(out, txs, txs_len);
		assert_int_equal(out->err, 0);
		struct proto_block b;
		proto_block_init(&b);
		assert_int_equal(proto_block_decode(out->buf, out->len, &b, NULL), 0);
		bool mutated;
		struct proto_hash root;
		assert_int_equal(proto_block_merkle_root(&b, &root, &mutated), 0);
		proto_block_release(&b);
		if (!proto_hash_eq(&root, &h.merkle_root)) {
			h.merkle_root = root;
			proto_writer_release(out);
			continue;
		}
		struct proto_hash hash;
		proto_block_header_hash(&h, &hash);
		if (proto_check_pow(&hash, h.bits, &proto_params(PROTO_NET_REGTEST)->pow_limit))
			return;
		h.nonce++;
		proto_writer_release(out);
	}
}

static const char *submit_raw(struct chain *c, const uint8_t *raw, size_t len,
                              enum chain_submit *res, struct chain_state *st)
{
	struct rec r = {raw, len};
	*res = submit(c, &r, st);
	return st->reason;
}

/* The coinbase txid of the block at height h of Core's chain. */
static struct proto_hash coinbase_txid(struct chain *c, int32_t h)
{
	uint8_t *raw;
	size_t len;
	assert_int_equal(chain_read_block(c, chain_at(c, h), &raw, &len), 0);
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(raw, len, &b, NULL), 0);
	struct proto_hash id = *proto_tx_txid(&b.txs[0]);
	proto_block_release(&b);
	xfree(raw);
	return id;
}

struct crafted_case {
	const char *name;
	int par;
	const char *want;
};

/* Block 141 on Core's block 140, with the given transactions after a coinbase. */
static void crafted(void **state, int par,
                    void (*build)(struct chain *, struct proto_writer *, size_t *),
                    int64_t cb_value, const char *want)
{
	struct fixture *f = *state;
	struct chain *c = open_chain(f, par, 0);
	if (chain_height(c) < 140)
		submit_range(c, &f->main_chain, (size_t)chain_height(c), 140);
	while (chain_height(c) > 140) {
		struct chain_state st;
		assert_int_equal(chain_invalidate(c, chain_at(c, 141), &st), 0);
	}
	struct proto_writer txs;
	proto_writer_init(&txs);
	put_coinbase(&txs, 141, cb_value);
	size_t n_tx = 1;
	build(c, &txs, &n_tx);
	struct proto_writer blk;
	make_block(chain_tip(c), txs.buf, txs.len, n_tx, &blk);
	enum chain_submit res;
	struct chain_state st;
	const char *reason = submit_raw(c, blk.buf, blk.len, &res, &st);
	if (want) {
		assert_int_equal(res, CHAIN_SUBMIT_REJECTED);
		assert_string_equal(reason, want);
		assert_int_equal(chain_height(c), 140);
		/* Core: a block that failed ConnectBlock, resubmitted, is "duplicate-invalid" */
		(void)submit_raw(c, blk.buf, blk.len, &res, &st);
		assert_int_equal(res, CHAIN_SUBMIT_DUPLICATE_INVALID);
	} else {
		assert_int_equal(res, CHAIN_SUBMIT_ACCEPTED);
		assert_int_equal(chain_height(c), 141);
	}
	proto_writer_release(&blk);
	proto_writer_release(&txs);
	assert_int_equal(chain_close(c), 0);
}

static void build_none(struct chain *c, struct proto_writer *w, size_t *n)
{
	(void)c;
	(void)w;
	(void)n;
}

static void build_missing(struct chain *c, struct proto_writer *w, size_t *n)
{
	(void)c;
	struct proto_hash nowhere;
	memset(nowhere.b, 0x42, 32);
	put_tx(w, &nowhere, 0, NULL, 0, 1000);
	(*n)++;
}

static void build_premature(struct chain *c, struct proto_writer *w, size_t *n)
{
	struct proto_hash cb = coinbase_txid(c, 100); /* depth 41 at height 141 */
	put_tx(w, &cb, 0, NULL, 0, 1000);
	(*n)++;
}

static void build_belowout(struct chain *c, struct proto_writer *w, size_t *n)
{
	struct proto_hash cb = coinbase_txid(c, 1);
	put_tx(w, &cb, 0, NULL, 0, 51 * PROTO_COIN);
	(*n)++;
}

static void build_bad_script(struct chain *c, struct proto_writer *w, size_t *n)
{
	struct proto_hash cb = coinbase_txid(c, 2);
	const uint8_t junk[] = {0x51}; /* OP_TRUE where a signature should be */
	put_tx(w, &cb, 0, junk, sizeof(junk), PROTO_COIN);
	(*n)++;
}

/* A bad script first, then a transaction paying out more than it has. */
static void build_script_then_belowout(struct chain *c, struct proto_writer *w, size_t *n)
{
	build_bad_script(c, w, n);
	build_belowout(c, w, n);
}

static void build_double_spend(struct chain *c, struct proto_writer *w, size_t *n)
{
	struct proto_hash cb = coinbase_txid(c, 3);
	put_tx(w, &cb, 0, NULL, 0, 1000);
	put_tx(w, &cb, 0, NULL, 0, 2000);
	*n += 2;
}

static void test_crafted_valid_empty(void **state)
{
	crafted(state, 2, build_none, 50 * PROTO_COIN, NULL);
}

static void test_crafted_cb_amount(void **state)
{
	crafted(state, 2, build_none, 50 * PROTO_COIN + 1, "bad-cb-amount");
}

static void test_crafted_missing(void **state)
{
	crafted(state, 2, build_missing, 50 * PROTO_COIN, "bad-txns-inputs-missingorspent");
}

static void test_crafted_premature(void **state)
{
	crafted(state, 2, build_premature, 50 * PROTO_COIN, "bad-txns-premature-spend-of-coinbase");
}

static void test_crafted_belowout(void **state)
{
	crafted(state, 2, build_belowout, 50 * PROTO_COIN, "bad-txns-in-belowout");
}

static void test_crafted_double_spend(void **state)
{
	crafted(state, 2, build_double_spend, 50 * PROTO_COIN, "bad-txns-inputs-missingorspent");
}

#define EQUALVERIFY_REASON                                                                         \
	"mandatory-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)"

static void test_crafted_script_workers(void **state)
{
	crafted(state, 2, build_bad_script, 50 * PROTO_COIN, EQUALVERIFY_REASON);
}

static void test_crafted_script_inline(void **state)
{
	crafted(state, 1, build_bad_script, 50 * PROTO_COIN, EQUALVERIFY_REASON);
}

/* Core's precedence: with workers the later rule wins, without the earlier tx. */
static void test_crafted_precedence_workers(void **state)
{
	crafted(state, 2, build_script_then_belowout, 50 * PROTO_COIN, "bad-txns-in-belowout");
}

static void test_crafted_precedence_inline(void **state)
{
	crafted(state, 1, build_script_then_belowout, 50 * PROTO_COIN, EQUALVERIFY_REASON);
}

/* The bytes of a block with one more transaction (`extra`) after the ones it has:
 * the same header, so the same hash. */
static void append_tx(const struct proto_writer *blk, size_t n_tx, const uint8_t *extra,
                      size_t extra_len, struct proto_writer *out)
{
	proto_writer_init(out);
	proto_write_bytes(out, blk->buf, PROTO_BLOCK_HEADER_SIZE);
	size_t skip = PROTO_BLOCK_HEADER_SIZE + proto_compact_size(n_tx);
	proto_write_compact(out, n_tx + 1);
	proto_write_bytes(out, blk->buf + skip, blk->len - skip);
	proto_write_bytes(out, extra, extra_len);
	assert_int_equal(out->err, 0);
}

/*
 * Core 29's submitblock (bitcoin/bitcoin#31175) checks a block before it
 * looks its hash up: a mangled copy of a known block is answered with its
 * own fault (CheckBlock's), not "duplicate" or "duplicate-invalid"; the
 * block itself still gets those.
 */
static void test_crafted_mutated_copies(void **state)
{
	struct fixture *f = *state;
	struct chain *c = open_chain(f, 2, 0);
	submit_range(c, &f->main_chain, 0, 140);
	enum chain_submit res;
	struct chain_state st;

	/* Invalid: two transactions spending nothing; the copy repeats the last. */
	struct proto_writer txs, blk, copy;
	proto_writer_init(&txs);
	put_coinbase(&txs, 141, 50 * PROTO_COIN);
	struct proto_hash nowhere;
	memset(nowhere.b, 0x42, 32);
	put_tx(&txs, &nowhere, 0, NULL, 0, 1000);
	size_t last = txs.len;
	put_tx(&txs, &nowhere, 1, NULL, 0, 1000);
	make_block(chain_tip(c), txs.buf, txs.len, 3, &blk);
	assert_string_equal(submit_raw(c, blk.buf, blk.len, &res, &st),
	                    "bad-txns-inputs-missingorspent");
	assert_int_equal(res, CHAIN_SUBMIT_REJECTED);
	append_tx(&blk, 3, txs.buf + last, txs.len - last, &copy);
	assert_string_equal(submit_raw(c, copy.buf, copy.len, &res, &st), "bad-txns-duplicate");
	assert_int_equal(res, CHAIN_SUBMIT_REJECTED);
	(void)submit_raw(c, blk.buf, blk.len, &res, &st);
	assert_int_equal(res, CHAIN_SUBMIT_DUPLICATE_INVALID);
	assert_int_equal(chain_height(c), 140);
	proto_writer_release(&copy);
	proto_writer_release(&blk);

	/* Valid: the coinbase alone; the copy has a transaction the root lacks. */
	proto_writer_release(&txs);
	proto_writer_init(&txs);
	put_coinbase(&txs, 141, 50 * PROTO_COIN);
	make_block(chain_tip(c), txs.buf, txs.len, 1, &blk);
	struct proto_writer extra;
	proto_writer_init(&extra);
	put_tx(&extra, &nowhere, 2, NULL, 0, 1000);
	append_tx(&blk, 1, extra.buf, extra.len, &copy);
	(void)submit_raw(c, blk.buf, blk.len, &res, &st);
	assert_int_equal(res, CHAIN_SUBMIT_ACCEPTED);
	assert_int_equal(chain_height(c), 141);
	assert_string_equal(submit_raw(c, copy.buf, copy.len, &res, &st), "bad-txnmrklroot");
	assert_int_equal(res, CHAIN_SUBMIT_REJECTED);
	(void)submit_raw(c, blk.buf, blk.len, &res, &st);
	assert_int_equal(res, CHAIN_SUBMIT_DUPLICATE);
	assert_int_equal(chain_height(c), 141);

	proto_writer_release(&extra);
	proto_writer_release(&copy);
	proto_writer_release(&blk);
	proto_writer_release(&txs);
	assert_int_equal(chain_close(c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_core_chain_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_core_chain_inline_tiny_cache, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_replay, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_replay_in_steps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_verify_finds_damaged_undo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_valid_empty, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_cb_amount, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_premature, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_belowout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_double_spend, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_script_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_script_inline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_precedence_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_precedence_inline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crafted_mutated_copies, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
