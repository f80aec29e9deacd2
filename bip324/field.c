/*
 * bip324/field.c: arithmetic in secp256k1's field for ElligatorSwift.
 *
 * Debian's libsecp256k1 (0.2.0) keeps its field private, so the public
 * values of ElligatorSwift are computed here: four 64-bit limbs with
 * 128-bit products, every result reduced below p. Reduction uses
 * 2^256 = 0x1000003D1 (mod p). Exponentiations (inverse, square root,
 * Legendre symbol) use a fixed 4-bit window: 252 squarings and 63
 * multiplications each.
 */
#include <string.h>

#include "bip324/internal.h"

typedef unsigned __int128 u128;

/* 2^256 mod p */
#define FE_C UINT64_C(0x1000003D1)

/* The exponents, least significant limb first. */
static const uint64_t EXP_P_MINUS_2[4] = {UINT64_C(0xFFFFFFFEFFFFFC2D), UINT64_MAX, UINT64_MAX,
                                          UINT64_MAX};
static const uint64_t EXP_SQRT[4] = {UINT64_C(0xFFFFFFFFBFFFFF0C), UINT64_MAX, UINT64_MAX,
                                     UINT64_C(0x3FFFFFFFFFFFFFFF)};
static const uint64_t EXP_LEGENDRE[4] = {UINT64_C(0xFFFFFFFF7FFFFE17), UINT64_MAX, UINT64_MAX,
                                         UINT64_C(0x7FFFFFFFFFFFFFFF)};

/* r < 2^256 to r mod p: subtract p when r + C carries out of 256 bits. */
static void fe_final(uint64_t r[4])
{
	u128 c = (u128)r[0] + FE_C;
	uint64_t t0 = (uint64_t)c;
	c = (c >> 64) + r[1];
	uint64_t t1 = (uint64_t)c;
	c = (c >> 64) + r[2];
	uint64_t t2 = (uint64_t)c;
	c = (c >> 64) + r[3];
	uint64_t t3 = (uint64_t)c;
	if (c >> 64) {
		r[0] = t0;
		r[1] = t1;
		r[2] = t2;
		r[3] = t3;
	}
}

void bip324_fe_from_bytes(struct bip324_fe *r, const uint8_t b[32])
{
	for (int i = 0; i < 4; i++) {
		uint64_t v = 0;
		for (int j = 0; j < 8; j++)
			v = (v << 8) | b[(3 - i) * 8 + j];
		r->n[i] = v;
	}
	fe_final(r->n);
}

void bip324_fe_to_bytes(uint8_t b[32], const struct bip324_fe *a)
{
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 8; j++)
			b[(3 - i) * 8 + j] = (uint8_t)(a->n[i] >> (56 - 8 * j));
}

void bip324_fe_set_int(struct bip324_fe *r, uint64_t v)
{
	r->n[0] = v;
	r->n[1] = r->n[2] = r->n[3] = 0;
	fe_final(r->n);
}

bool bip324_fe_is_zero(const struct bip324_fe *a)
{
	return (a->n[0] | a->n[1] | a->n[2] | a->n[3]) == 0;
}

bool bip324_fe_equal(const struct bip324_fe *a, const struct bip324_fe *b)
{
	return memcmp(a->n, b->n, sizeof(a->n)) == 0;
}

void bip324_fe_add(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b)
{
	u128 c = 0;
	uint64_t s[4];
	for (int i = 0; i < 4; i++) {
		c += (u128)a->n[i] + b->n[i];
		s[i] = (uint64_t)c;
		c >>= 64;
	}
	if (c) {
		/* a + b = 2^256 + s, and 2^256 = C (mod p); s + C cannot carry
		 * because a + b < 2p. */
		c = (u128)s[0] + FE_C;
		s[0] = (uint64_t)c;
		for (int i = 1; i < 4; i++) {
			c = (c >> 64) + s[i];
			s[i] = (uint64_t)c;
		}
	} else {
		fe_final(s);
	}
	memcpy(r->n, s, sizeof(s));
}

void bip324_fe_neg(struct bip324_fe *r, const struct bip324_fe *a)
{
	if (bip324_fe_is_zero(a)) {
		*r = *a;
		return;
	}
	/* p - a, with p's limbs */
	static const uint64_t P[4] = {UINT64_C(0xFFFFFFFEFFFFFC2F), UINT64_MAX, UINT64_MAX,
	                              UINT64_MAX};
	uint64_t borrow = 0;
	for (int i = 0; i < 4; i++) {
		u128 d = (u128)P[i] - a->n[i] - borrow;
		r->n[i] = (uint64_t)d;
		borrow = (uint64_t)(d >> 64) & 1;
	}
}

void bip324_fe_sub(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b)
{
	struct bip324_fe nb;
	bip324_fe_neg(&nb, b);
	bip324_fe_add(r, a, &nb);
}

/* The 512-bit t to t mod p: fold the high half in twice (times C). */
static void fe_reduce(uint64_t r[4], const uint64_t t[8])
{
	u128 c = 0;
	uint64_t m[4];
	for (int i = 0; i < 4; i++) {
		c += (u128)t[4 + i] * FE_C + t[i];
		m[i] = (uint64_t)c;
		c >>= 64;
	}
	/* c < 2^34 now: its weight is 2^256 = C again */
	c = (u128)(uint64_t)c * FE_C + m[0];
	r[0] = (uint64_t)c;
	for (int i = 1; i < 4; i++) {
		c = (c >> 64) + m[i];
		r[i] = (uint64_t)c;
	}
	if (c >> 64) {
		/* wrapped past 2^256 once more: r is small, adding C cannot carry */
		c = (u128)r[0] + FE_C;
		r[0] = (uint64_t)c;
		for (int i = 1; i < 4; i++) {
			c = (c >> 64) + r[i];
			r[i] = (uint64_t)c;
		}
	}
	fe_final(r);
}

void bip324_fe_mul(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b)
{
	uint64_t t[8] = {0};
	for (int i = 0; i < 4; i++) {
		u128 c = 0;
		for (int j = 0; j < 4; j++) {
			c += (u128)a->n[i] * b->n[j] + t[i + j];
			t[i + j] = (uint64_t)c;
			c >>= 64;
		}
		t[i + 4] = (uint64_t)c;
	}
	fe_reduce(r->n, t);
}

void bip324_fe_sqr(struct bip324_fe *r, const struct bip324_fe *a)
{
	bip324_fe_mul(r, a, a);
}

/* a^e, e 256 bits, by 4-bit windows from the top. */
static void fe_pow(struct bip324_fe *r, const struct bip324_fe *a, const uint64_t e[4])
{
	struct bip324_fe tab[16];
	bip324_fe_set_int(&tab[0], 1);
	tab[1] = *a;
	for (int i = 2; i < 16; i++)
		bip324_fe_mul(&tab[i], &tab[i - 1], a);
	struct bip324_fe acc = tab[(e[3] >> 60) & 15];
	for (int w = 62; w >= 0; w--) {
		for (int k = 0; k < 4; k++)
			bip324_fe_sqr(&acc, &acc);
		unsigned d = (unsigned)(e[w / 16] >> ((w % 16) * 4)) & 15;
		if (d)
			bip324_fe_mul(&acc, &acc, &tab[d]);
	}
	*r = acc;
}

void bip324_fe_inv(struct bip324_fe *r, const struct bip324_fe *a)
{
	fe_pow(r, a, EXP_P_MINUS_2);
}

bool bip324_fe_sqrt(struct bip324_fe *r, const struct bip324_fe *a)
{
	struct bip324_fe s, s2;
	fe_pow(&s, a, EXP_SQRT);
	bip324_fe_sqr(&s2, &s);
	if (!bip324_fe_equal(&s2, a))
		return false;
	*r = s;
	return true;
}

bool bip324_fe_is_square(const struct bip324_fe *a)
{
	if (bip324_fe_is_zero(a))
		return true;
	struct bip324_fe l, one;
	fe_pow(&l, a, EXP_LEGENDRE);
	bip324_fe_set_int(&one, 1);
	return bip324_fe_equal(&l, &one);
}
