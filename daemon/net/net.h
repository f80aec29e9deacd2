/**
 * daemon/net/net.h: the net room's declarations: the message table's entry
 * and the connection events (what the wiring registers for net/ to call
 * up through), v1 framing on the rx buffer (transport.c), the receive
 * budget (recvbudget.c), bans (ban.c), listeners and outbound targets
 * (net.c).
 *
 * A part of daemon/daemon.h, which includes it where the types it uses
 * are known (issue 19: the first step of daemon.h's split into its rooms).
 */
#ifndef PEERD_DAEMON_NET_NET_H
#define PEERD_DAEMON_NET_NET_H

#ifndef PEERD_DAEMON_H
#error "include daemon/daemon.h, not daemon/net/net.h"
#endif

/* ---- the message table: what transport.c does with each command ----- */

/*
 * One entry per command (enum proto_cmd), filled by the wiring
 * (daemon/msgtable.c) and registered in struct daemon's msg_table at
 * start, as btcd's peer.MessageListeners: net/ frames, counts and gates
 * each message and calls the entry of its command, and never names a
 * handler itself. The handlers live in their rooms (p2p/, sync/, ...).
 */

/** Where a peer is in the handshake: the bits of net_msg_entry.states. */
enum net_msg_state {
	NET_MSG_BEFORE_VERSION = 1u << 0, /**< no version received yet */
	NET_MSG_BEFORE_VERACK = 1u << 1,  /**< version received, not yet past verack */
	NET_MSG_ACTIVE = 1u << 2,         /**< past the handshake */
};
/** Allowed from the peer's first message on. */
#define NET_MSG_ANY_STATE (NET_MSG_BEFORE_VERSION | NET_MSG_BEFORE_VERACK | NET_MSG_ACTIVE)
/** Allowed once version was received. */
#define NET_MSG_AFTER_VERSION (NET_MSG_BEFORE_VERACK | NET_MSG_ACTIVE)

/** What an element count over a command's limit costs the peer. */
enum net_msg_limit {
	NET_MSG_NO_LIMIT = 0,      /**< no count checked here */
	NET_MSG_LIMIT_MISBEHAVING, /**< disconnect and discourage (ban_misbehaving) */
	NET_MSG_LIMIT_DISCONNECT,  /**< disconnect only */
};

/** A handler of a decoded message. Loop thread; m is d->in, valid for the call. */
typedef void (*net_msg_fn)(struct peer *p, const struct proto_msg *m);
/**
 * A handler of a message's raw payload (not decoded on the loop, e.g. a
 * block for the validation thread): len bytes, and the frame's checksum as
 * a little-endian u32. The payload is valid for the call only.
 */
typedef void (*net_msg_raw_fn)(struct peer *p, const uint8_t *payload, size_t len,
                               uint32_t checksum);

/** One command's entry. A command with neither handler is counted and dropped. */
struct net_msg_entry {
	net_msg_fn on_msg;        /**< the decoded message, or NULL */
	net_msg_raw_fn on_raw;    /**< the undecoded payload instead (on_msg unused), or NULL */
	uint8_t states;           /**< enum net_msg_state bits it may arrive in; else ignored */
	uint8_t limit;            /**< enum net_msg_limit: what a count over count_max costs */
	uint8_t count_skip;       /**< payload bytes before the count (getheaders' version: 4) */
	uint32_t count_max;       /**< Core's limit on the leading CompactSize count */
	const char *limit_reason; /**< the disconnect reason logged for it */
};

/* ---- connection events: what net/ tells the rooms above it ---------- */

/*
 * net/ tells the rooms above it (p2p/, sync/, sd_notify) about a
 * connection only through these callbacks, as Core's net.cpp tells
 * PeerManager through NetEventsInterface (InitializeNode, FinalizeNode,
 * SendMessages): the wiring (daemon/netevents.c) fills them, calling each
 * room in its order, and daemon_init registers the table in struct
 * daemon's net_events. With the message table above (a message's event),
 * this is the whole boundary: net/ names no function of a higher room.
 * Every callback is set (net/ checks none for NULL); all run on the loop
 * thread and may disconnect the peer unless said otherwise.
 */
struct net_events {
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

#endif
