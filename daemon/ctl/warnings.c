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

/*
 * Core's UNKNOWN_NEW_RULES_ACTIVATED, "Unknown new rules activated
 * (versionbit %i)" (validation.cpp's UpdateTip): a bit no deployment this
 * node knows was locked in by the blocks and is now active, so the chain
 * may follow rules this node does not check. One sentence a bit, as the
 * table holds fixed texts.
 */
#define UNKNOWN_RULES(n) "Unknown new rules activated (versionbit " #n ")"
static const char *const unknown_rules_text[] = {
    UNKNOWN_RULES(0),  UNKNOWN_RULES(1),  UNKNOWN_RULES(2),  UNKNOWN_RULES(3),  UNKNOWN_RULES(4),
    UNKNOWN_RULES(5),  UNKNOWN_RULES(6),  UNKNOWN_RULES(7),  UNKNOWN_RULES(8),  UNKNOWN_RULES(9),
    UNKNOWN_RULES(10), UNKNOWN_RULES(11), UNKNOWN_RULES(12), UNKNOWN_RULES(13), UNKNOWN_RULES(14),
    UNKNOWN_RULES(15), UNKNOWN_RULES(16), UNKNOWN_RULES(17), UNKNOWN_RULES(18), UNKNOWN_RULES(19),
    UNKNOWN_RULES(20), UNKNOWN_RULES(21), UNKNOWN_RULES(22), UNKNOWN_RULES(23), UNKNOWN_RULES(24),
    UNKNOWN_RULES(25), UNKNOWN_RULES(26), UNKNOWN_RULES(27), UNKNOWN_RULES(28),
};
#define N_UNKNOWN_RULES (sizeof(unknown_rules_text) / sizeof(unknown_rules_text[0]))

static const char *unknown_rules(const struct daemon *d)
{
	int32_t bit = d->view ? d->view->unknown_rules_bit : -1;
	return bit >= 0 && (size_t)bit < N_UNKNOWN_RULES ? unknown_rules_text[bit] : NULL;
}

/*
 * Core's LARGE_WORK_INVALID_CHAIN (validation.cpp's
 * CheckForkWarningConditions): a block found invalid has more than six
 * blocks' work over our tip, so peers may follow rules this node does not
 * (or its chain state is damaged). Set and cleared at each new tip
 * (chain_fork_warning, left alone in IBD, as Core's). After a restart the
 * invalid block is known again (chain/activate.c reads it back from the
 * block index, as Core's LoadBlockIndex) but, as Core, not judged before
 * the next tip: a restarted node shows no warning until then.
 */
#define LARGE_WORK_INVALID_CHAIN                                                                   \
	"Warning: We do not appear to fully agree with our peers! You may need to upgrade, or "    \
	"other nodes may need to upgrade."

static bool large_work_invalid(const struct daemon *d)
{
	return d->view && d->view->large_work_invalid;
}

/* A row is shown while active(d), with text, or text_of(d) when that is set. */
static const struct daemon_warning {
	bool (*active)(const struct daemon *d);
	const char *text;
	const char *(*text_of)(const struct daemon *d);
} warning_table[] = {
    /* Core's GetWarnings lists it before its other kernel warnings. */
    {NULL, NULL, unknown_rules},
    /* Then this one: Core's kernel::Warning order. */
    {large_work_invalid, LARGE_WORK_INVALID_CHAIN, NULL},
    {no_outbound_configured,
     "No outbound peers: peerd does not discover peers (dnsseed=0 and fixedseeds=0), so it "
     "connects only to nodes named by connect= or addnode= (or the addnode method), and none "
     "are set; it stays at 0 peers unless another node connects to it",
     NULL},
};

size_t daemon_warnings(const struct daemon *d, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(warning_table) / sizeof(warning_table[0]); i++) {
		const struct daemon_warning *w = &warning_table[i];
		if (w->active && !w->active(d))
			continue;
		const char *text = w->text_of ? w->text_of(d) : w->text;
		if (!text)
			continue;
		if (n < max)
			out[n] = text;
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

void daemon_warnings_new_tip(struct daemon *d, const struct chainview_update *u)
{
	if (!d->view)
		return;
	/* Core's warningSet / warningUnset: AlertNotify only when it was not set. */
	if (u->fork_warning >= 0 && (u->fork_warning > 0) != d->view->large_work_invalid) {
		d->view->large_work_invalid = u->fork_warning > 0;
		if (d->view->large_work_invalid) {
			DLOG_WARNING(&d->log, DLOG_MAIN, "%s", LARGE_WORK_INVALID_CHAIN);
			notify_alert(d, LARGE_WORK_INVALID_CHAIN);
		}
	}
	if (d->view->unknown_rules_bit >= 0 || u->unknown_rules_bit < 0)
		return;
	/* Core's Warnings::Set keeps the first message and AlertNotify runs
	 * only when it was new: once, for the lowest bit found first. */
	d->view->unknown_rules_bit = u->unknown_rules_bit;
	const char *text = unknown_rules(d);
	if (!text)
		return;
	DLOG_WARNING(&d->log, DLOG_MAIN, "Warning: %s", text);
	notify_alert(d, text);
}
