/* tests/unit/test_proto_tx.c: the transaction codec, ids and witness iterator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* btcd's DeserializeTxSmall input: one coinbase-style input, one P2PK output. */
static const char small_tx_hex[] =
    "01000000"
    "01"
    "0000000000000000000000000000000000000000000000000000000000000000ffffffff"
    "07"
    "04ffff001d0104"
    "ffffffff"
    "01"
    "00f2052a01000000"
    "43"
    "410496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da"
    "7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858eeac"
    "00000000";

/* BIP143 "Native P2WPKH" example, signed: input 0 spends P2PK (scriptSig),
 * input 1 spends P2WPKH (witness: signature, pubkey). */
#define BIP143_VERSION "01000000"
#define BIP143_INPUTS                                                                              \
	"02"                                                                                       \
	"fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f00000000"                 \
	"494830450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b" \
	"194ba3f9281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed01"                             \
	"eeffffff"                                                                                 \
	"ef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a01000000"                 \
	"00"                                                                                       \
	"ffffffff"
#define BIP143_OUTPUTS                                                                             \
	"02"                                                                                       \
	"202cb20600000000"                                                                         \
	"1976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac"                                     \
	"9093510d00000000"                                                                         \
	"1976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa815988ac"
#define BIP143_SIG                                                                                 \
	"304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c4518" \
	"331561406f90300e8f3358f51928d43c212a8caed02de67eebee01"
#define BIP143_PUBKEY "025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee6357"
#define BIP143_WITNESS                                                                             \
	"00"                                                                                       \
	"02"                                                                                       \
	"47" BIP143_SIG "21" BIP143_PUBKEY
#define BIP143_LOCKTIME "11000000"

static const char bip143_signed_hex[] =
    BIP143_VERSION "0001" BIP143_INPUTS BIP143_OUTPUTS BIP143_WITNESS BIP143_LOCKTIME;
/* The same transaction without marker, flag and witness: the txid preimage. */
static const char bip143_stripped_hex[] =
    BIP143_VERSION BIP143_INPUTS BIP143_OUTPUTS BIP143_LOCKTIME;
/* BIP143's hashOutputs for this transaction: dSHA256 of the serialized outputs. */
static const char bip143_hash_outputs[] =
    "863ef3e1a92afbfdb97f31ad0fc7683ee943e9abcf2501590ff8f6551f47e5e5";

/* BIP143 "P2SH-P2WPKH" example, signed (one input, scriptSig and witness). */
static const char bip143_p2sh_hex[] =
    "01000000000101db6b1b20aa0fd7b23880be2ecbd4a98130974cf4748fb66092ac4d3ceb1a5477010000001716"
    "001479091972186c449eb1ded22b78e40d009bdf0089feffffff02b8b4eb0b000000001976a914a457b684d7f0"
    "d539a46a45bbc043f35b59d0d96388ac0008af2f000000001976a914fd270b1ee6abcaea97fea7ad0402e8bd8a"
    "d6d77c88ac02473044022047ac8e878352d3ebbde1c94ce3a10d057c24175747116f8288e5d794d12d482f0220"
    "217f36a485cae903c713331d877c1f64677e3622ad4010726870540656fe9dcb012103ad1d8e89212f0b92c74d"
    "23bb710c00662ad1470198ac48c43f7d6f93a2a2687392040000";

static const char megatx_txid[] =
    "bb41a757f405890fb0f5856228e23b715702d714d59bf2b1feb70d8b2b4e3e08";

/* Encode with the growable writer; caller frees w.buf via proto_writer_release. */
static void encode(const struct proto_tx *tx, bool stripped, struct proto_writer *w)
{
	proto_writer_init(w);
	if (stripped)
		proto_tx_encode_stripped(tx, w);
	else
		proto_tx_encode(tx, w);
	assert_int_equal(w->err, 0);
}

/* Decode, check the size fields, re-encode byte-identically, and check the
 * txid against sha256d of the independently computed stripped form. */
static void roundtrip(const uint8_t *raw, size_t len, struct proto_tx *tx)
{
	size_t off = 0;
	int err = proto_tx_decode_buf(raw, len, tx, &off);
	if (err)
		fail_msg("decode failed: %s at offset %zu of %zu", proto_errname(err), off, len);
	assert_int_equal(tx->size, len);
	struct proto_writer w;
	encode(tx, false, &w);
	tu_assert_bytes_equal(w.buf, w.len, raw, len);
	proto_writer_release(&w);
	encode(tx, true, &w);
	assert_int_equal(w.len, tx->stripped_size);
	struct proto_hash h;
	proto_sha256d(w.buf, w.len, h.b);
	proto_writer_release(&w);
	proto_tx_compute_ids(tx);
	assert_memory_equal(h.b, tx->txid.b, 32);
	assert_int_equal(proto_tx_serialized_size(tx, true), len);
	assert_int_equal(proto_tx_serialized_size(tx, false), tx->stripped_size);
}

static void test_small_tx(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_unhex(small_tx_hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	roundtrip(raw, len, &tx);
	assert_int_equal(tx.version, 1);
	assert_int_equal(tx.n_in, 1);
	assert_int_equal(tx.n_out, 1);
	assert_false(tx.has_witness);
	assert_true(proto_tx_is_coinbase(&tx));
	assert_int_equal(tx.vin[0].prevout.n, 0xffffffffu);
	assert_int_equal(tx.vin[0].script_len, 7);
	tu_assert_bytes_equal(proto_txin_script(&tx, &tx.vin[0]), 7, raw + 42, 7);
	assert_int_equal(tx.vin[0].sequence, 0xffffffffu);
	assert_int_equal(tx.vout[0].value, 5000000000LL);
	assert_int_equal(tx.vout[0].script_len, 0x43);
	assert_int_equal(proto_txout_script(&tx, &tx.vout[0])[0], 0x41);
	assert_int_equal(proto_txout_script(&tx, &tx.vout[0])[0x42], 0xac);
	assert_int_equal(tx.locktime, 0);
	assert_int_equal(tx.blob_len, 7 + 0x43);
	assert_int_equal(tx.stripped_size, len);
	assert_int_equal(proto_tx_weight(&tx), 4 * len);
	assert_memory_equal(proto_tx_wtxid(&tx)->b, proto_tx_txid(&tx)->b, 32);
	/* It is mainnet block 1's coinbase: its txid is that block's merkle root. */
	tu_assert_hash_hex(proto_tx_txid(&tx),
	                   "0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098");
	proto_tx_release(&tx);
	free(raw);
}

static void test_megatx(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/megatx.bin"), &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	roundtrip(raw, len, &tx);
	assert_int_equal(tx.n_in, 5569);
	tu_assert_hash_hex(proto_tx_txid(&tx), megatx_txid);
	/* Decoding again into the same object allocates nothing. */
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	assert_int_equal(base_alloc_count() - a0, 0);
	assert_false(tx.ids_valid);
	tu_assert_hash_hex(proto_tx_txid(&tx), megatx_txid);
	/* A small tx into the big object: no allocation either. */
	size_t slen;
	uint8_t *small = tu_unhex(small_tx_hex, &slen);
	a0 = base_alloc_count();
	assert_int_equal(proto_tx_decode_buf(small, slen, &tx, NULL), 0);
	assert_int_equal(base_alloc_count() - a0, 0);
	assert_int_equal(tx.n_in, 1);
	proto_tx_release(&tx);
	free(small);
	free(raw);
}

static void test_bip143_witness(void **state)
{
	(void)state;
	size_t len, slen, olen;
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	uint8_t *stripped = tu_unhex(bip143_stripped_hex, &slen);
	struct proto_tx tx;
	proto_tx_init(&tx);
	roundtrip(raw, len, &tx);
	assert_true(tx.has_witness);
	assert_int_equal(tx.n_in, 2);
	assert_int_equal(tx.n_out, 2);
	assert_int_equal(tx.locktime, 0x11);
	/* Sizes from the BIP's field breakdown: marker and flag (2), and the
	 * witness section 00 | 02 47<71 bytes> 21<33 bytes> (108). */
	assert_int_equal(tx.size, slen + 2 + 108);
	assert_int_equal(tx.stripped_size, slen);
	assert_int_equal(proto_tx_weight(&tx), 3 * slen + len);
	assert_int_equal(proto_tx_vsize(&tx), (3 * slen + len + 3) / 4);
	/* txid over the stripped form spliced from the BIP's hex by hand;
	 * wtxid over the whole serialization. */
	struct proto_hash want_txid, want_wtxid;
	proto_sha256d(stripped, slen, want_txid.b);
	proto_sha256d(raw, len, want_wtxid.b);
	assert_memory_equal(proto_tx_txid(&tx)->b, want_txid.b, 32);
	assert_memory_equal(proto_tx_wtxid(&tx)->b, want_wtxid.b, 32);
	assert_memory_not_equal(tx.txid.b, tx.wtxid.b, 32);
	/* BIP143's hashOutputs checks the outputs landed intact. */
	struct proto_writer w;
	proto_writer_init(&w);
	for (uint32_t i = 0; i < tx.n_out; i++)
		proto_txout_encode(&tx.vout[i], proto_txout_script(&tx, &tx.vout[i]),
		                   tx.vout[i].script_len, &w);
	assert_int_equal(w.err, 0);
	uint8_t ho[32];
	proto_sha256d(w.buf, w.len, ho);
	proto_writer_release(&w);
	uint8_t *want_ho = tu_unhex(bip143_hash_outputs, &olen);
	assert_memory_equal(ho, want_ho, 32);
	free(want_ho);
	/* Input 0 has no witness, input 1 has [signature, pubkey]. */
	assert_int_equal(tx.vin[0].wit_count, 0);
	assert_int_equal(tx.vin[0].wit_len, 0);
	assert_int_equal(tx.vin[1].wit_count, 2);
	assert_int_equal(tx.vin[1].script_len, 0);
	struct proto_witness_iter it;
	struct proto_span item;
	proto_witness_iter_init(&it, &tx, &tx.vin[0]);
	assert_false(proto_witness_iter_next(&it, &item));
	proto_witness_iter_init(&it, &tx, &tx.vin[1]);
	size_t n;
	uint8_t *sig = tu_unhex(BIP143_SIG, &n);
	assert_true(proto_witness_iter_next(&it, &item));
	tu_assert_bytes_equal(item.data, item.len, sig, n);
	free(sig);
	uint8_t *pub = tu_unhex(BIP143_PUBKEY, &n);
	assert_true(proto_witness_iter_next(&it, &item));
	tu_assert_bytes_equal(item.data, item.len, pub, n);
	free(pub);
	assert_false(proto_witness_iter_next(&it, &item));
	proto_tx_release(&tx);
	free(stripped);
	free(raw);
}

static void test_bip143_p2sh(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_unhex(bip143_p2sh_hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	roundtrip(raw, len, &tx);
	assert_int_equal(tx.n_in, 1);
	assert_int_equal(tx.vin[0].script_len, 0x17);
	assert_int_equal(tx.vin[0].wit_count, 2);
	assert_int_equal(tx.locktime, 0x492);
	/* witness: 02 47<71> 21<33> = 107 bytes, plus marker and flag. */
	assert_int_equal(tx.size - tx.stripped_size, 2 + 107);
	proto_tx_release(&tx);
	free(raw);
}

/* Every prefix of a valid tx fails cleanly, and the tx is left empty. */
static void check_truncations(const char *hex)
{
	size_t len;
	uint8_t *raw = tu_unhex(hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	for (size_t n = 0; n < len; n++) {
		/* A private copy so ASan sees any read past the prefix. */
		uint8_t *p = malloc(n ? n : 1);
		memcpy(p, raw, n);
		size_t off = SIZE_MAX;
		int err = proto_tx_decode_buf(p, n, &tx, &off);
		if (err >= 0)
			fail_msg("prefix of %zu/%zu bytes decoded", n, len);
		if (err != PROTO_ETRUNC)
			fail_msg("prefix %zu: %s, expected ETRUNC", n, proto_errname(err));
		assert_true(off <= n);
		assert_int_equal(tx.n_in, 0);
		assert_int_equal(tx.n_out, 0);
		free(p);
	}
	proto_tx_release(&tx);
	free(raw);
}

static void test_truncations(void **state)
{
	(void)state;
	check_truncations(small_tx_hex);
	check_truncations(bip143_signed_hex);
	check_truncations(bip143_p2sh_hex);
}

/* Huge counts fail before anything is allocated. */
static void test_huge_counts(void **state)
{
	(void)state;
	struct proto_tx tx;
	proto_tx_init(&tx);
	static const char *cases[] = {
	    /* inputs: 2^32-1 */
	    "01000000feffffffff"
	    "00000000000000000000",
	    /* inputs: 2^64-1 */
	    "01000000ffffffffffffffffff"
	    "0000000000",
	    /* witness form, inputs 2^32-1 */
	    "010000000001feffffffff"
	    "0000000000000000",
	    /* one input, then 2^32-1 outputs */
	    "0100000001"
	    "0000000000000000000000000000000000000000000000000000000000000000ffffffff00ffffffff"
	    "feffffffff"
	    "0000000000000000",
	    /* inputs: just over what the bytes can hold (2 x 41 > 60) */
	    "0100000002"
	    "0000000000000000000000000000000000000000000000000000000000000000ffffffff00ffffffff"
	    "0000000000000000000000",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		uint8_t *raw = tu_unhex(cases[i], &len);
		uint64_t a0 = base_alloc_count();
		int err = proto_tx_decode_buf(raw, len, &tx, NULL);
		uint64_t used = base_alloc_count() - a0;
		if (err != PROTO_ECOUNT && err != PROTO_ETRUNC)
			fail_msg("case %zu: %s, expected ECOUNT or ETRUNC", i, proto_errname(err));
		if (i < 3 && used != 0)
			fail_msg("case %zu: %llu allocations before failing", i,
			         (unsigned long long)used);
		free(raw);
	}
	/* Script length 2^32-1: over PROTO_MAX_SIZE. */
	size_t len;
	uint8_t *raw =
	    tu_unhex("0100000001"
	             "0000000000000000000000000000000000000000000000000000000000000000ffffffff"
	             "feffffffff"
	             "ffffffff0000000000",
	             &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), PROTO_EOVERSIZE);
	free(raw);
	/* Witness item count 2^32-1. */
	raw = tu_unhex(
	    "010000000001"
	    "01"
	    "0000000000000000000000000000000000000000000000000000000000000000ffffffff00ffffffff"
	    "01"
	    "0000000000000000"
	    "00"
	    "feffffffff"
	    "00000000",
	    &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), PROTO_ECOUNT);
	free(raw);
	proto_tx_release(&tx);
}

static void test_noncanonical(void **state)
{
	(void)state;
	struct proto_tx tx;
	proto_tx_init(&tx);
	size_t len;
	/* The small tx with its 7-byte scriptSig length written as fd0700. */
	char *hex = strdup(small_tx_hex);
	char *p = strstr(hex, "0704ffff001d0104");
	assert_non_null(p);
	size_t head = (size_t)(p - hex);
	char *bad = malloc(strlen(hex) + 5);
	memcpy(bad, hex, head);
	strcpy(bad + head, "fd0700");
	strcat(bad, p + 2);
	uint8_t *raw = tu_unhex(bad, &len);
	size_t off = 0;
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_ENONCANON);
	assert_int_equal(off, 41); /* the length field */
	free(raw);
	/* Input count 1 as fd0100. */
	raw = tu_unhex("01000000fd0100", &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_ENONCANON);
	assert_int_equal(off, 4);
	free(raw);
	free(bad);
	free(hex);
	proto_tx_release(&tx);
}

/* Splice hex: replace the `n` hex chars at `at` with `with`. */
static char *splice(const char *hex, size_t at, size_t n, const char *with)
{
	size_t len = strlen(hex), wl = strlen(with);
	char *s = malloc(len - n + wl + 1);
	memcpy(s, hex, at);
	memcpy(s + at, with, wl);
	strcpy(s + at + wl, hex + at + n);
	return s;
}

static void test_witness_flags(void **state)
{
	(void)state;
	struct proto_tx tx;
	proto_tx_init(&tx);
	size_t len, off;
	/* Flag 0x02: Core's "Unknown transaction optional data". */
	char *hex = splice(bip143_signed_hex, 8, 4, "0002");
	uint8_t *raw = tu_unhex(hex, &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_EVALUE);
	assert_int_equal(off, 5);
	assert_int_equal(tx.n_in, 0);
	free(raw);
	free(hex);
	/* Flag 0x03 likewise. */
	hex = splice(bip143_signed_hex, 8, 4, "0003");
	raw = tu_unhex(hex, &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_EVALUE);
	free(raw);
	free(hex);
	/* Witness flag but every stack empty: "Superfluous witness record". */
	hex = splice(bip143_p2sh_hex, 0, 0, "");
	char *p = strstr(hex, "02473044022047ac");
	assert_non_null(p);
	char *end = hex + strlen(hex) - 8; /* locktime */
	char *bad = splice(hex, (size_t)(p - hex), (size_t)(end - p), "00");
	raw = tu_unhex(bad, &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_EVALUE);
	assert_int_equal(tx.n_in, 0);
	free(raw);
	free(bad);
	free(hex);
	/* Marker with flag 0: Core reads a tx with no inputs and no outputs. */
	raw = tu_unhex("02000000"
	               "0000"
	               "00000000",
	               &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), 0);
	assert_int_equal(tx.n_in, 0);
	assert_int_equal(tx.n_out, 0);
	assert_int_equal(tx.version, 2);
	assert_false(tx.has_witness);
	struct proto_writer w;
	encode(&tx, false, &w);
	tu_assert_bytes_equal(w.buf, w.len, raw, len);
	proto_writer_release(&w);
	free(raw);
	/* Witness flag with zero inputs: nothing to carry a witness. */
	raw = tu_unhex("02000000"
	               "0001"
	               "00"
	               "01"
	               "0000000000000000"
	               "00"
	               "00000000",
	               &len);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_EVALUE);
	free(raw);
	proto_tx_release(&tx);
}

static void test_trailing(void **state)
{
	(void)state;
	size_t len;
	char *hex = malloc(strlen(small_tx_hex) + 3);
	strcpy(hex, small_tx_hex);
	strcat(hex, "00");
	uint8_t *raw = tu_unhex(hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	size_t off = 0;
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), PROTO_ETRAILING);
	assert_int_equal(off, len - 1);
	assert_int_equal(tx.n_in, 0);
	/* The stream decoder takes just the tx. */
	struct proto_reader r;
	proto_reader_init(&r, raw, len);
	assert_int_equal(proto_tx_decode(&r, &tx), 0);
	assert_int_equal(proto_reader_left(&r), 1);
	proto_tx_release(&tx);
	free(raw);
	free(hex);
}

/* After an error the tx is empty but keeps its storage for reuse. */
static void test_error_keeps_storage(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	struct proto_txin *vin = tx.vin;
	assert_int_equal(proto_tx_decode_buf(raw, len - 1, &tx, NULL), PROTO_ETRUNC);
	assert_int_equal(tx.n_in, 0);
	assert_int_equal(tx.n_out, 0);
	assert_ptr_equal(tx.vin, vin);
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	assert_int_equal(base_alloc_count() - a0, 0);
	proto_tx_release(&tx);
	free(raw);
}

/* Fresh object, warm free list: at most vin, vout and blob. */
static void test_alloc_counts(void **state)
{
	(void)state;
	size_t len, mlen;
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	uint8_t *mega = tu_read_file(tu_vector("blocks/megatx.bin"), &mlen);
	struct proto_tx tx;
	for (int round = 0; round < 3; round++) {
		proto_tx_init(&tx);
		uint64_t a0 = base_alloc_count();
		assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
		uint64_t used = base_alloc_count() - a0;
		if (round > 0 && used > 3)
			fail_msg("small witness tx: %llu allocations", (unsigned long long)used);
		proto_tx_release(&tx);
		proto_tx_init(&tx);
		a0 = base_alloc_count();
		assert_int_equal(proto_tx_decode_buf(mega, mlen, &tx, NULL), 0);
		used = base_alloc_count() - a0;
		if (round > 0 && used > 3)
			fail_msg("megatx: %llu allocations", (unsigned long long)used);
		proto_tx_release(&tx);
	}
	free(mega);
	free(raw);
}

/* Injected out-of-memory at every allocation point fails cleanly. */
static void oom_loop(const uint8_t *raw, size_t len, bool drain)
{
	struct proto_tx tx;
	for (long k = 0;; k++) {
		if (drain)
			proto_freelist_drain(); /* cold list: its misses allocate too */
		proto_tx_init(&tx);
		base_alloc_fail_after(k);
		int err = proto_tx_decode_buf(raw, len, &tx, NULL);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (err) {
			if (err != PROTO_ENOMEM)
				fail_msg("k=%ld: %s, expected ENOMEM", k, proto_errname(err));
			assert_true(injected);
			assert_int_equal(tx.n_in, 0);
		}
		proto_tx_release(&tx);
		if (!err && !injected)
			break;
		if (k > 10000)
			fail_msg("decode never succeeded");
	}
}

static void test_oom(void **state)
{
	(void)state;
	size_t len, mlen;
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	oom_loop(raw, len, true);
	oom_loop(raw, len, false);
	free(raw);
	raw = tu_unhex(small_tx_hex, &len);
	oom_loop(raw, len, true);
	free(raw);
	uint8_t *mega = tu_read_file(tu_vector("blocks/megatx.bin"), &mlen);
	oom_loop(mega, mlen, false);
	/* Cold: every staging-buffer miss is an allocation point too; probe a
	 * spread of them rather than all ~2,000. */
	for (long k = 0; k < 2200; k += 97) {
		struct proto_tx tx;
		proto_freelist_drain();
		proto_tx_init(&tx);
		base_alloc_fail_after(k);
		int err = proto_tx_decode_buf(mega, mlen, &tx, NULL);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		assert_true(err == 0 || err == PROTO_ENOMEM);
		assert_true(err == 0 || injected);
		proto_tx_release(&tx);
	}
	free(mega);
}

/*
 * A decode that fails on its blob allocation must still leave the state
 * tx.c promises for any decoded tx: a non-NULL blob (blob + offset is
 * always defined), no entries, nothing cached. Each round first decodes a
 * small tx so the second, larger one must grow vin, vout and blob; the
 * injected failure walks through those three allocations in turn.
 */
static void test_oom_leaves_valid_tx(void **state)
{
	(void)state;
	size_t slen, len;
	uint8_t *small = tu_unhex(small_tx_hex, &slen);
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	/* warm the script free list so only the tx's own arrays allocate */
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	proto_tx_release(&tx);
	long k;
	int err = -1;
	for (k = 0; k < 100; k++) {
		proto_tx_init(&tx);
		assert_int_equal(proto_tx_decode_buf(small, slen, &tx, NULL), 0);
		proto_tx_compute_ids(&tx);
		base_alloc_fail_after(k);
		err = proto_tx_decode_buf(raw, len, &tx, NULL);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!err && !injected)
			break;
		if (err != PROTO_ENOMEM)
			fail_msg("k=%ld: got %s, expected ENOMEM", k, proto_errname(err));
		if (!tx.blob)
			fail_msg("k=%ld: blob is NULL after a failed decode (blob_cap %u)", k,
			         tx.blob_cap);
		assert_int_equal(tx.blob_len, 0);
		assert_int_equal(tx.n_in, 0);
		assert_int_equal(tx.n_out, 0);
		assert_false(tx.has_witness);
		assert_false(tx.txid_valid);
		assert_false(tx.ids_valid);
		assert_int_equal(tx.size, 0);
		/* the empty tx is still usable: it encodes and hashes */
		struct proto_writer w;
		encode(&tx, false, &w);
		assert_int_equal(w.len, proto_tx_serialized_size(&tx, true));
		proto_writer_release(&w);
		(void)proto_tx_txid(&tx);
		/* and the same object takes the next decode */
		roundtrip(raw, len, &tx);
		assert_true(tx.has_witness);
		assert_int_equal(tx.blob_len, tx.blob_cap);
		proto_tx_release(&tx);
	}
	/* vin, vout and blob each failed once before a clean run */
	if (k < 3)
		fail_msg("only %ld allocation points seen, expected at least 3", k);
	assert_int_equal(err, 0);
	roundtrip(raw, len, &tx);
	proto_tx_release(&tx);
	free(raw);
	free(small);
}

/* A witness stack spelled out by hand inside a tx's blob (one input). */
static void hand_witness(struct proto_tx *tx, struct proto_txin *in, const uint8_t *blob,
                         uint32_t len, uint32_t count)
{
	proto_tx_init(tx);
	memset(in, 0, sizeof(*in));
	in->wit_len = len;
	in->wit_count = count;
	tx->vin = in;
	tx->n_in = 1;
	tx->blob = blob;
	tx->blob_len = len;
	tx->borrowed = true; /* nothing here is the tx's to free */
}

/*
 * The iterator reads item lengths with the decoders' bound (PROTO_MAX_SIZE):
 * an item decode would have refused is never returned, even from a
 * hand-built stack whose bytes are all there. Also: it stops, and stays
 * stopped, at a length that runs past the span or is not canonical.
 */
static void test_witness_iter_bounds(void **state)
{
	(void)state;
	const size_t big = (size_t)PROTO_MAX_SIZE + 1;
	/* "ab", then a 5-byte CompactSize length and that many bytes */
	size_t total = 3 + 5 + big;
	uint8_t *blob = calloc(1, total);
	assert_non_null(blob);
	blob[0] = 2;
	blob[1] = 'a';
	blob[2] = 'b';
	struct proto_tx tx;
	struct proto_txin in;
	struct proto_witness_iter it;
	struct proto_span item;

	/* exactly PROTO_MAX_SIZE: the largest item decode accepts */
	blob[3] = 0xfe;
	proto_put_le32(blob + 4, PROTO_MAX_SIZE);
	hand_witness(&tx, &in, blob, (uint32_t)(total - 1), 2);
	proto_witness_iter_init(&it, &tx, &in);
	assert_true(proto_witness_iter_next(&it, &item));
	tu_assert_bytes_equal(item.data, item.len, "ab", 2);
	assert_true(proto_witness_iter_next(&it, &item));
	assert_ptr_equal(item.data, blob + 8);
	assert_int_equal(item.len, PROTO_MAX_SIZE);
	assert_false(proto_witness_iter_next(&it, &item));

	/* one more byte: over the bound, although every byte is present */
	proto_put_le32(blob + 4, (uint32_t)big);
	hand_witness(&tx, &in, blob, (uint32_t)total, 2);
	proto_witness_iter_init(&it, &tx, &in);
	assert_true(proto_witness_iter_next(&it, &item));
	if (proto_witness_iter_next(&it, &item))
		fail_msg("returned an item of %u bytes, over PROTO_MAX_SIZE (%u)", item.len,
		         PROTO_MAX_SIZE);
	assert_false(proto_witness_iter_next(&it, &item));

	/* a length running past the span */
	static const uint8_t cut[] = {1, 'x', 3, 'y', 'z'};
	hand_witness(&tx, &in, cut, sizeof(cut), 2);
	proto_witness_iter_init(&it, &tx, &in);
	assert_true(proto_witness_iter_next(&it, &item));
	tu_assert_bytes_equal(item.data, item.len, "x", 1);
	assert_false(proto_witness_iter_next(&it, &item));
	assert_false(proto_witness_iter_next(&it, &item));

	/* a non-canonical length (0xfd for 1) */
	static const uint8_t noncanon[] = {0xfd, 1, 0, 'q'};
	hand_witness(&tx, &in, noncanon, sizeof(noncanon), 1);
	proto_witness_iter_init(&it, &tx, &in);
	assert_false(proto_witness_iter_next(&it, &item));

	/* empty items and an empty stack */
	static const uint8_t empties[] = {0, 0};
	hand_witness(&tx, &in, empties, sizeof(empties), 2);
	proto_witness_iter_init(&it, &tx, &in);
	for (int i = 0; i < 2; i++) {
		assert_true(proto_witness_iter_next(&it, &item));
		assert_int_equal(item.len, 0);
	}
	assert_false(proto_witness_iter_next(&it, &item));
	hand_witness(&tx, &in, empties, 0, 0);
	proto_witness_iter_init(&it, &tx, &in);
	assert_false(proto_witness_iter_next(&it, &item));
	free(blob);
}

static void test_freelist_stats(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_unhex(bip143_signed_hex, &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	struct proto_freelist_stats s0, s1;
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0); /* warm up */
	proto_freelist_stats(PROTO_FREELIST_SCRIPT, &s0);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	proto_freelist_stats(PROTO_FREELIST_SCRIPT, &s1);
	if (s1.hits <= s0.hits)
		fail_msg("no free-list hits after warm-up: %llu -> %llu",
		         (unsigned long long)s0.hits, (unsigned long long)s1.hits);
	assert_int_equal(s1.misses, s0.misses);
	assert_int_equal(s1.in_use, s0.in_use); /* every buffer went back */
	assert_int_equal(s1.bypass, s0.bypass);
	free(raw);

	/* A 600-byte scriptPubKey bypasses the list and is counted. */
	struct proto_writer w;
	proto_writer_init(&w);
	proto_write_u32le(&w, 1);
	proto_write_compact(&w, 1);
	uint8_t prev[36] = {1};
	proto_write_bytes(&w, prev, 36);
	proto_write_compact(&w, 0);
	proto_write_u32le(&w, 0xffffffff);
	proto_write_compact(&w, 2);
	uint8_t big[600];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	proto_write_u64le(&w, 1000);
	proto_write_varbytes(&w, big, sizeof(big));
	proto_write_u64le(&w, 2000);
	proto_write_varbytes(&w, big, 25);
	proto_write_u32le(&w, 0);
	assert_int_equal(w.err, 0);
	proto_freelist_stats(PROTO_FREELIST_SCRIPT, &s0);
	assert_int_equal(proto_tx_decode_buf(w.buf, w.len, &tx, NULL), 0);
	proto_freelist_stats(PROTO_FREELIST_SCRIPT, &s1);
	assert_int_equal(s1.bypass, s0.bypass + 1);
	assert_int_equal(s1.in_use, s0.in_use);
	tu_assert_bytes_equal(proto_txout_script(&tx, &tx.vout[0]), tx.vout[0].script_len, big,
	                      600);
	tu_assert_bytes_equal(proto_txout_script(&tx, &tx.vout[1]), tx.vout[1].script_len, big, 25);
	assert_int_equal(tx.blob_len, 625);
	struct proto_writer w2;
	encode(&tx, false, &w2);
	tu_assert_bytes_equal(w2.buf, w2.len, w.buf, w.len);
	proto_writer_release(&w2);
	proto_writer_release(&w);
	proto_tx_release(&tx);
}

/* Scripts that straddle staging buffers, mixed with large ones. */
static void test_staging_layout(void **state)
{
	(void)state;
	struct proto_writer w;
	proto_writer_init(&w);
	static const uint32_t lens[] = {0, 1, 300, 503, 504, 505, 512, 513, 1000, 75, 0, 4000, 17};
	const size_t n = sizeof(lens) / sizeof(lens[0]);
	uint8_t *pat = malloc(5000);
	for (size_t i = 0; i < 5000; i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	proto_write_u32le(&w, 2);
	proto_write_bytes(&w, (const uint8_t[]){0, 1}, 2);
	proto_write_compact(&w, n);
	for (size_t i = 0; i < n; i++) {
		uint8_t prev[36] = {(uint8_t)i, 2, 3};
		proto_write_bytes(&w, prev, 36);
		proto_write_varbytes(&w, pat + i, lens[i]);
		proto_write_u32le(&w, (uint32_t)i);
	}
	proto_write_compact(&w, n);
	for (size_t i = 0; i < n; i++) {
		proto_write_u64le(&w, i);
		proto_write_varbytes(&w, pat + 2 * i, lens[n - 1 - i]);
	}
	for (size_t i = 0; i < n; i++) {
		/* i items: lengths from lens, rotating */
		proto_write_compact(&w, i % 4);
		for (size_t k = 0; k < i % 4; k++)
			proto_write_varbytes(&w, pat + k, lens[(i + k) % n]);
	}
	proto_write_u32le(&w, 99);
	assert_int_equal(w.err, 0);
	struct proto_tx tx;
	proto_tx_init(&tx);
	roundtrip(w.buf, w.len, &tx);
	for (size_t i = 0; i < n; i++) {
		tu_assert_bytes_equal(proto_txin_script(&tx, &tx.vin[i]), tx.vin[i].script_len,
		                      pat + i, lens[i]);
		tu_assert_bytes_equal(proto_txout_script(&tx, &tx.vout[i]), tx.vout[i].script_len,
		                      pat + 2 * i, lens[n - 1 - i]);
		struct proto_witness_iter it;
		struct proto_span item;
		proto_witness_iter_init(&it, &tx, &tx.vin[i]);
		for (size_t k = 0; k < i % 4; k++) {
			assert_true(proto_witness_iter_next(&it, &item));
			tu_assert_bytes_equal(item.data, item.len, pat + k, lens[(i + k) % n]);
		}
		assert_false(proto_witness_iter_next(&it, &item));
	}
	proto_tx_release(&tx);
	proto_writer_release(&w);
	free(pat);
}

static void test_piece_codecs(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_unhex(small_tx_hex, &len);
	struct proto_reader r;
	proto_reader_init(&r, raw + 5, len - 5);
	struct proto_txin in;
	struct proto_span s;
	assert_int_equal(proto_txin_decode(&r, &in, &s), 0);
	assert_int_equal(in.prevout.n, 0xffffffffu);
	assert_int_equal(s.len, 7);
	assert_ptr_equal(s.data, raw + 42);
	assert_int_equal(in.sequence, 0xffffffffu);
	uint8_t buf[200];
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	proto_txin_encode(&in, s.data, s.len, &w);
	assert_int_equal(w.err, 0);
	tu_assert_bytes_equal(buf, w.len, raw + 5, 48);
	proto_reader_init(&r, raw + 54, len - 54);
	struct proto_txout o;
	assert_int_equal(proto_txout_decode(&r, &o, &s), 0);
	assert_int_equal(o.value, 5000000000LL);
	assert_int_equal(s.len, 0x43);
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	proto_txout_encode(&o, s.data, s.len, &w);
	tu_assert_bytes_equal(buf, w.len, raw + 54, 8 + 1 + 0x43);
	/* Fixed writer too small: ENOSPACE, nothing written. */
	proto_writer_init_fixed(&w, buf, 10);
	proto_txout_encode(&o, s.data, s.len, &w);
	assert_int_equal(w.err, PROTO_ENOSPACE);
	assert_int_equal(w.len, 0);
	struct proto_outpoint op;
	proto_reader_init(&r, raw + 5, 35);
	assert_int_equal(proto_outpoint_decode(&r, &op), PROTO_ETRUNC);
	assert_int_equal(proto_reader_offset(&r), 0);
	proto_reader_init(&r, raw + 5, 36);
	assert_int_equal(proto_outpoint_decode(&r, &op), 0);
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	proto_outpoint_encode(&op, &w);
	tu_assert_bytes_equal(buf, w.len, raw + 5, 36);
	free(raw);
}

/* Every serialized_tx in Core's tx_valid.json / tx_invalid.json. */
static void core_vectors(const char *file, int *ok, int *failed)
{
	json_error_t jerr;
	json_t *root = json_load_file(tu_vector(file), 0, &jerr);
	if (!root)
		fail_msg("%s: %s (line %d)", file, jerr.text, jerr.line);
	assert_true(json_is_array(root));
	struct proto_tx tx;
	proto_tx_init(&tx);
	size_t i;
	json_t *row;
	json_array_foreach(root, i, row)
	{
		if (!json_is_array(row) || json_array_size(row) < 3 ||
		    !json_is_array(json_array_get(row, 0)))
			continue; /* comment */
		const char *hex = json_string_value(json_array_get(row, 1));
		assert_non_null(hex);
		size_t len;
		uint8_t *raw = tu_unhex(hex, &len);
		size_t off = 0;
		int err = proto_tx_decode_buf(raw, len, &tx, &off);
		if (err) {
			(*failed)++;
			print_message("  %s row %zu: %s at offset %zu\n", file, i,
			              proto_errname(err), off);
		} else {
			(*ok)++;
			struct proto_writer w;
			encode(&tx, false, &w);
			tu_assert_bytes_equal(w.buf, w.len, raw, len);
			proto_writer_release(&w);
		}
		free(raw);
	}
	proto_tx_release(&tx);
	json_decref(root);
}

static void test_core_vectors(void **state)
{
	(void)state;
	int ok = 0, failed = 0;
	core_vectors("bitcoin-core/tx_valid.json", &ok, &failed);
	print_message("tx_valid.json: %d decoded and re-encoded identically, %d failed\n", ok,
	              failed);
	assert_int_equal(failed, 0);
	assert_true(ok >= 100);
	ok = failed = 0;
	core_vectors("bitcoin-core/tx_invalid.json", &ok, &failed);
	print_message(
	    "tx_invalid.json: %d decoded and re-encoded identically, %d failed to decode\n", ok,
	    failed);
	/* Core's own transaction_tests deserialize every tx_invalid row
	 * before checking it, so all of them must decode. */
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small_tx),
	    cmocka_unit_test(test_megatx),
	    cmocka_unit_test(test_bip143_witness),
	    cmocka_unit_test(test_bip143_p2sh),
	    cmocka_unit_test(test_truncations),
	    cmocka_unit_test(test_huge_counts),
	    cmocka_unit_test(test_noncanonical),
	    cmocka_unit_test(test_witness_flags),
	    cmocka_unit_test(test_trailing),
	    cmocka_unit_test(test_error_keeps_storage),
	    cmocka_unit_test(test_alloc_counts),
	    cmocka_unit_test(test_oom),
	    cmocka_unit_test(test_oom_leaves_valid_tx),
	    cmocka_unit_test(test_witness_iter_bounds),
	    cmocka_unit_test(test_freelist_stats),
	    cmocka_unit_test(test_staging_layout),
	    cmocka_unit_test(test_piece_codecs),
	    cmocka_unit_test(test_core_vectors),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
