/*
 * tests/unit/test_index_set.c: index/set.c on Core's regtest chain: the
 * background catch-up in batches, following the tip as a chain listener,
 * stepping back on invalidateblock (where the chain's tip is still the
 * leaving block while listeners hear of it) and forward again, a stale
 * block's filter kept, filter headers chained, the transaction index
 * (genesis left out), and a reopen that comes back where it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

struct fixture {
	char dir[64];
	struct tu_records blocks;
	struct chain *c;
	struct index_set *s;
};

static void open_set_wipe(struct fixture *f, bool wipe)
{
	struct index_config cfg = {
	    .netdir = f->dir, .txindex = true, .blockfilter = true, .wipe = wipe};
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
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	tu_tmpdir(f->dir, "indexset");
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), p->magic, &f->blocks);
	struct chain_config cfg = {.params = p, .dir = f->dir, .par = 1};
	assert_int_equal(chain_open(&f->c, &cfg), 0);
	open_set(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	(void)chain_close(f->c);
	index_set_close(f->s);
	tu_rmtree(f->dir);
	tu_records_free(&f->blocks);
	free(f);
	return 0;
}

static void submit(struct fixture *f, size_t from, size_t to)
{
	struct proto_block b;
	proto_block_init(&b);
	for (size_t i = from; i < to; i++) {
		enum chain_submit res;
		struct chain_state st;
		chain_state_clear(&st);
		assert_int_equal(proto_block_decode(f->blocks.blk[i], f->blocks.len[i], &b, NULL),
		                 0);
		assert_int_equal(
		    chain_submit_block(f->c, f->blocks.blk[i], f->blocks.len[i], &b, &res, &st), 0);
		assert_int_equal(res, CHAIN_SUBMIT_ACCEPTED);
	}
	proto_block_release(&b);
}

static void expect_status(struct fixture *f, int32_t height, bool synced)
{
	for (int k = 0; k < INDEX__COUNT; k++) {
		int32_t h;
		bool s;
		index_set_status(f->s, f->c, (enum index_kind)k, &h, &s);
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
	for (int32_t h = 0; h <= chain_height(f->c); h++) {
		uint8_t *filter;
		size_t len;
		struct proto_hash header, want;
		assert_int_equal(
		    index_filter_find(f->s, &chain_at(f->c, h)->hash, &filter, &len, &header), 0);
		index_filter_header(filter, len, &prev, &want);
		assert_memory_equal(header.b, want.b, 32);
		prev = header;
		free(filter);
	}
}

static void test_catch_up_follow_reorg_reopen(void **state)
{
	struct fixture *f = *state;
	submit(f, 0, 30);
	/* Catch-up in batches of 7: 31 blocks (genesis too) take 5 steps. */
	int steps = 0;
	bool more = true;
	while (more) {
		assert_int_equal(index_set_step(f->s, f->c, 7, &more), INDEX_OK);
		steps++;
	}
	assert_int_equal(steps, 5);
	expect_status(f, 30, true);
	assert_int_equal(index_set_attach(f->s, f->c), INDEX_OK);

	/* Following: each new tip as it is connected. */
	submit(f, 30, 35);
	expect_status(f, 35, true);
	expect_headers_chained(f);

	/* The transaction index: block 5's coinbase; not genesis's. */
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(f->blocks.blk[4], f->blocks.len[4], &b, NULL), 0);
	struct proto_hash found;
	assert_int_equal(index_tx_find(f->s, proto_tx_txid(&b.txs[0]), &found), INDEX_OK);
	assert_memory_equal(found.b, chain_at(f->c, 5)->hash.b, 32);
	proto_block_release(&b);
	struct proto_block_header gen;
	chain_node_header(chain_at(f->c, 0), &gen);
	assert_int_equal(index_tx_find(f->s, &gen.merkle_root, &found), INDEX_ENOTFOUND);

	/* invalidateblock 33: the indexes step back to 32 with the tip. */
	struct chain_node *n33 = chain_at(f->c, 33), *n34 = chain_at(f->c, 34);
	struct chain_state st;
	chain_state_clear(&st);
	assert_int_equal(chain_invalidate(f->c, n33, &st), 0);
	expect_status(f, 32, true);
	/* A stale block keeps its filter, as Core's. */
	uint8_t *filter;
	size_t len;
	struct proto_hash header;
	assert_int_equal(index_filter_find(f->s, &n34->hash, &filter, &len, &header), INDEX_OK);
	free(filter);
	assert_int_equal(chain_reconsider(f->c, n33, &st), 0);
	expect_status(f, 35, true);
	expect_headers_chained(f);

	/* Core's m_synced latches: an index that reached the tip stays
	 * "synced" while the tip runs ahead of it (in Core the index hears of
	 * blocks after the tip moves; here the listener is taken away). */
	chain_unlisten(f->c, f->s);
	submit(f, 35, 36);
	expect_status(f, 35, true);
	assert_int_equal(index_set_step(f->s, f->c, 100, &more), INDEX_OK);
	expect_status(f, 36, true);
	assert_int_equal(index_set_attach(f->s, f->c), INDEX_OK);

	/* Closed and opened again: where it was. */
	index_set_close(f->s);
	chain_unlisten(f->c, f->s);
	f->s = NULL;
	open_set(f);
	expect_status(f, 36, true);
	submit(f, 36, 38);
	expect_status(f, 36, false); /* not synced since it opened: not latched */
	assert_int_equal(index_set_step(f->s, f->c, 100, &more), INDEX_OK);
	assert_false(more);
	expect_status(f, 38, true);
	expect_headers_chained(f);
}

/* A database a system crash damaged is dropped and built again. */
static void test_damaged_database_rebuilt(void **state)
{
	struct fixture *f = *state;
	submit(f, 0, 5);
	bool more;
	assert_int_equal(index_set_step(f->s, f->c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
	index_set_close(f->s);
	f->s = NULL;
	char path[256];
	snprintf(path, sizeof(path), "%s/indexes/txindex/data.mdb", f->dir);
	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	static const uint8_t junk[8192] = {0x5a};
	assert_int_equal(fwrite(junk, 1, sizeof(junk), fp), sizeof(junk));
	assert_int_equal(fclose(fp), 0);
	open_set(f);
	int32_t h;
	bool synced;
	index_set_status(f->s, f->c, INDEX_TX, &h, &synced);
	assert_false(synced);
	assert_int_equal(index_set_step(f->s, f->c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
	/* -reindex: the indexes start over from genesis. */
	index_set_close(f->s);
	open_set_wipe(f, true);
	expect_status(f, 0, false);
	assert_int_equal(index_set_step(f->s, f->c, 100, &more), INDEX_OK);
	expect_status(f, 5, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_catch_up_follow_reorg_reopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_database_rebuilt, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
