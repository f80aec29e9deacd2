/*
 * tests/unit/test_daemon_sync.c: block download (daemon/sync/download.c) against a
 * real regtest chain on the validation thread, with peers on socketpairs.
 *
 * Guards the forget-job window bug (fixed in f592078): a sync job skips its
 * download window while more sync jobs wait behind it, counting on a later
 * one to bring it. The forget job a peer's disconnect posts brings none, so
 * it must not count: when it did, a headers job queued just ahead of a
 * disconnect skipped its window and no block was ever asked for (headers
 * accepted, no getdata: the test_sync_serve flake).
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

/** Headers peer A sends: a chain from genesis it claims in its version. */
#define N_HEADERS 3u
/** How long the loop may take to turn the queued jobs into a getdata. */
#define WAIT_MS 5000u

/* Header i of a chain on top of prev, mined at regtest's difficulty. */
static void make_header(struct proto_block_header *h, const struct proto_hash *prev, uint32_t i,
                        const struct proto_params *p)
{
	memset(h, 0, sizeof(*h));
	h->version = 0x20000000;
	h->prev = *prev;
	h->merkle_root = tf_hash(0x5a, i);
	/* Recent, one minute apart: a chain a Core node would send today. */
	h->time = (uint32_t)time(NULL) - 3600u + 60u * i;
	h->bits = p->pow_limit_bits;
	tu_grind(h, p);
}

/* An outbound full node claiming `height`, through the whole handshake. */
static struct peer *outbound_full_node(struct tf *t, const char *addr, int32_t height)
{
	struct peer *p = tf_peer(t, false, addr);
	p->state = PEER_HANDSHAKE;
	p->got_version = p->sent_version = p->handshake_done = false;
	p->version = 0;
	p->services = 0;
	/* What peer_start does for an outbound connection once it is up. */
	handshake_send_version(p);
	struct proto_msg m;
	proto_msg_init(&m);
	tf_version_msg(&m, "/test:1.0/", height, 0x0102030405060708ull);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_msg_frame(t, &w, &m);
	tf_frame(t, &w, "verack", NULL, 0);
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
	proto_msg_release(&m);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(p->start_height, height);
	return p;
}

static uint64_t posted(struct tf *t)
{
	uv_mutex_lock(&t->d->val->mu);
	uint64_t n = t->d->val->posted;
	uv_mutex_unlock(&t->d->val->mu);
	return n;
}

/*
 * A's headers and B's disconnect are queued together (the validation thread
 * held): the headers job runs first with the forget job still behind it,
 * and the loop must still ask A for the three blocks.
 */
static void test_headers_before_disconnect_start_download(void **state)
{
	struct tf *t = *state;
	const struct proto_params *params = t->d->params;
	struct peer *a = outbound_full_node(t, TF_ADDR, (int32_t)N_HEADERS);
	struct peer *b = tf_peer(t, true, "203.0.113.8:18444");
	uint64_t a_id = a->id, b_id = b->id;
	struct tf_sent s;
	/* The handshake's own getheaders to the one full node (from genesis). */
	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETHEADERS], 1);
	assert_int_equal(s.count[PROTO_CMD_GETDATA], 0);
	tf_sent_free(&s);

	struct proto_block_header hdr[N_HEADERS];
	struct proto_hash hash[N_HEADERS];
	for (uint32_t i = 0; i < N_HEADERS; i++) {
		make_header(&hdr[i], i ? &hash[i - 1] : &params->genesis_hash, i, params);
		proto_block_header_hash(&hdr[i], &hash[i]);
	}

	validation_hold(t->d, true);
	uint64_t before = posted(t);
	tf_send_headers(t, a, hdr, N_HEADERS);
	assert_int_equal(posted(t), before + 1);

	/* B goes: its close callback posts the forget job behind A's headers. */
	peer_disconnect(b, "test: another peer leaves");
	for (int i = 0; i < 1000 && peer_by_id(t->d, b_id); i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_null(peer_by_id(t->d, b_id));
	assert_int_equal(posted(t), before + 2);

	validation_hold(t->d, false);
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while (t->d->sync->blocks_requested < N_HEADERS && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	/* The headers were taken either way: only the window decides. */
	assert_int_equal(t->d->sync->best_height, (int32_t)N_HEADERS);
	if (t->d->sync->blocks_requested != N_HEADERS)
		fail_msg("headers accepted (best header %d) but %llu blocks asked for, window %u: "
		         "block download never started",
		         (int)t->d->sync->best_height,
		         (unsigned long long)t->d->sync->blocks_requested, t->d->sync->n_win);

	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETDATA], 1);
	assert_int_equal(s.n_getdata, N_HEADERS);
	for (uint32_t i = 0; i < N_HEADERS; i++) {
		assert_int_equal(s.getdata[i].type, PROTO_INV_WITNESS_BLOCK);
		if (!proto_hash_eq(&s.getdata[i].hash, &hash[i]))
			fail_msg("getdata entry %u is not the block at height %u", i, i + 1);
	}
	tf_sent_free(&s);
}

/* ---- unconnecting headers: Core's MaybeSendGetHeaders (issue 18) ---------- */

/** Single-header messages with made-up parents in the flood. */
#define N_FLOOD 200u

/* Feed p `n` single-header messages, each on a parent nobody has. */
static void feed_unconnecting(struct tf *t, struct peer *p, uint32_t n, uint32_t salt)
{
	struct proto_writer w;
	proto_writer_init(&w);
	for (uint32_t i = 0; i < n; i++) {
		struct proto_block_header h;
		struct proto_hash prev = tf_hash(0xc3, salt + i);
		make_header(&h, &prev, salt + i, t->d->params);
		tf_headers_frame(t, &w, &h, 1);
	}
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
}

/* Run the loop until every headers message p sent was either checked on
 * the validation thread or kept back by the gate, and no job is out. */
static void settle_headers(struct tf *t, struct peer *p, uint64_t expect)
{
	const struct sync_state *s = t->d->sync;
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while ((s->unconnecting + s->headers_gated < expect || p->sync->hdr_jobs_live ||
	        p->sync->hdr_jobs_probe) &&
	       uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	if (s->unconnecting + s->headers_gated < expect)
		fail_msg("%llu unconnecting + %llu kept back, want %llu",
		         (unsigned long long)s->unconnecting, (unsigned long long)s->headers_gated,
		         (unsigned long long)expect);
}

/* An empty headers message from p: answers the handshake's getheaders. */
static void feed_empty_headers(struct tf *t, struct peer *p)
{
	struct proto_writer w;
	proto_writer_init(&w);
	tf_headers_frame(t, &w, NULL, 0);
	assert_int_equal(tf_feed(p, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
	assert_int_equal(p->sync->getheaders_ms, 0);
}

/*
 * A flood of unconnecting single headers draws one getheaders per 2
 * minutes and costs one validation job, not one of each per message
 * (it drew N getheaders and N jobs before); after 2 minutes, or once a
 * connecting header answered, the next one draws a getheaders again.
 */
static void test_unconnecting_flood_one_getheaders(void **state)
{
	struct tf *t = *state;
	struct peer *a = outbound_full_node(t, TF_ADDR, 1000);
	uint64_t a_id = a->id;
	struct tf_sent s;
	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETHEADERS], 1); /* the sync's first */
	tf_sent_free(&s);

	/* Unanswered, the sync's getheaders holds back the next (Core). */
	feed_unconnecting(t, a, 1, 0);
	settle_headers(t, a, 1);
	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETHEADERS], 0);
	tf_sent_free(&s);

	feed_empty_headers(t, a);
	uint64_t jobs0 = posted(t), seen0 = t->d->sync->unconnecting + t->d->sync->headers_gated;
	feed_unconnecting(t, a, N_FLOOD, 1000);
	settle_headers(t, a, seen0 + N_FLOOD);
	tf_read_sent(t, a_id, &s);
	if (s.count[PROTO_CMD_GETHEADERS] != 1)
		fail_msg("%u unconnecting headers drew %u getheaders, want 1", N_FLOOD,
		         s.count[PROTO_CMD_GETHEADERS]);
	tf_sent_free(&s);
	uint64_t jobs = posted(t) - jobs0;
	if (jobs > 1)
		fail_msg("%u unconnecting headers cost %llu validation jobs, want 1", N_FLOOD,
		         (unsigned long long)jobs);
	assert_true(t->d->sync->getheaders_limited + t->d->sync->headers_gated >= N_FLOOD - 1);

	/* Two minutes on, the next one draws a getheaders again. */
	a->sync->getheaders_ms -= SYNC_HEADERS_RESPONSE_MS;
	seen0 = t->d->sync->unconnecting + t->d->sync->headers_gated;
	feed_unconnecting(t, a, 1, 5000);
	settle_headers(t, a, seen0 + 1);
	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETHEADERS], 1);
	tf_sent_free(&s);

	/* A header on genesis connects: it goes through (the index takes
	 * it), answers the getheaders, and the next unconnecting one draws a
	 * getheaders at once. */
	struct proto_block_header h;
	make_header(&h, &t->d->params->genesis_hash, 0, t->d->params);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_headers_frame(t, &w, &h, 1);
	assert_int_equal(tf_feed(a, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while (t->d->sync->best_height < 1 && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	assert_int_equal(t->d->sync->best_height, 1);
	assert_int_equal(a->sync->getheaders_ms, 0);
	seen0 = t->d->sync->unconnecting + t->d->sync->headers_gated;
	feed_unconnecting(t, a, 1, 6000);
	settle_headers(t, a, seen0 + 1);
	tf_read_sent(t, a_id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETHEADERS], 1);
	tf_sent_free(&s);
}

/*
 * The gate keeps back nothing an honest peer sends while its getheaders
 * is out: a header on a block the loop knows (genesis), then one on that
 * header while its job still waits, then one more on the second after
 * both were taken (the peer's best known block). All three reach the
 * index.
 */
static void test_gate_passes_a_chain_of_announcements(void **state)
{
	struct tf *t = *state;
	const struct proto_params *params = t->d->params;
	struct peer *a = outbound_full_node(t, TF_ADDR, 3);
	assert_true(a->sync->getheaders_ms != 0); /* the sync's first, unanswered */
	struct proto_block_header hdr[3];
	struct proto_hash hash[3];
	for (uint32_t i = 0; i < 3; i++) {
		make_header(&hdr[i], i ? &hash[i - 1] : &params->genesis_hash, i, params);
		proto_block_header_hash(&hdr[i], &hash[i]);
	}
	validation_hold(t->d, true);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_headers_frame(t, &w, &hdr[0], 1);
	tf_headers_frame(t, &w, &hdr[1], 1);
	assert_int_equal(tf_feed(a, w.buf, w.len, SIZE_MAX), w.len);
	assert_int_equal(a->sync->hdr_jobs_live, 2);
	validation_hold(t->d, false);
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while ((t->d->sync->best_height < 2 || a->sync->hdr_jobs_live) && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	assert_int_equal(t->d->sync->best_height, 2);
	w.len = 0;
	tf_headers_frame(t, &w, &hdr[2], 1);
	assert_int_equal(tf_feed(a, w.buf, w.len, SIZE_MAX), w.len);
	proto_writer_release(&w);
	while (t->d->sync->best_height < 3 && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	assert_int_equal(t->d->sync->best_height, 3);
	assert_int_equal(t->d->sync->headers_gated, 0);
	assert_int_equal(t->d->sync->unconnecting, 0);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_headers_before_disconnect_start_download,
	                                    tf_setup_chain, tf_teardown_chain),
	    cmocka_unit_test_setup_teardown(test_unconnecting_flood_one_getheaders, tf_setup_chain,
	                                    tf_teardown_chain),
	    cmocka_unit_test_setup_teardown(test_gate_passes_a_chain_of_announcements,
	                                    tf_setup_chain, tf_teardown_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
