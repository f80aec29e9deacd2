/*
 * daemon/net/ban_writer.c: banlist.json written on a thread of its own, so
 * a setban never waits for the file on the loop.
 *
 * Why: the file holds every ban (about 130 bytes each), is rewritten
 * whole at each change and fsynced twice (Core's DumpBanlist does the
 * same, on the RPC thread that called setban). With 300,000 bans that is
 * 40 MB and seconds per setban; on the loop thread it stalled every peer
 * and the control socket meanwhile, and a run of setbans cost the square
 * of their number.
 *
 * How: the loop copies the entries (a memcpy: 12 MB for 300,000) and hands
 * the copy to the writer; the writer formats and writes it. While it
 * writes, further changes only leave the bans dirty; the next copy is
 * made when it is idle again (the next change or the next slow tick), so
 * a run of changes costs one write per write's duration, each with every
 * change so far. The file lags the bans by one write at most; shutdown
 * (ban_save) waits for the writer and writes the last state itself.
 *
 * Replies that wait for the file (ban_wait_written: setban, clearbanned,
 * as Core's RPC returns after its DumpBanlist): while any wait, the writer
 * wakes the loop after each write (an async handle, open only then); the
 * loop ends the waits the write covered and has the next copy made at
 * once, not at the slow tick. Concurrent changes still share one write.
 *
 * Lock order: w->mu only. The loop reads and writes the ban_state; the
 * writer reads only its copy and the path (fixed after ban_init).
 */
#include "daemon/net/ban_internal.h"

#include <string.h>

struct ban_writer {
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;                   /* a copy to write, or stop */
	uv_cond_t idle_cv;              /* the writer finished a write */
	const struct dlog *log;         /* the daemon's: any thread may log */
	const char *path;               /* s->path: fixed after ban_init */
	struct ban_entry *pending;      /* GUARDED_BY(mu): a copy not yet taken, or NULL */
	uint32_t pending_n;             /* GUARDED_BY(mu) */
	bool busy;                      /* GUARDED_BY(mu): writing a copy now */
	bool stop;                      /* GUARDED_BY(mu) */
	uint64_t pending_gen, busy_gen; /* GUARDED_BY(mu): the s->gen each copy holds */
	uint64_t written_gen;           /* GUARDED_BY(mu): the s->gen the file holds */
	uint64_t tried_gen; /* GUARDED_BY(mu): the last s->gen handed over (a failed write is not
	                       retried until the next change: it was logged) */
	uint64_t
	    done_gen; /* GUARDED_BY(mu): the s->gen of the last write finished, failed or not */
	uv_async_t *notify; /* GUARDED_BY(mu): sent after each write while waits exist, else NULL */
};

static void writer_main(void *arg)
{
	struct ban_writer *w = arg;
	uv_mutex_lock(&w->mu);
	for (;;) {
		while (!w->pending && !w->stop)
			uv_cond_wait(&w->cv, &w->mu);
		if (!w->pending)
			break;
		struct ban_entry *v = w->pending;
		uint32_t n = w->pending_n;
		w->pending = NULL;
		w->busy = true;
		w->busy_gen = w->pending_gen;
		uv_mutex_unlock(&w->mu);
		int rc = ban_file_write(w->log, w->path, v, n);
		xfree(v);
		uv_mutex_lock(&w->mu);
		w->busy = false;
		if (!rc && w->busy_gen > w->written_gen)
			w->written_gen = w->busy_gen;
		if (w->busy_gen > w->done_gen)
			w->done_gen = w->busy_gen;
		/* Under mu: the loop closes the handle only after clearing it. */
		if (w->notify)
			(void)uv_async_send(w->notify);
		uv_cond_broadcast(&w->idle_cv);
	}
	uv_mutex_unlock(&w->mu);
}

static struct ban_writer *writer_start(struct daemon *d)
{
	struct ban_writer *w = xcalloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->log = &d->log;
	w->path = d->ban->path;
	if (uv_mutex_init(&w->mu)) {
		xfree(w);
		return NULL;
	}
	if (uv_cond_init(&w->cv)) {
		uv_mutex_destroy(&w->mu);
		xfree(w);
		return NULL;
	}
	if (uv_cond_init(&w->idle_cv)) {
		uv_cond_destroy(&w->cv);
		uv_mutex_destroy(&w->mu);
		xfree(w);
		return NULL;
	}
	if (uv_thread_create(&w->thread, writer_main, w)) {
		uv_cond_destroy(&w->idle_cv);
		uv_cond_destroy(&w->cv);
		uv_mutex_destroy(&w->mu);
		xfree(w);
		return NULL;
	}
	return w;
}

bool ban_writer_kick(struct daemon *d)
{
	struct ban_state *s = d->ban;
	if (!s->writer && !(s->writer = writer_start(d)))
		return false;
	struct ban_writer *w = s->writer;
	uv_mutex_lock(&w->mu);
	bool later = w->busy || w->pending;
	if (!later && w->tried_gen >= s->gen) {
		if (w->written_gen >= s->gen)
			s->dirty = false; /* the file holds this state */
		later = true;
	}
	uv_mutex_unlock(&w->mu);
	if (later)
		return true; /* the slow tick kicks again once the writer is idle */
	struct ban_entry *v = xmalloc((s->n ? s->n : 1) * sizeof(*v));
	if (!v)
		return false;
	if (s->n)
		memcpy(v, s->v, s->n * sizeof(*v));
	uv_mutex_lock(&w->mu);
	w->pending = v;
	w->pending_n = s->n;
	w->pending_gen = s->gen;
	w->tried_gen = s->gen;
	uv_cond_signal(&w->cv);
	uv_mutex_unlock(&w->mu);
	return true;
}

bool ban_writer_settle(struct ban_state *s)
{
	struct ban_writer *w = s->writer;
	if (!w)
		return false;
	uv_mutex_lock(&w->mu);
	xfree(w->pending);
	w->pending = NULL;
	while (w->busy)
		uv_cond_wait(&w->idle_cv, &w->mu);
	bool current = w->written_gen == s->gen;
	uv_mutex_unlock(&w->mu);
	return current;
}

void ban_writer_stop(struct ban_state *s)
{
	struct ban_writer *w = s->writer;
	if (!w)
		return;
	uv_mutex_lock(&w->mu);
	xfree(w->pending);
	w->pending = NULL;
	w->stop = true;
	uv_cond_signal(&w->cv);
	uv_mutex_unlock(&w->mu);
	uv_thread_join(&w->thread);
	uv_cond_destroy(&w->idle_cv);
	uv_cond_destroy(&w->cv);
	uv_mutex_destroy(&w->mu);
	xfree(w);
	s->writer = NULL;
}

/* ---- replies that wait for the file ------------------------------------------ */

static void notify_free(uv_handle_t *h)
{
	xfree(h);
}

/* No wait left: the handle goes (it would keep the loop up). */
static void notify_close(struct ban_state *s)
{
	struct ban_writer *w = s->writer;
	if (!w)
		return;
	uv_mutex_lock(&w->mu);
	uv_async_t *h = w->notify;
	w->notify = NULL;
	uv_mutex_unlock(&w->mu);
	if (h)
		uv_close((uv_handle_t *)h, notify_free);
}

/* Every wait for a generation up to gen is done, oldest first. */
static void waits_done_upto(struct daemon *d, uint64_t gen)
{
	struct ban_state *s = d->ban;
	while (s->waits && s->waits->gen <= gen) {
		struct ban_wait *bw = s->waits;
		s->waits = bw->next;
		bw->next = NULL;
		bw->done(d, bw);
	}
}

void ban_waits_done(struct daemon *d)
{
	waits_done_upto(d, UINT64_MAX);
	notify_close(d->ban);
}

/* Loop: the writer finished a write. */
static void notify_cb(uv_async_t *h)
{
	struct daemon *d = h->data;
	struct ban_state *s = d->ban;
	struct ban_writer *w = s->writer;
	if (!w)
		return;
	uv_mutex_lock(&w->mu);
	uint64_t done = w->done_gen;
	uv_mutex_unlock(&w->mu);
	waits_done_upto(d, done);
	if (!s->waits)
		notify_close(s);
	else if (!ban_writer_kick(d)) /* the next copy now, for the waits left */
		ban_waits_done(d);
}

void ban_wait_written(struct daemon *d, struct ban_wait *bw)
{
	struct ban_state *s = d->ban;
	bw->gen = s->gen;
	bw->next = NULL;
	struct ban_writer *w = s->writer;
	/* Nothing to wait for: not saved, written already (ban_save), or no
	 * writer (the change was written synchronously). */
	if (s->nosave || !s->dirty || !w) {
		bw->done(d, bw);
		return;
	}
	uv_mutex_lock(&w->mu);
	bool now = w->done_gen >= bw->gen;
	if (!now && !w->notify) {
		uv_async_t *h = xmalloc(sizeof(*h));
		if (h && uv_async_init(d->loop, h, notify_cb) == 0) {
			/* Referenced: a reply waits on it. It closes with the
			 * last wait (ban_save's at shutdown included). */
			h->data = d;
			w->notify = h;
		} else {
			xfree(h);
			now = true; /* no way to be told: answered now, as before */
		}
	}
	uv_mutex_unlock(&w->mu);
	if (now) {
		bw->done(d, bw);
		return;
	}
	struct ban_wait **pp = &s->waits;
	while (*pp)
		pp = &(*pp)->next;
	*pp = bw;
	/* The writer may have finished the write before this one's change
	 * while no one listened: make sure a copy of this state is on its way. */
	if (!ban_writer_kick(d))
		ban_waits_done(d);
}
