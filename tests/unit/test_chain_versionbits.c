/*
 * tests/unit/test_chain_versionbits.c: chain/versionbits.c's BIP9 state
 * machine on chains of hand-made index nodes (prev links, heights,
 * versions, times): Core 29's regtest path DEFINED -> STARTED ->
 * LOCKED_IN -> ACTIVE, a timeout that fails it, a minimum activation
 * height that holds it locked in, the always/never-active shortcuts,
 * statistics and the signalling string, a fork whose answer differs from
 * the cached branch's, and -vbparams parsing with Core's messages. (The
 * comparison with the real bitcoind is tests/integration/test_versionbits.py.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"

#define T0 1700000000u /* block times start here, one second apart */

/* A chain of n nodes (genesis included) whose block h has version ver(h). */
static struct chain_node *make_chain(size_t n, struct chain_node *from, int32_t (*ver)(int32_t))
{
	struct chain_node *v = calloc(n, sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		struct chain_node *prev = i ? &v[i - 1] : from;
		v[i].prev = prev;
		v[i].height = prev ? prev->height + 1 : 0;
		v[i].time = T0 + (uint32_t)v[i].height;
		v[i].version = ver(v[i].height);
	}
	return v;
}

static int32_t always_signal(int32_t h)
{
	(void)h;
	return 0x30000000;
}

static int32_t never_signal(int32_t h)
{
	(void)h;
	return 0x20000000;
}

/* 107 of each period's 144 (one short of the threshold), and a version without the top bits. */
static int32_t almost(int32_t h)
{
	if (h % 144 == 0)
		return 0x10000000; /* bit 28 but not the BIP9 top bits: does not count */
	return h % 144 <= 107 ? 0x30000000 : 0x20000000;
}

static struct chain_vb *regtest_vb(const struct chain_vb_deployment *over)
{
	struct chain_vb *vb;
	assert_int_equal(chain_vb_new(&vb, proto_params(PROTO_NET_REGTEST), over), 0);
	return vb;
}

static void test_regtest_path(void **state)
{
	(void)state;
	struct chain_node *c = make_chain(600, NULL, always_signal);
	struct chain_vb *vb = regtest_vb(NULL);
	/* The state for the block after prev, and the version a miner sets on it. */
	assert_int_equal(chain_vb_state(vb, NULL, CHAIN_VB_TESTDUMMY), CHAIN_VB_DEFINED);
	assert_int_equal(chain_vb_state(vb, &c[142], CHAIN_VB_TESTDUMMY), CHAIN_VB_DEFINED);
	assert_int_equal(chain_vb_state(vb, &c[143], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	assert_int_equal(chain_vb_state(vb, &c[286], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	assert_int_equal(chain_vb_state(vb, &c[287], CHAIN_VB_TESTDUMMY), CHAIN_VB_LOCKED_IN);
	assert_int_equal(chain_vb_state(vb, &c[430], CHAIN_VB_TESTDUMMY), CHAIN_VB_LOCKED_IN);
	assert_int_equal(chain_vb_state(vb, &c[431], CHAIN_VB_TESTDUMMY), CHAIN_VB_ACTIVE);
	assert_int_equal(chain_vb_since(vb, &c[300], CHAIN_VB_TESTDUMMY), 288);
	assert_int_equal(chain_vb_since(vb, &c[599], CHAIN_VB_TESTDUMMY), 432);
	assert_int_equal(chain_vb_since(vb, &c[100], CHAIN_VB_TESTDUMMY), 0);
	assert_int_equal(chain_vb_block_version(vb, &c[142]), 0x20000000);
	assert_int_equal(chain_vb_block_version(vb, &c[143]), 0x30000000);
	assert_int_equal(chain_vb_block_version(vb, &c[430]), 0x30000000);
	assert_int_equal(chain_vb_block_version(vb, &c[431]), 0x20000000);
	/* Taproot is always active on regtest, testdummy never elsewhere. */
	assert_int_equal(chain_vb_state(vb, &c[5], CHAIN_VB_TAPROOT), CHAIN_VB_ACTIVE);
	assert_int_equal(chain_vb_since(vb, &c[5], CHAIN_VB_TAPROOT), 0);
	struct chain_vb *main_vb;
	assert_int_equal(chain_vb_new(&main_vb, proto_params(PROTO_NET_MAIN), NULL), 0);
	assert_false(chain_vb_enabled(main_vb, CHAIN_VB_TESTDUMMY));
	assert_int_equal(chain_vb_state(main_vb, &c[5], CHAIN_VB_TESTDUMMY), CHAIN_VB_FAILED);
	assert_int_equal(chain_vb_deployment(main_vb, CHAIN_VB_TAPROOT)->min_activation_height,
	                 709632);
	chain_vb_free(main_vb);
	chain_vb_free(vb);
	free(c);
}

static void test_statistics(void **state)
{
	(void)state;
	struct chain_node *c = make_chain(300, NULL, almost);
	struct chain_vb *vb = regtest_vb(NULL);
	struct chain_vb_stats st;
	char sig[145];
	/* Block 150: the 7th of its period; block 144 lacks the top bits. */
	chain_vb_statistics(vb, &c[150], CHAIN_VB_TESTDUMMY, &st, sig);
	assert_int_equal(st.period, 144);
	assert_int_equal(st.threshold, 108);
	assert_int_equal(st.elapsed, 7);
	assert_int_equal(st.count, 6);
	assert_true(st.possible);
	assert_string_equal(sig, "-######");
	/* The whole period: 107 signalled, the threshold missed. */
	chain_vb_statistics(vb, &c[287], CHAIN_VB_TESTDUMMY, &st, sig);
	assert_int_equal(st.elapsed, 144);
	assert_int_equal(st.count, 107);
	assert_false(st.possible);
	assert_int_equal(strlen(sig), 144);
	assert_int_equal(chain_vb_state(vb, &c[287], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	chain_vb_free(vb);
	free(c);
}

static void test_timeout_and_min_height(void **state)
{
	(void)state;
	struct chain_node *quiet = make_chain(600, NULL, never_signal);
	/* The timeout passes during the second period: FAILED from 288 for good. */
	struct chain_vb_deployment over[CHAIN_VB_COUNT] = {{0}};
	char err[200];
	assert_int_equal(chain_vb_parse("testdummy:0:1700000200", over, err, sizeof(err)), 0);
	struct chain_vb *vb = regtest_vb(over);
	assert_int_equal(chain_vb_state(vb, &quiet[143], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	assert_int_equal(chain_vb_state(vb, &quiet[287], CHAIN_VB_TESTDUMMY), CHAIN_VB_FAILED);
	assert_int_equal(chain_vb_state(vb, &quiet[599], CHAIN_VB_TESTDUMMY), CHAIN_VB_FAILED);
	assert_int_equal(chain_vb_since(vb, &quiet[599], CHAIN_VB_TESTDUMMY), 288);
	chain_vb_free(vb);
	/* A start in the future: DEFINED throughout. */
	assert_int_equal(chain_vb_parse("testdummy:1800000000:1900000000", over, err, sizeof(err)),
	                 0);
	vb = regtest_vb(over);
	assert_int_equal(chain_vb_state(vb, &quiet[599], CHAIN_VB_TESTDUMMY), CHAIN_VB_DEFINED);
	chain_vb_free(vb);
	/* Locked in at 288 but active only from the period that reaches 500: 576. */
	struct chain_node *loud = make_chain(700, NULL, always_signal);
	assert_int_equal(
	    chain_vb_parse("testdummy:0:9223372036854775807:500", over, err, sizeof(err)), 0);
	vb = regtest_vb(over);
	assert_int_equal(chain_vb_state(vb, &loud[431], CHAIN_VB_TESTDUMMY), CHAIN_VB_LOCKED_IN);
	assert_int_equal(chain_vb_state(vb, &loud[574], CHAIN_VB_TESTDUMMY), CHAIN_VB_LOCKED_IN);
	assert_int_equal(chain_vb_state(vb, &loud[575], CHAIN_VB_TESTDUMMY), CHAIN_VB_ACTIVE);
	assert_int_equal(chain_vb_block_version(vb, &loud[574]), 0x30000000);
	chain_vb_free(vb);
	free(quiet);
	free(loud);
}

/* A branch off block 200 that stops signalling: the cache of the main
 * branch must not answer for it. */
static void test_fork(void **state)
{
	(void)state;
	struct chain_node *main_c = make_chain(450, NULL, always_signal);
	struct chain_node *fork = make_chain(250, &main_c[200], never_signal);
	struct chain_vb *vb = regtest_vb(NULL);
	assert_int_equal(chain_vb_state(vb, &main_c[449], CHAIN_VB_TESTDUMMY), CHAIN_VB_ACTIVE);
	/* fork[k] is at height 201 + k: the period ending at 287 is fork[86]. */
	assert_int_equal(fork[86].height, 287);
	assert_int_equal(chain_vb_state(vb, &fork[86], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	assert_int_equal(chain_vb_state(vb, &fork[249], CHAIN_VB_TESTDUMMY), CHAIN_VB_STARTED);
	assert_int_equal(chain_vb_state(vb, &main_c[300], CHAIN_VB_TESTDUMMY), CHAIN_VB_LOCKED_IN);
	chain_vb_free(vb);
	free(fork);
	free(main_c);
}

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *in, *msg;
	} cases[] = {
	    {"foo", "Version bits parameters malformed, expecting "
	            "deployment:start:end[:min_activation_height]"},
	    {"testdummy:1:2:3:4", "Version bits parameters malformed, expecting "
	                          "deployment:start:end[:min_activation_height]"},
	    {"nope:1:2", "Invalid deployment (nope)"},
	    {"testdummy:x:2", "Invalid nStartTime (x)"},
	    {"testdummy::2", "Invalid nStartTime ()"},
	    {"testdummy:1:+2", "Invalid nTimeout (+2)"},
	    {"testdummy:1:2:z", "Invalid min_activation_height (z)"},
	    {"testdummy:99999999999999999999:2", "Invalid nStartTime (99999999999999999999)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct chain_vb_deployment over[CHAIN_VB_COUNT] = {{0}};
		char err[200] = "";
		assert_int_equal(chain_vb_parse(cases[i].in, over, err, sizeof(err)), -1);
		assert_string_equal(err, cases[i].msg);
		assert_null(over[CHAIN_VB_TESTDUMMY].name);
	}
	struct chain_vb_deployment over[CHAIN_VB_COUNT] = {{0}};
	char err[200];
	assert_int_equal(chain_vb_parse("taproot:-1:-5:7", over, err, sizeof(err)), 0);
	assert_string_equal(over[CHAIN_VB_TAPROOT].name, "taproot");
	assert_int_equal(over[CHAIN_VB_TAPROOT].start_time, -1);
	assert_int_equal(over[CHAIN_VB_TAPROOT].timeout, -5);
	assert_int_equal(over[CHAIN_VB_TAPROOT].min_activation_height, 7);
}

/* Bit 27, which no deployment uses, on every block after genesis. */
static int32_t unknown_bit(int32_t h)
{
	return h ? 0x28000000 : 1;
}

/* Bit 27 on 107 blocks of each period: one short of the threshold. */
static int32_t unknown_short(int32_t h)
{
	return h % 144 < 107 ? 0x28000000 : 0x20000000;
}

/* Core's WarningBitsConditionChecker: bit 27 locked in by the second
 * period and active from the third; bit 28, which this node's own version
 * sets while testdummy is started or locked in, never counts as unknown
 * then; a period one block short locks nothing. */
static void test_unknown_rules(void **state)
{
	(void)state;
	uint32_t locked = 99;
	struct chain_node *c = make_chain(600, NULL, unknown_bit);
	struct chain_vb *vb = regtest_vb(NULL);
	assert_int_equal(chain_vb_unknown_rules(vb, NULL, &locked), 0);
	assert_int_equal(locked, 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[286], &locked), 0);
	assert_int_equal(locked, 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[287], &locked), 0);
	assert_int_equal(locked, 1u << 27);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[430], NULL), 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[431], &locked), 1u << 27);
	assert_int_equal(locked, 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[599], NULL), 1u << 27);
	chain_vb_free(vb);
	free(c);

	c = make_chain(600, NULL, always_signal);
	vb = regtest_vb(NULL);
	/* Blocks 144..431 carry bit 28 as this node would: not unknown. After
	 * testdummy is active (432 on) they are, and lock it in at 575. */
	assert_int_equal(chain_vb_unknown_rules(vb, &c[431], &locked), 0);
	assert_int_equal(locked, 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[575], &locked), 0);
	assert_int_equal(locked, 1u << 28);
	chain_vb_free(vb);
	free(c);

	/* On main a block counts only from 711,648 (taproot's height plus a
	 * window): three periods of bit 27 from genesis lock nothing. */
	c = make_chain(3 * 2016, NULL, unknown_bit);
	assert_int_equal(chain_vb_new(&vb, proto_params(PROTO_NET_MAIN), NULL), 0);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[3 * 2016 - 1], &locked), 0);
	assert_int_equal(locked, 0);
	chain_vb_free(vb);
	free(c);

	c = make_chain(600, NULL, unknown_short);
	vb = regtest_vb(NULL);
	assert_int_equal(chain_vb_unknown_rules(vb, &c[575], &locked), 0);
	assert_int_equal(locked, 0);
	chain_vb_free(vb);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regtest_path),           cmocka_unit_test(test_statistics),
	    cmocka_unit_test(test_timeout_and_min_height), cmocka_unit_test(test_fork),
	    cmocka_unit_test(test_parse_errors),           cmocka_unit_test(test_unknown_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
