/*
 * daemon/ctl_request.c: the control socket's requests: one line of
 * JSON-RPC 2.0 parsed, checked and answered, request by request.
 *
 * Protocol: one request per line; a batch (JSON array) is answered with an
 * array; a request without "id" is a notification and gets no reply, as
 * the spec says. A line that is not JSON gets -32700 and the connection is
 * closed after the reply, as does a line longer than CTL_MAX_LINE (-32600):
 * a client that does not speak the protocol cannot be resynchronised.
 * Every other error (-32600 invalid request, -32601 unknown method, -32602
 * bad params, application errors) leaves the connection open. Other
 * clients and the daemon are never affected by one client's input.
 *
 * A loop method is answered at once; a chain method goes to the validation
 * thread as a job and fills its reply slot when it comes back (the jobs
 * out are listed for getrpcinfo). The connection side (reading, writing,
 * fairness between clients) is ctl.c's; it hands this file a line and gets
 * the reply text back through ctl_line_finish.
 */
#include "daemon/ctl_internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A chain method's request on its way to the validation thread and back. */
struct ctl_job {
	struct val_job base; /* first: the validation queue links it */
	struct ctl_line *line;
	size_t slot;
	json_t *id; /**< loop thread only; NULL for a notification */
	const struct ctl_method *m;
	struct ctl_chain_ctx ctx;
	json_t *args; /**< a deep copy: the validation thread's until the work is done */
	struct ctl_result res;
	bool legacy; /**< a JSON-RPC 1.0 request: answered in its shape */
	/* On d->ctl.inflight from its post until it is back: getrpcinfo lists it. */
	struct ctl_job *in_prev, *in_next;
	uint64_t start_ns; /**< uv_hrtime() at the post */
};

static void inflight_add(struct daemon *d, struct ctl_job *j)
{
	j->start_ns = uv_hrtime();
	j->in_prev = NULL;
	j->in_next = d->ctl.inflight;
	if (j->in_next)
		j->in_next->in_prev = j;
	d->ctl.inflight = j;
}

static void inflight_remove(struct daemon *d, struct ctl_job *j)
{
	if (j->in_prev)
		j->in_prev->in_next = j->in_next;
	else if (d->ctl.inflight == j)
		d->ctl.inflight = j->in_next;
	if (j->in_next)
		j->in_next->in_prev = j->in_prev;
	j->in_prev = j->in_next = NULL;
}

json_t *ctl_active_commands(const struct daemon *d, const char *current, uint64_t current_ns)
{
	json_t *a = json_array();
	uint64_t now = uv_hrtime();
	if (a && current)
		json_array_append_new(a, json_pack("{s:s, s:I}", "method", current, "duration",
		                                   (json_int_t)((now - current_ns) / 1000u)));
	/* Oldest first, as they were posted: the list is newest first. */
	const struct ctl_job *last = d->ctl.inflight;
	while (last && last->in_next)
		last = last->in_next;
	for (const struct ctl_job *j = last; a && j; j = j->in_prev)
		json_array_append_new(a, json_pack("{s:s, s:I}", "method", j->m->name, "duration",
		                                   (json_int_t)((now - j->start_ns) / 1000u)));
	return a;
}

static void slot_pack(struct ctl_line *L, size_t k);

/* {"jsonrpc":"2.0","error":{...},"id":id}; takes the reference to id (NULL: null). */
json_t *ctl_error_obj(json_t *id, int code, const char *fmt, ...)
{
	char msg[2048]; /* as ctl_result.err_msg */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:{s:i, s:s}, s:o}", "jsonrpc", "2.0", "error", "code", code,
	                 "message", msg, "id", id ? id : json_null());
}

/* A method's outcome as a response for `id` (borrowed), or NULL for a notification. */
static json_t *response(json_t *id, bool notification, struct ctl_result *res, unsigned *flags)
{
	if (res->stop)
		*flags |= CTL_REPLY_STOP;
	if (notification) {
		json_decref(res->result);
		return NULL;
	}
	if (res->err_code) {
		json_decref(res->result);
		return ctl_error_obj(json_incref(id), res->err_code, "%s", res->err_msg);
	}
	return json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "result",
	                 res->result ? res->result : json_null(), "id", id ? id : json_null());
}

/*
 * A JSON-RPC 1.0 reply, as Core gives one (its curl examples send 1.0):
 * both "result" and "error", one of them null, and no "jsonrpc".
 */
static json_t *legacy_shape(json_t *r)
{
	if (!r)
		return NULL;
	json_object_del(r, "jsonrpc");
	if (!json_object_get(r, "result"))
		json_object_set_new(r, "result", json_null());
	if (!json_object_get(r, "error"))
		json_object_set_new(r, "error", json_null());
	return r;
}

/* ---- chain methods: a job to the validation thread ------------------------ */

/* Validation thread. */
static void job_work(struct chain *chain, struct val_job *vj)
{
	struct ctl_job *j = (struct ctl_job *)vj;
	if (!chain)
		ctl_fail(&j->res, CTL_MISC_ERROR, "the chain is not loaded");
	else
		j->m->chain_fn(chain, &j->ctx, j->args, &j->res);
	json_decref(j->args);
	j->args = NULL;
}

/* Loop thread: the result goes into its slot; the last one answers the line. */
static void job_done(struct daemon *d, struct val_job *vj)
{
	struct ctl_job *j = (struct ctl_job *)vj;
	struct ctl_line *L = j->line;
	if (vj->cancelled) {
		json_decref(j->args);
		ctl_fail(&j->res, CTL_MISC_ERROR, "peerd is shutting down");
	} else if (j->m->finish && !j->res.err_code) {
		j->m->finish(d, NULL, &j->res);
	}
	json_t *r = response(j->id, !j->id, &j->res, &L->flags);
	if (j->legacy)
		r = legacy_shape(r);
	if (j->id) {
		L->slots[j->slot] = r;
		slot_pack(L, j->slot);
	}
	json_decref(j->id);
	inflight_remove(d, j);
	xfree(j);
	if (d->ctl.jobs)
		d->ctl.jobs--;
	if (d->ctl.ready && d->ctl.turn_init)
		(void)uv_idle_start(&d->ctl.turn, ctl_turn_cb);
	/* Done when every request started and every job is back (or
	 * the client left: requests not started are never answered). */
	if (--L->outstanding == 0 && (L->next == L->n || !L->c))
		ctl_line_finish(d, L);
}

/* Post m to the validation thread for slot `slot`; false (res set) when it cannot go. */
static bool post_chain(struct daemon *d, struct ctl_line *L, size_t slot,
                       const struct ctl_method *m, json_t *id, json_t *params, bool legacy,
                       struct ctl_result *res)
{
	/* Checked here, on the loop thread, before the job exists: the
	 * method never sees a missing, null or mistyped required argument. */
	json_t *args = ctl_args_check(m, params, res);
	if (!args)
		return false;
	struct ctl_job *j = xcalloc(1, sizeof(*j));
	/* A deep copy: nothing the loop holds is shared with the thread
	 * (jansson's reference counts are not meant for two threads). */
	json_t *copy = j ? json_deep_copy(args) : NULL;
	json_decref(args);
	if (!copy) {
		xfree(j);
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return false;
	}
	j->base.work = job_work;
	j->base.done = job_done;
	j->line = L;
	j->slot = slot;
	j->id = id ? json_incref(id) : NULL;
	j->m = m;
	j->ctx.net = d->params;
	j->ctx.netdir = validation_netdir(d);
	j->ctx.interrupt = &d->val.interrupt;
	j->ctx.conf = d->conf;
	j->args = copy;
	j->legacy = legacy;
	inflight_add(d, j);
	if (validation_post(d, &j->base)) {
		inflight_remove(d, j);
		json_decref(copy);
		json_decref(j->id);
		xfree(j);
		ctl_fail(res, CTL_MISC_ERROR, "peerd is shutting down");
		return false;
	}
	L->outstanding++;
	if (L->c)
		d->ctl.jobs++;
	return true;
}

/* One request object: its reply into L->slots[slot] now, or a chain job that fills it later. */
static void handle_request(struct daemon *d, struct ctl_line *L, size_t slot, json_t *req)
{
	json_t **out = &L->slots[slot];
	if (!json_is_object(req)) {
		*out = ctl_error_obj(NULL, CTL_INVALID_REQUEST,
		                     "Invalid Request: a request must be a JSON object");
		return;
	}
	json_t *id = json_object_get(req, "id");
	bool notification = id == NULL;
	if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_real(id) &&
	    !json_is_null(id)) {
		*out = ctl_error_obj(NULL, CTL_INVALID_REQUEST,
		                     "Invalid Request: id must be a string, a number or null");
		return;
	}
	json_t *ver = json_object_get(req, "jsonrpc");
	bool legacy = json_is_string(ver) && strcmp(json_string_value(ver), "1.0") == 0;
	if (ver && !legacy &&
	    (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0)) {
		*out = ctl_error_obj(json_incref(id), CTL_INVALID_REQUEST,
		                     "Invalid Request: jsonrpc must be \"2.0\" or \"1.0\"");
		return;
	}
	json_t *method = json_object_get(req, "method");
	if (!json_is_string(method)) {
		*out = ctl_error_obj(json_incref(id), CTL_INVALID_REQUEST,
		                     "Invalid Request: method must be a string");
		return;
	}
	json_t *params = json_object_get(req, "params");
	if (params && !json_is_array(params) && !json_is_object(params) && !json_is_null(params)) {
		*out = ctl_error_obj(json_incref(id), CTL_INVALID_PARAMS,
		                     "Invalid params: params must be an array or an object");
		return;
	}
	if (json_is_null(params))
		params = NULL;

	struct ctl_result res;
	memset(&res, 0, sizeof(res));
	const char *name = json_string_value(method);
	DLOG_DBG(&d->log, DLOG_CTL, "request %s", name);
	const struct ctl_method *m = ctl_method_lookup(name);
	/* A chain method goes to the validation thread when there is one and
	 * a client to answer later; a loop method (or a chain method that
	 * has a loop fallback) runs here and now. */
	if (m && m->chain_fn && L->c && d->val.started) {
		if (post_chain(d, L, slot, m, notification ? NULL : id, params, legacy, &res))
			return;
	} else {
		ctl_call(d, name, params, &res);
	}
	*out = response(id, notification, &res, &L->flags);
	if (legacy)
		*out = legacy_shape(*out);
}

void ctl_line_free(struct ctl_line *L)
{
	json_decref(L->v);
	if (L->texts) {
		for (size_t i = 0; i < L->n; i++)
			xfree(L->texts[i]);
		xfree(L->texts);
		L->d->ctl.line_bytes -= L->text_bytes;
	}
	for (size_t i = 0; i < L->n; i++)
		json_decref(L->slots[i]);
	xfree(L->slots);
	xfree(L);
}

/* A client line's reply k as text, now (its tree goes). */
static void slot_pack(struct ctl_line *L, size_t k)
{
	if (!L->texts || !L->slots[k])
		return;
	char *t = json_format(L->slots[k], JSON_COMPACT);
	json_decref(L->slots[k]);
	L->slots[k] = NULL;
	if (!t)
		return; /* out of memory: that reply is lost, as in send_json */
	size_t n = strlen(t);
	L->texts[k] = t;
	L->text_bytes += n;
	L->d->ctl.line_bytes += n;
	if (L->d->ctl.queued + L->d->ctl.line_bytes > CTL_MAX_QUEUED_TOTAL)
		ctl_drop_largest_queue(L->d);
}

/* A client line's reply as one text (xmalloc'd, *len bytes), or NULL for none. */
char *ctl_line_text(struct ctl_line *L, size_t *len)
{
	size_t total = 2, count = 0;
	for (size_t i = 0; i < L->n; i++) {
		if (L->texts[i]) {
			total += strlen(L->texts[i]) + 1;
			count++;
		}
	}
	if (!count)
		return NULL;
	if (!L->batch) {
		char *t = L->texts[0];
		L->texts[0] = NULL;
		*len = strlen(t);
		L->text_bytes -= *len;
		L->d->ctl.line_bytes -= *len;
		return t;
	}
	char *out = xmalloc(total);
	if (!out)
		return NULL;
	size_t at = 0;
	out[at++] = '[';
	for (size_t i = 0; i < L->n; i++) {
		if (!L->texts[i])
			continue;
		if (at > 1)
			out[at++] = ',';
		size_t n = strlen(L->texts[i]);
		memcpy(out + at, L->texts[i], n);
		at += n;
	}
	out[at++] = ']';
	*len = at;
	return out;
}

/* The reply to a finished line: the single response, or the batch's array
 * of responses in request order (none at all for notifications only). */
static json_t *line_assemble(struct ctl_line *L)
{
	if (!L->batch) {
		json_t *r = L->slots[0];
		L->slots[0] = NULL;
		return r;
	}
	json_t *a = json_array();
	for (size_t i = 0; a && i < L->n; i++) {
		if (L->slots[i])
			json_array_append(a, L->slots[i]);
	}
	if (a && !json_array_size(a)) {
		json_decref(a);
		a = NULL;
	}
	return a;
}

/* Start up to `max` more of L's requests; the parsed line goes once all started. */
void ctl_line_step(struct daemon *d, struct ctl_line *L, size_t max)
{
	for (; max && L->next < L->n; max--, L->next++) {
		handle_request(d, L, L->next, L->batch ? json_array_get(L->v, L->next) : L->v);
		slot_pack(L, L->next);
	}
	if (L->next == L->n) {
		json_decref(L->v);
		L->v = NULL;
	}
}

/*
 * Start answering one line (len bytes, no newline) for client c (NULL:
 * chain methods cannot wait, see handle_request). Returns the line when
 * chain jobs are still out (it is then answered by ctl_line_finish), else
 * NULL with the reply in *reply (NULL: nothing to write) and *flags set.
 */
struct ctl_line *ctl_line_start(struct daemon *d, struct ctl_client *c, const char *text,
                                size_t len, json_t **reply, unsigned *flags)
{
	*flags = 0;
	*reply = NULL;
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
		i++;
	if (i == len)
		return NULL; /* blank line */
	json_error_t jerr;
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
	if (!v) {
		*flags |= CTL_REPLY_CLOSE;
		*reply = ctl_error_obj(NULL, CTL_PARSE_ERROR, "Parse error: %s (column %d)",
		                       jerr.text, jerr.column);
		return NULL;
	}
	bool batch = json_is_array(v);
	size_t n = batch ? json_array_size(v) : 1;
	if (batch && n == 0) {
		json_decref(v);
		*reply = ctl_error_obj(NULL, CTL_INVALID_REQUEST, "Invalid Request: empty batch");
		return NULL;
	}
	if (batch && n > CTL_MAX_BATCH) {
		json_decref(v);
		*reply = ctl_error_obj(NULL, CTL_INVALID_REQUEST,
		                       "Invalid Request: batch of %zu requests (max %u)", n,
		                       CTL_MAX_BATCH);
		return NULL;
	}
	struct ctl_line *L = xcalloc(1, sizeof(*L));
	if (L)
		L->slots = xcalloc(n, sizeof(*L->slots));
	if (!L || !L->slots) {
		xfree(L);
		json_decref(v);
		return NULL;
	}
	L->c = c;
	L->n = n;
	L->batch = batch;
	L->v = v;
	L->d = d;
	if (c && !(L->texts = xcalloc(n, sizeof(*L->texts)))) {
		ctl_line_free(L);
		return NULL;
	}
	/* A client's line goes a request at a time, in turn with other
	 * clients (line_continue); without a client, all at once. */
	if (c)
		return L;
	ctl_line_step(d, L, n);
	*flags = L->flags;
	*reply = line_assemble(L);
	ctl_line_free(L);
	return NULL;
}

json_t *ctl_reply(struct daemon *d, const char *line, size_t len, unsigned *flags)
{
	json_t *r;
	struct ctl_line *L = ctl_line_start(d, NULL, line, len, &r, flags);
	(void)L; /* without a client nothing is posted: never pending */
	return r;
}
