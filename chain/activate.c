/*
 * chain/activate.c: the active chain and how it moves: connecting and
 * disconnecting the tip, choosing the most-work valid chain, reorgs,
 * invalid marking, invalidateblock and reconsiderblock (Core's
 * ActivateBestChain, ConnectTip, DisconnectTip, InvalidateBlock).
 *
 * Candidates are linked blocks (data for them and every ancestor) that are
 * not known invalid; the best is the one with the most work, the earlier
 * arrival winning a tie, as in Core. The set stays small: ancestors of the
 * tip leave it as the tip passes them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "chain/internal.h"

/* Free space asked for before a block is connected, beyond
 * CHAIN_MIN_DISK_SPACE: room for its undo record, which is of the order
 * of the block's size (at most 4 MB). */
#define UNDO_ROOM ((uint64_t)8 << 20)

int chain_nodes_push(struct chain_nodes *a, struct chain_node *n)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct chain_node **v = xreallocarray(a->v, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = n;
	return 0;
}

void chain_nodes_remove(struct chain_nodes *a, size_t i)
{
	a->v[i] = a->v[--a->n];
}

void chain_nodes_release(struct chain_nodes *a)
{
	xfree(a->v);
	memset(a, 0, sizeof(*a));
}

void chain_logf(const struct chain *c, enum chain_log_level level, const char *fmt, ...)
{
	if (!c->cfg.log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->cfg.log(c->cfg.log_arg, level, msg);
}

int64_t chain_now(const struct chain *c)
{
	return c->cfg.now ? c->cfg.now() : base_time();
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct chain_node *chain_tip(const struct chain *c)
{
	return c->active.n ? c->active.v[c->active.n - 1] : NULL;
}

int32_t chain_height(const struct chain *c)
{
	return (int32_t)c->active.n - 1;
}

struct chain_node *chain_at(const struct chain *c, int32_t height)
{
	if (height < 0 || (size_t)height >= c->active.n)
		return NULL;
	return c->active.v[height];
}

bool chain_contains(const struct chain *c, const struct chain_node *n)
{
	return n && chain_at(c, n->height) == n;
}

/* ---- candidates ----------------------------------------------------------- */

/* Does a beat b as a tip? More work, then earlier arrival. */
static bool better(const struct chain_node *a, const struct chain_node *b)
{
	int cmp = chain_work_cmp(&a->work, &b->work);
	if (cmp)
		return cmp > 0;
	return a->seq < b->seq;
}

/* The best candidate; the failed ones go. A failed one with more work than
 * the best becomes the best invalid block if it has the most work of all, as
 * Core's FindMostWorkChain makes m_best_invalid of each candidate it drops
 * on its way down to the best valid one: the fork warning weighs an invalid
 * chain by its top, not by the block that failed. */
static struct chain_node *best_candidate(struct chain *c)
{
	struct chain_node *best = NULL, *failed = NULL;
	for (size_t i = 0; i < c->candidates.n;) {
		struct chain_node *n = c->candidates.v[i];
		if (chain_node_failed(n)) {
			if (!failed || better(n, failed))
				failed = n;
			chain_nodes_remove(&c->candidates, i);
			continue;
		}
		if (!best || better(n, best))
			best = n;
		i++;
	}
	if (failed && (!best || better(failed, best)) &&
	    (!c->best_invalid || chain_work_cmp(&failed->work, &c->best_invalid->work) > 0))
		c->best_invalid = failed;
	return best;
}

/* Ancestors of the tip can never be a better tip again (until an invalidate re-adds them). */
static void prune_candidates(struct chain *c)
{
	struct chain_node *tip = chain_tip(c);
	for (size_t i = 0; i < c->candidates.n;) {
		struct chain_node *n = c->candidates.v[i];
		if (n != tip && chain_contains(c, n))
			chain_nodes_remove(&c->candidates, i);
		else
			i++;
	}
}

static int add_candidate_fn(struct chain_node *n, void *arg)
{
	struct chain *c = arg;
	struct chain_node *tip = chain_tip(c);
	if (n->linked && !chain_node_failed(n) && chain_node_level(n) >= CHAIN_VALID_TRANSACTIONS &&
	    (!tip || chain_work_cmp(&n->work, &tip->work) >= 0))
		return chain_nodes_push(&c->candidates, n);
	return 0;
}

/* Core's LoadBlockIndex: the failed block (found invalid, invalidated, or
 * a descendant of one) with the most work, as its flags were stored. */
static int load_best_invalid_fn(struct chain_node *n, void *arg)
{
	struct chain *c = arg;
	if (chain_node_failed(n) &&
	    (!c->best_invalid || chain_work_cmp(&n->work, &c->best_invalid->work) > 0))
		c->best_invalid = n;
	return 0;
}

int chain_rebuild_candidates(struct chain *c)
{
	c->candidates.n = 0;
	/* The first rebuild is the open's, over the index as loaded: the
	 * fork warning's best invalid block survives a restart, as Core's
	 * m_best_invalid does (checked again at the next tip, as Core's). */
	if (!c->best_invalid_loaded) {
		c->best_invalid_loaded = true;
		(void)chain_index_foreach(c->idx, load_best_invalid_fn, c);
	}
	return chain_index_foreach(c->idx, add_candidate_fn, c);
}

const struct chain_node *chain_tip_advance_target(const struct chain *c)
{
	const struct chain_node *tip = chain_tip(c), *best = NULL;
	for (size_t i = 0; i < c->candidates.n; i++) {
		const struct chain_node *n = c->candidates.v[i];
		if (n != tip && !chain_node_failed(n) && (!tip || better(n, tip)) &&
		    (!best || better(n, best)))
			best = n;
	}
	return best;
}

/* ---- invalid marks --------------------------------------------------------- */

struct mark_arg {
	struct chain_node *root;
	uint32_t set, clear;
};

static int mark_descendant(struct chain_node *n, void *arg)
{
	struct mark_arg *m = arg;
	if (n != m->root && n->height > m->root->height &&
	    chain_node_ancestor(n, m->root->height) == m->root) {
		uint32_t st = (n->status & ~m->clear) | m->set;
		if (st != n->status) {
			n->status = st;
			n->dirty = true;
		}
	}
	return 0;
}

void chain_mark_invalid(struct chain *c, struct chain_node *n)
{
	n->status |= CHAIN_FAILED_VALID;
	n->dirty = true;
	struct mark_arg m = {.root = n, .set = CHAIN_FAILED_CHILD};
	(void)chain_index_foreach(c->idx, mark_descendant, &m);
	chain_index_recompute_best(c->idx);
	char hex[65];
	proto_hash_to_hex(&n->hash, hex);
	chain_logf(c, CHAIN_LOG_WARN, "InvalidChainFound: invalid block=%s height=%d", hex,
	           n->height);
}

/* Core's InvalidChainFound: n was found invalid (it failed to connect, or
 * invalidateblock): the most-work such block is kept for the fork warning. */
static void invalid_chain_found(struct chain *c, struct chain_node *n)
{
	if (!c->best_invalid || chain_work_cmp(&n->work, &c->best_invalid->work) > 0)
		c->best_invalid = n;
	c->invalid_found++;
}

uint64_t chain_invalid_found(const struct chain *c)
{
	return c->invalid_found;
}

int chain_fork_warning(struct chain *c)
{
	if (chain_in_ibd(c))
		return -1;
	const struct chain_node *tip = chain_tip(c);
	if (!c->best_invalid || !tip)
		return 0;
	/* The tip's work plus six times its own block's proof. */
	struct chain_work bar = tip->work, proof;
	chain_work_of_bits(tip->bits, &proof);
	for (int i = 0; i < 6; i++)
		chain_work_add(&bar, &proof);
	if (chain_work_cmp(&c->best_invalid->work, &bar) <= 0)
		return 0;
	chain_logf(c, CHAIN_LOG_WARN,
	           "CheckForkWarningConditions: Warning: Found invalid chain at least ~6 blocks "
	           "longer than our best chain. Chain state database corruption likely.");
	return 1;
}

/* ---- moving the tip ------------------------------------------------------------ */

static int read_block(struct chain *c, const struct chain_node *n)
{
	uint8_t *raw;
	size_t len;
	int err = chain_read_block(c, n, &raw, &len);
	if (err)
		return err;
	int perr = proto_block_decode(raw, len, &c->blk, NULL);
	xfree(raw);
	if (perr) {
		char hex[65];
		proto_hash_to_hex(&n->hash, hex);
		chain_logf(c, CHAIN_LOG_ERROR, "block %s on disk does not decode: %s", hex,
		           proto_strerror(perr));
		return perr == PROTO_ENOMEM ? CHAIN_ENOMEM : CHAIN_ECORRUPT;
	}
	return 0;
}

/*
 * Core's UpdateTip line. progress is the tip's height over the best
 * header's: Core estimates it from transaction counts, which peerd does
 * not keep for blocks it has not seen; heights say the same while syncing.
 */
static void log_tip(struct chain *c, const struct chain_node *n, const char *what)
{
	char hex[65], date[32];
	proto_hash_to_hex(&n->hash, hex);
	time_t t = (time_t)n->time;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	const struct chain_node *best = chain_index_best_header(c->idx);
	double progress = best->height > 0 ? (double)n->height / best->height : 1.0;
	/* Core's UpdateTip, outside IBD: an unknown versionbit locked in is
	 * named on the line (active ones become the node's warning, which the
	 * daemon raises from the tip it is published: ctl/warnings.c). */
	char warn[512] = "";
	uint32_t locked = 0;
	if (!chain_in_ibd(c))
		(void)chain_vb_unknown_rules(c->vb, n, &locked);
	for (int bit = 0, first = 1; locked && bit < CHAIN_VB_WARN_BITS; bit++) {
		if (!(locked & (1u << bit)))
			continue;
		size_t used = strlen(warn);
		snprintf(warn + used, sizeof(warn) - used,
		         "%sUnknown new rules activated (versionbit %d)",
		         first ? " warning='" : ", ", bit);
		first = 0;
	}
	if (warn[0] && strlen(warn) + 1 < sizeof(warn))
		strcat(warn, "'");
	chain_logf(c, CHAIN_LOG_INFO,
	           "%s: new best=%s height=%d version=0x%08x log2_work=%.6f tx=%llu date='%s' "
	           "progress=%.6f cache=%.1fMiB(%zutxo)%s",
	           what, hex, n->height, (unsigned)n->version, log2(chain_work_double(&n->work)),
	           (unsigned long long)c->chain_tx, date, progress > 1.0 ? 1.0 : progress,
	           chain_coins_memory(c->coins) / 1048576.0, chain_coins_cached(c->coins), warn);
}

/* Core's ConnectTip for n, whose parent is the tip. */
static int connect_tip(struct chain *c, struct chain_node *n, struct chain_state *st)
{
	uint64_t t0 = mono_ns();
	int err = read_block(c, n);
	if (err)
		return err;
	/* The undo record is written after the coins have changed: find a
	 * full disk before, when giving up still leaves them as they were. A
	 * block's undo data is of the order of its size, which UNDO_ROOM bounds. */
	if (n->prev && (err = chain_store_space(c->store, UNDO_ROOM)) == CHAIN_ENOSPC) {
		chain_disk_failed(c, err, false, "Disk space is too low!");
		return err;
	}
	struct chain_block_undo undo;
	chain_block_undo_init(&undo);
	struct chain_connect_info info;
	bool assumed = chain_assume_valid_skips(c, n);
	chain_checker_skip_scripts(c->ck, assumed);
	err = chain_connect_block(c->coins, c->ck, &c->blk, n, c->p, false, &undo, &info, st);
	if (err)
		return err;
	if (assumed)
		c->stats.blocks_assumed_valid++;
	struct chain_pos pos = {0};
	/* Undo data already stored (a block connected again after a reorg
	 * away and back, or -reindex-chainstate) is the same: keep it, as
	 * Core's WriteUndoDataForBlock does, instead of appending a copy. */
	if (n->status & CHAIN_HAVE_UNDO) {
		chain_block_undo_release(&undo);
	} else if (!proto_hash_eq(&n->hash, &c->p->genesis_hash)) {
		err = chain_store_write_undo(c->store, n->file, &undo, &n->prev->hash, &pos);
		chain_block_undo_release(&undo);
		if (err) {
			chain_disk_failed(c, err, true, "Failed to write undo data.");
			return err;
		}
		n->undo_pos = pos.pos;
		n->status |= CHAIN_HAVE_UNDO;
	}
	if (chain_node_level(n) < CHAIN_VALID_SCRIPTS)
		n->status = (n->status & ~(uint32_t)CHAIN_VALID_MASK) | CHAIN_VALID_SCRIPTS;
	n->dirty = true;
	if ((err = chain_nodes_push(&c->active, n)))
		return err;
	c->chain_tx += n->n_tx;
	c->stats.blocks_connected++;
	for (size_t i = 0; i < c->n_listeners; i++)
		if (c->listeners[i].block_connected)
			c->listeners[i].block_connected(c->listeners[i].ctx, c, &c->blk);
	c->stats.connect_ns += mono_ns() - t0;
	log_tip(c, n, "UpdateTip");
	return 0;
}

/* Core's DisconnectTip. */
static int disconnect_tip(struct chain *c)
{
	struct chain_node *n = chain_tip(c);
	if (!n || !n->prev)
		return CHAIN_EARG;
	int err = read_block(c, n);
	if (err)
		return err;
	struct chain_block_undo undo;
	chain_block_undo_init(&undo);
	if ((err = chain_read_undo(c, n, &undo)))
		return err;
	bool unclean = false;
	err = chain_disconnect_block(c->coins, &c->blk, n, c->p, &undo, &unclean);
	chain_block_undo_release(&undo);
	if (err)
		return err;
	for (size_t i = 0; i < c->n_listeners; i++)
		if (c->listeners[i].block_disconnected &&
		    (err = c->listeners[i].block_disconnected(c->listeners[i].ctx, c, &c->blk)))
			return err;
	if (unclean) {
		char hex[65];
		proto_hash_to_hex(&n->hash, hex);
		chain_logf(c, CHAIN_LOG_WARN, "DisconnectBlock %s: coins did not match exactly",
		           hex);
	}
	c->active.n--;
	c->chain_tx -= n->n_tx;
	c->stats.blocks_disconnected++;
	/* It may be a better tip again later (a reorg that fails half way). */
	if (!chain_node_failed(n) && (err = chain_nodes_push(&c->candidates, n)))
		return err;
	log_tip(c, n->prev, "DisconnectTip");
	return 0;
}

/* The blocks from just above `fork` up to `to`, in ascending order. */
static int path_up(struct chain_node *fork, struct chain_node *to, struct chain_nodes *out)
{
	out->n = 0;
	for (struct chain_node *n = to; n != fork; n = n->prev) {
		int err = chain_nodes_push(out, n);
		if (err)
			return err;
	}
	for (size_t i = 0, j = out->n; i < j / 2; i++) {
		struct chain_node *t = out->v[i];
		out->v[i] = out->v[j - 1 - i];
		out->v[j - 1 - i] = t;
	}
	return 0;
}

/* One step: reach `best` or fail on the way. *invalid set when a block failed. */
static int activate_step(struct chain *c, struct chain_node *best, const struct chain_node *watch,
                         bool *watch_found, struct chain_state *watch_st)
{
	struct chain_node *fork = chain_node_fork(chain_tip(c), best);
	bool disconnected = false;
	int err;
	while (chain_tip(c) != fork) {
		if ((err = disconnect_tip(c)))
			return err;
		disconnected = true;
	}
	if (disconnected)
		c->stats.reorgs++;
	struct chain_nodes path = {0};
	if ((err = path_up(fork, best, &path)))
		goto out;
	for (size_t i = 0; i < path.n; i++) {
		struct chain_node *n = path.v[i];
		struct chain_state st;
		chain_state_clear(&st);
		err = connect_tip(c, n, &st);
		if (n == watch && watch_found && (err == 0 || err == CHAIN_EINVALID)) {
			*watch_found = true;
			if (watch_st)
				*watch_st = st;
		}
		if (err == CHAIN_EINVALID) {
			char hex[65];
			proto_hash_to_hex(&n->hash, hex);
			chain_logf(c, CHAIN_LOG_WARN, "ConnectBlock %s failed, %s (%s)", hex,
			           st.reason, st.debug);
			c->stats.blocks_rejected++;
			chain_mark_invalid(c, n);
			invalid_chain_found(c, n);
			err = 0;
			break;
		}
		if (err)
			goto out;
		prune_candidates(c);
		if ((err = chain_maybe_flush(c, false)))
			goto out;
		if (chain_activate_pause(c))
			break;
	}
out:
	chain_nodes_release(&path);
	return err;
}

int chain_activate(struct chain *c, const struct chain_node *watch, bool *watch_found,
                   struct chain_state *watch_st)
{
	for (;;) {
		struct chain_node *best = best_candidate(c);
		struct chain_node *tip = chain_tip(c);
		if (!best || (tip && !better(best, tip)))
			break;
		int err = activate_step(c, best, watch, watch_found, watch_st);
		if (err)
			return err;
		if (c->activate_paused)
			break; /* a reindex's step: the next one goes on */
	}
	prune_candidates(c);
	/* Core's PERIODIC flush at the end of ActivateBestChain: a LARGE cache goes now. */
	int ferr = chain_maybe_flush(c, true);
	if (ferr)
		return ferr;
	/* Listeners settle now (the mempool re-adds what disconnected blocks held). */
	for (size_t i = 0; i < c->n_listeners; i++) {
		int err;
		if (c->listeners[i].chain_settled &&
		    (err = c->listeners[i].chain_settled(c->listeners[i].ctx, c)))
			return err;
	}
	return 0;
}

/* ---- invalidateblock / reconsiderblock -------------------------------------------- */

int chain_invalidate(struct chain *c, struct chain_node *n, struct chain_state *st)
{
	if (!n->prev)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "genesis",
		                    "the genesis block cannot be invalidated");
	int err;
	while (chain_contains(c, n)) {
		if ((err = disconnect_tip(c)))
			return err;
	}
	chain_mark_invalid(c, n);
	invalid_chain_found(c, n);
	/* Everything with at least the new tip's work may be the best again. */
	if ((err = chain_rebuild_candidates(c)))
		return err;
	return chain_activate(c, NULL, NULL, NULL);
}

static int clear_marks(struct chain_node *n, void *arg)
{
	struct chain_node *root = arg;
	if (!chain_node_failed(n))
		return 0;
	bool related = false;
	if (n->height >= root->height)
		related = chain_node_ancestor(n, root->height) == root;
	else
		related = chain_node_ancestor(root, n->height) == n;
	if (related) {
		n->status &= ~(uint32_t)CHAIN_FAILED_MASK;
		n->dirty = true;
	}
	return 0;
}

int chain_reconsider(struct chain *c, struct chain_node *n, struct chain_state *st)
{
	(void)st;
	(void)chain_index_foreach(c->idx, clear_marks, n);
	/* Core's ResetBlockFailureFlags forgets the best invalid block when it
	 * is n or one of n's descendants (not when it is an ancestor). */
	struct chain_node *bi = c->best_invalid;
	if (bi && bi->height >= n->height && chain_node_ancestor(bi, n->height) == n)
		c->best_invalid = NULL;
	chain_index_recompute_best(c->idx);
	int err = chain_rebuild_candidates(c);
	if (err)
		return err;
	return chain_activate(c, NULL, NULL, NULL);
}
