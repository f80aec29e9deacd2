/*
 * tests/unit/testutil_undo.h: building and comparing block undo data
 * (struct chain_block_undo) for the undo tests: test_chain_store.c (rev
 * files) and test_chain_undo.c (Core's undo serialization).
 */
#ifndef PEERD_TESTUTIL_UNDO_H
#define PEERD_TESTUTIL_UNDO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

static const uint8_t P2PKH[25] = {0x76, 0xa9, 0x14, 1,  2,  3,  4,  5,  6,  7,  8,    9,   10,
                                  11,   12,   13,   14, 15, 16, 17, 18, 19, 20, 0x88, 0xac};
static const uint8_t P2SH[23] = {0xa9, 0x14, 9, 8, 7, 6, 5, 4, 3, 2,  1,   0,
                                 1,    2,    3, 4, 5, 6, 7, 8, 9, 10, 0x87};

/* An owned copy of a script for a coin. */
static inline uint8_t *dup_bytes(const void *p, size_t n)
{
	uint8_t *q = xmalloc(n ? n : 1);
	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

/* An undo of one tx per coin given (n_coins 1 each) unless grouped by the caller. */
static inline void undo_build(struct chain_block_undo *u, uint32_t n_tx, const uint32_t *per_tx,
                              uint32_t total)
{
	chain_block_undo_init(u);
	u->n_tx = n_tx;
	u->total = total;
	u->first = xcalloc(n_tx, sizeof(uint32_t));
	u->n_coins = xcalloc(n_tx, sizeof(uint32_t));
	u->coins = xcalloc(total, sizeof(*u->coins));
	assert_true(u->first && u->n_coins && u->coins);
	uint32_t at = 0;
	for (uint32_t i = 0; i < n_tx; i++) {
		u->first[i] = at;
		u->n_coins[i] = per_tx[i];
		at += per_tx[i];
	}
	assert_int_equal(at, total);
}

static inline void set_coin(struct chain_undo_coin *c, int64_t value, uint32_t height, bool cb,
                            const void *script, uint32_t len)
{
	c->value = value;
	c->height = height;
	c->coinbase = cb;
	c->script_len = len;
	c->script = len ? dup_bytes(script, len) : NULL;
}

static inline uint8_t *encode(const struct chain_block_undo *u, size_t *len)
{
	struct proto_writer w;
	proto_writer_init(&w);
	chain_block_undo_encode(u, &w);
	tu_assert_err(w.err, 0);
	*len = w.len;
	return w.buf;
}

static inline void assert_undo_equal(const struct chain_block_undo *a,
                                     const struct chain_block_undo *b)
{
	assert_int_equal(a->n_tx, b->n_tx);
	assert_int_equal(a->total, b->total);
	for (uint32_t i = 0; i < a->n_tx; i++) {
		assert_int_equal(a->first[i], b->first[i]);
		assert_int_equal(a->n_coins[i], b->n_coins[i]);
	}
	for (uint32_t i = 0; i < a->total; i++) {
		const struct chain_undo_coin *x = &a->coins[i], *y = &b->coins[i];
		assert_int_equal(x->value, y->value);
		assert_int_equal(x->height, y->height);
		assert_int_equal(x->coinbase, y->coinbase);
		tu_assert_bytes_equal(x->script, x->script_len, y->script, y->script_len);
	}
}

#endif
