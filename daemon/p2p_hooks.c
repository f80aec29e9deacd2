/*
 * daemon/p2p_hooks.c: p2p/'s hooks into the rooms above it (struct p2p_hooks,
 * daemon/p2p/p2p.h), filled here because the wiring is the one place that
 * may name every room: p2p/ parses inv, getdata and notfound and runs the
 * handshake, and hands what is sync/'s or txrelay/'s business up through
 * this table without naming either (Bitcoin Core's NetEventsInterface,
 * btcd's MessageListeners). daemon_init registers it in d->p2p_hooks.
 *
 * Whole messages that belong to one room (tx, block, headers) need no hook:
 * their message-table entries (msgtable.c) name the room's handler.
 */
#include "daemon/program.h"

/* Block sync starts first (Core's "start block sync": a getheaders if this
 * peer is one), then transaction relay (Core's first feefilter); the first
 * may have disconnected p. */
static void peer_ready(struct peer *p)
{
	sync_peer_ready(p);
	if (p->state == PEER_ACTIVE)
		txrelay_peer_ready(p);
}

const struct p2p_hooks daemon_p2p_hooks = {
    .peer_ready = peer_ready,
    /* txrelay/announce.c: its queue and orphan announcements go. */
    .peer_gone = txrelay_peer_gone,
    /* sync/download.c: a headers sync toward the announced block. */
    .block_announced = sync_on_block_inv,
    /* txrelay/accept.c, then txrelay/request.c: Core's AddTxAnnouncement. */
    .tx_announced = txaccept_tx_announced,
    .tx_notfound = txrequest_on_notfound,
    /* sync/serve.c: every entry answered in order, blocks read on the
     * validation thread. */
    .getdata_queue = serve_queue,
    .getdata_done = serve_next,
    /* txrelay/announce.c: no chain open (unit tests). */
    .getdata_tx = txrelay_serve,
};
