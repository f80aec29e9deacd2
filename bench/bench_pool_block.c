/*
 * bench/bench_pool_block.c: the job vector filled with a real block's
 * script checks (issue 26).
 *
 *   JobVecFillBlockP2TR    the 5,000 script-check jobs of ConnectBlockAll-
 *                          Schnorr's block (block 102 of connect_schnorr.dat:
 *                          1,000 transactions of 5 P2TR inputs, each spent
 *                          scriptPubKey 34 bytes, past the 28 inline) pushed
 *                          one by one, as chain/connect.c fills them (the
 *                          job has the same fields: transaction,
 *                          precomputed data, amount, input, index, script),
 *                          then released (pool_vec_clear), into a vec kept
 *                          from block to block as the checker keeps its
 *                          own. One op = one block; allocs/op are the
 *                          arena's and the array's (before issue 26: one
 *                          per job, 5,000). The note has a first fill into
 *                          a new vec.
 *
 * The spent scripts are looked up once, untimed, in blocks 101 and 102.
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"
#include "proto/proto.h"

#define BLOCK_JOBS 5000

/* chain/connect.c's struct check_job, field for field. */
struct block_job {
	const struct proto_tx *tx;
	const void *pre;
	int64_t amount;
	uint32_t in;
	uint32_t tx_index;
	struct pool_sbuf spk;
};

/* What one job is made from: the spent output, found at setup. */
struct spent {
	const struct proto_tx *tx;
	uint32_t tx_index, in;
	int64_t amount;
	const uint8_t *script;
	uint32_t script_len;
};

static struct {
	int ready;
	uint8_t *file;
	struct proto_block b[2]; /* blocks 101 and 102 */
	struct spent s[BLOCK_JOBS];
	size_t n;
} bd;

/* The output `op` spends, in block 101 or 102; NULL if neither has it. */
static const struct proto_txout *find_output(const struct proto_outpoint *op,
                                             const struct proto_tx **owner)
{
	for (int k = 1; k >= 0; k--)
		for (uint32_t t = 0; t < bd.b[k].n_tx; t++) {
			struct proto_tx *tx = &bd.b[k].txs[t];
			if (memcmp(proto_tx_txid(tx), &op->txid, sizeof(op->txid)) == 0 &&
			    op->n < tx->n_out) {
				*owner = tx;
				return &tx->vout[op->n];
			}
		}
	return NULL;
}

static int block_setup(struct bench_ctx *ctx)
{
	if (bd.ready)
		return 0;
	const char *dir = getenv("BENCH_DATA");
	char path[4096];
	size_t len, off = 0, n_rec = 0;
	const uint8_t *rec[2] = {NULL, NULL};
	uint32_t rec_len[2] = {0, 0};
	snprintf(path, sizeof(path), "%s/connect_schnorr.dat", dir && *dir ? dir : "build/bench");
	if (access(path, R_OK)) {
		bench_fail(ctx, "%s missing: make bench writes it with peertool chaingen", path);
		return -1;
	}
	bd.file = bench_read_file(path, &len);
	/* Block-file records (magic, length, block): keep the last two. */
	while (off + 8 <= len) {
		uint32_t n = proto_le32(bd.file + off + 4);
		if (n > len - off - 8)
			break;
		rec[0] = rec[1];
		rec_len[0] = rec_len[1];
		rec[1] = bd.file + off + 8;
		rec_len[1] = n;
		n_rec++;
		off += 8 + n;
	}
	if (off != len || n_rec < 2) {
		bench_fail(ctx, "%s: not block-file records", path);
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		proto_block_init(&bd.b[k]);
		if (proto_block_decode(rec[k], rec_len[k], &bd.b[k], NULL)) {
			bench_fail(ctx, "%s: a block does not decode", path);
			return -1;
		}
	}
	struct proto_block *b = &bd.b[1];
	for (uint32_t t = 1; t < b->n_tx; t++) {
		struct proto_tx *tx = &b->txs[t];
		for (uint32_t i = 0; i < tx->n_in; i++) {
			const struct proto_tx *owner;
			const struct proto_txout *o = find_output(&tx->vin[i].prevout, &owner);
			if (!o || bd.n == BLOCK_JOBS) {
				bench_fail(ctx, "%s: block 102 is not the 5,000-input bench block",
				           path);
				return -1;
			}
			bd.s[bd.n++] = (struct spent){
			    tx, t, i, o->value, proto_txout_script(owner, o), o->script_len};
		}
	}
	if (bd.n != BLOCK_JOBS || bd.s[0].script_len != 34) {
		bench_fail(ctx, "%s: %zu jobs (script %u bytes), not 5,000 P2TR spends", path, bd.n,
		           bd.n ? bd.s[0].script_len : 0);
		return -1;
	}
	bd.ready = 1;
	return 0;
}

/* Push the block's 5,000 jobs into `v`; 0 or -1 after bench_fail. */
static int fill_block(struct bench_ctx *ctx, struct pool_vec *v)
{
	for (size_t i = 0; i < BLOCK_JOBS; i++) {
		const struct spent *s = &bd.s[i];
		struct block_job *j = pool_vec_emplace(v);
		if (!j) {
			bench_fail(ctx, "out of memory");
			return -1;
		}
		j->tx = s->tx;
		j->pre = NULL;
		j->amount = s->amount;
		j->in = s->in;
		j->tx_index = s->tx_index;
		if (pool_sbuf_init_in(&j->spk, v, s->script, s->script_len)) {
			v->len--;
			bench_fail(ctx, "out of memory");
			return -1;
		}
	}
	return 0;
}

BENCH(JobVecFillBlockP2TR)
{
	if (block_setup(ctx))
		return;
	/* A first fill into a new vec, for the note: the array's growth, the
	 * chunks, and the kernel's first touch of every page. */
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct block_job));
	uint64_t a0 = base_alloc_count(), t0 = bench_now_ns();
	if (fill_block(ctx, &v))
		return;
	uint64_t first_ns = bench_now_ns() - t0, first_allocs = base_alloc_count() - a0;
	size_t chunks = pool_vec_arena_chunks(&v);
	pool_vec_clear(&v, NULL, NULL);
	bench_reset(ctx);
	/* Then block after block into the same vec, as chain/connect.c keeps
	 * its job vector between blocks: the jobs own nothing (their scripts
	 * are in the arena), clear drops them and keeps the chunks. */
	for (size_t k = 0; k < n; k++) {
		if (fill_block(ctx, &v))
			break;
		pool_vec_clear(&v, NULL, NULL);
	}
	bench_stop(ctx);
	pool_vec_release(&v, NULL, NULL);
	bench_note(
	    ctx,
	    "%d jobs, %u-byte scripts, %zu arena chunks of %u KiB; the first fill into a new "
	    "vec: %.1f us, %llu allocations",
	    BLOCK_JOBS, bd.s[0].script_len, chunks, POOL_CHUNK_BYTES >> 10, (double)first_ns / 1e3,
	    (unsigned long long)first_allocs);
}
