/*
 * bench/bench_muhash.c: MuHash3072 (index/muhash.c) beside Bitcoin Core's
 * rows of the same names (bench/crypto_hash.cpp; `bench_bitcoin
 * -filter='MuHash.*'`):
 *   MuHash            one 32-byte element hashed and multiplied in
 *   MuHashMul         acc *= another set (numerator and denominator)
 *   MuHashDiv         acc /= another set
 *   MuHashPrecompute  one element's number (SHA-256, ChaCha20 keystream)
 *   MuHashFinalize    finalize (the modular inverse), then divide by the result
 * Core's sets of one element hold the number as the numerator; here an
 * element is inserted into a reset set, one multiplication by one more.
 */
#include <string.h>

#include "bench/bench.h"
#include "index/index.h"

static struct index_muhash *of_bytes(const uint8_t *b, size_t len)
{
	struct index_muhash *m = index_muhash_new();
	if (m)
		index_muhash_insert(m, b, len);
	return m;
}

BENCH(MuHash)
{
	struct index_muhash *acc = index_muhash_new(), *e = index_muhash_new();
	if (!acc || !e) {
		bench_fail(ctx, "out of memory");
		goto out;
	}
	uint8_t key[32] = {0};
	uint32_t k = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		key[0] = (uint8_t)++k;
		index_muhash_reset(e);
		index_muhash_insert(e, key, sizeof(key));
		index_muhash_mul(acc, e);
	}
	bench_stop(ctx);
out:
	index_muhash_free(acc);
	index_muhash_free(e);
}

/* acc and a set of one fixed element, for the multiply and divide rows. */
static void mul_or_div(struct bench_ctx *ctx, size_t n, bool div)
{
	static const uint8_t seed[32] = {0x25, 0x19, 0x07};
	struct index_muhash *acc = index_muhash_new(), *m = of_bytes(seed, sizeof(seed));
	if (!acc || !m) {
		bench_fail(ctx, "out of memory");
		goto out;
	}
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (div)
			index_muhash_div(acc, m);
		else
			index_muhash_mul(acc, m);
	}
	bench_stop(ctx);
out:
	index_muhash_free(acc);
	index_muhash_free(m);
}

BENCH(MuHashMul)
{
	mul_or_div(ctx, n, false);
}

BENCH(MuHashDiv)
{
	mul_or_div(ctx, n, true);
}

BENCH(MuHashPrecompute)
{
	static const uint8_t key[32] = {0x01, 0x02, 0x03};
	struct index_muhash *e = index_muhash_new();
	if (!e) {
		bench_fail(ctx, "out of memory");
		return;
	}
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		index_muhash_reset(e);
		index_muhash_insert(e, key, sizeof(key));
	}
	bench_stop(ctx);
	index_muhash_free(e);
}

BENCH(MuHashFinalize)
{
	static const uint8_t a[32] = {0xaa}, b[32] = {0xbb};
	struct index_muhash *acc = of_bytes(a, sizeof(a));
	if (!acc) {
		bench_fail(ctx, "out of memory");
		goto out;
	}
	index_muhash_remove(acc, b, sizeof(b));
	uint8_t out[32];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		index_muhash_finalize(acc, out);
		/* Core: acc /= MuHash3072{out}, a new denominator to invert next time. */
		index_muhash_remove(acc, out, sizeof(out));
	}
	bench_stop(ctx);
out:
	index_muhash_free(acc);
}
