/*
 * daemon/netevents.c: the connection events, the one place that names what
 * each room does when a peer opens, goes, closes, drains or ticks (Bitcoin
 * Core's PeerManagerImpl implements NetEventsInterface for all of them; here
 * the wiring calls each room in turn, so the order between rooms is written
 * once, below).
 *
 * net/ defines the struct (net/net.h) and calls through it; daemon_init
 * registers this table in struct daemon's net_events. A room that keeps
 * per-peer state adds its call to opened and closed here.
 *
 * Why a file of its own and not msgtable.c: the message table is one entry
 * per command, this is one function per event; each file is one table, and
 * the other seams of issue 19 (validation hooks, chain listeners) add their
 * own wiring beside these without touching either.
 */
#include "daemon/daemon.h"

/* An outbound peer speaks first (Core's PushNodeVersion in InitializeNode
 * for outbound connections); an inbound one waits for the version. Then
 * sd_notify's STATUS= shows the new count. */
static void on_opened(struct peer *p)
{
	if (!p->inbound)
		handshake_send_version(p);
	notify_status(p->d, false);
}

/* The count changed. Not while shutting down: every peer goes then, and
 * the status already says so (STOPPING=1). */
static void on_disconnected(struct peer *p)
{
	if (!p->d->shutting_down)
		notify_status(p->d, false);
}

/* Each room frees its per-peer state: known inventory and deferred
 * getdata, the block-serving queue, then the download's claims. */
static void on_closed(struct peer *p)
{
	inv_peer_gone(p);
	serve_peer_gone(p);
	sync_peer_gone(p);
}

/* Deferred getdata entries first, then the next queued block: both were
 * waiting for the send queue to drain. */
static void on_drained(struct peer *p)
{
	inv_getdata_resume(p);
	serve_next(p);
}

/* Blocks being read or queued for the peer's getdata. */
static bool on_busy(const struct peer *p)
{
	return serve_pending(p);
}

/* Handshake and ping timeouts, pings. */
static void on_tick(struct peer *p, uint64_t now_ms)
{
	handshake_tick(p, now_ms);
}

const struct net_events daemon_net_events = {
    .opened = on_opened,
    .disconnected = on_disconnected,
    .closed = on_closed,
    .drained = on_drained,
    .busy = on_busy,
    .tick = on_tick,
};
