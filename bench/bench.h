/**
 * bench/bench.h: the benchmark harness.
 *
 * A benchmark is a function that performs its operation `n` times:
 *
 *     BENCH(ReadVarInt1)
 *     {
 *             for (size_t i = 0; i < n; i++) ...;
 *     }
 *
 * The harness calibrates n so a run lasts about BENCH_TARGET_NS, then
 * prints one line: NAME NS_PER_OP ALLOCS_PER_OP OPS_PER_S. Allocations are
 * counted through base/alloc.h's hook, so only code that uses xmalloc shows.
 * Setup that should not be timed goes before bench_reset(ctx); setup that
 * is expensive and shared goes in a static initialiser guarded by a flag.
 * A benchmark may report extra metrics with bench_note() (printed after the
 * table as "NAME: text").
 */
#ifndef PEERD_BENCH_H
#define PEERD_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct bench_ctx;

typedef void (*bench_fn)(struct bench_ctx *ctx, size_t n);

/** Register a benchmark (done by BENCH at startup). */
void bench_register(const char *name, bench_fn fn, size_t fixed_n);

/** Restart the clock and allocation counter (after untimed setup). */
void bench_reset(struct bench_ctx *ctx);
/** Stop the clock (before untimed teardown). */
void bench_stop(struct bench_ctx *ctx);
/** Attach a line of extra output to this benchmark, printf-style. */
void bench_note(struct bench_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Mark the benchmark failed (wrong result): the harness exits non-zero. */
void bench_fail(struct bench_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Path of a file under the test data (VECTORS env, else the checkout's tests/data). */
const char *bench_vector(const char *rel);
/** Read a whole file into a new xmalloc'd buffer; exits on failure. */
uint8_t *bench_read_file(const char *path, size_t *len);
/** Nanoseconds on `clock`: CLOCK_MONOTONIC for wall time, a CPU-time clock for CPU. */
uint64_t bench_clock_ns(clockid_t clock);
/** Monotonic wall-clock nanoseconds. */
static inline uint64_t bench_now_ns(void)
{
	return bench_clock_ns(CLOCK_MONOTONIC);
}
/** qsort comparator for doubles, ascending (medians of timed samples). */
int bench_cmp_double(const void *a, const void *b);
/** Keep the compiler from discarding a computed value. */
#define bench_keep(x) __asm__ volatile("" : : "g"(x) : "memory")

#define BENCH(name) BENCH_N(name, 0)
/** A benchmark run with exactly fixed_n iterations (for slow, whole-system ones). */
#define BENCH_N(name, fixed_n)                                                                     \
	static void bench_##name(struct bench_ctx *ctx, size_t n);                                 \
	__attribute__((constructor)) static void bench_reg_##name(void)                            \
	{                                                                                          \
		bench_register(#name, bench_##name, (fixed_n));                                    \
	}                                                                                          \
	static void bench_##name(struct bench_ctx *ctx, size_t n)

#endif
