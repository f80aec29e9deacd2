/*
 * tests/fuzz/fuzz_block.c: the block decoder.
 *
 * Whatever decodes must encode to exactly the input, decode again, and
 * encode identically. Every transaction inside must be exactly what the
 * standalone transaction decoder makes of its bytes (the two decoders are
 * separate code and must accept the same language). Merkle roots, the
 * witness commitment lookup and weight must run on anything decoded.
 * Errors must be documented codes with an offset inside the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_block: invariant broken: %s\n", what);
		abort();
	}
}

static uint8_t *encode(const struct proto_block *b, size_t *len)
{
	struct proto_writer w;
	proto_writer_init(&w);
	proto_block_encode(b, &w);
	check(w.err == 0, "encode failed");
	*len = w.len;
	return w.buf;
}

static void check_txs(struct proto_block *b)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	size_t total = PROTO_BLOCK_HEADER_SIZE + proto_compact_size(b->n_tx);
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *bt = &b->txs[i];
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(bt, &w);
		check(w.err == 0 && w.len == bt->size, "tx size");
		total += w.len;
		size_t off;
		int err = proto_tx_decode_buf(w.buf, w.len, &tx, &off);
		check(err == 0, "block tx rejected by the standalone decoder");
		check(tx.n_in == bt->n_in && tx.n_out == bt->n_out && tx.size == bt->size &&
		          tx.stripped_size == bt->stripped_size && tx.blob_len == bt->blob_len &&
		          tx.has_witness == bt->has_witness && tx.version == bt->version &&
		          tx.locktime == bt->locktime,
		      "block tx differs from standalone decode");
		check(memcmp(tx.blob, bt->blob, tx.blob_len) == 0, "blob differs");
		for (uint32_t k = 0; k < tx.n_in; k++) {
			const struct proto_txin *x = &tx.vin[k], *y = &bt->vin[k];
			check(x->script_off == y->script_off && x->script_len == y->script_len &&
			          x->wit_off == y->wit_off && x->wit_len == y->wit_len &&
			          x->wit_count == y->wit_count && x->sequence == y->sequence &&
			          x->prevout.n == y->prevout.n,
			      "input differs");
		}
		for (uint32_t k = 0; k < tx.n_out; k++) {
			const struct proto_txout *x = &tx.vout[k], *y = &bt->vout[k];
			check(x->script_off == y->script_off && x->script_len == y->script_len &&
			          x->value == y->value,
			      "output differs");
		}
		check(memcmp(proto_tx_wtxid(&tx)->b, proto_tx_wtxid(bt)->b, 32) == 0,
		      "wtxid differs");
		proto_writer_release(&w);
	}
	check(total == b->size, "block size");
	proto_tx_release(&tx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proto_block reused;
	size_t off = SIZE_MAX;

	int err = proto_block_decode(data, size, &reused, &off);
	check(err <= 0 && err >= PROTO_ERR__MIN, "error code out of range");
	if (err) {
		check(off <= size, "error offset outside the input");
		check(reused.n_tx == 0, "block not emptied on error");
		return 0;
	}
	check(reused.size == size, "size field");

	struct proto_hash root;
	bool mutated;
	check(proto_block_merkle_root(&reused, &root, &mutated) == 0, "merkle root");
	check(proto_block_witness_merkle_root(&reused, &root) == 0, "witness merkle root");
	int ci = proto_block_witness_commitment_index(&reused);
	check(ci >= -1 && (reused.n_tx == 0 || ci < (int64_t)reused.txs[0].n_out),
	      "commitment index");
	check(proto_block_weight(&reused) >= 4 * (PROTO_BLOCK_HEADER_SIZE + 1), "weight");
	check_txs(&reused);

	size_t len;
	uint8_t *enc = encode(&reused, &len);
	check(len == size && memcmp(enc, data, size) == 0, "re-encoding differs from the input");

	struct proto_block fresh;
	proto_block_init(&fresh);
	check(proto_block_decode(enc, len, &fresh, NULL) == 0, "encoding does not decode");
	size_t len2;
	uint8_t *enc2 = encode(&fresh, &len2);
	check(len2 == len && memcmp(enc2, enc, len) == 0, "second encoding differs");
	xfree(enc2);
	xfree(enc);
	proto_block_release(&fresh);
	return 0;
}
