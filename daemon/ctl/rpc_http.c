/*
 * daemon/ctl/rpc_http.c: the HTTP JSON-RPC server (Core 29's httpserver.cpp
 * and httprpc.cpp: -server, -rpcbind, -rpcport, -rpcallowip, -rpcthreads,
 * -rpcworkqueue, -rpcservertimeout), so bitcoin-cli and every tool that
 * talks to bitcoind talks to peerd unmodified (doc/rpc.md).
 *
 * One dispatcher behind both doors: this file runs no method. An HTTP
 * worker hands each call to the loop in process (ctl/inproc.c: a queue,
 * a uv_async, a condition variable), where it is served as a control
 * socket client of its own, so every method, its checks, the fairness
 * between clients, the reply budget and the chain calls that go to the
 * validation thread are the control socket's (ctl/server.c,
 * ctl/request.c), and the loop never waits for HTTP. ctl/rpc_jsonrpc.c puts
 * each reply into Core's envelope.
 *
 * Threads: libmicrohttpd's, a thread per connection
 * (MHD_USE_THREAD_PER_CONNECTION: a handler may block on its call), at most
 * rpcthreads of them running calls at once and rpcworkqueue more waiting;
 * beyond that 503 "Work queue depth exceeded", as Core. A watchdog thread
 * closes a connection whose request has been arriving for longer than
 * rpcservertimeout (a client sending a byte a second holds no worker, and
 * not its connection either). The loop thread only starts and stops it all.
 *
 * Lock order: `mu` is a leaf; nothing that may block (I/O, MHD calls,
 * sleeping) happens while holding it.
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rest.h"
#include "daemon/ctl/rpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/** Most endpoints (-rpcbind values, or ::1 and 127.0.0.1). */
#define RPC_MAX_LISTENERS CONF_MAX_LIST
/** Core's deterrent after a wrong password. */
#define RPC_AUTH_DELAY_MS 250
/** Longest request body: what the control socket takes as one line, less the envelope. */
#define RPC_MAX_BODY (CTL_MAX_LINE - 4096u)
/** At close, requests under way get this long to finish (the stop call's own reply). */
#define RPC_DRAIN_MS 500u
/** Connection threads' stacks: jansson's recursion is bounded (2048 levels). */
#define RPC_THREAD_STACK (512u * 1024u)

/* One HTTP connection, for the watchdog. */
struct rpc_conn {
	int fd;
	uint64_t since_ms; /**< (mu) a request has been arriving since; 0: none is */
	bool killed;       /**< (mu) the watchdog shut it down */
	struct rpc_conn *prev, *next;
};

/* rpc_req.early: a REST request (ctl/rest.c answers it, without authentication, as Core). */
#define RPC_EARLY_REST 1u

/* One request's state across libmicrohttpd's calls. */
struct rpc_req {
	unsigned early; /**< an answer decided from the headers (403, 404, 405), or 0 */
	char *body;
	size_t len, cap;
	bool too_big;
};

struct rpc_http {
	struct daemon *d;
	struct MHD_Daemon *mhd[RPC_MAX_LISTENERS];
	size_t n_mhd;
	struct rpc_auth auth;
	struct rpc_whitelist wl; /**< -rpcwhitelist (ctl/rpc_whitelist.c): read-only */
	struct ctl_inproc *ip;   /**< the dispatcher's door (d->ctl->inproc): any thread */
	struct rpc_subnet *allow;
	size_t n_allow;
	int threads, depth;
	bool rest; /**< -rest: Core's REST endpoints on the same port */
	uint64_t timeout_ms;
	uv_mutex_t mu;
	uv_cond_t cond;         /**< calls waiting at the gate; the closer waiting for inflight */
	uv_cond_t dog;          /**< the watchdog's own: no call wakes it */
	bool draining;          /**< (mu) rpc_http_close waits for inflight to reach 0 */
	int active, waiting;    /**< (mu) calls running, calls queued */
	int inflight;           /**< (mu) requests between their headers and their completion */
	bool stopping;          /**< (mu) */
	struct rpc_conn *conns; /**< (mu) */
	uv_thread_t watchdog;
	bool watchdog_started;
	uint64_t rejected, timed_out, queue_full, bad_auth; /**< (mu) */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void addr_text(const struct sockaddr *sa, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		port = ntohs(s4->sin_port);
		snprintf(buf, n, "%s:%u", ip, port);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		port = ntohs(s6->sin6_port);
		snprintf(buf, n, "[%s]:%u", ip, port);
	} else {
		snprintf(buf, n, "?");
	}
}

/* ---- the way to the dispatcher ---------------------------------------- */

/* rpc_call_fn: one line to the dispatcher in process (ctl/inproc.c), its reply back. */
static char *door_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call(h->ip, line, len, out_len);
}

/* rest_bytes_fn: as door_call, a result's bytes out of band (REST's binary answers). */
static char *door_call_bytes(void *ctx, const char *line, size_t len, size_t *out_len,
                             uint8_t **bytes, size_t *n_bytes)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call_bytes(h->ip, line, len, out_len, bytes, n_bytes);
}

/* rpc_batch_fn: a batch line the same way, its replies by request. */
static char **door_batch(void *ctx, const char *line, size_t len, size_t *n, bool *batch)
{
	struct rpc_http *h = ctx;
	return ctl_inproc_call_texts(h->ip, line, len, n, batch);
}

/* ---- the worker gate (Core's rpcthreads and work queue) ----------------- */

static int gate_enter(struct rpc_http *h)
{
	int rc = 0;
	uv_mutex_lock(&h->mu);
	if (h->active >= h->threads) {
		if (h->waiting >= h->depth) {
			h->queue_full++;
			rc = -1;
		} else {
			h->waiting++;
			while (h->active >= h->threads && !h->stopping)
				uv_cond_wait(&h->cond, &h->mu);
			h->waiting--;
			if (h->stopping)
				rc = -1;
		}
	}
	if (!rc)
		h->active++;
	uv_mutex_unlock(&h->mu);
	return rc;
}

static void gate_leave(struct rpc_http *h)
{
	uv_mutex_lock(&h->mu);
	h->active--;
	/* Only a waiter needs waking: a wakeup is a context switch per call. */
	if (h->waiting)
		uv_cond_signal(&h->cond);
	uv_mutex_unlock(&h->mu);
}

/* ---- libmicrohttpd's callbacks ------------------------------------------ */

static void conn_track(struct rpc_http *h, struct MHD_Connection *conn, uint64_t since)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct rpc_conn *c = ci ? ci->socket_context : NULL;
	if (!c)
		return;
	uv_mutex_lock(&h->mu);
	c->since_ms = since;
	uv_mutex_unlock(&h->mu);
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
		c->since_ms = now_ms();
		uv_mutex_lock(&h->mu);
		c->next = h->conns;
		if (c->next)
			c->next->prev = c;
		h->conns = c;
		uv_mutex_unlock(&h->mu);
		*socket_context = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		struct rpc_conn *c = *socket_context;
		uv_mutex_lock(&h->mu);
		if (c->prev)
			c->prev->next = c->next;
		else
			h->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		uv_mutex_unlock(&h->mu);
		xfree(c);
		*socket_context = NULL;
	}
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct rpc_http *h = cls;
	struct rpc_req *r = *con_cls;
	(void)toe;
	/* Keep-alive: the next request's bytes are timed from now. */
	conn_track(h, conn, now_ms());
	if (!r)
		return;
	xfree(r->body);
	xfree(r);
	*con_cls = NULL;
	uv_mutex_lock(&h->mu);
	h->inflight--;
	if (h->draining)
		uv_cond_broadcast(&h->cond);
	uv_mutex_unlock(&h->mu);
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                              bool json, bool challenge)
{
	struct MHD_Response *r =
	    body ? MHD_create_response_from_buffer_with_free_callback(len, body, xfree)
	         : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		xfree(body);
		return MHD_NO;
	}
	if (json)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (challenge)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Basic realm=\"jsonrpc\"");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *conn, unsigned status, const char *t)
{
	char *b = t ? xstrdup(t) : NULL;
	return answer(conn, status, b, b ? strlen(b) : 0, false, false);
}

/* A REST request, whole: ctl/rest_http.c answers it through the same workers and dispatcher. */
static enum MHD_Result rest_reply(struct rpc_http *h, struct MHD_Connection *conn, const char *url,
                                  const struct rpc_req *r)
{
	if (gate_enter(h))
		return answer_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "Work queue depth exceeded");
	bool ok = rest_http_serve(conn, url, r->body, r->len, door_call, door_call_bytes, h);
	gate_leave(h);
	return ok ? MHD_YES : MHD_NO;
}

/* The first call, with the headers: what can be decided before the body. */
static unsigned judge_headers(struct rpc_http *h, struct MHD_Connection *conn, const char *url,
                              const char *method)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ci || !rpc_subnets_allow(h->allow, h->n_allow, ci->client_addr)) {
		char who[80];
		addr_text(ci ? ci->client_addr : NULL, who, sizeof(who));
		DLOG_WARNING(&h->d->log, DLOG_CTL,
		             "HTTP request from %s rejected: Client network is not allowed RPC "
		             "access",
		             who);
		uv_mutex_lock(&h->mu);
		h->rejected++;
		uv_mutex_unlock(&h->mu);
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
		return 1000 + MHD_HTTP_METHOD_NOT_ALLOWED; /* with Core's sentence */
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	struct rpc_http *h = cls;
	struct rpc_req *r = *con_cls;
	(void)version;
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		uv_mutex_lock(&h->mu);
		h->inflight++;
		uv_mutex_unlock(&h->mu);
		r->early = judge_headers(h, conn, url, method);
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
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
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		return MHD_YES;
	}
	/* The whole request is here: no longer the watchdog's. */
	conn_track(h, conn, 0);
	if (r->early == 1000 + MHD_HTTP_METHOD_NOT_ALLOWED)
		return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		                   "JSONRPC server handles only POST requests");
	if (r->early == RPC_EARLY_REST)
		return r->too_big ? answer_text(conn, 413, NULL) : rest_reply(h, conn, url, r);
	if (r->early)
		return answer_text(conn, r->early, NULL);
	if (r->too_big)
		return answer_text(conn, 413, NULL);
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	if (!auth)
		return answer(conn, MHD_HTTP_UNAUTHORIZED, NULL, 0, false, true);
	char user[256];
	if (!rpc_auth_user(&h->auth, auth, user, sizeof(user))) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		char who[80];
		addr_text(ci ? ci->client_addr : NULL, who, sizeof(who));
		DLOG_WARNING(&h->d->log, DLOG_CTL,
		             "ThreadRPCServer incorrect password attempt from %s", who);
		uv_mutex_lock(&h->mu);
		h->bad_auth++;
		uv_mutex_unlock(&h->mu);
		/* Deter brute-forcing, as Core: this connection's thread waits, no worker. */
		uv_sleep(RPC_AUTH_DELAY_MS);
		return answer(conn, MHD_HTTP_UNAUTHORIZED, NULL, 0, false, true);
	}
	struct rpc_answer a;
	char why[400];
	if (rpc_whitelist_judge(&h->wl, user, r->body ? r->body : "", r->len, &a, why,
	                        sizeof(why))) {
		if (why[0])
			DLOG_INFO_(&h->d->log, DLOG_CTL, "%s", why);
		return answer(conn, a.status, a.body, a.len, a.body != NULL, false);
	}
	if (gate_enter(h))
		return answer_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "Work queue depth exceeded");
	rpc_jsonrpc_answer_batched(r->body ? r->body : "", r->len, door_call, door_batch, h, &a);
	gate_leave(h);
	return answer(conn, a.status, a.body, a.len, a.body != NULL, false);
}

/* ---- the watchdog: requests that take too long to arrive ----------------- */

static void watchdog(void *arg)
{
	struct rpc_http *h = arg;
	uv_mutex_lock(&h->mu);
	while (!h->stopping) {
		uint64_t now = now_ms();
		for (struct rpc_conn *c = h->conns; c; c = c->next) {
			if (c->since_ms && !c->killed && now - c->since_ms >= h->timeout_ms) {
				/* Its thread sees the socket end and closes the connection. */
				c->killed = true;
				h->timed_out++;
				shutdown(c->fd, SHUT_RDWR);
			}
		}
		uv_cond_timedwait(&h->dog, &h->mu, 1000000000ull);
	}
	uv_mutex_unlock(&h->mu);
}

/* ---- start and stop ----------------------------------------------------- */

static int bind_one(struct rpc_http *h, const char *host, uint16_t port)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in s4;
		struct sockaddr_in6 s6;
	} a;
	memset(&a, 0, sizeof(a));
	/* poll(), not select(), in each connection's thread: 16 keep-alive
	 * clients of getblockcount got 1.6x the requests/s (A/B, both orders). */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_ITC | MHD_USE_POLL;
	if (inet_pton(AF_INET, host, &a.s4.sin_addr) == 1) {
		a.s4.sin_family = AF_INET;
		a.s4.sin_port = htons(port);
	} else if (inet_pton(AF_INET6, host, &a.s6.sin6_addr) == 1) {
		a.s6.sin6_family = AF_INET6;
		a.s6.sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		return -1;
	}
	unsigned limit = (unsigned)(h->threads + h->depth) + 32u;
	struct MHD_Daemon *m = MHD_start_daemon(
	    flags, port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, &a.sa,
	    MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)(h->timeout_ms / 1000u), MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)RPC_THREAD_STACK,
	    /* The URI as sent, as libevent gives it to Core's handlers (ctl/rest_http.c). */
	    MHD_OPTION_UNESCAPE_CALLBACK, rest_http_unescape, NULL, MHD_OPTION_END);
	if (!m)
		return -1;
	h->mhd[h->n_mhd++] = m;
	return 0;
}

static int bind_all(struct rpc_http *h, const struct peerd_conf *c)
{
	struct daemon *d = h->d;
	/* Core's HTTPBindAddresses: loopback unless both -rpcallowip and -rpcbind. */
	if (!(c->rpcallowip.n && c->rpcbind.n)) {
		if (c->rpcallowip.n)
			DLOG_WARNING(&d->log, DLOG_CTL,
			             "WARNING: option -rpcallowip was specified without -rpcbind; "
			             "this doesn't usually make sense");
		if (c->rpcbind.n)
			DLOG_WARNING(&d->log, DLOG_CTL,
			             "WARNING: option -rpcbind was ignored because -rpcallowip was "
			             "not specified, refusing to allow everyone to connect");
		static const char *const lo[] = {"::1", "127.0.0.1"};
		for (size_t i = 0; i < 2; i++) {
			DLOG_INFO_(&d->log, DLOG_CTL, "Binding RPC on address %s port %u", lo[i],
			           c->rpcport);
			if (bind_one(h, lo[i], c->rpcport))
				DLOG_INFO_(&d->log, DLOG_CTL,
				           "Binding RPC on address %s port %u failed.", lo[i],
				           c->rpcport);
		}
	} else {
		for (size_t i = 0; i < c->rpcbind.n && h->n_mhd < RPC_MAX_LISTENERS; i++) {
			char host[CONF_MAX_HOST + 1];
			uint16_t port;
			if (conf_hostport(c->rpcbind.v[i], c->rpcport, host, sizeof(host), &port)) {
				DLOG_ERR(&d->log, DLOG_CTL,
				         "Invalid port specified in -rpcbind: '%s'",
				         c->rpcbind.v[i]);
				return -EINVAL;
			}
			DLOG_INFO_(&d->log, DLOG_CTL, "Binding RPC on address %s port %u", host,
			           port);
			if (bind_one(h, host, port))
				DLOG_WARNING(&d->log, DLOG_CTL,
				             "Binding RPC on address %s port %u failed.", host,
				             port);
		}
	}
	return 0;
}

static void rpc_http_free(struct rpc_http *h)
{
	xfree(h->allow);
	rpc_auth_release(&h->auth);
	rpc_whitelist_release(&h->wl);
	uv_cond_destroy(&h->dog);
	uv_cond_destroy(&h->cond);
	uv_mutex_destroy(&h->mu);
	xfree(h);
}

int rpc_http_start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	if (!c->server || d->ctl->http)
		return 0;
	struct rpc_http *h = xcalloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (uv_mutex_init(&h->mu)) {
		xfree(h);
		return -ENOMEM;
	}
	if (uv_cond_init(&h->cond)) {
		uv_mutex_destroy(&h->mu);
		xfree(h);
		return -ENOMEM;
	}
	if (uv_cond_init(&h->dog)) {
		uv_cond_destroy(&h->cond);
		uv_mutex_destroy(&h->mu);
		xfree(h);
		return -ENOMEM;
	}
	h->d = d;
	h->threads = c->rpcthreads;
	h->depth = c->rpcworkqueue;
	h->rest = c->rest;
	h->timeout_ms = (uint64_t)c->rpcservertimeout_s * 1000u;
	int err = 0;
	char msg[512];
	h->ip = d->ctl->inproc;
	h->allow = xcalloc(c->rpcallowip.n + 2, sizeof(*h->allow));
	if (!h->ip || !h->allow) {
		err = -ENOMEM;
		goto fail;
	}
	/* Loopback may always connect (Core's InitHTTPAllowList). */
	if (rpc_subnet_parse("127.0.0.0/8", &h->allow[h->n_allow++]) ||
	    rpc_subnet_parse("::1/128", &h->allow[h->n_allow++])) {
		err = -EINVAL; /* cannot happen: literals */
		goto fail;
	}
	for (size_t i = 0; i < c->rpcallowip.n; i++) {
		if (rpc_subnet_parse(c->rpcallowip.v[i], &h->allow[h->n_allow])) {
			DLOG_ERR(
			    &d->log, DLOG_CTL,
			    "Invalid -rpcallowip subnet specification: %s. Valid values are a "
			    "single IP (e.g. 1.2.3.4), a network/netmask (e.g. "
			    "1.2.3.4/255.255.255.0), a network/CIDR (e.g. 1.2.3.4/24), all ipv4 "
			    "(0.0.0.0/0), or all ipv6 (::/0).",
			    c->rpcallowip.v[i]);
			err = -EINVAL;
			goto fail;
		}
		h->n_allow++;
	}
	if (rpc_auth_init(&h->auth, c, msg, sizeof(msg))) {
		DLOG_ERR(&d->log, DLOG_CTL, "%s", msg);
		err = -EINVAL;
		goto fail;
	}
	if (!strcmp(h->auth.mode, "cookie"))
		DLOG_INFO_(&d->log, DLOG_CTL, "Using random cookie authentication (%s).",
		           h->auth.cookie_path);
	else if (!strcmp(h->auth.mode, "none"))
		DLOG_INFO_(&d->log, DLOG_CTL,
		           "RPC authentication cookie file generation is disabled.");
	else
		DLOG_WARNING(&d->log, DLOG_CTL,
		             "The use of rpcuser/rpcpassword is less secure, because credentials "
		             "are configured in plain text. It is recommended that locally-run "
		             "instances switch to cookie-based auth, or otherwise to use hashed "
		             "rpcauth credentials. See share/rpcauth in Core's source directory.");
	if (c->rpcauth.n)
		DLOG_INFO_(&d->log, DLOG_CTL, "Using rpcauth authentication.");
	if (rpc_whitelist_init(&h->wl, c)) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = bind_all(h, c)))
		goto fail;
	if (!h->n_mhd) {
		/* Core stops here. peerd does too when the operator named the port or
		 * address; on the defaults a busy port (another node on this
		 * machine) leaves the node running without HTTP, loudly. */
		if (c->rpcport_set || (c->rpcbind.n && c->rpcallowip.n)) {
			DLOG_ERR(&d->log, DLOG_CTL, "Unable to bind any endpoint for RPC server");
			err = -EADDRINUSE;
			goto fail;
		}
		DLOG_WARNING(
		    &d->log, DLOG_CTL,
		    "Unable to bind any endpoint for RPC server: no HTTP JSON-RPC (port %u "
		    "is taken; set -rpcport, or -server=0); the control socket still works",
		    c->rpcport);
		rpc_http_free(h);
		return 0;
	}
	if (uv_thread_create(&h->watchdog, watchdog, h) == 0)
		h->watchdog_started = true;
	d->ctl->http = h;
	DLOG_INFO_(&d->log, DLOG_CTL,
	           "HTTP JSON-RPC on port %u: %d threads, work queue %d, timeout %d s", c->rpcport,
	           h->threads, h->depth, c->rpcservertimeout_s);
	return 0;
fail:
	for (size_t i = 0; i < h->n_mhd; i++)
		MHD_stop_daemon(h->mhd[i]);
	rpc_http_free(h);
	return err;
}

void rpc_http_close(struct daemon *d)
{
	struct rpc_http *h = d->ctl->http;
	if (!h)
		return;
	d->ctl->http = NULL;
	for (size_t i = 0; i < h->n_mhd; i++) {
		MHD_socket s = MHD_quiesce_daemon(h->mhd[i]);
		if (s != MHD_INVALID_SOCKET)
			close(s);
	}
	/* Requests under way may finish: the stop call's reply is already on its way. */
	uint64_t until = now_ms() + RPC_DRAIN_MS;
	uv_mutex_lock(&h->mu);
	h->draining = true;
	while (h->inflight > 0 && now_ms() < until)
		(void)uv_cond_timedwait(&h->cond, &h->mu, 50000000ull);
	h->stopping = true;
	uv_cond_broadcast(&h->cond);
	uv_cond_broadcast(&h->dog);
	uv_mutex_unlock(&h->mu);
	/* Calls still waiting for the loop (which is stopping) end now. */
	ctl_inproc_stop(d);
	if (h->watchdog_started)
		uv_thread_join(&h->watchdog);
	for (size_t i = 0; i < h->n_mhd; i++)
		MHD_stop_daemon(h->mhd[i]);
	rpc_http_free(h);
}

json_t *rpc_http_stats_json(const struct daemon *d)
{
	struct rpc_http *h = d->ctl->http;
	if (!h)
		return json_null();
	uv_mutex_lock(&h->mu);
	json_t *v = json_pack(
	    "{s:i, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I}", "threads", h->threads, "work_queue",
	    h->depth, "active", h->active, "waiting", h->waiting, "inflight", h->inflight,
	    "rejected", (json_int_t)h->rejected, "timed_out", (json_int_t)h->timed_out,
	    "queue_full", (json_int_t)h->queue_full, "bad_auth", (json_int_t)h->bad_auth);
	uv_mutex_unlock(&h->mu);
	return v;
}
