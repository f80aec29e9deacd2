/*
 * addrman/netaddr.c: what kind of address an address is, as Core's
 * netaddress.cpp (IsValid, IsRoutable, GetNetwork, GetNetClass, the RFC
 * ranges, GetKey) and netgroup.cpp (GetGroup without asmap) say.
 */
#include <stdio.h>
#include <string.h>

#include <nettle/sha3.h>

#include "addrman/internal.h"
#include "proto/proto.h"

static const uint8_t ipv4_in_ipv6[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
/* Core's TORV2_IN_IPV6_PREFIX (OnionCat) and INTERNAL_IN_IPV6_PREFIX. */
static const uint8_t torv2_in_ipv6[6] = {0xfd, 0x87, 0xd8, 0x7e, 0xeb, 0x43};
static const uint8_t internal_in_ipv6[6] = {0xfd, 0x6b, 0x88, 0xc0, 0x87, 0x24};

/* Core's default CNetAddr: IPv6 ::, which is not valid. */
static struct addrman_service invalid_service(uint16_t port)
{
	struct addrman_service s;
	memset(&s, 0, sizeof(s));
	s.net = ADDRMAN_NET_IPV6;
	s.len = 16;
	s.port = port;
	return s;
}

struct addrman_service addrman_service_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d,
                                            uint16_t port)
{
	struct addrman_service s;
	memset(&s, 0, sizeof(s));
	s.net = ADDRMAN_NET_IPV4;
	s.len = 4;
	s.addr[0] = a;
	s.addr[1] = b;
	s.addr[2] = c;
	s.addr[3] = d;
	s.port = port;
	return s;
}

struct addrman_service addrman_service_from_v1(const uint8_t ip[16], uint16_t port)
{
	struct addrman_service s;
	memset(&s, 0, sizeof(s));
	s.port = port;
	if (memcmp(ip, ipv4_in_ipv6, sizeof(ipv4_in_ipv6)) == 0) {
		s.net = ADDRMAN_NET_IPV4;
		s.len = 4;
		memcpy(s.addr, ip + 12, 4);
	} else if (memcmp(ip, torv2_in_ipv6, sizeof(torv2_in_ipv6)) == 0) {
		return invalid_service(port);
	} else if (memcmp(ip, internal_in_ipv6, sizeof(internal_in_ipv6)) == 0) {
		s.net = ADDRMAN_NET_INTERNAL;
		s.len = 10;
		memcpy(s.addr, ip + 6, 10);
	} else {
		s.net = ADDRMAN_NET_IPV6;
		s.len = 16;
		memcpy(s.addr, ip, 16);
	}
	return s;
}

int addrman_service_from_bip155(uint8_t bip155_net, const uint8_t *addr, size_t len, uint16_t port,
                                struct addrman_service *out)
{
	uint8_t net, want;
	switch (bip155_net) {
	case PROTO_BIP155_IPV4:
		net = ADDRMAN_NET_IPV4, want = 4;
		break;
	case PROTO_BIP155_IPV6:
		net = ADDRMAN_NET_IPV6, want = 16;
		break;
	case PROTO_BIP155_TORV3:
		net = ADDRMAN_NET_ONION, want = 32;
		break;
	case PROTO_BIP155_I2P:
		net = ADDRMAN_NET_I2P, want = 32;
		break;
	case PROTO_BIP155_CJDNS:
		net = ADDRMAN_NET_CJDNS, want = 16;
		break;
	default: /* Tor v2 (gone) and networks from the future: kept as invalid */
		*out = invalid_service(port);
		return 0;
	}
	if (len != want)
		return -1;
	if (net == ADDRMAN_NET_IPV6) {
		/* Internal arrives from peers.dat in IPv6 form; IPv4 and Tor v2
		 * have no business inside an addrv2 IPv6 address. */
		if (memcmp(addr, internal_in_ipv6, sizeof(internal_in_ipv6)) == 0) {
			memset(out, 0, sizeof(*out));
			out->net = ADDRMAN_NET_INTERNAL;
			out->len = 10;
			out->port = port;
			memcpy(out->addr, addr + 6, 10);
			return 0;
		}
		if (memcmp(addr, ipv4_in_ipv6, sizeof(ipv4_in_ipv6)) == 0 ||
		    memcmp(addr, torv2_in_ipv6, sizeof(torv2_in_ipv6)) == 0) {
			*out = invalid_service(port);
			return 0;
		}
	}
	memset(out, 0, sizeof(*out));
	out->net = net;
	out->len = want;
	out->port = port;
	memcpy(out->addr, addr, want);
	return 0;
}

uint8_t addrman_service_bip155(const struct addrman_service *s, const uint8_t **addr, size_t *len)
{
	static _Thread_local uint8_t internal[16];
	*addr = s->addr;
	*len = s->len;
	switch (s->net) {
	case ADDRMAN_NET_IPV4:
		return PROTO_BIP155_IPV4;
	case ADDRMAN_NET_ONION:
		return PROTO_BIP155_TORV3;
	case ADDRMAN_NET_I2P:
		return PROTO_BIP155_I2P;
	case ADDRMAN_NET_CJDNS:
		return PROTO_BIP155_CJDNS;
	case ADDRMAN_NET_INTERNAL:
		memcpy(internal, internal_in_ipv6, 6);
		memcpy(internal + 6, s->addr, 10);
		*addr = internal;
		*len = 16;
		return PROTO_BIP155_IPV6;
	default:
		return PROTO_BIP155_IPV6;
	}
}

bool addrman_netaddr_eq(const struct addrman_service *a, const struct addrman_service *b)
{
	return a->net == b->net && a->len == b->len && memcmp(a->addr, b->addr, a->len) == 0;
}

bool addrman_service_eq(const struct addrman_service *a, const struct addrman_service *b)
{
	return addrman_netaddr_eq(a, b) && a->port == b->port;
}

/* ---- Core's range predicates --------------------------------------------- */

static bool is_ipv4(const struct addrman_service *s)
{
	return s->net == ADDRMAN_NET_IPV4;
}

static bool is_ipv6(const struct addrman_service *s)
{
	return s->net == ADDRMAN_NET_IPV6;
}

static bool v6_prefix(const struct addrman_service *s, const uint8_t *p, size_t n)
{
	return is_ipv6(s) && memcmp(s->addr, p, n) == 0;
}

static bool is_rfc1918(const struct addrman_service *s)
{
	const uint8_t *a = s->addr;
	return is_ipv4(s) && (a[0] == 10 || (a[0] == 192 && a[1] == 168) ||
	                      (a[0] == 172 && a[1] >= 16 && a[1] <= 31));
}

static bool is_rfc2544(const struct addrman_service *s)
{
	return is_ipv4(s) && s->addr[0] == 198 && (s->addr[1] == 18 || s->addr[1] == 19);
}

static bool is_rfc3927(const struct addrman_service *s)
{
	return is_ipv4(s) && s->addr[0] == 169 && s->addr[1] == 254;
}

static bool is_rfc6598(const struct addrman_service *s)
{
	return is_ipv4(s) && s->addr[0] == 100 && s->addr[1] >= 64 && s->addr[1] <= 127;
}

static bool is_rfc5737(const struct addrman_service *s)
{
	const uint8_t *a = s->addr;
	return is_ipv4(s) && ((a[0] == 192 && a[1] == 0 && a[2] == 2) ||
	                      (a[0] == 198 && a[1] == 51 && a[2] == 100) ||
	                      (a[0] == 203 && a[1] == 0 && a[2] == 113));
}

static bool is_rfc3849(const struct addrman_service *s)
{
	static const uint8_t p[] = {0x20, 0x01, 0x0d, 0xb8};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc3964(const struct addrman_service *s)
{
	static const uint8_t p[] = {0x20, 0x02};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc6052(const struct addrman_service *s)
{
	static const uint8_t p[] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc4380(const struct addrman_service *s)
{
	static const uint8_t p[] = {0x20, 0x01, 0, 0};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc4862(const struct addrman_service *s)
{
	static const uint8_t p[] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc4193(const struct addrman_service *s)
{
	return is_ipv6(s) && (s->addr[0] & 0xfe) == 0xfc;
}

static bool is_rfc6145(const struct addrman_service *s)
{
	static const uint8_t p[] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	return v6_prefix(s, p, sizeof(p));
}

static bool is_rfc4843(const struct addrman_service *s)
{
	return is_ipv6(s) && s->addr[0] == 0x20 && s->addr[1] == 0x01 && s->addr[2] == 0x00 &&
	       (s->addr[3] & 0xf0) == 0x10;
}

static bool is_rfc7343(const struct addrman_service *s)
{
	return is_ipv6(s) && s->addr[0] == 0x20 && s->addr[1] == 0x01 && s->addr[2] == 0x00 &&
	       (s->addr[3] & 0xf0) == 0x20;
}

static bool is_he_net(const struct addrman_service *s)
{
	static const uint8_t p[] = {0x20, 0x01, 0x04, 0x70};
	return v6_prefix(s, p, sizeof(p));
}

/* addrman_netaddr_set_loopback_routable: set once at start, before any thread. */
static bool loopback_routable;

void addrman_netaddr_set_loopback_routable(bool on)
{
	loopback_routable = on;
}

static bool is_local(const struct addrman_service *s)
{
	static const uint8_t loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	if (is_ipv4(s) && s->addr[0] == 127)
		return !loopback_routable;
	if (is_ipv4(s) && s->addr[0] == 0)
		return true;
	return is_ipv6(s) && memcmp(s->addr, loop6, 16) == 0;
}

static bool is_internal(const struct addrman_service *s)
{
	return s->net == ADDRMAN_NET_INTERNAL;
}

bool addrman_netaddr_valid(const struct addrman_service *s)
{
	static const uint8_t none6[16] = {0};
	if (is_ipv6(s) && memcmp(s->addr, none6, 16) == 0)
		return false;
	if (s->net == ADDRMAN_NET_CJDNS && s->addr[0] != 0xfc)
		return false;
	if (is_rfc3849(s) || is_internal(s))
		return false;
	if (is_ipv4(s)) {
		uint32_t a = (uint32_t)s->addr[0] << 24 | (uint32_t)s->addr[1] << 16 |
		             (uint32_t)s->addr[2] << 8 | s->addr[3];
		if (a == 0 || a == 0xffffffffu)
			return false;
	}
	return true;
}

bool addrman_netaddr_routable(const struct addrman_service *s)
{
	return addrman_netaddr_valid(s) &&
	       !(is_rfc1918(s) || is_rfc2544(s) || is_rfc3927(s) || is_rfc4862(s) ||
	         is_rfc6598(s) || is_rfc5737(s) || is_rfc4193(s) || is_rfc4843(s) ||
	         is_rfc7343(s) || is_local(s) || is_internal(s));
}

enum addrman_net addrman_netaddr_network(const struct addrman_service *s)
{
	if (is_internal(s))
		return ADDRMAN_NET_INTERNAL;
	if (!addrman_netaddr_routable(s))
		return ADDRMAN_NET_UNROUTABLE;
	return (enum addrman_net)s->net;
}

static bool has_linked_ipv4(const struct addrman_service *s)
{
	return addrman_netaddr_routable(s) &&
	       (is_ipv4(s) || is_rfc6145(s) || is_rfc6052(s) || is_rfc3964(s) || is_rfc4380(s));
}

/* Core's GetLinkedIPv4, for an address with has_linked_ipv4. */
static uint32_t linked_ipv4(const struct addrman_service *s)
{
	const uint8_t *a = s->addr;
	if (is_ipv4(s))
		return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	if (is_rfc6052(s) || is_rfc6145(s))
		return (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	if (is_rfc3964(s))
		return (uint32_t)a[2] << 24 | (uint32_t)a[3] << 16 | (uint32_t)a[4] << 8 | a[5];
	/* Teredo: the client's address, inverted, in the last 4 bytes. */
	return ~((uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15]);
}

enum addrman_net addrman_netaddr_class(const struct addrman_service *s)
{
	if (is_internal(s))
		return ADDRMAN_NET_INTERNAL;
	if (!addrman_netaddr_routable(s))
		return ADDRMAN_NET_UNROUTABLE;
	if (has_linked_ipv4(s))
		return ADDRMAN_NET_IPV4;
	return (enum addrman_net)s->net;
}

/* Core's GetAddrBytes: the v1 16 bytes for IPv4, IPv6 and internal, the
 * address's own bytes for the others. */
static size_t addr_bytes(const struct addrman_service *s, uint8_t out[32])
{
	switch (s->net) {
	case ADDRMAN_NET_IPV4:
		memcpy(out, ipv4_in_ipv6, 12);
		memcpy(out + 12, s->addr, 4);
		return 16;
	case ADDRMAN_NET_INTERNAL:
		memcpy(out, internal_in_ipv6, 6);
		memcpy(out + 6, s->addr, 10);
		return 16;
	default:
		memcpy(out, s->addr, s->len);
		return s->len;
	}
}

size_t addrman_service_key(const struct addrman_service *s, uint8_t out[34])
{
	size_t n = addr_bytes(s, out);
	out[n] = (uint8_t)(s->port >> 8);
	out[n + 1] = (uint8_t)(s->port & 0xff);
	return n + 2;
}

size_t addrman_netaddr_group(const struct addrman_service *s, uint8_t out[ADDRMAN_GROUP_MAX])
{
	size_t n = 0, start = 0;
	int bits = 0;
	out[n++] = (uint8_t)addrman_netaddr_class(s);
	if (is_local(s)) {
		/* all local addresses are one group */
	} else if (is_internal(s)) {
		start = 6; /* past the internal prefix of the 16 bytes */
		bits = 10 * 8;
	} else if (!addrman_netaddr_routable(s)) {
		/* all other unroutable addresses are one group */
	} else if (has_linked_ipv4(s)) {
		uint32_t v4 = linked_ipv4(s);
		out[n++] = (uint8_t)(v4 >> 24);
		out[n++] = (uint8_t)(v4 >> 16);
		return n;
	} else if (s->net == ADDRMAN_NET_ONION || s->net == ADDRMAN_NET_I2P) {
		bits = 4;
	} else if (s->net == ADDRMAN_NET_CJDNS) {
		bits = 12; /* the constant 0xfc byte and 4 bits more, as Core */
	} else if (is_he_net(s)) {
		bits = 36;
	} else {
		bits = 32;
	}
	uint8_t bytes[32];
	addr_bytes(s, bytes);
	size_t whole = (size_t)bits / 8;
	memcpy(out + n, bytes + start, whole);
	n += whole;
	bits %= 8;
	if (bits > 0)
		out[n++] = (uint8_t)(bytes[start + whole] | ((1 << (8 - bits)) - 1));
	return n;
}

/* Core's EncodeBase32 (RFC 4648 alphabet, lower case, no padding). */
static void base32(const uint8_t *in, size_t len, char *out, size_t cap)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz234567";
	size_t o = 0;
	uint32_t acc = 0;
	int nbits = 0;
	for (size_t i = 0; i < len; i++) {
		acc = acc << 8 | in[i];
		nbits += 8;
		while (nbits >= 5 && o + 1 < cap) {
			out[o++] = abc[(acc >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	if (nbits > 0 && o + 1 < cap)
		out[o++] = abc[(acc << (5 - nbits)) & 31];
	out[o] = 0;
}

/* Tor v3's name (Core's OnionToString): base32(pubkey | checksum[2] |
 * version 3), the checksum the first two bytes of SHA3-256(".onion
 * checksum" | pubkey | version). */
static void onion_str(const uint8_t pubkey[32], char *out, size_t cap)
{
	static const char prefix[] = ".onion checksum";
	uint8_t v = 3, digest[SHA3_256_DIGEST_SIZE], all[35];
	struct sha3_256_ctx c;
	sha3_256_init(&c);
	sha3_256_update(&c, sizeof(prefix) - 1, (const uint8_t *)prefix);
	sha3_256_update(&c, 32, pubkey);
	sha3_256_update(&c, 1, &v);
	sha3_256_digest(&c, sizeof(digest), digest);
	memcpy(all, pubkey, 32);
	all[32] = digest[0];
	all[33] = digest[1];
	all[34] = v;
	base32(all, sizeof(all), out, cap);
}

void addrman_netaddr_str(const struct addrman_service *s, char *buf, size_t cap)
{
	const uint8_t *a = s->addr;
	char b32[80];
	switch (s->net) {
	case ADDRMAN_NET_IPV4:
		snprintf(buf, cap, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		return;
	case ADDRMAN_NET_ONION:
		onion_str(a, b32, sizeof(b32));
		snprintf(buf, cap, "%s.onion", b32);
		return;
	case ADDRMAN_NET_I2P:
		base32(a, 32, b32, sizeof(b32));
		snprintf(buf, cap, "%s.b32.i2p", b32);
		return;
	case ADDRMAN_NET_INTERNAL:
		base32(a, 10, b32, sizeof(b32));
		snprintf(buf, cap, "%s.internal", b32);
		return;
	default:
		break;
	}
	/* IPv6 and CJDNS: RFC 5952 (longest run of two or more zero groups as ::). */
	uint16_t g[8];
	for (int i = 0; i < 8; i++)
		g[i] = (uint16_t)(a[2 * i] << 8 | a[2 * i + 1]);
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && g[j] == 0)
			j++;
		if (j - i > best_len && j - i >= 2)
			best = i, best_len = j - i;
		i = j > i ? j : i + 1;
	}
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < 8 && o < cap; i++) {
		if (i == best) {
			o += (size_t)snprintf(buf + o, cap - o, "::");
			i += best_len - 1;
			continue;
		}
		if (o < cap)
			o += (size_t)snprintf(buf + o, cap - o, "%s%x",
			                      (i == 0 || i == best + best_len) ? "" : ":", g[i]);
	}
}

void addrman_service_str(const struct addrman_service *s, char *buf, size_t cap)
{
	char a[100];
	addrman_netaddr_str(s, a, sizeof(a));
	if (s->net == ADDRMAN_NET_IPV6 || s->net == ADDRMAN_NET_CJDNS)
		snprintf(buf, cap, "[%s]:%u", a, s->port);
	else
		snprintf(buf, cap, "%s:%u", a, s->port);
}

const char *addrman_net_name(enum addrman_net net)
{
	switch (net) {
	case ADDRMAN_NET_IPV4:
		return "ipv4";
	case ADDRMAN_NET_IPV6:
		return "ipv6";
	case ADDRMAN_NET_ONION:
		return "onion";
	case ADDRMAN_NET_I2P:
		return "i2p";
	case ADDRMAN_NET_CJDNS:
		return "cjdns";
	case ADDRMAN_NET_INTERNAL:
		return "internal";
	default:
		return "not_publicly_routable";
	}
}
