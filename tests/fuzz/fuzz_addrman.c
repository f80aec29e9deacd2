/*
 * tests/fuzz/fuzz_addrman.c: peers.dat's reader (addrman_deserialize).
 *
 * Whatever loads must be consistent (Core's CheckAddrman), serialize,
 * load again into the same tables, and serialize to the same bytes; then
 * Select, GetAddr, Good and a collision round must keep it consistent.
 * A failure must be one of the documented codes with a message, and never
 * read past the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrman/addrman.h"
#include "base/alloc.h"

#define NOW INT64_C(1700000000)

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_addrman: invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrman *am = addrman_new(true, 0);
	if (!am)
		return 0;
	char err[ADDRMAN_ERRMSG_MAX];
	size_t used = 0;
	int r = addrman_deserialize(am, data, size, &used, err, sizeof(err));
	check(used <= size, "read past the input");
	if (r) {
		check(r == ADDRMAN_ECORRUPT || r == ADDRMAN_EVERSION || r == ADDRMAN_ENOMEM,
		      "undocumented error");
		check(r == ADDRMAN_ENOMEM || err[0] != 0, "an error without Core's message");
		addrman_free(am);
		return 0;
	}
	check(addrman_check(am) == 0, "loaded but inconsistent");

	uint8_t *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	check(addrman_serialize(am, &a, &alen) == 0, "does not serialize");
	struct addrman *again = addrman_new(true, 0);
	check(again != NULL, "out of memory");
	check(addrman_deserialize(again, a, alen, NULL, err, sizeof(err)) == 0,
	      "its own serialization does not load");
	check(addrman_size(again, -1, -1) == addrman_size(am, -1, -1), "size changed");
	check(addrman_serialize(again, &b, &blen) == 0, "does not serialize again");
	check(alen == blen && memcmp(a, b, alen) == 0, "serialization not stable");

	struct addrman_address out, *v = NULL;
	if (addrman_size(am, -1, -1)) {
		check(addrman_select(am, false, 0, NOW, &out, NULL), "nothing selected");
		(void)addrman_good(am, &out.svc, NOW);
		addrman_attempt(am, &out.svc, true, NOW);
	}
	long n = addrman_getaddr(am, 0, 23, -1, true, NOW, &v);
	check(n >= 0 || n == ADDRMAN_ENOMEM, "getaddr failed");
	xfree(v);
	addrman_resolve_collisions(am, NOW + 3600 * 5);
	check(addrman_check(am) == 0, "inconsistent after use");
	xfree(a);
	xfree(b);
	addrman_free(again);
	addrman_free(am);
	return 0;
}
