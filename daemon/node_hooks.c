/*
 * daemon/node_hooks.c: node/'s hooks, the one place that says which rooms
 * hear from the validation thread (Core's CValidationInterface
 * subscribers; btcd's server subscribing to blockchain notifications).
 *
 * node/ runs jobs and keeps the loop's chain view; after a job and on a
 * new tip it calls struct node_hooks (daemon/node/node.h), which
 * daemon_init points at the table below. The rooms that listen, sync/ and
 * txrelay/, are siblings that never call each other, so what both must
 * do on a new tip is put in order here, in the wiring, which may name
 * every room.
 */
#include "daemon/program.h"

/* Initial block download ended: the feefilter that asked for no
 * transactions is lifted (txrelay/feefilter.c sends Core's filter to every
 * peer told the IBD one). */
static void on_ibd_over(struct daemon *d)
{
	if (d->peers)
		txrelay_ibd_over(d);
}

/*
 * The active chain moved. The order is the one peerd always had: recent
 * rejects are forgotten first (they may be valid on the new tip: Core's
 * ActiveTipChange), then the tip is announced to peers (sync/announce.c),
 * then the download window is refreshed (sync/download.c), and the
 * stale-tip check learns the tip is fresh (sync/stale.c).
 */
static void on_new_tip(struct daemon *d, const struct chainview_update *u)
{
	/* notify/commands.c: -blocknotify, with or without peers. */
	notify_block_tip(d, u);
	/* ctl/warnings.c: Core's unknown-rules warning and its -alertnotify. */
	daemon_warnings_new_tip(d, u);
	/* ctl/longpoll.c: getblocktemplate longpolls waiting for a new tip. */
	ctl_longpoll_new_tip(d);
	/* The peer rooms only once peers exist (node/ asked for that before). */
	if (!d->peers)
		return;
	txrelay_new_tip(d);
	relay_new_tip(d, u);
	sync_new_tip(d);
	stale_new_tip(d);
	/* net/outbound.c: near the tip, extra block-relay-only peers start. */
	const struct chainview_rec *tip = chainview_at(d, chainview_height(d));
	if (tip) {
		const uint8_t *t = tip->header + 68; /* nTime */
		net_outbound_tip(d, (int64_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 |
		                              (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24));
	}
}

/*
 * Validation thread, after every job: the ZMQ notifications and the
 * compact-block push (sync/cmpct_recent.c) start listening to the chain
 * on the first call (notify/zmq_events.c),
 * then the mempool's changes go to relay (txrelay/announce.c).
 */
static struct val_job *on_feed_take(struct daemon *d, struct chain *c, struct mempool *mp)
{
	notify_zmq_attach(d, c, mp);
	fees_hooks_attach(d, c, mp);
	/* sync/cmpct_recent.c: new blocks to high-bandwidth peers before
	 * they are connected (Core's NewPoWValidBlock). */
	sync_cmpct_attach(d, c);
	return txrelay_feed_take(d, c, mp);
}

const struct node_hooks daemon_node_hooks = {
    .ibd_over = on_ibd_over,
    .new_tip = on_new_tip,
    .invalid_chain = daemon_warnings_new_tip,
    /* The mempool's changes for relay (txrelay/announce.c), taken on the
     * validation thread after every job. */
    .feed_take = on_feed_take,
    /* A reindex's progress as systemd's STATUS= line (sdnotify.c). */
    .startup_status = sdnotify_text,
};
