/*
 * tests/unit/test_script_sig.c: signature checks with real keys and
 * signatures made here with libsecp256k1: legacy (P2PK, P2PKH, bare
 * multisig, every sighash type, the SIGHASH_SINGLE bug, FindAndDelete,
 * OP_CODESEPARATOR), encodings (DER, low S, hash types, key types),
 * witness v0 (P2WPKH, P2WSH, nested in P2SH). Also: the common path
 * allocates nothing, and threads share one precomputed struct. Taproot is
 * in test_script_taproot.c; the shared scaffolding in testutil_sig.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <secp256k1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <secp256k1_extrakeys.h>

#include "script/internal.h"
#include "script/script.h"
#include "tests/unit/testutil_sig.h"

/* ---- legacy ------------------------------------------------------------------- */

/* Sign input 0 of s as P2PKH with key 1 and the given hash type and key form. */
static void sign_p2pkh(struct tu_txspec *s, size_t i, enum tu_keyform form, uint8_t hash_type)
{
	uint8_t pub[65], sig[80], hash[32];
	size_t pl = tu_pubkey(1, form, pub);
	s->spk_len[i] = tu_p2pkh(pub, pl, s->spk[i]);
	tu_legacy_hash(s, i, s->spk[i], s->spk_len[i], hash_type, hash);
	size_t sl = tu_ecdsa_sign(1, hash, hash_type, sig);
	s->in[i].sig_len = 0;
	tu_push(s->in[i].sig, &s->in[i].sig_len, sig, sl);
	tu_push(s->in[i].sig, &s->in[i].sig_len, pub, pl);
}

static void test_p2pkh(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 2);
	sign_p2pkh(s, 0, TU_COMPRESSED, SCRIPT_SIGHASH_ALL);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_NONE));
	/* a changed output invalidates SIGHASH_ALL */
	s->out_value[1]++;
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLFAIL, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* NONE does not sign outputs; SINGLE signs only its own */
	sign_p2pkh(s, 0, TU_COMPRESSED, SCRIPT_SIGHASH_NONE);
	s->out_value[1]++;
	s->out_value[0]++;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	sign_p2pkh(s, 0, TU_COMPRESSED, SCRIPT_SIGHASH_SINGLE);
	s->out_value[1]++;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->out_value[0]++;
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* uncompressed keys are fine in legacy scripts */
	sign_p2pkh(s, 0, TU_UNCOMPRESSED, SCRIPT_SIGHASH_ALL | SCRIPT_SIGHASH_ANYONECANPAY);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* hybrid keys: valid by consensus, not STRICTENC */
	sign_p2pkh(s, 0, TU_HYBRID, SCRIPT_SIGHASH_ALL);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_PUBKEYTYPE, tu_verify(s, 0, SCRIPT_VERIFY_STRICTENC));
	/* an undefined hash type: consensus-valid, not STRICTENC */
	sign_p2pkh(s, 0, TU_COMPRESSED, 0x04);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_SIG_HASHTYPE, tu_verify(s, 0, SCRIPT_VERIFY_STRICTENC));
	free(s);
}

/* n - s for a 32-byte big-endian s (the curve order n). */
static void negate_s(uint8_t s[32])
{
	static const uint8_t n[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                              0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
	                              0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b,
	                              0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
	int borrow = 0;
	for (int i = 31; i >= 0; i--) {
		int d = n[i] - s[i] - borrow;
		borrow = d < 0;
		s[i] = (uint8_t)(d + (borrow ? 256 : 0));
	}
}

static void test_signature_encodings(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	uint8_t pub[65], hash[32], der[80], compact[64];
	size_t pl = tu_pubkey(2, TU_COMPRESSED, pub);
	uint8_t sk[32];
	secp256k1_ecdsa_signature sig;
	/* P2PK */
	s->spk_len[0] = 0;
	tu_push(s->spk[0], &s->spk_len[0], pub, pl);
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKSIG);
	tu_legacy_hash(s, 0, s->spk[0], s->spk_len[0], SCRIPT_SIGHASH_ALL, hash);
	tu_seckey(2, sk);
	assert_int_equal(secp256k1_ecdsa_sign(tu_secp, &sig, hash, sk, NULL, NULL), 1);
	secp256k1_ecdsa_signature_serialize_compact(tu_secp, compact, &sig);

	/* high S: valid (normalized before verifying) unless LOW_S */
	negate_s(compact + 32);
	assert_int_equal(secp256k1_ecdsa_signature_parse_compact(tu_secp, &sig, compact), 1);
	size_t dl = 72;
	secp256k1_ecdsa_signature_serialize_der(tu_secp, der, &dl, &sig);
	der[dl++] = SCRIPT_SIGHASH_ALL;
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, der, dl);
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_STRICTENC));
	tu_expect_script_err(SCRIPT_ERR_SIG_HIGH_S, tu_verify(s, 0, SCRIPT_VERIFY_LOW_S));

	/* a padded R: lax DER accepts it, BIP66 does not */
	negate_s(compact + 32);
	assert_int_equal(secp256k1_ecdsa_signature_parse_compact(tu_secp, &sig, compact), 1);
	dl = 72;
	secp256k1_ecdsa_signature_serialize_der(tu_secp, der, &dl, &sig);
	uint8_t padded[82];
	size_t rlen = der[3];
	padded[0] = 0x30;
	padded[1] = (uint8_t)(der[1] + 1);
	padded[2] = 0x02;
	padded[3] = (uint8_t)(rlen + 1);
	padded[4] = 0x00;
	memcpy(padded + 5, der + 4, dl - 4);
	padded[dl + 1] = SCRIPT_SIGHASH_ALL;
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, padded, dl + 2);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_SIG_DER, tu_verify(s, 0, SCRIPT_VERIFY_DERSIG));

	/* a long-form sequence length: lax skips it */
	uint8_t longform[84];
	longform[0] = 0x30;
	longform[1] = 0x81;
	longform[2] = der[1];
	memcpy(longform + 3, der + 2, dl - 2);
	longform[dl + 1] = SCRIPT_SIGHASH_ALL;
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, longform, dl + 2);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_SIG_DER, tu_verify(s, 0, SCRIPT_VERIFY_DERSIG));

	/* garbage that is not even lax DER: a false CHECKSIG, not an error */
	uint8_t junk[10] = {0x31, 1, 2, 3, 4, 5, 6, 7, 8, SCRIPT_SIGHASH_ALL};
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, junk, sizeof(junk));
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLFAIL, tu_verify(s, 0, SCRIPT_VERIFY_NULLFAIL));
	/* the empty signature is the clean way to fail */
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(s);
}

static void test_sighash_single_bug(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(2, 1);
	uint8_t pub[65], sig[80], hash[32];
	size_t pl = tu_pubkey(3, TU_COMPRESSED, pub);
	s->spk_len[1] = tu_p2pkh(pub, pl, s->spk[1]);
	/* input 1 has no output 1: the signed hash is the number 1 */
	tu_legacy_hash(s, 1, s->spk[1], s->spk_len[1], SCRIPT_SIGHASH_SINGLE, hash);
	uint8_t one[32] = {1};
	assert_memory_equal(hash, one, 32);
	size_t sl = tu_ecdsa_sign(3, one, SCRIPT_SIGHASH_SINGLE, sig);
	tu_push(s->in[1].sig, &s->in[1].sig_len, sig, sl);
	tu_push(s->in[1].sig, &s->in[1].sig_len, pub, pl);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 1, SCRIPT_VERIFY_STANDARD));
	/* and it signs nothing: any change to the transaction keeps it valid */
	s->out_value[0] += 5;
	s->locktime = 77;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 1, SCRIPT_VERIFY_STANDARD));
	free(s);
}

static void test_multisig_legacy(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	uint8_t pub[3][65], sig[2][80], hash[32];
	size_t pl[3], sl[2];
	s->spk_len[0] = 0;
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_2);
	for (int k = 0; k < 3; k++) {
		pl[k] = tu_pubkey(10 + k, TU_COMPRESSED, pub[k]);
		tu_push(s->spk[0], &s->spk_len[0], pub[k], pl[k]);
	}
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_3);
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKMULTISIG);
	tu_legacy_hash(s, 0, s->spk[0], s->spk_len[0], SCRIPT_SIGHASH_ALL, hash);
	sl[0] = tu_ecdsa_sign(10, hash, SCRIPT_SIGHASH_ALL, sig[0]);
	sl[1] = tu_ecdsa_sign(12, hash, SCRIPT_SIGHASH_ALL, sig[1]);
	/* in key order */
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* out of order fails */
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLFAIL, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* one signature and an empty one: failing cleanly passes NULLFAIL */
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLFAIL, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* a non-empty dummy */
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_1);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLDUMMY, tu_verify(s, 0, SCRIPT_VERIFY_NULLDUMMY));
	free(s);
}

static void test_find_and_delete(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	uint8_t pub[65], sig[80], hash[32], code[120];
	size_t pl = tu_pubkey(4, TU_COMPRESSED, pub), cl = 0;
	/* The scriptCode after FindAndDelete: DROP <pub> CHECKSIG. */
	tu_op(code, &cl, SCRIPT_OP_DROP);
	tu_push(code, &cl, pub, pl);
	tu_op(code, &cl, SCRIPT_OP_CHECKSIG);
	tu_legacy_hash(s, 0, code, cl, SCRIPT_SIGHASH_ALL, hash);
	size_t sl = tu_ecdsa_sign(4, hash, SCRIPT_SIGHASH_ALL, sig);
	/* scriptPubKey: <sig> DROP <pub> CHECKSIG; scriptSig: <sig> */
	s->spk_len[0] = 0;
	tu_push(s->spk[0], &s->spk_len[0], sig, sl);
	memcpy(s->spk[0] + s->spk_len[0], code, cl);
	s->spk_len[0] += cl;
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig, sl);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(
	    SCRIPT_ERR_SIG_FINDANDDELETE,
	    tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_CONST_SCRIPTCODE));
	/* the rare path allocates: a failure there is an error, not a crash */
	struct tu_built b;
	int err;
	tu_tx_build(s, &b);
	base_alloc_fail_after(0);
	assert_int_equal(
	    script_verify_input(&b.tx, 0, &b.spent[0], SCRIPT_VERIFY_CONSENSUS, NULL, &err),
	    -SCRIPT_ERR_NOMEM);
	base_alloc_fail_after(-1);
	tu_expect_script_err(SCRIPT_ERR_NOMEM, err);
	free(b.blob);

	/* OP_CODESEPARATOR: the signature covers what follows it */
	s->spk_len[0] = 0;
	tu_push(s->spk[0], &s->spk_len[0], pub, pl);
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CODESEPARATOR);
	tu_op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKSIG);
	uint8_t after = SCRIPT_OP_CHECKSIG;
	tu_legacy_hash(s, 0, &after, 1, SCRIPT_SIGHASH_ALL, hash);
	sl = tu_ecdsa_sign(4, hash, SCRIPT_SIGHASH_ALL, sig);
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, sig, sl);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(
	    SCRIPT_ERR_OP_CODESEPARATOR,
	    tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_CONST_SCRIPTCODE));
	free(s);
}

/* ---- witness v0 ------------------------------------------------------------------ */

static void test_bip143_vector(void **state)
{
	(void)state;
	/* BIP143's native P2WPKH example: input 1, 6 BTC, SIGHASH_ALL */
	size_t len, clen;
	uint8_t *raw = tu_unhex(
	    "0100000002fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f00000000"
	    "00eeffffffef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a01000000"
	    "00ffffffff02202cb206000000001976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac90"
	    "93510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa815988ac11000000",
	    &len);
	uint8_t *code = tu_unhex("76a9141d0f172a0ecb48aee1be1f2687d2963ae33f71a188ac", &clen);
	struct proto_tx tx;
	struct script_precomputed pre;
	uint8_t h1[32], h2[32];
	size_t off;
	proto_tx_init(&tx);
	assert_int_equal(proto_tx_decode_buf(raw, len, &tx, &off), 0);
	script_sighash_v0(&tx, 1, code, clen, 600000000, SCRIPT_SIGHASH_ALL, NULL, h1);
	script_precompute(&pre, &tx, NULL, true);
	script_sighash_v0(&tx, 1, code, clen, 600000000, SCRIPT_SIGHASH_ALL, &pre, h2);
	char *hex = tu_hex(h1, 32);
	assert_string_equal(hex,
	                    "c37af31116d1b27caf68aae9e3ac82f1477929014d5b917657d0eb49478cb670");
	free(hex);
	assert_memory_equal(h1, h2, 32);
	hex = tu_hex(pre.hash_prevouts, 32);
	assert_string_equal(hex,
	                    "96b827c8483d4e9b96712b6713a7b68d6e8003a781feba36c31143470b4efd37");
	free(hex);
	hex = tu_hex(pre.hash_sequence, 32);
	assert_string_equal(hex,
	                    "52b0a642eea2fb7ae638c36f6252b6750293dbe574a806984b8e4d8548339a3b");
	free(hex);
	hex = tu_hex(pre.hash_outputs, 32);
	assert_string_equal(hex,
	                    "863ef3e1a92afbfdb97f31ad0fc7683ee943e9abcf2501590ff8f6551f47e5e5");
	free(hex);
	proto_tx_release(&tx);
	free(raw);
	free(code);
}

static void sign_p2wpkh(struct tu_txspec *s, size_t i, enum tu_keyform form, bool nested)
{
	uint8_t pub[65], sig[80], hash[32], code[25], prog[22];
	size_t pl = tu_pubkey(5, form, pub);
	tu_p2pkh(pub, pl, code);
	prog[0] = SCRIPT_OP_0;
	prog[1] = 20;
	proto_hash160(pub, pl, prog + 2);
	s->amount[i] = 50000;
	if (nested) {
		s->spk[i][0] = SCRIPT_OP_HASH160;
		s->spk[i][1] = 20;
		proto_hash160(prog, 22, s->spk[i] + 2);
		s->spk[i][22] = SCRIPT_OP_EQUAL;
		s->spk_len[i] = 23;
		s->in[i].sig_len = 0;
		tu_push(s->in[i].sig, &s->in[i].sig_len, prog, 22);
	} else {
		memcpy(s->spk[i], prog, 22);
		s->spk_len[i] = 22;
		s->in[i].sig_len = 0;
	}
	tu_v0_hash(s, i, code, 25, SCRIPT_SIGHASH_ALL, hash);
	s->in[i].wit_len[0] = tu_ecdsa_sign(5, hash, SCRIPT_SIGHASH_ALL, s->in[i].wit[0]);
	memcpy(s->in[i].wit[1], pub, pl);
	s->in[i].wit_len[1] = pl;
	s->in[i].n_wit = 2;
	(void)sig;
}

static void test_p2wpkh(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	sign_p2wpkh(s, 0, TU_COMPRESSED, false);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* without WITNESS it is anyone-can-spend, but the witness is unexpected only with it */
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	/* the amount is signed */
	s->amount[0]++;
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLFAIL, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->amount[0]--;
	/* a scriptSig on a native witness spend */
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_expect_script_err(SCRIPT_ERR_WITNESS_MALLEATED,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].sig_len = 0;
	/* three witness items */
	s->in[0].n_wit = 3;
	s->in[0].wit_len[2] = 0;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* uncompressed keys: consensus-valid, not WITNESS_PUBKEYTYPE */
	sign_p2wpkh(s, 0, TU_UNCOMPRESSED, false);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(
	    SCRIPT_ERR_WITNESS_PUBKEYTYPE,
	    tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_WITNESS_PUBKEYTYPE));
	/* nested in P2SH */
	sign_p2wpkh(s, 0, TU_COMPRESSED, true);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* the scriptSig must be exactly one push of the program */
	uint8_t sig_copy[TU_ITEM_MAX];
	size_t sig_len = s->in[0].sig_len;
	memcpy(sig_copy, s->in[0].sig, sig_len);
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_DROP);
	memcpy(s->in[0].sig + 2, sig_copy, sig_len);
	s->in[0].sig_len += sig_len;
	tu_expect_script_err(SCRIPT_ERR_SIG_PUSHONLY, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].sig_len = 0;
	tu_op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	memcpy(s->in[0].sig + 1, sig_copy, sig_len);
	s->in[0].sig_len += sig_len;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_MALLEATED_P2SH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	free(s);
}

/* P2WSH 2-of-3: witness 0 <sig a> <sig b> <script>. */
static void sign_p2wsh_multisig(struct tu_txspec *s, size_t i, bool nested, int skip_key)
{
	uint8_t ws[120], pub[65], hash[32], prog[34];
	size_t wl = 0;
	tu_op(ws, &wl, SCRIPT_OP_2);
	for (int k = 0; k < 3; k++) {
		size_t pl = tu_pubkey(20 + k, TU_COMPRESSED, pub);
		tu_push(ws, &wl, pub, pl);
	}
	tu_op(ws, &wl, SCRIPT_OP_3);
	tu_op(ws, &wl, SCRIPT_OP_CHECKMULTISIG);
	prog[0] = SCRIPT_OP_0;
	prog[1] = 32;
	proto_sha256(ws, wl, prog + 2);
	s->amount[i] = 777777;
	s->in[i].sig_len = 0;
	if (nested) {
		s->spk[i][0] = SCRIPT_OP_HASH160;
		s->spk[i][1] = 20;
		proto_hash160(prog, 34, s->spk[i] + 2);
		s->spk[i][22] = SCRIPT_OP_EQUAL;
		s->spk_len[i] = 23;
		tu_push(s->in[i].sig, &s->in[i].sig_len, prog, 34);
	} else {
		memcpy(s->spk[i], prog, 34);
		s->spk_len[i] = 34;
	}
	tu_v0_hash(s, i, ws, wl, SCRIPT_SIGHASH_ALL, hash);
	s->in[i].wit_len[0] = 0;
	size_t n = 1;
	for (int k = 0; k < 3; k++) {
		if (k == skip_key)
			continue;
		s->in[i].wit_len[n] =
		    tu_ecdsa_sign(20 + k, hash, SCRIPT_SIGHASH_ALL, s->in[i].wit[n]);
		n++;
	}
	memcpy(s->in[i].wit[n], ws, wl);
	s->in[i].wit_len[n] = wl;
	s->in[i].n_wit = n + 1;
}

static void test_p2wsh(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(2, 2);
	sign_p2wsh_multisig(s, 0, false, 1);
	sign_p2wsh_multisig(s, 1, true, 0);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 1, SCRIPT_VERIFY_STANDARD));
	/* the witness script must hash to the program */
	s->in[0].wit[3][5] ^= 1;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* the implied CLEANSTACK: an extra item */
	sign_p2wsh_multisig(s, 0, false, 2);
	memmove(s->in[0].wit[1], s->in[0].wit[0], sizeof(s->in[0].wit[0]) * 4);
	memmove(s->in[0].wit_len + 1, s->in[0].wit_len, sizeof(size_t) * 4);
	s->in[0].wit_len[0] = 1;
	s->in[0].wit[0][0] = 1;
	s->in[0].n_wit = 5;
	tu_expect_script_err(SCRIPT_ERR_CLEANSTACK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

	/* MINIMALIF applies to witness v0 scripts, as policy */
	uint8_t ws[] = {SCRIPT_OP_IF, SCRIPT_OP_1, SCRIPT_OP_ENDIF, SCRIPT_OP_1};
	s->spk[0][0] = SCRIPT_OP_0;
	s->spk[0][1] = 32;
	proto_sha256(ws, sizeof(ws), s->spk[0] + 2);
	s->spk_len[0] = 34;
	s->in[0].n_wit = 2;
	s->in[0].wit[0][0] = 2;
	s->in[0].wit_len[0] = 1;
	memcpy(s->in[0].wit[1], ws, sizeof(ws));
	s->in[0].wit_len[1] = sizeof(ws);
	tu_expect_script_err(SCRIPT_ERR_CLEANSTACK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_MINIMALIF,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_MINIMALIF));
	free(s);
}

static void test_witness_programs(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(1, 1);
	/* a witness on a legacy spend */
	s->spk[0][0] = SCRIPT_OP_1;
	s->spk_len[0] = 1;
	s->in[0].n_wit = 1;
	s->in[0].wit_len[0] = 0;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_UNEXPECTED,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_P2SH));
	/* unknown versions are anyone-can-spend, discouraged by policy
	 * (programs of non-zero bytes, so the push itself is true) */
	memset(s->spk[0], 0x11, 40);
	s->spk[0][0] = SCRIPT_OP_2;
	s->spk[0][1] = 32;
	s->spk_len[0] = 34;
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
	                     tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* v0 of a wrong length */
	s->spk[0][0] = SCRIPT_OP_0;
	s->spk[0][1] = 25;
	s->spk_len[0] = 27;
	tu_expect_script_err(SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH,
	                     tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* v1 nested in P2SH is not taproot: an unknown program */
	uint8_t prog[34];
	memset(prog, 0x11, sizeof(prog));
	prog[0] = SCRIPT_OP_1;
	prog[1] = 32;
	s->spk[0][0] = SCRIPT_OP_HASH160;
	s->spk[0][1] = 20;
	proto_hash160(prog, 34, s->spk[0] + 2);
	s->spk[0][22] = SCRIPT_OP_EQUAL;
	s->spk_len[0] = 23;
	s->in[0].sig_len = 0;
	tu_push(s->in[0].sig, &s->in[0].sig_len, prog, 34);
	tu_expect_script_err(SCRIPT_ERR_OK, tu_verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	tu_expect_script_err(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
	                     tu_verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(s);
}

/* ---- the common path allocates nothing; threads share precomputed data --------- */

struct shared {
	struct tu_built b;
	struct script_precomputed pre;
	int failures;
	pthread_mutex_t lock;
};

/*
 * The per-thread cache of parsed keys: a key that is looked up again gives
 * the same point as a fresh parse, the two keys with one x coordinate
 * (02 and 03) and the x-only key of that x never stand in for each other,
 * and an invalid key is refused every time.
 */
static void test_key_cache(void **state)
{
	(void)state;
	const secp256k1_context *ctx = secp256k1_context_static;
	uint8_t ser[33], back[33], xonly[32], bad[33];
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < 40; k++) {
			uint8_t seckey[32] = {0};
			seckey[31] = (uint8_t)(k + 1);
			secp256k1_context *sc = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
			secp256k1_pubkey pk, got;
			size_t len = 33;
			assert_true(secp256k1_ec_pubkey_create(sc, &pk, seckey));
			secp256k1_context_destroy(sc);
			assert_true(secp256k1_ec_pubkey_serialize(ctx, ser, &len, &pk,
			                                          SECP256K1_EC_COMPRESSED));
			for (int flip = 0; flip < 2; flip++) {
				uint8_t in[33];
				memcpy(in, ser, 33);
				if (flip)
					in[0] ^= 1; /* the other y: the negated point */
				/* twice: a miss, then a hit */
				for (int again = 0; again < 2; again++) {
					assert_true(script_parse_pubkey(&got, in, 33));
					len = 33;
					assert_true(secp256k1_ec_pubkey_serialize(
					    ctx, back, &len, &got, SECP256K1_EC_COMPRESSED));
					assert_memory_equal(back, in, 33);
				}
			}
			secp256k1_xonly_pubkey xk;
			assert_true(script_parse_xonly(&xk, ser + 1));
			assert_true(secp256k1_xonly_pubkey_serialize(ctx, xonly, &xk));
			assert_memory_equal(xonly, ser + 1, 32);
			/* and the compressed key after its x-only twin took the slot */
			assert_true(script_parse_pubkey(&got, ser, 33));
			len = 33;
			assert_true(secp256k1_ec_pubkey_serialize(ctx, back, &len, &got,
			                                          SECP256K1_EC_COMPRESSED));
			assert_memory_equal(back, ser, 33);
		}
		script_key_cache_set_enabled(round == 1);
	}
	/* x = 5 is not on the curve (5^3 + 7 = 132 is not a square mod p) */
	memset(bad, 0, sizeof(bad));
	bad[0] = 0x02;
	bad[32] = 5;
	secp256k1_pubkey pk;
	secp256k1_xonly_pubkey xk;
	for (int again = 0; again < 2; again++) {
		assert_false(script_parse_pubkey(&pk, bad, 33));
		assert_false(script_parse_xonly(&xk, bad + 1));
	}
	script_key_cache_set_enabled(true);
}

static void *worker(void *arg)
{
	struct shared *sh = arg;
	for (int r = 0; r < 50; r++) {
		for (uint32_t i = 0; i < sh->b.tx.n_in; i++) {
			int err;
			if (script_verify_input(&sh->b.tx, i, &sh->b.spent[i],
			                        SCRIPT_VERIFY_STANDARD, &sh->pre, &err)) {
				pthread_mutex_lock(&sh->lock);
				sh->failures++;
				pthread_mutex_unlock(&sh->lock);
			}
		}
	}
	return NULL;
}

static void test_no_alloc_and_threads(void **state)
{
	(void)state;
	struct tu_txspec *s = tu_spec_new(3, 2);
	uint8_t internal[32], tweak[32], q[32], hash[32];
	int parity;
	struct script_tap_exec ex = {0};
	sign_p2pkh(s, 0, TU_COMPRESSED, SCRIPT_SIGHASH_ALL);
	sign_p2wpkh(s, 1, TU_COMPRESSED, false);
	tu_xonly(31, internal);
	script_taproot_tweak(internal, NULL, tweak);
	assert_int_equal(script_taproot_output_key(internal, NULL, q, &parity), 0);
	s->spk[2][0] = SCRIPT_OP_1;
	s->spk[2][1] = 32;
	memcpy(s->spk[2] + 2, q, 32);
	s->spk_len[2] = 34;
	s->amount[2] = 31337;
	ex.codesep_pos = UINT32_MAX;
	tu_tap_hash(s, 2, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[2].wit_len[0] = tu_schnorr_sign(31, tweak, hash, 0, s->in[2].wit[0]);
	s->in[2].n_wit = 1;
	/* input 1's signature was made before input 2's witness existed: BIP143
	 * does not sign witnesses, so it stays valid */

	struct shared sh = {0};
	pthread_mutex_init(&sh.lock, NULL);
	tu_tx_build(s, &sh.b);
	script_precompute(&sh.pre, &sh.b.tx, sh.b.spent, false);
	for (uint32_t i = 0; i < 3; i++) {
		int err;
		uint64_t a0 = base_alloc_count();
		int rc = script_verify_input(&sh.b.tx, i, &sh.b.spent[i], SCRIPT_VERIFY_STANDARD,
		                             &sh.pre, &err);
		uint64_t allocs = base_alloc_count() - a0;
		if (rc)
			fail_msg("input %u: %s", i, script_error_name(err));
		if (allocs)
			fail_msg("input %u: %llu allocations, want 0", i,
			         (unsigned long long)allocs);
	}
	pthread_t th[4];
	for (int k = 0; k < 4; k++)
		assert_int_equal(pthread_create(&th[k], NULL, worker, &sh), 0);
	for (int k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	assert_int_equal(sh.failures, 0);
	pthread_mutex_destroy(&sh.lock);
	free(sh.b.blob);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_p2pkh),
	    cmocka_unit_test(test_signature_encodings),
	    cmocka_unit_test(test_sighash_single_bug),
	    cmocka_unit_test(test_multisig_legacy),
	    cmocka_unit_test(test_find_and_delete),
	    cmocka_unit_test(test_bip143_vector),
	    cmocka_unit_test(test_p2wpkh),
	    cmocka_unit_test(test_p2wsh),
	    cmocka_unit_test(test_witness_programs),
	    cmocka_unit_test(test_no_alloc_and_threads),
	    cmocka_unit_test(test_key_cache),
	};
	int rc = cmocka_run_group_tests(tests, tu_secp_setup, tu_secp_teardown);
	proto_freelist_drain();
	return rc;
}
