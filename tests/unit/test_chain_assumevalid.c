/*
 * tests/unit/test_chain_assumevalid.c: Core's GetBlockProofEquivalentTime
 * (chain_proof_equivalent_time), the depth test of assumevalid: seconds
 * of block production at the tip's difficulty that a work difference
 * stands for, signed, saturating. The whole rule is tested against
 * bitcoind in tests/integration/test_chain_assumevalid.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "chain/chain.h"

/* A node whose chain work is `blocks` blocks of `bits`, with those bits. */
static struct chain_node node_of(uint64_t blocks, uint32_t bits)
{
	struct chain_node n;
	memset(&n, 0, sizeof(n));
	n.bits = bits;
	struct chain_work one;
	chain_work_of_bits(bits, &one);
	for (uint64_t i = 0; i < blocks; i++)
		chain_work_add(&n.work, &one);
	return n;
}

static void test_regtest_blocks(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct chain_node tip = node_of(2118, 0x207fffff), low = node_of(102, 0x207fffff);
	/* 2,016 blocks of ten minutes: exactly two weeks, which Core does not
	 * count as buried (it wants more); 2,017 is past it. */
	assert_int_equal(chain_proof_equivalent_time(&tip, &low, &tip, p), 2016 * 600);
	struct chain_node tip2 = node_of(2119, 0x207fffff);
	assert_true(chain_proof_equivalent_time(&tip2, &low, &tip2, p) > 14 * 24 * 3600);
	/* The other way round: negative. */
	assert_int_equal(chain_proof_equivalent_time(&low, &tip, &tip, p), -2016 * 600);
	assert_int_equal(chain_proof_equivalent_time(&tip, &tip, &tip, p), 0);
}

static void test_mainnet_difficulty(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_MAIN);
	/* At difficulty 1 a retarget period of work is two weeks. */
	struct chain_node tip = node_of(3000, 0x1d00ffff), low = node_of(984, 0x1d00ffff);
	assert_int_equal(chain_proof_equivalent_time(&tip, &low, &tip, p), 2016 * 600);
	/* Measured at a tip about 16 times harder (0x0fffff << 200 against
	 * 0xffff << 208), the same work is about 16 times shorter: the
	 * proofs are 2^256 / (target + 1), so not exactly. */
	struct chain_node hard = tip;
	hard.bits = 0x1c0fffff;
	int64_t t = chain_proof_equivalent_time(&tip, &low, &hard, p);
	assert_in_range(t, 2016 * 600 / 16, 2016 * 600 / 16 + 1);
}

static void test_saturates(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	/* A mainnet-sized work difference seen at regtest's difficulty: far
	 * beyond 63 bits, so INT64_MAX (and its negation), as Core. */
	struct chain_node big = node_of(0, 0x207fffff), zero = node_of(0, 0x207fffff);
	big.work.limb[2] = 1;
	assert_int_equal(chain_proof_equivalent_time(&big, &zero, &zero, p), INT64_MAX);
	assert_int_equal(chain_proof_equivalent_time(&zero, &big, &zero, p), -INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regtest_blocks),
	    cmocka_unit_test(test_mainnet_difficulty),
	    cmocka_unit_test(test_saturates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
