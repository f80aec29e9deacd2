/*
 * tests/unit/test_chain_store.c: the block store (blk/rev files) and
 * Core's undo serialization.
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

/* ---------------------------------------------------------------------- */
/* Undo serialization                                                      */

static const uint8_t P2PKH[25] = {0x76, 0xa9, 0x14, 1,  2,  3,  4,  5,  6,  7,  8,    9,   10,
                                  11,   12,   13,   14, 15, 16, 17, 18, 19, 20, 0x88, 0xac};
static const uint8_t P2SH[23] = {0xa9, 0x14, 9, 8, 7, 6, 5, 4, 3, 2,  1,   0,
                                 1,    2,    3, 4, 5, 6, 7, 8, 9, 10, 0x87};
/* The generator point G, uncompressed (even y) */
static const char G_HEX[] = "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
                            "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";

/* An owned copy of a script for a coin. */
static uint8_t *dup_bytes(const void *p, size_t n)
{
	uint8_t *q = xmalloc(n ? n : 1);
	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

/* An undo of one tx per coin given (n_coins 1 each) unless grouped by the caller. */
static void undo_build(struct chain_block_undo *u, uint32_t n_tx, const uint32_t *per_tx,
                       uint32_t total)
{
	chain_block_undo_init(u);
	u->n_tx = n_tx;
	u->total = total;
	u->first = xcalloc(n_tx, sizeof(uint32_t));
	u->n_coins = xcalloc(n_tx, sizeof(uint32_t));
	u->coins = xcalloc(total, sizeof(*u->coins));
	assert_true(u->first && u->n_coins && u->coins);
	uint32_t at = 0;
	for (uint32_t i = 0; i < n_tx; i++) {
		u->first[i] = at;
		u->n_coins[i] = per_tx[i];
		at += per_tx[i];
	}
	assert_int_equal(at, total);
}

static void set_coin(struct chain_undo_coin *c, int64_t value, uint32_t height, bool cb,
                     const void *script, uint32_t len)
{
	c->value = value;
	c->height = height;
	c->coinbase = cb;
	c->script_len = len;
	c->script = len ? dup_bytes(script, len) : NULL;
}

static uint8_t *encode(const struct chain_block_undo *u, size_t *len)
{
	struct proto_writer w;
	proto_writer_init(&w);
	chain_block_undo_encode(u, &w);
	tu_assert_err(w.err, 0);
	*len = w.len;
	return w.buf;
}

static void assert_undo_equal(const struct chain_block_undo *a, const struct chain_block_undo *b)
{
	assert_int_equal(a->n_tx, b->n_tx);
	assert_int_equal(a->total, b->total);
	for (uint32_t i = 0; i < a->n_tx; i++) {
		assert_int_equal(a->first[i], b->first[i]);
		assert_int_equal(a->n_coins[i], b->n_coins[i]);
	}
	for (uint32_t i = 0; i < a->total; i++) {
		const struct chain_undo_coin *x = &a->coins[i], *y = &b->coins[i];
		assert_int_equal(x->value, y->value);
		assert_int_equal(x->height, y->height);
		assert_int_equal(x->coinbase, y->coinbase);
		tu_assert_bytes_equal(x->script, x->script_len, y->script, y->script_len);
	}
}

/* Encode, compare with Core's bytes when given, decode, compare with the original. */
static void round_trip(const struct chain_block_undo *u, const char *want_hex)
{
	size_t len;
	uint8_t *enc = encode(u, &len);
	if (want_hex) {
		size_t wlen;
		uint8_t *want = tu_unhex(want_hex, &wlen);
		tu_assert_bytes_equal(enc, len, want, wlen);
		free(want);
	}
	struct chain_block_undo d;
	tu_assert_err(chain_block_undo_decode(enc, len, &d), 0);
	assert_undo_equal(u, &d);
	chain_block_undo_release(&d);
	xfree(enc);
}

/* One coin at height 0 with an empty script: the encoding is 01 01 00 VARINT(amount) 06. */
static void expect_amount(int64_t value, const char *varint_hex)
{
	struct chain_block_undo u;
	const uint32_t one = 1;
	char want[64];
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], value, 0, false, NULL, 0);
	snprintf(want, sizeof(want), "010100%s06", varint_hex);
	round_trip(&u, want);
	chain_block_undo_release(&u);
}

/* Core's compress_tests.cpp pairs, seen through the VarInt that carries them. */
static void test_amount_compression(void **state)
{
	(void)state;
	expect_amount(0, "00");
	expect_amount(1, "01");
	expect_amount(1000000, "07");               /* CENT -> 0x7 */
	expect_amount(100000000, "09");             /* COIN -> 0x9 */
	expect_amount(5000000000LL, "32");          /* 50 COIN -> 0x32 */
	expect_amount(PROTO_MAX_MONEY, "8980dd40"); /* 21e6 COIN -> 0x1406f40 */
}

/* Core's VarInt bit patterns (serialize_tests.cpp), through height*2+coinbase. */
static void expect_code(uint32_t height, bool cb, const char *code_hex)
{
	struct chain_block_undo u;
	const uint32_t one = 1;
	char want[64];
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, height, cb, NULL, 0);
	snprintf(want, sizeof(want), "0101%s%s0006", code_hex, height ? "00" : "");
	round_trip(&u, want);
	chain_block_undo_release(&u);
}

static void test_varint(void **state)
{
	(void)state;
	expect_code(0, false, "00");
	expect_code(63, true, "7f");                 /* 0x7f */
	expect_code(64, false, "8000");              /* 0x80 */
	expect_code(0x91a, false, "a334");           /* 0x1234 */
	expect_code(0x7fff, true, "82fe7f");         /* 0xffff */
	expect_code(0x91a2b, false, "c7e756");       /* 0x123456 */
	expect_code(0x7fffffff, true, "8efefefe7f"); /* 0xffffffff */

	/* Height 2^31 cannot be packed with the flag into 32 bits. */
	struct chain_block_undo u;
	const uint32_t one = 1;
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, 0x80000000u, false, NULL, 0);
	struct proto_writer w;
	proto_writer_init(&w);
	chain_block_undo_encode(&u, &w);
	assert_int_not_equal(w.err, 0);
	proto_writer_release(&w);
	chain_block_undo_release(&u);
}

/* Two keys of each y parity, made with libsecp256k1, as uncompressed P2PK scripts. */
static void p2pk_uncompressed(int parity, uint8_t out[67])
{
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	assert_non_null(ctx);
	for (uint8_t k = 1; k < 50; k++) {
		uint8_t sk[32] = {0};
		sk[31] = k;
		secp256k1_pubkey pk;
		size_t n = 65;
		assert_true(secp256k1_ec_pubkey_create(ctx, &pk, sk));
		secp256k1_ec_pubkey_serialize(ctx, out + 1, &n, &pk, SECP256K1_EC_UNCOMPRESSED);
		if ((out[65] & 1) == parity)
			break;
	}
	assert_int_equal(out[65] & 1, parity);
	out[0] = 65;
	out[66] = 0xac;
	secp256k1_context_destroy(ctx);
}

/* Every script special case, and the plain ones, with Core's bytes. */
static void test_script_compression(void **state)
{
	(void)state;
	struct chain_block_undo u;
	const uint32_t one = 1;
	char want[400];
	char *h;

	/* P2PKH: kind 0 and the hash. Height 100, not coinbase: code 200 = 80 48, dummy 00. */
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 5000000000LL, 100, false, P2PKH, sizeof(P2PKH));
	h = tu_hex(P2PKH + 3, 20);
	snprintf(want, sizeof(want),
	         "010180480032"
	         "00%s",
	         h);
	free(h);
	round_trip(&u, want);
	chain_block_undo_release(&u);

	/* P2SH: kind 1. Coinbase at height 1: code 3. */
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 1, 1, true, P2SH, sizeof(P2SH));
	h = tu_hex(P2SH + 2, 20);
	snprintf(want, sizeof(want),
	         "0101030001"
	         "01%s",
	         h);
	free(h);
	round_trip(&u, want);
	chain_block_undo_release(&u);

	/* Compressed P2PK, both prefixes: kind 2/3 and x. */
	for (uint8_t prefix = 2; prefix <= 3; prefix++) {
		uint8_t s[35];
		s[0] = 33;
		s[1] = prefix;
		for (int i = 0; i < 32; i++)
			s[2 + i] = (uint8_t)(0x40 + i);
		s[34] = 0xac;
		undo_build(&u, 1, &one, 1);
		set_coin(&u.coins[0], 0, 0, false, s, sizeof(s));
		h = tu_hex(s + 2, 32);
		snprintf(want, sizeof(want), "01010000%02x%s", prefix, h);
		free(h);
		round_trip(&u, want);
		chain_block_undo_release(&u);
	}

	/* Uncompressed P2PK on the curve: kind 4 | parity(y) and x; decompressed back. */
	for (int parity = 0; parity <= 1; parity++) {
		uint8_t s[67];
		p2pk_uncompressed(parity, s);
		undo_build(&u, 1, &one, 1);
		set_coin(&u.coins[0], 0, 0, false, s, sizeof(s));
		h = tu_hex(s + 2, 32);
		snprintf(want, sizeof(want), "01010000%02x%s", 4 | parity, h);
		free(h);
		round_trip(&u, want);
		chain_block_undo_release(&u);
	}
	/* G is even: kind 4. */
	size_t glen;
	uint8_t *g = tu_unhex(G_HEX, &glen);
	uint8_t s[67];
	s[0] = 65;
	memcpy(s + 1, g, 65);
	s[66] = 0xac;
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, 0, false, s, sizeof(s));
	snprintf(want, sizeof(want), "0101000004%.64s", G_HEX + 2);
	round_trip(&u, want);
	chain_block_undo_release(&u);

	/* Off the curve: stored whole, VARINT(67 + 6 = 0x49) and the script. */
	s[65] ^= 1;
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, 0, false, s, sizeof(s));
	h = tu_hex(s, 67);
	snprintf(want, sizeof(want), "0101000049%s", h);
	free(h);
	round_trip(&u, want);
	chain_block_undo_release(&u);
	free(g);

	/* Near misses of the templates are plain scripts. */
	uint8_t near[25];
	memcpy(near, P2PKH, 25);
	near[24] = 0xad;
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, 0, false, near, 25);
	h = tu_hex(near, 25);
	snprintf(want, sizeof(want), "010100001f%s", h);
	free(h);
	round_trip(&u, want);
	chain_block_undo_release(&u);

	/* A 200-byte script: VARINT(206) = 80 4e. */
	uint8_t longs[200];
	memset(longs, 0x51, sizeof(longs));
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 0, 0, false, longs, sizeof(longs));
	round_trip(&u, NULL);
	size_t len;
	uint8_t *enc = encode(&u, &len);
	assert_int_equal(len, 3 + 2 + 200 + 1);
	assert_int_equal(enc[4], 0x80);
	assert_int_equal(enc[5], 0x4e);
	xfree(enc);
	chain_block_undo_release(&u);
}

/* Over Core's MAX_SCRIPT_SIZE, a script reads back as OP_RETURN (Core's rule). */
static void test_overlong_script(void **state)
{
	(void)state;
	struct chain_block_undo u, d;
	const uint32_t one = 1;
	static uint8_t big[10001];
	undo_build(&u, 1, &one, 1);
	set_coin(&u.coins[0], 7, 3, false, big, sizeof(big));
	size_t len;
	uint8_t *enc = encode(&u, &len);
	tu_assert_err(chain_block_undo_decode(enc, len, &d), 0);
	assert_int_equal(d.coins[0].script_len, 1);
	assert_int_equal(d.coins[0].script[0], 0x6a);
	assert_int_equal(d.coins[0].value, 7);
	chain_block_undo_release(&d);
	xfree(enc);
	chain_block_undo_release(&u);
}

/* Empty undo, txs with no coins, and many txs of many coins. */
static void test_shapes(void **state)
{
	(void)state;
	struct chain_block_undo u;
	undo_build(&u, 0, NULL, 0);
	round_trip(&u, "00");
	chain_block_undo_release(&u);

	const uint32_t zeros[3] = {0, 0, 0};
	undo_build(&u, 3, zeros, 0);
	round_trip(&u, "03000000");
	chain_block_undo_release(&u);

	enum { NTX = 1000 };
	uint32_t per[NTX], total = 0;
	for (uint32_t i = 0; i < NTX; i++)
		total += per[i] = i % 7;
	undo_build(&u, NTX, per, total);
	for (uint32_t i = 0; i < total; i++) {
		if (i % 3 == 0)
			set_coin(&u.coins[i], (int64_t)i * 1000, i, i % 2, P2PKH, sizeof(P2PKH));
		else if (i % 3 == 1)
			set_coin(&u.coins[i], (int64_t)i * 12345, i * 7, false, P2SH, sizeof(P2SH));
		else
			set_coin(&u.coins[i], i, 0, true, P2PKH + 1, i % 20);
	}
	round_trip(&u, NULL);
	chain_block_undo_release(&u);
}

/* Hostile or damaged bytes: ECORRUPT, no giant allocation, no overread. */
static void test_decode_corrupt(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",                   /* nothing */
	    "01",                 /* a tx promised, none there */
	    "fe00000001",         /* 16M txs in five bytes */
	    "ff0000000001000000", /* a count over MAX_SIZE */
	    "fd0100",             /* non-canonical CompactSize */
	    "0101",               /* a coin promised, none there */
	    "01fd0001000000",     /* 256 coins in four bytes */
	    "010100",             /* code only */
	    "01010200",           /* height > 0: dummy then nothing */
	    "0101000000",         /* code, amount, no script */
	    "010100000001",       /* P2PKH with one hash byte */
	    "0101000007",         /* one script byte promised, none there */
	    "0101008980dd4a06",   /* amount 0x1406f4a decompresses past MAX_MONEY */
	    "0101008f80808000",   /* code VarInt over 32 bits */
	    "01010000"
	    "04"
	    "0000000000000000000000000000000000000000000000000000000000000005",
	    "0101000006ff", /* trailing byte */
	    "00ff",         /* trailing after an empty undo */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		uint8_t *b = tu_unhex(bad[i], &len);
		struct chain_block_undo u;
		uint64_t before = base_alloc_count();
		int err = chain_block_undo_decode(b, len, &u);
		if (err != CHAIN_ECORRUPT)
			fail_msg("case %zu (%s): got %d, want CHAIN_ECORRUPT", i, bad[i], err);
		assert_int_equal(base_alloc_count(), before);
		assert_int_equal(u.n_tx, 0);
		assert_null(u.coins);
		free(b);
	}

	/* Every truncation of a valid encoding fails cleanly. */
	struct chain_block_undo u;
	const uint32_t per[2] = {2, 1};
	undo_build(&u, 2, per, 3);
	set_coin(&u.coins[0], 5000000000LL, 100, true, P2PKH, sizeof(P2PKH));
	set_coin(&u.coins[1], 12, 0, false, P2SH, sizeof(P2SH));
	set_coin(&u.coins[2], 99, 7, false, "\x51\x52", 2);
	size_t len;
	uint8_t *enc = encode(&u, &len);
	for (size_t cut = 0; cut < len; cut++) {
		struct chain_block_undo d;
		uint8_t *copy = dup_bytes(enc, cut);
		tu_assert_err(chain_block_undo_decode(copy, cut, &d), CHAIN_ECORRUPT);
		xfree(copy);
	}
	xfree(enc);
	chain_block_undo_release(&u);
}

/* Out of memory at each allocation of a decode: ENOMEM, nothing left owned (ASan checks leaks). */
static void test_decode_oom(void **state)
{
	(void)state;
	struct chain_block_undo u;
	const uint32_t per[3] = {2, 0, 3};
	undo_build(&u, 3, per, 5);
	for (uint32_t i = 0; i < 5; i++)
		set_coin(&u.coins[i], 1000 + i, i, i == 0, P2PKH, 10 + i);
	size_t len;
	uint8_t *enc = encode(&u, &len);
	int fails = 0;
	for (long n = 0;; n++) {
		struct chain_block_undo d;
		base_alloc_fail_after(n);
		int err = chain_block_undo_decode(enc, len, &d);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected) {
			tu_assert_err(err, 0);
			assert_undo_equal(&u, &d);
			chain_block_undo_release(&d);
			break;
		}
		tu_assert_err(err, CHAIN_ENOMEM);
		assert_int_equal(d.n_tx, 0);
		assert_null(d.coins);
		assert_null(d.first);
		fails++;
	}
	assert_int_equal(fails, 3 + 5); /* three arrays, five scripts */
	xfree(enc);
	chain_block_undo_release(&u);
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
	    cmocka_unit_test(test_regtest_chain),
	    cmocka_unit_test(test_file_boundaries),
	    cmocka_unit_test(test_torn_tail),
	    cmocka_unit_test(test_block_errors),
	    cmocka_unit_test(test_amount_compression),
	    cmocka_unit_test(test_varint),
	    cmocka_unit_test(test_script_compression),
	    cmocka_unit_test(test_overlong_script),
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_decode_corrupt),
	    cmocka_unit_test(test_decode_oom),
	    cmocka_unit_test(test_undo_records),
	    cmocka_unit_test(test_many_files),
	    cmocka_unit_test(test_open_errors),
	    cmocka_unit_test(test_core_rev),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
