/*
 * daemon/net/net.c: addresses, listeners, accepting, and outbound connections
 * with reconnect and backoff.
 *
 * maxconnections caps inbound and automatic outbound connections together,
 * as in Core: inbound connections are accepted while fewer than
 * maxconnections less the automatic outbound slots (8 full-relay, 2
 * block-relay-only, 1 feeler: net/outbound.c) are open, 114 by default.
 * Manual connections (connect=, addnode=, the addnode RPC) have their own
 * 8 slots beyond maxconnections, as Core's MAX_ADDNODE_CONNECTIONS.
 *
 * When the inbound slots are full (the 115th with the defaults), a
 * newcomer evicts a peer as Core's CConnman::AttemptToEvictConnection
 * does: what each inbound peer has shown (net/eviction.c's candidates)
 * goes to net_evict_select, and the one chosen is disconnected for the
 * newcomer. So one address holding every slot cannot lock honest peers
 * out: the flood's youngest connection makes room, while peers that ping
 * fast, relay transactions or blocks, come from other network groups or
 * have been connected longest are protected. Only when every peer is
 * protected is the newcomer refused, accepted and closed at once without
 * reading from it (getstats peers.inbound_rejected_full), which gives the
 * other side an immediate close instead of a timeout and keeps the
 * kernel's accept backlog from filling with connections nobody will serve.
 *
 * Banned addresses (setban) are closed the same way, before anyone is
 * evicted for them; a discouraged address is accepted only while at least
 * two inbound slots are free (Core 29's rule: it gets a slot only when
 * nobody else would want it), and is then the first evicted.
 *
 * Outbound: each target is tried when due; a connection attempt gives up
 * after 5 s; a failed attempt or a lost connection retries after a delay
 * that starts at 1 s and doubles up to 60 s, and starts over at 1 s after a
 * handshake succeeded. A onetry target gets one attempt. Host names are
 * resolved by net/resolve.c (c-ares on the loop, never blocking it).
 */
#include "daemon/net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/require.h"

/* ---- addresses ------------------------------------------------------- */

/* ::ffff:0:0/96, where IPv4 addresses live in 16-byte form. */
static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool net_ip16_is_v4(const uint8_t ip[16])
{
	return memcmp(ip, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0;
}

void net_addr_format_ip(const union net_addr *a, char *out)
{
	out[0] = 0;
	if (a->sa.sa_family == AF_INET) {
		uv_ip4_name(&a->in4, out, INET6_ADDRSTRLEN);
	} else if (a->sa.sa_family == AF_INET6) {
		const uint8_t *b = a->in6.sin6_addr.s6_addr;
		if (net_ip16_is_v4(b))
			snprintf(out, INET6_ADDRSTRLEN, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
		else
			uv_ip6_name(&a->in6, out, INET6_ADDRSTRLEN);
	} else {
		snprintf(out, INET6_ADDRSTRLEN, "?");
	}
}

void net_addr_format(const union net_addr *a, char *out)
{
	char ip[INET6_ADDRSTRLEN];
	net_addr_format_ip(a, ip);
	if (a->sa.sa_family == AF_INET6 && strchr(ip, ':'))
		snprintf(out, NET_ADDRSTRLEN, "[%s]:%u", ip, net_addr_port(a));
	else
		snprintf(out, NET_ADDRSTRLEN, "%s:%u", ip, net_addr_port(a));
}

void net_addr_ip16(const union net_addr *a, uint8_t ip[16])
{
	memset(ip, 0, 16);
	if (a->sa.sa_family == AF_INET) {
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &a->in4.sin_addr, 4);
	} else if (a->sa.sa_family == AF_INET6) {
		memcpy(ip, &a->in6.sin6_addr, 16);
	}
}

uint16_t net_addr_port(const union net_addr *a)
{
	if (a->sa.sa_family == AF_INET)
		return ntohs(a->in4.sin_port);
	if (a->sa.sa_family == AF_INET6)
		return ntohs(a->in6.sin6_port);
	return 0;
}

bool net_addr_is_local(const union net_addr *a)
{
	uint8_t ip[16];
	static const uint8_t loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	net_addr_ip16(a, ip);
	if (net_ip16_is_v4(ip))
		return ip[12] == 127;
	return memcmp(ip, loop6, 16) == 0;
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	if (!*s)
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Split "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 literal. */
static int split_host_port(const char *s, char *host, size_t hostlen, uint16_t default_port,
                           uint16_t *port)
{
	const char *h = s, *p = NULL;
	size_t hl;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close)
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		if (close[1] == ':')
			p = close + 2;
		else if (close[1])
			return -EINVAL;
	} else {
		const char *c = strchr(s, ':');
		if (c && !strchr(c + 1, ':')) {
			hl = (size_t)(c - s);
			p = c + 1;
		} else {
			hl = strlen(s); /* no port, or a bare IPv6 literal */
		}
	}
	if (!hl || hl >= hostlen)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = default_port;
	if (p && parse_port(p, port))
		return -EINVAL;
	return 0;
}

int net_addr_parse(const char *s, uint16_t default_port, union net_addr *out)
{
	char host[256];
	uint16_t port;
	if (split_host_port(s, host, sizeof(host), default_port, &port))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (uv_ip4_addr(host, port, &out->in4) == 0)
		return 0;
	if (!strchr(host, '%') && uv_ip6_addr(host, port, &out->in6) == 0)
		return 0;
	return -EINVAL;
}

/* ---- listeners and accepting ------------------------------------------ */

void net_init_limits(struct daemon *d)
{
	struct net_state *n = d->net;
	n->max_outbound_full =
	    n->maxconnections < NET_MAX_OUTBOUND_FULL ? n->maxconnections : NET_MAX_OUTBOUND_FULL;
	uint32_t left = n->maxconnections - n->max_outbound_full;
	n->max_block_relay = left < NET_MAX_BLOCK_RELAY ? left : NET_MAX_BLOCK_RELAY;
	n->max_feeler = NET_MAX_FEELER;
}

uint32_t net_max_inbound(const struct daemon *d)
{
	/* Core's m_max_inbound: manual connections have their own slots
	 * (Core's MAX_ADDNODE_CONNECTIONS) outside maxconnections. */
	const struct net_state *n = d->net;
	uint32_t automatic = n->max_outbound_full + n->max_block_relay + n->max_feeler;
	return n->maxconnections > automatic ? n->maxconnections - automatic : 0;
}

static void reject_close_cb(uv_handle_t *h)
{
	xfree(h);
}

static void spare_close_cb(uv_handle_t *h);

/* Take the pending connection with the preallocated handle and close it;
 * while that handle is still closing, the listener waits its turn. */
static void reject_with_spare(struct daemon *d, uv_stream_t *server)
{
	size_t i = (size_t)((uv_tcp_t *)server - d->net->listeners);
	if (d->net->reject_busy || uv_tcp_init(d->loop, &d->net->reject_spare)) {
		d->net->reject_waiting[i] = true;
		return;
	}
	d->net->reject_busy = true;
	d->net->reject_spare.data = d;
	(void)uv_accept(server, (uv_stream_t *)&d->net->reject_spare);
	uv_close((uv_handle_t *)&d->net->reject_spare, spare_close_cb);
}

static void spare_close_cb(uv_handle_t *h)
{
	struct daemon *d = h->data;
	d->net->reject_busy = false;
	for (uint32_t i = 0; i < d->net->n_listeners; i++) {
		uv_handle_t *l = (uv_handle_t *)&d->net->listeners[i];
		if (!d->net->reject_waiting[i])
			continue;
		d->net->reject_waiting[i] = false;
		if (!uv_is_closing(l)) {
			reject_with_spare(d, (uv_stream_t *)l);
			return;
		}
	}
}

/*
 * Accept and close at once: the 126th-inbound rule, bans. The connection
 * must be taken even when its handle cannot be allocated: libuv stops
 * watching a listener whose pending connection is left unaccepted, which
 * would end inbound connections for good.
 */
static void accept_and_close(uv_stream_t *server)
{
	struct daemon *d = server->data;
	uv_tcp_t *t = xmalloc(sizeof(*t));
	if (t && uv_tcp_init(d->loop, t) == 0) {
		(void)uv_accept(server, (uv_stream_t *)t);
		uv_close((uv_handle_t *)t, reject_close_cb);
		return;
	}
	xfree(t);
	DLOG_WARNING(&d->log, DLOG_NET, "out of memory: inbound connection closed");
	reject_with_spare(d, server);
}

/* What eviction knows of p (Core's AttemptToEvictConnection's candidates). */
static void evict_candidate(const struct peer *p, struct net_evict_candidate *c)
{
	memset(c, 0, sizeof(*c));
	c->id = p->id;
	c->connected = p->conntime;
	c->min_ping_us = p->minping_us < 0 ? INT64_MAX : p->minping_us;
	c->last_block_time = p->last_block_time;
	c->last_tx_time = p->last_tx_time;
	c->keyed_netgroup = p->keyed_netgroup;
	c->network = net_addr_network(&p->addr);
	c->conn_type = p->conn_type;
	c->relevant_services = p->relevant_services;
	c->relay_txs = p->relaytxes;
	c->bloom_filter = false; /* peerd loads no BIP37 filters */
	c->prefer_evict = p->prefer_evict;
	c->is_local = net_addr_is_local(&p->addr);
	c->noban = false; /* peerd grants no noban permission (whitelist= is refused) */
}

/* The peer to evict for a newcomer: true and *id, or false when every
 * peer is protected (or the candidates' memory cannot be had). */
static bool evict_choose(struct daemon *d, uint64_t *id)
{
	if (!d->n_peers)
		return false;
	struct net_evict_candidate *c = xcalloc(d->n_peers, sizeof(*c));
	if (!c)
		return false;
	size_t n = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->state != PEER_CLOSING) /* Core skips those marked fDisconnect */
			evict_candidate(p, c + n++);
	}
	bool found = net_evict_select(c, n, id);
	xfree(c);
	return found;
}

static void on_connection(uv_stream_t *server, int status);

/* A new turn: the listeners deferred in the last one take their connection. */
static void accept_deferred_cb(uv_idle_t *h)
{
	struct daemon *d = h->data;
	uv_idle_stop(h);
	for (uint32_t i = 0; i < d->net->n_listeners; i++) {
		if (!d->net->accept_deferred[i])
			continue;
		d->net->accept_deferred[i] = false;
		uv_stream_t *l = (uv_stream_t *)&d->net->listeners[i];
		/* on_connection's uv_accept watches the listener again. */
		if (!uv_is_closing((uv_handle_t *)l))
			on_connection(l, 0);
	}
}

static void accept_turn_cb(uv_check_t *h)
{
	struct daemon *d = h->data;
	d->net->accepts_this_turn = 0;
}

/* Over this turn's share: leave the connection pending, which makes libuv
 * stop watching the listener until the next turn's uv_accept. */
static bool accept_later(struct daemon *d, uv_stream_t *server)
{
	if (!d->net->accept_handles || d->net->accepts_this_turn < NET_ACCEPTS_PER_TURN) {
		d->net->accepts_this_turn++;
		return false;
	}
	d->net->accept_deferred[(uv_tcp_t *)server - d->net->listeners] = true;
	uv_idle_start(&d->net->accept_idle, accept_deferred_cb);
	return true;
}

static void on_connection(uv_stream_t *server, int status)
{
	struct daemon *d = server->data;
	if (status < 0) {
		DLOG_WARNING(&d->log, DLOG_NET, "accept failed: %s", uv_strerror(status));
		return;
	}
	if (accept_later(d, server))
		return;
	/* setnetworkactive false: Core keeps listening but drops every connection. */
	if (d->network_inactive) {
		DLOG_DBG(&d->log, DLOG_NET, "inbound connection dropped: network not active");
		accept_and_close(server);
		return;
	}
	if (d->shutting_down) {
		accept_and_close(server);
		return;
	}
	/* Full: choose whom to evict before taking anything for the newcomer,
	 * so a flood nobody can make room for costs one accept and close. */
	bool full = d->n_inbound >= net_max_inbound(d);
	uint64_t evict_id = 0;
	if (full && !evict_choose(d, &evict_id)) {
		d->stats.inbound_rejected_full++;
		DLOG_DBG(&d->log, DLOG_NET,
		         "failed to find an eviction candidate - connection dropped (full)");
		accept_and_close(server);
		return;
	}
	struct peer *p = peer_new(d, true);
	if (!p) {
		DLOG_WARNING(&d->log, DLOG_NET, "out of memory accepting a connection");
		accept_and_close(server);
		return;
	}
	int err = uv_accept(server, (uv_stream_t *)&p->tcp);
	if (err) {
		peer_disconnect(p, uv_strerror(err));
		return;
	}
	int len = sizeof(p->addr);
	if (uv_tcp_getpeername(&p->tcp, &p->addr.sa, &len))
		memset(&p->addr, 0, sizeof(p->addr));
	/* Nobody is evicted for a banned or a discouraged newcomer. */
	enum ban_verdict v = ban_check(d, &p->addr);
	if (v == BAN_BANNED) {
		d->stats.inbound_rejected_banned++;
		peer_disconnect(p, "banned");
		return;
	}
	if (v == BAN_DISCOURAGED && d->n_inbound + 2 > net_max_inbound(d)) {
		d->stats.inbound_rejected_discouraged++;
		peer_disconnect(p, "discouraged and inbound slots are scarce");
		return;
	}
	p->prefer_evict = v == BAN_DISCOURAGED;
	p->keyed_netgroup = net_keyed_netgroup(d, &p->addr);
	if (full) {
		struct peer *e = peer_by_id(d, evict_id);
		if (!BASE_CHECK(e && e->state != PEER_CLOSING)) {
			d->stats.inbound_rejected_full++;
			peer_disconnect(p, "inbound slots full");
			return;
		}
		/* Core's words; logips is off: no address. */
		DLOG_DBG(&d->log, DLOG_NET,
		         "selected %s connection for eviction, disconnecting peer=%llu",
		         peer_conn_type_name(e->conn_type), (unsigned long long)e->id);
		d->stats.inbound_evicted++;
		peer_disconnect(e, "evicted for a new inbound connection");
	}
	d->stats.inbound_accepted++;
	peer_start(p);
}

static int listen_on(struct daemon *d, const union net_addr *a, bool required)
{
	char name[NET_ADDRSTRLEN];
	net_addr_format(a, name);
	if (d->net->n_listeners >= NET_MAX_LISTENERS)
		return -ENOSPC;
	uv_tcp_t *t = &d->net->listeners[d->net->n_listeners];
	int err = uv_tcp_init(d->loop, t);
	if (err)
		return err;
	t->data = d;
	unsigned flags = a->sa.sa_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0;
	err = uv_tcp_bind(t, &a->sa, flags);
	if (!err)
		err = uv_listen((uv_stream_t *)t, NET_LISTEN_BACKLOG, on_connection);
	if (err) {
		uv_close((uv_handle_t *)t, NULL);
		/* The handle memory is in d->net->listeners and must stay valid
		 * until the close completes: keep it counted, marked unused. */
		t->data = NULL;
		d->net->n_listeners++;
		if (required) {
			/* Core's words, but the port may be any program's: a
			 * bitcoind on the same network holds it as often as a
			 * second peerd does. */
			if (err == UV_EADDRINUSE)
				DLOG_ERR(&d->log, DLOG_NET,
				         "Unable to bind to %s on this computer (%s): is another "
				         "peerd or a bitcoind already running?",
				         name, strerror(-err));
			else
				DLOG_ERR(
				    &d->log, DLOG_NET,
				    "Unable to bind to %s on this computer (bind returned error "
				    "%s)",
				    name, strerror(-err));
			return err;
		}
		DLOG_WARNING(&d->log, DLOG_NET, "not listening on %s: %s", name, uv_strerror(err));
		return 0;
	}
	d->net->n_listeners++;
	DLOG_INFO_(&d->log, DLOG_NET, "listening on %s", name);
	return 0;
}

int net_start_listeners(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	if (!c->listen)
		return 0;
	d->net->listeners = xcalloc(NET_MAX_LISTENERS, sizeof(*d->net->listeners));
	if (!d->net->listeners)
		return -ENOMEM;
	if (uv_idle_init(d->loop, &d->net->accept_idle) == 0) {
		if (uv_check_init(d->loop, &d->net->accept_turn) == 0) {
			d->net->accept_idle.data = d;
			d->net->accept_turn.data = d;
			uv_check_start(&d->net->accept_turn, accept_turn_cb);
			/* Neither keeps the loop running. */
			uv_unref((uv_handle_t *)&d->net->accept_turn);
			uv_unref((uv_handle_t *)&d->net->accept_idle);
			d->net->accept_handles = true;
		} else {
			uv_close((uv_handle_t *)&d->net->accept_idle, NULL);
		}
	}
	if (c->bind.n == 0) {
		union net_addr a4, a6;
		(void)uv_ip4_addr("0.0.0.0", c->port, &a4.in4);
		(void)uv_ip6_addr("::", c->port, &a6.in6);
		int err = listen_on(d, &a4, true);
		if (err)
			return err;
		/* No IPv6 on this host is not an error. */
		return listen_on(d, &a6, false);
	}
	for (size_t i = 0; i < c->bind.n; i++) {
		union net_addr a;
		if (net_addr_parse(c->bind.v[i], c->port, &a)) {
			DLOG_ERR(&d->log, DLOG_NET,
			         "bind=%s: not an IP address with an optional port", c->bind.v[i]);
			return -EINVAL;
		}
		int err = listen_on(d, &a, true);
		if (err)
			return err;
	}
	return 0;
}

void net_close_listeners(struct daemon *d)
{
	if (d->net->accept_handles) {
		d->net->accept_handles = false;
		uv_close((uv_handle_t *)&d->net->accept_idle, NULL);
		uv_close((uv_handle_t *)&d->net->accept_turn, NULL);
	}
	for (uint32_t i = 0; i < d->net->n_listeners; i++) {
		uv_handle_t *h = (uv_handle_t *)&d->net->listeners[i];
		if (h->data && !uv_is_closing(h))
			uv_close(h, NULL);
	}
}

/* ---- outbound --------------------------------------------------------- */

static void target_free(struct net_target *t)
{
	xfree(t->name);
	xfree(t);
}

static void target_unlink(struct daemon *d, struct net_target *t)
{
	for (uint32_t i = 0; i < d->net->n_targets; i++) {
		if (d->net->targets[i] == t) {
			memmove(d->net->targets + i, d->net->targets + i + 1,
			        (d->net->n_targets - i - 1) * sizeof(*d->net->targets));
			d->net->n_targets--;
			return;
		}
	}
}

/* Free now, or when the pending resolution's callback runs. */
static void target_drop(struct daemon *d, struct net_target *t)
{
	target_unlink(d, t);
	if (t->peer) {
		t->peer->target = NULL;
		t->peer = NULL;
	}
	/* A lookup in flight is dropped with its callback. */
	net_resolve_cancel(t->gai);
	t->gai = NULL;
	target_free(t);
}

static void schedule_retry(struct net_target *t)
{
	struct daemon *d = t->d;
	if (t->onetry) {
		target_drop(d, t);
		return;
	}
	if (!t->backoff_ms)
		t->backoff_ms = NET_BACKOFF_INITIAL_MS;
	t->next_attempt_ms = daemon_now_ms(d) + t->backoff_ms;
	DLOG_DBG(&d->log, DLOG_NET, "retrying %s in %u ms", t->name, t->backoff_ms);
	t->backoff_ms =
	    t->backoff_ms * 2 > NET_BACKOFF_MAX_MS ? NET_BACKOFF_MAX_MS : t->backoff_ms * 2;
}

static void on_connect(uv_connect_t *req, int status)
{
	struct peer *p = req->data;
	xfree(req);
	if (p->state == PEER_CLOSING)
		return;
	struct daemon *d = p->d;
	/* Core's ConnectNode: an attempt either way (addrman's last try). */
	net_outbound_attempted(p);
	if (status < 0) {
		d->stats.outbound_failed++;
		/* Core logs failures of manual connections at the default
		 * level, the others at debug (LogConnectFailure), in its words
		 * and NetworkErrorString's. */
		char a[NET_ADDRSTRLEN];
		net_addr_format(&p->addr, a);
		dlog_write(&d->log, p->conn_type == PEER_CONN_MANUAL ? DLOG_INFO : DLOG_DEBUG,
		           DLOG_NET, "connect() to %s failed after wait: %s (%d)", a,
		           strerror(-status), -status);
		peer_disconnect(p, uv_strerror(status));
		return;
	}
	d->stats.outbound_connected++;
	if (p->socks) { /* to a proxy: the SOCKS5 handshake first (net/socks5.c) */
		net_socks5_start(p);
		return;
	}
	peer_start(p);
}

struct peer *net_dial(struct daemon *d, const union net_addr *a, enum peer_conn_type type,
                      struct net_target *t, struct net_socks5 *socks)
{
	struct peer *p = peer_new(d, false);
	net_socks5_attach(p, socks); /* frees it when p is NULL */
	if (!p)
		return NULL;
	p->conn_type = type;
	p->addr = *a;
	if (t) {
		p->target = t;
		t->peer = p;
		t->attempts++;
		p->v2_want = t->v2 && !t->v1_once;
		t->v1_once = false;
	}
	d->stats.outbound_attempts++;
	uv_connect_t *req = xmalloc(sizeof(*req));
	int err = req ? uv_tcp_connect(req, &p->tcp, &a->sa, on_connect) : UV_ENOMEM;
	if (err) {
		xfree(req);
		d->stats.outbound_failed++;
		char name[NET_ADDRSTRLEN];
		net_addr_format(a, name);
		DLOG_INFO_(&d->log, DLOG_NET, "connect() to %s failed: %s (%d)", name,
		           strerror(-err), -err);
		peer_disconnect(p, uv_strerror(err));
		return p;
	}
	req->data = p;
	return p;
}

/* Dial a target at a (through a SOCKS5 proxy when socks is not NULL: a is the proxy's). */
static void connect_to(struct net_target *t, const union net_addr *a, struct net_socks5 *socks)
{
	if (!net_dial(t->d, a, t->type, t, socks))
		schedule_retry(t);
}

static void on_resolved(void *ctx, int status, const union net_addr *addrs, size_t n)
{
	struct net_target *t = ctx;
	struct daemon *d = t->d;
	t->gai = NULL;
	if (d->shutting_down)
		return;
	if (!n) {
		DLOG_WARNING(&d->log, DLOG_NET, "cannot resolve %s: %s", t->name,
		             net_resolve_strerror(status));
		d->stats.outbound_failed++;
		schedule_retry(t);
		return;
	}
	/* Round-robin over the results across attempts, so a name that
	 * resolves to an unreachable address first (::1 for "localhost"
	 * with a v4-only listener) still gets through on the next try. */
	connect_to(t, &addrs[t->attempts % n], NULL);
}

static void start_attempt(struct net_target *t)
{
	struct daemon *d = t->d;
	union net_addr a;
	struct net_socks5 *socks;
	/* Through a proxy, or not at all (net/socks5.c), or else as before. */
	int route = net_socks5_route(d, t->name, &a, &socks);
	if (route) {
		if (route > 0)
			connect_to(t, &a, socks);
		else
			schedule_retry(t);
		return;
	}
	if (net_addr_parse(t->name, d->params->default_port, &a) == 0) {
		connect_to(t, &a, NULL);
		return;
	}
	char host[256];
	uint16_t port;
	if (split_host_port(t->name, host, sizeof(host), d->params->default_port, &port)) {
		DLOG_WARNING(&d->log, DLOG_NET, "cannot parse address %s", t->name);
		schedule_retry(t);
		return;
	}
	t->gai = net_resolve(d, host, port, 64, on_resolved, t);
	if (!t->gai) {
		DLOG_WARNING(&d->log, DLOG_NET, "cannot resolve %s: out of memory", t->name);
		schedule_retry(t);
	}
}

static struct net_target *target_find(struct daemon *d, const char *name)
{
	for (uint32_t i = 0; i < d->net->n_targets; i++) {
		if (strcmp(d->net->targets[i]->name, name) == 0)
			return d->net->targets[i];
	}
	return NULL;
}

static int target_new(struct daemon *d, const char *name, bool onetry, bool from_connect)
{
	char host[256];
	uint16_t port;
	if (!name[0] || split_host_port(name, host, sizeof(host), 0, &port))
		return -EINVAL;
	if (target_find(d, name))
		return -EEXIST;
	if (d->net->n_targets >= NET_MAX_TARGETS)
		return -ENOSPC;
	if (!d->net->targets) {
		d->net->targets = xcalloc(NET_MAX_TARGETS, sizeof(*d->net->targets));
		if (!d->net->targets)
			return -ENOMEM;
	}
	struct net_target *t = xcalloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->name = xstrdup(name);
	if (!t->name) {
		xfree(t);
		return -ENOMEM;
	}
	t->d = d;
	t->type = PEER_CONN_MANUAL;
	t->v2 = d->conf->v2transport;
	t->onetry = onetry;
	t->from_connect = from_connect;
	t->backoff_ms = NET_BACKOFF_INITIAL_MS;
	t->next_attempt_ms = 0;
	d->net->targets[d->net->n_targets++] = t;
	return 0;
}

int net_init_targets(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	for (size_t i = 0; i < c->connect.n; i++) {
		if (strcmp(c->connect.v[i], "0") == 0) /* bitcoind's connect=0: none */
			continue;
		int err = target_new(d, c->connect.v[i], false, true);
		if (err && err != -EEXIST) {
			DLOG_ERR(&d->log, DLOG_NET, "connect=%s: %s", c->connect.v[i],
			         strerror(-err));
			return err;
		}
	}
	/* Core: with connect= set, addnode= is ignored (only the listed peers). */
	if (c->connect.n)
		return 0;
	for (size_t i = 0; i < c->addnode.n; i++) {
		int err = target_new(d, c->addnode.v[i], false, false);
		if (err && err != -EEXIST) {
			DLOG_ERR(&d->log, DLOG_NET, "addnode=%s: %s", c->addnode.v[i],
			         strerror(-err));
			return err;
		}
	}
	return 0;
}

int net_target_add(struct daemon *d, const char *name, bool onetry, bool v2)
{
	int err = target_new(d, name, onetry, false);
	if (err)
		return err;
	d->net->targets[d->net->n_targets - 1]->v2 = v2;
	/* Try right away rather than at the next slow tick. */
	net_tick(d, daemon_now_ms(d));
	return 0;
}

int net_target_add_type(struct daemon *d, const char *name, enum peer_conn_type type, bool v2)
{
	int err = target_new(d, name, true, false);
	if (err)
		return err;
	d->net->targets[d->net->n_targets - 1]->type = type;
	d->net->targets[d->net->n_targets - 1]->v2 = v2;
	net_tick(d, daemon_now_ms(d));
	return 0;
}

int net_target_remove(struct daemon *d, const char *name)
{
	struct net_target *t = target_find(d, name);
	if (!t || t->onetry)
		return -ENOENT;
	target_drop(d, t);
	return 0;
}

void net_release_targets(struct daemon *d)
{
	while (d->net->n_targets)
		target_drop(d, d->net->targets[d->net->n_targets - 1]);
	xfree(d->net->targets);
	d->net->targets = NULL;
}

void net_tick(struct daemon *d, uint64_t now_ms)
{
	if (d->shutting_down || d->network_inactive)
		return;
	/* Manual targets have Core's MAX_ADDNODE_CONNECTIONS slots; the
	 * automatic types (addr-fetch, addconnection) were counted against
	 * the automatic slots when they were added. */
	uint32_t active = 0;
	for (uint32_t i = 0; i < d->net->n_targets; i++) {
		const struct net_target *t = d->net->targets[i];
		if (t->type == PEER_CONN_MANUAL && (t->peer || t->gai))
			active++;
	}
	/* Index loop: start_attempt may drop a onetry target from the array. */
	for (uint32_t i = 0; i < d->net->n_targets;) {
		struct net_target *t = d->net->targets[i];
		bool manual = t->type == PEER_CONN_MANUAL;
		if (t->peer || t->gai || now_ms < t->next_attempt_ms ||
		    (manual && active >= NET_MAX_OUTBOUND)) {
			i++;
			continue;
		}
		if (manual)
			active++;
		start_attempt(t);
		if (i < d->net->n_targets && d->net->targets[i] == t)
			i++;
	}
}

bool net_target_retry_v1(struct peer *p)
{
	struct net_target *t = p->target;
	if (!t || t->d->shutting_down)
		return false;
	/* At once and without backoff, as Core's reconnections list. */
	p->target = NULL;
	t->peer = NULL;
	t->v1_once = true;
	t->next_attempt_ms = 0;
	net_tick(t->d, daemon_now_ms(t->d));
	return true;
}

void net_peer_closed(struct peer *p)
{
	struct net_target *t = p->target;
	p->target = NULL;
	if (!t)
		return;
	t->peer = NULL;
	if (t->d->shutting_down)
		return;
	if (p->handshake_done && !t->onetry)
		t->backoff_ms = NET_BACKOFF_INITIAL_MS;
	schedule_retry(t);
}

bool net_is_local_nonce(struct daemon *d, uint64_t nonce)
{
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *q = d->peers[i];
		if (!q->inbound && q->state == PEER_HANDSHAKE && q->local_nonce == nonce)
			return true;
	}
	return false;
}
