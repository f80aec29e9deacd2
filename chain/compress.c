/*
 * chain/compress.c: Core's VARINT, amount compression and script
 * compression (compressor.cpp, serialize.h), byte for byte, so the coins
 * database and the rev files read the same as Core's.
 */
#include <string.h>

#include <secp256k1.h>

#include "chain/chain.h"

/* Core's ScriptCompression::nSpecialScripts and MAX_SCRIPT_SIZE. */
#define SPECIAL_SCRIPTS 6u
#define MAX_SCRIPT_SIZE 10000u

enum {
	OP_DUP = 0x76,
	OP_HASH160 = 0xa9,
	OP_EQUAL = 0x87,
	OP_EQUALVERIFY = 0x88,
	OP_CHECKSIG = 0xac,
	OP_RETURN = 0x6a,
};

size_t chain_varint_encode(uint8_t out[CHAIN_VARINT_MAX], uint64_t v)
{
	/* Built least significant group first, then reversed: every group
	 * but the last carries the continuation bit, and subtracting one per
	 * group makes the encoding unique. */
	uint8_t tmp[CHAIN_VARINT_MAX];
	size_t len = 0;
	for (;;) {
		tmp[len] = (uint8_t)((v & 0x7f) | (len ? 0x80 : 0x00));
		if (v <= 0x7f)
			break;
		v = (v >> 7) - 1;
		len++;
	}
	for (size_t i = 0; i <= len; i++)
		out[i] = tmp[len - i];
	return len + 1;
}

void chain_varint_write(struct proto_writer *w, uint64_t v)
{
	uint8_t b[CHAIN_VARINT_MAX];
	proto_write_bytes(w, b, chain_varint_encode(b, v));
}

int chain_varint_read(struct proto_reader *r, uint64_t max, uint64_t *v)
{
	const uint8_t *p = r->p;
	uint64_t n = 0;
	for (;;) {
		if (p >= r->end)
			return CHAIN_ECORRUPT;
		uint8_t b = *p++;
		/* Core's two overflow checks: the shift and the +1. */
		if (n > (UINT64_MAX >> 7))
			return CHAIN_ECORRUPT;
		n = (n << 7) | (b & 0x7f);
		if (!(b & 0x80))
			break;
		if (n == UINT64_MAX)
			return CHAIN_ECORRUPT;
		n++;
	}
	if (n > max)
		return CHAIN_ECORRUPT;
	r->p = p;
	*v = n;
	return 0;
}

uint64_t chain_compress_amount(uint64_t n)
{
	if (n == 0)
		return 0;
	unsigned e = 0;
	while (n % 10 == 0 && e < 9) {
		n /= 10;
		e++;
	}
	if (e < 9) {
		uint64_t d = n % 10;
		n /= 10;
		return 1 + (n * 9 + d - 1) * 10 + e;
	}
	return 1 + (n - 1) * 10 + 9;
}

uint64_t chain_decompress_amount(uint64_t x)
{
	if (x == 0)
		return 0;
	x--;
	unsigned e = (unsigned)(x % 10);
	x /= 10;
	uint64_t n;
	if (e < 9) {
		uint64_t d = x % 9 + 1;
		x /= 9;
		n = x * 10 + d;
	} else {
		n = x + 1;
	}
	while (e--)
		n *= 10;
	return n;
}

/* The special form of a script, as Core's CompressScript; 0 when none fits. */
static size_t script_special(const uint8_t *s, uint32_t len, uint8_t out[33])
{
	if (len == 25 && s[0] == OP_DUP && s[1] == OP_HASH160 && s[2] == 20 &&
	    s[23] == OP_EQUALVERIFY && s[24] == OP_CHECKSIG) {
		out[0] = 0x00;
		memcpy(out + 1, s + 3, 20);
		return 21;
	}
	if (len == 23 && s[0] == OP_HASH160 && s[1] == 20 && s[22] == OP_EQUAL) {
		out[0] = 0x01;
		memcpy(out + 1, s + 2, 20);
		return 21;
	}
	if (len == 35 && s[0] == 33 && s[34] == OP_CHECKSIG && (s[1] == 0x02 || s[1] == 0x03)) {
		/* Core does not check a compressed key is on the curve here. */
		memcpy(out, s + 1, 33);
		return 33;
	}
	if (len == 67 && s[0] == 65 && s[66] == OP_CHECKSIG && s[1] == 0x04) {
		/* Only a key that parses can be rebuilt from its x and the
		 * parity of y; Core's IsFullyValid, so the same scripts fall
		 * through to the plain form. */
		secp256k1_pubkey pk;
		if (!secp256k1_ec_pubkey_parse(secp256k1_context_static, &pk, s + 1, 65))
			return 0;
		out[0] = (uint8_t)(0x04 | (s[65] & 0x01));
		memcpy(out + 1, s + 2, 32);
		return 33;
	}
	return 0;
}

void chain_script_compress(struct proto_writer *w, const uint8_t *script, uint32_t len)
{
	uint8_t special[33];
	size_t n = script_special(script, len, special);
	if (n) {
		proto_write_bytes(w, special, n);
		return;
	}
	chain_varint_write(w, (uint64_t)len + SPECIAL_SCRIPTS);
	proto_write_bytes(w, script, len);
}

/* Expand special form `type` (0..5) from its payload; 0 or CHAIN_ECORRUPT. */
static int script_expand(unsigned type, const uint8_t *in, uint8_t *out, uint32_t *len)
{
	switch (type) {
	case 0x00:
		out[0] = OP_DUP;
		out[1] = OP_HASH160;
		out[2] = 20;
		memcpy(out + 3, in, 20);
		out[23] = OP_EQUALVERIFY;
		out[24] = OP_CHECKSIG;
		*len = 25;
		return 0;
	case 0x01:
		out[0] = OP_HASH160;
		out[1] = 20;
		memcpy(out + 2, in, 20);
		out[22] = OP_EQUAL;
		*len = 23;
		return 0;
	case 0x02:
	case 0x03:
		out[0] = 33;
		out[1] = (uint8_t)type;
		memcpy(out + 2, in, 32);
		out[34] = OP_CHECKSIG;
		*len = 35;
		return 0;
	default: {
		uint8_t key[33];
		key[0] = (uint8_t)(type - 2);
		memcpy(key + 1, in, 32);
		secp256k1_pubkey pk;
		size_t outlen = 65;
		if (!secp256k1_ec_pubkey_parse(secp256k1_context_static, &pk, key, sizeof(key)))
			return CHAIN_ECORRUPT;
		out[0] = 65;
		secp256k1_ec_pubkey_serialize(secp256k1_context_static, out + 1, &outlen, &pk,
		                              SECP256K1_EC_UNCOMPRESSED);
		out[66] = OP_CHECKSIG;
		*len = 67;
		return 0;
	}
	}
}

int chain_script_decompress(struct proto_reader *r, uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX],
                            const uint8_t **script, uint32_t *len)
{
	static const uint8_t op_return = OP_RETURN;
	uint64_t n;
	int err = chain_varint_read(r, UINT32_MAX, &n);
	if (err)
		return err;
	if (n < SPECIAL_SCRIPTS) {
		const uint8_t *payload;
		if (proto_read_span(r, n < 2 ? 20 : 32, &payload))
			return CHAIN_ECORRUPT;
		err = script_expand((unsigned)n, payload, special, len);
		if (!err)
			*script = special;
		return err;
	}
	n -= SPECIAL_SCRIPTS;
	const uint8_t *bytes;
	if (proto_read_span(r, (size_t)n, &bytes))
		return CHAIN_ECORRUPT;
	if (n > MAX_SCRIPT_SIZE) {
		*script = &op_return;
		*len = 1;
		return 0;
	}
	*script = bytes;
	*len = (uint32_t)n;
	return 0;
}

void chain_txout_compress(struct proto_writer *w, int64_t value, const uint8_t *script,
                          uint32_t len)
{
	chain_varint_write(w, chain_compress_amount((uint64_t)value));
	chain_script_compress(w, script, len);
}

int chain_txout_decompress(struct proto_reader *r, int64_t *value,
                           uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX], const uint8_t **script,
                           uint32_t *len)
{
	uint64_t x;
	int err = chain_varint_read(r, UINT64_MAX, &x);
	if (err)
		return err;
	uint64_t v = chain_decompress_amount(x);
	/* Every stored amount was a valid output value; anything bigger is
	 * damage, and a wrapped decompression is caught here as well. */
	if (v > (uint64_t)PROTO_MAX_MONEY || chain_compress_amount(v) != x)
		return CHAIN_ECORRUPT;
	err = chain_script_decompress(r, special, script, len);
	if (err)
		return err;
	*value = (int64_t)v;
	return 0;
}
