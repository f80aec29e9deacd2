/**
 * daemon/daemon.h: peerd's internal face: the daemon context, peers,
 * outbound targets, and the functions the daemon/ files call on each other.
 *
 * Glossary
 *   loop thread  the one thread running the libuv loop. It owns every
 *                socket, timer and every field of every struct in this
 *                header; nothing here is locked. (pool/ workers, once chain/
 *                gives them script checks, never touch any of it.)
 *   peer         one TCP connection speaking the P2P protocol, inbound or
 *                outbound; `struct peer`. Its id is a small number that
 *                grows with each connection, as Core's peer ids do.
 *   target       an outbound destination from connect=, addnode= or the
 *                addnode RPC; it owns the reconnect schedule.
 *   rx buffer    a peer's receive buffer {buf, cap, start, end}: a 512-byte
 *                script free-list buffer while headers and small messages
 *                arrive, an exactly-sized heap buffer for one larger
 *                message (allocated only after its header's magic and
 *                length were checked), and nothing at all while the peer is
 *                idle. See net/transport.c.
 *   send queue   the bytes handed to libuv and not yet written; counted per
 *                peer (sendq_bytes) for flow control.
 *   paused       send_paused: the send queue is over maxsendbuffer, so the
 *                peer's messages are not processed (no replies generated);
 *                recv_paused: reading stopped because, while send_paused,
 *                the rx buffer filled or reached maxreceivebuffer.
 *
 * Ownership: struct daemon owns everything reachable from it. A peer is
 * freed only in its libuv close callback, never while a callback for it
 * may still run, so `peer_disconnect` may be called from anywhere,
 * including a handler for that same peer, any number of times.
 *
 * Parts with headers of their own, included here and read as part of this
 * face: daemon/node/log.h, base/hset.h, daemon/txrelay/orphanage.h, daemon/txrelay/txrelay.h,
 * daemon/sync/sync.h.
 */
#ifndef PEERD_DAEMON_H
#define PEERD_DAEMON_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "base/version.h"
#include "conf/conf.h"
#include "daemon/ctl/budget.h"
#include "base/hset.h"
#include "daemon/node/log.h"
#include "daemon/txrelay/orphanage.h"
#include "proto/proto.h"

struct pool_queue;
struct chain;
struct chain_node;

/* ---------------------------------------------------------------------- */
/* Identity                                                                */

#define DAEMON_VERSION_STRING PEERD_VERSION_STRING
/** getnetworkinfo "version": Core's 10000*major + 100*minor + patch. */
#define DAEMON_VERSION_NUMBER PEERD_VERSION_NUMBER
/** User agent in version (BIP14). */
#define DAEMON_USER_AGENT "/peerd:" PEERD_VERSION_STRING "/"
/**
 * Services peerd offers: it stores and serves the whole chain
 * (NODE_NETWORK) with witnesses (NODE_WITNESS). Core starts headers sync
 * only with peers that claim NODE_NETWORK or NODE_NETWORK_LIMITED.
 */
#define DAEMON_LOCAL_SERVICES ((uint64_t)(PROTO_NODE_NETWORK | PROTO_NODE_WITNESS))
/** feefilter peerd sends: Core's default minimum relay fee, sat/kvB. */
#define DAEMON_FEEFILTER_SAT_KVB 1000
/**
 * feefilter during initial block download: Core asks for MAX_MONEY per kvB
 * and rounds it down to its top fee bucket (FeeFilterRounder), which is
 * this, so no peer sends transactions.
 */
#define DAEMON_FEEFILTER_IBD_SAT_KVB 9170997

/* ---------------------------------------------------------------------- */
/* Protocol constants (Core 29's names in comments)                        */

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
/** Outbound TCP connect gives up after this (DEFAULT_CONNECT_TIMEOUT). */
#define PEER_CONNECT_TIMEOUT_MS 5000u
/** The housekeeping timer's period: timeouts are checked this often. */
#define DAEMON_TICK_MS 250u
/** Every this many ticks: transaction requests, reconnects, ban expiry, STATUS=. */
#define DAEMON_SLOW_TICKS 4u
/** sd_notify STATUS= is refreshed at most this often. */
#define DAEMON_STATUS_MS 1000u
/** SIGTERM/SIGINT: whatever is still open after this is force-closed. */
#define DAEMON_SHUTDOWN_GRACE_MS 3000u

/** Outbound destinations (connect=, addnode=, addnode RPC) at most. */
#define NET_MAX_TARGETS 64u
/** Outbound connections at once (Core's MAX_ADDNODE_CONNECTIONS). */
#define NET_MAX_OUTBOUND 8u
/** First retry delay after a failed or lost outbound connection. */
#define NET_BACKOFF_INITIAL_MS 1000u
/** Retry delays double up to this. */
#define NET_BACKOFF_MAX_MS 60000u
/** listen() backlog (the kernel caps it at net.core.somaxconn, as Core's SOMAXCONN). */
#define NET_LISTEN_BACKLOG 4096
/** File descriptors kept for everything but peers (control clients, listeners, files). */
#define DAEMON_FD_RESERVE 160
/** Listeners at most (bind= entries, or 0.0.0.0 and :: by default). */
#define NET_MAX_LISTENERS (CONF_MAX_LIST + 2)

/** Text form of an address: "[v6]:port" at most. */
#define NET_ADDRSTRLEN (INET6_ADDRSTRLEN + 8)

/* ---------------------------------------------------------------------- */
/* Addresses                                                               */

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

/* ---------------------------------------------------------------------- */
/* Peers                                                                   */

/** Core's ConnectionType names, for getpeerinfo. */
enum peer_conn_type {
	PEER_CONN_INBOUND = 0,
	PEER_CONN_MANUAL, /**< connect=, addnode= or addnode RPC (Core: "manual") */
};

enum peer_state {
	PEER_CONNECTING = 0, /**< outbound TCP connect in progress */
	PEER_HANDSHAKE,      /**< connected; version/verack not both done */
	PEER_ACTIVE,         /**< verack received: "successfully connected" */
	PEER_CLOSING,        /**< uv_close called; freed in the close callback */
};

struct net_target;

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
	bool rx_busy : 1; /**< a message from the rx buffer is being handled */
	bool rx_wait : 1; /**< not reading: its next message waits for maxrecvmemory */
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
	char *subver;           /**< sanitized user agent, xmalloc'd; NULL before version */
	uint64_t local_nonce;   /**< our version nonce (self-connection detection) */
	int64_t feefilter;      /**< sat/kvB from the peer's feefilter */
	int64_t sent_feefilter; /**< sat/kvB of the last feefilter sent, 0 = none */
	uint64_t cmpct_version;
	/* ping */
	uint64_t ping_nonce;    /**< outstanding ping, 0 = none */
	uint64_t ping_start_us; /**< when it was sent (uv_hrtime/1000) */
	uint64_t ping_last_ms;  /**< loop time of the last ping sent */
	int64_t ping_us;        /**< last round trip, -1 = none yet */
	int64_t minping_us;     /**< smallest round trip, -1 = none yet */
	/* inventory (p2p/inv.c) */
	struct hset *known_inv; /**< allocated on the first inv: idle peers cost nothing */
	uint32_t tx_announced;  /**< tracked announcements naming this peer */
	uint32_t tx_inflight;   /**< getdata requests outstanding to this peer */
	uint32_t blocks_owed;   /**< genesis copies asked for, deferred while send-paused */
	/* block serving (sync/serve.c): one getdata's block requests, in order */
	struct proto_inv_vec *serve_q; /**< requests not yet read; xmalloc'd */
	uint32_t serve_head, serve_n;  /**< next to read; entries in serve_q */
	uint32_t serve_cap;
	bool serve_busy; /**< a read job for this peer is out */
	/* sync (sync/download.c) */
	int32_t best_height; /**< highest block it showed us (headers, inv, block); -1 none */
	struct proto_hash best_hash; /**< that block (Core's pindexBestKnownBlock) */
	int32_t avail_height;        /**< its best block's fork with our best header chain: it has
	                                  the window's blocks up to here; -1 none */
	uint32_t blocks_inflight;    /**< blocks asked of it, not yet received */
	uint64_t getheaders_ms;      /**< loop time of the last unanswered getheaders, 0 = none */
	bool sync_started;           /**< it was sent the first getheaders */
	bool sent_sendheaders;       /**< BIP130 sendheaders went to it */
	bool best_min_work;          /**< its best known block has more than the minimum work */
	/* which of its headers messages need the validation thread (sync/gate.c) */
	uint32_t hdr_jobs_live;          /**< headers jobs out that may connect */
	uint32_t hdr_jobs_probe;         /**< headers jobs out only to learn if they connect */
	struct proto_hash hdr_last;      /**< last header of the last headers message posted */
	struct proto_hash getheaders_at; /**< first locator hash of the last getheaders sent */
	/* misbehaviour */
	uint32_t decode_errors;
	/* transaction relay (txrelay/announce.c): NULL until the handshake is done */
	struct relay_peer *txr;
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
struct peer *daemon_peer_by_id(struct daemon *d, uint64_t id);
/** getpeerinfo "connection_type". */
const char *peer_conn_type_name(enum peer_conn_type t);

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

/* ---- p2p/handshake.c ------------------------------------------------- */

/** Send our version message (outbound: at connect; inbound: after theirs). */
void handshake_send_version(struct peer *p);
/** The ping method: send a ping now to a peer past its handshake. Loop thread. */
void handshake_ping_now(struct peer *p);
/** version, verack, ping, pong, wtxidrelay, sendaddrv2, sendcmpct, feefilter, sendheaders. */
void handshake_on_msg(struct peer *p, const struct proto_msg *m);
/** Ping and timeout checks for a connected peer. */
void handshake_tick(struct peer *p, uint64_t now_ms);

/* ---- p2p/inv.c ------------------------------------------------------- */

/** Known-inventory set per peer (remembers at least half of this). */
#define INV_KNOWN_MAX 8192u
/** Announcements tracked at once, all peers. */
#define INV_MAX_TRACKED 100000u
/** Announcements tracked per peer (Core MAX_PEER_TX_ANNOUNCEMENTS). */
#define INV_MAX_PEER_ANNOUNCEMENTS 5000u
/** Requests in flight per peer (Core MAX_PEER_TX_REQUEST_IN_FLIGHT). */
#define INV_MAX_PEER_INFLIGHT 100u
/** A request unanswered this long falls back to another announcer (Core GETDATA_TX_INTERVAL). */
#define INV_GETDATA_TX_INTERVAL_MS 60000u
/** Announcers remembered per transaction. */
#define INV_MAX_ANNOUNCERS 4u

/** Transaction-request tracker. */
struct inv_state {
	struct hmap req_index; /**< fingerprint of hash -> slot in reqs */
	struct inv_req *reqs;  /**< slab; free slots chained through next_free */
	uint32_t reqs_cap, reqs_used, free_head;
	struct inv_pending *pending; /**< scratch for the tick's requests */
	size_t pending_cap;
};

/** Set up the tracker (allocates nothing yet). 0. */
int inv_init(struct daemon *d);
/** Free the tracker. */
void inv_release(struct daemon *d);
/** inv, getdata, notfound, tx, block, mempool. */
void inv_on_msg(struct peer *p, const struct proto_msg *m);
/** Request timeouts and fallback to other announcers; batch getdata. */
void inv_tick(struct daemon *d, uint64_t now_ms);
/** Free a closing peer's inventory state (its tracker entries are cleaned lazily). */
void inv_peer_gone(struct peer *p);
/** The send queue drained: serve deferred getdata blocks until paused again. Loop thread. */
void inv_getdata_resume(struct peer *p);
/** Announcements tracked now. */
uint32_t inv_tracked(const struct daemon *d);
/** Remember that the peer has (announced, sent or was told of) this hash. */
void inv_known_add(struct peer *p, const struct proto_hash *h);
/** Whether the peer is known to have this hash. */
bool inv_known_has(const struct peer *p, const struct proto_hash *h);
/**
 * A transaction arrived: the peers (ids) that announced `h` go to out[0..cap)
 * and its tracked announcement is forgotten. Returns how many were written.
 */
uint32_t inv_take_announcers(struct daemon *d, const struct proto_hash *h, uint64_t *out,
                             uint32_t cap);
/** Forget the announcement of `h` (Core's ForgetTxHash): nothing more is asked for it. */
void inv_forget(struct daemon *d, const struct proto_hash *h);
/**
 * An orphan's parent: track it by txid as announced by p (Core treats an
 * orphan resolution candidate as announcing every missing parent).
 */
void inv_track_parent(struct peer *p, const struct proto_hash *txid);

/* ---- node/chainview.c: the loop's copy of the active chain ----------- */

/** A block of the active chain as the loop keeps it: hash and header. */
struct chainview_rec {
	struct proto_hash hash;
	uint8_t header[PROTO_BLOCK_HEADER_SIZE]; /**< serialized, ready for a headers reply */
};

/** The active chain, genesis first; loop thread only. */
struct chainview {
	struct chainview_rec *recs; /**< recs[h] is the block at height h */
	uint32_t n, cap;            /**< n = tip height + 1; 0 before the first update */
	struct hmap idx;            /**< fingerprint of hash -> height */
	bool ibd; /**< initial block download, as of the last update (false before any) */
};

/**
 * What changed in the active chain: blocks above fork_height are gone and
 * recs (heights fork_height + 1 ...) are the new ones, up to the tip.
 * Built on the validation thread, delivered to the loop as a result.
 */
struct chainview_update {
	int32_t fork_height; /**< -1: the whole chain follows */
	int32_t old_height;  /**< the published tip's height before, -1 if none */
	bool ibd;            /**< chain_in_ibd at the new tip */
	uint32_t n;
	struct chainview_rec recs[];
};

/** An empty view. */
void chainview_init(struct chainview *v);
/** Free the view. */
void chainview_release(struct chainview *v);
/** Height of the active chain's block with this hash, or -1. Loop thread. */
int32_t chainview_find(const struct daemon *d, const struct proto_hash *h);
/** The tip's height, -1 before the chain is known. Loop thread. */
int32_t chainview_height(const struct daemon *d);
/** The record at height, or NULL. Loop thread. */
const struct chainview_rec *chainview_at(const struct daemon *d, int32_t height);
/** Apply an update. 0, -EINVAL (does not fit), -ENOMEM, -EOVERFLOW. Loop thread. */
int chainview_apply(struct daemon *d, const struct chainview_update *u);
/**
 * The validation thread's side: the update that takes a view from
 * *published to the chain's tip, or NULL when nothing changed (or out of
 * memory: *published is then kept, so the next call retries). Moves
 * *published to the tip. The caller owns the result.
 */
struct chainview_update *chainview_update_new(struct chain *c, const struct chain_node **published);

/* ---- sync/serve.c: blocks for getdata, read on the validation thread --- */

/** Blocks (getdata entries) queued per peer; one getdata holds at most PROTO_MAX_INV. */
#define SERVE_MAX_QUEUE PROTO_MAX_INV

/** Queue a getdata entry (answered in order). 0, or -ENOMEM / -ENOSPC (the entry is dropped). */
int serve_queue(struct peer *p, const struct proto_inv_vec *v);
/** Start reading the next queued block unless one is out or the peer is send-paused. */
void serve_next(struct peer *p);
/** Whether the peer waits for blocks to be served: its messages are not processed meanwhile. */
static inline bool serve_pending(const struct peer *p)
{
	return p->serve_busy || p->serve_n > p->serve_head;
}
/** Free a closing peer's queue. */
void serve_peer_gone(struct peer *p);

/* ---- sync/announce.c: announcing new tips ---------------------------- */

/** Blocks announced by headers at most; more go as one inv of the tip (Core
 * MAX_BLOCKS_TO_ANNOUNCE). */
#define RELAY_MAX_BLOCKS_TO_ANNOUNCE 8u

/** The active chain moved (u was just applied to the view): tell every peer. Loop thread. */
void relay_new_tip(struct daemon *d, const struct chainview_update *u);
/** Initial block download ended: send the real feefilter to peers told MAX_MONEY. */
void relay_ibd_over(struct daemon *d);

/* ---- txrelay/announce.c / txrelay/accept.c: transaction relay (its own header) --- */

#include "daemon/txrelay/txrelay.h"

/* ---- sync/download.c / sync/presync.c: block download and presync (its own header) --- */

#include "daemon/sync/sync.h"

/* ---- sync/headers.c -------------------------------------------------- */

/** getheaders, getblocks, headers. */
void headers_on_msg(struct peer *p, const struct proto_msg *m);

/* ---- p2p/addr.c ------------------------------------------------------ */

/** Bounded set of addresses learned from addr and addrv2. */
struct addr_state {
	struct proto_addr_entry *v; /**< slots, n used */
	uint32_t n, cap;
	struct hmap index; /**< fingerprint -> slot */
};

/** Set up the empty address set (allocates nothing yet). 0. */
int addr_init(struct daemon *d);
/** Free the address set. */
void addr_release(struct daemon *d);
/** addr, addrv2, getaddr. */
void addr_on_msg(struct peer *p, const struct proto_msg *m);

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

/* ---- net/net.c ------------------------------------------------------- */

/** An outbound destination; see the glossary. */
struct net_target {
	struct daemon *d;
	char *name;            /**< as given: "host:port" */
	bool onetry;           /**< one attempt, then forgotten */
	bool from_connect;     /**< connect= (shown as such in logs) */
	bool removed;          /**< addnode remove while a callback is pending */
	struct peer *peer;     /**< current connection, or NULL */
	uv_getaddrinfo_t *gai; /**< resolution in flight, or NULL */
	uint64_t next_attempt_ms;
	uint32_t backoff_ms;
	uint32_t attempts;
};

/** Listeners from bind=/port= (none when listen=0). 0 or a negative libuv error (logged). */
int net_start_listeners(struct daemon *d);
/** Close every listener. */
void net_close_listeners(struct daemon *d);
/** Targets from connect= and addnode=. 0 or -ENOMEM/-EINVAL (logged). */
int net_init_targets(struct daemon *d);
/** addnode add|onetry. 0, -EEXIST, -ENOSPC (too many), -EINVAL, -ENOMEM. */
int net_target_add(struct daemon *d, const char *name, bool onetry);
/** addnode remove: forget the target (an open connection stays). 0 or -ENOENT. */
int net_target_remove(struct daemon *d, const char *name);
/** Free every target (shutdown; their peers are already closing). */
void net_release_targets(struct daemon *d);
/** Start due connection attempts. */
void net_tick(struct daemon *d, uint64_t now_ms);
/** A peer with a target closed: schedule the reconnect (or forget a onetry). */
void net_peer_closed(struct peer *p);
/** Whether nonce is the version nonce of one of our outbound peers still in handshake. */
bool net_is_local_nonce(struct daemon *d, uint64_t nonce);
/** Inbound connections allowed: maxconnections minus the outbound reserve. */
uint32_t net_max_inbound(const struct daemon *d);

/* ---- node/validation.c: the validation thread ------------------------ */

struct val_job;
/** A job's work: runs on the validation thread with the chain (NULL when none is open). */
typedef void (*val_work_fn)(struct chain *c, struct val_job *j);
/**
 * A job's completion: runs on the loop thread once the work ran, or with
 * j->cancelled set when it never will (shutdown); it owns and frees j.
 */
typedef void (*val_done_fn)(struct daemon *d, struct val_job *j);

/**
 * A unit of work for the validation thread, embedded first in the
 * caller's own struct. Between validation_post and done, the job belongs
 * to the validation side: the loop must not touch it.
 */
struct val_job {
	struct val_job *next;
	val_work_fn work;
	val_done_fn done;
	bool cancelled; /**< set when work never ran */
};

/**
 * The validation thread and its two queues. Fields marked (mu) are
 * guarded by mu; `chain` belongs to the thread while it runs; the atomics
 * are published by the thread for the loop's status line.
 */
struct validation {
	struct daemon *d;
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;                         /**< wakes the thread: work, hold changes, stop */
	uv_async_t async;                     /**< wakes the loop: results, exit */
	struct val_job *in_head, **in_tail;   /**< (mu) posted, not started */
	struct val_job *out_head, **out_tail; /**< (mu) finished or cancelled */
	bool stopping;                        /**< (mu) finish the running job, then close */
	bool held;                            /**< (mu) tests: take no job until released */
	bool running;                         /**< (mu) a job is being worked on */
	bool async_open;                      /**< (mu) the thread may uv_async_send */
	bool exited;                          /**< (mu) the chain is closed; join me */
	uint64_t posted, jobs_run;            /**< (mu) counters */
	bool initialized, started, joined;    /**< loop thread only */
	struct chain *chain;
	const struct chain_node *published; /**< the tip the loop's view was last given (thread) */
	_Atomic int32_t height;             /**< the tip's height, -1 when no chain */
	_Atomic int32_t headers;            /**< the best header's height */
	_Atomic bool busy;                  /**< a job is running */
	_Atomic bool interrupt; /**< set with stopping: a long job (mining) ends early */
	bool fatal_reported;    /**< the chain's fatal error went to the loop (thread) */
};

/**
 * Open the chain in validation_netdir with dbcache and par from the
 * configuration and start the thread that owns it. Startup only (before
 * READY=1): opening replays blocks written after the last flush. 0 or a
 * negative error (logged). Loop thread.
 */
int validation_open(struct daemon *d);
/**
 * Start the thread with an already opened chain `c` (taken over; NULL runs
 * jobs with no chain, as the unit tests do). 0 or a libuv error.
 */
int validation_start(struct daemon *d, struct chain *c);
/** The directory of this network's chain state: <datadir>/<network>/. */
const char *validation_netdir(const struct daemon *d);
/**
 * Hand a job to the thread. 0, or -ESHUTDOWN when no thread runs or it is
 * stopping (the job was not taken: the caller still owns it). Loop thread.
 */
int validation_post(struct daemon *d, struct val_job *j);
/** Ask the thread to stop after its current job and close (flush) the chain. Idempotent. */
void validation_stop(struct daemon *d);
/** Tests: keep the thread from starting jobs (true) or let it go on (false). */
void validation_hold(struct daemon *d, bool hold);
/** The loop's handles are being force-closed: close the async handle, the thread stops using it.
 */
void validation_detach(struct daemon *d);
/**
 * Stop, join (waiting for the flush), run the done callback of every result
 * left, free the queues. After the loop ended, or from daemon_release.
 */
void validation_release(struct daemon *d);
/** "height N" or "height N of M headers (P%)" for STATUS=. Loop thread. */
void validation_status(const struct daemon *d, char *out, size_t len);

/* ---- node/diskspace.c: a full disk is a clean shutdown, as Core's ---- */

/** Startup, before the chain opens: 50 MiB free in the netdir and blocks/, or -ENOSPC (logged). */
int diskspace_startup(struct daemon *d);
/** Every tick: every 5 minutes, blocks/ below 100 MiB free shuts peerd down. Loop thread. */
void diskspace_tick(struct daemon *d, uint64_t now);
/**
 * Validation thread, after a job: when the chain latched a failed write
 * or a damaged database (chain_fatal_error) not yet reported, a job whose
 * done callback logs Core's fatal error and shuts down with exit status 1;
 * else NULL.
 */
struct val_job *diskspace_fatal_job(struct chain *c, bool *reported);

/* ---- ctl/server.c / ctl/request.c / ctl/methods.c: the control socket --- */

struct ctl_client;

struct ctl_server {
	uv_pipe_t pipe;
	char *path;
	bool listening;
	bool bound;                 /**< the socket file is ours to remove */
	struct ctl_client *clients; /**< doubly linked */
	uint32_t n_clients;
	uv_pipe_t reject;    /**< accepts and closes a client peerd has no memory for */
	bool reject_busy;    /**< reject is closing */
	bool reject_pending; /**< a connection waits for reject to be free */
	/* fairness (ctl/server.c): limits on what clients hold, lines taken in turn */
	uint32_t n_live;          /**< clients not closing */
	uint64_t queued;          /**< reply bytes queued to all clients */
	uint64_t line_bytes;      /**< reply text of lines still being answered */
	struct ctl_budget budget; /**< reply budget (ctl/budget.c) */
	uint32_t jobs;            /**< chain jobs of clients' lines out now */
	uint64_t read_bytes;      /**< read buffers allocated for all clients */
	struct ctl_client *ready; /**< clients with a request line waiting its turn */
	uv_idle_t turn;           /**< runs one line of each ready client per loop turn */
	bool turn_init;
	uint64_t idle_closed, slot_closed, stall_closed, queue_closed, read_closed;
	struct ctl_job *inflight; /**< chain calls posted and not back (getrpcinfo), linked */
};

/** Bind netdir/control.sock (or controlsocket=), mode 0600. 0 or negative (logged). */
int ctl_start(struct daemon *d);
/** Close the server and every client; remove the socket file. */
void ctl_close(struct daemon *d);
/** Every tick: close idle clients and clients that stopped reading their replies. */
void ctl_tick(struct daemon *d, uint64_t now_ms);

/**
 * JSON-RPC error codes: the JSON-RPC 2.0 ones, then Core's application
 * codes where a method means the same thing.
 */
enum ctl_err {
	CTL_PARSE_ERROR = -32700,
	CTL_INVALID_REQUEST = -32600,
	CTL_METHOD_NOT_FOUND = -32601,
	CTL_INVALID_PARAMS = -32602,
	CTL_INTERNAL_ERROR = -32603,
	CTL_MISC_ERROR = -1,             /**< RPC_MISC_ERROR */
	CTL_TYPE_ERROR = -3,             /**< RPC_TYPE_ERROR */
	CTL_INVALID_ADDRESS_OR_KEY = -5, /**< RPC_INVALID_ADDRESS_OR_KEY ("Block not found") */
	CTL_INVALID_PARAMETER = -8,      /**< RPC_INVALID_PARAMETER */
	CTL_VERIFY_ERROR = -25,          /**< RPC_VERIFY_ERROR */
	CTL_DATABASE_ERROR = -20,        /**< RPC_DATABASE_ERROR */
	CTL_DESERIALIZATION_ERROR = -22, /**< RPC_DESERIALIZATION_ERROR ("Block decode failed") */
	CTL_NODE_ALREADY_ADDED = -23,    /**< RPC_CLIENT_NODE_ALREADY_ADDED */
	CTL_NODE_NOT_ADDED = -24,        /**< RPC_CLIENT_NODE_NOT_ADDED */
	CTL_NODE_NOT_CONNECTED = -29,    /**< RPC_CLIENT_NODE_NOT_CONNECTED */
	CTL_INVALID_IP_OR_SUBNET = -30,  /**< RPC_CLIENT_INVALID_IP_OR_SUBNET */
	CTL_VERIFY_REJECTED = -26,       /**< RPC_VERIFY_REJECTED (the mempool said no) */
	CTL_ALREADY_IN_CHAIN = -27,      /**< RPC_VERIFY_ALREADY_IN_UTXO_SET */
};

/** A method's outcome: a result (owned, may be json null) or an error. */
struct ctl_result {
	struct json_t *result;
	int err_code;       /**< 0 when result is set */
	char err_msg[2048]; /**< room for a method's help text (Core's answer to a wrong count) */
	bool stop;          /**< shut down after the reply is written */
};

/**
 * Run one method. params is a JSON array (positional) or object (named),
 * or NULL. Always fills res.
 */
void ctl_call(struct daemon *d, const char *method, struct json_t *params, struct ctl_result *res);

/**
 * Requests in one JSON-RPC batch. One line can hold thousands of calls,
 * and each getpeerinfo reply can be large: the bound keeps one line from
 * building a reply of hundreds of MB on the loop thread.
 */
#define CTL_MAX_BATCH 100u
/**
 * Longest request line accepted: a submitblock of the largest block
 * (PROTO_MAX_MESSAGE bytes as hex) with room for the JSON around it, as
 * Core's RPC takes any block. A client's buffer grows only as its bytes
 * arrive.
 */
#define CTL_MAX_LINE (2u * PROTO_MAX_MESSAGE + 65536u)

/** What ctl_reply asks of the connection, besides sending the reply. */
enum ctl_reply_flags {
	CTL_REPLY_CLOSE = 1u << 0, /**< close after the reply: the line was not JSON */
	CTL_REPLY_STOP = 1u << 1,  /**< the stop method ran: shut down after the reply */
};

/**
 * Answer one request line (len bytes, without its newline): a single
 * request, a batch, or a notification. Returns the reply to write as one
 * line (a new reference the caller owns), or NULL when nothing is to be
 * written (a blank line, notifications only, or out of memory). *flags
 * gets enum ctl_reply_flags bits. Methods run here. Loop thread.
 */
struct json_t *ctl_reply(struct daemon *d, const char *line, size_t len, unsigned *flags);

/* ---- ctl/stats.c ----------------------------------------------------- */

/** Counters of one command, all peers. */
struct stats_msg {
	uint64_t recv_count, recv_bytes, sent_count, sent_bytes;
};

/** Number of proto_err codes counted (index -err). */
#define STATS_N_ERRS (-(PROTO_ERR__MIN) + 1)

struct daemon_stats {
	struct stats_msg msg[PROTO_CMD__COUNT]; /**< [PROTO_CMD_UNKNOWN]: "other" */
	uint64_t decode_err[STATS_N_ERRS];      /**< by -proto_err, framing included */
	uint64_t bytes_sent, bytes_recv;
	/* connections */
	uint64_t inbound_accepted;
	uint64_t inbound_rejected_full; /**< the 126th-inbound rule */
	uint64_t inbound_rejected_banned;
	uint64_t inbound_rejected_discouraged;
	uint64_t outbound_attempts, outbound_connected, outbound_failed;
	uint64_t disconnects;
	uint64_t self_connections;
	uint64_t misbehaving;
	uint64_t discouraged;
	uint64_t v2_probes; /**< connections whose first bytes were not our magic */
	uint64_t handshake_timeouts, inactivity_timeouts, ping_timeouts;
	uint64_t send_pauses, recv_pauses;
	uint64_t rx_large_buffers;  /**< exactly-sized rx buffers allocated */
	uint64_t rx_pool_fail;      /**< rx buffer unavailable (OOM): peer dropped */
	uint64_t bloom_disconnects; /**< filterload/filteradd/filterclear without NODE_BLOOM */
	/* inventory */
	uint64_t inv_tx, inv_block, inv_other, inv_known_dup;
	uint64_t inv_ignored_full; /**< tracker full or peer at its announcement limit */
	uint64_t tx_requested, tx_request_timeouts, tx_received, tx_unsolicited;
	uint64_t tx_decoded, tx_bytes;
	uint64_t tx_already_have; /**< received but already known (mempool, orphan, rejected) */
	uint64_t tx_accepted, tx_rejected, tx_orphaned, tx_punished;
	uint64_t getdata_items, notfound_sent, notfound_recv, blocks_served;
	uint64_t blocks_not_served;       /**< asked for, but unknown, not allowed or unreadable */
	uint64_t blocks_served_reencoded; /**< of blocks_served: witnesses stripped (MSG_BLOCK) */
	uint64_t blocks_recv;
	/* headers */
	uint64_t headers_msgs, headers_entries, getheaders_answered;
	uint64_t getblocks_answered, blocks_announced_headers, blocks_announced_inv;
	/* addr */
	uint64_t addr_entries, addr_learned, addr_unroutable, getaddr_answered, getaddr_ignored;
};

/** Count a received message of `cmd` (total frame bytes). */
static inline void stats_recv(struct daemon_stats *s, enum proto_cmd cmd, size_t bytes)
{
	s->msg[cmd].recv_count++;
	s->msg[cmd].recv_bytes += bytes;
}
/** Count an error code (framing or decode). */
static inline void stats_err(struct daemon_stats *s, int err)
{
	if (err < 0 && err >= PROTO_ERR__MIN)
		s->decode_err[-err]++;
}

struct ctl_result;
/** Most warnings shown at once (the table in node/warnings.c is shorter). */
#define DAEMON_MAX_WARNINGS 8
/**
 * The conditions the operator is warned about now (node/warnings.c's table):
 * up to max sentences (static storage) into out; returns how many hold
 * (may exceed max). Loop thread.
 */
size_t daemon_warnings(const struct daemon *d, const char **out, size_t max);
/** Core's `warnings` array of those sentences (new reference; NULL: out of memory). Loop thread. */
struct json_t *daemon_warnings_json(const struct daemon *d);
/** Log each warning that holds now at WARN (at start). Loop thread. */
void daemon_warnings_log(const struct daemon *d);
/**
 * A chain method's loop-thread finish (struct ctl_method.finish): set the
 * result object's "warnings" to daemon_warnings_json(d), as Core's
 * getblockchaininfo shows them. Loop thread.
 */
void daemon_warnings_finish(struct daemon *d, struct json_t *args, struct ctl_result *res);

/** getstats' result without the chain's part (new reference). Loop thread. */
struct json_t *stats_json(struct daemon *d);
struct pool_queue_stats;
/** A check queue's counters as getstats shows them (new reference). Any thread. */
struct json_t *stats_checkqueue_json(const struct pool_queue_stats *qs, unsigned workers);
/** getstats' "recv_budget": limit, held, held_max, waiting, pauses, grants, evictions, trims. */
struct json_t *recvbudget_json(struct daemon *d);
/** getstats' "control": clients, limits, queued bytes, idle/stall drops (ctl/server.c). */
struct json_t *ctl_stats_json(struct daemon *d);
/** Resident set size in bytes from /proc/self/statm, 0 if unknown. */
uint64_t stats_rss_bytes(void);
/** Open file descriptors (entries of /proc/self/fd), -1 if unknown. */
int stats_open_fds(void);

/* ---- datadir.c: the data directory and its lock ------------------------ */

/**
 * Make the datadir when it is the default one (a named one must already
 * exist: conf_check_datadir), then the network's directory in it
 * (conf->netdir), and lock <netdir>/.lock for as long as the process
 * lives, so a second peerd on the same data stops before it touches
 * anything. 0, -EAGAIN when another process holds the lock, or another
 * negative errno; the reason is logged in Core's words. Main thread.
 */
int datadir_open(struct daemon *d);
/** Give the lock up (closing its file); harmless when not taken. */
void datadir_close(struct daemon *d);

/* ---- notify.c: systemd ------------------------------------------------- */

/** READY=1 with the first STATUS= (once listening). */
void notify_ready(struct daemon *d);
/** STATUS= with peer counts (rate-limited; force to send now). */
void notify_status(struct daemon *d, bool force);
/** STOPPING=1 (shutdown began). */
void notify_stopping(struct daemon *d);

/* ---------------------------------------------------------------------- */
/* The daemon                                                              */

struct daemon {
	uv_loop_t *loop;
	const struct peerd_conf *conf;
	const struct proto_params *params;
	struct dlog log;
	int64_t start_time;  /**< unix seconds */
	uint64_t start_ms;   /**< loop time */
	uint8_t sip_key[16]; /**< salt for every fingerprint (known inv, relay map, rejects, addr,
	                        discouraged) */
	uint64_t max_sendq;  /**< maxsendbuffer in bytes */
	uint64_t max_recvq;  /**< maxreceivebuffer in bytes */
	uint64_t peertimeout_ms;
	uint32_t maxconnections; /**< after the RLIMIT_NOFILE check */

	/* listeners */
	uv_tcp_t *listeners;
	uint32_t n_listeners;
	/* Rejecting a connection when even its handle cannot be allocated
	 * (net/net.c accept_and_close): a preallocated handle, whether it is still
	 * closing, and which listeners wait for it. */
	uv_tcp_t reject_spare;
	bool reject_busy;
	bool reject_waiting[NET_MAX_LISTENERS];

	/* peers, sorted by id (ids only grow, so append keeps the order) */
	struct peer **peers;
	uint32_t n_peers, cap_peers;
	uint64_t next_peer_id;
	uint32_t n_inbound, n_outbound; /**< connected (not CONNECTING), not closing */

	/* outbound */
	struct net_target **targets;
	uint32_t n_targets;

	/* timers and signals */
	uv_timer_t tick;
	uint32_t tick_count;
	uv_signal_t sig_term, sig_int, sig_hup;
	bool pidfile_written;  /**< -pid file written: removed at exit */
	bool network_inactive; /**< setnetworkactive false: no P2P activity */
	uv_timer_t shutdown_timer;
	bool shutting_down;
	int lock_fd; /**< <netdir>/.lock, held while running; valid only when `locked` */
	bool locked;
	uint64_t last_status_ms;
	char last_status[192];

	/* a full disk, a fatal error (node/diskspace.c) */
	int exit_status;        /**< peerd's exit status once stopped (1: fatal error) */
	uint64_t disk_check_at; /**< loop time of the next free-space check */
	uint64_t disk_check_ms; /**< between free-space checks */

	struct ctl_server ctl;
	struct inv_state inv;
	struct addr_state addr;
	struct ban_state ban;
	struct daemon_stats stats;

	/* codec scratch, reused by every message: steady state allocates nothing */
	struct proto_msg in;     /**< the message being handled */
	struct proto_msg out;    /**< the message being sent */
	struct proto_writer txw; /**< growable; frames are encoded here */
	/** Magic and "block" of a block frame: the first piece of every block served. */
	uint8_t block_prefix[16];

	/** The validation thread, which owns the chain and its check queue. */
	struct validation val;
	/** The active chain as the validation thread last published it. */
	struct chainview view;
	/** Headers sync and block download. */
	struct sync_state sync;
	/** maxrecvmemory: all peers' large rx buffers together. */
	struct recvbudget rxb;
	/** Transaction relay: the mempool's mirror, announcements, orphans. */
	struct txrelay_state txr;
	/** The Prometheus endpoint (ctl/metrics.c); NULL without metricsbind=. */
	struct metrics *metrics;
};

/**
 * Set up the daemon's state for `loop` and `c` (kept by reference): limits,
 * log, codec scratch, inventory and address state. Opens no handle and
 * touches no file (bans: ban_init; listeners, timers, signals: main.c).
 * 0, or -ENOMEM. Loop thread. (context.c)
 */
int daemon_init(struct daemon *d, uv_loop_t *loop, const struct peerd_conf *c);
/** Free what daemon_init and the modules allocated; handles must be closed already. */
void daemon_release(struct daemon *d);

/** Begin a clean shutdown (signals, the stop method). Idempotent. */
void daemon_shutdown(struct daemon *d, const char *why);

/** Loop time in milliseconds. */
static inline uint64_t daemon_now_ms(const struct daemon *d)
{
	return uv_now(d->loop);
}

/** Salted 64-bit fingerprint of bytes. */
static inline uint64_t daemon_fingerprint(const struct daemon *d, const void *data, size_t len)
{
	return proto_siphash(d->sip_key, data, len);
}

/* ---- ctl/metrics.c / ctl/metrics_text.c: the Prometheus endpoint ----- */

struct metrics;
/**
 * Start the HTTP server on metricsbind= (nothing without it) in its own
 * thread, and a 1 s timer that republishes getstats' figures as
 * Prometheus text. After validation_open. 0 or a negative errno (logged).
 * Loop thread.
 */
int metrics_start(struct daemon *d);
/** Stop the HTTP server (joins its thread) and close the timer. Idempotent. Loop thread. */
void metrics_close(struct daemon *d);
/** Free what metrics_start allocated; after validation_release. Loop thread. */
void metrics_release(struct daemon *d);
/**
 * getstats' result `stats` (stats_json merged with ctl_chain_getstats'
 * part) in Prometheus' text exposition format. Returns an xmalloc'd
 * string the caller frees with xfree (its length in *len), or NULL when
 * out of memory. Any thread.
 */
char *metrics_render(struct json_t *stats, size_t *len);

#endif
