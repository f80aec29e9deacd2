/*
 * bench/bench_serve_p2p.c: a block served by a live node over v1 against
 * over v2, measured from outside by a client on peerd's own codec and v2
 * transport (daemon/net/v2transport.c, bip324/), so that the same client
 * times Bitcoin Core and peerd.
 *
 *   ServeBlockP2P   one op = one round: getdata (MSG_WITNESS_BLOCK) sent,
 *                   the whole block message received and checked (v1: the
 *                   frame checksum, SHA-256d; v2: the packet's tag and its
 *                   decryption, as each transport's receiver must), the
 *                   block's hash compared with the one asked for.
 *
 * It needs a node and a block, given in the environment (without them the
 * row is skipped and says so); scripts/bench-serve-p2p.py starts bitcoind
 * and peerd on loopback, makes the block and runs this row against each:
 *   PEERD_BENCH_PEER   127.0.0.1:PORT (loopback only)
 *   PEERD_BENCH_BLOCK  the block's hash (hex, as RPC shows it)
 *   PEERD_BENCH_V2     1: BIP324 v2 (we are the initiator), else v1
 * Rounds are back to back on one connection after five unmeasured ones.
 * The note gives the median and 90th percentile of a round and the
 * client's own share (checksum or decryption), which is the same work
 * whichever node serves.
 */
#include "bench/bench.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "daemon/net/v2_internal.h"

#define P2P_ROUNDS 60
#define P2P_WARMUP 5
/* A block message at most, with its header, and room to read ahead. */
#define P2P_BUF (2u * (PROTO_MAX_MESSAGE + 4096u))

struct p2p_client {
	int fd;
	bool v2;
	uint32_t magic;
	struct net_v2 v;
	uint8_t *buf;
	size_t start, end;
	uint64_t proc_ns; /* time spent checking or decrypting what came in */
	char type[13];
	uint8_t *payload;
	uint32_t len;
};

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int p2p_send(struct p2p_client *c, const char *type, const uint8_t *payload, size_t len)
{
	int err;
	if (c->v2) {
		size_t n = net_v2_wire_len(type, len);
		uint8_t *b = xmalloc(n);
		if (!b || net_v2_encrypt(&c->v, type, payload, len, false, b)) {
			xfree(b);
			return -1;
		}
		err = write_all(c->fd, b, n);
		xfree(b);
		return err;
	}
	struct proto_writer w;
	proto_writer_init(&w);
	proto_frame_write(&w, c->magic, type, payload, len);
	err = w.err ? -1 : write_all(c->fd, w.buf, w.len);
	proto_writer_release(&w);
	return err;
}

/* Read more bytes, keeping buf[start..end) and room for `need` of them. */
static int p2p_fill(struct p2p_client *c, size_t need)
{
	if (need > P2P_BUF)
		return -1;
	if (P2P_BUF - c->start < need) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	ssize_t r = read(c->fd, c->buf + c->end, P2P_BUF - c->end);
	if (r <= 0)
		return -1;
	c->end += (size_t)r;
	return 0;
}

/* Send the handshake bytes the v2 state machine has for us. */
static int p2p_flush_v2(struct p2p_client *c)
{
	if (!c->v.out_len)
		return 0;
	int err = write_all(c->fd, c->v.out, c->v.out_len);
	net_v2_out_done(&c->v);
	return err;
}

/* The next message into c->type, c->payload (inside buf), c->len. */
static int p2p_recv(struct p2p_client *c)
{
	for (;;) {
		size_t avail = c->end - c->start;
		uint8_t *b = c->buf + c->start;
		if (c->v2) {
			struct net_v2_step st;
			uint64_t t0 = bench_now_ns();
			net_v2_recv(&c->v, b, (uint32_t)avail, &st);
			c->proc_ns += bench_now_ns() - t0;
			if (p2p_flush_v2(c))
				return -1;
			switch (st.ev) {
			case NET_V2_NEED:
				if (p2p_fill(c, st.need))
					return -1;
				continue;
			case NET_V2_USED:
			case NET_V2_BADMSG:
				c->start += st.used;
				continue;
			case NET_V2_MSG:
				c->start += st.used;
				memcpy(c->type, st.type, sizeof(c->type));
				c->payload = st.payload;
				c->len = st.payload_len;
				return 0;
			default:
				fprintf(stderr, "bench: v2: %s\n", st.why ? st.why : "unexpected");
				return -1;
			}
		}
		struct proto_frame_header h;
		if (avail < PROTO_HEADER_SIZE) {
			if (p2p_fill(c, PROTO_HEADER_SIZE))
				return -1;
			continue;
		}
		if (proto_frame_header_parse(b, c->magic, &h))
			return -1;
		if (avail < PROTO_HEADER_SIZE + (size_t)h.length) {
			if (p2p_fill(c, PROTO_HEADER_SIZE + (size_t)h.length))
				return -1;
			continue;
		}
		uint64_t t0 = bench_now_ns();
		int bad = proto_frame_verify(&h, b + PROTO_HEADER_SIZE);
		c->proc_ns += bench_now_ns() - t0;
		if (bad)
			return -1;
		memcpy(c->type, h.command, sizeof(c->type));
		c->payload = b + PROTO_HEADER_SIZE;
		c->len = h.length;
		c->start += PROTO_HEADER_SIZE + h.length;
		return 0;
	}
}

/* Answer what a node expects of an idle peer while we wait. */
static int p2p_answer(struct p2p_client *c)
{
	if (!strcmp(c->type, "ping") && c->len == 8) {
		uint8_t nonce[8];
		memcpy(nonce, c->payload, 8);
		return p2p_send(c, "pong", nonce, 8);
	}
	return 0;
}

/* c was zeroed with fd -1 by the caller, so that p2p_close may follow a failure. */
static int p2p_connect(struct p2p_client *c, const char *peer, bool v2)
{
	c->v2 = v2;
	c->magic = proto_params(PROTO_NET_REGTEST)->magic;
	char host[64];
	const char *colon = strrchr(peer, ':');
	if (!colon || (size_t)(colon - peer) >= sizeof(host))
		return -1;
	memcpy(host, peer, (size_t)(colon - peer));
	host[colon - peer] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)atoi(colon + 1))};
	/* Loopback only: this client never dials out of the machine. */
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
		return -1;
	c->buf = xmalloc(P2P_BUF);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	if (!c->buf || c->fd < 0 ||
	    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	if (v2) {
		if (net_v2_init(&c->v, true, c->magic, NULL, NULL, NULL, -1) || p2p_flush_v2(c))
			return -1;
		/* Their key, garbage, terminator and version packet: our
		 * messages may go once our own terminator went out. */
		while (c->v.ss != NET_V2_SEND_READY || c->v.rs != NET_V2_RECV_APP) {
			struct net_v2_step st;
			net_v2_recv(&c->v, c->buf + c->start, (uint32_t)(c->end - c->start), &st);
			if (p2p_flush_v2(c))
				return -1;
			if (st.ev == NET_V2_NEED) {
				if (p2p_fill(c, st.need))
					return -1;
			} else if (st.ev == NET_V2_USED) {
				c->start += st.used;
			} else {
				return -1;
			}
		}
	}
	struct proto_version ver;
	memset(&ver, 0, sizeof(ver));
	ver.version = PROTO_VERSION;
	ver.timestamp = (int64_t)time(NULL);
	randombytes_buf(&ver.nonce, sizeof(ver.nonce));
	ver.start_height = 0;
	ver.relay = false;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_version_encode(&ver, &w);
	int err = w.err || p2p_send(c, "version", w.buf, w.len);
	proto_writer_release(&w);
	if (err)
		return -1;
	bool got_version = false, got_verack = false;
	while (!got_version || !got_verack) {
		if (p2p_recv(c) || p2p_answer(c))
			return -1;
		if (!strcmp(c->type, "version")) {
			got_version = true;
			if (p2p_send(c, "verack", NULL, 0))
				return -1;
		} else if (!strcmp(c->type, "verack")) {
			got_verack = true;
		}
	}
	return 0;
}

static void p2p_close(struct p2p_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->v2)
		net_v2_release(&c->v);
	xfree(c->buf);
}

/* One round: getdata, then messages until the block; its time in *ns. */
static int p2p_round(struct p2p_client *c, const uint8_t getdata[37], const struct proto_hash *want,
                     uint64_t *ns, uint64_t *proc)
{
	c->proc_ns = 0;
	uint64_t t0 = bench_now_ns();
	if (p2p_send(c, "getdata", getdata, 37))
		return -1;
	for (;;) {
		if (p2p_recv(c) || p2p_answer(c))
			return -1;
		if (!strcmp(c->type, "notfound"))
			return -1;
		if (!strcmp(c->type, "block"))
			break;
	}
	*ns = bench_now_ns() - t0;
	*proc = c->proc_ns;
	uint8_t h[32];
	if (c->len < 80)
		return -1;
	proto_sha256d(c->payload, 80, h);
	return memcmp(h, want->b, 32) ? -1 : 0;
}

BENCH_N(ServeBlockP2P, P2P_ROUNDS)
{
	const char *peer = getenv("PEERD_BENCH_PEER"), *hex = getenv("PEERD_BENCH_BLOCK");
	const char *v2s = getenv("PEERD_BENCH_V2");
	bool v2 = v2s && !strcmp(v2s, "1");
	if (!peer || !hex) {
		bench_note(ctx, "skipped: PEERD_BENCH_PEER and PEERD_BENCH_BLOCK unset "
		                "(scripts/bench-serve-p2p.py sets them)");
		return;
	}
	struct proto_hash want;
	if (proto_hash_from_hex(hex, &want)) {
		bench_fail(ctx, "PEERD_BENCH_BLOCK is not a hash: %s", hex);
		return;
	}
	uint8_t getdata[37];
	getdata[0] = 1;
	proto_put_le32(getdata + 1, PROTO_INV_WITNESS_BLOCK);
	memcpy(getdata + 5, want.b, 32);
	struct p2p_client c = {.fd = -1};
	double *ms = xmalloc(n * sizeof(*ms));
	uint64_t proc_total = 0, ns, proc;
	if (!ms || p2p_connect(&c, peer, v2)) {
		bench_fail(ctx, "cannot connect to %s over %s", peer, v2 ? "v2" : "v1");
		goto out;
	}
	for (int i = 0; i < P2P_WARMUP; i++) {
		if (p2p_round(&c, getdata, &want, &ns, &proc)) {
			bench_fail(ctx, "warm-up round failed");
			goto out;
		}
	}
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (p2p_round(&c, getdata, &want, &ns, &proc)) {
			bench_fail(ctx, "round %zu failed", i);
			goto out;
		}
		ms[i] = (double)ns / 1e6;
		proc_total += proc;
	}
	bench_stop(ctx);
	qsort(ms, n, sizeof(*ms), bench_cmp_double);
	bench_note(ctx,
	           "%s %u-byte block, %zu rounds: median %.3f ms, p90 %.3f ms, client's "
	           "%s %.3f ms a round",
	           v2 ? "v2" : "v1", c.len, n, ms[n / 2], ms[(n * 9) / 10],
	           v2 ? "decryption" : "checksum", (double)proc_total / (double)n / 1e6);
out:
	p2p_close(&c);
	xfree(ms);
}
