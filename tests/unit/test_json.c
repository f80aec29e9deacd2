/*
 * tests/unit/test_json.c: json/ — tagged numbers and how json_format
 * writes them, targets, and the field order of headers with and without
 * the chain's info. Whole transactions and blocks are compared with
 * Bitcoin Core's own output in tests/integration/test_interop_core.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "json/json.h"

/* json_format(v, JSON_COMPACT) equals want; takes v's reference. */
static void assert_text(json_t *v, const char *want)
{
	assert_non_null(v);
	char *s = json_format(v, JSON_COMPACT);
	json_decref(v);
	assert_non_null(s);
	if (strcmp(s, want))
		fail_msg("got  %s\nwant %s", s, want);
	xfree(s);
}

static void test_amounts(void **state)
{
	(void)state;
	assert_text(json_amount(0), "0.00000000");
	assert_text(json_amount(5000000000), "50.00000000");
	assert_text(json_amount(1), "0.00000001");
	assert_text(json_amount(-150000000), "-1.50000000");
	assert_text(json_amount(INT64_MIN), "-92233720368.54775808");
}

static void test_numbers(void **state)
{
	(void)state;
	assert_text(json_double(1.0), "1");
	assert_text(json_double(4.656542373906925e-10), "4.656542373906925e-10");
	assert_text(json_u64(UINT64_MAX), "18446744073709551615");
	assert_text(json_hex32(0x1d00ffff), "\"1d00ffff\"");
	assert_text(json_hex32(0x20000000), "\"20000000\"");
	uint8_t b[] = {0x00, 0xab, 0xff};
	assert_text(json_hex(b, sizeof(b)), "\"00abff\"");
	assert_text(json_hex(b, 0), "\"\"");
}

/* Only a whole string of number characters behind the tag becomes a number. */
static void test_format_tags(void **state)
{
	(void)state;
	json_t *o = json_object();
	json_object_set_new(o, "a", json_amount(1));
	json_object_set_new(o, "b", json_string("\x01num:1\"],\"x"));
	json_object_set_new(o, "c", json_string("\x01num:12 34"));
	json_object_set_new(o, "d", json_string("q\"\x01num:5"));
	assert_text(o, "{\"a\":0.00000001,\"b\":\"\\u0001num:1\\\"],\\\"x\","
	               "\"c\":\"\\u0001num:12 34\",\"d\":\"q\\\"\\u0001num:5\"}");
	/* Indented text (bitcoin-cli's shape) unwraps the same way. */
	json_t *a = json_array();
	json_array_append_new(a, json_amount(2100000000000000));
	char *s = json_format(a, JSON_INDENT(2));
	json_decref(a);
	assert_string_equal(s, "[\n  21000000.00000000\n]");
	xfree(s);
}

static void test_target(void **state)
{
	(void)state;
	assert_text(json_target(0x1d00ffff),
	            "\"00000000ffff0000000000000000000000000000000000000000000000000000\"");
	assert_text(json_target(0x207fffff),
	            "\"7fffff0000000000000000000000000000000000000000000000000000000000\"");
	/* the sign bit makes a compact target zero */
	assert_text(json_target(0x04923456),
	            "\"0000000000000000000000000000000000000000000000000000000000000000\"");
	assert_text(json_target(0x01003456),
	            "\"0000000000000000000000000000000000000000000000000000000000000000\"");
}

/* o's keys are exactly want[0..n), in that order (Core's field order). */
static void assert_keys(const json_t *o, const char *const *want, size_t n)
{
	size_t i = 0;
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)o, key, v)
	{
		(void)v;
		if (i >= n || strcmp(key, want[i]))
			fail_msg("key %zu: got \"%s\", want \"%s\"", i, key,
			         i < n ? want[i] : "(end)");
		i++;
	}
	if (i != n)
		fail_msg("%zu keys, want %zu (first missing \"%s\")", i, n, want[i]);
}

static const struct proto_block_header regtest_like = {
    .version = 0x20000000,
    .time = 1296688602,
    .bits = 0x207fffff,
    .nonce = 2,
};

/* A bare header: the decoder's fields, no nTx, no chain fields. */
static void test_header_bare(void **state)
{
	(void)state;
	struct proto_block_header h = regtest_like;
	json_t *o = json_block_header(&h, NULL);
	const char *want[] = {"hash", "version", "versionHex", "merkleroot",
	                      "time", "nonce",   "bits",       "difficulty"};
	assert_keys(o, want, sizeof(want) / sizeof(want[0]));
	assert_string_equal(json_string_value(json_object_get(o, "versionHex")), "20000000");
	json_decref(o);
	/* with a parent it names it */
	memset(h.prev.b, 0x11, sizeof(h.prev.b));
	o = json_block_header(&h, NULL);
	assert_non_null(json_object_get(o, "previousblockhash"));
	json_decref(o);
}

/* With the chain's info: getblockheader's fields in Core's order. */
static void test_header_info(void **state)
{
	(void)state;
	struct proto_block_header h = regtest_like;
	struct chain_work work = {0};
	struct proto_hash next;
	memset(h.prev.b, 0x11, sizeof(h.prev.b));
	memset(next.b, 0x22, sizeof(next.b));
	struct json_block_info info = {
	    .height = 7,
	    .confirmations = 3,
	    .mediantime = 1296688600,
	    .chainwork = &work,
	    .n_tx = 2,
	    .next = &next,
	};
	json_t *o = json_block_header(&h, &info);
	const char *want[] = {
	    "hash",         "confirmations", "height",     "version", "versionHex",
	    "merkleroot",   "time",          "mediantime", "nonce",   "bits",
	    "target",       "difficulty",    "chainwork",  "nTx",     "previousblockhash",
	    "nextblockhash"};
	assert_keys(o, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(json_integer_value(json_object_get(o, "nTx")), 2);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_amounts),     cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_format_tags), cmocka_unit_test(test_target),
	    cmocka_unit_test(test_header_bare), cmocka_unit_test(test_header_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
