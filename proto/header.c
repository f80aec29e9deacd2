/* proto/header.c: the 80-byte block header. */
#include "proto/proto.h"

int proto_block_header_decode(struct proto_reader *r, struct proto_block_header *h)
{
	if (proto_reader_left(r) < PROTO_BLOCK_HEADER_SIZE)
		return PROTO_ETRUNC;
	const uint8_t *p = r->p;
	h->version = (int32_t)proto_le32(p);
	memcpy(h->prev.b, p + 4, 32);
	memcpy(h->merkle_root.b, p + 36, 32);
	h->time = proto_le32(p + 68);
	h->bits = proto_le32(p + 72);
	h->nonce = proto_le32(p + 76);
	r->p += PROTO_BLOCK_HEADER_SIZE;
	return 0;
}

static void header_serialize(const struct proto_block_header *h,
                             uint8_t out[PROTO_BLOCK_HEADER_SIZE])
{
	proto_put_le32(out, (uint32_t)h->version);
	memcpy(out + 4, h->prev.b, 32);
	memcpy(out + 36, h->merkle_root.b, 32);
	proto_put_le32(out + 68, h->time);
	proto_put_le32(out + 72, h->bits);
	proto_put_le32(out + 76, h->nonce);
}

void proto_block_header_encode(const struct proto_block_header *h, struct proto_writer *w)
{
	uint8_t buf[PROTO_BLOCK_HEADER_SIZE];
	header_serialize(h, buf);
	proto_write_bytes(w, buf, sizeof(buf));
}

void proto_block_header_hash(const struct proto_block_header *h, struct proto_hash *out)
{
	uint8_t buf[PROTO_BLOCK_HEADER_SIZE];
	header_serialize(h, buf);
	proto_sha256d(buf, sizeof(buf), out->b);
}
