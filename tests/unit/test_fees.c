/*
 * tests/unit/test_fees.c: the fee estimator of fees/: its buckets, the
 * decay of each horizon, which transactions it tracks, an estimate from
 * a steady feerate, and fee_estimates.dat written, read back and refused
 * when damaged. The expectations are computed here from Core's constants,
 * not taken from the estimator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "fees/fees.h"

static char path[256];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_fees_%d.dat", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static struct fees_tx tx(uint32_t n, uint32_t height, int64_t fee, int64_t vsize)
{
	struct fees_tx t;
	memset(&t, 0, sizeof(t));
	memcpy(t.txid.b, &n, sizeof(n));
	t.txid.b[31] = 0x5a;
	t.fee = fee;
	t.vsize = vsize;
	t.height = height;
	t.valid_for_fees = true;
	return t;
}

/* The whole file, malloc'd. */
static uint8_t *slurp(size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t *b = malloc(1 << 20);
	*n = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

static uint32_t u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double dbl(const uint8_t *p)
{
	uint64_t v = (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32;
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

/* Core's bucket list: 1000 sat/kvB, x1.05 up to 1e7, then 1e99. */
static void test_buckets(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new();
	assert_non_null(f);
	assert_int_equal(fees_write(f, path), 0);
	size_t n;
	uint8_t *b = slurp(&n);
	assert_int_equal(u32(b), 149900);
	size_t want = 0;
	for (double x = 1000; x <= 1e7; x *= 1.05)
		want++;
	want++;
	assert_true(want < 253);
	assert_int_equal(b[20], want);
	assert_true(dbl(b + 21) == 1000.0);
	for (size_t i = 1; i + 1 < want; i++) {
		double r = dbl(b + 21 + 8 * i) / dbl(b + 21 + 8 * (i - 1));
		if (fabs(r - 1.05) > 1e-12)
			fail_msg("bucket %zu: ratio %.15g to the one below, expected 1.05", i, r);
	}
	assert_true(dbl(b + 21 + 8 * (want - 1)) == 1e99);
	assert_true(dbl(b + 21 + 8 * (want - 2)) <= 1e7);
	free(b);
	assert_int_equal(fees_max_target(f, FEES_SHORT), 12);
	assert_int_equal(fees_max_target(f, FEES_MEDIUM), 48);
	assert_int_equal(fees_max_target(f, FEES_LONG), 1008);
	fees_free(f);
}

/* One confirmed transaction, then k empty blocks: each horizon's count
 * is its decay to the k. */
static void test_decay(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new();
	fees_block(f, 100, NULL, 0);
	struct fees_tx t = tx(1, 100, 5000, 250); /* 20000 sat/kvB */
	fees_tx_added(f, &t);
	assert_int_equal(fees_tracked(f), 1);
	fees_block(f, 101, &t, 1);
	assert_int_equal(fees_tracked(f), 0);
	const int k = 37;
	for (int i = 0; i < k; i++)
		fees_block(f, 102 + (uint32_t)i, NULL, 0);
	assert_int_equal(fees_write(f, path), 0);
	size_t n;
	uint8_t *b = slurp(&n);
	size_t nb = b[20], off = 21 + 8 * nb;
	/* Written medium, short, long: decay, scale, feerate avg, tx count avg, conf, fail. */
	const double decays[] = {.9952, .962, .99931};
	const unsigned scales[] = {2, 1, 24}, periods[] = {24, 12, 42};
	for (int h = 0; h < 3; h++) {
		assert_true(dbl(b + off) == decays[h]);
		assert_int_equal(u32(b + off + 8), scales[h]);
		off += 12;
		assert_int_equal(b[off], nb);
		double fsum = 0, csum = 0;
		for (size_t i = 0; i < nb; i++)
			fsum += dbl(b + off + 1 + 8 * i);
		off += 1 + 8 * nb;
		for (size_t i = 0; i < nb; i++)
			csum += dbl(b + off + 1 + 8 * i);
		off += 1 + 8 * nb;
		double want = pow(decays[h], k);
		if (fabs(csum - want) > 1e-12 || fabs(fsum - 20000 * want) > 1e-6)
			fail_msg(
			    "horizon %d: count %.15g feerate sum %.15g, expected %.15g and %.15g",
			    h, csum, fsum, want, 20000 * want);
		assert_int_equal(b[off], periods[h]);
		off += 1 + periods[h] * (1 + 8 * nb);
		assert_int_equal(b[off], periods[h]);
		off += 1 + periods[h] * (1 + 8 * nb);
	}
	assert_int_equal(off, n);
	free(b);
	fees_free(f);
}

/* Core's rules: not tracked when not valid, or entered at another height
 * than the last block seen; a removal other than a block untracks. */
static void test_tracking_rules(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new();
	struct fees_tx t = tx(1, 0, 1000, 100);
	fees_block(f, 5, NULL, 0);
	t.height = 4;
	fees_tx_added(f, &t);
	assert_int_equal(fees_tracked(f), 0);
	t.height = 5;
	t.valid_for_fees = false;
	fees_tx_added(f, &t);
	assert_int_equal(fees_tracked(f), 0);
	t.valid_for_fees = true;
	fees_tx_added(f, &t);
	fees_tx_added(f, &t);
	assert_int_equal(fees_tracked(f), 1);
	fees_tx_removed(f, &t.txid);
	assert_int_equal(fees_tracked(f), 0);
	/* A block at or below the best seen is ignored (a reorg). */
	fees_block(f, 5, NULL, 0);
	assert_int_equal(fees_best_height(f), 5);
	fees_free(f);
}

/* Every block takes 10 transactions at 12345 sat/kvB that waited one
 * block: the estimate for any target is that feerate. */
static void test_steady_estimate(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new();
	uint32_t id = 0;
	int target = 0;
	assert_int_equal(fees_estimate_smart(f, 6, false, &target), 0);
	assert_int_equal(target, 0); /* nothing seen: no usable target */
	fees_block(f, 1, NULL, 0);
	for (uint32_t h = 1; h < 200; h++) {
		struct fees_tx txs[10];
		for (int i = 0; i < 10; i++) {
			txs[i] = tx(++id, h, 12345, 1000);
			fees_tx_added(f, &txs[i]);
		}
		fees_block(f, h + 1, txs, 10);
	}
	for (int t = 1; t <= 30; t++) {
		assert_int_equal(fees_estimate_smart(f, t, false, &target), 12345);
		assert_int_equal(fees_estimate_smart(f, t, true, &target), 12345);
	}
	struct fees_result r;
	assert_int_equal(fees_estimate_raw(f, 1, 0.95, FEES_SHORT, &r), 12345);
	assert_true(r.pass.end >= 12345 && r.pass.start < 12345);
	/* Below it, buckets with too little data: reported as the failed range. */
	assert_true(r.fail.end <= r.pass.start && r.fail.start == 0);
	fees_free(f);
}

/* Written, read into a fresh estimator and written again: the same bytes;
 * a damaged file is refused and changes nothing. */
static void test_file_round_trip(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new();
	uint32_t id = 0;
	fees_block(f, 1, NULL, 0);
	for (uint32_t h = 1; h < 60; h++) {
		struct fees_tx a = tx(++id, h, 1000 + 37 * h, 200), b = tx(++id, h, 90000, 150);
		fees_tx_added(f, &a);
		fees_tx_added(f, &b);
		fees_block(f, h + 1, &b, 1);
	}
	assert_int_equal(fees_write(f, path), 0);
	size_t n1, n2;
	uint8_t *one = slurp(&n1);
	struct fees_estimator *g = fees_new();
	assert_int_equal(fees_read(g, path), 0);
	assert_int_equal(fees_best_height(g), 60);
	assert_int_equal(fees_write(g, path), 0);
	uint8_t *two = slurp(&n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(one, two, n1);
	int t1, t2;
	assert_int_equal(fees_estimate_smart(f, 10, false, &t1),
	                 fees_estimate_smart(g, 10, false, &t2));

	/* Truncated: refused, g as it was. */
	FILE *fp = fopen(path, "wb");
	assert_int_equal(fwrite(one, 1, n1 / 2, fp), n1 / 2);
	fclose(fp);
	assert_int_equal(fees_read(g, path), FEES_ECORRUPT);
	assert_int_equal(fees_best_height(g), 60);
	/* A decay out of range: Core's text. */
	size_t nb = one[20];
	one[21 + 8 * nb + 7] = 0x40; /* the medium decay's top byte: 2.x */
	fp = fopen(path, "wb");
	assert_int_equal(fwrite(one, 1, n1, fp), n1);
	fclose(fp);
	assert_int_equal(fees_read(g, path), FEES_ECORRUPT);
	assert_string_equal(
	    fees_last_error(g),
	    "Corrupt estimates file. Decay must be between 0 and 1 (non-inclusive)");
	/* A newer version: Core's text. */
	one[0] = 0xff;
	one[1] = 0xff;
	one[2] = 0x0f;
	fp = fopen(path, "wb");
	assert_int_equal(fwrite(one, 1, n1, fp), n1);
	fclose(fp);
	assert_int_equal(fees_read(g, path), FEES_ECORRUPT);
	assert_string_equal(fees_last_error(g), "File version (1048575) too high to be read.");
	free(one);
	free(two);
	fees_free(f);
	fees_free(g);
}

/* A new estimator skips the decay while every average is 0 (blocks of an
 * initial block download): the same bytes as one that decayed its zeros
 * at every block (read from a file, it is not marked), through empty
 * blocks, then transactions confirmed and some left to fail. */
static void test_zero_decay_skipped_exactly(void **state)
{
	(void)state;
	struct fees_estimator *f = fees_new(), *g = fees_new();
	uint8_t *zero, *one, *two;
	size_t nz, n1, n2;
	assert_int_equal(fees_serialize(g, &zero, &nz), 0);
	assert_int_equal(fees_parse(g, zero, nz), 0);
	struct fees_estimator *both[] = {f, g};
	for (int k = 0; k < 2; k++) {
		struct fees_estimator *e = both[k];
		uint32_t id = 0;
		for (uint32_t h = 1; h <= 500; h++)
			fees_block(e, h, NULL, 0);
		for (uint32_t h = 500; h < 700; h++) {
			struct fees_tx a = tx(++id, h, 1000 + 37 * (h % 50), 200);
			struct fees_tx b = tx(++id, h, 90000, 150);
			fees_tx_added(e, &a);
			fees_tx_added(e, &b);
			fees_block(e, h + 1, &b, 1); /* a stays: it fails later */
		}
	}
	assert_int_equal(fees_serialize(f, &one, &n1), 0);
	assert_int_equal(fees_serialize(g, &two, &n2), 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(one, two, n1);
	xfree(zero);
	xfree(one);
	xfree(two);
	fees_free(f);
	fees_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_buckets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_decay, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tracking_rules, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_steady_estimate, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_file_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zero_decay_skipped_exactly, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
