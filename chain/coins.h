/**
 * chain/coins.h: the UTXO set: an LMDB database (chainstate/) and an
 * in-memory cache over it, as Core's CCoinsViewDB under CCoinsViewCache.
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * A coin created and spent between two flushes never reaches the database
 * (Core's FRESH); a spent coin the database holds is a tombstone in the
 * cache until the flush deletes it. The coins, the best block hash and the
 * caller's other records (the block index) change in one LMDB write
 * transaction, so the database is always at exactly one block.
 *
 * Threads: one thread owns a chain_db and its coins cache; a flush may
 * run on a thread of its own (chain_coins_flush_start), which touches only
 * the snapshot it was handed and its one write transaction.
 */
#ifndef PEERD_CHAIN_COINS_H
#define PEERD_CHAIN_COINS_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/coins.h"
#endif

/* ---------------------------------------------------------------------- */
/* The database: one LMDB environment, a few tables                        */

/** Tables of the chainstate database. */
enum chain_table {
	CHAIN_TABLE_COINS = 0, /**< outpoint key -> coin (chain/coinsdb.c's format) */
	CHAIN_TABLE_INDEX,     /**< block hash -> chain_node record */
	CHAIN_TABLE_META,      /**< short names -> values: best block, format version, files */
	CHAIN_TABLE__COUNT,
};

/** An open chainstate database; opaque. */
struct chain_db;
/** A write transaction, alive only inside chain_db_write's callback. */
struct chain_db_txn;

/**
 * Open (creating) the LMDB environment in directory `dir` (created if
 * missing, mode 0700). The map grows on demand: nobody sizes it. `*out` is
 * the caller's (chain_db_close). A new database gets a format-version
 * record; an existing one without it, or with a version this code does
 * not read, fails with CHAIN_ECORRUPT (and a line on stderr saying why).
 * 0, CHAIN_EIO, CHAIN_EDB, CHAIN_ECORRUPT or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_db_open(struct chain_db **out, const char *dir);
/**
 * chain_db_open with its error lines (a damaged or truncated file, an
 * unknown format) to `log` instead of stderr. A data file shorter than its
 * meta page says is CHAIN_ECORRUPT, found before any other page is read.
 * An LMDB assertion (damaged pages) is logged there too, with the
 * recovery, and ends the process with status 1 instead of abort().
 */
CHAIN_WUR int chain_db_open_logged(struct chain_db **out, const char *dir, chain_log_fn log,
                                   void *log_arg);
/**
 * What the operator is told to do about a damaged chainstate; a format
 * string whose one %s is the chainstate directory.
 */
#define CHAIN_DB_RECOVER                                                                           \
	"To recover, stop peerd, delete %s and start it again (or start it with -reindex): "       \
	"the chain state is rebuilt from the block files"
/** Close; NULL is fine. */
void chain_db_close(struct chain_db *db);

/**
 * Run `fn` inside one write transaction and commit it. When the map is
 * full, the transaction is aborted, the map grown, and `fn` run again from
 * the start: fn must only put and delete. fn's non-zero return aborts and
 * is returned. 0, fn's error, CHAIN_EDB or CHAIN_EIO.
 */
CHAIN_WUR int chain_db_write(struct chain_db *db, int (*fn)(struct chain_db_txn *t, void *arg),
                             void *arg);
/** Put a record (replacing). 0, CHAIN_EDB or CHAIN_EOVERFLOW (key over LMDB's 511 bytes). */
CHAIN_WUR int chain_db_put(struct chain_db_txn *t, enum chain_table table, const void *key,
                           size_t klen, const void *val, size_t vlen);
/** Delete a record; a missing one is not an error. 0 or CHAIN_EDB. */
CHAIN_WUR int chain_db_del(struct chain_db_txn *t, enum chain_table table, const void *key,
                           size_t klen);
/** Empty a whole table inside a write (reindexing wipes the coins, the index). 0 or CHAIN_EDB. */
CHAIN_WUR int chain_db_clear(struct chain_db_txn *t, enum chain_table table);
/**
 * Read one record into buf (cap bytes); *len gets its size. 0,
 * CHAIN_ENOTFOUND, CHAIN_EOVERFLOW (bigger than cap: *len says how big)
 * or CHAIN_EDB.
 */
CHAIN_WUR int chain_db_get(struct chain_db *db, enum chain_table table, const void *key,
                           size_t klen, void *buf, size_t cap, size_t *len);
/**
 * Walk a table in key order (memcmp), calling fn with each record; the
 * pointers are valid only during the call. Stops at fn's first non-zero
 * return, which it returns. 0, fn's error or CHAIN_EDB.
 */
CHAIN_WUR int chain_db_foreach(struct chain_db *db, enum chain_table table,
                               int (*fn)(const void *key, size_t klen, const void *val, size_t vlen,
                                         void *arg),
                               void *arg);
/** Bytes the database files take on disk (Core's `disk_size`). */
uint64_t chain_db_disk_size(struct chain_db *db);

/* ---------------------------------------------------------------------- */
/* Coins                                                                   */

/** Largest script kept in the UTXO set (Core: larger ones are unspendable). */
#define CHAIN_MAX_COIN_SCRIPT 10000u

/**
 * One coin, borrowed: `script` points into the cache and is valid only
 * until the next call of any chain_coins_* function on that cache.
 */
struct chain_coin {
	int64_t value;
	uint32_t height;
	bool coinbase;
	uint32_t script_len;
	const uint8_t *script;
};

/** The UTXO cache over a database; opaque. */
struct chain_coins;

/**
 * A cache over `db` that aims to stay under `cache_bytes` (Core's dbcache
 * share for coins; the caller flushes when chain_coins_memory passes it).
 * Reads the best block from the database. 0, CHAIN_ENOMEM, CHAIN_EDB or
 * CHAIN_ECORRUPT (a best-block record that is not 32 bytes).
 */
CHAIN_WUR int chain_coins_new(struct chain_coins **out, struct chain_db *db, size_t cache_bytes);
/** Free the cache, dropping unflushed changes; NULL is fine. */
void chain_coins_free(struct chain_coins *c);

/**
 * Look a coin up: cache first, then the database (filling the cache).
 * 0, CHAIN_ENOTFOUND (never created, or spent), CHAIN_ENOMEM, CHAIN_EDB
 * or CHAIN_ECORRUPT.
 */
CHAIN_WUR int chain_coins_get(struct chain_coins *c, const struct proto_outpoint *op,
                              struct chain_coin *out);
/**
 * Add a coin (the script is copied). A provably unspendable script
 * (starting with OP_RETURN, or over CHAIN_MAX_COIN_SCRIPT) is not added
 * and returns 0, as Core's AddCoin. Adding over an unspent coin is
 * CHAIN_EEXIST unless `possible_overwrite` (Core's BIP30 exception cases).
 * As Core, only the cache is consulted: without `possible_overwrite` the
 * caller vouches that the database holds no unspent coin at `op` (true
 * for every non-coinbase output since BIP34), so a new entry is FRESH.
 * 0, CHAIN_EEXIST, CHAIN_ENOMEM or CHAIN_EDB.
 */
CHAIN_WUR int chain_coins_add(struct chain_coins *c, const struct proto_outpoint *op,
                              const struct chain_coin *coin, bool possible_overwrite);
/** Spend (remove) a coin. 0, CHAIN_ENOTFOUND, CHAIN_ENOMEM or CHAIN_EDB. */
CHAIN_WUR int chain_coins_spend(struct chain_coins *c, const struct proto_outpoint *op);

/** True when op has an entry in the cache (a coin or a tombstone): no database read. */
bool chain_coins_in_cache(const struct chain_coins *c, const struct proto_outpoint *op);
/**
 * Forget op's entry if it is a clean copy of the database's (Core's
 * Uncache): the mempool drops what it read for a transaction it rejected,
 * so invalid transactions cannot fill the cache. Changed entries stay.
 */
void chain_coins_uncache(struct chain_coins *c, const struct proto_outpoint *op);

/** The block the coins are at (all zero before the first block). */
const struct proto_hash *chain_coins_best_block(const struct chain_coins *c);
/** Say which block the cache is now at (written at the next flush). */
void chain_coins_set_best_block(struct chain_coins *c, const struct proto_hash *hash);

/** Bytes the cache uses (entries, scripts, table), a flush's snapshot included. */
size_t chain_coins_memory(const struct chain_coins *c);
/** Core's CoinsCacheSizeState: how near the cache is to the space it may use. */
enum chain_cache_state {
	CHAIN_CACHE_OK = 0,   /**< room to spare */
	CHAIN_CACHE_LARGE,    /**< near the space: flush when there is time (between blocks) */
	CHAIN_CACHE_CRITICAL, /**< over the space: flush now */
};
/** Core's MAX_BLOCK_DB_CACHE and MAX_COINS_DB_CACHE: what -dbcache gives those first. */
#define CHAIN_BLOCK_DB_CACHE_MAX ((size_t)2 << 20)
#define CHAIN_COINS_DB_CACHE_MAX ((size_t)8 << 20)
/**
 * The coins cache's share of -dbcache (bytes), as Core's CacheSizes: less
 * min(1/8, 2 MiB) for the block index and min(half the rest, 8 MiB) for
 * the coins database (450 MiB: 440 MiB; 100 MiB: 90 MiB).
 */
size_t chain_coins_share(size_t dbcache_bytes);
/** LARGE starts this far under the space at most (Core's MAX_BLOCK_COINSDB_USAGE_BYTES). */
#define CHAIN_CACHE_LARGE_MARGIN (10u << 20)
/**
 * Core's GetCoinsCacheSizeState, pure: the cache (`cache_usage` bytes) may
 * use `coins_max` plus what the mempool leaves of its allowance
 * (max(0, mempool_max - mempool_usage)); LARGE past max(90% of that,
 * that - 10 MiB), CRITICAL past all of it.
 */
enum chain_cache_state chain_coins_size_state(size_t cache_usage, size_t coins_max,
                                              size_t mempool_max, size_t mempool_usage);
/** Entries in the cache, and of them those not yet written. */
size_t chain_coins_cached(const struct chain_coins *c);
size_t chain_coins_dirty(const struct chain_coins *c);

/**
 * Write every change and the best block in one transaction, together with
 * what `extra` (may be NULL) puts in the same transaction. `empty`: drop
 * every entry afterwards (Core's Flush), else keep clean entries (Sync).
 * On failure the cache is unchanged. Waits for a flush in flight first.
 * 0, extra's error, CHAIN_EDB, CHAIN_EIO.
 */
CHAIN_WUR int chain_coins_flush(struct chain_coins *c, bool empty,
                                int (*extra)(struct chain_db_txn *t, void *arg), void *arg);

/*
 * A flush on its own thread (issue 24): the cache as it is becomes a
 * frozen snapshot that one thread writes in one transaction, while the
 * owner goes on with an empty cache; lookups go cache, snapshot,
 * database. One flush in flight at a time. Everything that needs the
 * database to hold every change (chain_coins_flush, the stats walk, free)
 * waits for it first.
 */
/** How a flush on its own thread ended (chain_coins_flush_poll). */
struct chain_coins_flush_report {
	bool done;      /**< a flush ended since the last poll (the rest is zero if not) */
	int err;        /**< 0, or its error: the database stays at the flush before */
	uint64_t ns;    /**< from the hand-off to the end of its commit */
	size_t entries; /**< changes written (tombstones included) */
	bool map_full;  /**< the map was full: the owner grew it and wrote at the join */
};
/**
 * Hand every change, the best block and what `extra` puts (called on the
 * flush thread: it must read only memory nobody changes meanwhile) to a
 * flush thread, and empty the cache. The memory stays counted in
 * chain_coins_memory until the flush is polled. Owner's thread. 0,
 * CHAIN_EARG (a flush in flight), CHAIN_ENOMEM, or the map's growth's
 * error; a flush that failed before makes every later one fail with its
 * error.
 */
CHAIN_WUR int chain_coins_flush_start(struct chain_coins *c,
                                      int (*extra)(struct chain_db_txn *t, void *arg), void *arg);
/** Whether a flush started by chain_coins_flush_start has not been joined yet. */
bool chain_coins_flush_busy(const struct chain_coins *c);
/**
 * Join the flush thread when it has finished (or `wait`: until it has),
 * and say how the flush ended, once (out->done false: nothing new). A
 * failed flush leaves its snapshot in place as a layer: lookups stay
 * right, but no flush can follow.
 */
void chain_coins_flush_poll(struct chain_coins *c, bool wait, struct chain_coins_flush_report *out);
/** Bytes of chain_coins_memory held by the snapshot of the flush in flight. */
size_t chain_coins_snapshot_memory(const struct chain_coins *c);

/** gettxoutsetinfo's figures for the coins at the best block (Core's CCoinsStats). */
struct chain_utxo_stats {
	struct proto_hash best_block;
	uint64_t txouts;             /**< unspent outputs */
	uint64_t transactions;       /**< transactions with at least one */
	uint64_t bogosize;           /**< Core's GetBogoSize sum */
	int64_t total_amount;        /**< satoshis */
	uint8_t hash_serialized[32]; /**< hash_serialized_3, internal byte order */
	uint64_t disk_size;
};

/**
 * Compute the stats over every coin, cache merged over the database in
 * outpoint order (the database's key order, as Core's LevelDB order), as
 * Core's ComputeUTXOStats with CoinStatsHashType::HASH_SERIALIZED. Does not
 * flush. 0, CHAIN_ENOMEM, CHAIN_EDB or CHAIN_ECORRUPT.
 */
CHAIN_WUR int chain_coins_stats(struct chain_coins *c, struct chain_utxo_stats *out);
/** Called with each coin's serialization as Core's TxOutSer (outpoint, height * 2 + coinbase,
 * the output); the bytes are valid during the call only. */
typedef void (*chain_coin_ser_fn)(void *arg, const uint8_t *ser, size_t len);
/**
 * chain_coins_stats, handing each coin's TxOutSer to each(arg, ...) as it
 * is hashed (gettxoutsetinfo muhash: Core's ApplyCoinHash over the set).
 * each may be NULL. The same returns.
 */
CHAIN_WUR int chain_coins_stats_each(struct chain_coins *c, struct chain_utxo_stats *out,
                                     chain_coin_ser_fn each, void *arg);

#endif
