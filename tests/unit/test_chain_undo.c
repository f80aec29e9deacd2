/*
 * tests/unit/test_chain_undo.c: Core's undo serialization (CTxUndo,
 * CBlockUndo): amount and script compression, varints, the shapes of a
 * block's undo data, corrupt and truncated input, out of memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <secp256k1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_undo.h"

/* The generator point G, uncompressed (even y) */
static const char G_HEX[] = "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
                            "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_amount_compression),
	    cmocka_unit_test(test_varint),
	    cmocka_unit_test(test_script_compression),
	    cmocka_unit_test(test_overlong_script),
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_decode_corrupt),
	    cmocka_unit_test(test_decode_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
