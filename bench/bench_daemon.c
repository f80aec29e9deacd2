/*
 * bench/bench_daemon.c: whole-daemon benchmarks against a real peerd.
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
 *   PongDuringConnect one peer sends a 1,000-transaction block while another
 *                     pings every millisecond: the pongs' round trips
 *                     while the block connects (target p99 <= 10 ms).
 *
 * Each starts build/bin/peerd as a child (env PEERD_BIN, else `peerd` next
 * to this binary) on regtest, 127.0.0.1, a free port and a temporary
 * datadir; drives plain non-blocking sockets with epoll; builds every
 * frame with proto/'s encoders; reads getstats over the control socket;
 * then sends SIGTERM and removes the datadir. Without a peerd binary the
 * benchmark is skipped with a note. allocs/op counts this process only.
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

#define BD_CONNECT_PEERS  1000
#define BD_FLOOD_PEERS    125
#define BD_FLOOD_MESSAGES 20000
#define BD_INV_ENTRIES    1000
/** Distinct inv frames cycled through (random hashes, built before timing). */
#define BD_FLOOD_FRAMES     256
#define BD_RX_BUF           2048
#define BD_START_TIMEOUT_MS 10000
#define BD_PHASE_TIMEOUT_MS 60000

struct bd_daemon {
	pid_t pid;
	uint16_t port;
	char datadir[64];
	char sock[96];
};

struct bd_conn {
	int fd;
	bool connected;
	bool done; /* handshake: peerd's verack seen */
	uint32_t rx_len;
	uint8_t rx[BD_RX_BUF];
	/* flood: the frame being written and how far */
	uint32_t frame;
	uint32_t off;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static bool find_peerd(char *out, size_t len)
{
	const char *env = getenv("PEERD_BIN");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) == 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = 0;
	snprintf(out, len, "%s/peerd", dirname(self));
	return access(out, X_OK) == 0;
}

static uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	uint16_t port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int tcp_connect_nb(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons(port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool daemon_ready(const struct bd_daemon *bd)
{
	if (access(bd->sock, F_OK) != 0)
		return false;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons(bd->port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int daemon_start(struct bd_daemon *bd, int maxconn)
{
	char bin[PATH_MAX];
	if (!find_peerd(bin, sizeof(bin)))
		return -ENOENT;
	snprintf(bd->datadir, sizeof(bd->datadir), "/tmp/peerd-bench-XXXXXX");
	if (!mkdtemp(bd->datadir))
		return -errno;
	/* regtest's state (and socket) live in <datadir>/regtest/, as bitcoind's. */
	snprintf(bd->sock, sizeof(bd->sock), "%s/regtest/control.sock", bd->datadir);
	bd->port = free_port();
	char a_datadir[96], a_port[32], a_max[48];
	snprintf(a_datadir, sizeof(a_datadir), "-datadir=%s", bd->datadir);
	snprintf(a_port, sizeof(a_port), "-port=%u", bd->port);
	snprintf(a_max, sizeof(a_max), "-maxconnections=%d", maxconn);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char logp[128];
		snprintf(logp, sizeof(logp), "%s/stderr.log", bd->datadir);
		int lf = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (lf >= 0) {
			dup2(lf, 2);
			dup2(lf, 1);
		}
		execl(bin, bin, "-regtest", a_datadir, "-bind=127.0.0.1", a_port, a_max,
		      "-peertimeout=60", "-logtimestamps=0", (char *)NULL);
		_exit(127);
	}
	bd->pid = pid;
	for (int waited = 0; waited < BD_START_TIMEOUT_MS; waited += 10) {
		if (daemon_ready(bd))
			return 0;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			bd->pid = 0;
			return -ECHILD;
		}
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* The datadir and everything peerd made in it (regtest/blocks, chainstate...). */
static void rm_datadir(const char *dir)
{
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void daemon_stop(struct bd_daemon *bd)
{
	if (bd->pid > 0) {
		kill(bd->pid, SIGTERM);
		int st;
		for (int waited = 0; waited < 5000; waited += 10) {
			if (waitpid(bd->pid, &st, WNOHANG) == bd->pid) {
				bd->pid = 0;
				break;
			}
			sleep_ms(10);
		}
		if (bd->pid > 0) {
			kill(bd->pid, SIGKILL);
			waitpid(bd->pid, &st, 0);
			bd->pid = 0;
		}
	}
	if (bd->datadir[0])
		rm_datadir(bd->datadir);
}

/* One JSON-RPC call on a fresh control connection; the result (new reference) or NULL. */
static json_t *ctl_call(const struct bd_daemon *bd, const char *method)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", bd->sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char req[128];
	int n = snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}\n",
	                 method);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (memchr(buf, '\n', len))
			break;
	}
	close(fd);
	json_t *result = NULL;
	if (buf) {
		buf[len] = 0;
		json_t *root = json_loads(buf, 0, NULL);
		result = json_incref(json_object_get(root, "result"));
		json_decref(root);
		free(buf);
	}
	return result;
}

static long long jget(json_t *root, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(root, a);
	if (b)
		v = json_object_get(v, b);
	if (c)
		v = json_object_get(v, c);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static uint64_t rss_of(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/statm", (int)pid);
	FILE *f = fopen(p, "r");
	unsigned long long size = 0, res = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

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

/* The handshake frames a Core 29 inbound peer sends, built with proto/. */
static int handshake_frames(uint32_t magic, struct proto_writer *w)
{
	struct proto_msg m;
	proto_msg_init(&m);
	m.cmd = PROTO_CMD_VERSION;
	m.version.version = PROTO_VERSION;
	m.version.services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	m.version.timestamp = (int64_t)time(NULL);
	m.version.nonce = proto_random_u64();
	static const char ua[] = "/peerbench:0.1/";
	memcpy(m.version.user_agent, ua, sizeof(ua) - 1);
	m.version.user_agent_len = sizeof(ua) - 1;
	m.version.start_height = 0;
	m.version.relay = true;
	proto_msg_frame(&m, magic, w);
	proto_frame_write(w, magic, "wtxidrelay", NULL, 0);
	proto_frame_write(w, magic, "sendaddrv2", NULL, 0);
	proto_frame_write(w, magic, "verack", NULL, 0);
	proto_msg_release(&m);
	return w->err;
}

/* Consume complete frames from c->rx; sets c->done on verack. */
static void parse_rx(struct bd_conn *c, uint32_t magic)
{
	uint32_t off = 0;
	while (c->rx_len - off >= PROTO_HEADER_SIZE) {
		struct proto_frame_header h;
		if (proto_frame_header_parse(c->rx + off, magic, &h) && h.cmd == PROTO_CMD_UNKNOWN)
			break;
		if (c->rx_len - off - PROTO_HEADER_SIZE < h.length)
			break;
		if (h.cmd == PROTO_CMD_VERACK)
			c->done = true;
		off += PROTO_HEADER_SIZE + h.length;
	}
	memmove(c->rx, c->rx + off, c->rx_len - off);
	c->rx_len -= off;
}

/*
 * Open n connections and handshake them all concurrently. Returns the
 * number completed within the phase timeout.
 */
static int connect_all(const struct bd_daemon *bd, struct bd_conn *conns, int n, int ep,
                       const uint8_t *hs, size_t hs_len, uint32_t magic)
{
	for (int i = 0; i < n; i++) {
		conns[i].fd = tcp_connect_nb(bd->port);
		if (conns[i].fd < 0)
			return i;
		struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	int done = 0;
	uint64_t deadline = mono_ns() + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	struct epoll_event evs[256];
	while (done < n && mono_ns() < deadline) {
		int k = epoll_wait(ep, evs, 256, 100);
		for (int e = 0; e < k; e++) {
			struct bd_conn *c = &conns[evs[e].data.u32];
			if ((evs[e].events & EPOLLOUT) && !c->connected) {
				int err = 0;
				socklen_t el = sizeof(err);
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err)
					continue;
				c->connected = true;
				/* Small enough for one write on a fresh socket. */
				if (write(c->fd, hs, hs_len) != (ssize_t)hs_len)
					continue;
				struct epoll_event ev = {.events = EPOLLIN,
				                         .data.u32 = evs[e].data.u32};
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
			if (evs[e].events & EPOLLIN) {
				ssize_t r = read(c->fd, c->rx + c->rx_len, BD_RX_BUF - c->rx_len);
				if (r > 0) {
					c->rx_len += (uint32_t)r;
					bool was = c->done;
					parse_rx(c, magic);
					if (!was && c->done)
						done++;
				}
			}
		}
	}
	return done;
}

static void close_all(struct bd_conn *conns, int n)
{
	for (int i = 0; i < n; i++) {
		if (conns[i].fd > 0)
			close(conns[i].fd);
		conns[i].fd = -1;
	}
}

BENCH_N(PeersConnect1000, BD_CONNECT_PEERS)
{
	struct bd_daemon bd = {0};
	struct proto_writer w;
	const uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	raise_nofile();
	proto_writer_init(&w);
	struct bd_conn *conns = calloc((size_t)n, sizeof(*conns));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int err = daemon_start(&bd, (int)n + 100);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !conns || ep < 0 || handshake_frames(magic, &w)) {
		bench_fail(ctx, "PeersConnect1000: setup failed (%s)",
		           strerror(err < 0 ? -err : ENOMEM));
		goto out;
	}
	sleep_ms(200);
	uint64_t rss0 = rss_of(bd.pid);
	bench_reset(ctx);
	int done = connect_all(&bd, conns, (int)n, ep, w.buf, w.len, magic);
	bench_stop(ctx);
	if (done != (int)n) {
		bench_fail(ctx, "PeersConnect1000: %d of %zu handshakes completed", done, n);
		goto out;
	}
	/* Let the post-verack messages settle, then measure the idle state. */
	sleep_ms(500);
	json_t *cnt = ctl_call(&bd, "getconnectioncount");
	long long connections = json_is_integer(cnt) ? (long long)json_integer_value(cnt) : -1;
	json_decref(cnt);
	uint64_t rss1 = rss_of(bd.pid);
	json_t *st = ctl_call(&bd, "getstats");
	long long held = jget(st, "peers", "rx_buffers_held", NULL);
	long long fl_hw = jget(st, "freelists", "script", "high_water");
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
		close_all(conns, (int)n);
	if (ep >= 0)
		close(ep);
	daemon_stop(&bd);
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
	raise_nofile();
	proto_writer_init(&w);
	size_t flen = 0;
	uint8_t *frames = flood_frames(magic, &flen);
	struct bd_conn *conns = calloc((size_t)peers, sizeof(*conns));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	static uint8_t sink[1 << 16];
	int err = daemon_start(&bd, 200);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !frames || !conns || ep < 0 || handshake_frames(magic, &w)) {
		bench_fail(ctx, "InvFlood125: setup failed (%s)",
		           strerror(err < 0 ? -err : ENOMEM));
		goto out;
	}
	if (connect_all(&bd, conns, peers, ep, w.buf, w.len, magic) != peers) {
		bench_fail(ctx, "InvFlood125: handshakes did not complete");
		goto out;
	}
	for (int i = 0; i < peers; i++) {
		conns[i].frame = (uint32_t)i % BD_FLOOD_FRAMES;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_MOD, conns[i].fd, &ev);
	}
	json_t *st0 = ctl_call(&bd, "getstats");
	long long inv0 = jget(st0, "messages", "inv", "recv_count");
	long long bytes0 = jget(st0, "messages", "inv", "recv_bytes");
	json_decref(st0);
	uint64_t cpu0 = loop_cpu_ticks(bd.pid);

	bench_reset(ctx);
	uint64_t t0 = mono_ns();
	size_t sent = 0;
	uint64_t deadline = t0 + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	struct epoll_event evs[256];
	while (sent < n && mono_ns() < deadline) {
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
	while (mono_ns() < deadline) {
		json_decref(st);
		st = ctl_call(&bd, "getstats");
		inv1 = jget(st, "messages", "inv", "recv_count");
		bytes1 = jget(st, "messages", "inv", "recv_bytes");
		if (inv1 - inv0 >= (long long)n)
			break;
		for (int i = 0; i < peers; i++) {
			while (read(conns[i].fd, sink, sizeof(sink)) > 0)
				;
		}
		sleep_ms(2);
	}
	uint64_t t1 = mono_ns();
	bench_stop(ctx);
	uint64_t cpu1 = loop_cpu_ticks(bd.pid);
	double secs = (double)(t1 - t0) / 1e9;
	double cpu = (double)(cpu1 - cpu0) / (double)sysconf(_SC_CLK_TCK);
	double msgs = (double)(inv1 - inv0), mb = (double)(bytes1 - bytes0) / 1e6;
	json_t *conn = ctl_call(&bd, "getconnectioncount");
	bench_note(
	    ctx,
	    "%.0f inv messages (%.1f MB) in %.2f s: %.0f msg/s, %.1f MB/s decoded; loop thread CPU "
	    "%.2f s: "
	    "%.1f MB per loop-CPU-second (target >= 200); script free list high-water %lld, misses "
	    "%lld, "
	    "in use %lld; tx tracked %lld, ignored at limit %lld; peers still connected %lld",
	    msgs, mb, secs, msgs / secs, mb / secs, cpu, cpu > 0 ? mb / cpu : 0.0,
	    jget(st, "freelists", "script", "high_water"),
	    jget(st, "freelists", "script", "misses"), jget(st, "freelists", "script", "in_use"),
	    jget(st, "inventory", "tx_tracked", NULL),
	    jget(st, "inventory", "inv_ignored_limit", NULL),
	    json_is_integer(conn) ? (long long)json_integer_value(conn) : -1);
	if (inv1 - inv0 < (long long)n)
		bench_fail(ctx, "InvFlood125: peerd processed %lld of %zu messages", inv1 - inv0,
		           n);
	json_decref(conn);
	json_decref(st);
out:
	if (conns)
		close_all(conns, peers);
	if (ep >= 0)
		close(ep);
	daemon_stop(&bd);
	proto_writer_release(&w);
	free(conns);
	free(frames);
}

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
	if (!find_peerd(peerd, sizeof(peerd)))
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
		sleep_ms(1);
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
	json_t *r = ctl_call(bd, "getblockcount");
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Read pongs from the pinger; each one's round trip into rtt[]. */
static void read_pongs(struct bd_conn *c, uint32_t magic, const uint64_t *sent_ns, uint64_t *rtt,
                       size_t *n_rtt, uint64_t measure_from)
{
	for (;;) {
		ssize_t r = read(c->fd, c->rx + c->rx_len, BD_RX_BUF - c->rx_len);
		if (r <= 0)
			break;
		c->rx_len += (uint32_t)r;
		uint32_t off = 0;
		while (c->rx_len - off >= PROTO_HEADER_SIZE) {
			struct proto_frame_header h;
			int perr = proto_frame_header_parse(c->rx + off, magic, &h);
			if ((perr && h.cmd != PROTO_CMD_UNKNOWN) ||
			    h.length > BD_RX_BUF - PROTO_HEADER_SIZE) {
				/* Nothing this big comes to the pinger; drop it all. */
				off = c->rx_len;
				break;
			}
			if (c->rx_len - off - PROTO_HEADER_SIZE < h.length)
				break;
			if (h.cmd == PROTO_CMD_PONG && h.length == 8) {
				uint64_t nonce = proto_le64(c->rx + off + PROTO_HEADER_SIZE);
				if (nonce >= 1 && nonce <= BD_PDC_MAX_PINGS &&
				    sent_ns[nonce - 1] >= measure_from && *n_rtt < BD_PDC_MAX_PINGS)
					rtt[(*n_rtt)++] = mono_ns() - sent_ns[nonce - 1];
			}
			off += PROTO_HEADER_SIZE + h.length;
		}
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
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
	int err = daemon_start(&bd, 16);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bench-chain.dat", bd.datadir);
	size_t flen = 0;
	if (err || ep < 0 || !sent_ns || !rtt || chaingen(path) ||
	    !(file = read_file(path, &flen)) || handshake_frames(magic, &w)) {
		bench_fail(ctx, "PongDuringConnect: setup failed (peerd, peertool chaingen)");
		goto out;
	}
	unlink(path);
	if (connect_all(&bd, conns, 2, ep, w.buf, w.len, magic) != 2) {
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
	uint64_t deadline = mono_ns() + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	while (block_count(&bd) < (long long)(n_rec - 1) && mono_ns() < deadline)
		sleep_ms(5);
	if (block_count(&bd) != (long long)(n_rec - 1)) {
		bench_fail(ctx, "PongDuringConnect: peerd did not take the first %zu blocks",
		           n_rec - 1);
		goto out;
	}
	bench_reset(ctx);
	size_t pings = 0, n_rtt = 0;
	uint64_t t_block = 0, t_done = 0, next_ping = mono_ns();
	uint64_t next_poll = 0;
	size_t blk_off = 0;
	struct bd_poll poll = {.fd = -1};
	while (mono_ns() < deadline && pings < BD_PDC_MAX_PINGS) {
		uint64_t now = mono_ns();
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
			t_block = mono_ns();
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
				t_done = mono_ns();
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
		sleep_ms(1);
	}
	bench_stop(ctx);
	if (poll.fd >= 0)
		close(poll.fd);
	if (!t_done || !n_rtt) {
		bench_fail(ctx, "PongDuringConnect: the block did not connect (%zu pongs)", n_rtt);
		goto out;
	}
	qsort(rtt, n_rtt, sizeof(*rtt), cmp_u64);
	uint64_t p50 = rtt[n_rtt / 2], p99 = rtt[(n_rtt * 99) / 100], max = rtt[n_rtt - 1];
	bench_note(ctx,
	           "block of %u bytes connected in %.1f ms while %zu pings were answered: round "
	           "trip p50 %.3f ms, p99 %.3f ms (target <= %.0f), max %.3f ms",
	           proto_le32(file + offs[n_rec - 1] + 4), (double)(t_done - t_block) / 1e6, n_rtt,
	           (double)p50 / 1e6, (double)p99 / 1e6, BD_PDC_TARGET_P99_MS, (double)max / 1e6);
out:
	close_all(conns, 2);
	if (ep >= 0)
		close(ep);
	daemon_stop(&bd);
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
	raise_nofile();
	int err = daemon_start(&bd, 125);
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
			sleep_ms(5);
			continue;
		}
		fds[nfd++] = fd;
	}
	/* Each sends its batches as far as peerd takes them. */
	for (int b = 0; b < BD_CTL_BATCHES; b++)
		for (size_t i = 0; i < nfd; i++)
			(void)!send(fds[i], line, len, MSG_NOSIGNAL);
	sleep_ms(500);
	bench_reset(ctx);
	for (size_t i = 0; i < n && i < BD_CTL_UPTIMES; i++) {
		uint64_t t0 = mono_ns();
		json_t *r = ctl_call(&bd, "uptime");
		lat[i] = mono_ns() - t0;
		if (!r) {
			bench_fail(ctx, "CtlHostileClients: uptime failed with %zu hostile clients",
			           nfd);
			goto out;
		}
		json_decref(r);
	}
	bench_stop(ctx);
	qsort(lat, BD_CTL_UPTIMES, sizeof(lat[0]), cmp_u64);
	bench_note(ctx,
	           "%zu hostile clients x %d batches of 100 getstats, never reading: uptime p50 "
	           "%.1f ms, p99 %.1f ms, max %.1f ms; peerd RSS %.1f MiB",
	           nfd, BD_CTL_BATCHES, lat[BD_CTL_UPTIMES / 2] / 1e6,
	           lat[(BD_CTL_UPTIMES * 99) / 100] / 1e6, lat[BD_CTL_UPTIMES - 1] / 1e6,
	           rss_of(bd.pid) / 1048576.0);
out:
	for (size_t i = 0; i < nfd; i++)
		close(fds[i]);
	free(line);
	daemon_stop(&bd);
}

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
	h->fd = tcp_connect_nb(port);
	h->connected = false;
	h->off = 0;
	if (h->fd < 0)
		return -1;
	int sb = BD_FRB_SNDBUF;
	setsockopt(h->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = tag};
	return epoll_ctl(ep, EPOLL_CTL_ADD, h->fd, &ev);
}

/* Frames from an honest peer's socket; a pong with its nonce ends its round. */
static bool frb_read(struct bd_conn *c, uint32_t magic, uint64_t nonce)
{
	bool pong = false;
	for (;;) {
		ssize_t r = read(c->fd, c->rx + c->rx_len, BD_RX_BUF - c->rx_len);
		if (r <= 0)
			break;
		c->rx_len += (uint32_t)r;
		uint32_t off = 0;
		while (c->rx_len - off >= PROTO_HEADER_SIZE) {
			struct proto_frame_header h;
			int perr = proto_frame_header_parse(c->rx + off, magic, &h);
			if ((perr && h.cmd != PROTO_CMD_UNKNOWN) ||
			    h.length > BD_RX_BUF - PROTO_HEADER_SIZE) {
				off = c->rx_len;
				break;
			}
			if (c->rx_len - off - PROTO_HEADER_SIZE < h.length)
				break;
			if (h.cmd == PROTO_CMD_PONG && h.length == 8 &&
			    proto_le64(c->rx + off + PROTO_HEADER_SIZE) == nonce)
				pong = true;
			off += PROTO_HEADER_SIZE + h.length;
		}
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
	return pong;
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
	raise_nofile();
	int err = daemon_start(&bd, BD_FRB_HOSTILE + BD_FRB_HONEST + 16);
	if (err == -ENOENT) {
		bench_note(ctx, "skipped: no peerd binary (build it with make, or set PEERD_BIN)");
		goto out;
	}
	if (err || !hc || !hs || !flood.fl || !rtt || !big || !block || !bigf || ep < 0 ||
	    flood.ep < 0 || handshake_frames(magic, &w)) {
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
	int done = connect_all(&bd, hc, BD_FRB_HONEST, hep, w.buf, w.len, magic);
	close(hep);
	if (done != BD_FRB_HONEST) {
		bench_fail(ctx, "FloodRecvBudget: %d of %d honest handshakes", done, BD_FRB_HONEST);
		goto out;
	}
	for (int i = 0; i < BD_FRB_HONEST; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_ADD, hc[i].fd, &ev);
	}
	sleep_ms(300);
	uint64_t rss0 = rss_of(bd.pid);
	json_t *st = ctl_call(&bd, "getstats");
	long long limit = jget(st, "recv_budget", "limit", NULL);
	json_decref(st);
	flood.block = block;
	flood.block_len = PROTO_HEADER_SIZE + BD_FRB_BLOCK - 1;
	flood.port = bd.port;
	uint64_t start = mono_ns(), end = start + (uint64_t)BD_FRB_SECONDS * 1000000000ull;
	if (pthread_create(&thr, NULL, frb_flood_main, &flood)) {
		bench_fail(ctx, "FloodRecvBudget: no flood thread");
		goto out;
	}
	flooding = true;
	uint64_t next_poll = start;
	bench_reset(ctx);
	struct epoll_event evs[BD_FRB_HONEST];
	for (uint64_t now = mono_ns(); now < end; now = mono_ns()) {
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
				uint64_t t = mono_ns() - h->t0;
				if (tag < BD_FRB_BIG && n_big < BD_FRB_MAX_RTT)
					big[n_big++] = t;
				else if (tag >= BD_FRB_BIG && n_rtt < BD_FRB_MAX_RTT)
					rtt[n_rtt++] = t;
				h->phase = 0;
				h->next = h->t0 + (uint64_t)BD_FRB_PING_MS * 1000000ull;
			}
		}
		if (now >= next_poll) {
			st = ctl_call(&bd, "getstats");
			long long held = jget(st, "recv_budget", "held", NULL);
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
	st = ctl_call(&bd, "getstats");
	long long hmax = jget(st, "recv_budget", "held_max", NULL);
	long long pauses = jget(st, "recv_budget", "pauses", NULL);
	long long evictions = jget(st, "recv_budget", "evictions", NULL);
	json_decref(st);
	uint64_t hwm = vm_hwm(bd.pid);
	if (!n_rtt || !n_big) {
		bench_fail(ctx, "FloodRecvBudget: honest peers got %zu pongs, %zu 1 MB rounds",
		           n_rtt, n_big);
		goto out;
	}
	if (hmax > limit)
		bench_fail(ctx, "FloodRecvBudget: held %lld over the budget %lld", hmax, limit);
	qsort(rtt, n_rtt, sizeof(*rtt), cmp_u64);
	qsort(big, n_big, sizeof(*big), cmp_u64);
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
		close_all(hc, BD_FRB_HONEST);
	if (ep >= 0)
		close(ep);
	if (flood.ep >= 0)
		close(flood.ep);
	daemon_stop(&bd);
	proto_writer_release(&w);
	free(hc);
	free(hs);
	free(flood.fl);
	free(rtt);
	free(big);
	free(block);
	free(bigf);
}
