/**
 * chain/internal.h: what chain/'s files share and nobody else sees.
 *
 * The block view (view.c): the coins one block reads and writes while it
 * is being connected, over the coins cache, so a block that fails leaves
 * the cache exactly as it was (Core connects into a child CCoinsViewCache
 * for the same reason). Outputs created and spent inside the block never
 * reach the cache at all.
 */
#ifndef PEERD_CHAIN_INTERNAL_H
#define PEERD_CHAIN_INTERNAL_H

#include "chain/chain.h"

/*
 * chain_check_header for a header whose hash the caller has already
 * computed (chain_index_add_header needs it anyway: no second SHA-256d).
 */
CHAIN_WUR int chain_check_header_hashed(const struct proto_block_header *h,
                                        const struct proto_hash *hash, const struct proto_params *p,
                                        struct chain_state *st);

/** One outpoint the block touched. */
struct chain_view_entry {
	struct proto_outpoint op;
	int64_t value;
	uint32_t height;
	bool coinbase;
	bool created; /**< an output of this block (else fetched from the cache) */
	bool spent;   /**< spent by this block */
	uint32_t script_len;
	const uint8_t *script; /**< into the block's blob (created) or the view's arena */
};

/** Bytes per arena chunk for fetched scripts; bigger scripts get a chunk of their own. */
#define CHAIN_VIEW_CHUNK 65536u

struct chain_view_chunk;

/**
 * The view: entries in the order they were first touched (which is the
 * order they are applied in), a hash table over them, and an arena of
 * chunks that never move, so a fetched script's pointer stays valid while
 * workers read it.
 */
struct chain_view {
	struct chain_coins *base;
	struct chain_view_entry *entries;
	size_t n, cap;
	uint32_t *slots; /**< index + 1 into entries, 0 empty */
	size_t n_slots;  /**< a power of two */
	uint8_t key[16]; /**< SipHash key, random per view: a block cannot aim collisions */
	struct chain_view_chunk *chunks;
};

/** An empty view over `base`. Allocates nothing. */
void chain_view_init(struct chain_view *v, struct chain_coins *base);
/** Free everything; the view is then as after init (over the same base). */
void chain_view_release(struct chain_view *v);
/** Forget every entry but keep storage for the next block. */
void chain_view_reset(struct chain_view *v);
/** Make room for about `n` entries without growing later. 0 or CHAIN_ENOMEM. */
CHAIN_WUR int chain_view_reserve(struct chain_view *v, size_t n);

/**
 * The unspent coin at `op`: this block's outputs first, then the cache
 * (copied into the view). *out points into the view: valid until the
 * view is reset. 0, CHAIN_ENOTFOUND (missing or spent) or the cache's error.
 */
CHAIN_WUR int chain_view_fetch(struct chain_view *v, const struct proto_outpoint *op,
                               struct chain_view_entry **out);
/**
 * Record an output of this block (script borrowed: it must outlive the
 * view's use). Unspendable scripts are skipped as chain_coins_add skips
 * them. 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_view_create(struct chain_view *v, const struct proto_outpoint *op,
                                int64_t value, const uint8_t *script, uint32_t script_len,
                                uint32_t height, bool coinbase);
/**
 * Write the view's changes into the cache: spent fetched coins are spent,
 * unspent created ones added. An error other than CHAIN_ENOMEM-before-any-
 * change leaves the cache partly updated: the caller must treat it as fatal.
 */
CHAIN_WUR int chain_view_apply(struct chain_view *v);

/** Core's IsUnspendable for a scriptPubKey: OP_RETURN first, or over the script size limit. */
static inline bool chain_script_unspendable(const uint8_t *script, size_t len)
{
	return (len > 0 && script[0] == 0x6a) || len > CHAIN_MAX_COIN_SCRIPT;
}

/* ---------------------------------------------------------------------- */
/* struct chain (chainstate.c, accept.c, activate.c)                       */

/** A growable array of node pointers. */
struct chain_nodes {
	struct chain_node **v;
	size_t n, cap;
};

/** Append; 0 or CHAIN_ENOMEM. */
CHAIN_WUR int chain_nodes_push(struct chain_nodes *a, struct chain_node *n);
/** Remove the element at i (order not kept). */
void chain_nodes_remove(struct chain_nodes *a, size_t i);
/** Free the storage. */
void chain_nodes_release(struct chain_nodes *a);

/** Where a reindex started by chain_open is (chain_reindex_step). */
enum chain_reindex_phase {
	CHAIN_REINDEX_PHASE_NONE = 0, /**< none, or finished */
	CHAIN_REINDEX_PHASE_SCAN,     /**< reading the blk files again, one per step */
	CHAIN_REINDEX_PHASE_CONNECT,  /**< connecting the best chain, a bounded run per step */
};

struct chain {
	const struct proto_params *p;
	char *db_dir;      /**< <dir>/chainstate, for the messages that say to delete it */
	bool finished_ibd; /**< chain_in_ibd latched to false (Core's m_cached_finished_ibd) */
	struct chain_config cfg;
	char *dir;
	struct chain_index *idx;
	struct chain_db *db;
	struct chain_coins *coins;
	struct chain_store *store;
	struct chain_checker *ck;
	/** The active chain: active.v[h] is the block at height h. */
	struct chain_nodes active;
	/** Linked blocks that may become the tip (Core's setBlockIndexCandidates). */
	struct chain_nodes candidates;
	/** Blocks with data whose parent has none yet (Core's m_blocks_unlinked). */
	struct chain_nodes unlinked;
	uint64_t
	    chain_tx; /**< transactions in the active chain (Core's m_chain_tx_count of the tip) */
	uint32_t next_seq;
	int64_t last_flush;
	struct chain_pos flushed_end; /**< the block store's end at the last flush */
	/* The mempool's allowance lent to the coins cache (chain_lend_cache_space). */
	size_t lend_max;
	size_t (*lend_usage)(void *ctx);
	void *lend_ctx;
	struct proto_block blk; /**< scratch for blocks read back from disk */
	struct chain_stats stats;
	struct chain_work min_work;     /**< cfg.min_chain_work or the network's */
	struct proto_hash assume_valid; /**< cfg.assume_valid or the network's (zero: off) */
	bool assume_valid_on;           /**< assume_valid is not zero */
	bool csum_hint_set;             /**< chain_submit_block_csum: the block's frame checksum */
	uint32_t csum_hint;
	/** Who hears of connected and disconnected blocks (the mempool). */
	struct chain_listener listeners[CHAIN_MAX_LISTENERS];
	size_t n_listeners;
	int fatal;             /**< the first failed disk write (space.c), 0 if none */
	const char *fatal_msg; /**< what it was, in Core's words (static) */
	/** A block's coins were applied but its undo data could not be written:
	 * flushing them would persist a tip that cannot be disconnected, so
	 * chain_close does not; the next start replays from the last flush. */
	bool coins_ahead;
	/** The flush on its own thread (chainstate.c), NULL when none. */
	struct chain_flush_handoff *flush_inflight;
	uint64_t flush_waits;   /**< times a block waited for the flush in flight */
	uint64_t flush_wait_ns; /**< how long, in all */
	/** Core's m_best_invalid: the most-work block found invalid by
	 * connecting it or by invalidateblock (Core's InvalidChainFound), NULL
	 * none; reconsiderblock of it or an ancestor clears it. */
	struct chain_node *best_invalid;
	/** best_invalid was taken from the loaded index (Core's LoadBlockIndex):
	 * done at the first chain_rebuild_candidates, which every open runs. */
	bool best_invalid_loaded;
	/** Blocks found invalid so far (Core's InvalidChainFound calls): the
	 * validation thread judges the fork warning again after one, as Core's
	 * InvalidChainFound does, even when the tip did not move. */
	uint64_t invalid_found;
	struct chain_vb *vb; /**< BIP9 deployment states (versionbits.c) */
	/* -reindex / -reindex-chainstate's progress (reindex.c) */
	uint64_t reindex_t0;                    /**< when the wipe began, monotonic ms */
	uint64_t reindex_status_ms;             /**< the last cfg.progress call, monotonic ms */
	uint64_t reindex_blocks;                /**< block records read again */
	int32_t reindex_target;                 /**< the height the connect heads for */
	int reindex_tenth;                      /**< tenths of the way logged so far */
	enum chain_reindex_phase reindex_phase; /**< what chain_reindex_step does next */
	int32_t reindex_file;                   /**< the next blk file to read (scan phase) */
	/** A reindex cut short that chain_open goes on with (reindex.c's
	 * marks): the phase it starts in, without a wipe; NONE if none. */
	enum chain_reindex_phase reindex_resume;
	/** Monotonic ms after which chain_activate returns early, having
	 * connected at least one block (a reindex's bounded step); 0: never. */
	uint64_t activate_until_ms;
	bool activate_paused; /**< the time ran out: more to connect */
	/* pruning (prune.c) */
	bool have_pruned;    /**< files were pruned here once (the "prunedblockfiles" flag) */
	int64_t prune_chunk; /**< the store's end, in chunks, at the last automatic check */
	int32_t (*prune_lock)(void *arg, struct chain *c); /**< chain_set_prune_lock's */
	void *prune_lock_arg;
};

/** An errno from a failed write as a chain_err: CHAIN_ENOSPC or CHAIN_EIO (space.c). */
int chain_errno_err(int e);
/**
 * A write to the block files or the database failed with err: latch the
 * node's fatal error (CHAIN_ENOSPC or CHAIN_EIO; others are ignored) and
 * log it once. `what` is Core's message for an I/O error; coins_ahead as
 * struct chain's (space.c).
 */
void chain_disk_failed(struct chain *c, int err, bool coins_ahead, const char *what);

/** Record a block's data as stored at pos and link it (accept.c). */
CHAIN_WUR int chain_block_stored(struct chain *c, struct chain_node *n, const struct chain_pos *pos,
                                 uint32_t n_tx);
/**
 * Core's AcceptBlock on a checked, decoded block whose bytes are at `pos`
 * (NULL: write them to the store first). *node gets its index node.
 */
CHAIN_WUR int chain_accept_block(struct chain *c, const uint8_t *raw, size_t len,
                                 struct proto_block *b, const struct chain_pos *pos,
                                 struct chain_node **node, struct chain_state *st);
/**
 * Core's ActivateBestChain: reach the most-work valid candidate,
 * disconnecting and connecting as needed. `watch` (may be NULL): if that
 * block is connected or fails while this runs, *watch_found is set and
 * watch_st gets its verdict (submitblock's state catcher).
 */
CHAIN_WUR int chain_activate(struct chain *c, const struct chain_node *watch, bool *watch_found,
                             struct chain_state *watch_st);
/**
 * Rebuild the candidate set from the whole index: every linked block not
 * marked failed with at least the tip's work (at open, and after marks
 * were set or cleared).
 */
CHAIN_WUR int chain_rebuild_candidates(struct chain *c);
/** Where chain_activate would take the tip if every block is valid: the
 * best candidate not failed that beats the tip; NULL when none does. */
const struct chain_node *chain_tip_advance_target(const struct chain *c);
/** Mark n failed and every descendant failed-child; drop them from candidates. */
void chain_mark_invalid(struct chain *c, struct chain_node *n);
/**
 * A chain_store_scan callback (arg: the chain): accept a block record read
 * back from the blk files at pos, where it stays (chainstate.c). A block
 * that does not decode or is not accepted is skipped.
 */
CHAIN_WUR int chain_replay_block(const struct chain_pos *pos, const uint8_t *raw, size_t len,
                                 void *arg);

/* reindex.c: the steps of chain_open that -reindex and -reindex-chainstate change. */
/** Core's InitBlocksdirXorKey for the store just opened on blocks_dir; logs the key. */
CHAIN_WUR int chain_reindex_open_key(struct chain *c, const char *blocks_dir);
/** -reindex, before the database opens: delete its files (Core's DestroyDB). */
CHAIN_WUR int chain_reindex_remove_db(struct chain *c);
/** Before the index is loaded: wipe what the reindex rebuilds (or continue one cut short). */
CHAIN_WUR int chain_reindex_prepare(struct chain *c);
/** Read the blk files again: all of them (-reindex), or past the last flush (a crash). */
CHAIN_WUR int chain_reindex_scan(struct chain *c);
/** The phase chain_open leaves for chain_reindex_step: a reindex asked
 * for, or one cut short that chain_reindex_prepare found; NONE: neither. */
enum chain_reindex_phase chain_reindex_first_phase(const struct chain *c);
/** chain_activate, with progress while reindexing. */
CHAIN_WUR int chain_reindex_activate(struct chain *c);
/** After the final flush: clear the reindex mark and log the end. */
CHAIN_WUR int chain_reindex_finish(struct chain *c);
/** The candidates are built: connect from here on, in bounded steps. */
CHAIN_WUR int chain_reindex_begin_connect(struct chain *c);
/** chainstate.c: end of a phase (scan: genesis and the candidates; connect:
 * the flush, the mark cleared, pruning started). */
CHAIN_WUR int chain_reindex_end(struct chain *c);
/** activate.c, after each block connected: has a bounded step's time run out? */
bool chain_activate_pause(struct chain *c);

/* prune.c */
/** At open, before the index loads: read the flag, refuse an unpruned
 * start of a pruned datadir (Core's text), apply -fastprune's file size. */
CHAIN_WUR int chain_prune_open(struct chain *c);
/** Automatic pruning after a block (Core's m_check_for_pruning): when the
 * block files took new space, delete what the target asks; flushes then. */
CHAIN_WUR int chain_prune_maybe(struct chain *c);
/** Core's CleanupBlockRevFiles, for -reindex under -prune, before the store
 * opens: every rev file, and the blk files after the first missing one. */
CHAIN_WUR int chain_prune_reindex_cleanup(struct chain *c, const char *blocks_dir);
/** At the end of open, on a pruned chain: unlink the blk/rev files below
 * the current one that no index node names (a prune cut short). */
CHAIN_WUR int chain_prune_unlink_leftovers(struct chain *c);
/** At the end of open: the leftovers, then (not after a reindex) an
 * automatic prune, as Core's PruneAndFlush. */
CHAIN_WUR int chain_prune_start(struct chain *c);
/** Inside a flush's write: store the "prunedblockfiles" flag once set
 * (`have_pruned`: c->have_pruned when the flush was handed off). */
CHAIN_WUR int chain_prune_put_flag(bool have_pruned, struct chain_db_txn *t);

/** Resolve cfg.assume_valid against the network's and log it as Core (assumevalid.c). */
void chain_assume_valid_init(struct chain *c);
/**
 * Flush if the coins cache is over budget or the interval passed. As Core's
 * FlushStateToDisk: `periodic` (between blocks, PERIODIC) flushes a LARGE
 * cache, else (after each block, IF_NEEDED) only a CRITICAL one.
 */
CHAIN_WUR int chain_maybe_flush(struct chain *c, bool periodic);
/** The coins cache against its space, mempool loan included (coins_budget.c). */
enum chain_cache_state chain_cache_state(struct chain *c);
/** The same for a cache of `usage` bytes, without the log line. */
enum chain_cache_state chain_cache_state_of(struct chain *c, size_t usage);

#endif
