/**
 * mempool/mempool.h: the mempool: transactions that are valid on top of the
 * active chain and may go in the next block, kept with Core 29's policy
 * (validation.cpp's MemPoolAccept, txmempool.cpp, policy/rbf.cpp,
 * policy/truc_policy.cpp, policy/ephemeral_policy.cpp) and saved in Core's
 * mempool.dat format.
 *
 * The public face of mempool/ (its standardness rules are the part
 * mempool/policy.h, included here). The mempool sees the chain through
 * chain/chain.h only and follows it as a listener (struct chain_listener):
 * chain/ knows nothing of it.
 *
 * Glossary
 *   entry          one mempool transaction with its fee, size, time and
 *                  the bookkeeping of its in-mempool relatives
 *                  (Core's CTxMemPoolEntry). Opaque; read it through
 *                  mempool_entry_info and the accessors below.
 *   parent/child   an entry that spends an output of another entry.
 *   ancestors      parents, their parents, ...; "ancestor count/size/fees"
 *                  include the entry itself, as Core's.
 *   descendants    children, their children, ...; counts include the entry.
 *   modified fee   the fee plus a prioritisetransaction delta (Core's
 *                  GetModifiedFee); equal to the fee unless prioritised.
 *   vsize          Core's GetTxSize: max(weight, sigop cost * bytes per
 *                  sigop) / 4 rounded up (mempool_policy_vsize).
 *   feerate        satoshis per 1,000 vbytes (sat/kvB), Core's CFeeRate.
 *   min fee        the rolling minimum feerate (Core's GetMinFee): raised
 *                  when the pool trims itself to its size limit, decaying
 *                  back with a 12-hour half-life (shorter while the pool
 *                  is small).
 *   sequence       a counter bumped at every addition and removal (Core's
 *                  mempool sequence number, getrawmempool's
 *                  mempool_sequence); each entry keeps the value it
 *                  entered with.
 *   script cache   a salted hash of (wtxid, script flags) of transactions
 *                  whose scripts all passed (Core's
 *                  m_script_execution_cache); ConnectBlock skips the script
 *                  checks of a transaction found there.
 *
 * Ownership: whoever opens the chain attaches its mempool (mempool_open,
 * from chain_config's `attach`, which hands back the pool; then
 * mempool_load once chain_open returned) and detaches it (mempool_close,
 * right before chain_close: it saves when persisting). The other
 * mempool_* calls take that pool, as Core's take its CTxMemPool: whoever
 * opened it keeps the pointer and hands it on (peerd's validation thread
 * gives it to every job), as Core's NodeContext holds the mempool and
 * hands it to PeerManager. Entry pointers and
 * the transactions they hold belong to the mempool and stay valid until
 * that entry is removed (by any mempool_* call that changes the pool,
 * by a block connected or disconnected, or by chain_close); copy what you
 * keep.
 *
 * Threads: the chain's thread (the validation thread) only, like every
 * other chain/ call. Script checks run on the chain's check queue workers
 * inside mempool_accept.
 */
#ifndef PEERD_MEMPOOL_H
#define PEERD_MEMPOOL_H

#include "chain/chain.h"

#define PEERD_MEMPOOL_PARTS
#include "mempool/policy.h"
#undef PEERD_MEMPOOL_PARTS

/* ---------------------------------------------------------------------- */
/* Configuration                                                           */

/** Core's DEFAULT_MAX_MEMPOOL_SIZE_MB (-maxmempool): 300 MB, in bytes of memory usage. */
#define MEMPOOL_DEFAULT_MAX_BYTES (300u * 1000u * 1000u)
/** Core's DEFAULT_MEMPOOL_EXPIRY_HOURS (-mempoolexpiry): 336 h, in seconds. */
#define MEMPOOL_DEFAULT_EXPIRY (336 * 60 * 60)
/** Core's DEFAULT_ANCESTOR_LIMIT / DEFAULT_DESCENDANT_LIMIT: entries, itself included. */
#define MEMPOOL_DEFAULT_CHAIN_COUNT 25u
/** Core's DEFAULT_ANCESTOR_SIZE_LIMIT_KVB / DEFAULT_DESCENDANT_SIZE_LIMIT_KVB, in vbytes. */
#define MEMPOOL_DEFAULT_CHAIN_VBYTES 101000u
/** Core's EXTRA_DESCENDANT_TX_SIZE_LIMIT: the CPFP carve-out's largest transaction, vbytes. */
#define MEMPOOL_CARVEOUT_VBYTES 10000u
/** Core's MAX_REPLACEMENT_CANDIDATES: most transactions one replacement may evict. */
#define MEMPOOL_MAX_REPLACEMENTS 100u
/** Core's ROLLING_FEE_HALFLIFE: the rolling minimum fee's half-life, seconds. */
#define MEMPOOL_FEE_HALFLIFE (60 * 60 * 12)
/** Core's MAX_PACKAGE_COUNT: most transactions in a package. */
#define MEMPOOL_MAX_PACKAGE_COUNT 25u
/** Core's MAX_PACKAGE_WEIGHT: heaviest package, weight units. */
#define MEMPOOL_MAX_PACKAGE_WEIGHT 404000u
/** Core's MEMPOOL_DUMP_VERSION (mempool.dat with an XOR key). */
#define MEMPOOL_DUMP_VERSION 2u
/** Core's MEMPOOL_DUMP_VERSION_NO_XOR_KEY; read, never written. */
#define MEMPOOL_DUMP_VERSION_NO_XOR_KEY 1u

/**
 * Mempool settings (mempool_open). A zeroed struct means Core's
 * defaults for every number, the network's default policy
 * (mempool_policy_default) and no mempool.dat.
 */
struct mempool_config {
	size_t max_bytes;             /**< -maxmempool in bytes of usage (0: 300 MB) */
	int64_t expiry;               /**< -mempoolexpiry in seconds (0: 336 h) */
	uint32_t ancestor_count;      /**< -limitancestorcount (0: 25) */
	uint32_t ancestor_vbytes;     /**< -limitancestorsize in vbytes (0: 101,000) */
	uint32_t descendant_count;    /**< -limitdescendantcount (0: 25) */
	uint32_t descendant_vbytes;   /**< -limitdescendantsize in vbytes (0: 101,000) */
	bool persist;                 /**< -persistmempool: load at open, save at close */
	bool policy_set;              /**< use `policy` below (else mempool_policy_default) */
	struct mempool_policy policy; /**< relay knobs: min relay fee, dust, datacarrier, ... */
};

/** The pool: opaque (mempool/internal.h is mempool/'s own). */
struct mempool;

/**
 * Attach a mempool to c (which has none): create it from cfg (NULL:
 * zeroed) and register it as c's listener. Call it from chain_config's
 * `attach`, so the pool follows the blocks chain_open replays and
 * activates as it always did, or on an open chain. `dir` is the chain's
 * directory (mempool.dat's). *out (when not NULL) gets the pool, which
 * belongs to c until mempool_close. 0, CHAIN_ENOMEM or CHAIN_EOVERFLOW (c
 * has no room for another listener). The chain's thread.
 */
CHAIN_WUR int mempool_open(struct chain *c, const struct mempool_config *cfg, const char *dir,
                           struct mempool **out);
/**
 * With cfg->persist, read `<dir>/mempool.dat` into mp (a damaged file is
 * logged and skipped): once chain_open returned, so each transaction is
 * judged against the settled tip. Nothing when mp is NULL.
 */
void mempool_load(struct mempool *mp);
/**
 * Detach mp from its chain and free it, saving it first when persisting
 * and it was loaded (a failure is logged: "could not save the mempool").
 * Nothing when mp is NULL. Call before chain_close (which frees a pool
 * still attached without saving it).
 */
void mempool_close(struct mempool *mp);

/* ---------------------------------------------------------------------- */
/* Accepting transactions                                                  */

/** How to accept (Core's MemPoolAccept::ATMPArgs). Zeroed: a plain relay accept. */
struct mempool_accept_opts {
	bool test_accept;    /**< testmempoolaccept: check everything, change nothing */
	bool bypass_limits;  /**< skip the fee floors and the size trim (reorg re-adds, load) */
	int64_t accept_time; /**< entry time, seconds (0: the chain's clock) */
};

/**
 * What accepting one transaction found. Initialise with
 * mempool_accept_result_init, free with mempool_accept_result_release (the
 * arrays are xmalloc'd). Filled as far as validation got: txid, wtxid
 * always; vsize and fee once known (`fee_known`). testmempoolaccept
 * prints vsize and "fees" only for an allowed tx, and for a rejected one
 * "reject-reason" (state.reason; "missing-inputs" for
 * CHAIN_RESULT_TX_MISSING_INPUTS) and "reject-details" (reason, and
 * ", debug" when debug is not empty: Core's ValidationState::ToString).
 */
struct mempool_accept_result {
	bool accepted;           /**< in the mempool now (with test_accept: would be) */
	bool already_in_mempool; /**< the same wtxid was there already (Core's MEMPOOL_ENTRY) */
	bool validated; /**< package test: this tx was judged (else the package stopped first) */
	struct chain_state state; /**< the verdict when rejected: kind, Core's reason, debug */
	struct proto_hash txid, wtxid;
	bool fee_known;            /**< vsize, fee and the feerate below are set */
	int64_t vsize;             /**< Core's virtual size (with sigops) */
	int64_t fee;               /**< base fee, satoshis */
	int64_t effective_feerate; /**< sat/kvB the tx was judged at (its own, or its package's) */
	/** wtxids the effective feerate was computed over (itself for a single tx). */
	struct proto_hash *effective_includes;
	size_t n_effective_includes;
	/** Transactions this one replaced (RBF), txids and wtxids in the same order. */
	struct proto_hash *replaced_txids, *replaced_wtxids;
	size_t n_replaced;
	/** A tx with the same txid but another witness is in the pool (Core's m_other_wtxid). */
	bool has_other_wtxid;
	struct proto_hash other_wtxid;
	/** For CHAIN_RESULT_TX_MISSING_INPUTS: the txids of the missing parents, unique. */
	struct proto_hash *missing_parents;
	size_t n_missing_parents;
};

/** Zero a result (allocates nothing). */
void mempool_accept_result_init(struct mempool_accept_result *r);
/** Free a result's arrays; it is then as after init. */
void mempool_accept_result_release(struct mempool_accept_result *r);

/**
 * Core's AcceptToMemoryPool for one transaction: PreChecks (Core's order
 * and reasons), replacement rules, TRUC, ephemeral dust, package limits,
 * scripts on the worker pool with the standard flags (a failure re-run
 * without the non-mandatory flags to pick `non-mandatory-script-verify-flag
 * (...)` or `mandatory-script-verify-flag-failed (...)`), then the tip's
 * block flags (filling the script cache); then, unless opts->test_accept,
 * the tx enters the pool (evicting what it replaces) and the pool is
 * trimmed to its size (the tx itself may be trimmed: "mempool full").
 * `tx` is the caller's and is copied; its ids are computed. opts may be
 * NULL. `r` (initialised by the caller; released and refilled here) says
 * what happened. Returns 0 when a verdict was reached (accepted or not:
 * see r->accepted and r->state), or a fatal error (CHAIN_ENOMEM, the
 * coins database's errors).
 */
CHAIN_WUR int mempool_accept(struct mempool *mp, struct proto_tx *tx,
                             const struct mempool_accept_opts *opts,
                             struct mempool_accept_result *r);

/** A package's verdict as a whole (Core's PackageValidationResult). */
enum mempool_package_result {
	MEMPOOL_PACKAGE_UNSET = 0, /**< no package-wide failure */
	MEMPOOL_PACKAGE_POLICY,    /**< the package breaks a package rule (reason says which) */
	MEMPOOL_PACKAGE_TX,        /**< at least one transaction failed ("transaction failed") */
	MEMPOOL_PACKAGE_MEMPOOL_ERROR, /**< the mempool could not take it */
};

/** Package-wide verdict: kind plus Core's reason and debug ("package-not-sorted", ...). */
struct mempool_package_state {
	enum mempool_package_result result;
	char reason[CHAIN_REASON_MAX];
	char debug[CHAIN_DEBUG_MAX];
};

/**
 * testmempoolaccept with several transactions (Core's ProcessNewPackage
 * with test_accept: AcceptMultipleTransactions): package rules first
 * (package-too-many-transactions, package-too-large,
 * package-contains-duplicates, package-not-sorted, conflict-in-package),
 * then each transaction in order against the chain, the pool and the
 * earlier ones (their outputs visible, their spends conflicts). Nothing is
 * added to the pool. `results[i]` (n of them, initialised by the caller)
 * gets transaction i's verdict; results[i].validated is false for those
 * not reached. `pkg` gets the package verdict. 0 or a fatal error.
 */
CHAIN_WUR int mempool_test_package(struct mempool *mp, struct proto_tx *const *txs, size_t n,
                                   struct mempool_accept_result *results,
                                   struct mempool_package_state *pkg);

/** How submitpackage runs (Core's ATMPArgs::PackageChildWithParents). Zeroed: no ceiling. */
struct mempool_package_opts {
	/** Core's client_maxfeerate in sat/kvB: a tx whose own modified feerate is
	 * higher fails with "max feerate exceeded" (0: none). */
	int64_t max_feerate;
	int64_t accept_time; /**< entry time, seconds (0: the chain's clock) */
};

/**
 * Core's ProcessNewPackage without test_accept (AcceptPackage, Core 29):
 * submitpackage's validation. The package must be well formed (the
 * reasons of mempool_test_package) and, with more than one
 * transaction, one child (the last) with parents that are its inputs
 * ("package-not-child-with-parents") and every other input of the child
 * confirmed ("package-not-child-with-unconfirmed-parents"); then each
 * transaction not in the pool yet is tried alone (replacement allowed, no
 * CPFP carve-out); those that failed only on their feerate
 * (CHAIN_RESULT_TX_RECONSIDERABLE) or on inputs another package member
 * creates are tried again together with the package feerate (total
 * modified fees over total vsize) against the mempool minimum and the
 * min relay fee, the package's ancestor/descendant limits
 * ("package-mempool-limits"), TRUC's package rules and ephemeral dust
 * ("unspent-dust"). A non-TRUC tx must still pay the min relay fee on its
 * own, as Core's. Accepted transactions enter the pool (firing `added`),
 * then the pool is trimmed once ("mempool full" for a member trimmed).
 *
 * results[i] (n, initialised by the caller) for transaction i:
 * `validated` false when the package failed before any was judged (then
 * pkg says why); else accepted && !already_in_mempool: newly accepted,
 * with effective_feerate/effective_includes (its own or its package's)
 * and replaced_*; already_in_mempool: the same wtxid was there (vsize,
 * fee); has_other_wtxid: the same txid with another witness is there;
 * !accepted: rejected (state). `pkg` gets the package verdict
 * (MEMPOOL_PACKAGE_UNSET on success). 0 or a fatal error.
 */
CHAIN_WUR int mempool_submit_package(struct mempool *mp, struct proto_tx *const *txs, size_t n,
                                     const struct mempool_package_opts *opts,
                                     struct mempool_accept_result *results,
                                     struct mempool_package_state *pkg);

/* ---------------------------------------------------------------------- */
/* Queries                                                                 */

/** One mempool transaction; opaque (see the glossary). */
struct mempool_entry;

/** An entry's figures (Core's getmempoolentry). Plain value. */
struct mempool_entry_info {
	struct proto_hash txid, wtxid;
	int64_t vsize; /**< Core's vsize (sigop-adjusted) */
	uint32_t weight;
	int64_t fee;                            /**< base fee */
	int64_t modified_fee;                   /**< fee plus prioritisation */
	int64_t time;                           /**< entry time, seconds since the epoch */
	int32_t height;                         /**< tip height when it entered */
	uint64_t sequence;                      /**< the pool's sequence number when it entered */
	uint64_t ancestor_count, ancestor_size; /**< itself included; size in vbytes */
	int64_t ancestor_fees;                  /**< modified fees, itself included */
	uint64_t descendant_count, descendant_size;
	int64_t descendant_fees;
	size_t n_parents, n_children; /**< direct in-mempool relatives */
	bool bip125_replaceable;      /**< signals BIP125 itself or through an ancestor */
	bool in_package; /**< accepted as part of a package (Core's m_submitted_in_package) */
	size_t usage;    /**< bytes of memory the entry takes (Core's DynamicMemoryUsage) */
};

/** The entry with this txid (wtxid false) or wtxid (true), or NULL. */
const struct mempool_entry *mempool_find(struct mempool *mp, const struct proto_hash *id,
                                         bool wtxid);
/** Fill *out with e's figures. */
void mempool_entry_info(const struct mempool_entry *e, struct mempool_entry_info *out);
/** e's transaction (owned by the pool; ids computed). */
const struct proto_tx *mempool_entry_tx(const struct mempool_entry *e);
/** e's txid and wtxid. */
const struct proto_hash *mempool_entry_txid(const struct mempool_entry *e);
const struct proto_hash *mempool_entry_wtxid(const struct mempool_entry *e);
/**
 * e's direct parents (children) into out[0..cap); returns how many there
 * are, which may be more than cap.
 */
size_t mempool_entry_parents(const struct mempool_entry *e, const struct mempool_entry **out,
                             size_t cap);
size_t mempool_entry_children(const struct mempool_entry *e, const struct mempool_entry **out,
                              size_t cap);
/**
 * The raw transaction (with witness) of the entry with this txid or wtxid,
 * xmalloc'd for the caller to free. 0, CHAIN_ENOTFOUND or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_get_raw(struct mempool *mp, const struct proto_hash *id, bool wtxid,
                              uint8_t **raw, size_t *len);
/** The entry spending outpoint op, or NULL (gettxout's include_mempool, orphans). */
const struct mempool_entry *mempool_spender(struct mempool *mp, const struct proto_outpoint *op);

/** Orders for mempool_list. */
enum mempool_order {
	/** Core's GetSortedDepthAndScore: fewest ancestors first, then higher
	 * modified feerate, then txid: getrawmempool's order, and the order
	 * relay announces in. */
	MEMPOOL_ORDER_DEPTH_SCORE = 0,
	/** Core's ancestor_score index, best first: min(own feerate, ancestor
	 * feerate) descending, then txid. Not topological (a child paying for a
	 * cheap parent sorts first, as in Core's index): use DEPTH_SCORE where
	 * parents must come first. */
	MEMPOOL_ORDER_ANCESTOR_SCORE,
	/** Core's descendant_score index, worst first: what trimming evicts first. */
	MEMPOOL_ORDER_DESCENDANT_SCORE,
	/** Entry time, oldest first (then txid): what expiry removes first. */
	MEMPOOL_ORDER_TIME,
};

/**
 * Every entry in `order` into an xmalloc'd array the caller frees (*out
 * NULL when the pool is empty). Pointers valid until the pool changes.
 * 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_list(struct mempool *mp, enum mempool_order order,
                           const struct mempool_entry ***out, size_t *n);
/**
 * Core's CompareDepthAndScore: negative when a comes before b in
 * MEMPOOL_ORDER_DEPTH_SCORE (relay sorts its announcements with it).
 */
int mempool_compare_depth_score(const struct mempool_entry *a, const struct mempool_entry *b);
/**
 * e's in-mempool ancestors (descendants), e excluded, into an xmalloc'd
 * array the caller frees (*out NULL when none), breadth first from e:
 * no order to rely on but the same one for the same pool, which keeps
 * block assembly repeatable (getmempoolancestors sorts as it likes).
 * 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_ancestors(struct mempool *mp, const struct mempool_entry *e,
                                const struct mempool_entry ***out, size_t *n);
CHAIN_WUR int mempool_descendants(struct mempool *mp, const struct mempool_entry *e,
                                  const struct mempool_entry ***out, size_t *n);

/*
 * Block assembly (mining/assemble.c, Core's BlockAssembler) reads the pool
 * through these: mempool_list in MEMPOOL_ORDER_ANCESTOR_SCORE, the walks
 * above (Core's CalculateMemPoolAncestors, CalculateDescendants), and the
 * entries' figures and index below.
 */

/**
 * What block assembly reads of an entry (Core's CTxMemPoolEntry getters
 * GetModifiedFee, GetTxSize, GetTxWeight, GetSigOpCost and the
 * WithAncestors figures). Plain value; cheaper than mempool_entry_info,
 * which also walks the ancestors for BIP125.
 */
struct mempool_entry_figures {
	int64_t modified_fee; /**< fee plus prioritisation */
	int64_t vsize;        /**< Core's vsize (sigop-adjusted) */
	uint32_t weight;
	int64_t sigop_cost;                     /**< Core's GetTransactionSigOpCost */
	uint64_t ancestor_count, ancestor_size; /**< itself included; size in vbytes */
	int64_t ancestor_fees;                  /**< modified fees, itself included */
};
/** Fill *out with e's figures. */
void mempool_entry_figures(const struct mempool_entry *e, struct mempool_entry_figures *out);
/**
 * e's index: below the pool's size (mempool_list's n), one per entry, so
 * a caller can keep a side array of its own per entry. Valid until the
 * pool changes.
 */
size_t mempool_entry_index(const struct mempool_entry *e);
/**
 * Core's GetModFeeAndSize: of e's own feerate and its package's (`fees`
 * and `size` with the ancestors counted: the pool's, or what is left of
 * them while a block is assembled), the lower, as a fee and a size to
 * compare by cross-multiplying (MEMPOOL_ORDER_ANCESTOR_SCORE sorts by it).
 */
void mempool_ancestor_score(const struct mempool_entry *e, int64_t fees, uint64_t size, double *fee,
                            double *sz);
/**
 * a + b and a - b for modified fees, saturating at the int64 bounds as
 * Core's SaturatingAdd does: prioritisetransaction takes any int64 delta
 * (fee_delta 9223372036854775807 overflowed the sums, UBSan).
 */
static inline int64_t mempool_fee_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t mempool_fee_sub(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

/** getmempoolinfo's figures. Fees in satoshis, feerates in sat/kvB. */
struct mempool_info {
	bool loaded;           /**< mempool.dat was read (or there was nothing to read) */
	uint64_t size;         /**< transactions */
	uint64_t bytes;        /**< sum of vsizes */
	uint64_t usage;        /**< memory usage, bytes */
	int64_t total_fee;     /**< sum of base fees */
	uint64_t maxmempool;   /**< the size limit, bytes */
	int64_t mempoolminfee; /**< max(rolling min fee, min relay fee) */
	int64_t minrelaytxfee; /**< the policy's min relay feerate */
	int64_t incrementalrelayfee;
	uint64_t unbroadcastcount; /**< txids in the unbroadcast set */
	bool fullrbf;              /**< always true (Core 29) */
};

/** Fill *out. */
void mempool_get_info(struct mempool *mp, struct mempool_info *out);
/** Core's GetMinFee: the rolling minimum feerate now, sat/kvB (0 when none). */
int64_t mempool_min_fee(struct mempool *mp);
/** The pool's sequence number (see the glossary). */
uint64_t mempool_sequence(const struct mempool *mp);
/** A count that moves whenever what a block template takes could: every
 * addition, removal and prioritisation of an entry (Core's
 * GetTransactionsUpdated, getblocktemplate's test for a new template). */
uint64_t mempool_updates(const struct mempool *mp);
/** The policy in force (the config's or the network's default). */
const struct mempool_policy *mempool_get_policy(const struct mempool *mp);

/* ---------------------------------------------------------------------- */
/* Events, persistence, upkeep                                             */

/** Why an entry left the pool (Core's MemPoolRemovalReason). */
enum mempool_removal {
	MEMPOOL_REMOVED_EXPIRY = 0, /**< older than the expiry */
	MEMPOOL_REMOVED_SIZELIMIT,  /**< trimmed to fit maxmempool */
	MEMPOOL_REMOVED_REORG,      /**< no longer valid after a reorg (non-final, immature) */
	MEMPOOL_REMOVED_BLOCK,      /**< mined in a connected block */
	MEMPOOL_REMOVED_CONFLICT,   /**< a block spent one of its inputs */
	MEMPOOL_REMOVED_REPLACED,   /**< replaced by a higher-fee transaction (RBF) */
};
/** Core's RemovalReasonToString ("expiry", "sizelimit", "reorg", "block", "conflict", "replaced").
 */
const char *mempool_removal_str(enum mempool_removal why);

/** Why an entry entered the pool. */
enum mempool_addition {
	MEMPOOL_ADDED_ACCEPT = 0, /**< mempool_accept */
	MEMPOOL_ADDED_REORG,      /**< re-added from a disconnected block */
	MEMPOOL_ADDED_LOAD,       /**< read from mempool.dat at open */
};

/**
 * Callbacks on the chain's thread; any may be NULL. The entry is valid
 * during the call only (for `removed`, it is already out of the indexes
 * but its transaction and ids are intact). Callbacks must not call back
 * into mempool_* functions that change the pool.
 */
struct mempool_events {
	void (*added)(void *arg, const struct mempool_entry *e, enum mempool_addition how);
	void (*removed)(void *arg, const struct mempool_entry *e, enum mempool_removal why);
	void *arg;
};
/** Set (replace) the callbacks; NULL clears them. */
void mempool_set_events(struct mempool *mp, const struct mempool_events *ev);
/**
 * Add an independent set of callbacks (copied), told after the one
 * mempool_set_events keeps, for a listener beside relay (the ZMQ
 * notifications, daemon/notify/; fee estimation). 0, or CHAIN_EOVERFLOW
 * when two are there.
 */
CHAIN_WUR int mempool_listen(struct mempool *mp, const struct mempool_events *ev);

/**
 * Write the pool to `<dir>/mempool.dat` in Core's format version 2 (XOR
 * key), through a temporary file, fsync and rename (savemempool). 0,
 * CHAIN_EIO or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_save(struct mempool *mp);
/** The path mempool_save writes (owned by the pool). */
const char *mempool_path(const struct mempool *mp);

/**
 * Core's prioritisetransaction: add `delta` satoshis to the modified fee
 * of txid (kept for a tx not yet in the pool, as Core's mapDeltas).
 * 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_prioritise(struct mempool *mp, const struct proto_hash *txid, int64_t delta);

/** One prioritisetransaction delta still in force (getprioritisedtransactions). */
struct mempool_delta {
	struct proto_hash txid;
	int64_t delta;
	bool in_mempool;
	int64_t modified_fee; /**< the entry's, when in_mempool */
};
/**
 * Every delta in force, by txid in Core's order (its std::map: bytes
 * compared as stored), into an xmalloc'd array the caller frees (*out NULL
 * when none). 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_deltas(struct mempool *mp, struct mempool_delta **out, size_t *n);

/*
 * The unbroadcast set (Core's m_unbroadcast_txids): transactions
 * sendrawtransaction put in the pool that no peer has fetched yet. An
 * entry leaving the pool leaves the set; mempool.dat keeps it. Chain's
 * thread, as the pool.
 */
/** Add txid (an entry of the pool; else nothing). 0 or CHAIN_ENOMEM. */
CHAIN_WUR int mempool_unbroadcast_add(struct mempool *mp, const struct proto_hash *txid);
/** Remove txid (a peer fetched it); absent is fine. */
void mempool_unbroadcast_remove(struct mempool *mp, const struct proto_hash *txid);
/** Whether txid is in the set. */
bool mempool_is_unbroadcast(const struct mempool *mp, const struct proto_hash *txid);
/**
 * The set into an xmalloc'd array the caller frees (*out NULL when empty),
 * in no particular order. 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int mempool_unbroadcast_list(const struct mempool *mp, struct proto_hash **out,
                                       size_t *n);

/**
 * Remove entries older than the expiry and trim to the size limit, as
 * Core's LimitMempoolSize (which runs after every accept anyway); for a
 * periodic timer. Returns how many were removed.
 */
size_t mempool_limit(struct mempool *mp);

/** Mempool and script-cache counters (part of getstats). */
struct mempool_stats {
	uint64_t accepted, rejected, replaced, evicted, expired, mined, conflicted, reorg_readded;
	uint64_t loaded, load_failed;                    /**< from mempool.dat at open */
	uint64_t script_cache_hits, script_cache_misses; /**< ConnectBlock lookups */
	uint64_t script_cache_entries, script_cache_capacity;
	uint64_t accept_ns; /**< total time inside mempool_accept */
};
/** Fill *out. */
void mempool_get_stats(struct mempool *mp, struct mempool_stats *out);

#endif
