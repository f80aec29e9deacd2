/*
 * daemon/net/ban.c: misbehaviour, discouragement and setban bans, as Core 29.
 *
 * Misbehaviour (a count over its limit: inv/getdata 50,000, headers 2,000,
 * addr 1,000) disconnects the peer at once and discourages its address:
 * the address goes into a bounded set (BAN_DISCOURAGE_MAX, remembering at
 * least half of that many addresses, like Core's rolling filter), which
 * makes a later inbound connection from it the first to be refused when
 * slots are scarce (net/net.c). Manual peers (connect=, addnode) and local
 * (loopback) peers are only disconnected, never discouraged.
 *
 * Bans (setban) are subnets with an expiry; banned addresses are refused on
 * accept, and a new ban disconnects matching peers at once. They persist in
 * <netdir>/banlist.json in Core's format ({"banned_nets": [{"version": 1,
 * "ban_created", "banned_until", "address": "1.2.3.0/24"}]}), written
 * whenever they change (by net/ban_writer.c's thread, off the loop: with
 * 300,000 bans the file is 40 MB, fsynced) and at shutdown (here, after
 * the writer is done), and loaded at startup. setban and clearbanned
 * answer once the file holds their change (ban_wait_written), as Core's.
 *
 * Nothing is lost:
 *   - the store holds every entry up to BAN_MAX_ENTRIES (a million): an
 *     index by (subnet, prefix) and a count per prefix length make a
 *     lookup one hash probe per prefix length in use, whatever the count;
 *   - a banlist.json that does not parse (truncated, hand-broken, not
 *     Core's shape), or holds more than the limit, is renamed to
 *     banlist.json.bad-<unix time> with a warning naming it, never
 *     overwritten; if it can be neither read nor moved, bans are not
 *     saved at all this run (and a warning says so);
 *   - a save writes banlist.json.new, fsyncs it, renames it over
 *     banlist.json and fsyncs the directory: a crash leaves the old file
 *     or the new one, never a mix.
 */
#include "daemon/net/ban_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* BAN_DISCOURAGE_MAX and BAN_MAX_ENTRIES are in daemon.h. */
/** banlist.json entry version (Core's CBanEntry::CURRENT_VERSION). */
#define BAN_ENTRY_VERSION 1

static int64_t index_find(const struct daemon *d, const uint8_t net[16], uint8_t prefix);

static void apply_prefix(uint8_t net[16], uint8_t prefix)
{
	for (int i = 0; i < 16; i++) {
		int bits = (int)prefix - i * 8;
		if (bits >= 8)
			continue;
		net[i] &= bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));
	}
}

static bool matches(const struct ban_entry *b, const uint8_t ip[16])
{
	uint8_t t[16];
	memcpy(t, ip, 16);
	apply_prefix(t, b->prefix);
	return memcmp(t, b->net, 16) == 0;
}

/* A contiguous netmask's prefix length, or -1. */
static int mask_bits(const uint8_t *m, int n)
{
	int bits = 0;
	int i = 0;
	for (; i < n && m[i] == 0xff; i++)
		bits += 8;
	if (i < n) {
		uint8_t b = m[i];
		while (b & 0x80) {
			bits++;
			b = (uint8_t)(b << 1);
		}
		if (b)
			return -1;
		for (i++; i < n; i++) {
			if (m[i])
				return -1;
		}
	}
	return bits;
}

int ban_parse_subnet(const char *s, uint8_t net[16], uint8_t *prefix)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	uint8_t a4[4];
	bool v4 = inet_pton(AF_INET, host, a4) == 1;
	if (v4) {
		memset(net, 0, 10);
		net[10] = net[11] = 0xff;
		memcpy(net + 12, a4, 4);
	} else if (inet_pton(AF_INET6, host, net) != 1) {
		return -EINVAL;
	}
	int bits = v4 ? 32 : 128;
	if (slash) {
		const char *p = slash + 1;
		char *end;
		uint8_t m[16];
		if (v4 && inet_pton(AF_INET, p, m) == 1) {
			bits = mask_bits(m, 4);
		} else if (!v4 && strchr(p, ':') && inet_pton(AF_INET6, p, m) == 1) {
			bits = mask_bits(m, 16);
		} else {
			errno = 0;
			long v = strtol(p, &end, 10);
			if (!*p || *end || errno || v < 0 || v > (v4 ? 32 : 128))
				return -EINVAL;
			bits = (int)v;
		}
		if (bits < 0)
			return -EINVAL;
	}
	*prefix = (uint8_t)(v4 ? 96 + bits : bits);
	apply_prefix(net, *prefix);
	return 0;
}

void ban_format_subnet(const uint8_t net[16], uint8_t prefix, char *out, size_t outlen)
{
	char ip[INET6_ADDRSTRLEN];
	if (net_ip16_is_v4(net) && prefix >= 96) {
		inet_ntop(AF_INET, net + 12, ip, sizeof(ip));
		snprintf(out, outlen, "%s/%u", ip, prefix - 96u);
	} else {
		inet_ntop(AF_INET6, net, ip, sizeof(ip));
		snprintf(out, outlen, "%s/%u", ip, prefix);
	}
}

static uint64_t ip_fp(const struct daemon *d, const union net_addr *a)
{
	uint8_t ip[16];
	net_addr_ip16(a, ip);
	return daemon_fingerprint(d, ip, sizeof(ip));
}

enum ban_verdict ban_check(struct daemon *d, const union net_addr *a)
{
	struct ban_state *s = d->ban;
	uint8_t ip[16];
	net_addr_ip16(a, ip);
	int64_t now = daemon_time(d);
	/* One probe per prefix length in use: a million /32s cost one. */
	for (int prefix = 128; prefix >= 0; prefix--) {
		if (!s->by_prefix[prefix])
			continue;
		uint8_t t[16];
		memcpy(t, ip, 16);
		apply_prefix(t, (uint8_t)prefix);
		int64_t i = index_find(d, t, (uint8_t)prefix);
		if (i >= 0 && s->v[i].until > now && matches(&s->v[i], ip))
			return BAN_BANNED;
	}
	if (hset_contains(&s->discouraged, ip_fp(d, a)))
		return BAN_DISCOURAGED;
	return BAN_OK;
}

void ban_misbehaving(struct peer *p, const char *why)
{
	struct daemon *d = p->d;
	char a[NET_ADDRSTRLEN];
	net_addr_format(&p->addr, a);
	d->stats.misbehaving++;
	DLOG_DBG(&d->log, DLOG_BAN, "Misbehaving: peer=%llu (%s): %s", (unsigned long long)p->id, a,
	         why);
	if (p->conn_type == PEER_CONN_MANUAL || net_addr_is_local(&p->addr)) {
		DLOG_DBG(&d->log, DLOG_BAN, "disconnecting but not discouraging %s peer=%llu",
		         p->conn_type == PEER_CONN_MANUAL ? "manual" : "local",
		         (unsigned long long)p->id);
		peer_disconnect(p, why);
		return;
	}
	if (hset_insert(&d->ban->discouraged, ip_fp(d, &p->addr)) == 0)
		d->stats.discouraged++;
	DLOG_INFO_(&d->log, DLOG_BAN, "disconnecting and discouraging %s (peer=%llu): %s", a,
	           (unsigned long long)p->id, why);
	/* Every connection from that address goes, as Core's DisconnectNode(addr). */
	uint8_t ip[16], qip[16];
	net_addr_ip16(&p->addr, ip);
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *q = d->peers[i];
		net_addr_ip16(&q->addr, qip);
		if (q != p && q->conn_type != PEER_CONN_MANUAL && memcmp(ip, qip, 16) == 0)
			peer_disconnect(q, "address discouraged");
	}
	peer_disconnect(p, why);
}

static uint64_t entry_fp(const struct daemon *d, const uint8_t net[16], uint8_t prefix)
{
	uint8_t k[17];
	memcpy(k, net, 16);
	k[16] = prefix;
	uint64_t fp = daemon_fingerprint(d, k, sizeof(k));
	return fp ? fp : 1; /* 0 marks an empty hmap slot */
}

/* Index slot i (after it was written). 0, or -ENOMEM. */
static int index_add(struct daemon *d, uint32_t i)
{
	struct ban_state *s = d->ban;
	if (hmap_put(&s->index, entry_fp(d, s->v[i].net, s->v[i].prefix), i))
		return -ENOMEM;
	s->by_prefix[s->v[i].prefix]++;
	return 0;
}

/* Rebuild the index from v (after a sweep or load compacted it). */
static void index_rebuild(struct daemon *d)
{
	struct ban_state *s = d->ban;
	hmap_release(&s->index);
	hmap_init(&s->index);
	memset(s->by_prefix, 0, sizeof(s->by_prefix));
	for (uint32_t i = 0; i < s->n; i++) {
		if (index_add(d, i))
			DLOG_WARNING(&d->log, DLOG_BAN, "out of memory indexing bans");
	}
}

/* The slot of an entry for exactly (net, prefix), or -1. */
static int64_t index_find(const struct daemon *d, const uint8_t net[16], uint8_t prefix)
{
	const struct ban_state *s = d->ban;
	uint32_t i;
	if (!s->by_prefix[prefix] || !hmap_get(&s->index, entry_fp(d, net, prefix), &i) ||
	    i >= s->n)
		return -1;
	if (s->v[i].prefix != prefix || memcmp(s->v[i].net, net, 16) != 0)
		return -1;
	return i;
}

static int entries_reserve(struct ban_state *s)
{
	if (s->n < s->cap)
		return 0;
	if (s->n >= BAN_MAX_ENTRIES)
		return -ENOSPC;
	uint32_t ncap = s->cap ? s->cap * 2 : 16;
	struct ban_entry *nv = xreallocarray(s->v, ncap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->v = nv;
	s->cap = ncap;
	return 0;
}

/*
 * The file cannot be taken as it is (`why`): move it aside so no save
 * overwrites it. If even that fails, saving is off for this run.
 */
static void move_aside(struct daemon *d, const char *why)
{
	struct ban_state *s = d->ban;
	size_t n = strlen(s->path) + 48;
	char *bad = xmalloc(n);
	struct stat st;
	/* Only a regular file is moved (a directory there is the operator's). */
	if (bad && lstat(s->path, &st) == 0 && S_ISREG(st.st_mode)) {
		/* Never over an earlier bad file (two failures in one second). */
		snprintf(bad, n, "%s.bad-%lld", s->path, (long long)time(NULL));
		for (int k = 1; k < 100 && access(bad, F_OK) == 0; k++)
			snprintf(bad, n, "%s.bad-%lld-%d", s->path, (long long)time(NULL), k);
		if (access(bad, F_OK) != 0 && rename(s->path, bad) == 0) {
			s->files_moved++;
			DLOG_WARNING(
			    &d->log, DLOG_BAN,
			    "%s: %s; moved aside to %s (restore the bans from it by hand); "
			    "starting with no bans",
			    s->path, why, bad);
			xfree(bad);
			return;
		}
		DLOG_ERR(&d->log, DLOG_BAN, "%s: %s, and it cannot be moved to %s: %s", s->path,
		         why, bad, strerror(errno));
	} else {
		DLOG_ERR(&d->log, DLOG_BAN, "%s: %s", s->path, why);
	}
	xfree(bad);
	s->nosave = true;
	DLOG_ERR(&d->log, DLOG_BAN,
	         "%s is kept as it is: bans set during this run will NOT be saved", s->path);
}

static int load(struct daemon *d)
{
	struct ban_state *s = d->ban;
	json_error_t jerr;
	char why[256];
	if (access(s->path, F_OK) != 0)
		return 0;
	json_t *root = json_load_file(s->path, 0, &jerr);
	if (!root) {
		snprintf(why, sizeof(why), "line %d: %s", jerr.line, jerr.text);
		move_aside(d, why);
		return 0;
	}
	json_t *arr = json_object_get(root, "banned_nets");
	int64_t now = daemon_time(d);
	size_t i;
	json_t *e;
	uint32_t loaded = 0, bad = 0;
	if (!json_is_array(arr)) {
		json_decref(root);
		move_aside(d, "no banned_nets array");
		return 0;
	}
	if (json_array_size(arr) > BAN_MAX_ENTRIES) {
		snprintf(why, sizeof(why), "%zu entries, over the limit of %u",
		         json_array_size(arr), BAN_MAX_ENTRIES);
		json_decref(root);
		move_aside(d, why);
		return 0;
	}
	json_array_foreach(arr, i, e)
	{
		json_t *addr = json_object_get(e, "address");
		json_t *until = json_object_get(e, "banned_until");
		json_t *created = json_object_get(e, "ban_created");
		struct ban_entry b;
		memset(&b, 0, sizeof(b));
		if (!json_is_string(addr) || !json_is_integer(until) ||
		    ban_parse_subnet(json_string_value(addr), b.net, &b.prefix)) {
			bad++;
			continue;
		}
		b.until = json_integer_value(until);
		b.created = json_is_integer(created) ? json_integer_value(created) : now;
		if (b.until <= now)
			continue;
		/* A hand-edited creation time outside [0, now] would make
		 * listbanned's duration (until - created) overflow. */
		if (b.created < 0 || b.created > now)
			b.created = now;
		if (entries_reserve(s)) {
			json_decref(root);
			s->n = 0;
			index_rebuild(d);
			move_aside(d, "out of memory loading it");
			return 0;
		}
		s->v[s->n++] = b;
		loaded++;
	}
	json_decref(root);
	index_rebuild(d);
	if (bad)
		DLOG_WARNING(&d->log, DLOG_BAN, "%s: %u malformed entries ignored", s->path, bad);
	DLOG_INFO_(&d->log, DLOG_BAN, "loaded %u bans from %s", loaded, s->path);
	return 0;
}

int ban_init(struct daemon *d)
{
	struct ban_state *s = d->ban;
	memset(s, 0, sizeof(*s));
	hset_init(&s->discouraged, BAN_DISCOURAGE_MAX);
	hmap_init(&s->index);
	size_t n = strlen(d->conf->netdir) + sizeof("/banlist.json");
	s->path = xmalloc(n);
	if (!s->path)
		return -ENOMEM;
	snprintf(s->path, n, "%s/banlist.json", d->conf->netdir);
	return load(d);
}

/* Output to a file through a 1 MiB buffer (a 40 MB file in 40 writes). */
struct out_buf {
	int fd;
	int err; /* the first failure, -errno */
	size_t len;
	char b[1u << 20];
};

static void out_flush(struct out_buf *o)
{
	size_t at = 0;
	while (!o->err && at < o->len) {
		ssize_t k = write(o->fd, o->b + at, o->len - at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			o->err = k < 0 ? -errno : -EIO;
		else
			at += (size_t)k;
	}
	o->len = 0;
}

static void out_put(struct out_buf *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->b))
		out_flush(o);
	memcpy(o->b + o->len, s, n);
	o->len += n;
}

#define OUT_LIT(o, lit) out_put(o, lit, sizeof(lit) - 1)

/* v in decimal. */
static void out_i64(struct out_buf *o, int64_t v)
{
	char t[24];
	size_t k = sizeof(t);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do
		t[--k] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		t[--k] = '-';
	out_put(o, t + k, sizeof(t) - k);
}

/* An entry's subnet as ban_format_subnet writes it; IPv4 (nearly every
 * ban) without inet_ntop and snprintf, the bulk of a write's time. */
static void out_subnet(struct out_buf *o, const struct ban_entry *e)
{
	if (net_ip16_is_v4(e->net) && e->prefix >= 96) {
		for (int i = 12; i < 16; i++) {
			out_i64(o, e->net[i]);
			out_put(o, i < 15 ? "." : "/", 1);
		}
		out_i64(o, e->prefix - 96);
		return;
	}
	char sub[INET6_ADDRSTRLEN + 8];
	ban_format_subnet(e->net, e->prefix, sub, sizeof(sub));
	out_put(o, sub, strlen(sub));
}

/*
 * The n entries as jansson's JSON_INDENT(2) dump of {"banned_nets": [...]}
 * (the bytes peerd wrote before), formatted straight into the file: a tree
 * of 300,000 objects cost most of a write's second, and a setban now waits
 * for its write (ban_wait_written). Addresses need no escaping (hex
 * digits, '.', ':' and '/').
 */
static void write_entries(struct out_buf *o, const struct ban_entry *v, uint32_t n)
{
	if (!n) {
		OUT_LIT(o, "{\n  \"banned_nets\": []\n}");
		return;
	}
	OUT_LIT(o, "{\n  \"banned_nets\": [\n");
	for (uint32_t i = 0; i < n && !o->err; i++) {
		OUT_LIT(o, "    {\n      \"version\": ");
		out_i64(o, BAN_ENTRY_VERSION);
		OUT_LIT(o, ",\n      \"ban_created\": ");
		out_i64(o, v[i].created);
		OUT_LIT(o, ",\n      \"banned_until\": ");
		out_i64(o, v[i].until);
		OUT_LIT(o, ",\n      \"address\": \"");
		out_subnet(o, &v[i]);
		if (i + 1 < n)
			OUT_LIT(o, "\"\n    },\n");
		else
			OUT_LIT(o, "\"\n    }\n");
	}
	OUT_LIT(o, "  ]\n}");
}

/* The entries to path, fsynced. 0 or -errno. */
static int write_synced(const char *path, const struct ban_entry *v, uint32_t n)
{
	struct out_buf *o = xmalloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (o->fd < 0) {
		int err = -errno;
		xfree(o);
		return err;
	}
	o->err = 0;
	o->len = 0;
	write_entries(o, v, n);
	out_flush(o);
	int rc = o->err;
	if (!rc && fsync(o->fd) != 0)
		rc = -errno;
	if (close(o->fd) != 0 && !rc)
		rc = -errno;
	xfree(o);
	return rc;
}

/* fsync the directory holding path, so the rename itself is durable. */
static void sync_dir(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash) {
		*slash = 0;
		int fd = open(slash == dir ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
	}
	xfree(dir);
}

int ban_file_write(const struct dlog *log, const char *path, const struct ban_entry *v, uint32_t n)
{
	int rc = -ENOMEM;
	size_t tl = strlen(path) + 5;
	char *tmp = xmalloc(tl);
	if (!tmp)
		goto out;
	snprintf(tmp, tl, "%s.new", path);
	if ((rc = write_synced(tmp, v, n)) != 0) {
		DLOG_WARNING(log, DLOG_BAN, "cannot write %s: %s", tmp, strerror(-rc));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		rc = -errno;
		DLOG_WARNING(log, DLOG_BAN, "cannot rename %s to %s: %s", tmp, path,
		             strerror(errno));
		unlink(tmp);
		goto out;
	}
	sync_dir(path);
	rc = 0;
out:
	xfree(tmp);
	return rc;
}

int ban_save(struct daemon *d)
{
	struct ban_state *s = d->ban;
	if (s->nosave)
		return -EPERM;
	/* The writer's file must not land after this one; and when it
	 * already wrote this state (shutdown after a setban), once is enough. */
	if (ban_writer_settle(s)) {
		s->dirty = false;
		ban_waits_done(d);
		return 0;
	}
	int rc = ban_file_write(&d->log, s->path, s->v, s->n);
	if (!rc)
		s->dirty = false;
	/* Written, or the failure logged: replies waiting for it go. */
	ban_waits_done(d);
	return rc;
}

/* The bans changed: written off the loop (or here, when the writer cannot be had). */
static void changed(struct daemon *d)
{
	struct ban_state *s = d->ban;
	s->dirty = true;
	s->gen++;
	if (!s->nosave && !ban_writer_kick(d))
		(void)ban_save(d);
}

void ban_release(struct daemon *d)
{
	struct ban_state *s = d->ban;
	if (s->dirty && s->path)
		(void)ban_save(d);
	if (s->waits)
		ban_waits_done(d);
	ban_writer_stop(s);
	xfree(s->v);
	xfree(s->path);
	hmap_release(&s->index);
	hset_release(&s->discouraged);
	memset(s, 0, sizeof(*s));
}

void ban_sweep(struct daemon *d, int64_t now)
{
	struct ban_state *s = d->ban;
	uint32_t j = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->v[i].until > now)
			s->v[j++] = s->v[i];
	}
	if (j != s->n) {
		s->n = j;
		index_rebuild(d);
		changed(d);
	} else if (s->dirty && !s->nosave && s->writer) {
		(void)ban_writer_kick(d); /* changes made while the writer was busy */
	}
}

static int64_t find(const struct daemon *d, const uint8_t net[16], uint8_t prefix, int64_t now)
{
	int64_t i = index_find(d, net, prefix);
	return i >= 0 && d->ban->v[i].until > now ? i : -1;
}

int ban_add(struct daemon *d, const uint8_t net[16], uint8_t prefix, int64_t until)
{
	struct ban_state *s = d->ban;
	int64_t now = daemon_time(d);
	ban_sweep(d, now);
	if (find(d, net, prefix, now) >= 0)
		return -EEXIST;
	int err = entries_reserve(s);
	if (err) {
		if (err == -ENOSPC)
			DLOG_WARNING(&d->log, DLOG_BAN, "setban refused: %u bans is the limit",
			             BAN_MAX_ENTRIES);
		return err;
	}
	struct ban_entry *b = &s->v[s->n];
	memcpy(b->net, net, 16);
	b->prefix = prefix;
	b->created = now;
	b->until = until;
	if (index_add(d, s->n))
		return -ENOMEM;
	s->n++;
	changed(d);
	for (uint32_t i = 0; i < d->n_peers; i++) {
		uint8_t ip[16];
		net_addr_ip16(&d->peers[i]->addr, ip);
		if (d->peers[i]->state != PEER_CONNECTING && matches(b, ip))
			peer_disconnect(d->peers[i], "banned");
	}
	return 0;
}

int ban_remove(struct daemon *d, const uint8_t net[16], uint8_t prefix)
{
	struct ban_state *s = d->ban;
	int64_t i = find(d, net, prefix, daemon_time(d));
	if (i < 0)
		return -ENOENT;
	(void)hmap_del(&s->index, entry_fp(d, net, prefix));
	s->by_prefix[prefix]--;
	s->v[i] = s->v[--s->n];
	/* The last entry moved into slot i. */
	if ((uint32_t)i < s->n)
		(void)hmap_put(&s->index, entry_fp(d, s->v[i].net, s->v[i].prefix), (uint32_t)i);
	changed(d);
	return 0;
}

void ban_clear(struct daemon *d)
{
	struct ban_state *s = d->ban;
	s->n = 0;
	index_rebuild(d);
	/* Core's clearbanned also forgets discouragement. */
	hset_release(&s->discouraged);
	hset_init(&s->discouraged, BAN_DISCOURAGE_MAX);
	changed(d);
}
