/*
 * daemon/node/reindex.c: -reindex and -reindex-chainstate after the loop
 * starts, as Core runs them in its "initload" thread once init is done.
 *
 * chain_open only wipes and loads; the reading of the blk files and the
 * connecting are chain_reindex_step's bounded steps (a file, or ~200 ms of
 * blocks), each one validation job that posts the next from its done
 * callback. Other jobs (a control method's) queue behind a step and run
 * before the next, so the control socket and HTTP answer throughout,
 * except those that move the chain (val_job.after_reindex: submitblock,
 * generate*, ...), which validation.c parks until the end, as Core's wait
 * for cs_chainstate. A stop ends it between two steps (validation_stop),
 * with the chain flushed as any stop, and the next start goes on with it
 * from chain/'s marks, in the same steps (chain_open leaves it pending).
 *
 * The blocks a crash left past the last flush are connected the same way
 * (chain_config.replay_in_steps): chain_open reads them, these steps
 * connect them, so READY=1 and the control socket do not wait for them.
 *
 * While it runs, validation_reindexing is true: sync/ asks peers for no
 * blocks and txrelay/ takes no transactions (Core's LoadingBlocks()). The
 * mempool file is loaded at the end, on the rebuilt chain (Core loads it
 * after ImportBlocks too).
 *
 * Threads: reindex_work on the validation thread, the rest on the loop.
 */
#include "daemon/node/node.h"

#include <errno.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"

struct reindex_job {
	struct val_job job;
	int err;     /* the step's error, 0 if none */
	bool more;   /* another step is needed */
	bool replay; /* the blocks a crash left, not a reindex */
};

static void reindex_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct reindex_job *rj = (struct reindex_job *)j;
	rj->replay = c && chain_reindex_mode(c) == CHAIN_REINDEX_NONE;
	rj->err = c ? chain_reindex_step(c) : 0;
	rj->more = !rj->err && c && chain_reindex_pending(c);
	if (!rj->err && !rj->more && mp)
		mempool_load(mp);
}

/* Loop thread: pass the thread's progress lines on (STATUS=). */
static void pass_status(struct daemon *d)
{
	struct validation *v = d->val;
	char text[sizeof(v->reindex_status)];
	uv_mutex_lock(&v->mu);
	memcpy(text, v->reindex_status, sizeof(text));
	v->reindex_status[0] = '\0';
	uv_mutex_unlock(&v->mu);
	if (!d->node_hooks || !d->node_hooks->startup_status)
		return;
	for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		d->node_hooks->startup_status(d, line);
	}
}

static void reindex_done(struct daemon *d, struct val_job *j)
{
	struct reindex_job *rj = (struct reindex_job *)j;
	struct validation *v = d->val;
	pass_status(d);
	if (!j->cancelled && !rj->err && !rj->more) { /* the end */
		atomic_store_explicit(&v->reindexing, false, memory_order_relaxed);
		xfree(rj);
		return;
	}
	if (j->cancelled || d->shutting_down) {
		/* Stopped between two steps: chain/'s marks go on with it next start. */
		DLOG_INFO_(&d->log, DLOG_VALIDATION, "%s",
		           rj->replay ? "Replay of the blocks stored after the last flush "
		                        "interrupted: it goes on at the next start"
		                      : "Reindex interrupted: it goes on at the next start");
		xfree(rj);
		return;
	}
	if (rj->err) {
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "Error: A fatal internal error occurred, see debug.log for details: "
		         "reindexing failed: %s",
		         chain_strerror(rj->err));
		atomic_store_explicit(&v->reindexing, false, memory_order_relaxed);
		d->exit_status = 1;
		daemon_shutdown(d, "reindexing failed");
		xfree(rj);
		return;
	}
	if (validation_post(d, &rj->job)) /* the next step */
		xfree(rj);
}

int node_reindex_start(struct daemon *d)
{
	struct validation *v = d->val;
	if (!atomic_load_explicit(&v->reindexing, memory_order_relaxed))
		return 0;
	struct reindex_job *rj = xcalloc(1, sizeof(*rj));
	if (!rj)
		return -ENOMEM;
	rj->job.work = reindex_work;
	rj->job.done = reindex_done;
	int err = validation_post(d, &rj->job);
	if (err)
		xfree(rj);
	return err;
}

bool validation_reindexing(const struct daemon *d)
{
	return atomic_load_explicit(&d->val->reindexing, memory_order_relaxed);
}
