/* proto/cursor.c: the out-of-line parts of the reader and writer, and hex. */
#include "proto/proto.h"

int proto_read_count(struct proto_reader *r, uint32_t limit, size_t min_elem, uint32_t *n)
{
	const uint8_t *save = r->p;
	uint64_t v;
	int err = proto_read_compact(r, PROTO_MAX_SIZE, &v);
	if (err)
		return err == PROTO_EOVERSIZE ? PROTO_ECOUNT : err;
	/* Check against what the remaining bytes can hold before any caller
	 * allocates: a count of 2^32-1 in a 10-byte payload fails here. */
	if (v > limit || (min_elem && v > proto_reader_left(r) / min_elem)) {
		r->p = save;
		return v > limit ? PROTO_ECOUNT : PROTO_ETRUNC;
	}
	*n = (uint32_t)v;
	return 0;
}

int proto_read_varstr(struct proto_reader *r, size_t max_len, char *out, size_t cap, size_t *len)
{
	const uint8_t *save = r->p;
	uint64_t n;
	int err = proto_read_compact(r, PROTO_MAX_SIZE, &n);
	if (err)
		return err;
	if (n > max_len || n >= cap) {
		r->p = save;
		return PROTO_EOVERSIZE;
	}
	if (proto_reader_left(r) < n) {
		r->p = save;
		return PROTO_ETRUNC;
	}
	memcpy(out, r->p, (size_t)n);
	out[n] = 0;
	r->p += n;
	*len = (size_t)n;
	return 0;
}

void proto_writer_init_fixed(struct proto_writer *w, void *buf, size_t cap)
{
	w->buf = buf;
	w->len = 0;
	w->cap = cap;
	w->err = 0;
	w->growable = false;
}

void proto_writer_init(struct proto_writer *w)
{
	w->buf = NULL;
	w->len = 0;
	w->cap = 0;
	w->err = 0;
	w->growable = true;
}

void proto_writer_release(struct proto_writer *w)
{
	if (w->growable)
		xfree(w->buf);
	proto_writer_init(w);
}

int proto_writer_reserve(struct proto_writer *w, size_t n)
{
	if (w->err)
		return w->err;
	if (w->cap - w->len >= n)
		return 0;
	if (!w->growable)
		return w->err = PROTO_ENOSPACE;
	size_t need;
	if (base_add_size(w->len, n, &need))
		return w->err = PROTO_ENOMEM;
	size_t cap = w->cap ? w->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	uint8_t *p = xrealloc(w->buf, cap);
	if (!p)
		return w->err = PROTO_ENOMEM;
	w->buf = p;
	w->cap = cap;
	return 0;
}

static const char hexdigits[] = "0123456789abcdef";

void proto_hex_encode(const uint8_t *data, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hexdigits[data[i] >> 4];
		out[2 * i + 1] = hexdigits[data[i] & 15];
	}
	out[2 * len] = 0;
}

int proto_hex_decode(const char *hex, size_t hexlen, uint8_t *out, size_t cap, size_t *len)
{
	if (hexlen % 2)
		return PROTO_EHEX;
	if (hexlen / 2 > cap)
		return PROTO_ENOSPACE;
	for (size_t i = 0; i < hexlen / 2; i++) {
		int hi = proto_hex_digit(hex[2 * i]), lo = proto_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return PROTO_EHEX;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = hexlen / 2;
	return 0;
}

void proto_hash_to_hex(const struct proto_hash *h, char out[65])
{
	for (size_t i = 0; i < 32; i++) {
		uint8_t b = h->b[31 - i];
		out[2 * i] = hexdigits[b >> 4];
		out[2 * i + 1] = hexdigits[b & 15];
	}
	out[64] = 0;
}

int proto_hash_from_hex(const char *hex, struct proto_hash *h)
{
	uint8_t tmp[32];
	size_t n;
	if (strlen(hex) != 64 || proto_hex_decode(hex, 64, tmp, 32, &n))
		return PROTO_EHEX;
	for (size_t i = 0; i < 32; i++)
		h->b[i] = tmp[31 - i];
	return 0;
}
