/*
 * tests/unit/test_daemon_recvbudget.c: maxrecvmemory (daemon/net/recvbudget.c)
 * through the real receive path: grants, waiting, the order waiters are
 * served in, eviction of stalled holders, small messages that never wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_daemon_fixture.h"

/* A message of this many payload bytes needs a large (budgeted) buffer. */
#define BIG   100000u
#define TOTAL (PROTO_HEADER_SIZE + BIG)

/* A frame of an unknown command with `len` payload bytes. */
static void frame_unknown(struct tf *t, struct proto_writer *w, size_t len)
{
	uint8_t *b = calloc(1, len ? len : 1);
	assert_non_null(b);
	tf_frame(t, w, "peerdtest", b, len);
	free(b);
}

static uint64_t other_count(struct tf *t)
{
	return t->d->stats.msg[PROTO_CMD_UNKNOWN].recv_count;
}

/* Header plus 100 payload bytes of a `len`-byte message: enough to ask for its buffer. */
static void start_message(struct tf *t, struct peer *p, struct proto_writer *w, size_t len)
{
	w->len = 0;
	frame_unknown(t, w, len);
	assert_int_equal(tf_feed(p, w->buf, PROTO_HEADER_SIZE + 100, SIZE_MAX),
	                 PROTO_HEADER_SIZE + 100);
}

static void finish_message(struct peer *p, struct proto_writer *w)
{
	size_t off = PROTO_HEADER_SIZE + 100;
	assert_int_equal(tf_feed(p, w->buf + off, w->len - off, SIZE_MAX), w->len - off);
}

/* Two fit, the third waits (not reading); the first finishing serves it. */
static void test_third_waits_then_granted(void **state)
{
	struct tf *t = *state;
	struct recvbudget *b = t->d->rxb;
	b->limit = 2 * TOTAL + TOTAL / 2;
	struct peer *p[3];
	struct proto_writer w[3];
	for (int i = 0; i < 3; i++) {
		p[i] = tf_peer(t, true, TF_ADDR);
		proto_writer_init(&w[i]);
		start_message(t, p[i], &w[i], BIG);
	}
	assert_int_equal(b->held, 2 * TOTAL);
	assert_false(p[0]->rx_wait);
	assert_false(p[1]->rx_wait);
	assert_true(p[2]->rx_wait);
	assert_false(p[2]->reading);
	assert_true(p[2]->rx.pooled); /* its header waits in the small buffer */
	assert_int_equal(b->waiting, 1);
	assert_int_equal(b->pauses, 1);

	finish_message(p[0], &w[0]);
	assert_int_equal(other_count(t), 1);
	/* p[0]'s grant went back and went to p[2] at once. */
	assert_false(p[2]->rx_wait);
	assert_true(p[2]->reading);
	assert_false(p[2]->rx.pooled);
	assert_int_equal(p[2]->rx.cap, TOTAL);
	assert_int_equal(b->held, 2 * TOTAL);
	assert_int_equal(b->waiting, 0);
	finish_message(p[1], &w[1]);
	finish_message(p[2], &w[2]);
	assert_int_equal(other_count(t), 3);
	assert_int_equal(b->held, 0);
	assert_true(b->held_max <= b->limit);
	for (int i = 0; i < 3; i++)
		proto_writer_release(&w[i]);
}

/* Waiters are served smallest message first, whatever their order. */
static void test_smallest_waiter_first(void **state)
{
	struct tf *t = *state;
	struct recvbudget *b = t->d->rxb;
	b->limit = TOTAL + 1000;
	struct proto_writer w[3];
	for (int i = 0; i < 3; i++)
		proto_writer_init(&w[i]);
	struct peer *holder = tf_peer(t, true, TF_ADDR);
	start_message(t, holder, &w[0], BIG);
	struct peer *large = tf_peer(t, true, TF_ADDR);
	start_message(t, large, &w[1], BIG);
	struct peer *small = tf_peer(t, true, TF_ADDR);
	start_message(t, small, &w[2], BIG / 2);
	assert_true(large->rx_wait && small->rx_wait);
	finish_message(holder, &w[0]);
	/* Room for either: the smaller, though it came later. */
	assert_false(small->rx_wait);
	assert_true(large->rx_wait);
	finish_message(small, &w[2]);
	assert_false(large->rx_wait);
	finish_message(large, &w[1]);
	assert_int_equal(other_count(t), 3);
	assert_int_equal(b->held, 0);
	for (int i = 0; i < 3; i++)
		proto_writer_release(&w[i]);
}

/* A holder silent for RECV_STALL_MS while someone waits is disconnected. */
static void test_stalled_holder_evicted(void **state)
{
	struct tf *t = *state;
	struct recvbudget *b = t->d->rxb;
	b->limit = TOTAL;
	struct proto_writer w[2];
	proto_writer_init(&w[0]);
	proto_writer_init(&w[1]);
	struct peer *holder = tf_peer(t, true, TF_ADDR);
	start_message(t, holder, &w[0], BIG);
	struct peer *waiter = tf_peer(t, true, TF_ADDR);
	start_message(t, waiter, &w[1], BIG);
	assert_true(waiter->rx_wait);
	/* Not stalled yet: nothing happens. */
	recvbudget_tick(t->d, daemon_now_ms(t->d));
	assert_int_equal(holder->state, PEER_ACTIVE);
	assert_true(waiter->rx_wait);
	/* Its last byte (and its grant) RECV_STALL_MS ago. */
	holder->lastrecv_ms -= RECV_STALL_MS;
	holder->rx.grant_ms -= RECV_STALL_MS;
	recvbudget_tick(t->d, daemon_now_ms(t->d));
	assert_int_equal(holder->state, PEER_CLOSING);
	assert_int_equal(b->evictions, 1);
	assert_false(waiter->rx_wait);
	finish_message(waiter, &w[1]);
	assert_int_equal(other_count(t), 1);
	assert_int_equal(b->held, 0);
	proto_writer_release(&w[0]);
	proto_writer_release(&w[1]);
}

/* With the budget taken, small messages still flow. */
static void test_small_messages_never_wait(void **state)
{
	struct tf *t = *state;
	struct recvbudget *b = t->d->rxb;
	b->limit = TOTAL;
	struct proto_writer w, s;
	proto_writer_init(&w);
	proto_writer_init(&s);
	struct peer *holder = tf_peer(t, true, TF_ADDR);
	start_message(t, holder, &w, BIG);
	struct peer *small = tf_peer(t, true, TF_ADDR);
	for (int i = 0; i < 50; i++)
		frame_unknown(t, &s, PROTO_SCRIPT_BUF_SIZE - PROTO_HEADER_SIZE);
	assert_int_equal(tf_feed(small, s.buf, s.len, 97), s.len);
	assert_int_equal(other_count(t), 50);
	assert_false(small->rx_wait);
	assert_int_equal(b->pauses, 0);
	finish_message(holder, &w);
	assert_int_equal(b->held, 0);
	proto_writer_release(&w);
	proto_writer_release(&s);
}

/*
 * Largest messages leave headroom: with 16 MiB, 4 MB messages stop at
 * three held (a fourth would leave less than a quarter free), while a
 * 1 MB one still goes in at once.
 */
static void test_headroom_for_smaller_messages(void **state)
{
	struct tf *t = *state;
	struct recvbudget *b = t->d->rxb;
	b->limit = 16u << 20;
	const size_t huge = PROTO_MAX_MESSAGE - 1, block = 1000000;
	struct proto_writer w[5];
	struct peer *p[5];
	for (int i = 0; i < 5; i++) {
		proto_writer_init(&w[i]);
		p[i] = tf_peer(t, true, TF_ADDR);
	}
	for (int i = 0; i < 4; i++)
		start_message(t, p[i], &w[i], huge);
	assert_false(p[0]->rx_wait || p[1]->rx_wait || p[2]->rx_wait);
	assert_true(p[3]->rx_wait);
	assert_int_equal(b->held, 3 * (PROTO_HEADER_SIZE + huge));
	start_message(t, p[4], &w[4], block);
	assert_false(p[4]->rx_wait);
	finish_message(p[4], &w[4]);
	assert_int_equal(other_count(t), 1);
	assert_true(p[3]->rx_wait);
	for (int i = 0; i < 4; i++)
		finish_message(p[i], &w[i]);
	assert_int_equal(other_count(t), 5);
	assert_int_equal(b->held, 0);
	assert_true(b->held_max <= b->limit);
	for (int i = 0; i < 5; i++)
		proto_writer_release(&w[i]);
}

/* The default scales with maxconnections, with a floor. */
static void test_default_limit(void **state)
{
	struct tf *t = *state;
	struct peerd_conf c = t->conf;
	c.maxrecvmemory_mib = 0;
	c.maxconnections = 125;
	recvbudget_init(t->d, &c);
	assert_int_equal(t->d->rxb->limit, RECV_BUDGET_MIN);
	c.maxconnections = 2000;
	recvbudget_init(t->d, &c);
	assert_int_equal(t->d->rxb->limit, 2000ull * RECV_BUDGET_PER_PEER);
	c.maxrecvmemory_mib = 7;
	recvbudget_init(t->d, &c);
	assert_int_equal(t->d->rxb->limit, 7ull << 20);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_third_waits_then_granted, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_smallest_waiter_first, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_stalled_holder_evicted, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_small_messages_never_wait, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_headroom_for_smaller_messages, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_default_limit, tf_setup, tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
