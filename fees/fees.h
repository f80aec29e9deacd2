/**
 * fees/fees.h: fee estimation, as Bitcoin Core's CBlockPolicyEstimator
 * (policy/fees.cpp). A pure library: it is told what entered the mempool,
 * what left it and which block connected, and answers estimatesmartfee
 * and estimaterawfee; it reads and writes fee_estimates.dat in Core's
 * format. It knows nothing of the mempool or the chain: the wiring
 * (daemon/fees_hooks.c) feeds it from their events.
 *
 * Glossary:
 * - bucket: a feerate range; its upper bound (sat/kvB) is in the bucket
 *   list (1000 sat/kvB, then x1.05 up to 1e7, then an infinite one).
 * - horizon: one set of statistics (Core's TxConfirmStats) with its decay
 *   per block and its scale (blocks per period): short (12 periods of 1
 *   block), medium (24 of 2), long (42 of 24).
 * - tracked: a mempool transaction counted for estimation (no mempool
 *   parents, not in a package, entered at the estimator's height while
 *   the chain was current).
 *
 * Threads: none of its own; one thread at a time (the validation thread).
 */
#ifndef PEERD_FEES_H
#define PEERD_FEES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/** Core's horizons: SHORT_BLOCK_PERIODS, MED_BLOCK_PERIODS, LONG_BLOCK_PERIODS and scales. */
enum fees_horizon {
	FEES_SHORT = 0, /**< "short": 12 periods of 1 block, decay .962 */
	FEES_MEDIUM,    /**< "medium": 24 periods of 2 blocks, decay .9952 */
	FEES_LONG,      /**< "long": 42 periods of 24 blocks, decay .99931 */
	FEES_N_HORIZONS
};

/** Errors: 0 is success. */
enum fees_err {
	FEES_OK = 0,
	FEES_ENOMEM = -1,   /**< allocation failed */
	FEES_EIO = -2,      /**< the file could not be opened, read or written */
	FEES_ECORRUPT = -3, /**< the file is not a valid estimates file (text in fees_last_error) */
};

/** The highest target any horizon tracks (Core's 42 * 24 = 1008). */
#define FEES_MAX_TARGET 1008
/** Core's FEE_FLUSH_INTERVAL: the file is written this often, seconds. */
#define FEES_FLUSH_INTERVAL 3600
/** Core's MAX_FILE_AGE: an older file is not read unless stale files are accepted, seconds. */
#define FEES_MAX_FILE_AGE (60 * 3600)

struct fees_estimator;

/** Core's EstimatorBucket: a feerate range and its counts (-1 start: none). */
struct fees_bucket {
	double start, end;
	double within_target, total_confirmed, in_mempool, left_mempool;
};

/** Core's EstimationResult. */
struct fees_result {
	struct fees_bucket pass, fail;
	double decay;
	unsigned scale;
};

/** A new, empty estimator (Core's buckets), or NULL out of memory. Free with fees_free. */
struct fees_estimator *fees_new(void);
/** Free it (NULL is fine). */
void fees_free(struct fees_estimator *f);

/** The facts about a mempool entry the estimator uses. */
struct fees_tx {
	struct proto_hash txid;
	int64_t fee;         /**< base fee, satoshis */
	int64_t vsize;       /**< sigop-adjusted virtual size */
	uint32_t height;     /**< the chain's height when it entered */
	bool valid_for_fees; /**< no mempool parents, not a package, not a reorg, chain current */
};

/** Core's processTransaction: a transaction entered the mempool. */
void fees_tx_added(struct fees_estimator *f, const struct fees_tx *tx);
/** Core's removeTx (TransactionRemovedFromMempool): it left for another reason than a block. */
void fees_tx_removed(struct fees_estimator *f, const struct proto_hash *txid);
/**
 * Core's processBlock: the block at `height` connected; txs[0..n) are the
 * mempool entries it took (MempoolTransactionsRemovedForBlock; only txid,
 * fee, vsize and height are read). Heights at or below the best seen are
 * ignored (reorgs).
 */
void fees_block(struct fees_estimator *f, uint32_t height, const struct fees_tx *txs, size_t n);
/** Core's FlushUnconfirmed: every tracked transaction leaves as unconfirmed (before a write at
 * shutdown). */
void fees_flush_unconfirmed(struct fees_estimator *f);

/**
 * Core's estimateSmartFee: sat/kvB, 0 when there is no estimate;
 * *returned_target is the target the answer is for (Core's
 * FeeCalculation::returnedTarget).
 */
int64_t fees_estimate_smart(const struct fees_estimator *f, int target, bool conservative,
                            int *returned_target);
/** Core's estimateRawFee for one horizon: sat/kvB, 0 when none; *r filled. */
int64_t fees_estimate_raw(const struct fees_estimator *f, int target, double threshold,
                          enum fees_horizon h, struct fees_result *r);
/** The highest target horizon h tracks (Core's HighestTargetTracked). */
unsigned fees_max_target(const struct fees_estimator *f, enum fees_horizon h);
/** "short", "medium", "long". */
const char *fees_horizon_str(enum fees_horizon h);
/** Tracked transactions now (tests). */
size_t fees_tracked(const struct fees_estimator *f);
/** The best block height seen. */
uint32_t fees_best_height(const struct fees_estimator *f);

/**
 * Write the estimates to `path` in Core's fee_estimates.dat format
 * (through path.new and a rename). 0 or FEES_EIO.
 */
__attribute__((warn_unused_result)) int fees_write(const struct fees_estimator *f,
                                                   const char *path);
/**
 * Replace the estimates with those of the file at `path` (Core's Read);
 * nothing changes on an error. 0, FEES_EIO, FEES_ECORRUPT (why in
 * fees_last_error) or FEES_ENOMEM.
 */
__attribute__((warn_unused_result)) int fees_read(struct fees_estimator *f, const char *path);
/** fees_read's work on the file's bytes (the fuzz target's entry). */
__attribute__((warn_unused_result)) int fees_parse(struct fees_estimator *f, const uint8_t *data,
                                                   size_t n);
/** The file's bytes, xmalloc'd for the caller to free. 0 or FEES_ENOMEM. */
__attribute__((warn_unused_result)) int fees_serialize(const struct fees_estimator *f,
                                                       uint8_t **out, size_t *len);
/** The reason of the last FEES_ECORRUPT (Core's exception text). */
const char *fees_last_error(const struct fees_estimator *f);

#endif
