/**
 * base/alloc.h: the one allocation hook every module goes through.
 *
 * Every heap allocation in peerd calls xmalloc/xcalloc/xrealloc/xfree so that
 * benchmarks can count allocations per operation and tests can make the N-th
 * allocation fail. These functions return NULL on failure (they do not
 * abort): callers on a peer-facing path turn that into a clean error.
 *
 * Thread safety: all functions may be called from any thread. The counters
 * are relaxed atomics; the failure injector is meant for single-threaded
 * tests.
 */
#ifndef PEERD_BASE_ALLOC_H
#define PEERD_BASE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define BASE_WUR __attribute__((warn_unused_result))

/** malloc(n); NULL on failure or injected failure. n == 0 returns a valid pointer. */
BASE_WUR void *xmalloc(size_t n);
/** calloc(count, size) with overflow check; NULL on failure. */
BASE_WUR void *xcalloc(size_t count, size_t size);
/** realloc(p, n); on failure returns NULL and leaves p untouched. */
BASE_WUR void *xrealloc(void *p, size_t n);
/** realloc to count*size with an overflow check; NULL on overflow or failure. */
BASE_WUR void *xreallocarray(void *p, size_t count, size_t size);
/** strdup; NULL on failure. */
BASE_WUR char *xstrdup(const char *s);
/** free(p); p may be NULL. */
void xfree(void *p);

/** Number of successful allocations (malloc, calloc, growing realloc) so far, all threads. */
uint64_t base_alloc_count(void);

/**
 * Make the allocation after the next `n` succeed-able ones fail: with n = 0
 * the very next allocation fails. After one injected failure the injector
 * disarms itself. Pass -1 to disarm. Test-only.
 */
void base_alloc_fail_after(long n);

/** 1 if an injected failure happened since the last arm, else 0. Test-only. */
int base_alloc_injected(void);

/** Checked size arithmetic: 0 and *out = a*b, or -1 on overflow. */
static inline int base_mul_size(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/** Checked size arithmetic: 0 and *out = a+b, or -1 on overflow. */
static inline int base_add_size(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

#endif
