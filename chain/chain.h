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
 * this face live in chain/index.h, chain/coins.h, chain/store.h and
 * chain/check.h: include this file, not those.
 */
#ifndef PEERD_CHAIN_H
#define PEERD_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	CHAIN_ERR__MIN = -10, /**< lowest code, for range checks and tables; not an error itself */
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
};

/** Longest reject reason kept (Core's are under 64 bytes, with a script error in brackets). */
#define CHAIN_REASON_MAX 112
/** Longest debug message kept. */
#define CHAIN_DEBUG_MAX 192

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

#define PEERD_CHAIN_PARTS
#include "chain/index.h"
#include "chain/coins.h"
#include "chain/store.h"
#include "chain/check.h"
#include "chain/compress.h"
#undef PEERD_CHAIN_PARTS

#endif
