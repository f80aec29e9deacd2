/**
 * tests/unit/testutil.h: helpers shared by the cmocka unit tests.
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>.
 */
#ifndef PEERD_TESTUTIL_H
#define PEERD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/** Path of a file under the shared vectors (env VECTORS, else ../shared/vectors). */
const char *tu_vector(const char *rel);
/** Read a whole file (malloc'd, caller frees with free()); fails the test if missing. */
uint8_t *tu_read_file(const char *path, size_t *len);
/** Decode hex into a malloc'd buffer; fails the test on bad hex. */
uint8_t *tu_unhex(const char *hex, size_t *len);
/** Hex of bytes into a malloc'd NUL-terminated string. */
char *tu_hex(const uint8_t *data, size_t len);

/** Assert two byte ranges are equal, printing the first difference and both lengths. */
#define tu_assert_bytes_equal(a, alen, b, blen) tu_assert_bytes_equal_impl(a, alen, b, blen, __FILE__, __LINE__)
void tu_assert_bytes_equal_impl(const void *a, size_t alen, const void *b, size_t blen,
				const char *file, int line);

#endif
