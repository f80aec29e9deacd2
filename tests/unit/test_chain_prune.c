/*
 * tests/unit/test_chain_prune.c: pruning (chain/prune.c).
 *
 * The file choice alone (chain_prune_select, Core's FindFilesToPrune and
 * FindFilesToPruneManual over CBlockFileInfo-like records): whole files,
 * never the current one, never one holding a block above the last height,
 * automatic pruning only while over the target less the buffer, oldest
 * first. Then a real chain with -fastprune's 64 KiB files and a tiny
 * automatic target: the old files go as blocks arrive, the last 288 blocks
 * keep their data and undo data, nothing is pruned at or below the
 * prune-after height, the state survives a reopen (the "prunedblockfiles"
 * flag, pruned blocks still linking new ones), and an unpruned reopen of
 * the pruned directory is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chain/chain.h"
#include "mining/mining.h"
#include "tests/unit/testutil.h"

#define MIB ((uint64_t)1 << 20)

/* ---- the choice ------------------------------------------------------------ */

static void select_manual(void **state)
{
	(void)state;
	struct chain_file_info f[] = {
	    {.size = 100, .undo_size = 10, .height_first = 0, .height_last = 99},
	    {.size = 0, .undo_size = 0, .height_first = 0, .height_last = 0}, /* pruned before */
	    {.size = 100, .undo_size = 10, .height_first = 100, .height_last = 199},
	    {.size = 100, .undo_size = 10, .height_first = 150, .height_last = 260}, /* a fork */
	    {.size = 100, .undo_size = 10, .height_first = 200, .height_last = 250},
	    {.size = 100, .undo_size = 10, .height_first = 251, .height_last = 300}, /* current */
	};
	bool out[5];
	uint64_t left;
	/* Every file whose blocks are all at or below 250, but the current one. */
	assert_int_equal(
	    chain_prune_select(f, 6, 5, CHAIN_PRUNE_MANUAL, CHAIN_PRUNE_BUFFER, 0, 250, out, &left),
	    3);
	assert_true(out[0] && !out[1] && out[2] && !out[3] && out[4]);
	assert_int_equal(left, 220); /* the fork's pair and the current pair */
	/* The last block of a file decides: 199 takes file 2, 198 does not. */
	assert_int_equal(chain_prune_select(f, 6, 5, CHAIN_PRUNE_MANUAL, 0, 0, 198, out, NULL), 1);
	assert_true(out[0] && !out[2]);
	assert_int_equal(chain_prune_select(f, 6, 5, CHAIN_PRUNE_MANUAL, 0, 0, 199, out, NULL), 2);
	/* Even the current file's blocks being low enough does not take it. */
	assert_int_equal(chain_prune_select(f, 6, 5, CHAIN_PRUNE_MANUAL, 0, 0, 1000, out, NULL), 4);
	assert_true(out[3]);
	/* A lower bound (Core's snapshot chainstate's start) keeps files below it. */
	assert_int_equal(chain_prune_select(f, 6, 5, CHAIN_PRUNE_MANUAL, 0, 100, 250, out, NULL),
	                 2);
	assert_false(out[0]);
}

static void select_automatic(void **state)
{
	(void)state;
	struct chain_file_info f[4];
	for (int i = 0; i < 4; i++)
		f[i] = (struct chain_file_info){.size = 100 * MIB,
		                                .undo_size = 10 * MIB,
		                                .height_first = i * 100,
		                                .height_last = i * 100 + 99};
	bool out[3];
	uint64_t left;
	/* 440 MiB used: under a 550 MiB target with the 17 MiB buffer, nothing goes. */
	assert_int_equal(
	    chain_prune_select(f, 4, 3, 550 * MIB, CHAIN_PRUNE_BUFFER, 0, 1000, out, &left), 0);
	assert_int_equal(left, 440 * MIB);
	assert_false(out[0] || out[1] || out[2]);
	/* A 400 MiB target: the oldest file goes, and then 330 + 17 < 400 stops it. */
	assert_int_equal(
	    chain_prune_select(f, 4, 3, 400 * MIB, CHAIN_PRUNE_BUFFER, 0, 1000, out, &left), 1);
	assert_true(out[0] && !out[1] && !out[2]);
	assert_int_equal(left, 330 * MIB);
	/* Exactly at the target with the buffer: still over (Core's >=). */
	assert_int_equal(chain_prune_select(f, 4, 3, 440 * MIB + 17 * MIB, CHAIN_PRUNE_BUFFER, 0,
	                                    1000, out, NULL),
	                 1);
	/* A tiny target: every file it may take, oldest first, the current never. */
	assert_int_equal(chain_prune_select(f, 4, 3, 1, 0, 0, 1000, out, &left), 3);
	assert_int_equal(left, 110 * MIB);
	/* The last height holds back the files above it but the scan goes on. */
	f[1].height_last = 500;
	assert_int_equal(chain_prune_select(f, 4, 3, 1, 0, 0, 299, out, NULL), 2);
	assert_true(out[0] && !out[1] && out[2]);
	/* Empty files are skipped without counting. */
	f[0].size = 0;
	f[0].undo_size = 0;
	assert_int_equal(chain_prune_select(f, 4, 3, 1, 0, 0, 299, out, NULL), 1);
	assert_true(!out[0] && out[2]);
}

static void prune_after_heights(void **state)
{
	(void)state;
	assert_int_equal(chain_prune_after_height(proto_params(PROTO_NET_MAIN), false), 100000);
	assert_int_equal(chain_prune_after_height(proto_params(PROTO_NET_TESTNET4), false), 1000);
	assert_int_equal(chain_prune_after_height(proto_params(PROTO_NET_SIGNET), true), 1000);
	assert_int_equal(chain_prune_after_height(proto_params(PROTO_NET_REGTEST), false), 1000);
	assert_int_equal(chain_prune_after_height(proto_params(PROTO_NET_REGTEST), true), 100);
}

/* ---- a chain ---------------------------------------------------------------- */

static int64_t fake_now;
static int64_t clock_now(void)
{
	return fake_now;
}

static const uint8_t OP_TRUE_SPK[1] = {0x51};

static int32_t lock_at;
static int32_t lock_fn(void *arg, struct chain *c)
{
	(void)c;
	return *(int32_t *)arg;
}

static struct chain *open_pruned(const char *dir, uint64_t target, int want_err)
{
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct chain_config cfg = {.params = p,
	                           .dir = dir,
	                           .par = 1,
	                           .now = clock_now,
	                           .prune_target = target,
	                           .fast_prune = true};
	struct chain *c = NULL;
	int err = chain_open(&c, &cfg);
	if (err != want_err)
		fail_msg("chain_open: %s, want %s", chain_strerror(err), chain_strerror(want_err));
	return c;
}

static void mine_n(struct chain *c, int n)
{
	struct mining_args a = {.spk = OP_TRUE_SPK, .spk_len = 1, .submit = true};
	for (int i = 0; i < n; i++) {
		struct mining_block m;
		struct chain_state st;
		uint64_t tries = MINING_MAX_TRIES;
		int err = mining_generate(c, &a, &tries, &m, &st);
		if (err || m.submitted != CHAIN_SUBMIT_ACCEPTED)
			fail_msg("mining_generate: %s (%s %s)", chain_strerror(err), st.reason,
			         st.debug);
		mining_block_release(&m);
		fake_now += 1;
	}
}

static bool blk_exists(const char *dir, int n, const char *kind)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof(path), "%s/blocks/%s%05d.dat", dir, kind, n);
	return stat(path, &st) == 0;
}

/* Every block above the prune height has its data and undo data, none at or below it. */
static void expect_window(struct chain *c)
{
	int32_t ph = chain_prune_height(c);
	assert_true(ph >= 0);
	assert_true(ph <= chain_height(c) - CHAIN_MIN_BLOCKS_TO_KEEP);
	for (int32_t h = 1; h <= chain_height(c); h++) {
		const struct chain_node *n = chain_at(c, h);
		bool have = (n->status & (CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO)) ==
		            (CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO);
		if (have == (h <= ph))
			fail_msg("height %d: data %s, prune height %d", h, have ? "kept" : "gone",
			         ph);
		assert_true(chain_block_pruned(c, n) == (h <= ph));
		uint8_t *raw;
		size_t len;
		int err = chain_read_block(c, n, &raw, &len);
		if (h <= ph) {
			assert_int_not_equal(err, 0);
		} else {
			assert_int_equal(err, 0);
			free(raw);
		}
	}
}

static void automatic_prune_on_a_chain(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "prune");
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct proto_block g;
	proto_block_init(&g);
	assert_int_equal(proto_block_decode(p->genesis, p->genesis_len, &g, NULL), 0);
	fake_now = (int64_t)g.hdr.time + 86400;
	proto_block_release(&g);

	/* A 1-byte target: every file the rules allow goes. */
	struct chain *c = open_pruned(dir, 1, 0);
	assert_true(chain_prune_mode(c));
	assert_false(chain_have_pruned(c));
	/* Up to the prune-after height (100) and within 288 of the tip: nothing. */
	mine_n(c, 390);
	assert_false(chain_have_pruned(c));
	assert_int_equal(chain_prune_height(c), -1);
	assert_true(blk_exists(dir, 0, "blk"));
	/* Enough for files wholly below tip - 288: they go as new files start. */
	mine_n(c, 700);
	assert_true(chain_have_pruned(c));
	assert_false(blk_exists(dir, 0, "blk"));
	assert_false(blk_exists(dir, 0, "rev"));
	expect_window(c);
	int32_t ph = chain_prune_height(c);
	assert_true(ph > 100);
	/* Genesis had no undo data to lose and is never "pruned" by height. */
	assert_false(chain_block_pruned(c, chain_at(c, 0)) && ph < 0);
	uint64_t used = chain_blocks_usage(c);
	assert_true(used > 0);
	struct proto_hash tip = chain_tip(c)->hash;
	assert_int_equal(chain_close(c), 0);

	/* What a stop between a prune's flush and its unlinks leaves: files the
	 * index no longer names. The next open deletes them (Core's
	 * ScanAndUnlinkAlreadyPrunedFiles). */
	for (int i = 0; i < 2; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/blocks/%s00000.dat", dir, i ? "rev" : "blk");
		FILE *fp = fopen(path, "wb");
		assert_non_null(fp);
		assert_int_equal(fwrite("leftover", 1, 8, fp), 8);
		fclose(fp);
	}
	/* Manual pruning prunes nothing at open, but the leftovers go. */
	c = open_pruned(dir, CHAIN_PRUNE_MANUAL, 0);
	assert_false(blk_exists(dir, 0, "blk"));
	assert_false(blk_exists(dir, 0, "rev"));
	assert_int_equal(chain_prune_height(c), ph);
	assert_int_equal(chain_close(c), 0);
	/* Reopened: pruned still, and (Core's PruneAndFlush at startup) the
	 * file that reached below tip - 288 since the last new file goes too. */
	c = open_pruned(dir, 1, 0);
	assert_true(chain_have_pruned(c));
	assert_false(blk_exists(dir, 0, "blk"));
	assert_false(blk_exists(dir, 0, "rev"));
	assert_true(proto_hash_eq(&chain_tip(c)->hash, &tip));
	assert_true(chain_prune_height(c) > ph);
	ph = chain_prune_height(c);
	expect_window(c);
	/* New blocks link on the pruned chain. */
	mine_n(c, 300);
	assert_int_equal(chain_height(c), 1390);
	expect_window(c);
	assert_true(chain_prune_height(c) > ph);
	/* A reorg inside the window: its undo data is there. */
	struct chain_state st;
	struct chain_node *back = chain_at(c, chain_height(c) - 200);
	assert_int_equal(chain_invalidate(c, back, &st), 0);
	assert_int_equal(chain_height(c), 1189);
	assert_int_equal(chain_reconsider(c, back, &st), 0);
	assert_int_equal(chain_height(c), 1390);
	/* A prune lock (an index at height 1) holds everything back, automatic
	 * and manual... */
	ph = chain_prune_height(c);
	lock_at = 1;
	chain_set_prune_lock(c, lock_fn, &lock_at);
	mine_n(c, 600);
	assert_int_equal(chain_prune_height(c), ph);
	assert_int_equal(chain_prune_manual(c, chain_height(c)), 0);
	assert_int_equal(chain_prune_height(c), ph);
	/* ...one higher up lets the files below it less 10 blocks go: the
	 * oldest file left (the pruned ones' blocks say file 0) ends at last. */
	int32_t first = ph + 1, last = first;
	while (chain_at(c, last + 1)->file == chain_at(c, first)->file)
		last++;
	assert_true(last < chain_height(c) - CHAIN_MIN_BLOCKS_TO_KEEP);
	lock_at = last + CHAIN_PRUNE_LOCK_BUFFER;
	assert_int_equal(chain_prune_manual(c, chain_height(c)), 0);
	assert_int_equal(chain_prune_height(c), ph);
	lock_at = last + CHAIN_PRUNE_LOCK_BUFFER + 1;
	assert_int_equal(chain_prune_manual(c, chain_height(c)), 0);
	assert_int_equal(chain_prune_height(c), last);
	chain_set_prune_lock(c, NULL, NULL);
	/* ...and without it manual pruning goes to the window's edge. */
	assert_int_equal(chain_prune_manual(c, chain_height(c)), 0);
	assert_true(chain_prune_height(c) > last);
	expect_window(c);
	assert_int_equal(chain_close(c), 0);

	/* Unpruned, the pruned directory is refused (Core: reindex to go back). */
	c = open_pruned(dir, 0, CHAIN_EARG);
	assert_null(c);
	tu_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(select_manual),
	    cmocka_unit_test(select_automatic),
	    cmocka_unit_test(prune_after_heights),
	    cmocka_unit_test(automatic_prune_on_a_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
