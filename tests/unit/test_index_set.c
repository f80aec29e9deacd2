/*
 * tests/unit/test_index_set.c: index/set.c on Core's regtest chain: the
 * background catch-up in batches, following the tip as a chain listener,
 * stepping back on invalidateblock (where the chain's tip is still the
 * leaving block while listeners hear of it) and forward again, a stale
 * block's filter kept, filter headers chained, the transaction index
 * (genesis left out), and a reopen that comes back where it was. The
 * coinstats index's record of the tip, after catch-up, reorg and reopen,
 * agrees with a walk over the UTXO set (MuHash of every coin, txouts,
 * bogosize, total amount). A caught-up index's file is compacted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "index/index.h"
#include "index/internal.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"
#include "tests/unit/testutil_regtest.h"

struct fixture {
	struct tu_regtest r;
	struct index_set *s;
};

static void open_set_wipe(struct fixture *f, bool wipe)
{
	struct index_config cfg = {.netdir = f->r.dir,
	                           .txindex = true,
	                           .blockfilter = true,
	                           .coinstats = true,
	                           .wipe = wipe};
	assert_int_equal(index_set_open(&f->s, &cfg), INDEX_OK);
	assert_non_null(f->s);
}

static void open_set(struct fixture *f)
{
	open_set_wipe(f, false);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	tu_regtest_open(&f->r, "indexset");
	open_set(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	/* The chain first (a set attached to it hears of the close), then the set. */
	(void)chain_close(f->r.c);
	f->r.c = NULL;
	index_set_close(f->s);
	tu_regtest_free(&f->r);
	free(f);
	return 0;
}

static void expect_status(struct fixture *f, int32_t height, bool synced)
{
	for (int k = 0; k < INDEX__COUNT; k++) {
		int32_t h;
		bool s;
		index_set_status(f->s, f->r.c, (enum index_kind)k, &h, &s);
		if (h != height || s != synced)
			fail_msg("%s: height %d synced %d, want %d %d",
			         index_name((enum index_kind)k), h, s, height, synced);
	}
}

/* Every active block's filter header is BIP157's hash of its filter and its
 * parent's header. */
static void expect_headers_chained(struct fixture *f)
{
	struct proto_hash prev = {{0}};
	for (int32_t h = 0; h <= chain_height(f->r.c); h++) {
		uint8_t *filter;
		size_t len;
		struct proto_hash header, want;
		assert_int_equal(
		    index_filter_find(f->s, &chain_at(f->r.c, h)->hash, &filter, &len, &header), 0);
		index_filter_header(filter, len, &prev, &want);
		assert_memory_equal(header.b, want.b, 32);
		prev = header;
		free(filter);
	}
}

static void muhash_each(void *arg, const uint8_t *ser, size_t len)
{
	index_muhash_insert(arg, ser, len);
}

/* The coinstats record of the tip equals the UTXO set's own figures. */
static void expect_coinstats_tip(struct fixture *f)
{
	struct index_coinstats cs;
	assert_int_equal(index_coinstats_find(f->s, chain_tip(f->r.c), &cs), INDEX_OK);
	struct index_muhash *m = index_muhash_new();
	struct chain_utxo_stats st;
	assert_int_equal(chain_coins_stats_each(chain_get_coins(f->r.c), &st, muhash_each, m), 0);
	uint8_t want[32];
	index_muhash_finalize(m, want);
	index_muhash_free(m);
	assert_memory_equal(cs.muhash, want, 32);
	assert_int_equal(cs.txouts, st.txouts);
	assert_int_equal(cs.bogosize, st.bogosize);
	assert_int_equal(cs.total_amount, st.total_amount);
	/* Every coin of subsidy is either in the set or unspendable (no
	 * fees on this chain that a miner left). */
	assert_int_equal(cs.total_subsidy, cs.total_amount + cs.total_unspendable);
	assert_int_equal(cs.unspendables_genesis_block, 50 * 100000000ll);
}

static void test_catch_up_follow_reorg_reopen(void **state)
{
	struct fixture *f = *state;
	tu_regtest_submit(&f->r, 0, 30);
	/* Catch-up in batches of 7: 31 blocks (genesis too) take 5 steps. */
	int steps = 0;
	bool more = true;
	while (more) {
		assert_int_equal(index_set_step(f->s, f->r.c, 7, &more), INDEX_OK);
		steps++;
	}
	assert_int_equal(steps, 5);
	expect_status(f, 30, true);
	expect_coinstats_tip(f);
	assert_int_equal(index_set_attach(f->s, f->r.c), INDEX_OK);

	/* Following: each new tip as it is connected. */
	tu_regtest_submit(&f->r, 30, 35);
	expect_status(f, 35, true);
	expect_headers_chained(f);

	/* The transaction index: block 5's coinbase; not genesis's. */
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(f->r.blocks.blk[4], f->r.blocks.len[4], &b, NULL), 0);
	struct proto_hash found;
	assert_int_equal(index_tx_find(f->s, proto_tx_txid(&b.txs[0]), &found), INDEX_OK);
	assert_memory_equal(found.b, chain_at(f->r.c, 5)->hash.b, 32);
	proto_block_release(&b);
	struct proto_block_header gen;
	chain_node_header(chain_at(f->r.c, 0), &gen);
	assert_int_equal(index_tx_find(f->s, &gen.merkle_root, &found), INDEX_ENOTFOUND);

	/* invalidateblock 33: the indexes step back to 32 with the tip. */
	struct chain_node *n33 = chain_at(f->r.c, 33), *n34 = chain_at(f->r.c, 34);
	struct chain_state st;
	chain_state_clear(&st);
	assert_int_equal(chain_invalidate(f->r.c, n33, &st), 0);
	expect_status(f, 32, true);
	expect_coinstats_tip(f);
	/* A stale block keeps its filter, as Core's. */
	uint8_t *filter;
	size_t len;
	struct proto_hash header;
	assert_int_equal(index_filter_find(f->s, &n34->hash, &filter, &len, &header), INDEX_OK);
	free(filter);
	assert_int_equal(chain_reconsider(f->r.c, n33, &st), 0);
	expect_status(f, 35, true);
	expect_headers_chained(f);
	expect_coinstats_tip(f);

	/* Core's m_synced latches: an index that reached the tip stays
	 * "synced" while the tip runs ahead of it (in Core the index hears of
	 * blocks after the tip moves; here the listener is taken away). */
	chain_unlisten(f->r.c, f->s);
	tu_regtest_submit(&f->r, 35, 36);
	expect_status(f, 35, true);
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	expect_status(f, 36, true);
	assert_int_equal(index_set_attach(f->s, f->r.c), INDEX_OK);

	/* Closed and opened again: where it was. */
	index_set_close(f->s);
	chain_unlisten(f->r.c, f->s);
	f->s = NULL;
	open_set(f);
	expect_status(f, 36, true);
	tu_regtest_submit(&f->r, 36, 38);
	expect_status(f, 36, false); /* not synced since it opened: not latched */
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	assert_false(more);
	expect_status(f, 38, true);
	expect_headers_chained(f);
	expect_coinstats_tip(f);

	/* Closed, and the chain steps back meanwhile (invalidateblock 34):
	 * reopened, the indexes step back to the active chain's tip. */
	index_set_close(f->s);
	chain_unlisten(f->r.c, f->s);
	f->s = NULL;
	chain_state_clear(&st);
	assert_int_equal(chain_invalidate(f->r.c, chain_at(f->r.c, 34), &st), 0);
	assert_int_equal(chain_height(f->r.c), 33);
	open_set(f);
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	expect_status(f, 33, true);
	expect_coinstats_tip(f);
}

/* A database a system crash damaged is dropped and built again. */
static void test_damaged_database_rebuilt(void **state)
{
	struct fixture *f = *state;
	tu_regtest_submit(&f->r, 0, 5);
	bool more;
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
	index_set_close(f->s);
	f->s = NULL;
	char path[256];
	snprintf(path, sizeof(path), "%s/indexes/txindex/data.mdb", f->r.dir);
	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	static const uint8_t junk[8192] = {0x5a};
	assert_int_equal(fwrite(junk, 1, sizeof(junk), fp), sizeof(junk));
	assert_int_equal(fclose(fp), 0);
	open_set(f);
	int32_t h;
	bool synced;
	index_set_status(f->s, f->r.c, INDEX_TX, &h, &synced);
	assert_false(synced);
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
	/* -reindex: the indexes start over from genesis. */
	index_set_close(f->s);
	open_set_wipe(f, true);
	expect_status(f, 0, false);
	assert_int_equal(index_set_step(f->s, f->r.c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
}

/* Pages of index k's file that hold no record (two meta pages aside). */
static size_t waste_pages(struct fixture *f, enum index_kind k)
{
	MDB_env *env;
	MDB_dbi dbi;
	index_set_db(f->s, k, &env, &dbi);
	assert_non_null(env);
	MDB_envinfo info;
	MDB_stat st;
	MDB_txn *t;
	assert_int_equal(mdb_env_info(env, &info), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &t), 0);
	assert_int_equal(mdb_stat(t, dbi, &st), 0);
	mdb_txn_abort(t);
	size_t used = 2 + st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
	return info.me_last_pgno + 1 - used;
}

/* The coinstats index's leaves hold as many records as fit (7 of 512 + 37
 * bytes in a 4,096-byte page): records appended in key order, not split
 * in the middle of a leaf. */
static void expect_coinstats_leaves_full(struct fixture *f)
{
	MDB_env *env;
	MDB_dbi dbi;
	MDB_stat st;
	MDB_txn *t;
	index_set_db(f->s, INDEX_COINSTATS, &env, &dbi);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &t), 0);
	assert_int_equal(mdb_stat(t, dbi, &st), 0);
	mdb_txn_abort(t);
	if (st.ms_leaf_pages > (st.ms_entries + 6) / 7)
		fail_msg("%zu leaves for %zu records", (size_t)st.ms_leaf_pages,
		         (size_t)st.ms_entries);
}

/* A catch-up a block per commit leaves freed pages behind (LMDB keeps a
 * page's old copy two commits); caught up, each file holds only its
 * records: compacted. Followed afterwards, the index works on. */
static void test_caught_up_index_compacted(void **state)
{
	struct fixture *f = *state;
	tu_regtest_submit(&f->r, 0, 40);
	bool more = true;
	size_t most = 0;
	while (more) {
		assert_int_equal(index_set_step(f->s, f->r.c, 1, &more), INDEX_OK);
		size_t w = waste_pages(f, INDEX_TX);
		if (more && w > most)
			most = w;
	}
	assert_true(most > 0); /* mid-way, the freelist was there */
	expect_status(f, 40, true);
	for (int k = 0; k < INDEX__COUNT; k++)
		assert_int_equal(waste_pages(f, (enum index_kind)k), 0);
	expect_coinstats_leaves_full(f);
	expect_headers_chained(f);
	expect_coinstats_tip(f);
	assert_int_equal(index_set_attach(f->s, f->r.c), INDEX_OK);
	tu_regtest_submit(&f->r, 40, 42);
	expect_status(f, 42, true);
	expect_headers_chained(f);
	expect_coinstats_tip(f);
	char path[256];
	snprintf(path, sizeof(path), "%s/indexes/txindex/compact", f->r.dir);
	assert_int_not_equal(access(path, F_OK), 0); /* the copy's directory is gone */
	/* A copy a crash left behind is dropped at the next open. */
	assert_int_equal(mkdir(path, 0700), 0);
	char file[300];
	snprintf(file, sizeof(file), "%s/data.mdb", path);
	FILE *fp = fopen(file, "wb");
	assert_non_null(fp);
	assert_int_equal(fclose(fp), 0);
	index_set_close(f->s);
	chain_unlisten(f->r.c, f->s);
	f->s = NULL;
	open_set(f);
	assert_int_not_equal(access(path, F_OK), 0);
	expect_status(f, 42, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_catch_up_follow_reorg_reopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_database_rebuilt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_caught_up_index_compacted, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
