/*
 * daemon/netevents.c: the connection events, the one place that names what
 * each room does when a peer opens, goes, closes, drains, ticks or sends a
 * whole message (Bitcoin Core's PeerManagerImpl implements
 * NetEventsInterface for all of them, ProcessMessages included; here the
 * wiring calls each room in turn, so the order between rooms is written
 * once, below).
 *
 * net/ defines the struct (net/net.h) and calls through it; daemon_init
 * registers this table in struct daemon's net_events. A room that keeps
 * per-peer state defines its part (struct p2p_peer, sync_peer,
 * txrequest_peer), adds it to struct peer_parts below and its pointer to
 * struct peer, and frees what the part holds in its closed call.
 *
 * Why a file of its own and not msgtable.c: the message table is one entry
 * per command, this is one function per event; each file is one table, and
 * the other seams of issue 19 (validation hooks, chain listeners) add their
 * own wiring beside these without touching either.
 */
#include "daemon/program.h"

#include <errno.h>

#include "base/alloc.h"

/*
 * The rooms' parts of one peer, in one allocation made when the peer is
 * (as context.c makes the rooms' states): each room defines its part in
 * its header and reaches it through its own pointer in struct peer.
 */
struct peer_parts {
	struct p2p_peer p2p;
	struct sync_peer sync;
	struct txrequest_peer txreq;
};

static int on_created(struct peer *p)
{
	struct peer_parts *parts = xcalloc(1, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	p->parts = parts;
	p->p2p = &parts->p2p;
	p->sync = &parts->sync;
	p->txreq = &parts->txreq;
	sync_peer_init(p);
	return 0;
}

/* After on_closed (each room let go of what its part holds), or when
 * peer_new gave up. */
static void on_destroyed(struct peer *p)
{
	xfree(p->parts);
	p->parts = NULL;
	p->p2p = NULL;
	p->sync = NULL;
	p->txreq = NULL;
}

/* An outbound peer speaks first (Core's PushNodeVersion in InitializeNode
 * for outbound connections); an inbound one waits for the version. Then
 * sd_notify's STATUS= shows the new count. */
static void on_opened(struct peer *p)
{
	if (!p->inbound)
		handshake_send_version(p);
	sdnotify_status(p->d, false);
}

/* The count changed. Not while shutting down: every peer goes then, and
 * the status already says so (STOPPING=1). */
static void on_disconnected(struct peer *p)
{
	if (!p->d->shutting_down)
		sdnotify_status(p->d, false);
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

/* Handshake and ping timeouts, pings; the address queue's timer. */
static void on_tick(struct peer *p, uint64_t now_ms)
{
	handshake_tick(p, now_ms);
	/* Core times address relay by its mockable clock, pings by the steady one. */
	addrrelay_tick(p, (uint64_t)daemon_time_ms(p->d));
}

/* A whole message, framed and counted by net/: p2p/ says what it means
 * (the gate, decoding, limits) and calls its entry in the message table
 * (msgtable.c), whichever room the handler lives in. */
static void on_message(struct peer *p, const struct proto_frame_header *h, const uint8_t *payload)
{
	p2p_dispatch(p, h, payload);
}

const struct net_events daemon_net_events = {
    .created = on_created,
    .destroyed = on_destroyed,
    .opened = on_opened,
    .disconnected = on_disconnected,
    .closed = on_closed,
    .drained = on_drained,
    .busy = on_busy,
    .tick = on_tick,
    .message = on_message,
};
