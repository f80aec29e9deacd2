/*
 * daemon/net/outbound.c: the automatic outbound connections, as Bitcoin
 * Core 29's CConnman::ThreadOpenConnections (net.cpp) does them, on a
 * loop timer instead of a thread: every 500 ms (Core's sleep between
 * rounds) at most one new connection is opened.
 *
 * Without connect= (Core's m_use_addrman_outgoing), each round chooses
 * what to open, in Core's order:
 *   1. an anchor (anchors.dat, read and deleted at start) as a
 *      block-relay-only peer, while block-relay-only slots are free;
 *   2. outbound-full-relay up to max_outbound_full;
 *   3. block-relay-only up to max_block_relay;
 *   4. one more full-relay peer while the stale-tip check asks for it
 *      (try_new_outbound);
 *   5. once near the tip, an extra block-relay-only peer every 5 minutes
 *      on average (Core's EXTRA_BLOCK_RELAY_ONLY_PEER_INTERVAL; the
 *      lagging-peer eviction then keeps the better of the youngest two);
 *   6. a feeler every 2 minutes on average (FEELER_INTERVAL): a tried
 *      collision's old entry first, else a new-table address;
 *   7. every 5 minutes on average, with all 8 full-relay slots full, a
 *      full-relay peer on a reachable network that has none yet.
 * and then draws up to 100 addresses from the addrman with Core's rules:
 * one outbound per IPv4/IPv6 network group (feelers and Tor, I2P and
 * CJDNS exempt), reachable networks only, an address tried in the last
 * 10 minutes only after 30 draws, bad ports (Core's IsBadPort) only
 * after 50, the services Core wants (NODE_NETWORK|NODE_WITNESS, or
 * NETWORK_LIMITED near the tip; a feeler only a full or limited node),
 * never an addnode= target. Automatic connections (feelers and
 * addr-fetch included) are at most max_outbound_full + max_block_relay +
 * max_feeler at once (Core's semOutbound).
 *
 * addrman bookkeeping, as Core: Attempt when a connect finishes (its
 * failure counted only for automatic peers while at least 2 groups are
 * reached, so an offline node does not mark everything bad), Good when an
 * outbound peer's version arrives, Connected when a peer that completed
 * the handshake goes (never for block-relay-only peers: their addresses
 * must not leak).
 *
 * Addr-fetch (Core's AddAddrFetch/ProcessAddrFetch): names queued by
 * -seednode (one every 10 s while fewer than 2 full-relay peers are
 * connected, the first at once with an empty addrman) or by the DNS seeds
 * (net_addr_fetch_add); one is dialled per round when an automatic slot
 * is free, else dropped, as Core. An addr-fetch peer is closed after its
 * addr answer (p2p/) or 5 minutes.
 *
 * anchors.dat (addrdb.cpp's DumpAnchors/ReadAnchors): the block-relay-only
 * peers at shutdown, at most 2, in Core's format (the network magic, a
 * vector of CAddress in disk format with BIP155 addresses, SHA-256d).
 */
#include "daemon/net/net.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "addrman/addrman.h"
#include "base/require.h"

/** Between rounds (Core sleeps 500 ms in ThreadOpenConnections). */
#define OB_ROUND_MS 500u
/** Core's FEELER_INTERVAL. */
#define OB_FEELER_INTERVAL_MS (2u * 60u * 1000u)
/** Core's EXTRA_BLOCK_RELAY_ONLY_PEER_INTERVAL. */
#define OB_EXTRA_BLOCK_RELAY_MS (5u * 60u * 1000u)
/** Core's EXTRA_NETWORK_PEER_INTERVAL. */
#define OB_EXTRA_NETWORK_MS (5u * 60u * 1000u)
/** Core's ADD_NEXT_SEEDNODE. */
#define OB_NEXT_SEEDNODE_MS 10000u
/** Core's SEED_OUTBOUND_CONNECTION_THRESHOLD. */
#define OB_SEED_THRESHOLD 2u
/** An addr-fetch peer goes after this (Core: 10 x AVG_ADDRESS_BROADCAST_INTERVAL). */
#define OB_ADDR_FETCH_TIMEOUT_S 300
/** Core's MAX_BLOCK_RELAY_ONLY_ANCHORS. */
#define OB_MAX_ANCHORS 2u
/** Core's DISK_VERSION_INIT | DISK_VERSION_ADDRV2: a CAddress's disk header. */
#define OB_DISK_VERSION (220000u | (1u << 29))
/** Core's DISK_VERSION_IGNORE_MASK: the client version's bits, ignored. */
#define OB_DISK_VERSION_IGNORE 0x7ffffu
/** Addr-fetch names waiting at most. */
#define OB_MAX_FETCH 256u

struct net_outbound {
	struct daemon *d;
	uv_timer_t timer;
	bool automatic; /**< no connect=: choose from the addrman (m_use_addrman_outgoing) */
	/* Core's Poisson timers, the mockable clock's ms (daemon_time_ms) */
	uint64_t next_feeler_ms, next_extra_block_ms, next_extra_net_ms;
	int64_t tip_time; /**< the active tip's block time, 0 unknown */
	/* anchors.dat, read at start, connected first */
	struct addrman_address anchors[OB_MAX_ANCHORS];
	uint32_t n_anchors;
	char *anchors_path;
	/* the addr-fetch queue (Core's m_addr_fetches), oldest first */
	char *fetch[OB_MAX_FETCH];
	uint32_t n_fetch;
	/* -seednode: the ones not yet queued are seeds[0..n_seeds), taken from the end */
	uint32_t n_seeds;
	uint64_t seed_timer_ms;
	bool add_addr_fetch;
};

/* Exponential with mean `mean_ms` (Core's rand_exp_duration). */
static uint64_t exp_delay(uint64_t mean_ms)
{
	double u = ((double)(proto_random_u64() >> 11) + 0.5) / 9007199254740992.0;
	return (uint64_t)(-log(u) * (double)mean_ms);
}

/* The networks outbound connections may reach: net/reach.c's, Core's
 * g_reachable_nets (-onlynet, -proxy, -onion, -cjdnsreachable). */
static uint32_t reachable_mask(const struct daemon *d)
{
	return net_reachable_mask(d);
}

static bool reachable(const struct daemon *d, const struct addrman_service *s)
{
	return (reachable_mask(d) >> addrman_netaddr_network(s)) & 1u;
}

/* Core's IsBadPort (netbase.cpp): ports of other well-known services. */
bool net_outbound_bad_port(uint16_t port)
{
	static const uint16_t bad[] = {
	    1,    7,    9,    11,   13,   15,   17,   19,   20,   21,   22,   23,   25,   37,
	    42,   43,   53,   69,   77,   79,   87,   95,   101,  102,  103,  104,  109,  110,
	    111,  113,  115,  117,  119,  123,  135,  137,  139,  143,  161,  179,  389,  427,
	    465,  512,  513,  514,  515,  526,  530,  531,  532,  540,  548,  554,  556,  563,
	    587,  601,  636,  989,  990,  993,  995,  1719, 1720, 1723, 2049, 3659, 4045, 5060,
	    5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i] == port)
			return true;
	}
	return false;
}

/* ---- addresses ------------------------------------------------------- */

void net_addr_to_service(const union net_addr *a, struct addrman_service *out)
{
	uint8_t ip[16];
	net_addr_ip16(a, ip);
	*out = addrman_service_from_v1(ip, net_addr_port(a));
}

int net_service_to_addr(const struct addrman_service *s, union net_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (s->net == ADDRMAN_NET_IPV4 && s->len == 4) {
		out->in4.sin_family = AF_INET;
		out->in4.sin_port = htons(s->port);
		memcpy(&out->in4.sin_addr, s->addr, 4);
		return 0;
	}
	if (s->net == ADDRMAN_NET_IPV6 && s->len == 16) {
		out->in6.sin6_family = AF_INET6;
		out->in6.sin6_port = htons(s->port);
		memcpy(&out->in6.sin6_addr, s->addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT; /* Tor, I2P, CJDNS: no proxy yet */
}

/* Core's HasAllDesirableServiceFlags: a limited node is enough near the tip. */
static bool desirable_services(const struct net_outbound *o, uint64_t services)
{
	uint64_t want = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	if ((services & PROTO_NODE_NETWORK_LIMITED) && o && o->tip_time &&
	    daemon_time(o->d) - o->tip_time < 144 * o->d->params->pow_target_spacing)
		want = PROTO_NODE_NETWORK_LIMITED | PROTO_NODE_WITNESS;
	return (services & want) == want;
}

/* Whether a peer (not closing) is at this IP, any port (Core's AlreadyConnectedToAddress). */
static bool connected_to(const struct daemon *d, const struct addrman_service *s)
{
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->state == PEER_CLOSING)
			continue;
		struct addrman_service ps;
		net_addr_to_service(&p->addr, &ps);
		if (addrman_netaddr_eq(&ps, s))
			return true;
	}
	return false;
}

/* An addnode=/connect= target names this address (Core's AddedNodesContain). */
static bool is_added_node(const struct daemon *d, const struct addrman_service *s)
{
	for (uint32_t i = 0; i < d->net->n_targets; i++) {
		const struct net_target *t = d->net->targets[i];
		union net_addr a;
		if (t->type != PEER_CONN_MANUAL ||
		    net_addr_parse(t->name, d->params->default_port, &a))
			continue;
		struct addrman_service ts;
		net_addr_to_service(&a, &ts);
		if (addrman_service_eq(&ts, s))
			return true;
	}
	return false;
}

/* ---- what is connected ------------------------------------------------ */

void net_outbound_count(const struct daemon *d, struct net_outbound_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->state == PEER_CLOSING)
			continue;
		switch (p->conn_type) {
		case PEER_CONN_OUTBOUND_FULL:
			c->full++;
			c->automatic++;
			break;
		case PEER_CONN_BLOCK_RELAY:
			c->block++;
			c->automatic++;
			break;
		case PEER_CONN_FEELER:
		case PEER_CONN_ADDR_FETCH:
			c->automatic++;
			continue; /* short-lived: no say in the groups */
		case PEER_CONN_INBOUND:
			continue; /* free to make: no say either */
		case PEER_CONN_MANUAL:
			break;
		}
		struct addrman_service s;
		net_addr_to_service(&p->addr, &s);
		enum addrman_net net = addrman_netaddr_network(&s);
		if (p->conn_type != PEER_CONN_BLOCK_RELAY)
			c->full_by_net[net]++; /* Core's m_network_conn_counts: manual or full */
		if (net == ADDRMAN_NET_ONION || net == ADDRMAN_NET_I2P ||
		    net == ADDRMAN_NET_CJDNS) {
			c->privacy++;
			continue;
		}
		uint8_t g[ADDRMAN_GROUP_MAX];
		size_t gl = addrman_netaddr_group(&s, g);
		bool seen = false;
		for (uint32_t k = 0; k < c->n_groups && !seen; k++)
			seen = c->group_len[k] == gl && memcmp(c->groups[k], g, gl) == 0;
		if (!seen && c->n_groups < NET_OUTBOUND_MAX_GROUPS) {
			memcpy(c->groups[c->n_groups], g, gl);
			c->group_len[c->n_groups++] = (uint8_t)gl;
		}
	}
}

static bool group_taken(const struct net_outbound_counts *c, const struct addrman_service *s)
{
	uint8_t g[ADDRMAN_GROUP_MAX];
	size_t gl = addrman_netaddr_group(s, g);
	for (uint32_t k = 0; k < c->n_groups; k++) {
		if (c->group_len[k] == gl && memcmp(c->groups[k], g, gl) == 0)
			return true;
	}
	return false;
}

/* ---- choosing --------------------------------------------------------- */

bool net_outbound_pick(struct daemon *d, const struct net_outbound_counts *c, bool feeler,
                       int preferred_net, struct addrman_address *out)
{
	const struct net_outbound *o = d->net->ob;
	int64_t now = daemon_time(d);
	uint32_t nets = preferred_net >= 0 ? 1u << preferred_net : reachable_mask(d);
	for (int tries = 1; tries <= 100; tries++) {
		struct addrman_address a;
		int64_t last_try = 0;
		bool got;
		if (feeler) {
			got = addrman_select_tried_collision(d->addrman, &a, &last_try);
			if (got && connected_to(d, &a.svc)) {
				/* Testing it would evict a peer we have: it is alive. */
				(void)addrman_good(d->addrman, &a.svc, now);
				got = false;
			}
			if (!got)
				got = addrman_select(d->addrman, true, nets, now, &a, &last_try);
		} else {
			got = addrman_select(d->addrman, false, nets, now, &a, &last_try);
		}
		if (!got)
			return false; /* Core: an invalid address ends the round */
		bool privacy = a.svc.net == ADDRMAN_NET_ONION || a.svc.net == ADDRMAN_NET_I2P ||
		               a.svc.net == ADDRMAN_NET_CJDNS;
		if (!feeler && !privacy && group_taken(c, &a.svc))
			continue;
		if (!addrman_netaddr_valid(&a.svc))
			return false;
		if (!reachable(d, &a.svc))
			continue;
		if (now - last_try < 600 && tries < 30)
			continue;
		if (!feeler && !desirable_services(o, a.services))
			continue;
		if (feeler && !(a.services & (PROTO_NODE_NETWORK | PROTO_NODE_NETWORK_LIMITED)))
			continue;
		if (tries < 50 &&
		    (a.svc.net == ADDRMAN_NET_IPV4 || a.svc.net == ADDRMAN_NET_IPV6 ||
		     a.svc.net == ADDRMAN_NET_CJDNS) &&
		    net_outbound_bad_port(a.svc.port))
			continue;
		if (is_added_node(d, &a.svc)) {
			char s[128];
			addrman_service_str(&a.svc, s, sizeof(s));
			DLOG_DBG(&d->log, DLOG_NET,
			         "Not making automatic %s%s connection to %s peer selected for "
			         "manual (addnode) connection",
			         preferred_net >= 0 ? "network-specific " : "",
			         feeler ? "feeler" : "outbound", addrman_net_name(a.svc.net));
			continue;
		}
		*out = a;
		return true;
	}
	return false;
}

/* ---- dialing ---------------------------------------------------------- */

/* Core's OpenNetworkConnection for an addrman address: not to a banned or
 * discouraged address, one already connected, or one of our own (IsLocal);
 * through the network's proxy when it has one (Core's ConnectNode). */
static void open_connection(struct daemon *d, const struct addrman_address *a,
                            enum peer_conn_type t, bool count_failure)
{
	union net_addr na;
	struct net_socks5 *socks = NULL;
	if (net_is_local_service(d, &a->svc) || connected_to(d, &a->svc))
		return;
	int route = net_socks5_route_service(d, &a->svc, &na, &socks);
	if (route < 0)
		return;
	if (route == 0) {
		if (net_service_to_addr(&a->svc, &na) || ban_check(d, &na) != BAN_OK)
			return;
	} else {
		union net_addr dest;
		if (net_service_to_addr(&a->svc, &dest) == 0 && ban_check(d, &dest) != BAN_OK) {
			net_socks5_attach(NULL, socks); /* frees it */
			return;
		}
	}
	struct peer *p = net_dial(d, &na, t, NULL, socks);
	if (p) {
		p->count_failure = count_failure;
		p->dial_services = a->services;
	}
}

enum net_outbound_kind net_outbound_choose(const struct net_state *n,
                                           const struct net_outbound_counts *c,
                                           const struct net_outbound_due *due)
{
	if (due->anchors && c->block < n->max_block_relay)
		return NET_OB_ANCHOR;
	if (c->full < n->max_outbound_full)
		return NET_OB_FULL;
	if (c->block < n->max_block_relay)
		return NET_OB_BLOCK;
	if (n->try_new_outbound)
		return NET_OB_STALE_TIP;
	if (due->extra_block)
		return NET_OB_EXTRA_BLOCK;
	if (due->feeler)
		return NET_OB_FEELER;
	/* Not when a small maxconnections left fewer than 8 full-relay slots. */
	if (c->full == n->max_outbound_full && n->max_outbound_full == NET_MAX_OUTBOUND_FULL &&
	    due->extra_net)
		return NET_OB_EXTRA_NET;
	return NET_OB_NONE;
}

/* The choice of one round (Core's ThreadOpenConnections loop body). */
static void open_round(struct daemon *d, uint64_t now_ms)
{
	struct net_state *n = d->net;
	struct net_outbound *o = n->ob;
	struct net_outbound_counts c;
	net_outbound_count(d, &c);
	uint32_t max_auto = n->max_outbound_full + n->max_block_relay + n->max_feeler;
	if (max_auto > n->maxconnections)
		max_auto = n->maxconnections;

	/* -seednode: one more every 10 s while we lack full-relay peers. */
	if (o->n_seeds && c.full < OB_SEED_THRESHOLD &&
	    now_ms > o->seed_timer_ms + OB_NEXT_SEEDNODE_MS) {
		o->seed_timer_ms = now_ms;
		o->add_addr_fetch = true;
	}
	if (o->add_addr_fetch && o->n_seeds) {
		o->add_addr_fetch = false;
		const char *seed = d->conf->seednode.v[--o->n_seeds];
		(void)net_addr_fetch_add(d, seed);
		if (addrman_size(d->addrman, -1, -1) == 0)
			DLOG_INFO_(&d->log, DLOG_NET,
			           "Empty addrman, adding seednode (%s) to addrfetch", seed);
		else
			DLOG_INFO_(
			    &d->log, DLOG_NET,
			    "Couldn't connect to peers from addrman after %u seconds. Adding "
			    "seednode (%s) to addrfetch",
			    OB_NEXT_SEEDNODE_MS / 1000u, seed);
	}
	if (c.automatic >= max_auto)
		return; /* Core waits for semOutbound */

	struct net_outbound_due due = {
	    .anchors = o->n_anchors > 0,
	    .extra_block = d->net->start_extra_block_relay && now_ms > o->next_extra_block_ms,
	    .feeler = now_ms > o->next_feeler_ms,
	    .extra_net = now_ms > o->next_extra_net_ms,
	};
	enum net_outbound_kind kind = net_outbound_choose(n, &c, &due);
	enum peer_conn_type t = PEER_CONN_OUTBOUND_FULL;
	bool anchor = kind == NET_OB_ANCHOR, feeler = kind == NET_OB_FEELER;
	int preferred = -1;
	switch (kind) {
	case NET_OB_NONE:
		return;
	case NET_OB_ANCHOR:
	case NET_OB_BLOCK:
		t = PEER_CONN_BLOCK_RELAY;
		break;
	case NET_OB_FULL:
	case NET_OB_STALE_TIP:
		break;
	case NET_OB_EXTRA_BLOCK:
		o->next_extra_block_ms = now_ms + exp_delay(OB_EXTRA_BLOCK_RELAY_MS);
		t = PEER_CONN_BLOCK_RELAY;
		break;
	case NET_OB_FEELER:
		o->next_feeler_ms = now_ms + exp_delay(OB_FEELER_INTERVAL_MS);
		t = PEER_CONN_FEELER;
		break;
	case NET_OB_EXTRA_NET:
		/* Core's MaybePickPreferredNetwork is the branch's last test. */
		if ((preferred = net_outbound_preferred_net(d, &c)) < 0)
			return;
		o->next_extra_net_ms = now_ms + exp_delay(OB_EXTRA_NETWORK_MS);
		break;
	}

	addrman_resolve_collisions(d->addrman, daemon_time(d));
	struct addrman_address a;
	bool found = false;
	while (anchor && o->n_anchors && !found) {
		a = o->anchors[--o->n_anchors];
		if (!addrman_netaddr_valid(&a.svc) || !reachable(d, &a.svc) ||
		    !desirable_services(o, a.services) || group_taken(&c, &a.svc))
			continue;
		char s[128];
		addrman_service_str(&a.svc, s, sizeof(s));
		DLOG_DBG(&d->log, DLOG_NET, "Trying to make an anchor connection to %s", s);
		found = true;
	}
	if (!found)
		found = net_outbound_pick(d, &c, feeler, preferred, &a);
	if (!found)
		return;
	char s[128];
	addrman_service_str(&a.svc, s, sizeof(s));
	if (feeler)
		DLOG_DBG(&d->log, DLOG_NET, "Making feeler connection to %s", s);
	if (preferred >= 0)
		DLOG_DBG(&d->log, DLOG_NET, "Making network specific connection to %s on %s.", s,
		         addrman_net_name((enum addrman_net)preferred));
	/* Count failures only while the node looks online (2 groups reached). */
	uint32_t reach = c.n_groups + c.privacy;
	uint32_t need = n->maxconnections - 1 < 2 ? n->maxconnections - 1 : 2;
	open_connection(d, &a, t, reach >= need);
}

int net_outbound_preferred_net(struct daemon *d, const struct net_outbound_counts *c)
{
	static const enum addrman_net nets[] = {ADDRMAN_NET_IPV4, ADDRMAN_NET_IPV6,
	                                        ADDRMAN_NET_ONION, ADDRMAN_NET_I2P,
	                                        ADDRMAN_NET_CJDNS};
	const size_t n = sizeof(nets) / sizeof(nets[0]);
	size_t start = (size_t)(proto_random_u64() % n); /* Core shuffles them */
	for (size_t i = 0; i < n; i++) {
		enum addrman_net net = nets[(start + i) % n];
		if (((reachable_mask(d) >> net) & 1u) && c->full_by_net[net] == 0 &&
		    addrman_size(d->addrman, (int)net, -1) != 0)
			return (int)net;
	}
	return -1;
}

/* Core's ProcessAddrFetch: the oldest name, if an automatic slot is free. */
static void process_addr_fetch(struct daemon *d)
{
	struct net_outbound *o = d->net->ob;
	if (!o->n_fetch)
		return;
	char *name = o->fetch[0];
	memmove(o->fetch, o->fetch + 1, (o->n_fetch - 1) * sizeof(*o->fetch));
	o->n_fetch--;
	struct net_outbound_counts c;
	net_outbound_count(d, &c);
	if (net_outbound_slot_free(d, &c)) {
		int err = net_target_add_type(d, name, PEER_CONN_ADDR_FETCH, d->conf->v2transport);
		if (err && err != -EEXIST)
			DLOG_DBG(&d->log, DLOG_NET, "addr-fetch %s: %s", name, strerror(-err));
	}
	xfree(name);
}

bool net_outbound_slot_free(const struct daemon *d, const struct net_outbound_counts *c)
{
	const struct net_state *n = d->net;
	uint32_t max_auto = n->max_outbound_full + n->max_block_relay + n->max_feeler;
	if (max_auto > n->maxconnections)
		max_auto = n->maxconnections;
	return c->automatic < max_auto;
}

int net_addr_fetch_add(struct daemon *d, const char *name)
{
	struct net_outbound *o = d->net->ob;
	if (!o)
		return -EINVAL;
	for (uint32_t i = 0; i < o->n_fetch; i++) {
		if (strcmp(o->fetch[i], name) == 0)
			return 0;
	}
	if (o->n_fetch >= OB_MAX_FETCH)
		return -ENOSPC;
	char *s = xstrdup(name);
	if (!s)
		return -ENOMEM;
	o->fetch[o->n_fetch++] = s;
	return 0;
}

static void on_round(uv_timer_t *t)
{
	struct net_outbound *o = t->data;
	struct daemon *d = o->d;
	if (d->shutting_down || d->network_inactive)
		return;
	/* Addr-fetch peers that never answered go (Core's addrfetch timeout). */
	int64_t now = daemon_time(d);
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *p = d->peers[i];
		if (p->conn_type == PEER_CONN_ADDR_FETCH && p->state != PEER_CLOSING &&
		    p->state != PEER_CONNECTING && now - p->conntime > OB_ADDR_FETCH_TIMEOUT_S)
			peer_disconnect(p, "addrfetch connection timeout");
	}
	process_addr_fetch(d);
	if (o->automatic)
		open_round(d, (uint64_t)daemon_time_ms(d)); /* Core's GetTime: mockable */
}

/* ---- anchors.dat ------------------------------------------------------ */

static void put_u32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Compact size of at most 0xfc: all anchors.dat needs (2 entries, 32-byte addresses). */
size_t net_anchors_encode(const struct addrman_address *v, uint32_t n, uint32_t magic, uint8_t *buf,
                          size_t cap)
{
	size_t len = 0;
	if (cap < 4 + 1 + 32)
		return 0;
	put_u32(buf, magic);
	len = 4;
	buf[len++] = (uint8_t)n;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *addr;
		size_t alen;
		uint8_t id = addrman_service_bip155(&v[i].svc, &addr, &alen);
		/* version, time, services (compact size), net id, length, bytes, port */
		if (len + 4 + 4 + 9 + 2 + alen + 2 + 32 > cap)
			return 0;
		put_u32(buf + len, OB_DISK_VERSION);
		put_u32(buf + len + 4, (uint32_t)v[i].time);
		len += 8;
		uint64_t sv = v[i].services;
		if (sv < 0xfd) {
			buf[len++] = (uint8_t)sv;
		} else if (sv <= 0xffff) {
			buf[len++] = 0xfd;
			buf[len++] = (uint8_t)sv;
			buf[len++] = (uint8_t)(sv >> 8);
		} else if (sv <= 0xffffffffu) {
			buf[len++] = 0xfe;
			put_u32(buf + len, (uint32_t)sv);
			len += 4;
		} else {
			buf[len++] = 0xff;
			put_u32(buf + len, (uint32_t)sv);
			put_u32(buf + len + 4, (uint32_t)(sv >> 32));
			len += 8;
		}
		buf[len++] = id;
		buf[len++] = (uint8_t)alen;
		memcpy(buf + len, addr, alen);
		len += alen;
		buf[len++] = (uint8_t)(v[i].svc.port >> 8); /* big-endian, as Core */
		buf[len++] = (uint8_t)v[i].svc.port;
	}
	if (len + 32 > cap)
		return 0;
	proto_sha256d(buf, len, buf + len);
	return len + 32;
}

int net_anchors_decode(const uint8_t *buf, size_t len, uint32_t magic, struct addrman_address *v,
                       uint32_t max, uint32_t *n)
{
	uint8_t h[32];
	*n = 0;
	if (len < 4 + 1 + 32)
		return -EINVAL;
	proto_sha256d(buf, len - 32, h);
	if (memcmp(h, buf + len - 32, 32) || get_u32(buf) != magic)
		return -EINVAL;
	size_t end = len - 32, pos = 4;
	uint64_t count = buf[pos++];
	if (count >= 0xfd)
		return -EINVAL; /* more anchors than Core ever writes */
	for (uint64_t i = 0; i < count; i++) {
		if (pos + 9 > end)
			return -EINVAL;
		uint32_t ver = get_u32(buf + pos) & ~(uint32_t)OB_DISK_VERSION_IGNORE;
		if (ver != (1u << 29))
			return -EINVAL; /* Core writes anchors with BIP155 addresses */
		struct addrman_address a;
		memset(&a, 0, sizeof(a));
		a.time = get_u32(buf + pos + 4);
		pos += 8;
		uint8_t c = buf[pos++];
		size_t sl = c < 0xfd ? 0 : c == 0xfd ? 2 : c == 0xfe ? 4 : 8;
		if (pos + sl + 2 > end)
			return -EINVAL;
		if (!sl) {
			a.services = c;
		} else {
			for (size_t k = 0; k < sl; k++)
				a.services |= (uint64_t)buf[pos + k] << (8 * k);
			/* Core refuses a compact size longer than it needs. */
			uint64_t min = sl == 2 ? 0xfd : sl == 4 ? 0x10000 : 0x100000000ull;
			if (a.services < min)
				return -EINVAL;
		}
		pos += sl;
		uint8_t id = buf[pos++], alen = buf[pos++];
		if (pos + alen + 2 > end || alen > 32)
			return -EINVAL;
		uint16_t port = (uint16_t)(buf[pos + alen] << 8 | buf[pos + alen + 1]);
		if (addrman_service_from_bip155(id, buf + pos, alen, port, &a.svc))
			return -EINVAL;
		pos += alen + 2u;
		if (*n < max)
			v[(*n)++] = a;
	}
	return pos == end ? 0 : -EINVAL;
}

/* Core's ReadAnchors: read, then delete, so a crash never reuses them. */
static void read_anchors(struct daemon *d)
{
	struct net_outbound *o = d->net->ob;
	FILE *f = fopen(o->anchors_path, "rb");
	if (!f)
		return;
	uint8_t buf[1024];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (net_anchors_decode(buf, len, d->params->magic, o->anchors, OB_MAX_ANCHORS,
	                       &o->n_anchors)) {
		o->n_anchors = 0;
		DLOG_INFO_(&d->log, DLOG_NET, "Failed to deserialize anchors %s: ignored",
		           o->anchors_path);
	}
	DLOG_INFO_(&d->log, DLOG_NET, "Loaded %u addresses from \"anchors.dat\"", o->n_anchors);
	DLOG_INFO_(&d->log, DLOG_NET, "%u block-relay-only anchors will be tried for connections.",
	           o->n_anchors);
	if (unlink(o->anchors_path))
		DLOG_WARNING(&d->log, DLOG_NET, "cannot remove %s: %s", o->anchors_path,
		             strerror(errno));
}

/* Core's DumpAnchors at StopNodes: the block-relay-only peers connected now. */
static void dump_anchors(struct daemon *d, const struct net_outbound *o)
{
	struct addrman_address v[OB_MAX_ANCHORS];
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->n_peers && n < OB_MAX_ANCHORS; i++) {
		const struct peer *p = d->peers[i];
		if (p->conn_type != PEER_CONN_BLOCK_RELAY || !p->handshake_done ||
		    p->state == PEER_CLOSING)
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		net_addr_to_service(&p->addr, &v[n].svc);
		v[n].services =
		    p->dial_services; /* as Core: the address dialled, not its version */
		v[n].time = daemon_time(d);
		n++;
	}
	uint8_t buf[512];
	size_t len = net_anchors_encode(v, n, d->params->magic, buf, sizeof(buf));
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.new", o->anchors_path);
	FILE *f = len ? fopen(tmp, "wb") : NULL;
	bool ok = f && fwrite(buf, 1, len, f) == len;
	if (f && fclose(f))
		ok = false;
	if (ok && rename(tmp, o->anchors_path) == 0) {
		DLOG_INFO_(&d->log, DLOG_NET, "Flushed %u anchor addresses to anchors.dat", n);
		return;
	}
	(void)unlink(tmp);
	DLOG_WARNING(&d->log, DLOG_NET, "cannot write %s: %s", o->anchors_path, strerror(errno));
}

/* ---- start and stop --------------------------------------------------- */

int net_outbound_start(struct daemon *d)
{
	struct net_outbound *o = xcalloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	const struct peerd_conf *c = d->conf;
	o->d = d;
	o->automatic = !c->connect_set;
	size_t plen = strlen(c->netdir) + sizeof("/anchors.dat");
	o->anchors_path = xmalloc(plen);
	if (!o->anchors_path) {
		xfree(o);
		return -ENOMEM;
	}
	snprintf(o->anchors_path, plen, "%s/anchors.dat", c->netdir);
	int err = uv_timer_init(d->loop, &o->timer);
	if (err) {
		xfree(o->anchors_path);
		xfree(o);
		return err;
	}
	o->timer.data = o;
	d->net->ob = o;
	/* Core's ThreadOpenConnections times these by its mockable clock. */
	uint64_t now = (uint64_t)daemon_time_ms(d);
	o->next_feeler_ms = now + exp_delay(OB_FEELER_INTERVAL_MS);
	o->next_extra_block_ms = now + exp_delay(OB_EXTRA_BLOCK_RELAY_MS);
	o->next_extra_net_ms = now + exp_delay(OB_EXTRA_NETWORK_MS);
	o->seed_timer_ms = now;
	if (o->automatic) {
		o->n_seeds = (uint32_t)c->seednode.n;
		o->add_addr_fetch = addrman_size(d->addrman, -1, -1) == 0 && o->n_seeds;
		read_anchors(d);
	}
	return uv_timer_start(&o->timer, on_round, OB_ROUND_MS, OB_ROUND_MS);
}

static void timer_closed(uv_handle_t *h)
{
	struct net_outbound *o = h->data;
	for (uint32_t i = 0; i < o->n_fetch; i++)
		xfree(o->fetch[i]);
	xfree(o->anchors_path);
	xfree(o);
}

void net_outbound_stop(struct daemon *d)
{
	struct net_outbound *o = d->net->ob;
	if (!o)
		return;
	d->net->ob = NULL;
	if (o->automatic)
		dump_anchors(d, o);
	uv_timer_stop(&o->timer);
	uv_close((uv_handle_t *)&o->timer, timer_closed);
}

void net_outbound_tip(struct daemon *d, int64_t tip_time)
{
	struct net_outbound *o = d->net->ob;
	if (!o)
		return;
	/* For the NODE_NETWORK_LIMITED rule; extra block-relay-only peers start
	 * on sync/stale.c's d->net->start_extra_block_relay, as Core's
	 * StartExtraBlockRelayPeers. */
	o->tip_time = tip_time;
}

/* ---- addrman bookkeeping ---------------------------------------------- */

void net_outbound_attempted(struct peer *p)
{
	struct addrman_service s;
	net_addr_to_service(&p->addr, &s);
	addrman_attempt(p->d->addrman, &s, p->count_failure, daemon_time(p->d));
}

void net_outbound_version(struct peer *p)
{
	struct daemon *d = p->d;
	if (p->inbound)
		return;
	/* Core: Good for every outbound peer (it moves the address to
	 * tried); the block-relay-only ones are only kept from Connected. */
	struct addrman_service s;
	net_addr_to_service(&p->addr, &s);
	(void)addrman_good(d->addrman, &s, daemon_time(d));
	if (p->conn_type == PEER_CONN_FEELER) {
		DLOG_DBG(&d->log, DLOG_NET, "feeler connection completed, disconnecting peer=%llu",
		         (unsigned long long)p->id);
		peer_disconnect(p, "feeler connection completed");
	}
}

void net_outbound_peer_gone(struct peer *p)
{
	if (p->inbound || !p->handshake_done || p->conn_type == PEER_CONN_BLOCK_RELAY)
		return;
	struct addrman_service s;
	net_addr_to_service(&p->addr, &s);
	addrman_connected(p->d->addrman, &s, daemon_time(p->d));
}

int net_add_connection(struct daemon *d, const char *address, enum peer_conn_type t, bool v2)
{
	struct net_state *n = d->net;
	uint32_t limit = UINT32_MAX;
	if (t == PEER_CONN_OUTBOUND_FULL)
		limit = n->max_outbound_full;
	else if (t == PEER_CONN_BLOCK_RELAY)
		limit = n->max_block_relay;
	else if (t != PEER_CONN_ADDR_FETCH && t != PEER_CONN_FEELER)
		return -EINVAL;
	uint32_t same = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		if (d->peers[i]->conn_type == t && d->peers[i]->state != PEER_CLOSING)
			same++;
	}
	struct net_outbound_counts c;
	net_outbound_count(d, &c);
	if (same >= limit || !net_outbound_slot_free(d, &c))
		return -EBUSY;
	int err = net_target_add_type(d, address, t, v2);
	return err == -EEXIST ? 0 : err;
}
