/*
 * mempool/persist.c: mempool.dat in Bitcoin Core's format
 * (kernel/mempool_persist.cpp), so a file Core's savemempool wrote loads
 * here and the other way round.
 *
 * Version 2: u64 version, the 8-byte XOR key as a vector (CompactSize 8
 * then the bytes), then, every byte XORed with key[file offset % 8]
 * (Core's AutoFile counts the offset from the start of the file): u64
 * count, count x (transaction with witness, i64 entry time, i64 fee
 * delta), the remaining prioritisation deltas (CompactSize, then txid and
 * i64 each), the unbroadcast txids (CompactSize, then txid each; on load
 * only those still in the pool are kept, as Core).
 * Version 1 is the same without key (read only).
 *
 * Saving goes through mempool.dat.new, fsync and rename, so a crash
 * leaves the old file or the new one, never half of one. Loading puts
 * each transaction through the full acceptance rules with its old time
 * (expired ones are skipped); a file that does not decode is reported and
 * whatever was read before the damage stays: never fatal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mempool/internal.h"

/* Largest mempool.dat read: far above any -maxmempool's worth of transactions. */
#define MP_FILE_MAX ((size_t)2 << 30)
/* Largest delta or unbroadcast list read. */
#define MP_LIST_MAX 10000000u

static void xor_from(uint8_t *p, size_t len, size_t file_off, const uint8_t key[8])
{
	for (size_t i = 0; i < len; i++)
		p[i] ^= key[(file_off + i) % 8];
}

int mempool_save(struct mempool *mp)
{
	const struct mempool_entry **v = NULL;
	size_t n = 0;
	int err = mempool_list(mp, MEMPOOL_ORDER_DEPTH_SCORE, &v, &n);
	if (err)
		return err;
	struct proto_writer w;
	proto_writer_init(&w);
	uint8_t key[8];
	proto_random(key, sizeof(key));
	proto_write_u64le(&w, MEMPOOL_DUMP_VERSION);
	proto_write_compact(&w, sizeof(key));
	proto_write_bytes(&w, key, sizeof(key));
	size_t body = w.len;
	proto_write_u64le(&w, n);
	size_t n_rest = 0;
	for (size_t i = 0; i < mp->n_deltas; i++)
		n_rest += mp_find_txid(mp, &mp->deltas[i].txid) ? 0 : 1;
	for (size_t i = 0; i < n; i++) {
		proto_tx_encode(&v[i]->tx, &w);
		proto_write_u64le(&w, (uint64_t)v[i]->time);
		proto_write_u64le(&w, (uint64_t)mp_delta_of(mp, &v[i]->tx.txid));
	}
	proto_write_compact(&w, n_rest);
	for (size_t i = 0; i < mp->n_deltas; i++) {
		if (mp_find_txid(mp, &mp->deltas[i].txid))
			continue;
		proto_write_hash(&w, &mp->deltas[i].txid);
		proto_write_u64le(&w, (uint64_t)mp->deltas[i].delta);
	}
	proto_write_compact(&w, mp->n_unbcast);
	for (size_t i = 0; i < mp->n_unbcast; i++)
		proto_write_hash(&w, &mp->unbcast[i]);
	xfree(v);
	if (w.err) {
		proto_writer_release(&w);
		return CHAIN_ENOMEM;
	}
	xor_from(w.buf + body, w.len - body, body, key);

	size_t plen = strlen(mp->path) + 5;
	char *tmp = xmalloc(plen);
	if (!tmp) {
		proto_writer_release(&w);
		return CHAIN_ENOMEM;
	}
	snprintf(tmp, plen, "%s.new", mp->path);
	err = CHAIN_EIO;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		chain_logf(mp->c, CHAIN_LOG_ERROR, "savemempool: cannot create %s: %s", tmp,
		           strerror(errno));
		goto out;
	}
	size_t off = 0;
	while (off < w.len) {
		ssize_t k = write(fd, w.buf + off, w.len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	bool ok = off == w.len && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, mp->path) != 0) {
		chain_logf(mp->c, CHAIN_LOG_ERROR, "savemempool: writing %s failed: %s", mp->path,
		           strerror(errno));
		unlink(tmp);
		goto out;
	}
	/* The rename is durable once the directory is synced. */
	char *slash = strrchr(tmp, '/');
	if (slash) {
		*slash = 0;
		int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	chain_logf(mp->c, CHAIN_LOG_INFO, "Dumped mempool: %zu transactions to %s", n, mp->path);
	err = 0;
out:
	xfree(tmp);
	proto_writer_release(&w);
	return err;
}

const char *mempool_path(const struct mempool *mp)
{
	return mp->path;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? CHAIN_ENOTFOUND : CHAIN_EIO;
	struct stat sb;
	if (fstat(fd, &sb) != 0 || sb.st_size < 0 || (uint64_t)sb.st_size > MP_FILE_MAX) {
		close(fd);
		return CHAIN_EOVERFLOW;
	}
	size_t size = (size_t)sb.st_size;
	uint8_t *buf = xmalloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return CHAIN_ENOMEM;
	}
	size_t off = 0;
	while (off < size) {
		ssize_t k = read(fd, buf + off, size - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(fd);
	*out = buf;
	*len = off;
	return 0;
}

void mp_load(struct mempool *mp)
{
	struct chain *c = mp->c;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = read_file(mp->path, &buf, &len);
	if (err) {
		if (err != CHAIN_ENOTFOUND)
			chain_logf(c, CHAIN_LOG_WARN,
			           "Failed to open mempool file %s: %s. Continuing anyway.",
			           mp->path, chain_strerror(err));
		mp->loaded = true;
		return;
	}
	struct proto_reader r;
	proto_reader_init(&r, buf, len);
	uint64_t version = 0, count = 0;
	uint8_t key[8] = {0};
	const char *damage = NULL;
	uint64_t ok = 0, failed = 0, expired = 0, already = 0;
	struct proto_tx tx;
	proto_tx_init(&tx);
	struct mempool_accept_result res;
	mempool_accept_result_init(&res);
	if (proto_read_u64le(&r, &version)) {
		damage = "no version";
		goto out;
	}
	if (version == MEMPOOL_DUMP_VERSION) {
		uint64_t klen;
		if (proto_read_compact(&r, 8, &klen) || klen != 8 || proto_read_bytes(&r, key, 8)) {
			damage = "bad XOR key";
			goto out;
		}
	} else if (version != MEMPOOL_DUMP_VERSION_NO_XOR_KEY) {
		damage = "unknown version";
		goto out;
	}
	size_t body = proto_reader_offset(&r);
	xor_from(buf + body, len - body, body, key);
	if (proto_read_u64le(&r, &count)) {
		damage = "no count";
		goto out;
	}
	int64_t cutoff = chain_now(c) - mp->cfg.expiry;
	for (uint64_t i = 0; i < count; i++) {
		int64_t t, delta;
		if (proto_tx_decode(&r, &tx) || proto_read_i64le(&r, &t) ||
		    proto_read_i64le(&r, &delta)) {
			damage = "a transaction does not decode";
			goto out;
		}
		proto_tx_compute_ids(&tx);
		if (delta && mempool_prioritise(mp, &tx.txid, delta))
			goto out;
		if (t <= cutoff) {
			expired++;
			continue;
		}
		struct mp_args a = {.allow_replacement = true,
		                    .allow_carveouts = true,
		                    .accept_time = t,
		                    .how = MEMPOOL_ADDED_LOAD};
		if (mp_accept(mp, &tx, &a, &res))
			goto out;
		if (res.accepted)
			ok++;
		else if (!strcmp(res.state.reason, "txn-already-in-mempool"))
			already++;
		else
			failed++;
	}
	uint64_t nd;
	if (proto_read_compact(&r, MP_LIST_MAX, &nd)) {
		damage = "bad delta list";
		goto out;
	}
	for (uint64_t i = 0; i < nd; i++) {
		struct proto_hash h;
		int64_t delta;
		if (proto_read_hash(&r, &h) || proto_read_i64le(&r, &delta)) {
			damage = "bad delta list";
			goto out;
		}
		if (mempool_prioritise(mp, &h, delta))
			goto out;
	}
	uint64_t nu;
	if (proto_read_compact(&r, MP_LIST_MAX, &nu)) {
		damage = "bad unbroadcast list";
		goto out;
	}
	/* Core keeps only the txids still in the pool (add ignores the others). */
	for (uint64_t i = 0; i < nu; i++) {
		struct proto_hash h;
		if (proto_read_hash(&r, &h)) {
			damage = "bad unbroadcast list";
			goto out;
		}
		if (mempool_unbroadcast_add(mp, &h))
			goto out;
	}
out:
	if (damage) {
		mp->stats.load_failed++;
		chain_logf(c, CHAIN_LOG_WARN,
		           "Failed to deserialize mempool data on file %s: %s. Continuing anyway.",
		           mp->path, damage);
	}
	mp->stats.loaded += ok;
	chain_logf(c, CHAIN_LOG_INFO,
	           "Imported mempool transactions from disk: %llu succeeded, %llu failed, %llu "
	           "expired, %llu already there, %zu waiting for initial broadcast",
	           (unsigned long long)ok, (unsigned long long)failed, (unsigned long long)expired,
	           (unsigned long long)already, mp->n_unbcast);
	mempool_accept_result_release(&res);
	proto_tx_release(&tx);
	xfree(buf);
	mp->loaded = true;
}
