/*
 * index/muhash.c: MuHash3072, Bitcoin Core's rolling hash of a set
 * (crypto/muhash.cpp), with GMP for the arithmetic.
 *
 * An element maps to a number modulo p = 2^3072 - 1103717 (the largest
 * 3072-bit safe prime): SHA-256 of its bytes keys ChaCha20, whose first
 * 384 bytes of keystream (nonce and counter zero) read little-endian are
 * the number. The set's hash is the product of its elements' numbers;
 * removing an element multiplies a denominator instead, so the order of
 * inserts and removes never matters and only finalising pays for the one
 * modular inverse. Finalize is SHA-256 of numerator / denominator,
 * written as 384 little-endian bytes.
 *
 * With zero nonce and a counter below 2^32, Core's ChaCha20Aligned (RFC
 * 8439 layout) and libsodium's IETF variant give the same keystream.
 *
 * Products are reduced with p's form: x = hi * 2^3072 + lo is congruent
 * to hi * 1103717 + lo, two rounds bring a product of two residues under
 * 2^3072, and one subtraction under p. Numbers go in and out of GMP as
 * 48 little-endian 64-bit words (byte by byte is several times slower).
 * GMP allocates with its own
 * allocator (mpz_t), not base/alloc.h's hook.
 */
#include <gmp.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "base/alloc.h"
#include "index/index.h"

#define MUHASH_BITS 3072
/* p = 2^3072 - MUHASH_DIFF */
#define MUHASH_DIFF 1103717ul

struct index_muhash {
	mpz_t num, den;
	mpz_t t; /* scratch for a product's high half */
	mpz_t e; /* scratch for an element's number */
};

/* The modulus, set once by whichever thread comes first (GMP's integers
 * are not constant expressions); read-only afterwards. */
static mpz_t modulus;
static pthread_once_t modulus_once = PTHREAD_ONCE_INIT;

static void set_modulus(void)
{
	/* libsodium picks its fastest ChaCha20 (SSSE3, AVX2) in sodium_init;
	 * before it, the portable code, three times slower here. Idempotent
	 * and thread-safe; a failure leaves the portable code, same output. */
	int sodium = sodium_init();
	(void)sodium;
	mpz_init_set_ui(modulus, 1);
	mpz_mul_2exp(modulus, modulus, MUHASH_BITS);
	mpz_sub_ui(modulus, modulus, MUHASH_DIFF);
}

struct index_muhash *index_muhash_new(void)
{
	struct index_muhash *m = xmalloc(sizeof(*m));
	if (!m)
		return NULL;
	(void)pthread_once(&modulus_once, set_modulus);
	mpz_init_set_ui(m->num, 1);
	mpz_init_set_ui(m->den, 1);
	mpz_init2(m->t, 2 * MUHASH_BITS + 64);
	mpz_init2(m->e, MUHASH_BITS + 64);
	return m;
}

void index_muhash_free(struct index_muhash *m)
{
	if (!m)
		return;
	mpz_clears(m->num, m->den, m->t, m->e, NULL);
	xfree(m);
}

void index_muhash_reset(struct index_muhash *m)
{
	mpz_set_ui(m->num, 1);
	mpz_set_ui(m->den, 1);
}

/* x mod p for 0 <= x < 2^6144, using p's form; t is scratch. */
static void reduce(mpz_t x, mpz_t t)
{
	while (mpz_sizeinbase(x, 2) > MUHASH_BITS) {
		mpz_tdiv_q_2exp(t, x, MUHASH_BITS);
		mpz_tdiv_r_2exp(x, x, MUHASH_BITS);
		mpz_addmul_ui(x, t, MUHASH_DIFF);
	}
	if (mpz_cmp(x, modulus) >= 0)
		mpz_sub(x, x, modulus);
}

static void mulmod(mpz_t x, const mpz_t y, mpz_t t)
{
	mpz_mul(x, x, y);
	reduce(x, t);
}

/* Core's ToNum3072: the element's number into m->e. */
static void to_num(struct index_muhash *m, const void *data, size_t len)
{
	uint8_t key[32], ks[MUHASH_BITS / 8];
	static const uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES];
	proto_sha256(data, len, key);
	crypto_stream_chacha20_ietf(ks, sizeof(ks), nonce, key);
	mpz_import(m->e, sizeof(ks) / 8, -1, 8, -1, 0, ks);
	reduce(m->e, m->t);
}

void index_muhash_insert(struct index_muhash *m, const void *data, size_t len)
{
	to_num(m, data, len);
	mulmod(m->num, m->e, m->t);
}

void index_muhash_remove(struct index_muhash *m, const void *data, size_t len)
{
	to_num(m, data, len);
	mulmod(m->den, m->e, m->t);
}

void index_muhash_mul(struct index_muhash *m, const struct index_muhash *o)
{
	mulmod(m->num, o->num, m->t);
	mulmod(m->den, o->den, m->t);
}

void index_muhash_div(struct index_muhash *m, const struct index_muhash *o)
{
	mulmod(m->num, o->den, m->t);
	mulmod(m->den, o->num, m->t);
}

/* 384 little-endian bytes of x (< 2^3072). */
static void to_bytes(const mpz_t x, uint8_t out[INDEX_MUHASH_BYTES])
{
	size_t n = 0;
	memset(out, 0, INDEX_MUHASH_BYTES);
	mpz_export(out, &n, -1, 8, -1, 0, x);
}

/* num / den into num, den = 1: the one inverse. A zero denominator (an
 * element whose number is p's multiple: never found) leaves it as is. */
static void combine(struct index_muhash *m)
{
	if (mpz_cmp_ui(m->den, 1) == 0)
		return;
	if (mpz_invert(m->e, m->den, modulus)) {
		mulmod(m->num, m->e, m->t);
		mpz_set_ui(m->den, 1);
	}
}

void index_muhash_finalize(struct index_muhash *m, uint8_t out[32])
{
	uint8_t b[INDEX_MUHASH_BYTES];
	combine(m);
	to_bytes(m->num, b);
	proto_sha256(b, sizeof(b), out);
}

void index_muhash_save(struct index_muhash *m, uint8_t out[INDEX_MUHASH_BYTES])
{
	combine(m);
	to_bytes(m->num, out);
}

void index_muhash_load(struct index_muhash *m, const uint8_t in[INDEX_MUHASH_BYTES])
{
	mpz_import(m->num, INDEX_MUHASH_BYTES / 8, -1, 8, -1, 0, in);
	reduce(m->num, m->t);
	mpz_set_ui(m->den, 1);
}

void index_muhash_serialize(const struct index_muhash *m, uint8_t out[2 * INDEX_MUHASH_BYTES])
{
	to_bytes(m->num, out);
	to_bytes(m->den, out + INDEX_MUHASH_BYTES);
}

void index_muhash_deserialize(struct index_muhash *m, const uint8_t in[2 * INDEX_MUHASH_BYTES])
{
	mpz_import(m->num, INDEX_MUHASH_BYTES / 8, -1, 8, -1, 0, in);
	mpz_import(m->den, INDEX_MUHASH_BYTES / 8, -1, 8, -1, 0, in + INDEX_MUHASH_BYTES);
	/* Core reduces a number at or over p before dividing (Num3072's
	 * IsOverflow and FullReduce): the same residue. */
	reduce(m->num, m->t);
	reduce(m->den, m->t);
}
