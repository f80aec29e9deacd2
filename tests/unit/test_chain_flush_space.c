/*
 * tests/unit/test_chain_flush_space.c: the free disk a flush of the chain
 * state asks for first (issue 24). With MDB_WRITEMAP, LMDB allocates the
 * file's new pages as it writes them, and a disk that fills then is SIGBUS
 * (caught, but fatal): the check before the flush must cover what LMDB
 * really writes, a new copy of each leaf a changed coin lands in, not only
 * Core's 192 bytes a coin (LevelDB's packed tables).
 *
 * On a real small tmpfs (mounting needs root, as
 * tests/integration/test_chain_disk.py; skipped without), Core's regtest
 * chain in two halves with a flush between, then the disk filled to leave
 * Core's reserve for the second flush plus half the leaves it touches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau

static uint64_t free_bytes(const char *dir)
{
	struct statvfs sv;
	assert_int_equal(statvfs(dir, &sv), 0);
	return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

/* Grow a filler file until `left` bytes (rounded to the page) stay free. */
static void fill_to(const char *dir, uint64_t left)
{
	char path[TU_TMPDIR_MAX + 16];
	snprintf(path, sizeof(path), "%s/filler", dir);
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	static char block[4096];
	while (free_bytes(dir) >= left + sizeof(block)) {
		assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
		assert_int_equal(fflush(f), 0);
	}
	fclose(f);
}

static void submit_range(struct chain *c, const struct tu_records *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct proto_block b;
		proto_block_init(&b);
		assert_int_equal(proto_block_decode(r->blk[i], r->len[i], &b, NULL), 0);
		enum chain_submit res;
		struct chain_state st;
		int err = chain_submit_block(c, r->blk[i], r->len[i], &b, &res, &st);
		proto_block_release(&b);
		if (err || res != CHAIN_SUBMIT_ACCEPTED)
			fail_msg("block record %zu: %s, result %d '%s'", i, chain_strerror(err),
			         res, st.reason);
	}
}

/* The tmpfs is mounted and unmounted around the test, so that a failed
 * assertion leaves no mount behind. */
static char dir[TU_TMPDIR_MAX];
static bool mounted;

static int setup(void **state)
{
	(void)state;
	tu_tmpdir(dir, "flushspace");
	mounted = !mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (mounted)
		umount2(dir, MNT_DETACH);
	tu_rmtree(dir);
	return 0;
}

static void test_flush_asks_for_the_leaves_it_copies(void **state)
{
	(void)state;
	if (!mounted)
		skip();
	struct tu_records r;
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), REGTEST_MAGIC, &r);
	struct chain_config cfg = {
	    .params = proto_params(PROTO_NET_REGTEST),
	    .dir = dir,
	    .dbcache_bytes = (size_t)64 << 20,
	};
	struct chain *c = NULL;
	tu_assert_chain_err(chain_open(&c, &cfg), 0);
	submit_range(c, &r, 0, 140);
	tu_assert_chain_err(chain_flush(c), 0);
	submit_range(c, &r, 140, 260);
	uint64_t coins = chain_coins_dirty(chain_get_coins(c));
	struct chain_db_counters k;
	chain_db_get_counters(chain_coins_db(chain_get_coins(c)), &k);
	uint64_t leaves = coins < k.pages ? coins : k.pages;
	print_message("%llu changed coins, %llu pages in use\n", (unsigned long long)coins,
	              (unsigned long long)k.pages);
	assert_true(leaves >= 4);
	/* Enough for Core's reserve, not for the leaves' copies as well. */
	fill_to(dir, CHAIN_MIN_DISK_SPACE + coins * 192 + leaves * k.page_size / 2);
	uint64_t commits = k.commits;
	tu_assert_chain_err(chain_flush(c), CHAIN_ENOSPC);
	const char *msg = NULL;
	assert_int_equal(chain_fatal_error(c, &msg), CHAIN_ENOSPC);
	assert_string_equal(msg, "Disk space is too low!");
	/* Refused before LMDB was asked to write anything. */
	chain_db_get_counters(chain_coins_db(chain_get_coins(c)), &k);
	assert_int_equal(k.commits, commits);
	(void)chain_close(c);
	tu_records_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_flush_asks_for_the_leaves_it_copies, setup,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
