/*
 * daemon/node/diskspace.c: a full disk stops peerd cleanly instead of leaving
 * it running without storing blocks (issue 18), as Core's init.cpp and
 * node/blockstorage.cpp:
 *
 *   at startup      the network's directory and blocks/ need 50 MiB free
 *                   ("Error: Disk space is low for ..."), or peerd exits 1
 *                   before the chain is opened;
 *   every 5 min     blocks/ needs 50 + 50 MiB free, or "Shutting down due
 *                   to lack of disk space!" and a clean shutdown;
 *   every write     chain/ refuses a block or undo record that would take
 *                   the disk below 50 MiB, and any failed write latches a
 *                   fatal error (chain_fatal_error): the validation thread
 *                   hands it here and peerd shuts down cleanly with exit
 *                   status 1 (Core's AbortNode).
 *
 * The 50 MiB left is what the shutdown needs: the last flush of the chain
 * state and mempool.dat. After a restart on a bigger disk the chain goes
 * on from where it stopped; blocks refused were never recorded and are
 * fetched again.
 *
 * Threads: the loop thread, except diskspace_fatal_job (validation thread).
 */
#include "daemon/node/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "chain/chain.h"

/* Core's init.cpp: every 5 minutes, 50 MB beyond CheckDiskSpace's 50 MiB. */
#define DISK_CHECK_MS    (5u * 60u * 1000u)
#define DISK_CHECK_EXTRA ((uint64_t)50 << 20)
#define DISK_CHECK_ENV   "PEERD_TEST_DISKCHECK_MS"

/* "<netdir>/blocks" into buf; false if it does not fit. */
static bool blocks_dir(const struct daemon *d, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s/blocks", validation_netdir(d));
	return n > 0 && (size_t)n < cap;
}

/* Startup: one directory. A directory that does not exist yet is asked
 * about through the netdir, which holds it. */
static int check_dir(struct daemon *d, const char *dir)
{
	struct stat st;
	if (stat(dir, &st))
		return 0;
	int err = chain_disk_space(dir, 0, NULL);
	if (err == CHAIN_ENOSPC) {
		DLOG_ERR(&d->log, DLOG_MAIN, "Error: Disk space is low for \"%s\"", dir);
		return -ENOSPC;
	}
	/* statvfs failing is no reason not to start: the writes will tell. */
	return 0;
}

int diskspace_startup(struct daemon *d)
{
	const char *ms = getenv(DISK_CHECK_ENV);
	d->disk_check_ms = DISK_CHECK_MS;
	if (ms && *ms) {
		/* Tests only: the 5-minute check sooner, to see it happen. */
		char *end;
		unsigned long v = strtoul(ms, &end, 10);
		if (!*end && v > 0)
			d->disk_check_ms = v;
	}
	d->disk_check_at = daemon_now_ms(d) + d->disk_check_ms;
	char blocks[4096];
	int err = check_dir(d, validation_netdir(d));
	if (!err && blocks_dir(d, blocks, sizeof(blocks)))
		err = check_dir(d, blocks);
	return err;
}

void diskspace_tick(struct daemon *d, uint64_t now)
{
	if (d->shutting_down || !d->disk_check_ms || now < d->disk_check_at)
		return;
	d->disk_check_at = now + d->disk_check_ms;
	char blocks[4096];
	if (!blocks_dir(d, blocks, sizeof(blocks)))
		return;
	uint64_t avail = 0;
	if (chain_disk_space(blocks, DISK_CHECK_EXTRA, &avail) != CHAIN_ENOSPC)
		return;
	DLOG_ERR(&d->log, DLOG_MAIN,
	         "Shutting down due to lack of disk space! (%llu MiB free in %s)",
	         (unsigned long long)(avail >> 20), blocks);
	daemon_shutdown(d, "lack of disk space");
}

/* ---- a failed write: the validation thread tells the loop ---------------- */

struct fatal_job {
	struct val_job job;
	char msg[128];
};

/* Loop thread: Core's AbortNode. */
static void fatal_done(struct daemon *d, struct val_job *j)
{
	struct fatal_job *fj = (struct fatal_job *)j;
	DLOG_ERR(&d->log, DLOG_MAIN,
	         "Error: A fatal internal error occurred, see debug.log for details: %s", fj->msg);
	d->exit_status = 1;
	daemon_shutdown(d, fj->msg);
	xfree(fj);
}

struct val_job *diskspace_fatal_job(struct chain *c, bool *reported)
{
	const char *msg;
	if (!c || *reported || !chain_fatal_error(c, &msg))
		return NULL;
	struct fatal_job *fj = xcalloc(1, sizeof(*fj));
	if (!fj)
		return NULL; /* asked again after the next job */
	*reported = true;
	snprintf(fj->msg, sizeof(fj->msg), "%s", msg);
	fj->job.done = fatal_done;
	return &fj->job;
}
