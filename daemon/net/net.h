/**
 * daemon/net/net.h: the net room: addresses, peers and their connections
 * (peer.c), the connection events (what the wiring registers for net/ to
 * call up through), v1 framing on the rx buffer (transport.c), the receive
 * budget (recvbudget.c), bans (ban.c), listeners and outbound targets
 * (net.c).
 *
 * The lowest room: it may use base/, proto/, conf/, libuv and the shared
 * services of daemon/daemon.h, and calls up only through what the wiring
 * registered: the connection events (struct net_events), a whole message
 * being one of them.
 */
#ifndef PEERD_DAEMON_NET_NET_H
#define PEERD_DAEMON_NET_NET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "addrman/addrman.h"
#include "base/hset.h"
#include "daemon/daemon.h"

/** Outbound TCP connect gives up after this (DEFAULT_CONNECT_TIMEOUT). */
#define PEER_CONNECT_TIMEOUT_MS 5000u
/** Outbound destinations (connect=, addnode=, addnode RPC) at most. */
#define NET_MAX_TARGETS 64u
/** Outbound connections at once (Core's MAX_ADDNODE_CONNECTIONS). */
#define NET_MAX_OUTBOUND 8u
/** Automatic full-relay outbound peers (Core's MAX_OUTBOUND_FULL_RELAY_CONNECTIONS). */
#define NET_MAX_OUTBOUND_FULL 8u
/** Automatic block-relay-only peers (Core's MAX_BLOCK_RELAY_ONLY_CONNECTIONS). */
#define NET_MAX_BLOCK_RELAY 2u
/** Feelers at once (Core's MAX_FEELER_CONNECTIONS). */
#define NET_MAX_FEELER 1u
/** First retry delay after a failed or lost outbound connection. */
#define NET_BACKOFF_INITIAL_MS 1000u
/** Retry delays double up to this. */
#define NET_BACKOFF_MAX_MS 60000u
/** listen() backlog (the kernel caps it at net.core.somaxconn, as Core's SOMAXCONN). */
#define NET_LISTEN_BACKLOG 4096
/** Listeners at most (bind= entries, or 0.0.0.0 and :: by default). */
#define NET_MAX_LISTENERS (CONF_MAX_LIST + 2)
/**
 * Most inbound connections accepted in one turn of the loop, over all
 * listeners; the rest wait for the next turn. libuv accepts for as long as
 * connections are pending, so a flood of reconnecting peers (every one
 * choosing whom to evict and starting a BIP324 handshake) would hold the
 * loop from every established peer (Core accepts one per listening socket
 * per SocketHandler pass).
 */
#define NET_ACCEPTS_PER_TURN 8u

/** Text form of an address: "[v6]:port" at most. */
#define NET_ADDRSTRLEN (INET6_ADDRSTRLEN + 8)

/* ---- net/peer.c, net/net.c: addresses ------------------------------ */

/** A socket address of either family. */
union net_addr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/** "1.2.3.4:8333" or "[::1]:8333" into out (NET_ADDRSTRLEN bytes). */
void net_addr_format(const union net_addr *a, char *out);
/** The IP only, no port ("1.2.3.4", "::1"). */
void net_addr_format_ip(const union net_addr *a, char *out);
/** The address as 16 bytes, IPv4 mapped into ::ffff:0:0/96. */
void net_addr_ip16(const union net_addr *a, uint8_t ip[16]);
/** Whether a 16-byte address is IPv4-mapped (::ffff:a.b.c.d). Any thread. */
bool net_ip16_is_v4(const uint8_t ip[16]);
/** Port in host order. */
uint16_t net_addr_port(const union net_addr *a);
/** Loopback (127/8 or ::1, also IPv4-mapped). */
bool net_addr_is_local(const union net_addr *a);
/**
 * Parse "host", "host:port", "[v6]" or "[v6]:port" where host is an IP
 * literal; default_port when none is given. 0, or -EINVAL.
 */
int net_addr_parse(const char *s, uint16_t default_port, union net_addr *out);

/* ---- net/peer.c: peers --------------------------------------------- */

/** Core's ConnectionType (net.h), named as getpeerinfo's connection_type. */
enum peer_conn_type {
	PEER_CONN_INBOUND = 0,   /**< "inbound": they connected to us */
	PEER_CONN_MANUAL,        /**< "manual": connect=, addnode= or addnode RPC */
	PEER_CONN_OUTBOUND_FULL, /**< "outbound-full-relay": automatic, blocks, txs, addrs */
	PEER_CONN_BLOCK_RELAY,   /**< "block-relay-only": automatic, blocks only */
	PEER_CONN_FEELER,        /**< "feeler": is the address alive? then disconnect */
	PEER_CONN_ADDR_FETCH,    /**< "addr-fetch": getaddr, then disconnect (seeds) */
};

enum peer_state {
	PEER_CONNECTING = 0, /**< outbound TCP connect in progress */
	PEER_HANDSHAKE,      /**< connected; version/verack not both done */
	PEER_ACTIVE,         /**< verack received: "successfully connected" */
	PEER_CLOSING,        /**< uv_close called; freed in the close callback */
};

struct net_target;
struct net_socks5;

/** Receive buffer; see the glossary. */
struct peer_rx {
	uint8_t *buf;   /**< NULL while idle */
	uint32_t cap;   /**< PROTO_SCRIPT_BUF_SIZE for a free-list buffer */
	uint32_t start; /**< first unprocessed byte */
	uint32_t end;   /**< one past the last received byte */
	bool pooled;    /**< buf came from the script free list */
	/* the receive budget (net/recvbudget.c) */
	uint32_t granted;    /**< bytes of maxrecvmemory this buffer holds, 0 for none */
	uint32_t want;       /**< while rx_wait: the whole message's size */
	uint64_t wait_ms;    /**< loop time the wait began */
	uint64_t grant_ms;   /**< loop time of the grant */
	uint64_t grant_recv; /**< the peer's bytes_recv at the grant */
};

/** Per-command byte counters, as Core's bytessent_per_msg ([0]: unknown). */
struct peer_msgbytes {
	uint64_t sent[PROTO_CMD__COUNT];
	uint64_t recv[PROTO_CMD__COUNT];
};

struct peer {
	uv_tcp_t tcp; /**< tcp.data points back here */
	struct daemon *d;
	uint64_t id;
	struct net_target *target; /**< outbound: the destination (NULL once forgotten) */
	union net_addr addr;       /**< remote */
	union net_addr local;      /**< addrbind */
	uint64_t keyed_netgroup;   /**< inbound: net_keyed_netgroup of addr (eviction) */
	enum peer_conn_type conn_type;
	enum peer_state state;
	/* flags */
	bool inbound : 1;
	bool counted : 1; /**< included in d->n_inbound/n_outbound */
	bool got_version : 1;
	bool sent_version : 1;
	bool wtxidrelay : 1;       /**< peer sent wtxidrelay before verack */
	bool sendaddrv2 : 1;       /**< peer sent sendaddrv2 before verack */
	bool sendheaders : 1;      /**< peer asked for headers announcements */
	bool relaytxes : 1;        /**< version's relay flag */
	bool getaddr_answered : 1; /**< Core answers one getaddr per connection */
	bool send_paused : 1;
	bool recv_paused : 1;
	bool reading : 1;        /**< uv_read_start active */
	bool handshake_done : 1; /**< reached PEER_ACTIVE at least once */
	bool cmpct_high_bandwidth : 1;
	bool rx_busy : 1;      /**< a message from the rx buffer is being handled */
	bool rx_wait : 1;      /**< not reading: its next message waits for maxrecvmemory */
	bool prefer_evict : 1; /**< discouraged when it connected: evicted first (m_prefer_evict) */
	bool relevant_services : 1; /**< its version's services are all we want (p2p/handshake.c;
	                               Core's m_has_all_wanted_services) */
	bool socks_busy : 1;    /**< dialling through a SOCKS5 proxy: the handshake is not over */
	bool proxied : 1;       /**< reached through a SOCKS5 proxy (addr: the destination's IP, or
	                           none for a name) */
	bool count_failure : 1; /**< a failed connect counts against its addrman entry */
	bool v2_want : 1;       /**< outbound: dial with BIP324 v2 (manual, addconnection's flag) */
	bool v2_off : 1;        /**< outbound: v1 only (the reconnect after a failed v2 attempt) */
	/* receive side */
	struct peer_rx rx;
	/* send side */
	uint64_t sendq_bytes; /**< queued in libuv, not yet written */
	uint32_t sendq_reqs;
	/* accounting */
	uint64_t bytes_sent, bytes_recv;
	struct peer_msgbytes *msgbytes; /**< allocated with the peer, after it */
	int64_t conntime;               /**< unix seconds */
	int64_t lastsend;               /**< unix seconds, 0 = never */
	int64_t lastrecv;
	int64_t last_block_time; /**< unix seconds of its last new block (Core's m_last_block_time),
	                            0 */
	int64_t last_tx_time;    /**< unix seconds of its last tx accepted (m_last_tx_time), 0 */
	uint64_t connect_ms;     /**< loop time of connect */
	uint64_t lastsend_ms;    /**< loop time, 0 = never */
	uint64_t lastrecv_ms;
	/* from the peer's version */
	int32_t version;
	int32_t start_height;
	uint64_t services;
	uint64_t dial_services; /**< outbound: the services its address had when dialled (addrman's
	                           or an anchor's; 0 for a named destination): anchors.dat's */
	char *subver;           /**< sanitized user agent, xmalloc'd; NULL before version */
	uint64_t local_nonce;   /**< our version nonce (self-connection detection) */
	int64_t feefilter;      /**< sat/kvB from the peer's feefilter */
	int64_t sent_feefilter; /**< sat/kvB of the last feefilter sent, 0 = none */
	uint64_t cmpct_version;
	/* ping */
	uint64_t ping_nonce;    /**< outstanding ping, 0 = none */
	uint64_t ping_start_us; /**< when it was sent (uv_hrtime/1000) */
	int64_t ping_last_ms;   /**< mockable ms of the last ping sent (Core's m_ping_start) */
	int64_t ping_us;        /**< last round trip, -1 = none yet */
	int64_t minping_us;     /**< smallest round trip, -1 = none yet */
	/* the rooms' own state of this peer: each room defines and keeps its
	 * part; the wiring allocates them together (net_events.created) */
	struct p2p_peer *p2p;         /**< its known inventory (p2p/) */
	struct sync_peer *sync;       /**< headers sync, block download and serving (sync/) */
	struct txrequest_peer *txreq; /**< its transaction announcements and requests (txrelay/) */
	struct peer_parts *parts;     /**< the one allocation the pointers above point into */
	/* misbehaviour */
	uint32_t decode_errors;
	/* transaction relay (txrelay/announce.c): NULL until the handshake is done */
	struct relay_peer *txr;
	/* networks and proxies (net/reach.c, net/socks5.c) */
	struct net_socks5 *socks; /**< the SOCKS5 handshake under way, NULL when none */
	uint8_t proxy_net;        /**< proxied: the destination's enum addrman_net (0 for a name) */
	/** What the peer's version said our address is (Core's addrLocal); invalid when none. */
	struct addrman_service addr_local;
	/** The BIP324 v2 transport (net/v2peer.c), NULL for a v1-only connection. */
	struct net_v2_peer *v2;
};

/**
 * Create a peer for a socket about to be accepted or connected: allocates,
 * runs uv_tcp_init, assigns the next id and adds it to d->peers. NULL when
 * out of memory (nothing left behind). Loop thread.
 */
struct peer *peer_new(struct daemon *d, bool inbound);
/**
 * The socket is connected: read addresses, start reading, count the peer;
 * an outbound peer sends its version. Loop thread.
 */
void peer_start(struct peer *p);
/**
 * Close the connection (idempotent). `why` is logged at debug level.
 * The peer stays in memory until its close callback; handlers check
 * p->state == PEER_CLOSING after anything that may disconnect.
 */
void peer_disconnect(struct peer *p, const char *why);
/** Encode d->out (m->cmd selects the message) as a frame and queue it. 0 or a proto_err. */
int peer_send_msg(struct peer *p, const struct proto_msg *m);
/**
 * Queue one complete frame (header included) for `cmd`, copying it unless
 * the socket takes it at once (uv_try_write): steady-state sends allocate
 * nothing. Updates byte counters and flow control.
 */
void peer_send_frame(struct peer *p, enum proto_cmd cmd, const uint8_t *frame, size_t len);
/**
 * Queue len bytes as they are (v2's packets, encrypted by the caller),
 * counted as `cmd` (PROTO_CMD__COUNT: bytes only), copied only when the
 * socket does not take them at once. Loop thread.
 */
void peer_send_copy(struct peer *p, enum proto_cmd cmd, const uint8_t *frame, size_t len);
/**
 * Send a message whose payload (xmalloc'd) the caller gives away, framed
 * without a copy: `prefix` (magic and command, 16 bytes that must outlive
 * the write: a daemon field), the length and `csum` (the payload's frame
 * checksum, known by the caller) in an 8-byte binary free-list buffer,
 * then the payload where it lies, as one write of three buffers. The
 * payload is freed once written (or at once on error). Loop thread.
 */
void peer_send_owned(struct peer *p, enum proto_cmd cmd, const uint8_t prefix[16], uint8_t *payload,
                     size_t len, uint32_t csum);
/** Resume processing and reading when the send queue drained (write callback). */
void peer_flow_update(struct peer *p);
/** Process messages that waited in the rx buffer and restart reading if it was stopped. */
void peer_resume(struct peer *p);
/** Housekeeping: connect/handshake/inactivity timeouts and pings. */
void peer_tick(struct peer *p, uint64_t now_ms);
/** Peer by id, or NULL (binary search; d->peers is sorted by id). */
struct peer *peer_by_id(struct daemon *d, uint64_t id);
/** getpeerinfo "connection_type". */
const char *peer_conn_type_name(enum peer_conn_type t);
/**
 * Core's RejectIncomingTxs: under -blocksonly, and from a block-relay-only
 * or feeler connection, no transaction is wanted: one sent or announced
 * breaks the protocol, and no feefilter is sent.
 */
static inline bool peer_rejects_txs(const struct peer *p)
{
	return p->d->conf->blocksonly || p->conn_type == PEER_CONN_BLOCK_RELAY ||
	       p->conn_type == PEER_CONN_FEELER;
}

/* ---- connection events: what net/ tells the rooms above it ---------- */

/*
 * net/ tells the rooms above it (p2p/, sync/, sd_notify) about a
 * connection only through these callbacks, as Core's net.cpp tells
 * PeerManager through NetEventsInterface (InitializeNode, FinalizeNode,
 * SendMessages): the wiring (daemon/netevents.c) fills them, calling each
 * room in its order, and daemon_init registers the table in struct
 * daemon's net_events. This is the whole boundary: net/ names no function
 * of a higher room, and knows no message table (what a message means is
 * p2p/'s, reached through `message`).
 * Every callback is set (net/ checks none for NULL); all run on the loop
 * thread and may disconnect the peer unless said otherwise.
 */
struct net_events {
	/**
	 * p was just made (peer_new), before any handle: the rooms' per-peer
	 * state is allocated and set up (p->p2p, p->sync, p->txreq). 0, or
	 * -ENOMEM: then peer_new gives up (destroyed is called). Must not
	 * disconnect or send.
	 */
	int (*created)(struct peer *p);
	/**
	 * p's memory goes (after closed, or when peer_new gives up): the
	 * rooms' per-peer state is freed. Every peer created gets it once.
	 */
	void (*destroyed)(struct peer *p);
	/**
	 * p is connected, counted and reading (peer_start): outbound, it
	 * sends its version. Not called for a connection that never came up.
	 */
	void (*opened)(struct peer *p);
	/**
	 * p is disconnecting (peer_disconnect, once a peer): it is no longer
	 * counted and its handle is closing. Also for a dial that never
	 * connected (no opened before it), and while the daemon shuts down.
	 */
	void (*disconnected)(struct peer *p);
	/**
	 * p's handle is closed and p is freed right after (its close
	 * callback): each room frees its per-peer state (Core's
	 * FinalizeNode). Every peer made by peer_new gets it, opened or not.
	 * p must not be disconnected from here (it already is).
	 */
	void (*closed)(struct peer *p);
	/**
	 * p's send queue drained to maxsendbuffer and p is no longer
	 * send-paused: send what waited for room (deferred getdata, queued
	 * blocks). It may pause p again; net/ resumes p's messages after it
	 * unless p is paused, busy or closing.
	 */
	void (*drained)(struct peer *p);
	/**
	 * Whether replies are still owed to p (blocks being read for its
	 * getdata): like send_paused, its next message waits and reading
	 * stops once the rx buffer is full. Must not change anything.
	 */
	bool (*busy)(const struct peer *p);
	/** Every tick for a peer past connecting and not closing: timeouts, pings. */
	void (*tick)(struct peer *p, uint64_t now_ms);
	/**
	 * One whole message from p, its checksum verified and its bytes
	 * already counted by command (stats_recv, p->msgbytes): what it
	 * means, and what to do with it (Core's ProcessMessage). h is its
	 * parsed header (h->cmd may be PROTO_CMD_UNKNOWN: a well-formed
	 * command peerd does not know); payload holds h->length bytes, valid
	 * for the call only. Not called for a bad checksum or an invalid
	 * command (framing errors, net/'s). p's rx buffer stays while this
	 * runs, even if p is disconnected.
	 */
	void (*message)(struct peer *p, const struct proto_frame_header *h, const uint8_t *payload);
};

/* ---- net/transport.c: v1 framing on the rx buffer -------------------- */

/** libuv alloc callback for peers. */
void transport_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
/** libuv read callback for peers. */
void transport_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
/** Process every complete message in the rx buffer (stops when paused or closing). */
void transport_process(struct peer *p);
/** Give the rx buffer back (free list or heap). */
void transport_release(struct peer *p);
/**
 * Move the start of a message of `total` bytes into an exactly-sized heap
 * buffer (its budget already granted). 0, or -1 when out of memory.
 */
int transport_grow(struct peer *p, uint32_t total);

/* ---- net/v2peer.c: the BIP324 v2 transport on a peer ------------------ */

/**
 * The connection is up (peer_start, before reading): with -v2transport,
 * an inbound peer may speak v1 or v2 (told by its first bytes); an
 * outbound one speaks v2 when dialled so (v2_want, or its address's
 * services have NODE_P2P_V2) and not v2_off: our key and garbage go out.
 */
void net_v2_start(struct peer *p);
/** Free p's v2 state (its close). */
void net_v2_free(struct peer *p);
/** Whether p's messages go through v2 (detecting included: they wait). */
bool net_v2_active(const struct peer *p);
/**
 * One step of v2 on p's rx buffer (transport_process's loop): true to go
 * on, false to stop (more bytes needed, paused, or disconnected).
 */
bool net_v2_process(struct peer *p);
/** Send one message over v2 (command: 12 bytes NUL-padded); queued until the handshake is done. */
void net_v2_send(struct peer *p, enum proto_cmd cmd, const uint8_t command[12],
                 const uint8_t *payload, size_t len);
/**
 * net_v2_send for a payload (xmalloc'd) the caller gives away: once the
 * handshake is done it is encrypted in place and written between the
 * packet's head and tag (peer_send_pieces), with no copy and no second
 * buffer; before, it waits as net_v2_send's do. Freed either way.
 */
void net_v2_send_owned(struct peer *p, enum proto_cmd cmd, const uint8_t command[12],
                       uint8_t *payload, size_t len);
/** getpeerinfo's transport_protocol_type: "v1", "v2" or "detecting". */
const char *net_v2_transport_name(const struct peer *p);
/** getpeerinfo's session_id: 64 hex digits, or "" (out: 65 bytes). */
void net_v2_session_id_hex(const struct peer *p, char out[65]);
/**
 * Core's ShouldReconnectV1: p, closing, was a v2 attempt closed before
 * anything came back: dial it again once with v1. True when done.
 */
bool net_v2_reconnect_v1(struct peer *p);
/** The most bytes of peer_send_pieces's head or tail. */
#define PEER_SEND_PIECE_MAX 32
/**
 * Queue head (hlen bytes), payload (owned, xmalloc'd; freed once written)
 * and tail (tlen bytes) as one write, counted as `cmd` (PROTO_CMD__COUNT: only
 * as bytes, v2's handshake's). head and tail (at most PEER_SEND_PIECE_MAX
 * each, either may be NULL with length 0) are the caller's: copied only when the
 * socket does not take everything at once. Loop thread.
 */
void peer_send_pieces(struct peer *p, enum proto_cmd cmd, const uint8_t *head, size_t hlen,
                      uint8_t *payload, size_t len, const uint8_t *tail, size_t tlen);

/* ---- net/recvbudget.c: maxrecvmemory over all peers' rx buffers ------ */

/** Default budget per connection allowed (maxconnections x this). */
#define RECV_BUDGET_PER_PEER (64u * 1024u)
/** Default budget at least: eight 4 MB messages at once. */
#define RECV_BUDGET_MIN (32u << 20)
/** A holder with no byte for this long, while others wait, is disconnected. */
#define RECV_STALL_MS 2000u
/** ...as is one held that long that averages less than this (bytes/s). */
#define RECV_MIN_RATE_BPS (32u * 1024u)

/** The receive budget; see net/recvbudget.c. Loop thread. */
struct recvbudget {
	uint64_t limit;     /**< maxrecvmemory in bytes */
	uint64_t held;      /**< granted to large rx buffers now */
	uint64_t held_max;  /**< high-water mark of held */
	uint32_t waiting;   /**< peers not reading until their message fits */
	uint64_t pauses;    /**< times a peer began waiting */
	uint64_t grants;    /**< large buffers granted */
	uint64_t evictions; /**< stalling holders disconnected for waiters */
	uint64_t trims;     /**< malloc_trim calls */
	uint64_t last_grant_ms;
	uint64_t freed_since_trim;
	bool pumping, repump;
};

/** The budget from maxrecvmemory (or its default scaled to maxconnections). */
void recvbudget_init(struct daemon *d, const struct peerd_conf *c);
/** Pin glibc's mmap threshold and cap its arenas (peerd's main, before threads). */
void recvbudget_malloc_setup(void);
/**
 * Reserve `total` bytes for p's next message. True: granted (grow the
 * buffer). False: p stopped reading and waits; it is granted (buffer grown,
 * reading restarted) by a later release or tick.
 */
bool recvbudget_acquire(struct peer *p, uint32_t total);
/** p's buffer goes (or p closes): give its grant back, serve waiters. */
void recvbudget_release(struct peer *p);
/** Serve waiters, evicting stalling holders for them. Reentrant-safe. */
void recvbudget_pump(struct daemon *d);
/** Every tick: serve waiters; malloc_trim once a flood is over. */
void recvbudget_tick(struct daemon *d, uint64_t now_ms);
/** Count memory freed in bulk (closed peers) toward the next trim. */
void recvbudget_note_freed(struct daemon *d, uint64_t bytes);

/* ---- net/ban.c ------------------------------------------------------- */

/** Discouraged addresses remembered (Core's rolling filter size; at least half kept). */
#define BAN_DISCOURAGE_MAX 50000u
/**
 * setban entries at most (about 40 MB of entries and index). Core keeps
 * every entry; a banlist.json with more is moved aside whole and a
 * warning names it, so no entry is ever silently dropped.
 */
#define BAN_MAX_ENTRIES 1000000u

/** One setban entry: a subnet of IPv6 space (IPv4 as ::ffff:0:0/96). */
struct ban_entry {
	uint8_t net[16];
	uint8_t prefix;  /**< 0-128 */
	int64_t created; /**< unix seconds */
	int64_t until;   /**< unix seconds */
};

struct ban_state {
	struct ban_entry *v;
	uint32_t n, cap;
	struct hset discouraged; /**< fingerprints of discouraged IPs */
	char *path;              /**< netdir/banlist.json */
	bool dirty;
	bool nosave;             /**< the file could not be read nor moved aside: never overwrite */
	struct hmap index;       /**< fingerprint of (net, prefix) -> slot in v */
	uint32_t by_prefix[129]; /**< entries per prefix length: the lengths ban_check tries */
	uint64_t files_moved; /**< banlist.json files moved aside (unparsable or over the limit) */
	uint64_t gen;         /**< bumped at each change: what a write covers (net/ban_writer.c) */
	struct ban_writer *writer; /**< banlist.json's writer thread; NULL until first used */
	struct ban_wait *waits;    /**< ban_wait_written's, oldest first */
};

/** A wait for banlist.json to hold the bans (ban_wait_written); the caller's memory. */
struct ban_wait {
	struct ban_wait *next; /**< on ban_state.waits */
	uint64_t gen;          /**< the ban_state.gen the file must hold */
	/** Loop: the file holds it, or its write failed (logged), or bans are not saved. */
	void (*done)(struct daemon *d, struct ban_wait *w);
};

/** Whether an inbound connection from this address is refused. */
enum ban_verdict {
	BAN_OK = 0,
	BAN_DISCOURAGED,
	BAN_BANNED,
};

/** Load netdir/banlist.json (missing is fine; unreadable or malformed: logged, ignored). */
int ban_init(struct daemon *d);
/** Save if changed, free. */
void ban_release(struct daemon *d);
/** Write banlist.json now (atomically: tmp file + rename). 0 or -errno. */
int ban_save(struct daemon *d);
/** What an inbound connection from `a` gets: banned, discouraged or fine. */
enum ban_verdict ban_check(struct daemon *d, const union net_addr *a);
/**
 * Misbehaviour as Core 29: disconnect, and discourage the address unless
 * the peer is manual or local (those are only disconnected).
 */
void ban_misbehaving(struct peer *p, const char *why);
/** Drop expired bans (slow tick). */
void ban_sweep(struct daemon *d, int64_t now);
/** Parse "1.2.3.4", "1.2.3.0/24", "::1", "2001:db8::/32" or "1.2.3.4/255.255.255.0". 0 or -EINVAL.
 */
int ban_parse_subnet(const char *s, uint8_t net[16], uint8_t *prefix);
/** Format an entry's subnet as Core does ("1.2.3.4/32", "2001:db8::/32"). */
void ban_format_subnet(const uint8_t net[16], uint8_t prefix, char *out, size_t outlen);
/** Add a ban; disconnects matching peers. 0, or -EEXIST when already banned, -ENOMEM. */
int ban_add(struct daemon *d, const uint8_t net[16], uint8_t prefix, int64_t until);
/** Remove; 0 or -ENOENT. */
int ban_remove(struct daemon *d, const uint8_t net[16], uint8_t prefix);
/** clearbanned: forget every ban and every discouraged address; saves. */
void ban_clear(struct daemon *d);
/** Loop thread: w->done runs once banlist.json holds the bans as they are now (at once, or
 * after ban_writer.c's write; setban/clearbanned reply then, as Core's after DumpBanlist). */
void ban_wait_written(struct daemon *d, struct ban_wait *w);

/* ---- net/eviction.c: which inbound peer makes room ------------------- */

/** The network a peer came through, as Core's Network (GetNetClass) for eviction. */
enum net_network {
	NET_NETWORK_UNROUTABLE = 0, /**< loopback and other addresses that are not routable */
	NET_NETWORK_IPV4,
	NET_NETWORK_IPV6,
	NET_NETWORK_ONION,
	NET_NETWORK_I2P,
	NET_NETWORK_CJDNS,
	NET_NETWORK_INTERNAL,
	NET_NETWORK__COUNT
};

/** What eviction knows of a connection (Core's NodeEvictionCandidate). */
struct net_evict_candidate {
	uint64_t id;
	int64_t connected;       /**< unix seconds it connected (m_connected) */
	int64_t min_ping_us;     /**< its fastest ping, INT64_MAX when none yet */
	int64_t last_block_time; /**< unix seconds of its last novel block, 0 never */
	int64_t last_tx_time;    /**< unix seconds of its last transaction accepted, 0 never */
	uint64_t keyed_netgroup; /**< salted hash of its network group (net_keyed_netgroup) */
	enum net_network network;
	enum peer_conn_type conn_type; /**< only inbound peers are ever evicted */
	bool relevant_services;        /**< has the services we want (fRelevantServices) */
	bool relay_txs;                /**< relays transactions (m_relay_txs) */
	bool bloom_filter;             /**< loaded a BIP37 filter (peerd: never) */
	bool prefer_evict;             /**< discouraged when it connected */
	bool is_local;                 /**< loopback (Core's IsLocal) */
	bool noban;                    /**< noban permission: never evicted (peerd: none) */
};

/* ---- net/netgroup.c: networks and network groups --------------------- */

/** Bytes of a network group at most (net_addr_group). */
#define NET_GROUP_MAX 17

/** The network an address is on (Core's GetNetClass): unroutable, IPv4 or IPv6. */
enum net_network net_addr_network(const union net_addr *a);
/**
 * Its network group, as Core's GetGroup without asmap: the network, then
 * the /16 of IPv4 (also the IPv4 inside 6to4, Teredo, ...), the /32 of
 * IPv6 (/36 for he.net); one group for all unroutable addresses. The
 * number of bytes written to out.
 */
size_t net_addr_group(const union net_addr *a, uint8_t out[NET_GROUP_MAX]);
/** The group's hash keyed with the daemon's salt (Core's nKeyedNetGroup). */
uint64_t net_keyed_netgroup(const struct daemon *d, const union net_addr *a);

/**
 * Core's SelectNodeToEvict: the peer to disconnect so that a new inbound
 * connection fits. Protects (in this order) noban and non-inbound peers,
 * 4 by keyed network group, 8 by lowest ping, 4 by latest novel
 * transaction, up to 8 block-relay-only by latest novel block, 4 by
 * latest novel block, then half the rest by uptime with
 * net_evict_protect_by_ratio; among the rest prefers discouraged peers,
 * then takes the youngest of the network group with the most. True and
 * *id when one is chosen; false when all are protected. c[0..n) is
 * scratch: reordered and overwritten. Pure; any thread.
 */
bool net_evict_select(struct net_evict_candidate *c, size_t n, uint64_t *id);
/**
 * Core's ProtectEvictionCandidatesByRatio: removes from c[0..n) the half
 * connected longest, up to half of that half kept for onion, I2P, CJDNS
 * and localhost peers (fewest first). Returns the count left, whose
 * candidates are c[0..count), youngest first.
 */
size_t net_evict_protect_by_ratio(struct net_evict_candidate *c, size_t n);

/* ---- net/reach.c, net/local.c, net/socks5.c: networks and proxies ---- */

/*
 * Core 29's g_reachable_nets, proxies (netbase's SetProxy/SetNameProxy) and
 * mapLocalHost, read from -onlynet, -cjdnsreachable, -proxy, -onion,
 * -proxyrandomize, -externalip, -discover and -listen by net_reach_init
 * (Core's AppInitMain step 6) and kept in d->net->reach. Loop thread.
 */

/** A local address's score (Core's LOCAL_*): the higher, the surer. */
enum net_local_score {
	NET_LOCAL_NONE = 0, /**< unknown */
	NET_LOCAL_IF,       /**< an address of a local interface (-discover) */
	NET_LOCAL_BIND,     /**< an address bound to explicitly (-bind) */
	NET_LOCAL_MAPPED,   /**< reported by a port mapper (peerd has none) */
	NET_LOCAL_MANUAL,   /**< -externalip */
};

/** Local addresses kept at most (Core's map has no limit; real hosts have a few). */
#define NET_MAX_LOCAL 64
/** A proxy's port when -proxy/-onion names none (Core's 9050, Tor's). */
#define NET_PROXY_DEFAULT_PORT 9050
/** Each SOCKS5 reply must come within this (Core's g_socks5_recv_timeout). */
#define NET_SOCKS5_TIMEOUT_MS 20000u

/** A SOCKS5 proxy (Core's Proxy). */
struct net_proxy {
	union net_addr addr; /**< sa_family 0: none */
	bool randomize;      /**< fresh credentials per connection (m_tor_stream_isolation) */
};

/** One of our own addresses (Core's mapLocalHost entry). */
struct net_local {
	struct addrman_service addr; /**< with the port to announce */
	int score;                   /**< enum net_local_score, plus one per confirmation */
};

/** The networks, proxies and local addresses (d->net->reach). */
struct net_reach {
	uint32_t reachable;                         /**< bit 1 << enum addrman_net */
	struct net_proxy proxy[ADDRMAN_NET__COUNT]; /**< per network (GetProxy) */
	struct net_proxy name_proxy;                /**< host names (-proxy; GetNameProxy) */
	bool listen;                                /**< Core's fListen */
	bool discover;                              /**< Core's fDiscover */
	uint16_t listen_port;                       /**< Core's GetListenPort */
	struct net_local local[NET_MAX_LOCAL];      /**< sorted as Core's map (network, bytes) */
	uint32_t n_local;
	char cred_prefix[24];  /**< 16 random hex digits and '-' (Core's stream isolation prefix) */
	uint64_t cred_counter; /**< credentials handed out so far */
};

/**
 * What the default options give, before net_reach_init: IPv4 and IPv6
 * reachable, no proxy, no local address (daemon_init calls it, so the
 * test fixtures have it too).
 */
void net_reach_defaults(struct daemon *d);
/**
 * Read the network options (Core's AppInitMain step 6 and Discover): the
 * reachable networks, the proxies, -externalip, the -bind addresses and,
 * with -discover, the interfaces' addresses. 0, or -EINVAL after logging
 * Core's message ("Unknown network specified in -onlynet: 'x'", "Invalid
 * -proxy address or hostname: 'x'", ...). Main thread, before the loop.
 */
int net_reach_init(struct daemon *d);
/** Whether automatic connections may go to network `addrman_net` (Core's g_reachable_nets). */
bool net_is_reachable(const struct daemon *d, int addrman_net);
/** The reachable networks, bit 1 << enum addrman_net each (addrman_select's `nets`). */
uint32_t net_reachable_mask(const struct daemon *d);
/** The proxy for a network, or NULL when it has none (Core's GetProxy). */
const struct net_proxy *net_proxy_for(const struct daemon *d, int addrman_net);
/**
 * Core's AddLocal: remember one of our addresses with a score; false when
 * it is unroutable, on an unreachable network, or below NET_LOCAL_MANUAL
 * without -discover.
 */
bool net_add_local(struct daemon *d, const struct addrman_service *s, int score);
/** Core's SeenLocal: a peer saw us at s; one more point if it is ours. */
bool net_seen_local(struct daemon *d, const struct addrman_service *s);
/** Core's IsLocal: whether s (address and port) is one of ours. */
bool net_is_local_service(const struct daemon *d, const struct addrman_service *s);
/**
 * Core's GetLocalAddrForPeer: the address to announce to p, the best of
 * ours for its network or, with -discover, now and then the one p says it
 * sees. False when not listening or nothing routable fits. *out gets the
 * service, time 0 and services 0 (the caller fills them). Loop thread.
 */
bool net_local_addr_for_peer(struct daemon *d, const struct peer *p, struct addrman_address *out);
/** The network p came through (Core's ConnectedThroughNetwork), an enum addrman_net. */
int net_peer_network(const struct peer *p);
/** A socket address as addrman's service (IPv4-mapped becomes IPv4). */
struct addrman_service net_addr_service(const union net_addr *a);

/**
 * How an outbound destination "host[:port]" is dialled (Core's ConnectNode
 * with GetProxy and GetNameProxy): 0 directly (the caller goes on as
 * before); 1 through the proxy *via, the SOCKS5 request (dest, port)
 * stored in *out for net_socks5_attach; -1 when it cannot be reached at
 * all (an onion name without an onion proxy, I2P): logged.
 */
int net_socks5_route(struct daemon *d, const char *name, union net_addr *via,
                     struct net_socks5 **out);
/**
 * net_socks5_route for an address manager's entry (an automatic
 * connection): its text as Core's ToStringAddrPort, so a Tor v3 or I2P
 * address is routed by name.
 */
int net_socks5_route_service(struct daemon *d, const struct addrman_service *s, union net_addr *via,
                             struct net_socks5 **out);
/** Give p the SOCKS5 request made by net_socks5_route (p frees it); s NULL: none; p NULL: s is
 * freed. */
void net_socks5_attach(struct peer *p, struct net_socks5 *s);
/** The TCP connection to p's proxy is up: run the SOCKS5 handshake, then peer_start. */
void net_socks5_start(struct peer *p);
/** Free p's SOCKS5 state, if any (its close). */
void net_socks5_free(struct peer *p);

/* ---- net/net.c ------------------------------------------------------- */

/** An outbound destination; see the glossary. */
struct net_target {
	struct daemon *d;
	char *name;               /**< as given: "host:port" */
	bool onetry;              /**< one attempt, then forgotten */
	bool from_connect;        /**< connect= (shown as such in logs) */
	bool removed;             /**< addnode remove while a callback is pending */
	struct peer *peer;        /**< current connection, or NULL */
	struct net_resolve *gai;  /**< resolution in flight (net/resolve.c), or NULL */
	enum peer_conn_type type; /**< MANUAL; a onetry addr-fetch, feeler, ... (addconnection) */
	bool v2;                  /**< dial with BIP324 v2 (-v2transport, or addnode's argument) */
	bool v1_once;             /**< the next attempt with v1: the last v2 one was closed */
	uint64_t next_attempt_ms;
	uint32_t backoff_ms;
	uint32_t attempts;
};

/** The connection manager's own state (d->net): limits, listeners, outbound targets. */
struct net_state {
	uint64_t max_sendq; /**< maxsendbuffer in bytes */
	uint64_t max_recvq; /**< maxreceivebuffer in bytes */
	uint64_t peertimeout_ms;
	uint32_t maxconnections; /**< after the RLIMIT_NOFILE check */
	/* listeners */
	uv_tcp_t *listeners;
	uint32_t n_listeners;
	/* Rejecting a connection when even its handle cannot be allocated
	 * (net.c accept_and_close): a preallocated handle, whether it is still
	 * closing, and which listeners wait for it. */
	uv_tcp_t reject_spare;
	bool reject_busy;
	bool reject_waiting[NET_MAX_LISTENERS];
	/* Accepting a share per loop turn (net.c on_connection): the accepts of
	 * this turn, the listeners whose next connection waits for the next
	 * turn, the idle handle that takes them then and the check handle that
	 * ends a turn's count. */
	uint32_t accepts_this_turn;
	bool accept_deferred[NET_MAX_LISTENERS];
	uv_idle_t accept_idle;
	uv_check_t accept_turn;
	bool accept_handles; /**< accept_idle and accept_turn are initialised */
	/* outbound */
	struct net_target **targets;
	uint32_t n_targets;
	/* automatic outbound: Core's CConnman limits, from maxconnections (net_init_limits) */
	uint32_t max_outbound_full; /**< 8, fewer when maxconnections < 8 */
	uint32_t max_block_relay;   /**< 2, fewer when maxconnections < 10 */
	uint32_t max_feeler;        /**< 1 */
	/** The tip looks stale: open one full-relay peer beyond max_outbound_full (Core's
	 * m_try_another_outbound_peer, set by the stale-tip check). */
	bool try_new_outbound;
	/** The tip became recent once (initial sync over): from now on the connection
	 * manager may add a block-relay-only peer now and then (Core's
	 * m_start_extra_block_relay_peers, set by sync/stale.c). */
	bool start_extra_block_relay;
	struct net_resolver *resolver; /**< name lookups (net/resolve.c); NULL before start */
	struct net_seeds *seeds;       /**< DNS and fixed seeds (net/seeds.c); NULL when none */
	/* networks, proxies, local addresses (net/reach.c) */
	struct net_reach reach;
	/** The automatic outbound connections (net/outbound.c); NULL before net_outbound_start. */
	struct net_outbound *ob;
};

/**
 * Core's CConnman::Init: full-relay = min(8, maxconnections), block-relay =
 * min(2, maxconnections - full-relay), one feeler. daemon_init calls it.
 */
void net_init_limits(struct daemon *d);

/** Listeners from bind=/port= (none when listen=0). 0 or a negative libuv error (logged). */
int net_start_listeners(struct daemon *d);
/** Close every listener. */
void net_close_listeners(struct daemon *d);
/** Targets from connect= and addnode=. 0 or -ENOMEM/-EINVAL (logged). */
int net_init_targets(struct daemon *d);
/** addnode add|onetry (v2: try BIP324 v2). 0, -EEXIST, -ENOSPC (too many), -EINVAL, -ENOMEM. */
int net_target_add(struct daemon *d, const char *name, bool onetry, bool v2);
/** addnode remove: forget the target (an open connection stays). 0 or -ENOENT. */
int net_target_remove(struct daemon *d, const char *name);
/** Free every target (shutdown; their peers are already closing). */
void net_release_targets(struct daemon *d);
/** Start due connection attempts. */
void net_tick(struct daemon *d, uint64_t now_ms);
/** A peer with a target closed: schedule the reconnect (or forget a onetry). */
void net_peer_closed(struct peer *p);
/**
 * p's v2 attempt was closed before anything came back: its target is
 * tried again at once with v1 (a onetry one too). False when p has no
 * target (or the daemon stops).
 */
bool net_target_retry_v1(struct peer *p);
/** Whether nonce is the version nonce of one of our outbound peers still in handshake. */
bool net_is_local_nonce(struct daemon *d, uint64_t nonce);
/**
 * Inbound connections allowed, as Core's m_max_inbound: maxconnections less
 * the automatic outbound slots (full-relay, block-relay-only, feeler): 114
 * by default. Manual connections (connect=, addnode=) are beyond these.
 */
uint32_t net_max_inbound(const struct daemon *d);
/**
 * Dial a as an outbound peer of type t, linked to target when not NULL:
 * the one connect path of targets and automatic connections. With socks
 * (net_socks5_route's request, which the peer takes), a is the proxy's
 * address and the SOCKS5 handshake runs once connected. The peer
 * (maybe already closing when the connect could not start), or NULL when
 * none could be made. Loop thread.
 */
struct peer *net_dial(struct daemon *d, const union net_addr *a, enum peer_conn_type t,
                      struct net_target *target, struct net_socks5 *socks);
/**
 * A onetry target of connection type t (addr-fetch, feeler, automatic
 * types of addconnection), tried at once. As net_target_add.
 */
int net_target_add_type(struct daemon *d, const char *name, enum peer_conn_type t, bool v2);

/* ---- net/outbound.c: automatic outbound connections ------------------ */

struct addrman_service;
struct addrman_address;

/** IPv4/IPv6 groups remembered per round (outbound peers are far fewer). */
#define NET_OUTBOUND_MAX_GROUPS 64u

/** What the open connections are, for one round of choosing (Core's counts). */
struct net_outbound_counts {
	uint32_t full;           /**< outbound-full-relay, connecting included */
	uint32_t block;          /**< block-relay-only */
	uint32_t automatic;      /**< all automatic ones, feelers and addr-fetch included */
	uint32_t privacy;        /**< manual, full or block-relay on Tor, I2P, CJDNS */
	uint32_t full_by_net[8]; /**< manual or full-relay peers by addrman network */
	uint32_t n_groups;       /**< distinct IPv4/IPv6 groups of manual, full, block-relay */
	uint8_t groups[NET_OUTBOUND_MAX_GROUPS][17];
	uint8_t group_len[NET_OUTBOUND_MAX_GROUPS];
};

/**
 * Start the automatic connections: without connect=, read (and delete)
 * anchors.dat and choose peers from d->addrman every 500 ms; addr-fetch
 * names are served in any case. 0 or a negative errno/libuv error.
 */
int net_outbound_start(struct daemon *d);
/** Shutdown, before peers are disconnected: write anchors.dat, stop the timer. */
void net_outbound_stop(struct daemon *d);
/** The active tip's block time (the wiring, on a new tip): extra block-relay peers start. */
void net_outbound_tip(struct daemon *d, int64_t tip_time);
/**
 * Core's AddAddrFetch: connect to `name` ("host[:port]") once, ask for
 * addresses, disconnect. 0, -ENOSPC (queue full), -ENOMEM, -EINVAL (not
 * started). The DNS seeds call it too.
 */
int net_addr_fetch_add(struct daemon *d, const char *name);
/**
 * addconnection: open a t connection (outbound-full-relay,
 * block-relay-only, addr-fetch, feeler) to address. 0, -EBUSY (Core's
 * "Already at capacity for specified connection type."), -EINVAL, -ENOMEM.
 */
int net_add_connection(struct daemon *d, const char *address, enum peer_conn_type t, bool v2);
/** The connect finished (either way): addrman Attempt. */
void net_outbound_attempted(struct peer *p);
/** An outbound peer's version arrived: addrman Good; a feeler disconnects. */
void net_outbound_version(struct peer *p);
/** A peer goes: addrman Connected when it had completed the handshake (not block-relay-only). */
void net_outbound_peer_gone(struct peer *p);
/** The open connections as one round of choosing sees them. */
void net_outbound_count(const struct daemon *d, struct net_outbound_counts *c);
/** What one round opens (Core's ThreadOpenConnections' choice of type). */
enum net_outbound_kind {
	NET_OB_NONE = 0,    /**< nothing this round */
	NET_OB_ANCHOR,      /**< an anchors.dat address, block-relay-only */
	NET_OB_FULL,        /**< outbound-full-relay, below max_outbound_full */
	NET_OB_BLOCK,       /**< block-relay-only, below max_block_relay */
	NET_OB_STALE_TIP,   /**< one more full-relay: try_new_outbound */
	NET_OB_EXTRA_BLOCK, /**< the periodic extra block-relay-only peer */
	NET_OB_FEELER,      /**< a feeler */
	NET_OB_EXTRA_NET,   /**< a full-relay peer on a network with none, if one is found */
};

/** Which of Core's timers and conditions are due for one round. */
struct net_outbound_due {
	bool anchors;     /**< anchors are left to try */
	bool extra_block; /**< near the tip and the extra block-relay timer passed */
	bool feeler;      /**< the feeler timer passed */
	bool extra_net;   /**< the extra network peer timer passed */
};

/** Core's order of choice for one round, from the counts and what is due. Pure. */
enum net_outbound_kind net_outbound_choose(const struct net_state *n,
                                           const struct net_outbound_counts *c,
                                           const struct net_outbound_due *due);
/** Whether an automatic connection may open (Core's semOutbound). */
bool net_outbound_slot_free(const struct daemon *d, const struct net_outbound_counts *c);
/**
 * Draw an address to connect to from d->addrman with Core's rules (up to
 * 100 draws; see net/outbound.c). feeler: tried collisions, else new
 * table; preferred_net >= 0: that network only. True and *out, or false.
 */
bool net_outbound_pick(struct daemon *d, const struct net_outbound_counts *c, bool feeler,
                       int preferred_net, struct addrman_address *out);
/** A reachable network with no manual or full-relay peer and addresses in the addrman, or -1. */
int net_outbound_preferred_net(struct daemon *d, const struct net_outbound_counts *c);
/** Core's IsBadPort. */
bool net_outbound_bad_port(uint16_t port);
/** A socket address as the addrman's service. */
void net_addr_to_service(const union net_addr *a, struct addrman_service *out);
/** An IPv4/IPv6 service as a socket address; -EAFNOSUPPORT for other networks. */
int net_service_to_addr(const struct addrman_service *s, union net_addr *out);
/** anchors.dat's bytes for v[0..n) (n <= 2) into buf; its length, 0 when cap is short. */
size_t net_anchors_encode(const struct addrman_address *v, uint32_t n, uint32_t magic, uint8_t *buf,
                          size_t cap);
/** anchors.dat's entries (at most max) from buf. 0, or -EINVAL (bad magic, checksum, format). */
int net_anchors_decode(const uint8_t *buf, size_t len, uint32_t magic, struct addrman_address *v,
                       uint32_t max, uint32_t *n);

/* ---- net/resolve.c: name lookups on the loop (c-ares) ----------------- */

/** A name lookup in flight; see net_resolve. */
struct net_resolve;
/** The resolver (d->net->resolver): c-ares driven by the loop. */
struct net_resolver;

/**
 * What a lookup found, on the loop thread, never from inside net_resolve:
 * status 0 and n addresses (n may be 0: the name has none), or a negative
 * error (net_resolve_strerror) and none. addrs (with the port asked for)
 * is valid for the call only; the lookup is freed after it.
 */
typedef void (*net_resolve_cb)(void *ctx, int status, const union net_addr *addrs, size_t n);

/**
 * Start the resolver: c-ares on d->loop, with the system's servers, or
 * with -dnsserver=IP[:port] only that one (and no hosts file), so that
 * tests answer every lookup themselves. 0, or -ENOMEM, -EIO, -EINVAL
 * (logged). Loop thread, before any lookup.
 */
int net_resolver_init(struct daemon *d);
/**
 * Stop it: lookups in flight are dropped without their callbacks, so
 * nobody may cancel one afterwards (stop the callers first). Loop thread.
 */
void net_resolver_release(struct daemon *d);
/**
 * Look `host` up (A and AAAA; an IP literal answers itself), at most max
 * addresses, each with `port`. Returns the lookup (the caller may cancel
 * it until cb runs), or NULL when out of memory or without a resolver
 * (cb is not called). Loop thread.
 */
struct net_resolve *net_resolve(struct daemon *d, const char *host, uint16_t port, size_t max,
                                net_resolve_cb cb, void *ctx);
/** Give a lookup up before its callback: it will not be called. NULL is fine. */
void net_resolve_cancel(struct net_resolve *q);
/** Text for a net_resolve_cb status. Static storage. */
const char *net_resolve_strerror(int status);

/* ---- net/seeds.c: DNS seeds and fixed seeds (Core's ThreadDNSAddressSeed) -- */

/**
 * Start seeding as Core 29: the network's DNS seeds (unless dnsseed=0;
 * -connect and maxconnections=0 turn it off by default) and, with
 * automatic outbound connections (no -connect), the fixed seeds once a
 * reachable network's part of the addrman is still empty after 60 s (at
 * once without DNS seeds and addnode=). Adds to d->addrman; a seed whose
 * lookup gives nothing becomes an addr-fetch connection (net_addr_fetch_add).
 * 0 or -ENOMEM. Loop thread, after net_resolver_init.
 */
int net_seeds_start(struct daemon *d);
/** Stop seeding (shutdown): its timer closes, its lookup is cancelled. Loop thread. */
void net_seeds_stop(struct daemon *d);

#endif
