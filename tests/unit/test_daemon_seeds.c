/*
 * tests/unit/test_daemon_seeds.c: the seeds (daemon/net/seeds.c) without a
 * network: each network's DNS seed names and fixed seeds (Core's counts
 * per network), the internal address a seed's answers come from, what a
 * lookup adds to the addrman (port, services 9, a 3-7-day-old time, at most
 * 32), Core's DNS seed schedule on a fake clock (all at once with an empty
 * addrman, 3 at a time after 11 s or 5 minutes, the stop at 2 full-relay
 * outbound peers, -forcednsseed, a deactivated network, -seednode's head
 * start) and the fixed seeds' 60-second rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/net/seeds_internal.h"

#define DAY 86400

static size_t count_names(enum proto_net net)
{
	size_t n = 0;
	for (const char *const *s = seeds_dns(net); *s; s++) {
		size_t len = strlen(*s);
		if (len < 2 || (*s)[len - 1] != '.')
			fail_msg("seed name %s is not absolute (Core's end in a dot)", *s);
		n++;
	}
	return n;
}

static void test_dns_names(void **state)
{
	(void)state;
	assert_int_equal(count_names(PROTO_NET_MAIN), 9);
	assert_int_equal(count_names(PROTO_NET_TESTNET3), 5);
	assert_int_equal(count_names(PROTO_NET_TESTNET4), 2);
	assert_int_equal(count_names(PROTO_NET_SIGNET), 2);
	assert_int_equal(count_names(PROTO_NET_REGTEST), 0);
	assert_string_equal(seeds_dns(PROTO_NET_MAIN)[0], "seed.bitcoin.sipa.be.");
}

/* Core's arrays, by network (chainparamsseeds.h at 638a4c0bd8). */
static void test_fixed_seeds(void **state)
{
	(void)state;
	static const struct {
		enum proto_net net;
		uint16_t port;
		long total, ipv4, ipv6, onion, i2p, cjdns;
	} want[] = {
	    {PROTO_NET_MAIN, 8333, 2031, 512, 485, 512, 512, 10},
	    {PROTO_NET_TESTNET3, 18333, 219, 79, 39, 87, 9, 5},
	    {PROTO_NET_TESTNET4, 48333, 151, 43, 46, 51, 7, 4},
	    {PROTO_NET_SIGNET, 38333, 140, 42, 30, 57, 7, 4},
	    {PROTO_NET_REGTEST, 0, 0, 0, 0, 0, 0, 0},
	};
	const int64_t now = 1700000000;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct addrman_address *v;
		long n = seeds_fixed_decode(want[i].net, now, &v);
		if (n != want[i].total)
			fail_msg("network %d: %ld fixed seeds, Core has %ld", want[i].net, n,
			         want[i].total);
		long by[ADDRMAN_NET__COUNT] = {0};
		for (long k = 0; k < n; k++) {
			by[v[k].svc.net]++;
			assert_int_equal(v[k].services, 9);
			/* ConvertSeeds: 1 to 2 weeks old. */
			if (v[k].time > now - 7 * DAY || v[k].time <= now - 14 * DAY)
				fail_msg("seed %ld: time %lld, now %lld", k, (long long)v[k].time,
				         (long long)now);
			/* I2P's port is 0; every other seed has the network's. */
			uint16_t port = v[k].svc.net == ADDRMAN_NET_I2P ? 0 : want[i].port;
			assert_int_equal(v[k].svc.port, port);
			assert_true(addrman_netaddr_routable(&v[k].svc));
		}
		assert_int_equal(by[ADDRMAN_NET_IPV4], want[i].ipv4);
		assert_int_equal(by[ADDRMAN_NET_IPV6], want[i].ipv6);
		assert_int_equal(by[ADDRMAN_NET_ONION], want[i].onion);
		assert_int_equal(by[ADDRMAN_NET_I2P], want[i].i2p);
		assert_int_equal(by[ADDRMAN_NET_CJDNS], want[i].cjdns);
		xfree(v);
	}
}

/* Core's SetInternal: the first 10 bytes of SHA-256 of the name (the
 * expected bytes from Python's hashlib). */
static void test_internal_addr(void **state)
{
	(void)state;
	static const uint8_t fixed[10] = {0x11, 0x87, 0xed, 0x9f, 0x5d,
	                                  0x51, 0x44, 0x8d, 0x98, 0x6b};
	static const uint8_t sipa[10] = {0xfc, 0xf1, 0xd0, 0x39, 0x0b,
	                                 0x08, 0x84, 0xd0, 0xa5, 0xa0};
	struct addrman_service s = seeds_internal_addr("fixedseeds");
	assert_int_equal(s.net, ADDRMAN_NET_INTERNAL);
	assert_int_equal(s.len, 10);
	assert_memory_equal(s.addr, fixed, 10);
	s = seeds_internal_addr("x9.seed.bitcoin.sipa.be.");
	assert_memory_equal(s.addr, sipa, 10);
	assert_int_equal(addrman_netaddr_network(&s), ADDRMAN_NET_INTERNAL);
}

static void test_add_found(void **state)
{
	(void)state;
	/* Core's test key, so the same buckets every run: two of the 31
	 * addresses share a new-table slot, and the later one is not kept. */
	struct addrman *am = addrman_new(true, 0);
	assert_non_null(am);
	const int64_t now = 1700000000;
	struct addrman_service ips[40];
	for (int i = 0; i < 40; i++)
		ips[i] = addrman_service_ipv4(11, (uint8_t)i, 1, 1, 0);
	ips[1] = addrman_service_ipv4(127, 0, 0, 1, 0); /* not routable: counted, not kept */
	const char *host = "x9.seed.bitcoin.sipa.be.";
	/* Core keeps 32 of a lookup's answers at most. */
	assert_int_equal(seeds_add_found(am, host, ips, 40, 8333, now), 32);
	struct addrman_service src = seeds_internal_addr(host);
	size_t kept = 0;
	for (int i = 0; i < 40; i++) {
		struct addrman_service svc = ips[i];
		svc.port = 8333;
		struct addrman_entry e;
		bool found = addrman_find(am, &svc, &e);
		if (i == 1 || i >= 32) {
			assert_false(found);
			continue;
		}
		if (!found)
			continue;
		kept++;
		assert_int_equal(e.addr.services, 9);
		assert_int_equal(e.addr.svc.port, 8333);
		if (e.addr.time > now - 3 * DAY || e.addr.time <= now - 7 * DAY)
			fail_msg("address %d: time %lld, now %lld", i, (long long)e.addr.time,
			         (long long)now);
		assert_true(addrman_netaddr_eq(&e.source, &src));
	}
	assert_int_equal(kept, 30);
	assert_int_equal(addrman_size(am, -1, -1), kept);
	addrman_free(am);
}

/* Drive the schedule: every query answered at once with `found`. Returns
 * the action that stopped it (not a query). */
static enum seeds_action run_queries(struct seeds_sched *s, const struct seeds_view *v,
                                     uint64_t now, size_t found, size_t *queried)
{
	for (;;) {
		enum seeds_action a = seeds_sched_next(s, v, now);
		if (a != SEEDS_ACT_QUERY)
			return a;
		assert_int_equal(s->next, *queried);
		(*queried)++;
		seeds_sched_answered(s, found);
	}
}

static void test_schedule_empty_addrman(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 0, .full_outbound = 0, .network_active = true};
	size_t q = 0;
	seeds_sched_init(&s, 9, false, false, 1000);
	/* All nine at once, no wait. */
	assert_int_equal(run_queries(&s, &v, 1000, 0, &q), SEEDS_ACT_END);
	assert_int_equal(q, 9);
	assert_int_equal(s.end, SEEDS_END_ALL_QUERIED);
	assert_int_equal(seeds_sched_next(&s, &v, 99999), SEEDS_ACT_NONE);
}

static void test_schedule_three_at_a_time(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 50, .full_outbound = 0, .network_active = true};
	size_t q = 0;
	seeds_sched_init(&s, 8, false, false, 0);
	/* Addresses known: wait 11 s before the first three. */
	assert_int_equal(seeds_sched_next(&s, &v, 0), SEEDS_ACT_WAIT_LOG);
	assert_int_equal(s.wait_ms, SEEDS_DELAY_FEW_MS);
	assert_int_equal(run_queries(&s, &v, 10999, 5, &q), SEEDS_ACT_NONE);
	assert_int_equal(q, 0);
	assert_int_equal(run_queries(&s, &v, 11000, 5, &q), SEEDS_ACT_WAIT_LOG);
	assert_int_equal(q, 3);
	assert_int_equal(run_queries(&s, &v, 21999, 5, &q), SEEDS_ACT_NONE);
	assert_int_equal(run_queries(&s, &v, 22000, 5, &q), SEEDS_ACT_WAIT_LOG);
	assert_int_equal(q, 6);
	assert_int_equal(run_queries(&s, &v, 33000, 5, &q), SEEDS_ACT_END);
	assert_int_equal(q, 8);
	assert_int_equal(s.end, SEEDS_END_ALL_QUERIED);
	assert_int_equal(s.found, 40);
}

static void test_schedule_many_addresses(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 1000, .full_outbound = 0, .network_active = true};
	size_t q = 0;
	seeds_sched_init(&s, 9, false, false, 0);
	assert_int_equal(seeds_sched_next(&s, &v, 0), SEEDS_ACT_WAIT_LOG);
	assert_int_equal(s.wait_ms, SEEDS_DELAY_MANY_MS);
	/* Five minutes, looked at every 11 s. */
	uint64_t t = 0;
	while (t < SEEDS_DELAY_MANY_MS - SEEDS_DELAY_FEW_MS) {
		t += SEEDS_DELAY_FEW_MS;
		assert_int_equal(run_queries(&s, &v, t, 0, &q), SEEDS_ACT_NONE);
	}
	assert_int_equal(q, 0);
	assert_int_equal(run_queries(&s, &v, SEEDS_DELAY_MANY_MS, 0, &q), SEEDS_ACT_WAIT_LOG);
	assert_int_equal(q, 3);
	/* Two full-relay outbound peers during the next wait: seeding stops at
	 * the next 11-second look. */
	v.full_outbound = 2;
	assert_int_equal(run_queries(&s, &v, SEEDS_DELAY_MANY_MS + 5000, 0, &q), SEEDS_ACT_NONE);
	assert_int_equal(run_queries(&s, &v, SEEDS_DELAY_MANY_MS + SEEDS_DELAY_FEW_MS, 0, &q),
	                 SEEDS_ACT_END);
	assert_int_equal(s.end, SEEDS_END_PEERS);
	assert_int_equal(q, 3);
}

static void test_schedule_enough_peers_and_force(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 5000, .full_outbound = 2, .network_active = true};
	size_t q = 0;
	seeds_sched_init(&s, 9, false, false, 0);
	assert_int_equal(seeds_sched_next(&s, &v, 0), SEEDS_ACT_END);
	assert_int_equal(s.end, SEEDS_END_SKIPPED);
	/* -forcednsseed: all of them at once, peers or not. */
	seeds_sched_init(&s, 9, true, false, 0);
	assert_int_equal(run_queries(&s, &v, 0, 1, &q), SEEDS_ACT_END);
	assert_int_equal(q, 9);
	assert_int_equal(s.end, SEEDS_END_ALL_QUERIED);
	/* No seeds (regtest): over at once. */
	seeds_sched_init(&s, 0, false, false, 0);
	v.full_outbound = 0;
	assert_int_equal(seeds_sched_next(&s, &v, 0), SEEDS_ACT_END);
}

static void test_schedule_network_inactive(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 0, .full_outbound = 0, .network_active = false};
	size_t q = 0;
	seeds_sched_init(&s, 2, false, false, 0);
	assert_int_equal(seeds_sched_next(&s, &v, 0), SEEDS_ACT_INACTIVE);
	assert_int_equal(seeds_sched_next(&s, &v, 1000), SEEDS_ACT_NONE);
	v.network_active = true;
	assert_int_equal(run_queries(&s, &v, 2000, 0, &q), SEEDS_ACT_END);
	assert_int_equal(q, 2);
}

static void test_schedule_seednode(void **state)
{
	(void)state;
	struct seeds_sched s;
	struct seeds_view v = {.addrman_size = 0, .full_outbound = 0, .network_active = true};
	size_t q = 0;
	seeds_sched_init(&s, 3, false, true, 0);
	assert_int_equal(run_queries(&s, &v, SEEDS_SEEDNODE_WAIT_MS, 0, &q), SEEDS_ACT_NONE);
	assert_int_equal(q, 0);
	assert_int_equal(run_queries(&s, &v, SEEDS_SEEDNODE_WAIT_MS + 1, 0, &q), SEEDS_ACT_END);
	assert_int_equal(q, 3);
	/* The seed nodes found two peers, but the addrman is empty: Core still
	 * queries every seed (seeds_right_now). */
	seeds_sched_init(&s, 3, false, true, 0);
	v.full_outbound = 2;
	q = 0;
	assert_int_equal(run_queries(&s, &v, 500, 0, &q), SEEDS_ACT_END);
	assert_int_equal(q, 3);
	/* ... and skips them when it is not. */
	seeds_sched_init(&s, 3, false, true, 0);
	v.addrman_size = 10;
	assert_int_equal(seeds_sched_next(&s, &v, 500), SEEDS_ACT_END);
	assert_int_equal(s.end, SEEDS_END_SKIPPED);
}

static void test_fixed_rule(void **state)
{
	(void)state;
	/* With DNS seeds or addnode=: only after 60 s (strictly, as Core). */
	assert_int_equal(seeds_fixed_due(1000, 61000, true, false, false), SEEDS_FIXED_NOT_YET);
	assert_int_equal(seeds_fixed_due(1000, 61001, true, false, false), SEEDS_FIXED_TIMEOUT);
	assert_int_equal(seeds_fixed_due(1000, 2000, false, false, true), SEEDS_FIXED_NOT_YET);
	assert_int_equal(seeds_fixed_due(1000, 2000, false, true, false), SEEDS_FIXED_NOT_YET);
	/* Nothing else to find peers with: at once. */
	assert_int_equal(seeds_fixed_due(1000, 1000, false, false, false), SEEDS_FIXED_NO_OTHERS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dns_names),
	    cmocka_unit_test(test_fixed_seeds),
	    cmocka_unit_test(test_internal_addr),
	    cmocka_unit_test(test_add_found),
	    cmocka_unit_test(test_schedule_empty_addrman),
	    cmocka_unit_test(test_schedule_three_at_a_time),
	    cmocka_unit_test(test_schedule_many_addresses),
	    cmocka_unit_test(test_schedule_enough_peers_and_force),
	    cmocka_unit_test(test_schedule_network_inactive),
	    cmocka_unit_test(test_schedule_seednode),
	    cmocka_unit_test(test_fixed_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
