/*
 * tests/unit/test_daemon_review.c: regression tests for defects found by
 * reviewing daemon/: arithmetic on operator-supplied ban times, ban
 * entries loaded from a hand-edited banlist.json, and control socket
 * paths longer than a Unix socket address can hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* ctl_reply on a NUL-terminated request; the reply must exist. */
static json_t *call(struct tf *t, const char *line)
{
	unsigned flags = 0;
	json_t *r = ctl_reply(t->d, line, strlen(line), &flags);
	if (!r)
		fail_msg("%s: no reply", line);
	return r;
}

static void assert_result_null(json_t *r, const char *what)
{
	json_t *err = json_object_get(r, "error");
	if (err) {
		char *s = json_dumps(err, JSON_COMPACT);
		char msg[512];
		snprintf(msg, sizeof(msg), "%s: expected success, got error %s", what, s ? s : "?");
		xfree(s);
		fail_msg("%s", msg);
	}
	assert_true(json_is_null(json_object_get(r, "result")));
}

/* The listbanned entries (borrowed from *reply, which the caller decrefs). */
static json_t *listbanned(struct tf *t, json_t **reply)
{
	*reply = call(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"listbanned\"}");
	json_t *a = json_object_get(*reply, "result");
	if (!json_is_array(a))
		fail_msg("listbanned: result is not an array");
	return a;
}

static json_int_t field(json_t *entry, const char *name)
{
	json_t *v = json_object_get(entry, name);
	if (!json_is_integer(v))
		fail_msg("listbanned entry has no integer %s", name);
	return json_integer_value(v);
}

/*
 * setban with a relative bantime near INT64_MAX: now + bantime overflowed
 * (undefined behaviour; in practice a ban that expired at once, while the
 * call reported success). It must either be refused or ban for a long time.
 */
static void test_setban_huge_bantime(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	json_t *r = call(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"setban\","
	                    "\"params\":[\"198.51.100.9\",\"add\",9223372036854775807]}");
	assert_result_null(r, "setban huge bantime");
	json_decref(r);
	json_t *reply;
	json_t *a = listbanned(t, &reply);
	if (json_array_size(a) != 1)
		fail_msg("listbanned has %zu entries after a huge ban, expected 1",
		         json_array_size(a));
	json_int_t until = field(json_array_get(a, 0), "banned_until");
	if (until <= now)
		fail_msg("banned_until %lld is not after now %lld", (long long)until,
		         (long long)now);
	json_int_t remaining = field(json_array_get(a, 0), "time_remaining");
	if (remaining <= 0)
		fail_msg("time_remaining %lld, expected positive", (long long)remaining);
	json_decref(reply);
	union net_addr addr;
	assert_int_equal(net_addr_parse("198.51.100.9:1", 1, &addr), 0);
	assert_int_equal(ban_check(t->d, &addr), BAN_BANNED);
}

/*
 * banlist.json is operator-editable: a ban_created far in the past (or in
 * the future) made listbanned's ban_duration (until - created) overflow.
 */
static void test_loaded_ban_created_out_of_range(void **state)
{
	struct tf *t = *state;
	char path[128];
	snprintf(path, sizeof(path), "%s/banlist.json", t->dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"banned_nets\":["
	      "{\"version\":1,\"ban_created\":-9223372036854775807,"
	      "\"banned_until\":9223372036854775807,\"address\":\"198.51.100.0/24\"},"
	      "{\"version\":1,\"ban_created\":9223372036854775807,"
	      "\"banned_until\":9000000000000000000,\"address\":\"203.0.113.0/24\"}]}",
	      f);
	fclose(f);
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	int64_t now = (int64_t)time(NULL);
	json_t *reply;
	json_t *a = listbanned(t, &reply);
	if (json_array_size(a) != 2)
		fail_msg("listbanned has %zu entries, expected 2", json_array_size(a));
	for (size_t i = 0; i < 2; i++) {
		json_t *e = json_array_get(a, i);
		json_int_t created = field(e, "ban_created");
		json_int_t until = field(e, "banned_until");
		json_int_t duration = field(e, "ban_duration");
		if (created < 0 || created > now + 1)
			fail_msg("entry %zu: ban_created %lld not within [0, now %lld]", i,
			         (long long)created, (long long)now);
		if (duration < 0 || duration != until - created)
			fail_msg("entry %zu: ban_duration %lld, until %lld, created %lld", i,
			         (long long)duration, (long long)until, (long long)created);
	}
	json_decref(reply);
}

/*
 * A controlsocket= path that does not fit in sockaddr_un: libuv (before
 * 1.46) silently truncated it, so peerd listened at a different path than
 * the one peerctl and the shutdown unlink() use. It must be refused.
 */
static void test_ctl_socket_path_too_long(void **state)
{
	struct tf *t = *state;
	struct sockaddr_un sa;
	char longpath[sizeof(sa.sun_path) + 64];
	size_t dl = strlen(t->dir);
	memcpy(longpath, t->dir, dl);
	longpath[dl] = '/';
	memset(longpath + dl + 1, 'c', sizeof(longpath) - dl - 2);
	longpath[sizeof(longpath) - 1] = 0;
	xfree(t->conf.controlsocket);
	t->conf.controlsocket = xstrdup(longpath);
	assert_non_null(t->conf.controlsocket);
	int rc = ctl_start(t->d);
	if (rc != -ENAMETOOLONG)
		fail_msg("ctl_start with a %zu-byte path = %d, expected -ENAMETOOLONG (%d)",
		         strlen(longpath), rc, -ENAMETOOLONG);
	/* Nothing may have been created under a truncated name. */
	char trunc[sizeof(sa.sun_path)];
	memcpy(trunc, longpath, sizeof(trunc) - 1);
	trunc[sizeof(trunc) - 1] = 0;
	struct stat st;
	if (lstat(trunc, &st) == 0)
		fail_msg("a socket was created at the truncated path %s", trunc);
	ctl_close(t->d);
	uv_run(&t->loop, UV_RUN_NOWAIT);
}

/*
 * One getdata naming the genesis block thousands of times made peerd
 * queue every copy (50,000 x ~300 bytes = 15 MB per message, per peer),
 * far past maxsendbuffer: Core stops serving blocks while the peer is
 * send-paused. The send queue must stay within about one block frame of
 * the limit.
 */
static void test_getdata_repeated_block_bounded(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	d->net->max_sendq = 4096;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	enum { N = 20000 };
	struct proto_inv_vec *v = calloc(N, sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < N; i++) {
		v[i].type = PROTO_INV_WITNESS_BLOCK;
		v[i].hash = d->params->genesis_hash;
	}
	static struct proto_msg m;
	memset(&m, 0, sizeof(m));
	m.cmd = PROTO_CMD_GETDATA;
	m.inv.v = v;
	m.inv.n = m.inv.cap = N;
	inv_on_msg(p, &m);
	uint64_t frame = PROTO_HEADER_SIZE + d->params->genesis_len;
	if (p->sendq_bytes > d->net->max_sendq + frame)
		fail_msg("send queue %llu bytes after a getdata of %d genesis blocks; "
		         "maxsendbuffer %llu + one frame %llu",
		         (unsigned long long)p->sendq_bytes, N,
		         (unsigned long long)d->net->max_sendq, (unsigned long long)frame);
	assert_true(p->send_paused);
	/* Every copy is still served, as the peer drains its queue. */
	uint64_t want = (uint64_t)N * frame, got = 0;
	static uint8_t buf[1 << 16];
	for (int i = 0; i < 100000 && got < want; i++) {
		ssize_t n = recv(t->remote[p->id], buf, sizeof(buf), 0);
		if (n > 0)
			got += (uint64_t)n;
		uv_run(&t->loop, UV_RUN_NOWAIT);
		if (p->sendq_bytes > d->net->max_sendq + frame)
			fail_msg("send queue %llu bytes while draining",
			         (unsigned long long)p->sendq_bytes);
	}
	if (got != want)
		fail_msg("read %llu bytes of block frames, expected %llu (%u still owed)",
		         (unsigned long long)got, (unsigned long long)want, p->p2p->blocks_owed);
	assert_int_equal(p->p2p->blocks_owed, 0);
	assert_false(p->send_paused);
	assert_int_equal(d->stats.blocks_served, N);
	free(v);
}

/* A connected, non-blocking client of the fixture's control socket. */
static int ctl_connect(struct tf *t)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", t->dir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/*
 * Out of memory for a new control client: on_client returned without
 * accepting, and libuv then stops watching the listening socket until
 * something is accepted, so the control socket never served anyone again.
 */
static void test_ctl_accept_oom_keeps_listening(void **state)
{
	struct tf *t = *state;
	assert_int_equal(ctl_start(t->d), 0);
	int a = ctl_connect(t);
	base_alloc_fail_after(0);
	for (int i = 0; i < 20; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	base_alloc_fail_after(-1);
	int b = ctl_connect(t);
	static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"uptime\"}\n";
	assert_int_equal(send(b, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(req) - 1));
	char buf[512];
	size_t len = 0;
	for (int i = 0; i < 2000 && !memchr(buf, '\n', len); i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		ssize_t n = recv(b, buf + len, sizeof(buf) - 1 - len, 0);
		if (n > 0)
			len += (size_t)n;
		else
			usleep(500);
	}
	buf[len] = 0;
	if (!strstr(buf, "\"id\":5"))
		fail_msg("no reply on a second connection after an accept-time OOM: '%s'", buf);
	close(a);
	close(b);
	ctl_close(t->d);
	uv_run(&t->loop, UV_RUN_NOWAIT);
}

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	assert_true(rc == 0 || errno == EINPROGRESS);
	return fd;
}

/* With no inbound slot every connection is accepted and closed at once.
 * When even the handle for that cannot be allocated, the connection must
 * still be taken: libuv otherwise stops watching the listener for good. */
static void test_p2p_reject_oom_keeps_listening(void **state)
{
	struct tf *t = *state;
	uint16_t port = tf_listen_loopback(t);
	t->d->net->maxconnections = 0;
	assert_int_equal(net_start_listeners(t->d), 0);

	int a = tcp_connect(port);
	base_alloc_fail_after(0);
	for (int i = 0; i < 20 && !base_alloc_injected(); i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(500);
	}
	base_alloc_fail_after(-1);
	if (!tf_closed_by_peerd(t, a, 2000))
		fail_msg("the connection refused under OOM was never closed");
	int b = tcp_connect(port);
	if (!tf_closed_by_peerd(t, b, 2000))
		fail_msg("listener stalled: a later connection was never accepted");
	assert_true(t->d->stats.inbound_rejected_full >= 2);
	close(a);
	close(b);
	net_close_listeners(t->d);
	for (int i = 0; i < 10; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_setban_huge_bantime, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_loaded_ban_created_out_of_range, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_ctl_socket_path_too_long, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_getdata_repeated_block_bounded, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_ctl_accept_oom_keeps_listening, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_p2p_reject_oom_keeps_listening, tf_setup,
	                                    tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
