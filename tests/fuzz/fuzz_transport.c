/*
 * tests/fuzz/fuzz_transport.c: a peer's whole receive path, from libuv's
 * read callback through framing, decoding and every message handler, in an
 * in-process daemon.
 *
 * The daemon (regtest, every debug category on, logging to /dev/null) is
 * built once; each input is one inbound connection whose bytes are fed
 * through transport_alloc_cb/transport_read_cb exactly as libuv would call
 * them, on one end of a socketpair so replies really go out.
 *
 * Input:
 *   byte 0        flags: FLAG_ACTIVE starts the peer past its handshake
 *                 (otherwise the version gate is fuzzed too), FLAG_MANUAL
 *                 makes it a manual (outbound-type) peer, FLAG_LOCAL gives
 *                 it a loopback address (misbehaviour then disconnects
 *                 without discouraging).
 *   then chunks   [tag][len lo][len hi][len bytes] (len clamped to what is
 *                 left). tag & TAG_FRAME: the bytes are a payload and the
 *                 fuzzer writes a valid header for it (magic, command
 *                 tag & 0x1f modulo the command count, length, checksum),
 *                 so the decoders and handlers are reached rather than
 *                 only the header checks; otherwise they are sent raw.
 *                 The low bits of the tag also choose how many bytes each
 *                 read callback delivers, so every split of a frame is
 *                 tried.
 *
 * After each input the peer is disconnected and the loop run dry, then:
 * no peer left, every free-list buffer handed back (in use as before the
 * input), and every FRESH_EVERY inputs an honest handshake on a fresh
 * connection must still complete. Leaks are LeakSanitizer's: the fuzz
 * build links ASan, so anything the daemon loses per input shows at exit.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "daemon/program.h"

enum {
	FLAG_ACTIVE = 1u << 0,
	FLAG_MANUAL = 1u << 1,
	FLAG_LOCAL = 1u << 2,
};

/** Chunk tag bit: wrap the chunk's bytes in a valid frame. */
#define TAG_FRAME 0x80u
/** A handshake on a fresh connection is checked this often (inputs). */
#define FRESH_EVERY 64u
/** Bytes one read callback may be handed at most (libuv's suggestion). */
#define READ_SUGGESTED 65536u

/* Delivery sizes a frame chunk can choose (0: all at once). */
static const size_t frame_split[4] = {0, 1, 7, 23};

static struct {
	uv_loop_t loop;
	struct peerd_conf conf;
	struct daemon d;
	char dir[64];
	struct proto_writer w; /* frames built from frame chunks */
	uint64_t inputs;
	bool ready;
} g;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_transport: invariant broken: %s\n", what);
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

/* As peerd's main() and daemon_init(), minus listeners, timers and signals:
 * nothing runs unless an input drives it. */
static void setup(void)
{
	uv_replace_allocator(xmalloc, xrealloc, xcalloc, xfree);
	json_set_alloc_funcs(xmalloc, xfree);
	if (uv_loop_init(&g.loop))
		die("uv_loop_init");
	conf_defaults(&g.conf);
	g.conf.params = proto_params(PROTO_NET_REGTEST);
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
	/* Every debug line's formatting runs under the sanitizers. */
	d->log.debug = (1u << DLOG_CAT__COUNT) - 1;
	proto_writer_init(&g.w);
	if (ban_init(d))
		die("ban_init");
	g.ready = true;
}

/* A connected peer on a socketpair; *remote gets the other end. */
static struct peer *open_peer(unsigned flags, int *remote)
{
	struct daemon *d = &g.d;
	struct peer *p = peer_new(d, true);
	if (!p)
		die("peer_new");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
	if (uv_tcp_open(&p->tcp, sv[0]))
		die("uv_tcp_open");
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK))
		die("fcntl");
	*remote = sv[1];
	const char *addr = (flags & FLAG_LOCAL) ? "127.0.0.1:18444" : "203.0.113.7:18444";
	if (net_addr_parse(addr, 18444, &p->addr))
		die("net_addr_parse");
	if (flags & FLAG_MANUAL) {
		p->inbound = false;
		p->conn_type = PEER_CONN_MANUAL;
	}
	p->state = PEER_HANDSHAKE;
	if (flags & FLAG_ACTIVE) {
		p->state = PEER_ACTIVE;
		p->got_version = p->sent_version = p->handshake_done = true;
		p->version = PROTO_VERSION;
		p->services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
		p->relaytxes = true;
	}
	return p;
}

/* What peerd wrote so far is read and thrown away, so its socket never
 * fills and sends stay synchronous (as with a peer that reads). */
static size_t drain(int fd, uint8_t *keep, size_t keep_cap)
{
	static uint8_t sink[65536];
	size_t kept = 0;
	for (;;) {
		ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n <= 0)
			break;
		if (keep && kept < keep_cap) {
			size_t c = (size_t)n < keep_cap - kept ? (size_t)n : keep_cap - kept;
			memcpy(keep + kept, sink, c);
			kept += c;
		}
	}
	return kept;
}

/* Deliver bytes as libuv does: alloc callback, at most `split` bytes (0:
 * as many as fit), read callback; until done or the peer closes. */
static void feed(struct peer *p, const uint8_t *data, size_t len, size_t split)
{
	size_t off = 0;
	while (off < len && p->state != PEER_CLOSING) {
		uv_buf_t b;
		transport_alloc_cb((uv_handle_t *)&p->tcp, READ_SUGGESTED, &b);
		if (!b.base || !b.len) {
			transport_read_cb((uv_stream_t *)&p->tcp, UV_ENOBUFS, &b);
			break;
		}
		size_t n = len - off;
		if (split && n > split)
			n = split;
		if (n > b.len)
			n = b.len;
		memcpy(b.base, data + off, n);
		transport_read_cb((uv_stream_t *)&p->tcp, (ssize_t)n, &b);
		off += n;
	}
}

static void frame_into(struct proto_writer *w, enum proto_cmd cmd, const uint8_t *payload,
                       size_t len)
{
	w->len = 0;
	w->err = 0;
	proto_frame_write(w, g.d.params->magic, proto_cmd_name(cmd), payload, len);
}

/* Close peer `id` unless it is gone already (an input may get it
 * disconnected, and the loop may then have freed it), and run the loop
 * until its close callback ran. */
static void close_peer(uint64_t id, int remote)
{
	struct peer *p = peer_by_id(&g.d, id);
	if (p)
		peer_disconnect(p, "fuzz input over");
	close(remote);
	uv_run(&g.loop, UV_RUN_DEFAULT);
	if (g.d.n_peers != 0)
		die("a peer outlived its close");
}

static size_t in_use(enum proto_freelist_id id)
{
	struct proto_freelist_stats s;
	proto_freelist_stats(id, &s);
	return s.in_use;
}

/* An honest version + verack must still bring a fresh peer to ACTIVE and
 * get peerd's own version and verack back. */
static void check_fresh_handshake(void)
{
	static const char ua[] = "/fuzz:1/";
	static const uint8_t no_addr[26]; /* addr_recv, addr_from: zeroes are fine */
	uint8_t v[128];
	struct proto_writer vw;
	proto_writer_init_fixed(&vw, v, sizeof(v));
	proto_write_u32le(&vw, PROTO_VERSION);
	proto_write_u64le(&vw, PROTO_NODE_NETWORK | PROTO_NODE_WITNESS);
	proto_write_u64le(&vw, (uint64_t)time(NULL));
	proto_write_bytes(&vw, no_addr, sizeof(no_addr));
	proto_write_bytes(&vw, no_addr, sizeof(no_addr));
	proto_write_u64le(&vw, 0x1234567890abcdefULL ^ g.inputs); /* nonce */
	proto_write_compact(&vw, sizeof(ua) - 1);
	proto_write_bytes(&vw, ua, sizeof(ua) - 1);
	proto_write_u32le(&vw, 0); /* start height */
	proto_write_u8(&vw, 1);    /* relay */
	if (vw.err)
		die("version payload");

	int remote;
	struct peer *p = open_peer(0, &remote);
	frame_into(&g.w, PROTO_CMD_VERSION, v, vw.len);
	if (g.w.err)
		die("version frame");
	feed(p, g.w.buf, g.w.len, 0);
	frame_into(&g.w, PROTO_CMD_VERACK, NULL, 0);
	feed(p, g.w.buf, g.w.len, 0);
	uv_run(&g.loop, UV_RUN_NOWAIT);
	if (p->state != PEER_ACTIVE)
		die("an honest handshake no longer completes");
	static uint8_t out[4096];
	size_t n = drain(remote, out, sizeof(out));
	bool saw_version = false, saw_verack = false;
	for (size_t off = 0; off + PROTO_HEADER_SIZE <= n;) {
		struct proto_frame_header h;
		if (proto_frame_header_parse(out + off, g.d.params->magic, &h))
			die("peerd sent a malformed header");
		saw_version |= h.cmd == PROTO_CMD_VERSION;
		saw_verack |= h.cmd == PROTO_CMD_VERACK;
		off += PROTO_HEADER_SIZE + h.length;
	}
	if (!saw_version || !saw_verack)
		die("no version/verack sent to an honest peer");
	close_peer(p->id, remote);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g.ready)
		setup();
	if (size < 1)
		return 0;
	size_t script0 = in_use(PROTO_FREELIST_SCRIPT);
	size_t binary0 = in_use(PROTO_FREELIST_BINARY);

	int remote;
	struct peer *p = open_peer(data[0], &remote);
	uint64_t id = p->id;
	size_t off = 1;
	/* The loop runs between chunks: a closed peer may be freed there. */
	while (off + 3 <= size && (p = peer_by_id(&g.d, id)) && p->state != PEER_CLOSING) {
		uint8_t tag = data[off];
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
		off += 3;
		if (len > size - off)
			len = size - off;
		const uint8_t *chunk = data + off;
		off += len;
		if (tag & TAG_FRAME) {
			enum proto_cmd cmd = (enum proto_cmd)((tag & 0x1fu) % PROTO_CMD__COUNT);
			frame_into(&g.w, cmd, chunk, len);
			if (g.w.err)
				die("frame_into");
			feed(p, g.w.buf, g.w.len, frame_split[(tag >> 5) & 3u]);
		} else {
			feed(p, chunk, len, tag & 0x3fu);
		}
		drain(remote, NULL, 0);
		/* Write callbacks and anything else the handlers queued. */
		uv_run(&g.loop, UV_RUN_NOWAIT);
	}
	/* The transaction tracker's periodic work, with this peer's announcements. */
	txrequest_tick(&g.d, daemon_now_ms(&g.d));
	drain(remote, NULL, 0);
	close_peer(id, remote);

	if (in_use(PROTO_FREELIST_SCRIPT) != script0)
		die("script free-list buffers not handed back");
	if (in_use(PROTO_FREELIST_BINARY) != binary0)
		die("binary free-list buffers not handed back");
	if (++g.inputs % FRESH_EVERY == 0)
		check_fresh_handshake();
	return 0;
}
