/*
 * daemon/ctl/rest_parse.c: the REST interface's parsers (ctl/rest.h), as
 * Core 29's rest.cpp reads a URI and a getutxos body: the format suffix,
 * hashes, counts, heights, outpoints. Pure: no I/O, no allocation, any
 * thread; every input is a client's and may be anything (fuzz_rest).
 */
#include "daemon/ctl/rest.h"

#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum rest_format rest_parse_format(const char *part, size_t len, size_t *param_len)
{
	static const struct {
		enum rest_format f;
		const char *name;
	} names[] = {{REST_BIN, "bin"}, {REST_HEX, "hex"}, {REST_JSON, "json"}};
	*param_len = len;
	/* Core looks at what follows the last dot only. */
	size_t dot = len;
	for (size_t i = len; i > 0; i--) {
		if (part[i - 1] == '.') {
			dot = i - 1;
			break;
		}
	}
	if (dot == len)
		return REST_UNDEF;
	size_t slen = len - dot - 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) == slen &&
		    memcmp(part + dot + 1, names[i].name, slen) == 0) {
			*param_len = dot;
			return names[i].f;
		}
	}
	/* Core's empty name: a trailing dot is UNDEF with the dot cut off. */
	if (slen == 0)
		*param_len = dot;
	return REST_UNDEF;
}

bool rest_is_hash(const char *s, size_t len)
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (hexval(s[i]) < 0)
			return false;
	}
	return true;
}

bool rest_parse_count(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		/* Past max is out of range however many digits follow. */
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool rest_parse_int32(const char *s, size_t len, int32_t *out)
{
	bool neg = len && s[0] == '-';
	size_t i = neg ? 1 : 0;
	if (i == len)
		return false;
	int64_t v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
		if (v > (int64_t)INT32_MAX + 1)
			return false;
	}
	if (neg)
		v = -v;
	if (v > INT32_MAX || v < INT32_MIN)
		return false;
	*out = (int32_t)v;
	return true;
}

void rest_sanitize_uri(const char *s, size_t len, char *out, size_t outlen)
{
	static const char safe[] = "!*'();:@&=+$,/?#[]-_.~%";
	size_t k = 0;
	if (!outlen)
		return;
	for (size_t i = 0; i < len && k + 1 < outlen; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || (c && strchr(safe, c));
		if (ok)
			out[k++] = c;
	}
	out[k] = 0;
}

/* A txid of 32 bytes in wire order as display hex (reversed). */
static void txid_hex(const uint8_t *b, char out[65])
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < 32; i++) {
		out[2 * i] = digits[b[31 - i] >> 4];
		out[2 * i + 1] = digits[b[31 - i] & 15];
	}
	out[64] = 0;
}

/* One TXID-N: exactly one '-', a hash before it, a uint32 after it. */
static bool outpoint_text(const char *s, size_t len, struct rest_outpoint *o)
{
	const char *dash = memchr(s, '-', len);
	if (!dash || memchr(dash + 1, '-', len - (size_t)(dash - s) - 1))
		return false;
	size_t tl = (size_t)(dash - s), nl = len - tl - 1;
	if (!rest_is_hash(s, tl) || nl == 0)
		return false;
	uint64_t n = 0;
	for (size_t i = 0; i < nl; i++) {
		char c = dash[1 + i];
		if (c < '0' || c > '9')
			return false;
		n = n * 10 + (uint64_t)(c - '0');
		if (n > UINT32_MAX)
			return false;
	}
	if (o) {
		for (size_t i = 0; i < 64; i++) {
			char c = s[i];
			o->txid[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
		}
		o->txid[64] = 0;
		o->n = (uint32_t)n;
	}
	return true;
}

enum rest_parse_result rest_parse_outpoints_uri(const char *part, size_t len, bool *mempool,
                                                struct rest_outpoint *v, size_t *n)
{
	*n = 0;
	*mempool = false;
	if (len <= 1)
		return REST_PARSE_EMPTY;
	/* Core drops the first character (the '/' after the prefix) and splits the rest. */
	const char *p = part + 1, *end = part + len;
	bool first = true;
	for (;;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *e = slash ? slash : end;
		size_t l = (size_t)(e - p);
		if (first && l == 12 && memcmp(p, "checkmempool", 12) == 0) {
			*mempool = true;
		} else {
			if (!outpoint_text(p, l, *n < REST_MAX_OUTPOINTS ? &v[*n] : NULL))
				return REST_PARSE_ERROR;
			++*n;
		}
		first = false;
		if (!slash)
			break;
		p = slash + 1;
	}
	if (*n == 0)
		return REST_PARSE_EMPTY;
	return *n > REST_MAX_OUTPOINTS ? REST_PARSE_TOO_MANY : REST_PARSE_OK;
}

/* Core's stream for a binary getutxos body: the body serialized as a string. */
struct stream {
	uint8_t prefix[9]; /* the body's length as CompactSize */
	size_t plen;
	const uint8_t *body;
	size_t len; /* prefix and body */
	size_t at;  /* the next byte to read */
};

static bool take(struct stream *s, uint8_t *out, size_t n)
{
	if (s->len - s->at < n)
		return false;
	for (size_t i = 0; i < n; i++, s->at++)
		out[i] = s->at < s->plen ? s->prefix[s->at] : s->body[s->at - s->plen];
	return true;
}

enum rest_parse_result rest_parse_outpoints_bin(const uint8_t *p, size_t len, bool *mempool,
                                                struct rest_outpoint *v, size_t *n)
{
	struct stream s = {.body = p};
	*n = 0;
	/* Core writes the body into its stream as a std::string, length first
	 * (`oss << strRequestMutable`), then reads the flag and the vector
	 * from that stream: the flag is the length's first byte. Kept, so a
	 * client gets from peerd what it gets from bitcoind. */
	if (len < 0xfd) {
		s.prefix[s.plen++] = (uint8_t)len;
	} else {
		size_t w = len <= 0xffff ? 2 : len <= 0xffffffffu ? 4 : 8;
		s.prefix[s.plen++] = w == 2 ? 0xfd : w == 4 ? 0xfe : 0xff;
		for (size_t i = 0; i < w; i++)
			s.prefix[s.plen++] = (uint8_t)((uint64_t)len >> (8 * i));
	}
	s.len = s.plen + len;
	uint8_t flag, tag, x[8];
	if (!take(&s, &flag, 1) || !take(&s, &tag, 1))
		return REST_PARSE_ERROR;
	*mempool = flag != 0;
	uint64_t count;
	/* Core's ReadCompactSize: canonical, and at most MAX_SIZE. */
	if (tag < 0xfd) {
		count = tag;
	} else {
		size_t w = tag == 0xfd ? 2 : tag == 0xfe ? 4 : 8;
		if (!take(&s, x, w))
			return REST_PARSE_ERROR;
		count = 0;
		for (size_t i = 0; i < w; i++)
			count |= (uint64_t)x[i] << (8 * i);
		uint64_t least = w == 2 ? 0xfd : w == 4 ? 0x10000 : 0x100000000ull;
		if (count < least)
			return REST_PARSE_ERROR;
	}
	if (count > 0x02000000u)
		return REST_PARSE_ERROR;
	/* Core reads each outpoint: a short body fails before any count check. */
	if ((s.len - s.at) / 36 < count)
		return REST_PARSE_ERROR;
	for (uint64_t i = 0; i < count && i < REST_MAX_OUTPOINTS; i++) {
		uint8_t o[36];
		if (!take(&s, o, 36))
			return REST_PARSE_ERROR;
		txid_hex(o, v[i].txid);
		v[i].n = (uint32_t)o[32] | (uint32_t)o[33] << 8 | (uint32_t)o[34] << 16 |
		         (uint32_t)o[35] << 24;
	}
	*n = (size_t)count;
	return count > REST_MAX_OUTPOINTS ? REST_PARSE_TOO_MANY : REST_PARSE_OK;
}

size_t rest_parse_hex(const char *s, size_t len, uint8_t *out)
{
	size_t k = 0, i = 0;
	while (i < len) {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return 0;
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return 0;
		out[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return k;
}
