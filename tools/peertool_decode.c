/* tools/peertool_decode.c: decode-tx, decode-block and decode-msg. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "base/opt.h"
#include "tools/peertool.h"

/** What decode-tx, decode-block and decode-msg accept. */
struct decode_args {
	const char *path;
	int hex;
	/* Network for addresses; NULL when not given (decode-msg then takes
	 * the frame's, decode-block a block file's). */
	const struct proto_params *net;
	const struct base_opt_cmd *cmd;
};

enum { DECODE_OPT_HEX, DECODE_OPT_CHAIN };

static const struct base_opt_spec DECODE_OPTS[] = {
    {"hex", DECODE_OPT_HEX, false},
    {"chain", DECODE_OPT_CHAIN, true},
};

#define DECODE_CMD(NAME, USAGE, HELP)                                                              \
	{                                                                                          \
		"peertool", NAME, USAGE, DECODE_OPTS,                                              \
		    sizeof(DECODE_OPTS) / sizeof(DECODE_OPTS[0]), HELP                             \
	}
static const struct base_opt_cmd CMD_TX =
    DECODE_CMD("decode-tx", "usage: peertool decode-tx [--hex] [--chain NAME] FILE|HEX|-",
               peertool_decode_tx_help);
static const struct base_opt_cmd CMD_BLOCK =
    DECODE_CMD("decode-block", "usage: peertool decode-block [--hex] [--chain NAME] FILE|HEX|-",
               peertool_decode_block_help);
static const struct base_opt_cmd CMD_MSG =
    DECODE_CMD("decode-msg", "usage: peertool decode-msg [--hex] [--chain NAME] FILE|HEX|-",
               peertool_decode_msg_help);

static const char INPUT_HELP[] =
    "The input is a file, '-' for stdin, or the hex itself on the command line\n"
    "(as bitcoin-cli decoderawtransaction HEX). A file or stdin holding hex\n"
    "text is recognised as hex (whitespace ignored); --hex insists on it.\n"
    "  --hex          the input must be hex\n"
    "  --chain NAME   main, test, testnet4, signet or regtest (any case): the\n"
    "                 network whose addresses to show (default main)\n"
    "Options take -key=value, --key=value or --key value.\n";

void peertool_decode_tx_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Print a transaction as JSON, in the shape of Core's decoderawtransaction.\n\n"
	        "%s\n"
	        "Examples:\n"
	        "  peertool decode-tx 0200000001...\n"
	        "  peertool decode-tx --chain regtest tx.hex\n"
	        "  bitcoin-cli getrawtransaction TXID | peertool decode-tx -\n\n"
	        "Exit codes: 0 decoded; 1 unreadable or invalid input (the message names\n"
	        "the byte offset); 2 usage error.\n",
	        CMD_TX.usage, INPUT_HELP);
}

void peertool_decode_block_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Print a block as JSON, in the shape of Core's getblock HASH 2. The input is\n"
	        "a block (raw or hex), or block-file records as in Core's blkNNNNN.dat\n"
	        "(network magic, 4-byte little-endian length, block; zero padding at the\n"
	        "end ignored): one record prints one block, several print a JSON list,\n"
	        "and addresses follow the records' network unless --chain says otherwise.\n\n"
	        "%s\n"
	        "Examples:\n"
	        "  peertool decode-block block.raw\n"
	        "  peertool decode-block ~/.bitcoin/regtest/blocks/blk00000.dat\n\n"
	        "Exit codes: 0 decoded; 1 unreadable or invalid input (the message names\n"
	        "the byte offset); 2 usage error.\n",
	        CMD_BLOCK.usage, INPUT_HELP);
}

void peertool_decode_msg_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Print framed P2P messages (24-byte header, payload) as JSON: network,\n"
	        "command, length, checksum and the decoded payload. Several messages one\n"
	        "after another (a capture of a stream) print as a JSON list. The network\n"
	        "comes from each frame's magic; --chain only checks it.\n\n"
	        "%s\n"
	        "Example:\n"
	        "  peertool decode-msg capture.bin\n\n"
	        "Exit codes: 0 decoded; 1 unreadable or invalid input (the message names\n"
	        "the byte offset); 2 usage error.\n",
	        CMD_MSG.usage, INPUT_HELP);
}

static int set_option(void *ctx, int id, const char *val)
{
	struct decode_args *a = ctx;
	if (id == DECODE_OPT_HEX) {
		a->hex = 1;
		return 0;
	}
	return peertool_chain_arg(a->cmd, val, &a->net);
}

/* Parse "[--hex] [--chain NAME] FILE|HEX|-"; 0, or the exit code. */
static int parse_args(const struct base_opt_cmd *c, int argc, char **argv, struct decode_args *a)
{
	size_t n;
	memset(a, 0, sizeof(*a));
	a->cmd = c;
	int rc = base_opt_parse(c, argc, argv, set_option, a, &a->path, 1, &n);
	if (rc)
		return rc == BASE_OPT_HELP ? BASE_OPT_HELP : rc;
	if (!n)
		return base_opt_usage_error(c, "no input given (a file, '-' for stdin, or hex)");
	return 0;
}

/* Addresses default to mainnet's, as bitcoin-cli's do. */
static const struct proto_params *net_or_main(const struct proto_params *net)
{
	return net ? net : proto_params(PROTO_NET_MAIN);
}

static int decode_error(const char *cmd, const char *what, int err, size_t off)
{
	peertool_error(cmd, "invalid %s at byte %zu: %s (%s)", what, off, proto_strerror(err),
	               proto_errname(err));
	return 1;
}

static int print_json(const char *cmd, json_t *v)
{
	int rc = v && !json_print(stdout, v) ? 0 : 1;
	if (rc)
		peertool_error(cmd, "out of memory");
	json_decref(v);
	return rc;
}

/* Parse the arguments and read the input: NULL with *rc set otherwise
 * (0 after the help). */
static uint8_t *load_input(const struct base_opt_cmd *c, int argc, char **argv,
                           struct decode_args *a, size_t *len, int *rc)
{
	*rc = parse_args(c, argc, argv, a);
	if (*rc) {
		if (*rc == BASE_OPT_HELP)
			*rc = 0;
		return NULL;
	}
	uint8_t *data = peertool_read_input(argv[0], a->path, a->hex, len);
	if (!data)
		*rc = 1;
	return data;
}

int peertool_decode_tx(int argc, char **argv)
{
	struct decode_args a;
	size_t len, off = 0;
	int rc;
	uint8_t *data = load_input(&CMD_TX, argc, argv, &a, &len, &rc);
	if (!data)
		return rc;
	struct proto_tx tx;
	proto_tx_init(&tx);
	int err = proto_tx_decode_buf(data, len, &tx, &off);
	if (err)
		rc = decode_error(argv[0], "transaction", err, off);
	else
		rc = print_json(argv[0], json_tx(&tx, net_or_main(a.net), NULL, 0));
	proto_tx_release(&tx);
	xfree(data);
	return rc;
}

/* Size of a block-file record's head: network magic and length. */
#define DECODE_RECORD_HEAD 8u

/*
 * Whether data is block-file records rather than one block: it starts with
 * a known network's magic and a length that fits. (A raw block starts with
 * its version; no version in use looks like a magic followed by a fitting
 * length.)
 */
static bool is_block_file(const uint8_t *data, size_t len)
{
	return len >= DECODE_RECORD_HEAD && proto_params_by_magic(proto_le32(data)) &&
	       proto_le32(data + 4) <= len - DECODE_RECORD_HEAD;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Decode one block of n bytes at p as JSON; NULL after an error naming base + offset. */
static json_t *block_json(const char *cmd, const uint8_t *p, size_t n, size_t base,
                          const struct proto_params *net, struct proto_block *b)
{
	size_t off = 0;
	int err = proto_block_decode(p, n, b, &off);
	if (err) {
		decode_error(cmd, "block", err, base + off);
		return NULL;
	}
	return json_block(b, NULL, net, 2, NULL);
}

/* Every record of a block file: one object for one record, else a list. */
static json_t *records_json(const char *cmd, const uint8_t *data, size_t len,
                            const struct proto_params *want, struct proto_block *b)
{
	json_t *list = json_array();
	size_t off = 0;
	while (list && off < len) {
		/* Core preallocates block files: zeros after the last record. */
		if (all_zero(data + off, len - off))
			break;
		const struct proto_params *net =
		    len - off >= 4 ? proto_params_by_magic(proto_le32(data + off)) : NULL;
		if (len - off < DECODE_RECORD_HEAD || !net) {
			peertool_error(cmd,
			               "record %zu at byte %zu: expected a network magic and a "
			               "4-byte length (block-file record)",
			               json_array_size(list), off);
			goto fail;
		}
		uint32_t n = proto_le32(data + off + 4);
		if (n > len - off - DECODE_RECORD_HEAD) {
			peertool_error(cmd,
			               "record %zu at byte %zu: length %" PRIu32
			               " runs past the end of the input (%zu bytes left)",
			               json_array_size(list), off, n,
			               len - off - DECODE_RECORD_HEAD);
			goto fail;
		}
		json_t *o = block_json(cmd, data + off + DECODE_RECORD_HEAD, n,
		                       off + DECODE_RECORD_HEAD, want ? want : net, b);
		if (!o)
			goto fail;
		json_array_append_new(list, o);
		off += DECODE_RECORD_HEAD + n;
	}
	if (list && json_array_size(list) == 1) {
		json_t *one = json_incref(json_array_get(list, 0));
		json_decref(list);
		return one;
	}
	return list;
fail:
	json_decref(list);
	return NULL;
}

int peertool_decode_block(int argc, char **argv)
{
	struct decode_args a;
	size_t len;
	int rc;
	uint8_t *data = load_input(&CMD_BLOCK, argc, argv, &a, &len, &rc);
	if (!data)
		return rc;
	struct proto_block b;
	proto_block_init(&b);
	json_t *o = is_block_file(data, len)
	                ? records_json(argv[0], data, len, a.net, &b)
	                : block_json(argv[0], data, len, 0, net_or_main(a.net), &b);
	rc = o ? print_json(argv[0], o) : 1;
	proto_block_release(&b);
	xfree(data);
	return rc;
}

/* ---- decode-msg ---------------------------------------------------------- */

static const char *inv_type_name(uint32_t t)
{
	switch (t) {
	case PROTO_INV_ERROR:
		return "ERROR";
	case PROTO_INV_TX:
		return "MSG_TX";
	case PROTO_INV_BLOCK:
		return "MSG_BLOCK";
	case PROTO_INV_FILTERED_BLOCK:
		return "MSG_FILTERED_BLOCK";
	case PROTO_INV_CMPCT_BLOCK:
		return "MSG_CMPCT_BLOCK";
	case PROTO_INV_WTX:
		return "MSG_WTX";
	case PROTO_INV_WITNESS_TX:
		return "MSG_WITNESS_TX";
	case PROTO_INV_WITNESS_BLOCK:
		return "MSG_WITNESS_BLOCK";
	case PROTO_INV_FILTERED_WITNESS_BLOCK:
		return "MSG_FILTERED_WITNESS_BLOCK";
	default:
		return NULL;
	}
}

static json_t *json_services(uint64_t s)
{
	char buf[17];
	snprintf(buf, sizeof(buf), "%016" PRIx64, s);
	return json_string(buf);
}

static json_t *json_netaddr(const struct proto_netaddr *a)
{
	static const uint8_t v4prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char buf[INET6_ADDRSTRLEN];
	if (!memcmp(a->ip, v4prefix, 12))
		inet_ntop(AF_INET, a->ip + 12, buf, sizeof(buf));
	else
		inet_ntop(AF_INET6, a->ip, buf, sizeof(buf));
	json_t *o = json_object();
	json_object_set_new(o, "services", json_services(a->services));
	json_object_set_new(o, "address", json_string(buf));
	json_object_set_new(o, "port", json_integer(a->port));
	return o;
}

static const char *bip155_name(uint8_t net)
{
	switch (net) {
	case PROTO_BIP155_IPV4:
		return "ipv4";
	case PROTO_BIP155_IPV6:
		return "ipv6";
	case PROTO_BIP155_TORV2:
		return "onion_v2";
	case PROTO_BIP155_TORV3:
		return "onion";
	case PROTO_BIP155_I2P:
		return "i2p";
	case PROTO_BIP155_CJDNS:
		return "cjdns";
	default:
		return "unknown";
	}
}

static json_t *json_addr_entry(const struct proto_addr_entry *e)
{
	char buf[INET6_ADDRSTRLEN];
	json_t *o = json_object();
	json_object_set_new(o, "time", json_integer(e->time));
	json_object_set_new(o, "services", json_services(e->services));
	json_object_set_new(o, "network", json_string(bip155_name(e->net)));
	if (e->net == PROTO_BIP155_IPV4 && e->addr_len == 4 &&
	    inet_ntop(AF_INET, e->addr, buf, sizeof(buf)))
		json_object_set_new(o, "address", json_string(buf));
	else if ((e->net == PROTO_BIP155_IPV6 || e->net == PROTO_BIP155_CJDNS) &&
	         e->addr_len == 16 && inet_ntop(AF_INET6, e->addr, buf, sizeof(buf)))
		json_object_set_new(o, "address", json_string(buf));
	else
		json_object_set_new(o, "address", json_hex(e->addr, e->addr_len));
	json_object_set_new(o, "port", json_integer(e->port));
	return o;
}

static json_t *json_version(const struct proto_version *v)
{
	json_t *o = json_object();
	json_object_set_new(o, "version", json_integer(v->version));
	json_object_set_new(o, "services", json_services(v->services));
	json_object_set_new(o, "timestamp", json_integer(v->timestamp));
	json_object_set_new(o, "addr_recv", json_netaddr(&v->addr_recv));
	json_object_set_new(o, "addr_from", json_netaddr(&v->addr_from));
	json_object_set_new(o, "nonce", json_u64(v->nonce));
	json_object_set_new(o, "user_agent", json_stringn(v->user_agent, v->user_agent_len));
	json_object_set_new(o, "start_height", json_integer(v->start_height));
	if (v->has_relay)
		json_object_set_new(o, "relay", json_boolean(v->relay));
	return o;
}

static json_t *json_inv(const struct proto_inv *inv)
{
	json_t *arr = json_array();
	for (uint32_t i = 0; i < inv->n; i++) {
		json_t *e = json_object();
		const char *name = inv_type_name(inv->v[i].type);
		json_object_set_new(e, "type",
		                    name ? json_string(name) : json_integer(inv->v[i].type));
		json_object_set_new(e, "hash", json_hash(&inv->v[i].hash));
		json_array_append_new(arr, e);
	}
	json_t *o = json_object();
	json_object_set_new(o, "count", json_integer(inv->n));
	json_object_set_new(o, "inventory", arr);
	return o;
}

static json_t *json_payload(struct proto_msg *m, const struct proto_params *net)
{
	json_t *o, *arr;
	switch (m->cmd) {
	case PROTO_CMD_VERSION:
		return json_version(&m->version);
	case PROTO_CMD_PING:
	case PROTO_CMD_PONG:
		o = json_object();
		json_object_set_new(o, "nonce", json_u64(m->nonce));
		return o;
	case PROTO_CMD_INV:
	case PROTO_CMD_GETDATA:
	case PROTO_CMD_NOTFOUND:
		return json_inv(&m->inv);
	case PROTO_CMD_GETHEADERS:
	case PROTO_CMD_GETBLOCKS:
		o = json_object();
		arr = json_array();
		for (uint32_t i = 0; i < m->locator.n; i++)
			json_array_append_new(arr, json_hash(&m->locator.hashes[i]));
		json_object_set_new(o, "version", json_integer(m->locator.version));
		json_object_set_new(o, "locator", arr);
		json_object_set_new(o, "hashstop", json_hash(&m->locator.stop));
		return o;
	case PROTO_CMD_HEADERS:
		o = json_object();
		arr = json_array();
		for (uint32_t i = 0; i < m->headers.n; i++)
			json_array_append_new(arr, json_block_header(&m->headers.h[i], NULL));
		json_object_set_new(o, "count", json_integer(m->headers.n));
		json_object_set_new(o, "headers", arr);
		return o;
	case PROTO_CMD_TX:
		return json_tx(&m->tx, net, NULL, 0);
	case PROTO_CMD_BLOCK:
		return json_block(&m->block, NULL, net, 2, NULL);
	case PROTO_CMD_ADDR:
	case PROTO_CMD_ADDRV2:
		o = json_object();
		arr = json_array();
		for (uint32_t i = 0; i < m->addr.n; i++)
			json_array_append_new(arr, json_addr_entry(&m->addr.v[i]));
		json_object_set_new(o, "count", json_integer(m->addr.n));
		if (m->addr.n_skipped)
			json_object_set_new(o, "skipped_unknown_networks",
			                    json_integer(m->addr.n_skipped));
		json_object_set_new(o, "addresses", arr);
		return o;
	case PROTO_CMD_FEEFILTER:
		o = json_object();
		json_object_set_new(o, "feerate", json_integer(m->feerate));
		return o;
	case PROTO_CMD_SENDCMPCT:
		o = json_object();
		json_object_set_new(o, "high_bandwidth", json_boolean(m->sendcmpct.high_bandwidth));
		json_object_set_new(o, "version", json_u64(m->sendcmpct.version));
		return o;
	default:
		return json_object();
	}
}

/* Decode the frame at data[0..len) into a JSON object; *used gets its size.
 * NULL after an error naming the byte (base + offset). */
static json_t *frame_json(const char *cmd, const uint8_t *data, size_t len, size_t base,
                          const struct proto_params *want, struct proto_msg *m, size_t *used)
{
	struct proto_frame_header h;
	size_t off = 0;
	const struct proto_params *net = len >= 4 ? proto_params_by_magic(proto_le32(data)) : NULL;
	if (len < PROTO_HEADER_SIZE) {
		peertool_error(cmd, "truncated frame header at byte %zu: %zu of %u bytes", base,
		               len, PROTO_HEADER_SIZE);
		return NULL;
	}
	if (!net) {
		peertool_error(cmd,
		               "unknown network magic %02x%02x%02x%02x at byte %zu (expected "
		               "f9beb4d9 main, 0b110907 test, 1c163f28 testnet4, 0a03cf40 "
		               "signet or fabfb5da regtest)",
		               data[0], data[1], data[2], data[3], base);
		return NULL;
	}
	/* The frame names its network; --chain only asserts which one. */
	if (want && want != net) {
		peertool_error(cmd, "network magic %02x%02x%02x%02x at byte %zu is %s's, not %s's",
		               data[0], data[1], data[2], data[3], base, net->name, want->name);
		return NULL;
	}
	int err = proto_frame_header_parse(data, net->magic, &h);
	if (err) {
		size_t at = err == PROTO_ECOMMAND ? 4 : err == PROTO_EOVERSIZE ? 16 : 0;
		decode_error(cmd, "frame header", err, base + at);
		return NULL;
	}
	if (len - PROTO_HEADER_SIZE < h.length) {
		peertool_error(cmd,
		               "truncated payload at byte %zu: header says %" PRIu32
		               " bytes, %zu present",
		               base + len, h.length, len - PROTO_HEADER_SIZE);
		return NULL;
	}
	const uint8_t *payload = data + PROTO_HEADER_SIZE;
	if (proto_frame_verify(&h, payload)) {
		peertool_error(cmd, "bad checksum at byte %zu: payload does not match the header",
		               base + 20);
		return NULL;
	}
	json_t *o = json_object();
	json_object_set_new(o, "network", json_string(net->name));
	json_object_set_new(o, "command", json_string(h.command));
	json_object_set_new(o, "length", json_integer(h.length));
	json_object_set_new(o, "checksum", json_hex(h.checksum, 4));
	if (h.cmd == PROTO_CMD_UNKNOWN) {
		json_object_set_new(o, "known", json_false());
		json_object_set_new(o, "payload_hex", json_hex(payload, h.length));
	} else {
		err = proto_msg_decode(h.cmd, payload, h.length, m, &off);
		if (err) {
			json_decref(o);
			decode_error(cmd, h.command, err, base + PROTO_HEADER_SIZE + off);
			return NULL;
		}
		json_object_set_new(o, "payload", json_payload(m, net));
	}
	*used = PROTO_HEADER_SIZE + (size_t)h.length;
	return o;
}

int peertool_decode_msg(int argc, char **argv)
{
	struct decode_args a;
	size_t len;
	const char *cmd = argv[0];
	int rc;
	uint8_t *data = load_input(&CMD_MSG, argc, argv, &a, &len, &rc);
	if (!data)
		return rc;
	rc = 1;
	struct proto_msg m;
	proto_msg_init(&m);
	json_t *list = json_array();
	size_t off = 0;
	/* Several frames one after another, as on the wire; at least one. */
	do {
		size_t used = 0;
		json_t *o = frame_json(cmd, data + off, len - off, off, a.net, &m, &used);
		if (!o)
			goto out;
		json_array_append_new(list, o);
		off += used;
	} while (off < len);
	if (json_array_size(list) == 1)
		rc = print_json(cmd, json_incref(json_array_get(list, 0)));
	else
		rc = print_json(cmd, json_incref(list));
out:
	json_decref(list);
	proto_msg_release(&m);
	xfree(data);
	return rc;
}
