/*
 * daemon/ctl/rpc_allow.c: who may connect to the HTTP JSON-RPC door, as
 * Core's InitHTTPAllowList and ClientAllowed: loopback always, and each
 * -rpcallowip: a single IP, a network/netmask (contiguous ones only) or a
 * network/CIDR, IPv4 or IPv6. An IPv4-mapped IPv6 client is matched as
 * the IPv4 address it is.
 */
#include "daemon/ctl/rpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int rpc_subnet_parse(const char *s, struct rpc_subnet *n)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t il = slash ? (size_t)(slash - s) : strlen(s);
	if (il == 0 || il >= sizeof(ip))
		return -1;
	memcpy(ip, s, il);
	ip[il] = 0;
	memset(n, 0, sizeof(*n));
	size_t alen;
	if (inet_pton(AF_INET, ip, n->net) == 1) {
		n->family = AF_INET;
		alen = 4;
	} else if (inet_pton(AF_INET6, ip, n->net) == 1) {
		n->family = AF_INET6;
		alen = 16;
	} else {
		return -1;
	}
	unsigned bits = (unsigned)alen * 8u;
	if (slash) {
		const char *m = slash + 1;
		char *end;
		if (*m >= '0' && *m <= '9' && !strchr(m, '.') && !strchr(m, ':')) {
			unsigned long b = strtoul(m, &end, 10);
			if (*end || b > bits)
				return -1;
			bits = (unsigned)b;
		} else {
			/* A netmask: of the address' family, contiguous ones. */
			unsigned char mk[16];
			if (inet_pton(n->family, m, mk) != 1)
				return -1;
			bits = 0;
			bool zero = false;
			for (size_t i = 0; i < alen * 8u; i++) {
				bool one = mk[i / 8] & (0x80u >> (i % 8));
				if (one && zero)
					return -1;
				if (one)
					bits++;
				else
					zero = true;
			}
		}
	}
	for (unsigned i = 0; i < bits; i++)
		n->mask[i / 8] |= (unsigned char)(0x80u >> (i % 8));
	for (size_t i = 0; i < alen; i++)
		n->net[i] &= n->mask[i];
	return 0;
}

static bool subnet_has(const struct rpc_subnet *n, int family, const unsigned char *a)
{
	if (n->family != family)
		return false;
	size_t alen = family == AF_INET ? 4 : 16;
	for (size_t i = 0; i < alen; i++)
		if ((a[i] & n->mask[i]) != n->net[i])
			return false;
	return true;
}

bool rpc_subnets_allow(const struct rpc_subnet *v, size_t n, const struct sockaddr *sa)
{
	unsigned char a[16];
	int family = sa->sa_family;
	if (family == AF_INET) {
		memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (family == AF_INET6) {
		const unsigned char *b =
		    (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (memcmp(b, mapped, 12) == 0) {
			family = AF_INET;
			memcpy(a, b + 12, 4);
		} else {
			memcpy(a, b, 16);
		}
	} else {
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (subnet_has(&v[i], family, a))
			return true;
	return false;
}
