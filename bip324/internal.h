/*
 * bip324/internal.h: bip324/'s own files share this (and its unit tests,
 * which check the pieces against BIP324's vectors); nobody else includes it.
 *
 * The field is secp256k1's, GF(p) with p = 2^256 - 2^32 - 977, as four
 * 64-bit limbs, least significant first, always fully reduced (< p). It
 * works on public values only (ElligatorSwift's u, t and x coordinates), so
 * its branches may depend on the values; nothing secret passes through it.
 */
#ifndef PEERD_BIP324_INTERNAL_H
#define PEERD_BIP324_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <secp256k1.h>

/** A field element, fully reduced. */
struct bip324_fe {
	uint64_t n[4];
};

/** a mod p from 32 big-endian bytes (any value: ElligatorSwift reduces). */
void bip324_fe_from_bytes(struct bip324_fe *r, const uint8_t b[32]);
/** 32 big-endian bytes of a. */
void bip324_fe_to_bytes(uint8_t b[32], const struct bip324_fe *a);
/** The small integer v as a field element. */
void bip324_fe_set_int(struct bip324_fe *r, uint64_t v);
bool bip324_fe_is_zero(const struct bip324_fe *a);
bool bip324_fe_equal(const struct bip324_fe *a, const struct bip324_fe *b);
void bip324_fe_add(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b);
void bip324_fe_sub(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b);
void bip324_fe_neg(struct bip324_fe *r, const struct bip324_fe *a);
void bip324_fe_mul(struct bip324_fe *r, const struct bip324_fe *a, const struct bip324_fe *b);
void bip324_fe_sqr(struct bip324_fe *r, const struct bip324_fe *a);
/** 1/a; 0 for a = 0 (as BIP324's reference and libsecp256k1 do). */
void bip324_fe_inv(struct bip324_fe *r, const struct bip324_fe *a);
/** A square root of a, a^((p+1)/4) (the reference's root), when a is a square. */
bool bip324_fe_sqrt(struct bip324_fe *r, const struct bip324_fe *a);
/** Whether a is a square (0 counts as one). */
bool bip324_fe_is_square(const struct bip324_fe *a);

/** libsecp256k1's context for bip324/ (made once, randomized; thread-safe to use). */
const secp256k1_context *bip324_secp_ctx(void);

/**
 * XSwiftEC (BIP324's xswiftec): the x coordinate (u, t) decode to, and the
 * point with that x (even y) in *point when point is not NULL.
 */
void bip324_xswiftec(uint8_t x[32], secp256k1_pubkey *point, const struct bip324_fe *u,
                     const struct bip324_fe *t);

/**
 * Whether xswiftec takes (u, t) as they are: u and t nonzero and
 * u^3 + t^2 + 7 nonzero. Only then does a t from the inverse decode back
 * to its x (the reference's xswiftec_inv assumes it).
 */
bool bip324_xswiftec_plain(const struct bip324_fe *u, const struct bip324_fe *t);

/**
 * The x-only ECDH point of seckey and their ElligatorSwift key, unhashed
 * (the vectors' mid_x_shared). 0, or BIP324_EKEY for a bad secret key.
 */
int bip324_ecdh_x(uint8_t x[32], const uint8_t seckey[32], const uint8_t their[64]);

#endif
