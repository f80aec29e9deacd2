/*
 * script/descriptor.c: output descriptors as bitcoin-cli prints them in
 * decoderawtransaction's "desc" field: Core's InferDescriptor with no
 * wallet behind it, then the BIP380 checksum.
 *
 * Without a wallet Core knows no keys or scripts behind a hash, so it infers
 * only what the script itself shows: pk(KEY) and multi(M,KEY,...) for bare
 * keys (not hybrid ones), rawtr(XONLY) for a taproot output whose key is on
 * the curve, addr(ADDRESS) for anything else with an address (P2PKH, P2SH,
 * P2WPKH, P2WSH, other witness programs, anchors) and raw(HEX) for the rest.
 */
#include <stdio.h>
#include <string.h>

#include "script/script.h"

/** BIP380: the characters a descriptor may hold, in checksum order. */
static const char DESC_INPUT_CHARSET[] = "0123456789()[],'/*abcdefgh@:$%{}"
                                         "IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                                         "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ";
static const char DESC_CHECKSUM_CHARSET[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
/** Checksum characters after the '#'. */
#define DESC_CHECKSUM_LEN 8

/* One step of BIP380's BCH code over GF(32), 40-bit state. */
static uint64_t desc_polymod(uint64_t c, unsigned val)
{
	static const uint64_t gen[5] = {0xf5dee51989ull, 0xa9fdca3312ull, 0x1bab10e32dull,
	                                0x3706b1677aull, 0x644d626ffdull};
	uint64_t top = c >> 35;
	c = ((c & 0x7ffffffffull) << 5) ^ val;
	for (int i = 0; i < 5; i++) {
		if ((top >> i) & 1)
			c ^= gen[i];
	}
	return c;
}

int script_desc_checksum(const char *desc, size_t len, char out[DESC_CHECKSUM_LEN + 1])
{
	uint64_t c = 1;
	unsigned cls = 0, cls_count = 0;
	for (size_t i = 0; i < len; i++) {
		const char *p = desc[i] ? strchr(DESC_INPUT_CHARSET, desc[i]) : NULL;
		if (!p)
			return -1;
		unsigned pos = (unsigned)(p - DESC_INPUT_CHARSET);
		/* every character gives its place in its group of 32; every
		 * three characters give one more symbol for their groups */
		c = desc_polymod(c, pos & 31);
		cls = cls * 3 + (pos >> 5);
		if (++cls_count == 3) {
			c = desc_polymod(c, cls);
			cls = 0;
			cls_count = 0;
		}
	}
	if (cls_count > 0)
		c = desc_polymod(c, cls);
	for (int i = 0; i < DESC_CHECKSUM_LEN; i++)
		c = desc_polymod(c, 0);
	c ^= 1;
	for (int i = 0; i < DESC_CHECKSUM_LEN; i++)
		out[i] = DESC_CHECKSUM_CHARSET[(c >> (5 * (DESC_CHECKSUM_LEN - 1 - i))) & 31];
	out[DESC_CHECKSUM_LEN] = 0;
	return 0;
}

static void put_str(struct proto_writer *w, const char *s)
{
	proto_write_bytes(w, s, strlen(s));
}

static void put_hex(struct proto_writer *w, const uint8_t *data, size_t len)
{
	if (w->err || proto_writer_reserve(w, 2 * len + 1))
		return;
	proto_hex_encode(data, len, (char *)w->buf + w->len);
	w->len += 2 * len;
}

/* Core's InferPubkey: compressed or uncompressed, never hybrid (06/07).
 * Whether the point is on the curve is not asked. */
static bool key_ok(const struct script_span *k)
{
	return k->len > 0 && (k->data[0] == 0x02 || k->data[0] == 0x03 || k->data[0] == 0x04);
}

/* The descriptor without its checksum. */
static void infer(struct proto_writer *w, const uint8_t *spk, size_t len,
                  const struct proto_params *net)
{
	struct script_solution sol;
	char addr[SCRIPT_ADDRESS_MAX];
	enum script_type type = script_solve(spk, len, &sol);

	if (type == SCRIPT_TYPE_PUBKEY && key_ok(&sol.data)) {
		put_str(w, "pk(");
		put_hex(w, sol.data.data, sol.data.len);
		put_str(w, ")");
		return;
	}
	if (type == SCRIPT_TYPE_MULTISIG) {
		bool ok = true;
		for (unsigned i = 0; i < sol.n_keys; i++)
			ok = ok && key_ok(&sol.keys[i]);
		if (ok) {
			char num[16];
			snprintf(num, sizeof(num), "multi(%u", sol.required);
			put_str(w, num);
			for (unsigned i = 0; i < sol.n_keys; i++) {
				put_str(w, ",");
				put_hex(w, sol.keys[i].data, sol.keys[i].len);
			}
			put_str(w, ")");
			return;
		}
	}
	if (type == SCRIPT_TYPE_WITNESS_V1_TAPROOT && script_xonly_pubkey_valid(sol.data.data)) {
		put_str(w, "rawtr(");
		put_hex(w, sol.data.data, sol.data.len);
		put_str(w, ")");
		return;
	}
	/* Every script with an address is exactly the script that address
	 * stands for, so Core's round-trip check always holds here. */
	if (script_address(spk, len, net, addr, sizeof(addr)) == 0) {
		put_str(w, "addr(");
		put_str(w, addr);
		put_str(w, ")");
		return;
	}
	put_str(w, "raw(");
	put_hex(w, spk, len);
	put_str(w, ")");
}

char *script_descriptor(const uint8_t *spk, size_t len, const struct proto_params *net)
{
	struct proto_writer w;
	char sum[DESC_CHECKSUM_LEN + 1];
	char *out = NULL;

	proto_writer_init(&w);
	infer(&w, spk, len, net);
	/* Only hex, addresses and fixed words were written: always in the
	 * charset. */
	if (!w.err && script_desc_checksum((const char *)w.buf, w.len, sum) == 0) {
		proto_write_u8(&w, '#');
		proto_write_bytes(&w, sum, DESC_CHECKSUM_LEN);
		proto_write_u8(&w, 0);
	}
	if (!w.err) {
		out = (char *)w.buf;
		w.buf = NULL;
	}
	proto_writer_release(&w);
	return out;
}

/* ---- parsing ---------------------------------------------------------------- */

/* The descriptor functions Core knows at the top level that need keys or
 * scripts behind them; peerd has no wallet to expand them with. */
static const char *const KEYED_FUNCS[] = {
    "pk",    "pkh",         "wpkh",    "combo",         "sh",   "wsh", "tr",
    "multi", "sortedmulti", "multi_a", "sortedmulti_a", "rawtr"};

int script_descriptor_parse(const char *desc, const struct proto_params *net, uint8_t *spk,
                            size_t cap, size_t *spk_len, char *why, size_t why_cap)
{
	char sum[DESC_CHECKSUM_LEN + 1];
	const char *hash = strchr(desc, '#');
	size_t body = hash ? (size_t)(hash - desc) : strlen(desc);
	if (why && why_cap)
		why[0] = 0;
	/* Core's CheckChecksum: optional here, but right when given. */
	if (hash && strchr(hash + 1, '#')) {
		snprintf(why, why_cap, "Multiple '#' symbols");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (hash && strlen(hash + 1) != DESC_CHECKSUM_LEN) {
		snprintf(why, why_cap, "Expected 8 character checksum, not %zu characters",
		         strlen(hash + 1));
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (script_desc_checksum(desc, body, sum)) {
		snprintf(why, why_cap, "Invalid characters in payload");
		return SCRIPT_ADDRESS_EINVALID;
	}
	if (hash && memcmp(hash + 1, sum, DESC_CHECKSUM_LEN)) {
		snprintf(why, why_cap,
		         "Provided checksum '%s' does not match computed checksum '%s'", hash + 1,
		         sum);
		return SCRIPT_ADDRESS_EINVALID;
	}
	const char *open = memchr(desc, '(', body);
	if (!open || body < 2 || desc[body - 1] != ')') {
		snprintf(why, why_cap, "'%.*s' is not a valid descriptor function", (int)body,
		         desc);
		return SCRIPT_ADDRESS_EINVALID;
	}
	size_t name_len = (size_t)(open - desc);
	const char *arg = open + 1;
	size_t arg_len = body - name_len - 2;
	if (name_len == 3 && !memcmp(desc, "raw", 3)) {
		/* Core's IsHex: non-empty, even, hex digits only */
		if (arg_len == 0 || arg_len % 2 ||
		    proto_hex_decode(arg, arg_len, spk, cap, spk_len) != 0) {
			if (arg_len / 2 > cap && arg_len % 2 == 0) {
				return SCRIPT_ADDRESS_ESPACE;
			}
			snprintf(why, why_cap, "Raw script is not hex");
			return SCRIPT_ADDRESS_EINVALID;
		}
		return 0;
	}
	if (name_len == 4 && !memcmp(desc, "addr", 4)) {
		char addr[SCRIPT_ADDRESS_MAX + 1];
		if (arg_len >= sizeof(addr)) {
			snprintf(why, why_cap, "Address is not valid");
			return SCRIPT_ADDRESS_EINVALID;
		}
		memcpy(addr, arg, arg_len);
		addr[arg_len] = 0;
		int rc = script_address_decode(addr, net, spk, cap, spk_len, NULL, 0);
		if (rc == SCRIPT_ADDRESS_EINVALID)
			snprintf(why, why_cap, "Address is not valid");
		return rc;
	}
	for (size_t i = 0; i < sizeof(KEYED_FUNCS) / sizeof(KEYED_FUNCS[0]); i++) {
		if (strlen(KEYED_FUNCS[i]) == name_len && !memcmp(desc, KEYED_FUNCS[i], name_len)) {
			snprintf(why, why_cap,
			         "%.*s() needs keys: peerd expands raw() and addr() only",
			         (int)name_len, desc);
			return SCRIPT_ADDRESS_ENONE;
		}
	}
	snprintf(why, why_cap, "'%.*s' is not a valid descriptor function", (int)body, desc);
	return SCRIPT_ADDRESS_EINVALID;
}
