/*
 * addrman/internal.h: what addrman/'s files share and nobody else sees.
 */
#ifndef PEERD_ADDRMAN_INTERNAL_H
#define PEERD_ADDRMAN_INTERNAL_H

#include "addrman/addrman.h"
#include "base/hset.h"

/* Core's FastRandomContext: ChaCha20 (RFC 8439 block function, zero nonce,
 * block counter from 0) drawn 8 bytes at a time as little-endian 64-bit
 * words, with RandomMixin's bit buffer on top. */
struct addrman_rng {
	uint8_t key[32];
	uint32_t block;  /* next ChaCha20 block counter */
	uint8_t buf[64]; /* the current keystream block */
	int buf_left;    /* unread bytes at the end of buf */
	uint64_t bitbuf;
	int bitbuf_size;
};

/** Deterministic (zero key) or randomly keyed stream. */
void addrman_rng_init(struct addrman_rng *r, bool deterministic);
/** Core's rand64. */
uint64_t addrman_rng_rand64(struct addrman_rng *r);
/** Core's randbits(bits), 0 <= bits <= 64. */
uint64_t addrman_rng_bits(struct addrman_rng *r, int bits);
/** Core's randrange(range), range > 0. */
uint64_t addrman_rng_range(struct addrman_rng *r, uint64_t range);
/** Core's rand256 (fillrand). */
void addrman_rng_256(struct addrman_rng *r, uint8_t out[32]);

/* Core's AddrInfo. Stored in a slab (am->info), found by slot number;
 * `id` is Core's nid (ever increasing), which orders the collision set. */
struct addrman_info {
	struct addrman_address addr;
	struct addrman_service source;
	int64_t last_success;
	int64_t last_try;
	int64_t last_count_attempt;
	int64_t id;
	int32_t attempts;
	int32_t ref_count;
	int32_t random_pos;
	bool in_tried;
	bool used; /* a live slot (else on the free list) */
};

/* At most this many pending collisions (Core ADDRMAN_SET_TRIED_COLLISION_SIZE). */
#define ADDRMAN_COLLISIONS_MAX 10

struct addrman_counts {
	int32_t n_new;
	int32_t n_tried;
};

struct addrman {
	uint8_t key[32]; /* Core's nKey */
	struct addrman_rng rng;
	int32_t check_ratio;
	int32_t n_new;
	int32_t n_tried;
	int64_t id_count;  /* next id (Core nIdCount) */
	int64_t last_good; /* Core m_last_good, starts at 1 */
	int32_t vv_new[ADDRMAN_NEW_BUCKET_COUNT][ADDRMAN_BUCKET_SIZE];     /* slot or -1 */
	int32_t vv_tried[ADDRMAN_TRIED_BUCKET_COUNT][ADDRMAN_BUCKET_SIZE]; /* slot or -1 */
	struct addrman_info *info;                                         /* slab of slots */
	uint32_t n_info; /* slots in use or freed */
	uint32_t cap_info;
	int32_t free_head; /* first free slot, -1 when none; chained through random_pos */
	int32_t *vrandom;  /* slots, Core's vRandom */
	uint32_t n_random;
	uint32_t cap_random;
	struct hmap by_addr; /* fingerprint of the service -> slot, Core's mapAddr */
	uint8_t salt[16];    /* for the fingerprints */
	int64_t collisions[ADDRMAN_COLLISIONS_MAX]; /* ids, ascending (Core's std::set) */
	int32_t collision_slot[ADDRMAN_COLLISIONS_MAX];
	int n_collisions;
	struct addrman_counts counts[ADDRMAN_NET__COUNT]; /* by addrman_netaddr_network */
};

/* Core's CService::GetKey: the v1 16 bytes (or the address's own bytes for
 * Tor, I2P and CJDNS) then the port big-endian; returns its length. */
size_t addrman_service_key(const struct addrman_service *s, uint8_t out[34]);

/* Bucket arithmetic (addrman.c), exposed for serial.c. */
int addrman_tried_bucket(const struct addrman *am, const struct addrman_service *svc);
int addrman_new_bucket(const struct addrman *am, const struct addrman_service *svc,
                       const struct addrman_service *src);
int addrman_bucket_position(const struct addrman *am, bool is_new, int bucket,
                            const struct addrman_service *svc);

/* Slab and index helpers (addrman.c) for serial.c's loader. */
int32_t addrman_slot_alloc(struct addrman *am);
int addrman_random_push(struct addrman *am, int32_t slot);
int addrman_index_put(struct addrman *am, const struct addrman_service *svc, int32_t slot);
void addrman_delete(struct addrman *am, int32_t slot);

#endif
