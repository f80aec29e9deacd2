/*
 * base/hset.c: the bounded rolling set and the fingerprint map.
 *
 * Keys are already uniformly distributed (salted SipHash), so the low
 * bits index the table directly. Key 0 is the empty-slot marker; a real
 * key of 0 is stored as 1 (one more 2^-64 collision, harmless).
 */
#include "base/hset.h"

#include <string.h>

#include "base/alloc.h"

/* First table: 64 slots, 512 bytes. */
#define HSET_MIN_SLOTS 64u

static inline uint64_t norm(uint64_t key)
{
	return key ? key : 1;
}

void hset_init(struct hset *s, uint32_t max_entries)
{
	memset(s, 0, sizeof(*s));
	s->per_gen = max_entries / 2 ? max_entries / 2 : 1;
}

void hset_release(struct hset *s)
{
	for (int i = 0; i < 2; i++) {
		xfree(s->gen[i].slots);
		s->gen[i].slots = NULL;
		s->gen[i].mask = 0;
		s->gen[i].n = 0;
	}
	s->cur = 0;
}

static bool gen_contains(const struct hset_gen *g, uint64_t key)
{
	if (!g->slots)
		return false;
	for (uint32_t i = (uint32_t)key & g->mask;; i = (i + 1) & g->mask) {
		if (g->slots[i] == key)
			return true;
		if (!g->slots[i])
			return false;
	}
}

static void gen_put(struct hset_gen *g, uint64_t key)
{
	uint32_t i = (uint32_t)key & g->mask;
	while (g->slots[i])
		i = (i + 1) & g->mask;
	g->slots[i] = key;
	g->n++;
}

/* Keep the load at most 1/2 so probes stay short. A generation holds at
 * most per_gen keys, so doubling stops by itself at 2 * per_gen slots. */
static int gen_reserve(struct hset_gen *g)
{
	uint32_t slots = g->slots ? g->mask + 1 : 0;
	if ((uint64_t)(g->n + 1) * 2 <= slots)
		return 0;
	uint32_t ns = slots ? slots * 2 : HSET_MIN_SLOTS;
	if (ns < slots)
		return -1;
	uint64_t *t = xcalloc(ns, sizeof(*t));
	if (!t)
		return -1;
	struct hset_gen old = *g;
	g->slots = t;
	g->mask = ns - 1;
	g->n = 0;
	for (uint32_t i = 0; i < slots; i++) {
		if (old.slots[i])
			gen_put(g, old.slots[i]);
	}
	xfree(old.slots);
	return 0;
}

int hset_insert(struct hset *s, uint64_t key)
{
	key = norm(key);
	if (gen_contains(&s->gen[0], key) || gen_contains(&s->gen[1], key))
		return 1;
	struct hset_gen *g = &s->gen[s->cur];
	if (g->n >= s->per_gen) {
		/* Roll over: the older generation is forgotten at once. Its
		 * table is kept (cleared) because it will fill again. */
		s->cur ^= 1;
		g = &s->gen[s->cur];
		if (g->slots)
			memset(g->slots, 0, ((size_t)g->mask + 1) * sizeof(*g->slots));
		g->n = 0;
	}
	if (gen_reserve(g))
		return -1;
	gen_put(g, key);
	return 0;
}

bool hset_contains(const struct hset *s, uint64_t key)
{
	key = norm(key);
	return gen_contains(&s->gen[0], key) || gen_contains(&s->gen[1], key);
}

size_t hset_count(const struct hset *s)
{
	return (size_t)s->gen[0].n + s->gen[1].n;
}

size_t hset_bytes(const struct hset *s)
{
	size_t b = 0;
	for (int i = 0; i < 2; i++) {
		if (s->gen[i].slots)
			b += ((size_t)s->gen[i].mask + 1) * sizeof(uint64_t);
	}
	return b;
}

/* ---- hmap ---------------------------------------------------------- */

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap_release(struct hmap *m)
{
	xfree(m->keys);
	xfree(m->vals);
	hmap_init(m);
}

static void map_place(struct hmap *m, uint64_t key, uint32_t val)
{
	uint32_t i = (uint32_t)key & m->mask;
	while (m->keys[i])
		i = (i + 1) & m->mask;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

static int map_grow(struct hmap *m)
{
	uint32_t slots = m->keys ? m->mask + 1 : 0;
	uint32_t ns = slots ? slots * 2 : HSET_MIN_SLOTS;
	if (ns < slots)
		return -1;
	uint64_t *k = xcalloc(ns, sizeof(*k));
	uint32_t *v = xcalloc(ns, sizeof(*v));
	if (!k || !v) {
		xfree(k);
		xfree(v);
		return -1;
	}
	uint64_t *ok = m->keys;
	uint32_t *ov = m->vals;
	m->keys = k;
	m->vals = v;
	m->mask = ns - 1;
	m->n = 0;
	for (uint32_t i = 0; i < slots; i++) {
		if (ok[i])
			map_place(m, ok[i], ov[i]);
	}
	xfree(ok);
	xfree(ov);
	return 0;
}

static bool map_find(const struct hmap *m, uint64_t key, uint32_t *slot)
{
	if (!m->keys)
		return false;
	for (uint32_t i = (uint32_t)key & m->mask;; i = (i + 1) & m->mask) {
		if (m->keys[i] == key) {
			*slot = i;
			return true;
		}
		if (!m->keys[i])
			return false;
	}
}

int hmap_put(struct hmap *m, uint64_t key, uint32_t val)
{
	key = norm(key);
	uint32_t i;
	if (map_find(m, key, &i)) {
		m->vals[i] = val;
		return 0;
	}
	if (!m->keys || (uint64_t)(m->n + 1) * 2 > (uint64_t)m->mask + 1) {
		if (map_grow(m))
			return -1;
	}
	map_place(m, key, val);
	return 0;
}

bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *val)
{
	uint32_t i;
	if (!map_find(m, norm(key), &i))
		return false;
	*val = m->vals[i];
	return true;
}

bool hmap_del(struct hmap *m, uint64_t key)
{
	uint32_t i;
	if (!map_find(m, norm(key), &i))
		return false;
	/* Backward-shift: pull later members of the probe run into the hole
	 * when their home slot is at or before it, so lookups never need a
	 * tombstone. */
	uint32_t hole = i;
	for (uint32_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
		uint32_t home = (uint32_t)m->keys[j] & m->mask;
		/* Distance from home to j versus from home to the hole, mod size. */
		if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
			m->keys[hole] = m->keys[j];
			m->vals[hole] = m->vals[j];
			hole = j;
		}
	}
	m->keys[hole] = 0;
	m->vals[hole] = 0;
	m->n--;
	return true;
}

size_t hmap_bytes(const struct hmap *m)
{
	return m->keys ? ((size_t)m->mask + 1) * (sizeof(uint64_t) + sizeof(uint32_t)) : 0;
}
