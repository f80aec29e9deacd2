/*
 * tests/unit/test_mempool_fixture.h: the mempool tests' regtest chain
 * (coinbases paying P2WSH(OP_TRUE), so transactions need no keys), the
 * transaction builder, and accept/reject helpers. Included by
 * test_mempool.c and test_mining_assemble.c; each uses a part.
 */
#ifndef PEERD_TEST_MEMPOOL_FIXTURE_H
#define PEERD_TEST_MEMPOOL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "mining/mining.h"
#include "script/script.h"
#include "tests/unit/testutil.h"

#define TM_UNUSED __attribute__((unused))
#define TM_FN     static TM_UNUSED

/* ---- scripts ---------------------------------------------------------------- */

/* Witness scripts: OP_TRUE; OP_IF OP_1 OP_ENDIF; OP_0 (always false). */
TM_UNUSED static const uint8_t WS_TRUE[] = {0x51};
TM_UNUSED static const uint8_t WS_IF[] = {0x63, 0x51, 0x68};
TM_UNUSED static const uint8_t WS_FALSE[] = {0x00};

enum spk_kind { SPK_TRUE = 0, SPK_IF, SPK_FALSE, SPK_OPRETURN };

TM_FN size_t make_spk(enum spk_kind k, uint8_t out[40])
{
	const uint8_t *ws = k == SPK_IF ? WS_IF : k == SPK_FALSE ? WS_FALSE : WS_TRUE;
	size_t wl = k == SPK_IF ? sizeof(WS_IF) : 1;
	if (k == SPK_OPRETURN) {
		out[0] = 0x6a;
		out[1] = 0x01;
		out[2] = 0x2a;
		return 3;
	}
	out[0] = 0x00;
	out[1] = 0x20;
	proto_sha256(ws, wl, out + 2);
	return 34;
}

/* How an input is witnessed. */
enum wit_kind {
	WIT_TRUE = 0,  /* [51]: spends SPK_TRUE */
	WIT_IF_OK,     /* [01, IF script]: spends SPK_IF */
	WIT_IF_NONMIN, /* [02, IF script]: MINIMALIF, a policy flag */
	WIT_FALSE,     /* [00]: spends SPK_FALSE, fails for good */
	WIT_TRUE_PAD,  /* [<80 bytes>, 51]-less: [51] with a dummy first item */
};

struct in_spec {
	struct proto_hash txid;
	uint32_t n;
	uint32_t seq; /* 0: 0xfffffffd */
	enum wit_kind wit;
};

struct out_spec {
	int64_t value;
	enum spk_kind kind;
};

TM_FN void write_item(struct proto_writer *w, const uint8_t *p, size_t n)
{
	proto_write_compact(w, n);
	proto_write_bytes(w, p, n);
}

TM_FN void build(struct proto_tx *tx, int32_t version, uint32_t locktime, const struct in_spec *in,
                 size_t n_in, const struct out_spec *out, size_t n_out)
{
	struct proto_writer w;
	proto_writer_init(&w);
	proto_write_u32le(&w, (uint32_t)version);
	proto_write_u8(&w, 0);
	proto_write_u8(&w, 1);
	proto_write_compact(&w, n_in);
	for (size_t i = 0; i < n_in; i++) {
		struct proto_txin ti = {.prevout = {.txid = in[i].txid, .n = in[i].n},
		                        .sequence = in[i].seq ? in[i].seq : 0xfffffffdu};
		proto_txin_encode(&ti, NULL, 0, &w);
	}
	proto_write_compact(&w, n_out);
	for (size_t k = 0; k < n_out; k++) {
		uint8_t spk[40];
		size_t len = make_spk(out[k].kind, spk);
		struct proto_txout o = {.value = out[k].value};
		proto_txout_encode(&o, spk, (uint32_t)len, &w);
	}
	for (size_t i = 0; i < n_in; i++) {
		static const uint8_t one = 1, two = 2;
		switch (in[i].wit) {
		case WIT_TRUE:
			proto_write_compact(&w, 1);
			write_item(&w, WS_TRUE, 1);
			break;
		case WIT_IF_OK:
		case WIT_IF_NONMIN:
			proto_write_compact(&w, 2);
			write_item(&w, in[i].wit == WIT_IF_OK ? &one : &two, 1);
			write_item(&w, WS_IF, sizeof(WS_IF));
			break;
		case WIT_FALSE:
			proto_write_compact(&w, 1);
			write_item(&w, WS_FALSE, 1);
			break;
		case WIT_TRUE_PAD:
			proto_write_compact(&w, 2);
			write_item(&w, &one, 1);
			write_item(&w, WS_TRUE, 1);
			break;
		}
	}
	proto_write_u32le(&w, locktime);
	assert_int_equal(w.err, 0);
	proto_tx_init(tx);
	assert_int_equal(proto_tx_decode_buf(w.buf, w.len, tx, NULL), 0);
	proto_tx_compute_ids(tx);
	proto_writer_release(&w);
}

/* One input, one SPK_TRUE output of value - fee. */
TM_FN void spend1(struct proto_tx *tx, const struct proto_hash *txid, uint32_t n, int64_t value,
                  int64_t fee)
{
	struct in_spec in = {.txid = *txid, .n = n};
	struct out_spec out = {.value = value - fee};
	build(tx, 2, 0, &in, 1, &out, 1);
}

/* ---- fixture ------------------------------------------------------------------- */

TM_FN int64_t fake_now;
TM_FN int64_t clock_now(void)
{
	return fake_now;
}

#define N_COINBASE 130
#define CB_VALUE   5000000000LL

struct fixture {
	char dir[TU_TMPDIR_MAX];
	struct chain *c;
	struct mempool *mp; /* c's pool, from mempool_open */
	struct chain_config cfg;
	struct mempool_config mcfg;
	struct proto_hash cb[N_COINBASE + 1]; /* coinbase txid by height */
	unsigned removed[6], added[3];
};

TM_FN struct fixture *F;

TM_FN void on_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	struct fixture *f = arg;
	(void)e;
	f->added[how]++;
}

TM_FN void on_removed(void *arg, const struct mempool_entry *e, enum mempool_removal why)
{
	struct fixture *f = arg;
	assert_non_null(mempool_entry_tx(e));
	f->removed[why]++;
}

TM_FN void mine_txs(struct fixture *f, const struct mining_tx *txs, size_t n,
                    struct proto_hash *cb_txid)
{
	uint8_t spk[40];
	size_t len = make_spk(SPK_TRUE, spk);
	struct mining_args a = {
	    .spk = spk, .spk_len = (uint32_t)len, .txs = txs, .n_txs = n, .submit = true};
	struct mining_block m;
	uint64_t tries = MINING_MAX_TRIES;
	struct chain_state st;
	int err = mining_generate(f->c, &a, &tries, &m, &st);
	if (err)
		fail_msg("mining_generate: %s (%s %s)", chain_strerror(err), st.reason, st.debug);
	assert_int_equal(m.submitted, CHAIN_SUBMIT_ACCEPTED);
	if (cb_txid) {
		struct proto_block b;
		proto_block_init(&b);
		assert_int_equal(proto_block_decode(m.raw, m.len, &b, NULL), 0);
		*cb_txid = *proto_tx_txid(&b.txs[0]);
		proto_block_release(&b);
	}
	mining_block_release(&m);
	fake_now += 1;
}

/* The pool is attached inside chain_open, as peerd attaches it. */
TM_FN int attach_mempool(void *arg, struct chain *c)
{
	struct fixture *f = arg;
	return mempool_open(c, &f->mcfg, f->dir, &f->mp);
}

TM_FN void open_chain(struct fixture *f)
{
	f->cfg.attach = attach_mempool;
	f->cfg.attach_arg = f;
	int err = chain_open(&f->c, &f->cfg);
	if (err)
		fail_msg("chain_open: %s", chain_strerror(err));
	mempool_load(f->mp);
	struct mempool_events ev = {.added = on_added, .removed = on_removed, .arg = f};
	mempool_set_events(f->mp, &ev);
}

/* The mempool is saved and detached before the chain closes (as peerd does). */
TM_FN int close_chain(struct fixture *f)
{
	mempool_close(f->mp);
	f->mp = NULL;
	return chain_close(f->c);
}

TM_FN int setup_with(void **state, size_t max_bytes)
{
	struct fixture *f = calloc(1, sizeof(*f));
	tu_tmpdir(f->dir, "mempool");
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct proto_block g;
	proto_block_init(&g);
	assert_int_equal(proto_block_decode(p->genesis, p->genesis_len, &g, NULL), 0);
	fake_now = (int64_t)g.hdr.time + 86400;
	proto_block_release(&g);
	f->cfg = (struct chain_config){.params = p, .dir = f->dir, .par = 2, .now = clock_now};
	f->mcfg = (struct mempool_config){.max_bytes = max_bytes, .persist = true};
	open_chain(f);
	for (int h = 1; h <= N_COINBASE; h++)
		mine_txs(f, NULL, 0, &f->cb[h]);
	F = f;
	*state = f;
	return 0;
}

TM_FN int setup(void **state)
{
	return setup_with(state, 0);
}

TM_FN int teardown(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(close_chain(f), 0);
	tu_rmtree(f->dir);
	free(f);
	return 0;
}

/* Accept (or test-accept) and return whether it went in; r is the caller's. */
TM_FN bool try_accept(struct fixture *f, struct proto_tx *tx, bool test,
                      struct mempool_accept_result *r)
{
	struct mempool_accept_opts o = {.test_accept = test};
	int err = mempool_accept(f->mp, tx, &o, r);
	if (err)
		fail_msg("mempool_accept: %s", chain_strerror(err));
	return r->accepted;
}

#define accept_ok(f, tx) accept_ok_impl((f), (tx), __LINE__)
TM_FN void accept_ok_impl(struct fixture *f, struct proto_tx *tx, int line)
{
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	if (!try_accept(f, tx, false, &r))
		fail_msg("line %d: rejected: %s (%s)", line, r.state.reason, r.state.debug);
	mempool_accept_result_release(&r);
}

#define expect_reject(f, tx, reason, debug)                                                        \
	expect_reject_impl((f), (tx), (reason), (debug), __LINE__)
TM_FN void expect_reject_impl(struct fixture *f, struct proto_tx *tx, const char *reason,
                              const char *debug, int line)
{
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	if (try_accept(f, tx, false, &r))
		fail_msg("line %d: accepted, expected %s", line, reason);
	if (strcmp(r.state.reason, reason))
		fail_msg("line %d: reason\n  got      %s (%s)\n  expected %s", line, r.state.reason,
		         r.state.debug, reason);
	if (debug && strncmp(r.state.debug, debug, strlen(debug)))
		fail_msg("line %d: debug\n  got      %s\n  expected %s...", line, r.state.debug,
		         debug);
	mempool_accept_result_release(&r);
}

TM_FN size_t pool_size(struct fixture *f)
{
	struct mempool_info info;
	mempool_get_info(f->mp, &info);
	return info.size;
}

/* Mine every mempool transaction (parents first). */
TM_FN void mine_pool(struct fixture *f)
{
	const struct mempool_entry **v;
	size_t n;
	assert_int_equal(mempool_list(f->mp, MEMPOOL_ORDER_DEPTH_SCORE, &v, &n), 0);
	struct mining_tx *txs = calloc(n ? n : 1, sizeof(*txs));
	uint8_t **raws = calloc(n ? n : 1, sizeof(*raws));
	for (size_t i = 0; i < n; i++) {
		size_t len;
		assert_int_equal(
		    mempool_get_raw(f->mp, mempool_entry_txid(v[i]), false, &raws[i], &len), 0);
		txs[i].raw = raws[i];
		txs[i].len = len;
	}
	free(v);
	mine_txs(f, txs, n, NULL);
	for (size_t i = 0; i < n; i++)
		free(raws[i]);
	free(raws);
	free(txs);
}

#endif
