/**
 * base/hset.h: two small hash containers keyed by 64-bit fingerprints.
 *
 * Keys are salted SipHash values (proto_siphash with the daemon's random
 * key), so a peer cannot aim collisions at a slot, and two different items
 * sharing a 64-bit fingerprint is a 2^-64 event that peerd accepts.
 *
 *   hset  a bounded "have I seen this?" set. It keeps two generations: new
 *         keys go into the current one; when that holds max/2 keys, the
 *         older generation is emptied and becomes current. So it always
 *         remembers at least the last max/2 keys and never more than max,
 *         and forgetting is O(1) per insert, never a scan (Core's rolling
 *         bloom filter, but exact). Tables start small and grow, and are
 *         allocated on the first insert: an idle owner costs nothing.
 *   hmap  fingerprint -> uint32 value, with deletion (linear probing with
 *         backward-shift delete, so no tombstones), growing by doubling.
 *
 * Both are owned by one thread (the loop thread); no locking.
 */
#ifndef PEERD_BASE_HSET_H
#define PEERD_BASE_HSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One generation: open addressing, 0 marks an empty slot. */
struct hset_gen {
	uint64_t *slots;
	uint32_t mask; /**< slot count - 1 (a power of two), 0 when unallocated */
	uint32_t n;
};

struct hset {
	struct hset_gen gen[2];
	uint32_t per_gen; /**< keys per generation before rolling over */
	uint8_t cur;
};

/** An empty set remembering about max_entries keys (at least 2). Allocates nothing. */
void hset_init(struct hset *s, uint32_t max_entries);
/** Free the tables; the set is empty and reusable. */
void hset_release(struct hset *s);
/**
 * Add a key. Returns 1 if it was already present, 0 if added, -1 when a
 * table could not grow (out of memory: the key is not remembered).
 */
int hset_insert(struct hset *s, uint64_t key);
/** Whether the key is remembered. */
bool hset_contains(const struct hset *s, uint64_t key);
/** Keys remembered now. */
size_t hset_count(const struct hset *s);
/** Bytes allocated for the tables. */
size_t hset_bytes(const struct hset *s);

struct hmap {
	uint64_t *keys; /**< 0 marks an empty slot */
	uint32_t *vals;
	uint32_t mask;
	uint32_t n;
};

/** An empty map; allocates nothing. */
void hmap_init(struct hmap *m);
void hmap_release(struct hmap *m);
/** Insert or replace. 0, or -1 when out of memory (the map is unchanged). */
int hmap_put(struct hmap *m, uint64_t key, uint32_t val);
/** Look up; true and *val when present. */
bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *val);
/** Remove; true when it was present. */
bool hmap_del(struct hmap *m, uint64_t key);
/** Bytes allocated. */
size_t hmap_bytes(const struct hmap *m);

#endif
