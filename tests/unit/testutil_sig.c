/*
 * tests/unit/testutil_sig.c: transactions described field by field, keys,
 * signatures and sighashes for the signature tests (test_script_sig.c,
 * test_script_taproot.c). Signatures are made here with libsecp256k1, so
 * script/ is never checked against itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil_sig.h"

secp256k1_context *tu_secp;

int tu_secp_setup(void **state)
{
	(void)state;
	tu_secp = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	return tu_secp ? 0 : -1;
}

int tu_secp_teardown(void **state)
{
	(void)state;
	secp256k1_context_destroy(tu_secp);
	tu_secp = NULL;
	return 0;
}

struct tu_txspec *tu_spec_new(size_t n_in, size_t n_out)
{
	struct tu_txspec *s = calloc(1, sizeof(*s));
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

void tu_tx_build(const struct tu_txspec *s, struct tu_built *b)
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

int tu_verify_in(const struct tu_txspec *s, size_t i, uint32_t flags, bool precompute)
{
	struct tu_built b;
	struct script_precomputed pre;
	int err = -1;
	tu_tx_build(s, &b);
	if (precompute)
		script_precompute(&pre, &b.tx, b.spent, false);
	int rc = script_verify_input(&b.tx, (uint32_t)i, &b.spent[i], flags,
	                             precompute ? &pre : NULL, &err);
	assert_int_equal(rc, -err);
	free(b.blob);
	return err;
}

int tu_verify(const struct tu_txspec *s, size_t i, uint32_t flags)
{
	int a = tu_verify_in(s, i, flags, true);
	/* without precomputed data, everything but taproot gives the same */
	int b = tu_verify_in(s, i, flags, false);
	if (a != b && b != SCRIPT_ERR_MISSING_DATA)
		fail_msg("precomputed %s, not %s", script_error_name(a), script_error_name(b));
	return a;
}

void tu_seckey(int i, uint8_t sk[32])
{
	memset(sk, 0, 32);
	sk[0] = 0x1c;
	sk[31] = (uint8_t)i;
}

size_t tu_pubkey(int i, enum tu_keyform form, uint8_t out[65])
{
	uint8_t sk[32];
	secp256k1_pubkey pk;
	size_t len = 65;
	tu_seckey(i, sk);
	assert_int_equal(secp256k1_ec_pubkey_create(tu_secp, &pk, sk), 1);
	secp256k1_ec_pubkey_serialize(tu_secp, out, &len, &pk,
	                              form == TU_COMPRESSED ? SECP256K1_EC_COMPRESSED
	                                                    : SECP256K1_EC_UNCOMPRESSED);
	if (form == TU_HYBRID)
		out[0] = (uint8_t)(0x06 | (out[64] & 1));
	return len;
}

void tu_xonly(int i, uint8_t out[32])
{
	uint8_t sk[32];
	secp256k1_keypair kp;
	secp256k1_xonly_pubkey x;
	tu_seckey(i, sk);
	assert_int_equal(secp256k1_keypair_create(tu_secp, &kp, sk), 1);
	assert_int_equal(secp256k1_keypair_xonly_pub(tu_secp, &x, NULL, &kp), 1);
	assert_int_equal(secp256k1_xonly_pubkey_serialize(tu_secp, out, &x), 1);
}

size_t tu_ecdsa_sign(int i, const uint8_t hash[32], uint8_t hash_type, uint8_t out[80])
{
	uint8_t sk[32];
	secp256k1_ecdsa_signature sig;
	size_t len = 72;
	tu_seckey(i, sk);
	assert_int_equal(secp256k1_ecdsa_sign(tu_secp, &sig, hash, sk, NULL, NULL), 1);
	assert_int_equal(secp256k1_ecdsa_signature_serialize_der(tu_secp, out, &len, &sig), 1);
	out[len] = hash_type;
	return len + 1;
}

size_t tu_schnorr_sign(int i, const uint8_t *tweak, const uint8_t hash[32], uint8_t hash_type,
                       uint8_t out[65])
{
	uint8_t sk[32];
	secp256k1_keypair kp;
	tu_seckey(i, sk);
	assert_int_equal(secp256k1_keypair_create(tu_secp, &kp, sk), 1);
	if (tweak)
		assert_int_equal(secp256k1_keypair_xonly_tweak_add(tu_secp, &kp, tweak), 1);
	assert_int_equal(secp256k1_schnorrsig_sign32(tu_secp, out, hash, &kp, NULL), 1);
	if (hash_type == 0)
		return 64;
	out[64] = hash_type;
	return 65;
}

void tu_push(uint8_t *buf, size_t *len, const uint8_t *data, size_t n)
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

void tu_op(uint8_t *buf, size_t *len, uint8_t o)
{
	buf[(*len)++] = o;
}

void tu_legacy_hash(const struct tu_txspec *s, size_t i, const uint8_t *code, size_t code_len,
                    uint32_t hash_type, uint8_t out[32])
{
	struct tu_built b;
	tu_tx_build(s, &b);
	script_sighash_legacy(&b.tx, (uint32_t)i, code, code_len, hash_type, out);
	free(b.blob);
}

void tu_v0_hash(const struct tu_txspec *s, size_t i, const uint8_t *code, size_t code_len,
                uint32_t hash_type, uint8_t out[32])
{
	struct tu_built b;
	tu_tx_build(s, &b);
	script_sighash_v0(&b.tx, (uint32_t)i, code, code_len, s->amount[i], hash_type, NULL, out);
	free(b.blob);
}

void tu_tap_hash(const struct tu_txspec *s, size_t i, uint8_t hash_type,
                 const struct script_tap_exec *ex, uint8_t out[32])
{
	struct tu_built b;
	struct script_precomputed pre;
	tu_tx_build(s, &b);
	script_precompute(&pre, &b.tx, b.spent, true);
	assert_int_equal(
	    script_sighash_taproot(&b.tx, (uint32_t)i, hash_type, &pre, &b.spent[i], ex, out), 0);
	free(b.blob);
}

size_t tu_p2pkh(const uint8_t *pub, size_t pub_len, uint8_t out[25])
{
	out[0] = SCRIPT_OP_DUP;
	out[1] = SCRIPT_OP_HASH160;
	out[2] = 20;
	proto_hash160(pub, pub_len, out + 3);
	out[23] = SCRIPT_OP_EQUALVERIFY;
	out[24] = SCRIPT_OP_CHECKSIG;
	return 25;
}
