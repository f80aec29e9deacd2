/*
 * daemon/net/seeds.c: how a node with no peers finds its first addresses,
 * as Bitcoin Core 29: the DNS seeds (net.cpp's ThreadDNSAddressSeed) and
 * the fixed seeds (ThreadOpenConnections' first part).
 *
 * DNS seeds: each network's list (kernel/chainparams.cpp's vSeeds; on
 * signet -signetseednode's instead when given), in a random order. With an empty addrman (or
 * -forcednsseed) all are queried at once; otherwise 3 at a time, each three after a wait of 11 s (5
 * minutes once the addrman holds 1,000 addresses) checked every 11 s, and
 * seeding stops as soon as 2 full-relay outbound peers are connected.
 * -seednode gets 30 s first. A seed is asked for "x9.<seed>" (peers with
 * NODE_NETWORK | NODE_WITNESS); up to 32 of its answers go into the
 * addrman with services 9, a time 3-7 days old, from the name as an
 * internal address. A seed that gives nothing becomes an addr-fetch
 * connection to its own name. Lookups are net/resolve.c's, one at a time
 * as Core's thread makes them.
 *
 * Fixed seeds (seeds_fixed.c), with automatic outbound connections only
 * (no -connect, as Core's ThreadOpenConnections): once some reachable
 * network has no address in the addrman after 60 s, or at once when there
 * is no DNS seeding, -seednode nor -addnode, that network's fixed seeds
 * are added, from the internal address "fixedseeds". Once.
 *
 * Reachable networks are net/reach.c's (Core's g_reachable_nets: -onlynet,
 * -proxy, -onion, -cjdnsreachable). With a name proxy (-proxy) a seed is
 * not looked up here, which would leak the lookup past the proxy: it
 * becomes an addr-fetch connection through the proxy at once, as Core's
 * HaveNameProxy branch.
 *
 * Loop thread only; a 500 ms timer drives both, as Core's threads sleep.
 */
#include "daemon/net/net.h"
#include "daemon/net/seeds_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/require.h"

/* ---- the lists --------------------------------------------------------- */

/* Core 29's vSeeds (kernel/chainparams.cpp), the same names the bitcoind
 * the tests run against holds. */
static const char *const dns_main[] = {
    "seed.bitcoin.sipa.be.",
    "dnsseed.bluematt.me.",
    "dnsseed.bitcoin.dashjr-list-of-p2p-nodes.us.",
    "seed.bitcoin.jonasschnelli.ch.",
    "seed.btc.petertodd.net.",
    "seed.bitcoin.sprovoost.nl.",
    "dnsseed.emzy.de.",
    "seed.bitcoin.wiz.biz.",
    "seed.mainnet.achownodes.xyz.",
    NULL,
};
static const char *const dns_testnet3[] = {
    "testnet-seed.bitcoin.jonasschnelli.ch.", "seed.tbtc.petertodd.net.",
    "seed.testnet.bitcoin.sprovoost.nl.",     "testnet-seed.bluematt.me.",
    "seed.testnet.achownodes.xyz.",           NULL,
};
static const char *const dns_testnet4[] = {
    "seed.testnet4.bitcoin.sprovoost.nl.",
    "seed.testnet4.wiz.biz.",
    NULL,
};
static const char *const dns_signet[] = {
    "seed.signet.bitcoin.sprovoost.nl.",
    "seed.signet.achownodes.xyz.",
    NULL,
};
static const char *const dns_none[] = {NULL};

const char *const *seeds_dns(enum proto_net net)
{
	switch (net) {
	case PROTO_NET_MAIN:
		return dns_main;
	case PROTO_NET_TESTNET3:
		return dns_testnet3;
	case PROTO_NET_TESTNET4:
		return dns_testnet4;
	case PROTO_NET_SIGNET:
		return dns_signet;
	default:
		return dns_none;
	}
}

const char *seeds_fixed_hex(enum proto_net net)
{
	switch (net) {
	case PROTO_NET_MAIN:
		return seeds_fixed_main;
	case PROTO_NET_TESTNET3:
		return seeds_fixed_testnet3;
	case PROTO_NET_TESTNET4:
		return seeds_fixed_testnet4;
	case PROTO_NET_SIGNET:
		return seeds_fixed_signet;
	default:
		return "";
	}
}

/* A uniform random value in [0, n). */
static uint64_t rand_below(uint64_t n)
{
	return n ? proto_random_u64() % n : 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Byte i of a hex string of len digits; -1 past the end or malformed. */
static int hexbyte(const char *hex, size_t len, size_t i)
{
	if (2 * i + 2 > len)
		return -1;
	int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
	return hi < 0 || lo < 0 ? -1 : hi << 4 | lo;
}

long seeds_fixed_decode(enum proto_net net, int64_t now, struct addrman_address **out)
{
	const char *hex = seeds_fixed_hex(net);
	size_t len = strlen(hex), nbytes = len / 2, count = 0, cap = 0;
	struct addrman_address *v = NULL;
	*out = NULL;
	for (size_t i = 0; i < nbytes;) {
		int id = hexbyte(hex, len, i), alen = hexbyte(hex, len, i + 1);
		if (id < 0 || alen < 0 || alen > 32 || i + 4 + (size_t)alen > nbytes)
			goto fail;
		uint8_t a[32];
		for (int k = 0; k < alen; k++)
			a[k] = (uint8_t)hexbyte(hex, len, i + 2 + (size_t)k);
		uint16_t port = (uint16_t)(hexbyte(hex, len, i + 2 + (size_t)alen) << 8 |
		                           hexbyte(hex, len, i + 3 + (size_t)alen));
		i += 4 + (size_t)alen;
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct addrman_address *nv = xrealloc(v, ncap * sizeof(*v));
			if (!nv)
				goto fail;
			v = nv;
			cap = ncap;
		}
		struct addrman_address *e = &v[count];
		memset(e, 0, sizeof(*e));
		if (addrman_service_from_bip155((uint8_t)id, a, (size_t)alen, port, &e->svc))
			goto fail;
		e->services = SEEDS_SERVICES;
		/* Core's ConvertSeeds: uniformly 1-2 weeks old. */
		e->time = now - 7 * 86400 - (int64_t)rand_below(7 * 86400);
		count++;
	}
	*out = v;
	return (long)count;
fail: /* malformed data or out of memory */
	xfree(v);
	return -1;
}

struct addrman_service seeds_internal_addr(const char *name)
{
	struct addrman_service s;
	uint8_t h[32];
	memset(&s, 0, sizeof(s));
	proto_sha256(name, strlen(name), h);
	s.net = ADDRMAN_NET_INTERNAL;
	s.len = 10;
	memcpy(s.addr, h, 10);
	return s;
}

size_t seeds_add_found(struct addrman *am, const char *host, const struct addrman_service *ips,
                       size_t n, uint16_t port, int64_t now)
{
	struct addrman_address v[SEEDS_MAX_IPS];
	if (n > SEEDS_MAX_IPS)
		n = SEEDS_MAX_IPS;
	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].svc = ips[i];
		v[i].svc.port = port;
		v[i].services = SEEDS_SERVICES;
		/* Core: rand_uniform_delay(now - 3 days, -4 days): 3-7 days old. */
		v[i].time = now - 3 * 86400 - (int64_t)rand_below(4 * 86400);
	}
	struct addrman_service src = seeds_internal_addr(host);
	/* Out of memory only loses some of these addresses: seeding goes on,
	 * and Core counts what the seed gave, kept or not. */
	int err = n ? addrman_add(am, v, n, &src, 0, now, NULL) : 0;
	(void)err;
	return n;
}

/* ---- the schedule ------------------------------------------------------ */

void seeds_sched_init(struct seeds_sched *s, size_t n_seeds, bool force, bool seednode,
                      uint64_t now_ms)
{
	memset(s, 0, sizeof(*s));
	s->n_seeds = n_seeds;
	s->force = force;
	s->start_ms = now_ms;
	s->state = seednode ? SEEDS_ST_SEEDNODE : SEEDS_ST_START;
}

static enum seeds_action finish(struct seeds_sched *s, enum seeds_end why)
{
	s->state = SEEDS_ST_DONE;
	s->end = why;
	return SEEDS_ACT_END;
}

enum seeds_action seeds_sched_next(struct seeds_sched *s, const struct seeds_view *v,
                                   uint64_t now_ms)
{
	for (;;) {
		switch (s->state) {
		case SEEDS_ST_SEEDNODE:
			if (now_ms <= s->start_ms + SEEDS_SEEDNODE_WAIT_MS &&
			    v->full_outbound < SEEDS_ENOUGH_OUTBOUND)
				return SEEDS_ACT_NONE;
			s->state = SEEDS_ST_START;
			continue;
		case SEEDS_ST_START:
			s->right_now = s->force || v->addrman_size == 0 ? (int)s->n_seeds : 0;
			if (v->full_outbound >= SEEDS_ENOUGH_OUTBOUND && !s->right_now)
				return finish(s, SEEDS_END_SKIPPED);
			s->wait_ms = v->addrman_size >= SEEDS_MANY_ADDRESSES ? SEEDS_DELAY_MANY_MS
			                                                     : SEEDS_DELAY_FEW_MS;
			s->state = SEEDS_ST_LOOP;
			continue;
		case SEEDS_ST_LOOP:
			if (s->next >= s->n_seeds)
				return finish(s, SEEDS_END_ALL_QUERIED);
			s->state = SEEDS_ST_READY;
			if (s->right_now == 0) {
				s->right_now += SEEDS_AT_ONCE;
				if (v->addrman_size > 0) {
					s->to_wait_ms = s->wait_ms;
					s->step_at_ms = now_ms + (s->wait_ms < SEEDS_DELAY_FEW_MS
					                              ? s->wait_ms
					                              : SEEDS_DELAY_FEW_MS);
					s->state = SEEDS_ST_WAIT;
					return SEEDS_ACT_WAIT_LOG;
				}
			}
			continue;
		case SEEDS_ST_WAIT: {
			if (now_ms < s->step_at_ms)
				return SEEDS_ACT_NONE;
			/* Core wakes every 11 s of a long wait to see whether
			 * enough peers came; it stops seeding when they did. */
			uint64_t step =
			    s->to_wait_ms < SEEDS_DELAY_FEW_MS ? s->to_wait_ms : SEEDS_DELAY_FEW_MS;
			s->to_wait_ms -= step;
			if (v->full_outbound >= SEEDS_ENOUGH_OUTBOUND)
				return finish(s, SEEDS_END_PEERS);
			if (s->to_wait_ms) {
				s->step_at_ms = now_ms + (s->to_wait_ms < SEEDS_DELAY_FEW_MS
				                              ? s->to_wait_ms
				                              : SEEDS_DELAY_FEW_MS);
				return SEEDS_ACT_NONE;
			}
			s->state = SEEDS_ST_READY;
			continue;
		}
		case SEEDS_ST_READY:
			if (!v->network_active) {
				if (s->inactive_logged)
					return SEEDS_ACT_NONE;
				s->inactive_logged = true;
				return SEEDS_ACT_INACTIVE;
			}
			s->inactive_logged = false;
			s->state = SEEDS_ST_QUERYING;
			return SEEDS_ACT_QUERY;
		case SEEDS_ST_QUERYING:
			return SEEDS_ACT_NONE;
		case SEEDS_ST_DONE:
		default:
			return SEEDS_ACT_NONE;
		}
	}
}

void seeds_sched_answered(struct seeds_sched *s, size_t found)
{
	if (s->state != SEEDS_ST_QUERYING)
		return;
	s->found += found;
	s->next++;
	s->right_now--;
	s->state = SEEDS_ST_LOOP;
}

enum seeds_fixed_why seeds_fixed_due(uint64_t start_ms, uint64_t now_ms, bool dnsseed,
                                     bool seednode, bool addnode)
{
	if (now_ms > start_ms + SEEDS_FIXED_AFTER_MS)
		return SEEDS_FIXED_TIMEOUT;
	if (!dnsseed && !seednode && !addnode)
		return SEEDS_FIXED_NO_OTHERS;
	return SEEDS_FIXED_NOT_YET;
}

/* ---- on the loop ------------------------------------------------------- */

/** How often the seeds look at the clock (Core's threads sleep 500 ms). */
#define SEEDS_TICK_MS 500u
/** DNS seeds of one network at most (Core's lists have up to 9). */
#define SEEDS_MAX_DNS 16

struct net_seeds {
	struct daemon *d;
	uv_timer_t timer; /* timer.data points back here */
	const char *order[SEEDS_MAX_DNS];
	size_t n;
	bool dns_on;
	struct seeds_sched sched;
	struct net_resolve *lookup;    /* the seed being asked, or NULL */
	char host[CONF_MAX_HOST + 16]; /* "x9." + host[:port] */
	bool fixed_on;
	uint64_t fixed_start_ms;
};

/* Core's GetFullOutboundConnCount: full-relay outbound peers past the handshake. */
static int full_outbound(const struct daemon *d)
{
	int n = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->conn_type == PEER_CONN_OUTBOUND_FULL && p->state == PEER_ACTIVE)
			n++;
	}
	return n;
}

static void fixed_step(struct net_seeds *s, uint64_t now_ms)
{
	struct daemon *d = s->d;
	const struct peerd_conf *c = d->conf;
	uint32_t empty = 0, reach = net_reachable_mask(d);
	for (int net = 0; net < ADDRMAN_NET__COUNT; net++) {
		if ((reach >> net & 1) && addrman_size(d->addrman, net, -1) == 0)
			empty |= 1u << net;
	}
	if (!empty)
		return;
	/* Core's m_added_node_params: addnode= and the addnode method's "add"
	 * (the targets kept; onetry ones are not added nodes). */
	bool addnode = false;
	for (uint32_t i = 0; i < d->net->n_targets && !addnode; i++)
		addnode = !d->net->targets[i]->onetry;
	enum seeds_fixed_why why =
	    seeds_fixed_due(s->fixed_start_ms, now_ms, c->dnsseed, c->seednode.n > 0, addnode);
	if (why == SEEDS_FIXED_NOT_YET)
		return;
	if (why == SEEDS_FIXED_TIMEOUT)
		DLOG_INFO_(
		    &d->log, DLOG_NET,
		    "Adding fixed seeds as 60 seconds have passed and addrman is empty for at "
		    "least one reachable network");
	else
		DLOG_INFO_(
		    &d->log, DLOG_NET,
		    "Adding fixed seeds as -dnsseed=0 (or IPv4/IPv6 connections are disabled "
		    "via -onlynet) and neither -addnode nor -seednode are provided");
	s->fixed_on = false;
	struct addrman_address *v;
	int64_t now = daemon_time(d);
	long n = seeds_fixed_decode(d->params->net, now, &v);
	if (n < 0) {
		DLOG_WARNING(&d->log, DLOG_NET, "fixed seeds: out of memory");
		return;
	}
	/* Only the networks that are reachable and still empty (Core: an
	 * unreachable network's seeds would never be dialled). */
	size_t kept = 0;
	for (long i = 0; i < n; i++) {
		if (empty >> addrman_netaddr_network(&v[i].svc) & 1)
			v[kept++] = v[i];
	}
	struct addrman_service src = seeds_internal_addr("fixedseeds");
	if (kept && addrman_add(d->addrman, v, kept, &src, 0, now, NULL) != 0)
		DLOG_WARNING(&d->log, DLOG_NET, "fixed seeds: out of memory");
	xfree(v);
	d->stats.seeds_fixed_added += kept;
	DLOG_INFO_(&d->log, DLOG_NET, "Added %zu fixed seeds from reachable networks.", kept);
}

static void dns_step(struct net_seeds *s, uint64_t now_ms);

static void on_seed(void *ctx, int status, const union net_addr *addrs, size_t n)
{
	struct net_seeds *s = ctx;
	struct daemon *d = s->d;
	const char *seed = s->order[s->sched.next];
	s->lookup = NULL;
	d->stats.seeds_dns_queries++;
	size_t found = 0;
	if (n) {
		struct addrman_service ips[SEEDS_MAX_IPS];
		size_t k = 0;
		for (size_t i = 0; i < n && k < SEEDS_MAX_IPS; i++) {
			uint8_t ip[16];
			net_addr_ip16(&addrs[i], ip);
			ips[k++] = addrman_service_from_v1(ip, 0);
		}
		found = seeds_add_found(d->addrman, s->host, ips, k, d->params->default_port,
		                        daemon_time(d));
		d->stats.seeds_dns_found += found;
	} else {
		/* Core: the seed does not answer the "x9." name (or at all): an
		 * addr-fetch connection to the seed itself asks it for addresses. */
		DLOG_DBG(&d->log, DLOG_NET, "DNS seed %s: %s", s->host,
		         net_resolve_strerror(status));
		int err = net_addr_fetch_add(d, seed);
		if (err && err != -EEXIST)
			DLOG_WARNING(&d->log, DLOG_NET, "addr-fetch %s: %s", seed, strerror(-err));
	}
	seeds_sched_answered(&s->sched, found);
	/* With an empty addrman the next seed goes at once, as Core's loop. */
	dns_step(s, daemon_now_ms(d));
}

static void dns_step(struct net_seeds *s, uint64_t now_ms)
{
	struct daemon *d = s->d;
	struct seeds_view v = {
	    .addrman_size = addrman_size(d->addrman, -1, -1),
	    .full_outbound = full_outbound(d),
	    .network_active = !d->network_inactive,
	};
	switch (seeds_sched_next(&s->sched, &v, now_ms)) {
	case SEEDS_ACT_NONE:
		return;
	case SEEDS_ACT_WAIT_LOG:
		DLOG_INFO_(&d->log, DLOG_NET, "Waiting %u seconds before querying DNS seeds.",
		           (unsigned)(s->sched.wait_ms / 1000u));
		return;
	case SEEDS_ACT_INACTIVE:
		DLOG_INFO_(&d->log, DLOG_NET,
		           "Waiting for network to be reactivated before querying DNS seeds.");
		return;
	case SEEDS_ACT_QUERY: {
		const char *seed = s->order[s->sched.next];
		if (d->net->reach.name_proxy.addr.sa.sa_family) {
			int err = net_addr_fetch_add(d, seed);
			if (err && err != -EEXIST)
				DLOG_WARNING(&d->log, DLOG_NET, "addr-fetch %s: %s", seed,
				             strerror(-err));
			seeds_sched_answered(&s->sched, 0);
			return;
		}
		DLOG_INFO_(&d->log, DLOG_NET, "Loading addresses from DNS seed %s", seed);
		snprintf(s->host, sizeof(s->host), "x%x.%s", SEEDS_SERVICES, seed);
		s->lookup =
		    net_resolve(d, s->host, d->params->default_port, SEEDS_MAX_IPS, on_seed, s);
		if (!s->lookup) /* out of memory: on to the next seed */
			seeds_sched_answered(&s->sched, 0);
		return;
	}
	case SEEDS_ACT_END:
		s->dns_on = false;
		if (s->sched.end == SEEDS_END_SKIPPED) {
			DLOG_INFO_(&d->log, DLOG_NET,
			           "Skipping DNS seeds. Enough peers have been found");
		} else if (s->sched.end == SEEDS_END_PEERS && !s->sched.found) {
			DLOG_INFO_(&d->log, DLOG_NET, "P2P peers available. Skipped DNS seeding.");
		} else {
			DLOG_INFO_(&d->log, DLOG_NET, "%zu addresses found from DNS seeds",
			           s->sched.found);
			if (s->sched.end == SEEDS_END_PEERS)
				DLOG_INFO_(&d->log, DLOG_NET,
				           "P2P peers available. Finished DNS seeding.");
		}
		return;
	}
}

static void on_tick(uv_timer_t *t)
{
	struct net_seeds *s = t->data;
	uint64_t now_ms = daemon_now_ms(s->d);
	if (s->d->shutting_down)
		return;
	if (s->fixed_on)
		fixed_step(s, now_ms);
	if (s->dns_on)
		dns_step(s, now_ms);
	if (!s->fixed_on && !s->dns_on)
		uv_timer_stop(t);
}

static void seeds_closed(uv_handle_t *h)
{
	xfree(h->data);
}

int net_seeds_start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	struct net_seeds *s = xcalloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->d = d;
	/* A custom signet (-signetchallenge) has no seeds, as Core's; on any
	 * signet, -signetseednode's names replace the network's (Core's
	 * SigNetOptions::seeds: vSeeds, the DNS seeds, not -seednode). */
	const char *const *list = d->params->signet_custom ? dns_none : seeds_dns(d->params->net);
	if (d->params->net == PROTO_NET_SIGNET && c->signetseednode.n) {
		while (s->n < c->signetseednode.n && s->n < SEEDS_MAX_DNS) {
			s->order[s->n] = c->signetseednode.v[s->n];
			s->n++;
		}
	} else {
		while (list[s->n] && s->n < SEEDS_MAX_DNS) {
			s->order[s->n] = list[s->n];
			s->n++;
		}
	}
	/* Core shuffles the seeds: no seed is always asked first. */
	for (size_t i = s->n; i > 1; i--) {
		size_t j = (size_t)rand_below(i);
		const char *tmp = s->order[i - 1];
		s->order[i - 1] = s->order[j];
		s->order[j] = tmp;
	}
	uint64_t now_ms = daemon_now_ms(d);
	/* A network without seeds (regtest) has nothing to do here: no timer,
	 * no log lines about seeds it never had. */
	s->dns_on = c->dnsseed && s->n;
	if (!c->dnsseed)
		DLOG_INFO_(&d->log, DLOG_NET, "DNS seeding disabled");
	else if (s->dns_on) /* -seednode: the seed nodes get up to 30 s first, as Core */
		seeds_sched_init(&s->sched, s->n, c->forcednsseed, c->seednode.n > 0, now_ms);
	/* Core's ThreadOpenConnections runs only without -connect. */
	s->fixed_on = !c->connect_set && c->fixedseeds && !d->params->signet_custom &&
	              *seeds_fixed_hex(d->params->net);
	s->fixed_start_ms = now_ms;
	if (!c->connect_set && !c->fixedseeds)
		DLOG_INFO_(&d->log, DLOG_NET, "Fixed seeds are disabled");
	uv_timer_init(d->loop, &s->timer);
	s->timer.data = s;
	d->net->seeds = s;
	if (s->dns_on || s->fixed_on) {
		uv_timer_start(&s->timer, on_tick, 0, SEEDS_TICK_MS);
		uv_unref((uv_handle_t *)&s->timer);
	}
	return 0;
}

void net_seeds_stop(struct daemon *d)
{
	struct net_seeds *s = d->net->seeds;
	if (!s)
		return;
	d->net->seeds = NULL;
	net_resolve_cancel(s->lookup);
	s->lookup = NULL;
	uv_timer_stop(&s->timer);
	uv_close((uv_handle_t *)&s->timer, seeds_closed);
}
