/*
 * bench/bench_daemon.c: the harness of the whole-daemon benchmarks
 * (bench/bench_daemon_*.c), declared in bench/bench_daemon.h.
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
#include "bench/bench_daemon.h"

#define BD_START_TIMEOUT_MS 10000

void bd_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

bool bd_find_peerd(char *out, size_t len)
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

void bd_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int bd_tcp_connect_nb(uint16_t port)
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

int bd_daemon_start(struct bd_daemon *bd, int maxconn)
{
	char bin[PATH_MAX];
	if (!bd_find_peerd(bin, sizeof(bin)))
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
		bd_sleep_ms(10);
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

void bd_daemon_stop(struct bd_daemon *bd)
{
	if (bd->pid > 0) {
		kill(bd->pid, SIGTERM);
		int st;
		for (int waited = 0; waited < 5000; waited += 10) {
			if (waitpid(bd->pid, &st, WNOHANG) == bd->pid) {
				bd->pid = 0;
				break;
			}
			bd_sleep_ms(10);
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
json_t *bd_ctl_call(const struct bd_daemon *bd, const char *method)
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

long long bd_jget(json_t *root, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(root, a);
	if (b)
		v = json_object_get(v, b);
	if (c)
		v = json_object_get(v, c);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

uint64_t bd_rss_of(pid_t pid)
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

/* The handshake frames a Core 29 inbound peer sends, built with proto/. */
int bd_handshake_frames(uint32_t magic, struct proto_writer *w)
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

void bd_read_pongs(struct bd_conn *c, uint32_t magic, void (*on_pong)(void *arg, uint64_t nonce),
                   void *arg)
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
				off = c->rx_len;
				break;
			}
			if (c->rx_len - off - PROTO_HEADER_SIZE < h.length)
				break;
			if (h.cmd == PROTO_CMD_PONG && h.length == 8)
				on_pong(arg, proto_le64(c->rx + off + PROTO_HEADER_SIZE));
			off += PROTO_HEADER_SIZE + h.length;
		}
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
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
int bd_connect_all(const struct bd_daemon *bd, struct bd_conn *conns, int n, int ep,
                   const uint8_t *hs, size_t hs_len, uint32_t magic)
{
	for (int i = 0; i < n; i++) {
		conns[i].fd = bd_tcp_connect_nb(bd->port);
		if (conns[i].fd < 0)
			return i;
		struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)i};
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	int done = 0;
	uint64_t deadline = bench_now_ns() + (uint64_t)BD_PHASE_TIMEOUT_MS * 1000000ull;
	struct epoll_event evs[256];
	while (done < n && bench_now_ns() < deadline) {
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

void bd_close_all(struct bd_conn *conns, int n)
{
	for (int i = 0; i < n; i++) {
		if (conns[i].fd > 0)
			close(conns[i].fd);
		conns[i].fd = -1;
	}
}

int bd_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}
