/*
 * daemon/index_hooks.c: the wiring of the optional indexes (index/): opened
 * at startup from -txindex and -blockfilterindex, they follow the chain as
 * its listener on the validation thread, and catch up in the background
 * (Core's BaseIndex sync thread) as a chain of jobs: each takes in a batch
 * of blocks and, when the index is still behind, its completion on the
 * loop posts the next, so the requests and blocks posted meanwhile run in
 * between and the loop never waits.
 */
#include <errno.h>
#include <string.h>

#include "daemon/program.h"
#include "index/index.h"

/* Blocks per catch-up job: a few hundred milliseconds of work. */
#define INDEX_STEP_BLOCKS 200

struct index_job {
	struct val_job job;
	struct index_set *s;
	bool attach; /* the first job: start listening to the chain */
	bool more;
	int err;
};

static void index_log_cb(void *arg, enum chain_log_level level, const char *msg)
{
	struct daemon *d = arg;
	enum dlog_level lvl = level == CHAIN_LOG_ERROR  ? DLOG_ERROR
	                      : level == CHAIN_LOG_WARN ? DLOG_WARN
	                      : level == CHAIN_LOG_INFO ? DLOG_INFO
	                                                : DLOG_DEBUG;
	if (dlog_enabled(&d->log, lvl, DLOG_VALIDATION))
		dlog_write(&d->log, lvl, DLOG_VALIDATION, "%s", msg);
}

/* Validation thread. */
static void step_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct index_job *ij = (struct index_job *)j;
	(void)mp;
	ij->more = false;
	if (!c)
		return;
	if (ij->attach) {
		ij->attach = false;
		if ((ij->err = index_set_attach(ij->s, c)))
			return;
	}
	ij->err = index_set_step(ij->s, c, INDEX_STEP_BLOCKS, &ij->more);
}

/* Loop thread: post the next batch, or end. */
static void step_done(struct daemon *d, struct val_job *j)
{
	struct index_job *ij = (struct index_job *)j;
	if (!j->cancelled && ij->err)
		DLOG_ERR(&d->log, DLOG_MAIN, "indexes: %s (the index stops where it is)",
		         index_strerror(ij->err));
	if (j->cancelled || ij->err || !ij->more || validation_post(d, j) != 0)
		xfree(ij);
}

int daemon_index_start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	struct index_config cfg = {.netdir = validation_netdir(d),
	                           .txindex = c->txindex,
	                           .blockfilter = c->blockfilterindex,
	                           .coinstats = c->coinstatsindex,
	                           /* Core's -reindex rebuilds the active indexes too. */
	                           .wipe = c->reindex,
	                           .log = index_log_cb,
	                           .log_arg = d};
	int err = index_set_open(&d->indexes, &cfg);
	if (err) {
		DLOG_ERR(&d->log, DLOG_MAIN, "indexes: %s", index_strerror(err));
		return -EIO;
	}
	if (!d->indexes)
		return 0;
	struct index_job *ij = xcalloc(1, sizeof(*ij));
	if (!ij)
		return -ENOMEM;
	ij->job.work = step_work;
	ij->job.done = step_done;
	ij->s = d->indexes;
	ij->attach = true;
	if (validation_post(d, &ij->job)) {
		xfree(ij);
		return -ESHUTDOWN;
	}
	return 0;
}

void daemon_index_release(struct daemon *d)
{
	index_set_close(d->indexes);
	d->indexes = NULL;
}
