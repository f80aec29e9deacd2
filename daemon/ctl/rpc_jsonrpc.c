/*
 * daemon/ctl/rpc_jsonrpc.c: JSON-RPC over HTTP as Core 29 speaks it
 * (httprpc.cpp's HTTPReq_JSONRPC and JSONErrorReply, rpc/request.cpp's
 * JSONRPCRequest::parse and JSONRPCReplyObj), around the one dispatcher.
 *
 * What differs from the control socket is only the envelope, so this file
 * never runs a method: each call goes to the dispatcher as a plain 2.0
 * request with id 0 (rpc_call_fn), and its reply is put back into the shape
 * the client asked for. A result is spliced as text, never re-parsed:
 * json/'s numbers (amounts with eight decimals, doubles as "%.16g") stay
 * byte for byte what the control socket printed.
 *
 * Core's rules kept here: a request without "jsonrpc" (or with "1.0") is
 * legacy: both "result" and "error" in the reply (and an answer even
 * without an id), and a failed single call
 * is an HTTP error (400 invalid request, 404 unknown method, 500 others);
 * a 2.0 call's error comes in a 200. A 2.0 notification (no "id") runs
 * and gets 204. A batch is always 200 (204 when every member was a
 * notification); its members reuse one request state, as Core's loop does,
 * so a member that is not an object is answered with the previous
 * member's id and version.
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rest.h"
#include "daemon/ctl/rpc.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* Core's error codes used here. */
#define RPC_MISC_ERROR       -1
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_PARSE_ERROR      -32700

/* Replies grow in ctl/rest_util.c's buffer (rest_buf: `failed` once an
 * allocation failed, then it stays empty). */

/* v as compact JSON text appended to b. */
static void buf_json(struct rest_buf *b, const json_t *v)
{
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	if (!t) {
		b->failed = true;
		return;
	}
	rest_buf_str(b, t);
	xfree(t); /* jansson's allocator is xmalloc's (main.c) */
}

/* Core's JSONRPCRequest as far as the envelope needs it: kept across a batch. */
struct req_state {
	json_t *id; /**< borrowed from the parsed body; NULL with has_id: null */
	bool has_id;
	bool v2;
	/* What the body's text said beyond jansson's tree (ctl/json_load.c). */
	const struct ctl_json_notes *notes;
	size_t member;       /**< the request's place in the body (0: alone) */
	const char *id_text; /**< the id as written, when jansson could not hold it */
	const char *dup_key; /**< the first key its params repeat, or NULL */
};

/* Core's IsNotification: only a 2.0 request without an id goes unanswered. */
static bool notification(const struct req_state *st)
{
	return st->v2 && !st->has_id;
}

/* An error as Core's JSONRPCError: {"code", "message"} (new reference). */
static json_t *error_obj(int code, const char *msg)
{
	return json_pack("{s:i, s:s}", "code", code, "message", msg);
}

/* Core's JSONRPCReplyObj into b: result_text (NULL: null) or error. */
static void reply_obj(struct rest_buf *b, const struct req_state *st, const char *result,
                      size_t rlen, const json_t *error)
{
	rest_buf_str(b, st->v2 ? "{\"jsonrpc\":\"2.0\"," : "{");
	if (!error) {
		rest_buf_str(b, "\"result\":");
		if (result)
			rest_buf_add(b, result, rlen);
		else
			rest_buf_str(b, "null");
		if (!st->v2)
			rest_buf_str(b, ",\"error\":null");
	} else {
		if (!st->v2)
			rest_buf_str(b, "\"result\":null,");
		rest_buf_str(b, "\"error\":");
		buf_json(b, error);
	}
	if (st->has_id) {
		rest_buf_str(b, ",\"id\":");
		if (st->id && st->id_text)
			rest_buf_str(b, st->id_text);
		else if (st->id)
			buf_json(b, st->id);
		else
			rest_buf_str(b, "null");
	}
	rest_buf_str(b, "}");
}

/*
 * Core's JSONRPCRequest::parse: st's id and version, then the method and
 * params. NULL when fine, else the error (a new reference).
 */
static json_t *parse_req(json_t *req, struct req_state *st, const char **method, json_t **params)
{
	if (!json_is_object(req))
		return error_obj(RPC_INVALID_REQUEST, "Invalid Request object");
	/* The id first, so errors from here on carry it. */
	st->id = json_object_get(req, "id");
	st->has_id = st->id != NULL;
	const struct ctl_json_note *note = ctl_json_note(st->notes, st->member);
	st->id_text = note ? note->id_text : NULL;
	st->dup_key = note ? note->dup_key : NULL;
	if (st->id && json_is_null(st->id))
		st->id = NULL;
	st->v2 = false;
	json_t *ver = json_object_get(req, "jsonrpc");
	if (ver && !json_is_null(ver)) {
		if (!json_is_string(ver))
			return error_obj(RPC_INVALID_REQUEST, "jsonrpc field must be a string");
		if (strcmp(json_string_value(ver), "2.0") == 0)
			st->v2 = true;
		else if (strcmp(json_string_value(ver), "1.0") != 0)
			return error_obj(RPC_INVALID_REQUEST, "JSON-RPC version not supported");
	}
	json_t *m = json_object_get(req, "method");
	if (!m || json_is_null(m))
		return error_obj(RPC_INVALID_REQUEST, "Missing method");
	if (!json_is_string(m))
		return error_obj(RPC_INVALID_REQUEST, "Method must be a string");
	*method = json_string_value(m);
	json_t *p = json_object_get(req, "params");
	if (p && !json_is_null(p) && !json_is_array(p) && !json_is_object(p))
		return error_obj(RPC_INVALID_REQUEST, "Params must be an array or object");
	*params = p && !json_is_null(p) ? p : NULL;
	return NULL;
}

static const char OK_PRE[] = "{\"jsonrpc\":\"2.0\",\"result\":";
static const char OK_POST[] = ",\"id\":0}";

/* A batch member's call already made (prefetch): its reply text, or NULL when it failed. */
struct pre_slot {
	bool sent;
	char *text;
};

/* Would exec hand this method to the dispatcher? */
static bool dispatched(const char *method)
{
	/* Core's own words for a name nobody has (the control socket adds a
	 * hint for peerctl users; a Core method peerd lacks keeps its note). */
	return ctl_method_lookup(method) || ctl_core_only_method(method);
}

/* The request line exec sends: 2.0, the method, the params ([] for none), id. */
static json_t *request_obj(const char *method, json_t *params, json_int_t id)
{
	json_t *p = params ? json_incref(params) : json_array();
	return p ? json_pack("{s:s, s:s, s:o, s:I}", "jsonrpc", "2.0", "method", method, "params",
	                     p, "id", id)
	         : NULL;
}

/* A prefetched reply ends ",\"id\":K}" (K its place in the chunk): made ",\"id\":0}" as exec's. */
static void zero_id(char *r, size_t *n)
{
	size_t j = *n;
	if (j < 8 || r[j - 1] != '}')
		return;
	j--;
	while (j > 0 && r[j - 1] >= '0' && r[j - 1] <= '9')
		j--;
	if (j >= 6 && memcmp(r + j - 6, ",\"id\":", 6) == 0) {
		r[j] = '0';
		r[j + 1] = '}';
		r[j + 2] = 0;
		*n = j + 2;
	}
}

/* How exec reaches the dispatcher: `call` (a blocking call, a capture of
 * the line, or a replay of the reply), and first `direct` when set. */
struct door {
	rpc_call_fn call;
	void *ctx;
	rpc_direct_fn direct;
	void *direct_ctx;
};

/* The one reply of rpc_jsonrpc_answer_reply's call (taken by its first exec). */
struct replay {
	char *reply;
	size_t len;
};

static char *replay_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	struct replay *rp = ctx;
	char *r = rp->reply;
	(void)line;
	(void)len;
	rp->reply = NULL;
	*out_len = r ? rp->len : 0;
	return r;
}

/*
 * A call `direct` answered: its result's text as the dispatcher would
 * print it (json_format, compact) into *line, or the error (a new
 * reference). NULL with *line unset when direct did not take it.
 */
static json_t *exec_direct(const struct door *door, const char *method, json_t *params, bool *taken,
                           char **line, const char **result, size_t *rlen)
{
	struct ctl_result res;
	res.result = NULL;
	res.err_code = 0;
	res.err_msg[0] = 0;
	res.stop = false;
	*taken = door->direct(door->direct_ctx, method, params, &res);
	if (!*taken)
		return NULL;
	if (res.err_code) {
		json_decref(res.result);
		return error_obj(res.err_code, res.err_msg);
	}
	char *t = json_format(res.result ? res.result : json_null(), JSON_COMPACT);
	json_decref(res.result);
	if (!t)
		return error_obj(RPC_MISC_ERROR, "out of memory");
	*line = t;
	*result = t;
	*rlen = strlen(t);
	return NULL;
}

/*
 * One call through the dispatcher (or its reply already fetched: slot;
 * or answered by door->direct): *result and *rlen point into *line (the
 * caller frees *line) on success, else the error (a new reference).
 */
static json_t *exec(const char *method, json_t *params, const char *dup_key,
                    const struct door *door, struct pre_slot *slot, char **line,
                    const char **result, size_t *rlen)
{
	rpc_call_fn call = door->call;
	void *ctx = door->ctx;
	*line = NULL;
	if (!dispatched(method))
		return error_obj(RPC_METHOD_NOT_FOUND, "Method not found");
	/* The text the dispatcher gets has lost the repeated name: Core's
	 * transformNamedArguments answer, as the control socket's. */
	if (dup_key && json_is_object(params) && ctl_method_lookup(method)) {
		char msg[512];
		snprintf(msg, sizeof(msg), "Parameter %s specified multiple times", dup_key);
		return error_obj(-8, msg);
	}
	if (door->direct) {
		bool taken = false;
		json_t *e = exec_direct(door, method, params, &taken, line, result, rlen);
		if (taken)
			return e;
	}
	size_t n = 0;
	char *r;
	if (slot && slot->sent) {
		r = slot->text;
		slot->text = NULL;
		if (r) {
			n = strlen(r);
			zero_id(r, &n);
		}
	} else if (call == replay_call) {
		/* The reply is known: no request text to make. */
		r = call(ctx, "", 0, &n);
	} else {
		json_t *req = request_obj(method, params, 0);
		char *text = req ? json_dumps(req, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
		json_decref(req);
		if (!text)
			return error_obj(RPC_MISC_ERROR, "out of memory");
		r = call(ctx, text, strlen(text), &n);
		xfree(text);
	}
	if (!r)
		return error_obj(RPC_MISC_ERROR, "peerd is shutting down");
	size_t pre = sizeof(OK_PRE) - 1, post = sizeof(OK_POST) - 1;
	if (n >= pre + post && memcmp(r, OK_PRE, pre) == 0 &&
	    memcmp(r + n - post, OK_POST, post) == 0) {
		*line = r;
		*result = r + pre;
		*rlen = n - pre - post;
		return NULL;
	}
	/* Not a result: the dispatcher's error object (small; parsed). */
	json_t *v = json_loadb(r, n, 0, NULL);
	xfree(r);
	json_t *e = v ? json_object_get(v, "error") : NULL;
	json_t *out = json_is_object(e) ? json_incref(e)
	                                : error_obj(RPC_MISC_ERROR, "malformed reply from peerd");
	json_decref(v);
	return out;
}

/** A result at least this long is answered in the dispatcher's own buffer. */
#define RPC_IN_PLACE_MIN 65536u

/*
 * A lone call's reply built in the dispatcher's reply buffer `line` (taken)
 * around its result (res, rlen bytes inside it), with the final newline:
 * the body as reply_obj and answer would make it, where their copy of a
 * 1.8 MB getblock HASH 0 took a fresh mapping (page faults for each 4 kB)
 * on the loop. The prefix is never longer than the dispatcher's, so the
 * result moves down at most (2.0: not at all). NULL when out of memory
 * (line is then freed).
 */
static char *reply_in_place(char *line, const char *res, size_t rlen, const struct req_state *st,
                            size_t *len)
{
	const char *pre = st->v2 ? "{\"jsonrpc\":\"2.0\",\"result\":" : "{\"result\":";
	size_t np = strlen(pre), at = (size_t)(res - line);
	struct rest_buf post = {0};
	if (!st->v2)
		rest_buf_str(&post, ",\"error\":null");
	if (st->has_id) {
		rest_buf_str(&post, ",\"id\":");
		if (st->id && st->id_text)
			rest_buf_str(&post, st->id_text);
		else if (st->id)
			buf_json(&post, st->id);
		else
			rest_buf_str(&post, "null");
	}
	rest_buf_str(&post, "}\n");
	char *t = post.failed || at < np ? NULL : line;
	if (t) {
		if (at != np)
			memmove(t + np, t + at, rlen);
		memcpy(t, pre, np);
		/* Resized in place, or by mremap: a large buffer is its own mapping. */
		t = xrealloc(t, np + rlen + post.len + 1);
	}
	if (!t) {
		xfree(line);
		xfree(post.p);
		return NULL;
	}
	memcpy(t + np + rlen, post.p, post.len + 1);
	*len = np + rlen + post.len;
	xfree(post.p);
	return t;
}

/* One request: parse, run, and its reply object into b unless a notification
 * (a long result of a lone request: into *whole, the dispatcher's buffer). */
static json_t *one(json_t *req, struct req_state *st, const struct door *door, struct pre_slot *pre,
                   struct rest_buf *b, bool *replied, char **whole, size_t *whole_len)
{
	const char *method = NULL;
	json_t *params = NULL;
	*replied = false;
	json_t *err = parse_req(req, st, &method, &params);
	if (err)
		return err; /* Core throws: the caller shapes it */
	char *line = NULL;
	const char *res = NULL;
	size_t rlen = 0;
	err = exec(method, params, st->dup_key, door, pre, &line, &res, &rlen);
	if (err && !st->v2)
		return err; /* legacy: thrown */
	if (!notification(st)) {
		*replied = true;
		if (whole && !err && line && rlen >= RPC_IN_PLACE_MIN) {
			*whole = reply_in_place(line, res, rlen, st, whole_len);
			if (!*whole)
				b->failed = true;
			return NULL;
		}
		reply_obj(b, st, res, rlen, err);
	}
	json_decref(err);
	xfree(line);
	return NULL;
}

static unsigned status_of(const json_t *err)
{
	int code = (int)json_integer_value(json_object_get(err, "code"));
	if (code == RPC_INVALID_REQUEST)
		return 400;
	if (code == RPC_METHOD_NOT_FOUND)
		return 404;
	return 500;
}

/* One chunk of a batch (chunk: its requests, ids 0..; idx: their places) to the dispatcher. */
static void send_chunk(json_t *chunk, const size_t *idx, struct pre_slot *pre, rpc_batch_fn batch,
                       void *ctx)
{
	size_t m = json_array_size(chunk), got = 0;
	bool is_batch = false;
	char *text = json_dumps(chunk, JSON_COMPACT | JSON_REAL_PRECISION(17));
	/* Too long for one line (or no memory): its calls go one by one. */
	if (!text || strlen(text) > CTL_MAX_LINE) {
		xfree(text);
		return;
	}
	char **t = batch(ctx, text, strlen(text), &got, &is_batch);
	xfree(text);
	if (!t) {
		/* The dispatcher is gone: they may have run; never run them twice. */
		for (size_t k = 0; k < m; k++)
			pre[idx[k]].sent = true;
		return;
	}
	if (is_batch && got == m) {
		for (size_t k = 0; k < m; k++)
			pre[idx[k]] = (struct pre_slot){.sent = true, .text = t[k]};
		xfree(t);
		return;
	}
	/* One error for the whole line: none of them ran; one by one, then. */
	for (size_t k = 0; k < got; k++)
		xfree(t[k]);
	xfree(t);
}

/*
 * The calls of batch v that exec would hand to the dispatcher, sent
 * CTL_MAX_BATCH at a time: their replies by place (NULL: none prefetched,
 * out of memory; the batch then goes one call at a time as before).
 */
static struct pre_slot *prefetch(json_t *v, const struct ctl_json_notes *notes, rpc_batch_fn batch,
                                 void *ctx)
{
	size_t n = json_array_size(v);
	struct pre_slot *pre = xcalloc(n ? n : 1, sizeof(*pre));
	size_t *idx = xmalloc(CTL_MAX_BATCH * sizeof(*idx));
	json_t *chunk = json_array();
	if (!pre || !idx || !chunk)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct req_state st = {.has_id = true, .notes = notes, .member = i};
		const char *method = NULL;
		json_t *params = NULL;
		json_t *err = parse_req(json_array_get(v, i), &st, &method, &params);
		if (err) {
			json_decref(err);
			continue;
		}
		if (!dispatched(method) || st.dup_key)
			continue;
		size_t k = json_array_size(chunk);
		if (json_array_append_new(chunk, request_obj(method, params, (json_int_t)k)))
			break; /* out of memory: the rest one by one */
		idx[k] = i;
		if (k + 1 == CTL_MAX_BATCH) {
			send_chunk(chunk, idx, pre, batch, ctx);
			json_array_clear(chunk);
		}
	}
	if (json_array_size(chunk))
		send_chunk(chunk, idx, pre, batch, ctx);
out:
	json_decref(chunk);
	xfree(idx);
	return pre;
}

static void answer_parsed(json_t *v, const struct ctl_json_notes *notes, const struct door *door,
                          rpc_batch_fn batch, struct rpc_answer *out);

/* Parse body and answer it: the one pass of a call on a blocking door. */
static void answer(const char *body, size_t len, const struct door *door, rpc_batch_fn batch,
                   struct rpc_answer *out)
{
	json_error_t jerr;
	struct ctl_json_notes notes;
	json_t *v = ctl_json_load(body, len, &jerr, &notes);
	answer_parsed(v, &notes, door, batch, out);
	json_decref(v);
	ctl_json_notes_release(&notes);
}

void rpc_jsonrpc_answer(const char *body, size_t len, rpc_call_fn call, void *ctx,
                        struct rpc_answer *out)
{
	struct door door = {.call = call, .ctx = ctx};
	answer(body, len, &door, NULL, out);
}

void rpc_jsonrpc_answer_reply(const char *body, size_t len, char *reply, size_t reply_len,
                              struct rpc_answer *out)
{
	struct replay rp = {.reply = reply, .len = reply_len};
	struct door door = {.call = replay_call, .ctx = &rp};
	answer(body, len, &door, NULL, out);
	xfree(rp.reply); /* not taken: the body makes no call now (cannot happen) */
}

void rpc_jsonrpc_answer_batched(const char *body, size_t len, rpc_call_fn call, rpc_batch_fn batch,
                                void *ctx, struct rpc_answer *out)
{
	struct door door = {.call = call, .ctx = ctx};
	answer(body, len, &door, batch, out);
}

/* ---- a lone call in two halves, parsed once (the loop's calls) ------------ */

struct rpc_jsonrpc_call {
	json_t *v;                   /**< the parsed body */
	struct ctl_json_notes notes; /**< what its text said beyond the tree */
	char *line;                  /**< the dispatcher line exec made */
	size_t line_len;
};

/* rpc_call_fn of the first half: the line is kept, the call not made. */
static char *capture_call(void *ctx, const char *line, size_t len, size_t *out_len)
{
	struct rpc_jsonrpc_call *pc = ctx;
	*out_len = 0;
	if (!pc->line && (pc->line = xmalloc(len + 1))) {
		memcpy(pc->line, line, len);
		pc->line[len] = 0;
		pc->line_len = len;
	}
	return NULL;
}

void rpc_jsonrpc_call_free(struct rpc_jsonrpc_call *pc)
{
	if (!pc)
		return;
	json_decref(pc->v);
	ctl_json_notes_release(&pc->notes);
	xfree(pc->line);
	xfree(pc);
}

void rpc_jsonrpc_begin(const char *body, size_t len, rpc_direct_fn direct, void *ctx,
                       struct rpc_answer *out, struct rpc_jsonrpc_call **pending)
{
	*pending = NULL;
	struct rpc_jsonrpc_call *pc = xcalloc(1, sizeof(*pc));
	if (!pc) {
		*out = (struct rpc_answer){.status = 500};
		return;
	}
	json_error_t jerr;
	pc->v = ctl_json_load(body, len, &jerr, &pc->notes);
	struct door door = {.call = capture_call, .ctx = pc, .direct = direct, .direct_ctx = ctx};
	answer_parsed(pc->v, &pc->notes, &door, NULL, out);
	/* The line captured: what was answered meanwhile (the call as if
	 * refused) is not the answer; the reply will make it. */
	if (pc->line && json_is_object(pc->v)) {
		xfree(out->body);
		*out = (struct rpc_answer){.status = 0};
		*pending = pc;
		return;
	}
	rpc_jsonrpc_call_free(pc);
}

const char *rpc_jsonrpc_call_line(const struct rpc_jsonrpc_call *pc, size_t *len)
{
	*len = pc->line_len;
	return pc->line;
}

void rpc_jsonrpc_finish(struct rpc_jsonrpc_call *pc, char *reply, size_t reply_len,
                        struct rpc_answer *out)
{
	struct replay rp = {.reply = reply, .len = reply_len};
	struct door door = {.call = replay_call, .ctx = &rp};
	answer_parsed(pc->v, &pc->notes, &door, NULL, out);
	xfree(rp.reply); /* not taken (cannot happen: the same tree makes the same call) */
	rpc_jsonrpc_call_free(pc);
}

/* The answer to a parsed body (v NULL: it did not parse). */
static void answer_parsed(json_t *v, const struct ctl_json_notes *notes, const struct door *door,
                          rpc_batch_fn batch, struct rpc_answer *out)
{
	struct rest_buf b = {0};
	char *whole = NULL; /* the reply built in place (reply_in_place), newline included */
	size_t whole_len = 0;
	struct req_state st = {.id = NULL, .has_id = true, .v2 = false};
	json_t *err = NULL;
	out->status = 200;
	out->body = NULL;
	out->len = 0;
	st.notes = notes;
	if (!v) {
		err = error_obj(RPC_PARSE_ERROR, "Parse error");
	} else if (json_is_object(v)) {
		bool replied;
		err = one(v, &st, door, NULL, &b, &replied, &whole, &whole_len);
		if (!err && !replied)
			out->status = 204;
	} else if (json_is_array(v)) {
		size_t n = json_array_size(v), k = 0;
		struct pre_slot *pre = batch && n > 1 ? prefetch(v, notes, batch, door->ctx) : NULL;
		rest_buf_str(&b, "[");
		for (size_t i = 0; i < n; i++) {
			struct rest_buf e = {0};
			bool replied = false;
			st.member = i;
			json_t *x = one(json_array_get(v, i), &st, door, pre ? &pre[i] : NULL, &e,
			                &replied, NULL, NULL);
			/* A batch never fails as a whole: errors are members. */
			if (x && !notification(&st)) {
				reply_obj(&e, &st, NULL, 0, x);
				replied = true;
			}
			json_decref(x);
			if (replied) {
				if (k++)
					rest_buf_str(&b, ",");
				rest_buf_add(&b, e.p ? e.p : "", e.len);
				b.failed |= e.failed;
			}
			xfree(e.p);
		}
		rest_buf_str(&b, "]");
		/* Replies of members exec never took (cannot happen: each prefetched
		 * member is exec'd once), freed all the same. */
		for (size_t i = 0; pre && i < n; i++)
			xfree(pre[i].text);
		xfree(pre);
		/* All notifications: nothing to say (an empty batch gets []). */
		if (k == 0 && n > 0)
			out->status = 204;
	} else {
		err = error_obj(RPC_PARSE_ERROR, "Top-level object parse error");
	}
	if (err) {
		/* Core's JSONErrorReply: the error as an HTTP status too. */
		xfree(b.p);
		memset(&b, 0, sizeof(b));
		out->status = status_of(err);
		reply_obj(&b, &st, NULL, 0, err);
		json_decref(err);
	}
	if (whole) {
		out->body = whole;
		out->len = whole_len;
		return;
	}
	if (out->status == 204 || b.failed) {
		if (b.failed)
			out->status = 500;
		xfree(b.p);
		return;
	}
	rest_buf_str(&b, "\n");
	if (b.failed) {
		out->status = 500;
		xfree(b.p);
		return;
	}
	out->body = b.p;
	out->len = b.len;
}
