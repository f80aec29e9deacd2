/**
 * script/script.h: Bitcoin's script interpreter, signature hashes and
 * signature checks: the public face of script/.
 *
 * Glossary
 *   scriptSig      the unlocking script in a transaction input.
 *   scriptPubKey   the locking script of the output being spent ("spk").
 *   witness        the input's segwit stack (BIP141), read from the tx.
 *   scriptCode     the part of a script a legacy or BIP143 signature commits
 *                  to: from the last executed OP_CODESEPARATOR to the end.
 *   sigversion     which rules a script runs under: base (legacy or P2SH),
 *                  witness v0 (P2WPKH/P2WSH), taproot key path, tapscript.
 *   precomputed    hashes over a whole transaction (prevouts, sequences,
 *                  outputs, spent amounts and scripts) computed once per
 *                  transaction and shared read-only by all its inputs.
 *   flags          SCRIPT_VERIFY_* bits with Bitcoin Core's meaning and bit
 *                  positions; unknown bits are ignored.
 *
 * Errors: script_verify's verdict is one of enum script_error, whose values
 * and names are Bitcoin Core's ScriptError (SCRIPT_ERR_EVAL_FALSE is
 * "EVAL_FALSE"); a few peerd-only codes follow Core's list.
 *
 * Threads: everything here is pure and may be called from any thread at
 * once. Signature checks share one read-only libsecp256k1 context
 * (secp256k1_context_static). script_verify allocates nothing on the common
 * path: its stack lives in a per-call scratch area on the caller's C stack
 * (about 54 KiB, whatever the size of the witness), and the heap (xmalloc)
 * only when a legacy signature check's FindAndDelete actually removes
 * something, which standard transactions never make happen.
 */
#ifndef PEERD_SCRIPT_H
#define PEERD_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/** On every fallible call: an ignored verdict is a compile error (-Werror). */
#define SCRIPT_WUR __attribute__((warn_unused_result))

/* ---------------------------------------------------------------------- */
/* Consensus limits (Bitcoin Core's script.h)                              */

/** Largest element a script may push or keep on the stack. */
#define SCRIPT_MAX_ELEMENT_SIZE 520u
/** Largest legacy or witness v0 script (tapscript has no such limit). */
#define SCRIPT_MAX_SIZE 10000u
/** Non-push opcodes per legacy or witness v0 script. */
#define SCRIPT_MAX_OPS 201
/** Stack plus altstack items. */
#define SCRIPT_MAX_STACK 1000u
/** Keys in one CHECKMULTISIG. */
#define SCRIPT_MAX_PUBKEYS_PER_MULTISIG 20
/** nLockTime below this is a block height, at or above it a time. */
#define SCRIPT_LOCKTIME_THRESHOLD 500000000u
/** BIP68 sequence bits. */
#define SCRIPT_SEQUENCE_FINAL            0xffffffffu
#define SCRIPT_SEQUENCE_LOCKTIME_DISABLE (1u << 31)
#define SCRIPT_SEQUENCE_LOCKTIME_TYPE    (1u << 22)
#define SCRIPT_SEQUENCE_LOCKTIME_MASK    0x0000ffffu
/** BIP342 validation weight: per executed signature check, and the allowance. */
#define SCRIPT_VALIDATION_WEIGHT_PER_SIGOP 50
#define SCRIPT_VALIDATION_WEIGHT_OFFSET    50
/** BIP341 control block: version+parity byte and internal key, then 32-byte nodes. */
#define SCRIPT_TAPROOT_CONTROL_BASE_SIZE 33u
#define SCRIPT_TAPROOT_CONTROL_NODE_SIZE 32u
#define SCRIPT_TAPROOT_CONTROL_MAX_NODES 128u
#define SCRIPT_TAPROOT_CONTROL_MAX_SIZE                                                            \
	(SCRIPT_TAPROOT_CONTROL_BASE_SIZE +                                                        \
	 SCRIPT_TAPROOT_CONTROL_NODE_SIZE * SCRIPT_TAPROOT_CONTROL_MAX_NODES)
/** Control byte bits that are the leaf version (the low bit is the output key's parity). */
#define SCRIPT_TAPROOT_LEAF_MASK 0xfeu
/** The leaf version BIP342 defines: tapscript. */
#define SCRIPT_TAPROOT_LEAF_TAPSCRIPT 0xc0u
/** First byte of a taproot annex (last witness item). */
#define SCRIPT_ANNEX_TAG 0x50u

/* ---------------------------------------------------------------------- */
/* Opcodes                                                                 */

/** Opcodes by byte value (Core's opcodetype); 0x01-0x4b push that many bytes. */
enum script_op {
	SCRIPT_OP_0 = 0x00,
	SCRIPT_OP_PUSHDATA1 = 0x4c,
	SCRIPT_OP_PUSHDATA2 = 0x4d,
	SCRIPT_OP_PUSHDATA4 = 0x4e,
	SCRIPT_OP_1NEGATE = 0x4f,
	SCRIPT_OP_RESERVED = 0x50,
	SCRIPT_OP_1 = 0x51,
	SCRIPT_OP_2 = 0x52,
	SCRIPT_OP_3 = 0x53,
	SCRIPT_OP_4 = 0x54,
	SCRIPT_OP_5 = 0x55,
	SCRIPT_OP_6 = 0x56,
	SCRIPT_OP_7 = 0x57,
	SCRIPT_OP_8 = 0x58,
	SCRIPT_OP_9 = 0x59,
	SCRIPT_OP_10 = 0x5a,
	SCRIPT_OP_11 = 0x5b,
	SCRIPT_OP_12 = 0x5c,
	SCRIPT_OP_13 = 0x5d,
	SCRIPT_OP_14 = 0x5e,
	SCRIPT_OP_15 = 0x5f,
	SCRIPT_OP_16 = 0x60,
	SCRIPT_OP_NOP = 0x61,
	SCRIPT_OP_VER = 0x62,
	SCRIPT_OP_IF = 0x63,
	SCRIPT_OP_NOTIF = 0x64,
	SCRIPT_OP_VERIF = 0x65,
	SCRIPT_OP_VERNOTIF = 0x66,
	SCRIPT_OP_ELSE = 0x67,
	SCRIPT_OP_ENDIF = 0x68,
	SCRIPT_OP_VERIFY = 0x69,
	SCRIPT_OP_RETURN = 0x6a,
	SCRIPT_OP_TOALTSTACK = 0x6b,
	SCRIPT_OP_FROMALTSTACK = 0x6c,
	SCRIPT_OP_2DROP = 0x6d,
	SCRIPT_OP_2DUP = 0x6e,
	SCRIPT_OP_3DUP = 0x6f,
	SCRIPT_OP_2OVER = 0x70,
	SCRIPT_OP_2ROT = 0x71,
	SCRIPT_OP_2SWAP = 0x72,
	SCRIPT_OP_IFDUP = 0x73,
	SCRIPT_OP_DEPTH = 0x74,
	SCRIPT_OP_DROP = 0x75,
	SCRIPT_OP_DUP = 0x76,
	SCRIPT_OP_NIP = 0x77,
	SCRIPT_OP_OVER = 0x78,
	SCRIPT_OP_PICK = 0x79,
	SCRIPT_OP_ROLL = 0x7a,
	SCRIPT_OP_ROT = 0x7b,
	SCRIPT_OP_SWAP = 0x7c,
	SCRIPT_OP_TUCK = 0x7d,
	SCRIPT_OP_CAT = 0x7e,
	SCRIPT_OP_SUBSTR = 0x7f,
	SCRIPT_OP_LEFT = 0x80,
	SCRIPT_OP_RIGHT = 0x81,
	SCRIPT_OP_SIZE = 0x82,
	SCRIPT_OP_INVERT = 0x83,
	SCRIPT_OP_AND = 0x84,
	SCRIPT_OP_OR = 0x85,
	SCRIPT_OP_XOR = 0x86,
	SCRIPT_OP_EQUAL = 0x87,
	SCRIPT_OP_EQUALVERIFY = 0x88,
	SCRIPT_OP_RESERVED1 = 0x89,
	SCRIPT_OP_RESERVED2 = 0x8a,
	SCRIPT_OP_1ADD = 0x8b,
	SCRIPT_OP_1SUB = 0x8c,
	SCRIPT_OP_2MUL = 0x8d,
	SCRIPT_OP_2DIV = 0x8e,
	SCRIPT_OP_NEGATE = 0x8f,
	SCRIPT_OP_ABS = 0x90,
	SCRIPT_OP_NOT = 0x91,
	SCRIPT_OP_0NOTEQUAL = 0x92,
	SCRIPT_OP_ADD = 0x93,
	SCRIPT_OP_SUB = 0x94,
	SCRIPT_OP_MUL = 0x95,
	SCRIPT_OP_DIV = 0x96,
	SCRIPT_OP_MOD = 0x97,
	SCRIPT_OP_LSHIFT = 0x98,
	SCRIPT_OP_RSHIFT = 0x99,
	SCRIPT_OP_BOOLAND = 0x9a,
	SCRIPT_OP_BOOLOR = 0x9b,
	SCRIPT_OP_NUMEQUAL = 0x9c,
	SCRIPT_OP_NUMEQUALVERIFY = 0x9d,
	SCRIPT_OP_NUMNOTEQUAL = 0x9e,
	SCRIPT_OP_LESSTHAN = 0x9f,
	SCRIPT_OP_GREATERTHAN = 0xa0,
	SCRIPT_OP_LESSTHANOREQUAL = 0xa1,
	SCRIPT_OP_GREATERTHANOREQUAL = 0xa2,
	SCRIPT_OP_MIN = 0xa3,
	SCRIPT_OP_MAX = 0xa4,
	SCRIPT_OP_WITHIN = 0xa5,
	SCRIPT_OP_RIPEMD160 = 0xa6,
	SCRIPT_OP_SHA1 = 0xa7,
	SCRIPT_OP_SHA256 = 0xa8,
	SCRIPT_OP_HASH160 = 0xa9,
	SCRIPT_OP_HASH256 = 0xaa,
	SCRIPT_OP_CODESEPARATOR = 0xab,
	SCRIPT_OP_CHECKSIG = 0xac,
	SCRIPT_OP_CHECKSIGVERIFY = 0xad,
	SCRIPT_OP_CHECKMULTISIG = 0xae,
	SCRIPT_OP_CHECKMULTISIGVERIFY = 0xaf,
	SCRIPT_OP_NOP1 = 0xb0,
	SCRIPT_OP_CHECKLOCKTIMEVERIFY = 0xb1,
	SCRIPT_OP_CHECKSEQUENCEVERIFY = 0xb2,
	SCRIPT_OP_NOP4 = 0xb3,
	SCRIPT_OP_NOP5 = 0xb4,
	SCRIPT_OP_NOP6 = 0xb5,
	SCRIPT_OP_NOP7 = 0xb6,
	SCRIPT_OP_NOP8 = 0xb7,
	SCRIPT_OP_NOP9 = 0xb8,
	SCRIPT_OP_NOP10 = 0xb9,
	SCRIPT_OP_CHECKSIGADD = 0xba,
	SCRIPT_OP_INVALIDOPCODE = 0xff,
};

/**
 * Name of an opcode as Core's GetOpName spells it ("OP_DUP", "0", "1"...);
 * "OP_UNKNOWN" if none.
 */
const char *script_op_name(unsigned op);

/* ---------------------------------------------------------------------- */
/* Verification flags (Core's SCRIPT_VERIFY_*, same bits)                  */

/** no rules beyond the scripts themselves */
#define SCRIPT_VERIFY_NONE 0u
/** BIP16 pay-to-script-hash */
#define SCRIPT_VERIFY_P2SH (1u << 0)
/** signatures strict DER with a defined hash type, keys compressed or uncompressed */
#define SCRIPT_VERIFY_STRICTENC (1u << 1)
/** BIP66 strict DER signatures */
#define SCRIPT_VERIFY_DERSIG (1u << 2)
/** S at most half the curve order (policy) */
#define SCRIPT_VERIFY_LOW_S (1u << 3)
/** BIP147: CHECKMULTISIG's extra item empty */
#define SCRIPT_VERIFY_NULLDUMMY (1u << 4)
/** scriptSig only pushes (policy) */
#define SCRIPT_VERIFY_SIGPUSHONLY (1u << 5)
/** pushes and numbers in their shortest form (policy) */
#define SCRIPT_VERIFY_MINIMALDATA (1u << 6)
/** NOP1, NOP4..NOP10 fail (policy) */
#define SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS (1u << 7)
/** exactly one item left (policy; needs P2SH and WITNESS) */
#define SCRIPT_VERIFY_CLEANSTACK (1u << 8)
/** BIP65 */
#define SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY (1u << 9)
/** BIP112 */
#define SCRIPT_VERIFY_CHECKSEQUENCEVERIFY (1u << 10)
/** BIP141 segregated witness (needs P2SH) */
#define SCRIPT_VERIFY_WITNESS (1u << 11)
/** unknown witness programs fail (policy) */
#define SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM (1u << 12)
/** witness v0 IF argument empty or 1 (policy) */
#define SCRIPT_VERIFY_MINIMALIF (1u << 13)
/** a failed signature check needs an empty signature (policy) */
#define SCRIPT_VERIFY_NULLFAIL (1u << 14)
/** witness v0 keys compressed (policy) */
#define SCRIPT_VERIFY_WITNESS_PUBKEYTYPE (1u << 15)
/** no OP_CODESEPARATOR or FindAndDelete hit in legacy scripts (policy) */
#define SCRIPT_VERIFY_CONST_SCRIPTCODE (1u << 16)
/** BIP341/342 taproot and tapscript */
#define SCRIPT_VERIFY_TAPROOT (1u << 17)
/** unknown leaf versions fail (policy) */
#define SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION (1u << 18)
/** OP_SUCCESSx fail (policy) */
#define SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS (1u << 19)
/** unknown tapscript key types fail (policy) */
#define SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE (1u << 20)

/** Every flag above. */
#define SCRIPT_VERIFY_ALL ((1u << 21) - 1)
/** Today's consensus rules for blocks (Core's block flags after taproot). */
#define SCRIPT_VERIFY_CONSENSUS                                                                    \
	(SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_DERSIG | SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY |           \
	 SCRIPT_VERIFY_CHECKSEQUENCEVERIFY | SCRIPT_VERIFY_WITNESS | SCRIPT_VERIFY_NULLDUMMY |     \
	 SCRIPT_VERIFY_TAPROOT)
/** Core's STANDARD_SCRIPT_VERIFY_FLAGS (mempool policy). */
#define SCRIPT_VERIFY_STANDARD                                                                     \
	(SCRIPT_VERIFY_CONSENSUS | SCRIPT_VERIFY_STRICTENC | SCRIPT_VERIFY_MINIMALDATA |           \
	 SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS | SCRIPT_VERIFY_CLEANSTACK |                     \
	 SCRIPT_VERIFY_MINIMALIF | SCRIPT_VERIFY_NULLFAIL | SCRIPT_VERIFY_LOW_S |                  \
	 SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM | SCRIPT_VERIFY_WITNESS_PUBKEYTYPE |  \
	 SCRIPT_VERIFY_CONST_SCRIPTCODE | SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION |    \
	 SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS | SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE)

/** Name of one flag bit without prefix ("P2SH"); NULL if not a single known flag. */
const char *script_flag_name(uint32_t flag);
/**
 * Parse Core's flag names, comma-separated ("P2SH,WITNESS"); "" and "NONE"
 * are no flags, "standard" and "consensus" the sets above. Returns 0, or -1
 * with *bad (if not NULL) pointing at the first unknown name in list.
 */
SCRIPT_WUR int script_flags_parse(const char *list, uint32_t *flags, const char **bad);
/**
 * Write the names of flags, comma-separated, into out (cap bytes incl. NUL;
 * nothing when cap is 0). Output that does not fit is cut short (still
 * NUL-terminated); unknown bits are ignored.
 */
void script_flags_format(uint32_t flags, char *out, size_t cap);

/* ---------------------------------------------------------------------- */
/* Errors (Core's ScriptError, same order)                                 */

/**
 * Why a script failed: Core's ScriptError, same order, so the numbers and
 * names match its test vectors. Positive; script_verify returns them negated.
 */
enum script_error {
	SCRIPT_ERR_OK = 0,        /**< valid */
	SCRIPT_ERR_UNKNOWN_ERROR, /**< also a number over 4 bytes or not minimal (Core throws) */
	SCRIPT_ERR_EVAL_FALSE,    /**< finished with false or empty stack */
	SCRIPT_ERR_OP_RETURN,     /**< OP_RETURN executed */
	SCRIPT_ERR_SCRIPT_SIZE,   /**< script over 10,000 bytes */
	SCRIPT_ERR_PUSH_SIZE,     /**< element over 520 bytes */
	SCRIPT_ERR_OP_COUNT,      /**< over 201 non-push opcodes */
	SCRIPT_ERR_STACK_SIZE,    /**< stack + altstack over 1,000 */
	SCRIPT_ERR_SIG_COUNT,     /**< CHECKMULTISIG signature count out of range */
	SCRIPT_ERR_PUBKEY_COUNT,  /**< CHECKMULTISIG key count out of range */
	SCRIPT_ERR_VERIFY,        /**< OP_VERIFY on false */
	SCRIPT_ERR_EQUALVERIFY,   /**< OP_EQUALVERIFY on unequal */
	SCRIPT_ERR_CHECKMULTISIGVERIFY,        /**< OP_CHECKMULTISIGVERIFY failed */
	SCRIPT_ERR_CHECKSIGVERIFY,             /**< OP_CHECKSIGVERIFY failed */
	SCRIPT_ERR_NUMEQUALVERIFY,             /**< OP_NUMEQUALVERIFY on unequal */
	SCRIPT_ERR_BAD_OPCODE,                 /**< undefined or truncated opcode */
	SCRIPT_ERR_DISABLED_OPCODE,            /**< OP_CAT and the other disabled opcodes */
	SCRIPT_ERR_INVALID_STACK_OPERATION,    /**< too few stack items */
	SCRIPT_ERR_INVALID_ALTSTACK_OPERATION, /**< empty altstack */
	SCRIPT_ERR_UNBALANCED_CONDITIONAL,     /**< IF without ENDIF or the reverse */
	SCRIPT_ERR_NEGATIVE_LOCKTIME,          /**< CLTV/CSV operand negative */
	SCRIPT_ERR_UNSATISFIED_LOCKTIME,       /**< CLTV/CSV not satisfied by the tx */
	SCRIPT_ERR_SIG_HASHTYPE,               /**< undefined sighash type (STRICTENC) */
	SCRIPT_ERR_SIG_DER,                    /**< signature not strict DER */
	SCRIPT_ERR_MINIMALDATA,                /**< push not minimal */
	SCRIPT_ERR_SIG_PUSHONLY,               /**< scriptSig not push-only */
	SCRIPT_ERR_SIG_HIGH_S,                 /**< S above half the order */
	SCRIPT_ERR_SIG_NULLDUMMY,              /**< CHECKMULTISIG dummy not empty */
	SCRIPT_ERR_PUBKEYTYPE,                 /**< public key encoding not accepted */
	SCRIPT_ERR_CLEANSTACK,                 /**< stack not exactly one item at the end */
	SCRIPT_ERR_MINIMALIF,                  /**< IF argument not exactly empty or 1 */
	SCRIPT_ERR_SIG_NULLFAIL,               /**< failed signature not empty */
	SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS, /**< NOP1, NOP4..NOP10 executed (policy) */
	SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM, /**< unknown witness program (policy) */
	SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION, /**< unknown leaf version (policy) */
	SCRIPT_ERR_DISCOURAGE_OP_SUCCESS,                 /**< OP_SUCCESSx in tapscript (policy) */
	SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE, /**< unknown tapscript key type (policy) */
	SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH,     /**< v0 program neither 20 nor 32 bytes */
	SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY,    /**< witness program spent with no witness */
	SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH,         /**< witness does not hash to the program */
	SCRIPT_ERR_WITNESS_MALLEATED,                /**< native witness spend with a scriptSig */
	SCRIPT_ERR_WITNESS_MALLEATED_P2SH,           /**< P2SH-witness scriptSig not one push */
	SCRIPT_ERR_WITNESS_UNEXPECTED,               /**< witness on a non-witness spend */
	SCRIPT_ERR_WITNESS_PUBKEYTYPE,               /**< uncompressed key in witness v0 */
	SCRIPT_ERR_SCHNORR_SIG_SIZE,           /**< Schnorr signature neither 64 nor 65 bytes */
	SCRIPT_ERR_SCHNORR_SIG_HASHTYPE,       /**< undefined hash type, or 65 bytes with DEFAULT */
	SCRIPT_ERR_SCHNORR_SIG,                /**< Schnorr signature does not verify */
	SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE, /**< control block not 33 + 32k bytes, k <= 128 */
	SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT, /**< signature checks over the witness's budget */
	SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG,     /**< CHECKMULTISIG(VERIFY) in tapscript */
	SCRIPT_ERR_TAPSCRIPT_MINIMALIF,         /**< tapscript IF argument not empty or 1 */
	SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY,      /**< empty public key in tapscript */
	SCRIPT_ERR_OP_CODESEPARATOR,  /**< CODESEPARATOR in legacy script (CONST_SCRIPTCODE) */
	SCRIPT_ERR_SIG_FINDANDDELETE, /**< signature found in scriptCode (CONST_SCRIPTCODE) */
	/* peerd-only codes after Core's */
	SCRIPT_ERR_NOMEM,        /**< a rare large case could not allocate */
	SCRIPT_ERR_MISSING_DATA, /**< taproot check without the spent outputs */
	SCRIPT_ERR_BAD_ARGUMENT, /**< input index out of range, malformed witness data */
	SCRIPT_ERR__COUNT        /**< number of codes, not one itself */
};

/** Core's name of an error without prefix ("EVAL_FALSE"); "UNKNOWN" for out of range. */
const char *script_error_name(int err);
/** A one-line English description of an error; never NULL. */
const char *script_error_string(int err);
/**
 * Bitcoin Core's ScriptErrorString, word for word ("unknown error" for
 * codes Core lacks): what reject reasons quote. Never NULL.
 */
const char *script_error_core_string(int err);
/** Error code from its name ("EVAL_FALSE"), or -1 if unknown. */
int script_error_from_name(const char *name);

/* ---------------------------------------------------------------------- */
/* Sighash                                                                 */

/** Signature hash types: the last byte of a signature, saying what it commits to. */
#define SCRIPT_SIGHASH_DEFAULT      0x00u /**< taproot only: like ALL, no byte */
#define SCRIPT_SIGHASH_ALL          0x01u /**< every input and output */
#define SCRIPT_SIGHASH_NONE         0x02u /**< no outputs */
#define SCRIPT_SIGHASH_SINGLE       0x03u /**< only the output at this input's index */
#define SCRIPT_SIGHASH_ANYONECANPAY 0x80u /**< flag: only this input */

/** An output being spent: its amount and scriptPubKey (borrowed). */
struct script_spent_output {
	int64_t amount;
	const uint8_t *script;
	uint32_t script_len;
};

/**
 * Per-transaction hashes shared read-only by every input check of one
 * transaction. Fill with script_precompute; never changes afterwards, so any
 * number of threads may read it at once. Holds no pointers.
 */
struct script_precomputed {
	bool bip143_ready; /**< hash_prevouts/sequence/outputs valid */
	bool bip341_ready; /**< the single-SHA256 set incl. spent amounts/scripts valid */
	/* BIP341: single SHA-256 */
	uint8_t sha_prevouts[32];
	uint8_t sha_sequences[32];
	uint8_t sha_outputs[32];
	uint8_t sha_amounts[32];
	uint8_t sha_scriptpubkeys[32];
	/* BIP143: double SHA-256 */
	uint8_t hash_prevouts[32];
	uint8_t hash_sequence[32];
	uint8_t hash_outputs[32];
};

/**
 * Compute the hashes tx's inputs will need, as Core's
 * PrecomputedTransactionData::Init: BIP143 hashes when any input has a
 * witness, BIP341 hashes when `spent` (tx->n_in entries, may be NULL) is
 * given and any witness input spends a 34-byte OP_1 output. `force` computes
 * both regardless (the BIP341 part still needs `spent`).
 */
void script_precompute(struct script_precomputed *pre, const struct proto_tx *tx,
                       const struct script_spent_output *spent, bool force);

/**
 * Legacy sighash of input `in` (Core's SignatureHash for SigVersion::BASE):
 * scriptCode serialized with OP_CODESEPARATORs removed, the full 32-bit
 * hash_type appended; SIGHASH_SINGLE without a matching output yields the
 * historical value 1 (0x01 followed by zeros). Streams; no allocation.
 */
void script_sighash_legacy(const struct proto_tx *tx, uint32_t in, const uint8_t *script_code,
                           size_t code_len, uint32_t hash_type, uint8_t out[32]);

/**
 * BIP143 sighash of input `in` spending `amount`. Uses pre's hashes when
 * pre->bip143_ready, else computes them (pre may be NULL).
 */
void script_sighash_v0(const struct proto_tx *tx, uint32_t in, const uint8_t *script_code,
                       size_t code_len, int64_t amount, uint32_t hash_type,
                       const struct script_precomputed *pre, uint8_t out[32]);

/** What a BIP341/342 signature commits to beyond the transaction. */
struct script_tap_exec {
	bool annex_present;       /**< the witness ends with an annex (SCRIPT_ANNEX_TAG) */
	uint8_t annex_hash[32];   /**< SHA256(compact_size(len) || annex) */
	bool tapscript;           /**< ext_flag 1 (BIP342) rather than key path */
	uint8_t tapleaf_hash[32]; /**< tapscript only */
	uint32_t codesep_pos;     /**< tapscript only; 0xffffffff when none executed */
};

/**
 * BIP341 sighash (TapSighash tagged hash of the epoch byte and SigMsg).
 * `spent_in` is the output input `in` spends. Returns 0, or
 * SCRIPT_ERR_SCHNORR_SIG_HASHTYPE (negated) for an undefined hash_type or
 * SIGHASH_SINGLE without a matching output, or -SCRIPT_ERR_MISSING_DATA when
 * pre lacks the BIP341 hashes.
 */
SCRIPT_WUR int script_sighash_taproot(const struct proto_tx *tx, uint32_t in, uint8_t hash_type,
                                      const struct script_precomputed *pre,
                                      const struct script_spent_output *spent_in,
                                      const struct script_tap_exec *ex, uint8_t out[32]);
/** Like script_sighash_taproot but writes the epoch byte and SigMsg to w instead of hashing. */
SCRIPT_WUR int script_sighash_taproot_msg(const struct proto_tx *tx, uint32_t in, uint8_t hash_type,
                                          const struct script_precomputed *pre,
                                          const struct script_spent_output *spent_in,
                                          const struct script_tap_exec *ex, struct proto_writer *w);

/* ---------------------------------------------------------------------- */
/* Taproot construction (BIP341)                                            */

/** TapLeaf tagged hash of leaf_version || compact_size(len) || script. */
void script_tapleaf_hash(uint8_t leaf_version, const uint8_t *script, size_t len, uint8_t out[32]);
/** TapBranch tagged hash of the two children, smaller first. */
void script_tapbranch_hash(const uint8_t a[32], const uint8_t b[32], uint8_t out[32]);
/** TapTweak tagged hash of the internal key and, if not NULL, the merkle root. */
void script_taproot_tweak(const uint8_t internal_key[32], const uint8_t *merkle_root,
                          uint8_t out[32]);
/**
 * Output key Q = P + t*G for x-only internal key P: 0 and out/parity set,
 * or -1 if P is not a valid x coordinate or the tweak is out of range.
 */
SCRIPT_WUR int script_taproot_output_key(const uint8_t internal_key[32], const uint8_t *merkle_root,
                                         uint8_t out[32], int *parity);

/* ---------------------------------------------------------------------- */
/* Verification                                                            */

/**
 * Verify one input: Core's VerifyScript for scriptSig and scriptPubKey
 * under `flags`, the witness taken from tx->vin[input_index], signatures
 * checked against tx, `amount` (value of the output spent; needed by
 * witness v0 and taproot) and `pre` (shared precomputed hashes; may be NULL,
 * then BIP143 hashes are computed on the fly and taproot signature checks
 * fail with SCRIPT_ERR_MISSING_DATA). For taproot, pre must have been made
 * with the spent outputs and script_pubkey/amount must be this input's.
 *
 * Returns 0 when valid, else the negated error; *error (may be NULL) gets
 * the enum script_error (SCRIPT_ERR_OK when valid). Pure and thread-safe;
 * nothing is allocated on the common path.
 */
SCRIPT_WUR int script_verify(const uint8_t *script_sig, size_t sig_len,
                             const uint8_t *script_pubkey, size_t spk_len,
                             const struct proto_tx *tx, uint32_t input_index, int64_t amount,
                             uint32_t flags, const struct script_precomputed *pre, int *error);

/** script_verify with the scriptSig taken from the transaction and the spent output given. */
SCRIPT_WUR int script_verify_input(const struct proto_tx *tx, uint32_t input_index,
                                   const struct script_spent_output *spent, uint32_t flags,
                                   const struct script_precomputed *pre, int *error);

/* ---------------------------------------------------------------------- */
/* Script inspection                                                       */

/**
 * Read one operation at *pc (Core's GetScriptOp): opcode, and for pushes
 * the data span. Returns false at the end or on a truncated push, leaving
 * *pc advanced exactly as far as Core does (legacy sighash depends on it).
 */
bool script_get_op(const uint8_t **pc, const uint8_t *end, uint8_t *opcode, const uint8_t **data,
                   uint32_t *data_len);
/** Only push opcodes (OP_RESERVED counts as one, as in Core) and well formed. */
bool script_is_push_only(const uint8_t *script, size_t len);
/** HASH160 <20 bytes> EQUAL. */
bool script_is_p2sh(const uint8_t *script, size_t len);
/** A witness program: OP_n then one 2..40-byte push, 4..42 bytes in all. */
bool script_is_witness_program(const uint8_t *script, size_t len, int *version,
                               const uint8_t **program, size_t *program_len);
/**
 * Bitcoin Core's GetSigOpCount: CHECKMULTISIG counts its key count if
 * accurate and preceded by OP_n, else 20.
 */
unsigned script_sigop_count(const uint8_t *script, size_t len, bool accurate);
/**
 * Sigops of a P2SH redeem script (the last push of a push-only scriptSig);
 * plain count if spk is not P2SH.
 */
unsigned script_p2sh_sigop_count(const uint8_t *spk, size_t spk_len, const uint8_t *script_sig,
                                 size_t sig_len);
/** Witness sigops of input `in` (Core's CountWitnessSigOps). */
unsigned script_witness_sigop_count(const uint8_t *script_sig, size_t sig_len, const uint8_t *spk,
                                    size_t spk_len, const struct proto_tx *tx, uint32_t in,
                                    uint32_t flags);

/* ---------------------------------------------------------------------- */
/* Core's asm-like script notation                                         */

/** script_parse_asm errors. */
enum script_asm_err {
	SCRIPT_ASM_EWORD = -1,  /**< a word that is no opcode, number, 0x hex or 'string' */
	SCRIPT_ASM_ERANGE = -2, /**< a decimal number outside -0xffffffff..0xffffffff */
	SCRIPT_ASM_ENOMEM = -3, /**< the writer failed (out of memory or space) */
};

/**
 * Parse Core's test notation (core_read.cpp ParseScript): decimal numbers
 * pushed as script numbers, 0x.. raw bytes inserted as is, 'text' pushed,
 * opcode names with or without OP_. Appends to w. On error returns a
 * script_asm_err and *err_off (may be NULL) gets the offset of the bad word.
 */
SCRIPT_WUR int script_parse_asm(const char *text, struct proto_writer *w, size_t *err_off);

/* ---------------------------------------------------------------------- */
/* Context-free transaction checks (Core's CheckTransaction)               */

/** script_check_transaction's verdicts, with Core's reject reasons. */
enum script_tx_err {
	SCRIPT_TX_OK = 0,                   /**< passes */
	SCRIPT_TX_VIN_EMPTY = -1,           /**< bad-txns-vin-empty */
	SCRIPT_TX_VOUT_EMPTY = -2,          /**< bad-txns-vout-empty */
	SCRIPT_TX_OVERSIZE = -3,            /**< bad-txns-oversize */
	SCRIPT_TX_VOUT_NEGATIVE = -4,       /**< bad-txns-vout-negative */
	SCRIPT_TX_VOUT_TOOLARGE = -5,       /**< bad-txns-vout-toolarge */
	SCRIPT_TX_TXOUTTOTAL_TOOLARGE = -6, /**< bad-txns-txouttotal-toolarge */
	SCRIPT_TX_INPUTS_DUPLICATE = -7,    /**< bad-txns-inputs-duplicate */
	SCRIPT_TX_CB_LENGTH = -8,           /**< bad-cb-length */
	SCRIPT_TX_PREVOUT_NULL = -9,        /**< bad-txns-prevout-null */
	SCRIPT_TX_ENOMEM = -10,             /**< could not allocate for the duplicate check */
	SCRIPT_TX_ERR__MIN = -10, /**< lowest code, for range checks; not an error itself */
};

/**
 * Core's CheckTransaction, in Core's order. Returns 0 or a script_tx_err.
 * The duplicate-input check sorts a copy of the outpoints for large
 * transactions (one allocation); small ones need none.
 */
SCRIPT_WUR int script_check_transaction(const struct proto_tx *tx);
/** Core's reject reason ("bad-txns-vin-empty"); "ok" for 0; never NULL. */
const char *script_tx_reason(int err);

/* ---------------------------------------------------------------------- */
/* Output scripts described for people (script/address.c)                  */

/** Output script templates, as Core's TxoutType. */
enum script_type {
	SCRIPT_TYPE_NONSTANDARD = 0,       /**< none of the templates below */
	SCRIPT_TYPE_ANCHOR,                /**< OP_1 <4e73> (pay-to-anchor) */
	SCRIPT_TYPE_PUBKEY,                /**< <key> CHECKSIG */
	SCRIPT_TYPE_PUBKEYHASH,            /**< DUP HASH160 <20> EQUALVERIFY CHECKSIG */
	SCRIPT_TYPE_SCRIPTHASH,            /**< HASH160 <20> EQUAL */
	SCRIPT_TYPE_MULTISIG,              /**< m <keys> n CHECKMULTISIG */
	SCRIPT_TYPE_NULL_DATA,             /**< OP_RETURN then pushes only */
	SCRIPT_TYPE_WITNESS_V0_KEYHASH,    /**< OP_0 <20> */
	SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH, /**< OP_0 <32> */
	SCRIPT_TYPE_WITNESS_V1_TAPROOT,    /**< OP_1 <32> */
	SCRIPT_TYPE_WITNESS_UNKNOWN,       /**< any other witness program of version 1..16 */
};

/** A span of bytes inside the script that was solved. */
struct script_span {
	const uint8_t *data;
	size_t len;
};

/**
 * What script_solve found. Spans point into the caller's script.
 *   PUBKEY: `data` is the key. PUBKEYHASH, SCRIPTHASH: the 20-byte hash.
 *   witness types and ANCHOR: the program, with `witness_version`.
 *   MULTISIG: `required` of `n_keys` keys in `keys`.
 */
struct script_solution {
	enum script_type type;
	struct script_span data; /**< key, hash or program; empty for the other types */
	int witness_version;     /**< 0..16 for witness types and ANCHOR, else 0 */
	unsigned required;       /**< MULTISIG: signatures needed (m) */
	unsigned n_keys;         /**< MULTISIG: keys in `keys` (n) */
	struct script_span keys[SCRIPT_MAX_PUBKEYS_PER_MULTISIG];
};

/**
 * Classify an output script as Core's Solver does (same rules, same order);
 * fills *sol (zeroed first, so two solves of one script compare equal with
 * memcmp) and returns sol->type. Never fails: anything else is NONSTANDARD.
 */
enum script_type script_solve(const uint8_t *script, size_t len, struct script_solution *sol);
/** Core's GetTxnOutputType name ("pubkeyhash", "witness_v1_taproot"...); never NULL. */
const char *script_type_name(enum script_type type);

/**
 * Append Core's ScriptToAsmStr(script, sighash_decode) to w, without a NUL:
 * pushes of up to 4 bytes as decimal script numbers, longer ones as hex,
 * other opcodes by name, "[error]" where a push is truncated. With
 * sighash_decode (scriptSigs), a push that is a strict-DER signature with a
 * defined hash type prints as hex of the DER part plus "[ALL]",
 * "[NONE|ANYONECANPAY]"..., unless the script starts with OP_RETURN.
 * Returns w->err (0 or PROTO_ENOMEM/PROTO_ENOSPACE).
 */
int script_to_asm(const uint8_t *script, size_t len, bool sighash_decode, struct proto_writer *w);

/**
 * Core's InferDescriptor(script)->ToString() as bitcoin-cli prints it with no
 * wallet, checksum included: pk(), multi(), rawtr(), addr() or raw()
 * (script/descriptor.c). Returns a new xmalloc'd string (caller xfrees),
 * or NULL when out of memory.
 */
char *script_descriptor(const uint8_t *spk, size_t len, const struct proto_params *net);
/**
 * The BIP380 checksum of the len characters at desc: 8 characters and a
 * NUL into out. Returns 0, or -1 if a character is outside the descriptor
 * character set.
 */
int script_desc_checksum(const char *desc, size_t len, char out[9]);

/**
 * Core's descriptor Parse (checksum optional, checked when given) and
 * Expand for the descriptors that need no keys: raw(HEX) and
 * addr(ADDRESS) on network `net`. The scriptPubKey goes to spk (cap
 * bytes) and *spk_len. Returns 0; SCRIPT_ADDRESS_EINVALID when `desc` is
 * no valid descriptor; SCRIPT_ADDRESS_ENONE for a descriptor that needs
 * keys or scripts peerd has no wallet for (pkh(), wpkh(), tr(), ...);
 * SCRIPT_ADDRESS_ESPACE when the script does not fit. `why` (may be
 * NULL) gets Core's reason ("Raw script is not hex", "Provided checksum
 * ... does not match computed checksum ...") or peerd's.
 */
int script_descriptor_parse(const char *desc, const struct proto_params *net, uint8_t *spk,
                            size_t cap, size_t *spk_len, char *why, size_t why_cap);

/** Room for any address script_address writes, NUL included (bech32's 90 + 1). */
#define SCRIPT_ADDRESS_MAX 91u

/** script_address and script_address_decode errors; out is not written on any. */
enum script_address_err {
	SCRIPT_ADDRESS_ENONE = -1, /**< the script has no address (pubkey, multisig, nulldata...) */
	SCRIPT_ADDRESS_ESPACE = -2,   /**< out is smaller than the address (or the script) */
	SCRIPT_ADDRESS_EINVALID = -3, /**< not an address of the network: `why` says how */
};

/**
 * The address of an output script on network `net`, as Core's
 * ExtractDestination + EncodeDestination (and only where decoderawtransaction
 * prints one): base58check for P2PKH/P2SH (version bytes 0/5 on main,
 * 111/196 elsewhere), BIP173 bech32 for witness v0, BIP350 bech32m for
 * v1..16 (taproot, anchor, unknown), lowercase with net->bech32_hrp.
 * Writes a NUL-terminated string to out (cap bytes). Returns 0 or a
 * script_address_err.
 */
int script_address(const uint8_t *script, size_t len, const struct proto_params *net, char *out,
                   size_t cap);

/** Room for any scriptPubKey script_address_decode writes: OP_n, a push, 40 bytes. */
#define SCRIPT_ADDRESS_SPK_MAX 42u
/** Room for any reason script_address_decode gives, NUL included. */
#define SCRIPT_ADDRESS_WHY_MAX 160u

/**
 * Core's DecodeDestination + GetScriptForDestination on network `net`:
 * base58check P2PKH and P2SH with the network's version bytes (white
 * space around the string ignored, as Core's DecodeBase58); for a string
 * starting with net->bech32_hrp in either case, BIP173/BIP350: one case
 * only, at most 90 characters, bech32 for witness version 0 and bech32m
 * for 1..16, programs of 20 or 32 bytes for v0 and 2..40 otherwise, no
 * padding over 4 bits or non-zero. The scriptPubKey goes to spk (cap
 * bytes; SCRIPT_ADDRESS_SPK_MAX always suffices) and *spk_len. On
 * SCRIPT_ADDRESS_EINVALID, `why` (may be NULL) gets Core's reason
 * ("Invalid Bech32 checksum", "Version 1+ witness address must use
 * Bech32m checksum"...). Returns 0 or a script_address_err.
 */
int script_address_decode(const char *addr, const struct proto_params *net, uint8_t *spk,
                          size_t cap, size_t *spk_len, char *why, size_t why_cap);

/**
 * Whether 32 bytes are the x coordinate of a point on the curve (Core's
 * XOnlyPubKey::IsFullyValid).
 */
bool script_xonly_pubkey_valid(const uint8_t key[32]);

/**
 * Turn the per-thread cache of parsed public keys on (the default) or off
 * for every thread; it never changes a verdict, only how often a key is
 * parsed. For benchmarks that want the cost of a parse per signature. Any
 * thread; takes effect at each thread's next key.
 */
void script_key_cache_set_enabled(bool on);

#endif
