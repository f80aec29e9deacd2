/**
 * tools/peertool_json.h: JSON renderings shared by peertool's subcommands,
 * in the shapes bitcoin-cli prints (decoderawtransaction, getblock HASH 2).
 */
#ifndef PEERD_PEERTOOL_JSON_H
#define PEERD_PEERTOOL_JSON_H

#include <jansson.h>

#include "proto/proto.h"

/**
 * A transaction as decoderawtransaction prints it (computes ids); addresses
 * and descriptors for network `net`. NULL on OOM.
 */
json_t *peertool_json_tx(struct proto_tx *tx, int include_hex, const struct proto_params *net);
/** A block as getblock HASH 2 prints it, addresses for `net`. NULL on OOM. */
json_t *peertool_json_block(struct proto_block *b, const struct proto_params *net);
/**
 * An output script as Core's ScriptToUniv prints it in a transaction: asm,
 * desc, hex, address (when it has one), type. NULL on OOM.
 */
json_t *peertool_json_script_pubkey(const uint8_t *script, size_t len,
                                    const struct proto_params *net);
/** A block header as getblockheader prints it. */
json_t *peertool_json_header(const struct proto_block_header *h);
/** Hex of bytes as a JSON string. */
json_t *peertool_json_hex(const uint8_t *data, size_t len);
/** A hash in display order. */
json_t *peertool_json_hash(const struct proto_hash *h);
/**
 * An amount in BTC, printed with exactly 8 decimals as bitcoin-cli does.
 * jansson cannot print such a number itself, so it is a tagged string that
 * peertool_json_print turns into a bare number.
 */
json_t *peertool_json_amount(int64_t sats);
/** An unsigned 64-bit number (nonces), which jansson's signed integers cannot hold. */
json_t *peertool_json_u64(uint64_t v);
/** Pretty-print to stdout (2-space indent, bitcoin-cli's shape); 0 or -1 on OOM. */
int peertool_json_print(json_t *v);

#endif
