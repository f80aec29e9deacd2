/*
 * daemon/ctl/inproc.c: the in-process way in to the dispatcher, for the
 * HTTP door (ctl/rpc_http.c): a worker thread's call is queued here, the
 * loop takes it on a uv_async and serves it as a control-socket client of
 * its own (ctl/server.c: one line, then EOF), so every method, the turns
 * between clients and the reply budget are the control socket's, and the
 * worker waits on a condition variable for the reply. This replaced a
 * Unix connection per worker to the control socket: no socket, no copy of
 * the request and reply through the kernel, no parsing of the reply line
 * for its end.
 *
 * The HTTP server also calls from the loop itself (ctl_inproc_submit): the
 * call is queued as a client at once, and its reply goes to a callback
 * instead of a waiting worker: no thread, no wakeup.
 *
 * Threads: ctl_inproc_call on any thread but the loop (it blocks); all the
 * rest on the loop thread. The loop never waits for a worker: delivering
 * a reply is a lock and a signal.
 *
 * Lock order: `mu` is a leaf. A call's `done` and its reply are written
 * under `mu` by the loop, and read under it by its worker; once `done` is
 * set the loop forgets the call (it lives on the worker's stack).
 */
#include "daemon/ctl/internal.h"

#include <errno.h>
#include <string.h>

#include "json/json.h"

/** One call from a worker (on its stack while it waits). */
struct ctl_inproc_call {
	const char *line; /**< the request line, no newline (the worker's) */
	size_t len;
	char *reply; /**< (mu) the reply line (xmalloc'd, no newline), or NULL */
	size_t reply_len;
	bool want_texts; /**< ctl_inproc_call_texts: the replies by request, not joined */
	char **texts;    /**< (mu) with want_texts: the dispatcher's texts (n_texts), or NULL */
	size_t n_texts;
	bool batch;      /**< (mu) with want_texts: the line was answered as a batch */
	bool want_bytes; /**< ctl_inproc_call_bytes: a result's bytes out of band */
	struct ctl_bytes
	    raw;   /**< (mu) with want_bytes: a method's bytes (the worker's once done) */
	bool done; /**< (mu) reply set, or the call failed */
	ctl_inproc_done_fn fn; /**< a loop caller's (ctl_inproc_submit): no worker waits */
	void *arg;
	uv_cond_t cond;
	struct ctl_inproc_call *next; /**< (mu) on the queue */
};

struct ctl_inproc {
	struct daemon *d;
	uv_async_t async;
	uv_mutex_t mu;
	struct ctl_inproc_call *head, **tail; /**< (mu) calls the loop has not taken */
	bool refusing;                        /**< (mu) stopping: calls fail at once */
	struct ctl_client *dead; /**< (loop) closed clients, freed on the next wakeup */
	uint64_t calls, failed;  /**< (loop) calls served, calls failed */
};

/* Hand the worker its answer (reply NULL: the call failed). Loop thread. */
static void finish_texts(struct ctl_inproc *ip, struct ctl_inproc_call *call, char **texts,
                         size_t n, bool batch)
{
	uv_mutex_lock(&ip->mu);
	call->texts = texts;
	call->n_texts = n;
	call->batch = batch;
	call->done = true;
	uv_cond_signal(&call->cond);
	uv_mutex_unlock(&ip->mu);
	ip->calls++;
}

static void finish(struct ctl_inproc *ip, struct ctl_inproc_call *call, char *reply, size_t len)
{
	if (call->fn) {
		/* A loop caller's: nobody waits, the call was ours. */
		ctl_inproc_done_fn fn = call->fn;
		void *arg = call->arg;
		struct ctl_bytes raw = call->raw;
		xfree(call);
		if (reply)
			ip->calls++;
		else
			ip->failed++;
		fn(arg, reply, len, raw.p, raw.len);
		return;
	}
	uv_mutex_lock(&ip->mu);
	call->reply = reply;
	call->reply_len = len;
	call->done = true;
	uv_cond_signal(&call->cond);
	uv_mutex_unlock(&ip->mu);
	if (reply)
		ip->calls++;
	else
		ip->failed++;
}

static void reap(struct ctl_inproc *ip)
{
	while (ip->dead) {
		struct ctl_client *c = ip->dead;
		ip->dead = c->next_dead;
		ctl_client_free(c);
	}
}

static void async_cb(uv_async_t *a)
{
	struct ctl_inproc *ip = a->data;
	struct daemon *d = ip->d;
	reap(ip);
	uv_mutex_lock(&ip->mu);
	struct ctl_inproc_call *q = ip->head;
	ip->head = NULL;
	ip->tail = &ip->head;
	uv_mutex_unlock(&ip->mu);
	bool any = false;
	while (q) {
		struct ctl_inproc_call *call = q;
		q = q->next;
		if (ctl_client_inproc_new(d, call, call->line, call->len))
			any = true;
		else
			finish(ip, call, NULL, 0);
	}
	/* Their turn now, with every other client waiting for one: no extra
	 * loop iteration for the idle handle. */
	if (any && d->ctl->ready)
		ctl_turn_cb(&d->ctl->turn);
}

int ctl_inproc_init(struct daemon *d)
{
	struct ctl_inproc *ip = xcalloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->d = d;
	ip->tail = &ip->head;
	if (uv_mutex_init(&ip->mu)) {
		xfree(ip);
		return -ENOMEM;
	}
	int err = uv_async_init(d->loop, &ip->async, async_cb);
	if (err) {
		uv_mutex_destroy(&ip->mu);
		xfree(ip);
		return err;
	}
	ip->async.data = ip;
	/* Only a worker's call wakes it: it must not keep the loop alive. */
	uv_unref((uv_handle_t *)&ip->async);
	d->ctl->inproc = ip;
	return 0;
}

/* Queue c (on the caller's stack) and wait for its answer. */
static void run_call(struct ctl_inproc *ip, struct ctl_inproc_call *c)
{
	if (uv_cond_init(&c->cond))
		return;
	uv_mutex_lock(&ip->mu);
	bool ok = !ip->refusing;
	if (ok) {
		*ip->tail = c;
		ip->tail = &c->next;
		/* Under mu: ctl_inproc_close closes the handle only after
		 * refusing, which it sets under mu. */
		ok = uv_async_send(&ip->async) == 0;
		if (!ok) {
			struct ctl_inproc_call **pp = &ip->head;
			while (*pp != c)
				pp = &(*pp)->next;
			*pp = NULL;
			ip->tail = pp;
		}
	}
	while (ok && !c->done)
		uv_cond_wait(&c->cond, &ip->mu);
	uv_mutex_unlock(&ip->mu);
	uv_cond_destroy(&c->cond);
}

char *ctl_inproc_call(struct ctl_inproc *ip, const char *line, size_t len, size_t *out_len)
{
	struct ctl_inproc_call call = {.line = line, .len = len};
	run_call(ip, &call);
	if (!call.reply)
		return NULL;
	*out_len = call.reply_len;
	return call.reply;
}

char *ctl_inproc_call_bytes(struct ctl_inproc *ip, const char *line, size_t len, size_t *out_len,
                            uint8_t **bytes, size_t *n_bytes)
{
	struct ctl_inproc_call call = {.line = line, .len = len, .want_bytes = true};
	run_call(ip, &call);
	/* Done: nobody else touches the call now. */
	*bytes = NULL;
	*n_bytes = 0;
	if (!call.reply) {
		xfree(call.raw.p);
		return NULL;
	}
	*bytes = call.raw.p;
	*n_bytes = call.raw.len;
	*out_len = call.reply_len;
	return call.reply;
}

/* "00" to "ff": two digits a byte with one load (a digit a load was 13 %
 * of the validation thread's time serving getblock HASH 0). */
static const char hex_pairs[513] = "000102030405060708090a0b0c0d0e0f"
                                   "101112131415161718191a1b1c1d1e1f"
                                   "202122232425262728292a2b2c2d2e2f"
                                   "303132333435363738393a3b3c3d3e3f"
                                   "404142434445464748494a4b4c4d4e4f"
                                   "505152535455565758595a5b5c5d5e5f"
                                   "606162636465666768696a6b6c6d6e6f"
                                   "707172737475767778797a7b7c7d7e7f"
                                   "808182838485868788898a8b8c8d8e8f"
                                   "909192939495969798999a9b9c9d9e9f"
                                   "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
                                   "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
                                   "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
                                   "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
                                   "e0e1e2e3e4e5e6e7e8e9eaebecedeeef"
                                   "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* raw's hex as a JSON string's text ("..."), NUL-terminated; NULL when out of memory. */
static char *quoted_hex(const uint8_t *raw, size_t len, size_t *out_len)
{
	char *t = xmalloc(2 * len + 3);
	if (!t)
		return NULL;
	char *o = t;
	*o++ = '"';
	for (size_t i = 0; i < len; i++, o += 2)
		memcpy(o, hex_pairs + 2 * raw[i], 2);
	*o++ = '"';
	*o = 0;
	*out_len = 2 * len + 2;
	return t;
}

void ctl_ok_bytes(const struct ctl_chain_ctx *x, struct ctl_result *res, uint8_t *raw, size_t len)
{
	if (x->bytes && !x->bytes->p) {
		/* An in-process caller takes the bytes read: no hex and back. */
		x->bytes->p = raw;
		x->bytes->len = len;
		ctl_ok(res, json_string(""));
		return;
	}
	if (x->text && !x->text->p) {
		/* The job renders text: the hex is written as that text at once,
		 * where json_hex, jansson's copy and the renderer's copy and check
		 * took three fresh buffers of twice the block (each a new mapping
		 * above the malloc threshold: page faults for every 4 kB). */
		size_t n = 0;
		char *t = quoted_hex(raw, len, &n);
		if (t) {
			xfree(raw);
			x->text->p = (uint8_t *)t;
			x->text->len = n;
			ctl_ok(res, json_null()); /* stands for the text (ctl/request.c) */
			return;
		}
	}
	ctl_ok(res, json_hex(raw, len));
	xfree(raw);
}

bool ctl_inproc_wants_bytes(const struct ctl_client *c)
{
	return c->in_process && c->inproc && c->inproc->want_bytes;
}

void ctl_inproc_give_bytes(struct ctl_client *c, struct ctl_bytes *b)
{
	struct ctl_inproc *ip = c->d->ctl->inproc;
	struct ctl_inproc_call *call = c->inproc;
	/* One result's bytes a call: a second (a batch line) is not taken. */
	if (ip && call && call->want_bytes) {
		uv_mutex_lock(&ip->mu);
		bool free_slot = !call->raw.p;
		if (free_slot)
			call->raw = *b;
		uv_mutex_unlock(&ip->mu);
		if (free_slot) {
			b->p = NULL;
			b->len = 0;
			return;
		}
	}
	xfree(b->p);
	b->p = NULL;
	b->len = 0;
}

char **ctl_inproc_call_texts(struct ctl_inproc *ip, const char *line, size_t len, size_t *n,
                             bool *batch)
{
	struct ctl_inproc_call call = {.line = line, .len = len, .want_texts = true};
	run_call(ip, &call);
	*n = call.n_texts;
	*batch = call.batch;
	return call.texts;
}

void ctl_inproc_deliver(struct ctl_client *c, char **texts, size_t n, bool batch)
{
	struct ctl_inproc *ip = c->d->ctl->inproc;
	struct ctl_inproc_call *call = c->inproc;
	char *out = NULL;
	size_t len = 0, count = 0, one = 0;
	for (size_t i = 0; texts && i < n; i++) {
		if (texts[i]) {
			len += strlen(texts[i]);
			count++;
			one = i;
		}
	}
	if (call && call->want_texts && texts) {
		/* The replies as they are, one per request: no join, no copy. */
		c->inproc = NULL;
		finish_texts(ip, call, texts, n, batch);
		return;
	}
	if (!call || !count)
		goto out;
	c->inproc = NULL;
	if (!batch && count == 1) {
		/* The usual case: the reply text itself, not a copy. */
		out = texts[one];
		texts[one] = NULL;
	} else {
		out = xmalloc(len + count + 2);
		if (out) {
			size_t k = 0;
			if (batch)
				out[k++] = '[';
			for (size_t i = 0, m = 0; i < n; i++) {
				if (!texts[i])
					continue;
				if (m++)
					out[k++] = ',';
				size_t l = strlen(texts[i]);
				memcpy(out + k, texts[i], l);
				k += l;
			}
			if (batch)
				out[k++] = ']';
			out[k] = 0;
			len = k;
		}
	}
	finish(ip, call, out, out ? len : 0);
out:
	for (size_t i = 0; texts && i < n; i++)
		xfree(texts[i]);
	xfree(texts);
}

void ctl_inproc_closed(struct ctl_client *c)
{
	struct ctl_inproc *ip = c->d->ctl->inproc;
	if (!ip)
		return; /* cannot happen: ctl_close closes every client first */
	if (c->inproc) {
		finish(ip, c->inproc, NULL, 0);
		c->inproc = NULL;
	}
	/* Freed on the next wakeup, never now: the caller may still read it.
	 * Loop callers (ctl_inproc_submit) send no wakeup of their own, so the
	 * first of the dead asks for one. */
	bool first = !ip->dead;
	c->next_dead = ip->dead;
	ip->dead = c;
	if (first)
		(void)uv_async_send(&ip->async);
}

int ctl_inproc_submit(struct ctl_inproc *ip, const char *line, size_t len, bool want_bytes,
                      bool now, ctl_inproc_done_fn fn, void *arg)
{
	struct daemon *d = ip->d;
	if (ip->refusing)
		return -ECANCELED;
	struct ctl_inproc_call *call = xcalloc(1, sizeof(*call));
	if (!call)
		return -ENOMEM;
	call->fn = fn;
	call->arg = arg;
	call->want_bytes = want_bytes;
	if (!ctl_client_inproc_new(d, call, line, len)) {
		xfree(call);
		return -ECANCELED;
	}
	/* Its turn now: a call the loop answers by itself (getblockcount from
	 * the chain view) is answered before this returns. */
	if (now && d->ctl->ready)
		ctl_turn_cb(&d->ctl->turn);
	return 0;
}

bool ctl_inproc_direct(struct ctl_inproc *ip, const char *method, json_t *params,
                       struct ctl_result *res)
{
	struct daemon *d = ip->d;
	/* Stopping: the usual way gives the usual refusal. */
	if (ip->refusing || d->shutting_down)
		return false;
	const struct ctl_method *m = ctl_method_lookup(method);
	if (!m || !ctl_view_answers(d, m))
		return false;
	/* What the dispatcher would do with the line (handle_request: a
	 * method the view answers runs through ctl_call there too), less the
	 * line's text, its parse, the client and the reply's envelope. */
	DLOG_DBG(&d->log, DLOG_CTL, "request %s", method);
	ctl_call(d, method, params, res);
	ip->calls++;
	return true;
}

void ctl_inproc_stop(struct daemon *d)
{
	struct ctl_inproc *ip = d->ctl->inproc;
	if (!ip)
		return;
	uv_mutex_lock(&ip->mu);
	ip->refusing = true;
	struct ctl_inproc_call *q = ip->head;
	ip->head = NULL;
	ip->tail = &ip->head;
	uv_mutex_unlock(&ip->mu);
	while (q) {
		struct ctl_inproc_call *call = q;
		q = q->next;
		finish(ip, call, NULL, 0);
	}
	/* Calls the loop took and has not answered end too: their workers
	 * must return so the HTTP threads can be joined. */
	for (struct ctl_client *c = d->ctl->clients; c; c = c->next) {
		if (c->inproc) {
			finish(ip, c->inproc, NULL, 0);
			c->inproc = NULL;
		}
	}
}

static void close_cb(uv_handle_t *h)
{
	struct ctl_inproc *ip = h->data;
	reap(ip);
	uv_mutex_destroy(&ip->mu);
	xfree(ip);
}

void ctl_inproc_close(struct daemon *d)
{
	struct ctl_inproc *ip = d->ctl->inproc;
	if (!ip)
		return;
	ctl_inproc_stop(d);
	d->ctl->inproc = NULL;
	/* The dead are freed at the close callback: the caller (a stop
	 * answered to an in-process client) may still be using one. */
	uv_close((uv_handle_t *)&ip->async, close_cb);
}

json_t *ctl_inproc_stats_json(const struct daemon *d)
{
	const struct ctl_inproc *ip = d->ctl->inproc;
	if (!ip)
		return json_null();
	return json_pack("{s:I, s:I}", "calls", (json_int_t)ip->calls, "failed",
	                 (json_int_t)ip->failed);
}
