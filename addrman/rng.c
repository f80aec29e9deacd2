/*
 * addrman/rng.c: Core's FastRandomContext, bit for bit.
 *
 * Core 29 (random.h, random.cpp, crypto/chacha20.cpp): the stream is
 * ChaCha20 of RFC 8439 with a 32-byte key, a zero 96-bit nonce and the
 * block counter from 0; rand64 takes the next 8 keystream bytes as a
 * little-endian word; RandomMixin::randbits keeps the unused high bits of
 * a word in a bit buffer and tops it up from the next word; randrange
 * draws bit_width(range - 1) bits until the value is in range. A
 * deterministic context (Core's FastRandomContext(true), -test=addrman)
 * has the all-zero key; otherwise Core reseeds from its secure RNG on
 * first use, which a random key is here. libsodium's IETF ChaCha20 has
 * the same layout (counter word 12, nonce words 13-15).
 */
#include <string.h>

#include <sodium.h>

#include "addrman/internal.h"

void addrman_rng_init(struct addrman_rng *r, bool deterministic)
{
	memset(r, 0, sizeof(*r));
	if (!deterministic) {
		if (sodium_init() < 0)
			memset(r->key, 0, sizeof(r->key)); /* cannot happen; stay usable */
		else
			randombytes_buf(r->key, sizeof(r->key));
	}
}

uint64_t addrman_rng_rand64(struct addrman_rng *r)
{
	static const uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {0};
	if (r->buf_left < 8) {
		/* Blocks are 64 bytes and drawn 8 at a time, so none is left over. */
		memset(r->buf, 0, sizeof(r->buf));
		crypto_stream_chacha20_ietf_xor_ic(r->buf, r->buf, sizeof(r->buf), nonce, r->block,
		                                   r->key);
		r->block++;
		r->buf_left = (int)sizeof(r->buf);
	}
	const uint8_t *p = r->buf + sizeof(r->buf) - (size_t)r->buf_left;
	r->buf_left -= 8;
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t addrman_rng_bits(struct addrman_rng *r, int bits)
{
	if (bits == 64)
		return addrman_rng_rand64(r);
	uint64_t ret;
	if (bits <= r->bitbuf_size) {
		ret = r->bitbuf;
		r->bitbuf >>= bits;
		r->bitbuf_size -= bits;
	} else {
		uint64_t gen = addrman_rng_rand64(r);
		/* bitbuf_size < bits <= 63 here, so the shifts stay below 64. */
		ret = (gen << r->bitbuf_size) | r->bitbuf;
		r->bitbuf = gen >> (bits - r->bitbuf_size);
		r->bitbuf_size = 64 + r->bitbuf_size - bits;
	}
	return ret & ((UINT64_C(1) << bits) - 1);
}

uint64_t addrman_rng_range(struct addrman_rng *r, uint64_t range)
{
	uint64_t maxval = range - 1;
	int bits = 0;
	while (bits < 64 && (maxval >> bits) != 0)
		bits++;
	for (;;) {
		uint64_t v = addrman_rng_bits(r, bits);
		if (v <= maxval)
			return v;
	}
}

void addrman_rng_256(struct addrman_rng *r, uint8_t out[32])
{
	for (int w = 0; w < 4; w++) {
		uint64_t v = addrman_rng_rand64(r);
		for (int i = 0; i < 8; i++)
			out[w * 8 + i] = (uint8_t)(v >> (8 * i));
	}
}
