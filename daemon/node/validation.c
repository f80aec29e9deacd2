/*
 * daemon/node/validation.c: the validation thread. It owns the struct chain
 * (index, coins, block store, check queue) and the chain's mempool from
 * startup to shutdown, and hands both to every job; the loop thread hands
 * it work and gets results back by message only.
 *
 *   loop thread                         validation thread
 *   validation_post(job) ──► in queue ──► job->work(chain, mempool, job)
 *   job->done(d, job)    ◄── out queue ◄── uv_async_send(&async)
 *
 * libuv's src/threadpool.c is the model: one mutex guards both queues,
 * a condition variable wakes the thread, and uv_async_send (which
 * coalesces) wakes the loop, whose callback drains every result.
 *
 * What the rooms above want after a job goes through the hooks the
 * wiring registered (struct node_hooks, daemon/node_hooks.c): the
 * mempool's changes for relay (feed_take, on this thread) and a new tip
 * (ibd_over, new_tip, on the loop). node/ names none of those rooms.
 *
 * Lock order: there is one lock, v->mu, and nothing is called while it is
 * held but list operations, uv_cond_signal and uv_async_send (never
 * chain/, never a job's functions, never the logger), so it cannot be
 * part of a cycle. The chain is touched only by the validation thread
 * (before the thread starts and after it is joined, by the thread that
 * starts and joins it).
 *
 * Shutdown: validation_stop marks the thread stopping; it finishes the
 * job it is running, hands every job not started back as cancelled, closes
 * the chain (a full flush: nothing lost, SIGTERM included) and sends a
 * last wake-up. The loop then joins it and closes the async handle, which
 * kept the loop (and so the process) alive until the flush was done. If
 * the shutdown grace timer closes handles first, validation_detach stops
 * the thread from touching the async handle, and main() joins before exit.
 */
#include "daemon/node/node.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "chain/chain.h"
#include "mempool/mempool.h"

/* ---- the chain's log lines into the daemon's logger ------------------------ */

/*
 * chain/ logs without a category; Core files its lines under "validation"
 * and "bench" (timings). Error, warning and info lines are always written;
 * a debug line is a bench line when chain/ says so by its prefix.
 */
static void chain_log_cb(void *arg, enum chain_log_level level, const char *msg)
{
	struct daemon *d = arg;
	enum dlog_level lvl = level == CHAIN_LOG_ERROR  ? DLOG_ERROR
	                      : level == CHAIN_LOG_WARN ? DLOG_WARN
	                      : level == CHAIN_LOG_INFO ? DLOG_INFO
	                                                : DLOG_DEBUG;
	enum dlog_cat cat = DLOG_VALIDATION;
	if (lvl == DLOG_DEBUG && (strncmp(msg, "bench", 5) == 0 || strncmp(msg, "  - ", 4) == 0))
		cat = DLOG_BENCH;
	if (!dlog_enabled(&d->log, lvl, cat))
		return;
	dlog_write(&d->log, lvl, cat, "%s", msg);
}

/* A reindex's progress, from chain_open on this thread: to the wiring's
 * status line (sd_notify STATUS=). */
static void chain_progress_cb(void *arg, const char *text)
{
	struct daemon *d = arg;
	struct validation *v = d->val;
	if (v->started) {
		/* A reindex's job, on the thread: the loop passes it on (reindex.c). */
		uv_mutex_lock(&v->mu);
		/* Lines kept in order until the loop takes them; full: the newest only. */
		size_t n = strlen(v->reindex_status), len = strlen(text);
		if (n + len + 2 > sizeof(v->reindex_status))
			n = 0;
		snprintf(v->reindex_status + n, sizeof(v->reindex_status) - n, "%s\n", text);
		uv_mutex_unlock(&v->mu);
		return;
	}
	if (d->node_hooks && d->node_hooks->startup_status)
		d->node_hooks->startup_status(d, text);
}

/* ---- the thread ----------------------------------------------------------- */

/* The mempool goes on the chain as chain_open loads it (before the replay);
 * the pool comes back in `mp`, which the node keeps and hands to its jobs. */
struct mempool_attach {
	const struct mempool_config *cfg;
	const char *dir;
	struct mempool *mp;
};

static int attach_mempool(void *arg, struct chain *c)
{
	struct mempool_attach *a = arg;
	return mempool_open(c, a->cfg, a->dir, &a->mp);
}

/* The mempool is saved and detached first: its file is written before the final flush. */
static int close_chain(struct chain *c, struct mempool *mp)
{
	mempool_close(mp);
	return chain_close(c);
}

/* Append to a singly linked queue (head, &tail->next). */
static void queue_push(struct val_job **head, struct val_job ***tail, struct val_job *j)
{
	j->next = NULL;
	**tail = j;
	*tail = &j->next;
	(void)head;
}

/* Wake the loop; v->mu held, so async_open cannot change under us. */
static void wake_loop_locked(struct validation *v)
{
	if (v->async_open)
		uv_async_send(&v->async);
}

static void publish(struct validation *v)
{
	struct chain_node *tip = v->chain ? chain_tip(v->chain) : NULL;
	struct chain_node *best =
	    v->chain ? chain_index_best_header(chain_get_index(v->chain)) : NULL;
	atomic_store_explicit(&v->height, tip ? tip->height : -1, memory_order_relaxed);
	atomic_store_explicit(&v->headers, best ? best->height : -1, memory_order_relaxed);
}

/* ---- the active chain, published to the loop's view ------------------------ */

/* An update on its way to the loop, as a result like any other. */
struct view_job {
	struct val_job job;
	struct chainview_update *u;
};

/* Loop thread: apply the update, then announce the new tip. */
static void view_done(struct daemon *d, struct val_job *j)
{
	struct view_job *vj = (struct view_job *)j;
	bool was_ibd = d->view->ibd;
	int err = chainview_apply(d, vj->u);
	if (err)
		DLOG_ERR(&d->log, DLOG_VALIDATION, "cannot update the chain view: %s",
		         strerror(-err));
	else if (!d->shutting_down && d->node_hooks) {
		/* The rooms above (sync/, txrelay/, notify/) as the wiring registered
		 * them; the wiring skips the peer rooms while no peer exists. */
		const struct node_hooks *h = d->node_hooks;
		if (was_ibd && !d->view->ibd && h->ibd_over)
			h->ibd_over(d);
		/* Every tip that moved, by blocks or back (invalidateblock); not the
		 * state-only update at a reindex's end (below), which moves none. */
		if (h->new_tip && (vj->u->n || vj->u->fork_height != vj->u->old_height))
			h->new_tip(d, vj->u);
		else if (h->invalid_chain && vj->u->invalid_found)
			h->invalid_chain(d, vj->u);
	}
	xfree(vj->u);
	xfree(vj);
}

/* Validation thread, unlocked: an update with no block saying the chain's
 * state at the published tip (chainview_update_state), or NULL. */
static struct view_job *state_update(struct validation *v)
{
	struct view_job *vj = xmalloc(sizeof(*vj));
	if (!vj)
		return NULL;
	memset(&vj->job, 0, sizeof(vj->job));
	vj->job.done = view_done;
	if (!(vj->u = chainview_update_state(v->chain))) {
		xfree(vj);
		return NULL;
	}
	return vj;
}

/* Validation thread, unlocked: a block found invalid with the tip left
 * where it was: an update with no block saying the fork warning there. */
static struct view_job *invalid_update(struct validation *v)
{
	struct view_job *vj = state_update(v);
	if (!vj)
		return NULL;
	vj->u->invalid_found = true;
	v->invalid_seen = chain_invalid_found(v->chain);
	return vj;
}

/* Validation thread, unlocked: the update since the last one, or NULL. */
static struct view_job *view_update(struct validation *v)
{
	if (!v->chain)
		return NULL;
	if (chain_tip(v->chain) == v->published) {
		bool importing = chain_reindex_pending(v->chain);
		if (!importing && chain_invalid_found(v->chain) != v->invalid_seen)
			return invalid_update(v);
		return NULL;
	}
	/* The update judges the fork warning at its new tip. */
	v->invalid_seen = chain_invalid_found(v->chain);
	struct view_job *vj = xmalloc(sizeof(*vj));
	if (!vj)
		return NULL;
	const struct chain_node *before = v->published;
	vj->u = chainview_update_new(v->chain, &v->published);
	if (!vj->u) {
		v->published = before;
		xfree(vj);
		return NULL;
	}
	memset(&vj->job, 0, sizeof(vj->job));
	vj->job.done = view_done;
	return vj;
}

/*
 * Validation thread, after a job that ran while a reindex was pending: its
 * blocks went in as Core's while importing, in initial block download (no
 * -blocknotify, no announcement), the last step's too. When the reindex
 * ended in it, the update that follows says the state at the tip.
 */
static struct view_job *reindex_views(struct validation *v, struct view_job *vj)
{
	if (vj) {
		vj->u->ibd = true;
		vj->u->unknown_rules_bit = -1;
	}
	if (chain_reindex_pending(v->chain))
		return NULL;
	return state_update(v);
}

/* Validation thread: the mempool's changes for relay, through the hook the
 * wiring registered (txrelay/announce.c's), or NULL. */
static struct val_job *feed_take(struct validation *v)
{
	const struct node_hooks *h = v->d->node_hooks;
	return h && h->feed_take ? h->feed_take(v->d, v->chain, v->mempool) : NULL;
}

/* (mu) A job that moves the chain, taken while a reindex is pending: it
 * waits for the end, as a Core RPC waits for cs_chainstate, which Core's
 * import holds while it connects; run now, its chain_activate would
 * connect the rest of the reindex in one go. */
static void park(struct validation *v, struct val_job *j)
{
	j->next = NULL;
	*v->parked_tail = j;
	v->parked_tail = &j->next;
}

/* (mu) The reindex ended (or the thread stops): the parked jobs go to the
 * head of the queue, in the order they came, before what was posted since. */
static void unpark(struct validation *v)
{
	if (!v->parked_head)
		return;
	*v->parked_tail = v->in_head;
	if (!v->in_head)
		v->in_tail = v->parked_tail;
	v->in_head = v->parked_head;
	v->parked_head = NULL;
	v->parked_tail = &v->parked_head;
}

static void thread_main(void *arg)
{
	struct validation *v = arg;
	struct daemon *d = v->d;
	/* The chain as it was opened, before any job. */
	struct view_job *first = view_update(v);
	struct val_job *feed = feed_take(v);
	uv_mutex_lock(&v->mu);
	if (first)
		queue_push(&v->out_head, &v->out_tail, &first->job);
	if (feed)
		queue_push(&v->out_head, &v->out_tail, feed);
	if (first || feed)
		wake_loop_locked(v);
	for (;;) {
		while (!v->stopping && (v->held || !v->in_head))
			uv_cond_wait(&v->cv, &v->mu);
		if (v->stopping)
			break;
		struct val_job *j = v->in_head;
		v->in_head = j->next;
		if (!v->in_head)
			v->in_tail = &v->in_head;
		if (j->after_reindex && v->chain && chain_reindex_pending(v->chain)) {
			park(v, j);
			continue;
		}
		v->running = true;
		uv_mutex_unlock(&v->mu);

		/* The job runs unlocked: the loop may post more meanwhile. */
		atomic_store_explicit(&v->busy, true, memory_order_relaxed);
		j->cancelled = false;
		bool importing = v->chain && chain_reindex_pending(v->chain);
		j->work(v->chain, v->mempool, j);
		atomic_store_explicit(&v->busy, false, memory_order_relaxed);
		publish(v);
		struct view_job *vj = view_update(v);
		struct view_job *after = importing ? reindex_views(v, vj) : NULL;
		/* The mempool's changes for relay (the feed_take hook). */
		struct val_job *fj = feed_take(v);
		/* A failed disk write: the node shuts down (node/diskspace.c). */
		struct val_job *fatal = diskspace_fatal_job(v->chain, &v->fatal_reported);

		uv_mutex_lock(&v->mu);
		v->running = false;
		v->jobs_run++;
		if (importing && !chain_reindex_pending(v->chain))
			unpark(v);
		/* The view first: a job's done callback sees the chain it made. */
		if (vj)
			queue_push(&v->out_head, &v->out_tail, &vj->job);
		if (after)
			queue_push(&v->out_head, &v->out_tail, &after->job);
		if (fj)
			queue_push(&v->out_head, &v->out_tail, fj);
		queue_push(&v->out_head, &v->out_tail, j);
		if (fatal)
			queue_push(&v->out_head, &v->out_tail, fatal);
		wake_loop_locked(v);
	}
	/* Jobs never started go back cancelled: their owners free them. */
	unpark(v);
	while (v->in_head) {
		struct val_job *j = v->in_head;
		v->in_head = j->next;
		j->cancelled = true;
		queue_push(&v->out_head, &v->out_tail, j);
	}
	v->in_tail = &v->in_head;
	uv_mutex_unlock(&v->mu);

	if (v->chain) {
		DLOG_INFO_(&d->log, DLOG_VALIDATION, "flushing the chain state");
		int err = close_chain(v->chain, v->mempool);
		v->chain = NULL;
		v->mempool = NULL;
		if (err)
			DLOG_ERR(&d->log, DLOG_VALIDATION, "closing the chain: %s",
			         chain_strerror(err));
		else
			DLOG_INFO_(&d->log, DLOG_VALIDATION, "chain state flushed");
	}

	uv_mutex_lock(&v->mu);
	v->exited = true;
	wake_loop_locked(v);
	uv_mutex_unlock(&v->mu);
}

/* ---- the loop side -------------------------------------------------------- */

/* Take every result and run its done callback, unlocked. */
static void drain(struct validation *v)
{
	uv_mutex_lock(&v->mu);
	struct val_job *list = v->out_head;
	v->out_head = NULL;
	v->out_tail = &v->out_head;
	uv_mutex_unlock(&v->mu);
	while (list) {
		struct val_job *j = list;
		list = j->next;
		/* Counted before done, which may free it. */
		if (j->counted)
			v->returned++;
		j->done(v->d, j);
	}
}

static void async_close_cb(uv_handle_t *h)
{
	(void)h;
}

static void join(struct validation *v)
{
	if (!v->started || v->joined)
		return;
	uv_thread_join(&v->thread);
	v->joined = true;
}

static void async_cb(uv_async_t *a)
{
	struct validation *v = a->data;
	drain(v);
	uv_mutex_lock(&v->mu);
	bool exited = v->exited;
	if (exited)
		v->async_open = false;
	uv_mutex_unlock(&v->mu);
	if (exited) {
		join(v);
		drain(v); /* the cancelled ones queued with the last wake-up */
		uv_close((uv_handle_t *)&v->async, async_close_cb);
	}
}

/* The network's directory: <datadir> for main, <datadir>/regtest/ etc. */
const char *validation_netdir(const struct daemon *d)
{
	return d->conf->netdir;
}

int validation_start(struct daemon *d, struct chain *c, struct mempool *mp)
{
	struct validation *v = d->val;
	memset(v, 0, sizeof(*v));
	v->d = d;
	v->chain = c;
	v->mempool = mp;
	v->in_tail = &v->in_head;
	v->out_tail = &v->out_head;
	v->parked_tail = &v->parked_head;
	atomic_init(&v->height, -1);
	atomic_init(&v->headers, -1);
	atomic_init(&v->busy, false);
	atomic_init(&v->interrupt, false);
	atomic_init(&v->reindexing, false);
	publish(v);
	/* The chain as opened goes into the loop's view here, before the loop
	 * runs: built by the thread, it could come after a peer's handshake
	 * (under load it did), and a getheaders meeting an empty view went
	 * unanswered, which stalls a Core peer for its 2-minute getheaders
	 * timeout. The thread is not started yet: the chain is ours to read. */
	if (c) {
		struct chainview_update *u = chainview_update_new(c, &v->published);
		int verr = u ? chainview_apply(d, u) : UV_ENOMEM;
		xfree(u);
		if (verr)
			return verr;
	}
	int err = uv_mutex_init(&v->mu);
	if (err)
		return err;
	if ((err = uv_cond_init(&v->cv))) {
		uv_mutex_destroy(&v->mu);
		return err;
	}
	if ((err = uv_async_init(d->loop, &v->async, async_cb))) {
		uv_cond_destroy(&v->cv);
		uv_mutex_destroy(&v->mu);
		return err;
	}
	v->async.data = v;
	v->async_open = true;
	v->initialized = true;
	if ((err = uv_thread_create(&v->thread, thread_main, v))) {
		v->async_open = false;
		uv_close((uv_handle_t *)&v->async, async_close_cb);
		return err;
	}
	v->started = true;
	return 0;
}

/*
 * Core's VerifyDB at startup (-checkblocks, -checklevel): the last blocks
 * read back and checked, so damaged block or undo files stop peerd now,
 * with the recovery named, instead of at the first reorg or block served.
 */
static int verify_at_startup(struct daemon *d, struct chain *c)
{
	const struct peerd_conf *cf = d->conf;
	int32_t height = chain_tip(c)->height;
	/* Nothing to check on genesis alone (Core returns early too). */
	if (height < 1)
		return 0;
	int32_t n = cf->checkblocks <= 0 || cf->checkblocks > height ? height : cf->checkblocks;
	DLOG_INFO_(&d->log, DLOG_VALIDATION, "Verifying last %d blocks at level %d", n,
	           cf->checklevel);
	struct chain_state st;
	int err = chain_verify(c, cf->checklevel, n, &st);
	if (!err) {
		DLOG_INFO_(&d->log, DLOG_VALIDATION,
		           "Verification: No coin database inconsistencies in last %d blocks", n);
		return 0;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/chainstate", validation_netdir(d));
	if (err == CHAIN_EINVALID || err == CHAIN_ECORRUPT || err == CHAIN_ENOTFOUND)
		DLOG_ERR(&d->log, DLOG_VALIDATION,
		         "Corrupted block database detected: %s. " CHAIN_DB_RECOVER
		         "; a block whose file is damaged is downloaded again",
		         err == CHAIN_EINVALID ? st.debug : chain_strerror(err), dir);
	else
		DLOG_ERR(&d->log, DLOG_VALIDATION, "cannot verify the last %d blocks: %s", n,
		         chain_strerror(err));
	return err;
}

/* Core's ReadRegTestArgs for -vbparams: regtest only (elsewhere they are
 * ignored, as Core's), each parsed with Core's messages. over has
 * CHAIN_VB_COUNT entries. 0, or -EINVAL after logging the error. */
static int vbparams(struct daemon *d, struct chain_vb_deployment *over)
{
	const struct conf_list *l = &d->conf->vbparams;
	if (d->params->net != PROTO_NET_REGTEST)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		char err[256];
		if (chain_vb_parse(l->v[i], over, err, sizeof(err))) {
			DLOG_ERR(&d->log, DLOG_VALIDATION, "%s", err);
			return -EINVAL;
		}
	}
	for (int i = 0; i < CHAIN_VB_COUNT; i++)
		if (over[i].name)
			DLOG_INFO_(
			    &d->log, DLOG_VALIDATION,
			    "Setting version bits activation parameters for %s to start=%lld, "
			    "timeout=%lld, min_activation_height=%d",
			    over[i].name, (long long)over[i].start_time, (long long)over[i].timeout,
			    over[i].min_activation_height);
	return 0;
}

int validation_open(struct daemon *d)
{
	const struct peerd_conf *cf = d->conf;
	/* As bitcoind: a dbcache below the minimum is raised to it, not refused. */
	size_t mib =
	    cf->dbcache_mib < CHAIN_DBCACHE_MIN_MIB ? CHAIN_DBCACHE_MIN_MIB : cf->dbcache_mib;
	struct chain_config cc = {
	    .params = d->params,
	    .dir = validation_netdir(d),
	    .dbcache_bytes = mib << 20,
	    .par = cf->par,
	    .max_tip_age = cf->maxtipage_s,
	    .log = chain_log_cb,
	    .log_arg = d,
	    .no_blocks_xor = !cf->blocksxor,
	    /* Both given: the full reindex rebuilds the chain state too (Core). */
	    .reindex = cf->reindex              ? CHAIN_REINDEX_FULL
	               : cf->reindex_chainstate ? CHAIN_REINDEX_CHAINSTATE
	                                        : CHAIN_REINDEX_NONE,
	    .progress = chain_progress_cb,
	    .progress_arg = d,
	    .prune_target = cf->prune_target,
	    .fast_prune = cf->fastprune,
	    /* What a crash left is connected after READY=1, as a reindex
	     * (node/reindex.c): systemd's start timeout would kill a long
	     * replay, and every start would replay it again. */
	    .replay_in_steps = true,
	};
	if (cf->prune_target == CHAIN_PRUNE_MANUAL) /* Core's init.cpp says the same */
		DLOG_INFO_(
		    &d->log, DLOG_VALIDATION, "%s",
		    "Block pruning enabled.  Use RPC call pruneblockchain(height) to manually "
		    "prune block and undo files.");
	else if (cf->prune_target)
		DLOG_INFO_(&d->log, DLOG_VALIDATION,
		           "Prune configured to target %" PRIu64 " MiB on disk for block and undo "
		           "files.",
		           cf->prune_target >> 20);
	struct mempool_config mc = {
	    .max_bytes = cf->maxmempool_mb * 1000000u,
	    .expiry = cf->mempoolexpiry_h * 3600,
	    .ancestor_count = cf->limitancestorcount,
	    .ancestor_vbytes = cf->limitancestorsize * 1000u,
	    .descendant_count = cf->limitdescendantcount,
	    .descendant_vbytes = cf->limitdescendantsize * 1000u,
	    .persist = cf->persistmempool,
	    .policy_set = true,
	};
	/* Core's mempool_args.cpp: start from the network's policy, then the keys. */
	struct mempool_policy *pol = &mc.policy;
	mempool_policy_default(pol, d->params);
	pol->min_relay_feerate = cf->minrelaytxfee;
	pol->incremental_relay_feerate = cf->incrementalrelayfee;
	pol->dust_relay_feerate = cf->dustrelayfee;
	pol->permit_bare_multisig = cf->permitbaremultisig;
	pol->datacarrier = cf->datacarrier;
	pol->max_datacarrier_bytes = cf->datacarriersize;
	pol->bytes_per_sigop = cf->bytespersigop;
	if (cf->acceptnonstdtxn >= 0)
		pol->require_standard = !cf->acceptnonstdtxn;
	struct chain_work mcw;
	if (cf->minimumchainwork[0]) {
		/* conf/ checked the digits: this cannot fail. */
		if (chain_work_from_hex(cf->minimumchainwork, &mcw) == 0)
			cc.min_chain_work = &mcw;
	}
	struct chain_vb_deployment over[CHAIN_VB_COUNT] = {{0}};
	if (vbparams(d, over))
		return -EINVAL;
	cc.vb_params = over;
	/* -assumevalid is a number as Core reads it (uint256::FromUserHex):
	 * "0" is the zero hash, which turns the rule off. */
	struct chain_work avw;
	struct proto_hash av;
	if (cf->assumevalid[0] && chain_work_from_hex(cf->assumevalid, &avw) == 0) {
		for (int i = 0; i < 32; i++)
			av.b[i] = (uint8_t)(avw.limb[i / 8] >> (8 * (i % 8)));
		cc.assume_valid = &av;
	}
	if (d->params->signet_custom) { /* Core's SigNetParams says the same */
		char *hex = xmalloc(2 * d->params->signet_challenge_len + 1);
		if (hex) {
			proto_hex_encode(d->params->signet_challenge,
			                 d->params->signet_challenge_len, hex);
			DLOG_INFO_(&d->log, DLOG_VALIDATION, "Signet with challenge %s", hex);
			xfree(hex);
		}
		uint32_t m = d->params->magic; /* read little-endian from the wire */
		DLOG_INFO_(&d->log, DLOG_VALIDATION,
		           "Signet derived magic (message start): %02x%02x%02x%02x", m & 0xff,
		           (m >> 8) & 0xff, (m >> 16) & 0xff, m >> 24);
	}
	struct mempool_attach ma = {.cfg = &mc, .dir = cc.dir};
	cc.attach = attach_mempool;
	cc.attach_arg = &ma;
	struct chain *c = NULL;
	uint64_t t0 = uv_hrtime();
	int err = chain_open(&c, &cc);
	if (err) {
		DLOG_ERR(&d->log, DLOG_VALIDATION, "cannot open the chain in %s: %s", cc.dir,
		         chain_strerror(err));
		return -EIO;
	}
	/* A reindex goes on after the loop starts (node/reindex.c), which
	 * loads the mempool at its end. Core's VerifyDB skips a wiped chain
	 * state (at genesis here: verify_at_startup returns) but checks one a
	 * cut-short reindex left part way, as at any start. */
	bool reindexing = chain_reindex_pending(c);
	if (!reindexing)
		mempool_load(ma.mp);
	if ((err = verify_at_startup(d, c))) {
		(void)close_chain(c, ma.mp);
		return -EIO;
	}
	struct chain_node *tip = chain_tip(c);
	char hex[65];
	proto_hash_to_hex(&tip->hash, hex);
	DLOG_INFO_(&d->log, DLOG_VALIDATION,
	           "chain loaded in %" PRIu64 " ms: tip %s height %d, dbcache %zu MiB, %u "
	           "script-check workers",
	           (uv_hrtime() - t0) / 1000000u, hex, tip->height, mib,
	           chain_checker_workers(chain_get_checker(c)));
	err = validation_start(d, c, ma.mp);
	atomic_store_explicit(&d->val->reindexing, reindexing && !err, memory_order_relaxed);
	if (err) {
		(void)close_chain(c, ma.mp);
		d->val->chain = NULL;
		d->val->mempool = NULL;
		DLOG_ERR(&d->log, DLOG_VALIDATION, "cannot start the validation thread: %s",
		         uv_strerror(err));
	}
	return err;
}

int validation_post(struct daemon *d, struct val_job *j)
{
	struct validation *v = d->val;
	if (!v->started)
		return -ESHUTDOWN;
	uv_mutex_lock(&v->mu);
	bool stopping = v->stopping;
	if (!stopping) {
		j->counted = true;
		queue_push(&v->in_head, &v->in_tail, j);
		v->posted++;
		uv_cond_signal(&v->cv);
	}
	uv_mutex_unlock(&v->mu);
	return stopping ? -ESHUTDOWN : 0;
}

void validation_send_now(struct daemon *d, struct val_job *j)
{
	struct validation *v = d->val;
	j->cancelled = false;
	j->counted = false;
	uv_mutex_lock(&v->mu);
	queue_push(&v->out_head, &v->out_tail, j);
	wake_loop_locked(v);
	uv_mutex_unlock(&v->mu);
}

bool validation_settled(const struct daemon *d)
{
	const struct validation *v = d->val;
	/* posted is written only by the loop (under mu): this thread may read it. */
	return v->started && v->posted == v->returned && chainview_height(d) >= 0;
}

void validation_stop(struct daemon *d)
{
	struct validation *v = d->val;
	if (!v->started)
		return;
	/* Read by the running job without the lock, as Core's m_interrupt. */
	atomic_store_explicit(&v->interrupt, true, memory_order_relaxed);
	uv_mutex_lock(&v->mu);
	v->stopping = true;
	uv_cond_signal(&v->cv);
	uv_mutex_unlock(&v->mu);
}

void validation_hold(struct daemon *d, bool hold)
{
	struct validation *v = d->val;
	if (!v->started)
		return;
	uv_mutex_lock(&v->mu);
	v->held = hold;
	uv_cond_signal(&v->cv);
	uv_mutex_unlock(&v->mu);
}

void validation_detach(struct daemon *d)
{
	struct validation *v = d->val;
	if (!v->initialized)
		return;
	uv_mutex_lock(&v->mu);
	bool was_open = v->async_open;
	v->async_open = false;
	uv_mutex_unlock(&v->mu);
	if (was_open && !uv_is_closing((uv_handle_t *)&v->async))
		uv_close((uv_handle_t *)&v->async, async_close_cb);
}

void validation_release(struct daemon *d)
{
	struct validation *v = d->val;
	if (!v->initialized) {
		node_extratxn_release(d); /* no thread: ours to free */
		return;
	}
	validation_stop(d);
	join(v);
	/* Results nobody collected (the loop ended first) still get their
	 * done callback, which frees them. */
	drain(v);
	if (v->chain) {
		/* Never started: the chain is still ours to close. */
		(void)close_chain(v->chain, v->mempool);
		v->chain = NULL;
		v->mempool = NULL;
	}
	node_extratxn_release(d);
	uv_cond_destroy(&v->cv);
	uv_mutex_destroy(&v->mu);
	v->initialized = false;
}

void validation_status(const struct daemon *d, char *out, size_t len)
{
	const struct validation *v = d->val;
	int32_t h = atomic_load_explicit(&v->height, memory_order_relaxed);
	int32_t hh = atomic_load_explicit(&v->headers, memory_order_relaxed);
	if (!v->started || h < 0) {
		snprintf(out, len, "no chain");
		return;
	}
	if (hh > h && hh > 0)
		snprintf(out, len, "height %d of %d headers (%.1f%%)", h, hh,
		         100.0 * (double)h / (double)hh);
	else
		snprintf(out, len, "height %d", h);
}
