/*
 * tools/peertool_chaingen_queue.c: chaingen's wallet queues (struct
 * peertool_cg_queue): a FIFO of coins that pops from the front by default
 * and, for --grow-utxo, takes a coin from a random position, so spends land
 * all over an old UTXO set instead of always on its oldest end.
 */
#include <string.h>

#include "base/alloc.h"
#include "tools/peertool_chaingen.h"

int peertool_cgq_push(struct peertool_cg_queue *q, const struct peertool_cg_coin *c)
{
	if (q->len == q->cap) {
		/* Reclaim the consumed front before growing. */
		if (q->head > q->len / 2) {
			memmove(q->v, q->v + q->head, (q->len - q->head) * sizeof(*q->v));
			q->len -= q->head;
			q->head = 0;
		} else {
			size_t cap = q->cap ? q->cap * 2 : 64;
			struct peertool_cg_coin *v = xreallocarray(q->v, cap, sizeof(*v));
			if (!v)
				return -1;
			q->v = v;
			q->cap = cap;
		}
	}
	q->v[q->len++] = *c;
	return 0;
}

size_t peertool_cgq_size(const struct peertool_cg_queue *q)
{
	return q->len - q->head;
}

const struct peertool_cg_coin *peertool_cgq_front(const struct peertool_cg_queue *q)
{
	return peertool_cgq_size(q) ? &q->v[q->head] : NULL;
}

void peertool_cgq_pop(struct peertool_cg_queue *q)
{
	q->head++;
}

void peertool_cgq_unpop(struct peertool_cg_queue *q, const struct peertool_cg_coin *c)
{
	q->v[--q->head] = *c;
}

void peertool_cgq_take_at(struct peertool_cg_queue *q, size_t k, struct peertool_cg_coin *c)
{
	/* The front coin moves into the hole, so the pop below stays O(1) and
	 * an unpop puts the taken coin back at the front (the set is the same). */
	struct peertool_cg_coin *slot = &q->v[q->head + k];
	*c = *slot;
	*slot = q->v[q->head];
	q->head++;
}

void peertool_cgq_free(struct peertool_cg_queue *q)
{
	xfree(q->v);
	memset(q, 0, sizeof(*q));
}
