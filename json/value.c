/*
 * json/value.c: the small values Core prints (amounts, doubles, unsigned
 * 64-bit numbers, hashes, hex) and the text of a whole value.
 *
 * jansson prints a real as "%.17g" and cannot print 50.00000000 at all, so
 * such numbers are built as strings carrying a tag, and json_format turns
 * each tagged string back into a bare number. A tag only counts as a whole
 * string value whose remaining characters are all number characters, so
 * text quoting a user's input can never become a number or break the
 * document's structure.
 */
#include "json/json.h"

#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"

#define NUM_TAG "\x01num:"
/* How json_dumps writes the tag's first byte. */
#define NUM_TAG_DUMPED "\"\\u0001num:"

json_t *json_amount(int64_t sats)
{
	char buf[64];
	uint64_t abs = sats < 0 ? (uint64_t)0 - (uint64_t)sats : (uint64_t)sats;
	snprintf(buf, sizeof(buf), NUM_TAG "%s%" PRIu64 ".%08" PRIu64, sats < 0 ? "-" : "",
	         abs / (uint64_t)PROTO_COIN, abs % (uint64_t)PROTO_COIN);
	return json_string(buf);
}

json_t *json_double(double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), NUM_TAG "%.16g", v);
	return json_string(buf);
}

json_t *json_u64(uint64_t v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), NUM_TAG "%" PRIu64, v);
	return json_string(buf);
}

json_t *json_hex(const uint8_t *data, size_t len)
{
	char *s = xmalloc(2 * len + 1);
	if (!s)
		return NULL;
	proto_hex_encode(data, len, s);
	/* Hex is ASCII: no UTF-8 check (a block's hex is megabytes). */
	json_t *v = json_stringn_nocheck(s, 2 * len);
	xfree(s);
	return v;
}

json_t *json_hash(const struct proto_hash *h)
{
	char hex[65];
	proto_hash_to_hex(h, hex);
	return json_string(hex);
}

json_t *json_hex32(uint32_t v)
{
	char buf[9];
	snprintf(buf, sizeof(buf), "%08" PRIx32, v);
	return json_string(buf);
}

json_t *json_target(uint32_t bits)
{
	uint8_t t[32] = {0}; /* big-endian */
	char hex[65];
	uint32_t mant = bits & 0x007fffff;
	int exp = (int)(bits >> 24);
	/* A negative compact target is zero, as Core's arith_uint256 has it. */
	if (!(bits & 0x00800000)) {
		for (int i = 0; i < 3; i++) {
			/* byte i of the mantissa sits at exp - i from the right */
			int pos = 32 - exp + i;
			if (pos >= 0 && pos < 32)
				t[pos] = (uint8_t)(mant >> (8 * (2 - i)));
		}
	}
	proto_hex_encode(t, 32, hex);
	return json_string(hex);
}

/* The characters "%.16g" and PRIu64 print; "inf" and "nan" too, because
 * Core prints a non-finite difficulty (a zero mantissa) bare as well. */
static bool num_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' ||
	       c == 'i' || c == 'n' || c == 'f' || c == 'a';
}

char *json_format(const json_t *v, size_t flags)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY);
	if (!s)
		return NULL;
	size_t tag = strlen(NUM_TAG_DUMPED);
	char *out = s, *in = s;
	/* In place: the text only ever shrinks. */
	while (*in) {
		if (*in == '"' && !strncmp(in, NUM_TAG_DUMPED, tag)) {
			char *e = in + tag;
			while (num_char(*e))
				e++;
			if (*e == '"' && e > in + tag) {
				size_t n = (size_t)(e - (in + tag));
				memmove(out, in + tag, n);
				out += n;
				in = e + 1;
				continue;
			}
		}
		if (*in == '"') {
			/* Copy a whole string verbatim (escapes included) so a quote
			 * inside one is never taken for the start of a tag. */
			*out++ = *in++;
			while (*in && *in != '"') {
				if (*in == '\\' && in[1])
					*out++ = *in++;
				*out++ = *in++;
			}
			if (*in)
				*out++ = *in++;
			continue;
		}
		*out++ = *in++;
	}
	*out = 0;
	return s;
}

int json_print(FILE *f, const json_t *v)
{
	char *s = json_format(v, JSON_INDENT(2));
	if (!s)
		return -1;
	fputs(s, f);
	fputc('\n', f);
	xfree(s);
	return 0;
}
