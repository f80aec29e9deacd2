/*
 * addrman/addrman.c: the tables and what changes them, as Core 29's
 * addrman.cpp (AddrManImpl), call for call and draw for draw.
 *
 * Storage: entries live in a slab (am->info) and are named by slot; the
 * tables and Core's vRandom hold slots. Core's ids (nIdCount) are kept on
 * each entry because they order the collision set, which Core keeps in a
 * std::set and indexes with a random draw. Core's mapAddr is a map from a
 * salted 64-bit fingerprint of the service to its slot.
 */
#include <math.h>
#include <string.h>

#include <sodium.h>

#include "addrman/internal.h"
#include "base/alloc.h"
#include "base/require.h"
#include "proto/proto.h"

#define TRIED_BUCKETS_PER_GROUP      8
#define NEW_BUCKETS_PER_SOURCE_GROUP 64
#define NEW_BUCKETS_PER_ADDRESS      8
#define HORIZON                      (30 * 24 * 3600)
#define RETRIES                      3
#define MAX_FAILURES                 10
#define MIN_FAIL                     (7 * 24 * 3600)
#define REPLACEMENT                  (4 * 3600)
#define TEST_WINDOW                  (40 * 60)

const char *addrman_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case ADDRMAN_ENOMEM:
		return "out of memory";
	case ADDRMAN_ECORRUPT:
		return "corrupt peers.dat";
	case ADDRMAN_EVERSION:
		return "peers.dat of a newer, incompatible format";
	case ADDRMAN_ENOENT:
		return "no peers.dat";
	case ADDRMAN_EIO:
		return "peers.dat could not be read or written";
	default:
		return "unknown addrman error";
	}
}

/* ---- bucket arithmetic (Core's AddrInfo::Get*Bucket*) -------------------- */

/* A HashWriter's serialization: bytes as they are, vectors with a
 * CompactSize length (all of ours are under 253 bytes). */
struct hw {
	uint8_t b[160];
	size_t n;
};

static void hw_bytes(struct hw *h, const void *p, size_t n)
{
	memcpy(h->b + h->n, p, n);
	h->n += n;
}

static void hw_vec(struct hw *h, const uint8_t *p, size_t n)
{
	h->b[h->n++] = (uint8_t)n;
	hw_bytes(h, p, n);
}

static void hw_u64(struct hw *h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h->b[h->n++] = (uint8_t)(v >> (8 * i));
}

/* GetCheapHash: the first 8 bytes of SHA-256d, little-endian. */
static uint64_t hw_cheap(const struct hw *h)
{
	uint8_t d[32];
	proto_sha256d(h->b, h->n, d);
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | d[i];
	return v;
}

int addrman_tried_bucket(const struct addrman *am, const struct addrman_service *svc)
{
	uint8_t key[34], group[ADDRMAN_GROUP_MAX];
	size_t klen = addrman_service_key(svc, key);
	size_t glen = addrman_netaddr_group(svc, group);
	struct hw h = {.n = 0};
	hw_bytes(&h, am->key, 32);
	hw_vec(&h, key, klen);
	uint64_t h1 = hw_cheap(&h);
	h.n = 0;
	hw_bytes(&h, am->key, 32);
	hw_vec(&h, group, glen);
	hw_u64(&h, h1 % TRIED_BUCKETS_PER_GROUP);
	return (int)(hw_cheap(&h) % ADDRMAN_TRIED_BUCKET_COUNT);
}

int addrman_new_bucket(const struct addrman *am, const struct addrman_service *svc,
                       const struct addrman_service *src)
{
	uint8_t group[ADDRMAN_GROUP_MAX], sgroup[ADDRMAN_GROUP_MAX];
	size_t glen = addrman_netaddr_group(svc, group);
	size_t slen = addrman_netaddr_group(src, sgroup);
	struct hw h = {.n = 0};
	hw_bytes(&h, am->key, 32);
	hw_vec(&h, group, glen);
	hw_vec(&h, sgroup, slen);
	uint64_t h1 = hw_cheap(&h);
	h.n = 0;
	hw_bytes(&h, am->key, 32);
	hw_vec(&h, sgroup, slen);
	hw_u64(&h, h1 % NEW_BUCKETS_PER_SOURCE_GROUP);
	return (int)(hw_cheap(&h) % ADDRMAN_NEW_BUCKET_COUNT);
}

int addrman_bucket_position(const struct addrman *am, bool is_new, int bucket,
                            const struct addrman_service *svc)
{
	uint8_t key[34];
	size_t klen = addrman_service_key(svc, key);
	struct hw h = {.n = 0};
	hw_bytes(&h, am->key, 32);
	h.b[h.n++] = is_new ? 'N' : 'K';
	for (int i = 0; i < 4; i++)
		h.b[h.n++] = (uint8_t)((uint32_t)bucket >> (8 * i));
	hw_vec(&h, key, klen);
	return (int)(hw_cheap(&h) % ADDRMAN_BUCKET_SIZE);
}

/* ---- an entry's quality (Core's IsTerrible, GetChance) ------------------- */

static bool is_terrible(const struct addrman_info *e, int64_t now)
{
	if (now - e->last_try <= 60) /* never remove things tried in the last minute */
		return false;
	if (e->addr.time > now + 10 * 60) /* came in a flying DeLorean */
		return true;
	if (now - e->addr.time > HORIZON) /* not seen in recent history */
		return true;
	if (e->last_success == 0 && e->attempts >= RETRIES) /* never a success */
		return true;
	if (now - e->last_success > MIN_FAIL && e->attempts >= MAX_FAILURES)
		return true;
	return false;
}

static double get_chance(const struct addrman_info *e, int64_t now)
{
	double chance = 1.0;
	if (now - e->last_try < 10 * 60) /* tried in the last ten minutes */
		chance *= 0.01;
	/* 66% less after each failure, at most 8 times (1/28th) */
	chance *= pow(0.66, e->attempts < 8 ? e->attempts : 8);
	return chance;
}

/* ---- construction -------------------------------------------------------- */

struct addrman *addrman_new(bool deterministic, int32_t check_ratio)
{
	struct addrman *am = xmalloc(sizeof(*am));
	if (!am)
		return NULL;
	memset(am, 0, sizeof(*am));
	addrman_rng_init(&am->rng, deterministic);
	if (deterministic)
		am->key[0] = 1; /* uint256{1} */
	else
		addrman_rng_256(&am->rng, am->key);
	if (sodium_init() >= 0)
		randombytes_buf(am->salt, sizeof(am->salt));
	am->check_ratio = check_ratio;
	am->last_good = 1;
	am->free_head = -1;
	memset(am->vv_new, 0xff, sizeof(am->vv_new));
	memset(am->vv_tried, 0xff, sizeof(am->vv_tried));
	hmap_init(&am->by_addr);
	return am;
}

void addrman_free(struct addrman *am)
{
	if (!am)
		return;
	hmap_release(&am->by_addr);
	xfree(am->info);
	xfree(am->vrandom);
	sodium_memzero(am->key, sizeof(am->key));
	xfree(am);
}

/* ---- the slab, vRandom and mapAddr --------------------------------------- */

static uint64_t fingerprint(const struct addrman *am, const struct addrman_service *svc)
{
	uint8_t k[36];
	size_t n = addrman_service_key(svc, k);
	/* The key bytes of IPv6 and CJDNS can be equal: the network tells them apart. */
	k[n++] = svc->net;
	return proto_siphash(am->salt, k, n);
}

int32_t addrman_slot_alloc(struct addrman *am)
{
	int32_t slot;
	if (am->free_head >= 0) {
		slot = am->free_head;
		am->free_head = am->info[slot].random_pos;
	} else {
		if (am->n_info == am->cap_info) {
			uint32_t cap = am->cap_info ? am->cap_info * 2 : 64;
			struct addrman_info *v = xreallocarray(am->info, cap, sizeof(*v));
			if (!v)
				return -1;
			am->info = v;
			am->cap_info = cap;
		}
		slot = (int32_t)am->n_info++;
	}
	memset(&am->info[slot], 0, sizeof(am->info[slot]));
	am->info[slot].used = true;
	am->info[slot].random_pos = -1;
	return slot;
}

static void slot_free(struct addrman *am, int32_t slot)
{
	am->info[slot].used = false;
	am->info[slot].random_pos = am->free_head;
	am->free_head = slot;
}

int addrman_random_push(struct addrman *am, int32_t slot)
{
	if (am->n_random == am->cap_random) {
		uint32_t cap = am->cap_random ? am->cap_random * 2 : 64;
		int32_t *v = xreallocarray(am->vrandom, cap, sizeof(*v));
		if (!v)
			return ADDRMAN_ENOMEM;
		am->vrandom = v;
		am->cap_random = cap;
	}
	am->info[slot].random_pos = (int32_t)am->n_random;
	am->vrandom[am->n_random++] = slot;
	return 0;
}

int addrman_index_put(struct addrman *am, const struct addrman_service *svc, int32_t slot)
{
	return hmap_put(&am->by_addr, fingerprint(am, svc), (uint32_t)slot) ? ADDRMAN_ENOMEM : 0;
}

static int32_t find(const struct addrman *am, const struct addrman_service *svc)
{
	uint32_t slot;
	if (!hmap_get(&am->by_addr, fingerprint(am, svc), &slot))
		return -1;
	return (int32_t)slot;
}

static void swap_random(struct addrman *am, uint32_t p1, uint32_t p2)
{
	if (p1 == p2)
		return;
	int32_t s1 = am->vrandom[p1], s2 = am->vrandom[p2];
	am->info[s1].random_pos = (int32_t)p2;
	am->info[s2].random_pos = (int32_t)p1;
	am->vrandom[p1] = s2;
	am->vrandom[p2] = s1;
}

static struct addrman_counts *counts_of(struct addrman *am, const struct addrman_info *e)
{
	return &am->counts[addrman_netaddr_network(&e->addr.svc)];
}

void addrman_delete(struct addrman *am, int32_t slot)
{
	struct addrman_info *e = &am->info[slot];
	require(!e->in_tried && e->ref_count == 0);
	swap_random(am, (uint32_t)e->random_pos, am->n_random - 1);
	counts_of(am, e)->n_new--;
	am->n_random--;
	uint32_t mapped;
	uint64_t fp = fingerprint(am, &e->addr.svc);
	if (hmap_get(&am->by_addr, fp, &mapped) && (int32_t)mapped == slot)
		hmap_del(&am->by_addr, fp);
	am->n_new--;
	slot_free(am, slot);
}

/* Core's Create: a new entry, in vRandom and mapAddr, counted as new. */
static int32_t create(struct addrman *am, const struct addrman_address *a,
                      const struct addrman_service *src)
{
	int32_t slot = addrman_slot_alloc(am);
	if (slot < 0)
		return -1;
	if (addrman_random_push(am, slot) || addrman_index_put(am, &a->svc, slot)) {
		if (am->info[slot].random_pos >= 0)
			am->n_random--;
		slot_free(am, slot);
		return -1;
	}
	struct addrman_info *e = &am->info[slot];
	e->addr = *a;
	e->source = *src;
	e->source.port = 0;
	e->id = am->id_count++;
	am->n_new++;
	counts_of(am, e)->n_new++;
	return slot;
}

/* Core's ClearNew: empty a new slot, deleting its entry with its last reference. */
static void clear_new(struct addrman *am, int bucket, int pos)
{
	int32_t slot = am->vv_new[bucket][pos];
	if (slot == -1)
		return;
	struct addrman_info *e = &am->info[slot];
	require(e->ref_count > 0);
	e->ref_count--;
	am->vv_new[bucket][pos] = -1;
	if (e->ref_count == 0)
		addrman_delete(am, slot);
}

/* Core's MakeTried: out of every new bucket and into tried, sending the
 * entry in its tried slot back to new. */
static void make_tried(struct addrman *am, int32_t slot)
{
	struct addrman_info *e = &am->info[slot];
	int start = addrman_new_bucket(am, &e->addr.svc, &e->source);
	for (int n = 0; n < ADDRMAN_NEW_BUCKET_COUNT; n++) {
		int b = (start + n) % ADDRMAN_NEW_BUCKET_COUNT;
		int p = addrman_bucket_position(am, true, b, &e->addr.svc);
		if (am->vv_new[b][p] == slot) {
			am->vv_new[b][p] = -1;
			e->ref_count--;
			if (e->ref_count == 0)
				break;
		}
	}
	am->n_new--;
	counts_of(am, e)->n_new--;
	require(e->ref_count == 0);

	int kb = addrman_tried_bucket(am, &e->addr.svc);
	int kp = addrman_bucket_position(am, false, kb, &e->addr.svc);
	if (am->vv_tried[kb][kp] != -1) {
		int32_t evict = am->vv_tried[kb][kp];
		struct addrman_info *old = &am->info[evict];
		old->in_tried = false;
		am->vv_tried[kb][kp] = -1;
		am->n_tried--;
		counts_of(am, old)->n_tried--;
		int ub = addrman_new_bucket(am, &old->addr.svc, &old->source);
		int up = addrman_bucket_position(am, true, ub, &old->addr.svc);
		clear_new(am, ub, up);
		require(am->vv_new[ub][up] == -1);
		old->ref_count = 1;
		am->vv_new[ub][up] = evict;
		am->n_new++;
		counts_of(am, old)->n_new++;
	}
	am->vv_tried[kb][kp] = slot;
	am->n_tried++;
	e->in_tried = true;
	counts_of(am, e)->n_tried++;
}

/* ---- Core's Check: a draw per call when enabled, a full check on 1 in n -- */

static void check(struct addrman *am)
{
	if (am->check_ratio == 0)
		return;
	if (addrman_rng_range(&am->rng, (uint64_t)am->check_ratio) >= 1)
		return;
	int err = addrman_check(am);
	require(err == 0);
}

int addrman_check(const struct addrman *am)
{
	struct addrman_counts local[ADDRMAN_NET__COUNT];
	memset(local, 0, sizeof(local));
	if (am->n_random != (uint32_t)(am->n_tried + am->n_new))
		return -7;
	int32_t live = 0, n_tried = 0, n_new = 0;
	int32_t *refs = xcalloc(am->n_info ? am->n_info : 1, sizeof(*refs));
	if (!refs)
		return 0; /* no memory to check with: say nothing rather than fail */
	int err = 0;
	for (uint32_t s = 0; s < am->n_info && !err; s++) {
		const struct addrman_info *e = &am->info[s];
		if (!e->used)
			continue;
		live++;
		if (e->in_tried) {
			if (e->last_success == 0)
				err = -1;
			else if (e->ref_count)
				err = -2;
			n_tried++;
			local[addrman_netaddr_network(&e->addr.svc)].n_tried++;
		} else {
			if (e->ref_count < 0 || e->ref_count > NEW_BUCKETS_PER_ADDRESS)
				err = -3;
			else if (!e->ref_count)
				err = -4;
			n_new++;
			local[addrman_netaddr_network(&e->addr.svc)].n_new++;
		}
		if (!err && find(am, &e->addr.svc) != (int32_t)s)
			err = -5;
		if (!err && (e->random_pos < 0 || (uint32_t)e->random_pos >= am->n_random ||
		             am->vrandom[e->random_pos] != (int32_t)s))
			err = -14;
		if (!err && e->last_try < 0)
			err = -6;
		if (!err && e->last_success < 0)
			err = -8;
	}
	if (!err && n_tried != am->n_tried)
		err = -9;
	if (!err && n_new != am->n_new)
		err = -10;
	for (int b = 0; b < ADDRMAN_TRIED_BUCKET_COUNT && !err; b++)
		for (int p = 0; p < ADDRMAN_BUCKET_SIZE && !err; p++) {
			int32_t s = am->vv_tried[b][p];
			if (s == -1)
				continue;
			if (s < 0 || (uint32_t)s >= am->n_info || !am->info[s].used ||
			    !am->info[s].in_tried || refs[s]++)
				err = -11;
			else if (addrman_tried_bucket(am, &am->info[s].addr.svc) != b)
				err = -17;
			else if (addrman_bucket_position(am, false, b, &am->info[s].addr.svc) != p)
				err = -18;
		}
	for (int b = 0; b < ADDRMAN_NEW_BUCKET_COUNT && !err; b++)
		for (int p = 0; p < ADDRMAN_BUCKET_SIZE && !err; p++) {
			int32_t s = am->vv_new[b][p];
			if (s == -1)
				continue;
			if (s < 0 || (uint32_t)s >= am->n_info || !am->info[s].used ||
			    am->info[s].in_tried)
				err = -12;
			else if (addrman_bucket_position(am, true, b, &am->info[s].addr.svc) != p)
				err = -19;
			else
				refs[s]++;
		}
	for (uint32_t s = 0; s < am->n_info && !err; s++) {
		const struct addrman_info *e = &am->info[s];
		if (!e->used)
			continue;
		if (e->in_tried && refs[s] != 1)
			err = -13;
		else if (!e->in_tried && refs[s] != e->ref_count)
			err = -15;
	}
	static const uint8_t zero[32];
	if (!err && memcmp(am->key, zero, 32) == 0)
		err = -16;
	for (int n = 0; n < ADDRMAN_NET__COUNT && !err; n++)
		if (local[n].n_new != am->counts[n].n_new ||
		    local[n].n_tried != am->counts[n].n_tried)
			err = -21;
	(void)live;
	xfree(refs);
	return err;
}

/* ---- Add ----------------------------------------------------------------- */

/* Core's AddSingle: 1 when placed in a bucket, 0 when not, -1 out of memory. */
static int add_single(struct addrman *am, const struct addrman_address *a,
                      const struct addrman_service *source, int64_t penalty, int64_t now)
{
	if (!addrman_netaddr_routable(&a->svc))
		return 0;
	int32_t slot = find(am, &a->svc);
	if (addrman_netaddr_eq(&a->svc, source)) /* no penalty for a self-announcement */
		penalty = 0;
	if (slot >= 0) {
		struct addrman_info *e = &am->info[slot];
		bool online = now - a->time < 24 * 3600;
		int64_t interval = online ? 3600 : 24 * 3600;
		if (e->addr.time < a->time - interval - penalty) {
			int64_t t = a->time - penalty;
			e->addr.time = t > 0 ? t : 0;
		}
		e->addr.services |= a->services;
		if (a->time <= e->addr.time)
			return 0; /* nothing new */
		if (e->in_tried)
			return 0;
		if (e->ref_count == NEW_BUCKETS_PER_ADDRESS)
			return 0;
		/* stochastic test: with N references, 2^N times harder to add one */
		if (e->ref_count > 0) {
			uint64_t factor = UINT64_C(1) << e->ref_count;
			if (addrman_rng_range(&am->rng, factor) != 0)
				return 0;
		}
	} else {
		slot = create(am, a, source);
		if (slot < 0)
			return -1;
		int64_t t = am->info[slot].addr.time - penalty;
		am->info[slot].addr.time = t > 0 ? t : 0;
	}
	struct addrman_info *e = &am->info[slot];
	int b = addrman_new_bucket(am, &e->addr.svc, source);
	int p = addrman_bucket_position(am, true, b, &e->addr.svc);
	bool insert = am->vv_new[b][p] == -1;
	if (am->vv_new[b][p] != slot) {
		if (!insert) {
			const struct addrman_info *old = &am->info[am->vv_new[b][p]];
			if (is_terrible(old, now) || (old->ref_count > 1 && e->ref_count == 0))
				insert = true; /* overwrite the existing entry */
		}
		if (insert) {
			clear_new(am, b, p);
			e->ref_count++;
			am->vv_new[b][p] = slot;
		} else if (e->ref_count == 0) {
			addrman_delete(am, slot);
		}
	}
	return insert ? 1 : 0;
}

int addrman_add(struct addrman *am, const struct addrman_address *v, size_t n,
                const struct addrman_service *source, int64_t time_penalty, int64_t now,
                size_t *n_added)
{
	size_t added = 0;
	int err = 0;
	check(am);
	for (size_t i = 0; i < n; i++) {
		int r = add_single(am, &v[i], source, time_penalty, now);
		if (r < 0) {
			err = ADDRMAN_ENOMEM;
			break;
		}
		added += (size_t)r;
	}
	check(am);
	if (n_added)
		*n_added = added;
	return err;
}

/* ---- Good, Attempt, Connected, SetServices -------------------------------- */

static int collision_index(const struct addrman *am, int64_t id)
{
	for (int i = 0; i < am->n_collisions; i++)
		if (am->collisions[i] == id)
			return i;
	return -1;
}

static void collision_insert(struct addrman *am, int32_t slot)
{
	int64_t id = am->info[slot].id;
	if (collision_index(am, id) >= 0 || am->n_collisions >= ADDRMAN_COLLISIONS_MAX)
		return;
	int i = am->n_collisions;
	while (i > 0 && am->collisions[i - 1] > id) {
		am->collisions[i] = am->collisions[i - 1];
		am->collision_slot[i] = am->collision_slot[i - 1];
		i--;
	}
	am->collisions[i] = id;
	am->collision_slot[i] = slot;
	am->n_collisions++;
}

static void collision_erase(struct addrman *am, int i)
{
	memmove(&am->collisions[i], &am->collisions[i + 1],
	        (size_t)(am->n_collisions - i - 1) * sizeof(am->collisions[0]));
	memmove(&am->collision_slot[i], &am->collision_slot[i + 1],
	        (size_t)(am->n_collisions - i - 1) * sizeof(am->collision_slot[0]));
	am->n_collisions--;
}

/* The slot of a pending collision, or -1 when its entry is gone. */
static int32_t collision_live(const struct addrman *am, int i)
{
	int32_t s = am->collision_slot[i];
	return am->info[s].used && am->info[s].id == am->collisions[i] ? s : -1;
}

static bool good(struct addrman *am, const struct addrman_service *svc, bool test_before_evict,
                 int64_t time)
{
	am->last_good = time;
	int32_t slot = find(am, svc);
	if (slot < 0)
		return false;
	struct addrman_info *e = &am->info[slot];
	e->last_success = time;
	e->last_try = time;
	e->attempts = 0;
	/* The time is not updated, so as not to leak which peers are connected. */
	if (e->in_tried)
		return false;
	if (!BASE_CHECK(e->ref_count > 0))
		return false;
	int b = addrman_tried_bucket(am, &e->addr.svc);
	int p = addrman_bucket_position(am, false, b, &e->addr.svc);
	if (test_before_evict && am->vv_tried[b][p] != -1) {
		collision_insert(am, slot);
		return false;
	}
	make_tried(am, slot);
	return true;
}

bool addrman_good(struct addrman *am, const struct addrman_service *svc, int64_t time)
{
	check(am);
	bool r = good(am, svc, true, time);
	check(am);
	return r;
}

void addrman_attempt(struct addrman *am, const struct addrman_service *svc, bool count_failure,
                     int64_t time)
{
	check(am);
	int32_t slot = find(am, svc);
	if (slot >= 0) {
		struct addrman_info *e = &am->info[slot];
		e->last_try = time;
		if (count_failure && e->last_count_attempt < am->last_good) {
			e->last_count_attempt = time;
			e->attempts++;
		}
	}
	check(am);
}

void addrman_connected(struct addrman *am, const struct addrman_service *svc, int64_t time)
{
	check(am);
	int32_t slot = find(am, svc);
	if (slot >= 0 && time - am->info[slot].addr.time > 20 * 60)
		am->info[slot].addr.time = time;
	check(am);
}

void addrman_set_services(struct addrman *am, const struct addrman_service *svc, uint64_t services)
{
	check(am);
	int32_t slot = find(am, svc);
	if (slot >= 0)
		am->info[slot].addr.services = services;
	check(am);
}

/* ---- Select, GetAddr ------------------------------------------------------ */

static bool select_(struct addrman *am, bool new_only, uint32_t nets, int64_t now,
                    struct addrman_address *out, int64_t *last_try)
{
	if (am->n_random == 0)
		return false;
	size_t new_count = (size_t)am->n_new, tried_count = (size_t)am->n_tried;
	if (nets) {
		new_count = tried_count = 0;
		for (int n = 0; n < ADDRMAN_NET__COUNT; n++)
			if (nets & (1u << n)) {
				new_count += (size_t)am->counts[n].n_new;
				tried_count += (size_t)am->counts[n].n_tried;
			}
	}
	if (new_only && new_count == 0)
		return false;
	if (new_count + tried_count == 0)
		return false;
	bool search_tried;
	if (new_only || tried_count == 0)
		search_tried = false;
	else if (new_count == 0)
		search_tried = true;
	else
		search_tried = addrman_rng_bits(&am->rng, 1) != 0;
	int bucket_count = search_tried ? ADDRMAN_TRIED_BUCKET_COUNT : ADDRMAN_NEW_BUCKET_COUNT;
	double chance_factor = 1.0;
	for (;;) {
		int bucket = (int)addrman_rng_range(&am->rng, (uint64_t)bucket_count);
		int initial = (int)addrman_rng_range(&am->rng, ADDRMAN_BUCKET_SIZE);
		int i;
		int32_t slot = -1;
		for (i = 0; i < ADDRMAN_BUCKET_SIZE; i++) {
			int pos = (initial + i) % ADDRMAN_BUCKET_SIZE;
			slot = search_tried ? am->vv_tried[bucket][pos] : am->vv_new[bucket][pos];
			if (slot != -1 &&
			    (!nets ||
			     (nets & (1u << addrman_netaddr_network(&am->info[slot].addr.svc)))))
				break;
		}
		if (i == ADDRMAN_BUCKET_SIZE)
			continue; /* an empty bucket: another one */
		const struct addrman_info *e = &am->info[slot];
		if ((double)addrman_rng_bits(&am->rng, 30) <
		    chance_factor * get_chance(e, now) * (double)(1 << 30)) {
			if (out)
				*out = e->addr;
			if (last_try)
				*last_try = e->last_try;
			return true;
		}
		chance_factor *= 1.2;
	}
}

bool addrman_select(struct addrman *am, bool new_only, uint32_t nets, int64_t now,
                    struct addrman_address *out, int64_t *last_try)
{
	check(am);
	bool r = select_(am, new_only, nets, now, out, last_try);
	check(am);
	return r;
}

long addrman_getaddr(struct addrman *am, size_t max_addresses, size_t max_pct, int net,
                     bool filtered, int64_t now, struct addrman_address **out)
{
	*out = NULL;
	check(am);
	size_t n_nodes = am->n_random;
	if (max_pct != 0) {
		if (max_pct > 100)
			max_pct = 100;
		n_nodes = max_pct * n_nodes / 100;
	}
	if (max_addresses != 0 && n_nodes > max_addresses)
		n_nodes = max_addresses;
	struct addrman_address *v = NULL;
	if (n_nodes) {
		v = xreallocarray(NULL, n_nodes, sizeof(*v));
		if (!v)
			return ADDRMAN_ENOMEM;
	}
	size_t got = 0;
	for (uint32_t n = 0; n < am->n_random && got < n_nodes; n++) {
		uint32_t r = (uint32_t)addrman_rng_range(&am->rng, am->n_random - n) + n;
		swap_random(am, n, r);
		const struct addrman_info *e = &am->info[am->vrandom[n]];
		if (net >= 0 && (int)addrman_netaddr_class(&e->addr.svc) != net)
			continue;
		if (filtered && is_terrible(e, now))
			continue;
		v[got++] = e->addr;
	}
	check(am);
	if (!got) {
		xfree(v);
		v = NULL;
	}
	*out = v;
	return (long)got;
}

/* ---- collisions ------------------------------------------------------------ */

void addrman_resolve_collisions(struct addrman *am, int64_t now)
{
	check(am);
	for (int i = 0; i < am->n_collisions;) {
		bool erase = false;
		int32_t slot = collision_live(am, i);
		if (slot < 0) {
			erase = true;
		} else {
			struct addrman_info *e = &am->info[slot];
			int b = addrman_tried_bucket(am, &e->addr.svc);
			int p = addrman_bucket_position(am, false, b, &e->addr.svc);
			if (!addrman_netaddr_valid(&e->addr.svc)) {
				erase = true;
			} else if (am->vv_tried[b][p] != -1) {
				const struct addrman_info *old = &am->info[am->vv_tried[b][p]];
				if (now - old->last_success < REPLACEMENT) {
					erase = true; /* the old one is alive */
				} else if (now - old->last_try < REPLACEMENT) {
					/* it was tried and failed: give it 60 s to answer */
					if (now - old->last_try > 60) {
						struct addrman_service svc = e->addr.svc;
						good(am, &svc, false, now);
						erase = true;
					}
				} else if (now - e->last_success > TEST_WINDOW) {
					/* not tested in time: evict the old one anyway */
					struct addrman_service svc = e->addr.svc;
					good(am, &svc, false, now);
					erase = true;
				}
			} else { /* no longer a collision */
				struct addrman_service svc = e->addr.svc;
				good(am, &svc, false, now);
				erase = true;
			}
		}
		if (erase)
			collision_erase(am, i);
		else
			i++;
	}
	check(am);
}

static bool select_tried_collision(struct addrman *am, struct addrman_address *out,
                                   int64_t *last_try)
{
	if (am->n_collisions == 0)
		return false;
	int i = (int)addrman_rng_range(&am->rng, (uint64_t)am->n_collisions);
	int32_t slot = collision_live(am, i);
	if (slot < 0) {
		collision_erase(am, i);
		return false;
	}
	const struct addrman_info *e = &am->info[slot];
	int b = addrman_tried_bucket(am, &e->addr.svc);
	int p = addrman_bucket_position(am, false, b, &e->addr.svc);
	int32_t old = am->vv_tried[b][p];
	if (old < 0) {
		/* Core reads a default entry here ([::]:0); say "none". */
		return false;
	}
	if (out)
		*out = am->info[old].addr;
	if (last_try)
		*last_try = am->info[old].last_try;
	return true;
}

bool addrman_select_tried_collision(struct addrman *am, struct addrman_address *out,
                                    int64_t *last_try)
{
	check(am);
	bool r = select_tried_collision(am, out, last_try);
	check(am);
	return r;
}

/* ---- lookups ---------------------------------------------------------------- */

static void fill_entry(const struct addrman_info *e, struct addrman_entry *out)
{
	memset(out, 0, sizeof(*out));
	out->addr = e->addr;
	out->source = e->source;
	out->last_success = e->last_success;
	out->last_try = e->last_try;
	out->attempts = e->attempts;
	out->tried = e->in_tried;
	out->multiplicity = e->in_tried ? 1 : e->ref_count;
}

bool addrman_find(struct addrman *am, const struct addrman_service *svc, struct addrman_entry *out)
{
	check(am);
	int32_t slot = find(am, svc);
	if (slot >= 0 && out) {
		const struct addrman_info *e = &am->info[slot];
		fill_entry(e, out);
		out->bucket = e->in_tried ? addrman_tried_bucket(am, &e->addr.svc)
		                          : addrman_new_bucket(am, &e->addr.svc, &e->source);
		out->position =
		    addrman_bucket_position(am, !e->in_tried, out->bucket, &e->addr.svc);
	}
	check(am);
	return slot >= 0;
}

void addrman_entries(struct addrman *am, bool tried,
                     void (*fn)(void *ctx, const struct addrman_entry *e), void *ctx)
{
	check(am);
	int buckets = tried ? ADDRMAN_TRIED_BUCKET_COUNT : ADDRMAN_NEW_BUCKET_COUNT;
	for (int b = 0; b < buckets; b++)
		for (int p = 0; p < ADDRMAN_BUCKET_SIZE; p++) {
			int32_t s = tried ? am->vv_tried[b][p] : am->vv_new[b][p];
			if (s < 0)
				continue;
			struct addrman_entry e;
			fill_entry(&am->info[s], &e);
			e.bucket = b;
			e.position = p;
			fn(ctx, &e);
		}
	check(am);
}

size_t addrman_size(struct addrman *am, int net, int in_new)
{
	check(am);
	size_t r;
	if (net < 0)
		r = in_new < 0 ? am->n_random : (size_t)(in_new ? am->n_new : am->n_tried);
	else if (net >= ADDRMAN_NET__COUNT)
		r = 0;
	else if (in_new < 0)
		r = (size_t)(am->counts[net].n_new + am->counts[net].n_tried);
	else
		r = (size_t)(in_new ? am->counts[net].n_new : am->counts[net].n_tried);
	check(am);
	return r;
}
