/**
 * chain/check.h: the block rules that need no UTXO set: Core's CheckBlock
 * (context-free) and ContextualCheckBlock (needs the parent), the script
 * flags and subsidy of a height, transaction finality and BIP68 sequence
 * locks (used by ConnectBlock and the mempool).
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * Everything here is pure: no globals, and no allocation but the merkle
 * leaf array a block keeps for reuse (proto_block_merkle_root) and the
 * sorted copy script_check_transaction makes of a large transaction's
 * outpoints; any thread may call it on data it owns. Index nodes are
 * only read.
 */
#ifndef PEERD_CHAIN_CHECK_H
#define PEERD_CHAIN_CHECK_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/check.h"
#endif

/** Most legacy signature operations a block may hold, times WITNESS_SCALE (Core
 * MAX_BLOCK_SIGOPS_COST). */
#define CHAIN_MAX_BLOCK_SIGOPS_COST 80000u
/** Longest `CScript() << height` BIP34 prefix: a push opcode and 4 bytes (chain_bip34_script). */
#define CHAIN_BIP34_SCRIPT_MAX 5u

/**
 * Core's CheckBlock: header proof of work (`high-hash`, only when
 * check_pow), merkle root (`bad-txnmrklroot`; `bad-txns-duplicate` for a
 * CVE-2012-2459 mutation; both CHAIN_RESULT_MUTATED, only when
 * check_merkle), `bad-blk-length`, `bad-cb-missing`, `bad-cb-multiple`,
 * every transaction through script_check_transaction (its reason, e.g.
 * `bad-txns-vin-empty`), and the legacy sigop limit `bad-blk-sigops`.
 * Witness data is not looked at: that is chain_check_block_contextual's.
 * On signet, with check_pow, the block solution after the header
 * (`bad-signet-blksig`, chain/signet.c). Computes and caches the
 * transactions' ids in b.
 * 0, CHAIN_EINVALID (st says why) or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_check_block(struct proto_block *b, const struct proto_params *p, bool check_pow,
                                bool check_merkle, struct chain_state *st);

/**
 * Core's CheckSignetBlockSolution (chain/signet.c) for a network with a
 * signet challenge (p->signet_challenge): the solution in the witness
 * commitment output satisfies the challenge over the block's data; no
 * solution counts as an empty one; the genesis block always passes. 0,
 * CHAIN_EINVALID (`bad-signet-blksig`, CHAIN_RESULT_CONSENSUS) or
 * CHAIN_ENOMEM. chain_check_block calls it; any thread.
 */
CHAIN_WUR int chain_check_signet_block(struct proto_block *b, const struct proto_params *p,
                                       struct chain_state *st);

/**
 * Core's ContextualCheckBlock for a block whose parent is `prev` (NULL for
 * genesis): every transaction final at the block's height and lock-time
 * cutoff (MTP of prev once CSV is active, else the block's time;
 * `bad-txns-nonfinal`), BIP34's height at the start of the coinbase
 * scriptSig (`bad-cb-height`), the witness commitment once segwit is
 * active (`bad-witness-nonce-size`, `bad-witness-merkle-match`, both
 * CHAIN_RESULT_MUTATED), `unexpected-witness` (MUTATED) for witness data
 * in a block without a commitment, and `bad-blk-weight`. Expects a block
 * that passed chain_check_block. 0, CHAIN_EINVALID or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_check_block_contextual(struct proto_block *b, const struct chain_node *prev,
                                           const struct proto_params *p, struct chain_state *st);

/**
 * The bytes Core's `CScript() << height` makes (OP_0, OP_1..OP_16, else a
 * minimal script-number push): what BIP34 wants a coinbase scriptSig to
 * start with. Writes at most CHAIN_BIP34_SCRIPT_MAX bytes; returns how
 * many. height must be >= 0.
 */
size_t chain_bip34_script(int32_t height, uint8_t out[CHAIN_BIP34_SCRIPT_MAX]);

/**
 * Core's GetBlockScriptFlags for the block `hash` at `height` on network p:
 * P2SH, WITNESS and TAPROOT always (but for Core's exception blocks, which
 * get their own base set), DERSIG, CHECKLOCKTIMEVERIFY, CHECKSEQUENCEVERIFY
 * and NULLDUMMY from the BIP66, BIP65, CSV and segwit heights. A negative
 * height means unknown and counts as above every activation height.
 */
uint32_t chain_block_script_flags(const struct proto_params *p, const struct proto_hash *hash,
                                  int32_t height);

/**
 * Core's GetBlockSubsidy: 50 BTC halved every p->subsidy_halving_interval
 * blocks (150 on regtest), 0 from the 64th halving on. In satoshis.
 */
int64_t chain_block_subsidy(int32_t height, const struct proto_params *p);

/**
 * Core's IsFinalTx: locktime 0, or below `height` (a height locktime) or
 * `time` (a time locktime, at or over SCRIPT_LOCKTIME_THRESHOLD), or every
 * input's sequence SCRIPT_SEQUENCE_FINAL.
 */
bool chain_tx_is_final(const struct proto_tx *tx, int32_t height, int64_t time);

/**
 * BIP68 relative lock times of a transaction (Core's CalculateSequenceLocks),
 * in nLockTime's "last invalid" sense: the transaction may be in a block
 * of height > min_height whose parent's MTP is > min_time. -1 means none.
 */
struct chain_seq_locks {
	int32_t min_height;
	int64_t min_time;
};

/**
 * Compute tx's sequence locks for a block whose parent is `prev`.
 * `prev_heights[i]` is the height of the block that created the coin
 * input i spends (for a coin not yet in a block, as the mempool has it,
 * prev->height + 1). A time lock counts from the MTP of the block before
 * the coin's, read from prev's ancestors. `enforce`: the CSV deployment is
 * active for the block (Core's LOCKTIME_VERIFY_SEQUENCE); without it, or
 * for a tx version below 2 (compared unsigned, as Core), there are no
 * locks. Heights above prev->height + 1 are the caller's bug and are
 * treated as prev->height + 1.
 */
void chain_tx_sequence_locks(const struct proto_tx *tx, bool enforce, const int32_t *prev_heights,
                             const struct chain_node *prev, struct chain_seq_locks *out);

/**
 * Core's EvaluateSequenceLocks for a block whose parent is `prev`: true when
 * the locks are satisfied (min_height below the block's height and
 * min_time below prev's MTP).
 */
bool chain_seq_locks_ok(const struct chain_seq_locks *locks, const struct chain_node *prev);

/** Both of the above: Core's SequenceLocks. */
bool chain_tx_sequence_locks_ok(const struct proto_tx *tx, bool enforce,
                                const int32_t *prev_heights, const struct chain_node *prev);

/* ---- sigops ----------------------------------------------------------- */

/** Core's GetLegacySigOpCount: scriptSigs and scriptPubKeys, CHECKMULTISIG as 20. */
uint32_t chain_tx_legacy_sigops(const struct proto_tx *tx);
/**
 * Sigop cost of input j spending spk beyond the legacy count: its P2SH
 * redeem script's sigops times 4 (with SCRIPT_VERIFY_P2SH) plus its
 * witness sigops. chain_tx_sigop_cost and ConnectBlock sum these.
 */
uint32_t chain_input_sigop_cost(const struct proto_tx *tx, uint32_t j, const uint8_t *spk,
                                uint32_t spk_len, uint32_t flags);
/**
 * Core's GetTransactionSigOpCost with the spent coins prev[] and script
 * flags (the mempool uses SCRIPT_VERIFY_STANDARD): legacy sigops times 4,
 * plus P2SH (times 4) and witness sigops of each input. A coinbase counts
 * only the legacy part and prev is not read.
 */
uint32_t chain_tx_sigop_cost(const struct proto_tx *tx, const struct chain_coin *prev,
                             uint32_t flags);

#endif
