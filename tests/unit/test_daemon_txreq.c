/*
 * tests/unit/test_daemon_txreq.c: the transaction request tracker and
 * what happens to a received transaction (daemon/p2p/inv.c, txrelay/request.c, txrelay/accept.c):
 * one announcer asked at a time, fallback on timeout (txrequest_tick takes the clock), on notfound
 * and when a peer goes, the per-peer and total limits, and received transactions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* Hand `cmd` (inv or notfound) with n entries tf_hash(tag, first + i) of `type` to p. */
static void send_invs(struct peer *p, enum proto_cmd cmd, uint32_t type, uint8_t tag,
                      uint32_t first, uint32_t n)
{
	struct proto_inv_vec *v = calloc(n ? n : 1, sizeof(*v));
	assert_non_null(v);
	for (uint32_t i = 0; i < n; i++) {
		v[i].type = type;
		v[i].hash = tf_hash(tag, first + i);
	}
	static struct proto_msg m; /* large; handlers only read cmd and inv */
	memset(&m, 0, sizeof(m));
	m.cmd = cmd;
	m.inv.v = v;
	m.inv.n = m.inv.cap = n;
	inv_on_msg(p, &m);
	free(v);
}

static void announce(struct peer *p, uint8_t tag, uint32_t first, uint32_t n)
{
	send_invs(p, PROTO_CMD_INV, PROTO_INV_TX, tag, first, n);
}

static void announce_hash(struct peer *p, uint32_t type, const struct proto_hash *h)
{
	struct proto_inv_vec v = {.type = type, .hash = *h};
	static struct proto_msg m;
	memset(&m, 0, sizeof(m));
	m.cmd = PROTO_CMD_INV;
	m.inv.v = &v;
	m.inv.n = m.inv.cap = 1;
	inv_on_msg(p, &m);
}

/* The getdata entries sent to p since the last look; checks their type. */
static uint32_t requested(struct tf *t, struct peer *p, struct proto_hash *first)
{
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	uint32_t n = s.n_getdata;
	for (uint32_t i = 0; i < n; i++) {
		if (s.getdata[i].type != PROTO_INV_WITNESS_TX && s.getdata[i].type != PROTO_INV_WTX)
			fail_msg("getdata entry %u to peer %llu has type 0x%x", i,
			         (unsigned long long)p->id, s.getdata[i].type);
	}
	if (n && first)
		*first = s.getdata[0].hash;
	tf_sent_free(&s);
	return n;
}

static void assert_requested(struct tf *t, struct peer *p, uint32_t want, const char *when)
{
	uint32_t got = requested(t, p, NULL);
	if (got != want)
		fail_msg("%s: peer %llu was asked for %u transactions, expected %u", when,
		         (unsigned long long)p->id, got, want);
}

/* Put h in the recent rejects, as a rejected transaction's result does. */
static void reject(struct tf *t, const struct proto_hash *h)
{
	(void)hset_insert(&t->d->txr->rejects, daemon_fingerprint(t->d, h->b, sizeof(h->b)));
}

/* ---- one announcer at a time ---------------------------------------------- */

static void test_one_announcer_asked(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, "203.0.113.1:1");
	struct peer *b = tf_peer(t, true, "203.0.113.2:1");
	struct peer *c = tf_peer(t, true, "203.0.113.3:1");
	announce(a, 0x11, 0, 1);
	announce(b, 0x11, 0, 1);
	announce(c, 0x11, 0, 1);
	struct proto_hash got, want = tf_hash(0x11, 0);
	assert_int_equal(requested(t, a, &got), 1);
	tu_assert_bytes_equal(got.b, 32, want.b, 32);
	assert_requested(t, b, 0, "after three announcements");
	assert_requested(t, c, 0, "after three announcements");
	assert_int_equal(txrequest_tracked(t->d), 1);
	assert_int_equal(a->txreq->tx_inflight, 1);
	assert_int_equal(a->txreq->tx_announced, 1);
	assert_int_equal(b->txreq->tx_announced, 1);
	assert_int_equal(t->d->stats.tx_requested, 1);
	/* A repeat from the same peer is known inventory: nothing new. */
	announce(a, 0x11, 0, 1);
	assert_int_equal(t->d->stats.inv_known_dup, 1);
	assert_requested(t, a, 0, "after a repeat");
	/* Before the timeout a tick changes nothing. */
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d) + TXREQUEST_GETDATA_TX_INTERVAL_MS - 1);
	assert_requested(t, a, 0, "tick before the timeout");
	assert_requested(t, b, 0, "tick before the timeout");
	assert_int_equal(t->d->stats.tx_request_timeouts, 0);
}

static void test_timeout_falls_back(void **state)
{
	struct tf *t = *state;
	struct peer *p[3];
	for (int i = 0; i < 3; i++)
		p[i] = tf_peer(t, true, TF_ADDR);
	uint64_t now = (uint64_t)daemon_time_ms(t->d);
	for (int i = 0; i < 3; i++)
		announce(p[i], 0x22, 0, 1);
	assert_requested(t, p[0], 1, "first request");
	/* Each timeout asks one announcer not asked before (in no promised order). */
	bool asked[3] = {true, false, false};
	int current = 0;
	for (int round = 1; round <= 2; round++) {
		now += TXREQUEST_GETDATA_TX_INTERVAL_MS;
		txrequest_tick(t->d, now);
		int next = -1;
		for (int j = 0; j < 3; j++) {
			uint32_t n = requested(t, p[j], NULL);
			if (!n)
				continue;
			if (n != 1 || next >= 0 || asked[j])
				fail_msg("timeout %d: peer %d asked for %u (asked before: %d, also "
				         "asked: %d)",
				         round, j, n, asked[j], next);
			next = j;
		}
		if (next < 0)
			fail_msg("timeout %d: nobody asked", round);
		asked[next] = true;
		assert_int_equal(t->d->stats.tx_request_timeouts, (uint64_t)round);
		assert_int_equal(p[current]->txreq->tx_inflight, 0);
		assert_int_equal(p[next]->txreq->tx_inflight, 1);
		/* The peer that timed out is no longer an announcer. */
		assert_int_equal(p[current]->txreq->tx_announced, 0);
		current = next;
	}
	/* The last announcer times out too: the announcement is forgotten. */
	now += TXREQUEST_GETDATA_TX_INTERVAL_MS;
	txrequest_tick(t->d, now);
	assert_int_equal(txrequest_tracked(t->d), 0);
	for (int j = 0; j < 3; j++) {
		assert_requested(t, p[j], 0, "when every announcer timed out");
		assert_int_equal(p[j]->txreq->tx_inflight, 0);
		assert_int_equal(p[j]->txreq->tx_announced, 0);
	}
	assert_int_equal(t->d->stats.tx_requested, 3);
}

static void test_notfound_falls_back(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	struct peer *c = tf_peer(t, true, TF_ADDR);
	uint64_t now = (uint64_t)daemon_time_ms(t->d);
	announce(a, 0x33, 0, 1);
	announce(b, 0x33, 0, 1);
	assert_requested(t, a, 1, "first request");
	/* notfound from a peer that was not asked means nothing. */
	send_invs(b, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x33, 0, 1);
	send_invs(c, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x33, 0, 1);
	assert_int_equal(a->txreq->tx_inflight, 1);
	txrequest_tick(t->d, now);
	assert_requested(t, b, 0, "after an unasked notfound");
	/* From the asked peer: the next tick, at the same time, asks b. */
	send_invs(a, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x33, 0, 1);
	assert_int_equal(a->txreq->tx_inflight, 0);
	assert_int_equal(a->txreq->tx_announced, 0);
	txrequest_tick(t->d, now);
	assert_requested(t, b, 1, "after notfound");
	assert_requested(t, a, 0, "after its own notfound");
	assert_int_equal(t->d->stats.tx_request_timeouts, 0);
	assert_int_equal(t->d->stats.notfound_recv, 3);
	/* The last announcer's notfound forgets the announcement at once. */
	send_invs(b, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x33, 0, 1);
	assert_int_equal(txrequest_tracked(t->d), 0);
	assert_int_equal(b->txreq->tx_inflight, 0);
	assert_int_equal(b->txreq->tx_announced, 0);
}

static void test_announcer_gone(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	announce(a, 0x44, 0, 1);
	announce(b, 0x44, 0, 1);
	assert_requested(t, a, 1, "first request");
	uint64_t a_id = a->id;
	peer_disconnect(a, "test");
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d));
	assert_requested(t, b, 1, "after the asked peer left");
	assert_int_equal(t->d->stats.tx_request_timeouts, 0);
	/* a is freed for real (close callback), then b goes too: forgotten. */
	uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_null(peer_by_id(t->d, a_id));
	peer_disconnect(b, "test");
	uv_run(&t->loop, UV_RUN_NOWAIT);
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d));
	assert_int_equal(txrequest_tracked(t->d), 0);
}

/* ---- limits ----------------------------------------------------------------- */

static void test_inflight_limit(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	const uint32_t n = TXREQUEST_MAX_PEER_INFLIGHT + 50;
	announce(a, 0x55, 0, n);
	assert_requested(t, a, TXREQUEST_MAX_PEER_INFLIGHT, "after a large inv");
	assert_int_equal(a->txreq->tx_inflight, TXREQUEST_MAX_PEER_INFLIGHT);
	assert_int_equal(a->txreq->tx_announced, n);
	assert_int_equal(txrequest_tracked(t->d), n);
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d));
	assert_requested(t, a, 0, "tick with a full request window");
	/* Another announcer takes the ones a cannot be asked for. */
	announce(b, 0x55, 0, n);
	assert_requested(t, b, n - TXREQUEST_MAX_PEER_INFLIGHT, "second announcer");
	/* a answers one with notfound: one slot frees, and the tick
	 * asks b for it (a is no source any more), not a for another. */
	send_invs(a, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x55, 0, 1);
	assert_int_equal(a->txreq->tx_inflight, TXREQUEST_MAX_PEER_INFLIGHT - 1);
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d));
	assert_requested(t, a, 0, "tick after notfound");
	assert_requested(t, b, 1, "tick after notfound");
	assert_true(b->txreq->tx_inflight <= TXREQUEST_MAX_PEER_INFLIGHT);
}

static void test_peer_announcement_limit(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	announce(a, 0x66, 0, TXREQUEST_MAX_PEER_ANNOUNCEMENTS + 1);
	assert_int_equal(a->txreq->tx_announced, TXREQUEST_MAX_PEER_ANNOUNCEMENTS);
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_PEER_ANNOUNCEMENTS);
	assert_int_equal(t->d->stats.inv_ignored_full, 1);
	announce(a, 0x67, 0, 10);
	assert_int_equal(t->d->stats.inv_ignored_full, 11);
	/* Another peer is not affected. */
	announce(b, 0x67, 0, 10);
	assert_int_equal(b->txreq->tx_announced, 10);
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_PEER_ANNOUNCEMENTS + 10);
	assert_requested(t, b, 10, "other peer");
}

static void test_total_limit(void **state)
{
	struct tf *t = *state;
	const uint32_t per = TXREQUEST_MAX_PEER_ANNOUNCEMENTS;
	const uint32_t peers = TXREQUEST_MAX_TRACKED / per;
	assert_true(peers + 1 <= TF_MAX_PEERS);
	for (uint32_t i = 0; i < peers; i++) {
		struct peer *p = tf_peer(t, true, TF_ADDR);
		announce(p, (uint8_t)(0x80 + i), 0, per);
		assert_int_equal(p->txreq->tx_announced, per);
	}
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_TRACKED);
	assert_int_equal(t->d->stats.inv_ignored_full, 0);
	struct peer *late = tf_peer(t, true, TF_ADDR);
	announce(late, 0x7f, 0, 3);
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_TRACKED);
	assert_int_equal(t->d->stats.inv_ignored_full, 3);
	assert_int_equal(late->txreq->tx_announced, 0);
	/* An announcement already tracked still gains an announcer. */
	announce(late, 0x80, 7, 1);
	assert_int_equal(late->txreq->tx_announced, 1);
	assert_int_equal(t->d->stats.inv_ignored_full, 3);
	/* Once one is forgotten, there is room again. */
	struct peer *first = t->d->peers[0];
	send_invs(first, PROTO_CMD_NOTFOUND, PROTO_INV_WITNESS_TX, 0x80, 0, 1);
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_TRACKED - 1);
	announce(late, 0x7f, 100, 1);
	assert_int_equal(txrequest_tracked(t->d), TXREQUEST_MAX_TRACKED);
	assert_int_equal(late->txreq->tx_announced, 2);
}

/* ---- transactions ---------------------------------------------------------- */

/* A minimal transaction spending output 0 of tf_hash(tag, 0); with a witness if asked. */
static void tx_bytes(struct proto_writer *w, uint8_t tag, bool witness)
{
	struct proto_hash prev = tf_hash(tag, 0);
	proto_write_u32le(w, 2);
	if (witness) {
		proto_write_u8(w, 0);
		proto_write_u8(w, 1);
	}
	proto_write_compact(w, 1);
	proto_write_hash(w, &prev);
	proto_write_u32le(w, 0);
	proto_write_compact(w, 0);
	proto_write_u32le(w, 0xffffffffu);
	proto_write_compact(w, 1);
	proto_write_u64le(w, 1000);
	proto_write_compact(w, 1);
	proto_write_u8(w, 0x51);
	if (witness) {
		proto_write_compact(w, 1);
		proto_write_compact(w, 1);
		proto_write_u8(w, 0x01);
	}
	proto_write_u32le(w, 0);
	assert_int_equal(w->err, 0);
}

struct test_tx {
	struct proto_writer frame;
	struct proto_hash txid, wtxid;
};

static void make_tx(struct tf *t, struct test_tx *tx, uint8_t tag, bool witness)
{
	struct proto_writer w;
	proto_writer_init(&w);
	tx_bytes(&w, tag, witness);
	struct proto_tx ptx;
	proto_tx_init(&ptx);
	assert_int_equal(proto_tx_decode_buf(w.buf, w.len, &ptx, NULL), 0);
	proto_tx_compute_ids(&ptx);
	tx->txid = ptx.txid;
	tx->wtxid = ptx.wtxid;
	proto_tx_release(&ptx);
	proto_writer_init(&tx->frame);
	tf_frame(t, &tx->frame, "tx", w.buf, w.len);
	proto_writer_release(&w);
	assert_int_equal(proto_hash_eq(&tx->txid, &tx->wtxid), !witness);
}

static void test_received_tx_not_requested_again(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	struct test_tx tx;
	make_tx(t, &tx, 0x91, false);
	announce_hash(a, PROTO_INV_TX, &tx.txid);
	announce_hash(b, PROTO_INV_TX, &tx.txid);
	assert_requested(t, a, 1, "announced");
	tf_feed(a, tx.frame.buf, tx.frame.len, SIZE_MAX);
	assert_int_equal(a->state, PEER_ACTIVE);
	assert_int_equal(t->d->stats.tx_received, 1);
	assert_int_equal(t->d->stats.tx_unsolicited, 0);
	assert_int_equal(txrequest_tracked(t->d), 0);
	assert_int_equal(a->txreq->tx_inflight, 0);
	assert_int_equal(a->txreq->tx_announced, 0);
	assert_int_equal(b->txreq->tx_announced, 0);
	/* No fallback to b, now or after the timeout. */
	txrequest_tick(t->d, (uint64_t)daemon_time_ms(t->d) + TXREQUEST_GETDATA_TX_INTERVAL_MS);
	assert_requested(t, b, 0, "after the tx arrived");
	/* Once rejected, a new announcer of it is not asked either (Core's
	 * AlreadyHaveTx: no validation thread runs here, so the verdict is
	 * put in by hand). */
	reject(t, &tx.txid);
	struct peer *c = tf_peer(t, true, TF_ADDR);
	announce_hash(c, PROTO_INV_TX, &tx.txid);
	assert_requested(t, c, 0, "announcing a seen tx");
	assert_int_equal(txrequest_tracked(t->d), 0);
	proto_writer_release(&tx.frame);
}

static void test_wtxid_relay(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct peer *b = tf_peer(t, true, TF_ADDR);
	a->wtxidrelay = true;
	struct test_tx tx;
	make_tx(t, &tx, 0x92, true);
	/* A wtxidrelay peer's MSG_TX is ignored, as Core does. */
	announce_hash(a, PROTO_INV_TX, &tx.txid);
	assert_int_equal(txrequest_tracked(t->d), 0);
	announce_hash(a, PROTO_INV_WTX, &tx.wtxid);
	struct proto_hash got;
	struct tf_sent s;
	tf_read_sent(t, a->id, &s);
	assert_int_equal(s.n_getdata, 1);
	assert_int_equal(s.getdata[0].type, PROTO_INV_WTX);
	got = s.getdata[0].hash;
	tu_assert_bytes_equal(got.b, 32, tx.wtxid.b, 32);
	tf_sent_free(&s);
	/* An old-style peer announces the txid: tracked separately. */
	announce_hash(b, PROTO_INV_TX, &tx.txid);
	assert_int_equal(txrequest_tracked(t->d), 2);
	assert_requested(t, b, 1, "txid announcement");
	tf_feed(a, tx.frame.buf, tx.frame.len, SIZE_MAX);
	/* The transaction settles both announcements. */
	assert_int_equal(txrequest_tracked(t->d), 0);
	assert_int_equal(a->txreq->tx_inflight, 0);
	assert_int_equal(b->txreq->tx_inflight, 0);
	assert_int_equal(t->d->stats.tx_unsolicited, 0);
	proto_writer_release(&tx.frame);
}

static void test_unsolicited_tx(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct test_tx tx;
	make_tx(t, &tx, 0x93, false);
	tf_feed(a, tx.frame.buf, tx.frame.len, 7);
	assert_int_equal(t->d->stats.tx_received, 1);
	assert_int_equal(t->d->stats.tx_unsolicited, 1);
	/* The sender announcing it afterwards is known inventory. */
	announce_hash(a, PROTO_INV_TX, &tx.txid);
	assert_int_equal(t->d->stats.inv_known_dup, 1);
	assert_int_equal(txrequest_tracked(t->d), 0);
	proto_writer_release(&tx.frame);
}

/* getdata: the genesis block is served; an unknown transaction is notfound,
 * an unknown block gets nothing, as Core. */
static void test_getdata_served(void **state)
{
	struct tf *t = *state;
	struct peer *a = tf_peer(t, true, TF_ADDR);
	struct proto_inv_vec v[3] = {
	    {.type = PROTO_INV_WITNESS_TX, .hash = tf_hash(0xa1, 0)},
	    {.type = PROTO_INV_WITNESS_BLOCK, .hash = t->d->params->genesis_hash},
	    {.type = PROTO_INV_BLOCK, .hash = tf_hash(0xa1, 1)},
	};
	static struct proto_msg m;
	memset(&m, 0, sizeof(m));
	m.cmd = PROTO_CMD_GETDATA;
	m.inv.v = v;
	m.inv.n = m.inv.cap = 3;
	inv_on_msg(a, &m);
	struct tf_sent s;
	tf_read_sent(t, a->id, &s);
	assert_int_equal(s.count[PROTO_CMD_BLOCK], 1);
	assert_int_equal(s.count[PROTO_CMD_NOTFOUND], 1);
	assert_int_equal(s.n_notfound, 1);
	tu_assert_bytes_equal(s.notfound[0].hash.b, 32, v[0].hash.b, 32);
	assert_int_equal(t->d->stats.blocks_served, 1);
	assert_int_equal(t->d->stats.notfound_sent, 1);
	tf_sent_free(&s);
}

/* The node's clock (base/clock.h) stands still in these tests: requests
 * and trickles run on it, as Core's on its mockable clock. */
static int setup_mock(void **state)
{
	base_clock_set_mock(1700000000);
	return tf_setup(state);
}

static int teardown_mock(void **state)
{
	base_clock_set_mock(0);
	return tf_teardown(state);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_one_announcer_asked, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_timeout_falls_back, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_notfound_falls_back, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_announcer_gone, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_inflight_limit, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_peer_announcement_limit, setup_mock,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_total_limit, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_received_tx_not_requested_again, setup_mock,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_wtxid_relay, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_unsolicited_tx, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_getdata_served, setup_mock, teardown_mock),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
