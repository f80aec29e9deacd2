/*
 * tests/fuzz/fuzz_undo.c: the undo data decoder (Core's CBlockUndo, as
 * read from a rev file that may be damaged or made by an attacker).
 *
 * Decoding gives 0 or CHAIN_ECORRUPT, and leaves the undo empty on error.
 * What decodes must be self-consistent (the per-transaction ranges tile
 * the coins), encode without error, and decode from that encoding to the
 * same coins; a second encoding must equal the first. The input itself
 * need not come back byte for byte: Core's format has freedom the encoder
 * does not use (the ignored version VarInt, amounts that are not in their
 * compressed form, template scripts stored whole, overlong scripts read
 * as OP_RETURN).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_undo: invariant broken: %s\n", what);
		abort();
	}
}

static void check_equal(const struct chain_block_undo *a, const struct chain_block_undo *b)
{
	check(a->n_tx == b->n_tx && a->total == b->total, "counts differ after round trip");
	for (uint32_t i = 0; i < a->n_tx; i++)
		check(a->first[i] == b->first[i] && a->n_coins[i] == b->n_coins[i],
		      "tx ranges differ after round trip");
	for (uint32_t i = 0; i < a->total; i++) {
		const struct chain_undo_coin *x = &a->coins[i], *y = &b->coins[i];
		check(x->value == y->value && x->height == y->height && x->coinbase == y->coinbase,
		      "coin differs after round trip");
		check(x->script_len == y->script_len &&
		          (!x->script_len || !memcmp(x->script, y->script, x->script_len)),
		      "script differs after round trip");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chain_block_undo u, v;
	int err = chain_block_undo_decode(data, size, &u);
	check(err == 0 || err == CHAIN_ECORRUPT, "unexpected error code");
	if (err) {
		check(u.n_tx == 0 && u.total == 0 && !u.coins && !u.first,
		      "undo not empty on error");
		return 0;
	}

	/* The ranges tile coins[] in order, and nothing is out of range. */
	uint32_t next = 0;
	for (uint32_t i = 0; i < u.n_tx; i++) {
		check(u.first[i] == next, "tx ranges do not tile the coins");
		next += u.n_coins[i];
	}
	check(next == u.total, "coin total disagrees with the ranges");
	check((size_t)u.total * 3 <= size, "more coins than the input can hold");
	for (uint32_t i = 0; i < u.total; i++) {
		check(u.coins[i].value >= 0 && u.coins[i].value <= PROTO_MAX_MONEY,
		      "value out of range");
		check(u.coins[i].script_len <= 10000, "script over MAX_SCRIPT_SIZE");
	}

	struct proto_writer w, w2;
	proto_writer_init(&w);
	chain_block_undo_encode(&u, &w);
	check(w.err == 0, "decoded undo does not encode");
	err = chain_block_undo_decode(w.buf, w.len, &v);
	check(err == 0, "encoding does not decode");
	check_equal(&u, &v);
	proto_writer_init(&w2);
	chain_block_undo_encode(&v, &w2);
	check(w2.err == 0 && w2.len == w.len && !memcmp(w.buf, w2.buf, w.len),
	      "second encoding differs");
	proto_writer_release(&w2);
	proto_writer_release(&w);
	chain_block_undo_release(&v);
	chain_block_undo_release(&u);
	return 0;
}
