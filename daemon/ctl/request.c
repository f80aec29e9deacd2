/*
 * daemon/ctl/request.c: the control socket's requests: one line of
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
 * fairness between clients) is ctl/server.c's; it hands this file a line and gets
 * the reply text back through ctl_line_finish.
 *
 * Memory: a reply's JSON tree is about ten times its text (getblock HASH 3
 * of a block with 20,001 outputs: a 27 MB tree, 2.7 MB of text), so a
 * client's reply is kept as text from the moment it is made, and a chain
 * method's is rendered on the validation thread, which holds one tree at a
 * time: jobs waiting for the loop hold text only. The text counts against
 * CTL_MAX_QUEUED_TOTAL as soon as it comes back (ctl_budget_check), and a
 * chain call starts only when the bytes held and those it and the jobs out
 * are likely to bring fit it (ctl_line_step, ctl_reply_room).
 */
#include "daemon/ctl/internal.h"

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
	bool legacy;            /**< a JSON-RPC 1.0 request: answered in its shape */
	bool render;            /**< the validation thread renders the result into `text` */
	char *text;             /**< the result as text (then res.result is NULL), or NULL */
	struct ctl_bytes bytes; /**< a result's bytes for an in-process caller (ctx.bytes) */
	struct ctl_bytes rtext; /**< a result the method wrote as text (ctx.text) */
	struct ctl_wait wait;   /**< ctx.wait: a longpoll asks to run again (ctl/longpoll.c) */
	size_t text_len;
	/* On d->ctl->inflight from its post until it is back: getrpcinfo lists it. */
	struct ctl_job *in_prev, *in_next;
	uint64_t start_ns; /**< uv_hrtime() at the post */
};

static void inflight_add(struct daemon *d, struct ctl_job *j)
{
	j->start_ns = uv_hrtime();
	j->in_prev = NULL;
	j->in_next = d->ctl->inflight;
	if (j->in_next)
		j->in_next->in_prev = j;
	d->ctl->inflight = j;
}

static void inflight_remove(struct daemon *d, struct ctl_job *j)
{
	if (j->in_prev)
		j->in_prev->in_next = j->in_next;
	else if (d->ctl->inflight == j)
		d->ctl->inflight = j->in_next;
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
	const struct ctl_job *last = d->ctl->inflight;
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

/** A result string at least this long may skip jansson's dump (plain_string). */
#define CTL_PLAIN_MIN 65536u

/*
 * A long string result that needs no escaping (getblock HASH 0's hex:
 * megabytes) as its JSON text, quoted, with one copy, instead of jansson's
 * character-by-character dump and json_format's pass over it; NULL for
 * anything else (the caller formats it).
 */
static char *plain_string(const json_t *v)
{
	if (!json_is_string(v) || json_string_length(v) < CTL_PLAIN_MIN)
		return NULL;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	/* What jansson would escape, and anything not ASCII, eight bytes at a
	 * time (a byte a time was 20 % of a getblock HASH 0): a high bit, a
	 * byte below 0x20, or a byte equal to 0x7f, '"' or '\\' (the
	 * has-zero-byte and has-less-than tricks: exact as "any"). */
	const uint64_t L = 0x0101010101010101ull, H = 0x8080808080808080ull;
	uint64_t bad = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, q, b, d;
		memcpy(&x, s + i, 8);
		q = x ^ (L * 0x22);
		b = x ^ (L * 0x5c);
		d = x ^ (L * 0x7f);
		bad |= x | ((x - L * 0x20) & ~x) | ((q - L) & ~q) | ((b - L) & ~b) | ((d - L) & ~d);
	}
	bad &= H;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bad |= (uint64_t)(c < 0x20 || c >= 0x7f || c == '"' || c == '\\');
	}
	if (bad)
		return NULL;
	char *t = xmalloc(n + 3);
	if (!t)
		return NULL;
	t[0] = '"';
	memcpy(t + 1, s, n);
	t[n + 1] = '"';
	t[n + 2] = 0;
	return t;
}

/* Validation thread. */
static void job_work(struct chain *chain, struct mempool *mp, struct val_job *vj)
{
	struct ctl_job *j = (struct ctl_job *)vj;
	j->ctx.mempool = mp;
	if (!chain)
		ctl_fail(&j->res, CTL_MISC_ERROR, "the chain is not loaded");
	else
		j->m->chain_fn(chain, &j->ctx, j->args, &j->res);
	/* A result the method wrote as text itself (ctl_ok_bytes): already
	 * rendered, and taken only as the job's final result. */
	if (j->rtext.p) {
		if (!j->res.err_code && j->res.result && !j->wait.wanted) {
			j->text = (char *)j->rtext.p;
			j->text_len = j->rtext.len;
			json_decref(j->res.result);
			j->res.result = NULL;
		} else {
			xfree(j->rtext.p);
		}
		j->rtext.p = NULL;
	}
	/* A call that waits runs again with the same arguments, and has no result yet. */
	if (j->wait.wanted && !j->res.err_code)
		return;
	json_decref(j->args);
	j->args = NULL;
	/* Rendered here, where the tree was built: the loop gets a tenth of
	 * the memory, and only one tree exists at a time. */
	if (j->render && !j->res.err_code && j->res.result) {
		j->text = plain_string(j->res.result);
		if (!j->text)
			j->text = json_format(j->res.result, JSON_COMPACT);
		if (j->text) {
			j->text_len = strlen(j->text);
			json_decref(j->res.result);
			j->res.result = NULL;
		}
	}
}

/* Around a result's text (taken): the response as response() and
 * json_format would write it ("jsonrpc" first; 1.0: "error" last). NULL
 * when out of memory (the text is freed). */
static char *wrap_text(json_t *id, bool legacy, char *result, size_t rlen, size_t *len)
{
	const char *pre = legacy ? "{\"result\":" : "{\"jsonrpc\":\"2.0\",\"result\":";
	const char *mid = ",\"id\":";
	const char *post = legacy ? ",\"error\":null}" : "}";
	char *idt = json_format(id ? id : json_null(), JSON_COMPACT);
	size_t np = strlen(pre), nm = strlen(mid), ni = idt ? strlen(idt) : 0, nq = strlen(post);
	size_t n = np + rlen + nm + ni + nq;
	/* Grown in place: a large text is its own mapping and mremap moves
	 * no bytes, where a second buffer would hold the reply twice. */
	char *t = idt ? xrealloc(result, n + 1) : NULL;
	if (!t) {
		xfree(idt);
		xfree(result);
		return NULL;
	}
	memmove(t + np, t, rlen);
	memcpy(t, pre, np);
	memcpy(t + np + rlen, mid, nm);
	memcpy(t + np + rlen + nm, idt, ni);
	memcpy(t + np + rlen + nm + ni, post, nq + 1);
	xfree(idt);
	*len = n;
	return t;
}

static void slot_set_text(struct ctl_line *L, size_t k, char *t, size_t n);

/* Loop thread: the result goes into its slot; the last one answers the line. */
static void job_done(struct daemon *d, struct val_job *vj)
{
	struct ctl_job *j = (struct ctl_job *)vj;
	struct ctl_line *L = j->line;
	if (j->wait.wanted && !j->res.err_code && !vj->cancelled) {
		/* Still on getrpcinfo's list: Core lists a waiting call too. But
		 * no job out for the reply budget (ctl/budget.c), which would
		 * otherwise hold every client's chain calls while it waits. */
		if (d->ctl->jobs)
			d->ctl->jobs--;
		ctl_reply_kick(d);
		ctl_longpoll_park(d, &j->wait);
		return;
	}
	/* Before the reply: the waiting call must hold them when it wakes. */
	if (j->bytes.p && !vj->cancelled && !L->orphan && L->c)
		ctl_inproc_give_bytes(L->c, &j->bytes);
	xfree(j->bytes.p);
	if (vj->cancelled) {
		json_decref(j->args);
		xfree(j->text);
		j->text = NULL;
		ctl_fail(&j->res, CTL_MISC_ERROR, "peerd is shutting down");
	} else if (j->m->finish && !j->res.err_code) {
		j->m->finish(d, NULL, &j->res);
	}
	size_t n = 0;
	if (j->text) {
		/* Its tree was freed on the validation thread: count it toward
		 * the next malloc_trim, as the P2P side counts what it frees. */
		recvbudget_note_freed(d, (uint64_t)j->text_len * CTL_TREE_PER_TEXT);
		char *t = L->orphan ? NULL : wrap_text(j->id, j->legacy, j->text, j->text_len, &n);
		if (L->orphan)
			xfree(j->text);
		j->text = NULL;
		if (j->res.stop)
			L->flags |= CTL_REPLY_STOP;
		if (t)
			slot_set_text(L, j->slot, t, n);
		else if (!L->orphan)
			L->slots[j->slot] =
			    ctl_error_obj(json_incref(j->id), CTL_INTERNAL_ERROR, "out of memory");
	} else {
		json_t *r = response(j->id, !j->id, &j->res, &L->flags);
		if (j->legacy)
			r = legacy_shape(r);
		if (L->orphan)
			json_decref(r); /* the client left: nobody reads it */
		else if (j->id)
			L->slots[j->slot] = r;
	}
	if (!L->orphan && j->id) {
		slot_pack(L, j->slot);
		n = L->texts[j->slot] ? strlen(L->texts[j->slot]) : 0;
	}
	ctl_budget_note_reply(d, n);
	json_decref(j->id);
	inflight_remove(d, j);
	xfree(j);
	if (d->ctl->jobs)
		d->ctl->jobs--;
	ctl_reply_kick(d);
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
	j->base.after_reindex = ctl_method_moves_chain(m);
	j->line = L;
	j->slot = slot;
	j->id = id ? json_incref(id) : NULL;
	j->m = m;
	j->ctx.net = d->params;
	j->ctx.netdir = validation_netdir(d);
	j->ctx.interrupt = &d->val->interrupt;
	j->ctx.conf = d->conf;
	j->ctx.n_peers = d->n_peers;
	j->ctx.indexes = d->indexes;
	j->ctx.fees = d->fees;
	j->args = copy;
	j->legacy = legacy;
	/* A finish needs the tree on the loop; a notification gets no reply. */
	j->render = L->texts && !m->finish && id;
	/* Only a caller that takes bytes gets them, for a lone request (one
	 * call has room for one result's bytes): every other answer is the text. */
	if (L->c && id && !L->batch && !m->finish && ctl_inproc_wants_bytes(L->c))
		j->ctx.bytes = &j->bytes;
	if (j->render)
		j->ctx.text = &j->rtext;
	j->wait.job = j;
	j->ctx.wait = &j->wait;
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
		d->ctl->jobs++;
	return true;
}

/* ---- parked calls (ctl/longpoll.c) --------------------------------------------- */

bool ctl_job_repost(struct daemon *d, struct ctl_job *j)
{
	j->wait.wanted = false;
	memset(&j->res, 0, sizeof(j->res));
	j->base.cancelled = false;
	if (validation_post(d, &j->base))
		return false;
	d->ctl->jobs++;
	return true;
}

void ctl_job_fail(struct daemon *d, struct ctl_job *j, int code, const char *msg)
{
	j->wait.wanted = false;
	json_decref(j->args);
	j->args = NULL;
	ctl_fail(&j->res, code, "%s", msg);
	d->ctl->jobs++; /* job_done counts it back */
	job_done(d, &j->base);
}

bool ctl_job_orphaned(const struct ctl_job *j)
{
	return j->line->orphan || !j->line->c;
}

/* ---- loop methods' replies that wait (ctl_later_fn) ---------------------------- */

/* A parked reply: the line and slot it fills, and the method's result. */
struct ctl_later {
	struct ctl_line *line;
	size_t slot;
	json_t *id; /**< NULL for a notification */
	bool legacy;
	struct ctl_result res;
};

/* Park res for L's slot and hand it to the method's later function; false
 * (res untouched: answered now) when out of memory. */
static bool later_park(struct daemon *d, struct ctl_line *L, size_t slot, json_t *id, bool legacy,
                       struct ctl_result *res)
{
	struct ctl_later *w = xmalloc(sizeof(*w));
	if (!w)
		return false;
	w->line = L;
	w->slot = slot;
	w->id = id ? json_incref(id) : NULL;
	w->legacy = legacy;
	w->res = *res; /* the result's reference moves with it */
	L->outstanding++;
	res->later(d, w);
	return true;
}

void ctl_later_done(struct daemon *d, struct ctl_later *w)
{
	struct ctl_line *L = w->line;
	json_t *r = response(w->id, !w->id, &w->res, &L->flags);
	if (w->legacy)
		r = legacy_shape(r);
	if (L->orphan || !w->id)
		json_decref(r); /* the client left, or a notification: nobody reads it */
	else
		L->slots[w->slot] = r;
	if (!L->orphan && w->id)
		slot_pack(L, w->slot);
	json_decref(w->id);
	xfree(w);
	/* As a chain job's return (job_done): the last one answers the line. */
	if (--L->outstanding == 0 && (L->next == L->n || !L->c))
		ctl_line_finish(d, L);
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
	const struct ctl_json_note *note = ctl_json_note(&L->notes, slot);
	/* Core's transformNamedArguments, before anything else looks at
	 * the arguments: jansson kept only the last of a repeated name. */
	if (m && note && note->dup_key && json_is_object(params)) {
		ctl_fail(&res, CTL_INVALID_PARAMETER, "Parameter %s specified multiple times",
		         note->dup_key);
	} else if (m && m->chain_fn && L->c && d->val->started && !ctl_view_answers(d, m)) {
		/* A chain method goes to the validation thread when there is one and
		 * a client to answer later; a loop method (or a chain method that
		 * has a loop fallback) runs here and now. */
		if (post_chain(d, L, slot, m, notification ? NULL : id, params, legacy, &res))
			return;
	} else {
		ctl_call(d, name, params, &res);
		/* A reply that waits for an event (ctl_later_fn): parked. */
		if (res.later && !res.err_code && L->c &&
		    later_park(d, L, slot, notification ? NULL : id, legacy, &res))
			return;
	}
	*out = response(id, notification, &res, &L->flags);
	if (legacy)
		*out = legacy_shape(*out);
}

void ctl_line_orphan(struct ctl_line *L)
{
	L->orphan = true;
	json_decref(L->v);
	L->v = NULL;
	for (size_t i = 0; i < L->n; i++) {
		json_decref(L->slots[i]);
		L->slots[i] = NULL;
		if (L->texts) {
			xfree(L->texts[i]);
			L->texts[i] = NULL;
		}
	}
	L->d->ctl->line_bytes -= L->text_bytes;
	recvbudget_note_freed(L->d, L->text_bytes);
	L->text_bytes = 0;
}

void ctl_line_free(struct ctl_line *L)
{
	json_decref(L->v);
	ctl_json_notes_release(&L->notes);
	if (L->texts) {
		for (size_t i = 0; i < L->n; i++)
			xfree(L->texts[i]);
		xfree(L->texts);
		L->d->ctl->line_bytes -= L->text_bytes;
	}
	for (size_t i = 0; i < L->n; i++)
		json_decref(L->slots[i]);
	xfree(L->slots);
	xfree(L);
}

/* Reply k of a client line is text t (n bytes, taken): counted at once. */
static void slot_set_text(struct ctl_line *L, size_t k, char *t, size_t n)
{
	/* An id jansson could not hold goes back as the client wrote it. */
	const struct ctl_json_note *note = ctl_json_note(&L->notes, k);
	if (note && note->id_text)
		(void)ctl_json_set_id(&t, &n, note->id_text); /* no memory: the id as parsed */
	L->texts[k] = t;
	L->text_bytes += n;
	L->d->ctl->line_bytes += n;
	ctl_budget_check(L->d);
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
	slot_set_text(L, k, t, strlen(t));
}

char **ctl_line_take_texts(struct ctl_line *L, size_t *n)
{
	size_t count = 0;
	for (size_t i = 0; i < L->n; i++)
		count += L->texts[i] != NULL;
	*n = L->n;
	if (!count)
		return NULL;
	char **t = L->texts;
	L->texts = NULL;
	L->d->ctl->line_bytes -= L->text_bytes;
	L->text_bytes = 0;
	return t;
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

/* Would handle_request post req to the validation thread? */
static bool posts_job(const struct daemon *d, const struct ctl_line *L, json_t *req)
{
	json_t *name = json_is_object(req) ? json_object_get(req, "method") : NULL;
	const struct ctl_method *m =
	    json_is_string(name) ? ctl_method_lookup(json_string_value(name)) : NULL;
	return m && m->chain_fn && L->c && d->val->started && !ctl_view_answers(d, m);
}

/* Start up to `max` more of L's requests; the parsed line goes once all started. */
bool ctl_line_step(struct daemon *d, struct ctl_line *L, size_t max)
{
	/* An orphan's client is closing: the rest is never answered. */
	for (; max && L->next < L->n && !L->orphan; max--, L->next++) {
		json_t *req = L->batch ? json_array_get(L->v, L->next) : L->v;
		/* A chain call's reply is counted before it is built: it waits
		 * while the budget has no room for what it may bring. */
		if (posts_job(d, L, req) && !ctl_reply_room(d, L->c))
			return false;
		handle_request(d, L, L->next, req);
		slot_pack(L, L->next);
	}
	if (L->next == L->n) {
		json_decref(L->v);
		L->v = NULL;
	}
	return true;
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
	struct ctl_json_notes notes;
	json_t *v = ctl_json_load(text, len, &jerr, &notes);
	if (!v) {
		*flags |= CTL_REPLY_CLOSE;
		*reply = ctl_error_obj(NULL, CTL_PARSE_ERROR, "Parse error: %s (column %d)",
		                       jerr.text, jerr.column);
		return NULL;
	}
	bool batch = json_is_array(v);
	size_t n = batch ? json_array_size(v) : 1;
	if (batch && n == 0) {
		ctl_json_notes_release(&notes);
		json_decref(v);
		*reply = ctl_error_obj(NULL, CTL_INVALID_REQUEST, "Invalid Request: empty batch");
		return NULL;
	}
	if (batch && n > CTL_MAX_BATCH) {
		ctl_json_notes_release(&notes);
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
		ctl_json_notes_release(&notes);
		json_decref(v);
		return NULL;
	}
	L->c = c;
	L->n = n;
	L->batch = batch;
	L->v = v;
	L->d = d;
	L->notes = notes;
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
