/* base/alloc.c: counting, failure-injecting wrappers around the C allocator. */
#include "base/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t alloc_count;
/* -1: disarmed; otherwise the number of allocations still allowed to succeed. */
static _Atomic long fail_countdown = -1;
static _Atomic int fail_happened;

/* Returns 1 when this allocation must fail. Kept out of line of the fast
 * path: a disarmed injector costs one relaxed load. */
static int should_fail(void)
{
	long c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
	if (c < 0)
		return 0;
	if (c == 0) {
		atomic_store_explicit(&fail_countdown, -1, memory_order_relaxed);
		atomic_store_explicit(&fail_happened, 1, memory_order_relaxed);
		return 1;
	}
	atomic_store_explicit(&fail_countdown, c - 1, memory_order_relaxed);
	return 0;
}

static void counted(void)
{
	atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
}

void *xmalloc(size_t n)
{
	if (should_fail())
		return NULL;
	void *p = malloc(n ? n : 1);
	if (p)
		counted();
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	size_t total;
	if (base_mul_size(count, size, &total) || should_fail())
		return NULL;
	void *p = calloc(total ? total : 1, 1);
	if (p)
		counted();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	void *q = realloc(p, n ? n : 1);
	if (q)
		counted();
	return q;
}

void *xreallocarray(void *p, size_t count, size_t size)
{
	size_t total;
	if (base_mul_size(count, size, &total))
		return NULL;
	return xrealloc(p, total);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xmalloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

void xfree(void *p)
{
	free(p);
}

uint64_t base_alloc_count(void)
{
	return atomic_load_explicit(&alloc_count, memory_order_relaxed);
}

void base_alloc_fail_after(long n)
{
	atomic_store_explicit(&fail_happened, 0, memory_order_relaxed);
	atomic_store_explicit(&fail_countdown, n < 0 ? -1 : n, memory_order_relaxed);
}

int base_alloc_injected(void)
{
	return atomic_load_explicit(&fail_happened, memory_order_relaxed);
}
