/*
 * tests/unit/test_daemon_rest.c: the REST interface's parsers
 * (daemon/ctl/rest_parse.c) and its answers built from a scripted
 * dispatcher (daemon/ctl/rest.c, rest_utxos.c): Core's format suffixes,
 * counts and heights, getutxos' outpoints from the URI and from a body as
 * Core 29 reads it, a header's 80 bytes from getblockheader's fields, the
 * BIP64 answer, and out-of-memory at every allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/ctl/rest.h"
#include "tests/unit/testutil.h"

#define GENESIS "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
#define GENESIS_HEADER                                                                             \
	"0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b2" \
	"7ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4adae5494dffff7f2002000000"
#define TXID "aa00000000000000000000000000000000000000000000000000000000000011"

static void test_format(void **state)
{
	(void)state;
	size_t pl;
	assert_int_equal(rest_parse_format("abc.bin", 7, &pl), REST_BIN);
	assert_int_equal(pl, 3);
	assert_int_equal(rest_parse_format("abc.hex", 7, &pl), REST_HEX);
	assert_int_equal(rest_parse_format("a.b.json", 8, &pl), REST_JSON);
	assert_int_equal(pl, 3);
	/* An unknown suffix keeps the whole part; an empty one drops the dot. */
	assert_int_equal(rest_parse_format("abc.txt", 7, &pl), REST_UNDEF);
	assert_int_equal(pl, 7);
	assert_int_equal(rest_parse_format("abc.", 4, &pl), REST_UNDEF);
	assert_int_equal(pl, 3);
	assert_int_equal(rest_parse_format("abc", 3, &pl), REST_UNDEF);
	assert_int_equal(pl, 3);
	assert_int_equal(rest_parse_format("", 0, &pl), REST_UNDEF);
}

static void test_numbers(void **state)
{
	(void)state;
	uint64_t c;
	assert_true(rest_parse_count("2000", 2000, &c));
	assert_int_equal(c, 2000);
	assert_true(rest_parse_count("0005", 2000, &c));
	assert_false(rest_parse_count("2001", 2000, &c));
	assert_false(rest_parse_count("", 2000, &c));
	assert_false(rest_parse_count(" 1", 2000, &c));
	assert_false(rest_parse_count("+1", 2000, &c));
	assert_false(rest_parse_count("99999999999999999999999", 2000, &c));
	int32_t h;
	assert_true(rest_parse_int32("-0", 2, &h));
	assert_int_equal(h, 0);
	assert_true(rest_parse_int32("2147483647", 10, &h));
	assert_true(rest_parse_int32("-2147483648", 11, &h));
	assert_int_equal(h, INT32_MIN);
	assert_false(rest_parse_int32("2147483648", 10, &h));
	assert_false(rest_parse_int32("+1", 2, &h));
	assert_false(rest_parse_int32("-", 1, &h));
	assert_false(rest_parse_int32("", 0, &h));
	char out[32];
	rest_sanitize_uri("a<b>%20c\"", 9, out, sizeof(out));
	assert_string_equal(out, "ab%20c");
	assert_true(rest_is_hash(GENESIS, 64));
	assert_false(rest_is_hash(GENESIS, 63));
	char bad[65];
	memcpy(bad, GENESIS, sizeof(bad));
	bad[10] = 'g';
	assert_false(rest_is_hash(bad, 64));
}

static void test_outpoints_uri(void **state)
{
	(void)state;
	struct rest_outpoint v[REST_MAX_OUTPOINTS];
	size_t n;
	bool mp;
	const char *p = "/checkmempool/" TXID "-1/" TXID "-4294967295";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_OK);
	assert_true(mp);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].txid, TXID);
	assert_int_equal(v[1].n, 4294967295u);
	p = "/" TXID "-4294967296";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_ERROR);
	p = "/" TXID "-1-2";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_ERROR);
	p = "/" TXID "-";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_ERROR);
	p = "/checkmempool";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_EMPTY);
	/* "checkmempool" counts only first. */
	p = "/" TXID "-1/checkmempool";
	assert_int_equal(rest_parse_outpoints_uri(p, strlen(p), &mp, v, &n), REST_PARSE_ERROR);
	char many[17 * 70 + 1] = "";
	for (int i = 0; i < 17; i++)
		strcat(many, "/" TXID "-7");
	assert_int_equal(rest_parse_outpoints_uri(many, strlen(many), &mp, v, &n),
	                 REST_PARSE_TOO_MANY);
	assert_int_equal(n, 17);
}

static void test_outpoints_bin(void **state)
{
	(void)state;
	struct rest_outpoint v[REST_MAX_OUTPOINTS];
	size_t n;
	bool mp = false;
	uint8_t body[1 + 36 * 2] = {2};
	body[1] = 0x11; /* the txid's first wire byte is its last displayed one */
	body[32] = 0xaa;
	body[33] = 5;
	/* Core reads the length (73) as the flag, then the count from the body. */
	assert_int_equal(rest_parse_outpoints_bin(body, sizeof(body), &mp, v, &n), REST_PARSE_OK);
	assert_true(mp);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].txid, TXID);
	assert_int_equal(v[0].n, 5);
	/* BIP64's layout (flag, count) reads as a count of 0 ... */
	uint8_t bip64[2 + 36] = {0, 1};
	assert_int_equal(rest_parse_outpoints_bin(bip64, sizeof(bip64), &mp, v, &n), REST_PARSE_OK);
	assert_int_equal(n, 0);
	/* ... a count the body cannot hold is a parse error ... */
	body[0] = 3;
	assert_int_equal(rest_parse_outpoints_bin(body, sizeof(body), &mp, v, &n),
	                 REST_PARSE_ERROR);
	/* ... and past 252 bytes the length's 0xfd is the flag, its low byte the count tag. */
	uint8_t big[253];
	memset(big, 0, sizeof(big));
	assert_int_equal(rest_parse_outpoints_bin(big, sizeof(big), &mp, v, &n), REST_PARSE_ERROR);
	uint8_t one = 0;
	assert_int_equal(rest_parse_outpoints_bin(&one, 1, &mp, v, &n), REST_PARSE_OK);
	assert_int_equal(n, 0);
	uint8_t hexout[8];
	assert_int_equal(rest_parse_hex(" 0a\n0B ", 7, hexout), 2);
	assert_int_equal(hexout[1], 0x0b);
	assert_int_equal(rest_parse_hex("0a0", 3, hexout), 0);
	assert_int_equal(rest_parse_hex("zz", 2, hexout), 0);
}

/* ---- answers from a scripted dispatcher ---------------------------------- */

static const char *header_json =
    "{\"hash\":\"" GENESIS "\",\"confirmations\":1,\"height\":0,\"version\":1,"
    "\"versionHex\":\"00000001\",\"merkleroot\":"
    "\"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b\",\"time\":1296688602,"
    "\"mediantime\":1296688602,\"nonce\":2,\"bits\":\"207fffff\",\"target\":\"7f\","
    "\"difficulty\":4.656542373906925e-10,\"chainwork\":\"02\",\"nTx\":1}";

static int calls;

static char *reply(const char *text, size_t *out_len)
{
	char *r = xmalloc(strlen(text) + 1);
	if (r) {
		memcpy(r, text, strlen(text) + 1);
		*out_len = strlen(text);
	}
	return r;
}

static char *stub_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	(void)ctx;
	(void)len;
	calls++;
	char buf[2048];
	if (strstr(line, "\"getbestblockhash\""))
		return reply("{\"jsonrpc\":\"2.0\",\"result\":\"" GENESIS "\",\"id\":0}", out_len);
	if (strstr(line, "\"getblockheader\"")) {
		snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"result\":%s,\"id\":0}",
		         header_json);
		return reply(buf, out_len);
	}
	if (strstr(line, "\"getblockhash\""))
		return reply(
		    strstr(line, "[0]")
		        ? "{\"jsonrpc\":\"2.0\",\"result\":\"" GENESIS "\",\"id\":0}"
		        : "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-8,\"message\":\"Block "
		          "height out of range\"},\"id\":0}",
		    out_len);
	if (strstr(line, "\"gettxout\"")) {
		if (strstr(line, ", 1,") || strstr(line, ",1,"))
			return reply("{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":0}", out_len);
		/* Output 0 confirmed once; output 2 in the mempool. */
		int conf = strstr(line, ",2,") ? 0 : 1;
		snprintf(buf, sizeof(buf),
		         "{\"jsonrpc\":\"2.0\",\"result\":{\"bestblock\":\"" GENESIS
		         "\",\"confirmations\":%d,\"value\":50.00000001,\"scriptPubKey\":{\"asm\":"
		         "\"1\",\"desc\":\"raw(51)#x\",\"hex\":\"51\",\"type\":\"nonstandard\"},"
		         "\"coinbase\":true},\"id\":0}",
		         conf);
		return reply(buf, out_len);
	}
	if (strstr(line, "\"getblockchaininfo\""))
		return reply("{\"jsonrpc\":\"2.0\",\"result\":{\"chain\":\"regtest\"},\"id\":0}",
		             out_len);
	return reply("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-28,\"message\":\"Loading block "
	             "index...\"},\"id\":0}",
	             out_len);
}

static const char *no_query(void *qctx, const char *key)
{
	(void)qctx;
	(void)key;
	return NULL;
}

static int query_fn(void *qctx, const char *key, const char **value)
{
	*value = no_query(qctx, key);
	return 0;
}

static void ask(const char *path, const char *body, struct rest_answer *a)
{
	struct rest_request rq = {
	    .path = path, .query = query_fn, .body = body, .len = body ? strlen(body) : 0};
	rest_answer(&rq, stub_call, NULL, a);
}

static void expect(const char *path, const char *body, unsigned status, const char *want)
{
	struct rest_answer a;
	ask(path, body, &a);
	assert_int_equal(a.status, status);
	if (want) {
		assert_non_null(a.body);
		assert_int_equal(a.len, strlen(want));
		assert_memory_equal(a.body, want, a.len);
	}
	xfree(a.body);
}

static void test_answers(void **state)
{
	(void)state;
	expect("/rest/headers/" GENESIS ".hex", NULL, 200, GENESIS_HEADER "\n");
	char want[2048];
	snprintf(want, sizeof(want), "[%s]\n", header_json);
	expect("/rest/headers/" GENESIS ".json", NULL, 200, want);
	expect("/rest/headers/1/" GENESIS ".json", NULL, 200, want);
	expect("/rest/headers/0/" GENESIS ".json", NULL, 400,
	       "Header count is invalid or out of acceptable range (1-2000): 0\r\n");
	expect("/rest/blockhashbyheight/0.hex", NULL, 200, GENESIS "\n");
	expect("/rest/blockhashbyheight/0.json", NULL, 200, "{\"blockhash\":\"" GENESIS "\"}\n");
	expect("/rest/blockhashbyheight/5.json", NULL, 404, "Block height out of range\r\n");
	expect("/rest/blockhashbyheight/a<b.json", NULL, 400, "Invalid height: ab\r\n");
	expect("/rest/chaininfo.json", NULL, 200, "{\"chain\":\"regtest\"}\n");
	expect("/rest/chaininfo", NULL, 404, "output format not found (available: json)\r\n");
	/* A method the stub does not know answers -28: Core's warm-up 503. */
	expect("/rest/mempool/info.json", NULL, 503,
	       "Service temporarily unavailable: Loading block index...\r\n");
	expect("/rest/nothing", NULL, 404, NULL);
	expect("/rest/getutxos/" TXID "-0/" TXID "-1/" TXID "-2.json", NULL, 200,
	       "{\"chainHeight\":0,\"chaintipHash\":\"" GENESIS "\",\"bitmap\":\"101\",\"utxos\":["
	       "{\"height\":0,\"value\":50.00000001,\"scriptPubKey\":{\"asm\":\"1\",\"desc\":"
	       "\"raw(51)#x\",\"hex\":\"51\",\"type\":\"nonstandard\"}},{\"height\":2147483647,"
	       "\"value\":50.00000001,\"scriptPubKey\":{\"asm\":\"1\",\"desc\":\"raw(51)#x\","
	       "\"hex\":\"51\",\"type\":\"nonstandard\"}}]}\n");
	/* BIP64: height, tip (wire order), bitmap 0b101, two coins of 5,000,000,001 sat. */
	expect("/rest/getutxos/" TXID "-0/" TXID "-1/" TXID "-2.hex", NULL, 200,
	       "00000000"
	       "06226e46111a0b59caaf126043eb5bbf28c34f3a5e332a1fc7b2b73cf188910f"
	       "0105"
	       "02"
	       "00000000"
	       "00000000"
	       "01f2052a01000000"
	       "0151"
	       "00000000"
	       "ffffff7f"
	       "01f2052a01000000"
	       "0151\n");
	expect("/rest/getutxos/" TXID "-0.bin", "x", 400,
	       "Combination of URI scheme inputs and raw post data is not allowed\r\n");
	expect("/rest/getutxos.hex", "zz", 200,
	       "00000000"
	       "06226e46111a0b59caaf126043eb5bbf28c34f3a5e332a1fc7b2b73cf188910f"
	       "00"
	       "00\n");
}

static void test_answers_oom(void **state)
{
	(void)state;
	const char *paths[] = {"/rest/getutxos/" TXID "-0/" TXID "-1/" TXID "-2.json",
	                       "/rest/getutxos/" TXID "-0/" TXID "-2.bin",
	                       "/rest/headers/" GENESIS ".hex", "/rest/blockhashbyheight/0.bin",
	                       "/rest/block/zz.json"};
	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		for (long n = 0; n < 200; n++) {
			struct rest_answer a;
			base_alloc_fail_after(n);
			ask(paths[p], NULL, &a);
			bool injected = base_alloc_injected();
			base_alloc_fail_after(-1);
			if (!injected) {
				assert_true(a.status == 200 || a.status == 400);
				assert_non_null(a.body);
			}
			xfree(a.body);
		}
	}
}

/* ---- a block's bytes handed over out of band ------------------------------ */

/* What the scripted dispatcher hands over, and the buffer it handed last. */
static const uint8_t block_bytes[] = {0x01, 0x00, 0xab, 0xff, 0x10};
static const uint8_t *handed;

/* rest_bytes_fn: getblock 0 answers "" with the bytes, as ctl/inproc.c and
 * chain_methods.c's getblock do for an in-process caller; an unknown block
 * is the dispatcher's error, with bytes that must not leak. */
static char *stub_bytes(void *ctx, const char *line, size_t len, size_t *out_len, uint8_t **bytes,
                        size_t *n_bytes)
{
	*bytes = NULL;
	*n_bytes = 0;
	if (!strstr(line, "\"getblock\"") || strstr(line, ", 1]") || strstr(line, ", 3]"))
		return stub_call(ctx, line, len, out_len);
	calls++;
	uint8_t *p = xmalloc(sizeof(block_bytes));
	if (!p)
		return NULL;
	memcpy(p, block_bytes, sizeof(block_bytes));
	*bytes = p;
	*n_bytes = sizeof(block_bytes);
	handed = p;
	if (strstr(line, TXID))
		return reply("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-5,\"message\":\"Block not "
		             "found\"},\"id\":0}",
		             out_len);
	return reply("{\"jsonrpc\":\"2.0\",\"result\":\"\",\"id\":0}", out_len);
}

static void ask_bytes(const char *path, struct rest_answer *a)
{
	struct rest_request rq = {.call_bytes = stub_bytes, .path = path, .query = query_fn};
	handed = NULL;
	rest_answer(&rq, stub_call, NULL, a);
}

static void test_block_bytes(void **state)
{
	(void)state;
	struct rest_answer a;
	/* .bin: the very buffer the method read is the body, not a copy. */
	ask_bytes("/rest/block/" GENESIS ".bin", &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.type, REST_TYPE_BIN);
	assert_int_equal(a.len, sizeof(block_bytes));
	assert_memory_equal(a.body, block_bytes, a.len);
	assert_ptr_equal(a.body, handed);
	xfree(a.body);
	ask_bytes("/rest/block/notxdetails/" GENESIS ".bin", &a);
	assert_int_equal(a.status, 200);
	assert_ptr_equal(a.body, handed);
	xfree(a.body);
	/* .hex: the bytes as lower-case hex and Core's newline. */
	ask_bytes("/rest/block/" GENESIS ".hex", &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.type, REST_TYPE_TEXT);
	assert_int_equal(a.len, 11);
	assert_memory_equal(a.body, "0100abff10\n", 11);
	xfree(a.body);
	/* An error's bytes are dropped (ASan's leak check): Core's 404. */
	ask_bytes("/rest/block/" TXID ".bin", &a);
	assert_int_equal(a.status, 404);
	assert_memory_equal(a.body, TXID " not found\r\n", a.len);
	xfree(a.body);
	/* Without call_bytes the same answers come from the hex, as before. */
	expect("/rest/block/" GENESIS ".hex", NULL, 503,
	       "Service temporarily unavailable: Loading block index...\r\n");
	/* Out of memory anywhere: a 200 with the bytes, or a failure, never a leak. */
	for (long n = 0; n < 60; n++) {
		base_alloc_fail_after(n);
		ask_bytes(n % 2 ? "/rest/block/" GENESIS ".hex" : "/rest/block/" GENESIS ".bin",
		          &a);
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected)
			assert_int_equal(a.status, 200);
		xfree(a.body);
	}
}

int main(void)
{
	/* jansson allocates through the same hook, as in peerd (main.c). */
	json_set_alloc_funcs(xmalloc, xfree);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format),        cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_outpoints_uri), cmocka_unit_test(test_outpoints_bin),
	    cmocka_unit_test(test_answers),       cmocka_unit_test(test_answers_oom),
	    cmocka_unit_test(test_block_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
