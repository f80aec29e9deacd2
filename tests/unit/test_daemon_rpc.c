/*
 * tests/unit/test_daemon_rpc.c: the HTTP JSON-RPC door's pure parts
 * (daemon/ctl/rpc_auth.c, daemon/ctl/rpc_jsonrpc.c): Core's rpcauth
 * check on a vector made as share/rpcauth makes one, the cookie file, the
 * constant-time compare, and the envelope around a reply spliced as text
 * (an amount keeps its eight decimals), with out-of-memory at every
 * allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "daemon/ctl/ctl.h"
#include "daemon/ctl/rpc.h"
#include "tests/unit/testutil.h"

/* HMAC-SHA256(key "0123456789abcdef", "wonderland"), from Python's hmac module. */
#define ALICE                                                                                      \
	"alice:0123456789abcdef$a064405a0f460b3fc88b4e8774521f9c87844a246b372501d8eb9cf2c87c29e7"

static void test_timing_equal(void **state)
{
	(void)state;
	assert_true(rpc_timing_equal("abc", "abc"));
	assert_false(rpc_timing_equal("abc", "abd"));
	assert_false(rpc_timing_equal("abc", "ab"));
	assert_false(rpc_timing_equal("ab", "abc"));
	assert_false(rpc_timing_equal("abc", ""));
	assert_true(rpc_timing_equal("", ""));
	/* b repeats under a: a longer a that matches b's pattern is still unequal. */
	assert_false(rpc_timing_equal("abab", "ab"));
}

static void test_rpcauth_and_rpcuser(void **state)
{
	(void)state;
	struct peerd_conf c;
	conf_defaults(&c);
	snprintf(c.rpcuser, sizeof(c.rpcuser), "u");
	snprintf(c.rpcpassword, sizeof(c.rpcpassword), "pw");
	c.rpcauth.v[c.rpcauth.n++] = xstrdup(ALICE);
	struct rpc_auth a;
	char err[256];
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), 0);
	assert_null(a.cookie_path);
	assert_string_equal(a.mode, "rpcuser/rpcpassword");
	assert_true(rpc_auth_check(&a, "Basic YWxpY2U6d29uZGVybGFuZA=="));  /* alice:wonderland */
	assert_false(rpc_auth_check(&a, "Basic YWxpY2U6d29uZGVybGFuRA==")); /* alice:wonderlanD */
	assert_true(rpc_auth_check(&a, "Basic dTpwdw=="));                  /* u:pw */
	assert_true(rpc_auth_check(&a, "Basic   dTpwdw==  "));
	assert_false(rpc_auth_check(&a, "Basic dTpwVw==")); /* u:pW */
	assert_false(rpc_auth_check(&a, "basic dTpwdw=="));
	assert_false(rpc_auth_check(&a, "Basic !!!!"));
	assert_false(rpc_auth_check(&a, "Basic dQ==")); /* "u": no colon */
	assert_false(rpc_auth_check(&a, NULL));
	rpc_auth_release(&a);
	/* Core's messages for what it refuses. */
	xfree(c.rpcauth.v[0]);
	c.rpcauth.v[0] = xstrdup("alice:salt");
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), -1);
	assert_string_equal(err, "Invalid -rpcauth argument.");
	rpc_auth_release(&a);
	c.rpcpassword[0] = 0;
	snprintf(c.rpccookieperms, sizeof(c.rpccookieperms), "world");
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "Invalid -rpccookieperms=world; must be one of 'owner', 'group', or 'all'.");
	rpc_auth_release(&a);
	conf_release(&c);
}

static void test_cookie_file(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "rpc");
	struct peerd_conf c;
	conf_defaults(&c);
	c.netdir = xstrdup(dir);
	struct rpc_auth a;
	char err[256], path[TU_TMPDIR_MAX + 16], text[128] = {0};
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/.cookie", dir);
	assert_string_equal(a.cookie_path, path);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	assert_int_equal(n, strlen("__cookie__:") + 64);
	assert_memory_equal(text, "__cookie__:", 11);
	/* The file's content is the credential. */
	char b64[200], header[220];
	sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)text, n,
	                  sodium_base64_VARIANT_ORIGINAL);
	snprintf(header, sizeof(header), "Basic %s", b64);
	assert_true(rpc_auth_check(&a, header));
	text[n - 1] ^= 1;
	sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)text, n,
	                  sodium_base64_VARIANT_ORIGINAL);
	snprintf(header, sizeof(header), "Basic %s", b64);
	assert_false(rpc_auth_check(&a, header));
	rpc_auth_release(&a);
	assert_int_not_equal(access(path, F_OK), 0); /* removed */
	/* group, in a file of its own name. */
	snprintf(c.rpccookieperms, sizeof(c.rpccookieperms), "group");
	snprintf(c.rpccookiefile, sizeof(c.rpccookiefile), "other");
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/other", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	rpc_auth_release(&a);
	/* -norpccookiefile: none. */
	snprintf(c.rpccookiefile, sizeof(c.rpccookiefile), "0");
	assert_int_equal(rpc_auth_init(&a, &c, err, sizeof(err)), 0);
	assert_null(a.cookie_path);
	assert_int_equal(a.n, 0);
	rpc_auth_release(&a);
	conf_release(&c);
	tu_rmtree(dir);
}

static bool allowed(const struct rpc_subnet *v, size_t n, const char *ip)
{
	struct sockaddr_in s4 = {.sin_family = AF_INET};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	if (inet_pton(AF_INET, ip, &s4.sin_addr) == 1)
		return rpc_subnets_allow(v, n, (struct sockaddr *)&s4);
	assert_int_equal(inet_pton(AF_INET6, ip, &s6.sin6_addr), 1);
	return rpc_subnets_allow(v, n, (struct sockaddr *)&s6);
}

static void test_allow_list(void **state)
{
	(void)state;
	struct rpc_subnet v[6];
	assert_int_equal(rpc_subnet_parse("127.0.0.0/8", &v[0]), 0);
	assert_int_equal(rpc_subnet_parse("::1", &v[1]), 0);
	assert_int_equal(rpc_subnet_parse("192.168.7.9/255.255.255.0", &v[2]), 0);
	assert_int_equal(rpc_subnet_parse("10.1.2.3", &v[3]), 0);
	assert_int_equal(rpc_subnet_parse("2001:db8::/32", &v[4]), 0);
	assert_true(allowed(v, 5, "127.9.9.9"));
	assert_true(allowed(v, 5, "::1"));
	assert_true(allowed(v, 5, "192.168.7.200"));
	assert_false(allowed(v, 5, "192.168.8.1"));
	assert_true(allowed(v, 5, "10.1.2.3"));
	assert_false(allowed(v, 5, "10.1.2.4"));
	assert_true(allowed(v, 5, "2001:db8:ffff::1"));
	assert_false(allowed(v, 5, "2001:db9::1"));
	assert_false(allowed(v, 5, "::2"));
	/* An IPv4 client on an IPv6 socket is its IPv4 address. */
	assert_true(allowed(v, 5, "::ffff:127.0.0.1"));
	assert_false(allowed(v, 5, "::ffff:8.8.8.8"));
	/* Everyone, per family. */
	assert_int_equal(rpc_subnet_parse("0.0.0.0/0", &v[5]), 0);
	assert_true(allowed(v, 6, "8.8.8.8"));
	assert_false(allowed(v, 6, "2a00::1"));
	/* What Core's LookupSubNet refuses. */
	const char *bad[] = {"",           "1.2.3.4/33",     "1.2.3.4/255.0.255.0",
	                     "::1/129",    "host.example",   "1.2.3.4/",
	                     "1.2.3.4/-1", "1.2.3.4/ffff::", "1.2.3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rpc_subnet_parse(bad[i], &v[5]), -1);
}

/* The dispatcher's reply, as the control socket writes it. */
static const char *stub_reply;
static int stub_calls;
/* The last line the stub was sent. */
static char stub_line[512];

static char *stub_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	(void)ctx;
	stub_calls++;
	snprintf(stub_line, sizeof(stub_line), "%.*s", (int)len, line);
	if (!stub_reply)
		return NULL;
	char *r = xstrdup(stub_reply);
	if (r)
		*out_len = strlen(r);
	return r;
}

/* a is the answer `want` (NULL: no body) with `status`; its body is freed. */
static void expect_answer(struct rpc_answer *a, unsigned status, const char *want)
{
	assert_int_equal(a->status, status);
	if (want) {
		assert_non_null(a->body);
		assert_int_equal(a->len, strlen(want));
		assert_string_equal(a->body, want);
	} else {
		assert_null(a->body);
	}
	xfree(a->body);
	a->body = NULL;
}

static void expect(const char *body, unsigned status, const char *want)
{
	struct rpc_answer a;
	rpc_jsonrpc_answer(body, strlen(body), stub_call, NULL, &a);
	expect_answer(&a, status, want);
}

static void test_envelopes(void **state)
{
	(void)state;
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":1.50000000,\"id\":0}";
	expect("{\"method\":\"getblockcount\",\"id\":7}", 200,
	       "{\"result\":1.50000000,\"error\":null,\"id\":7}\n");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"getblockcount\",\"id\":\"x\"}", 200,
	       "{\"jsonrpc\":\"2.0\",\"result\":1.50000000,\"id\":\"x\"}\n");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"getblockcount\"}", 204, NULL);
	expect("{\"method\":\"getblockcount\"}", 200, "{\"result\":1.50000000,\"error\":null}\n");
	stub_reply = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-8,\"message\":\"m\"},\"id\":0}";
	expect("{\"method\":\"getblockcount\",\"id\":1}", 500,
	       "{\"result\":null,\"error\":{\"code\":-8,\"message\":\"m\"},\"id\":1}\n");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"getblockcount\",\"id\":1}", 200,
	       "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-8,\"message\":\"m\"},\"id\":1}\n");
	/* Unknown to both peerd and Core: Core's words, and no call is made. */
	stub_calls = 0;
	expect(
	    "{\"method\":\"nosuchmethod\",\"id\":1}", 404,
	    "{\"result\":null,\"error\":{\"code\":-32601,\"message\":\"Method not found\"},\"id\":"
	    "1}\n");
	assert_int_equal(stub_calls, 0);
	/* The dispatcher is gone (peerd is stopping). */
	stub_reply = NULL;
	expect("{\"method\":\"getblockcount\",\"id\":1}", 500,
	       "{\"result\":null,\"error\":{\"code\":-1,\"message\":\"peerd is shutting "
	       "down\"},\"id\":1}\n");
	expect("x", 500,
	       "{\"result\":null,\"error\":{\"code\":-32700,\"message\":\"Parse "
	       "error\"},\"id\":null}\n");
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":0}";
	expect("[{\"method\":\"getblockcount\",\"id\":1},3,{\"jsonrpc\":\"2.0\",\"method\":"
	       "\"getblockcount\"}]",
	       200,
	       "[{\"result\":true,\"error\":null,\"id\":1},{\"result\":null,\"error\":{\"code\":-"
	       "32600,"
	       "\"message\":\"Invalid Request object\"},\"id\":1}]\n");
	expect("[]", 200, "[]\n");
}

static void test_envelopes_oom(void **state)
{
	(void)state;
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":[1,2,3],\"id\":0}";
	const char *body = "[{\"method\":\"getblockcount\",\"id\":1},{\"jsonrpc\":\"2.0\","
	                   "\"method\":\"nosuchmethod\",\"id\":[1,2]},7]";
	for (long n = 0; n < 80; n++) {
		struct rpc_answer a;
		base_alloc_fail_after(n);
		rpc_jsonrpc_answer(body, strlen(body), stub_call, NULL, &a);
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected) {
			assert_int_equal(a.status, 200);
			assert_non_null(a.body);
		}
		xfree(a.body);
	}
}

static void expect_halves(const char *body, bool direct, bool want_pending);

/* body answered three ways: through a call (stub_reply), with the reply known, and in two
 * halves parsed once. */
static void expect_both(const char *body, unsigned status, const char *want)
{
	expect(body, status, want);
	expect_halves(body, false, true);
	struct rpc_answer a;
	char *rep = stub_reply ? xstrdup(stub_reply) : NULL;
	rpc_jsonrpc_answer_reply(body, strlen(body), rep, rep ? strlen(rep) : 0, &a);
	expect_answer(&a, status, want);
}

/* A result of 64 KiB and more is answered in the dispatcher's buffer (reply_in_place):
 * the same bytes as the short path's, for every envelope and id. */
static void test_long_result_in_place(void **state)
{
	(void)state;
	const size_t n = 200000;
	char *res = xmalloc(n + 3), *rep = xmalloc(n + 64), *want = xmalloc(n + 128);
	assert_non_null(res);
	assert_non_null(rep);
	assert_non_null(want);
	res[0] = '"';
	memset(res + 1, 'a', n);
	strcpy(res + n + 1, "\"");
	sprintf(rep, "{\"jsonrpc\":\"2.0\",\"result\":%s,\"id\":0}", res);
	stub_reply = rep;
	sprintf(want, "{\"result\":%s,\"error\":null,\"id\":7}\n", res);
	expect_both("{\"method\":\"getblock\",\"id\":7}", 200, want);
	sprintf(want, "{\"jsonrpc\":\"2.0\",\"result\":%s,\"id\":\"x\"}\n", res);
	expect_both("{\"jsonrpc\":\"2.0\",\"method\":\"getblock\",\"id\":\"x\"}", 200, want);
	sprintf(want, "{\"result\":%s,\"error\":null,\"id\":{\"k\":[1,null]}}\n", res);
	expect_both("{\"method\":\"getblock\",\"id\":{\"k\":[1,null]}}", 200, want);
	sprintf(want, "{\"result\":%s,\"error\":null}\n", res);
	expect_both("{\"method\":\"getblock\"}", 200, want);
	expect_both("{\"jsonrpc\":\"2.0\",\"method\":\"getblock\"}", 204, NULL);
	sprintf(want, "[{\"result\":%s,\"error\":null,\"id\":1}]\n", res);
	expect("[{\"method\":\"getblock\",\"id\":1}]", 200, want);
	/* Out of memory anywhere: a 500 or the answer, never a leak (ASan). */
	for (long k = 0; k < 40; k++) {
		struct rpc_answer a;
		base_alloc_fail_after(k);
		const char *body = "{\"method\":\"getblock\",\"id\":7}";
		char *r = xstrdup(rep);
		rpc_jsonrpc_answer_reply(body, strlen(body), r, r ? strlen(r) : 0, &a);
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected)
			assert_int_equal(a.status, 200);
		xfree(a.body);
	}
	stub_reply = NULL;
	xfree(res);
	xfree(rep);
	xfree(want);
}

/* rpc_direct_fn: answers getblockcount (7, or direct_err's error), declines the rest. */
static int direct_asked;
static int direct_err;

static bool direct_stub(void *ctx, const char *method, json_t *params, struct ctl_result *res)
{
	(void)ctx;
	(void)params;
	direct_asked++;
	if (strcmp(method, "getblockcount") != 0)
		return false;
	if (direct_err) {
		res->err_code = direct_err;
		snprintf(res->err_msg, sizeof(res->err_msg), "m");
		return true;
	}
	res->result = json_integer(7);
	return true;
}

/* body answered at once by rpc_jsonrpc_begin through direct_stub: `want` with `status`. */
static void expect_direct(const char *body, unsigned status, const char *want)
{
	struct rpc_answer a;
	struct rpc_jsonrpc_call *pc = NULL;
	rpc_jsonrpc_begin(body, strlen(body), direct_stub, NULL, &a, &pc);
	assert_null(pc);
	expect_answer(&a, status, want);
}

/* body through rpc_jsonrpc_begin (direct: direct_stub, or none) and, when it is pending,
 * rpc_jsonrpc_finish with stub_reply: the same answer, bytes and status, as
 * rpc_jsonrpc_answer's, the same line to the dispatcher, and the body never read after
 * begin (it is scribbled over and freed: ASan sees any read). */
static void expect_halves(const char *body, bool direct, bool want_pending)
{
	struct rpc_answer want, got;
	stub_line[0] = 0;
	stub_calls = 0;
	rpc_jsonrpc_answer(body, strlen(body), stub_call, NULL, &want);
	int calls = stub_calls;
	char *copy = xstrdup(body);
	assert_non_null(copy);
	struct rpc_jsonrpc_call *pc = NULL;
	rpc_jsonrpc_begin(copy, strlen(copy), direct ? direct_stub : NULL, NULL, &got, &pc);
	memset(copy, '!', strlen(copy));
	xfree(copy);
	if (want_pending) {
		assert_non_null(pc);
		assert_int_equal(calls, 1);
		assert_null(got.body);
		size_t n = 0;
		const char *line = rpc_jsonrpc_call_line(pc, &n);
		assert_int_equal(n, strlen(line));
		assert_string_equal(line, stub_line);
		char *rep = stub_reply ? xstrdup(stub_reply) : NULL;
		rpc_jsonrpc_finish(pc, rep, rep ? strlen(rep) : 0, &got);
	} else {
		assert_null(pc);
	}
	expect_answer(&got, want.status, want.body);
	xfree(want.body);
}

/* A lone call parsed once (ctl/rpc_http_req.c): answered from the view by a direct
 * call, or sent to the dispatcher and finished with the tree of the first parse. */
static void test_one_parse_two_halves(void **state)
{
	(void)state;
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":\"00ff\",\"id\":0}";
	const char *sent[] = {
	    "{\"method\":\"getblockhash\",\"params\":[1],\"id\":7}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"getblockhash\",\"params\":[1],\"id\":\"x\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"getblockhash\",\"params\":{\"height\":1}}",
	    "{\"method\":\"getblockhash\",\"params\":[1]}",
	    "{\"method\":\"getblockhash\",\"params\":[1],\"id\":123456789012345678901234567890}",
	    "{\"jsonrpc\":\"1.0\",\"method\":\"getblockhash\",\"params\":null,\"id\":[1,{}]}",
	};
	/* Without a direct door, and with one that declines (getblockhash). */
	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		expect_halves(sent[i], false, true);
		direct_asked = 0;
		expect_halves(sent[i], true, true);
		assert_int_equal(direct_asked, 1);
	}
	/* Never at the dispatcher: a parse error, an unknown method, a repeated name. */
	const char *kept[] = {
	    "x",
	    "5",
	    "{\"method\":\"nosuchmethod\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"method\":3,\"id\":1}",
	    "{\"method\":\"getblockhash\",\"params\":{\"height\":1,\"height\":2},\"id\":1}",
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		direct_asked = 0;
		expect_halves(kept[i], true, false);
		assert_int_equal(direct_asked, 0);
	}
	/* The dispatcher gone between the halves: Core's envelope of the error. */
	stub_reply = NULL;
	expect_halves("{\"method\":\"getblockhash\",\"params\":[1],\"id\":7}", false, true);
	/* Answered from the view: as if the dispatcher had said it. */
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":7,\"id\":0}";
	expect_direct("{\"method\":\"getblockcount\",\"id\":123456789012345678901234567890}", 200,
	              "{\"result\":7,\"error\":null,\"id\":123456789012345678901234567890}\n");
	stub_calls = 0;
	direct_err = -8;
	expect_direct("{\"method\":\"getblockcount\",\"id\":1}", 500,
	              "{\"result\":null,\"error\":{\"code\":-8,\"message\":\"m\"},\"id\":1}\n");
	expect_direct("{\"jsonrpc\":\"2.0\",\"method\":\"getblockcount\",\"id\":1}", 200,
	              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-8,\"message\":\"m\"},\"id\":1}\n");
	direct_err = 0;
	assert_int_equal(stub_calls, 0);
	/* Out of memory anywhere in either half: a 500 or the answer, never a leak (ASan). */
	stub_reply = "{\"jsonrpc\":\"2.0\",\"result\":\"00ff\",\"id\":0}";
	struct rpc_answer a;
	struct rpc_jsonrpc_call *pc = NULL;
	const char *body = "{\"method\":\"getblockhash\",\"params\":[1],\"id\":7}";
	for (long k = 0; k < 60; k++) {
		base_alloc_fail_after(k);
		rpc_jsonrpc_begin(body, strlen(body), direct_stub, NULL, &a, &pc);
		if (pc) {
			assert_null(a.body);
			char *r = xstrdup(stub_reply);
			rpc_jsonrpc_finish(pc, r, r ? strlen(r) : 0, &a);
		}
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected) {
			assert_int_equal(a.status, 200);
			assert_string_equal(a.body,
			                    "{\"result\":\"00ff\",\"error\":null,\"id\":7}\n");
		}
		xfree(a.body);
	}
	stub_reply = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timing_equal),
	    cmocka_unit_test(test_rpcauth_and_rpcuser),
	    cmocka_unit_test(test_cookie_file),
	    cmocka_unit_test(test_envelopes),
	    cmocka_unit_test(test_envelopes_oom),
	    cmocka_unit_test(test_allow_list),
	    cmocka_unit_test(test_long_result_in_place),
	    cmocka_unit_test(test_one_parse_two_halves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
