/**
 * mempool/policy.h: Bitcoin Core 29's transaction standardness rules
 * (policy/policy.cpp, policy/feerate.cpp, policy/ephemeral_policy.cpp) as
 * pure functions: what a relay node refuses to relay or mine although
 * consensus would allow it.
 *
 * Part of mempool/mempool.h: include that, not this file.
 *
 * Glossary
 *   standard     a transaction Core relays by default: known output types,
 *                small push-only scriptSigs, bounded weight and sigops,
 *                no dust (Core's IsStandardTx and friends).
 *   dust         an output worth less than what spending it would cost at
 *                the dust relay feerate (Core's GetDustThreshold).
 *   vsize        virtual size: weight / 4 rounded up, or the sigop cost
 *                times bytes_per_sigop / 4 when that is larger.
 *   feerate      satoshis per 1,000 virtual bytes (sat/kvB), Core's CFeeRate.
 *
 * Everything here is pure: no globals, no allocation, no I/O; any thread
 * may call it on data it owns. Transactions are as proto_tx_decode leaves
 * them (sizes, witness spans); prev[] arrays hold one coin per input.
 * A check that rejects returns CHAIN_EINVALID and fills `st` (which may
 * be NULL) with Core's TxValidationResult, its reject reason and its
 * debug string, byte for byte.
 */
#ifndef PEERD_MEMPOOL_POLICY_H
#define PEERD_MEMPOOL_POLICY_H

#ifndef PEERD_MEMPOOL_PARTS
#error "include mempool/mempool.h, not mempool/policy.h"
#endif

/** Core's MAX_STANDARD_TX_WEIGHT: heaviest standard transaction, weight units. */
#define MEMPOOL_MAX_STANDARD_TX_WEIGHT 400000u
/** Core's MIN_STANDARD_TX_NONWITNESS_SIZE: smallest tx without witness (CVE-2017-12842). */
#define MEMPOOL_MIN_STANDARD_TX_NONWITNESS_SIZE 65u
/** Core's MAX_STANDARD_SCRIPTSIG_SIZE: room for a 15-of-15 P2SH multisig spend. */
#define MEMPOOL_MAX_STANDARD_SCRIPTSIG_SIZE 1650u
/** Core's MAX_P2SH_SIGOPS: most sigops a standard P2SH redeem script may count. */
#define MEMPOOL_MAX_P2SH_SIGOPS 15u
/** Core's MAX_STANDARD_TX_SIGOPS_COST: a fifth of the block's. */
#define MEMPOOL_MAX_STANDARD_TX_SIGOPS_COST 16000u
/** Core's DEFAULT_BYTES_PER_SIGOP (-bytespersigop): vbytes charged per sigop. */
#define MEMPOOL_DEFAULT_BYTES_PER_SIGOP 20
/** Core's DUST_RELAY_TX_FEE (-dustrelayfee), sat/kvB. */
#define MEMPOOL_DUST_RELAY_FEE 3000 /* sat/kvB */
/** Core's DEFAULT_MIN_RELAY_TX_FEE (-minrelaytxfee), sat/kvB. */
#define MEMPOOL_DEFAULT_MIN_RELAY_FEE 1000 /* sat/kvB */
/** Core's DEFAULT_INCREMENTAL_RELAY_FEE (-incrementalrelayfee), sat/kvB. */
#define MEMPOOL_DEFAULT_INCREMENTAL_RELAY_FEE 1000
/** Core's MAX_OP_RETURN_RELAY (-datacarriersize): whole OP_RETURN script, bytes. */
#define MEMPOOL_MAX_OP_RETURN_RELAY 83u
/** Core's TX_MAX_STANDARD_VERSION: versions 1..3 are standard. */
#define MEMPOOL_TX_MAX_STANDARD_VERSION 3
/** Core's MAX_DUST_OUTPUTS_PER_TX: dust outputs allowed (in a zero-fee tx only). */
#define MEMPOOL_MAX_DUST_OUTPUTS_PER_TX 1u
/** Core's MAX_STANDARD_P2WSH_STACK_ITEMS: witness items before the witness script. */
#define MEMPOOL_MAX_STANDARD_P2WSH_STACK_ITEMS 100u
/** Core's MAX_STANDARD_P2WSH_STACK_ITEM_SIZE, bytes. */
#define MEMPOOL_MAX_STANDARD_P2WSH_STACK_ITEM_SIZE 80u
/** Core's MAX_STANDARD_TAPSCRIPT_STACK_ITEM_SIZE, bytes. */
#define MEMPOOL_MAX_STANDARD_TAPSCRIPT_STACK_ITEM_SIZE 80u
/** Core's MAX_STANDARD_P2WSH_SCRIPT_SIZE, bytes. */
#define MEMPOOL_MAX_STANDARD_P2WSH_SCRIPT_SIZE 3600u

/** Relay policy knobs (Core's -dustrelayfee, -minrelaytxfee, ...). Plain value. */
struct mempool_policy {
	int64_t dust_relay_feerate;        /**< sat/kvB */
	int64_t min_relay_feerate;         /**< sat/kvB */
	int64_t incremental_relay_feerate; /**< sat/kvB */
	int64_t bytes_per_sigop;
	uint32_t max_datacarrier_bytes; /**< whole OP_RETURN script, Core's -datacarriersize */
	bool datacarrier;
	bool permit_bare_multisig;
	bool require_standard; /**< false = Core's -acceptnonstdtxn=1 (test chains only) */
};

/** Core's defaults for network p (require_standard as Core's chainparams for that network). */
void mempool_policy_default(struct mempool_policy *pol, const struct proto_params *p);

/** CFeeRate(sat_per_kvb).GetFee(vsize), rounding exactly as Core 29's CFeeRate does. */
int64_t mempool_feerate_fee(int64_t sat_per_kvb, int64_t vsize);
/** Core's GetVirtualTransactionSize(weight, sigop_cost, bytes_per_sigop). */
int64_t mempool_policy_vsize(int64_t weight, int64_t sigop_cost, int64_t bytes_per_sigop);
/** Core's GetDustThreshold for an output with this value-less scriptPubKey. */
int64_t mempool_policy_dust_threshold(const uint8_t *spk, size_t len, int64_t dust_feerate);
/** Core's IsDust for output `out` of tx. */
bool mempool_policy_is_dust(const struct proto_tx *tx, uint32_t out, int64_t dust_feerate);
/** Core's GetDust: indexes of dust outputs into idx (up to cap); returns how many there are. */
uint32_t mempool_policy_dust_outputs(const struct proto_tx *tx, int64_t dust_feerate, uint32_t *idx,
                                     uint32_t cap);

/**
 * Core's IsStandardTx: 0, or CHAIN_EINVALID with st = (TX_NOT_STANDARD,
 * Core's reason, no debug: Core gives none). In Core's order: "version"
 * (not 1..3), "tx-size" (weight over 400,000), then input by input
 * "scriptsig-size" (over 1,650 bytes) and "scriptsig-not-pushonly", then
 * output by output "scriptpubkey" (no standard template, multisig beyond
 * x-of-3, OP_RETURN over pol->max_datacarrier_bytes or any with
 * datacarrier off) and "bare-multisig" (unless permitted), then "dust"
 * (more than MEMPOOL_MAX_DUST_OUTPUTS_PER_TX dust outputs) and last
 * "multi-op-return". The mempool calls it only with pol->require_standard.
 */
CHAIN_WUR int mempool_policy_check_standard(const struct proto_tx *tx,
                                            const struct mempool_policy *pol,
                                            struct chain_state *st);
/**
 * Core's AreInputsStandard; prev[i] is the coin input i spends (n_in of
 * them). Rejects spending a non-standard or unknown-witness-version output
 * and a P2SH redeem script with over MEMPOOL_MAX_P2SH_SIGOPS sigops:
 * CHAIN_EINVALID with (TX_INPUTS_NOT_STANDARD, "bad-txns-nonstandard-inputs",
 * no debug: Core 29 gives none). Like Core, expects the scriptSigs to be
 * push-only (mempool_policy_check_standard passed); any other scriptSig of
 * a P2SH spend is called non-standard.
 */
CHAIN_WUR int mempool_policy_check_inputs(const struct proto_tx *tx, const struct chain_coin *prev,
                                          struct chain_state *st);
/**
 * Core's IsWitnessStandard, prev[] as above: a witness only on a witness
 * program (P2SH-wrapped or not; never on pay-to-anchor), P2WSH within the
 * script/item/count limits, taproot without an annex and with tapscript
 * items of at most 80 bytes. CHAIN_EINVALID with (TX_WITNESS_MUTATED,
 * "bad-witness-nonstandard", no debug). Core calls it only for a tx with
 * a witness; inputs without one pass here anyway.
 */
CHAIN_WUR int mempool_policy_check_witness(const struct proto_tx *tx, const struct chain_coin *prev,
                                           struct chain_state *st);
/**
 * Core's PreCheckEphemeralTx (policy/ephemeral_policy): dust only in a tx
 * paying 0 (base and modified fee). CHAIN_EINVALID with (TX_NOT_STANDARD,
 * "dust", "tx with dust output must be 0-fee"). Core runs it (with
 * require_standard) after IsWitnessStandard and before the sigop limit
 * and the fee checks.
 */
CHAIN_WUR int mempool_policy_check_ephemeral(const struct proto_tx *tx, int64_t base_fee,
                                             int64_t modified_fee, const struct mempool_policy *pol,
                                             struct chain_state *st);

/* ---- More of Core's PreChecks, each one rule with Core's words --------- */

/**
 * Core's MIN_STANDARD_TX_NONWITNESS_SIZE check (PreChecks, right after
 * IsStandardTx, and applied even with require_standard off):
 * (TX_NOT_STANDARD, "tx-size-small") for a tx whose serialization without
 * witness is under 65 bytes (CVE-2017-12842).
 */
CHAIN_WUR int mempool_policy_check_nonwitness_size(const struct proto_tx *tx,
                                                   struct chain_state *st);
/**
 * PreChecks' sigop limit: (TX_NOT_STANDARD, "bad-txns-too-many-sigops",
 * the cost in decimal) when over MEMPOOL_MAX_STANDARD_TX_SIGOPS_COST.
 */
CHAIN_WUR int mempool_policy_check_sigops(uint32_t sigop_cost, struct chain_state *st);
/**
 * The second half of Core's CheckFeeRate: (TX_RECONSIDERABLE, "min relay
 * fee not met", "FEE < WANT") when fee is under pol's min relay feerate
 * for vsize. The mempool's rolling minimum ("mempool min fee not met")
 * is the mempool's own check, made first.
 */
CHAIN_WUR int mempool_policy_check_min_relay_fee(int64_t fee, int64_t vsize,
                                                 const struct mempool_policy *pol,
                                                 struct chain_state *st);

#endif
