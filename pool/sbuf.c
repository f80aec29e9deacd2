/*
 * pool/sbuf.c: struct pool_sbuf, a byte string with 28 bytes inline.
 *
 * Most scripts a node checks are short (a P2WPKH scriptPubKey is 22 bytes,
 * P2TR 34), so keeping up to 28 bytes inside the struct saves an allocation
 * for most of them, as Bitcoin Core's prevector<28> does; a longer one a
 * job vector fills borrows its bytes from the vec's arena (arena.c), so it
 * costs no allocation either. The struct holds
 * no pointer into itself (pool.h says why that matters), so none of these
 * functions has to fix anything up after a move.
 */
#include "pool/pool.h"

/* Set the length, keeping the heap flag. */
static void sbuf_set_len(struct pool_sbuf *sb, size_t len)
{
	sb->u.in.hdr = (sb->u.in.hdr & POOL_SBUF_HEAP) | (uint32_t)len;
}

/* Switch to the heap form over `p` (cap bytes, already holding the data),
 * freeing the previous heap bytes if it owned any. */
static void sbuf_adopt(struct pool_sbuf *sb, uint8_t *p, size_t cap, size_t len)
{
	if (pool_sbuf_owns(sb))
		xfree(sb->u.heap.ptr);
	sb->u.heap.hdr = POOL_SBUF_HEAP | (uint32_t)len;
	sb->u.heap.cap = (uint32_t)cap;
	sb->u.heap.ptr = p;
}

int pool_sbuf_reserve(struct pool_sbuf *sb, size_t cap)
{
	if (cap <= pool_sbuf_capacity(sb))
		return 0;
	if (cap > POOL_SBUF_MAX)
		return POOL_EOVERFLOW;
	size_t len = pool_sbuf_len(sb);
	if (pool_sbuf_owns(sb)) {
		uint8_t *p = xrealloc(sb->u.heap.ptr, cap);
		if (!p)
			return POOL_ENOMEM;
		sb->u.heap.ptr = p;
		sb->u.heap.cap = (uint32_t)cap;
		return 0;
	}
	uint8_t *p = xmalloc(cap);
	if (!p)
		return POOL_ENOMEM;
	/* Copy the bytes (inline, or borrowed from an arena) out before the
	 * heap fields overwrite them. */
	if (len)
		memcpy(p, pool_sbuf_data(sb), len);
	sbuf_adopt(sb, p, cap, len);
	return 0;
}

int pool_sbuf_assign(struct pool_sbuf *sb, const uint8_t *data, size_t len)
{
	if (len > POOL_SBUF_MAX)
		return POOL_EOVERFLOW;
	if (len <= pool_sbuf_capacity(sb)) {
		if (len)
			memcpy(pool_sbuf_wdata(sb), data, len);
		sbuf_set_len(sb, len);
		return 0;
	}
	/* A fresh block rather than realloc: the old bytes are not wanted. */
	uint8_t *p = xmalloc(len);
	if (!p)
		return POOL_ENOMEM;
	memcpy(p, data, len);
	sbuf_adopt(sb, p, len, len);
	return 0;
}

int pool_sbuf_append(struct pool_sbuf *sb, const uint8_t *data, size_t len)
{
	size_t cur = pool_sbuf_len(sb), total;
	if (base_add_size(cur, len, &total) || total > POOL_SBUF_MAX)
		return POOL_EOVERFLOW;
	size_t cap = pool_sbuf_capacity(sb);
	if (total > cap) {
		/* Geometric growth, so appending byte by byte stays linear. */
		size_t want = cap > POOL_SBUF_MAX / 2 ? POOL_SBUF_MAX : 2 * cap;
		if (want < total)
			want = total;
		int err = pool_sbuf_reserve(sb, want);
		if (err)
			return err;
	}
	if (len)
		memcpy(pool_sbuf_wdata(sb) + cur, data, len);
	sbuf_set_len(sb, total);
	return 0;
}

int pool_sbuf_resize(struct pool_sbuf *sb, size_t len)
{
	size_t cur = pool_sbuf_len(sb);
	if (len > cur) {
		int err = pool_sbuf_reserve(sb, len);
		if (err)
			return err;
		memset(pool_sbuf_wdata(sb) + cur, 0, len - cur);
	}
	sbuf_set_len(sb, len);
	return 0;
}

int pool_sbuf_copy(struct pool_sbuf *dst, const struct pool_sbuf *src)
{
	require(dst != src);
	return pool_sbuf_assign(dst, pool_sbuf_data(src), pool_sbuf_len(src));
}
