/*
 * tests/unit/test_base_hset.c: the bounded rolling set (hset) and the
 * fingerprint map (hmap) of base/hset.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hset.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* Distinct, well-spread keys, as salted SipHash gives the daemon. */
static uint64_t key_of(uint64_t i)
{
	static const uint8_t salt[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	return proto_siphash(salt, &i, sizeof(i));
}

static void assert_contains(const struct hset *s, uint64_t key, bool want, uint64_t i)
{
	bool got = hset_contains(s, key);
	if (got != want)
		fail_msg("key #%llu: contains = %d, expected %d (count %zu)", (unsigned long long)i,
		         got, want, hset_count(s));
}

static void test_hset_insert_lookup(void **state)
{
	(void)state;
	struct hset s;
	hset_init(&s, 1000);
	for (uint64_t i = 0; i < 300; i++)
		assert_int_equal(hset_insert(&s, key_of(i)), 0);
	assert_int_equal(hset_count(&s), 300);
	for (uint64_t i = 0; i < 300; i++) {
		assert_contains(&s, key_of(i), true, i);
		/* A second insert reports the key as already there. */
		assert_int_equal(hset_insert(&s, key_of(i)), 1);
	}
	for (uint64_t i = 300; i < 600; i++)
		assert_contains(&s, key_of(i), false, i);
	assert_int_equal(hset_count(&s), 300);
	hset_release(&s);
	assert_int_equal(hset_count(&s), 0);
	assert_int_equal(hset_bytes(&s), 0);
	assert_contains(&s, key_of(1), false, 1);
	/* Released means empty and reusable. */
	assert_int_equal(hset_insert(&s, key_of(1)), 0);
	assert_contains(&s, key_of(1), true, 1);
	hset_release(&s);
}

static void test_hset_key_zero(void **state)
{
	(void)state;
	/* 0 marks an empty slot, so key 0 is stored as 1: documented as one
	 * more 2^-64 collision. It must still be found. */
	struct hset s;
	hset_init(&s, 100);
	assert_false(hset_contains(&s, 0));
	assert_int_equal(hset_insert(&s, 0), 0);
	assert_true(hset_contains(&s, 0));
	assert_true(hset_contains(&s, 1));
	assert_int_equal(hset_insert(&s, 1), 1);
	hset_release(&s);
}

/*
 * The documented policy: two generations of max/2 keys; the older one is
 * dropped whole when the current one is full. So at every moment the last
 * max/2 keys are remembered, the count never exceeds max, and a key is
 * forgotten exactly when its generation is recycled.
 */
static void test_hset_bound_and_eviction(void **state)
{
	(void)state;
	const uint32_t max = 100, half = max / 2;
	struct hset s;
	hset_init(&s, max);
	for (uint64_t n = 1; n <= 10 * max; n++) {
		assert_int_equal(hset_insert(&s, key_of(n)), 0);
		if (hset_count(&s) > max)
			fail_msg("after %llu inserts: count %zu > bound %u", (unsigned long long)n,
			         hset_count(&s), max);
		/* Key n went into generation g = (n-1)/half; generations g and
		 * g-1 are remembered, older ones are not. */
		uint64_t g = (n - 1) / half;
		uint64_t oldest = g >= 1 ? (g - 1) * half + 1 : 1;
		for (uint64_t k = n > 2 * max ? n - 2 * max : 1; k <= n; k++)
			assert_contains(&s, key_of(k), k >= oldest, k);
		if (n >= half)
			assert_true(hset_count(&s) >= half);
	}
	/* Tables stop growing: the generations hold at most half keys each. */
	size_t bytes = hset_bytes(&s);
	for (uint64_t n = 10 * max + 1; n <= 20 * max; n++)
		assert_int_equal(hset_insert(&s, key_of(n)), 0);
	assert_int_equal(hset_bytes(&s), bytes);
	assert_int_equal(bytes, 2 * 128 * sizeof(uint64_t));
	hset_release(&s);
}

static void test_hset_tiny_bound(void **state)
{
	(void)state;
	/* max below 2 still remembers the last key. */
	struct hset s;
	hset_init(&s, 1);
	for (uint64_t n = 1; n <= 50; n++) {
		assert_int_equal(hset_insert(&s, key_of(n)), 0);
		assert_contains(&s, key_of(n), true, n);
		assert_true(hset_count(&s) <= 2);
	}
	assert_contains(&s, key_of(1), false, 1);
	hset_release(&s);
}

static void test_hset_lazy_allocation(void **state)
{
	(void)state;
	uint64_t before = base_alloc_count();
	struct hset s;
	hset_init(&s, 50000);
	assert_false(hset_contains(&s, key_of(7)));
	assert_int_equal(hset_count(&s), 0);
	assert_int_equal(hset_bytes(&s), 0);
	assert_int_equal(base_alloc_count(), before);
	/* The first insert takes one small table, not one sized for 50,000. */
	assert_int_equal(hset_insert(&s, key_of(7)), 0);
	assert_int_equal(base_alloc_count(), before + 1);
	assert_int_equal(hset_bytes(&s), 64 * sizeof(uint64_t));
	hset_release(&s);
}

static void test_hset_oom(void **state)
{
	(void)state;
	struct hset s;
	hset_init(&s, 10000);
	/* The very first table cannot be had: the key is not remembered. */
	base_alloc_fail_after(0);
	assert_int_equal(hset_insert(&s, key_of(1)), -1);
	assert_int_equal(base_alloc_injected(), 1);
	assert_false(hset_contains(&s, key_of(1)));
	assert_int_equal(hset_count(&s), 0);
	assert_int_equal(hset_bytes(&s), 0);
	/* Fill the 64-slot table to its load limit, then fail the growth. */
	for (uint64_t i = 1; i <= 32; i++)
		assert_int_equal(hset_insert(&s, key_of(i)), 0);
	size_t bytes = hset_bytes(&s);
	base_alloc_fail_after(0);
	assert_int_equal(hset_insert(&s, key_of(33)), -1);
	assert_int_equal(base_alloc_injected(), 1);
	assert_false(hset_contains(&s, key_of(33)));
	assert_int_equal(hset_count(&s), 32);
	assert_int_equal(hset_bytes(&s), bytes);
	for (uint64_t i = 1; i <= 32; i++)
		assert_contains(&s, key_of(i), true, i);
	/* And it recovers. */
	assert_int_equal(hset_insert(&s, key_of(33)), 0);
	assert_true(hset_bytes(&s) > bytes);
	for (uint64_t i = 1; i <= 33; i++)
		assert_contains(&s, key_of(i), true, i);
	hset_release(&s);
}

/* Fingerprints as the daemon makes them: proto_siphash of the item with a salt. */
static uint64_t fp(const uint8_t salt[16], uint32_t item)
{
	uint8_t b[32];
	memset(b, 0xab, sizeof(b));
	proto_put_le32(b, item);
	return proto_siphash(salt, b, sizeof(b));
}

static void test_hset_salts(void **state)
{
	(void)state;
	uint8_t salt_a[16], salt_b[16];
	memset(salt_a, 0x11, sizeof(salt_a));
	memset(salt_b, 0x22, sizeof(salt_b));
	struct hset a, b;
	hset_init(&a, 1000);
	hset_init(&b, 1000);
	for (uint32_t i = 0; i < 200; i++) {
		assert_int_equal(hset_insert(&a, fp(salt_a, i)), 0);
		assert_int_equal(hset_insert(&b, fp(salt_b, i)), 0);
	}
	/* Same answers for members and non-members ... */
	for (uint32_t i = 0; i < 400; i++) {
		bool in_a = hset_contains(&a, fp(salt_a, i));
		bool in_b = hset_contains(&b, fp(salt_b, i));
		if (in_a != in_b || in_a != (i < 200))
			fail_msg("item %u: set a says %d, set b says %d, expected %d", i, in_a,
			         in_b, i < 200);
	}
	/* ... from different layouts: which slot an item lands in depends
	 * on the salt, so a peer cannot aim at a slot without knowing it. */
	const struct hset_gen *ga = &a.gen[a.cur], *gb = &b.gen[b.cur];
	assert_int_equal(ga->mask, gb->mask);
	unsigned same_slot = 0;
	for (uint32_t i = 0; i < 200; i++) {
		if ((fp(salt_a, i) & ga->mask) == (fp(salt_b, i) & gb->mask))
			same_slot++;
	}
	if (same_slot > 20)
		fail_msg("%u of 200 items share their home slot under both salts", same_slot);
	assert_memory_not_equal(ga->slots, gb->slots, ((size_t)ga->mask + 1) * sizeof(uint64_t));
	hset_release(&a);
	hset_release(&b);
}

/* ---- hmap ----------------------------------------------------------- */

static void test_hmap_put_get_del(void **state)
{
	(void)state;
	struct hmap m;
	uint32_t v = 0;
	uint64_t before = base_alloc_count();
	hmap_init(&m);
	assert_false(hmap_get(&m, 42, &v));
	assert_false(hmap_del(&m, 42));
	assert_int_equal(hmap_bytes(&m), 0);
	assert_int_equal(base_alloc_count(), before);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(hmap_put(&m, key_of(i), i * 3), 0);
	assert_int_equal(m.n, 1000);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_true(hmap_get(&m, key_of(i), &v));
		assert_int_equal(v, i * 3);
	}
	/* Replace keeps the count. */
	assert_int_equal(hmap_put(&m, key_of(5), 77), 0);
	assert_true(hmap_get(&m, key_of(5), &v));
	assert_int_equal(v, 77);
	assert_int_equal(m.n, 1000);
	for (uint32_t i = 0; i < 1000; i += 2)
		assert_true(hmap_del(&m, key_of(i)));
	assert_int_equal(m.n, 500);
	for (uint32_t i = 0; i < 1000; i++) {
		bool got = hmap_get(&m, key_of(i), &v);
		if (got != (i % 2 == 1))
			fail_msg("key %u: present %d after deleting the even ones", i, got);
		if (got && i != 5)
			assert_int_equal(v, i * 3);
	}
	assert_false(hmap_del(&m, key_of(0)));
	hmap_release(&m);
	assert_int_equal(hmap_bytes(&m), 0);
	assert_false(hmap_get(&m, key_of(1), &v));
}

/*
 * Backward-shift deletion on runs that wrap around the table's end: keys
 * built to share home slots near the last slot, deleted in every order
 * against a plain array as the model.
 */
static void test_hmap_collisions_wrap(void **state)
{
	(void)state;
	struct hmap m;
	hmap_init(&m);
	/* Grow to 64 slots with one key, then craft keys by home slot. */
	assert_int_equal(hmap_put(&m, 0x1000000000000001ull, 0), 0);
	assert_int_equal(hmap_del(&m, 0x1000000000000001ull), true);
	assert_int_equal(m.mask, 63);
	uint64_t keys[24];
	for (unsigned i = 0; i < 24; i++) {
		/* homes 60..63 and 0..1, several keys each, distinct high bits. */
		unsigned home = (60u + i % 6u) & 63u;
		keys[i] = ((uint64_t)(i + 1) << 32) | home;
	}
	for (unsigned round = 0; round < 50; round++) {
		bool present[24];
		for (unsigned i = 0; i < 24; i++) {
			assert_int_equal(hmap_put(&m, keys[i], i), 0);
			present[i] = true;
		}
		assert_int_equal(m.mask, 63); /* 24 keys fit in 64 slots */
		/* Delete in a pseudo-random order, checking everything each step. */
		unsigned order[24];
		for (unsigned i = 0; i < 24; i++)
			order[i] = i;
		uint32_t r = 2463534242u + round;
		for (unsigned i = 23; i > 0; i--) {
			r ^= r << 13;
			r ^= r >> 17;
			r ^= r << 5;
			unsigned j = r % (i + 1), tmp = order[i];
			order[i] = order[j];
			order[j] = tmp;
		}
		for (unsigned k = 0; k < 24; k++) {
			assert_true(hmap_del(&m, keys[order[k]]));
			present[order[k]] = false;
			for (unsigned i = 0; i < 24; i++) {
				uint32_t v = 99;
				bool got = hmap_get(&m, keys[i], &v);
				if (got != present[i] || (got && v != i))
					fail_msg("round %u step %u: key %u present %d (value %u), "
					         "expected %d (value %u)",
					         round, k, i, got, v, present[i], i);
			}
		}
		assert_int_equal(m.n, 0);
	}
	hmap_release(&m);
}

static void test_hmap_oom(void **state)
{
	(void)state;
	struct hmap m;
	uint32_t v;
	hmap_init(&m);
	/* Either of the two arrays failing leaves the map as it was. */
	for (long k = 0; k < 2; k++) {
		base_alloc_fail_after(k);
		assert_int_equal(hmap_put(&m, 7, 1), -1);
		assert_int_equal(base_alloc_injected(), 1);
		assert_int_equal(m.n, 0);
		assert_false(hmap_get(&m, 7, &v));
	}
	for (uint32_t i = 1; i <= 32; i++)
		assert_int_equal(hmap_put(&m, key_of(i), i), 0);
	size_t bytes = hmap_bytes(&m);
	for (long k = 0; k < 2; k++) {
		base_alloc_fail_after(k);
		assert_int_equal(hmap_put(&m, key_of(33), 33), -1);
		assert_int_equal(base_alloc_injected(), 1);
		assert_int_equal(hmap_bytes(&m), bytes);
		assert_int_equal(m.n, 32);
	}
	/* Replacing an existing key needs no memory. */
	base_alloc_fail_after(0);
	assert_int_equal(hmap_put(&m, key_of(3), 300), 0);
	base_alloc_fail_after(-1);
	for (uint32_t i = 1; i <= 32; i++) {
		assert_true(hmap_get(&m, key_of(i), &v));
		assert_int_equal(v, i == 3 ? 300 : i);
	}
	hmap_release(&m);
}

/* A long random mix of operations against a direct-indexed model. */
static void test_hmap_model(void **state)
{
	(void)state;
	enum { N_KEYS = 512, OPS = 200000 };
	struct hmap m;
	hmap_init(&m);
	int64_t model[N_KEYS];
	for (unsigned i = 0; i < N_KEYS; i++)
		model[i] = -1;
	uint32_t n = 0, r = 88172645u;
	for (unsigned op = 0; op < OPS; op++) {
		r ^= r << 13;
		r ^= r >> 17;
		r ^= r << 5;
		unsigned k = r % N_KEYS;
		/* Low 6 bits clash often: keys share home slots. */
		uint64_t key = ((uint64_t)k << 20) | (k % 7);
		uint32_t v;
		switch ((r >> 16) % 3) {
		case 0:
			assert_int_equal(hmap_put(&m, key, op), 0);
			if (model[k] < 0)
				n++;
			model[k] = op;
			break;
		case 1: {
			bool del = hmap_del(&m, key);
			if (del != (model[k] >= 0))
				fail_msg("op %u: del of key %u returned %d, model says %d", op, k,
				         del, model[k] >= 0);
			if (model[k] >= 0)
				n--;
			model[k] = -1;
			break;
		}
		default: {
			bool got = hmap_get(&m, key, &v);
			if (got != (model[k] >= 0) || (got && v != (uint32_t)model[k]))
				fail_msg("op %u: get key %u -> %d/%u, model %lld", op, k, got,
				         got ? v : 0, (long long)model[k]);
		}
		}
		assert_int_equal(m.n, n);
	}
	hmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hset_insert_lookup),
	    cmocka_unit_test(test_hset_key_zero),
	    cmocka_unit_test(test_hset_bound_and_eviction),
	    cmocka_unit_test(test_hset_tiny_bound),
	    cmocka_unit_test(test_hset_lazy_allocation),
	    cmocka_unit_test(test_hset_oom),
	    cmocka_unit_test(test_hset_salts),
	    cmocka_unit_test(test_hmap_put_get_del),
	    cmocka_unit_test(test_hmap_collisions_wrap),
	    cmocka_unit_test(test_hmap_oom),
	    cmocka_unit_test(test_hmap_model),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
