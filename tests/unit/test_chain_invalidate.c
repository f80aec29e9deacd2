/*
 * tests/unit/test_chain_invalidate.c: Core's invalidateblock and
 * reconsiderblock on Core's regtest chain, against Core's answers.
 *
 * The chain (heights 1..265) and its stale branch (261..263 on 260) are
 * both stored. Invalidating main's 261 must leave the stale branch active,
 * with exactly Core's UTXO figures for it; reconsidering brings back Core's
 * final state. Invalidating 200 cuts both branches: the state must equal a
 * chain that only ever saw 1..199, the mark must survive a reopen, and
 * reconsidering returns to the tip. Genesis cannot be invalidated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

struct fixture {
	char dir[64], dir2[64];
	struct tu_records main_chain, stale;
	json_t *core;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	json_error_t jerr;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	snprintf(f->dir, sizeof(f->dir), "/tmp/peerd-inval-XXXXXX");
	snprintf(f->dir2, sizeof(f->dir2), "/tmp/peerd-inval2-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_non_null(mkdtemp(f->dir2));
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), p->magic, &f->main_chain);
	tu_records_load(tu_vector("regtest/regtest_stale_branch.dat"), p->magic, &f->stale);
	f->core = json_load_file(tu_vector("regtest/regtest_chain.json"), 0, &jerr);
	if (!f->core)
		fail_msg("regtest_chain.json: %s", jerr.text);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", f->dir, f->dir2);
	assert_int_equal(system(cmd), 0);
	tu_records_free(&f->main_chain);
	tu_records_free(&f->stale);
	json_decref(f->core);
	free(f);
	return 0;
}

static struct chain *open_at(const char *dir)
{
	struct chain_config cfg = {.params = proto_params(PROTO_NET_REGTEST), .dir = dir, .par = 2};
	struct chain *c = NULL;
	int err = chain_open(&c, &cfg);
	if (err)
		fail_msg("chain_open(%s): %s", dir, chain_strerror(err));
	return c;
}

static void submit_all(struct chain *c, const struct tu_records *r, size_t n)
{
	struct proto_block b;
	proto_block_init(&b);
	for (size_t i = 0; i < n; i++) {
		enum chain_submit res;
		struct chain_state st;
		chain_state_clear(&st);
		assert_int_equal(proto_block_decode(r->blk[i], r->len[i], &b, NULL), 0);
		assert_int_equal(chain_submit_block(c, r->blk[i], r->len[i], &b, &res, &st), 0);
		if (res == CHAIN_SUBMIT_REJECTED || res == CHAIN_SUBMIT_DUPLICATE_INVALID)
			fail_msg("record %zu rejected: %s (%s)", i, st.reason, st.debug);
	}
	proto_block_release(&b);
}

/* hash_serialized_3 as Core prints it. */
static void utxo_hex(struct chain *c, struct chain_utxo_stats *s, char hex[65])
{
	struct proto_hash h;
	assert_int_equal(chain_coins_stats(chain_get_coins(c), s), 0);
	memcpy(h.b, s->hash_serialized, 32);
	proto_hash_to_hex(&h, hex);
}

static void expect_core(struct chain *c, const struct fixture *f, const char *name)
{
	json_t *cp = json_object_get(json_object_get(f->core, "checkpoints"), name);
	json_t *ti = json_object_get(cp, "gettxoutsetinfo");
	struct chain_utxo_stats s;
	char hex[65];
	assert_non_null(cp);
	tu_assert_hash_hex(&chain_tip(c)->hash,
	                   json_string_value(json_object_get(cp, "bestblockhash")));
	assert_int_equal(chain_height(c), json_integer_value(json_object_get(cp, "height")));
	utxo_hex(c, &s, hex);
	assert_string_equal(hex, json_string_value(json_object_get(ti, "hash_serialized_3")));
	assert_int_equal(s.txouts, json_integer_value(json_object_get(ti, "txouts")));
}

static void invalidate_and_reconsider(void **state)
{
	struct fixture *f = *state;
	struct chain_state st;
	struct chain *c = open_at(f->dir);
	submit_all(c, &f->main_chain, 260);
	submit_all(c, &f->stale, 3);
	submit_all(c, &f->main_chain, 265);
	expect_core(c, f, "after-reorg");

	/* Main's 261 invalid: the stale branch is the best valid chain left. */
	struct chain_node *m261 = chain_at(c, 261), *m265 = chain_tip(c);
	assert_int_equal(chain_invalidate(c, m261, &st), 0);
	expect_core(c, f, "stale-branch-tip");
	assert_true(chain_node_failed(m261));
	assert_true(chain_node_failed(m265)); /* a descendant: failed child */
	assert_false(chain_contains(c, m261));
	assert_int_equal(chain_reconsider(c, m261, &st), 0);
	expect_core(c, f, "after-reorg");
	assert_false(chain_node_failed(m261) || chain_node_failed(m265));

	/* 200 invalid: both branches descend from it. */
	struct chain_node *n200 = chain_at(c, 200);
	assert_int_equal(chain_invalidate(c, n200, &st), 0);
	assert_int_equal(chain_height(c), 199);
	char got[65], want[65];
	struct chain_utxo_stats s;
	utxo_hex(c, &s, got);
	struct chain *ref = open_at(f->dir2);
	submit_all(ref, &f->main_chain, 199);
	utxo_hex(ref, &s, want);
	assert_string_equal(got, want);
	assert_true(proto_hash_eq(&chain_tip(c)->hash, &chain_tip(ref)->hash));
	assert_int_equal(chain_close(ref), 0);

	/* The mark is kept across a reopen; resubmitting a block above it is
	 * Core's duplicate-invalid. */
	struct proto_hash h200 = n200->hash;
	assert_int_equal(chain_close(c), 0);
	c = open_at(f->dir);
	assert_int_equal(chain_height(c), 199);
	n200 = chain_index_find(chain_get_index(c), &h200);
	assert_non_null(n200);
	assert_true(chain_node_failed(n200));
	{
		struct proto_block b;
		enum chain_submit res;
		proto_block_init(&b);
		assert_int_equal(
		    proto_block_decode(f->main_chain.blk[210], f->main_chain.len[210], &b, NULL),
		    0);
		assert_int_equal(chain_submit_block(c, f->main_chain.blk[210],
		                                    f->main_chain.len[210], &b, &res, &st),
		                 0);
		assert_int_equal(res, CHAIN_SUBMIT_DUPLICATE_INVALID);
		proto_block_release(&b);
	}
	assert_int_equal(chain_height(c), 199);
	assert_int_equal(chain_reconsider(c, n200, &st), 0);
	expect_core(c, f, "after-reorg");

	/* Genesis stays. (chain.h says CHAIN_EARG; chain/activate.c answers with a
	 * verdict, reason "genesis": this pins what the code does.) */
	tu_assert_reject(chain_invalidate(c, chain_at(c, 0), &st), &st, CHAIN_RESULT_CONSENSUS,
	                 "genesis");
	assert_int_equal(chain_height(c), 265);
	assert_int_equal(chain_close(c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(invalidate_and_reconsider, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
