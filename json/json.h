/**
 * json/json.h: blocks, transactions, scripts and numbers as Bitcoin Core's
 * RPCs print them (decoderawtransaction, getblockheader, getblock), built
 * as jansson values. The public face of json/; peertool and peerd's control
 * socket both print through it, so their output is the same to the byte.
 *
 * Glossary
 *   tagged number  a number Core prints in a form jansson cannot (BTC with
 *                  exactly eight decimals, a double as "%.16g", an unsigned
 *                  64-bit integer). It is built as a string carrying a tag
 *                  and json_format writes it back as a bare number; printed
 *                  any other way (json_dumps) it shows as a string.
 *   block info     what the chain knows of a block beyond its header (height,
 *                  confirmations, median time, chain work, next block):
 *                  getblockheader's extra fields. Without it a header or
 *                  block is rendered as a decoder sees it (peertool).
 *
 * Names: jansson owns most of `json_`; the names here are ones it does not
 * use, and json_format, not json_dumps, writes the tagged numbers.
 *
 * Ownership and threads: every function returning json_t * returns a new
 * reference, or NULL when out of memory; nothing keeps pointers to its
 * arguments. Everything here is pure and may run on any thread at once.
 */
#ifndef PEERD_JSON_H
#define PEERD_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"

struct chain_block_undo;
struct chain_undo_coin;
struct chain_work;

/* ---- numbers, hashes and bytes ------------------------------------------- */

/** A BTC amount from satoshis, with exactly eight decimals (50.00000000). Tagged. */
json_t *json_amount(int64_t sats);
/** A double as Core's UniValue prints it ("%.16g": 1, not 1.0). Tagged. */
json_t *json_double(double v);
/** An unsigned 64-bit integer, which jansson's signed integers cannot hold. Tagged. */
json_t *json_u64(uint64_t v);
/** Lower-case hex of bytes, as a string. */
json_t *json_hex(const uint8_t *data, size_t len);
/** A hash in display order (byte-reversed hex), as a string. */
json_t *json_hash(const struct proto_hash *h);
/** Eight hex digits of a 32-bit value, as Core prints "bits" and "versionHex". */
json_t *json_hex32(uint32_t v);
/** The 256-bit target of compact bits, 64 hex digits most significant first. */
json_t *json_target(uint32_t bits);

/* ---- text ------------------------------------------------------------------ */

/**
 * v as text with jansson's `flags` (JSON_COMPACT for the control socket,
 * JSON_INDENT(2) for bitcoin-cli's shape) and every tagged number bare.
 * Returns a string from jansson's allocator (free it with xfree), or NULL
 * when out of memory.
 */
char *json_format(const json_t *v, size_t flags);
/** v as bitcoin-cli prints it (two-space indent) and a newline to f. 0, or -1 on OOM. */
int json_print(FILE *f, const json_t *v);

/* ---- scripts and transactions --------------------------------------------- */

/** An output script as Core's ScriptToUniv: asm, desc, hex, address (when it has one), type. */
json_t *json_script_pubkey(const uint8_t *script, size_t len, const struct proto_params *net);
/** An input script as Core prints "scriptSig": asm (signature hash types decoded), hex. */
json_t *json_script_sig(const uint8_t *script, size_t len);

/** json_tx's options. */
enum json_tx_flags {
	JSON_TX_HEX = 1 << 0,     /**< add "hex", the serialized transaction */
	JSON_TX_PREVOUT = 1 << 1, /**< with `spent`: each input's "prevout" (getblock 3) */
};

/**
 * A transaction as Core's TxToUniv (decoderawtransaction's shape) for
 * network `net`; computes the ids. `spent` (NULL: unknown) holds the coins
 * its inputs spent, in input order, as a block's undo data has them: then
 * "fee" is shown for a non-coinbase transaction. `flags` is a set of
 * enum json_tx_flags.
 */
json_t *json_tx(struct proto_tx *tx, const struct proto_params *net,
                const struct chain_undo_coin *spent, unsigned flags);

/* ---- headers and blocks ----------------------------------------------------- */

/** What the active chain knows of a block (getblockheader's extra fields). */
struct json_block_info {
	int32_t height;
	int32_t confirmations; /**< -1 when the block is not on the active chain */
	int64_t mediantime;
	const struct chain_work *chainwork;
	uint32_t n_tx;                 /**< "nTx" of a header (a block counts its own) */
	const struct proto_hash *next; /**< the next block on the active chain, or NULL */
};

/**
 * A header as getblockheader prints it: Core's field order, with the
 * chain's fields when `info` is given (NULL: the header alone, as a
 * decoder sees it, without "nTx").
 */
json_t *json_block_header(const struct proto_block_header *h, const struct json_block_info *info);

/**
 * A block as getblock prints it for `verbosity` 1 (txids), 2 (transactions
 * with hex) or 3 (also each input's prevout). `info` as for
 * json_block_header. `undo` (NULL: none) is the block's undo data; it gives
 * the fees, and with verbosity 3 the prevouts, when it matches the block.
 * Computes the transactions' ids.
 */
json_t *json_block(struct proto_block *b, const struct json_block_info *info,
                   const struct proto_params *net, int verbosity,
                   const struct chain_block_undo *undo);

#endif
