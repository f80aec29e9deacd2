/* tools/peertool_decode.c: decode-tx, decode-block and decode-msg. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "tools/peertool.h"

/** What decode-tx, decode-block and decode-msg accept. */
struct decode_args {
	const char *path;
	int hex;
	/* Network for addresses; NULL when not given (decode-msg then takes
	 * the frame's). */
	const struct proto_params *net;
};

/* Parse "[--hex] [--chain NAME] FILE|-"; 0, or 2 after a usage error. */
static int parse_args(int argc, char **argv, struct decode_args *a)
{
	const char *cmd = argv[0];
	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++) {
		const char *chain = NULL;
		if (!strcmp(argv[i], "--hex")) {
			a->hex = 1;
		} else if (!strcmp(argv[i], "--chain")) {
			if (i + 1 >= argc) {
				peertool_error(cmd, "--chain needs a value");
				return 2;
			}
			chain = argv[++i];
		} else if (!strncmp(argv[i], "--chain=", 8)) {
			chain = argv[i] + 8;
		} else if (argv[i][0] == '-' && argv[i][1] && !a->path) {
			peertool_error(cmd, "unknown option '%s'", argv[i]);
			return 2;
		} else if (!a->path) {
			a->path = argv[i];
		} else {
			peertool_error(cmd, "unexpected argument '%s'", argv[i]);
			return 2;
		}
		if (chain && !(a->net = proto_params_by_name(chain))) {
			peertool_error(cmd,
			               "unknown chain '%s' (main, test, testnet4, signet, regtest)",
			               chain);
			return 2;
		}
	}
	if (!a->path) {
		peertool_error(cmd, "usage: peertool %s [--hex] [--chain NAME] FILE|-", cmd);
		return 2;
	}
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

/* Parse the arguments and read the input: NULL with *rc set on failure. */
static uint8_t *load_input(int argc, char **argv, struct decode_args *a, size_t *len, int *rc)
{
	*rc = parse_args(argc, argv, a);
	if (*rc)
		return NULL;
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
	uint8_t *data = load_input(argc, argv, &a, &len, &rc);
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

int peertool_decode_block(int argc, char **argv)
{
	struct decode_args a;
	size_t len, off = 0;
	int rc;
	uint8_t *data = load_input(argc, argv, &a, &len, &rc);
	if (!data)
		return rc;
	struct proto_block b;
	proto_block_init(&b);
	int err = proto_block_decode(data, len, &b, &off);
	if (err)
		rc = decode_error(argv[0], "block", err, off);
	else
		rc = print_json(argv[0], json_block(&b, NULL, net_or_main(a.net), 2, NULL));
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

int peertool_decode_msg(int argc, char **argv)
{
	struct decode_args a;
	size_t len, off = 0;
	const char *cmd = argv[0];
	int rc;
	uint8_t *data = load_input(argc, argv, &a, &len, &rc);
	if (!data)
		return rc;
	rc = 1;
	struct proto_msg m;
	proto_msg_init(&m);
	struct proto_frame_header h;
	const struct proto_params *net = len >= 4 ? proto_params_by_magic(proto_le32(data)) : NULL;
	if (len < PROTO_HEADER_SIZE) {
		peertool_error(cmd, "truncated frame header: %zu of %u bytes", len,
		               PROTO_HEADER_SIZE);
		goto out;
	}
	if (!net) {
		peertool_error(cmd, "unknown network magic %02x%02x%02x%02x at byte 0", data[0],
		               data[1], data[2], data[3]);
		goto out;
	}
	/* The frame names its network; --chain only asserts which one. */
	if (a.net && a.net != net) {
		peertool_error(cmd, "network magic %02x%02x%02x%02x at byte 0 is %s's, not %s's",
		               data[0], data[1], data[2], data[3], net->name, a.net->name);
		goto out;
	}
	int err = proto_frame_header_parse(data, net->magic, &h);
	if (err) {
		size_t at = err == PROTO_ECOMMAND ? 4 : err == PROTO_EOVERSIZE ? 16 : 0;
		decode_error(cmd, "frame header", err, at);
		goto out;
	}
	if (len - PROTO_HEADER_SIZE < h.length) {
		peertool_error(cmd,
		               "truncated payload at byte %zu: header says %" PRIu32
		               " bytes, %zu present",
		               len, h.length, len - PROTO_HEADER_SIZE);
		goto out;
	}
	if (len - PROTO_HEADER_SIZE > h.length) {
		peertool_error(cmd, "trailing bytes at byte %zu after the %" PRIu32 "-byte payload",
		               PROTO_HEADER_SIZE + (size_t)h.length, h.length);
		goto out;
	}
	const uint8_t *payload = data + PROTO_HEADER_SIZE;
	if (proto_frame_verify(&h, payload)) {
		peertool_error(cmd, "bad checksum at byte 20: payload does not match the header");
		goto out;
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
		err = proto_msg_decode(h.cmd, payload, h.length, &m, &off);
		if (err) {
			json_decref(o);
			decode_error(cmd, h.command, err, PROTO_HEADER_SIZE + off);
			goto out;
		}
		json_object_set_new(o, "payload", json_payload(&m, net));
	}
	rc = print_json(cmd, o);
out:
	proto_msg_release(&m);
	xfree(data);
	return rc;
}
