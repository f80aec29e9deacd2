/* tests/unit/test_proto_block.c: block codec, merkle roots, witness commitment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

static const char block413567_hash[] =
    "0000000000000000025aff8be8a55df8f89c77296db6198f272d6577325d4069";
#define BLOCK413567_SIZE 999887u

static const char *chain_hashes[5] = {
    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
    "00000000ebe5ec3e94d8dfe18100e5c0f3b1955bc6107fbe24d95732b814551b",
    "00000000952ccb1bf9b799fcd0cc654dd48363f76781f8b1c61dbf1696c39f97",
    "00000000bc3589303953766cc9364130cb97bc3749bae170f476d45f1e23f850",
    "000000002f264d6504013e73b9c913de9098d4d771c1bb219af475d2a01b128e",
};

/* BIP143's signed native P2WPKH example (see test_proto_tx.c). */
static const char bip143_signed_hex[] =
    "01000000000102fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f000000004948"
    "30450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3"
    "f9281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed01eeffffffef51e1b804cc89d182d279655c3a"
    "a89e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a9148280b37df3"
    "78db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f016"
    "7faa815988ac000247304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a"
    "0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee0121025476c2e83188368d"
    "a1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee635711000000";

static uint8_t *block413567(size_t *len)
{
	uint8_t *raw = tu_read_file(tu_vector("blocks/block413567.raw"), len);
	assert_int_equal(*len, BLOCK413567_SIZE);
	return raw;
}

/* Each transaction of a decoded block must be what the standalone decoder
 * makes of its bytes, and its txid sha256d of its stripped encoding. */
static void check_block_txs(struct proto_block *b)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *bt = &b->txs[i];
		assert_true(bt->borrowed);
		struct proto_writer w, ws;
		proto_writer_init(&w);
		proto_writer_init(&ws);
		proto_tx_encode(bt, &w);
		proto_tx_encode_stripped(bt, &ws);
		assert_int_equal(w.err, 0);
		assert_int_equal(w.len, bt->size);
		assert_int_equal(ws.len, bt->stripped_size);
		struct proto_hash h;
		proto_sha256d(ws.buf, ws.len, h.b);
		assert_memory_equal(h.b, proto_tx_txid(bt)->b, 32);
		size_t off;
		int err = proto_tx_decode_buf(w.buf, w.len, &tx, &off);
		if (err)
			fail_msg("tx %u: standalone decode %s at %zu", i, proto_errname(err), off);
		assert_int_equal(tx.n_in, bt->n_in);
		assert_int_equal(tx.n_out, bt->n_out);
		assert_int_equal(tx.size, bt->size);
		assert_int_equal(tx.stripped_size, bt->stripped_size);
		assert_int_equal(tx.blob_len, bt->blob_len);
		assert_int_equal(tx.has_witness, bt->has_witness);
		tu_assert_bytes_equal(tx.blob, tx.blob_len, bt->blob, bt->blob_len);
		assert_memory_equal(proto_tx_txid(&tx)->b, h.b, 32);
		assert_memory_equal(proto_tx_wtxid(&tx)->b, proto_tx_wtxid(bt)->b, 32);
		proto_writer_release(&w);
		proto_writer_release(&ws);
	}
	proto_tx_release(&tx);
}

static void test_block413567(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = block413567(&len);
	struct proto_block b;
	proto_block_init(&b);
	size_t off = 0;
	int err = proto_block_decode(raw, len, &b, &off);
	if (err)
		fail_msg("decode: %s at %zu", proto_errname(err), off);
	struct proto_hash h;
	proto_block_header_hash(&b.hdr, &h);
	tu_assert_hash_hex(&h, block413567_hash);
	assert_int_equal(b.size, len);
	assert_true(b.n_tx > 1000);
	assert_true(proto_tx_is_coinbase(&b.txs[0]));
	for (uint32_t i = 1; i < b.n_tx; i++)
		assert_false(proto_tx_is_coinbase(&b.txs[i]));
	print_message("block 413567: %u transactions, weight %u\n", b.n_tx, proto_block_weight(&b));

	struct proto_hash root;
	bool mutated = true;
	assert_int_equal(proto_block_merkle_root(&b, &root, &mutated), 0);
	assert_memory_equal(root.b, b.hdr.merkle_root.b, 32);
	assert_false(mutated);

	/* Pre-segwit: no witnesses anywhere, weight is 4 x size. */
	assert_int_equal(proto_block_weight(&b), 4 * len);
	assert_true(proto_block_weight(&b) <= PROTO_MAX_BLOCK_WEIGHT);
	assert_int_equal(proto_block_witness_commitment_index(&b), -1);

	check_block_txs(&b);

	struct proto_writer w;
	proto_writer_init(&w);
	proto_block_encode(&b, &w);
	assert_int_equal(w.err, 0);
	tu_assert_bytes_equal(w.buf, w.len, raw, len);
	proto_writer_release(&w);

	/* A fixed writer too small for it fails cleanly. */
	uint8_t small[1000];
	proto_writer_init_fixed(&w, small, sizeof(small));
	proto_block_encode(&b, &w);
	assert_int_equal(w.err, PROTO_ENOSPACE);

	proto_block_release(&b);
	free(raw);
}

static void test_block_allocs(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = block413567(&len);
	struct proto_block b;
	proto_block_init(&b);
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_block_decode(raw, len, &b, NULL), 0);
	uint64_t used = base_alloc_count() - a0;
	if (used > 4)
		fail_msg("fresh block decode: %llu allocations", (unsigned long long)used);
	struct proto_hash root;
	assert_int_equal(proto_block_merkle_root(&b, &root, NULL), 0);
	/* Reused: no allocation for decode or merkle root. */
	a0 = base_alloc_count();
	assert_int_equal(proto_block_decode(raw, len, &b, NULL), 0);
	assert_int_equal(proto_block_merkle_root(&b, &root, NULL), 0);
	assert_int_equal(base_alloc_count() - a0, 0);
	assert_memory_equal(root.b, b.hdr.merkle_root.b, 32);
	/* A failed decode keeps storage and leaves no transactions. */
	struct proto_tx *txs = b.txs;
	assert_int_equal(proto_block_decode(raw, len - 1, &b, NULL), PROTO_ETRUNC);
	assert_int_equal(b.n_tx, 0);
	assert_ptr_equal(b.txs, txs);
	proto_block_release(&b);
	free(raw);
}

/* Records of genesis_chain_0_to_4.dat: magic, length, block. */
static void test_genesis_chain(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/genesis_chain_0_to_4.dat"), &len);
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	struct proto_block b;
	proto_block_init(&b);
	struct proto_hash prev;
	memset(prev.b, 0, 32);
	size_t pos = 0;
	int n = 0;
	while (pos < len) {
		assert_true(len - pos >= 8);
		assert_int_equal(proto_le32(raw + pos), main->magic);
		uint32_t blen = proto_le32(raw + pos + 4);
		pos += 8;
		assert_true(blen <= len - pos);
		assert_true(n < 5);
		size_t off = 0;
		int err = proto_block_decode(raw + pos, blen, &b, &off);
		if (err)
			fail_msg("block %d: %s at %zu", n, proto_errname(err), off);
		assert_true(b.n_tx >= 1 && b.n_tx <= 3);
		struct proto_hash h, root;
		proto_block_header_hash(&b.hdr, &h);
		tu_assert_hash_hex(&h, chain_hashes[n]);
		assert_memory_equal(b.hdr.prev.b, prev.b, 32);
		assert_true(proto_check_pow(&h, b.hdr.bits, &main->pow_limit));
		bool mutated = true;
		assert_int_equal(proto_block_merkle_root(&b, &root, &mutated), 0);
		assert_memory_equal(root.b, b.hdr.merkle_root.b, 32);
		assert_false(mutated);
		check_block_txs(&b);
		if (n == 0) {
			tu_assert_bytes_equal(raw + pos, blen, main->genesis, main->genesis_len);
			assert_memory_equal(h.b, main->genesis_hash.b, 32);
		}
		struct proto_writer w;
		proto_writer_init(&w);
		proto_block_encode(&b, &w);
		tu_assert_bytes_equal(w.buf, w.len, raw + pos, blen);
		proto_writer_release(&w);
		prev = h;
		pos += blen;
		n++;
	}
	assert_int_equal(n, 5);
	proto_block_release(&b);
	free(raw);
}

/* Every prefix of each small block, and a spread of prefixes of the big one. */
static void check_prefix(struct proto_block *b, const uint8_t *raw, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	memcpy(p, raw, n);
	size_t off = SIZE_MAX;
	int err = proto_block_decode(p, n, b, &off);
	if (err != PROTO_ETRUNC)
		fail_msg("prefix of %zu bytes: %s, expected ETRUNC", n, proto_errname(err));
	assert_true(off <= n);
	assert_int_equal(b->n_tx, 0);
	free(p);
}

static void test_truncations(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/genesis_chain_0_to_4.dat"), &len);
	struct proto_block b;
	proto_block_init(&b);
	for (size_t pos = 0; pos + 8 <= len;) {
		uint32_t blen = proto_le32(raw + pos + 4);
		pos += 8;
		for (size_t n = 0; n < blen; n++)
			check_prefix(&b, raw + pos, n);
		pos += blen;
	}
	free(raw);
	raw = block413567(&len);
	for (size_t n = 0; n < 300; n++)
		check_prefix(&b, raw, n);
	for (size_t n = 300; n < len; n += 1009)
		check_prefix(&b, raw, n);
	for (size_t n = len - 300; n < len; n++)
		check_prefix(&b, raw, n);
	proto_block_release(&b);
	free(raw);
}

static void test_hostile_counts(void **state)
{
	(void)state;
	struct proto_block b;
	proto_block_init(&b);
	uint8_t buf[200];
	memset(buf, 0, sizeof(buf));
	/* 80-byte header, then a tx count of 2^32-1. */
	buf[80] = 0xfe;
	memset(buf + 81, 0xff, 4);
	uint64_t a0 = base_alloc_count();
	size_t off = 0;
	int err = proto_block_decode(buf, sizeof(buf), &b, &off);
	assert_int_equal(err, PROTO_ECOUNT);
	assert_int_equal(off, 80);
	/* A count the bytes cannot back: 4 txs in 119 bytes. */
	buf[80] = 4;
	err = proto_block_decode(buf, sizeof(buf), &b, &off);
	assert_int_equal(err, PROTO_ETRUNC);
	assert_int_equal(off, 80);
	/* Non-canonical tx count. */
	buf[80] = 0xfd;
	buf[81] = 1;
	buf[82] = 0;
	err = proto_block_decode(buf, sizeof(buf), &b, &off);
	assert_int_equal(err, PROTO_ENONCANON);
	assert_int_equal(base_alloc_count() - a0, 0);
	proto_block_release(&b);
}

static void test_trailing(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	uint8_t *buf = malloc(p->genesis_len + 1);
	memcpy(buf, p->genesis, p->genesis_len);
	buf[p->genesis_len] = 0;
	struct proto_block b;
	proto_block_init(&b);
	size_t off = 0;
	assert_int_equal(proto_block_decode(buf, p->genesis_len + 1, &b, &off), PROTO_ETRAILING);
	assert_int_equal(off, p->genesis_len);
	assert_int_equal(proto_block_decode(buf, p->genesis_len, &b, &off), 0);
	/* An empty block (no transactions) decodes; Core rejects it later. */
	uint8_t empty[81] = {0};
	assert_int_equal(proto_block_decode(empty, sizeof(empty), &b, &off), 0);
	assert_int_equal(b.n_tx, 0);
	struct proto_hash root;
	assert_int_equal(proto_block_merkle_root(&b, &root, NULL), 0);
	assert_true(proto_hash_is_zero(&root));
	proto_block_release(&b);
	free(buf);
}

static void test_oom(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = block413567(&len);
	for (long k = 0;; k++) {
		struct proto_block b;
		proto_block_init(&b);
		base_alloc_fail_after(k);
		int err = proto_block_decode(raw, len, &b, NULL);
		struct proto_hash root;
		if (!err)
			err = proto_block_merkle_root(&b, &root, NULL);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (err) {
			if (err != PROTO_ENOMEM)
				fail_msg("k=%ld: %s, expected ENOMEM", k, proto_errname(err));
			assert_true(injected);
		}
		proto_block_release(&b);
		if (!err && !injected)
			break;
		assert_true(k < 100);
	}
	free(raw);
}

static void leaf(struct proto_hash *h, uint8_t v)
{
	memset(h->b, 0, 32);
	h->b[0] = v;
	h->b[31] = (uint8_t)(v * 3);
}

static void test_merkle(void **state)
{
	(void)state;
	struct proto_hash l[8], root, root2, scratch[8];
	bool mutated;
	for (int i = 0; i < 8; i++)
		leaf(&l[i], (uint8_t)(i + 1));
	/* n = 0: zero; n = 1: the leaf itself. */
	assert_int_equal(proto_merkle_root(l, 0, NULL, &root, &mutated), 0);
	assert_true(proto_hash_is_zero(&root));
	assert_int_equal(proto_merkle_root(l, 1, NULL, &root, &mutated), 0);
	assert_memory_equal(root.b, l[0].b, 32);
	assert_false(mutated);
	/* n = 2: sha256d(a||b). */
	struct proto_hash want;
	proto_hash_pair(l[0].b, l[1].b, want.b);
	assert_int_equal(proto_merkle_root(l, 2, NULL, &root, &mutated), 0);
	assert_memory_equal(root.b, want.b, 32);
	/* n = 3 pairs the last with itself: same root as [a b c c], but only
	 * the explicit duplicate is flagged as mutated. */
	struct proto_hash ab, cc;
	proto_hash_pair(l[0].b, l[1].b, ab.b);
	proto_hash_pair(l[2].b, l[2].b, cc.b);
	proto_hash_pair(ab.b, cc.b, want.b);
	assert_int_equal(proto_merkle_root(l, 3, scratch, &root, &mutated), 0);
	assert_memory_equal(root.b, want.b, 32);
	assert_false(mutated);
	struct proto_hash dup[4] = {l[0], l[1], l[2], l[2]};
	assert_int_equal(proto_merkle_root(dup, 4, NULL, &root2, &mutated), 0);
	assert_memory_equal(root2.b, want.b, 32);
	assert_true(mutated);
	/* A duplicated pair at a higher level: [a b c d e f e f]. */
	struct proto_hash six[6] = {l[0], l[1], l[2], l[3], l[4], l[5]};
	struct proto_hash eight[8] = {l[0], l[1], l[2], l[3], l[4], l[5], l[4], l[5]};
	assert_int_equal(proto_merkle_root(six, 6, NULL, &root, &mutated), 0);
	assert_false(mutated);
	assert_int_equal(proto_merkle_root(eight, 8, NULL, &root2, &mutated), 0);
	assert_true(mutated);
	assert_memory_equal(root.b, root2.b, 32);
	/* In place over the leaves themselves. */
	struct proto_hash copy[6];
	memcpy(copy, six, sizeof(six));
	assert_int_equal(proto_merkle_root(copy, 6, copy, &root2, NULL), 0);
	assert_memory_equal(root.b, root2.b, 32);
	/* OOM when it has to allocate. */
	base_alloc_fail_after(0);
	assert_int_equal(proto_merkle_root(l, 5, NULL, &root, NULL), PROTO_ENOMEM);
	base_alloc_fail_after(-1);
}

/* CVE-2012-2459 on a real block: repeating the last transaction of a block
 * with an odd count keeps the merkle root but sets the mutation flag. */
static void test_block_mutation(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/genesis_chain_0_to_4.dat"), &len);
	struct proto_block b;
	proto_block_init(&b);
	bool done = false;
	for (size_t pos = 0; pos + 8 <= len && !done;) {
		uint32_t blen = proto_le32(raw + pos + 4);
		pos += 8;
		assert_int_equal(proto_block_decode(raw + pos, blen, &b, NULL), 0);
		if (b.n_tx == 3) {
			struct proto_writer w;
			proto_writer_init(&w);
			proto_block_header_encode(&b.hdr, &w);
			proto_write_compact(&w, 4);
			for (uint32_t i = 0; i < 3; i++)
				proto_tx_encode(&b.txs[i], &w);
			proto_tx_encode(&b.txs[2], &w);
			struct proto_block b2;
			proto_block_init(&b2);
			assert_int_equal(proto_block_decode(w.buf, w.len, &b2, NULL), 0);
			struct proto_hash root;
			bool mutated = false;
			assert_int_equal(proto_block_merkle_root(&b2, &root, &mutated), 0);
			assert_memory_equal(root.b, b.hdr.merkle_root.b, 32);
			assert_true(mutated);
			proto_block_release(&b2);
			proto_writer_release(&w);
			done = true;
		}
		pos += blen;
	}
	assert_true(done);
	proto_block_release(&b);
	free(raw);
}

/* A segwit block built here: coinbase with the witness reserved value and
 * a BIP141 commitment, then BIP143's signed P2WPKH transaction. */
static void test_witness_block(void **state)
{
	(void)state;
	size_t slen;
	uint8_t *segwit = tu_unhex(bip143_signed_hex, &slen);
	struct proto_tx sw;
	proto_tx_init(&sw);
	assert_int_equal(proto_tx_decode_buf(segwit, slen, &sw, NULL), 0);

	/* Witness root: [0, wtxid(sw)]; commitment sha256d(root || 32 zeros). */
	struct proto_hash leaves[2], wroot, commitment;
	memset(leaves[0].b, 0, 32);
	leaves[1] = *proto_tx_wtxid(&sw);
	assert_int_equal(proto_merkle_root(leaves, 2, NULL, &wroot, NULL), 0);
	uint8_t pre[64] = {0};
	memcpy(pre, wroot.b, 32);
	proto_sha256d(pre, 64, commitment.b);

	struct proto_writer cb;
	proto_writer_init(&cb);
	proto_write_u32le(&cb, 2);
	proto_write_bytes(&cb, (const uint8_t[]){0, 1}, 2);
	proto_write_compact(&cb, 1);
	uint8_t null_prev[36];
	memset(null_prev, 0, 32);
	memset(null_prev + 32, 0xff, 4);
	proto_write_bytes(&cb, null_prev, 36);
	proto_write_varbytes(&cb, (const uint8_t[]){0x03, 0x01, 0x02, 0x03}, 4);
	proto_write_u32le(&cb, 0xffffffff);
	proto_write_compact(&cb, 3);
	proto_write_u64le(&cb, 625000000);
	proto_write_varbytes(&cb, (const uint8_t[]){0x51}, 1);
	uint8_t commit_script[38] = {0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed};
	memcpy(commit_script + 6, commitment.b, 32);
	proto_write_u64le(&cb, 0);
	proto_write_varbytes(&cb, commit_script, 38);
	/* A later output with the tag but one byte short: not a commitment. */
	proto_write_u64le(&cb, 0);
	proto_write_varbytes(&cb, commit_script, 37);
	proto_write_compact(&cb, 1); /* witness: one item, 32 zero bytes */
	uint8_t reserved[32] = {0};
	proto_write_varbytes(&cb, reserved, 32);
	proto_write_u32le(&cb, 0);
	assert_int_equal(cb.err, 0);

	struct proto_tx cbtx;
	proto_tx_init(&cbtx);
	assert_int_equal(proto_tx_decode_buf(cb.buf, cb.len, &cbtx, NULL), 0);
	struct proto_hash txids[2] = {*proto_tx_txid(&cbtx), *proto_tx_txid(&sw)};

	struct proto_block_header hdr = {
	    .version = 0x20000000, .time = 1700000000, .bits = 0x207fffff};
	assert_int_equal(proto_merkle_root(txids, 2, NULL, &hdr.merkle_root, NULL), 0);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_block_header_encode(&hdr, &w);
	proto_write_compact(&w, 2);
	proto_write_bytes(&w, cb.buf, cb.len);
	proto_write_bytes(&w, segwit, slen);
	assert_int_equal(w.err, 0);

	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(w.buf, w.len, &b, NULL), 0);
	assert_int_equal(b.n_tx, 2);
	assert_true(b.txs[0].has_witness);
	assert_true(b.txs[1].has_witness);
	struct proto_hash root;
	bool mutated;
	assert_int_equal(proto_block_merkle_root(&b, &root, &mutated), 0);
	assert_memory_equal(root.b, hdr.merkle_root.b, 32);
	assert_int_equal(proto_block_witness_merkle_root(&b, &root), 0);
	assert_memory_equal(root.b, wroot.b, 32);
	int ci = proto_block_witness_commitment_index(&b);
	assert_int_equal(ci, 1);
	assert_memory_equal(proto_txout_script(&b.txs[0], &b.txs[0].vout[ci]) + 6, commitment.b,
	                    32);
	/* Witness of the coinbase through the iterator. */
	struct proto_witness_iter it;
	struct proto_span item;
	proto_witness_iter_init(&it, &b.txs[0], &b.txs[0].vin[0]);
	assert_true(proto_witness_iter_next(&it, &item));
	assert_int_equal(item.len, 32);
	assert_false(proto_witness_iter_next(&it, &item));
	/* Weight: header and count x4, plus each tx's own weight, which is
	 * 3 x stripped + total. */
	uint32_t want = (80 + 1) * 4 + proto_tx_weight(&cbtx) + proto_tx_weight(&sw);
	assert_int_equal(proto_block_weight(&b), want);
	assert_true(proto_block_weight(&b) < 4 * w.len);
	check_block_txs(&b);
	struct proto_writer w2;
	proto_writer_init(&w2);
	proto_block_encode(&b, &w2);
	tu_assert_bytes_equal(w2.buf, w2.len, w.buf, w.len);

	/* Each tx's superfluous-witness rule holds inside a block too: strip
	 * the coinbase's witness item count to 0. */
	size_t at = 81 + cb.len - 4 - 33 - 1;
	assert_int_equal(w.buf[at], 1);
	uint8_t *bad = malloc(w.len);
	memcpy(bad, w.buf, at);
	bad[at] = 0;
	memcpy(bad + at + 1, w.buf + at + 34, w.len - at - 34);
	size_t off;
	assert_int_equal(proto_block_decode(bad, w.len - 33, &b, &off), PROTO_EVALUE);
	/* And a bad flag byte. */
	memcpy(bad, w.buf, w.len);
	bad[81 + 5] = 3;
	assert_int_equal(proto_block_decode(bad, w.len, &b, &off), PROTO_EVALUE);
	assert_int_equal(off, 81 + 5);
	free(bad);

	proto_writer_release(&w2);
	proto_writer_release(&w);
	proto_writer_release(&cb);
	proto_block_release(&b);
	proto_tx_release(&cbtx);
	proto_tx_release(&sw);
	free(segwit);
}

/* A block whose transactions have no outputs at all (found by fuzz_block:
 * the all-outputs array is then never allocated). */
static void test_no_outputs(void **state)
{
	(void)state;
	size_t slen;
	uint8_t *tx = tu_unhex(bip143_signed_hex, &slen);
	/* Cut the outputs (2 x 34 bytes plus the count) down to a 0 count. */
	const size_t outs = 4 + 2 + 1 + 2 * 41 + 0x49; /* version, marker/flag, inputs */
	assert_int_equal(tx[outs], 2);
	struct proto_writer w;
	proto_writer_init(&w);
	struct proto_block_header h = {.version = 1, .bits = 0x207fffff};
	proto_block_header_encode(&h, &w);
	proto_write_compact(&w, 1);
	proto_write_bytes(&w, tx, outs);
	proto_write_u8(&w, 0);
	proto_write_bytes(&w, tx + outs + 1 + 2 * 34, slen - outs - 1 - 2 * 34);
	assert_int_equal(w.err, 0);
	struct proto_block b;
	proto_block_init(&b);
	size_t off = 0;
	int err = proto_block_decode(w.buf, w.len, &b, &off);
	if (err)
		fail_msg("%s at %zu", proto_errname(err), off);
	assert_int_equal(b.txs[0].n_out, 0);
	assert_int_equal(b.txs[0].n_in, 2);
	check_block_txs(&b);
	struct proto_writer w2;
	proto_writer_init(&w2);
	proto_block_encode(&b, &w2);
	tu_assert_bytes_equal(w2.buf, w2.len, w.buf, w.len);
	proto_writer_release(&w2);
	proto_writer_release(&w);
	proto_block_release(&b);
	free(tx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_block413567),
	    cmocka_unit_test(test_block_allocs),
	    cmocka_unit_test(test_genesis_chain),
	    cmocka_unit_test(test_truncations),
	    cmocka_unit_test(test_hostile_counts),
	    cmocka_unit_test(test_trailing),
	    cmocka_unit_test(test_oom),
	    cmocka_unit_test(test_merkle),
	    cmocka_unit_test(test_block_mutation),
	    cmocka_unit_test(test_witness_block),
	    cmocka_unit_test(test_no_outputs),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
