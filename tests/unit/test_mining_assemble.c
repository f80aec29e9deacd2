/*
 * tests/unit/test_mining_assemble.c: mining_assemble, Core's
 * BlockAssembler over the mempool: packages by ancestor feerate (child pays
 * for parent), the weight limit at equality, the minimum fee rate ending
 * the selection, prioritisation both ways; and what it reads of the pool
 * through mempool/mempool.h (test_entry_figures). (The order against Core's own
 * getblocktemplate is in tests/integration/test_mining_parity.py.)
 */
#include "tests/unit/test_mempool_fixture.h"

/* mining_assemble's picks as txids, in order (at most 8). */
static size_t select_ids(struct fixture *f, const struct mining_block_opts *o,
                         struct proto_hash ids[8])
{
	const struct mempool_entry **v;
	size_t n;
	assert_int_equal(mining_assemble(f->c, f->mp, o, &v, &n), 0);
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		ids[i] = *mempool_entry_txid(v[i]);
	free(v);
	return n;
}

static int64_t vsize_of(struct fixture *f, const struct proto_hash *txid)
{
	struct mempool_entry_info in;
	mempool_entry_info(mempool_find(f->mp, txid, false), &in);
	return in.vsize;
}

/* Core's BlockAssembler: packages by ancestor feerate, the limits, the minimum fee. */
static void test_block_select(void **state)
{
	struct fixture *f = *state;
	struct proto_hash ids[8];
	assert_int_equal(select_ids(f, NULL, ids), 0); /* empty pool */
	struct proto_tx p, c, s1, s2;
	spend1(&p, &f->cb[1], 0, CB_VALUE, 200); /* cheap parent, rich child */
	accept_ok(f, &p);
	spend1(&c, &p.txid, 0, CB_VALUE - 200, 60000);
	accept_ok(f, &c);
	spend1(&s1, &f->cb[2], 0, CB_VALUE, 9000);
	accept_ok(f, &s1);
	spend1(&s2, &f->cb[3], 0, CB_VALUE, 4000);
	accept_ok(f, &s2);
	/* The package first (parent before child), then by feerate. */
	assert_int_equal(select_ids(f, NULL, ids), 4);
	assert_memory_equal(&ids[0], &p.txid, 32);
	assert_memory_equal(&ids[1], &c.txid, 32);
	assert_memory_equal(&ids[2], &s1.txid, 32);
	assert_memory_equal(&ids[3], &s2.txid, 32);
	/* Room for the package alone: 4 x its vsize must stay under the limit. */
	int64_t pkg = vsize_of(f, &p.txid) + vsize_of(f, &c.txid);
	struct mining_block_opts o = MINING_BLOCK_OPTS_DEFAULT;
	o.max_weight = o.reserved_weight + 4 * (uint64_t)pkg + 1;
	assert_int_equal(select_ids(f, &o, ids), 2);
	o.max_weight--; /* equality fails, as Core's TestPackage: the singles go instead */
	size_t k = select_ids(f, &o, ids);
	assert_true(k >= 1);
	assert_memory_equal(&ids[0], &s1.txid, 32);
	for (size_t i = 0; i < k; i++)
		assert_memory_not_equal(&ids[i], &p.txid, 32);
	/* A package under the minimum fee rate ends the selection. */
	o = (struct mining_block_opts)MINING_BLOCK_OPTS_DEFAULT;
	o.min_fee_rate = 50000; /* sat/kvB: s1 (~90 sat/vB) passes, s2 not */
	assert_int_equal(select_ids(f, &o, ids), 3);
	assert_memory_equal(&ids[2], &s1.txid, 32);
	/* Prioritised: s2 first; pushed below zero: left out with nothing after. */
	assert_int_equal(mempool_prioritise(f->mp, &s2.txid, 10000000), 0);
	assert_int_equal(mempool_prioritise(f->mp, &p.txid, -10000000), 0);
	assert_int_equal(select_ids(f, NULL, ids), 2);
	assert_memory_equal(&ids[0], &s2.txid, 32);
	assert_memory_equal(&ids[1], &s1.txid, 32);
	proto_tx_release(&p);
	proto_tx_release(&c);
	proto_tx_release(&s1);
	proto_tx_release(&s2);
}

/* What assembly reads through mempool/mempool.h: each entry's figures as
 * mempool_entry_info has them, one index per entry below the pool's size,
 * the lower of own and package feerate, fees that saturate. */
static void test_entry_figures(void **state)
{
	struct fixture *f = *state;
	struct proto_tx p, c, s;
	spend1(&p, &f->cb[1], 0, CB_VALUE, 200); /* cheap parent, rich child */
	accept_ok(f, &p);
	spend1(&c, &p.txid, 0, CB_VALUE - 200, 60000);
	accept_ok(f, &c);
	spend1(&s, &f->cb[2], 0, CB_VALUE, 9000);
	accept_ok(f, &s);
	const struct mempool_entry **v;
	size_t n;
	assert_int_equal(mempool_list(f->mp, MEMPOOL_ORDER_ANCESTOR_SCORE, &v, &n), 0);
	assert_int_equal(n, 3);
	bool seen[3] = {false, false, false};
	for (size_t i = 0; i < n; i++) {
		struct mempool_entry_info in;
		struct mempool_entry_figures fg;
		mempool_entry_info(v[i], &in);
		mempool_entry_figures(v[i], &fg);
		assert_int_equal(fg.modified_fee, in.modified_fee);
		assert_int_equal(fg.vsize, in.vsize);
		assert_int_equal(fg.weight, in.weight);
		assert_int_equal(fg.ancestor_count, in.ancestor_count);
		assert_int_equal(fg.ancestor_size, in.ancestor_size);
		assert_int_equal(fg.ancestor_fees, in.ancestor_fees);
		size_t k = mempool_entry_index(v[i]);
		assert_true(k < n);
		assert_false(seen[k]);
		seen[k] = true;
	}
	/* The child pays for its parent: its score is the package's, not its own. */
	const struct mempool_entry *ce = mempool_find(f->mp, &c.txid, false);
	struct mempool_entry_figures cf;
	mempool_entry_figures(ce, &cf);
	double fee, sz;
	mempool_ancestor_score(ce, cf.ancestor_fees, cf.ancestor_size, &fee, &sz);
	assert_true(fee == (double)cf.ancestor_fees && sz == (double)cf.ancestor_size);
	/* A package paying nothing scores its own 0; one richer than the child, the child. */
	mempool_ancestor_score(ce, 0, cf.ancestor_size, &fee, &sz);
	assert_true(fee == 0.0);
	mempool_ancestor_score(ce, INT64_MAX / 2, cf.ancestor_size, &fee, &sz);
	assert_true(fee == (double)cf.modified_fee && sz == (double)cf.vsize);
	assert_int_equal(mempool_fee_add(INT64_MAX, 1), INT64_MAX);
	assert_int_equal(mempool_fee_sub(INT64_MIN, 1), INT64_MIN);
	assert_int_equal(mempool_fee_sub(5, 7), -2);
	free(v);
	proto_tx_release(&p);
	proto_tx_release(&c);
	proto_tx_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_block_select, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_entry_figures, setup, teardown),
	};
	(void)F;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
