/*
 * tests/unit/test_daemon_orphan.c: the orphanage (daemon/txrelay/orphanage.c) against
 * Core 29's TxOrphanage rules: announcers, the 100-orphan limit with random
 * eviction, 20-minute expiry swept every 5 minutes, the weight limit,
 * work sets when a parent arrives, erasure for a peer and for a block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/txrelay/orphanage.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* A deterministic "random" source: always the last index. */
static uint64_t last_index(void *arg, uint64_t n)
{
	(void)arg;
	return n - 1;
}

static struct proto_hash hash_of(uint8_t tag, uint32_t n)
{
	struct proto_hash h;
	memset(&h, 0, sizeof(h));
	h.b[0] = tag;
	memcpy(h.b + 1, &n, sizeof(n));
	return h;
}

/* A tx spending (parent, 0) and (parent, 1), `pad` bytes of scriptSig each; tag makes it unique. */
static void make_tx(struct proto_tx *tx, struct proto_writer *w, const struct proto_hash *parent,
                    uint32_t tag, uint32_t pad)
{
	proto_writer_init(w);
	proto_write_u32le(w, 2);
	proto_write_compact(w, 2);
	uint8_t *script = calloc(1, pad ? pad : 1);
	assert_non_null(script);
	for (uint32_t i = 0; i < 2; i++) {
		struct proto_txin in = {.prevout = {.txid = *parent, .n = i}, .sequence = tag};
		proto_txin_encode(&in, script, pad, w);
	}
	free(script);
	proto_write_compact(w, 1);
	struct proto_txout o = {.value = 1000};
	uint8_t spk[1] = {0x51};
	proto_txout_encode(&o, spk, 1, w);
	proto_write_u32le(w, 0);
	assert_int_equal(w->err, 0);
	proto_tx_init(tx);
	assert_int_equal(proto_tx_decode_buf(w->buf, w->len, tx, NULL), 0);
	proto_tx_compute_ids(tx);
}

static int add(struct orphanage *o, const struct proto_hash *parent, uint32_t tag, uint64_t peer,
               int64_t now, struct proto_hash *wtxid)
{
	struct proto_tx tx;
	struct proto_writer w;
	make_tx(&tx, &w, parent, tag, 10);
	int rc = orphan_add(o, &tx, w.buf, w.len, peer, now);
	if (wtxid)
		*wtxid = tx.wtxid;
	proto_tx_release(&tx);
	proto_writer_release(&w);
	return rc;
}

static void test_add_and_announcers(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash parent = hash_of(1, 0), w;
	assert_int_equal(add(&o, &parent, 7, 10, 1000, &w), 1);
	assert_int_equal(orphan_count(&o), 1);
	assert_non_null(orphan_get(&o, &w));
	assert_true(orphan_have_from_peer(&o, &w, 10));
	assert_false(orphan_have_from_peer(&o, &w, 11));
	/* The same transaction from another peer: a second announcer, no new orphan. */
	assert_int_equal(add(&o, &parent, 7, 11, 1000, NULL), 0);
	assert_int_equal(orphan_count(&o), 1);
	assert_true(orphan_have_from_peer(&o, &w, 11));
	assert_int_equal(o.total_announcements, 2);
	assert_false(orphan_add_announcer(&o, &w, 11));
	/* One announcer leaving keeps it; the last one takes it away. */
	assert_int_equal(orphan_erase_for_peer(&o, 10), 0);
	assert_int_equal(orphan_count(&o), 1);
	assert_int_equal(orphan_erase_for_peer(&o, 11), 1);
	assert_int_equal(orphan_count(&o), 0);
	assert_int_equal(o.total_announcements, 0);
	assert_int_equal(o.total_weight, 0);
	orphan_release(&o);
}

static void test_weight_limit(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash parent = hash_of(2, 0);
	struct proto_tx tx;
	struct proto_writer w;
	/* Two inputs of 50,000 bytes: 400,000+ weight units, over Core's 400,000. */
	make_tx(&tx, &w, &parent, 1, 50000);
	assert_true(proto_tx_weight(&tx) > ORPHAN_MAX_WEIGHT);
	assert_int_equal(orphan_add(&o, &tx, w.buf, w.len, 1, 0), 0);
	assert_int_equal(orphan_count(&o), 0);
	assert_int_equal(o.too_heavy, 1);
	proto_tx_release(&tx);
	proto_writer_release(&w);
	/* Just under the limit is kept. */
	make_tx(&tx, &w, &parent, 2, 49000);
	assert_true(proto_tx_weight(&tx) <= ORPHAN_MAX_WEIGHT);
	assert_int_equal(orphan_add(&o, &tx, w.buf, w.len, 1, 0), 1);
	proto_tx_release(&tx);
	proto_writer_release(&w);
	orphan_release(&o);
}

static void test_limit_evicts_randomly(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash parent = hash_of(3, 0), w[ORPHAN_MAX + 5];
	for (uint32_t i = 0; i < ORPHAN_MAX + 5; i++)
		assert_int_equal(add(&o, &parent, i, 1, 100, &w[i]), 1);
	assert_int_equal(orphan_count(&o), ORPHAN_MAX + 5);
	/* Nothing has expired: eviction alone brings it down to 100. */
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, 100), 5);
	assert_int_equal(orphan_count(&o), ORPHAN_MAX);
	assert_int_equal(o.evicted, 5);
	/* The picker chose the last slot each time: the newest five went. */
	for (uint32_t i = 0; i < ORPHAN_MAX; i++)
		assert_non_null(orphan_get(&o, &w[i]));
	for (uint32_t i = ORPHAN_MAX; i < ORPHAN_MAX + 5; i++)
		assert_null(orphan_get(&o, &w[i]));
	orphan_release(&o);
}

static void test_expiry(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash parent = hash_of(4, 0), a, b;
	assert_int_equal(add(&o, &parent, 1, 1, 0, &a), 1);
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, 0), 0); /* first sweep */
	assert_int_equal(add(&o, &parent, 2, 1, 600, &b), 1);
	/* The first sweep set the next one for a's expiry: nothing before. */
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, ORPHAN_EXPIRE_S - 1), 0);
	assert_int_equal(orphan_count(&o), 2);
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, ORPHAN_EXPIRE_S), 1);
	assert_null(orphan_get(&o, &a));
	assert_non_null(orphan_get(&o, &b));
	assert_int_equal(o.expired, 1);
	/* b expires at 600 + 20 min, but sweeps are batched: the next comes
	 * 5 minutes after that. */
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, 600 + ORPHAN_EXPIRE_S), 0);
	assert_int_equal(orphan_count(&o), 1);
	assert_int_equal(orphan_limit(&o, ORPHAN_MAX, 600 + ORPHAN_EXPIRE_S + ORPHAN_SWEEP_S), 1);
	assert_int_equal(orphan_count(&o), 0);
	orphan_release(&o);
}

static void test_workset(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash parent = hash_of(5, 0), other = hash_of(6, 0), a, b, c;
	assert_int_equal(add(&o, &parent, 1, 7, 0, &a), 1);
	assert_true(orphan_add_announcer(&o, &a, 8));
	assert_int_equal(add(&o, &parent, 2, 9, 0, &b), 1);
	assert_int_equal(add(&o, &other, 3, 9, 0, &c), 1);
	uint64_t peer;
	assert_false(orphan_next_worker(&o, &peer));
	/* A parent with one output: both its children are spending output 0. */
	assert_int_equal(orphan_add_children_to_workset(&o, &parent, 1), 2);
	/* a went to its last announcer (8, by the picker), b to 9. */
	assert_true(orphan_next_worker(&o, &peer));
	assert_int_equal(peer, 8);
	const struct orphan_tx *t = orphan_take_work(&o, 8);
	assert_non_null(t);
	tu_assert_bytes_equal(t->wtxid.b, 32, a.b, 32);
	assert_null(orphan_take_work(&o, 8));
	t = orphan_take_work(&o, 9);
	assert_non_null(t);
	tu_assert_bytes_equal(t->wtxid.b, 32, b.b, 32);
	assert_null(orphan_take_work(&o, 9));
	/* Work for an orphan that went meanwhile is skipped. */
	assert_int_equal(orphan_add_children_to_workset(&o, &other, 1), 1);
	assert_int_equal(orphan_erase(&o, &c), 1);
	assert_null(orphan_take_work(&o, 9));
	assert_false(orphan_next_worker(&o, &peer));
	/* An output index past the parent's outputs is no child of it. */
	assert_int_equal(orphan_add_children_to_workset(&o, &parent, 0), 0);
	orphan_release(&o);
}

static void test_erase_for_block(void **state)
{
	(void)state;
	struct orphanage o;
	orphan_init(&o, last_index, NULL);
	struct proto_hash p1 = hash_of(7, 0), p2 = hash_of(8, 0), a, b;
	assert_int_equal(add(&o, &p1, 1, 1, 0, &a), 1);
	assert_int_equal(add(&o, &p2, 2, 1, 0, &b), 1);
	/* A block spent (p1, 1): a conflicts with it and goes; b stays. */
	struct proto_outpoint spent[2] = {{.txid = p1, .n = 1}, {.txid = p2, .n = 7}};
	assert_int_equal(orphan_erase_spending(&o, spent, 2), 1);
	assert_null(orphan_get(&o, &a));
	assert_non_null(orphan_get(&o, &b));
	assert_int_equal(o.erased_for_block, 1);
	orphan_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_and_announcers),
	    cmocka_unit_test(test_weight_limit),
	    cmocka_unit_test(test_limit_evicts_randomly),
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_workset),
	    cmocka_unit_test(test_erase_for_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
