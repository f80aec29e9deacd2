/*
 * daemon/ctl/server.c: the control socket server: newline-delimited JSON-RPC 2.0
 * on a Unix socket, served on the loop thread. This file is the
 * connection side: the socket, each client's reads and writes, and the
 * limits and turns that keep one client from starving the others or the
 * daemon. What a line of requests means is ctl/request.c's.
 *
 * Socket: <netdir>/control.sock (the network's directory in the datadir), or controlsocket=;
 * created with mode 0600 (umask around bind, then chmod). At startup an existing socket file that
 * nobody listens on (connect() fails with ECONNREFUSED: a crashed peerd's
 * leftover) is replaced; one that answers means another peerd is running,
 * a clear startup error; anything else at that path is left alone and is
 * also an error. The file is removed at shutdown.
 */
#include "daemon/ctl/internal.h"

#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/** Clients connected at once; more are closed on accept. */
#define CTL_MAX_CLIENTS 128u
/** First read buffer; it doubles up to CTL_MAX_LINE + CTL_READ_CHUNK. */
#define CTL_READ_CHUNK 4096u
#define CTL_BACKLOG    128
/** Replies queued to one client before peerd stops reading its requests. */
#define CTL_MAX_PENDING 32u
/**
 * Chain jobs of clients' lines out at once: their results come back to
 * the loop together, and each may cost a getstats; more wait their turn.
 */
#define CTL_MAX_JOBS 16u
/** Requests of a client's line started per loop turn (then other clients go). */
#define CTL_REQUESTS_PER_TURN 1u
/**
 * A line alone on the ready list goes on past CTL_REQUESTS_PER_TURN for
 * this long of the loop's time, while its calls are the loop's (none out
 * to the validation thread): nobody else is waiting for a turn, and a turn
 * per call was most of a batch of small calls' cost (160,000 batched
 * addpeeraddress over HTTP). A client or peer arriving meanwhile waits at
 * most this long. Chain calls keep one a turn: going on with them let 199
 * hostile getstats batches hold uptime for 9-36 ms instead of under 1
 * (bench CtlHostileClients).
 */
#define CTL_ALONE_TURN_NS 100000u
/** Reply bytes queued to one client before peerd stops reading its requests. */
#define CTL_MAX_QUEUED (1u << 20)
/** A client over CTL_MAX_QUEUED whose replies make no progress this long is dropped. */
#define CTL_WRITE_STALL_MS 10000u
/**
 * Read buffers of all clients together. One line may be CTL_MAX_LINE (8
 * MB): a few such requests fit at once; past it, the client holding the
 * largest buffer goes.
 */
#define CTL_MAX_READ_TOTAL (4u * (CTL_MAX_LINE + CTL_READ_CHUNK))
/** A read buffer larger than this is freed once empty (a submitblock's 8 MB). */
#define CTL_KEEP_BUFFER (64u * 1024u)

/* One reply line on its way: the texts it writes are its own until written. */
struct ctl_wreq {
	uv_write_t req;
	struct ctl_client *c;
	size_t len;   /**< bytes it writes, counted in queued */
	size_t n;     /**< entries of texts (NULL ones are skipped) */
	char **texts; /**< xfree'd with it */
};

static void free_texts(char **texts, size_t n)
{
	for (size_t i = 0; texts && i < n; i++)
		xfree(texts[i]);
	xfree(texts);
}

/* A complete line waits in c's buffer (NULL once a large one was freed). */
static bool has_line(const struct ctl_client *c)
{
	return c->len && memchr(c->buf, '\n', c->len);
}

static void ready_remove(struct ctl_client *c)
{
	struct ctl_server *s = c->d->ctl;
	ctl_budget_unwait(c);
	if (!c->ready)
		return;
	for (struct ctl_client **pp = &s->ready; *pp; pp = &(*pp)->next_ready) {
		if (*pp == c) {
			*pp = c->next_ready;
			break;
		}
	}
	c->ready = false;
	c->next_ready = NULL;
}

void ctl_client_free(struct ctl_client *c)
{
	struct daemon *d = c->d;
	ready_remove(c);
	d->ctl->read_bytes -= c->cap;
	if (c->line && c->line->outstanding)
		c->line->c = NULL; /* its jobs finish and free it without us */
	else if (c->line)
		ctl_line_free(c->line);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->ctl->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	d->ctl->n_clients--;
	xfree(c->buf);
	xfree(c);
}

static void client_close_cb(uv_handle_t *h)
{
	ctl_client_free(h->data);
}

void ctl_client_close(struct ctl_client *c)
{
	if (c->closing)
		return;
	struct ctl_server *s = c->d->ctl;
	c->closing = true;
	s->n_live--;
	ready_remove(c);
	/* What it held is given back now, not at the close callback: the
	 * budget must see the room at once, or the next check drops another. */
	if (c->line)
		ctl_line_orphan(c->line);
	s->budget.dying_queued += c->queued;
	if (c->in_process)
		ctl_inproc_closed(c);
	else
		uv_close((uv_handle_t *)&c->pipe, client_close_cb);
	ctl_reply_kick(c->d);
}

static void process(struct ctl_client *c);
static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* Read from the client exactly when its requests can be taken: not while
 * its replies pile up, not while a line waits for the validation thread
 * (requests wait in the socket meanwhile), not after EOF or an error. */
static void update_reading(struct ctl_client *c)
{
	bool want = !c->closing && !c->close_after_write && !c->read_paused && !c->line &&
	            !c->eof && !c->ready;
	if (want == c->reading)
		return;
	if (want) {
		if (uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb)) {
			ctl_client_close(c);
			return;
		}
	} else {
		uv_read_stop((uv_stream_t *)&c->pipe);
	}
	c->reading = want;
}

/* A client that pipelines requests without reading the replies is paused
 * (its unread requests wait in the socket) until it catches up. */
static void maybe_resume(struct ctl_client *c)
{
	if (!c->read_paused || c->closing || c->close_after_write ||
	    c->pending_writes > CTL_MAX_PENDING / 2 || c->queued > CTL_MAX_QUEUED / 2)
		return;
	c->read_paused = false;
	process(c);
	update_reading(c);
}

static void write_cb(uv_write_t *req, int status)
{
	struct ctl_wreq *w = (struct ctl_wreq *)req;
	struct ctl_client *c = w->c;
	struct ctl_server *s = c->d->ctl;
	c->queued -= w->len;
	s->queued -= w->len;
	if (c->closing)
		s->budget.dying_queued -= w->len;
	recvbudget_note_freed(c->d, w->len);
	free_texts(w->texts, w->n);
	xfree(w);
	ctl_reply_kick(c->d);
	c->pending_writes--;
	if (status == 0)
		c->active_ms = c->wrote_ms = daemon_now_ms(c->d);
	if (c->stop_after_write && c->pending_writes == 0) {
		c->stop_after_write = false;
		daemon_shutdown(c->d, "stop requested on the control socket");
		return;
	}
	if (c->closing)
		return;
	if (status < 0 || (c->close_after_write && c->pending_writes == 0 && !c->line))
		ctl_client_close(c);
	else
		maybe_resume(c);
}

/* Queue one line: texts (n, NULL ones skipped; the array and the texts
 * are taken) as itself, or as a batch's array "[a,b]". */
static void send_texts(struct ctl_client *c, char **texts, size_t n, bool batch)
{
	if (c->in_process) {
		ctl_inproc_deliver(c, texts, n, batch);
		return;
	}
	size_t count = 0;
	for (size_t i = 0; texts && i < n; i++)
		count += texts[i] != NULL;
	/* One buffer per text and per separator: the texts are written where
	 * they are, never copied into one (a batch's replies would be held twice). */
	struct ctl_wreq *w = count && !c->closing ? xcalloc(1, sizeof(*w)) : NULL;
	uv_buf_t *b = w ? xcalloc(2 * count + 1, sizeof(*b)) : NULL;
	if (!b) {
		free_texts(texts, n);
		xfree(w);
		if (count && !c->closing)
			ctl_client_close(c); /* out of memory: a reply would be lost */
		return;
	}
	unsigned k = 0;
	if (batch)
		b[k++] = uv_buf_init((char *)"[", 1);
	for (size_t i = 0; i < n; i++) {
		if (!texts[i])
			continue;
		if (batch && k > 1)
			b[k++] = uv_buf_init((char *)",", 1);
		b[k++] = uv_buf_init(texts[i], (unsigned)strlen(texts[i]));
	}
	b[k++] = batch ? uv_buf_init((char *)"]\n", 2) : uv_buf_init((char *)"\n", 1);
	*w = (struct ctl_wreq){.c = c, .n = n, .texts = texts};
	for (unsigned i = 0; i < k; i++)
		w->len += b[i].len;
	int err = uv_write(&w->req, (uv_stream_t *)&c->pipe, b, k, write_cb);
	xfree(b); /* libuv keeps its own copy of the list */
	if (err) {
		free_texts(texts, n);
		xfree(w);
		ctl_client_close(c);
		return;
	}
	if (!c->pending_writes)
		c->wrote_ms = daemon_now_ms(c->d);
	c->pending_writes++;
	c->queued += w->len;
	c->d->ctl->queued += w->len;
	ctl_budget_check(c->d);
}

/* v (a reference, taken; NULL: none) as a text array for send_texts;
 * NULL when none or out of memory (*failed). */
static char **json_texts(json_t *v, bool *failed)
{
	char *s = v ? json_format(v, JSON_COMPACT) : NULL;
	char **one = s ? xmalloc(sizeof(*one)) : NULL;
	*failed = v && !one;
	json_decref(v);
	if (!one)
		xfree(s);
	else
		one[0] = s;
	return one;
}

/* Queue a JSON value as one line; takes the reference. */
static void send_json(struct ctl_client *c, json_t *v)
{
	bool failed;
	char **t = json_texts(v, &failed);
	if (failed && !c->closing)
		ctl_client_close(c);
	send_texts(c, t, 1, false);
}

/* Write a line's reply (texts as send_texts takes them; NULL: none) and act on its flags. */
static void deliver_texts(struct ctl_client *c, char **texts, size_t n, bool batch, unsigned flags)
{
	if (flags & CTL_REPLY_STOP)
		c->stop_after_write = true;
	send_texts(c, texts, n, batch);
	if (flags & CTL_REPLY_CLOSE)
		c->close_after_write = true;
	/* A stop sent as a notification gets no reply, so write_cb would
	 * never start the shutdown (and the client would never be closed):
	 * start it now. */
	if (c->stop_after_write && !c->pending_writes) {
		c->stop_after_write = false;
		daemon_shutdown(c->d, "stop requested on the control socket");
	}
}

static void deliver(struct ctl_client *c, json_t *r, unsigned flags)
{
	bool failed;
	char **t = json_texts(r, &failed);
	if (failed && !c->closing) {
		ctl_client_close(c);
		return;
	}
	deliver_texts(c, t, 1, false, flags);
}

void ctl_line_finish(struct daemon *d, struct ctl_line *L)
{
	(void)d;
	struct ctl_client *c = L->c;
	unsigned flags = L->flags;
	if (!c) {
		ctl_line_free(L); /* the client left: nobody to answer */
		return;
	}
	size_t n = 0;
	bool batch = L->batch;
	char **texts = c->closing ? NULL : ctl_line_take_texts(L, &n);
	ctl_line_free(L);
	c->line = NULL;
	if (c->closing)
		return;
	deliver_texts(c, texts, n, batch, flags);
	/* Requests that waited behind this line go on in the client's next turn. */
	if (has_line(c))
		ctl_ready_add(c);
	else if (c->eof || c->close_after_write)
		ctl_ready_add(c); /* process() closes it or answers its last line */
	update_reading(c);
}

/*
 * Go on with c's line: CTL_REQUESTS_PER_TURN more requests, then the
 * client waits for its next turn (a batch of 100 heavy calls cannot hold
 * the loop while another client's uptime waits), its chain jobs, or is
 * answered now.
 */
static void line_continue(struct ctl_client *c)
{
	struct ctl_line *L = c->line;
	struct ctl_server *s = c->d->ctl;
	uint64_t t0 = uv_hrtime();
	bool room;
	do
		room = ctl_line_step(c->d, L, CTL_REQUESTS_PER_TURN);
	while (room && !c->closing && L->next < L->n && !s->ready && !L->outstanding &&
	       uv_hrtime() - t0 < CTL_ALONE_TURN_NS);
	if (!room) {
		/* Off the ready list until ctl_reply_kick finds room: no turn spins. */
		ctl_budget_wait(c);
		update_reading(c);
		return;
	}
	if (L->next < L->n) {
		ctl_ready_add(c);
		update_reading(c);
		return;
	}
	if (L->outstanding) {
		update_reading(c);
		return;
	}
	ctl_line_finish(c->d, L);
}

static void handle_line(struct ctl_client *c, const char *line, size_t len)
{
	unsigned flags;
	json_t *r;
	struct ctl_line *L = ctl_line_start(c->d, c, line, len, &r, &flags);
	if (L) {
		c->line = L;
		line_continue(c);
		return;
	}
	deliver(c, r, flags);
}

void ctl_ready_add(struct ctl_client *c)
{
	struct ctl_server *s = c->d->ctl;
	if (c->ready || c->closing)
		return;
	struct ctl_client **pp = &s->ready;
	while (*pp)
		pp = &(*pp)->next_ready;
	*pp = c;
	c->ready = true;
	c->next_ready = NULL;
	if (s->turn_init)
		(void)uv_idle_start(&s->turn, ctl_turn_cb);
}

/* One request line of every ready client, in turn: a client with a
 * backlog of heavy batches gets one line per loop turn, like any other. */
void ctl_turn_cb(uv_idle_t *h)
{
	struct daemon *d = h->data;
	struct ctl_server *s = d->ctl;
	/* Enough chain jobs out: the next turn comes with their results. */
	if (s->jobs >= CTL_MAX_JOBS) {
		uv_idle_stop(h);
		return;
	}
	/* Those ready now, once each; one that stays ready goes to the back. */
	size_t n = 0;
	for (struct ctl_client *c = s->ready; c; c = c->next_ready)
		n++;
	while (n-- && s->ready && s->jobs < CTL_MAX_JOBS) {
		struct ctl_client *c = s->ready;
		s->ready = c->next_ready;
		c->ready = false;
		c->next_ready = NULL;
		if (!c->closing)
			process(c);
	}
	if (!d->ctl->ready)
		uv_idle_stop(h);
}

static void shrink_buffer(struct ctl_client *c)
{
	if (c->len || c->cap <= CTL_KEEP_BUFFER)
		return;
	c->d->ctl->read_bytes -= c->cap;
	xfree(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

static void process(struct ctl_client *c)
{
	size_t start = 0;
	bool more = false;
	if (c->line) {
		if (!c->closing && c->line->next < c->line->n)
			line_continue(c);
		else
			update_reading(c);
		return;
	}
	if (!c->closing && !c->close_after_write && !c->line) {
		if (c->pending_writes >= CTL_MAX_PENDING || c->queued >= CTL_MAX_QUEUED) {
			c->read_paused = true;
		} else {
			/* After a large line the buffer is freed: c->buf is NULL. */
			char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
			size_t n = nl ? (size_t)(nl - c->buf) : 0;
			if (nl && n <= CTL_MAX_LINE) {
				handle_line(c, c->buf, n);
				start = n + 1;
				more = true;
			}
		}
	}
	if (start) {
		memmove(c->buf, c->buf + start, c->len - start);
		c->len -= start;
		shrink_buffer(c);
	}
	if (c->line || c->closing) {
		update_reading(c);
		return;
	}
	/* The next line waits for every other ready client's turn. */
	if (more && !c->close_after_write && has_line(c)) {
		ctl_ready_add(c);
		update_reading(c);
		return;
	}
	/* Over-long: no newline within the first CTL_MAX_LINE + 1 bytes
	 * (a paused client may have many complete lines buffered). */
	if (!c->close_after_write && c->len > CTL_MAX_LINE &&
	    !memchr(c->buf, '\n', CTL_MAX_LINE + 1)) {
		send_json(c, ctl_error_obj(NULL, CTL_INVALID_REQUEST,
		                           "Invalid Request: request line longer than %u bytes",
		                           CTL_MAX_LINE));
		c->close_after_write = true;
	}
	/* EOF: once every complete line is answered, a last request without
	 * a newline is answered too, then the connection closes. */
	if (c->eof && !c->close_after_write && !c->read_paused && !has_line(c)) {
		if (c->len) {
			size_t n = c->len;
			c->len = 0;
			handle_line(c, c->buf, n);
			if (c->line)
				return;
		}
		c->close_after_write = true;
	}
	if (c->close_after_write) {
		c->len = 0;
		if (!c->pending_writes && !c->stop_after_write && !c->closing)
			ctl_client_close(c);
	}
	update_reading(c);
}

/*
 * Room for `more` read-buffer bytes under CTL_MAX_READ_TOTAL? If not, the
 * client holding the largest buffer (the longest idle of equals) is
 * dropped to make it: true when c may grow.
 */
static bool read_room(struct ctl_client *c, size_t more)
{
	struct ctl_server *s = c->d->ctl;
	while (s->read_bytes + more > CTL_MAX_READ_TOTAL) {
		struct ctl_client *victim = NULL;
		for (struct ctl_client *o = s->clients; o; o = o->next) {
			if (o->closing || o->cap <= CTL_KEEP_BUFFER)
				continue;
			if (!victim || o->cap > victim->cap ||
			    (o->cap == victim->cap && o->active_ms < victim->active_ms))
				victim = o;
		}
		if (!victim)
			return false;
		s->read_closed++;
		DLOG_WARNING(&c->d->log, DLOG_CTL,
		             "control client dropped: its %zu-byte request buffer is the largest "
		             "while all clients hold over %u",
		             victim->cap, CTL_MAX_READ_TOTAL);
		/* Its buffer is counted until its close callback: free it now. */
		s->read_bytes -= victim->cap;
		xfree(victim->buf);
		victim->buf = NULL;
		victim->cap = victim->len = 0;
		ctl_client_close(victim);
		if (victim == c)
			return false;
	}
	return true;
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct ctl_client *c = h->data;
	(void)suggested;
	if (c->cap - c->len < CTL_READ_CHUNK / 2 && c->cap < CTL_MAX_LINE + CTL_READ_CHUNK) {
		size_t ncap = c->cap ? c->cap * 2 : CTL_READ_CHUNK;
		if (ncap > CTL_MAX_LINE + CTL_READ_CHUNK)
			ncap = CTL_MAX_LINE + CTL_READ_CHUNK;
		if (read_room(c, ncap - c->cap)) {
			char *nb = xrealloc(c->buf, ncap);
			if (nb) {
				c->d->ctl->read_bytes += ncap - c->cap;
				c->buf = nb;
				c->cap = ncap;
			}
		}
	}
	*buf = uv_buf_init(c->buf ? c->buf + c->len : NULL, (unsigned)(c->cap - c->len));
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct ctl_client *c = s->data;
	(void)buf;
	if (c->closing || nread == 0 || nread == UV_ENOBUFS)
		return;
	if (nread < 0) {
		c->eof = true;
		if (nread != UV_EOF)
			c->close_after_write = true;
		process(c);
		return;
	}
	c->len += (size_t)nread;
	c->active_ms = daemon_now_ms(c->d);
	process(c);
}

static void reject_close_cb(uv_handle_t *h);

/*
 * Accept a connection peerd cannot serve (out of memory) and close it at
 * once: libuv stops watching a listener whose connection is left
 * unaccepted, which would end the control socket for good. The handle is
 * preallocated in the server; while it is still closing the connection
 * waits for its close callback.
 */
static void reject_client(struct daemon *d)
{
	struct ctl_server *s = d->ctl;
	if (s->reject_busy) {
		s->reject_pending = true;
		return;
	}
	s->reject_pending = false;
	if (uv_pipe_init(d->loop, &s->reject, 0))
		return;
	s->reject.data = d;
	s->reject_busy = true;
	(void)uv_accept((uv_stream_t *)&s->pipe, (uv_stream_t *)&s->reject);
	uv_close((uv_handle_t *)&s->reject, reject_close_cb);
}

static void reject_close_cb(uv_handle_t *h)
{
	struct daemon *d = h->data;
	struct ctl_server *s = d->ctl;
	s->reject_busy = false;
	if (s->reject_pending && !uv_is_closing((uv_handle_t *)&s->pipe))
		reject_client(d);
}

/* Close the client idle longest (not `keep`, none waiting on a call). */
static void drop_longest_idle(struct daemon *d, struct ctl_client *keep)
{
	struct ctl_client *victim = NULL;
	for (struct ctl_client *c = d->ctl->clients; c; c = c->next) {
		if (c == keep || c->closing || c->line || c->in_process)
			continue;
		if (!victim || c->active_ms < victim->active_ms)
			victim = c;
	}
	if (!victim)
		return;
	d->ctl->slot_closed++;
	DLOG_WARNING(&d->log, DLOG_CTL,
	             "control client idle %llu ms closed: %u clients is the limit and one slot "
	             "stays free",
	             (unsigned long long)(daemon_now_ms(d) - victim->active_ms), CTL_MAX_CLIENTS);
	ctl_client_close(victim);
}

void ctl_tick(struct daemon *d, uint64_t now_ms)
{
	uint64_t idle_ms = (uint64_t)d->conf->controltimeout_s * 1000u;
	for (struct ctl_client *c = d->ctl->clients; c; c = c->next) {
		if (c->closing)
			continue;
		/* Waiting on a call (a chain job) is not idle. */
		if (idle_ms && !c->line && now_ms - c->active_ms >= idle_ms) {
			d->ctl->idle_closed++;
			DLOG_DBG(&d->log, DLOG_CTL, "control client idle %llu s: closed",
			         (unsigned long long)((now_ms - c->active_ms) / 1000u));
			ctl_client_close(c);
			continue;
		}
		if (c->queued >= CTL_MAX_QUEUED && now_ms - c->wrote_ms >= CTL_WRITE_STALL_MS) {
			d->ctl->stall_closed++;
			DLOG_WARNING(&d->log, DLOG_CTL,
			             "control client dropped: %zu reply bytes unread for %u s",
			             c->queued, CTL_WRITE_STALL_MS / 1000u);
			ctl_client_close(c);
		}
	}
	ctl_budget_tick(d, now_ms);
	ctl_longpoll_tick(d, now_ms);
}

json_t *ctl_stats_json(struct daemon *d)
{
	const struct ctl_server *s = d->ctl;
	json_t *v = json_pack(
	    "{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "clients",
	    (int)s->n_live, "max_clients", (int)CTL_MAX_CLIENTS, "idle_timeout_s",
	    d->conf->controltimeout_s, "queued_bytes", (json_int_t)s->queued, "max_queued_bytes",
	    (json_int_t)CTL_MAX_QUEUED, "line_bytes", (json_int_t)s->line_bytes, "max_reply_bytes",
	    (json_int_t)CTL_MAX_QUEUED_TOTAL, "starve_closed", (json_int_t)s->budget.starve_closed,
	    "read_bytes", (json_int_t)s->read_bytes, "idle_closed", (json_int_t)s->idle_closed,
	    "slot_closed", (json_int_t)s->slot_closed, "stall_closed", (json_int_t)s->stall_closed,
	    "queue_closed", (json_int_t)s->queue_closed, "read_closed", (json_int_t)s->read_closed);
	/* The HTTP door's counters (ctl/rpc_http.c); null when it is off. */
	if (v) {
		json_object_set_new(v, "http", rpc_http_stats_json(d));
		json_object_set_new(v, "inproc", ctl_inproc_stats_json(d));
		json_object_set_new(v, "view_answers", json_integer((json_int_t)s->view_answers));
	}
	return v;
}

struct ctl_client *ctl_client_inproc_new(struct daemon *d, struct ctl_inproc_call *call,
                                         const char *line, size_t len)
{
	struct ctl_server *s = d->ctl;
	if (d->shutting_down || len > CTL_MAX_LINE)
		return NULL;
	struct ctl_client *c = xcalloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->d = d;
	c->in_process = true;
	c->inproc = call;
	/* Its line is a read buffer like any client's, under the same total. */
	if (!read_room(c, len + 1) || !(c->buf = xmalloc(len + 1))) {
		xfree(c);
		return NULL;
	}
	memcpy(c->buf, line, len);
	c->buf[len] = '\n';
	c->len = c->cap = len + 1;
	s->read_bytes += c->cap;
	c->next = s->clients;
	if (c->next)
		c->next->prev = c;
	s->clients = c;
	s->n_clients++;
	s->n_live++;
	c->active_ms = c->wrote_ms = daemon_now_ms(d);
	/* One line, then EOF: answered, it closes (process()). */
	c->eof = true;
	ctl_ready_add(c);
	return c;
}

static void on_client(uv_stream_t *server, int status)
{
	struct daemon *d = server->data;
	if (status < 0)
		return;
	struct ctl_client *c = xcalloc(1, sizeof(*c));
	if (!c) {
		DLOG_WARNING(&d->log, DLOG_CTL, "out of memory: control client refused");
		reject_client(d);
		return;
	}
	c->d = d;
	if (uv_pipe_init(d->loop, &c->pipe, 0)) {
		xfree(c);
		reject_client(d);
		return;
	}
	c->pipe.data = c;
	c->next = d->ctl->clients;
	if (c->next)
		c->next->prev = c;
	d->ctl->clients = c;
	d->ctl->n_clients++;
	d->ctl->n_live++;
	c->active_ms = c->wrote_ms = daemon_now_ms(d);
	if (uv_accept(server, (uv_stream_t *)&c->pipe)) {
		ctl_client_close(c);
		return;
	}
	/* One slot always stays free for the next client (peerctl stop must
	 * get through): the longest-idle client gives its slot up. */
	if (d->ctl->n_live >= CTL_MAX_CLIENTS && !d->shutting_down)
		drop_longest_idle(d, c);
	if (d->ctl->n_live > CTL_MAX_CLIENTS || d->shutting_down) {
		DLOG_WARNING(&d->log, DLOG_CTL, "control client refused: %u clients is the limit",
		             CTL_MAX_CLIENTS);
		ctl_client_close(c);
		return;
	}
	update_reading(c);
}

/* Is something listening at path? 0: no (stale or absent), 1: yes, <0 error. */
static int probe(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int err = errno;
	close(fd);
	if (rc == 0)
		return 1;
	if (err == ECONNREFUSED || err == ENOENT)
		return 0;
	return -err;
}

/* controlsocketgroup=: the group's members may connect (0660); others still may not. */
static int ctl_socket_group(struct daemon *d, const char *path)
{
	const char *name = d->conf->controlsocketgroup;
	struct group gr, *found = NULL;
	char buf[4096];
	int e = getgrnam_r(name, &gr, buf, sizeof(buf), &found);
	if (!found) {
		DLOG_ERR(&d->log, DLOG_CTL, "controlsocketgroup=%s: %s", name,
		         e ? strerror(e) : "no such group");
		return -ENOENT;
	}
	if (chown(path, (uid_t)-1, gr.gr_gid) || chmod(path, 0660)) {
		e = errno;
		DLOG_ERR(&d->log, DLOG_CTL, "controlsocketgroup=%s: cannot give %s to it: %s", name,
		         path, strerror(e));
		return -e;
	}
	DLOG_INFO_(&d->log, DLOG_CTL, "control socket open to group %s (mode 0660)", name);
	return 0;
}

int ctl_start(struct daemon *d)
{
	struct ctl_server *s = d->ctl;
	int err;
	const struct peerd_conf *c = d->conf;
	if (c->controlsocket && c->controlsocket[0]) {
		s->path = xstrdup(c->controlsocket);
	} else {
		size_t n = strlen(c->netdir) + sizeof("/control.sock");
		s->path = xmalloc(n);
		if (s->path)
			snprintf(s->path, n, "%s/control.sock", c->netdir);
	}
	if (!s->path)
		return -ENOMEM;
	/* libuv before 1.46 silently truncates a longer path in bind(): the
	 * socket would appear elsewhere than peerctl and the unlink at
	 * shutdown look. */
	struct sockaddr_un sa;
	if (strlen(s->path) >= sizeof(sa.sun_path)) {
		DLOG_ERR(&d->log, DLOG_CTL,
		         "control socket path %s is longer than %zu bytes; set a shorter "
		         "controlsocket=",
		         s->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	struct stat st;
	if (lstat(s->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			DLOG_ERR(&d->log, DLOG_CTL,
			         "%s exists and is not a socket; remove it or set controlsocket=",
			         s->path);
			return -EEXIST;
		}
		int rc = probe(s->path);
		if (rc == 1) {
			DLOG_ERR(&d->log, DLOG_CTL,
			         "another process is listening on %s (is peerd already running?)",
			         s->path);
			return -EADDRINUSE;
		}
		if (rc < 0) {
			DLOG_ERR(&d->log, DLOG_CTL, "cannot check %s: %s", s->path, strerror(-rc));
			return rc;
		}
		DLOG_INFO_(&d->log, DLOG_CTL, "replacing stale control socket %s", s->path);
		if (unlink(s->path) != 0 && errno != ENOENT) {
			DLOG_ERR(&d->log, DLOG_CTL, "cannot remove stale %s: %s", s->path,
			         strerror(errno));
			return -errno;
		}
	}
	/* libuv reports a missing directory as EACCES (Windows' error): say what it is. */
	if (lstat(s->path, &st) != 0 && errno == ENOENT) {
		char *dir = xstrdup(s->path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash && slash != dir) {
			*slash = 0;
			if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
				DLOG_ERR(
				    &d->log, DLOG_CTL,
				    "cannot bind control socket %s: directory %s does not exist",
				    s->path, dir);
				xfree(dir);
				return -ENOENT;
			}
		}
		xfree(dir);
	}
	if (!s->turn_init) {
		if (uv_idle_init(d->loop, &s->turn))
			return -ENOMEM;
		s->turn.data = d;
		s->turn_init = true;
	}
	if (!s->inproc && (err = ctl_inproc_init(d)))
		return err;
	err = uv_pipe_init(d->loop, &s->pipe, 0);
	if (err)
		return err;
	s->pipe.data = d;
	s->listening = true;
	/* Created 0600 from the start: no window where others could connect. */
	mode_t old = umask(0177);
	err = uv_pipe_bind(&s->pipe, s->path);
	umask(old);
	if (err) {
		DLOG_ERR(&d->log, DLOG_CTL, "cannot bind control socket %s: %s", s->path,
		         uv_strerror(err));
		return err;
	}
	s->bound = true;
	(void)chmod(s->path, 0600);
	if (d->conf->controlsocketgroup && (err = ctl_socket_group(d, s->path)))
		return err;
	err = uv_listen((uv_stream_t *)&s->pipe, CTL_BACKLOG, on_client);
	if (err) {
		DLOG_ERR(&d->log, DLOG_CTL, "cannot listen on %s: %s", s->path, uv_strerror(err));
		return err;
	}
	DLOG_INFO_(&d->log, DLOG_CTL, "control socket %s", s->path);
	return 0;
}

void ctl_close(struct daemon *d)
{
	struct ctl_server *s = d->ctl;
	ctl_longpoll_stop(d); /* main.c's shutdown did already; a failed start has none */
	if (s->listening && !uv_is_closing((uv_handle_t *)&s->pipe))
		uv_close((uv_handle_t *)&s->pipe, NULL);
	for (struct ctl_client *c = s->clients; c; c = c->next)
		ctl_client_close(c);
	ctl_inproc_close(d);
	if (s->turn_init && !uv_is_closing((uv_handle_t *)&s->turn))
		uv_close((uv_handle_t *)&s->turn, NULL);
	if (s->bound) {
		unlink(s->path);
		s->bound = false;
	}
	xfree(s->path);
	s->path = NULL;
}
