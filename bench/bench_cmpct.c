/*
 * bench/bench_cmpct.c: BIP152 compact blocks (cmpct/).
 *
 * A block of 2,001 transactions (a coinbase and 2,000 spends of the shape
 * of a P2PKH payment: one input with a 107-byte scriptSig, two outputs,
 * 226 bytes each), and a mempool-like set of candidates: those 2,000 plus
 * 3,000 that are not in the block, shuffled, wtxids cached (a mempool
 * keeps them). Rows:
 *   CmpctReconstruct2000  cmpct_partial_init over the candidates and
 *                         cmpct_partial_fill with nothing missing: the
 *                         block's bytes and the decoded block, merkle
 *                         root checked (what a node does before handing
 *                         the block to validation)
 *   CmpctDecode2000       decoding the cmpctblock message itself
 * The note gives the bytes on the wire, compact against full.
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmpct/cmpct.h"

#define N_BLOCK 2000u
#define N_OTHER 3000u

static struct proto_block block;
static struct proto_tx others[N_OTHER];
static struct proto_tx *cands[N_BLOCK + N_OTHER];
static struct proto_writer cmpct_wire, block_wire;
static struct proto_cmpctblock cmpct;
static bool ready;

static void write_spend(struct proto_writer *w, uint32_t seed, bool coinbase)
{
	uint8_t prev[32], sig[107], spk[25];
	memset(prev, 0, sizeof(prev));
	if (!coinbase)
		memcpy(prev, &seed, sizeof(seed));
	memset(sig, (int)(seed & 0xff), sizeof(sig));
	memset(spk, 0x76, sizeof(spk));
	memcpy(spk + 3, &seed, sizeof(seed));
	proto_write_u32le(w, 2);
	proto_write_compact(w, 1);
	proto_write_bytes(w, prev, 32);
	proto_write_u32le(w, coinbase ? 0xffffffffu : 1);
	proto_write_varbytes(w, sig, coinbase ? 4 : sizeof(sig));
	proto_write_u32le(w, 0xfffffffdu);
	proto_write_compact(w, 2);
	for (int o = 0; o < 2; o++) {
		proto_write_u64le(w, 10000u + seed + (uint32_t)o);
		proto_write_varbytes(w, spk, sizeof(spk));
	}
	proto_write_u32le(w, 0);
}

static void setup(void)
{
	if (ready)
		return;
	struct proto_block_header h = {
	    .version = 0x20000000, .time = 1700000000, .bits = 0x207fffff};
	for (int pass = 0; pass < 2; pass++) {
		proto_writer_init(&block_wire);
		proto_block_header_encode(&h, &block_wire);
		proto_write_compact(&block_wire, N_BLOCK + 1);
		for (uint32_t i = 0; i <= N_BLOCK; i++)
			write_spend(&block_wire, i + 1, i == 0);
		proto_block_init(&block);
		if (proto_block_decode(block_wire.buf, block_wire.len, &block, NULL))
			abort();
		if (pass == 0) {
			bool mutated;
			if (proto_block_merkle_root(&block, &h.merkle_root, &mutated))
				abort();
			proto_block_release(&block);
			proto_writer_release(&block_wire);
		}
	}
	for (uint32_t i = 0; i < N_OTHER; i++) {
		struct proto_writer w;
		proto_writer_init(&w);
		write_spend(&w, 1000000u + i, false);
		proto_tx_init(&others[i]);
		if (proto_tx_decode_buf(w.buf, w.len, &others[i], NULL))
			abort();
		proto_writer_release(&w);
		proto_tx_compute_ids(&others[i]);
	}
	for (uint32_t i = 0; i < N_BLOCK; i++) {
		proto_tx_compute_ids(&block.txs[i + 1]);
		cands[i] = &block.txs[i + 1];
	}
	for (uint32_t i = 0; i < N_OTHER; i++)
		cands[N_BLOCK + i] = &others[i];
	/* A fixed shuffle (xorshift), so every run walks the same order. */
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	for (uint32_t i = N_BLOCK + N_OTHER - 1; i > 0; i--) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint32_t j = (uint32_t)(s % (i + 1));
		struct proto_tx *t = cands[i];
		cands[i] = cands[j];
		cands[j] = t;
	}
	if (cmpct_build(&block, 0x5eed, &cmpct))
		abort();
	proto_writer_init(&cmpct_wire);
	proto_cmpctblock_encode(&cmpct, &cmpct_wire);
	if (cmpct_wire.err)
		abort();
	ready = true;
}

struct walk {
	uint32_t i;
};

static bool walk_next(void *ctx, struct cmpct_candidate *c)
{
	struct walk *w = ctx;
	if (w->i >= N_BLOCK + N_OTHER)
		return false;
	struct proto_tx *tx = cands[w->i++];
	c->tx = tx;
	c->wtxid = &tx->wtxid; /* cached by setup, as a mempool entry's */
	c->extra = false;
	return true;
}

BENCH(CmpctReconstruct2000)
{
	setup();
	struct cmpct_partial pb;
	struct proto_writer out;
	struct proto_block got;
	cmpct_partial_init_empty(&pb);
	proto_writer_init(&out);
	proto_block_init(&got);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct walk w = {0};
		out.len = 0;
		if (cmpct_partial_init(&pb, &cmpct, walk_next, &w) || pb.n_missing ||
		    cmpct_partial_fill(&pb, NULL, 0, true, &out, &got)) {
			bench_fail(ctx, "reconstruction failed");
			break;
		}
	}
	bench_stop(ctx);
	if (out.len != block_wire.len || memcmp(out.buf, block_wire.buf, out.len))
		bench_fail(ctx, "rebuilt block differs");
	bench_note(ctx,
	           "%u txs, %zu-byte block as a %zu-byte cmpctblock (%.1f%% saved), "
	           "%u candidates",
	           N_BLOCK + 1, block_wire.len, cmpct_wire.len,
	           100.0 * (1.0 - (double)cmpct_wire.len / (double)block_wire.len),
	           N_BLOCK + N_OTHER);
	proto_block_release(&got);
	proto_writer_release(&out);
	cmpct_partial_release(&pb);
}

BENCH(CmpctDecode2000)
{
	setup();
	struct proto_msg m;
	proto_msg_init(&m);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (proto_msg_decode(PROTO_CMD_CMPCTBLOCK, cmpct_wire.buf, cmpct_wire.len, &m,
		                     NULL)) {
			bench_fail(ctx, "decode failed");
			break;
		}
	}
	bench_stop(ctx);
	proto_msg_release(&m);
}
