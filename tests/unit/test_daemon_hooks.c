/*
 * tests/unit/test_daemon_hooks.c: the validation hooks (issue 19). node/
 * names no room above it: after a job and on a new tip it calls the hooks
 * daemon_init registers (struct node_hooks, daemon/node_hooks.c); sync/
 * serves a getdata's transactions through its own (struct sync_hooks,
 * daemon/sync_hooks.c); node/ and ctl/ ask for a shutdown through
 * daemon_shutdown, which calls the one main.c registers.
 *
 * What is checked: the tables are registered; the validation thread calls
 * feed_take before the first job and after each, and the loop calls
 * ibd_over, then new_tip, before the job's own done (a real regtest
 * chain, one block mined on the validation thread); the wiring's new_tip
 * does txrelay/'s, sync/announce.c's and sync/download.c's parts;
 * sync/serve.c answers a transaction entry through serve_tx, notfound
 * when it says no; daemon_shutdown goes to shutdown_fn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "chain/chain.h"
#include "mining/mining.h"
#include "tests/unit/test_daemon_fixture.h"

/** How long the loop may take to bring a job's results back. */
#define WAIT_MS 10000u

/* ---- recording hooks --------------------------------------------------- */

/* What the recording hooks saw: loop events in order, feed_take calls
 * (validation thread) counted. */
static struct {
	char loop_events[128];
	_Atomic int feed_takes;
	int32_t tip_height, old_height;
	uint32_t n;
	bool ibd;
	struct proto_hash tip;
} rec;

static void rec_event(const char *what)
{
	size_t len = strlen(rec.loop_events);
	snprintf(rec.loop_events + len, sizeof(rec.loop_events) - len, "%s%s", len ? "," : "",
	         what);
}

static void rec_ibd_over(struct daemon *d)
{
	(void)d;
	rec_event("ibd_over");
}

static void rec_new_tip(struct daemon *d, const struct chainview_update *u)
{
	(void)d;
	rec_event("new_tip");
	rec.old_height = u->old_height;
	rec.n = u->n;
	rec.ibd = u->ibd;
	rec.tip = u->recs[u->n - 1].hash;
	rec.tip_height = u->fork_height + (int32_t)u->n;
}

static struct val_job *rec_feed_take(struct daemon *d, struct chain *c, struct mempool *mp)
{
	(void)d;
	(void)c;
	(void)mp;
	rec.feed_takes++;
	return NULL;
}

static const struct node_hooks rec_hooks = {
    .ibd_over = rec_ibd_over,
    .new_tip = rec_new_tip,
    .feed_take = rec_feed_take,
};

/* ---- a block mined on the validation thread --------------------------- */

struct mine_job {
	struct val_job job;
	int err;
	struct proto_hash hash;
	bool done;
};

static void mine_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct mine_job *mj = (struct mine_job *)j;
	(void)mp;
	static const uint8_t op_true[1] = {0x51};
	struct mining_args a = {.spk = op_true, .spk_len = 1, .submit = true};
	uint64_t tries = MINING_MAX_TRIES;
	struct mining_block m;
	struct chain_state st;
	memset(&m, 0, sizeof(m));
	mj->err = c ? mining_generate(c, &a, &tries, &m, &st) : CHAIN_EARG;
	if (!mj->err) {
		mj->hash = m.hash;
		if (m.submitted != CHAIN_SUBMIT_ACCEPTED)
			mj->err = CHAIN_EINVALID;
	}
	mining_block_release(&m);
}

static void mine_done(struct daemon *d, struct val_job *j)
{
	(void)d;
	struct mine_job *mj = (struct mine_job *)j;
	rec_event(j->cancelled ? "cancelled" : "done");
	mj->done = true;
}

static void run_until(struct tf *t, const bool *flag)
{
	uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
	while (!*flag && uv_hrtime() < end) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	if (!*flag)
		fail_msg("the job's result did not come back in %u ms", WAIT_MS);
}

/* ---- the tests ---------------------------------------------------------- */

/* daemon_init registers the wiring's tables, and they name the rooms' functions. */
static void test_daemon_init_registers_the_hooks(void **state)
{
	struct tf *t = *state;
	assert_ptr_equal(t->d->node_hooks, &daemon_node_hooks);
	assert_ptr_equal(t->d->sync->hooks, &daemon_sync_hooks);
	/* The wiring's own: notify/ attaches, then txrelay/'s feed (txrelay_feed_take). */
	assert_non_null(daemon_node_hooks.feed_take);
	assert_non_null(daemon_node_hooks.ibd_over);
	assert_non_null(daemon_node_hooks.new_tip);
	assert_true(daemon_sync_hooks.serve_tx == txrelay_serve);
}

/*
 * A block mined on the validation thread: feed_take before the first job
 * and after it (on that thread); on the loop, the update that left
 * initial block download goes to ibd_over, then new_tip, and both come
 * before the job's own done (its callback sees the chain it made).
 */
static void hooks_after_a_job(bool with_peer)
{
	memset(&rec, 0, sizeof(rec));
	struct tf *t = tf_new();
	t->d->node_hooks = &rec_hooks;
	/* With or without a peer, the hooks are told (-blocknotify needs no peer;
	 * the wiring keeps the peer rooms out while there is none). */
	if (with_peer)
		(void)tf_peer(t, false, "127.0.0.1:18444");
	tf_open_chain(t);
	/* The chain as opened: genesis only, in initial block download. */
	assert_true(t->d->view->ibd);
	assert_int_equal(chainview_height(t->d), 0);

	struct mine_job mj;
	memset(&mj, 0, sizeof(mj));
	mj.job.work = mine_work;
	mj.job.done = mine_done;
	assert_int_equal(validation_post(t->d, &mj.job), 0);
	run_until(t, &mj.done);
	if (mj.err)
		fail_msg("mining a block: %s", chain_strerror(mj.err));

	assert_string_equal(rec.loop_events, "ibd_over,new_tip,done");
	if (rec.feed_takes < 2)
		fail_msg(
		    "feed_take called %d times, want one before the first job and one after it",
		    (int)rec.feed_takes);
	assert_int_equal(rec.old_height, 0);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.tip_height, 1);
	assert_false(rec.ibd);
	assert_memory_equal(&rec.tip, &mj.hash, sizeof(mj.hash));
	assert_int_equal(chainview_height(t->d), 1);

	tf_free_chain(t);
}

static void test_node_calls_the_hooks_after_a_job(void **state)
{
	(void)state;
	hooks_after_a_job(true);
}

static void test_node_calls_the_hooks_without_peers(void **state)
{
	(void)state;
	hooks_after_a_job(false);
}

/* No hooks registered: node/ runs the job and calls nothing. */
static void test_node_without_hooks(void **state)
{
	(void)state;
	memset(&rec, 0, sizeof(rec));
	struct tf *t = tf_new();
	t->d->node_hooks = NULL;
	assert_int_equal(validation_start(t->d, NULL, NULL), 0);
	struct mine_job mj;
	memset(&mj, 0, sizeof(mj));
	mj.job.work = mine_work;
	mj.job.done = mine_done;
	assert_int_equal(validation_post(t->d, &mj.job), 0);
	run_until(t, &mj.done);
	assert_string_equal(rec.loop_events, "done");
	assert_int_equal(rec.feed_takes, 0);
	tf_free(t);
}

/*
 * The wiring's new_tip, with an update out of initial block download:
 * txrelay/ forgets its recent rejects, sync/announce.c sends the tip to a
 * peer past its handshake, sync/download.c posts a window refresh.
 */
static void test_wired_new_tip_does_every_part(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	assert_int_equal(validation_start(d, NULL, NULL), 0);
	/* The refresh job waits: the test only needs to see it posted. */
	validation_hold(d, true);
	assert_int_equal(hset_insert(&d->txr->rejects, 42), 0);
	assert_true(hset_contains(&d->txr->rejects, 42));

	struct chainview_update *u = calloc(1, sizeof(*u) + sizeof(u->recs[0]));
	assert_non_null(u);
	u->fork_height = 0;
	u->old_height = 0;
	u->ibd = false;
	u->n = 1;
	u->recs[0].hash = tf_hash(0x77, 1);
	daemon_node_hooks.new_tip(d, u);
	free(u);

	assert_false(hset_contains(&d->txr->rejects, 42));
	assert_true(d->sync->refresh_posted);
	uv_run(&t->loop, UV_RUN_NOWAIT);
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_INV], 1);
	tf_sent_free(&s);
	/* Still held: the teardown hands the refresh back cancelled (there is no chain to run it
	 * on). */
}

/* The wiring's new_tip with no peer yet: the peer rooms are left alone, as
 * node/ left them before it told the hooks regardless of peers. */
static void test_wired_new_tip_without_peers(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	assert_int_equal(validation_start(d, NULL, NULL), 0);
	validation_hold(d, true);
	assert_int_equal(hset_insert(&d->txr->rejects, 42), 0);
	struct chainview_update *u = calloc(1, sizeof(*u) + sizeof(u->recs[0]));
	assert_non_null(u);
	u->fork_height = 0;
	u->old_height = 0;
	u->ibd = false;
	u->n = 1;
	u->recs[0].hash = tf_hash(0x77, 1);
	daemon_node_hooks.new_tip(d, u);
	free(u);
	assert_true(hset_contains(&d->txr->rejects, 42));
	assert_false(d->sync->refresh_posted);
}

/* serve_tx answers a transaction entry; false is a notfound, in order. */
static int serve_calls;
static struct proto_hash serve_seen[4];

static bool rec_serve_tx(struct peer *p, const struct proto_inv_vec *v)
{
	(void)p;
	if (serve_calls < 4)
		serve_seen[serve_calls] = v->hash;
	serve_calls++;
	/* The first is "sent", the others are not there. */
	return serve_calls == 1;
}

static const struct sync_hooks rec_sync_hooks = {.serve_tx = rec_serve_tx};

static void test_serve_tx_through_the_hook(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	d->sync->hooks = &rec_sync_hooks;
	serve_calls = 0;
	struct proto_inv_vec v[3] = {
	    {.type = PROTO_INV_WTX, .hash = tf_hash(0x11, 1)},
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x11, 2)},
	    {.type = PROTO_INV_TX | PROTO_INV_WITNESS_FLAG, .hash = tf_hash(0x11, 3)},
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(serve_queue(p, &v[i]), 0);
	serve_next(p);
	assert_int_equal(serve_calls, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&serve_seen[i], &v[i].hash, sizeof(v[i].hash));
	uv_run(&t->loop, UV_RUN_NOWAIT);
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.n_notfound, 2);
	assert_memory_equal(&s.notfound[0].hash, &v[1].hash, sizeof(v[1].hash));
	assert_memory_equal(&s.notfound[1].hash, &v[2].hash, sizeof(v[2].hash));
	tf_sent_free(&s);

	/* No hook: every transaction entry is a notfound. */
	d->sync->hooks = NULL;
	serve_calls = 0;
	assert_int_equal(serve_queue(p, &v[0]), 0);
	serve_next(p);
	assert_int_equal(serve_calls, 0);
	uv_run(&t->loop, UV_RUN_NOWAIT);
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.n_notfound, 1);
	tf_sent_free(&s);
}

/* daemon_shutdown calls the registered shutdown; without one it only sets the flag. */
static void test_daemon_shutdown_calls_the_registered_one(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	assert_true(d->shutdown_fn == tf_record_shutdown);
	daemon_shutdown(d, "lack of disk space");
	assert_int_equal(tf_shutdown_calls, 1);
	assert_string_equal(tf_shutdown_why, "lack of disk space");

	d->shutdown_fn = NULL;
	d->shutting_down = false;
	daemon_shutdown(d, "stop requested on the control socket");
	assert_true(d->shutting_down);
	assert_int_equal(tf_shutdown_calls, 1);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_daemon_init_registers_the_hooks, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test(test_node_calls_the_hooks_after_a_job),
	    cmocka_unit_test(test_node_calls_the_hooks_without_peers),
	    cmocka_unit_test(test_node_without_hooks),
	    cmocka_unit_test_setup_teardown(test_wired_new_tip_does_every_part, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_wired_new_tip_without_peers, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_serve_tx_through_the_hook, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_daemon_shutdown_calls_the_registered_one, tf_setup,
	                                    tf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
