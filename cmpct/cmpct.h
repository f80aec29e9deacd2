/**
 * cmpct/cmpct.h: BIP152 compact blocks: building one from a block, and
 * rebuilding a block from one (Bitcoin Core's CBlockHeaderAndShortTxIDs
 * constructor and PartiallyDownloadedBlock, blockencodings.cpp).
 *
 * Glossary
 *   partial     the state between a cmpctblock and its block: which of the
 *               block's transactions we already hold (prefilled, or found
 *               among the candidates) and which are missing.
 *   candidate   a transaction that may be in the block: the mempool's,
 *               then the ring of recently rejected or replaced ones
 *               (Core's extra transactions). The caller walks them; this
 *               module never sees a mempool.
 *   invalid     the peer broke the protocol (Core READ_STATUS_INVALID):
 *               the caller punishes it.
 *   failed      the block could not be rebuilt (a short-id collision, or
 *               the rebuilt block does not match its header's merkle root
 *               or witness commitment: Core READ_STATUS_FAILED): the caller
 *               asks for the whole block instead, and punishes no one.
 *
 * Why a folder of its own: reconstruction needs only proto/ (transactions,
 * merkle roots, short ids), not chain/ or mempool/; the candidates come
 * through an iterator, so the mempool stays above it and the module stays
 * pure, fuzzable and benchmarkable (scripts/check-layers.py: cmpct uses
 * proto). The daemon half (when to accept a cmpctblock, asking
 * getblocktxn, falling back to getdata) belongs to daemon/sync/.
 *
 * Threads: a struct cmpct_partial belongs to one thread; nothing here
 * keeps global state.
 */
#ifndef PEERD_CMPCT_H
#define PEERD_CMPCT_H

#include "proto/proto.h"

/** cmpct/ results: 0 is success, every error is negative. */
enum cmpct_err {
	CMPCT_OK = 0, /**< success */
	CMPCT_EINVALID =
	    -1, /**< the peer's compact block or answer is invalid (Core: misbehaving) */
	CMPCT_EFAILED = -2, /**< cannot rebuild: fall back to the full block */
	CMPCT_ENOMEM = -3,  /**< allocation failed */
};

/** A one-line English description of a cmpct_err; never NULL. */
const char *cmpct_strerror(int err);

/** Most transactions a block can hold (Core MAX_BLOCK_WEIGHT /
 * MIN_SERIALIZABLE_TRANSACTION_WEIGHT). */
#define CMPCT_MAX_BLOCK_TXS 100000u

/**
 * One candidate. Both pointers need stay valid only during the
 * cmpct_partial_init call that received them: what matches is copied.
 */
struct cmpct_candidate {
	const struct proto_tx *tx;
	const struct proto_hash *wtxid; /**< tx's wtxid (the caller has it cached) */
	bool extra;                     /**< from the extra ring, not the mempool (counted apart) */
};

/**
 * The candidate walk: fill *c and return true, or return false at the end.
 * Give the mempool's transactions first, then the extra ones, as Core.
 */
typedef bool (*cmpct_next_fn)(void *ctx, struct cmpct_candidate *c);

/** One transaction slot of the block being rebuilt. */
struct cmpct_slot {
	uint32_t off;  /**< its serialization in the partial's store */
	uint32_t len;  /**< 0 while missing */
	uint8_t state; /**< private */
	bool has_ids;  /**< ids[] holds its txid and wtxid (the source had them cached) */
};

/** A held transaction's ids, taken from its source so fill need not hash it again. */
struct cmpct_ids {
	struct proto_hash txid;
	struct proto_hash wtxid;
};

/**
 * A compact block being rebuilt. Owned by one thread; init, then
 * cmpct_partial_init, then (if some are missing) cmpct_partial_fill with
 * the peer's blocktxn; release frees. Reusable after release or a fill.
 */
struct cmpct_partial {
	struct proto_block_header hdr;
	bool started; /**< between a successful init and the fill */
	uint32_t n_tx;
	struct cmpct_slot *slots; /**< n_tx slots (owned) */
	struct cmpct_ids *ids;    /**< n_tx, valid where the slot's has_ids (owned) */
	uint32_t slots_cap;
	uint32_t n_missing;
	uint32_t prefilled_count;  /**< Core's counters, for logs and stats */
	uint32_t mempool_count;    /**< found among the candidates (extra ones included) */
	uint32_t extra_count;      /**< of those, found in the extra ring */
	struct proto_writer store; /**< the serializations of the slots we hold (owned) */
	/* private: the short-id table and the walk's scratch */
	uint64_t *table;
	uint32_t table_cap;
	struct cmpct_candidate *found;
	uint32_t found_cap;
	uint64_t salt;
};

/** Zero pb; allocates nothing. */
void cmpct_partial_init_empty(struct cmpct_partial *pb);
/** Free everything; pb is then as after cmpct_partial_init_empty. */
void cmpct_partial_release(struct cmpct_partial *pb);

/**
 * Core's InitData: take the header and the prefilled transactions of cb,
 * then walk the candidates and keep each whose short id is one of cb's.
 * Two different candidates with one short id leave that slot missing
 * (asked for, as Core). CMPCT_EINVALID for a null header (bits 0), no
 * transactions, too many, a prefilled index past what the ids leave room
 * for, or a prefilled transaction with no inputs and no outputs;
 * CMPCT_EFAILED when two of cb's short ids are equal. pb must not be
 * started (release it first). cb may be freed afterwards.
 */
PROTO_WUR int cmpct_partial_init(struct cmpct_partial *pb, const struct proto_cmpctblock *cb,
                                 cmpct_next_fn next, void *ctx);

/** Whether slot `index` (< pb->n_tx) is held. */
static inline bool cmpct_partial_have(const struct cmpct_partial *pb, uint32_t index)
{
	return pb->slots[index].len != 0;
}

/**
 * The getblocktxn for what is missing: the block's hash and the missing
 * indexes, ascending. 0 or PROTO_ENOMEM.
 */
PROTO_WUR int cmpct_partial_request(const struct cmpct_partial *pb, struct proto_getblocktxn *g);

/**
 * Core's FillBlock: the missing transactions, in index order (blocktxn's
 * txs), complete the block, whose serialization is appended to `out` (the
 * bytes of a `block` message) and which is decoded into *block (storage
 * reused). CMPCT_EINVALID when pb was not started or the count is not
 * exactly the number missing; CMPCT_EFAILED when the block is mutated
 * (Core's IsBlockMutated: merkle root or duplicate leaves; without a
 * coinbase first, any 64-byte transaction; with segwit_active, a witness
 * commitment that does not match, or witness data without one). pb is no
 * longer started afterwards, whatever the result (as Core: no second fill).
 */
PROTO_WUR int cmpct_partial_fill(struct cmpct_partial *pb, const struct proto_tx *missing,
                                 uint32_t n_missing, bool segwit_active, struct proto_writer *out,
                                 struct proto_block *block);

/**
 * Core's IsBlockMutated on a decoded block (computes and caches ids).
 * Exposed for tests and for the daemon's own checks.
 */
bool cmpct_block_mutated(struct proto_block *b, bool check_witness_root);

/**
 * Core's CBlockHeaderAndShortTxIDs(block, nonce): the header, the nonce,
 * the coinbase prefilled at index 0 and a short id for every other
 * transaction, in order. 0 or PROTO_ENOMEM (or an encoding error).
 */
PROTO_WUR int cmpct_build(struct proto_block *b, uint64_t nonce, struct proto_cmpctblock *cb);

#endif
