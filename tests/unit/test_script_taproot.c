/*
 * tests/unit/test_script_taproot.c: taproot with real keys and signatures
 * made here with libsecp256k1: key path (amounts signed, explicit hash
 * types, SINGLE without an output, the annex), script path (a two-leaf
 * tree, wrong siblings and control blocks, CHECKSIGADD), tapscript rules
 * (OP_SUCCESSx, leaf versions, MINIMALIF, no CHECKMULTISIG, key types, no
 * size limits) and the validation weight budget with OP_CODESEPARATOR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil_sig.h"

/* ---- taproot ------------------------------------------------------------------- */

static void test_taproot_key_path(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	uint8_t internal[32], tweak[32], q[32], hash[32];
	int parity;
	struct script_tap_exec ex = {0};
	ex.codesep_pos = UINT32_MAX;
	tu_xonly(30, internal);
	script_taproot_tweak(internal, NULL, tweak);
	assert_int_equal(script_taproot_output_key(internal, NULL, q, &parity), 0);
	s->spk[0][0] = SCRIPT_OP_1;
	s->spk[0][1] = 32;
	memcpy(s->spk[0] + 2, q, 32);
	s->spk_len[0] = 34;
	s->amount[0] = 100000;

	tu_tap_hash(s, 0, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[0].wit_len[0] = tu_schnorr_sign(30, tweak, hash, 0, s->in[0].wit[0]);
	s->in[0].n_wit = 1;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* without TAPROOT, v1 is anyone-can-spend */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     tu_verify(s, 0, SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS));
	/* no precomputed data: a taproot check cannot run */
	tu_expect_script_err(SCRIPT_ERR_MISSING_DATA,
	                     tu_verify_in(s, 0, SCRIPT_VERIFY_CONSENSUS, false));
	/* the amounts of all inputs are signed */
	s->amount[0]++;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->amount[0]--;
	s->in[0].wit[0][10] ^= 1;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit_len[0] = 63;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG_SIZE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

	/* explicit hash types; 0x00 may not be spelled out */
	s->in[0].n_wit = 1;
	tu_tap_hash(s, 0, SCRIPT_SIGHASH_SINGLE | SCRIPT_SIGHASH_ANYONECANPAY, &ex, hash);
	s->in[0].wit_len[0] = tu_schnorr_sign(30, tweak, hash, 0x83, s->in[0].wit[0]);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit[0][64] = 0x00;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[0][64] = 0x84;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* SINGLE with no matching output */
	struct tu_txspec *t = tu_spec_new(2, 1);
	memcpy(t->spk[1], s->spk[0], 34);
	t->spk_len[1] = 34;
	t->in[1].n_wit = 1;
	memset(t->in[1].wit[0], 1, 64);
	t->in[1].wit[0][64] = SCRIPT_SIGHASH_SINGLE;
	t->in[1].wit_len[0] = 65;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE,
	                     tu_verify(t, 1, SCRIPT_VERIFY_CONSENSUS));
	free(t);

	/* an annex is committed to */
	ex.annex_present = true;
	uint8_t annex[3] = {SCRIPT_ANNEX_TAG, 7, 7};
	uint8_t ser[4] = {3, SCRIPT_ANNEX_TAG, 7, 7};
	proto_sha256(ser, 4, ex.annex_hash);
	tu_tap_hash(s, 0, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[0].wit_len[0] = tu_schnorr_sign(30, tweak, hash, 0, s->in[0].wit[0]);
	memcpy(s->in[0].wit[1], annex, 3);
	s->in[0].wit_len[1] = 3;
	s->in[0].n_wit = 2;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 1;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	free(s);
}

/* A two-leaf tree; fills spk and returns the control block for leaf `which`. */
struct tap_tree {
	uint8_t internal[32];
	uint8_t leaf[2][TU_ITEM_MAX];
	size_t leaf_len[2];
	uint8_t leaf_version[2];
	uint8_t leaf_hash[2][32];
	uint8_t root[32];
	uint8_t q[32];
	int parity;
};

static void tree_finish(struct tap_tree *t, struct tu_txspec *s, size_t i)
{
	tu_xonly(40, t->internal);
	for (int k = 0; k < 2; k++)
		script_tapleaf_hash(t->leaf_version[k], t->leaf[k], t->leaf_len[k],
		                    t->leaf_hash[k]);
	script_tapbranch_hash(t->leaf_hash[0], t->leaf_hash[1], t->root);
	assert_int_equal(script_taproot_output_key(t->internal, t->root, t->q, &t->parity), 0);
	s->spk[i][0] = SCRIPT_OP_1;
	s->spk[i][1] = 32;
	memcpy(s->spk[i] + 2, t->q, 32);
	s->spk_len[i] = 34;
	s->amount[i] = 4242;
}

/* Witness: the given stack items, then leaf `which` and its control block. */
static void tree_spend(const struct tap_tree *t, struct tu_txspec *s, size_t i, int which,
                       size_t n_items)
{
	struct tu_inspec *in = &s->in[i];
	memcpy(in->wit[n_items], t->leaf[which], t->leaf_len[which]);
	in->wit_len[n_items] = t->leaf_len[which];
	uint8_t *cb = in->wit[n_items + 1];
	cb[0] = (uint8_t)(t->leaf_version[which] | t->parity);
	memcpy(cb + 1, t->internal, 32);
	memcpy(cb + 33, t->leaf_hash[1 - which], 32);
	in->wit_len[n_items + 1] = 65;
	in->n_wit = n_items + 2;
}

static size_t tap_sign_leaf(const struct tap_tree *t, struct tu_txspec *s, size_t i, int which,
                            int key, uint32_t codesep, uint8_t out[65])
{
	struct script_tap_exec ex = {0};
	uint8_t hash[32];
	ex.tapscript = true;
	memcpy(ex.tapleaf_hash, t->leaf_hash[which], 32);
	ex.codesep_pos = codesep;
	tu_tap_hash(s, i, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	return tu_schnorr_sign(key, NULL, hash, 0, out);
}

static void test_taproot_script_path(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k1[32], k2[32];
	tu_xonly(41, k1);
	tu_xonly(42, k2);
	/* leaf 0: <k1> CHECKSIG; leaf 1: <k1> CHECKSIG <k2> CHECKSIGADD 2 NUMEQUAL */
	tu_push(t->leaf[0], &t->leaf_len[0], k1, 32);
	tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	tu_push(t->leaf[1], &t->leaf_len[1], k1, 32);
	tu_op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_CHECKSIG);
	tu_push(t->leaf[1], &t->leaf_len[1], k2, 32);
	tu_op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_CHECKSIGADD);
	tu_op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_2);
	tu_op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_NUMEQUAL);
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);

	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 41, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* the wrong sibling, a broken internal key, a bad control size */
	s->in[0].wit[2][40] ^= 1;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[2][40] ^= 1;
	s->in[0].wit[2][0] ^= 1; /* parity */
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[2][0] ^= 1;
	s->in[0].wit_len[2] = 64;
	tu_expect_script_err(SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit_len[2] = 65;
	/* a failing non-empty signature is an error in tapscript */
	s->in[0].wit[0][3] ^= 1;
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* an empty one is just false */
	s->in[0].wit_len[0] = 0;
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

	/* leaf 1: both signatures (stack: sig2 sig1, sig1 on top) */
	s->in[0].wit_len[1] = tap_sign_leaf(t, s, 0, 1, 41, UINT32_MAX, s->in[0].wit[1]);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 1, 42, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 1, 2);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit_len[0] = 0;
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(t);
	free(s);
}

/* Spend a one-script tree (leaf 0 = script, leaf 1 = OP_1) with the given stack. */
static int run_tapscript(const uint8_t *script, size_t len, uint8_t version,
                         const uint8_t *const *items, const size_t *lens, size_t n, uint32_t flags)
{
	struct tu_txspec *s = tu_spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	memcpy(t->leaf[0], script, len);
	t->leaf_len[0] = len;
	t->leaf[1][0] = SCRIPT_OP_1;
	t->leaf_len[1] = 1;
	t->leaf_version[0] = version;
	t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);
	for (size_t k = 0; k < n; k++) {
		memcpy(s->in[0].wit[k], items[k], lens[k]);
		s->in[0].wit_len[k] = lens[k];
	}
	tree_spend(t, s, 0, 0, n);
	int err = tu_verify(s, 0, flags);
	free(t);
	free(s);
	return err;
}

static void test_tapscript_rules(void **state)
{
	(void)state;
	const uint8_t one[1] = {1}, two[1] = {2};
	const uint8_t *it[2] = {two, one};
	size_t lens[2] = {1, 1};
	uint8_t sc[64];

	/* OP_SUCCESSx: succeeds before anything else, discouraged by policy */
	uint8_t success[] = {SCRIPT_OP_RETURN, 0x50};
	tu_expect_script_err(
	    SCRIPT_ERR_OK, run_tapscript(success, 2, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(
	    SCRIPT_ERR_DISCOURAGE_OP_SUCCESS,
	    run_tapscript(success, 2, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_STANDARD));
	/* but a malformed push before it is still an error */
	uint8_t bad_push[] = {0x05, 0x50};
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run_tapscript(bad_push, 2, 0xc0, NULL, NULL, 0,
	                                                          SCRIPT_VERIFY_CONSENSUS));
	/* unknown leaf versions */
	uint8_t ret[] = {SCRIPT_OP_RETURN};
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run_tapscript(ret, 1, 0xc2, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION,
	                     run_tapscript(ret, 1, 0xc2, NULL, NULL, 0, SCRIPT_VERIFY_STANDARD));
	/* MINIMALIF is consensus */
	uint8_t ifs[] = {SCRIPT_OP_IF, SCRIPT_OP_1, SCRIPT_OP_ELSE, SCRIPT_OP_1, SCRIPT_OP_ENDIF};
	tu_expect_script_err(
	    SCRIPT_ERR_TAPSCRIPT_MINIMALIF,
	    run_tapscript(ifs, sizeof(ifs), 0xc0, it, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_OK, run_tapscript(ifs, sizeof(ifs), 0xc0, it + 1, lens, 1,
	                                                  SCRIPT_VERIFY_CONSENSUS));
	/* no CHECKMULTISIG; CHECKSIGADD exists */
	uint8_t cms[] = {SCRIPT_OP_0, SCRIPT_OP_0, SCRIPT_OP_0, SCRIPT_OP_CHECKMULTISIG};
	tu_expect_script_err(
	    SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG,
	    run_tapscript(cms, sizeof(cms), 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	/* keys: empty fails, unknown types pass (discouraged) */
	size_t n = 0;
	tu_op(sc, &n, SCRIPT_OP_0);
	tu_op(sc, &n, SCRIPT_OP_CHECKSIG);
	tu_expect_script_err(SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY,
	                     run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	uint8_t k33[33] = {2, 1};
	n = 0;
	tu_push(sc, &n, k33, 33);
	tu_op(sc, &n, SCRIPT_OP_CHECKSIG);
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE,
	                     run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_STANDARD));
	/* no 201-opcode limit and no 10,000-byte limit in tapscript */
	uint8_t *many = malloc(12001);
	memset(many, SCRIPT_OP_NOP, 12000);
	many[12000] = SCRIPT_OP_1;
	tu_expect_script_err(SCRIPT_ERR_OK, run_tapscript(many, 12001, 0xc0, NULL, NULL, 0,
	                                                  SCRIPT_VERIFY_CONSENSUS));
	free(many);
}

/* The validation weight budget: N+1 signature checks of one signature. */
static int run_weight(int reps)
{
	struct tu_txspec *s = tu_spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k[32];
	tu_xonly(43, k);
	for (int r = 0; r < reps; r++) {
		tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_DUP);
		tu_push(t->leaf[0], &t->leaf_len[0], k, 32);
		tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIGVERIFY);
	}
	tu_push(t->leaf[0], &t->leaf_len[0], k, 32);
	tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	t->leaf[1][0] = SCRIPT_OP_1;
	t->leaf_len[1] = 1;
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 43, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	int err = tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS);
	free(t);
	free(s);
	return err;
}

static void test_tapscript_weight_and_codesep(void **state)
{
	(void)state;
	tu_expect_script_err(SCRIPT_ERR_OK, run_weight(2));
	tu_expect_script_err(SCRIPT_ERR_OK, run_weight(8));
	tu_expect_script_err(SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT, run_weight(20));

	/* CODESEPARATOR at opcode position 1: the signature commits to it */
	struct tu_txspec *s = tu_spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k[32];
	tu_xonly(44, k);
	tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_NOP);
	tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CODESEPARATOR);
	tu_push(t->leaf[0], &t->leaf_len[0], k, 32);
	tu_op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	t->leaf[1][0] = SCRIPT_OP_1;
	t->leaf_len[1] = 1;
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 44, 1, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 44, UINT32_MAX, s->in[0].wit[0]);
	tu_expect_script_err(SCRIPT_ERR_SCHNORR_SIG, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(t);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_taproot_key_path),
	    cmocka_unit_test(test_taproot_script_path),
	    cmocka_unit_test(test_tapscript_rules),
	    cmocka_unit_test(test_tapscript_weight_and_codesep),
	};
	int rc = cmocka_run_group_tests(tests, tu_secp_setup, tu_secp_teardown);
	proto_freelist_drain();
	return rc;
}
