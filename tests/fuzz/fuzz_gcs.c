/*
 * tests/fuzz/fuzz_gcs.c: BIP158's Golomb-coded sets (index/gcs.c).
 *
 * The input is read two ways. As an encoded filter: index_gcs_check must
 * agree with a plain bit-at-a-time decoder written here (the fast reader's
 * 64-bit register against Core's one bit at a time: same verdict, same N),
 * and index_gcs_match must answer or refuse without reading past the end.
 * As elements (a length byte, then that many bytes, repeated): their set
 * encoded must pass the check with N = the distinct count, and every
 * element must match it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "index/index.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_gcs: invariant broken: %s\n", what);
		abort();
	}
}

/* Core's GCSFilter decode check, one bit at a time: 0 and N, or -1. */
static int plain_check(const uint8_t *f, size_t len, uint64_t *n_out)
{
	struct proto_reader r;
	uint64_t n;
	proto_reader_init(&r, f, len);
	if (proto_read_compact(&r, PROTO_MAX_SIZE, &n) || n > UINT32_MAX)
		return -1;
	size_t pos = proto_reader_offset(&r) * 8, end = len * 8;
	for (uint64_t i = 0; i < n; i++) {
		for (;;) {
			if (pos >= end)
				return -1;
			int bit = (f[pos / 8] >> (7 - pos % 8)) & 1;
			pos++;
			if (!bit)
				break;
		}
		if (end - pos < INDEX_BASIC_P)
			return -1;
		pos += INDEX_BASIC_P;
	}
	if ((pos + 7) / 8 != len)
		return -1;
	*n_out = n;
	return 0;
}

static int elem_cmp(const void *a, const void *b)
{
	const struct index_gcs_elem *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->len ? memcmp(x->p, y->p, x->len) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	/* An exact copy: ASan sees a read past its end. */
	uint8_t *f = xmalloc(size ? size : 1);
	if (!f)
		return 0;
	memcpy(f, data, size);
	uint32_t n = 0;
	uint64_t pn = 0;
	int fast = index_gcs_check(f, size, &n);
	int plain = plain_check(f, size, &pn);
	check(fast == INDEX_OK || fast == INDEX_ECORRUPT, "check's code");
	check((fast == INDEX_OK) == (plain == 0), "check disagrees with the plain decoder");
	check(fast != INDEX_OK || n == pn, "N differs");
	bool m;
	int mr = index_gcs_match(key, f, size, data, size > 8 ? 8 : size, &m);
	check(mr == INDEX_OK || mr == INDEX_ECORRUPT, "match's code");
	check(fast != INDEX_OK || mr == INDEX_OK, "a checked filter does not match");
	xfree(f);

	/* The input as elements. */
	struct index_gcs_elem *e = xcalloc(size + 1, sizeof(*e));
	if (!e)
		return 0;
	size_t k = 0;
	for (size_t off = 0; off < size;) {
		uint32_t l = data[off++] % 41u;
		if (l > size - off)
			l = (uint32_t)(size - off);
		e[k++] = (struct index_gcs_elem){data + off, l};
		off += l;
	}
	if (k > 1)
		qsort(e, k, sizeof(*e), elem_cmp);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (u == 0 || elem_cmp(&e[u - 1], &e[i]) != 0)
			e[u++] = e[i];
	struct proto_writer w;
	proto_writer_init(&w);
	if (index_gcs_encode(key, e, u, &w) == INDEX_OK && !w.err) {
		check(index_gcs_check(w.buf, w.len, &n) == INDEX_OK,
		      "an encoded set fails the check");
		check(n == u, "encoded N");
		for (size_t i = 0; i < u; i++) {
			check(index_gcs_match(key, w.buf, w.len, e[i].p, e[i].len, &m) == INDEX_OK,
			      "match on an encoded set");
			check(m, "an element of the set does not match");
		}
	}
	proto_writer_release(&w);
	xfree(e);
	return 0;
}
