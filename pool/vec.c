/*
 * pool/vec.c: struct pool_vec, a growable array of memcpy-movable elements.
 *
 * Growth is one xrealloc of the whole array: glibc can often extend the
 * block in place, and when it cannot it moves the bytes with one memcpy.
 * That is only correct because an element is valid after memcpy (see the
 * glossary in pool.h); a vector of self-referencing elements would have to
 * allocate a new array and copy element by element, which is exactly the
 * cost this design avoids (bench: JobVecFill*DeepCopy).
 */
#include "pool/internal.h"

#include <stdint.h>

/* The first allocation holds this many elements, so small vectors do not
 * reallocate at 1, 2 and 4. */
#define VEC_MIN_CAP 8u

void pool_vec_init(struct pool_vec *v, size_t elem_size)
{
	require(elem_size > 0);
	v->data = NULL;
	v->len = 0;
	v->cap = 0;
	v->elem_size = elem_size;
	v->arena_cur = NULL;
	v->arena_end = NULL;
	v->chunks = NULL;
	v->spare = NULL;
}

/* Reallocate to exactly `cap` elements (cap >= len). */
static int vec_realloc(struct pool_vec *v, size_t cap)
{
	size_t bytes;
	if (base_mul_size(cap, v->elem_size, &bytes))
		return POOL_EOVERFLOW;
	uint8_t *p = xrealloc(v->data, bytes);
	if (!p)
		return POOL_ENOMEM;
	v->data = p;
	v->cap = cap;
	return 0;
}

int pool_vec_reserve(struct pool_vec *v, size_t cap)
{
	if (cap <= v->cap)
		return 0;
	return vec_realloc(v, cap);
}

int pool_vec_grow(struct pool_vec *v, size_t extra)
{
	size_t need;
	if (base_add_size(v->len, extra, &need))
		return POOL_EOVERFLOW;
	if (need <= v->cap)
		return 0;
	/* Double, but at least VEC_MIN_CAP and at least what is needed. When
	 * doubling would overflow the byte count, settle for exactly `need`. */
	size_t cap = v->cap > SIZE_MAX / 2 ? need : v->cap * 2;
	if (cap < VEC_MIN_CAP)
		cap = VEC_MIN_CAP;
	if (cap < need)
		cap = need;
	int err = vec_realloc(v, cap);
	if (err == POOL_EOVERFLOW && cap > need)
		err = vec_realloc(v, need);
	return err;
}

int pool_vec_append(struct pool_vec *v, const void *elems, size_t n)
{
	if (n == 0)
		return 0;
	int err = pool_vec_grow(v, n);
	if (err)
		return err;
	/* No overflow: grow checked (len + n) * elem_size. */
	memcpy(v->data + v->len * v->elem_size, elems, n * v->elem_size);
	v->len += n;
	return 0;
}

void pool_vec_truncate(struct pool_vec *v, size_t len, pool_release_fn release, void *arg)
{
	if (len >= v->len)
		return;
	if (release)
		release(v->data + len * v->elem_size, v->len - len, arg);
	v->len = len;
}

void pool_vec_clear(struct pool_vec *v, pool_release_fn release, void *arg)
{
	pool_vec_truncate(v, 0, release, arg);
	pool_vec_arena_reset(v, 1);
}

void pool_vec_release(struct pool_vec *v, pool_release_fn release, void *arg)
{
	pool_vec_truncate(v, 0, release, arg);
	pool_vec_arena_reset(v, 0);
	pool_vec_arena_free_spares(v);
	xfree(v->data);
	v->data = NULL;
	v->cap = 0;
}

void *pool_vec_take(struct pool_vec *v, size_t *len)
{
	void *data = v->data;
	*len = v->len;
	v->data = NULL;
	v->len = 0;
	v->cap = 0;
	return data;
}
