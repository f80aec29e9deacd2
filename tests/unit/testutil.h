/**
 * tests/unit/testutil.h: helpers shared by the cmocka unit tests.
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>.
 */
#ifndef PEERD_TESTUTIL_H
#define PEERD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/** Path of a file under the test data (env VECTORS, else the checkout's tests/data). */
const char *tu_vector(const char *rel);
/** Read a whole file (malloc'd, caller frees with free()); fails the test if missing. */
uint8_t *tu_read_file(const char *path, size_t *len);
/** Decode hex into a malloc'd buffer; fails the test on bad hex. */
uint8_t *tu_unhex(const char *hex, size_t *len);
/** Hex of bytes into a malloc'd NUL-terminated string. */
char *tu_hex(const uint8_t *data, size_t len);

/** Room for a tu_tmpdir path. */
#define TU_TMPDIR_MAX 64
/** Create a fresh directory /tmp/peerd-<tag>-XXXXXX and write its path to dir; fails the test. */
void tu_tmpdir(char dir[TU_TMPDIR_MAX], const char *tag);
/** Remove dir and everything below it (symbolic links are removed, not followed). */
void tu_rmtree(const char *dir);

struct proto_hash;

/** Assert a proto/ error code, naming both codes, the expression and the line. */
#define tu_assert_err(got, want) tu_assert_err_impl((got), (want), #got, __FILE__, __LINE__)
void tu_assert_err_impl(int got, int want, const char *what, const char *file, int line);
/** Assert a hash, shown in display (reversed) hex order, equals `want`. */
#define tu_assert_hash_hex(h, want) tu_assert_hash_hex_impl((h), (want), __FILE__, __LINE__)
void tu_assert_hash_hex_impl(const struct proto_hash *h, const char *want, const char *file,
                             int line);

/** Assert a script/ error code, naming both (want first; needs script/script.h). */
#define tu_expect_script_err(want, got)                                                            \
	do {                                                                                       \
		int w_ = (want), g_ = (got);                                                       \
		if (w_ != g_)                                                                      \
			fail_msg("%s:%d: expected %s, got %s", __FILE__, __LINE__,                 \
			         script_error_name(w_), script_error_name(g_));                    \
	} while (0)

/** Assert two byte ranges are equal, printing the first difference and both lengths. */
#define tu_assert_bytes_equal(a, alen, b, blen)                                                    \
	tu_assert_bytes_equal_impl(a, alen, b, blen, __FILE__, __LINE__)
void tu_assert_bytes_equal_impl(const void *a, size_t alen, const void *b, size_t blen,
                                const char *file, int line);

#endif
