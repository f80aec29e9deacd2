/*
 * addrman/serial.c: peers.dat, as Core 29's AddrManImpl::Serialize and
 * Unserialize and addrdb.cpp's SerializeFileDB/DeserializeFileDB.
 *
 *   file:    network magic (4) | addrman | SHA-256d of both (32)
 *   addrman: format u8 (4) | 32 + lowest compatible format u8 (36) |
 *            nKey (32) | nNew i32 | nTried i32 | 1024 ^ 2^30 i32 |
 *            nNew entries | nTried entries |
 *            per new bucket: count i32, count * (index of a new entry) i32 |
 *            asmap checksum (32, zero without asmap)
 *   entry:   disk version u32 (220000 | 2^29 for addrv2) | time u32 |
 *            services CompactSize | BIP155 address with port |
 *            source (BIP155 address) | last success i64 | attempts i32
 *
 * The entries are written in id order (the order they were added or
 * loaded); Core writes them in its hash map's order, so the two files of
 * one addrman may list the entries in different orders but load into the
 * same tables. Error texts are Core's exception texts (what() of an
 * std::ios_base::failure ends in ": iostream error" in libstdc++).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addrman/internal.h"
#include "base/alloc.h"
#include "proto/proto.h"

#define DISK_VERSION_INIT        220000u
#define DISK_VERSION_ADDRV2      (1u << 29)
#define DISK_VERSION_IGNORE_MASK 0x7ffffu
#define FORMAT_V1_DETERMINISTIC  1
#define FORMAT_V2_ASMAP          2
#define FORMAT_V3_BIP155         3
/* A peers.dat is at most a few MB (65,536 + 16,384 entries of < 600 bytes). */
#define FILE_MAX   (64u << 20)
#define IOS_SUFFIX ": iostream error"
#define EOF_MSG    "AutoFile::read: end of file" IOS_SUFFIX

static void put_u32(struct proto_writer *w, uint32_t v)
{
	proto_write_u32le(w, v);
}

static void put_netaddr(struct proto_writer *w, const struct addrman_service *s)
{
	const uint8_t *a;
	size_t n;
	proto_write_u8(w, addrman_service_bip155(s, &a, &n));
	proto_write_varbytes(w, a, n);
}

static void put_entry(struct proto_writer *w, const struct addrman_info *e)
{
	put_u32(w, DISK_VERSION_INIT | DISK_VERSION_ADDRV2);
	int64_t t = e->addr.time;
	put_u32(w, (uint32_t)(t < 0 ? 0 : t > UINT32_MAX ? UINT32_MAX : t));
	proto_write_compact(w, e->addr.services);
	put_netaddr(w, &e->addr.svc);
	proto_write_u16be(w, e->addr.svc.port);
	put_netaddr(w, &e->source);
	proto_write_u64le(w, (uint64_t)e->last_success);
	put_u32(w, (uint32_t)e->attempts);
}

static int cmp_id(const void *a, const void *b, void *ctx)
{
	const struct addrman *am = ctx;
	int64_t x = am->info[*(const int32_t *)a].id, y = am->info[*(const int32_t *)b].id;
	return x < y ? -1 : x > y;
}

int addrman_serialize(const struct addrman *am, uint8_t **buf, size_t *len)
{
	struct proto_writer w;
	proto_writer_init(&w);
	if (*buf) {
		/* Append to what the caller has: adopt the buffer. */
		w.buf = *buf;
		w.len = w.cap = *len;
	}
	int32_t *order = xreallocarray(NULL, am->n_random ? am->n_random : 1, sizeof(*order));
	int32_t *index = xreallocarray(NULL, am->n_info ? am->n_info : 1, sizeof(*index));
	if (!order || !index) {
		xfree(order);
		xfree(index);
		return ADDRMAN_ENOMEM;
	}
	if (am->n_random) /* vrandom is NULL until the first entry */
		memcpy(order, am->vrandom, am->n_random * sizeof(*order));
	qsort_r(order, am->n_random, sizeof(*order), cmp_id, (void *)am);

	proto_write_u8(&w, ADDRMAN_FILE_FORMAT);
	proto_write_u8(&w, ADDRMAN_INCOMPATIBILITY_BASE + ADDRMAN_FILE_FORMAT);
	proto_write_bytes(&w, am->key, 32);
	put_u32(&w, (uint32_t)am->n_new);
	put_u32(&w, (uint32_t)am->n_tried);
	put_u32(&w, ADDRMAN_NEW_BUCKET_COUNT ^ (1u << 30));
	int32_t n = 0;
	for (uint32_t i = 0; i < am->n_random; i++) {
		const struct addrman_info *e = &am->info[order[i]];
		index[order[i]] = n;
		if (e->ref_count) {
			put_entry(&w, e);
			n++;
		}
	}
	for (uint32_t i = 0; i < am->n_random; i++) {
		const struct addrman_info *e = &am->info[order[i]];
		if (e->in_tried)
			put_entry(&w, e);
	}
	for (int b = 0; b < ADDRMAN_NEW_BUCKET_COUNT; b++) {
		uint32_t count = 0;
		for (int p = 0; p < ADDRMAN_BUCKET_SIZE; p++)
			count += am->vv_new[b][p] != -1;
		put_u32(&w, count);
		for (int p = 0; p < ADDRMAN_BUCKET_SIZE; p++)
			if (am->vv_new[b][p] != -1)
				put_u32(&w, (uint32_t)index[am->vv_new[b][p]]);
	}
	static const uint8_t no_asmap[32];
	proto_write_bytes(&w, no_asmap, 32);
	xfree(order);
	xfree(index);
	if (w.err) {
		proto_writer_release(&w);
		*buf = NULL;
		*len = 0;
		return ADDRMAN_ENOMEM;
	}
	*buf = w.buf;
	*len = w.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

struct rd {
	struct proto_reader r;
	char *msg;
	size_t cap;
};

static int fail(struct rd *d, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct rd *d, int err, const char *fmt, ...)
{
	if (d->msg && d->cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->msg, d->cap, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* A read error as Core words it: the end of the data, or a bad CompactSize. */
static int read_fail(struct rd *d, int err)
{
	if (err == PROTO_ENONCANON)
		return fail(d, ADDRMAN_ECORRUPT, "non-canonical ReadCompactSize()" IOS_SUFFIX);
	if (err == PROTO_EOVERSIZE)
		return fail(d, ADDRMAN_ECORRUPT, "ReadCompactSize(): size too large" IOS_SUFFIX);
	return fail(d, ADDRMAN_ECORRUPT, EOF_MSG);
}

static int get_i32(struct rd *d, int32_t *v)
{
	int err = proto_read_i32le(&d->r, v);
	return err ? read_fail(d, err) : 0;
}

static const char *bip155_name(uint8_t id)
{
	switch (id) {
	case PROTO_BIP155_IPV4:
		return "IPv4";
	case PROTO_BIP155_IPV6:
		return "IPv6";
	case PROTO_BIP155_TORV3:
		return "TORv3";
	case PROTO_BIP155_I2P:
		return "I2P";
	default:
		return "CJDNS";
	}
}

/* Core's CNetAddr::UnserializeV2Stream, or the v1 16 bytes. */
static int get_netaddr(struct rd *d, bool v2, uint16_t port, struct addrman_service *out)
{
	int err;
	if (!v2) {
		uint8_t ip[16];
		if ((err = proto_read_bytes(&d->r, ip, 16)))
			return read_fail(d, err);
		*out = addrman_service_from_v1(ip, port);
		return 0;
	}
	uint8_t id;
	uint64_t n;
	const uint8_t *a;
	if ((err = proto_read_u8(&d->r, &id)) || (err = proto_read_compact(&d->r, 0x02000000, &n)))
		return read_fail(d, err);
	if (n > PROTO_MAX_ADDRV2_SIZE)
		return fail(d, ADDRMAN_ECORRUPT, "Address too long: %llu > %u" IOS_SUFFIX,
		            (unsigned long long)n, PROTO_MAX_ADDRV2_SIZE);
	if ((err = proto_read_span(&d->r, (size_t)n, &a)))
		return read_fail(d, err);
	if (addrman_service_from_bip155(id, a, (size_t)n, port, out)) {
		static const unsigned want[] = {0, 4, 16, 0, 32, 32, 16};
		return fail(d, ADDRMAN_ECORRUPT,
		            "BIP155 %s address with length %llu (should be %u)" IOS_SUFFIX,
		            bip155_name(id), (unsigned long long)n, want[id]);
	}
	return 0;
}

/* One AddrInfo; v2: the stream allows addrv2 (format >= 3). */
static int get_entry(struct rd *d, bool v2, struct addrman_info *e)
{
	uint32_t version, time;
	uint64_t services;
	int err;
	memset(e, 0, sizeof(*e));
	if ((err = proto_read_u32le(&d->r, &version)))
		return read_fail(d, err);
	version &= ~DISK_VERSION_IGNORE_MASK;
	bool use_v2;
	if (version == 0)
		use_v2 = false;
	else if (version == DISK_VERSION_ADDRV2 && v2)
		use_v2 = true;
	else
		return fail(d, ADDRMAN_ECORRUPT,
		            "Unsupported CAddress disk format version" IOS_SUFFIX);
	if ((err = proto_read_u32le(&d->r, &time)))
		return read_fail(d, err);
	if (use_v2)
		err = proto_read_compact(&d->r, UINT64_MAX, &services);
	else
		err = proto_read_u64le(&d->r, &services);
	if (err)
		return read_fail(d, err);
	/* The port comes after the address: read the address, then patch it in. */
	if ((err = get_netaddr(d, use_v2, 0, &e->addr.svc)))
		return err;
	uint16_t port;
	if ((err = proto_read_u16be(&d->r, &port)))
		return read_fail(d, err);
	e->addr.svc.port = port;
	e->addr.time = time;
	e->addr.services = services;
	if ((err = get_netaddr(d, v2, 0, &e->source)))
		return err;
	int64_t last_success;
	int32_t attempts;
	if ((err = proto_read_i64le(&d->r, &last_success)) ||
	    (err = proto_read_i32le(&d->r, &attempts)))
		return read_fail(d, err);
	e->last_success = last_success;
	e->attempts = attempts;
	e->random_pos = -1;
	return 0;
}

/* Put a read entry into a fresh slot with the next id, in vRandom and mapAddr. */
static int32_t adopt(struct addrman *am, const struct addrman_info *src)
{
	int32_t slot = addrman_slot_alloc(am);
	if (slot < 0)
		return -1;
	am->info[slot] = *src;
	am->info[slot].used = true;
	am->info[slot].id = am->id_count++;
	if (addrman_random_push(am, slot) || addrman_index_put(am, &src->addr.svc, slot))
		return -1;
	return slot;
}

struct bucket_entry {
	int32_t bucket;
	int32_t index;
};

int addrman_deserialize(struct addrman *am, const uint8_t *data, size_t len, size_t *used,
                        char *errmsg, size_t errcap)
{
	struct rd d = {.msg = errmsg, .cap = errcap};
	struct bucket_entry *be = NULL;
	int32_t *new_slots = NULL;
	size_t n_be = 0, cap_be = 0;
	int err;
	uint8_t format, compat;
	int32_t n_new, n_tried, n_ubuckets;

	proto_reader_init(&d.r, data, len);
	if (errmsg && errcap)
		errmsg[0] = 0;
	if ((err = proto_read_u8(&d.r, &format)) || (err = proto_read_u8(&d.r, &compat))) {
		err = read_fail(&d, err);
		goto out;
	}
	if (compat < ADDRMAN_INCOMPATIBILITY_BASE) {
		err = fail(&d, ADDRMAN_ECORRUPT,
		           "Corrupted addrman database: The compat value (%u) is lower than the "
		           "expected minimum value %u." IOS_SUFFIX,
		           compat, ADDRMAN_INCOMPATIBILITY_BASE);
		goto out;
	}
	if (compat - ADDRMAN_INCOMPATIBILITY_BASE > ADDRMAN_FILE_FORMAT) {
		err = fail(
		    &d, ADDRMAN_EVERSION,
		    "Unsupported format of addrman database: %u. It is compatible with formats "
		    ">=%u, but the maximum supported by this version of %s is %u." IOS_SUFFIX,
		    format, compat - ADDRMAN_INCOMPATIBILITY_BASE, "peerd", ADDRMAN_FILE_FORMAT);
		goto out;
	}
	if ((err = proto_read_bytes(&d.r, am->key, 32))) {
		err = read_fail(&d, err);
		goto out;
	}
	if ((err = get_i32(&d, &n_new)) || (err = get_i32(&d, &n_tried)) ||
	    (err = get_i32(&d, &n_ubuckets)))
		goto out;
	if (format >= FORMAT_V1_DETERMINISTIC)
		n_ubuckets ^= 1 << 30;
	if (n_new > ADDRMAN_NEW_BUCKET_COUNT * ADDRMAN_BUCKET_SIZE || n_new < 0) {
		err =
		    fail(&d, ADDRMAN_ECORRUPT,
		         "Corrupt AddrMan serialization: nNew=%d, should be in [0, %d]" IOS_SUFFIX,
		         n_new, ADDRMAN_NEW_BUCKET_COUNT * ADDRMAN_BUCKET_SIZE);
		goto out;
	}
	if (n_tried > ADDRMAN_TRIED_BUCKET_COUNT * ADDRMAN_BUCKET_SIZE || n_tried < 0) {
		err = fail(
		    &d, ADDRMAN_ECORRUPT,
		    "Corrupt AddrMan serialization: nTried=%d, should be in [0, %d]" IOS_SUFFIX,
		    n_tried, ADDRMAN_TRIED_BUCKET_COUNT * ADDRMAN_BUCKET_SIZE);
		goto out;
	}
	bool v2 = format >= FORMAT_V3_BIP155;

	new_slots = xreallocarray(NULL, n_new ? (size_t)n_new : 1, sizeof(*new_slots));
	if (!new_slots) {
		err = ADDRMAN_ENOMEM;
		goto out;
	}
	for (int32_t n = 0; n < n_new; n++) {
		struct addrman_info e;
		if ((err = get_entry(&d, v2, &e)))
			goto out;
		int32_t slot = adopt(am, &e);
		if (slot < 0) {
			err = ADDRMAN_ENOMEM;
			goto out;
		}
		new_slots[n] = slot;
		am->n_new++;
		am->counts[addrman_netaddr_network(&e.addr.svc)].n_new++;
	}
	for (int32_t n = 0; n < n_tried; n++) {
		struct addrman_info e;
		if ((err = get_entry(&d, v2, &e)))
			goto out;
		int b = addrman_tried_bucket(am, &e.addr.svc);
		int p = addrman_bucket_position(am, false, b, &e.addr.svc);
		if (!addrman_netaddr_valid(&e.addr.svc) || am->vv_tried[b][p] != -1)
			continue; /* lost */
		e.in_tried = true;
		int32_t slot = adopt(am, &e);
		if (slot < 0) {
			err = ADDRMAN_ENOMEM;
			goto out;
		}
		am->vv_tried[b][p] = slot;
		am->n_tried++;
		am->counts[addrman_netaddr_network(&e.addr.svc)].n_tried++;
	}
	for (int32_t b = 0; b < n_ubuckets; b++) {
		int32_t count;
		if ((err = get_i32(&d, &count)))
			goto out;
		for (int32_t i = 0; i < count; i++) {
			int32_t index;
			if ((err = get_i32(&d, &index)))
				goto out;
			if (index < 0 || index >= n_new)
				continue;
			if (n_be == cap_be) {
				size_t cap = cap_be ? cap_be * 2 : 256;
				struct bucket_entry *v = xreallocarray(be, cap, sizeof(*v));
				if (!v) {
					err = ADDRMAN_ENOMEM;
					goto out;
				}
				be = v;
				cap_be = cap;
			}
			be[n_be++] = (struct bucket_entry){b, index};
		}
	}
	uint8_t asmap[32] = {0};
	if (format >= FORMAT_V2_ASMAP && (err = proto_read_bytes(&d.r, asmap, 32))) {
		err = read_fail(&d, err);
		goto out;
	}
	static const uint8_t no_asmap[32];
	bool restore = n_ubuckets == ADDRMAN_NEW_BUCKET_COUNT && memcmp(asmap, no_asmap, 32) == 0;
	for (size_t i = 0; i < n_be; i++) {
		int32_t slot = new_slots[be[i].index];
		struct addrman_info *e = &am->info[slot];
		if (!addrman_netaddr_valid(&e->addr.svc) || e->ref_count >= 8)
			continue;
		int b = be[i].bucket;
		int p = addrman_bucket_position(am, true, b, &e->addr.svc);
		if (restore && am->vv_new[b][p] == -1) {
			am->vv_new[b][p] = slot;
			e->ref_count++;
		} else {
			/* Rebucket by its own source. */
			b = addrman_new_bucket(am, &e->addr.svc, &e->source);
			p = addrman_bucket_position(am, true, b, &e->addr.svc);
			if (am->vv_new[b][p] == -1) {
				am->vv_new[b][p] = slot;
				e->ref_count++;
			}
		}
	}
	/* Prune new entries no bucket took (collisions, invalid addresses). */
	for (int32_t n = 0; n < n_new; n++) {
		struct addrman_info *e = &am->info[new_slots[n]];
		if (!e->in_tried && e->ref_count == 0)
			addrman_delete(am, new_slots[n]);
	}
	int code = addrman_check(am);
	if (code) {
		err = fail(&d, ADDRMAN_ECORRUPT,
		           "Corrupt data. Consistency check failed with code %d" IOS_SUFFIX, code);
		goto out;
	}
	err = 0;
out:
	if (used)
		*used = proto_reader_offset(&d.r);
	xfree(be);
	xfree(new_slots);
	return err;
}

/* ---- the file -------------------------------------------------------------- */

static int fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return ADDRMAN_ENOMEM;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return ADDRMAN_EIO;
	int r = fsync(fd);
	close(fd);
	return r ? ADDRMAN_EIO : 0;
}

int addrman_write_file(const struct addrman *am, const char *path, uint32_t magic)
{
	uint8_t *buf = xmalloc(4);
	size_t len = 4;
	char tmp[4096];
	int err, fd = -1;
	if (!buf)
		return ADDRMAN_ENOMEM;
	for (int i = 0; i < 4; i++)
		buf[i] = (uint8_t)(magic >> (8 * i));
	if ((err = addrman_serialize(am, &buf, &len)))
		return err;
	uint8_t *all = xrealloc(buf, len + 32);
	if (!all) {
		xfree(buf);
		return ADDRMAN_ENOMEM;
	}
	buf = all;
	proto_sha256d(buf, len, buf + len);
	len += 32;

	/* Core's temporary name: peers.dat.XXXX beside the file. */
	uint16_t rnd;
	struct addrman_rng r;
	addrman_rng_init(&r, false);
	rnd = (uint16_t)addrman_rng_bits(&r, 16);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%04x", path, rnd) >= sizeof(tmp)) {
		err = ADDRMAN_EIO;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = ADDRMAN_EIO;
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = ADDRMAN_EIO;
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) || close(fd)) {
		fd = -1;
		err = ADDRMAN_EIO;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path)) {
		err = ADDRMAN_EIO;
		goto out;
	}
	err = fsync_dir_of(path);
out:
	if (fd >= 0)
		close(fd);
	if (err)
		unlink(tmp);
	xfree(buf);
	return err;
}

int addrman_read_file(struct addrman *am, const char *path, uint32_t magic, char *errmsg,
                      size_t errcap)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;
	struct rd d = {.msg = errmsg, .cap = errcap};
	if (errmsg && errcap)
		errmsg[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? ADDRMAN_ENOENT
		                       : fail(&d, ADDRMAN_EIO, "%s", strerror(errno));
	for (;;) {
		if (len == cap) {
			if (cap >= FILE_MAX) {
				err = fail(&d, ADDRMAN_ECORRUPT, "peers.dat is over %u bytes",
				           FILE_MAX);
				goto out;
			}
			size_t ncap = cap ? cap * 2 : 1u << 16;
			uint8_t *v = xrealloc(buf, ncap);
			if (!v) {
				err = ADDRMAN_ENOMEM;
				goto out;
			}
			buf = v;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = fail(&d, ADDRMAN_EIO, "%s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len < 4) {
		err = fail(&d, ADDRMAN_ECORRUPT, EOF_MSG);
		goto out;
	}
	uint32_t m = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
	             (uint32_t)buf[3] << 24;
	if (m != magic) {
		err = fail(&d, ADDRMAN_ECORRUPT, "Invalid network magic number");
		goto out;
	}
	size_t used = 0;
	if ((err = addrman_deserialize(am, buf + 4, len - 4, &used, errmsg, errcap)))
		goto out;
	if (len - 4 - used < 32) {
		err = fail(&d, ADDRMAN_ECORRUPT, EOF_MSG);
		goto out;
	}
	uint8_t sum[32];
	proto_sha256d(buf, 4 + used, sum);
	if (memcmp(sum, buf + 4 + used, 32) != 0)
		err = fail(&d, ADDRMAN_ECORRUPT, "Checksum mismatch, data corrupted");
out:
	close(fd);
	xfree(buf);
	return err;
}

void addrman_corrupt_message(char *buf, size_t cap, const char *reason, const char *path,
                             const char *bugreport)
{
	snprintf(
	    buf, cap,
	    "Invalid or corrupt peers.dat (%s). If you believe this is a bug, please report it "
	    "to %s. As a workaround, you can move the file (\"%s\") out of the way (rename, "
	    "move, or delete) to have a new one created on the next start.",
	    reason, bugreport, path);
}
