/*
 * tests/unit/test_addrman_file.c: addrman/'s random stream, network
 * groups and peers.dat: Core's FastRandomContext against RFC 8439's
 * ChaCha20 vectors, Core's netbase_getgroup cases, the serialization
 * round trip, Core's remove_invalid and load_addrman_corrupted, and the
 * file's checks (magic, checksum, truncation, compat byte, newer format).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrman/addrman.h"
#include "addrman/internal.h"
#include "base/alloc.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

#define NOW           INT64_C(1700000000)
#define MAGIC_REGTEST 0xdab5bffau

static struct addrman_service ip(const char *text, uint16_t port)
{
	struct addrman_service s;
	uint8_t b[16];
	if (inet_pton(AF_INET, text, b) == 1)
		return addrman_service_ipv4(b[0], b[1], b[2], b[3], port);
	if (inet_pton(AF_INET6, text, b) != 1)
		fail_msg("bad test address %s", text);
	s = addrman_service_from_v1(b, port);
	return s;
}

/* ---- the random stream ----------------------------------------------------- */

static void test_rng_chacha20_vectors(void **state)
{
	(void)state;
	struct addrman_rng r;
	addrman_rng_init(&r, true);
	/* RFC 8439 A.1 #1: zero key, zero nonce, block 0 starts 76 b8 e0 ad a0 f1 3d 90 */
	assert_int_equal(addrman_rng_rand64(&r), UINT64_C(0x903df1a0ade0b876));
	for (int i = 1; i < 8; i++)
		(void)addrman_rng_rand64(&r);
	/* A.1 #2: block 1 starts 9f 07 e7 be 55 51 38 7a */
	assert_int_equal(addrman_rng_rand64(&r), UINT64_C(0x7a385155bee7079f));
}

static void test_rng_bits(void **state)
{
	(void)state;
	struct addrman_rng r;
	addrman_rng_init(&r, true);
	uint64_t w = UINT64_C(0x903df1a0ade0b876);
	/* RandomMixin: the low bits first, the rest kept for the next draw */
	assert_int_equal(addrman_rng_bits(&r, 32), w & 0xffffffffu);
	assert_int_equal(addrman_rng_bits(&r, 1), (w >> 32) & 1);
	assert_int_equal(addrman_rng_bits(&r, 0), 0);
	assert_int_equal(addrman_rng_bits(&r, 30), (w >> 33) & 0x3fffffff);
	/* 1 bit left: a 2-bit draw takes it and the lowest bit of the next word */
	struct addrman_rng r2;
	addrman_rng_init(&r2, true);
	(void)addrman_rng_bits(&r2, 63);
	uint64_t second = 0;
	{
		struct addrman_rng r3;
		addrman_rng_init(&r3, true);
		(void)addrman_rng_rand64(&r3);
		second = addrman_rng_rand64(&r3);
	}
	assert_int_equal(addrman_rng_bits(&r2, 2), ((second & 1) << 1) | (w >> 63));
	/* randrange stays in range and uses bit_width(range - 1) bits */
	struct addrman_rng r4;
	addrman_rng_init(&r4, true);
	for (int i = 0; i < 1000; i++)
		assert_true(addrman_rng_range(&r4, 1000) < 1000);
	assert_int_equal(addrman_rng_range(&r4, 1), 0);
	/* a random key gives another stream */
	struct addrman_rng r5;
	addrman_rng_init(&r5, false);
	assert_int_not_equal(addrman_rng_rand64(&r5), w);
}

/* ---- network groups (Core netbase_tests/netbase_getgroup) -------------------- */

static void assert_group(const char *text, const uint8_t *want, size_t n)
{
	struct addrman_service s = ip(text, 0);
	uint8_t g[ADDRMAN_GROUP_MAX];
	size_t len = addrman_netaddr_group(&s, g);
	tu_assert_bytes_equal(g, len, want, n);
}

/* peerd's -test=addrmanloopback: 127.N/16 are separate routable IPv4 groups; ::1 stays local. */
static void test_loopback_routable(void **state)
{
	(void)state;
	static const uint8_t unroutable[] = {0};
	static const uint8_t lo5[] = {ADDRMAN_NET_IPV4, 127, 5};
	struct addrman_service s = ip("127.5.0.1", 8333);
	assert_false(addrman_netaddr_routable(&s));
	addrman_netaddr_set_loopback_routable(true);
	assert_true(addrman_netaddr_routable(&s));
	assert_int_equal(addrman_netaddr_network(&s), ADDRMAN_NET_IPV4);
	assert_group("127.5.0.1", lo5, 3);
	assert_group("::1", unroutable, 1);
	assert_group("10.0.0.1", unroutable, 1);
	struct addrman *am = addrman_new(true, 0);
	assert_non_null(am);
	struct addrman_address a = {.svc = s, .time = 1700000000, .services = 9};
	size_t added = 0;
	assert_int_equal(addrman_add(am, &a, 1, &s, 0, 1700000000, &added), 0);
	assert_int_equal(added, 1);
	addrman_free(am);
	addrman_netaddr_set_loopback_routable(false);
	assert_false(addrman_netaddr_routable(&s));
	assert_group("127.5.0.1", unroutable, 1);
}

static void test_netgroup(void **state)
{
	(void)state;
	static const uint8_t unroutable[] = {0};
	static const uint8_t v4_12[] = {ADDRMAN_NET_IPV4, 1, 2};
	static const uint8_t he[] = {ADDRMAN_NET_IPV6, 32, 1, 4, 112, 175};
	static const uint8_t v6[] = {ADDRMAN_NET_IPV6, 32, 1, 32, 1};
	assert_group("127.0.0.1", unroutable, 1);
	assert_group("10.0.0.1", unroutable, 1);
	assert_group("169.254.1.1", unroutable, 1);
	assert_group("::", unroutable, 1);
	assert_group("1.2.3.4", v4_12, 3);
	assert_group("::ffff:0:102:304", v4_12, 3);                      /* RFC 6145 */
	assert_group("64:ff9b::102:304", v4_12, 3);                      /* RFC 6052 */
	assert_group("2002:102:304:9999:9999:9999:9999:9999", v4_12, 3); /* RFC 3964 */
	assert_group("2001:0:9999:9999:9999:9999:fefd:fcfb", v4_12, 3);  /* RFC 4380 */
	assert_group("2001:470:abcd:9999:9999:9999:9999:9999", he, 6);   /* he.net /36 */
	assert_group("2001:2001:9999:9999:9999:9999:9999:9999", v6, 5);  /* /32 */

	/* Tor and I2P: the class and 4 bits; CJDNS: 12 bits */
	struct addrman_service t;
	uint8_t k[32];
	memset(k, 0xa5, sizeof(k));
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV3, k, 32, 0, &t), 0);
	uint8_t g[ADDRMAN_GROUP_MAX];
	size_t n = addrman_netaddr_group(&t, g);
	static const uint8_t tor[] = {ADDRMAN_NET_ONION, 0xa5 | 0x0f};
	tu_assert_bytes_equal(g, n, tor, sizeof(tor));
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_I2P, k, 32, 0, &t), 0);
	n = addrman_netaddr_group(&t, g);
	static const uint8_t i2p[] = {ADDRMAN_NET_I2P, 0xa5 | 0x0f};
	tu_assert_bytes_equal(g, n, i2p, sizeof(i2p));
	k[0] = 0xfc;
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_CJDNS, k, 16, 0, &t), 0);
	n = addrman_netaddr_group(&t, g);
	static const uint8_t cjdns[] = {ADDRMAN_NET_CJDNS, 0xfc, 0xa5 | 0x0f};
	tu_assert_bytes_equal(g, n, cjdns, sizeof(cjdns));
	assert_true(addrman_netaddr_routable(&t));
	k[0] = 0xfd; /* CJDNS must start fc */
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_CJDNS, k, 16, 0, &t), 0);
	assert_false(addrman_netaddr_valid(&t));
	/* wrong lengths fail, unknown networks and Tor v2 are invalid */
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_IPV4, k, 5, 0, &t), -1);
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV2, k, 10, 0, &t), 0);
	assert_false(addrman_netaddr_valid(&t));
	assert_int_equal(addrman_service_from_bip155(99, k, 3, 0, &t), 0);
	assert_false(addrman_netaddr_valid(&t));

	/* network vs class: 6to4 is IPv6 by network, IPv4 by class */
	struct addrman_service six = ip("2002:102:304::1", 0);
	assert_int_equal(addrman_netaddr_network(&six), ADDRMAN_NET_IPV6);
	assert_int_equal(addrman_netaddr_class(&six), ADDRMAN_NET_IPV4);
	struct addrman_service docs = ip("2001:db8::1", 0);
	assert_false(addrman_netaddr_valid(&docs));

	/* Tor v3 and I2P names (Core's netbase_tests addresses): the onion's
	 * checksum is SHA3-256 of ".onion checksum", the key and the version. */
	char buf[128];
	struct addrman_service named;
	size_t klen;
	uint8_t *key =
	    tu_unhex("79bcc625184b05194975c28b66b66b0469f7f6556fb1ac3189a79b40dda32f1f", &klen);
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV3, key, klen, 8333, &named),
	                 0);
	addrman_service_str(&named, buf, sizeof(buf));
	assert_string_equal(buf,
	                    "pg6mmjiyjmcrsslvykfwnntlaru7p5svn6y2ymmju6nubxndf4pscryd.onion:8333");
	free(key);
	key = tu_unhex("a0ce38ce2224d2cecaf9929388f73379259c0c27e0debdbd7ca4cd085b55e25a", &klen);
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_I2P, key, klen, 0, &named), 0);
	addrman_service_str(&named, buf, sizeof(buf));
	assert_string_equal(buf, "udhdrtrcetjm5sxzskjyr5ztpeszydbh4dpl3pl4utgqqw2v4jna.b32.i2p:0");
	free(key);
	struct addrman_service p = ip("2001:db8::1", 8333);
	addrman_service_str(&p, buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::1]:8333");
	p = ip("1.2.3.4", 18444);
	addrman_service_str(&p, buf, sizeof(buf));
	assert_string_equal(buf, "1.2.3.4:18444");
}

/* ---- serialization ------------------------------------------------------------- */

struct dump {
	char text[1 << 16];
	size_t n;
};

static void dump_entry(void *ctx, const struct addrman_entry *e)
{
	struct dump *d = ctx;
	char a[128], s[128];
	addrman_service_str(&e->addr.svc, a, sizeof(a));
	addrman_service_str(&e->source, s, sizeof(s));
	d->n += (size_t)snprintf(d->text + d->n, sizeof(d->text) - d->n,
	                         "%d/%d %s t=%lld s=%llx src=%s ok=%lld n=%d m=%d\n", e->bucket,
	                         e->position, a, (long long)e->addr.time,
	                         (unsigned long long)e->addr.services, s,
	                         (long long)e->last_success, e->attempts, e->multiplicity);
}

/* Both tables as text, in bucket order. */
static void dump_tables(struct addrman *am, struct dump *d)
{
	d->n = 0;
	d->text[0] = 0;
	addrman_entries(am, false, dump_entry, d);
	d->n += (size_t)snprintf(d->text + d->n, sizeof(d->text) - d->n, "--tried--\n");
	addrman_entries(am, true, dump_entry, d);
}

/* An addrman of many groups and networks, some tried. */
static struct addrman *filled(void)
{
	struct addrman *am = addrman_new(true, 0);
	for (unsigned i = 1; i < 300; i++) {
		struct addrman_address a = {
		    .svc =
		        addrman_service_ipv4((uint8_t)(1 + i % 200), (uint8_t)(i * 7), 3, 4, 8333),
		    .time = NOW - (int64_t)i * 100,
		    .services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS};
		struct addrman_service src = addrman_service_ipv4((uint8_t)(5 + i % 3), 1, 1, 1, 0);
		assert_int_equal(addrman_add(am, &a, 1, &src, 0, NOW, NULL), 0);
		if (i % 5 == 0)
			(void)addrman_good(am, &a.svc, NOW);
		if (i % 7 == 0)
			addrman_attempt(am, &a.svc, true, NOW - 100);
	}
	struct addrman_address v6 = {.svc = ip("2001:4860::8888", 8333), .time = NOW};
	struct addrman_service src6 = ip("2a00:1450::1", 0);
	assert_int_equal(addrman_add(am, &v6, 1, &src6, 0, NOW, NULL), 0);
	uint8_t k[32];
	memset(k, 0x3c, sizeof(k));
	struct addrman_address tor = {.time = NOW, .services = PROTO_NODE_NETWORK};
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV3, k, 32, 9050, &tor.svc), 0);
	assert_int_equal(addrman_add(am, &tor, 1, &src6, 0, NOW, NULL), 0);
	(void)addrman_good(am, &tor.svc, NOW);
	return am;
}

static void test_serialize_round_trip(void **state)
{
	(void)state;
	struct addrman *am = filled();
	assert_int_equal(addrman_check(am), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(addrman_serialize(am, &buf, &len), 0);
	/* format 4, lowest compatible 4 (+32), key 1 */
	assert_int_equal(buf[0], 4);
	assert_int_equal(buf[1], 36);
	assert_int_equal(buf[2], 1);
	assert_int_equal(buf[3], 0);

	struct addrman *back = addrman_new(true, 0);
	size_t used = 0;
	char err[ADDRMAN_ERRMSG_MAX];
	assert_int_equal(addrman_deserialize(back, buf, len, &used, err, sizeof(err)), 0);
	assert_int_equal(used, len);
	assert_int_equal(addrman_size(back, -1, -1), addrman_size(am, -1, -1));
	assert_int_equal(addrman_size(back, -1, 0), addrman_size(am, -1, 0));
	assert_true(addrman_size(am, -1, 0) > 50);
	assert_int_equal(addrman_size(back, ADDRMAN_NET_ONION, 0), 1);
	assert_int_equal(addrman_size(back, ADDRMAN_NET_IPV6, 1), 1);
	static struct dump d1, d2;
	dump_tables(am, &d1);
	dump_tables(back, &d2);
	assert_string_equal(d1.text, d2.text);
	/* and the bytes again */
	uint8_t *buf2 = NULL;
	size_t len2 = 0;
	assert_int_equal(addrman_serialize(back, &buf2, &len2), 0);
	tu_assert_bytes_equal(buf, len, buf2, len2);
	xfree(buf);
	xfree(buf2);
	addrman_free(am);
	addrman_free(back);
}

/* An empty addrman: Core's 4,174-byte file of empty buckets, and back. */
static void test_serialize_empty(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(addrman_serialize(am, &buf, &len), 0);
	/* 2 format bytes, key, 3 counts, 1,024 empty bucket counts, asmap checksum */
	assert_int_equal(len, 2 + 32 + 12 + 4 * 1024 + 32);
	struct addrman *back = addrman_new(false, 0);
	assert_int_equal(addrman_deserialize(back, buf, len, NULL, NULL, 0), 0);
	assert_int_equal(addrman_size(back, -1, -1), 0);
	xfree(buf);
	addrman_free(am);
	addrman_free(back);
}

/* Core remove_invalid: invalid addresses are dropped on load. */
static void test_serialize_remove_invalid(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, 0);
	struct addrman_address v[4] = {{.svc = ip("5.5.5.5", 0)},
	                               {.svc = ip("7.7.7.7", 0)},
	                               {.svc = ip("6.6.6.6", 0)},
	                               {.svc = ip("8.8.8.8", 0)}};
	struct addrman_service src = ip("::", 0);
	assert_int_equal(addrman_add(am, v, 4, &src, 0, NOW, NULL), 0);
	assert_true(addrman_good(am, &v[1].svc, NOW));
	assert_true(addrman_good(am, &v[3].svc, NOW));
	assert_int_equal(addrman_size(am, -1, -1), 4);
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(addrman_serialize(am, &buf, &len), 0);
	uint8_t *p = memmem(buf, len, "\x06\x06\x06\x06", 4);
	assert_non_null(p);
	memset(p, 0, 4); /* 0.0.0.0 is not valid */
	p = memmem(buf, len, "\x08\x08\x08\x08", 4);
	assert_non_null(p);
	memset(p, 0xff, 4); /* nor is 255.255.255.255 */
	struct addrman *back = addrman_new(true, 0);
	assert_int_equal(addrman_deserialize(back, buf, len, NULL, NULL, 0), 0);
	assert_int_equal(addrman_size(back, -1, -1), 2);
	xfree(buf);
	addrman_free(am);
	addrman_free(back);
}

/* Core load_addrman_corrupted: a file claiming 10 new and 10 tried with one entry. */
static void test_serialize_corrupt(void **state)
{
	(void)state;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_write_u8(&w, 1);
	proto_write_u8(&w, 32);
	uint8_t one[32] = {1};
	proto_write_bytes(&w, one, 32);
	proto_write_u32le(&w, 10);
	proto_write_u32le(&w, 10);
	proto_write_u32le(&w, 1024 ^ (1u << 30));
	/* one v1 disk entry: version, time, services, ip, port, source, last success, attempts */
	proto_write_u32le(&w, 220000);
	proto_write_u32le(&w, 100000000);
	proto_write_u64le(&w, 0);
	static const uint8_t a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 252, 1, 1, 1};
	static const uint8_t s[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 252, 2, 2, 2};
	proto_write_bytes(&w, a, 16);
	proto_write_u16be(&w, 7777);
	proto_write_bytes(&w, s, 16);
	proto_write_u64le(&w, 0);
	proto_write_u32le(&w, 0);
	assert_int_equal(w.err, 0);
	struct addrman *am = addrman_new(false, 0);
	char err[ADDRMAN_ERRMSG_MAX];
	assert_int_equal(addrman_deserialize(am, w.buf, w.len, NULL, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "AutoFile::read: end of file: iostream error");
	addrman_free(am);

	/* the compat byte below 32, and nNew out of range: Core's texts */
	w.buf[1] = 0;
	am = addrman_new(false, 0);
	assert_int_equal(addrman_deserialize(am, w.buf, w.len, NULL, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "Corrupted addrman database: The compat value (0) is lower than "
	                         "the expected minimum value 32.: iostream error");
	addrman_free(am);
	w.buf[1] = 32;
	memset(w.buf + 34, 0xff, 4); /* nNew = -1 */
	am = addrman_new(false, 0);
	assert_int_equal(addrman_deserialize(am, w.buf, w.len, NULL, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "Corrupt AddrMan serialization: nNew=-1, should be in [0, 65536]: "
	                         "iostream error");
	addrman_free(am);
	/* a newer format that says it is incompatible: to be renamed, not an error to stop on */
	w.buf[0] = 5;
	w.buf[1] = 32 + 5;
	am = addrman_new(false, 0);
	assert_int_equal(addrman_deserialize(am, w.buf, w.len, NULL, err, sizeof(err)),
	                 ADDRMAN_EVERSION);
	addrman_free(am);
	proto_writer_release(&w);
}

/* ---- the file ---------------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
	return tu_read_file(path, len);
}

static void spit(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_file(void **state)
{
	(void)state;
	char dir[TU_TMPDIR_MAX], path[256];
	tu_tmpdir(dir, "addrman");
	snprintf(path, sizeof(path), "%s/peers.dat", dir);
	char err[ADDRMAN_ERRMSG_MAX];

	struct addrman *none = addrman_new(true, 0);
	assert_int_equal(addrman_read_file(none, path, MAGIC_REGTEST, err, sizeof(err)),
	                 ADDRMAN_ENOENT);
	addrman_free(none);

	struct addrman *am = filled();
	assert_int_equal(addrman_write_file(am, path, MAGIC_REGTEST), 0);
	size_t len;
	uint8_t *b = slurp(path, &len);
	/* regtest's message start, then format 4 */
	assert_int_equal(b[0], 0xfa);
	assert_int_equal(b[3], 0xda);
	assert_int_equal(b[4], 4);
	uint8_t sum[32];
	proto_sha256d(b, len - 32, sum);
	tu_assert_bytes_equal(sum, 32, b + len - 32, 32);

	struct addrman *back = addrman_new(false, 0);
	assert_int_equal(addrman_read_file(back, path, MAGIC_REGTEST, err, sizeof(err)), 0);
	static struct dump d1, d2;
	dump_tables(am, &d1);
	dump_tables(back, &d2);
	assert_string_equal(d1.text, d2.text);
	addrman_free(back);

	/* another network's file */
	back = addrman_new(false, 0);
	assert_int_equal(addrman_read_file(back, path, 0xd9b4bef9u, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "Invalid network magic number");
	addrman_free(back);

	/* one flipped bit in an entry's attempts: the checksum */
	uint8_t *c = malloc(len);
	memcpy(c, b, len);
	c[len - 32 - 32 - 4 * 1024 - 4] ^= 0x01; /* somewhere in the entries */
	spit(path, c, len);
	back = addrman_new(false, 0);
	int r = addrman_read_file(back, path, MAGIC_REGTEST, err, sizeof(err));
	assert_int_equal(r, ADDRMAN_ECORRUPT);
	addrman_free(back);
	/* a flipped bit in the checksum itself is surely only the checksum */
	memcpy(c, b, len);
	c[len - 1] ^= 0x80;
	spit(path, c, len);
	back = addrman_new(false, 0);
	assert_int_equal(addrman_read_file(back, path, MAGIC_REGTEST, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "Checksum mismatch, data corrupted");
	addrman_free(back);
	/* cut short */
	spit(path, b, len - 10);
	back = addrman_new(false, 0);
	assert_int_equal(addrman_read_file(back, path, MAGIC_REGTEST, err, sizeof(err)),
	                 ADDRMAN_ECORRUPT);
	assert_string_equal(err, "AutoFile::read: end of file: iostream error");
	addrman_free(back);
	char msg[1024];
	addrman_corrupt_message(msg, sizeof(msg), err, path, "https://example.org/issues");
	assert_non_null(strstr(msg, "Invalid or corrupt peers.dat (AutoFile::read: end of file: "
	                            "iostream error). If you believe this is a bug, please report "
	                            "it to https://example.org/issues. As a workaround, you can "
	                            "move the file (\""));
	/* no temporary file is left beside it */
	assert_int_equal(addrman_write_file(am, path, MAGIC_REGTEST), 0);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0);
	free(c);
	free(b);
	addrman_free(am);
	tu_rmtree(dir);
}

/* Out of memory anywhere: a documented error, and the addrman stays
 * consistent (Core's CheckAddrman) and usable; no leak under ASan. */
static void test_out_of_memory(void **state)
{
	(void)state;
	bool injected = true;
	for (long k = 0; injected && k < 10000; k++) {
		struct addrman *am = addrman_new(true, 0);
		struct addrman *back = addrman_new(true, 0);
		assert_non_null(am);
		assert_non_null(back);
		base_alloc_fail_after(k);
		int err = 0;
		for (unsigned i = 1; i < 200 && !err; i++) {
			struct addrman_address a = {
			    .svc =
			        addrman_service_ipv4((uint8_t)(1 + i % 90), (uint8_t)i, 1, 1, 8333),
			    .time = NOW};
			struct addrman_service src = addrman_service_ipv4(5, (uint8_t)i, 1, 1, 0);
			err = addrman_add(am, &a, 1, &src, 0, NOW, NULL);
			if (!err && i % 3 == 0)
				(void)addrman_good(am, &a.svc, NOW);
		}
		uint8_t *buf = NULL;
		size_t len = 0;
		if (!err)
			err = addrman_serialize(am, &buf, &len);
		if (!err)
			err = addrman_deserialize(back, buf, len, NULL, NULL, 0);
		struct addrman_address *v = NULL;
		if (!err) {
			long n = addrman_getaddr(am, 0, 0, -1, true, NOW, &v);
			err = n < 0 ? (int)n : 0;
		}
		injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (err)
			assert_int_equal(err, ADDRMAN_ENOMEM);
		assert_true(injected || err == 0);
		int code = addrman_check(am);
		if (code)
			fail_msg("after a failed allocation at %ld: check code %d", k, code);
		/* still usable */
		struct addrman_address more = {.svc = addrman_service_ipv4(99, 1, 2, 3, 8333),
		                               .time = NOW};
		struct addrman_service src = addrman_service_ipv4(98, 1, 1, 1, 0);
		assert_int_equal(addrman_add(am, &more, 1, &src, 0, NOW, NULL), 0);
		assert_int_equal(addrman_check(am), 0);
		xfree(v);
		xfree(buf);
		addrman_free(am);
		addrman_free(back);
	}
	assert_false(injected);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rng_chacha20_vectors),
	    cmocka_unit_test(test_rng_bits),
	    cmocka_unit_test(test_netgroup),
	    cmocka_unit_test(test_loopback_routable),
	    cmocka_unit_test(test_serialize_round_trip),
	    cmocka_unit_test(test_serialize_empty),
	    cmocka_unit_test(test_serialize_remove_invalid),
	    cmocka_unit_test(test_serialize_corrupt),
	    cmocka_unit_test(test_file),
	    cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
