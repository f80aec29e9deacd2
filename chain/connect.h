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
/**
 * Skip the script checks of the next chain_connect_block call only (Core's
 * fScriptChecks false under assumevalid: chain_assume_valid_skips); every
 * other rule still runs. The call clears it, whatever its outcome.
 */
void chain_checker_skip_scripts(struct chain_checker *ck, bool skip);
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

/* ---------------------------------------------------------------------- */
/* Script-execution cache (scriptcache.c): filled by the mempool, used here */

/** Default script-execution cache size in bytes (Core's -maxsigcachesize share: 16 MiB). */
#define CHAIN_SCRIPT_CACHE_DEFAULT_BYTES (16u << 20)
/** A salted set of (wtxid, flags) whose scripts all passed; opaque. */
struct chain_script_cache;

/** A script cache of about `bytes`; NULL when out of memory. */
struct chain_script_cache *chain_script_cache_new(size_t bytes);
void chain_script_cache_free(struct chain_script_cache *sc);
/** Remember that wtxid's scripts pass under flags. */
void chain_script_cache_add(struct chain_script_cache *sc, const struct proto_hash *wtxid,
                            uint32_t flags);
/**
 * Was it remembered? `erase`: forget it on a hit (a block has used it).
 * `count`: a real ConnectBlock lookup (not a just-check one such as the
 * miner's test of its block), counted as a hit or a miss in the stats.
 */
bool chain_script_cache_has(struct chain_script_cache *sc, const struct proto_hash *wtxid,
                            uint32_t flags, bool erase, bool count);
/** Nothing cached (ConnectBlock then skips computing wtxids). */
bool chain_script_cache_is_empty(const struct chain_script_cache *sc);
/** Entries, capacity, hits and misses. */
void chain_script_cache_counters(const struct chain_script_cache *sc, uint64_t *entries,
                                 uint64_t *capacity, uint64_t *hits, uint64_t *misses);

/* ---------------------------------------------------------------------- */
/* What the mempool shares with ConnectBlock                               */

struct script_spent_output;
struct script_precomputed;

/**
 * Core's Consensus::CheckTxInputs after HaveInputs: maturity, value
 * ranges, in >= out, with prev[i] the coin input i spends. 0 with *fee,
 * or CHAIN_EINVALID.
 */
CHAIN_WUR int chain_check_tx_input_values(struct proto_tx *tx, const struct chain_coin *prev,
                                          int32_t spend_height, int64_t *fee,
                                          struct chain_state *st);
/** The checker's script cache (NULL when none). */
struct chain_script_cache *chain_checker_script_cache(struct chain_checker *ck);
/** Give the checker a script cache (it takes ownership). */
void chain_checker_set_script_cache(struct chain_checker *ck, struct chain_script_cache *sc);
/**
 * Run tx's script checks under `flags` on the check queue (in place
 * without workers). spent[i] is input i's spent output; pre is filled
 * here. Returns 0 when all pass, else *bad_input is the first failing
 * input (in input order) and *script_err its error; or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_checker_verify_tx(struct chain_checker *ck, const struct proto_tx *tx,
                                      const struct script_spent_output *spent,
                                      struct script_precomputed *pre, uint32_t flags, bool *failed,
                                      uint32_t *bad_input, int *script_err);

#endif
