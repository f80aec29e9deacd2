/* tests/unit/testutil.c: file, hex, scratch-directory and comparison helpers for unit tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* The Makefile passes the checkout's tests/data as an absolute path. */
#ifndef PEERD_TESTDATA
#define PEERD_TESTDATA "tests/data"
#endif

const char *tu_vector(const char *rel)
{
	static char path[4096];
	const char *dir = getenv("VECTORS");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : PEERD_TESTDATA, rel);
	return path;
}

void tu_tmpdir(char dir[TU_TMPDIR_MAX], const char *tag)
{
	int n = snprintf(dir, TU_TMPDIR_MAX, "/tmp/peerd-%s-XXXXXX", tag);
	if (n < 0 || n >= TU_TMPDIR_MAX)
		fail_msg("tu_tmpdir: tag '%s' too long", tag);
	if (!mkdtemp(dir))
		fail_msg("mkdtemp %s failed", dir);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rmtree(const char *dir)
{
	/* Depth first, so each directory is empty by the time it is removed. */
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (test data: tests/data, or set VECTORS)", path);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(sz > 0 ? (size_t)sz : 1);
	assert_non_null(buf);
	if (fread(buf, 1, (size_t)sz, f) != (size_t)sz)
		fail_msg("short read of %s", path);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

uint8_t *tu_unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex);
	if (n % 2)
		fail_msg("odd-length hex: %s", hex);
	uint8_t *out = malloc(n / 2 + 1);
	assert_non_null(out);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = proto_hex_digit(hex[2 * i]), lo = proto_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			fail_msg("bad hex at %zu: %s", 2 * i, hex);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return out;
}

char *tu_hex(const uint8_t *data, size_t len)
{
	char *s = malloc(2 * len + 1);
	assert_non_null(s);
	proto_hex_encode(data, len, s);
	return s;
}

void tu_assert_bytes_equal_impl(const void *a, size_t alen, const void *b, size_t blen,
                                const char *file, int line)
{
	const uint8_t *x = a, *y = b;
	size_t n = alen < blen ? alen : blen;
	for (size_t i = 0; i < n; i++) {
		if (x[i] != y[i])
			fail_msg("%s:%d: bytes differ at offset %zu: 0x%02x != 0x%02x (lengths "
			         "%zu, %zu)",
			         file, line, i, x[i], y[i], alen, blen);
	}
	if (alen != blen)
		fail_msg("%s:%d: lengths differ: %zu != %zu (common prefix equal)", file, line,
		         alen, blen);
}

void tu_assert_err_impl(int got, int want, const char *what, const char *file, int line)
{
	if (got != want)
		fail_msg("%s:%d: %s: error %d (%s) != expected %d (%s)", file, line, what, got,
		         proto_errname(got), want, proto_errname(want));
}

void tu_assert_hash_hex_impl(const struct proto_hash *h, const char *want, const char *file,
                             int line)
{
	char hex[65];
	proto_hash_to_hex(h, hex);
	if (strcmp(hex, want) != 0)
		fail_msg("%s:%d: hash %s != expected %s", file, line, hex, want);
}
