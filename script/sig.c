/*
 * script/sig.c: signature and public key checks through libsecp256k1.
 *
 * One context serves every thread: secp256k1_context_static, which is
 * read-only and enough for parsing, normalizing, verifying and tweak
 * checks. Consensus ECDSA parsing is the lax DER parser below (the logic of
 * Bitcoin Core's ecdsa_signature_parse_der_lax in pubkey.cpp), because
 * signatures from before BIP66 that OpenSSL accepted are still valid in old
 * blocks; strict DER is a separate, flag-controlled encoding check.
 */
#include "script/internal.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <string.h>

/** Shortest and longest strict-DER signature with its hashtype byte (BIP66). */
#define DER_MIN_LEN 9u
#define DER_MAX_LEN 73u

static const secp256k1_context *ctx(void)
{
	return secp256k1_context_static;
}

/*
 * Read one DER length in the lax style: a long form may carry leading zero
 * bytes and is accepted up to 3 significant bytes. Returns false when the
 * length is malformed or runs past the input.
 */
static bool lax_len(const uint8_t *in, size_t inlen, size_t *pos, size_t *len)
{
	size_t p = *pos;
	if (p == inlen)
		return false;
	size_t lenbyte = in[p++];
	if (lenbyte & 0x80) {
		lenbyte -= 0x80;
		if (lenbyte > inlen - p)
			return false;
		while (lenbyte > 0 && in[p] == 0) {
			p++;
			lenbyte--;
		}
		if (lenbyte >= 4)
			return false;
		size_t v = 0;
		while (lenbyte > 0) {
			v = (v << 8) | in[p++];
			lenbyte--;
		}
		*len = v;
	} else {
		*len = lenbyte;
	}
	if (*len > inlen - p)
		return false;
	*pos = p;
	return true;
}

/* Copy a big-endian integer into a 32-byte slot, dropping leading zeros;
 * false if it does not fit. */
static bool lax_int(const uint8_t *p, size_t len, uint8_t out[32])
{
	while (len > 0 && *p == 0) {
		p++;
		len--;
	}
	if (len > 32)
		return false;
	memcpy(out + 32 - len, p, len);
	return true;
}

/*
 * Lax DER: a sequence tag whose length is skipped rather than checked, two
 * integers with lax lengths, anything after S ignored. R or S too large
 * gives a well-formed but invalid (zero) signature rather than a failure,
 * exactly as Core, so only verification can reject it.
 */
static bool parse_der_lax(secp256k1_ecdsa_signature *sig, const uint8_t *in, size_t inlen)
{
	uint8_t compact[64] = {0};
	size_t pos = 0, rpos, rlen, spos, slen, seqlen;
	/* start from a parsed, invalid (all-zero) signature */
	if (!secp256k1_ecdsa_signature_parse_compact(ctx(), sig, compact))
		return false;

	if (pos == inlen || in[pos] != 0x30)
		return false;
	pos++;
	/* sequence length: only its own length bytes are skipped */
	if (pos == inlen)
		return false;
	seqlen = in[pos++];
	if (seqlen & 0x80) {
		seqlen -= 0x80;
		if (seqlen > inlen - pos)
			return false;
		pos += seqlen;
	}

	if (pos == inlen || in[pos] != 0x02)
		return false;
	pos++;
	if (!lax_len(in, inlen, &pos, &rlen))
		return false;
	rpos = pos;
	pos += rlen;

	if (pos == inlen || in[pos] != 0x02)
		return false;
	pos++;
	if (!lax_len(in, inlen, &pos, &slen))
		return false;
	spos = pos;

	bool overflow =
	    !lax_int(in + rpos, rlen, compact) || !lax_int(in + spos, slen, compact + 32);
	if (!overflow)
		overflow = !secp256k1_ecdsa_signature_parse_compact(ctx(), sig, compact);
	if (overflow) {
		memset(compact, 0, sizeof(compact));
		if (!secp256k1_ecdsa_signature_parse_compact(ctx(), sig, compact))
			return false;
	}
	return true;
}

/* Core's IsValidSignatureEncoding (BIP66 strict DER, hashtype byte included). */
static bool is_strict_der(const uint8_t *sig, size_t len)
{
	if (len < DER_MIN_LEN || len > DER_MAX_LEN)
		return false;
	if (sig[0] != 0x30)
		return false;
	if (sig[1] != len - 3)
		return false;
	size_t len_r = sig[3];
	if (5 + len_r >= len)
		return false;
	size_t len_s = sig[5 + len_r];
	if (len_r + len_s + 7 != len)
		return false;
	if (sig[2] != 0x02)
		return false;
	if (len_r == 0)
		return false;
	if (sig[4] & 0x80)
		return false;
	/* no padding unless the next byte would read as negative */
	if (len_r > 1 && sig[4] == 0x00 && !(sig[5] & 0x80))
		return false;
	if (sig[len_r + 4] != 0x02)
		return false;
	if (len_s == 0)
		return false;
	if (sig[len_r + 6] & 0x80)
		return false;
	if (len_s > 1 && sig[len_r + 6] == 0x00 && !(sig[len_r + 7] & 0x80))
		return false;
	return true;
}

/* Core's CPubKey::CheckLowS over the signature without its hashtype byte. */
static bool is_low_s(const uint8_t *der, size_t len)
{
	secp256k1_ecdsa_signature s;
	if (!parse_der_lax(&s, der, len))
		return false;
	/* normalize returns 1 when S was high */
	return !secp256k1_ecdsa_signature_normalize(ctx(), NULL, &s);
}

static bool is_defined_hashtype(const uint8_t *sig, size_t len)
{
	if (len == 0)
		return false;
	uint8_t t = sig[len - 1] & (uint8_t)~SCRIPT_SIGHASH_ANYONECANPAY;
	return t >= SCRIPT_SIGHASH_ALL && t <= SCRIPT_SIGHASH_SINGLE;
}

int script_check_sig_encoding(const uint8_t *sig, size_t len, uint32_t flags)
{
	/* The empty signature is the compact way to fail a CHECK(MULTI)SIG. */
	if (len == 0)
		return 0;
	if ((flags & (SCRIPT_VERIFY_DERSIG | SCRIPT_VERIFY_LOW_S | SCRIPT_VERIFY_STRICTENC)) &&
	    !is_strict_der(sig, len))
		return -SCRIPT_ERR_SIG_DER;
	if ((flags & SCRIPT_VERIFY_LOW_S) && !is_low_s(sig, len - 1))
		return -SCRIPT_ERR_SIG_HIGH_S;
	if ((flags & SCRIPT_VERIFY_STRICTENC) && !is_defined_hashtype(sig, len))
		return -SCRIPT_ERR_SIG_HASHTYPE;
	return 0;
}

static bool is_compressed_or_uncompressed(const uint8_t *pub, size_t len)
{
	if (len < 33)
		return false;
	if (pub[0] == 0x04)
		return len == 65;
	if (pub[0] == 0x02 || pub[0] == 0x03)
		return len == 33;
	return false;
}

int script_check_pubkey_encoding(const uint8_t *pub, size_t len, uint32_t flags,
                                 enum script_sigversion sv)
{
	if ((flags & SCRIPT_VERIFY_STRICTENC) && !is_compressed_or_uncompressed(pub, len))
		return -SCRIPT_ERR_PUBKEYTYPE;
	/* segwit v0 accepts compressed keys only (policy) */
	if ((flags & SCRIPT_VERIFY_WITNESS_PUBKEYTYPE) && sv == SCRIPT_SIGVERSION_WITNESS_V0 &&
	    !(len == 33 && (pub[0] == 0x02 || pub[0] == 0x03)))
		return -SCRIPT_ERR_WITNESS_PUBKEYTYPE;
	return 0;
}

bool script_pubkey_size_ok(const uint8_t *pub, size_t len)
{
	if (len == 0)
		return false;
	switch (pub[0]) {
	case 0x02:
	case 0x03:
		return len == 33;
	case 0x04:
	case 0x06:
	case 0x07:
		return len == 65;
	default:
		return false;
	}
}

bool script_check_ecdsa(struct script_exec *ex, const uint8_t *sig, size_t sig_len,
                        const uint8_t *pub, size_t pub_len, const uint8_t *code, size_t code_len,
                        enum script_sigversion sv)
{
	secp256k1_pubkey pk;
	secp256k1_ecdsa_signature s;
	uint8_t hash[32];
	if (!script_pubkey_size_ok(pub, pub_len) || sig_len == 0)
		return false;
	/* the hashtype byte: one byte, serialized as a 32-bit value */
	uint32_t hash_type = sig[sig_len - 1];
	if (sv == SCRIPT_SIGVERSION_WITNESS_V0 && ex->amount < 0)
		return false;
	if (!script_parse_pubkey(&pk, pub, pub_len))
		return false;
	if (!parse_der_lax(&s, sig, sig_len - 1))
		return false;
	if (sv == SCRIPT_SIGVERSION_WITNESS_V0)
		script_sighash_v0(ex->tx, ex->in, code, code_len, ex->amount, hash_type, ex->pre,
		                  hash);
	else
		script_sighash_legacy(ex->tx, ex->in, code, code_len, hash_type, hash);
	/* libsecp256k1 verifies low-S only; high S was never a consensus rule */
	secp256k1_ecdsa_signature_normalize(ctx(), &s, &s);
	return secp256k1_ecdsa_verify(ctx(), &s, hash, &pk) == 1;
}

int script_check_schnorr(struct script_exec *ex, const uint8_t *sig, size_t sig_len,
                         const uint8_t pub[32], enum script_sigversion sv)
{
	secp256k1_xonly_pubkey pk;
	uint8_t hash[32];
	uint8_t hash_type = SCRIPT_SIGHASH_DEFAULT;
	struct script_spent_output spent = {ex->amount, ex->spk, ex->spk_len};
	int rc;

	if (sig_len != 64 && sig_len != 65)
		return -SCRIPT_ERR_SCHNORR_SIG_SIZE;
	if (sig_len == 65) {
		hash_type = sig[64];
		/* DEFAULT is spelled by omitting the byte, never explicitly */
		if (hash_type == SCRIPT_SIGHASH_DEFAULT)
			return -SCRIPT_ERR_SCHNORR_SIG_HASHTYPE;
	}
	ex->tap.tapscript = sv == SCRIPT_SIGVERSION_TAPSCRIPT;
	rc = script_sighash_taproot(ex->tx, ex->in, hash_type, ex->pre, &spent, &ex->tap, hash);
	if (rc)
		return rc;
	if (!script_parse_xonly(&pk, pub))
		return -SCRIPT_ERR_SCHNORR_SIG;
	if (!secp256k1_schnorrsig_verify(ctx(), sig, hash, 32, &pk))
		return -SCRIPT_ERR_SCHNORR_SIG;
	return 0;
}

bool script_check_tap_tweak(const uint8_t q[32], const uint8_t p[32], const uint8_t merkle_root[32],
                            int parity)
{
	secp256k1_xonly_pubkey internal;
	uint8_t tweak[32];
	if (!script_parse_xonly(&internal, p))
		return false;
	script_taproot_tweak(p, merkle_root, tweak);
	return secp256k1_xonly_pubkey_tweak_add_check(ctx(), q, parity, &internal, tweak) == 1;
}

int script_taproot_output_key(const uint8_t internal_key[32], const uint8_t *merkle_root,
                              uint8_t out[32], int *parity)
{
	secp256k1_xonly_pubkey internal, xq;
	secp256k1_pubkey q;
	uint8_t tweak[32];
	int par = 0;
	if (!secp256k1_xonly_pubkey_parse(ctx(), &internal, internal_key))
		return -1;
	script_taproot_tweak(internal_key, merkle_root, tweak);
	if (!secp256k1_xonly_pubkey_tweak_add(ctx(), &q, &internal, tweak))
		return -1;
	if (!secp256k1_xonly_pubkey_from_pubkey(ctx(), &xq, &par, &q))
		return -1;
	if (!secp256k1_xonly_pubkey_serialize(ctx(), out, &xq))
		return -1;
	if (parity)
		*parity = par;
	return 0;
}
