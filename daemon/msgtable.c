/*
 * daemon/msgtable.c: the message table, the one place that names every P2P
 * message's handler (Bitcoin Core's PeerManagerImpl::ProcessMessage is one
 * long if-chain; btcd's server fills peer.MessageListeners instead, which
 * is the shape here).
 *
 * Indexed by command (proto/msg.h's PROTO_CMDS). For each: the handler of
 * the decoded message, or the raw handler of the undecoded payload; the
 * handshake states it may arrive in (Core 29's gates: nothing but version
 * until version; between version and verack only verack, wtxidrelay and
 * sendaddrv2); and Core's limit on its element count, with what a count
 * over it costs. net/transport.c frames and counts each message;
 * p2p/dispatch.c gates, decodes and calls the entry (daemon_init registers
 * this table in struct daemon's msg_table).
 *
 * Why here and not in p2p/: the handlers live in p2p/, sync/ and txrelay/,
 * and p2p/ may not name sync/'s or txrelay/'s (calls go one way); the
 * wiring layer may name every room, and keeping the table whole in one
 * file keeps "add a message" one entry. p2p/ defines the entry's type and
 * calls through it, so it names no handler of the rooms above it either.
 */
#include "daemon/program.h"

/* Decoded messages gated to after the handshake, with no count limit. */
#define ACTIVE(fn)                                                                                 \
	{                                                                                          \
		.on_msg = (fn), .states = P2P_MSG_ACTIVE                                           \
	}
/* A counted vector: a count over `max` is misbehaviour (disconnect and discourage). */
#define COUNTED(fn, max, reason)                                                                   \
	{                                                                                          \
		.on_msg = (fn), .states = P2P_MSG_ACTIVE, .limit = P2P_MSG_LIMIT_MISBEHAVING,      \
		.count_max = (max), .limit_reason = (reason)                                       \
	}
/* getheaders and getblocks: the locator count follows the 4-byte version;
 * over 101 hashes disconnects without discouraging, as Core. */
#define LOCATOR(fn)                                                                                \
	{                                                                                          \
		.on_msg = (fn), .states = P2P_MSG_ACTIVE, .limit = P2P_MSG_LIMIT_DISCONNECT,       \
		.count_skip = 4, .count_max = PROTO_MAX_LOCATOR_HANDLER,                           \
		.limit_reason = "locator over 101 hashes"                                          \
	}

const struct p2p_msg_entry daemon_msg_table[PROTO_CMD__COUNT] = {
    /* p2p/handshake.c */
    [PROTO_CMD_VERSION] = {.on_msg = handshake_on_version, .states = P2P_MSG_ANY_STATE},
    [PROTO_CMD_VERACK] = {.on_msg = handshake_on_verack, .states = P2P_MSG_AFTER_VERSION},
    [PROTO_CMD_WTXIDRELAY] = {.on_msg = handshake_on_wtxidrelay, .states = P2P_MSG_AFTER_VERSION},
    [PROTO_CMD_SENDADDRV2] = {.on_msg = handshake_on_sendaddrv2, .states = P2P_MSG_AFTER_VERSION},
    [PROTO_CMD_PING] = ACTIVE(handshake_on_ping),
    [PROTO_CMD_PONG] = ACTIVE(handshake_on_pong),
    [PROTO_CMD_SENDCMPCT] = ACTIVE(handshake_on_sendcmpct),
    [PROTO_CMD_FEEFILTER] = ACTIVE(handshake_on_feefilter),
    [PROTO_CMD_SENDHEADERS] = ACTIVE(handshake_on_sendheaders),
    /* p2p/inv.c */
    [PROTO_CMD_INV] = COUNTED(inv_on_inv, PROTO_MAX_INV, "inv message size over 50000"),
    [PROTO_CMD_GETDATA] = COUNTED(inv_on_getdata, PROTO_MAX_INV, "getdata message size over 50000"),
    /* Core ignores an oversized notfound without penalty. */
    [PROTO_CMD_NOTFOUND] = ACTIVE(inv_on_notfound),
    [PROTO_CMD_MEMPOOL] = ACTIVE(inv_on_mempool),
    /* txrelay/accept.c: a transaction is relay's business from the start. */
    [PROTO_CMD_TX] = ACTIVE(txaccept_on_tx_msg),
    /* p2p/addr.c */
    [PROTO_CMD_ADDR] = COUNTED(addr_on_addr, PROTO_MAX_ADDR, "addr message size over 1000"),
    [PROTO_CMD_ADDRV2] = COUNTED(addr_on_addr, PROTO_MAX_ADDR, "addr message size over 1000"),
    [PROTO_CMD_GETADDR] = ACTIVE(addr_on_getaddr),
    /* sync/headers.c */
    [PROTO_CMD_GETHEADERS] = LOCATOR(headers_on_getheaders),
    [PROTO_CMD_GETBLOCKS] = LOCATOR(headers_on_getblocks),
    [PROTO_CMD_HEADERS] =
        COUNTED(headers_on_headers, PROTO_MAX_HEADERS, "headers message size over 2000"),
    /* sync/download.c: decoded on the validation thread, not on the loop,
     * where a 4 MB block would hold every peer up for milliseconds. */
    [PROTO_CMD_BLOCK] = {.on_raw = sync_on_block, .states = P2P_MSG_ACTIVE},
    /* sync/cmpct_receive.c: BIP152 */
    [PROTO_CMD_CMPCTBLOCK] = ACTIVE(sync_cmpct_on_cmpctblock),
    [PROTO_CMD_GETBLOCKTXN] = ACTIVE(sync_cmpct_on_getblocktxn),
    [PROTO_CMD_BLOCKTXN] = ACTIVE(sync_cmpct_on_blocktxn),
    /* sync/cfilters.c: BIP157, read from -blockfilterindex on the validation thread */
    [PROTO_CMD_GETCFILTERS] = ACTIVE(sync_cf_on_getcfilters),
    [PROTO_CMD_GETCFHEADERS] = ACTIVE(sync_cf_on_getcfilters),
    [PROTO_CMD_GETCFCHECKPT] = ACTIVE(sync_cf_on_getcfcheckpt),
    [PROTO_CMD_CFILTER] = {.on_raw = sync_cf_on_answer, .states = P2P_MSG_ACTIVE},
    [PROTO_CMD_CFHEADERS] = {.on_raw = sync_cf_on_answer, .states = P2P_MSG_ACTIVE},
    [PROTO_CMD_CFCHECKPT] = {.on_raw = sync_cf_on_answer, .states = P2P_MSG_ACTIVE},
};
