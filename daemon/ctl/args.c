/*
 * daemon/ctl/args.c: a request's arguments, checked once before any
 * method runs, as Bitcoin Core's RPC server does (rpc/server.cpp
 * transformNamedArguments, rpc/util.cpp RPCHelpMan::HandleRequest):
 *
 *   1. named arguments become positional ones by the method's parameter
 *      names (an unknown name is -8, as Core's);
 *   2. a count outside [last required parameter, all parameters] is -1
 *      with the method's help text, as Core's;
 *   3. every argument is matched against its declared type: a null or
 *      absent optional one passes, a required one must be there and of
 *      its type; all mismatches are reported together as -3 "Wrong type
 *      passed" with Core's text.
 *
 * So a method reads its required arguments without checking them: they
 * are present, not null, and of their JSON type. What a method still
 * checks is what Core leaves to the method too (ranges, hex, amounts).
 * Any thread: nothing here touches the daemon.
 */
#include "daemon/ctl/internal.h"

#include <stdio.h>
#include <string.h>

int ctl_method_nparams(const struct ctl_method *m)
{
	int n = 0;
	while (n < CTL_MAX_PARAMS && m->params[n].name)
		n++;
	return n;
}

int ctl_method_nrequired(const struct ctl_method *m)
{
	int need = 0;
	for (int i = 0; i < ctl_method_nparams(m); i++) {
		if (m->params[i].required)
			need = i + 1;
	}
	return need;
}

/* Whether key is one of pattern's '|'-separated names. */
static bool name_matches(const char *pattern, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = pattern; *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == k && memcmp(p, key, n) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/* Appends v (a new reference taken) or fails with out of memory. */
static bool push(json_t *a, json_t *v, struct ctl_result *res)
{
	if (json_array_append_new(a, v)) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return false;
	}
	return true;
}

/*
 * Core's transformNamedArguments: each parameter in order takes its
 * named value; the parameters left out between two given ones are null
 * (never after the last given one: the count stays what the caller
 * gave). "args", an array, supplies the leading positional ones
 * (bitcoin-cli -named sends them so).
 */
static json_t *positional(const struct ctl_method *m, json_t *params, struct ctl_result *res)
{
	json_t *named = json_array();
	json_t *out = NULL;
	if (!named) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	size_t used = 0, hole = 0, initial_hole = 0;
	const char *initial_param = NULL;
	int np = ctl_method_nparams(m);
	for (int i = 0; i < np; i++) {
		const char *key;
		json_t *v, *found = NULL;
		json_object_foreach(params, key, v)
		{
			if (name_matches(m->params[i].name, key)) {
				found = v;
				break;
			}
		}
		if (!found) {
			hole++;
			if (!json_array_size(named))
				initial_hole = hole;
			continue;
		}
		for (; hole; hole--) {
			if (!push(named, json_null(), res))
				goto fail;
		}
		if (!initial_param)
			initial_param = m->params[i].name;
		if (!push(named, json_incref(found), res))
			goto fail;
		used++;
	}
	/* Every key must be a parameter's name (or "args"). Core names
	 * one of the unknown keys; this names the first. */
	const char *key;
	json_t *v;
	json_object_foreach(params, key, v)
	{
		bool known = strcmp(key, "args") == 0;
		for (int i = 0; i < np && !known; i++)
			known = name_matches(m->params[i].name, key);
		if (!known) {
			ctl_fail(res, CTL_INVALID_PARAMETER, "Unknown named parameter %s", key);
			goto fail;
		}
	}
	json_t *args = json_object_get(params, "args");
	if (!json_is_array(args)) {
		out = named;
		return out;
	}
	size_t na = json_array_size(args);
	if (initial_hole < na && initial_param) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "Parameter %s specified twice both as positional and named argument",
		         initial_param);
		goto fail;
	}
	out = json_array();
	if (!out || json_array_extend(out, args)) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		goto fail;
	}
	for (size_t i = na; i < json_array_size(named); i++) {
		if (!push(out, json_incref(json_array_get(named, i)), res))
			goto fail;
	}
	json_decref(named);
	return out;
fail:
	json_decref(out);
	json_decref(named);
	return NULL;
}

/* UniValue's type names, as Core's messages print them. */
static const char *type_name(const json_t *v)
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
	case JSON_NULL:
	default:
		return "null";
	}
}

static const char *expected_name(enum ctl_arg_type t)
{
	switch (t) {
	case CTL_ARG_STR:
		return "string";
	case CTL_ARG_NUM:
		return "number";
	case CTL_ARG_BOOL:
		return "bool";
	case CTL_ARG_ARR:
		return "array";
	case CTL_ARG_OBJ:
		return "object";
	case CTL_ARG_ANY:
	default:
		return NULL;
	}
}

/* Core's RPCArg::MatchesType: NULL when v (NULL: absent) fits p, else the expected name. */
static const char *mismatch(const struct ctl_param *p, const json_t *v)
{
	if (!p->required && (!v || json_is_null(v)))
		return NULL;
	const char *want = expected_name(p->type);
	if (!want)
		return NULL;
	return strcmp(type_name(v ? v : json_null()), want) == 0 ? NULL : want;
}

json_t *ctl_args_check(const struct ctl_method *m, json_t *params, struct ctl_result *res)
{
	json_t *args;
	if (!params)
		args = json_array();
	else if (json_is_array(params))
		args = json_incref(params);
	else
		args = positional(m, params, res);
	if (!args) {
		if (!res->err_code)
			ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	int n = (int)json_array_size(args), np = ctl_method_nparams(m);
	if (n < ctl_method_nrequired(m) || n > np) {
		/* Core throws its help text as a plain error: -1. */
		char text[sizeof(res->err_msg)];
		ctl_help_text(m, text, sizeof(text));
		ctl_fail(res, CTL_MISC_ERROR, "%s", text);
		json_decref(args);
		return NULL;
	}
	/* Every mismatch, in order, as UniValue::write(4) prints the object. */
	char msg[sizeof(res->err_msg)];
	size_t k = 0;
	for (int i = 0; i < np; i++) {
		json_t *v = json_array_get(args, (size_t)i);
		const char *want = mismatch(&m->params[i], v);
		if (!want)
			continue;
		int w = snprintf(msg + k, sizeof(msg) - k,
		                 "%s\n    \"Position %d (%s)\": \"JSON value of type %s is not of "
		                 "expected type %s\"",
		                 k ? "," : "Wrong type passed:\n{", i + 1, m->params[i].name,
		                 type_name(v ? v : json_null()), want);
		if (w > 0)
			k = k + (size_t)w < sizeof(msg) ? k + (size_t)w : sizeof(msg) - 1;
	}
	if (k) {
		ctl_fail(res, CTL_TYPE_ERROR, "%s\n}", msg);
		json_decref(args);
		return NULL;
	}
	return args;
}

/* ---- what a method still reads itself, as Core's UniValue does ---------- */

bool ctl_arg_int(const json_t *v, int64_t lo, int64_t hi, int64_t def, int64_t *out,
                 struct ctl_result *res)
{
	if (!v || json_is_null(v)) {
		*out = def;
		return true;
	}
	if (!json_is_number(v)) {
		ctl_fail(res, CTL_TYPE_ERROR,
		         "JSON value of type %s is not of expected type number", type_name(v));
		return false;
	}
	/* UniValue::getInt parses the number's text as an integer of the
	 * target type: a fraction or exponent (a jansson real) or a value
	 * past the type's range is "out of range". */
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : 0;
	if (!json_is_integer(v) || i < lo || i > hi) {
		ctl_fail(res, CTL_MISC_ERROR, "JSON integer out of range");
		return false;
	}
	*out = (int64_t)i;
	return true;
}

bool ctl_json_want(const json_t *v, enum ctl_arg_type t, struct ctl_result *res)
{
	const char *want = expected_name(t);
	const char *got = type_name(v ? v : json_null());
	if (!want || strcmp(want, got) == 0)
		return true;
	ctl_fail(res, CTL_TYPE_ERROR, "JSON value of type %s is not of expected type %s", got,
	         want);
	return false;
}

void ctl_fail_usage(struct ctl_result *res, const char *method)
{
	const struct ctl_method *m = ctl_method_lookup(method);
	char text[sizeof(res->err_msg)];
	if (m)
		ctl_help_text(m, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s", method);
	ctl_fail(res, CTL_MISC_ERROR, "%s", text);
}
