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

/* Core's prune lock of the filter index (txindex cannot be pruned under:
 * conf/ refuses the two together): the height it has reached. Validation
 * thread, from chain/prune.c. */
static int32_t index_prune_lock(void *arg, struct chain *c)
{
	struct index_set *s = arg;
	if (!index_set_has(s, INDEX_FILTER_BASIC))
		return INT32_MAX;
	int32_t height;
	bool synced;
	index_set_status(s, c, INDEX_FILTER_BASIC, &height, &synced);
	return height < 0 ? 0 : height;
}

/* Core's StartIndexBackgroundSync: an index behind the tip needs the data
 * of every block from its best one up; pruned away, it cannot catch up. */
static int index_data_available(struct index_set *s, struct chain *c)
{
	static const enum index_kind kinds[] = {INDEX_TX, INDEX_FILTER_BASIC};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		int32_t height;
		bool synced;
		if (!index_set_has(s, kinds[i]))
			continue;
		index_set_status(s, c, kinds[i], &height, &synced);
		if (synced)
			continue;
		int32_t from = height < 0 ? 0 : height > chain_height(c) ? chain_height(c) : height;
		for (int32_t h = from; h <= chain_height(c); h++) {
			if (chain_at(c, h)->status & CHAIN_HAVE_DATA)
				continue;
			chain_logf(
			    c, CHAIN_LOG_ERROR,
			    "%s best block of the index goes beyond pruned data. Please disable "
			    "the index or reindex (which will download the whole blockchain "
			    "again)",
			    index_name(kinds[i]));
			return INDEX_ECHAIN;
		}
	}
	return INDEX_OK;
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
		if ((ij->err = index_data_available(ij->s, c)) ||
		    (ij->err = index_set_attach(ij->s, c)))
			return;
		if (chain_prune_mode(c))
			chain_set_prune_lock(c, index_prune_lock, ij->s);
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
