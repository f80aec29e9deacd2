/**
 * base/require.h: the two kinds of assertion.
 *
 * require(cond): an always-on, fatal check for a broken invariant inside
 * peerd itself. It prints the file, line and expression and aborts; it is
 * never used for input from a peer or a user.
 *
 * BASE_CHECK(cond): a "can't happen" that must not take the node down. It
 * logs once per call site to stderr, counts, and evaluates to the condition
 * so the caller can recover: `if (!BASE_CHECK(n <= cap)) return -EINVAL;`
 */
#ifndef PEERD_BASE_REQUIRE_H
#define PEERD_BASE_REQUIRE_H

#include <stdint.h>

__attribute__((noreturn)) void base_require_fail(const char *file, int line, const char *expr);
int base_check_fail(const char *file, int line, const char *expr);
/** Number of BASE_CHECK failures since start, all threads. */
uint64_t base_check_failures(void);

#define require(cond)                                                                              \
	do {                                                                                       \
		if (__builtin_expect(!(cond), 0))                                                  \
			base_require_fail(__FILE__, __LINE__, #cond);                              \
	} while (0)

#define BASE_CHECK(cond)                                                                           \
	(__builtin_expect(!!(cond), 1) ? 1 : base_check_fail(__FILE__, __LINE__, #cond))

#endif
