/*
 * daemon/ctl/budget.c: the control socket's reply budget. All clients'
 * replies together, queued or held by a line still being answered, stay
 * within CTL_MAX_QUEUED_TOTAL, and a reply is counted before it is built:
 * a chain call starts only when the bytes held and those it and the calls
 * out are likely to bring fit (ctl_reply_room). A call that does not fit
 * makes room by dropping clients holding more than its own (largest
 * first: clients not reading their replies, as a rule), or waits on
 * room_q until a write, a close or a job coming back makes room
 * (ctl_reply_kick). The wait is bounded: with nothing on its way to make
 * room, the waiter needing least claims it at the next tick, and if it is
 * the one holding most, the largest holder goes after CTL_STARVED_MS
 * (ctl_budget_tick).
 *
 * Why before: a reply's JSON tree is ten times its text (ctl/request.c),
 * and 32 clients sending batches of 100 getblock HASH 3 for a block of
 * 20,001 outputs took peerd to 740 MB when replies were only counted once
 * made (issue 18).
 *
 * Loop thread only.
 */
#include "daemon/ctl/internal.h"

#include <string.h>

/** Requests that wait this long for reply room no write or job frees drop the largest holder. */
#define CTL_STARVED_MS 1000u

/* Reply bytes c holds: queued, and in its line. */
static size_t held_by(const struct ctl_client *c)
{
	return c->queued + (c->line ? c->line->text_bytes : 0);
}

/*
 * What one more chain job and those out are likely to bring: each the
 * largest recent reply (reply_est, decaying).
 */
static uint64_t coming(const struct ctl_server *s)
{
	return ((uint64_t)s->jobs + 1u) * s->budget.reply_est;
}

/*
 * Too many large replies on their way: at most a quarter of the budget
 * (at least one job). They wait at the validation thread in one queue with
 * every other client's calls, and their replies arrive whether or not
 * their clients are still there.
 */
static bool jobs_full(const struct ctl_server *s)
{
	return s->jobs && coming(s) > CTL_MAX_QUEUED_TOTAL / 4u;
}

/*
 * The reply bytes live clients hold (queued, and of lines still being
 * answered; closing clients' go at their cancel callbacks) and those
 * coming fit the budget; with nothing held or out, always.
 */
static bool fits(const struct ctl_server *s)
{
	uint64_t held = s->queued - s->budget.dying_queued + s->line_bytes;
	if (!held && !s->jobs)
		return true;
	return !jobs_full(s) && held + coming(s) <= CTL_MAX_QUEUED_TOTAL;
}

/* Close the live client holding the most reply bytes (queued, or in its
 * line): one not reading its replies, as a rule. False: none holds any, or
 * `spare` (may be NULL) holds as much. */
static bool drop_largest(struct daemon *d, const struct ctl_client *spare, const char *why)
{
	struct ctl_client *victim = NULL;
	size_t most = spare ? held_by(spare) : 0;
	for (struct ctl_client *c = d->ctl->clients; c; c = c->next) {
		if (!c->closing && c != spare && held_by(c) > most) {
			victim = c;
			most = held_by(c);
		}
	}
	if (!victim)
		return false;
	d->ctl->queue_closed++;
	DLOG_WARNING(&d->log, DLOG_CTL,
	             "control client dropped: it holds %zu reply bytes, the most, and %s "
	             "(%u bytes)",
	             most, why, CTL_MAX_QUEUED_TOTAL);
	ctl_client_close(victim);
	return true;
}

bool ctl_reply_room(struct daemon *d, const struct ctl_client *asker)
{
	/* As when the budget is passed, the client holding the most goes (one
	 * not reading its replies, as a rule), unless that is the asker: a
	 * client holding little is not kept waiting by those holding much. */
	if (jobs_full(d->ctl))
		return false; /* a job coming back makes room (ctl_reply_kick) */
	while (!fits(d->ctl))
		if (!drop_largest(d, asker, "a call needs room its replies hold"))
			return false;
	return true;
}

/* What c's line is likely to hold once answered: what it holds and a
 * reply_est for each request not started. */
static uint64_t line_need(const struct ctl_server *s, const struct ctl_client *c)
{
	size_t left = c->line ? c->line->n - c->line->next : 0;
	return held_by(c) + (uint64_t)left * s->budget.reply_est;
}

/* The link to the client waiting for room whose line needs least (one call
 * before a batch of 100 of them; the first to wait among equals). room_q
 * is not empty. */
static struct ctl_client **least_waiter(struct ctl_server *s)
{
	struct ctl_client **best = &s->budget.room_q;
	for (struct ctl_client **pp = &s->budget.room_q; *pp; pp = &(*pp)->next_room)
		if (line_need(s, *pp) < line_need(s, *best))
			best = pp;
	return best;
}

void ctl_reply_kick(struct daemon *d)
{
	struct ctl_server *s = d->ctl;
	s->budget.progress = true;
	/* The waiter whose line needs least first (a client with one call
	 * before those piling up a batch's replies; least_waiter). */
	while (s->budget.room_q && fits(s)) {
		struct ctl_client **best = least_waiter(s);
		struct ctl_client *c = *best;
		*best = c->next_room;
		c->room_wait = false;
		c->next_room = NULL;
		ctl_ready_add(c);
	}
	if (s->ready && s->turn_init)
		(void)uv_idle_start(&s->turn, ctl_turn_cb);
}

void ctl_budget_check(struct daemon *d)
{
	struct ctl_server *s = d->ctl;
	/* Closing clients' queued bytes go at their cancel callbacks: dropping
	 * another client would not make them go sooner. */
	while (s->queued - s->budget.dying_queued + s->line_bytes > CTL_MAX_QUEUED_TOTAL &&
	       drop_largest(d, NULL, "all clients together hold over the budget"))
		;
}

/*
 * Requests wait for room and nothing makes any: no chain job is out and no
 * reply was written or freed for CTL_STARVED_MS. The bytes sit in lines
 * waiting for their next reply, or with clients that do not read: the
 * client holding the most goes, or every client would wait forever.
 */
void ctl_budget_tick(struct daemon *d, uint64_t now_ms)
{
	struct ctl_server *s = d->ctl;
	uint64_t unwritten = 0;
	for (struct ctl_client *c = s->clients; c; c = c->next)
		if (!c->closing && !c->in_process)
			unwritten += uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe);
	if (unwritten < s->budget.unwritten)
		s->budget.progress = true; /* a long write is under way */
	s->budget.unwritten = unwritten;
	/* No job out to bring room: the waiter holding least claims it from
	 * those holding more, as its call would have on starting. */
	if (s->budget.room_q && !s->jobs && !fits(s) && ctl_reply_room(d, *least_waiter(s)))
		ctl_reply_kick(d);
	if (!s->budget.room_q || s->jobs || s->budget.progress || fits(s)) {
		s->budget.starved_ms = now_ms;
		s->budget.progress = false;
		return;
	}
	if (now_ms - s->budget.starved_ms >= CTL_STARVED_MS) {
		s->budget.starved_ms = now_ms;
		if (drop_largest(d, NULL, "requests wait for room its replies hold"))
			s->budget.starve_closed++;
	}
}

void ctl_budget_wait(struct ctl_client *c)
{
	struct ctl_client **pp = &c->d->ctl->budget.room_q;
	if (c->room_wait)
		return;
	while (*pp)
		pp = &(*pp)->next_room;
	*pp = c;
	c->room_wait = true;
}

void ctl_budget_unwait(struct ctl_client *c)
{
	struct ctl_client **pp = &c->d->ctl->budget.room_q;
	while (c->room_wait && *pp && *pp != c)
		pp = &(*pp)->next_room;
	if (c->room_wait && *pp)
		*pp = c->next_room;
	c->room_wait = false;
	c->next_room = NULL;
}

void ctl_budget_note_reply(struct daemon *d, size_t n)
{
	/* The largest recent chain reply, forgotten slowly (a sixteenth per reply). */
	struct ctl_budget *b = &d->ctl->budget;
	b->reply_est -= b->reply_est / 16u;
	if (n > b->reply_est)
		b->reply_est = n;
}
