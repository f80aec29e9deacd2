/*
 * chain/db_rewrite.c: two things a large flush of the coins asks of the
 * database (issue 24): room in the map before its transaction starts, and
 * a rewrite of the coins' table in key order instead of leaf-by-leaf
 * updates when it changes a large part of the set.
 *
 * Why a rewrite: LMDB updates a B-tree copy on write, so every leaf a
 * changed coin lands in is copied, and random inserts split full leaves
 * and leave them ~60% full. Merging the old records with the sorted
 * changes into a fresh table with MDB_APPEND fills each leaf in turn, with
 * no search and no split. The table alternates between two names; the
 * meta record naming the current one, and the format version, are
 * written in the same transaction, so a crash finds one or the other.
 */
#include <string.h>

#include "base/require.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "chain/db_internal.h"

int chain_db_reserve(struct chain_db *db, uint64_t bytes)
{
	if (db->broken)
		return db->broken;
	/* Copy on write: a transaction may write a new copy of every page in
	 * use before the old ones are free again, so room for twice the data
	 * plus what it adds. ctr.pages is LMDB's count after the last commit
	 * (or the open); this process is the only writer. */
	uint64_t used = db->ctr.pages * db->psize, want;
	if (used > (UINT64_MAX - bytes) / 2)
		return CHAIN_EOVERFLOW;
	want = 2 * used + bytes;
	while (db->map_size < want) {
		int err = chain_db_grow_map(db);
		if (err)
			return err;
	}
	return 0;
}

/* ---- a rewrite of the coins ------------------------------------------ */

int chain_db_txn_entries(struct chain_db_txn *t, enum chain_table table, uint64_t *n)
{
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	MDB_stat st;
	int rc = mdb_stat(t->txn, t->db->dbi[table], &st);
	if (rc)
		return chain_db_txn_fail(t, rc);
	*n = st.ms_entries;
	return 0;
}

int chain_db_rewrite_begin(struct chain_db_txn *t)
{
	struct chain_db *db = t->db;
	if (t->rewriting || t->rewritten)
		return CHAIN_EARG;
	/* The other name, emptied (a rewrite leaves the old table empty but
	 * named). Its handle is LMDB's to close if this transaction aborts. */
	unsigned to = db->coins_name ^ 1;
	int rc = 0;
	if (db->coins_dbi_open[to])
		t->new_dbi = db->coins_dbi[to];
	else
		rc = mdb_dbi_open(t->txn, chain_db_coins_name[to], MDB_CREATE, &t->new_dbi);
	if (!rc)
		rc = mdb_drop(t->txn, t->new_dbi, 0);
	if (!rc)
		rc = mdb_cursor_open(t->txn, db->dbi[CHAIN_TABLE_COINS], &t->rcur);
	if (!rc)
		rc = mdb_cursor_open(t->txn, t->new_dbi, &t->acur);
	if (rc)
		return chain_db_txn_fail(t, rc);
	t->rewriting = true;
	return 0;
}

int chain_db_rewrite_next(struct chain_db_txn *t, bool first, const uint8_t **key, size_t *klen,
                          const uint8_t **val, size_t *vlen)
{
	if (!t->rewriting)
		return CHAIN_EARG;
	MDB_val k, v;
	int rc = mdb_cursor_get(t->rcur, &k, &v, first ? MDB_FIRST : MDB_NEXT);
	if (rc == MDB_NOTFOUND)
		return CHAIN_ENOTFOUND;
	if (rc)
		return chain_db_txn_fail(t, rc);
	*key = k.mv_data;
	*klen = k.mv_size;
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

int chain_db_rewrite_put(struct chain_db_txn *t, const void *key, size_t klen, const void *val,
                         size_t vlen)
{
	if (!t->rewriting)
		return CHAIN_EARG;
	if (klen == 0 || klen > (size_t)mdb_env_get_maxkeysize(t->db->env))
		return CHAIN_EOVERFLOW;
	/* MDB_APPEND: the key goes after the last one, into the last leaf,
	 * which LMDB fills before it starts the next (no splits, full
	 * leaves); a key out of order is MDB_KEYEXIST. */
	MDB_val k = {.mv_size = klen, .mv_data = (void *)key};
	MDB_val v = {.mv_size = vlen, .mv_data = (void *)val};
	int rc = mdb_cursor_put(t->acur, &k, &v, MDB_APPEND);
	if (rc)
		return chain_db_txn_fail(t, rc);
	t->db->ctr.puts++;
	return 0;
}

void chain_db_rewrite_dropped(struct chain_db_txn *t)
{
	t->db->ctr.dels++;
}

int chain_db_rewrite_end(struct chain_db_txn *t)
{
	struct chain_db *db = t->db;
	if (!t->rewriting)
		return CHAIN_EARG;
	/* The old tree's pages go to the free list (LMDB does not read its
	 * leaves to drop them); the new name and format are recorded in the
	 * same transaction, so a crash finds one table or the other. */
	uint8_t which = (uint8_t)(db->coins_name ^ 1), ver[4];
	proto_put_le32(ver, CHAIN_DB_FORMAT_VERSION);
	MDB_val k = {.mv_size = sizeof(CHAIN_DB_COINS_TABLE_KEY) - 1,
	             .mv_data = (void *)CHAIN_DB_COINS_TABLE_KEY};
	MDB_val v = {.mv_size = 1, .mv_data = &which};
	MDB_val vk = {.mv_size = sizeof(CHAIN_DB_VERSION_KEY) - 1,
	              .mv_data = (void *)CHAIN_DB_VERSION_KEY};
	MDB_val vv = {.mv_size = sizeof(ver), .mv_data = ver};
	t->wcur[CHAIN_TABLE_COINS] = NULL; /* a cursor of the old table: freed with the txn */
	int rc = mdb_drop(t->txn, db->dbi[CHAIN_TABLE_COINS], 0);
	if (!rc)
		rc = mdb_put(t->txn, db->dbi[CHAIN_TABLE_META], &k, &v, 0);
	if (!rc)
		rc = mdb_put(t->txn, db->dbi[CHAIN_TABLE_META], &vk, &vv, 0);
	if (rc)
		return chain_db_txn_fail(t, rc);
	t->rewriting = false;
	t->rewritten = true;
	return 0;
}

/* ---- a write on a flush thread ----------------------------------------- */

/* Open (creating) the coins' other name in a transaction of its own. */
static int open_other(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	struct chain_db *db = t->db;
	unsigned to = db->coins_name ^ 1;
	MDB_dbi dbi;
	int rc = mdb_dbi_open(t->txn, chain_db_coins_name[to], MDB_CREATE, &dbi);
	if (rc)
		return chain_db_txn_fail(t, rc);
	db->coins_dbi[to] = dbi; /* LMDB closes it if the commit fails: only kept below */
	return 0;
}

int chain_db_async_begin(struct chain_db *db, uint64_t bytes)
{
	require(!db->async);
	int err = chain_db_reserve(db, bytes);
	if (err)
		return err;
	/* A handle opened inside the flush thread's transaction would be
	 * that transaction's alone until it commits, and readers here could
	 * not use it for a moment after: open it now, committed. An empty
	 * table under the other name changes nothing a reader of version 1
	 * looks at. */
	unsigned to = db->coins_name ^ 1;
	if (!db->coins_dbi_open[to]) {
		if ((err = chain_db_write(db, open_other, NULL)))
			return err;
		db->coins_dbi_open[to] = true;
	}
	db->async = true;
	return 0;
}

void chain_db_async_end(struct chain_db *db)
{
	if (!db->async)
		return;
	db->async = false;
	if (atomic_load_explicit(&db->rewrite_txnid, memory_order_acquire)) {
		unsigned to = db->coins_name ^ 1;
		db->dbi[CHAIN_TABLE_COINS] = db->coins_dbi[to];
		db->coins_name = to;
		atomic_store_explicit(&db->rewrite_txnid, 0, memory_order_relaxed);
	}
}
