/*
 * daemon/sync/presync.c: headers presync, so a chain below the minimum work never
 * enters the block index (Core 29's HeadersSyncState, net_processing's
 * TryLowWorkHeadersSync and IsContinuationOfLowWorkHeadersSync).
 *
 * A headers message whose chain (its parent's work plus the work its bits
 * claim) stays below the anti-DoS threshold, max(minimum chain work, tip
 * work minus 144 blocks of the tip's work), is not given to the index:
 *   - fewer than 2,000 headers: the peer's chain ends below the threshold;
 *     the headers are dropped (counted as "ignored low-work").
 *   - a full message: presync starts from the parent. PRESYNC follows the
 *     peer's chain asking for more, checking continuity, proof of work
 *     (done before, on every headers message) and the permitted difficulty
 *     change, summing the work and keeping one bit per HSYNC_COMMIT_PERIOD
 *     headers: bit 0 of a salted SipHash of the header at a random offset.
 *     Memory: those bits only, at most 6 headers a second since the start's
 *     median time past, over the period (about 600 KB from regtest's 2011
 *     genesis, 680 KB from mainnet's; the real mainnet chain: 180 bytes). When the work reaches the
 *     threshold, REDOWNLOAD asks for the same chain again from the start,
 *     checks each committed header's bit, and buffers headers (48 bytes
 *     each) until HSYNC_BUFFER_SIZE lie past the oldest; only then, or once
 *     the redownloaded chain itself has the work, are headers released to
 *     the index. A peer that serves another chain the second time fails a
 *     commitment (1 in 2 per bit, 1 in 2^23 over the buffer) before it
 *     can push a header into the index.
 * So a low-work peer costs at most the commitment bits plus, once it has
 * shown the work, one buffer (16,827 x 48 bytes, ~810 KB) while it
 * syncs, and nothing once it stops; the index never grows for it.
 *
 * Thread: the validation thread only (the table hangs off struct daemon's
 * sync state but the loop never reads it).
 */
#include "daemon/sync/sync.h"

#include <string.h>
#include <time.h>

#include "chain/chain.h"

/** One header in 48 bytes: its prev is the hash of the one before. */
struct hsync_hdr {
	int32_t version;
	struct proto_hash merkle_root;
	uint32_t time, bits, nonce;
};
_Static_assert(sizeof(struct hsync_hdr) == 48, "Core's CompressedHeader size");

enum hsync_phase { HSYNC_PRESYNC, HSYNC_REDOWNLOAD };

/** One peer's presync (Core's HeadersSyncState). */
struct hsync {
	uint64_t peer_id;
	enum hsync_phase phase;
	const struct chain_node *start; /**< the index node the peer's chain leaves from */
	struct chain_work threshold;    /**< work that makes the chain worth storing */
	uint8_t salt[16];
	uint32_t commit_offset;
	uint64_t max_commits;
	/* commitments: a bit queue, pushed in PRESYNC, popped in REDOWNLOAD */
	uint64_t *bits;
	uint64_t bits_head, bits_n, bits_cap; /**< in bits */
	/* PRESYNC */
	struct chain_work work;
	struct proto_block_header last;
	struct proto_hash last_hash;
	int32_t height;
	/* REDOWNLOAD: a ring of headers not yet released */
	struct hsync_hdr *ring;
	uint32_t ring_head, ring_n, ring_cap;
	struct proto_hash rd_first_prev; /**< prev of the ring's first header */
	struct proto_hash rd_last_hash;
	uint32_t rd_last_bits;
	int32_t rd_height;
	struct chain_work rd_work;
	bool release_all; /**< the redownloaded chain has the work: everything goes */
};

static void hsync_free(struct hsync *s)
{
	if (!s)
		return;
	xfree(s->bits);
	xfree(s->ring);
	xfree(s);
}

static struct hsync **slot_of(struct hsync_table *t, uint64_t peer_id)
{
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->v[i]->peer_id == peer_id)
			return &t->v[i];
	}
	return NULL;
}

static void drop(struct hsync_table *t, uint64_t peer_id)
{
	struct hsync **sl = slot_of(t, peer_id);
	if (!sl)
		return;
	hsync_free(*sl);
	*sl = t->v[--t->n];
}

void hsync_forget(struct hsync_table *t, uint64_t peer_id)
{
	drop(t, peer_id);
}

void hsync_release(struct hsync_table *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		hsync_free(t->v[i]);
	xfree(t->v);
	memset(t, 0, sizeof(*t));
}

size_t hsync_memory(const struct hsync_table *t)
{
	size_t m = t->cap * sizeof(*t->v);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct hsync *s = t->v[i];
		m += sizeof(*s) + s->bits_cap / 8 + (size_t)s->ring_cap * sizeof(*s->ring);
	}
	return m;
}

bool hsync_has(struct hsync_table *t, uint64_t peer_id)
{
	return slot_of(t, peer_id) != NULL;
}

uint32_t hsync_count(const struct hsync_table *t)
{
	return t->n;
}

int32_t hsync_presync_height(struct hsync_table *t, uint64_t peer_id)
{
	/* Core's m_current_height: PRESYNC's count; it stays put in REDOWNLOAD. */
	struct hsync **sl = slot_of(t, peer_id);
	return sl ? (*sl)->height : -1;
}

/* ---- 256-bit targets ----------------------------------------------------- */

/* -1, 0, 1 for little-endian 256-bit numbers. */
static int le256_cmp(const uint8_t a[32], const uint8_t b[32])
{
	for (int i = 31; i >= 0; i--) {
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	}
	return 0;
}

/*
 * Core's PermittedDifficultyTransition: off a retarget boundary the bits
 * must not change; on one, the new target must lie within what a period
 * of a quarter or four times the target timespan yields from the old
 * bits (both rounded through the compact form, as Core compares them).
 */
static bool permitted_transition(const struct proto_params *p, int64_t height, uint32_t old_bits,
                                 uint32_t new_bits)
{
	if (p->pow_allow_min_difficulty)
		return true;
	if (height % proto_params_retarget_interval(p) != 0)
		return old_bits == new_bits;
	int64_t span = p->pow_target_timespan;
	uint8_t observed[32], hi[32], lo[32];
	(void)proto_bits_to_target(new_bits, observed);
	/* proto_next_work_required clamps the period to [span/4, span*4]. */
	(void)proto_bits_to_target(proto_next_work_required(p, old_bits, old_bits, 0, span * 4),
	                           hi);
	(void)proto_bits_to_target(proto_next_work_required(p, old_bits, old_bits, 0, span / 4),
	                           lo);
	return le256_cmp(observed, hi) <= 0 && le256_cmp(observed, lo) >= 0;
}

/* ---- commitments ----------------------------------------------------------- */

static bool commit_bit(const struct hsync *s, const struct proto_hash *h)
{
	return proto_siphash(s->salt, h->b, sizeof(h->b)) & 1;
}

/* Push a bit; false when out of memory. */
static bool bits_push(struct hsync *s, bool bit)
{
	uint64_t end = s->bits_head + s->bits_n;
	if (end == s->bits_cap) {
		uint64_t ncap = s->bits_cap ? s->bits_cap * 2 : 1024;
		uint64_t *nb = xrealloc(s->bits, ncap / 8);
		if (!nb)
			return false;
		s->bits = nb;
		s->bits_cap = ncap;
	}
	if (bit)
		s->bits[end / 64] |= (uint64_t)1 << (end % 64);
	else
		s->bits[end / 64] &= ~((uint64_t)1 << (end % 64));
	s->bits_n++;
	return true;
}

static bool bits_pop(struct hsync *s)
{
	uint64_t i = s->bits_head++;
	s->bits_n--;
	return (s->bits[i / 64] >> (i % 64)) & 1;
}

/* ---- the two phases ------------------------------------------------------ */

static struct hsync *hsync_new(struct chain *c, uint64_t peer_id, const struct chain_node *start,
                               const struct chain_work *threshold)
{
	struct hsync *s = xcalloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->peer_id = peer_id;
	s->phase = HSYNC_PRESYNC;
	s->start = start;
	s->threshold = *threshold;
	proto_random(s->salt, sizeof(s->salt));
	s->commit_offset = (uint32_t)(proto_random_u64() % HSYNC_COMMIT_PERIOD);
	s->work = start->work;
	chain_node_header(start, &s->last);
	s->last_hash = start->hash;
	s->height = start->height;
	/* Core's bound: no valid chain can hold more than 6 blocks a second
	 * (the median-time-past rule) since the start, plus the 2 hours a
	 * header may run ahead. */
	int64_t secs = chain_now(c) - chain_node_mtp(start) + CHAIN_MAX_FUTURE_TIME;
	if (secs < 0)
		secs = 0;
	s->max_commits = (uint64_t)(6 * secs) / HSYNC_COMMIT_PERIOD;
	(void)c;
	return s;
}

static bool presync_one(struct hsync *s, const struct proto_params *p,
                        const struct proto_block_header *h)
{
	int32_t next = s->height + 1;
	if (!permitted_transition(p, next, s->last.bits, h->bits))
		return false;
	struct proto_hash hash;
	proto_block_header_hash(h, &hash);
	if ((uint32_t)next % HSYNC_COMMIT_PERIOD == s->commit_offset) {
		if (!bits_push(s, commit_bit(s, &hash)) || s->bits_n > s->max_commits)
			return false;
	}
	struct chain_work w;
	chain_work_of_bits(h->bits, &w);
	chain_work_add(&s->work, &w);
	s->last = *h;
	s->last_hash = hash;
	s->height = next;
	return true;
}

static bool presync(struct hsync *s, const struct proto_params *p,
                    const struct proto_block_header *h, uint32_t n)
{
	if (!proto_hash_eq(&h[0].prev, &s->last_hash))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!presync_one(s, p, &h[i]))
			return false;
	}
	if (chain_work_cmp(&s->work, &s->threshold) >= 0) {
		/* Enough work: fetch the same chain again from the start. */
		s->phase = HSYNC_REDOWNLOAD;
		s->rd_height = s->start->height;
		s->rd_first_prev = s->start->hash;
		s->rd_last_hash = s->start->hash;
		s->rd_last_bits = s->start->bits;
		s->rd_work = s->start->work;
		s->ring_head = s->ring_n = 0;
	}
	return true;
}

static bool ring_push(struct hsync *s, const struct proto_block_header *h)
{
	if (s->ring_n == s->ring_cap) {
		uint32_t ncap = s->ring_cap ? s->ring_cap * 2 : 2048;
		if (ncap > HSYNC_BUFFER_SIZE + PROTO_MAX_HEADERS)
			ncap = HSYNC_BUFFER_SIZE + PROTO_MAX_HEADERS;
		if (ncap <= s->ring_n)
			return false;
		struct hsync_hdr *nr = xreallocarray(NULL, ncap, sizeof(*nr));
		if (!nr)
			return false;
		for (uint32_t i = 0; i < s->ring_n; i++)
			nr[i] = s->ring[(s->ring_head + i) % s->ring_cap];
		xfree(s->ring);
		s->ring = nr;
		s->ring_cap = ncap;
		s->ring_head = 0;
	}
	struct hsync_hdr *e = &s->ring[(s->ring_head + s->ring_n) % s->ring_cap];
	e->version = h->version;
	e->merkle_root = h->merkle_root;
	e->time = h->time;
	e->bits = h->bits;
	e->nonce = h->nonce;
	s->ring_n++;
	return true;
}

static bool redownload_one(struct hsync *s, const struct proto_params *p,
                           const struct proto_block_header *h)
{
	int32_t next = s->rd_height + 1;
	if (!proto_hash_eq(&h->prev, &s->rd_last_hash))
		return false;
	if (!permitted_transition(p, next, s->rd_last_bits, h->bits))
		return false;
	struct chain_work w;
	chain_work_of_bits(h->bits, &w);
	chain_work_add(&s->rd_work, &w);
	if (chain_work_cmp(&s->rd_work, &s->threshold) >= 0)
		s->release_all = true;
	struct proto_hash hash;
	proto_block_header_hash(h, &hash);
	/* Past the point of enough work the peer may have grown its chain:
	 * commitments no longer matter there, as in Core. */
	if (!s->release_all && (uint32_t)next % HSYNC_COMMIT_PERIOD == s->commit_offset) {
		if (!s->bits_n || bits_pop(s) != commit_bit(s, &hash))
			return false;
	}
	if (!ring_push(s, h))
		return false;
	s->rd_height = next;
	s->rd_last_hash = hash;
	s->rd_last_bits = h->bits;
	return true;
}

/* Pop what may go to the index into r->release (xmalloc'd). */
static bool pop_ready(struct hsync *s, struct hsync_result *r)
{
	uint32_t k = 0;
	if (s->release_all)
		k = s->ring_n;
	else if (s->ring_n > HSYNC_BUFFER_SIZE)
		k = s->ring_n - HSYNC_BUFFER_SIZE;
	if (!k)
		return true;
	r->release = xreallocarray(NULL, k, sizeof(*r->release));
	if (!r->release)
		return false;
	for (uint32_t i = 0; i < k; i++) {
		const struct hsync_hdr *e = &s->ring[s->ring_head];
		struct proto_block_header *o = &r->release[i];
		o->version = e->version;
		o->prev = s->rd_first_prev;
		o->merkle_root = e->merkle_root;
		o->time = e->time;
		o->bits = e->bits;
		o->nonce = e->nonce;
		proto_block_header_hash(o, &s->rd_first_prev);
		s->ring_head = (s->ring_head + 1) % s->ring_cap;
		s->ring_n--;
	}
	r->n_release = k;
	return true;
}

/* Core's NextHeadersRequestLocator: where we are, then the start's locator. */
static void next_locator(const struct hsync *s, struct hsync_result *r)
{
	r->locator[0] = s->phase == HSYNC_PRESYNC ? s->last_hash : s->rd_last_hash;
	r->n_locator =
	    1 + (uint32_t)chain_node_locator(s->start, r->locator + 1, HSYNC_LOCATOR_MAX - 1);
}

/* Core's ProcessNextHeaders. True when the headers were taken (even if
 * the sync then ended); false: the sync failed and is gone. */
static bool process(struct hsync_table *t, struct hsync *s, const struct proto_params *p,
                    const struct proto_block_header *h, uint32_t n, struct hsync_result *r)
{
	bool full = n == PROTO_MAX_HEADERS;
	bool ok = false;
	r->request_more = false;
	if (s->phase == HSYNC_PRESYNC) {
		ok = presync(s, p, h, n);
		if (ok && (full || s->phase == HSYNC_REDOWNLOAD))
			r->request_more = true;
		r->outcome =
		    ok && r->request_more
		        ? (s->phase == HSYNC_PRESYNC ? HSYNC_OUT_PRESYNC : HSYNC_OUT_REDOWNLOAD)
		        : HSYNC_OUT_ABORTED;
	} else {
		ok = true;
		for (uint32_t i = 0; i < n && ok; i++)
			ok = redownload_one(s, p, &h[i]);
		if (ok)
			ok = pop_ready(s, r);
		if (ok && s->ring_n == 0 && s->release_all) {
			r->outcome = HSYNC_OUT_DONE;
		} else if (ok && full) {
			r->request_more = true;
			r->outcome = HSYNC_OUT_REDOWNLOAD;
		} else {
			r->outcome = HSYNC_OUT_ABORTED;
		}
	}
	r->height = s->phase == HSYNC_PRESYNC ? s->height : s->rd_height;
	if (ok && r->request_more)
		next_locator(s, r);
	else
		drop(t, s->peer_id);
	return ok;
}

/* Core's GetAntiDoSWorkThreshold. */
static void antidos_threshold(struct chain *c, struct chain_work *out)
{
	const struct chain_node *tip = chain_tip(c);
	struct chain_work near = tip->work, step, sub = {{0}};
	chain_work_of_bits(tip->bits, &step);
	/* 144 blocks of the tip's work, capped at the tip's own work. */
	for (int i = 0; i < 144; i++)
		chain_work_add(&sub, &step);
	if (chain_work_cmp(&sub, &near) >= 0) {
		memset(&near, 0, sizeof(near));
	} else {
		/* near -= sub, limb by limb with borrow */
		unsigned __int128 borrow = 0;
		for (int i = 0; i < 4; i++) {
			unsigned __int128 d =
			    (unsigned __int128)near.limb[i] - sub.limb[i] - borrow;
			near.limb[i] = (uint64_t)d;
			borrow = (d >> 64) ? 1 : 0;
		}
	}
	const struct chain_work *min = chain_min_work(c);
	*out = chain_work_cmp(&near, min) > 0 ? near : *min;
}

/* Core's IsAncestorOfBestHeaderOrTip. */
static bool on_best_or_active(struct chain *c, struct chain_node *n)
{
	struct chain_node *best = chain_index_best_header(chain_get_index(c));
	return chain_node_ancestor(best, n->height) == n || chain_contains(c, n);
}

int hsync_on_headers(struct hsync_table *t, struct chain *c, uint64_t peer_id,
                     const struct proto_block_header *h, uint32_t n, struct hsync_result *r)
{
	memset(r, 0, sizeof(*r));
	if (!n)
		return 0;
	const struct proto_params *p = chain_params(c);
	struct hsync **sl = slot_of(t, peer_id);
	if (sl) {
		r->had_sync = true;
		if (process(t, *sl, p, h, n, r)) {
			r->consumed = true;
			return 0;
		}
		/* Failed: the headers go the usual way (maybe a new sync). */
	}
	struct chain_index *idx = chain_get_index(c);
	struct chain_node *start = chain_index_find(idx, &h[0].prev);
	if (!start)
		return 0; /* unconnecting: the usual path answers it */
	struct proto_hash last_hash;
	proto_block_header_hash(&h[n - 1], &last_hash);
	struct chain_node *last = chain_index_find(idx, &last_hash);
	if (last && on_best_or_active(c, last))
		return 0;
	struct chain_work total = start->work, w, threshold;
	for (uint32_t i = 0; i < n; i++) {
		chain_work_of_bits(h[i].bits, &w);
		chain_work_add(&total, &w);
	}
	antidos_threshold(c, &threshold);
	if (chain_work_cmp(&total, &threshold) >= 0)
		return 0;
	r->consumed = true;
	r->height = start->height + (int32_t)n;
	if (n != PROTO_MAX_HEADERS) {
		r->outcome = HSYNC_OUT_IGNORED;
		return 0;
	}
	struct hsync *s = hsync_new(c, peer_id, start, &threshold);
	if (!s)
		return CHAIN_ENOMEM;
	if (t->n == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		struct hsync **nv = xreallocarray(t->v, ncap, sizeof(*nv));
		if (!nv) {
			hsync_free(s);
			return CHAIN_ENOMEM;
		}
		t->v = nv;
		t->cap = ncap;
	}
	t->v[t->n++] = s;
	r->started = true;
	(void)process(t, s, p, h, n, r);
	return 0;
}
