/*
 * tests/unit/test_notify_zmq.c: daemon/notify/zmq.c with a libzmq
 * subscriber on loopback: the three frames and each notifier's numbers,
 * notifiers sharing an address's socket, getzmqnotifications' list, and
 * the queue's bound (a dropped message leaves a gap in the numbers, never
 * a wait).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

#include "tests/unit/test_daemon_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <zmq.h>

/* A loopback port nobody listens on now. */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void conf_add(struct conf_list *l, const char *v)
{
	l->v[l->n] = xstrdup(v);
	assert_non_null(l->v[l->n]);
	l->n++;
}

struct sub {
	void *ctx, *sock;
};

static void sub_open(struct sub *s, const char *addr)
{
	s->ctx = zmq_ctx_new();
	s->sock = zmq_socket(s->ctx, ZMQ_SUB);
	int ms = 10000;
	assert_int_equal(zmq_setsockopt(s->sock, ZMQ_RCVTIMEO, &ms, sizeof(ms)), 0);
	assert_int_equal(zmq_setsockopt(s->sock, ZMQ_SUBSCRIBE, "", 0), 0);
	assert_int_equal(zmq_connect(s->sock, addr), 0);
}

static void sub_close(struct sub *s)
{
	zmq_close(s->sock);
	zmq_ctx_term(s->ctx);
}

/* One message: topic, body, number; fails on a missing or extra frame. */
static void sub_recv(struct sub *s, char topic[16], uint8_t *body, size_t *len, uint32_t *seq)
{
	int more;
	size_t sz = sizeof(more);
	int n = zmq_recv(s->sock, topic, 15, 0);
	if (n < 0)
		fail_msg("no message: %s", zmq_strerror(zmq_errno()));
	topic[n] = '\0';
	assert_int_equal(zmq_getsockopt(s->sock, ZMQ_RCVMORE, &more, &sz), 0);
	assert_true(more);
	n = zmq_recv(s->sock, body, 256, 0);
	assert_true(n >= 0);
	*len = (size_t)n;
	assert_int_equal(zmq_getsockopt(s->sock, ZMQ_RCVMORE, &more, &sz), 0);
	assert_true(more);
	uint8_t le[4];
	assert_int_equal(zmq_recv(s->sock, le, 4, 0), 4);
	assert_int_equal(zmq_getsockopt(s->sock, ZMQ_RCVMORE, &more, &sz), 0);
	assert_false(more);
	*seq =
	    (uint32_t)le[0] | (uint32_t)le[1] << 8 | (uint32_t)le[2] << 16 | (uint32_t)le[3] << 24;
}

/* Queue probes until the subscription is through (libzmq's slow joiner). */
static uint32_t join(struct tf *t, struct sub *s, struct notify_zmq_pub *p)
{
	for (int i = 0; i < 200; i++) {
		uint8_t b = 0xee;
		notify_zmq_queue(t->d->notify, p, "hashtx", &b, 1);
		zmq_pollitem_t it = {.socket = s->sock, .events = ZMQ_POLLIN};
		if (zmq_poll(&it, 1, 50) > 0) {
			char topic[16];
			uint8_t body[256];
			size_t len;
			uint32_t seq;
			sub_recv(s, topic, body, &len, &seq);
			/* Drain the other probes of the race, if any. */
			while (zmq_poll(&it, 1, 200) > 0)
				sub_recv(s, topic, body, &len, &seq);
			return seq + 1;
		}
	}
	fail_msg("the subscriber never joined");
	return 0;
}

static void test_publish_numbers_and_list(void **state)
{
	(void)state;
	struct tf *t = tf_new();
	char a[64], b[64];
	snprintf(a, sizeof(a), "tcp://127.0.0.1:%d", free_port());
	snprintf(b, sizeof(b), "tcp://127.0.0.1:%d", free_port());
	conf_add(&t->conf.zmqpub[CONF_ZMQ_SEQUENCE], a);
	conf_add(&t->conf.zmqpub[CONF_ZMQ_HASHTX], a);
	conf_add(&t->conf.zmqpub[CONF_ZMQ_HASHTX], b);
	t->conf.zmqhwm[CONF_ZMQ_HASHTX] = 12;
	assert_int_equal(notify_zmq_start(t->d), 0);
	struct notify_state *s = t->d->notify;
	/* Core's order (by type name, then as given); one socket per address. */
	assert_int_equal(s->n_pubs, 3);
	assert_int_equal(s->n_socks, 2);
	assert_int_equal(s->pubs[0].topic, CONF_ZMQ_HASHTX);
	assert_int_equal(s->pubs[2].topic, CONF_ZMQ_SEQUENCE);
	assert_int_equal(s->pubs[0].sock, s->pubs[2].sock);
	json_t *l = notify_zmq_list(t->d);
	char *text = json_dumps(l, JSON_COMPACT);
	char want[512];
	snprintf(want, sizeof(want),
	         "[{\"type\":\"pubhashtx\",\"address\":\"%s\",\"hwm\":12},"
	         "{\"type\":\"pubhashtx\",\"address\":\"%s\",\"hwm\":12},"
	         "{\"type\":\"pubsequence\",\"address\":\"%s\",\"hwm\":1000}]",
	         a, b, a);
	assert_string_equal(text, want);
	free(text);
	json_decref(l);

	struct sub sub;
	sub_open(&sub, a);
	uint32_t next = join(t, &sub, &s->pubs[0]);
	/* Interleaved topics on one socket, each with its own numbers (fewer
	 * than the socket's high water mark, 12, its first notifier's). */
	for (uint8_t i = 0; i < 5; i++) {
		notify_zmq_queue(s, &s->pubs[0], "hashtx", &i, 1);
		notify_zmq_queue(s, &s->pubs[2], "sequence", &i, 1);
	}
	for (uint8_t i = 0; i < 5; i++) {
		char topic[16];
		uint8_t body[256];
		size_t len;
		uint32_t seq;
		sub_recv(&sub, topic, body, &len, &seq);
		assert_string_equal(topic, "hashtx");
		assert_int_equal(len, 1);
		assert_int_equal(body[0], i);
		assert_int_equal(seq, next + i);
		sub_recv(&sub, topic, body, &len, &seq);
		assert_string_equal(topic, "sequence");
		assert_int_equal(body[0], i);
		assert_int_equal(seq, i);
	}
	sub_close(&sub);
	tf_free(t);
}

static void test_queue_bound_drops_with_a_gap(void **state)
{
	(void)state;
	struct tf *t = tf_new();
	char a[64];
	snprintf(a, sizeof(a), "tcp://127.0.0.1:%d", free_port());
	conf_add(&t->conf.zmqpub[CONF_ZMQ_RAWTX], a);
	assert_int_equal(notify_zmq_start(t->d), 0);
	struct notify_state *s = t->d->notify;
	struct sub sub;
	sub_open(&sub, a);
	uint32_t next = join(t, &sub, &s->pubs[0]);
	/* Over the byte bound: dropped at once (counted), its number skipped. */
	s->max_bytes = 100;
	uint8_t big[200] = {0};
	notify_zmq_queue(s, &s->pubs[0], "rawtx", big, sizeof(big));
	uint8_t small = 7;
	notify_zmq_queue(s, &s->pubs[0], "rawtx", &small, 1);
	char topic[16];
	uint8_t body[256];
	size_t len;
	uint32_t seq;
	sub_recv(&sub, topic, body, &len, &seq);
	assert_int_equal(len, 1);
	assert_int_equal(body[0], 7);
	assert_int_equal(seq, next + 1);
	uv_mutex_lock(&s->mu);
	assert_int_equal(s->dropped, 1);
	uv_mutex_unlock(&s->mu);
	sub_close(&sub);
	tf_free(t);
}

/* No -zmqpub*: nothing opened, an empty list, stop is harmless. */
static void test_off(void **state)
{
	(void)state;
	struct tf *t = tf_new();
	assert_int_equal(notify_zmq_start(t->d), 0);
	assert_null(t->d->notify->zctx);
	json_t *l = notify_zmq_list(t->d);
	assert_int_equal(json_array_size(l), 0);
	json_decref(l);
	tf_free(t);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_publish_numbers_and_list),
	    cmocka_unit_test(test_queue_bound_drops_with_a_gap),
	    cmocka_unit_test(test_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
