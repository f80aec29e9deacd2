/*
 * daemon/ctl/prune_methods.c: pruneblockchain and getblockchaininfo's
 * prune fields, as Bitcoin Core 29's rpc/blockchain.cpp, over chain/'s
 * pruning (chain/prune.c). Chain methods: the validation thread runs them.
 */
#include "daemon/ctl/internal.h"

#include "chain/chain.h"

/* Core's TIMESTAMP_WINDOW: a block's time may be this much before its parent's. */
#define PRUNE_TIMESTAMP_WINDOW 7200

/* Core's CChain::FindEarliestAtLeast(t, 0): the first active block whose
 * time_max reaches t (time_max never falls along a chain), or -1. */
static int32_t earliest_at_least(struct chain *c, int64_t t)
{
	int32_t lo = 0, hi = chain_height(c) + 1;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if ((int64_t)chain_at(c, mid)->time_max < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > chain_height(c) ? -1 : lo;
}

void ctl_m_pruneblockchain(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res)
{
	(void)x;
	if (!chain_prune_mode(c)) {
		ctl_fail(res, CTL_MISC_ERROR,
		         "Cannot prune blocks because node is not in prune mode.");
		return;
	}
	int64_t height;
	if (!ctl_arg_int(ctl_arg(args, 0), INT32_MIN, INT32_MAX, 0, &height, res))
		return;
	if (height < 0) {
		ctl_fail(res, CTL_INVALID_PARAMETER, "Negative block height.");
		return;
	}
	/* Core: above a billion it is a time (a height never gets there), less
	 * two hours for blocks stamped before their parents. */
	if (height > 1000000000) {
		int32_t h = earliest_at_least(c, height - PRUNE_TIMESTAMP_WINDOW);
		if (h < 0) {
			ctl_fail(res, CTL_INVALID_PARAMETER,
			         "Could not find block with at least the specified timestamp.");
			return;
		}
		height = h;
	}
	/* Core compares as unsigned: a chain shorter than 288 clamps nothing
	 * here and chain/'s range keeps every block. */
	uint32_t want = (uint32_t)height;
	uint32_t tip = (uint32_t)chain_height(c);
	if (tip < (uint32_t)chain_prune_after_height(chain_params(c), chain_fast_prune(c))) {
		ctl_fail(res, CTL_MISC_ERROR, "Blockchain is too short for pruning.");
		return;
	}
	if (want > tip) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "Blockchain is shorter than the attempted prune height.");
		return;
	}
	if (want > tip - CHAIN_MIN_BLOCKS_TO_KEEP) {
		chain_logf(
		    c, CHAIN_LOG_DEBUG, "%s",
		    "Attempt to prune blocks close to the tip.  Retaining the minimum number "
		    "of blocks.");
		want = tip - CHAIN_MIN_BLOCKS_TO_KEEP;
	}
	int err = chain_prune_manual(c, (int32_t)want);
	if (err)
		/* Core logs a failed flush and answers anyway. */
		chain_logf(c, CHAIN_LOG_ERROR, "PruneBlockFilesManual: failed to flush state (%s)",
		           chain_strerror(err));
	ctl_ok(res, json_integer(chain_prune_height(c)));
}

void ctl_prune_info(struct chain *c, json_t *o)
{
	bool on = chain_prune_mode(c);
	json_object_set_new(o, "pruned", json_boolean(on));
	if (!on)
		return;
	int32_t h = chain_prune_height(c);
	json_object_set_new(o, "pruneheight", json_integer(h >= 0 ? h + 1 : 0));
	bool automatic = chain_prune_target(c) != CHAIN_PRUNE_MANUAL;
	json_object_set_new(o, "automatic_pruning", json_boolean(automatic));
	if (automatic)
		json_object_set_new(o, "prune_target_size",
		                    json_integer((json_int_t)chain_prune_target(c)));
}
