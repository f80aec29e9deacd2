/* tests/unit/testutil_regtest.c: Core's regtest chain fed to chain/ (testutil_regtest.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"
#include "tests/unit/testutil_regtest.h"

void tu_regtest_open(struct tu_regtest *r, const char *tag)
{
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	tu_tmpdir(r->dir, tag);
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), p->magic, &r->blocks);
	struct chain_config cfg = {.params = p, .dir = r->dir, .par = 1};
	int err = chain_open(&r->c, &cfg);
	if (err)
		fail_msg("chain_open(%s): %s", r->dir, chain_strerror(err));
}

void tu_regtest_submit(struct tu_regtest *r, size_t from, size_t to)
{
	struct proto_block b;
	proto_block_init(&b);
	for (size_t i = from; i < to; i++) {
		enum chain_submit res;
		struct chain_state st;
		chain_state_clear(&st);
		assert_int_equal(proto_block_decode(r->blocks.blk[i], r->blocks.len[i], &b, NULL),
		                 0);
		assert_int_equal(
		    chain_submit_block(r->c, r->blocks.blk[i], r->blocks.len[i], &b, &res, &st), 0);
		assert_int_equal(res, CHAIN_SUBMIT_ACCEPTED);
	}
	proto_block_release(&b);
}

void tu_regtest_free(struct tu_regtest *r)
{
	(void)chain_close(r->c);
	r->c = NULL;
	tu_rmtree(r->dir);
	tu_records_free(&r->blocks);
}
