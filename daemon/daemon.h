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
 * face (issue 19 moves each room's declarations into its own header; the
 * types they share stay here for now): base/hset.h, daemon/node/log.h,
 * daemon/net/net.h, daemon/p2p/p2p.h, daemon/node/node.h,
 * daemon/txrelay/orphanage.h, daemon/txrelay/txrelay.h, daemon/sync/sync.h,
 * daemon/ctl/ctl.h.
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

/* ---- net/: connections, framing, the receive budget, bans (its own header) --- */

#include "daemon/net/net.h"

/* ---- p2p/: handshake, inventory, addresses (its own header) --- */

#include "daemon/p2p/p2p.h"

/* ---- node/: the chain view, the validation thread (its own header) --- */

#include "daemon/node/node.h"

/* ---- txrelay/announce.c / txrelay/accept.c: transaction relay (its own header) --- */

#include "daemon/txrelay/txrelay.h"

/* ---- sync/download.c / sync/presync.c: block download and presync (its own header) --- */

#include "daemon/sync/sync.h"

/* ---- ctl/: the control socket, stats, metrics (its own header) --- */

#include "daemon/ctl/ctl.h"

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

	/** The message table, indexed by command (net/net.h; daemon_init sets daemon_msg_table). */
	const struct net_msg_entry *msg_table;
	/** The connection events (net/net.h; daemon_init sets daemon_net_events). */
	const struct net_events *net_events;

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

/**
 * The message table (msgtable.c): each command's handler, the handshake
 * states it may arrive in and its count limit. The one place that names
 * every P2P message handler.
 */
extern const struct net_msg_entry daemon_msg_table[PROTO_CMD__COUNT];
/**
 * The connection events (netevents.c): what each room does when a peer
 * opens, goes, closes, drains or ticks, in order. The one place net/'s
 * calls up are named.
 */
extern const struct net_events daemon_net_events;

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

#endif
