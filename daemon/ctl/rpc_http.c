/*
 * daemon/ctl/rpc_http.c: the HTTP JSON-RPC server (Core 29's httpserver.cpp
 * and httprpc.cpp: -server, -rpcbind, -rpcport, -rpcallowip, -rpcthreads,
 * -rpcworkqueue, -rpcservertimeout), so bitcoin-cli and every tool that
 * talks to bitcoind talks to peerd unmodified (doc/rpc.md).
 *
 * One dispatcher behind both doors: this file runs no method. Each call
 * goes to the dispatcher in process (ctl/inproc.c), served there as a
 * control socket client of its own, so every method, its checks, the
 * fairness between clients, the reply budget and the chain calls that go
 * to the validation thread are the control socket's (ctl/server.c,
 * ctl/request.c). ctl/rpc_jsonrpc.c puts each reply into Core's envelope.
 *
 * HTTP on the loop: libmicrohttpd without threads of its own (MHD_USE_EPOLL,
 * external), its epoll fd watched by a uv_poll and its timeouts by a
 * uv_timer, so one wakeup of the loop serves every connection that is
 * ready, and a call the loop answers by itself costs no thread switch at
 * all (session 10's server woke a connection thread, the loop and the
 * thread again for each call, as Core's libevent thread and workers do).
 * ctl/rpc_http_req.c handles each request: a call that waits (a chain job)
 * suspends its connection until the reply; REST and batches, which make
 * several blocking calls, run on `rpcthreads` worker threads here. At most
 * rpcthreads requests are served at once and rpcworkqueue more wait
 * (suspended); beyond that 503 "Work queue depth exceeded", as Core. A
 * watchdog timer closes a connection whose request has been arriving for
 * longer than rpcservertimeout (a client sending a byte a second holds a
 * connection slot for that long, and no thread ever).
 *
 * Lock order: `pool_mu` is a leaf (the workers' queue and the done list).
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rest.h"
#include "daemon/ctl/rpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/** Most endpoints (-rpcbind values, or ::1 and 127.0.0.1). */
#define RPC_MAX_LISTENERS CONF_MAX_LIST
/** At close, answers under way get this long to be sent (the stop call's own reply). */
#define RPC_DRAIN_MS 500u
/** Worker threads' stacks: jansson's recursion is bounded (2048 levels). */
#define RPC_THREAD_STACK (512u * 1024u)

uint64_t rpc_http_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the worker threads: REST and batches --------------------------------- */

static void worker(void *arg)
{
	struct rpc_http *h = arg;
	uv_mutex_lock(&h->pool_mu);
	for (;;) {
		while (!h->todo && !h->pool_stop)
			uv_cond_wait(&h->pool_cond, &h->pool_mu);
		struct rpc_req *r = h->todo;
		if (!r)
			break; /* stopping, nothing left */
		h->todo = r->next;
		if (!h->todo)
			h->todo_tail = &h->todo;
		uv_mutex_unlock(&h->pool_mu);
		rpc_http_req_work(r);
		uv_mutex_lock(&h->pool_mu);
		bool first = !h->done;
		r->next = h->done;
		h->done = r;
		/* Under pool_mu: the closer joins the workers before closing it. */
		if (first)
			(void)uv_async_send(&h->wakeup);
	}
	uv_mutex_unlock(&h->pool_mu);
}

void rpc_http_pool_push(struct rpc_http *h, struct rpc_req *r)
{
	r->next = NULL;
	uv_mutex_lock(&h->pool_mu);
	*h->todo_tail = r;
	h->todo_tail = &r->next;
	uv_cond_signal(&h->pool_cond);
	uv_mutex_unlock(&h->pool_mu);
}

/* The answers the workers made, to their connections. Loop thread. */
static void take_done(struct rpc_http *h)
{
	uv_mutex_lock(&h->pool_mu);
	struct rpc_req *q = h->done;
	h->done = NULL;
	uv_mutex_unlock(&h->pool_mu);
	/* Oldest first: the list was pushed at its head. */
	struct rpc_req *rev = NULL;
	while (q) {
		struct rpc_req *n = q->next;
		q->next = rev;
		rev = q;
		q = n;
	}
	while (rev) {
		struct rpc_req *r = rev;
		rev = r->next;
		r->next = NULL;
		rpc_http_req_ready(r);
	}
}

static void pool_stop(struct rpc_http *h)
{
	uv_mutex_lock(&h->pool_mu);
	h->pool_stop = true;
	uv_cond_broadcast(&h->pool_cond);
	uv_mutex_unlock(&h->pool_mu);
	for (int i = 0; i < h->n_workers; i++)
		uv_thread_join(&h->workers[i]);
	h->n_workers = 0;
}

/* ---- libmicrohttpd on the loop -------------------------------------------- */

static void teardown(struct rpc_http *h);
static void timer_cb(uv_timer_t *t);

/* When libmicrohttpd next wants to run without an event (timeouts, a
 * connection it has more to do for). */
static void arm_timer(struct rpc_http *h)
{
	MHD_UNSIGNED_LONG_LONG best = 0;
	bool any = false;
	for (size_t i = 0; i < h->n_mhd; i++) {
		MHD_UNSIGNED_LONG_LONG ms;
		if (MHD_get_timeout(h->mhd[i], &ms) == MHD_YES && (!any || ms < best)) {
			best = ms;
			any = true;
		}
	}
	if (any)
		(void)uv_timer_start(&h->timer, timer_cb, (uint64_t)best, 0);
	else
		(void)uv_timer_stop(&h->timer);
}

static void run_one(struct rpc_http *h, size_t i)
{
	h->in_run++;
	(void)MHD_run(h->mhd[i]);
	h->in_run--;
}

static void after_run(struct rpc_http *h)
{
	if (h->closing) {
		teardown(h);
		return;
	}
	if (h->rerun) {
		h->rerun = false;
		(void)uv_timer_start(&h->timer, timer_cb, 0, 0);
		return;
	}
	arm_timer(h);
}

void rpc_http_kick(struct rpc_http *h)
{
	/* libmicrohttpd takes a resumed connection back in its next MHD_run
	 * (its eventfd does not wake an external epoll loop). */
	if (h->in_run)
		h->rerun = true;
	else if (h->attached)
		(void)uv_timer_start(&h->timer, timer_cb, 0, 0);
}

static void poll_cb(uv_poll_t *p, int status, int events)
{
	struct rpc_http *h = p->data;
	(void)status;
	(void)events;
	run_one(h, (size_t)(p - h->poll));
	after_run(h);
}

static void timer_cb(uv_timer_t *t)
{
	struct rpc_http *h = t->data;
	for (size_t i = 0; i < h->n_mhd && !h->closing; i++)
		run_one(h, i);
	after_run(h);
}

static void wakeup_cb(uv_async_t *a)
{
	/* A resumed connection's epoll event (libmicrohttpd's own eventfd)
	 * brings poll_cb; nothing to run here. */
	take_done(a->data);
}

/* ---- the watchdog: requests that take too long to arrive ----------------- */

static void dog_cb(uv_timer_t *t)
{
	struct rpc_http *h = t->data;
	uint64_t now = rpc_http_now_ms();
	for (struct rpc_conn *c = h->conns; c; c = c->next) {
		if (c->since_ms && !c->killed && now - c->since_ms >= h->timeout_ms) {
			/* libmicrohttpd sees the socket end and closes the connection. */
			c->killed = true;
			h->timed_out++;
			shutdown(c->fd, SHUT_RDWR);
		}
	}
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
	/* No thread of libmicrohttpd's: the loop runs it (poll_cb). */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
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
	struct MHD_Daemon *m = rpc_http_mhd_start(h, flags, port, &a.sa);
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
	xfree(h->workers);
	rpc_auth_release(&h->auth);
	rpc_whitelist_release(&h->wl);
	uv_cond_destroy(&h->pool_cond);
	uv_mutex_destroy(&h->pool_mu);
	xfree(h);
}

/* The loop's handles on the daemons, the timers, the workers. 0 or a
 * libuv error; teardown is right after either. */
static int attach(struct rpc_http *h)
{
	uv_loop_t *loop = h->d->loop;
	int err = uv_async_init(loop, &h->wakeup, wakeup_cb);
	if (err)
		return err;
	h->wakeup.data = h;
	uv_timer_init(loop, &h->timer);
	uv_timer_init(loop, &h->dog);
	uv_timer_init(loop, &h->delay);
	h->timer.data = h->dog.data = h->delay.data = h;
	h->attached = true;
	for (size_t i = 0; i < h->n_mhd; i++) {
		const union MHD_DaemonInfo *di =
		    MHD_get_daemon_info(h->mhd[i], MHD_DAEMON_INFO_EPOLL_FD);
		if (!di)
			return UV_EINVAL;
		if ((err = uv_poll_init(loop, &h->poll[i], di->epoll_fd)))
			return err;
		h->poll[i].data = h;
		h->n_polls++;
		if ((err = uv_poll_start(&h->poll[i], UV_READABLE, poll_cb)))
			return err;
	}
	if (h->timeout_ms)
		(void)uv_timer_start(&h->dog, dog_cb, 1000, 1000);
	h->workers = xcalloc((size_t)h->threads, sizeof(*h->workers));
	if (!h->workers)
		return UV_ENOMEM;
	uv_thread_options_t opt = {.flags = UV_THREAD_HAS_STACK_SIZE,
	                           .stack_size = RPC_THREAD_STACK};
	for (int i = 0; i < h->threads; i++) {
		if ((err = uv_thread_create_ex(&h->workers[i], &opt, worker, h)))
			return err;
		h->n_workers++;
	}
	arm_timer(h);
	return 0;
}

int rpc_http_start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	if (!c->server || d->ctl->http)
		return 0;
	struct rpc_http *h = xcalloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (uv_mutex_init(&h->pool_mu)) {
		xfree(h);
		return -ENOMEM;
	}
	if (uv_cond_init(&h->pool_cond)) {
		uv_mutex_destroy(&h->pool_mu);
		xfree(h);
		return -ENOMEM;
	}
	h->queue_tail = &h->queue;
	h->delayed_tail = &h->delayed;
	h->todo_tail = &h->todo;
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
	if ((err = attach(h))) {
		DLOG_ERR(&d->log, DLOG_CTL, "HTTP server: %s", uv_strerror(err));
		teardown(h);
		return err;
	}
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

static void handle_closed(uv_handle_t *hd)
{
	struct rpc_http *h = hd->data;
	if (--h->open_handles == 0)
		rpc_http_free(h);
}

static void close_handle(struct rpc_http *h, uv_handle_t *hd)
{
	h->open_handles++;
	uv_close(hd, handle_closed);
}

/* Loop thread, never inside MHD_run. */
static void teardown(struct rpc_http *h)
{
	struct daemon *d = h->d;
	h->closing = false;
	h->stopping = true;
	for (size_t i = 0; i < h->n_mhd; i++) {
		MHD_socket s = MHD_quiesce_daemon(h->mhd[i]);
		if (s != MHD_INVALID_SOCKET)
			close(s);
	}
	/* Calls at the dispatcher end now (the loop is stopping: their chain
	 * jobs' results would never come back), and so do the workers' calls;
	 * waiting requests get their answers. */
	ctl_inproc_stop(d);
	pool_stop(h);
	take_done(h);
	rpc_http_end_waiting(h);
	/* The answers made (the stop call's own among them) go out. */
	uint64_t until = rpc_http_now_ms() + RPC_DRAIN_MS;
	while (h->inflight > 0 && rpc_http_now_ms() < until) {
		struct pollfd pf[RPC_MAX_LISTENERS];
		for (size_t i = 0; i < h->n_mhd; i++) {
			const union MHD_DaemonInfo *di =
			    MHD_get_daemon_info(h->mhd[i], MHD_DAEMON_INFO_EPOLL_FD);
			pf[i] = (struct pollfd){.fd = di ? di->epoll_fd : -1, .events = POLLIN};
		}
		(void)poll(pf, h->n_mhd, 10);
		for (size_t i = 0; i < h->n_mhd; i++)
			run_one(h, i);
	}
	/* Nothing is suspended now, but a connection resumed last is taken
	 * back only by a run: libmicrohttpd aborts on stopping with one. */
	for (size_t i = 0; i < h->n_mhd; i++)
		run_one(h, i);
	for (size_t i = 0; i < h->n_polls; i++) {
		uv_poll_stop(&h->poll[i]);
		close_handle(h, (uv_handle_t *)&h->poll[i]);
	}
	/* Connections still open (idle keep-alive, slow senders) close with
	 * their daemons; a request that did not finish is freed by
	 * on_completed. */
	for (size_t i = 0; i < h->n_mhd; i++)
		MHD_stop_daemon(h->mhd[i]);
	h->n_mhd = 0;
	if (!h->attached) {
		rpc_http_free(h);
		return;
	}
	close_handle(h, (uv_handle_t *)&h->timer);
	close_handle(h, (uv_handle_t *)&h->dog);
	close_handle(h, (uv_handle_t *)&h->delay);
	close_handle(h, (uv_handle_t *)&h->wakeup);
}

void rpc_http_close(struct daemon *d)
{
	struct rpc_http *h = d->ctl->http;
	if (!h)
		return;
	d->ctl->http = NULL;
	/* From inside libmicrohttpd (a stop call answered in its handler):
	 * after MHD_run returns. */
	if (h->in_run)
		h->closing = true;
	else
		teardown(h);
}

json_t *rpc_http_stats_json(const struct daemon *d)
{
	struct rpc_http *h = d->ctl->http;
	if (!h)
		return json_null();
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I}", "threads",
	                 h->threads, "work_queue", h->depth, "active", h->active, "waiting",
	                 h->waiting, "inflight", h->inflight, "rejected", (json_int_t)h->rejected,
	                 "timed_out", (json_int_t)h->timed_out, "queue_full",
	                 (json_int_t)h->queue_full, "bad_auth", (json_int_t)h->bad_auth, "on_loop",
	                 (json_int_t)h->on_loop, "direct", (json_int_t)h->direct);
}
