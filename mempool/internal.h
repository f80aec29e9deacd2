/**
 * mempool/internal.h: what the mempool's files share (mempool.c: the
 * entries, indexes, adding, removal, trimming, and attaching to a chain;
 * query.c: reading it; chain_events.c: following blocks and reorgs;
 * accept.c: acceptance; rules.c: the acceptance rules that read the pool;
 * package.c: packages; persist.c: mempool.dat;
 * unbroadcast.c: the unbroadcast set). Only mempool/'s files include it:
 * everyone else, mining/assemble.c included, reads the pool through
 * mempool/mempool.h.
 *
 * Threads: the chain's thread only.
 */
#ifndef PEERD_MEMPOOL_INTERNAL_H
#define PEERD_MEMPOOL_INTERNAL_H

#include "base/alloc.h"
#include "mempool/mempool.h"
#include "script/script.h"

/** Core's MEMPOOL_HEIGHT: the height a coin created by a mempool transaction reports. */
#define MEMPOOL_HEIGHT 0x7fffffff
/** Core's TRUC_VERSION and its limits (policy/truc_policy.h). */
#define MEMPOOL_TRUC_VERSION         3
#define MEMPOOL_TRUC_MAX_VSIZE       10000
#define MEMPOOL_TRUC_CHILD_MAX_VSIZE 1000

/** A growable array of entry pointers. */
struct mp_refs {
	struct mempool_entry **v;
	uint32_t n, cap;
};

/** How many mempool_listen listeners a pool keeps. */
#define MP_MAX_EXTRA_LISTENERS 2

struct mempool_entry {
	struct proto_tx tx; /* owned copy, ids computed */
	int64_t fee, modified_fee, time;
	int64_t vsize;
	int64_t sigop_cost;
	uint64_t sequence;
	int32_t height;
	uint32_t weight;
	bool spends_coinbase;
	bool in_package; /* accepted through package.c (Core's m_submitted_in_package) */
	uint32_t pos;    /* index into pool->entries */
	uint64_t mark;   /* traversal epoch */
	uint64_t anc_count, anc_size, desc_count, desc_size;
	int64_t anc_fees, desc_fees;
	struct mp_refs parents, children;
	size_t usage;
};

/** outpoint -> the entry spending it (Core's mapNextTx). */
struct mp_spend {
	struct proto_outpoint op;
	struct mempool_entry *e; /* NULL: empty slot */
};

/** A prioritisetransaction delta (Core's mapDeltas). */
struct mp_delta {
	struct proto_hash txid;
	int64_t delta;
};

struct chain_script_cache;

struct mempool {
	struct chain *c;
	struct mempool_config cfg; /* defaults filled in */
	struct mempool_policy policy;
	char *path; /* <dir>/mempool.dat */
	struct mempool_entry **entries;
	size_t n, cap;
	/* open addressing with linear probing, backward-shift deletion */
	struct mempool_entry **by_txid, **by_wtxid;
	size_t id_mask; /* both tables have id_mask + 1 slots */
	struct mp_spend *spends;
	size_t spend_mask, n_spends;
	uint8_t key[16]; /* SipHash key of all three */
	struct mp_delta *deltas;
	size_t n_deltas, cap_deltas;
	/* Core's m_unbroadcast_txids: sendrawtransaction's txids no peer has fetched yet */
	struct proto_hash *unbcast;
	size_t n_unbcast, cap_unbcast;
	uint64_t sequence;
	uint64_t prioritised; /* prioritisations of entries in the pool: mempool_updates */
	uint64_t epoch;
	uint64_t total_vsize;
	int64_t total_fee;
	size_t usage;     /* sum of the entries' usage (their transactions, as Core counts) */
	size_t n_links;   /* parent-child pairs in the pool */
	size_t rand_cap;  /* what Core's txns_randomized vector's capacity would be */
	int64_t min_time; /* at most the oldest entry's time: expiry scans only when it matters */
	double rolling_min;
	int64_t last_rolling_update;
	bool block_since_bump;
	bool loaded;
	bool quiet;               /* no events (package test entries) */
	bool reorg_pending;       /* blocks were disconnected: re-add and re-check at the end */
	struct mempool_events ev; /* mempool_set_events: relay's */
	/* mempool_listen: more listeners (notifications, fee estimation) */
	struct mempool_events ev_extra[MP_MAX_EXTRA_LISTENERS];
	struct mempool_stats stats;
	/* transactions of blocks disconnected and not yet re-added (reorg) */
	struct proto_tx *disconnected;
	size_t n_disconnected, cap_disconnected;
	/* per-accept scratch */
	struct mp_refs scratch_a, scratch_b, scratch_c;
};

/* ---- mempool.c ---------------------------------------------------------- */

/** Create a pool for c from cfg (defaults filled in). 0 or CHAIN_ENOMEM. */
CHAIN_WUR int mp_new(struct mempool **out, struct chain *c, const struct mempool_config *cfg,
                     const char *dir);
/** Free everything; NULL is fine. */
void mp_free(struct mempool *mp);

/** Entry by txid / wtxid. */
struct mempool_entry *mp_find_txid(const struct mempool *mp, const struct proto_hash *h);
struct mempool_entry *mp_find_wtxid(const struct mempool *mp, const struct proto_hash *h);
/** The entry spending op, or NULL. */
struct mempool_entry *mp_spender(const struct mempool *mp, const struct proto_outpoint *op);
/** The prioritisation delta of txid (0 when none). */
int64_t mp_delta_of(const struct mempool *mp, const struct proto_hash *txid);
/** A new epoch for marking entries visited. */
uint64_t mp_new_epoch(struct mempool *mp);
/** Append to a refs array. 0 or CHAIN_ENOMEM. */
CHAIN_WUR int mp_refs_push(struct mp_refs *r, struct mempool_entry *e);
void mp_refs_release(struct mp_refs *r);
/**
 * Add e and all its in-pool descendants (not yet marked with epoch `ep`)
 * to out, marking them. 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mp_collect_descendants(struct mempool *mp, struct mempool_entry *e, uint64_t ep,
                                     struct mp_refs *out);

/**
 * Insert a new entry (the tx moved into it) with its direct parents
 * `parents` (in-pool entries) and update every ancestor's descendant
 * figures. The entry's own ancestor figures are computed here. Fires
 * `added` (unless quiet). 0 or CHAIN_ENOMEM (nothing changed).
 */
CHAIN_WUR int mp_add_entry(struct mempool *mp, struct mempool_entry *e,
                           const struct mp_refs *parents, enum mempool_addition how);
/**
 * Remove the entries in `set` (a set closed under descendants, or
 * `mined` for entries leaving with a block whose descendants stay) with
 * reason `why`: fixes relatives' figures, fires `removed`, frees them.
 */
void mp_remove_set(struct mempool *mp, struct mp_refs *set, enum mempool_removal why, bool mined);
/** Remove e and its descendants. */
void mp_remove_recursive(struct mempool *mp, struct mempool_entry *e, enum mempool_removal why);
/** Core's LimitMempoolSize: expire, then trim to the size. Returns how many left. */
size_t mp_limit(struct mempool *mp);
/** Core's TrimToSize to `limit` bytes of usage. Returns how many left. */
size_t mp_trim(struct mempool *mp, size_t limit);
/** Core's GetMinFee (sat/kvB, already maxed with the incremental feerate when not 0). */
int64_t mp_min_fee(struct mempool *mp);
/** Free an entry that is out of the indexes. */
void mp_entry_free(struct mempool_entry *e);
/** Forget txid in the unbroadcast set (it left the pool); absent is fine. */
void mp_unbroadcast_drop(struct mempool *mp, const struct proto_hash *txid);
/** Drop the kept transactions of disconnected blocks. */
void mp_free_disconnected(struct mempool *mp);
/** Every ancestor of e (e excluded) into out, marked with ep. 0 or CHAIN_ENOMEM. */
CHAIN_WUR int mp_collect_ancestors(struct mempool_entry *e, uint64_t ep, struct mp_refs *out);
/** Core's CompareTxMemPoolEntryByDescendantScore: a is trimmed before b. */
bool mp_desc_less(const struct mempool_entry *a, const struct mempool_entry *b);
/** Forget txid's prioritisation (it was mined). */
void mp_clear_delta(struct mempool *mp, const struct proto_hash *txid);
/** Core's CFeeRate(fee, vsize).GetFeePerK(). */
int64_t mp_feerate_of(int64_t fee, int64_t vsize);
/** Core's RecursiveDynamicUsage of tx as a CTransactionRef (an entry's own usage). */
size_t mp_entry_usage(const struct proto_tx *tx);
/** Core's CTxMemPool::DynamicMemoryUsage for this pool: getmempoolinfo's usage, the trim point. */
size_t mp_usage(const struct mempool *mp);
/** Deep copy of a transaction (owned storage, ids computed). 0 or CHAIN_ENOMEM. */
CHAIN_WUR int mp_tx_copy(struct proto_tx *dst, struct proto_tx *src);

/* ---- accept.c ------------------------------------------------------------ */

/** How mp_accept runs (Core's ATMPArgs). */
struct mp_args {
	bool test_accept;       /* judge only */
	bool bypass_limits;     /* no fee floors, no trim */
	bool allow_replacement; /* else a conflict is "bip125-replacement-disallowed" */
	bool allow_carveouts;   /* CPFP carve-out and the single-conflict allowance */
	bool no_trim;           /* add without LimitMempoolSize (package test entries) */
	bool trusted;           /* skip script checks: the entry passed them before (reorg) */
	int64_t accept_time;    /* 0: now */
	enum mempool_addition how;
	/* Package evaluation (package.c, Core's m_package_feerates):
	 * no mempool-minimum or min-relay feerate check of the tx alone (the
	 * package's feerate is checked instead; a non-TRUC tx must still pay
	 * the min relay fee itself) and no ephemeral-spend check (done over
	 * the package). */
	bool package_feerates;
	int64_t max_feerate; /* sat/kvB: "max feerate exceeded" above it (0: none) */
	/* Earlier package transactions, not in the pool: their outputs are
	 * visible as unconfirmed coins (Core's PackageAddTransaction). */
	struct proto_tx *const *package;
	size_t n_package;
};

/** Whether r holds e. */
static inline bool mp_refs_has(const struct mp_refs *r, const struct mempool_entry *e)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->v[i] == e)
			return true;
	}
	return false;
}

/** Append e unless r holds it. 0 or CHAIN_ENOMEM. */
static inline int mp_refs_add_unique(struct mp_refs *r, struct mempool_entry *e)
{
	return mp_refs_has(r, e) ? 0 : mp_refs_push(r, e);
}

/* ---- accept.c and rules.c: one acceptance ------------------------------------ */

/* The work of one acceptance (Core's Workspace). */
struct mp_ws {
	struct mempool *mp;
	struct chain *c;
	struct proto_tx *tx;
	const struct mp_args *a;
	struct chain_state *st;
	struct chain_node *tip;
	struct chain_coin *prev; /* n_in */
	size_t *off;             /* script offset into arena, SIZE_MAX: points elsewhere */
	int32_t *heights;        /* n_in */
	/* coins this accept read into the cache (Core's coins_to_uncache),
	 * forgotten again on a reject */
	struct proto_outpoint *uncache;
	size_t n_uncache;
	uint8_t *arena; /* scripts of coins from the cache */
	size_t arena_len, arena_cap;
	struct mp_refs parents;       /* direct in-pool parents, unique */
	struct mp_refs conflicts;     /* direct conflicts, unique */
	struct mp_refs all_conflicts; /* conflicts and their descendants */
	struct mp_refs ancestors;
	int64_t fee, mfee, vsize, conflicting_fees, conflicting_size;
	uint32_t sigops;
	bool spends_coinbase, sibling_eviction;
	char hex[65]; /* txid */
};

/*
 * The rules that read the pool (rules.c), in the order accept.c calls
 * them. Each returns 0, CHAIN_EINVALID with w->st set, or a fatal error.
 */
/** Core's ancestor/descendant limits with the CPFP carve-out; fills w->ancestors. */
CHAIN_WUR int mp_check_limits(struct mp_ws *w);
/** Core's SingleTRUCChecks. */
CHAIN_WUR int mp_truc_checks(struct mp_ws *w);
/** Core's ReplacementChecks (policy/rbf.cpp) over w->conflicts. */
CHAIN_WUR int mp_replacement_checks(struct mp_ws *w);
/** Core's CheckEphemeralSpends for one transaction. */
CHAIN_WUR int mp_ephemeral_spends(struct mp_ws *w);

/** Core's IsWellFormedPackage with require_sorted: true when well formed, else pkg says why. */
bool mp_package_well_formed(struct proto_tx *const *txs, size_t n,
                            struct mempool_package_state *pkg);

/**
 * Core's CalculateAncestorsAndCheckLimits: walk the ancestors of `count`
 * new transactions of `vsize` vbytes in all whose direct in-pool parents
 * are `parents`, in Core's (txid) order, into `out` (reset here). Returns
 * 0, 1 with msg set when over a limit (ancestor_count etc. from lim[0..3]:
 * ancestor count, ancestor vbytes, descendant count, descendant vbytes),
 * or CHAIN_ENOMEM.
 */
CHAIN_WUR int mp_calc_ancestors(struct mempool *mp, const struct mp_refs *parents, uint64_t vsize,
                                uint64_t count, const uint64_t lim[4], struct mp_refs *out,
                                char *msg, size_t cap);

/** One transaction through acceptance; see mempool_accept. */
CHAIN_WUR int mp_accept(struct mempool *mp, struct proto_tx *tx, const struct mp_args *a,
                        struct mempool_accept_result *r);

/* ---- chain_events.c: the chain listener's callbacks ----------------------- */

/** Core's removeForBlock: b was just connected. */
void mp_block_connected(void *ctx, struct chain *c, struct proto_block *b);
/** Keep b's transactions (but the coinbase) for re-adding after the reorg. 0 or CHAIN_ENOMEM. */
int mp_block_disconnected(void *ctx, struct chain *c, struct proto_block *b);
/**
 * Core's MaybeUpdateMempoolForReorg once the tip settled: re-add the kept
 * transactions, then re-check every entry against the new tip (removing
 * the non-final, immature and now invalid with reason reorg). 0 or a
 * fatal error.
 */
int mp_chain_settled(void *ctx, struct chain *c);

/* ---- persist.c ---------------------------------------------------------- */

/** Read mempool.dat into the pool (a damaged file is logged and skipped). */
void mp_load(struct mempool *mp);

/** Tell the listeners (mempool_set_events, then mempool_listen) that e entered. */
void mp_fire_added(struct mempool *mp, const struct mempool_entry *e, enum mempool_addition how);
/** Tell the listeners that e left (it is out of the indexes, its tx intact). */
void mp_fire_removed(struct mempool *mp, const struct mempool_entry *e, enum mempool_removal why);

#endif
