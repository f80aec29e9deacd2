/**
 * daemon/p2p/p2p.h: the p2p room's declarations: the hooks through which
 * p2p/ reaches the rooms above it (struct p2p_hooks), the message table's
 * entry and the dispatch of each message to it (dispatch.c), the handshake
 * (handshake.c), inventory (inv.c), addresses (addr.c).
 *
 * It may use the rooms below it: net and node.
 */
#ifndef PEERD_DAEMON_P2P_P2P_H
#define PEERD_DAEMON_P2P_P2P_H

#include <stdbool.h>
#include <stdint.h>

#include "addrman/addrman.h"
#include "daemon/net/net.h"
#include "daemon/node/node.h"

/* ---- the protocol's constants (Core 29's names in comments) --------- */

/** Oldest protocol version accepted (MIN_PEER_PROTO_VERSION). */
#define PEER_MIN_PROTO_VERSION 31800
/** First version whose ping carries a nonce (BIP0031_VERSION). */
#define PEER_BIP31_VERSION 60000
/** First version with sendcmpct (SHORT_IDS_BLOCKS_VERSION). */
#define PEER_SHORT_IDS_VERSION 70014
/** First version with sendheaders (SENDHEADERS_VERSION, BIP130). */
#define PEER_SENDHEADERS_VERSION 70012
/** First version with feefilter (FEEFILTER_VERSION). */
#define PEER_FEEFILTER_VERSION 70013
/** First version with wtxidrelay (WTXID_RELAY_VERSION). */
#define PEER_WTXID_RELAY_VERSION 70016
/** Compact block version peerd mentions in sendcmpct (CMPCTBLOCKS_VERSION). */
#define PEER_CMPCT_VERSION 2
/** Ping interval (PING_INTERVAL). */
#define PEER_PING_INTERVAL_MS (2u * 60u * 1000u)
/** No pong, or no traffic either way, for this long: disconnect (TIMEOUT_INTERVAL). */
#define PEER_TIMEOUT_INTERVAL_MS (20u * 60u * 1000u)
/** Blocks a NODE_NETWORK_LIMITED node serves below its tip (BIP159,
 * NODE_NETWORK_LIMITED_MIN_BLOCKS); Core adds 2 for races either way. */
#define PEER_LIMITED_MIN_BLOCKS 288
/** User agent in version (BIP14). */
#define DAEMON_USER_AGENT "/peerd:" PEERD_VERSION_STRING "/"
/**
 * Services peerd offers, as Core 29's init.cpp: NODE_NETWORK_LIMITED (the
 * last 288 blocks, BIP159) and NODE_WITNESS always; NODE_NETWORK (every
 * block) unless -prune is set. Core starts headers sync only with peers that
 * claim NODE_NETWORK or NODE_NETWORK_LIMITED.
 */
#define DAEMON_LOCAL_SERVICES ((uint64_t)(PROTO_NODE_NETWORK_LIMITED | PROTO_NODE_WITNESS))
/**
 * Our services as announced: DAEMON_LOCAL_SERVICES, NODE_NETWORK unless pruned,
 * with -v2transport NODE_P2P_V2, with -peerblockfilters NODE_COMPACT_FILTERS
 * (BIP157). Any thread (the configuration does not change).
 */
static inline uint64_t daemon_local_services(const struct daemon *d)
{
	return DAEMON_LOCAL_SERVICES | (d->conf->prune_target ? 0 : PROTO_NODE_NETWORK) |
	       (d->conf->v2transport ? PROTO_NODE_P2P_V2 : 0) |
	       (d->conf->peerblockfilters ? PROTO_NODE_COMPACT_FILTERS : 0);
}

/* ---- the hooks ------------------------------------------------------- */

/**
 * What p2p/ tells the rooms above it (sync/, txrelay/), which it may not
 * name (calls go one way): the shape of Bitcoin Core's NetEventsInterface
 * and btcd's MessageListeners. The wiring fills one const table
 * (daemon/p2p_hooks.c) and daemon_init points d->p2p_hooks at it; every hook
 * must be set. No context pointer: every hook gets the peer, and p->d is
 * the one context there is. Loop thread, all of them.
 */
struct p2p_hooks {
	/** The handshake is done (verack) and p is active: block sync, then relay, start. */
	void (*peer_ready)(struct peer *p);
	/** p is closing; called before p2p frees its known inventory. */
	void (*peer_gone)(struct peer *p);
	/** A block inv entry from p, already remembered as known to p. */
	void (*block_announced)(struct peer *p, const struct proto_hash *h);
	/**
	 * A transaction inv entry from p of the kind p announces by, new to
	 * p's known inventory, outside initial block download. Requests go
	 * into the getdata batch (inv_batch_add), sent once the inv is read.
	 */
	void (*tx_announced)(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms);
	/** A notfound entry from p: it does not have what was asked. */
	void (*tx_notfound)(struct peer *p, const struct proto_inv_vec *v);
	/**
	 * A getdata entry, while a chain is open: queue it to be answered in
	 * order (the return value is not used).
	 */
	int (*getdata_queue)(struct peer *p, const struct proto_inv_vec *v);
	/** The getdata is read (a chain is open): start answering its queue. */
	void (*getdata_done)(struct peer *p);
	/**
	 * A getdata entry for a transaction with no chain open (unit tests):
	 * true when sent; false: p2p answers notfound.
	 */
	bool (*getdata_tx)(struct peer *p, const struct proto_inv_vec *v);
};

/* ---- p2p/dispatch.c: the message table and what a message means ------- */

/*
 * One entry per command (enum proto_cmd), filled by the wiring
 * (daemon/msgtable.c) and registered in struct daemon's msg_table at
 * start, as btcd's peer.MessageListeners: p2p_dispatch gates and decodes
 * each message net/ framed and calls the entry of its command, and never
 * names a handler itself. The handlers live in their rooms (p2p/, sync/,
 * txrelay/).
 */

/** Where a peer is in the handshake: the bits of p2p_msg_entry.states. */
enum p2p_msg_state {
	P2P_MSG_BEFORE_VERSION = 1u << 0, /**< no version received yet */
	P2P_MSG_BEFORE_VERACK = 1u << 1,  /**< version received, not yet past verack */
	P2P_MSG_ACTIVE = 1u << 2,         /**< past the handshake */
};
/** Allowed from the peer's first message on. */
#define P2P_MSG_ANY_STATE (P2P_MSG_BEFORE_VERSION | P2P_MSG_BEFORE_VERACK | P2P_MSG_ACTIVE)
/** Allowed once version was received. */
#define P2P_MSG_AFTER_VERSION (P2P_MSG_BEFORE_VERACK | P2P_MSG_ACTIVE)

/** What an element count over a command's limit costs the peer. */
enum p2p_msg_limit {
	P2P_MSG_NO_LIMIT = 0,      /**< no count checked here */
	P2P_MSG_LIMIT_MISBEHAVING, /**< disconnect and discourage (ban_misbehaving) */
	P2P_MSG_LIMIT_DISCONNECT,  /**< disconnect only */
};

/** A handler of a decoded message. Loop thread; m is d->in, valid for the call. */
typedef void (*p2p_msg_fn)(struct peer *p, const struct proto_msg *m);
/**
 * A handler of a message's raw payload (not decoded on the loop, e.g. a
 * block for the validation thread): len bytes, and the frame's checksum as
 * a little-endian u32. The payload is valid for the call only.
 */
typedef void (*p2p_msg_raw_fn)(struct peer *p, const uint8_t *payload, size_t len,
                               uint32_t checksum);

/** One command's entry. A command with neither handler is counted and dropped. */
struct p2p_msg_entry {
	p2p_msg_fn on_msg;        /**< the decoded message, or NULL */
	p2p_msg_raw_fn on_raw;    /**< the undecoded payload instead (on_msg unused), or NULL */
	uint8_t states;           /**< enum p2p_msg_state bits it may arrive in; else ignored */
	uint8_t limit;            /**< enum p2p_msg_limit: what a count over count_max costs */
	uint8_t count_skip;       /**< payload bytes before the count (getheaders' version: 4) */
	uint32_t count_max;       /**< Core's limit on the leading CompactSize count */
	const char *limit_reason; /**< the disconnect reason logged for it */
};

/**
 * What a whole, checksum-valid message from p means (Core's
 * ProcessMessage): an unknown command is counted and skipped (a bloom
 * filter command from an active peer disconnects it, BIP111); otherwise
 * its entry in d->msg_table is gated by the handshake, given the raw
 * payload or decoded into d->in, its count checked against the limit, and
 * its handler called. net/ has counted its bytes already. The wiring
 * registers it as the connection events' `message`. Loop thread; may
 * disconnect p.
 */
void p2p_dispatch(struct peer *p, const struct proto_frame_header *h, const uint8_t *payload);

/* ---- p2p/handshake.c ------------------------------------------------- */

/** Send our version message (outbound: at connect; inbound: after theirs). */
void handshake_send_version(struct peer *p);
/** The ping method: send a ping now to a peer past its handshake. Loop thread. */
void handshake_ping_now(struct peer *p);
/*
 * Handlers of the message table (daemon/msgtable.c), one per command; the
 * table gates them by handshake state. Loop thread.
 */
/** version: check and record the peer's version; a duplicate is ignored. */
void handshake_on_version(struct peer *p, const struct proto_msg *m);
/** verack: the handshake is done; the peer becomes active. */
void handshake_on_verack(struct peer *p, const struct proto_msg *m);
/** ping: answer with pong (BIP31 peers). */
void handshake_on_ping(struct peer *p, const struct proto_msg *m);
/** pong: record the round trip of our ping with that nonce. */
void handshake_on_pong(struct peer *p, const struct proto_msg *m);
/** wtxidrelay (BIP339): before verack only; after it disconnects. */
void handshake_on_wtxidrelay(struct peer *p, const struct proto_msg *m);
/** sendaddrv2 (BIP155): before verack only; after it disconnects. */
void handshake_on_sendaddrv2(struct peer *p, const struct proto_msg *m);
/** sendcmpct (BIP152): remember the peer's choice (sync/cmpct_hb.c pushes to announce=1). */
void handshake_on_sendcmpct(struct peer *p, const struct proto_msg *m);
/** feefilter (BIP133): the peer's minimum feerate, if in MoneyRange. */
void handshake_on_feefilter(struct peer *p, const struct proto_msg *m);
/** sendheaders (BIP130): announce blocks to this peer with headers. */
void handshake_on_sendheaders(struct peer *p, const struct proto_msg *m);
/** Ping and timeout checks for a connected peer. */
void handshake_tick(struct peer *p, uint64_t now_ms);

/* ---- p2p/inv.c ------------------------------------------------------- */

/** Known-inventory set per peer (remembers at least half of this). */
#define INV_KNOWN_MAX 8192u

/** One peer's address relay (Core's Peer::m_addr_*), inside struct p2p_peer. */
struct addr_peer {
	struct hset known;               /**< m_addr_known: addresses it has or was sent */
	struct addrman_address *to_send; /**< m_addrs_to_send (at most PROTO_MAX_ADDR) */
	uint32_t n_to_send, cap_to_send;
	double tokens;          /**< m_addr_token_bucket */
	uint64_t tokens_at_us;  /**< m_addr_token_timestamp (mockable clock, daemon_time_ms) */
	uint64_t next_send_us;  /**< m_next_addr_send (mockable clock; 0: at once) */
	uint64_t next_local_us; /**< m_next_local_addr_send (mockable clock; 0: never yet) */
	uint64_t processed;     /**< m_addr_processed */
	uint64_t rate_limited;  /**< m_addr_rate_limited */
	bool started : 1;       /**< tokens and tokens_at_us set (at the first use) */
	bool relay_enabled : 1; /**< m_addr_relay_enabled */
	bool getaddr_sent : 1;  /**< m_getaddr_sent: we asked and the answer is not in */
	bool getaddr_recvd : 1; /**< m_getaddr_recvd: we answered their getaddr */
};

/** What p2p/ keeps of one peer (p->p2p; the wiring allocates it with the peer). */
struct p2p_peer {
	struct hset *known_inv; /**< allocated on the first inv: idle peers cost nothing */
	uint32_t blocks_owed;   /**< genesis copies asked for, deferred while send-paused */
	struct addr_peer addr;  /**< address relay (p2p/addr.c, addrrelay.c) */
};
/** inv: remember, and request the transactions peerd lacks (message table). */
void inv_on_inv(struct peer *p, const struct proto_msg *m);
/** getdata: serve transactions and blocks (message table). */
void inv_on_getdata(struct peer *p, const struct proto_msg *m);
/** notfound: fall back to another announcer (message table). */
void inv_on_notfound(struct peer *p, const struct proto_msg *m);
/** mempool (BIP35): disconnects, as Core without bloom filters (message table). */
void inv_on_mempool(struct peer *p, const struct proto_msg *m);
/**
 * Hand a decoded message to its command's handler in the message table, as
 * p2p_dispatch does after decoding, without the handshake gate or limits
 * (the unit tests drive inv.c through it).
 */
void inv_on_msg(struct peer *p, const struct proto_msg *m);
/** A closing peer: the peer_gone hook, then its known inventory is freed. */
void inv_peer_gone(struct peer *p);
/** The send queue drained: serve deferred getdata blocks until paused again. Loop thread. */
void inv_getdata_resume(struct peer *p);
/** Remember that the peer has (announced, sent or was told of) this hash. */
void inv_known_add(struct peer *p, const struct proto_hash *h);
/** Whether the peer is known to have this hash. */
bool inv_known_has(const struct peer *p, const struct proto_hash *h);
/**
 * Append v to the getdata/notfound batch (d->out.inv, emptied when an
 * inv or getdata starts and by inv_batch_send). 0, or -ENOMEM.
 */
int inv_batch_add(struct daemon *d, const struct proto_inv_vec *v);
/** Send the batch to p as `cmd` (getdata or notfound) and empty it; nothing if empty. */
void inv_batch_send(struct peer *p, enum proto_cmd cmd);

/* ---- p2p/addr.c, addrrelay.c, peersdat.c: addresses ---------------- */

/** Core's MAX_ADDR_RATE_PER_SECOND: addresses a peer earns per second. */
#define ADDR_RATE_PER_SECOND 0.1
/** Core's MAX_ADDR_PROCESSING_TOKEN_BUCKET: the most a peer can save up. */
#define ADDR_TOKEN_BUCKET_MAX 1000.0
/** Core's MAX_PCT_ADDR_TO_SEND: a getaddr answer is at most this % of the addrman. */
#define ADDR_GETADDR_MAX_PCT 23u
/** Core's m_addr_known: a rolling filter of 5,000 addresses. */
#define ADDR_KNOWN_MAX 5000u

/** One cached getaddr answer (Core's CachedAddrResponse), by local socket and network. */
struct addr_cache {
	uint64_t id;        /**< keyed hash of the network and our end of the connection */
	uint64_t expire_us; /**< mockable clock (daemon_time_ms, µs) when a new answer is drawn */
	struct addrman_address *v;
	uint32_t n;
};

/** What p2p/ keeps of addresses (d->addr). Loop thread. */
struct addr_state {
	struct addr_cache *caches; /**< Core's m_addr_response_caches */
	uint32_t n_caches, cap_caches;
	uint64_t next_dump_ms; /**< when peers.dat is written next */
	bool loaded;           /**< peers.dat was read (or created) this run: dump it */
	uint8_t relay_key[16]; /**< RelayAddress's deterministic randomizer */
};

/** Set up the address state (d->addr). 0. */
int addr_init(struct daemon *d);
/** Free the address state (the getaddr caches). */
void addr_release(struct daemon *d);
/** addr and addrv2 (Core's ProcessMessage ADDR/ADDRV2; message table). */
void addr_on_addr(struct peer *p, const struct proto_msg *m);
/** getaddr: inbound peers only, once per connection, from the cache (message table). */
void addr_on_getaddr(struct peer *p, const struct proto_msg *m);
/**
 * An outbound peer's version was read (handshake.c): unless it is
 * block-relay-only, address relay starts and our getaddr goes out with
 * 1,000 more tokens (Core's VERSION handler).
 */
void addr_on_version(struct peer *p);
/** An outbound peer's version says it offers `services`: Core's SetServices on its entry. */
void addr_set_services(struct peer *p, uint64_t services);
/** Core's SetupAddressRelay: false for block-relay-only peers; else relay is on. */
bool addr_setup_relay(struct peer *p);
/** A closing peer: free its address relay state. */
void addr_peer_gone(struct peer *p);
/** Whether addresses are relayed with this peer (getpeerinfo's addr_relay_enabled). */
bool addr_relay_enabled(const struct peer *p);

/**
 * Core's CConnman::GetAddresses(max, pct, network): the addrman's GetAddr
 * (filtered; net -1 any, else a class) without banned and discouraged
 * addresses. *out is xmalloc'd (caller xfrees). Count, or <0 out of memory.
 */
long addr_get_addresses(struct daemon *d, size_t max, size_t pct, int net,
                        struct addrman_address **out);

/** Core's PushAddress: queue a for p unless known to it or not addr-compatible. */
void addrrelay_push(struct peer *p, const struct addrman_address *a);
/** Core's AddAddressKnown: p has a (it sent it to us, or we to it). */
void addrrelay_known_add(struct peer *p, const struct addrman_service *s);
/**
 * Core's RelayAddress: a fresh routable address from `from` goes to the
 * 1 or 2 other relaying peers a keyed hash of it and the day picks.
 */
void addrrelay_relay(struct daemon *d, const struct peer *from, const struct addrman_address *a,
                     bool reachable);
/**
 * Core's MaybeSendAddr, from the peer's tick: our own address about once
 * a day, then, on a Poisson timer averaging 30 s, the queue as addr or
 * addrv2, without what the peer already knows. now_ms is the mockable
 * clock's (daemon_time_ms), as Core's GetTime in SendMessages.
 */
void addrrelay_tick(struct peer *p, uint64_t now_ms);

/** Read <netdir>/peers.dat into d->addrman at start, as Core's LoadAddrman. 0 or <0 (logged). */
int peersdat_load(struct daemon *d);
/** Write <netdir>/peers.dat now, atomically (Core's DumpPeerAddresses). 0 or <0 (logged). */
int peersdat_dump(struct daemon *d);
/** Every 15 minutes (DUMP_PEERS_INTERVAL), from the slow tick: dump. */
void peersdat_tick(struct daemon *d, uint64_t now_ms);
/** At shutdown: dump, if this run loaded the file. */
void peersdat_shutdown(struct daemon *d);

#endif
