/**
 * chain/versionbits.h: BIP9 deployments as Bitcoin Core 29's versionbits
 * (versionbits.cpp, kernel/chainparams.cpp's vDeployments): each
 * network's deployments, the threshold state of a deployment for the
 * block after a given one, its statistics, and the block version a miner
 * sets (ComputeBlockVersion).
 *
 * Glossary: a period is `period` blocks whose heights run from a multiple
 * of it; every block of a period has the state computed at the last block
 * of the period before (Core's pindexPrev at height k * period - 1). The
 * state moves DEFINED -> STARTED (that block's median time past reached
 * start_time) -> LOCKED_IN (threshold of the period's blocks signalled
 * the bit) -> ACTIVE (the next period, once min_activation_height is
 * reached), or STARTED -> FAILED (the timeout passed unlocked).
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * A chain_vb owns a cache of states keyed by index node (Core's
 * ThresholdConditionCache): nodes never move while the index lives, so
 * the cache stays right across reorganisations. One thread: the chain's.
 */
#ifndef PEERD_CHAIN_VERSIONBITS_H
#define PEERD_CHAIN_VERSIONBITS_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/versionbits.h"
#endif

/** Core's VERSIONBITS_TOP_BITS: what a signalling version starts with. */
#define CHAIN_VB_TOP_BITS 0x20000000
/** Core's VERSIONBITS_TOP_MASK. */
#define CHAIN_VB_TOP_MASK 0xe0000000u
/** start_time of a deployment active from genesis (Core's ALWAYS_ACTIVE). */
#define CHAIN_VB_ALWAYS_ACTIVE (-1)
/** start_time of a deployment that never activates (Core's NEVER_ACTIVE). */
#define CHAIN_VB_NEVER_ACTIVE (-2)
/** timeout of a deployment without one (Core's NO_TIMEOUT). */
#define CHAIN_VB_NO_TIMEOUT INT64_MAX

/** Core's VERSIONBITS_NUM_BITS: the bits the unknown-rules warning watches. */
#define CHAIN_VB_WARN_BITS 29

/** The deployments, in Core 29's DeploymentPos order. */
enum chain_vb_pos {
	CHAIN_VB_TESTDUMMY = 0,
	CHAIN_VB_TAPROOT,
	CHAIN_VB_COUNT,
};

/** Core's ThresholdState. */
enum chain_vb_state {
	CHAIN_VB_DEFINED = 0,
	CHAIN_VB_STARTED,
	CHAIN_VB_LOCKED_IN,
	CHAIN_VB_ACTIVE,
	CHAIN_VB_FAILED,
};

/** One deployment's parameters (Core's Consensus::BIP9Deployment). */
struct chain_vb_deployment {
	const char *name;              /**< Core's VersionBitsDeploymentInfo name ("testdummy") */
	int bit;                       /**< the version bit signalling it */
	int64_t start_time;            /**< median time past; or ALWAYS_ACTIVE / NEVER_ACTIVE */
	int64_t timeout;               /**< median time past at which a STARTED one fails */
	int32_t min_activation_height; /**< LOCKED_IN stays so until this height */
	int32_t period;                /**< blocks per signalling period */
	int32_t threshold;             /**< signalling blocks of a period that lock it in */
};

/** Signalling in the period of a block so far (Core's BIP9Stats). */
struct chain_vb_stats {
	int32_t period, threshold, elapsed, count;
	bool possible; /**< the threshold can still be reached in this period */
};

/** The versionbits state; opaque. */
struct chain_vb;
struct chain;

/**
 * The deployments of network p: Core 29's, with `over` (may be NULL;
 * entries whose name is NULL are skipped) replacing the start time,
 * timeout and minimum activation height of the one of the same position
 * (-vbparams). *out is the caller's (chain_vb_free). 0 or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_vb_new(struct chain_vb **out, const struct proto_params *p,
                           const struct chain_vb_deployment *over);
/** Free it; NULL is fine. */
void chain_vb_free(struct chain_vb *vb);
/** A deployment's parameters. */
const struct chain_vb_deployment *chain_vb_deployment(const struct chain_vb *vb,
                                                      enum chain_vb_pos pos);
/** Whether Core lists it at all (its start time is not NEVER_ACTIVE: DeploymentEnabled). */
bool chain_vb_enabled(const struct chain_vb *vb, enum chain_vb_pos pos);
/** "defined", "started", "locked_in", "active" or "failed" (Core's StateName). */
const char *chain_vb_state_name(enum chain_vb_state s);
/** The state for the block after prev (NULL: genesis), Core's GetStateFor. */
enum chain_vb_state chain_vb_state(struct chain_vb *vb, const struct chain_node *prev,
                                   enum chain_vb_pos pos);
/** The height from which the block after prev has had that state (GetStateSinceHeightFor). */
int32_t chain_vb_since(struct chain_vb *vb, const struct chain_node *prev, enum chain_vb_pos pos);
/**
 * The signalling in n's period up to and including n (GetStateStatisticsFor).
 * `sig` (may be NULL) gets one character a block of the period so far, '#'
 * signalled and '-' not, then a NUL: room for period + 1 bytes.
 */
void chain_vb_statistics(const struct chain_vb *vb, const struct chain_node *n,
                         enum chain_vb_pos pos, struct chain_vb_stats *out, char *sig);
/** Core's ComputeBlockVersion: the version of a new block on prev. */
int32_t chain_vb_block_version(struct chain_vb *vb, const struct chain_node *prev);
/**
 * Core's VersionBitsCache::CheckUnknownActivations for the block after tip
 * (NULL: genesis): each bit below CHAIN_VB_WARN_BITS is a deployment started
 * at genesis, with the network's window and threshold, signalled by a
 * block that sets it while the version this node would mine on its parent
 * does not. Returns the bits ACTIVE; *locked_in (may be NULL) gets the bits
 * LOCKED_IN. Cached as chain_vb_state; the chain's thread.
 */
uint32_t chain_vb_unknown_rules(struct chain_vb *vb, const struct chain_node *tip,
                                uint32_t *locked_in);
/** The versionbits state of c (made at chain_open from the config). */
struct chain_vb *chain_get_vb(struct chain *c);

/**
 * Parse one -vbparams value, `deployment:start:end[:min_activation_height]`,
 * into over[pos] of the deployment named (over: CHAIN_VB_COUNT entries).
 * 0, or -1 with Core's message in err ("Invalid deployment (x)", ...).
 */
int chain_vb_parse(const char *s, struct chain_vb_deployment *over, char *err, size_t err_len);

#endif
