/*
 * daemon/sync/stale.c: outbound peers on a lagging chain, extra outbound
 * peers, and a stale tip, as Core 29's net_processing (ConsiderEviction,
 * EvictExtraOutboundPeers, CheckForStaleTipAndEvictPeers).
 *
 * Lagging peers (every tick, each outbound full-relay or block-relay-only
 * peer whose headers sync started and that is not protected): while its
 * best known block has less work than our tip, a timeout of
 * STALE_CHAIN_SYNC_TIMEOUT_MS runs against our tip of the moment (the
 * bench). A peer that reaches the bench's work but not the tip's (we
 * moved on) gets a new timeout against the new tip; one that reaches the
 * tip's clears it. When the timeout passes, one getheaders from the
 * bench's parent and SYNC_HEADERS_RESPONSE_MS more; then it is
 * disconnected with Core's log line. Up to STALE_MAX_PROTECTED full-relay
 * outbound peers are spared for good: those whose chain had at least our
 * tip's work when a headers message of theirs was processed. Manual and
 * inbound peers are never subject to it.
 *
 * Work is compared on the validation thread, which owns the index: every
 * sync job places each peer's best known block against the tip and
 * against that peer's bench (download.c's compute_window) and the loop
 * keeps the answer with the bench it was for (stale_placed). A new bench
 * asks for a refresh, so the answer follows within one job.
 *
 * Every STALE_EXTRA_PEER_CHECK_MS: more block-relay-only peers than
 * d->net->max_block_relay loses the youngest (highest id), or the
 * next-youngest if the youngest gave us a block more recently; more
 * full-relay peers than d->net->max_outbound_full loses the unprotected
 * one whose last announcement of a better header is oldest (the younger
 * on a tie), unless it is the only full-relay or manual peer of its
 * network. Either only once connected STALE_MIN_CONNECT_MS and with no
 * block in flight. Every STALE_CHECK_INTERVAL_MS: a tip unchanged for
 * three block intervals with no block in flight sets
 * d->net->try_new_outbound (the connection manager may open one
 * full-relay peer more), cleared by the next check that finds it fresh
 * or by the eviction of an extra full-relay peer. The first check that
 * finds the tip less than 20 block intervals old sets
 * d->net->start_extra_block_relay for good.
 *
 * Times are the mockable clock's milliseconds (daemon_time_ms, Core's
 * NodeClock: -mocktime and setmocktime move them, and the next tick acts
 * on a jump, as Core's message handler polls), the announcement, block
 * and connection times its unix seconds, as Core's. Loop thread only.
 */
#include "daemon/sync/sync.h"

#include <string.h>
#include <time.h>

#include <jansson.h>

/* ---- lagging outbound peers (ConsiderEviction) ---------------------- */

/* Core's IsOutboundOrBlockRelayConn. */
static bool lag_candidate(const struct peer *p)
{
	return p->conn_type == PEER_CONN_OUTBOUND_FULL || p->conn_type == PEER_CONN_BLOCK_RELAY;
}

/* A locator from the active chain's block at `height` down (Core's
 * LocatorEntries: ten steps of one, then doubling, genesis last). */
static uint32_t view_locator(const struct daemon *d, int32_t height, struct proto_hash *loc,
                             uint32_t max)
{
	uint32_t n = 0;
	int32_t step = 1;
	while (height >= 0 && n < max) {
		const struct chainview_rec *r = chainview_at(d, height);
		if (!r)
			return 0;
		loc[n++] = r->hash;
		if (height == 0)
			break;
		height = height > step ? height - step : 0;
		if (n > 10)
			step *= 2;
	}
	return n;
}

static void hash_text(const struct proto_hash *h, bool have, char out[65])
{
	if (have)
		proto_hash_to_hex(h, out);
	else
		snprintf(out, 65, "<none>");
}

/* The getheaders that gives p a last chance: from the bench's parent
 * (the best header's parent when the bench left the active chain). */
static void lag_getheaders(struct peer *p)
{
	struct daemon *d = p->d;
	struct stale_peer *st = &p->sync->stale;
	struct proto_hash loc[SYNC_LOCATOR_MAX];
	int32_t h = chainview_find(d, &st->bench);
	uint32_t n = h > 0 ? view_locator(d, h - 1, loc, SYNC_LOCATOR_MAX) : 0;
	/* Core assumes it goes out: one under 2 minutes old is answered
	 * just as well. */
	(void)sync_maybe_getheaders(p, n ? loc : NULL, n);
	char best[65], bench[65];
	hash_text(&p->sync->best_hash, p->sync->best_height >= 0, best);
	hash_text(&st->bench, true, bench);
	DLOG_DBG(&d->log, DLOG_NET,
	         "sending getheaders to outbound peer=%llu to verify chain work (current best "
	         "known block:%s, benchmark blockhash: %s)",
	         (unsigned long long)p->id, best, bench);
}

/* Core's ConsiderEviction for one peer at now. */
static void consider(struct peer *p, uint64_t now)
{
	struct daemon *d = p->d;
	struct stale_peer *st = &p->sync->stale;
	if (st->protect || !lag_candidate(p) || !p->sync->sync_started)
		return;
	bool have_best = p->sync->best_height >= 0;
	if (have_best && st->ge_tip) {
		/* It showed a block with our tip's work: no timeout. */
		st->timeout_ms = 0;
		st->has_bench = false;
		memset(&st->bench, 0, sizeof(st->bench));
		st->sent_getheaders = false;
		st->ge_bench = false;
		return;
	}
	const struct chainview_rec *tip = chainview_at(d, chainview_height(d));
	if (!tip)
		return;
	if (st->timeout_ms == 0 || (st->has_bench && have_best && st->ge_bench)) {
		/* Behind, noticed now; or it caught up with the tip the timeout
		 * was set against while we moved on: a timeout against today's
		 * tip. Its placement against the new bench comes with the
		 * next sync job. */
		st->timeout_ms = now + STALE_CHAIN_SYNC_TIMEOUT_MS;
		st->bench = tip->hash;
		st->has_bench = true;
		st->ge_bench = false;
		st->sent_getheaders = false;
		sync_new_tip(d);
		return;
	}
	if (now <= st->timeout_ms)
		return;
	if (st->sent_getheaders) {
		char best[65];
		hash_text(&p->sync->best_hash, have_best, best);
		/* Core's words; logips is off: no address. */
		DLOG_INFO_(
		    &d->log, DLOG_NET,
		    "Outbound peer has old chain, best known block = %s, disconnecting peer=%llu",
		    best, (unsigned long long)p->id);
		d->sync->lagging_disconnects++;
		peer_disconnect(p, "outbound peer has old chain");
		return;
	}
	lag_getheaders(p);
	st->sent_getheaders = true;
	st->timeout_ms = now + SYNC_HEADERS_RESPONSE_MS;
}

void stale_placed(struct peer *p, const struct proto_hash *bench, bool ge_tip, bool ge_bench)
{
	struct stale_peer *st = &p->sync->stale;
	st->ge_tip = ge_tip;
	/* Placed against an older bench: not an answer for this one. */
	st->ge_bench = st->has_bench && proto_hash_eq(bench, &st->bench) && ge_bench;
}

void stale_on_headers(struct peer *p, bool announced)
{
	struct daemon *d = p->d;
	struct stale_peer *st = &p->sync->stale;
	if (p->state == PEER_CLOSING)
		return;
	if (announced)
		st->last_announce = daemon_time(d);
	/* Core protects only full-relay outbound peers: block-relay-only
	 * ones stay subject to the lagging-chain rule. */
	if (p->conn_type != PEER_CONN_OUTBOUND_FULL || p->sync->best_height < 0 || st->protect ||
	    !st->ge_tip || d->sync->n_protected >= STALE_MAX_PROTECTED)
		return;
	DLOG_DBG(&d->log, DLOG_NET, "Protecting outbound peer=%llu from eviction",
	         (unsigned long long)p->id);
	st->protect = true;
	d->sync->n_protected++;
}

void stale_peer_gone(struct peer *p)
{
	struct sync_state *s = p->d->sync;
	if (p->sync->stale.protect && s->n_protected)
		s->n_protected--;
	p->sync->stale.protect = false;
}

/* ---- extra outbound peers (EvictExtraOutboundPeers) ----------------- */

/* Core's fSuccessfullyConnected && !fDisconnect. */
static bool live(const struct peer *p)
{
	return p->handshake_done && p->state == PEER_ACTIVE;
}

/* Connected peers of type t beyond `max` (Core's GetExtra...Count). */
static uint32_t extra_count(const struct daemon *d, enum peer_conn_type t, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->n_peers; i++)
		n += live(d->peers[i]) && d->peers[i]->conn_type == t;
	return n > max ? n - max : 0;
}

/* Core's MultipleManualOrFullOutboundConns: another full-relay or manual
 * connection on p's network (counted from connect, as Core's
 * m_network_conn_counts). */
static bool network_shared(const struct daemon *d, const struct peer *p)
{
	enum net_network net = net_addr_network(&p->addr);
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *q = d->peers[i];
		if ((q->state == PEER_HANDSHAKE || q->state == PEER_ACTIVE) &&
		    (q->conn_type == PEER_CONN_OUTBOUND_FULL || q->conn_type == PEER_CONN_MANUAL) &&
		    net_addr_network(&q->addr) == net)
			n++;
	}
	return n > 1;
}

/* Milliseconds since p connected by the mockable clock (Core's
 * m_connected is GetTime's); 0 when the clock was set back before it. */
static int64_t connected_for(const struct peer *p, uint64_t now)
{
	int64_t dt = (int64_t)now - p->conntime * 1000;
	return dt > 0 ? dt : 0;
}

static void evict_extra_block_relay(struct daemon *d, uint64_t now)
{
	if (!extra_count(d, PEER_CONN_BLOCK_RELAY, d->net->max_block_relay))
		return;
	struct peer *youngest = NULL, *next = NULL;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->conn_type != PEER_CONN_BLOCK_RELAY || p->state == PEER_CLOSING)
			continue;
		if (!youngest || p->id > youngest->id) {
			next = youngest;
			youngest = p;
		}
	}
	struct peer *victim = youngest;
	/* The youngest gave us a block more recently: the next-youngest goes. */
	if (youngest->last_block_time > (next ? next->last_block_time : 0))
		victim = next;
	if (!victim)
		return;
	if (connected_for(victim, now) >= STALE_MIN_CONNECT_MS && !victim->sync->blocks_inflight) {
		DLOG_DBG(&d->log, DLOG_NET,
		         "disconnecting extra block-relay-only peer=%llu (last block received at "
		         "time %lld)",
		         (unsigned long long)victim->id, (long long)victim->last_block_time);
		d->sync->extra_disconnects++;
		peer_disconnect(victim, "extra block-relay-only peer");
	} else {
		DLOG_DBG(
		    &d->log, DLOG_NET,
		    "keeping block-relay-only peer=%llu chosen for eviction (connect time: %lld, "
		    "blocks_in_flight: %u)",
		    (unsigned long long)victim->id, (long long)victim->conntime,
		    victim->sync->blocks_inflight);
	}
}

static void evict_extra_full(struct daemon *d, uint64_t now)
{
	if (!extra_count(d, PEER_CONN_OUTBOUND_FULL, d->net->max_outbound_full))
		return;
	struct peer *worst = NULL;
	int64_t oldest = INT64_MAX;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->conn_type != PEER_CONN_OUTBOUND_FULL || p->state == PEER_CLOSING)
			continue;
		if (p->sync->stale.protect || !network_shared(d, p))
			continue;
		int64_t a = p->sync->stale.last_announce;
		/* The least recent announcement; the younger on a tie. */
		if (a < oldest || (a == oldest && (!worst || p->id > worst->id))) {
			worst = p;
			oldest = a;
		}
	}
	if (!worst)
		return;
	if (connected_for(worst, now) > STALE_MIN_CONNECT_MS && !worst->sync->blocks_inflight) {
		DLOG_DBG(
		    &d->log, DLOG_NET,
		    "disconnecting extra outbound peer=%llu (last block announcement received at "
		    "time %lld)",
		    (unsigned long long)worst->id, (long long)oldest);
		d->sync->extra_disconnects++;
		peer_disconnect(worst, "extra outbound peer");
		/* It made room for the extra one the stale tip allowed: no more
		 * until the tip looks stale again. */
		d->net->try_new_outbound = false;
	} else {
		DLOG_DBG(&d->log, DLOG_NET,
		         "keeping outbound peer=%llu chosen for eviction (connect time: %lld, "
		         "blocks_in_flight: %u)",
		         (unsigned long long)worst->id, (long long)worst->conntime,
		         worst->sync->blocks_inflight);
	}
}

/* ---- a stale tip (CheckForStaleTipAndEvictPeers) --------------------- */

/* Core's TipMayBeStale: no new tip for three block intervals, and no
 * block in flight. */
static bool tip_may_be_stale(struct daemon *d, uint64_t now)
{
	struct sync_state *s = d->sync;
	if (!s->last_tip_ms)
		s->last_tip_ms = now;
	uint64_t limit = (uint64_t)d->params->pow_target_spacing * 3u * 1000u;
	if (now < limit || s->last_tip_ms >= now - limit)
		return false;
	for (uint32_t i = 0; i < s->n_win; i++) {
		if (s->win[i].peer)
			return false;
	}
	return true;
}

static void check_stale_tip(struct daemon *d, uint64_t now)
{
	struct sync_state *s = d->sync;
	/* Core: only when the network is active and automatic outbound
	 * connections are on (no -connect). */
	if (!d->network_inactive && !d->conf->connect_set && tip_may_be_stale(d, now)) {
		DLOG_INFO_(&d->log, DLOG_NET,
		           "Potential stale tip detected, will try using extra outbound peer (last "
		           "tip update: %llu seconds ago)",
		           (unsigned long long)((now - s->last_tip_ms) / 1000u));
		s->stale_tips++;
		d->net->try_new_outbound = true;
	} else if (d->net->try_new_outbound) {
		d->net->try_new_outbound = false;
	}
}

/* Core's CanDirectFetch: the tip is less than 20 block intervals old. */
static bool can_direct_fetch(const struct daemon *d)
{
	const struct chainview_rec *tip = chainview_at(d, chainview_height(d));
	if (!tip)
		return false;
	/* The header's time field: after version, parent and merkle root. */
	int64_t when = (int64_t)proto_le32(tip->header + 68);
	return when > daemon_time(d) - d->params->pow_target_spacing * 20;
}

void stale_new_tip(struct daemon *d)
{
	d->sync->last_tip_ms = (uint64_t)daemon_time_ms(d);
}

void stale_tick(struct daemon *d, uint64_t now)
{
	struct sync_state *s = d->sync;
	/* consider() may disconnect, which only marks: the array is stable. */
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (live(p))
			consider(p, now);
	}
	if (now < s->extra_check_ms)
		return;
	s->extra_check_ms = now + STALE_EXTRA_PEER_CHECK_MS;
	evict_extra_block_relay(d, now);
	evict_extra_full(d, now);
	if (now > s->stale_check_ms) {
		check_stale_tip(d, now);
		s->stale_check_ms = now + STALE_CHECK_INTERVAL_MS;
	}
	/* Past the initial sync: the connection manager may start adding
	 * block-relay-only peers (Core's StartExtraBlockRelayPeers). */
	if (!s->initial_sync_finished && can_direct_fetch(d)) {
		DLOG_DBG(&d->log, DLOG_NET, "enabling extra block-relay-only peers");
		d->net->start_extra_block_relay = true;
		s->initial_sync_finished = true;
	}
}

json_t *stale_stats_json(struct daemon *d)
{
	const struct sync_state *s = d->sync;
	return json_pack("{s:I, s:I, s:I, s:i, s:b}", "lagging_disconnects",
	                 (json_int_t)s->lagging_disconnects, "extra_disconnects",
	                 (json_int_t)s->extra_disconnects, "stale_tips", (json_int_t)s->stale_tips,
	                 "protected", (int)s->n_protected, "try_new_outbound",
	                 (int)d->net->try_new_outbound);
}
