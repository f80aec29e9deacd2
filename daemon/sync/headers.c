/*
 * daemon/sync/headers.c: getheaders, getblocks and headers.
 *
 * Replies come from the loop's copy of the active chain (node/chainview.c), so
 * the loop never waits for the validation thread to answer, as Core 29's
 * ProcessMessage does it:
 *   getheaders with a locator: the fork point is the first locator hash on
 *     the active chain (Core's FindForkInGlobalIndex), genesis when none
 *     is; the reply holds up to 2,000 headers after it, ending at
 *     hash_stop if that comes first.
 *   getheaders with an empty locator asks for the one header named by
 *     hash_stop; no reply when peerd does not have it on its chain.
 *   getblocks: an inv of up to 500 blocks after the fork point, ending
 *     before hash_stop (Core does not announce the stop block itself); a pruned node (-prune) sends
 * none when the first is HEADERS_PRUNED_LIKELY_TO_HAVE or more below the tip (Core's
 *     nPrunedBlocksLikelyToHave: 288 less an hour of blocks), since it
 *     might have dropped it before the peer asks.
 *   A locator of more than 101 hashes (MAX_LOCATOR_SZ) disconnects.
 *   headers received are decoded and counted; over 2,000 in one message is
 *     misbehaviour (see p2p/dispatch.c and net/ban.c).
 * The headers reply is framed straight from the view's serialized headers:
 * one pass, no header decoded or re-encoded.
 */
#include "daemon/sync/sync.h"

#include <errno.h>
#include <string.h>

/** Blocks in one getblocks answer (Core's limit in ProcessMessage). */
#define HEADERS_GETBLOCKS_MAX 500
/** Core's MIN_BLOCKS_TO_KEEP less an hour of blocks (3600 / 600 s on every network). */
#define HEADERS_PRUNED_LIKELY_TO_HAVE (288 - 3600 / 600)

/* Height of the fork point: the first locator hash on the active chain. */
static int32_t locator_fork(const struct daemon *d, const struct proto_locator *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		int32_t h = chainview_find(d, &l->hashes[i]);
		if (h >= 0)
			return h;
	}
	return 0;
}

/* Send headers for heights [from, to] (to < from: an empty headers). */
static void send_headers(struct peer *p, int32_t from, int32_t to)
{
	struct daemon *d = p->d;
	struct proto_writer *w = &d->txw;
	w->len = 0;
	w->err = 0;
	size_t start = proto_frame_begin(w);
	uint32_t n = to >= from ? (uint32_t)(to - from + 1) : 0;
	proto_write_compact(w, n);
	for (int32_t h = from; h <= to; h++) {
		proto_write_bytes(w, chainview_at(d, h)->header, PROTO_BLOCK_HEADER_SIZE);
		proto_write_u8(w, 0); /* the transaction count, always 0 in headers */
	}
	proto_frame_end(w, start, d->params->magic, "headers");
	if (w->err)
		return;
	peer_send_frame(p, PROTO_CMD_HEADERS, w->buf, w->len);
	d->stats.getheaders_answered++;
}

static void on_getheaders(struct peer *p, const struct proto_locator *l)
{
	struct daemon *d = p->d;
	int32_t tip = chainview_height(d);
	if (tip < 0) {
		DLOG_DBG(&d->log, DLOG_MSG,
		         "getheaders from peer=%llu before the chain view: no reply",
		         (unsigned long long)p->id);
		return;
	}
	if (l->n == 0) {
		int32_t h = chainview_find(d, &l->stop);
		if (h < 0) {
			DLOG_DBG(&d->log, DLOG_MSG,
			         "getheaders for an unknown block from peer=%llu: no reply",
			         (unsigned long long)p->id);
			return;
		}
		send_headers(p, h, h);
		return;
	}
	int32_t from = locator_fork(d, l) + 1;
	int32_t to = from + (int32_t)PROTO_MAX_HEADERS - 1;
	if (to > tip)
		to = tip;
	int32_t stop = chainview_find(d, &l->stop);
	if (stop >= from && stop < to)
		to = stop;
	DLOG_DBG(&d->log, DLOG_MSG, "getheaders %d to %d (tip %d) to peer=%llu", from, to, tip,
	         (unsigned long long)p->id);
	send_headers(p, from, to);
}

static void on_getblocks(struct peer *p, const struct proto_locator *l)
{
	struct daemon *d = p->d;
	int32_t tip = chainview_height(d);
	if (tip < 0)
		return;
	int32_t from = locator_fork(d, l) + 1;
	int32_t to = from + HEADERS_GETBLOCKS_MAX - 1;
	if (to > tip)
		to = tip;
	/* Unlike getheaders, Core's getblocks stops before hash_stop. */
	int32_t stop = chainview_find(d, &l->stop);
	if (stop >= from && stop <= to)
		to = stop - 1;
	if (to < from)
		return;
	/* Core walks up from the fork and stops at the first block too old;
	 * heights only grow, so that is the first one or none. */
	if (d->conf->prune_target && from <= tip - HEADERS_PRUNED_LIKELY_TO_HAVE) {
		char hex[65];
		proto_hash_to_hex(&chainview_at(d, from)->hash, hex);
		DLOG_DBG(&d->log, DLOG_NET, " getblocks stopping, pruned or too old block at %d %s",
		         from, hex);
		return;
	}
	struct proto_inv *inv = &d->out.inv;
	uint32_t n = (uint32_t)(to - from + 1);
	if (proto_inv_reserve(inv, n))
		return;
	inv->n = 0;
	for (int32_t h = from; h <= to; h++)
		inv->v[inv->n++] = (struct proto_inv_vec){.type = PROTO_INV_BLOCK,
		                                          .hash = chainview_at(d, h)->hash};
	d->out.cmd = PROTO_CMD_INV;
	if (peer_send_msg(p, &d->out) == 0)
		d->stats.getblocks_answered++;
	inv->n = 0;
}

void headers_on_getheaders(struct peer *p, const struct proto_msg *m)
{
	on_getheaders(p, &m->locator);
}

void headers_on_getblocks(struct peer *p, const struct proto_msg *m)
{
	on_getblocks(p, &m->locator);
}

void headers_on_headers(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	d->stats.headers_msgs++;
	d->stats.headers_entries += m->headers.n;
	sync_on_headers(p, &m->headers);
}
