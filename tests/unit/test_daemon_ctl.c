/*
 * tests/unit/test_daemon_ctl.c: the control socket (daemon/ctl/server.c, ctl/request.c): the
 * JSON-RPC 2.0 request handling at the function level (ctl_reply: one
 * line in, one reply out), then through a real Unix socket in a temporary
 * datadir for what only the server does (notifications, closing after a
 * parse error, stop, EOF, over-long lines, stale socket files).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* ---- function level ------------------------------------------------------- */

/* ctl_reply on a NUL-terminated line. */
static json_t *reply(struct tf *t, const char *line, unsigned *flags)
{
	unsigned f = 0xdead;
	json_t *r = ctl_reply(t->d, line, strlen(line), &f);
	if (flags)
		*flags = f;
	else if (f)
		fail_msg("%s: flags 0x%x, expected none", line, f);
	return r;
}

static char *dump(const json_t *v)
{
	static char buf[2048];
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	snprintf(buf, sizeof(buf), "%s", s ? s : "(none)");
	xfree(s);
	return buf;
}

/* An error object with `code` and the id given as JSON text ("null", "7", "\"x\""). */
static void assert_error(const json_t *r, int code, const char *id)
{
	if (!json_is_object(r))
		fail_msg("not an error object: %s", dump(r));
	json_t *err = json_object_get(r, "error");
	json_t *c = json_object_get(err, "code");
	if (!json_is_integer(c) || json_integer_value(c) != code)
		fail_msg("expected error %d, got %s", code, dump(r));
	if (!json_is_string(json_object_get(err, "message")))
		fail_msg("error without a message: %s", dump(r));
	assert_string_equal(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
	assert_null(json_object_get(r, "result"));
	json_error_t jerr;
	json_t *want = json_loads(id, JSON_DECODE_ANY, &jerr);
	assert_non_null(want);
	json_t *got = json_object_get(r, "id");
	if (!got || !json_equal(got, want))
		fail_msg("expected id %s in %s", id, dump(r));
	json_decref(want);
}

static void expect_error(struct tf *t, const char *line, int code, const char *id)
{
	json_t *r = reply(t, line, NULL);
	assert_error(r, code, id);
	json_decref(r);
}

static void test_parse_error(void **state)
{
	struct tf *t = *state;
	static const char *const lines[] = {
	    "{\"method\": \"uptime\", \"id\": 1",
	    "not json",
	    "{\"method\": \"uptime\"} {\"method\": \"uptime\"}",
	    "[1, 2",
	    "\"unterminated",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		unsigned flags;
		json_t *r = reply(t, lines[i], &flags);
		assert_error(r, CTL_PARSE_ERROR, "null");
		if (flags != CTL_REPLY_CLOSE)
			fail_msg("%s: flags 0x%x, expected close", lines[i], flags);
		assert_non_null(strstr(
		    json_string_value(json_object_get(json_object_get(r, "error"), "message")),
		    "Parse error"));
		json_decref(r);
	}
}

static void test_invalid_request(void **state)
{
	struct tf *t = *state;
	expect_error(t, "5", CTL_INVALID_REQUEST, "null");
	expect_error(t, "\"uptime\"", CTL_INVALID_REQUEST, "null");
	expect_error(t, "[]", CTL_INVALID_REQUEST, "null");
	expect_error(t, "{\"id\": 1}", CTL_INVALID_REQUEST, "1");
	expect_error(t, "{\"method\": 5, \"id\": 2}", CTL_INVALID_REQUEST, "2");
	expect_error(t, "{\"jsonrpc\": \"3.0\", \"method\": \"uptime\", \"id\": \"a\"}",
	             CTL_INVALID_REQUEST, "\"a\"");
	expect_error(t, "{\"jsonrpc\": 2, \"method\": \"uptime\", \"id\": 3}", CTL_INVALID_REQUEST,
	             "3");
	/* An id that is not a string, number or null cannot be echoed. */
	expect_error(t, "{\"method\": \"uptime\", \"id\": {\"a\": 1}}", CTL_INVALID_REQUEST,
	             "null");
	expect_error(t, "{\"method\": \"uptime\", \"id\": [1]}", CTL_INVALID_REQUEST, "null");
	expect_error(t, "{\"method\": \"uptime\", \"id\": true}", CTL_INVALID_REQUEST, "null");
	/* Invalid even without an id: a broken request is not a notification. */
	expect_error(t, "{\"method\": null}", CTL_INVALID_REQUEST, "null");
}

/* JSON-RPC 1.0 (Core's curl examples): answered with both result and error. */
static void test_jsonrpc_1_0(void **state)
{
	struct tf *t = *state;
	json_t *r = reply(
	    t, "{\"jsonrpc\": \"1.0\", \"method\": \"getconnectioncount\", \"id\": \"c\"}", NULL);
	char *got = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	assert_non_null(got);
	assert_string_equal(got, "{\"result\":0,\"id\":\"c\",\"error\":null}");
	xfree(got);
	r = reply(t, "{\"jsonrpc\": \"1.0\", \"method\": \"nosuch\", \"id\": 1}", NULL);
	got = json_dumps(r, JSON_COMPACT);
	json_t *err = json_object_get(r, "error");
	int code = (int)json_integer_value(json_object_get(err, "code"));
	bool has_result = json_is_null(json_object_get(r, "result"));
	bool no_version = json_object_get(r, "jsonrpc") == NULL;
	json_decref(r);
	xfree(got);
	assert_int_equal(code, CTL_METHOD_NOT_FOUND);
	assert_true(has_result);
	assert_true(no_version);
}

static void test_method_not_found(void **state)
{
	struct tf *t = *state;
	expect_error(t, "{\"jsonrpc\": \"2.0\", \"method\": \"nosuch\", \"id\": \"x\"}",
	             CTL_METHOD_NOT_FOUND, "\"x\"");
	expect_error(t, "{\"method\": \"\", \"id\": 1}", CTL_METHOD_NOT_FOUND, "1");
	expect_error(t, "{\"method\": \"UPTIME\", \"id\": 1}", CTL_METHOD_NOT_FOUND, "1");
}

static void test_invalid_params(void **state)
{
	struct tf *t = *state;
	/* params of the wrong JSON type */
	expect_error(t, "{\"method\": \"uptime\", \"params\": \"x\", \"id\": 1}",
	             CTL_INVALID_PARAMS, "1");
	expect_error(t, "{\"method\": \"uptime\", \"params\": 3, \"id\": 1}", CTL_INVALID_PARAMS,
	             "1");
	/* Too many, too few: Core's -1 with the help text (ctl/args.c). */
	expect_error(t, "{\"method\": \"uptime\", \"params\": [1], \"id\": 2}", CTL_MISC_ERROR,
	             "2");
	expect_error(t, "{\"method\": \"setban\", \"params\": [\"1.2.3.4\"], \"id\": 3}",
	             CTL_MISC_ERROR, "3");
	expect_error(t,
	             "{\"method\": \"addnode\", \"params\": [\"a\", \"add\", true, 1], \"id\": 4}",
	             CTL_MISC_ERROR, "4");
	/* an unknown named parameter: Core's -8 */
	expect_error(t, "{\"method\": \"help\", \"params\": {\"bogus\": 1}, \"id\": 5}",
	             CTL_INVALID_PARAMETER, "5");
	/* values of the wrong type (-3), a command not known (-1, help), out of range */
	expect_error(t, "{\"method\": \"setban\", \"params\": [1, \"add\"], \"id\": 6}",
	             CTL_TYPE_ERROR, "6");
	expect_error(t, "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"frob\"], \"id\": 7}",
	             CTL_MISC_ERROR, "7");
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"add\", 1.5], \"id\": 8}",
	             CTL_MISC_ERROR, "8");
	expect_error(
	    t, "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"add\", \"x\"], \"id\": 9}",
	    CTL_TYPE_ERROR, "9");
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"add\", 100, 1], \"id\": "
	             "10}",
	             CTL_TYPE_ERROR, "10");
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"add\", 1000, true], "
	             "\"id\": 11}",
	             CTL_INVALID_PARAMETER, "11");
	expect_error(t,
	             "{\"method\": \"addnode\", \"params\": [\"1.2.3.4\", \"frob\"], \"id\": 12}",
	             CTL_MISC_ERROR, "12");
	expect_error(t,
	             "{\"method\": \"disconnectnode\", \"params\": [\"1.2.3.4:1\", 3], \"id\": 13}",
	             CTL_INVALID_PARAMS, "13");
	expect_error(t, "{\"method\": \"help\", \"params\": [7], \"id\": 14}", CTL_TYPE_ERROR,
	             "14");
	/* Application errors keep Core's codes. */
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"1.2.3.999\", \"add\"], \"id\": 15}",
	             CTL_INVALID_IP_OR_SUBNET, "15");
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"1.2.3.4\", \"remove\"], \"id\": 16}",
	             CTL_INVALID_IP_OR_SUBNET, "16");
	expect_error(t,
	             "{\"method\": \"disconnectnode\", \"params\": {\"nodeid\": 99}, \"id\": 17}",
	             CTL_NODE_NOT_CONNECTED, "17");
	expect_error(
	    t, "{\"method\": \"addnode\", \"params\": [\"nowhere:1\", \"remove\"], \"id\": 18}",
	    CTL_NODE_NOT_ADDED, "18");
}

static void test_success_and_ids(void **state)
{
	struct tf *t = *state;
	static const char *const ids[] = {"7", "\"seven\"", "7.5", "null", "-1"};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line),
		         "{\"jsonrpc\": \"2.0\", \"method\": \"uptime\", \"id\": %s}", ids[i]);
		json_t *r = reply(t, line, NULL);
		json_error_t jerr;
		json_t *want = json_loads(ids[i], JSON_DECODE_ANY, &jerr);
		if (!json_is_object(r) || !json_equal(json_object_get(r, "id"), want) ||
		    !json_is_integer(json_object_get(r, "result")) || json_object_get(r, "error"))
			fail_msg("%s -> %s", line, dump(r));
		json_decref(want);
		json_decref(r);
	}
	/* Leading blanks and a CR (from a CRLF client) are fine; params null is none. */
	json_t *r =
	    reply(t, "  {\"method\": \"getconnectioncount\", \"params\": null, \"id\": 1}\r", NULL);
	assert_int_equal(json_integer_value(json_object_get(r, "result")), 0);
	json_decref(r);
	/* Named parameters. */
	r = reply(t, "{\"method\": \"help\", \"params\": {\"command\": \"setban\"}, \"id\": 2}",
	          NULL);
	assert_non_null(
	    strstr(json_string_value(json_object_get(r, "result")), "setban \"subnet\""));
	json_decref(r);
	r = reply(t,
	          "{\"method\": \"setban\", \"params\": {\"command\": \"add\", \"subnet\": "
	          "\"192.0.2.0/24\", \"bantime\": 60}, \"id\": 3}",
	          NULL);
	assert_true(json_is_null(json_object_get(r, "result")));
	json_decref(r);
	r = reply(t, "{\"method\": \"listbanned\", \"id\": 4}", NULL);
	json_t *e = json_array_get(json_object_get(r, "result"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "address")), "192.0.2.0/24");
	assert_int_equal(json_integer_value(json_object_get(e, "ban_duration")), 60);
	json_decref(r);
	expect_error(t,
	             "{\"method\": \"setban\", \"params\": [\"192.0.2.0/24\", \"add\"], \"id\": 5}",
	             CTL_NODE_ALREADY_ADDED, "5");
}

static void test_batch(void **state)
{
	struct tf *t = *state;
	json_t *r = reply(t,
	                  "[{\"jsonrpc\": \"2.0\", \"method\": \"uptime\", \"id\": 1},"
	                  " {\"method\": \"nosuch\", \"id\": 2},"
	                  " {\"method\": \"uptime\"},"
	                  " {\"method\": \"nosuch\"},"
	                  " 5,"
	                  " {\"method\": \"uptime\", \"params\": [1], \"id\": 3}]",
	                  NULL);
	if (!json_is_array(r) || json_array_size(r) != 4)
		fail_msg("batch reply: %s", dump(r));
	assert_true(json_is_integer(json_object_get(json_array_get(r, 0), "result")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "id")), 1);
	assert_error(json_array_get(r, 1), CTL_METHOD_NOT_FOUND, "2");
	assert_error(json_array_get(r, 2), CTL_INVALID_REQUEST, "null");
	assert_error(json_array_get(r, 3), CTL_MISC_ERROR, "3"); /* a wrong count */
	json_decref(r);
	/* One element still gets an array. */
	r = reply(t, "[{\"method\": \"uptime\", \"id\": 9}]", NULL);
	assert_true(json_is_array(r));
	assert_int_equal(json_array_size(r), 1);
	json_decref(r);
}

/* CTL_MAX_BATCH requests are answered; one more is refused whole. */
static void test_batch_bound(void **state)
{
	struct tf *t = *state;
	static const char req[] = "{\"method\": \"uptime\", \"id\": 1},";
	char line[(CTL_MAX_BATCH + 1) * sizeof(req) + 4];
	for (unsigned n = CTL_MAX_BATCH; n <= CTL_MAX_BATCH + 1; n++) {
		size_t len = 0;
		line[len++] = '[';
		for (unsigned i = 0; i < n; i++) {
			memcpy(line + len, req, sizeof(req) - 1);
			len += sizeof(req) - 1;
		}
		line[len - 1] = ']'; /* replaces the last comma */
		line[len] = 0;
		json_t *r = reply(t, line, NULL);
		if (n == CTL_MAX_BATCH) {
			if (!json_is_array(r) || json_array_size(r) != n)
				fail_msg("batch of %u: %s", n, dump(r));
		} else {
			assert_error(r, CTL_INVALID_REQUEST, "null");
		}
		json_decref(r);
	}
}

static void test_notifications_get_no_reply(void **state)
{
	struct tf *t = *state;
	assert_null(reply(t, "{\"jsonrpc\": \"2.0\", \"method\": \"uptime\"}", NULL));
	/* Not even an error: the client asked for no answer. */
	assert_null(reply(t, "{\"method\": \"nosuch\"}", NULL));
	assert_null(reply(t, "{\"method\": \"uptime\", \"params\": [1, 2]}", NULL));
	assert_null(reply(t, "[{\"method\": \"uptime\"}, {\"method\": \"nosuch\"}]", NULL));
	assert_null(reply(t, "", NULL));
	assert_null(reply(t, " \t\r", NULL));
	/* But the method ran. */
	assert_null(
	    reply(t, "{\"method\": \"setban\", \"params\": [\"192.0.2.1\", \"add\"]}", NULL));
	assert_int_equal(t->d->ban->n, 1);
}

static void test_stop_flag(void **state)
{
	struct tf *t = *state;
	unsigned flags;
	json_t *r = reply(t, "{\"method\": \"stop\", \"id\": 1}", &flags);
	assert_int_equal(flags, CTL_REPLY_STOP);
	assert_string_equal(json_string_value(json_object_get(r, "result")), "peerd stopping");
	json_decref(r);
	assert_null(reply(t, "{\"method\": \"stop\"}", &flags));
	assert_int_equal(flags, CTL_REPLY_STOP);
	r = reply(t, "[{\"method\": \"uptime\", \"id\": 1}, {\"method\": \"stop\", \"id\": 2}]",
	          &flags);
	assert_int_equal(flags, CTL_REPLY_STOP);
	json_decref(r);
	/* ctl_reply itself never shuts down: the server does, after replying. */
	assert_int_equal(tf_shutdown_calls, 0);
}

/*
 * Every allocation after parsing failing in turn: a reply or none, never a
 * crash or a leak. Failures inside json_loadb itself are left out: Debian's
 * jansson 2.14 writes out of bounds when some of its own allocations fail
 * while parsing a batch like this one (seen at the 20th), which is
 * jansson's bug, not peerd's.
 */
static void test_reply_oom(void **state)
{
	struct tf *t = *state;
	static const char line[] =
	    "[{\"jsonrpc\": \"2.0\", \"method\": \"uptime\", \"id\": 1},"
	    " {\"method\": \"getnetworkinfo\", \"id\": 2},"
	    " {\"method\": \"help\", \"params\": {\"command\": \"stop\"}, \"id\": 3},"
	    " {\"method\": \"nosuch\", \"id\": 4}, 7]";
	json_error_t jerr;
	uint64_t before = base_alloc_count();
	json_t *parsed = json_loadb(line, sizeof(line) - 1, JSON_DECODE_ANY, &jerr);
	long parse_allocs = (long)(base_alloc_count() - before);
	assert_non_null(parsed);
	json_decref(parsed);
	long k;
	for (k = parse_allocs; k < 10000; k++) {
		unsigned flags;
		base_alloc_fail_after(k);
		json_t *r = ctl_reply(t->d, line, sizeof(line) - 1, &flags);
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (r)
			assert_true(json_is_array(r) || json_is_object(r));
		if (!injected) {
			assert_int_equal(json_array_size(r), 5);
			json_decref(r);
			break;
		}
		json_decref(r);
	}
	assert_true(k > parse_allocs + 10);
	assert_true(k < 10000);
	json_t *r = reply(t, "{\"method\": \"uptime\", \"id\": 1}", NULL);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
}

/* ---- through the socket ----------------------------------------------------- */

static int client_connect(struct tf *t)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", t->d->ctl->path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/* Write everything, running the loop while the socket is full. */
static void client_send(struct tf *t, int fd, const char *data, size_t len)
{
	size_t off = 0;
	for (int spins = 0; off < len; spins++) {
		ssize_t n = send(fd, data + off, len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN)
			fail_msg("send: %s", strerror(errno));
		if (spins > 20000)
			fail_msg("send stalled after %zu of %zu bytes", off, len);
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(100);
	}
}

static void client_sends(struct tf *t, int fd, const char *s)
{
	client_send(t, fd, s, strlen(s));
}

/* What the server sent, split into lines. */
struct replies {
	char buf[16384];
	size_t len;
	unsigned lines;
	bool eof;
};

/* Run the loop until `lines` replies (and, if asked, EOF) arrived, or 3 s passed. */
static void client_wait(struct tf *t, int fd, struct replies *r, unsigned lines, bool want_eof)
{
	memset(r, 0, sizeof(*r));
	for (int spins = 0; spins < 30000; spins++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		ssize_t n = recv(fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len, 0);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				r->lines += r->buf[r->len + (size_t)i] == '\n';
			r->len += (size_t)n;
			r->buf[r->len] = 0;
		} else if (n == 0 || errno == ECONNRESET) {
			/* ECONNRESET: the server closed with our bytes unread
			 * (an over-long line); what it sent was read first. */
			r->eof = true;
		} else if (errno != EAGAIN) {
			fail_msg("recv: %s", strerror(errno));
		}
		if (r->lines >= lines && (!want_eof || r->eof))
			return;
		if (r->eof)
			break;
		usleep(100);
	}
	fail_msg("waited for %u lines%s, got %u (eof %d): %s", lines, want_eof ? " and EOF" : "",
	         r->lines, r->eof, r->buf);
}

/* The i-th reply line, parsed. */
static json_t *line_json(const struct replies *r, unsigned i)
{
	const char *s = r->buf;
	for (unsigned k = 0; k < i; k++) {
		s = strchr(s, '\n');
		assert_non_null(s);
		s++;
	}
	const char *nl = strchr(s, '\n');
	assert_non_null(nl);
	json_error_t jerr;
	json_t *v = json_loadb(s, (size_t)(nl - s), 0, &jerr);
	if (!v)
		fail_msg("reply line %u is not JSON: %.*s", i, (int)(nl - s), s);
	return v;
}

static void test_socket_session(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	struct stat st;
	assert_int_equal(lstat(t->d->ctl->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);

	int fd = client_connect(t);
	static const char req[] =
	    "{\"jsonrpc\": \"2.0\", \"method\": \"uptime\"}\n"
	    "\n"
	    "{\"jsonrpc\": \"2.0\", \"method\": \"nosuch\", \"id\": 1}\n"
	    "[{\"method\": \"uptime\", \"id\": 2}, {\"method\": \"uptime\"}]\n"
	    "{\"method\": \"uptime\", \"params\": 5, \"id\": 3}\n";
	/* Byte by byte on the first line, to see lines reassembled. */
	for (size_t i = 0; i < 20; i++) {
		client_send(t, fd, req + i, 1);
		uv_run(&t->loop, UV_RUN_NOWAIT);
	}
	client_send(t, fd, req + 20, sizeof(req) - 1 - 20);
	struct replies r;
	client_wait(t, fd, &r, 3, false);
	assert_int_equal(r.lines, 3);
	assert_false(r.eof);
	json_t *v = line_json(&r, 0);
	assert_error(v, CTL_METHOD_NOT_FOUND, "1");
	json_decref(v);
	v = line_json(&r, 1);
	assert_true(json_is_array(v));
	assert_int_equal(json_array_size(v), 1);
	json_decref(v);
	v = line_json(&r, 2);
	assert_error(v, CTL_INVALID_PARAMS, "3");
	json_decref(v);

	/* A line that is not JSON: answered, then the connection is closed. */
	client_sends(t, fd, "{oops\n{\"method\": \"uptime\", \"id\": 4}\n");
	client_wait(t, fd, &r, 1, true);
	assert_int_equal(r.lines, 1);
	v = line_json(&r, 0);
	assert_error(v, CTL_PARSE_ERROR, "null");
	json_decref(v);
	close(fd);

	/* Other clients are unaffected. */
	fd = client_connect(t);
	client_sends(t, fd, "{\"method\": \"getconnectioncount\", \"id\": 5}\n");
	client_wait(t, fd, &r, 1, false);
	v = line_json(&r, 0);
	assert_int_equal(json_integer_value(json_object_get(v, "result")), 0);
	json_decref(v);
	close(fd);
	assert_int_equal(tf_shutdown_calls, 0);
}

static void test_socket_last_line_without_newline(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	int fd = client_connect(t);
	static const char req[] = "{\"method\": \"uptime\", \"id\": 77}";
	client_send(t, fd, req, sizeof(req) - 1);
	shutdown(fd, SHUT_WR);
	struct replies r;
	client_wait(t, fd, &r, 1, true);
	json_t *v = line_json(&r, 0);
	assert_int_equal(json_integer_value(json_object_get(v, "id")), 77);
	json_decref(v);
	close(fd);
}

static void test_socket_overlong_line(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	int fd = client_connect(t);
	size_t n = CTL_MAX_LINE + 4096;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	client_send(t, fd, big, n);
	free(big);
	struct replies r;
	client_wait(t, fd, &r, 1, true);
	json_t *v = line_json(&r, 0);
	assert_error(v, CTL_INVALID_REQUEST, "null");
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_object_get(v, "error"), "message")),
	           "longer than"));
	json_decref(v);
	close(fd);
}

static void test_socket_stop(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	/* With an id: the reply goes out first, then the shutdown starts. */
	int fd = client_connect(t);
	client_sends(t, fd, "{\"method\": \"stop\", \"id\": 1}\n");
	struct replies r;
	client_wait(t, fd, &r, 1, false);
	for (int i = 0; i < 100 && !tf_shutdown_calls; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(tf_shutdown_calls, 1);
	close(fd);
}

static void test_socket_stop_notification(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	/* As a notification there is no reply to wait for: it still stops. */
	int fd = client_connect(t);
	client_sends(t, fd, "{\"jsonrpc\": \"2.0\", \"method\": \"stop\"}\n");
	for (int i = 0; i < 2000 && !tf_shutdown_calls; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(100);
	}
	if (tf_shutdown_calls != 1)
		fail_msg("a stop notification started %d shutdowns, expected 1", tf_shutdown_calls);
	assert_string_equal(tf_shutdown_why, "stop requested on the control socket");
	close(fd);
}

static void test_socket_path_checks(void **state)
{
	struct tf *t = *state;
	char path[96]; /* fits sun_path */
	snprintf(path, sizeof(path), "%s/control.sock", t->dir);

	/* Something that is not a socket is left alone: a startup error. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(ctl_start(t->d), -EEXIST);
	assert_true(tf_log_contains(t, "is not a socket"));
	ctl_close(t->d);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(path);

	/* A socket file nobody listens on (a crashed peerd's) is replaced. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	assert_int_equal(ctl_start(t->d), 0);
	assert_true(tf_log_contains(t, "replacing stale control socket"));
	int fd = client_connect(t);
	client_sends(t, fd, "{\"method\": \"uptime\", \"id\": 1}\n");
	struct replies r;
	client_wait(t, fd, &r, 1, false);
	close(fd);

	/* A live one means another peerd: refused, and not removed. */
	struct tf *other = tf_new();
	xfree(other->conf.datadir);
	xfree(other->conf.netdir);
	other->conf.datadir = xstrdup(t->dir);
	other->conf.netdir = xstrdup(t->dir);
	assert_int_equal(ctl_start(other->d), -EADDRINUSE);
	ctl_close(other->d);
	assert_int_equal(lstat(path, &st), 0);
	tf_free(other);
	fd = client_connect(t);
	client_sends(t, fd, "{\"method\": \"uptime\", \"id\": 2}\n");
	client_wait(t, fd, &r, 1, false);
	close(fd);
	ctl_close(t->d);
	uv_run(&t->loop, UV_RUN_NOWAIT);
	/* Removed at close. */
	assert_int_not_equal(lstat(path, &st), 0);
}

/* ---- chain methods: the validation thread and back ------------------------- */

/* Run the loop until the validation thread has nothing queued or running. */
static void drain_validation(struct tf *t)
{
	struct validation *v = t->d->val;
	for (int spins = 0; spins < 30000; spins++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		uv_mutex_lock(&v->mu);
		bool idle = !v->in_head && !v->running && !v->out_head;
		uv_mutex_unlock(&v->mu);
		if (idle)
			return;
		usleep(100);
	}
	fail_msg("the validation thread did not finish its jobs");
}

/* Jobs posted to the validation thread so far. */
static uint64_t posted(struct tf *t)
{
	uv_mutex_lock(&t->d->val->mu);
	uint64_t n = t->d->val->posted;
	uv_mutex_unlock(&t->d->val->mu);
	return n;
}

/* The id of element i of a batch reply, or -1 when it has none. */
static json_int_t batch_id(json_t *a, size_t i)
{
	json_t *id = json_object_get(json_array_get(a, i), "id");
	return json_is_integer(id) ? json_integer_value(id) : -1;
}

static void test_chain_method_without_client(void **state)
{
	struct tf *t = *state;
	/* ctl_reply has no client to answer later: a chain method is refused
	 * at once instead of blocking the loop. */
	json_t *r = reply(t, "{\"method\": \"getblockcount\", \"id\": 1}", NULL);
	assert_error(r, CTL_MISC_ERROR, "1");
	json_decref(r);
	/* help lists both kinds. */
	r = reply(t, "{\"method\": \"help\", \"id\": 2}", NULL);
	const char *text = json_string_value(json_object_get(r, "result"));
	assert_non_null(strstr(text, "getblockchaininfo"));
	assert_non_null(strstr(text, "getpeerinfo"));
	json_decref(r);
}

static void test_async_batch_order(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	assert_int_equal(validation_start(t->d, NULL, NULL), 0);
	validation_hold(t->d, true);
	int fd = client_connect(t);
	client_sends(t, fd,
	             "[{\"method\": \"getblockcount\", \"id\": 1},"
	             " {\"method\": \"uptime\", \"id\": 2},"
	             " {\"method\": \"getbestblockhash\"},"
	             " {\"method\": \"getblockhash\", \"params\": [0], \"id\": 3},"
	             " {\"method\": \"nosuch\", \"id\": 4}]\n"
	             "{\"method\": \"uptime\", \"id\": 5}\n");
	for (int i = 0; i < 200; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	/* Nothing yet: the batch waits for its chain parts, and the next
	 * line waits behind the batch. */
	char b;
	assert_true(recv(fd, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN);
	/* Another client is not held up. */
	int other = client_connect(t);
	client_sends(t, other, "{\"method\": \"uptime\", \"id\": 9}\n");
	struct replies r;
	client_wait(t, other, &r, 1, false);
	close(other);

	validation_hold(t->d, false);
	client_wait(t, fd, &r, 2, false);
	json_t *a = line_json(&r, 0);
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 4); /* the notification has no reply */
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(batch_id(a, i), (json_int_t)i + 1);
	/* No chain in the fixture: the chain parts say so, in their places. */
	assert_error(json_array_get(a, 0), CTL_MISC_ERROR, "1");
	assert_true(json_is_integer(json_object_get(json_array_get(a, 1), "result")));
	assert_error(json_array_get(a, 2), CTL_MISC_ERROR, "3");
	assert_error(json_array_get(a, 3), CTL_METHOD_NOT_FOUND, "4");
	json_decref(a);
	json_t *v = line_json(&r, 1);
	assert_int_equal(json_integer_value(json_object_get(v, "id")), 5);
	json_decref(v);
	/* Params errors are found on the loop, before anything is posted. */
	client_sends(t, fd, "{\"method\": \"getblockhash\", \"id\": 6}\n");
	client_wait(t, fd, &r, 1, false);
	v = line_json(&r, 0);
	assert_error(v, CTL_MISC_ERROR, "6");
	json_decref(v);
	close(fd);
}

static void test_async_client_closes_mid_request(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	assert_int_equal(validation_start(t->d, NULL, NULL), 0);

	/* The client hangs up while its batch is queued: its requests are not
	 * read meanwhile, so the server learns of it when the reply cannot be
	 * written, and closes it then. */
	validation_hold(t->d, true);
	int fd = client_connect(t);
	client_sends(t, fd,
	             "[{\"method\": \"getblockcount\", \"id\": 1}, {\"method\": \"getdifficulty\", "
	             "\"id\": 2}]\n");
	for (int i = 0; i < 2000 && posted(t) < 2; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(posted(t), 2);
	close(fd);
	validation_hold(t->d, false);
	drain_validation(t);
	for (int i = 0; i < 2000 && t->d->ctl->n_clients; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(100);
	}
	assert_int_equal(t->d->ctl->n_clients, 0);

	/* The server closes the client first (as at shutdown) while its jobs
	 * wait: they finish with nobody to answer, and the line is freed by
	 * the last of them, never used after its client (ASan run). */
	validation_hold(t->d, true);
	fd = client_connect(t);
	client_sends(t, fd,
	             "[{\"method\": \"getblockcount\", \"id\": 3}, {\"method\": \"uptime\", "
	             "\"id\": 4}, {\"method\": \"getbestblockhash\", \"id\": 5}]\n");
	for (int i = 0; i < 2000 && posted(t) < 4; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(posted(t), 4);
	ctl_close(t->d);
	for (int i = 0; i < 2000 && t->d->ctl->n_clients; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(t->d->ctl->n_clients, 0);
	validation_hold(t->d, false);
	drain_validation(t);
	close(fd);
}

static void test_async_shutdown_in_flight(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	assert_int_equal(validation_start(t->d, NULL, NULL), 0);
	validation_hold(t->d, true);
	int fd = client_connect(t);
	client_sends(t, fd, "{\"method\": \"getblockcount\", \"id\": 1}\n");
	for (int i = 0; i < 2000 && posted(t) == 0; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	/* Shutdown begins with the job still queued: it comes back cancelled
	 * and its client gets an answer instead of silence. */
	validation_stop(t->d);
	struct replies r;
	client_wait(t, fd, &r, 1, false);
	json_t *v = line_json(&r, 0);
	assert_error(v, CTL_MISC_ERROR, "1");
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_object_get(v, "error"), "message")),
	           "shutting down"));
	json_decref(v);
	/* Posting after the stop is refused at once, not queued forever. */
	client_sends(t, fd, "{\"method\": \"getblockcount\", \"id\": 2}\n");
	client_wait(t, fd, &r, 1, false);
	v = line_json(&r, 0);
	assert_error(v, CTL_MISC_ERROR, "2");
	json_decref(v);
	close(fd);
}

int main(void)
{
	/* As peerd: a client gone before its reply is an error code, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_parse_error, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_jsonrpc_1_0, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_request, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_method_not_found, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_params, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_success_and_ids, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_batch_bound, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_batch, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_notifications_get_no_reply, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_stop_flag, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_reply_oom, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_session, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_last_line_without_newline, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_overlong_line, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_stop, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_stop_notification, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socket_path_checks, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_chain_method_without_client, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_async_batch_order, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_async_client_closes_mid_request, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_async_shutdown_in_flight, tf_setup, tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
