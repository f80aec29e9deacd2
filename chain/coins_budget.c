/*
 * chain/coins_budget.c: how much memory the coins cache may use before a
 * flush, as Core's Chainstate::GetCoinsCacheSizeState. The cache has its
 * share of -dbcache plus whatever part of the mempool's allowance
 * (-maxmempool) the mempool does not use now: a node in initial block
 * download has an empty mempool, so its cache grows to dbcache + 300 MB
 * before the first flush, and gives the room back as the mempool fills.
 */
#include <inttypes.h>

#include "chain/chain.h"
#include "chain/internal.h"

enum chain_cache_state chain_coins_size_state(size_t cache_usage, size_t coins_max,
                                              size_t mempool_max, size_t mempool_usage)
{
	/* Signed as Core's: a mempool over its limit lends nothing, never less. */
	int64_t spare = (int64_t)mempool_max - (int64_t)mempool_usage;
	int64_t total = (int64_t)coins_max + (spare > 0 ? spare : 0);
	/* LARGE within 10% of the space, or 10 MiB of it when that is less:
	 * a big cache flushes once it has less than a block's worth left. */
	int64_t tenth = (9 * total) / 10;
	int64_t margin = total - (int64_t)CHAIN_CACHE_LARGE_MARGIN;
	int64_t large = tenth > margin ? tenth : margin;
	if ((int64_t)cache_usage > total)
		return CHAIN_CACHE_CRITICAL;
	if ((int64_t)cache_usage > large)
		return CHAIN_CACHE_LARGE;
	return CHAIN_CACHE_OK;
}

size_t chain_coins_share(size_t dbcache_bytes)
{
	/* kernel/caches.h's CacheSizes: the block index's and the coins
	 * database's LevelDB caches come off the top, the rest is the coins
	 * cache. peerd's LMDB has no such caches (the kernel's page cache
	 * does that work), but the coins cache gets the same bytes as Core's,
	 * so that the same -dbcache flushes at the same size. */
	size_t rest = dbcache_bytes;
	size_t block_tree =
	    rest / 8 < CHAIN_BLOCK_DB_CACHE_MAX ? rest / 8 : CHAIN_BLOCK_DB_CACHE_MAX;
	rest -= block_tree;
	size_t coins_db = rest / 2 < CHAIN_COINS_DB_CACHE_MAX ? rest / 2 : CHAIN_COINS_DB_CACHE_MAX;
	return rest - coins_db;
}

void chain_lend_cache_space(struct chain *c, size_t max_bytes, size_t (*usage)(void *ctx),
                            void *ctx)
{
	c->lend_max = usage ? max_bytes : 0;
	c->lend_usage = usage;
	c->lend_ctx = ctx;
	if (usage) /* Core's init.cpp prints this under "Cache configuration:" */
		chain_logf(c, CHAIN_LOG_INFO,
		           "* Using %.1f MiB for in-memory UTXO set (plus up to %.1f MiB of unused "
		           "mempool space)",
		           (double)chain_coins_share(c->cfg.dbcache_bytes) / (1024.0 * 1024.0),
		           (double)max_bytes / (1024.0 * 1024.0));
}

enum chain_cache_state chain_cache_state_of(struct chain *c, size_t usage)
{
	size_t pool = c->lend_usage ? c->lend_usage(c->lend_ctx) : 0;
	return chain_coins_size_state(usage, chain_coins_share(c->cfg.dbcache_bytes), c->lend_max,
	                              pool);
}

enum chain_cache_state chain_cache_state(struct chain *c)
{
	size_t usage = chain_coins_memory(c->coins);
	enum chain_cache_state s = chain_cache_state_of(c, usage);
	if (s == CHAIN_CACHE_CRITICAL) {
		size_t pool = c->lend_usage ? c->lend_usage(c->lend_ctx) : 0;
		size_t share = chain_coins_share(c->cfg.dbcache_bytes);
		int64_t spare = (int64_t)c->lend_max - (int64_t)pool;
		chain_logf(c, CHAIN_LOG_INFO, "Cache size (%zu) exceeds total space (%" PRId64 ")",
		           usage, (int64_t)share + (spare > 0 ? spare : 0));
	}
	return s;
}
