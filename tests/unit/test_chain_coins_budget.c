/*
 * tests/unit/test_chain_coins_budget.c: the coins cache's space, as Core's
 * GetCoinsCacheSizeState (validation_flush_tests.cpp checks the same
 * thresholds): dbcache plus the mempool's unused allowance; OK, LARGE past
 * max(90%, space - 10 MiB), CRITICAL past the space; and a chain that
 * borrows the mempool's room does not flush until the mempool takes it back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau
#define MIB           ((size_t)1 << 20)

static void test_thresholds_no_mempool(void **state)
{
	(void)state;
	/* 100 MiB: LARGE from 90 MiB (the 10% and the 10 MiB agree). */
	assert_int_equal(chain_coins_size_state(0, 100 * MIB, 0, 0), CHAIN_CACHE_OK);
	assert_int_equal(chain_coins_size_state(90 * MIB, 100 * MIB, 0, 0), CHAIN_CACHE_OK);
	assert_int_equal(chain_coins_size_state(90 * MIB + 1, 100 * MIB, 0, 0), CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(100 * MIB, 100 * MIB, 0, 0), CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(100 * MIB + 1, 100 * MIB, 0, 0),
	                 CHAIN_CACHE_CRITICAL);
	/* 450 MiB: the 10 MiB margin is the nearer one (440 MiB, not 405). */
	assert_int_equal(chain_coins_size_state(430 * MIB, 450 * MIB, 0, 0), CHAIN_CACHE_OK);
	assert_int_equal(chain_coins_size_state(440 * MIB + 1, 450 * MIB, 0, 0), CHAIN_CACHE_LARGE);
	/* 4 MiB: 10% of it (3.6 MiB). */
	size_t large4 = (9 * 4 * MIB) / 10;
	assert_int_equal(chain_coins_size_state(large4, 4 * MIB, 0, 0), CHAIN_CACHE_OK);
	assert_int_equal(chain_coins_size_state(large4 + 1, 4 * MIB, 0, 0), CHAIN_CACHE_LARGE);
}

static void test_share_of_dbcache(void **state)
{
	(void)state;
	/* The figures Core 29 logs: "* Using 440.0 MiB for in-memory UTXO set" at
	 * the default, 90.0 at -dbcache=100, 1.8 at the minimum of 4. */
	assert_int_equal(chain_coins_share(450 * MIB), 440 * MIB);
	assert_int_equal(chain_coins_share(100 * MIB), 90 * MIB);
	size_t four = 4 * MIB - MIB / 2; /* 4 MiB less its eighth */
	assert_int_equal(chain_coins_share(4 * MIB), four - four / 2);
	assert_int_equal(chain_coins_share(1), 1);
}

static void test_thresholds_mempool(void **state)
{
	(void)state;
	size_t pool = 300 * 1000 * 1000; /* -maxmempool=300, in bytes as Core */
	/* An empty mempool lends all of it: 100 MiB + 300 MB. */
	size_t total = 100 * MIB + pool;
	assert_int_equal(chain_coins_size_state(total - 10 * MIB, 100 * MIB, pool, 0),
	                 CHAIN_CACHE_OK);
	assert_int_equal(chain_coins_size_state(total - 10 * MIB + 1, 100 * MIB, pool, 0),
	                 CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(total, 100 * MIB, pool, 0), CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(total + 1, 100 * MIB, pool, 0),
	                 CHAIN_CACHE_CRITICAL);
	/* As the mempool fills, the loan shrinks byte for byte. */
	size_t used = 200 * 1000 * 1000;
	assert_int_equal(chain_coins_size_state(total - used, 100 * MIB, pool, used),
	                 CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(total - used + 1, 100 * MIB, pool, used),
	                 CHAIN_CACHE_CRITICAL);
	/* A full mempool, or one over its limit, lends nothing and takes nothing. */
	assert_int_equal(chain_coins_size_state(100 * MIB, 100 * MIB, pool, pool),
	                 CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(100 * MIB, 100 * MIB, pool, pool + 50 * MIB),
	                 CHAIN_CACHE_LARGE);
	assert_int_equal(chain_coins_size_state(100 * MIB + 1, 100 * MIB, pool, pool + 50 * MIB),
	                 CHAIN_CACHE_CRITICAL);
}

/* ---- a chain borrowing a fake mempool's room ---------------------------- */

static size_t fake_usage(void *ctx)
{
	return *(size_t *)ctx;
}

static char logged[256];
static void capture_log(void *arg, enum chain_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	if (strstr(msg, "in-memory UTXO set"))
		snprintf(logged, sizeof(logged), "%s", msg);
}

static uint64_t flushes(struct chain *c)
{
	struct chain_stats s;
	chain_get_stats(c, &s);
	return s.flushes;
}

static void submit_one(struct chain *c, const struct tu_records *r, size_t i)
{
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(r->blk[i], r->len[i], &b, NULL), 0);
	enum chain_submit res;
	struct chain_state st;
	assert_int_equal(chain_submit_block(c, r->blk[i], r->len[i], &b, &res, &st), 0);
	assert_int_equal(res, CHAIN_SUBMIT_ACCEPTED);
	proto_block_release(&b);
}

static void test_chain_borrows_mempool_room(void **state)
{
	(void)state;
	struct tu_records r;
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), REGTEST_MAGIC, &r);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "budget");
	/* One byte of dbcache: without a loan every block is CRITICAL. */
	struct chain_config cfg = {
	    .params = proto_params(PROTO_NET_REGTEST),
	    .dir = dir,
	    .dbcache_bytes = 1,
	    .par = 1,
	    .log = capture_log,
	};
	struct chain *c = NULL;
	assert_int_equal(chain_open(&c, &cfg), 0);
	size_t half = r.n / 2;
	size_t usage = 0;
	chain_lend_cache_space(c, 300 * 1000 * 1000, fake_usage, &usage);
	assert_string_equal(logged, "* Using 0.0 MiB for in-memory UTXO set (plus up to 286.1 MiB "
	                            "of unused mempool space)");
	uint64_t f0 = flushes(c);
	for (size_t i = 0; i < half; i++)
		submit_one(c, &r, i);
	assert_true(chain_coins_memory(chain_get_coins(c)) > 1);
	assert_int_equal(flushes(c), f0); /* the empty mempool's room holds it all */
	/* The mempool fills: the loan is gone, the next block flushes. */
	usage = 300 * 1000 * 1000;
	submit_one(c, &r, half);
	assert_true(flushes(c) > f0);
	/* Taken back entirely (the mempool detached): flushes go on. */
	usage = 0;
	chain_lend_cache_space(c, 0, NULL, NULL);
	uint64_t f1 = flushes(c);
	submit_one(c, &r, half + 1);
	assert_true(flushes(c) > f1);
	assert_int_equal(chain_close(c), 0);
	tu_rmtree(dir);
	tu_records_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thresholds_no_mempool),
	    cmocka_unit_test(test_share_of_dbcache),
	    cmocka_unit_test(test_thresholds_mempool),
	    cmocka_unit_test(test_chain_borrows_mempool_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
