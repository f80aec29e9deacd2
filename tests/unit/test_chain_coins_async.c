/*
 * tests/unit/test_chain_coins_async.c: the coins flush on its own thread
 * (issue 24). While a flush thread writes the snapshot, this thread looks
 * coins up (cache, snapshot, database), spends snapshot and database
 * coins, fills the cache again and tries a second flush; the result must
 * equal the same changes flushed on one thread. Built with TSan too
 * (TSAN_TEST_SRCS): the snapshot is shared by both threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define CHECK(expr)           tu_assert_chain_err((expr), 0)
#define CHECK_ERR(expr, want) tu_assert_chain_err((expr), (want))

/* Coins 0..BASE-1 start in the database; the test then spends SPENT of
 * them and adds FRESH_N new ones: more than a third of the table, so the
 * flush rewrites the coins' table (a new name the readers must follow). */
#define BASE    20000u
#define SPENT   5000u
#define FRESH_N 10000u
#define REFILL  8000u

struct env {
	char dir[TU_TMPDIR_MAX];
	struct chain_db *db;
	struct chain_coins *coins;
};

static void env_init(struct env *e, const char *tag)
{
	tu_tmpdir(e->dir, tag);
	CHECK(chain_db_open(&e->db, e->dir));
	CHECK(chain_coins_new(&e->coins, e->db, 64u << 20));
}

static void env_reopen(struct env *e)
{
	chain_coins_free(e->coins);
	chain_db_close(e->db);
	CHECK(chain_db_open(&e->db, e->dir));
	CHECK(chain_coins_new(&e->coins, e->db, 64u << 20));
}

static void env_release(struct env *e)
{
	chain_coins_free(e->coins);
	chain_db_close(e->db);
	tu_rmtree(e->dir);
}

static void outpoint(uint32_t i, struct proto_outpoint *op)
{
	memset(op, 0, sizeof(*op));
	/* Spread over the key space: the txid's first bytes vary most. */
	uint32_t x = i * 2654435761u;
	memcpy(op->txid.b, &x, 4);
	memcpy(op->txid.b + 4, &i, 4);
	op->n = i % 3;
}

/* Every seventh script is larger than the entry's inline room. */
static uint8_t script_buf[64];

static struct chain_coin coin_of(uint32_t i)
{
	struct chain_coin c = {.value = (int64_t)i * 1000 + 1, .height = i % 500000 + 1};
	c.script_len = i % 7 ? 22 : 60;
	script_buf[0] = 0x00;
	script_buf[1] = 0x14;
	memset(script_buf + 2, (int)(i & 0xff), sizeof(script_buf) - 2);
	c.script = script_buf;
	return c;
}

static void add(struct chain_coins *c, uint32_t i)
{
	struct proto_outpoint op;
	outpoint(i, &op);
	struct chain_coin coin = coin_of(i);
	CHECK(chain_coins_add(c, &op, &coin, false));
}

static void spend(struct chain_coins *c, uint32_t i)
{
	struct proto_outpoint op;
	outpoint(i, &op);
	CHECK(chain_coins_spend(c, &op));
}

/* Coin i is there with its value and script, or (want == false) not. */
static void expect(struct chain_coins *c, uint32_t i, bool want)
{
	struct proto_outpoint op;
	outpoint(i, &op);
	struct chain_coin got;
	int err = chain_coins_get(c, &op, &got);
	if (!want) {
		CHECK_ERR(err, CHAIN_ENOTFOUND);
		return;
	}
	CHECK(err);
	struct chain_coin w = coin_of(i);
	assert_int_equal(got.value, w.value);
	assert_int_equal(got.height, w.height);
	assert_int_equal(got.script_len, w.script_len);
	assert_memory_equal(got.script, w.script, w.script_len);
}

static void best(struct chain_coins *c, uint8_t b)
{
	struct proto_hash h;
	memset(h.b, b, sizeof(h.b));
	chain_coins_set_best_block(c, &h);
}

/* The changes after the first flush, in the order both tests apply them. */
static void first_changes(struct chain_coins *c)
{
	for (uint32_t i = 0; i < SPENT; i++)
		spend(c, i);
	for (uint32_t i = BASE; i < BASE + FRESH_N; i++)
		add(c, i);
	for (uint32_t i = SPENT; i < SPENT + 1000; i++)
		expect(c, i, true); /* clean copies in the snapshot */
	best(c, 2);
}

/* While the first is flushed: spend snapshot coins (fresh and clean) and
 * database coins, and add more. */
static void second_changes(struct chain_coins *c)
{
	for (uint32_t i = BASE; i < BASE + 1000; i++)
		spend(c, i);
	for (uint32_t i = SPENT; i < SPENT + 500; i++)
		spend(c, i);
	for (uint32_t i = 10000; i < 11000; i++)
		spend(c, i);
	for (uint32_t i = BASE + FRESH_N; i < BASE + FRESH_N + REFILL; i++)
		add(c, i);
	best(c, 3);
}

static bool live_after_second(uint32_t i)
{
	if (i < SPENT + 500 || (i >= 10000 && i < 11000) || (i >= BASE && i < BASE + 1000))
		return false;
	return i < BASE + FRESH_N + REFILL;
}

static int put_marker(struct chain_db_txn *t, void *arg)
{
	const char *v = arg;
	return chain_db_put(t, CHAIN_TABLE_META, "test", 4, v, strlen(v));
}

static void stats(struct chain_coins *c, struct chain_utxo_stats *s)
{
	CHECK(chain_coins_stats(c, s));
}

static void test_flush_in_flight(void **state)
{
	(void)state;
	struct env a, ref;
	env_init(&a, "coins-async");
	env_init(&ref, "coins-async-ref");
	for (uint32_t i = 0; i < BASE; i++) {
		add(a.coins, i);
		add(ref.coins, i);
	}
	best(a.coins, 1);
	best(ref.coins, 1);
	CHECK(chain_coins_flush(a.coins, true, NULL, NULL));
	CHECK(chain_coins_flush(ref.coins, true, NULL, NULL));

	first_changes(a.coins);
	first_changes(ref.coins);
	size_t before = chain_coins_memory(a.coins);
	struct chain_db_counters k0, k1;
	chain_db_get_counters(a.db, &k0);
	CHECK(chain_coins_flush_start(a.coins, put_marker, "one"));
	assert_true(chain_coins_flush_busy(a.coins));
	/* The snapshot stays counted; the cache itself starts empty. */
	assert_true(chain_coins_memory(a.coins) >= before);
	assert_true(chain_coins_snapshot_memory(a.coins) > 0);
	assert_int_equal(chain_coins_dirty(a.coins), 0);
	CHECK_ERR(chain_coins_flush_start(a.coins, NULL, NULL), CHAIN_EARG);
	struct proto_outpoint op;
	outpoint(BASE, &op);
	assert_true(chain_coins_in_cache(a.coins, &op));

	second_changes(a.coins);
	second_changes(ref.coins);
	/* Read everything again and again while the flush thread writes,
	 * commits and (this flush) renames the coins' table: the reads must
	 * be right before, across and after the commit. */
	struct chain_coins_flush_report r = {0};
	unsigned rounds = 0;
	char v[8];
	size_t len;
	for (bool committed = false; !committed; rounds++) {
		/* The marker is seen once the flush thread has committed: one
		 * more round then reads the database under the new name before
		 * this thread has joined and adopted it. */
		committed = !chain_db_get(a.db, CHAIN_TABLE_META, "test", 4, v, sizeof(v), &len);
		/* Forgotten after each read, so that every round reads the
		 * snapshot and the database again. */
		for (uint32_t i = 0; i < BASE + FRESH_N + REFILL + 100; i += 7) {
			expect(a.coins, i, live_after_second(i));
			outpoint(i, &op);
			chain_coins_uncache(a.coins, &op);
		}
	}
	chain_coins_flush_poll(a.coins, true, &r);
	assert_true(r.done);
	CHECK(r.err);
	assert_int_equal(r.entries, SPENT + FRESH_N);
	chain_db_get_counters(a.db, &k1);
	assert_int_equal(k1.rewrites - k0.rewrites, 1); /* the table under its other name */
	fprintf(stderr, "%u rounds of reads while the flush was in flight\n", rounds);
	assert_false(chain_coins_flush_busy(a.coins));
	assert_int_equal(chain_coins_snapshot_memory(a.coins), 0);
	chain_coins_flush_poll(a.coins, false, &r);
	assert_false(r.done); /* said once */

	/* The marker went with the coins. */
	CHECK(chain_db_get(a.db, CHAIN_TABLE_META, "test", 4, v, sizeof(v), &len));
	assert_int_equal(len, 3);
	assert_memory_equal(v, "one", 3);

	/* A second flush on its own thread, waited for at once. */
	CHECK(chain_coins_flush_start(a.coins, put_marker, "two"));
	chain_coins_flush_poll(a.coins, true, &r);
	assert_true(r.done);
	CHECK(r.err);
	CHECK(chain_coins_flush(ref.coins, true, NULL, NULL));
	for (uint32_t i = 0; i < BASE + FRESH_N + REFILL + 100; i += 13)
		expect(a.coins, i, live_after_second(i));

	struct chain_utxo_stats sa, sr;
	stats(a.coins, &sa);
	stats(ref.coins, &sr);
	assert_int_equal(sa.txouts, sr.txouts);
	assert_int_equal(sa.total_amount, sr.total_amount);
	assert_memory_equal(sa.hash_serialized, sr.hash_serialized, 32);
	assert_memory_equal(sa.best_block.b, sr.best_block.b, 32);

	/* On disk: the same after a reopen, at the second flush's block. */
	env_reopen(&a);
	stats(a.coins, &sa);
	assert_memory_equal(sa.hash_serialized, sr.hash_serialized, 32);
	assert_int_equal(chain_coins_best_block(a.coins)->b[0], 3);
	env_release(&a);
	env_release(&ref);
}

/* Whatever waits for the database (a synchronous flush, the stats walk,
 * free) waits for the flush in flight first. */
static void test_waiters(void **state)
{
	(void)state;
	struct env a;
	env_init(&a, "coins-async-wait");
	for (uint32_t i = 0; i < BASE; i++)
		add(a.coins, i);
	best(a.coins, 1);
	CHECK(chain_coins_flush_start(a.coins, NULL, NULL));
	for (uint32_t i = 0; i < 100; i++)
		spend(a.coins, i);
	best(a.coins, 2);
	struct chain_utxo_stats s;
	stats(a.coins, &s); /* joins the flush thread */
	assert_false(chain_coins_flush_busy(a.coins));
	assert_int_equal(s.txouts, BASE - 100); /* the cache's tombstones over the database */
	struct chain_coins_flush_report r;
	chain_coins_flush_poll(a.coins, false, &r);
	assert_true(r.done); /* the report waited for the owner */
	CHECK(r.err);
	CHECK(chain_coins_flush_start(a.coins, NULL, NULL));
	CHECK(chain_coins_flush(a.coins, false, NULL, NULL)); /* nothing left to write */
	stats(a.coins, &s);
	assert_int_equal(s.txouts, BASE - 100);
	for (uint32_t i = 0; i < 200; i++)
		add(a.coins, BASE + i);
	CHECK(chain_coins_flush_start(a.coins, NULL, NULL));
	env_reopen(&a); /* free joins it; the coins are on disk */
	stats(a.coins, &s);
	assert_int_equal(s.txouts, BASE + 100);
	env_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flush_in_flight),
	    cmocka_unit_test(test_waiters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
