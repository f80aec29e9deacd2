/*
 * chain/store.c: the block store: blkNNNNN.dat and revNNNNN.dat in the
 * directory given to chain_store_open (peerd passes <netdir>/blocks), in
 * Bitcoin Core's record formats (see chain/store.h).
 *
 * Appends go to the end of the highest-numbered blk file, as Core's
 * FindNextBlockPos: a record that would take the file to
 * CHAIN_MAX_BLOCKFILE_SIZE or past it starts the next file instead. A
 * crash can leave a torn record at a file's end; nothing points at it, and
 * the next append starts at the file's real end (its size on disk), so a
 * reader scanning for magic, like Core's -loadblock, steps over it.
 *
 * Undo records go to the rev file with the block's file number, at that
 * file's end; each carries SHA256d(parent hash || undo bytes) so a record
 * read back for the wrong block or damaged on disk is caught.
 *
 * File descriptors: a small cache, least recently used out. The file
 * being appended to stays in it because every write touches it; files
 * read for serving or undo come and go. A written file stays "dirty"
 * until chain_store_sync fsyncs it; one evicted while dirty is fsynced
 * before it is closed, so a sync never misses data.
 *
 * Obfuscation: with a non-zero key (chain_store_set_xor_key) every byte
 * goes to disk XORed by its file offset, as Core 28+ writes (xorkey.c):
 * an append is copied once into one buffer and XORed there; a read is
 * XORed in place after pread. A zero key skips both.
 *
 * Threads: one thread owns a store (chain/chain.h), with one exception:
 * chain_store_read_block_shared may run on any thread. It opens the file
 * itself (the descriptor cache is the owner's) under `files`, a
 * read-write lock that chain_store_remove_file takes exclusively around
 * its unlinks: a shared read either ends before a pruned file goes or
 * finds it gone (CHAIN_ENOTFOUND). Files are append-only and a pruned
 * file's number is never written again (only files below the one being
 * appended to are removed), so a position that reads a record with the
 * right magic and size reads the block it was given for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "chain/internal.h"

/* Core's MAX_BLOCK_SERIALIZED_SIZE: no valid block is larger. */
#define STORE_MAX_BLOCK 4000000u
/* magic and size before every record (Core's STORAGE_HEADER_BYTES). */
#define STORE_HEADER 8u
/* The checksum after an undo record. */
#define STORE_CHECKSUM 32u
/* Open files kept: the blk and rev being appended to plus a few readers. */
#define STORE_FDS 8

struct store_fd {
	int fd; /* -1: slot free */
	int32_t file;
	bool rev;
	bool dirty;    /* written since the last fsync */
	uint64_t used; /* tick of the last use, for LRU */
};

struct chain_store {
	char *dir;
	uint32_t magic;
	uint32_t max_file; /* CHAIN_MAX_BLOCKFILE_SIZE; lowered by tests */
	int32_t cur;       /* blk file being appended to */
	uint64_t cur_size; /* its size: where the next record goes */
	bool dir_dirty;    /* a file was created since the last sync */
	uint64_t tick;
	struct store_fd fds[STORE_FDS];
	uint8_t key[CHAIN_XOR_KEY_SIZE]; /* blocks/xor.dat's; zero: plain files */
	bool xor ;                       /* key is not zero */
	pthread_rwlock_t files;          /* shared readers' read lock; removal's write lock */
	bool files_ready;                /* `files` initialised */
};

/* ---------------------------------------------------------------------- */
/* Files and descriptors                                                   */

static int make_dirs(const char *path)
{
	char *p = xstrdup(path);
	if (!p)
		return CHAIN_ENOMEM;
	int rc = 0;
	/* Every prefix ending at a '/', then the whole path. */
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST) {
			rc = CHAIN_EIO;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	xfree(p);
	if (!rc) {
		struct stat st;
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			rc = CHAIN_EIO;
	}
	return rc;
}

/* "<dir>/blk00042.dat" into a buffer of PATH_MAX-ish size. */
static int file_path(const struct chain_store *s, bool rev, int32_t file, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s%05d.dat", s->dir, rev ? "rev" : "blk", (int)file);
	return n < 0 || (size_t)n >= cap ? CHAIN_EIO : 0;
}

/* fsync a slot's file if it was written to. 0 or CHAIN_EIO. */
static int flush_slot(struct store_fd *f)
{
	if (f->fd < 0 || !f->dirty)
		return 0;
	if (fsync(f->fd))
		return chain_errno_err(errno);
	f->dirty = false;
	return 0;
}

static int close_slot(struct store_fd *f)
{
	int rc = flush_slot(f);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->dirty = false;
	return rc;
}

/*
 * A descriptor for blk/rev file `file`, opening it when not cached. With
 * `create` a missing file is created (and the directory marked for
 * fsync); without, a missing file is CHAIN_ENOTFOUND.
 */
static int get_fd(struct chain_store *s, bool rev, int32_t file, bool create, int *fd)
{
	struct store_fd *victim = NULL;
	for (int i = 0; i < STORE_FDS; i++) {
		struct store_fd *f = &s->fds[i];
		if (f->fd >= 0 && f->file == file && f->rev == rev) {
			f->used = ++s->tick;
			*fd = f->fd;
			return 0;
		}
		/* Prefer a free slot, then the least recently used. */
		if (!victim || (victim->fd >= 0 && (f->fd < 0 || f->used < victim->used)))
			victim = f;
	}

	char path[4096];
	if (file_path(s, rev, file, path, sizeof(path)))
		return CHAIN_EIO;
	int nfd = open(path, O_RDWR | O_CLOEXEC);
	if (nfd < 0 && errno == ENOENT && create) {
		nfd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0600);
		if (nfd >= 0)
			s->dir_dirty = true;
	}
	if (nfd < 0)
		return errno == ENOENT ? CHAIN_ENOTFOUND : CHAIN_EIO;
	if (close_slot(victim)) {
		close(nfd);
		return CHAIN_EIO;
	}
	victim->fd = nfd;
	victim->file = file;
	victim->rev = rev;
	victim->dirty = false;
	victim->used = ++s->tick;
	*fd = nfd;
	return 0;
}

static void mark_dirty(struct chain_store *s, int fd)
{
	for (int i = 0; i < STORE_FDS; i++)
		if (s->fds[i].fd == fd)
			s->fds[i].dirty = true;
}

static int file_size(int fd, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st))
		return CHAIN_EIO;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Write all of iov at off, retrying short writes. 0 or CHAIN_EIO. */
static int write_all(int fd, uint64_t off, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = pwritev(fd, iov, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return chain_errno_err(errno);
		}
		off += (uint64_t)w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Read exactly len bytes at off. 0, CHAIN_EIO, or CHAIN_ECORRUPT at end of file. */
static int read_all(int fd, uint64_t off, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return CHAIN_EIO;
		}
		if (r == 0)
			return CHAIN_ECORRUPT;
		buf += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* read_all, then undo the obfuscation of those bytes. */
static int read_xor(const struct chain_store *s, int fd, uint64_t off, uint8_t *buf, size_t len)
{
	int rc = read_all(fd, off, buf, len);
	if (!rc && s->xor)
		chain_xor(buf, len, s->key, off);
	return rc;
}

/*
 * Append one record (magic, size, body, optional trailer) at the end of
 * fd, which is `end` bytes long. On a failed write the file is cut back
 * so that no partial record stays in the middle of later ones.
 */
static int append_record(struct chain_store *s, int fd, uint64_t end, const uint8_t *body,
                         size_t len, const uint8_t *trailer, size_t tlen)
{
	/* Core's FindNextBlockPos/FindUndoPos: never take the disk below its
	 * last 50 MiB, which the shutdown that follows needs. */
	int rc = chain_disk_space(s->dir, STORE_HEADER + len + tlen, NULL);
	if (rc == CHAIN_ENOSPC)
		return rc;
	uint8_t hdr[STORE_HEADER];
	proto_put_le32(hdr, s->magic);
	proto_put_le32(hdr + 4, (uint32_t)len);
	struct iovec iov[3] = {
	    {.iov_base = hdr, .iov_len = sizeof(hdr)},
	    {.iov_base = (void *)body, .iov_len = len},
	    {.iov_base = (void *)trailer, .iov_len = tlen},
	};
	int n_iov = tlen ? 3 : 2;
	uint8_t *copy = NULL;
	if (s->xor) {
		/* The caller's bytes are const (and a block's are still needed
		 * plain): obfuscate a copy of the whole record, written at once. */
		size_t total = STORE_HEADER + len + tlen;
		if (!(copy = xmalloc(total)))
			return CHAIN_ENOMEM;
		memcpy(copy, hdr, STORE_HEADER);
		if (len)
			memcpy(copy + STORE_HEADER, body, len);
		if (tlen)
			memcpy(copy + STORE_HEADER + len, trailer, tlen);
		chain_xor(copy, total, s->key, end);
		iov[0].iov_base = copy;
		iov[0].iov_len = total;
		n_iov = 1;
	}
	mark_dirty(s, fd);
	rc = write_all(fd, end, iov, n_iov);
	xfree(copy);
	if (rc && ftruncate(fd, (off_t)end)) {
		/* Nothing more to do: the torn tail is unreferenced. */
	}
	return rc;
}

/*
 * Check the record header before `pos` and return the body's size in
 * *len. `trailer` bytes must follow the body inside the file; `max`
 * bounds the size field.
 */
static int check_record(struct chain_store *s, int fd, uint32_t pos, uint64_t max, size_t trailer,
                        uint32_t *len)
{
	uint64_t size;
	if (file_size(fd, &size))
		return CHAIN_EIO;
	if (pos > size)
		return CHAIN_ENOTFOUND;
	uint8_t hdr[STORE_HEADER];
	int rc = read_xor(s, fd, pos - STORE_HEADER, hdr, sizeof(hdr));
	if (rc)
		return rc;
	uint32_t n = proto_le32(hdr + 4);
	if (proto_le32(hdr) != s->magic || n > max)
		return CHAIN_ECORRUPT;
	/* A size running past the end of the file: truncated or garbage. */
	if ((uint64_t)pos + n + trailer > size)
		return CHAIN_ECORRUPT;
	*len = n;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Open and close                                                          */

/* The number in "blkNNNNN.dat" (five or more digits), or -1. */
static int32_t blk_number(const char *name)
{
	size_t len = strlen(name);
	if (len < 12 || strncmp(name, "blk", 3) || strcmp(name + len - 4, ".dat"))
		return -1;
	int64_t n = 0;
	for (size_t i = 3; i < len - 4; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		n = n * 10 + (name[i] - '0');
		if (n > INT32_MAX)
			return -1;
	}
	return (int32_t)n;
}

int chain_store_open(struct chain_store **out, const char *dir, uint32_t magic)
{
	*out = NULL;
	struct chain_store *s = xcalloc(1, sizeof(*s));
	if (!s)
		return CHAIN_ENOMEM;
	for (int i = 0; i < STORE_FDS; i++)
		s->fds[i].fd = -1;
	s->magic = magic;
	s->max_file = CHAIN_MAX_BLOCKFILE_SIZE;
	int rc = CHAIN_ENOMEM;
	if (pthread_rwlock_init(&s->files, NULL))
		goto fail;
	s->files_ready = true;
	if (!(s->dir = xstrdup(dir)))
		goto fail;
	if ((rc = make_dirs(dir)))
		goto fail;

	/* The highest-numbered blk file, whatever lies below it. */
	DIR *d = opendir(dir);
	if (!d) {
		rc = CHAIN_EIO;
		goto fail;
	}
	struct dirent *e;
	int32_t last = -1;
	while ((e = readdir(d)))
		if (blk_number(e->d_name) > last)
			last = blk_number(e->d_name);
	closedir(d);

	s->cur = last < 0 ? 0 : last;
	if (last >= 0) {
		int fd;
		if ((rc = get_fd(s, false, s->cur, false, &fd)) ||
		    (rc = file_size(fd, &s->cur_size)))
			goto fail;
	}
	*out = s;
	return 0;
fail:
	chain_store_close(s);
	return rc == CHAIN_ENOTFOUND ? CHAIN_EIO : rc;
}

void chain_store_close(struct chain_store *s)
{
	if (!s)
		return;
	/* Nobody can hear an error here; chain_store_sync is where it is seen. */
	if (chain_store_sync(s)) {
		/* close cannot report; a caller who cares syncs first. */
	}
	for (int i = 0; i < STORE_FDS; i++)
		if (close_slot(&s->fds[i])) {
			/* as above */
		}
	if (s->files_ready)
		pthread_rwlock_destroy(&s->files);
	xfree(s->dir);
	xfree(s);
}

int chain_store_file_present(const struct chain_store *s, bool rev, int32_t file, char *path,
                             size_t cap)
{
	if (file < 0 || file_path(s, rev, file, path, cap))
		return CHAIN_EARG;
	struct stat st;
	if (stat(path, &st))
		return errno == ENOENT ? CHAIN_ENOTFOUND : CHAIN_EIO;
	return S_ISREG(st.st_mode) ? 0 : CHAIN_ENOTFOUND;
}

int chain_store_space(const struct chain_store *s, uint64_t additional)
{
	return chain_disk_space(s->dir, additional, NULL);
}

int chain_store_drop_undo(struct chain_store *s)
{
	for (int i = 0; i < STORE_FDS; i++)
		if (s->fds[i].fd >= 0 && s->fds[i].rev && close_slot(&s->fds[i]))
			return CHAIN_EIO;
	DIR *d = opendir(s->dir);
	if (!d)
		return CHAIN_EIO;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		/* Names as blk_number takes them, with "rev". */
		size_t len = strlen(e->d_name);
		if (len < 12 || strncmp(e->d_name, "rev", 3) || strcmp(e->d_name + len - 4, ".dat"))
			continue;
		char path[4096];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name) >=
		        sizeof(path) ||
		    (unlink(path) && errno != ENOENT))
			rc = CHAIN_EIO;
	}
	closedir(d);
	s->dir_dirty = true;
	return rc;
}

int32_t chain_store_last_file(const struct chain_store *s)
{
	return s->cur;
}

void chain_store_set_xor_key(struct chain_store *s, const uint8_t key[CHAIN_XOR_KEY_SIZE])
{
	memcpy(s->key, key, CHAIN_XOR_KEY_SIZE);
	s->xor = !chain_xor_key_is_zero(key);
}

void chain_store_set_max_file_size(struct chain_store *s, uint32_t max)
{
	s->max_file = max ? max : CHAIN_MAX_BLOCKFILE_SIZE;
}

int chain_store_sync(struct chain_store *s)
{
	int rc = 0;
	for (int i = 0; i < STORE_FDS; i++)
		if (flush_slot(&s->fds[i]))
			rc = CHAIN_EIO;
	if (s->dir_dirty) {
		/* A new file's name is only durable once its directory is synced. */
		int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || fsync(dfd))
			rc = CHAIN_EIO;
		else
			s->dir_dirty = false;
		if (dfd >= 0)
			close(dfd);
	}
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Blocks                                                                  */

int chain_store_write_block(struct chain_store *s, const uint8_t *raw, size_t len,
                            struct chain_pos *pos)
{
	if (len > STORE_MAX_BLOCK)
		return CHAIN_EOVERFLOW;
	uint64_t add = STORE_HEADER + len;
	/* Core moves on when the record would reach the limit; an empty file
	 * takes any block, so a limit below one block cannot loop. */
	if (s->cur_size > 0 && s->cur_size + add >= s->max_file) {
		if (s->cur == INT32_MAX)
			return CHAIN_EOVERFLOW;
		s->cur++;
		s->cur_size = 0;
	}
	if (s->cur_size + add > UINT32_MAX)
		return CHAIN_EOVERFLOW;
	int fd;
	int rc = get_fd(s, false, s->cur, true, &fd);
	if (rc)
		return rc == CHAIN_ENOTFOUND ? CHAIN_EIO : rc;
	/* The file may have been written behind our back (a torn record of
	 * a crash is accounted for at open); trust its real size. */
	uint64_t end;
	if ((rc = file_size(fd, &end)))
		return rc;
	if (end != s->cur_size) {
		s->cur_size = end;
		if (s->cur_size + add > UINT32_MAX)
			return CHAIN_EOVERFLOW;
	}
	if ((rc = append_record(s, fd, s->cur_size, raw, len, NULL, 0)))
		return rc;
	pos->file = s->cur;
	pos->pos = (uint32_t)(s->cur_size + STORE_HEADER);
	s->cur_size += add;
	return 0;
}

/* The n bytes of the record at pos into *buf, grown to hold them (*cap). */
static int read_record_into(struct chain_store *s, int fd, uint32_t pos, uint32_t n, uint8_t **buf,
                            size_t *cap)
{
	if (!*buf || n > *cap) {
		/* The old bytes are not needed: a new buffer, not a realloc that
		 * would copy them. The caller's stays theirs if this fails. */
		uint8_t *nb = xmalloc(n ? n : 1);
		if (!nb)
			return CHAIN_ENOMEM;
		xfree(*buf);
		*buf = nb;
		*cap = n ? n : 1;
	}
	return read_xor(s, fd, pos, *buf, n);
}

int chain_store_read_block_into(struct chain_store *s, const struct chain_pos *pos, uint8_t **buf,
                                size_t *cap, size_t *len)
{
	*len = 0;
	if (pos->file < 0 || pos->pos < STORE_HEADER)
		return CHAIN_ENOTFOUND;
	int fd;
	uint32_t n;
	int rc = get_fd(s, false, pos->file, false, &fd);
	if (rc || (rc = check_record(s, fd, pos->pos, STORE_MAX_BLOCK, 0, &n)))
		return rc;
	if ((rc = read_record_into(s, fd, pos->pos, n, buf, cap)))
		return rc;
	*len = n;
	return 0;
}

int chain_store_read_block_shared(struct chain_store *s, const struct chain_pos *pos, uint8_t **buf,
                                  size_t *cap, size_t *len)
{
	*len = 0;
	if (pos->file < 0 || pos->pos < STORE_HEADER)
		return CHAIN_ENOTFOUND;
	char path[4096];
	if (file_path(s, false, pos->file, path, sizeof(path)))
		return CHAIN_EIO;
	/* Held across open and read: removal waits for this read to end. */
	pthread_rwlock_rdlock(&s->files);
	int rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? CHAIN_ENOTFOUND : CHAIN_EIO;
		goto out;
	}
	uint32_t n;
	if ((rc = check_record(s, fd, pos->pos, STORE_MAX_BLOCK, 0, &n)))
		goto out;
	if (!(rc = read_record_into(s, fd, pos->pos, n, buf, cap)))
		*len = n;
out:
	if (fd >= 0)
		close(fd);
	pthread_rwlock_unlock(&s->files);
	return rc;
}

int chain_store_read_block(struct chain_store *s, const struct chain_pos *pos, uint8_t **raw,
                           size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	*raw = NULL;
	int rc = chain_store_read_block_into(s, pos, &buf, &cap, len);
	if (rc) {
		xfree(buf);
		return rc;
	}
	*raw = buf;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Undo                                                                    */

/* SHA256d(prev || undo): Core's checksum, which ties a record to its block's parent. */
static void undo_checksum(const struct proto_hash *prev, const uint8_t *undo, size_t len,
                          uint8_t out[32])
{
	struct proto_sha256 c;
	proto_sha256_init(&c);
	proto_sha256_update(&c, prev->b, 32);
	proto_sha256_update(&c, undo, len);
	proto_sha256d_final(&c, out);
}

int chain_store_write_undo(struct chain_store *s, int32_t file, const struct chain_block_undo *u,
                           const struct proto_hash *prev, struct chain_pos *pos)
{
	if (file < 0)
		return CHAIN_EARG;
	struct proto_writer w;
	proto_writer_init(&w);
	chain_block_undo_encode(u, &w);
	int rc = 0;
	if (w.err) {
		rc = w.err == PROTO_ENOMEM ? CHAIN_ENOMEM : CHAIN_EARG;
		goto out;
	}
	if (w.len > UINT32_MAX) {
		rc = CHAIN_EOVERFLOW;
		goto out;
	}
	uint8_t sum[STORE_CHECKSUM];
	undo_checksum(prev, w.buf, w.len, sum);

	int fd;
	uint64_t end;
	if ((rc = get_fd(s, true, file, true, &fd)) || (rc = file_size(fd, &end))) {
		if (rc == CHAIN_ENOTFOUND)
			rc = CHAIN_EIO;
		goto out;
	}
	if (end + STORE_HEADER + w.len + STORE_CHECKSUM > UINT32_MAX) {
		rc = CHAIN_EOVERFLOW;
		goto out;
	}
	if ((rc = append_record(s, fd, end, w.buf, w.len, sum, sizeof(sum))))
		goto out;
	pos->file = file;
	pos->pos = (uint32_t)(end + STORE_HEADER);
out:
	proto_writer_release(&w);
	return rc;
}

int chain_store_read_undo(struct chain_store *s, const struct chain_pos *pos,
                          const struct proto_hash *prev, struct chain_block_undo *u)
{
	chain_block_undo_init(u);
	if (pos->file < 0 || pos->pos < STORE_HEADER)
		return CHAIN_ENOTFOUND;
	int fd;
	uint32_t n;
	/* No fixed bound on an undo record; check_record keeps it inside the file. */
	int rc = get_fd(s, true, pos->file, false, &fd);
	if (rc || (rc = check_record(s, fd, pos->pos, UINT32_MAX, STORE_CHECKSUM, &n)))
		return rc;
	uint8_t *buf = xmalloc((size_t)n + STORE_CHECKSUM);
	if (!buf)
		return CHAIN_ENOMEM;
	if ((rc = read_xor(s, fd, pos->pos, buf, (size_t)n + STORE_CHECKSUM)))
		goto out;
	uint8_t sum[STORE_CHECKSUM];
	undo_checksum(prev, buf, n, sum);
	if (memcmp(sum, buf + n, STORE_CHECKSUM)) {
		rc = CHAIN_ECORRUPT;
		goto out;
	}
	rc = chain_block_undo_decode(buf, n, u);
out:
	xfree(buf);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Reading the files back in order (recovery)                              */

void chain_store_tell(const struct chain_store *s, struct chain_pos *end)
{
	end->file = s->cur;
	end->pos = (uint32_t)s->cur_size;
}

/* Walk one file's records from offset `off`; *stop set at a torn record. */
static int scan_file(struct chain_store *s, int32_t file, uint64_t off,
                     int (*fn)(const struct chain_pos *, const uint8_t *, size_t, void *),
                     void *arg, bool *stop)
{
	int fd;
	int rc = get_fd(s, false, file, false, &fd);
	if (rc == CHAIN_ENOTFOUND)
		return 0; /* never written: nothing to replay */
	uint64_t size;
	if (rc || (rc = file_size(fd, &size)))
		return rc;
	uint8_t *buf = NULL;
	size_t cap = 0;
	while (off + STORE_HEADER <= size) {
		uint8_t hdr[STORE_HEADER];
		if ((rc = read_xor(s, fd, off, hdr, sizeof(hdr))))
			break;
		uint32_t n = proto_le32(hdr + 4);
		if (proto_le32(hdr) != s->magic || n > STORE_MAX_BLOCK ||
		    off + STORE_HEADER + n > size) {
			*stop = true;
			break;
		}
		if (n > cap) {
			uint8_t *nb = xrealloc(buf, n);
			if (!nb) {
				rc = CHAIN_ENOMEM;
				break;
			}
			buf = nb;
			cap = n;
		}
		if ((rc = read_xor(s, fd, off + STORE_HEADER, buf, n)))
			break;
		struct chain_pos pos = {.file = file, .pos = (uint32_t)(off + STORE_HEADER)};
		if ((rc = fn(&pos, buf, n, arg)))
			break;
		off += STORE_HEADER + n;
	}
	xfree(buf);
	/* A record cut short at the end is a crash's tail, not an error. */
	return rc == CHAIN_ECORRUPT ? (*stop = true, 0) : rc;
}

int chain_store_scan(struct chain_store *s, const struct chain_pos *from,
                     int (*fn)(const struct chain_pos *pos, const uint8_t *raw, size_t len,
                               void *arg),
                     void *arg)
{
	bool stop = false;
	for (int32_t f = from->file < 0 ? 0 : from->file; f <= s->cur && !stop; f++) {
		uint64_t off = f == from->file ? from->pos : 0;
		int rc = scan_file(s, f, off, fn, arg, &stop);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Pruning                                                                 */

uint64_t chain_store_file_size(const struct chain_store *s, bool rev, int32_t file)
{
	char path[4096];
	struct stat st;
	if (file < 0 || file_path(s, rev, file, path, sizeof(path)) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size;
}

int chain_store_remove_file(struct chain_store *s, int32_t file)
{
	if (file < 0 || file >= s->cur)
		return CHAIN_EARG;
	int rc = 0;
	/* No shared read is inside the file while it goes (see the top). */
	pthread_rwlock_wrlock(&s->files);
	for (int rev = 0; rev < 2; rev++) {
		/* A descriptor left open would keep the space in use. */
		for (int i = 0; i < STORE_FDS; i++)
			if (s->fds[i].fd >= 0 && s->fds[i].file == file && s->fds[i].rev == rev &&
			    close_slot(&s->fds[i]))
				rc = CHAIN_EIO;
		char path[4096];
		if (file_path(s, rev, file, path, sizeof(path)) ||
		    (unlink(path) && errno != ENOENT))
			rc = CHAIN_EIO;
	}
	pthread_rwlock_unlock(&s->files);
	s->dir_dirty = true;
	return rc;
}
