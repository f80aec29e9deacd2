/*
 * tests/unit/test_mempool_policy_inputs.c: Core 29's standardness rules for
 * what a transaction spends (mempool/policy.c): AreInputsStandard,
 * IsWitnessStandard and the sigop limits, each at its boundary, and Core's
 * own regtest wallet transactions (which Core's mempool accepted) passing
 * every rule. The rules on the transaction itself: test_mempool_policy.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/testutil_policy.h"

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
	    cmocka_unit_test(test_inputs),
	    cmocka_unit_test(test_witness),
	    cmocka_unit_test(test_sigops),
	    cmocka_unit_test(test_core_wallet_txs),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
