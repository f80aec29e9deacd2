/*
 * fees/estimator.c: Core's CBlockPolicyEstimator and TxConfirmStats
 * (policy/fees.cpp): transactions tracked from mempool entry to block,
 * per-bucket moving averages in three horizons, and the estimates read
 * from them. Every step follows Core's order of operations and its
 * integer and floating-point arithmetic, so that fed the same events the
 * answers are Core's, bit for bit.
 */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "fees/internal.h"

/* Core's constants (policy/fees.h). */
#define SUFFICIENT_FEETXS       0.1
#define SUFFICIENT_TXS_SHORT    0.5
#define HALF_SUCCESS_PCT        .6
#define SUCCESS_PCT             .85
#define DOUBLE_SUCCESS_PCT      .95
#define OLDEST_ESTIMATE_HISTORY (6 * 1008)
#define MIN_BUCKET_FEERATE      1000.0
#define MAX_BUCKET_FEERATE      1e7
#define FEE_SPACING             1.05
#define INF_FEERATE             1e99

static const struct {
	size_t periods;
	double decay;
	unsigned scale;
} horizons[FEES_N_HORIZONS] = {
    [FEES_SHORT] = {12, .962, 1},
    [FEES_MEDIUM] = {24, .9952, 2},
    [FEES_LONG] = {42, .99931, 24},
};

/* ---- one horizon (TxConfirmStats) ----------------------------------------------- */

int fees_stats_init(struct fees_stats *s, size_t nb, size_t periods, double decay, unsigned scale)
{
	memset(s, 0, sizeof(*s));
	s->decay = decay;
	s->scale = scale;
	s->periods = periods;
	s->nb = nb;
	size_t confirms = (size_t)scale * periods;
	s->feerate_avg = xcalloc(nb, sizeof(double));
	s->tx_ct_avg = xcalloc(nb, sizeof(double));
	s->conf_avg = xcalloc(periods * nb, sizeof(double));
	s->fail_avg = xcalloc(periods * nb, sizeof(double));
	s->unconf = xcalloc(confirms * nb, sizeof(int));
	s->old_unconf = xcalloc(nb, sizeof(int));
	if (!s->feerate_avg || !s->tx_ct_avg || !s->conf_avg || !s->fail_avg || !s->unconf ||
	    !s->old_unconf) {
		fees_stats_release(s);
		return FEES_ENOMEM;
	}
	return 0;
}

void fees_stats_release(struct fees_stats *s)
{
	xfree(s->feerate_avg);
	xfree(s->tx_ct_avg);
	xfree(s->conf_avg);
	xfree(s->fail_avg);
	xfree(s->unconf);
	xfree(s->old_unconf);
	memset(s, 0, sizeof(*s));
}

static unsigned max_confirms(const struct fees_stats *s)
{
	return s->scale * (unsigned)s->periods;
}

/* Core's bucketMap.lower_bound(feerate): the first bucket whose bound is >= it. */
static size_t bucket_of(const struct fees_estimator *f, double feerate)
{
	size_t lo = 0, hi = f->nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->buckets[mid] < feerate)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nb ? lo : f->nb - 1;
}

/* Core's ClearCurrent: the slot of this height joins the old ones. */
static void stats_clear_current(struct fees_stats *s, uint32_t height)
{
	size_t row = height % max_confirms(s);
	for (size_t j = 0; j < s->nb; j++) {
		s->old_unconf[j] += s->unconf[row * s->nb + j];
		s->unconf[row * s->nb + j] = 0;
	}
}

static void stats_record(struct fees_stats *s, size_t bucket, int blocks_to_confirm, double feerate)
{
	if (blocks_to_confirm < 1)
		return;
	s->zero = false;
	size_t periods_to_confirm = ((size_t)blocks_to_confirm + s->scale - 1) / s->scale;
	for (size_t i = periods_to_confirm; i <= s->periods; i++)
		s->conf_avg[(i - 1) * s->nb + bucket]++;
	s->tx_ct_avg[bucket]++;
	s->feerate_avg[bucket] += feerate;
}

/* Every element once, in memory order (each is independent: the same
 * values as Core's bucket-major loop). A block costs this for every
 * horizon, in initial block download too: 2,000 blocks of a sync spent
 * 11 % of peerd's CPU here while every average was still 0. */
static void stats_decay(struct fees_stats *s)
{
	if (s->zero)
		return;
	size_t n = s->periods * s->nb;
	for (size_t k = 0; k < n; k++)
		s->conf_avg[k] *= s->decay;
	for (size_t k = 0; k < n; k++)
		s->fail_avg[k] *= s->decay;
	for (size_t j = 0; j < s->nb; j++) {
		s->feerate_avg[j] *= s->decay;
		s->tx_ct_avg[j] *= s->decay;
	}
}

static void stats_new_tx(struct fees_stats *s, uint32_t height, size_t bucket)
{
	s->unconf[(height % max_confirms(s)) * s->nb + bucket]++;
}

/* Core's TxConfirmStats::removeTx: best is the height before the new block's. */
static void stats_remove_tx(struct fees_stats *s, uint32_t entry_height, uint32_t best,
                            size_t bucket, bool in_block)
{
	int blocks_ago = (int)(best - entry_height);
	if (best == 0)
		blocks_ago = 0;
	if (blocks_ago < 0)
		return;
	if (blocks_ago >= (int)max_confirms(s)) {
		if (s->old_unconf[bucket] > 0)
			s->old_unconf[bucket]--;
	} else {
		size_t row = entry_height % max_confirms(s);
		if (s->unconf[row * s->nb + bucket] > 0)
			s->unconf[row * s->nb + bucket]--;
	}
	if (!in_block && (unsigned)blocks_ago >= s->scale) {
		unsigned periods_ago = (unsigned)blocks_ago / s->scale;
		s->zero = false;
		for (size_t i = 0; i < periods_ago && i < s->periods; i++)
			s->fail_avg[i * s->nb + bucket]++;
	}
}

static void bucket_none(struct fees_bucket *b)
{
	memset(b, 0, sizeof(*b));
	b->start = -1;
	b->end = -1;
}

static void bucket_set(struct fees_bucket *b, const struct fees_estimator *f, unsigned near,
                       unsigned far, double conf, double total, int extra, double fail)
{
	unsigned lo = near < far ? near : far, hi = near < far ? far : near;
	b->start = lo ? f->buckets[lo - 1] : 0;
	b->end = f->buckets[hi];
	b->within_target = conf;
	b->total_confirmed = total;
	b->in_mempool = extra;
	b->left_mempool = fail;
}

/*
 * Core's EstimateMedianVal: from the highest bucket down, group buckets
 * until each group has enough data, and keep the lowest group still
 * confirming within the target at the success rate; the answer is the
 * average feerate of the bucket holding that group's median transaction.
 * -1 when there is none.
 */
static double stats_median(const struct fees_estimator *f, const struct fees_stats *s, int target,
                           double sufficient, double success, uint32_t height,
                           struct fees_result *r)
{
	double n_conf = 0, total = 0, fail_num = 0, partial = 0;
	int extra = 0;
	const int period_target = (target + (int)s->scale - 1) / (int)s->scale;
	const int maxb = (int)s->nb - 1;
	unsigned cur_near = (unsigned)maxb, best_near = (unsigned)maxb;
	unsigned cur_far = (unsigned)maxb, best_far = (unsigned)maxb;
	bool found = false, new_range = true, passing = true;
	unsigned bins = max_confirms(s);
	struct fees_bucket pass, failb;
	bucket_none(&pass);
	bucket_none(&failb);

	for (int b = maxb; b >= 0; --b) {
		if (new_range) {
			cur_near = (unsigned)b;
			new_range = false;
		}
		cur_far = (unsigned)b;
		n_conf += s->conf_avg[(size_t)(period_target - 1) * s->nb + (size_t)b];
		partial += s->tx_ct_avg[b];
		total += s->tx_ct_avg[b];
		fail_num += s->fail_avg[(size_t)(period_target - 1) * s->nb + (size_t)b];
		/* Core's unsigned arithmetic: height - confct wraps below zero. */
		for (unsigned c = (unsigned)target; c < bins; c++)
			extra += s->unconf[((uint32_t)(height - c) % bins) * s->nb + (size_t)b];
		extra += s->old_unconf[b];
		if (partial < sufficient / (1 - s->decay))
			continue;
		partial = 0;
		double pct = n_conf / (total + fail_num + extra);
		if (pct < success) {
			if (passing) {
				bucket_set(&failb, f, cur_near, cur_far, n_conf, total, extra,
				           fail_num);
				passing = false;
			}
			continue;
		}
		bucket_none(&failb);
		found = true;
		passing = true;
		pass.within_target = n_conf;
		n_conf = 0;
		pass.total_confirmed = total;
		total = 0;
		pass.in_mempool = extra;
		pass.left_mempool = fail_num;
		fail_num = 0;
		extra = 0;
		best_near = cur_near;
		best_far = cur_far;
		new_range = true;
	}

	double median = -1, tx_sum = 0;
	unsigned lo = best_near < best_far ? best_near : best_far;
	unsigned hi = best_near < best_far ? best_far : best_near;
	for (unsigned j = lo; j <= hi; j++)
		tx_sum += s->tx_ct_avg[j];
	if (found && tx_sum != 0) {
		tx_sum = tx_sum / 2;
		for (unsigned j = lo; j <= hi; j++) {
			if (s->tx_ct_avg[j] < tx_sum) {
				tx_sum -= s->tx_ct_avg[j];
			} else {
				median = s->feerate_avg[j] / s->tx_ct_avg[j];
				break;
			}
		}
		pass.start = lo ? f->buckets[lo - 1] : 0;
		pass.end = f->buckets[hi];
	}
	/* Passing until the last buckets, which had too little data: those failed. */
	if (passing && !new_range)
		bucket_set(&failb, f, cur_near, cur_far, n_conf, total, extra, fail_num);
	if (r) {
		r->pass = pass;
		r->fail = failb;
		r->decay = s->decay;
		r->scale = s->scale;
	}
	return median;
}

/* ---- the tracked transactions ------------------------------------------------------- */

static size_t slot_hash(const struct proto_hash *h)
{
	uint64_t v;
	memcpy(&v, h->b, sizeof(v));
	return (size_t)v;
}

static struct fees_slot *slot_find(const struct fees_estimator *f, const struct proto_hash *h)
{
	if (!f->cap)
		return NULL;
	for (size_t i = slot_hash(h) & (f->cap - 1);; i = (i + 1) & (f->cap - 1)) {
		struct fees_slot *s = &f->slots[i];
		if (!s->used && !s->gone)
			return NULL;
		if (s->used && proto_hash_eq(&s->txid, h))
			return s;
	}
}

static int slots_grow(struct fees_estimator *f)
{
	size_t ncap = f->cap ? f->cap : 64;
	if ((f->count + 1) * 2 > ncap)
		ncap *= 2;
	struct fees_slot *n = xcalloc(ncap, sizeof(*n));
	if (!n)
		return FEES_ENOMEM;
	for (size_t i = 0; i < f->cap; i++) {
		if (!f->slots[i].used)
			continue;
		size_t k = slot_hash(&f->slots[i].txid) & (ncap - 1);
		while (n[k].used)
			k = (k + 1) & (ncap - 1);
		n[k] = f->slots[i];
	}
	xfree(f->slots);
	f->slots = n;
	f->cap = ncap;
	f->tombs = 0;
	return 0;
}

static struct fees_slot *slot_add(struct fees_estimator *f, const struct proto_hash *h)
{
	if ((f->count + f->tombs + 1) * 4 > f->cap * 3 && slots_grow(f))
		return NULL;
	size_t i = slot_hash(h) & (f->cap - 1);
	while (f->slots[i].used)
		i = (i + 1) & (f->cap - 1);
	struct fees_slot *s = &f->slots[i];
	if (s->gone)
		f->tombs--;
	memset(s, 0, sizeof(*s));
	s->txid = *h;
	s->used = 1;
	f->count++;
	return s;
}

/* Core's _removeTx: false when it was not tracked. */
static bool remove_tx(struct fees_estimator *f, const struct proto_hash *h, bool in_block)
{
	struct fees_slot *s = slot_find(f, h);
	if (!s)
		return false;
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		stats_remove_tx(&f->stats[k], s->height, f->best_height, s->bucket, in_block);
	s->used = 0;
	s->gone = 1;
	f->count--;
	f->tombs++;
	return true;
}

/* ---- the estimator ----------------------------------------------------------------- */

struct fees_estimator *fees_new(void)
{
	struct fees_estimator *f = xcalloc(1, sizeof(*f));
	if (!f)
		return NULL;
	size_t n = 0;
	for (double b = MIN_BUCKET_FEERATE; b <= MAX_BUCKET_FEERATE; b *= FEE_SPACING)
		n++;
	f->buckets = xcalloc(n + 1, sizeof(double));
	if (!f->buckets)
		goto fail;
	for (double b = MIN_BUCKET_FEERATE; b <= MAX_BUCKET_FEERATE; b *= FEE_SPACING)
		f->buckets[f->nb++] = b;
	f->buckets[f->nb++] = INF_FEERATE;
	for (int k = 0; k < FEES_N_HORIZONS; k++) {
		if (fees_stats_init(&f->stats[k], f->nb, horizons[k].periods, horizons[k].decay,
		                    horizons[k].scale))
			goto fail;
		/* New, all zero (a file's read replaces them: not marked). */
		f->stats[k].zero = true;
	}
	return f;
fail:
	fees_free(f);
	return NULL;
}

void fees_free(struct fees_estimator *f)
{
	if (!f)
		return;
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		fees_stats_release(&f->stats[k]);
	xfree(f->buckets);
	xfree(f->slots);
	xfree(f);
}

/* Core's CFeeRate(fee, size).GetFeePerK(), as a double. */
static double feerate_of(int64_t fee, int64_t vsize)
{
	return vsize > 0 ? (double)(fee * 1000 / vsize) : 0;
}

void fees_tx_added(struct fees_estimator *f, const struct fees_tx *tx)
{
	if (slot_find(f, &tx->txid))
		return;
	/* Entered at another height than the last block seen: a side chain, or
	 * the estimator is behind the tip (it catches up at the next block). */
	if (tx->height != f->best_height)
		return;
	if (!tx->valid_for_fees)
		return;
	struct fees_slot *s = slot_add(f, &tx->txid);
	if (!s)
		return;
	size_t b = bucket_of(f, feerate_of(tx->fee, tx->vsize));
	s->height = tx->height;
	s->bucket = (uint32_t)b;
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		stats_new_tx(&f->stats[k], tx->height, b);
}

void fees_tx_removed(struct fees_estimator *f, const struct proto_hash *txid)
{
	remove_tx(f, txid, false);
}

/* Core's processBlockTx: a block took tx; false when it was not tracked. */
static bool block_tx(struct fees_estimator *f, uint32_t height, const struct fees_tx *tx)
{
	if (!remove_tx(f, &tx->txid, true))
		return false;
	int blocks_to_confirm = (int)(height - tx->height);
	if (blocks_to_confirm <= 0)
		return false;
	double rate = feerate_of(tx->fee, tx->vsize);
	size_t b = bucket_of(f, rate);
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		stats_record(&f->stats[k], b, blocks_to_confirm, rate);
	return true;
}

void fees_block(struct fees_estimator *f, uint32_t height, const struct fees_tx *txs, size_t n)
{
	/* Reorgs and side chains: assumed random, they do not move the estimates. */
	if (height <= f->best_height)
		return;
	/* The height moves with ClearCurrent, so that removals see the new age. */
	f->best_height = height;
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		stats_clear_current(&f->stats[k], height);
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		stats_decay(&f->stats[k]);
	size_t counted = 0;
	for (size_t i = 0; i < n; i++)
		counted += block_tx(f, height, &txs[i]);
	if (f->first_recorded == 0 && counted > 0)
		f->first_recorded = f->best_height;
}

void fees_flush_unconfirmed(struct fees_estimator *f)
{
	for (size_t i = 0; i < f->cap; i++)
		if (f->slots[i].used)
			remove_tx(f, &f->slots[i].txid, false);
}

size_t fees_tracked(const struct fees_estimator *f)
{
	return f->count;
}

uint32_t fees_best_height(const struct fees_estimator *f)
{
	return f->best_height;
}

unsigned fees_max_target(const struct fees_estimator *f, enum fees_horizon h)
{
	return max_confirms(&f->stats[h]);
}

const char *fees_horizon_str(enum fees_horizon h)
{
	switch (h) {
	case FEES_SHORT:
		return "short";
	case FEES_MEDIUM:
		return "medium";
	case FEES_LONG:
	case FEES_N_HORIZONS:
		break;
	}
	return "long";
}

/* ---- the estimates ------------------------------------------------------------------- */

static unsigned block_span(const struct fees_estimator *f)
{
	if (f->first_recorded == 0)
		return 0;
	return f->best_height - f->first_recorded;
}

static unsigned historical_span(const struct fees_estimator *f)
{
	if (f->historical_first == 0)
		return 0;
	if (f->best_height - f->historical_best > OLDEST_ESTIMATE_HISTORY)
		return 0;
	return f->historical_best - f->historical_first;
}

/* Core's MaxUsableEstimate: half the span of blocks seen, so that there
 * are enough potential failures for an estimate. */
static unsigned max_usable(const struct fees_estimator *f)
{
	unsigned a = block_span(f), b = historical_span(f);
	unsigned span = (a > b ? a : b) / 2;
	unsigned lmax = max_confirms(&f->stats[FEES_LONG]);
	return lmax < span ? lmax : span;
}

int64_t fees_estimate_raw(const struct fees_estimator *f, int target, double threshold,
                          enum fees_horizon h, struct fees_result *r)
{
	const struct fees_stats *s = &f->stats[h];
	double sufficient = h == FEES_SHORT ? SUFFICIENT_TXS_SHORT : SUFFICIENT_FEETXS;
	if (r) {
		memset(r, 0, sizeof(*r));
		bucket_none(&r->pass);
		bucket_none(&r->fail);
	}
	if (target <= 0 || (unsigned)target > max_confirms(s) || threshold > 1)
		return 0;
	double median = stats_median(f, s, target, sufficient, threshold, f->best_height, r);
	return median < 0 ? 0 : (int64_t)llround(median);
}

/* Core's estimateCombinedFee: the shortest horizon tracking the target;
 * with check_shorter, a lower answer from a shorter horizon's longest
 * target wins (estimates stay monotonic). */
static double combined(const struct fees_estimator *f, unsigned target, double success,
                       bool check_shorter)
{
	const struct fees_stats *sh = &f->stats[FEES_SHORT], *md = &f->stats[FEES_MEDIUM],
	                        *lg = &f->stats[FEES_LONG];
	double est = -1;
	uint32_t hgt = f->best_height;
	if (target < 1 || target > max_confirms(lg))
		return est;
	if (target <= max_confirms(sh))
		est = stats_median(f, sh, (int)target, SUFFICIENT_TXS_SHORT, success, hgt, NULL);
	else if (target <= max_confirms(md))
		est = stats_median(f, md, (int)target, SUFFICIENT_FEETXS, success, hgt, NULL);
	else
		est = stats_median(f, lg, (int)target, SUFFICIENT_FEETXS, success, hgt, NULL);
	if (check_shorter) {
		if (target > max_confirms(md)) {
			double m = stats_median(f, md, (int)max_confirms(md), SUFFICIENT_FEETXS,
			                        success, hgt, NULL);
			if (m > 0 && (est == -1 || m < est))
				est = m;
		}
		if (target > max_confirms(sh)) {
			double m = stats_median(f, sh, (int)max_confirms(sh), SUFFICIENT_TXS_SHORT,
			                        success, hgt, NULL);
			if (m > 0 && (est == -1 || m < est))
				est = m;
		}
	}
	return est;
}

/* Core's estimateConservativeFee: the 95% threshold at double the target
 * met in the longer horizons too. */
static double conservative_est(const struct fees_estimator *f, unsigned double_target)
{
	double est = -1;
	uint32_t hgt = f->best_height;
	if (double_target <= max_confirms(&f->stats[FEES_SHORT]))
		est = stats_median(f, &f->stats[FEES_MEDIUM], (int)double_target, SUFFICIENT_FEETXS,
		                   DOUBLE_SUCCESS_PCT, hgt, NULL);
	if (double_target <= max_confirms(&f->stats[FEES_MEDIUM])) {
		double l = stats_median(f, &f->stats[FEES_LONG], (int)double_target,
		                        SUFFICIENT_FEETXS, DOUBLE_SUCCESS_PCT, hgt, NULL);
		if (l > est)
			est = l;
	}
	return est;
}

int64_t fees_estimate_smart(const struct fees_estimator *f, int target, bool conservative,
                            int *returned_target)
{
	if (returned_target)
		*returned_target = target;
	if (target <= 0 || (unsigned)target > max_confirms(&f->stats[FEES_LONG]))
		return 0;
	/* No reasonable estimate for one block. */
	if (target == 1)
		target = 2;
	unsigned usable = max_usable(f);
	if ((unsigned)target > usable)
		target = (int)usable;
	if (returned_target)
		*returned_target = target;
	if (target <= 1)
		return 0;
	unsigned t = (unsigned)target;
	double median = combined(f, t / 2, HALF_SUCCESS_PCT, true);
	double e = combined(f, t, SUCCESS_PCT, true);
	if (e > median)
		median = e;
	e = combined(f, 2 * t, DOUBLE_SUCCESS_PCT, !conservative);
	if (e > median)
		median = e;
	if (conservative || median == -1) {
		e = conservative_est(f, 2 * t);
		if (e > median)
			median = e;
	}
	if (median < 0)
		return 0;
	return (int64_t)llround(median);
}
