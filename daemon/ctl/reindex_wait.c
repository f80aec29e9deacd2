/*
 * daemon/ctl/reindex_wait.c: which control methods move the chain, and so
 * wait for a reindex to end before they run.
 *
 * Core's submitblock, generate* and invalidateblock / reconsiderblock take
 * cs_chainstate (ActivateBestChain, InvalidateBlock), which its import
 * thread holds while it connects a reindex, or the rest of one cut short:
 * the call answers, as it would have, once the connecting is done. peerd's
 * validation thread parks such a job while a reindex is pending
 * (val_job.after_reindex, node/validation.c); run between two steps, its
 * chain_activate would connect the rest of the reindex inside one job.
 *
 * Threads: any (a constant table).
 */
#include <stdbool.h>
#include <string.h>

#include "daemon/ctl/internal.h"

static const char *const moving[] = {
    "generateblock",   "generatetoaddress", "generatetodescriptor",
    "invalidateblock", "reconsiderblock",   "submitblock",
};

bool ctl_method_moves_chain(const struct ctl_method *m)
{
	for (size_t i = 0; i < sizeof(moving) / sizeof(moving[0]); i++)
		if (!strcmp(m->name, moving[i]))
			return true;
	return false;
}
