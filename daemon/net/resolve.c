/*
 * daemon/net/resolve.c: name lookups on the loop thread, with c-ares.
 *
 * Why c-ares and not libuv's uv_getaddrinfo: getaddrinfo blocks, so libuv
 * runs it on its thread pool (4 threads shared with file work), and it
 * asks whatever /etc/resolv.conf names: a test cannot point it at a
 * responder of its own. c-ares speaks DNS itself on non-blocking sockets
 * the loop watches, and its server list can be set, so -dnsserver= sends
 * every lookup of the node (the seeds, connect=, addnode=) to a loopback
 * responder in the tests: no query leaves the machine.
 *
 * How c-ares runs on libuv: c-ares tells us, through its socket-state
 * callback, which sockets to watch for reading or writing; each gets a
 * uv_poll_t, whose events go back with ares_process_fd. c-ares's own
 * timeouts (a server that does not answer) are a uv_timer set to
 * ares_timeout after every call. A finished lookup is not handed to its
 * caller from inside c-ares: it waits on a list that a zero timer
 * delivers, so a callback never runs inside net_resolve (c-ares answers
 * IP literals at once) and may start or cancel lookups freely.
 *
 * Loop thread only.
 */
#include "daemon/net/net.h"

#include <ares.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/require.h"

/* One socket c-ares asked us to watch. */
struct resolver_sock {
	uv_poll_t poll; /* poll.data points back here */
	struct net_resolver *r;
	ares_socket_t fd;
	struct resolver_sock *next;
};

struct net_resolve {
	struct net_resolver *r;
	net_resolve_cb cb;
	void *ctx;
	uint16_t port;
	size_t max;
	bool cancelled; /* the caller gave it up: freed without a call */
	int status;
	union net_addr *addrs; /* xmalloc'd results, n of them */
	size_t n;
	struct net_resolve *next; /* on the done list */
};

struct net_resolver {
	struct daemon *d;
	ares_channel ch;
	bool closing;
	uint32_t open_handles; /* freed once every handle's close callback ran */
	uv_timer_t timeout;    /* c-ares's own timeouts */
	uv_timer_t deliver;    /* hands finished lookups to their callers */
	struct resolver_sock *socks;
	struct net_resolve *done_head, *done_tail;
};

static void handle_closed(uv_handle_t *h)
{
	struct net_resolver *r = h->data;
	if (h->type == UV_POLL) {
		struct resolver_sock *s = h->data;
		r = s->r;
		xfree(s);
	}
	if (--r->open_handles == 0)
		xfree(r);
}

static void on_timeout(uv_timer_t *t);

static void rearm_timeout(struct net_resolver *r)
{
	if (r->closing)
		return;
	struct timeval tv, *t = ares_timeout(r->ch, NULL, &tv);
	if (!t) {
		uv_timer_stop(&r->timeout);
		return;
	}
	uint64_t ms = (uint64_t)t->tv_sec * 1000u + (uint64_t)t->tv_usec / 1000u;
	uv_timer_start(&r->timeout, on_timeout, ms ? ms : 1, 0);
}

static void on_timeout(uv_timer_t *t)
{
	struct net_resolver *r = t->data;
	ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	rearm_timeout(r);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	struct resolver_sock *s = h->data;
	struct net_resolver *r = s->r;
	/* An error on the socket: let c-ares read it and find out. */
	ares_socket_t rfd = (status < 0 || (events & UV_READABLE)) ? s->fd : ARES_SOCKET_BAD;
	ares_socket_t wfd = (status < 0 || (events & UV_WRITABLE)) ? s->fd : ARES_SOCKET_BAD;
	ares_process_fd(r->ch, rfd, wfd);
	rearm_timeout(r);
}

/* c-ares's socket-state callback: watch fd for these events, or stop. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct net_resolver *r = data;
	struct resolver_sock **pp = &r->socks, *s;
	while ((s = *pp) && s->fd != fd)
		pp = &s->next;
	if (!readable && !writable) {
		if (s) {
			*pp = s->next;
			uv_poll_stop(&s->poll);
			uv_close((uv_handle_t *)&s->poll, handle_closed);
		}
		return;
	}
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		if (!s)
			return; /* the lookup times out instead */
		if (uv_poll_init_socket(r->d->loop, &s->poll, fd)) {
			xfree(s);
			return;
		}
		s->r = r;
		s->fd = fd;
		s->poll.data = s;
		s->next = r->socks;
		r->socks = s;
		r->open_handles++;
	}
	int ev = (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0);
	uv_poll_start(&s->poll, ev, on_poll);
}

static void request_free(struct net_resolve *q)
{
	xfree(q->addrs);
	xfree(q);
}

static void on_deliver(uv_timer_t *t)
{
	struct net_resolver *r = t->data;
	/* Take the whole list first: a callback may start lookups that finish
	 * (IP literals) and land on a fresh list for the next round. */
	struct net_resolve *q = r->done_head;
	r->done_head = r->done_tail = NULL;
	while (q) {
		struct net_resolve *next = q->next;
		if (!q->cancelled)
			q->cb(q->ctx, q->status, q->addrs, q->n);
		request_free(q);
		q = next;
	}
}

static bool same_addr(const union net_addr *a, const union net_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr;
	return memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, 16) == 0;
}

static void on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	(void)timeouts;
	struct net_resolve *q = arg;
	struct net_resolver *r = q->r;
	if (r->closing) {
		if (res)
			ares_freeaddrinfo(res);
		request_free(q);
		return;
	}
	size_t cap = 0;
	for (struct ares_addrinfo_node *n = res ? res->nodes : NULL; n; n = n->ai_next)
		cap++;
	if (cap > q->max)
		cap = q->max;
	q->status = status == ARES_SUCCESS ? 0 : -status;
	if (status == ARES_ENOTFOUND || status == ARES_ENODATA)
		q->status = 0; /* an answer: no address */
	if (cap && (q->addrs = xcalloc(cap, sizeof(*q->addrs))) == NULL)
		q->status = -ARES_ENOMEM;
	for (struct ares_addrinfo_node *n = res ? res->nodes : NULL; n && q->addrs && q->n < cap;
	     n = n->ai_next) {
		union net_addr a;
		memset(&a, 0, sizeof(a));
		if (n->ai_family == AF_INET && n->ai_addrlen >= sizeof(a.in4)) {
			memcpy(&a.in4, n->ai_addr, sizeof(a.in4));
			a.in4.sin_port = htons(q->port);
		} else if (n->ai_family == AF_INET6 && n->ai_addrlen >= sizeof(a.in6)) {
			memcpy(&a.in6, n->ai_addr, sizeof(a.in6));
			a.in6.sin6_port = htons(q->port);
		} else {
			continue;
		}
		bool dup = false;
		for (size_t i = 0; i < q->n && !dup; i++)
			dup = same_addr(&q->addrs[i], &a);
		if (!dup)
			q->addrs[q->n++] = a;
	}
	if (res)
		ares_freeaddrinfo(res);
	if (r->done_tail)
		r->done_tail->next = q;
	else
		r->done_head = q;
	r->done_tail = q;
	uv_timer_start(&r->deliver, on_deliver, 0, 0);
}

int net_resolver_init(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	int err = ares_library_init(ARES_LIB_INIT_ALL);
	if (err != ARES_SUCCESS) {
		DLOG_ERR(&d->log, DLOG_NET, "c-ares: %s", ares_strerror(err));
		return -EIO;
	}
	struct net_resolver *r = xcalloc(1, sizeof(*r));
	if (!r) {
		ares_library_cleanup();
		return -ENOMEM;
	}
	r->d = d;
	struct ares_options opts;
	memset(&opts, 0, sizeof(opts));
	int mask = ARES_OPT_SOCK_STATE_CB;
	opts.sock_state_cb = sock_state;
	opts.sock_state_cb_data = r;
	if (c->dnsserver[0]) {
		/* The test responder answers everything: no hosts file either. */
		opts.lookups = (char *)"b";
		mask |= ARES_OPT_LOOKUPS;
	}
	if ((err = ares_init_options(&r->ch, &opts, mask)) != ARES_SUCCESS) {
		DLOG_ERR(&d->log, DLOG_NET, "c-ares: %s", ares_strerror(err));
		xfree(r);
		ares_library_cleanup();
		return -EIO;
	}
	if (c->dnsserver[0]) {
		char host[CONF_MAX_HOST + 1], csv[CONF_MAX_HOST + 16];
		uint16_t port;
		if (conf_hostport(c->dnsserver, 53, host, sizeof(host), &port) != 0)
			host[0] = '\0';
		snprintf(csv, sizeof(csv), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host,
		         (unsigned)port);
		if (!host[0] || (err = ares_set_servers_ports_csv(r->ch, csv)) != ARES_SUCCESS) {
			DLOG_ERR(&d->log, DLOG_NET, "dnsserver=%s: %s", c->dnsserver,
			         host[0] ? ares_strerror(err) : "not an address");
			ares_destroy(r->ch);
			xfree(r);
			ares_library_cleanup();
			return -EINVAL;
		}
		DLOG_INFO_(&d->log, DLOG_NET, "every name lookup goes to the DNS server %s", csv);
	}
	uv_timer_init(d->loop, &r->timeout);
	uv_timer_init(d->loop, &r->deliver);
	r->timeout.data = r->deliver.data = r;
	/* Both timers are active only while a lookup is pending or being
	 * handed over: an idle resolver holds no loop open. */
	r->open_handles = 2;
	d->net->resolver = r;
	return 0;
}

void net_resolver_release(struct daemon *d)
{
	struct net_resolver *r = d->net->resolver;
	if (!r)
		return;
	d->net->resolver = NULL;
	r->closing = true;
	/* Lookups in flight end in on_addrinfo (freed there, no call); the
	 * sockets' state callbacks close their polls. */
	ares_destroy(r->ch);
	ares_library_cleanup();
	while (r->socks) {
		struct resolver_sock *s = r->socks;
		r->socks = s->next;
		uv_poll_stop(&s->poll);
		uv_close((uv_handle_t *)&s->poll, handle_closed);
	}
	for (struct net_resolve *q = r->done_head, *next; q; q = next) {
		next = q->next;
		request_free(q);
	}
	r->done_head = r->done_tail = NULL;
	uv_close((uv_handle_t *)&r->timeout, handle_closed);
	uv_close((uv_handle_t *)&r->deliver, handle_closed);
}

struct net_resolve *net_resolve(struct daemon *d, const char *host, uint16_t port, size_t max,
                                net_resolve_cb cb, void *ctx)
{
	struct net_resolver *r = d->net->resolver;
	if (!r || !max)
		return NULL;
	struct net_resolve *q = xcalloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->r = r;
	q->cb = cb;
	q->ctx = ctx;
	q->port = port;
	q->max = max;
	struct ares_addrinfo_hints hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	/* Core keeps getaddrinfo's order; c-ares would sort by RFC 6724. */
	hints.ai_flags = ARES_AI_NOSORT;
	ares_getaddrinfo(r->ch, host, NULL, &hints, on_addrinfo, q);
	rearm_timeout(r);
	return q;
}

void net_resolve_cancel(struct net_resolve *q)
{
	if (q)
		q->cancelled = true;
}

const char *net_resolve_strerror(int status)
{
	return status ? ares_strerror(-status) : "no address";
}
