/**
 * daemon/daemon.h: the node program's shared services, the one header
 * every room of daemon/ includes: the loop, the configuration, the log,
 * the counters, the peer list, the codec scratch, and a pointer to each
 * room's state (as Core's NodeContext). It names no room's types beyond
 * forward declarations: each room's header (net/net.h, node/node.h,
 * p2p/p2p.h, sync/sync.h, txrelay/txrelay.h, ctl/ctl.h) says what the
 * room offers, and a room includes only the headers of the rooms below it
 * (doc/architecture.md; scripts/check-layers.py keeps it so).
 *
 * Glossary
 *   loop thread  the one thread running the libuv loop. It owns every
 *                socket, timer and every field reachable from struct
 *                daemon; nothing here is locked. The validation thread
 *                (node/validation.c) and pool/'s workers never touch it.
 *   room         a folder of daemon/ with one responsibility and one
 *                public header: net, node, p2p, sync, txrelay, ctl.
 *   wiring       daemon/'s top files (main.c, context.c and the tables):
 *                the one place that names every room, creates their
 *                state and registers the callbacks through which a lower
 *                room tells a higher one something.
 *
 * Ownership: struct daemon owns everything reachable from it; the rooms'
 * states are allocated by daemon_init (context.c) and freed by
 * daemon_release.
 */
#ifndef PEERD_DAEMON_H
#define PEERD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "base/clock.h"
#include "base/version.h"
#include "conf/conf.h"
#include "daemon/log.h"
#include "daemon/stats.h"
#include "proto/proto.h"

/** getnetworkinfo "subversion" and the log's first line. */
#define DAEMON_VERSION_STRING PEERD_VERSION_STRING
/**
 * getnetworkinfo "version": the Core release whose interface peerd answers
 * as (Core 29.0, as Core's 10000*major + 100*minor + patch), so tools that
 * gate on it work (bitcoin-cli -netinfo wants 209900 or more); peerd's own
 * version is in "subversion" (doc/differences.md).
 */
#define DAEMON_VERSION_NUMBER 290000

/* Each room's state, defined in its header (the room that owns it). */
struct addr_state;      /* p2p/p2p.h */
struct addrman;         /* addrman/addrman.h */
struct ban_state;       /* net/net.h */
struct chainview;       /* node/node.h */
struct daemon_rooms;    /* daemon/context.c */
struct ctl_server;      /* ctl/ctl.h */
struct metrics;         /* ctl/ctl.h */
struct net_state;       /* net/net.h */
struct node_hooks;      /* node/node.h */
struct notify_state;    /* notify/notify.h */
struct fees_estimator;  /* fees/fees.h */
struct fees_feed;       /* daemon/fees_hooks.c */
struct p2p_hooks;       /* p2p/p2p.h */
struct p2p_msg_entry;   /* p2p/p2p.h */
struct peer;            /* net/net.h */
struct recvbudget;      /* net/net.h */
struct sync_state;      /* sync/sync.h */
struct txrelay_state;   /* txrelay/txrelay.h */
struct txrequest_state; /* txrelay/txrelay.h */
struct validation;      /* node/node.h */

struct daemon {
	/* the shared services */
	uv_loop_t *loop;
	const struct peerd_conf *conf;
	const struct proto_params *params;
	struct dlog log;
	struct daemon_stats stats; /**< getstats' counters, bumped by every room */
	int64_t start_time;        /**< unix seconds */
	uint64_t start_ms;         /**< loop time */
	uint8_t sip_key[16]; /**< salt for every fingerprint (known inv, relay map, rejects, addr,
	                        discouraged) */

	/** The address manager (Core's NodeContext::addrman): net/ chooses outbound peers from
	 * it and reports attempts; p2p/ feeds it from addr messages and answers getaddr. */
	struct addrman *addrman;

	/* the peers, sorted by id (ids only grow, so append keeps the order); net/ keeps them */
	struct peer **peers;
	uint32_t n_peers, cap_peers;
	uint64_t next_peer_id;
	uint32_t n_inbound, n_outbound; /**< connected (not CONNECTING), not closing */

	/* codec scratch, reused by every message: steady state allocates nothing */
	struct proto_msg in;     /**< the message being handled */
	struct proto_msg out;    /**< the message being sent */
	struct proto_writer txw; /**< growable; frames are encoded here */
	/** Magic and "block" of a block frame: the first piece of every block served. */
	uint8_t block_prefix[16];

	/* the rooms' states (daemon_init allocates them) */
	struct net_state *net;     /**< listeners, outbound targets, limits (net/) */
	struct recvbudget *rxb;    /**< maxrecvmemory: all peers' large rx buffers (net/) */
	struct ban_state *ban;     /**< setban entries, discouraged addresses (net/) */
	struct validation *val;    /**< the validation thread, owner of the chain (node/) */
	struct chainview *view;    /**< the active chain as last published (node/) */
	struct addr_state *addr;   /**< addresses heard (p2p/) */
	struct sync_state *sync;   /**< headers sync and block download (sync/) */
	struct txrelay_state *txr; /**< the mempool's mirror, announcements, orphans (txrelay/) */
	struct txrequest_state *txreq; /**< the transaction request tracker (txrelay/) */
	struct ctl_server *ctl;        /**< the control socket (ctl/) */
	struct notify_state *notify;   /**< ZMQ and the notification commands (notify/) */
	/** -txindex, -blockfilterindex (index/; NULL: none): opened at startup
	 * (index_hooks.c), then used on the validation thread only. */
	struct index_set *indexes;
	/** Fee estimation (fees/; NULL under -blocksonly): the validation thread's once it runs. */
	struct fees_estimator *fees;
	struct fees_feed *fees_feed; /**< what feeds it (daemon/fees_hooks.c) */
	struct metrics *metrics; /**< the Prometheus endpoint; NULL without metricsbind= (ctl/) */
	struct daemon_rooms *rooms; /**< the one allocation the pointers above point into */

	/* what the wiring registers (daemon_init) */
	/** The message table, indexed by command (p2p/p2p.h; daemon/msgtable.c). */
	const struct p2p_msg_entry *msg_table;
	/** The connection events (net/net.h; daemon/netevents.c). */
	const struct net_events *net_events;
	/** What node/ calls after a job and on a new tip (node/node.h; daemon/node_hooks.c). */
	const struct node_hooks *node_hooks;
	/** The rooms above p2p/, as p2p/ reaches them (p2p/p2p.h; daemon/p2p_hooks.c). */
	const struct p2p_hooks *p2p_hooks;
	/** Performs a shutdown (main.c sets it; NULL: daemon_shutdown only sets shutting_down). */
	void (*shutdown_fn)(struct daemon *d, const char *why);

	/* the program's own: timers, signals, the lock, systemd (main.c, datadir.c, notify.c) */
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
};

/**
 * Ask for a clean shutdown (signals, the stop method, a full disk, a
 * fatal error): calls d->shutdown_fn, which main.c registers and which
 * is idempotent; without one (unit tests, fuzz targets, benchmarks) only
 * sets d->shutting_down. Loop thread. node/ and ctl/ ask here; main.c,
 * which they may not name, performs it.
 */
static inline void daemon_shutdown(struct daemon *d, const char *why)
{
	if (d->shutdown_fn)
		d->shutdown_fn(d, why);
	else
		d->shutting_down = true;
}

/** Loop time in milliseconds. */
static inline uint64_t daemon_now_ms(const struct daemon *d)
{
	return uv_now(d->loop);
}

/** The node's mockable clock in unix seconds (Core's GetTime: the mock time
 * of -mocktime/setmocktime when set, base/clock.h). Any thread. */
static inline int64_t daemon_time(const struct daemon *d)
{
	(void)d;
	return base_time();
}

/** The mockable clock in unix milliseconds (Core's NodeClock). Any thread. */
static inline int64_t daemon_time_ms(const struct daemon *d)
{
	(void)d;
	return base_time_ms();
}

/** Salted 64-bit fingerprint of bytes. */
static inline uint64_t daemon_fingerprint(const struct daemon *d, const void *data, size_t len)
{
	return proto_siphash(d->sip_key, data, len);
}

#endif
