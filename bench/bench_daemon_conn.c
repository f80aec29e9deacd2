/*
 * bench/bench_daemon_conn.c: whole-daemon benchmarks of many peers at once
 * against a real peerd (harness: bench/bench_daemon.c).
 *
 *   PeersConnect1000  1,000 peers connect at once and complete the version
 *                     handshake; ns/op is wall time per peer. The note has
 *                     peerd's idle RSS per connected peer (target <= 32 KiB).
 *   InvFlood125       125 handshaken peers send 1,000-entry inv messages
 *                     as fast as the sockets take them until peerd has
 *                     processed n of them; ns/op is wall time per message.
 *                     The note has messages/s, MB/s decoded, the loop
 *                     thread's CPU time and MB per loop-CPU-second (the
 *                     bench process competes for the same cores), and the
 *                     script free list's high-water and misses (getstats).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "proto/proto.h"
#include "bench/bench_daemon.h"

#define BD_CONNECT_PEERS  1000
#define BD_FLOOD_PEERS    125
#define BD_FLOOD_MESSAGES 20000
#define BD_INV_ENTRIES    1000
/** Distinct inv frames cycled through (random hashes, built before timing). */
#define BD_FLOOD_FRAMES 256

/* utime + stime of the daemon's main (loop) thread, in clock ticks. */
static uint64_t loop_cpu_ticks(pid_t pid)
{
	char p[64], line[1024];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", (int)pid, (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = 0;
	char *s = strrchr(line, ')');
	unsigned long long ut = 0, st = 0;
	/* Fields after the command: state is 3rd; utime, stime are 14th, 15th. */
	if (!s ||
	    sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

BENCH_N(PeersConnect1000, BD_CONNECT_PEERS)
{
	struct bd_daemon bd = {0};
	struct proto_writer w;
	const uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	bd_raise_nofile();
	proto_writer_init(&w);
	struct bd_conn *conns = calloc((size_t)n, sizeof(*conns));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int err = bd_daemon_start(&bd, (int)n + 100);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !conns || ep < 0 || bd_handshake_frames(magic, &w)) {
		bench_fail(ctx, "PeersConnect1000: setup failed (%s)",
		           strerror(err < 0 ? -err : ENOMEM));
		goto out;
	}
	bd_sleep_ms(200);
	uint64_t rss0 = bd_rss_of(bd.pid);
	bench_reset(ctx);
	int done = bd_connect_all(&bd, conns, (int)n, ep, w.buf, w.len, magic);
	bench_stop(ctx);
	if (done != (int)n) {
		bench_fail(ctx, "PeersConnect1000: %d of %zu handshakes completed", done, n);
		goto out;
	}
	/* Let the post-verack messages settle, then measure the idle state. */
	bd_sleep_ms(500);
	json_t *cnt = bd_ctl_call(&bd, "getconnectioncount");
	long long connections = json_is_integer(cnt) ? (long long)json_integer_value(cnt) : -1;
	json_decref(cnt);
	uint64_t rss1 = bd_rss_of(bd.pid);
	json_t *st = bd_ctl_call(&bd, "getstats");
	long long held = bd_jget(st, "peers", "rx_buffers_held", NULL);
	long long fl_hw = bd_jget(st, "freelists", "script", "high_water");
	json_decref(st);
	double per_peer = rss1 > rss0 ? (double)(rss1 - rss0) / (double)n / 1024.0 : 0.0;
	bench_note(ctx,
	           "%zu peers handshaken; getconnectioncount %lld; peerd RSS %.1f -> %.1f MiB: "
	           "%.1f KiB per idle "
	           "peer (target <= 32); rx buffers held while idle %lld; script free-list "
	           "high-water %lld",
	           n, connections, (double)rss0 / 1048576.0, (double)rss1 / 1048576.0, per_peer,
	           held, fl_hw);
	if (connections != (long long)n)
		bench_fail(ctx, "PeersConnect1000: getconnectioncount %lld, expected %zu",
		           connections, n);
out:
	if (conns)
		bd_close_all(conns, (int)n);
	if (ep >= 0)
		close(ep);
	bd_daemon_stop(&bd);
	proto_writer_release(&w);
	free(conns);
}

/* BD_FLOOD_FRAMES inv frames of BD_INV_ENTRIES random MSG_WTX entries, back to back. */
static uint8_t *flood_frames(uint32_t magic, size_t *frame_len)
{
	struct proto_msg m;
	struct proto_writer w;
	proto_msg_init(&m);
	proto_writer_init(&w);
	m.cmd = PROTO_CMD_INV;
	m.inv.v = calloc(BD_INV_ENTRIES, sizeof(*m.inv.v));
	uint8_t *all = NULL;
	if (!m.inv.v)
		goto out;
	m.inv.n = m.inv.cap = BD_INV_ENTRIES;
	for (int f = 0; f < BD_FLOOD_FRAMES; f++) {
		for (int i = 0; i < BD_INV_ENTRIES; i++) {
			m.inv.v[i].type = PROTO_INV_WTX;
			proto_random(m.inv.v[i].hash.b, 32);
		}
		size_t before = w.len;
		proto_msg_frame(&m, magic, &w);
		if (w.err)
			goto out;
		*frame_len = w.len - before;
	}
	all = malloc(w.len);
	if (all)
		memcpy(all, w.buf, w.len);
out:
	free(m.inv.v);
	m.inv.v = NULL;
	m.inv.n = m.inv.cap = 0;
	proto_msg_release(&m);
	proto_writer_release(&w);
	return all;
}

BENCH_N(InvFlood125, BD_FLOOD_MESSAGES)
{
	struct bd_daemon bd = {0};
	struct proto_writer w;
	const uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	const int peers = BD_FLOOD_PEERS;
	bd_raise_nofile();
	proto_writer_init(&w);
	size_t flen = 0;
	uint8_t *frames = flood_frames(magic, &flen);
	struct bd_conn *conns = calloc((size_t)peers, sizeof(*conns));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	static uint8_t sink[1 << 16];
	int err = bd_daemon_start(&bd, 200);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !frames || !conns || ep < 0 || bd_handshake_frames(magic, &w)) {
		bench_fail(ctx, "InvFlood125: setup failed (%s)",
		           strerror(err < 0 ? -err : ENOMEM));
		goto out;
	}
	if (bd_connect_all(&bd, conns, peers, ep, w.buf, w.len, magic) != peers) {
		bench_fail(ctx, "InvFlood125: handshakes did not complete");
		goto out;
	}
	for (int i = 0; i < peers; i++) {
		conns[i].frame = (uint32_t)i % BD_FLOOD_FRAMES;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_MOD, conns[i].fd, &ev);
	}
	json_t *st0 = bd_ctl_call(&bd, "getstats");
	long long inv0 = bd_jget(st0, "messages", "inv", "recv_count");
	long long bytes0 = bd_jget(st0, "messages", "inv", "recv_bytes");
	json_decref(st0);
	uint64_t cpu0 = loop_cpu_ticks(bd.pid);

	bench_reset(ctx);
	uint64_t t0 = bench_now_ns();
	size_t sent = 0;
	uint64_t deadline = t0 + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	struct epoll_event evs[256];
	while (sent < n && bench_now_ns() < deadline) {
		int k = epoll_wait(ep, evs, 256, 100);
		for (int e = 0; e < k; e++) {
			struct bd_conn *c = &conns[evs[e].data.u32];
			if (evs[e].events & EPOLLIN) {
				while (read(c->fd, sink, sizeof(sink)) > 0)
					;
			}
			if (!(evs[e].events & EPOLLOUT) || sent >= n)
				continue;
			for (;;) {
				const uint8_t *f = frames + (size_t)c->frame * flen;
				ssize_t r = write(c->fd, f + c->off, flen - c->off);
				if (r <= 0)
					break;
				c->off += (uint32_t)r;
				if (c->off < flen)
					continue;
				c->off = 0;
				c->frame = (c->frame + 1) % BD_FLOOD_FRAMES;
				if (++sent >= n)
					break;
			}
		}
	}
	/* Wait until peerd has processed n messages (partial frames aside). */
	long long inv1 = inv0, bytes1 = bytes0;
	json_t *st = NULL;
	while (bench_now_ns() < deadline) {
		json_decref(st);
		st = bd_ctl_call(&bd, "getstats");
		inv1 = bd_jget(st, "messages", "inv", "recv_count");
		bytes1 = bd_jget(st, "messages", "inv", "recv_bytes");
		if (inv1 - inv0 >= (long long)n)
			break;
		for (int i = 0; i < peers; i++) {
			while (read(conns[i].fd, sink, sizeof(sink)) > 0)
				;
		}
		bd_sleep_ms(2);
	}
	uint64_t t1 = bench_now_ns();
	bench_stop(ctx);
	uint64_t cpu1 = loop_cpu_ticks(bd.pid);
	double secs = (double)(t1 - t0) / 1e9;
	double cpu = (double)(cpu1 - cpu0) / (double)sysconf(_SC_CLK_TCK);
	double msgs = (double)(inv1 - inv0), mb = (double)(bytes1 - bytes0) / 1e6;
	json_t *conn = bd_ctl_call(&bd, "getconnectioncount");
	bench_note(
	    ctx,
	    "%.0f inv messages (%.1f MB) in %.2f s: %.0f msg/s, %.1f MB/s decoded; loop thread CPU "
	    "%.2f s: "
	    "%.1f MB per loop-CPU-second (target >= 200); script free list high-water %lld, misses "
	    "%lld, "
	    "in use %lld; tx tracked %lld, ignored at limit %lld; peers still connected %lld",
	    msgs, mb, secs, msgs / secs, mb / secs, cpu, cpu > 0 ? mb / cpu : 0.0,
	    bd_jget(st, "freelists", "script", "high_water"),
	    bd_jget(st, "freelists", "script", "misses"),
	    bd_jget(st, "freelists", "script", "in_use"),
	    bd_jget(st, "inventory", "tx_tracked", NULL),
	    bd_jget(st, "inventory", "inv_ignored_limit", NULL),
	    json_is_integer(conn) ? (long long)json_integer_value(conn) : -1);
	if (inv1 - inv0 < (long long)n)
		bench_fail(ctx, "InvFlood125: peerd processed %lld of %zu messages", inv1 - inv0,
		           n);
	json_decref(conn);
	json_decref(st);
out:
	if (conns)
		bd_close_all(conns, peers);
	if (ep >= 0)
		close(ep);
	bd_daemon_stop(&bd);
	proto_writer_release(&w);
	free(conns);
	free(frames);
}
