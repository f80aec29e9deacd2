/* bench/bench.c: calibrating runner and the fixed output table. */
#include "bench/bench.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"

/* The Makefile passes the checkout's tests/data as an absolute path. */
#ifndef PEERD_TESTDATA
#define PEERD_TESTDATA "tests/data"
#endif

#define BENCH_MAX       256
#define BENCH_TARGET_NS 300000000ull /* 0.3 s a measured run */
#define BENCH_NOTE_MAX  1024

struct bench_entry {
	const char *name;
	bench_fn fn;
	size_t fixed_n;
};

struct bench_ctx {
	uint64_t t0, t1;
	uint64_t a0, a1;
	int stopped;
	int failed;
	char note[BENCH_NOTE_MAX];
};

static struct bench_entry benches[BENCH_MAX];
static size_t n_benches;

void bench_register(const char *name, bench_fn fn, size_t fixed_n)
{
	if (n_benches == BENCH_MAX) {
		fprintf(stderr, "bench: too many benchmarks (max %d)\n", BENCH_MAX);
		exit(2);
	}
	benches[n_benches++] = (struct bench_entry){name, fn, fixed_n};
}

uint64_t bench_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_reset(struct bench_ctx *ctx)
{
	ctx->stopped = 0;
	ctx->a0 = base_alloc_count();
	ctx->t0 = bench_now_ns();
}

void bench_stop(struct bench_ctx *ctx)
{
	if (ctx->stopped)
		return;
	ctx->t1 = bench_now_ns();
	ctx->a1 = base_alloc_count();
	ctx->stopped = 1;
}

void bench_note(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->note, sizeof(ctx->note), fmt, ap);
	va_end(ap);
}

void bench_fail(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	ctx->failed = 1;
	fprintf(stderr, "bench: FAILED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *bench_vector(const char *rel)
{
	static char path[4096];
	const char *dir = getenv("VECTORS");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : PEERD_TESTDATA, rel);
	return path;
}

uint8_t *bench_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "bench: cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = xmalloc((size_t)sz);
	if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

static void run_once(const struct bench_entry *b, struct bench_ctx *ctx, size_t n)
{
	memset(ctx, 0, sizeof(*ctx));
	bench_reset(ctx);
	b->fn(ctx, n);
	bench_stop(ctx);
}

/* Grow n until one run takes long enough to time, then run once more at the
 * size that should last BENCH_TARGET_NS. */
static void run_bench(const struct bench_entry *b, struct bench_ctx *ctx, size_t *n_out)
{
	size_t n = b->fixed_n ? b->fixed_n : 1;
	run_once(b, ctx, n);
	if (!b->fixed_n) {
		while (ctx->t1 - ctx->t0 < BENCH_TARGET_NS / 10 && n < (1ull << 40) &&
		       !ctx->failed) {
			n *= 10;
			run_once(b, ctx, n);
		}
		uint64_t took = ctx->t1 - ctx->t0;
		if (took < BENCH_TARGET_NS && took > 0 && !ctx->failed) {
			n = (size_t)((double)n * BENCH_TARGET_NS / (double)took);
			run_once(b, ctx, n);
		}
	}
	*n_out = n;
}

int main(int argc, char **argv)
{
	regex_t re;
	int filter = argc > 1 && argv[1][0];
	if (filter && regcomp(&re, argv[1], REG_EXTENDED | REG_NOSUB)) {
		fprintf(stderr, "bench: bad regex '%s'\n", argv[1]);
		return 2;
	}
	char notes[BENCH_MAX][BENCH_NOTE_MAX + 64];
	size_t n_notes = 0;
	int failed = 0;
	printf("%-32s %14s %12s %14s\n", "name", "ns/op", "allocs/op", "ops/s");
	for (size_t i = 0; i < n_benches; i++) {
		const struct bench_entry *b = &benches[i];
		if (filter && regexec(&re, b->name, 0, NULL, 0))
			continue;
		struct bench_ctx ctx;
		size_t n;
		run_bench(b, &ctx, &n);
		double ns = (double)(ctx.t1 - ctx.t0) / (double)n;
		double allocs = (double)(ctx.a1 - ctx.a0) / (double)n;
		printf("%-32s %14.1f %12.2f %14.0f\n", b->name, ns, allocs, ns > 0 ? 1e9 / ns : 0);
		fflush(stdout);
		if (ctx.note[0])
			snprintf(notes[n_notes++], sizeof(notes[0]), "%s: %s", b->name, ctx.note);
		failed |= ctx.failed;
	}
	for (size_t i = 0; i < n_notes; i++)
		printf("%s\n", notes[i]);
	if (filter)
		regfree(&re);
	return failed ? 1 : 0;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}
