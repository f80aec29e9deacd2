/*
 * daemon/net/socks5.c: outbound connections through a SOCKS5 proxy
 * (RFC 1928, with RFC 1929's username and password), as Core 29's
 * ConnectNode, ConnectThroughProxy and Socks5 (net.cpp, netbase.cpp), but
 * on the loop: no step blocks.
 *
 * Which destinations go through a proxy (net_socks5_route): an IP
 * literal through its network's proxy when it has one (IPv4, IPv6 and
 * CJDNS: -proxy; an unroutable address such as 127.0.0.1 is on no
 * network and is dialled directly, as Core's GetNetwork makes it); a Tor
 * v3 name through the onion proxy (-onion, else -proxy) and never
 * directly; a host name through -proxy unresolved (the proxy resolves it,
 * Core's name proxy), else resolved here as before. I2P names cannot be
 * reached (no SAM client).
 *
 * The handshake, once TCP to the proxy is up (net_socks5_start): the
 * greeting offers "no authentication" and, with -proxyrandomize (the
 * default), "username/password"; if the proxy picks the latter we send
 * credentials never used before in any run (a random prefix per run and
 * a counter, Core's stream isolation: Tor gives each its own circuit);
 * then CONNECT with the destination always as a domain name, its text
 * (an IP as "1.2.3.4" or "2001:db8::1"), as Core sends it; then the reply
 * and its bound address. Each reply must come within 20 s (peer_tick).
 * The reads ask libuv for exactly the bytes of the reply expected, so
 * nothing the peer sends after it is taken from the socket here: once
 * the reply is read the peer starts as any outbound peer (peer_start).
 * Failures use Core's words in the log.
 */
#include "daemon/net/net.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

enum socks_step {
	STEP_GREETING, /* waiting for the method choice (2 bytes) */
	STEP_AUTH,     /* waiting for the username/password verdict (2 bytes) */
	STEP_HEAD,     /* waiting for the reply's first 4 bytes */
	STEP_NAMELEN,  /* a domain-name bound address: its length byte */
	STEP_BOUND,    /* the bound address and port */
};

struct net_socks5 {
	struct peer *p;
	char dest[256]; /* what CONNECT names (at most 255 bytes) */
	uint16_t port;
	uint8_t net;              /* the destination's enum addrman_net */
	bool randomize;           /* offer username/password */
	union net_addr target_ip; /* the destination as an IP, family 0 for a name */
	enum socks_step step;
	uint8_t buf[262];
	size_t have, want;
};

struct socks_write {
	uv_write_t req;
	size_t len;
	uint8_t data[];
};

/* ---- routing --------------------------------------------------------- */

int net_socks5_route(struct daemon *d, const char *name, union net_addr *via,
                     struct net_socks5 **out)
{
	char host[CONF_MAX_HOST + 1];
	uint16_t port;
	*out = NULL;
	if (conf_hostport(name, d->params->default_port, host, sizeof(host), &port))
		return 0; /* net.c says what is wrong with it */
	const struct net_proxy *proxy;
	union net_addr ip;
	memset(&ip, 0, sizeof(ip));
	int net;
	if (net_addr_parse(name, d->params->default_port, &ip) == 0) {
		struct addrman_service s = net_addr_service(&ip);
		if (s.net == ADDRMAN_NET_IPV6 && s.addr[0] == 0xfc &&
		    net_is_reachable(d, ADDRMAN_NET_CJDNS))
			s.net = ADDRMAN_NET_CJDNS;
		net = addrman_netaddr_network(&s); /* unroutable: no proxy */
		if (!(proxy = net_proxy_for(d, net)))
			return 0;
		addrman_netaddr_str(&s, host, sizeof(host));
	} else {
		memset(&ip, 0, sizeof(ip)); /* the failed parse may have written to it */
		size_t len = strlen(host);
		bool onion = len > 6 && strcmp(host + len - 6, ".onion") == 0;
		bool i2p = len > 8 && strcmp(host + len - 8, ".b32.i2p") == 0;
		net = onion ? ADDRMAN_NET_ONION : i2p ? ADDRMAN_NET_I2P : ADDRMAN_NET_UNROUTABLE;
		proxy = onion || i2p ? net_proxy_for(d, net)
		                     : (d->net->reach.name_proxy.addr.sa.sa_family
		                            ? &d->net->reach.name_proxy
		                            : NULL);
		if (!proxy && !onion && !i2p)
			return 0; /* a host name with no name proxy: resolved here */
		if (!proxy || i2p) {
			/* Core dials it directly and cannot make a socket for it. */
			DLOG_ERR(&d->log, DLOG_NET,
			         "Cannot create a socket for connecting to %s:%u", host, port);
			return -1;
		}
	}
	struct net_socks5 *s = xcalloc(1, sizeof(*s));
	if (!s)
		return -1;
	snprintf(s->dest, sizeof(s->dest), "%s", host);
	s->port = port;
	s->net = (uint8_t)net;
	s->randomize = proxy->randomize;
	s->target_ip = ip;
	*via = proxy->addr;
	char pa[NET_ADDRSTRLEN];
	net_addr_format(&proxy->addr, pa);
	DLOG_DBG(&d->log, DLOG_NET, "Using proxy: %s to connect to %s:%u", pa, s->dest, port);
	*out = s;
	return 1;
}

int net_socks5_route_service(struct daemon *d, const struct addrman_service *s, union net_addr *via,
                             struct net_socks5 **out)
{
	char text[128];
	addrman_service_str(s, text, sizeof(text));
	return net_socks5_route(d, text, via, out);
}

void net_socks5_attach(struct peer *p, struct net_socks5 *s)
{
	if (!p || !s) {
		xfree(s);
		return;
	}
	p->socks = s;
	s->p = p;
	p->proxied = true;
	p->proxy_net = s->net;
}

void net_socks5_free(struct peer *p)
{
	xfree(p->socks);
	p->socks = NULL;
	p->socks_busy = false;
}

/* ---- the handshake ----------------------------------------------------- */

static void socks_fail(struct peer *p, const char *why)
{
	p->d->stats.outbound_failed++;
	peer_disconnect(p, why);
}

static void write_cb(uv_write_t *req, int status)
{
	struct socks_write *w = (struct socks_write *)req;
	struct peer *p = req->data;
	xfree(w);
	if (status < 0 && status != UV_ECANCELED && p->state != PEER_CLOSING) {
		DLOG_ERR(&p->d->log, DLOG_NET, "Error sending to proxy");
		socks_fail(p, "socks5: error sending to proxy");
	}
}

static void socks_send(struct peer *p, const uint8_t *data, size_t len)
{
	struct socks_write *w = xmalloc(sizeof(*w) + len);
	if (!w) {
		socks_fail(p, "out of memory");
		return;
	}
	memcpy(w->data, data, len);
	w->len = len;
	w->req.data = p;
	uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)len);
	int err = uv_write(&w->req, (uv_stream_t *)&p->tcp, &b, 1, write_cb);
	if (err) {
		xfree(w);
		DLOG_ERR(&p->d->log, DLOG_NET, "Error sending to proxy");
		socks_fail(p, "socks5: error sending to proxy");
	}
}

/* Wait for n more bytes of the proxy's answer. */
static void expect(struct net_socks5 *s, enum socks_step step, size_t n)
{
	s->step = step;
	s->have = 0;
	s->want = n;
}

static void send_connect(struct peer *p)
{
	struct net_socks5 *s = p->socks;
	uint8_t m[7 + 255];
	size_t n = strlen(s->dest);
	m[0] = 5; /* version */
	m[1] = 1; /* CONNECT */
	m[2] = 0;
	m[3] = 3; /* a domain name, always (Core) */
	m[4] = (uint8_t)n;
	memcpy(m + 5, s->dest, n);
	m[5 + n] = (uint8_t)(s->port >> 8);
	m[6 + n] = (uint8_t)s->port;
	expect(s, STEP_HEAD, 4);
	socks_send(p, m, 7 + n);
}

static void send_auth(struct peer *p)
{
	struct daemon *d = p->d;
	struct net_reach *r = &d->net->reach;
	char cred[64];
	int n = snprintf(cred, sizeof(cred), "%s%llu", r->cred_prefix,
	                 (unsigned long long)r->cred_counter++);
	uint8_t m[3 + 2 * sizeof(cred)];
	m[0] = 1; /* RFC 1929's version */
	m[1] = (uint8_t)n;
	memcpy(m + 2, cred, (size_t)n);
	m[2 + n] = (uint8_t)n;
	memcpy(m + 3 + n, cred, (size_t)n);
	DLOG_DBG(&d->log, DLOG_NET, "SOCKS5 sending proxy authentication %s:%s", cred, cred);
	expect(p->socks, STEP_AUTH, 2);
	socks_send(p, m, 3 + 2 * (size_t)n);
}

static const char *reply_text(uint8_t rep)
{
	switch (rep) {
	case 0x01:
		return "general failure";
	case 0x02:
		return "connection not allowed";
	case 0x03:
		return "network unreachable";
	case 0x04:
		return "host unreachable";
	case 0x05:
		return "connection refused";
	case 0x06:
		return "TTL expired";
	case 0x07:
		return "protocol error";
	case 0x08:
		return "address type not supported";
	case 0xf0:
		return "onion service descriptor can not be found";
	case 0xf1:
		return "onion service descriptor is invalid";
	case 0xf2:
		return "onion service introduction failed";
	case 0xf3:
		return "onion service rendezvous failed";
	case 0xf4:
		return "onion service missing client authorization";
	case 0xf5:
		return "onion service wrong client authorization";
	case 0xf6:
		return "onion service invalid address";
	case 0xf7:
		return "onion service introduction timed out";
	default:
		return NULL;
	}
}

/* The handshake is over: the connection is the peer's now. */
static void socks_done(struct peer *p)
{
	struct net_socks5 *s = p->socks;
	DLOG_DBG(&p->d->log, DLOG_NET, "SOCKS5 connected %s", s->dest);
	uv_read_stop((uv_stream_t *)&p->tcp);
	/* The peer is the destination, not the proxy: its IP, or by name no
	 * address of its own (peer_start keeps it: p->proxy_net is set). */
	p->addr = s->target_ip;
	net_socks5_free(p);
	peer_start(p);
}

/* A whole answer (s->want bytes) is in s->buf. */
static void socks_step(struct peer *p)
{
	struct daemon *d = p->d;
	struct net_socks5 *s = p->socks;
	const uint8_t *b = s->buf;
	switch (s->step) {
	case STEP_GREETING:
		if (b[0] != 5) {
			DLOG_ERR(&d->log, DLOG_NET, "Proxy failed to initialize");
			socks_fail(p, "socks5: proxy failed to initialize");
		} else if (b[1] == 2 && s->randomize) {
			send_auth(p);
		} else if (b[1] == 0) {
			send_connect(p);
		} else {
			DLOG_ERR(&d->log, DLOG_NET,
			         "Proxy requested wrong authentication method %02x", b[1]);
			socks_fail(p, "socks5: wrong authentication method");
		}
		return;
	case STEP_AUTH:
		if (b[0] != 1 || b[1] != 0) {
			DLOG_ERR(&d->log, DLOG_NET, "Proxy authentication unsuccessful");
			socks_fail(p, "socks5: authentication unsuccessful");
			return;
		}
		send_connect(p);
		return;
	case STEP_HEAD:
		if (b[0] != 5) {
			DLOG_ERR(&d->log, DLOG_NET, "Proxy failed to accept request");
			socks_fail(p, "socks5: proxy failed to accept request");
			return;
		}
		if (b[1] != 0) {
			const char *t = reply_text(b[1]);
			char unknown[24];
			if (!t) {
				snprintf(unknown, sizeof(unknown), "unknown (0x%02x)", b[1]);
				t = unknown;
			}
			DLOG_DBG(&d->log, DLOG_NET, "Socks5() connect to %s:%u failed: %s", s->dest,
			         s->port, t);
			socks_fail(p, "socks5: the proxy could not connect");
			return;
		}
		if (b[2] != 0 || (b[3] != 1 && b[3] != 3 && b[3] != 4)) {
			DLOG_ERR(&d->log, DLOG_NET, "Error: malformed proxy response");
			socks_fail(p, "socks5: malformed proxy response");
			return;
		}
		if (b[3] == 3)
			expect(s, STEP_NAMELEN, 1);
		else
			expect(s, STEP_BOUND, (b[3] == 1 ? 4 : 16) + 2);
		return;
	case STEP_NAMELEN:
		expect(s, STEP_BOUND, (size_t)b[0] + 2);
		return;
	case STEP_BOUND:
		socks_done(p);
		return;
	}
}

static void socks_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)suggested;
	struct peer *p = h->data;
	struct net_socks5 *s = p->socks;
	/* Exactly the rest of the answer: what follows it stays in the socket. */
	if (!s || s->have >= s->want) {
		*buf = uv_buf_init(NULL, 0);
		return;
	}
	*buf = uv_buf_init((char *)s->buf + s->have, (unsigned)(s->want - s->have));
}

/* Core's words when the proxy closes or fails while we wait at a step. */
static const char *read_error_text(enum socks_step step)
{
	switch (step) {
	case STEP_AUTH:
		return "Error reading proxy authentication response";
	case STEP_HEAD:
		return "Error while reading proxy response";
	default:
		return "Error reading from proxy";
	}
}

static void socks_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	(void)buf;
	struct peer *p = st->data;
	struct net_socks5 *s = p->socks;
	if (!s || p->state == PEER_CLOSING || n == 0)
		return;
	if (n < 0) {
		if (s->step == STEP_GREETING)
			DLOG_INFO_(
			    &p->d->log, DLOG_NET,
			    "Socks5() connect to %s:%u failed: InterruptibleRecv() timeout or "
			    "other failure",
			    s->dest, s->port);
		else
			DLOG_ERR(&p->d->log, DLOG_NET, "%s", read_error_text(s->step));
		socks_fail(p, n == UV_EOF ? "socks5: proxy closed the connection"
		                          : uv_strerror((int)n));
		return;
	}
	s->have += (size_t)n;
	if (s->have < s->want)
		return;
	p->connect_ms = daemon_now_ms(p->d); /* each answer gets its own 20 s */
	socks_step(p);
}

void net_socks5_start(struct peer *p)
{
	struct net_socks5 *s = p->socks;
	p->socks_busy = true;
	p->connect_ms = daemon_now_ms(p->d);
	DLOG_DBG(&p->d->log, DLOG_NET, "SOCKS5 connecting %s", s->dest);
	if (strlen(s->dest) > 255) {
		DLOG_ERR(&p->d->log, DLOG_NET, "Hostname too long");
		socks_fail(p, "socks5: hostname too long");
		return;
	}
	int err = uv_read_start((uv_stream_t *)&p->tcp, socks_alloc, socks_read);
	if (err) {
		socks_fail(p, uv_strerror(err));
		return;
	}
	/* Version 5; "no authentication", and "username/password" when we
	 * have credentials to isolate this stream with. */
	uint8_t m[4] = {5, 1, 0, 2};
	if (s->randomize)
		m[1] = 2;
	expect(s, STEP_GREETING, 2);
	socks_send(p, m, s->randomize ? 4 : 3);
}
