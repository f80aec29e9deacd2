/**
 * chain/db_internal.h: the LMDB handle's innards, shared by chain/db.c
 * (the environment, the fault guard, reads and writes) and
 * chain/db_rewrite.c (the map grown ahead of a flush, the coins' table
 * rewritten in key order). Nothing outside these two files includes it.
 *
 * Include after chain/chain.h and chain/coins_internal.h.
 */
#ifndef PEERD_CHAIN_DB_INTERNAL_H
#define PEERD_CHAIN_DB_INTERNAL_H

#include <stdatomic.h>

#include <lmdb.h>

/* The format of everything this database holds; bump on any change.
 * Version 2: the coins may live in the table "coins.1", named by the meta
 * record CHAIN_DB_COINS_TABLE_KEY (chain_db_rewrite_begin). A database is
 * written as version 1 until its first rewrite, so that a peerd that reads
 * only version 1 refuses it from then on instead of reading an empty
 * "coins". */
#define CHAIN_DB_FORMAT_VERSION     2u
#define CHAIN_DB_FORMAT_VERSION_OLD 1u
#define CHAIN_DB_VERSION_KEY        "version"
#define CHAIN_DB_COINS_TABLE_KEY    "coins_table"

/** The two names the coins' table alternates between. */
extern const char *const chain_db_coins_name[2];

/** One LMDB environment (chain/db.c's header comment says why it is set up so). */
struct chain_db {
	MDB_env *env;
	MDB_dbi dbi[CHAIN_TABLE__COUNT];
	MDB_txn *rd;       /* the read transaction; reset while rd_depth == 0 */
	unsigned rd_depth; /* nested users of rd (a get inside a walk) */
	size_t map_size;
	unsigned psize; /* LMDB's page size (the system's) */
	char *dir;
	struct chain_db_counters ctr;
	chain_log_fn log; /* where open errors go (NULL: stderr) */
	void *log_arg;
	/* The map, for the fault guard: a fault inside it is damage. Written
	 * only by the owning thread, read by its own signal handler. */
	const char *map_addr;
	size_t map_len;
	/* A fault was caught: LMDB's state is unknown, and every later call
	 * fails with this: CHAIN_ECORRUPT for damage, CHAIN_ENOSPC or
	 * CHAIN_EIO for a page the file system could not back. 0: none.
	 * Atomic: a flush thread's fault is seen by the owner's next call. */
	_Atomic int broken;
	/* The write transaction under way (db_write), so that one a fault left
	 * open is aborted at close: its write cursors are freed only with it. */
	MDB_txn *wr;
	unsigned coins_name; /* which COINS_NAME holds the coins */
	/* Both names' handles once opened (chain_db_async_begin opens the
	 * other one, so a rewrite on a flush thread never opens a handle). */
	MDB_dbi coins_dbi[2];
	bool coins_dbi_open[2];
	/* A write on a flush thread is in flight (chain_db_async_begin to
	 * chain_db_async_end): the owner neither writes nor resizes the map. */
	bool async;
	/* The id of a flush thread's write transaction that rewrote the coins
	 * into the other name, stored before its commit and adopted by the
	 * owner at chain_db_async_end: a read transaction at that id or later
	 * sees the coins under the other name. 0: none. */
	_Atomic uint64_t rewrite_txnid;
};

/** A write transaction under way (chain_db_write). */
struct chain_db_txn {
	struct chain_db *db;
	MDB_txn *txn;
	bool map_full; /* a put or delete hit MDB_MAP_FULL: grow and rerun */
	int mdb_err;   /* the first LMDB error seen, for the caller's mapping */
	/* One write cursor a table, opened on first use and freed by LMDB
	 * with the transaction. A put or delete through a cursor still on the
	 * key's leaf skips the search from the root (mdb_cursor_set checks the
	 * current page first): a flush writes in key order, so runs of its
	 * records share leaves, where mdb_put would search every time. */
	MDB_cursor *wcur[CHAIN_TABLE__COUNT];
	/* A rewrite of the coins under way (chain_db_rewrite_begin): the old
	 * table read through rcur, the new one written through acur. */
	bool rewriting, rewritten;
	MDB_dbi new_dbi;
	MDB_cursor *rcur, *acur;
};

/** Note LMDB's error `rc` in the transaction (a full map is rerun) and map it to a chain_err. */
int chain_db_txn_fail(struct chain_db_txn *t, int rc);
/** Double the map; no transaction of this handle may be live. 0 or a chain_err. */
int chain_db_grow_map(struct chain_db *db);

#endif
