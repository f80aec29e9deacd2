/*
 * daemon/ctl/rpc_whitelist.c: -rpcwhitelist and -rpcwhitelistdefault, as
 * Core 29's httprpc.cpp: per user, the methods it may call over HTTP; a
 * request naming any other gets 403 with no body, and the log says who
 * and what. The control socket is the operator's own (mode 0600) and has
 * no users: whitelists are the HTTP door's only.
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rpc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct rpc_wl_user *find_user(const struct rpc_whitelist *w, const char *user)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->v[i].user, user))
			return &w->v[i];
	return NULL;
}

static bool has_method(const struct rpc_wl_user *u, const char *m)
{
	for (size_t i = 0; i < u->n; i++)
		if (!strcmp(u->methods[i], m))
			return true;
	return false;
}

static void free_methods(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xfree(v[i]);
	xfree(v);
}

/* "m1,m2 m3" into a new list (Core splits on each of ',' and ' '). */
static int split(const char *s, char ***out, size_t *n_out)
{
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',' || *p == ' ';
	char **v = xcalloc(cap, sizeof(*v));
	size_t n = 0;
	if (!v)
		return -ENOMEM;
	for (const char *p = s;;) {
		size_t l = strcspn(p, ", ");
		if (!(v[n] = xmalloc(l + 1))) {
			free_methods(v, n);
			return -ENOMEM;
		}
		memcpy(v[n], p, l);
		v[n++][l] = 0;
		if (!p[l])
			break;
		p += l + 1;
	}
	*out = v;
	*n_out = n;
	return 0;
}

int rpc_whitelist_init(struct rpc_whitelist *w, const struct peerd_conf *c)
{
	memset(w, 0, sizeof(*w));
	w->deflt = c->rpcwhitelistdefault;
	if (!c->rpcwhitelist.n)
		return 0;
	w->v = xcalloc(c->rpcwhitelist.n, sizeof(*w->v));
	if (!w->v)
		return -ENOMEM;
	for (size_t i = 0; i < c->rpcwhitelist.n; i++) {
		const char *e = c->rpcwhitelist.v[i];
		const char *colon = strchr(e, ':');
		size_t ul = colon ? (size_t)(colon - e) : strlen(e);
		char *name = xmalloc(ul + 1);
		if (!name)
			return -ENOMEM;
		memcpy(name, e, ul);
		name[ul] = 0;
		struct rpc_wl_user *u = find_user(w, name);
		bool again = u != NULL;
		if (again) {
			xfree(name);
		} else {
			u = &w->v[w->n++];
			u->user = name;
		}
		if (!colon)
			continue;
		char **m;
		size_t n;
		if (split(colon + 1, &m, &n))
			return -ENOMEM;
		if (again) {
			/* Named again: only what both lists allow. */
			size_t k = 0;
			for (size_t j = 0; j < n; j++) {
				if (has_method(u, m[j]))
					m[k++] = m[j];
				else
					xfree(m[j]);
			}
			n = k;
		}
		free_methods(u->methods, u->n);
		u->methods = m;
		u->n = n;
	}
	return 0;
}

void rpc_whitelist_release(struct rpc_whitelist *w)
{
	for (size_t i = 0; i < w->n; i++) {
		xfree(w->v[i].user);
		free_methods(w->v[i].methods, w->v[i].n);
	}
	xfree(w->v);
	memset(w, 0, sizeof(*w));
}

/* Core's uvTypeName. */
static const char *type_name(const json_t *v)
{
	if (!v || json_is_null(v))
		return "null";
	if (json_is_boolean(v))
		return "bool";
	if (json_is_object(v))
		return "object";
	if (json_is_array(v))
		return "array";
	if (json_is_number(v))
		return "number";
	return "string";
}

/* Core's JSONErrorReply for a whole request: {"result":null,"error":{...},"id":null}. */
static void error_reply(struct rpc_answer *out, unsigned status, int code, const char *msg)
{
	size_t cap = strlen(msg) + 96;
	out->status = status;
	out->body = xmalloc(cap);
	out->len = 0;
	if (out->body)
		out->len =
		    (size_t)snprintf(out->body, cap,
		                     "{\"result\":null,\"error\":{\"code\":%d,\"message\":\"%s\"},"
		                     "\"id\":null}\n",
		                     code, msg);
	else
		out->status = 500;
}

static void forbid(struct rpc_answer *out)
{
	out->status = 403;
	out->body = NULL;
	out->len = 0;
}

int rpc_whitelist_judge(const struct rpc_whitelist *w, const char *user, const char *body,
                        size_t len, struct rpc_answer *out, char *msg, size_t msglen)
{
	msg[0] = 0;
	const struct rpc_wl_user *u = find_user(w, user);
	if (!u && !w->deflt)
		return 0;
	/* As rpc_jsonrpc_answer parses it: a body it takes is judged here. */
	json_error_t jerr;
	struct ctl_json_notes notes;
	json_t *v = ctl_json_load(body, len, &jerr, &notes);
	ctl_json_notes_release(&notes);
	/* Core parses first: a body that does not parse gets its parse error. */
	if (!v)
		return 0;
	int rc = 0;
	if (!u) {
		snprintf(msg, msglen, "RPC User %s not allowed to call any methods", user);
		forbid(out);
		rc = 1;
	} else if (json_is_object(v)) {
		/* A method that is missing or not a string is rpc_jsonrpc_answer's error. */
		json_t *m = json_object_get(v, "method");
		if (json_is_string(m) && !has_method(u, json_string_value(m))) {
			snprintf(msg, msglen, "RPC User %s not allowed to call method %s", user,
			         json_string_value(m));
			forbid(out);
			rc = 1;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *r;
		json_array_foreach(v, i, r)
		{
			if (!json_is_object(r)) {
				error_reply(out, 400, CTL_INVALID_REQUEST,
				            "Invalid Request object");
				rc = 1;
				break;
			}
			json_t *m = json_object_get(r, "method");
			if (!json_is_string(m)) {
				char t[80];
				snprintf(t, sizeof(t),
				         "JSON value of type %s is not of expected type string",
				         type_name(m));
				/* Core's get_str throws, caught as a parse error: 500. */
				error_reply(out, 500, CTL_PARSE_ERROR, t);
				rc = 1;
				break;
			}
			if (!has_method(u, json_string_value(m))) {
				snprintf(msg, msglen, "RPC User %s not allowed to call method %s",
				         user, json_string_value(m));
				forbid(out);
				rc = 1;
				break;
			}
		}
	}
	json_decref(v);
	return rc;
}
