/*
 * tests/unit/test_chain_store.c: the block store (blk/rev files) and the
 * undo records in rev files (Core's undo serialization itself:
 * test_chain_undo.c).
 *
 * Two hooks for tests/integration/test_chain_store_core.py, which runs
 * this binary around a bitcoind: with PEERD_STORE_EXPORT=DIR,
 * test_regtest_chain also writes the regtest chain into a store at DIR
 * (for bitcoind's -loadblock); with PEERD_CORE_BLOCKS=DIR (bitcoind's
 * blocks directory after it connected that chain), test_core_rev reads
 * every undo record Core wrote and checks that re-encoding gives Core's
 * bytes exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <secp256k1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_undo.h"

#define REGTEST_BLOCKS 265

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */

static uint32_t regtest_magic(void)
{
	return proto_params(PROTO_NET_REGTEST)->magic;
}

static char *path_in(const char *dir, const char *name)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static off_t size_of(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return -1;
	return st.st_size;
}

/* Overwrite bytes of a file at off. */
static void poke(const char *path, off_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

/* The records of regtest_chain.dat: offsets of each block's data and its length. */
struct records {
	uint8_t *file;
	size_t len;
	size_t n;
	size_t off[REGTEST_BLOCKS];
	uint32_t size[REGTEST_BLOCKS];
};

static void records_load(struct records *rec)
{
	rec->file = tu_read_file(tu_vector("regtest/regtest_chain.dat"), &rec->len);
	rec->n = 0;
	size_t p = 0;
	while (p < rec->len) {
		assert_true(rec->len - p >= 8);
		assert_int_equal(proto_le32(rec->file + p), regtest_magic());
		uint32_t n = proto_le32(rec->file + p + 4);
		assert_true(rec->len - p - 8 >= n);
		assert_true(rec->n < REGTEST_BLOCKS);
		rec->off[rec->n] = p + 8;
		rec->size[rec->n] = n;
		rec->n++;
		p += 8 + (size_t)n;
	}
	assert_int_equal(rec->n, REGTEST_BLOCKS);
}

static void expect_block(struct chain_store *s, const struct chain_pos *pos, const uint8_t *want,
                         size_t want_len)
{
	uint8_t *raw;
	size_t len;
	tu_assert_err(chain_store_read_block(s, pos, &raw, &len), 0);
	tu_assert_bytes_equal(raw, len, want, want_len);
	xfree(raw);
}

/* ---------------------------------------------------------------------- */
/* Blocks                                                                  */

static void write_chain(const char *dir, const struct records *rec, struct chain_pos *pos)
{
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	for (size_t i = 0; i < rec->n; i++)
		tu_assert_err(
		    chain_store_write_block(s, rec->file + rec->off[i], rec->size[i], &pos[i]), 0);
	tu_assert_err(chain_store_sync(s), 0);
	chain_store_close(s);
}

/* The regtest chain goes in and comes out byte for byte, and the blk file is Core's format. */
static void test_regtest_chain(void **state)
{
	(void)state;
	struct records rec;
	struct chain_pos pos[REGTEST_BLOCKS];
	records_load(&rec);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	write_chain(dir, &rec, pos);

	/* One file holding exactly the input's records, positions after each prefix. */
	size_t blen;
	uint8_t *blk = tu_read_file(path_in(dir, "blk00000.dat"), &blen);
	tu_assert_bytes_equal(blk, blen, rec.file, rec.len);
	free(blk);
	assert_int_equal(size_of(path_in(dir, "blk00001.dat")), -1);
	for (size_t i = 0; i < rec.n; i++) {
		assert_int_equal(pos[i].file, 0);
		assert_int_equal(pos[i].pos, rec.off[i]);
	}

	/* Reopened: every block reads back; new blocks append after the last. */
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	for (size_t i = 0; i < rec.n; i++)
		expect_block(s, &pos[i], rec.file + rec.off[i], rec.size[i]);
	struct chain_pos more;
	tu_assert_err(chain_store_write_block(s, rec.file + rec.off[0], rec.size[0], &more), 0);
	assert_int_equal(more.file, 0);
	assert_int_equal(more.pos, rec.len + 8);
	expect_block(s, &more, rec.file + rec.off[0], rec.size[0]);
	expect_block(s, &pos[rec.n - 1], rec.file + rec.off[rec.n - 1], rec.size[rec.n - 1]);
	chain_store_close(s);
	assert_int_equal(size_of(path_in(dir, "blk00000.dat")), (off_t)(rec.len + 8 + rec.size[0]));
	tu_rmtree(dir);

	const char *export = getenv("PEERD_STORE_EXPORT");
	if (export && *export)
		write_chain(export, &rec, pos);
	free(rec.file);
}

/* A low file limit spreads the chain over many files, as Core's numbering. */
static void test_file_boundaries(void **state)
{
	(void)state;
	struct records rec;
	struct chain_pos pos[REGTEST_BLOCKS];
	records_load(&rec);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	const uint32_t max = 4096;

	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	chain_store_set_max_file_size(s, max);
	size_t half = rec.n / 2;
	for (size_t i = 0; i < half; i++)
		tu_assert_err(
		    chain_store_write_block(s, rec.file + rec.off[i], rec.size[i], &pos[i]), 0);
	chain_store_close(s);

	/* Reopened (the knob set again), appends continue in the highest file. */
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	chain_store_set_max_file_size(s, max);
	for (size_t i = half; i < rec.n; i++)
		tu_assert_err(
		    chain_store_write_block(s, rec.file + rec.off[i], rec.size[i], &pos[i]), 0);
	assert_true(pos[half].file == pos[half - 1].file ||
	            pos[half].file == pos[half - 1].file + 1);

	/* Files fill in order, each under the limit unless it holds one record. */
	int32_t files = pos[rec.n - 1].file + 1;
	assert_true(files > 10);
	for (size_t i = 1; i < rec.n; i++) {
		assert_true(pos[i].file == pos[i - 1].file || pos[i].file == pos[i - 1].file + 1);
		if (pos[i].file != pos[i - 1].file)
			assert_int_equal(pos[i].pos, 8);
	}
	for (int32_t f = 0; f < files; f++) {
		char name[32];
		snprintf(name, sizeof(name), "blk%05d.dat", (int)f);
		off_t sz = size_of(path_in(dir, name));
		assert_true(sz > 0);
		size_t n_in = 0;
		for (size_t i = 0; i < rec.n; i++)
			n_in += pos[i].file == f;
		assert_true(sz < (off_t)max || n_in == 1);
	}
	for (size_t i = 0; i < rec.n; i++)
		expect_block(s, &pos[i], rec.file + rec.off[i], rec.size[i]);

	/* A block larger than the limit still goes in (alone in its file). */
	chain_store_set_max_file_size(s, 16);
	struct chain_pos big;
	tu_assert_err(chain_store_write_block(s, rec.file + rec.off[5], rec.size[5], &big), 0);
	assert_int_equal(big.file, files);
	assert_int_equal(big.pos, 8);
	expect_block(s, &big, rec.file + rec.off[5], rec.size[5]);
	chain_store_close(s);
	tu_rmtree(dir);
	free(rec.file);
}

/* A crash's torn record at the end: the next append starts after it. */
static void test_torn_tail(void **state)
{
	(void)state;
	struct records rec;
	struct chain_pos pos[REGTEST_BLOCKS];
	records_load(&rec);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	for (size_t i = 0; i < 3; i++)
		tu_assert_err(
		    chain_store_write_block(s, rec.file + rec.off[i], rec.size[i], &pos[i]), 0);
	chain_store_close(s);

	/* Half a record: its prefix and some of its block. */
	const char *blk = path_in(dir, "blk00000.dat");
	off_t end = size_of(blk);
	poke(blk, end, rec.file + rec.off[3] - 8, 8 + rec.size[3] / 2);
	off_t torn_end = size_of(blk);

	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	tu_assert_err(chain_store_write_block(s, rec.file + rec.off[3], rec.size[3], &pos[3]), 0);
	assert_int_equal(pos[3].pos, torn_end + 8);
	for (size_t i = 0; i < 4; i++)
		expect_block(s, &pos[i], rec.file + rec.off[i], rec.size[i]);
	chain_store_close(s);
	tu_rmtree(dir);
	free(rec.file);
}

/* Damaged records, positions that point nowhere, files that are gone. */
static void test_block_errors(void **state)
{
	(void)state;
	struct records rec;
	struct chain_pos pos[2];
	records_load(&rec);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	for (size_t i = 0; i < 2; i++)
		tu_assert_err(
		    chain_store_write_block(s, rec.file + rec.off[i], rec.size[i], &pos[i]), 0);
	tu_assert_err(chain_store_sync(s), 0);

	uint8_t *raw = (uint8_t *)"x";
	size_t len = 1;
	struct chain_pos p = {.file = 7, .pos = 8};
	tu_assert_err(chain_store_read_block(s, &p, &raw, &len), CHAIN_ENOTFOUND);
	assert_null(raw);
	assert_int_equal(len, 0);
	p = (struct chain_pos){.file = -1, .pos = 8};
	tu_assert_err(chain_store_read_block(s, &p, &raw, &len), CHAIN_ENOTFOUND);
	p = (struct chain_pos){.file = 0, .pos = 4};
	tu_assert_err(chain_store_read_block(s, &p, &raw, &len), CHAIN_ENOTFOUND);
	p = (struct chain_pos){.file = 0, .pos = 1000000};
	tu_assert_err(chain_store_read_block(s, &p, &raw, &len), CHAIN_ENOTFOUND);
	/* Inside a block: whatever is 8 bytes before is not a record prefix. */
	p = (struct chain_pos){.file = 0, .pos = pos[0].pos + 40};
	tu_assert_err(chain_store_read_block(s, &p, &raw, &len), CHAIN_ECORRUPT);

	/* Too large a block is refused before anything is written. */
	static uint8_t huge[4000001];
	tu_assert_err(chain_store_write_block(s, huge, sizeof(huge), &p), CHAIN_EOVERFLOW);

	const char *blk = path_in(dir, "blk00000.dat");
	uint8_t bad[4];
	proto_put_le32(bad, 0xd9b4bef9); /* mainnet's magic in a regtest store */
	poke(blk, pos[1].pos - 8, bad, 4);
	tu_assert_err(chain_store_read_block(s, &pos[1], &raw, &len), CHAIN_ECORRUPT);
	proto_put_le32(bad, regtest_magic());
	poke(blk, pos[1].pos - 8, bad, 4);
	expect_block(s, &pos[1], rec.file + rec.off[1], rec.size[1]);

	proto_put_le32(bad, 4000001);
	poke(blk, pos[1].pos - 4, bad, 4);
	tu_assert_err(chain_store_read_block(s, &pos[1], &raw, &len), CHAIN_ECORRUPT);
	proto_put_le32(bad, rec.size[1] + 1); /* one byte past the end of the file */
	poke(blk, pos[1].pos - 4, bad, 4);
	tu_assert_err(chain_store_read_block(s, &pos[1], &raw, &len), CHAIN_ECORRUPT);
	proto_put_le32(bad, rec.size[1]);
	poke(blk, pos[1].pos - 4, bad, 4);

	/* Truncated file: the last record's tail is gone. */
	assert_int_equal(truncate(blk, pos[1].pos + rec.size[1] - 1), 0);
	tu_assert_err(chain_store_read_block(s, &pos[1], &raw, &len), CHAIN_ECORRUPT);
	expect_block(s, &pos[0], rec.file + rec.off[0], rec.size[0]);

	/* Out of memory for the block buffer. */
	base_alloc_fail_after(0);
	tu_assert_err(chain_store_read_block(s, &pos[0], &raw, &len), CHAIN_ENOMEM);
	base_alloc_fail_after(-1);
	assert_null(raw);

	chain_store_close(s);
	tu_rmtree(dir);
	free(rec.file);
}

/* A read into the caller's buffer: kept while blocks fit, replaced by a
 * larger one when not, and still the caller's after a failed read. */
static void test_read_into(void **state)
{
	(void)state;
	struct records rec;
	struct chain_pos pos[3];
	records_load(&rec);
	/* Blocks 0 and 1 are small, the last ones larger (regtest_chain.dat). */
	size_t big = 0;
	for (size_t i = 1; i < rec.n; i++)
		if (rec.size[i] > rec.size[big])
			big = i;
	assert_true(rec.size[big] > rec.size[0]);
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	const size_t which[3] = {0, big, 1};
	for (size_t i = 0; i < 3; i++)
		tu_assert_err(chain_store_write_block(s, rec.file + rec.off[which[i]],
		                                      rec.size[which[i]], &pos[i]),
		              0);
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;
	tu_assert_err(chain_store_read_block_into(s, &pos[0], &buf, &cap, &len), 0);
	tu_assert_bytes_equal(buf, len, rec.file + rec.off[0], rec.size[0]);
	assert_int_equal(cap, rec.size[0]);
	/* Larger: a new buffer of its size. */
	tu_assert_err(chain_store_read_block_into(s, &pos[1], &buf, &cap, &len), 0);
	tu_assert_bytes_equal(buf, len, rec.file + rec.off[big], rec.size[big]);
	assert_int_equal(cap, rec.size[big]);
	/* Smaller: the same buffer, no allocation at all. */
	uint8_t *kept = buf;
	base_alloc_fail_after(0);
	tu_assert_err(chain_store_read_block_into(s, &pos[2], &buf, &cap, &len), 0);
	tu_assert_err(chain_store_read_block_into(s, &pos[0], &buf, &cap, &len), 0);
	base_alloc_fail_after(-1);
	assert_ptr_equal(buf, kept);
	assert_int_equal(cap, rec.size[big]);
	tu_assert_bytes_equal(buf, len, rec.file + rec.off[0], rec.size[0]);
	/* Failures leave the caller's buffer in place. */
	struct chain_pos gone = {.file = 9, .pos = 8};
	tu_assert_err(chain_store_read_block_into(s, &gone, &buf, &cap, &len), CHAIN_ENOTFOUND);
	assert_ptr_equal(buf, kept);
	assert_int_equal(len, 0);
	xfree(buf);
	/* From nothing, out of memory: nothing allocated, nothing lost. */
	buf = NULL;
	cap = 0;
	base_alloc_fail_after(0);
	tu_assert_err(chain_store_read_block_into(s, &pos[0], &buf, &cap, &len), CHAIN_ENOMEM);
	base_alloc_fail_after(-1);
	assert_null(buf);
	assert_int_equal(cap, 0);
	chain_store_close(s);
	tu_rmtree(dir);
	free(rec.file);
}

/* ---------------------------------------------------------------------- */
/* Undo records in rev files                                               */

static void sample_undo(struct chain_block_undo *u)
{
	const uint32_t per[2] = {1, 2};
	undo_build(u, 2, per, 3);
	set_coin(&u->coins[0], 5000000000LL, 1, true, P2PKH, sizeof(P2PKH));
	set_coin(&u->coins[1], 4999990000LL, 150, false, P2SH, sizeof(P2SH));
	set_coin(&u->coins[2], 1, 0, false, "\x6a", 1);
}

static void test_undo_records(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	struct chain_store *s;
	struct chain_block_undo u, d;
	struct proto_hash prev, other;
	memset(prev.b, 0x11, 32);
	memset(other.b, 0x22, 32);
	sample_undo(&u);
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);

	struct chain_pos p0, p1, pe, p3;
	tu_assert_err(chain_store_write_undo(s, 0, &u, &prev, &p0), 0);
	tu_assert_err(chain_store_write_undo(s, 0, &u, &other, &p1), 0);
	struct chain_block_undo empty;
	undo_build(&empty, 0, NULL, 0);
	tu_assert_err(chain_store_write_undo(s, 0, &empty, &prev, &pe), 0);
	tu_assert_err(chain_store_write_undo(s, 3, &u, &prev, &p3), 0);
	tu_assert_err(chain_store_sync(s), 0);
	assert_int_equal(p0.file, 0);
	assert_int_equal(p0.pos, 8);
	assert_int_equal(p3.file, 3);
	assert_int_equal(p3.pos, 8);

	/* The record is Core's: magic, size, CBlockUndo, SHA256d(prev || CBlockUndo). */
	size_t len;
	uint8_t *enc = encode(&u, &len);
	size_t flen;
	uint8_t *file = tu_read_file(path_in(dir, "rev00000.dat"), &flen);
	assert_int_equal(proto_le32(file), regtest_magic());
	assert_int_equal(proto_le32(file + 4), len);
	tu_assert_bytes_equal(file + 8, len, enc, len);
	uint8_t *hbuf = xmalloc(32 + len);
	assert_non_null(hbuf);
	memcpy(hbuf, prev.b, 32);
	memcpy(hbuf + 32, enc, len);
	uint8_t sum[32];
	proto_sha256d(hbuf, 32 + len, sum);
	tu_assert_bytes_equal(file + 8 + len, 32, sum, 32);
	assert_int_equal(p1.pos, 8 + len + 32 + 8);
	assert_int_equal(flen, 3 * (8 + 32) + 2 * len + 1);
	xfree(hbuf);
	free(file);

	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), 0);
	assert_undo_equal(&u, &d);
	chain_block_undo_release(&d);
	tu_assert_err(chain_store_read_undo(s, &p1, &other, &d), 0);
	chain_block_undo_release(&d);
	tu_assert_err(chain_store_read_undo(s, &pe, &prev, &d), 0);
	assert_int_equal(d.n_tx, 0);
	chain_block_undo_release(&d);
	tu_assert_err(chain_store_read_undo(s, &p3, &prev, &d), 0);
	chain_block_undo_release(&d);

	/* Wrong parent: the checksum does not match. */
	tu_assert_err(chain_store_read_undo(s, &p0, &other, &d), CHAIN_ECORRUPT);
	assert_int_equal(d.n_tx, 0);
	/* Nowhere. */
	struct chain_pos p = {.file = 9, .pos = 8};
	tu_assert_err(chain_store_read_undo(s, &p, &prev, &d), CHAIN_ENOTFOUND);
	p = (struct chain_pos){.file = 0, .pos = 100000};
	tu_assert_err(chain_store_read_undo(s, &p, &prev, &d), CHAIN_ENOTFOUND);

	/* A flipped byte in the undo data. */
	const char *rev = path_in(dir, "rev00000.dat");
	uint8_t b = enc[3] ^ 0x01;
	poke(rev, p0.pos + 3, &b, 1);
	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), CHAIN_ECORRUPT);
	poke(rev, p0.pos + 3, &enc[3], 1);
	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), 0);
	chain_block_undo_release(&d);

	/* Bad magic, a size running past the end of the file. */
	uint8_t word[4];
	proto_put_le32(word, 0x0b110907);
	poke(rev, p0.pos - 8, word, 4);
	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), CHAIN_ECORRUPT);
	proto_put_le32(word, regtest_magic());
	poke(rev, p0.pos - 8, word, 4);
	proto_put_le32(word, 0xfffffff0u);
	poke(rev, p0.pos - 4, word, 4);
	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), CHAIN_ECORRUPT);
	proto_put_le32(word, (uint32_t)len);
	poke(rev, p0.pos - 4, word, 4);

	/* A checksum that matches bytes that do not decode: still ECORRUPT, nothing leaked. */
	static const uint8_t junk[] = {0xfe, 0x00, 0x00, 0x00, 0x01, 0x00};
	uint8_t jrec[8 + sizeof(junk) + 32];
	proto_put_le32(jrec, regtest_magic());
	proto_put_le32(jrec + 4, sizeof(junk));
	memcpy(jrec + 8, junk, sizeof(junk));
	uint8_t jh[32 + sizeof(junk)];
	memcpy(jh, prev.b, 32);
	memcpy(jh + 32, junk, sizeof(junk));
	proto_sha256d(jh, sizeof(jh), jrec + 8 + sizeof(junk));
	off_t end = size_of(rev);
	poke(rev, end, jrec, sizeof(jrec));
	p = (struct chain_pos){.file = 0, .pos = (uint32_t)end + 8};
	tu_assert_err(chain_store_read_undo(s, &p, &prev, &d), CHAIN_ECORRUPT);

	/* Truncated: the checksum's last byte is gone. */
	assert_int_equal(truncate(rev, end - 1), 0);
	tu_assert_err(chain_store_read_undo(s, &pe, &prev, &d), CHAIN_ECORRUPT);
	tu_assert_err(chain_store_read_undo(s, &p0, &prev, &d), 0);
	chain_block_undo_release(&d);

	/* Out of memory at each step of a read. */
	for (long n = 0;; n++) {
		base_alloc_fail_after(n);
		int err = chain_store_read_undo(s, &p0, &prev, &d);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected) {
			tu_assert_err(err, 0);
			chain_block_undo_release(&d);
			break;
		}
		tu_assert_err(err, CHAIN_ENOMEM);
	}

	/* An undo whose index arrays disagree with its coins is refused, not written. */
	u.first[1] = 2;
	tu_assert_err(chain_store_write_undo(s, 0, &u, &prev, &p), CHAIN_EARG);
	u.first[1] = 1;
	tu_assert_err(chain_store_write_undo(s, -1, &u, &prev, &p), CHAIN_EARG);

	xfree(enc);
	chain_block_undo_release(&empty);
	chain_block_undo_release(&u);
	chain_store_close(s);
	tu_rmtree(dir);
}

/* Many files open at once: the descriptor cache evicts and reopens, dirty files synced first. */
static void test_many_files(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	struct chain_store *s;
	struct chain_block_undo u, d;
	struct proto_hash prev;
	memset(prev.b, 0x33, 32);
	sample_undo(&u);
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	struct chain_pos pos[40];
	for (int i = 0; i < 40; i++)
		tu_assert_err(chain_store_write_undo(s, i, &u, &prev, &pos[i]), 0);
	for (int i = 39; i >= 0; i--) {
		tu_assert_err(chain_store_read_undo(s, &pos[i], &prev, &d), 0);
		assert_undo_equal(&u, &d);
		chain_block_undo_release(&d);
	}
	tu_assert_err(chain_store_sync(s), 0);
	chain_store_close(s);
	chain_block_undo_release(&u);
	tu_rmtree(dir);
}

/* The store's directory is created, and a path that is a file is an error. */
static void test_open_errors(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "store");
	char sub[4096];
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, sub, regtest_magic()), 0);
	chain_store_close(s);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);

	const char *f = path_in(dir, "file");
	int fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	tu_assert_err(chain_store_open(&s, f, regtest_magic()), CHAIN_EIO);
	assert_null(s);
	chain_store_close(NULL);
	tu_rmtree(dir);
}

/* Core's own rev file: every record reads (checksum against the block's
 * parent), and our encoding of what we read is Core's bytes. */
static void test_core_rev(void **state)
{
	(void)state;
	const char *dir = getenv("PEERD_CORE_BLOCKS");
	if (!dir || !*dir)
		skip();
	struct records rec;
	records_load(&rec);
	size_t flen;
	uint8_t *file = tu_read_file(path_in(dir, "rev00000.dat"), &flen);
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, regtest_magic()), 0);
	bool seen[REGTEST_BLOCKS] = {false};
	size_t n_rec = 0, coins = 0, p = 0;
	/* Core preallocates: the records end where the zero fill starts. */
	while (p + 8 <= flen && proto_le32(file + p) == regtest_magic()) {
		uint32_t n = proto_le32(file + p + 4);
		assert_true(p + 8 + n + 32 <= flen);
		/* Which block: the one whose parent (in its header) gives the checksum. */
		size_t which = REGTEST_BLOCKS;
		struct proto_hash prev;
		for (size_t i = 0; i < rec.n && which == REGTEST_BLOCKS; i++) {
			uint8_t *h = xmalloc(32 + n);
			uint8_t sum[32];
			assert_non_null(h);
			memcpy(h, rec.file + rec.off[i] + 4, 32);
			memcpy(h + 32, file + p + 8, n);
			proto_sha256d(h, 32 + n, sum);
			if (!memcmp(sum, file + p + 8 + n, 32)) {
				which = i;
				memcpy(prev.b, rec.file + rec.off[i] + 4, 32);
			}
			xfree(h);
		}
		if (which == REGTEST_BLOCKS)
			fail_msg("rev record at %zu matches no block's parent", p);
		assert_false(seen[which]);
		seen[which] = true;

		struct chain_block_undo u;
		struct chain_pos pos = {.file = 0, .pos = (uint32_t)(p + 8)};
		tu_assert_err(chain_store_read_undo(s, &pos, &prev, &u), 0);
		size_t len;
		uint8_t *enc = encode(&u, &len);
		tu_assert_bytes_equal(enc, len, file + p + 8, n);
		coins += u.total;
		xfree(enc);
		chain_block_undo_release(&u);
		n_rec++;
		p += 8 + (size_t)n + 32;
	}
	assert_int_equal(n_rec, REGTEST_BLOCKS);
	/* The chain spends coins from block 141 on. */
	assert_true(coins > 100);
	print_message("core rev: %zu records, %zu coins re-encoded identically\n", n_rec, coins);
	chain_store_close(s);
	free(file);
	free(rec.file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regtest_chain), cmocka_unit_test(test_file_boundaries),
	    cmocka_unit_test(test_torn_tail),     cmocka_unit_test(test_block_errors),
	    cmocka_unit_test(test_undo_records),  cmocka_unit_test(test_many_files),
	    cmocka_unit_test(test_open_errors),   cmocka_unit_test(test_core_rev),
	    cmocka_unit_test(test_read_into),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
