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
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
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
	snprintf(bd->sock, sizeof(bd->sock), "%s/control.sock", bd->datadir);
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

static void rm_datadir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
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
