/*
 * bip324/field.c: arithmetic in secp256k1's field for ElligatorSwift.
 *
 * Debian's libsecp256k1 (0.2.0) keeps its field private, so the public
 * values of ElligatorSwift are computed here: four 64-bit limbs with
 * 128-bit products, every result reduced below p. Reduction uses
 * 2^256 = 0x1000003D1 (mod p). The square root follows an addition chain;
 * the inverse and the Legendre symbol come from GMP (libgmp), whose gcd
 * walks take a tenth of an exponentiation's time.
 */
#include <string.h>

#include <gmp.h>

#include "bip324/internal.h"

/* The limbs go to GMP as they are. */
_Static_assert(GMP_LIMB_BITS == 64 && sizeof(mp_limb_t) == sizeof(uint64_t), "64-bit GMP limbs");

typedef unsigned __int128 u128;

/* 2^256 mod p */
#define FE_C UINT64_C(0x1000003D1)

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

/* (hh:h:l) += a b: the product-scanning accumulator. */
static inline void muladd(uint64_t *l, uint64_t *h, uint64_t *hh, uint64_t a, uint64_t b)
{
	u128 t = (u128)a * b;
	u128 s = (u128)*l + (uint64_t)t;
	*l = (uint64_t)s;
	s = (u128)*h + (uint64_t)(t >> 64) + (uint64_t)(s >> 64);
	*h = (uint64_t)s;
	*hh += (uint64_t)(s >> 64);
}

/* Close column k: its low word out, the accumulator shifted down. */
#define COLUMN_OUT(k)                                                                              \
	do {                                                                                       \
		t[k] = l;                                                                          \
		l = h;                                                                             \
		h = hh;                                                                            \
		hh = 0;                                                                            \
	} while (0)

void bip324_fe_mul(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b)
{
	const uint64_t *x = a->n, *y = b->n;
	uint64_t t[8], l = 0, h = 0, hh = 0;
	muladd(&l, &h, &hh, x[0], y[0]);
	COLUMN_OUT(0);
	muladd(&l, &h, &hh, x[0], y[1]);
	muladd(&l, &h, &hh, x[1], y[0]);
	COLUMN_OUT(1);
	muladd(&l, &h, &hh, x[0], y[2]);
	muladd(&l, &h, &hh, x[1], y[1]);
	muladd(&l, &h, &hh, x[2], y[0]);
	COLUMN_OUT(2);
	muladd(&l, &h, &hh, x[0], y[3]);
	muladd(&l, &h, &hh, x[1], y[2]);
	muladd(&l, &h, &hh, x[2], y[1]);
	muladd(&l, &h, &hh, x[3], y[0]);
	COLUMN_OUT(3);
	muladd(&l, &h, &hh, x[1], y[3]);
	muladd(&l, &h, &hh, x[2], y[2]);
	muladd(&l, &h, &hh, x[3], y[1]);
	COLUMN_OUT(4);
	muladd(&l, &h, &hh, x[2], y[3]);
	muladd(&l, &h, &hh, x[3], y[2]);
	COLUMN_OUT(5);
	muladd(&l, &h, &hh, x[3], y[3]);
	COLUMN_OUT(6);
	t[7] = l;
	fe_reduce(r->n, t);
}

/* (hh:h:l) += 2 a b: a cross product of a square, multiplied once. */
static inline void muladd2(uint64_t *l, uint64_t *h, uint64_t *hh, uint64_t a, uint64_t b)
{
	u128 t = (u128)a * b;
	uint64_t tl = (uint64_t)t, th = (uint64_t)(t >> 64);
	*hh += th >> 63;
	th = (th << 1) | (tl >> 63);
	tl <<= 1;
	u128 s = (u128)*l + tl;
	*l = (uint64_t)s;
	s = (u128)*h + th + (uint64_t)(s >> 64);
	*h = (uint64_t)s;
	*hh += (uint64_t)(s >> 64);
}

void bip324_fe_sqr(struct bip324_fe *r, const struct bip324_fe *a)
{
	/* the square root's chain is almost all squarings: 10 products, not 16 */
	const uint64_t *x = a->n;
	uint64_t t[8], l = 0, h = 0, hh = 0;
	muladd(&l, &h, &hh, x[0], x[0]);
	COLUMN_OUT(0);
	muladd2(&l, &h, &hh, x[0], x[1]);
	COLUMN_OUT(1);
	muladd2(&l, &h, &hh, x[0], x[2]);
	muladd(&l, &h, &hh, x[1], x[1]);
	COLUMN_OUT(2);
	muladd2(&l, &h, &hh, x[0], x[3]);
	muladd2(&l, &h, &hh, x[1], x[2]);
	COLUMN_OUT(3);
	muladd2(&l, &h, &hh, x[1], x[3]);
	muladd(&l, &h, &hh, x[2], x[2]);
	COLUMN_OUT(4);
	muladd2(&l, &h, &hh, x[2], x[3]);
	COLUMN_OUT(5);
	muladd(&l, &h, &hh, x[3], x[3]);
	COLUMN_OUT(6);
	t[7] = l;
	fe_reduce(r->n, t);
}

/* a^(2^k): k squarings. */
static void fe_sqr_n(struct bip324_fe *r, const struct bip324_fe *a, int k)
{
	*r = *a;
	for (int i = 0; i < k; i++)
		bip324_fe_sqr(r, r);
}

/*
 * The exponents (p+1)/4 and p-2 both open with 223 ones, a zero and 22
 * ones; each is built from runs of ones x^(2^k - 1) (libsecp256k1's
 * addition chain, rewritten): about 255 squarings and 13 multiplications
 * instead of a window's 252 and 78.
 */
static void fe_pow_223_0_22(struct bip324_fe *r, struct bip324_fe *x2, struct bip324_fe *x3,
                            const struct bip324_fe *a)
{
	struct bip324_fe x6, x9, x11, x22, x44, x88, x176, x220, x223, t;
	bip324_fe_sqr(x2, a);
	bip324_fe_mul(x2, x2, a);
	bip324_fe_sqr(x3, x2);
	bip324_fe_mul(x3, x3, a);
	fe_sqr_n(&x6, x3, 3);
	bip324_fe_mul(&x6, &x6, x3);
	fe_sqr_n(&x9, &x6, 3);
	bip324_fe_mul(&x9, &x9, x3);
	fe_sqr_n(&x11, &x9, 2);
	bip324_fe_mul(&x11, &x11, x2);
	fe_sqr_n(&x22, &x11, 11);
	bip324_fe_mul(&x22, &x22, &x11);
	fe_sqr_n(&x44, &x22, 22);
	bip324_fe_mul(&x44, &x44, &x22);
	fe_sqr_n(&x88, &x44, 44);
	bip324_fe_mul(&x88, &x88, &x44);
	fe_sqr_n(&x176, &x88, 88);
	bip324_fe_mul(&x176, &x176, &x88);
	fe_sqr_n(&x220, &x176, 44);
	bip324_fe_mul(&x220, &x220, &x44);
	fe_sqr_n(&x223, &x220, 3);
	bip324_fe_mul(&x223, &x223, x3);
	/* 223 ones, a zero, 22 ones */
	fe_sqr_n(&t, &x223, 23);
	bip324_fe_mul(r, &t, &x22);
}

/* p as GMP's read-only integer */
static const mp_limb_t P_LIMBS[4] = {UINT64_C(0xFFFFFFFEFFFFFC2F), UINT64_MAX, UINT64_MAX,
                                     UINT64_MAX};

void bip324_fe_inv(struct bip324_fe *r, const struct bip324_fe *a)
{
	/* GMP's extended gcd takes a microsecond or two where Fermat's
	 * a^(p-2) takes 270 multiplications; a is public. */
	mpz_t z, p, inv;
	mpz_roinit_n(z, (const mp_limb_t *)a->n, 4);
	mpz_roinit_n(p, P_LIMBS, 4);
	mpz_init2(inv, 256);
	if (!mpz_invert(inv, z, p))
		mpz_set_ui(inv, 0); /* 1/0 = 0, as the reference */
	for (int i = 0; i < 4; i++)
		r->n[i] = mpz_getlimbn(inv, i);
	mpz_clear(inv);
}

bool bip324_fe_sqrt(struct bip324_fe *r, const struct bip324_fe *a)
{
	/* (p + 1)/4: ... then 0000 11 00 */
	struct bip324_fe x2, x3, s, s2;
	fe_pow_223_0_22(&s, &x2, &x3, a);
	fe_sqr_n(&s, &s, 6);
	bip324_fe_mul(&s, &s, &x2);
	fe_sqr_n(&s, &s, 2);
	bip324_fe_sqr(&s2, &s);
	if (!bip324_fe_equal(&s2, a))
		return false;
	*r = s;
	return true;
}

bool bip324_fe_is_square(const struct bip324_fe *a)
{
	/* The Jacobi symbol (GMP's, a gcd-like walk) is the Legendre symbol
	 * for a prime; 0 counts as a square. */
	mpz_t z, p;
	mpz_roinit_n(z, (const mp_limb_t *)a->n, 4);
	mpz_roinit_n(p, P_LIMBS, 4);
	return mpz_jacobi(z, p) >= 0;
}
