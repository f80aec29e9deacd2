/*
 * daemon/net/local.c: our own addresses, as Core 29's mapLocalHost
 * (net.cpp AddLocal, SeenLocal, IsLocal, GetLocal, GetLocalAddrForPeer).
 *
 * Each address has a score: 1 for an interface's (-discover), 2 for a
 * -bind address, 4 for -externalip, and one more each time a peer's
 * version says it sees us there. To a peer we announce the address it can
 * best reach (Core's GetReachabilityFrom), the higher score between equals,
 * never a privacy network's address to another network or a clearnet one
 * to a privacy network. With -discover we sometimes announce what the
 * peer says it sees instead, as Core: it may know better behind a NAT.
 */
#include "daemon/net/net.h"

#include <string.h>

/* Core's CNetAddr operator<: network, then the bytes. */
static int local_cmp(const struct addrman_service *a, const struct addrman_service *b)
{
	if (a->net != b->net)
		return a->net < b->net ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->addr, b->addr, a->len);
}

/* The entry for s's address (ports ignored), or NULL. */
static struct net_local *local_find(const struct daemon *d, const struct addrman_service *s)
{
	const struct net_reach *r = &d->net->reach;
	for (uint32_t i = 0; i < r->n_local; i++) {
		if (local_cmp(&r->local[i].addr, s) == 0)
			return (struct net_local *)&r->local[i];
	}
	return NULL;
}

bool net_add_local(struct daemon *d, const struct addrman_service *s_in, int score)
{
	struct net_reach *r = &d->net->reach;
	struct addrman_service s = *s_in;
	if (s.net == ADDRMAN_NET_IPV6 && s.addr[0] == 0xfc &&
	    net_is_reachable(d, ADDRMAN_NET_CJDNS))
		s.net = ADDRMAN_NET_CJDNS; /* MaybeFlipIPv6toCJDNS */
	if (!addrman_netaddr_routable(&s))
		return false;
	if (!r->discover && score < NET_LOCAL_MANUAL)
		return false;
	if (!net_is_reachable(d, addrman_netaddr_network(&s)))
		return false;
	char text[128];
	addrman_service_str(&s, text, sizeof(text));
	DLOG_INFO_(&d->log, DLOG_NET, "AddLocal(%s,%i)", text, score);
	struct net_local *e = local_find(d, &s);
	if (!e) {
		if (r->n_local >= NET_MAX_LOCAL)
			return false;
		/* Kept sorted as Core's map, so localaddresses lists them alike. */
		uint32_t at = 0;
		while (at < r->n_local && local_cmp(&r->local[at].addr, &s) < 0)
			at++;
		memmove(r->local + at + 1, r->local + at, (r->n_local - at) * sizeof(*r->local));
		r->n_local++;
		e = &r->local[at];
		e->addr = s;
		e->score = score;
		return true;
	}
	if (score >= e->score) {
		e->score = score + 1;
		e->addr.port = s.port;
	}
	return true;
}

bool net_seen_local(struct daemon *d, const struct addrman_service *s)
{
	struct net_local *e = local_find(d, s);
	if (!e)
		return false;
	e->score++;
	return true;
}

bool net_is_local_service(const struct daemon *d, const struct addrman_service *s)
{
	/* Core's map is keyed by the address alone: IsLocal ignores the port. */
	return local_find(d, s) != NULL;
}

int net_peer_network(const struct peer *p)
{
	if (p->proxied)
		return p->proxy_net;
	struct addrman_service s = net_addr_service(&p->addr);
	return addrman_netaddr_class(&s);
}

static bool is_privacy_net(int net)
{
	return net == ADDRMAN_NET_ONION || net == ADDRMAN_NET_I2P;
}

/* ---- Core's CNetAddr::GetReachabilityFrom ---------------------------- */

enum {
	REACH_UNREACHABLE,
	REACH_DEFAULT,
	REACH_TEREDO,
	REACH_IPV6_WEAK,
	REACH_IPV4,
	REACH_IPV6_STRONG,
	REACH_PRIVATE,
};

/* Core's extended networks: Teredo apart from IPv6, unknown for none. */
enum { EXT_UNKNOWN = ADDRMAN_NET__COUNT, EXT_TEREDO };

static bool v6_prefix(const struct addrman_service *s, const uint8_t *p, size_t n)
{
	return s->net == ADDRMAN_NET_IPV6 && memcmp(s->addr, p, n) == 0;
}

static bool is_teredo(const struct addrman_service *s)
{
	static const uint8_t p[] = {0x20, 0x01, 0, 0};
	return v6_prefix(s, p, sizeof(p));
}

/* 6to4, NAT64 and SIIT: IPv6 that only tunnels IPv4. */
static bool is_tunnel(const struct addrman_service *s)
{
	static const uint8_t p6to4[] = {0x20, 0x02};
	static const uint8_t nat64[] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t siit[] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	return v6_prefix(s, p6to4, sizeof(p6to4)) || v6_prefix(s, nat64, sizeof(nat64)) ||
	       v6_prefix(s, siit, sizeof(siit));
}

static int ext_network(const struct addrman_service *s)
{
	if (is_teredo(s))
		return EXT_TEREDO;
	return addrman_netaddr_network(s);
}

static int reachability(const struct addrman_service *ours, const struct addrman_service *theirs,
                        int their_net)
{
	if (!addrman_netaddr_routable(ours) || ours->net == ADDRMAN_NET_INTERNAL)
		return REACH_UNREACHABLE;
	int our = ext_network(ours);
	int their = theirs ? ext_network(theirs) : their_net;
	switch (their) {
	case ADDRMAN_NET_IPV4:
		return our == ADDRMAN_NET_IPV4 ? REACH_IPV4 : REACH_DEFAULT;
	case ADDRMAN_NET_IPV6:
		if (our == EXT_TEREDO)
			return REACH_TEREDO;
		if (our == ADDRMAN_NET_IPV4)
			return REACH_IPV4;
		if (our == ADDRMAN_NET_IPV6)
			return is_tunnel(ours) ? REACH_IPV6_WEAK : REACH_IPV6_STRONG;
		return REACH_DEFAULT;
	case ADDRMAN_NET_ONION:
		if (our == ADDRMAN_NET_IPV4)
			return REACH_IPV4; /* Tor users can reach IPv4 too */
		return our == ADDRMAN_NET_ONION ? REACH_PRIVATE : REACH_DEFAULT;
	case ADDRMAN_NET_I2P:
		return our == ADDRMAN_NET_I2P ? REACH_PRIVATE : REACH_DEFAULT;
	case ADDRMAN_NET_CJDNS:
		return our == ADDRMAN_NET_CJDNS ? REACH_PRIVATE : REACH_DEFAULT;
	case EXT_TEREDO:
		if (our == EXT_TEREDO)
			return REACH_TEREDO;
		if (our == ADDRMAN_NET_IPV6)
			return REACH_IPV6_WEAK;
		return our == ADDRMAN_NET_IPV4 ? REACH_IPV4 : REACH_DEFAULT;
	default: /* unroutable or unknown */
		if (our == EXT_TEREDO)
			return REACH_TEREDO;
		if (our == ADDRMAN_NET_IPV6)
			return REACH_IPV6_WEAK;
		if (our == ADDRMAN_NET_IPV4)
			return REACH_IPV4;
		return our == ADDRMAN_NET_ONION ? REACH_PRIVATE : REACH_DEFAULT;
	}
}

/* Core's GetLocal: the best of ours for p, false when none fits. */
static bool get_local(const struct daemon *d, const struct peer *p, struct addrman_service *out)
{
	const struct net_reach *r = &d->net->reach;
	if (!r->listen)
		return false;
	int peer_net = net_peer_network(p);
	/* Through a proxy by name we know its network, not its address. */
	struct addrman_service them = net_addr_service(&p->addr);
	const struct addrman_service *theirs = p->proxied ? NULL : &them;
	int best_score = -1, best_reach = -1;
	bool found = false;
	for (uint32_t i = 0; i < r->n_local; i++) {
		const struct net_local *e = &r->local[i];
		int net = addrman_netaddr_network(&e->addr);
		if (net != peer_net && (is_privacy_net(net) || is_privacy_net(peer_net)))
			continue;
		int reach = reachability(&e->addr, theirs, peer_net);
		if (reach > best_reach || (reach == best_reach && e->score > best_score)) {
			*out = e->addr;
			best_reach = reach;
			best_score = e->score;
			found = true;
		}
	}
	return found;
}

bool net_local_addr_for_peer(struct daemon *d, const struct peer *p, struct addrman_address *out)
{
	const struct net_reach *r = &d->net->reach;
	struct addrman_service local;
	memset(&local, 0, sizeof(local));
	if (!get_local(d, p, &local)) {
		/* Core's GetLocalAddress: 0.0.0.0 on the listening port. */
		local = addrman_service_ipv4(0, 0, 0, 0, r->listen_port);
	}
	/* Core's IsPeerAddrLocalGood: the peer says where it sees us. */
	const struct addrman_service *seen = &p->addr_local;
	struct addrman_service them = net_addr_service(&p->addr);
	bool seen_good = r->discover && (p->proxied || addrman_netaddr_routable(&them)) &&
	                 addrman_netaddr_routable(seen) &&
	                 net_is_reachable(d, addrman_netaddr_network(seen));
	if (seen_good) {
		const struct net_local *e = local_find(d, &local);
		int score = e ? e->score : 0; /* GetnScore: by address, as Core's map */
		uint32_t bits = score > NET_LOCAL_MANUAL ? 3 : 1;
		uint64_t coin = proto_random_u64() & ((1u << bits) - 1);
		if (!addrman_netaddr_routable(&local) || coin == 0) {
			uint16_t port = local.port;
			local = *seen;
			/* Outbound, the peer cannot see our listening port. */
			if (!p->inbound)
				local.port = port;
		}
	}
	if (!addrman_netaddr_routable(&local))
		return false;
	char text[128];
	addrman_service_str(&local, text, sizeof(text));
	DLOG_DBG(&d->log, DLOG_NET, "Advertising address %s to peer=%llu", text,
	         (unsigned long long)p->id);
	memset(out, 0, sizeof(*out));
	out->svc = local;
	return true;
}
