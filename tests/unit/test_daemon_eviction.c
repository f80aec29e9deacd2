/*
 * tests/unit/test_daemon_eviction.c: choosing the inbound peer to evict
 * (daemon/net/eviction.c), after Bitcoin Core's
 * src/test/net_peer_eviction_tests.cpp: every case of its
 * peer_protection_test (the ratio protection of onion, I2P, CJDNS and
 * localhost peers), its randomized peer_eviction_test (200 sizes, each
 * protection), with a fixed seed, and the two cases Core leaves to test
 * (discouraged peers first; the youngest of the biggest group), plus
 * noban and manual peers, and the flood peerd must survive; then the
 * accept path (daemon/net/net.c) on real loopback sockets: a newcomer to
 * full slots evicts the youngest, is refused when all are protected, and
 * evicts nobody when it is banned or discouraged; a burst is accepted a
 * share per loop turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/net.h"
#include "tests/unit/test_daemon_fixture.h"

#define MAX_CANDS 256

/* A fixed-seed generator (splitmix64): the same candidates every run. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_range(uint64_t n)
{
	return rng_next() % n;
}

static bool rng_bool(void)
{
	return rng_next() & 1;
}

/* Core's GetRandomNodeEvictionCandidates: ids 0..n-1, inbound, no noban,
 * every other field random. */
static void random_candidates(struct net_evict_candidate *c, int n)
{
	for (int id = 0; id < n; id++) {
		struct net_evict_candidate *x = c + id;
		memset(x, 0, sizeof(*x));
		x->id = (uint64_t)id;
		x->connected = (int64_t)rng_range(100);
		x->min_ping_us = (int64_t)rng_range(100);
		x->last_block_time = (int64_t)rng_range(100);
		x->last_tx_time = (int64_t)rng_range(100);
		x->relevant_services = rng_bool();
		x->relay_txs = rng_bool();
		x->bloom_filter = rng_bool();
		x->keyed_netgroup = rng_range(100);
		x->prefer_evict = rng_bool();
		x->is_local = rng_bool();
		x->network = (enum net_network)rng_range(NET_NETWORK__COUNT);
		x->noban = false;
		x->conn_type = PEER_CONN_INBOUND;
	}
}

static void shuffle(struct net_evict_candidate *c, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)rng_range((uint64_t)i + 1);
		struct net_evict_candidate t = c[i];
		c[i] = c[j];
		c[j] = t;
	}
}

static bool in_list(const int *list, int id)
{
	for (; *list >= 0; list++) {
		if (*list == id)
			return true;
	}
	return false;
}

/* ---- Core's peer_protection_test ------------------------------------ */

enum conn_rule { CONN_RANDOM, CONN_BY_ID, CONN_REVERSE };

/* One of Core's cases: how its setup function sets each candidate (who
 * is local, on which network, connected when), and who must be protected
 * (removed by the ratio protection) and who must not. Lists end in -1. */
struct ratio_case {
	int line; /* of Core's test, to find the case there */
	int n;
	enum conn_rule conn;
	enum net_network other; /* the network of those in no list */
	int local[12], onion[12], i2p[12], cjdns[12];
	int protected_ids[16], unprotected_ids[16];
};

#define L(...)                                                                                     \
	{                                                                                          \
		__VA_ARGS__, -1                                                                    \
	}
#define NONE                                                                                       \
	{                                                                                          \
		-1                                                                                 \
	}

static const struct ratio_case ratio_cases[] = {
    /* half by uptime, both directions */
    {1, 12, CONN_BY_ID, NET_NETWORK_IPV4, NONE, NONE, NONE, NONE, L(0, 1, 2, 3, 4, 5),
     L(6, 7, 8, 9, 10, 11)},
    {2, 12, CONN_REVERSE, NET_NETWORK_IPV6, NONE, NONE, NONE, NONE, L(6, 7, 8, 9, 10, 11),
     L(0, 1, 2, 3, 4, 5)},
    /* one disadvantaged network */
    {3, 12, CONN_RANDOM, NET_NETWORK_IPV4, NONE, L(3, 8, 9), NONE, NONE, L(3, 8, 9), NONE},
    {4, 12, CONN_BY_ID, NET_NETWORK_IPV6, NONE, L(3, 8, 9, 10, 11), NONE, NONE, L(0, 1, 2, 3, 8, 9),
     L(4, 5, 6, 7, 10, 11)},
    {5, 12, CONN_RANDOM, NET_NETWORK_IPV4, L(1, 9, 11), NONE, NONE, NONE, L(1, 9, 11), NONE},
    {6, 12, CONN_BY_ID, NET_NETWORK_IPV6, L(7, 8, 9, 10, 11), NONE, NONE, NONE, L(0, 1, 2, 7, 8, 9),
     L(3, 4, 5, 6, 10, 11)},
    {7, 12, CONN_RANDOM, NET_NETWORK_IPV4, NONE, NONE, L(2, 7, 10), NONE, L(2, 7, 10), NONE},
    {8, 12, CONN_BY_ID, NET_NETWORK_IPV6, NONE, NONE, L(4, 9, 10, 11), NONE, L(0, 1, 2, 4, 9, 10),
     L(3, 5, 6, 7, 8, 11)},
    {9, 12, CONN_RANDOM, NET_NETWORK_IPV4, NONE, NONE, NONE, L(2, 7, 10), L(2, 7, 10), NONE},
    {10, 12, CONN_BY_ID, NET_NETWORK_IPV6, NONE, NONE, NONE, L(4, 9, 10, 11), L(0, 1, 2, 4, 9, 10),
     L(3, 5, 6, 7, 8, 11)},
    /* two networks */
    {11, 4, CONN_BY_ID, NET_NETWORK_IPV4, L(4), L(3), NONE, NONE, L(0, 4), L(1, 2)},
    {12, 7, CONN_BY_ID, NET_NETWORK_IPV4, L(6), L(5), NONE, NONE, L(0, 1, 6), L(2, 3, 4, 5)},
    {13, 8, CONN_BY_ID, NET_NETWORK_IPV4, L(6), L(5), NONE, NONE, L(0, 1, 5, 6), L(2, 3, 4, 7)},
    {14, 12, CONN_BY_ID, NET_NETWORK_IPV6, L(6, 9, 11), L(7, 8, 10), NONE, NONE,
     L(0, 1, 2, 6, 7, 9), L(3, 4, 5, 8, 10, 11)},
    {15, 12, CONN_BY_ID, NET_NETWORK_IPV4, L(5, 6, 7, 8), L(10), NONE, NONE, L(0, 1, 2, 5, 6, 10),
     L(3, 4, 7, 8, 9, 11)},
    {16, 16, CONN_BY_ID, NET_NETWORK_IPV6, L(6, 9, 11, 12), L(8, 10), NONE, NONE,
     L(0, 1, 2, 3, 6, 8, 9, 10), L(4, 5, 7, 11, 12, 13, 14, 15)},
    {17, 16, CONN_BY_ID, NET_NETWORK_IPV4, L(11, 12, 13, 14, 15), L(10), NONE, NONE,
     L(0, 1, 2, 3, 10, 11, 12, 13), L(4, 5, 6, 7, 8, 9, 14, 15)},
    {18, 16, CONN_BY_ID, NET_NETWORK_IPV6, L(15), L(7, 8, 9, 10), NONE, NONE,
     L(0, 1, 2, 3, 7, 8, 9, 15), L(5, 6, 10, 11, 12, 13, 14)},
    {19, 12, CONN_BY_ID, NET_NETWORK_IPV4, NONE, L(8, 10), L(6, 9, 11, 12), NONE,
     L(0, 1, 2, 6, 8, 10), L(3, 4, 5, 7, 9, 11)},
    /* three networks */
    {20, 4, CONN_BY_ID, NET_NETWORK_IPV6, L(2), L(1), L(3), NONE, L(0, 3), L(1, 2)},
    {21, 7, CONN_BY_ID, NET_NETWORK_IPV6, L(4), L(5), L(6), NONE, L(0, 1, 6), L(2, 3, 4, 5)},
    {22, 8, CONN_BY_ID, NET_NETWORK_IPV6, L(6), L(4), L(5), NONE, L(0, 1, 5, 6), L(2, 3, 4, 7)},
    {23, 16, CONN_BY_ID, NET_NETWORK_IPV4, L(6, 12, 13, 14, 15), L(9, 10), L(7, 11), NONE,
     L(0, 1, 2, 3, 6, 7, 9, 11), L(4, 5, 8, 10, 12, 13, 14, 15)},
    {24, 24, CONN_BY_ID, NET_NETWORK_IPV6, L(12), L(23), L(15, 16, 17, 18, 19, 20, 21, 22), NONE,
     L(0, 1, 2, 3, 4, 5, 12, 15, 16, 17, 18, 23), L(6, 7, 8, 9, 10, 11, 13, 14, 19, 20, 21, 22)},
    {25, 24, CONN_BY_ID, NET_NETWORK_IPV4, L(15), L(18, 19, 20, 21, 22, 23), L(12, 14, 17), NONE,
     L(0, 1, 2, 3, 4, 5, 12, 14, 15, 17, 18, 19), L(6, 7, 8, 9, 10, 11, 13, 16, 20, 21, 22, 23)},
    {26, 24, CONN_BY_ID, NET_NETWORK_IPV6, L(13), L(12, 14, 15, 16), L(17, 18, 19, 20, 21, 22, 23),
     NONE, L(0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 17, 18),
     L(6, 7, 8, 9, 10, 11, 16, 19, 20, 21, 22, 23)},
    {27, 24, CONN_BY_ID, NET_NETWORK_IPV4, L(16, 17, 18, 19, 20, 21, 22, 23), L(7, 8, 9), NONE,
     L(11, 12, 13, 14), L(0, 1, 2, 3, 4, 5, 7, 8, 11, 12, 16, 17),
     L(6, 9, 10, 13, 14, 15, 18, 19, 20, 21, 22, 23)},
    /* four networks */
    {28, 5, CONN_BY_ID, NET_NETWORK_IPV6, L(3), L(2), L(1), L(4), L(0, 4), L(1, 2, 3)},
    {29, 7, CONN_BY_ID, NET_NETWORK_IPV4, L(4), L(3), L(5), L(6), L(0, 1, 6), L(2, 3, 4, 5)},
    {30, 8, CONN_BY_ID, NET_NETWORK_IPV6, L(3), L(3), L(6), L(5), L(0, 1, 5, 6), L(2, 3, 4, 7)},
    {31, 16, CONN_BY_ID, NET_NETWORK_IPV4, L(6, 7, 8, 9, 10, 11, 12, 13, 14, 15), L(8, 9),
     L(10, 14), L(11, 15), L(0, 1, 2, 3, 6, 8, 10, 11), L(4, 5, 7, 9, 12, 13, 14, 15)},
    {32, 24, CONN_BY_ID, NET_NETWORK_IPV6, L(13), L(12, 14, 15, 16), L(17),
     L(18, 19, 20, 21, 22, 23), L(0, 1, 2, 3, 4, 5, 12, 13, 14, 17, 18, 19),
     L(6, 7, 8, 9, 10, 11, 15, 16, 20, 21, 22, 23)},
};

static void setup_ratio_case(const struct ratio_case *rc, struct net_evict_candidate *x)
{
	int id = (int)x->id;
	if (rc->conn == CONN_BY_ID)
		x->connected = id;
	else if (rc->conn == CONN_REVERSE)
		x->connected = rc->n - id;
	x->is_local = in_list(rc->local, id);
	if (in_list(rc->cjdns, id))
		x->network = NET_NETWORK_CJDNS;
	else if (in_list(rc->i2p, id))
		x->network = NET_NETWORK_I2P;
	else if (in_list(rc->onion, id))
		x->network = NET_NETWORK_ONION;
	else
		x->network = rc->other;
}

static void test_protection_by_ratio(void **state)
{
	(void)state;
	rng_state = 1;
	for (size_t k = 0; k < sizeof(ratio_cases) / sizeof(ratio_cases[0]); k++) {
		const struct ratio_case *rc = ratio_cases + k;
		struct net_evict_candidate c[MAX_CANDS];
		random_candidates(c, rc->n);
		for (int i = 0; i < rc->n; i++)
			setup_ratio_case(rc, c + i);
		shuffle(c, rc->n);
		size_t left = net_evict_protect_by_ratio(c, (size_t)rc->n);
		size_t want = (size_t)(rc->n - rc->n / 2);
		if (left != want)
			fail_msg("case %d: %zu candidates left, expected %zu (half protected)",
			         rc->line, left, want);
		int unprotected_seen = 0, unprotected_want = 0;
		for (const int *u = rc->unprotected_ids; *u >= 0; u++)
			unprotected_want++;
		for (size_t i = 0; i < left; i++) {
			int id = (int)c[i].id;
			if (in_list(rc->protected_ids, id))
				fail_msg(
				    "case %d: peer %d should be protected, is still a candidate",
				    rc->line, id);
			unprotected_seen += in_list(rc->unprotected_ids, id);
		}
		if (unprotected_seen != unprotected_want)
			fail_msg("case %d: %d of the %d unprotected peers left as candidates",
			         rc->line, unprotected_seen, unprotected_want);
		/* The rest is youngest first: the order the group step walks. */
		for (size_t i = 1; i < left; i++) {
			if (c[i - 1].connected < c[i].connected)
				fail_msg("case %d: candidates not youngest first at %zu", rc->line,
				         i);
		}
	}
}

/* ---- Core's peer_eviction_test --------------------------------------- */

enum setup_kind {
	SETUP_NETGROUP,
	SETUP_PING,
	SETUP_TX,
	SETUP_BLOCK_RELAY_ONLY,
	SETUP_BLOCK,
	SETUP_ALL,
};

static void setup_eviction(enum setup_kind kind, int n, struct net_evict_candidate *x)
{
	int64_t id = (int64_t)x->id;
	switch (kind) {
	case SETUP_NETGROUP:
		x->keyed_netgroup = (uint64_t)(n - id);
		break;
	case SETUP_PING:
		x->min_ping_us = id;
		break;
	case SETUP_TX:
		x->last_tx_time = n - id;
		break;
	case SETUP_BLOCK_RELAY_ONLY:
		x->last_block_time = n - id;
		if (id <= 7) {
			x->relay_txs = false;
			x->relevant_services = true;
		}
		break;
	case SETUP_BLOCK:
		x->last_block_time = n - id;
		break;
	case SETUP_ALL:
		x->keyed_netgroup = (uint64_t)(n - id);
		x->min_ping_us = id;
		x->last_tx_time = n - id;
		x->last_block_time = n - id;
		break;
	}
}

/* Whether, with n random candidates set up by kind, the one evicted has an
 * id below `below` (those the setup made best at one protection). */
static bool evicts_below(int n, enum setup_kind kind, int below)
{
	struct net_evict_candidate c[MAX_CANDS];
	random_candidates(c, n);
	for (int i = 0; i < n; i++)
		setup_eviction(kind, n, c + i);
	shuffle(c, n);
	uint64_t id;
	if (!net_evict_select(c, (size_t)n, &id))
		return false;
	return id < (uint64_t)below;
}

static void test_eviction_randomized(void **state)
{
	(void)state;
	rng_state = 2;
	for (int n = 0; n < 200; n++) {
		static const struct {
			enum setup_kind kind;
			int protected_below;
			const char *what;
		} checks[] = {
		    {SETUP_NETGROUP, 4, "4 by keyed net group"},
		    {SETUP_PING, 8, "8 by lowest ping"},
		    {SETUP_TX, 4, "4 by latest novel transaction"},
		    {SETUP_BLOCK_RELAY_ONLY, 8, "8 block-relay-only by latest block"},
		    {SETUP_BLOCK, 4, "4 by latest novel block"},
		    {SETUP_BLOCK_RELAY_ONLY, 12, "8 block-relay-only and 4 by latest block"},
		    {SETUP_ALL, 20, "every protection at once"},
		};
		for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++) {
			if (evicts_below(n, checks[k].kind, checks[k].protected_below))
				fail_msg("%d candidates: a peer protected by \"%s\" was evicted", n,
				         checks[k].what);
		}
		/* At most 4+8+4+8+4 = 28 are protected before the ratio step,
		 * which protects half the rest rounded down: 29 always leave one. */
		struct net_evict_candidate c[MAX_CANDS];
		uint64_t id;
		if (n >= 29) {
			random_candidates(c, n);
			if (!net_evict_select(c, (size_t)n, &id))
				fail_msg("%d random candidates: none evicted", n);
		}
		/* At least 4+8+4+4 = 20 are protected. */
		if (n <= 20) {
			random_candidates(c, n);
			if (net_evict_select(c, (size_t)n, &id))
				fail_msg("%d random candidates: peer %llu evicted", n,
				         (unsigned long long)id);
		}
	}
}

/* ---- what Core leaves to test, and peerd's own cases ---------------- */

/* n plain inbound candidates: connected at id (the higher the younger),
 * each in its own group, no ping, nothing relayed. */
static void plain(struct net_evict_candidate *c, int n)
{
	for (int i = 0; i < n; i++) {
		memset(c + i, 0, sizeof(c[i]));
		c[i].id = (uint64_t)i;
		c[i].connected = 1000 + i;
		c[i].min_ping_us = INT64_MAX;
		c[i].keyed_netgroup = 5000 + (uint64_t)i;
		c[i].network = NET_NETWORK_IPV4;
		c[i].relay_txs = true;
		c[i].relevant_services = true;
		c[i].conn_type = PEER_CONN_INBOUND;
	}
}

static uint64_t select_one(struct net_evict_candidate *c, int n)
{
	uint64_t id = UINT64_MAX;
	if (!net_evict_select(c, (size_t)n, &id))
		fail_msg("%d candidates: none evicted", n);
	return id;
}

/* "If any remaining peers are preferred for eviction consider only them":
 * the discouraged peer goes, though 29 others share a group; unless a
 * protection keeps it (here its ping), as Core: the protections first. */
static void test_prefer_evict(void **state)
{
	(void)state;
	struct net_evict_candidate c[MAX_CANDS];
	plain(c, 60);
	for (int i = 30; i < 60; i++)
		c[i].keyed_netgroup = 7;
	c[50].keyed_netgroup = 9;
	c[50].prefer_evict = true;
	uint64_t id = select_one(c, 60);
	if (id != 50)
		fail_msg("evicted %llu, expected the discouraged peer 50", (unsigned long long)id);
	plain(c, 60);
	for (int i = 30; i < 60; i++)
		c[i].keyed_netgroup = 7;
	c[50].keyed_netgroup = 9;
	c[50].prefer_evict = true;
	c[50].min_ping_us = 1;
	id = select_one(c, 60);
	if (id != 59)
		fail_msg("evicted %llu, expected 59 (youngest of the biggest group)",
		         (unsigned long long)id);
}

/*
 * "Identify the network group with the most connections and youngest
 * member". With 80 plain candidates the protections keep the 4 largest
 * keyed groups (ids 76-79), then by age ids 0-15 (ping, transaction and
 * block ties go to the older) and half the remaining 60 (ids 16-45): ids
 * 46-75 are left.
 */
static void test_biggest_group_youngest(void **state)
{
	(void)state;
	struct net_evict_candidate c[MAX_CANDS];
	/* Two groups of 3 left: the one with the younger member. */
	plain(c, 80);
	c[46].keyed_netgroup = c[47].keyed_netgroup = c[70].keyed_netgroup = 1;
	c[48].keyed_netgroup = c[49].keyed_netgroup = c[72].keyed_netgroup = 2;
	uint64_t id = select_one(c, 80);
	if (id != 72)
		fail_msg("evicted %llu, expected 72 (youngest of group 2)", (unsigned long long)id);
	/* A group bigger by one wins however old its members. */
	plain(c, 80);
	c[50].keyed_netgroup = c[51].keyed_netgroup = c[52].keyed_netgroup = 1;
	c[70].keyed_netgroup = c[71].keyed_netgroup = 2;
	id = select_one(c, 80);
	if (id != 52)
		fail_msg("evicted %llu, expected 52 (youngest of the group of 3)",
		         (unsigned long long)id);
	/* Members protected by age do not count: a group of 10 old peers
	 * (ids 0-9, all protected) loses to 2 young ones. */
	plain(c, 80);
	for (int i = 0; i < 10; i++)
		c[i].keyed_netgroup = 1;
	c[60].keyed_netgroup = c[61].keyed_netgroup = 2;
	id = select_one(c, 80);
	if (id != 61)
		fail_msg("evicted %llu, expected 61 (youngest of group 2)", (unsigned long long)id);
	/* Every group of one: the youngest left. */
	plain(c, 80);
	id = select_one(c, 80);
	if (id != 75)
		fail_msg("evicted %llu, expected 75 (the youngest left)", (unsigned long long)id);
}

/*
 * Each protection keeps exactly its count. 80 plain candidates in groups
 * of one: the 4 largest keyed groups are the youngest (ids 76-79), so
 * without a quality the youngest left, 75, goes. Give the quality to the
 * k + 1 youngest below them, the oldest of those the worst: the k best are
 * protected and that one goes; a count of k - 1 or k + 1 would take the
 * next younger or the next older.
 */
static void test_protection_counts(void **state)
{
	(void)state;
	struct net_evict_candidate c[MAX_CANDS];
	/* 8 by lowest ping: ids 67-75, 75 the fastest. */
	plain(c, 80);
	for (int i = 67; i <= 75; i++)
		c[i].min_ping_us = 100 + (76 - i);
	uint64_t id = select_one(c, 80);
	if (id != 67)
		fail_msg("ping: evicted %llu, expected 67", (unsigned long long)id);
	/* 4 by latest novel transaction: ids 71-75. */
	plain(c, 80);
	for (int i = 71; i <= 75; i++)
		c[i].last_tx_time = 5000 + i;
	id = select_one(c, 80);
	if (id != 71)
		fail_msg("transactions: evicted %llu, expected 71", (unsigned long long)id);
	/* 4 by latest novel block: ids 71-75. */
	plain(c, 80);
	for (int i = 71; i <= 75; i++)
		c[i].last_block_time = 5000 + i;
	id = select_one(c, 80);
	if (id != 71)
		fail_msg("blocks: evicted %llu, expected 71", (unsigned long long)id);
	/* 8 block-relay-only by latest block (ids 68-75), then 4 by latest
	 * block among the rest (64-67): 63 goes. */
	plain(c, 80);
	for (int i = 63; i <= 75; i++) {
		c[i].last_block_time = 5000 + i;
		c[i].relay_txs = false;
	}
	id = select_one(c, 80);
	if (id != 63)
		fail_msg("block-relay-only: evicted %llu, expected 63", (unsigned long long)id);
	/* ...but only those with the services we want: without them, only
	 * the 4 by latest block are kept (72-75), and 71 goes. */
	plain(c, 80);
	for (int i = 63; i <= 75; i++) {
		c[i].last_block_time = 5000 + i;
		c[i].relay_txs = false;
		c[i].relevant_services = false;
	}
	id = select_one(c, 80);
	if (id != 71)
		fail_msg("block-relay-only without services: evicted %llu, expected 71",
		         (unsigned long long)id);
}

/* noban and non-inbound (manual) peers are never candidates. */
static void test_noban_and_manual_never(void **state)
{
	(void)state;
	struct net_evict_candidate c[MAX_CANDS];
	plain(c, 100);
	for (int i = 0; i < 100; i++) {
		c[i].keyed_netgroup = 1;
		if (i >= 50)
			c[i].noban = (i % 2) == 0;
		if (i >= 50 && (i % 2))
			c[i].conn_type = PEER_CONN_MANUAL;
	}
	uint64_t id = select_one(c, 100);
	if (id >= 50)
		fail_msg("evicted %llu, a noban or manual peer", (unsigned long long)id);
	plain(c, 40);
	for (int i = 0; i < 40; i++)
		c[i].noban = true;
	assert_false(net_evict_select(c, 40, &id));
	plain(c, 40);
	for (int i = 0; i < 40; i++)
		c[i].conn_type = PEER_CONN_MANUAL;
	assert_false(net_evict_select(c, 40, &id));
	assert_false(net_evict_select(c, 0, &id));
}

/*
 * The flood of issue 20: 125 idle connections from one address hold every
 * slot; an honest peer that completed the handshake, pinged and relayed
 * arrives in the same (loopback) group. The one evicted is one of the
 * flood's, and once in, the honest peer is not evicted by the next
 * newcomers.
 */
static void test_flood_from_one_address(void **state)
{
	(void)state;
	struct net_evict_candidate c[MAX_CANDS];
	int n = 125;
	plain(c, n);
	for (int i = 0; i < n; i++) {
		c[i].keyed_netgroup = 42;
		c[i].is_local = true;
		c[i].network = NET_NETWORK_UNROUTABLE;
		c[i].connected = 1000 + i / 10; /* ten a second: many ties */
		c[i].relay_txs = false;
		c[i].relevant_services = false;
	}
	/* The first honest peer: youngest, but it answered pings. */
	struct net_evict_candidate honest = c[n - 1];
	honest.id = 1000;
	honest.connected = 2000;
	honest.min_ping_us = 150;
	honest.relay_txs = true;
	honest.relevant_services = true;
	struct net_evict_candidate all[MAX_CANDS];
	memcpy(all, c, sizeof(c[0]) * (size_t)n);
	all[n - 1] = honest; /* it took the slot its newcomer freed */
	for (int round = 0; round < 3; round++) {
		struct net_evict_candidate scratch[MAX_CANDS];
		memcpy(scratch, all, sizeof(all[0]) * (size_t)n);
		uint64_t id = select_one(scratch, n);
		if (id >= 1000)
			fail_msg("round %d: honest peer %llu evicted", round,
			         (unsigned long long)id);
		/* The flood's youngest unprotected connection goes. */
		for (int i = 0; i < n; i++) {
			if (all[i].id == id) {
				all[i] = honest;
				all[i].id = 1001 + (uint64_t)round;
				all[i].connected = 2001 + round;
				all[i].min_ping_us = 100 + round;
				break;
			}
		}
	}
}

/* ---- network groups (daemon/net/netgroup.c) ----------------------- */

static size_t group_of(const char *addr, uint8_t g[NET_GROUP_MAX])
{
	union net_addr a;
	if (net_addr_parse(addr, 8333, &a))
		fail_msg("test address %s does not parse", addr);
	return net_addr_group(&a, g);
}

static void assert_same_group(const char *x, const char *y, bool same)
{
	uint8_t gx[NET_GROUP_MAX], gy[NET_GROUP_MAX];
	size_t nx = group_of(x, gx), ny = group_of(y, gy);
	bool eq = nx == ny && memcmp(gx, gy, nx) == 0;
	if (eq != same)
		fail_msg("%s and %s: %s group, expected %s", x, y, eq ? "the same" : "different",
		         same ? "the same" : "different");
}

static void assert_network(const char *addr, enum net_network want)
{
	union net_addr a;
	if (net_addr_parse(addr, 8333, &a))
		fail_msg("test address %s does not parse", addr);
	enum net_network got = net_addr_network(&a);
	if (got != want)
		fail_msg("%s: network %d, expected %d", addr, got, want);
}

static void test_netgroups(void **state)
{
	(void)state;
	/* IPv4: the /16. */
	assert_same_group("1.2.3.4", "1.2.200.1", true);
	assert_same_group("1.2.3.4", "1.3.3.4", false);
	assert_same_group("1.2.3.4", "[::ffff:1.2.9.9]", true);
	/* Every local and unroutable address: one group (Core's GetGroup). */
	assert_same_group("127.0.0.1", "127.0.0.2", true);
	assert_same_group("127.0.0.1", "[::1]", true);
	assert_same_group("127.0.0.1", "10.1.2.3", true);
	assert_same_group("192.168.1.1", "172.16.5.5", true);
	assert_same_group("127.0.0.1", "1.2.3.4", false);
	/* IPv6: the /32, a /36 for he.net. */
	assert_same_group("[2a01:4f8:1:2::1]", "[2a01:4f8:ffff::1]", true);
	assert_same_group("[2a01:4f8::1]", "[2a01:4f9::1]", false);
	assert_same_group("[2001:470:1::1]", "[2001:470:fff::1]", true);
	assert_same_group("[2001:470:1::1]", "[2001:470:f000::1]", false);
	/* IPv4 inside IPv6: 6to4 and Teredo group by the IPv4 address. */
	assert_same_group("[2002:102:304::1]", "1.2.99.99", true);
	assert_same_group("[2001:0:1234::fefd:fcfb]", "1.2.3.4", true);
	assert_network("1.2.3.4", NET_NETWORK_IPV4);
	assert_network("[::ffff:1.2.3.4]", NET_NETWORK_IPV4);
	assert_network("[2002:102:304::1]", NET_NETWORK_IPV4);
	assert_network("[2a01:4f8::1]", NET_NETWORK_IPV6);
	assert_network("127.0.0.1", NET_NETWORK_UNROUTABLE);
	assert_network("[::1]", NET_NETWORK_UNROUTABLE);
	assert_network("[fe80::1]", NET_NETWORK_UNROUTABLE);
	assert_network("100.64.0.1", NET_NETWORK_UNROUTABLE);
}

/* ---- the accept path (daemon/net/net.c) ------------------------------- */

/* A connection to 127.0.0.1:port from the loopback address `from`. */
static int connect_from(const char *from, uint16_t port)
{
	struct sockaddr_in src = {.sin_family = AF_INET};
	struct sockaddr_in dst = {.sin_family = AF_INET,
	                          .sin_port = htons(port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(inet_pton(AF_INET, from, &src.sin_addr), 1);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	int rc = connect(fd, (struct sockaddr *)&dst, sizeof(dst));
	assert_true(rc == 0 || errno == EINPROGRESS);
	return fd;
}

/* Run the loop until cond holds (up to about a second). */
#define RUN_UNTIL(t, cond)                                                                         \
	do {                                                                                       \
		for (int i_ = 0; i_ < 2000 && !(cond); i_++) {                                     \
			uv_run(&(t)->loop, UV_RUN_NOWAIT);                                         \
			usleep(500);                                                               \
		}                                                                                  \
	} while (0)

/* Listen on 127.0.0.1 with `slots` inbound slots and fill them from
 * 127.0.0.1, one at a time (so the last is the youngest). */
static void fill_slots(struct tf *t, uint32_t slots, int *fds)
{
	uint16_t port = tf_listen_loopback(t);
	/* Core's share: the automatic outbound slots come off maxconnections. */
	t->d->net->maxconnections =
	    slots + NET_MAX_OUTBOUND_FULL + NET_MAX_BLOCK_RELAY + NET_MAX_FEELER;
	net_init_limits(t->d);
	assert_int_equal(net_max_inbound(t->d), slots);
	assert_int_equal(net_start_listeners(t->d), 0);
	for (uint32_t i = 0; i < slots; i++) {
		fds[i] = connect_from("127.0.0.1", port);
		RUN_UNTIL(t, t->d->n_inbound == i + 1);
		if (t->d->n_inbound != i + 1)
			fail_msg("connection %u not accepted (%u inbound)", i, t->d->n_inbound);
	}
}

static void close_all(struct tf *t, int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	net_close_listeners(t->d);
	for (int i = 0; i < 10; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
}

static struct peer *peer_from(struct tf *t, const char *ip)
{
	for (uint32_t i = 0; i < t->d->n_peers; i++) {
		struct peer *p = t->d->peers[i];
		char a[INET6_ADDRSTRLEN];
		net_addr_format_ip(&p->addr, a);
		if (p->state != PEER_CLOSING && !strcmp(a, ip))
			return p;
	}
	return NULL;
}

/* tf_teardown, after closing the listeners a failed test left open (the
 * loop would otherwise run forever). */
static int teardown_listening(void **state)
{
	struct tf *t = *state;
	net_close_listeners(t->d);
	return tf_teardown(state);
}

/* 24 slots held from one address (more than the 20 always protected): a
 * newcomer from another evicts the youngest and is accepted. */
static void test_accept_evicts_youngest(void **state)
{
	struct tf *t = *state;
	enum { SLOTS = 24 };
	int fds[SLOTS + 1];
	fill_slots(t, SLOTS, fds);
	uint16_t port = t->conf.port;
	fds[SLOTS] = connect_from("127.0.0.2", port);
	RUN_UNTIL(t, t->d->stats.inbound_evicted == 1 && peer_from(t, "127.0.0.2"));
	assert_int_equal(t->d->stats.inbound_evicted, 1);
	assert_int_equal(t->d->stats.inbound_rejected_full, 0);
	assert_non_null(peer_from(t, "127.0.0.2"));
	assert_int_equal(t->d->n_inbound, SLOTS);
	if (!tf_closed_by_peerd(t, fds[SLOTS - 1], 2000))
		fail_msg("the youngest connection was not evicted");
	for (int i = 0; i < SLOTS - 1; i++) {
		if (tf_closed_by_peerd(t, fds[i], 1))
			fail_msg("connection %d closed: only the youngest should go", i);
	}
	if (tf_closed_by_peerd(t, fds[SLOTS], 1))
		fail_msg("the newcomer was closed");
	assert_true(
	    tf_log_contains(t, "selected inbound connection for eviction, disconnecting peer="));
	close_all(t, fds, SLOTS + 1);
}

/* 20 slots: all protected, the newcomer is refused and counted. */
static void test_accept_refused_when_all_protected(void **state)
{
	struct tf *t = *state;
	enum { SLOTS = 20 };
	int fds[SLOTS + 1];
	fill_slots(t, SLOTS, fds);
	fds[SLOTS] = connect_from("127.0.0.2", t->conf.port);
	if (!tf_closed_by_peerd(t, fds[SLOTS], 2000))
		fail_msg("the newcomer was not refused");
	assert_int_equal(t->d->stats.inbound_rejected_full, 1);
	assert_int_equal(t->d->stats.inbound_evicted, 0);
	assert_int_equal(t->d->n_inbound, SLOTS);
	assert_true(
	    tf_log_contains(t, "failed to find an eviction candidate - connection dropped (full)"));
	close_all(t, fds, SLOTS + 1);
}

/* Nobody is evicted for a banned or a discouraged newcomer. */
static void test_accept_banned_evicts_nobody(void **state)
{
	struct tf *t = *state;
	enum { SLOTS = 24 };
	int fds[SLOTS + 2];
	fill_slots(t, SLOTS, fds);
	uint8_t net[16], prefix;
	assert_int_equal(ban_parse_subnet("127.0.0.2", net, &prefix), 0);
	assert_int_equal(ban_add(t->d, net, prefix, (int64_t)time(NULL) + 3600), 0);
	fds[SLOTS] = connect_from("127.0.0.2", t->conf.port);
	if (!tf_closed_by_peerd(t, fds[SLOTS], 2000))
		fail_msg("the banned newcomer was not refused");
	assert_int_equal(t->d->stats.inbound_rejected_banned, 1);
	/* Discouraged: loopback is never discouraged by misbehaviour, so mark
	 * the address as ban_misbehaving would for a routable one. */
	union net_addr a;
	assert_int_equal(net_addr_parse("127.0.0.3", 0, &a), 0);
	uint8_t ip[16];
	net_addr_ip16(&a, ip);
	assert_int_equal(hset_insert(&t->d->ban->discouraged, daemon_fingerprint(t->d, ip, 16)), 0);
	if (ban_check(t->d, &a) != BAN_DISCOURAGED)
		fail_msg("could not mark 127.0.0.3 discouraged for the test");
	fds[SLOTS + 1] = connect_from("127.0.0.3", t->conf.port);
	if (!tf_closed_by_peerd(t, fds[SLOTS + 1], 2000))
		fail_msg("the discouraged newcomer was not refused");
	assert_int_equal(t->d->stats.inbound_rejected_discouraged, 1);
	assert_int_equal(t->d->stats.inbound_evicted, 0);
	assert_int_equal(t->d->n_inbound, SLOTS);
	close_all(t, fds, SLOTS + 2);
}

/* A burst of connections is accepted a share per loop turn
 * (NET_ACCEPTS_PER_TURN), the rest in the turns after: libuv alone would
 * accept the whole backlog in one turn and a reconnecting flood would hold
 * the loop from every established peer. */
static void test_accepts_a_share_per_turn(void **state)
{
	struct tf *t = *state;
	enum { BURST = 2 * NET_ACCEPTS_PER_TURN + 3 };
	int fds[BURST];
	uint16_t port = tf_listen_loopback(t);
	assert_int_equal(net_start_listeners(t->d), 0);
	/* Loopback connections complete in the kernel's backlog at once. */
	for (int i = 0; i < BURST; i++)
		fds[i] = connect_from("127.0.0.1", port);
	uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(t->d->n_inbound, NET_ACCEPTS_PER_TURN);
	RUN_UNTIL(t, t->d->n_inbound == BURST);
	assert_int_equal(t->d->n_inbound, BURST);
	close_all(t, fds, BURST);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_protection_by_ratio),
	    cmocka_unit_test(test_eviction_randomized),
	    cmocka_unit_test(test_protection_counts),
	    cmocka_unit_test(test_prefer_evict),
	    cmocka_unit_test(test_biggest_group_youngest),
	    cmocka_unit_test(test_noban_and_manual_never),
	    cmocka_unit_test(test_flood_from_one_address),
	    cmocka_unit_test(test_netgroups),
	    cmocka_unit_test_setup_teardown(test_accept_evicts_youngest, tf_setup,
	                                    teardown_listening),
	    cmocka_unit_test_setup_teardown(test_accept_refused_when_all_protected, tf_setup,
	                                    teardown_listening),
	    cmocka_unit_test_setup_teardown(test_accept_banned_evicts_nobody, tf_setup,
	                                    teardown_listening),
	    cmocka_unit_test_setup_teardown(test_accepts_a_share_per_turn, tf_setup,
	                                    teardown_listening),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
