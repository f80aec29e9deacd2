/*
 * proto/msg_cfilter.c: BIP157's six messages (layouts in
 * proto/msg_cfilter.h). The requests are fixed-size; the answers carry a
 * filter or a list of hashes whose length is checked against the bytes
 * left before any storage grows, so a message never costs more memory
 * than its own size.
 */
#include "proto/proto.h"

int proto_getcfilters_decode(struct proto_reader *r, struct proto_getcfilters *g)
{
	int err;
	if ((err = proto_read_u8(r, &g->filter_type)) ||
	    (err = proto_read_u32le(r, &g->start_height)) ||
	    (err = proto_read_hash(r, &g->stop_hash)))
		return err;
	return 0;
}

void proto_getcfilters_encode(const struct proto_getcfilters *g, struct proto_writer *w)
{
	proto_write_u8(w, g->filter_type);
	proto_write_u32le(w, g->start_height);
	proto_write_hash(w, &g->stop_hash);
}

int proto_getcfcheckpt_decode(struct proto_reader *r, struct proto_getcfcheckpt *g)
{
	int err;
	if ((err = proto_read_u8(r, &g->filter_type)) || (err = proto_read_hash(r, &g->stop_hash)))
		return err;
	return 0;
}

void proto_getcfcheckpt_encode(const struct proto_getcfcheckpt *g, struct proto_writer *w)
{
	proto_write_u8(w, g->filter_type);
	proto_write_hash(w, &g->stop_hash);
}

int proto_cfilter_decode(struct proto_reader *r, struct proto_cfilter *f)
{
	const uint8_t *data;
	uint32_t len;
	int err;
	f->len = 0;
	if ((err = proto_read_u8(r, &f->filter_type)) || (err = proto_read_hash(r, &f->block_hash)))
		return err;
	const uint8_t *len_at = r->p;
	/* The length is checked against the bytes left before the copy. */
	if ((err = proto_read_varspan(r, &data, &len)))
		return err;
	if (len > f->cap) {
		uint8_t *b = xmalloc(len);
		if (!b) {
			r->p = len_at;
			return PROTO_ENOMEM;
		}
		xfree(f->filter);
		f->filter = b;
		f->cap = len;
	}
	if (len)
		memcpy(f->filter, data, len);
	f->len = len;
	return 0;
}

void proto_cfilter_encode(const struct proto_cfilter *f, struct proto_writer *w)
{
	proto_write_u8(w, f->filter_type);
	proto_write_hash(w, &f->block_hash);
	proto_write_compact(w, f->len);
	proto_write_bytes(w, f->filter, f->len);
}

void proto_cfilter_release(struct proto_cfilter *f)
{
	xfree(f->filter);
	f->filter = NULL;
	f->len = f->cap = 0;
}

int proto_cfhashes_reserve(struct proto_cfhashes *h, uint32_t n)
{
	if (n <= h->cap)
		return 0;
	struct proto_hash *v = xreallocarray(h->hashes, n, sizeof(*v));
	if (!v)
		return PROTO_ENOMEM;
	h->hashes = v;
	h->cap = n;
	return 0;
}

/* The count and the hashes of cfheaders and cfcheckpt. */
static int read_hashes(struct proto_reader *r, uint32_t limit, struct proto_cfhashes *h)
{
	uint32_t n;
	const uint8_t *count_at = r->p;
	int err = proto_read_count(r, limit, 32, &n);
	if (err)
		return err;
	if (proto_cfhashes_reserve(h, n)) {
		r->p = count_at;
		return PROTO_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(h->hashes[i].b, r->p + (size_t)i * 32, 32);
	r->p += (size_t)n * 32;
	h->n = n;
	return 0;
}

static void write_hashes(const struct proto_cfhashes *h, struct proto_writer *w)
{
	proto_write_compact(w, h->n);
	if (proto_writer_reserve(w, (size_t)h->n * 32))
		return;
	for (uint32_t i = 0; i < h->n; i++)
		proto_write_hash(w, &h->hashes[i]);
}

int proto_cfheaders_decode(struct proto_reader *r, struct proto_cfhashes *h)
{
	int err;
	h->n = 0;
	if ((err = proto_read_u8(r, &h->filter_type)) ||
	    (err = proto_read_hash(r, &h->stop_hash)) ||
	    (err = proto_read_hash(r, &h->prev_header)))
		return err;
	return read_hashes(r, PROTO_MAX_GETCFHEADERS, h);
}

void proto_cfheaders_encode(const struct proto_cfhashes *h, struct proto_writer *w)
{
	proto_write_u8(w, h->filter_type);
	proto_write_hash(w, &h->stop_hash);
	proto_write_hash(w, &h->prev_header);
	write_hashes(h, w);
}

int proto_cfcheckpt_decode(struct proto_reader *r, struct proto_cfhashes *h)
{
	int err;
	h->n = 0;
	memset(&h->prev_header, 0, sizeof(h->prev_header));
	if ((err = proto_read_u8(r, &h->filter_type)) || (err = proto_read_hash(r, &h->stop_hash)))
		return err;
	return read_hashes(r, PROTO_MAX_CFCHECKPT, h);
}

void proto_cfcheckpt_encode(const struct proto_cfhashes *h, struct proto_writer *w)
{
	proto_write_u8(w, h->filter_type);
	proto_write_hash(w, &h->stop_hash);
	write_hashes(h, w);
}

void proto_cfhashes_release(struct proto_cfhashes *h)
{
	xfree(h->hashes);
	h->hashes = NULL;
	h->n = h->cap = 0;
}
