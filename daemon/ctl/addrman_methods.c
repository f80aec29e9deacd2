/*
 * daemon/ctl/addrman_methods.c: the address manager's methods, as Core
 * 29's rpc/net.cpp: getnodeaddresses, getaddrmaninfo, and the hidden
 * addpeeraddress and getrawaddrman (Core keeps them out of its help
 * list; peerd's help lists them under Network, marked for testing).
 * Names, arguments, result keys and error codes are Core's. Loop thread.
 */
#include "daemon/ctl/internal.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

#include "addrman/addrman.h"
#include "base/alloc.h"

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

/* Core's ParseNetwork (case-insensitive; "tor" is onion): a network, or -1. */
static int parse_network(const char *in)
{
	char net[16];
	size_t n = strlen(in);
	if (n >= sizeof(net))
		return -1;
	for (size_t i = 0; i <= n; i++)
		net[i] = (char)tolower((unsigned char)in[i]);
	if (!strcmp(net, "ipv4"))
		return ADDRMAN_NET_IPV4;
	if (!strcmp(net, "ipv6"))
		return ADDRMAN_NET_IPV6;
	if (!strcmp(net, "onion") || !strcmp(net, "tor"))
		return ADDRMAN_NET_ONION;
	if (!strcmp(net, "i2p"))
		return ADDRMAN_NET_I2P;
	if (!strcmp(net, "cjdns"))
		return ADDRMAN_NET_CJDNS;
	return -1;
}

static void m_getnodeaddresses(struct daemon *d, json_t *args, struct ctl_result *res)
{
	int64_t count;
	if (!ctl_arg_int(arg(args, 0), INT32_MIN, INT32_MAX, 1, &count, res))
		return;
	if (count < 0) {
		fail(res, CTL_INVALID_PARAMETER, "Address count out of range");
		return;
	}
	int net = -1;
	json_t *jn = arg(args, 1);
	if (jn && (net = parse_network(json_string_value(jn))) < 0) {
		fail(res, CTL_INVALID_PARAMETER, "Network not recognized: %s",
		     json_string_value(jn));
		return;
	}
	struct addrman_address *v = NULL;
	long n = addr_get_addresses(d, (size_t)count, 0, net, &v);
	if (n < 0) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	json_t *a = json_array();
	for (long i = 0; a && i < n; i++) {
		char text[128];
		addrman_netaddr_str(&v[i].svc, text, sizeof(text));
		json_array_append_new(
		    a, json_pack("{s:I, s:I, s:s, s:i, s:s}", "time", (json_int_t)v[i].time,
		                 "services", (json_int_t)v[i].services, "address", text, "port",
		                 (int)v[i].svc.port, "network",
		                 addrman_net_name(addrman_netaddr_class(&v[i].svc))));
	}
	xfree(v);
	ok(res, a);
}

static void m_addpeeraddress(struct daemon *d, json_t *args, struct ctl_result *res)
{
	int64_t port;
	if (!ctl_arg_int(arg(args, 1), 0, UINT16_MAX, 0, &port, res))
		return;
	json_t *jt = arg(args, 2);
	bool tried = jt && json_is_true(jt);
	json_t *o = json_object();
	bool success = false;
	struct addrman_address a;
	memset(&a, 0, sizeof(a));
	/* Core's LookupHost without a name lookup: an IP, NAME.onion or NAME.b32.i2p;
	 * what Add refuses (unroutable, invalid) is "failed-adding-to-new". */
	if (addrman_service_parse(json_string_value(arg(args, 0)), (uint16_t)port, &a.svc)) {
		int64_t now = daemon_time(d);
		a.services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
		a.time = now;
		size_t added = 0;
		/* Its own source: as if the peer announced itself. */
		struct addrman_service source = a.svc;
		source.port = 0;
		if (addrman_add(d->addrman, &a, 1, &source, 0, now, &added)) {
			json_decref(o);
			fail(res, CTL_INTERNAL_ERROR, "out of memory");
			return;
		}
		if (added) {
			success = true;
			if (tried && !addrman_good(d->addrman, &a.svc, now)) {
				success = false;
				json_object_set_new(o, "error",
				                    json_string("failed-adding-to-tried"));
			}
		} else {
			json_object_set_new(o, "error", json_string("failed-adding-to-new"));
		}
	}
	/* Core's key order: success first. */
	json_t *r = json_pack("{s:b}", "success", success);
	if (r && o)
		json_object_update(r, o);
	json_decref(o);
	ok(res, r);
}

static json_t *counts(struct addrman *am, int net)
{
	return json_pack("{s:I, s:I, s:I}", "new", (json_int_t)addrman_size(am, net, 1), "tried",
	                 (json_int_t)addrman_size(am, net, 0), "total",
	                 (json_int_t)addrman_size(am, net, -1));
}

static void m_getaddrmaninfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	json_t *o = json_object();
	/* Core's order: every network but unroutable and internal, then the sum. */
	for (int net = 0; o && net < ADDRMAN_NET__COUNT; net++) {
		if (net == ADDRMAN_NET_UNROUTABLE || net == ADDRMAN_NET_INTERNAL)
			continue;
		json_object_set_new(o, addrman_net_name(net), counts(d->addrman, net));
	}
	if (o)
		json_object_set_new(o, "all_networks", counts(d->addrman, -1));
	ok(res, o);
}

static void raw_entry(void *ctx, const struct addrman_entry *e)
{
	json_t *table = ctx;
	char key[32], addr[128], src[128];
	snprintf(key, sizeof(key), "%d/%d", e->bucket, e->position);
	addrman_netaddr_str(&e->addr.svc, addr, sizeof(addr));
	addrman_netaddr_str(&e->source, src, sizeof(src));
	/* mapped_as and source_mapped_as only with an asmap, which peerd has not. */
	json_object_set_new(
	    table, key,
	    json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:s}", "address", addr, "port",
	              (int)e->addr.svc.port, "services", (json_int_t)e->addr.services, "time",
	              (json_int_t)e->addr.time, "network",
	              addrman_net_name(addrman_netaddr_class(&e->addr.svc)), "source", src,
	              "source_network", addrman_net_name(addrman_netaddr_class(&e->source))));
}

static void m_getrawaddrman(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	json_t *nw = json_object(), *tr = json_object();
	if (nw)
		addrman_entries(d->addrman, false, raw_entry, nw);
	if (tr)
		addrman_entries(d->addrman, true, raw_entry, tr);
	ok(res, json_pack("{s:o, s:o}", "new", nw, "tried", tr));
}

const struct ctl_method ctl_addrman_methods[] = {
    {"getnodeaddresses",
     m_getnodeaddresses,
     {{"count", CTL_ARG_NUM, CTL_OPTIONAL}, {"network", CTL_ARG_STR, CTL_OPTIONAL}},
     "getnodeaddresses ( count \"network\" )",
     "Return known addresses, after filtering for quality and recency.\n"
     "These can potentially be used to find new peers in the network.\n"
     "The total number of addresses known to the node may be higher.\n"
     "count: the most to return (default 1; 0 for all); network: only addresses of that "
     "network (ipv4, ipv6, onion, i2p, cjdns).",
     NULL,
     NULL},
    {"getaddrmaninfo",
     m_getaddrmaninfo,
     {{0}},
     "getaddrmaninfo",
     "Provides information about the node's address manager by returning the number of "
     "addresses in the `new` and `tried` tables and their sum for all networks.",
     NULL,
     NULL},
    {"addpeeraddress",
     m_addpeeraddress,
     {{"address", CTL_ARG_STR, CTL_REQUIRED},
      {"port", CTL_ARG_NUM, CTL_REQUIRED},
      {"tried", CTL_ARG_BOOL, CTL_OPTIONAL}},
     "addpeeraddress \"address\" port ( tried )",
     "Add the address of a potential peer to the address manager. This RPC is for testing "
     "only.\n"
     "tried: if true, attempt to add the peer to the tried addresses table (default false).",
     NULL,
     NULL},
    {"getrawaddrman",
     m_getrawaddrman,
     {{0}},
     "getrawaddrman",
     "EXPERIMENTAL warning: this call may be changed in future releases.\n"
     "Returns information on all address manager entries for the new and tried tables.",
     NULL,
     NULL},
};

const size_t ctl_n_addrman_methods = sizeof(ctl_addrman_methods) / sizeof(ctl_addrman_methods[0]);
