/**
 * daemon/txrelay/orphanage.h: the orphanage: transactions whose parents peerd does
 * not have yet, kept until the parents arrive (Core 29's TxOrphanage at
 * 638a4c0bd8: src/txorphanage.cpp).
 *
 * Glossary
 *   orphan     a transaction rejected with missing inputs, kept with its
 *              raw bytes, the outpoints it spends and who announced it.
 *   announcer  a peer that sent or announced the orphan; parents are asked
 *              of every announcer, and the orphan is forgotten once its
 *              last announcer disconnects (Core's EraseForPeer).
 *   work set   per peer, the orphans to try again because a parent was
 *              accepted (Core's m_work_set): each goes to one announcer,
 *              picked at random.
 *
 * Limits as Core's: at most ORPHAN_MAX transactions (random eviction past
 * it, Core's -maxorphantx default), none over ORPHAN_MAX_WEIGHT, each
 * expiring ORPHAN_EXPIRE_S after it was added, expired ones swept at most
 * every ORPHAN_SWEEP_S. With so few entries every lookup is a scan.
 *
 * Thread: the loop thread owns it; it knows nothing of sockets, so the
 * unit tests drive it with their own clock and random numbers.
 */
#ifndef PEERD_DAEMON_TXRELAY_ORPHANAGE_H
#define PEERD_DAEMON_TXRELAY_ORPHANAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/** Orphans kept at most (Core DEFAULT_MAX_ORPHAN_TRANSACTIONS). */
#define ORPHAN_MAX 100u
/** Heaviest orphan kept, weight units (Core MAX_STANDARD_TX_WEIGHT). */
#define ORPHAN_MAX_WEIGHT 400000u
/** An orphan is dropped this long after it was added (Core ORPHAN_TX_EXPIRE_TIME). */
#define ORPHAN_EXPIRE_S (20 * 60)
/** Expired orphans are swept at most this often (Core ORPHAN_TX_EXPIRE_INTERVAL). */
#define ORPHAN_SWEEP_S (5 * 60)
/** Work-set entries kept at most, all peers (each names an orphan and a peer). */
#define ORPHAN_MAX_WORK 4096u

/** One orphan. Pointers into it are valid until the orphanage changes. */
struct orphan_tx {
	struct proto_hash txid, wtxid;
	uint8_t *raw; /**< the transaction with witness, xmalloc'd */
	uint32_t len;
	uint32_t weight;
	uint32_t n_out;                  /**< outputs (children look for them) */
	struct proto_outpoint *prevouts; /**< one per input, xmalloc'd */
	uint32_t n_in;
	uint64_t *announcers; /**< peer ids, xmalloc'd */
	uint32_t n_ann, cap_ann;
	int64_t expire; /**< seconds */
};

/** A random number in [0, n) for eviction and announcer choice (n > 0). */
typedef uint64_t (*orphan_rand_fn)(void *arg, uint64_t n);

/** Work to do: orphan `wtxid` to retry on behalf of `peer`. */
struct orphan_work {
	uint64_t peer;
	struct proto_hash wtxid;
};

struct orphanage {
	struct orphan_tx *v; /**< n used, unordered (eviction picks an index) */
	uint32_t n, cap;
	struct orphan_work *work; /**< FIFO by insertion */
	uint32_t n_work, cap_work;
	int64_t next_sweep;
	uint64_t total_weight;
	uint64_t total_announcements;
	orphan_rand_fn rand;
	void *rand_arg;
	/* counters for getstats */
	uint64_t added, expired, evicted, too_heavy, erased_for_block, accepted;
};

/** An empty orphanage; rand NULL uses proto_random_u64. Allocates nothing. */
void orphan_init(struct orphanage *o, orphan_rand_fn rand, void *rand_arg);
/** Free every orphan; the orphanage is then empty and reusable. */
void orphan_release(struct orphanage *o);

/**
 * Keep `tx` (ids computed; raw is its serialization with witness, copied)
 * as announced by `peer`. When the wtxid is there already, `peer` is added
 * as an announcer instead. Returns 1 when a new orphan was added, 0 when
 * not (already there, or heavier than ORPHAN_MAX_WEIGHT), -ENOMEM.
 * `now` is in seconds. Call orphan_limit after adding.
 */
int orphan_add(struct orphanage *o, const struct proto_tx *tx, const uint8_t *raw, size_t len,
               uint64_t peer, int64_t now);
/** Add `peer` as an announcer of an orphan. True when it was new to it. */
bool orphan_add_announcer(struct orphanage *o, const struct proto_hash *wtxid, uint64_t peer);
/** The orphan with this wtxid, or NULL. */
const struct orphan_tx *orphan_get(const struct orphanage *o, const struct proto_hash *wtxid);
/** Whether peer announced the orphan with this wtxid. */
bool orphan_have_from_peer(const struct orphanage *o, const struct proto_hash *wtxid,
                           uint64_t peer);
/** Forget an orphan. 1 when it was there, else 0. */
int orphan_erase(struct orphanage *o, const struct proto_hash *wtxid);
/** A peer went: it is no announcer any more; orphans left without one go. Returns how many. */
unsigned orphan_erase_for_peer(struct orphanage *o, uint64_t peer);
/**
 * Core's LimitOrphans: sweep the expired ones (at most every
 * ORPHAN_SWEEP_S), then evict at random down to `max`. Returns how many
 * went.
 */
unsigned orphan_limit(struct orphanage *o, uint32_t max, int64_t now);
/**
 * Core's AddChildrenToWorkSet: a transaction with this txid and n_out
 * outputs entered the mempool; every orphan spending one of its outputs
 * goes to the work set of one of its announcers, picked at random.
 * Returns how many orphans were queued.
 */
unsigned orphan_add_children_to_workset(struct orphanage *o, const struct proto_hash *txid,
                                        uint32_t n_out);
/**
 * Core's GetTxToReconsider: the next orphan of peer's work set still in
 * the orphanage (taken off the set), or NULL.
 */
const struct orphan_tx *orphan_take_work(struct orphanage *o, uint64_t peer);
/** Any peer with work: true and its id in *peer (the oldest entry's). */
bool orphan_next_worker(const struct orphanage *o, uint64_t *peer);
/**
 * Core's EraseForBlock: orphans that spend any of these outpoints (the
 * inputs of a connected block's transactions) can never be valid: they go.
 * Returns how many.
 */
unsigned orphan_erase_spending(struct orphanage *o, const struct proto_outpoint *spent,
                               size_t n_spent);
/** Orphans kept now. */
static inline uint32_t orphan_count(const struct orphanage *o)
{
	return o->n;
}

#endif
