/*
 * daemon/ctl/methods.c: the control socket's dispatcher: the method
 * lookup over every area's table (control, network, chain, mining,
 * mempool, node), help, the call on the loop thread, "method not found",
 * the result helpers every method uses, and the control methods
 * themselves (help, uptime, stop).
 *
 * Names, parameters, results and application error codes follow Bitcoin
 * Core's RPCs where a method means the same thing. Parameters may be
 * positional (an array) or named (an object, with the names shown by
 * help). Runs on the loop thread.
 */
#include "daemon/ctl/internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define fail ctl_fail
#define ok   ctl_ok
#define arg  ctl_arg

void ctl_fail(struct ctl_result *res, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->err_msg, sizeof(res->err_msg), fmt, ap);
	va_end(ap);
	res->err_code = code;
	json_decref(res->result);
	res->result = NULL;
}

void ctl_ok(struct ctl_result *res, json_t *v)
{
	if (!v) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory building the result");
		return;
	}
	res->result = v;
}

json_t *ctl_arg(json_t *args, size_t i)
{
	json_t *v = json_array_get(args, i);
	return json_is_null(v) ? NULL : v;
}

/* ---- control ------------------------------------------------------------ */

static const struct ctl_method methods[];

static void m_help(struct daemon *d, json_t *args, struct ctl_result *res);

static void m_uptime(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, json_integer((json_int_t)(daemon_time(d) - d->start_time)));
}

/* Core's setmocktime: the node's mockable clock (base/clock.h) stands at
 * the given second until set again; 0 returns it to the system clock.
 * Loop-side timers that Core checks against that clock see the jump on
 * their next tick. */
static void m_setmocktime(struct daemon *d, json_t *args, struct ctl_result *res)
{
	if (d->params->net != PROTO_NET_REGTEST) {
		/* Core's runtime_error: -1, no full stop. */
		fail(res, CTL_MISC_ERROR,
		     "setmocktime is for regression testing (-regtest mode) only");
		return;
	}
	int64_t t;
	if (!ctl_arg_int(ctl_arg(args, 0), INT64_MIN, INT64_MAX, 0, &t, res))
		return;
	if (t < 0 || t > BASE_CLOCK_MAX_MOCK) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Mocktime must be in the range [0, %lld], not %lld.",
		     (long long)BASE_CLOCK_MAX_MOCK, (long long)t);
		return;
	}
	base_clock_set_mock(t);
	DLOG_DBG(&d->log, DLOG_CTL, "mock time set to %lld", (long long)t);
	ok(res, json_null());
}

static void m_stop(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)d;
	(void)args;
	res->stop = true;
	ok(res, json_string("peerd stopping"));
}

/* Core's getzmqnotifications: the active notifiers (daemon/notify/zmq.c). */
static void m_getzmqnotifications(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)args;
	ok(res, notify_zmq_list(d));
}

static const struct ctl_method methods[] = {
    {"help",
     m_help,
     {{"command", CTL_ARG_STR, CTL_OPTIONAL}},
     "help ( \"command\" )",
     "List the methods, or describe one.",
     NULL,
     NULL},
    {"uptime", m_uptime, {{0}}, "uptime", "Seconds since peerd started.", NULL, NULL},
    {"setmocktime",
     m_setmocktime,
     {{"timestamp", CTL_ARG_NUM, CTL_REQUIRED}},
     "setmocktime timestamp",
     "Set the local time to given timestamp (-regtest only). timestamp: UNIX epoch time; pass 0 "
     "to go back to using the system time.",
     NULL,
     NULL},
    {"stop",
     m_stop,
     {{0}},
     "stop",
     "Shut peerd down cleanly (after this reply is sent).",
     NULL,
     NULL},
    {"getzmqnotifications",
     m_getzmqnotifications,
     {{0}},
     "getzmqnotifications",
     "Returns information about the active ZeroMQ notifications.",
     NULL,
     NULL},
};

#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

const struct ctl_method *ctl_method_lookup(const char *name)
{
	for (size_t i = 0; i < N_METHODS; i++) {
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	}
	for (size_t i = 0; i < ctl_n_net_methods; i++) {
		if (strcmp(ctl_net_methods[i].name, name) == 0)
			return &ctl_net_methods[i];
	}
	for (size_t i = 0; i < ctl_n_chain_methods; i++) {
		if (strcmp(ctl_chain_methods[i].name, name) == 0)
			return &ctl_chain_methods[i];
	}
	for (size_t i = 0; i < ctl_n_mining_methods; i++) {
		if (strcmp(ctl_mining_methods[i].name, name) == 0)
			return &ctl_mining_methods[i];
	}
	for (size_t i = 0; i < ctl_n_mempool_methods; i++) {
		if (strcmp(ctl_mempool_methods[i].name, name) == 0)
			return &ctl_mempool_methods[i];
	}
	for (size_t i = 0; i < ctl_n_node_methods; i++) {
		if (strcmp(ctl_node_methods[i].name, name) == 0)
			return &ctl_node_methods[i];
	}
	for (size_t i = 0; i < ctl_n_addrman_methods; i++) {
		if (strcmp(ctl_addrman_methods[i].name, name) == 0)
			return &ctl_addrman_methods[i];
	}
	for (size_t i = 0; i < ctl_n_fees_methods; i++) {
		if (strcmp(ctl_fees_methods[i].name, name) == 0)
			return &ctl_fees_methods[i];
	}
	return NULL;
}

static void m_help(struct daemon *d, json_t *args, struct ctl_result *res)
{
	(void)d;
	/* Core reads a given command with get_str: a null one is -3 too. */
	json_t *cmd = arg(args, 0);
	if (json_array_size(args) && !ctl_json_want(json_array_get(args, 0), CTL_ARG_STR, res))
		return;
	char buf[8192];
	if (cmd) {
		const struct ctl_method *m = ctl_method_lookup(json_string_value(cmd));
		if (!m) {
			snprintf(buf, sizeof(buf), "help: unknown command: %s",
			         json_string_value(cmd));
		} else {
			ctl_help_text(m, buf, sizeof(buf));
		}
		ok(res, json_string(buf));
		return;
	}
	/* Every table's methods; help.c orders them by Core's categories. */
	size_t n_all = 0;
	const struct {
		const struct ctl_method *v;
		size_t n;
	} tables[] = {
	    {methods, N_METHODS},
	    {ctl_net_methods, ctl_n_net_methods},
	    {ctl_chain_methods, ctl_n_chain_methods},
	    {ctl_mining_methods, ctl_n_mining_methods},
	    {ctl_mempool_methods, ctl_n_mempool_methods},
	    {ctl_node_methods, ctl_n_node_methods},
	    {ctl_addrman_methods, ctl_n_addrman_methods},
	    {ctl_fees_methods, ctl_n_fees_methods},
	};
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		n_all += tables[t].n;
	const struct ctl_method **ms = xcalloc(n_all ? n_all : 1, sizeof(*ms));
	if (!ms) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	size_t k = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t].n; i++)
			ms[k++] = &tables[t].v[i];
	char *text = ctl_help_index(ms, n_all);
	xfree(ms);
	if (!text) {
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	ok(res, json_string(text));
	xfree(text);
}

void ctl_method_not_found(struct ctl_result *res, const char *name)
{
	/* Core's code, which scripts test for; the message says why. */
	if (ctl_core_only_method(name))
		fail(res, CTL_METHOD_NOT_FOUND,
		     "Method not found (%s is a Bitcoin Core method peerd does not support)", name);
	else
		fail(res, CTL_METHOD_NOT_FOUND, "Method not found: %s (try help)", name);
}

bool ctl_view_answers(const struct daemon *d, const struct ctl_method *m)
{
	return m->chain_fn && ctl_view_fn(m) && validation_settled(d);
}

void ctl_call(struct daemon *d, const char *method, json_t *params, struct ctl_result *res)
{
	const struct ctl_method *m = ctl_method_lookup(method);
	if (!m) {
		ctl_method_not_found(res, method);
		return;
	}
	json_t *args = ctl_args_check(m, params, res);
	if (!args)
		return;
	if (ctl_view_answers(d, m)) {
		d->ctl->view_answers++;
		ctl_view_fn(m)(d, args, res);
	} else if (m->fn)
		m->fn(d, args, res);
	else
		fail(res, CTL_MISC_ERROR,
		     "%s runs on the validation thread: call it on the control socket", m->name);
	json_decref(args);
}
