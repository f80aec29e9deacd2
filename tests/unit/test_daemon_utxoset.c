/*
 * tests/unit/test_daemon_utxoset.c: gettxoutsetinfo (daemon/ctl/
 * utxoset_methods.c) while -coinstatsindex is still catching up, called
 * as the validation thread calls it, on Core's regtest chain: a block the
 * index has passed answers from the index (Core answers those already),
 * the tip or a later block is Core's -32603 "Unable to get data because
 * coinstatsindex is still syncing. Current height: N", use_index false
 * walks the set instead; once caught up, the tip's muhash from the index
 * equals the one computed over the set. (An integration test cannot hold
 * the index behind on purpose: tests/integration/test_coinstatsindex.py
 * compares everything else with bitcoind.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "daemon/ctl/internal.h"
#include "index/index.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"
#include "tests/unit/testutil_regtest.h"

struct fixture {
	struct tu_regtest r;
	struct index_set *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	tu_regtest_open(&f->r, "utxoset");
	struct index_config icfg = {.netdir = f->r.dir, .coinstats = true};
	assert_int_equal(index_set_open(&f->s, &icfg), INDEX_OK);
	tu_regtest_submit(&f->r, 0, 20);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	index_set_close(f->s);
	tu_regtest_free(&f->r);
	free(f);
	return 0;
}

/* gettxoutsetinfo with args (a JSON array text); the result or NULL with
 * *code and msg set. */
static json_t *call(struct fixture *f, const char *args, int *code, char msg[2048])
{
	struct ctl_chain_ctx x = {.net = proto_params(PROTO_NET_REGTEST), .indexes = f->s};
	struct ctl_result res = {0};
	json_t *a = json_loads(args, 0, NULL);
	assert_non_null(a);
	ctl_m_gettxoutsetinfo(f->r.c, &x, a, &res);
	json_decref(a);
	*code = res.err_code;
	strcpy(msg, res.err_msg);
	return res.result;
}

static void test_syncing(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(chain_height(f->r.c), 20);
	/* The index takes genesis to block 6 and stops there. */
	bool more;
	assert_int_equal(index_set_step(f->s, f->r.c, 7, &more), INDEX_OK);
	assert_true(more);
	int code;
	char msg[2048];
	json_t *r = call(f, "[\"muhash\"]", &code, msg);
	assert_null(r);
	assert_int_equal(code, CTL_INTERNAL_ERROR);
	assert_string_equal(msg, "Unable to get data because coinstatsindex is still syncing. "
	                         "Current height: 6");
	/* The default hash type asks too (Core checks before looking at it). */
	assert_null(call(f, "[]", &code, msg));
	assert_int_equal(code, CTL_INTERNAL_ERROR);
	assert_null(call(f, "[\"none\", 7]", &code, msg));
	assert_string_equal(msg, "Unable to get data because coinstatsindex is still syncing. "
	                         "Current height: 6");
	/* Passed already: answered from the index. */
	r = call(f, "[\"muhash\", 6]", &code, msg);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "height")), 6);
	assert_non_null(json_object_get(r, "block_info"));
	assert_int_equal(json_integer_value(json_object_get(r, "txouts")), 6);
	json_decref(r);
	/* use_index false: the set at the tip. */
	r = call(f, "[\"muhash\", null, false]", &code, msg);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "height")), 20);
	assert_null(json_object_get(r, "block_info"));
	assert_non_null(json_object_get(r, "disk_size"));
	char *walked = strdup(json_string_value(json_object_get(r, "muhash")));
	json_decref(r);
	/* Caught up: the index's answer at the tip has the walk's muhash. */
	while (more)
		assert_int_equal(index_set_step(f->s, f->r.c, 7, &more), INDEX_OK);
	r = call(f, "[\"muhash\"]", &code, msg);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "muhash")), walked);
	assert_int_equal(json_integer_value(json_object_get(r, "txouts")), 20);
	json_decref(r);
	free(walked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_syncing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
