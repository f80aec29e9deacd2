/*
 * script/address.c: output scripts described the way Bitcoin Core's RPCs
 * describe them, so peertool's JSON can be diffed against bitcoin-cli's:
 *
 *   script_solve       the template (Core's Solver), and its type name
 *   script_to_asm      the asm text (Core's ScriptToAsmStr)
 *   script_address     the address (ExtractDestination + EncodeDestination):
 *                      base58check, BIP173 bech32, BIP350 bech32m
 *   script_address_decode  the other way (DecodeDestination +
 *                      GetScriptForDestination), with Core's error texts
 *
 * Pure and allocation-free except for the caller's writer.
 */
#include "script/internal.h"

#include <inttypes.h>
#include <stdarg.h>
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
/** BIP141: witness programs are 2..40 bytes (Core's BECH32_WITNESS_PROG_MAX_LEN). */
#define ADDR_WITNESS_PROG_MIN 2u
#define ADDR_WITNESS_PROG_MAX 40u
/** A bech32 checksum is six characters. */
#define ADDR_BECH32_CHECKSUM 6u
/** Base58 strings decoded without a checksum are bounded as Core bounds them (100 bytes). */
#define ADDR_BASE58_MAX_BYTES 100u
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

/* ---- decoding ------------------------------------------------------------- */

/* Core's IsSpace: the C locale's white space. */
static bool is_space(char c)
{
	return c == ' ' || c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '\v';
}

/*
 * Core's DecodeBase58: white space around it is skipped, leading '1's are
 * zero bytes, and the result may be at most `max` bytes. The number goes
 * into out (cap >= max) big-endian; *len gets its size. False for any
 * other character or a longer result.
 */
static bool base58_decode(const char *s, uint8_t *out, size_t max, size_t *len)
{
	/* log(58)/log(256) < 0.733: bytes for each digit, rounded up */
	uint8_t b256[ADDR_BASE58_MAX_BYTES * 138 / 100 * 733 / 1000 + 2];
	size_t zeros = 0, size = 0;
	while (is_space(*s))
		s++;
	while (*s == '1') {
		if (++zeros > max)
			return false;
		s++;
	}
	size_t n_digits = strlen(s);
	size_t room = n_digits * 733 / 1000 + 1;
	if (room > sizeof(b256))
		return false;
	memset(b256, 0, room);
	for (; *s && !is_space(*s); s++) {
		const char *d = strchr(BASE58_ALPHABET, *s);
		if (!d || !*s)
			return false;
		unsigned carry = (unsigned)(d - BASE58_ALPHABET);
		size_t i = 0;
		/* b256 = b256 * 58 + digit, least significant byte last */
		for (size_t k = room; k-- > 0 && (carry || i < size); i++) {
			carry += 58u * b256[k];
			b256[k] = (uint8_t)(carry & 0xff);
			carry >>= 8;
		}
		size = i;
		if (zeros + size > max)
			return false;
	}
	while (is_space(*s))
		s++;
	if (*s)
		return false;
	memset(out, 0, zeros);
	memcpy(out + zeros, b256 + room - size, size);
	*len = zeros + size;
	return true;
}

/* Core's DecodeBase58Check for at most `max` payload bytes. */
static bool base58check_decode(const char *s, uint8_t *out, size_t max, size_t *len)
{
	uint8_t sum[32];
	if (!base58_decode(s, out, max + 4, len) || *len < 4)
		return false;
	*len -= 4;
	proto_sha256d(out, *len, sum);
	return memcmp(sum, out + *len, 4) == 0;
}

/* What bech32_decode found. */
struct bech32 {
	enum { BECH32_NONE, BECH32_V0, BECH32_M } encoding;
	char hrp[ADDR_BECH32_MAX_LEN];
	uint8_t data[ADDR_BECH32_MAX_LEN]; /* 5-bit values, checksum excluded */
	size_t n_data;
	const char *error; /* with BECH32_NONE: why, in Core's words */
};

/* BIP173/BIP350 decoding as Core's bech32::Decode: printable ASCII, one
 * case, at most 90 characters, a non-empty hrp before the last '1', at
 * least the checksum after it, and a checksum of either kind. */
static void bech32_decode(const char *s, struct bech32 *out)
{
	size_t n = strlen(s), sep = n;
	bool lower = false, upper = false;
	out->encoding = BECH32_NONE;
	out->n_data = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 33 || c > 126) {
			out->error = "Invalid character or mixed case";
			return;
		}
		lower = lower || (c >= 'a' && c <= 'z');
		upper = upper || (c >= 'A' && c <= 'Z');
		if (c == '1')
			sep = i;
	}
	if (lower && upper) {
		out->error = "Invalid character or mixed case";
		return;
	}
	if (n > ADDR_BECH32_MAX_LEN) {
		out->error = "Bech32 string too long";
		return;
	}
	if (sep == n) {
		out->error = "Missing separator";
		return;
	}
	if (sep == 0 || sep + ADDR_BECH32_CHECKSUM >= n) {
		out->error = "Invalid separator position";
		return;
	}
	uint32_t chk = 1;
	for (size_t i = 0; i < sep; i++) {
		char c = s[i];
		out->hrp[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out->hrp[sep] = 0;
	for (size_t i = 0; i < sep; i++)
		chk = bech32_step(chk) ^ ((uint8_t)out->hrp[i] >> 5);
	chk = bech32_step(chk);
	for (size_t i = 0; i < sep; i++)
		chk = bech32_step(chk) ^ ((uint8_t)out->hrp[i] & 31);
	for (size_t i = sep + 1; i < n; i++) {
		char c = s[i];
		c = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		const char *d = strchr(BECH32_CHARSET, c);
		if (!d || !c) {
			out->error = "Invalid Base 32 character";
			return;
		}
		uint8_t v = (uint8_t)(d - BECH32_CHARSET);
		chk = bech32_step(chk) ^ v;
		if (i < n - ADDR_BECH32_CHECKSUM)
			out->data[out->n_data++] = v;
	}
	if (chk == ADDR_BECH32_CONST)
		out->encoding = BECH32_V0;
	else if (chk == ADDR_BECH32M_CONST)
		out->encoding = BECH32_M;
	else
		out->error = "Invalid Bech32 checksum";
}

/* Core's ConvertBits<5, 8, false>: whole bytes, at most 4 bits of zero padding. */
static bool bits_5_to_8(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *len)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 5 | in[i]) & 0xfff;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (*len == cap)
				return false;
			out[(*len)++] = (uint8_t)(acc >> bits);
		}
	}
	return bits < 5 && ((acc << (8 - bits)) & 0xff) == 0;
}

static void set_why(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t cap, const char *fmt, ...)
{
	if (!why || !cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
}

/* The scriptPubKey of a decoded destination: pkh, sh, or a witness program. */
static int put_spk(const uint8_t *pre, size_t pre_len, const uint8_t *data, size_t len,
                   const uint8_t *post, size_t post_len, uint8_t *spk, size_t cap, size_t *spk_len)
{
	if (pre_len + len + post_len > cap)
		return SCRIPT_ADDRESS_ESPACE;
	memcpy(spk, pre, pre_len);
	memcpy(spk + pre_len, data, len);
	if (post_len) /* a witness program has none: post may be NULL */
		memcpy(spk + pre_len + len, post, post_len);
	*spk_len = pre_len + len + post_len;
	return 0;
}

static int decode_base58(const char *addr, const struct proto_params *net, uint8_t *spk, size_t cap,
                         size_t *spk_len, char *why, size_t why_cap)
{
	uint8_t data[ADDR_BASE58_MAX_BYTES + 1];
	size_t len;
	bool is_main = net->net == PROTO_NET_MAIN;
	uint8_t pkh = is_main ? ADDR_MAIN_PKH_VERSION : ADDR_TEST_PKH_VERSION;
	uint8_t sh = is_main ? ADDR_MAIN_SH_VERSION : ADDR_TEST_SH_VERSION;
	if (!base58check_decode(addr, data, 21, &len)) {
		if (!base58_decode(addr, data, ADDR_BASE58_MAX_BYTES, &len))
			set_why(why, why_cap,
			        "Invalid or unsupported Segwit (Bech32) or Base58 encoding.");
		else
			set_why(why, why_cap,
			        "Invalid checksum or length of Base58 address (P2PKH or P2SH)");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (len == 21 && data[0] == pkh) {
		static const uint8_t pre[3] = {SCRIPT_OP_DUP, SCRIPT_OP_HASH160, 20};
		static const uint8_t post[2] = {SCRIPT_OP_EQUALVERIFY, SCRIPT_OP_CHECKSIG};
		return put_spk(pre, 3, data + 1, 20, post, 2, spk, cap, spk_len);
	}
	if (len == 21 && data[0] == sh) {
		static const uint8_t pre[2] = {SCRIPT_OP_HASH160, 20};
		static const uint8_t post[1] = {SCRIPT_OP_EQUAL};
		return put_spk(pre, 2, data + 1, 20, post, 1, spk, cap, spk_len);
	}
	if (len >= 1 && (data[0] == pkh || data[0] == sh))
		set_why(why, why_cap, "Invalid length for Base58 address (P2PKH or P2SH)");
	else
		set_why(why, why_cap, "Invalid or unsupported Base58-encoded address.");
	return SCRIPT_ADDRESS_EINVALID;
}

static int decode_segwit(const char *addr, const struct proto_params *net, uint8_t *spk, size_t cap,
                         size_t *spk_len, char *why, size_t why_cap)
{
	struct bech32 b;
	uint8_t prog[ADDR_BECH32_MAX_LEN];
	size_t len;
	bech32_decode(addr, &b);
	if (b.encoding == BECH32_NONE) {
		set_why(why, why_cap, "%s", b.error);
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (b.n_data == 0) {
		set_why(why, why_cap, "Empty Bech32 data section");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (strcmp(b.hrp, net->bech32_hrp) != 0) {
		set_why(why, why_cap,
		        "Invalid or unsupported prefix for Segwit (Bech32) address (expected %s, "
		        "got %s).",
		        net->bech32_hrp, b.hrp);
		return SCRIPT_ADDRESS_EINVALID;
	}
	unsigned version = b.data[0];
	/* BIP350: the checksum kind is the witness version's. */
	if (version == 0 && b.encoding != BECH32_V0) {
		set_why(why, why_cap, "Version 0 witness address must use Bech32 checksum");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (version != 0 && b.encoding != BECH32_M) {
		set_why(why, why_cap, "Version 1+ witness address must use Bech32m checksum");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (!bits_5_to_8(b.data + 1, b.n_data - 1, prog, sizeof(prog), &len)) {
		set_why(why, why_cap, "Invalid padding in Bech32 data section");
		return SCRIPT_ADDRESS_EINVALID;
	}
	const char *bytes = len == 1 ? "byte" : "bytes";
	if (version == 0 && len != ADDR_WITNESS_V0_KEYHASH_SIZE &&
	    len != ADDR_WITNESS_V0_SCRIPTHASH_SIZE) {
		set_why(why, why_cap, "Invalid Bech32 v0 address program size (%zu %s), per BIP141",
		        len, bytes);
		return SCRIPT_ADDRESS_EINVALID;
	}
	/* Version 1 with 2 bytes is pay-to-anchor; it passes the checks below. */
	if (version > 16) {
		set_why(why, why_cap, "Invalid Bech32 address witness version");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (len < ADDR_WITNESS_PROG_MIN || len > ADDR_WITNESS_PROG_MAX) {
		set_why(why, why_cap, "Invalid Bech32 address program size (%zu %s)", len, bytes);
		return SCRIPT_ADDRESS_EINVALID;
	}
	uint8_t pre[2] = {(uint8_t)(version ? SCRIPT_OP_1 + version - 1 : SCRIPT_OP_0),
	                  (uint8_t)len};
	return put_spk(pre, 2, prog, len, NULL, 0, spk, cap, spk_len);
}

int script_address_decode(const char *addr, const struct proto_params *net, uint8_t *spk,
                          size_t cap, size_t *spk_len, char *why, size_t why_cap)
{
	set_why(why, why_cap, "%s", "");
	/* Core: a string that starts with the network's hrp, in either case,
	 * is read as bech32 only; a bech32 address of another network falls
	 * to base58 and fails there. */
	size_t hrp_len = strlen(net->bech32_hrp);
	bool is_bech32 = strlen(addr) >= hrp_len;
	for (size_t i = 0; is_bech32 && i < hrp_len; i++) {
		char c = addr[i];
		c = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		is_bech32 = c == net->bech32_hrp[i];
	}
	if (is_bech32)
		return decode_segwit(addr, net, spk, cap, spk_len, why, why_cap);
	return decode_base58(addr, net, spk, cap, spk_len, why, why_cap);
}

bool script_xonly_pubkey_valid(const uint8_t key[32])
{
	secp256k1_xonly_pubkey pk;
	return secp256k1_xonly_pubkey_parse(secp256k1_context_static, &pk, key) == 1;
}
