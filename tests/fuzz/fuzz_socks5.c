/*
 * tests/fuzz/fuzz_socks5.c: what a SOCKS5 proxy answers (daemon/net/
 * socks5.c), in an in-process daemon, through a real socket.
 *
 * The daemon (regtest, -proxy=127.0.0.1:9050, every debug category on,
 * logging to /dev/null) is built once. Each input is one outbound dial
 * through the proxy: a peer on one end of a socketpair in the state of a
 * TCP connection to the proxy that just came up, its SOCKS5 request made
 * by net_socks5_route, and the handshake started (net_socks5_start).
 *
 * Input:
 *   byte 0        the destination: bit 0 a name ("localhost:1234") or an
 *                 IPv4 address, bit 1 -proxyrandomize (credentials
 *                 offered), bit 2 an onion name instead.
 *   then chunks   [len][len bytes]: written by "the proxy" into the
 *                 socket, the loop run after each, peerd's writes read
 *                 and thrown away.
 *
 * After each input the peer is disconnected and the loop run dry, then:
 * no peer left; a peer that got past the handshake holds no SOCKS5
 * state. Leaks are LeakSanitizer's.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "daemon/program.h"

static struct {
	uv_loop_t loop;
	struct peerd_conf conf;
	struct daemon d;
	char dir[64];
	bool ready;
} g;

static const char *const dests[4] = {
    "localhost:1234",
    "1.2.3.4:8333",
    "hbop3paa5qzagfuziydxtqkqtgzlxi6k2dseb773bdqq34fmxhqttzqd.onion:8333",
    "[2001:4860::1]:8333",
};

static void die(const char *what)
{
	fprintf(stderr, "fuzz_socks5: invariant broken: %s\n", what);
	abort();
}

static void rm_datadir(void)
{
	char path[128];
	static const char *const files[] = {"banlist.json", "banlist.json.new"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", g.dir, files[i]);
		unlink(path);
	}
	rmdir(g.dir);
}

static void setup(void)
{
	uv_replace_allocator(xmalloc, xrealloc, xcalloc, xfree);
	json_set_alloc_funcs(xmalloc, xfree);
	if (uv_loop_init(&g.loop))
		die("uv_loop_init");
	conf_defaults(&g.conf);
	g.conf.params = proto_params(PROTO_NET_REGTEST);
	snprintf(g.conf.proxy, sizeof(g.conf.proxy), "127.0.0.1:9050");
	snprintf(g.dir, sizeof(g.dir), "/tmp/peerd-fuzz-XXXXXX");
	if (!mkdtemp(g.dir))
		die("mkdtemp");
	atexit(rm_datadir);
	g.conf.datadir = xstrdup(g.dir);
	g.conf.netdir = xstrdup(g.dir);
	struct daemon *d = &g.d;
	if (daemon_init(d, &g.loop, &g.conf))
		die("daemon_init");
	d->log.out = fopen("/dev/null", "w");
	if (!d->log.out)
		die("/dev/null");
	d->log.timestamps = false;
	d->log.debug = (1u << DLOG_CAT__COUNT) - 1;
	if (ban_init(d) || net_reach_init(d))
		die("ban_init/net_reach_init");
	g.ready = true;
}

static void drain(int fd)
{
	static uint8_t sink[65536];
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g.ready)
		setup();
	if (size < 1)
		return 0;
	struct daemon *d = &g.d;
	d->net->reach.proxy[ADDRMAN_NET_IPV4].randomize = (data[0] & 2) != 0;
	d->net->reach.proxy[ADDRMAN_NET_ONION].randomize = (data[0] & 2) != 0;
	d->net->reach.name_proxy.randomize = (data[0] & 2) != 0;
	const char *dest = dests[(data[0] & 1) | ((data[0] >> 1) & 2)];

	struct peer *p = peer_new(d, false);
	if (!p)
		die("peer_new");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
	if (uv_tcp_open(&p->tcp, sv[0]))
		die("uv_tcp_open");
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK))
		die("fcntl");
	union net_addr via;
	struct net_socks5 *s = NULL;
	if (net_socks5_route(d, dest, &via, &s) != 1)
		die("no route through the proxy");
	net_socks5_attach(p, s);
	p->addr = via;
	net_socks5_start(p);
	uint64_t id = p->id;
	size_t off = 1;
	while (off < size && (p = peer_by_id(d, id)) && p->state != PEER_CLOSING) {
		size_t len = data[off++];
		if (len > size - off)
			len = size - off;
		if (len && write(sv[1], data + off, len) != (ssize_t)len)
			break; /* the socket is full: peerd stopped reading */
		off += len;
		for (int i = 0; i < 4; i++)
			uv_run(&g.loop, UV_RUN_NOWAIT);
		drain(sv[1]);
	}
	p = peer_by_id(d, id);
	if (p && p->state == PEER_HANDSHAKE && (p->socks || p->socks_busy))
		die("a started peer still holds its SOCKS5 state");
	if (p)
		peer_disconnect(p, "fuzz input over");
	close(sv[1]);
	uv_run(&g.loop, UV_RUN_DEFAULT);
	if (d->n_peers != 0)
		die("a peer outlived its close");
	return 0;
}
