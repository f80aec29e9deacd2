/**
 * chain/index.h: the block index: every accepted header in memory, its
 * chain work and validity, ancestors in O(log n), locators, and the
 * header rules (Core's CheckBlockHeader and ContextualCheckBlockHeader).
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * Ownership: a chain_index owns every node; nodes never move or die while
 * the index lives, so a node pointer stays valid until chain_index_free.
 * One thread owns the index (the validation thread).
 */
#ifndef PEERD_CHAIN_INDEX_H
#define PEERD_CHAIN_INDEX_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/index.h"
#endif

/** Most a header's time may run ahead of the clock (Core MAX_FUTURE_BLOCK_TIME). */
#define CHAIN_MAX_FUTURE_TIME (2 * 60 * 60)
/** Blocks in the median-time-past window (Core's nMedianTimeSpan). */
#define CHAIN_MTP_SPAN 11
/** BIP94: most a retarget's first block may be older than the one before (testnet4). */
#define CHAIN_MAX_TIMEWARP 600

/**
 * Validity levels and flags of a node (Core's BlockStatus, same values so
 * persisted records read the same). The low three bits are a level; the
 * rest are flags.
 */
enum chain_status {
	CHAIN_VALID_UNKNOWN = 0,
	CHAIN_VALID_RESERVED = 1, /**< parsed, version ok, hash satisfies claimed PoW */
	CHAIN_VALID_TREE =
	    2, /**< all parents found and valid to this level; contextual header checks */
	CHAIN_VALID_TRANSACTIONS = 3, /**< CheckBlock passed; n_tx set */
	CHAIN_VALID_CHAIN = 4,   /**< outputs do not overspend, no double spends, coinbase ok */
	CHAIN_VALID_SCRIPTS = 5, /**< scripts and signatures ok */
	CHAIN_VALID_MASK = 7,
	CHAIN_HAVE_DATA = 8,     /**< full block in a blk file */
	CHAIN_HAVE_UNDO = 16,    /**< undo data in a rev file */
	CHAIN_FAILED_VALID = 32, /**< this block broke a rule */
	CHAIN_FAILED_CHILD = 64, /**< descends from a failed block */
	CHAIN_FAILED_MASK = CHAIN_FAILED_VALID | CHAIN_FAILED_CHILD,
};

/** 256-bit unsigned chain work, four 64-bit limbs, least significant first. */
struct chain_work {
	uint64_t limb[4];
};

/**
 * One header in the index. Fields after `status` are as Core's CBlockIndex.
 * `prev` of genesis is NULL. Owned by the index; never moves.
 */
struct chain_node {
	struct proto_hash hash;
	struct chain_node *prev;
	struct chain_node *skip; /**< an earlier ancestor, for O(log n) chain_node_ancestor */
	int32_t height;
	uint32_t status; /**< enum chain_status level | flags */
	/* the header, but prev (which is prev->hash) */
	int32_t version;
	uint32_t time;
	uint32_t bits;
	uint32_t nonce;
	struct proto_hash merkle_root;
	struct chain_work work; /**< total work of the chain up to and including this block */
	uint32_t time_max;      /**< max(time) over this block and its ancestors */
	uint32_t n_tx;          /**< transactions, once CHAIN_VALID_TRANSACTIONS */
	uint32_t seq;           /**< order of arrival of the block's data: earlier wins ties */
	/* where the block and its undo data are (CHAIN_HAVE_DATA / _UNDO) */
	int32_t file;      /**< blkNNNNN.dat / revNNNNN.dat number */
	uint32_t data_pos; /**< offset of the block's bytes (after magic and length) */
	uint32_t undo_pos; /**< offset of the undo data (after magic and length) */
	bool dirty;        /**< changed since the index was last written to the database */
	bool linked; /**< it and every ancestor have their data (Core's HaveNumChainTxs); not stored
	              */
	bool has_checksum; /**< `checksum` is known (stored blocks; fits the struct's padding) */
	uint32_t
	    checksum; /**< the block's frame checksum: first 4 bytes of SHA-256d, as on the wire */
};

/** The block index; opaque. */
struct chain_index;

/**
 * A new index holding only the network's genesis header (height 0, work
 * of its bits). `*out` is the caller's (chain_index_free). 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_index_new(struct chain_index **out, const struct proto_params *params);
/** Free the index and every node; NULL is fine. */
void chain_index_free(struct chain_index *idx);
/** The network the index is for. */
const struct proto_params *chain_index_params(const struct chain_index *idx);

/** The node with this hash, or NULL. O(1). */
struct chain_node *chain_index_find(const struct chain_index *idx, const struct proto_hash *hash);
/** The genesis node. */
struct chain_node *chain_index_genesis(const struct chain_index *idx);
/** The valid node with the most work (first seen wins a tie); never NULL. */
struct chain_node *chain_index_best_header(const struct chain_index *idx);
/** Number of nodes. */
size_t chain_index_count(const struct chain_index *idx);
/** Bytes the index holds in memory, everything counted (for the bytes-per-header figure). */
size_t chain_index_memory(const struct chain_index *idx);

/**
 * Accept a header as Core's AcceptBlockHeader: a known header returns its
 * node (CHAIN_EINVALID with "duplicate-invalid"... as Core if it is marked
 * failed); otherwise CheckBlockHeader (`high-hash`), the parent must be
 * known (CHAIN_RESULT_MISSING_PREV, `prev-blk-not-found`) and not failed
 * (CHAIN_RESULT_INVALID_PREV, `bad-prevblk`), then the contextual checks
 * (chain_check_header_contextual) at `now` (seconds since the epoch). On
 * success the node is added at CHAIN_VALID_TREE, best header updated, and
 * returned in `*out` (may be NULL). 0, CHAIN_EINVALID (st says why) or
 * CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_index_add_header(struct chain_index *idx, const struct proto_block_header *h,
                                     int64_t now, struct chain_node **out, struct chain_state *st);

/**
 * Insert a node read back from the database (chain_node_decode), trusting
 * its stored status and work; its parent must already be in the index
 * (load in height order). The genesis record (zero prev hash) updates the
 * genesis node chain_index_new made (status, n_tx, seq, file positions).
 * 0, CHAIN_EEXIST, CHAIN_ENOTFOUND (no parent) or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_index_insert_loaded(struct chain_index *idx, const struct chain_node *loaded,
                                        const struct proto_hash *prev_hash,
                                        struct chain_node **out);

/**
 * Recompute the best header over every node that is not failed (after
 * nodes were marked failed or loaded). O(n).
 */
void chain_index_recompute_best(struct chain_index *idx);

/** Call fn on every node in an unspecified order; stops at fn's first non-zero return, which it
 * returns. */
int chain_index_foreach(struct chain_index *idx, int (*fn)(struct chain_node *n, void *arg),
                        void *arg);

/** The ancestor at `height` (the node itself at its own height), NULL above it. O(log n). */
struct chain_node *chain_node_ancestor(struct chain_node *n, int32_t height);
/** Core's GetMedianTimePast: the median time of the node and its 10 predecessors. */
int64_t chain_node_mtp(const struct chain_node *n);
/** The node's header (prev filled from its parent). */
void chain_node_header(const struct chain_node *n, struct proto_block_header *out);
/** The last common ancestor of a and b. */
struct chain_node *chain_node_fork(struct chain_node *a, struct chain_node *b);
/** True when the node is marked failed (itself or an ancestor). */
static inline bool chain_node_failed(const struct chain_node *n)
{
	return (n->status & CHAIN_FAILED_MASK) != 0;
}
/** The validity level (enum chain_status below CHAIN_VALID_MASK). */
static inline uint32_t chain_node_level(const struct chain_node *n)
{
	return n->status & CHAIN_VALID_MASK;
}

/** Work a block of these bits proves: 2^256 / (target + 1), as Core's GetBlockProof. */
void chain_work_of_bits(uint32_t bits, struct chain_work *out);
/** a + b (saturating at 2^256 - 1). */
void chain_work_add(struct chain_work *a, const struct chain_work *b);
/** -1, 0 or 1 as a < b, a == b, a > b. */
int chain_work_cmp(const struct chain_work *a, const struct chain_work *b);
/** 64 lowercase hex digits, most significant first (Core's `chainwork`); out has 65 bytes. */
void chain_work_hex(const struct chain_work *w, char out[65]);
/** Read a 256-bit little-endian number (proto_params.min_chain_work) as work. */
void chain_work_from_le(const uint8_t in[32], struct chain_work *out);
/**
 * Parse work as Core's -minimumchainwork takes it (uint256::FromUserHex):
 * an optional "0x", then 1 to 64 hex digits. 0 or CHAIN_EARG.
 */
CHAIN_WUR int chain_work_from_hex(const char *hex, struct chain_work *out);
/** The work as a double (for `difficulty`-style figures and progress). */
double chain_work_double(const struct chain_work *w);
/**
 * Core's GetBlockProofEquivalentTime: the seconds of block production at
 * tip's difficulty that the work between `from` and `to` stands for
 * (negative when `to` has less work), saturating at INT64_MAX in size.
 */
int64_t chain_proof_equivalent_time(const struct chain_node *to, const struct chain_node *from,
                                    const struct chain_node *tip, const struct proto_params *p);
/** Core's GetDifficulty of compact bits. */
double chain_difficulty(uint32_t bits);

/**
 * Locator from n back to genesis, as Core's LocatorEntries: the last 10
 * one by one, then doubling steps, genesis last. At most
 * CHAIN_LOCATOR_MAX hashes written to out; returns the count.
 */
#define CHAIN_LOCATOR_MAX 40
size_t chain_node_locator(const struct chain_node *n, struct proto_hash *out, size_t cap);

/**
 * Core's GetNextWorkRequired for the block after `prev` with header time
 * `time`: main's retargeting every interval; testnet3/testnet4's 20-minute
 * minimum-difficulty rule (testnet4 with BIP94's first-block bits);
 * signet and regtest as their parameters say.
 */
uint32_t chain_next_work_required(const struct chain_node *prev, uint32_t time,
                                  const struct proto_params *p);

/**
 * Core's CheckBlockHeader: proof of work (`high-hash`,
 * CHAIN_RESULT_INVALID_HEADER). Context-free. 0 or CHAIN_EINVALID.
 */
CHAIN_WUR int chain_check_header(const struct proto_block_header *h, const struct proto_params *p,
                                 struct chain_state *st);

/**
 * Core's ContextualCheckBlockHeader against the parent `prev` at `now`:
 * `bad-diffbits`, `time-too-old`, `time-timewarp-attack` (BIP94),
 * `time-too-new` (CHAIN_RESULT_TIME_FUTURE), `bad-version(0x%08x)` for
 * versions below 2/3/4 after the BIP34/66/65 heights. 0 or CHAIN_EINVALID.
 */
CHAIN_WUR int chain_check_header_contextual(const struct proto_block_header *h,
                                            const struct chain_node *prev, int64_t now,
                                            const struct proto_params *p, struct chain_state *st);

/**
 * Serialized node for the database (little-endian, versioned; the prev
 * hash included so records can be loaded in any order and linked).
 * CHAIN_NODE_RECORD_SIZE bytes. Version 1 leaves bytes 180-191 zero;
 * the frame checksum went into them later without a new version: bytes
 * 180-183 the checksum, 184-187 flags (bit 0: the checksum is there), so
 * a record written before reads as "checksum not known" and one written
 * now still reads in an older peerd, which ignores those bytes.
 */
#define CHAIN_NODE_RECORD_SIZE 192
void chain_node_encode(const struct chain_node *n, uint8_t out[CHAIN_NODE_RECORD_SIZE]);
/**
 * Decode a record into a detached node (prev/skip NULL) and its parent's
 * hash. 0 or CHAIN_ECORRUPT.
 */
CHAIN_WUR int chain_node_decode(const uint8_t *rec, size_t len, struct chain_node *out,
                                struct proto_hash *prev_hash);

#endif
