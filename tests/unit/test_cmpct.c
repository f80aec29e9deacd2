/*
 * tests/unit/test_cmpct.c: BIP152's messages (proto/msg_cmpct.c) and the
 * rebuilding of blocks from them (cmpct/).
 *
 * The reconstruction cases follow Bitcoin Core's blockencodings_tests.cpp
 * scenario by scenario (a three-transaction block; the coinbase sent as a
 * short id and another transaction prefilled; everything prefilled; an
 * empty block; transactions from the extra ring; getblocktxn's index
 * edge cases), written here against cmpct's API. Then a cmpctblock the
 * real bitcoind made (tests/data/cmpct/, tests/integration/cmpct_capture.py)
 * must decode to the short ids peerd computes for that block, re-encode to
 * the same bytes, be what cmpct_build makes from the block with Core's
 * nonce, and rebuild the block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmpct/cmpct.h"
#include "tests/unit/testutil.h"

/* ---------------------------------------------------------------------- */
/* Test blocks                                                             */

/* One input, one output: a distinct transaction for each seed. A coinbase
 * spends the null outpoint. */
static void write_tx(struct proto_writer *w, uint8_t seed, bool coinbase)
{
	proto_write_u32le(w, 1);
	proto_write_compact(w, 1);
	uint8_t prev[32];
	memset(prev, coinbase ? 0 : seed, sizeof(prev));
	proto_write_bytes(w, prev, 32);
	proto_write_u32le(w, coinbase ? 0xffffffffu : seed);
	uint8_t sig[2] = {0x51, seed};
	proto_write_varbytes(w, sig, 2);
	proto_write_u32le(w, 0xffffffffu);
	proto_write_compact(w, 1);
	proto_write_u64le(w, 1000u * seed + 1);
	uint8_t spk[1] = {0x51};
	proto_write_varbytes(w, spk, 1);
	proto_write_u32le(w, 0);
}

static void make_tx(struct proto_tx *tx, uint8_t seed)
{
	struct proto_writer w;
	proto_writer_init(&w);
	write_tx(&w, seed, false);
	proto_tx_init(tx);
	assert_int_equal(proto_tx_decode_buf(w.buf, w.len, tx, NULL), 0);
	proto_writer_release(&w);
}

/* A block of n transactions (the first a coinbase), merkle root right;
 * its bytes in *raw (caller frees with proto_writer_release). */
static void make_block(struct proto_block *b, struct proto_writer *raw, uint32_t n)
{
	struct proto_block_header h = {.version = 4, .time = 1700000000, .bits = 0x207fffff};
	for (int pass = 0; pass < 2; pass++) {
		proto_writer_init(raw);
		proto_block_header_encode(&h, raw);
		proto_write_compact(raw, n);
		for (uint32_t i = 0; i < n; i++)
			write_tx(raw, (uint8_t)(i + 1), i == 0);
		assert_int_equal(raw->err, 0);
		proto_block_init(b);
		assert_int_equal(proto_block_decode(raw->buf, raw->len, b, NULL), 0);
		if (pass == 1)
			break;
		bool mutated;
		assert_int_equal(proto_block_merkle_root(b, &h.merkle_root, &mutated), 0);
		proto_block_release(b);
		proto_writer_release(raw);
	}
}

/* The candidate walk over arrays of transactions: the mempool's, then the
 * extra ring's. */
struct walk {
	struct proto_tx **pool;
	uint32_t n_pool;
	struct proto_tx **extra;
	uint32_t n_extra;
	uint32_t i;
	const struct proto_hash *fake_wtxid; /* when set, every candidate claims it */
};

static bool walk_next(void *ctx, struct cmpct_candidate *c)
{
	struct walk *w = ctx;
	struct proto_tx *tx;
	bool extra = false;
	if (w->i < w->n_pool) {
		tx = w->pool[w->i];
	} else if (w->i < w->n_pool + w->n_extra) {
		tx = w->extra[w->i - w->n_pool];
		extra = true;
	} else {
		return false;
	}
	w->i++;
	c->tx = tx;
	c->wtxid = w->fake_wtxid ? w->fake_wtxid : proto_tx_wtxid(tx);
	c->extra = extra;
	return true;
}

/* Encode then decode cb as the wire would carry it. */
static void wire_round_trip(const struct proto_cmpctblock *cb, struct proto_msg *m)
{
	struct proto_writer w;
	proto_writer_init(&w);
	proto_cmpctblock_encode(cb, &w);
	assert_int_equal(w.err, 0);
	assert_int_equal(proto_msg_decode(PROTO_CMD_CMPCTBLOCK, w.buf, w.len, m, NULL), 0);
	struct proto_writer w2;
	proto_writer_init(&w2);
	proto_cmpctblock_encode(&m->cmpctblock, &w2);
	assert_int_equal(w2.len, w.len);
	assert_memory_equal(w2.buf, w.buf, w.len);
	proto_writer_release(&w);
	proto_writer_release(&w2);
}

/* Fill and compare with the original block's bytes. */
static int fill_and_compare(struct cmpct_partial *pb, const struct proto_tx *missing, uint32_t n,
                            const struct proto_writer *raw)
{
	struct proto_writer out;
	struct proto_block got;
	proto_writer_init(&out);
	proto_block_init(&got);
	int err = cmpct_partial_fill(pb, missing, n, true, &out, &got);
	if (err == 0) {
		assert_int_equal(out.len, raw->len);
		assert_memory_equal(out.buf, raw->buf, raw->len);
		assert_false(cmpct_block_mutated(&got, true));
	}
	proto_block_release(&got);
	proto_writer_release(&out);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Core's scenarios                                                        */

/* SimpleRoundTripTest: coinbase prefilled, tx 2 in the mempool, tx 1 missing. */
static void test_simple_round_trip(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_msg m;
	make_block(&b, &raw, 3);
	proto_msg_init(&m);
	assert_int_equal(cmpct_build(&b, 0x0123456789abcdefULL, &cb), 0);
	assert_int_equal(cb.n_short, 2);
	assert_int_equal(cb.n_prefilled, 1);
	wire_round_trip(&cb, &m);

	struct proto_tx *pool[] = {&b.txs[2]};
	for (int round = 0; round < 3; round++) {
		struct walk w = {.pool = pool, .n_pool = 1};
		struct cmpct_partial pb;
		cmpct_partial_init_empty(&pb);
		assert_int_equal(cmpct_partial_init(&pb, &m.cmpctblock, walk_next, &w), 0);
		assert_true(cmpct_partial_have(&pb, 0));
		assert_false(cmpct_partial_have(&pb, 1));
		assert_true(cmpct_partial_have(&pb, 2));
		assert_int_equal(pb.n_missing, 1);
		assert_int_equal(pb.prefilled_count, 1);
		assert_int_equal(pb.mempool_count, 1);
		/* A second init without a fill is refused, as Core's. */
		assert_int_equal(cmpct_partial_init(&pb, &m.cmpctblock, walk_next, &w),
		                 CMPCT_EINVALID);

		struct proto_getblocktxn g = {0};
		assert_int_equal(cmpct_partial_request(&pb, &g), 0);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.indexes[0], 1);
		struct proto_hash want;
		proto_block_header_hash(&b.hdr, &want);
		assert_memory_equal(g.block.b, want.b, 32);
		proto_getblocktxn_release(&g);

		if (round == 0) /* nothing for the missing one */
			assert_int_equal(fill_and_compare(&pb, NULL, 0, &raw), CMPCT_EINVALID);
		else if (round == 1) /* the wrong one: the merkle root says so */
			assert_int_equal(fill_and_compare(&pb, &b.txs[2], 1, &raw), CMPCT_EFAILED);
		else
			assert_int_equal(fill_and_compare(&pb, &b.txs[1], 1, &raw), 0);
		/* No second fill. */
		assert_int_equal(fill_and_compare(&pb, &b.txs[1], 1, &raw), CMPCT_EINVALID);
		cmpct_partial_release(&pb);
	}
	proto_msg_release(&m);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* A cmpctblock by hand: the given transactions prefilled at absolute
 * indexes, the rest as short ids. */
static void hand_cmpct(struct proto_block *b, const uint32_t *pre, uint32_t n_pre,
                       struct proto_cmpctblock *cb)
{
	uint8_t key[16];
	cb->hdr = b->hdr;
	cb->nonce = 42;
	proto_cmpct_shortid_key(&b->hdr, cb->nonce, key);
	assert_int_equal(proto_cmpctblock_reserve_shortids(cb, b->n_tx), 0);
	assert_int_equal(proto_cmpctblock_reserve_prefilled(cb, n_pre ? n_pre : 1), 0);
	cb->n_short = cb->n_prefilled = 0;
	uint32_t k = 0;
	int64_t last = -1;
	for (uint32_t i = 0; i < b->n_tx; i++) {
		if (k < n_pre && pre[k] == i) {
			struct proto_writer w;
			proto_writer_init(&w);
			proto_tx_encode(&b->txs[i], &w);
			assert_int_equal(
			    proto_tx_decode_buf(w.buf, w.len, &cb->prefilled[k].tx, NULL), 0);
			proto_writer_release(&w);
			cb->prefilled[k].index = (uint16_t)(i - last - 1);
			last = i;
			k++;
			cb->n_prefilled++;
		} else {
			cb->shortids[cb->n_short++] =
			    proto_cmpct_shortid(key, proto_tx_wtxid(&b->txs[i]));
		}
	}
}

/* NonCoinbasePreforwardRTTest: tx 1 prefilled, the coinbase a short id. */
static void test_non_coinbase_preforward(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_msg m;
	make_block(&b, &raw, 3);
	proto_msg_init(&m);
	const uint32_t pre[] = {1};
	hand_cmpct(&b, pre, 1, &cb);
	wire_round_trip(&cb, &m);
	assert_int_equal(m.cmpctblock.prefilled[0].index, 1);

	struct proto_tx *pool[] = {&b.txs[2]};
	for (int round = 0; round < 2; round++) {
		struct walk w = {.pool = pool, .n_pool = 1};
		struct cmpct_partial pb;
		cmpct_partial_init_empty(&pb);
		assert_int_equal(cmpct_partial_init(&pb, &m.cmpctblock, walk_next, &w), 0);
		assert_false(cmpct_partial_have(&pb, 0));
		assert_true(cmpct_partial_have(&pb, 1));
		assert_true(cmpct_partial_have(&pb, 2));
		if (round == 0)
			assert_int_equal(fill_and_compare(&pb, &b.txs[1], 1, &raw), CMPCT_EFAILED);
		else
			assert_int_equal(fill_and_compare(&pb, &b.txs[0], 1, &raw), 0);
		cmpct_partial_release(&pb);
	}
	proto_msg_release(&m);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* SufficientPreforwardRTTest: txs 0 and 1 prefilled, 2 from the mempool. */
static void test_sufficient_preforward(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_msg m;
	make_block(&b, &raw, 3);
	proto_msg_init(&m);
	const uint32_t pre[] = {0, 1};
	hand_cmpct(&b, pre, 2, &cb);
	wire_round_trip(&cb, &m);
	assert_int_equal(m.cmpctblock.prefilled[0].index, 0);
	assert_int_equal(m.cmpctblock.prefilled[1].index, 0);

	struct proto_tx *pool[] = {&b.txs[2]};
	struct walk w = {.pool = pool, .n_pool = 1};
	struct cmpct_partial pb;
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &m.cmpctblock, walk_next, &w), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_true(cmpct_partial_have(&pb, i));
	assert_int_equal(pb.n_missing, 0);
	assert_int_equal(fill_and_compare(&pb, NULL, 0, &raw), 0);
	cmpct_partial_release(&pb);
	proto_msg_release(&m);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* EmptyBlockRoundTripTest: the coinbase alone. */
static void test_empty_block(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_msg m;
	make_block(&b, &raw, 1);
	proto_msg_init(&m);
	assert_int_equal(cmpct_build(&b, 7, &cb), 0);
	assert_int_equal(cb.n_short, 0);
	wire_round_trip(&cb, &m);
	struct walk w = {0};
	struct cmpct_partial pb;
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &m.cmpctblock, walk_next, &w), 0);
	assert_true(cmpct_partial_have(&pb, 0));
	assert_int_equal(fill_and_compare(&pb, NULL, 0, &raw), 0);
	cmpct_partial_release(&pb);
	proto_msg_release(&m);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* ReceiveWithExtraTransactions: tx 1 is not in the mempool but in the
 * extra ring, beside an unrelated one. */
static void test_extra_transactions(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_tx unrelated;
	make_block(&b, &raw, 3);
	make_tx(&unrelated, 99);
	assert_int_equal(cmpct_build(&b, 5, &cb), 0);

	struct proto_tx *pool[] = {&b.txs[2]};
	struct walk w = {.pool = pool, .n_pool = 1};
	struct cmpct_partial pb;
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), 0);
	assert_false(cmpct_partial_have(&pb, 1));
	cmpct_partial_release(&pb);

	/* The same transaction in both the mempool and the ring is no
	 * conflict (Core compares wtxids first). */
	struct proto_tx *extra[] = {&unrelated, &b.txs[1], &b.txs[2]};
	struct walk w2 = {.pool = pool, .n_pool = 1, .extra = extra, .n_extra = 3};
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w2), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_true(cmpct_partial_have(&pb, i));
	assert_int_equal(pb.mempool_count, 2);
	assert_int_equal(pb.extra_count, 1);
	assert_int_equal(fill_and_compare(&pb, NULL, 0, &raw), 0);
	cmpct_partial_release(&pb);

	proto_tx_release(&unrelated);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* ---------------------------------------------------------------------- */
/* Failures and invalid compact blocks                                     */

static void test_collisions_fall_back(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct proto_tx other;
	make_block(&b, &raw, 4);
	make_tx(&other, 77);
	assert_int_equal(cmpct_build(&b, 9, &cb), 0);

	/* Two equal short ids in one cmpctblock: Core's "Short ID collision". */
	struct cmpct_partial pb;
	struct walk w = {0};
	uint64_t keep = cb.shortids[1];
	cb.shortids[1] = cb.shortids[0];
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), CMPCT_EFAILED);
	assert_false(pb.started);
	cmpct_partial_release(&pb);
	cb.shortids[1] = keep;

	/* A candidate that is not the block's but has its short id (here by
	 * claiming its wtxid: the effect of a real collision) rebuilds a block
	 * the merkle root refuses: fall back. */
	struct proto_tx *pool[] = {&other};
	struct proto_tx missing[2] = {b.txs[1], b.txs[3]};
	struct walk w3 = {.pool = pool, .n_pool = 1, .fake_wtxid = proto_tx_wtxid(&b.txs[2])};
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w3), 0);
	assert_int_equal(fill_and_compare(&pb, missing, 2, &raw), CMPCT_EFAILED);
	cmpct_partial_release(&pb);

	proto_tx_release(&other);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

static void test_invalid(void **state)
{
	(void)state;
	struct proto_block b;
	struct proto_writer raw;
	struct proto_cmpctblock cb = {0};
	struct cmpct_partial pb;
	struct walk w = {0};
	make_block(&b, &raw, 3);
	assert_int_equal(cmpct_build(&b, 1, &cb), 0);
	cmpct_partial_init_empty(&pb);

	/* A null header (Core: nBits == 0). */
	cb.hdr.bits = 0;
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), CMPCT_EINVALID);
	cb.hdr.bits = b.hdr.bits;
	/* No transactions at all. */
	uint32_t ns = cb.n_short, np = cb.n_prefilled;
	cb.n_short = cb.n_prefilled = 0;
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), CMPCT_EINVALID);
	cb.n_short = ns;
	cb.n_prefilled = np;
	/* A prefilled index past the short ids: 3 transactions, index 3. */
	cb.prefilled[0].index = 3;
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), CMPCT_EINVALID);
	/* The last index there is (2) is fine. */
	cb.prefilled[0].index = 2;
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), 0);
	assert_true(cmpct_partial_have(&pb, 2));
	cmpct_partial_release(&pb);
	cb.prefilled[0].index = 0;
	/* A prefilled transaction with no inputs and no outputs. */
	static const uint8_t null_tx[] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(proto_tx_decode_buf(null_tx, sizeof(null_tx), &cb.prefilled[0].tx, NULL),
	                 0);
	assert_int_equal(cmpct_partial_init(&pb, &cb, walk_next, &w), CMPCT_EINVALID);

	cmpct_partial_release(&pb);
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	proto_writer_release(&raw);
}

/* ---------------------------------------------------------------------- */
/* The codecs' bounds                                                      */

static int decode_hex(enum proto_cmd cmd, const char *hex, struct proto_msg *m)
{
	uint8_t buf[256];
	size_t len;
	assert_int_equal(proto_hex_decode(hex, strlen(hex), buf, sizeof(buf), &len), 0);
	return proto_msg_decode(cmd, buf, len, m, NULL);
}

#define HASH_HEX  "0101010101010101010101010101010101010101010101010101010101010101"
#define HDR_HEX   "04000000" HASH_HEX HASH_HEX "00000000ffff7f2000000000"
#define NONCE_HEX "2a00000000000000"

/* TransactionsRequestSerializationTest, ...MaxTest, ...OverflowTest. */
static void test_getblocktxn_indexes(void **state)
{
	(void)state;
	struct proto_msg m;
	proto_msg_init(&m);
	struct proto_getblocktxn g = {0};
	memset(g.block.b, 1, 32);
	assert_int_equal(proto_getblocktxn_reserve(&g, 4), 0);
	g.n = 4;
	g.indexes[0] = 0;
	g.indexes[1] = 1;
	g.indexes[2] = 3;
	g.indexes[3] = 4;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_getblocktxn_encode(&g, &w);
	char hex[200];
	proto_hex_encode(w.buf, w.len, hex);
	assert_string_equal(hex, HASH_HEX "0400000100");
	assert_int_equal(proto_msg_decode(PROTO_CMD_GETBLOCKTXN, w.buf, w.len, &m, NULL), 0);
	assert_int_equal(m.getblocktxn.n, 4);
	assert_int_equal(m.getblocktxn.indexes[2], 3);
	assert_int_equal(m.getblocktxn.indexes[3], 4);
	proto_writer_release(&w);

	/* The highest index there is. */
	assert_int_equal(decode_hex(PROTO_CMD_GETBLOCKTXN, HASH_HEX "01fdffff", &m), 0);
	assert_int_equal(m.getblocktxn.indexes[0], 0xffff);
	/* One past it. */
	assert_int_equal(decode_hex(PROTO_CMD_GETBLOCKTXN, HASH_HEX "01fe00000100", &m),
	                 PROTO_EVALUE);
	/* Gaps 0x7000 and 0x8ffe reach 0xffff; a third index overflows 16 bits. */
	assert_int_equal(decode_hex(PROTO_CMD_GETBLOCKTXN, HASH_HEX "03fd0070fdfe8f00", &m),
	                 PROTO_EVALUE);
	assert_int_equal(decode_hex(PROTO_CMD_GETBLOCKTXN, HASH_HEX "02fd0070fdfe8f", &m), 0);
	assert_int_equal(m.getblocktxn.indexes[1], 0xffff);
	/* Encoding indexes that do not increase is refused. */
	g.indexes[2] = 1;
	proto_writer_init(&w);
	proto_getblocktxn_encode(&g, &w);
	assert_int_equal(w.err, PROTO_EVALUE);
	proto_writer_release(&w);
	proto_getblocktxn_release(&g);
	proto_msg_release(&m);
}

static void test_cmpctblock_bounds(void **state)
{
	(void)state;
	struct proto_msg m;
	proto_msg_init(&m);
	/* Header, nonce, no ids, no prefilled: decodes (InitData refuses it). */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK, HDR_HEX NONCE_HEX "0000", &m), 0);
	/* 65,536 short ids: over 16 bits before anything is allocated. */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK, HDR_HEX NONCE_HEX "fe00000100", &m),
	                 PROTO_ECOUNT);
	/* More ids than bytes. */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK, HDR_HEX NONCE_HEX "02010203040506", &m),
	                 PROTO_ETRUNC);
	/* A prefilled gap over 16 bits. */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK,
	                            HDR_HEX NONCE_HEX "0001fe00000100"
	                                              "0100000000000000000000",
	                            &m),
	                 PROTO_EOVERSIZE);
	/* The highest gap is fine in the codec. */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK,
	                            HDR_HEX NONCE_HEX "0001fdffff"
	                                              "01000000000000000000",
	                            &m),
	                 0);
	assert_int_equal(m.cmpctblock.prefilled[0].index, 0xffff);
	/* A byte after the message. */
	assert_int_equal(decode_hex(PROTO_CMD_CMPCTBLOCK, HDR_HEX NONCE_HEX "000000", &m),
	                 PROTO_ETRAILING);
	/* blocktxn: a count the bytes cannot back. */
	assert_int_equal(decode_hex(PROTO_CMD_BLOCKTXN,
	                            HASH_HEX "02"
	                                     "01000000000000000000",
	                            &m),
	                 PROTO_ETRUNC);
	assert_int_equal(decode_hex(PROTO_CMD_BLOCKTXN,
	                            HASH_HEX "01"
	                                     "01000000000000000000",
	                            &m),
	                 0);
	assert_int_equal(m.blocktxn.n, 1);
	proto_msg_release(&m);
}

/* ---------------------------------------------------------------------- */
/* The real bitcoind's cmpctblock                                          */

static void test_core_vector(void **state)
{
	(void)state;
	size_t clen, blen;
	uint8_t *craw = tu_read_file(tu_vector("cmpct/cmpctblock.bin"), &clen);
	uint8_t *braw = tu_read_file(tu_vector("cmpct/block.bin"), &blen);
	struct proto_msg m;
	struct proto_block b;
	proto_msg_init(&m);
	proto_block_init(&b);
	assert_int_equal(proto_msg_decode(PROTO_CMD_CMPCTBLOCK, craw, clen, &m, NULL), 0);
	assert_int_equal(proto_block_decode(braw, blen, &b, NULL), 0);
	const struct proto_cmpctblock *cb = &m.cmpctblock;

	/* The header is the block's; Core prefills the coinbase alone. */
	assert_memory_equal(&cb->hdr, &b.hdr, sizeof(b.hdr));
	assert_true(b.n_tx > 2);
	assert_int_equal(cb->n_prefilled, 1);
	assert_int_equal(cb->prefilled[0].index, 0);
	assert_int_equal(cb->n_short, b.n_tx - 1);
	bool some_witness = false;
	for (uint32_t i = 1; i < b.n_tx; i++)
		some_witness |= b.txs[i].has_witness;
	assert_true(some_witness); /* so wtxid and txid differ somewhere */

	/* Core's short ids are the ones peerd computes. */
	uint8_t key[16];
	proto_cmpct_shortid_key(&b.hdr, cb->nonce, key);
	for (uint32_t i = 1; i < b.n_tx; i++) {
		uint64_t want = proto_cmpct_shortid(key, proto_tx_wtxid(&b.txs[i]));
		if (cb->shortids[i - 1] != want)
			fail_msg("short id %u: Core %012llx, peerd %012llx", i - 1,
			         (unsigned long long)cb->shortids[i - 1], (unsigned long long)want);
	}
	/* Byte-exact both ways: re-encoding, and building from the block. */
	struct proto_writer w;
	proto_writer_init(&w);
	proto_cmpctblock_encode(cb, &w);
	assert_int_equal(w.len, clen);
	assert_memory_equal(w.buf, craw, clen);
	proto_writer_release(&w);
	struct proto_cmpctblock mine = {0};
	assert_int_equal(cmpct_build(&b, cb->nonce, &mine), 0);
	proto_writer_init(&w);
	proto_cmpctblock_encode(&mine, &w);
	assert_int_equal(w.len, clen);
	assert_memory_equal(w.buf, craw, clen);
	proto_writer_release(&w);

	/* Rebuilt from a "mempool" holding every transaction, shuffled. */
	struct proto_tx *pool[64];
	uint32_t n = 0;
	for (uint32_t i = b.n_tx - 1; i >= 1 && n < 64; i--)
		pool[n++] = &b.txs[i];
	struct walk wk = {.pool = pool, .n_pool = n};
	struct cmpct_partial pb;
	cmpct_partial_init_empty(&pb);
	assert_int_equal(cmpct_partial_init(&pb, cb, walk_next, &wk), 0);
	assert_int_equal(pb.n_missing, 0);
	struct proto_writer full = {.buf = braw, .len = blen};
	assert_int_equal(fill_and_compare(&pb, NULL, 0, &full), 0);
	/* Without the mempool: every short id is asked, then supplied. */
	struct walk none = {0};
	assert_int_equal(cmpct_partial_init(&pb, cb, walk_next, &none), 0);
	assert_int_equal(pb.n_missing, b.n_tx - 1);
	assert_int_equal(fill_and_compare(&pb, &b.txs[1], b.n_tx - 1, &full), 0);
	cmpct_partial_release(&pb);

	proto_cmpctblock_release(&mine);
	proto_block_release(&b);
	proto_msg_release(&m);
	free(craw);
	free(braw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_simple_round_trip),
	    cmocka_unit_test(test_non_coinbase_preforward),
	    cmocka_unit_test(test_sufficient_preforward),
	    cmocka_unit_test(test_empty_block),
	    cmocka_unit_test(test_extra_transactions),
	    cmocka_unit_test(test_collisions_fall_back),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_getblocktxn_indexes),
	    cmocka_unit_test(test_cmpctblock_bounds),
	    cmocka_unit_test(test_core_vector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
