/*
 * tests/fuzz/fuzz_rest.c: what a REST client may send (daemon/ctl/rest*.c):
 * the path, a query value and a body, against a dispatcher stub whose
 * replies are sane, malformed, errors, or missing (peerd stopping).
 *
 * Input: byte 0 picks the stub's behaviour; then the path up to the first
 * newline (prefixed with "/rest/" when it lacks it), the value every query
 * parameter has up to the next newline (none when that line is empty), the
 * rest the body. Invariants: every answer has a status Core's REST uses;
 * an error has Core's text/plain body ending in "\r\n"; a 404 without a
 * body only for a path no endpoint takes; a hex answer is hex and a
 * newline. Leaks are LeakSanitizer's.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/ctl/rest.h"

#define HASH "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_rest: %s\n", what);
		abort();
	}
}

static unsigned mode;

static char *dup_reply(const char *t, size_t *out_len)
{
	char *r = xstrdup(t);
	if (r)
		*out_len = strlen(r);
	return r;
}

static char *stub(void *ctx, const char *line, size_t len, size_t *out_len)
{
	(void)ctx;
	check(len == strlen(line) && !memchr(line, '\n', len), "a call is not one line");
	switch (mode % 6) {
	case 0: /* sane, by method */
		if (strstr(line, "\"getblockheader\""))
			return dup_reply(
			    "{\"jsonrpc\":\"2.0\",\"result\":{\"hash\":\"" HASH
			    "\",\"confirmations\":1,\"height\":0,\"version\":1,\"merkleroot\":"
			    "\"" HASH "\",\"time\":1,\"nonce\":2,\"bits\":\"207fffff\"},\"id\":0}",
			    out_len);
		if (strstr(line, "\"gettxout\""))
			return dup_reply(
			    "{\"jsonrpc\":\"2.0\",\"result\":{\"confirmations\":3,"
			    "\"value\":1.5,\"scriptPubKey\":{\"hex\":\"51\"}},\"id\":0}",
			    out_len);
		return dup_reply("{\"jsonrpc\":\"2.0\",\"result\":\"" HASH "\",\"id\":0}", out_len);
	case 1:
		return dup_reply("{\"jsonrpc\":\"2.0\",\"result\":\"0g1\",\"id\":0}", out_len);
	case 2:
		return dup_reply("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-28,\"message\":\"w\"},"
		                 "\"id\":0}",
		                 out_len);
	case 3:
		return dup_reply("garbage", out_len);
	case 4:
		return dup_reply("{\"jsonrpc\":\"2.0\",\"result\":{\"confirmations\":-1,\"value\":"
		                 "\"x\",\"scriptPubKey\":7},\"id\":0}",
		                 out_len);
	default:
		return NULL;
	}
}

static const char *qvalue;

static int query(void *qctx, const char *key, const char **value)
{
	(void)qctx;
	(void)key;
	*value = qvalue;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		json_set_alloc_funcs(xmalloc, xfree);
		ready = 1;
	}
	if (!size)
		return 0;
	mode = data[0];
	data++;
	size--;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t pl = nl ? (size_t)(nl - data) : size;
	const uint8_t *rest = nl ? nl + 1 : data + size;
	size_t rl = (size_t)(data + size - rest);
	const uint8_t *nl2 = memchr(rest, '\n', rl);
	size_t ql = nl2 ? (size_t)(nl2 - rest) : 0;
	const char *body = nl2 ? (const char *)nl2 + 1 : (const char *)rest;
	size_t bl = nl2 ? rl - ql - 1 : rl;
	char *path = xmalloc(pl + 7), *q = xmalloc(ql + 1);
	check(path && q, "out of memory");
	bool prefixed = pl >= 6 && memcmp(data, "/rest/", 6) == 0;
	snprintf(path, pl + 7, "%s%.*s", prefixed ? "" : "/rest/", (int)pl, (const char *)data);
	memcpy(q, rest, ql);
	q[ql] = 0;
	qvalue = ql ? q : NULL;
	struct rest_request rq = {.path = path, .query = query, .body = body, .len = bl};
	struct rest_answer a;
	rest_answer(&rq, stub, NULL, &a);
	check(a.status == 200 || a.status == 400 || a.status == 404 || a.status == 500 ||
	          a.status == 503,
	      "a status Core's REST does not use");
	if (!a.body) {
		check(a.status == 404 || a.status == 500, "no body with a status that has one");
		if (a.status == 404)
			check(!rest_match(path), "no body for a path an endpoint takes");
	} else if (a.status != 200) {
		check(a.len >= 2 && a.body[a.len - 2] == '\r' && a.body[a.len - 1] == '\n',
		      "an error without Core's \\r\\n");
		check(a.type && !strcmp(a.type, REST_TYPE_TEXT), "an error that is not text/plain");
	} else if (a.type && !strcmp(a.type, REST_TYPE_TEXT)) {
		check(a.len && a.body[a.len - 1] == '\n', "a hex answer without its newline");
		for (size_t i = 0; i + 1 < a.len; i++)
			check((a.body[i] >= '0' && a.body[i] <= '9') ||
			          (a.body[i] >= 'a' && a.body[i] <= 'f'),
			      "a hex answer that is not hex");
	}
	xfree(a.body);
	xfree(path);
	xfree(q);
	return 0;
}
