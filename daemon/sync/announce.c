/*
 * daemon/sync/announce.c: announcing a new tip to peers, as Core 29's SendMessages
 * does with the blocks UpdatedBlockTip queued for each peer:
 *   - a peer that asked for headers announcements (sendheaders) gets a
 *     headers message of the new blocks it does not know, when there are
 *     at most 8 of them (MAX_BLOCKS_TO_ANNOUNCE);
 *   - otherwise, and to every other peer, an inv of the tip;
 *   - nothing to a peer known to have the tip already: the one it came
 *     from (which announced or sent it), or one told before.
 * Every hash announced is remembered in the peer's known-inventory set, so
 * a tip is never announced twice to the same peer.
 *
 * relay_new_tip is one part of node/'s new_tip hook; the wiring
 * (daemon/node_hooks.c) calls txrelay/'s part before it and the download's
 * after it, so this file names nothing of txrelay/.
 */
#include "daemon/sync/sync.h"

#include <string.h>

/* Headers for recs[first..n-1] of the update, framed from the serialized headers. */
static void announce_headers(struct peer *p, const struct chainview_update *u, uint32_t first)
{
	struct daemon *d = p->d;
	struct proto_writer *w = &d->txw;
	w->len = 0;
	w->err = 0;
	size_t start = proto_frame_begin(w);
	proto_write_compact(w, u->n - first);
	for (uint32_t i = first; i < u->n; i++) {
		proto_write_bytes(w, u->recs[i].header, PROTO_BLOCK_HEADER_SIZE);
		proto_write_u8(w, 0);
	}
	proto_frame_end(w, start, d->params->magic, "headers");
	if (w->err)
		return;
	peer_send_frame(p, PROTO_CMD_HEADERS, w->buf, w->len);
	for (uint32_t i = first; i < u->n; i++)
		inv_known_add(p, &u->recs[i].hash);
	d->stats.blocks_announced_headers += u->n - first;
}

static void announce_inv(struct peer *p, const struct proto_hash *tip)
{
	struct daemon *d = p->d;
	struct proto_inv *inv = &d->out.inv;
	if (proto_inv_reserve(inv, 1))
		return;
	inv->v[0] = (struct proto_inv_vec){.type = PROTO_INV_BLOCK, .hash = *tip};
	inv->n = 1;
	d->out.cmd = PROTO_CMD_INV;
	if (peer_send_msg(p, &d->out) == 0) {
		inv_known_add(p, tip);
		d->stats.blocks_announced_inv++;
	}
	inv->n = 0;
}

static void announce(struct peer *p, const struct chainview_update *u)
{
	const struct proto_hash *tip = &u->recs[u->n - 1].hash;
	if (inv_known_has(p, tip))
		return;
	if (p->sendheaders && u->n <= RELAY_MAX_BLOCKS_TO_ANNOUNCE) {
		/* Only what the peer lacks: after the last block it knows. */
		uint32_t first = 0;
		for (uint32_t i = u->n; i-- > 0;) {
			if (inv_known_has(p, &u->recs[i].hash)) {
				first = i + 1;
				break;
			}
		}
		announce_headers(p, u, first);
		return;
	}
	announce_inv(p, tip);
}

void relay_new_tip(struct daemon *d, const struct chainview_update *u)
{
	/* Core's UpdatedBlockTip: no announcements during initial block
	 * download. */
	if (u->ibd)
		return;
	/* The first view (the chain as opened) is no news to anyone. */
	if (u->old_height < 0 || u->n == 0)
		return;
	/* High-bandwidth peers first: marked as knowing the tip, they get a
	 * cmpctblock instead (sync/cmpct_hb.c). */
	sync_cmpct_hb_push(d, u);
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->state != PEER_ACTIVE || !p->handshake_done)
			continue;
		announce(p, u);
	}
}
