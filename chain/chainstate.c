/*
 * chain/chainstate.c: opening a chain, flushing it, and coming back after
 * a crash.
 *
 * What is on disk: the block files (blocks appended as they are
 * accepted), and one LMDB database holding the coins, the block index and
 * the best block, all changed together in one transaction per flush. A
 * flush first syncs the block and undo files, so the database never names
 * data that is not on disk, and records how far the block files reached.
 * After a crash the database is at the last flush; the blocks written
 * after it are still in the block files, so opening reads them again from
 * that point (a torn last record is ignored) and connects them: the chain
 * comes back where it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "chain/internal.h"
#include "chain/coins_internal.h"

static const char META_STORE_END[] = "store_end";

/* ---- flushing ---------------------------------------------------------------- */

struct flush_arg {
	struct chain *c;
	struct chain_pos end;
	struct chain_db_txn *t;
	int err;
};

static int put_store_end(struct chain_db_txn *t, const struct chain_pos *pos)
{
	uint8_t end[8];
	for (int i = 0; i < 4; i++) {
		end[i] = (uint8_t)((uint32_t)pos->file >> (8 * i));
		end[4 + i] = (uint8_t)(pos->pos >> (8 * i));
	}
	return chain_db_put(t, CHAIN_TABLE_META, META_STORE_END, sizeof(META_STORE_END) - 1, end,
	                    sizeof(end));
}

static int put_dirty(struct chain_node *n, void *arg)
{
	struct flush_arg *f = arg;
	if (!n->dirty)
		return 0;
	uint8_t rec[CHAIN_NODE_RECORD_SIZE];
	chain_node_encode(n, rec);
	return chain_db_put(f->t, CHAIN_TABLE_INDEX, n->hash.b, sizeof(n->hash.b), rec,
	                    sizeof(rec));
}

static int flush_extra(struct chain_db_txn *t, void *arg)
{
	struct flush_arg *f = arg;
	f->t = t;
	int err = chain_index_foreach(f->c->idx, put_dirty, f);
	if (err || (err = chain_prune_put_flag(f->c->have_pruned, t)))
		return err;
	return put_store_end(t, &f->end);
}

static int clear_dirty(struct chain_node *n, void *arg)
{
	(void)arg;
	n->dirty = false;
	return 0;
}

/* Core's FlushStateToDisk reserve: a coin is ~48 bytes on disk and may
 * be written twice (LMDB copies each page it changes), doubled again for
 * safety. */
#define FLUSH_BYTES_PER_COIN 192u

/*
 * The disk a flush may take. Core's reserve is for LevelDB's packed
 * tables; LMDB writes a new copy of every leaf a coin lands in (copy on
 * write), and the file grows by those copies: 200-225 bytes a coin in
 * the large flushes of the 10.45 M-coin chain (issue 24), beyond Core's
 * 192. So the leaves too: one page a coin, at most every page in use.
 * With MDB_WRITEMAP these pages are allocated as LMDB writes them, and a
 * disk that fills then is SIGBUS (chain/db.c's guard stops the node
 * cleanly); asking for this much first is what makes that rare.
 */
static uint64_t flush_need(struct chain *c)
{
	uint64_t coins = chain_coins_dirty(c->coins);
	struct chain_db_counters k;
	chain_db_get_counters(c->db, &k);
	uint64_t leaves = coins < k.pages ? coins : k.pages;
	return coins * FLUSH_BYTES_PER_COIN + leaves * k.page_size;
}

/* Before either flush: the block and undo files on disk, and room for the
 * flush's pages (Core's messages when not). */
static int flush_ready(struct chain *c)
{
	int err = chain_store_sync(c->store);
	if (err) {
		chain_disk_failed(c, err, false, "Failed to flush the block files.");
		return err;
	}
	if ((err = chain_disk_space(c->dir, flush_need(c), NULL)) == CHAIN_ENOSPC) {
		chain_disk_failed(c, err, false, "Disk space is too low!");
		return err;
	}
	return 0;
}

/* ---- a flush on its own thread (issue 24) ----------------------------------- */

/*
 * What a flush thread writes beside the coins, copied at the hand-off: the
 * block index's changed records, the pruned flag and the block files' end.
 * The flush thread reads only this; the index goes on changing here.
 */
struct chain_flush_handoff {
	struct proto_hash *hash;
	uint8_t (*rec)[CHAIN_NODE_RECORD_SIZE];
	size_t n, cap;
	bool have_pruned;
	struct chain_pos end;
	struct chain_db_counters k0; /* for the log line at the end */
};

static void handoff_free(struct chain_flush_handoff *h)
{
	if (!h)
		return;
	xfree(h->hash);
	xfree(h->rec);
	xfree(h);
}

static int copy_dirty(struct chain_node *n, void *arg)
{
	struct chain_flush_handoff *h = arg;
	if (!n->dirty)
		return 0;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct proto_hash *hash = xreallocarray(h->hash, cap, sizeof(*hash));
		if (hash)
			h->hash = hash;
		uint8_t(*rec)[CHAIN_NODE_RECORD_SIZE] = xreallocarray(h->rec, cap, sizeof(*rec));
		if (rec)
			h->rec = rec;
		if (!hash || !rec)
			return CHAIN_ENOMEM;
		h->cap = cap;
	}
	h->hash[h->n] = n->hash;
	chain_node_encode(n, h->rec[h->n]);
	h->n++;
	return 0;
}

/* The flush thread's part of the transaction: as flush_extra, from the copy. */
static int handoff_extra(struct chain_db_txn *t, void *arg)
{
	const struct chain_flush_handoff *h = arg;
	for (size_t i = 0; i < h->n; i++) {
		int err = chain_db_put(t, CHAIN_TABLE_INDEX, h->hash[i].b, sizeof(h->hash[i].b),
		                       h->rec[i], sizeof(h->rec[i]));
		if (err)
			return err;
	}
	int err = chain_prune_put_flag(h->have_pruned, t);
	return err ? err : put_store_end(t, &h->end);
}

/*
 * Hand the cache to a flush thread. Crash safety is the synchronous
 * flush's: the block and undo files are synced first, and the coins, the
 * best block, the index records and the block files' end as of now
 * commit in one transaction, so a crash leaves the database here or at
 * the flush before, and opening replays the blocks stored after it.
 */
static int flush_start(struct chain *c)
{
	int err = flush_ready(c);
	if (err)
		return err;
	struct chain_flush_handoff *h = xcalloc(1, sizeof(*h));
	if (!h)
		return CHAIN_ENOMEM;
	if ((err = chain_index_foreach(c->idx, copy_dirty, h))) {
		handoff_free(h);
		return err;
	}
	h->have_pruned = c->have_pruned;
	chain_store_tell(c->store, &h->end);
	chain_db_get_counters(c->db, &h->k0);
	if ((err = chain_coins_flush_start(c->coins, handoff_extra, h))) {
		handoff_free(h);
		chain_disk_failed(c, err, false, "Failed to write to coin database.");
		return err;
	}
	/* Written by the flush thread; a node changed from here on is dirty
	 * again and goes with the next flush. */
	(void)chain_index_foreach(c->idx, clear_dirty, NULL);
	c->flush_inflight = h;
	return 0;
}

/* Take the flush thread's result when it has finished (`wait`: wait for
 * it). A failure is for good: the database lacks the snapshot's changes,
 * so nothing may be flushed after it (chain_close does not) and the next
 * start replays from the flush before. */
static int flush_collect(struct chain *c, bool wait)
{
	struct chain_coins_flush_report r;
	chain_coins_flush_poll(c->coins, wait, &r);
	if (!r.done)
		return 0;
	struct chain_flush_handoff *h = c->flush_inflight;
	c->flush_inflight = NULL;
	if (r.err) {
		handoff_free(h);
		c->coins_ahead = true;
		chain_disk_failed(c, r.err, true, "Failed to write to coin database.");
		chain_logf(c, CHAIN_LOG_ERROR, "the flush of the chain state failed: %s",
		           chain_strerror(r.err));
		return r.err;
	}
	struct chain_db_counters k1;
	chain_db_get_counters(c->db, &k1);
	chain_logf(c, CHAIN_LOG_INFO,
	           "Flushed the chain state on its own thread: %zu changes, %llu coins written, "
	           "%llu deleted in %.0f ms (commit %.0f ms), database %llu -> %llu pages%s%s",
	           r.entries, (unsigned long long)(k1.puts - h->k0.puts),
	           (unsigned long long)(k1.dels - h->k0.dels), (double)r.ns / 1e6,
	           (double)k1.commit_ns / 1e6, (unsigned long long)h->k0.pages,
	           (unsigned long long)k1.pages,
	           k1.rewrites != h->k0.rewrites ? ", the coins' table rewritten" : "",
	           r.map_full ? ", written again here for a full map" : "");
	c->flushed_end = h->end;
	c->last_flush = chain_now(c);
	c->stats.flushes++;
	handoff_free(h);
	return 0;
}

static int flush(struct chain *c, bool empty)
{
	/* Everything that flushes here needs the database whole: the flush
	 * in flight first. */
	int err = flush_collect(c, true);
	if (err)
		return err;
	if ((err = flush_ready(c)))
		return err;
	struct flush_arg f = {.c = c};
	chain_store_tell(c->store, &f.end);
	struct chain_db_counters k0, k1;
	chain_db_get_counters(c->db, &k0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = chain_coins_flush(c->coins, empty, flush_extra, &f))) {
		chain_disk_failed(c, err, false, "Failed to write to coin database.");
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	chain_db_get_counters(c->db, &k1);
	/* What a flush costs, for issue 24's measurements (Core's -debug=bench
	 * "write coins cache to disk" line says the same in its terms). */
	chain_logf(c, CHAIN_LOG_INFO,
	           "Flushed the chain state: %llu coins written, %llu deleted in %.0f ms "
	           "(commit %.0f ms), database %llu -> %llu pages, %llu reruns for a full map%s",
	           (unsigned long long)(k1.puts - k0.puts), (unsigned long long)(k1.dels - k0.dels),
	           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
	           (double)k1.commit_ns / 1e6, (unsigned long long)k0.pages,
	           (unsigned long long)k1.pages, (unsigned long long)(k1.reruns - k0.reruns),
	           k1.rewrites != k0.rewrites ? ", the coins' table rewritten" : "");
	(void)chain_index_foreach(c->idx, clear_dirty, NULL);
	c->flushed_end = f.end;
	c->last_flush = chain_now(c);
	c->stats.flushes++;
	return 0;
}

int chain_flush(struct chain *c)
{
	return flush(c, false);
}

int chain_maybe_flush(struct chain *c, bool periodic)
{
	int err = chain_prune_maybe(c);
	if (err || (err = flush_collect(c, false)))
		return err;
	if (chain_coins_flush_busy(c->coins)) {
		/* The cache and the snapshot together fill the space: the block
		 * waits for the flush (issue 24 asks how often: the log says). */
		if (chain_cache_state(c) != CHAIN_CACHE_CRITICAL)
			return 0;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = flush_collect(c, true);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		uint64_t ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		              (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
		c->flush_waits++;
		c->flush_wait_ns += ns;
		chain_logf(c, CHAIN_LOG_INFO,
		           "waited %.0f ms for the flush in flight (%llu waits, %.0f ms in all)",
		           (double)ns / 1e6, (unsigned long long)c->flush_waits,
		           (double)c->flush_wait_ns / 1e6);
		if (err)
			return err;
	}
	/* Core: between blocks a LARGE cache flushes, after a block only a
	 * CRITICAL one. Measured at twice its size: the cache is handed off at
	 * half the space, so that the snapshot and the cache that fills while
	 * it is written fit in the space together. */
	enum chain_cache_state st = chain_cache_state_of(c, 2 * chain_coins_memory(c->coins));
	if (st == CHAIN_CACHE_CRITICAL || (periodic && st == CHAIN_CACHE_LARGE)) {
		chain_logf(c, CHAIN_LOG_DEBUG,
		           "coins cache at %zu bytes (dbcache %zu): flushing on its own thread",
		           chain_coins_memory(c->coins), c->cfg.dbcache_bytes);
		return flush_start(c);
	}
	if (chain_now(c) - c->last_flush >= CHAIN_FLUSH_INTERVAL)
		return flush(c, false);
	return 0;
}

/* ---- loading the index --------------------------------------------------------------- */

struct loaded {
	struct chain_node node;
	struct proto_hash prev;
};

struct load_arg {
	struct loaded *v;
	size_t n, cap;
	int err;
};

static int collect(const void *key, size_t klen, const void *val, size_t vlen, void *arg)
{
	(void)key;
	(void)klen;
	struct load_arg *la = arg;
	if (la->n == la->cap) {
		size_t cap = la->cap ? la->cap * 2 : 1024;
		struct loaded *v = xreallocarray(la->v, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		la->v = v;
		la->cap = cap;
	}
	struct loaded *l = &la->v[la->n];
	int err = chain_node_decode(val, vlen, &l->node, &l->prev);
	if (err)
		return err;
	la->n++;
	return 0;
}

static int by_height(const void *a, const void *b)
{
	const struct loaded *x = a, *y = b;
	return (x->node.height > y->node.height) - (x->node.height < y->node.height);
}

/* Read every index record back, parents first; link the ones with data. */
static int load_index(struct chain *c)
{
	struct load_arg la = {0};
	int err = chain_db_foreach(c->db, CHAIN_TABLE_INDEX, collect, &la);
	if (err)
		goto out;
	if (la.n)
		qsort(la.v, la.n, sizeof(*la.v), by_height);
	for (size_t i = 0; i < la.n; i++) {
		/* Genesis's record updates the node chain_index_new made. */
		struct chain_node *n;
		if ((err = chain_index_insert_loaded(c->idx, &la.v[i].node, &la.v[i].prev, &n)))
			goto out;
		if (n->seq >= c->next_seq)
			c->next_seq = n->seq + 1;
		/* Core's HaveNumChainTxs: a pruned block (its n_tx kept, its data
		 * gone) still links the blocks above it. */
		if ((n->status & CHAIN_HAVE_DATA) || n->n_tx > 0) {
			if (!n->prev || n->prev->linked)
				n->linked = true;
			else if ((n->status & CHAIN_HAVE_DATA) &&
			         (err = chain_nodes_push(&c->unlinked, n)))
				goto out;
		}
	}
	chain_index_recompute_best(c->idx);
out:
	xfree(la.v);
	return err;
}

/* ---- every file the index names must be there (Core's LoadBlockIndexDB) ---- */

struct files_arg {
	uint8_t *have; /* bit 0: a block in blk file i, bit 1: undo data in rev file i */
	size_t n;
	int err;
};

static int note_files(struct chain_node *n, void *arg)
{
	struct files_arg *fa = arg;
	uint8_t bits =
	    (n->status & CHAIN_HAVE_DATA ? 1 : 0) | (n->status & CHAIN_HAVE_UNDO ? 2 : 0);
	if (!bits || n->file < 0)
		return 0;
	if ((size_t)n->file >= fa->n) {
		size_t want = (size_t)n->file + 1;
		uint8_t *v = xrealloc(fa->have, want);
		if (!v)
			return CHAIN_ENOMEM;
		memset(v + fa->n, 0, want - fa->n);
		fa->have = v;
		fa->n = want;
	}
	fa->have[n->file] |= bits;
	return 0;
}

/*
 * Core checks that every blk file a stored block is in exists before it
 * goes on ("Error loading block database"); peerd checks the rev files
 * with undo data too, since disconnecting a block needs them. A missing
 * file would otherwise surface much later, at the first read of a block
 * in it (serving it to a peer, a reorg), as a bare I/O error.
 */
static int check_files(struct chain *c)
{
	chain_logf(c, CHAIN_LOG_INFO, "%s", "Checking all blk files are present...");
	struct files_arg fa = {0};
	int err = chain_index_foreach(c->idx, note_files, &fa);
	for (size_t i = 0; !err && i < fa.n; i++) {
		for (int rev = 0; rev < 2 && !err; rev++) {
			if (!(fa.have[i] & (1u << rev)))
				continue;
			char path[4096];
			err =
			    chain_store_file_present(c->store, rev, (int32_t)i, path, sizeof(path));
			if (err == CHAIN_ENOTFOUND) {
				chain_logf(c, CHAIN_LOG_ERROR,
				           "Error loading block database: %s is missing, but the "
				           "block index "
				           "has %s in it. Put the file back, or: " CHAIN_DB_RECOVER
				           ", and the blocks that are gone are downloaded again",
				           path, rev ? "undo data" : "blocks", c->db_dir);
				err = CHAIN_ECORRUPT;
			}
		}
	}
	xfree(fa.have);
	return err;
}

static int read_store_end(struct chain *c)
{
	uint8_t end[8];
	size_t len = 0;
	int err = chain_db_get(c->db, CHAIN_TABLE_META, META_STORE_END, sizeof(META_STORE_END) - 1,
	                       end, sizeof(end), &len);
	if (err == CHAIN_ENOTFOUND)
		return 0;
	if (err)
		return err;
	if (len != sizeof(end))
		return CHAIN_ECORRUPT;
	uint32_t file = 0, pos = 0;
	for (int i = 0; i < 4; i++) {
		file |= (uint32_t)end[i] << (8 * i);
		pos |= (uint32_t)end[4 + i] << (8 * i);
	}
	c->flushed_end.file = (int32_t)file;
	c->flushed_end.pos = pos;
	return 0;
}

/* ---- replay after a crash --------------------------------------------------------------- */

int chain_replay_block(const struct chain_pos *pos, const uint8_t *raw, size_t len, void *arg)
{
	struct chain *c = arg;
	int perr = proto_block_decode(raw, len, &c->blk, NULL);
	if (perr)
		return perr == PROTO_ENOMEM ? CHAIN_ENOMEM : 0; /* not ours to judge: skip */
	struct chain_node *n;
	struct chain_state st;
	chain_state_clear(&st);
	int err = chain_accept_block(c, raw, len, &c->blk, pos, &n, &st);
	if (err == CHAIN_EINVALID) {
		chain_logf(c, CHAIN_LOG_DEBUG, "replay: block at %d:%u not accepted: %s", pos->file,
		           pos->pos, st.reason);
		return 0;
	}
	if (!err)
		c->stats.replayed++;
	return err;
}

/* ---- open and close ----------------------------------------------------------------------- */

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int store_genesis(struct chain *c)
{
	struct chain_node *g = chain_index_genesis(c->idx);
	if (g->status & CHAIN_HAVE_DATA)
		return 0;
	struct chain_pos pos;
	int err = chain_store_write_block(c->store, c->p->genesis, c->p->genesis_len, &pos);
	if (err)
		return err;
	return chain_block_stored(c, g, &pos, 1);
}

/* The active chain from genesis to the block the coins are at. */
static int load_active(struct chain *c)
{
	const struct proto_hash *best = chain_coins_best_block(c->coins);
	if (proto_hash_is_zero(best)) {
		/* A new database: connect genesis, which adds no coins. */
		struct chain_node *g = chain_index_genesis(c->idx);
		struct chain_state st;
		int err =
		    chain_connect_block(c->coins, c->ck, NULL, g, c->p, false, NULL, NULL, &st);
		if (err)
			return err;
		g->status = (g->status & ~(uint32_t)CHAIN_VALID_MASK) | CHAIN_VALID_SCRIPTS;
		g->dirty = true;
		c->chain_tx = 1;
		return chain_nodes_push(&c->active, g);
	}
	struct chain_node *tip = chain_index_find(c->idx, best);
	if (!tip) {
		chain_logf(c, CHAIN_LOG_ERROR, "the coins are at a block the index does not have");
		return CHAIN_ECORRUPT;
	}
	c->active.n = 0;
	for (int32_t h = 0; h <= tip->height; h++) {
		struct chain_node *a = chain_node_ancestor(tip, h);
		int err = chain_nodes_push(&c->active, a);
		if (err)
			return err;
		c->chain_tx += a->n_tx;
	}
	return 0;
}

/* Everything a chain holds, in reverse order of chain_open; no flush. */
static void free_chain(struct chain *c)
{
	/* Listeners attached in chain_open go first, as they came last. */
	for (size_t i = c->n_listeners; i-- > 0;)
		if (c->listeners[i].chain_closed)
			c->listeners[i].chain_closed(c->listeners[i].ctx, c);
	c->n_listeners = 0;
	chain_vb_free(c->vb);
	chain_checker_free(c->ck);
	chain_coins_free(c->coins); /* joins a flush thread, which reads the handoff */
	handoff_free(c->flush_inflight);
	chain_index_free(c->idx);
	chain_store_close(c->store);
	chain_db_close(c->db);
	proto_block_release(&c->blk);
	chain_nodes_release(&c->active);
	chain_nodes_release(&c->candidates);
	chain_nodes_release(&c->unlinked);
	xfree(c->db_dir);
	xfree(c->dir);
	xfree(c);
}

int chain_open(struct chain **out, const struct chain_config *cfg)
{
	struct chain *c = xcalloc(1, sizeof(*c));
	char *sub = NULL;
	int err = CHAIN_ENOMEM;
	if (!c)
		return CHAIN_ENOMEM;
	c->cfg = *cfg;
	c->p = cfg->params;
	if (cfg->min_chain_work)
		c->min_work = *cfg->min_chain_work;
	else
		chain_work_from_le(cfg->params->min_chain_work.b, &c->min_work);
	chain_assume_valid_init(c);
	/* Only the values were the caller's: the pointers are not kept. */
	c->cfg.min_chain_work = NULL;
	c->cfg.assume_valid = NULL;
	c->cfg.attach = NULL; /* called once, below */
	c->cfg.attach_arg = NULL;
	if (!c->cfg.dbcache_bytes)
		c->cfg.dbcache_bytes = (size_t)CHAIN_DBCACHE_DEFAULT_MIB << 20;
	proto_block_init(&c->blk);
	if (!(c->dir = xstrdup(cfg->dir)))
		goto fail;
	if (mkdir(c->dir, 0700) && errno != EEXIST) {
		chain_logf(c, CHAIN_LOG_ERROR, "cannot create %s: %s", c->dir, strerror(errno));
		err = CHAIN_EIO;
		goto fail;
	}
	if (!(c->db_dir = join(c->dir, "chainstate")))
		goto fail;
	if ((err = chain_reindex_remove_db(c)) ||
	    (err = chain_db_open_logged(&c->db, c->db_dir, cfg->log, cfg->log_arg)))
		goto fail;
	if (!(sub = join(c->dir, "blocks")))
		goto fail;
	if (cfg->reindex == CHAIN_REINDEX_FULL && cfg->prune_target &&
	    (err = chain_prune_reindex_cleanup(c, sub)))
		goto fail;
	if ((err = chain_store_open(&c->store, sub, c->p->magic)) ||
	    (err = chain_reindex_open_key(c, sub)) || (err = chain_reindex_prepare(c)) ||
	    (err = chain_prune_open(c)))
		goto fail;
	if ((err = chain_vb_new(&c->vb, c->p, cfg->vb_params)) ||
	    (err = chain_checker_new(&c->ck, cfg->par)) || (err = chain_index_new(&c->idx, c->p)) ||
	    (err = load_index(c)) || (err = check_files(c)) || (err = read_store_end(c)) ||
	    (err = chain_coins_new(&c->coins, c->db, c->cfg.dbcache_bytes)) ||
	    (err = load_active(c)))
		goto fail;
	if (cfg->attach && (err = cfg->attach(cfg->attach_arg, c)))
		goto fail;
	if (!c->cfg.script_cache_bytes)
		c->cfg.script_cache_bytes = CHAIN_SCRIPT_CACHE_DEFAULT_BYTES;
	if (c->cfg.script_cache_bytes != SIZE_MAX) {
		struct chain_script_cache *sc = chain_script_cache_new(c->cfg.script_cache_bytes);
		if (!sc) {
			err = CHAIN_ENOMEM;
			goto fail;
		}
		chain_checker_set_script_cache(c->ck, sc);
	}
	/* Blocks written after the last flush (a crash), or every block
	 * (-reindex): read them again. */
	/* A reindex only starts here: its reading and connecting are bounded
	 * steps the caller runs after its loop starts (chain_reindex_step),
	 * as Core's "initload" thread, so its control socket answers; so is
	 * the rest of one cut short. Connecting reads back what a crash left
	 * unflushed first. */
	c->reindex_phase = chain_reindex_first_phase(c);
	if (c->reindex_phase == CHAIN_REINDEX_PHASE_CONNECT &&
	    ((err = chain_reindex_scan(c)) || (err = store_genesis(c)) ||
	     (err = chain_rebuild_candidates(c)) || (err = chain_reindex_begin_connect(c))))
		goto fail;
	if (c->reindex_phase == CHAIN_REINDEX_PHASE_NONE) {
		if ((err = chain_reindex_scan(c)) || (err = store_genesis(c)) ||
		    (err = chain_rebuild_candidates(c)))
			goto fail;
		/* What a crash left: blocks read again just now, or read by a
		 * start that was stopped before it connected them all. */
		if (cfg->replay_in_steps && chain_tip_advance_target(c))
			err = chain_reindex_begin_connect(c);
		else if (!(err = chain_reindex_activate(c)) && !(err = flush(c, false)))
			err = chain_prune_start(c);
		if (err)
			goto fail;
	}
	if (c->stats.replayed && c->cfg.reindex != CHAIN_REINDEX_FULL)
		chain_logf(c, CHAIN_LOG_INFO, "%s %llu blocks written after the last flush",
		           chain_reindex_pending(c) ? "read" : "replayed",
		           (unsigned long long)c->stats.replayed);
	xfree(sub);
	*out = c;
	return 0;
fail:
	xfree(sub);
	if ((err == CHAIN_ECORRUPT || err == CHAIN_EDB) && c->db_dir)
		chain_logf(c, CHAIN_LOG_ERROR, "cannot open the chain in %s: %s. " CHAIN_DB_RECOVER,
		           cfg->dir, chain_strerror(err), c->db_dir);
	else
		chain_logf(c, CHAIN_LOG_ERROR, "cannot open the chain in %s: %s", cfg->dir,
		           chain_strerror(err));
	/* Closed without a flush: nothing of this run is trusted. */
	free_chain(c);
	return err;
}

int chain_reindex_end(struct chain *c)
{
	int err;
	if (c->reindex_phase == CHAIN_REINDEX_PHASE_SCAN) /* the connecting is next */
		return (err = store_genesis(c)) || (err = chain_rebuild_candidates(c))
		           ? err
		           : chain_reindex_begin_connect(c);
	if (c->reindex_phase != CHAIN_REINDEX_PHASE_CONNECT)
		return 0;
	if ((err = flush(c, false)) || (err = chain_reindex_finish(c)) ||
	    (err = chain_prune_start(c)))
		return err;
	c->reindex_phase = CHAIN_REINDEX_PHASE_NONE;
	return 0;
}

int chain_close(struct chain *c)
{
	if (!c)
		return 0;
	int err = 0;
	if (c->coins_ahead) {
		/* A block's coins are applied but not its undo data: the database
		 * stays at the last flush, and the next start replays from there. */
		chain_logf(c, CHAIN_LOG_WARN, "%s",
		           "not flushing the chain state after the failed write: the next start "
		           "replays the blocks stored since the last flush");
		err = c->fatal;
	} else if ((err = flush(c, true))) {
		chain_logf(c, CHAIN_LOG_ERROR, "final flush failed: %s", chain_strerror(err));
	}
	free_chain(c);
	return err;
}

const struct proto_params *chain_params(const struct chain *c)
{
	return c->p;
}

struct chain_vb *chain_get_vb(struct chain *c)
{
	return c->vb;
}

struct chain_index *chain_get_index(struct chain *c)
{
	return c->idx;
}

struct chain_coins *chain_get_coins(struct chain *c)
{
	return c->coins;
}

struct chain_checker *chain_get_checker(struct chain *c)
{
	return c->ck;
}

const struct chain_work *chain_min_work(const struct chain *c)
{
	return &c->min_work;
}

bool chain_tip_is_old(const struct chain *c)
{
	const struct chain_node *tip = chain_tip(c);
	int64_t age = c->cfg.max_tip_age > 0 ? c->cfg.max_tip_age : CHAIN_MAX_TIP_AGE;
	return !tip || (int64_t)tip->time < chain_now(c) - age;
}

bool chain_in_ibd(struct chain *c)
{
	if (c->finished_ibd)
		return false;
	if (chain_tip_is_old(c) || chain_work_cmp(&chain_tip(c)->work, &c->min_work) < 0)
		return true;
	chain_logf(c, CHAIN_LOG_INFO, "%s", "Leaving InitialBlockDownload (latching to false)");
	c->finished_ibd = true;
	return false;
}

void chain_get_stats(struct chain *c, struct chain_stats *out)
{
	*out = c->stats;
	out->coins_memory = chain_coins_memory(c->coins);
	out->coins_cached = chain_coins_cached(c->coins);
	out->index_nodes = chain_index_count(c->idx);
	out->index_memory = chain_index_memory(c->idx);
	uint64_t capacity;
	struct chain_script_cache *sc = chain_checker_script_cache(c->ck);
	if (sc)
		chain_script_cache_counters(sc, &out->script_cache_entries, &capacity,
		                            &out->script_cache_hits, &out->script_cache_misses);
	else
		out->script_cache_entries = out->script_cache_hits = out->script_cache_misses = 0;
}

/* ---- listeners ---------------------------------------------------------------- */

int chain_listen(struct chain *c, const struct chain_listener *l)
{
	if (c->n_listeners == CHAIN_MAX_LISTENERS)
		return CHAIN_EOVERFLOW;
	c->listeners[c->n_listeners++] = *l;
	return 0;
}

void chain_unlisten(struct chain *c, const void *ctx)
{
	for (size_t i = 0; i < c->n_listeners; i++) {
		if (c->listeners[i].ctx == ctx) {
			/* Keep the others in their order. */
			memmove(&c->listeners[i], &c->listeners[i + 1],
			        (c->n_listeners - i - 1) * sizeof(c->listeners[0]));
			c->n_listeners--;
			return;
		}
	}
}
