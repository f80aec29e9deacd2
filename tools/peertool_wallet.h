/**
 * tools/peertool_wallet.h: a deterministic, seed-derived wallet for
 * peertool chaingen: keys, output scripts of every standard type, and
 * input signatures made with libsecp256k1.
 *
 * Glossary
 *   seed     32 bytes (SHA-256 of the user's --seed text); every key and
 *            every Schnorr aux_rand comes from it through tagged hashes,
 *            so the same seed gives byte-identical transactions.
 *   owner    a 32-bit index: one owner per output created. Its keys are
 *            derived from (seed, owner, role), role 0..2.
 *   coin type one of the seven output templates the wallet pays to and
 *            spends (enum peertool_coin_type).
 *
 * Nothing here touches the clock or the OS's randomness: ECDSA uses
 * RFC 6979 nonces (libsecp256k1's default), Schnorr a seed-derived
 * aux_rand. Single-threaded: a wallet is owned by one caller.
 */
#ifndef PEERD_PEERTOOL_WALLET_H
#define PEERD_PEERTOOL_WALLET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "script/script.h"

/** The output templates the wallet can create and spend. */
enum peertool_coin_type {
	PEERTOOL_COIN_P2PKH = 0,   /**< DUP HASH160 <20> EQUALVERIFY CHECKSIG */
	PEERTOOL_COIN_P2SH_MULTI,  /**< P2SH of 2-of-3 CHECKMULTISIG */
	PEERTOOL_COIN_P2SH_P2WPKH, /**< P2SH wrapping OP_0 <20> */
	PEERTOOL_COIN_P2WPKH,      /**< OP_0 <20> */
	PEERTOOL_COIN_P2WSH_MULTI, /**< OP_0 <32>, 2-of-3 CHECKMULTISIG witness script */
	PEERTOOL_COIN_P2TR_KEY,    /**< OP_1 <32>, no script tree, spent by key path */
	PEERTOOL_COIN_P2TR_SCRIPT, /**< OP_1 <32>, two-leaf tree, spent by a leaf */
	PEERTOOL_COIN__COUNT       /**< number of types, not one itself */
};

/** Stable name of a type ("p2pkh", "p2tr-script"...), as --mix spells it. */
const char *peertool_coin_type_name(enum peertool_coin_type t);

/** Longest scriptPubKey the wallet makes (P2WSH, P2TR). */
#define PEERTOOL_SPK_MAX 34u
/** Longest scriptSig the wallet makes (P2SH 2-of-3: OP_0, two sigs, 105-byte script). */
#define PEERTOOL_SCRIPTSIG_MAX 260u
/** Most witness items of one input (P2WSH 2-of-3: dummy, two sigs, script). */
#define PEERTOOL_WIT_ITEMS 4u
/** Longest witness item (the 105-byte witness script). */
#define PEERTOOL_WIT_ITEM_MAX 112u

/** The wallet: a signing context and the seed. Init/release; not copyable. */
struct peertool_wallet {
	void *ctx; /**< secp256k1_context *, opaque here so users need not include it */
	uint8_t seed[32];
};

/** Everything it takes to pay to or spend one owner's output of one type. */
struct peertool_keys {
	enum peertool_coin_type type;
	uint8_t sk[3][32];    /**< secret keys by role; only the roles the type uses */
	uint8_t pub[3][33];   /**< compressed public keys (ECDSA types) */
	uint8_t xonly[3][32]; /**< x-only keys (taproot types) */
	uint8_t script[PEERTOOL_WIT_ITEM_MAX]; /**< redeem/witness script, or the spent tapleaf */
	size_t script_len;
	uint8_t control[SCRIPT_TAPROOT_CONTROL_BASE_SIZE + SCRIPT_TAPROOT_CONTROL_NODE_SIZE];
	size_t control_len;    /**< P2TR script path only */
	uint8_t leaf_hash[32]; /**< P2TR script path: the spent leaf's TapLeaf hash */
	uint8_t tweak[32];     /**< P2TR key path: TapTweak of the internal key */
	uint8_t spk[PEERTOOL_SPK_MAX];
	size_t spk_len;
};

/** One input's unlocking data: scriptSig and witness stack, by value. */
struct peertool_sigdata {
	uint8_t script_sig[PEERTOOL_SCRIPTSIG_MAX];
	size_t script_sig_len;
	uint8_t wit[PEERTOOL_WIT_ITEMS][PEERTOOL_WIT_ITEM_MAX];
	size_t wit_len[PEERTOOL_WIT_ITEMS];
	size_t n_wit;
};

/** Signing choices that vary between inputs (derived from the seed by the caller). */
struct peertool_sign_opts {
	unsigned multisig_pair; /**< 0..2: which two of the three keys sign (0+1, 0+2, 1+2) */
	bool taproot_default;   /**< taproot: SIGHASH_DEFAULT (64-byte sig), else SIGHASH_ALL */
};

/** Set up a wallet for the seed text. 0, or -1 when libsecp256k1 cannot start. */
__attribute__((warn_unused_result)) int peertool_wallet_init(struct peertool_wallet *w,
                                                             const char *seed);
/** Free the signing context. */
void peertool_wallet_release(struct peertool_wallet *w);

/**
 * Derive owner's keys and scripts for type t into *k. 0, or -1 in the
 * astronomically unlikely case that no valid key comes out of 256 tries.
 */
__attribute__((warn_unused_result)) int peertool_wallet_keys(const struct peertool_wallet *w,
                                                             uint32_t owner,
                                                             enum peertool_coin_type t,
                                                             struct peertool_keys *k);

/**
 * Sign input `in` of tx (its scriptSigs and witnesses are ignored: none of
 * the sighashes used reads them), spending spent[in] locked by k. `pre`
 * must come from script_precompute(pre, tx, spent, true). Fills *out.
 * 0, or -1 if a signature could not be made.
 */
__attribute__((warn_unused_result)) int
peertool_wallet_sign(const struct peertool_wallet *w, const struct proto_tx *tx, uint32_t in,
                     const struct script_precomputed *pre, const struct script_spent_output *spent,
                     const struct peertool_keys *k, const struct peertool_sign_opts *opts,
                     struct peertool_sigdata *out);

/**
 * Upper bound of the virtual size one input of type t adds to a
 * transaction (outpoint, sequence, scriptSig, witness with the longest
 * signatures), in vbytes rounded up; for fee estimates before signing.
 */
size_t peertool_wallet_input_vsize(enum peertool_coin_type t);

#endif
