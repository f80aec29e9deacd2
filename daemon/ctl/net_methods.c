/*
 * daemon/ctl/net_methods.c: the control socket's network methods
 * (the table ctl_net_methods; the dispatcher is methods.c).
 *
 * Names, parameters, results and application error codes follow Bitcoin
 * Core's RPCs where a method means the same thing (getpeerinfo,
 * getnetworkinfo, addnode, disconnectnode, setban, ...); getstats is
 * peerd's own. Parameters may be positional (an array) or named (an
 * object, with the names shown by help). Runs on the loop thread.
 */
#include "daemon/ctl/internal.h"

#include "addrman/addrman.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json/json.h"

/** Default setban duration (Core DEFAULT_MISBEHAVING_BANTIME). */
#define CTL_DEFAULT_BANTIME_S (24 * 3600)

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

static const char *service_name(unsigned bit)
{
	switch (1ull << bit) {
	case PROTO_NODE_NETWORK:
		return "NETWORK";
	case PROTO_NODE_BLOOM:
		return "BLOOM";
	case PROTO_NODE_WITNESS:
		return "WITNESS";
	case PROTO_NODE_COMPACT_FILTERS:
		return "COMPACT_FILTERS";
	case PROTO_NODE_NETWORK_LIMITED:
		return "NETWORK_LIMITED";
	case PROTO_NODE_P2P_V2:
		return "P2P_V2";
	default:
		return NULL;
	}
}

static json_t *services_names(uint64_t s)
{
	json_t *a = json_array();
	for (unsigned b = 0; a && b < 64; b++) {
		if (!(s >> b & 1))
			continue;
		const char *n = service_name(b);
		char buf[32];
		if (!n) {
			snprintf(buf, sizeof(buf), "UNKNOWN[2^%u]", b);
			n = buf;
		}
		json_array_append_new(a, json_string(n));
	}
	return a;
}

static void services_hex(uint64_t s, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)s);
}

/* ---- network ------------------------------------------------------------ */

static void m_getconnectioncount(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, json_integer(d->n_inbound + d->n_outbound));
}

/* Core's GetNetworksInfo: each network but unroutable and internal. */
static json_t *networks_json(const struct daemon *d)
{
	json_t *a = json_array();
	for (int n = ADDRMAN_NET_IPV4; a && n <= ADDRMAN_NET_CJDNS; n++) {
		const struct net_proxy *px = net_proxy_for(d, n);
		char proxy[NET_ADDRSTRLEN] = "";
		if (px)
			net_addr_format(&px->addr, proxy);
		json_array_append_new(a, json_pack("{s:s, s:b, s:b, s:s, s:b}", "name",
		                                   addrman_net_name((enum addrman_net)n), "limited",
		                                   !net_is_reachable(d, n), "reachable",
		                                   net_is_reachable(d, n), "proxy", proxy,
		                                   "proxy_randomize_credentials",
		                                   px ? px->randomize : false));
	}
	return a;
}

/* Core's mapLocalHost, in its order. */
static json_t *localaddresses_json(const struct daemon *d)
{
	const struct net_reach *r = &d->net->reach;
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < r->n_local; i++) {
		char ip[128];
		addrman_netaddr_str(&r->local[i].addr, ip, sizeof(ip));
		json_array_append_new(a, json_pack("{s:s, s:i, s:i}", "address", ip, "port",
		                                   (int)r->local[i].addr.port, "score",
		                                   r->local[i].score));
	}
	return a;
}

static void m_getnetworkinfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	char hex[17];
	services_hex(daemon_local_services(d), hex);
	/* Core's fields in Core's order; maxconnections and chain are peerd's. */
	ok(res,
	   json_pack("{s:i, s:s, s:i, s:s, s:o, s:b, s:i, s:b, s:i, s:i, s:i, s:o, s:o, s:o, s:o, "
	             "s:i, s:s, s:o}",
	             "version", DAEMON_VERSION_NUMBER, "subversion", DAEMON_USER_AGENT,
	             "protocolversion", PROTO_VERSION, "localservices", hex, "localservicesnames",
	             services_names(daemon_local_services(d)), "localrelay", !d->conf->blocksonly,
	             "timeoffset", 0, "networkactive", !d->network_inactive, "connections",
	             (int)(d->n_inbound + d->n_outbound), "connections_in", (int)d->n_inbound,
	             "connections_out", (int)d->n_outbound, "networks", networks_json(d),
	             "relayfee", json_amount(d->conf->minrelaytxfee), "incrementalfee",
	             json_amount(d->conf->incrementalrelayfee), "localaddresses",
	             localaddresses_json(d), "maxconnections", (int)d->net->maxconnections, "chain",
	             d->params->name, "warnings", daemon_warnings_json(d)));
}

/* Core's GetNetworkName(GetNetClass()): private, loopback, documentation
 * and other unroutable addresses are "not_publicly_routable" (under
 * -test=addrmanloopback 127.0.0.0/8 counts as IPv4, as in the addrman). */
static const char *network_name(const union net_addr *a)
{
	struct addrman_service s;
	net_addr_to_service(a, &s);
	return addrman_net_name(addrman_netaddr_class(&s));
}

static json_t *per_msg(const uint64_t *bytes)
{
	json_t *o = json_object();
	for (int i = 0; o && i < PROTO_CMD__COUNT; i++) {
		if (!bytes[i])
			continue;
		const char *name =
		    i == PROTO_CMD_UNKNOWN ? "*other*" : proto_cmd_name((enum proto_cmd)i);
		json_object_set_new(o, name, json_integer((json_int_t)bytes[i]));
	}
	return o;
}

/* A key and a new value into o (jansson keeps keys in insertion order). */
static void put(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

/*
 * Core 29's object, in Core's order (rpc/net.cpp getpeerinfo; bitcoin-cli
 * prints it so). From its node state (GetNodeStateStats): presynced_headers
 * the height the peer's low-work headers presync reached (-1: none;
 * sync/presync.c), synced_blocks the last block both have
 * (pindexLastCommonBlock; ours: connected), inflight the heights asked of
 * it and not yet received, last_block / last_transaction when it last gave
 * us a new block / an accepted transaction (0: never), permissions its
 * whitelist flags (peerd has no whitelist: none). addrlocal and mapped_as,
 * which Core leaves out when it has none, peerd never has.
 */
static json_t *peer_json(const struct peer *p)
{
	char addr[CONF_MAX_HOST + 8], bind[NET_ADDRSTRLEN], hex[17];
	net_addr_format(&p->addr, addr);
	/* Reached by name through a proxy: the name (Core's m_addr_name). */
	if (!p->addr.sa.sa_family && p->target)
		snprintf(addr, sizeof(addr), "%s", p->target->name);
	net_addr_format(&p->local, bind);
	services_hex(p->services, hex);
	char sid[65];
	net_v2_session_id_hex(p, sid);
	const struct sync_state *s = p->d->sync;
	json_t *heights = json_array();
	for (uint32_t i = 0; heights && i < s->n_win; i++) {
		if (s->win[i].peer == p->id + 1 && !s->win[i].received)
			json_array_append_new(heights, json_integer(s->win[i].height));
	}
	/* What it has (avail_height) that we have connected too. */
	int32_t common =
	    p->sync->avail_height < s->tip_height ? p->sync->avail_height : s->tip_height;
	json_t *o = json_object();
	if (!o || !heights) {
		json_decref(o);
		json_decref(heights);
		return NULL;
	}
	put(o, "id", json_integer((json_int_t)p->id));
	put(o, "addr", json_string(addr));
	put(o, "addrbind", json_string(bind));
	put(o, "network",
	    json_string(p->proxied ? addrman_net_name((enum addrman_net)net_peer_network(p))
	                           : network_name(&p->addr)));
	put(o, "services", json_string(hex));
	put(o, "servicesnames", services_names(p->services));
	put(o, "relaytxes", json_boolean(p->relaytxes));
	put(o, "lastsend", json_integer((json_int_t)p->lastsend));
	put(o, "lastrecv", json_integer((json_int_t)p->lastrecv));
	put(o, "last_transaction", json_integer(p->last_tx_time));
	put(o, "last_block", json_integer(p->last_block_time));
	put(o, "bytessent", json_integer((json_int_t)p->bytes_sent));
	put(o, "bytesrecv", json_integer((json_int_t)p->bytes_recv));
	put(o, "conntime", json_integer((json_int_t)p->conntime));
	put(o, "timeoffset", json_integer(0));
	/* Seconds as Core prints them (16 significant digits: 0.000452, not
	 * jansson's 0.00045199999999999998), the fee filter as an amount
	 * (BTC/kvB with eight decimals). */
	if (p->ping_us >= 0)
		put(o, "pingtime", json_double((double)p->ping_us / 1e6));
	if (p->minping_us >= 0)
		put(o, "minping", json_double((double)p->minping_us / 1e6));
	if (p->ping_nonce) {
		uint64_t now_us = uv_hrtime() / 1000u;
		put(o, "pingwait", json_double((double)(now_us - p->ping_start_us) / 1e6));
	}
	put(o, "version", json_integer(p->version));
	put(o, "subver", json_string(p->subver ? p->subver : ""));
	put(o, "inbound", json_boolean(p->inbound));
	put(o, "bip152_hb_to", json_boolean(sync_cmpct_hb_to(p)));
	put(o, "bip152_hb_from", json_boolean(sync_cmpct_hb_from(p)));
	put(o, "startingheight", json_integer(p->start_height));
	put(o, "presynced_headers", json_integer(p->sync->presync_height));
	put(o, "synced_headers", json_integer(p->sync->best_height));
	put(o, "synced_blocks", json_integer(common < 0 ? -1 : common));
	put(o, "inflight", heights);
	/* Address relay (p2p/addr.c): Core's m_addr_relay_enabled and counters. */
	put(o, "addr_relay_enabled", json_boolean(addr_relay_enabled(p)));
	put(o, "addr_processed", json_integer((json_int_t)p->p2p->addr.processed));
	put(o, "addr_rate_limited", json_integer((json_int_t)p->p2p->addr.rate_limited));
	put(o, "permissions", json_array());
	put(o, "minfeefilter", json_amount((int64_t)p->feefilter));
	put(o, "bytessent_per_msg", per_msg(p->msgbytes->sent));
	put(o, "bytesrecv_per_msg", per_msg(p->msgbytes->recv));
	put(o, "connection_type", json_string(peer_conn_type_name(p->conn_type)));
	put(o, "transport_protocol_type", json_string(net_v2_transport_name(p)));
	put(o, "session_id", json_string(sid));
	/* peerd's own: the state behind flow control and inventory. */
	json_object_set_new(o, "handshake_complete", json_boolean(p->state == PEER_ACTIVE));
	json_object_set_new(o, "sendq_bytes", json_integer((json_int_t)p->sendq_bytes));
	json_object_set_new(o, "send_paused", json_boolean(p->send_paused));
	json_object_set_new(o, "recv_paused", json_boolean(p->recv_paused));
	json_object_set_new(o, "wtxidrelay", json_boolean(p->wtxidrelay));
	json_object_set_new(o, "addrv2", json_boolean(p->sendaddrv2));
	json_object_set_new(
	    o, "known_inventory",
	    json_integer(p->p2p->known_inv ? (json_int_t)hset_count(p->p2p->known_inv) : 0));
	json_object_set_new(o, "tx_inflight", json_integer(p->txreq->tx_inflight));
	json_object_set_new(o, "decode_errors", json_integer(p->decode_errors));
	return o;
}

static void m_getpeerinfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->state == PEER_CONNECTING || p->state == PEER_CLOSING)
			continue;
		json_t *o = peer_json(p);
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			a = NULL;
		}
	}
	ok(res, a);
}

static void m_getnettotals(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	json_int_t ms = (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	ok(res, json_pack("{s:I, s:I, s:I}", "totalbytesrecv", (json_int_t)d->stats.bytes_recv,
	                  "totalbytessent", (json_int_t)d->stats.bytes_sent, "timemillis", ms));
}

static void m_getstats(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, stats_json(d));
}

/* The loop's statistics with the validation thread's part merged in. */
static void m_getstats_finish(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	if (res->err_code)
		return;
	json_t *s = stats_json(d);
	if (!s) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory building the result");
		return;
	}
	json_object_update(s, res->result);
	json_decref(res->result);
	res->result = s;
}

static void m_addnode(struct daemon *d, json_t *args, struct ctl_result *res)
{
	/* Core's order: the command (else its help text), v2transport, the node. */
	const char *n = json_string_value(arg(args, 0)), *c = json_string_value(arg(args, 1));
	if (strcmp(c, "add") != 0 && strcmp(c, "remove") != 0 && strcmp(c, "onetry") != 0) {
		ctl_fail_usage(res, "addnode");
		return;
	}
	/* Core: the argument, else the node's -v2transport. */
	bool v2 = json_is_boolean(arg(args, 2)) ? json_is_true(arg(args, 2)) : d->conf->v2transport;
	if (v2 && !d->conf->v2transport) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Error: v2transport requested but not enabled (see -v2transport)");
		return;
	}
	int err;
	if (strcmp(c, "add") == 0 || strcmp(c, "onetry") == 0) {
		err = net_target_add(d, n, c[0] == 'o', v2);
		if (err == -EEXIST) {
			fail(res, CTL_NODE_ALREADY_ADDED, "Error: Node already added");
			return;
		}
		if (err == -EINVAL) {
			/* Core takes any text and fails to connect later; peerd
			 * says now that it can never connect to it. */
			fail(res, CTL_INVALID_PARAMETER, "Error: cannot parse node address '%s'",
			     n);
			return;
		}
		if (err == -ENOSPC) {
			fail(res, CTL_MISC_ERROR, "Error: %u outbound destinations is the limit",
			     NET_MAX_TARGETS);
			return;
		}
		if (err) {
			fail(res, CTL_INTERNAL_ERROR, "Error: %s", strerror(-err));
			return;
		}
	} else if (net_target_remove(d, n)) {
		fail(res, CTL_NODE_NOT_ADDED,
		     "Error: Node could not be removed. It has not been added previously.");
		return;
	}
	ok(res, json_null());
}

/* Core's hidden addconnection (regtest only): an automatic connection of
 * the type asked for, counted against that type's slots and the automatic
 * ones (net/outbound.c). */
static void m_addconnection(struct daemon *d, json_t *args, struct ctl_result *res)
{
	if (d->params->net != PROTO_NET_REGTEST) {
		fail(res, CTL_MISC_ERROR,
		     "addconnection is for regression testing (-regtest mode) only.");
		return;
	}
	const char *address = json_string_value(arg(args, 0));
	const char *in = json_string_value(arg(args, 1));
	/* Core trims the type (TrimString: spaces, tabs, newlines...). */
	while (*in && strchr(" \f\n\r\t\v", *in))
		in++;
	size_t len = strlen(in);
	while (len && strchr(" \f\n\r\t\v", in[len - 1]))
		len--;
	static const enum peer_conn_type types[] = {PEER_CONN_OUTBOUND_FULL, PEER_CONN_BLOCK_RELAY,
	                                            PEER_CONN_ADDR_FETCH, PEER_CONN_FEELER};
	const char *name = NULL;
	enum peer_conn_type t = PEER_CONN_INBOUND;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const char *n = peer_conn_type_name(types[i]);
		if (strlen(n) == len && strncmp(n, in, len) == 0) {
			t = types[i];
			name = n;
		}
	}
	if (!name) {
		char text[sizeof(res->err_msg)];
		ctl_help_text(ctl_method_lookup("addconnection"), text, sizeof(text));
		fail(res, CTL_INVALID_PARAMETER, "%s", text);
		return;
	}
	bool v2 = json_is_true(arg(args, 2));
	if (v2 && !d->conf->v2transport) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Error: Adding v2transport connections requires -v2transport init flag to be "
		     "set.");
		return;
	}
	int err = net_add_connection(d, address, t, v2);
	if (err == -EBUSY || err == -ENOSPC) {
		fail(res, CTL_NODE_CAPACITY,
		     "Error: Already at capacity for specified connection type.");
		return;
	}
	if (err == -EINVAL) {
		/* Core takes any text and fails to connect later; peerd says now. */
		fail(res, CTL_INVALID_PARAMETER, "Error: cannot parse node address '%s'", address);
		return;
	}
	if (err) {
		fail(res, CTL_INTERNAL_ERROR, "Error: %s", strerror(-err));
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "address", json_string(address));
	json_object_set_new(o, "connection_type", json_string(name));
	ok(res, o);
}

static void m_disconnectnode(struct daemon *d, json_t *args, struct ctl_result *res)
{
	/* Core's cases: an address alone; a nodeid with no (or an empty)
	 * address; anything else is -32602. */
	json_t *address = arg(args, 0), *nodeid = arg(args, 1);
	struct peer *found = NULL;
	if (nodeid && (!address || json_string_length(address) == 0)) {
		int64_t id;
		if (!ctl_arg_int(nodeid, INT64_MIN, INT64_MAX, 0, &id, res))
			return;
		found = id >= 0 ? peer_by_id(d, (uint64_t)id) : NULL;
	} else if (!address || nodeid) {
		fail(res, CTL_INVALID_PARAMS, "Only one of address and nodeid should be provided.");
		return;
	} else {
		const char *want = json_string_value(address);
		for (uint32_t i = 0; i < d->n_peers && !found; i++) {
			char a[NET_ADDRSTRLEN];
			net_addr_format(&d->peers[i]->addr, a);
			if (strcmp(a, want) == 0 ||
			    (d->peers[i]->target && strcmp(d->peers[i]->target->name, want) == 0))
				found = d->peers[i];
		}
	}
	if (!found || found->state == PEER_CLOSING || found->state == PEER_CONNECTING) {
		fail(res, CTL_NODE_NOT_CONNECTED, "Node not found in connected nodes");
		return;
	}
	peer_disconnect(found, "disconnectnode");
	ok(res, json_null());
}

/*
 * setban and clearbanned answer once banlist.json holds the change, as
 * Core's BanMan::Ban, Unban and ClearBanned write the list (DumpBanlist)
 * before the RPC returns. The file is written by net/'s writer thread;
 * the reply is parked meanwhile (ctl_later_fn), the loop goes on.
 */
struct ban_reply {
	struct ban_wait bw; /* first: done gets it back */
	struct ctl_later *later;
};

static void ban_reply_written(struct daemon *d, struct ban_wait *bw)
{
	struct ban_reply *r = (struct ban_reply *)bw;
	ctl_later_done(d, r->later);
	xfree(r);
}

static void ban_reply_later(struct daemon *d, struct ctl_later *later)
{
	struct ban_reply *r = xcalloc(1, sizeof(*r));
	if (!r) {
		ctl_later_done(d, later); /* no memory to wait: answered now */
		return;
	}
	r->later = later;
	r->bw.done = ban_reply_written;
	ban_wait_written(d, &r->bw);
}

static void m_setban(struct daemon *d, json_t *args, struct ctl_result *res)
{
	/* Types and count: ctl_args_check. Core's order: the command (else
	 * its help text), the subnet, then for add the times. */
	json_t *subnet = arg(args, 0), *absolute = arg(args, 3);
	const char *c = json_string_value(arg(args, 1));
	bool add = strcmp(c, "add") == 0;
	if (!add && strcmp(c, "remove") != 0) {
		ctl_fail_usage(res, "setban");
		return;
	}
	uint8_t net[16], prefix;
	if (ban_parse_subnet(json_string_value(subnet), net, &prefix)) {
		fail(res, CTL_INVALID_IP_OR_SUBNET, "Error: Invalid IP/Subnet");
		return;
	}
	if (!add) {
		if (ban_remove(d, net, prefix)) {
			fail(res, CTL_INVALID_IP_OR_SUBNET,
			     "Error: Unban failed. Requested address/subnet was not previously "
			     "manually banned.");
			return;
		}
		ok(res, json_null());
		res->later = ban_reply_later;
		return;
	}
	int64_t now = daemon_time(d);
	int64_t t, until;
	if (!ctl_arg_int(arg(args, 2), INT64_MIN, INT64_MAX, 0, &t, res))
		return;
	if (absolute && json_is_true(absolute)) {
		until = t;
		if (until <= now) {
			fail(res, CTL_INVALID_PARAMETER,
			     "Error: Absolute timestamp is in the past");
			return;
		}
	} else {
		/* Core's BanMan::Ban: 0 or less is the default. Saturate: a
		 * relative bantime near INT64_MAX is "forever", not a wrapped
		 * (already expired) timestamp. */
		int64_t rel = t > 0 ? t : CTL_DEFAULT_BANTIME_S;
		until = rel > INT64_MAX - now ? INT64_MAX : now + rel;
	}
	int err = ban_add(d, net, prefix, until);
	if (err == -EEXIST) {
		fail(res, CTL_NODE_ALREADY_ADDED, "Error: IP/Subnet already banned");
		return;
	}
	if (err) {
		fail(res, CTL_MISC_ERROR, "Error: cannot ban: %s", strerror(-err));
		return;
	}
	ok(res, json_null());
	res->later = ban_reply_later;
}

static void m_listbanned(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	int64_t now = daemon_time(d);
	ban_sweep(d, now);
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < d->ban->n; i++) {
		const struct ban_entry *b = &d->ban->v[i];
		char sub[INET6_ADDRSTRLEN + 8];
		ban_format_subnet(b->net, b->prefix, sub, sizeof(sub));
		json_array_append_new(
		    a, json_pack("{s:s, s:I, s:I, s:I, s:I}", "address", sub, "ban_created",
		                 (json_int_t)b->created, "banned_until", (json_int_t)b->until,
		                 "ban_duration", (json_int_t)(b->until - b->created),
		                 "time_remaining", (json_int_t)(b->until - now)));
	}
	ok(res, a);
}

static void m_clearbanned(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ban_clear(d);
	ok(res, json_null());
	res->later = ban_reply_later;
}

const struct ctl_method ctl_net_methods[] = {
    {"getnetworkinfo",
     m_getnetworkinfo,
     {{0}},
     "getnetworkinfo",
     "Version, subversion, protocol version, local services and connection counts.",
     NULL,
     NULL},
    {"getconnectioncount",
     m_getconnectioncount,
     {{0}},
     "getconnectioncount",
     "Number of connected peers, inbound and outbound (connections in progress not counted).",
     NULL,
     NULL},
    {"getpeerinfo",
     m_getpeerinfo,
     {{0}},
     "getpeerinfo",
     "One object per connected peer, with Core's fields plus peerd's flow-control and inventory "
     "state.",
     NULL,
     NULL},
    {"getnettotals",
     m_getnettotals,
     {{0}},
     "getnettotals",
     "Bytes received and sent since start.",
     NULL,
     NULL},
    {"getstats",
     m_getstats,
     {{0}},
     "getstats",
     "Per-message counts and bytes, decode errors by code, free lists, connection, inventory "
     "and process statistics; from the validation thread: the chain's counters (blocks "
     "connected, reorgs, flushes, time connecting), the coins cache and the check queue "
     "(jobs, rounds, busy and idle time per thread).",
     ctl_chain_getstats,
     m_getstats_finish},
    {"addnode",
     m_addnode,
     {{"node", CTL_ARG_STR, CTL_REQUIRED},
      {"command", CTL_ARG_STR, CTL_REQUIRED},
      {"v2transport", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "addnode \"node\" \"command\" ( v2transport )",
     "Add or remove an outbound destination (reconnected with backoff), or try one connection. "
     "v2transport: try BIP324 v2 first (default: -v2transport's setting).",
     NULL,
     NULL},
    {"addconnection",
     m_addconnection,
     {{"address", CTL_ARG_STR, CTL_REQUIRED},
      {"connection_type", CTL_ARG_STR, CTL_REQUIRED},
      {"v2transport", CTL_ARG_BOOL, CTL_REQUIRED}},
     "addconnection \"address\" \"connection_type\" v2transport",
     "Open an outbound connection to a specified node. This RPC is for testing only (regtest): "
     "connection_type is outbound-full-relay, block-relay-only, addr-fetch or feeler; "
     "v2transport: BIP324 v2 first (needs -v2transport).",
     NULL,
     NULL},
    {"disconnectnode",
     m_disconnectnode,
     {{"address", CTL_ARG_STR, CTL_OPTIONAL}, {"nodeid", CTL_ARG_NUM, CTL_OPTIONAL}},
     "disconnectnode ( \"address\" nodeid )",
     "Disconnect a peer by address (\"ip:port\") or, with an empty address, by id.",
     NULL,
     NULL},
    {"setban",
     m_setban,
     {{"subnet", CTL_ARG_STR, CTL_REQUIRED},
      {"command", CTL_ARG_STR, CTL_REQUIRED},
      {"bantime", CTL_ARG_NUM, CTL_OPTIONAL},
      {"absolute", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "setban \"subnet\" \"command\" ( bantime absolute )",
     "Ban or unban an IP or subnet (default 86400 s; absolute: bantime is a unix time). Saved in "
     "banlist.json.",
     NULL,
     NULL},
    {"listbanned", m_listbanned, {{0}}, "listbanned", "The banned subnets.", NULL, NULL},
    {"clearbanned",
     m_clearbanned,
     {{0}},
     "clearbanned",
     "Remove every ban and discouragement.",
     NULL,
     NULL},
};

const size_t ctl_n_net_methods = sizeof(ctl_net_methods) / sizeof(ctl_net_methods[0]);
