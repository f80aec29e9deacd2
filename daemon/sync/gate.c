/*
 * daemon/sync/gate.c: the getheaders rate limit (Core's MaybeSendGetHeaders:
 * every getheaders peerd sends goes through sync_maybe_getheaders), and
 * which headers messages are worth a validation job.
 *
 * Whether a headers message connects is a question for the block index,
 * which only the validation thread holds, so every headers message used
 * to become a job. A peer sending thousands of single headers with made-up
 * parents (issue 18) then cost a job each, and each job ended in the same
 * place: Core's HandleUnconnectingHeaders, whose only act is a getheaders
 * that MaybeSendGetHeaders allows once per HEADERS_RESPONSE_TIME (2 min).
 *
 * So the loop keeps a message back when that job could do nothing:
 *   - its first header's parent is none the loop knows: not on the active
 *     chain (chainview), not in the download window, not the best header
 *     nor in its locator, not the peer's best known block, not the last
 *     header of the peer's last message posted, not the first hash of the
 *     last getheaders sent to the peer (where its answer starts);
 *   - no getheaders to the peer is due, or a probe (below) is out for it;
 *   - no job of the peer that could connect (a "live" one) is out: a
 *     message may build on headers still on their way to the index.
 * A message with an unknown parent that is posted anyway, while a
 * getheaders is due and nothing live is out, is a probe: it is there to
 * learn whether it connects; if not, it brings the getheaders. Messages
 * behind a probe wait for nothing: the probe's answer decides for them
 * too (one getheaders at most), so they are kept back.
 *
 * What this drops that Core would process: a message whose parent is in
 * the index but out of the loop's sight (a stale fork's block, say), sent
 * while a getheaders to the same peer is unanswered or a probe is out.
 * Core would take it; the answer to that getheaders (the peer's chain from
 * our locator) brings the peer's chain instead, and a getheaders the peer
 * ignored expires in 2 minutes. A flood of unconnecting headers costs one
 * job per 2 minutes per peer (tests/unit/test_daemon_sync.c counts
 * them).
 *
 * Thread: the loop's. Counters in struct peer (hdr_*) and struct
 * sync_state (headers_gated).
 */
#include "daemon/sync/sync.h"

#include <string.h>

bool sync_getheaders_due(const struct peer *p, uint64_t now_ms)
{
	return !p->sync->getheaders_ms ||
	       now_ms - p->sync->getheaders_ms >= SYNC_HEADERS_RESPONSE_MS;
}

/* A getheaders to p from `loc` (the best header's when NULL). */
static void send_getheaders(struct peer *p, const struct proto_hash *loc, uint32_t n)
{
	struct daemon *d = p->d;
	struct sync_state *s = d->sync;
	if (!loc) {
		loc = s->locator;
		n = s->n_locator;
	}
	if (!n) {
		/* No sync result yet: the genesis block is a locator too. */
		loc = &d->params->genesis_hash;
		n = 1;
	}
	struct proto_locator *l = &d->out.locator;
	if (l->cap < n) {
		struct proto_hash *h = xreallocarray(l->hashes, n, sizeof(*h));
		if (!h)
			return;
		l->hashes = h;
		l->cap = n;
	}
	memcpy(l->hashes, loc, n * sizeof(*loc));
	l->n = n;
	l->version = PROTO_VERSION;
	memset(&l->stop, 0, sizeof(l->stop));
	d->out.cmd = PROTO_CMD_GETHEADERS;
	if (peer_send_msg(p, &d->out) == 0) {
		p->sync->getheaders_ms = (uint64_t)daemon_time_ms(d);
		p->sync->getheaders_at = loc[0];
		s->getheaders_sent++;
	}
	l->n = 0;
}

bool sync_maybe_getheaders(struct peer *p, const struct proto_hash *loc, uint32_t n)
{
	/* Core asks for no headers while importing (a reindex): every
	 * getheaders, the sync's start, a block inv's, the stale check's. */
	if (validation_reindexing(p->d))
		return false;
	if (!sync_getheaders_due(p, (uint64_t)daemon_time_ms(p->d))) {
		p->d->sync->getheaders_limited++;
		return false;
	}
	send_getheaders(p, loc, n);
	return true;
}

/* Whether the loop knows h as a block the index holds, or one p's headers
 * on their way to it end with. */
static bool loop_knows(const struct peer *p, const struct proto_hash *h)
{
	const struct daemon *d = p->d;
	const struct sync_state *s = d->sync;
	/* The fields below start zeroed: no parent of ours is all zeros. */
	if (proto_hash_is_zero(h))
		return false;
	if (proto_hash_eq(h, &p->sync->hdr_last) || proto_hash_eq(h, &p->sync->best_hash) ||
	    proto_hash_eq(h, &p->sync->getheaders_at) || proto_hash_eq(h, &s->best_hash))
		return true;
	if (chainview_find(d, h) >= 0)
		return true;
	for (uint32_t i = 0; i < s->n_locator; i++) {
		if (proto_hash_eq(h, &s->locator[i]))
			return true;
	}
	for (uint32_t i = 0; i < s->n_win; i++) {
		if (proto_hash_eq(h, &s->win[i].hash))
			return true;
	}
	return false;
}

bool sync_gate_headers(struct peer *p, const struct proto_headers *h, bool *probe)
{
	struct daemon *d = p->d;
	*probe = false;
	if (p->sync->hdr_jobs_live || loop_knows(p, &h->h[0].prev))
		return true;
	if (!p->sync->hdr_jobs_probe && sync_getheaders_due(p, (uint64_t)daemon_time_ms(d))) {
		*probe = true;
		return true;
	}
	d->sync->headers_gated++;
	DLOG_DBG(&d->log, DLOG_MSG,
	         "headers from peer=%llu with an unknown parent, no getheaders due: not checked",
	         (unsigned long long)p->id);
	return false;
}

void sync_gate_posted(struct peer *p, const struct proto_headers *h, bool probe)
{
	proto_block_header_hash(&h->h[h->n - 1], &p->sync->hdr_last);
	if (probe)
		p->sync->hdr_jobs_probe++;
	else
		p->sync->hdr_jobs_live++;
}

void sync_gate_done(struct daemon *d, uint64_t peer_id, bool probe)
{
	struct peer *p = peer_by_id(d, peer_id);
	if (!p)
		return;
	uint32_t *n = probe ? &p->sync->hdr_jobs_probe : &p->sync->hdr_jobs_live;
	if (*n)
		(*n)--;
}

bool sync_importing(struct peer *p, const char *what)
{
	/* Core ignores them while importing: the index and the chain are the
	 * reindex's until it ends, then the sync starts as at any start. */
	if (!validation_reindexing(p->d))
		return false;
	DLOG_DBG(&p->d->log, DLOG_NET, "Unexpected %s message received from peer %llu", what,
	         (unsigned long long)p->id);
	return true;
}
