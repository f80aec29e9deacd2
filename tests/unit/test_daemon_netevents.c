/*
 * tests/unit/test_daemon_netevents.c: the connection events (struct
 * net_events in daemon/net/net.h, filled by daemon/netevents.c).
 *
 * daemon_init registers the wiring's table with every callback set, and
 * net/ tells the rooms above it about a peer only through the table it
 * finds in struct daemon: a recording table put in its place sees opened,
 * tick, drained, disconnected and closed in a peer's order, message once
 * for each whole checksum-valid frame (never for a framing error), and its
 * busy answer holds the peer's messages back as serve_pending does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_daemon_fixture.h"

/* What the recording table saw: one letter an event, in order. */
static char seen[32];
static size_t n_seen;
static bool busy_answer;

static void note(char c)
{
	if (n_seen + 1 < sizeof(seen))
		seen[n_seen++] = c;
	seen[n_seen] = '\0';
}

/* Each records, then does what the wiring does, so the peer behaves as in peerd. */
static int rec_created(struct peer *p)
{
	note('n');
	return daemon_net_events.created(p);
}
static void rec_destroyed(struct peer *p)
{
	note('f');
	daemon_net_events.destroyed(p);
}
static void rec_opened(struct peer *p)
{
	note('o');
	daemon_net_events.opened(p);
}
static void rec_disconnected(struct peer *p)
{
	note('x');
	daemon_net_events.disconnected(p);
}
static void rec_closed(struct peer *p)
{
	note('c');
	daemon_net_events.closed(p);
}
static void rec_drained(struct peer *p)
{
	note('d');
	daemon_net_events.drained(p);
}
static bool rec_busy(const struct peer *p)
{
	return busy_answer || daemon_net_events.busy(p);
}
static void rec_tick(struct peer *p, uint64_t now_ms)
{
	note('t');
	daemon_net_events.tick(p, now_ms);
}
static void rec_message(struct peer *p, const struct proto_frame_header *h, const uint8_t *payload)
{
	note('m');
	daemon_net_events.message(p, h, payload);
}

static const struct net_events recording = {
    .created = rec_created,
    .destroyed = rec_destroyed,
    .opened = rec_opened,
    .disconnected = rec_disconnected,
    .closed = rec_closed,
    .drained = rec_drained,
    .busy = rec_busy,
    .tick = rec_tick,
    .message = rec_message,
};

static int setup(void **state)
{
	n_seen = 0;
	seen[0] = '\0';
	busy_answer = false;
	return tf_setup(state);
}

/* daemon_init registers the wiring's table, and the wiring sets every event. */
static void test_daemon_init_registers_it(void **state)
{
	struct tf *t = *state;
	const struct net_events *ev = t->d->net_events;
	assert_ptr_equal(ev, &daemon_net_events);
	assert_non_null(ev->created);
	assert_non_null(ev->destroyed);
	assert_non_null(ev->opened);
	assert_non_null(ev->disconnected);
	assert_non_null(ev->closed);
	assert_non_null(ev->drained);
	assert_non_null(ev->busy);
	assert_non_null(ev->tick);
	assert_non_null(ev->message);
}

/* A peer's life as net/ tells it: through the registered table, in order. */
static void test_events_in_a_peers_order(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	d->net_events = &recording;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	/* created gave each room its part of the peer, set up. */
	assert_non_null(p->p2p);
	assert_non_null(p->txreq);
	assert_non_null(p->sync);
	assert_int_equal(p->sync->best_height, -1);
	peer_start(p);
	assert_string_equal(seen, "no");
	assert_int_equal(d->n_inbound, 1);

	peer_tick(p, daemon_now_ms(d));
	assert_string_equal(seen, "not");

	/* Paused over maxsendbuffer, then the queue drained: drained runs. */
	p->send_paused = true;
	p->sendq_bytes = 0;
	peer_flow_update(p);
	assert_false(p->send_paused);
	assert_string_equal(seen, "notd");

	peer_disconnect(p, "test");
	peer_disconnect(p, "again");
	assert_string_equal(seen, "notdx");
	uv_run(&t->loop, UV_RUN_DEFAULT);
	assert_int_equal(d->n_peers, 0);
	assert_string_equal(seen, "notdxcf");
}

/* A dial that never connected is created, disconnected, closed and
 * destroyed, never opened. */
static void test_failed_dial_is_not_opened(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	d->net_events = &recording;
	struct peer *p = peer_new(d, false);
	assert_non_null(p);
	assert_int_equal(p->state, PEER_CONNECTING);
	peer_disconnect(p, "connect failed");
	uv_run(&t->loop, UV_RUN_DEFAULT);
	assert_int_equal(d->n_peers, 0);
	assert_string_equal(seen, "nxcf");
}

/* While busy says replies are owed, the peer's next message waits. */
static void test_busy_holds_messages(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	d->net_events = &recording;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	uint8_t nonce[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	tf_frame(t, &w, "ping", nonce, sizeof(nonce));

	busy_answer = true;
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	assert_int_equal(d->stats.msg[PROTO_CMD_PING].recv_count, 0);
	assert_string_equal(seen, "n"); /* created only */

	busy_answer = false;
	peer_resume(p);
	assert_int_equal(d->stats.msg[PROTO_CMD_PING].recv_count, 1);
	assert_string_equal(seen, "nm");
	proto_writer_release(&w);
}

/*
 * Each whole frame whose checksum holds is one message event, after net/
 * counted it, whatever its command (an unknown one too: what it means is
 * p2p/'s). A bad checksum and an invalid command are framing errors: net/
 * counts and drops them without the event.
 */
static void test_message_event_per_valid_frame(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	d->net_events = &recording;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	uint8_t nonce[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	tf_frame(t, &w, "ping", nonce, sizeof(nonce));
	size_t bad_sum = w.len;
	tf_frame(t, &w, "ping", nonce, sizeof(nonce));
	w.buf[bad_sum + PROTO_HEADER_SIZE] ^= 0xff; /* payload no longer matches the checksum */
	size_t bad_cmd = w.len;
	tf_frame(t, &w, "sendheaders", NULL, 0);
	w.buf[bad_cmd + 6] = 0x01;               /* "se\x01dheaders": not printable */
	tf_frame(t, &w, "sendtxrcncl", NULL, 0); /* well-formed, unknown to peerd (Erlay) */
	tf_frame(t, &w, "sendheaders", NULL, 0);

	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_string_equal(seen, "nmmm"); /* created, then three messages */
	/* All five were counted by net/, the two dropped ones as errors. */
	assert_int_equal(d->stats.msg[PROTO_CMD_PING].recv_count, 2);
	assert_int_equal(d->stats.msg[PROTO_CMD_UNKNOWN].recv_count, 2);
	assert_int_equal(d->stats.msg[PROTO_CMD_SENDHEADERS].recv_count, 1);
	assert_int_equal(tf_err_count(t, PROTO_ECHECKSUM), 1);
	assert_int_equal(tf_err_count(t, PROTO_ECOMMAND), 1);
	assert_int_equal(tf_err_count(t, PROTO_EUNKNOWN), 1);
	assert_true(p->sendheaders);
	proto_writer_release(&w);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_daemon_init_registers_it, setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_events_in_a_peers_order, setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_failed_dial_is_not_opened, setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_busy_holds_messages, setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_message_event_per_valid_frame, setup, tf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
