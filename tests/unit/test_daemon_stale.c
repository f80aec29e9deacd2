/*
 * tests/unit/test_daemon_stale.c: lagging outbound peers, extra outbound
 * peers and the stale tip (daemon/sync/stale.c), as Core 29's
 * ConsiderEviction, EvictExtraOutboundPeers and
 * CheckForStaleTipAndEvictPeers.
 *
 * The loop's rules are driven with stale_tick at chosen loop times (the
 * fixture's loop clock stands still, so T0 = daemon_now_ms and every time
 * is T0 plus a delay) on a chain view of made-up blocks, the validation
 * thread's verdicts on work given with stale_placed. The last test runs a
 * real regtest chain to check those verdicts and the protection that a
 * headers message brings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "chain/chain.h"
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define MIN_MS (60u * 1000u)

/* The mockable clock's start in these tests (seconds). */
#define MOCK_S 1700000000

/* Stands the node's clock (base/clock.h) still at MOCK_S: the rules run on
 * it, as Core's on its mockable clock. Returns it in milliseconds. */
static uint64_t mock_t0(void)
{
	base_clock_set_mock(MOCK_S);
	return (uint64_t)MOCK_S * 1000u;
}

static int teardown_mock(void **state)
{
	base_clock_set_mock(0);
	return tf_teardown(state);
}

/* The view becomes blocks 0..top of made-up hashes tf_hash(0xb0 + salt, h). */
static void view_chain(struct tf *t, int32_t top, uint8_t salt)
{
	uint32_t n = (uint32_t)top + 1;
	struct chainview_update *u = calloc(1, sizeof(*u) + n * sizeof(u->recs[0]));
	assert_non_null(u);
	u->fork_height = -1;
	u->old_height = -1;
	u->n = n;
	for (uint32_t h = 0; h < n; h++)
		u->recs[h].hash = tf_hash((uint8_t)(0xb0 + salt), h);
	/* From genesis (fork_height -1): it replaces whatever the view held. */
	assert_int_equal(chainview_apply(t->d, u), 0);
	free(u);
}

static const struct proto_hash *view_tip(struct tf *t)
{
	return &chainview_at(t->d, chainview_height(t->d))->hash;
}

/* A connected outbound peer of type `type` whose headers sync started,
 * best known block at `best` (-1 none), connected long ago. */
static struct peer *outbound(struct tf *t, enum peer_conn_type type, const char *addr, int32_t best)
{
	struct peer *p = tf_peer(t, false, addr);
	p->conn_type = type;
	p->sync->sync_started = true;
	p->sync->best_height = best;
	if (best >= 0)
		p->sync->best_hash = tf_hash(0xb0, (uint32_t)best);
	p->conntime = 0;
	return p;
}

static uint32_t getheaders_sent(struct tf *t, struct peer *p)
{
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	uint32_t n = s.count[PROTO_CMD_GETHEADERS];
	tf_sent_free(&s);
	return n;
}

static bool closing(struct peer *p)
{
	return p->state == PEER_CLOSING;
}

/* ---- ConsiderEviction ------------------------------------------------ */

/* 20 minutes behind our tip, then one getheaders, then 2 minutes, then out. */
static void test_lagging_peer_getheaders_then_disconnect(void **state)
{
	struct tf *t = *state;
	view_chain(t, 5, 0);
	uint64_t t0 = mock_t0();
	struct peer *p = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.2:18444", 3);
	/* The validation thread found its block below our tip. */
	stale_placed(p, &p->sync->stale.bench, false, false);

	stale_tick(t->d, t0);
	assert_int_equal(p->sync->stale.timeout_ms, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS);
	assert_true(proto_hash_eq(&p->sync->stale.bench, view_tip(t)));
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS);
	assert_int_equal(getheaders_sent(t, p), 0);
	assert_false(closing(p));

	/* Past the 20 minutes: one getheaders, two minutes to answer. */
	uint64_t t1 = t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + 1;
	stale_tick(t->d, t1);
	assert_int_equal(getheaders_sent(t, p), 1);
	/* From the bench's parent (Core: GetLocator(m_work_header->pprev)). */
	struct proto_hash parent = tf_hash(0xb0, 4);
	assert_true(proto_hash_eq(&p->sync->getheaders_at, &parent));
	assert_true(p->sync->stale.sent_getheaders);
	assert_int_equal(p->sync->stale.timeout_ms, t1 + SYNC_HEADERS_RESPONSE_MS);
	assert_true(tf_log_contains(t, "to verify chain work"));
	stale_tick(t->d, t1 + SYNC_HEADERS_RESPONSE_MS);
	assert_false(closing(p));
	assert_int_equal(getheaders_sent(t, p), 0);

	stale_tick(t->d, t1 + SYNC_HEADERS_RESPONSE_MS + 1);
	assert_true(closing(p));
	char want[160], hex[65];
	proto_hash_to_hex(&p->sync->best_hash, hex);
	snprintf(want, sizeof(want),
	         "Outbound peer has old chain, best known block = %s, disconnecting peer=%llu", hex,
	         (unsigned long long)p->id);
	if (!tf_log_contains(t, want))
		fail_msg("no log line \"%s\"", want);
	assert_int_equal(t->d->sync->lagging_disconnects, 1);
	json_t *o = stale_stats_json(t->d);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "lagging_disconnects")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "protected")), 0);
	json_decref(o);
}

/* A peer that never showed a block is as behind as one that did. */
static void test_lagging_peer_without_best_block(void **state)
{
	struct tf *t = *state;
	view_chain(t, 2, 0);
	uint64_t t0 = mock_t0();
	struct peer *p = outbound(t, PEER_CONN_BLOCK_RELAY, "127.0.0.2:18444", -1);
	stale_tick(t->d, t0);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + 1);
	assert_int_equal(getheaders_sent(t, p), 1);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + SYNC_HEADERS_RESPONSE_MS + 2);
	assert_true(closing(p));
	assert_true(tf_log_contains(t, "best known block = <none>, disconnecting peer="));
}

/* A peer that shows our tip's work in time is kept, and its timeout goes. */
static void test_peer_that_catches_up_is_kept(void **state)
{
	struct tf *t = *state;
	view_chain(t, 5, 0);
	uint64_t t0 = mock_t0();
	struct peer *p = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.2:18444", 3);
	stale_tick(t->d, t0);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + 1);
	assert_int_equal(getheaders_sent(t, p), 1);
	/* It answers the getheaders with our tip. */
	p->sync->best_height = 5;
	p->sync->best_hash = *view_tip(t);
	stale_placed(p, &p->sync->stale.bench, true, true);
	uint64_t later = t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + SYNC_HEADERS_RESPONSE_MS + 2;
	stale_tick(t->d, later);
	assert_false(closing(p));
	assert_int_equal(p->sync->stale.timeout_ms, 0);
	assert_false(p->sync->stale.sent_getheaders);
	stale_tick(t->d, later + 60 * MIN_MS);
	assert_false(closing(p));
	assert_int_equal(getheaders_sent(t, p), 0);
}

/* It reached the tip of the timeout, but we moved on: a new 20 minutes
 * against the new tip, not a disconnect. */
static void test_peer_at_old_bench_gets_new_timeout(void **state)
{
	struct tf *t = *state;
	view_chain(t, 5, 0);
	uint64_t t0 = mock_t0();
	struct peer *p = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.2:18444", 3);
	stale_tick(t->d, t0);
	struct proto_hash old = p->sync->stale.bench;
	view_chain(t, 7, 0);
	/* Its block now has block 5's work, not block 7's. */
	stale_placed(p, &old, false, true);
	uint64_t t1 = t0 + 10 * MIN_MS;
	stale_tick(t->d, t1);
	assert_int_equal(p->sync->stale.timeout_ms, t1 + STALE_CHAIN_SYNC_TIMEOUT_MS);
	assert_true(proto_hash_eq(&p->sync->stale.bench, view_tip(t)));
	/* An answer about the old bench says nothing of the new one. */
	stale_placed(p, &old, false, true);
	assert_false(p->sync->stale.ge_bench);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + SYNC_HEADERS_RESPONSE_MS + 2);
	assert_false(closing(p));
	assert_int_equal(getheaders_sent(t, p), 0);
}

/* Up to 4 full-relay outbound peers at our tip's work are protected;
 * block-relay-only, manual and inbound peers are never. */
static void test_four_protected(void **state)
{
	struct tf *t = *state;
	view_chain(t, 5, 0);
	uint64_t t0 = mock_t0();
	struct peer *full[6];
	char addr[32];
	for (int i = 0; i < 6; i++) {
		snprintf(addr, sizeof(addr), "127.0.0.%d:18444", 10 + i);
		full[i] = outbound(t, PEER_CONN_OUTBOUND_FULL, addr, 5);
		stale_placed(full[i], &full[i]->sync->stale.bench, true, false);
		stale_on_headers(full[i], false);
	}
	struct peer *br = outbound(t, PEER_CONN_BLOCK_RELAY, "127.0.0.20:18444", 5);
	stale_placed(br, &br->sync->stale.bench, true, false);
	stale_on_headers(br, false);
	struct peer *man = outbound(t, PEER_CONN_MANUAL, "127.0.0.21:18444", 5);
	stale_placed(man, &man->sync->stale.bench, true, false);
	stale_on_headers(man, false);
	struct peer *in = tf_peer(t, true, "127.0.0.22:18444");
	in->sync->sync_started = true;

	assert_int_equal(t->d->sync->n_protected, 4);
	for (int i = 0; i < 6; i++)
		assert_int_equal(full[i]->sync->stale.protect, i < 4);
	assert_false(br->sync->stale.protect);
	assert_false(man->sync->stale.protect);
	assert_true(tf_log_contains(t, "Protecting outbound peer="));

	/* The chain moves on and nobody follows: the protected 4, the manual
	 * and the inbound peer stay. */
	view_chain(t, 9, 0);
	struct peer *all[] = {full[0], full[1], full[2], full[3], full[4], full[5], br, man, in};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		stale_placed(all[i], &all[i]->sync->stale.bench, false, false);
	stale_tick(t->d, t0);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + 1);
	stale_tick(t->d, t0 + STALE_CHAIN_SYNC_TIMEOUT_MS + SYNC_HEADERS_RESPONSE_MS + 2);
	for (int i = 0; i < 6; i++)
		assert_int_equal(closing(full[i]), i >= 4);
	assert_true(closing(br));
	assert_false(closing(man));
	assert_false(closing(in));
	assert_int_equal(getheaders_sent(t, man), 0);
	assert_int_equal(getheaders_sent(t, in), 0);

	/* A protected peer's leaving frees its place. */
	uint64_t id0 = full[0]->id;
	peer_disconnect(full[0], "test");
	for (int i = 0; i < 1000 && peer_by_id(t->d, id0); i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(t->d->sync->n_protected, 3);
	struct peer *late = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.30:18444", 9);
	stale_placed(late, &late->sync->stale.bench, true, false);
	stale_on_headers(late, false);
	assert_true(late->sync->stale.protect);
	assert_int_equal(t->d->sync->n_protected, 4);
}

/* The loop's tick (sync_tick) times the rule by the mockable clock, not
 * the loop's: moving the clock as setmocktime does, with the loop clock
 * standing still, is enough for the getheaders and then the disconnect,
 * as Core's p2p_outbound_eviction.py drives it. */
static void test_mock_clock_drives_lagging_peer(void **state)
{
	struct tf *t = *state;
	view_chain(t, 5, 0);
	uint64_t loop_now = daemon_now_ms(t->d);
	int64_t s0 = MOCK_S;
	base_clock_set_mock(s0);
	struct peer *p = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.2:18444", 3);
	stale_placed(p, &p->sync->stale.bench, false, false);
	sync_tick(t->d, loop_now);
	assert_int_equal(p->sync->stale.timeout_ms,
	                 (uint64_t)s0 * 1000u + STALE_CHAIN_SYNC_TIMEOUT_MS);
	/* 20 minutes exactly: not yet. */
	base_clock_set_mock(s0 + STALE_CHAIN_SYNC_TIMEOUT_MS / 1000);
	sync_tick(t->d, loop_now);
	assert_int_equal(getheaders_sent(t, p), 0);
	/* One second more: the getheaders. */
	base_clock_set_mock(s0 + STALE_CHAIN_SYNC_TIMEOUT_MS / 1000 + 1);
	sync_tick(t->d, loop_now);
	assert_int_equal(getheaders_sent(t, p), 1);
	assert_false(closing(p));
	/* Two minutes and a second more: out. */
	base_clock_set_mock(s0 + (STALE_CHAIN_SYNC_TIMEOUT_MS + SYNC_HEADERS_RESPONSE_MS) / 1000 +
	                    2);
	sync_tick(t->d, loop_now);
	assert_true(closing(p));
	assert_true(tf_log_contains(t, "Outbound peer has old chain"));
}

/* ---- CheckForStaleTipAndEvictPeers: the stale tip --------------------- */

static void test_stale_tip_sets_try_new_outbound(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	uint64_t three_blocks = (uint64_t)t->d->params->pow_target_spacing * 3u * 1000u;
	stale_new_tip(t->d);
	stale_tick(t->d, t0 + 1);
	assert_false(t->d->net->try_new_outbound);
	/* Three block intervals exactly: not yet stale. */
	stale_tick(t->d, t0 + three_blocks);
	assert_false(t->d->net->try_new_outbound);
	/* Stale by now, but checked every 10 minutes only: the 40-minute check sees it. */
	stale_tick(t->d, t0 + three_blocks + 5 * MIN_MS);
	assert_false(t->d->net->try_new_outbound);
	stale_tick(t->d, t0 + 4 * 10 * MIN_MS + 1);
	assert_true(t->d->net->try_new_outbound);
	assert_true(tf_log_contains(t, "Potential stale tip detected, will try using extra "
	                               "outbound peer (last tip update: 2400 seconds ago)"));
	assert_int_equal(t->d->sync->stale_tips, 1);

	/* A new tip: the next check clears it. */
	uint64_t t1 = t0 + 4 * 10 * MIN_MS + 1;
	t->d->sync->last_tip_ms = t1;
	stale_tick(t->d, t1 + 10 * MIN_MS + 1);
	assert_false(t->d->net->try_new_outbound);
}

/* No stale tip while a block is in flight, nor with -connect (no
 * automatic outbound), as Core. */
static void test_stale_tip_not_while_downloading_or_connect(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	struct sync_state *s = t->d->sync;
	s->last_tip_ms = t0;
	s->win = xcalloc(1, sizeof(*s->win));
	assert_non_null(s->win);
	s->n_win = 1;
	s->win[0].hash = tf_hash(0xee, 1);
	s->win[0].peer = 1;
	stale_tick(t->d, t0 + 60 * MIN_MS);
	assert_false(t->d->net->try_new_outbound);
	s->win[0].peer = 0;
	t->conf.connect_set = true;
	stale_tick(t->d, t0 + 80 * MIN_MS);
	assert_false(t->d->net->try_new_outbound);
	t->conf.connect_set = false;
	stale_tick(t->d, t0 + 100 * MIN_MS);
	assert_true(t->d->net->try_new_outbound);
}

/* Once the tip is less than 20 block intervals old, the connection
 * manager may add block-relay-only peers (Core's CanDirectFetch, then
 * StartExtraBlockRelayPeers), for good. */
static void test_extra_block_relay_after_initial_sync(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	int64_t twenty = t->d->params->pow_target_spacing * 20;
	uint8_t *when = t->d->view->recs[3].header + 68;
	proto_put_le32(when, (uint32_t)(MOCK_S - twenty - 60));
	stale_tick(t->d, t0);
	assert_false(t->d->net->start_extra_block_relay);
	proto_put_le32(when, (uint32_t)(MOCK_S - twenty + 60));
	stale_tick(t->d, t0 + STALE_EXTRA_PEER_CHECK_MS);
	assert_true(t->d->net->start_extra_block_relay);
	assert_true(tf_log_contains(t, "enabling extra block-relay-only peers"));
	/* An old tip later does not take it back. */
	proto_put_le32(when, 0);
	stale_tick(t->d, t0 + 2 * STALE_EXTRA_PEER_CHECK_MS);
	assert_true(t->d->net->start_extra_block_relay);
}

/* ---- EvictExtraOutboundPeers ---------------------------------------- */

/* Three block-relay-only peers for two slots: the youngest goes... */
static void test_extra_block_relay_youngest(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	assert_int_equal(t->d->net->max_block_relay, 2);
	struct peer *b[3];
	char addr[32];
	for (int i = 0; i < 3; i++) {
		snprintf(addr, sizeof(addr), "127.0.0.%d:18444", 40 + i);
		b[i] = outbound(t, PEER_CONN_BLOCK_RELAY, addr, 3);
		b[i]->sync->stale.ge_tip = true;
		b[i]->last_block_time = 1000 + i;
		b[i]->conntime = (int64_t)(t0 / 1000u);
	}
	/* ... unless it gave us a block more recently: then the next-youngest. */
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS);
	assert_false(closing(b[0]));
	assert_true(closing(b[1]));
	assert_false(closing(b[2]));
	assert_true(tf_log_contains(t, "disconnecting extra block-relay-only peer="));
	assert_int_equal(t->d->sync->extra_disconnects, 1);
}

static void test_extra_block_relay_no_blocks_youngest_goes(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	struct peer *b[3];
	char addr[32];
	for (int i = 0; i < 3; i++) {
		snprintf(addr, sizeof(addr), "127.0.0.%d:18444", 40 + i);
		b[i] = outbound(t, PEER_CONN_BLOCK_RELAY, addr, 3);
		b[i]->sync->stale.ge_tip = true;
		b[i]->conntime = (int64_t)(t0 / 1000u);
	}
	/* Young: kept this time (Core: connected at least 30 s). */
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS - 1);
	assert_false(closing(b[2]));
	assert_true(tf_log_contains(t, "keeping block-relay-only peer="));
	/* A block in flight keeps it too. */
	b[2]->sync->blocks_inflight = 1;
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS + STALE_EXTRA_PEER_CHECK_MS);
	assert_false(closing(b[2]));
	b[2]->sync->blocks_inflight = 0;
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS + 2 * STALE_EXTRA_PEER_CHECK_MS);
	assert_false(closing(b[0]));
	assert_false(closing(b[1]));
	assert_true(closing(b[2]));
}

/* Full-relay peers over the limit: the unprotected one with the oldest
 * announcement goes (the younger on a tie), never the only one of its
 * network; then try_new_outbound is cleared. */
static void test_extra_full_relay(void **state)
{
	struct tf *t = *state;
	view_chain(t, 3, 0);
	uint64_t t0 = mock_t0();
	t->d->net->max_outbound_full = 4;
	struct peer *f[4];
	char addr[32];
	for (int i = 0; i < 4; i++) {
		snprintf(addr, sizeof(addr), "127.0.0.%d:18444", 50 + i);
		f[i] = outbound(t, PEER_CONN_OUTBOUND_FULL, addr, 3);
		f[i]->sync->stale.ge_tip = true;
		f[i]->conntime = (int64_t)(t0 / 1000u);
	}
	/* Oldest announcements: f[0] (protected) and f[2] = f[3] (tie: the younger, f[3]). */
	f[0]->sync->stale.last_announce = 100;
	f[0]->sync->stale.protect = true;
	t->d->sync->n_protected = 1;
	f[1]->sync->stale.last_announce = 300;
	f[2]->sync->stale.last_announce = 200;
	f[3]->sync->stale.last_announce = 200;
	/* The only IPv6 peer is spared however old its announcement. */
	struct peer *v6 = outbound(t, PEER_CONN_OUTBOUND_FULL, "[2a01:4f8::1]:18444", 3);
	v6->sync->stale.ge_tip = true;
	v6->conntime = (int64_t)(t0 / 1000u);

	/* Exactly 30 s: Core wants more than that. */
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS);
	assert_false(closing(f[3]));
	assert_true(tf_log_contains(t, "keeping outbound peer="));
	/* The extra peer a stale tip allowed (the stale check ran above, and
	 * runs again only in 10 minutes). */
	t->d->net->try_new_outbound = true;

	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS + STALE_EXTRA_PEER_CHECK_MS);
	for (int i = 0; i < 3; i++)
		assert_false(closing(f[i]));
	assert_true(closing(f[3]));
	assert_false(closing(v6));
	assert_true(tf_log_contains(t, "disconnecting extra outbound peer="));
	assert_false(t->d->net->try_new_outbound);

	/* At the limit again: nobody else goes. */
	stale_tick(t->d, t0 + STALE_MIN_CONNECT_MS + 2 * STALE_EXTRA_PEER_CHECK_MS);
	for (int i = 0; i < 3; i++)
		assert_false(closing(f[i]));
	assert_false(closing(v6));
}

/* ---- the validation thread's verdicts, on a real regtest chain -------- */

#define N_REAL  3u
#define WAIT_MS 5000u

/* Run the loop until *flag holds (or WAIT_MS passed). */
static void run_until(struct tf *t, bool (*cond)(struct tf *, void *), void *arg)
{
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while (!cond(t, arg) && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	assert_true(cond(t, arg));
}

static bool view_ready(struct tf *t, void *arg)
{
	(void)arg;
	return chainview_height(t->d) >= 0;
}

static bool best_at(struct tf *t, void *arg)
{
	struct peer *p = arg;
	return p->sync->best_height == (int32_t)N_REAL && !p->sync->hdr_jobs_live &&
	       !p->sync->hdr_jobs_probe && !t->d->sync->refresh_posted;
}

static bool refreshed(struct tf *t, void *arg)
{
	(void)arg;
	return !t->d->sync->refresh_posted;
}

/* Three regtest headers on genesis, mined now. */
static void real_headers(struct tf *t, struct proto_block_header *h)
{
	const struct proto_params *par = t->d->params;
	struct proto_hash prev = par->genesis_hash;
	for (uint32_t i = 0; i < N_REAL; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].version = 0x20000000;
		h[i].prev = prev;
		h[i].merkle_root = tf_hash(0x77, i);
		h[i].time = (uint32_t)time(NULL) - 600u + 60u * i;
		h[i].bits = par->pow_limit_bits;
		tu_grind(&h[i], par);
		proto_block_header_hash(&h[i], &prev);
	}
}

/*
 * A full-relay outbound peer whose headers have more work than our tip is
 * protected and its announcement timed; a block-relay-only peer sending
 * the same (no longer new) headers is placed at the tip's work too, but
 * neither protected nor timed; a peer that showed nothing is below it.
 * Placement against a bench follows a refresh.
 */
static void test_headers_place_and_protect(void **state)
{
	struct tf *t = *state;
	run_until(t, view_ready, NULL);
	struct proto_block_header h[N_REAL];
	real_headers(t, h);
	struct peer *a = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.2:18444", -1);
	struct peer *b = outbound(t, PEER_CONN_BLOCK_RELAY, "127.0.0.3:18444", -1);
	struct peer *c = outbound(t, PEER_CONN_OUTBOUND_FULL, "127.0.0.4:18444", -1);
	int64_t before = (int64_t)time(NULL);

	tf_send_headers(t, a, h, N_REAL);
	run_until(t, best_at, a);
	assert_true(a->sync->stale.ge_tip);
	assert_true(a->sync->stale.protect);
	assert_int_equal(t->d->sync->n_protected, 1);
	assert_true(a->sync->stale.last_announce >= before);

	tf_send_headers(t, b, h, N_REAL);
	run_until(t, best_at, b);
	assert_true(b->sync->stale.ge_tip);
	assert_false(b->sync->stale.protect);
	assert_int_equal(b->sync->stale.last_announce, 0);
	assert_false(c->sync->stale.ge_tip);

	/* b's bench: genesis, which its chain has the work of; c's too,
	 * which it has not shown. */
	b->sync->stale.bench = t->d->params->genesis_hash;
	b->sync->stale.has_bench = true;
	c->sync->stale.bench = t->d->params->genesis_hash;
	c->sync->stale.has_bench = true;
	sync_new_tip(t->d);
	assert_true(t->d->sync->refresh_posted);
	run_until(t, refreshed, NULL);
	assert_true(b->sync->stale.ge_bench);
	assert_false(c->sync->stale.ge_bench);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lagging_peer_getheaders_then_disconnect, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_lagging_peer_without_best_block, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_peer_that_catches_up_is_kept, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_peer_at_old_bench_gets_new_timeout, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_four_protected, tf_setup, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_mock_clock_drives_lagging_peer, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_stale_tip_sets_try_new_outbound, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_stale_tip_not_while_downloading_or_connect,
	                                    tf_setup, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_extra_block_relay_after_initial_sync, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_extra_block_relay_youngest, tf_setup,
	                                    teardown_mock),
	    cmocka_unit_test_setup_teardown(test_extra_block_relay_no_blocks_youngest_goes,
	                                    tf_setup, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_extra_full_relay, tf_setup, teardown_mock),
	    cmocka_unit_test_setup_teardown(test_headers_place_and_protect, tf_setup_chain,
	                                    tf_teardown_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
