/**
 * bench/bench_sigs.h: the signature limit, what libsecp256k1 alone takes to
 * verify signatures on this machine at this moment.
 *
 * Benchmarks of script checking compare themselves with it: a block of
 * 5,000 signatures cannot connect faster than 5,000 verifications split
 * among the threads. The machine's per-core speed drifts from minute to
 * minute, so a benchmark measures the limit right beside what it times.
 */
#ifndef PEERD_BENCH_SIGS_H
#define PEERD_BENCH_SIGS_H

#include <stdbool.h>
#include <time.h>

#include "bench/bench.h"

/** Signatures of each kind timed for the limit. */
#define BENCH_SIGS 500
/** Threads bench_sigs_verify_ns_parallel uses at most. */
#define BENCH_SIGS_THREADS_MAX 3

/** Make the keys and signatures (once; deterministic). 0, or -1. */
int bench_sigs_setup(void);
/** Nanoseconds per verification on this thread, measured on `clock`
 *  (wall or CPU time), best of three passes: ECDSA, or Schnorr (BIP340). */
double bench_sigs_verify_ns_on(struct bench_ctx *ctx, bool schnorr, clockid_t clock);
/** bench_sigs_verify_ns_on with the monotonic (wall) clock. */
double bench_sigs_verify_ns(struct bench_ctx *ctx, bool schnorr);
/** Wall nanoseconds per verification with the signatures split among
 *  `threads` threads at once (this one and threads - 1 more), best of three
 *  passes. On an idle machine with that many cores it is
 *  bench_sigs_verify_ns / threads; what it is instead shows how much two
 *  busy cores of this machine really give. */
double bench_sigs_verify_ns_parallel(struct bench_ctx *ctx, bool schnorr, unsigned threads);

#endif
