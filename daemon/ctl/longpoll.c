/*
 * daemon/ctl/longpoll.c: getblocktemplate's longpoll (BIP22), as Bitcoin
 * Core 29's rpc/mining.cpp: a call with a longpollid naming the tip waits
 * until the tip changes, or until a minute passed and the mempool's
 * update counter differs from the id's (checked then and every 10 s
 * after).
 *
 * Core's RPC thread sleeps on a condition variable. Here no thread waits:
 * the method (ctl/template_methods.c, on the validation thread) asks to be
 * run again (struct ctl_wait) and gives no answer; its job comes back to
 * the loop, which parks it here, and posts it again when the loop's chain
 * view moves off the watched tip (ctl_longpoll_new_tip, from the wiring's
 * new-tip hook) or when its clock comes (ctl_longpoll_tick). The method
 * then answers or asks again. A parked call holds its line (a control
 * client reads nothing more meanwhile, an HTTP worker waits for it, as
 * Core's does) and stays on getrpcinfo's list. A client that leaves ends
 * its call at the next tick; at shutdown every parked call is answered -9
 * "Shutting down" (Core's words) before the doors close.
 *
 * Loop thread only.
 */
#include "daemon/ctl/internal.h"

/** Core's first mempool check of a longpoll, after a minute. */
#define LONGPOLL_FIRST_MS 60000u
/** Core's later ones, every 10 seconds. */
#define LONGPOLL_EVERY_MS 10000u
/** Core's RPC_CLIENT_NOT_CONNECTED, its code for "Shutting down". */
#define LONGPOLL_NOT_CONNECTED -9

/* Off the list (it must be on it). */
static void unlink_wait(struct daemon *d, struct ctl_wait *w)
{
	for (struct ctl_wait **pp = &d->ctl->waits; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			w->next = NULL;
			return;
		}
}

/* The loop's tip is not the block w waits away from. */
static bool tip_moved(const struct daemon *d, const struct ctl_wait *w)
{
	const struct chainview_rec *tip = chainview_at(d, chainview_height(d));
	return tip && !proto_hash_eq(&tip->hash, &w->tip);
}

/* Run w's call again (unlinked by the caller). */
static void wake(struct daemon *d, struct ctl_wait *w, bool pool_check)
{
	w->pool_check = pool_check;
	if (!ctl_job_repost(d, w->job))
		ctl_job_fail(d, w->job, LONGPOLL_NOT_CONNECTED, "Shutting down");
}

void ctl_longpoll_park(struct daemon *d, struct ctl_wait *w)
{
	uint64_t now = daemon_now_ms(d);
	w->wanted = false;
	if (!w->parked_once) {
		w->parked_once = true;
		w->next_ms = now + LONGPOLL_FIRST_MS;
	}
	if (d->shutting_down) {
		ctl_job_fail(d, w->job, LONGPOLL_NOT_CONNECTED, "Shutting down");
		return;
	}
	/* A block may have come between the method's look at the tip and now. */
	if (tip_moved(d, w)) {
		wake(d, w, false);
		return;
	}
	w->next = d->ctl->waits;
	d->ctl->waits = w;
}

void ctl_longpoll_new_tip(struct daemon *d)
{
	struct ctl_wait *w = d->ctl->waits;
	while (w) {
		struct ctl_wait *next = w->next;
		if (tip_moved(d, w)) {
			unlink_wait(d, w);
			wake(d, w, false);
		}
		w = next;
	}
}

void ctl_longpoll_tick(struct daemon *d, uint64_t now_ms)
{
	struct ctl_wait *w = d->ctl->waits;
	while (w) {
		struct ctl_wait *next = w->next;
		if (ctl_job_orphaned(w->job)) {
			/* Nobody reads the answer: the call ends, its line is freed. */
			unlink_wait(d, w);
			ctl_job_fail(d, w->job, LONGPOLL_NOT_CONNECTED, "client gone");
		} else if (now_ms >= w->next_ms) {
			w->next_ms = now_ms + LONGPOLL_EVERY_MS;
			unlink_wait(d, w);
			wake(d, w, true);
		}
		w = next;
	}
}

void ctl_longpoll_stop(struct daemon *d)
{
	while (d->ctl->waits) {
		struct ctl_wait *w = d->ctl->waits;
		d->ctl->waits = w->next;
		w->next = NULL;
		ctl_job_fail(d, w->job, LONGPOLL_NOT_CONNECTED, "Shutting down");
	}
}
