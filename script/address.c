/*
 * script/address.c: output scripts described the way Bitcoin Core's RPCs
 * describe them, so peertool's JSON can be diffed against bitcoin-cli's:
 *
 *   script_solve       the template (Core's Solver), and its type name
 *   script_to_asm      the asm text (Core's ScriptToAsmStr)
 *   script_address     the address (ExtractDestination + EncodeDestination):
 *                      base58check, BIP173 bech32, BIP350 bech32m
 *
 * Pure and allocation-free except for the caller's writer.
 */
#include "script/internal.h"

#include <inttypes.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <stdio.h>
#include <string.h>

/** Witness program sizes with a meaning of their own (BIP141, BIP341). */
#define ADDR_WITNESS_V0_KEYHASH_SIZE    20u
#define ADDR_WITNESS_V0_SCRIPTHASH_SIZE 32u
#define ADDR_WITNESS_V1_TAPROOT_SIZE    32u
/** Base58check version bytes: mainnet, and every test network. */
#define ADDR_MAIN_PKH_VERSION 0x00u
#define ADDR_MAIN_SH_VERSION  0x05u
#define ADDR_TEST_PKH_VERSION 0x6fu
#define ADDR_TEST_SH_VERSION  0xc4u
/** BIP173: an address is at most 90 characters. */
#define ADDR_BECH32_MAX_LEN 90u
/** Checksum constants: BIP173 bech32 (version 0), BIP350 bech32m (1..16). */
#define ADDR_BECH32_CONST  1u
#define ADDR_BECH32M_CONST 0x2bc830a3u
/** Script numbers in templates and asm are at most 4 bytes (Core's nDefaultMaxNumSize). */
#define ADDR_MAX_NUM_SIZE 4u

/* ---- Solver ----------------------------------------------------------- */

/* Core's GetScriptNumber for multisig counts: OP_1..OP_16, or a minimal
 * push of a minimally encoded script number of at most 4 bytes. */
static bool template_number(uint8_t op, const uint8_t *data, uint32_t len, long min, long max,
                            long *out)
{
	long v;
	if (op >= SCRIPT_OP_1 && op <= SCRIPT_OP_16) {
		v = op - (SCRIPT_OP_1 - 1);
	} else if (op > SCRIPT_OP_0 && op <= SCRIPT_OP_PUSHDATA4) {
		if (!script_minimal_push(data, len, op) || len > ADDR_MAX_NUM_SIZE)
			return false;
		/* CScriptNum with fRequireMinimal: no needless top byte */
		if (len > 0 && (data[len - 1] & 0x7f) == 0 && (len <= 1 || !(data[len - 2] & 0x80)))
			return false;
		uint32_t mag = 0;
		for (uint32_t i = 0; i < len; i++)
			mag |= (uint32_t)data[i] << (8 * i);
		if (len > 0 && (data[len - 1] & 0x80)) {
			mag &= ~((uint32_t)0x80 << (8 * (len - 1)));
			v = -(long)mag;
		} else {
			v = (long)mag;
		}
	} else {
		return false;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Core's MatchMultisig. */
static bool match_multisig(const uint8_t *s, size_t len, struct script_solution *sol)
{
	const uint8_t *pc = s, *end = span_end(s, len), *data;
	uint32_t dlen;
	uint8_t op;
	long required, n_keys;
	unsigned n = 0;

	if (len < 1 || s[len - 1] != SCRIPT_OP_CHECKMULTISIG)
		return false;
	if (!script_get_op(&pc, end, &op, &data, &dlen) ||
	    !template_number(op, data, dlen, 1, SCRIPT_MAX_PUBKEYS_PER_MULTISIG, &required))
		return false;
	/* A failed read leaves op at OP_INVALIDOPCODE, which is no number. */
	while (script_get_op(&pc, end, &op, &data, &dlen) && script_pubkey_size_ok(data, dlen)) {
		/* More keys than any count can match: Core's size check fails too. */
		if (n == SCRIPT_MAX_PUBKEYS_PER_MULTISIG)
			return false;
		sol->keys[n].data = data;
		sol->keys[n].len = dlen;
		n++;
	}
	if (!template_number(op, data, dlen, required, SCRIPT_MAX_PUBKEYS_PER_MULTISIG, &n_keys))
		return false;
	if ((long)n != n_keys || pc + 1 != end)
		return false;
	sol->required = (unsigned)required;
	sol->n_keys = n;
	return true;
}

enum script_type script_solve(const uint8_t *s, size_t len, struct script_solution *sol)
{
	const uint8_t *program;
	size_t program_len;
	int version;

	memset(sol, 0, sizeof(*sol));
	sol->type = SCRIPT_TYPE_NONSTANDARD;
	if (script_is_p2sh(s, len)) {
		sol->data = (struct script_span){s + 2, 20};
		return sol->type = SCRIPT_TYPE_SCRIPTHASH;
	}
	if (script_is_witness_program(s, len, &version, &program, &program_len)) {
		sol->data = (struct script_span){program, program_len};
		sol->witness_version = version;
		if (version == 0 && program_len == ADDR_WITNESS_V0_KEYHASH_SIZE)
			return sol->type = SCRIPT_TYPE_WITNESS_V0_KEYHASH;
		if (version == 0 && program_len == ADDR_WITNESS_V0_SCRIPTHASH_SIZE)
			return sol->type = SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH;
		if (version == 1 && program_len == ADDR_WITNESS_V1_TAPROOT_SIZE)
			return sol->type = SCRIPT_TYPE_WITNESS_V1_TAPROOT;
		if (version == 1 && program_len == 2 && program[0] == 0x4e && program[1] == 0x73)
			return sol->type = SCRIPT_TYPE_ANCHOR;
		if (version != 0)
			return sol->type = SCRIPT_TYPE_WITNESS_UNKNOWN;
		memset(sol, 0, sizeof(*sol));
		return sol->type = SCRIPT_TYPE_NONSTANDARD;
	}
	/* Provably unspendable: what follows OP_RETURN does not matter as long
	 * as it is pushes (OP_1..OP_16 and OP_RESERVED count, as in Core). */
	if (len >= 1 && s[0] == SCRIPT_OP_RETURN && script_is_push_only(s + 1, len - 1))
		return sol->type = SCRIPT_TYPE_NULL_DATA;
	if ((len == 35 || len == 67) && s[0] == len - 2 && s[len - 1] == SCRIPT_OP_CHECKSIG &&
	    script_pubkey_size_ok(s + 1, len - 2)) {
		sol->data = (struct script_span){s + 1, len - 2};
		return sol->type = SCRIPT_TYPE_PUBKEY;
	}
	if (len == 25 && s[0] == SCRIPT_OP_DUP && s[1] == SCRIPT_OP_HASH160 && s[2] == 20 &&
	    s[23] == SCRIPT_OP_EQUALVERIFY && s[24] == SCRIPT_OP_CHECKSIG) {
		sol->data = (struct script_span){s + 3, 20};
		return sol->type = SCRIPT_TYPE_PUBKEYHASH;
	}
	if (match_multisig(s, len, sol))
		return sol->type = SCRIPT_TYPE_MULTISIG;
	memset(sol, 0, sizeof(*sol));
	return sol->type = SCRIPT_TYPE_NONSTANDARD;
}

const char *script_type_name(enum script_type type)
{
	switch (type) {
	case SCRIPT_TYPE_NONSTANDARD:
		return "nonstandard";
	case SCRIPT_TYPE_ANCHOR:
		return "anchor";
	case SCRIPT_TYPE_PUBKEY:
		return "pubkey";
	case SCRIPT_TYPE_PUBKEYHASH:
		return "pubkeyhash";
	case SCRIPT_TYPE_SCRIPTHASH:
		return "scripthash";
	case SCRIPT_TYPE_MULTISIG:
		return "multisig";
	case SCRIPT_TYPE_NULL_DATA:
		return "nulldata";
	case SCRIPT_TYPE_WITNESS_V0_KEYHASH:
		return "witness_v0_keyhash";
	case SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH:
		return "witness_v0_scripthash";
	case SCRIPT_TYPE_WITNESS_V1_TAPROOT:
		return "witness_v1_taproot";
	case SCRIPT_TYPE_WITNESS_UNKNOWN:
		return "witness_unknown";
	}
	return "nonstandard";
}

/* ---- asm ---------------------------------------------------------------- */

static void write_str(struct proto_writer *w, const char *s)
{
	proto_write_bytes(w, s, strlen(s));
}

static void write_hex(struct proto_writer *w, const uint8_t *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	if (w->err || proto_writer_reserve(w, 2 * len))
		return;
	/* Digits only: a fixed writer sized to the text takes it whole. */
	char *out = (char *)w->buf + w->len;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[data[i] >> 4];
		out[2 * i + 1] = digits[data[i] & 15];
	}
	w->len += 2 * len;
}

/* CScriptNum(vch, fRequireMinimal=false).getint() for at most 4 bytes: any
 * encoding, so negative zero and padded forms print as their value. */
static int64_t asm_number(const uint8_t *data, uint32_t len)
{
	uint64_t mag = 0;
	if (len == 0)
		return 0;
	for (uint32_t i = 0; i < len; i++)
		mag |= (uint64_t)data[i] << (8 * i);
	if (data[len - 1] & 0x80)
		return -(int64_t)(mag & ~((uint64_t)0x80 << (8 * (len - 1))));
	return (int64_t)mag;
}

/* Core's mapSigHashTypes; NULL for anything else. */
static const char *sighash_name(uint8_t t)
{
	switch (t) {
	case SCRIPT_SIGHASH_ALL:
		return "ALL";
	case SCRIPT_SIGHASH_ALL | SCRIPT_SIGHASH_ANYONECANPAY:
		return "ALL|ANYONECANPAY";
	case SCRIPT_SIGHASH_NONE:
		return "NONE";
	case SCRIPT_SIGHASH_NONE | SCRIPT_SIGHASH_ANYONECANPAY:
		return "NONE|ANYONECANPAY";
	case SCRIPT_SIGHASH_SINGLE:
		return "SINGLE";
	case SCRIPT_SIGHASH_SINGLE | SCRIPT_SIGHASH_ANYONECANPAY:
		return "SINGLE|ANYONECANPAY";
	default:
		return NULL;
	}
}

int script_to_asm(const uint8_t *script, size_t len, bool sighash_decode, struct proto_writer *w)
{
	const uint8_t *pc = script, *end = span_end(script, len), *data;
	uint32_t dlen;
	uint8_t op;
	/* Core's IsUnspendable: OP_RETURN data is never read as a signature. */
	bool unspendable = (len > 0 && script[0] == SCRIPT_OP_RETURN) || len > SCRIPT_MAX_SIZE;
	char num[24];

	while (pc < end && !w->err) {
		if (pc != script)
			proto_write_u8(w, ' ');
		if (!script_get_op(&pc, end, &op, &data, &dlen)) {
			write_str(w, "[error]");
			break;
		}
		if (op > SCRIPT_OP_PUSHDATA4) {
			write_str(w, script_op_name(op));
		} else if (dlen <= ADDR_MAX_NUM_SIZE) {
			snprintf(num, sizeof(num), "%" PRId64, asm_number(data, dlen));
			write_str(w, num);
		} else if (sighash_decode && !unspendable &&
		           script_check_sig_encoding(data, dlen, SCRIPT_VERIFY_STRICTENC) == 0 &&
		           sighash_name(data[dlen - 1])) {
			write_hex(w, data, dlen - 1);
			proto_write_u8(w, '[');
			write_str(w, sighash_name(data[dlen - 1]));
			proto_write_u8(w, ']');
		} else {
			write_hex(w, data, dlen);
		}
	}
	return w->err;
}

/* ---- encodings ---------------------------------------------------------- */

static const char BASE58_ALPHABET[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
static const char BECH32_CHARSET[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

/* Base58check of version || payload (payload at most 32 bytes). */
static int base58check(uint8_t version, const uint8_t *payload, size_t len, char *out, size_t cap)
{
	uint8_t buf[1 + 32 + 4], sum[32];
	/* log(256)/log(58) < 1.37: digits needed for the whole buffer */
	uint8_t digits[sizeof(buf) * 137 / 100 + 1];
	size_t n = 1 + len + 4, n_digits = 0, zeros = 0, o = 0;

	if (len > 32)
		return SCRIPT_ADDRESS_ENONE;
	buf[0] = version;
	memcpy(buf + 1, payload, len);
	proto_sha256d(buf, 1 + len, sum);
	memcpy(buf + 1 + len, sum, 4);
	while (zeros < n && buf[zeros] == 0)
		zeros++;
	/* Long division of the big-endian number, one base-58 digit at a time,
	 * kept least significant first. */
	for (size_t i = zeros; i < n; i++) {
		unsigned carry = buf[i];
		for (size_t j = 0; j < n_digits; j++) {
			carry += (unsigned)digits[j] << 8;
			digits[j] = (uint8_t)(carry % 58);
			carry /= 58;
		}
		while (carry) {
			digits[n_digits++] = (uint8_t)(carry % 58);
			carry /= 58;
		}
	}
	if (zeros + n_digits + 1 > cap)
		return SCRIPT_ADDRESS_ESPACE;
	for (size_t i = 0; i < zeros; i++)
		out[o++] = '1';
	while (n_digits)
		out[o++] = BASE58_ALPHABET[digits[--n_digits]];
	out[o] = 0;
	return 0;
}

/* One step of the BIP173 checksum's BCH code over GF(32). */
static uint32_t bech32_step(uint32_t chk)
{
	static const uint32_t gen[5] = {0x3b6a57b2u, 0x26508e6du, 0x1ea119fau, 0x3d4233ddu,
	                                0x2a1462b3u};
	uint32_t top = chk >> 25;
	chk = (chk & 0x1ffffffu) << 5;
	for (int i = 0; i < 5; i++) {
		if ((top >> i) & 1)
			chk ^= gen[i];
	}
	return chk;
}

/* A segwit address: hrp, '1', the version, the program in 5-bit groups and
 * a six-character checksum (bech32 for v0, bech32m after). */
static int segwit_address(const char *hrp, int version, const uint8_t *program, size_t len,
                          char *out, size_t cap)
{
	uint8_t data[1 + (40 * 8 + 4) / 5];
	size_t n = 0, hrp_len = strlen(hrp), o = 0;
	uint32_t acc = 0, chk = 1;
	unsigned bits = 0;

	if (version < 0 || version > 16 || len > 40)
		return SCRIPT_ADDRESS_ENONE;
	data[n++] = (uint8_t)version;
	for (size_t i = 0; i < len; i++) {
		acc = (acc << 8 | program[i]) & 0xfff;
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			data[n++] = (uint8_t)((acc >> bits) & 31);
		}
	}
	if (bits)
		data[n++] = (uint8_t)((acc << (5 - bits)) & 31);
	if (hrp_len + 1 + n + 6 > ADDR_BECH32_MAX_LEN)
		return SCRIPT_ADDRESS_ENONE;
	if (hrp_len + 1 + n + 6 + 1 > cap)
		return SCRIPT_ADDRESS_ESPACE;

	for (size_t i = 0; i < hrp_len; i++)
		chk = bech32_step(chk) ^ ((uint8_t)hrp[i] >> 5);
	chk = bech32_step(chk);
	for (size_t i = 0; i < hrp_len; i++)
		chk = bech32_step(chk) ^ ((uint8_t)hrp[i] & 31);
	for (size_t i = 0; i < n; i++)
		chk = bech32_step(chk) ^ data[i];
	for (int i = 0; i < 6; i++)
		chk = bech32_step(chk);
	chk ^= version == 0 ? ADDR_BECH32_CONST : ADDR_BECH32M_CONST;

	memcpy(out, hrp, hrp_len);
	o = hrp_len;
	out[o++] = '1';
	for (size_t i = 0; i < n; i++)
		out[o++] = BECH32_CHARSET[data[i]];
	for (int i = 0; i < 6; i++)
		out[o++] = BECH32_CHARSET[(chk >> (5 * (5 - i))) & 31];
	out[o] = 0;
	return 0;
}

int script_address(const uint8_t *script, size_t len, const struct proto_params *net, char *out,
                   size_t cap)
{
	struct script_solution sol;
	bool is_main = net->net == PROTO_NET_MAIN;

	switch (script_solve(script, len, &sol)) {
	case SCRIPT_TYPE_PUBKEYHASH:
		return base58check(is_main ? ADDR_MAIN_PKH_VERSION : ADDR_TEST_PKH_VERSION,
		                   sol.data.data, sol.data.len, out, cap);
	case SCRIPT_TYPE_SCRIPTHASH:
		return base58check(is_main ? ADDR_MAIN_SH_VERSION : ADDR_TEST_SH_VERSION,
		                   sol.data.data, sol.data.len, out, cap);
	case SCRIPT_TYPE_WITNESS_V0_KEYHASH:
	case SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH:
	case SCRIPT_TYPE_WITNESS_V1_TAPROOT:
	case SCRIPT_TYPE_ANCHOR:
	case SCRIPT_TYPE_WITNESS_UNKNOWN:
		return segwit_address(net->bech32_hrp, sol.witness_version, sol.data.data,
		                      sol.data.len, out, cap);
	default:
		/* Core's ExtractDestination knows pay-to-pubkey, but
		 * decoderawtransaction prints no address for it. */
		return SCRIPT_ADDRESS_ENONE;
	}
}

bool script_xonly_pubkey_valid(const uint8_t key[32])
{
	secp256k1_xonly_pubkey pk;
	return secp256k1_xonly_pubkey_parse(secp256k1_context_static, &pk, key) == 1;
}
