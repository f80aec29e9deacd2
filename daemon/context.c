/*
 * daemon/context.c: setting up and freeing struct daemon's state.
 *
 * Kept out of main.c so peerd, the unit-test fixture and the transport
 * fuzz target build their daemon the same way.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int daemon_init(struct daemon *d, uv_loop_t *loop, const struct peerd_conf *c)
{
	memset(d, 0, sizeof(*d));
	d->loop = loop;
	d->conf = c;
	d->params = c->params;
	dlog_init(&d->log, c);
	d->start_time = (int64_t)time(NULL);
	d->start_ms = uv_now(loop);
	proto_random(d->sip_key, sizeof(d->sip_key));
	d->max_sendq = (uint64_t)c->maxsendbuffer_kb * 1000u;
	d->max_recvq = (uint64_t)c->maxreceivebuffer_kb * 1000u;
	d->peertimeout_ms = (uint64_t)c->peertimeout_s * 1000u;
	d->maxconnections = c->maxconnections > 0 ? (uint32_t)c->maxconnections : 0;
	d->msg_table = daemon_msg_table;
	d->net_events = &daemon_net_events;
	recvbudget_init(d, c);
	proto_msg_init(&d->in);
	proto_msg_init(&d->out);
	proto_writer_init(&d->txw);
	chainview_init(&d->view);
	sync_init(d);
	if (inv_init(d) || addr_init(d) || txrelay_init(d))
		return -ENOMEM;
	return 0;
}

void daemon_release(struct daemon *d)
{
	ban_release(d);
	/* Last of what touches the netdir: bans are saved before the lock goes. */
	datadir_close(d);
	inv_release(d);
	addr_release(d);
	proto_msg_release(&d->in);
	proto_msg_release(&d->out);
	proto_writer_release(&d->txw);
	xfree(d->peers);
	d->peers = NULL;
	xfree(d->listeners);
	d->listeners = NULL;
	/* Results still queued may update the view: it goes after them. */
	validation_release(d);
	txrelay_release(d);
	metrics_release(d);
	chainview_release(&d->view);
	sync_release(d);
}
