/*
 * daemon/net/netgroup.c: which network a connection came through and
 * which network group it belongs to, as Bitcoin Core's
 * CNetAddr::GetNetClass and NetGroupManager::GetGroup (without -asmap),
 * and the group's keyed hash (CConnman::CalculateKeyedNetGroup).
 *
 * A group is what one operator can cheaply fill: a /16 of IPv4, a /32 of
 * IPv6 (a /36 for he.net, which hands out /48s to anyone), and one group
 * for every local or otherwise unroutable address. Eviction protects a few
 * groups and evicts from the biggest; the hash is keyed with the daemon's
 * random salt so that nobody can tell in advance which groups win.
 *
 * Peers here are TCP connections on IPv4 or IPv6 (peerd has no onion,
 * I2P or CJDNS listener), so those are the networks a connection gets;
 * the other values of enum net_network exist for eviction's ratio rule.
 */
#include "daemon/net/net.h"

#include <string.h>

static bool in4(const uint8_t a[4], uint32_t net, int bits)
{
	uint32_t ip = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	uint32_t mask = ~0u << (32 - bits);
	return (ip & mask) == (net & mask);
}

#define V4(a, b, c, d)                                                                             \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* Core's IsRoutable for an IPv4 address (with IsValid's exclusions). */
static bool routable4(const uint8_t a[4])
{
	return !(in4(a, V4(0, 0, 0, 0), 8) ||         /* this network, and IsLocal */
	         in4(a, V4(127, 0, 0, 0), 8) ||       /* loopback: IsLocal */
	         in4(a, V4(10, 0, 0, 0), 8) ||        /* RFC1918 */
	         in4(a, V4(172, 16, 0, 0), 12) ||     /* RFC1918 */
	         in4(a, V4(192, 168, 0, 0), 16) ||    /* RFC1918 */
	         in4(a, V4(198, 18, 0, 0), 15) ||     /* RFC2544 */
	         in4(a, V4(169, 254, 0, 0), 16) ||    /* RFC3927 link-local */
	         in4(a, V4(100, 64, 0, 0), 10) ||     /* RFC6598 shared space */
	         in4(a, V4(192, 0, 2, 0), 24) ||      /* RFC5737 documentation */
	         in4(a, V4(198, 51, 100, 0), 24) ||   /* RFC5737 */
	         in4(a, V4(203, 0, 113, 0), 24) ||    /* RFC5737 */
	         in4(a, V4(255, 255, 255, 255), 32)); /* INADDR_NONE: not valid */
}

static bool prefix6(const uint8_t *a, const uint8_t *p, size_t bytes)
{
	return memcmp(a, p, bytes) == 0;
}

/* Core's IsRoutable for a (non-mapped) IPv6 address. */
static bool routable6(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t doc[4] = {0x20, 0x01, 0x0d, 0xb8};
	if (prefix6(a, zero, 15)) /* :: (not valid) and ::1 (IsLocal) */
		return false;
	if ((a[0] & 0xfe) == 0xfc) /* RFC4193 unique local */
		return false;
	if (a[0] == 0xfe && a[1] == 0x80 && prefix6(a + 2, zero, 6)) /* RFC4862 fe80::/64 */
		return false;
	if (prefix6(a, doc, 4)) /* RFC3849 documentation: not valid */
		return false;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 &&
	    ((a[3] & 0xf0) == 0x10 || (a[3] & 0xf0) == 0x20)) /* RFC4843, RFC7343 ORCHID */
		return false;
	return true;
}

/* The IPv4 address an IPv6 address carries (Core's HasLinkedIPv4 and
 * GetLinkedIPv4: mapped, RFC6145, RFC6052, 6to4 and Teredo), into v4. */
static bool linked_ipv4(const uint8_t a[16], uint8_t v4[4])
{
	static const uint8_t rfc6145[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	static const uint8_t rfc6052[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t teredo[4] = {0x20, 0x01, 0, 0};
	if (net_ip16_is_v4(a) || prefix6(a, rfc6145, 12) || prefix6(a, rfc6052, 12)) {
		memcpy(v4, a + 12, 4);
		return true;
	}
	if (a[0] == 0x20 && a[1] == 0x02) { /* RFC3964 6to4: bytes 2-5 */
		memcpy(v4, a + 2, 4);
		return true;
	}
	if (prefix6(a, teredo, 4)) { /* RFC4380 Teredo: the last 4 bytes, inverted */
		for (int i = 0; i < 4; i++)
			v4[i] = (uint8_t)~a[12 + i];
		return true;
	}
	return false;
}

enum net_network net_addr_network(const union net_addr *a)
{
	uint8_t ip[16], v4[4];
	net_addr_ip16(a, ip);
	if (net_ip16_is_v4(ip))
		return routable4(ip + 12) ? NET_NETWORK_IPV4 : NET_NETWORK_UNROUTABLE;
	if (!routable6(ip))
		return NET_NETWORK_UNROUTABLE;
	/* Core's GetNetClass: an IPv6 address with an IPv4 inside (6to4,
	 * Teredo, ...) counts as IPv4, grouped by the one inside. */
	return linked_ipv4(ip, v4) ? NET_NETWORK_IPV4 : NET_NETWORK_IPV6;
}

size_t net_addr_group(const union net_addr *a, uint8_t out[NET_GROUP_MAX])
{
	uint8_t ip[16], v4[4];
	net_addr_ip16(a, ip);
	enum net_network net = net_addr_network(a);
	out[0] = (uint8_t)net;
	if (net == NET_NETWORK_UNROUTABLE) /* one group for all of them */
		return 1;
	if (net == NET_NETWORK_IPV4) {
		if (!linked_ipv4(ip, v4))
			memcpy(v4, ip + 12, 4);
		out[1] = v4[0];
		out[2] = v4[1];
		return 3;
	}
	memcpy(out + 1, ip, 4);
	/* he.net (2001:470::/32): a /36, the last 4 bits set. */
	if (ip[0] == 0x20 && ip[1] == 0x01 && ip[2] == 0x04 && ip[3] == 0x70) {
		out[5] = ip[4] | 0x0f;
		return 6;
	}
	return 5;
}

uint64_t net_keyed_netgroup(const struct daemon *d, const union net_addr *a)
{
	uint8_t g[NET_GROUP_MAX];
	size_t n = net_addr_group(a, g);
	return daemon_fingerprint(d, g, n);
}
