/**
 * tests/unit/test_daemon_fixture.h: an in-process daemon for the
 * test_daemon_*.c unit tests.
 *
 * A fixture is a struct daemon set up as daemon/main.c sets it up (regtest,
 * a fresh mkdtemp datadir, every debug category on, logs into a temporary
 * file the test can search), on its own libuv loop that nothing runs
 * unless a test asks. Peers are real struct peers whose TCP handle is one
 * end of a socketpair: what peerd sends lands on the other end, where
 * tf_read_sent() decodes it; what a peer "sends" is fed straight into the
 * receive path (transport_alloc_cb / transport_read_cb, exactly as libuv
 * calls them) in chunks of the test's choosing, so framing is tested byte
 * by byte without timing.
 *
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>. One
 * test binary includes it once: it registers a recorder as the daemon's
 * shutdown_fn, which peerd's main.c (not in libpeerd-daemon.a) sets to
 * its own.
 */
#ifndef PEERD_TEST_DAEMON_FIXTURE_H
#define PEERD_TEST_DAEMON_FIXTURE_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "daemon/program.h"

/* Each test binary uses only some helpers. */
#define TF_FN static __attribute__((unused))

/** Peers one fixture can hold (ids are indexes into tf.remote). */
#define TF_MAX_PEERS 64u
/** A routable documentation address (RFC 5737 TEST-NET-3). */
#define TF_ADDR "203.0.113.7:18444"

struct tf {
	uv_loop_t loop;
	struct peerd_conf conf;
	struct daemon *d;
	char dir[64];
	FILE *log;
	int remote[TF_MAX_PEERS]; /**< the test's end of each peer's socketpair, -1 = none */
};

/** daemon_shutdown calls seen (the recorder below) and the last reason. */
static int tf_shutdown_calls;
static char tf_shutdown_why[128];

/* daemon/main.c's shutdown closes handles the fixture never opened; tests
 * only need to know it was asked for. Registered as d->shutdown_fn. */
static void tf_record_shutdown(struct daemon *d, const char *why)
{
	tf_shutdown_calls++;
	snprintf(tf_shutdown_why, sizeof(tf_shutdown_why), "%s", why);
	d->shutting_down = true;
}

/** As peerd's main(): libuv and jansson allocate through the xmalloc hook. Call first. */
TF_FN void tf_global_init(void)
{
	uv_replace_allocator(xmalloc, xrealloc, xcalloc, xfree);
	json_set_alloc_funcs(xmalloc, xfree);
}

TF_FN struct tf *tf_new(void)
{
	struct tf *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	for (unsigned i = 0; i < TF_MAX_PEERS; i++)
		t->remote[i] = -1;
	assert_int_equal(uv_loop_init(&t->loop), 0);
	conf_defaults(&t->conf);
	t->conf.params = proto_params(PROTO_NET_REGTEST);
	/* Core's -test=addrman: the same addresses land in the same slots every
	 * run (with a random key two of a test's addresses sometimes collide). */
	t->conf.test_addrman = true;
	snprintf(t->dir, sizeof(t->dir), "/tmp/peerd-dunit-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	/* Flat: the temporary directory is both the datadir and the network's. */
	t->conf.datadir = xstrdup(t->dir);
	t->conf.netdir = xstrdup(t->dir);
	assert_non_null(t->conf.datadir);
	assert_non_null(t->conf.netdir);
	t->log = tmpfile();
	assert_non_null(t->log);

	struct daemon *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	t->d = d;
	assert_int_equal(daemon_init(d, &t->loop, &t->conf), 0);
	d->shutdown_fn = tf_record_shutdown;
	d->log.out = t->log;
	d->log.timestamps = false;
	/* Debug lines on: their formatting runs under the sanitizers too. */
	d->log.debug = (1u << DLOG_CAT__COUNT) - 1;
	assert_int_equal(ban_init(d), 0);
	tf_shutdown_calls = 0;
	return t;
}

/* rm -r of the datadir (flat: banlist.json, its .new, control.sock). */
TF_FN void tf_rmdir(const char *dir)
{
	DIR *dd = opendir(dir);
	if (!dd)
		return;
	struct dirent *e;
	char path[512];
	while ((e = readdir(dd)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(dd);
	rmdir(dir);
}

/** Close every peer and the control socket, run the loop dry, free everything. */
TF_FN void tf_free(struct tf *t)
{
	struct daemon *d = t->d;
	base_alloc_fail_after(-1);
	for (uint32_t i = 0; i < d->n_peers; i++)
		peer_disconnect(d->peers[i], "test over");
	ctl_close(d);
	/* A validation thread a test started keeps the loop alive until it exits. */
	validation_stop(d);
	uv_run(&t->loop, UV_RUN_DEFAULT);
	assert_int_equal(d->n_peers, 0);
	daemon_release(d);
	int rc = uv_loop_close(&t->loop);
	if (rc)
		fail_msg("uv_loop_close: %s (a handle was left open)", uv_strerror(rc));
	for (unsigned i = 0; i < TF_MAX_PEERS; i++) {
		if (t->remote[i] >= 0)
			close(t->remote[i]);
	}
	conf_release(&t->conf);
	fclose(t->log);
	tf_rmdir(t->dir);
	free(d);
	free(t);
}

/** cmocka group setup: a fresh daemon per test in *state. */
TF_FN int tf_setup(void **state)
{
	*state = tf_new();
	return 0;
}

/** cmocka group teardown: tf_free of *state. */
TF_FN int tf_teardown(void **state)
{
	tf_free(*state);
	return 0;
}

/**
 * Open the chain in t's datadir as peerd's startup does (validation_open:
 * the validation thread and the loop's chain view), with the dbcache
 * raised to chain/'s minimum (a short regtest chain needs no more) and one
 * script thread. Set t->d's hooks and peers first where a test needs
 * them there. Free t with tf_free_chain.
 */
TF_FN void tf_open_chain(struct tf *t)
{
	t->conf.dbcache_mib = 0;
	t->conf.par = 1;
	assert_int_equal(validation_open(t->d), 0);
}

/** tf_free, and the chain's subdirectories its flat clean-up leaves behind. */
TF_FN void tf_free_chain(struct tf *t)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	tf_free(t);
	assert_int_equal(system(cmd), 0);
}

/** cmocka setup: a fresh daemon with its chain open (tf_open_chain) in *state. */
TF_FN int tf_setup_chain(void **state)
{
	struct tf *t = tf_new();
	tf_open_chain(t);
	*state = t;
	return 0;
}

/** cmocka teardown: tf_free_chain of *state. */
TF_FN int tf_teardown_chain(void **state)
{
	tf_free_chain(*state);
	return 0;
}

/**
 * A peer past its handshake (PEER_ACTIVE, version 70016, NODE_NETWORK |
 * NODE_WITNESS) at address `addr` ("ip:port"); inbound or manual.
 */
TF_FN struct peer *tf_peer(struct tf *t, bool inbound, const char *addr)
{
	struct peer *p = peer_new(t->d, inbound);
	assert_non_null(p);
	if (p->id >= TF_MAX_PEERS)
		fail_msg("peer id %llu over the fixture's %u", (unsigned long long)p->id,
		         TF_MAX_PEERS);
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	int rc = uv_tcp_open(&p->tcp, sv[0]);
	if (rc)
		fail_msg("uv_tcp_open: %s", uv_strerror(rc));
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	t->remote[p->id] = sv[1];
	assert_int_equal(net_addr_parse(addr, 18444, &p->addr), 0);
	p->state = PEER_ACTIVE;
	p->got_version = p->sent_version = p->handshake_done = true;
	p->version = PROTO_VERSION;
	p->services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	p->relaytxes = true;
	return p;
}

/** A peer that has only just connected: nothing received yet. */
TF_FN struct peer *tf_new_conn(struct tf *t, const char *addr)
{
	struct peer *p = tf_peer(t, true, addr);
	p->state = PEER_HANDSHAKE;
	p->got_version = p->sent_version = p->handshake_done = false;
	p->version = 0;
	p->services = 0;
	return p;
}

/**
 * Deliver bytes as libuv would: alloc callback, copy at most `chunk` bytes
 * (and at most what the buffer offers), read callback; repeat. Stops when
 * the peer closes. Returns the bytes delivered.
 */
TF_FN size_t tf_feed(struct peer *p, const uint8_t *data, size_t len, size_t chunk)
{
	size_t off = 0;
	while (off < len && p->state != PEER_CLOSING) {
		uv_buf_t b;
		transport_alloc_cb((uv_handle_t *)&p->tcp, 65536, &b);
		if (!b.base || !b.len) {
			/* libuv reports an empty buffer as UV_ENOBUFS. */
			transport_read_cb((uv_stream_t *)&p->tcp, UV_ENOBUFS, &b);
			break;
		}
		size_t n = len - off;
		if (n > chunk)
			n = chunk;
		if (n > b.len)
			n = b.len;
		memcpy(b.base, data + off, n);
		transport_read_cb((uv_stream_t *)&p->tcp, (ssize_t)n, &b);
		off += n;
	}
	return off;
}

/** Append one frame (this network's magic) to w. */
TF_FN void tf_frame(struct tf *t, struct proto_writer *w, const char *cmd, const void *payload,
                    size_t len)
{
	proto_frame_write(w, t->d->params->magic, cmd, payload, len);
	assert_int_equal(w->err, 0);
}

/** Append message m as a frame to w. */
TF_FN void tf_msg_frame(struct tf *t, struct proto_writer *w, const struct proto_msg *m)
{
	proto_msg_frame(m, t->d->params->magic, w);
	assert_int_equal(w->err, 0);
}

/**
 * m becomes the version message of a Core-like full node (NODE_NETWORK and
 * NODE_WITNESS, relay on, this protocol version, the time now) with this
 * user agent, start height and nonce. m must be proto_msg_init'ed.
 */
TF_FN void tf_version_msg(struct proto_msg *m, const char *user_agent, int32_t start_height,
                          uint64_t nonce)
{
	m->cmd = PROTO_CMD_VERSION;
	m->version.version = PROTO_VERSION;
	m->version.services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	m->version.timestamp = (int64_t)time(NULL);
	m->version.nonce = nonce;
	snprintf(m->version.user_agent, sizeof(m->version.user_agent), "%s", user_agent);
	m->version.user_agent_len = (uint32_t)strlen(m->version.user_agent);
	m->version.start_height = start_height;
	m->version.relay = true;
}

/** What the daemon sent one peer, decoded. */
struct tf_sent {
	uint32_t count[PROTO_CMD__COUNT]; /**< frames per command */
	struct proto_inv_vec *getdata;    /**< every getdata entry, in order (malloc) */
	uint32_t n_getdata;
	struct proto_inv_vec *notfound; /**< every notfound entry (malloc) */
	uint32_t n_notfound;
};

TF_FN void tf_sent_free(struct tf_sent *s)
{
	free(s->getdata);
	free(s->notfound);
	memset(s, 0, sizeof(*s));
}

TF_FN void tf_append_inv(struct proto_inv_vec **v, uint32_t *n, const struct proto_inv *inv)
{
	*v = realloc(*v, ((size_t)*n + inv->n + 1) * sizeof(**v));
	assert_non_null(*v);
	memcpy(*v + *n, inv->v, (size_t)inv->n * sizeof(**v));
	*n += inv->n;
}

/**
 * Read everything queued on peer `id`'s socket since the last call and
 * decode it into *s (zeroed first; free with tf_sent_free). Every frame
 * must be well formed.
 */
TF_FN void tf_read_sent(struct tf *t, uint64_t id, struct tf_sent *s)
{
	memset(s, 0, sizeof(*s));
	int fd = t->remote[id];
	assert_true(fd >= 0);
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		ssize_t n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	struct proto_msg m;
	proto_msg_init(&m);
	size_t off = 0;
	while (off < len) {
		struct proto_frame_header h;
		if (len - off < PROTO_HEADER_SIZE)
			fail_msg("%zu stray bytes after %zu sent to peer %llu", len - off, off,
			         (unsigned long long)id);
		assert_int_equal(proto_frame_header_parse(buf + off, t->d->params->magic, &h), 0);
		if (len - off - PROTO_HEADER_SIZE < h.length)
			fail_msg("truncated %s frame sent to peer %llu", h.command,
			         (unsigned long long)id);
		const uint8_t *payload = buf + off + PROTO_HEADER_SIZE;
		assert_int_equal(proto_frame_verify(&h, payload), 0);
		s->count[h.cmd]++;
		if (h.cmd == PROTO_CMD_GETDATA || h.cmd == PROTO_CMD_NOTFOUND) {
			assert_int_equal(proto_msg_decode(h.cmd, payload, h.length, &m, NULL), 0);
			if (h.cmd == PROTO_CMD_GETDATA)
				tf_append_inv(&s->getdata, &s->n_getdata, &m.inv);
			else
				tf_append_inv(&s->notfound, &s->n_notfound, &m.inv);
		}
		off += PROTO_HEADER_SIZE + h.length;
	}
	proto_msg_release(&m);
	free(buf);
}

/** A free loopback port: bound to 0, read back, released (for a listener a test opens). */
TF_FN uint16_t tf_free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/**
 * t set to listen on 127.0.0.1 at a free port (conf only: the test sets
 * its limits, then calls net_start_listeners); the port.
 */
TF_FN uint16_t tf_listen_loopback(struct tf *t)
{
	uint16_t port = tf_free_port();
	t->conf.listen = true;
	t->conf.port = port;
	t->conf.bind.v[0] = xstrdup("127.0.0.1");
	assert_non_null(t->conf.bind.v[0]);
	t->conf.bind.n = 1;
	return port;
}

/** Whether peerd closed the test's socket fd (EOF or reset) within `tries`
 * turns of the loop about half a millisecond apart. */
TF_FN bool tf_closed_by_peerd(struct tf *t, int fd, int tries)
{
	char c;
	for (int i = 0; i < tries; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		ssize_t n = recv(fd, &c, 1, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		usleep(500);
	}
	return false;
}

/** Frame a headers message of h[0..n) into w; the array stays the caller's. */
TF_FN void tf_headers_frame(struct tf *t, struct proto_writer *w, struct proto_block_header *h,
                            uint32_t n)
{
	struct proto_msg m;
	proto_msg_init(&m);
	m.cmd = PROTO_CMD_HEADERS;
	m.headers.h = h;
	m.headers.n = m.headers.cap = n;
	tf_msg_frame(t, w, &m);
	/* The array is the caller's: the message must not free it. */
	m.headers.h = NULL;
	m.headers.n = m.headers.cap = 0;
	proto_msg_release(&m);
}

/** p "sends" one headers message of h[0..n), fed whole. */
TF_FN void tf_send_headers(struct tf *t, struct peer *p, struct proto_block_header *h, uint32_t n)
{
	struct proto_writer w;
	proto_writer_init(&w);
	tf_headers_frame(t, &w, h, n);
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
}

/** Whether the log so far contains `needle`. */
TF_FN bool tf_log_contains(struct tf *t, const char *needle)
{
	fflush(t->log);
	long end = ftell(t->log);
	assert_true(end >= 0);
	char *text = malloc((size_t)end + 1);
	assert_non_null(text);
	rewind(t->log);
	size_t n = fread(text, 1, (size_t)end, t->log);
	text[n] = 0;
	fseek(t->log, 0, SEEK_END);
	bool found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

/** Script free-list buffers handed out now. */
TF_FN size_t tf_script_in_use(void)
{
	struct proto_freelist_stats fs;
	proto_freelist_stats(PROTO_FREELIST_SCRIPT, &fs);
	return fs.in_use;
}

/** The error counter of one proto_err code. */
TF_FN uint64_t tf_err_count(struct tf *t, int err)
{
	return t->d->stats.decode_err[-err];
}

/** A hash whose bytes are all `b` but the first four, which hold `n`. */
TF_FN struct proto_hash tf_hash(uint8_t b, uint32_t n)
{
	struct proto_hash h;
	memset(h.b, b, sizeof(h.b));
	proto_put_le32(h.b, n);
	return h;
}

#endif
