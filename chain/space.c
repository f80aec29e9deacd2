/*
 * chain/space.c: free disk space, and what a failed write to the block
 * files or the database means for the node (Core's CheckDiskSpace and its
 * fatal errors).
 *
 * A full disk must never leave peerd running without storing blocks. So
 * every block and undo record is written only when the disk keeps
 * CHAIN_MIN_DISK_SPACE free beyond it (Core's FindNextBlockPos and
 * FindUndoPos ask the same before allocating), and the first write that
 * fails for any reason latches a fatal error that the node turns into a
 * clean shutdown. The margin is what that shutdown needs: the final flush
 * of the coins and index, and mempool.dat.
 */
#include <errno.h>
#include <sys/statvfs.h>

#include "chain/internal.h"
#include "chain/coins_internal.h"

int chain_disk_space(const char *dir, uint64_t additional, uint64_t *avail)
{
	struct statvfs sv;
	if (statvfs(dir, &sv))
		return CHAIN_EIO;
	uint64_t free_bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	if (avail)
		*avail = free_bytes;
	/* Core's CheckDiskSpace: 50 MiB must stay free after the write. */
	if (additional > UINT64_MAX - CHAIN_MIN_DISK_SPACE ||
	    free_bytes < CHAIN_MIN_DISK_SPACE + additional)
		return CHAIN_ENOSPC;
	return 0;
}

int chain_errno_err(int e)
{
	return e == ENOSPC || e == EDQUOT ? CHAIN_ENOSPC : CHAIN_EIO;
}

void chain_disk_failed(struct chain *c, int err, bool coins_ahead, const char *what)
{
	if (err != CHAIN_ENOSPC && err != CHAIN_EIO)
		return;
	if (coins_ahead)
		c->coins_ahead = true;
	if (c->fatal)
		return;
	c->fatal = err;
	/* Core's messages: FindNextBlockPos/FindUndoPos say "Disk space is too
	 * low!", the others name what could not be written. */
	c->fatal_msg = err == CHAIN_ENOSPC ? "Disk space is too low!" : what;
	chain_logf(c, CHAIN_LOG_ERROR, "*** %s", c->fatal_msg);
}

int chain_fatal_error(const struct chain *c, const char **msg)
{
	if (!c->fatal && c->db && chain_db_broken(c->db)) {
		/* db.c said what and how to recover when it caught the fault;
		 * a page a full disk could not back is Core's low-space error. */
		int err = chain_db_broken_err(c->db);
		if (msg)
			*msg = err == CHAIN_ENOSPC ? "Disk space is too low!"
			       : err == CHAIN_EIO  ? "Failed to write to coin database."
			                           : "Corrupted block database detected";
		return err;
	}
	if (msg)
		*msg = c->fatal ? c->fatal_msg : NULL;
	return c->fatal;
}
