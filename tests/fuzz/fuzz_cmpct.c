/*
 * tests/fuzz/fuzz_cmpct.c: BIP152's decoders and the reconstruction
 * (cmpct/) on arbitrary bytes.
 *
 * Input: one flag byte, then a cmpctblock, then a blocktxn, back to back
 * (each decoder reads what it needs from one reader). A cmpctblock that
 * decodes must re-encode to the bytes it came from. The blocktxn's
 * transactions are the candidates (all of them when flag bit 0 is set,
 * none otherwise; from the extra ring when bit 1 is set), and, when bit 2
 * is set, a candidate claims the wtxid of the cmpctblock's first short id
 * owner is its own (a forced collision). Then the partial is filled with
 * the blocktxn's transactions (all, or all but the last when bit 3 is
 * set). Invariants: init and fill return a cmpct_err; a request lists
 * exactly the missing slots, ascending; a successful fill gives a block
 * that decodes, has the cmpctblock's header, as many transactions as it
 * stands for, and is not mutated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmpct/cmpct.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_cmpct: invariant broken: %s\n", what);
		abort();
	}
}

struct walk {
	struct proto_blocktxn *bt;
	uint32_t i;
	bool extra;
	bool lie;
	struct proto_hash fake;
};

static bool walk_next(void *ctx, struct cmpct_candidate *c)
{
	struct walk *w = ctx;
	if (w->i >= w->bt->n)
		return false;
	struct proto_tx *tx = &w->bt->txs[w->i++];
	c->tx = tx;
	c->wtxid = w->lie && w->i == 1 ? &w->fake : proto_tx_wtxid(tx);
	c->extra = w->extra;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	/* A private copy, so the sanitizers see reads past the input. */
	uint8_t *buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);

	struct proto_reader r;
	struct proto_cmpctblock cb = {0};
	struct proto_blocktxn bt = {0};
	struct proto_getblocktxn g = {0};
	struct cmpct_partial pb;
	struct proto_writer w, out;
	struct proto_block block;
	cmpct_partial_init_empty(&pb);
	proto_writer_init(&w);
	proto_writer_init(&out);
	proto_block_init(&block);

	proto_reader_init(&r, buf, size - 1);
	const uint8_t *start = r.p;
	if (proto_cmpctblock_decode(&r, &cb))
		goto out;
	proto_cmpctblock_encode(&cb, &w);
	check(w.err == 0, "a decoded cmpctblock does not encode");
	check(w.len == (size_t)(r.p - start) && memcmp(w.buf, start, w.len) == 0,
	      "cmpctblock does not re-encode to its bytes");
	if (proto_blocktxn_decode(&r, &bt))
		bt.n = 0;

	struct walk wk = {.bt = &bt, .extra = flags & 2, .lie = flags & 4};
	if (!(flags & 1))
		wk.i = bt.n;
	if (cb.n_short) {
		/* Any 32 bytes will do as the claimed wtxid: collisions of the
		 * short id itself come from the cmpctblock's own list. */
		memset(wk.fake.b, (int)(cb.shortids[0] & 0xff), 32);
	}
	int err = cmpct_partial_init(&pb, &cb, walk_next, &wk);
	check(err == 0 || err == CMPCT_EINVALID || err == CMPCT_EFAILED,
	      "init returned something else");
	if (err)
		goto out;
	check(pb.n_tx == cb.n_short + cb.n_prefilled, "slot count");
	check(pb.prefilled_count + pb.mempool_count + pb.n_missing == pb.n_tx, "slots add up");
	check(cmpct_partial_request(&pb, &g) == 0, "request");
	check(g.n == pb.n_missing, "request lists every missing slot");
	for (uint32_t i = 0; i < g.n; i++) {
		check(!cmpct_partial_have(&pb, g.indexes[i]), "request lists a held slot");
		check(i == 0 || g.indexes[i] > g.indexes[i - 1], "request not ascending");
	}

	uint32_t n = bt.n;
	if ((flags & 8) && n)
		n--;
	err = cmpct_partial_fill(&pb, bt.txs, n, flags & 16, &out, &block);
	check(err == 0 || err == CMPCT_EINVALID || err == CMPCT_EFAILED,
	      "fill returned something else");
	check(!pb.started, "a partial can be filled twice");
	if (err == 0) {
		check(block.n_tx == pb.n_tx, "block has the wrong transaction count");
		check(memcmp(&block.hdr, &cb.hdr, sizeof(cb.hdr)) == 0, "block has another header");
		check(!cmpct_block_mutated(&block, flags & 16), "a filled block is mutated");
	}
out:
	proto_block_release(&block);
	proto_writer_release(&out);
	proto_writer_release(&w);
	cmpct_partial_release(&pb);
	proto_getblocktxn_release(&g);
	proto_blocktxn_release(&bt);
	proto_cmpctblock_release(&cb);
	free(buf);
	return 0;
}
