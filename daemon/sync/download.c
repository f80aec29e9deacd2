/*
 * daemon/sync/download.c: following the chain from peers, as Core 29's
 * net_processing does it: headers first, then blocks from several peers at
 * once.
 *
 * Headers: a getheaders with the locator of the best header's parent goes
 * to the first peer that can serve blocks (NODE_NETWORK or
 * NODE_NETWORK_LIMITED), and to every such peer, inbound included, once the
 * best header is less than 24 h old; besides (not in Core), to a peer that
 * claims more than our best header while no peer we sync from does
 * (other_sync_useful). A headers message goes to the
 * validation thread (chain_accept_headers); a full one (2,000) is followed
 * by a getheaders from its last header; one whose first header does not
 * connect, and a block inv for a block peerd does not know, by a getheaders
 * from the best header. Every getheaders obeys Core's MaybeSendGetHeaders
 * (none while one under 2 minutes old is unanswered), and a headers
 * message that could only end in a getheaders not due is never posted
 * (sync/gate.c). Headers that break a rule are Misbehaving (which
 * never bans a loopback or manual peer: net/ban.c).
 *
 * Blocks: after every sync job the validation thread works out the
 * download window, the blocks of the best header chain past the last
 * block both it and the active chain hold, at most SYNC_WINDOW deep, that
 * peerd has no data for. The loop asks peers for them, lowest first, at
 * most SYNC_MAX_INFLIGHT_PER_PEER each, only of a peer whose chain (from its
 * version and headers) reaches that height. A pruned peer (NODE_NETWORK_LIMITED
 * without NODE_NETWORK), as Core's, is asked for none during initial block
 * download and, after, for none 286 or more below its best block. A block received is copied
 * and handed to the validation thread undecoded (chain_submit_block
 * stores a block that arrives before its parent and connects it when its
 * turn comes); the bytes handed over and not yet done are the queue,
 * capped at SYNC_MAX_QUEUE_BYTES: over it, no new block is asked for.
 * The window is the bound on blocks kept out of order.
 *
 * Stalling (Core's BLOCK_STALLING_TIMEOUT): when a peer could take a block
 * but the window has none left to give, and the window's first block is
 * still in flight from another peer, that peer is stalling the download:
 * after the stall timeout (2 s, doubling for each peer dropped up to 64 s,
 * shrinking back by 15% per new tip) it is disconnected, and its blocks go
 * to others.
 *
 * Thread: everything here runs on the loop thread except the work
 * functions, which run on the validation thread and touch only their job
 * and the chain.
 */
#include "daemon/sync/internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "chain/chain.h"

_Static_assert(SYNC_LOCATOR_MAX == CHAIN_LOCATOR_MAX, "daemon.h's copy of chain/'s limit");

static void sync_done(struct daemon *d, struct val_job *j);

static struct sync_job *job_new(enum sync_job_kind kind, const struct peer *p, val_work_fn work)
{
	struct sync_job *sj = xmalloc(sizeof(*sj));
	if (!sj)
		return NULL;
	memset(sj, 0, sizeof(*sj));
	sj->kind = kind;
	sj->peer_id = p ? p->id : UINT64_MAX;
	sj->d = p ? p->d : NULL;
	sj->job.work = work;
	sj->job.done = sync_done;
	sj->last_height = -1;
	return sj;
}

static void job_free(struct sync_job *sj)
{
	xfree(sj->res.peers);
	xfree(sj->res.want);
	xfree(sj->headers);
	xfree(sj->raw);
	xfree(sj);
}

/* Every peer's best known block, for the validation thread to place. */
static void fill_peers(struct daemon *d, struct sync_job *sj)
{
	if (!d->n_peers)
		return;
	sj->res.peers = xreallocarray(NULL, d->n_peers, sizeof(*sj->res.peers));
	if (!sj->res.peers)
		return;
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		/* All of them: a headers job fills in its sender's new best
		 * (a peer with none yet has the zero hash, found nowhere). */
		if (p->state != PEER_ACTIVE)
			continue;
		sj->res.peers[n].id = p->id;
		sj->res.peers[n].hash = p->sync->best_hash;
		sj->res.peers[n].avail = -1;
		sj->res.peers[n].bench = p->sync->stale.bench;
		n++;
	}
	sj->res.n_peers = n;
}

/* Post a job with the peers' best blocks. 0 or -ESHUTDOWN (sj freed). */
static int post(struct daemon *d, struct sync_job *sj)
{
	fill_peers(d, sj);
	sj->d = d;
	/* A forget job brings no window: a job before it that skipped its
	 * window counting on it would leave the download stopped. */
	bool brings_window = sj->kind != SYNC_JOB_FORGET;
	if (brings_window)
		atomic_fetch_add(&d->sync->jobs_queued, 1);
	if (validation_post(d, &sj->job)) {
		if (brings_window)
			atomic_fetch_sub(&d->sync->jobs_queued, 1);
		job_free(sj);
		return -ESHUTDOWN;
	}
	return 0;
}

/* A block p has, at `height`: its best known block if higher. */
/* The peer showed us a block: its best known block moves up. True when it did. */
static bool saw_block(struct peer *p, const struct proto_hash *h, int32_t height)
{
	if (height <= p->sync->best_height)
		return false;
	p->sync->best_height = height;
	p->sync->best_hash = *h;
	return true;
}

static bool can_serve(const struct peer *p)
{
	return (p->services & (PROTO_NODE_NETWORK | PROTO_NODE_NETWORK_LIMITED)) != 0;
}

/* Core's IsLimitedPeer: a pruned peer, which serves only its last blocks (BIP159). */
static bool limited_peer(const struct peer *p)
{
	return !(p->services & PROTO_NODE_NETWORK) && (p->services & PROTO_NODE_NETWORK_LIMITED);
}

static bool best_header_recent(const struct daemon *d)
{
	return d->sync->best_time &&
	       (int64_t)d->sync->best_time > daemon_time(d) - SYNC_RECENT_HEADER_S;
}

/* The height our best header chain has reached, as the loop knows it. */
static int32_t best_known_height(const struct daemon *d)
{
	int32_t v = chainview_height(d);
	return d->sync->best_height > v ? d->sync->best_height : v;
}

/* Whether p said it has blocks past ours: shown in headers or blocks, or,
 * before it sent any, claimed in its version. */
static bool claims_more(const struct peer *p, int32_t ours)
{
	if (p->sync->best_height >= 0)
		return p->sync->best_height > ours;
	return p->start_height > ours;
}

/*
 * Beyond Core's rule: a peer that claims more than our best header may
 * start a headers sync while no peer we sync from claims more. Core waits
 * for such a peer to announce a block (or for its 15-minute headers
 * timeout), so a node whose only sync peer has nothing (a Core node in
 * IBD ignores getheaders; one at genesis answers empty) sits still while a
 * later inbound peer has the chain. One getheaders per such peer, and one
 * such sync at a time: a peer lying in its version costs one message and
 * delays nothing past Core's behaviour.
 */
static bool other_sync_useful(const struct daemon *d, const struct peer *p)
{
	int32_t ours = best_known_height(d);
	if (!claims_more(p, ours))
		return false;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *q = d->peers[i];
		if (q != p && q->sync->sync_started && q->state == PEER_ACTIVE &&
		    claims_more(q, ours))
			return false;
	}
	return true;
}

void sync_peer_ready(struct peer *p)
{
	struct daemon *d = p->d;
	/* Core's SendMessages: no sync starts while importing (a reindex). */
	if (p->sync->sync_started || !can_serve(p) || validation_reindexing(d))
		return;
	/* Core starts the sync only with a getheaders MaybeSendGetHeaders lets
	 * go; this runs on every tick, so test first and count nothing. */
	if (!sync_getheaders_due(p, (uint64_t)daemon_time_ms(d)))
		return;
	if ((d->sync->n_sync_started == 0 || best_header_recent(d) || other_sync_useful(d, p)) &&
	    sync_maybe_getheaders(p, NULL, 0)) {
		p->sync->sync_started = true;
		d->sync->n_sync_started++;
	}
}

/* Clear in-flight marks of peers that are gone; recount per peer. */
static void recount(struct daemon *d)
{
	struct sync_state *s = d->sync;
	for (uint32_t i = 0; i < d->n_peers; i++)
		d->peers[i]->sync->blocks_inflight = 0;
	for (uint32_t i = 0; i < s->n_win; i++) {
		struct sync_block *b = &s->win[i];
		if (!b->peer)
			continue;
		struct peer *q = peer_by_id(d, b->peer - 1);
		if (!q || q->state == PEER_CLOSING) {
			b->peer = 0;
			continue;
		}
		q->sync->blocks_inflight++;
	}
}

/* Core's MaybeSendSendHeaders: BIP130 once the peer's best known block
 * has more than the minimum work (so a peer on a useless chain never gets
 * our tips as headers), once per connection. */
static void maybe_sendheaders(struct peer *p)
{
	if (p->sync->sent_sendheaders || !p->sync->best_min_work || p->state != PEER_ACTIVE ||
	    p->version < PEER_SENDHEADERS_VERSION)
		return;
	p->sync->sent_sendheaders = true;
	p->d->out.cmd = PROTO_CMD_SENDHEADERS;
	if (peer_send_msg(p, &p->d->out) == 0)
		p->d->sync->sendheaders_sent++;
}

/* The result's window in place of ours, keeping what is in flight. */
static void replace_window(struct sync_state *s, struct sync_result *r)
{
	struct sync_block *nw = r->want;
	r->want = NULL;
	/* Both are in height order: walk them together. */
	uint32_t j = 0;
	for (uint32_t i = 0; i < r->n_want; i++) {
		while (j < s->n_win && s->win[j].height < nw[i].height)
			j++;
		if (j < s->n_win && proto_hash_eq(&s->win[j].hash, &nw[i].hash)) {
			nw[i].peer = s->win[j].peer;
			nw[i].asked_ms = s->win[j].asked_ms;
			nw[i].received = s->win[j].received;
		}
	}
	/* The first block changed: whoever stalled it no longer does. */
	if (!r->n_want || !s->n_win || !proto_hash_eq(&nw[0].hash, &s->win[0].hash))
		s->stall_since_ms = 0;
	xfree(s->win);
	s->win = nw;
	s->n_win = r->n_want;
}

/* Take a job's result: the window (when it brought one), best header, peers. */
static void take_window(struct daemon *d, struct sync_result *r)
{
	struct sync_state *s = d->sync;
	if (!r->no_window)
		replace_window(s, r);
	s->best_height = r->best_height;
	s->best_time = r->best_time;
	s->best_hash = r->best_hash;
	s->n_locator = r->n_locator;
	memcpy(s->locator, r->locator, r->n_locator * sizeof(r->locator[0]));
	if (r->tip_height > s->tip_height) {
		/* Progress: the stall timeout shrinks back toward its base. */
		uint64_t t = s->stall_timeout_ms * SYNC_STALL_DECAY_PCT / 100u;
		s->stall_timeout_ms = t < SYNC_STALL_TIMEOUT_MS ? SYNC_STALL_TIMEOUT_MS : t;
	}
	s->tip_height = r->tip_height;
	for (uint32_t i = 0; i < r->n_peers; i++) {
		struct peer *p = peer_by_id(d, r->peers[i].id);
		if (p && proto_hash_eq(&p->sync->best_hash, &r->peers[i].hash)) {
			p->sync->avail_height = r->peers[i].avail;
			p->sync->best_min_work = r->peers[i].min_work;
			stale_placed(p, &r->peers[i].bench, r->peers[i].ge_tip,
			             r->peers[i].ge_bench);
			maybe_sendheaders(p);
		}
	}
	recount(d);
}

/* Mark the window's block `hash` received from p; true when it was asked of p. */
static bool mark_received(struct daemon *d, struct peer *p, const struct proto_hash *h)
{
	struct sync_state *s = d->sync;
	for (uint32_t i = 0; i < s->n_win; i++) {
		if (!proto_hash_eq(&s->win[i].hash, h))
			continue;
		bool asked = s->win[i].peer == p->id + 1;
		if (s->win[i].peer) {
			struct peer *q = peer_by_id(d, s->win[i].peer - 1);
			if (q && q->sync->blocks_inflight)
				q->sync->blocks_inflight--;
		}
		s->win[i].peer = 0;
		s->win[i].received = true;
		return asked;
	}
	return false;
}

/* Core's MaybePunishNodeForBlock (not via a compact block). */
static void punish(struct peer *p, const struct chain_state *st, const char *what)
{
	switch (st->result) {
	case CHAIN_RESULT_CONSENSUS:
	case CHAIN_RESULT_MUTATED:
	case CHAIN_RESULT_CACHED_INVALID:
	case CHAIN_RESULT_INVALID_HEADER:
	case CHAIN_RESULT_INVALID_PREV:
	case CHAIN_RESULT_MISSING_PREV: {
		char why[CHAIN_REASON_MAX + 32];
		snprintf(why, sizeof(why), "invalid %s: %s", what, st->reason);
		p->d->sync->misbehaving++;
		ban_misbehaving(p, why);
		break;
	}
	default:
		break;
	}
}

static void headers_done(struct daemon *d, struct sync_job *sj, struct peer *p)
{
	if (!p)
		return;
	if (sj->last_height >= 0) {
		saw_block(p, &sj->last_hash, sj->last_height);
		inv_known_add(p, &sj->last_hash);
	}
	/* Connecting headers answer the getheaders outstanding (Core). */
	if (sj->connected)
		p->sync->getheaders_ms = 0;
	if (sj->err == CHAIN_EINVALID) {
		if (!sj->connected && sj->st.result == CHAIN_RESULT_MISSING_PREV) {
			/* Core's HandleUnconnectingHeaders: ask from our best,
			 * at most once per 2 minutes. */
			d->sync->unconnecting++;
			(void)sync_maybe_getheaders(p, NULL, 0);
			return;
		}
		punish(p, &sj->st, "header");
		return;
	}
	if (sj->err)
		return;
	if (sj->ask_more && sj->n_last_locator)
		(void)sync_maybe_getheaders(p, sj->last_locator, sj->n_last_locator);
}

/* Count what presync made of a headers job (loop thread). */
static void count_presync(struct sync_state *s, const struct sync_job *sj)
{
	s->presync_peers = sj->hsync_peers;
	s->presync_bytes = sj->hsync_bytes;
	if (sj->hsync_bytes > s->presync_bytes_max)
		s->presync_bytes_max = sj->hsync_bytes;
	if (sj->hs.consumed)
		s->presync_msgs++;
	s->presync_started += sj->hs.started;
	switch (sj->hs.outcome) {
	case HSYNC_OUT_IGNORED:
		s->lowwork_ignored++;
		break;
	case HSYNC_OUT_DONE:
		s->presync_done++;
		break;
	case HSYNC_OUT_ABORTED:
		s->presync_aborted++;
		break;
	default:
		break;
	}
}

static void block_done(struct daemon *d, struct sync_job *sj, struct peer *p)
{
	struct sync_state *s = d->sync;
	s->queue_bytes -= sj->len;
	s->queue_blocks--;
	/* Done with: if the chain still lacks it (a mutated copy, an
	 * error), it may be asked anew. A stored one stays marked: the
	 * window may be older than this job (compute_window skips some). */
	bool stored = !sj->err && sj->submit != CHAIN_SUBMIT_REJECTED &&
	              sj->submit != CHAIN_SUBMIT_DUPLICATE_INVALID;
	for (uint32_t i = 0; i < s->n_win && !stored; i++) {
		if (proto_hash_eq(&s->win[i].hash, &sj->last_hash))
			s->win[i].received = false;
	}
	if (sj->err) {
		DLOG_ERR(&d->log, DLOG_VALIDATION, "block from peer=%llu: %s",
		         (unsigned long long)sj->peer_id, chain_strerror(sj->err));
		return;
	}
	if (sj->submit == CHAIN_SUBMIT_REJECTED) {
		s->blocks_invalid++;
		if (p)
			punish(p, &sj->st, "block");
		return;
	}
	/* A block nobody announced first (a high-bandwidth peer's compact
	 * block) raises the peer's best here; the refresh that came with the
	 * new tip may have used the old one, so ask for another, or its
	 * synced_blocks and download window lag (Core re-reckons each pass). */
	if (p && sj->last_height >= 0 && saw_block(p, &sj->last_hash, sj->last_height))
		sync_new_tip(d);
	/* Core's m_last_block_time: a block new to us, stored (getpeerinfo last_block). */
	if (p && (sj->submit == CHAIN_SUBMIT_ACCEPTED || sj->submit == CHAIN_SUBMIT_INCONCLUSIVE))
		sync_cmpct_hb_block_from(p, &sj->last_hash); /* and last_block_time */
	s->blocks_accepted++;
}

static void sync_done(struct daemon *d, struct val_job *j)
{
	struct sync_job *sj = (struct sync_job *)j;
	struct sync_state *s = d->sync;
	if (sj->kind == SYNC_JOB_REFRESH) {
		s->refresh_posted = false;
		/* Something changed after this one read the peers: once more. */
		if (s->refresh_again && !d->shutting_down) {
			s->refresh_again = false;
			sync_new_tip(d);
		}
	}
	if (sj->kind == SYNC_JOB_HEADERS)
		sync_gate_done(d, sj->peer_id, sj->probe);
	if (j->cancelled || d->shutting_down) {
		if (sj->kind == SYNC_JOB_BLOCK) {
			s->queue_bytes -= sj->len;
			s->queue_blocks--;
		}
		job_free(sj);
		return;
	}
	struct peer *p = peer_by_id(d, sj->peer_id);
	if (p && p->state == PEER_CLOSING)
		p = NULL;
	if (sj->kind == SYNC_JOB_FORGET) {
		if (p)
			p->sync->presync_height = -1; /* its presync is gone */
		job_free(sj);
		return;
	}
	if (sj->kind == SYNC_JOB_HEADERS) {
		count_presync(s, sj);
		if (p)
			p->sync->presync_height = sj->presync_height;
		headers_done(d, sj, p);
	} else if (sj->kind == SYNC_JOB_BLOCK)
		block_done(d, sj, p);
	take_window(d, &sj->res);
	if (sj->kind == SYNC_JOB_HEADERS && p && !sj->err)
		stale_on_headers(p, sj->announced);
	job_free(sj);
	sync_schedule(d);
}

void sync_on_headers(struct peer *p, const struct proto_headers *h)
{
	struct daemon *d = p->d;
	bool probe;
	if (sync_importing(p, "headers"))
		return;
	if (h->n == 0) {
		/* Core: an empty headers ends the peer's presync, and answers
		 * the getheaders outstanding (one that connects does too, when
		 * its job is done: headers_done). */
		p->sync->getheaders_ms = 0;
		struct sync_job *fj = job_new(SYNC_JOB_FORGET, p, sync_work_forget);
		if (fj)
			(void)post(d, fj);
		return;
	}
	if (!sync_gate_headers(p, h, &probe))
		return;
	struct sync_job *sj = job_new(SYNC_JOB_HEADERS, p, sync_work_headers);
	if (!sj)
		return;
	sj->headers = xreallocarray(NULL, h->n, sizeof(*sj->headers));
	if (!sj->headers) {
		job_free(sj);
		return;
	}
	memcpy(sj->headers, h->h, h->n * sizeof(*sj->headers));
	sj->n_headers = h->n;
	sj->probe = probe;
	if (post(d, sj) == 0)
		sync_gate_posted(p, h, probe);
}

void sync_on_block_inv(struct peer *p, const struct proto_hash *h)
{
	struct daemon *d = p->d;
	if (validation_reindexing(d)) /* Core: no getheaders for it while importing */
		return;
	int32_t height = chainview_find(d, h);
	if (height >= 0) {
		/* On our active chain: the validation thread places it
		 * against the best header chain with the next refresh. */
		if (height > p->sync->best_height) {
			saw_block(p, h, height);
			sync_new_tip(d);
		}
		return;
	}
	for (uint32_t i = 0; i < d->sync->n_win; i++) {
		if (proto_hash_eq(&d->sync->win[i].hash, h))
			return;
	}
	/* Unknown (or not yet on our chain): learn its headers first. */
	(void)sync_maybe_getheaders(p, NULL, 0);
}

void sync_on_block(struct peer *p, const uint8_t *payload, size_t len, uint32_t csum)
{
	struct daemon *d = p->d;
	struct sync_state *s = d->sync;
	d->stats.blocks_recv++;
	if (len < PROTO_BLOCK_HEADER_SIZE || sync_importing(p, "block"))
		return;
	struct proto_block_header hdr;
	struct proto_reader r;
	proto_reader_init(&r, payload, PROTO_BLOCK_HEADER_SIZE);
	if (proto_block_header_decode(&r, &hdr))
		return;
	struct proto_hash hash;
	proto_block_header_hash(&hdr, &hash);
	inv_known_add(p, &hash);
	bool asked = mark_received(d, p, &hash);
	/* Unasked blocks are taken while the queue has room (a peer
	 * announcing by block, as Core's "unrequested" path); asked ones
	 * always, or the window would never move. */
	if (!asked && s->queue_bytes + len > SYNC_MAX_QUEUE_BYTES) {
		s->blocks_dropped++;
		return;
	}
	struct sync_job *sj = job_new(SYNC_JOB_BLOCK, p, sync_work_block);
	if (!sj)
		return;
	sj->raw = xmalloc(len);
	if (!sj->raw) {
		job_free(sj);
		return;
	}
	memcpy(sj->raw, payload, len);
	sj->len = len;
	sj->csum = csum;
	if (post(d, sj))
		return;
	s->queue_bytes += len;
	s->queue_blocks++;
	if (s->queue_bytes > s->queue_bytes_max)
		s->queue_bytes_max = s->queue_bytes;
	sync_schedule(d);
}

void sync_new_tip(struct daemon *d)
{
	struct sync_state *s = d->sync;
	if (s->refresh_posted) {
		s->refresh_again = true;
		return;
	}
	struct sync_job *sj = job_new(SYNC_JOB_REFRESH, NULL, sync_work_refresh);
	if (!sj || post(d, sj))
		return;
	s->refresh_posted = true;
}

/* Whether p may be asked for blocks now. As Core's SendMessages, a pruned
 * peer not during initial block download: its window is too short for it. */
static bool can_download_from(const struct peer *p)
{
	return p->state == PEER_ACTIVE && p->handshake_done && can_serve(p) && !p->send_paused &&
	       p->sync->blocks_inflight < SYNC_MAX_INFLIGHT_PER_PEER &&
	       !(limited_peer(p) && p->d->view->ibd) && !validation_reindexing(p->d);
}

/* Ask p for what it can give; true when the window had nothing for it. */
static bool fill_peer(struct daemon *d, struct peer *p, uint64_t now)
{
	struct sync_state *s = d->sync;
	struct proto_inv *inv = &d->out.inv;
	inv->n = 0;
	bool starved = true;
	/* Core's FindNextBlocksToDownload: a pruned peer is not asked for a
	 * block 286 or more below its best (its 288, less two for races). */
	int32_t deepest =
	    limited_peer(p) ? p->sync->best_height - (PEER_LIMITED_MIN_BLOCKS - 2) + 1 : INT32_MIN;
	for (uint32_t i = 0; i < s->n_win && p->sync->blocks_inflight < SYNC_MAX_INFLIGHT_PER_PEER;
	     i++) {
		struct sync_block *b = &s->win[i];
		if (b->received || b->peer || b->height > p->sync->avail_height ||
		    b->height < deepest)
			continue;
		if (proto_inv_reserve(inv, inv->n + 1))
			break;
		inv->v[inv->n++] =
		    (struct proto_inv_vec){.type = PROTO_INV_WITNESS_BLOCK, .hash = b->hash};
		b->peer = p->id + 1;
		b->asked_ms = now;
		p->sync->blocks_inflight++;
		starved = false;
	}
	if (inv->n) {
		d->out.cmd = sync_cmpct_getdata_cmd(
		    p, inv); /* getdata; maybe compact (sync/cmpct_receive.c) */
		(void)peer_send_msg(p, &d->out);
		s->blocks_requested += inv->n;
		inv->n = 0;
	}
	return starved;
}

void sync_schedule(struct daemon *d)
{
	struct sync_state *s = d->sync;
	/* As Core's SendMessages, every time: a peer not yet asked for
	 * headers is asked once the best header became recent. */
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->state == PEER_ACTIVE && p->handshake_done && !p->sync->sync_started)
			sync_peer_ready(p);
	}
	if (!s->n_win || s->queue_bytes > SYNC_MAX_QUEUE_BYTES)
		return;
	uint64_t now = daemon_now_ms(d);
	bool someone_starved = false;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (!can_download_from(p))
			continue;
		/* Starved only counts for a peer that has the blocks. */
		if (fill_peer(d, p, now) && p->sync->avail_height >= s->win[0].height)
			someone_starved = true;
	}
	/* Stalling: a peer waits for work while the window's first block is
	 * still out with someone else. */
	if (someone_starved && s->win[0].peer && !s->win[0].received) {
		if (!s->stall_since_ms)
			s->stall_since_ms = now;
	} else {
		s->stall_since_ms = 0;
	}
}

void sync_tick(struct daemon *d, uint64_t now)
{
	struct sync_state *s = d->sync;
	sync_schedule(d);
	if (s->stall_since_ms && s->n_win && s->win[0].peer &&
	    now - s->stall_since_ms > s->stall_timeout_ms) {
		struct peer *q = peer_by_id(d, s->win[0].peer - 1);
		s->stall_since_ms = 0;
		if (q && q->state != PEER_CLOSING) {
			DLOG_INFO_(&d->log, DLOG_NET,
			           "peer=%llu is stalling block download, disconnecting",
			           (unsigned long long)q->id);
			s->stalls++;
			peer_disconnect(q, "stalling block download");
			/* Core doubles the timeout for the next one. */
			s->stall_timeout_ms *= 2;
			if (s->stall_timeout_ms > SYNC_STALL_TIMEOUT_MAX_MS)
				s->stall_timeout_ms = SYNC_STALL_TIMEOUT_MAX_MS;
		}
		recount(d);
		sync_schedule(d);
	}
	/* A block asked long ago from a peer that is still there (Core's
	 * BLOCK_DOWNLOAD_TIMEOUT_BASE): that peer goes. */
	for (uint32_t i = 0; i < s->n_win; i++) {
		struct sync_block *b = &s->win[i];
		if (b->peer && now - b->asked_ms > SYNC_BLOCK_TIMEOUT_MS) {
			struct peer *q = peer_by_id(d, b->peer - 1);
			if (q && q->state != PEER_CLOSING)
				peer_disconnect(q, "block download timeout");
			b->peer = 0;
		}
	}
	/* Core times these by its mockable clock, not the steady one. */
	stale_tick(d, (uint64_t)daemon_time_ms(d));
}

void sync_peer_init(struct peer *p)
{
	p->sync->best_height = -1;
	p->sync->avail_height = -1;
	p->sync->presync_height = -1;
}

void sync_peer_gone(struct peer *p)
{
	struct daemon *d = p->d;
	struct sync_state *s = d->sync;
	if (p->sync->sync_started && s->n_sync_started)
		s->n_sync_started--;
	/* Its presync state (if any) goes on the validation thread, after
	 * every job of its that is still queued. */
	if (!d->shutting_down) {
		struct sync_job *fj = job_new(SYNC_JOB_FORGET, p, sync_work_forget);
		if (fj)
			(void)post(d, fj);
	}
	for (uint32_t i = 0; i < s->n_win; i++) {
		if (s->win[i].peer == p->id + 1)
			s->win[i].peer = 0;
	}
	p->sync->blocks_inflight = 0;
	stale_peer_gone(p);
}

void sync_init(struct daemon *d)
{
	memset(d->sync, 0, sizeof(*d->sync));
	d->sync->stall_timeout_ms = SYNC_STALL_TIMEOUT_MS;
	d->sync->tip_height = -1;
}

void sync_release(struct daemon *d)
{
	hsync_release(&d->sync->hsync);
	sync_cmpct_release(d);
	xfree(d->sync->win);
	d->sync->win = NULL;
	d->sync->n_win = 0;
}

json_t *sync_stats_json(struct daemon *d)
{
	const struct sync_state *s = d->sync;
	uint32_t inflight = 0, received = 0;
	for (uint32_t i = 0; i < s->n_win; i++) {
		inflight += s->win[i].peer != 0;
		received += s->win[i].received;
	}
	json_t *o = json_pack(
	    "{s:i, s:i, s:I, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I}",
	    "best_header_height", (int)s->best_height, "tip_height", (int)s->tip_height, "window",
	    (json_int_t)s->n_win, "in_flight", (int)inflight, "received_waiting", (int)received,
	    "sync_peers", (int)s->n_sync_started, "queue_blocks", (json_int_t)s->queue_blocks,
	    "queue_bytes", (json_int_t)s->queue_bytes, "queue_bytes_max",
	    (json_int_t)s->queue_bytes_max, "queue_bytes_cap", (json_int_t)SYNC_MAX_QUEUE_BYTES,
	    "blocks_requested", (json_int_t)s->blocks_requested, "blocks_accepted",
	    (json_int_t)s->blocks_accepted, "blocks_invalid", (json_int_t)s->blocks_invalid,
	    "blocks_dropped", (json_int_t)s->blocks_dropped, "getheaders_sent",
	    (json_int_t)s->getheaders_sent, "unconnecting_headers", (json_int_t)s->unconnecting,
	    "stalling_disconnects", (json_int_t)s->stalls, "stall_timeout_ms",
	    (json_int_t)s->stall_timeout_ms);
	if (o) {
		json_object_set_new(o, "initialblockdownload", json_boolean(d->view->ibd));
		json_object_set_new(o, "getheaders_limited", json_integer(s->getheaders_limited));
		json_object_set_new(o, "headers_gated", json_integer(s->headers_gated));
		json_t *ps = json_pack(
		    "{s:I, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I}", "lowwork_ignored",
		    (json_int_t)s->lowwork_ignored, "started", (json_int_t)s->presync_started,
		    "done", (json_int_t)s->presync_done, "aborted", (json_int_t)s->presync_aborted,
		    "messages", (json_int_t)s->presync_msgs, "peers", (int)s->presync_peers,
		    "bytes", (json_int_t)s->presync_bytes, "bytes_max",
		    (json_int_t)s->presync_bytes_max, "sendheaders_sent",
		    (json_int_t)s->sendheaders_sent);
		json_object_set_new(o, "presync", ps);
		json_object_set_new(o, "outbound_checks", stale_stats_json(d));
		json_object_set_new(o, "cmpct", sync_cmpct_stats_json(d));
	}
	return o;
}
