/*
 * daemon/ctl/node_methods.c: the operator methods Core has and peerd lacked
 * (issue 12): ping, setnetworkactive, getaddednodeinfo,
 * logging and getrpcinfo. Names, parameters, result fields and error codes
 * are Core 29's. Loop thread.
 */
#include "daemon/ctl/internal.h"

#include <string.h>

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

static void m_ping(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	for (uint32_t i = 0; i < d->n_peers; i++)
		handshake_ping_now(d->peers[i]);
	ok(res, json_null());
}

static void m_setnetworkactive(struct daemon *d, json_t *args, struct ctl_result *res)
{
	/* Required and a bool: ctl_args_check saw to it. */
	bool active = json_is_true(arg(args, 0));
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
	const char *want = jn ? json_string_value(jn) : NULL;
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < d->net->n_targets; i++) {
		const struct net_target *t = d->net->targets[i];
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

/*
 * Core's EnableOrDisableLogCategories: each name is Core's (or one of
 * peerd's own finer ones); "", "1" and "all" name every one; anything else
 * ("none" and "0" too, which only -debug= takes) is -8. Applied to copies:
 * an error leaves the categories as they were.
 */
static int logging_apply(json_t *list, bool on, uint32_t *mask, uint32_t *core,
                         struct ctl_result *res)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		if (!ctl_json_want(v, CTL_ARG_STR, res))
			return -1;
		const char *name = json_string_value(v);
		if (conf_debug_apply(name, on, mask, core)) {
			fail(res, CTL_INVALID_PARAMETER, "unknown logging category %s", name);
			return -1;
		}
	}
	return 0;
}

static void m_logging(struct daemon *d, json_t *args, struct ctl_result *res)
{
	json_t *inc = arg(args, 0), *exc = arg(args, 1);
	uint32_t mask = d->log.conf_bits, core = d->log.core;
	if ((inc && logging_apply(inc, true, &mask, &core, res)) ||
	    (exc && logging_apply(exc, false, &mask, &core, res)))
		return;
	if (mask != d->log.conf_bits || core != d->log.core) {
		dlog_set_debug(&d->log, mask, core);
		DLOG_INFO_(&d->log, DLOG_MAIN, "debug categories changed by the logging method");
	}
	/* Core's reply: every one of its categories, true or false, in its order. */
	json_t *o = json_object();
	for (int c = 0; o && c < CONF_CORE_CATS; c++)
		json_object_set_new(o, conf_debug_core_name(c), json_boolean(core >> c & 1u));
	ok(res, o);
}

static void m_getrpcinfo(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	uint64_t t0 = uv_hrtime();
	/* Loop methods run one at a time, so the one running here is this
	 * one; every chain call still on the validation thread is in flight. */
	json_t *active = ctl_active_commands(d, "getrpcinfo", t0);
	/* Core's logpath is its debug.log; peerd's file is -debuglogfile, and
	 * without one peerd logs to stderr only: "". */
	const char *logpath = d->conf->debuglogfile ? d->conf->debuglogfile : "";
	ok(res, json_pack("{s:o, s:s}", "active_commands", active, "logpath", logpath));
}

const struct ctl_method ctl_node_methods[] = {
    {"ping",
     m_ping,
     {{0}},
     "ping",
     "Request that a ping be sent to every connected peer; getpeerinfo's pingtime and "
     "pingwait show the results.",
     NULL,
     NULL},
    {"setnetworkactive",
     m_setnetworkactive,
     {{"state", CTL_ARG_BOOL, CTL_REQUIRED}},
     "setnetworkactive state",
     "Disable (false) or enable (true) all P2P network activity: peers are disconnected, "
     "inbound connections dropped, no outbound attempted.",
     NULL,
     NULL},
    {"getaddednodeinfo",
     m_getaddednodeinfo,
     {{"node", CTL_ARG_STR, CTL_OPTIONAL}},
     "getaddednodeinfo ( \"node\" )",
     "Information about the nodes added with addnode (not connect= or onetry).",
     NULL,
     NULL},
    {"logging",
     m_logging,
     {{"include", CTL_ARG_ARR, CTL_OPTIONAL}, {"exclude", CTL_ARG_ARR, CTL_OPTIONAL}},
     "logging ( [\"include_category\",...] [\"exclude_category\",...] )",
     "Turn debug categories on (include) or off (exclude) at runtime, by Bitcoin Core's names "
     "(net, addrman, rpc, mempool, validation, bench, ...; peerd's own finer names too); \"all\" "
     "or \"1\" names every one. Returns each of Core's categories' state.",
     NULL,
     NULL},
    {"getrpcinfo",
     m_getrpcinfo,
     {{0}},
     "getrpcinfo",
     "Details of the control server: the commands running now and the log file's path.",
     NULL,
     NULL},
};

const size_t ctl_n_node_methods = sizeof(ctl_node_methods) / sizeof(ctl_node_methods[0]);
