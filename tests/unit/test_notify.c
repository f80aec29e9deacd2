/*
 * tests/unit/test_notify.c: what daemon/notify/ does below the daemon:
 * the mempool's second listener (mempool_listen), which the ZMQ sequence
 * topic reads with the pool's sequence number; the validation thread's
 * side of ZMQ (zmq_events.c) on a real regtest chain and pool, read back
 * from the publisher's queue with no socket; and Core's AlertNotify
 * substitution (notify_alert_command).
 */
#include "tests/unit/test_mempool_fixture.h"

#include <errno.h>

#include "daemon/notify/internal.h"
#include "daemon/notify/notify.h"

/* What the second listener saw: each event's label and the pool's sequence then. */
struct seen {
	struct mempool *mp;
	char label[16];
	uint64_t seq[16];
	struct proto_hash txid[16];
	unsigned n;
};

static void seen_push(struct seen *s, char label, const struct mempool_entry *e)
{
	assert_true(s->n < 16);
	s->label[s->n] = label;
	s->seq[s->n] = mempool_sequence(s->mp);
	s->txid[s->n] = *mempool_entry_txid(e);
	s->n++;
}

static void seen_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	(void)how;
	seen_push(arg, 'A', e);
}

static void seen_removed(void *arg, const struct mempool_entry *e, enum mempool_removal why)
{
	seen_push(arg,
	          why == MEMPOOL_REMOVED_REPLACED ? 'R'
	          : why == MEMPOOL_REMOVED_BLOCK  ? 'B'
	                                          : '?',
	          e);
}

static void ignore_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	(void)arg;
	(void)e;
	(void)how;
}

static void test_second_listener(void **state)
{
	struct fixture *f = *state;
	struct seen s = {.mp = f->mp};
	struct mempool_events ev = {.added = seen_added, .removed = seen_removed, .arg = &s};
	assert_int_equal(mempool_listen(f->mp, &ev), 0);
	/* Two extra listeners (ZMQ and the fee estimator): a silent one fills
	 * the other slot, one more is refused, and the ones there stay. */
	struct mempool_events quiet = {.added = ignore_added};
	assert_int_equal(mempool_listen(f->mp, &quiet), 0);
	assert_int_equal(mempool_listen(f->mp, &quiet), CHAIN_EOVERFLOW);

	uint64_t seq0 = mempool_sequence(f->mp);
	struct proto_tx a, b;
	spend1(&a, &f->cb[1], 0, CB_VALUE, 1000);
	accept_ok(f, &a);
	/* A replacement: the replaced one leaves (R), then the new one enters (A). */
	spend1(&b, &f->cb[1], 0, CB_VALUE, 50000);
	accept_ok(f, &b);
	mine_pool(f);

	/* Both listeners heard everything: the fixture's counters too. */
	assert_int_equal(f->added[MEMPOOL_ADDED_ACCEPT], 2);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_REPLACED], 1);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_BLOCK], 1);
	assert_int_equal(s.n, 4);
	assert_memory_equal(s.label, "ARAB", 4);
	assert_true(proto_hash_eq(&s.txid[0], &a.txid));
	assert_true(proto_hash_eq(&s.txid[1], &a.txid));
	assert_true(proto_hash_eq(&s.txid[2], &b.txid));
	assert_true(proto_hash_eq(&s.txid[3], &b.txid));
	/* Each event comes after its bump: Core's number is the one before it. */
	for (unsigned i = 0; i < s.n; i++)
		assert_int_equal(s.seq[i], seq0 + i + 1);
	proto_tx_release(&a);
	proto_tx_release(&b);
}

/* The notify state by hand: two topics, no sockets (only the queue is read). */
static struct notify_state zs;
static struct daemon zd;
static struct notify_zmq_pub zpubs[3] = {
    {.topic = CONF_ZMQ_HASHBLOCK, .address = "a"},
    {.topic = CONF_ZMQ_HASHTX, .address = "a"},
    {.topic = CONF_ZMQ_SEQUENCE, .address = "a"},
};

/* The next queued message, taken off the queue (the test is the publisher). */
static struct notify_msg *zpop(void)
{
	struct notify_msg *m = zs.head;
	if (!m)
		fail_msg("the queue is empty");
	zs.head = m->next;
	if (!zs.head)
		zs.tail = &zs.head;
	return m;
}

static void reversed_hex(const uint8_t *b, char out[65])
{
	struct proto_hash h;
	/* The body is in display order; proto_hash_to_hex prints a hash in it. */
	for (int i = 0; i < 32; i++)
		h.b[i] = b[31 - i];
	proto_hash_to_hex(&h, out);
}

static void expect_hash(const char *topic, const struct proto_hash *want)
{
	struct notify_msg *m = zpop();
	assert_string_equal(m->topic, topic);
	assert_int_equal(m->len, 32);
	char got[65], exp[65];
	reversed_hex(m->body, got);
	proto_hash_to_hex(want, exp);
	assert_string_equal(got, exp);
	free(m);
}

static void expect_seq(const struct proto_hash *want, char label, uint64_t seq)
{
	struct notify_msg *m = zpop();
	assert_string_equal(m->topic, "sequence");
	char got[65], exp[65];
	reversed_hex(m->body, got);
	proto_hash_to_hex(want, exp);
	assert_string_equal(got, exp);
	assert_int_equal(m->body[32], label);
	if (label == 'A' || label == 'R') {
		assert_int_equal(m->len, 41);
		uint64_t n = 0;
		for (int i = 7; i >= 0; i--)
			n = n << 8 | m->body[33 + i];
		assert_int_equal(n, seq);
	} else {
		assert_int_equal(m->len, 33);
	}
	free(m);
}

static void test_zmq_events(void **state)
{
	struct fixture *f = *state;
	memset(&zs, 0, sizeof(zs));
	memset(&zd, 0, sizeof(zd));
	zd.notify = &zs;
	zs.d = &zd;
	zs.zctx = &zs; /* "on": never used as a context here */
	zs.pubs = zpubs;
	zs.n_pubs = 3;
	zs.wants = 1u << CONF_ZMQ_HASHBLOCK | 1u << CONF_ZMQ_HASHTX | 1u << CONF_ZMQ_SEQUENCE;
	zs.tail = &zs.head;
	zs.max_bytes = NOTIFY_ZMQ_QUEUE_BYTES;
	zs.max_msgs = NOTIFY_ZMQ_QUEUE_MSGS;
	assert_int_equal(uv_mutex_init(&zs.mu), 0);
	assert_int_equal(uv_cond_init(&zs.cv), 0);

	/* a entered before we listened (as mempool.dat's transactions do). */
	struct proto_tx a, b;
	spend1(&a, &f->cb[1], 0, CB_VALUE, 1000);
	uint64_t seq_a = mempool_sequence(f->mp);
	accept_ok(f, &a);
	notify_zmq_attach(&zd, f->c, f->mp);
	expect_hash("hashtx", &a.txid);
	expect_seq(&a.txid, 'A', seq_a);
	assert_null(zs.head);

	/* An accept: hashtx, then A with the sequence before its bump. */
	spend1(&b, &f->cb[2], 0, CB_VALUE, 1000);
	uint64_t seq_b = mempool_sequence(f->mp);
	accept_ok(f, &b);
	expect_hash("hashtx", &b.txid);
	expect_seq(&b.txid, 'A', seq_b);

	/* A block: every transaction's hashtx, C, then the tip's hashblock; no R. */
	mine_pool(f);
	struct chain_node *tip = chain_tip(f->c);
	struct proto_block blk;
	proto_block_init(&blk);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(chain_read_block(f->c, tip, &raw, &len), 0);
	assert_int_equal(proto_block_decode(raw, len, &blk, NULL), 0);
	free(raw);
	assert_int_equal(blk.n_tx, 3);
	for (uint32_t i = 0; i < blk.n_tx; i++)
		expect_hash("hashtx", proto_tx_txid(&blk.txs[i]));
	expect_seq(&tip->hash, 'C', 0);
	expect_hash("hashblock", &tip->hash);
	assert_null(zs.head);
	/* Each notifier numbered its own messages. */
	assert_int_equal(zpubs[0].seq, 1);
	assert_int_equal(zpubs[1].seq, 5);
	assert_int_equal(zpubs[2].seq, 3);

	proto_block_release(&blk);
	proto_tx_release(&a);
	proto_tx_release(&b);
	uv_cond_destroy(&zs.cv);
	uv_mutex_destroy(&zs.mu);
}

static void test_alert_command(void **state)
{
	(void)state;
	char out[128];
	/* Core's SanitizeString (SAFE_CHARS_DEFAULT), then single quotes around it. */
	assert_int_equal(notify_alert_command("echo %s >> log; echo %s", "Warn: 'x' <b>$(rm)` ok!",
	                                      out, sizeof(out)),
	                 0);
	assert_string_equal(out, "echo 'Warn: x b(rm) ok' >> log; echo 'Warn: x b(rm) ok'");
	assert_int_equal(notify_alert_command("no placeholder", "m", out, sizeof(out)), 0);
	assert_string_equal(out, "no placeholder");
	/* Too long for the buffer: refused, never cut. */
	assert_int_equal(notify_alert_command("echo %s", "0123456789", out, 12), -ENOSPC);
	assert_int_equal(notify_alert_command("echo %s", "0123", out, 12), 0);
	assert_string_equal(out, "echo '0123'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_second_listener, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zmq_events, setup, teardown),
	    cmocka_unit_test(test_alert_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
