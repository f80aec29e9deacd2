/*
 * daemon/fees_hooks.c: fee estimation fed from the mempool and the chain,
 * as Core's CBlockPolicyEstimator is a validation-interface subscriber:
 * a transaction entering the pool (TransactionAddedToMempool), leaving it
 * for any reason but a block (TransactionRemovedFromMempool), and each
 * connected block with the pool entries it took
 * (MempoolTransactionsRemovedForBlock). The estimator (fees/) is pure; this
 * file is the one that knows the pool's events and the chain's listener.
 *
 * Threads: fees_hooks_start and fees_hooks_close on the loop, before the
 * validation thread starts and after it was joined; everything else on
 * the validation thread, which alone touches the estimator in between
 * (the control methods run there too).
 *
 * The block's entries: the pool is the chain's first listener, so when
 * our block_connected runs, its removals for that block (reason "block")
 * were already told to us; they are kept here until then.
 */
#include "daemon/program.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "fees/fees.h"
#include "mempool/mempool.h"

/* Core's MAX_FEE_ESTIMATION_TIP_AGE: a tip older than this is not current. */
#define FEES_MAX_TIP_AGE (3 * 60 * 60)

struct fees_feed {
	struct daemon *d;
	struct fees_estimator *est;
	struct chain *c;
	bool attached;
	struct fees_tx *pending; /* the block's entries, until block_connected */
	size_t n_pending, cap_pending;
	char path[4096];
	int64_t last_flush; /* wall clock, seconds */
};

/* Core's IsCurrentForFeeEstimation. */
static bool chain_current(struct chain *c)
{
	if (chain_in_ibd(c))
		return false;
	const struct chain_node *tip = chain_tip(c);
	if (!tip || (int64_t)tip->time < chain_now(c) - FEES_MAX_TIP_AGE)
		return false;
	const struct chain_node *best = chain_index_best_header(chain_get_index(c));
	if (best && tip->height < best->height - 1)
		return false;
	return true;
}

static void entry_facts(const struct mempool_entry *e, struct fees_tx *t)
{
	struct mempool_entry_info in;
	mempool_entry_info(e, &in);
	t->txid = in.txid;
	t->fee = in.fee;
	t->vsize = in.vsize;
	t->height = in.height < 0 ? 0 : (uint32_t)in.height;
	t->valid_for_fees = !in.in_package && in.n_parents == 0;
}

static void on_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	struct fees_feed *s = arg;
	struct fees_tx t;
	entry_facts(e, &t);
	/* A block's transactions coming back bypassed the pool's limits. */
	if (how == MEMPOOL_ADDED_REORG || !s->c || !chain_current(s->c))
		t.valid_for_fees = false;
	fees_tx_added(s->est, &t);
}

static void on_removed(void *arg, const struct mempool_entry *e, enum mempool_removal why)
{
	struct fees_feed *s = arg;
	if (why != MEMPOOL_REMOVED_BLOCK) {
		fees_tx_removed(s->est, mempool_entry_txid(e));
		return;
	}
	if (s->n_pending == s->cap_pending) {
		size_t ncap = s->cap_pending ? s->cap_pending * 2 : 256;
		struct fees_tx *np = xreallocarray(s->pending, ncap, sizeof(*np));
		if (!np) {
			/* Out of memory: it leaves as unconfirmed rather than stay tracked. */
			fees_tx_removed(s->est, mempool_entry_txid(e));
			return;
		}
		s->pending = np;
		s->cap_pending = ncap;
	}
	entry_facts(e, &s->pending[s->n_pending++]);
}

static void on_block_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	(void)b;
	struct fees_feed *s = ctx;
	int32_t h = chain_height(c);
	fees_block(s->est, h < 0 ? 0 : (uint32_t)h, s->pending, s->n_pending);
	s->n_pending = 0;
}

static void on_chain_closed(void *ctx, struct chain *c)
{
	(void)c;
	struct fees_feed *s = ctx;
	s->c = NULL;
}

static void flush(struct fees_feed *s)
{
	if (fees_write(s->est, s->path))
		DLOG_WARNING(&s->d->log, DLOG_MAIN,
		             "Failed to write fee estimates to %s. Continue anyway.", s->path);
	else
		DLOG_INFO_(&s->d->log, DLOG_MAIN, "Flushed fee estimates to fee_estimates.dat.");
	s->last_flush = (int64_t)time(NULL);
}

void fees_hooks_attach(struct daemon *d, struct chain *c, struct mempool *mp)
{
	struct fees_feed *s = d->fees_feed;
	if (!s)
		return;
	if (s->attached) {
		/* Core's FEE_FLUSH_INTERVAL, on the wall clock as its scheduler. */
		if (s->c && (int64_t)time(NULL) - s->last_flush >= FEES_FLUSH_INTERVAL)
			flush(s);
		return;
	}
	if (!c || !mp)
		return;
	s->attached = true;
	s->c = c;
	struct chain_listener l = {
	    .block_connected = on_block_connected, .chain_closed = on_chain_closed, .ctx = s};
	struct mempool_events ev = {.added = on_added, .removed = on_removed, .arg = s};
	if (chain_listen(c, &l) || mempool_listen(mp, &ev)) {
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "fee estimation: cannot listen to the chain or the pool");
		return;
	}
	/* mempool.dat was loaded before this thread ran; Core's estimator
	 * hears those transactions (TransactionAddedToMempool at load), so it
	 * is told them now, parents first. */
	const struct mempool_entry **es = NULL;
	size_t n = 0;
	if (mempool_list(mp, MEMPOOL_ORDER_DEPTH_SCORE, &es, &n) == 0)
		for (size_t i = 0; i < n; i++)
			on_added(s, es[i], MEMPOOL_ADDED_LOAD);
	xfree(es);
}

int fees_hooks_start(struct daemon *d)
{
	const struct peerd_conf *conf = d->conf;
	/* Core makes no estimator when it takes no transactions (-blocksonly). */
	if (conf->blocksonly)
		return 0;
	struct fees_feed *s = xcalloc(1, sizeof(*s));
	if (!s || !(s->est = fees_new())) {
		xfree(s);
		return -ENOMEM;
	}
	s->d = d;
	s->last_flush = (int64_t)time(NULL);
	snprintf(s->path, sizeof(s->path), "%s/fee_estimates.dat", conf->netdir);
	struct stat st;
	if (stat(s->path, &st) != 0) {
		DLOG_INFO_(&d->log, DLOG_MAIN, "%s is not found. Continue anyway.", s->path);
	} else {
		long long age_h = ((long long)time(NULL) - (long long)st.st_mtime) / 3600;
		if (age_h * 3600 > FEES_MAX_FILE_AGE && !conf->acceptstalefeeestimates) {
			DLOG_INFO_(
			    &d->log, DLOG_MAIN,
			    "Fee estimation file %s too old (age=%lld > %d hours) and will not "
			    "be used to avoid serving stale estimates.",
			    s->path, age_h, FEES_MAX_FILE_AGE / 3600);
		} else {
			int err = fees_read(s->est, s->path);
			if (err == FEES_ECORRUPT)
				DLOG_WARNING(&d->log, DLOG_MAIN,
				             "CBlockPolicyEstimator::Read(): unable to read policy "
				             "estimator data (non-fatal): %s",
				             fees_last_error(s->est));
			if (err)
				DLOG_WARNING(
				    &d->log, DLOG_MAIN,
				    "Failed to read fee estimates from %s. Continue anyway.",
				    s->path);
		}
	}
	d->fees_feed = s;
	d->fees = s->est;
	return 0;
}

void fees_hooks_close(struct daemon *d)
{
	struct fees_feed *s = d->fees_feed;
	if (!s)
		return;
	/* Core's Flush at shutdown: what is still pending counts as unconfirmed.
	 * Not after a start that failed before the chain ran: rewriting the
	 * file read would only make a stale one look fresh. */
	if (s->attached) {
		fees_flush_unconfirmed(s->est);
		flush(s);
	}
	fees_free(s->est);
	xfree(s->pending);
	xfree(s);
	d->fees_feed = NULL;
	d->fees = NULL;
}
