/*
 * daemon/ctl/rpc_http_req.c: one HTTP request on the loop (ctl/rpc_http.c
 * drives libmicrohttpd from libuv): the checks Core makes before a call
 * (-rpcallowip, method, path, size, authentication with its 250 ms
 * deterrent, -rpcwhitelist), the gate of -rpcthreads and -rpcworkqueue,
 * and the call itself.
 *
 * A single JSON-RPC call is parsed once (rpc_jsonrpc_begin). A call the
 * loop answers at once from its chain view (getblockcount) is answered
 * right there (ctl_inproc_direct), in the same MHD_run; any other goes to
 * the dispatcher from the loop itself (ctl_inproc_submit) and its reply is
 * put in Core's envelope with the tree parsed the first time
 * (rpc_jsonrpc_finish). One that waits (the validation thread) suspends
 * its connection until the reply comes. No thread is woken for either. REST and batches make
 * several calls through blocking code (ctl/rest.c, the batch prefetch), so
 * they go to a worker thread and the connection waits suspended.
 *
 * Threads: the loop's, all of it, but rpc_http_req_work (a worker's).
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rest.h"
#include "daemon/ctl/rpc.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/** Core's deterrent after a wrong password. */
#define RPC_AUTH_DELAY_MS 250
/*
 * libmicrohttpd's memory per connection (headers in and out, the read
 * buffer), zeroed again for every request of a keep-alive connection: at
 * its default of 32 kB that memset was 4 % of the loop's time under 16
 * clients of getblockcount. 16 kB still takes request headers past Core's
 * 8 kB limit (MAX_HEADERS_SIZE); a body never has to fit (it is handed
 * over in pieces).
 */
#define RPC_CONN_POOL (16u * 1024u)
/** Longest request body: what the control socket takes as one line, less the envelope. */
#define RPC_MAX_BODY (CTL_MAX_LINE - 4096u)

/* rpc_req.early: a REST request (ctl/rest.c answers it, without authentication, as Core). */
#define RPC_EARLY_REST 1u
/* rpc_req.early: not POST on the JSON-RPC path, with Core's sentence. */
#define RPC_EARLY_POST_ONLY 1405u
/* rpc_req.early: the request line and headers over RPC_MAX_HEADERS (libevent's 400). */
#define RPC_EARLY_HEADERS_TOO_LARGE 1400u
/*
 * Core's MAX_HEADERS_SIZE, as libevent counts it: the request line and each
 * header line, without their line ends. Past it libevent answers 400 with
 * its own page (below) and closes. Past RPC_CONN_POOL, libmicrohttpd
 * answers 431 before peerd sees the request (doc/rpc.md).
 */
#define RPC_MAX_HEADERS 8192u
#define RPC_BAD_REQUEST_PAGE                                                                       \
	"<HTML><HEAD>\n<TITLE>400 Bad Request</TITLE>\n</HEAD><BODY>\n<H1>Bad Request</H1>\n"      \
	"</BODY></HTML>\n"

static void addr_text(const struct sockaddr *sa, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(buf, n, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, n, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		snprintf(buf, n, "?");
	}
}

static void client_text(struct MHD_Connection *conn, char *buf, size_t n)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	addr_text(ci ? ci->client_addr : NULL, buf, n);
}

/* ---- answers -------------------------------------------------------------- */

/* Queue status and body (taken; NULL: none) on conn. */
static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                               const char *ctype, bool challenge)
{
	struct MHD_Response *r =
	    body ? MHD_create_response_from_buffer_with_free_callback(len, body, xfree)
	         : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		xfree(body);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (challenge)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Basic realm=\"jsonrpc\"");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, const char *t)
{
	char *b = t ? xstrdup(t) : NULL;
	return respond(conn, status, b, b ? strlen(b) : 0, NULL, false);
}

/* libevent's own 400 page, and the connection closed after it, as Core's. */
static enum MHD_Result respond_bad_request(struct MHD_Connection *conn)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(RPC_BAD_REQUEST_PAGE), (void *)RPC_BAD_REQUEST_PAGE, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_BAD_REQUEST, r);
	MHD_destroy_response(r);
	return ret;
}

/* r's answer, now that the handler runs for it again (or for the first time). */
static enum MHD_Result respond_ready(struct rpc_req *r)
{
	struct rpc_answer a = r->ans;
	r->ans.body = NULL;
	return respond(r->conn, a.status, a.body, a.len, r->ctype, r->challenge);
}

static void set_answer(struct rpc_req *r, unsigned status, const char *text)
{
	r->ans.status = status;
	r->ans.body = text ? xstrdup(text) : NULL;
	r->ans.len = r->ans.body ? strlen(r->ans.body) : 0;
	r->ctype = NULL;
}

/* ---- the gate (Core's rpcthreads and work queue) -------------------------- */

static void start(struct rpc_req *r);

static void ready(struct rpc_req *r);

/* Requests on the work queue take the slots freed (once stopping, their 503). */
static void gate_next(struct rpc_http *h)
{
	/* A request started here may be answered at once (from the view) and
	 * come back here through ready(): the outer loop takes the next one,
	 * so the stack does not grow with the work queue. */
	if (h->gating)
		return;
	h->gating = true;
	while (h->queue && (h->active < h->threads || h->stopping)) {
		struct rpc_req *r = h->queue;
		h->queue = r->next;
		if (!h->queue)
			h->queue_tail = &h->queue;
		r->next = NULL;
		h->waiting--;
		if (h->stopping) {
			set_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, "Work queue depth exceeded");
			ready(r);
			continue;
		}
		h->active++;
		r->counted = true;
		start(r);
	}
	h->gating = false;
}

/* r's answer is set: give its slot back and let libmicrohttpd send it. */
static void ready(struct rpc_req *r)
{
	struct rpc_http *h = r->h;
	r->state = RPC_RQ_READY;
	if (r->counted) {
		r->counted = false;
		h->active--;
	}
	if (r->suspended) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
		rpc_http_kick(h);
	}
	gate_next(h);
}

static void suspend(struct rpc_req *r)
{
	if (!r->suspended) {
		MHD_suspend_connection(r->conn);
		r->suspended = true;
	}
}

/* ---- a single call on the loop -------------------------------------------- */

/* rpc_call_fn for ctl/rpc_jsonrpc.c's two passes: learn the line, then give the reply. */
static char *two_pass_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	struct rpc_req *r = ctx;
	if (r->replaying) {
		char *rep = r->reply;
		r->reply = NULL;
		*out_len = rep ? r->reply_len : 0;
		return rep;
	}
	if (!r->line) {
		r->line = xmalloc(len + 1);
		if (r->line) {
			memcpy(r->line, line, len);
			r->line[len] = 0;
			r->line_len = len;
		}
	}
	return NULL;
}

/* ctl_inproc_done_fn: the dispatcher's reply; the envelope made with it. */
static void on_reply(void *arg, char *reply, size_t len, uint8_t *bytes, size_t n_bytes)
{
	struct rpc_req *r = arg;
	struct rpc_http *h = r->h;
	xfree(bytes); /* none asked for */
	(void)n_bytes;
	struct rpc_jsonrpc_call *pc = r->pending;
	r->pending = NULL;
	if (r->orphan) {
		xfree(reply);
		rpc_jsonrpc_call_free(pc);
		xfree(r->line);
		xfree(r->body);
		xfree(r);
		return;
	}
	h->in_reply++;
	if (pc)
		rpc_jsonrpc_finish(pc, reply, len, &r->ans);
	else
		rpc_jsonrpc_answer_reply(r->body ? r->body : "", r->len, reply, len, &r->ans);
	r->ctype = r->ans.body ? "application/json" : NULL;
	ready(r);
	h->in_reply--;
}

static bool is_batch(const struct rpc_req *r)
{
	for (size_t i = 0; i < r->len; i++) {
		char c = r->body[i];
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
			return c == '[';
	}
	return false;
}

/* ---- a REST request of one call on the loop ------------------------------- */

/*
 * rest_bytes_fn for the two passes over a REST request: the first call is
 * learnt, then answered with the reply; a second call in the second pass
 * means the endpoint needs more (headers, getutxos): a worker does it all
 * again (every REST call reads, so running one twice changes nothing).
 */
static char *rest_pass_bytes(void *ctx, const char *line, size_t len, size_t *out_len,
                             uint8_t **bytes, size_t *n_bytes)
{
	struct rpc_req *r = ctx;
	if (bytes) {
		*bytes = NULL;
		*n_bytes = 0;
	}
	if (++r->n_calls > 1) {
		if (r->replaying)
			r->needs_worker = true;
		return NULL;
	}
	if (r->replaying) {
		char *rep = r->reply;
		r->reply = NULL;
		*out_len = rep ? r->reply_len : 0;
		if (bytes) {
			*bytes = r->bytes;
			*n_bytes = r->n_bytes;
			r->bytes = NULL;
		}
		return rep;
	}
	r->line_bytes = bytes != NULL;
	return two_pass_call(ctx, line, len, out_len);
}

static char *rest_pass_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	return rest_pass_bytes(ctx, line, len, out_len, NULL, NULL);
}

static void rest_pass(struct rpc_req *r, struct rpc_answer *out)
{
	struct rest_answer a;
	r->n_calls = 0;
	rest_http_answer(r->conn, r->url, r->body, r->len, rest_pass_call, rest_pass_bytes, r, &a);
	*out = (struct rpc_answer){.status = a.status, .body = a.body, .len = a.len};
	r->ctype = a.type;
}

static void on_rest_reply(void *arg, char *reply, size_t len, uint8_t *bytes, size_t n_bytes)
{
	struct rpc_req *r = arg;
	struct rpc_http *h = r->h;
	if (r->orphan) {
		xfree(reply);
		xfree(bytes);
		xfree(r->line);
		xfree(r->body);
		xfree(r);
		return;
	}
	h->in_reply++;
	r->reply = reply;
	r->reply_len = len;
	r->bytes = bytes;
	r->n_bytes = n_bytes;
	r->replaying = true;
	struct rpc_answer a;
	rest_pass(r, &a);
	r->replaying = false;
	xfree(r->reply);
	xfree(r->bytes);
	r->reply = NULL;
	r->bytes = NULL;
	if (r->needs_worker) {
		xfree(a.body);
		r->worker = true;
		rpc_http_pool_push(h, r); /* start() suspends it when this ran inside it */
	} else {
		r->ans = a;
		ready(r);
	}
	h->in_reply--;
}

static void rest_start(struct rpc_req *r)
{
	struct rpc_http *h = r->h;
	struct rpc_answer a;
	rest_pass(r, &a);
	if (!r->line) {
		r->ans = a;
		ready(r);
		return;
	}
	xfree(a.body);
	h->on_loop++;
	if (ctl_inproc_submit(h->ip, r->line, r->line_len, r->line_bytes, h->in_reply == 0,
	                      on_rest_reply, r))
		on_rest_reply(r, NULL, 0, NULL, 0);
	if (r->state == RPC_RQ_RUNNING)
		suspend(r);
}

/* rpc_direct_fn: a call the loop answers from its view, now. */
static bool direct_call(void *ctx, const char *method, json_t *params, struct ctl_result *res)
{
	struct rpc_req *r = ctx;
	if (!ctl_inproc_direct(r->h->ip, method, params, res))
		return false;
	r->h->on_loop++;
	r->h->direct++;
	return true;
}

/* r holds a slot: its call goes (to the dispatcher, or a worker). */
static void start(struct rpc_req *r)
{
	struct rpc_http *h = r->h;
	r->state = RPC_RQ_RUNNING;
	if (r->rest) {
		rest_start(r);
		return;
	}
	if (is_batch(r)) {
		r->worker = true;
		suspend(r);
		rpc_http_pool_push(h, r);
		return;
	}
	struct rpc_answer a;
	rpc_jsonrpc_begin(r->body ? r->body : "", r->len, direct_call, r, &a, &r->pending);
	if (!r->pending) {
		/* Answered without the dispatcher's queue (from the view, a parse
		 * error, an unknown method). */
		r->ans = a;
		r->ctype = a.body ? "application/json" : NULL;
		ready(r);
		return;
	}
	h->on_loop++;
	size_t n = 0;
	const char *line = rpc_jsonrpc_call_line(r->pending, &n);
	/* From inside a reply callback the dispatcher is on the stack: its
	 * turn comes on the next iteration, not nested. */
	if (ctl_inproc_submit(h->ip, line, n, false, h->in_reply == 0, on_reply, r))
		on_reply(r, NULL, 0, NULL, 0); /* peerd is stopping: Core's envelope of the error */
	if (r->state == RPC_RQ_RUNNING)
		suspend(r);
}

/* The worker's job. */
static char *door_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call(h->ip, line, len, out_len);
}

static char *door_call_bytes(void *ctx, const char *line, size_t len, size_t *out_len,
                             uint8_t **bytes, size_t *n_bytes)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call_bytes(h->ip, line, len, out_len, bytes, n_bytes);
}

static char **door_batch(void *ctx, const char *line, size_t len, size_t *n, bool *batch)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call_texts(h->ip, line, len, n, batch);
}

void rpc_http_req_work(struct rpc_req *r)
{
	struct rpc_http *h = r->h;
	if (r->rest) {
		struct rest_answer a;
		rest_http_answer(r->conn, r->url, r->body, r->len, door_call, door_call_bytes, h,
		                 &a);
		r->ans = (struct rpc_answer){.status = a.status, .body = a.body, .len = a.len};
		r->ctype = a.type;
		return;
	}
	rpc_jsonrpc_answer_batched(r->body ? r->body : "", r->len, door_call, door_batch, h,
	                           &r->ans);
	r->ctype = r->ans.body ? "application/json" : NULL;
}

void rpc_http_req_ready(struct rpc_req *r)
{
	if (r->orphan) {
		xfree(r->ans.body);
		rpc_jsonrpc_call_free(r->pending);
		xfree(r->line);
		xfree(r->body);
		xfree(r);
		return;
	}
	ready(r);
}

/* ---- the 401 deterrent ------------------------------------------------------ */

static void delay_arm(struct rpc_http *h)
{
	if (!h->delayed)
		return;
	uint64_t now = rpc_http_now_ms();
	uint64_t ms = h->delayed->due_ms > now ? h->delayed->due_ms - now : 0;
	(void)uv_timer_start(&h->delay, rpc_http_delay_cb, ms, 0);
}

void rpc_http_delay_cb(uv_timer_t *t)
{
	struct rpc_http *h = t->data;
	uint64_t now = rpc_http_now_ms();
	while (h->delayed && h->delayed->due_ms <= now) {
		struct rpc_req *r = h->delayed;
		h->delayed = r->next;
		if (!h->delayed)
			h->delayed_tail = &h->delayed;
		r->next = NULL;
		ready(r);
	}
	delay_arm(h);
}

void rpc_http_end_waiting(struct rpc_http *h)
{
	while (h->queue) {
		struct rpc_req *r = h->queue;
		h->queue = r->next;
		r->next = NULL;
		h->waiting--;
		set_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, "Work queue depth exceeded");
		ready(r);
	}
	h->queue_tail = &h->queue;
	while (h->delayed) {
		struct rpc_req *r = h->delayed;
		h->delayed = r->next;
		r->next = NULL;
		ready(r);
	}
	h->delayed_tail = &h->delayed;
}

/* ---- libmicrohttpd's callbacks -------------------------------------------- */

static struct rpc_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void conn_track(struct MHD_Connection *conn, uint64_t since)
{
	struct rpc_conn *c = conn_of(conn);
	if (c)
		c->since_ms = since;
}

static void conn_forget_auth(struct rpc_conn *c)
{
	if (c->auth) {
		sodium_memzero(c->auth, strlen(c->auth));
		xfree(c->auth);
		c->auth = NULL;
	}
	sodium_memzero(c->auth_user, sizeof(c->auth_user));
}

/*
 * Core's check of the Authorization header, the user into user (cap
 * bytes). A connection that sends the header it was last let in with is
 * let in again by a constant-time compare with it: decoding and hashing
 * it (HMAC-SHA256 and base64) was 3 % of the loop's time on keep-alive
 * connections, and only the holder of the password could have sent it
 * the first time. Any other header is checked in full.
 */
static bool auth_user(struct rpc_http *h, struct MHD_Connection *conn, const char *auth, char *user,
                      size_t cap)
{
	struct rpc_conn *c = conn_of(conn);
	if (c && c->auth && rpc_timing_equal(auth, c->auth)) {
		snprintf(user, cap, "%s", c->auth_user);
		return true;
	}
	if (!rpc_auth_user(&h->auth, auth, user, cap))
		return false;
	if (c) {
		conn_forget_auth(c);
		c->auth = xstrdup(auth); /* no memory: no shortcut next time */
		snprintf(c->auth_user, sizeof(c->auth_user), "%s", user);
	}
	return true;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct rpc_http *h = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct rpc_conn *c = ci ? xcalloc(1, sizeof(*c)) : NULL;
		if (!c)
			return;
		c->fd = ci->connect_fd;
		c->since_ms = rpc_http_now_ms();
		c->next = h->conns;
		if (c->next)
			c->next->prev = c;
		h->conns = c;
		*socket_context = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		struct rpc_conn *c = *socket_context;
		if (c->prev)
			c->prev->next = c->next;
		else
			h->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		conn_forget_auth(c);
		xfree(c);
		*socket_context = NULL;
	}
}

static void unlink_from(struct rpc_req **head, struct rpc_req ***tail, struct rpc_req *r)
{
	struct rpc_req **pp = head;
	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (!*pp)
		return;
	*pp = r->next;
	if (*tail == &r->next)
		*tail = pp;
	r->next = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct rpc_http *h = cls;
	struct rpc_req *r = *con_cls;
	(void)toe;
	/* Keep-alive: the next request's bytes are timed from now. */
	conn_track(conn, rpc_http_now_ms());
	if (!r)
		return;
	*con_cls = NULL;
	h->inflight--;
	/* A suspended connection does not end; these are for safety only. */
	if (r->state == RPC_RQ_QUEUED) {
		unlink_from(&h->queue, &h->queue_tail, r);
		h->waiting--;
	} else if (r->state == RPC_RQ_DELAYED) {
		unlink_from(&h->delayed, &h->delayed_tail, r);
	} else if (r->state == RPC_RQ_RUNNING) {
		/* Its call is out: whoever answers it frees it. */
		if (r->counted)
			h->active--;
		r->counted = false;
		r->orphan = true;
		r->conn = NULL;
		return;
	}
	xfree(r->ans.body);
	rpc_jsonrpc_call_free(r->pending);
	xfree(r->line);
	xfree(r->body);
	xfree(r);
}

/* The first call, with the headers: what can be decided before the body. */
/* MHD_get_connection_values' callback: a header line's bytes as sent ("Key: value"). */
static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	*(size_t *)cls += strlen(key) + 2u + (value ? strlen(value) : 0u);
	return MHD_YES;
}

/* A query argument's bytes in the request line ("?k=v", "&k=v"). */
static enum MHD_Result count_argument(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
	(void)kind;
	*(size_t *)cls += 1u + strlen(key) + (value ? 1u + strlen(value) : 0u);
	return MHD_YES;
}

/* The request line and headers as libevent adds them up against Core's limit. The
 * request line is rebuilt from its parts (the query from its arguments): the
 * count is exact for the usual "Key: value" lines and single spaces. */
static size_t head_bytes(struct MHD_Connection *conn, const char *url, const char *method,
                         const char *version)
{
	size_t n = strlen(method) + 1u + strlen(url) + 1u + strlen(version);
	(void)MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, count_argument, &n);
	(void)MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &n);
	return n;
}

static unsigned judge_headers(struct rpc_http *h, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version)
{
	/* libevent refuses it while parsing, before any of Core's handlers. */
	if (head_bytes(conn, url, method, version) > RPC_MAX_HEADERS)
		return RPC_EARLY_HEADERS_TOO_LARGE;
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ci || !rpc_subnets_allow(h->allow, h->n_allow, ci->client_addr)) {
		char who[80];
		addr_text(ci ? ci->client_addr : NULL, who, sizeof(who));
		DLOG_WARNING(&h->d->log, DLOG_CTL,
		             "HTTP request from %s rejected: Client network is not allowed RPC "
		             "access",
		             who);
		h->rejected++;
		return MHD_HTTP_FORBIDDEN;
	}
	/* Core's http_request_cb knows GET, POST, HEAD and PUT; its "/" handler takes POST. */
	if (strcmp(method, "GET") && strcmp(method, "POST") && strcmp(method, "HEAD") &&
	    strcmp(method, "PUT"))
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	if (h->rest && rest_match(url))
		return RPC_EARLY_REST;
	if (strcmp(url, "/") != 0 && strncmp(url, "/wallet/", 8) != 0)
		return MHD_HTTP_NOT_FOUND;
	if (strcmp(method, "POST") != 0)
		return RPC_EARLY_POST_ONLY;
	return 0;
}

/* Body bytes: kept up to the bound, counted past it. */
static enum MHD_Result take_body(struct rpc_req *r, const char *data, size_t n)
{
	if ((r->early && r->early != RPC_EARLY_REST) || r->too_big)
		return MHD_YES;
	if (r->len + n > RPC_MAX_BODY) {
		r->too_big = true;
		xfree(r->body);
		r->body = NULL;
		r->len = r->cap = 0;
		return MHD_YES;
	}
	if (r->len + n + 1 > r->cap) {
		size_t nc = r->cap ? r->cap : 4096;
		while (nc < r->len + n + 1)
			nc *= 2;
		char *nb = xrealloc(r->body, nc);
		if (!nb)
			return MHD_NO;
		r->body = nb;
		r->cap = nc;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = 0;
	return MHD_YES;
}

/* The whole request is here: answer it, or send it on its way. */
static enum MHD_Result whole(struct rpc_http *h, struct rpc_req *r)
{
	struct MHD_Connection *conn = r->conn;
	if (r->early == RPC_EARLY_POST_ONLY)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		                    "JSONRPC server handles only POST requests");
	if (r->early == RPC_EARLY_HEADERS_TOO_LARGE)
		return respond_bad_request(conn);
	if (r->early && r->early != RPC_EARLY_REST)
		return respond_text(conn, r->early, NULL);
	if (r->too_big)
		return respond_text(conn, 413, NULL);
	if (r->early == RPC_EARLY_REST) {
		r->rest = true;
	} else {
		const char *auth =
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
		if (!auth)
			return respond(conn, MHD_HTTP_UNAUTHORIZED, NULL, 0, NULL, true);
		char user[256];
		if (!auth_user(h, conn, auth, user, sizeof(user))) {
			char who[80];
			client_text(conn, who, sizeof(who));
			DLOG_WARNING(&h->d->log, DLOG_CTL,
			             "ThreadRPCServer incorrect password attempt from %s", who);
			h->bad_auth++;
			/* Stopping: nothing may be left suspended, and no timer runs. */
			if (h->stopping)
				return respond(conn, MHD_HTTP_UNAUTHORIZED, NULL, 0, NULL, true);
			/* Deter brute-forcing, as Core: the answer waits, the loop does not. */
			set_answer(r, MHD_HTTP_UNAUTHORIZED, NULL);
			r->challenge = true;
			r->state = RPC_RQ_DELAYED;
			r->due_ms = rpc_http_now_ms() + RPC_AUTH_DELAY_MS;
			*h->delayed_tail = r;
			h->delayed_tail = &r->next;
			if (h->delayed == r)
				delay_arm(h);
			suspend(r);
			return MHD_YES;
		}
		struct rpc_answer a;
		char why[400];
		if (rpc_whitelist_judge(&h->wl, user, r->body ? r->body : "", r->len, &a, why,
		                        sizeof(why))) {
			if (why[0])
				DLOG_INFO_(&h->d->log, DLOG_CTL, "%s", why);
			return respond(conn, a.status, a.body, a.len,
			               a.body ? "application/json" : NULL, false);
		}
	}
	/* Stopping (the answers under way are being sent): no new call, as
	 * the threaded server's gate refused them. */
	if (h->stopping)
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		                    "Work queue depth exceeded");
	if (h->active < h->threads) {
		h->active++;
		r->counted = true;
		start(r);
		if (r->state == RPC_RQ_READY && !r->suspended)
			return respond_ready(r);
		return MHD_YES;
	}
	if (h->waiting >= h->depth) {
		h->queue_full++;
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		                    "Work queue depth exceeded");
	}
	h->waiting++;
	r->state = RPC_RQ_QUEUED;
	*h->queue_tail = r;
	h->queue_tail = &r->next;
	suspend(r);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	struct rpc_http *h = cls;
	struct rpc_req *r = *con_cls;
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		r->h = h;
		r->conn = conn;
		r->url = url;
		h->inflight++;
		r->early = judge_headers(h, conn, url, method, version);
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		return take_body(r, upload_data, n);
	}
	if (r->state == RPC_RQ_READY)
		return respond_ready(r);
	if (r->state != RPC_RQ_READING)
		return MHD_YES; /* cannot happen: a waiting request's connection is suspended */
	/* The whole request is here: no longer the watchdog's. */
	conn_track(conn, 0);
	return whole(h, r);
}

struct MHD_Daemon *rpc_http_mhd_start(struct rpc_http *h, unsigned flags, uint16_t port,
                                      const struct sockaddr *sa)
{
	unsigned limit = (unsigned)(h->threads + h->depth) + 32u;
	return MHD_start_daemon(
	    flags, port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, sa,
	    MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)RPC_CONN_POOL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(h->timeout_ms / 1000u),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, h,
	    /* The URI as sent, as libevent gives it to Core's handlers (ctl/rest_http.c). */
	    MHD_OPTION_UNESCAPE_CALLBACK, rest_http_unescape, NULL, MHD_OPTION_END);
}
