/* conf/values.c: value checks for each kind of key, numbers, amounts and host:port. */
#include "conf/internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int conf_parse_uint(const char *s, unsigned long long min, unsigned long long max,
                    unsigned long long *out)
{
	const char *p = s;
	bool neg = false;
	unsigned long long v = 0;
	bool overflow = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	/* strtoull would accept leading blanks, '+', "0x" and trailing junk. */
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		unsigned d = (unsigned)(*p - '0');
		if (v > (~0ULL - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (overflow || (neg && v != 0) || v < min || v > max)
		return -2;
	*out = v;
	return 0;
}

int conf_parse_amount(const char *s, int64_t *sat)
{
	/* Core's ParseMoney: blanks around are ignored; at most 10 whole
	 * digits, then optionally '.' and at most 8 fraction digits (a ninth
	 * is an error, even a zero); no sign; at most 21,000,000 BTC. */
	const int64_t coin = 100000000;
	const char *p = s, *end = s + strlen(s);
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p == end)
		return -1;
	int64_t whole = 0, frac = 0;
	int nwhole = 0;
	for (; p < end && *p != '.'; p++) {
		if (!isdigit((unsigned char)*p) || ++nwhole > 10)
			return -1;
		whole = whole * 10 + (*p - '0');
	}
	if (p < end) { /* '.' */
		int64_t mult = coin / 10;
		for (p++; p < end && isdigit((unsigned char)*p) && mult > 0; p++, mult /= 10)
			frac += mult * (*p - '0');
		if (p != end)
			return -1;
	}
	int64_t v = whole * coin + frac;
	if (v > 21000000 * coin)
		return -1;
	*sat = v;
	return 0;
}

static const char *why_set(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *why_set(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return why;
}

/* A DNS name as a resolver would take it: letters, digits, '-', '_' and
 * dots between non-empty labels. Anything all digits and dots must be a
 * dotted-quad IPv4 address instead, so "1.2.3" or "0" is rejected rather
 * than resolved as a name. */
static bool host_name_ok(const char *h)
{
	size_t n = strlen(h);
	bool numeric = true;
	if (n == 0 || n > CONF_MAX_HOST || h[0] == '.' || h[0] == '-' || strstr(h, ".."))
		return false;
	for (const char *p = h; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (!isalnum(ch) && ch != '-' && ch != '.' && ch != '_')
			return false;
		if (!isdigit(ch) && ch != '.')
			numeric = false;
	}
	return !numeric;
}

static bool is_ip(const char *h, int *family)
{
	unsigned char buf[16];
	if (inet_pton(AF_INET, h, buf) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, h, buf) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* The parser behind conf_hostport; NULL or the reason, in why. */
static const char *split_hostport(const char *s, bool ip_only, uint16_t default_port, char *host,
                                  size_t hostlen, uint16_t *port, char *why, size_t whylen)
{
	const char *h = s, *hend, *ps = NULL;
	const char *colon = strchr(s, ':');
	int family = 0;

	if (s[0] == '[') {
		hend = strchr(s, ']');
		if (!hend)
			return why_set(why, whylen, "missing ']' after IPv6 address");
		h = s + 1;
		if (hend[1] == ':')
			ps = hend + 2;
		else if (hend[1] != '\0')
			return why_set(why, whylen, "expected ':<port>' after ']'");
	} else if (colon && !strchr(colon + 1, ':')) {
		hend = colon;
		ps = colon + 1;
	} else {
		/* No colon, or several: a bare IPv6 literal has no port. */
		hend = s + strlen(s);
	}
	size_t hl = (size_t)(hend - h);
	if (hl == 0)
		return why_set(why, whylen, "empty host");
	if (hl >= hostlen || hl > CONF_MAX_HOST)
		return why_set(why, whylen, "host too long (max %d characters)", CONF_MAX_HOST);
	memcpy(host, h, hl);
	host[hl] = '\0';

	if (ps) {
		unsigned long long p;
		int rc = conf_parse_uint(ps, 1, 65535, &p);
		if (rc == -1)
			return why_set(why, whylen, "port is not a number");
		if (rc)
			return why_set(why, whylen, "port out of range 1-65535");
		*port = (uint16_t)p;
	} else {
		*port = default_port;
	}

	bool ip = is_ip(host, &family);
	if (s[0] == '[' && !(ip && family == AF_INET6))
		return why_set(why, whylen, "not an IPv6 address inside []");
	if (ip_only && !ip)
		return why_set(why, whylen, "not an IPv4 or IPv6 address");
	if (!ip && (strchr(host, ':') || !host_name_ok(host)))
		return why_set(why, whylen, "not an IP address or host name");
	return NULL;
}

int conf_hostport(const char *s, uint16_t default_port, char *host, size_t hostlen, uint16_t *port)
{
	char why[128];
	if (!s || !host || hostlen == 0 || !port)
		return CONF_EVALUE;
	return split_hostport(s, false, default_port, host, hostlen, port, why, sizeof(why))
	           ? CONF_EVALUE
	           : 0;
}

const char *conf_check_value(enum conf_key key, const char *v, char *why, size_t whylen)
{
	const struct conf_keydef *k = &conf_keys[key];
	char host[CONF_MAX_HOST + 1];
	uint16_t port;
	unsigned long long n;
	int rc;

	if (*v == '\0' && k->kind != CONF_KIND_TEXT)
		return why_set(why, whylen, "empty value");
	switch (k->kind) {
	case CONF_KIND_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return why_set(why, whylen, "not 0 or 1");
		return NULL;
	case CONF_KIND_UINT:
		rc = conf_parse_uint(v, k->min, k->max, &n);
		if (rc == -1)
			return why_set(why, whylen, "not a number");
		if (rc)
			return why_set(why, whylen, "out of range %llu-%llu", k->min, k->max);
		return NULL;
	case CONF_KIND_PATH:
		if (strlen(v) > CONF_MAX_PATH)
			return why_set(why, whylen, "path too long (max %d bytes)", CONF_MAX_PATH);
		if (key == CONF_K_CONTROLSOCKET && strlen(v) > CONF_MAX_SOCKET_PATH)
			return why_set(why, whylen, "too long for a Unix socket (max %d bytes)",
			               CONF_MAX_SOCKET_PATH);
		return NULL;
	case CONF_KIND_CHAIN:
		if (conf_section_net(v, strlen(v)) < 0)
			return why_set(why, whylen,
			               "unknown network (main, test, testnet4, signet, regtest)");
		return NULL;
	case CONF_KIND_BIND:
		return split_hostport(v, true, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_PEER:
		return split_hostport(v, false, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_ADDR:
		return split_hostport(v, true, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_HEX256: {
		const char *h = v;
		if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
			h += 2;
		size_t len = strlen(h);
		if (len == 0 || len > 64 || strspn(h, "0123456789abcdefABCDEF") != len) {
			if (key ==
			    CONF_K_ASSUMEVALID) /* Core's words (chainstatemanager_args.cpp) */
				return why_set(
				    why, whylen,
				    "Invalid assumevalid block hash specified (%s), must be "
				    "up to 64 hex digits (or 0 to disable)",
				    v);
			return why_set(why, whylen, "not a hex number of 1-64 digits");
		}
		return NULL;
	}
	case CONF_KIND_AMOUNT: {
		int64_t sat;
		if (conf_parse_amount(v, &sat))
			return why_set(why, whylen, "Invalid amount for -%s=<amount>: '%s'",
			               k->name, v);
		return NULL;
	}
	case CONF_KIND_TEXT:
	case CONF_KIND_TEXTS:
		if (key == CONF_K_SIGNETCHALLENGE) { /* Core's words (chainparams.cpp) */
			size_t len = strlen(v);
			if (len % 2 || len > 2 * PROTO_MAX_SIGNET_CHALLENGE ||
			    strspn(v, "0123456789abcdefABCDEF") != len)
				return why_set(why, whylen,
				               "-signetchallenge must be hex, not '%s'.", v);
			return NULL;
		}
		if (strlen(v) > CONF_MAX_HOST + 7)
			return why_set(why, whylen, "too long (max %d bytes)", CONF_MAX_HOST + 7);
		return NULL;
	case CONF_KIND_DEBUG: {
		uint32_t m = 0, c = 0;
		/* Core's words (init's SetLoggingCategories); -help lists the names. */
		if (conf_debug_apply(v, true, &m, &c))
			return why_set(why, whylen, "Unsupported logging category -%s=%s.", k->name,
			               v);
		return NULL;
	}
	}
	return why_set(why, whylen, "internal error: key without a kind");
}
