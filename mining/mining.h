/**
 * mining/mining.h: making blocks as Bitcoin Core's miner makes them
 * (node/miner.cpp's BlockAssembler and rpc/mining.cpp's GenerateBlock):
 * the coinbase, the BIP141 witness commitment, the proof-of-work grind,
 * and a whole block on the active tip, checked as Core's
 * TestBlockValidity and submitted through chain_submit_block.
 *
 * The public face of mining/: block assembly from the mempool
 * (assemble.c, Core's addPackageTxs) and the miner (miner.c). It uses the
 * mempool and the chain through their public headers.
 *
 * The first three are pure (any thread, on data the caller owns);
 * peertool's chain generator uses them too, so there is one coinbase
 * and one grind in the tree. mining_generate is the chain's thread's.
 */
#ifndef PEERD_MINING_H
#define PEERD_MINING_H

#include "chain/chain.h"
#include "mempool/mempool.h"

/** Block version Core's miner sets with no deployment signalling (VERSIONBITS_TOP_BITS). */
#define MINING_BLOCK_VERSION 0x20000000
/** Coinbase version: Core's CTransaction::CURRENT_VERSION. */
#define MINING_COINBASE_VERSION 2
/** Nonces tried before giving up (Core's DEFAULT_MAX_TRIES). */
#define MINING_MAX_TRIES 1000000u
/** The commitment output's script: OP_RETURN, a 36-byte push of aa21a9ed and a hash. */
#define MINING_WITNESS_COMMITMENT_SIZE 38u

/**
 * Core's GenerateCoinbaseCommitment script for a block whose witness
 * merkle root (the wtxids, the coinbase's counted as zero: BIP141) is
 * `witness_root`: OP_RETURN, a 36-byte push of aa21a9ed and
 * SHA256d(witness_root || 32 zero bytes), the zero bytes being the
 * coinbase's witness nonce.
 */
void mining_commitment(const struct proto_hash *witness_root,
                       uint8_t out[MINING_WITNESS_COMMITMENT_SIZE]);

/** What a coinbase says. */
struct mining_coinbase {
	int32_t height;            /**< of the block; >= 0 */
	const uint8_t *spk;        /**< the reward's scriptPubKey */
	uint32_t spk_len;          /**< its length */
	int64_t value;             /**< satoshis: subsidy plus whatever fees are claimed */
	const uint8_t *commitment; /**< MINING_WITNESS_COMMITMENT_SIZE bytes, or NULL: none */
};

/**
 * Append Core's miner coinbase to w: version 2; one input spending the null
 * outpoint with scriptSig `CScript() << height << OP_0` (the BIP34 push,
 * then the extra-nonce slot, which also keeps heights 1..16 at the two
 * bytes bad-cb-length wants) and sequence 0xffffffff; the reward output;
 * with a commitment, the commitment output and the 32-byte zero witness
 * nonce as the input's witness. Lock time 0. Errors in w->err.
 */
void mining_write_coinbase(const struct mining_coinbase *cb, struct proto_writer *w);

/** How a grind ended. */
enum mining_grind_result {
	MINING_GRIND_FOUND = 0,   /**< h->nonce meets the target */
	MINING_GRIND_NO_TRIES,    /**< *max_tries reached 0 first */
	MINING_GRIND_WRAPPED,     /**< the nonce reached 0xffffffff: a new template is needed */
	MINING_GRIND_INTERRUPTED, /**< *interrupt was set */
};

/**
 * Core's GenerateBlock loop: from h->nonce, step the nonce until the
 * header's hash meets h->bits, taking one from *max_tries per step (the
 * budget is shared by every block of one generatetoaddress, as Core's).
 * A budget of k tests k nonces; a nonce that meets the target costs
 * nothing. *hash gets the last hash computed. `interrupt` (may be NULL),
 * when another thread sets it, stops the grind (Core's m_interrupt).
 */
enum mining_grind_result mining_grind(struct proto_block_header *h,
                                      const struct proto_hash *pow_limit, uint64_t *max_tries,
                                      const _Atomic bool *interrupt, struct proto_hash *hash);

/** One transaction for mining_generate, serialized (witness form or not). Borrowed. */
struct mining_tx {
	const uint8_t *raw;
	size_t len;
};

/** What to mine. */
struct mining_args {
	const uint8_t *spk; /**< the reward's scriptPubKey */
	uint32_t spk_len;
	const struct mining_tx *txs; /**< after the coinbase, in this order; may be NULL */
	size_t n_txs;
	bool submit;                   /**< hand the block to chain_submit_block */
	const _Atomic bool *interrupt; /**< may be NULL: see mining_grind */
	/** The coinbase claims the subsidy only, leaving the fees of txs
	 * unclaimed, as Core's generateblock (its template is made from no
	 * mempool and the transactions are added after). false: subsidy plus fees. */
	bool subsidy_only;
};

/** A block mining_generate made. */
struct mining_block {
	uint8_t *raw; /**< the block's bytes, xmalloc'd: mining_block_release frees */
	size_t len;
	struct proto_hash hash;
	int32_t height;
	int64_t fees;                /**< claimed by the coinbase (0 with subsidy_only) */
	enum chain_submit submitted; /**< with args->submit: what chain_submit_block said */
};

/** Free a mining_block's bytes; it is then empty. */
void mining_block_release(struct mining_block *m);

/**
 * Make a block on the active tip as Core's CreateNewBlock and
 * GenerateBlock: version as Core's ComputeBlockVersion (0x20000000 and the
 * bit of each deployment started or locked in: chain_vb_block_version); time max(MTP(tip) + 1, now)
 * (and, on BIP94 networks, at a retarget no more than 600 s before the tip); bits from
 * chain_next_work_required; the coinbase above paying the subsidy plus the fees of a->txs (the
 * subsidy only with a->subsidy_only), which are found by connecting the block against the coins
 * without changing them (Core's TestBlockValidity: contextual header checks, CheckBlock without
 * proof of work, ContextualCheckBlock, ConnectBlock); the commitment when segwit is active at the
 * height. Then the grind, and with a->submit chain_submit_block, whose verdict is out->submitted.
 *
 * 0: a block in *out. CHAIN_EINVALID: the block breaks a rule before any
 * grinding (a bad transaction; st has Core's reason and debug message).
 * CHAIN_ENOTFOUND: no block: *max_tries ran out (it is 0), the grind was
 * interrupted, or the nonce space ran out (call again for a new
 * template, as Core's loop does). CHAIN_EARG: a transaction does not decode. Else a fatal error.
 */
CHAIN_WUR int mining_generate(struct chain *c, const struct mining_args *a, uint64_t *max_tries,
                              struct mining_block *out, struct chain_state *st);

/* ---------------------------------------------------------------------- */
/* Block assembly (assemble.c)                                             */

/** Core's DEFAULT_BLOCK_MAX_WEIGHT (-blockmaxweight). */
#define MINING_BLOCK_MAX_WEIGHT_DEFAULT 4000000u
/** Core's DEFAULT_BLOCK_RESERVED_WEIGHT (-blockreservedweight): header and coinbase. */
#define MINING_BLOCK_RESERVED_WEIGHT_DEFAULT 8000u
/** Core's DEFAULT_COINBASE_OUTPUT_MAX_ADDITIONAL_SIGOPS: kept for the coinbase. */
#define MINING_BLOCK_RESERVED_SIGOPS 400
/** Core's DEFAULT_BLOCK_MIN_TX_FEE (-blockmintxfee), sat/kvB. */
#define MINING_BLOCK_MIN_TX_FEE_DEFAULT 1000

/** Limits of mining_assemble (Core's BlockAssembler::Options). */
struct mining_block_opts {
	uint64_t max_weight;      /**< the block's weight at most (4,000 .. 4,000,000) */
	uint64_t reserved_weight; /**< counted as used before any transaction */
	int64_t min_fee_rate;     /**< sat/kvB a package must pay */
};
#define MINING_BLOCK_OPTS_DEFAULT                                                                  \
	{                                                                                          \
		MINING_BLOCK_MAX_WEIGHT_DEFAULT, MINING_BLOCK_RESERVED_WEIGHT_DEFAULT,             \
		    MINING_BLOCK_MIN_TX_FEE_DEFAULT                                                \
	}

/**
 * The transactions of mp (c's pool) a block on c's tip would hold, in
 * block order, as Core's BlockAssembler (CreateNewBlock's
 * addPackageTxs): packages by ancestor feerate with modified fees,
 * within the weight and sigop limits, final at the next height, none
 * below the minimum fee rate. opts NULL: Core's defaults. *out
 * (xmalloc'd, the caller frees; NULL when nothing is chosen) points into
 * the pool: valid until it changes. 0 or CHAIN_ENOMEM.
 * Validation thread.
 */
CHAIN_WUR int mining_assemble(struct chain *c, struct mempool *mp,
                              const struct mining_block_opts *opts,
                              const struct mempool_entry ***out, size_t *n);

/* ---------------------------------------------------------------------- */
/* Templates (template.c)                                                  */

/** One transaction of a template: a copy, valid after the pool changes. */
struct mining_template_tx {
	uint8_t *raw; /**< serialized with witness; xmalloc'd */
	size_t len;
	struct proto_hash txid, wtxid;
	int64_t fee;     /**< base fee (prioritisation not counted, as Core's template) */
	int64_t sigops;  /**< sigop cost */
	uint32_t weight; /**< BIP141 weight */
};

/** A block template (Core's CBlockTemplate without the coinbase). */
struct mining_template {
	struct proto_hash prev;         /**< the tip it builds on */
	int32_t height;                 /**< of the new block */
	int32_t version;                /**< chain_vb_block_version on prev */
	struct mining_template_tx *txs; /**< block order, coinbase excluded */
	size_t n;
	int64_t fees;           /**< of txs */
	int64_t coinbase_value; /**< subsidy plus fees */
	uint64_t weight;        /**< reserved weight plus the transactions' (Core's nBlockWeight) */
	bool has_commitment;    /**< segwit active at height: commitment is set */
	uint8_t commitment[MINING_WITNESS_COMMITMENT_SIZE];
};

/**
 * A template on c's tip from mp as Core's CreateNewBlock (opts NULL:
 * Core's defaults). *t is the caller's (mining_template_release). 0 or
 * CHAIN_ENOMEM (t is then empty). Validation thread.
 */
CHAIN_WUR int mining_template_new(struct chain *c, struct mempool *mp,
                                  const struct mining_block_opts *opts, struct mining_template *t);
/** Free a template's copies; it is then empty. */
void mining_template_release(struct mining_template *t);
/** Core's GetMinimumTime: MTP(prev) + 1, on a BIP94 retarget not 600 s before prev. */
int64_t mining_min_time(struct chain *c, const struct chain_node *prev);
/** Core's UpdateTime: max(mining_min_time, the clock). */
uint32_t mining_block_time(struct chain *c, const struct chain_node *prev);
/**
 * Core's TestBlockValidity on the tip without proof of work: contextual
 * header checks, CheckBlock (the merkle root only with check_merkle),
 * ContextualCheckBlock, ConnectBlock without changing the coins. *fees
 * (may be NULL) gets what the transactions pay. 0, CHAIN_EINVALID (st
 * has Core's reason) or a fatal error. Validation thread.
 */
CHAIN_WUR int mining_test_block(struct chain *c, struct proto_block *b, bool check_merkle,
                                int64_t *fees, struct chain_state *st);
#endif
