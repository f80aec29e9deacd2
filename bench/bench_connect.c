/*
 * bench/bench_connect.c: connecting blocks, as Bitcoin Core's
 * bench/connectblock.cpp measures it, and whole chains.
 *
 *   ConnectBlockAllEcdsa,    Core's block: 1,000 transactions, each spending all
 *   ConnectBlockAllSchnorr,  5 outputs (1 BTC each) of the one before: P2WPKH
 *   ConnectBlockMixed-       (ECDSA), P2TR key path (Schnorr), or 4 P2WPKH and
 *     EcdsaSchnorr           1 P2TR. Blocks 1..101 are connected untimed (the
 *                          spent outputs are then in the coins cache, warm);
 *                          one op = chain_connect_block of block 102 in
 *                          just-check mode (Core connects into a throwaway
 *                          view: the same work). Script checks on the check
 *                          queue with par 3: 2 workers and this thread, as
 *                          Core's test setup. The note compares a block with
 *                          the limit its 5,000 signatures set: 5,000 x this
 *                          run's single-thread libsecp256k1 verify time /
 *                          threads (and / cores, when there are fewer).
 *   ConnectChain2000       a 2,000-block chaingen chain from block files into
 *                          a fresh datadir (chain_open to chain_close, the
 *                          default cache, par 0). One op = one block; the note
 *                          has blocks/s, UTXO flushes and peak RSS.
 *
 * The blocks come from `peertool chaingen` (make bench writes them to
 * $BENCH_DATA, default build/bench, before it runs this): connect_ecdsa.dat,
 * connect_schnorr.dat, connect_mixed.dat (--blocks 102 --bench-block KIND)
 * and chain2000.dat (--blocks 2000). A missing file fails the benchmark
 * with the command that makes it.
 */
#include "bench/bench.h"
#include "bench/bench_sigs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "script/script.h"

/** Rounds of each ConnectBlock benchmark: each is 5,000 signature checks. */
#define CONNECT_ROUNDS 10
/** Script-check threads in all for ConnectBlock*: Core's setup has 2 workers. */
#define CONNECT_PAR 3
/** Signatures in Core's benchmark block: 1,000 transactions of 5 inputs. */
#define CONNECT_SIGS 5000
/** Blocks each timed with a limit measured right after it (see the note). */
#define EFFICIENCY_PAIRS 7
#define CHAIN_BLOCKS     2000

static const char *data_path(const char *file)
{
	static char path[4096];
	const char *dir = getenv("BENCH_DATA");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "build/bench", file);
	return path;
}

/* The records of a block file, pointing into buf. */
struct records {
	uint8_t *buf;
	size_t n;
	const uint8_t *blk[CHAIN_BLOCKS + 1];
	uint32_t len[CHAIN_BLOCKS + 1];
};

static int load_records(struct bench_ctx *ctx, const char *file, struct records *r)
{
	const char *path = data_path(file);
	size_t len, off = 0;
	if (access(path, R_OK)) {
		bench_fail(ctx, "%s missing: make bench writes it with peertool chaingen", path);
		return -1;
	}
	r->buf = bench_read_file(path, &len);
	r->n = 0;
	while (off + 8 <= len && r->n < CHAIN_BLOCKS + 1) {
		uint32_t n = proto_le32(r->buf + off + 4);
		if (proto_le32(r->buf + off) != proto_params(PROTO_NET_REGTEST)->magic ||
		    n > len - off - 8)
			break;
		r->blk[r->n] = r->buf + off + 8;
		r->len[r->n++] = n;
		off += 8 + n;
	}
	if (off != len) {
		bench_fail(ctx, "%s: not regtest block-file records", path);
		return -1;
	}
	return 0;
}

static int make_dir(char dir[64])
{
	snprintf(dir, 64, "/tmp/peerd-bench-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static void remove_dir(const char *dir)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* The end of a run: the chain closed, its directory removed, the records freed. */
static void close_run(struct bench_ctx *ctx, struct chain *c, const char *dir, struct records *r)
{
	if (c && chain_close(c))
		bench_fail(ctx, "chain_close failed");
	if (dir[0])
		remove_dir(dir);
	if (r)
		xfree(r->buf);
	xfree(r);
}

/* Submit records [0, n); 0 or -1 after bench_fail. */
static int submit_records(struct bench_ctx *ctx, struct chain *c, const struct records *r, size_t n)
{
	struct proto_block b;
	int rc = 0;
	proto_block_init(&b);
	for (size_t i = 0; i < n && !rc; i++) {
		enum chain_submit res;
		struct chain_state st;
		chain_state_clear(&st);
		if (proto_block_decode(r->blk[i], r->len[i], &b, NULL) ||
		    chain_submit_block(c, r->blk[i], r->len[i], &b, &res, &st) ||
		    (res != CHAIN_SUBMIT_ACCEPTED && res != CHAIN_SUBMIT_DUPLICATE)) {
			bench_fail(ctx, "block %zu not accepted: %s", i + 1, st.reason);
			rc = -1;
		}
	}
	proto_block_release(&b);
	return rc;
}

/* ---- ConnectBlock* ------------------------------------------------------------ */

/*
 * On a shared machine the single-thread verify time drifts by half from
 * minute to minute, so a limit taken once says little about a block timed
 * earlier. Pair each block with a limit measured right after it: eff[i]
 * is that limit over the block's time.
 */
static void paired_efficiency(struct bench_ctx *ctx, struct chain *c, struct chain_checker *ck,
                              struct proto_block *b, const struct chain_node *node,
                              unsigned n_schnorr, unsigned usable, double eff[EFFICIENCY_PAIRS],
                              double eff_par[EFFICIENCY_PAIRS], double eff_cpu[EFFICIENCY_PAIRS])
{
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct chain_connect_info info;
	struct chain_state st;
	chain_state_clear(&st);
	for (size_t i = 0; i < EFFICIENCY_PAIRS; i++) {
		uint64_t t0 = bench_now_ns(), c0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (chain_connect_block(chain_get_coins(c), ck, b, node, p, true, NULL, &info, &st))
			bench_fail(ctx, "ConnectBlock failed: %s", st.reason);
		double t = (double)(bench_now_ns() - t0);
		double cpu = (double)(bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);
		/* CPU time against CPU time: the share of the block's work that is
		 * the signatures' own, whatever else the machine runs. */
		eff_cpu[i] = ((double)(CONNECT_SIGS - n_schnorr) *
		                  bench_sigs_verify_ns_on(ctx, false, CLOCK_THREAD_CPUTIME_ID) +
		              (double)n_schnorr *
		                  bench_sigs_verify_ns_on(ctx, true, CLOCK_THREAD_CPUTIME_ID)) /
		             cpu;
		double limit_ns =
		    (double)(CONNECT_SIGS - n_schnorr) * bench_sigs_verify_ns(ctx, false) +
		    (double)n_schnorr * bench_sigs_verify_ns(ctx, true);
		eff[i] = limit_ns / usable / t;
		double par_ns =
		    (double)(CONNECT_SIGS - n_schnorr) *
		        bench_sigs_verify_ns_parallel(ctx, false, usable) +
		    (double)n_schnorr * bench_sigs_verify_ns_parallel(ctx, true, usable);
		eff_par[i] = par_ns / t;
	}
}

static void connect_block_bench(struct bench_ctx *ctx, size_t n, const char *file,
                                unsigned n_schnorr)
{
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct records *r = xcalloc(1, sizeof(*r));
	struct chain *c = NULL;
	struct chain_checker *ck = NULL;
	struct proto_block b;
	struct chain_state st;
	char dir[64] = "";
	proto_block_init(&b);
	chain_state_clear(&st);
	if (!r || load_records(ctx, file, r))
		goto out;
	if (bench_sigs_setup()) {
		bench_fail(ctx, "secp256k1 setup failed");
		goto out;
	}
	struct chain_config cfg = {.params = p, .par = 1};
	if (make_dir(dir) || (cfg.dir = dir, chain_open(&c, &cfg)) ||
	    chain_checker_new(&ck, CONNECT_PAR)) {
		bench_fail(ctx, "cannot set up a chain in %s", dir);
		goto out;
	}
	if (submit_records(ctx, c, r, r->n - 1))
		goto out;
	/* Block 102, checked once as Core's ConnectBlock does (its CheckBlock
	 * result is cached on the block): the timed part is ConnectBlock. */
	size_t last = r->n - 1;
	struct chain_node node = {.prev = chain_tip(c), .height = chain_height(c) + 1};
	if (proto_block_decode(r->blk[last], r->len[last], &b, NULL) ||
	    chain_check_block(&b, p, true, true, &st)) {
		bench_fail(ctx, "the benchmark block does not pass CheckBlock: %s", st.reason);
		goto out;
	}
	proto_block_header_hash(&b.hdr, &node.hash);
	node.version = b.hdr.version;
	node.time = b.hdr.time;
	node.bits = b.hdr.bits;
	struct chain_connect_info info;
	/* One untimed round: starts the workers and sizes the buffers. */
	if (chain_connect_block(chain_get_coins(c), ck, &b, &node, p, true, NULL, &info, &st)) {
		bench_fail(ctx, "ConnectBlock failed: %s (%s)", st.reason, st.debug);
		goto out;
	}
	if (info.jobs != CONNECT_SIGS)
		bench_fail(ctx, "%u script checks, not %u", info.jobs, CONNECT_SIGS);
	unsigned threads = chain_checker_workers(ck) + 1;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t best = UINT64_MAX;
	bench_reset(ctx);
	uint64_t t_start = bench_now_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();
		if (chain_connect_block(chain_get_coins(c), ck, &b, &node, p, true, NULL, &info,
		                        &st))
			bench_fail(ctx, "ConnectBlock failed: %s", st.reason);
		uint64_t t = bench_now_ns() - t0;
		best = t < best ? t : best;
	}
	bench_stop(ctx);
	double mean = (double)(bench_now_ns() - t_start) / (double)n;
	/* The limit after the runs too: a quiet moment flatters the limit, not us. */
	double e = bench_sigs_verify_ns(ctx, false), s = bench_sigs_verify_ns(ctx, true);
	double sigs = (double)(CONNECT_SIGS - n_schnorr) * e + (double)n_schnorr * s;
	unsigned usable = cores > 0 && (unsigned)cores < threads ? (unsigned)cores : threads;
	/* Paired figures (see paired_efficiency): their median. */
	double eff[EFFICIENCY_PAIRS], eff_nokc[EFFICIENCY_PAIRS];
	double par[EFFICIENCY_PAIRS], par_nokc[EFFICIENCY_PAIRS];
	double cpu[EFFICIENCY_PAIRS], cpu_nokc[EFFICIENCY_PAIRS];
	paired_efficiency(ctx, c, ck, &b, &node, n_schnorr, usable, eff, par, cpu);
	/* The same pairs with every key parsed at each signature, as without
	 * script/'s key cache: the block has five keys, each signing 1,000
	 * times (Core's design), so the cache spares 4,995 parses of 5,000. */
	script_key_cache_set_enabled(false);
	paired_efficiency(ctx, c, ck, &b, &node, n_schnorr, usable, eff_nokc, par_nokc, cpu_nokc);
	script_key_cache_set_enabled(true);
	double load[1] = {-1};
	(void)getloadavg(load, 1);
	qsort(eff, EFFICIENCY_PAIRS, sizeof(eff[0]), bench_cmp_double);
	qsort(eff_nokc, EFFICIENCY_PAIRS, sizeof(eff_nokc[0]), bench_cmp_double);
	qsort(par, EFFICIENCY_PAIRS, sizeof(par[0]), bench_cmp_double);
	qsort(par_nokc, EFFICIENCY_PAIRS, sizeof(par_nokc[0]), bench_cmp_double);
	qsort(cpu, EFFICIENCY_PAIRS, sizeof(cpu[0]), bench_cmp_double);
	qsort(cpu_nokc, EFFICIENCY_PAIRS, sizeof(cpu_nokc[0]), bench_cmp_double);
	bench_note(
	    ctx,
	    "single-thread verify %.1f us ECDSA, %.1f us Schnorr; %u sigs; limit "
	    "(%u threads) %.2f ms/block, mean %.2f ms = efficiency %.1f%% (best "
	    "%.1f%%); on %u cores limit %.2f ms = %.1f%%; paired with a limit taken "
	    "right after each block (%d pairs): median %.1f%%, best %.1f%% of the %u-core limit; "
	    "without the key cache median %.1f%%, best %.1f%%; against the limit measured on %u "
	    "threads at once (load-robust): median %.1f%%, best %.1f%%, without the key cache "
	    "median %.1f%%; CPU time of the signatures over the block's CPU time: median %.1f%%, "
	    "without the key cache %.1f%%; load average %.2f",
	    e / 1e3, s / 1e3, CONNECT_SIGS, threads, sigs / threads / 1e6, mean / 1e6,
	    100.0 * sigs / threads / mean, 100.0 * sigs / threads / (double)best, usable,
	    sigs / usable / 1e6, 100.0 * sigs / usable / mean, EFFICIENCY_PAIRS,
	    100.0 * eff[EFFICIENCY_PAIRS / 2], 100.0 * eff[EFFICIENCY_PAIRS - 1], usable,
	    100.0 * eff_nokc[EFFICIENCY_PAIRS / 2], 100.0 * eff_nokc[EFFICIENCY_PAIRS - 1], usable,
	    100.0 * par[EFFICIENCY_PAIRS / 2], 100.0 * par[EFFICIENCY_PAIRS - 1],
	    100.0 * par_nokc[EFFICIENCY_PAIRS / 2], 100.0 * cpu[EFFICIENCY_PAIRS / 2],
	    100.0 * cpu_nokc[EFFICIENCY_PAIRS / 2], load[0]);
out:
	proto_block_release(&b);
	chain_checker_free(ck);
	close_run(ctx, c, dir, r);
}

BENCH_N(ConnectBlockAllEcdsa, CONNECT_ROUNDS)
{
	connect_block_bench(ctx, n, "connect_ecdsa.dat", 0);
}

BENCH_N(ConnectBlockAllSchnorr, CONNECT_ROUNDS)
{
	connect_block_bench(ctx, n, "connect_schnorr.dat", CONNECT_SIGS);
}

BENCH_N(ConnectBlockMixedEcdsaSchnorr, CONNECT_ROUNDS)
{
	/* Core's mix: 4 P2WPKH and 1 P2TR output per transaction. */
	connect_block_bench(ctx, n, "connect_mixed.dat", CONNECT_SIGS / 5);
}

/* ---- ConnectChain2000 --------------------------------------------------------- */

/* The process's peak resident set in KiB (VmHWM), or -1. */
static long peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/* Start a new peak at the current size (Linux: clear_refs 5). */
static void reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

BENCH_N(ConnectChain2000, CHAIN_BLOCKS)
{
	struct records *r = xcalloc(1, sizeof(*r));
	struct chain *c = NULL;
	char dir[64] = "";
	if (!r || load_records(ctx, "chain2000.dat", r))
		goto out;
	if (r->n != CHAIN_BLOCKS || n != CHAIN_BLOCKS) {
		bench_fail(ctx, "chain2000.dat has %zu blocks, not %d", r->n, CHAIN_BLOCKS);
		goto out;
	}
	struct chain_config cfg = {.params = proto_params(PROTO_NET_REGTEST)};
	if (make_dir(dir)) {
		bench_fail(ctx, "cannot make a directory");
		goto out;
	}
	cfg.dir = dir;
	reset_peak_rss();
	long rss0 = peak_rss_kib();
	bench_reset(ctx);
	uint64_t t0 = bench_now_ns();
	if (chain_open(&c, &cfg)) {
		bench_fail(ctx, "chain_open failed");
		goto out;
	}
	int bad = submit_records(ctx, c, r, r->n);
	struct chain_stats cs;
	chain_get_stats(c, &cs);
	int err = chain_close(c);
	c = NULL;
	bench_stop(ctx);
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	long rss1 = peak_rss_kib();
	if (bad || err || cs.blocks_connected != CHAIN_BLOCKS) {
		bench_fail(ctx, "connected %llu blocks", (unsigned long long)cs.blocks_connected);
		goto out;
	}
	bench_note(ctx,
	           "%d blocks in %.2f s = %.0f blocks/s (open to close, default dbcache, "
	           "par 0); %llu UTXO flushes before close (chain_open's included), 1 at "
	           "close; peak RSS %.1f MiB (%.1f MiB before the chain opened)",
	           CHAIN_BLOCKS, secs, CHAIN_BLOCKS / secs, (unsigned long long)cs.flushes,
	           (double)rss1 / 1024.0, (double)rss0 / 1024.0);
out:
	close_run(ctx, c, dir, r);
}
