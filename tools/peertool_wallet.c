/*
 * tools/peertool_wallet.c: seed-derived keys, output scripts and input
 * signatures for peertool chaingen. See peertool_wallet.h.
 *
 * Every script is built here byte by byte rather than through script/'s
 * parser, and every signature is made with libsecp256k1 directly; the
 * sighashes come from script/ (the only shared piece), and a real Bitcoin
 * Core checks the result in tests/integration/test_peertool_chaingen.py.
 */
#include "tools/peertool_wallet.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <string.h>

/* Domain separation: a key and an aux_rand can never collide. */
#define WALLET_TAG_SEED "peertool/chaingen/seed"
#define WALLET_TAG_KEY  "peertool/chaingen/key"
#define WALLET_TAG_AUX  "peertool/chaingen/aux"

/* Longest DER signature (72) plus the sighash byte. */
#define WALLET_ECDSA_SIG_MAX 73u

static const char *const TYPE_NAMES[PEERTOOL_COIN__COUNT] = {
    [PEERTOOL_COIN_P2PKH] = "p2pkh",
    [PEERTOOL_COIN_P2SH_MULTI] = "p2sh-multisig",
    [PEERTOOL_COIN_P2SH_P2WPKH] = "p2sh-p2wpkh",
    [PEERTOOL_COIN_P2WPKH] = "p2wpkh",
    [PEERTOOL_COIN_P2WSH_MULTI] = "p2wsh-multisig",
    [PEERTOOL_COIN_P2TR_KEY] = "p2tr-key",
    [PEERTOOL_COIN_P2TR_SCRIPT] = "p2tr-script",
};

/*
 * Upper bounds in weight units: non-witness bytes count 4, witness bytes 1.
 * Every input has 36 (outpoint) + 4 (sequence) + the scriptSig's length
 * prefix and bytes; a witness input adds its item count and items. ECDSA
 * signatures are counted at 72+1 bytes, Schnorr at 64+1.
 */
static const size_t INPUT_WEIGHT[PEERTOOL_COIN__COUNT] = {
    /* sig push 74, key push 34 */
    [PEERTOOL_COIN_P2PKH] = 4 * (40 + 1 + 108),
    /* OP_0, two sig pushes, PUSHDATA1 of the 105-byte script: 256, 3-byte prefix */
    [PEERTOOL_COIN_P2SH_MULTI] = 4 * (40 + 3 + 256),
    /* one 23-byte push; witness: count, sig, key */
    [PEERTOOL_COIN_P2SH_P2WPKH] = 4 * (40 + 1 + 23) + 1 + 74 + 34,
    [PEERTOOL_COIN_P2WPKH] = 4 * (40 + 1) + 1 + 74 + 34,
    /* witness: count, empty dummy, two sigs, the script */
    [PEERTOOL_COIN_P2WSH_MULTI] = 4 * (40 + 1) + 1 + 1 + 74 + 74 + 1 + 105,
    [PEERTOOL_COIN_P2TR_KEY] = 4 * (40 + 1) + 1 + 66,
    /* witness: count, sig, 34-byte leaf, 65-byte control block */
    [PEERTOOL_COIN_P2TR_SCRIPT] = 4 * (40 + 1) + 1 + 66 + 35 + 66,
};

const char *peertool_coin_type_name(enum peertool_coin_type t)
{
	return (unsigned)t < PEERTOOL_COIN__COUNT ? TYPE_NAMES[t] : "unknown";
}

size_t peertool_wallet_input_vsize(enum peertool_coin_type t)
{
	return (INPUT_WEIGHT[t] + 3) / 4;
}

int peertool_wallet_init(struct peertool_wallet *w, const char *seed)
{
	memset(w, 0, sizeof(*w));
	/* No context randomization: it only blinds against side channels,
	 * and would be the one use of OS randomness in the tool. Nonces do
	 * not depend on it, so output would not change either way. */
	w->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!w->ctx)
		return -1;
	proto_tagged_hash(WALLET_TAG_SEED, seed, strlen(seed), w->seed);
	return 0;
}

void peertool_wallet_release(struct peertool_wallet *w)
{
	if (w->ctx)
		secp256k1_context_destroy(w->ctx);
	w->ctx = NULL;
}

/* The secret key of (owner, role): the first valid tagged hash over a counter. */
static int derive_seckey(const struct peertool_wallet *w, uint32_t owner, uint8_t role,
                         uint8_t sk[32])
{
	uint8_t msg[32 + 4 + 1 + 1];
	memcpy(msg, w->seed, 32);
	proto_put_le32(msg + 32, owner);
	msg[36] = role;
	for (unsigned ctr = 0; ctr < 256; ctr++) {
		msg[37] = (uint8_t)ctr;
		proto_tagged_hash(WALLET_TAG_KEY, msg, sizeof(msg), sk);
		if (secp256k1_ec_seckey_verify(w->ctx, sk))
			return 0;
	}
	return -1;
}

static int derive_ecdsa(const struct peertool_wallet *w, uint32_t owner, uint8_t role,
                        struct peertool_keys *k)
{
	secp256k1_pubkey pk;
	size_t len = 33;
	if (derive_seckey(w, owner, role, k->sk[role]) ||
	    !secp256k1_ec_pubkey_create(w->ctx, &pk, k->sk[role]) ||
	    !secp256k1_ec_pubkey_serialize(w->ctx, k->pub[role], &len, &pk,
	                                   SECP256K1_EC_COMPRESSED))
		return -1;
	return 0;
}

static int derive_xonly(const struct peertool_wallet *w, uint32_t owner, uint8_t role,
                        struct peertool_keys *k)
{
	secp256k1_keypair kp;
	secp256k1_xonly_pubkey x;
	if (derive_seckey(w, owner, role, k->sk[role]) ||
	    !secp256k1_keypair_create(w->ctx, &kp, k->sk[role]) ||
	    !secp256k1_keypair_xonly_pub(w->ctx, &x, NULL, &kp) ||
	    !secp256k1_xonly_pubkey_serialize(w->ctx, k->xonly[role], &x))
		return -1;
	return 0;
}

/* Append a minimal push of n bytes (n <= 255: the wallet never pushes more). */
static void push(uint8_t *buf, size_t *len, const uint8_t *data, size_t n)
{
	if (n >= SCRIPT_OP_PUSHDATA1) {
		buf[(*len)++] = SCRIPT_OP_PUSHDATA1;
		buf[(*len)++] = (uint8_t)n;
	} else {
		buf[(*len)++] = (uint8_t)n;
	}
	memcpy(buf + *len, data, n);
	*len += n;
}

/* OP_2 <k0> <k1> <k2> OP_3 OP_CHECKMULTISIG, 105 bytes. */
static void multisig_script(struct peertool_keys *k)
{
	k->script_len = 0;
	k->script[k->script_len++] = SCRIPT_OP_2;
	for (int i = 0; i < 3; i++)
		push(k->script, &k->script_len, k->pub[i], 33);
	k->script[k->script_len++] = SCRIPT_OP_3;
	k->script[k->script_len++] = SCRIPT_OP_CHECKMULTISIG;
}

static void spk_p2sh(struct peertool_keys *k, const uint8_t *redeem, size_t len)
{
	k->spk[0] = SCRIPT_OP_HASH160;
	k->spk[1] = 20;
	proto_hash160(redeem, len, k->spk + 2);
	k->spk[22] = SCRIPT_OP_EQUAL;
	k->spk_len = 23;
}

/* OP_0 <20>: the P2WPKH program, also P2SH-P2WPKH's redeem script. */
static void p2wpkh_program(const uint8_t pub[33], uint8_t out[22])
{
	out[0] = SCRIPT_OP_0;
	out[1] = 20;
	proto_hash160(pub, 33, out + 2);
}

/* <xonly> OP_CHECKSIG, a 34-byte tapscript leaf. */
static void checksig_leaf(const uint8_t xonly[32], uint8_t out[34])
{
	out[0] = 32;
	memcpy(out + 1, xonly, 32);
	out[33] = SCRIPT_OP_CHECKSIG;
}

static int keys_p2tr_script(const struct peertool_wallet *w, uint32_t owner,
                            struct peertool_keys *k)
{
	uint8_t other[34], other_hash[32], root[32];
	int parity;
	/* role 0 the internal key, role 1 the leaf we spend, role 2 its sibling:
	 * the control block then carries one node, so the path is not empty. */
	for (uint8_t r = 0; r < 3; r++)
		if (derive_xonly(w, owner, r, k))
			return -1;
	checksig_leaf(k->xonly[1], k->script);
	k->script_len = 34;
	checksig_leaf(k->xonly[2], other);
	script_tapleaf_hash(SCRIPT_TAPROOT_LEAF_TAPSCRIPT, k->script, 34, k->leaf_hash);
	script_tapleaf_hash(SCRIPT_TAPROOT_LEAF_TAPSCRIPT, other, 34, other_hash);
	script_tapbranch_hash(k->leaf_hash, other_hash, root);
	k->spk[0] = SCRIPT_OP_1;
	k->spk[1] = 32;
	if (script_taproot_output_key(k->xonly[0], root, k->spk + 2, &parity))
		return -1;
	k->spk_len = 34;
	k->control[0] = (uint8_t)(SCRIPT_TAPROOT_LEAF_TAPSCRIPT | (parity & 1));
	memcpy(k->control + 1, k->xonly[0], 32);
	memcpy(k->control + 33, other_hash, 32);
	k->control_len = sizeof(k->control);
	return 0;
}

int peertool_wallet_keys(const struct peertool_wallet *w, uint32_t owner, enum peertool_coin_type t,
                         struct peertool_keys *k)
{
	uint8_t prog[22];
	memset(k, 0, sizeof(*k));
	k->type = t;
	switch (t) {
	case PEERTOOL_COIN_P2PKH:
		if (derive_ecdsa(w, owner, 0, k))
			return -1;
		k->spk[0] = SCRIPT_OP_DUP;
		k->spk[1] = SCRIPT_OP_HASH160;
		k->spk[2] = 20;
		proto_hash160(k->pub[0], 33, k->spk + 3);
		k->spk[23] = SCRIPT_OP_EQUALVERIFY;
		k->spk[24] = SCRIPT_OP_CHECKSIG;
		k->spk_len = 25;
		return 0;
	case PEERTOOL_COIN_P2SH_MULTI:
	case PEERTOOL_COIN_P2WSH_MULTI:
		for (uint8_t r = 0; r < 3; r++)
			if (derive_ecdsa(w, owner, r, k))
				return -1;
		multisig_script(k);
		if (t == PEERTOOL_COIN_P2SH_MULTI) {
			spk_p2sh(k, k->script, k->script_len);
		} else {
			k->spk[0] = SCRIPT_OP_0;
			k->spk[1] = 32;
			proto_sha256(k->script, k->script_len, k->spk + 2);
			k->spk_len = 34;
		}
		return 0;
	case PEERTOOL_COIN_P2SH_P2WPKH:
		if (derive_ecdsa(w, owner, 0, k))
			return -1;
		p2wpkh_program(k->pub[0], prog);
		memcpy(k->script, prog, sizeof(prog));
		k->script_len = sizeof(prog);
		spk_p2sh(k, prog, sizeof(prog));
		return 0;
	case PEERTOOL_COIN_P2WPKH:
		if (derive_ecdsa(w, owner, 0, k))
			return -1;
		p2wpkh_program(k->pub[0], k->spk);
		k->spk_len = 22;
		return 0;
	case PEERTOOL_COIN_P2TR_KEY:
		/* BIP86-style: no script tree, the output key commits to nothing. */
		if (derive_xonly(w, owner, 0, k))
			return -1;
		script_taproot_tweak(k->xonly[0], NULL, k->tweak);
		k->spk[0] = SCRIPT_OP_1;
		k->spk[1] = 32;
		if (script_taproot_output_key(k->xonly[0], NULL, k->spk + 2, NULL))
			return -1;
		k->spk_len = 34;
		return 0;
	case PEERTOOL_COIN_P2TR_SCRIPT:
		return keys_p2tr_script(w, owner, k);
	case PEERTOOL_COIN__COUNT:
		break;
	}
	return -1;
}

/* DER signature plus the sighash byte; libsecp256k1 always makes low S. */
static int sign_ecdsa(const struct peertool_wallet *w, const uint8_t sk[32], const uint8_t hash[32],
                      uint8_t out[WALLET_ECDSA_SIG_MAX], size_t *len)
{
	secp256k1_ecdsa_signature sig;
	size_t n = WALLET_ECDSA_SIG_MAX - 1;
	/* NULL nonce function: RFC 6979, so the same key and hash give the
	 * same signature on every run. */
	if (!secp256k1_ecdsa_sign(w->ctx, &sig, hash, sk, NULL, NULL) ||
	    !secp256k1_ecdsa_signature_serialize_der(w->ctx, out, &n, &sig))
		return -1;
	out[n] = SCRIPT_SIGHASH_ALL;
	*len = n + 1;
	return 0;
}

/* BIP340 signature with the key (tweaked by `tweak` if given). */
static int sign_schnorr(const struct peertool_wallet *w, const uint8_t sk[32], const uint8_t *tweak,
                        const uint8_t hash[32], uint8_t hash_type, uint8_t out[65], size_t *len)
{
	secp256k1_keypair kp;
	uint8_t aux_msg[64], aux[32];
	if (!secp256k1_keypair_create(w->ctx, &kp, sk))
		return -1;
	if (tweak && !secp256k1_keypair_xonly_tweak_add(w->ctx, &kp, tweak))
		return -1;
	/* aux_rand from the seed and the message: deterministic, and still
	 * different for every signature as BIP340 recommends. */
	memcpy(aux_msg, w->seed, 32);
	memcpy(aux_msg + 32, hash, 32);
	proto_tagged_hash(WALLET_TAG_AUX, aux_msg, sizeof(aux_msg), aux);
	if (!secp256k1_schnorrsig_sign32(w->ctx, out, hash, &kp, aux))
		return -1;
	*len = 64;
	if (hash_type != SCRIPT_SIGHASH_DEFAULT)
		out[(*len)++] = hash_type;
	return 0;
}

static void wit_push(struct peertool_sigdata *d, const uint8_t *data, size_t n)
{
	if (n)
		memcpy(d->wit[d->n_wit], data, n);
	d->wit_len[d->n_wit++] = n;
}

/* The two signing roles of a 2-of-3, in key order as CHECKMULTISIG wants. */
static void multisig_roles(unsigned pair, int roles[2])
{
	static const int PAIRS[3][2] = {{0, 1}, {0, 2}, {1, 2}};
	roles[0] = PAIRS[pair % 3][0];
	roles[1] = PAIRS[pair % 3][1];
}

static int sign_multisig(const struct peertool_wallet *w, const struct peertool_keys *k,
                         const uint8_t hash[32], unsigned pair,
                         uint8_t sigs[2][WALLET_ECDSA_SIG_MAX], size_t lens[2])
{
	int roles[2];
	multisig_roles(pair, roles);
	for (int i = 0; i < 2; i++)
		if (sign_ecdsa(w, k->sk[roles[i]], hash, sigs[i], &lens[i]))
			return -1;
	return 0;
}

int peertool_wallet_sign(const struct peertool_wallet *w, const struct proto_tx *tx, uint32_t in,
                         const struct script_precomputed *pre,
                         const struct script_spent_output *spent, const struct peertool_keys *k,
                         const struct peertool_sign_opts *opts, struct peertool_sigdata *out)
{
	uint8_t hash[32], sig[WALLET_ECDSA_SIG_MAX], sigs[2][WALLET_ECDSA_SIG_MAX], code[25];
	size_t sig_len, lens[2];
	const struct script_spent_output *s = &spent[in];
	uint8_t tap_type = opts->taproot_default ? SCRIPT_SIGHASH_DEFAULT : SCRIPT_SIGHASH_ALL;
	struct script_tap_exec ex = {.codesep_pos = 0xffffffffu};
	memset(out, 0, sizeof(*out));
	switch (k->type) {
	case PEERTOOL_COIN_P2PKH:
		script_sighash_legacy(tx, in, k->spk, k->spk_len, SCRIPT_SIGHASH_ALL, hash);
		if (sign_ecdsa(w, k->sk[0], hash, sig, &sig_len))
			return -1;
		push(out->script_sig, &out->script_sig_len, sig, sig_len);
		push(out->script_sig, &out->script_sig_len, k->pub[0], 33);
		return 0;
	case PEERTOOL_COIN_P2SH_MULTI:
		script_sighash_legacy(tx, in, k->script, k->script_len, SCRIPT_SIGHASH_ALL, hash);
		if (sign_multisig(w, k, hash, opts->multisig_pair, sigs, lens))
			return -1;
		/* OP_0: CHECKMULTISIG's extra item, empty (NULLDUMMY). */
		out->script_sig[out->script_sig_len++] = SCRIPT_OP_0;
		push(out->script_sig, &out->script_sig_len, sigs[0], lens[0]);
		push(out->script_sig, &out->script_sig_len, sigs[1], lens[1]);
		push(out->script_sig, &out->script_sig_len, k->script, k->script_len);
		return 0;
	case PEERTOOL_COIN_P2SH_P2WPKH:
	case PEERTOOL_COIN_P2WPKH:
		/* BIP143: a P2WPKH input signs the P2PKH script of its key hash. */
		code[0] = SCRIPT_OP_DUP;
		code[1] = SCRIPT_OP_HASH160;
		code[2] = 20;
		proto_hash160(k->pub[0], 33, code + 3);
		code[23] = SCRIPT_OP_EQUALVERIFY;
		code[24] = SCRIPT_OP_CHECKSIG;
		script_sighash_v0(tx, in, code, sizeof(code), s->amount, SCRIPT_SIGHASH_ALL, pre,
		                  hash);
		if (sign_ecdsa(w, k->sk[0], hash, sig, &sig_len))
			return -1;
		if (k->type == PEERTOOL_COIN_P2SH_P2WPKH)
			push(out->script_sig, &out->script_sig_len, k->script, k->script_len);
		wit_push(out, sig, sig_len);
		wit_push(out, k->pub[0], 33);
		return 0;
	case PEERTOOL_COIN_P2WSH_MULTI:
		script_sighash_v0(tx, in, k->script, k->script_len, s->amount, SCRIPT_SIGHASH_ALL,
		                  pre, hash);
		if (sign_multisig(w, k, hash, opts->multisig_pair, sigs, lens))
			return -1;
		wit_push(out, NULL, 0);
		wit_push(out, sigs[0], lens[0]);
		wit_push(out, sigs[1], lens[1]);
		wit_push(out, k->script, k->script_len);
		return 0;
	case PEERTOOL_COIN_P2TR_KEY:
		if (script_sighash_taproot(tx, in, tap_type, pre, s, &ex, hash))
			return -1;
		if (sign_schnorr(w, k->sk[0], k->tweak, hash, tap_type, sig, &sig_len))
			return -1;
		wit_push(out, sig, sig_len);
		return 0;
	case PEERTOOL_COIN_P2TR_SCRIPT:
		ex.tapscript = true;
		memcpy(ex.tapleaf_hash, k->leaf_hash, 32);
		if (script_sighash_taproot(tx, in, tap_type, pre, s, &ex, hash))
			return -1;
		/* The leaf's key signs untweaked: only the output key is tweaked. */
		if (sign_schnorr(w, k->sk[1], NULL, hash, tap_type, sig, &sig_len))
			return -1;
		wit_push(out, sig, sig_len);
		wit_push(out, k->script, k->script_len);
		wit_push(out, k->control, k->control_len);
		return 0;
	case PEERTOOL_COIN__COUNT:
		break;
	}
	return -1;
}
