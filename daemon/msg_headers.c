/*
 * daemon/msg_headers.c: getheaders, getblocks and headers until chain/
 * exists.
 *
 * peerd's chain is the network's genesis block, so it answers as Bitcoin
 * Core would with that chain:
 *   getheaders with an empty locator asks for the one header named by
 *     hash_stop: the genesis header if that is what was asked, else no
 *     reply (Core: "if (!pindex) return").
 *   getheaders with a locator: the fork point is the first locator hash on
 *     peerd's chain, or genesis when none is; the reply holds the headers
 *     after it, which is none, so an empty headers message.
 *   getblocks: nothing follows genesis, so nothing to announce.
 *   A locator of more than 101 hashes (MAX_LOCATOR_SZ) disconnects.
 *   headers received are decoded and counted; over 2,000 in one message is
 *     misbehaviour (see transport.c and ban.c).
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <string.h>

static int genesis_header(const struct daemon *d, struct proto_block_header *h)
{
	struct proto_reader r;
	proto_reader_init(&r, d->params->genesis, d->params->genesis_len);
	return proto_block_header_decode(&r, h);
}

static void on_getheaders(struct peer *p, const struct proto_locator *l)
{
	struct daemon *d = p->d;
	struct proto_headers *out = &d->out.headers;
	out->n = 0;
	if (l->n == 0) {
		if (!proto_hash_eq(&l->stop, &d->params->genesis_hash)) {
			DLOG_DBG(&d->log, DLOG_MSG,
			         "getheaders for an unknown block from peer=%llu: no reply",
			         (unsigned long long)p->id);
			return;
		}
		if (out->cap < 1) {
			struct proto_block_header *n = xreallocarray(out->h, 1, sizeof(*n));
			if (!n)
				return;
			out->h = n;
			out->cap = 1;
		}
		if (genesis_header(d, &out->h[0]))
			return;
		out->n = 1;
	}
	d->out.cmd = PROTO_CMD_HEADERS;
	if (peer_send_msg(p, &d->out) == 0)
		d->stats.getheaders_answered++;
	out->n = 0;
}

void headers_on_msg(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	switch (m->cmd) {
	case PROTO_CMD_GETHEADERS:
	case PROTO_CMD_GETBLOCKS:
		if (m->locator.n > PROTO_MAX_LOCATOR_HANDLER) {
			peer_disconnect(p, "locator over 101 hashes");
			return;
		}
		if (m->cmd == PROTO_CMD_GETHEADERS)
			on_getheaders(p, &m->locator);
		break;
	case PROTO_CMD_HEADERS:
		if (m->headers.n > PROTO_MAX_HEADERS) {
			ban_misbehaving(p, "headers message size over 2000");
			return;
		}
		d->stats.headers_msgs++;
		d->stats.headers_entries += m->headers.n;
		break;
	default:
		break;
	}
}
