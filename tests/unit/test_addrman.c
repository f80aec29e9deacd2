/*
 * tests/unit/test_addrman.c: addrman/'s tables after Core 29's
 * src/test/addrman_tests.cpp: buckets of known addresses under a known
 * key, the collisions Core's deterministic key gives (the "magic numbers"
 * of Core's tests), Add/Good/Attempt/Select/GetAddr, and the tried-table
 * collision resolution. Core's tests run with -checkaddrman=100, which
 * draws from the random stream on every call; so do these (CHECK_RATIO).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "addrman/addrman.h"
#include "addrman/internal.h"
#include "base/alloc.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

#define CHECK_RATIO 100
/* Core's mock "now" in these tests is the wall clock; any recent time works. */
#define NOW INT64_C(1700000000)
/* CAddress's default nTime (Core TIME_INIT): 1973, so terrible. */
#define TIME_INIT INT64_C(100000000)

/* "a.b.c.d" and a port, as Core's ResolveService. */
static struct addrman_service svc4(const char *ip, uint16_t port)
{
	unsigned a, b, c, d;
	if (sscanf(ip, "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
		fail_msg("bad test address %s", ip);
	return addrman_service_ipv4((uint8_t)a, (uint8_t)b, (uint8_t)c, (uint8_t)d, port);
}

static struct addrman_service svcf(uint16_t port, const char *fmt, unsigned x)
{
	char ip[32];
	snprintf(ip, sizeof(ip), fmt, x);
	return svc4(ip, port);
}

static struct addrman_address address(struct addrman_service s, int64_t time)
{
	struct addrman_address a = {.svc = s, .time = time, .services = 0};
	return a;
}

/* Add one address; returns whether it was placed (Core's Add result). */
static bool add1(struct addrman *am, struct addrman_service s, int64_t time,
                 struct addrman_service src)
{
	struct addrman_address a = address(s, time);
	size_t added = 0;
	assert_int_equal(addrman_add(am, &a, 1, &src, 0, NOW, &added), 0);
	return added > 0;
}

static void assert_svc(const struct addrman_service *got, const char *want)
{
	char buf[128];
	addrman_service_str(got, buf, sizeof(buf));
	if (strcmp(buf, want) != 0)
		fail_msg("address %s, expected %s", buf, want);
}

static void assert_consistent(struct addrman *am)
{
	int code = addrman_check(am);
	if (code)
		fail_msg("addrman consistency check failed with code %d", code);
}

/* Core's nKey1/nKey2 of the bucket tests: (HashWriter{} << int).GetHash(). */
static void set_key_of_int(struct addrman *am, uint32_t v)
{
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	proto_sha256d(le, sizeof(le), am->key);
}

static void test_addrman_buckets(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, 0);
	set_key_of_int(am, 1);
	struct addrman_service a1 = svc4("250.1.1.1", 8333), a2 = svc4("250.1.1.1", 9999);
	struct addrman_service src = svc4("250.1.1.1", 0);
	/* Core caddrinfo_get_tried_bucket_legacy */
	assert_int_equal(addrman_tried_bucket(am, &a1), 40);
	assert_int_not_equal(addrman_tried_bucket(am, &a1), addrman_tried_bucket(am, &a2));
	bool seen[ADDRMAN_TRIED_BUCKET_COUNT] = {false};
	int distinct = 0;
	for (unsigned i = 0; i < 255; i++) {
		struct addrman_service s = svcf(0, "250.1.1.%u", i);
		int b = addrman_tried_bucket(am, &s);
		distinct += !seen[b];
		seen[b] = true;
	}
	assert_int_equal(distinct, 8); /* one /16: at most 8 tried buckets */
	memset(seen, 0, sizeof(seen));
	distinct = 0;
	for (unsigned j = 0; j < 255; j++) {
		struct addrman_service s = svcf(0, "250.%u.1.1", j);
		int b = addrman_tried_bucket(am, &s);
		distinct += !seen[b];
		seen[b] = true;
	}
	assert_int_equal(distinct, 160);

	/* Core caddrinfo_get_new_bucket_legacy */
	struct addrman_service n1 = svc4("250.1.2.1", 8333), n2 = svc4("250.1.2.1", 9999);
	struct addrman_service nsrc = svc4("250.1.2.1", 0);
	assert_int_equal(addrman_new_bucket(am, &n1, &nsrc), 786);
	assert_int_equal(addrman_new_bucket(am, &n2, &nsrc), 786); /* ports do not matter */
	bool nseen[ADDRMAN_NEW_BUCKET_COUNT] = {false};
	distinct = 0;
	struct addrman_service s4 = svc4("251.4.1.1", 0);
	for (unsigned j = 0; j < 4 * 255; j++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "%u.%u.1.1", 250 + j / 255, j % 256);
		struct addrman_service s = svc4(ip, 0);
		int b = addrman_new_bucket(am, &s, &s4);
		distinct += !nseen[b];
		nseen[b] = true;
	}
	assert_true(distinct <= 64); /* one source group: at most 64 new buckets */
	memset(nseen, 0, sizeof(nseen));
	distinct = 0;
	struct addrman_service one = svc4("250.1.1.1", 0);
	for (unsigned p = 0; p < 255; p++) {
		struct addrman_service s = svcf(0, "250.%u.1.1", p);
		int b = addrman_new_bucket(am, &one, &s);
		distinct += !nseen[b];
		nseen[b] = true;
	}
	assert_true(distinct > 64);

	/* Another key, other buckets (Core's nKey2). */
	int tried1 = addrman_tried_bucket(am, &a1), new1 = addrman_new_bucket(am, &n1, &nsrc);
	set_key_of_int(am, 2);
	assert_int_not_equal(addrman_tried_bucket(am, &a1), tried1);
	assert_int_not_equal(addrman_new_bucket(am, &n1, &nsrc), new1);
	(void)src;
	addrman_free(am);
}

static void test_addrman_simple(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address out;
	assert_int_equal(addrman_size(am, -1, -1), 0);
	assert_false(addrman_select(am, false, 0, NOW, &out, NULL));
	assert_true(add1(am, svc4("250.1.1.1", 8333), TIME_INIT, src));
	assert_int_equal(addrman_size(am, -1, -1), 1);
	assert_true(addrman_select(am, false, 0, NOW, &out, NULL));
	assert_svc(&out.svc, "250.1.1.1:8333");
	/* the same service again is not added */
	assert_false(add1(am, svc4("250.1.1.1", 8333), TIME_INIT, src));
	assert_int_equal(addrman_size(am, -1, -1), 1);
	/* unroutable addresses are never added */
	assert_false(add1(am, svc4("10.1.1.1", 8333), NOW, src));
	assert_false(add1(am, svc4("127.0.0.1", 8333), NOW, src));
	assert_false(add1(am, svc4("192.168.1.1", 8333), NOW, src));
	assert_int_equal(addrman_size(am, -1, -1), 1);
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_ports: two ports of one IP are two entries. */
static void test_addrman_ports(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address out;
	assert_true(add1(am, svc4("250.1.1.1", 8333), TIME_INIT, src));
	assert_true(add1(am, svc4("250.1.1.1", 8334), TIME_INIT, src));
	assert_int_equal(addrman_size(am, -1, -1), 2);
	struct addrman_service p2 = svc4("250.1.1.1", 8334);
	assert_true(addrman_good(am, &p2, NOW));
	assert_int_equal(addrman_size(am, -1, -1), 2);
	assert_int_equal(addrman_size(am, -1, 1), 1);
	assert_int_equal(addrman_size(am, -1, 0), 1);
	assert_true(addrman_select(am, true, 0, NOW, &out, NULL));
	assert_svc(&out.svc, "250.1.1.1:8333");
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_select and addrman_select_by_network. */
static void test_addrman_select(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address out;
	struct addrman_service a1 = svc4("250.1.1.1", 8333);
	assert_true(add1(am, a1, TIME_INIT, src));
	assert_true(addrman_select(am, true, 0, NOW, &out, NULL));
	assert_true(addrman_service_eq(&out.svc, &a1));
	uint32_t v4 = 1u << ADDRMAN_NET_IPV4, v6 = 1u << ADDRMAN_NET_IPV6;
	assert_true(addrman_select(am, false, v4, NOW, &out, NULL));
	assert_false(addrman_select(am, false, v6, NOW, &out, NULL));
	assert_false(addrman_select(am, true, 1u << ADDRMAN_NET_CJDNS, NOW, &out, NULL));
	assert_true(addrman_good(am, &a1, NOW));
	assert_false(addrman_select(am, true, 0, NOW, &out, NULL));
	assert_true(addrman_select(am, false, 0, NOW, &out, NULL));
	assert_true(addrman_service_eq(&out.svc, &a1));

	struct addrman_service a2 = svc4("250.3.1.1", 8333);
	assert_true(add1(am, a2, TIME_INIT, a2));
	assert_true(addrman_select(am, true, 0, NOW, &out, NULL));
	assert_true(addrman_service_eq(&out.svc, &a2));
	struct addrman_service a3 = svc4("250.3.2.2", 9999), a4 = svc4("250.3.3.3", 9999);
	assert_true(add1(am, a3, TIME_INIT, a2));
	assert_true(add1(am, a4, TIME_INIT, svc4("250.4.1.1", 8333)));
	struct addrman_service a5 = svc4("250.4.4.4", 8333), a6 = svc4("250.4.5.5", 7777),
	                       a7 = svc4("250.4.6.6", 8333);
	assert_true(add1(am, a5, TIME_INIT, a3));
	assert_true(addrman_good(am, &a5, NOW));
	assert_true(add1(am, a6, TIME_INIT, a3));
	assert_true(addrman_good(am, &a6, NOW));
	assert_true(add1(am, a7, TIME_INIT, svc4("250.1.1.3", 8333)));
	assert_true(addrman_good(am, &a7, NOW));
	assert_int_equal(addrman_size(am, -1, -1), 7);
	/* Select draws from new and tried, whatever the port */
	bool ports[65536] = {false};
	int n_ports = 0;
	for (int i = 0; i < 20; i++) {
		assert_true(addrman_select(am, false, 0, NOW, &out, NULL));
		n_ports += !ports[out.svc.port];
		ports[out.svc.port] = true;
	}
	assert_int_equal(n_ports, 3);
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_new_collisions: 250.1.1.1-22 fit under key 1, 23 collides. */
static void test_addrman_new_collisions(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	unsigned n = 0;
	while (n < 22) {
		n++;
		assert_true(add1(am, svcf(0, "250.1.1.%u", n), TIME_INIT, src));
		assert_int_equal(addrman_size(am, -1, -1), n);
	}
	n++;
	assert_true(add1(am, svcf(0, "250.1.1.%u", n), TIME_INIT, src));
	assert_int_equal(addrman_size(am, -1, -1), n - 1);
	n++;
	assert_true(add1(am, svcf(0, "250.1.1.%u", n), TIME_INIT, src));
	assert_int_equal(addrman_size(am, -1, -1), n - 1);
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_new_multiplicity: up to 8 new buckets, reached through the
 * stochastic test with Core's deterministic stream in 399 tries. */
static void test_addrman_multiplicity(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service s = svc4("253.3.3.3", 8333);
	struct addrman_entry e;
	for (unsigned i = 1; i < 20; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "%u.%u.1.1", i % 256, i >> 8 % 256);
		(void)add1(am, s, NOW, svc4(ip, 0));
	}
	assert_true(addrman_find(am, &s, &e));
	assert_int_equal(e.multiplicity, 1);
	for (unsigned i = 1; i < 400; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "%u.%u.1.1", i % 256, i >> 8 % 256);
		(void)add1(am, s, NOW + i, svc4(ip, 0));
	}
	assert_true(addrman_find(am, &s, &e));
	assert_int_equal(e.multiplicity, 8);
	assert_int_equal(addrman_size(am, -1, -1), 1);
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_tried_collisions: 250.1.1.1-35 fit in tried, 36 collides. */
static void test_addrman_tried_collisions(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	unsigned n = 0;
	while (n < 35) {
		n++;
		struct addrman_service s = svcf(0, "250.1.1.%u", n);
		assert_true(add1(am, s, TIME_INIT, src));
		assert_true(addrman_good(am, &s, NOW));
	}
	struct addrman_service s36 = svcf(0, "250.1.1.%u", ++n);
	assert_true(add1(am, s36, TIME_INIT, src));
	assert_false(addrman_good(am, &s36, NOW));
	struct addrman_service s37 = svcf(0, "250.1.1.%u", ++n);
	assert_true(add1(am, s37, TIME_INIT, src));
	assert_true(addrman_good(am, &s37, NOW));
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_getaddr: 23% of what is there; 2,006 of 2,052 addresses
 * survive the collisions under key 1. */
static void test_addrman_getaddr(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_address *v;
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 0);
	struct addrman_address a[5] = {
	    address(svc4("250.250.2.1", 8333), NOW), address(svc4("250.251.2.2", 9999), NOW),
	    address(svc4("251.252.2.3", 8333), NOW), address(svc4("252.253.3.4", 8333), NOW),
	    address(svc4("252.254.4.5", 8333), NOW)};
	struct addrman_address g1[3] = {a[0], a[2], a[4]}, g2[2] = {a[1], a[3]};
	struct addrman_service s1 = svc4("250.1.2.1", 0), s2 = svc4("250.2.3.3", 0);
	assert_int_equal(addrman_add(am, g1, 3, &s1, 0, NOW, NULL), 0);
	assert_int_equal(addrman_add(am, g2, 2, &s2, 0, NOW, NULL), 0);
	long n = addrman_getaddr(am, 0, 0, -1, true, NOW, &v);
	assert_int_equal(n, 5);
	xfree(v);
	n = addrman_getaddr(am, 2500, 23, -1, true, NOW, &v);
	assert_int_equal(n, 1);
	xfree(v);
	assert_true(addrman_good(am, &a[0].svc, NOW));
	assert_true(addrman_good(am, &a[1].svc, NOW));
	n = addrman_getaddr(am, 0, 0, -1, true, NOW, &v);
	assert_int_equal(n, 5);
	xfree(v);
	for (unsigned i = 1; i < 8 * 256; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "%u.%u.1.23", i % 256, i >> 8 % 256);
		struct addrman_service s = svc4(ip, 0), src = svc4(ip, 0);
		(void)add1(am, s, NOW, src);
		if (i % 8 == 0)
			(void)addrman_good(am, &s, NOW);
	}
	n = addrman_getaddr(am, 2500, 23, -1, true, NOW, &v);
	assert_int_equal(addrman_size(am, -1, -1), 2006);
	assert_int_equal(n, 461);
	xfree(v);
	/* by class: none of them is IPv6 */
	assert_int_equal(addrman_getaddr(am, 0, 0, ADDRMAN_NET_IPV6, true, NOW, &v), 0);
	assert_consistent(am);
	addrman_free(am);
}

/* Core getaddr_unfiltered: terrible entries are left out unless asked for. */
static void test_addrman_getaddr_unfiltered(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_address a[2] = {address(svc4("250.250.2.1", 8333), NOW),
	                               address(svc4("250.251.2.2", 9999), TIME_INIT)};
	struct addrman_service src = svc4("250.1.2.1", 0);
	assert_int_equal(addrman_add(am, a, 2, &src, 0, NOW, NULL), 0);
	struct addrman_service s3 = svc4("250.251.2.3", 9998);
	(void)addrman_good(am, &s3, NOW); /* unknown yet: nothing */
	assert_true(add1(am, s3, NOW, src));
	for (int i = 0; i < 3; i++)
		addrman_attempt(am, &s3, true, NOW - 61);
	struct addrman_address *v;
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 1);
	xfree(v);
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, false, NOW, &v), 3);
	xfree(v);
	addrman_free(am);
}

/* Core addrman_noevict and addrman_selecttriedcollision. */
static void test_addrman_noevict(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address out;
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	for (unsigned i = 1; i < 36; i++) {
		struct addrman_service s = svcf(0, "250.1.1.%u", i);
		assert_true(add1(am, s, TIME_INIT, src));
		assert_true(addrman_good(am, &s, NOW));
		assert_false(addrman_select_tried_collision(am, &out, NULL));
	}
	/* duplicates are not collisions */
	for (unsigned i = 1; i < 23; i++) {
		struct addrman_service s = svcf(0, "250.1.1.%u", i);
		assert_false(addrman_good(am, &s, NOW));
		assert_false(addrman_select_tried_collision(am, &out, NULL));
	}
	struct addrman_service s36 = svc4("250.1.1.36", 0);
	assert_true(add1(am, s36, TIME_INIT, src));
	assert_false(addrman_good(am, &s36, NOW));
	assert_true(addrman_select_tried_collision(am, &out, NULL));
	assert_svc(&out.svc, "250.1.1.19:0");
	/* 19 connected just now: 36 stays in new */
	addrman_resolve_collisions(am, NOW);
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	for (unsigned i = 37; i < 59; i++) {
		struct addrman_service s = svcf(0, "250.1.1.%u", i);
		assert_true(add1(am, s, TIME_INIT, src));
		assert_true(addrman_good(am, &s, NOW));
	}
	struct addrman_service s59 = svc4("250.1.1.59", 0);
	assert_true(add1(am, s59, TIME_INIT, src));
	assert_false(addrman_good(am, &s59, NOW));
	assert_true(addrman_select_tried_collision(am, &out, NULL));
	assert_svc(&out.svc, "250.1.1.10:0");
	assert_false(add1(am, s36, TIME_INIT, src));
	assert_false(addrman_good(am, &s36, NOW));
	assert_true(addrman_select_tried_collision(am, &out, NULL));
	addrman_resolve_collisions(am, NOW);
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_evictionworks: a tried entry that fails its test is replaced. */
static void test_addrman_eviction(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address out;
	struct addrman_entry e;
	for (unsigned i = 1; i < 36; i++) {
		struct addrman_service s = svcf(0, "250.1.1.%u", i);
		assert_true(add1(am, s, TIME_INIT, src));
		assert_true(addrman_good(am, &s, NOW));
	}
	struct addrman_service s36 = svc4("250.1.1.36", 0), s19 = svc4("250.1.1.19", 0);
	assert_true(add1(am, s36, TIME_INIT, src));
	assert_false(addrman_good(am, &s36, NOW));
	assert_true(addrman_select_tried_collision(am, &out, NULL));
	assert_svc(&out.svc, "250.1.1.19:0");
	/* 19's last success in the deep past, and a failed try 61 s ago */
	assert_false(addrman_good(am, &out.svc, 1));
	addrman_attempt(am, &out.svc, false, NOW - 61);
	addrman_resolve_collisions(am, NOW);
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	assert_true(addrman_find(am, &s36, &e));
	assert_true(e.tried);
	assert_false(addrman_good(am, &s36, NOW)); /* a duplicate now */
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	assert_false(addrman_good(am, &s19, NOW)); /* 19 collides with 36 */
	assert_true(addrman_select_tried_collision(am, &out, NULL));
	assert_svc(&out.svc, "250.1.1.36:0");
	/* four hours on, the untested collision evicts anyway */
	addrman_resolve_collisions(am, NOW + 4 * 3600);
	assert_false(addrman_select_tried_collision(am, &out, NULL));
	assert_true(addrman_find(am, &s19, &e));
	assert_true(e.tried);
	assert_true(addrman_find(am, &s36, &e));
	assert_false(e.tried);
	assert_consistent(am);
	addrman_free(am);
}

/* Core addrman_update_address: Connected, SetServices and Add's services. */
static void test_addrman_update(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, CHECK_RATIO);
	struct addrman_service src = svc4("252.2.2.2", 0);
	int64_t start = NOW - 10000;
	struct addrman_service s = svc4("250.1.1.1", 8333), other = svc4("250.1.1.1", 8334);
	assert_true(add1(am, s, start, src));
	addrman_connected(am, &other, NOW);
	addrman_set_services(am, &other, PROTO_NODE_NETWORK_LIMITED);
	struct addrman_address *v;
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 1);
	assert_int_equal(v[0].time, start);
	assert_int_equal(v[0].services, 0);
	xfree(v);
	addrman_connected(am, &s, NOW);
	addrman_set_services(am, &s, PROTO_NODE_NETWORK_LIMITED);
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 1);
	assert_true(v[0].time >= start + 10000);
	assert_int_equal(v[0].services, PROTO_NODE_NETWORK_LIMITED);
	xfree(v);
	struct addrman_address v2 = {.svc = s, .time = start, .services = PROTO_NODE_P2P_V2};
	size_t added = 1;
	assert_int_equal(addrman_add(am, &v2, 1, &src, 0, NOW, &added), 0);
	assert_int_equal(added, 0);
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 1);
	assert_int_equal(v[0].services, PROTO_NODE_P2P_V2 | PROTO_NODE_NETWORK_LIMITED);
	xfree(v);
	addrman_set_services(am, &s, PROTO_NODE_NETWORK);
	assert_true(addrman_good(am, &s, NOW));
	assert_int_equal(addrman_add(am, &v2, 1, &src, 0, NOW, &added), 0);
	assert_int_equal(addrman_getaddr(am, 0, 0, -1, true, NOW, &v), 1);
	assert_int_equal(v[0].services, PROTO_NODE_NETWORK | PROTO_NODE_P2P_V2);
	xfree(v);
	addrman_free(am);
}

/* The time penalty, and none for an address's own announcement. */
static void test_addrman_time_penalty(void **state)
{
	(void)state;
	struct addrman *am = addrman_new(true, 0);
	struct addrman_service src = svc4("252.2.2.2", 0);
	struct addrman_address a = address(svc4("250.1.1.1", 8333), NOW);
	assert_int_equal(addrman_add(am, &a, 1, &src, 7200, NOW, NULL), 0);
	struct addrman_address b = address(svc4("251.1.1.1", 8333), NOW);
	struct addrman_service self = svc4("251.1.1.1", 0);
	assert_int_equal(addrman_add(am, &b, 1, &self, 7200, NOW, NULL), 0);
	struct addrman_entry e;
	assert_true(addrman_find(am, &a.svc, &e));
	assert_int_equal(e.addr.time, NOW - 7200);
	assert_true(addrman_find(am, &b.svc, &e));
	assert_int_equal(e.addr.time, NOW);
	addrman_free(am);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_addrman_buckets),
	    cmocka_unit_test(test_addrman_simple),
	    cmocka_unit_test(test_addrman_ports),
	    cmocka_unit_test(test_addrman_select),
	    cmocka_unit_test(test_addrman_new_collisions),
	    cmocka_unit_test(test_addrman_multiplicity),
	    cmocka_unit_test(test_addrman_tried_collisions),
	    cmocka_unit_test(test_addrman_getaddr),
	    cmocka_unit_test(test_addrman_getaddr_unfiltered),
	    cmocka_unit_test(test_addrman_noevict),
	    cmocka_unit_test(test_addrman_eviction),
	    cmocka_unit_test(test_addrman_update),
	    cmocka_unit_test(test_addrman_time_penalty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
