/*
 * daemon/p2p/addr.c: addr, addrv2 and getaddr, as Core 29's
 * net_processing (ProcessMessage ADDR/ADDRV2 and GETADDR, SetupAddressRelay)
 * over the address manager (d->addrman).
 *
 * Intake: an addr or addrv2 with more than 1,000 entries is misbehaviour
 * (the message table's limit). Otherwise, for a peer with address relay
 * (never a block-relay-only one), in a random order, each entry costs a
 * token from the peer's bucket (0.1 a second, at most 1,000 saved; 1,000
 * more when we sent getaddr): without a token it is dropped and counted as
 * rate-limited. Entries without NODE_NETWORK or NODE_NETWORK_LIMITED are
 * dropped; a time before 1973 or over 10 minutes ahead becomes five days
 * ago; the peer is then known to have the address; banned and discouraged
 * addresses stop there. A fresh (under 10 minutes), routable address from
 * a message of at most 10 entries that does not answer our getaddr is
 * relayed (addrrelay.c). What is left goes to the addrman with the peer's
 * address as source and a 2-hour time penalty. An addr-fetch peer is
 * disconnected once it answers with more than one address.
 *
 * getaddr is answered only for inbound peers (an outbound peer's getaddr
 * is how fingerprinting attacks probe which node is behind an address), at
 * most once per connection, from a cache per network and local socket that
 * lives 21 to 27 hours (Core's GetAddresses(CNode&)): at most 1,000
 * addresses and 23 % of the addrman, without terrible, banned or
 * discouraged ones. The answer goes through the peer's send queue
 * (addrrelay.c), as addrv2 to peers that sent sendaddrv2, else addr.
 */
#include "daemon/p2p/p2p.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"

/** Core: a timestamp this far in the future is replaced (10 minutes)... */
#define ADDR_MAX_FUTURE_S 600
/** ...by now minus this (Core: 5 days). */
#define ADDR_PENALTY_S (5 * 24 * 3600)
/** Core's time penalty on addresses heard from a peer (2 hours). */
#define ADDR_SOURCE_PENALTY_S (2 * 3600)
/** Core: only messages this small are relayed (not a getaddr answer). */
#define ADDR_RELAY_MAX_ENTRIES 10u
/** Core: only addresses seen this recently are relayed. */
#define ADDR_RELAY_MAX_AGE_S 600
/** Core's cache lifetime: 21 hours plus up to 6. */
#define ADDR_CACHE_BASE_US   (21ull * 3600u * 1000000u)
#define ADDR_CACHE_SPREAD_US (6ull * 3600u * 1000000u)

int addr_init(struct daemon *d)
{
	memset(d->addr, 0, sizeof(*d->addr));
	proto_random(d->addr->relay_key, sizeof(d->addr->relay_key));
	return 0;
}

void addr_release(struct daemon *d)
{
	for (uint32_t i = 0; i < d->addr->n_caches; i++)
		xfree(d->addr->caches[i].v);
	xfree(d->addr->caches);
	memset(d->addr, 0, sizeof(*d->addr));
}

/* The peer's own address as an addrman service (port 0 when a source). */
static struct addrman_service peer_service(const struct peer *p, bool with_port)
{
	uint8_t ip[16];
	net_addr_ip16(&p->addr, ip);
	return addrman_service_from_v1(ip, with_port ? net_addr_port(&p->addr) : 0);
}

/* The bucket before the first use: one token, filling from the connection. */
static void tokens_start(struct peer *p)
{
	struct addr_peer *ap = &p->p2p->addr;
	if (ap->started)
		return;
	ap->started = true;
	ap->tokens = 1.0;
	/* Core's m_addr_token_timestamp: the mockable clock at the connection. */
	ap->tokens_at_us = (uint64_t)p->conntime * 1000000u;
}

bool addr_setup_relay(struct peer *p)
{
	struct addr_peer *ap = &p->p2p->addr;
	/* No address relay with block-relay-only peers: addr traffic would
	 * give the link away. */
	if (p->conn_type == PEER_CONN_BLOCK_RELAY)
		return false;
	if (!ap->relay_enabled) {
		ap->relay_enabled = true;
		hset_init(&ap->known, ADDR_KNOWN_MAX);
	}
	return true;
}

bool addr_relay_enabled(const struct peer *p)
{
	return p->p2p && p->p2p->addr.relay_enabled;
}

void addr_peer_gone(struct peer *p)
{
	struct addr_peer *ap = &p->p2p->addr;
	hset_release(&ap->known);
	xfree(ap->to_send);
	ap->to_send = NULL;
	ap->n_to_send = ap->cap_to_send = 0;
}

void addr_set_services(struct peer *p, uint64_t services)
{
	/* Core's SetServices: an outbound peer's own word overwrites the
	 * services gossip gave its entry (gossip only ever adds bits). */
	if (p->inbound)
		return;
	struct addrman_service svc = peer_service(p, true);
	addrman_set_services(p->d->addrman, &svc, services);
}

void addr_on_version(struct peer *p)
{
	struct daemon *d = p->d;
	if (p->inbound || !addr_setup_relay(p))
		return;
	/* Our own address goes out from addrrelay_tick (its first run is at
	 * once); then one getaddr, whose answer may use 1,000 more tokens. */
	d->out.cmd = PROTO_CMD_GETADDR;
	(void)peer_send_msg(p, &d->out);
	tokens_start(p);
	p->p2p->addr.getaddr_sent = true;
	p->p2p->addr.tokens += PROTO_MAX_ADDR;
}

/* A message entry as an address (Core's CAddress read from the wire). */
static bool entry_address(const struct proto_addr_entry *e, bool v2, struct addrman_address *out)
{
	if (!v2 && e->net == PROTO_BIP155_IPV6)
		out->svc = addrman_service_from_v1(e->addr, e->port);
	else if (addrman_service_from_bip155(e->net, e->addr, e->addr_len, e->port, &out->svc))
		return false;
	out->time = e->time;
	out->services = e->services;
	return true;
}

/* Banned or discouraged (Core's banman checks; only IP addresses can be). */
static bool banned(struct daemon *d, const struct addrman_service *s)
{
	union net_addr a;
	memset(&a, 0, sizeof(a));
	if (s->net == ADDRMAN_NET_IPV4) {
		a.in4.sin_family = AF_INET;
		memcpy(&a.in4.sin_addr, s->addr, 4);
	} else if (s->net == ADDRMAN_NET_IPV6) {
		a.in6.sin6_family = AF_INET6;
		memcpy(&a.in6.sin6_addr, s->addr, 16);
	} else {
		return false;
	}
	return ban_check(d, &a) != BAN_OK;
}

/*
 * Whether Core keeps an address with these services: MayHaveUsefulAddressDB
 * (NODE_NETWORK or NODE_NETWORK_LIMITED) or HasAllDesirableServiceFlags,
 * which needs one of those too.
 */
static bool useful_services(uint64_t services)
{
	return (services & (PROTO_NODE_NETWORK | PROTO_NODE_NETWORK_LIMITED)) != 0;
}

/* Whether the address is on a network we reach (net/reach.c: Core's
 * g_reachable_nets after -onlynet, -proxy, -onion, -cjdnsreachable). */
static bool reachable(const struct daemon *d, const struct addrman_service *s)
{
	return net_is_reachable(d, addrman_netaddr_network(s));
}

static void on_addr(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	const struct proto_addr *a = &m->addr;
	struct addr_peer *ap = &p->p2p->addr;
	const char *cmd = m->cmd == PROTO_CMD_ADDRV2 ? "addrv2" : "addr";
	if (!addr_setup_relay(p)) {
		DLOG_DBG(&d->log, DLOG_ADDR, "ignoring %s message from %s peer=%llu", cmd,
		         peer_conn_type_name(p->conn_type), (unsigned long long)p->id);
		return;
	}
	/* Core counts the entries of unknown networks too. */
	uint32_t total = a->n + a->n_skipped;
	if (total > PROTO_MAX_ADDR) {
		ban_misbehaving(p, "addr message size over 1000");
		return;
	}
	int64_t now = daemon_time(d);
	uint64_t now_us = (uint64_t)daemon_time_ms(d) * 1000u; /* Core's GetTime: mockable */
	tokens_start(p);
	if (ap->tokens < ADDR_TOKEN_BUCKET_MAX) {
		/* Not while full: a full bucket does not bank the time. */
		uint64_t diff = now_us > ap->tokens_at_us ? now_us - ap->tokens_at_us : 0;
		ap->tokens += (double)diff / 1e6 * ADDR_RATE_PER_SECOND;
		if (ap->tokens > ADDR_TOKEN_BUCKET_MAX)
			ap->tokens = ADDR_TOKEN_BUCKET_MAX;
	}
	ap->tokens_at_us = now_us;

	struct addrman_address *v = total ? xreallocarray(NULL, total, sizeof(*v)) : NULL;
	if (total && !v)
		return;
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		d->stats.addr_entries++;
		if (entry_address(&a->v[i], m->cmd == PROTO_CMD_ADDRV2, &v[n]))
			n++;
	}
	/* An entry of a network we do not know is, to Core, an invalid address
	 * that still costs its token and counts as processed; the codec kept
	 * only how many there were (and not their services: taken as useful). */
	for (uint32_t i = 0; i < a->n_skipped; i++) {
		memset(&v[n], 0, sizeof(v[n]));
		uint8_t none[16] = {0};
		v[n].svc = addrman_service_from_v1(none, 0);
		v[n].time = now;
		v[n].services = PROTO_NODE_NETWORK;
		n++;
		d->stats.addr_entries++;
	}
	/* Core shuffles, so which entries the bucket lets through is not the
	 * sender's choice. */
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(proto_random_u64() % i);
		struct addrman_address t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
	uint32_t ok = 0, processed = 0, limited = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct addrman_address e = v[i];
		if (ap->tokens < 1.0) {
			limited++;
			continue;
		}
		ap->tokens -= 1.0;
		if (!useful_services(e.services))
			continue;
		if (e.time <= 100000000 || e.time > now + ADDR_MAX_FUTURE_S)
			e.time = now - ADDR_PENALTY_S;
		addrrelay_known_add(p, &e.svc);
		if (banned(d, &e.svc))
			continue;
		processed++;
		bool reach = reachable(d, &e.svc);
		if (e.time > now - ADDR_RELAY_MAX_AGE_S && !ap->getaddr_sent &&
		    total <= ADDR_RELAY_MAX_ENTRIES && addrman_netaddr_routable(&e.svc))
			addrrelay_relay(d, p, &e, reach);
		if (reach)
			v[ok++] = e;
	}
	ap->processed += processed;
	ap->rate_limited += limited;
	d->stats.addr_unroutable += n - processed - limited;
	DLOG_DBG(&d->log, DLOG_ADDR,
	         "Received addr: %u addresses (%u processed, %u rate-limited) from peer=%llu",
	         total, processed, limited, (unsigned long long)p->id);
	struct addrman_service source = peer_service(p, false);
	size_t added = 0;
	if (ok && addrman_add(d->addrman, v, ok, &source, ADDR_SOURCE_PENALTY_S, now, &added))
		DLOG_WARNING(&d->log, DLOG_ADDR, "out of memory adding addresses from peer=%llu",
		             (unsigned long long)p->id);
	d->stats.addr_learned += added;
	xfree(v);
	if (total < PROTO_MAX_ADDR)
		ap->getaddr_sent = false;
	/* More than one address: not only its self-announcement. */
	if (p->conn_type == PEER_CONN_ADDR_FETCH && total > 1) {
		DLOG_DBG(&d->log, DLOG_ADDR,
		         "addrfetch connection completed, disconnecting peer=%llu",
		         (unsigned long long)p->id);
		peer_disconnect(p, "addrfetch connection completed");
	}
}

/* Core's cache id: which network the peer came through, our end's address,
 * and (inbound) our port; keyed, so a peer cannot line caches up. */
static uint64_t cache_id(const struct peer *p)
{
	uint8_t ip[16], key[1 + 16 + 2];
	net_addr_ip16(&p->local, ip);
	struct addrman_service s = addrman_service_from_v1(ip, 0);
	uint16_t port = p->inbound ? net_addr_port(&p->local) : 0;
	key[0] = (uint8_t)addrman_netaddr_network(&s);
	memcpy(key + 1, ip, 16);
	key[17] = (uint8_t)(port >> 8);
	key[18] = (uint8_t)port;
	return proto_siphash(p->d->addr->relay_key, key, sizeof(key));
}

long addr_get_addresses(struct daemon *d, size_t max, size_t pct, int net,
                        struct addrman_address **out)
{
	long n = addrman_getaddr(d->addrman, max, pct, net, true, daemon_time(d), out);
	if (n <= 0)
		return n;
	long k = 0;
	for (long i = 0; i < n; i++)
		if (!banned(d, &(*out)[i].svc))
			(*out)[k++] = (*out)[i];
	return k;
}

/* The cached answer for p's network and socket, drawn again once expired. */
static const struct addr_cache *cached_answer(struct peer *p)
{
	struct addr_state *s = p->d->addr;
	uint64_t id = cache_id(p), now_us = (uint64_t)daemon_time_ms(p->d) * 1000u;
	struct addr_cache *c = NULL;
	for (uint32_t i = 0; i < s->n_caches && !c; i++)
		if (s->caches[i].id == id)
			c = &s->caches[i];
	if (!c) {
		if (s->n_caches == s->cap_caches) {
			uint32_t cap = s->cap_caches ? s->cap_caches * 2 : 4;
			struct addr_cache *nv = xreallocarray(s->caches, cap, sizeof(*nv));
			if (!nv)
				return NULL;
			s->caches = nv;
			s->cap_caches = cap;
		}
		c = &s->caches[s->n_caches++];
		memset(c, 0, sizeof(*c));
		c->id = id;
	}
	if (c->expire_us < now_us || !c->expire_us) {
		struct addrman_address *v = NULL;
		long n = addr_get_addresses(p->d, PROTO_MAX_ADDR, ADDR_GETADDR_MAX_PCT, -1, &v);
		if (n < 0)
			return NULL;
		xfree(c->v);
		c->v = v;
		c->n = (uint32_t)n;
		c->expire_us =
		    now_us + ADDR_CACHE_BASE_US + proto_random_u64() % ADDR_CACHE_SPREAD_US;
	}
	return c;
}

static void on_getaddr(struct peer *p)
{
	struct daemon *d = p->d;
	struct addr_peer *ap = &p->p2p->addr;
	if (!p->inbound) {
		d->stats.getaddr_ignored++;
		DLOG_DBG(&d->log, DLOG_ADDR, "Ignoring \"getaddr\" from %s connection. peer=%llu",
		         peer_conn_type_name(p->conn_type), (unsigned long long)p->id);
		return;
	}
	/* Inbound: never block-relay-only, so this cannot fail. */
	(void)addr_setup_relay(p);
	if (ap->getaddr_recvd) {
		d->stats.getaddr_ignored++;
		DLOG_DBG(&d->log, DLOG_ADDR, "Ignoring repeated \"getaddr\". peer=%llu",
		         (unsigned long long)p->id);
		return;
	}
	ap->getaddr_recvd = true;
	ap->n_to_send = 0;
	const struct addr_cache *c = cached_answer(p);
	for (uint32_t i = 0; c && i < c->n; i++)
		addrrelay_push(p, &c->v[i]);
	d->stats.getaddr_answered++;
	/* Sent by the queue's timer, which for a peer new to address relay
	 * fires at once. */
	addrrelay_tick(p, (uint64_t)daemon_time_ms(d));
}

void addr_on_addr(struct peer *p, const struct proto_msg *m)
{
	on_addr(p, m);
}

void addr_on_getaddr(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	on_getaddr(p);
}
