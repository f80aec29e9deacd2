/*
 * bench/bench_mempool.c: the mempool's acceptance and the script cache.
 *
 *   AcceptLargeTxPar1,   one transaction spending 1,000 P2WPKH outputs
 *   AcceptLargeTxPar2    (ECDSA), test-accepted (every rule, the standard
 *                        flags' 1,000 signature checks, then the block
 *                        flags' 1,000 again: the script cache is off so
 *                        every op does the same work). Par 1: the
 *                        validation thread alone; par 2: one worker with
 *                        it. One op = one mempool_accept. The
 *                        Par2 note has the ratio from pairs timed back
 *                        to back (see LARGE_PAIRS).
 *   ConnectBlockWarmCache, a block of 1,000 one-in-one-out P2WPKH
 *   ConnectBlockColdCache  transactions, connected in just-check mode
 *                        (repeatable: the cache is consulted, not used
 *                        up) with every transaction verified by the
 *                        mempool first (warm) or with no script cache
 *                        (cold). Par 2. One op = one chain_connect_block.
 *
 * Everything is made here on a fresh regtest chain (keys from tagged
 * hashes, libsecp256k1 signatures), nothing read from disk.
 */
#include "bench/bench.h"
#include "bench/bench_sigs.h"

#include <secp256k1.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "mempool/mempool.h"
#include "mining/mining.h"
#include "script/script.h"

#define LARGE_INPUTS 1000
#define BLOCK_TXS    1000
#define BENCH_ROUNDS 5

static int64_t fake_now;
static int64_t clock_now(void)
{
	return fake_now;
}

struct lab {
	char dir[64];
	struct chain *c;
	struct mempool *mp; /* c's pool */
	secp256k1_context *ctx;
	uint8_t sk[32], pub[33], spk[22], code[25];
	struct proto_hash cb1;
	struct proto_hash fan;
	int64_t fan_value;
};

/* A version-2 tx paying every output to the lab's key; with sigs, witnesses. */
static void write_tx(const struct lab *L, const struct proto_outpoint *ins, size_t n_in,
                     const int64_t *outv, size_t n_out, uint8_t (*sigs)[80], const size_t *sig_len,
                     struct proto_writer *w)
{
	proto_write_u32le(w, 2);
	if (sigs) {
		proto_write_u8(w, 0);
		proto_write_u8(w, 1);
	}
	proto_write_compact(w, n_in);
	for (size_t i = 0; i < n_in; i++) {
		struct proto_txin in = {.prevout = ins[i], .sequence = 0xfffffffdu};
		proto_txin_encode(&in, NULL, 0, w);
	}
	proto_write_compact(w, n_out);
	for (size_t k = 0; k < n_out; k++) {
		struct proto_txout o = {.value = outv[k]};
		proto_txout_encode(&o, L->spk, sizeof(L->spk), w);
	}
	if (sigs) {
		for (size_t i = 0; i < n_in; i++) {
			proto_write_compact(w, 2);
			proto_write_compact(w, sig_len[i]);
			proto_write_bytes(w, sigs[i], sig_len[i]);
			proto_write_compact(w, 33);
			proto_write_bytes(w, L->pub, 33);
		}
	}
	proto_write_u32le(w, 0);
}

/* The signed tx into *out (raw bytes in the writer, decoded in tx). 0 or -1. */
static int make_tx(const struct lab *L, const struct proto_outpoint *ins, const int64_t *amounts,
                   size_t n_in, const int64_t *outv, size_t n_out, struct proto_writer *out,
                   struct proto_tx *tx)
{
	struct proto_writer w;
	proto_writer_init(&w);
	write_tx(L, ins, n_in, outv, n_out, NULL, NULL, &w);
	int rc = -1;
	struct script_spent_output *spent = xcalloc(n_in, sizeof(*spent));
	uint8_t(*sigs)[80] = xcalloc(n_in, 80);
	size_t *lens = xcalloc(n_in, sizeof(*lens));
	struct script_precomputed *pre = xmalloc(sizeof(*pre));
	if (w.err || !spent || !sigs || !lens || !pre ||
	    proto_tx_decode_buf(w.buf, w.len, tx, NULL))
		goto out;
	for (size_t i = 0; i < n_in; i++) {
		spent[i].amount = amounts[i];
		spent[i].script = L->spk;
		spent[i].script_len = sizeof(L->spk);
	}
	script_precompute(pre, tx, spent, true);
	for (size_t i = 0; i < n_in; i++) {
		uint8_t hash[32];
		script_sighash_v0(tx, (uint32_t)i, L->code, sizeof(L->code), amounts[i],
		                  SCRIPT_SIGHASH_ALL, pre, hash);
		secp256k1_ecdsa_signature sig;
		size_t n = 79;
		if (!secp256k1_ecdsa_sign(L->ctx, &sig, hash, L->sk, NULL, NULL) ||
		    !secp256k1_ecdsa_signature_serialize_der(L->ctx, sigs[i], &n, &sig))
			goto out;
		sigs[i][n] = SCRIPT_SIGHASH_ALL;
		lens[i] = n + 1;
	}
	out->len = 0;
	write_tx(L, ins, n_in, outv, n_out, sigs, lens, out);
	if (out->err || proto_tx_decode_buf(out->buf, out->len, tx, NULL))
		goto out;
	proto_tx_compute_ids(tx);
	rc = 0;
out:
	proto_writer_release(&w);
	xfree(spent);
	xfree(sigs);
	xfree(lens);
	xfree(pre);
	return rc;
}

static int mine(struct lab *L, const struct mining_tx *txs, size_t n, bool submit,
                struct mining_block *m)
{
	struct mining_args a = {
	    .spk = L->spk, .spk_len = sizeof(L->spk), .txs = txs, .n_txs = n, .submit = submit};
	uint64_t tries = MINING_MAX_TRIES;
	struct chain_state st;
	int err = mining_generate(L->c, &a, &tries, m, &st);
	fake_now++;
	if (err)
		fprintf(stderr, "mining_generate: %s (%s %s)\n", chain_strerror(err), st.reason,
		        st.debug);
	return err ? -1 : 0;
}

/* A chain at height 102 whose block 102 holds one tx paying n_out outputs to the key. */
static int lab_open(struct bench_ctx *ctx, struct lab *L, int par, bool cache, size_t n_out)
{
	memset(L, 0, sizeof(*L));
	snprintf(L->dir, sizeof(L->dir), "/tmp/peerd-bench-mp-XXXXXX");
	if (!mkdtemp(L->dir)) {
		bench_fail(ctx, "mkdtemp");
		return -1;
	}
	L->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	int tag = 7;
	proto_tagged_hash("peerd/bench/mempool", &tag, sizeof(tag), L->sk);
	secp256k1_pubkey pk;
	size_t pl = 33;
	if (!L->ctx || !secp256k1_ec_pubkey_create(L->ctx, &pk, L->sk) ||
	    !secp256k1_ec_pubkey_serialize(L->ctx, L->pub, &pl, &pk, SECP256K1_EC_COMPRESSED)) {
		bench_fail(ctx, "secp256k1 setup");
		return -1;
	}
	L->spk[0] = 0x00;
	L->spk[1] = 0x14;
	proto_hash160(L->pub, 33, L->spk + 2);
	static const uint8_t pre[3] = {0x76, 0xa9, 0x14};
	memcpy(L->code, pre, 3);
	memcpy(L->code + 3, L->spk + 2, 20);
	L->code[23] = 0x88;
	L->code[24] = 0xac;

	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct proto_block g;
	proto_block_init(&g);
	if (proto_block_decode(p->genesis, p->genesis_len, &g, NULL)) {
		bench_fail(ctx, "genesis");
		return -1;
	}
	fake_now = (int64_t)g.hdr.time + 86400;
	struct chain_config cfg = {.params = p, .dir = L->dir, .par = par, .now = clock_now};
	cfg.script_cache_bytes = cache ? 0 : SIZE_MAX;
	if (chain_open(&L->c, &cfg)) {
		proto_block_release(&g);
		bench_fail(ctx, "chain_open");
		return -1;
	}
	if (mempool_open(L->c, NULL, L->dir, &L->mp)) {
		proto_block_release(&g);
		bench_fail(ctx, "mempool_open");
		return -1;
	}
	for (int h = 1; h <= 101; h++) {
		struct mining_block m;
		if (mine(L, NULL, 0, true, &m)) {
			proto_block_release(&g);
			bench_fail(ctx, "mining");
			return -1;
		}
		if (h == 1 && !proto_block_decode(m.raw, m.len, &g, NULL))
			L->cb1 = *proto_tx_txid(&g.txs[0]);
		mining_block_release(&m);
	}
	proto_block_release(&g);
	/* the fan: coinbase 1 into n_out equal outputs */
	int64_t *outv = xcalloc(n_out, sizeof(*outv));
	int64_t in_value = 5000000000LL;
	L->fan_value = (in_value - 1000000) / (int64_t)n_out;
	for (size_t k = 0; k < n_out; k++)
		outv[k] = L->fan_value;
	struct proto_outpoint op = {.txid = L->cb1, .n = 0};
	struct proto_writer w;
	proto_writer_init(&w);
	struct proto_tx tx;
	proto_tx_init(&tx);
	int rc = make_tx(L, &op, &in_value, 1, outv, n_out, &w, &tx);
	if (!rc) {
		L->fan = tx.txid;
		struct mining_tx mt = {.raw = w.buf, .len = w.len};
		struct mining_block m;
		rc = mine(L, &mt, 1, true, &m);
		if (!rc)
			mining_block_release(&m);
	}
	proto_tx_release(&tx);
	proto_writer_release(&w);
	xfree(outv);
	if (rc)
		bench_fail(ctx, "the fan-out transaction");
	return rc;
}

static void lab_close(struct lab *L)
{
	mempool_close(L->mp);
	L->mp = NULL;
	if (L->c)
		(void)chain_close(L->c);
	if (L->ctx)
		secp256k1_context_destroy(L->ctx);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", L->dir);
	if (L->dir[0] && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", L->dir);
}

/* ---- AcceptLargeTx ---------------------------------------------------------- */

/*
 * Pairs of accepts, one at par 2 and one at par 1, for the ratio. This
 * machine's per-core speed drifts by a third from minute to minute, so
 * par 2 timed first and par 1 after compares two machines (ratios from
 * 1.1x to an impossible 2.7x were seen); each pair is timed back to back,
 * in alternating order, and the note gives the median of the pairs.
 */
#define LARGE_PAIRS 9

/* A lab at `par` with its 1,000-input transaction. */
struct large {
	struct lab L;
	struct proto_tx tx;
	struct proto_writer w;
	bool open;
};

static void large_init(struct large *g)
{
	memset(g, 0, sizeof(*g));
	proto_tx_init(&g->tx);
	proto_writer_init(&g->w);
}

/* Open the lab and sign the transaction (after large_init). 0 or -1 (reported). */
static int large_open(struct bench_ctx *ctx, struct large *g, int par)
{
	if (lab_open(ctx, &g->L, par, false, LARGE_INPUTS))
		return -1;
	g->open = true;
	struct proto_outpoint *ins = xcalloc(LARGE_INPUTS, sizeof(*ins));
	int64_t *amounts = xcalloc(LARGE_INPUTS, sizeof(*amounts));
	if (!ins || !amounts) {
		xfree(ins);
		xfree(amounts);
		bench_fail(ctx, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < LARGE_INPUTS; i++) {
		ins[i] = (struct proto_outpoint){.txid = g->L.fan, .n = (uint32_t)i};
		amounts[i] = g->L.fan_value;
	}
	int64_t outv = g->L.fan_value * LARGE_INPUTS - 1000000;
	int rc = make_tx(&g->L, ins, amounts, LARGE_INPUTS, &outv, 1, &g->w, &g->tx);
	xfree(ins);
	xfree(amounts);
	if (rc) {
		bench_fail(ctx, "signing the large transaction");
		return -1;
	}
	return 0;
}

static void large_close(struct large *g)
{
	proto_writer_release(&g->w);
	proto_tx_release(&g->tx);
	if (g->open)
		lab_close(&g->L);
	g->open = false;
}

/* Nanoseconds for one test-accept, or -1 (reported). */
static double large_accept(struct bench_ctx *ctx, struct large *g)
{
	struct mempool_accept_opts o = {.test_accept = true};
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	uint64_t t0 = bench_now_ns();
	int err = mempool_accept(g->L.mp, &g->tx, &o, &r);
	double ns = (double)(bench_now_ns() - t0);
	if (err || !r.accepted) {
		bench_fail(ctx, "not accepted: %s (%s)", r.state.reason, r.state.debug);
		ns = -1;
	}
	mempool_accept_result_release(&r);
	return ns;
}

/* The share of a lab's script checks its workers ran. */
static double worker_share(struct large *g)
{
	struct pool_queue_stats qs;
	chain_checker_stats(chain_get_checker(g->L.c), &qs);
	return qs.jobs_run ? (double)(qs.jobs_run - qs.thread[0].jobs_run) / (double)qs.jobs_run
	                   : 0;
}

BENCH_N(AcceptLargeTxPar1, BENCH_ROUNDS)
{
	struct large g;
	double total = 0;
	large_init(&g);
	if (large_open(ctx, &g, 1) == 0) {
		bench_reset(ctx);
		for (size_t i = 0; i < n; i++) {
			double ns = large_accept(ctx, &g);
			if (ns < 0)
				break;
			total += ns;
		}
		bench_stop(ctx);
	}
	large_close(&g);
	bench_note(ctx, "%.1f ms per 1,000-input tx (2,000 ECDSA checks), validation thread only",
	           total / (double)n / 1e6);
}

BENCH_N(AcceptLargeTxPar2, BENCH_ROUNDS)
{
	struct large g2, g1;
	double ratio[LARGE_PAIRS], t2[LARGE_PAIRS], t1[LARGE_PAIRS];
	double machine[LARGE_PAIRS], of_machine[LARGE_PAIRS];
	int pairs = 0;
	large_init(&g2);
	large_init(&g1);
	if (bench_sigs_setup()) {
		bench_fail(ctx, "secp256k1 setup failed");
		goto out;
	}
	if (large_open(ctx, &g2, 2) || large_open(ctx, &g1, 1))
		goto out;
	/* The timed row: par 2 alone. */
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (large_accept(ctx, &g2) < 0)
			break;
	}
	bench_stop(ctx);
	/* Untimed by the harness: the pairs. */
	for (; pairs < LARGE_PAIRS; pairs++) {
		bool par1_first = pairs % 2;
		double a = large_accept(ctx, par1_first ? &g1 : &g2);
		double b = large_accept(ctx, par1_first ? &g2 : &g1);
		if (a < 0 || b < 0)
			break;
		t1[pairs] = par1_first ? a : b;
		t2[pairs] = par1_first ? b : a;
		ratio[pairs] = t1[pairs] / t2[pairs];
		/* What two threads of this machine give right now, with nothing
		 * shared: bare verifications, one thread against two. */
		machine[pairs] =
		    bench_sigs_verify_ns(ctx, false) / bench_sigs_verify_ns_parallel(ctx, false, 2);
		of_machine[pairs] = ratio[pairs] / machine[pairs];
	}
	if (pairs) {
		qsort(ratio, (size_t)pairs, sizeof(ratio[0]), bench_cmp_double);
		qsort(t1, (size_t)pairs, sizeof(t1[0]), bench_cmp_double);
		qsort(t2, (size_t)pairs, sizeof(t2[0]), bench_cmp_double);
		qsort(machine, (size_t)pairs, sizeof(machine[0]), bench_cmp_double);
		qsort(of_machine, (size_t)pairs, sizeof(of_machine[0]), bench_cmp_double);
		bench_note(
		    ctx,
		    "%d pairs back to back (par 2, par 1, alternating order): par 1 over par 2 "
		    "median %.2fx (lowest %.2fx, highest %.2fx); median %.1f ms at par 2 (%.0f%% "
		    "of the checks on the worker), %.1f ms at par 1; this machine's own 2-thread "
		    "speedup on bare ECDSA verifications, taken after each pair: median %.2fx "
		    "(lowest %.2fx, highest %.2fx); the pair's ratio over it: median %.0f%%",
		    pairs, ratio[pairs / 2], ratio[0], ratio[pairs - 1], t2[pairs / 2] / 1e6,
		    worker_share(&g2) * 100, t1[pairs / 2] / 1e6, machine[pairs / 2], machine[0],
		    machine[pairs - 1], 100.0 * of_machine[pairs / 2]);
	}
out:
	large_close(&g1);
	large_close(&g2);
}

/* ---- ConnectBlock with the script cache warm or cold ---------------------------- */

static void connect_cache(struct bench_ctx *ctx, size_t n, bool warm)
{
	struct lab L;
	struct proto_block b;
	proto_block_init(&b);
	struct mining_tx *mt = xcalloc(BLOCK_TXS, sizeof(*mt));
	struct proto_writer *ws = xcalloc(BLOCK_TXS, sizeof(*ws));
	if (lab_open(ctx, &L, 2, warm, BLOCK_TXS))
		goto out;
	struct proto_tx tx;
	proto_tx_init(&tx);
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	for (size_t i = 0; i < BLOCK_TXS; i++) {
		struct proto_outpoint op = {.txid = L.fan, .n = (uint32_t)i};
		int64_t outv = L.fan_value - 10000;
		proto_writer_init(&ws[i]);
		if (make_tx(&L, &op, &L.fan_value, 1, &outv, 1, &ws[i], &tx)) {
			bench_fail(ctx, "signing");
			break;
		}
		mt[i] = (struct mining_tx){ws[i].buf, ws[i].len};
		/* warm: the mempool verifies it, which fills the cache */
		if (warm && (mempool_accept(L.mp, &tx, NULL, &r) || !r.accepted)) {
			bench_fail(ctx, "not accepted: %s", r.state.reason);
			break;
		}
	}
	mempool_accept_result_release(&r);
	proto_tx_release(&tx);
	struct mining_block m;
	struct chain_node *node = NULL;
	struct chain_state st;
	if (mine(&L, mt, BLOCK_TXS, false, &m)) {
		bench_fail(ctx, "mining the block");
		goto out;
	}
	if (proto_block_decode(m.raw, m.len, &b, NULL) ||
	    chain_accept_headers(L.c, &b.hdr, 1, &node, &st)) {
		mining_block_release(&m);
		bench_fail(ctx, "the block's header");
		goto out;
	}
	mining_block_release(&m);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct chain_connect_info info;
		if (chain_connect_block(chain_get_coins(L.c), chain_get_checker(L.c), &b, node,
		                        chain_params(L.c), true, NULL, &info, &st)) {
			bench_fail(ctx, "connect: %s (%s)", st.reason, st.debug);
			break;
		}
	}
	bench_stop(ctx);
	bench_note(ctx, "%s: %d transactions, %s", warm ? "warm" : "cold", BLOCK_TXS,
	           warm ? "every one verified by the mempool first" : "no script cache");
out:
	for (size_t i = 0; i < BLOCK_TXS; i++)
		proto_writer_release(&ws[i]);
	xfree(ws);
	xfree(mt);
	proto_block_release(&b);
	lab_close(&L);
}

BENCH_N(ConnectBlockWarmCache, BENCH_ROUNDS)
{
	connect_cache(ctx, n, true);
}

BENCH_N(ConnectBlockColdCache, BENCH_ROUNDS)
{
	connect_cache(ctx, n, false);
}

/* ---- Accept10kTxs ------------------------------------------------------------------ */

#define MANY_TXS 10000

/* Resident set in KiB, or -1. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = -1, resident = -1;
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

BENCH_N(Accept10kTxs, MANY_TXS)
{
	struct lab L;
	struct proto_tx *txs = xcalloc(MANY_TXS, sizeof(*txs));
	struct proto_writer w;
	proto_writer_init(&w);
	/* No script cache: its table is preallocated and its pages would be
	 * counted as they are touched, hiding what the pool itself takes. */
	if (lab_open(ctx, &L, 2, false, MANY_TXS))
		goto out;
	/* one-in-two-out spends of the block's coins, signed before timing */
	for (size_t i = 0; i < MANY_TXS; i++) {
		struct proto_outpoint op = {.txid = L.fan, .n = (uint32_t)i};
		int64_t outv[2] = {L.fan_value / 2, L.fan_value / 2 - 2000};
		proto_tx_init(&txs[i]);
		if (make_tx(&L, &op, &L.fan_value, 1, outv, 2, &w, &txs[i])) {
			bench_fail(ctx, "signing");
			goto out;
		}
	}
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	long rss0 = rss_kib();
	size_t count = n < MANY_TXS ? n : MANY_TXS;
	bench_reset(ctx);
	for (size_t i = 0; i < count; i++) {
		if (mempool_accept(L.mp, &txs[i], NULL, &r) || !r.accepted) {
			bench_fail(ctx, "tx %zu not accepted: %s (%s)", i, r.state.reason,
			           r.state.debug);
			break;
		}
	}
	bench_stop(ctx);
	long rss1 = rss_kib();
	struct mempool_info info;
	mempool_get_info(L.mp, &info);
	bench_note(ctx,
	           "%llu txs in the pool; usage %llu bytes per tx (the pool's own figure), RSS "
	           "grew %ld bytes per tx",
	           (unsigned long long)info.size,
	           (unsigned long long)(info.size ? info.usage / info.size : 0),
	           count ? (rss1 - rss0) * 1024 / (long)count : 0);
	mempool_accept_result_release(&r);
out:
	for (size_t i = 0; i < MANY_TXS; i++)
		proto_tx_release(&txs[i]);
	xfree(txs);
	proto_writer_release(&w);
	lab_close(&L);
}
