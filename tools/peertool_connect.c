/*
 * tools/peertool_connect.c: `peertool connect-blocks`, validating block-file
 * records into a chain on disk, offline: Bitcoin Core's -loadblock
 * (LoadExternalBlockFile) for peerd's chain/.
 *
 *   peertool connect-blocks [--chain NAME] [--par N] [--dbcache MIB]
 *                           [--utxo-stats] DATADIR FILE...
 *
 * Every record (magic, 4-byte LE length, block) of every FILE goes through
 * chain_submit_block, as submitblock would. A block whose parent the chain
 * does not know yet waits, as in Core's mapBlocksUnknownParent, until the
 * parent arrives; what still waits at the end is counted as rejected. Zero
 * bytes between or after records (Core's preallocated blk files) are
 * skipped. The files are mapped, not read, so Core's 128 MiB blk files cost
 * no copy, and waiting blocks point into the maps.
 *
 * Core 28+'s obfuscated files: a FILE named blkNNNNN.dat with an xor.dat
 * beside it (a Core blocks directory) is read through that key, each byte
 * XORed by its offset as Core's AutoFile does, in place in a private
 * map; a FILE that is a directory stands for its blk files in number
 * order. Core preallocates blk files with zeros it never obfuscates, so
 * padding is found on the raw bytes, after the magic was looked for.
 *
 * The chain is left flushed and closed, so running again with the same
 * files continues where this run stopped (or where a kill -9 left it:
 * chain_open replays what the block files hold past the last flush).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "base/opt.h"
#include "tools/peertool.h"
#include "conf/conf.h"
#include "json/json.h"

#define CB_CMD "connect-blocks"
/** Reject reasons kept for the report; the rest are only counted. */
#define CB_MAX_REASONS 5
/** Most --par accepts (the check queue's limit). */
#define CB_MAX_PAR POOL_MAX_THREADS

/** Largest --dbcache, MiB: far past any machine this runs on. */
#define CB_MAX_DBCACHE (1u << 20)
/** Smallest --dbcache, MiB: about 10 KiB, a flush every few blocks. */
#define CB_MIN_DBCACHE 0.01

static const char USAGE[] = "usage: peertool connect-blocks [--chain NAME] [--par N] "
                            "[--dbcache MIB] [--utxo-stats]\n"
                            "                               [--verbose] DATADIR FILE...";

void peertool_connect_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Validate the blocks of block files (Bitcoin Core's blkNNNNN.dat format: network\n"
	        "magic, 4-byte little-endian length, block; zero padding between and after\n"
	        "records is skipped) into the chain at DATADIR, created if missing, exactly as\n"
	        "submitblock would take them, and print a JSON report: tip hash, height and\n"
	        "chainwork, blocks accepted / duplicate / rejected (first reject reasons),\n"
	        "seconds, blocks/s, UTXO flushes and peak RSS. Blocks may come in any order: one\n"
	        "whose parent is unknown waits for it. DATADIR is laid out as peerd's and\n"
	        "bitcoind's: the chain goes in DATADIR/regtest/ (testnet3/, testnet4/,\n"
	        "signet/; main's at the top), locked as peerd locks it. Running again with\n"
	        "the same files continues, also after a crash or kill -9.\n\n"
	        "A FILE that is a directory stands for its blkNNNNN.dat files in number order;\n"
	        "a blkNNNNN.dat with an xor.dat beside it (Bitcoin Core 28+'s blocks directory)\n"
	        "is read through that key.\n\n"
	        "  --chain NAME     network whose magic and rules apply (default regtest)\n"
	        "  --par N          script-check threads in all, this one included\n"
	        "                   (bitcoind's -par; default 0: one per core)\n"
	        "  --dbcache MIB    coins cache budget in MiB (default %d); fractions down\n"
	        "                   to 0.01 make the chain flush every few blocks (tests)\n"
	        "  --utxo-stats     add gettxoutsetinfo's figures (hash_serialized_3, txouts,\n"
	        "                   transactions, bogosize, total_amount)\n"
	        "  --verbose        chain/'s log on stderr\n\n"
	        "Example:\n"
	        "  peertool chaingen --blocks 300 --out chain.dat\n"
	        "  peertool connect-blocks --utxo-stats /tmp/dd chain.dat\n\n"
	        "Exit codes: 0 every block valid or a duplicate, 1 a block rejected or left\n"
	        "without its parent, a file unreadable or malformed, or the chain failed\n"
	        "(I/O, database); 2 usage error.\n",
	        USAGE, CHAIN_DBCACHE_DEFAULT_MIB);
}

struct cb_args {
	const struct proto_params *p;
	const char *datadir;
	char **files;
	int n_files;
	int par;
	double dbcache_mib;
	bool utxo_stats;
	bool verbose;
};

/* A mapped input file. */
struct cb_file {
	const char *path;
	char *owned; /* path, when made from a directory's listing */
	uint8_t *map;
	size_t len;
	uint8_t key[CHAIN_XOR_KEY_SIZE]; /* xor.dat beside a Core blk file; zero: none */
	bool xor ;
};

/* A block waiting for its parent: where its bytes are (in a map). */
struct cb_orphan {
	struct proto_hash prev;
	const uint8_t *raw;
	size_t len;
	size_t next; /* next orphan with the same prev's bucket, or SIZE_MAX */
	bool done;
};

struct cb {
	const struct cb_args *a;
	struct chain *c;
	struct proto_block b;
	/* orphans: an array and a chained hash table over their prev hashes */
	struct cb_orphan *orph;
	size_t n_orph, orph_cap, orph_waiting;
	size_t *buckets; /* head index per bucket, SIZE_MAX empty */
	size_t n_buckets;
	/* the stack of blocks whose waiting children are due */
	struct proto_hash *due;
	size_t n_due, due_cap;
	/* counts */
	uint64_t records, accepted, inconclusive, duplicate, rejected;
	json_t *reasons;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "peertool: %s: ", CB_CMD);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", USAGE);
	return 2;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

enum { CB_OPT_CHAIN, CB_OPT_PAR, CB_OPT_DBCACHE, CB_OPT_UTXO_STATS, CB_OPT_VERBOSE };

static const struct base_opt_spec CB_OPTS[] = {
    {"chain", CB_OPT_CHAIN, true},      {"par", CB_OPT_PAR, true},
    {"dbcache", CB_OPT_DBCACHE, true},  {"utxo-stats", CB_OPT_UTXO_STATS, false},
    {"verbose", CB_OPT_VERBOSE, false},
};
static const struct base_opt_cmd CB_OPT_CMD = {
    "peertool",           CB_CMD, USAGE, CB_OPTS, sizeof(CB_OPTS) / sizeof(CB_OPTS[0]),
    peertool_connect_help};

static int set_option(void *ctx, int id, const char *val)
{
	struct cb_args *a = ctx;
	unsigned v;
	char *end;
	switch (id) {
	case CB_OPT_CHAIN:
		return peertool_chain_arg(&CB_OPT_CMD, val, &a->p);
	case CB_OPT_PAR:
		if (parse_uint(val, 0, CB_MAX_PAR, &v))
			return usage_error("--par wants 0 to 64, not '%s'", val);
		a->par = (int)v;
		return 0;
	case CB_OPT_DBCACHE:
		errno = 0;
		a->dbcache_mib = strtod(val, &end);
		/* Fractions of a MiB are for tests that want many flushes. */
		if (!*val || *end || errno || !(a->dbcache_mib >= CB_MIN_DBCACHE) ||
		    a->dbcache_mib > CB_MAX_DBCACHE)
			return usage_error("--dbcache wants 0.01 to 1048576 MiB, not '%s'", val);
		return 0;
	case CB_OPT_UTXO_STATS:
		a->utxo_stats = true;
		return 0;
	default:
		a->verbose = true;
		return 0;
	}
}

/* 0, 2 after a usage error, or BASE_OPT_HELP for --help (printed). */
static int parse_args(int argc, char **argv, struct cb_args *a)
{
	memset(a, 0, sizeof(*a));
	a->p = proto_params(PROTO_NET_REGTEST);
	a->dbcache_mib = CHAIN_DBCACHE_DEFAULT_MIB;
	/* DATADIR and the files are argv's own pointers, in order. */
	const char **pos = xcalloc((size_t)argc, sizeof(*pos));
	size_t n = 0;
	if (!pos) {
		peertool_error(CB_CMD, "out of memory");
		return 1;
	}
	int rc = base_opt_parse(&CB_OPT_CMD, argc, argv, set_option, a, pos, (size_t)argc, &n);
	if (!rc && n < 2)
		rc = usage_error("%s", n < 1 ? "DATADIR and FILE needed" : "FILE needed");
	if (!rc) {
		/* Compact the arguments at the front of argv so files point into it. */
		for (size_t i = 0; i < n; i++)
			argv[1 + i] = (char *)pos[i];
		a->datadir = argv[1];
		a->files = argv + 2;
		a->n_files = (int)n - 1;
	}
	xfree(pos);
	return rc;
}

/* ---- the orphan pool -------------------------------------------------------- */

static size_t bucket_of(const struct cb *cb, const struct proto_hash *h)
{
	/* A block hash is uniform: its low bytes are a fine table hash. */
	return (size_t)proto_le64(h->b) & (cb->n_buckets - 1);
}

static int orphans_rehash(struct cb *cb, size_t n_buckets)
{
	size_t *nb = xmalloc(n_buckets * sizeof(*nb));
	if (!nb)
		return -1;
	xfree(cb->buckets);
	cb->buckets = nb;
	cb->n_buckets = n_buckets;
	for (size_t k = 0; k < n_buckets; k++)
		nb[k] = SIZE_MAX;
	for (size_t i = 0; i < cb->n_orph; i++) {
		size_t k = bucket_of(cb, &cb->orph[i].prev);
		cb->orph[i].next = nb[k];
		nb[k] = i;
	}
	return 0;
}

static int orphan_add(struct cb *cb, const struct proto_hash *prev, const uint8_t *raw, size_t len)
{
	if (cb->n_orph == cb->orph_cap) {
		size_t cap = cb->orph_cap ? cb->orph_cap * 2 : 64;
		struct cb_orphan *v = xrealloc(cb->orph, cap * sizeof(*v));
		if (!v)
			return -1;
		cb->orph = v;
		cb->orph_cap = cap;
	}
	struct cb_orphan *o = &cb->orph[cb->n_orph++];
	o->prev = *prev;
	o->raw = raw;
	o->len = len;
	o->done = false;
	cb->orph_waiting++;
	/* Keep the load at most one per bucket. */
	if (cb->n_orph > cb->n_buckets)
		return orphans_rehash(cb, cb->n_buckets ? cb->n_buckets * 2 : 64);
	size_t k = bucket_of(cb, prev);
	o->next = cb->buckets[k];
	cb->buckets[k] = cb->n_orph - 1;
	return 0;
}

static int due_push(struct cb *cb, const struct proto_hash *h)
{
	if (cb->n_due == cb->due_cap) {
		size_t cap = cb->due_cap ? cb->due_cap * 2 : 16;
		struct proto_hash *v = xrealloc(cb->due, cap * sizeof(*v));
		if (!v)
			return -1;
		cb->due = v;
		cb->due_cap = cap;
	}
	cb->due[cb->n_due++] = *h;
	return 0;
}

/* ---- submitting ------------------------------------------------------------------ */

static void note_reject(struct cb *cb, const struct proto_hash *hash, const char *reason,
                        const char *debug)
{
	cb->rejected++;
	if (json_array_size(cb->reasons) >= CB_MAX_REASONS)
		return;
	json_t *o = json_object();
	json_object_set_new(o, "hash", hash ? json_hash(hash) : json_null());
	json_object_set_new(o, "reason", json_string(reason));
	if (debug && *debug)
		json_object_set_new(o, "debug", json_string(debug));
	json_array_append_new(cb->reasons, o);
}

/*
 * Decode and submit one block. With `wait`, a block whose parent is unknown
 * joins the orphans instead. 0, or a chain error that ends the run.
 */
static int submit(struct cb *cb, const uint8_t *raw, size_t len, bool wait)
{
	struct proto_block *b = &cb->b;
	size_t off = 0;
	int err = proto_block_decode(raw, len, b, &off);
	if (err) {
		char why[96];
		snprintf(why, sizeof(why), "%s at byte %zu", proto_strerror(err), off);
		note_reject(cb, NULL, "undecodable", why);
		return 0;
	}
	struct proto_hash hash;
	proto_block_header_hash(&b->hdr, &hash);
	const struct proto_params *p = cb->a->p;
	bool genesis = !memcmp(hash.b, p->genesis_hash.b, 32);
	if (wait && !genesis && !chain_index_find(chain_get_index(cb->c), &b->hdr.prev)) {
		if (orphan_add(cb, &b->hdr.prev, raw, len))
			return CHAIN_ENOMEM;
		return 0;
	}
	enum chain_submit res;
	struct chain_state st;
	chain_state_clear(&st);
	if ((err = chain_submit_block(cb->c, raw, len, b, &res, &st)))
		return err;
	switch (res) {
	case CHAIN_SUBMIT_ACCEPTED:
		cb->accepted++;
		break;
	case CHAIN_SUBMIT_INCONCLUSIVE:
		cb->inconclusive++;
		break;
	case CHAIN_SUBMIT_DUPLICATE:
		cb->duplicate++;
		break;
	case CHAIN_SUBMIT_DUPLICATE_INVALID:
		note_reject(cb, &hash, "duplicate-invalid", st.debug);
		return 0;
	case CHAIN_SUBMIT_REJECTED:
		note_reject(cb, &hash, st.reason, st.debug);
		return 0;
	}
	return cb->n_orph && due_push(cb, &hash) ? CHAIN_ENOMEM : 0;
}

/* Submit every orphan whose parent has arrived, and theirs, depth first. */
static int release_orphans(struct cb *cb)
{
	while (cb->n_due) {
		struct proto_hash h = cb->due[--cb->n_due];
		if (!cb->n_buckets)
			return 0;
		for (size_t i = cb->buckets[bucket_of(cb, &h)]; i != SIZE_MAX;) {
			struct cb_orphan *o = &cb->orph[i];
			i = o->next;
			if (o->done || memcmp(o->prev.b, h.b, 32))
				continue;
			o->done = true;
			cb->orph_waiting--;
			/* The table may grow under submit: nothing here is kept across it
			 * but the index, re-read from the array. */
			int err = submit(cb, o->raw, o->len, false);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- the files ------------------------------------------------------------------ */

/* "blkNNNNN.dat"'s number, or -1. */
static long blk_number(const char *name)
{
	size_t len = strlen(name);
	if (len < 12 || strncmp(name, "blk", 3) || strcmp(name + len - 4, ".dat"))
		return -1;
	long n = 0;
	for (size_t i = 3; i < len - 4; i++) {
		if (name[i] < '0' || name[i] > '9' || n > 100000000)
			return -1;
		n = n * 10 + (name[i] - '0');
	}
	return n;
}

/* The key of a Core blk file: xor.dat in its directory, if any. */
static int file_key(struct cb_file *f)
{
	const char *slash = strrchr(f->path, '/');
	const char *base = slash ? slash + 1 : f->path;
	memset(f->key, 0, sizeof(f->key));
	f->xor = false;
	if (blk_number(base) < 0)
		return 0;
	char dir[4096];
	int n = slash ? snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->path), f->path)
	              : snprintf(dir, sizeof(dir), ".");
	if (n < 0 || (size_t)n >= sizeof(dir))
		return 0;
	int err = chain_xor_key_read(n ? dir : "/", f->key);
	if (err && err != CHAIN_ENOTFOUND) {
		peertool_error(CB_CMD, "%s/xor.dat: %s", dir, chain_strerror(err));
		return -1;
	}
	f->xor = !chain_xor_key_is_zero(f->key);
	return 0;
}

static int map_file(struct cb_file *f)
{
	if (file_key(f))
		return -1;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb)) {
		peertool_error(CB_CMD, "cannot open %s: %s", f->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->len = (size_t)sb.st_size;
	f->map = NULL;
	if (f->len) {
		/* Writable and private when the records are deobfuscated in place:
		 * only the pages with records get copied. */
		void *m = mmap(NULL, f->len, f->xor ? PROT_READ | PROT_WRITE : PROT_READ,
		               MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			peertool_error(CB_CMD, "cannot map %s: %s", f->path, strerror(errno));
			close(fd);
			return -1;
		}
		f->map = m;
		/* One pass front to back. */
		(void)madvise(m, f->len, MADV_SEQUENTIAL);
	}
	close(fd);
	return 0;
}

/*
 * Submit every record of a file. 0; 1 after printing where the file stops
 * making sense (the records before it count); or a chain error.
 */
static int connect_file(struct cb *cb, const struct cb_file *f)
{
	size_t off = 0;
	uint32_t magic = cb->a->p->magic;
	while (off < f->len) {
		uint8_t hdr[8] = {0};
		if (f->len - off >= 8) {
			memcpy(hdr, f->map + off, 8);
			chain_xor(hdr, 8, f->key, off);
		}
		if (f->len - off < 8 || proto_le32(hdr) != magic) {
			if (f->map[off] == 0) { /* padding, never obfuscated */
				off++;
				continue;
			}
			peertool_error(CB_CMD, "%s: no %s record at byte %zu", f->path,
			               cb->a->p->name, off);
			return 1;
		}
		uint32_t n = proto_le32(hdr + 4);
		if (n > f->len - off - 8 || n > PROTO_MAX_MESSAGE) {
			peertool_error(CB_CMD, "%s: record at byte %zu claims %" PRIu32 " bytes",
			               f->path, off, n);
			return 1;
		}
		cb->records++;
		chain_xor(f->map + off + 8, n, f->key, off + 8);
		int err = submit(cb, f->map + off + 8, n, true);
		if (!err)
			err = release_orphans(cb);
		if (err)
			return err;
		off += 8 + (size_t)n;
	}
	return 0;
}

/* ---- the report ---------------------------------------------------------------- */

static void log_stderr(void *arg, enum chain_log_level level, const char *msg)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	(void)arg;
	fprintf(stderr, "peertool: %s: chain %s: %s\n", CB_CMD, names[level], msg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *utxo_json(struct chain *c)
{
	struct chain_utxo_stats s;
	int err = chain_coins_stats(chain_get_coins(c), &s);
	if (err) {
		peertool_error(CB_CMD, "gettxoutsetinfo: %s", chain_strerror(err));
		return NULL;
	}
	/* hash_serialized_3 is shown as Core shows uint256s: reversed. */
	struct proto_hash hs;
	memcpy(hs.b, s.hash_serialized, 32);
	json_t *o = json_object();
	json_object_set_new(o, "height", json_integer(chain_height(c)));
	json_object_set_new(o, "bestblock", json_hash(&s.best_block));
	json_object_set_new(o, "txouts", json_u64(s.txouts));
	json_object_set_new(o, "bogosize", json_u64(s.bogosize));
	json_object_set_new(o, "hash_serialized_3", json_hash(&hs));
	json_object_set_new(o, "total_amount", json_amount(s.total_amount));
	json_object_set_new(o, "transactions", json_u64(s.transactions));
	json_object_set_new(o, "disk_size", json_u64(s.disk_size));
	return o;
}

/* Three decimals: the rest is noise and makes the report hard to read. */
static double round3(double v)
{
	return (double)(int64_t)(v * 1000.0 + 0.5) / 1000.0;
}

static json_t *report(struct cb *cb, double secs)
{
	struct chain_stats cs;
	struct rusage ru;
	char work[65];
	struct chain_node *tip = chain_tip(cb->c);
	uint64_t stored = cb->accepted + cb->inconclusive;
	chain_get_stats(cb->c, &cs);
	chain_work_hex(&tip->work, work);
	getrusage(RUSAGE_SELF, &ru);
	json_t *o = json_object();
	json_object_set_new(o, "chain", json_string(cb->a->p->name));
	json_object_set_new(o, "tip", json_hash(&tip->hash));
	json_object_set_new(o, "height", json_integer(chain_height(cb->c)));
	json_object_set_new(o, "chainwork", json_string(work));
	json_object_set_new(o, "records", json_u64(cb->records));
	json_object_set_new(o, "accepted", json_u64(stored));
	json_object_set_new(o, "inconclusive", json_u64(cb->inconclusive));
	json_object_set_new(o, "duplicate", json_u64(cb->duplicate));
	json_object_set_new(o, "rejected", json_u64(cb->rejected));
	json_object_set_new(o, "reject_reasons", json_incref(cb->reasons));
	json_object_set_new(o, "connected", json_u64(cs.blocks_connected));
	json_object_set_new(o, "disconnected", json_u64(cs.blocks_disconnected));
	json_object_set_new(o, "reorgs", json_u64(cs.reorgs));
	json_object_set_new(o, "replayed", json_u64(cs.replayed));
	json_object_set_new(o, "flushes", json_u64(cs.flushes));
	json_object_set_new(o, "seconds", json_real(round3(secs)));
	json_object_set_new(o, "blocks_per_second",
	                    json_real(round3(secs > 0 ? (double)stored / secs : 0.0)));
	json_object_set_new(o, "connect_seconds", json_real(round3((double)cs.connect_ns / 1e9)));
	json_object_set_new(o, "par", json_integer(cb->a->par));
	json_object_set_new(o, "dbcache_mib", json_real(cb->a->dbcache_mib));
	json_object_set_new(o, "peak_rss_kib", json_integer(ru.ru_maxrss));
	return o;
}

/* ---- the data directory ----------------------------------------------------------- */

int peertool_netdir(const char *cmd, const char *datadir, const struct proto_params *p, bool create,
                    char *out, size_t cap, int *lock_fd)
{
	const char *sub = conf_net_subdir(p->net);
	char lock[4096];
	if ((size_t)snprintf(out, cap, "%s%s%s", datadir, *sub ? "/" : "", sub) >= cap ||
	    (size_t)snprintf(lock, sizeof(lock), "%s/.lock", out) >= sizeof(lock)) {
		peertool_error(cmd, "%s: path too long", datadir);
		return -1;
	}
	if (create && ((mkdir(datadir, 0700) && errno != EEXIST) ||
	               (*sub && mkdir(out, 0700) && errno != EEXIST))) {
		peertool_error(cmd, "cannot create %s: %s", out, strerror(errno));
		return -1;
	}
	struct stat sb;
	if (stat(out, &sb) || !S_ISDIR(sb.st_mode)) {
		peertool_error(cmd, "%s: no such directory", out);
		return -1;
	}
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl)) {
		bool busy = fd >= 0 && (errno == EAGAIN || errno == EACCES);
		peertool_error(cmd,
		               busy ? "%s is in use (peerd or another peertool holds %s)"
		                    : "cannot lock %s: %s",
		               out, busy ? lock : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*lock_fd = fd;
	return 0;
}

static int by_blk_number(const void *x, const void *y)
{
	const struct cb_file *a = x, *b = y;
	const char *sa = strrchr(a->path, '/'), *sb = strrchr(b->path, '/');
	long na = blk_number(sa ? sa + 1 : a->path), nb = blk_number(sb ? sb + 1 : b->path);
	return (na > nb) - (na < nb);
}

/* Append dir's blk files (in number order) to *v; 0 or -1 (said why). */
static int list_dir(const char *dir, struct cb_file **v, int *n, int *cap)
{
	DIR *d = opendir(dir);
	if (!d) {
		peertool_error(CB_CMD, "cannot list %s: %s", dir, strerror(errno));
		return -1;
	}
	int first = *n, rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (blk_number(e->d_name) < 0)
			continue;
		if (*n == *cap) {
			int nc = *cap * 2 + 8;
			struct cb_file *nv = xrealloc(*v, (size_t)nc * sizeof(**v));
			if (!nv) {
				rc = -1;
				break;
			}
			*v = nv;
			*cap = nc;
		}
		struct cb_file *f = &(*v)[*n];
		memset(f, 0, sizeof(*f));
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		if (!(f->owned = xmalloc(len))) {
			rc = -1;
			break;
		}
		snprintf(f->owned, len, "%s/%s", dir, e->d_name);
		f->path = f->owned;
		(*n)++;
	}
	closedir(d);
	if (rc)
		peertool_error(CB_CMD, "out of memory");
	else
		qsort(*v + first, (size_t)(*n - first), sizeof(**v), by_blk_number);
	return rc;
}

/* Replace every FILE that is a directory by its blk files. 0 or -1. */
static int expand_dirs(struct cb_file **files, int *n_files)
{
	struct cb_file *v = NULL;
	int n = 0, cap = 0, rc = 0;
	for (int i = 0; i < *n_files && !rc; i++) {
		struct stat sb;
		if (!stat((*files)[i].path, &sb) && S_ISDIR(sb.st_mode)) {
			rc = list_dir((*files)[i].path, &v, &n, &cap);
			continue;
		}
		if (n == cap) {
			int nc = cap * 2 + 8;
			struct cb_file *nv = xrealloc(v, (size_t)nc * sizeof(*v));
			if (!nv) {
				peertool_error(CB_CMD, "out of memory");
				rc = -1;
				break;
			}
			v = nv;
			cap = nc;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n++].path = (*files)[i].path;
	}
	if (rc) {
		for (int i = 0; i < n; i++)
			xfree(v[i].owned);
		xfree(v);
		return -1;
	}
	xfree(*files);
	*files = v;
	*n_files = n;
	return 0;
}

/* ---- the command ------------------------------------------------------------------ */

int peertool_connect_blocks(int argc, char **argv)
{
	struct cb_args a;
	struct cb cb;
	struct cb_file *files = NULL;
	json_t *out = NULL;
	char netdir[4096];
	int lock_fd = -1;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	memset(&cb, 0, sizeof(cb));
	cb.a = &a;
	cb.reasons = json_array();
	proto_block_init(&cb.b);
	rc = 1;
	if (!cb.reasons || !(files = xcalloc((size_t)a.n_files, sizeof(*files)))) {
		peertool_error(CB_CMD, "out of memory");
		goto out;
	}
	for (int i = 0; i < a.n_files; i++)
		files[i].path = a.files[i];
	if (expand_dirs(&files, &a.n_files))
		goto out;
	for (int i = 0; i < a.n_files; i++)
		if (map_file(&files[i]))
			goto out;
	if (peertool_netdir(CB_CMD, a.datadir, a.p, true, netdir, sizeof(netdir), &lock_fd))
		goto out;
	struct chain_config cfg = {
	    .params = a.p,
	    .dir = netdir,
	    .dbcache_bytes = (size_t)(a.dbcache_mib * (1 << 20)),
	    .par = a.par,
	    .log = a.verbose ? log_stderr : NULL,
	};
	double t0 = now_s();
	int err = chain_open(&cb.c, &cfg);
	if (err) {
		peertool_error(CB_CMD, "cannot open the chain in %s: %s", netdir,
		               chain_strerror(err));
		goto out;
	}
	int bad_file = 0;
	for (int i = 0; i < a.n_files && !err; i++) {
		int r = connect_file(&cb, &files[i]);
		if (r == 1)
			bad_file = 1;
		else
			err = r;
	}
	if (!err)
		err = chain_flush(cb.c);
	if (err) {
		peertool_error(CB_CMD, "chain failed: %s", chain_strerror(err));
		goto out;
	}
	/* What still waits never met its parent. */
	for (size_t i = 0; i < cb.n_orph; i++) {
		if (cb.orph[i].done)
			continue;
		struct proto_hash h;
		proto_sha256d(cb.orph[i].raw, 80, h.b); /* decoded once: a whole header */
		note_reject(&cb, &h, "prev-blk-not-found", "parent not in the chain or the files");
	}
	out = report(&cb, now_s() - t0);
	if (a.utxo_stats) {
		json_t *u = utxo_json(cb.c);
		if (!u)
			goto out;
		json_object_set_new(out, "utxo", u);
	}
	if (json_print(stdout, out))
		goto out;
	rc = cb.rejected || bad_file ? 1 : 0;
out:
	if (cb.c && chain_close(cb.c)) {
		peertool_error(CB_CMD, "closing the chain failed");
		rc = 1;
	}
	if (lock_fd >= 0)
		close(lock_fd); /* after chain_close: the chain is on disk */
	json_decref(out);
	json_decref(cb.reasons);
	proto_block_release(&cb.b);
	xfree(cb.orph);
	xfree(cb.buckets);
	xfree(cb.due);
	for (int i = 0; files && i < a.n_files; i++) {
		if (files[i].map)
			munmap(files[i].map, files[i].len);
		xfree(files[i].owned);
	}
	xfree(files);
	return rc;
}
