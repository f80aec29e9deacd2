/*
 * bench/bench_sigs.c: the signature limit (see bench_sigs.h).
 */
#include "bench/bench_sigs.h"

#include <pthread.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdint.h>

#include "proto/proto.h"

static struct {
	int ready;
	secp256k1_context *ctx;
	secp256k1_pubkey pub[BENCH_SIGS];
	secp256k1_ecdsa_signature sig[BENCH_SIGS];
	secp256k1_xonly_pubkey xpub[BENCH_SIGS];
	uint8_t schnorr[BENCH_SIGS][64];
	uint8_t msg[BENCH_SIGS][32];
} lim;

int bench_sigs_setup(void)
{
	if (lim.ready)
		return 0;
	lim.ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!lim.ctx)
		return -1;
	for (size_t i = 0; i < BENCH_SIGS; i++) {
		uint8_t key[32];
		secp256k1_keypair kp;
		/* Deterministic keys and messages: a tagged hash of the index. */
		proto_tagged_hash("peerd/bench/key", &i, sizeof(i), key);
		proto_tagged_hash("peerd/bench/msg", &i, sizeof(i), lim.msg[i]);
		if (!secp256k1_ec_pubkey_create(lim.ctx, &lim.pub[i], key) ||
		    !secp256k1_ecdsa_sign(lim.ctx, &lim.sig[i], lim.msg[i], key, NULL, NULL) ||
		    !secp256k1_keypair_create(lim.ctx, &kp, key) ||
		    !secp256k1_keypair_xonly_pub(lim.ctx, &lim.xpub[i], NULL, &kp) ||
		    !secp256k1_schnorrsig_sign32(lim.ctx, lim.schnorr[i], lim.msg[i], &kp, NULL))
			return -1;
	}
	lim.ready = 1;
	return 0;
}

double bench_sigs_verify_ns_on(struct bench_ctx *ctx, bool schnorr, clockid_t clock)
{
	uint64_t best = UINT64_MAX;
	for (int pass = 0; pass < 3; pass++) {
		uint64_t t0 = bench_clock_ns(clock);
		for (size_t i = 0; i < BENCH_SIGS; i++) {
			int ok = schnorr ? secp256k1_schnorrsig_verify(lim.ctx, lim.schnorr[i],
			                                               lim.msg[i], 32, &lim.xpub[i])
			                 : secp256k1_ecdsa_verify(lim.ctx, &lim.sig[i], lim.msg[i],
			                                          &lim.pub[i]);
			if (!ok)
				bench_fail(ctx, "signature %zu does not verify", i);
		}
		uint64_t t = bench_clock_ns(clock) - t0;
		best = t < best ? t : best;
	}
	return (double)best / BENCH_SIGS;
}

double bench_sigs_verify_ns(struct bench_ctx *ctx, bool schnorr)
{
	return bench_sigs_verify_ns_on(ctx, schnorr, CLOCK_MONOTONIC);
}

/* One thread's share of a parallel pass: signatures [from, to). */
struct par_arg {
	bool schnorr;
	size_t from, to;
	int bad;
};

static void *par_verify(void *p)
{
	struct par_arg *a = p;
	for (size_t i = a->from; i < a->to; i++) {
		int ok = a->schnorr ? secp256k1_schnorrsig_verify(lim.ctx, lim.schnorr[i],
		                                                  lim.msg[i], 32, &lim.xpub[i])
		                    : secp256k1_ecdsa_verify(lim.ctx, &lim.sig[i], lim.msg[i],
		                                             &lim.pub[i]);
		a->bad |= !ok;
	}
	return NULL;
}

double bench_sigs_verify_ns_parallel(struct bench_ctx *ctx, bool schnorr, unsigned threads)
{
	pthread_t th[BENCH_SIGS_THREADS_MAX];
	struct par_arg a[BENCH_SIGS_THREADS_MAX];
	uint64_t best = UINT64_MAX;
	if (threads > BENCH_SIGS_THREADS_MAX)
		threads = BENCH_SIGS_THREADS_MAX;
	for (int pass = 0; pass < 3; pass++) {
		unsigned started = 1;
		uint64_t t0 = bench_now_ns();
		for (unsigned k = 0; k < threads; k++)
			a[k] = (struct par_arg){schnorr, BENCH_SIGS * k / threads,
			                        BENCH_SIGS * (k + 1) / threads, 0};
		for (unsigned k = 1; k < threads; k++, started++)
			if (pthread_create(&th[k], NULL, par_verify, &a[k]))
				break;
		par_verify(&a[0]);
		for (unsigned k = 1; k < started; k++)
			pthread_join(th[k], NULL);
		uint64_t t = bench_now_ns() - t0;
		for (unsigned k = 0; k < threads; k++)
			if (a[k].bad)
				bench_fail(ctx, "a signature does not verify");
		if (started != threads)
			bench_fail(ctx, "cannot start a thread");
		best = t < best ? t : best;
	}
	return (double)best / BENCH_SIGS;
}
