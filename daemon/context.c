/*
 * daemon/context.c: setting up and freeing struct daemon's state.
 *
 * Kept out of main.c so peerd, the unit-test fixture and the transport
 * fuzz target build their daemon the same way. daemon_init allocates the
 * rooms' states and registers the wiring's tables (the message table, the
 * connection events, p2p/'s, node/'s and sync/'s hooks).
 */
#include "daemon/program.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "addrman/addrman.h"
#include "base/alloc.h"

/*
 * Every room's state in one allocation, made by daemon_init and freed last
 * by daemon_release: struct daemon holds a pointer into it for each room
 * (daemon.h names only their types), and the rooms' own init functions set
 * them up in place as before.
 */
struct daemon_rooms {
	struct net_state net;
	struct recvbudget rxb;
	struct ban_state ban;
	struct validation val;
	struct chainview view;
	struct txrequest_state txreq;
	struct addr_state addr;
	struct sync_state sync;
	struct txrelay_state txr;
	struct ctl_server ctl;
	struct notify_state notify;
};

int daemon_init(struct daemon *d, uv_loop_t *loop, const struct peerd_conf *c)
{
	memset(d, 0, sizeof(*d));
	struct daemon_rooms *r = xcalloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	d->rooms = r;
	d->net = &r->net;
	d->rxb = &r->rxb;
	d->ban = &r->ban;
	d->val = &r->val;
	d->view = &r->view;
	d->txreq = &r->txreq;
	d->addr = &r->addr;
	d->sync = &r->sync;
	d->txr = &r->txr;
	d->ctl = &r->ctl;
	d->notify = &r->notify;
	d->loop = loop;
	d->conf = c;
	d->params = c->params;
	dlog_init(&d->log, c);
	d->start_time = (int64_t)time(NULL);
	d->start_ms = uv_now(loop);
	proto_random(d->sip_key, sizeof(d->sip_key));
	d->net->max_sendq = (uint64_t)c->maxsendbuffer_kb * 1000u;
	d->net->max_recvq = (uint64_t)c->maxreceivebuffer_kb * 1000u;
	d->net->peertimeout_ms = (uint64_t)c->peertimeout_s * 1000u;
	d->net->maxconnections = c->maxconnections > 0 ? (uint32_t)c->maxconnections : 0;
	net_init_limits(d);
	net_reach_defaults(d); /* net_reach_init reads the options at start */
	d->msg_table = daemon_msg_table;
	d->net_events = &daemon_net_events;
	d->p2p_hooks = &daemon_p2p_hooks;
	d->node_hooks = &daemon_node_hooks;
	recvbudget_init(d, c);
	proto_msg_init(&d->in);
	proto_msg_init(&d->out);
	proto_writer_init(&d->txw);
	chainview_init(d->view);
	sync_init(d);
	d->sync->hooks = &daemon_sync_hooks;
	addrman_netaddr_set_loopback_routable(c->test_addrmanloopback);
	d->addrman = addrman_new(c->test_addrman, c->checkaddrman);
	if (!d->addrman || txrequest_init(d) || addr_init(d) || txrelay_init(d))
		return -ENOMEM;
	return 0;
}

void daemon_release(struct daemon *d)
{
	if (!d->rooms)
		return; /* daemon_init could not allocate them: nothing else was made */
	ban_release(d);
	/* Last of what touches the netdir: bans are saved before the lock goes. */
	datadir_close(d);
	txrequest_release(d);
	addr_release(d);
	addrman_free(d->addrman);
	d->addrman = NULL;
	proto_msg_release(&d->in);
	proto_msg_release(&d->out);
	proto_writer_release(&d->txw);
	xfree(d->peers);
	d->peers = NULL;
	xfree(d->net->listeners);
	d->net->listeners = NULL;
	/* Results still queued may update the view: it goes after them. */
	validation_release(d);
	/* The validation thread was the indexes' only user. */
	daemon_index_release(d);
	/* After the validation thread, the only one that queues for it. */
	notify_zmq_stop(d);
	txrelay_release(d);
	metrics_release(d);
	chainview_release(d->view);
	sync_release(d);
	xfree(d->rooms);
	d->rooms = NULL;
}
