/*
 * daemon/ctl/warnings.c: the node's `warnings`, as Core 29 shows them in
 * getnetworkinfo and getblockchaininfo (an array of strings; Core's
 * node::GetWarnings), in peerctl -getinfo, and once in the log at start.
 *
 * One table: each row is a condition read from the daemon's state now and
 * the sentence the operator sees while it holds. To warn about something
 * new (low disk space, say), add a row; every place that shows warnings
 * picks it up. Loop thread: a row may read anything in struct daemon.
 */
#include "daemon/ctl/ctl.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/*
 * A public network's node finds peers through its seeds (daemon/net/
 * seeds.c: the DNS seeds, the fixed seeds, doc/peers.md). With both off
 * and without connect= or addnode= (or the addnode method) it never finds
 * one by itself: it waits for inbound connections that may never come.
 * regtest needs no discovery (Core does none there either); connect=0 /
 * -noconnect says "no outbound" on purpose.
 */
static bool no_outbound_configured(const struct daemon *d)
{
	return d->params->net != PROTO_NET_REGTEST && !d->conf->connect_set && !d->conf->dnsseed &&
	       !d->conf->fixedseeds && d->net->n_targets == 0;
}

static const struct daemon_warning {
	bool (*active)(const struct daemon *d);
	const char *text;
} warning_table[] = {
    {no_outbound_configured,
     "No outbound peers: peerd does not discover peers (dnsseed=0 and fixedseeds=0), so it "
     "connects only to nodes named by connect= or addnode= (or the addnode method), and none "
     "are set; it stays at 0 peers unless another node connects to it"},
};

size_t daemon_warnings(const struct daemon *d, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(warning_table) / sizeof(warning_table[0]); i++) {
		if (!warning_table[i].active(d))
			continue;
		if (n < max)
			out[n] = warning_table[i].text;
		n++;
	}
	return n;
}

struct json_t *daemon_warnings_json(const struct daemon *d)
{
	const char *w[DAEMON_MAX_WARNINGS];
	size_t n = daemon_warnings(d, w, DAEMON_MAX_WARNINGS);
	json_t *a = json_array();
	for (size_t i = 0; a && i < n && i < DAEMON_MAX_WARNINGS; i++) {
		if (json_array_append_new(a, json_string(w[i]))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void daemon_warnings_log(const struct daemon *d)
{
	const char *w[DAEMON_MAX_WARNINGS];
	size_t n = daemon_warnings(d, w, DAEMON_MAX_WARNINGS);
	for (size_t i = 0; i < n && i < DAEMON_MAX_WARNINGS; i++)
		DLOG_WARNING(&d->log, DLOG_MAIN, "%s", w[i]);
}

void daemon_warnings_finish(struct daemon *d, struct json_t *args, struct ctl_result *res)
{
	(void)args;
	if (res->err_code || !json_is_object(res->result))
		return;
	json_t *w = daemon_warnings_json(d);
	if (!w || json_object_set_new(res->result, "warnings", w)) {
		json_decref(res->result);
		res->result = NULL;
		res->err_code = CTL_INTERNAL_ERROR;
		snprintf(res->err_msg, sizeof(res->err_msg), "out of memory building the result");
	}
}
