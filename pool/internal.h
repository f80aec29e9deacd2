/*
 * pool/internal.h: what pool/'s files share and nobody else sees: the
 * arena's chunk and its reference count (arena.c), which the queue
 * (queue.c) holds for a round.
 */
#ifndef PEERD_POOL_INTERNAL_H
#define PEERD_POOL_INTERNAL_H

#include "pool/pool.h"

/*
 * A chunk of a vec's arena: a header and `size` bytes. `refs` counts its
 * holders: the vec whose list it is on, and each round that took jobs
 * which may point into it. Whoever drops the last reference frees it (or
 * keeps it as a spare). Atomic because a vec may be cleared on one thread
 * while the queue's controller completes a round on another.
 */
struct pool_chunk {
	/** Next older chunk in the vec's list; touched only by the vec's owner. */
	struct pool_chunk *next;
	/** Holders. */
	atomic_size_t refs;
	/** Bytes at `bytes`. */
	size_t size;
	/** The bytes. */
	uint8_t bytes[];
};

/** Take one more reference on `c`. */
static inline void pool_chunk_ref(struct pool_chunk *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

/**
 * Drop one reference; returns 1 when it was the last (the caller then frees
 * or recycles the chunk), else 0. Release/acquire, so what a holder read
 * happens before the next owner writes.
 */
static inline int pool_chunk_unref(struct pool_chunk *c)
{
	return atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1;
}

/**
 * The vec gives the round its chunks: every chunk of `v`'s list except the
 * newest leaves the list (the vec's references pass to the caller, which
 * must already hold one more each: see pool_queue_take_vec), and the
 * newest stays. The taken jobs then point only into chunks the round holds.
 */
void pool_vec_arena_hand_over(struct pool_vec *v);

/**
 * The vec's elements are gone: drop the vec's references on its chunks.
 * With `keep`, the newest stays on the list (its bytes are started over if
 * nobody else holds it); without, the list is emptied.
 */
void pool_vec_arena_reset(struct pool_vec *v, int keep);

/** Free the vec's spare chunks. */
void pool_vec_arena_free_spares(struct pool_vec *v);

#endif
