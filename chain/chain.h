/**
 * chain/chain.h: the validated chain: block index, UTXO set, block store,
 * and the rules that connect them. The public face of chain/.
 *
 * Glossary
 *   node        one header in the block index (Core's CBlockIndex): every
 *               header peerd has accepted, with its chain work and status.
 *   tip         the last block of the active chain, whose UTXO set the
 *               coins cache holds.
 *   coin        one unspent output (Core's Coin): value, script, the height
 *               of its block and whether it came from a coinbase.
 *   undo data   the coins a block spent, in order, so the block can be
 *               disconnected in a reorg (Core's CBlockUndo, rev files).
 *   flush       writing the cache's changes and the best block hash to
 *               LMDB in one transaction: the database is never between
 *               two blocks.
 *   reject      a block or header that breaks a rule; the reason is Core's
 *               reject string (`bad-txnmrklroot`) so the two can be compared.
 *
 * chain/ uses proto, script, pool, base and LMDB, never libuv. One thread
 * owns a chain and everything reached from it (the validation thread in
 * peerd); nothing here locks except the check queue it drives. Parts of
 * this face live in chain/index.h, chain/coins.h, chain/store.h,
 * chain/check.h, chain/compress.h and chain/connect.h: include this file,
 * not those. chain/ knows nothing of the mempool or the miner above it: it
 * tells whoever listens (struct chain_listener) what it connected and
 * disconnected.
 */
#ifndef PEERD_CHAIN_H
#define PEERD_CHAIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool/pool.h"
#include "proto/proto.h"

/** On every fallible call: an ignored error code is a compile error (-Werror). */
#define CHAIN_WUR __attribute__((warn_unused_result))

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */

/** chain/ error codes: 0 is success, every error is negative. */
enum chain_err {
	CHAIN_OK = 0,         /**< success */
	CHAIN_ENOMEM = -1,    /**< allocation failed */
	CHAIN_ENOTFOUND = -2, /**< no such coin, block, record or file */
	CHAIN_EINVALID = -3,  /**< a block, header or tx broke a rule: see struct chain_state */
	CHAIN_EIO = -4,       /**< a read, write or fsync failed (errno kept in the log) */
	CHAIN_ECORRUPT = -5,  /**< data on disk fails its checksum or does not decode */
	CHAIN_EDB = -6,       /**< LMDB failed for a reason other than the above */
	CHAIN_EEXIST = -7,    /**< already there (a coin that may not be overwritten, a header) */
	CHAIN_EOVERFLOW = -8, /**< a size or count over its limit */
	CHAIN_ELOCKED = -9,   /**< another process holds the data directory */
	CHAIN_EARG = -10,     /**< a caller's argument is out of range */
	CHAIN_ENOSPC = -11,   /**< the disk is (nearly) full: Core's "Disk space is too low!" */
	CHAIN_ERR__MIN = -11, /**< lowest code, for range checks and tables; not an error itself */
};

/** A one-line English description of a chain_err; never NULL. */
const char *chain_strerror(int err);

/* ---------------------------------------------------------------------- */
/* Validation verdicts (Core's BlockValidationState)                       */

/** Why a block or header was rejected, as Core's BlockValidationResult. */
enum chain_result {
	CHAIN_RESULT_UNSET = 0,      /**< valid, or not yet judged */
	CHAIN_RESULT_CONSENSUS,      /**< broke a consensus rule */
	CHAIN_RESULT_CACHED_INVALID, /**< already known to be invalid */
	CHAIN_RESULT_INVALID_HEADER, /**< bad proof of work or timestamp */
	CHAIN_RESULT_MUTATED,        /**< the data does not match the header's commitments */
	CHAIN_RESULT_MISSING_PREV,   /**< the previous block is unknown */
	CHAIN_RESULT_INVALID_PREV,   /**< the previous block is invalid */
	CHAIN_RESULT_TIME_FUTURE,    /**< more than 2 hours in the future */
	/* Transactions (Core's TxValidationResult); CONSENSUS above serves both. */
	CHAIN_RESULT_TX_INPUTS_NOT_STANDARD, /**< spends an input in a non-standard way */
	CHAIN_RESULT_TX_NOT_STANDARD,        /**< breaks a standardness rule */
	CHAIN_RESULT_TX_MISSING_INPUTS,      /**< an input is unknown: maybe an orphan */
	CHAIN_RESULT_TX_PREMATURE_SPEND,     /**< non-final, or spends an immature coinbase */
	CHAIN_RESULT_TX_WITNESS_MUTATED,     /**< witness invalid, maybe third-party malleated */
	CHAIN_RESULT_TX_WITNESS_STRIPPED,    /**< witness missing where one is needed */
	CHAIN_RESULT_TX_CONFLICT,            /**< spends what the chain or mempool spent */
	CHAIN_RESULT_TX_MEMPOOL_POLICY,      /**< mempool limits or fees (not a peer's fault) */
	CHAIN_RESULT_TX_NO_MEMPOOL,          /**< no mempool to accept into */
	CHAIN_RESULT_TX_RECONSIDERABLE,      /**< fee too low alone; may pass in a package */
	CHAIN_RESULT_TX_UNKNOWN,             /**< accepted already, or another reason to ignore */
};

/**
 * Longest reject reason kept, with its NUL. The longest is a script failure:
 * CHAIN_SCRIPT_REASON_PREFIX, Core's longest ScriptErrorString (80 bytes:
 * "Script evaluated without error but finished with a false/empty top
 * stack element") and ")": 118 bytes. Kept with room to spare, since
 * submitblock's answer must be Core's word for word.
 */
#define CHAIN_REASON_MAX 160
/** A script failure's reject reason: this, Core's ScriptErrorString, ")". */
#define CHAIN_SCRIPT_REASON_PREFIX "mandatory-script-verify-flag-failed ("
/**
 * Longest debug message kept. The longest Core writes for a transaction is
 * TRUC's "non-version=3 tx T (wtxid=W) cannot spend from version=3 tx T
 * (wtxid=W)": 4 ids of 64 and 72 bytes of words; a script failure's names
 * the input, txid, wtxid and the spent outpoint (~240).
 */
#define CHAIN_DEBUG_MAX 384

/**
 * A verdict: `result` and Core's reject reason (`reason`, what submitblock
 * answers) plus a debug message for logs. Set by whatever rejected; a
 * function that rejects returns CHAIN_EINVALID. Plain value, any thread.
 */
struct chain_state {
	enum chain_result result;
	char reason[CHAIN_REASON_MAX];
	char debug[CHAIN_DEBUG_MAX];
};

/**
 * Record a rejection in `st` (may be NULL) and return CHAIN_EINVALID, so a
 * check reads `return chain_reject(st, CHAIN_RESULT_CONSENSUS,
 * "bad-cb-amount", "coinbase pays too much (actual=%lld vs limit=%lld)", ...)`.
 * `fmt` may be NULL for no debug message.
 */
CHAIN_WUR int chain_reject(struct chain_state *st, enum chain_result result, const char *reason,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** Clear a verdict to CHAIN_RESULT_UNSET with empty strings. */
void chain_state_clear(struct chain_state *st);

/** Log levels of chain_log_fn, as the daemon's. */
enum chain_log_level { CHAIN_LOG_ERROR, CHAIN_LOG_WARN, CHAIN_LOG_INFO, CHAIN_LOG_DEBUG };
/** Where chain/ logs (the daemon's logger; NULL: nowhere). Validating thread. */
typedef void (*chain_log_fn)(void *arg, enum chain_log_level level, const char *msg);

#define PEERD_CHAIN_PARTS
#include "chain/index.h"
#include "chain/coins.h"
#include "chain/store.h"
#include "chain/check.h"
#include "chain/compress.h"
#include "chain/connect.h"
#include "chain/versionbits.h"
#undef PEERD_CHAIN_PARTS

/* ---------------------------------------------------------------------- */
/* The chain: index, coins, block store and the active chain together      */

/** Default coins cache, MiB (Core's -dbcache). */
#define CHAIN_DBCACHE_DEFAULT_MIB 450
/** Smallest coins cache accepted, MiB (Core's MIN_DB_CACHE). */
#define CHAIN_DBCACHE_MIN_MIB 4
/** A tip older than this, seconds: initial block download (Core DEFAULT_MAX_TIP_AGE). */
#define CHAIN_MAX_TIP_AGE (24 * 60 * 60)
/** Seconds between flushes of the coins and index while nothing forces one. */
#define CHAIN_FLUSH_INTERVAL 3600

/** An open chain; opaque. One thread owns it. */
struct chain;

/** What chain_open rebuilds from the block files before it goes on. */
enum chain_reindex {
	CHAIN_REINDEX_NONE = 0,   /**< nothing: open as it was */
	CHAIN_REINDEX_FULL,       /**< Core's -reindex: the block index and the coins */
	CHAIN_REINDEX_CHAINSTATE, /**< Core's -reindex-chainstate: the coins only */
};

/** How to open a chain. */
struct chain_config {
	const struct proto_params *params;
	const char *dir;      /**< the network's directory: chainstate/ and blocks/ go inside */
	size_t dbcache_bytes; /**< coins cache budget (0: the default) */
	int par;              /**< script-check threads, bitcoind's -par (0: one per core) */
	chain_log_fn log;     /**< may be NULL */
	void *log_arg;
	int64_t (*now)(void); /**< clock in seconds (NULL: base_time(), the mockable clock) */
	int64_t max_tip_age;  /**< seconds; an older tip is initial block download (0: 24 h) */
	/** Core's -minimumchainwork (NULL: the network's, params->min_chain_work). */
	const struct chain_work *min_chain_work;
	/**
	 * Core's -assumevalid (NULL: the network's, params->assume_valid; all
	 * zero: off): scripts of this block's ancestors may be skipped when
	 * buried deep enough under the best header (chain/assumevalid.c).
	 */
	const struct proto_hash *assume_valid;
	/** Script-execution cache, bytes (0: CHAIN_SCRIPT_CACHE_DEFAULT_BYTES; SIZE_MAX: none). */
	size_t script_cache_bytes;
	/**
	 * Called once by chain_open when the chain is loaded, before it
	 * replays the blocks written after the last flush and activates the
	 * best chain (may be NULL): register here the listeners that must
	 * hear those blocks (the mempool). Non-zero fails chain_open with it.
	 */
	int (*attach)(void *arg, struct chain *c);
	void *attach_arg;
	/** -vbparams: CHAIN_VB_COUNT entries (see chain_vb_new), or NULL. Copied. */
	const struct chain_vb_deployment *vb_params;
	/** Core's -blocksxor=0: a new blocks directory gets a zero key (chain/store.h). */
	bool no_blocks_xor;
	/** Core's -reindex / -reindex-chainstate (chain/reindex.c). */
	enum chain_reindex reindex;
	/**
	 * Progress of a long startup (reindexing) for an operator's status line
	 * (sd_notify STATUS=), called on the thread in chain_open, at most about
	 * once a second (may be NULL).
	 */
	void (*progress)(void *arg, const char *status);
	void *progress_arg;
	/**
	 * Core's -prune as a target in bytes: 0 keeps every block;
	 * CHAIN_PRUNE_MANUAL prunes only on chain_prune_manual (-prune=1);
	 * else block and undo files are deleted to stay under it (chain/prune.c).
	 */
	uint64_t prune_target;
	/** Core's -fastprune: CHAIN_FASTPRUNE_FILE_SIZE blk files, a low prune-after height. */
	bool fast_prune;
	/**
	 * Connect the blocks a crash left past the last flush in
	 * chain_reindex_step's bounded steps after chain_open returns, as a
	 * reindex's, instead of inside chain_open: a daemon answers meanwhile,
	 * and a supervisor's start timeout does not run out on a large replay
	 * and kill it before it can flush, start after start. Core connects
	 * every start's blocks in its "initload" thread.
	 */
	bool replay_in_steps;
};

/**
 * Open the chain in cfg->dir: the database, the block store and the index;
 * store the genesis block on first start; then replay any block the block
 * files hold past the last flush (what a crash or kill -9 left), so the
 * chain comes back exactly where it was: read here, connected here too
 * unless cfg->replay_in_steps (then chain_reindex_step's). 0, CHAIN_ENOMEM,
 * CHAIN_EIO, CHAIN_EDB or CHAIN_ECORRUPT.
 */
CHAIN_WUR int chain_open(struct chain **out, const struct chain_config *cfg);
/** Flush everything and close; NULL is fine. Returns the flush's error (the chain is freed anyway).
 */
int chain_close(struct chain *c);
/** Write the coins, the index and the best block in one transaction (after syncing the block
 * files). */
CHAIN_WUR int chain_flush(struct chain *c);
/**
 * True while a -reindex or -reindex-chainstate that chain_open started, or
 * one cut short that it goes on with (the marks it left in the database),
 * or a replay under cfg.replay_in_steps, is not finished: chain_open only
 * wipes and loads; the reading of the blk files and the connecting of the
 * best chain are chain_reindex_step's, so the caller can answer in between
 * (Core's "initload" thread). The chain's thread only.
 */
bool chain_reindex_pending(const struct chain *c);
/** What the pending steps are: cfg.reindex's mode, or CHAIN_REINDEX_NONE
 * for a replay of what a crash left (for a caller's log lines). */
enum chain_reindex chain_reindex_mode(const struct chain *c);
/**
 * One bounded part of the reindex: one blk file read again, or about
 * 200 ms of blocks connected, or the end (the final flush, the reindex
 * marks cleared). Stopping between two steps is clean: chain_close flushes
 * what is done, and the next start goes on from the marks: reading from
 * the next blk file, or connecting from the last flush. 0 (chain_reindex_pending
 * then says whether more is left) or an error of chain_open's. The chain's thread.
 */
CHAIN_WUR int chain_reindex_step(struct chain *c);

/** The network. */
const struct proto_params *chain_params(const struct chain *c);
/** The block index (read access for RPCs and sync; the chain's thread only). */
struct chain_index *chain_get_index(struct chain *c);
/** The coins (for gettxout and stats; the chain's thread only). */
struct chain_coins *chain_get_coins(struct chain *c);
/** The script-check pipeline (for stats). */
struct chain_checker *chain_get_checker(struct chain *c);
/** The active chain's last block. */
struct chain_node *chain_tip(const struct chain *c);
/** Height of the tip. */
int32_t chain_height(const struct chain *c);
/** The active chain's block at height, or NULL. */
struct chain_node *chain_at(const struct chain *c, int32_t height);
/** True if n is on the active chain. */
bool chain_contains(const struct chain *c, const struct chain_node *n);
/** The minimum chain work in force (the network's, or -minimumchainwork). */
const struct chain_work *chain_min_work(const struct chain *c);
/**
 * The assumed-valid block in force (the network's or -assumevalid), or
 * NULL when every script is checked.
 */
const struct proto_hash *chain_assume_valid(const struct chain *c);
/**
 * Core's ConnectBlock choice of fScriptChecks, negated: true when n's
 * scripts may be skipped: the assumed-valid block is in the index, n is
 * its ancestor and the best header's, the best header has the minimum
 * chain work, and it lies more than two weeks' equivalent of work above
 * n (on regtest at least 2,017 blocks). The chain's thread.
 */
bool chain_assume_valid_skips(struct chain *c, const struct chain_node *n);
/** Core's IsInitialBlockDownload without the sticky latch: tip older than 24 h. */
bool chain_tip_is_old(const struct chain *c);
/**
 * Core's IsInitialBlockDownload: true while the tip is older than 24 h or
 * its chain has less work than chain_min_work; once false, false for good (the latch, logged as
 * Core logs it).
 */
bool chain_in_ibd(struct chain *c);
/**
 * Core's CheckForkWarningConditions (LARGE_WORK_INVALID_CHAIN): 1 when the
 * most-work block found invalid (connecting it, or invalidateblock) has
 * more work than the tip plus six of the tip's blocks, 0 when not, -1 in
 * initial block download, where Core leaves the warning as it was. The
 * chain's thread.
 */
int chain_fork_warning(struct chain *c);
/** How many times a block was found invalid so far (connecting it, or
 * invalidateblock): a change tells the fork warning is due again. The
 * chain's thread. */
uint64_t chain_invalid_found(const struct chain *c);

/** What happened to a submitted block (Core's submitblock answers). */
enum chain_submit {
	CHAIN_SUBMIT_ACCEPTED = 0,      /**< valid and stored (null) */
	CHAIN_SUBMIT_DUPLICATE,         /**< already had it ("duplicate") */
	CHAIN_SUBMIT_DUPLICATE_INVALID, /**< already had it, invalid ("duplicate-invalid") */
	CHAIN_SUBMIT_INCONCLUSIVE,      /**< stored but not on the best chain ("inconclusive") */
	CHAIN_SUBMIT_REJECTED,          /**< invalid: st says why */
};

/**
 * Accept a block as Core's ProcessNewBlock with force (submitblock,
 * a requested download): check it, store it, and move the active chain to
 * the most-work valid chain. `raw` is the block's serialization (stored as
 * is); `b` its decoding. *result says what happened; st the reject reason.
 * 0 (see *result), or a fatal error (I/O, database, memory).
 */
CHAIN_WUR int chain_submit_block(struct chain *c, const uint8_t *raw, size_t len,
                                 struct proto_block *b, enum chain_submit *result,
                                 struct chain_state *st);

/**
 * Accept headers in order (Core's ProcessNewBlockHeaders); *last gets the
 * last node accepted. 0, CHAIN_EINVALID (st says why; earlier ones were
 * kept) or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_accept_headers(struct chain *c, const struct proto_block_header *h, size_t n,
                                   struct chain_node **last, struct chain_state *st);

/** Read a stored block's bytes (xmalloc'd, the caller frees). 0, CHAIN_ENOTFOUND (no data), ... */
CHAIN_WUR int chain_read_block(struct chain *c, const struct chain_node *n, uint8_t **raw,
                               size_t *len);
/**
 * chain_submit_block for a block whose frame checksum (the first 4 bytes
 * of SHA-256d of raw, little-endian as read from a message header) the
 * caller already checked: kept in the index, so serving never hashes.
 * chain_submit_block computes it instead.
 */
CHAIN_WUR int chain_submit_block_csum(struct chain *c, const uint8_t *raw, size_t len,
                                      struct proto_block *b, uint32_t csum,
                                      enum chain_submit *result, struct chain_state *st);
/**
 * chain_read_block and the block's frame checksum (*csum) from the index;
 * computed once and kept when the index lacks it. 0 or as chain_read_block.
 */
CHAIN_WUR int chain_read_block_framed(struct chain *c, struct chain_node *n, uint8_t **raw,
                                      size_t *len, uint32_t *csum);
/** Read a connected block's undo data. 0, CHAIN_ENOTFOUND, ... */
CHAIN_WUR int chain_read_undo(struct chain *c, const struct chain_node *n,
                              struct chain_block_undo *u);

/**
 * Core's invalidateblock: mark n (and its descendants) invalid, disconnect
 * back below it if it is active, then activate the best remaining chain.
 * 0, CHAIN_EINVALID for genesis (st: "genesis"), or a fatal error.
 */
CHAIN_WUR int chain_invalidate(struct chain *c, struct chain_node *n, struct chain_state *st);
/** Core's reconsiderblock: clear the marks on n, its ancestors and descendants, and activate. */
CHAIN_WUR int chain_reconsider(struct chain *c, struct chain_node *n, struct chain_state *st);

/**
 * Core's verifychain: check the last `nblocks` blocks of the active chain
 * (all when <= 0 or more than there are) at `level` 0-4: read back (0),
 * CheckBlock (1), undo data (2), disconnect on a scratch copy of the coins
 * (3), connect again with every rule (4). The chain itself is not changed
 * (it is flushed first). 0 when all is well, CHAIN_EINVALID (st says which
 * block and what), CHAIN_EARG for a bad level, or a fatal error. Under
 * pruning the check stops at the first block without data: 0 with
 * st->reason CHAIN_VERIFY_MISSING (Core's SKIPPED_MISSING_BLOCKS, which
 * verifychain answers false and a start lets pass).
 */
#define CHAIN_VERIFY_MISSING "missing-blocks"
CHAIN_WUR int chain_verify(struct chain *c, int level, int32_t nblocks, struct chain_state *st);

/** Free space that must stay on the disk after any block or undo write (Core's 50 MiB). */
#define CHAIN_MIN_DISK_SPACE ((uint64_t)50 << 20)
/**
 * Core's CheckDiskSpace: 0 when the file system holding `dir` has
 * CHAIN_MIN_DISK_SPACE + `additional` bytes free for an unprivileged
 * writer (statvfs f_bavail), CHAIN_ENOSPC when not, CHAIN_EIO when it
 * cannot be asked. *avail (may be NULL) gets the free bytes. Any thread.
 */
CHAIN_WUR int chain_disk_space(const char *dir, uint64_t additional, uint64_t *avail);
/**
 * The first write to the block files or the chain state that failed
 * (CHAIN_ENOSPC: the disk is full; CHAIN_EIO), CHAIN_ECORRUPT once a
 * damaged database page was found (chain_db_broken), or 0. From then on the node
 * must shut down (Core's AbortNode): *msg (may be NULL) gets Core's text
 * for it ("Disk space is too low!"), static. The chain's thread.
 */
int chain_fatal_error(const struct chain *c, const char **msg);

/** Counters of a chain, for getstats. */
struct chain_stats {
	uint64_t blocks_connected, blocks_disconnected, blocks_rejected;
	uint64_t reorgs, flushes, replayed;
	uint64_t blocks_assumed_valid; /**< connected with their scripts skipped (assumevalid) */
	uint64_t connect_ns;           /**< total time connecting */
	size_t coins_memory, coins_cached, index_nodes, index_memory;
	/** Script-execution cache: ConnectBlock lookups that skipped (hits) or ran (misses)
	 * a transaction's scripts, and entries held. */
	uint64_t script_cache_hits, script_cache_misses, script_cache_entries;
};
void chain_get_stats(struct chain *c, struct chain_stats *out);

/** Seconds since the epoch by the configured clock (chain_config's `now`). */
int64_t chain_now(const struct chain *c);
/** Log through the configured logger (printf-style). The chain's thread. */
void chain_logf(const struct chain *c, enum chain_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------------- */
/* Pruning (Core's node/blockstorage.cpp; chain/prune.c)                   */

/** Blocks below the tip whose data is never pruned (Core's MIN_BLOCKS_TO_KEEP). */
#define CHAIN_MIN_BLOCKS_TO_KEEP 288
/** chain_config.prune_target for manual pruning only (Core's PRUNE_TARGET_MANUAL). */
#define CHAIN_PRUNE_MANUAL UINT64_MAX
/** Least automatic target, bytes (Core's MIN_DISK_SPACE_FOR_BLOCK_FILES). */
#define CHAIN_PRUNE_MIN_TARGET ((uint64_t)550 << 20)
/** blk file size under -fastprune (Core's 64 KiB). */
#define CHAIN_FASTPRUNE_FILE_SIZE 0x10000u
/** Core's BLOCKFILE_CHUNK_SIZE + UNDOFILE_CHUNK_SIZE: the room left under the target. */
#define CHAIN_PRUNE_BUFFER (((uint64_t)16 << 20) + ((uint64_t)1 << 20))

/**
 * The network's height below which nothing is pruned automatically
 * (Core's nPruneAfterHeight: main 100,000; the test networks and signet
 * 1,000; regtest 1,000, or 100 with -fastprune).
 */
int32_t chain_prune_after_height(const struct proto_params *p, bool fast_prune);

/** What one blk/rev pair holds (Core's CBlockFileInfo, the fields pruning reads). */
struct chain_file_info {
	uint64_t size;        /**< bytes of the blk file (0: gone, or never written) */
	uint64_t undo_size;   /**< bytes of the rev file */
	int32_t height_first; /**< lowest height of a block in it */
	int32_t height_last;  /**< highest height of a block in it */
};

/**
 * Core's FindFilesToPrune (target a byte count) and FindFilesToPruneManual
 * (target CHAIN_PRUNE_MANUAL), without the index: which of the files
 * 0..n_cand-1 go (out[i] set; out has n_cand entries). files has n_files
 * entries (n_files >= n_cand; the rest, the file being appended to, count
 * toward the usage but never go). A file goes when it is not empty, every
 * block in it is at or below last_height and none below min_height, and,
 * automatically, while the usage plus `buffer` is at or over the target.
 * Returns how many go; *usage (may be NULL) gets the usage left.
 */
size_t chain_prune_select(const struct chain_file_info *files, int32_t n_files, int32_t n_cand,
                          uint64_t target, uint64_t buffer, int32_t min_height, int32_t last_height,
                          bool *out, uint64_t *usage);

/** Whether the chain prunes (chain_config.prune_target is not 0). */
bool chain_prune_mode(const struct chain *c);
/** chain_config.fast_prune. */
bool chain_fast_prune(const struct chain *c);
/** chain_config.prune_target. */
uint64_t chain_prune_target(const struct chain *c);
/** Whether block files were ever pruned here (Core's "prunedblockfiles" flag). */
bool chain_have_pruned(const struct chain *c);
/**
 * Core's IsBlockPruned: files were pruned, n's data is gone and it had
 * some (n_tx > 0): getblock's "Block not available (pruned data)".
 */
bool chain_block_pruned(const struct chain *c, const struct chain_node *n);
/**
 * Core's GetPruneHeight: the height of the last block of the active
 * chain without its data or undo data, counting from the tip down to
 * height 1; -1 when none is missing (genesis never counts).
 */
int32_t chain_prune_height(const struct chain *c);
/**
 * Core's PruneBlockFilesManual: flush, deleting every whole blk/rev pair
 * whose blocks are all at or below min(height, tip - 288). The caller
 * has checked prune mode. 0, or a flush's fatal error.
 */
CHAIN_WUR int chain_prune_manual(struct chain *c, int32_t height);
/** Blocks kept below a prune lock's height (Core's PRUNE_LOCK_BUFFER). */
#define CHAIN_PRUNE_LOCK_BUFFER 10
/**
 * Core's prune locks: fn (the wiring's, for the indexes that read old
 * blocks) returns the lowest height a reader has reached, INT32_MAX for
 * none; nothing from that height less CHAIN_PRUNE_LOCK_BUFFER up is
 * pruned. One holder; fn NULL clears it. The chain's thread.
 */
void chain_set_prune_lock(struct chain *c, int32_t (*fn)(void *arg, struct chain *c), void *arg);
/** Core's CalculateCurrentUsage: bytes of every blk and rev file. */
uint64_t chain_blocks_usage(struct chain *c);

/* ---------------------------------------------------------------------- */
/* Listeners (btcd's BlockChain.Subscribe, Core's CValidationInterface)    */

/**
 * What the chain tells a listener, synchronously on the chain's thread,
 * from inside the call that changed the active chain (chain_open's
 * replay, chain_submit_block, chain_invalidate, ...). Any may be NULL. A
 * listener must not change the active chain from inside a callback.
 */
struct chain_listener {
	/** Block b became the tip (after its coins were applied). */
	void (*block_connected)(void *ctx, struct chain *c, struct proto_block *b);
	/** Block b left the tip (its coins were undone). Non-zero stops the
	 * reorg with that error (fatal, as a failed disconnect). */
	int (*block_disconnected)(void *ctx, struct chain *c, struct proto_block *b);
	/** The active chain settled (after every chain_activate, whether or
	 * not anything moved). Non-zero is returned by chain_activate. */
	int (*chain_settled)(void *ctx, struct chain *c);
	/** The chain is being freed (chain_close, or chain_open failing after
	 * `attach`) with this listener still registered: let go of it. */
	void (*chain_closed)(void *ctx, struct chain *c);
	/** Block b (index entry n), new, on the active tip, passed CheckBlock
	 * and ContextualCheckBlock and is about to be stored and connected,
	 * out of initial block download (Core's NewPoWValidBlock): it may be
	 * relayed now, though connecting it may still fail. */
	void (*new_pow_valid_block)(void *ctx, struct chain *c, const struct chain_node *n,
	                            struct proto_block *b);
	void *ctx;
};
/** Most listeners a chain keeps (the mempool, ZMQ, compact-block relay, the
 * fee estimator, the indexes, a reindex's own, and room for two more). */
#define CHAIN_MAX_LISTENERS 8
/**
 * Register a listener (copied); listeners are told in the order they
 * registered. 0, or CHAIN_EOVERFLOW when CHAIN_MAX_LISTENERS are there.
 */
CHAIN_WUR int chain_listen(struct chain *c, const struct chain_listener *l);
/** Forget the listener registered with this ctx; absent is fine. */
void chain_unlisten(struct chain *c, const void *ctx);
/**
 * Lend the coins cache the part of a mempool's allowance (`max_bytes`) it
 * does not use, as Core does: before each flush decision the chain asks
 * usage(ctx) (on the chain's thread) and lets the cache grow to dbcache +
 * max(0, max_bytes - usage). Logs Core's start-up line for the sizes.
 * usage NULL takes the loan back (the mempool detaching).
 */
void chain_lend_cache_space(struct chain *c, size_t max_bytes, size_t (*usage)(void *ctx),
                            void *ctx);

#endif
