/*
 * tests/unit/test_mempool_policy.c: Core 29's standardness rules
 * (mempool/policy.c). Every rule at its boundary, one over and one at it,
 * with Core's reason and verdict kind; the figures Core computes for dust
 * and fees; and Core's own regtest wallet transactions (which Core's
 * mempool accepted) passing every rule, mainnet's 999,657-byte
 * transaction failing on size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "script/script.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau

/* ---- building transactions ---------------------------------------------- */

#define TB_MAX_IN  4
#define TB_MAX_OUT 5
#define TB_MAX_WIT 110

struct span {
	const uint8_t *p;
	size_t n;
};

struct tb_in {
	struct span sig;
	uint32_t nwit;
	struct span wit[TB_MAX_WIT];
};

struct tb_out {
	int64_t value;
	struct span spk;
};

/* A transaction described field by field, serialized and then decoded so
 * that sizes, weight and witness spans are exactly what the decoder gives. */
struct tb {
	int32_t version;
	uint32_t n_in, n_out, locktime;
	struct tb_in in[TB_MAX_IN];
	struct tb_out out[TB_MAX_OUT];
};

static struct tb *tb_new(void)
{
	struct tb *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	b->version = 2;
	b->n_in = 1;
	return b;
}

static void tb_out_add(struct tb *b, int64_t value, const uint8_t *spk, size_t n)
{
	assert_true(b->n_out < TB_MAX_OUT);
	b->out[b->n_out++] = (struct tb_out){value, {spk, n}};
}

/* A length and the bytes; an empty span may have no pointer at all. */
static void tb_varbytes(struct proto_writer *w, struct span sp)
{
	proto_write_compact(w, sp.n);
	if (sp.n)
		proto_write_bytes(w, sp.p, sp.n);
}

static void tb_build(const struct tb *b, struct proto_tx *tx)
{
	struct proto_writer w;
	bool wit = false;
	for (uint32_t j = 0; j < b->n_in; j++)
		wit |= b->in[j].nwit > 0;
	proto_writer_init(&w);
	proto_write_u32le(&w, (uint32_t)b->version);
	if (wit) {
		proto_write_u8(&w, 0);
		proto_write_u8(&w, 1);
	}
	proto_write_compact(&w, b->n_in);
	for (uint32_t j = 0; j < b->n_in; j++) {
		struct proto_hash h;
		memset(h.b, 0x11 + (int)j, 32); /* distinct, never null */
		proto_write_hash(&w, &h);
		proto_write_u32le(&w, j);
		tb_varbytes(&w, b->in[j].sig);
		proto_write_u32le(&w, 0xfffffffdu);
	}
	proto_write_compact(&w, b->n_out);
	for (uint32_t k = 0; k < b->n_out; k++) {
		proto_write_u64le(&w, (uint64_t)b->out[k].value);
		tb_varbytes(&w, b->out[k].spk);
	}
	if (wit) {
		for (uint32_t j = 0; j < b->n_in; j++) {
			proto_write_compact(&w, b->in[j].nwit);
			for (uint32_t i = 0; i < b->in[j].nwit; i++)
				tb_varbytes(&w, b->in[j].wit[i]);
		}
	}
	proto_write_u32le(&w, b->locktime);
	assert_int_equal(w.err, 0);
	proto_tx_release(tx);
	tu_assert_err(proto_tx_decode_buf(w.buf, w.len, tx, NULL), 0);
	proto_writer_release(&w);
}

/* ---- scripts ------------------------------------------------------------ */

static uint8_t P2PKH[25], P2SH[23], P2WPKH[22], P2WSH[34], P2TR[34], WV2[34], WV16_40[42];
static uint8_t P2PK[35], MS_1OF3[105], MS_4OF4[139], MS_2OF3[105];
static const uint8_t P2A[4] = {0x51, 0x02, 0x4e, 0x73};
static const uint8_t OP_TRUE[1] = {0x51};
static uint8_t BIG[4000]; /* filler bytes for pushes and witness items */

static size_t multisig(uint8_t *s, unsigned m, unsigned n)
{
	size_t k = 0;
	s[k++] = (uint8_t)(0x50 + m);
	for (unsigned i = 0; i < n; i++) {
		s[k++] = 33;
		s[k++] = 0x02;
		memset(s + k, 0x40 + (int)i, 32);
		k += 32;
	}
	s[k++] = (uint8_t)(0x50 + n);
	s[k++] = SCRIPT_OP_CHECKMULTISIG;
	return k;
}

static int setup(void **state)
{
	(void)state;
	memcpy(P2PKH, "\x76\xa9\x14", 3);
	memset(P2PKH + 3, 0xaa, 20);
	memcpy(P2PKH + 23, "\x88\xac", 2);
	memcpy(P2SH, "\xa9\x14", 2);
	memset(P2SH + 2, 0xbb, 20);
	P2SH[22] = 0x87;
	memcpy(P2WPKH, "\x00\x14", 2);
	memset(P2WPKH + 2, 0xcc, 20);
	memcpy(P2WSH, "\x00\x20", 2);
	memset(P2WSH + 2, 0xdd, 32);
	memcpy(P2TR, "\x51\x20", 2);
	memset(P2TR + 2, 0xee, 32);
	memcpy(WV2, "\x52\x20", 2);
	memset(WV2 + 2, 0x12, 32);
	memcpy(WV16_40, "\x60\x28", 2);
	memset(WV16_40 + 2, 0x34, 40);
	P2PK[0] = 33;
	P2PK[1] = 0x03;
	memset(P2PK + 2, 0x56, 32);
	P2PK[34] = SCRIPT_OP_CHECKSIG;
	assert_int_equal(multisig(MS_1OF3, 1, 3), sizeof(MS_1OF3));
	assert_int_equal(multisig(MS_2OF3, 2, 3), sizeof(MS_2OF3));
	assert_int_equal(multisig(MS_4OF4, 4, 4), sizeof(MS_4OF4));
	memset(BIG, 0x5a, sizeof(BIG));
	return 0;
}

/* An OP_RETURN script of exactly `total` bytes: OP_RETURN and one push. */
static size_t op_return(uint8_t *s, size_t total)
{
	size_t k = 0;
	s[k++] = SCRIPT_OP_RETURN;
	size_t data = total - 1 - (total - 1 > 76 ? 2 : 1);
	if (total - 1 > 76) {
		s[k++] = SCRIPT_OP_PUSHDATA1;
		s[k++] = (uint8_t)data;
	} else {
		s[k++] = (uint8_t)data;
	}
	memset(s + k, 0x77, data);
	return k + data;
}

/* A push-only scriptSig of exactly `total` bytes (>= 300): one PUSHDATA2. */
static size_t pushdata2(uint8_t *s, size_t total)
{
	size_t data = total - 3;
	s[0] = SCRIPT_OP_PUSHDATA2;
	s[1] = (uint8_t)data;
	s[2] = (uint8_t)(data >> 8);
	memset(s + 3, 0x01, data);
	return total;
}

static struct mempool_policy pol;
static struct chain_state st;

static void defaults(void)
{
	mempool_policy_default(&pol, proto_params(PROTO_NET_REGTEST));
	chain_state_clear(&st);
}

/* A standard one-in one-out tx paying P2WPKH, with scriptSig 0x00 (push). */
static struct tb *simple(void)
{
	static const uint8_t sig[1] = {0x00};
	struct tb *b = tb_new();
	b->in[0].sig = (struct span){sig, 1};
	tb_out_add(b, 10000, P2WPKH, sizeof(P2WPKH));
	return b;
}

static void expect_standard(struct tb *b)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	tu_assert_ok(mempool_policy_check_standard(&tx, &pol, &st), &st);
	proto_tx_release(&tx);
}

static void expect_nonstandard_at(struct tb *b, const char *reason, int line)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	chain_state_clear(&st);
	int rc = mempool_policy_check_standard(&tx, &pol, &st);
	tu_assert_reject_impl(rc, &st, CHAIN_RESULT_TX_NOT_STANDARD, reason, __FILE__, line);
	/* IsStandardTx's rejections carry no debug message in Core. */
	assert_string_equal(st.debug, "");
	proto_tx_release(&tx);
}
#define expect_nonstandard(b, reason) expect_nonstandard_at((b), (reason), __LINE__)

/* ---- knobs, fees, vsize -------------------------------------------------- */

static void test_defaults(void **state)
{
	(void)state;
	struct mempool_policy p;
	for (int n = 0; n < PROTO_NET__COUNT; n++) {
		mempool_policy_default(&p, proto_params((enum proto_net)n));
		assert_int_equal(p.dust_relay_feerate, 3000);
		assert_int_equal(p.min_relay_feerate, 1000);
		assert_int_equal(p.incremental_relay_feerate, 1000);
		assert_int_equal(p.bytes_per_sigop, 20);
		assert_int_equal(p.max_datacarrier_bytes, 83);
		assert_true(p.datacarrier);
		assert_true(p.permit_bare_multisig);
		/* Core's fRequireStandard: off on testnet3 only */
		assert_int_equal(p.require_standard, n != PROTO_NET_TESTNET3);
	}
}

static void test_feerate_fee(void **state)
{
	(void)state;
	/* Core 29's CFeeRate::GetFee rounds up and never makes a fee zero
	 * for a non-zero rate and size (feerate_tests.cpp's cases). */
	static const struct {
		int64_t rate, size, fee;
	} cases[] = {
	    {0, 0, 0},        {0, 100000, 0},   {1000, 0, 0},       {1000, 1, 1},
	    {1000, 121, 121}, {1000, 999, 999}, {1000, 1000, 1000}, {1000, 9000, 9000},
	    {-1000, 0, 0},    {-1000, 1, -1},   {-1000, 121, -121}, {-1000, 999, -999},
	    {123, 0, 0},      {123, 8, 1},      {123, 9, 2},        {123, 121, 15},
	    {123, 999, 123},  {123, 1000, 123}, {123, 9000, 1107},  {-123, 0, 0},
	    {-123, 8, -1},    {-123, 9, -1},    {-123, 121, -14},   {-123, 999, -122},
	    {18, 0, 0},       {18, 100, 2},     {18, 200, 4},       {18, 1000, 18},
	    {1, 1, 1},        {1, 999, 1},      {1, 1001, 2},       {3000, 182, 546},
	    {3000, 98, 294},  {3702, 182, 674}, {1000, 141, 141},   {1, 4000000, 4000},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = mempool_feerate_fee(cases[i].rate, cases[i].size);
		if (got != cases[i].fee)
			fail_msg("GetFee(rate %lld, %lld vB) = %lld, want %lld",
			         (long long)cases[i].rate, (long long)cases[i].size, (long long)got,
			         (long long)cases[i].fee);
	}
}

static void test_vsize(void **state)
{
	(void)state;
	assert_int_equal(mempool_policy_vsize(400, 0, 20), 100);
	assert_int_equal(mempool_policy_vsize(401, 0, 20), 101);
	assert_int_equal(mempool_policy_vsize(403, 0, 20), 101);
	assert_int_equal(mempool_policy_vsize(404, 0, 20), 101);
	/* sigops weigh more than the bytes: 100 * 20 = 2,000 "weight" */
	assert_int_equal(mempool_policy_vsize(561, 100, 20), 500);
	assert_int_equal(mempool_policy_vsize(2001, 100, 20), 501);
	assert_int_equal(mempool_policy_vsize(561, 101, 20), 505);
	/* -bytespersigop=0 turns the adjustment off */
	assert_int_equal(mempool_policy_vsize(561, 10000, 0), 141);
}

/* ---- dust ---------------------------------------------------------------- */

static void test_dust_threshold(void **state)
{
	(void)state;
	static const uint8_t ret[3] = {SCRIPT_OP_RETURN, 1, 0};
	static const uint8_t empty[1];
	static const struct {
		const char *what;
		const uint8_t *spk;
		size_t len;
		int64_t at3000;
	} cases[] = {
	    /* (8 + 1 + script) + 148 legacy or + 67 for a witness program */
	    {"p2pkh", P2PKH, sizeof(P2PKH), 546},
	    {"p2sh", P2SH, sizeof(P2SH), 540},
	    {"p2wpkh", P2WPKH, sizeof(P2WPKH), 294},
	    {"p2wsh", P2WSH, sizeof(P2WSH), 330},
	    {"p2tr", P2TR, sizeof(P2TR), 330},
	    {"witness v2", WV2, sizeof(WV2), 330},
	    {"witness v16 40 bytes", WV16_40, sizeof(WV16_40), 354},
	    {"anchor", P2A, sizeof(P2A), 240},
	    {"p2pk", P2PK, sizeof(P2PK), 576},
	    {"1-of-3", MS_1OF3, sizeof(MS_1OF3), 786},
	    {"op_true", OP_TRUE, 1, 474},
	    {"empty", empty, 0, 471},
	    {"op_return", ret, sizeof(ret), 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = mempool_policy_dust_threshold(cases[i].spk, cases[i].len, 3000);
		if (got != cases[i].at3000)
			fail_msg("%s: dust threshold %lld, want %lld", cases[i].what,
			         (long long)got, (long long)cases[i].at3000);
	}
	/* the rounding at an odd rate (transaction_tests.cpp: 182 * 3702 / 1000 up) */
	assert_int_equal(mempool_policy_dust_threshold(P2PKH, sizeof(P2PKH), 3702), 674);
	/* a rate of zero: nothing is dust */
	assert_int_equal(mempool_policy_dust_threshold(P2PKH, sizeof(P2PKH), 0), 0);
	/* a script over 10,000 bytes is unspendable, so never dust */
	static uint8_t huge[SCRIPT_MAX_SIZE + 1];
	assert_int_equal(mempool_policy_dust_threshold(huge, sizeof(huge), 3000), 0);
	/* a 253-byte script takes 3 bytes of length: 8 + 3 + 253 + 148 = 412 */
	static uint8_t s253[253];
	assert_int_equal(mempool_policy_dust_threshold(s253, sizeof(s253), 1000), 412);
}

static void test_is_dust_and_list(void **state)
{
	(void)state;
	struct proto_tx tx;
	struct tb *b = tb_new();
	static const uint8_t sig[1] = {0};
	b->in[0].sig = (struct span){sig, 1};
	tb_out_add(b, 545, P2PKH, sizeof(P2PKH));   /* dust */
	tb_out_add(b, 546, P2PKH, sizeof(P2PKH));   /* not */
	tb_out_add(b, 293, P2WPKH, sizeof(P2WPKH)); /* dust */
	tb_out_add(b, 294, P2WPKH, sizeof(P2WPKH)); /* not */
	tb_out_add(b, 0, P2A, sizeof(P2A));         /* dust */
	proto_tx_init(&tx);
	tb_build(b, &tx);
	assert_true(mempool_policy_is_dust(&tx, 0, 3000));
	assert_false(mempool_policy_is_dust(&tx, 1, 3000));
	assert_true(mempool_policy_is_dust(&tx, 2, 3000));
	assert_false(mempool_policy_is_dust(&tx, 3, 3000));
	assert_true(mempool_policy_is_dust(&tx, 4, 3000));
	uint32_t idx[3] = {99, 99, 99};
	assert_int_equal(mempool_policy_dust_outputs(&tx, 3000, idx, 3), 3);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 4);
	/* counts past the room it was given */
	idx[0] = idx[1] = 99;
	assert_int_equal(mempool_policy_dust_outputs(&tx, 3000, idx, 1), 3);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 99);
	/* at a rate of zero nothing is dust, not even a 0-value anchor */
	assert_int_equal(mempool_policy_dust_outputs(&tx, 0, NULL, 0), 0);
	proto_tx_release(&tx);
	free(b);
}

/* ---- IsStandardTx -------------------------------------------------------- */

static void test_version(void **state)
{
	(void)state;
	defaults();
	static const int32_t ok[] = {1, 2, 3};
	static const int32_t bad[] = {0, 4, -1, INT32_MIN, 0x7fffffff};
	for (size_t i = 0; i < 3; i++) {
		struct tb *b = simple();
		b->version = ok[i];
		expect_standard(b);
		free(b);
	}
	for (size_t i = 0; i < 5; i++) {
		struct tb *b = simple();
		b->version = bad[i];
		expect_nonstandard(b, "version");
		free(b);
	}
}

/* Weight of b as built. */
static uint32_t weight_of(const struct tb *b)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	uint32_t w = proto_tx_weight(&tx);
	proto_tx_release(&tx);
	return w;
}

static void test_weight(void **state)
{
	(void)state;
	defaults();
	static uint8_t item[400000];
	/* A witness item lets the weight move one unit at a time. */
	struct tb *b = simple();
	b->in[0].nwit = 1;
	b->in[0].wit[0] = (struct span){item, 300000};
	uint32_t w0 = weight_of(b);
	b->in[0].wit[0].n = 300000 + (MEMPOOL_MAX_STANDARD_TX_WEIGHT - w0);
	assert_int_equal(weight_of(b), MEMPOOL_MAX_STANDARD_TX_WEIGHT);
	expect_standard(b);
	b->in[0].wit[0].n++;
	assert_int_equal(weight_of(b), MEMPOOL_MAX_STANDARD_TX_WEIGHT + 1);
	expect_nonstandard(b, "tx-size");
	/* tx-size comes before every input and output rule */
	b->version = 2;
	tb_out_add(b, 1, OP_TRUE, 1);
	expect_nonstandard(b, "tx-size");
	free(b);

	/* Mainnet's 999,657-byte transaction (5,569 inputs). */
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/megatx.bin"), &len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	tu_assert_err(proto_tx_decode_buf(raw, len, &tx, NULL), 0);
	chain_state_clear(&st);
	tu_assert_reject(mempool_policy_check_standard(&tx, &pol, &st), &st,
	                 CHAIN_RESULT_TX_NOT_STANDARD, "tx-size");
	proto_tx_release(&tx);
	free(raw);
}

static void test_scriptsig(void **state)
{
	(void)state;
	defaults();
	static uint8_t sig[2000];
	struct tb *b = simple();
	b->in[0].sig = (struct span){sig, pushdata2(sig, 1650)};
	expect_standard(b);
	b->in[0].sig = (struct span){sig, pushdata2(sig, 1651)};
	expect_nonstandard(b, "scriptsig-size");

	/* OP_0 OP_DUP: not push-only */
	static const uint8_t dup[2] = {0x00, SCRIPT_OP_DUP};
	b->in[0].sig = (struct span){dup, 2};
	expect_nonstandard(b, "scriptsig-not-pushonly");
	/* a truncated push is not push-only either */
	static const uint8_t trunc[2] = {0x05, 0x01};
	b->in[0].sig = (struct span){trunc, 2};
	expect_nonstandard(b, "scriptsig-not-pushonly");
	/* OP_RESERVED and the number opcodes count as pushes, as in Core */
	static const uint8_t nums[4] = {SCRIPT_OP_1NEGATE, SCRIPT_OP_RESERVED, SCRIPT_OP_16, 0};
	b->in[0].sig = (struct span){nums, 4};
	expect_standard(b);

	/* input by input: size then push-only; the first bad input names it */
	b->n_in = 2;
	b->in[0].sig = (struct span){dup, 2};
	b->in[1].sig = (struct span){sig, pushdata2(sig, 1651)};
	expect_nonstandard(b, "scriptsig-not-pushonly");
	b->in[0].sig = (struct span){nums, 4};
	expect_nonstandard(b, "scriptsig-size");
	free(b);
}

static void test_output_types(void **state)
{
	(void)state;
	defaults();
	static const uint8_t v0_21[23] = {0x00, 21};
	static const uint8_t ret_nonpush[3] = {SCRIPT_OP_RETURN, 0x00, SCRIPT_OP_DUP};
	static const struct {
		const uint8_t *spk;
		size_t len;
		bool standard;
	} cases[] = {
	    {P2PKH, sizeof(P2PKH), true},
	    {P2SH, sizeof(P2SH), true},
	    {P2WPKH, sizeof(P2WPKH), true},
	    {P2WSH, sizeof(P2WSH), true},
	    {P2TR, sizeof(P2TR), true},
	    {WV2, sizeof(WV2), true},
	    {WV16_40, sizeof(WV16_40), true},
	    {P2A, sizeof(P2A), true},
	    {P2PK, sizeof(P2PK), true},
	    {MS_1OF3, sizeof(MS_1OF3), true},
	    {MS_2OF3, sizeof(MS_2OF3), true},
	    {MS_4OF4, sizeof(MS_4OF4), false},
	    {OP_TRUE, 1, false},
	    {v0_21, sizeof(v0_21), false},
	    {ret_nonpush, sizeof(ret_nonpush), false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb *b = simple();
		/* value well above any dust threshold */
		b->out[0] = (struct tb_out){100000, {cases[i].spk, cases[i].len}};
		if (cases[i].standard)
			expect_standard(b);
		else
			expect_nonstandard(b, "scriptpubkey");
		free(b);
	}

	/* -permitbaremultisig=0: a 1-of-3 is then bare-multisig */
	struct tb *b = simple();
	b->out[0] = (struct tb_out){100000, {MS_1OF3, sizeof(MS_1OF3)}};
	pol.permit_bare_multisig = false;
	expect_nonstandard(b, "bare-multisig");
	/* ... but a 4-of-4 is still scriptpubkey: the type is judged first */
	b->out[0] = (struct tb_out){100000, {MS_4OF4, sizeof(MS_4OF4)}};
	expect_nonstandard(b, "scriptpubkey");
	/* outputs in order: a bad script after a bare multisig */
	b->out[0] = (struct tb_out){100000, {MS_1OF3, sizeof(MS_1OF3)}};
	tb_out_add(b, 100000, OP_TRUE, 1);
	expect_nonstandard(b, "bare-multisig");
	free(b);
}

static void test_op_return(void **state)
{
	(void)state;
	defaults();
	uint8_t r83[83], r84[84], r40[40], r41[41];
	assert_int_equal(op_return(r83, 83), 83);
	assert_int_equal(op_return(r84, 84), 84);
	assert_int_equal(op_return(r40, 40), 40);
	assert_int_equal(op_return(r41, 41), 41);
	struct tb *b = simple();
	tb_out_add(b, 0, r83, 83);
	expect_standard(b);
	b->out[1].spk = (struct span){r84, 84};
	expect_nonstandard(b, "scriptpubkey");
	/* a bare OP_RETURN, and one with only numbers after it */
	static const uint8_t bare[1] = {SCRIPT_OP_RETURN};
	static const uint8_t nums[3] = {SCRIPT_OP_RETURN, SCRIPT_OP_1, SCRIPT_OP_RESERVED};
	b->out[1].spk = (struct span){bare, 1};
	expect_standard(b);
	b->out[1].spk = (struct span){nums, 3};
	expect_standard(b);
	/* two of them */
	tb_out_add(b, 0, r40, 40);
	expect_nonstandard(b, "multi-op-return");
	/* -datacarriersize=40 */
	b->n_out = 2;
	b->out[1].spk = (struct span){r40, 40};
	pol.max_datacarrier_bytes = 40;
	expect_standard(b);
	b->out[1].spk = (struct span){r41, 41};
	expect_nonstandard(b, "scriptpubkey");
	/* -datacarrier=0: none at all */
	pol.max_datacarrier_bytes = 83;
	pol.datacarrier = false;
	b->out[1].spk = (struct span){bare, 1};
	expect_nonstandard(b, "scriptpubkey");
	free(b);
}

static void test_dust_rule(void **state)
{
	(void)state;
	defaults();
	struct tb *b = simple();
	/* one dust output passes IsStandardTx (ephemeral dust) ... */
	b->out[0].value = 293;
	expect_standard(b);
	/* ... two do not */
	tb_out_add(b, 545, P2PKH, sizeof(P2PKH));
	expect_nonstandard(b, "dust");
	b->out[1].value = 546;
	expect_standard(b);
	/* dust is judged after every output's type ... */
	b->out[1].value = 545;
	tb_out_add(b, 100000, OP_TRUE, 1);
	expect_nonstandard(b, "scriptpubkey");
	/* ... and before multi-op-return */
	uint8_t r[10];
	op_return(r, 10);
	b->out[2] = (struct tb_out){0, {r, 10}};
	tb_out_add(b, 0, r, 10);
	expect_nonstandard(b, "dust");
	b->out[1].value = 546;
	expect_nonstandard(b, "multi-op-return");
	/* a higher -dustrelayfee makes more dust */
	b->n_out = 2;
	b->out[0].value = 294;
	expect_standard(b);
	pol.dust_relay_feerate = 3702;
	expect_nonstandard(b, "dust");
	free(b);
}

static void test_ephemeral(void **state)
{
	(void)state;
	defaults();
	struct proto_tx tx;
	proto_tx_init(&tx);
	struct tb *b = simple();
	b->out[0].value = 0;
	tb_out_add(b, 100000, P2TR, sizeof(P2TR));
	tb_build(b, &tx);
	tu_assert_ok(mempool_policy_check_ephemeral(&tx, 0, 0, &pol, &st), &st);
	static const int64_t fees[][2] = {{1, 1}, {1, 0}, {0, 1}, {-1, 0}, {100, 200}};
	for (size_t i = 0; i < 5; i++) {
		chain_state_clear(&st);
		tu_assert_reject(
		    mempool_policy_check_ephemeral(&tx, fees[i][0], fees[i][1], &pol, &st), &st,
		    CHAIN_RESULT_TX_NOT_STANDARD, "dust");
		assert_string_equal(st.debug, "tx with dust output must be 0-fee");
	}
	/* without dust any fee is fine here */
	b->out[0].value = 294;
	tb_build(b, &tx);
	tu_assert_ok(mempool_policy_check_ephemeral(&tx, 500, 700, &pol, &st), &st);
	proto_tx_release(&tx);
	free(b);
}

static void test_nonwitness_size_and_fee(void **state)
{
	(void)state;
	defaults();
	struct proto_tx tx;
	proto_tx_init(&tx);
	/* 4 + 1 + (36 + 1 + n + 4) + 1 + (8 + 1 + 1) + 4 = 61 + n with OP_TRUE output */
	static uint8_t sig[8];
	struct tb *b = tb_new();
	tb_out_add(b, 1000, OP_TRUE, 1);
	b->in[0].sig = (struct span){sig, 3};
	tb_build(b, &tx);
	assert_int_equal(tx.stripped_size, 64);
	tu_assert_reject(mempool_policy_check_nonwitness_size(&tx, &st), &st,
	                 CHAIN_RESULT_TX_NOT_STANDARD, "tx-size-small");
	b->in[0].sig = (struct span){sig, 4};
	tb_build(b, &tx);
	assert_int_equal(tx.stripped_size, 65);
	tu_assert_ok(mempool_policy_check_nonwitness_size(&tx, &st), &st);
	/* a witness does not count towards the 65 */
	b->in[0].sig = (struct span){sig, 3};
	b->in[0].nwit = 1;
	b->in[0].wit[0] = (struct span){BIG, 100};
	tb_build(b, &tx);
	tu_assert_reject(mempool_policy_check_nonwitness_size(&tx, &st), &st,
	                 CHAIN_RESULT_TX_NOT_STANDARD, "tx-size-small");
	proto_tx_release(&tx);
	free(b);

	/* min relay fee: 1 sat/vB, rounded up */
	chain_state_clear(&st);
	tu_assert_reject(mempool_policy_check_min_relay_fee(140, 141, &pol, &st), &st,
	                 CHAIN_RESULT_TX_RECONSIDERABLE, "min relay fee not met");
	assert_string_equal(st.debug, "140 < 141");
	tu_assert_reject(mempool_policy_check_min_relay_fee(0, 141, &pol, &st), &st,
	                 CHAIN_RESULT_TX_RECONSIDERABLE, "min relay fee not met");
	assert_string_equal(st.debug, "0 < 141");
	tu_assert_ok(mempool_policy_check_min_relay_fee(141, 141, &pol, &st), &st);
	pol.min_relay_feerate = 100; /* 0.1 sat/vB: 14.1 rounds up to 15 */
	tu_assert_reject(mempool_policy_check_min_relay_fee(14, 141, &pol, &st), &st,
	                 CHAIN_RESULT_TX_RECONSIDERABLE, "min relay fee not met");
	assert_string_equal(st.debug, "14 < 15");
	tu_assert_ok(mempool_policy_check_min_relay_fee(15, 141, &pol, &st), &st);
}

/* ---- AreInputsStandard --------------------------------------------------- */

/* A redeem script of n CHECKSIGs. */
static size_t checksigs(uint8_t *s, unsigned n)
{
	memset(s, SCRIPT_OP_CHECKSIG, n);
	return n;
}

static void expect_inputs(struct tb *b, const struct chain_coin *prev, bool ok, int line)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	chain_state_clear(&st);
	int rc = mempool_policy_check_inputs(&tx, prev, &st);
	if (ok)
		tu_assert_ok_impl(rc, &st, "mempool_policy_check_inputs", __FILE__, line);
	else {
		tu_assert_reject_impl(rc, &st, CHAIN_RESULT_TX_INPUTS_NOT_STANDARD,
		                      "bad-txns-nonstandard-inputs", __FILE__, line);
		assert_string_equal(st.debug, "");
	}
	proto_tx_release(&tx);
}

static struct chain_coin coin(const uint8_t *spk, size_t len)
{
	return (struct chain_coin){.value = 100000, .script = spk, .script_len = (uint32_t)len};
}

static void test_inputs(void **state)
{
	(void)state;
	defaults();
	struct tb *b = simple();
	struct chain_coin prev[2];
	static const uint8_t sig0[1] = {0};

	/* spending every standard type is fine, whatever the scriptSig */
	const struct chain_coin fine[] = {
	    coin(P2PKH, sizeof(P2PKH)),     coin(P2WPKH, sizeof(P2WPKH)),
	    coin(P2WSH, sizeof(P2WSH)),     coin(P2TR, sizeof(P2TR)),
	    coin(P2A, sizeof(P2A)),         coin(P2PK, sizeof(P2PK)),
	    coin(MS_4OF4, sizeof(MS_4OF4)), /* only creating one is non-standard */
	};
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		prev[0] = fine[i];
		expect_inputs(b, prev, true, __LINE__);
	}
	/* spending a non-standard script or an unknown witness version */
	prev[0] = coin(OP_TRUE, 1);
	expect_inputs(b, prev, false, __LINE__);
	prev[0] = coin(WV2, sizeof(WV2));
	expect_inputs(b, prev, false, __LINE__);
	prev[0] = coin(WV16_40, sizeof(WV16_40));
	expect_inputs(b, prev, false, __LINE__);

	/* P2SH: the redeem script may count 15 sigops, not 16 */
	uint8_t rs[40], sig[64];
	size_t n = checksigs(rs, 15);
	sig[0] = (uint8_t)n;
	memcpy(sig + 1, rs, n);
	b->in[0].sig = (struct span){sig, n + 1};
	prev[0] = coin(P2SH, sizeof(P2SH));
	expect_inputs(b, prev, true, __LINE__);
	n = checksigs(rs, 16);
	sig[0] = (uint8_t)n;
	memcpy(sig + 1, rs, n);
	b->in[0].sig = (struct span){sig, n + 1};
	expect_inputs(b, prev, false, __LINE__);
	/* accurate counting: OP_15 CHECKMULTISIG is 15, OP_16 is 16 */
	for (unsigned keys = 15; keys <= 16; keys++) {
		uint8_t short_ms[5] = {SCRIPT_OP_0, 3, SCRIPT_OP_1,
		                       (uint8_t)(SCRIPT_OP_1 + keys - 1), SCRIPT_OP_CHECKMULTISIG};
		b->in[0].sig = (struct span){short_ms, 5};
		expect_inputs(b, prev, keys == 15, __LINE__);
	}
	/* a real 1-of-15 (513 bytes, the largest standard P2SH multisig) */
	static uint8_t ms[600];
	static uint8_t msig[700];
	size_t k = multisig(ms, 1, 15);
	msig[0] = SCRIPT_OP_0;
	msig[1] = SCRIPT_OP_PUSHDATA2;
	msig[2] = (uint8_t)k;
	msig[3] = (uint8_t)(k >> 8);
	memcpy(msig + 4, ms, k);
	b->in[0].sig = (struct span){msig, k + 4};
	expect_inputs(b, prev, true, __LINE__);
	/* the redeem script is the last push: an earlier big one does not count */
	n = checksigs(rs, 16);
	sig[0] = (uint8_t)n;
	memcpy(sig + 1, rs, n);
	sig[n + 1] = 1;
	sig[n + 2] = SCRIPT_OP_CHECKSIG;
	b->in[0].sig = (struct span){sig, n + 3};
	expect_inputs(b, prev, true, __LINE__);
	/* a number opcode as the redeem script: 0x10 is no sigop */
	static const uint8_t num[1] = {SCRIPT_OP_16};
	b->in[0].sig = (struct span){num, 1};
	expect_inputs(b, prev, true, __LINE__);
	/* nothing on the stack, OP_RESERVED, a push over 520 bytes: EvalScript fails */
	b->in[0].sig = (struct span){sig, 0};
	expect_inputs(b, prev, false, __LINE__);
	static const uint8_t reserved[2] = {SCRIPT_OP_0, SCRIPT_OP_RESERVED};
	b->in[0].sig = (struct span){reserved, 2};
	expect_inputs(b, prev, false, __LINE__);
	static uint8_t push521[600];
	b->in[0].sig = (struct span){push521, pushdata2(push521, 521 + 3)};
	expect_inputs(b, prev, false, __LINE__);
	b->in[0].sig = (struct span){push521, pushdata2(push521, 520 + 3)};
	expect_inputs(b, prev, true, __LINE__);

	/* every input is checked: a bad second one */
	b->n_in = 2;
	b->in[0].sig = b->in[1].sig = (struct span){sig0, 1};
	prev[0] = coin(P2PKH, sizeof(P2PKH));
	prev[1] = coin(OP_TRUE, 1);
	expect_inputs(b, prev, false, __LINE__);
	free(b);
}

/* ---- IsWitnessStandard --------------------------------------------------- */

static void expect_witness(struct tb *b, const struct chain_coin *prev, bool ok, int line)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	chain_state_clear(&st);
	int rc = mempool_policy_check_witness(&tx, prev, &st);
	if (ok)
		tu_assert_ok_impl(rc, &st, "mempool_policy_check_witness", __FILE__, line);
	else
		tu_assert_reject_impl(rc, &st, CHAIN_RESULT_TX_WITNESS_MUTATED,
		                      "bad-witness-nonstandard", __FILE__, line);
	proto_tx_release(&tx);
}

static void set_witness(struct tb_in *in, uint32_t nitems, size_t item_len, size_t last_len)
{
	in->nwit = nitems;
	for (uint32_t i = 0; i < nitems; i++)
		in->wit[i] = (struct span){BIG, i + 1 == nitems ? last_len : item_len};
}

static void test_witness(void **state)
{
	(void)state;
	defaults();
	struct tb *b = tb_new();
	struct chain_coin prev[2];
	tb_out_add(b, 10000, P2WPKH, sizeof(P2WPKH));

	/* P2WPKH: no policy limits beyond having a program */
	prev[0] = coin(P2WPKH, sizeof(P2WPKH));
	set_witness(&b->in[0], 2, 72, 33);
	expect_witness(b, prev, true, __LINE__);
	/* a witness on a non-witness output, or on an anchor */
	prev[0] = coin(P2PKH, sizeof(P2PKH));
	expect_witness(b, prev, false, __LINE__);
	prev[0] = coin(P2A, sizeof(P2A));
	expect_witness(b, prev, false, __LINE__);
	/* ... but without a witness, anything goes here */
	b->in[0].nwit = 0;
	tb_out_add(b, 10000, P2WPKH, sizeof(P2WPKH)); /* keep the tx over 64 bytes */
	expect_witness(b, prev, true, __LINE__);
	b->n_out = 1;

	/* P2WSH: 100 items of 80 bytes and a 3,600-byte script */
	prev[0] = coin(P2WSH, sizeof(P2WSH));
	set_witness(&b->in[0], 101, 80, 3600);
	expect_witness(b, prev, true, __LINE__);
	set_witness(&b->in[0], 102, 80, 3600);
	expect_witness(b, prev, false, __LINE__);
	set_witness(&b->in[0], 101, 80, 3601);
	expect_witness(b, prev, false, __LINE__);
	set_witness(&b->in[0], 101, 80, 3600);
	b->in[0].wit[50].n = 81;
	expect_witness(b, prev, false, __LINE__);
	/* the script alone is fine; items over 80 only count below it */
	set_witness(&b->in[0], 1, 0, 3600);
	expect_witness(b, prev, true, __LINE__);

	/* P2SH-P2WSH: the same limits, through the redeem script */
	static uint8_t p2sh_sig[35];
	p2sh_sig[0] = 34;
	memcpy(p2sh_sig + 1, P2WSH, 34);
	b->in[0].sig = (struct span){p2sh_sig, 35};
	prev[0] = coin(P2SH, sizeof(P2SH));
	set_witness(&b->in[0], 3, 80, 100);
	expect_witness(b, prev, true, __LINE__);
	b->in[0].wit[0].n = 81;
	expect_witness(b, prev, false, __LINE__);
	/* a P2SH redeem script that is no witness program */
	static const uint8_t p2sh_plain[2] = {0x01, SCRIPT_OP_CHECKSIG};
	b->in[0].sig = (struct span){p2sh_plain, 2};
	set_witness(&b->in[0], 1, 0, 10);
	expect_witness(b, prev, false, __LINE__);
	/* and an empty scriptSig: nothing to take the redeem script from */
	b->in[0].sig = (struct span){p2sh_plain, 0};
	expect_witness(b, prev, false, __LINE__);
	b->in[0].sig = (struct span){NULL, 0};

	/* taproot key path: one item of any size */
	prev[0] = coin(P2TR, sizeof(P2TR));
	set_witness(&b->in[0], 1, 0, 1000);
	expect_witness(b, prev, true, __LINE__);
	/* an annex (last item starting 0x50, with at least two items) */
	static const uint8_t annex[3] = {SCRIPT_ANNEX_TAG, 1, 2};
	set_witness(&b->in[0], 2, 64, 0);
	b->in[0].wit[1] = (struct span){annex, 3};
	expect_witness(b, prev, false, __LINE__);
	/* alone it is a key path signature, not an annex */
	b->in[0].wit[0] = (struct span){annex, 3};
	b->in[0].nwit = 1;
	expect_witness(b, prev, true, __LINE__);
	/* tapscript: items under the script and control block at most 80 bytes */
	static uint8_t control[33] = {SCRIPT_TAPROOT_LEAF_TAPSCRIPT};
	set_witness(&b->in[0], 5, 80, 0);
	b->in[0].wit[3].n = 500; /* the script: no limit */
	b->in[0].wit[4] = (struct span){control, 33};
	expect_witness(b, prev, true, __LINE__);
	b->in[0].wit[2].n = 81;
	expect_witness(b, prev, false, __LINE__);
	/* another leaf version has no item limit */
	control[0] = 0xc2 | 1; /* with the parity bit */
	expect_witness(b, prev, true, __LINE__);
	control[0] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT | 1;
	expect_witness(b, prev, false, __LINE__);
	/* an empty control block */
	b->in[0].wit[4].n = 0;
	expect_witness(b, prev, false, __LINE__);
	/* P2SH-wrapped v1: not taproot, no limits at all */
	static uint8_t wrapped_tr[35];
	wrapped_tr[0] = 34;
	memcpy(wrapped_tr + 1, P2TR, 34);
	b->in[0].sig = (struct span){wrapped_tr, 35};
	prev[0] = coin(P2SH, sizeof(P2SH));
	b->in[0].wit[4] = (struct span){annex, 3};
	expect_witness(b, prev, true, __LINE__);
	/* unknown witness versions: no limits here (AreInputsStandard refuses them) */
	b->in[0].sig = (struct span){NULL, 0};
	prev[0] = coin(WV2, sizeof(WV2));
	expect_witness(b, prev, true, __LINE__);

	/* the second input is checked too */
	b->n_in = 2;
	prev[0] = coin(P2WPKH, sizeof(P2WPKH));
	set_witness(&b->in[0], 2, 72, 33);
	prev[1] = coin(P2WSH, sizeof(P2WSH));
	set_witness(&b->in[1], 102, 1, 1);
	expect_witness(b, prev, false, __LINE__);
	free(b);
}

/* ---- sigops -------------------------------------------------------------- */

static void test_sigops(void **state)
{
	(void)state;
	defaults();
	struct proto_tx tx;
	proto_tx_init(&tx);
	struct tb *b = tb_new();
	struct chain_coin prev[3];
	static const uint8_t sig0[1] = {0};

	/* outputs count too, legacy and inaccurate: CHECKMULTISIG is 20 */
	b->n_in = 3;
	for (int j = 0; j < 3; j++)
		b->in[j].sig = (struct span){sig0, 1};
	tb_out_add(b, 1000, P2PKH, sizeof(P2PKH));     /* 1 */
	tb_out_add(b, 1000, MS_1OF3, sizeof(MS_1OF3)); /* 20 */
	/* input 0: P2WPKH (1 witness sigop) */
	prev[0] = coin(P2WPKH, sizeof(P2WPKH));
	set_witness(&b->in[0], 2, 72, 33);
	/* input 1: P2SH 2-of-3 multisig, accurate: 3 */
	static uint8_t rs_sig[120];
	rs_sig[0] = SCRIPT_OP_0;
	rs_sig[1] = SCRIPT_OP_PUSHDATA1;
	rs_sig[2] = sizeof(MS_2OF3);
	memcpy(rs_sig + 3, MS_2OF3, sizeof(MS_2OF3));
	b->in[1].sig = (struct span){rs_sig, 3 + sizeof(MS_2OF3)};
	prev[1] = coin(P2SH, sizeof(P2SH));
	/* input 2: P2WSH whose script has 2 CHECKSIGs */
	static const uint8_t wscript[3] = {SCRIPT_OP_CHECKSIG, SCRIPT_OP_DROP, SCRIPT_OP_CHECKSIG};
	prev[2] = coin(P2WSH, sizeof(P2WSH));
	b->in[2].nwit = 2;
	b->in[2].wit[0] = (struct span){BIG, 10};
	b->in[2].wit[1] = (struct span){wscript, 3};
	tb_build(b, &tx);
	assert_int_equal(chain_tx_legacy_sigops(&tx), 21);
	/* (1 + 20) * 4 + 3 * 4 + 1 + 2 */
	assert_int_equal(chain_tx_sigop_cost(&tx, prev, SCRIPT_VERIFY_STANDARD), 84 + 12 + 3);
	/* without P2SH and WITNESS, only the legacy part */
	assert_int_equal(chain_tx_sigop_cost(&tx, prev, 0), 84);
	assert_int_equal(chain_tx_sigop_cost(&tx, prev, SCRIPT_VERIFY_P2SH), 96);
	assert_int_equal(chain_input_sigop_cost(&tx, 1, P2SH, sizeof(P2SH), SCRIPT_VERIFY_P2SH),
	                 12);

	/* a coinbase counts its legacy sigops only and reads no coins */
	struct tb *cb = tb_new();
	static const uint8_t cbsig[4] = {3, 1, 2, 3};
	cb->in[0].sig = (struct span){cbsig, 4};
	tb_out_add(cb, 5000000000, P2PKH, sizeof(P2PKH));
	tb_build(cb, &tx);
	memset(&tx.vin[0].prevout, 0, sizeof(tx.vin[0].prevout));
	tx.vin[0].prevout.n = 0xffffffffu;
	assert_true(proto_tx_is_coinbase(&tx));
	assert_int_equal(chain_tx_sigop_cost(&tx, NULL, SCRIPT_VERIFY_STANDARD), 4);

	/* the limit: 16,000 passes, 16,001 does not; Core's debug is the cost */
	tu_assert_ok(mempool_policy_check_sigops(16000, &st), &st);
	tu_assert_reject(mempool_policy_check_sigops(16001, &st), &st, CHAIN_RESULT_TX_NOT_STANDARD,
	                 "bad-txns-too-many-sigops");
	assert_string_equal(st.debug, "16001");
	proto_tx_release(&tx);
	free(b);
	free(cb);
}

/* ---- Core's own transactions ---------------------------------------------- */

/*
 * Every transaction Core's wallet made on the regtest chain was accepted
 * by Core's mempool first, so each passes every rule here with the coins
 * it spends (found in earlier blocks of the chain).
 */
static void test_core_wallet_txs(void **state)
{
	(void)state;
	defaults();
	struct tu_records r;
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), REGTEST_MAGIC, &r);
	struct proto_block *blocks = calloc(r.n, sizeof(*blocks));
	assert_non_null(blocks);
	for (size_t i = 0; i < r.n; i++) {
		proto_block_init(&blocks[i]);
		tu_assert_err(proto_block_decode(r.blk[i], r.len[i], &blocks[i], NULL), 0);
		for (uint32_t t = 0; t < blocks[i].n_tx; t++)
			proto_tx_compute_ids(&blocks[i].txs[t]);
	}
	unsigned checked = 0, with_witness = 0, p2sh_inputs = 0;
	struct chain_coin prev[64];
	for (size_t i = 0; i < r.n; i++) {
		for (uint32_t t = 1; t < blocks[i].n_tx; t++) {
			struct proto_tx *tx = &blocks[i].txs[t];
			assert_true(tx->n_in <= 64);
			for (uint32_t j = 0; j < tx->n_in; j++) {
				const struct proto_outpoint *op = &tx->vin[j].prevout;
				bool found = false;
				for (size_t bi = 0; bi <= i && !found; bi++) {
					for (uint32_t ti = 0; ti < blocks[bi].n_tx && !found;
					     ti++) {
						struct proto_tx *p = &blocks[bi].txs[ti];
						if (!proto_hash_eq(&p->txid, &op->txid))
							continue;
						assert_true(op->n < p->n_out);
						const struct proto_txout *o = &p->vout[op->n];
						prev[j] = (struct chain_coin){
						    .value = o->value,
						    .script = proto_txout_script(p, o),
						    .script_len = o->script_len};
						found = true;
					}
				}
				assert_true(found);
				p2sh_inputs += script_is_p2sh(prev[j].script, prev[j].script_len);
			}
			int64_t in = 0, out = 0;
			for (uint32_t j = 0; j < tx->n_in; j++)
				in += prev[j].value;
			for (uint32_t k = 0; k < tx->n_out; k++)
				out += tx->vout[k].value;
			chain_state_clear(&st);
			tu_assert_ok(mempool_policy_check_standard(tx, &pol, &st), &st);
			tu_assert_ok(mempool_policy_check_nonwitness_size(tx, &st), &st);
			tu_assert_ok(mempool_policy_check_inputs(tx, prev, &st), &st);
			tu_assert_ok(mempool_policy_check_witness(tx, prev, &st), &st);
			uint32_t cost = chain_tx_sigop_cost(tx, prev, SCRIPT_VERIFY_STANDARD);
			tu_assert_ok(mempool_policy_check_sigops(cost, &st), &st);
			int64_t vsize =
			    mempool_policy_vsize(proto_tx_weight(tx), cost, pol.bytes_per_sigop);
			tu_assert_ok(
			    mempool_policy_check_ephemeral(tx, in - out, in - out, &pol, &st), &st);
			tu_assert_ok(mempool_policy_check_min_relay_fee(in - out, vsize, &pol, &st),
			             &st);
			assert_int_equal(
			    mempool_policy_dust_outputs(tx, pol.dust_relay_feerate, NULL, 0), 0);
			with_witness += tx->has_witness;
			checked++;
		}
	}
	/* the chain has hundreds of sends of every type (README of the data) */
	if (checked < 200 || with_witness < 100 || p2sh_inputs < 10)
		fail_msg("only %u transactions (%u with witness, %u P2SH inputs)", checked,
		         with_witness, p2sh_inputs);
	for (size_t i = 0; i < r.n; i++)
		proto_block_release(&blocks[i]);
	free(blocks);
	tu_records_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_feerate_fee),
	    cmocka_unit_test(test_vsize),
	    cmocka_unit_test(test_dust_threshold),
	    cmocka_unit_test(test_is_dust_and_list),
	    cmocka_unit_test(test_version),
	    cmocka_unit_test(test_weight),
	    cmocka_unit_test(test_scriptsig),
	    cmocka_unit_test(test_output_types),
	    cmocka_unit_test(test_op_return),
	    cmocka_unit_test(test_dust_rule),
	    cmocka_unit_test(test_ephemeral),
	    cmocka_unit_test(test_nonwitness_size_and_fee),
	    cmocka_unit_test(test_inputs),
	    cmocka_unit_test(test_witness),
	    cmocka_unit_test(test_sigops),
	    cmocka_unit_test(test_core_wallet_txs),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
