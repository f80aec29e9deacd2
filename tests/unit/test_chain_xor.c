/*
 * tests/unit/test_chain_xor.c: Core 28+'s obfuscated block files
 * (chain/xorkey.c and the store's use of the key): the XOR by file offset,
 * xor.dat's choice of key, and blk/rev records written, read and scanned
 * through a key, checked against the file's bytes XORed here by hand.
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

#include "chain/chain.h"
#include "tests/unit/testutil.h"

static const uint8_t KEY[CHAIN_XOR_KEY_SIZE] = {0x82, 0x45, 0xfc, 0x3e, 0x0b, 0x95, 0xba, 0x0c};

static char *path_in(const char *dir, const char *name)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Byte i at file offset off + i goes with key[(off + i) % 8], whatever the
 * alignment and length (the word loop and the tail agree with this). */
static void test_xor_by_offset(void **state)
{
	(void)state;
	uint8_t buf[200], want[200];
	for (uint64_t off = 0; off < 16; off++) {
		for (size_t len = 0; len <= sizeof(buf); len += 7) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)(i * 31 + off);
			for (size_t i = 0; i < len; i++)
				want[i] = buf[i] ^ KEY[(off + i) % 8];
			chain_xor(buf, len, KEY, off);
			tu_assert_bytes_equal(buf, len, want, len);
			/* The same call undoes it. */
			chain_xor(buf, len, KEY, off);
			for (size_t i = 0; i < len; i++)
				assert_int_equal(buf[i], (uint8_t)(i * 31 + off));
		}
	}
	uint8_t zero[CHAIN_XOR_KEY_SIZE] = {0};
	memcpy(want, buf, sizeof(buf));
	chain_xor(buf, sizeof(buf), zero, 3);
	tu_assert_bytes_equal(buf, sizeof(buf), want, sizeof(want));
	assert_true(chain_xor_key_is_zero(zero));
	assert_false(chain_xor_key_is_zero(KEY));
}

/* Core's InitBlocksdirXorKey: first run random (or zero with !use_xor),
 * an existing directory zero, a stored key kept, !use_xor over a stored
 * non-zero key refused with Core's words. */
static void test_key_choice(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX], msg[512];
	uint8_t key[CHAIN_XOR_KEY_SIZE], again[CHAIN_XOR_KEY_SIZE];

	/* First run: only a hidden file there. */
	tu_tmpdir(dir, "xor");
	write_file(path_in(dir, ".lock"), "", 0);
	tu_assert_err(chain_xor_key_init(dir, true, key, msg, sizeof(msg)), 0);
	assert_false(chain_xor_key_is_zero(key));
	tu_assert_err(chain_xor_key_read(dir, again), 0);
	tu_assert_bytes_equal(again, 8, key, 8);
	/* A stored key wins, and -blocksxor=0 over it is Core's error. */
	tu_assert_err(chain_xor_key_init(dir, true, again, msg, sizeof(msg)), 0);
	tu_assert_bytes_equal(again, 8, key, 8);
	tu_assert_err(chain_xor_key_init(dir, false, again, msg, sizeof(msg)), CHAIN_EARG);
	char hex[17], want[1024];
	for (int i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	snprintf(want, sizeof(want),
	         "Failed to initialize ChainstateManager: The blocksdir XOR-key can not be "
	         "disabled when a random key was already stored! Stored key: '%s', stored path: "
	         "'%s/xor.dat'.",
	         hex, dir);
	assert_string_equal(msg, want);
	tu_rmtree(dir);

	/* -blocksxor=0 on a first run: a zero key, accepted again after. */
	tu_tmpdir(dir, "xor");
	tu_assert_err(chain_xor_key_init(dir, false, key, msg, sizeof(msg)), 0);
	assert_true(chain_xor_key_is_zero(key));
	tu_assert_err(chain_xor_key_init(dir, false, key, msg, sizeof(msg)), 0);
	tu_rmtree(dir);

	/* An existing blocks directory (a blk file, no xor.dat): zero. */
	tu_tmpdir(dir, "xor");
	write_file(path_in(dir, "blk00000.dat"), "x", 1);
	tu_assert_err(chain_xor_key_init(dir, true, key, msg, sizeof(msg)), 0);
	assert_true(chain_xor_key_is_zero(key));
	tu_assert_err(chain_xor_key_read(dir, again), 0);
	assert_true(chain_xor_key_is_zero(again));
	tu_rmtree(dir);

	/* A short xor.dat is not silently taken as a key. */
	tu_tmpdir(dir, "xor");
	write_file(path_in(dir, "xor.dat"), "abc", 3);
	assert_int_not_equal(chain_xor_key_init(dir, true, key, msg, sizeof(msg)), 0);
	tu_rmtree(dir);
}

struct seen {
	int n;
	struct chain_pos pos[4];
	size_t len[4];
};

static int on_record(const struct chain_pos *pos, const uint8_t *raw, size_t len, void *arg)
{
	struct seen *s = arg;
	(void)raw;
	assert_true(s->n < 4);
	s->pos[s->n] = *pos;
	s->len[s->n++] = len;
	return 0;
}

/* Blocks and undo through a key: the file holds the XORed record (the magic
 * is not in the clear), reads give the plain bytes back, and a scan finds
 * every record. */
static void test_store_with_key(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "xorstore");
	uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, magic), 0);
	chain_store_set_xor_key(s, KEY);
	uint8_t other[123];
	for (size_t i = 0; i < sizeof(other); i++)
		other[i] = (uint8_t)(i * 7);
	struct chain_pos a, b;
	tu_assert_err(chain_store_write_block(s, p->genesis, p->genesis_len, &a), 0);
	tu_assert_err(chain_store_write_block(s, other, sizeof(other), &b), 0);
	struct chain_block_undo u, d;
	chain_block_undo_init(&u);
	struct proto_hash prev;
	memset(prev.b, 0x33, 32);
	struct chain_pos up;
	tu_assert_err(chain_store_write_undo(s, 0, &u, &prev, &up), 0);
	tu_assert_err(chain_store_sync(s), 0);

	/* On disk: XORed by offset. */
	size_t flen;
	uint8_t *file = tu_read_file(path_in(dir, "blk00000.dat"), &flen);
	assert_int_equal(flen, 8 + p->genesis_len + 8 + sizeof(other));
	assert_int_not_equal(proto_le32(file), magic);
	chain_xor(file, flen, KEY, 0);
	assert_int_equal(proto_le32(file), magic);
	tu_assert_bytes_equal(file + 8, p->genesis_len, p->genesis, p->genesis_len);
	assert_int_equal(proto_le32(file + b.pos - 8), magic);
	tu_assert_bytes_equal(file + b.pos, sizeof(other), other, sizeof(other));
	free(file);
	file = tu_read_file(path_in(dir, "rev00000.dat"), &flen);
	assert_int_not_equal(proto_le32(file), magic);
	chain_xor(file, flen, KEY, 0);
	assert_int_equal(proto_le32(file), magic);
	free(file);

	/* Read back plain. */
	uint8_t *raw;
	size_t len;
	tu_assert_err(chain_store_read_block(s, &b, &raw, &len), 0);
	tu_assert_bytes_equal(raw, len, other, sizeof(other));
	xfree(raw);
	tu_assert_err(chain_store_read_undo(s, &up, &prev, &d), 0);
	assert_int_equal(d.n_tx, 0);
	chain_block_undo_release(&d);
	struct seen seen = {0};
	struct chain_pos from = {0, 0};
	tu_assert_err(chain_store_scan(s, &from, on_record, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.pos[1].pos, b.pos);
	assert_int_equal(seen.len[1], sizeof(other));
	chain_store_close(s);

	/* Without the key the same file is not readable: the magic is wrong. */
	tu_assert_err(chain_store_open(&s, dir, magic), 0);
	tu_assert_err(chain_store_read_block(s, &b, &raw, &len), CHAIN_ECORRUPT);
	chain_store_close(s);
	tu_rmtree(dir);
}

/*
 * With PEERD_CORE_XOR_BLOCKS=DIR (a default bitcoind's blocks directory,
 * from tests/integration/test_blocks_xor.py): the store opened there with
 * the key of its xor.dat reads every undo record Core wrote (checksum
 * against the parent named by one of the blk file's headers), and
 * re-encoding gives Core's bytes, deobfuscated here by hand.
 */
static void test_core_obfuscated_rev(void **state)
{
	(void)state;
	const char *dir = getenv("PEERD_CORE_XOR_BLOCKS");
	if (!dir || !*dir)
		skip();
	uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	uint8_t key[CHAIN_XOR_KEY_SIZE];
	tu_assert_err(chain_xor_key_read(dir, key), 0);
	assert_false(chain_xor_key_is_zero(key));
	size_t blen, rlen;
	uint8_t *blk = tu_read_file(path_in(dir, "blk00000.dat"), &blen);
	uint8_t *rev = tu_read_file(path_in(dir, "rev00000.dat"), &rlen);
	chain_xor(blk, blen, key, 0);
	chain_xor(rev, rlen, key, 0);
	/* Every block's parent hash, from the headers in the blk file. */
	size_t n_prev = 0, p = 0;
	struct proto_hash *prevs = xcalloc(blen / 88 + 1, sizeof(*prevs));
	assert_non_null(prevs);
	while (p + 8 <= blen && proto_le32(blk + p) == magic) {
		memcpy(prevs[n_prev++].b, blk + p + 12, 32);
		p += 8 + (size_t)proto_le32(blk + p + 4);
	}
	struct chain_store *s;
	tu_assert_err(chain_store_open(&s, dir, magic), 0);
	chain_store_set_xor_key(s, key);
	size_t n_rec = 0, coins = 0;
	for (p = 0; p + 8 <= rlen && proto_le32(rev + p) == magic;) {
		uint32_t n = proto_le32(rev + p + 4);
		assert_true(p + 8 + n + 32 <= rlen);
		struct chain_pos pos = {.file = 0, .pos = (uint32_t)(p + 8)};
		struct chain_block_undo u;
		size_t i = 0;
		for (; i < n_prev; i++) {
			if (chain_store_read_undo(s, &pos, &prevs[i], &u) == 0)
				break;
		}
		if (i == n_prev)
			fail_msg("rev record at %zu: no parent's checksum matches", p);
		struct proto_writer w;
		proto_writer_init(&w);
		chain_block_undo_encode(&u, &w);
		tu_assert_bytes_equal(w.buf, w.len, rev + p + 8, n);
		coins += u.total;
		proto_writer_release(&w);
		chain_block_undo_release(&u);
		n_rec++;
		p += 8 + (size_t)n + 32;
	}
	assert_true(n_rec > 100 && coins > 100);
	print_message("core obfuscated rev: %zu records, %zu coins re-encoded identically\n", n_rec,
	              coins);
	chain_store_close(s);
	xfree(prevs);
	free(blk);
	free(rev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xor_by_offset),
	    cmocka_unit_test(test_key_choice),
	    cmocka_unit_test(test_store_with_key),
	    cmocka_unit_test(test_core_obfuscated_rev),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
