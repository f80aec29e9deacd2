/*
 * pool/arena.c: a job vector's arena, the chunks holding the bytes its
 * elements borrow (pool.h, "The arena", says why and for how long).
 *
 * A chunk is filled front to back by a bump pointer (pool_vec_arena_alloc,
 * inline in pool.h); this file is the slow path (a new chunk, or the newest
 * one started over) and the bookkeeping of references when the vec is
 * cleared, released or hands its jobs to a round.
 *
 * Growth policy: chunks of POOL_CHUNK_BYTES; a request larger than that
 * gets a chunk of exactly its size, put behind the newest so the newest
 * keeps filling. 64 KiB holds about 1,900 P2TR scripts: a block's 5,000
 * take three chunks, and a round of a few hundred jobs one. A vec keeps up
 * to POOL_VEC_SPARES chunks it no longer needs (512 KiB), so a vec refilled
 * block after block allocates nothing.
 */
#include "pool/internal.h"

static struct pool_chunk *chunk_new(size_t size)
{
	size_t bytes;
	if (base_add_size(sizeof(struct pool_chunk), size, &bytes))
		return NULL;
	struct pool_chunk *c = xmalloc(bytes);
	if (!c)
		return NULL;
	c->next = NULL;
	atomic_init(&c->refs, 1);
	c->size = size;
	return c;
}

/* Spare chunks on the vec's list, at most POOL_VEC_SPARES. */
static size_t spares(const struct pool_vec *v)
{
	size_t n = 0;
	for (const struct pool_chunk *c = v->spare; c; c = c->next)
		n++;
	return n;
}

/* Drop the vec's reference on `c`: a chunk nobody else holds becomes a
 * spare of the vec (if it is of the usual size and the vec has fewer than
 * POOL_VEC_SPARES) or is freed. */
static void drop_chunk(struct pool_vec *v, struct pool_chunk *c)
{
	if (!pool_chunk_unref(c))
		return;
	if (c->size == POOL_CHUNK_BYTES && spares(v) < POOL_VEC_SPARES) {
		c->next = v->spare;
		v->spare = c;
		return;
	}
	xfree(c);
}

void pool_vec_arena_free_spares(struct pool_vec *v)
{
	for (struct pool_chunk *c = v->spare, *next; c; c = next) {
		next = c->next;
		xfree(c);
	}
	v->spare = NULL;
}

/* Point the bump pointer at the free part of `c`, `used` bytes in. */
static void *use_chunk(struct pool_vec *v, struct pool_chunk *c, size_t used)
{
	v->arena_cur = c->bytes + used;
	v->arena_end = c->bytes + c->size;
	return c->bytes;
}

void *pool_vec_arena_grow(struct pool_vec *v, size_t n)
{
	struct pool_chunk *c = v->chunks;
	/* An empty vec whose newest chunk nobody else holds (no round took
	 * jobs pointing into it, or the round completed): start it over. */
	if (c && v->len == 0 && c->size >= n &&
	    atomic_load_explicit(&c->refs, memory_order_acquire) == 1)
		return use_chunk(v, c, n);
	if (n > POOL_CHUNK_BYTES) {
		struct pool_chunk *big = chunk_new(n);
		if (!big)
			return NULL;
		if (c) {
			/* Behind the newest, which keeps filling. */
			big->next = c->next;
			c->next = big;
			return big->bytes;
		}
		v->chunks = big;
		return use_chunk(v, big, n);
	}
	struct pool_chunk *nc = v->spare;
	if (nc) {
		v->spare = nc->next;
		atomic_store_explicit(&nc->refs, 1, memory_order_relaxed);
	} else if (!(nc = chunk_new(POOL_CHUNK_BYTES))) {
		return NULL;
	}
	nc->next = c;
	v->chunks = nc;
	return use_chunk(v, nc, n);
}

void pool_vec_arena_hand_over(struct pool_vec *v)
{
	struct pool_chunk *c = v->chunks;
	if (!c)
		return;
	for (struct pool_chunk *o = c->next, *next; o; o = next) {
		next = o->next;
		drop_chunk(v, o);
	}
	c->next = NULL;
}

/* The vec's elements are gone: drop the chunks of its list. With `keep`,
 * the newest stays, started over if nobody else holds it. */
void pool_vec_arena_reset(struct pool_vec *v, int keep)
{
	struct pool_chunk *c = v->chunks;
	if (!c)
		return;
	if (keep) {
		pool_vec_arena_hand_over(v);
		if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1)
			use_chunk(v, c, 0);
		return;
	}
	for (struct pool_chunk *next; c; c = next) {
		next = c->next;
		drop_chunk(v, c);
	}
	v->chunks = NULL;
	v->arena_cur = NULL;
	v->arena_end = NULL;
}

size_t pool_vec_arena_chunks(const struct pool_vec *v)
{
	size_t n = 0;
	for (const struct pool_chunk *c = v->chunks; c; c = c->next)
		n++;
	return n;
}
