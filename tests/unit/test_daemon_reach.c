/*
 * tests/unit/test_daemon_reach.c: networks, proxies and local addresses
 * (daemon/net/reach.c, local.c, socks5.c): which networks are reachable,
 * which destinations go through which proxy (Core's ConnectNode with
 * GetProxy/GetNameProxy), the address announced to each kind of peer
 * (Core's GetLocal and its reachability order), and the SOCKS5 handshake
 * byte by byte over a socketpair: what peerd sends, and Core's words in
 * the log for each way a proxy can fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/net.h"
#include "tests/unit/test_daemon_fixture.h"

/* A valid Tor v3 name (as Core's SetSpecial checks it). */
#define ONION "hbop3paa5qzagfuziydxtqkqtgzlxi6k2dseb773bdqq34fmxhqttzqd.onion"

static void list_add(struct conf_list *l, const char *v)
{
	l->v[l->n] = xstrdup(v);
	assert_non_null(l->v[l->n]);
	l->n++;
}

/* ---- reachable networks and routes ------------------------------------ */

static void test_reachable_default(void **state)
{
	struct tf *t = *state;
	/* Before the options are read (daemon_init's defaults): the same. */
	assert_true(net_is_reachable(t->d, ADDRMAN_NET_IPV4));
	assert_true(net_is_reachable(t->d, ADDRMAN_NET_IPV6));
	assert_false(net_is_reachable(t->d, ADDRMAN_NET_ONION));
	assert_int_equal(strlen(t->d->net->reach.cred_prefix), 17);
	uint32_t before = net_reachable_mask(t->d);
	assert_int_equal(net_reach_init(t->d), 0);
	assert_int_equal(net_reachable_mask(t->d), before);
	struct daemon *d = t->d;
	assert_true(net_is_reachable(d, ADDRMAN_NET_IPV4));
	assert_true(net_is_reachable(d, ADDRMAN_NET_IPV6));
	/* No proxy reaches Tor, no -cjdnsreachable, no SAM. */
	assert_false(net_is_reachable(d, ADDRMAN_NET_ONION));
	assert_false(net_is_reachable(d, ADDRMAN_NET_CJDNS));
	assert_false(net_is_reachable(d, ADDRMAN_NET_I2P));
	assert_int_equal(
	    net_reachable_mask(d) &
	        ((1u << ADDRMAN_NET_ONION) | (1u << ADDRMAN_NET_CJDNS) | (1u << ADDRMAN_NET_I2P)),
	    0);
	assert_null(net_proxy_for(d, ADDRMAN_NET_IPV4));
	assert_false(net_is_reachable(d, -1));
	assert_false(net_is_reachable(d, ADDRMAN_NET__COUNT));
}

static void test_reachable_onlynet(void **state)
{
	struct tf *t = *state;
	list_add(&t->conf.onlynet, "IPv4");
	list_add(&t->conf.onlynet, "tor"); /* deprecated, still onion */
	snprintf(t->conf.proxy, sizeof(t->conf.proxy), "127.0.0.1:9050");
	assert_int_equal(net_reach_init(t->d), 0);
	assert_int_equal(net_reachable_mask(t->d),
	                 (1u << ADDRMAN_NET_IPV4) | (1u << ADDRMAN_NET_ONION));
	assert_true(tf_log_contains(t, "net name 'tor' is deprecated"));
	const struct net_proxy *p = net_proxy_for(t->d, ADDRMAN_NET_ONION);
	assert_non_null(p);
	assert_true(p->randomize);
	char a[NET_ADDRSTRLEN];
	net_addr_format(&p->addr, a);
	assert_string_equal(a, "127.0.0.1:9050");
	/* -proxy serves IPv4, IPv6 and CJDNS too; never I2P. */
	assert_non_null(net_proxy_for(t->d, ADDRMAN_NET_IPV6));
	assert_non_null(net_proxy_for(t->d, ADDRMAN_NET_CJDNS));
	assert_null(net_proxy_for(t->d, ADDRMAN_NET_I2P));
}

static void test_bad_values(void **state)
{
	struct tf *t = *state;
	list_add(&t->conf.onlynet, "ipv5");
	assert_int_equal(net_reach_init(t->d), -EINVAL);
	assert_true(tf_log_contains(t, "Unknown network specified in -onlynet: 'ipv5'"));
	t->conf.onlynet.n = 1;
	xfree(t->conf.onlynet.v[0]);
	t->conf.onlynet.v[0] = xstrdup("onion");
	snprintf(t->conf.proxy, sizeof(t->conf.proxy), "127.0.0.1:9050");
	snprintf(t->conf.onion, sizeof(t->conf.onion), "0");
	assert_int_equal(net_reach_init(t->d), -EINVAL);
	assert_true(tf_log_contains(t, "explicitly forbidden: -onion=0"));
	snprintf(t->conf.onion, sizeof(t->conf.onion), "[::1]:x");
	assert_int_equal(net_reach_init(t->d), -EINVAL);
	assert_true(tf_log_contains(t, "Invalid port specified in -onion: '[::1]:x'"));
	snprintf(t->conf.onion, sizeof(t->conf.onion), "unix:/run/tor/socks");
	assert_int_equal(net_reach_init(t->d), -EINVAL);
	assert_true(
	    tf_log_contains(t, "Invalid -onion address or hostname: 'unix:/run/tor/socks'"));
}

/* net_socks5_route's verdict for name; the request, if any, is freed. */
static int route(struct tf *t, const char *name, char *via)
{
	union net_addr a;
	struct net_socks5 *s = NULL;
	memset(&a, 0, sizeof(a));
	int r = net_socks5_route(t->d, name, &a, &s);
	assert_true((r == 1) == (s != NULL));
	if (via)
		net_addr_format(&a, via);
	net_socks5_attach(NULL, s);
	return r;
}

static void test_routes_with_proxy(void **state)
{
	struct tf *t = *state;
	char via[NET_ADDRSTRLEN];
	snprintf(t->conf.proxy, sizeof(t->conf.proxy), "[::1]:9999");
	t->conf.cjdnsreachable = 1;
	assert_int_equal(net_reach_init(t->d), 0);
	assert_int_equal(route(t, "1.2.3.4:8333", via), 1);
	assert_string_equal(via, "[::1]:9999");
	assert_int_equal(route(t, "[2001:4860::1]:8333", NULL), 1);
	assert_int_equal(route(t, "[fc00::1]:8333", NULL), 1); /* CJDNS, through -proxy */
	assert_int_equal(route(t, "localhost:1234", NULL), 1); /* the name proxy */
	assert_int_equal(route(t, ONION ":8333", NULL), 1);    /* onion defaults to -proxy */
	/* Unroutable addresses are on no network: no proxy (Core's GetNetwork). */
	assert_int_equal(route(t, "127.0.0.1:8333", NULL), 0);
	assert_int_equal(route(t, "10.0.0.1:8333", NULL), 0);
	assert_int_equal(route(t, "[::1]:8333", NULL), 0);
	/* No SAM client: I2P is never dialled. */
	assert_int_equal(
	    route(t, "ukeu3k5oycgaauneqgtnvselmt4yemvoilkln7jpvamvfx7dnkdq.b32.i2p", NULL), -1);
}

static void test_routes_onion_only(void **state)
{
	struct tf *t = *state;
	char via[NET_ADDRSTRLEN];
	snprintf(t->conf.onion, sizeof(t->conf.onion), "127.0.0.1");
	assert_int_equal(net_reach_init(t->d), 0);
	assert_int_equal(route(t, ONION, via), 1);
	assert_string_equal(via, "127.0.0.1:9050"); /* Core's default port */
	/* An address manager's onion entry goes the same way (by its name). */
	uint8_t key[32];
	memset(key, 7, sizeof(key));
	struct addrman_service onion;
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV3, key, 32, 8333, &onion), 0);
	union net_addr a;
	struct net_socks5 *s = NULL;
	assert_int_equal(net_socks5_route_service(t->d, &onion, &a, &s), 1);
	net_socks5_attach(NULL, s);
	struct addrman_service v4 = addrman_service_ipv4(1, 2, 3, 4, 8333);
	assert_int_equal(net_socks5_route_service(t->d, &v4, &a, &s), 0);
	assert_int_equal(route(t, "1.2.3.4:8333", NULL), 0);
	assert_int_equal(route(t, "localhost:1234", NULL), 0); /* resolved here, as before */
	/* Without -cjdnsreachable fc00::/8 is private IPv6: direct. */
	assert_int_equal(route(t, "[fc00::1]:8333", NULL), 0);
}

static void test_routes_no_onion(void **state)
{
	struct tf *t = *state;
	snprintf(t->conf.proxy, sizeof(t->conf.proxy), "127.0.0.1:9050");
	snprintf(t->conf.onion, sizeof(t->conf.onion), "0");
	assert_int_equal(net_reach_init(t->d), 0);
	assert_false(net_is_reachable(t->d, ADDRMAN_NET_ONION));
	assert_int_equal(route(t, ONION ":8333", NULL), -1);
	assert_true(tf_log_contains(t, "Cannot create a socket for connecting to " ONION ":8333"));
}

/* ---- local addresses ----------------------------------------------------- */

static struct addrman_service svc(const char *text, uint16_t port)
{
	union net_addr a;
	assert_int_equal(net_addr_parse(text, port, &a), 0);
	return net_addr_service(&a);
}

static void test_local_addresses(void **state)
{
	struct tf *t = *state;
	t->conf.listen = true;
	t->conf.discover = false;
	list_add(&t->conf.externalip, "1.2.3.4");
	list_add(&t->conf.externalip, "[2001:4860::1]:8333");
	list_add(&t->conf.externalip, ONION);
	list_add(&t->conf.externalip, "10.1.1.1"); /* not routable: not ours */
	snprintf(t->conf.onion, sizeof(t->conf.onion), "127.0.0.1:9050");
	assert_int_equal(net_reach_init(t->d), 0);
	struct daemon *d = t->d;
	struct net_reach *r = &d->net->reach;
	assert_int_equal(r->n_local, 3);
	/* Core's map order: IPv4, IPv6, onion. */
	assert_int_equal(r->local[0].addr.net, ADDRMAN_NET_IPV4);
	assert_int_equal(r->local[0].addr.port, t->conf.port); /* the listening port */
	assert_int_equal(r->local[1].addr.net, ADDRMAN_NET_IPV6);
	assert_int_equal(r->local[2].addr.net, ADDRMAN_NET_ONION);
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL);
	char line[64];
	snprintf(line, sizeof(line), "AddLocal(1.2.3.4:%u,4)", t->conf.port);
	assert_true(tf_log_contains(t, line));

	/* The same address again: one more point and its port. */
	struct addrman_service s = svc("1.2.3.4", 9);
	assert_true(net_add_local(d, &s, NET_LOCAL_MANUAL));
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL + 1);
	assert_int_equal(r->local[0].addr.port, 9);
	/* A peer saw us there: one more. Below LOCAL_MANUAL without -discover: no. */
	assert_true(net_seen_local(d, &s));
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL + 2);
	struct addrman_service other = svc("5.6.7.8", 1);
	assert_false(net_seen_local(d, &other));
	assert_false(net_add_local(d, &other, NET_LOCAL_IF));
	assert_true(net_is_local_service(d, &s));
	assert_false(net_is_local_service(d, &other));

	struct addrman_address out;
	char text[128];
	/* An IPv4 peer gets our IPv4 address. */
	struct peer *p4 = tf_peer(t, true, "8.8.8.8:8333");
	assert_true(net_local_addr_for_peer(d, p4, &out));
	addrman_service_str(&out.svc, text, sizeof(text));
	assert_string_equal(text, "1.2.3.4:9");
	/* An IPv6 peer our native IPv6 (REACH_IPV6_STRONG over REACH_IPV4). */
	struct peer *p6 = tf_peer(t, false, "[2a00:1450::1]:8333");
	assert_true(net_local_addr_for_peer(d, p6, &out));
	addrman_service_str(&out.svc, text, sizeof(text));
	assert_string_equal(text, "[2001:4860::1]:8333");
	/* A peer over Tor only our onion address; over clearnet never it. */
	struct peer *po = tf_peer(t, false, "127.0.0.1:9050");
	po->proxied = true;
	po->proxy_net = ADDRMAN_NET_ONION;
	assert_int_equal(net_peer_network(po), ADDRMAN_NET_ONION);
	assert_true(net_local_addr_for_peer(d, po, &out));
	assert_int_equal(out.svc.net, ADDRMAN_NET_ONION);
	/* A loopback peer: our IPv4 (REACH_IPV4 for an unroutable peer). */
	struct peer *pl = tf_peer(t, true, "127.0.0.1:1");
	assert_true(net_local_addr_for_peer(d, pl, &out));
	assert_int_equal(out.svc.net, ADDRMAN_NET_IPV4);
	/* Not listening: nothing to announce. */
	r->listen = false;
	assert_false(net_local_addr_for_peer(d, p4, &out));
}

static void test_local_discover_seen(void **state)
{
	struct tf *t = *state;
	t->conf.listen = true;
	t->conf.discover = true;
	assert_int_equal(net_reach_init(t->d), 0);
	struct daemon *d = t->d;
	d->net->reach.n_local = 0; /* whatever this host's interfaces hold */
	/* Nothing of ours routable: the address the peer sees us at, with
	 * -discover (Core's IsPeerAddrLocalGood); an outbound peer cannot
	 * know our listening port. */
	struct peer *in = tf_peer(t, true, "8.8.8.8:5000");
	in->addr_local = svc("9.9.9.9", 4444);
	struct addrman_address out;
	char text[128];
	assert_true(net_local_addr_for_peer(d, in, &out));
	addrman_service_str(&out.svc, text, sizeof(text));
	assert_string_equal(text, "9.9.9.9:4444");
	struct peer *o = tf_peer(t, false, "8.8.4.4:8333");
	o->addr_local = svc("9.9.9.9", 4444);
	assert_true(net_local_addr_for_peer(d, o, &out));
	assert_int_equal(out.svc.port, d->net->reach.listen_port);
	/* A private address it says it sees is no use. */
	o->addr_local = svc("192.168.1.2", 4444);
	assert_false(net_local_addr_for_peer(d, o, &out));
	d->net->reach.discover = false;
	o->addr_local = svc("9.9.9.9", 4444);
	assert_false(net_local_addr_for_peer(d, o, &out));
}

/* A version from p saying it sees us at 1.2.3.4:port. */
static void send_version(struct tf *t, struct peer *p, uint16_t port)
{
	struct proto_msg m;
	proto_msg_init(&m);
	tf_version_msg(&m, "/test:1.0/", 0, 0x0102030405060708ull + p->id);
	static const uint8_t ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4};
	memcpy(m.version.addr_recv.ip, ip, 16);
	m.version.addr_recv.port = port;
	struct proto_writer w;
	proto_writer_init(&w);
	tf_msg_frame(t, &w, &m);
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
	proto_msg_release(&m);
}

/* p2p/handshake.c: the version's addr_recv is where the peer sees us
 * (Core's SetAddrLocal); an inbound peer's view adds a point to that
 * address of ours (SeenLocal), an outbound peer's does not. */
static void test_version_seen_local(void **state)
{
	struct tf *t = *state;
	list_add(&t->conf.externalip, "1.2.3.4");
	assert_int_equal(net_reach_init(t->d), 0);
	struct net_reach *r = &t->d->net->reach;
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL);
	struct peer *in = tf_new_conn(t, "8.8.8.8:5000");
	send_version(t, in, 18444);
	char text[64];
	addrman_service_str(&in->addr_local, text, sizeof(text));
	assert_string_equal(text, "1.2.3.4:18444");
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL + 1);
	struct peer *out = tf_peer(t, false, "8.8.4.4:8333");
	out->state = PEER_HANDSHAKE;
	out->got_version = out->handshake_done = false;
	out->sent_version = true;
	send_version(t, out, 18444);
	assert_int_equal(out->addr_local.net, ADDRMAN_NET_IPV4);
	assert_int_equal(r->local[0].score, NET_LOCAL_MANUAL + 1);
}

/* ---- the SOCKS5 handshake over a socketpair -------------------------------- */

/* Run the loop until the proxy's end has `want` bytes (or a second passed). */
static size_t proxy_read(struct tf *t, int fd, uint8_t *buf, size_t want)
{
	size_t have = 0;
	for (int i = 0; i < 200 && have < want; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		ssize_t n = read(fd, buf + have, want - have);
		if (n > 0)
			have += (size_t)n;
		else if (n == 0)
			break;
		else
			usleep(5000);
	}
	return have;
}

static void proxy_write(struct tf *t, int fd, const void *data, size_t len)
{
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	for (int i = 0; i < 5; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
}

/* A peer dialling "localhost:1234" whose TCP to the proxy just came up. */
static struct peer *socks_peer(struct tf *t, int *fd)
{
	snprintf(t->conf.proxy, sizeof(t->conf.proxy), "127.0.0.1:9050");
	assert_int_equal(net_reach_init(t->d), 0);
	struct peer *p = tf_peer(t, false, "127.0.0.1:9050");
	p->state = PEER_CONNECTING;
	p->got_version = p->sent_version = p->handshake_done = false;
	union net_addr via;
	struct net_socks5 *s = NULL;
	assert_int_equal(net_socks5_route(t->d, "localhost:1234", &via, &s), 1);
	net_socks5_attach(p, s);
	net_socks5_start(p);
	*fd = t->remote[p->id];
	uint8_t b[4];
	assert_int_equal(proxy_read(t, *fd, b, 4), 4);
	/* Version 5, two methods: none and username/password. */
	static const uint8_t greeting[4] = {5, 2, 0, 2};
	assert_memory_equal(b, greeting, 4);
	return p;
}

static void test_socks5_handshake(void **state)
{
	struct tf *t = *state;
	int fd;
	struct peer *p = socks_peer(t, &fd);
	assert_true(p->socks_busy);
	proxy_write(t, fd, "\x05\x02", 2);
	/* Username and password alike: 16 hex digits, '-', the counter. */
	uint8_t b[128];
	assert_int_equal(proxy_read(t, fd, b, 2), 2);
	assert_int_equal(b[0], 1);
	size_t ulen = b[1];
	assert_int_equal(ulen, 18);
	assert_int_equal(proxy_read(t, fd, b, ulen + 1 + ulen), ulen + 1 + ulen);
	assert_memory_equal(b, t->d->net->reach.cred_prefix, 17);
	assert_int_equal(b[16], '-');
	assert_int_equal(b[17], '0');
	assert_int_equal(b[ulen], ulen);
	assert_memory_equal(b, b + ulen + 1, ulen);
	proxy_write(t, fd, "\x01\x00", 2);
	/* CONNECT to a domain name, always. */
	static const uint8_t connect[] = {5,   1,   0,   3,   9,   'l', 'o',  'c',
	                                  'a', 'l', 'h', 'o', 's', 't', 0x04, 0xd2};
	assert_int_equal(proxy_read(t, fd, b, sizeof(connect)), sizeof(connect));
	assert_memory_equal(b, connect, sizeof(connect));
	/* Succeeded, bound to a domain name: its length, the name, the port. */
	proxy_write(t, fd,
	            "\x05\x00\x00\x03\x03"
	            "abc"
	            "\x00\x01",
	            10);
	assert_int_equal(p->state, PEER_HANDSHAKE);
	assert_null(p->socks);
	assert_false(p->socks_busy);
	assert_true(p->proxied);
	assert_int_equal(p->addr.sa.sa_family, 0); /* by name: no address of its own */
	/* Then the peer's version, as for any outbound peer. */
	assert_int_equal(proxy_read(t, fd, b, 24), 24);
	assert_memory_equal(b + 4, "version", 7);
	assert_int_equal(t->d->net->reach.cred_counter, 1);
}

/* One way a proxy fails: after the greeting it sends `reply`; expect
 * the peer closed and `log` in the log. */
static void socks_fails(void **state, const void *greet, const void *auth, const void *reply,
                        size_t reply_len, const char *log)
{
	struct tf *t = *state;
	int fd;
	struct peer *p = socks_peer(t, &fd);
	uint64_t id = p->id, failed = t->d->stats.outbound_failed;
	uint8_t b[64];
	if (greet) {
		proxy_write(t, fd, greet, 2);
		if (auth) {
			assert_int_equal(proxy_read(t, fd, b, 2 + 18 + 1 + 18), 2 + 18 + 1 + 18);
			proxy_write(t, fd, auth, 2);
		}
	}
	if (reply) {
		assert_int_equal(proxy_read(t, fd, b, 16), 16);
		proxy_write(t, fd, reply, reply_len);
	}
	if (!greet)
		shutdown(fd, SHUT_WR);
	/* Closed (and maybe freed already: look it up by id). */
	for (int i = 0; i < 20 && (p = peer_by_id(t->d, id)) && p->state != PEER_CLOSING; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	p = peer_by_id(t->d, id);
	assert_true(!p || p->state == PEER_CLOSING);
	assert_int_equal(t->d->stats.outbound_failed, failed + 1);
	if (!tf_log_contains(t, log))
		fail_msg("no \"%s\" in the log", log);
}

static void test_socks5_failures(void **state)
{
	socks_fails(state, "\x04\x00", NULL, NULL, 0, "Proxy failed to initialize");
}

static void test_socks5_wrong_method(void **state)
{
	socks_fails(state, "\x05\xff", NULL, NULL, 0,
	            "Proxy requested wrong authentication method ff");
}

static void test_socks5_auth_refused(void **state)
{
	socks_fails(state, "\x05\x02", "\x01\x01", NULL, 0, "Proxy authentication unsuccessful");
}

static void test_socks5_unreachable(void **state)
{
	socks_fails(state, "\x05\x00", NULL, "\x05\x04\x00\x01", 4,
	            "Socks5() connect to localhost:1234 failed: host unreachable");
}

static void test_socks5_tor_error(void **state)
{
	socks_fails(state, "\x05\x00", NULL, "\x05\xf6\x00\x01", 4,
	            "failed: onion service invalid address");
}

static void test_socks5_malformed(void **state)
{
	socks_fails(state, "\x05\x00", NULL, "\x05\x00\x01\x01", 4,
	            "Error: malformed proxy response");
}

static void test_socks5_closed(void **state)
{
	socks_fails(
	    state, NULL, NULL, NULL, 0,
	    "Socks5() connect to localhost:1234 failed: InterruptibleRecv() timeout or other "
	    "failure");
}

/* A proxy gets 20 s for each answer (Core's g_socks5_recv_timeout), not
 * the 5 s of a TCP connect. */
static void test_socks5_timeout(void **state)
{
	struct tf *t = *state;
	int fd;
	struct peer *p = socks_peer(t, &fd);
	uint64_t start = p->connect_ms;
	peer_tick(p, start + PEER_CONNECT_TIMEOUT_MS + 1000);
	assert_int_equal(p->state, PEER_CONNECTING);
	peer_tick(p, start + NET_SOCKS5_TIMEOUT_MS);
	assert_int_equal(p->state, PEER_CLOSING);
}

/* Core 29's parameter interaction (conf/load.c): a -proxy turns -listen
 * and -discover off unless given; -noproxy, -proxy=0 and -proxy= do not;
 * -externalip and -listen=0 turn -discover off. */
static void load(const char *a1, const char *a2, bool *listen, bool *discover)
{
	char *argv[] = {"peerd", "-noconf", "-regtest", (char *)a1, (char *)a2, NULL};
	int argc = 3 + (a1 != NULL) + (a2 != NULL);
	struct peerd_conf c;
	char err[256];
	int rc = conf_load(&c, argc, argv, err, sizeof(err));
	if (rc)
		fail_msg("conf_load: %s", err);
	*listen = c.listen;
	*discover = c.discover;
	conf_release(&c);
}

static void test_parameter_interaction(void **state)
{
	(void)state;
	bool l, d;
	load(NULL, NULL, &l, &d);
	assert_true(l && d);
	load("-proxy=127.0.0.1:9050", NULL, &l, &d);
	assert_true(!l && !d);
	load("-noproxy", NULL, &l, &d);
	assert_true(l && d);
	load("-proxy=0", NULL, &l, &d);
	assert_true(l && d);
	load("-proxy=", NULL, &l, &d);
	assert_true(l && d);
	load("-proxy=127.0.0.1", "-listen=1", &l, &d);
	assert_true(l && !d);
	load("-proxy=127.0.0.1", "-bind=127.0.0.1", &l, &d); /* -bind wins: listen */
	assert_true(l && !d);
	load("-proxy=127.0.0.1", "-discover=1", &l, &d);
	assert_true(!l && d);
	load("-externalip=1.2.3.4", NULL, &l, &d);
	assert_true(l && !d);
	load("-listen=0", NULL, &l, &d);
	assert_true(!l && !d);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_reachable_default, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_reachable_onlynet, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_values, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_routes_with_proxy, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_routes_onion_only, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_routes_no_onion, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_local_addresses, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_local_discover_seen, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_version_seen_local, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_handshake, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_failures, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_wrong_method, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_auth_refused, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_unreachable, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_tor_error, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_malformed, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_closed, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_socks5_timeout, tf_setup, tf_teardown),
	    cmocka_unit_test(test_parameter_interaction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
