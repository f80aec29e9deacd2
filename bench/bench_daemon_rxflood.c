/*
 * bench/bench_daemon_rxflood.c: FloodRecvBudget, peerd's memory and its
 * honest peers' round trips while thousands of peers send huge messages
 * (maxrecvmemory; harness: bench/bench_daemon.c).
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

/*
 * FloodRecvBudget (issue 13): BD_FRB_HOSTILE peers each send the header of
 * a 3,999,999-byte block and then all of it but the last byte, as fast as
 * peerd reads, reconnecting whenever peerd cuts them; meanwhile
 * BD_FRB_HONEST handshaken peers ping (one outstanding ping each, every
 * BD_FRB_PING_MS), BD_FRB_BIG of them sending a 1 MB message before each
 * ping. maxrecvmemory is its default (maxconnections x 64 KiB). Measured:
 * peerd's peak RSS (VmHWM) against its baseline and the budget, the most
 * `recv_budget.held` seen, and the honest round trips (p50/p99/max for
 * pings, and for the 1 MB message plus its ping). ns/op is the flood's
 * length; the note carries the figures.
 */
#define BD_FRB_HOSTILE 2000
#define BD_FRB_HONEST  125
#define BD_FRB_BIG     25
#define BD_FRB_SECONDS 10
#define BD_FRB_BLOCK   3999999u
#define BD_FRB_BIG_MSG 1000000u
#define BD_FRB_PING_MS 100
#define BD_FRB_SNDBUF  (64 * 1024)
#define BD_FRB_MAX_RTT (BD_FRB_HONEST * (BD_FRB_SECONDS * 1000 / BD_FRB_PING_MS + 10))

struct frb_honest {
	uint8_t ping[PROTO_HEADER_SIZE + 8]; /* its ping, nonce = index + 1 */
	int phase; /* 0 idle, 1 writing big, 2 writing ping, 3 awaiting pong */
	size_t off;
	uint64_t t0, next;
};

struct frb_hostile {
	int fd;
	bool connected;
	size_t off;
};

static uint64_t vm_hwm(pid_t pid)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	unsigned long long kb = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static int frb_connect(struct frb_hostile *h, uint16_t port, int ep, uint32_t tag)
{
	h->fd = bd_tcp_connect_nb(port);
	h->connected = false;
	h->off = 0;
	if (h->fd < 0)
		return -1;
	int sb = BD_FRB_SNDBUF;
	setsockopt(h->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = tag};
	return epoll_ctl(ep, EPOLL_CTL_ADD, h->fd, &ev);
}

struct pong_wait {
	uint64_t nonce;
	bool seen;
};

static void on_pong(void *arg, uint64_t nonce)
{
	struct pong_wait *pw = arg;
	if (nonce == pw->nonce)
		pw->seen = true;
}

/* Frames from an honest peer's socket; a pong with its nonce ends its round. */
static bool frb_read(struct bd_conn *c, uint32_t magic, uint64_t nonce)
{
	struct pong_wait pw = {.nonce = nonce};
	bd_read_pongs(c, magic, on_pong, &pw);
	return pw.seen;
}

/* Write from buf+*off as far as the socket takes; true when all is written. */
static bool frb_write(int fd, const uint8_t *buf, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t w = send(fd, buf + *off, len - *off, MSG_NOSIGNAL);
		if (w <= 0)
			return false;
		*off += (size_t)w;
	}
	return true;
}

/* The flood, on its own thread so the honest side's timings do not wait on it. */
struct frb_flood {
	struct frb_hostile *fl;
	const uint8_t *block;
	size_t block_len;
	uint16_t port;
	int ep;
	_Atomic bool stop;
	int connected;
	long long reconnects;
};

static void *frb_flood_main(void *arg)
{
	struct frb_flood *f = arg;
	struct epoll_event evs[512];
	for (int i = 0; i < BD_FRB_HOSTILE; i++)
		if (frb_connect(&f->fl[i], f->port, f->ep, (uint32_t)i) == 0)
			f->connected++;
	while (!atomic_load(&f->stop)) {
		int k = epoll_wait(f->ep, evs, 512, 20);
		for (int e = 0; e < k; e++) {
			uint32_t tag = evs[e].data.u32;
			struct frb_hostile *h = &f->fl[tag];
			bool gone = (evs[e].events & (EPOLLHUP | EPOLLERR)) != 0;
			if (!gone && (evs[e].events & EPOLLIN)) {
				char sink[4096];
				ssize_t r = read(h->fd, sink, sizeof(sink));
				gone = r == 0 || (r < 0 && errno != EAGAIN);
			}
			if (!gone && (evs[e].events & EPOLLOUT) && h->off < f->block_len) {
				ssize_t s = send(h->fd, f->block + h->off, f->block_len - h->off,
				                 MSG_NOSIGNAL);
				if (s > 0)
					h->off += (size_t)s;
				else if (s < 0 && errno != EAGAIN)
					gone = true;
				if (!gone && h->off == f->block_len) {
					/* Everything but the last byte: stall, holding it. */
					struct epoll_event ev = {.events = EPOLLIN,
					                         .data.u32 = tag};
					epoll_ctl(f->ep, EPOLL_CTL_MOD, h->fd, &ev);
				}
			}
			if (gone) {
				close(h->fd);
				f->reconnects++;
				(void)frb_connect(h, f->port, f->ep, tag);
			}
		}
	}
	return NULL;
}

BENCH_N(FloodRecvBudget, 1)
{
	(void)n;
	struct bd_daemon bd = {0};
	const uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	struct proto_writer w;
	proto_writer_init(&w);
	struct bd_conn *hc = calloc(BD_FRB_HONEST, sizeof(*hc));
	struct frb_honest *hs = calloc(BD_FRB_HONEST, sizeof(*hs));
	struct frb_flood flood = {0};
	flood.fl = calloc(BD_FRB_HOSTILE, sizeof(*flood.fl));
	flood.ep = epoll_create1(EPOLL_CLOEXEC);
	bool flooding = false;
	pthread_t thr;
	uint64_t *rtt = calloc(BD_FRB_MAX_RTT, sizeof(*rtt));
	uint64_t *big = calloc(BD_FRB_MAX_RTT, sizeof(*big));
	size_t n_rtt = 0, n_big = 0;
	uint8_t *block = malloc(PROTO_HEADER_SIZE + BD_FRB_BLOCK);
	uint8_t *bigf = malloc(PROTO_HEADER_SIZE + BD_FRB_BIG_MSG);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bd_raise_nofile();
	int err = bd_daemon_start(&bd, BD_FRB_HOSTILE + BD_FRB_HONEST + 16);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !hc || !hs || !flood.fl || !rtt || !big || !block || !bigf || ep < 0 ||
	    flood.ep < 0 || bd_handshake_frames(magic, &w)) {
		bench_fail(ctx, "FloodRecvBudget: setup failed (%s)",
		           strerror(err < 0 ? -err : ENOMEM));
		goto out;
	}
	/* The block header (its checksum is never checked: the last byte never comes). */
	memset(block, 0, PROTO_HEADER_SIZE + BD_FRB_BLOCK);
	proto_put_le32(block, magic);
	memcpy(block + 4, "block", 5);
	proto_put_le32(block + 16, BD_FRB_BLOCK);
	struct proto_writer bw;
	proto_writer_init(&bw);
	memset(bigf, 0, BD_FRB_BIG_MSG);
	proto_frame_write(&bw, magic, "bigmsg", bigf, BD_FRB_BIG_MSG);
	memcpy(bigf, bw.buf, bw.len);
	const size_t big_len = bw.len;
	proto_writer_release(&bw);
	for (int i = 0; i < BD_FRB_HONEST; i++) {
		uint8_t nonce[8];
		struct proto_writer pw;
		proto_writer_init(&pw);
		proto_put_le64(nonce, (uint64_t)i + 1);
		proto_frame_write(&pw, magic, "ping", nonce, 8);
		memcpy(hs[i].ping, pw.buf, sizeof(hs[i].ping));
		proto_writer_release(&pw);
	}
	int hep = epoll_create1(EPOLL_CLOEXEC);
	int done = bd_connect_all(&bd, hc, BD_FRB_HONEST, hep, w.buf, w.len, magic);
	close(hep);
	if (done != BD_FRB_HONEST) {
		bench_fail(ctx, "FloodRecvBudget: %d of %d honest handshakes", done, BD_FRB_HONEST);
		goto out;
	}
	for (int i = 0; i < BD_FRB_HONEST; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_ADD, hc[i].fd, &ev);
	}
	bd_sleep_ms(300);
	uint64_t rss0 = bd_rss_of(bd.pid);
	json_t *st = bd_ctl_call(&bd, "getstats");
	long long limit = bd_jget(st, "recv_budget", "limit", NULL);
	json_decref(st);
	flood.block = block;
	flood.block_len = PROTO_HEADER_SIZE + BD_FRB_BLOCK - 1;
	flood.port = bd.port;
	uint64_t start = bench_now_ns(), end = start + (uint64_t)BD_FRB_SECONDS * 1000000000ull;
	if (pthread_create(&thr, NULL, frb_flood_main, &flood)) {
		bench_fail(ctx, "FloodRecvBudget: no flood thread");
		goto out;
	}
	flooding = true;
	uint64_t next_poll = start;
	bench_reset(ctx);
	struct epoll_event evs[BD_FRB_HONEST];
	for (uint64_t now = bench_now_ns(); now < end; now = bench_now_ns()) {
		/* Honest rounds due. */
		for (int i = 0; i < BD_FRB_HONEST; i++) {
			struct frb_honest *h = &hs[i];
			if (h->phase == 0 && now >= h->next) {
				h->phase = i < BD_FRB_BIG ? 1 : 2;
				h->off = 0;
				h->t0 = now;
			}
			if (h->phase == 1 && frb_write(hc[i].fd, bigf, big_len, &h->off)) {
				h->phase = 2;
				h->off = 0;
			}
			if (h->phase == 2 && frb_write(hc[i].fd, h->ping, sizeof(h->ping), &h->off))
				h->phase = 3;
		}
		int k = epoll_wait(ep, evs, BD_FRB_HONEST, 2);
		for (int e = 0; e < k; e++) {
			uint32_t tag = evs[e].data.u32;
			struct frb_honest *h = &hs[tag];
			if (frb_read(&hc[tag], magic, (uint64_t)tag + 1) && h->phase == 3) {
				uint64_t t = bench_now_ns() - h->t0;
				if (tag < BD_FRB_BIG && n_big < BD_FRB_MAX_RTT)
					big[n_big++] = t;
				else if (tag >= BD_FRB_BIG && n_rtt < BD_FRB_MAX_RTT)
					rtt[n_rtt++] = t;
				h->phase = 0;
				h->next = h->t0 + (uint64_t)BD_FRB_PING_MS * 1000000ull;
			}
		}
		if (now >= next_poll) {
			st = bd_ctl_call(&bd, "getstats");
			long long held = bd_jget(st, "recv_budget", "held", NULL);
			json_decref(st);
			if (held > limit)
				bench_fail(ctx, "FloodRecvBudget: held %lld over the budget %lld",
				           held, limit);
			next_poll = now + 250000000ull;
		}
	}
	bench_stop(ctx);
	atomic_store(&flood.stop, true);
	pthread_join(thr, NULL);
	flooding = false;
	st = bd_ctl_call(&bd, "getstats");
	long long hmax = bd_jget(st, "recv_budget", "held_max", NULL);
	long long pauses = bd_jget(st, "recv_budget", "pauses", NULL);
	long long evictions = bd_jget(st, "recv_budget", "evictions", NULL);
	json_decref(st);
	uint64_t hwm = vm_hwm(bd.pid);
	if (!n_rtt || !n_big) {
		bench_fail(ctx, "FloodRecvBudget: honest peers got %zu pongs, %zu 1 MB rounds",
		           n_rtt, n_big);
		goto out;
	}
	if (hmax > limit)
		bench_fail(ctx, "FloodRecvBudget: held %lld over the budget %lld", hmax, limit);
	qsort(rtt, n_rtt, sizeof(*rtt), bd_cmp_u64);
	qsort(big, n_big, sizeof(*big), bd_cmp_u64);
	bench_note(
	    ctx,
	    "%d hostile peers (%lld cut and back) x 4 MB partial blocks, budget %.1f MiB: "
	    "held max %.1f MiB (%lld pauses, %lld evictions); peerd RSS %.1f MiB at start, "
	    "peak %.1f MiB; %d honest pingers: %zu pongs, p50 %.2f ms, p99 %.2f ms, max %.2f "
	    "ms; %d honest 1 MB senders: %zu served, p50 %.1f ms, p99 %.1f ms",
	    flood.connected, flood.reconnects, limit / 1048576.0, hmax / 1048576.0, pauses,
	    evictions, rss0 / 1048576.0, hwm / 1048576.0, BD_FRB_HONEST - BD_FRB_BIG, n_rtt,
	    rtt[n_rtt / 2] / 1e6, rtt[(n_rtt * 99) / 100] / 1e6, rtt[n_rtt - 1] / 1e6, BD_FRB_BIG,
	    n_big, big[n_big / 2] / 1e6, big[(n_big * 99) / 100] / 1e6);
out:
	if (flooding) {
		atomic_store(&flood.stop, true);
		pthread_join(thr, NULL);
	}
	if (flood.fl)
		for (int i = 0; i < BD_FRB_HOSTILE; i++)
			if (flood.fl[i].fd > 0)
				close(flood.fl[i].fd);
	if (hc)
		bd_close_all(hc, BD_FRB_HONEST);
	if (ep >= 0)
		close(ep);
	if (flood.ep >= 0)
		close(flood.ep);
	bd_daemon_stop(&bd);
	proto_writer_release(&w);
	free(hc);
	free(hs);
	free(flood.fl);
	free(rtt);
	free(big);
	free(block);
	free(bigf);
}
