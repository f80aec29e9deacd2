/*
 * chain/reindex.c: Core's -reindex and -reindex-chainstate, and the
 * blocks directory's obfuscation key, for chain_open (chainstate.c).
 *
 * -reindex (CHAIN_REINDEX_FULL): the database (the block index and the
 * coins) is deleted before it is opened, as Core's DestroyDB, so a
 * database too damaged to open is rebuilt too, and the rev files go; every record of every blk
 * file is then read in order and accepted again at the position it
 * already has (nothing is copied: Core's LoadExternalBlockFile with a
 * known position), and the best chain is connected from genesis, which
 * writes the undo data again.
 *
 * -reindex-chainstate (CHAIN_REINDEX_CHAINSTATE): only the coins are
 * wiped; the index stays, and connecting the best chain from genesis
 * reads each block and its stored undo data's place from it.
 *
 * Both only begin in chain_open (the wipe, the index loaded); the rest is
 * chain_reindex_step's, in bounded steps the caller runs once it answers
 * (Core's "initload" thread): one blk file read per step (Core checks for
 * a stop between files too), then connecting for CHAIN_REINDEX_STEP_MS
 * per step (chain_activate returns early through chain_activate_pause),
 * then the final flush. Between two steps the chain is consistent, so a
 * chain_close there is a clean stop.
 *
 * A reindex cut short (a stop, a crash) goes on at the next start, with
 * or without the option, from two marks in the database:
 * - "reindexing" (stored with the wipe, as Core's reindexing flag in its
 *   block tree db): the blk file to read next, written after each file's
 *   index entries are flushed. The next start reads the files again from
 *   there, without a wipe; a block the index already has is skipped.
 * - "reindex_connect" (stored with a -reindex-chainstate's wipe, and in
 *   place of "reindexing" once a -reindex has read every file): the
 *   connecting is left. The next start connects the rest of the chain from
 *   where the coins were flushed, in the same steps after its start (Core
 *   runs every start's ActivateBestChain in its initload thread), not
 *   inside chain_open.
 * Both go after the final flush.
 *
 * Both log their progress with Core's lines where Core has one
 * ("Reindexing block file blk00000.dat...", "Loaded 110 blocks from
 * external file in 30ms", "Reindexing finished"), each connected block's
 * UpdateTip line, and a line at every tenth of the way; and tell
 * cfg.progress (sd_notify STATUS= in peerd) at most once a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chain/internal.h"

static const char META_REINDEXING[] = "reindexing";
static const char META_CONNECT[] = "reindex_connect";
static const char META_STORE_END[] = "store_end";

/* How long one connect step runs before the thread takes other work. */
#define CHAIN_REINDEX_STEP_MS 200

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Tell cfg.progress, at most once a second unless forced. */
static void progress(struct chain *c, bool force, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void progress(struct chain *c, bool force, const char *fmt, ...)
{
	if (!c->cfg.progress)
		return;
	uint64_t now = mono_ms();
	if (!force && now - c->reindex_status_ms < 1000)
		return;
	c->reindex_status_ms = now;
	char text[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	c->cfg.progress(c->cfg.progress_arg, text);
}

/* ---- the key ------------------------------------------------------------ */

int chain_reindex_open_key(struct chain *c, const char *blocks_dir)
{
	uint8_t key[CHAIN_XOR_KEY_SIZE];
	char msg[512];
	int err = chain_xor_key_init(blocks_dir, !c->cfg.no_blocks_xor, key, msg, sizeof(msg));
	if (err) {
		chain_logf(c, CHAIN_LOG_ERROR, "%s", msg);
		return err;
	}
	chain_store_set_xor_key(c->store, key);
	char hex[2 * CHAIN_XOR_KEY_SIZE + 1];
	for (size_t i = 0; i < CHAIN_XOR_KEY_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	chain_logf(c, CHAIN_LOG_INFO, "Using obfuscation key for blocksdir *.dat files (%s): '%s'",
	           blocks_dir, hex);
	return 0;
}

/* ---- the wipe ----------------------------------------------------------- */

int chain_reindex_remove_db(struct chain *c)
{
	if (c->cfg.reindex != CHAIN_REINDEX_FULL)
		return 0;
	/* Core's DestroyDB: the files go, so even a database too damaged to
	 * open is rebuilt. The index and the coins are all that is in it. */
	static const char *const files[] = {"data.mdb", "lock.mdb"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->db_dir, files[i]) >=
		        sizeof(path) ||
		    (unlink(path) && errno != ENOENT)) {
			chain_logf(c, CHAIN_LOG_ERROR, "cannot delete %s to reindex: %s", path,
			           strerror(errno));
			return CHAIN_EIO;
		}
	}
	chain_logf(c, CHAIN_LOG_INFO, "Wiping LMDB in %s", c->db_dir);
	return 0;
}

/* The "reindexing" mark's value: the next blk file to read, little-endian. */
static int put_reading(struct chain_db_txn *t, int32_t file)
{
	uint8_t v[4];
	for (int i = 0; i < 4; i++)
		v[i] = (uint8_t)((uint32_t)file >> (8 * i));
	return chain_db_put(t, CHAIN_TABLE_META, META_REINDEXING, sizeof(META_REINDEXING) - 1, v,
	                    sizeof(v));
}

/* The "reindex_connect" mark's value: which reindex it was (its last log line). */
static int put_connecting(struct chain_db_txn *t, enum chain_reindex mode)
{
	uint8_t v = (uint8_t)mode;
	return chain_db_put(t, CHAIN_TABLE_META, META_CONNECT, sizeof(META_CONNECT) - 1, &v, 1);
}

static int wipe(struct chain_db_txn *t, void *arg)
{
	struct chain *c = arg;
	int err = chain_db_clear(t, CHAIN_TABLE_COINS);
	if (!err)
		err = chain_db_del(t, CHAIN_TABLE_META, "best", 4);
	if (err)
		return err;
	if (c->cfg.reindex != CHAIN_REINDEX_FULL)
		return put_connecting(t, CHAIN_REINDEX_CHAINSTATE);
	if ((err = chain_db_clear(t, CHAIN_TABLE_INDEX)) ||
	    (err = chain_db_del(t, CHAIN_TABLE_META, META_STORE_END, sizeof(META_STORE_END) - 1)) ||
	    (err = chain_db_del(t, CHAIN_TABLE_META, META_CONNECT, sizeof(META_CONNECT) - 1)))
		return err;
	return put_reading(t, 0);
}

/* A reindex cut short, found by its marks: go on with it (no wipe). 1 when
 * one was found, 0 when none, or an error. */
static int resume(struct chain *c)
{
	uint8_t v[4] = {0};
	size_t len = 0;
	int err = chain_db_get(c->db, CHAIN_TABLE_META, META_REINDEXING,
	                       sizeof(META_REINDEXING) - 1, v, sizeof(v), &len);
	if (!err) {
		/* One byte: an older peerd's mark, without the file: from the first. */
		int32_t file = 0;
		if (len == sizeof(v))
			file = (int32_t)((uint32_t)v[0] | (uint32_t)v[1] << 8 |
			                 (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24);
		c->cfg.reindex = CHAIN_REINDEX_FULL;
		c->reindex_resume = CHAIN_REINDEX_PHASE_SCAN;
		c->reindex_file = file < 0 ? 0 : file;
		chain_logf(c, CHAIN_LOG_INFO,
		           "A reindex was interrupted: reading the block files again from "
		           "blk%05d.dat",
		           (int)c->reindex_file);
		return 1;
	}
	if (err != CHAIN_ENOTFOUND)
		return err;
	if (c->cfg.reindex != CHAIN_REINDEX_NONE)
		return 0; /* asked for again: it starts over */
	err = chain_db_get(c->db, CHAIN_TABLE_META, META_CONNECT, sizeof(META_CONNECT) - 1, v, 1,
	                   &len);
	if (err == CHAIN_ENOTFOUND)
		return 0;
	if (err)
		return err;
	c->cfg.reindex = v[0] == CHAIN_REINDEX_FULL ? CHAIN_REINDEX_FULL : CHAIN_REINDEX_CHAINSTATE;
	c->reindex_resume = CHAIN_REINDEX_PHASE_CONNECT;
	return 1; /* logged once the chain is loaded (chain_reindex_begin_connect) */
}

int chain_reindex_prepare(struct chain *c)
{
	/* An explicit -reindex starts over even when one was cut short (Core
	 * wipes at every -reindex); without it, a mark says what is left. */
	int err = c->cfg.reindex == CHAIN_REINDEX_FULL ? 0 : resume(c);
	if (err < 0)
		return err;
	if (err == 1) {
		c->reindex_t0 = mono_ms();
		return 0;
	}
	if (c->cfg.reindex == CHAIN_REINDEX_NONE)
		return 0;
	c->reindex_t0 = mono_ms();
	bool full = c->cfg.reindex == CHAIN_REINDEX_FULL;
	chain_logf(c, CHAIN_LOG_INFO, "Wiping the %s in %s",
	           full ? "block index and chain state" : "chain state", c->db_dir);
	progress(c, true, "reindex: wiping the %s",
	         full ? "block index and chain state" : "chain state");
	/* The mark first: a crash before the rev files are gone redoes it all,
	 * never leaves an index naming undo data that was deleted. */
	if ((err = chain_db_write(c->db, wipe, c)) || !full)
		return err;
	if ((err = chain_store_drop_undo(c->store)))
		chain_logf(c, CHAIN_LOG_ERROR, "%s", "cannot delete the rev files to reindex");
	return err;
}

enum chain_reindex_phase chain_reindex_first_phase(const struct chain *c)
{
	if (c->reindex_resume != CHAIN_REINDEX_PHASE_NONE)
		return c->reindex_resume;
	return c->cfg.reindex == CHAIN_REINDEX_FULL         ? CHAIN_REINDEX_PHASE_SCAN
	       : c->cfg.reindex == CHAIN_REINDEX_CHAINSTATE ? CHAIN_REINDEX_PHASE_CONNECT
	                                                    : CHAIN_REINDEX_PHASE_NONE;
}

/* ---- reading the block files ---------------------------------------------- */

struct scan_arg {
	struct chain *c;
	int32_t file;    /* the file being read, -1 before the first */
	uint64_t blocks; /* records read in it */
	uint64_t t0;     /* when it started, ms */
};

static void file_done(struct scan_arg *a)
{
	if (a->file >= 0)
		chain_logf(a->c, CHAIN_LOG_INFO,
		           "Loaded %" PRIu64 " blocks from external file in %" PRIu64 "ms",
		           a->blocks, mono_ms() - a->t0);
}

static int scan_one(const struct chain_pos *pos, const uint8_t *raw, size_t len, void *arg)
{
	struct scan_arg *a = arg;
	struct chain *c = a->c;
	if (pos->file != a->file) {
		file_done(a);
		a->file = pos->file;
		a->blocks = 0;
		a->t0 = mono_ms();
		chain_logf(c, CHAIN_LOG_INFO, "Reindexing block file blk%05d.dat...",
		           (int)pos->file);
		progress(c, true, "reindexing block file blk%05d.dat (of %d)", (int)pos->file,
		         (int)chain_store_last_file(c->store) + 1);
	}
	a->blocks++;
	c->reindex_blocks++;
	return chain_replay_block(pos, raw, len, c);
}

int chain_reindex_scan(struct chain *c)
{
	/* A full reindex reads the files in chain_reindex_step instead. */
	return chain_store_scan(c->store, &c->flushed_end, chain_replay_block, c);
}

/* Not an error: scan_one met the next file, where this step ends. */
#define NEXT_FILE 1

static int scan_file_one(const struct chain_pos *pos, const uint8_t *raw, size_t len, void *arg)
{
	struct scan_arg *a = arg;
	if (pos->file != a->c->reindex_file)
		return NEXT_FILE;
	return scan_one(pos, raw, len, arg);
}

static int mark_read(struct chain_db_txn *t, void *arg)
{
	struct chain *c = arg;
	return put_reading(t, c->reindex_file);
}

/* Every file read: the connecting is what is left (Core clears its
 * reindexing flag here). */
static int mark_connect(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	int err = chain_db_del(t, CHAIN_TABLE_META, META_REINDEXING, sizeof(META_REINDEXING) - 1);
	return err ? err : put_connecting(t, CHAIN_REINDEX_FULL);
}

/* One blk file read again, or the end of the reading (Core's ImportBlocks
 * reads a file at a time and checks for a stop between them). The index
 * entries of a file read are flushed before the mark names the next file,
 * so a crash reads again at most what was not on disk. */
static int scan_step(struct chain *c)
{
	int err;
	if (c->reindex_file > chain_store_last_file(c->store)) {
		/* Genesis stored (if the files had none) and the connecting set up
		 * first, then flushed with the index, then the mark changed. */
		chain_logf(c, CHAIN_LOG_INFO, "%s", "Reindexing finished");
		if ((err = chain_reindex_end(c)) || (err = chain_flush(c)))
			return err;
		return chain_db_write(c->db, mark_connect, c);
	}
	struct scan_arg a = {.c = c, .file = -1};
	struct chain_pos from = {c->reindex_file, 0};
	err = chain_store_scan(c->store, &from, scan_file_one, &a);
	if (err && err != NEXT_FILE)
		return err;
	file_done(&a);
	c->reindex_file++;
	if ((err = chain_flush(c)))
		return err;
	return chain_db_write(c->db, mark_read, c);
}

/* ---- connecting the best chain -------------------------------------------- */

static void on_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	(void)b;
	(void)ctx;
	int32_t h = chain_height(c);
	int32_t target = c->reindex_target;
	if (target <= 0)
		return;
	int tenth = (int)((int64_t)h * 10 / target);
	bool replay = c->cfg.reindex == CHAIN_REINDEX_NONE;
	if (tenth > c->reindex_tenth) {
		c->reindex_tenth = tenth;
		chain_logf(c, CHAIN_LOG_INFO, "%s: connected height %d of %d (%d%%)",
		           replay ? "Replay" : "Reindex", h, target, tenth * 10);
	}
	progress(c, h == target, "%s, height %d of %d",
	         replay ? "replaying the blocks stored after the last flush"
	                : "reindex: connecting blocks",
	         h, target);
}

int chain_reindex_activate(struct chain *c)
{
	return chain_activate(c, NULL, NULL, NULL);
}

int chain_reindex_begin_connect(struct chain *c)
{
	bool replay = c->cfg.reindex == CHAIN_REINDEX_NONE; /* cfg.replay_in_steps */
	if (replay) {
		/* The best connectable block: blocks a parallel download stored
		 * past a gap are not on the way. */
		const struct chain_node *t = chain_tip_advance_target(c);
		c->reindex_target = t ? t->height : chain_height(c);
	} else {
		/* The most-work header with its block stored: where the connect
		 * ends when every block is valid. */
		struct chain_node *best = chain_index_best_header(c->idx);
		while (best && !(best->status & CHAIN_HAVE_DATA))
			best = best->prev;
		c->reindex_target = best ? best->height : 0;
	}
	c->reindex_tenth = 0;
	struct chain_listener l = {.block_connected = on_connected, .ctx = &c->reindex_target};
	int err = chain_listen(c, &l);
	if (err)
		return err;
	if (c->reindex_resume == CHAIN_REINDEX_PHASE_CONNECT)
		chain_logf(
		    c, CHAIN_LOG_INFO,
		    "A reindex was interrupted: connecting the rest of the chain, from height "
		    "%d to %d",
		    (int)chain_height(c), (int)c->reindex_target);
	if (replay) {
		c->reindex_t0 = mono_ms();
		chain_logf(
		    c, CHAIN_LOG_INFO,
		    "Replaying the blocks stored after the last flush: connecting from height "
		    "%d to %d after the start",
		    (int)chain_height(c), (int)c->reindex_target);
	}
	c->reindex_phase = CHAIN_REINDEX_PHASE_CONNECT;
	return 0;
}

bool chain_activate_pause(struct chain *c)
{
	if (!c->activate_until_ms || mono_ms() < c->activate_until_ms)
		return false;
	c->activate_paused = true;
	return true;
}

/* Connect for a while (Core connects under cs_main a block at a time, so
 * its RPC answers in between); the last step flushes and ends. */
static int connect_step(struct chain *c)
{
	c->activate_until_ms = mono_ms() + CHAIN_REINDEX_STEP_MS;
	c->activate_paused = false;
	int err = chain_activate(c, NULL, NULL, NULL);
	bool more = c->activate_paused;
	c->activate_until_ms = 0;
	c->activate_paused = false;
	if (err || more)
		return err;
	chain_unlisten(c, &c->reindex_target);
	return chain_reindex_end(c);
}

bool chain_reindex_pending(const struct chain *c)
{
	return c->reindex_phase != CHAIN_REINDEX_PHASE_NONE;
}

int chain_reindex_step(struct chain *c)
{
	switch (c->reindex_phase) {
	case CHAIN_REINDEX_PHASE_SCAN:
		return scan_step(c);
	case CHAIN_REINDEX_PHASE_CONNECT:
		return connect_step(c);
	case CHAIN_REINDEX_PHASE_NONE:
		break;
	}
	return 0;
}

static int clear_marks(struct chain_db_txn *t, void *arg)
{
	(void)arg;
	int err = chain_db_del(t, CHAIN_TABLE_META, META_REINDEXING, sizeof(META_REINDEXING) - 1);
	return err ? err
	           : chain_db_del(t, CHAIN_TABLE_META, META_CONNECT, sizeof(META_CONNECT) - 1);
}

enum chain_reindex chain_reindex_mode(const struct chain *c)
{
	return c->cfg.reindex;
}

int chain_reindex_finish(struct chain *c)
{
	if (c->cfg.reindex == CHAIN_REINDEX_NONE) {
		if (c->reindex_phase == CHAIN_REINDEX_PHASE_CONNECT) { /* a replay's end */
			chain_logf(c, CHAIN_LOG_INFO, "Replay done in %" PRIu64 "ms: tip height %d",
			           mono_ms() - c->reindex_t0, (int)chain_height(c));
			progress(c, true, "replay done: height %d", (int)chain_height(c));
		}
		return 0;
	}
	/* After the flush: the marks go only once everything is on disk. */
	int err = chain_db_write(c->db, clear_marks, NULL);
	if (err)
		return err;
	struct chain_node *tip = chain_tip(c);
	char hex[65];
	proto_hash_to_hex(&tip->hash, hex);
	chain_logf(c, CHAIN_LOG_INFO,
	           "%s done in %" PRIu64 "ms: %" PRIu64 " blocks read, %" PRIu64
	           " connected, tip %s height %d",
	           c->cfg.reindex == CHAIN_REINDEX_FULL ? "Reindex" : "Reindex of the chain state",
	           mono_ms() - c->reindex_t0, c->reindex_blocks, c->stats.blocks_connected, hex,
	           tip->height);
	progress(c, true, "reindex done: height %d", tip->height);
	return 0;
}
