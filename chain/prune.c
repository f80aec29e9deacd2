/*
 * chain/prune.c: deleting old block and undo files (Core's -prune,
 * node/blockstorage.cpp's FindFilesToPrune, FindFilesToPruneManual,
 * PruneOneBlockFile and UnlinkPrunedFiles, and FlushStateToDisk's
 * prune step).
 *
 * Files go in whole blk/rev pairs, never the one being appended to, and
 * only when every block in the file is at least CHAIN_MIN_BLOCKS_TO_KEEP
 * below the tip (undo data for a reorg that deep stays). Automatic
 * pruning waits until the chain is above the network's prune-after
 * height and deletes from the oldest file up while the files use more
 * than the target less a buffer; manual pruning (pruneblockchain) deletes
 * every file below the height it is given.
 *
 * The order is Core's: the index nodes of a pruned file lose HAVE_DATA
 * and HAVE_UNDO, the index and the "prunedblockfiles" flag are flushed,
 * and only then are the files unlinked, so the database never names a
 * block whose file is gone. A crash in between leaves files nothing
 * names, which the next prune deletes.
 *
 * Core keeps per-file records (CBlockFileInfo); peerd derives the same
 * figures when it prunes: heights from the index, sizes from the files.
 * That costs a stat of each file per check and a walk over the index
 * when the files are over the target (Core's PruneOneBlockFile walks the
 * whole index for each file it prunes too), and a check happens only
 * when a blk file grows into another 16 MiB chunk (a new file too) or its
 * rev file into another 1 MiB (Core's m_check_for_pruning), or on
 * pruneblockchain.
 *
 * Threads: the chain's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/internal.h"

/* Core's BLOCKFILE_CHUNK_SIZE and UNDOFILE_CHUNK_SIZE: the growth of a
 * blk or rev file that sets m_check_for_pruning. */
#define PRUNE_CHUNK      ((uint64_t)16 << 20)
#define PRUNE_UNDO_CHUNK ((uint64_t)1 << 20)

static const char META_PRUNED[] = "prunedblockfiles";

int32_t chain_prune_after_height(const struct proto_params *p, bool fast_prune)
{
	switch (p->net) {
	case PROTO_NET_MAIN:
		return 100000;
	case PROTO_NET_REGTEST:
		return fast_prune ? 100 : 1000;
	default:
		return 1000;
	}
}

size_t chain_prune_select(const struct chain_file_info *files, int32_t n_files, int32_t n_cand,
                          uint64_t target, uint64_t buffer, int32_t min_height, int32_t last_height,
                          bool *out, uint64_t *usage)
{
	bool manual = target == CHAIN_PRUNE_MANUAL;
	uint64_t used = 0;
	for (int32_t i = 0; i < n_files; i++)
		used += files[i].size + files[i].undo_size;
	size_t count = 0;
	for (int32_t i = 0; i < n_cand; i++)
		out[i] = false;
	/* Core: nothing at all unless the usage plus the buffer reaches the target. */
	if (!manual && used + buffer < target)
		goto out;
	for (int32_t i = 0; i < n_cand && i < n_files; i++) {
		const struct chain_file_info *f = &files[i];
		if (f->size == 0)
			continue;
		if (!manual && used + buffer < target)
			break;
		if (f->height_last > last_height || f->height_first < min_height)
			continue;
		out[i] = true;
		used -= f->size + f->undo_size;
		count++;
	}
out:
	if (usage)
		*usage = used;
	return count;
}

bool chain_prune_mode(const struct chain *c)
{
	return c->cfg.prune_target != 0;
}

bool chain_fast_prune(const struct chain *c)
{
	return c->cfg.fast_prune;
}

uint64_t chain_prune_target(const struct chain *c)
{
	return c->cfg.prune_target;
}

bool chain_have_pruned(const struct chain *c)
{
	return c->have_pruned;
}

bool chain_block_pruned(const struct chain *c, const struct chain_node *n)
{
	return c->have_pruned && !(n->status & CHAIN_HAVE_DATA) && n->n_tx > 0;
}

int32_t chain_prune_height(const struct chain *c)
{
	const uint32_t mask = CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO;
	int32_t tip = chain_height(c);
	if (tip < 1)
		return -1;
	if ((c->active.v[tip]->status & mask) != mask)
		return tip;
	/* Core's GetFirstBlock from the tip down to height 1. */
	int32_t h = tip;
	while (h > 1 && (c->active.v[h - 1]->status & mask) == mask)
		h--;
	return h == 1 ? -1 : h - 1;
}

/* ---- the files' figures ---------------------------------------------------- */

struct heights_arg {
	struct chain_file_info *files;
	int32_t n;
};

static int note_heights(struct chain_node *n, void *arg)
{
	struct heights_arg *a = arg;
	if (!(n->status & CHAIN_HAVE_DATA) || n->file < 0 || n->file >= a->n)
		return 0;
	struct chain_file_info *f = &a->files[n->file];
	if (f->height_first > n->height)
		f->height_first = n->height;
	if (f->height_last < n->height)
		f->height_last = n->height;
	return 0;
}

/*
 * files[0..n) for every blk/rev pair up to the one appended to; xmalloc'd.
 * Under an automatic target the files stay below (with the buffer), the
 * heights are not needed and the walk over the index is skipped: that is
 * most checks.
 */
static int file_infos(struct chain *c, uint64_t target, uint64_t buffer,
                      struct chain_file_info **out, int32_t *n_out)
{
	int32_t n = chain_store_last_file(c->store) + 1;
	struct chain_file_info *files = xcalloc((size_t)n, sizeof(*files));
	if (!files)
		return CHAIN_ENOMEM;
	uint64_t used = 0;
	for (int32_t i = 0; i < n; i++) {
		files[i].size = chain_store_file_size(c->store, false, i);
		files[i].undo_size = chain_store_file_size(c->store, true, i);
		files[i].height_first = INT32_MAX;
		files[i].height_last = -1;
		used += files[i].size + files[i].undo_size;
	}
	*out = files;
	*n_out = n;
	if (target != CHAIN_PRUNE_MANUAL && used + buffer < target)
		return 0; /* chain_prune_select takes nothing */
	struct heights_arg a = {files, n};
	(void)chain_index_foreach(c->idx, note_heights, &a);
	/* A file no stored block names (what a crash between a prune's flush
	 * and its unlink leaves, or a torn tail): nothing holds it back. */
	for (int32_t i = 0; i < n; i++)
		if (files[i].height_last < 0)
			files[i].height_first = files[i].height_last = 0;
	return 0;
}

uint64_t chain_blocks_usage(struct chain *c)
{
	uint64_t used = 0;
	int32_t n = chain_store_last_file(c->store) + 1;
	for (int32_t i = 0; i < n; i++)
		used += chain_store_file_size(c->store, false, i) +
		        chain_store_file_size(c->store, true, i);
	return used;
}

/* ---- pruning ---------------------------------------------------------------- */

struct forget_arg {
	struct chain *c;
	const bool *gone;
	int32_t n;
};

/* Core's PruneOneBlockFile for one node. */
static int forget_node(struct chain_node *n, void *arg)
{
	struct forget_arg *a = arg;
	if (!(n->status & (CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO)) || n->file < 0 || n->file >= a->n ||
	    !a->gone[n->file])
		return 0;
	n->status &= ~(uint32_t)(CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO);
	n->file = 0;
	n->data_pos = 0;
	n->undo_pos = 0;
	n->dirty = true;
	/* A block waiting for its parent must come again to be considered. */
	struct chain_nodes *u = &a->c->unlinked;
	for (size_t i = 0; i < u->n; i++) {
		if (u->v[i] == n) {
			chain_nodes_remove(u, i);
			break;
		}
	}
	return 0;
}

/*
 * FlushStateToDisk's prune step: manual > 0 is pruneblockchain's height
 * (FindFilesToPruneManual), 0 the automatic rule (FindFilesToPrune).
 * Flushes and unlinks when anything goes.
 */
static int prune_run(struct chain *c, int32_t manual)
{
	int32_t tip = chain_height(c);
	uint64_t target = manual > 0 ? CHAIN_PRUNE_MANUAL : c->cfg.prune_target;
	if (tip < 0 || !target)
		return 0;
	if (!manual && (target == CHAIN_PRUNE_MANUAL ||
	                tip <= chain_prune_after_height(c->p, c->cfg.fast_prune)))
		return 0;
	/* Core's FlushStateToDisk: a reader's lock holds back its blocks and a
	 * buffer below them (but never below height 1). */
	int32_t last = tip;
	int32_t lock = c->prune_lock ? c->prune_lock(c->prune_lock_arg, c) : INT32_MAX;
	if (lock != INT32_MAX) {
		int32_t lock_height = lock - CHAIN_PRUNE_LOCK_BUFFER - 1;
		if (lock_height < last) {
			last = lock_height < 1 ? 1 : lock_height;
			chain_logf(c, CHAIN_LOG_DEBUG, "indexes limited pruning to height %d",
			           (int)last);
		}
	}
	if (manual > 0 && manual < last)
		last = manual;
	/* Core's GetPruneRange: never the last CHAIN_MIN_BLOCKS_TO_KEEP. */
	int32_t keep_from = tip - CHAIN_MIN_BLOCKS_TO_KEEP;
	if (last > keep_from)
		last = keep_from;
	if (last < 0 || tip <= 0)
		last = 0;

	uint64_t buffer = CHAIN_PRUNE_BUFFER;
	struct chain_node *best = chain_index_best_header(c->idx);
	/* Core: during initial block download leave room for about 1 MB per
	 * block still to come, so a prune (and its flush) does not follow
	 * every new file. */
	if (!manual && chain_in_ibd(c) && best && best->height > tip)
		buffer += (uint64_t)1000000 * (uint64_t)(best->height - tip);
	struct chain_file_info *files;
	int32_t n;
	int err = file_infos(c, target, buffer, &files, &n);
	if (err)
		return err;
	bool *gone = xcalloc((size_t)n, sizeof(*gone));
	if (!gone) {
		xfree(files);
		return CHAIN_ENOMEM;
	}
	uint64_t usage;
	size_t count = chain_prune_select(files, n, n - 1, target, buffer, 0, last, gone, &usage);
	if (manual > 0)
		chain_logf(c, CHAIN_LOG_INFO,
		           "[normal] Prune (Manual): prune_height=%d removed %zu blk/rev pairs",
		           (int)last, count);
	else
		chain_logf(c, CHAIN_LOG_DEBUG,
		           "[normal] target=%lluMiB actual=%lluMiB diff=%lldMiB min_height=0 "
		           "max_prune_height=%d removed %zu blk/rev pairs",
		           (unsigned long long)(target >> 20), (unsigned long long)(usage >> 20),
		           (long long)((int64_t)target - (int64_t)usage) / (1 << 20), (int)last,
		           count);
	if (count) {
		struct forget_arg fa = {c, gone, n - 1};
		(void)chain_index_foreach(c->idx, forget_node, &fa);
		c->have_pruned = true;
		/* The index says the blocks are gone before they are. */
		if (!(err = chain_flush(c))) {
			for (int32_t i = 0; i < n - 1; i++) {
				if (!gone[i])
					continue;
				if (chain_store_remove_file(c->store, i))
					chain_logf(c, CHAIN_LOG_WARN, "cannot delete blk/rev %05d",
					           (int)i);
				else
					chain_logf(
					    c, CHAIN_LOG_DEBUG,
					    "Prune: UnlinkPrunedFiles deleted blk/rev (%05u)",
					    (unsigned)i);
			}
		}
	}
	xfree(gone);
	xfree(files);
	return err;
}

void chain_set_prune_lock(struct chain *c, int32_t (*fn)(void *arg, struct chain *c), void *arg)
{
	c->prune_lock = fn;
	c->prune_lock_arg = fn ? arg : NULL;
}

int chain_prune_manual(struct chain *c, int32_t height)
{
	/* Core: a manual height of 0 is no manual prune at all. */
	return height > 0 ? prune_run(c, height) : 0;
}

/* The store's end in 16 MiB chunks of each file: a change is new space. */
static int64_t store_chunk(const struct chain *c)
{
	/* Core allocates the chunks a write reaches into (FlatFileSeq::Allocate):
	 * the file's number and the chunks its blk and rev files cover. */
	struct chain_pos end;
	chain_store_tell(c->store, &end);
	uint64_t rev = chain_store_file_size(c->store, true, end.file);
	uint64_t blk_chunks = ((uint64_t)end.pos + PRUNE_CHUNK - 1) / PRUNE_CHUNK;
	uint64_t rev_chunks = (rev + PRUNE_UNDO_CHUNK - 1) / PRUNE_UNDO_CHUNK;
	return ((int64_t)end.file << 32) | (int64_t)((blk_chunks & 0xff) << 24) |
	       (int64_t)(rev_chunks & 0xffffff);
}

int chain_prune_maybe(struct chain *c)
{
	if (c->cfg.prune_target == 0 || c->cfg.prune_target == CHAIN_PRUNE_MANUAL)
		return 0;
	int64_t chunk = store_chunk(c);
	if (chunk == c->prune_chunk)
		return 0;
	c->prune_chunk = chunk;
	return prune_run(c, 0);
}

struct refs_arg {
	bool *used;
	int32_t n;
};

static int note_refs(struct chain_node *n, void *arg)
{
	struct refs_arg *a = arg;
	if ((n->status & (CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO)) && n->file >= 0 && n->file < a->n)
		a->used[n->file] = true;
	return 0;
}

int chain_prune_unlink_leftovers(struct chain *c)
{
	if (!c->have_pruned)
		return 0;
	/* Core's ScanAndUnlinkAlreadyPrunedFiles: a stop between a prune's
	 * flush and its unlinks leaves files the index no longer names. */
	int32_t n = chain_store_last_file(c->store);
	if (n <= 0)
		return 0;
	struct refs_arg a = {xcalloc((size_t)n, sizeof(bool)), n};
	if (!a.used)
		return CHAIN_ENOMEM;
	(void)chain_index_foreach(c->idx, note_refs, &a);
	for (int32_t i = 0; i < n; i++) {
		if (a.used[i] || (!chain_store_file_size(c->store, false, i) &&
		                  !chain_store_file_size(c->store, true, i)))
			continue;
		if (chain_store_remove_file(c->store, i))
			chain_logf(c, CHAIN_LOG_WARN, "cannot delete blk/rev %05d", (int)i);
		else
			chain_logf(c, CHAIN_LOG_DEBUG,
			           "Prune: UnlinkPrunedFiles deleted blk/rev (%05u)", (unsigned)i);
	}
	xfree(a.used);
	return 0;
}

int chain_prune_open(struct chain *c)
{
	uint8_t v = 0;
	size_t len = 0;
	int err = chain_db_get(c->db, CHAIN_TABLE_META, META_PRUNED, sizeof(META_PRUNED) - 1, &v,
	                       sizeof(v), &len);
	if (err && err != CHAIN_ENOTFOUND)
		return err;
	c->have_pruned = !err && len == 1 && v;
	if (c->have_pruned)
		chain_logf(c, CHAIN_LOG_INFO, "%s",
		           "LoadBlockIndexDB(): Block files have previously been pruned");
	if (c->have_pruned && !c->cfg.prune_target) {
		chain_logf(c, CHAIN_LOG_ERROR, "%s",
		           "You need to rebuild the database using -reindex to go back to "
		           "unpruned mode.  This will redownload the entire blockchain");
		return CHAIN_EARG;
	}
	if (c->cfg.fast_prune)
		chain_store_set_max_file_size(c->store, CHAIN_FASTPRUNE_FILE_SIZE);
	/* Only new space is a reason to look again (a reindex writes none). */
	c->prune_chunk = store_chunk(c);
	return 0;
}

int chain_prune_start(struct chain *c)
{
	int err = chain_prune_unlink_leftovers(c);
	/* Core's PruneAndFlush at startup, not after a reindex. */
	if (!err && c->cfg.reindex == CHAIN_REINDEX_NONE && c->cfg.prune_target &&
	    c->cfg.prune_target != CHAIN_PRUNE_MANUAL)
		err = prune_run(c, 0);
	return err;
}

int chain_prune_put_flag(bool have_pruned, struct chain_db_txn *t)
{
	if (!have_pruned)
		return 0;
	uint8_t one = 1;
	return chain_db_put(t, CHAIN_TABLE_META, META_PRUNED, sizeof(META_PRUNED) - 1, &one,
	                    sizeof(one));
}

/* ---- -reindex under -prune -------------------------------------------------- */

static int by_number(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The number of "blkNNNNN.dat" or "revNNNNN.dat" (exactly five digits, as
 * Core's 12-character names), or -1. */
static int32_t file_number(const char *name, const char *kind)
{
	if (strlen(name) != 12 || strncmp(name, kind, 3) || strcmp(name + 8, ".dat"))
		return -1;
	int32_t n = 0;
	for (int i = 3; i < 8; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		n = n * 10 + (name[i] - '0');
	}
	return n;
}

static int remove_named(const char *dir, const char *kind, int32_t n)
{
	char path[4096];
	int len = snprintf(path, sizeof(path), "%s/%s%05d.dat", dir, kind, (int)n);
	if (len < 0 || (size_t)len >= sizeof(path))
		return CHAIN_EIO;
	return unlink(path) && errno != ENOENT ? CHAIN_EIO : 0;
}

int chain_prune_reindex_cleanup(struct chain *c, const char *blocks_dir)
{
	DIR *d = opendir(blocks_dir);
	if (!d)
		return errno == ENOENT ? 0 : CHAIN_EIO;
	chain_logf(
	    c, CHAIN_LOG_INFO, "%s",
	    "Removing unusable blk?????.dat and rev?????.dat files for -reindex with -prune");
	int32_t *blk = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	struct dirent *e;
	while (!err && (e = readdir(d))) {
		int32_t num;
		if ((num = file_number(e->d_name, "rev")) >= 0) {
			err = remove_named(blocks_dir, "rev", num);
		} else if ((num = file_number(e->d_name, "blk")) >= 0) {
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				int32_t *v = xreallocarray(blk, ncap, sizeof(*v));
				if (!v) {
					err = CHAIN_ENOMEM;
					break;
				}
				blk = v;
				cap = ncap;
			}
			blk[n++] = num;
		}
	}
	closedir(d);
	/* A reindex reads blk files from 0 until one is missing: every file
	 * after the first gap would never be read, and goes. */
	if (!err && n)
		qsort(blk, n, sizeof(*blk), by_number);
	int32_t next = 0;
	for (size_t i = 0; !err && i < n; i++) {
		if (blk[i] == next)
			next++;
		else
			err = remove_named(blocks_dir, "blk", blk[i]);
	}
	xfree(blk);
	return err;
}
