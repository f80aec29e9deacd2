/*
 * chain/work.c: chain work arithmetic (256-bit unsigned, four 64-bit limbs,
 * least significant first) and difficulty figures.
 *
 * The work a block proves is 2^256 / (target + 1), computed as Core's
 * GetBlockProof does: 2^256 does not fit, but it equals
 * (~target / (target + 1)) + 1 for every target below 2^256. The division
 * is shift-and-subtract over only the quotient's bits, so easy targets
 * (regtest: a one-bit quotient) cost next to nothing and mainnet's about
 * a hundred steps; chain/index.c also caches the last bits it converted.
 */
#include "chain/chain.h"

#define LIMBS 4

static unsigned work_bitlen(const struct chain_work *a)
{
	for (int i = LIMBS - 1; i >= 0; i--) {
		if (a->limb[i])
			return (unsigned)(64 * i + 64 - __builtin_clzll(a->limb[i]));
	}
	return 0;
}

static void work_shl(struct chain_work *a, unsigned n)
{
	struct chain_work r = {{0}};
	unsigned limbs = n / 64, bits = n % 64;
	for (int i = LIMBS - 1; i >= (int)limbs; i--) {
		r.limb[i] = a->limb[i - (int)limbs] << bits;
		if (bits && i - (int)limbs - 1 >= 0)
			r.limb[i] |= a->limb[i - (int)limbs - 1] >> (64 - bits);
	}
	*a = r;
}

static void work_shr1(struct chain_work *a)
{
	for (int i = 0; i < LIMBS; i++) {
		a->limb[i] >>= 1;
		if (i + 1 < LIMBS)
			a->limb[i] |= a->limb[i + 1] << 63;
	}
}

/* a -= b, modulo 2^256 (callers only subtract a smaller number). */
static void work_sub(struct chain_work *a, const struct chain_work *b)
{
	uint64_t borrow = 0;
	for (int i = 0; i < LIMBS; i++) {
		uint64_t x = a->limb[i], y = b->limb[i];
		uint64_t d = x - y - borrow;
		borrow = (x < y) || (x - y < borrow);
		a->limb[i] = d;
	}
}

/* Adds 1 to a, wrapping modulo 2^256; true when it wrapped to zero. */
static bool work_inc(struct chain_work *a)
{
	for (int i = 0; i < LIMBS; i++) {
		if (++a->limb[i])
			return false;
	}
	return true;
}

/* q = n / d for d != 0 (Core's arith_uint256 division, same quotient). */
static void work_div(const struct chain_work *n, const struct chain_work *d, struct chain_work *q)
{
	struct chain_work num = *n, div = *d;
	memset(q, 0, sizeof(*q));
	unsigned nb = work_bitlen(&num), db = work_bitlen(&div);
	if (db == 0 || nb < db)
		return;
	int shift = (int)(nb - db);
	work_shl(&div, (unsigned)shift);
	for (; shift >= 0; shift--) {
		if (chain_work_cmp(&num, &div) >= 0) {
			work_sub(&num, &div);
			q->limb[shift / 64] |= 1ull << (shift % 64);
		}
		work_shr1(&div);
	}
}

/* a *= m, modulo 2^256 as arith_uint256's operator*= (no real chain comes near). */
static void work_mul64(struct chain_work *a, uint64_t m)
{
	unsigned __int128 carry = 0;
	for (int i = 0; i < LIMBS; i++) {
		carry += (unsigned __int128)a->limb[i] * m;
		a->limb[i] = (uint64_t)carry;
		carry >>= 64;
	}
}

void chain_work_of_bits(uint32_t bits, struct chain_work *out)
{
	uint8_t target[32];
	memset(out, 0, sizeof(*out));
	/* A negative, overflowing or zero target proves nothing (Core returns 0). */
	if (proto_bits_to_target(bits, target))
		return;
	struct chain_work t, inv, q;
	for (int i = 0; i < LIMBS; i++)
		t.limb[i] = proto_le64(target + 8 * i);
	for (int i = 0; i < LIMBS; i++)
		inv.limb[i] = ~t.limb[i];
	/* target + 1 cannot wrap: SetCompact tops out far below 2^256 - 1. */
	(void)work_inc(&t);
	work_div(&inv, &t, &q);
	(void)work_inc(&q);
	*out = q;
}

void chain_work_add(struct chain_work *a, const struct chain_work *b)
{
	unsigned __int128 carry = 0;
	for (int i = 0; i < LIMBS; i++) {
		carry += (unsigned __int128)a->limb[i] + b->limb[i];
		a->limb[i] = (uint64_t)carry;
		carry >>= 64;
	}
	/* Real chains are nowhere near 2^256; saturate rather than wrap so a
	 * crafted index can never make a long chain look short. */
	if (carry)
		memset(a->limb, 0xff, sizeof(a->limb));
}

int chain_work_cmp(const struct chain_work *a, const struct chain_work *b)
{
	for (int i = LIMBS - 1; i >= 0; i--) {
		if (a->limb[i] != b->limb[i])
			return a->limb[i] < b->limb[i] ? -1 : 1;
	}
	return 0;
}

void chain_work_hex(const struct chain_work *w, char out[65])
{
	static const char HEX[] = "0123456789abcdef";
	for (int i = 0; i < 64; i++) {
		/* digit i counts from the most significant nibble */
		int nib = 63 - i;
		uint64_t limb = w->limb[nib / 16];
		out[i] = HEX[(limb >> (4 * (nib % 16))) & 0xf];
	}
	out[64] = '\0';
}

double chain_work_double(const struct chain_work *w)
{
	double r = 0;
	for (int i = LIMBS - 1; i >= 0; i--)
		r = r * 18446744073709551616.0 + (double)w->limb[i];
	return r;
}

double chain_difficulty(uint32_t bits)
{
	/* Core's GetDifficulty: difficulty 1 is 0x1d00ffff; walk the exponent
	 * to 29 a byte at a time. A zero mantissa divides by zero as in Core. */
	int shift = (int)((bits >> 24) & 0xff);
	double diff = (double)0x0000ffff / (double)(bits & 0x00ffffff);
	while (shift < 29) {
		diff *= 256.0;
		shift++;
	}
	while (shift > 29) {
		diff /= 256.0;
		shift--;
	}
	return diff;
}

void chain_work_from_le(const uint8_t in[32], struct chain_work *out)
{
	for (int i = 0; i < LIMBS; i++) {
		uint64_t v = 0;
		for (int b = 7; b >= 0; b--)
			v = (v << 8) | in[8 * i + b];
		out->limb[i] = v;
	}
}

int chain_work_from_hex(const char *hex, struct chain_work *out)
{
	/* Core's uint256::FromUserHex: an optional 0x, then 1 to 64 hex
	 * digits, the number right-aligned. */
	if (!hex)
		return CHAIN_EARG;
	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	size_t n = strlen(hex);
	if (n == 0 || n > 64)
		return CHAIN_EARG;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		int v = proto_hex_digit(hex[i]);
		if (v < 0)
			return CHAIN_EARG;
		size_t nib = n - 1 - i; /* nibble index from the least significant */
		out->limb[nib / 16] |= (uint64_t)v << (4 * (nib % 16));
	}
	return 0;
}

int64_t chain_proof_equivalent_time(const struct chain_node *to, const struct chain_node *from,
                                    const struct chain_node *tip, const struct proto_params *p)
{
	struct chain_work r, proof, q;
	int64_t sign = 1;
	if (chain_work_cmp(&to->work, &from->work) > 0) {
		r = to->work;
		work_sub(&r, &from->work);
	} else {
		r = from->work;
		work_sub(&r, &to->work);
		sign = -1;
	}
	work_mul64(&r, (uint64_t)p->pow_target_spacing);
	chain_work_of_bits(tip->bits, &proof);
	/* A checked header always proves some work; Core would throw here. */
	if (work_bitlen(&proof) == 0)
		return sign * INT64_MAX;
	work_div(&r, &proof, &q);
	if (work_bitlen(&q) > 63)
		return sign * INT64_MAX;
	return sign * (int64_t)q.limb[0];
}
