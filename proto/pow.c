/*
 * proto/pow.c: compact difficulty bits, proof-of-work check and retarget,
 * with the semantics of Bitcoin Core's arith_uint256 (SetCompact,
 * GetCompact), CheckProofOfWork and CalculateNextWorkRequired.
 *
 * Targets are 256-bit unsigned integers, stored as 32 little-endian bytes
 * (the same byte order as a hash in internal order, so a block hash
 * compares as a number directly). Arithmetic is on eight 32-bit limbs,
 * least significant first, and wraps modulo 2^256 as Core's does.
 */
#include "proto/proto.h"

#define LIMBS 8

struct u256 {
	uint32_t w[LIMBS];
};

static void u256_from_le(struct u256 *a, const uint8_t b[32])
{
	for (int i = 0; i < LIMBS; i++)
		a->w[i] = proto_le32(b + 4 * i);
}

static void u256_to_le(const struct u256 *a, uint8_t b[32])
{
	for (int i = 0; i < LIMBS; i++)
		proto_put_le32(b + 4 * i, a->w[i]);
}

static void u256_set_u32(struct u256 *a, uint32_t v)
{
	memset(a, 0, sizeof(*a));
	a->w[0] = v;
}

static bool u256_is_zero(const struct u256 *a)
{
	for (int i = 0; i < LIMBS; i++)
		if (a->w[i])
			return false;
	return true;
}

static int u256_cmp(const struct u256 *a, const struct u256 *b)
{
	for (int i = LIMBS - 1; i >= 0; i--) {
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	}
	return 0;
}

/* Number of significant bits (0 for zero). */
static unsigned u256_bits(const struct u256 *a)
{
	for (int i = LIMBS - 1; i >= 0; i--) {
		if (a->w[i])
			return (unsigned)(32 * i + 32 - __builtin_clz(a->w[i]));
	}
	return 0;
}

static void u256_shl(struct u256 *a, unsigned n)
{
	struct u256 r = {{0}};
	unsigned limbs = n / 32, bits = n % 32;
	for (int i = LIMBS - 1; i >= 0; i--) {
		int src = i - (int)limbs;
		if (src < 0)
			break;
		uint64_t v = (uint64_t)a->w[src] << bits;
		r.w[i] |= (uint32_t)v;
		if (bits && i + 1 < LIMBS)
			r.w[i + 1] |= (uint32_t)(v >> 32);
	}
	*a = r;
}

static void u256_shr(struct u256 *a, unsigned n)
{
	struct u256 r = {{0}};
	unsigned limbs = n / 32, bits = n % 32;
	for (int i = 0; i < LIMBS; i++) {
		unsigned src = (unsigned)i + limbs;
		if (src >= LIMBS)
			break;
		r.w[i] |= a->w[src] >> bits;
		if (bits && src + 1 < LIMBS)
			r.w[i] |= a->w[src + 1] << (32 - bits);
	}
	*a = r;
}

/* a *= m, modulo 2^256. */
static void u256_mul_u32(struct u256 *a, uint32_t m)
{
	uint64_t carry = 0;
	for (int i = 0; i < LIMBS; i++) {
		uint64_t v = (uint64_t)a->w[i] * m + carry;
		a->w[i] = (uint32_t)v;
		carry = v >> 32;
	}
}

/* a /= d (d != 0). */
static void u256_div_u32(struct u256 *a, uint32_t d)
{
	uint64_t rem = 0;
	for (int i = LIMBS - 1; i >= 0; i--) {
		uint64_t cur = rem << 32 | a->w[i];
		a->w[i] = (uint32_t)(cur / d);
		rem = cur % d;
	}
}

/* Core's SetCompact: exponent byte, sign bit 0x00800000, 23-bit mantissa. */
static void set_compact(struct u256 *a, uint32_t bits, bool *negative, bool *overflow)
{
	unsigned size = bits >> 24;
	uint32_t word = bits & 0x007fffff;
	if (size <= 3) {
		word >>= 8 * (3 - size);
		u256_set_u32(a, word);
	} else {
		u256_set_u32(a, word);
		if (8 * (size - 3) >= 256)
			memset(a, 0, sizeof(*a));
		else
			u256_shl(a, 8 * (size - 3));
	}
	*negative = word != 0 && (bits & 0x00800000) != 0;
	*overflow =
	    word != 0 && (size > 34 || (word > 0xff && size > 33) || (word > 0xffff && size > 32));
}

/* Core's GetCompact for a non-negative number. */
static uint32_t get_compact(const struct u256 *a)
{
	unsigned size = (u256_bits(a) + 7) / 8;
	uint32_t compact;
	if (size <= 3) {
		compact = a->w[0] << 8 * (3 - size);
	} else {
		struct u256 t = *a;
		u256_shr(&t, 8 * (size - 3));
		compact = t.w[0];
	}
	/* The 0x00800000 bit is the sign: move the mantissa down a byte. */
	if (compact & 0x00800000) {
		compact >>= 8;
		size++;
	}
	return compact | (uint32_t)size << 24;
}

int proto_bits_to_target(uint32_t bits, uint8_t target[32])
{
	struct u256 t;
	bool neg, ovf;
	set_compact(&t, bits, &neg, &ovf);
	u256_to_le(&t, target);
	return neg || ovf || u256_is_zero(&t) ? -1 : 0;
}

uint32_t proto_target_to_bits(const uint8_t target[32])
{
	struct u256 t;
	u256_from_le(&t, target);
	return get_compact(&t);
}

bool proto_check_pow(const struct proto_hash *hash, uint32_t bits,
                     const struct proto_hash *pow_limit)
{
	struct u256 target, limit, h;
	bool neg, ovf;
	set_compact(&target, bits, &neg, &ovf);
	u256_from_le(&limit, pow_limit->b);
	if (neg || ovf || u256_is_zero(&target) || u256_cmp(&target, &limit) > 0)
		return false;
	u256_from_le(&h, hash->b);
	return u256_cmp(&h, &target) <= 0;
}

uint32_t proto_next_work_required(const struct proto_params *p, uint32_t last_bits,
                                  uint32_t first_bits, int64_t first_time, int64_t last_time)
{
	if (p->pow_no_retargeting)
		return last_bits;
	int64_t span = p->pow_target_timespan;
	int64_t actual = last_time - first_time;
	if (actual < span / 4)
		actual = span / 4;
	if (actual > span * 4)
		actual = span * 4;

	struct u256 t, limit;
	bool neg, ovf;
	/* BIP94: start from the period's first block, whose bits cannot have
	 * used the testnet minimum-difficulty exception. */
	set_compact(&t, p->enforce_bip94 ? first_bits : last_bits, &neg, &ovf);
	u256_mul_u32(&t, (uint32_t)actual);
	u256_div_u32(&t, (uint32_t)span);
	u256_from_le(&limit, p->pow_limit.b);
	if (u256_cmp(&t, &limit) > 0)
		t = limit;
	return get_compact(&t);
}
