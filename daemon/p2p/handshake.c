/*
 * daemon/p2p/handshake.c: version/verack and the small control messages
 * (ping, pong, wtxidrelay, sendaddrv2, sendcmpct, feefilter, sendheaders),
 * plus the per-peer timeouts, all as Bitcoin Core 29 does them.
 *
 * The order peerd sends, mirroring Core's net_processing.cpp:
 *   outbound: version at connect;
 *   on the peer's version: (inbound: our version,) wtxidrelay and
 *     sendaddrv2 (both only to peers of version >= 70016), verack, and to
 *     an outbound peer getaddr (Core's one-time address fetch);
 *   on the peer's verack: sendcmpct(high_bandwidth=false, version 2), then
 *     what Core's SendMessages sends next: ping, feefilter.
 *   then sendheaders (BIP130, version >= 70012) between them, as peerd
 *     has a chain to announce. Core waits until it knows the peer's
 *     chain has the minimum work; on regtest that is at once.
 *
 * Timeouts (Core's InactivityCheck): from peertimeout seconds after the
 * connection opened, a peer that has not both sent and received a message,
 * or has not completed the version handshake, is disconnected; so is one
 * with no traffic either way for 20 minutes (TIMEOUT_INTERVAL). A ping goes
 * out every 2 minutes (PING_INTERVAL); one unanswered for 20 minutes
 * disconnects, also only from peertimeout seconds on. All of these run on
 * the mockable clock, as Core's (GetTime in InactivityCheck and
 * MaybeSendPing): a setmocktime jump past 20 minutes closes every peer
 * unless -peertimeout is larger than the jump, which is what Core's own
 * tests do ("-peertimeout=999999999"), and a clock standing still sends
 * no ping after the first. The round trip alone is measured with the
 * monotonic clock (Core's comes from the mockable one and reads 0 under a
 * mock time: a display difference, not a timer).
 */
#include "daemon/p2p/p2p.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

/* Core's SAFE_CHARS_DEFAULT for a peer's user agent in logs and RPC. */
static bool safe_char(char c)
{
	return isalnum((unsigned char)c) || strchr(" .,;-_/:?@()", c) != NULL;
}

static char *sanitize(const char *s, size_t len)
{
	char *out = xmalloc(len + 1);
	if (!out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] && safe_char(s[i]))
			out[n++] = s[i];
	}
	out[n] = 0;
	return out;
}

static void addr_to_netaddr(const union net_addr *a, struct proto_netaddr *na)
{
	memset(na, 0, sizeof(*na));
	if (a->sa.sa_family != AF_INET && a->sa.sa_family != AF_INET6)
		return;
	net_addr_ip16(a, na->ip);
	na->port = net_addr_port(a);
}

static int32_t common_version(const struct peer *p)
{
	return p->version < PROTO_VERSION ? p->version : PROTO_VERSION;
}

static uint64_t nonzero_random(void)
{
	uint64_t n;
	do
		n = proto_random_u64();
	while (!n);
	return n;
}

static void send_empty(struct peer *p, enum proto_cmd cmd)
{
	p->d->out.cmd = cmd;
	(void)peer_send_msg(p, &p->d->out);
}

void handshake_send_version(struct peer *p)
{
	struct daemon *d = p->d;
	struct proto_msg *m = &d->out;
	struct proto_version *v = &m->version;
	memset(v, 0, sizeof(*v));
	m->cmd = PROTO_CMD_VERSION;
	v->version = PROTO_VERSION;
	v->services = daemon_local_services(d);
	v->timestamp = daemon_time(d);
	/* Core tells a peer the address it sees only when that address is
	 * routable; a loopback or private address stays all-zero. */
	if (!net_addr_is_local(&p->addr))
		addr_to_netaddr(&p->addr, &v->addr_recv);
	v->addr_recv.services = p->inbound ? 0 : p->services;
	v->addr_from.services = daemon_local_services(p->d);
	p->local_nonce = nonzero_random();
	v->nonce = p->local_nonce;
	v->user_agent_len = (uint32_t)strlen(DAEMON_USER_AGENT);
	memcpy(v->user_agent, DAEMON_USER_AGENT, v->user_agent_len);
	/* The active chain's height as the loop last heard it. */
	int32_t height = chainview_height(d);
	v->start_height = height > 0 ? height : 0;
	/* Core's fRelay (RejectIncomingTxs): -blocksonly, block-relay-only
	 * and feeler connections ask the peer for no transactions. */
	v->relay = !d->conf->blocksonly && p->conn_type != PEER_CONN_BLOCK_RELAY &&
	           p->conn_type != PEER_CONN_FEELER;
	v->has_relay = true;
	p->sent_version = true;
	(void)peer_send_msg(p, m);
}

static void send_ping(struct peer *p, int64_t now_mock_ms)
{
	struct daemon *d = p->d;
	p->ping_nonce = nonzero_random();
	p->ping_start_us = uv_hrtime() / 1000u;
	p->ping_last_ms = now_mock_ms;
	d->out.cmd = PROTO_CMD_PING;
	d->out.nonce = p->ping_nonce;
	(void)peer_send_msg(p, &d->out);
}

/*
 * Core's GetDesirableServiceFlags, which HasAllDesirableServiceFlags (what
 * eviction calls relevant services) checks: NODE_NETWORK and NODE_WITNESS; a pruned peer's
 * NODE_NETWORK_LIMITED does instead while our tip is less than 144 blocks'
 * time old (ApproximateBestBlockDepth), as it serves the recent blocks.
 */
static uint64_t desirable_services(const struct daemon *d, uint64_t services)
{
	uint64_t want = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	const struct chainview_rec *tip = chainview_at(d, chainview_height(d));
	if ((services & PROTO_NODE_NETWORK_LIMITED) && tip) {
		const uint8_t *t = tip->header + 68; /* nTime */
		int64_t tip_time = (int64_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 |
		                             (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24);
		if (daemon_time(d) - tip_time < 144 * d->params->pow_target_spacing)
			want = PROTO_NODE_NETWORK_LIMITED | PROTO_NODE_WITNESS;
	}
	return want;
}

static bool has_desirable_services(const struct daemon *d, uint64_t services)
{
	uint64_t want = desirable_services(d, services);
	return (services & want) == want;
}

/* Core's ExpectServicesFromConn: the automatic connections made for what
 * the peer serves (not inbound, manual or feeler ones). */
static bool expects_services(const struct peer *p)
{
	return p->conn_type == PEER_CONN_OUTBOUND_FULL || p->conn_type == PEER_CONN_BLOCK_RELAY ||
	       p->conn_type == PEER_CONN_ADDR_FETCH;
}

static void on_version(struct peer *p, const struct proto_version *v)
{
	struct daemon *d = p->d;
	if (p->got_version) {
		DLOG_DBG(&d->log, DLOG_HANDSHAKE, "redundant version from peer=%llu ignored",
		         (unsigned long long)p->id);
		return;
	}
	/* Before the checks that may disconnect, as Core's VERSION handler. */
	addr_set_services(p, v->services);
	/* An automatic outbound peer without what we connected for (a pruned
	 * one during initial block download): Core's words and order. */
	if (expects_services(p) && !has_desirable_services(d, v->services)) {
		DLOG_DBG(&d->log, DLOG_NET,
		         "peer does not offer the expected services (%08llx offered, %08llx "
		         "expected), disconnecting peer=%llu",
		         (unsigned long long)v->services,
		         (unsigned long long)desirable_services(d, v->services),
		         (unsigned long long)p->id);
		peer_disconnect(p, "does not offer the expected services");
		return;
	}
	if (v->version < PEER_MIN_PROTO_VERSION) {
		DLOG_DBG(&d->log, DLOG_HANDSHAKE,
		         "peer=%llu uses obsolete version %d; disconnecting",
		         (unsigned long long)p->id, v->version);
		peer_disconnect(p, "obsolete protocol version");
		return;
	}
	if (p->inbound && net_is_local_nonce(d, v->nonce)) {
		char a[NET_ADDRSTRLEN];
		net_addr_format(&p->addr, a);
		d->stats.self_connections++;
		DLOG_INFO_(&d->log, DLOG_NET, "connected to self at %s, disconnecting", a);
		peer_disconnect(p, "connected to self");
		return;
	}
	p->version = v->version;
	p->services = v->services;
	p->relevant_services = has_desirable_services(d, v->services);
	/* Where it sees us (Core's SetAddrLocal; an inbound peer's view
	 * confirms one of our addresses: SeenLocal). */
	p->addr_local = addrman_service_from_v1(v->addr_recv.ip, v->addr_recv.port);
	if (p->inbound && addrman_netaddr_routable(&p->addr_local))
		(void)net_seen_local(d, &p->addr_local);
	p->start_height = v->start_height;
	/* A block-relay-only peer relays no transactions either way (Core
	 * makes no m_tx_relay for it: getpeerinfo's relaytxes is false). */
	p->relaytxes = v->relay && p->conn_type != PEER_CONN_BLOCK_RELAY;
	xfree(p->subver);
	p->subver = sanitize(v->user_agent, v->user_agent_len);
	p->got_version = true;
	if (p->inbound)
		handshake_send_version(p);
	if (common_version(p) >= PEER_WTXID_RELAY_VERSION) {
		send_empty(p, PROTO_CMD_WTXIDRELAY);
		send_empty(p, PROTO_CMD_SENDADDRV2);
	}
	send_empty(p, PROTO_CMD_VERACK);
	/* Outbound: address relay starts with our getaddr. */
	addr_on_version(p);
	DLOG_DBG(&d->log, DLOG_HANDSHAKE,
	         "receive version message: %s: version %d, blocks=%d, peer=%llu",
	         p->subver ? p->subver : "", p->version, p->start_height,
	         (unsigned long long)p->id);
	/* The addrman's Good; a feeler has learned what it came for. */
	net_outbound_version(p);
}

static void on_verack(struct peer *p)
{
	struct daemon *d = p->d;
	if (p->state == PEER_ACTIVE) {
		DLOG_DBG(&d->log, DLOG_HANDSHAKE, "redundant verack from peer=%llu ignored",
		         (unsigned long long)p->id);
		return;
	}
	p->state = PEER_ACTIVE;
	p->handshake_done = true;
	if (p->target) {
		/* A completed handshake proves the target works: retry soon. */
		p->target->backoff_ms = NET_BACKOFF_INITIAL_MS;
	}
	if (!p->inbound || dlog_enabled(&d->log, DLOG_DEBUG, DLOG_NET)) {
		char a[NET_ADDRSTRLEN];
		net_addr_format(&p->addr, a);
		dlog_write(&d->log, p->inbound ? DLOG_DEBUG : DLOG_INFO, DLOG_NET,
		           "new %s peer connected: %s version %d %s peer=%llu",
		           peer_conn_type_name(p->conn_type), a, p->version,
		           p->subver ? p->subver : "", (unsigned long long)p->id);
	}
	if (common_version(p) >= PEER_SHORT_IDS_VERSION) {
		d->out.cmd = PROTO_CMD_SENDCMPCT;
		d->out.sendcmpct.high_bandwidth = false;
		d->out.sendcmpct.version = PEER_CMPCT_VERSION;
		(void)peer_send_msg(p, &d->out);
	}
	if (p->state != PEER_ACTIVE)
		return;
	send_ping(p, daemon_time_ms(d));
	/* Core's SendMessages runs MaybeSendAddr in the same pass as the
	 * verack: our own address goes out now, alone, not at the next tick
	 * with the relays queued meanwhile (the peer's bucket holds one token,
	 * so a bundled announcement is dropped half the time). */
	addrrelay_tick(p, (uint64_t)daemon_time_ms(d));
	if (p->state != PEER_ACTIVE)
		return;
	/* BIP130's sendheaders is not sent here: as Core's
	 * MaybeSendSendHeaders, sync/download.c sends it once the peer's best known
	 * block has more than the minimum chain work. */
	/* Then Core's "start block sync" (a getheaders if this peer is one)
	 * and transaction relay's start (the first feefilter): the rooms
	 * above, in that order (daemon/p2p_hooks.c). */
	if (p->state == PEER_ACTIVE)
		d->p2p_hooks->peer_ready(p);
}

static void on_pong(struct peer *p, uint64_t nonce)
{
	struct daemon *d = p->d;
	if (!p->ping_nonce) {
		DLOG_DBG(&d->log, DLOG_HANDSHAKE, "unsolicited pong from peer=%llu",
		         (unsigned long long)p->id);
		return;
	}
	if (nonce == 0) {
		/* Core: a zero nonce cancels the ping. */
		p->ping_nonce = 0;
		return;
	}
	if (nonce != p->ping_nonce) {
		DLOG_DBG(&d->log, DLOG_HANDSHAKE, "pong nonce mismatch from peer=%llu",
		         (unsigned long long)p->id);
		return;
	}
	uint64_t now_us = uv_hrtime() / 1000u;
	int64_t rtt = (int64_t)(now_us - p->ping_start_us);
	p->ping_nonce = 0;
	p->ping_us = rtt;
	if (p->minping_us < 0 || rtt < p->minping_us)
		p->minping_us = rtt;
}

void handshake_on_version(struct peer *p, const struct proto_msg *m)
{
	on_version(p, &m->version);
}

void handshake_on_verack(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	on_verack(p);
}

void handshake_on_ping(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	if (p->version > PEER_BIP31_VERSION) {
		d->out.cmd = PROTO_CMD_PONG;
		d->out.nonce = m->nonce;
		(void)peer_send_msg(p, &d->out);
	}
}

void handshake_on_pong(struct peer *p, const struct proto_msg *m)
{
	on_pong(p, m->nonce);
}

/* Core 29: wtxidrelay and sendaddrv2 are only meaningful between version
 * and verack; after verack either is a protocol violation that disconnects. */
static bool negotiating(struct peer *p, const char *after_verack)
{
	if (p->state == PEER_ACTIVE) {
		peer_disconnect(p, after_verack);
		return false;
	}
	return true;
}

void handshake_on_wtxidrelay(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	if (negotiating(p, "wtxidrelay after verack") &&
	    common_version(p) >= PEER_WTXID_RELAY_VERSION)
		p->wtxidrelay = true;
}

void handshake_on_sendaddrv2(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	if (negotiating(p, "sendaddrv2 after verack"))
		p->sendaddrv2 = true;
}

void handshake_on_sendcmpct(struct peer *p, const struct proto_msg *m)
{
	/* Core: only compact blocks with witnesses; another version is
	 * ignored, not taken as a change of mind. */
	if (m->sendcmpct.version != PEER_CMPCT_VERSION)
		return;
	p->cmpct_high_bandwidth = m->sendcmpct.high_bandwidth;
	p->cmpct_version = m->sendcmpct.version;
}

void handshake_on_feefilter(struct peer *p, const struct proto_msg *m)
{
	if (m->feerate >= 0 && m->feerate <= PROTO_MAX_MONEY)
		p->feefilter = m->feerate;
}

void handshake_on_sendheaders(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	p->sendheaders = true;
}

/* Core's ShouldRunInactivityChecks: peertimeout seconds after the connect,
 * by the mockable clock (a clock set back just postpones them). */
static bool inactivity_checks(const struct peer *p, int64_t now)
{
	return p->conntime + (int64_t)(p->d->net->peertimeout_ms / 1000u) < now;
}

void handshake_tick(struct peer *p, uint64_t now_ms)
{
	struct daemon *d = p->d;
	(void)now_ms; /* the loop's clock: Core times none of these by its steady clock */
	int64_t now = daemon_time(d);
	bool checks = inactivity_checks(p, now);
	if (checks) {
		if (!p->lastrecv || !p->lastsend) {
			d->stats.handshake_timeouts++;
			peer_disconnect(p, "no message in the first peertimeout seconds");
			return;
		}
		if (now > p->lastsend + PEER_TIMEOUT_INTERVAL_MS / 1000) {
			d->stats.inactivity_timeouts++;
			peer_disconnect(p, "socket sending timeout");
			return;
		}
		if (now > p->lastrecv + PEER_TIMEOUT_INTERVAL_MS / 1000) {
			d->stats.inactivity_timeouts++;
			peer_disconnect(p, "socket receive timeout");
			return;
		}
		if (p->state != PEER_ACTIVE) {
			d->stats.handshake_timeouts++;
			peer_disconnect(p, "version handshake timeout");
			return;
		}
	}
	if (p->state != PEER_ACTIVE)
		return;
	int64_t now_mock_ms = daemon_time_ms(d);
	if (p->ping_nonce) {
		if (checks && now_mock_ms > p->ping_last_ms + PEER_TIMEOUT_INTERVAL_MS) {
			d->stats.ping_timeouts++;
			peer_disconnect(p, "ping timeout");
		}
		return;
	}
	if (now_mock_ms > p->ping_last_ms + PEER_PING_INTERVAL_MS)
		send_ping(p, now_mock_ms);
}

void handshake_ping_now(struct peer *p)
{
	/* The ping method: a new ping replaces one outstanding, as Core's queued ping does. */
	if (p->handshake_done && p->state != PEER_CLOSING)
		send_ping(p, daemon_time_ms(p->d));
}
