/*
 * tests/unit/test_chain_store_shared.c: chain_store_read_block_shared,
 * the one store call any thread may make, while the owner appends blocks,
 * reads through its own descriptor cache and prunes files.
 *
 * Readers on three threads read every stored block over and over. Each
 * answer must be the block's bytes, or CHAIN_ENOTFOUND for a file whose
 * removal had begun; a file removed before the read began must never be
 * read. The owner meanwhile writes more blocks (new files open, its
 * descriptor cache turns over), reads blocks back through that cache and
 * removes files one by one. Built under TSan too (make build/tsan/test/
 * test_chain_store_shared): a shared read that touched the owner's
 * descriptor cache or any other unguarded field would be reported there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"

#define MAX_BLOCKS 600 /* regtest_chain.dat's 265 blocks, written twice, and more */
#define READERS    3
#define FILE_SIZE  4096 /* small blk files: many to prune */

struct fixture {
	struct chain_store *s;
	uint8_t *file; /* regtest_chain.dat */
	size_t n_rec;
	size_t off[MAX_BLOCKS], size[MAX_BLOCKS]; /* each record of the .dat */
	/* Blocks stored so far: position and which record. Written by the
	 * owner before `stored` is raised (release), read after (acquire). */
	struct chain_pos pos[MAX_BLOCKS];
	size_t rec[MAX_BLOCKS];
	atomic_size_t stored;
	atomic_int removing_below; /* files below this are being or were removed */
	atomic_int removed_below;  /* files below this are gone */
	atomic_bool stop;
	atomic_long reads, found, not_found, wrong;
};

static void load_records(struct fixture *f)
{
	size_t len;
	f->file = tu_read_file(tu_vector("regtest/regtest_chain.dat"), &len);
	uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	for (size_t p = 0; p < len; f->n_rec++) {
		assert_true(f->n_rec < MAX_BLOCKS && len - p >= 8);
		assert_int_equal(proto_le32(f->file + p), magic);
		f->off[f->n_rec] = p + 8;
		f->size[f->n_rec] = proto_le32(f->file + p + 4);
		p += 8 + f->size[f->n_rec];
	}
}

static void store_one(struct fixture *f, size_t r)
{
	size_t k = atomic_load(&f->stored);
	assert_true(k < MAX_BLOCKS);
	tu_assert_err(chain_store_write_block(f->s, f->file + f->off[r], f->size[r], &f->pos[k]),
	              0);
	f->rec[k] = r;
	atomic_store_explicit(&f->stored, k + 1, memory_order_release);
}

static void *reader(void *arg)
{
	struct fixture *f = arg;
	uint8_t *buf = NULL;
	size_t cap = 0;
	while (!atomic_load(&f->stop)) {
		size_t n = atomic_load_explicit(&f->stored, memory_order_acquire);
		for (size_t k = 0; k < n && !atomic_load(&f->stop); k++) {
			int gone_before = atomic_load(&f->removed_below);
			size_t len;
			int rc = chain_store_read_block_shared(f->s, &f->pos[k], &buf, &cap, &len);
			int removing = atomic_load(&f->removing_below);
			int32_t file = f->pos[k].file;
			bool ok;
			if (rc == 0) {
				/* Read whole, and not from a file gone before the read. */
				ok = file >= gone_before && len == f->size[f->rec[k]] &&
				     memcmp(buf, f->file + f->off[f->rec[k]], len) == 0;
				atomic_fetch_add(&f->found, 1);
			} else {
				ok = rc == CHAIN_ENOTFOUND && file < removing;
				atomic_fetch_add(&f->not_found, 1);
			}
			if (!ok)
				atomic_fetch_add(&f->wrong, 1);
			atomic_fetch_add(&f->reads, 1);
		}
	}
	xfree(buf);
	return NULL;
}

static void test_shared_reads_while_pruning(void **state)
{
	(void)state;
	static struct fixture f; /* large: not on the stack */
	memset(&f, 0, sizeof(f));
	load_records(&f);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store_shared");
	tu_assert_err(chain_store_open(&f.s, dir, proto_params(PROTO_NET_REGTEST)->magic), 0);
	uint8_t key[CHAIN_XOR_KEY_SIZE] = {1, 2, 3, 4,
	                                   5, 6, 7, 8}; /* obfuscated, as a new datadir */
	chain_store_set_xor_key(f.s, key);
	chain_store_set_max_file_size(f.s, FILE_SIZE);
	for (size_t r = 0; r < f.n_rec; r++)
		store_one(&f, r);

	pthread_t t[READERS];
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &f), 0);

	/* The owner: prune each file but the newest, writing and reading
	 * between removals. */
	uint8_t *raw;
	size_t len;
	for (size_t r = 0; chain_store_last_file(f.s) > atomic_load(&f.removing_below) + 1; r++) {
		int32_t victim = atomic_load(&f.removing_below);
		atomic_store(&f.removing_below, victim + 1);
		tu_assert_err(chain_store_remove_file(f.s, victim), 0);
		atomic_store(&f.removed_below, victim + 1);
		if (atomic_load(&f.stored) < MAX_BLOCKS)
			store_one(&f, r % f.n_rec);
		/* The owner's cached read of the newest block and an old one. */
		size_t k = atomic_load(&f.stored) - 1;
		tu_assert_err(chain_store_read_block(f.s, &f.pos[k], &raw, &len), 0);
		xfree(raw);
		int rc = chain_store_read_block(f.s, &f.pos[0], &raw, &len);
		assert_true(rc == CHAIN_ENOTFOUND);
		usleep(1000);
	}
	usleep(20000);
	atomic_store(&f.stop, true);
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);

	long wrong = atomic_load(&f.wrong), found = atomic_load(&f.found),
	     missing = atomic_load(&f.not_found);
	print_message("%ld shared reads: %ld found, %ld in pruned files, %ld wrong; %d files "
	              "pruned\n",
	              atomic_load(&f.reads), found, missing, wrong, atomic_load(&f.removed_below));
	assert_int_equal(wrong, 0);
	assert_true(found > 0 && missing > 0); /* both sides of the race were seen */
	assert_true(atomic_load(&f.removed_below) >= 10);
	chain_store_close(f.s);
	tu_rmtree(dir);
	free(f.file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shared_reads_while_pruning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
