/*
 * proto/hash.c: hashing through nettle, randomness and SipHash through
 * libsodium.
 *
 * nettle's SHA-256 picks the CPU's SHA extensions at run time; on this
 * project's machines it measured about 4.6x libsodium's, and SHA-256 is on
 * every path (checksums, txids, merkle roots, sighashes).
 */
#include "proto/proto.h"

#include <nettle/ripemd160.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <sodium.h>

_Static_assert(sizeof(struct proto_sha256) >= sizeof(struct sha256_ctx),
               "proto_sha256 too small for nettle's sha256_ctx");
_Static_assert(_Alignof(struct proto_sha256) >= _Alignof(struct sha256_ctx),
               "proto_sha256 alignment");

static struct sha256_ctx *ctx_of(struct proto_sha256 *c)
{
	return (struct sha256_ctx *)(void *)c->opaque;
}

void proto_sha256_init(struct proto_sha256 *c)
{
	sha256_init(ctx_of(c));
}

void proto_sha256_update(struct proto_sha256 *c, const void *data, size_t len)
{
	sha256_update(ctx_of(c), len, data);
}

void proto_sha256_final(struct proto_sha256 *c, uint8_t out[32])
{
	sha256_digest(ctx_of(c), SHA256_DIGEST_SIZE, out);
}

void proto_sha256d_final(struct proto_sha256 *c, uint8_t out[32])
{
	uint8_t first[32];
	sha256_digest(ctx_of(c), SHA256_DIGEST_SIZE, first);
	proto_sha256(first, 32, out);
}

void proto_sha256(const void *data, size_t len, uint8_t out[32])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

void proto_sha256d(const void *data, size_t len, uint8_t out[32])
{
	uint8_t first[32];
	proto_sha256(data, len, first);
	proto_sha256(first, 32, out);
}

void proto_hash_pair(const uint8_t a[32], const uint8_t b[32], uint8_t out[32])
{
	uint8_t buf[64];
	memcpy(buf, a, 32);
	memcpy(buf + 32, b, 32);
	proto_sha256d(buf, 64, out);
}

void proto_sha1(const void *data, size_t len, uint8_t out[20])
{
	struct sha1_ctx c;
	sha1_init(&c);
	sha1_update(&c, len, data);
	sha1_digest(&c, SHA1_DIGEST_SIZE, out);
}

void proto_ripemd160(const void *data, size_t len, uint8_t out[20])
{
	struct ripemd160_ctx c;
	ripemd160_init(&c);
	ripemd160_update(&c, len, data);
	ripemd160_digest(&c, RIPEMD160_DIGEST_SIZE, out);
}

void proto_hash160(const void *data, size_t len, uint8_t out[20])
{
	uint8_t sha[32];
	proto_sha256(data, len, sha);
	proto_ripemd160(sha, 32, out);
}

void proto_sha256_init_tagged(struct proto_sha256 *c, const char *tag)
{
	uint8_t th[32];
	proto_sha256(tag, strlen(tag), th);
	proto_sha256_init(c);
	proto_sha256_update(c, th, 32);
	proto_sha256_update(c, th, 32);
}

void proto_tagged_hash(const char *tag, const void *data, size_t len, uint8_t out[32])
{
	struct proto_sha256 c;
	proto_sha256_init_tagged(&c, tag);
	proto_sha256_update(&c, data, len);
	proto_sha256_final(&c, out);
}

/* libsodium must be initialised once before randombytes; sodium_init is
 * itself thread-safe and idempotent. */
static void sodium_ready(void)
{
	static _Atomic int ready;
	if (!ready) {
		if (sodium_init() < 0) {
			/* Without a random source peerd cannot make nonces or salts. */
			abort();
		}
		ready = 1;
	}
}

void proto_random(void *buf, size_t len)
{
	sodium_ready();
	randombytes_buf(buf, len);
}

uint64_t proto_random_u64(void)
{
	uint64_t v;
	proto_random(&v, sizeof(v));
	return v;
}

uint64_t proto_siphash(const uint8_t key[16], const void *data, size_t len)
{
	uint8_t out[crypto_shorthash_siphash24_BYTES];
	crypto_shorthash_siphash24(out, data, len, key);
	return proto_le64(out);
}
