/*
 * bench/bench_index.c: building the block filter index (index/set.c), the
 * row of Bitcoin Core's src/bench/index_blockfilter.cpp:
 *
 *   BlockFilterIndexSync  one op = a basic filter index made from nothing
 *                         (wiped) for a 600-block regtest chain of coinbase
 *                         transactions only (as Core's: TestChain100Setup's
 *                         100 and 500 more, each paying a P2WPKH script),
 *                         synced to the tip and closed. The chain is
 *                         $BENCH_DATA/coinbase600.dat (peertool chaingen
 *                         --txs-per-block 0 --mix p2wpkh; make bench
 *                         writes it), connected once untimed per run.
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "chain/chain.h"
#include "index/index.h"

#define SYNC_BLOCKS 600
/* Blocks a catch-up step takes in, as peerd's validation thread does between jobs
 * (daemon/index_hooks.c's INDEX_STEP_BLOCKS). */
#define SYNC_STEP 200

/* The file's records into blk/len (pointing into *buf); false after bench_fail. */
static bool load_chain(struct bench_ctx *ctx, uint8_t **buf, const uint8_t **blk, uint32_t *len)
{
	char path[4096];
	const char *dir = getenv("BENCH_DATA");
	snprintf(path, sizeof(path), "%s/coinbase600.dat", dir && *dir ? dir : "build/bench");
	if (access(path, R_OK)) {
		bench_fail(ctx, "%s missing: make bench writes it with peertool chaingen", path);
		return false;
	}
	size_t size, off = 0, n = 0;
	*buf = bench_read_file(path, &size);
	uint32_t magic = proto_params(PROTO_NET_REGTEST)->magic;
	while (off + 8 <= size && n < SYNC_BLOCKS) {
		uint32_t l = proto_le32(*buf + off + 4);
		if (proto_le32(*buf + off) != magic || l > size - off - 8)
			break;
		blk[n] = *buf + off + 8;
		len[n++] = l;
		off += 8 + l;
	}
	if (off != size || n != SYNC_BLOCKS) {
		bench_fail(ctx, "%s: not %d regtest block-file records", path, SYNC_BLOCKS);
		return false;
	}
	return true;
}

static bool connect_chain(struct bench_ctx *ctx, struct chain *c, const uint8_t **blk,
                          const uint32_t *len)
{
	struct proto_block b;
	bool ok = true;
	proto_block_init(&b);
	for (size_t i = 0; i < SYNC_BLOCKS && ok; i++) {
		enum chain_submit res;
		struct chain_state st;
		chain_state_clear(&st);
		if (proto_block_decode(blk[i], len[i], &b, NULL) ||
		    chain_submit_block(c, blk[i], len[i], &b, &res, &st) ||
		    res != CHAIN_SUBMIT_ACCEPTED) {
			bench_fail(ctx, "block %zu not accepted: %s", i + 1, st.reason);
			ok = false;
		}
	}
	proto_block_release(&b);
	return ok;
}

/* One op: a wiped filter index synced to the tip and closed. */
static bool sync_once(struct bench_ctx *ctx, struct chain *c, const char *dir)
{
	struct index_config cfg = {.netdir = dir, .blockfilter = true, .wipe = true};
	struct index_set *s = NULL;
	bool more = true, synced = false;
	int32_t height = -1;
	int err = index_set_open(&s, &cfg);
	while (!err && more)
		err = index_set_step(s, c, SYNC_STEP, &more);
	if (!err)
		index_set_status(s, c, INDEX_FILTER_BASIC, &height, &synced);
	index_set_close(s);
	if (err || !synced || height != SYNC_BLOCKS) {
		bench_fail(ctx, "BlockFilterIndexSync: %s, height %d", index_strerror(err), height);
		return false;
	}
	return true;
}

BENCH(BlockFilterIndexSync)
{
	static const uint8_t *blk[SYNC_BLOCKS];
	static uint32_t len[SYNC_BLOCKS];
	uint8_t *buf = NULL;
	struct chain *c = NULL;
	char dir[] = "/tmp/peerd-bench-XXXXXX";
	if (!load_chain(ctx, &buf, blk, len) || !mkdtemp(dir))
		goto out;
	struct chain_config cfg = {.params = proto_params(PROTO_NET_REGTEST), .dir = dir, .par = 1};
	if (chain_open(&c, &cfg)) {
		bench_fail(ctx, "chain_open failed");
		goto out;
	}
	if (!connect_chain(ctx, c, blk, len))
		goto out;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++)
		if (!sync_once(ctx, c, dir))
			break;
	bench_stop(ctx);
out:
	if (c)
		(void)chain_close(c);
	if (dir[sizeof(dir) - 2] != 'X') {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench: could not remove %s\n", dir);
	}
	xfree(buf);
}
