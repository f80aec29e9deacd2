/*
 * tests/fuzz/fuzz_rpc_http.c: what an HTTP JSON-RPC client may send once
 * the headers are read: the Authorization header (daemon/ctl/rpc_auth.c)
 * and the body (daemon/ctl/rpc_jsonrpc.c), against a dispatcher stub.
 *
 * Input: byte 0 picks the stub's reply for every call (a result, a
 * result whose text is not JSON, an error object, garbage, or none: peerd
 * stopping); then up to the first newline an Authorization header value,
 * the rest the body. Credentials: the cookie-less rpcuser "u"/"p" and one
 * rpcauth line. Invariants: only "Basic dTpw" (u:p) and alice's password
 * log in; every answer has a status Core uses, a body exactly when the
 * status is not 204, and a body that ends in a newline. A body that is
 * not a batch answered in two halves, parsed once (rpc_jsonrpc_begin and
 * rpc_jsonrpc_finish, as the loop does), gets the same answer to the
 * byte. Leaks are LeakSanitizer's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/ctl/rpc.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_rpc_http: %s\n", what);
		abort();
	}
}

static const char *const replies[] = {
    "{\"jsonrpc\":\"2.0\",\"result\":[1,2.50000000,\"x\"],\"id\":0}",
    "{\"jsonrpc\":\"2.0\",\"result\":not json at all,\"id\":0}",
    "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-8,\"message\":\"bad\"},\"id\":0}",
    "garbage",
    "{\"jsonrpc\":\"2.0\",\"error\":5,\"id\":0}",
    NULL,
};
static const char *reply;

static char *stub(void *ctx, const char *line, size_t len, size_t *out_len)
{
	(void)ctx;
	check(len == strlen(line) && !memchr(line, '\n', len), "a call is not one line");
	if (!reply)
		return NULL;
	char *r = xstrdup(reply);
	if (r)
		*out_len = strlen(r);
	return r;
}

static struct rpc_auth auth;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		struct peerd_conf c;
		char err[256];
		conf_defaults(&c);
		snprintf(c.rpcuser, sizeof(c.rpcuser), "u");
		snprintf(c.rpcpassword, sizeof(c.rpcpassword), "p");
		c.rpcauth.v[c.rpcauth.n++] =
		    xstrdup("alice:0123456789abcdef$"
		            "a064405a0f460b3fc88b4e8774521f9c87844a246b372501d8eb9cf2c87c29e7");
		check(rpc_auth_init(&auth, &c, err, sizeof(err)) == 0, "rpc_auth_init");
		conf_release(&c);
		ready = 1;
	}
	if (!size)
		return 0;
	reply = replies[data[0] % (sizeof(replies) / sizeof(replies[0]))];
	data++;
	size--;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t hl = nl ? (size_t)(nl - data) : size;
	char *header = xmalloc(hl + 1);
	check(header != NULL, "out of memory");
	memcpy(header, data, hl);
	header[hl] = 0;
	bool ok = rpc_auth_check(&auth, header);
	if (ok && strlen(header) == hl) {
		/* Only the two passwords open it. */
		check(strstr(header, "dTpw") || strstr(header, "YWxpY2U6d29uZGVybGFuZA"),
		      "a wrong password was let in");
	}
	xfree(header);
	const char *body = nl ? (const char *)nl + 1 : "";
	size_t bl = nl ? size - hl - 1 : 0;
	struct rpc_answer a;
	rpc_jsonrpc_answer(body, bl, stub, NULL, &a);
	check(a.status == 200 || a.status == 204 || a.status == 400 || a.status == 404 ||
	          a.status == 500,
	      "a status Core does not use");
	check((a.status == 204) == (a.body == NULL), "a body with 204 or none without");
	if (a.body)
		check(a.len && a.body[a.len - 1] == '\n' && strlen(a.body) == a.len,
		      "a body that is not one line of text");
	size_t i = 0;
	while (i < bl && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i == bl || body[i] != '[') {
		struct rpc_answer b;
		struct rpc_jsonrpc_call *pc = NULL;
		rpc_jsonrpc_begin(body, bl, NULL, NULL, &b, &pc);
		if (pc) {
			size_t ll = 0;
			const char *line = rpc_jsonrpc_call_line(pc, &ll);
			check(ll == strlen(line) && !memchr(line, '\n', ll),
			      "a call is not one line");
			char *r = reply ? xstrdup(reply) : NULL;
			rpc_jsonrpc_finish(pc, r, r ? strlen(r) : 0, &b);
		}
		check(b.status == a.status && b.len == a.len &&
		          (!a.body ? !b.body : b.body && !memcmp(a.body, b.body, a.len)),
		      "parsed once, answered otherwise");
		xfree(b.body);
	}
	xfree(a.body);
	return 0;
}
