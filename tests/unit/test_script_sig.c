/*
 * tests/unit/test_script_sig.c: signature checks with real keys and
 * signatures made here with libsecp256k1: legacy (P2PK, P2PKH, bare
 * multisig, every sighash type, the SIGHASH_SINGLE bug, FindAndDelete,
 * OP_CODESEPARATOR), encodings (DER, low S, hash types, key types),
 * witness v0 (P2WPKH, P2WSH, nested in P2SH), taproot key path and script
 * path (tapscript rules, validation weight). Also: the common path
 * allocates nothing, and threads share one precomputed struct.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

#define EXPECT_ERR(want, got)                                                                      \
	do {                                                                                       \
		int w_ = (want), g_ = (got);                                                       \
		if (w_ != g_)                                                                      \
			fail_msg("%s:%d: expected %s, got %s", __FILE__, __LINE__,                 \
			         script_error_name(w_), script_error_name(g_));                    \
	} while (0)

#define MAX_IN   3
#define MAX_WIT  6
#define ITEM_MAX 12100

static secp256k1_context *sctx;

/* ---- a transaction described field by field ------------------------------ */

struct inspec {
	uint8_t sig[ITEM_MAX];
	size_t sig_len;
	uint8_t wit[MAX_WIT][ITEM_MAX];
	size_t wit_len[MAX_WIT];
	size_t n_wit;
	uint32_t sequence;
};

struct txspec {
	int32_t version;
	uint32_t locktime;
	size_t n_in, n_out;
	struct inspec in[MAX_IN];
	int64_t out_value[MAX_IN];
	uint8_t out_script[MAX_IN][40];
	size_t out_len[MAX_IN];
	/* what each input spends */
	uint8_t spk[MAX_IN][ITEM_MAX];
	size_t spk_len[MAX_IN];
	int64_t amount[MAX_IN];
};

struct built {
	struct proto_tx tx;
	struct proto_txin vin[MAX_IN];
	struct proto_txout vout[MAX_IN];
	uint8_t *blob;
	struct script_spent_output spent[MAX_IN];
};

static struct txspec *spec_new(size_t n_in, size_t n_out)
{
	struct txspec *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->version = 2;
	s->n_in = n_in;
	s->n_out = n_out;
	for (size_t i = 0; i < n_in; i++)
		s->in[i].sequence = 0xfffffffe;
	for (size_t o = 0; o < n_out; o++) {
		s->out_value[o] = 1000 + (int64_t)o;
		s->out_script[o][0] = SCRIPT_OP_1;
		s->out_len[o] = 1;
	}
	return s;
}

static void build(const struct txspec *s, struct built *b)
{
	size_t blob_len = 0;
	for (size_t i = 0; i < s->n_in; i++) {
		blob_len += s->in[i].sig_len;
		for (size_t k = 0; k < s->in[i].n_wit; k++)
			blob_len += proto_compact_size(s->in[i].wit_len[k]) + s->in[i].wit_len[k];
	}
	for (size_t o = 0; o < s->n_out; o++)
		blob_len += s->out_len[o];
	memset(b, 0, sizeof(*b));
	b->blob = malloc(blob_len + 1);
	struct proto_writer w;
	proto_writer_init_fixed(&w, b->blob, blob_len + 1);
	bool any_wit = false;
	for (size_t i = 0; i < s->n_in; i++) {
		struct proto_txin *in = &b->vin[i];
		memset(in->prevout.txid.b, 0x40 + (int)i, 32);
		in->prevout.n = (uint32_t)i;
		in->sequence = s->in[i].sequence;
		in->script_off = (uint32_t)w.len;
		in->script_len = (uint32_t)s->in[i].sig_len;
		proto_write_bytes(&w, s->in[i].sig, s->in[i].sig_len);
		in->wit_off = (uint32_t)w.len;
		in->wit_count = (uint32_t)s->in[i].n_wit;
		for (size_t k = 0; k < s->in[i].n_wit; k++)
			proto_write_varbytes(&w, s->in[i].wit[k], s->in[i].wit_len[k]);
		in->wit_len = (uint32_t)(w.len - in->wit_off);
		any_wit = any_wit || s->in[i].n_wit;
		b->spent[i].amount = s->amount[i];
		b->spent[i].script = s->spk[i];
		b->spent[i].script_len = (uint32_t)s->spk_len[i];
	}
	for (size_t o = 0; o < s->n_out; o++) {
		b->vout[o].value = s->out_value[o];
		b->vout[o].script_off = (uint32_t)w.len;
		b->vout[o].script_len = (uint32_t)s->out_len[o];
		proto_write_bytes(&w, s->out_script[o], s->out_len[o]);
	}
	assert_int_equal(w.err, 0);
	b->tx.version = s->version;
	b->tx.locktime = s->locktime;
	b->tx.n_in = (uint32_t)s->n_in;
	b->tx.n_out = (uint32_t)s->n_out;
	b->tx.vin = b->vin;
	b->tx.vout = b->vout;
	b->tx.blob = b->blob;
	b->tx.blob_len = (uint32_t)blob_len;
	b->tx.has_witness = any_wit;
}

/* Verify input i of the transaction the spec describes. */
static int verify_in(const struct txspec *s, size_t i, uint32_t flags, bool precompute)
{
	struct built b;
	struct script_precomputed pre;
	int err = -1;
	build(s, &b);
	if (precompute)
		script_precompute(&pre, &b.tx, b.spent, false);
	int rc = script_verify_input(&b.tx, (uint32_t)i, &b.spent[i], flags,
	                             precompute ? &pre : NULL, &err);
	assert_int_equal(rc, -err);
	free(b.blob);
	return err;
}

static int verify(const struct txspec *s, size_t i, uint32_t flags)
{
	int a = verify_in(s, i, flags, true);
	/* without precomputed data, everything but taproot gives the same */
	int b = verify_in(s, i, flags, false);
	if (a != b && b != SCRIPT_ERR_MISSING_DATA)
		fail_msg("precomputed %s, not %s", script_error_name(a), script_error_name(b));
	return a;
}

/* ---- keys and signatures ----------------------------------------------------- */

static void seckey(int i, uint8_t sk[32])
{
	memset(sk, 0, 32);
	sk[0] = 0x1c;
	sk[31] = (uint8_t)i;
}

enum keyform { COMPRESSED, UNCOMPRESSED, HYBRID };

static size_t pubkey(int i, enum keyform form, uint8_t out[65])
{
	uint8_t sk[32];
	secp256k1_pubkey pk;
	size_t len = 65;
	seckey(i, sk);
	assert_int_equal(secp256k1_ec_pubkey_create(sctx, &pk, sk), 1);
	secp256k1_ec_pubkey_serialize(sctx, out, &len, &pk,
	                              form == COMPRESSED ? SECP256K1_EC_COMPRESSED
	                                                 : SECP256K1_EC_UNCOMPRESSED);
	if (form == HYBRID)
		out[0] = (uint8_t)(0x06 | (out[64] & 1));
	return len;
}

static void xonly(int i, uint8_t out[32])
{
	uint8_t sk[32];
	secp256k1_keypair kp;
	secp256k1_xonly_pubkey x;
	seckey(i, sk);
	assert_int_equal(secp256k1_keypair_create(sctx, &kp, sk), 1);
	assert_int_equal(secp256k1_keypair_xonly_pub(sctx, &x, NULL, &kp), 1);
	assert_int_equal(secp256k1_xonly_pubkey_serialize(sctx, out, &x), 1);
}

/* DER signature of hash by key i, with the hash type byte appended. */
static size_t ecdsa_sign(int i, const uint8_t hash[32], uint8_t hash_type, uint8_t out[80])
{
	uint8_t sk[32];
	secp256k1_ecdsa_signature sig;
	size_t len = 72;
	seckey(i, sk);
	assert_int_equal(secp256k1_ecdsa_sign(sctx, &sig, hash, sk, NULL, NULL), 1);
	assert_int_equal(secp256k1_ecdsa_signature_serialize_der(sctx, out, &len, &sig), 1);
	out[len] = hash_type;
	return len + 1;
}

/* Schnorr signature by key i, tweaked by `tweak` if not NULL; hash type appended unless 0. */
static size_t schnorr_sign(int i, const uint8_t *tweak, const uint8_t hash[32], uint8_t hash_type,
                           uint8_t out[65])
{
	uint8_t sk[32];
	secp256k1_keypair kp;
	seckey(i, sk);
	assert_int_equal(secp256k1_keypair_create(sctx, &kp, sk), 1);
	if (tweak)
		assert_int_equal(secp256k1_keypair_xonly_tweak_add(sctx, &kp, tweak), 1);
	assert_int_equal(secp256k1_schnorrsig_sign32(sctx, out, hash, &kp, NULL), 1);
	if (hash_type == 0)
		return 64;
	out[64] = hash_type;
	return 65;
}

/* Append a minimal push of data to buf at *len. */
static void push(uint8_t *buf, size_t *len, const uint8_t *data, size_t n)
{
	if (n < SCRIPT_OP_PUSHDATA1) {
		buf[(*len)++] = (uint8_t)n;
	} else if (n <= 0xff) {
		buf[(*len)++] = SCRIPT_OP_PUSHDATA1;
		buf[(*len)++] = (uint8_t)n;
	} else {
		buf[(*len)++] = SCRIPT_OP_PUSHDATA2;
		buf[(*len)++] = (uint8_t)n;
		buf[(*len)++] = (uint8_t)(n >> 8);
	}
	memcpy(buf + *len, data, n);
	*len += n;
}

static void op(uint8_t *buf, size_t *len, uint8_t o)
{
	buf[(*len)++] = o;
}

static void legacy_hash(const struct txspec *s, size_t i, const uint8_t *code, size_t code_len,
                        uint32_t hash_type, uint8_t out[32])
{
	struct built b;
	build(s, &b);
	script_sighash_legacy(&b.tx, (uint32_t)i, code, code_len, hash_type, out);
	free(b.blob);
}

static void v0_hash(const struct txspec *s, size_t i, const uint8_t *code, size_t code_len,
                    uint32_t hash_type, uint8_t out[32])
{
	struct built b;
	build(s, &b);
	script_sighash_v0(&b.tx, (uint32_t)i, code, code_len, s->amount[i], hash_type, NULL, out);
	free(b.blob);
}

static void tap_hash(const struct txspec *s, size_t i, uint8_t hash_type,
                     const struct script_tap_exec *ex, uint8_t out[32])
{
	struct built b;
	struct script_precomputed pre;
	build(s, &b);
	script_precompute(&pre, &b.tx, b.spent, true);
	assert_int_equal(
	    script_sighash_taproot(&b.tx, (uint32_t)i, hash_type, &pre, &b.spent[i], ex, out), 0);
	free(b.blob);
}

/* P2PKH scriptPubKey for a public key. */
static size_t p2pkh(const uint8_t *pub, size_t pub_len, uint8_t out[25])
{
	out[0] = SCRIPT_OP_DUP;
	out[1] = SCRIPT_OP_HASH160;
	out[2] = 20;
	proto_hash160(pub, pub_len, out + 3);
	out[23] = SCRIPT_OP_EQUALVERIFY;
	out[24] = SCRIPT_OP_CHECKSIG;
	return 25;
}

/* ---- legacy ------------------------------------------------------------------- */

/* Sign input 0 of s as P2PKH with key 1 and the given hash type and key form. */
static void sign_p2pkh(struct txspec *s, size_t i, enum keyform form, uint8_t hash_type)
{
	uint8_t pub[65], sig[80], hash[32];
	size_t pl = pubkey(1, form, pub);
	s->spk_len[i] = p2pkh(pub, pl, s->spk[i]);
	legacy_hash(s, i, s->spk[i], s->spk_len[i], hash_type, hash);
	size_t sl = ecdsa_sign(1, hash, hash_type, sig);
	s->in[i].sig_len = 0;
	push(s->in[i].sig, &s->in[i].sig_len, sig, sl);
	push(s->in[i].sig, &s->in[i].sig_len, pub, pl);
}

static void test_p2pkh(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 2);
	sign_p2pkh(s, 0, COMPRESSED, SCRIPT_SIGHASH_ALL);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_NONE));
	/* a changed output invalidates SIGHASH_ALL */
	s->out_value[1]++;
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLFAIL, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* NONE does not sign outputs; SINGLE signs only its own */
	sign_p2pkh(s, 0, COMPRESSED, SCRIPT_SIGHASH_NONE);
	s->out_value[1]++;
	s->out_value[0]++;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	sign_p2pkh(s, 0, COMPRESSED, SCRIPT_SIGHASH_SINGLE);
	s->out_value[1]++;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->out_value[0]++;
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* uncompressed keys are fine in legacy scripts */
	sign_p2pkh(s, 0, UNCOMPRESSED, SCRIPT_SIGHASH_ALL | SCRIPT_SIGHASH_ANYONECANPAY);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* hybrid keys: valid by consensus, not STRICTENC */
	sign_p2pkh(s, 0, HYBRID, SCRIPT_SIGHASH_ALL);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_PUBKEYTYPE, verify(s, 0, SCRIPT_VERIFY_STRICTENC));
	/* an undefined hash type: consensus-valid, not STRICTENC */
	sign_p2pkh(s, 0, COMPRESSED, 0x04);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_SIG_HASHTYPE, verify(s, 0, SCRIPT_VERIFY_STRICTENC));
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
	struct txspec *s = spec_new(1, 1);
	uint8_t pub[65], hash[32], der[80], compact[64];
	size_t pl = pubkey(2, COMPRESSED, pub);
	uint8_t sk[32];
	secp256k1_ecdsa_signature sig;
	/* P2PK */
	s->spk_len[0] = 0;
	push(s->spk[0], &s->spk_len[0], pub, pl);
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKSIG);
	legacy_hash(s, 0, s->spk[0], s->spk_len[0], SCRIPT_SIGHASH_ALL, hash);
	seckey(2, sk);
	assert_int_equal(secp256k1_ecdsa_sign(sctx, &sig, hash, sk, NULL, NULL), 1);
	secp256k1_ecdsa_signature_serialize_compact(sctx, compact, &sig);

	/* high S: valid (normalized before verifying) unless LOW_S */
	negate_s(compact + 32);
	assert_int_equal(secp256k1_ecdsa_signature_parse_compact(sctx, &sig, compact), 1);
	size_t dl = 72;
	secp256k1_ecdsa_signature_serialize_der(sctx, der, &dl, &sig);
	der[dl++] = SCRIPT_SIGHASH_ALL;
	s->in[0].sig_len = 0;
	push(s->in[0].sig, &s->in[0].sig_len, der, dl);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_STRICTENC));
	EXPECT_ERR(SCRIPT_ERR_SIG_HIGH_S, verify(s, 0, SCRIPT_VERIFY_LOW_S));

	/* a padded R: lax DER accepts it, BIP66 does not */
	negate_s(compact + 32);
	assert_int_equal(secp256k1_ecdsa_signature_parse_compact(sctx, &sig, compact), 1);
	dl = 72;
	secp256k1_ecdsa_signature_serialize_der(sctx, der, &dl, &sig);
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
	push(s->in[0].sig, &s->in[0].sig_len, padded, dl + 2);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH));
	EXPECT_ERR(SCRIPT_ERR_SIG_DER, verify(s, 0, SCRIPT_VERIFY_DERSIG));

	/* a long-form sequence length: lax skips it */
	uint8_t longform[84];
	longform[0] = 0x30;
	longform[1] = 0x81;
	longform[2] = der[1];
	memcpy(longform + 3, der + 2, dl - 2);
	longform[dl + 1] = SCRIPT_SIGHASH_ALL;
	s->in[0].sig_len = 0;
	push(s->in[0].sig, &s->in[0].sig_len, longform, dl + 2);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH));
	EXPECT_ERR(SCRIPT_ERR_SIG_DER, verify(s, 0, SCRIPT_VERIFY_DERSIG));

	/* garbage that is not even lax DER: a false CHECKSIG, not an error */
	uint8_t junk[10] = {0x31, 1, 2, 3, 4, 5, 6, 7, 8, SCRIPT_SIGHASH_ALL};
	s->in[0].sig_len = 0;
	push(s->in[0].sig, &s->in[0].sig_len, junk, sizeof(junk));
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_P2SH));
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLFAIL, verify(s, 0, SCRIPT_VERIFY_NULLFAIL));
	/* the empty signature is the clean way to fail */
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(s);
}

static void test_sighash_single_bug(void **state)
{
	(void)state;
	struct txspec *s = spec_new(2, 1);
	uint8_t pub[65], sig[80], hash[32];
	size_t pl = pubkey(3, COMPRESSED, pub);
	s->spk_len[1] = p2pkh(pub, pl, s->spk[1]);
	/* input 1 has no output 1: the signed hash is the number 1 */
	legacy_hash(s, 1, s->spk[1], s->spk_len[1], SCRIPT_SIGHASH_SINGLE, hash);
	uint8_t one[32] = {1};
	assert_memory_equal(hash, one, 32);
	size_t sl = ecdsa_sign(3, one, SCRIPT_SIGHASH_SINGLE, sig);
	push(s->in[1].sig, &s->in[1].sig_len, sig, sl);
	push(s->in[1].sig, &s->in[1].sig_len, pub, pl);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 1, SCRIPT_VERIFY_STANDARD));
	/* and it signs nothing: any change to the transaction keeps it valid */
	s->out_value[0] += 5;
	s->locktime = 77;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 1, SCRIPT_VERIFY_STANDARD));
	free(s);
}

static void test_multisig_legacy(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	uint8_t pub[3][65], sig[2][80], hash[32];
	size_t pl[3], sl[2];
	s->spk_len[0] = 0;
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_2);
	for (int k = 0; k < 3; k++) {
		pl[k] = pubkey(10 + k, COMPRESSED, pub[k]);
		push(s->spk[0], &s->spk_len[0], pub[k], pl[k]);
	}
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_3);
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKMULTISIG);
	legacy_hash(s, 0, s->spk[0], s->spk_len[0], SCRIPT_SIGHASH_ALL, hash);
	sl[0] = ecdsa_sign(10, hash, SCRIPT_SIGHASH_ALL, sig[0]);
	sl[1] = ecdsa_sign(12, hash, SCRIPT_SIGHASH_ALL, sig[1]);
	/* in key order */
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* out of order fails */
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLFAIL, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* one signature and an empty one: failing cleanly passes NULLFAIL */
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLFAIL, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* a non-empty dummy */
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_1);
	push(s->in[0].sig, &s->in[0].sig_len, sig[0], sl[0]);
	push(s->in[0].sig, &s->in[0].sig_len, sig[1], sl[1]);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH));
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLDUMMY, verify(s, 0, SCRIPT_VERIFY_NULLDUMMY));
	free(s);
}

static void test_find_and_delete(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	uint8_t pub[65], sig[80], hash[32], code[120];
	size_t pl = pubkey(4, COMPRESSED, pub), cl = 0;
	/* The scriptCode after FindAndDelete: DROP <pub> CHECKSIG. */
	op(code, &cl, SCRIPT_OP_DROP);
	push(code, &cl, pub, pl);
	op(code, &cl, SCRIPT_OP_CHECKSIG);
	legacy_hash(s, 0, code, cl, SCRIPT_SIGHASH_ALL, hash);
	size_t sl = ecdsa_sign(4, hash, SCRIPT_SIGHASH_ALL, sig);
	/* scriptPubKey: <sig> DROP <pub> CHECKSIG; scriptSig: <sig> */
	s->spk_len[0] = 0;
	push(s->spk[0], &s->spk_len[0], sig, sl);
	memcpy(s->spk[0] + s->spk_len[0], code, cl);
	s->spk_len[0] += cl;
	push(s->in[0].sig, &s->in[0].sig_len, sig, sl);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_SIG_FINDANDDELETE,
	           verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_CONST_SCRIPTCODE));
	/* the rare path allocates: a failure there is an error, not a crash */
	struct built b;
	int err;
	build(s, &b);
	base_alloc_fail_after(0);
	assert_int_equal(
	    script_verify_input(&b.tx, 0, &b.spent[0], SCRIPT_VERIFY_CONSENSUS, NULL, &err),
	    -SCRIPT_ERR_NOMEM);
	base_alloc_fail_after(-1);
	EXPECT_ERR(SCRIPT_ERR_NOMEM, err);
	free(b.blob);

	/* OP_CODESEPARATOR: the signature covers what follows it */
	s->spk_len[0] = 0;
	push(s->spk[0], &s->spk_len[0], pub, pl);
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CODESEPARATOR);
	op(s->spk[0], &s->spk_len[0], SCRIPT_OP_CHECKSIG);
	uint8_t after = SCRIPT_OP_CHECKSIG;
	legacy_hash(s, 0, &after, 1, SCRIPT_SIGHASH_ALL, hash);
	sl = ecdsa_sign(4, hash, SCRIPT_SIGHASH_ALL, sig);
	s->in[0].sig_len = 0;
	push(s->in[0].sig, &s->in[0].sig_len, sig, sl);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_OP_CODESEPARATOR,
	           verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_CONST_SCRIPTCODE));
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

static void sign_p2wpkh(struct txspec *s, size_t i, enum keyform form, bool nested)
{
	uint8_t pub[65], sig[80], hash[32], code[25], prog[22];
	size_t pl = pubkey(5, form, pub);
	p2pkh(pub, pl, code);
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
		push(s->in[i].sig, &s->in[i].sig_len, prog, 22);
	} else {
		memcpy(s->spk[i], prog, 22);
		s->spk_len[i] = 22;
		s->in[i].sig_len = 0;
	}
	v0_hash(s, i, code, 25, SCRIPT_SIGHASH_ALL, hash);
	s->in[i].wit_len[0] = ecdsa_sign(5, hash, SCRIPT_SIGHASH_ALL, s->in[i].wit[0]);
	memcpy(s->in[i].wit[1], pub, pl);
	s->in[i].wit_len[1] = pl;
	s->in[i].n_wit = 2;
	(void)sig;
}

static void test_p2wpkh(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	sign_p2wpkh(s, 0, COMPRESSED, false);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* without WITNESS it is anyone-can-spend, but the witness is unexpected only with it */
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH));
	/* the amount is signed */
	s->amount[0]++;
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_SIG_NULLFAIL, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->amount[0]--;
	/* a scriptSig on a native witness spend */
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	EXPECT_ERR(SCRIPT_ERR_WITNESS_MALLEATED, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].sig_len = 0;
	/* three witness items */
	s->in[0].n_wit = 3;
	s->in[0].wit_len[2] = 0;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* uncompressed keys: consensus-valid, not WITNESS_PUBKEYTYPE */
	sign_p2wpkh(s, 0, UNCOMPRESSED, false);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PUBKEYTYPE,
	           verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_WITNESS_PUBKEYTYPE));
	/* nested in P2SH */
	sign_p2wpkh(s, 0, COMPRESSED, true);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* the scriptSig must be exactly one push of the program */
	uint8_t sig_copy[ITEM_MAX];
	size_t sig_len = s->in[0].sig_len;
	memcpy(sig_copy, s->in[0].sig, sig_len);
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_DROP);
	memcpy(s->in[0].sig + 2, sig_copy, sig_len);
	s->in[0].sig_len += sig_len;
	EXPECT_ERR(SCRIPT_ERR_SIG_PUSHONLY, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].sig_len = 0;
	op(s->in[0].sig, &s->in[0].sig_len, SCRIPT_OP_0);
	memcpy(s->in[0].sig + 1, sig_copy, sig_len);
	s->in[0].sig_len += sig_len;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_MALLEATED_P2SH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	free(s);
}

/* P2WSH 2-of-3: witness 0 <sig a> <sig b> <script>. */
static void sign_p2wsh_multisig(struct txspec *s, size_t i, bool nested, int skip_key)
{
	uint8_t ws[120], pub[65], hash[32], prog[34];
	size_t wl = 0;
	op(ws, &wl, SCRIPT_OP_2);
	for (int k = 0; k < 3; k++) {
		size_t pl = pubkey(20 + k, COMPRESSED, pub);
		push(ws, &wl, pub, pl);
	}
	op(ws, &wl, SCRIPT_OP_3);
	op(ws, &wl, SCRIPT_OP_CHECKMULTISIG);
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
		push(s->in[i].sig, &s->in[i].sig_len, prog, 34);
	} else {
		memcpy(s->spk[i], prog, 34);
		s->spk_len[i] = 34;
	}
	v0_hash(s, i, ws, wl, SCRIPT_SIGHASH_ALL, hash);
	s->in[i].wit_len[0] = 0;
	size_t n = 1;
	for (int k = 0; k < 3; k++) {
		if (k == skip_key)
			continue;
		s->in[i].wit_len[n] = ecdsa_sign(20 + k, hash, SCRIPT_SIGHASH_ALL, s->in[i].wit[n]);
		n++;
	}
	memcpy(s->in[i].wit[n], ws, wl);
	s->in[i].wit_len[n] = wl;
	s->in[i].n_wit = n + 1;
}

static void test_p2wsh(void **state)
{
	(void)state;
	struct txspec *s = spec_new(2, 2);
	sign_p2wsh_multisig(s, 0, false, 1);
	sign_p2wsh_multisig(s, 1, true, 0);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 1, SCRIPT_VERIFY_STANDARD));
	/* the witness script must hash to the program */
	s->in[0].wit[3][5] ^= 1;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* the implied CLEANSTACK: an extra item */
	sign_p2wsh_multisig(s, 0, false, 2);
	memmove(s->in[0].wit[1], s->in[0].wit[0], sizeof(s->in[0].wit[0]) * 4);
	memmove(s->in[0].wit_len + 1, s->in[0].wit_len, sizeof(size_t) * 4);
	s->in[0].wit_len[0] = 1;
	s->in[0].wit[0][0] = 1;
	s->in[0].n_wit = 5;
	EXPECT_ERR(SCRIPT_ERR_CLEANSTACK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

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
	EXPECT_ERR(SCRIPT_ERR_CLEANSTACK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_MINIMALIF,
	           verify(s, 0, SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_MINIMALIF));
	free(s);
}

static void test_witness_programs(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	/* a witness on a legacy spend */
	s->spk[0][0] = SCRIPT_OP_1;
	s->spk_len[0] = 1;
	s->in[0].n_wit = 1;
	s->in[0].wit_len[0] = 0;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_UNEXPECTED, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH));
	/* unknown versions are anyone-can-spend, discouraged by policy
	 * (programs of non-zero bytes, so the push itself is true) */
	memset(s->spk[0], 0x11, 40);
	s->spk[0][0] = SCRIPT_OP_2;
	s->spk[0][1] = 32;
	s->spk_len[0] = 34;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
	           verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* v0 of a wrong length */
	s->spk[0][0] = SCRIPT_OP_0;
	s->spk[0][1] = 25;
	s->spk_len[0] = 27;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
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
	push(s->in[0].sig, &s->in[0].sig_len, prog, 34);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
	           verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(s);
}

/* ---- taproot ------------------------------------------------------------------- */

static void test_taproot_key_path(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	uint8_t internal[32], tweak[32], q[32], hash[32];
	int parity;
	struct script_tap_exec ex = {0};
	ex.codesep_pos = UINT32_MAX;
	xonly(30, internal);
	script_taproot_tweak(internal, NULL, tweak);
	assert_int_equal(script_taproot_output_key(internal, NULL, q, &parity), 0);
	s->spk[0][0] = SCRIPT_OP_1;
	s->spk[0][1] = 32;
	memcpy(s->spk[0] + 2, q, 32);
	s->spk_len[0] = 34;
	s->amount[0] = 100000;

	tap_hash(s, 0, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[0].wit_len[0] = schnorr_sign(30, tweak, hash, 0, s->in[0].wit[0]);
	s->in[0].n_wit = 1;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* without TAPROOT, v1 is anyone-can-spend */
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS));
	/* no precomputed data: a taproot check cannot run */
	EXPECT_ERR(SCRIPT_ERR_MISSING_DATA, verify_in(s, 0, SCRIPT_VERIFY_CONSENSUS, false));
	/* the amounts of all inputs are signed */
	s->amount[0]++;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->amount[0]--;
	s->in[0].wit[0][10] ^= 1;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit_len[0] = 63;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG_SIZE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 0;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

	/* explicit hash types; 0x00 may not be spelled out */
	s->in[0].n_wit = 1;
	tap_hash(s, 0, SCRIPT_SIGHASH_SINGLE | SCRIPT_SIGHASH_ANYONECANPAY, &ex, hash);
	s->in[0].wit_len[0] = schnorr_sign(30, tweak, hash, 0x83, s->in[0].wit[0]);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit[0][64] = 0x00;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[0][64] = 0x84;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* SINGLE with no matching output */
	struct txspec *t = spec_new(2, 1);
	memcpy(t->spk[1], s->spk[0], 34);
	t->spk_len[1] = 34;
	t->in[1].n_wit = 1;
	memset(t->in[1].wit[0], 1, 64);
	t->in[1].wit[0][64] = SCRIPT_SIGHASH_SINGLE;
	t->in[1].wit_len[0] = 65;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG_HASHTYPE, verify(t, 1, SCRIPT_VERIFY_CONSENSUS));
	free(t);

	/* an annex is committed to */
	ex.annex_present = true;
	uint8_t annex[3] = {SCRIPT_ANNEX_TAG, 7, 7};
	uint8_t ser[4] = {3, SCRIPT_ANNEX_TAG, 7, 7};
	proto_sha256(ser, 4, ex.annex_hash);
	tap_hash(s, 0, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[0].wit_len[0] = schnorr_sign(30, tweak, hash, 0, s->in[0].wit[0]);
	memcpy(s->in[0].wit[1], annex, 3);
	s->in[0].wit_len[1] = 3;
	s->in[0].n_wit = 2;
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].n_wit = 1;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	free(s);
}

/* A two-leaf tree; fills spk and returns the control block for leaf `which`. */
struct tap_tree {
	uint8_t internal[32];
	uint8_t leaf[2][ITEM_MAX];
	size_t leaf_len[2];
	uint8_t leaf_version[2];
	uint8_t leaf_hash[2][32];
	uint8_t root[32];
	uint8_t q[32];
	int parity;
};

static void tree_finish(struct tap_tree *t, struct txspec *s, size_t i)
{
	xonly(40, t->internal);
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
static void tree_spend(const struct tap_tree *t, struct txspec *s, size_t i, int which,
                       size_t n_items)
{
	struct inspec *in = &s->in[i];
	memcpy(in->wit[n_items], t->leaf[which], t->leaf_len[which]);
	in->wit_len[n_items] = t->leaf_len[which];
	uint8_t *cb = in->wit[n_items + 1];
	cb[0] = (uint8_t)(t->leaf_version[which] | t->parity);
	memcpy(cb + 1, t->internal, 32);
	memcpy(cb + 33, t->leaf_hash[1 - which], 32);
	in->wit_len[n_items + 1] = 65;
	in->n_wit = n_items + 2;
}

static size_t tap_sign_leaf(const struct tap_tree *t, struct txspec *s, size_t i, int which,
                            int key, uint32_t codesep, uint8_t out[65])
{
	struct script_tap_exec ex = {0};
	uint8_t hash[32];
	ex.tapscript = true;
	memcpy(ex.tapleaf_hash, t->leaf_hash[which], 32);
	ex.codesep_pos = codesep;
	tap_hash(s, i, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	return schnorr_sign(key, NULL, hash, 0, out);
}

static void test_taproot_script_path(void **state)
{
	(void)state;
	struct txspec *s = spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k1[32], k2[32];
	xonly(41, k1);
	xonly(42, k2);
	/* leaf 0: <k1> CHECKSIG; leaf 1: <k1> CHECKSIG <k2> CHECKSIGADD 2 NUMEQUAL */
	push(t->leaf[0], &t->leaf_len[0], k1, 32);
	op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	push(t->leaf[1], &t->leaf_len[1], k1, 32);
	op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_CHECKSIG);
	push(t->leaf[1], &t->leaf_len[1], k2, 32);
	op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_CHECKSIGADD);
	op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_2);
	op(t->leaf[1], &t->leaf_len[1], SCRIPT_OP_NUMEQUAL);
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);

	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 41, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	/* the wrong sibling, a broken internal key, a bad control size */
	s->in[0].wit[2][40] ^= 1;
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[2][40] ^= 1;
	s->in[0].wit[2][0] ^= 1; /* parity */
	EXPECT_ERR(SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit[2][0] ^= 1;
	s->in[0].wit_len[2] = 64;
	EXPECT_ERR(SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	s->in[0].wit_len[2] = 65;
	/* a failing non-empty signature is an error in tapscript */
	s->in[0].wit[0][3] ^= 1;
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));
	/* an empty one is just false */
	s->in[0].wit_len[0] = 0;
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_CONSENSUS));

	/* leaf 1: both signatures (stack: sig2 sig1, sig1 on top) */
	s->in[0].wit_len[1] = tap_sign_leaf(t, s, 0, 1, 41, UINT32_MAX, s->in[0].wit[1]);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 1, 42, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 1, 2);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit_len[0] = 0;
	EXPECT_ERR(SCRIPT_ERR_EVAL_FALSE, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(t);
	free(s);
}

/* Spend a one-script tree (leaf 0 = script, leaf 1 = OP_1) with the given stack. */
static int run_tapscript(const uint8_t *script, size_t len, uint8_t version,
                         const uint8_t *const *items, const size_t *lens, size_t n, uint32_t flags)
{
	struct txspec *s = spec_new(1, 1);
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
	int err = verify(s, 0, flags);
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
	EXPECT_ERR(SCRIPT_ERR_OK,
	           run_tapscript(success, 2, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_DISCOURAGE_OP_SUCCESS,
	           run_tapscript(success, 2, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_STANDARD));
	/* but a malformed push before it is still an error */
	uint8_t bad_push[] = {0x05, 0x50};
	EXPECT_ERR(SCRIPT_ERR_BAD_OPCODE,
	           run_tapscript(bad_push, 2, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	/* unknown leaf versions */
	uint8_t ret[] = {SCRIPT_OP_RETURN};
	EXPECT_ERR(SCRIPT_ERR_OK,
	           run_tapscript(ret, 1, 0xc2, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION,
	           run_tapscript(ret, 1, 0xc2, NULL, NULL, 0, SCRIPT_VERIFY_STANDARD));
	/* MINIMALIF is consensus */
	uint8_t ifs[] = {SCRIPT_OP_IF, SCRIPT_OP_1, SCRIPT_OP_ELSE, SCRIPT_OP_1, SCRIPT_OP_ENDIF};
	EXPECT_ERR(SCRIPT_ERR_TAPSCRIPT_MINIMALIF,
	           run_tapscript(ifs, sizeof(ifs), 0xc0, it, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_OK,
	           run_tapscript(ifs, sizeof(ifs), 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	/* no CHECKMULTISIG; CHECKSIGADD exists */
	uint8_t cms[] = {SCRIPT_OP_0, SCRIPT_OP_0, SCRIPT_OP_0, SCRIPT_OP_CHECKMULTISIG};
	EXPECT_ERR(SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG,
	           run_tapscript(cms, sizeof(cms), 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	/* keys: empty fails, unknown types pass (discouraged) */
	size_t n = 0;
	op(sc, &n, SCRIPT_OP_0);
	op(sc, &n, SCRIPT_OP_CHECKSIG);
	EXPECT_ERR(SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY,
	           run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	uint8_t k33[33] = {2, 1};
	n = 0;
	push(sc, &n, k33, 33);
	op(sc, &n, SCRIPT_OP_CHECKSIG);
	EXPECT_ERR(SCRIPT_ERR_OK,
	           run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_CONSENSUS));
	EXPECT_ERR(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE,
	           run_tapscript(sc, n, 0xc0, it + 1, lens, 1, SCRIPT_VERIFY_STANDARD));
	/* no 201-opcode limit and no 10,000-byte limit in tapscript */
	uint8_t *many = malloc(12001);
	memset(many, SCRIPT_OP_NOP, 12000);
	many[12000] = SCRIPT_OP_1;
	EXPECT_ERR(SCRIPT_ERR_OK,
	           run_tapscript(many, 12001, 0xc0, NULL, NULL, 0, SCRIPT_VERIFY_CONSENSUS));
	free(many);
}

/* The validation weight budget: N+1 signature checks of one signature. */
static int run_weight(int reps)
{
	struct txspec *s = spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k[32];
	xonly(43, k);
	for (int r = 0; r < reps; r++) {
		op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_DUP);
		push(t->leaf[0], &t->leaf_len[0], k, 32);
		op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIGVERIFY);
	}
	push(t->leaf[0], &t->leaf_len[0], k, 32);
	op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	t->leaf[1][0] = SCRIPT_OP_1;
	t->leaf_len[1] = 1;
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 43, UINT32_MAX, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	int err = verify(s, 0, SCRIPT_VERIFY_CONSENSUS);
	free(t);
	free(s);
	return err;
}

static void test_tapscript_weight_and_codesep(void **state)
{
	(void)state;
	EXPECT_ERR(SCRIPT_ERR_OK, run_weight(2));
	EXPECT_ERR(SCRIPT_ERR_OK, run_weight(8));
	EXPECT_ERR(SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT, run_weight(20));

	/* CODESEPARATOR at opcode position 1: the signature commits to it */
	struct txspec *s = spec_new(1, 1);
	struct tap_tree *t = calloc(1, sizeof(*t));
	uint8_t k[32];
	xonly(44, k);
	op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_NOP);
	op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CODESEPARATOR);
	push(t->leaf[0], &t->leaf_len[0], k, 32);
	op(t->leaf[0], &t->leaf_len[0], SCRIPT_OP_CHECKSIG);
	t->leaf[1][0] = SCRIPT_OP_1;
	t->leaf_len[1] = 1;
	t->leaf_version[0] = t->leaf_version[1] = SCRIPT_TAPROOT_LEAF_TAPSCRIPT;
	tree_finish(t, s, 0);
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 44, 1, s->in[0].wit[0]);
	tree_spend(t, s, 0, 0, 1);
	EXPECT_ERR(SCRIPT_ERR_OK, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	s->in[0].wit_len[0] = tap_sign_leaf(t, s, 0, 0, 44, UINT32_MAX, s->in[0].wit[0]);
	EXPECT_ERR(SCRIPT_ERR_SCHNORR_SIG, verify(s, 0, SCRIPT_VERIFY_STANDARD));
	free(t);
	free(s);
}

/* ---- the common path allocates nothing; threads share precomputed data --------- */

struct shared {
	struct built b;
	struct script_precomputed pre;
	int failures;
	pthread_mutex_t lock;
};

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
	struct txspec *s = spec_new(3, 2);
	uint8_t internal[32], tweak[32], q[32], hash[32];
	int parity;
	struct script_tap_exec ex = {0};
	sign_p2pkh(s, 0, COMPRESSED, SCRIPT_SIGHASH_ALL);
	sign_p2wpkh(s, 1, COMPRESSED, false);
	xonly(31, internal);
	script_taproot_tweak(internal, NULL, tweak);
	assert_int_equal(script_taproot_output_key(internal, NULL, q, &parity), 0);
	s->spk[2][0] = SCRIPT_OP_1;
	s->spk[2][1] = 32;
	memcpy(s->spk[2] + 2, q, 32);
	s->spk_len[2] = 34;
	s->amount[2] = 31337;
	ex.codesep_pos = UINT32_MAX;
	tap_hash(s, 2, SCRIPT_SIGHASH_DEFAULT, &ex, hash);
	s->in[2].wit_len[0] = schnorr_sign(31, tweak, hash, 0, s->in[2].wit[0]);
	s->in[2].n_wit = 1;
	/* input 1's signature was made before input 2's witness existed: BIP143
	 * does not sign witnesses, so it stays valid */

	struct shared sh = {0};
	pthread_mutex_init(&sh.lock, NULL);
	build(s, &sh.b);
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

static int setup(void **state)
{
	(void)state;
	sctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	return sctx ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	secp256k1_context_destroy(sctx);
	return 0;
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
	    cmocka_unit_test(test_taproot_key_path),
	    cmocka_unit_test(test_taproot_script_path),
	    cmocka_unit_test(test_tapscript_rules),
	    cmocka_unit_test(test_tapscript_weight_and_codesep),
	    cmocka_unit_test(test_no_alloc_and_threads),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	proto_freelist_drain();
	return rc;
}
