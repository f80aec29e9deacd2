/**
 * daemon/program.h: the node program's top: creating and freeing the
 * rooms' state (context.c), the message table (msgtable.c), the data
 * directory's lock (datadir.c) and systemd's notifications (sdnotify.c).
 *
 * The one header that sees every room: main.c, the unit tests' fixtures,
 * the fuzz targets and the benchmarks include it to build a whole daemon.
 * No room includes it (scripts/check-layers.py).
 */
#ifndef PEERD_DAEMON_PROGRAM_H
#define PEERD_DAEMON_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/ctl/ctl.h"
#include "daemon/daemon.h"
#include "daemon/net/net.h"
#include "daemon/node/node.h"
#include "daemon/notify/notify.h"
#include "daemon/p2p/p2p.h"
#include "daemon/sync/sync.h"
#include "daemon/txrelay/txrelay.h"

/** The housekeeping timer's period: timeouts are checked this often. */
#define DAEMON_TICK_MS 250u
/** Every this many ticks: transaction requests, reconnects, ban expiry, STATUS=. */
#define DAEMON_SLOW_TICKS 4u
/** sd_notify STATUS= is refreshed at most this often. */
#define DAEMON_STATUS_MS 1000u
/** SIGTERM/SIGINT: whatever is still open after this is force-closed. */
#define DAEMON_SHUTDOWN_GRACE_MS 3000u
/** File descriptors kept for everything but peers (control clients, listeners, files). */
#define DAEMON_FD_RESERVE 160

/* ---- index_hooks.c: the optional indexes ---------------------------- */

/**
 * After validation_open: open -txindex's and -blockfilterindex's
 * databases into d->indexes and start their background catch-up on the
 * validation thread. 0 or -EIO (logged). Loop thread, startup.
 */
int daemon_index_start(struct daemon *d);
/** After validation_release (the thread is gone): close the indexes. */
void daemon_index_release(struct daemon *d);

/* ---- context.c: the rooms' state ------------------------------------- */

/**
 * Set up the daemon's state for `loop` and `c` (kept by reference):
 * allocate every room's state and set up what needs no handle and no
 * file: limits, log, codec scratch, inventory and address state (bans:
 * ban_init; listeners, timers, signals: main.c). 0, or -ENOMEM (then
 * daemon_release frees what was made). Loop thread.
 */
int daemon_init(struct daemon *d, uv_loop_t *loop, const struct peerd_conf *c);
/** Free what daemon_init and the rooms allocated; handles must be closed already. */
void daemon_release(struct daemon *d);

/**
 * The message table (msgtable.c): each command's handler, the handshake
 * states it may arrive in and its count limit. The one place that names
 * every P2P message handler.
 */
extern const struct p2p_msg_entry daemon_msg_table[PROTO_CMD__COUNT];

/**
 * The connection events (netevents.c): what each room does when a peer
 * is created, opens, goes, closes, drains, ticks or sends a message, in
 * order. The one place net/'s calls up are named.
 */
extern const struct net_events daemon_net_events;
/** p2p/'s hooks into sync/ and txrelay/ (p2p_hooks.c). */
extern const struct p2p_hooks daemon_p2p_hooks;
/** node/'s hooks (node_hooks.c): sync/ and txrelay/ on a new tip, txrelay/'s feed. */
extern const struct node_hooks daemon_node_hooks;
/** sync/'s hooks (sync_hooks.c): transactions of a getdata served by txrelay/. */
extern const struct sync_hooks daemon_sync_hooks;

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

/* ---- sdnotify.c: systemd ------------------------------------------------- */

/** READY=1 with the first STATUS= (once listening). */
void sdnotify_ready(struct daemon *d);
/** STATUS= with peer counts (rate-limited; force to send now). */
void sdnotify_status(struct daemon *d, bool force);
/** STATUS=text now (a long startup step's progress: node/'s startup_status hook). */
void sdnotify_text(struct daemon *d, const char *text);
/** STOPPING=1 (shutdown began). */
void sdnotify_stopping(struct daemon *d);

/* ---- fees_hooks.c: fee estimation fed from the pool and the chain ---- */

struct chain;
struct mempool;
/**
 * Make the estimator and read <netdir>/fee_estimates.dat (unless older than
 * 60 hours without -acceptstalefeeestimates), before the validation thread
 * starts. Nothing under -blocksonly. 0 or -ENOMEM. Loop thread.
 */
int fees_hooks_start(struct daemon *d);
/**
 * Validation thread, after every job: listen to the chain and the pool on
 * the first call; then write the file every hour (Core's FEE_FLUSH_INTERVAL).
 */
void fees_hooks_attach(struct daemon *d, struct chain *c, struct mempool *mp);
/** After the validation thread was joined: write the file (as Core's Flush) and free. */
void fees_hooks_close(struct daemon *d);

#endif
