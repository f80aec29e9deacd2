/**
 * daemon/ctl_json.h: transactions, scripts and hashes as Bitcoin Core's
 * RPCs print them (daemon/ctl_json.c). Every function returns a new
 * reference, or NULL when out of memory. Any thread.
 */
#ifndef PEERD_DAEMON_CTL_JSON_H
#define PEERD_DAEMON_CTL_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "proto/proto.h"

struct chain_undo_coin;

/** Hex of bytes. */
json_t *ctl_json_hex(const uint8_t *data, size_t len);
/** A hash in display order. */
json_t *ctl_json_hash(const struct proto_hash *h);
/** An output script as Core's ScriptToUniv: asm, desc, hex, address (if any), type. */
json_t *ctl_json_script_pubkey(const uint8_t *script, size_t len, const struct proto_params *net);
/**
 * A transaction as Core's TxToUniv. `spent` (NULL: unknown) holds the coins
 * its inputs spent, in input order (from the block's undo data): then
 * "fee" is shown for a non-coinbase transaction, and with show_prevout
 * each input's "prevout" (getblock verbosity 3). Computes the ids.
 */
json_t *ctl_json_tx(struct proto_tx *tx, const struct proto_params *net,
                    const struct chain_undo_coin *spent, bool show_prevout, bool include_hex);

#endif
