/*
 * tests/unit/test_chain_coins.c: the UTXO cache over LMDB. The real test
 * replays Core's regtest chain (and a reorg) through the cache with
 * flushes, reopens and a tiny cache, and compares hash_serialized_3 and
 * the other gettxoutsetinfo figures with what bitcoind printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define CHECK(expr)           tu_assert_chain_err((expr), 0)
#define CHECK_ERR(expr, want) tu_assert_chain_err((expr), (want))

/* ---- scratch directories --------------------------------------------- */

struct env {
	char dir[TU_TMPDIR_MAX];
	struct chain_db *db;
	struct chain_coins *coins;
};

static void env_open(struct env *e)
{
	CHECK(chain_db_open(&e->db, e->dir));
	CHECK(chain_coins_new(&e->coins, e->db, 1 << 20));
}

static void env_close(struct env *e)
{
	chain_coins_free(e->coins);
	chain_db_close(e->db);
	e->coins = NULL;
	e->db = NULL;
}

static void env_init(struct env *e)
{
	tu_tmpdir(e->dir, "coins");
	env_open(e);
}

static void env_release(struct env *e)
{
	env_close(e);
	tu_rmtree(e->dir);
}

/* ---- the regtest chain and Core's figures ----------------------------- */

struct rec {
	const uint8_t *data;
	size_t len;
};

struct chainfile {
	uint8_t *buf;
	size_t n;
	struct rec recs[300];
};

static void chainfile_load(struct chainfile *f, const char *rel)
{
	size_t len, off = 0;
	f->buf = tu_read_file(tu_vector(rel), &len);
	f->n = 0;
	while (off < len) {
		assert_true(len - off >= 8);
		assert_int_equal(proto_le32(f->buf + off), 0xdab5bffa);
		size_t n = proto_le32(f->buf + off + 4);
		assert_true(n <= len - off - 8 && f->n < 300);
		f->recs[f->n++] = (struct rec){f->buf + off + 8, n};
		off += 8 + n;
	}
}

struct expect {
	char hash[65];
	char best[65];
	uint64_t txouts, transactions, bogosize;
	int64_t total_amount;
};

static json_t *vectors_json(void)
{
	json_error_t jerr;
	json_t *root = json_load_file(tu_vector("regtest/regtest_chain.json"), 0, &jerr);
	if (!root)
		fail_msg("regtest_chain.json: %s", jerr.text);
	return root;
}

static void expect_load(json_t *root, const char *name, struct expect *x)
{
	json_t *cp = json_object_get(json_object_get(root, "checkpoints"), name);
	assert_non_null(cp);
	json_t *s = json_object_get(cp, "gettxoutsetinfo");
	assert_non_null(s);
	snprintf(x->hash, sizeof(x->hash), "%s",
	         json_string_value(json_object_get(s, "hash_serialized_3")));
	snprintf(x->best, sizeof(x->best), "%s",
	         json_string_value(json_object_get(s, "bestblock")));
	x->txouts = (uint64_t)json_integer_value(json_object_get(s, "txouts"));
	x->transactions = (uint64_t)json_integer_value(json_object_get(s, "transactions"));
	x->bogosize = (uint64_t)json_integer_value(json_object_get(s, "bogosize"));
	/* bitcoin-cli prints BTC; an amount of whole satoshis rounds back exactly. */
	x->total_amount =
	    (int64_t)llround(json_number_value(json_object_get(s, "total_amount")) * 1e8);
}

static void check_stats(struct chain_coins *c, const struct expect *x, const char *stage)
{
	struct chain_utxo_stats st;
	CHECK(chain_coins_stats(c, &st));
	char hex[65], best[65];
	struct proto_hash h;
	memcpy(h.b, st.hash_serialized, 32);
	proto_hash_to_hex(&h, hex);
	proto_hash_to_hex(&st.best_block, best);
	if (strcmp(hex, x->hash) || st.txouts != x->txouts || st.transactions != x->transactions ||
	    st.bogosize != x->bogosize || st.total_amount != x->total_amount ||
	    strcmp(best, x->best))
		fail_msg("%s: got hash %s txouts %llu transactions %llu bogosize %llu amount %lld "
		         "best %s\n want hash %s txouts %llu transactions %llu bogosize %llu "
		         "amount %lld best %s",
		         stage, hex, (unsigned long long)st.txouts,
		         (unsigned long long)st.transactions, (unsigned long long)st.bogosize,
		         (long long)st.total_amount, best, x->hash, (unsigned long long)x->txouts,
		         (unsigned long long)x->transactions, (unsigned long long)x->bogosize,
		         (long long)x->total_amount, x->best);
}

/* ---- naive connect and disconnect (no validation) -------------------- */

struct undo_coin {
	struct proto_outpoint op;
	struct chain_coin coin;
	uint8_t *script;
};

struct undo {
	struct undo_coin *v;
	size_t n, cap;
	struct proto_hash prev;
};

static void undo_push(struct undo *u, const struct proto_outpoint *op, const struct chain_coin *c)
{
	if (u->n == u->cap) {
		u->cap = u->cap ? u->cap * 2 : 16;
		u->v = realloc(u->v, u->cap * sizeof(*u->v));
		assert_non_null(u->v);
	}
	struct undo_coin *x = &u->v[u->n++];
	x->op = *op;
	x->coin = *c;
	x->script = malloc(c->script_len + 1);
	assert_non_null(x->script);
	memcpy(x->script, c->script, c->script_len);
	x->coin.script = x->script;
}

static void undo_free(struct undo *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].script);
	free(u->v);
	memset(u, 0, sizeof(*u));
}

/* Run one chain_coins_* call, retrying after injected allocation failures
 * when `oom` says to inject them: the call must then fail cleanly with
 * CHAIN_ENOMEM and succeed when run again. */
static long oom_next, oom_hits;
#define RUN(oom, call)                                                                             \
	do {                                                                                       \
		if (oom) {                                                                         \
			base_alloc_fail_after(oom_next++ % 2);                                     \
			int e_ = (call);                                                           \
			int inj_ = base_alloc_injected();                                          \
			base_alloc_fail_after(-1);                                                 \
			if (e_ == CHAIN_ENOMEM && inj_) {                                          \
				oom_hits++;                                                        \
				e_ = (call);                                                       \
			}                                                                          \
			CHECK(e_);                                                                 \
		} else {                                                                           \
			CHECK(call);                                                               \
		}                                                                                  \
	} while (0)

static void connect_block(struct chain_coins *c, const struct rec *r, uint32_t height,
                          struct undo *u, bool oom)
{
	struct proto_block b;
	proto_block_init(&b);
	CHECK(proto_block_decode(r->data, r->len, &b, NULL));
	if (u)
		u->prev = b.hdr.prev;
	for (uint32_t t = 0; t < b.n_tx; t++) {
		struct proto_tx *tx = &b.txs[t];
		bool cb = proto_tx_is_coinbase(tx);
		if (!cb) {
			for (uint32_t i = 0; i < tx->n_in; i++) {
				const struct proto_outpoint *op = &tx->vin[i].prevout;
				if (u) {
					struct chain_coin coin;
					CHECK(chain_coins_get(c, op, &coin));
					undo_push(u, op, &coin);
				}
				RUN(oom, chain_coins_spend(c, op));
			}
		}
		struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
		for (uint32_t o = 0; o < tx->n_out; o++) {
			op.n = o;
			struct chain_coin coin = {
			    .value = tx->vout[o].value,
			    .height = height,
			    .coinbase = cb,
			    .script_len = tx->vout[o].script_len,
			    .script = proto_txout_script(tx, &tx->vout[o]),
			};
			/* As Core's AddCoins without the BIP30 check. */
			RUN(oom, chain_coins_add(c, &op, &coin, cb));
		}
	}
	struct proto_hash h;
	proto_block_header_hash(&b.hdr, &h);
	chain_coins_set_best_block(c, &h);
	proto_block_release(&b);
}

/* Core's DisconnectBlock, with the test's own undo. */
static void disconnect_block(struct chain_coins *c, const struct rec *r, struct undo *u)
{
	struct proto_block b;
	proto_block_init(&b);
	CHECK(proto_block_decode(r->data, r->len, &b, NULL));
	size_t k = u->n;
	for (uint32_t t = b.n_tx; t-- > 0;) {
		struct proto_tx *tx = &b.txs[t];
		struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
		for (uint32_t o = 0; o < tx->n_out; o++) {
			const uint8_t *s = proto_txout_script(tx, &tx->vout[o]);
			uint32_t len = tx->vout[o].script_len;
			if ((len && s[0] == 0x6a) || len > CHAIN_MAX_COIN_SCRIPT)
				continue;
			op.n = o;
			CHECK(chain_coins_spend(c, &op));
		}
		if (proto_tx_is_coinbase(tx))
			continue;
		for (uint32_t i = tx->n_in; i-- > 0;) {
			struct undo_coin *x = &u->v[--k];
			assert_memory_equal(&x->op, &tx->vin[i].prevout, sizeof(x->op));
			struct chain_coin have;
			int err = chain_coins_get(c, &x->op, &have);
			assert_true(err == 0 || err == CHAIN_ENOTFOUND);
			CHECK(chain_coins_add(c, &x->op, &x->coin, err == 0));
		}
	}
	assert_int_equal(k, 0);
	chain_coins_set_best_block(c, &u->prev);
	proto_block_release(&b);
}

/* ---- the replay ------------------------------------------------------ */

struct mode {
	const char *name;
	unsigned flush_every; /* 0: never */
	bool empty;
	size_t cache_limit; /* flush (emptying) whenever memory passes it; 0: no limit */
	bool reopen;        /* flush, close and reopen between stages */
	bool oom;           /* inject allocation failures into every call */
};

struct replay {
	const struct mode *m;
	struct env e;
	uint32_t since_flush;
};

static void after_block(struct replay *r)
{
	const struct mode *m = r->m;
	r->since_flush++;
	if (m->flush_every && r->since_flush >= m->flush_every) {
		RUN(m->oom, chain_coins_flush(r->e.coins, m->empty, NULL, NULL));
		r->since_flush = 0;
	}
	if (m->cache_limit && chain_coins_memory(r->e.coins) > m->cache_limit) {
		RUN(m->oom, chain_coins_flush(r->e.coins, true, NULL, NULL));
		assert_int_equal(chain_coins_cached(r->e.coins), 0);
		r->since_flush = 0;
	}
}

static void stage_end(struct replay *r, const struct expect *x, const char *stage)
{
	check_stats(r->e.coins, x, stage);
	if (!r->m->reopen)
		return;
	struct proto_hash best = *chain_coins_best_block(r->e.coins);
	CHECK(chain_coins_flush(r->e.coins, r->m->empty, NULL, NULL));
	check_stats(r->e.coins, x, stage);
	env_close(&r->e);
	env_open(&r->e);
	assert_memory_equal(chain_coins_best_block(r->e.coins)->b, best.b, 32);
	assert_int_equal(chain_coins_cached(r->e.coins), 0);
	check_stats(r->e.coins, x, stage);
}

static void run_replay(const struct mode *m)
{
	static struct chainfile main_chain, stale;
	chainfile_load(&main_chain, "regtest/regtest_chain.dat");
	chainfile_load(&stale, "regtest/regtest_stale_branch.dat");
	assert_int_equal(main_chain.n, 265);
	assert_int_equal(stale.n, 3);
	json_t *root = vectors_json();
	struct expect maturity, tip, stale_tip, reorg;
	expect_load(root, "after-maturity", &maturity);
	expect_load(root, "tip", &tip);
	expect_load(root, "stale-branch-tip", &stale_tip);
	expect_load(root, "after-reorg", &reorg);
	json_decref(root);

	struct replay r = {.m = m};
	env_init(&r.e);
	uint32_t h = 1;
	for (; h <= 140; h++) {
		connect_block(r.e.coins, &main_chain.recs[h - 1], h, NULL, m->oom);
		after_block(&r);
	}
	stage_end(&r, &maturity, "after-maturity");
	for (; h <= 260; h++) {
		connect_block(r.e.coins, &main_chain.recs[h - 1], h, NULL, m->oom);
		after_block(&r);
	}
	stage_end(&r, &tip, "tip");

	struct undo u[3] = {0};
	for (uint32_t i = 0; i < 3; i++) {
		connect_block(r.e.coins, &stale.recs[i], 261 + i, &u[i], m->oom);
		after_block(&r);
	}
	stage_end(&r, &stale_tip, "stale-branch-tip");
	for (uint32_t i = 3; i-- > 0;) {
		disconnect_block(r.e.coins, &stale.recs[i], &u[i]);
		after_block(&r);
		undo_free(&u[i]);
	}
	check_stats(r.e.coins, &tip, "tip again after disconnecting the stale branch");
	for (h = 261; h <= 265; h++) {
		connect_block(r.e.coins, &main_chain.recs[h - 1], h, NULL, m->oom);
		after_block(&r);
	}
	stage_end(&r, &reorg, "after-reorg");
	if (!m->flush_every && !m->cache_limit && !m->reopen) {
		/* Nothing was ever written: the whole set is in the cache. */
		struct chain_db_counters k;
		chain_db_get_counters(r.e.db, &k);
		assert_int_equal(k.puts, 0);
		/* Coinbase outputs are added with possible_overwrite, so they
		 * are not FRESH and leave tombstones when spent, as in Core. */
		assert_true(chain_coins_cached(r.e.coins) >= reorg.txouts);
		print_message("memory per cached entry: %.1f bytes (%zu entries, %llu coins, "
		              "%zu bytes)\n",
		              (double)chain_coins_memory(r.e.coins) /
		                  (double)chain_coins_cached(r.e.coins),
		              chain_coins_cached(r.e.coins), (unsigned long long)reorg.txouts,
		              chain_coins_memory(r.e.coins));
	}
	/* And once more from the database alone. */
	CHECK(chain_coins_flush(r.e.coins, true, NULL, NULL));
	env_close(&r.e);
	env_open(&r.e);
	check_stats(r.e.coins, &reorg, "after-reorg, reopened");
	env_release(&r.e);
	free(main_chain.buf);
	free(stale.buf);
}

static void test_replay_never_flush(void **state)
{
	(void)state;
	static const struct mode m = {.name = "never"};
	run_replay(&m);
}

static void test_replay_every_block(void **state)
{
	(void)state;
	static const struct mode m = {.name = "every block, sync", .flush_every = 1};
	run_replay(&m);
}

static void test_replay_every_10_empty(void **state)
{
	(void)state;
	static const struct mode m = {
	    .name = "every 10, empty", .flush_every = 10, .empty = true, .reopen = true};
	run_replay(&m);
}

static void test_replay_every_10_sync_reopen(void **state)
{
	(void)state;
	static const struct mode m = {.name = "every 10, sync", .flush_every = 10, .reopen = true};
	run_replay(&m);
}

static void test_replay_tiny_cache(void **state)
{
	(void)state;
	/* Just over the empty cache's own size: nearly every block flushes. */
	static const struct mode m = {
	    .name = "tiny cache", .cache_limit = 64 << 10, .reopen = true};
	run_replay(&m);
}

static void test_replay_oom(void **state)
{
	(void)state;
	static const struct mode m = {.name = "oom", .flush_every = 7, .oom = true};
	run_replay(&m);
	print_message("%ld calls failed with an injected allocation failure and were rerun\n",
	              oom_hits);
	/* The adds' table and chunk growth (a flush allocates nothing). */
	assert_true(oom_hits >= 3);
}

/* ---- FRESH, DIRTY and tombstones ------------------------------------- */

static struct proto_outpoint outpoint(uint8_t t, uint32_t n)
{
	struct proto_outpoint op;
	memset(&op, 0, sizeof(op));
	op.txid.b[0] = t;
	op.txid.b[31] = (uint8_t)(t * 7);
	op.n = n;
	return op;
}

static const uint8_t P2WPKH[22] = {0x00, 0x14, 1,  2,  3,  4,  5,  6,  7,  8,  9,
                                   10,   11,   12, 13, 14, 15, 16, 17, 18, 19, 20};

static struct chain_coin coin_of(int64_t value, uint32_t height, const uint8_t *s, uint32_t len)
{
	return (struct chain_coin){
	    .value = value, .height = height, .coinbase = false, .script_len = len, .script = s};
}

static size_t count_records(struct chain_db *db)
{
	struct chain_db_cursor *cur;
	CHECK(chain_db_cursor_open(db, CHAIN_TABLE_COINS, &cur));
	const uint8_t *k, *v;
	size_t kl, vl, n = 0;
	while (chain_db_cursor_next(cur, &k, &kl, &v, &vl) == 0)
		n++;
	chain_db_cursor_close(cur);
	return n;
}

static void test_fresh_never_reaches_db(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct proto_outpoint op = outpoint(1, 0);
	struct chain_coin c = coin_of(5000, 10, P2WPKH, sizeof(P2WPKH));
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	assert_int_equal(chain_coins_dirty(e.coins), 1);
	CHECK(chain_coins_spend(e.coins, &op));
	/* Spending a FRESH coin forgets it. */
	assert_int_equal(chain_coins_cached(e.coins), 0);
	assert_int_equal(chain_coins_dirty(e.coins), 0);
	CHECK_ERR(chain_coins_spend(e.coins, &op), CHAIN_ENOTFOUND);
	struct chain_db_counters k0, k1;
	chain_db_get_counters(e.db, &k0);
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	chain_db_get_counters(e.db, &k1);
	/* Only the best block was written. */
	assert_int_equal(k1.puts - k0.puts, 1);
	assert_int_equal(k1.dels - k0.dels, 0);
	assert_int_equal(count_records(e.db), 0);
	env_release(&e);
}

static void test_tombstone_deletes(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct proto_outpoint op = outpoint(2, 3);
	struct chain_coin c = coin_of(7000, 11, P2WPKH, sizeof(P2WPKH)), got;
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	assert_int_equal(count_records(e.db), 1);
	assert_int_equal(chain_coins_cached(e.coins), 1);
	assert_int_equal(chain_coins_dirty(e.coins), 0);
	CHECK(chain_coins_spend(e.coins, &op));
	/* Not FRESH any more: a DIRTY tombstone stays. */
	assert_int_equal(chain_coins_cached(e.coins), 1);
	assert_int_equal(chain_coins_dirty(e.coins), 1);
	CHECK_ERR(chain_coins_get(e.coins, &op, &got), CHAIN_ENOTFOUND);
	CHECK_ERR(chain_coins_spend(e.coins, &op), CHAIN_ENOTFOUND);
	/* The stats walk sees the tombstone over the record. */
	struct chain_utxo_stats st;
	CHECK(chain_coins_stats(e.coins, &st));
	assert_int_equal(st.txouts, 0);
	struct chain_db_counters k0, k1;
	chain_db_get_counters(e.db, &k0);
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	chain_db_get_counters(e.db, &k1);
	assert_int_equal(k1.dels - k0.dels, 1);
	assert_int_equal(count_records(e.db), 0);
	assert_int_equal(chain_coins_cached(e.coins), 0);

	/* A coin only the database has: spent without being cached first. */
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
	assert_int_equal(chain_coins_cached(e.coins), 0);
	CHECK(chain_coins_spend(e.coins, &op));
	assert_int_equal(chain_coins_dirty(e.coins), 1);
	CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
	assert_int_equal(count_records(e.db), 0);
	env_release(&e);
}

static void test_overwrite_rules(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct proto_outpoint op = outpoint(3, 1);
	struct chain_coin a = coin_of(1000, 5, P2WPKH, sizeof(P2WPKH));
	struct chain_coin b = coin_of(2000, 6, P2WPKH, sizeof(P2WPKH)), got;
	CHECK(chain_coins_add(e.coins, &op, &a, false));
	CHECK_ERR(chain_coins_add(e.coins, &op, &b, false), CHAIN_EEXIST);
	CHECK(chain_coins_get(e.coins, &op, &got));
	assert_int_equal(got.value, 1000);
	CHECK(chain_coins_add(e.coins, &op, &b, true));
	CHECK(chain_coins_get(e.coins, &op, &got));
	assert_int_equal(got.value, 2000);
	assert_int_equal(got.height, 6);
	/* Still FRESH (the database never had it): spending forgets it. */
	CHECK(chain_coins_spend(e.coins, &op));
	assert_int_equal(chain_coins_cached(e.coins), 0);

	/* possible_overwrite on a coin the cache does not hold: not FRESH,
	 * since the database may have one; spending leaves a tombstone. */
	CHECK(chain_coins_add(e.coins, &op, &a, true));
	CHECK(chain_coins_spend(e.coins, &op));
	assert_int_equal(chain_coins_cached(e.coins), 1);
	assert_int_equal(chain_coins_dirty(e.coins), 1);

	/* Adding over a tombstone of a flushed coin: not FRESH either. */
	struct proto_outpoint op2 = outpoint(4, 0);
	CHECK(chain_coins_add(e.coins, &op2, &a, false));
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	CHECK(chain_coins_spend(e.coins, &op2));
	CHECK(chain_coins_add(e.coins, &op2, &b, false));
	CHECK(chain_coins_spend(e.coins, &op2));
	/* op's tombstone went with the flush; op2's is new. */
	assert_int_equal(chain_coins_dirty(e.coins), 1);
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	assert_int_equal(count_records(e.db), 0);
	env_release(&e);
}

static void test_unspendable_and_big_scripts(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	static uint8_t big[CHAIN_MAX_COIN_SCRIPT + 1];
	memset(big, 0x51, sizeof(big));
	static const uint8_t ret[] = {0x6a, 0x04, 1, 2, 3, 4};
	struct proto_outpoint op = outpoint(5, 0);
	struct chain_coin c = coin_of(1, 1, ret, sizeof(ret)), got;
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	c = coin_of(1, 1, big, sizeof(big));
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	assert_int_equal(chain_coins_cached(e.coins), 0);
	CHECK_ERR(chain_coins_get(e.coins, &op, &got), CHAIN_ENOTFOUND);

	/* The largest kept script, and an empty one, through the database. */
	c = coin_of(12345, 77, big, CHAIN_MAX_COIN_SCRIPT);
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	struct proto_outpoint op2 = outpoint(5, 1);
	struct chain_coin empty = coin_of(0, 78, NULL, 0);
	CHECK(chain_coins_add(e.coins, &op2, &empty, false));
	CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
	CHECK(chain_coins_get(e.coins, &op, &got));
	assert_int_equal(got.value, 12345);
	assert_int_equal(got.height, 77);
	assert_int_equal(got.script_len, CHAIN_MAX_COIN_SCRIPT);
	assert_memory_equal(got.script, big, CHAIN_MAX_COIN_SCRIPT);
	CHECK(chain_coins_get(e.coins, &op2, &got));
	assert_int_equal(got.script_len, 0);
	assert_int_equal(got.value, 0);
	assert_int_equal(chain_coins_dirty(e.coins), 0);
	assert_int_equal(chain_coins_cached(e.coins), 2);
	env_release(&e);
}

/* The figures stats should give for one txid's outputs, hashed in
 * numeric order of n as Core's std::map does. */
static void expected_hash(const struct proto_hash *txid, const uint32_t *ns, size_t n,
                          const struct chain_coin *c, uint8_t out[32])
{
	struct proto_sha256 sha;
	proto_sha256_init(&sha);
	for (size_t i = 0; i < n; i++) {
		uint8_t b[64];
		memcpy(b, txid->b, 32);
		proto_put_le32(b + 32, ns[i]);
		proto_put_le32(b + 36, c->height << 1 | c->coinbase);
		proto_put_le64(b + 40, (uint64_t)c->value);
		b[48] = (uint8_t)c->script_len;
		proto_sha256_update(&sha, b, 49);
		proto_sha256_update(&sha, c->script, c->script_len);
	}
	proto_sha256d_final(&sha, out);
}

static void test_stats_numeric_order(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	/* 16,512 and up have a VARINT that sorts before 16,511's. */
	static const uint32_t sorted[] = {5, 127, 128, 16511, 16512, 70000};
	static const uint32_t order[] = {70000, 16512, 5, 16511, 128, 127};
	struct chain_coin c = coin_of(42, 9, P2WPKH, sizeof(P2WPKH));
	struct proto_outpoint op = outpoint(9, 0);
	uint8_t want[32];
	expected_hash(&op.txid, sorted, 6, &c, want);
	for (int pass = 0; pass < 3; pass++) {
		/* pass 0: all in the cache; 1: all in the database; 2: half each. */
		for (size_t i = 0; i < 6; i++) {
			if (pass == 2 && i == 3)
				CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
			op.n = order[i];
			CHECK(chain_coins_add(e.coins, &op, &c, true));
		}
		if (pass == 1)
			CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
		struct chain_utxo_stats st;
		CHECK(chain_coins_stats(e.coins, &st));
		assert_int_equal(st.txouts, 6);
		assert_int_equal(st.transactions, 1);
		assert_int_equal(st.bogosize, 6 * (50 + sizeof(P2WPKH)));
		assert_int_equal(st.total_amount, 6 * 42);
		assert_memory_equal(st.hash_serialized, want, 32);
		for (size_t i = 0; i < 6; i++) {
			op.n = order[i];
			CHECK(chain_coins_spend(e.coins, &op));
		}
		CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
		assert_int_equal(count_records(e.db), 0);
	}
	env_release(&e);
}

static void test_map_growth(void **state)
{
	(void)state;
	struct env e;
	chain_db_test_initial_map(64 << 10);
	env_init(&e);
	chain_db_test_initial_map(0);
	struct chain_db_counters k;
	chain_db_get_counters(e.db, &k);
	assert_int_equal(k.map_size, 64 << 10);
	uint8_t script[60];
	memset(script, 0x51, sizeof(script));
	const uint32_t per_tx = 50, txs = 400;
	for (uint32_t t = 0; t < txs; t++) {
		struct proto_outpoint op;
		memset(&op, 0, sizeof(op));
		proto_put_le32(op.txid.b, t * 2654435761u);
		for (uint32_t n = 0; n < per_tx; n++) {
			op.n = n;
			script[0] = (uint8_t)n;
			struct chain_coin c = coin_of(1000 + n, t, script, sizeof(script));
			CHECK(chain_coins_add(e.coins, &op, &c, false));
		}
		if (t % 50 == 49)
			CHECK(chain_coins_flush(e.coins, t % 100 == 99, NULL, NULL));
	}
	chain_db_get_counters(e.db, &k);
	print_message("map grew %llu times to %llu bytes\n", (unsigned long long)k.map_grows,
	              (unsigned long long)k.map_size);
	assert_true(k.map_grows >= 3);
	/* Each flush grew the map before its transaction (chain_db_reserve):
	 * none was aborted on MDB_MAP_FULL and written a second time. */
	assert_int_equal(k.reruns, 0);
	assert_int_equal(count_records(e.db), per_tx * txs);
	struct chain_utxo_stats st;
	CHECK(chain_coins_stats(e.coins, &st));
	assert_int_equal(st.txouts, per_tx * txs);
	assert_true(st.disk_size > 0);
	uint64_t grown = k.map_size;
	env_close(&e);
	/* Asked for the tiny map again, LMDB keeps the size the file grew to. */
	chain_db_test_initial_map(64 << 10);
	env_open(&e);
	chain_db_test_initial_map(0);
	chain_db_get_counters(e.db, &k);
	/* The map holds every page in use (with MDB_WRITEMAP the file's
	 * allocated blocks may also hold pages of transactions that were
	 * aborted to grow the map, so the disk size is no bound here). */
	assert_true(k.pages > 0 && k.map_size >= k.pages * 4096 && k.map_size <= grown);
	assert_int_equal(count_records(e.db), per_tx * txs);
	/* And it grows again from there. */
	for (uint32_t t = txs; t < txs + 100; t++) {
		struct proto_outpoint op;
		memset(&op, 0, sizeof(op));
		proto_put_le32(op.txid.b, t * 2654435761u);
		for (uint32_t n = 0; n < per_tx; n++) {
			op.n = n;
			struct chain_coin c = coin_of(1000 + n, t, script, sizeof(script));
			CHECK(chain_coins_add(e.coins, &op, &c, false));
		}
	}
	CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
	assert_int_equal(count_records(e.db), per_tx * (txs + 100));
	env_release(&e);
}

struct raw_rec {
	const uint8_t *k, *v;
	size_t kl, vl;
};

static int put_raw(struct chain_db_txn *t, void *arg)
{
	const struct raw_rec *r = arg;
	return chain_db_put(t, CHAIN_TABLE_COINS, r->k, r->kl, r->v, r->vl);
}

static int extra_put(struct chain_db_txn *t, void *arg)
{
	int *fail = arg;
	if (*fail)
		return *fail;
	return chain_db_put(t, CHAIN_TABLE_INDEX, "node", 4, "rec", 3);
}

/* A failed flush changes nothing; extra's records share the transaction. */
static void test_flush_failure_and_extra(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct proto_outpoint a = outpoint(7, 0), b = outpoint(7, 1);
	struct chain_coin c = coin_of(10, 1, P2WPKH, sizeof(P2WPKH));
	CHECK(chain_coins_add(e.coins, &a, &c, false));
	CHECK(chain_coins_flush(e.coins, false, NULL, NULL));
	CHECK(chain_coins_spend(e.coins, &a));
	CHECK(chain_coins_add(e.coins, &b, &c, false));
	struct proto_hash best;
	memset(best.b, 0xab, 32);
	chain_coins_set_best_block(e.coins, &best);
	struct chain_utxo_stats before, after;
	CHECK(chain_coins_stats(e.coins, &before));
	int fail = CHAIN_EINVALID;
	CHECK_ERR(chain_coins_flush(e.coins, true, extra_put, &fail), CHAIN_EINVALID);
	assert_int_equal(chain_coins_dirty(e.coins), 2);
	assert_int_equal(chain_coins_cached(e.coins), 2);
	assert_int_equal(count_records(e.db), 1); /* still a's */
	char buf[8];
	size_t len;
	CHECK_ERR(chain_db_get(e.db, CHAIN_TABLE_INDEX, "node", 4, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);
	/* The flush allocates nothing of its own (its order is built in the
	 * table's memory): with allocations failing it fails only as fn says,
	 * and the cache is whole again afterwards. */
	base_alloc_fail_after(0);
	CHECK_ERR(chain_coins_flush(e.coins, true, extra_put, &fail), CHAIN_EINVALID);
	base_alloc_fail_after(-1);
	assert_int_equal(chain_coins_dirty(e.coins), 2);
	assert_int_equal(chain_coins_cached(e.coins), 2);
	assert_true(chain_coins_in_cache(e.coins, &a) && chain_coins_in_cache(e.coins, &b));
	/* And in the stats walk (sorted list, cursor, group buffer). */
	for (long k = 0; k < 3; k++) {
		base_alloc_fail_after(k);
		CHECK_ERR(chain_coins_stats(e.coins, &after), CHAIN_ENOMEM);
		base_alloc_fail_after(-1);
	}
	CHECK(chain_coins_stats(e.coins, &after));
	/* Everything but the bytes on disk: with MDB_WRITEMAP the aborted
	 * transaction wrote its pages into the file's sparse tail (blocks
	 * allocated, data unchanged; the next transaction reuses them). */
	assert_true(after.disk_size >= before.disk_size);
	after.disk_size = before.disk_size;
	assert_memory_equal(&before, &after, sizeof(before));
	fail = 0;
	CHECK(chain_coins_flush(e.coins, true, extra_put, &fail));
	CHECK(chain_db_get(e.db, CHAIN_TABLE_INDEX, "node", 4, buf, sizeof(buf), &len));
	assert_int_equal(len, 3);
	CHECK(chain_coins_stats(e.coins, &after));
	assert_memory_equal(before.hash_serialized, after.hash_serialized, 32);
	assert_int_equal(after.txouts, 1);
	env_close(&e);
	env_open(&e);
	assert_memory_equal(chain_coins_best_block(e.coins)->b, best.b, 32);
	env_release(&e);
}

/*
 * A flush that changes a third of the table or more rewrites it (merged
 * in key order into the other name), a smaller one updates it in place
 * (issue 24). The same changes flushed in several rounds through both
 * ways and flushed once at the end give the same UTXO set, records and
 * hash, and the rewritten table is the one found again after a reopen.
 */
static void apply_round(struct chain_coins *c, uint32_t round, uint32_t adds, uint32_t spends)
{
	for (uint32_t i = 0; i < adds; i++) {
		struct proto_outpoint op;
		memset(&op, 0, sizeof(op));
		proto_put_le32(op.txid.b, (round * 100003u + i) * 2654435761u);
		op.n = i % 300; /* some above 127: two-byte VARINT keys */
		struct chain_coin coin = coin_of(1000 + i, round, P2WPKH, sizeof(P2WPKH));
		CHECK(chain_coins_add(c, &op, &coin, false));
	}
	/* Spend coins of earlier rounds: records, cached copies, and FRESH ones. */
	for (uint32_t i = 0; i < spends; i++) {
		struct proto_outpoint op;
		memset(&op, 0, sizeof(op));
		uint32_t r = i % (round + 1), k = (i * 7919u) % 1000u;
		proto_put_le32(op.txid.b, (r * 100003u + k) * 2654435761u);
		op.n = k % 300;
		int err = chain_coins_spend(c, &op);
		assert_true(err == 0 || err == CHAIN_ENOTFOUND);
	}
}

static void test_rewrite_and_update_agree(void **state)
{
	(void)state;
	struct env a, b;
	env_init(&a);
	env_init(&b);
	struct chain_db_counters ka;
	const uint32_t adds[] = {3000, 150, 2500, 100}, spends[] = {0, 120, 900, 60};
	for (uint32_t r = 0; r < 4; r++) {
		apply_round(a.coins, r, adds[r], spends[r]);
		apply_round(b.coins, r, adds[r], spends[r]);
		CHECK(chain_coins_flush(a.coins, r % 2 == 1, NULL, NULL));
	}
	CHECK(chain_coins_flush(b.coins, false, NULL, NULL));
	chain_db_get_counters(a.db, &ka);
	/* Round 0 into an empty table and round 2 rewrote; 1 and 3 updated. */
	assert_int_equal(ka.rewrites, 2);
	assert_true(ka.dels > 0);
	struct chain_utxo_stats sa, sb;
	CHECK(chain_coins_stats(a.coins, &sa));
	CHECK(chain_coins_stats(b.coins, &sb));
	assert_int_equal(sa.txouts, sb.txouts);
	assert_int_equal(count_records(a.db), count_records(b.db));
	assert_memory_equal(sa.hash_serialized, sb.hash_serialized, 32);
	/* Reopened: the rewritten table is read, under format version 2. */
	env_close(&a);
	env_open(&a);
	CHECK(chain_coins_stats(a.coins, &sa));
	assert_memory_equal(sa.hash_serialized, sb.hash_serialized, 32);
	assert_int_equal(count_records(a.db), sa.txouts);
	uint8_t v[4];
	size_t len;
	CHECK(chain_db_get(a.db, CHAIN_TABLE_META, "version", 7, v, sizeof(v), &len));
	assert_int_equal(proto_le32(v), 2);
	env_release(&a);
	env_release(&b);
}

/* Memory per coin at a realistic size: P2WPKH coins, cache only. */
static void test_memory_per_coin(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	size_t base = chain_coins_memory(e.coins);
	const uint32_t n = 300000;
	for (uint32_t i = 0; i < n; i++) {
		struct proto_outpoint op;
		memset(&op, 0, sizeof(op));
		proto_put_le32(op.txid.b, i / 2);
		op.n = i % 2;
		struct chain_coin c = coin_of(1000, i, P2WPKH, sizeof(P2WPKH));
		CHECK(chain_coins_add(e.coins, &op, &c, false));
	}
	size_t mem = chain_coins_memory(e.coins) - base;
	print_message("memory per cached P2WPKH coin at %u coins: %.1f bytes\n", n,
	              (double)mem / n);
	/* The entry (96) plus 8-byte slots at a load between 3/8 and 3/4. */
	assert_true(mem / n >= 96 && mem / n <= 96 + 22 + 1);
	env_release(&e);
}

static void test_corrupt_record(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct proto_outpoint op = outpoint(6, 0);
	struct chain_coin c = coin_of(1, 1, P2WPKH, sizeof(P2WPKH)), got;
	CHECK(chain_coins_add(e.coins, &op, &c, false));
	CHECK(chain_coins_flush(e.coins, true, NULL, NULL));
	/* Trailing garbage on the record: neither get nor stats accepts it. */
	struct chain_db_cursor *cur;
	CHECK(chain_db_cursor_open(e.db, CHAIN_TABLE_COINS, &cur));
	const uint8_t *k, *v;
	size_t kl, vl;
	CHECK(chain_db_cursor_next(cur, &k, &kl, &v, &vl));
	uint8_t key[64], val[64];
	memcpy(key, k, kl);
	memcpy(val, v, vl);
	chain_db_cursor_close(cur);
	val[vl] = 0xee;
	struct raw_rec rec = {key, val, kl, vl + 1};
	CHECK(chain_db_write(e.db, put_raw, &rec));
	CHECK_ERR(chain_coins_get(e.coins, &op, &got), CHAIN_ECORRUPT);
	struct chain_utxo_stats st;
	CHECK_ERR(chain_coins_stats(e.coins, &st), CHAIN_ECORRUPT);
	env_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fresh_never_reaches_db),
	    cmocka_unit_test(test_tombstone_deletes),
	    cmocka_unit_test(test_overwrite_rules),
	    cmocka_unit_test(test_unspendable_and_big_scripts),
	    cmocka_unit_test(test_stats_numeric_order),
	    cmocka_unit_test(test_map_growth),
	    cmocka_unit_test(test_flush_failure_and_extra),
	    cmocka_unit_test(test_rewrite_and_update_agree),
	    cmocka_unit_test(test_memory_per_coin),
	    cmocka_unit_test(test_corrupt_record),
	    cmocka_unit_test(test_replay_never_flush),
	    cmocka_unit_test(test_replay_every_block),
	    cmocka_unit_test(test_replay_every_10_empty),
	    cmocka_unit_test(test_replay_every_10_sync_reopen),
	    cmocka_unit_test(test_replay_tiny_cache),
	    cmocka_unit_test(test_replay_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
