/**
 * chain/coins_internal.h: what the files behind chain/coins.h share and
 * nothing else uses: a streaming cursor over an LMDB table, the on-disk
 * coin record (chain/coinsdb.c), the cache's entries for the stats walk
 * (chain/utxohash.c), and test-only knobs and counters.
 *
 * Include after chain/chain.h. Threads: as chain/coins.h, one owner.
 */
#ifndef PEERD_CHAIN_COINS_INTERNAL_H
#define PEERD_CHAIN_COINS_INTERNAL_H

#ifndef PEERD_CHAIN_H
#error "include chain/chain.h first"
#endif

/* ---------------------------------------------------------------------- */
/* chain/db.c: cursor, counters, knobs                                     */

/** A read cursor over one table; see chain_db_cursor_open. */
struct chain_db_cursor;

/**
 * Start walking `table` in key order inside the database's read
 * transaction, which stays open (pinning the pages it sees) until
 * chain_db_cursor_close: keep walks short-lived and never write between
 * open and close. 0, CHAIN_ENOMEM or CHAIN_EDB.
 */
CHAIN_WUR int chain_db_cursor_open(struct chain_db *db, enum chain_table table,
                                   struct chain_db_cursor **out);
/**
 * The next record (the first on the first call). The pointers stay valid
 * until the cursor is closed. 0, CHAIN_ENOTFOUND at the end, or CHAIN_EDB
 * / CHAIN_ECORRUPT.
 */
CHAIN_WUR int chain_db_cursor_next(struct chain_db_cursor *c, const uint8_t **key, size_t *klen,
                                   const uint8_t **val, size_t *vlen);
/** Close and release the read transaction; NULL is fine. */
void chain_db_cursor_close(struct chain_db_cursor *c);

/** What a database has done since it was opened (tests, stats). */
struct chain_db_counters {
	uint64_t puts;      /**< chain_db_put calls that succeeded */
	uint64_t dels;      /**< chain_db_del calls that succeeded */
	uint64_t commits;   /**< write transactions committed */
	uint64_t map_grows; /**< times the map was doubled after MDB_MAP_FULL */
	uint64_t map_size;  /**< current map size in bytes */
	uint64_t pages;     /**< pages in use (LMDB's last page + 1) after the last commit */
	uint64_t commit_ns; /**< how long the last commit took (its msync and meta page) */
	uint64_t reruns;    /**< write transactions aborted on MDB_MAP_FULL and run again */
	uint64_t page_size; /**< LMDB's page size */
	uint64_t rewrites;  /**< flushes that rewrote the coins' table (chain_db_rewrite_begin) */
};
/**
 * Whether a fault inside LMDB (a damaged page leading outside the file)
 * was caught: every call on the handle has failed with CHAIN_ECORRUPT
 * since, and the node must stop.
 */
bool chain_db_broken(const struct chain_db *db);
/**
 * Why the handle is broken: CHAIN_ECORRUPT (damage), CHAIN_ENOSPC or
 * CHAIN_EIO (a write into the map the file system could not back), or 0.
 */
int chain_db_broken_err(const struct chain_db *db);
/**
 * Grow the map, before a large write transaction, to twice the pages in
 * use plus `bytes`: a flush that outgrew the map was aborted and run again
 * from the start at each doubling (issue 24: two or three times for each
 * large flush of the 10 M-coin chain). With MDB_WRITEMAP the map costs
 * address space and the sparse file's length, not disk. No reader may be
 * active. 0, CHAIN_EOVERFLOW, or LMDB's error for the new map.
 */
CHAIN_WUR int chain_db_reserve(struct chain_db *db, uint64_t bytes);
/*
 * A rewrite of the coins inside a write transaction (issue 24): when a
 * flush changes a large part of the set, merging the old records with the
 * changes into a fresh table in key order (MDB_APPEND: full leaves, no
 * splits) costs less than updating leaves at random, each of which LMDB
 * copies and splits. The table lives under one of two names; the meta
 * record saying which, and format version 2, are written with it.
 */
/** The records of `table` as the transaction sees them. */
CHAIN_WUR int chain_db_txn_entries(struct chain_db_txn *t, enum chain_table table, uint64_t *n);
/** Start rewriting the coins into the other name (empty). CHAIN_EARG if one is under way. */
CHAIN_WUR int chain_db_rewrite_begin(struct chain_db_txn *t);
/** The old table's next record (`first`: the first), in key order; CHAIN_ENOTFOUND at the end. */
CHAIN_WUR int chain_db_rewrite_next(struct chain_db_txn *t, bool first, const uint8_t **key,
                                    size_t *klen, const uint8_t **val, size_t *vlen);
/** Append a record to the new table; keys strictly increasing (else CHAIN_EDB). */
CHAIN_WUR int chain_db_rewrite_put(struct chain_db_txn *t, const void *key, size_t klen,
                                   const void *val, size_t vlen);
/** Count an old record the rewrite leaves out (a tombstone's delete). */
void chain_db_rewrite_dropped(struct chain_db_txn *t);
/** Empty the old table and make the new one the coins' at the commit. */
CHAIN_WUR int chain_db_rewrite_end(struct chain_db_txn *t);

/*
 * A write on a flush thread (issue 24): the owner prepares the database,
 * one other thread runs one write, the owner ends it after joining that
 * thread. Meanwhile the owner may read (chain_db_get, cursors) but not
 * write; its reads see the coins as of the last commit, under the right
 * name even when the write rewrote them.
 */
/**
 * Owner's thread, no write in flight: grow the map for `bytes` more
 * (chain_db_reserve) and open what the write may need. 0 or an error.
 */
CHAIN_WUR int chain_db_async_begin(struct chain_db *db, uint64_t bytes);
/**
 * The flush thread's chain_db_write: the same, except that a full map is
 * not grown (the owner's reads forbid it): CHAIN_EOVERFLOW with
 * *map_full set, and the owner grows it and writes again itself.
 */
CHAIN_WUR int chain_db_write_async(struct chain_db *db,
                                   int (*fn)(struct chain_db_txn *t, void *arg), void *arg,
                                   bool *map_full);
/** Owner's thread, after joining the flush thread: adopt what it committed. */
void chain_db_async_end(struct chain_db *db);

/** Copy the counters out. */
void chain_db_get_counters(const struct chain_db *db, struct chain_db_counters *out);

/**
 * Test-only: the map size a newly opened environment starts with (0 =
 * the default). Lets a test force MDB_MAP_FULL with a little data.
 */
void chain_db_test_initial_map(size_t bytes);

/* ---------------------------------------------------------------------- */
/* chain/coinsdb.c: the coin record                                        */

/** Longest coin key: txid and a VARINT of a 32-bit index. */
#define CHAIN_COIN_KEY_MAX (32u + 5u)
/** Longest coin value: VARINT code, VARINT amount, VARINT size, script. */
#define CHAIN_COIN_VAL_MAX (5u + CHAIN_VARINT_MAX + 5u + CHAIN_MAX_COIN_SCRIPT)

/**
 * The key: txid (wire order) then Core's VARINT(n). memcmp order of keys
 * is Core's LevelDB order (less its 'C' prefix): grouped by txid, but
 * within a txid not always numeric (a VARINT of 16,512 or more sorts
 * before shorter ones that start higher). Returns the length.
 */
size_t chain_coin_key_encode(uint8_t out[CHAIN_COIN_KEY_MAX], const struct proto_outpoint *op);
/** Read a key back: 0 or CHAIN_ECORRUPT (wrong length, bad VARINT, index over 32 bits). */
CHAIN_WUR int chain_coin_key_decode(const uint8_t *key, size_t len, struct proto_outpoint *op);
/**
 * Core's Coin serialization: VARINT(height * 2 + coinbase), then the
 * output with amount and script compression. out must hold
 * CHAIN_COIN_VAL_MAX bytes; returns the length.
 */
size_t chain_coin_value_encode(uint8_t *out, const struct chain_coin *coin);
/**
 * Read a value: coin->script points into `val` or into `special`
 * (CHAIN_SCRIPT_SPECIAL_MAX bytes, the caller's). 0 or CHAIN_ECORRUPT
 * (also for trailing bytes or a script over CHAIN_MAX_COIN_SCRIPT).
 */
CHAIN_WUR int chain_coin_value_decode(const uint8_t *val, size_t len, struct chain_coin *coin,
                                      uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX]);

/* ---------------------------------------------------------------------- */
/* chain/coins.c: the cache's entries, for the stats walk                  */

/** Entry flags, as Core's CCoinsCacheEntry. */
enum {
	CHAIN_COIN_DIRTY = 1, /**< differs from the database */
	CHAIN_COIN_FRESH = 2, /**< the database has no such coin: spending it just forgets it */
	CHAIN_COIN_SPENT = 4, /**< a tombstone: spent, the database still has it */
};

/** Scripts up to this size live inside the entry (measured: covers P2PK compressed and all
 * standard templates; see coins.c). */
#define CHAIN_COIN_INLINE 40u

/** One cached coin or tombstone; 96 bytes. */
struct chain_coin_entry {
	struct proto_outpoint op;
	uint32_t height;
	int64_t value;
	uint32_t script_len;
	uint8_t flags;
	uint8_t coinbase;
	uint8_t pad_[2];
	union {
		uint8_t inl[CHAIN_COIN_INLINE]; /**< script_len <= CHAIN_COIN_INLINE */
		uint8_t *heap;                  /**< else, xmalloc'd */
	} s;
};

/** The entry's script bytes. */
static inline const uint8_t *chain_coin_entry_script(const struct chain_coin_entry *e)
{
	return e->script_len <= CHAIN_COIN_INLINE ? e->s.inl : e->s.heap;
}

/**
 * Every dirty entry (tombstones included), sorted in coin key order, into
 * an xmalloc'd array the caller frees (*out NULL when there are none).
 * Pointers are valid until the cache is next changed. 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_coins_dirty_sorted(struct chain_coins *c, const struct chain_coin_entry ***out,
                                       size_t *n);
/** The database under the cache. */
struct chain_db *chain_coins_db(struct chain_coins *c);

/** Order two outpoints as their coin keys sort (memcmp of chain_coin_key_encode). */
int chain_coin_key_cmp(const struct proto_outpoint *a, const struct proto_outpoint *b);

#endif
