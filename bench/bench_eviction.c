/*
 * bench/bench_eviction.c: the EvictionProtection rows of Bitcoin Core's
 * bench/peer_eviction.cpp, over daemon/net/eviction.c.
 *
 * Each op copies a prepared set of candidates and runs the ratio
 * protection on the copy (net_evict_protect_by_ratio, Core's
 * ProtectEvictionCandidatesByRatio), as Core's rows do: random candidates
 * (a fixed seed), connected at their id, with 0 to 3 disadvantaged
 * networks among 50, 100 or 250. EvictionSelect250Candidates (peerd's
 * own row) runs the whole choice, every protection, over 250.
 */
#include <string.h>

#include "bench/bench.h"
#include "daemon/net/net.h"

#define EVB_MAX 250

static uint64_t evb_state;

static uint64_t evb_next(void)
{
	uint64_t z = (evb_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Core's GetRandomNodeEvictionCandidates, then connected at the id. */
static void evb_random(struct net_evict_candidate *c, int n)
{
	evb_state = 1;
	for (int id = 0; id < n; id++) {
		struct net_evict_candidate *x = c + id;
		memset(x, 0, sizeof(*x));
		x->id = (uint64_t)id;
		x->connected = id;
		x->min_ping_us = (int64_t)(evb_next() % 100);
		x->last_block_time = (int64_t)(evb_next() % 100);
		x->last_tx_time = (int64_t)(evb_next() % 100);
		x->relevant_services = evb_next() & 1;
		x->relay_txs = evb_next() & 1;
		x->bloom_filter = evb_next() & 1;
		x->keyed_netgroup = evb_next() % 100;
		x->prefer_evict = evb_next() & 1;
		x->is_local = evb_next() & 1;
		x->network = (enum net_network)(evb_next() % NET_NETWORK__COUNT);
		x->conn_type = PEER_CONN_INBOUND;
	}
}

/* Ids [lo, hi) get this network (or are local). */
struct evb_range {
	int lo, hi;
	enum net_network net; /* NET_NETWORK__COUNT: localhost */
};

static void evb_setup(struct net_evict_candidate *c, int n, bool set_local,
                      const struct evb_range *r, size_t nr)
{
	evb_random(c, n);
	for (int i = 0; i < n; i++) {
		if (set_local)
			c[i].is_local = false;
		c[i].network = NET_NETWORK_IPV4;
		for (size_t k = 0; k < nr; k++) {
			if (i < r[k].lo || i >= r[k].hi)
				continue;
			if (r[k].net == NET_NETWORK__COUNT)
				c[i].is_local = true;
			else
				c[i].network = r[k].net;
		}
	}
}

static void evb_run(struct bench_ctx *ctx, size_t iters, const struct net_evict_candidate *c, int n)
{
	struct net_evict_candidate copy[EVB_MAX];
	size_t want = (size_t)(n - n / 2), left = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < iters; i++) {
		memcpy(copy, c, sizeof(c[0]) * (size_t)n);
		left = net_evict_protect_by_ratio(copy, (size_t)n);
		bench_keep(left);
	}
	bench_stop(ctx);
	if (iters && left != want)
		bench_fail(ctx, "%zu candidates left of %d, expected %zu", left, n, want);
}

BENCH(EvictionProtection0Networks250Candidates)
{
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 250, false, NULL, 0);
	evb_run(ctx, n, c, 250);
}

BENCH(EvictionProtection1Networks250Candidates)
{
	static const struct evb_range r[] = {{130, 240, NET_NETWORK_ONION}}; /* 110 Tor */
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 250, true, r, 1);
	evb_run(ctx, n, c, 250);
}

BENCH(EvictionProtection2Networks250Candidates)
{
	static const struct evb_range r[] = {{90, 160, NET_NETWORK_ONION}, /* 70 Tor */
	                                     {170, 250, NET_NETWORK_I2P}}; /* 80 I2P */
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 250, true, r, 2);
	evb_run(ctx, n, c, 250);
}

BENCH(EvictionProtection3Networks050Candidates)
{
	static const struct evb_range r[] = {{28, 29, NET_NETWORK__COUNT}, /* 2 localhost */
	                                     {47, 48, NET_NETWORK__COUNT},
	                                     {30, 47, NET_NETWORK_I2P},    /* 17 I2P */
	                                     {24, 28, NET_NETWORK_ONION}}; /* 4 Tor */
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 50, true, r, 4);
	evb_run(ctx, n, c, 50);
}

BENCH(EvictionProtection3Networks100Candidates)
{
	static const struct evb_range r[] = {{55, 60, NET_NETWORK__COUNT}, /* 5 localhost */
	                                     {70, 80, NET_NETWORK_I2P},    /* 10 I2P */
	                                     {80, 96, NET_NETWORK_ONION}}; /* 16 Tor */
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 100, true, r, 3);
	evb_run(ctx, n, c, 100);
}

BENCH(EvictionProtection3Networks250Candidates)
{
	static const struct evb_range r[] = {{140, 160, NET_NETWORK__COUNT}, /* 20 localhost */
	                                     {170, 180, NET_NETWORK_I2P},    /* 10 I2P */
	                                     {190, 240, NET_NETWORK_ONION}}; /* 50 Tor */
	struct net_evict_candidate c[EVB_MAX];
	evb_setup(c, 250, true, r, 3);
	evb_run(ctx, n, c, 250);
}

/* peerd's own row: the whole choice (every protection, then the group). */
BENCH(EvictionSelect250Candidates)
{
	struct net_evict_candidate c[EVB_MAX], copy[EVB_MAX];
	evb_random(c, 250);
	uint64_t id = 0;
	bool found = false;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		memcpy(copy, c, sizeof(c));
		found = net_evict_select(copy, 250, &id);
		bench_keep(id);
	}
	bench_stop(ctx);
	if (n && !found)
		bench_fail(ctx, "no candidate chosen among 250");
}
