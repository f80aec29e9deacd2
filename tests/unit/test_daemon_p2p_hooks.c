/*
 * tests/unit/test_daemon_p2p_hooks.c: p2p/'s hooks (struct p2p_hooks,
 * daemon/p2p/p2p.h; the table in daemon/p2p_hooks.c). daemon_init registers a
 * table with every hook set; p2p/ reaches the rooms above it through
 * whatever table is registered, in the order of the message: a recording
 * table here stands in for sync/ and txrelay/ and sees every call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "tests/unit/test_daemon_fixture.h"

/* ---- a recording table ---------------------------------------------------- */

enum ev_kind { EV_READY, EV_GONE, EV_BLOCK, EV_TX, EV_NOTFOUND, EV_QUEUE, EV_DONE, EV_GDTX };

static const char *const ev_names[] = {"peer_ready",   "peer_gone",   "block_announced",
                                       "tx_announced", "tx_notfound", "getdata_queue",
                                       "getdata_done", "getdata_tx"};

struct ev {
	enum ev_kind kind;
	uint64_t peer;
	struct proto_hash hash; /* zero for the hooks without one */
};

static struct ev evs[64];
static unsigned n_evs;
/* What the getdata_tx stub answers (true: "sent", no notfound). */
static bool gdtx_sends;

static void rec(enum ev_kind k, const struct peer *p, const struct proto_hash *h)
{
	assert_true(n_evs < sizeof(evs) / sizeof(evs[0]));
	evs[n_evs].kind = k;
	evs[n_evs].peer = p->id;
	memset(&evs[n_evs].hash, 0, sizeof(evs[n_evs].hash));
	if (h)
		evs[n_evs].hash = *h;
	n_evs++;
}

static void h_ready(struct peer *p)
{
	rec(EV_READY, p, NULL);
}
/* Whether the known inventory was still there when peer_gone ran. */
static bool gone_saw_known;
static void h_gone(struct peer *p)
{
	gone_saw_known = p->p2p->known_inv != NULL;
	rec(EV_GONE, p, NULL);
}
static void h_block(struct peer *p, const struct proto_hash *h)
{
	rec(EV_BLOCK, p, h);
}
/* As the tracker does: ask p for it, into p2p's batch. */
static void h_tx(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms)
{
	(void)now_ms;
	rec(EV_TX, p, &v->hash);
	assert_int_equal(inv_batch_add(p->d, v), 0);
}
static void h_notfound(struct peer *p, const struct proto_inv_vec *v)
{
	rec(EV_NOTFOUND, p, &v->hash);
}
static int h_queue(struct peer *p, const struct proto_inv_vec *v)
{
	rec(EV_QUEUE, p, &v->hash);
	return 0;
}
static void h_done(struct peer *p)
{
	rec(EV_DONE, p, NULL);
}
static bool h_gdtx(struct peer *p, const struct proto_inv_vec *v)
{
	rec(EV_GDTX, p, &v->hash);
	return gdtx_sends;
}

static const struct p2p_hooks recording = {
    .peer_ready = h_ready,
    .peer_gone = h_gone,
    .block_announced = h_block,
    .tx_announced = h_tx,
    .tx_notfound = h_notfound,
    .getdata_queue = h_queue,
    .getdata_done = h_done,
    .getdata_tx = h_gdtx,
};

static int rec_setup(void **state)
{
	tf_setup(state);
	struct tf *t = *state;
	t->d->p2p_hooks = &recording;
	n_evs = 0;
	gdtx_sends = false;
	gone_saw_known = false;
	return 0;
}

static void expect(unsigned i, enum ev_kind k, const struct peer *p, const struct proto_hash *h)
{
	if (i >= n_evs)
		fail_msg("call %u: none (%u calls), want %s", i, n_evs, ev_names[k]);
	if (evs[i].kind != k || evs[i].peer != p->id)
		fail_msg("call %u: %s for peer %llu, want %s for peer %llu", i,
		         ev_names[evs[i].kind], (unsigned long long)evs[i].peer, ev_names[k],
		         (unsigned long long)p->id);
	if (h && memcmp(evs[i].hash.b, h->b, 32))
		fail_msg("call %u (%s): another hash", i, ev_names[k]);
}

static void send_inv(struct peer *p, enum proto_cmd cmd, const struct proto_inv_vec *v, uint32_t n)
{
	static struct proto_msg m; /* large; handlers only read cmd and inv */
	memset(&m, 0, sizeof(m));
	m.cmd = cmd;
	m.inv.v = (struct proto_inv_vec *)v;
	m.inv.n = m.inv.cap = n;
	inv_on_msg(p, &m);
}

/* ---- the registered table --------------------------------------------------- */

static void test_daemon_init_registers_every_hook(void **state)
{
	struct tf *t = *state;
	const struct p2p_hooks *h = t->d->p2p_hooks;
	assert_ptr_equal(h, &daemon_p2p_hooks);
	assert_non_null(h->peer_ready);
	assert_non_null(h->peer_gone);
	assert_non_null(h->block_announced);
	assert_non_null(h->tx_announced);
	assert_non_null(h->tx_notfound);
	assert_non_null(h->getdata_queue);
	assert_non_null(h->getdata_done);
	assert_non_null(h->getdata_tx);
}

/* ---- p2p/ calls through whatever is registered -------------------------------- */

/* One inv: each entry to its hook in order; known and unknown kinds get
 * none; the requests the hook made leave as one getdata at the end. */
static void test_inv_entries_in_order(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	struct proto_inv_vec v[] = {
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x21, 0)},
	    {.type = PROTO_INV_BLOCK, .hash = tf_hash(0x21, 1)},
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x21, 0)},  /* known now */
	    {.type = 7, .hash = tf_hash(0x21, 2)},             /* unknown kind */
	    {.type = PROTO_INV_WTX, .hash = tf_hash(0x21, 3)}, /* not p's kind */
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x21, 4)},
	};
	send_inv(p, PROTO_CMD_INV, v, 6);
	assert_int_equal(n_evs, 3);
	expect(0, EV_TX, p, &v[0].hash);
	expect(1, EV_BLOCK, p, &v[1].hash);
	expect(2, EV_TX, p, &v[5].hash);
	assert_true(inv_known_has(p, &v[1].hash));
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETDATA], 1);
	assert_int_equal(s.n_getdata, 2);
	assert_memory_equal(s.getdata[0].hash.b, v[0].hash.b, 32);
	assert_memory_equal(s.getdata[1].hash.b, v[5].hash.b, 32);
	tf_sent_free(&s);
}

/* During initial block download no transaction goes up; blocks still do. */
static void test_inv_ibd_only_blocks(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	t->d->view->ibd = true;
	struct proto_inv_vec v[] = {
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x22, 0)},
	    {.type = PROTO_INV_BLOCK, .hash = tf_hash(0x22, 1)},
	};
	send_inv(p, PROTO_CMD_INV, v, 2);
	assert_int_equal(n_evs, 1);
	expect(0, EV_BLOCK, p, &v[1].hash);
}

static void test_notfound_each_entry(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	struct proto_inv_vec v[] = {
	    {.type = PROTO_INV_TX, .hash = tf_hash(0x23, 0)},
	    {.type = PROTO_INV_WTX, .hash = tf_hash(0x23, 1)},
	};
	send_inv(p, PROTO_CMD_NOTFOUND, v, 2);
	assert_int_equal(n_evs, 2);
	expect(0, EV_NOTFOUND, p, &v[0].hash);
	expect(1, EV_NOTFOUND, p, &v[1].hash);
	assert_int_equal(t->d->stats.notfound_recv, 2);
}

/* No chain open (the fixture's): transactions go to getdata_tx, and what
 * it does not send is answered with notfound here. */
static void test_getdata_tx_without_chain(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	struct proto_inv_vec v[] = {
	    {.type = PROTO_INV_WITNESS_TX, .hash = tf_hash(0x24, 0)},
	    {.type = PROTO_INV_BLOCK, .hash = tf_hash(0x24, 1)}, /* unknown block: nothing */
	    {.type = PROTO_INV_WTX, .hash = tf_hash(0x24, 2)},
	};
	send_inv(p, PROTO_CMD_GETDATA, v, 3);
	assert_int_equal(n_evs, 2);
	expect(0, EV_GDTX, p, &v[0].hash);
	expect(1, EV_GDTX, p, &v[2].hash);
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.n_notfound, 2);
	tf_sent_free(&s);

	n_evs = 0;
	gdtx_sends = true;
	send_inv(p, PROTO_CMD_GETDATA, v, 1);
	assert_int_equal(n_evs, 1);
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.n_notfound, 0);
	tf_sent_free(&s);
}

/* verack ends the handshake: peer_ready, once. */
static void test_verack_peer_ready(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	p->state = PEER_HANDSHAKE;
	p->handshake_done = false;
	static struct proto_msg m;
	memset(&m, 0, sizeof(m));
	m.cmd = PROTO_CMD_VERACK;
	handshake_on_verack(p, &m);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(n_evs, 1);
	expect(0, EV_READY, p, NULL);
	/* A redundant verack changes nothing. */
	handshake_on_verack(p, &m);
	assert_int_equal(n_evs, 1);
}

/* A closing peer: peer_gone first, then p2p frees the known inventory. */
static void test_peer_gone_before_known_freed(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, "203.0.113.1:1");
	struct proto_hash h = tf_hash(0x25, 0);
	inv_known_add(p, &h);
	inv_peer_gone(p);
	assert_int_equal(n_evs, 1);
	expect(0, EV_GONE, p, NULL);
	assert_true(gone_saw_known);
	assert_null(p->p2p->known_inv);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_daemon_init_registers_every_hook, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_inv_entries_in_order, rec_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_inv_ibd_only_blocks, rec_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_notfound_each_entry, rec_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_getdata_tx_without_chain, rec_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_verack_peer_ready, rec_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_peer_gone_before_known_freed, rec_setup,
	                                    tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
