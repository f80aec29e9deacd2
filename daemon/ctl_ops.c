/*
 * daemon/ctl_ops.c: the operator methods Core has and peerd lacked
 * (issue 12): ping, setnetworkactive, getnodeaddresses, getaddednodeinfo,
 * logging and getrpcinfo. Names, parameters, result fields and error codes
 * are Core 29's. Loop thread.
 */
#include "daemon/ctl_internal.h"

#include <arpa/inet.h>
#include <sodium.h>
#include <string.h>

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

/* Core's RPCHelpMan type check: -3 with the JSON type names. */
static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	default:
		return "null";
	}
}

static bool want_type(const json_t *v, json_type t, const char *tname, struct ctl_result *res)
{
	if (json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v)) ||
	    (t == JSON_INTEGER && json_is_number(v)))
		return true;
	fail(res, CTL_TYPE_ERROR, "JSON value of type %s is not of expected type %s",
	     json_type_name(v), tname);
	return false;
}

static void m_ping(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	for (uint32_t i = 0; i < d->n_peers; i++)
		handshake_ping_now(d->peers[i]);
	ok(res, json_null());
}

static void m_setnetworkactive(struct daemon *d, json_t *args, struct ctl_result *res)
{
	json_t *state = arg(args, 0);
	if (!state) {
		fail(res, CTL_INVALID_PARAMS, "setnetworkactive state: state is required");
		return;
	}
	if (!want_type(state, JSON_TRUE, "bool", res))
		return;
	bool active = json_is_true(state);
	if (active == !d->network_inactive) {
		ok(res, json_boolean(active));
		return;
	}
	d->network_inactive = !active;
	DLOG_INFO_(&d->log, DLOG_NET, "SetNetworkActive: %s", active ? "true" : "false");
	if (!active) {
		/* As Core: every connection goes; listeners stay but drop what arrives. */
		for (uint32_t i = 0; i < d->n_peers; i++)
			peer_disconnect(d->peers[i], "network not active");
	} else {
		net_tick(d, daemon_now_ms(d));
	}
	ok(res, json_boolean(active));
}

static const char *bip155_name(uint8_t net)
{
	switch (net) {
	case PROTO_BIP155_IPV4:
		return "ipv4";
	case PROTO_BIP155_IPV6:
		return "ipv6";
	case PROTO_BIP155_TORV3:
		return "onion";
	case PROTO_BIP155_I2P:
		return "i2p";
	case PROTO_BIP155_CJDNS:
		return "cjdns";
	default:
		return NULL;
	}
}

/* Core's address text for the networks peerd can print (IPv4, IPv6, CJDNS). */
static bool entry_address(const struct proto_addr_entry *e, char *out, size_t n)
{
	if (e->net == PROTO_BIP155_IPV4 && e->addr_len == 4)
		return inet_ntop(AF_INET, e->addr, out, (socklen_t)n) != NULL;
	if ((e->net == PROTO_BIP155_IPV6 || e->net == PROTO_BIP155_CJDNS) && e->addr_len == 16)
		return inet_ntop(AF_INET6, e->addr, out, (socklen_t)n) != NULL;
	return false;
}

static void m_getnodeaddresses(struct daemon *d, json_t *args, struct ctl_result *res)
{
	json_t *jc = arg(args, 0), *jn = arg(args, 1);
	json_int_t count = 1;
	if (jc) {
		if (!want_type(jc, JSON_INTEGER, "number", res))
			return;
		count = json_is_integer(jc) ? json_integer_value(jc)
		                            : (json_int_t)json_number_value(jc);
	}
	if (count < 0) {
		fail(res, CTL_INVALID_PARAMETER, "Address count out of range");
		return;
	}
	const char *want = NULL;
	if (jn) {
		if (!want_type(jn, JSON_STRING, "string", res))
			return;
		want = json_string_value(jn);
		static const char *const known[] = {"ipv4", "ipv6", "onion", "i2p", "cjdns"};
		bool found = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			found |= strcmp(known[i], want) == 0;
		if (!found) {
			fail(res, CTL_INVALID_PARAMETER, "Network not recognized: %s", want);
			return;
		}
	}
	json_t *a = json_array();
	/* Core picks at random; a random starting slot keeps repeated calls varied. */
	uint32_t n = d->addr.n, start = n ? randombytes_uniform(n) : 0;
	for (uint32_t k = 0; a && k < n && (count == 0 || (json_int_t)json_array_size(a) < count);
	     k++) {
		const struct proto_addr_entry *e = &d->addr.v[(start + k) % n];
		const char *net = bip155_name(e->net);
		char text[INET6_ADDRSTRLEN];
		if (!net || (want && strcmp(net, want) != 0) ||
		    !entry_address(e, text, sizeof(text)))
			continue;
		json_array_append_new(a, json_pack("{s:I, s:I, s:s, s:i, s:s}", "time",
		                                   (json_int_t)e->time, "services",
		                                   (json_int_t)e->services, "address", text, "port",
		                                   (int)e->port, "network", net));
	}
	ok(res, a);
}

static json_t *added_json(const struct net_target *t)
{
	json_t *addrs = json_array();
	/* Core lists a connection once it is one: not while TCP connects. */
	bool up = t->peer && t->peer->state != PEER_CONNECTING && t->peer->state != PEER_CLOSING;
	if (up && addrs) {
		char text[NET_ADDRSTRLEN];
		net_addr_format(&t->peer->addr, text);
		json_array_append_new(
		    addrs, json_pack("{s:s, s:s}", "address", text, "connected", "outbound"));
	}
	return json_pack("{s:s, s:b, s:o}", "addednode", t->name, "connected", up, "addresses",
	                 addrs);
}

static void m_getaddednodeinfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	json_t *jn = arg(args, 0);
	if (jn && !want_type(jn, JSON_STRING, "string", res))
		return;
	const char *want = jn ? json_string_value(jn) : NULL;
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < d->n_targets; i++) {
		const struct net_target *t = d->targets[i];
		/* Core lists addnode= and "addnode add" only, never connect= or onetry. */
		if (t->onetry || t->from_connect || t->removed)
			continue;
		if (want && strcmp(want, t->name) != 0)
			continue;
		json_array_append_new(a, added_json(t));
	}
	if (want && a && json_array_size(a) == 0) {
		json_decref(a);
		fail(res, CTL_NODE_NOT_ADDED, "Error: Node has not been added.");
		return;
	}
	ok(res, a);
}

/* "all"/"1" and "none"/"0" name every category, as Core's. */
static int logging_apply(struct daemon *d, json_t *list, bool on, struct ctl_result *res)
{
	size_t i;
	json_t *v;
	uint32_t mask = d->log.debug;
	json_array_foreach(list, i, v)
	{
		if (!want_type(v, JSON_STRING, "string", res))
			return -1;
		const char *name = json_string_value(v);
		uint32_t bits;
		if (!strcmp(name, "all") || !strcmp(name, "1"))
			bits = (1u << DLOG_CAT__COUNT) - 1;
		else if (!strcmp(name, "none") || !strcmp(name, "0"))
			bits = 0;
		else if (dlog_cat_lookup(name) >= 0)
			bits = 1u << dlog_cat_lookup(name);
		else {
			fail(res, CTL_INVALID_PARAMETER, "unknown logging category %s", name);
			return -1;
		}
		mask = on ? mask | bits : mask & ~bits;
	}
	d->log.debug = mask;
	return 0;
}

static void m_logging(struct daemon *d, json_t *args, struct ctl_result *res)
{
	json_t *inc = arg(args, 0), *exc = arg(args, 1);
	if ((inc && !want_type(inc, JSON_ARRAY, "array", res)) ||
	    (exc && !want_type(exc, JSON_ARRAY, "array", res)))
		return;
	uint32_t before = d->log.debug;
	if ((inc && logging_apply(d, inc, true, res)) ||
	    (exc && logging_apply(d, exc, false, res))) {
		d->log.debug = before;
		return;
	}
	if (d->log.debug != before)
		DLOG_INFO_(&d->log, DLOG_MAIN, "debug categories changed by the logging method");
	json_t *o = json_object();
	uint32_t mask = d->log.debug;
	for (int c = 0; o && c < DLOG_CAT__COUNT; c++)
		json_object_set_new(o, dlog_cat_name((enum dlog_cat)c),
		                    json_boolean(mask >> c & 1u));
	ok(res, o);
}

static void m_getrpcinfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	uint64_t t0 = uv_hrtime();
	/* Loop methods run one at a time: the one running now is this one;
	 * chain jobs waiting on the validation thread are counted apart. */
	json_t *active = json_array();
	if (active)
		json_array_append_new(active,
		                      json_pack("{s:s, s:I}", "method", "getrpcinfo", "duration",
		                                (json_int_t)((uv_hrtime() - t0) / 1000u)));
	const char *logpath = d->conf->debuglogfile ? d->conf->debuglogfile : "";
	ok(res, json_pack("{s:o, s:s, s:i}", "active_commands", active, "logpath", logpath,
	                  "chain_jobs", (int)d->ctl.jobs));
}

const struct ctl_method ctl_ops_methods[] = {
    {"ping",
     m_ping,
     0,
     0,
     {0},
     "ping",
     "Request that a ping be sent to every connected peer; getpeerinfo's pingtime and "
     "pingwait show the results.",
     NULL,
     NULL},
    {"setnetworkactive",
     m_setnetworkactive,
     1,
     1,
     {"state", NULL, NULL, NULL},
     "setnetworkactive state",
     "Disable (false) or enable (true) all P2P network activity: peers are disconnected, "
     "inbound connections dropped, no outbound attempted.",
     NULL,
     NULL},
    {"getnodeaddresses",
     m_getnodeaddresses,
     0,
     2,
     {"count", "network", NULL, NULL},
     "getnodeaddresses ( count \"network\" )",
     "Addresses learned from peers (addr/addrv2), up to count (default 1, 0 = all), "
     "optionally of one network (ipv4, ipv6, onion, i2p, cjdns).",
     NULL,
     NULL},
    {"getaddednodeinfo",
     m_getaddednodeinfo,
     0,
     1,
     {"node", NULL, NULL, NULL},
     "getaddednodeinfo ( \"node\" )",
     "Information about the nodes added with addnode (not connect= or onetry).",
     NULL,
     NULL},
    {"logging",
     m_logging,
     0,
     2,
     {"include", "exclude", NULL, NULL},
     "logging ( [\"include_category\",...] [\"exclude_category\",...] )",
     "Turn debug categories on (include) or off (exclude) at runtime; all/1 and none/0 name "
     "every one. Returns each category's state.",
     NULL,
     NULL},
    {"getrpcinfo",
     m_getrpcinfo,
     0,
     0,
     {0},
     "getrpcinfo",
     "Details of the control server: the commands running now and the log file's path.",
     NULL,
     NULL},
};

const size_t ctl_n_ops_methods = sizeof(ctl_ops_methods) / sizeof(ctl_ops_methods[0]);
