/*
 * chain/db.c: the chainstate's LMDB environment: one environment in a
 * directory, one named database per enum chain_table, a map that grows
 * by doubling when full, and one read transaction kept for the life of
 * the handle and reset between reads (Knot Resolver's cdb_lmdb.c is the
 * model).
 *
 * Why these choices:
 * - MDB_NOTLS: the read transaction belongs to the handle, not to the
 *   thread that first used it, so reset/renew work from whichever thread
 *   owns the chain at the time.
 * - Default sync (no MDB_NOSYNC, no MDB_NOMETASYNC): a committed flush
 *   survives kill -9 and power loss, which is the whole point of a flush.
 * - The read transaction is reset after every get, walk or cursor: a
 *   reader left open pins the pages it saw, and every later write would
 *   have to allocate new pages instead of reusing those.
 * - The map only grows between transactions (LMDB's rule for
 *   mdb_env_set_mapsize); a write that hits MDB_MAP_FULL is aborted and
 *   run again from the start, which chain_db_write's contract allows.
 * - Damage is an error, never a crash (issue 18): a data file shorter
 *   than its meta page says is refused before any other page is touched
 *   (a read past the end of the file would be SIGBUS inside liblmdb), and
 *   LMDB's assertions, which otherwise abort(), stop peerd with a message
 *   that names the recovery. Damaged pages inside the file can still send
 *   LMDB past its end (SIGBUS) or off its map (SIGSEGV): every call into
 *   LMDB runs under a guard that turns such a fault inside the map into
 *   CHAIN_ECORRUPT, and the handle then refuses all further work.
 * - MDB_WRITEMAP: a write transaction writes its pages in the map itself.
 *   Without it LMDB malloc'd a copy of every page a transaction changed
 *   and wrote the copies with pwritev at the commit: a flush of millions
 *   of coins rewrites most of the tree's leaves, and those copies were
 *   the larger part of peerd's anonymous memory (issue 24: 956 MiB peak
 *   on the 10.45 M-coin chain). The commit's durability is unchanged:
 *   msync of the data pages, then the meta page, synced (default sync).
 *   What it costs, and where it is handled: LMDB makes data.mdb as long
 *   as the map (sparse), so the file's length says nothing about its
 *   data (check_file_size reads it before the map is opened, and
 *   chain_db_disk_size counts allocated blocks); a write into a page
 *   the file system cannot back (a full disk) is SIGBUS instead of an
 *   error from write(), which the guard turns into CHAIN_ENOSPC (or
 *   CHAIN_EIO) and the flush's disk-space check makes rare; and a stray
 *   write through a pointer into the map could reach the file, which
 *   nothing in peerd does (values are copied out of the map by db_get,
 *   and walks hand out const pointers).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>

#include "base/alloc.h"
#include "base/require.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"
#include "chain/db_internal.h"

static const char VERSION_KEY[] = CHAIN_DB_VERSION_KEY;
static const char COINS_TABLE_KEY[] = CHAIN_DB_COINS_TABLE_KEY;
const char *const chain_db_coins_name[2] = {"coins", "coins.1"};

/* 64 MiB of address space to start: small enough for any host, and a
 * regtest or test database never grows it. Doubling means a mainnet
 * chainstate (~10 GiB) is reached in ~8 growths. */
#define DB_DEFAULT_MAP ((size_t)64 << 20)

static size_t test_initial_map;

static const char *const TABLE_NAME[CHAIN_TABLE__COUNT] = {
    [CHAIN_TABLE_COINS] = "coins",
    [CHAIN_TABLE_INDEX] = "index",
    [CHAIN_TABLE_META] = "meta",
};

struct chain_db_cursor {
	struct chain_db *db;
	MDB_cursor *cur;
	bool started;
};

void chain_db_test_initial_map(size_t bytes)
{
	test_initial_map = bytes;
}

/* One error line to the chain's log, or stderr without one. */
static void say(const struct chain_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct chain_db *db, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (db->log)
		db->log(db->log_arg, CHAIN_LOG_ERROR, msg);
	else
		fprintf(stderr, "chain: %s\n", msg);
}

/* ---- the fault guard -------------------------------------------------- */

/*
 * One guard per call into LMDB, on that call's stack, linked per thread.
 * The handler jumps back to the innermost one when the faulting address is
 * inside its database's map; any other fault goes to the handler that was
 * there before (the default, or ASan's), which sees it happen again.
 */
struct guard {
	sigjmp_buf jb;
	struct guard *prev;
	struct chain_db *db;
	volatile sig_atomic_t sig; /* the signal the handler caught */
};

static _Thread_local struct guard *guard_top;
static struct sigaction old_bus, old_segv;
static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	struct guard *g = guard_top;
	const char *a = si->si_addr;
	if (g && a >= g->db->map_addr && a < g->db->map_addr + g->db->map_len) {
		g->sig = sig;
		siglongjmp(g->jb, 1);
	}
	/* Not ours: put the previous handler back and let the access fault
	 * again into it. */
	sigaction(sig, sig == SIGBUS ? &old_bus : &old_segv, NULL);
}

/* At every open: the handler is (re)installed when it is not there, for
 * something else may have replaced it since the last open (a test
 * framework does, per test; on_fault itself does for a fault not ours). */
static void install_guard(void)
{
	pthread_mutex_lock(&guard_mu);
	struct sigaction cur;
	if (!sigaction(SIGBUS, NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_fault) {
		pthread_mutex_unlock(&guard_mu);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	/* NODEFER: the jump leaves the handler without returning, and the
	 * signal must not stay blocked for the next fault. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	pthread_mutex_unlock(&guard_mu);
}

/*
 * Where LMDB mapped data.mdb: LMDB does not say (mdb_env_info's me_mapaddr
 * is only the fixed address of MDB_FIXEDMAP), so the kernel's list of this
 * process's mappings is asked for the one of this file's inode. Called
 * after every (re)map. Without an answer the guard catches nothing and a
 * fault is the crash it was before.
 */
static void note_map(struct chain_db *db)
{
	db->map_addr = NULL;
	db->map_len = 0;
	char path[4096];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/data.mdb", db->dir) >= sizeof(path) ||
	    stat(path, &st))
		return;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[4096 + 128];
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;
		/* start-end perms offset dev inode path */
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &ino) == 3 &&
		    ino == (unsigned long)st.st_ino && strstr(line, "/data.mdb")) {
			db->map_addr = (const char *)lo;
			db->map_len = hi - lo;
			break;
		}
	}
	fclose(f);
}

static void guard_push(struct guard *g, struct chain_db *db)
{
	g->db = db;
	g->sig = 0;
	g->prev = guard_top;
	guard_top = g;
}

static void guard_pop(struct guard *g)
{
	guard_top = g->prev;
}

/* Back from the handler: LMDB was stopped mid-operation. A read leaves
 * nothing behind (a read transaction's cursors are not linked into it);
 * a write transaction may hold stack cursors of the abandoned frames, so
 * it is left alone (its lock dies with the process, LMDB's mutexes are
 * robust). From here every call on this handle fails. */
static int guard_fault(struct guard *g)
{
	guard_pop(g);
	struct chain_db *db = g->db;
	if (!db->broken)
		say(db,
		    "Corrupted block database detected: %s: a damaged page sent LMDB outside "
		    "the file. " CHAIN_DB_RECOVER,
		    db->dir, db->dir);
	db->broken = CHAIN_ECORRUPT;
	return CHAIN_ECORRUPT;
}

/*
 * A fault inside a write transaction. With MDB_WRITEMAP the first write to
 * a page the file never held (the sparse part past the data) makes the
 * file system allocate a block for it; when it cannot (a full disk) or
 * cannot read a page back (EIO), the access is SIGBUS. The file still has
 * the map's length then, which tells it from damage (a file cut short, or
 * a damaged page number, which guard_fault reports). Nothing was
 * committed: the meta page is written last, so the database on disk is
 * the last commit. LMDB's state in memory is unknown all the same, so the
 * handle refuses further work as after any fault.
 */
static int guard_write_fault(struct guard *g)
{
	struct chain_db *db = g->db;
	char path[4096];
	struct stat st;
	if (g->sig != SIGBUS || db->broken ||
	    (size_t)snprintf(path, sizeof(path), "%s/data.mdb", db->dir) >= sizeof(path) ||
	    stat(path, &st) || (uint64_t)st.st_size < db->map_size)
		return guard_fault(g);
	guard_pop(g);
	struct statvfs sv;
	bool full = !statvfs(db->dir, &sv) &&
	            (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize < CHAIN_MIN_DISK_SPACE;
	db->broken = full ? CHAIN_ENOSPC : CHAIN_EIO;
	say(db,
	    "%s: the file system could not store a page of the chain state (%s); nothing "
	    "was committed, the database stays at its last flush",
	    db->dir, full ? "the disk is full" : "an I/O error");
	return db->broken;
}

/* LMDB's and the system's errors as chain_err. */
static int map_err(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return CHAIN_ENOTFOUND;
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_VERSION_MISMATCH:
		return CHAIN_ECORRUPT;
	case MDB_BAD_VALSIZE:
		return CHAIN_EOVERFLOW;
	case ENOMEM:
		return CHAIN_ENOMEM;
	case ENOSPC:
	case EDQUOT:
		return CHAIN_ENOSPC;
	case EIO:
	case EROFS:
	case EACCES:
	case EPERM:
		return CHAIN_EIO;
	default:
		return CHAIN_EDB;
	}
}

/* ---- read transaction ------------------------------------------------ */

/* The read transaction is not active here (depth 0): LMDB needs that for
 * mdb_env_set_mapsize, and a reset reader holds no reader slot. */
static int adopt_resized_map(struct chain_db *db)
{
	int rc = mdb_env_set_mapsize(db->env, 0);
	if (rc)
		return map_err(rc);
	MDB_envinfo info;
	if (!mdb_env_info(db->env, &info))
		db->map_size = info.me_mapsize;
	note_map(db);
	return 0;
}

static int rd_begin(struct chain_db *db, MDB_txn **out)
{
	if (db->rd_depth) {
		db->rd_depth++;
		*out = db->rd;
		return 0;
	}
	for (int attempt = 0;; attempt++) {
		int rc = db->rd ? mdb_txn_renew(db->rd)
		                : mdb_txn_begin(db->env, NULL, MDB_RDONLY, &db->rd);
		if (rc == MDB_MAP_RESIZED && attempt == 0) {
			/* Another process grew the map: take its size and retry
			 * with a new reader (the failed renew left this one
			 * finished, and set_mapsize wants none alive). */
			if (db->rd) {
				mdb_txn_abort(db->rd);
				db->rd = NULL;
			}
			int err = adopt_resized_map(db);
			if (err)
				return err;
			continue;
		}
		if (rc) {
			/* Start over with a new reader next time. */
			if (db->rd) {
				mdb_txn_abort(db->rd);
				db->rd = NULL;
			}
			return map_err(rc);
		}
		break;
	}
	db->rd_depth = 1;
	*out = db->rd;
	return 0;
}

static void rd_end(struct chain_db *db)
{
	if (db->rd_depth && --db->rd_depth == 0)
		mdb_txn_reset(db->rd);
}

/* ---- open and close -------------------------------------------------- */

/* Inside the open's write transaction: a new database gets the version
 * record; an existing one must carry the version this code reads. */
static int check_version(struct chain_db *db, MDB_txn *txn)
{
	MDB_val k = {.mv_size = sizeof(VERSION_KEY) - 1, .mv_data = (void *)VERSION_KEY};
	MDB_val v;
	int rc = mdb_get(txn, db->dbi[CHAIN_TABLE_META], &k, &v);
	if (rc == MDB_NOTFOUND) {
		MDB_stat st;
		for (int t = 0; t < CHAIN_TABLE__COUNT; t++) {
			rc = mdb_stat(txn, db->dbi[t], &st);
			if (rc)
				return map_err(rc);
			if (st.ms_entries) {
				say(db,
				    "%s: chainstate has records but no format version "
				    "(not written by peerd?)",
				    db->dir);
				return CHAIN_ECORRUPT;
			}
		}
		uint8_t ver[4];
		proto_put_le32(ver, CHAIN_DB_FORMAT_VERSION_OLD);
		v.mv_size = sizeof(ver);
		v.mv_data = ver;
		return map_err(mdb_put(txn, db->dbi[CHAIN_TABLE_META], &k, &v, 0));
	}
	if (rc)
		return map_err(rc);
	uint32_t found = v.mv_size == 4 ? proto_le32(v.mv_data) : 0;
	if (v.mv_size != 4 ||
	    (found != CHAIN_DB_FORMAT_VERSION && found != CHAIN_DB_FORMAT_VERSION_OLD)) {
		say(db,
		    "%s: unknown chainstate format version %u (record of %zu bytes); "
		    "this peerd reads versions %u and %u: " CHAIN_DB_RECOVER
		    " or use the matching peerd",
		    db->dir, (unsigned)found, v.mv_size, CHAIN_DB_FORMAT_VERSION_OLD,
		    CHAIN_DB_FORMAT_VERSION, db->dir);
		return CHAIN_ECORRUPT;
	}
	return 0;
}

static int open_tables(struct chain_db *db)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, 0, &txn);
	if (rc)
		return map_err(rc);
	for (int t = 0; t < CHAIN_TABLE__COUNT && !rc; t++)
		rc = mdb_dbi_open(txn, TABLE_NAME[t], MDB_CREATE, &db->dbi[t]);
	int err = rc ? map_err(rc) : check_version(db, txn);
	db->coins_dbi[0] = db->dbi[CHAIN_TABLE_COINS];
	db->coins_dbi_open[0] = true;
	if (!err) {
		/* The coins' table after a rewrite (format version 2). */
		MDB_val k = {.mv_size = sizeof(COINS_TABLE_KEY) - 1,
		             .mv_data = (void *)COINS_TABLE_KEY};
		MDB_val v;
		rc = mdb_get(txn, db->dbi[CHAIN_TABLE_META], &k, &v);
		if (!rc && (v.mv_size != 1 || *(const uint8_t *)v.mv_data > 1))
			err = CHAIN_ECORRUPT;
		else if (!rc && *(const uint8_t *)v.mv_data == 1) {
			db->coins_name = 1;
			rc = mdb_dbi_open(txn, chain_db_coins_name[1], 0,
			                  &db->dbi[CHAIN_TABLE_COINS]);
			db->coins_dbi[1] = db->dbi[CHAIN_TABLE_COINS];
			db->coins_dbi_open[1] = !rc;
			/* Named but missing: not a state peerd writes. */
			err = rc == MDB_NOTFOUND ? CHAIN_ECORRUPT : map_err(rc);
		} else if (rc != MDB_NOTFOUND)
			err = map_err(rc);
	}
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return map_err(mdb_txn_commit(txn));
}

/*
 * LMDB calls this instead of abort() when one of its assertions fails,
 * which on a damaged file it does (a page of the wrong kind where a
 * branch was expected). LMDB's state is then unknown, possibly with its
 * write lock held, so there is no returning into it: say what happened
 * and what to do, and end the process with an error status instead of a
 * core dump. Nothing is lost that a restart would have: the block files
 * are intact and the chain state is to be rebuilt anyway.
 */
static void on_assert(MDB_env *env, const char *msg)
{
	struct chain_db *db = mdb_env_get_userctx(env);
	if (db)
		say(db, "Corrupted block database detected: %s: LMDB: %s. " CHAIN_DB_RECOVER,
		    db->dir, msg, db->dir);
	else
		fprintf(stderr, "chain: Corrupted block database detected: LMDB: %s\n", msg);
	_exit(1);
}

/*
 * Before the environment is opened for writing, every page up to the
 * meta page's last page number must be inside the file. A shorter file
 * (cut by a full disk, a copy that stopped, a bad restore) would fault
 * with SIGBUS the first time LMDB touched the missing pages. This runs on
 * a read-only environment of its own (no lock file, nothing mapped is
 * touched: LMDB reads the meta pages with read()), because the writable
 * MDB_WRITEMAP environment makes the file as long as its map when it
 * opens, which would hide the cut (and fill it with zeros). A missing or
 * empty file is a new database. An environment LMDB cannot read is left
 * to the real open, which says what is wrong with it.
 */
static int check_file_size(struct chain_db *db)
{
	char path[4096];
	struct stat fs;
	if ((size_t)snprintf(path, sizeof(path), "%s/data.mdb", db->dir) >= sizeof(path))
		return CHAIN_EIO;
	if (stat(path, &fs))
		return errno == ENOENT ? 0 : CHAIN_EIO;
	if (fs.st_size == 0)
		return 0;
	MDB_env *env;
	if (mdb_env_create(&env))
		return CHAIN_ENOMEM;
	MDB_envinfo info;
	MDB_stat st;
	int err = 0;
	if (!mdb_env_open(env, db->dir, MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, 0600) &&
	    !mdb_env_info(env, &info) && !mdb_env_stat(env, &st)) {
		uint64_t need = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
		if ((uint64_t)fs.st_size < need) {
			say(db,
			    "Corrupted block database detected: %s is %llu bytes, but its last "
			    "page (%zu, of %u bytes) ends at %llu: the file was cut "
			    "short. " CHAIN_DB_RECOVER,
			    path, (unsigned long long)fs.st_size, (size_t)info.me_last_pgno,
			    st.ms_psize, (unsigned long long)need, db->dir);
			err = CHAIN_ECORRUPT;
		}
	}
	mdb_env_close(env);
	return err;
}

int chain_db_open(struct chain_db **out, const char *dir)
{
	return chain_db_open_logged(out, dir, NULL, NULL);
}

int chain_db_open_logged(struct chain_db **out, const char *dir, chain_log_fn log, void *log_arg)
{
	*out = NULL;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return CHAIN_EIO;
	struct chain_db *db = xcalloc(1, sizeof(*db));
	if (!db)
		return CHAIN_ENOMEM;
	install_guard();
	int err = CHAIN_ENOMEM;
	db->log = log;
	db->log_arg = log_arg;
	db->dir = xstrdup(dir);
	if (!db->dir)
		goto fail;
	db->map_size = test_initial_map ? test_initial_map : DB_DEFAULT_MAP;
	if ((err = check_file_size(db)))
		goto fail;
	int rc = mdb_env_create(&db->env);
	if (!rc)
		rc = mdb_env_set_userctx(db->env, db);
	if (!rc)
		rc = mdb_env_set_assert(db->env, on_assert);
	if (!rc)
		rc = mdb_env_set_maxdbs(db->env,
		                        CHAIN_TABLE__COUNT + 1); /* + the coins' other name */
	if (!rc)
		rc = mdb_env_set_mapsize(db->env, db->map_size);
	if (!rc)
		rc = mdb_env_open(db->env, dir, MDB_NOTLS | MDB_WRITEMAP, 0600);
	if (rc) {
		err = map_err(rc);
		if (err == CHAIN_ECORRUPT)
			say(db,
			    "Corrupted block database detected: %s: LMDB: %s. " CHAIN_DB_RECOVER,
			    dir, mdb_strerror(rc), dir);
		goto fail;
	}
	note_map(db);
	/* An existing environment keeps the larger map it grew to. */
	MDB_envinfo info;
	if (!mdb_env_info(db->env, &info)) {
		db->map_size = info.me_mapsize;
		db->ctr.pages = (uint64_t)info.me_last_pgno + 1;
	}
	MDB_stat est;
	db->psize = mdb_env_stat(db->env, &est) ? 4096u : est.ms_psize;
	db->ctr.page_size = db->psize;
	struct guard g;
	guard_push(&g, db);
	if (sigsetjmp(g.jb, 0))
		err = guard_fault(&g);
	else {
		err = open_tables(db);
		guard_pop(&g);
	}
	if (err)
		goto fail;
	db->ctr.map_size = db->map_size;
	*out = db;
	return 0;
fail:
	chain_db_close(db);
	return err;
}

void chain_db_close(struct chain_db *db)
{
	if (!db)
		return;
	if (db->rd)
		mdb_txn_abort(db->rd);
	if (db->wr)
		mdb_txn_abort(db->wr); /* left open by a fault (chain_db_write) */
	if (db->env)
		mdb_env_close(db->env);
	xfree(db->dir);
	xfree(db);
}

/* ---- writes ---------------------------------------------------------- */

int chain_db_grow_map(struct chain_db *db)
{
	/* No transaction of ours may be live: drop the (reset) reader too,
	 * the next read begins a fresh one. */
	if (db->rd_depth)
		return CHAIN_EDB;
	if (db->rd) {
		mdb_txn_abort(db->rd);
		db->rd = NULL;
	}
	size_t next;
	if (base_mul_size(db->map_size, 2, &next))
		return CHAIN_EOVERFLOW;
	int rc = mdb_env_set_mapsize(db->env, next);
	if (rc)
		return map_err(rc);
	db->map_size = next;
	note_map(db);
	db->ctr.map_size = next;
	db->ctr.map_grows++;
	return 0;
}

/* `async`: chain_db_write_async (no growing; a rewrite left to adopt). */
static int db_write(struct chain_db *db, int (*fn)(struct chain_db_txn *t, void *arg), void *arg,
                    bool async, bool *map_full)
{
	for (int resized = 0;;) {
		struct chain_db_txn t = {.db = db};
		int rc = mdb_txn_begin(db->env, NULL, 0, &t.txn);
		if (rc == MDB_MAP_RESIZED && async)
			return CHAIN_EDB; /* another process grew it: not ours to adopt here */
		if (rc == MDB_MAP_RESIZED && !resized) {
			resized = 1;
			int err = db->rd_depth ? CHAIN_EDB : adopt_resized_map(db);
			if (err)
				return err;
			continue;
		}
		if (rc)
			return map_err(rc);
		db->wr = t.txn;
		int err = fn(&t, arg);
		if (err || t.map_full) {
			db->wr = NULL;
			mdb_txn_abort(t.txn);
			if (!t.map_full)
				return err;
		} else {
			struct timespec t0, t1;
			/* Readers on the owner's thread renew at any time: one that
			 * sees this commit must read the coins under the new name,
			 * so the id is published before the meta page is written. */
			if (async && t.rewritten)
				atomic_store_explicit(&db->rewrite_txnid, mdb_txn_id(t.txn),
				                      memory_order_release);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			rc = mdb_txn_commit(t.txn); /* the transaction is gone, committed or not */
			clock_gettime(CLOCK_MONOTONIC, &t1);
			db->wr = NULL;
			if (rc && async && t.rewritten)
				atomic_store_explicit(&db->rewrite_txnid, 0, memory_order_release);
			if (!rc) {
				if (t.rewritten && !async) {
					/* (async: chain_db_async_begin opened the handle,
					 * chain_db_async_end adopts it.) */
					unsigned to = db->coins_name ^ 1;
					db->coins_dbi[to] = t.new_dbi;
					db->coins_dbi_open[to] = true;
					db->dbi[CHAIN_TABLE_COINS] = t.new_dbi;
					db->coins_name = to;
				}
				if (t.rewritten)
					db->ctr.rewrites++;
				db->ctr.commits++;
				db->ctr.commit_ns =
				    (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
				    (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
				MDB_envinfo info;
				if (!mdb_env_info(db->env, &info))
					db->ctr.pages = (uint64_t)info.me_last_pgno + 1;
				return 0;
			}
			if (rc != MDB_MAP_FULL)
				return map_err(rc);
		}
		/* Full: the transaction is gone; grow and run fn again. */
		db->ctr.reruns++;
		if (async) {
			*map_full = true;
			return CHAIN_EOVERFLOW;
		}
		err = chain_db_grow_map(db);
		if (err)
			return err;
	}
}

/* Remember what went wrong inside fn, so chain_db_write can tell a full
 * map (rerun) from a real failure whatever fn does with the code. */
int chain_db_txn_fail(struct chain_db_txn *t, int rc)
{
	if (rc == MDB_MAP_FULL)
		t->map_full = true;
	if (!t->mdb_err)
		t->mdb_err = rc;
	return map_err(rc);
}

/* The transaction's cursor on table (see struct chain_db_txn); an LMDB code. */
static int write_cursor(struct chain_db_txn *t, enum chain_table table, MDB_cursor **out)
{
	if (!t->wcur[table]) {
		/* A table's root is read at its first use in a transaction: let
		 * mdb_stat's cursor on the stack do it, for if that read faults
		 * (a damaged file) inside mdb_cursor_open, the cursor it has just
		 * allocated is lost with the jump. */
		MDB_stat st;
		int rc = mdb_stat(t->txn, t->db->dbi[table], &st);
		if (rc)
			return rc;
		rc = mdb_cursor_open(t->txn, t->db->dbi[table], &t->wcur[table]);
		if (rc)
			return rc;
	}
	*out = t->wcur[table];
	return 0;
}

int chain_db_put(struct chain_db_txn *t, enum chain_table table, const void *key, size_t klen,
                 const void *val, size_t vlen)
{
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	if (klen == 0 || klen > (size_t)mdb_env_get_maxkeysize(t->db->env))
		return CHAIN_EOVERFLOW;
	MDB_val k = {.mv_size = klen, .mv_data = (void *)key};
	MDB_val v = {.mv_size = vlen, .mv_data = (void *)val};
	MDB_cursor *c;
	int rc = write_cursor(t, table, &c);
	if (!rc)
		rc = mdb_cursor_put(c, &k, &v, 0);
	if (rc)
		return chain_db_txn_fail(t, rc);
	t->db->ctr.puts++;
	return 0;
}

int chain_db_del(struct chain_db_txn *t, enum chain_table table, const void *key, size_t klen)
{
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	if (klen == 0 || klen > (size_t)mdb_env_get_maxkeysize(t->db->env))
		return 0; /* no such key can exist */
	MDB_val k = {.mv_size = klen, .mv_data = (void *)key};
	MDB_cursor *c;
	int rc = write_cursor(t, table, &c);
	if (!rc)
		rc = mdb_cursor_get(c, &k, NULL, MDB_SET);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (!rc)
		rc = mdb_cursor_del(c, 0);
	if (rc)
		return chain_db_txn_fail(t, rc);
	t->db->ctr.dels++;
	return 0;
}

/* ---- reads ----------------------------------------------------------- */

int chain_db_clear(struct chain_db_txn *t, enum chain_table table)
{
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	/* del 0: empty the table, keep its handle open. */
	int rc = mdb_drop(t->txn, t->db->dbi[table], 0);
	return rc ? chain_db_txn_fail(t, rc) : 0;
}

/* The table's handle for a read transaction: the coins' new name when
 * the transaction sees a rewrite a flush thread committed and the owner
 * has not adopted yet (db_write). */
static MDB_dbi read_dbi(struct chain_db *db, MDB_txn *txn, enum chain_table table)
{
	uint64_t w = atomic_load_explicit(&db->rewrite_txnid, memory_order_acquire);
	if (table == CHAIN_TABLE_COINS && w && (uint64_t)mdb_txn_id(txn) >= w)
		return db->coins_dbi[db->coins_name ^ 1];
	return db->dbi[table];
}

static int db_get(struct chain_db *db, enum chain_table table, const void *key, size_t klen,
                  void *buf, size_t cap, size_t *len)
{
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	if (klen == 0 || klen > (size_t)mdb_env_get_maxkeysize(db->env))
		return CHAIN_ENOTFOUND;
	MDB_txn *txn;
	int err = rd_begin(db, &txn);
	if (err)
		return err;
	MDB_val k = {.mv_size = klen, .mv_data = (void *)key};
	MDB_val v;
	err = map_err(mdb_get(txn, read_dbi(db, txn, table), &k, &v));
	if (!err) {
		*len = v.mv_size;
		if (v.mv_size > cap)
			err = CHAIN_EOVERFLOW;
		else if (v.mv_size)
			memcpy(buf, v.mv_data, v.mv_size);
	}
	rd_end(db);
	return err;
}

static int db_cursor_open(struct chain_db *db, enum chain_table table, struct chain_db_cursor **out)
{
	*out = NULL;
	if ((unsigned)table >= CHAIN_TABLE__COUNT)
		return CHAIN_EARG;
	struct chain_db_cursor *c = xcalloc(1, sizeof(*c));
	if (!c)
		return CHAIN_ENOMEM;
	MDB_txn *txn;
	int err = rd_begin(db, &txn);
	if (err) {
		xfree(c);
		return err;
	}
	c->db = db;
	int rc = mdb_cursor_open(txn, read_dbi(db, txn, table), &c->cur);
	if (rc) {
		rd_end(db);
		xfree(c);
		return map_err(rc);
	}
	*out = c;
	return 0;
}

static int db_cursor_next(struct chain_db_cursor *c, const uint8_t **key, size_t *klen,
                          const uint8_t **val, size_t *vlen)
{
	MDB_val k, v;
	int rc = mdb_cursor_get(c->cur, &k, &v, c->started ? MDB_NEXT : MDB_FIRST);
	if (rc)
		return map_err(rc);
	c->started = true;
	*key = k.mv_data;
	*klen = k.mv_size;
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

void chain_db_cursor_close(struct chain_db_cursor *c)
{
	if (!c)
		return;
	mdb_cursor_close(c->cur);
	rd_end(c->db);
	xfree(c);
}

/* ---- the guarded entry points ---------------------------------------- */

/*
 * Each runs its unguarded twin under a guard. Nothing the twin changes is
 * read after a jump back here, so no local needs to be volatile.
 */

static int write_guarded(struct chain_db *db, int (*fn)(struct chain_db_txn *t, void *arg),
                         void *arg, bool async, bool *map_full)
{
	if (db->broken)
		return db->broken;
	struct guard g;
	guard_push(&g, db);
	if (sigsetjmp(g.jb, 0))
		return guard_write_fault(&g);
	int err = db_write(db, fn, arg, async, map_full);
	guard_pop(&g);
	return err;
}

int chain_db_write(struct chain_db *db, int (*fn)(struct chain_db_txn *t, void *arg), void *arg)
{
	require(!db->async); /* one writer: the owner waits for the flush thread first */
	return write_guarded(db, fn, arg, false, NULL);
}

int chain_db_write_async(struct chain_db *db, int (*fn)(struct chain_db_txn *t, void *arg),
                         void *arg, bool *map_full)
{
	*map_full = false;
	return write_guarded(db, fn, arg, true, map_full);
}

int chain_db_get(struct chain_db *db, enum chain_table table, const void *key, size_t klen,
                 void *buf, size_t cap, size_t *len)
{
	if (db->broken)
		return db->broken;
	struct guard g;
	guard_push(&g, db);
	if (sigsetjmp(g.jb, 0))
		return guard_fault(&g);
	int err = db_get(db, table, key, klen, buf, cap, len);
	guard_pop(&g);
	return err;
}

int chain_db_cursor_open(struct chain_db *db, enum chain_table table, struct chain_db_cursor **out)
{
	*out = NULL;
	if (db->broken)
		return db->broken;
	struct guard g;
	guard_push(&g, db);
	if (sigsetjmp(g.jb, 0))
		return guard_fault(&g);
	int err = db_cursor_open(db, table, out);
	guard_pop(&g);
	return err;
}

int chain_db_cursor_next(struct chain_db_cursor *c, const uint8_t **key, size_t *klen,
                         const uint8_t **val, size_t *vlen)
{
	if (c->db->broken)
		return c->db->broken;
	struct guard g;
	guard_push(&g, c->db);
	if (sigsetjmp(g.jb, 0))
		return guard_fault(&g);
	int err = db_cursor_next(c, key, klen, val, vlen);
	guard_pop(&g);
	return err;
}

static int db_foreach(struct chain_db *db, enum chain_table table,
                      int (*fn)(const void *key, size_t klen, const void *val, size_t vlen,
                                void *arg),
                      void *arg)
{
	struct chain_db_cursor *c;
	int err = chain_db_cursor_open(db, table, &c);
	if (err)
		return err;
	const uint8_t *k = NULL, *v = NULL;
	size_t kl = 0, vl = 0;
	for (;;) {
		err = chain_db_cursor_next(c, &k, &kl, &v, &vl);
		if (err) {
			if (err == CHAIN_ENOTFOUND)
				err = 0; /* the end, not fn's answer */
			break;
		}
		err = fn(k, kl, v, vl, arg);
		if (err)
			break;
	}
	chain_db_cursor_close(c);
	return err;
}

/* Under a guard as a whole: fn reads values in the map too. */
int chain_db_foreach(struct chain_db *db, enum chain_table table,
                     int (*fn)(const void *key, size_t klen, const void *val, size_t vlen,
                               void *arg),
                     void *arg)
{
	if (db->broken)
		return db->broken;
	struct guard g;
	guard_push(&g, db);
	if (sigsetjmp(g.jb, 0))
		return guard_fault(&g);
	int err = db_foreach(db, table, fn, arg);
	guard_pop(&g);
	return err;
}

bool chain_db_broken(const struct chain_db *db)
{
	return db->broken != 0;
}

int chain_db_broken_err(const struct chain_db *db)
{
	return db->broken;
}

uint64_t chain_db_disk_size(struct chain_db *db)
{
	/* LMDB's data file; the lock file is not data. With MDB_WRITEMAP the
	 * file is as long as the map and sparse: its allocated blocks are the
	 * bytes it takes (and never more than its length). */
	char path[4096];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/data.mdb", db->dir) >= sizeof(path))
		return 0;
	if (stat(path, &st))
		return 0;
	uint64_t alloc = (uint64_t)st.st_blocks * 512u;
	return alloc < (uint64_t)st.st_size ? alloc : (uint64_t)st.st_size;
}

void chain_db_get_counters(const struct chain_db *db, struct chain_db_counters *out)
{
	*out = db->ctr;
}
