/*
 * tests/unit/test_chain_listener.c: chain listeners (chain_listen), the
 * seam the mempool hangs on. On Core's regtest chain: every listener hears
 * each connected block, each disconnected block (newest first, while it
 * is still the tip) and the settled chain after it, in registration
 * order; unlisten; the table's limit; a
 * listener's failure on a disconnect stops the reorg with its error; a
 * new block on the tip told before it is connected, out of initial block
 * download only (Core's NewPoWValidBlock); and
 * chain_config's attach, which registers inside chain_open (so the
 * listener hears what the open activates) and is let go of at close.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"
#include "tests/unit/testutil_regtest.h"

/* One event as a listener heard it: who, what ('C', 'D', 'S') and the tip's height then. */
struct event {
	char who, what;
	int32_t height;
};

struct log {
	struct event ev[64];
	size_t n;
};

struct ear {
	char who;
	struct log *log;
	int fail_disconnect; /* returned by block_disconnected when not 0 */
	int closed;          /* chain_closed calls */
	int fail_attach;     /* returned by attach after registering */
};

struct fixture {
	struct tu_regtest r;
	struct log log;
};

static void note(struct ear *e, struct chain *c, char what)
{
	assert_true(e->log->n < sizeof(e->log->ev) / sizeof(e->log->ev[0]));
	e->log->ev[e->log->n++] = (struct event){e->who, what, chain_height(c)};
}

static bool is_tip(struct chain *c, const struct proto_block *b)
{
	struct proto_hash h;
	proto_block_header_hash(&b->hdr, &h);
	return proto_hash_eq(&chain_tip(c)->hash, &h);
}

static void on_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	/* The block handed over is the new tip. */
	assert_true(is_tip(c, b));
	note(ctx, c, 'C');
}

static int on_disconnected(void *ctx, struct chain *c, struct proto_block *b)
{
	struct ear *e = ctx;
	/* Told before the tip moves back: b is still the tip. */
	assert_true(is_tip(c, b));
	note(e, c, 'D');
	return e->fail_disconnect;
}

static int on_settled(void *ctx, struct chain *c)
{
	note(ctx, c, 'S');
	return 0;
}

static void on_closed(void *ctx, struct chain *c)
{
	(void)c;
	((struct ear *)ctx)->closed++;
}

static struct chain_listener listener(struct ear *e)
{
	return (struct chain_listener){.block_connected = on_connected,
	                               .block_disconnected = on_disconnected,
	                               .chain_settled = on_settled,
	                               .chain_closed = on_closed,
	                               .ctx = e};
}

/* chain_config's attach: register e inside chain_open. */
static int attach(void *arg, struct chain *c)
{
	struct ear *e = arg;
	struct chain_listener l = listener(e);
	assert_int_equal(chain_listen(c, &l), 0);
	return e->fail_attach;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	tu_regtest_open(&f->r, "listener");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tu_regtest_free(&f->r);
	free(f);
	return 0;
}

/* The log's events other than 'S' as "who what height ..." for one listener (0: all). */
static void render(const struct log *log, char who, bool settled, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; i < log->n; i++) {
		const struct event *e = &log->ev[i];
		if ((who && e->who != who) || (!settled && e->what == 'S'))
			continue;
		int n = snprintf(out + k, cap - k, "%s%c%c%d", k ? " " : "", e->who, e->what,
		                 (int)e->height);
		assert_true(n > 0 && (size_t)n < cap - k);
		k += (size_t)n;
	}
}

static void test_events_in_order(void **state)
{
	struct fixture *f = *state;
	struct ear a = {.who = 'a', .log = &f->log}, b = {.who = 'b', .log = &f->log};
	struct chain_listener la = listener(&a), lb = listener(&b);
	assert_int_equal(chain_listen(f->r.c, &la), 0);
	assert_int_equal(chain_listen(f->r.c, &lb), 0);

	char got[512];
	tu_regtest_submit(&f->r, 0, 3);
	/* Each block to a, then to b; each submission ends settled at its height. */
	render(&f->log, 0, true, got, sizeof(got));
	assert_string_equal(got, "aC1 bC1 aS1 bS1 aC2 bC2 aS2 bS2 aC3 bC3 aS3 bS3");

	/* invalidateblock 2: 3 then 2 leave while still the tip, then the chain settles at 1. */
	f->log.n = 0;
	struct chain_state st;
	chain_state_clear(&st);
	struct chain_node *n2 = chain_at(f->r.c, 2);
	assert_int_equal(chain_invalidate(f->r.c, n2, &st), 0);
	render(&f->log, 'a', true, got, sizeof(got));
	assert_string_equal(got, "aD3 aD2 aS1");
	render(&f->log, 0, false, got, sizeof(got));
	assert_string_equal(got, "aD3 bD3 aD2 bD2");

	/* reconsiderblock: both come back, oldest first, then the chain settles. */
	f->log.n = 0;
	assert_int_equal(chain_reconsider(f->r.c, n2, &st), 0);
	render(&f->log, 'b', true, got, sizeof(got));
	assert_string_equal(got, "bC2 bC3 bS3");

	/* Unlistened, b hears no more; a still does. */
	chain_unlisten(f->r.c, &b);
	f->log.n = 0;
	tu_regtest_submit(&f->r, 3, 4);
	render(&f->log, 0, true, got, sizeof(got));
	assert_string_equal(got, "aC4 aS4");
}

static void test_table_is_bounded(void **state)
{
	struct fixture *f = *state;
	struct ear e[CHAIN_MAX_LISTENERS + 1];
	for (size_t i = 0; i <= CHAIN_MAX_LISTENERS; i++) {
		e[i] = (struct ear){.who = (char)('a' + i), .log = &f->log};
		struct chain_listener l = listener(&e[i]);
		assert_int_equal(chain_listen(f->r.c, &l),
		                 i < CHAIN_MAX_LISTENERS ? 0 : CHAIN_EOVERFLOW);
	}
	/* Forgetting the first keeps the others in their order and makes room. */
	chain_unlisten(f->r.c, &e[0]);
	struct chain_listener l = listener(&e[CHAIN_MAX_LISTENERS]);
	assert_int_equal(chain_listen(f->r.c, &l), 0);
	char got[512];
	tu_regtest_submit(&f->r, 0, 1);
	render(&f->log, 0, false, got, sizeof(got));
	char want[64] = "";
	for (size_t i = 1; i <= CHAIN_MAX_LISTENERS; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%cC1",
		         i > 1 ? " " : "", (char)('a' + i));
	assert_string_equal(got, want);
}

static void test_disconnect_failure_stops_reorg(void **state)
{
	struct fixture *f = *state;
	struct ear a = {.who = 'a', .log = &f->log, .fail_disconnect = CHAIN_ENOMEM};
	struct chain_listener la = listener(&a);
	tu_regtest_submit(&f->r, 0, 3);
	assert_int_equal(chain_listen(f->r.c, &la), 0);
	struct chain_state st;
	chain_state_clear(&st);
	/* The error comes back from the disconnect as it did from the mempool's. */
	assert_int_equal(chain_invalidate(f->r.c, chain_at(f->r.c, 2), &st), CHAIN_ENOMEM);
	char got[64];
	render(&f->log, 0, true, got, sizeof(got));
	assert_string_equal(got, "aD3");
}

static void test_attached_in_open(void **state)
{
	struct fixture *f = *state;
	/* The fixture's chain has its genesis: a second directory starts empty. */
	char dir[TU_TMPDIR_MAX];
	tu_tmpdir(dir, "listener-open");
	struct ear e = {.who = 'e', .log = &f->log};
	struct chain_config cfg = {.params = proto_params(PROTO_NET_REGTEST),
	                           .dir = dir,
	                           .par = 1,
	                           .attach = attach,
	                           .attach_arg = &e};
	struct chain *c = NULL;
	assert_int_equal(chain_open(&c, &cfg), 0);
	/* Attached before the activation: it heard the open's chain settle
	 * (genesis is stored, not connected); one registered after chain_open
	 * hears nothing of it. */
	char got[128];
	render(&f->log, 0, true, got, sizeof(got));
	assert_string_equal(got, "eS0");
	/* Still registered at close: told so, once. */
	assert_int_equal(e.closed, 0);
	assert_int_equal(chain_close(c), 0);
	assert_int_equal(e.closed, 1);

	/* A failing attach fails the open, and what it registered is let go. */
	struct ear bad = {.who = 'x', .log = &f->log, .fail_attach = CHAIN_ENOMEM};
	cfg.attach_arg = &bad;
	c = NULL;
	assert_int_equal(chain_open(&c, &cfg), CHAIN_ENOMEM);
	assert_null(c);
	assert_int_equal(bad.closed, 1);
	tu_rmtree(dir);
}

static void test_unlistened_not_told_of_close(void **state)
{
	struct fixture *f = *state;
	struct ear a = {.who = 'a', .log = &f->log};
	struct chain_listener la = listener(&a);
	assert_int_equal(chain_listen(f->r.c, &la), 0);
	chain_unlisten(f->r.c, &a);
	assert_int_equal(chain_close(f->r.c), 0);
	f->r.c = NULL;
	assert_int_equal(a.closed, 0);
}

/* new_pow_valid_block: 'N' with the tip's height then (the parent's). */
static void on_pow_valid(void *ctx, struct chain *c, const struct chain_node *n,
                         struct proto_block *b)
{
	struct proto_hash h;
	proto_block_header_hash(&b->hdr, &h);
	assert_true(proto_hash_eq(&h, &n->hash));
	/* Before it is stored and connected: its parent is the tip. */
	assert_ptr_equal(n->prev, chain_tip(c));
	assert_false(n->status & CHAIN_HAVE_DATA);
	note(ctx, c, 'N');
}

static void test_new_pow_valid_block(void **state)
{
	struct fixture *f = *state;
	struct ear a = {.who = 'a', .log = &f->log};
	struct chain_listener la = {
	    .block_connected = on_connected, .new_pow_valid_block = on_pow_valid, .ctx = &a};
	assert_int_equal(chain_listen(f->r.c, &la), 0);
	char got[256];
	/* In initial block download (the vector's blocks are old): not told. */
	tu_regtest_submit(&f->r, 0, 2);
	render(&f->log, 0, false, got, sizeof(got));
	assert_string_equal(got, "aC1 aC2");
	/* Out of it (the clock at the blocks' time): told before each connect. */
	f->log.n = 0;
	const uint8_t *hdr = f->r.blocks.blk[3];
	int64_t t = (int64_t)((uint32_t)hdr[68] | (uint32_t)hdr[69] << 8 | (uint32_t)hdr[70] << 16 |
	                      (uint32_t)hdr[71] << 24);
	base_clock_set_mock(t + 60);
	tu_regtest_submit(&f->r, 2, 4);
	render(&f->log, 0, false, got, sizeof(got));
	assert_string_equal(got, "aN2 aC3 aN3 aC4");
	/* A block already stored is not news. */
	f->log.n = 0;
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(f->r.blocks.blk[3], f->r.blocks.len[3], &b, NULL), 0);
	enum chain_submit res;
	assert_int_equal(
	    chain_submit_block(f->r.c, f->r.blocks.blk[3], f->r.blocks.len[3], &b, &res, NULL), 0);
	assert_int_equal(res, CHAIN_SUBMIT_DUPLICATE);
	proto_block_release(&b);
	assert_int_equal(f->log.n, 0);
	base_clock_set_mock(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_events_in_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_is_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disconnect_failure_stops_reorg, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_attached_in_open, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unlistened_not_told_of_close, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_new_pow_valid_block, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
