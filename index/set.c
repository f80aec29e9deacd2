/*
 * index/set.c: the indexes' databases and how they follow the chain (Core's
 * BaseIndex): each index is an LMDB environment holding its entries and its
 * best block, written together in one transaction. A chain listener takes
 * each new tip in while the index is synced and steps the best block back
 * on a disconnect; index_set_step catches a lagging index up in batches
 * between the validation thread's jobs, after stepping back to the active
 * chain if a reorg (or a restart onto another branch) left it off.
 *
 * Records of an environment (one unnamed database):
 *   "best"            block hash (32) | height (4, LE)
 *   't' | txid        block hash (32)              (txindex)
 *   'f' | block hash  filter header (32) | filter  (blockfilter/basic)
 *   's' | height | hash  the UTXO set's stats after it (coinstats: coinstats.c)
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "index/internal.h"

/* Address space reserved for each environment: LMDB maps this much and
 * the file grows only as written (sparse), so room for mainnet costs
 * nothing on regtest. */
#define INDEX_MAP_SIZE ((size_t)1 << 38)
/* Blocks followed between two syncs of an environment to disk. */
#define INDEX_SYNC_BLOCKS 1000
/* A caught-up environment is compacted when at least 1/INDEX_WASTE_SHARE
 * of its file is pages no record uses (see compact_if_worth). */
#define INDEX_WASTE_SHARE 4

struct one {
	bool on;
	MDB_env *env;
	MDB_dbi dbi;
	struct proto_hash best; /* valid when height >= 0 */
	int32_t height;         /* -1: nothing taken in yet */
	bool broken;            /* a write failed: the index stays where it is */
	uint32_t unsynced;      /* blocks followed since the last sync to disk */
	/* Core's BaseIndex::m_synced: latched once the index was at the tip
	 * when attached (Init) or reached it catching up (ThreadSync), and
	 * never cleared: getindexinfo's "synced" after that, even while the
	 * tip is a block or more ahead of the index. */
	bool synced;
};

struct index_set {
	struct one ix[INDEX__COUNT];
	chain_log_fn log;
	void *log_arg;
	bool catching_up; /* a background catch-up is under way (index_set_step said more) */
};

static const char *const names[INDEX__COUNT] = {"txindex", "basic block filter index",
                                                "coinstatsindex"};
static const char *const dirs[INDEX__COUNT] = {"indexes/txindex", "indexes/blockfilter/basic",
                                               "indexes/coinstats"};

const char *index_name(enum index_kind k)
{
	return k < INDEX__COUNT ? names[k] : "";
}

static void logf_(const struct index_set *s, enum chain_log_level lv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(const struct index_set *s, enum chain_log_level lv, const char *fmt, ...)
{
	if (!s->log)
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->log(s->log_arg, lv, msg);
}

/* mkdir -p for the index's directory under the netdir. */
static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int r = mkdir(path, 0700);
		*p = '/';
		if (r && errno != EEXIST)
			return INDEX_EIO;
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return INDEX_EIO;
	return INDEX_OK;
}

static int read_best(struct one *o)
{
	MDB_txn *t;
	if (mdb_txn_begin(o->env, NULL, MDB_RDONLY, &t))
		return INDEX_EDB;
	MDB_val k = {4, (void *)"best"}, v;
	int r = mdb_get(t, o->dbi, &k, &v);
	o->height = -1;
	if (r == 0 && v.mv_size == 36) {
		const uint8_t *p = v.mv_data;
		memcpy(o->best.b, p, 32);
		o->height = (int32_t)((uint32_t)p[32] | (uint32_t)p[33] << 8 |
		                      (uint32_t)p[34] << 16 | (uint32_t)p[35] << 24);
	}
	mdb_txn_abort(t);
	return r == 0 || r == MDB_NOTFOUND ? INDEX_OK : INDEX_EDB;
}

/*
 * Open the environment in path: MDB_NOSYNC, as a commit per block with an
 * fsync each would cost initial block download dearly; the environment is
 * synced after each catch-up batch, every INDEX_SYNC_BLOCKS blocks
 * followed and at close, and a process that dies loses nothing (the
 * pages are the kernel's). 0 or LMDB's error (the environment closed).
 */
static int open_env(struct one *o, const char *path)
{
	MDB_txn *t = NULL;
	int r;
	if ((r = mdb_env_create(&o->env)))
		return r;
	if ((r = mdb_env_set_mapsize(o->env, INDEX_MAP_SIZE)) ||
	    (r = mdb_env_open(o->env, path, MDB_NOTLS | MDB_NOSYNC, 0600)) ||
	    (r = mdb_txn_begin(o->env, NULL, 0, &t)) || (r = mdb_dbi_open(t, NULL, 0, &o->dbi))) {
		if (t)
			mdb_txn_abort(t);
		mdb_env_close(o->env);
		o->env = NULL;
		return r;
	}
	if ((r = mdb_txn_commit(t))) {
		mdb_env_close(o->env);
		o->env = NULL;
	}
	return r;
}

/* Remove an environment's files: the index starts from nothing. */
static void drop_files(const char *path)
{
	char f[4096 + 16];
	snprintf(f, sizeof(f), "%s/data.mdb", path);
	(void)unlink(f);
	snprintf(f, sizeof(f), "%s/lock.mdb", path);
	(void)unlink(f);
}

static int open_one(struct index_set *s, enum index_kind k, const char *netdir, bool wipe)
{
	struct one *o = &s->ix[k];
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", netdir, dirs[k]) >= sizeof(path))
		return INDEX_EIO;
	if (make_dirs(path)) {
		logf_(s, CHAIN_LOG_ERROR, "%s: cannot create %s: %s", names[k], path,
		      strerror(errno));
		return INDEX_EIO;
	}
	if (wipe)
		drop_files(path);
	/* A compacting copy a crash interrupted (compact_if_worth) is dropped. */
	char tmp[4096 + 32];
	snprintf(tmp, sizeof(tmp), "%s/compact/data.mdb", path);
	(void)unlink(tmp);
	tmp[strlen(tmp) - strlen("/data.mdb")] = '\0';
	(void)rmdir(tmp);
	int r = open_env(o, path);
	if (r == MDB_CORRUPTED || r == MDB_INVALID || r == MDB_VERSION_MISMATCH) {
		/* Derived data: a database a system crash left damaged (commits
		 * are not synced one by one) is dropped and built again. */
		logf_(s, CHAIN_LOG_WARN, "%s: %s: %s; rebuilding the index", names[k], path,
		      mdb_strerror(r));
		drop_files(path);
		r = open_env(o, path);
	}
	if (r) {
		logf_(s, CHAIN_LOG_ERROR, "%s: cannot open %s: %s", names[k], path,
		      mdb_strerror(r));
		return INDEX_EDB;
	}
	o->on = true;
	return read_best(o);
}

int index_set_open(struct index_set **out, const struct index_config *cfg)
{
	*out = NULL;
	if (!cfg->txindex && !cfg->blockfilter && !cfg->coinstats)
		return INDEX_OK;
	struct index_set *s = xcalloc(1, sizeof(*s));
	if (!s)
		return INDEX_ENOMEM;
	s->log = cfg->log;
	s->log_arg = cfg->log_arg;
	int err = INDEX_OK;
	if (cfg->txindex)
		err = open_one(s, INDEX_TX, cfg->netdir, cfg->wipe);
	if (!err && cfg->blockfilter)
		err = open_one(s, INDEX_FILTER_BASIC, cfg->netdir, cfg->wipe);
	if (!err && cfg->coinstats)
		err = open_one(s, INDEX_COINSTATS, cfg->netdir, cfg->wipe);
	if (err) {
		index_set_close(s);
		return err;
	}
	*out = s;
	return INDEX_OK;
}

void index_set_close(struct index_set *s)
{
	if (!s)
		return;
	for (int k = 0; k < INDEX__COUNT; k++)
		if (s->ix[k].env) {
			(void)mdb_env_sync(s->ix[k].env, 1);
			mdb_env_close(s->ix[k].env);
		}
	xfree(s);
}

bool index_set_has(const struct index_set *s, enum index_kind k)
{
	return s && k < INDEX__COUNT && s->ix[k].on;
}

void index_set_db(struct index_set *s, enum index_kind k, MDB_env **env, MDB_dbi *dbi)
{
	*env = index_set_has(s, k) ? s->ix[k].env : NULL;
	*dbi = *env ? s->ix[k].dbi : 0;
}

static int put_best(struct one *o, MDB_txn *t, const struct proto_hash *h, int32_t height)
{
	uint8_t b[36];
	memcpy(b, h->b, 32);
	for (int i = 0; i < 4; i++)
		b[32 + i] = (uint8_t)((uint32_t)height >> (8 * i));
	MDB_val k = {4, (void *)"best"}, v = {sizeof(b), b};
	(void)o;
	return mdb_put(t, o->dbi, &k, &v, 0) ? INDEX_EDB : INDEX_OK;
}

/* The filter header of the block before n (zeros before genesis). */
static int prev_filter_header(struct one *o, MDB_txn *t, const struct chain_node *n,
                              struct proto_hash *out)
{
	memset(out->b, 0, 32);
	if (!n->prev)
		return INDEX_OK;
	uint8_t key[33] = {'f'};
	memcpy(key + 1, n->prev->hash.b, 32);
	MDB_val k = {sizeof(key), key}, v;
	int r = mdb_get(t, o->dbi, &k, &v);
	if (r == MDB_NOTFOUND)
		return INDEX_ENOTFOUND;
	if (r || v.mv_size < 32)
		return r ? INDEX_EDB : INDEX_ECORRUPT;
	memcpy(out->b, v.mv_data, 32);
	return INDEX_OK;
}

/* Take block n (decoded: b) into index k inside write transaction t. */
static int take_block(struct index_set *s, enum index_kind k, MDB_txn *t, struct chain *c,
                      const struct chain_node *n, const struct proto_block *b)
{
	struct one *o = &s->ix[k];
	int err = INDEX_OK;
	if (k == INDEX_TX) {
		/* Core's TxIndex leaves the genesis block out: its coinbase is
		 * not a transaction anyone can spend or look up. */
		if (!n->prev)
			return INDEX_OK;
		for (uint32_t i = 0; i < b->n_tx; i++) {
			uint8_t key[33] = {'t'};
			memcpy(key + 1, proto_tx_txid(&b->txs[i])->b, 32);
			MDB_val kv = {sizeof(key), key}, v = {32, (void *)n->hash.b};
			if (mdb_put(t, o->dbi, &kv, &v, 0))
				return INDEX_EDB;
		}
		return INDEX_OK;
	}
	if (k == INDEX_COINSTATS)
		return index_coinstats_take(t, o->dbi, c, n, b);
	struct chain_block_undo u;
	chain_block_undo_init(&u);
	const uint8_t **spent = NULL;
	uint32_t *spent_len = NULL;
	struct proto_writer w;
	proto_writer_init(&w);
	if (n->prev && chain_read_undo(c, n, &u)) {
		err = INDEX_ECHAIN;
		goto out;
	}
	if (u.total) {
		spent = xcalloc(u.total, sizeof(*spent));
		spent_len = xcalloc(u.total, sizeof(*spent_len));
		if (!spent || !spent_len) {
			err = INDEX_ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < u.total; i++) {
			spent[i] = u.coins[i].script;
			spent_len[i] = u.coins[i].script_len;
		}
	}
	struct proto_hash prev, header;
	/* 32 bytes of room for the header before the filter: one buffer, one put. */
	uint8_t zero[32] = {0};
	proto_write_bytes(&w, zero, 32);
	if ((err = index_filter_basic(b, &n->hash, spent, spent_len, u.total, &w)))
		goto out;
	if (w.err) {
		err = INDEX_ENOMEM;
		goto out;
	}
	if ((err = prev_filter_header(o, t, n, &prev)))
		goto out;
	index_filter_header(w.buf + 32, w.len - 32, &prev, &header);
	memcpy(w.buf, header.b, 32);
	uint8_t key[33] = {'f'};
	memcpy(key + 1, n->hash.b, 32);
	MDB_val kv = {sizeof(key), key}, v = {w.len, w.buf};
	if (mdb_put(t, o->dbi, &kv, &v, 0))
		err = INDEX_EDB;
out:
	proto_writer_release(&w);
	xfree(spent);
	xfree(spent_len);
	chain_block_undo_release(&u);
	return err;
}

/* Whether index o's next block is n: its best block is n's parent. */
static bool next_is(const struct one *o, const struct chain_node *n)
{
	if (o->height < 0)
		return n->prev == NULL;
	return n->prev && proto_hash_eq(&o->best, &n->prev->hash);
}

static void on_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	struct index_set *s = ctx;
	const struct chain_node *n = chain_tip(c);
	for (int k = 0; k < INDEX__COUNT; k++) {
		struct one *o = &s->ix[k];
		if (!o->on || o->broken || !next_is(o, n))
			continue; /* behind: index_set_step catches up */
		MDB_txn *t = NULL;
		int err = mdb_txn_begin(o->env, NULL, 0, &t) ? INDEX_EDB : INDEX_OK;
		if (!err) {
			if (!(err = take_block(s, k, t, c, n, b)))
				err = put_best(o, t, &n->hash, n->height);
			if (err)
				mdb_txn_abort(t);
			else if (mdb_txn_commit(t))
				err = INDEX_EDB;
		}
		if (err) {
			o->broken = true;
			logf_(s, CHAIN_LOG_ERROR, "%s: block %d: %s; the index stops here",
			      names[k], n->height, index_strerror(err));
			continue;
		}
		o->best = n->hash;
		o->height = n->height;
		if (++o->unsynced >= INDEX_SYNC_BLOCKS) {
			(void)mdb_env_sync(o->env, 1);
			o->unsynced = 0;
		}
	}
}

/* Core's BaseIndex::Rewind: the best block steps back; the entries of the
 * block stay (keyed by txid and block hash, as Core keeps them). */
static int set_best(struct one *o, const struct proto_hash *h, int32_t height)
{
	MDB_txn *t;
	if (mdb_txn_begin(o->env, NULL, 0, &t))
		return INDEX_EDB;
	int err = put_best(o, t, h, height);
	if (err) {
		mdb_txn_abort(t);
		return err;
	}
	if (mdb_txn_commit(t))
		return INDEX_EDB;
	o->best = *h;
	o->height = height;
	return INDEX_OK;
}

static int on_disconnected(void *ctx, struct chain *c, struct proto_block *b)
{
	struct index_set *s = ctx;
	(void)c; /* its tip is still b while the listeners hear of it */
	struct proto_hash h;
	proto_block_header_hash(&b->hdr, &h);
	for (int k = 0; k < INDEX__COUNT; k++) {
		struct one *o = &s->ix[k];
		if (!o->on || o->broken || o->height < 0 || !proto_hash_eq(&o->best, &h))
			continue;
		if (set_best(o, &b->hdr.prev, o->height - 1)) {
			o->broken = true;
			logf_(s, CHAIN_LOG_ERROR, "%s: cannot step back to block %d", names[k],
			      o->height - 1);
		}
	}
	return 0;
}

/*
 * Pages of o's file that hold no record: LMDB copies every page a commit
 * changes and keeps the old one on its freelist until two commits later,
 * so a catch-up whose batches each touch most leaves (random txids, block
 * hashes) leaves a file up to three times its records (measured: a 2,000
 * block txindex of 853 pages, 321 of them the tree). LMDB never gives
 * pages back to the file system: only a compacting copy does.
 */
static int waste_pages(struct one *o, size_t *waste, size_t *total)
{
	MDB_envinfo info;
	MDB_stat st;
	MDB_txn *t;
	if (mdb_env_info(o->env, &info) || mdb_txn_begin(o->env, NULL, MDB_RDONLY, &t))
		return INDEX_EDB;
	int r = mdb_stat(t, o->dbi, &st);
	mdb_txn_abort(t);
	if (r)
		return INDEX_EDB;
	/* Two meta pages, then the tree; the rest is the freelist and its pages. */
	size_t used = 2 + st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
	*total = info.me_last_pgno + 1;
	*waste = *total > used ? *total - used : 0;
	return INDEX_OK;
}

/*
 * Once an index has caught up, rewrite its file without the free pages
 * (Core's LevelDB compacts as it goes): a compacting copy into
 * <dir>/compact, synced, renamed over data.mdb, and the environment opened
 * again. All readers of the indexes run on the validation thread, as this
 * does, so none holds the old environment. A copy that fails leaves the
 * index as it was; an environment that does not open again, or comes back
 * elsewhere, stops the index (INDEX_EDB).
 */
static int compact_if_worth(struct index_set *s, enum index_kind k)
{
	struct one *o = &s->ix[k];
	size_t waste, total;
	if (waste_pages(o, &waste, &total) || waste * INDEX_WASTE_SHARE < total)
		return INDEX_OK;
	const char *p;
	char dir[4096], tmp[4096 + 16], from[4096 + 32], to[4096 + 16];
	if (mdb_env_get_path(o->env, &p) ||
	    (size_t)snprintf(dir, sizeof(dir), "%s", p) >= sizeof(dir))
		return INDEX_OK;
	snprintf(tmp, sizeof(tmp), "%s/compact", dir);
	snprintf(from, sizeof(from), "%s/data.mdb", tmp);
	snprintf(to, sizeof(to), "%s/data.mdb", dir);
	(void)unlink(from); /* left by a copy a crash interrupted */
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return INDEX_OK;
	int r = mdb_env_copy2(o->env, tmp, MDB_CP_COMPACT);
	int fd = r ? -1 : open(from, O_RDONLY);
	if (r || fd < 0 || fsync(fd)) {
		logf_(s, CHAIN_LOG_WARN, "%s: compacting %s failed: %s", names[k], dir,
		      r ? mdb_strerror(r) : strerror(errno));
		if (fd >= 0)
			close(fd);
		(void)unlink(from);
		(void)rmdir(tmp);
		return INDEX_OK;
	}
	close(fd);
	struct proto_hash best = o->best;
	int32_t height = o->height;
	mdb_env_close(o->env);
	o->env = NULL;
	r = rename(from, to);
	(void)rmdir(tmp);
	if (r) /* the old file is still there */
		logf_(s, CHAIN_LOG_WARN, "%s: compacting %s failed: %s", names[k], dir,
		      strerror(errno));
	if ((r = open_env(o, dir)) || read_best(o) || o->height != height ||
	    (height >= 0 && !proto_hash_eq(&o->best, &best))) {
		logf_(s, CHAIN_LOG_ERROR, "%s: %s does not open again after compacting: %s",
		      names[k], dir, r ? mdb_strerror(r) : "best block moved");
		if (!o->env)
			o->on = false; /* nothing left to read: as if not kept */
		return INDEX_EDB;
	}
	logf_(s, CHAIN_LOG_INFO, "%s: compacted from %zu to %zu pages", names[k], total,
	      total - waste);
	return INDEX_OK;
}

static int step(struct index_set *s, struct chain *c, uint32_t max_blocks, bool *more);

/*
 * After every activation: an index that was following the tip but fell
 * behind (a block it could not take in as the next) catches up here, a
 * batch at a time; one still in its first catch-up is left to the
 * background jobs (index_set_step's callers).
 */
static int on_settled(void *ctx, struct chain *c)
{
	struct index_set *s = ctx;
	if (s->catching_up)
		return 0;
	bool more;
	(void)step(s, c, 200, &more); /* an error is logged; the index stops, the chain goes on */
	return 0;
}

static void on_closed(void *ctx, struct chain *c)
{
	(void)ctx;
	(void)c;
}

int index_set_attach(struct index_set *s, struct chain *c)
{
	const struct chain_node *tip = chain_tip(c);
	for (int k = 0; k < INDEX__COUNT; k++) {
		struct one *o = &s->ix[k];
		if (o->on && o->height >= 0 && tip && proto_hash_eq(&o->best, &tip->hash))
			o->synced = true;
	}
	struct chain_listener l = {.block_connected = on_connected,
	                           .block_disconnected = on_disconnected,
	                           .chain_settled = on_settled,
	                           .chain_closed = on_closed,
	                           .ctx = s};
	return chain_listen(c, &l) ? INDEX_EDB : INDEX_OK;
}

/* Bring index o back onto the active chain: its best block, if the chain
 * no longer holds it, steps back to the fork; unknown to the block index
 * (a -reindex dropped it), the index starts over from genesis. */
static int back_to_active(struct index_set *s, enum index_kind k, struct chain *c)
{
	struct one *o = &s->ix[k];
	if (o->height < 0)
		return INDEX_OK;
	struct chain_node *n = chain_index_find(chain_get_index(c), &o->best);
	if (n && chain_contains(c, n))
		return INDEX_OK;
	while (n && !chain_contains(c, n))
		n = n->prev;
	if (!n) {
		logf_(s, CHAIN_LOG_WARN, "%s: best block unknown to the chain; rebuilding",
		      names[k]);
		o->height = -1;
		return INDEX_OK;
	}
	logf_(s, CHAIN_LOG_INFO, "%s: rewinding to block %d (the fork)", names[k], n->height);
	return set_best(o, &n->hash, n->height);
}

int index_set_step(struct index_set *s, struct chain *c, uint32_t max_blocks, bool *more)
{
	int err = step(s, c, max_blocks, more);
	s->catching_up = !err && *more;
	return err;
}

static int step(struct index_set *s, struct chain *c, uint32_t max_blocks, bool *more)
{
	*more = false;
	int32_t tip = chain_height(c);
	for (int k = 0; k < INDEX__COUNT; k++) {
		struct one *o = &s->ix[k];
		if (!o->on || o->broken)
			continue;
		int err = back_to_active(s, k, c);
		if (err) {
			o->broken = true;
			return err;
		}
		if (o->height >= tip) {
			o->synced = true;
			continue;
		}
		MDB_txn *t;
		if (mdb_txn_begin(o->env, NULL, 0, &t))
			return INDEX_EDB;
		const struct chain_node *last = NULL;
		struct proto_block b;
		proto_block_init(&b);
		for (uint32_t i = 0; i < max_blocks && o->height + 1 + (int32_t)i <= tip; i++) {
			struct chain_node *n = chain_at(c, o->height + 1 + (int32_t)i);
			uint8_t *raw = NULL;
			size_t len = 0;
			if (chain_read_block(c, n, &raw, &len) ||
			    proto_block_decode(raw, len, &b, NULL)) {
				xfree(raw);
				err = INDEX_ECHAIN;
				break;
			}
			err = take_block(s, k, t, c, n, &b);
			proto_block_release(&b);
			proto_block_init(&b);
			xfree(raw);
			if (err)
				break;
			last = n;
		}
		if (!err && last)
			err = put_best(o, t, &last->hash, last->height);
		if (!err && mdb_txn_commit(t))
			err = INDEX_EDB;
		else if (err)
			mdb_txn_abort(t);
		if (err) {
			o->broken = true;
			logf_(s, CHAIN_LOG_ERROR, "%s: catching up at block %d: %s", names[k],
			      o->height + 1, index_strerror(err));
			return err;
		}
		if (last) {
			o->best = last->hash;
			o->height = last->height;
		}
		if (o->height < tip) {
			*more = true;
			(void)mdb_env_sync(o->env, 1);
			continue;
		}
		o->synced = true;
		logf_(s, CHAIN_LOG_INFO, "%s is enabled at height %d", names[k], o->height);
		(void)mdb_env_sync(o->env, 1);
		if ((err = compact_if_worth(s, (enum index_kind)k))) {
			o->broken = true;
			return err;
		}
	}
	return INDEX_OK;
}

void index_set_status(const struct index_set *s, const struct chain *c, enum index_kind k,
                      int32_t *height, bool *synced)
{
	const struct one *o = &s->ix[k];
	const struct chain_node *tip = chain_tip(c);
	*height = o->height < 0 ? 0 : o->height;
	*synced = o->synced || (o->height >= 0 && tip && proto_hash_eq(&o->best, &tip->hash));
}

int index_tx_find(struct index_set *s, const struct proto_hash *txid, struct proto_hash *block)
{
	struct one *o = &s->ix[INDEX_TX];
	if (!o->on)
		return INDEX_ENOTFOUND;
	MDB_txn *t;
	if (mdb_txn_begin(o->env, NULL, MDB_RDONLY, &t))
		return INDEX_EDB;
	uint8_t key[33] = {'t'};
	memcpy(key + 1, txid->b, 32);
	MDB_val k = {sizeof(key), key}, v;
	int r = mdb_get(t, o->dbi, &k, &v);
	int err = r == MDB_NOTFOUND ? INDEX_ENOTFOUND : r ? INDEX_EDB : INDEX_OK;
	if (!err && v.mv_size != 32)
		err = INDEX_ECORRUPT;
	if (!err)
		memcpy(block->b, v.mv_data, 32);
	mdb_txn_abort(t);
	return err;
}

int index_filter_find(struct index_set *s, const struct proto_hash *block, uint8_t **filter,
                      size_t *len, struct proto_hash *header)
{
	*filter = NULL;
	*len = 0;
	struct one *o = &s->ix[INDEX_FILTER_BASIC];
	if (!o->on)
		return INDEX_ENOTFOUND;
	MDB_txn *t;
	if (mdb_txn_begin(o->env, NULL, MDB_RDONLY, &t))
		return INDEX_EDB;
	uint8_t key[33] = {'f'};
	memcpy(key + 1, block->b, 32);
	MDB_val k = {sizeof(key), key}, v;
	int r = mdb_get(t, o->dbi, &k, &v);
	int err = r == MDB_NOTFOUND ? INDEX_ENOTFOUND : r ? INDEX_EDB : INDEX_OK;
	if (!err && v.mv_size < 33)
		err = INDEX_ECORRUPT;
	if (!err) {
		*len = v.mv_size - 32;
		*filter = xmalloc(*len);
		if (!*filter)
			err = INDEX_ENOMEM;
		else {
			memcpy(header->b, v.mv_data, 32);
			memcpy(*filter, (const uint8_t *)v.mv_data + 32, *len);
		}
	}
	mdb_txn_abort(t);
	return err;
}
