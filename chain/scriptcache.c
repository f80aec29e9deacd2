/*
 * chain/scriptcache.c: the script-execution cache (Core's
 * m_script_execution_cache): which transactions' scripts all passed under
 * which flags, so ConnectBlock can skip the script checks of transactions
 * the mempool already verified.
 *
 * A key is the first 16 bytes of SHA-256(salt | wtxid | flags) with a
 * 32-byte salt from libsodium's randombytes (via proto_random): nobody
 * outside can make two transactions share a slot on purpose, and a false
 * hit needs a 128-bit collision. Keys live in a 4-way set-associative
 * table of 16-byte slots (Core uses a cuckoo cache of 32-byte hashes): a
 * bucket is one cache line, an insert into a full bucket overwrites a way
 * chosen by the key, so memory is fixed at creation. ConnectBlock erases
 * what it used (as Core: a mined transaction will not be checked again).
 *
 * Threads: the chain's thread only.
 */
#include <string.h>

#include "chain/internal.h"

#define SC_WAYS 4u
#define SC_KEY  16u

struct chain_script_cache {
	uint8_t salt[32];
	uint8_t (*slots)[SC_KEY]; /* n_buckets * SC_WAYS keys; all zero is empty */
	size_t n_buckets;         /* a power of two */
	uint64_t entries, hits, misses;
};

struct chain_script_cache *chain_script_cache_new(size_t bytes)
{
	struct chain_script_cache *sc = xcalloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	size_t buckets = 1;
	while (buckets * 2 * SC_WAYS * SC_KEY <= bytes)
		buckets *= 2;
	sc->slots = xcalloc(buckets * SC_WAYS, SC_KEY);
	if (!sc->slots) {
		xfree(sc);
		return NULL;
	}
	sc->n_buckets = buckets;
	proto_random(sc->salt, sizeof(sc->salt));
	return sc;
}

void chain_script_cache_free(struct chain_script_cache *sc)
{
	if (!sc)
		return;
	xfree(sc->slots);
	xfree(sc);
}

static void make_key(const struct chain_script_cache *sc, const struct proto_hash *wtxid,
                     uint32_t flags, uint8_t key[SC_KEY], size_t *bucket)
{
	struct proto_sha256 h;
	uint8_t out[32], f[4];
	proto_put_le32(f, flags);
	proto_sha256_init(&h);
	proto_sha256_update(&h, sc->salt, sizeof(sc->salt));
	proto_sha256_update(&h, wtxid->b, 32);
	proto_sha256_update(&h, f, sizeof(f));
	proto_sha256_final(&h, out);
	memcpy(key, out, SC_KEY);
	key[0] |= 1; /* never all zero: that marks an empty slot */
	uint64_t b;
	memcpy(&b, out + SC_KEY, sizeof(b));
	*bucket = (size_t)b & (sc->n_buckets - 1);
}

void chain_script_cache_add(struct chain_script_cache *sc, const struct proto_hash *wtxid,
                            uint32_t flags)
{
	uint8_t key[SC_KEY];
	size_t b;
	make_key(sc, wtxid, flags, key, &b);
	uint8_t(*way)[SC_KEY] = &sc->slots[b * SC_WAYS];
	size_t free_way = SC_WAYS;
	for (size_t i = 0; i < SC_WAYS; i++) {
		if (!memcmp(way[i], key, SC_KEY))
			return;
		if (free_way == SC_WAYS && way[i][0] == 0)
			free_way = i;
	}
	if (free_way == SC_WAYS)
		free_way = key[1] % SC_WAYS; /* full: overwrite one */
	else
		sc->entries++;
	memcpy(way[free_way], key, SC_KEY);
}

bool chain_script_cache_has(struct chain_script_cache *sc, const struct proto_hash *wtxid,
                            uint32_t flags, bool erase, bool count)
{
	uint8_t key[SC_KEY];
	size_t b;
	make_key(sc, wtxid, flags, key, &b);
	uint8_t(*way)[SC_KEY] = &sc->slots[b * SC_WAYS];
	for (size_t i = 0; i < SC_WAYS; i++) {
		if (!memcmp(way[i], key, SC_KEY)) {
			if (erase) {
				memset(way[i], 0, SC_KEY);
				sc->entries--;
			}
			if (count)
				sc->hits++;
			return true;
		}
	}
	if (count)
		sc->misses++;
	return false;
}

void chain_script_cache_counters(const struct chain_script_cache *sc, uint64_t *entries,
                                 uint64_t *capacity, uint64_t *hits, uint64_t *misses)
{
	*entries = sc->entries;
	*capacity = (uint64_t)sc->n_buckets * SC_WAYS;
	*hits = sc->hits;
	*misses = sc->misses;
}

bool chain_script_cache_is_empty(const struct chain_script_cache *sc)
{
	return sc->entries == 0;
}
