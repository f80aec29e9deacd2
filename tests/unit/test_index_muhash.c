/*
 * tests/unit/test_index_muhash.c: MuHash3072 (index/muhash.c) against
 * Bitcoin Core's muhash_tests (src/test/crypto_tests.cpp): the
 * FromInt(0) * FromInt(1) / FromInt(2) vector both as set operations and
 * as Insert/Remove, the serialization of FromInt(1) * FromInt(2), a
 * numerator over the modulus, and Core's randomized checks that the order
 * of inserts and removes never matters and X*Y / (Y*X) is the empty set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "tests/unit/testutil.h"

/* Core's FromInt(i): a set holding the 32 bytes {i, 0, ..., 0}. */
static struct index_muhash *from_int(unsigned i)
{
	uint8_t tmp[32] = {(uint8_t)i};
	struct index_muhash *m = index_muhash_new();
	assert_non_null(m);
	index_muhash_insert(m, tmp, sizeof(tmp));
	return m;
}

/* Hex of 32 bytes as Core's uint256 GetHex (reversed) or HexStr (as is). */
static void hex32(const uint8_t b[32], bool reversed, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", b[reversed ? 31 - i : i]);
}

static const char *const want_010 =
    "10d312b100cbd32ada024a6646e40d3482fcff103668d2625f10002a607d5863";

static void test_core_vector_sets(void **state)
{
	(void)state;
	struct index_muhash *acc = from_int(0), *one = from_int(1), *two = from_int(2);
	index_muhash_mul(acc, one);
	index_muhash_div(acc, two);
	uint8_t out[32];
	char hex[65];
	index_muhash_finalize(acc, out);
	hex32(out, true, hex);
	assert_string_equal(hex, want_010);
	/* Finalize leaves the object usable and equal to itself. */
	index_muhash_finalize(acc, out);
	hex32(out, true, hex);
	assert_string_equal(hex, want_010);
	index_muhash_free(acc);
	index_muhash_free(one);
	index_muhash_free(two);
}

static void test_core_vector_insert_remove(void **state)
{
	(void)state;
	struct index_muhash *acc = from_int(0);
	uint8_t tmp[32] = {1}, tmp2[32] = {2};
	index_muhash_insert(acc, tmp, sizeof(tmp));
	index_muhash_remove(acc, tmp2, sizeof(tmp2));
	uint8_t out[32];
	char hex[65];
	index_muhash_finalize(acc, out);
	hex32(out, true, hex);
	assert_string_equal(hex, want_010);
	/* Saved and loaded, the state hashes the same. */
	uint8_t saved[INDEX_MUHASH_BYTES];
	index_muhash_save(acc, saved);
	struct index_muhash *back = index_muhash_new();
	index_muhash_load(back, saved);
	index_muhash_finalize(back, out);
	hex32(out, true, hex);
	assert_string_equal(hex, want_010);
	index_muhash_free(back);
	index_muhash_free(acc);
}

/* Core's ser_exp: FromInt(1) *= FromInt(2), numerator then denominator (1). */
static const char *const ser_num =
    "1fa093295ea30a6a3acdc7b3f770fa538eff537528e990e2910e40bbcfd7f6696b1256901929094694b56316de342f"
    "593303"
    "dd12ac43e06dce1be1ff8301c845beb15468fff0ef002dbf80c29f26e6452bccc91b5cb9437ad410d2a67ea847887f"
    "a3c6"
    "a6553309946880fe20db2c73fe0641adbd4e86edfee0d9f8cd0ee1230898873dc13ed8ddcaf045c80faa0827742790"
    "07a2"
    "253f8922ee3ef361d378a6af3ddaf180b190ac97e556888c36b3d1fb1c85aab9ccd46e3deaeb7b7cf5db067a7e9ff8"
    "6b65"
    "8cf3acd6662bbcce37232daa753c48b794356c020090c831a8304416e2aa7ad633c0ddb2f11be1be316a81be7f7e47"
    "2071"
    "c042cb68faef549c221ebff209273638b741aba5a81675c45a5fa92fea4ca821d7a324cb1e1a2ccd3b76c4228ec806"
    "6dad"
    "2a5df6e1bd0de45c7dd5de8070bdb46db6c554cf9aefc9b7b2bbf9f75b1864d9f95005314593905c0109b71f703d49"
    "944a"
    "e94477b51dac10a816bb6d1c700bafabc8bd86fac8df24be519a2f2836b16392e18036cb13e48c5c";

static void test_core_serialization(void **state)
{
	(void)state;
	struct index_muhash *m = from_int(1), *two = from_int(2);
	index_muhash_mul(m, two);
	uint8_t ser[2 * INDEX_MUHASH_BYTES];
	index_muhash_serialize(m, ser);
	char *hex = malloc(2 * sizeof(ser) + 1);
	assert_non_null(hex);
	for (size_t i = 0; i < sizeof(ser); i++)
		snprintf(hex + 2 * i, 3, "%02x", ser[i]);
	assert_int_equal(strlen(ser_num), 2 * INDEX_MUHASH_BYTES);
	assert_memory_equal(hex, ser_num, 2 * INDEX_MUHASH_BYTES);
	/* The denominator: one, then zeros. */
	assert_int_equal(ser[INDEX_MUHASH_BYTES], 1);
	for (size_t i = INDEX_MUHASH_BYTES + 1; i < sizeof(ser); i++)
		assert_int_equal(ser[i], 0);
	/* Deserialized, it finalizes as the original. */
	struct index_muhash *back = index_muhash_new();
	index_muhash_deserialize(back, ser);
	uint8_t a[32], b[32];
	index_muhash_finalize(m, a);
	index_muhash_finalize(back, b);
	assert_memory_equal(a, b, 32);
	free(hex);
	index_muhash_free(back);
	index_muhash_free(two);
	index_muhash_free(m);
}

/* Core's ss_max: a numerator of 384 0xff bytes (over the modulus) over one. */
static void test_core_overflow(void **state)
{
	(void)state;
	uint8_t ser[2 * INDEX_MUHASH_BYTES] = {0};
	memset(ser, 0xff, INDEX_MUHASH_BYTES);
	ser[INDEX_MUHASH_BYTES] = 1;
	struct index_muhash *m = index_muhash_new();
	index_muhash_deserialize(m, ser);
	uint8_t out[32];
	char hex[65];
	index_muhash_finalize(m, out);
	hex32(out, false, hex);
	assert_string_equal(hex,
	                    "3a31e6903aff0de9f62f9a9f7f8b861de76ce2cda09822b90014319ae5dc2271");
	index_muhash_free(m);
}

/* Core's loop: four random operations in four orders hash the same, and
 * z = X * Y / (Y * X) is the empty set. */
static void test_order_and_cancel(void **state)
{
	(void)state;
	srand(25);
	for (int iter = 0; iter < 10; iter++) {
		int table[4];
		for (int i = 0; i < 4; i++)
			table[i] = rand() & 7;
		uint8_t res[32], out[32];
		for (int order = 0; order < 4; order++) {
			struct index_muhash *acc = index_muhash_new();
			for (int i = 0; i < 4; i++) {
				int t = table[i ^ order];
				struct index_muhash *e = from_int((unsigned)(t & 3));
				if (t & 4)
					index_muhash_div(acc, e);
				else
					index_muhash_mul(acc, e);
				index_muhash_free(e);
			}
			index_muhash_finalize(acc, order ? out : res);
			if (order)
				assert_memory_equal(res, out, 32);
			index_muhash_free(acc);
		}
		struct index_muhash *x = from_int((unsigned)(rand() & 15));
		struct index_muhash *y = from_int((unsigned)(rand() & 15));
		struct index_muhash *z = index_muhash_new(), *empty = index_muhash_new();
		index_muhash_mul(z, x);
		index_muhash_mul(z, y);
		index_muhash_mul(y, x);
		index_muhash_div(z, y);
		index_muhash_finalize(z, out);
		index_muhash_finalize(empty, res);
		assert_memory_equal(out, res, 32);
		index_muhash_free(x);
		index_muhash_free(y);
		index_muhash_free(z);
		index_muhash_free(empty);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_vector_sets),
	    cmocka_unit_test(test_core_vector_insert_remove),
	    cmocka_unit_test(test_core_serialization),
	    cmocka_unit_test(test_core_overflow),
	    cmocka_unit_test(test_order_and_cancel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
