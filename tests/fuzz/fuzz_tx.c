/*
 * tests/fuzz/fuzz_tx.c: the transaction decoder.
 *
 * Whatever decodes must encode to exactly the input (the codec keeps every
 * byte it accepts), decode again from that encoding, and encode the same
 * way twice. The sizes, the txid (SHA-256d of the stripped encoding) and
 * the witness iterator must agree with the encoding. Errors must be
 * documented codes with an offset inside the input, and leave the tx
 * empty. One tx object is reused across inputs, so the storage-reuse path
 * is fuzzed too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_tx: invariant broken: %s\n", what);
		abort();
	}
}

/* The witness iterator must walk exactly wit_count items over wit_len bytes. */
static void check_witness(const struct proto_tx *tx)
{
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct proto_txin *in = &tx->vin[i];
		struct proto_witness_iter it;
		struct proto_span item;
		uint32_t n = 0;
		size_t bytes = 0;
		proto_witness_iter_init(&it, tx, in);
		while (proto_witness_iter_next(&it, &item)) {
			n++;
			bytes += proto_compact_size(item.len) + item.len;
		}
		check(n == in->wit_count, "witness item count");
		check(bytes == in->wit_len, "witness span length");
	}
}

/* Encode with and without witness; returns the full encoding (caller frees). */
static uint8_t *encode(const struct proto_tx *tx, size_t *len)
{
	struct proto_writer w, ws;
	proto_writer_init(&w);
	proto_writer_init(&ws);
	proto_tx_encode(tx, &w);
	proto_tx_encode_stripped(tx, &ws);
	check(w.err == 0 && ws.err == 0, "encode failed");
	check(w.len == tx->size, "size field");
	check(ws.len == tx->stripped_size, "stripped size field");
	check(proto_tx_serialized_size(tx, true) == w.len, "serialized size");
	uint8_t h[32];
	proto_sha256d(ws.buf, ws.len, h);
	struct proto_tx *m = (struct proto_tx *)tx;
	m->ids_valid = m->txid_valid = false;
	check(memcmp(proto_tx_txid(m)->b, h, 32) == 0, "txid");
	proto_sha256d(w.buf, w.len, h);
	check(memcmp(proto_tx_wtxid(m)->b, h, 32) == 0, "wtxid");
	proto_writer_release(&ws);
	*len = w.len;
	return w.buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proto_tx reused;
	struct proto_tx fresh;
	size_t off = SIZE_MAX;

	int err = proto_tx_decode_buf(data, size, &reused, &off);
	check(err <= 0 && err >= PROTO_ERR__MIN, "error code out of range");
	if (err) {
		check(off <= size, "error offset outside the input");
		check(reused.n_in == 0 && reused.n_out == 0, "tx not emptied on error");
	}

	/* The stream decoder agrees and stops at the same place. */
	proto_tx_init(&fresh);
	struct proto_reader r;
	proto_reader_init(&r, data, size);
	int err2 = proto_tx_decode(&r, &fresh);
	if (!err)
		check(err2 == 0 && proto_reader_left(&r) == 0, "stream decode disagrees");
	else if (err != PROTO_ETRAILING)
		check(err2 == err, "stream decode error disagrees");
	else
		check(err2 == 0 && proto_reader_left(&r) > 0, "trailing bytes not seen");
	proto_tx_release(&fresh);
	if (err)
		return 0;

	check_witness(&reused);
	size_t len;
	uint8_t *enc = encode(&reused, &len);
	check(len == size && memcmp(enc, data, size) == 0, "re-encoding differs from the input");

	proto_tx_init(&fresh);
	err = proto_tx_decode_buf(enc, len, &fresh, NULL);
	check(err == 0, "encoding does not decode");
	size_t len2;
	uint8_t *enc2 = encode(&fresh, &len2);
	check(len2 == len && memcmp(enc, enc2, len) == 0, "second encoding differs");
	check(memcmp(fresh.txid.b, reused.txid.b, 32) == 0, "txid differs after round trip");
	xfree(enc2);
	xfree(enc);
	proto_tx_release(&fresh);
	return 0;
}
