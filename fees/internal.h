/*
 * fees/internal.h: the estimator's state, shared by fees/estimator.c (the
 * statistics and the estimates) and fees/file.c (fee_estimates.dat).
 */
#ifndef PEERD_FEES_INTERNAL_H
#define PEERD_FEES_INTERNAL_H

#include <stdbool.h>

#include "fees/fees.h"

/* Core's TxConfirmStats: one horizon's moving averages (per bucket) and
 * its counts of unconfirmed transactions by entry height. */
struct fees_stats {
	double decay;
	unsigned scale;
	size_t periods;      /* confAvg's and failAvg's rows */
	size_t nb;           /* buckets */
	double *feerate_avg; /* [nb] m_feerate_avg */
	double *tx_ct_avg;   /* [nb] txCtAvg */
	double *conf_avg;    /* [periods][nb] confAvg */
	double *fail_avg;    /* [periods][nb] failAvg */
	int *unconf;         /* [scale * periods][nb] unconfTxs */
	int *old_unconf;     /* [nb] oldUnconfTxs */
	/* Every average is known to be 0 (a new estimator nothing was recorded
	 * in yet: a node in initial block download, its mempool empty), so
	 * decaying them changes nothing and is skipped. Set only by fees_new;
	 * cleared by the first record or failure. */
	bool zero;
};

/* A tracked transaction (Core's TxStatsInfo), in an open-addressing table
 * keyed by txid; `used` marks a slot in use, `gone` a deleted one. */
struct fees_slot {
	struct proto_hash txid;
	uint32_t height;
	uint32_t bucket;
	uint8_t used, gone;
};

struct fees_estimator {
	double *buckets; /* upper bounds, ascending, the last one infinite */
	size_t nb;
	struct fees_stats stats[FEES_N_HORIZONS];
	uint32_t best_height;    /* nBestSeenHeight */
	uint32_t first_recorded; /* firstRecordedHeight */
	uint32_t historical_first, historical_best;
	struct fees_slot *slots;
	size_t cap, count, tombs; /* cap a power of two */
	char err[160];
};

/* Allocate a horizon's arrays for nb buckets and `periods` periods; 0 or FEES_ENOMEM. */
int fees_stats_init(struct fees_stats *s, size_t nb, size_t periods, double decay, unsigned scale);
/* Free a horizon's arrays. */
void fees_stats_release(struct fees_stats *s);

#endif
