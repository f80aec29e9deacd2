/*
 * tests/unit/test_daemon_extratxn.c: the ring of extra transactions for
 * compact blocks (daemon/node/extratxn.c, Core's vExtraTxnForCompact):
 * -blockreconstructionextratxn slots made at the first add, each add
 * overwriting the oldest, the walk in slot order as Core's; 0 keeps
 * nothing; bytes that are no transaction take no slot. The test's thread
 * stands in for the validation thread (none is started), so the ring is
 * its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "tests/unit/test_daemon_fixture.h"

/* A one-input, one-output legacy transaction whose output is worth `value`. */
static size_t make_tx(uint8_t *out, uint8_t value)
{
	size_t n = 0;
	static const uint8_t head[] = {1, 0, 0, 0, 1};
	memcpy(out + n, head, sizeof(head));
	n += sizeof(head);
	memset(out + n, value, 32); /* prevout txid */
	n += 32;
	memset(out + n, 0, 4); /* prevout index */
	n += 4;
	out[n++] = 0;             /* empty scriptSig */
	memset(out + n, 0xff, 4); /* sequence */
	n += 4;
	out[n++] = 1;          /* one output */
	memset(out + n, 0, 8); /* value, little-endian */
	out[n] = value;
	n += 8;
	out[n++] = 1;          /* script length */
	out[n++] = 0x51;       /* OP_TRUE */
	memset(out + n, 0, 4); /* locktime */
	n += 4;
	return n;
}

static void add(struct daemon *d, uint8_t value)
{
	uint8_t raw[128];
	node_extratxn_add_raw(d, raw, make_tx(raw, value));
}

/* The value of slot i's transaction's output, or -1 when empty. */
static int slot_value(struct daemon *d, uint32_t i)
{
	const struct proto_tx *tx = node_extratxn_at(d, i);
	return tx ? (int)tx->vout[0].value : -1;
}

static void test_ring_overwrites_the_oldest(void **state)
{
	(void)state;
	struct tf *t = tf_new();
	struct daemon *d = t->d;
	t->conf.blockreconstructionextratxn = 3;
	assert_int_equal(node_extratxn_count(d), 0);
	add(d, 1);
	assert_int_equal(node_extratxn_count(d), 3);
	assert_int_equal(slot_value(d, 0), 1);
	assert_int_equal(slot_value(d, 1), -1);
	add(d, 2);
	add(d, 3);
	add(d, 4); /* the fourth takes the first's slot */
	assert_int_equal(slot_value(d, 0), 4);
	assert_int_equal(slot_value(d, 1), 2);
	assert_int_equal(slot_value(d, 2), 3);
	assert_int_equal(node_extratxn_added(d), 4);
	/* ids computed: the walk hands out wtxids without hashing */
	const struct proto_tx *tx = node_extratxn_at(d, 1);
	assert_true(tx->ids_valid);
	uint8_t raw[128];
	size_t len = make_tx(raw, 2);
	uint8_t want[32];
	proto_sha256d(raw, len, want);
	assert_memory_equal(&tx->wtxid, want, sizeof(want));
	/* Bytes that are no transaction take no slot. */
	static const uint8_t junk[] = {1, 2, 3};
	node_extratxn_add_raw(d, junk, sizeof(junk));
	add(d, 5);
	assert_int_equal(slot_value(d, 1), 5);
	assert_int_equal(node_extratxn_added(d), 5);
	/* A tx from the validation thread's own side (a replaced one). */
	node_extratxn_add(d, node_extratxn_at(d, 0));
	assert_int_equal(slot_value(d, 2), 4);
	/* With no validation thread running, a post is dropped, not leaked. */
	node_extratxn_post(d, raw, len);
	tf_free(t);
}

static void test_zero_keeps_nothing(void **state)
{
	(void)state;
	struct tf *t = tf_new();
	struct daemon *d = t->d;
	t->conf.blockreconstructionextratxn = 0;
	add(d, 1);
	assert_int_equal(node_extratxn_count(d), 0);
	assert_null(node_extratxn_at(d, 0));
	assert_int_equal(node_extratxn_added(d), 0);
	tf_free(t);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_overwrites_the_oldest),
	    cmocka_unit_test(test_zero_keeps_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
