/*
 * bench/bench_bip324.c: bip324/, mirroring Bitcoin Core's
 * src/bench/bip324_ecdh.cpp, ellswift.cpp and chacha20.cpp (same names,
 * same work an op):
 *
 *   BIP324_ECDH          decode their random 64-byte encoding and the
 *                        x-only ECDH with the tagged hash; bytes of each
 *                        result go back into the key and both encodings, as
 *                        Core's, so no two ops decode the same input.
 *   BIP324_ECDH_Decode   (peerd only) the ElligatorSwift decoding alone, of a
 *                        changing random encoding: BIP324_ECDH's own field
 *                        work (GMP's Jacobi symbols, bip324/'s square root).
 *   BIP324_ECDH_Secp     (peerd only) Debian's secp256k1_ecdh alone, with
 *                        its default hash, on a parsed point: the floor
 *                        BIP324_ECDH cannot go under on libsecp256k1 0.2.0
 *                        (no x-only ladder there).
 *   EllSwiftCreate       a public key and its encoding from a secret key;
 *                        the encoding's first half is the next secret key.
 *                        (Core derives u from entropy by hashing, peerd
 *                        draws it from libsodium: both a few hundred ns.)
 *   FSCHACHA20POLY1305_64BYTES, _256BYTES, _1MB
 *                        one FSChaCha20Poly1305 encryption of a zero buffer
 *                        of that size, empty aad (rekeying every 224 ops as
 *                        Core's does). Core prints these per byte: its
 *                        ns/byte times the size is our ns/op (bench_note
 *                        prints ours per byte beside).
 *
 * bench_bitcoin -filter='BIP324_ECDH|EllSwiftCreate|FSCHACHA20POLY1305.*'
 * gives Core's rows for the same sitting.
 */
#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "bench/bench.h"
#include "bip324/bip324.h"
#include "proto/proto.h"

BENCH(BIP324_ECDH)
{
	uint8_t key[32], ours[64], theirs[64], secret[32];
	proto_random(key, sizeof(key));
	proto_random(ours, sizeof(ours));
	proto_random(theirs, sizeof(theirs));
	size_t bad = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (bip324_ecdh(secret, key, theirs, ours, true) != 0) {
			/* a random key past the group order (about 2^-128) */
			bad++;
			proto_random(secret, sizeof(secret));
		}
		memcpy(key + 12, secret, 8);
		memcpy(ours + 28, secret + 8, 8);
		memcpy(theirs + 24, secret + 16, 16);
	}
	bench_stop(ctx);
	if (bad > 1)
		bench_fail(ctx, "%zu invalid keys", bad);
}

BENCH(BIP324_ECDH_Decode)
{
	uint8_t ell[64], x[32];
	proto_random(ell, sizeof(ell));
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		bip324_ellswift_decode(ell, x);
		memcpy(ell + 24, x, 16);
	}
	bench_stop(ctx);
	bench_keep(x[0]);
}

BENCH(BIP324_ECDH_Secp)
{
	/* A context made and randomized once, as bip324/'s (bip324_secp_ctx). */
	secp256k1_context *sc = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	uint8_t key[32], other[32], out[32];
	secp256k1_pubkey point;
	proto_random(out, sizeof(out));
	bip324_seckey_new(key);
	bip324_seckey_new(other);
	if (!sc || !secp256k1_context_randomize(sc, out) ||
	    !secp256k1_ec_pubkey_create(sc, &point, other)) {
		bench_fail(ctx, "no context or point");
		goto out;
	}
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (!secp256k1_ecdh(sc, out, &point, key, NULL, NULL))
			bench_fail(ctx, "ecdh failed");
		memcpy(key + 12, out, 8);
	}
	bench_stop(ctx);
out:
	if (sc)
		secp256k1_context_destroy(sc);
}

BENCH(EllSwiftCreate)
{
	uint8_t key[32], ell[64];
	bip324_seckey_new(key);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (bip324_ellswift_create(ell, key) != 0)
			bench_fail(ctx, "invalid key");
		memcpy(key, ell, 32);
	}
	bench_stop(ctx);
	/* the last encoding must decode to its key's x (checked, untimed) */
	uint8_t x[32];
	bip324_ellswift_decode(ell, x);
	bench_keep(x[0]);
}

static void fschacha20poly1305(struct bench_ctx *ctx, size_t n, size_t size)
{
	uint8_t key[32] = {0};
	struct bip324_fsaead a;
	bip324_fsaead_init(&a, key);
	uint8_t *in = xcalloc(1, size), *out = xmalloc(size + BIP324_TAG_LEN);
	uint64_t t0 = bench_now_ns();
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++)
		bip324_fsaead_encrypt(&a, NULL, 0, in, size, NULL, 0, out);
	bench_stop(ctx);
	double ns = (double)(bench_now_ns() - t0);
	bench_keep(out[0]);
	bench_note(ctx, "%.3f ns/byte (Core's unit)", n ? ns / ((double)n * (double)size) : 0.0);
	xfree(in);
	xfree(out);
}

BENCH(FSCHACHA20POLY1305_64BYTES)
{
	fschacha20poly1305(ctx, n, 64);
}

BENCH(FSCHACHA20POLY1305_256BYTES)
{
	fschacha20poly1305(ctx, n, 256);
}

BENCH(FSCHACHA20POLY1305_1MB)
{
	fschacha20poly1305(ctx, n, 1024 * 1024);
}
