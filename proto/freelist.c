/*
 * proto/freelist.c: the two global, capped, thread-safe buffer free lists.
 *
 * Each list is a stack of idle buffers behind one mutex. A get pops an idle
 * buffer (hit) or allocates a new one (miss); a put pushes the buffer back
 * unless the list already holds `capacity` idle buffers, in which case the
 * buffer is freed (dropped). So idle memory is bounded by capacity *
 * buf_size, while a burst can still borrow more.
 *
 * Lock order: each list has its own mutex; no code holds two.
 */
#include "proto/proto.h"

#include <pthread.h>

struct freelist {
	pthread_mutex_t mu;
	const char *name;
	size_t buf_size;
	/* All below guarded by mu. */
	size_t capacity;
	void **idle; /* stack of idle buffers, idle_cap slots */
	size_t n_idle;
	size_t idle_cap;
	size_t in_use;
	size_t high_water;
	uint64_t hits, misses, bypass, dropped;
};

static struct freelist lists[PROTO_FREELIST__COUNT] = {
    [PROTO_FREELIST_BINARY] = {PTHREAD_MUTEX_INITIALIZER, "binary", PROTO_BINARY_BUF_SIZE,
                               PROTO_BINARY_FREELIST_CAP, NULL, 0, 0, 0, 0, 0, 0, 0, 0},
    [PROTO_FREELIST_SCRIPT] = {PTHREAD_MUTEX_INITIALIZER, "script", PROTO_SCRIPT_BUF_SIZE,
                               PROTO_SCRIPT_FREELIST_CAP, NULL, 0, 0, 0, 0, 0, 0, 0, 0},
};

static struct freelist *list(enum proto_freelist_id id)
{
	return &lists[id < PROTO_FREELIST__COUNT ? id : PROTO_FREELIST_SCRIPT];
}

/* Grow the idle stack's slot array toward capacity; called with mu held.
 * Failure just means the buffer is dropped instead of kept. */
static bool idle_room(struct freelist *fl)
{
	/* Capacity first: after proto_freelist_configure lowers it, the slot
	 * array may still have room for more than the list may keep. */
	if (fl->n_idle >= fl->capacity)
		return false;
	if (fl->n_idle < fl->idle_cap)
		return true;
	size_t cap = fl->idle_cap ? fl->idle_cap * 2 : 64;
	if (cap > fl->capacity)
		cap = fl->capacity;
	void **p = xreallocarray(fl->idle, cap, sizeof(*p));
	if (!p)
		return false;
	fl->idle = p;
	fl->idle_cap = cap;
	return true;
}

void proto_freelist_configure(size_t binary_cap, size_t script_cap)
{
	size_t caps[PROTO_FREELIST__COUNT] = {binary_cap, script_cap};
	for (int i = 0; i < PROTO_FREELIST__COUNT; i++) {
		struct freelist *fl = &lists[i];
		if (!caps[i])
			continue;
		pthread_mutex_lock(&fl->mu);
		fl->capacity = caps[i];
		while (fl->n_idle > fl->capacity) {
			xfree(fl->idle[--fl->n_idle]);
			fl->dropped++;
		}
		pthread_mutex_unlock(&fl->mu);
	}
}

size_t proto_freelist_get_many(enum proto_freelist_id id, void **out, size_t n)
{
	struct freelist *fl = list(id);
	size_t got = 0;
	pthread_mutex_lock(&fl->mu);
	while (got < n && fl->n_idle)
		out[got++] = fl->idle[--fl->n_idle];
	fl->hits += got;
	fl->misses += n - got;
	fl->in_use += n;
	pthread_mutex_unlock(&fl->mu);
	/* Allocate misses outside the lock. */
	size_t filled = got;
	while (filled < n) {
		void *b = xmalloc(fl->buf_size);
		if (!b)
			break;
		out[filled++] = b;
	}
	pthread_mutex_lock(&fl->mu);
	fl->in_use -= n - filled;
	if (fl->in_use > fl->high_water)
		fl->high_water = fl->in_use;
	pthread_mutex_unlock(&fl->mu);
	return filled;
}

void *proto_freelist_get(enum proto_freelist_id id)
{
	void *b = NULL;
	return proto_freelist_get_many(id, &b, 1) ? b : NULL;
}

void proto_freelist_put_many(enum proto_freelist_id id, void *const *bufs, size_t n)
{
	struct freelist *fl = list(id);
	void *drop[64];
	size_t n_drop = 0;
	size_t i = 0;
	while (i < n) {
		pthread_mutex_lock(&fl->mu);
		for (; i < n && n_drop < 64; i++) {
			if (!bufs[i])
				continue;
			fl->in_use--;
			if (idle_room(fl)) {
				fl->idle[fl->n_idle++] = bufs[i];
			} else {
				fl->dropped++;
				drop[n_drop++] = bufs[i];
			}
		}
		pthread_mutex_unlock(&fl->mu);
		/* Free dropped buffers outside the lock. */
		for (size_t k = 0; k < n_drop; k++)
			xfree(drop[k]);
		n_drop = 0;
	}
}

void proto_freelist_put(enum proto_freelist_id id, void *buf)
{
	if (buf)
		proto_freelist_put_many(id, &buf, 1);
}

void proto_freelist_note_bypass(enum proto_freelist_id id)
{
	struct freelist *fl = list(id);
	pthread_mutex_lock(&fl->mu);
	fl->bypass++;
	pthread_mutex_unlock(&fl->mu);
}

void proto_freelist_stats(enum proto_freelist_id id, struct proto_freelist_stats *out)
{
	struct freelist *fl = list(id);
	pthread_mutex_lock(&fl->mu);
	*out = (struct proto_freelist_stats){
	    .name = fl->name,
	    .buf_size = fl->buf_size,
	    .capacity = fl->capacity,
	    .in_use = fl->in_use,
	    .free = fl->n_idle,
	    .high_water = fl->high_water,
	    .hits = fl->hits,
	    .misses = fl->misses,
	    .bypass = fl->bypass,
	    .dropped = fl->dropped,
	};
	pthread_mutex_unlock(&fl->mu);
}

void proto_freelist_drain(void)
{
	for (int i = 0; i < PROTO_FREELIST__COUNT; i++) {
		struct freelist *fl = &lists[i];
		pthread_mutex_lock(&fl->mu);
		while (fl->n_idle)
			xfree(fl->idle[--fl->n_idle]);
		xfree(fl->idle);
		fl->idle = NULL;
		fl->idle_cap = 0;
		pthread_mutex_unlock(&fl->mu);
	}
}
