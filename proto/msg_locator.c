/*
 * proto/msg_locator.c: getheaders and getblocks (one wire format).
 *
 *   version u32le | count CompactSize (<= PROTO_MAX_LOCATOR) |
 *   count * hash[32] | stop hash[32]
 *
 * The codec accepts btcd's 500 hashes so a well-formed but long locator
 * decodes; the handler enforces Core's 101 (PROTO_MAX_LOCATOR_HANDLER) and
 * decides what a longer one costs the peer.
 */
#include "proto/proto.h"

int proto_locator_decode(struct proto_reader *r, struct proto_locator *l)
{
	uint32_t n;
	l->n = 0;
	int err = proto_read_u32le(r, &l->version);
	if (err)
		return err;
	const uint8_t *count_at = r->p;
	err = proto_read_count(r, PROTO_MAX_LOCATOR, 32, &n);
	if (err)
		return err;
	/* The stop hash must fit too, or the allocation below is for nothing. */
	if (proto_reader_left(r) - (size_t)n * 32 < 32) {
		r->p = count_at;
		return PROTO_ETRUNC;
	}
	if (n > l->cap) {
		/* Fresh storage, not realloc: the old hashes are dead. */
		struct proto_hash *h = xreallocarray(NULL, n, sizeof(*h));
		if (!h) {
			r->p = count_at;
			return PROTO_ENOMEM;
		}
		xfree(l->hashes);
		l->hashes = h;
		l->cap = n;
	}
	/* Hash by hash rather than one memcpy: glibc copies a block this size
	 * with `rep movsb`, which runs ~25x slower when source and destination
	 * sit a few bytes apart modulo 4 KiB (measured: 4.6 us instead of
	 * 0.2 us for 500 hashes). The loop costs ~0.3 us whatever the layout. */
	for (uint32_t i = 0; i < n; i++)
		memcpy(l->hashes[i].b, r->p + (size_t)i * 32, 32);
	r->p += (size_t)n * 32;
	memcpy(l->stop.b, r->p, 32);
	r->p += 32;
	l->n = n;
	return 0;
}

void proto_locator_encode(const struct proto_locator *l, struct proto_writer *w)
{
	proto_write_u32le(w, l->version);
	proto_write_compact(w, l->n);
	if (proto_writer_reserve(w, (size_t)l->n * 32 + 32))
		return;
	/* Hash by hash, for the same reason as the decoder. */
	for (uint32_t i = 0; i < l->n; i++)
		proto_write_hash(w, &l->hashes[i]);
	proto_write_hash(w, &l->stop);
}

void proto_locator_release(struct proto_locator *l)
{
	xfree(l->hashes);
	l->hashes = NULL;
	l->n = l->cap = 0;
}
