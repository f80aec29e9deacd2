/*
 * tests/unit/test_proto_cursor.c: reader and writer cursors, CompactSize,
 * var strings, hex, hashing known answers, SipHash, error names and the
 * global free lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* Compare a digest with a hex known answer, showing both on failure. */
static void assert_digest(const uint8_t *got, size_t len, const char *want_hex)
{
	char hex[129];
	proto_hex_encode(got, len, hex);
	if (strcmp(hex, want_hex) != 0)
		fail_msg("digest %s != expected %s", hex, want_hex);
}

/* ---- reader ----------------------------------------------------------- */

static void test_reader_fixed_width(void **state)
{
	(void)state;
	static const uint8_t buf[] = {0x01, 0x34, 0x12, 0x12, 0x34, 0x78, 0x56,
	                              0x34, 0x12, 0xfe, 0xff, 0xff, 0xff, 0x08,
	                              0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
	struct proto_reader r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	int32_t i32;
	uint64_t u64;
	proto_reader_init(&r, buf, sizeof(buf));
	assert_int_equal(proto_read_u8(&r, &u8), 0);
	assert_int_equal(u8, 0x01);
	assert_int_equal(proto_read_u16le(&r, &u16), 0);
	assert_int_equal(u16, 0x1234);
	assert_int_equal(proto_read_u16be(&r, &u16), 0);
	assert_int_equal(u16, 0x1234);
	assert_int_equal(proto_read_u32le(&r, &u32), 0);
	assert_int_equal(u32, 0x12345678);
	assert_int_equal(proto_read_i32le(&r, &i32), 0);
	assert_int_equal(i32, -2);
	assert_int_equal(proto_reader_offset(&r), 13);
	assert_int_equal(proto_read_u64le(&r, &u64), 0);
	assert_true(u64 == 0x0102030405060708ULL);
	assert_int_equal(proto_reader_left(&r), 0);
	/* A failed read leaves the cursor where it was. */
	tu_assert_err(proto_read_u8(&r, &u8), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), sizeof(buf));

	proto_reader_init(&r, buf, 3);
	tu_assert_err(proto_read_u32le(&r, &u32), PROTO_ETRUNC);
	tu_assert_err(proto_read_u64le(&r, &u64), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), 0);
	tu_assert_err(proto_skip(&r, 4), PROTO_ETRUNC);
	assert_int_equal(proto_skip(&r, 1), 0);
	const uint8_t *span;
	tu_assert_err(proto_read_span(&r, 3, &span), PROTO_ETRUNC);
	assert_int_equal(proto_read_span(&r, 2, &span), 0);
	assert_ptr_equal(span, buf + 1);
	uint8_t two[2];
	proto_reader_init(&r, buf, 1);
	tu_assert_err(proto_read_bytes(&r, two, 2), PROTO_ETRUNC);
	struct proto_hash h;
	tu_assert_err(proto_read_hash(&r, &h), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), 0);
}

/* ---- CompactSize ------------------------------------------------------ */

static void test_compact_round_trip(void **state)
{
	(void)state;
	static const struct {
		uint64_t v;
		size_t size;
		const char *hex;
	} cases[] = {
	    {0, 1, "00"},
	    {0xfc, 1, "fc"},
	    {0xfd, 3, "fdfd00"},
	    {0xffff, 3, "fdffff"},
	    {0x10000, 5, "fe00000100"},
	    {0xffffffffULL, 5, "feffffffff"},
	    {0x100000000ULL, 9, "ff0000000001000000"},
	    {UINT64_MAX, 9, "ffffffffffffffffff"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[9];
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_write_compact(&w, cases[i].v);
		assert_int_equal(w.err, 0);
		assert_int_equal(w.len, cases[i].size);
		assert_int_equal(proto_compact_size(cases[i].v), cases[i].size);
		char hex[19];
		proto_hex_encode(buf, w.len, hex);
		assert_string_equal(hex, cases[i].hex);

		struct proto_reader r;
		uint64_t v = 12345;
		proto_reader_init(&r, buf, w.len);
		assert_int_equal(proto_read_compact(&r, UINT64_MAX, &v), 0);
		assert_true(v == cases[i].v);
		assert_int_equal(proto_reader_left(&r), 0);
		/* Every shorter prefix is a clean truncation. */
		for (size_t cut = 0; cut < w.len; cut++) {
			proto_reader_init(&r, buf, cut);
			tu_assert_err(proto_read_compact(&r, UINT64_MAX, &v), PROTO_ETRUNC);
			assert_int_equal(proto_reader_offset(&r), 0);
		}
	}
}

static void test_compact_noncanonical(void **state)
{
	(void)state;
	/* Each value fits a shorter form: Core's ReadCompactSize rejects it. */
	static const char *bad[] = {
	    "fd0000",
	    "fdfc00",
	    "fe00000000",
	    "feffff0000",
	    "ff0000000000000000",
	    "ffffffffff00000000",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		uint8_t *b = tu_unhex(bad[i], &len);
		struct proto_reader r;
		uint64_t v;
		uint32_t n;
		proto_reader_init(&r, b, len);
		tu_assert_err(proto_read_compact(&r, UINT64_MAX, &v), PROTO_ENONCANON);
		assert_int_equal(proto_reader_offset(&r), 0);
		tu_assert_err(proto_read_count(&r, UINT32_MAX, 0, &n), PROTO_ENONCANON);
		free(b);
	}
	/* The smallest canonical value of each width is accepted. */
	static const char *good[] = {"fdfd00", "fe00000100", "ff0000000001000000"};
	for (size_t i = 0; i < 3; i++) {
		size_t len;
		uint8_t *b = tu_unhex(good[i], &len);
		struct proto_reader r;
		uint64_t v;
		proto_reader_init(&r, b, len);
		assert_int_equal(proto_read_compact(&r, UINT64_MAX, &v), 0);
		free(b);
	}
}

static void test_compact_max(void **state)
{
	(void)state;
	uint8_t buf[] = {0xfe, 0x01, 0x00, 0x00, 0x02}; /* 0x02000001 = MAX_SIZE + 1 */
	struct proto_reader r;
	uint64_t v;
	proto_reader_init(&r, buf, sizeof(buf));
	tu_assert_err(proto_read_compact(&r, PROTO_MAX_SIZE, &v), PROTO_EOVERSIZE);
	assert_int_equal(proto_reader_offset(&r), 0);
	buf[1] = 0x00; /* exactly MAX_SIZE */
	assert_int_equal(proto_read_compact(&r, PROTO_MAX_SIZE, &v), 0);
	assert_true(v == PROTO_MAX_SIZE);
}

static void test_read_count(void **state)
{
	(void)state;
	uint8_t buf[64] = {0};
	struct proto_reader r;
	uint32_t n = 77;

	/* 2^32-1 elements: over the limit before anything else. */
	static const uint8_t huge[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0};
	proto_reader_init(&r, huge, sizeof(huge));
	tu_assert_err(proto_read_count(&r, UINT32_MAX, 1, &n), PROTO_ECOUNT);
	assert_int_equal(proto_reader_offset(&r), 0);
	assert_int_equal(n, 77);

	/* Over the caller's limit. */
	buf[0] = 11;
	proto_reader_init(&r, buf, sizeof(buf));
	tu_assert_err(proto_read_count(&r, 10, 1, &n), PROTO_ECOUNT);
	assert_int_equal(proto_reader_offset(&r), 0);
	assert_int_equal(proto_read_count(&r, 11, 1, &n), 0);
	assert_int_equal(n, 11);

	/* 63 bytes left can back 1 element of 36 bytes but not 2. */
	buf[0] = 2;
	proto_reader_init(&r, buf, sizeof(buf));
	tu_assert_err(proto_read_count(&r, 50000, 36, &n), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), 0);
	buf[0] = 1;
	assert_int_equal(proto_read_count(&r, 50000, 36, &n), 0);
	assert_int_equal(n, 1);

	/* min_elem 0: only the limit applies. */
	buf[0] = 200;
	proto_reader_init(&r, buf, 1);
	assert_int_equal(proto_read_count(&r, 1000, 0, &n), 0);
	assert_int_equal(n, 200);

	proto_reader_init(&r, buf, 0);
	tu_assert_err(proto_read_count(&r, 1000, 0, &n), PROTO_ETRUNC);
}

/* ---- var strings ------------------------------------------------------ */

static void test_varstr(void **state)
{
	(void)state;
	static const uint8_t s4[] = {0x04, 't', 'e', 's', 't'};
	struct proto_reader r;
	char out[16];
	size_t len = 99;
	proto_reader_init(&r, s4, sizeof(s4));
	assert_int_equal(proto_read_varstr(&r, 256, out, sizeof(out), &len), 0);
	assert_int_equal(len, 4);
	assert_string_equal(out, "test");
	assert_int_equal(proto_reader_left(&r), 0);

	/* Over max_len, and over the caller's buffer. */
	proto_reader_init(&r, s4, sizeof(s4));
	tu_assert_err(proto_read_varstr(&r, 3, out, sizeof(out), &len), PROTO_EOVERSIZE);
	assert_int_equal(proto_reader_offset(&r), 0);
	tu_assert_err(proto_read_varstr(&r, 256, out, 4, &len), PROTO_EOVERSIZE);
	assert_int_equal(proto_read_varstr(&r, 4, out, 5, &len), 0);

	/* Truncated body. */
	proto_reader_init(&r, s4, 3);
	tu_assert_err(proto_read_varstr(&r, 256, out, sizeof(out), &len), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), 0);

	/* Empty string. */
	static const uint8_t s0[] = {0x00};
	proto_reader_init(&r, s0, 1);
	assert_int_equal(proto_read_varstr(&r, 256, out, sizeof(out), &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(out, "");

	/* Non-canonical length. */
	static const uint8_t nc[] = {0xfd, 0x04, 0x00, 't', 'e', 's', 't'};
	proto_reader_init(&r, nc, sizeof(nc));
	tu_assert_err(proto_read_varstr(&r, 256, out, sizeof(out), &len), PROTO_ENONCANON);
}

/* ---- writer ----------------------------------------------------------- */

static void test_writer_fixed(void **state)
{
	(void)state;
	uint8_t buf[8];
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	proto_write_u16le(&w, 0x1234);
	proto_write_u16be(&w, 0x1234);
	proto_write_u32le(&w, 0xdeadbeef);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 8);
	tu_assert_bytes_equal(buf, 8, "\x34\x12\x12\x34\xef\xbe\xad\xde", 8);
	/* Full: sticky error, nothing written. */
	proto_write_u8(&w, 1);
	tu_assert_err(w.err, PROTO_ENOSPACE);
	assert_int_equal(w.len, 8);
	w.len = 0;
	proto_write_u8(&w, 2);
	assert_int_equal(w.len, 0);
	proto_writer_release(&w); /* must not free a fixed buffer */
}

static void test_writer_growable(void **state)
{
	(void)state;
	struct proto_writer w;
	uint64_t a0 = base_alloc_count();
	proto_writer_init(&w);
	assert_null(w.buf);
	assert_int_equal(base_alloc_count(), a0);
	for (uint32_t i = 0; i < 10000; i++)
		proto_write_u32le(&w, i);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 40000);
	assert_true(w.cap >= w.len);
	for (uint32_t i = 0; i < 10000; i++)
		assert_int_equal(proto_le32(w.buf + 4 * i), i);
	struct proto_hash h;
	memset(h.b, 0xab, 32);
	proto_write_hash(&w, &h);
	proto_write_varbytes(&w, "xyz", 3);
	assert_int_equal(w.len, 40000 + 32 + 4);
	proto_writer_release(&w);
	assert_null(w.buf);
	assert_int_equal(w.len, 0);

	/* OOM on growth: sticky PROTO_ENOMEM, buffer intact. */
	proto_writer_init(&w);
	proto_write_u8(&w, 7);
	base_alloc_fail_after(0);
	uint8_t big[4096] = {0};
	proto_write_bytes(&w, big, sizeof(big));
	base_alloc_fail_after(-1);
	tu_assert_err(w.err, PROTO_ENOMEM);
	assert_int_equal(w.len, 1);
	assert_int_equal(w.buf[0], 7);
	proto_writer_release(&w);
}

/* ---- hex -------------------------------------------------------------- */

static void test_hex(void **state)
{
	(void)state;
	uint8_t out[4];
	size_t len;
	char hex[9];
	assert_int_equal(proto_hex_decode("00fFa1B2", 8, out, sizeof(out), &len), 0);
	assert_int_equal(len, 4);
	proto_hex_encode(out, len, hex);
	assert_string_equal(hex, "00ffa1b2");
	tu_assert_err(proto_hex_decode("abc", 3, out, sizeof(out), &len), PROTO_EHEX);
	tu_assert_err(proto_hex_decode("zz", 2, out, sizeof(out), &len), PROTO_EHEX);
	tu_assert_err(proto_hex_decode("0g", 2, out, sizeof(out), &len), PROTO_EHEX);
	tu_assert_err(proto_hex_decode("0011223344", 10, out, sizeof(out), &len), PROTO_ENOSPACE);
	assert_int_equal(proto_hex_decode("", 0, out, sizeof(out), &len), 0);
	assert_int_equal(len, 0);

	/* Display order is reversed: the genesis hash as explorers show it. */
	static const char *genesis =
	    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f";
	struct proto_hash h;
	char back[65];
	assert_int_equal(proto_hash_from_hex(genesis, &h), 0);
	assert_int_equal(h.b[0], 0x6f);
	assert_int_equal(h.b[31], 0x00);
	proto_hash_to_hex(&h, back);
	assert_string_equal(back, genesis);
	tu_assert_err(proto_hash_from_hex("00", &h), PROTO_EHEX);
	tu_assert_err(proto_hash_from_hex(
	                  "x00000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f", &h),
	              PROTO_EHEX);
	assert_false(proto_hash_is_zero(&h));
	struct proto_hash z = {{0}};
	assert_true(proto_hash_is_zero(&z));
	assert_true(proto_hash_eq(&h, &h));
	assert_false(proto_hash_eq(&h, &z));
}

/* ---- hashing known answers ------------------------------------------- */

static void test_sha256_kat(void **state)
{
	(void)state;
	uint8_t d[32];
	/* FIPS 180-2 examples. */
	proto_sha256("abc", 3, d);
	assert_digest(d, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	proto_sha256("", 0, d);
	assert_digest(d, 32, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	static const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	proto_sha256(m448, strlen(m448), d);
	assert_digest(d, 32, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	/* One million 'a', streamed in uneven pieces. */
	char *a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	struct proto_sha256 c;
	proto_sha256_init(&c);
	size_t off = 0, step = 1;
	while (off < 1000000) {
		size_t n = step < 1000000 - off ? step : 1000000 - off;
		proto_sha256_update(&c, a + off, n);
		off += n;
		step = step * 3 + 1;
	}
	proto_sha256_final(&c, d);
	assert_digest(d, 32, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_sha256d_kat(void **state)
{
	(void)state;
	uint8_t d[32];
	/* The empty payload's checksum prefix 5df6e0e2 is in every verack. */
	proto_sha256d("", 0, d);
	assert_digest(d, 32, "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456");
	proto_sha256d("abc", 3, d);
	assert_digest(d, 32, "4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358");
	struct proto_sha256 c;
	proto_sha256_init(&c);
	proto_sha256_update(&c, "a", 1);
	proto_sha256_update(&c, "bc", 2);
	proto_sha256d_final(&c, d);
	assert_digest(d, 32, "4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358");

	/* hash_pair is SHA-256d over the 64-byte concatenation. */
	uint8_t a[32], b[32], cat[64], want[32];
	memset(a, 0x11, 32);
	memset(b, 0x22, 32);
	memcpy(cat, a, 32);
	memcpy(cat + 32, b, 32);
	proto_sha256d(cat, 64, want);
	proto_hash_pair(a, b, d);
	tu_assert_bytes_equal(d, 32, want, 32);

	/* Genesis block header hash (mainnet). */
	static const char *genesis_hdr =
	    "0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12"
	    "b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c";
	size_t len;
	uint8_t *hdr = tu_unhex(genesis_hdr, &len);
	assert_int_equal(len, 80);
	struct proto_hash h;
	char hex[65];
	proto_sha256d(hdr, len, h.b);
	proto_hash_to_hex(&h, hex);
	assert_string_equal(hex,
	                    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f");
	free(hdr);
}

static void test_ripemd_sha1_hash160_kat(void **state)
{
	(void)state;
	uint8_t d[20];
	/* RIPEMD-160 paper's examples. */
	proto_ripemd160("", 0, d);
	assert_digest(d, 20, "9c1185a5c5e9fc54612808977ee8f548b2258d31");
	proto_ripemd160("abc", 3, d);
	assert_digest(d, 20, "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc");
	proto_ripemd160("message digest", 14, d);
	assert_digest(d, 20, "5d0689ef49d2fae572b881b123a85ffa21595f36");
	/* FIPS 180 SHA-1. */
	proto_sha1("abc", 3, d);
	assert_digest(d, 20, "a9993e364706816aba3e25717850c26c9cd0d89d");
	proto_sha1("", 0, d);
	assert_digest(d, 20, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	/* HASH160 of the generator's compressed key: BIP173's P2WPKH example
	 * bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4. */
	size_t len;
	uint8_t *pk =
	    tu_unhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", &len);
	proto_hash160(pk, len, d);
	assert_digest(d, 20, "751e76e8199196d454941c45d1b3a323f1433bd6");
	free(pk);
}

static void test_tagged_hash_kat(void **state)
{
	(void)state;
	uint8_t d[32];
	size_t len;
	/* BIP341 wallet vectors, scriptPubKey[1]: leaf version 0xc0, a 34-byte
	 * script; leaf hash, then the tweak over internal key || merkle root. */
	uint8_t *leaf = tu_unhex(
	    "c02220d85a959b0290bf19bb89ed43c916be835475d013da4b362117393e25a48229b8ac", &len);
	proto_tagged_hash("TapLeaf", leaf, len, d);
	assert_digest(d, 32, "5b75adecf53548f3ec6ad7d78383bf84cc57b55a3127c72b9a2481752dd88b21");
	free(leaf);
	uint8_t *tw = tu_unhex("187791b6f712a8ea41c8ecdd0ee77fab3e85263b37e1ec18a3651926b3a6cf27"
	                       "5b75adecf53548f3ec6ad7d78383bf84cc57b55a3127c72b9a2481752dd88b21",
	                       &len);
	proto_tagged_hash("TapTweak", tw, len, d);
	assert_digest(d, 32, "cbd8679ba636c1110ea247542cfbd964131a6be84f873f7f3b62a777528ed001");
	free(tw);

	/* BIP340 challenge tag, checked against an independent implementation
	 * (Python hashlib): SHA256(t||t||m) with t = SHA256("BIP0340/challenge"). */
	proto_sha256("BIP0340/challenge", 17, d);
	assert_digest(d, 32, "7bb52d7a9fef58323eb1bf7a407db382d2f3f2d81bb1224f49fe518f6d48d37c");
	proto_tagged_hash("BIP0340/challenge", "", 0, d);
	assert_digest(d, 32, "c216d352f5818b7b4beacd4ae0a26fe888080823d2a598856661bcd54f1b3713");
	uint8_t zero[32] = {0};
	proto_tagged_hash("BIP0340/challenge", zero, 32, d);
	assert_digest(d, 32, "a50885aadef94ee57e5537e27ef82d4db7c756193539d3d8d0bb6ee5f3a7ad46");

	/* A precomputed tagged context gives the same answer. */
	struct proto_sha256 c;
	proto_sha256_init_tagged(&c, "BIP0340/challenge");
	proto_sha256_update(&c, zero, 32);
	proto_sha256_final(&c, d);
	assert_digest(d, 32, "a50885aadef94ee57e5537e27ef82d4db7c756193539d3d8d0bb6ee5f3a7ad46");
}

static void test_siphash_kat(void **state)
{
	(void)state;
	/* SipHash-2-4 reference vectors: key 00..0f, message 00..(n-1). */
	uint8_t key[16], msg[64];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	uint64_t h0 = proto_siphash(key, msg, 0);
	if (h0 != 0x726fdb47dd0e0e31ULL)
		fail_msg("siphash(empty) %016llx != 726fdb47dd0e0e31", (unsigned long long)h0);
	uint64_t h15 = proto_siphash(key, msg, 15);
	if (h15 != 0xa129ca6149be45e5ULL)
		fail_msg("siphash(15 bytes) %016llx != a129ca6149be45e5", (unsigned long long)h15);
	uint64_t h63 = proto_siphash(key, msg, 63);
	if (h63 != 0x958a324ceb064572ULL)
		fail_msg("siphash(63 bytes) %016llx != 958a324ceb064572", (unsigned long long)h63);
}

static void test_random(void **state)
{
	(void)state;
	uint8_t a[32] = {0}, b[32] = {0};
	proto_random(a, sizeof(a));
	proto_random(b, sizeof(b));
	assert_memory_not_equal(a, b, 32);
	assert_true(proto_random_u64() != proto_random_u64());
}

/* ---- error names ------------------------------------------------------ */

static void test_errors(void **state)
{
	(void)state;
	for (int e = 0; e >= PROTO_ERR__MIN; e--) {
		assert_non_null(proto_strerror(e));
		assert_non_null(proto_errname(e));
		assert_true(strlen(proto_errname(e)) > 0);
		for (int f = e + 1; f <= 0; f++)
			assert_string_not_equal(proto_errname(e), proto_errname(f));
	}
	assert_string_equal(proto_errname(PROTO_ETRUNC), "ETRUNC");
	assert_string_equal(proto_errname(PROTO_ENONCANON), "ENONCANON");
	assert_string_equal(proto_strerror(1), "unknown error");
	assert_string_equal(proto_strerror(PROTO_ERR__MIN - 1), "unknown error");
	assert_string_equal(proto_errname(-1000), "EUNKNOWNCODE");
}

/* ---- free lists ------------------------------------------------------- */

static void stats(enum proto_freelist_id id, struct proto_freelist_stats *s)
{
	proto_freelist_stats(id, s);
}

static void test_freelist_basics(void **state)
{
	(void)state;
	struct proto_freelist_stats s0, s;
	proto_freelist_drain();
	stats(PROTO_FREELIST_SCRIPT, &s0);
	assert_string_equal(s0.name, "script");
	assert_int_equal(s0.buf_size, PROTO_SCRIPT_BUF_SIZE);
	assert_int_equal(s0.capacity, PROTO_SCRIPT_FREELIST_CAP);
	assert_int_equal(s0.in_use, 0);
	assert_int_equal(s0.free, 0);
	stats(PROTO_FREELIST_BINARY, &s);
	assert_string_equal(s.name, "binary");
	assert_int_equal(s.buf_size, PROTO_BINARY_BUF_SIZE);
	assert_int_equal(s.capacity, PROTO_BINARY_FREELIST_CAP);

	/* Empty list: misses that allocate. */
	void *b[10];
	uint64_t a0 = base_alloc_count();
	for (int i = 0; i < 10; i++) {
		b[i] = proto_freelist_get(PROTO_FREELIST_SCRIPT);
		assert_non_null(b[i]);
		memset(b[i], i, PROTO_SCRIPT_BUF_SIZE); /* the whole buffer is ours */
	}
	assert_true(base_alloc_count() - a0 >= 10);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.misses - s0.misses, 10);
	assert_int_equal(s.hits - s0.hits, 0);
	assert_int_equal(s.in_use, 10);
	assert_true(s.high_water >= 10);
	size_t hw = s.high_water;

	proto_freelist_put_many(PROTO_FREELIST_SCRIPT, b, 10);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.in_use, 0);
	assert_int_equal(s.free, 10);

	/* Now hits, and no allocation. */
	a0 = base_alloc_count();
	assert_int_equal(proto_freelist_get_many(PROTO_FREELIST_SCRIPT, b, 10), 10);
	assert_int_equal(base_alloc_count(), a0);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.hits - s0.hits, 10);
	assert_int_equal(s.free, 0);
	assert_int_equal(s.high_water, hw);
	for (int i = 0; i < 10; i++)
		proto_freelist_put(PROTO_FREELIST_SCRIPT, b[i]);
	proto_freelist_put(PROTO_FREELIST_SCRIPT, NULL); /* ignored */
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.in_use, 0);
	assert_int_equal(s.free, 10);

	/* High water rises only past the previous peak. */
	void *more[40];
	assert_int_equal(proto_freelist_get_many(PROTO_FREELIST_SCRIPT, more, 40), 40);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.high_water, hw > 40 ? hw : 40);
	assert_int_equal(s.hits - s0.hits, 20);
	assert_int_equal(s.misses - s0.misses, 40);
	proto_freelist_put_many(PROTO_FREELIST_SCRIPT, more, 40);

	proto_freelist_note_bypass(PROTO_FREELIST_SCRIPT);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.bypass - s0.bypass, 1);
	assert_int_equal(s.dropped - s0.dropped, 0);
	proto_freelist_drain();
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.free, 0);
}

static void test_freelist_capacity_drop(void **state)
{
	(void)state;
	struct proto_freelist_stats s0, s;
	void *b[100];
	proto_freelist_drain();
	/* Grow the idle stack well past 4 slots first, then shrink the cap:
	 * the new cap must hold even though slots for more exist. */
	assert_int_equal(proto_freelist_get_many(PROTO_FREELIST_BINARY, b, 100), 100);
	proto_freelist_put_many(PROTO_FREELIST_BINARY, b, 100);
	stats(PROTO_FREELIST_BINARY, &s0);
	assert_int_equal(s0.free, 100);

	proto_freelist_configure(4, 0);
	stats(PROTO_FREELIST_BINARY, &s);
	assert_int_equal(s.capacity, 4);
	assert_int_equal(s.free, 4);
	assert_int_equal(s.dropped - s0.dropped, 96);
	/* script list untouched by a 0 */
	struct proto_freelist_stats ss;
	stats(PROTO_FREELIST_SCRIPT, &ss);
	assert_int_equal(ss.capacity, PROTO_SCRIPT_FREELIST_CAP);

	assert_int_equal(proto_freelist_get_many(PROTO_FREELIST_BINARY, b, 6), 6);
	stats(PROTO_FREELIST_BINARY, &s0);
	assert_int_equal(s0.free, 0);
	proto_freelist_put_many(PROTO_FREELIST_BINARY, b, 6);
	stats(PROTO_FREELIST_BINARY, &s);
	if (s.free != 4)
		fail_msg("idle buffers %zu over capacity %zu", s.free, s.capacity);
	assert_int_equal(s.dropped - s0.dropped, 2);
	assert_int_equal(s.in_use, 0);

	proto_freelist_configure(PROTO_BINARY_FREELIST_CAP, 0);
	stats(PROTO_FREELIST_BINARY, &s);
	assert_int_equal(s.capacity, PROTO_BINARY_FREELIST_CAP);
	proto_freelist_drain();
}

static void test_freelist_oom(void **state)
{
	(void)state;
	struct proto_freelist_stats s;
	void *b[3] = {NULL, NULL, NULL};
	proto_freelist_drain();
	base_alloc_fail_after(1);
	size_t got = proto_freelist_get_many(PROTO_FREELIST_SCRIPT, b, 3);
	base_alloc_fail_after(-1);
	assert_int_equal(got, 1);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.in_use, 1);
	proto_freelist_put_many(PROTO_FREELIST_SCRIPT, b, got);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.in_use, 0);
	assert_int_equal(s.free, 1);
	/* An idle buffer is served without touching the allocator. */
	base_alloc_fail_after(0);
	void *hit = proto_freelist_get(PROTO_FREELIST_SCRIPT);
	int injected = base_alloc_injected();
	base_alloc_fail_after(-1);
	assert_non_null(hit);
	assert_int_equal(injected, 0);
	/* With the list empty, OOM is a clean NULL. */
	base_alloc_fail_after(0);
	void *miss = proto_freelist_get(PROTO_FREELIST_SCRIPT);
	base_alloc_fail_after(-1);
	assert_null(miss);
	stats(PROTO_FREELIST_SCRIPT, &s);
	assert_int_equal(s.in_use, 1);
	proto_freelist_put(PROTO_FREELIST_SCRIPT, hit);
	proto_freelist_drain();
}

#define SMOKE_THREADS 4
#define SMOKE_ROUNDS  20000

static void *smoke_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void *held[8];
	for (int round = 0; round < SMOKE_ROUNDS; round++) {
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 16) % 8;
		enum proto_freelist_id id =
		    (seed >> 8) & 1 ? PROTO_FREELIST_SCRIPT : PROTO_FREELIST_BINARY;
		size_t got = proto_freelist_get_many(id, held, n);
		size_t size =
		    id == PROTO_FREELIST_SCRIPT ? PROTO_SCRIPT_BUF_SIZE : PROTO_BINARY_BUF_SIZE;
		/* Write all of each buffer: two owners would show up under ASan/TSan
		 * or as a torn pattern below. */
		for (size_t i = 0; i < got; i++)
			memset(held[i], (int)(seed & 0xff), size);
		for (size_t i = 0; i < got; i++) {
			const uint8_t *p = held[i];
			if (p[0] != (uint8_t)(seed & 0xff) || p[size - 1] != (uint8_t)(seed & 0xff))
				return (void *)1;
		}
		if (round & 1) {
			proto_freelist_put_many(id, held, got);
		} else {
			for (size_t i = 0; i < got; i++)
				proto_freelist_put(id, held[i]);
		}
	}
	return NULL;
}

static void test_freelist_threads(void **state)
{
	(void)state;
	struct proto_freelist_stats b0, s0, b1, s1;
	proto_freelist_drain();
	/* A small cap so drops happen under contention too. */
	proto_freelist_configure(16, 16);
	stats(PROTO_FREELIST_BINARY, &b0);
	stats(PROTO_FREELIST_SCRIPT, &s0);
	pthread_t t[SMOKE_THREADS];
	for (uintptr_t i = 0; i < SMOKE_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, smoke_worker, (void *)(i + 1)), 0);
	for (int i = 0; i < SMOKE_THREADS; i++) {
		void *ret;
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	stats(PROTO_FREELIST_BINARY, &b1);
	stats(PROTO_FREELIST_SCRIPT, &s1);
	assert_int_equal(b1.in_use, 0);
	assert_int_equal(s1.in_use, 0);
	assert_true(b1.free <= 16);
	assert_true(s1.free <= 16);
	/* Every get was either a hit or a miss; every buffer that came back
	 * was kept or dropped. */
	uint64_t gets = (b1.hits - b0.hits) + (b1.misses - b0.misses) + (s1.hits - s0.hits) +
	                (s1.misses - s0.misses);
	assert_true(gets >= (uint64_t)SMOKE_THREADS * SMOKE_ROUNDS);
	uint64_t kept_or_dropped = (b1.free + s1.free) - (b0.free + s0.free) +
	                           (b1.dropped - b0.dropped) + (s1.dropped - s0.dropped) +
	                           (b1.hits - b0.hits) + (s1.hits - s0.hits);
	assert_true(kept_or_dropped == gets);
	proto_freelist_configure(PROTO_BINARY_FREELIST_CAP, PROTO_SCRIPT_FREELIST_CAP);
	proto_freelist_drain();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader_fixed_width),
	    cmocka_unit_test(test_compact_round_trip),
	    cmocka_unit_test(test_compact_noncanonical),
	    cmocka_unit_test(test_compact_max),
	    cmocka_unit_test(test_read_count),
	    cmocka_unit_test(test_varstr),
	    cmocka_unit_test(test_writer_fixed),
	    cmocka_unit_test(test_writer_growable),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_sha256_kat),
	    cmocka_unit_test(test_sha256d_kat),
	    cmocka_unit_test(test_ripemd_sha1_hash160_kat),
	    cmocka_unit_test(test_tagged_hash_kat),
	    cmocka_unit_test(test_siphash_kat),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_freelist_basics),
	    cmocka_unit_test(test_freelist_capacity_drop),
	    cmocka_unit_test(test_freelist_oom),
	    cmocka_unit_test(test_freelist_threads),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
