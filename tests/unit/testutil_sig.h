/**
 * tests/unit/testutil_sig.h: a transaction described field by field, keys,
 * signatures and sighashes for the signature tests. Include after
 * <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>. Helpers fail the
 * running test on any library error; none is thread-safe but tu_secp use.
 */
#ifndef PEERD_TESTUTIL_SIG_H
#define PEERD_TESTUTIL_SIG_H

#include <secp256k1.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

/** Inputs and outputs a spec can hold. */
#define TU_MAX_IN 3
/** Witness items per input. */
#define TU_MAX_WIT 6
/** Largest scriptSig, witness item or spent script a spec can hold. */
#define TU_ITEM_MAX 12100

/** One input: scriptSig, witness stack and sequence. */
struct tu_inspec {
	uint8_t sig[TU_ITEM_MAX];
	size_t sig_len;
	uint8_t wit[TU_MAX_WIT][TU_ITEM_MAX];
	size_t wit_len[TU_MAX_WIT];
	size_t n_wit;
	uint32_t sequence;
};

/** A transaction and what its inputs spend (heap: it is large). */
struct tu_txspec {
	int32_t version;
	uint32_t locktime;
	size_t n_in, n_out;
	struct tu_inspec in[TU_MAX_IN];
	int64_t out_value[TU_MAX_IN];
	uint8_t out_script[TU_MAX_IN][40];
	size_t out_len[TU_MAX_IN];
	/* what each input spends */
	uint8_t spk[TU_MAX_IN][TU_ITEM_MAX];
	size_t spk_len[TU_MAX_IN];
	int64_t amount[TU_MAX_IN];
};

/** A spec built into a proto_tx; blob is malloc'd (caller frees it). */
struct tu_built {
	struct proto_tx tx;
	struct proto_txin vin[TU_MAX_IN];
	struct proto_txout vout[TU_MAX_IN];
	uint8_t *blob;
	struct script_spent_output spent[TU_MAX_IN];
};

/** The secp256k1 context of the running test binary (tu_secp_setup). */
extern secp256k1_context *tu_secp;
/** cmocka group setup: create tu_secp. */
int tu_secp_setup(void **state);
/** cmocka group teardown: destroy tu_secp. */
int tu_secp_teardown(void **state);

/** A calloc'd spec: version 2, sequences 0xfffffffe, outputs of 1000 + o paying OP_1. */
struct tu_txspec *tu_spec_new(size_t n_in, size_t n_out);
/** Build the spec into b (b->blob malloc'd; free it). */
void tu_tx_build(const struct tu_txspec *s, struct tu_built *b);
/** Verify input i with or without precomputed data; returns the script_err (0 = OK). */
int tu_verify_in(const struct tu_txspec *s, size_t i, uint32_t flags, bool precompute);
/**
 * Verify input i both with and without precomputed data and fail unless both
 * agree (or only the latter is SCRIPT_ERR_MISSING_DATA, as taproot needs it).
 */
int tu_verify(const struct tu_txspec *s, size_t i, uint32_t flags);

/** Secret key number i (a fixed, valid scalar). */
void tu_seckey(int i, uint8_t sk[32]);
/** Public key encodings. */
enum tu_keyform { TU_COMPRESSED, TU_UNCOMPRESSED, TU_HYBRID };
/** Public key i in the given form into out; returns its length (33 or 65). */
size_t tu_pubkey(int i, enum tu_keyform form, uint8_t out[65]);
/** BIP340 x-only public key i. */
void tu_xonly(int i, uint8_t out[32]);
/** DER signature of hash by key i, with the hash type byte appended; returns the length. */
size_t tu_ecdsa_sign(int i, const uint8_t hash[32], uint8_t hash_type, uint8_t out[80]);
/**
 * Schnorr signature by key i, tweaked by `tweak` if not NULL; the hash type
 * byte is appended unless it is 0. Returns 64 or 65.
 */
size_t tu_schnorr_sign(int i, const uint8_t *tweak, const uint8_t hash[32], uint8_t hash_type,
                       uint8_t out[65]);
/** Append a minimal push of data (up to 65535 bytes) to buf at *len. */
void tu_push(uint8_t *buf, size_t *len, const uint8_t *data, size_t n);
/** Append one opcode to buf at *len. */
void tu_op(uint8_t *buf, size_t *len, uint8_t o);
/** Legacy sighash of input i of the spec. */
void tu_legacy_hash(const struct tu_txspec *s, size_t i, const uint8_t *code, size_t code_len,
                    uint32_t hash_type, uint8_t out[32]);
/** BIP143 sighash of input i of the spec (amount from s->amount[i]). */
void tu_v0_hash(const struct tu_txspec *s, size_t i, const uint8_t *code, size_t code_len,
                uint32_t hash_type, uint8_t out[32]);
/** BIP341 sighash of input i of the spec; fails the test on an error. */
void tu_tap_hash(const struct tu_txspec *s, size_t i, uint8_t hash_type,
                 const struct script_tap_exec *ex, uint8_t out[32]);
/** P2PKH scriptPubKey for a public key; returns 25. */
size_t tu_p2pkh(const uint8_t *pub, size_t pub_len, uint8_t out[25]);

#endif
