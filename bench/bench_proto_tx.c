/*
 * bench/bench_proto_tx.c: transaction, block and hashing benchmarks,
 * mirroring btcd's wire/bench_test.go (same inputs, same names) so the
 * numbers compare one to one, plus Bitcoin Core's block deserialization
 * benchmark block (413567).
 *
 * Decode benchmarks decode into a reused object: that is the steady state
 * (free-list hits, storage kept, no allocation). The *Fresh variants
 * init, decode and release each time to show what a new object costs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "proto/proto.h"

/* btcd's DeserializeTxSmall input, which is also mainnet block 1's coinbase
 * (btcd's blockOne.Transactions[0], used by WriteTxIn/WriteTxOut/SerializeTx). */
static const uint8_t small_tx[] = {
    0x01, 0x00, 0x00, 0x00, /* version */
    0x01,                   /* one input */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, /* previous output index */
    0x07, 0x04, 0xff, 0xff, 0x00, 0x1d, 0x01, 0x04, /* signature script */
    0xff, 0xff, 0xff, 0xff,                         /* sequence */
    0x01,                                           /* one output */
    0x00, 0xf2, 0x05, 0x2a, 0x01, 0x00, 0x00, 0x00, /* 50 BTC */
    0x43, 0x41, 0x04, 0x96, 0xb5, 0x38, 0xe8, 0x53, 0x51, 0x9c, 0x72, 0x6a, 0x2c, 0x91,
    0xe6, 0x1e, 0xc1, 0x16, 0x00, 0xae, 0x13, 0x90, 0x81, 0x3a, 0x62, 0x7c, 0x66, 0xfb,
    0x8b, 0xe7, 0x94, 0x7b, 0xe6, 0x3c, 0x52, 0xda, 0x75, 0x89, 0x37, 0x95, 0x15, 0xd4,
    0xe0, 0xa6, 0x04, 0xf8, 0x14, 0x17, 0x81, 0xe6, 0x22, 0x94, 0x72, 0x11, 0x66, 0xbf,
    0x62, 0x1e, 0x73, 0xa8, 0x2c, 0xbf, 0x23, 0x42, 0xc8, 0x58, 0xee, 0xac, /* pk script */
    0x00, 0x00, 0x00, 0x00,                                                 /* locktime */
};
#define SMALL_TX_IN_OFF  5
#define SMALL_TX_IN_LEN  48
#define SMALL_TX_OUT_OFF 54
#define SMALL_TX_OUT_LEN 76

/* btcd's ReadBlockHeader input (its trailing tx count byte is not read). */
static const uint8_t header_bytes[PROTO_BLOCK_HEADER_SIZE] = {
    0x01, 0x00, 0x00, 0x00, 0x6f, 0xe2, 0x8c, 0x0a, 0xb6, 0xf1, 0xb3, 0x72, 0xc1, 0xa6, 0xa2, 0x46,
    0xae, 0x63, 0xf7, 0x4f, 0x93, 0x1e, 0x83, 0x65, 0xe1, 0x5a, 0x08, 0x9c, 0x68, 0xd6, 0x19, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x3b, 0xa3, 0xed, 0xfd, 0x7a, 0x7b, 0x12, 0xb2, 0x7a, 0xc7, 0x2c, 0x3e,
    0x67, 0x76, 0x8f, 0x61, 0x7f, 0xc8, 0x1b, 0xc3, 0x88, 0x8a, 0x51, 0x32, 0x3a, 0x9f, 0xb8, 0xaa,
    0x4b, 0x1e, 0x5e, 0x4a, 0x29, 0xab, 0x5f, 0x49, 0xff, 0xff, 0x00, 0x1d, 0xf3, 0xe0, 0x01, 0x00,
};

/* Mainnet block 1's header (btcd's blockOne.Header). */
static struct proto_block_header block_one_header(void)
{
	struct proto_block_header h = {
	    .version = 1, .time = 1231469665, .bits = 0x1d00ffff, .nonce = 2573394689u};
	h.prev = proto_params(PROTO_NET_MAIN)->genesis_hash;
	/* 0e3e2357...512098, block 1's coinbase txid. */
	proto_sha256d(small_tx, sizeof(small_tx), h.merkle_root.b);
	return h;
}

static const char block_one_hash[] =
    "00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048";
static const char megatx_txid[] =
    "bb41a757f405890fb0f5856228e23b715702d714d59bf2b1feb70d8b2b4e3e08";

/* Shared inputs, loaded once: the harness calls each benchmark several
 * times while it calibrates. */
static uint8_t *megatx, *block;
static size_t megatx_len, block_len;

static void load_vectors(void)
{
	if (!megatx)
		megatx = bench_read_file(bench_vector("blocks/megatx.bin"), &megatx_len);
	if (!block)
		block = bench_read_file(bench_vector("blocks/block413567.raw"), &block_len);
}

static bool hash_is(const struct proto_hash *h, const char *hex)
{
	char s[65];
	proto_hash_to_hex(h, s);
	return strcmp(s, hex) == 0;
}

/* ---------------------------------------------------------------------- */
/* Pieces                                                                  */

BENCH(ReadOutPoint)
{
	uint8_t buf[36];
	memset(buf, 0, 32);
	memset(buf + 32, 0xff, 4);
	struct proto_outpoint op;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		proto_reader_init(&r, buf, sizeof(buf));
		if (proto_outpoint_decode(&r, &op))
			bench_fail(ctx, "ReadOutPoint");
		bench_keep(op.n);
	}
}

BENCH(WriteOutPoint)
{
	struct proto_outpoint op;
	memset(&op, 0, sizeof(op));
	uint8_t buf[64];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_outpoint_encode(&op, &w);
		bench_keep(w.len);
	}
}

BENCH(ReadTxOut)
{
	const uint8_t *in = small_tx + SMALL_TX_OUT_OFF;
	struct proto_txout o;
	struct proto_span s;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		proto_reader_init(&r, in, SMALL_TX_OUT_LEN);
		if (proto_txout_decode(&r, &o, &s))
			bench_fail(ctx, "ReadTxOut");
		bench_keep(s.data);
	}
}

BENCH(WriteTxOut)
{
	struct proto_txout o;
	struct proto_span s;
	struct proto_reader r;
	proto_reader_init(&r, small_tx + SMALL_TX_OUT_OFF, SMALL_TX_OUT_LEN);
	if (proto_txout_decode(&r, &o, &s))
		bench_fail(ctx, "WriteTxOut setup");
	uint8_t buf[128];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_txout_encode(&o, s.data, s.len, &w);
		bench_keep(w.len);
	}
}

BENCH(ReadTxIn)
{
	const uint8_t *in = small_tx + SMALL_TX_IN_OFF;
	struct proto_txin t;
	struct proto_span s;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		proto_reader_init(&r, in, SMALL_TX_IN_LEN);
		if (proto_txin_decode(&r, &t, &s))
			bench_fail(ctx, "ReadTxIn");
		bench_keep(s.data);
	}
}

BENCH(WriteTxIn)
{
	struct proto_txin t;
	struct proto_span s;
	struct proto_reader r;
	proto_reader_init(&r, small_tx + SMALL_TX_IN_OFF, SMALL_TX_IN_LEN);
	if (proto_txin_decode(&r, &t, &s))
		bench_fail(ctx, "WriteTxIn setup");
	uint8_t buf[128];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_txin_encode(&t, s.data, s.len, &w);
		bench_keep(w.len);
	}
}

BENCH(ReadBlockHeader)
{
	struct proto_block_header h;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		proto_reader_init(&r, header_bytes, sizeof(header_bytes));
		if (proto_block_header_decode(&r, &h))
			bench_fail(ctx, "ReadBlockHeader");
		bench_keep(h.nonce);
	}
}

BENCH(WriteBlockHeader)
{
	struct proto_block_header h = block_one_header();
	struct proto_hash hash;
	proto_block_header_hash(&h, &hash);
	if (!hash_is(&hash, block_one_hash))
		bench_fail(ctx, "block 1 header does not hash to %s", block_one_hash);
	uint8_t buf[PROTO_BLOCK_HEADER_SIZE];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_block_header_encode(&h, &w);
		bench_keep(w.len);
	}
}

/* ---------------------------------------------------------------------- */
/* Transactions                                                            */

BENCH(DeserializeTxSmall)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(small_tx, sizeof(small_tx), &tx, NULL))
		bench_fail(ctx, "DeserializeTxSmall");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (proto_tx_decode_buf(small_tx, sizeof(small_tx), &tx, NULL))
			bench_fail(ctx, "DeserializeTxSmall");
	}
	bench_stop(ctx);
	proto_tx_release(&tx);
}

BENCH(DeserializeTxSmallFresh)
{
	struct proto_tx tx;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_tx_init(&tx);
		if (proto_tx_decode_buf(small_tx, sizeof(small_tx), &tx, NULL))
			bench_fail(ctx, "DeserializeTxSmallFresh");
		proto_tx_release(&tx);
	}
}

BENCH(DeserializeTxLarge)
{
	load_vectors();
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(megatx, megatx_len, &tx, NULL) || tx.n_in != 5569 ||
	    !hash_is(proto_tx_txid(&tx), megatx_txid))
		bench_fail(ctx, "megatx does not decode to %s", megatx_txid);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (proto_tx_decode_buf(megatx, megatx_len, &tx, NULL))
			bench_fail(ctx, "DeserializeTxLarge");
	}
	bench_stop(ctx);
	proto_tx_release(&tx);
}

BENCH(DeserializeTxLargeFresh)
{
	load_vectors();
	struct proto_tx tx;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_tx_init(&tx);
		if (proto_tx_decode_buf(megatx, megatx_len, &tx, NULL))
			bench_fail(ctx, "DeserializeTxLargeFresh");
		proto_tx_release(&tx);
	}
}

/* btcd's SerializeTx: block 1's coinbase. */
BENCH(SerializeTx)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(small_tx, sizeof(small_tx), &tx, NULL))
		bench_fail(ctx, "SerializeTx setup");
	uint8_t buf[sizeof(small_tx)];
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, sizeof(buf));
		proto_tx_encode(&tx, &w);
		bench_keep(w.len);
	}
	bench_stop(ctx);
	if (memcmp(buf, small_tx, sizeof(buf)) != 0)
		bench_fail(ctx, "SerializeTx output differs");
	proto_tx_release(&tx);
}

BENCH(SerializeTxLarge)
{
	load_vectors();
	static uint8_t *buf;
	if (!buf)
		buf = xmalloc(megatx_len);
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (!buf || proto_tx_decode_buf(megatx, megatx_len, &tx, NULL))
		bench_fail(ctx, "SerializeTxLarge setup");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, megatx_len);
		proto_tx_encode(&tx, &w);
		bench_keep(w.len);
	}
	bench_stop(ctx);
	proto_tx_release(&tx);
}

/* btcd's TxHash: the genesis coinbase (cache cleared every time). */
BENCH(TxHash)
{
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	struct proto_reader r;
	struct proto_block_header h;
	proto_reader_init(&r, m->genesis, m->genesis_len);
	if (proto_block_header_decode(&r, &h) || proto_skip(&r, 1))
		bench_fail(ctx, "TxHash setup");
	struct proto_tx tx;
	proto_tx_init(&tx);
	if (proto_tx_decode_buf(r.p, proto_reader_left(&r), &tx, NULL))
		bench_fail(ctx, "TxHash setup");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		tx.txid_valid = tx.ids_valid = false;
		bench_keep(proto_tx_txid(&tx)->b[0]);
	}
	bench_stop(ctx);
	if (memcmp(tx.txid.b, h.merkle_root.b, 32) != 0)
		bench_fail(ctx, "genesis coinbase txid is not the merkle root");
	proto_tx_release(&tx);
}

/* btcd's DoubleHashH over the serialized genesis coinbase. */
BENCH(DoubleHashH)
{
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	const uint8_t *tx = m->genesis + PROTO_BLOCK_HEADER_SIZE + 1;
	size_t len = m->genesis_len - PROTO_BLOCK_HEADER_SIZE - 1;
	struct proto_hash h;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_sha256d(tx, len, h.b);
		bench_keep(h.b[0]);
	}
}

/* ---------------------------------------------------------------------- */
/* Blocks (Core's DeserializeBlockTest / DeserializeAndCheckBlockTest block) */

BENCH(DeserializeBlock)
{
	load_vectors();
	struct proto_block b;
	proto_block_init(&b);
	if (proto_block_decode(block, block_len, &b, NULL))
		bench_fail(ctx, "block413567 does not decode");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (proto_block_decode(block, block_len, &b, NULL))
			bench_fail(ctx, "DeserializeBlock");
	}
	bench_stop(ctx);
	bench_note(ctx, "%u transactions, %zu bytes", b.n_tx, block_len);
	proto_block_release(&b);
}

BENCH(DeserializeBlockFresh)
{
	load_vectors();
	struct proto_block b;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_block_init(&b);
		if (proto_block_decode(block, block_len, &b, NULL))
			bench_fail(ctx, "DeserializeBlockFresh");
		proto_block_release(&b);
	}
}

/* Decode, every txid, merkle root (checked against the header). */
BENCH(DeserializeAndHashBlock)
{
	load_vectors();
	struct proto_block b;
	struct proto_hash root;
	proto_block_init(&b);
	if (proto_block_decode(block, block_len, &b, NULL) ||
	    proto_block_merkle_root(&b, &root, NULL))
		bench_fail(ctx, "DeserializeAndHashBlock setup");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		bool mutated;
		if (proto_block_decode(block, block_len, &b, NULL) ||
		    proto_block_merkle_root(&b, &root, &mutated) || mutated)
			bench_fail(ctx, "DeserializeAndHashBlock");
	}
	bench_stop(ctx);
	if (!proto_hash_eq(&root, &b.hdr.merkle_root))
		bench_fail(ctx, "merkle root does not match the header");
	proto_block_release(&b);
}

BENCH(SerializeBlock)
{
	load_vectors();
	static uint8_t *buf;
	if (!buf)
		buf = xmalloc(block_len);
	struct proto_block b;
	proto_block_init(&b);
	if (!buf || proto_block_decode(block, block_len, &b, NULL))
		bench_fail(ctx, "SerializeBlock setup");
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_writer w;
		proto_writer_init_fixed(&w, buf, block_len);
		proto_block_encode(&b, &w);
		bench_keep(w.len);
	}
	bench_stop(ctx);
	if (memcmp(buf, block, block_len) != 0)
		bench_fail(ctx, "SerializeBlock output differs");
	proto_block_release(&b);
}
