/*
 * daemon/net/eviction.c: which inbound peer to disconnect when a newcomer
 * finds every inbound slot taken (Bitcoin Core's node/eviction.cpp,
 * SelectNodeToEvict and ProtectEvictionCandidatesByRatio).
 *
 * A pure function over a list of candidates: no daemon, no clock, no
 * allocation of its own. net.c gathers the candidates from the peers (Core's
 * CConnman::AttemptToEvictConnection) and disconnects the one chosen.
 *
 * The idea, Core's: an attacker can cheaply open many connections, but
 * cannot cheaply be diverse (network groups), close (ping), useful (novel
 * transactions and blocks) or old. So each of those qualities protects a
 * few peers, the longest-connected half of the rest is protected too, and
 * the one evicted is the youngest peer of the network group holding the
 * most of what is left: the attacker's own connections.
 *
 * Orders: Core sorts the candidates for each step and protects the last k
 * of the order; std::sort leaves the order among equals unspecified. Here
 * every comparison ends in a tie-break (the younger first: the later
 * connection time, then the larger id, ids growing with each connection),
 * so each order is total, the result does not depend on the order the
 * candidates come in, and among equals the older peer is the one kept, as
 * Core's own comparators prefer where they say anything. That also lets
 * the five fixed-count steps find their last k without sorting, and the
 * ratio step sort once instead of once per network: two sorts in all
 * (tests/unit/test_daemon_eviction.c checks Core's cases; a sort-based
 * port gave the same answers on 200,000 random sets).
 */
#include "daemon/net/net.h"

#include <stdlib.h>

/* Protections, Core's counts. */
#define EVICT_PROTECT_NETGROUP         4u
#define EVICT_PROTECT_PING             8u
#define EVICT_PROTECT_TX               4u
#define EVICT_PROTECT_BLOCK_RELAY_ONLY 8u
#define EVICT_PROTECT_BLOCK            4u

typedef int (*evict_cmp_fn)(const void *a, const void *b, void *ctx);
typedef bool (*evict_pred_fn)(const struct net_evict_candidate *c, const void *ctx);

/* -1 when a sorts before b, i.e. is the likelier to be evicted. */
static int before(bool a_first)
{
	return a_first ? -1 : 1;
}

/* The tie-break ending every order: the younger connection first. */
static int younger_first(const struct net_evict_candidate *a, const struct net_evict_candidate *b)
{
	if (a->connected != b->connected)
		return before(a->connected > b->connected);
	if (a->id != b->id)
		return before(a->id > b->id);
	return 0;
}

/* Core's ReverseCompareNodeTimeConnected: the oldest last (protected). */
static int cmp_connected(const void *pa, const void *pb, void *ctx)
{
	(void)ctx;
	return younger_first(pa, pb);
}

/* Core's ReverseCompareNodeMinPingTime: the fastest last. */
static int cmp_ping(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->min_ping_us != b->min_ping_us)
		return before(a->min_ping_us > b->min_ping_us);
	return younger_first(a, b);
}

/* Core's CompareNetGroupKeyed: the largest keyed group last. Which groups
 * those are is secret (the key is random at start), so an attacker cannot
 * pick addresses that win this protection. */
static int cmp_netgroup(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->keyed_netgroup != b->keyed_netgroup)
		return before(a->keyed_netgroup < b->keyed_netgroup);
	return younger_first(a, b);
}

/* Core's CompareNodeBlockTime: the latest novel block last; many peers
 * never sent one, so then those with the services we want, then age. */
static int cmp_block(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->last_block_time != b->last_block_time)
		return before(a->last_block_time < b->last_block_time);
	if (a->relevant_services != b->relevant_services)
		return before(b->relevant_services);
	return younger_first(a, b);
}

/* Core's CompareNodeTXTime: the latest novel transaction last; then the
 * peers that relay transactions, then those without a bloom filter. */
static int cmp_tx(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->last_tx_time != b->last_tx_time)
		return before(a->last_tx_time < b->last_tx_time);
	if (a->relay_txs != b->relay_txs)
		return before(b->relay_txs);
	if (a->bloom_filter != b->bloom_filter)
		return before(a->bloom_filter);
	return younger_first(a, b);
}

/* Core's CompareNodeBlockRelayOnlyTime: peers that do not relay
 * transactions last, among them the latest novel block last. */
static int cmp_block_relay_only(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->relay_txs != b->relay_txs)
		return before(a->relay_txs);
	if (a->last_block_time != b->last_block_time)
		return before(a->last_block_time < b->last_block_time);
	if (a->relevant_services != b->relevant_services)
		return before(b->relevant_services);
	return younger_first(a, b);
}

/* A disadvantaged network of the ratio protection: localhost, or one
 * network (Core's struct Net). */
struct evict_net {
	bool is_local;
	enum net_network id;
	size_t count;
};

static bool in_net(const struct net_evict_candidate *c, const struct evict_net *n)
{
	return n->is_local ? c->is_local : c->network == n->id;
}

/*
 * Core sorts by CompareNodeNetworkTime (the network's peers last, each part
 * by age, the oldest last) and protects those of the network among the
 * last k: the k oldest of the network's peers, or all of them if fewer.
 * On a list already youngest first that is a walk from its old end, and
 * the list stays youngest first: one sort for the whole ratio step.
 */
static size_t protect_oldest_in_net(struct net_evict_candidate *c, size_t n,
                                    const struct evict_net *net, size_t k)
{
	size_t cut = n, seen = 0;
	while (cut > 0 && seen < k) {
		cut--;
		seen += in_net(c + cut, net);
	}
	size_t kept = cut;
	for (size_t i = cut; i < n; i++) {
		if (!in_net(c + i, net))
			c[kept++] = c[i];
	}
	return kept;
}

static bool pred_all(const struct net_evict_candidate *c, const void *ctx)
{
	(void)c;
	(void)ctx;
	return true;
}

static bool pred_block_relay_only(const struct net_evict_candidate *c, const void *ctx)
{
	(void)ctx;
	return !c->relay_txs && c->relevant_services;
}

/* The most any single step protects (the ping's 8). */
#define EVICT_TOP_MAX 8u
_Static_assert(EVICT_PROTECT_PING <= EVICT_TOP_MAX &&
                   EVICT_PROTECT_BLOCK_RELAY_ONLY <= EVICT_TOP_MAX &&
                   EVICT_PROTECT_NETGROUP <= EVICT_TOP_MAX && EVICT_PROTECT_TX <= EVICT_TOP_MAX &&
                   EVICT_PROTECT_BLOCK <= EVICT_TOP_MAX,
               "protect_last keeps at most EVICT_TOP_MAX");

/*
 * Core's EraseLastKElements: sort c[0..n), then remove those of the last k
 * that match pred (they are protected). The last k of a total order are
 * its k greatest, so no sort is needed: one pass keeps the k greatest in
 * a small sorted list, a second removes those of them that match pred,
 * the rest keeping their places (each step orders them anew). Returns the
 * new count.
 */
static size_t protect_last(struct net_evict_candidate *c, size_t n, evict_cmp_fn cmp, size_t k,
                           evict_pred_fn pred)
{
	size_t top[EVICT_TOP_MAX], m = 0;
	if (k > n)
		k = n;
	if (k > EVICT_TOP_MAX)
		k = EVICT_TOP_MAX;
	for (size_t i = 0; i < n && k; i++) {
		size_t j;
		if (m < k) { /* insert, the list ascending */
			for (j = m++; j > 0 && cmp(c + i, c + top[j - 1], NULL) < 0; j--)
				top[j] = top[j - 1];
			top[j] = i;
			continue;
		}
		if (cmp(c + i, c + top[0], NULL) < 0)
			continue;
		/* Greater than the least kept: it goes, i takes its place. */
		for (j = 0; j + 1 < m && cmp(c + i, c + top[j + 1], NULL) > 0; j++)
			top[j] = top[j + 1];
		top[j] = i;
	}
	/* Positions ascending, for one compacting pass. */
	for (size_t a = 1; a < m; a++) {
		size_t x = top[a], b = a;
		for (; b > 0 && top[b - 1] > x; b--)
			top[b] = top[b - 1];
		top[b] = x;
	}
	size_t kept = 0, t = 0;
	for (size_t i = 0; i < n; i++) {
		if (t < m && top[t] == i) {
			t++;
			if (pred(c + i, NULL))
				continue;
		}
		c[kept++] = c[i];
	}
	return kept;
}

/* Core's ProtectNoBanConnections and ProtectOutboundConnections at once. */
static size_t drop_never_evicted(struct net_evict_candidate *c, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].noban && c[i].conn_type == PEER_CONN_INBOUND)
			c[kept++] = c[i];
	}
	return kept;
}

size_t net_evict_protect_by_ratio(struct net_evict_candidate *c, size_t n)
{
	/* Protect the half connected longest: without eviction they would all
	 * have stayed, and an attack that starts later cannot displace them.
	 * Up to half of that half goes to peers of disadvantaged networks
	 * (onion, I2P, CJDNS, localhost), which lose on ping and so would
	 * rarely be kept otherwise. */
	const size_t total_protect = n / 2;
	/* Core's order: among networks of equal counts the earlier ones get
	 * the first chance at slots left unused. */
	struct evict_net nets[4] = {
	    {false, NET_NETWORK_CJDNS, 0},
	    {false, NET_NETWORK_I2P, 0},
	    {true, NET_NETWORK__COUNT, 0}, /* localhost: no network matches */
	    {false, NET_NETWORK_ONION, 0},
	};
	for (size_t j = 0; j < 4; j++) {
		for (size_t i = 0; i < n; i++)
			nets[j].count += in_net(c + i, nets + j);
	}
	/* Fewest candidates first, stably (insertion sort of four). */
	for (size_t j = 1; j < 4; j++) {
		struct evict_net x = nets[j];
		size_t i = j;
		for (; i > 0 && nets[i - 1].count > x.count; i--)
			nets[i] = nets[i - 1];
		nets[i] = x;
	}
	if (n > 1)
		qsort_r(c, n, sizeof(*c), cmp_connected, NULL);
	const size_t max_by_network = total_protect / 2;
	size_t protected_n = 0;
	while (protected_n < max_by_network) {
		size_t n_networks = 0;
		for (size_t j = 0; j < 4; j++)
			n_networks += nets[j].count > 0;
		if (!n_networks)
			break;
		size_t per_network = (max_by_network - protected_n) / n_networks;
		if (per_network < 1)
			per_network = 1;
		bool any = false;
		bool full = false;
		for (size_t j = 0; j < 4 && !full; j++) {
			if (!nets[j].count)
				continue;
			size_t after = protect_oldest_in_net(c, n, nets + j, per_network);
			if (after < n) {
				size_t delta = n - after;
				any = true;
				protected_n += delta;
				n = after;
				if (protected_n >= max_by_network)
					full = true;
				else
					nets[j].count -= delta;
			}
		}
		if (!any || full)
			break;
	}
	/* The rest of the half by uptime alone: the oldest, at the end. */
	size_t rest = total_protect - protected_n;
	return n - (rest < n ? rest : n);
}

/* For the last step: by keyed group, and within a group in the list's
 * order (the younger first). */
static int cmp_group_then_age(const void *pa, const void *pb, void *ctx)
{
	const struct net_evict_candidate *a = pa, *b = pb;
	(void)ctx;
	if (a->keyed_netgroup != b->keyed_netgroup)
		return a->keyed_netgroup < b->keyed_netgroup ? -1 : 1;
	return younger_first(a, b);
}

bool net_evict_select(struct net_evict_candidate *c, size_t n, uint64_t *id)
{
	n = drop_never_evicted(c, n);
	/* Each quality protects a few; an attacker gets them only by being
	 * diverse (secret groups), close (ping) or useful (novel transactions
	 * and blocks: work). */
	n = protect_last(c, n, cmp_netgroup, EVICT_PROTECT_NETGROUP, pred_all);
	n = protect_last(c, n, cmp_ping, EVICT_PROTECT_PING, pred_all);
	n = protect_last(c, n, cmp_tx, EVICT_PROTECT_TX, pred_all);
	/* Up to 8 peers that relay no transactions (block-relay-only) but
	 * sent novel blocks and serve what we want. */
	n = protect_last(c, n, cmp_block_relay_only, EVICT_PROTECT_BLOCK_RELAY_ONLY,
	                 pred_block_relay_only);
	n = protect_last(c, n, cmp_block, EVICT_PROTECT_BLOCK, pred_all);
	n = net_evict_protect_by_ratio(c, n);
	if (!n)
		return false;

	/* Discouraged peers first, but only after the protections: a peer
	 * that is really the best by them (relaying blocks) stays. */
	bool any_prefer = false;
	for (size_t i = 0; i < n; i++)
		any_prefer |= c[i].prefer_evict;
	if (any_prefer) {
		size_t kept = 0;
		for (size_t i = 0; i < n; i++) {
			if (c[i].prefer_evict)
				c[kept++] = c[i];
		}
		n = kept;
	}

	/*
	 * The network group with the most connections, and on a tie the one
	 * whose youngest member is the youngest; its youngest member goes.
	 * Core walks the list (youngest first) counting each group, and a
	 * group takes the lead when it grows past the leader or matches it
	 * with a younger first member: so among groups equal in both, the
	 * one that reached that size first in the walk, i.e. whose oldest
	 * member is the youngest. Here: each group contiguous, youngest
	 * first, and the same three keys.
	 */
	qsort_r(c, n, sizeof(*c), cmp_group_then_age, NULL);
	size_t best = 0, best_size = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && c[j].keyed_netgroup == c[i].keyed_netgroup)
			j++;
		size_t size = j - i;
		bool lead;
		if (!best_size || size != best_size) {
			lead = size > best_size;
		} else if (c[i].connected != c[best].connected) {
			lead = c[i].connected > c[best].connected;
		} else {
			/* Reached the size first: the youngest last member. */
			lead = younger_first(c + j - 1, c + best + best_size - 1) < 0;
		}
		if (lead) {
			best = i;
			best_size = size;
		}
		i = j;
	}
	*id = c[best].id;
	return true;
}
