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
 * The rules themselves are addrman/'s (addrman/netaddr.c, Core's
 * netaddress.cpp and netgroup.cpp, checked against bitcoind there): this
 * file only turns a socket address into its service.
 *
 * Peers here are TCP connections on IPv4 or IPv6 (peerd has no onion,
 * I2P or CJDNS listener), so those are the networks a connection gets;
 * the other values of enum net_network exist for eviction's ratio rule.
 */
#include "daemon/net/net.h"

#include "addrman/addrman.h"

_Static_assert((int)NET_NETWORK_UNROUTABLE == (int)ADDRMAN_NET_UNROUTABLE &&
                   (int)NET_NETWORK_IPV4 == (int)ADDRMAN_NET_IPV4 &&
                   (int)NET_NETWORK_IPV6 == (int)ADDRMAN_NET_IPV6 &&
                   (int)NET_NETWORK_ONION == (int)ADDRMAN_NET_ONION &&
                   (int)NET_NETWORK_I2P == (int)ADDRMAN_NET_I2P &&
                   (int)NET_NETWORK_CJDNS == (int)ADDRMAN_NET_CJDNS &&
                   (int)NET_NETWORK_INTERNAL == (int)ADDRMAN_NET_INTERNAL,
               "enum net_network follows enum addrman_net");
_Static_assert(NET_GROUP_MAX == ADDRMAN_GROUP_MAX, "a group fits either buffer");

/* A connection's address as Core's CNetAddr: a socket address is read as
 * Core's SetSockAddr does, through the 16 bytes of addr v1
 * (IPv4-mapped becomes IPv4). */
static struct addrman_service to_service(const union net_addr *a)
{
	uint8_t ip[16];
	net_addr_ip16(a, ip);
	return addrman_service_from_v1(ip, net_addr_port(a));
}

enum net_network net_addr_network(const union net_addr *a)
{
	struct addrman_service s = to_service(a);
	return (enum net_network)addrman_netaddr_class(&s);
}

size_t net_addr_group(const union net_addr *a, uint8_t out[NET_GROUP_MAX])
{
	struct addrman_service s = to_service(a);
	return addrman_netaddr_group(&s, out);
}

uint64_t net_keyed_netgroup(const struct daemon *d, const union net_addr *a)
{
	uint8_t g[NET_GROUP_MAX];
	size_t n = net_addr_group(a, g);
	return daemon_fingerprint(d, g, n);
}
