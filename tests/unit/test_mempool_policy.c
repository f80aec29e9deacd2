/*
 * tests/unit/test_mempool_policy.c: Core 29's standardness rules
 * (mempool/policy.c) on the transaction itself. Every rule at its
 * boundary, one over and one at it, with Core's reason and verdict kind;
 * the figures Core computes for dust and fees; mainnet's 999,657-byte
 * transaction failing on size. What it spends:
 * test_mempool_policy_inputs.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/testutil_policy.h"

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
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
