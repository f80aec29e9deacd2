/*
 * bench/bench_daemon_latency.c: whole-daemon benchmarks of how fast a real
 * peerd answers while it is busy (harness: bench/bench_daemon.c).
 *
 *   PongDuringConnect one peer sends a 1,000-transaction block while another
 *                     pings every millisecond: the pongs' round trips
 *                     while the block connects (target p99 <= 10 ms).
 *   CtlHostileClients `uptime` on the control socket while 200 clients
 *                     pipeline getstats batches and never read a reply.
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

/* ---- PongDuringConnect ---------------------------------------------------- */

/* Blocks before the benchmark block (chaingen --blocks; the last one is
 * the 1,000-transaction block Core's ConnectBlock benchmark connects). */
#define BD_PDC_BLOCKS "102"
/** Pings measured at most (one per BD_PDC_PING_US while the block connects). */
#define BD_PDC_MAX_PINGS 20000
#define BD_PDC_PING_US   1000
/** The target: p99 of the round trips while the block connects, ms. */
#define BD_PDC_TARGET_P99_MS 10.0

/* Run peertool chaingen into `path`. 0 or -1. */
static int chaingen(const char *path)
{
	char peerd[PATH_MAX], tool[PATH_MAX + 16];
	if (!bd_find_peerd(peerd, sizeof(peerd)))
		return -1;
	snprintf(tool, sizeof(tool), "%s/peertool", dirname(peerd));
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0) {
			dup2(nul, 1);
			dup2(nul, 2);
		}
		execl(tool, tool, "chaingen", "--blocks", BD_PDC_BLOCKS, "--bench-block", "ecdsa",
		      "--out", path, (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

/* Whole file into memory (malloc'd). */
static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = n > 0 ? malloc((size_t)n) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

/* Write all of buf to a non-blocking socket, waiting for room. 0 or -1. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t r = write(fd, buf, len);
		if (r > 0) {
			buf += r;
			len -= (size_t)r;
			continue;
		}
		if (r < 0 && errno != EAGAIN)
			return -1;
		bd_sleep_ms(1);
	}
	return 0;
}

/* Send block-file record i (magic, length, block) as a block frame. */
static int send_record(int fd, uint32_t magic, const uint8_t *rec, struct proto_writer *w)
{
	uint32_t n = proto_le32(rec + 4);
	w->len = 0;
	w->err = 0;
	proto_frame_write(w, magic, "block", rec + 8, n);
	return w->err ? -1 : write_all(fd, w->buf, w->len);
}

static long long block_count(const struct bd_daemon *bd)
{
	json_t *r = bd_ctl_call(bd, "getblockcount");
	long long n = json_is_integer(r) ? (long long)json_integer_value(r) : -1;
	json_decref(r);
	return n;
}

/* A getblockcount in flight on its own non-blocking control connection:
 * a chain method waits for the validation thread, so the bench must not
 * block on it while it pings. */
struct bd_poll {
	int fd;
	char buf[256];
	size_t len;
};

static int poll_send(const struct bd_daemon *bd, struct bd_poll *q)
{
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	q->len = 0;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", bd->sock);
	static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getblockcount\"}\n";
	if (q->fd < 0 || connect(q->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    write(q->fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1) ||
	    fcntl(q->fd, F_SETFL, O_NONBLOCK) != 0) {
		if (q->fd >= 0)
			close(q->fd);
		q->fd = -1;
		return -1;
	}
	return 0;
}

/* The count once the reply is in (the connection is then closed), else -1. */
static long long poll_check(struct bd_poll *q)
{
	if (q->fd < 0)
		return -1;
	ssize_t r = read(q->fd, q->buf + q->len, sizeof(q->buf) - 1 - q->len);
	if (r > 0)
		q->len += (size_t)r;
	q->buf[q->len] = 0;
	if (!strchr(q->buf, '\n'))
		return -1;
	close(q->fd);
	q->fd = -1;
	json_t *root = json_loads(q->buf, 0, NULL);
	json_t *res = json_object_get(root, "result");
	long long n = json_is_integer(res) ? (long long)json_integer_value(res) : -2;
	json_decref(root);
	return n;
}

/* The pinger's round trips: those of pings sent from measure_from on. */
struct pong_rtts {
	const uint64_t *sent_ns;
	uint64_t *rtt;
	size_t *n_rtt;
	uint64_t measure_from;
};

static void on_pong(void *arg, uint64_t nonce)
{
	struct pong_rtts *pr = arg;
	if (nonce >= 1 && nonce <= BD_PDC_MAX_PINGS && pr->sent_ns[nonce - 1] >= pr->measure_from &&
	    *pr->n_rtt < BD_PDC_MAX_PINGS)
		pr->rtt[(*pr->n_rtt)++] = bench_now_ns() - pr->sent_ns[nonce - 1];
}

/* Read pongs from the pinger; each one's round trip into rtt[]. */
static void read_pongs(struct bd_conn *c, uint32_t magic, const uint64_t *sent_ns, uint64_t *rtt,
                       size_t *n_rtt, uint64_t measure_from)
{
	struct pong_rtts pr = {
	    .sent_ns = sent_ns, .rtt = rtt, .n_rtt = n_rtt, .measure_from = measure_from};
	bd_read_pongs(c, magic, on_pong, &pr);
}

/*
 * PongDuringConnect: one peer feeds peerd a chaingen chain whose last block
 * holds 1,000 signed transactions; another pings every millisecond. The
 * round trips of the pings sent from the moment the big block is written
 * until peerd's tip reaches it are the measure (p50/p99/max, in the note).
 * Core answers pings on the thread that validates, so its pongs wait for
 * the block; peerd's loop only hands the block over. ns/op is
 * the time from the block's first byte written to the tip reaching it.
 */
BENCH_N(PongDuringConnect, 1)
{
	(void)n;
	struct bd_daemon bd = {0};
	struct bd_conn conns[2];
	memset(conns, 0, sizeof(conns));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	struct proto_writer w, fw, pw;
	proto_writer_init(&w);
	proto_writer_init(&fw);
	proto_writer_init(&pw);
	uint8_t *file = NULL;
	uint64_t *sent_ns = calloc(BD_PDC_MAX_PINGS, sizeof(*sent_ns));
	uint64_t *rtt = calloc(BD_PDC_MAX_PINGS, sizeof(*rtt));
	int err = bd_daemon_start(&bd, 16);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bench-chain.dat", bd.datadir);
	size_t flen = 0;
	if (err || ep < 0 || !sent_ns || !rtt || chaingen(path) ||
	    !(file = read_file(path, &flen)) || bd_handshake_frames(magic, &w)) {
		bench_fail(ctx, "PongDuringConnect: setup failed (peerd, peertool chaingen)");
		goto out;
	}
	unlink(path);
	if (bd_connect_all(&bd, conns, 2, ep, w.buf, w.len, magic) != 2) {
		bench_fail(ctx, "PongDuringConnect: handshakes did not complete");
		goto out;
	}
	/* Record offsets: record i is the block at height i + 1; the bench
	 * block is the last. */
	size_t offs[256], n_rec = 0;
	for (size_t o = 0; o + 8 <= flen && n_rec < 256;) {
		offs[n_rec++] = o;
		o += 8 + proto_le32(file + o + 4);
	}
	if (n_rec < 2) {
		bench_fail(ctx, "PongDuringConnect: chaingen wrote %zu blocks", n_rec);
		goto out;
	}
	for (size_t i = 0; i + 1 < n_rec; i++) {
		if (send_record(conns[0].fd, magic, file + offs[i], &fw)) {
			bench_fail(ctx, "PongDuringConnect: feeding block %zu failed", i);
			goto out;
		}
		while (read(conns[0].fd, conns[0].rx, BD_RX_BUF) > 0)
			;
	}
	uint64_t deadline = bench_now_ns() + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	while (block_count(&bd) < (long long)(n_rec - 1) && bench_now_ns() < deadline)
		bd_sleep_ms(5);
	if (block_count(&bd) != (long long)(n_rec - 1)) {
		bench_fail(ctx, "PongDuringConnect: peerd did not take the first %zu blocks",
		           n_rec - 1);
		goto out;
	}
	bench_reset(ctx);
	size_t pings = 0, n_rtt = 0;
	uint64_t t_block = 0, t_done = 0, next_ping = bench_now_ns();
	uint64_t next_poll = 0;
	size_t blk_off = 0;
	struct bd_poll poll = {.fd = -1};
	while (bench_now_ns() < deadline && pings < BD_PDC_MAX_PINGS) {
		uint64_t now = bench_now_ns();
		if (now >= next_ping) {
			pw.len = 0;
			pw.err = 0;
			uint8_t nonce[8];
			proto_put_le64(nonce, (uint64_t)pings + 1);
			proto_frame_write(&pw, magic, "ping", nonce, sizeof(nonce));
			sent_ns[pings++] = now;
			(void)write_all(conns[1].fd, pw.buf, pw.len);
			next_ping = now + BD_PDC_PING_US * 1000ull;
		}
		/* A few warm-up pings, then the block, written as the socket
		 * takes it so the pings go on meanwhile. */
		if (!t_block && pings == 20) {
			const uint8_t *rec = file + offs[n_rec - 1];
			fw.len = 0;
			fw.err = 0;
			proto_frame_write(&fw, magic, "block", rec + 8, proto_le32(rec + 4));
			if (fw.err)
				break;
			t_block = bench_now_ns();
		}
		if (t_block && blk_off < fw.len) {
			ssize_t r = write(conns[0].fd, fw.buf + blk_off, fw.len - blk_off);
			if (r > 0)
				blk_off += (size_t)r;
		}
		read_pongs(&conns[1], magic, sent_ns, rtt, &n_rtt, t_block ? t_block : UINT64_MAX);
		while (read(conns[0].fd, conns[0].rx, BD_RX_BUF) > 0)
			;
		if (t_block && blk_off == fw.len) {
			if (poll.fd < 0 && now >= next_poll && poll_send(&bd, &poll))
				break;
			long long got = poll_check(&poll);
			if (got == (long long)n_rec) {
				t_done = bench_now_ns();
				break;
			}
			if (got != -1)
				next_poll = now + 1000000ull;
		}
		usleep(100);
	}
	/* The pongs still on their way. */
	for (int i = 0; i < 50; i++) {
		read_pongs(&conns[1], magic, sent_ns, rtt, &n_rtt, t_block);
		bd_sleep_ms(1);
	}
	bench_stop(ctx);
	if (poll.fd >= 0)
		close(poll.fd);
	if (!t_done || !n_rtt) {
		bench_fail(ctx, "PongDuringConnect: the block did not connect (%zu pongs)", n_rtt);
		goto out;
	}
	qsort(rtt, n_rtt, sizeof(*rtt), bd_cmp_u64);
	uint64_t p50 = rtt[n_rtt / 2], p99 = rtt[(n_rtt * 99) / 100], max = rtt[n_rtt - 1];
	bench_note(ctx,
	           "block of %u bytes connected in %.1f ms while %zu pings were answered: round "
	           "trip p50 %.3f ms, p99 %.3f ms (target <= %.0f), max %.3f ms",
	           proto_le32(file + offs[n_rec - 1] + 4), (double)(t_done - t_block) / 1e6, n_rtt,
	           (double)p50 / 1e6, (double)p99 / 1e6, BD_PDC_TARGET_P99_MS, (double)max / 1e6);
out:
	bd_close_all(conns, 2);
	if (ep >= 0)
		close(ep);
	bd_daemon_stop(&bd);
	proto_writer_release(&w);
	proto_writer_release(&fw);
	proto_writer_release(&pw);
	free(file);
	free(sent_ns);
	free(rtt);
}

/*
 * CtlHostileClients (issue 13): 200 control clients each send 20 lines of
 * 100 getstats and never read a reply; then `uptime` is asked on a fresh
 * connection BD_CTL_UPTIMES times. ns/op is the mean uptime round trip
 * (connect, request, reply); the note has p50/p99/max. Target: p99 under
 * 200 ms.
 */
#define BD_CTL_HOSTILE 200
#define BD_CTL_BATCHES 20
#define BD_CTL_UPTIMES 20

BENCH_N(CtlHostileClients, BD_CTL_UPTIMES)
{
	struct bd_daemon bd = {0};
	int fds[BD_CTL_HOSTILE];
	uint64_t lat[BD_CTL_UPTIMES];
	size_t nfd = 0;
	char *line = NULL;
	bd_raise_nofile();
	int err = bd_daemon_start(&bd, 125);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		return;
	}
	if (err) {
		bench_fail(ctx, "CtlHostileClients: peerd did not start (%s)", strerror(-err));
		return;
	}
	/* One batch line of 100 getstats. */
	size_t cap = 100 * 64 + 8, len = 0;
	line = malloc(cap);
	if (!line)
		goto out;
	line[len++] = '[';
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(line + len, cap - len,
		                        "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"getstats\"}",
		                        i ? "," : "", i);
	line[len++] = ']';
	line[len++] = '\n';
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", bd.sock);
	for (int i = 0; i < BD_CTL_HOSTILE; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
			close(fd);
			bd_sleep_ms(5);
			continue;
		}
		fds[nfd++] = fd;
	}
	/* Each sends its batches as far as peerd takes them. */
	for (int b = 0; b < BD_CTL_BATCHES; b++)
		for (size_t i = 0; i < nfd; i++)
			(void)!send(fds[i], line, len, MSG_NOSIGNAL);
	bd_sleep_ms(500);
	bench_reset(ctx);
	for (size_t i = 0; i < n && i < BD_CTL_UPTIMES; i++) {
		uint64_t t0 = bench_now_ns();
		json_t *r = bd_ctl_call(&bd, "uptime");
		lat[i] = bench_now_ns() - t0;
		if (!r) {
			bench_fail(ctx, "CtlHostileClients: uptime failed with %zu hostile clients",
			           nfd);
			goto out;
		}
		json_decref(r);
	}
	bench_stop(ctx);
	qsort(lat, BD_CTL_UPTIMES, sizeof(lat[0]), bd_cmp_u64);
	bench_note(ctx,
	           "%zu hostile clients x %d batches of 100 getstats, never reading: uptime p50 "
	           "%.1f ms, p99 %.1f ms, max %.1f ms; peerd RSS %.1f MiB",
	           nfd, BD_CTL_BATCHES, lat[BD_CTL_UPTIMES / 2] / 1e6,
	           lat[(BD_CTL_UPTIMES * 99) / 100] / 1e6, lat[BD_CTL_UPTIMES - 1] / 1e6,
	           bd_rss_of(bd.pid) / 1048576.0);
out:
	for (size_t i = 0; i < nfd; i++)
		close(fds[i]);
	free(line);
	bd_daemon_stop(&bd);
}
