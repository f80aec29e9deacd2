/*
 * tests/unit/test_notify.c: what daemon/notify/ relies on below the
 * daemon: the mempool's second listener (mempool_listen), which the ZMQ
 * sequence topic reads with the pool's sequence number, and Core's
 * AlertNotify substitution (notify_alert_command).
 */
#include "tests/unit/test_mempool_fixture.h"

#include <errno.h>

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

static void test_second_listener(void **state)
{
	struct fixture *f = *state;
	struct seen s = {.mp = f->mp};
	struct mempool_events ev = {.added = seen_added, .removed = seen_removed, .arg = &s};
	assert_int_equal(mempool_listen(f->mp, &ev), 0);
	/* One extra listener: a third is refused, the second stays. */
	assert_int_equal(mempool_listen(f->mp, &ev), CHAIN_EOVERFLOW);

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
	    cmocka_unit_test(test_alert_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
