/*
 * tests/unit/test_mining.c: mining/miner.c. The coinbase byte for byte
 * as Core's miner writes it, the witness commitment of a coinbase-only
 * block (the constant every such regtest block of Core's carries), the
 * grind's budget with Core's GenerateBlock semantics, and whole blocks on
 * a regtest chain: time, bits, reward, a transaction's fees claimed (or
 * left unclaimed, as Core's generateblock), a bad transaction refused with
 * Core's reason, submit or not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mining/mining.h"
#include "tests/unit/testutil.h"

/* The commitment of a block whose only transaction is the coinbase. */
#define EMPTY_COMMITMENT                                                                           \
	"6a24aa21a9ede2f61c3f71d1defd3fa999dfa36953755c690689799962b48bebd836974e8cf9"

static void expect_hex(const uint8_t *data, size_t len, const char *want)
{
	char *got = tu_hex(data, len);
	if (strcmp(got, want))
		fail_msg("bytes\n  got      %s\n  expected %s", got, want);
	free(got);
}

static void test_commitment(void **state)
{
	(void)state;
	struct proto_hash zero = {{0}};
	uint8_t out[MINING_WITNESS_COMMITMENT_SIZE];
	mining_commitment(&zero, out);
	expect_hex(out, sizeof(out), EMPTY_COMMITMENT);
}

static void coinbase_hex(int32_t height, bool commit, const char *want)
{
	static const uint8_t spk[1] = {0x51};
	uint8_t c[MINING_WITNESS_COMMITMENT_SIZE];
	struct proto_hash zero = {{0}};
	mining_commitment(&zero, c);
	struct mining_coinbase cb = {
	    .height = height,
	    .spk = spk,
	    .spk_len = 1,
	    .value = 5000000000,
	    .commitment = commit ? c : NULL,
	};
	struct proto_writer w;
	proto_writer_init(&w);
	mining_write_coinbase(&cb, &w);
	assert_int_equal(w.err, 0);
	expect_hex(w.buf, w.len, want);
	/* and it is a coinbase to peerd's decoder */
	struct proto_tx tx;
	proto_tx_init(&tx);
	assert_int_equal(proto_tx_decode_buf(w.buf, w.len, &tx, NULL), 0);
	assert_true(proto_tx_is_coinbase(&tx));
	assert_int_equal(tx.has_witness, commit);
	proto_tx_release(&tx);
	proto_writer_release(&w);
}

#define NULL_IN "010000000000000000000000000000000000000000000000000000000000000000ffffffff"
#define PAY     "00f2052a010000000151"

static void test_coinbase_bytes(void **state)
{
	(void)state;
	/* `CScript() << 1 << OP_0`: OP_1 OP_0 */
	coinbase_hex(1, true,
	             "020000000001" NULL_IN "025100ffffffff02" PAY "0000000000000000"
	             "26" EMPTY_COMMITMENT "0120"
	             "0000000000000000000000000000000000000000000000000000000000000000"
	             "00000000");
	/* 17 is a one-byte push; 128 needs a sign byte; no commitment, no witness */
	coinbase_hex(17, false, "02000000" NULL_IN "03011100ffffffff01" PAY "00000000");
	coinbase_hex(128, false, "02000000" NULL_IN "0402800000ffffffff01" PAY "00000000");
	coinbase_hex(500000, false, "02000000" NULL_IN "050320a10700ffffffff01" PAY "00000000");
}

static void test_grind_budget(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct proto_block_header h = {.version = MINING_BLOCK_VERSION, .bits = p->pow_limit_bits};
	struct proto_hash hash;
	uint64_t tries = 0;
	/* no budget: nothing is tried, even a nonce that would do */
	assert_int_equal(mining_grind(&h, &p->pow_limit, &tries, NULL, &hash),
	                 MINING_GRIND_NO_TRIES);
	assert_int_equal(h.nonce, 0);
	/* regtest's target: found within a few; each miss costs one try */
	tries = 1000;
	assert_int_equal(mining_grind(&h, &p->pow_limit, &tries, NULL, &hash), MINING_GRIND_FOUND);
	assert_int_equal(tries, 1000 - h.nonce);
	assert_true(proto_check_pow(&hash, h.bits, &p->pow_limit));
	struct proto_hash again;
	proto_block_header_hash(&h, &again);
	assert_true(proto_hash_eq(&hash, &again));
	/* a target nothing meets: the budget runs out after exactly k hashes */
	h.nonce = 0;
	h.bits = 0x03000001;
	tries = 10;
	assert_int_equal(mining_grind(&h, &p->pow_limit, &tries, NULL, &hash),
	                 MINING_GRIND_NO_TRIES);
	assert_int_equal(h.nonce, 10);
	assert_int_equal(tries, 0);
	/* an interrupt stops it before the next hash, the budget untouched */
	_Atomic bool stop = true;
	h.nonce = 0;
	tries = 10;
	assert_int_equal(mining_grind(&h, &p->pow_limit, &tries, &stop, &hash),
	                 MINING_GRIND_INTERRUPTED);
	assert_int_equal(h.nonce, 0);
	assert_int_equal(tries, 10);
	/* the last nonce is not tried: a new template is Core's answer */
	h.nonce = UINT32_MAX - 2;
	tries = 100;
	assert_int_equal(mining_grind(&h, &p->pow_limit, &tries, NULL, &hash),
	                 MINING_GRIND_WRAPPED);
	assert_int_equal(h.nonce, UINT32_MAX);
	assert_int_equal(tries, 98);
}

/* ---- blocks on a chain ------------------------------------------------------ */

static int64_t fake_now;
static int64_t clock_now(void)
{
	return fake_now;
}

struct fixture {
	char dir[64];
	struct chain *c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/peerd-miner-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	/* regtest's genesis is from 2011: the clock starts a day after it */
	struct proto_block g;
	proto_block_init(&g);
	assert_int_equal(proto_block_decode(p->genesis, p->genesis_len, &g, NULL), 0);
	fake_now = (int64_t)g.hdr.time + 86400;
	proto_block_release(&g);
	struct chain_config cfg = {.params = p, .dir = f->dir, .par = 2, .now = clock_now};
	int err = chain_open(&f->c, &cfg);
	if (err)
		fail_msg("chain_open: %s", chain_strerror(err));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(chain_close(f->c), 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* P2WPKH of a hash that needs no key: the outputs here are never spent
 * by a signature (the spending test uses an OP_TRUE output). */
static const uint8_t OP_TRUE_SPK[1] = {0x51};

static void mine(struct chain *c, const struct mining_args *a, struct mining_block *m)
{
	uint64_t tries = MINING_MAX_TRIES;
	struct chain_state st;
	int err = mining_generate(c, a, &tries, m, &st);
	if (err)
		fail_msg("mining_generate: %s (%s %s)", chain_strerror(err), st.reason, st.debug);
}

static void test_mine_blocks(void **state)
{
	struct fixture *f = *state;
	struct chain *c = f->c;
	struct mining_args a = {.spk = OP_TRUE_SPK, .spk_len = 1, .submit = true};
	struct mining_block m;
	for (int i = 1; i <= 3; i++) {
		mine(c, &a, &m);
		assert_int_equal(m.submitted, CHAIN_SUBMIT_ACCEPTED);
		assert_int_equal(m.height, i);
		assert_int_equal(chain_height(c), i);
		assert_true(proto_hash_eq(&chain_tip(c)->hash, &m.hash));
		/* max(MTP + 1, now): the clock's for the first block, then
		 * the MTP, which the blocks at the clock's time push on */
		int64_t mtp1 = chain_node_mtp(chain_tip(c)->prev) + 1;
		assert_int_equal(chain_tip(c)->time, mtp1 > fake_now ? mtp1 : fake_now);
		if (i == 1)
			assert_int_equal(chain_tip(c)->time, (uint32_t)fake_now);
		mining_block_release(&m);
	}
	/* a clock behind the MTP: one second past it */
	fake_now -= 3600;
	mine(c, &a, &m);
	assert_int_equal(chain_tip(c)->time, chain_node_mtp(chain_tip(c)->prev) + 1);
	assert_int_equal(chain_tip(c)->bits, proto_params(PROTO_NET_REGTEST)->pow_limit_bits);
	mining_block_release(&m);
	fake_now += 3600;

	/* not submitted: the tip stays, and the block is valid when it is */
	struct chain_node *tip = chain_tip(c);
	a.submit = false;
	mine(c, &a, &m);
	assert_ptr_equal(chain_tip(c), tip);
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(m.raw, m.len, &b, NULL), 0);
	assert_int_equal(b.n_tx, 1);
	assert_int_equal(b.txs[0].vout[0].value, 5000000000);
	enum chain_submit r;
	struct chain_state st;
	assert_int_equal(chain_submit_block(c, m.raw, m.len, &b, &r, &st), 0);
	assert_int_equal(r, CHAIN_SUBMIT_ACCEPTED);
	proto_block_release(&b);
	mining_block_release(&m);

	/* no tries: no block */
	uint64_t tries = 0;
	assert_int_equal(mining_generate(c, &a, &tries, &m, &st), CHAIN_ENOTFOUND);
	assert_null(m.raw);
}

/* A version-2 transaction spending (txid, 0), an OP_TRUE output, to OP_TRUE. */
static void spend_op_true(const struct proto_hash *txid, int64_t value, struct proto_writer *w)
{
	struct proto_txin in = {.prevout = {.txid = *txid, .n = 0}, .sequence = 0xffffffffu};
	struct proto_txout out = {.value = value};
	proto_write_u32le(w, 2);
	proto_write_compact(w, 1);
	proto_txin_encode(&in, NULL, 0, w);
	proto_write_compact(w, 1);
	proto_txout_encode(&out, OP_TRUE_SPK, 1, w);
	proto_write_u32le(w, 0);
}

static void test_mine_with_transactions(void **state)
{
	struct fixture *f = *state;
	struct chain *c = f->c;
	struct mining_args a = {.spk = OP_TRUE_SPK, .spk_len = 1, .submit = true};
	struct mining_block m;
	mine(c, &a, &m);
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(m.raw, m.len, &b, NULL), 0);
	struct proto_hash cb_txid = *proto_tx_txid(&b.txs[0]);
	mining_block_release(&m);
	for (int i = 0; i < 100; i++) {
		mine(c, &a, &m);
		mining_block_release(&m);
	}
	/* block 1's coinbase is mature at height 102: spend it with a fee */
	struct proto_writer w;
	proto_writer_init(&w);
	spend_op_true(&cb_txid, 5000000000 - 12345, &w);
	struct mining_tx tx = {.raw = w.buf, .len = w.len};
	a.txs = &tx;
	a.n_txs = 1;
	/* Core's generateblock: the fee stays unclaimed (not submitted here) */
	a.subsidy_only = true;
	a.submit = false;
	mine(c, &a, &m);
	assert_int_equal(m.fees, 0);
	assert_int_equal(proto_block_decode(m.raw, m.len, &b, NULL), 0);
	assert_int_equal(b.n_tx, 2);
	assert_int_equal(b.txs[0].vout[0].value, 5000000000);
	mining_block_release(&m);
	a.subsidy_only = false;
	a.submit = true;
	mine(c, &a, &m);
	assert_int_equal(m.fees, 12345);
	assert_int_equal(m.submitted, CHAIN_SUBMIT_ACCEPTED);
	assert_int_equal(proto_block_decode(m.raw, m.len, &b, NULL), 0);
	assert_int_equal(b.n_tx, 2);
	assert_int_equal(b.txs[0].vout[0].value, 5000000000 + 12345);
	mining_block_release(&m);

	/* again: the coin is spent, Core's reason, nothing changes */
	struct chain_node *tip = chain_tip(c);
	uint64_t tries = MINING_MAX_TRIES;
	struct chain_state st;
	w.len = 0;
	spend_op_true(&cb_txid, 5000000000 - 1, &w);
	tx.raw = w.buf;
	tx.len = w.len;
	assert_int_equal(mining_generate(c, &a, &tries, &m, &st), CHAIN_EINVALID);
	assert_string_equal(st.reason, "bad-txns-inputs-missingorspent");
	assert_ptr_equal(chain_tip(c), tip);
	assert_int_equal(tries, MINING_MAX_TRIES);
	/* bytes that are no transaction */
	tx.len = 3;
	assert_int_equal(mining_generate(c, &a, &tries, &m, &st), CHAIN_EARG);
	proto_writer_release(&w);
	proto_block_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_commitment),
	    cmocka_unit_test(test_coinbase_bytes),
	    cmocka_unit_test(test_grind_budget),
	    cmocka_unit_test_setup_teardown(test_mine_blocks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mine_with_transactions, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
