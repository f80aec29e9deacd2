/*
 * proto/msg_headers.c: the headers message.
 *
 *   count CompactSize (<= PROTO_MAX_HEADERS) |
 *   count * (block header[80] | tx count CompactSize)
 *
 * The tx count after each header is read and ignored, as Core does
 * (ReadCompactSize, so it must be canonical and <= PROTO_MAX_SIZE): every
 * node sends 0 there, and the encoder always writes 0.
 */
#include "proto/proto.h"

/* Header plus the smallest tx count. */
#define HEADERS_ENTRY_MIN (PROTO_BLOCK_HEADER_SIZE + 1u)

int proto_headers_decode(struct proto_reader *r, struct proto_headers *h)
{
	uint32_t n;
	h->n = 0;
	int err = proto_read_count(r, PROTO_MAX_HEADERS, HEADERS_ENTRY_MIN, &n);
	if (err)
		return err;
	if (n > h->cap) {
		/* Fresh storage, not realloc: the old headers are dead. */
		struct proto_block_header *v = xreallocarray(NULL, n, sizeof(*v));
		if (!v)
			return PROTO_ENOMEM;
		xfree(h->h);
		h->h = v;
		h->cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t txn;
		/* proto_read_count guaranteed 81 bytes per entry unless the tx
		 * counts are longer than one byte, so both reads stay checked. */
		err = proto_block_header_decode(r, &h->h[i]);
		if (err)
			return err;
		err = proto_read_compact(r, PROTO_MAX_SIZE, &txn);
		if (err)
			return err;
	}
	h->n = n;
	return 0;
}

void proto_headers_encode(const struct proto_headers *h, struct proto_writer *w)
{
	proto_write_compact(w, h->n);
	if (proto_writer_reserve(w, (size_t)h->n * HEADERS_ENTRY_MIN))
		return;
	for (uint32_t i = 0; i < h->n; i++) {
		proto_block_header_encode(&h->h[i], w);
		proto_write_u8(w, 0);
	}
}

void proto_headers_release(struct proto_headers *h)
{
	xfree(h->h);
	h->h = NULL;
	h->n = h->cap = 0;
}
