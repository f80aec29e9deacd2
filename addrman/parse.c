/*
 * addrman/parse.c: an address as text into a service, as Core's
 * LookupHost without name lookups (numeric IPv4 and IPv6, and CNetAddr's
 * SetSpecial for NAME.onion and NAME.b32.i2p). addpeeraddress and
 * peertool addrman take addresses this way; nothing here asks a resolver.
 */
#include <arpa/inet.h>
#include <string.h>

#include "addrman/addrman.h"
#include "proto/proto.h"

/* RFC 4648 base32 (lower case, no padding) of exactly `want` bytes. */
static bool base32_decode(const char *s, size_t len, uint8_t *out, size_t want)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz234567";
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		const char *c = s[i] ? strchr(abc, s[i]) : NULL;
		if (!c)
			return false;
		acc = acc << 5 | (uint32_t)(c - abc);
		bits += 5;
		if (bits >= 8) {
			if (n == want)
				return false;
			out[n++] = (uint8_t)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	return n == want && (acc & ((1u << bits) - 1)) == 0;
}

/* NAME.onion (Tor v3: key, checksum, version 3) and NAME.b32.i2p, as
 * Core's SetSpecial; the onion's checksum is checked by printing it back. */
static bool parse_special(const char *text, uint16_t port, struct addrman_service *out)
{
	size_t len = strlen(text);
	uint8_t b[35];
	char back[128];
	if (len == 56 + 6 && !strcmp(text + 56, ".onion")) {
		if (!base32_decode(text, 56, b, 35) || b[34] != 3 ||
		    addrman_service_from_bip155(PROTO_BIP155_TORV3, b, 32, port, out))
			return false;
		addrman_netaddr_str(out, back, sizeof(back));
		return !strcmp(back, text);
	}
	if (len == 52 + 8 && !strcmp(text + 52, ".b32.i2p"))
		return base32_decode(text, 52, b, 32) &&
		       !addrman_service_from_bip155(PROTO_BIP155_I2P, b, 32, port, out);
	return false;
}

bool addrman_service_parse(const char *text, uint16_t port, struct addrman_service *out)
{
	uint8_t b[16];
	if (inet_pton(AF_INET, text, b) == 1)
		*out = addrman_service_ipv4(b[0], b[1], b[2], b[3], port);
	else if (inet_pton(AF_INET6, text, b) == 1)
		*out = addrman_service_from_v1(b, port);
	else
		return parse_special(text, port, out);
	return true;
}
