/*
 * daemon/ctl/rest_http.c: the REST interface's side of libmicrohttpd
 * (ctl/rpc_http.c serves it): the URI as Core sees it, and the answer
 * queued on the connection.
 *
 * Core (libevent) hands its REST handlers the URI as the client sent it:
 * a path's %-escapes stay as they are ("Invalid height: a%20b"), while a
 * query parameter's value is decoded, '+' as a space; a query with an
 * argument that has no '=' (or no name) is no query at all. libmicrohttpd
 * decodes both by default, so the server installs rest_http_unescape
 * (which leaves everything as sent) and rest_query decodes values the way
 * libevent does.
 *
 * Threads: an HTTP worker thread (ctl/rpc_http_pool.c), while the loop
 * keeps the request's connection suspended: libmicrohttpd reads none of
 * its values meanwhile, so looking them up from the worker is safe.
 */
#include "daemon/ctl/rest.h"

#include <microhttpd.h>
#include <string.h>

#include "base/alloc.h"

size_t rest_http_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

/* One request's query: its connection and path, what libevent would make of it, the last value. */
struct query {
	struct MHD_Connection *conn;
	const char *path;
	bool checked, valid, uri_ok;
	char *last; /**< the value rest_query returned last (freed at the next call) */
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * libevent's evhttp_uri_parse for a path or a query: RFC 3986's unreserved
 * and sub-delimiter characters, ':', '@', '/', '?' and %-escapes of two hex
 * digits. `space`: a space stands for a '+' libmicrohttpd turned.
 */
static bool uri_chars_ok(const char *s, bool space)
{
	for (; *s; s++) {
		char c = *s;
		if (c == '%') {
			if (hexval(s[1]) < 0 || hexval(s[2]) < 0)
				return false;
			s += 2;
			continue;
		}
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=:@/?", c) ||
		          (space && c == ' ');
		if (!ok)
			return false;
	}
	return true;
}

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	struct query *q = cls;
	(void)kind;
	/* libevent drops the whole query for an argument without '=' or a name. */
	if (!value || !key || !*key)
		q->valid = false;
	if ((key && !uri_chars_ok(key, true)) || (value && !uri_chars_ok(value, true)))
		q->uri_ok = false;
	return MHD_YES;
}

/* rest_query_fn: libevent's evhttp_decode_uri with '+' as a space. */
static int rest_query(void *qctx, const char *key, const char **value)
{
	struct query *q = qctx;
	*value = NULL;
	if (!q->checked) {
		q->valid = true;
		q->uri_ok = uri_chars_ok(q->path, false);
		MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, check_arg, q);
		q->checked = true;
	}
	if (!q->uri_ok)
		return -1;
	const char *v =
	    q->valid ? MHD_lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, key) : NULL;
	if (!v)
		return 0;
	size_t n = strlen(v), k = 0;
	char *out = xmalloc(n + 1);
	if (!out)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '%' && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
			out[k++] = (char)(hexval(v[i + 1]) << 4 | hexval(v[i + 2]));
			i += 2;
		} else {
			out[k++] = v[i] == '+' ? ' ' : v[i];
		}
	}
	out[k] = 0;
	xfree(q->last);
	q->last = out;
	*value = out;
	return 0;
}

void rest_http_answer(struct MHD_Connection *conn, const char *url, const char *body, size_t len,
                      rpc_call_fn call, rest_bytes_fn call_bytes, void *ctx, struct rest_answer *a)
{
	struct query q = {.conn = conn, .path = url};
	struct rest_request rq = {.call_bytes = call_bytes,
	                          .path = url,
	                          .query = rest_query,
	                          .qctx = &q,
	                          .body = body,
	                          .len = len};
	rest_answer(&rq, call, ctx, a);
	xfree(q.last);
}
