/*
 * tests/unit/test_mempool.c: the mempool/ files on a regtest chain
 * whose coinbases pay P2WSH(OP_TRUE), so transactions need no keys:
 * acceptance and each rule's Core reason, queries and orders, ancestor
 * and descendant limits with the carve-out, replacement and each of its
 * reasons, TRUC, ephemeral dust, script failures (mandatory or not),
 * eviction with the rolling minimum fee, expiry, blocks removing what
 * they mine and what conflicts, reorgs returning transactions,
 * mempool.dat round trip and a damaged file, the script cache on block
 * connect, and a package test-accept.
 */
#include "tests/unit/test_mempool_fixture.h"

/* ---- tests ------------------------------------------------------------------------ */

static void test_accept_and_query(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b;
	spend1(&a, &f->cb[1], 0, CB_VALUE, 10000);
	/* test-accept: allowed, nothing added */
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	assert_true(try_accept(f, &a, true, &r));
	assert_true(r.fee_known);
	assert_int_equal(r.fee, 10000);
	assert_int_equal(r.vsize, proto_tx_vsize(&a));
	assert_int_equal(r.effective_feerate, 10000 * 1000 / r.vsize);
	assert_int_equal(r.n_effective_includes, 1);
	assert_true(proto_hash_eq(&r.effective_includes[0], &a.wtxid));
	assert_int_equal(pool_size(f), 0);
	uint64_t seq0 = mempool_sequence(f->mp);
	assert_true(try_accept(f, &a, false, &r));
	assert_int_equal(pool_size(f), 1);
	assert_int_equal(f->added[MEMPOOL_ADDED_ACCEPT], 1);
	assert_true(mempool_sequence(f->mp) > seq0);
	/* a child */
	spend1(&b, &a.txid, 0, CB_VALUE - 10000, 5000);
	assert_true(try_accept(f, &b, false, &r));
	const struct mempool_entry *ea = mempool_find(f->mp, &a.txid, false);
	const struct mempool_entry *eb = mempool_find(f->mp, &b.wtxid, true);
	assert_non_null(ea);
	assert_non_null(eb);
	struct mempool_entry_info ia, ib;
	mempool_entry_info(ea, &ia);
	mempool_entry_info(eb, &ib);
	assert_int_equal(ia.descendant_count, 2);
	assert_int_equal(ia.descendant_fees, 15000);
	assert_int_equal(ia.descendant_size, ia.vsize + ib.vsize);
	assert_int_equal(ib.ancestor_count, 2);
	assert_int_equal(ib.ancestor_fees, 15000);
	assert_int_equal(ib.n_parents, 1);
	assert_int_equal(ia.n_children, 1);
	assert_true(ia.bip125_replaceable);
	assert_int_equal(ia.height, N_COINBASE);
	assert_int_equal(ia.time, fake_now);
	const struct mempool_entry *rel[2];
	assert_int_equal(mempool_entry_children(ea, rel, 2), 1);
	assert_ptr_equal(rel[0], eb);
	const struct mempool_entry **v;
	size_t n;
	assert_int_equal(mempool_ancestors(f->mp, eb, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_ptr_equal(v[0], ea);
	free(v);
	assert_int_equal(mempool_descendants(f->mp, ea, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_ptr_equal(v[0], eb);
	free(v);
	/* orders: the parent first by depth; the child's higher feerate does not lift it */
	assert_int_equal(mempool_list(f->mp, MEMPOOL_ORDER_DEPTH_SCORE, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_ptr_equal(v[0], ea);
	free(v);
	/* raw bytes round trip */
	uint8_t *raw;
	size_t len;
	assert_int_equal(mempool_get_raw(f->mp, &b.txid, false, &raw, &len), 0);
	assert_int_equal(len, b.size);
	free(raw);
	/* info */
	struct mempool_info info;
	mempool_get_info(f->mp, &info);
	assert_int_equal(info.size, 2);
	assert_int_equal(info.bytes, (uint64_t)(ia.vsize + ib.vsize));
	assert_int_equal(info.total_fee, 15000);
	assert_int_equal(info.mempoolminfee, 1000);
	assert_int_equal(info.minrelaytxfee, 1000);
	assert_int_equal(info.maxmempool, MEMPOOL_DEFAULT_MAX_BYTES);
	assert_true(info.usage > 0);
	/* the spender index */
	struct proto_outpoint op = {.txid = a.txid, .n = 0};
	assert_ptr_equal(mempool_spender(f->mp, &op), eb);
	/* again: already there */
	expect_reject(f, &b, "txn-already-in-mempool", NULL);
	mempool_accept_result_release(&r);
	proto_tx_release(&a);
	proto_tx_release(&b);
}

static void test_prechecks(void **state)
{
	struct fixture *f = *state;
	struct proto_tx t;
	/* a coinbase */
	struct in_spec cbin = {.n = 0xffffffffu};
	struct out_spec o = {.value = 1000};
	build(&t, 2, 0, &cbin, 1, &o, 1);
	expect_reject(f, &t, "bad-cb-length", NULL);
	proto_tx_release(&t);
	/* outputs over the inputs */
	spend1(&t, &f->cb[2], 0, CB_VALUE, -1);
	expect_reject(f, &t, "bad-txns-in-belowout", NULL);
	proto_tx_release(&t);
	/* missing inputs: the parent's txid for the orphanage */
	struct proto_hash unknown;
	memset(unknown.b, 0x77, 32);
	spend1(&t, &unknown, 3, CB_VALUE, 1000);
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	assert_false(try_accept(f, &t, false, &r));
	assert_int_equal(r.state.result, CHAIN_RESULT_TX_MISSING_INPUTS);
	assert_string_equal(r.state.reason, "bad-txns-inputs-missingorspent");
	assert_int_equal(r.n_missing_parents, 1);
	assert_true(proto_hash_eq(&r.missing_parents[0], &unknown));
	proto_tx_release(&t);
	/* an immature coinbase (height 40 at tip 130: depth 91) */
	spend1(&t, &f->cb[N_COINBASE - 90], 0, CB_VALUE, 1000);
	assert_false(try_accept(f, &t, false, &r));
	assert_int_equal(r.state.result, CHAIN_RESULT_TX_PREMATURE_SPEND);
	assert_string_equal(r.state.reason, "bad-txns-premature-spend-of-coinbase");
	proto_tx_release(&t);
	/* non-final: a height lock at the next block's height */
	struct in_spec in = {.txid = f->cb[3], .n = 0, .seq = 0xfffffffeu};
	struct out_spec out = {.value = CB_VALUE - 1000};
	build(&t, 2, N_COINBASE + 1, &in, 1, &out, 1);
	expect_reject(f, &t, "non-final", NULL);
	proto_tx_release(&t);
	build(&t, 2, N_COINBASE, &in, 1, &out, 1);
	assert_true(try_accept(f, &t, true, &r));
	proto_tx_release(&t);
	/* BIP68: a coin at height 31 has 100 confirmations in the next block */
	in.txid = f->cb[31];
	in.seq = 101; /* blocks */
	build(&t, 2, 0, &in, 1, &out, 1);
	expect_reject(f, &t, "non-BIP68-final", NULL);
	proto_tx_release(&t);
	in.seq = 100;
	build(&t, 2, 0, &in, 1, &out, 1);
	assert_true(try_accept(f, &t, true, &r));
	proto_tx_release(&t);
	/* fee below the min relay fee */
	spend1(&t, &f->cb[4], 0, CB_VALUE, 50);
	expect_reject(f, &t, "min relay fee not met", "50 < ");
	proto_tx_release(&t);
	/* dust: a 330-sat floor for P2WSH; dust needs a zero fee */
	struct out_spec two[2] = {{.value = CB_VALUE - 10000}, {.value = 100}};
	in = (struct in_spec){.txid = f->cb[5], .n = 0};
	build(&t, 2, 0, &in, 1, two, 2);
	expect_reject(f, &t, "dust", NULL);
	proto_tx_release(&t);
	/* non-standard version */
	in = (struct in_spec){.txid = f->cb[5], .n = 0};
	build(&t, 4, 0, &in, 1, &out, 1);
	expect_reject(f, &t, "version", NULL);
	proto_tx_release(&t);
	/* already confirmed */
	spend1(&t, &f->cb[6], 0, CB_VALUE, 2000);
	accept_ok(f, &t);
	mine_pool(f);
	assert_int_equal(pool_size(f), 0);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_BLOCK], 1);
	expect_reject(f, &t, "txn-already-known", NULL);
	proto_tx_release(&t);
	mempool_accept_result_release(&r);
}

static void test_scripts(void **state)
{
	struct fixture *f = *state;
	/* a coin to each of the three witness scripts */
	struct in_spec in = {.txid = f->cb[7], .n = 0};
	struct out_spec outs[3] = {
	    {100000000, SPK_IF}, {100000000, SPK_FALSE}, {100000000, SPK_TRUE}};
	struct proto_tx fund, t;
	build(&fund, 2, 0, &in, 1, outs, 3);
	accept_ok(f, &fund);
	mine_pool(f);
	/* MINIMALIF is policy: non-mandatory, not standard */
	struct in_spec s = {.txid = fund.txid, .n = 0, .wit = WIT_IF_NONMIN};
	struct out_spec o = {.value = 100000000 - 5000};
	build(&t, 2, 0, &s, 1, &o, 1);
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	assert_false(try_accept(f, &t, false, &r));
	assert_string_equal(
	    r.state.reason,
	    "non-mandatory-script-verify-flag (OP_IF/NOTIF argument must be minimal)");
	assert_int_equal(r.state.result, CHAIN_RESULT_TX_NOT_STANDARD);
	proto_tx_release(&t);
	s.wit = WIT_IF_OK;
	build(&t, 2, 0, &s, 1, &o, 1);
	accept_ok(f, &t);
	proto_tx_release(&t);
	/* OP_0 fails for good: mandatory; with several inputs the first bad one counts */
	struct in_spec two[2] = {{.txid = fund.txid, .n = 2, .wit = WIT_TRUE},
	                         {.txid = fund.txid, .n = 1, .wit = WIT_FALSE}};
	o.value = 200000000 - 5000;
	build(&t, 2, 0, two, 2, &o, 1);
	assert_false(try_accept(f, &t, false, &r));
	assert_string_equal(
	    r.state.reason,
	    "mandatory-script-verify-flag-failed (Script evaluated without error but "
	    "finished with a false/empty top stack element)");
	assert_int_equal(r.state.result, CHAIN_RESULT_CONSENSUS);
	proto_tx_release(&t);
	/* the wrong witness script: a hash mismatch */
	struct in_spec bad = {.txid = fund.txid, .n = 1, .wit = WIT_TRUE};
	o.value = 100000000 - 5000;
	build(&t, 2, 0, &bad, 1, &o, 1);
	expect_reject(f, &t, "mandatory-script-verify-flag-failed (Witness program hash mismatch)",
	              NULL);
	proto_tx_release(&t);
	mempool_accept_result_release(&r);
	proto_tx_release(&fund);
}

/* A chain of `n` transactions from coinbase h, each paying `fee`; txids into out. */
static void make_chain(struct fixture *f, int h, int n, int64_t fee, struct proto_hash *out)
{
	struct proto_hash prev = f->cb[h];
	int64_t value = CB_VALUE;
	for (int i = 0; i < n; i++) {
		struct proto_tx t;
		spend1(&t, &prev, 0, value, fee);
		accept_ok(f, &t);
		prev = t.txid;
		value -= fee;
		if (out)
			out[i] = t.txid;
		proto_tx_release(&t);
	}
}

static void test_ancestor_limits(void **state)
{
	struct fixture *f = *state;
	struct proto_hash ids[25];
	make_chain(f, 8, 25, 1000, ids);
	struct proto_tx t;
	spend1(&t, &ids[24], 0, CB_VALUE - 25000, 1000);
	expect_reject(f, &t, "too-long-mempool-chain",
	              "too many unconfirmed ancestors [limit: 25]");
	proto_tx_release(&t);
	/* descendants: the chain's root has 25 (itself included) */
	char hex[65], want[160];
	/* a second child of tx 23 (25 descendants on the root): the root is over */
	struct out_spec two[2] = {{.value = 100000}, {.value = 100000}};
	(void)two;
	proto_hash_to_hex(&ids[0], hex);
	snprintf(want, sizeof(want), "too many descendants for tx %s [limit: 25]", hex);
	/* spend the root's output 0? it is spent; make a fan instead */
	struct in_spec in = {.txid = f->cb[9], .n = 0};
	struct out_spec fan[3] = {
	    {CB_VALUE / 4, SPK_TRUE}, {CB_VALUE / 4, SPK_TRUE}, {CB_VALUE / 4, SPK_TRUE}};
	struct proto_tx root;
	build(&root, 2, 0, &in, 1, fan, 3);
	accept_ok(f, &root);
	/* 23 more under output 0 */
	struct proto_hash prev = root.txid;
	int64_t value = CB_VALUE / 4;
	for (int i = 0; i < 23; i++) {
		spend1(&t, &prev, 0, value, 1000);
		accept_ok(f, &t);
		prev = t.txid;
		value -= 1000;
		proto_tx_release(&t);
	}
	/* the 25th descendant of root, from output 1 */
	spend1(&t, &root.txid, 1, CB_VALUE / 4, 1000);
	accept_ok(f, &t);
	proto_tx_release(&t);
	/* a 26th would be too many but for the carve-out: small, one ancestor */
	spend1(&t, &root.txid, 2, CB_VALUE / 4, 1000);
	accept_ok(f, &t);
	struct proto_hash carved = t.txid;
	proto_tx_release(&t);
	/* no second carve-out: spend the carved child's output */
	spend1(&t, &carved, 0, CB_VALUE / 4 - 1000, 1000);
	proto_hash_to_hex(&root.txid, hex);
	snprintf(want, sizeof(want), "too many descendants for tx %s [limit: 25]", hex);
	expect_reject(f, &t, "too-long-mempool-chain", want);
	proto_tx_release(&t);
	proto_tx_release(&root);
}

static void test_rbf(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b, t;
	spend1(&a, &f->cb[10], 0, CB_VALUE, 1000);
	accept_ok(f, &a);
	/* same feerate: rule 6 */
	struct in_spec in = {.txid = f->cb[10], .n = 0};
	struct out_spec o = {.value = CB_VALUE - 1000, .kind = SPK_IF};
	build(&t, 2, 0, &in, 1, &o, 1);
	expect_reject(f, &t, "insufficient fee", "rejecting replacement ");
	proto_tx_release(&t);
	/* a child of a, so the replacement must pay for both */
	spend1(&b, &a.txid, 0, CB_VALUE - 1000, 20000);
	accept_ok(f, &b);
	o.value = CB_VALUE - 5000;
	build(&t, 2, 0, &in, 1, &o, 1);
	char hex[65], want[200];
	proto_hash_to_hex(&t.txid, hex);
	snprintf(want, sizeof(want),
	         "rejecting replacement %s, less fees than conflicting txs; 0.00005 < 0.00021",
	         hex);
	expect_reject(f, &t, "insufficient fee", want);
	proto_tx_release(&t);
	/* 21,000 + less than its own relay fee */
	o.value = CB_VALUE - 21050;
	build(&t, 2, 0, &in, 1, &o, 1);
	proto_hash_to_hex(&t.txid, hex);
	snprintf(want, sizeof(want),
	         "rejecting replacement %s, not enough additional fees to relay; 0.0000005 < ",
	         hex);
	expect_reject(f, &t, "insufficient fee", want);
	proto_tx_release(&t);
	/* a new unconfirmed input */
	struct proto_tx other;
	spend1(&other, &f->cb[11], 0, CB_VALUE, 1000);
	accept_ok(f, &other);
	struct in_spec two[2] = {{.txid = f->cb[10], .n = 0}, {.txid = other.txid, .n = 0}};
	o.value = CB_VALUE - 100000;
	build(&t, 2, 0, two, 2, &o, 1);
	expect_reject(f, &t, "replacement-adds-unconfirmed", "replacement ");
	proto_tx_release(&t);
	/* enough: both a and b go, reported as replaced */
	o.value = CB_VALUE - 100000;
	build(&t, 2, 0, &in, 1, &o, 1);
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	unsigned before = f->removed[MEMPOOL_REMOVED_REPLACED];
	assert_true(try_accept(f, &t, false, &r));
	assert_int_equal(r.n_replaced, 2);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_REPLACED], before + 2);
	assert_null(mempool_find(f->mp, &a.txid, false));
	assert_null(mempool_find(f->mp, &b.txid, false));
	mempool_accept_result_release(&r);
	proto_tx_release(&t);
	proto_tx_release(&a);
	proto_tx_release(&b);
	proto_tx_release(&other);
}

static void test_rbf_too_many(void **state)
{
	struct fixture *f = *state;
	/* five conflicts with 22 transactions each: 110 > 100 */
	struct in_spec ins[5];
	for (int k = 0; k < 5; k++) {
		make_chain(f, 12 + k, 22, 1000, NULL);
		ins[k] = (struct in_spec){.txid = f->cb[12 + k], .n = 0};
	}
	struct out_spec o = {.value = 5 * CB_VALUE - 10000000};
	struct proto_tx t;
	build(&t, 2, 0, ins, 5, &o, 1);
	expect_reject(f, &t, "too many potential replacements", "rejecting replacement ");
	proto_tx_release(&t);
}

static void test_truc(void **state)
{
	struct fixture *f = *state;
	struct proto_tx p, c1, c2, t;
	/* a non-TRUC parent, a TRUC child: not allowed */
	spend1(&p, &f->cb[17], 0, CB_VALUE, 2000);
	accept_ok(f, &p);
	struct in_spec in = {.txid = p.txid, .n = 0};
	struct out_spec o = {.value = CB_VALUE - 4000};
	build(&t, 3, 0, &in, 1, &o, 1);
	expect_reject(f, &t, "TRUC-violation", "version=3 tx ");
	proto_tx_release(&t);
	proto_tx_release(&p);
	/* a TRUC parent with two outputs: one child, a second is a sibling to evict */
	in = (struct in_spec){.txid = f->cb[18], .n = 0};
	struct out_spec two[2] = {{CB_VALUE / 2, SPK_TRUE}, {CB_VALUE / 2 - 2000, SPK_TRUE}};
	build(&p, 3, 0, &in, 1, two, 2);
	accept_ok(f, &p);
	/* a non-TRUC child of it */
	in = (struct in_spec){.txid = p.txid, .n = 0};
	o.value = CB_VALUE / 2 - 2000;
	build(&t, 2, 0, &in, 1, &o, 1);
	expect_reject(f, &t, "TRUC-violation", "non-version=3 tx ");
	proto_tx_release(&t);
	build(&c1, 3, 0, &in, 1, &o, 1);
	accept_ok(f, &c1);
	/* a low-fee sibling cannot evict */
	in.n = 1;
	o.value = CB_VALUE / 2 - 2000 - 1000;
	build(&c2, 3, 0, &in, 1, &o, 1);
	expect_reject(f, &c2, "insufficient fee (including sibling eviction)", NULL);
	proto_tx_release(&c2);
	/* a higher-fee one does */
	o.value = CB_VALUE / 2 - 2000 - 50000;
	build(&c2, 3, 0, &in, 1, &o, 1);
	accept_ok(f, &c2);
	assert_null(mempool_find(f->mp, &c1.txid, false));
	proto_tx_release(&c1);
	proto_tx_release(&c2);
	proto_tx_release(&p);
}

static void test_ephemeral_dust(void **state)
{
	struct fixture *f = *state;
	/* a zero-fee TRUC parent with one dust output, in as a reorg would put it */
	struct in_spec in = {.txid = f->cb[19], .n = 0};
	struct out_spec outs[2] = {{CB_VALUE - 0, SPK_TRUE}, {0, SPK_TRUE}};
	outs[0].value = CB_VALUE;
	struct proto_tx p, t;
	build(&p, 3, 0, &in, 1, outs, 2);
	struct mempool_accept_opts opt = {.bypass_limits = true};
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	assert_int_equal(mempool_accept(f->mp, &p, &opt, &r), 0);
	if (!r.accepted)
		fail_msg("parent: %s (%s)", r.state.reason, r.state.debug);
	/* a child not spending the dust */
	in = (struct in_spec){.txid = p.txid, .n = 0};
	struct out_spec o = {.value = CB_VALUE - 100000};
	build(&t, 3, 0, &in, 1, &o, 1);
	expect_reject(f, &t, "missing-ephemeral-spends", "tx ");
	proto_tx_release(&t);
	/* spending it too: fine */
	struct in_spec both[2] = {{.txid = p.txid, .n = 0}, {.txid = p.txid, .n = 1}};
	build(&t, 3, 0, both, 2, &o, 1);
	accept_ok(f, &t);
	proto_tx_release(&t);
	proto_tx_release(&p);
	mempool_accept_result_release(&r);
}

static void test_block_reorg_cache(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b, x;
	spend1(&a, &f->cb[20], 0, CB_VALUE, 3000);
	spend1(&b, &a.txid, 0, CB_VALUE - 3000, 3000);
	accept_ok(f, &a);
	accept_ok(f, &b);
	/* x spends what a block will spend otherwise: a conflict */
	spend1(&x, &f->cb[21], 0, CB_VALUE, 3000);
	accept_ok(f, &x);
	struct chain_stats s0, s1;
	chain_get_stats(f->c, &s0);
	/* a block with a and b, and a different spend of cb[21] */
	struct proto_tx y;
	spend1(&y, &f->cb[21], 0, CB_VALUE, 9000);
	struct mining_tx txs[3];
	uint8_t *raw[3];
	size_t len;
	assert_int_equal(mempool_get_raw(f->mp, &a.txid, false, &raw[0], &len), 0);
	txs[0] = (struct mining_tx){raw[0], len};
	assert_int_equal(mempool_get_raw(f->mp, &b.txid, false, &raw[1], &len), 0);
	txs[1] = (struct mining_tx){raw[1], len};
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(&y, &w);
	txs[2] = (struct mining_tx){w.buf, w.len};
	unsigned mined = f->removed[MEMPOOL_REMOVED_BLOCK];
	mine_txs(f, txs, 3, NULL);
	free(raw[0]);
	free(raw[1]);
	proto_writer_release(&w);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_BLOCK], mined + 2);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_CONFLICT], 1);
	assert_null(mempool_find(f->mp, &x.txid, false));
	chain_get_stats(f->c, &s1);
	/* a and b were verified by the mempool: the block skipped them */
	assert_int_equal(s1.script_cache_hits - s0.script_cache_hits, 2);
	assert_int_equal(s1.script_cache_misses - s0.script_cache_misses, 1);
	/* the block goes away: a and b come back, y too */
	struct chain_state st;
	assert_int_equal(chain_invalidate(f->c, chain_tip(f->c), &st), 0);
	assert_non_null(mempool_find(f->mp, &a.txid, false));
	assert_non_null(mempool_find(f->mp, &b.txid, false));
	assert_non_null(mempool_find(f->mp, &y.txid, false));
	assert_true(f->added[MEMPOOL_ADDED_REORG] >= 3);
	const struct mempool_entry *eb = mempool_find(f->mp, &b.txid, false);
	struct mempool_entry_info ib;
	mempool_entry_info(eb, &ib);
	assert_int_equal(ib.ancestor_count, 2);
	proto_tx_release(&a);
	proto_tx_release(&b);
	proto_tx_release(&x);
	proto_tx_release(&y);
}

static void test_witness_variant_and_partial_block(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, a2, b;
	spend1(&a, &f->cb[27], 0, CB_VALUE, 3000);
	accept_ok(f, &a);
	/* the same txid with another witness: Core's reason, and which wtxid is in */
	struct in_spec in = {.txid = f->cb[27], .n = 0, .wit = WIT_TRUE_PAD};
	struct out_spec o = {.value = CB_VALUE - 3000};
	build(&a2, 2, 0, &in, 1, &o, 1);
	assert_true(proto_hash_eq(&a.txid, &a2.txid));
	assert_false(proto_hash_eq(&a.wtxid, &a2.wtxid));
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	assert_false(try_accept(f, &a2, false, &r));
	assert_string_equal(r.state.reason, "txn-same-nonwitness-data-in-mempool");
	assert_true(r.has_other_wtxid);
	assert_true(proto_hash_eq(&r.other_wtxid, &a.wtxid));
	mempool_accept_result_release(&r);
	/* a child; a block mines only the parent: the child stays, now without ancestors */
	spend1(&b, &a.txid, 0, CB_VALUE - 3000, 3000);
	accept_ok(f, &b);
	uint8_t *raw;
	size_t len;
	assert_int_equal(mempool_get_raw(f->mp, &a.txid, false, &raw, &len), 0);
	struct mining_tx mt = {raw, len};
	mine_txs(f, &mt, 1, NULL);
	free(raw);
	assert_null(mempool_find(f->mp, &a.txid, false));
	const struct mempool_entry *eb = mempool_find(f->mp, &b.txid, false);
	assert_non_null(eb);
	struct mempool_entry_info ib;
	mempool_entry_info(eb, &ib);
	assert_int_equal(ib.ancestor_count, 1);
	assert_int_equal(ib.ancestor_size, ib.vsize);
	assert_int_equal(ib.ancestor_fees, 3000);
	assert_int_equal(ib.n_parents, 0);
	proto_tx_release(&a);
	proto_tx_release(&a2);
	proto_tx_release(&b);
}

/* After a reorg to a lower tip, what is no longer final leaves with reason reorg. */
static void test_reorg_removes_nonfinal(void **state)
{
	struct fixture *f = *state;
	struct proto_tx t, ok;
	/* final in the next block (height 131), not at height 130 */
	struct in_spec in = {.txid = f->cb[28], .n = 0, .seq = 0xfffffffeu};
	struct out_spec o = {.value = CB_VALUE - 3000};
	build(&t, 2, N_COINBASE, &in, 1, &o, 1);
	accept_ok(f, &t);
	spend1(&ok, &f->cb[29], 0, CB_VALUE, 3000);
	accept_ok(f, &ok);
	struct mempool_stats s0, s1;
	mempool_get_stats(f->mp, &s0);
	unsigned before = f->removed[MEMPOOL_REMOVED_REORG];
	struct chain_state st;
	assert_int_equal(chain_invalidate(f->c, chain_tip(f->c), &st), 0);
	assert_int_equal(chain_height(f->c), N_COINBASE - 1);
	assert_null(mempool_find(f->mp, &t.txid, false));
	assert_non_null(mempool_find(f->mp, &ok.txid, false));
	assert_int_equal(f->removed[MEMPOOL_REMOVED_REORG], before + 1);
	mempool_get_stats(f->mp, &s1);
	assert_int_equal(s1.accepted, s0.accepted);
	proto_tx_release(&t);
	proto_tx_release(&ok);
}

/* A rejected tx leaves no coins behind in the cache (Core's coins_to_uncache). */
static void test_uncache_on_reject(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(close_chain(f), 0); /* the cache starts empty again */
	open_chain(f);
	struct chain_coins *coins = chain_get_coins(f->c);
	struct proto_outpoint op = {.txid = f->cb[30], .n = 0};
	assert_false(chain_coins_in_cache(coins, &op));
	struct proto_tx t;
	spend1(&t, &f->cb[30], 0, CB_VALUE, 10);
	expect_reject(f, &t, "min relay fee not met", NULL);
	assert_false(chain_coins_in_cache(coins, &op));
	proto_tx_release(&t);
	spend1(&t, &f->cb[30], 0, CB_VALUE, 5000);
	accept_ok(f, &t);
	assert_true(chain_coins_in_cache(coins, &op));
	proto_tx_release(&t);
}

static void test_expiry(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b;
	spend1(&a, &f->cb[22], 0, CB_VALUE, 3000);
	accept_ok(f, &a);
	fake_now += 300 * 3600;
	spend1(&b, &f->cb[23], 0, CB_VALUE, 3000);
	accept_ok(f, &b);
	fake_now += 37 * 3600;
	unsigned before = f->removed[MEMPOOL_REMOVED_EXPIRY];
	assert_int_equal(mempool_limit(f->mp), 1);
	assert_int_equal(f->removed[MEMPOOL_REMOVED_EXPIRY], before + 1);
	assert_null(mempool_find(f->mp, &a.txid, false));
	assert_non_null(mempool_find(f->mp, &b.txid, false));
	proto_tx_release(&a);
	proto_tx_release(&b);
}

static void test_persist(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b;
	spend1(&a, &f->cb[24], 0, CB_VALUE, 3000);
	spend1(&b, &a.txid, 0, CB_VALUE - 3000, 3000);
	accept_ok(f, &a);
	accept_ok(f, &b);
	assert_int_equal(mempool_prioritise(f->mp, &b.txid, 777), 0);
	size_t n = pool_size(f);
	assert_int_equal(close_chain(f), 0);
	open_chain(f);
	assert_int_equal(pool_size(f), n);
	const struct mempool_entry *eb = mempool_find(f->mp, &b.txid, false);
	assert_non_null(eb);
	struct mempool_entry_info ib;
	mempool_entry_info(eb, &ib);
	assert_int_equal(ib.modified_fee, 3777);
	struct mempool_info info;
	mempool_get_info(f->mp, &info);
	assert_true(info.loaded);
	/* damage the file: the chain still opens, with an empty pool */
	assert_int_equal(close_chain(f), 0);
	char path[TU_TMPDIR_MAX + 32];
	snprintf(path, sizeof(path), "%s/mempool.dat", f->dir);
	size_t flen;
	uint8_t *data = tu_read_file(path, &flen);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, flen / 2, fp), flen / 2);
	fclose(fp);
	free(data);
	open_chain(f);
	struct mempool_stats ms;
	mempool_get_stats(f->mp, &ms);
	assert_int_equal(ms.load_failed, 1);
	assert_true(pool_size(f) < n);
	proto_tx_release(&a);
	proto_tx_release(&b);
}

/* A mempool.dat as Core's savemempool writes it (version 2: XOR key by file offset). */
static void test_load_core_file(void **state)
{
	struct fixture *f = *state;
	struct proto_tx t;
	spend1(&t, &f->cb[26], 0, CB_VALUE, 3000);
	assert_int_equal(close_chain(f), 0);
	struct proto_writer w;
	proto_writer_init(&w);
	static const uint8_t key[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	proto_write_u64le(&w, 2);
	proto_write_compact(&w, 8);
	proto_write_bytes(&w, key, 8);
	size_t body = w.len;
	proto_write_u64le(&w, 1);
	proto_tx_encode(&t, &w);
	proto_write_u64le(&w, (uint64_t)fake_now);
	proto_write_u64le(&w, 500); /* its prioritisation */
	struct proto_hash other;
	memset(other.b, 0x42, 32);
	proto_write_compact(&w, 1); /* a delta for a tx not in the pool */
	proto_write_hash(&w, &other);
	proto_write_u64le(&w, 42);
	proto_write_compact(&w, 2); /* unbroadcast txids: only the one in the pool is kept */
	proto_write_hash(&w, &t.txid);
	proto_write_hash(&w, &other);
	assert_int_equal(w.err, 0);
	for (size_t i = body; i < w.len; i++)
		w.buf[i] ^= key[i % 8];
	char path[TU_TMPDIR_MAX + 32];
	snprintf(path, sizeof(path), "%s/mempool.dat", f->dir);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(w.buf, 1, w.len, fp), w.len);
	fclose(fp);
	proto_writer_release(&w);
	open_chain(f);
	const struct mempool_entry *e = mempool_find(f->mp, &t.txid, false);
	assert_non_null(e);
	struct mempool_entry_info ei;
	mempool_entry_info(e, &ei);
	assert_int_equal(ei.fee, 3000);
	assert_int_equal(ei.modified_fee, 3500);
	assert_int_equal(ei.time, fake_now);
	struct mempool_stats ms;
	mempool_get_stats(f->mp, &ms);
	assert_int_equal(ms.loaded, 1);
	assert_int_equal(ms.load_failed, 0);
	struct mempool_info mi;
	mempool_get_info(f->mp, &mi);
	assert_int_equal(mi.unbroadcastcount, 1);
	assert_true(mempool_is_unbroadcast(f->mp, &t.txid));
	assert_false(mempool_is_unbroadcast(f->mp, &other));
	/* the other delta waits for its tx: saved again at close, with the set */
	assert_int_equal(mempool_save(f->mp), 0);
	size_t flen;
	uint8_t *data = tu_read_file(path, &flen);
	assert_int_equal(flen, 17 + 8 + t.size + 16 + 1 + 40 + 1 + 32);
	free(data);
	/* a peer fetched it: out of the set; the entry leaving the pool would do the same */
	mempool_unbroadcast_remove(f->mp, &t.txid);
	assert_false(mempool_is_unbroadcast(f->mp, &t.txid));
	assert_int_equal(mempool_unbroadcast_add(f->mp, &t.txid), 0);
	assert_int_equal(mempool_unbroadcast_add(f->mp, &t.txid), 0); /* once only */
	assert_int_equal(mempool_unbroadcast_add(f->mp, &other), 0);  /* not in the pool */
	mempool_get_info(f->mp, &mi);
	assert_int_equal(mi.unbroadcastcount, 1);
	proto_tx_release(&t);
}

static void test_package(void **state)
{
	struct fixture *f = *state;
	struct proto_tx a, b, c;
	spend1(&a, &f->cb[25], 0, CB_VALUE, 3000);
	spend1(&b, &a.txid, 0, CB_VALUE - 3000, 3000);
	spend1(&c, &f->cb[25], 0, CB_VALUE, 5000);
	struct proto_tx *pkg[3] = {&a, &b, &c};
	struct mempool_accept_result r[3];
	for (int i = 0; i < 3; i++)
		mempool_accept_result_init(&r[i]);
	struct mempool_package_state ps;
	size_t before = pool_size(f);
	assert_int_equal(mempool_test_package(f->mp, pkg, 2, r, &ps), 0);
	assert_int_equal(ps.result, MEMPOOL_PACKAGE_UNSET);
	assert_true(r[0].accepted && r[0].validated);
	assert_true(r[1].accepted && r[1].validated);
	assert_int_equal(pool_size(f), before);
	/* not sorted */
	struct proto_tx *rev[2] = {&b, &a};
	assert_int_equal(mempool_test_package(f->mp, rev, 2, r, &ps), 0);
	assert_int_equal(ps.result, MEMPOOL_PACKAGE_POLICY);
	assert_string_equal(ps.reason, "package-not-sorted");
	/* a conflict inside */
	struct proto_tx *conf[2] = {&a, &c};
	assert_int_equal(mempool_test_package(f->mp, conf, 2, r, &ps), 0);
	assert_string_equal(ps.reason, "conflict-in-package");
	for (int i = 0; i < 3; i++)
		mempool_accept_result_release(&r[i]);
	proto_tx_release(&a);
	proto_tx_release(&b);
	proto_tx_release(&c);
}

/* ---- a small pool: eviction and the rolling minimum fee --------------------------- */

static int setup_small(void **state)
{
	return setup_with(state, 20000);
}

static void test_eviction(void **state)
{
	struct fixture *f = *state;
	/* fill with rising fees until something must go */
	size_t accepted = 0;
	struct proto_hash first = {{0}};
	for (int h = 1; h <= 30; h++) {
		struct proto_tx t;
		spend1(&t, &f->cb[h], 0, CB_VALUE, 1000 + 100 * h);
		struct mempool_accept_result r;
		mempool_accept_result_init(&r);
		if (try_accept(f, &t, false, &r))
			accepted++;
		if (h == 1)
			first = t.txid;
		mempool_accept_result_release(&r);
		proto_tx_release(&t);
	}
	unsigned evicted = f->removed[MEMPOOL_REMOVED_SIZELIMIT];
	assert_true(evicted > 0);
	assert_int_equal(accepted, 30);
	assert_null(mempool_find(f->mp, &first, false));
	/* exactly the lowest feerates went, in order */
	for (int h = 1; h <= 30; h++) {
		struct proto_tx t;
		spend1(&t, &f->cb[h], 0, CB_VALUE, 1000 + 100 * h);
		bool in = mempool_find(f->mp, &t.txid, false) != NULL;
		if (in != (h > (int)evicted))
			fail_msg("tx %d (fee %d): in pool %d, %u evicted", h, 1000 + 100 * h, in,
			         evicted);
		proto_tx_release(&t);
	}
	struct mempool_info info;
	mempool_get_info(f->mp, &info);
	assert_true(info.usage <= 20000);
	int64_t minfee = mempool_min_fee(f->mp);
	assert_true(minfee > 1000);
	assert_int_equal(info.mempoolminfee, minfee);
	/* below the new floor: reconsiderable */
	struct proto_tx t;
	spend1(&t, &f->cb[31], 0, CB_VALUE, 1100);
	expect_reject(f, &t, "mempool min fee not met", NULL);
	proto_tx_release(&t);
	/* bytes per entry, for the report */
	struct mempool_entry_info ei;
	const struct mempool_entry **v;
	size_t n;
	assert_int_equal(mempool_list(f->mp, MEMPOOL_ORDER_DESCENDANT_SCORE, &v, &n), 0);
	assert_true(n > 0);
	mempool_entry_info(v[0], &ei);
	print_message("mempool: %zu entries, %llu bytes each (1-in-1-out P2WSH)\n", n,
	              (unsigned long long)ei.usage);
	free(v);
}

/* A low-fee parent whose child pays for both outlives higher-fee singles. */
static void test_eviction_cpfp(void **state)
{
	struct fixture *f = *state;
	struct proto_tx p, c;
	spend1(&p, &f->cb[31], 0, CB_VALUE, 1000);
	accept_ok(f, &p);
	spend1(&c, &p.txid, 0, CB_VALUE - 1000, 50000);
	accept_ok(f, &c);
	for (int h = 1; h <= 30; h++) {
		struct proto_tx t;
		spend1(&t, &f->cb[h], 0, CB_VALUE, 3000);
		struct mempool_accept_result r;
		mempool_accept_result_init(&r);
		(void)try_accept(f, &t, false, &r);
		mempool_accept_result_release(&r);
		proto_tx_release(&t);
	}
	assert_true(f->removed[MEMPOOL_REMOVED_SIZELIMIT] > 0);
	assert_non_null(mempool_find(f->mp, &p.txid, false));
	assert_non_null(mempool_find(f->mp, &c.txid, false));
	proto_tx_release(&p);
	proto_tx_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_accept_and_query, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_prechecks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scripts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ancestor_limits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rbf, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rbf_too_many, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_truc, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ephemeral_dust, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_reorg_cache, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_witness_variant_and_partial_block, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_reorg_removes_nonfinal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uncache_on_reject, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_persist, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_load_core_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_package, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_eviction, setup_small, teardown),
	    cmocka_unit_test_setup_teardown(test_eviction_cpfp, setup_small, teardown),
	};
	(void)F;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
