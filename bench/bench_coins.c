/* bench/bench_coins.c: the UTXO cache: add and spend, add, flush to LMDB. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "chain/chain.h"

static const uint8_t P2WPKH[22] = {0x00, 0x14, 1,  2,  3,  4,  5,  6,  7,  8,  9,
                                   10,   11,   12, 13, 14, 15, 16, 17, 18, 19, 20};

struct bench_env {
	char dir[64];
	struct chain_db *db;
	struct chain_coins *coins;
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int env_up(struct bench_ctx *ctx, struct bench_env *e)
{
	strcpy(e->dir, "/tmp/peerd-bench-coins-XXXXXX");
	if (!mkdtemp(e->dir) || chain_db_open(&e->db, e->dir)) {
		bench_fail(ctx, "cannot open a database in /tmp");
		return -1;
	}
	if (chain_coins_new(&e->coins, e->db, (size_t)1 << 30)) {
		bench_fail(ctx, "chain_coins_new failed");
		return -1;
	}
	return 0;
}

static void env_down(struct bench_env *e)
{
	chain_coins_free(e->coins);
	chain_db_close(e->db);
	nftw(e->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static struct proto_outpoint op_of(size_t i)
{
	struct proto_outpoint op;
	memset(&op, 0, sizeof(op));
	/* Spread over the txid like real hashes would be. */
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;
	memcpy(op.txid.b, &x, sizeof(x));
	memcpy(op.txid.b + 24, &i, sizeof(i));
	op.n = (uint32_t)(i & 1);
	return op;
}

static int add_n(struct bench_env *e, size_t from, size_t n)
{
	struct chain_coin c = {.value = 1000, .height = 1, .script_len = 22, .script = P2WPKH};
	for (size_t i = from; i < from + n; i++) {
		struct proto_outpoint op = op_of(i);
		if (chain_coins_add(e->coins, &op, &c, false))
			return -1;
	}
	return 0;
}

/* A coin created and spent between flushes: Core's FRESH fast path. */
BENCH(CoinsCacheAddSpend)
{
	struct bench_env e;
	if (env_up(ctx, &e))
		return;
	/* A warm cache of 100k coins, so the table is not trivially small. */
	if (add_n(&e, 1u << 30, 100000))
		bench_fail(ctx, "add failed");
	struct chain_coin c = {.value = 1000, .height = 2, .script_len = 22, .script = P2WPKH};
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_outpoint op = op_of(i);
		if (chain_coins_add(e.coins, &op, &c, false) || chain_coins_spend(e.coins, &op)) {
			bench_fail(ctx, "add/spend failed at %zu", i);
			break;
		}
	}
	bench_stop(ctx);
	env_down(&e);
}

/* Adding distinct coins: table growth and chunk allocation amortised. */
BENCH(CoinsCacheAdd)
{
	struct bench_env e;
	if (env_up(ctx, &e))
		return;
	bench_reset(ctx);
	if (add_n(&e, 0, n))
		bench_fail(ctx, "add failed");
	bench_stop(ctx);
	if (n >= 100000)
		bench_note(ctx, "%.1f bytes of cache per P2WPKH coin at %zu coins",
		           (double)chain_coins_memory(e.coins) / (double)n, n);
	env_down(&e);
}

/* Writing dirty coins to LMDB in one committed (synced) transaction; per coin. */
BENCH(CoinsFlush)
{
	struct bench_env e;
	if (env_up(ctx, &e))
		return;
	if (add_n(&e, 0, n))
		bench_fail(ctx, "add failed");
	bench_reset(ctx);
	if (chain_coins_flush(e.coins, true, NULL, NULL))
		bench_fail(ctx, "flush failed");
	bench_stop(ctx);
	if (n >= 100000)
		bench_note(ctx, "%zu coins, %llu bytes on disk", n,
		           (unsigned long long)chain_db_disk_size(e.db));
	env_down(&e);
}

/*
 * The flush of a UTXO set larger than the cache (issue 24, make bench-utxo):
 * 200,000 new coins, spread over the keys like real txids, written into a
 * database that already holds 1,000,000, with 50,000 of those spent; per
 * coin written or deleted. Each record lands on a leaf among thousands, as
 * a flush in a long sync does, not at the end of a growing table.
 */
BENCH_N(CoinsFlushLargeSet, 250000)
{
	struct bench_env e;
	(void)n;
	if (env_up(ctx, &e))
		return;
	if (add_n(&e, 0, 1000000) || chain_coins_flush(e.coins, true, NULL, NULL)) {
		bench_fail(ctx, "setting up the database failed");
		env_down(&e);
		return;
	}
	if (add_n(&e, (size_t)1 << 32, 200000)) {
		bench_fail(ctx, "add failed");
		env_down(&e);
		return;
	}
	for (size_t i = 0; i < 50000; i++) {
		struct proto_outpoint op = op_of(i * 20);
		struct chain_coin c;
		if (chain_coins_get(e.coins, &op, &c) || chain_coins_spend(e.coins, &op)) {
			bench_fail(ctx, "spend failed at %zu", i);
			env_down(&e);
			return;
		}
	}
	bench_reset(ctx);
	if (chain_coins_flush(e.coins, true, NULL, NULL))
		bench_fail(ctx, "flush failed");
	bench_stop(ctx);
	bench_note(ctx, "%llu bytes on disk", (unsigned long long)chain_db_disk_size(e.db));
	env_down(&e);
}
