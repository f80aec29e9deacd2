/*
 * script/internal.h: what the files of script/ share and nobody else sees.
 *
 * The stack. Core keeps a vector of byte vectors; we keep a fixed array of
 * items, each either a span into memory that outlives the call (the
 * scripts, the transaction's witness) or a value computed by an opcode,
 * stored inside the item. A computed value is never longer than 32 bytes
 * (hashes, and script numbers of at most 9 bytes), so an item is small and
 * the whole stack fits in a per-call scratch area with no allocation.
 * Because an item may hold its own bytes, items are moved by value and read
 * through item_data(), never through a saved pointer.
 *
 * The main stack grows up from slot 0 and the altstack down from the last
 * slot, so one array serves both and their combined limit is one check.
 */
#ifndef PEERD_SCRIPT_INTERNAL_H
#define PEERD_SCRIPT_INTERNAL_H

#include "script/script.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>

/** Longest value an opcode computes (SHA-256, HASH256). */
#define SCRIPT_ITEM_INLINE 32u
/**
 * Witness items materialized at most. A witness v0 stack may start with any
 * number of items (the 1,000 limit is checked only after each opcode). With
 * more than this many, whatever the first opcode does leaves more than
 * 1,000 (it removes at most 43: CHECKMULTISIG 20-of-20), so execution ends
 * there with that opcode's own error or STACK_SIZE, and the items below the
 * top SCRIPT_STACK_VISIBLE are never read: only counted (script_exec.base),
 * for DEPTH and PICK/ROLL bounds. So memory stays fixed however big the
 * witness.
 */
#define SCRIPT_STACK_VISIBLE 1100u
/**
 * Slots in the scratch area: one opcode adds at most 3 items (OP_3DUP) to
 * at most SCRIPT_STACK_VISIBLE.
 */
#define SCRIPT_STACK_SLOTS (SCRIPT_STACK_VISIBLE + 8u)

enum script_sigversion {
	SCRIPT_SIGVERSION_BASE = 0,
	SCRIPT_SIGVERSION_WITNESS_V0 = 1,
	SCRIPT_SIGVERSION_TAPROOT = 2,
	SCRIPT_SIGVERSION_TAPSCRIPT = 3,
};

struct script_item {
	const uint8_t *ext; /**< the bytes, or NULL when they are in inl */
	uint32_t len;
	uint8_t inl[SCRIPT_ITEM_INLINE];
};

static inline const uint8_t *item_data(const struct script_item *it)
{
	return it->ext ? it->ext : it->inl;
}

/**
 * One verification: the stacks, what the signature checker needs, and the
 * taproot execution data. Lives on the caller's stack for one
 * script_verify call; nothing in it is shared.
 */
struct script_exec {
	struct script_item *items; /**< slots: main stack from 0 up, altstack from cap-1 down */
	uint32_t n;                /**< main stack size */
	uint32_t alt_n;            /**< altstack size */
	uint32_t cap;
	uint32_t base; /**< witness items below items[0], counted not stored */

	uint32_t flags;
	const struct proto_tx *tx;
	uint32_t in;
	int64_t amount;
	const struct script_precomputed *pre;
	const uint8_t *spk; /**< the spent output's script (taproot ANYONECANPAY) */
	uint32_t spk_len;

	struct script_tap_exec tap;
	int64_t validation_weight_left;

	struct script_item scratch[SCRIPT_STACK_SLOTS];
};

/** One past the end of len bytes at p; safe for (NULL, 0), which C's
 * pointer arithmetic is not. */
static inline const uint8_t *span_end(const uint8_t *p, size_t len)
{
	return len ? p + len : p;
}

/* ---- opcodes.c -------------------------------------------------------- */

/** BIP342 OP_SUCCESSx. */
bool script_op_is_success(uint8_t op);
/** Core's CheckMinimalPush for a push of data with opcode. */
bool script_minimal_push(const uint8_t *data, uint32_t len, uint8_t opcode);
/**
 * FindAndDelete of the push of sig from script. Returns how many were
 * found; when any, *out is a new xmalloc'd script (caller frees) of *out_len
 * bytes, or NULL with a return of -1 if allocation failed.
 */
int script_find_and_delete(const uint8_t *script, size_t len, const uint8_t *sig, uint32_t sig_len,
                           uint8_t **out, size_t *out_len);

/* ---- sig.c ------------------------------------------------------------ */

/** Core's CheckSignatureEncoding; 0 or the negated error. */
int script_check_sig_encoding(const uint8_t *sig, size_t len, uint32_t flags);
/** CPubKey's size rule: the header byte fixes the length (33, or 65 for 04/06/07). */
bool script_pubkey_size_ok(const uint8_t *pub, size_t len);
/** Core's CheckPubKeyEncoding; 0 or the negated error. */
int script_check_pubkey_encoding(const uint8_t *pub, size_t len, uint32_t flags,
                                 enum script_sigversion sv);
/**
 * Core's CheckECDSASignature: whether sig (DER + hashtype byte, lax
 * parsing) is valid for pub over the sighash of scriptCode.
 */
bool script_check_ecdsa(struct script_exec *ex, const uint8_t *sig, size_t sig_len,
                        const uint8_t *pub, size_t pub_len, const uint8_t *code, size_t code_len,
                        enum script_sigversion sv);
/** Core's CheckSchnorrSignature for a 32-byte key; 0 or the negated error. */
int script_check_schnorr(struct script_exec *ex, const uint8_t *sig, size_t sig_len,
                         const uint8_t pub[32], enum script_sigversion sv);
/** BIP341 commitment check: output key q is internal key p tweaked by merkle_root with parity. */
bool script_check_tap_tweak(const uint8_t q[32], const uint8_t p[32], const uint8_t merkle_root[32],
                            int parity);

/* ---- keycache.c ------------------------------------------------------- */

/**
 * secp256k1_ec_pubkey_parse, remembered per thread for 33-byte keys (see
 * keycache.c): true and *pk set when pub parses. Any thread.
 */
bool script_parse_pubkey(secp256k1_pubkey *pk, const uint8_t *pub, size_t len);
/** secp256k1_xonly_pubkey_parse, remembered per thread likewise. */
bool script_parse_xonly(secp256k1_xonly_pubkey *pk, const uint8_t pub[32]);

/* ---- checksig.c ------------------------------------------------------- */

/**
 * CHECKSIG's check on sig and pub (Core's EvalChecksig): *ok is the
 * signature's verdict; the return value is 0 unless the script must fail
 * outright (an encoding rule, NULLFAIL, tapscript's validation weight).
 * code is the scriptCode (from the last CODESEPARATOR).
 */
int script_checksig(struct script_exec *ex, const struct script_item *sig,
                    const struct script_item *pub, const uint8_t *code, size_t code_len,
                    enum script_sigversion sv, bool *ok);
/**
 * OP_CHECKMULTISIG(VERIFY) on ex's stack, not for tapscript: pops its
 * operands and the dummy, adds the keys to *op_count; *result is the
 * verdict (the caller pushes it). 0 or the negated error.
 */
int script_op_checkmultisig(struct script_exec *ex, const uint8_t *code, size_t code_len,
                            enum script_sigversion sv, int *op_count, bool minimal, bool *result);

/* ---- interp.c --------------------------------------------------------- */

/** Core's CastToBool. */
bool script_cast_to_bool(const uint8_t *p, uint32_t len);
/**
 * Core's EvalScript on ex's stack: 0 or the negated error. The script
 * bytes must outlive ex (items may point into them).
 */
int script_eval(struct script_exec *ex, const uint8_t *script, size_t len,
                enum script_sigversion sv);

#endif
