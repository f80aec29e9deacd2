/**
 * chain/connect.h: connecting a block to the UTXO set and disconnecting
 * it again (Core's ConnectBlock and DisconnectBlock), with every input's
 * script check a job on the worker pool (Core's CScriptCheck on
 * CCheckQueue).
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * Threads: the validating thread calls everything here and works on the
 * check queue too; the queue's workers only run script checks.
 */
#ifndef PEERD_CHAIN_CONNECT_H
#define PEERD_CHAIN_CONNECT_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/connect.h"
#endif

/** Core's COINBASE_MATURITY: blocks before a coinbase output may be spent. */
#define CHAIN_COINBASE_MATURITY 100
/** Core's MAX_BLOCK_SIGOPS_COST. */
#define CHAIN_MAX_BLOCK_SIGOPS_COST 80000u
/** Core's BIP34_IMPLIES_BIP30_LIMIT: BIP30 is checked again from this height on. */
#define CHAIN_BIP34_IMPLIES_BIP30_LIMIT 1983702

/** The script-check pipeline of one chain: a check queue and reusable buffers; opaque. */
struct chain_checker;

/**
 * Start a checker with `par` script-check threads in all, the validating
 * thread included (bitcoind's -par: 0 one per core, 1 no workers: checks
 * run inline in block order, as Core without a check queue). 0,
 * CHAIN_ENOMEM or CHAIN_EARG.
 */
CHAIN_WUR int chain_checker_new(struct chain_checker **out, int par);
/** Stop the workers and free; NULL is fine. */
void chain_checker_free(struct chain_checker *ck);
/** Worker threads, not counting the validating thread. */
unsigned chain_checker_workers(const struct chain_checker *ck);
/** The check queue's counters (jobs, rounds, busy and idle time per thread). */
void chain_checker_stats(struct chain_checker *ck, struct pool_queue_stats *out);

/** What connecting a block measured. */
struct chain_connect_info {
	int64_t fees;    /**< satoshis */
	uint32_t inputs; /**< inputs of non-coinbase transactions */
	uint32_t sigops; /**< sigop cost */
	uint32_t jobs;   /**< script checks run */
};

/**
 * Core's ConnectBlock: the block `b` (already through chain_check_block
 * and chain_check_block_contextual) at index node `node`, on top of the
 * coins' best block (node->prev). Checks BIP30, inputs, maturity, values,
 * BIP68, sigops, the coinbase amount and every script (the first failure
 * stops the rest), with Core's reject reasons and Core's precedence (with
 * workers, a script failure is reported only when no other rule failed;
 * without, the first failing transaction wins). On success, unless
 * `just_check`, the coins are updated and at node's hash, and `undo` (may
 * be NULL only with just_check; initialised by the caller) holds the
 * spent coins. On CHAIN_EINVALID nothing changed. Other errors (out of
 * memory or the database) after the checks passed may leave the cache
 * partly updated: the caller must stop and recover from disk, as Core's
 * fatal errors do.
 */
CHAIN_WUR int chain_connect_block(struct chain_coins *coins, struct chain_checker *ck,
                                  struct proto_block *b, const struct chain_node *node,
                                  const struct proto_params *p, bool just_check,
                                  struct chain_block_undo *undo, struct chain_connect_info *info,
                                  struct chain_state *st);

/**
 * Core's DisconnectBlock: undo `b` at `node` (the coins' best block) with
 * its undo data, leaving the coins at node->prev. *unclean is set when
 * the coins did not match the block exactly (Core's DISCONNECT_UNCLEAN;
 * the result is still usable). 0, CHAIN_ECORRUPT (undo data does not fit
 * the block) or the cache's error.
 */
CHAIN_WUR int chain_disconnect_block(struct chain_coins *coins, struct proto_block *b,
                                     const struct chain_node *node, const struct proto_params *p,
                                     const struct chain_block_undo *undo, bool *unclean);

/** Core's IsBIP30Repeat: one of the two mainnet blocks whose coinbase repeats an earlier one. */
bool chain_is_bip30_repeat(const struct proto_params *p, const struct chain_node *node);

#endif
