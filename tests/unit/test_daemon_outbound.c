/*
 * tests/unit/test_daemon_outbound.c: the automatic outbound connections'
 * rules (daemon/net/outbound.c), on the in-process fixture: which address
 * net_outbound_pick draws from the addrman (one outbound per network
 * group, feelers exempt; Core's service bits for full peers and feelers;
 * bad ports only after 50 draws; addnode targets never), what
 * net_outbound_count sees, the slot arithmetic (Core's CConnman::Init and
 * m_max_inbound), and anchors.dat's encoding. Nothing is dialled: the
 * addresses below are only drawn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "addrman/addrman.h"
#include "daemon/net/net.h"
#include "tests/unit/test_daemon_fixture.h"

static struct addrman_address addr_of(uint8_t a, uint8_t b, uint8_t c, uint8_t dd, uint16_t port,
                                      uint64_t services)
{
	struct addrman_address x;
	memset(&x, 0, sizeof(x));
	x.svc = addrman_service_ipv4(a, b, c, dd, port);
	x.services = services;
	x.time = (int64_t)time(NULL) - 60;
	return x;
}

/*
 * Add x to the fixture's addrman, each address heard from a source of its
 * own group: two addresses of one /16 from the same source share a new
 * bucket, and with the fixture's random key they took the same slot about
 * one run in 64, so the second was not added.
 */
static void learn(struct tf *t, struct addrman_address x)
{
	static uint8_t next_source;
	struct addrman_service src = addrman_service_ipv4(200, next_source++, 0, 1, 0);
	size_t n = 0;
	assert_int_equal(addrman_add(t->d->addrman, &x, 1, &src, 0, (int64_t)time(NULL), &n), 0);
	assert_int_equal(n, 1);
}

#define FULL (PROTO_NODE_NETWORK | PROTO_NODE_WITNESS)

static bool pick(struct tf *t, bool feeler, struct addrman_address *out)
{
	struct net_outbound_counts c;
	net_outbound_count(t->d, &c);
	return net_outbound_pick(t->d, &c, feeler, -1, out);
}

/* A full-relay peer's group is taken for every non-feeler connection. */
static void test_one_per_group(void **state)
{
	struct tf *t = *state;
	learn(t, addr_of(1, 1, 0, 1, 18444, FULL));
	learn(t, addr_of(1, 1, 0, 2, 18444, FULL));
	struct addrman_address a;
	assert_true(pick(t, false, &a));
	struct peer *p = tf_peer(t, false, "1.1.7.7:18444");
	p->conn_type = PEER_CONN_OUTBOUND_FULL;
	if (pick(t, false, &a))
		fail_msg("drew %u.%u.%u.%u, in the group of an outbound peer", a.svc.addr[0],
		         a.svc.addr[1], a.svc.addr[2], a.svc.addr[3]);
	/* Feelers ignore groups (Core: only persistent slots must differ). */
	assert_true(pick(t, true, &a));
	/* Inbound, feeler and addr-fetch peers take no group. */
	p->conn_type = PEER_CONN_FEELER;
	assert_true(pick(t, false, &a));
	p->conn_type = PEER_CONN_INBOUND;
	assert_true(pick(t, false, &a));
	/* A manual peer's group counts, as Core's. */
	p->conn_type = PEER_CONN_MANUAL;
	assert_false(pick(t, false, &a));
	/* Another group is fine. */
	learn(t, addr_of(1, 2, 0, 1, 18444, FULL));
	assert_true(pick(t, false, &a));
	assert_int_equal(a.svc.addr[1], 2);
}

/* Full and block-relay peers need NODE_NETWORK|NODE_WITNESS; a feeler
 * only a full or limited node. */
static void test_services(void **state)
{
	struct tf *t = *state;
	struct addrman_address a;
	learn(t, addr_of(2, 1, 0, 1, 18444, PROTO_NODE_WITNESS));
	assert_false(pick(t, false, &a));
	assert_false(pick(t, true, &a));
	learn(t, addr_of(2, 2, 0, 1, 18444, PROTO_NODE_NETWORK));
	assert_false(pick(t, false, &a));
	assert_true(pick(t, true, &a));
	assert_int_equal(a.svc.addr[1], 2);
	learn(t, addr_of(2, 3, 0, 1, 18444, FULL));
	assert_true(pick(t, false, &a));
	assert_int_equal(a.svc.addr[1], 3);
}

/* A bad port is drawn only once 50 draws found nothing better. */
static void test_bad_port_last(void **state)
{
	struct tf *t = *state;
	struct addrman_address a;
	learn(t, addr_of(3, 1, 0, 1, 22, FULL));
	assert_true(pick(t, false, &a)); /* alone: taken after 50 draws */
	assert_int_equal(a.svc.port, 22);
	learn(t, addr_of(3, 2, 0, 1, 18444, FULL));
	for (int i = 0; i < 20; i++) {
		assert_true(pick(t, false, &a));
		if (a.svc.port != 18444)
			fail_msg("drew port %u while a good one was there", a.svc.port);
	}
	assert_true(net_outbound_bad_port(22) && net_outbound_bad_port(10080));
	assert_false(net_outbound_bad_port(8333) || net_outbound_bad_port(18444));
}

/* An address tried in the last 10 minutes waits for 30 draws. */
static void test_recently_tried_last(void **state)
{
	struct tf *t = *state;
	struct addrman_address a, old = addr_of(4, 1, 0, 1, 18444, FULL);
	learn(t, old);
	learn(t, addr_of(4, 2, 0, 1, 18444, FULL));
	addrman_attempt(t->d->addrman, &old.svc, false, (int64_t)time(NULL));
	for (int i = 0; i < 20; i++) {
		assert_true(pick(t, false, &a));
		if (a.svc.addr[1] != 2)
			fail_msg("drew the address tried a moment ago");
	}
}

/* addnode= targets keep their own slots: never drawn for automatic ones. */
static void test_added_node_skipped(void **state)
{
	struct tf *t = *state;
	struct addrman_address a;
	learn(t, addr_of(5, 1, 0, 1, 18444, FULL));
	/* The target comes from the configuration and nothing ticks: never dialled. */
	t->d->network_inactive = true;
	t->conf.addnode.v[0] = xstrdup("5.1.0.1:18444");
	assert_non_null(t->conf.addnode.v[0]);
	t->conf.addnode.n = 1;
	assert_int_equal(net_init_targets(t->d), 0);
	assert_int_equal(t->d->n_peers, 0);
	assert_false(pick(t, false, &a));
	net_release_targets(t->d);
	assert_true(pick(t, false, &a));
}

static void test_counts(void **state)
{
	struct tf *t = *state;
	static const struct {
		const char *addr;
		enum peer_conn_type type;
	} peers[] = {
	    {"6.1.0.1:1", PEER_CONN_OUTBOUND_FULL}, {"6.1.0.2:1", PEER_CONN_OUTBOUND_FULL},
	    {"6.2.0.1:1", PEER_CONN_BLOCK_RELAY},   {"6.3.0.1:1", PEER_CONN_FEELER},
	    {"6.4.0.1:1", PEER_CONN_ADDR_FETCH},    {"6.5.0.1:1", PEER_CONN_MANUAL},
	    {"6.6.0.1:1", PEER_CONN_INBOUND},
	};
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		tf_peer(t, peers[i].type == PEER_CONN_INBOUND, peers[i].addr)->conn_type =
		    peers[i].type;
	struct net_outbound_counts c;
	net_outbound_count(t->d, &c);
	assert_int_equal(c.full, 2);
	assert_int_equal(c.block, 1);
	assert_int_equal(c.automatic, 5);
	assert_int_equal(c.n_groups, 3); /* 6.1 (twice), 6.2, 6.5 */
	assert_int_equal(c.full_by_net[ADDRMAN_NET_IPV4], 3);
	assert_true(net_outbound_slot_free(t->d, &c));
	tf_peer(t, false, "6.7.0.1:1")->conn_type = PEER_CONN_OUTBOUND_FULL;
	for (int i = 0; i < 5; i++) {
		char a[32];
		snprintf(a, sizeof(a), "6.%d.0.9:1", 10 + i);
		tf_peer(t, false, a)->conn_type = PEER_CONN_OUTBOUND_FULL;
	}
	net_outbound_count(t->d, &c);
	assert_int_equal(c.automatic, 11);
	assert_false(net_outbound_slot_free(t->d, &c));
}

/* Core's CConnman::Init and m_max_inbound. */
static void test_slots(void **state)
{
	struct tf *t = *state;
	static const struct {
		uint32_t maxconn, full, block, inbound;
	} cases[] = {
	    {125, 8, 2, 114}, {11, 8, 2, 0}, {16, 8, 2, 5},
	    {9, 8, 1, 0},     {5, 5, 0, 0},  {0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t->d->net->maxconnections = cases[i].maxconn;
		net_init_limits(t->d);
		assert_int_equal(t->d->net->max_outbound_full, cases[i].full);
		assert_int_equal(t->d->net->max_block_relay, cases[i].block);
		assert_int_equal(t->d->net->max_feeler, 1);
		assert_int_equal(net_max_inbound(t->d), cases[i].inbound);
	}
}

static void test_anchors_format(void **state)
{
	(void)state;
	struct addrman_address v[2] = {addr_of(7, 1, 0, 1, 18444, FULL),
	                               addr_of(7, 2, 0, 1, 8333, FULL | (1ull << 40))};
	uint8_t buf[256], again[256];
	size_t len = net_anchors_encode(v, 2, 0xdab5bffa, buf, sizeof(buf));
	/* magic, count, 2 x (4 + 4 + services + 1 + 1 + 4 + 2), checksum */
	assert_int_equal(len, 4 + 1 + (8 + 1 + 8) + (8 + 9 + 8) + 32);
	struct addrman_address out[2];
	uint32_t n = 0;
	assert_int_equal(net_anchors_decode(buf, len, 0xdab5bffa, out, 2, &n), 0);
	assert_int_equal(n, 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_true(addrman_service_eq(&out[i].svc, &v[i].svc));
		assert_int_equal(out[i].services, v[i].services);
		assert_int_equal(out[i].time, v[i].time);
	}
	/* Re-encoding what was read gives the same bytes. */
	assert_int_equal(net_anchors_encode(out, 2, 0xdab5bffa, again, sizeof(again)), len);
	assert_memory_equal(buf, again, len);
	/* Another network's magic, a flipped bit, a short file: refused. */
	assert_int_equal(net_anchors_decode(buf, len, 0xd9b4bef9, out, 2, &n), -EINVAL);
	buf[10] ^= 1;
	assert_int_equal(net_anchors_decode(buf, len, 0xdab5bffa, out, 2, &n), -EINVAL);
	buf[10] ^= 1;
	assert_int_equal(net_anchors_decode(buf, 20, 0xdab5bffa, out, 2, &n), -EINVAL);
	/* At most `max` kept. */
	assert_int_equal(net_anchors_decode(buf, len, 0xdab5bffa, out, 1, &n), 0);
	assert_int_equal(n, 1);
	/* Too small a buffer: nothing written. */
	assert_int_equal(net_anchors_encode(v, 2, 0xdab5bffa, buf, 40), 0);
}

/* Core's order of choice (ThreadOpenConnections): anchors, full-relay,
 * block-relay-only, the stale tip's extra, the extra block-relay peer, a
 * feeler, a peer on a missing network. */
static void test_choice_order(void **state)
{
	struct tf *t = *state;
	struct net_state *n = t->d->net;
	n->maxconnections = 125;
	net_init_limits(t->d);
	struct net_outbound_counts c;
	memset(&c, 0, sizeof(c));
	struct net_outbound_due all = {true, true, true, true}, none = {false, false, false, false};
	assert_int_equal(net_outbound_choose(n, &c, &all), NET_OB_ANCHOR);
	assert_int_equal(net_outbound_choose(n, &c, &none), NET_OB_FULL);
	c.block = 2; /* anchors only while block-relay-only slots are free */
	assert_int_equal(net_outbound_choose(n, &c, &all), NET_OB_FULL);
	c.block = 0;
	c.full = 8;
	assert_int_equal(net_outbound_choose(n, &c, &none), NET_OB_BLOCK);
	c.block = 2;
	assert_int_equal(net_outbound_choose(n, &c, &none), NET_OB_NONE);
	n->try_new_outbound = true;
	assert_int_equal(net_outbound_choose(n, &c, &all), NET_OB_STALE_TIP);
	n->try_new_outbound = false;
	assert_int_equal(net_outbound_choose(n, &c, &all), NET_OB_EXTRA_BLOCK);
	struct net_outbound_due d = {false, false, true, true};
	assert_int_equal(net_outbound_choose(n, &c, &d), NET_OB_FEELER);
	d.feeler = false;
	assert_int_equal(net_outbound_choose(n, &c, &d), NET_OB_EXTRA_NET);
	/* With fewer than 8 full-relay slots (a small maxconnections): never
	 * an extra network peer. */
	n->maxconnections = 6;
	net_init_limits(t->d);
	c.full = 6;
	c.block = 0;
	assert_int_equal(net_outbound_choose(n, &c, &d), NET_OB_NONE);
	d.feeler = true;
	assert_int_equal(net_outbound_choose(n, &c, &d), NET_OB_FEELER);
}

/* Core's MaybePickPreferredNetwork: a reachable network with addresses
 * known and no manual or full-relay peer. */
static void test_preferred_net(void **state)
{
	struct tf *t = *state;
	struct net_outbound_counts c;
	net_outbound_count(t->d, &c);
	assert_int_equal(net_outbound_preferred_net(t->d, &c), -1); /* nothing known */
	learn(t, addr_of(8, 1, 0, 1, 18444, FULL));
	struct addrman_address v6;
	memset(&v6, 0, sizeof(v6));
	uint8_t ip[16] = {0x20, 0x01, 0x0d, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	v6.svc = addrman_service_from_v1(ip, 18444);
	v6.services = FULL;
	v6.time = (int64_t)time(NULL) - 60;
	learn(t, v6);
	tf_peer(t, false, "8.2.0.1:18444")->conn_type = PEER_CONN_OUTBOUND_FULL;
	net_outbound_count(t->d, &c);
	assert_int_equal(net_outbound_preferred_net(t->d, &c), ADDRMAN_NET_IPV6);
	/* A block-relay-only peer does not represent its network. */
	tf_peer(t, false, "[2001:db9::7]:18444")->conn_type = PEER_CONN_BLOCK_RELAY;
	net_outbound_count(t->d, &c);
	assert_int_equal(net_outbound_preferred_net(t->d, &c), ADDRMAN_NET_IPV6);
	tf_peer(t, false, "[2001:db9::8]:18444")->conn_type = PEER_CONN_MANUAL;
	net_outbound_count(t->d, &c);
	assert_int_equal(net_outbound_preferred_net(t->d, &c), -1);
	/* Drawn from that network only (groups left out: no peer counted). */
	struct addrman_address a;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < 20; i++) {
		assert_true(net_outbound_pick(t->d, &c, false, ADDRMAN_NET_IPV6, &a));
		assert_int_equal(a.svc.net, ADDRMAN_NET_IPV6);
	}
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_one_per_group, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_services, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_port_last, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_recently_tried_last, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_added_node_skipped, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_counts, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_slots, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_choice_order, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_preferred_net, tf_setup, tf_teardown),
	    cmocka_unit_test(test_anchors_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
