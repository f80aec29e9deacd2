/*
 * tests/unit/test_chain_db.c: the chainstate's LMDB layer (format version,
 * reads, writes, walks, a map grown by another process) and Core's
 * compact encodings (VARINT, amounts, scripts) with Core's own vectors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <secp256k1.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define CHECK(expr)           tu_assert_chain_err((expr), 0)
#define CHECK_ERR(expr, want) tu_assert_chain_err((expr), (want))

/* ---- a generic write job --------------------------------------------- */

struct op {
	enum chain_table table;
	const char *key;
	const void *val;
	size_t vlen;
	bool del;
};

struct job {
	const struct op *ops;
	size_t n;
	int fail_with; /* returned after the ops when non-zero */
	unsigned runs;
};

static int run_job(struct chain_db_txn *t, void *arg)
{
	struct job *j = arg;
	j->runs++;
	for (size_t i = 0; i < j->n; i++) {
		const struct op *o = &j->ops[i];
		int err = o->del
		              ? chain_db_del(t, o->table, o->key, strlen(o->key))
		              : chain_db_put(t, o->table, o->key, strlen(o->key), o->val, o->vlen);
		if (err)
			return err;
	}
	return j->fail_with;
}

static int count_cb(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)k;
	(void)kl;
	(void)v;
	(void)vl;
	size_t *n = arg;
	(*n)++;
	return *n == 1000 ? -99 : 0;
}

/* 300 index records of 100 bytes: a few dozen pages. */
static int put_many(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	uint8_t val[100];
	memset(val, 0xab, sizeof(val));
	for (int i = 0; i < 300; i++) {
		char key[16];
		int n = snprintf(key, sizeof(key), "k%05d", i);
		int err = chain_db_put(t, CHAIN_TABLE_INDEX, key, (size_t)n, val, sizeof(val));
		if (err)
			return err;
	}
	return 0;
}

static void keep_line(void *arg, enum chain_log_level level, const char *msg)
{
	assert_int_equal(level, CHAIN_LOG_ERROR);
	snprintf(arg, 1024, "%s", msg);
}

/* A data.mdb cut short (issue 18) is refused at open with a message naming
 * the recovery, before LMDB reads a page past the end: that was SIGBUS. */
static void test_truncated_file(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX], path[TU_TMPDIR_MAX + 16], line[1024] = "";
	tu_tmpdir(dir, "db");
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	CHECK(chain_db_write(db, put_many, NULL));
	chain_db_close(db);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	assert_int_equal(truncate(path, 3 * 4096), 0);
	CHECK_ERR(chain_db_open_logged(&db, dir, keep_line, line), CHAIN_ECORRUPT);
	assert_null(db);
	assert_non_null(strstr(line, "Corrupted block database detected"));
	assert_non_null(strstr(line, "is 12288 bytes"));
	assert_non_null(strstr(line, "the file was cut short"));
	assert_non_null(strstr(line, "To recover, stop peerd, delete"));
	tu_rmtree(dir);
}

/* Core's CheckDiskSpace: 50 MiB must stay free beyond what is asked. */
static void test_disk_space(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "space");
	uint64_t avail = 0;
	int rc = chain_disk_space(dir, 0, &avail);
	assert_int_equal(rc, avail >= CHAIN_MIN_DISK_SPACE ? 0 : CHAIN_ENOSPC);
	/* Asking for all that is free leaves less than the margin. */
	CHECK_ERR(chain_disk_space(dir, avail, NULL), CHAIN_ENOSPC);
	CHECK_ERR(chain_disk_space(dir, UINT64_MAX - 1, NULL), CHAIN_ENOSPC);
	/* Half of what is free beyond the margin (others write to this disk
	 * meanwhile, but not that much). */
	if (avail > 2 * CHAIN_MIN_DISK_SPACE)
		CHECK(chain_disk_space(dir, (avail - CHAIN_MIN_DISK_SPACE) / 2, NULL));
	CHECK_ERR(chain_disk_space("/nonexistent/peerd-space", 0, NULL), CHAIN_EIO);
	tu_rmtree(dir);
}

static void test_put_get_del_walk(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "db");
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	const struct op ops[] = {
	    {CHAIN_TABLE_INDEX, "b", "two", 3, false},   {CHAIN_TABLE_INDEX, "a", "one", 3, false},
	    {CHAIN_TABLE_INDEX, "c", "three", 5, false}, {CHAIN_TABLE_INDEX, "c", NULL, 0, true},
	    {CHAIN_TABLE_INDEX, "zz", NULL, 0, true}, /* missing: fine */
	};
	struct job j = {ops, 5, 0, 0};
	CHECK(chain_db_write(db, run_job, &j));
	char buf[8];
	size_t len;
	CHECK(chain_db_get(db, CHAIN_TABLE_INDEX, "a", 1, buf, sizeof(buf), &len));
	assert_int_equal(len, 3);
	assert_memory_equal(buf, "one", 3);
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "a", 1, buf, 2, &len), CHAIN_EOVERFLOW);
	assert_int_equal(len, 3);
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "c", 1, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);
	/* Tables are apart. */
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_COINS, "a", 1, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);

	/* A failing job leaves nothing behind and returns its error. */
	const struct op bad[] = {{CHAIN_TABLE_INDEX, "d", "x", 1, false}};
	struct job jb = {bad, 1, CHAIN_EINVALID, 0};
	CHECK_ERR(chain_db_write(db, run_job, &jb), CHAIN_EINVALID);
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "d", 1, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);

	/* Key limits. */
	char big[600];
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	const struct op toolong[] = {{CHAIN_TABLE_INDEX, big, "x", 1, false}};
	struct job jt = {toolong, 1, 0, 0};
	CHECK_ERR(chain_db_write(db, run_job, &jt), CHAIN_EOVERFLOW);

	/* Walk in key order; fn's error stops it and comes back. */
	struct chain_db_cursor *cur;
	CHECK(chain_db_cursor_open(db, CHAIN_TABLE_INDEX, &cur));
	const uint8_t *k, *v;
	size_t kl, vl;
	CHECK(chain_db_cursor_next(cur, &k, &kl, &v, &vl));
	assert_memory_equal(k, "a", 1);
	/* A get inside a walk shares the read transaction. */
	CHECK(chain_db_get(db, CHAIN_TABLE_INDEX, "b", 1, buf, sizeof(buf), &len));
	CHECK(chain_db_cursor_next(cur, &k, &kl, &v, &vl));
	assert_memory_equal(k, "b", 1);
	assert_memory_equal(v, "two", 3);
	CHECK_ERR(chain_db_cursor_next(cur, &k, &kl, &v, &vl), CHAIN_ENOTFOUND);
	chain_db_cursor_close(cur);
	size_t n = 0;
	CHECK(chain_db_foreach(db, CHAIN_TABLE_INDEX, count_cb, &n));
	assert_int_equal(n, 2);

	/* The walk must not pin pages: a write after it reuses them. */
	struct chain_db_counters c;
	chain_db_get_counters(db, &c);
	assert_int_equal(c.commits, 1);
	assert_true(chain_db_disk_size(db) > 0);
	chain_db_close(db);
	tu_rmtree(dir);
}

/* One transaction mixing what a flush and a reindex's wipe do through the
 * write cursors (chain/db.c keeps one a table): key-ordered puts that fill
 * and split pages, deletes on the cursor's leaf and far from it, a delete
 * of a missing key (which leaves the cursor unpositioned), a key put again
 * after its delete, two tables in turn, and a table cleared and refilled. */
static int mixed_writes(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	uint8_t val[40];
	char key[16];
	for (int i = 0; i < 3000; i++) {
		int n = snprintf(key, sizeof(key), "c%06d", i);
		memset(val, i & 0xff, sizeof(val));
		int err = chain_db_put(t, CHAIN_TABLE_COINS, key, (size_t)n, val, sizeof(val));
		if (!err && i % 3 == 2) { /* deleted on the cursor's leaf, then put again */
			err = chain_db_del(t, CHAIN_TABLE_COINS, key, (size_t)n);
			if (!err)
				err = chain_db_put(t, CHAIN_TABLE_COINS, key, (size_t)n, val,
				                   sizeof(val));
		}
		if (!err && i % 100 == 99) { /* far back, then a missing key */
			n = snprintf(key, sizeof(key), "c%06d", i - 90);
			err = chain_db_del(t, CHAIN_TABLE_COINS, key, (size_t)n);
			if (!err)
				err = chain_db_del(t, CHAIN_TABLE_COINS, "nope", 4);
		}
		if (!err && i % 500 == 0)
			err = chain_db_put(t, CHAIN_TABLE_META, "m", 1, val, 1);
		if (err)
			return err;
	}
	int err = chain_db_put(t, CHAIN_TABLE_INDEX, "x", 1, "1", 1);
	if (!err)
		err = chain_db_clear(t, CHAIN_TABLE_INDEX);
	if (!err)
		err = chain_db_put(t, CHAIN_TABLE_INDEX, "y", 1, "2", 1);
	return err;
}

static int count_all(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)k;
	(void)kl;
	(void)v;
	(void)vl;
	(*(size_t *)arg)++;
	return 0;
}

static void test_write_cursor_mixed(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "db");
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	CHECK(chain_db_write(db, mixed_writes, NULL));
	char key[16];
	uint8_t buf[64];
	size_t len;
	for (int i = 0; i < 3000; i++) {
		int n = snprintf(key, sizeof(key), "c%06d", i);
		/* Deleted: the 9th of every hundred (i - 90 for i = 99, 199, ...). */
		if (i % 100 == 9) {
			CHECK_ERR(chain_db_get(db, CHAIN_TABLE_COINS, key, (size_t)n, buf,
			                       sizeof(buf), &len),
			          CHAIN_ENOTFOUND);
			continue;
		}
		CHECK(chain_db_get(db, CHAIN_TABLE_COINS, key, (size_t)n, buf, sizeof(buf), &len));
		assert_int_equal(len, 40);
		assert_int_equal(buf[0], i & 0xff);
		assert_int_equal(buf[39], i & 0xff);
	}
	size_t count = 0;
	CHECK(chain_db_foreach(db, CHAIN_TABLE_COINS, count_all, &count));
	assert_int_equal(count, 3000 - 30);
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "x", 1, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);
	CHECK(chain_db_get(db, CHAIN_TABLE_INDEX, "y", 1, buf, sizeof(buf), &len));
	assert_memory_equal(buf, "2", 1);
	CHECK(chain_db_get(db, CHAIN_TABLE_META, "m", 1, buf, sizeof(buf), &len));
	chain_db_close(db);
	tu_rmtree(dir);
}

static int put_version(struct chain_db_txn *t, void *arg)
{
	const uint8_t *v = arg;
	return chain_db_put(t, CHAIN_TABLE_META, "version", 7, v, v[4]);
}

static int del_version(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	int err =
	    chain_db_put(t, CHAIN_TABLE_META, "best", 4, "0123456789abcdef0123456789abcdef", 32);
	return err ? err : chain_db_del(t, CHAIN_TABLE_META, "version", 7);
}

static void test_format_version(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "db");
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	uint8_t v[4];
	size_t len;
	CHECK(chain_db_get(db, CHAIN_TABLE_META, "version", 7, v, sizeof(v), &len));
	assert_int_equal(len, 4);
	assert_int_equal(proto_le32(v), 1);
	chain_db_close(db);
	/* Opening again finds it and keeps it. */
	CHECK(chain_db_open(&db, dir));
	/* An unknown version. */
	uint8_t future[5] = {3, 0, 0, 0,
	                     4}; /* 2 is a rewritten coins table (chain_db_rewrite_end) */
	CHECK(chain_db_write(db, put_version, future));
	chain_db_close(db);
	CHECK_ERR(chain_db_open(&db, dir), CHAIN_ECORRUPT);
	assert_null(db);
	tu_rmtree(dir);

	/* A version record of the wrong size. */
	tu_tmpdir(dir, "db");
	CHECK(chain_db_open(&db, dir));
	uint8_t odd[5] = {1, 0, 0, 0, 3};
	CHECK(chain_db_write(db, put_version, odd));
	chain_db_close(db);
	CHECK_ERR(chain_db_open(&db, dir), CHAIN_ECORRUPT);
	tu_rmtree(dir);

	/* Records but no version at all. */
	tu_tmpdir(dir, "db");
	CHECK(chain_db_open(&db, dir));
	CHECK(chain_db_write(db, del_version, NULL));
	chain_db_close(db);
	CHECK_ERR(chain_db_open(&db, dir), CHAIN_ECORRUPT);
	tu_rmtree(dir);

	/* A best block of the wrong size is corrupt for the coins cache. */
	tu_tmpdir(dir, "db");
	CHECK(chain_db_open(&db, dir));
	struct chain_coins *coins;
	CHECK(chain_coins_new(&coins, db, 1 << 20));
	assert_true(proto_hash_is_zero(chain_coins_best_block(coins)));
	chain_coins_free(coins);
	const struct op badbest[] = {{CHAIN_TABLE_META, "best", "short", 5, false}};
	struct job j = {badbest, 1, 0, 0};
	CHECK(chain_db_write(db, run_job, &j));
	CHECK_ERR(chain_coins_new(&coins, db, 1 << 20), CHAIN_ECORRUPT);
	chain_db_close(db);
	tu_rmtree(dir);

	/* Not a directory we can make. */
	CHECK_ERR(chain_db_open(&db, "/proc/no/such/dir"), CHAIN_EIO);
}

/* Another process grows the map; this one must adopt the new size
 * (MDB_MAP_RESIZED) for its reads and its writes. */
static void test_map_resized_by_other_process(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "db");
	chain_db_test_initial_map(64 << 10);
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	size_t n0 = 0;
	CHECK(chain_db_foreach(db, CHAIN_TABLE_INDEX, count_cb, &n0)); /* reader exists, reset */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct chain_db *other;
		if (chain_db_open(&other, dir))
			_exit(2);
		static char val[200];
		static struct op ops[3000];
		static char keys[3000][16];
		for (int i = 0; i < 3000; i++) {
			snprintf(keys[i], sizeof(keys[i]), "k%05d", i);
			ops[i] = (struct op){CHAIN_TABLE_INDEX, keys[i], val, sizeof(val), false};
		}
		struct job j = {ops, 3000, 0, 0};
		int err = chain_db_write(other, run_job, &j);
		struct chain_db_counters c;
		chain_db_get_counters(other, &c);
		chain_db_close(other);
		_exit(err ? 3 : c.map_grows ? 0 : 4);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	chain_db_test_initial_map(0);
	/* The read sees the other process's records past our old map. */
	char buf[256];
	size_t len;
	CHECK(chain_db_get(db, CHAIN_TABLE_INDEX, "k02999", 6, buf, sizeof(buf), &len));
	assert_int_equal(len, 200);
	size_t n = 0;
	/* count_cb stops the walk at the 1000th record. */
	assert_int_equal(chain_db_foreach(db, CHAIN_TABLE_INDEX, count_cb, &n), -99);
	assert_int_equal(n, 1000);
	const struct op more[] = {{CHAIN_TABLE_INDEX, "zzz", "v", 1, false}};
	struct job j = {more, 1, 0, 0};
	CHECK(chain_db_write(db, run_job, &j));
	CHECK(chain_db_get(db, CHAIN_TABLE_INDEX, "zzz", 3, buf, sizeof(buf), &len));
	chain_db_close(db);
	tu_rmtree(dir);
}

/*
 * A write into a page the file system cannot back (issue 24). With
 * MDB_WRITEMAP, LMDB writes a transaction's new pages into the sparse part
 * of data.mdb through the map, and a full disk is SIGBUS there instead of
 * an error from write(). On a small tmpfs, filled up: the write fails with
 * CHAIN_ENOSPC (not a crash, not "corrupted"), the handle refuses further
 * work, and with room again the database is at its last commit. Mounting
 * needs root (as tests/integration/test_chain_disk.py): skipped without.
 */
static void test_full_disk_inside_the_map(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX], sub[TU_TMPDIR_MAX + 32], filler[TU_TMPDIR_MAX + 32];
	tu_tmpdir(dir, "dbfull");
	if (mount("tmpfs", dir, "tmpfs", 0, "size=2m,mode=0700")) {
		tu_rmtree(dir);
		skip();
	}
	snprintf(sub, sizeof(sub), "%s/chainstate", dir);
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	static char keys[4000][16];
	static struct op ops[4000];
	static char val[400];
	for (int i = 0; i < 4000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%05d", i);
		ops[i] = (struct op){CHAIN_TABLE_INDEX, keys[i], val, sizeof(val), false};
	}
	struct chain_db *db;
	CHECK(chain_db_open(&db, sub));
	struct job first = {ops, 10, 0, 0};
	CHECK(chain_db_write(db, run_job, &first));
	/* The disk fills up: nothing is left but what a file cannot take. */
	FILE *f = fopen(filler, "wb");
	assert_non_null(f);
	static char block[4096];
	while (fwrite(block, 1, sizeof(block), f) == sizeof(block) && fflush(f) == 0)
		;
	fclose(f);
	/* ~1.6 MB of new leaves: far more than is left. */
	struct job big = {ops + 10, 3990, 0, 0};
	CHECK_ERR(chain_db_write(db, run_job, &big), CHAIN_ENOSPC);
	assert_true(chain_db_broken(db));
	assert_int_equal(chain_db_broken_err(db), CHAIN_ENOSPC);
	char buf[512];
	size_t len;
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "k00000", 6, buf, sizeof(buf), &len),
	          CHAIN_ENOSPC);
	chain_db_close(db);
	/* Room again: the first commit is there, nothing of the failed one. */
	assert_int_equal(unlink(filler), 0);
	CHECK(chain_db_open(&db, sub));
	size_t n = 0;
	CHECK(chain_db_foreach(db, CHAIN_TABLE_INDEX, count_cb, &n));
	assert_int_equal(n, 10);
	CHECK_ERR(chain_db_get(db, CHAIN_TABLE_INDEX, "k00010", 6, buf, sizeof(buf), &len),
	          CHAIN_ENOTFOUND);
	struct job again = {ops + 10, 1000, 0, 0};
	CHECK(chain_db_write(db, run_job, &again));
	chain_db_close(db);
	umount2(dir, MNT_DETACH);
	tu_rmtree(dir);
}

static void test_foreach_returns_fn_error(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "db");
	struct chain_db *db;
	CHECK(chain_db_open(&db, dir));
	static char keys[1200][16];
	static struct op ops[1200];
	for (int i = 0; i < 1200; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%05d", i);
		ops[i] = (struct op){CHAIN_TABLE_INDEX, keys[i], "v", 1, false};
	}
	struct job j = {ops, 1200, 0, 0};
	CHECK(chain_db_write(db, run_job, &j));
	size_t n = 0;
	assert_int_equal(chain_db_foreach(db, CHAIN_TABLE_INDEX, count_cb, &n), -99);
	assert_int_equal(n, 1000);
	chain_db_close(db);
	tu_rmtree(dir);
}

/* ---- Core's encodings ------------------------------------------------ */

static void test_varint_vectors(void **state)
{
	(void)state;
	/* serialize_tests.cpp varints_bitpatterns. */
	static const struct {
		uint64_t v;
		const char *hex;
	} vec[] = {
	    {0, "00"},
	    {0x7f, "7f"},
	    {0x80, "8000"},
	    {0x1234, "a334"},
	    {0xffff, "82fe7f"},
	    {0x123456, "c7e756"},
	    {0x80123456u, "86ffc7e756"},
	    {0xffffffffu, "8efefefe7f"},
	    {0x7fffffffffffffffull, "fefefefefefefefe7f"},
	    {0xffffffffffffffffull, "80fefefefefefefefe7f"},
	};
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		uint8_t b[CHAIN_VARINT_MAX];
		size_t n = chain_varint_encode(b, vec[i].v);
		char *hex = tu_hex(b, n);
		assert_string_equal(hex, vec[i].hex);
		free(hex);
		struct proto_reader r;
		proto_reader_init(&r, b, n);
		uint64_t back;
		CHECK(chain_varint_read(&r, UINT64_MAX, &back));
		assert_true(back == vec[i].v);
		assert_int_equal(proto_reader_left(&r), 0);
	}
	/* Truncated, over the caller's max, and over 64 bits. */
	struct proto_reader r;
	uint64_t v;
	proto_reader_init(&r, "\x80", 1);
	CHECK_ERR(chain_varint_read(&r, UINT64_MAX, &v), CHAIN_ECORRUPT);
	proto_reader_init(&r, "\x8e\xfe\xfe\xfe\x7f", 5);
	CHECK_ERR(chain_varint_read(&r, UINT32_MAX - 1, &v), CHAIN_ECORRUPT);
	assert_int_equal(proto_reader_offset(&r), 0);
	proto_reader_init(&r, "\x81\xfe\xfe\xfe\xfe\xfe\xfe\xfe\xfe\x7f", 10);
	CHECK_ERR(chain_varint_read(&r, UINT64_MAX, &v), CHAIN_ECORRUPT);
}

static void test_key_order(void **state)
{
	(void)state;
	/* memcmp of keys and chain_coin_key_cmp agree, for indices around
	 * every VARINT length change. */
	static const uint32_t ns[] = {0,     1,       127,     128,     129,        255,
	                              256,   16510,   16511,   16512,   16513,      65535,
	                              65536, 2113663, 2113664, 2113665, 0x7fffffff, 0xffffffff};
	const size_t n = sizeof(ns) / sizeof(ns[0]);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			struct proto_outpoint a = {.n = ns[i]}, b = {.n = ns[j]};
			uint8_t ka[CHAIN_COIN_KEY_MAX], kb[CHAIN_COIN_KEY_MAX];
			size_t la = chain_coin_key_encode(ka, &a),
			       lb = chain_coin_key_encode(kb, &b);
			int m = memcmp(ka, kb, la < lb ? la : lb);
			if (!m)
				m = la < lb ? -1 : la > lb;
			int c = chain_coin_key_cmp(&a, &b);
			assert_int_equal(m < 0 ? -1 : m > 0, c < 0 ? -1 : c > 0);
			struct proto_outpoint back;
			CHECK(chain_coin_key_decode(ka, la, &back));
			assert_int_equal(back.n, ns[i]);
		}
	}
	/* The txid decides first. */
	struct proto_outpoint a = {.n = 5}, b = {.n = 1};
	b.txid.b[31] = 1;
	assert_true(chain_coin_key_cmp(&a, &b) < 0);
	uint8_t k[40] = {0};
	struct proto_outpoint back;
	CHECK_ERR(chain_coin_key_decode(k, 32, &back), CHAIN_ECORRUPT);
	k[32] = 0x7f;
	CHECK_ERR(chain_coin_key_decode(k, 34, &back), CHAIN_ECORRUPT); /* trailing */
}

#define COIN 100000000ull
#define CENT 1000000ull

static void test_amounts(void **state)
{
	(void)state;
	/* compress_tests.cpp */
	static const uint64_t pairs[][2] = {
	    {0, 0x0},    {1, 0x1},          {CENT, 0x7},
	    {COIN, 0x9}, {50 * COIN, 0x32}, {21000000 * COIN, 0x1406f40},
	};
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(chain_compress_amount(pairs[i][0]), pairs[i][1]);
		assert_int_equal(chain_decompress_amount(pairs[i][1]), pairs[i][0]);
	}
	for (uint64_t i = 1; i <= 100000; i++)
		assert_int_equal(chain_decompress_amount(chain_compress_amount(i)), i);
	for (uint64_t i = 1; i <= 10000; i++)
		assert_int_equal(chain_decompress_amount(chain_compress_amount(i * CENT)),
		                 i * CENT);
	for (uint64_t i = 1; i <= 1000; i++)
		assert_int_equal(chain_decompress_amount(chain_compress_amount(i * COIN)),
		                 i * COIN);
	for (uint64_t i = 1; i <= 100; i++)
		assert_int_equal(chain_decompress_amount(chain_compress_amount(i * 50 * COIN)),
		                 i * 50 * COIN);
	for (uint64_t i = 0; i < 100000; i++)
		assert_int_equal(chain_compress_amount(chain_decompress_amount(i)), i);
}

/* Compress, check the form, decompress, check the round trip. */
static void script_round_trip(const uint8_t *s, size_t len, const char *want_hex)
{
	struct proto_writer w;
	proto_writer_init(&w);
	chain_script_compress(&w, s, (uint32_t)len);
	assert_int_equal(w.err, 0);
	char *hex = tu_hex(w.buf, w.len);
	assert_string_equal(hex, want_hex);
	free(hex);
	struct proto_reader r;
	proto_reader_init(&r, w.buf, w.len);
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
	const uint8_t *out;
	uint32_t olen;
	CHECK(chain_script_decompress(&r, special, &out, &olen));
	assert_int_equal(proto_reader_left(&r), 0);
	tu_assert_bytes_equal(out, olen, s, len);
	proto_writer_release(&w);
}

static void test_scripts(void **state)
{
	(void)state;
	size_t len;
	char want[400];
	uint8_t *s;
	/* P2PKH -> 00 + hash160 */
	s = tu_unhex("76a914000102030405060708090a0b0c0d0e0f1011121388ac", &len);
	script_round_trip(s, len, "00000102030405060708090a0b0c0d0e0f10111213");
	free(s);
	/* P2SH -> 01 + hash160 */
	s = tu_unhex("a914000102030405060708090a0b0c0d0e0f1011121387", &len);
	script_round_trip(s, len, "01000102030405060708090a0b0c0d0e0f10111213");
	free(s);
	/* P2PK with G compressed (even y): 02 + x */
	static const char gx[] = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";
	static const char gy[] = "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";
	char hex[200];
	snprintf(hex, sizeof(hex), "2102%sac", gx);
	s = tu_unhex(hex, &len);
	snprintf(want, sizeof(want), "02%s", gx);
	script_round_trip(s, len, want);
	free(s);
	/* 03 + x (Core does not check a compressed key is on the curve). */
	snprintf(hex, sizeof(hex), "2103%sac", gx);
	s = tu_unhex(hex, &len);
	snprintf(want, sizeof(want), "03%s", gx);
	script_round_trip(s, len, want);
	free(s);
	/* P2PK with G uncompressed: y even -> 04 + x */
	snprintf(hex, sizeof(hex), "4104%s%sac", gx, gy);
	s = tu_unhex(hex, &len);
	snprintf(want, sizeof(want), "04%s", gx);
	script_round_trip(s, len, want);
	free(s);
	/* -G uncompressed: y odd -> 05 + x */
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	uint8_t gser[65], neg[67];
	snprintf(hex, sizeof(hex), "04%s%s", gx, gy);
	uint8_t *graw = tu_unhex(hex, &len);
	secp256k1_pubkey pk;
	assert_int_equal(secp256k1_ec_pubkey_parse(ctx, &pk, graw, 65), 1);
	assert_int_equal(secp256k1_ec_pubkey_negate(ctx, &pk), 1);
	size_t glen = 65;
	secp256k1_ec_pubkey_serialize(ctx, gser, &glen, &pk, SECP256K1_EC_UNCOMPRESSED);
	assert_int_equal(gser[64] & 1, 1);
	neg[0] = 65;
	memcpy(neg + 1, gser, 65);
	neg[66] = 0xac;
	snprintf(want, sizeof(want), "05%s", gx);
	script_round_trip(neg, sizeof(neg), want);
	free(graw);

	/* An uncompressed key whose x is not on the curve: plain form
	 * (Core's compress_p2pk_scripts_not_on_curve), and 04/05 with that
	 * x do not decompress. */
	uint8_t x[32] = {0};
	for (x[31] = 1;; x[31]++) {
		uint8_t k[33] = {0x02};
		memcpy(k + 1, x, 32);
		if (!secp256k1_ec_pubkey_parse(ctx, &pk, k, 33))
			break;
	}
	uint8_t p2pk[67] = {65, 0x04};
	memcpy(p2pk + 2, x, 32);
	p2pk[66] = 0xac;
	char *body = tu_hex(p2pk, sizeof(p2pk));
	snprintf(want, sizeof(want), "49%s", body); /* VARINT(67 + 6) */
	script_round_trip(p2pk, sizeof(p2pk), want);
	free(body);
	for (uint8_t type = 4; type <= 5; type++) {
		uint8_t enc[33] = {type};
		memcpy(enc + 1, x, 32);
		struct proto_reader r;
		proto_reader_init(&r, enc, sizeof(enc));
		uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
		const uint8_t *out;
		uint32_t olen;
		CHECK_ERR(chain_script_decompress(&r, special, &out, &olen), CHAIN_ECORRUPT);
	}
	secp256k1_context_destroy(ctx);

	/* Anything else: VARINT(len + 6) and the bytes. P2WPKH, P2TR, empty. */
	s = tu_unhex("0014000102030405060708090a0b0c0d0e0f10111213", &len);
	script_round_trip(s, len, "1c0014000102030405060708090a0b0c0d0e0f10111213");
	free(s);
	script_round_trip(NULL, 0, "06");
	/* 10,000 bytes plus 6: a two-byte VARINT. */
	static uint8_t big[10000];
	memset(big, 0x51, sizeof(big));
	struct proto_writer w;
	proto_writer_init(&w);
	chain_script_compress(&w, big, sizeof(big));
	assert_int_equal(w.len, 2 + sizeof(big));
	proto_writer_release(&w);

	/* Over MAX_SCRIPT_SIZE on disk: read as OP_RETURN, as Core. */
	static uint8_t huge[3 + 10001];
	uint8_t vi[CHAIN_VARINT_MAX];
	size_t vn = chain_varint_encode(vi, 10001 + 6);
	memcpy(huge, vi, vn);
	struct proto_reader r;
	proto_reader_init(&r, huge, vn + 10001);
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
	const uint8_t *out;
	uint32_t olen;
	CHECK(chain_script_decompress(&r, special, &out, &olen));
	assert_int_equal(olen, 1);
	assert_int_equal(out[0], 0x6a);
	assert_int_equal(proto_reader_left(&r), 0);
	/* Truncated special and plain forms. */
	proto_reader_init(&r, "\x00\x01\x02", 3);
	CHECK_ERR(chain_script_decompress(&r, special, &out, &olen), CHAIN_ECORRUPT);
	proto_reader_init(&r, "\x10\x01\x02", 3);
	CHECK_ERR(chain_script_decompress(&r, special, &out, &olen), CHAIN_ECORRUPT);
}

static void test_coin_record(void **state)
{
	(void)state;
	/* Core's Coin serialization of a P2PKH coinbase coin at height 100
	 * worth 50 BTC: VARINT(201) 8049, VARINT(0x32) 32, 00 + hash160. */
	size_t len;
	uint8_t *s = tu_unhex("76a914000102030405060708090a0b0c0d0e0f1011121388ac", &len);
	struct chain_coin c = {.value = 50 * COIN,
	                       .height = 100,
	                       .coinbase = true,
	                       .script_len = (uint32_t)len,
	                       .script = s};
	uint8_t val[CHAIN_COIN_VAL_MAX];
	size_t n = chain_coin_value_encode(val, &c);
	char *hex = tu_hex(val, n);
	assert_string_equal(hex, "80493200000102030405060708090a0b0c0d0e0f10111213");
	free(hex);
	struct chain_coin back;
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
	CHECK(chain_coin_value_decode(val, n, &back, special));
	assert_int_equal(back.value, 50 * COIN);
	assert_int_equal(back.height, 100);
	assert_true(back.coinbase);
	tu_assert_bytes_equal(back.script, back.script_len, s, len);
	/* Every truncation fails cleanly. */
	for (size_t cut = 0; cut < n; cut++)
		CHECK_ERR(chain_coin_value_decode(val, cut, &back, special), CHAIN_ECORRUPT);
	/* An amount over 21 million BTC. */
	uint8_t bad[32];
	size_t k = chain_varint_encode(bad, 2);
	k += chain_varint_encode(bad + k, chain_compress_amount(21000001 * COIN));
	bad[k++] = 6;
	CHECK_ERR(chain_coin_value_decode(bad, k, &back, special), CHAIN_ECORRUPT);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_put_get_del_walk),
	    cmocka_unit_test(test_write_cursor_mixed),
	    cmocka_unit_test(test_format_version),
	    cmocka_unit_test(test_truncated_file),
	    cmocka_unit_test(test_disk_space),
	    cmocka_unit_test(test_map_resized_by_other_process),
	    cmocka_unit_test(test_foreach_returns_fn_error),
	    cmocka_unit_test(test_full_disk_inside_the_map),
	    cmocka_unit_test(test_varint_vectors),
	    cmocka_unit_test(test_key_order),
	    cmocka_unit_test(test_amounts),
	    cmocka_unit_test(test_scripts),
	    cmocka_unit_test(test_coin_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
