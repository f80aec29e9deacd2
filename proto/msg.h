/**
 * proto/msg.h: framing and every P2P message.
 *
 * Part of proto/proto.h, the module's one public face: include that,
 * not this file. Split out only to keep each file about one thing.
 */
#ifndef PEERD_PROTO_MSG_H
#define PEERD_PROTO_MSG_H

#ifndef PEERD_PROTO_H
#error "include proto/proto.h, not proto/msg.h"
#endif

/* ---------------------------------------------------------------------- */
/* Framing                                                                 */

/**
 * Every command peerd knows, once: X(ENUM, "wire name", codec). This list
 * generates enum proto_cmd, the name table (proto/frame.c) and the codec
 * table of proto_msg_decode/encode (proto/msg.c; the codec names a
 * dec_<codec>/enc_<codec> pair there, shared by commands with one payload
 * shape). The order is the enum's: stats, metrics and the fuzz corpora
 * index by it, so append new commands at the end. A new message is a line
 * here (and a codec in proto/msg.c if its shape is new), then its entry in
 * the daemon's handler table (daemon/msgtable.c).
 */
#define PROTO_CMDS(X)                                                                              \
	X(VERSION, "version", version)                                                             \
	X(VERACK, "verack", empty)                                                                 \
	X(PING, "ping", nonce)                                                                     \
	X(PONG, "pong", nonce)                                                                     \
	X(INV, "inv", inv)                                                                         \
	X(GETDATA, "getdata", inv)                                                                 \
	X(NOTFOUND, "notfound", inv)                                                               \
	X(GETHEADERS, "getheaders", locator)                                                       \
	X(GETBLOCKS, "getblocks", locator)                                                         \
	X(HEADERS, "headers", headers)                                                             \
	X(TX, "tx", tx)                                                                            \
	X(BLOCK, "block", block)                                                                   \
	X(ADDR, "addr", addr)                                                                      \
	X(ADDRV2, "addrv2", addrv2)                                                                \
	X(SENDADDRV2, "sendaddrv2", empty)                                                         \
	X(SENDHEADERS, "sendheaders", empty)                                                       \
	X(FEEFILTER, "feefilter", feerate)                                                         \
	X(WTXIDRELAY, "wtxidrelay", empty)                                                         \
	X(SENDCMPCT, "sendcmpct", sendcmpct)                                                       \
	X(GETADDR, "getaddr", empty)                                                               \
	X(MEMPOOL, "mempool", empty)                                                               \
	X(CMPCTBLOCK, "cmpctblock", cmpctblock)                                                    \
	X(GETBLOCKTXN, "getblocktxn", getblocktxn)                                                 \
	X(BLOCKTXN, "blocktxn", blocktxn)                                                          \
	X(GETCFILTERS, "getcfilters", getcfilters)                                                 \
	X(GETCFHEADERS, "getcfheaders", getcfilters)                                               \
	X(GETCFCHECKPT, "getcfcheckpt", getcfcheckpt)                                              \
	X(CFILTER, "cfilter", cfilter)                                                             \
	X(CFHEADERS, "cfheaders", cfheaders)                                                       \
	X(CFCHECKPT, "cfcheckpt", cfcheckpt)

/** Every command peerd knows (PROTO_CMDS). PROTO_CMD_UNKNOWN for the rest (skippable). */
enum proto_cmd {
	PROTO_CMD_UNKNOWN = 0,
#define PROTO_CMD_ENUM_(e, name, codec) PROTO_CMD_##e,
	PROTO_CMDS(PROTO_CMD_ENUM_)
#undef PROTO_CMD_ENUM_
	    PROTO_CMD__COUNT
};

/** Wire name of a command ("version"); "unknown" for PROTO_CMD_UNKNOWN. */
const char *proto_cmd_name(enum proto_cmd cmd);
/** Command from a NUL-terminated name; PROTO_CMD_UNKNOWN if not known. */
enum proto_cmd proto_cmd_lookup(const char *name);

/** A parsed 24-byte frame header; plain values, no ownership. */
struct proto_frame_header {
	uint32_t magic;
	char command[PROTO_COMMAND_SIZE + 1]; /**< NUL-terminated */
	enum proto_cmd cmd; /**< PROTO_CMD_UNKNOWN for a well-formed name peerd does not know */
	uint32_t length;    /**< payload bytes, at most PROTO_MAX_MESSAGE once parsed */
	uint8_t checksum[4];
};

/**
 * Parse and check a 24-byte header in this order, as Core does before any
 * buffer grows: magic (PROTO_EMAGIC), length <= PROTO_MAX_MESSAGE
 * (PROTO_EOVERSIZE), command printable ASCII NUL-padded with nothing after
 * the first NUL (PROTO_ECOMMAND; h is still filled so the payload can be
 * skipped). An unknown but valid command is not an error (h->cmd is
 * PROTO_CMD_UNKNOWN).
 */
PROTO_WUR int proto_frame_header_parse(const uint8_t buf[PROTO_HEADER_SIZE], uint32_t magic,
                                       struct proto_frame_header *h);
/** First 4 bytes of SHA-256d(payload) (payload may be NULL when len is 0). */
void proto_checksum(const void *payload, size_t len, uint8_t out[4]);
/** 0, or PROTO_ECHECKSUM when the payload (h->length bytes) does not match the header. */
PROTO_WUR int proto_frame_verify(const struct proto_frame_header *h, const uint8_t *payload);
/**
 * Write a 24-byte header plus payload. A command longer than
 * PROTO_COMMAND_SIZE sets w->err to PROTO_ECOMMAND, a payload over
 * PROTO_MAX_MESSAGE to PROTO_EOVERSIZE (a peer would drop it).
 */
void proto_frame_write(struct proto_writer *w, uint32_t magic, const char *command,
                       const uint8_t *payload, size_t len);
/**
 * Start a frame: append a 24-byte placeholder header and return its offset
 * in w->buf. Encode the payload into w, then call proto_frame_end: the
 * payload is written once, in place, with no copy.
 */
size_t proto_frame_begin(struct proto_writer *w);
/**
 * Fill in the header at `start` (from proto_frame_begin) for the payload
 * written since: length and checksum. Errors as proto_frame_write; does
 * nothing when w->err is already set.
 */
void proto_frame_end(struct proto_writer *w, size_t start, uint32_t magic, const char *command);

/* ---------------------------------------------------------------------- */
/* Messages                                                                */

/** Service bits. */
#define PROTO_NODE_NETWORK         (1u << 0)
#define PROTO_NODE_BLOOM           (1u << 2)
#define PROTO_NODE_WITNESS         (1u << 3)
#define PROTO_NODE_COMPACT_FILTERS (1u << 6)
#define PROTO_NODE_NETWORK_LIMITED (1u << 10)
#define PROTO_NODE_P2P_V2          (1u << 11)

/** An address as in version and addr: 16-byte IPv6 (IPv4-mapped for v4). */
struct proto_netaddr {
	uint64_t services;
	uint8_t ip[16];
	uint16_t port; /**< host order (big-endian on the wire) */
};

/** version: the first message each side sends. */
struct proto_version {
	int32_t version;   /**< protocol version (PROTO_VERSION) */
	uint64_t services; /**< PROTO_NODE_* bits */
	int64_t timestamp; /**< sender's clock, seconds since the epoch */
	struct proto_netaddr addr_recv;
	struct proto_netaddr addr_from;
	uint64_t nonce; /**< detects connecting to ourselves */
	char user_agent[PROTO_MAX_SUBVERSION +
	                1]; /**< NUL-terminated, but may hold NULs: use _len */
	uint32_t user_agent_len;
	int32_t start_height; /**< sender's best height */
	bool relay;           /**< BIP37: whether to announce transactions */
	bool has_relay;       /**< the optional relay byte was present */
	uint8_t omitted;      /**< enum proto_version_tail: what the wire left out; 0 to send all */
};

/**
 * How much of version's optional tail was absent, counted from the end.
 * Core reads each part only `if (!vRecv.empty())`, so old peers may stop
 * after any of them; a part cut in the middle is PROTO_ETRUNC. Absent
 * parts decode to Core's defaults (nonce 0, empty user agent, start height
 * -1, relay true). The encoder writes what `omitted` says (and ignores
 * has_relay), so a zeroed struct encodes the full modern message.
 */
enum proto_version_tail {
	PROTO_VERSION_TAIL_FULL = 0,      /**< every field through relay */
	PROTO_VERSION_TAIL_NO_RELAY = 1,  /**< ends after start_height */
	PROTO_VERSION_TAIL_NO_HEIGHT = 2, /**< ends after the user agent */
	PROTO_VERSION_TAIL_NO_UA = 3,     /**< ends after addr_from and nonce */
	PROTO_VERSION_TAIL_NONE = 4,      /**< ends after addr_recv */
};

/** Inventory types. */
enum proto_inv_type {
	PROTO_INV_ERROR = 0,
	PROTO_INV_TX = 1,
	PROTO_INV_BLOCK = 2,
	PROTO_INV_FILTERED_BLOCK = 3,
	PROTO_INV_CMPCT_BLOCK = 4,
	PROTO_INV_WTX = 5,
	PROTO_INV_WITNESS_FLAG = 1u << 30,
	PROTO_INV_WITNESS_TX = PROTO_INV_TX | PROTO_INV_WITNESS_FLAG,
	PROTO_INV_WITNESS_BLOCK = PROTO_INV_BLOCK | PROTO_INV_WITNESS_FLAG,
	PROTO_INV_FILTERED_WITNESS_BLOCK = PROTO_INV_FILTERED_BLOCK | PROTO_INV_WITNESS_FLAG,
};

/** One inventory entry: what kind of object, and its hash. */
struct proto_inv_vec {
	uint32_t type; /**< enum proto_inv_type, but any value as received */
	struct proto_hash hash;
};

/**
 * Name of an inventory type as Core logs it ("tx", "witness_block"), or
 * NULL for a type peerd does not know. The codec accepts any type (Core
 * ignores unknown ones in its handlers); this is for the handler and logs.
 */
const char *proto_inv_type_name(uint32_t type);

/** inv, getdata, notfound. Storage reused across decodes; at most one allocation. */
struct proto_inv {
	struct proto_inv_vec *v; /**< n entries (xmalloc'd, owned; proto_inv_release) */
	uint32_t n;
	uint32_t cap; /**< entries v can hold without growing */
};

/** getheaders and getblocks. Storage reused across decodes; at most one allocation. */
struct proto_locator {
	uint32_t version;          /**< protocol version; ignored by Core */
	struct proto_hash *hashes; /**< n hashes, newest first (owned; proto_locator_release) */
	uint32_t n;
	uint32_t cap;           /**< hashes the array holds without growing */
	struct proto_hash stop; /**< last hash wanted; zero for as many as allowed */
};

/** headers: each header is followed on the wire by a tx count (ignored, as Core). */
struct proto_headers {
	struct proto_block_header *h; /**< n headers (owned; proto_headers_release) */
	uint32_t n;
	uint32_t cap; /**< headers the array holds without growing */
};

/** BIP155 network ids. */
enum proto_bip155_net {
	PROTO_BIP155_IPV4 = 1,
	PROTO_BIP155_IPV6 = 2,
	PROTO_BIP155_TORV2 = 3,
	PROTO_BIP155_TORV3 = 4,
	PROTO_BIP155_I2P = 5,
	PROTO_BIP155_CJDNS = 6,
};

/** One address of addr (v1) or addrv2. */
struct proto_addr_entry {
	uint32_t time;
	uint64_t services;
	uint8_t net;      /**< enum proto_bip155_net */
	uint8_t addr_len; /**< bytes used in addr */
	uint8_t addr[32];
	uint16_t port; /**< host order */
};

/**
 * addr and addrv2. addr v1 entries are stored as BIP155 too: IPv4-mapped
 * IPv6 becomes IPV4 (4 bytes) and is mapped back on encode. addrv2 entries
 * with an unknown network id are skipped (counted in n_skipped), as Core.
 */
struct proto_addr {
	struct proto_addr_entry *v; /**< n entries (owned; proto_addr_release) */
	uint32_t n;
	uint32_t cap;       /**< entries the array holds without growing */
	uint32_t n_skipped; /**< addrv2 entries of unknown networks, not stored */
};

/** sendcmpct (BIP152). */
struct proto_sendcmpct {
	bool high_bandwidth; /**< announce blocks as cmpctblock without inv first */
	uint64_t version; /**< compact block version (2: with witnesses); any value as received */
};

/* BIP152 compact blocks: proto/msg_cmpct.h */
#include "proto/msg_cmpct.h"
/* BIP157 compact block filters: proto/msg_cfilter.h */
#include "proto/msg_cfilter.h"

/**
 * Storage for any decoded message. Not a union: each member keeps its own
 * buffers, so decoding the same command again into the same object costs no
 * allocation. Owned by one thread.
 */
struct proto_msg {
	enum proto_cmd cmd;
	struct proto_version version;
	uint64_t nonce;               /**< ping, pong */
	struct proto_inv inv;         /**< inv, getdata, notfound */
	struct proto_locator locator; /**< getheaders, getblocks */
	struct proto_headers headers;
	struct proto_tx tx;
	struct proto_block block;
	struct proto_addr addr; /**< addr, addrv2 */
	int64_t feerate;        /**< feefilter, sat/kvB */
	struct proto_sendcmpct sendcmpct;
	struct proto_cmpctblock cmpctblock;
	struct proto_getblocktxn getblocktxn;
	struct proto_blocktxn blocktxn;
	struct proto_getcfilters getcfilters;   /**< getcfilters, getcfheaders */
	struct proto_getcfcheckpt getcfcheckpt; /**< getcfcheckpt */
	struct proto_cfilter cfilter;
	struct proto_cfhashes cfhashes; /**< cfheaders, cfcheckpt */
};

/** Zero m so it can be decoded into or released. Allocates nothing. */
void proto_msg_init(struct proto_msg *m);
/** Free every member's storage; m is then as after init. */
void proto_msg_release(struct proto_msg *m);

/**
 * Decode the payload of command `cmd` into m (m->cmd set). Every length and
 * count is checked before use; trailing bytes are PROTO_ETRAILING except
 * where Core tolerates them: after version's optional fields, and in the
 * payload-less messages (verack, sendaddrv2, sendheaders, wtxidrelay,
 * getaddr, mempool), whose payload Core never reads. *err_off (may be
 * NULL) gets the offset of the failing item, or on success the bytes
 * consumed. PROTO_EUNKNOWN for PROTO_CMD_UNKNOWN. On error the message's
 * arrays hold no entries (n = 0) but keep their storage for reuse.
 * payload may be NULL when len is 0. Allocates at most once per array
 * message (none when m's storage is large enough); see proto/msg.c.
 */
PROTO_WUR int proto_msg_decode(enum proto_cmd cmd, const uint8_t *payload, size_t len,
                               struct proto_msg *m, size_t *err_off);
/**
 * Encode the payload of m->cmd (no frame header). PROTO_CMD_UNKNOWN (or a
 * value out of range) sets w->err to PROTO_EUNKNOWN.
 */
void proto_msg_encode(const struct proto_msg *m, struct proto_writer *w);
/** Encode m as a complete frame for network `magic`: header then payload, in place. */
void proto_msg_frame(const struct proto_msg *m, uint32_t magic, struct proto_writer *w);

/*
 * Per-message codecs, used by proto_msg_decode/encode and directly by
 * benches. Decoders read from r and leave it after the message (at the
 * failing field on error) without checking for trailing bytes; the array
 * decoders validate the count with proto_read_count before allocating,
 * grow storage at most once (none when it fits) and set n = 0 on error.
 * Encoders set w->err (sticky) and never fail otherwise.
 */
/**
 * version; optional tail as described at enum proto_version_tail. A user
 * agent over PROTO_MAX_SUBVERSION is PROTO_EOVERSIZE. Bytes after the relay
 * flag are not read.
 */
PROTO_WUR int proto_version_decode(struct proto_reader *r, struct proto_version *v);
/** PROTO_EOVERSIZE on a user agent over the limit, PROTO_EVALUE on a bad `omitted`. */
void proto_version_encode(const struct proto_version *v, struct proto_writer *w);
/** inv/getdata/notfound, max PROTO_MAX_INV entries; any type value is kept. */
PROTO_WUR int proto_inv_decode(struct proto_reader *r, struct proto_inv *inv);
/**
 * inv/getdata/notfound; errors in w->err. The count is not capped: keep it
 * within PROTO_MAX_INV or a peer will refuse the message.
 */
void proto_inv_encode(const struct proto_inv *inv, struct proto_writer *w);
/**
 * Room for n entries, the first inv->n kept: the list that builders append
 * to. Grows at least twofold (and to PROTO_INV_MIN_RESERVE), so appending
 * one at a time is amortised O(1). PROTO_ENOMEM leaves inv as it was.
 */
PROTO_WUR int proto_inv_reserve(struct proto_inv *inv, uint32_t n);
/** Free the entries; inv is then empty and reusable. */
void proto_inv_release(struct proto_inv *inv);
/** getheaders/getblocks, max PROTO_MAX_LOCATOR hashes (the handler enforces 101). */
PROTO_WUR int proto_locator_decode(struct proto_reader *r, struct proto_locator *l);
/** getheaders/getblocks; errors in w->err. */
void proto_locator_encode(const struct proto_locator *l, struct proto_writer *w);
/** Free the hashes; l is then empty and reusable. */
void proto_locator_release(struct proto_locator *l);
/**
 * headers, max PROTO_MAX_HEADERS. The tx count after each header must be a
 * canonical CompactSize <= PROTO_MAX_SIZE and is ignored (Core); encode
 * writes 0.
 */
PROTO_WUR int proto_headers_decode(struct proto_reader *r, struct proto_headers *h);
/** headers, each followed by a zero tx count; errors in w->err. */
void proto_headers_encode(const struct proto_headers *h, struct proto_writer *w);
/** Free the headers; h is then empty and reusable. */
void proto_headers_release(struct proto_headers *h);
/** addr (v1), max PROTO_MAX_ADDR; IPv4-mapped becomes IPV4, anything else IPV6. */
PROTO_WUR int proto_addr_decode(struct proto_reader *r, struct proto_addr *a);
/**
 * addr (v1). IPV4 is written IPv4-mapped, IPV6 and CJDNS as is, other
 * networks as 16 zero bytes (Core's V1 form); an entry whose length does not
 * fit its network sets PROTO_EVALUE.
 */
void proto_addr_encode(const struct proto_addr *a, struct proto_writer *w);
/**
 * addrv2 (BIP155), max PROTO_MAX_ADDR: address over PROTO_MAX_ADDRV2_SIZE is
 * PROTO_EOVERSIZE, a known network with the wrong length PROTO_EVALUE, an
 * unknown network id skipped and counted in n_skipped.
 */
PROTO_WUR int proto_addrv2_decode(struct proto_reader *r, struct proto_addr *a);
/** addrv2; PROTO_EVALUE for an entry whose length does not fit its network. */
void proto_addrv2_encode(const struct proto_addr *a, struct proto_writer *w);
/** Free the entries; a is then empty and reusable. */
void proto_addr_release(struct proto_addr *a);
/** Outpoint, txin, txout pieces (benchmarks mirror btcd's): 36 bytes; 0 or PROTO_ETRUNC. */
PROTO_WUR int proto_outpoint_decode(struct proto_reader *r, struct proto_outpoint *o);
/** Append the 36-byte outpoint; errors in w->err. */
void proto_outpoint_encode(const struct proto_outpoint *o, struct proto_writer *w);

#endif
