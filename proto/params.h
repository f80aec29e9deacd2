/**
 * proto/params.h: network parameters of main, testnet3, testnet4, signet and regtest.
 *
 * Part of proto/proto.h, the module's one public face: include that,
 * not this file. Split out only to keep each file about one thing.
 */
#ifndef PEERD_PROTO_PARAMS_H
#define PEERD_PROTO_PARAMS_H

#ifndef PEERD_PROTO_H
#error "include proto/proto.h, not proto/params.h"
#endif

/* ---------------------------------------------------------------------- */
/* Network parameters                                                      */

/** The networks peerd knows, indexes into its parameter table. */
enum proto_net {
	PROTO_NET_MAIN = 0,
	PROTO_NET_TESTNET3,
	PROTO_NET_TESTNET4,
	PROTO_NET_SIGNET,
	PROTO_NET_REGTEST,
	PROTO_NET__COUNT /**< number of networks, not one itself */
};

/**
 * One network's constants (Core's CChainParams, the parts peerd uses).
 * Static, read-only storage: any thread may read it, nobody frees it.
 */
struct proto_params {
	enum proto_net net;
	const char *name; /**< "main", "test", "testnet4", "signet", "regtest" */
	uint32_t magic;   /**< as read little-endian from the wire */
	uint16_t default_port;
	const uint8_t *genesis; /**< raw genesis block */
	size_t genesis_len;
	struct proto_hash genesis_hash;
	struct proto_hash pow_limit;   /**< easiest target allowed, as a hash (wire order) */
	uint32_t pow_limit_bits;       /**< the same in compact form */
	int64_t pow_target_timespan;   /**< seconds: two weeks (regtest one day, as Core) */
	int64_t pow_target_spacing;    /**< seconds, ten minutes */
	bool pow_allow_min_difficulty; /**< testnet's 20-minute minimum-difficulty rule */
	bool pow_no_retargeting;       /**< regtest: difficulty never changes */
	bool enforce_bip94;            /**< testnet4 timewarp rule */
	/**
	 * Core 29's nMinimumChainWork, a 256-bit number stored little-endian
	 * (display order reversed, like a hash): a chain with less work is
	 * not downloaded, keeps peerd in initial block download, and its
	 * headers go through presync (zero on regtest).
	 */
	struct proto_hash min_chain_work;
	/**
	 * Core 29's defaultAssumeValid in display order (64 hex digits), NULL
	 * for none (regtest): scripts of its buried ancestors are not checked.
	 */
	const char *assume_valid;
	/* heights from which each soft fork's rules apply */
	int32_t bip34_height;
	int32_t bip65_height;
	int32_t bip66_height;
	int32_t csv_height;
	int32_t segwit_height;
	int32_t taproot_height;            /**< 0: always active */
	uint32_t subsidy_halving_interval; /**< blocks between subsidy halvings */
	const char *bech32_hrp;            /**< segwit address prefix ("bc", "tb", "bcrt") */
	/** BIP325 block challenge (signet only, else NULL/0). */
	const uint8_t *signet_challenge;
	size_t signet_challenge_len;
	/** A signet of another challenge (-signetchallenge): no seeds, as Core's. */
	bool signet_custom;
};

/** Longest -signetchallenge peerd takes, bytes (Core's MAX_SCRIPT_SIZE). */
#define PROTO_MAX_SIGNET_CHALLENGE 10000

/**
 * A signet with this challenge (Core's SigNetParams with -signetchallenge):
 * the default signet's parameters but the challenge (copied), the message
 * start taken from it (the first 4 bytes of SHA-256d of its serialization,
 * as Core), no minimum chain work and no assumed-valid block. Static
 * storage, rewritten by each call: call it at startup, before any thread
 * reads it. NULL when len is over PROTO_MAX_SIGNET_CHALLENGE.
 */
const struct proto_params *proto_params_signet_custom(const uint8_t *challenge, size_t len);

/** Blocks per retarget period (2016; 144 on regtest). */
static inline int64_t proto_params_retarget_interval(const struct proto_params *p)
{
	return p->pow_target_timespan / p->pow_target_spacing;
}

/** Parameters of a network; never NULL for a valid enum. */
const struct proto_params *proto_params(enum proto_net net);
/**
 * Look up by name ("main", "mainnet", "test", "testnet3", "testnet4",
 * "signet", "regtest"); NULL if unknown.
 */
const struct proto_params *proto_params_by_name(const char *name);
/** Look up by wire magic; NULL if unknown. */
const struct proto_params *proto_params_by_magic(uint32_t magic);

#endif
