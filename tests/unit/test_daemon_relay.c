/*
 * tests/unit/test_daemon_relay.c: transaction announcements (daemon/txrelay/announce.c)
 * as Core 29's SendMessages makes them: order (fewest ancestors, then
 * feerate), the per-trickle maximum, never what the peer knows, the peer's
 * feefilter, one timer for inbound peers and one per outbound peer,
 * getdata only for what entered before the last inv, and the feefilter
 * rounding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* A mirror entry: ancestors, fee and vsize; ids from `n`. */
static const struct relay_tx *add(struct tf *t, uint32_t n, uint64_t ancestors, int64_t fee,
                                  int64_t vsize, bool announce)
{
	struct relay_tx m;
	memset(&m, 0, sizeof(m));
	m.txid = tf_hash(0x71, n);
	m.wtxid = tf_hash(0x72, n);
	m.ancestors = ancestors;
	m.fee = m.modified_fee = fee;
	m.vsize = vsize;
	uint8_t raw[64];
	memset(raw, (int)n, sizeof(raw));
	const struct relay_tx *e = txrelay_mirror_add(t->d, &m, raw, sizeof(raw), announce);
	assert_non_null(e);
	return e;
}

static struct peer *ready_peer(struct tf *t, bool inbound)
{
	struct peer *p = tf_peer(t, inbound, TF_ADDR);
	p->wtxidrelay = true;
	txrelay_peer_ready(p);
	assert_non_null(p->txr);
	struct tf_sent s;
	tf_read_sent(t, p->id, &s); /* the first feefilter */
	assert_int_equal(s.count[PROTO_CMD_FEEFILTER], 1);
	tf_sent_free(&s);
	return p;
}

static uint32_t pick(struct peer *p, const struct relay_tx **out)
{
	return txrelay_pick(p, out);
}

static void test_order_fewest_ancestors_then_feerate(void **state)
{
	struct tf *t = *state;
	struct peer *p = ready_peer(t, true);
	/* Queued in an order unlike the announcement order. */
	const struct relay_tx *c3 = add(t, 1, 3, 5000, 100, true);   /* 50 sat/vB, 3 ancestors */
	const struct relay_tx *a1 = add(t, 2, 1, 1000, 100, true);   /* 10 sat/vB */
	const struct relay_tx *b2 = add(t, 3, 2, 10000, 100, true);  /* 100 sat/vB, 2 ancestors */
	const struct relay_tx *a1b = add(t, 4, 1, 10000, 200, true); /* 50 sat/vB */
	const struct relay_tx *out[8];
	assert_int_equal(p->txr->n, 4);
	assert_int_equal(pick(p, out), 4);
	/* Parents before children, whatever the child pays. */
	assert_ptr_equal(out[0], a1b);
	assert_ptr_equal(out[1], a1);
	assert_ptr_equal(out[2], b2);
	assert_ptr_equal(out[3], c3);
	assert_int_equal(p->txr->n, 0);
}

static void test_broadcast_max(void **state)
{
	struct tf *t = *state;
	struct peer *p = ready_peer(t, true);
	for (uint32_t i = 0; i < 40; i++)
		add(t, 100 + i, 1, 1000 + i, 100, true);
	const struct relay_tx **out = calloc(2100, sizeof(*out));
	assert_non_null(out);
	/* Core: 35 (7 a second times 5 s) while fewer than 1,000 wait. */
	assert_int_equal(pick(p, out), RELAY_BROADCAST_TARGET);
	assert_int_equal(RELAY_BROADCAST_TARGET, 35);
	/* The best of them went first; the five cheapest wait. */
	assert_int_equal(out[0]->fee, 1039);
	assert_int_equal(p->txr->n, 5);
	assert_int_equal(pick(p, out), 5);
	/* 2,000 waiting: 35 + 2 * 5. */
	for (uint32_t i = 0; i < 2000; i++)
		add(t, 1000 + i, 1, 1000, 100, true);
	assert_int_equal(p->txr->n, 2000);
	assert_int_equal(pick(p, out), 45);
	assert_int_equal(p->txr->n, 1955);
	free(out);
}

static void test_known_and_feefilter_skipped(void **state)
{
	struct tf *t = *state;
	struct peer *p = ready_peer(t, true);
	const struct relay_tx *from_p = add(t, 1, 1, 1000, 100, false);
	/* p sent it (its wtxid is known inventory): never announced back. */
	inv_known_add(p, &from_p->wtxid);
	txrelay_mirror_add(t->d, from_p, (const uint8_t *)"x", 1, true);
	assert_int_equal(p->txr->n, 0);
	/* Known after queueing: dropped at the trickle. */
	const struct relay_tx *e = add(t, 2, 1, 1000, 100, true);
	inv_known_add(p, &e->wtxid);
	/* Under the peer's feefilter: 2,000 sat/kvB asks 200 sat for 100 vB. */
	p->feefilter = 2000;
	add(t, 3, 1, 199, 100, true);
	const struct relay_tx *ok = add(t, 4, 1, 200, 100, true);
	const struct relay_tx *out[4];
	assert_int_equal(pick(p, out), 1);
	assert_ptr_equal(out[0], ok);
	assert_true(t->d->txr->st.skipped_known >= 1);
	assert_true(t->d->txr->st.skipped_feefilter >= 1);
}

static void test_inbound_share_a_timer_outbound_do_not(void **state)
{
	struct tf *t = *state;
	struct peer *in1 = ready_peer(t, true), *in2 = ready_peer(t, true);
	struct peer *out1 = ready_peer(t, false), *out2 = ready_peer(t, false);
	uint64_t now = (uint64_t)daemon_time_ms(t->d) + 1;
	bool differ = false;
	for (int round = 0; round < 20; round++) {
		add(t, 10 + (uint32_t)round, 1, 1000, 100, true);
		/* Run the trickle until all four announced it. */
		uint64_t first[4] = {0, 0, 0, 0};
		struct peer *ps[4] = {in1, in2, out1, out2};
		for (int k = 0; k < 100000 && !(first[0] && first[1] && first[2] && first[3]);
		     k++) {
			now += RELAY_TIMER_MS;
			txrelay_trickle(t->d, now);
			for (int i = 0; i < 4; i++) {
				if (!first[i] && ps[i]->txr->n == 0)
					first[i] = now;
			}
		}
		assert_true(first[0] && first[1] && first[2] && first[3]);
		/* The same tick for both inbound peers, every time. */
		assert_int_equal(first[0], first[1]);
		assert_int_equal(in1->txr->next_inv_ms, in2->txr->next_inv_ms);
		if (first[2] != first[3])
			differ = true;
	}
	/* Independent 2 s timers agree on the tick 20 times running with
	 * probability well under 1e-9. */
	assert_true(differ);
	struct tf_sent s;
	tf_read_sent(t, in1->id, &s);
	assert_int_equal(s.count[PROTO_CMD_INV], 20);
	tf_sent_free(&s);
}

static void test_getdata_only_after_inv(void **state)
{
	struct tf *t = *state;
	struct peer *p = ready_peer(t, false);
	const struct relay_tx *e = add(t, 1, 1, 1000, 100, true);
	struct proto_inv_vec v = {.type = PROTO_INV_WTX, .hash = e->wtxid};
	/* Entered after the last inv to p: not served (Core's m_last_inv_sequence). */
	assert_false(txrelay_serve(p, &v));
	uint64_t now = (uint64_t)daemon_time_ms(t->d);
	while (p->txr->n) {
		now += RELAY_TIMER_MS;
		txrelay_trickle(t->d, now);
	}
	assert_true(txrelay_serve(p, &v));
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_INV], 1);
	assert_int_equal(s.count[PROTO_CMD_TX], 1);
	tf_sent_free(&s);
	/* An unknown one is not. */
	v.hash = tf_hash(0x99, 9);
	assert_false(txrelay_serve(p, &v));
}

static void test_feefilter_rounding(void **state)
{
	struct tf *t = *state;
	/* Core's top bucket, what MAX_MONEY rounds to (the IBD filter). */
	assert_int_equal(txrelay_round_fee(t->d, PROTO_MAX_MONEY, 1), DAEMON_FEEFILTER_IBD_SAT_KVB);
	assert_int_equal(txrelay_round_fee(t->d, PROTO_MAX_MONEY, 0), DAEMON_FEEFILTER_IBD_SAT_KVB);
	assert_int_equal(txrelay_round_fee(t->d, 0, 1), 0);
	/* 1,000 lies between 500 * 1.1^7 (974) and 500 * 1.1^8 (1,071): up
	 * one time in three, down otherwise. */
	assert_int_equal(txrelay_round_fee(t->d, 1000, 3), 1071);
	assert_int_equal(txrelay_round_fee(t->d, 1000, 1), 974);
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
	    cmocka_unit_test_setup_teardown(test_order_fewest_ancestors_then_feerate, setup_mock,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_broadcast_max, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_known_and_feefilter_skipped, setup_mock,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_inbound_share_a_timer_outbound_do_not, setup_mock,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_getdata_only_after_inv, setup_mock, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_feefilter_rounding, setup_mock, teardown_mock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
