/*
 * bip324/ellswift.c: ElligatorSwift (BIP324's xswiftec, xswiftec_inv,
 * xelligatorswift) and the x-only ECDH, on libsecp256k1 0.2.0's public
 * calls.
 *
 * 0.2.0 has no ellswift module, so the maps run on bip324/field.c. Decoding
 * needs to know which of three candidate x coordinates lies on the curve:
 * libsecp256k1's own pubkey parser answers that (its square root is
 * faster than ours) and hands back the point the ECDH then multiplies, so
 * the secret key goes to secp256k1_ecdh and nowhere else. The hash of the
 * shared x happens inside secp256k1_ecdh's hash callback.
 */
#include <pthread.h>
#include <string.h>

#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <sodium.h>

#include "base/require.h"
#include "bip324/bip324.h"
#include "bip324/internal.h"
#include "proto/proto.h"

/* sqrt(-3) mod p, the root BIP324's reference takes (a^((p+1)/4)). */
static const uint8_t SQRT_MINUS_3[32] = {
    0x0a, 0x2d, 0x2b, 0xa9, 0x35, 0x07, 0xf1, 0xdf, 0x23, 0x37, 0x70, 0xc2, 0xa7, 0x97, 0x96, 0x2c,
    0xc6, 0x1f, 0x6d, 0x15, 0xda, 0x14, 0xec, 0xd4, 0x7d, 0x8d, 0x27, 0xae, 0x1c, 0xd5, 0xf8, 0x52};

/* 1/2 mod p */
static const uint8_t HALF[32] = {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xfe, 0x18};

static secp256k1_context *secp_ctx;
static pthread_once_t secp_once = PTHREAD_ONCE_INIT;

static void secp_make(void)
{
	secp_ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	require(secp_ctx != NULL);
	/* Blinding for the secret-key operations (ecmult_gen), as Core's ECC_Start. */
	uint8_t seed[32];
	proto_random(seed, sizeof(seed));
	require(secp256k1_context_randomize(secp_ctx, seed));
	sodium_memzero(seed, sizeof(seed));
}

const secp256k1_context *bip324_secp_ctx(void)
{
	require(pthread_once(&secp_once, secp_make) == 0);
	return secp_ctx;
}

const char *bip324_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case BIP324_EKEY:
		return "invalid secret key";
	case BIP324_EMAC:
		return "packet authentication failed";
	case BIP324_ENOINV:
		return "no ElligatorSwift preimage for this case";
	case BIP324_ESTATE:
		return "cipher not in the state this call needs";
	case BIP324_ELENGTH:
		return "buffer length does not fit";
	}
	return "unknown bip324 error";
}

static void fe_const(struct bip324_fe *r, const uint8_t b[32])
{
	bip324_fe_from_bytes(r, b);
}

/* Whether x is the x coordinate of a point: x^3 + 7 is a square. */
static bool valid_x(const struct bip324_fe *x)
{
	struct bip324_fe y2, seven;
	bip324_fe_sqr(&y2, x);
	bip324_fe_mul(&y2, &y2, x);
	bip324_fe_set_int(&seven, 7);
	bip324_fe_add(&y2, &y2, &seven);
	return bip324_fe_is_square(&y2);
}

/* The point with x coordinate x (even y), when there is one. */
static bool lift_x(secp256k1_pubkey *point, const struct bip324_fe *x)
{
	uint8_t ser[33];
	ser[0] = 0x02;
	bip324_fe_to_bytes(ser + 1, x);
	return secp256k1_ec_pubkey_parse(bip324_secp_ctx(), point, ser, sizeof(ser)) == 1;
}

void bip324_xswiftec(uint8_t x[32], secp256k1_pubkey *point, const struct bip324_fe *u_in,
                     const struct bip324_fe *t_in)
{
	struct bip324_fe u = *u_in, t = *t_in, c3, half, seven;
	fe_const(&c3, SQRT_MINUS_3);
	fe_const(&half, HALF);
	bip324_fe_set_int(&seven, 7);
	if (bip324_fe_is_zero(&u))
		bip324_fe_set_int(&u, 1);
	if (bip324_fe_is_zero(&t))
		bip324_fe_set_int(&t, 1);

	struct bip324_fe u2, g, t2, m;
	bip324_fe_sqr(&u2, &u);
	bip324_fe_mul(&g, &u2, &u);
	bip324_fe_add(&g, &g, &seven); /* g = u^3 + 7 */
	bip324_fe_sqr(&t2, &t);
	bip324_fe_add(&m, &g, &t2);
	if (bip324_fe_is_zero(&m)) {
		bip324_fe_add(&t, &t, &t);
		bip324_fe_sqr(&t2, &t);
		bip324_fe_add(&m, &g, &t2);
	}
	/*
	 * The reference's X = n/d with n = g - t^2, d = 2t, and
	 * Y = (X + t)/(c u) = m/(d c u) with m = n + t d = g + t^2 (never 0
	 * after the doubling above). One inversion serves all three
	 * candidates: inv = 1/(d c u m), so Y = m^2 inv and
	 * X/Y = n c u/m = -3 n u^2 d inv.
	 */
	struct bip324_fe n, d, dcu, inv, y, xy, tmp;
	bip324_fe_sub(&n, &g, &t2);
	bip324_fe_add(&d, &t, &t);
	bip324_fe_mul(&dcu, &d, &c3);
	bip324_fe_mul(&dcu, &dcu, &u);
	bip324_fe_mul(&tmp, &dcu, &m);
	bip324_fe_inv(&inv, &tmp);
	bip324_fe_sqr(&y, &m);
	bip324_fe_mul(&y, &y, &inv);

	struct bip324_fe cand[3];
	/* x3 = u + 4 Y^2, first, as the reference tries it */
	bip324_fe_sqr(&tmp, &y);
	bip324_fe_add(&tmp, &tmp, &tmp);
	bip324_fe_add(&tmp, &tmp, &tmp);
	bip324_fe_add(&cand[0], &u, &tmp);
	/* X/Y */
	struct bip324_fe three;
	bip324_fe_set_int(&three, 3);
	bip324_fe_mul(&xy, &n, &u2);
	bip324_fe_mul(&xy, &xy, &d);
	bip324_fe_mul(&xy, &xy, &inv);
	bip324_fe_mul(&xy, &xy, &three);
	bip324_fe_neg(&xy, &xy);
	/* x1 = (-X/Y - u)/2, x2 = (X/Y - u)/2 */
	bip324_fe_neg(&tmp, &xy);
	bip324_fe_sub(&tmp, &tmp, &u);
	bip324_fe_mul(&cand[1], &tmp, &half);
	bip324_fe_sub(&tmp, &xy, &u);
	bip324_fe_mul(&cand[2], &tmp, &half);

	secp256k1_pubkey scratch;
	if (!point)
		point = &scratch;
	/* GMP's Jacobi symbol picks the candidate; libsecp256k1's parser
	 * (one square root) then gives its point. */
	for (int i = 0; i < 3; i++) {
		if (i < 2 && !valid_x(&cand[i]))
			continue;
		if (lift_x(point, &cand[i])) {
			bip324_fe_to_bytes(x, &cand[i]);
			return;
		}
	}
	/* XSwiftEC's theorem: one of the three always lies on the curve. */
	require(!"xswiftec: no candidate on the curve");
}

void bip324_ellswift_decode(const uint8_t ellswift[BIP324_ELLSWIFT_LEN], uint8_t x[32])
{
	struct bip324_fe u, t;
	bip324_fe_from_bytes(&u, ellswift);
	bip324_fe_from_bytes(&t, ellswift + 32);
	bip324_xswiftec(x, NULL, &u, &t);
}

bool bip324_xswiftec_plain(const struct bip324_fe *u, const struct bip324_fe *t)
{
	struct bip324_fe g, t2, seven;
	if (bip324_fe_is_zero(u) || bip324_fe_is_zero(t))
		return false;
	bip324_fe_sqr(&g, u);
	bip324_fe_mul(&g, &g, u);
	bip324_fe_set_int(&seven, 7);
	bip324_fe_add(&g, &g, &seven);
	bip324_fe_sqr(&t2, t);
	bip324_fe_add(&g, &g, &t2);
	return !bip324_fe_is_zero(&g);
}

/* The reference's xswiftec_inv on field elements. */
static int xswiftec_inv(struct bip324_fe *t, const struct bip324_fe *x, const struct bip324_fe *u,
                        int c)
{
	struct bip324_fe c3, half, seven, u2, g, s, v, r, w, tmp, tmp2;
	fe_const(&c3, SQRT_MINUS_3);
	fe_const(&half, HALF);
	bip324_fe_set_int(&seven, 7);
	bip324_fe_sqr(&u2, u);
	bip324_fe_mul(&g, &u2, u);
	bip324_fe_add(&g, &g, &seven); /* g = u^3 + 7 */

	if (!(c & 2)) {
		bip324_fe_neg(&tmp, x);
		bip324_fe_sub(&tmp, &tmp, u);
		if (valid_x(&tmp))
			return BIP324_ENOINV;
		v = *x;
		/* s = -g / (u^2 + u v + v^2) */
		bip324_fe_mul(&tmp, u, &v);
		bip324_fe_add(&tmp, &tmp, &u2);
		bip324_fe_sqr(&tmp2, &v);
		bip324_fe_add(&tmp, &tmp, &tmp2);
		bip324_fe_inv(&tmp, &tmp);
		bip324_fe_mul(&s, &g, &tmp);
		bip324_fe_neg(&s, &s);
		/* Every failure gives no t, so the cheap test of the last one
		 * (w = sqrt(s)) may come first. */
		if (!bip324_fe_is_square(&s))
			return BIP324_ENOINV;
	} else {
		bip324_fe_sub(&s, x, u);
		if (bip324_fe_is_zero(&s) || !bip324_fe_is_square(&s))
			return BIP324_ENOINV;
		/* r = sqrt(-s (4 g + 3 s u^2)) */
		struct bip324_fe three, four;
		bip324_fe_set_int(&three, 3);
		bip324_fe_set_int(&four, 4);
		bip324_fe_mul(&tmp, &s, &u2);
		bip324_fe_mul(&tmp, &tmp, &three);
		bip324_fe_mul(&tmp2, &g, &four);
		bip324_fe_add(&tmp, &tmp, &tmp2);
		bip324_fe_mul(&tmp, &tmp, &s);
		bip324_fe_neg(&tmp, &tmp);
		if (!bip324_fe_is_square(&tmp) || !bip324_fe_sqrt(&r, &tmp))
			return BIP324_ENOINV;
		if ((c & 1) && bip324_fe_is_zero(&r))
			return BIP324_ENOINV;
		/* v = (-u + r/s)/2 */
		bip324_fe_inv(&tmp, &s);
		bip324_fe_mul(&tmp, &tmp, &r);
		bip324_fe_sub(&tmp, &tmp, u);
		bip324_fe_mul(&v, &tmp, &half);
	}
	if (!bip324_fe_sqrt(&w, &s))
		return BIP324_ENOINV;

	/* t = ±w (u (1 ∓ c3)/2 + v), the sign and root as the case says */
	struct bip324_fe one, k;
	bip324_fe_set_int(&one, 1);
	if (c & 1)
		bip324_fe_add(&k, &one, &c3);
	else
		bip324_fe_sub(&k, &one, &c3);
	bip324_fe_mul(&k, &k, &half);
	bip324_fe_mul(&tmp, u, &k);
	bip324_fe_add(&tmp, &tmp, &v);
	bip324_fe_mul(t, &w, &tmp);
	int sel = c & 5;
	if (sel == 0 || sel == 5)
		bip324_fe_neg(t, t);
	return 0;
}

int bip324_xswiftec_inv(uint8_t t[32], const uint8_t x[32], const uint8_t u[32], int c)
{
	struct bip324_fe fx, fu, ft;
	bip324_fe_from_bytes(&fx, x);
	bip324_fe_from_bytes(&fu, u);
	int err = xswiftec_inv(&ft, &fx, &fu, c & 7);
	if (err)
		return err;
	bip324_fe_to_bytes(t, &ft);
	return 0;
}

void bip324_seckey_new(uint8_t seckey[32])
{
	do
		proto_random(seckey, 32);
	while (!secp256k1_ec_seckey_verify(bip324_secp_ctx(), seckey));
}

int bip324_ellswift_create(uint8_t ellswift[64], const uint8_t seckey[32])
{
	const secp256k1_context *ctx = bip324_secp_ctx();
	secp256k1_pubkey pub;
	if (!secp256k1_ec_pubkey_create(ctx, &pub, seckey))
		return BIP324_EKEY;
	uint8_t ser[33];
	size_t serlen = sizeof(ser);
	require(secp256k1_ec_pubkey_serialize(ctx, ser, &serlen, &pub, SECP256K1_EC_COMPRESSED));
	struct bip324_fe x, u, t;
	bip324_fe_from_bytes(&x, ser + 1);
	/*
	 * The reference's xelligatorswift: a random nonzero u and a random case
	 * until the inverse exists (about one try in four; the public x is
	 * all these branches see). A t that xswiftec would alter (zero, or
	 * u^3 + t^2 + 7 = 0: odds about 2^-255) would not decode back: skip it.
	 */
	/* one draw from the system (a getrandom call), stretched by ChaCha20
	 * for the tries: about four a key, 33 bytes each */
	uint8_t seed[32], pool[33 * 8], nonce[12] = {0};
	proto_random(seed, sizeof(seed));
	size_t used = sizeof(pool);
	uint64_t refills = 0;
	for (;;) {
		if (used == sizeof(pool)) {
			/* a fresh stream (nonce) for each refill */
			for (int i = 0; i < 8; i++)
				nonce[4 + i] = (uint8_t)(refills >> (8 * i));
			refills++;
			crypto_stream_chacha20_ietf(pool, sizeof(pool), nonce, seed);
			used = 0;
		}
		const uint8_t *rnd = pool + used;
		used += 33;
		bip324_fe_from_bytes(&u, rnd);
		if (bip324_fe_is_zero(&u))
			continue;
		if (xswiftec_inv(&t, &x, &u, rnd[32] & 7) == 0 && bip324_xswiftec_plain(&u, &t))
			break;
	}
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(pool, sizeof(pool));
	bip324_fe_to_bytes(ellswift, &u);
	bip324_fe_to_bytes(ellswift + 32, &t);
	return 0;
}

/* What secp256k1_ecdh's hash callback needs beside the shared x. */
struct xdh_data {
	const uint8_t *first, *second; /* the initiator's encoding, the responder's */
	uint8_t *x_out;                /* bip324_ecdh_x: the raw x instead */
};

static int xdh_hash(unsigned char *output, const unsigned char *x32, const unsigned char *y32,
                    void *data)
{
	(void)y32;
	const struct xdh_data *xd = data;
	if (xd->x_out) {
		memcpy(output, x32, 32);
		return 1;
	}
	struct proto_sha256 h;
	proto_sha256_init_tagged(&h, "bip324_ellswift_xonly_ecdh");
	proto_sha256_update(&h, xd->first, BIP324_ELLSWIFT_LEN);
	proto_sha256_update(&h, xd->second, BIP324_ELLSWIFT_LEN);
	proto_sha256_update(&h, x32, 32);
	proto_sha256_final(&h, output);
	return 1;
}

static int xdh(uint8_t out[32], const uint8_t seckey[32], const uint8_t their[64],
               struct xdh_data *xd)
{
	struct bip324_fe u, t;
	uint8_t x[32];
	secp256k1_pubkey point;
	bip324_fe_from_bytes(&u, their);
	bip324_fe_from_bytes(&t, their + 32);
	bip324_xswiftec(x, &point, &u, &t);
	/* x(d P) = x(d (-P)): the even-y point stands for either. */
	if (!secp256k1_ecdh(bip324_secp_ctx(), out, &point, seckey, xdh_hash, xd))
		return BIP324_EKEY;
	return 0;
}

int bip324_ecdh_x(uint8_t x[32], const uint8_t seckey[32], const uint8_t their[64])
{
	struct xdh_data xd = {.x_out = x};
	return xdh(x, seckey, their, &xd);
}

int bip324_ecdh(uint8_t secret[32], const uint8_t seckey[32], const uint8_t their[64],
                const uint8_t ours[64], bool initiator)
{
	struct xdh_data xd = {.first = initiator ? ours : their,
	                      .second = initiator ? their : ours};
	return xdh(secret, seckey, their, &xd);
}
