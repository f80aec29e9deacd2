/*
 * tests/unit/test_chain_signet.c: the signet block solution's parsing
 * (chain_check_signet_block) on hand-made coinbases, under challenges
 * whose verdict does not depend on a signature: OP_TRUE passes any
 * solution that parses and has no witness, OP_0 fails every one. Which
 * commitments and solutions parse is Core's (FetchAndClearCommitmentSection,
 * SignetTxs::Create); a signed challenge is tested against Core in
 * tests/integration/test_chain_signet.py. Malformed pushes must neither
 * crash nor read past the script (run it under ASan too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "chain/chain.h"
#include "proto/proto.h"

static const uint8_t HDR[4] = {0xec, 0xc7, 0xda, 0xa2};

/* A block of one coinbase whose outputs are: 50 coins to OP_TRUE, then
 * (when commit) the witness commitment followed by `tail`. */
static void make_block(struct proto_block *b, bool commit, const uint8_t *tail, size_t tail_len)
{
	struct proto_writer w;
	proto_writer_init(&w);
	struct proto_block_header h = {
	    .version = 0x20000000, .time = 1598919000, .bits = 0x1e0377ae};
	proto_block_header_encode(&h, &w);
	proto_write_compact(&w, 1);
	proto_write_u32le(&w, 2);
	proto_write_compact(&w, 1);
	proto_write_bytes(&w, (uint8_t[32]){0}, 32);
	proto_write_u32le(&w, 0xffffffffu);
	proto_write_varbytes(&w, (uint8_t[]){0x51, 0x00}, 2);
	proto_write_u32le(&w, 0xffffffffu);
	proto_write_compact(&w, commit ? 2 : 1);
	proto_write_u64le(&w, 5000000000u);
	proto_write_varbytes(&w, (uint8_t[]){0x51}, 1);
	if (commit) {
		uint8_t script[38 + 400];
		memcpy(script, (uint8_t[]){0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed}, 6);
		memset(script + 6, 0x11, 32);
		assert_true(tail_len <= 400);
		if (tail_len)
			memcpy(script + 38, tail, tail_len);
		proto_write_u64le(&w, 0);
		proto_write_varbytes(&w, script, 38 + tail_len);
	}
	proto_write_u32le(&w, 0);
	assert_int_equal(w.err, 0);
	assert_int_equal(proto_block_decode(w.buf, w.len, b, NULL), 0);
	proto_writer_release(&w);
}

/* The verdict on a block with this tail under this challenge. */
static int verdict(const uint8_t *challenge, size_t clen, bool commit, const uint8_t *tail,
                   size_t tail_len)
{
	const struct proto_params *p = proto_params_signet_custom(challenge, clen);
	assert_non_null(p);
	struct proto_block b;
	proto_block_init(&b);
	make_block(&b, commit, tail, tail_len);
	struct chain_state st;
	chain_state_clear(&st);
	int err = chain_check_signet_block(&b, p, &st);
	if (err == CHAIN_EINVALID)
		assert_string_equal(st.reason, "bad-signet-blksig");
	proto_block_release(&b);
	return err;
}

/* A push of HDR + solution, as a signet miner writes it. */
static size_t solution_push(uint8_t *out, const uint8_t *sol, size_t len)
{
	out[0] = (uint8_t)(4 + len);
	memcpy(out + 1, HDR, 4);
	if (len)
		memcpy(out + 5, sol, len);
	return 5 + len;
}

static const uint8_t OP_TRUE[] = {0x51};
static const uint8_t OP_FALSE[] = {0x00};

static void test_no_solution(void **state)
{
	(void)state;
	/* No solution: an empty scriptSig and witness (OP_TRUE needs none). */
	assert_int_equal(verdict(OP_TRUE, 1, true, NULL, 0), 0);
	assert_int_equal(verdict(OP_FALSE, 1, true, NULL, 0), CHAIN_EINVALID);
	/* A push of the 4 header bytes alone is not a solution either. */
	uint8_t t[8];
	size_t n = solution_push(t, NULL, 0);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), 0);
	/* Without a witness commitment there is no block solution at all. */
	assert_int_equal(verdict(OP_TRUE, 1, false, NULL, 0), CHAIN_EINVALID);
}

static void test_solution_parsing(void **state)
{
	(void)state;
	uint8_t t[64];
	/* An empty scriptSig and no witness items: fine under OP_TRUE. */
	size_t n = solution_push(t, (uint8_t[]){0x00, 0x00}, 2);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), 0);
	assert_int_equal(verdict(OP_FALSE, 1, true, t, n), CHAIN_EINVALID);
	/* A scriptSig pushing 1 then OP_TRUE's own 1: two items on the stack,
	 * still true (no CLEANSTACK among signet's flags). */
	n = solution_push(t, (uint8_t[]){0x01, 0x51, 0x00}, 3);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), 0);
	/* Bytes after the witness: extraneous data. */
	n = solution_push(t, (uint8_t[]){0x00, 0x00, 0x00}, 3);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	/* A scriptSig longer than what is left, a missing witness count. */
	n = solution_push(t, (uint8_t[]){0x05, 0x51}, 2);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	n = solution_push(t, (uint8_t[]){0x00}, 1);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	/* A witness count with too few items. */
	n = solution_push(t, (uint8_t[]){0x00, 0x02, 0x01, 0xaa}, 4);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	/* Witness items parse, but a bare OP_TRUE does not take a witness
	 * (SCRIPT_ERR_WITNESS_UNEXPECTED): the to_sign path with a witness. */
	n = solution_push(t, (uint8_t[]){0x00, 0x01, 0x01, 0xaa}, 4);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	/* A P2WSH challenge of OP_TRUE, its witness script as the witness. */
	uint8_t wsh[34] = {0x00, 0x20};
	proto_sha256((uint8_t[]){0x51}, 1, wsh + 2);
	n = solution_push(t, (uint8_t[]){0x00, 0x01, 0x01, 0x51}, 4);
	assert_int_equal(verdict(wsh, sizeof(wsh), true, t, n), 0);
	n = solution_push(t, (uint8_t[]){0x00, 0x01, 0x01, 0x52}, 4);
	assert_int_equal(verdict(wsh, sizeof(wsh), true, t, n), CHAIN_EINVALID);
}

static void test_malformed_commitment_scripts(void **state)
{
	(void)state;
	/* Only the first push that starts with the header and has more
	 * counts; later ones are left alone. */
	uint8_t t[64];
	size_t n = solution_push(t, (uint8_t[]){0x00, 0x00}, 2);
	n += solution_push(t + n, (uint8_t[]){0xff}, 1);
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), 0);
	/* Truncated pushes after the commitment: Core's GetOp stops there;
	 * nothing is read past the script. */
	const uint8_t *tails[] = {
	    (uint8_t[]){0x4c},                         /* PUSHDATA1 without its length */
	    (uint8_t[]){0x4d, 0x01},                   /* PUSHDATA2 with half a length */
	    (uint8_t[]){0x4e, 0xff, 0xff, 0xff, 0xff}, /* PUSHDATA4 of 4 GiB */
	    (uint8_t[]){0x4b, 0xec, 0xc7, 0xda, 0xa2}, /* a 75-byte push of 4 */
	};
	size_t lens[] = {1, 2, 5, 5};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_int_equal(verdict(OP_TRUE, 1, true, tails[i], lens[i]), 0);
	/* A solution push, then a truncated one: the solution was still read
	 * (its extraneous byte fails it). */
	n = solution_push(t, (uint8_t[]){0x00, 0x00, 0x00}, 3);
	t[n++] = 0x4e;
	assert_int_equal(verdict(OP_TRUE, 1, true, t, n), CHAIN_EINVALID);
	/* The solution in a PUSHDATA1 push (a longer scriptSig). */
	uint8_t big[2 + 4 + 82];
	big[0] = 0x4c;
	big[1] = 4 + 82;
	memcpy(big + 2, HDR, 4);
	big[6] = 80; /* scriptSig: 80 pushes of OP_1 */
	memset(big + 7, 0x51, 80);
	big[87] = 0x00;
	assert_int_equal(verdict(OP_TRUE, 1, true, big, sizeof(big)), 0);
}

static void test_custom_params(void **state)
{
	(void)state;
	/* Core's message start for challenge 51 (bitcoind -signet
	 * -signetchallenge=51 logs "Signet derived magic (message start):
	 * 54d26fbd"). */
	const struct proto_params *p = proto_params_signet_custom(OP_TRUE, 1);
	assert_int_equal(p->magic, 0xbd6fd254u);
	assert_true(p->signet_custom);
	assert_null(p->assume_valid);
	const struct proto_params *d = proto_params(PROTO_NET_SIGNET);
	assert_false(d->signet_custom);
	assert_int_equal(d->magic, 0x40cf030au);
	assert_memory_equal(&p->genesis_hash, &d->genesis_hash, 32);
	uint8_t big[PROTO_MAX_SIGNET_CHALLENGE + 1] = {0};
	assert_null(proto_params_signet_custom(big, sizeof(big)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_solution),
	    cmocka_unit_test(test_solution_parsing),
	    cmocka_unit_test(test_malformed_commitment_scripts),
	    cmocka_unit_test(test_custom_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
