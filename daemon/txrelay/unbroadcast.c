/*
 * daemon/txrelay/unbroadcast.c: the unbroadcast set on the loop's side
 * (Core 29's RemoveUnbroadcastTx in ProcessGetData and
 * ReattemptInitialBroadcast): a getdata for a flagged mirror entry tells
 * the chain to drop it from the set, and every 10-15 minutes what is left
 * is announced again. Moved out of announce.c (issue 19) with no change.
 */
#include "daemon/txrelay/txrelay.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "mempool/mempool.h"
#include "daemon/txrelay/internal.h"

/* Core's unbroadcast retry: a random time in [10, 15) minutes. */
#define RELAY_REBROADCAST_MIN_MS    (10u * 60u * 1000u)
#define RELAY_REBROADCAST_SPREAD_MS (5u * 60u * 1000u)

/* Core's m_unbroadcast_txids lives with the pool (the chain's thread); the
 * mirror flags its entries so a getdata (loop) knows when to tell the
 * chain, and a timer re-announces what is left (ReattemptInitialBroadcast). */

struct unbcast_job {
	struct val_job job;
	struct proto_hash txid;  /**< served: leave the set */
	struct proto_hash *list; /**< rebroadcast: the set, from the chain */
	size_t n;
};

static void served_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	if (c)
		mempool_unbroadcast_remove(mp, &((struct unbcast_job *)j)->txid);
}

static void unbcast_job_free(struct daemon *d, struct val_job *j)
{
	(void)d;
	xfree(((struct unbcast_job *)j)->list);
	xfree(j);
}

/* A peer fetched e: Core's RemoveUnbroadcastTx in ProcessGetData. */
void txrelay_unbroadcast_served(struct daemon *d, struct relay_tx *e)
{
	struct unbcast_job *j = xcalloc(1, sizeof(*j));
	if (!j)
		return; /* it stays in the set: announced again later */
	e->unbroadcast = false;
	j->job.work = served_work;
	j->job.done = unbcast_job_free;
	j->txid = e->txid;
	if (validation_post(d, &j->job))
		xfree(j);
}

static void rebroadcast_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct unbcast_job *u = (struct unbcast_job *)j;
	if (c && mempool_unbroadcast_list(mp, &u->list, &u->n))
		u->n = 0;
}

static void rebroadcast_done(struct daemon *d, struct val_job *j)
{
	struct unbcast_job *u = (struct unbcast_job *)j;
	struct txrelay_state *r = d->txr;
	r->rebroadcast_busy = false;
	for (size_t i = 0; !j->cancelled && !d->shutting_down && i < u->n; i++) {
		/* The loop owns the mirror: txrelay_find's const is for its readers. */
		struct relay_tx *e = (struct relay_tx *)txrelay_find(d, &u->list[i], false);
		if (!e)
			continue; /* gone: the chain dropped it with the entry */
		e->unbroadcast = true;
		txrelay_relay_to_all(d, e);
	}
	unbcast_job_free(d, j);
}

/* Every 10-15 minutes (Core's UNBROADCAST_MAX_INTERVAL_MS spread). */
void txrelay_rebroadcast_tick(struct daemon *d, uint64_t now)
{
	struct txrelay_state *r = d->txr;
	if (!r->next_rebroadcast_ms) {
		r->next_rebroadcast_ms = now + RELAY_REBROADCAST_MIN_MS +
		                         proto_random_u64() % RELAY_REBROADCAST_SPREAD_MS;
		return;
	}
	if (now < r->next_rebroadcast_ms || r->rebroadcast_busy)
		return;
	r->next_rebroadcast_ms = 0;
	struct unbcast_job *j = xcalloc(1, sizeof(*j));
	if (!j)
		return;
	j->job.work = rebroadcast_work;
	j->job.done = rebroadcast_done;
	r->rebroadcast_busy = true;
	if (validation_post(d, &j->job)) {
		r->rebroadcast_busy = false;
		xfree(j);
	}
}
