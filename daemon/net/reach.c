/*
 * daemon/net/reach.c: which networks peerd may reach and through which
 * proxy, read from the options as Core 29's AppInitMain step 6 reads them
 * (init.cpp), with Core's messages for bad values.
 *
 * Every network starts reachable. -onlynet=<net> (repeatable) keeps only
 * the networks named; CJDNS stays reachable only with -cjdnsreachable (an
 * fc00::/8 address is otherwise IPv6); I2P never is, as peerd has no SAM
 * client (-i2psam); onion only with a proxy that reaches it: -onion, or
 * else -proxy. -proxy serves IPv4, IPv6, CJDNS and host names. The
 * reachable set only steers automatic connections (Core: "inbound and
 * manual connections are not affected"); the proxies serve every dial.
 *
 * Addresses in the options are IP literals or Tor v3 names; a host name
 * is looked up with getaddrinfo here, before the loop runs, as Core's
 * Lookup does at startup (tests name no host).
 */
#include "daemon/net/net.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Core's SplitHostPort: a port after the last ':' when the host is
 * bracketed or has no other ':'. False for a port that is not 1-65535;
 * host is then the whole text (Lookup ignores the verdict, as Core). */
static bool split_host_port(const char *in, char *host, size_t hostlen, uint16_t *port)
{
	size_t len = strlen(in);
	const char *colon = strrchr(in, ':');
	bool valid = false;
	if (colon) {
		size_t at = (size_t)(colon - in);
		bool bracketed = in[0] == '[' && at > 0 && in[at - 1] == ']';
		bool multi = at > 0 && memchr(in, ':', at) != NULL;
		if (at == 0 || bracketed || !multi) {
			const char *p = colon + 1;
			char *end;
			errno = 0;
			unsigned long n =
			    *p && isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
			if (*p && isdigit((unsigned char)*p) && !*end && !errno && n <= 65535 &&
			    strlen(p) <= 5) {
				len = at;
				*port = (uint16_t)n;
				valid = n != 0;
			}
		}
	} else {
		valid = true;
	}
	const char *h = in;
	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		h++;
		len -= 2;
	}
	if (len >= hostlen)
		len = hostlen - 1;
	memcpy(host, h, len);
	host[len] = 0;
	return valid;
}

/* Core's MaybeFlipIPv6toCJDNS: fc00::/8 is CJDNS when CJDNS is reachable. */
static struct addrman_service flip_cjdns(const struct daemon *d, struct addrman_service s)
{
	if (s.net == ADDRMAN_NET_IPV6 && s.addr[0] == 0xfc &&
	    net_is_reachable(d, ADDRMAN_NET_CJDNS))
		s.net = ADDRMAN_NET_CJDNS;
	return s;
}

struct addrman_service net_addr_service(const union net_addr *a)
{
	uint8_t ip[16];
	net_addr_ip16(a, ip);
	return addrman_service_from_v1(ip, net_addr_port(a));
}

/*
 * Core's Lookup for one result: "host[:port]" (port default dflt) as an IP
 * literal, a Tor v3 or I2P name, or (allow_dns) the first address a
 * getaddrinfo finds. False when nothing comes of it.
 */
static bool lookup(const struct daemon *d, const char *text, uint16_t dflt, bool allow_dns,
                   struct addrman_service *out)
{
	char host[CONF_MAX_HOST + 8];
	uint16_t port = dflt;
	if (!*text)
		return false;
	(void)split_host_port(text, host, sizeof(host), &port);
	/* An IP literal, NAME.onion or NAME.b32.i2p (addrman/parse.c, Core's
	 * LookupHost without a resolver); only IPv6 can turn out CJDNS. */
	if (addrman_service_parse(host, port, out)) {
		*out = flip_cjdns(d, *out);
		return true;
	}
	if (!allow_dns || !*host)
		return false;
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) || !res)
		return false;
	bool found = false;
	for (struct addrinfo *ai = res; ai && !found; ai = ai->ai_next) {
		union net_addr a;
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(a))
			continue;
		memset(&a, 0, sizeof(a));
		memcpy(&a, ai->ai_addr, ai->ai_addrlen);
		*out = flip_cjdns(d, net_addr_service(&a));
		out->port = port;
		found = true;
	}
	freeaddrinfo(res);
	return found;
}

/* A proxy's address: an IPv4 or IPv6 literal or a host name, port 9050
 * by default, valid (not 0.0.0.0 or ::). */
static bool parse_proxy(const struct daemon *d, const char *text, bool randomize,
                        struct net_proxy *out)
{
	struct addrman_service s;
	memset(out, 0, sizeof(*out));
	if (!lookup(d, text, NET_PROXY_DEFAULT_PORT, true, &s) || !addrman_netaddr_valid(&s))
		return false;
	char ip[64];
	addrman_netaddr_str(&s, ip, sizeof(ip));
	if (s.net == ADDRMAN_NET_IPV4) {
		if (uv_ip4_addr(ip, s.port, &out->addr.in4))
			return false;
	} else if (s.net == ADDRMAN_NET_IPV6 || s.net == ADDRMAN_NET_CJDNS) {
		struct sockaddr_in6 *a6 = &out->addr.in6;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(s.port);
		memcpy(&a6->sin6_addr, s.addr, 16);
	} else {
		return false; /* a proxy behind a proxy: Core cannot dial it either */
	}
	out->randomize = randomize;
	return true;
}

/* Core's ParseNetwork: the network of an -onlynet value, or -1. */
static int parse_network(struct daemon *d, const char *v)
{
	char low[16];
	size_t n = strlen(v);
	if (n >= sizeof(low))
		return -1;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)v[i]);
	if (!strcmp(low, "ipv4"))
		return ADDRMAN_NET_IPV4;
	if (!strcmp(low, "ipv6"))
		return ADDRMAN_NET_IPV6;
	if (!strcmp(low, "onion"))
		return ADDRMAN_NET_ONION;
	if (!strcmp(low, "tor")) {
		DLOG_WARNING(&d->log, DLOG_NET,
		             "Warning: net name 'tor' is deprecated and will be removed in the "
		             "future. You should use 'onion' instead.");
		return ADDRMAN_NET_ONION;
	}
	if (!strcmp(low, "i2p"))
		return ADDRMAN_NET_I2P;
	if (!strcmp(low, "cjdns"))
		return ADDRMAN_NET_CJDNS;
	return -1;
}

bool net_is_reachable(const struct daemon *d, int addrman_net)
{
	return addrman_net >= 0 && addrman_net < ADDRMAN_NET__COUNT &&
	       (d->net->reach.reachable & (1u << addrman_net)) != 0;
}

uint32_t net_reachable_mask(const struct daemon *d)
{
	return d->net->reach.reachable;
}

const struct net_proxy *net_proxy_for(const struct daemon *d, int addrman_net)
{
	if (addrman_net < 0 || addrman_net >= ADDRMAN_NET__COUNT)
		return NULL;
	const struct net_proxy *p = &d->net->reach.proxy[addrman_net];
	return p->addr.sa.sa_family ? p : NULL;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		DLOG_ERR(&d->log, DLOG_NET, __VA_ARGS__);                                          \
		return -EINVAL;                                                                    \
	} while (0)

/* Core's GetListenPort: the first -bind that names a port, else -port. */
static uint16_t listen_port(const struct peerd_conf *c)
{
	for (size_t i = 0; i < c->bind.n; i++) {
		char host[CONF_MAX_HOST + 1];
		uint16_t port = 0;
		if (conf_hostport(c->bind.v[i], 0, host, sizeof(host), &port) == 0 && port)
			return port;
	}
	return c->port;
}

/* The networks and proxies: Core's -onlynet, -cjdnsreachable, -proxy and
 * -onion handling, in its order (so the first bad option is the one
 * named, as Core). */
static int init_networks(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	struct net_reach *r = &d->net->reach;
	/* Core's CheckHostPortOptions first (a unix: path aside). */
	const char *hp[2][2] = {{"-proxy", c->proxy}, {"-onion", c->onion}};
	for (int i = 0; i < 2; i++) {
		char host[CONF_MAX_HOST + 8];
		uint16_t port = 0;
		if (strncmp(hp[i][1], "unix:", 5) &&
		    !split_host_port(hp[i][1], host, sizeof(host), &port))
			FAIL("Invalid port specified in %s: '%s'", hp[i][0], hp[i][1]);
	}
	r->reachable = (1u << ADDRMAN_NET__COUNT) - 1; /* all, as Core's DefaultNets */
	if (c->onlynet.n) {
		r->reachable = 0;
		for (size_t i = 0; i < c->onlynet.n; i++) {
			int net = parse_network(d, c->onlynet.v[i]);
			if (net < 0)
				FAIL("Unknown network specified in -onlynet: '%s'",
				     c->onlynet.v[i]);
			r->reachable |= 1u << net;
		}
	}
	/* Core tests IsArgSet: even -cjdnsreachable=0 keeps CJDNS. */
	if (c->cjdnsreachable < 0) {
		if (c->onlynet.n && net_is_reachable(d, ADDRMAN_NET_CJDNS))
			FAIL("Outbound connections restricted to CJDNS (-onlynet=cjdns) but "
			     "-cjdnsreachable is not provided");
		r->reachable &= ~(1u << ADDRMAN_NET_CJDNS);
	}
	struct net_proxy onion;
	memset(&onion, 0, sizeof(onion));
	if (c->proxy[0] && strcmp(c->proxy, "0") != 0) {
		struct net_proxy p;
		if (!strncmp(c->proxy, "unix:", 5) ||
		    !parse_proxy(d, c->proxy, c->proxyrandomize, &p))
			FAIL("Invalid -proxy address or hostname: '%s'", c->proxy);
		r->proxy[ADDRMAN_NET_IPV4] = p;
		r->proxy[ADDRMAN_NET_IPV6] = p;
		r->proxy[ADDRMAN_NET_CJDNS] = p;
		r->name_proxy = p;
		onion = p;
	}
	bool onlynet_onion = c->onlynet.n && net_is_reachable(d, ADDRMAN_NET_ONION);
	if (c->onion[0]) {
		if (strcmp(c->onion, "0") == 0) {
			memset(&onion, 0, sizeof(onion));
			if (onlynet_onion)
				FAIL("Outbound connections restricted to Tor (-onlynet=onion) but "
				     "the "
				     "proxy for reaching the Tor network is explicitly forbidden: "
				     "-onion=0");
		} else if (!strncmp(c->onion, "unix:", 5) ||
		           !parse_proxy(d, c->onion, c->proxyrandomize, &onion)) {
			FAIL("Invalid -onion address or hostname: '%s'", c->onion);
		}
	}
	if (onion.addr.sa.sa_family) {
		r->proxy[ADDRMAN_NET_ONION] = onion;
	} else {
		/* Core waits for a proxy from the Tor control port when
		 * -listenonion is on; peerd has no Tor control client, so
		 * -onlynet=onion without a proxy is always Core's error. */
		if (onlynet_onion)
			FAIL(
			    "Outbound connections restricted to Tor (-onlynet=onion) but the proxy "
			    "for reaching the Tor network is not provided: none of -proxy, -onion "
			    "or -listenonion is given");
		r->reachable &= ~(1u << ADDRMAN_NET_ONION);
	}
	/* No SAM client (-i2psam is refused): I2P is never reachable. */
	if (c->onlynet.n && net_is_reachable(d, ADDRMAN_NET_I2P))
		FAIL("Outbound connections restricted to i2p (-onlynet=i2p) but -i2psam is not "
		     "provided");
	r->reachable &= ~(1u << ADDRMAN_NET_I2P);
	return 0;
}

/* Our own addresses: -externalip (LOCAL_MANUAL), the -bind addresses
 * (LOCAL_BIND, Core's CConnman::Bind) and, with -discover, the
 * interfaces' (LOCAL_IF, Core's Discover). */
static int init_local(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	struct net_reach *r = &d->net->reach;
	for (size_t i = 0; i < c->externalip.n; i++) {
		struct addrman_service s;
		if (!lookup(d, c->externalip.v[i], r->listen_port, true, &s) ||
		    !addrman_netaddr_valid(&s))
			FAIL("Cannot resolve -externalip address: '%s'", c->externalip.v[i]);
		(void)net_add_local(d, &s, NET_LOCAL_MANUAL);
	}
	if (!r->listen)
		return 0;
	for (size_t i = 0; i < c->bind.n && r->discover; i++) {
		union net_addr a;
		if (net_addr_parse(c->bind.v[i], c->port, &a) == 0) {
			struct addrman_service s = flip_cjdns(d, net_addr_service(&a));
			(void)net_add_local(d, &s, NET_LOCAL_BIND);
		}
	}
	if (!r->discover)
		return 0;
	uv_interface_address_t *ifs = NULL;
	int n = 0;
	if (uv_interface_addresses(&ifs, &n))
		return 0;
	for (int i = 0; i < n; i++) {
		union net_addr a;
		memset(&a, 0, sizeof(a));
		if (ifs[i].is_internal)
			continue; /* Core skips "lo" */
		if (ifs[i].address.address4.sin_family == AF_INET)
			a.in4 = ifs[i].address.address4;
		else if (ifs[i].address.address6.sin6_family == AF_INET6)
			a.in6 = ifs[i].address.address6;
		else
			continue;
		struct addrman_service s = flip_cjdns(d, net_addr_service(&a));
		s.port = r->listen_port;
		if (net_add_local(d, &s, NET_LOCAL_IF)) {
			char ip[64];
			addrman_netaddr_str(&s, ip, sizeof(ip));
			DLOG_INFO_(&d->log, DLOG_NET, "Discover: %s", ip);
		}
	}
	uv_free_interface_addresses(ifs, n);
	return 0;
}

void net_reach_defaults(struct daemon *d)
{
	struct net_reach *r = &d->net->reach;
	memset(r, 0, sizeof(*r));
	/* What the default options give: no proxy, so no onion; no CJDNS, no I2P. */
	r->reachable = (1u << ADDRMAN_NET_UNROUTABLE) | (1u << ADDRMAN_NET_IPV4) |
	               (1u << ADDRMAN_NET_IPV6) | (1u << ADDRMAN_NET_INTERNAL);
	r->listen = d->conf->listen;
	r->listen_port = listen_port(d->conf);
	/* Core's TorStreamIsolationCredentialsGenerator: a random prefix per
	 * run, so two runs (or two nodes) never share credentials. */
	uint8_t rnd[8];
	proto_random(rnd, sizeof(rnd));
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(r->cred_prefix + 2 * i, 3, "%02x", rnd[i]);
	strcat(r->cred_prefix, "-");
}

int net_reach_init(struct daemon *d)
{
	struct net_reach *r = &d->net->reach;
	net_reach_defaults(d);
	r->discover = d->conf->discover;
	int err = init_networks(d);
	if (err)
		return err;
	return init_local(d);
}
