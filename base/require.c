/* base/require.c: failure paths of require() and BASE_CHECK(). */
#include "base/require.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic uint64_t check_failures;

void base_require_fail(const char *file, int line, const char *expr)
{
	fprintf(stderr, "peerd: internal error: %s:%d: requirement failed: %s\n", file, line, expr);
	abort();
}

int base_check_fail(const char *file, int line, const char *expr)
{
	atomic_fetch_add_explicit(&check_failures, 1, memory_order_relaxed);
	fprintf(stderr, "peerd: internal check failed (recovered): %s:%d: %s\n", file, line, expr);
	return 0;
}

uint64_t base_check_failures(void)
{
	return atomic_load_explicit(&check_failures, memory_order_relaxed);
}
