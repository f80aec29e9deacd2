/*
 * tests/fuzz/fuzz_fees_file.c: fee_estimates.dat's reader (fees/file.c,
 * fees_parse), a file Core or anyone may have written. The input is the
 * file. Whatever it is: no crash, and a refused file changes nothing;
 * when it is accepted, every estimate can be asked of it, and what was
 * read serializes to bytes that parse again and serialize the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "fees/fees.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_fees_file: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fees_estimator *f = fees_new(), *g = fees_new();
	uint8_t *one = NULL, *two = NULL;
	size_t n1 = 0, n2 = 0;
	if (!f || !g)
		goto out;
	uint8_t *fresh = NULL;
	size_t nf = 0;
	check(fees_serialize(f, &fresh, &nf) == 0, "a fresh estimator does not serialize");
	if (fees_parse(f, data, size) != 0) {
		/* Refused: the estimator is as it was. */
		check(fees_serialize(f, &one, &n1) == 0, "serialize after a refusal");
		check(n1 == nf && memcmp(one, fresh, nf) == 0,
		      "a refused file changed the estimates");
		xfree(fresh);
		goto out;
	}
	xfree(fresh);
	int t;
	static const int targets[] = {1, 2, 13, 48, 49, FEES_MAX_TARGET};
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		int target = targets[i];
		(void)fees_estimate_smart(f, target, false, &t);
		(void)fees_estimate_smart(f, target, true, &t);
		for (int h = 0; h < FEES_N_HORIZONS; h++) {
			struct fees_result r;
			(void)fees_estimate_raw(f, target, 0.85, (enum fees_horizon)h, &r);
		}
	}
	struct fees_tx tx = {
	    .fee = 1000, .vsize = 100, .height = fees_best_height(f), .valid_for_fees = true};
	fees_tx_added(f, &tx);
	fees_block(f, fees_best_height(f) + 1, &tx, 1);
	check(fees_serialize(f, &one, &n1) == 0, "what was read does not serialize");
	check(fees_parse(g, one, n1) == 0, "the serialized file is refused");
	check(fees_serialize(g, &two, &n2) == 0, "serialize again");
	check(n1 == n2 && memcmp(one, two, n1) == 0, "read and written again differs");
out:
	xfree(one);
	xfree(two);
	fees_free(f);
	fees_free(g);
	return 0;
}
