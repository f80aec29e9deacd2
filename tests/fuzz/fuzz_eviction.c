/*
 * tests/fuzz/fuzz_eviction.c: the choice of an inbound peer to evict
 * (daemon/net/eviction.c), as Core's fuzz target node_eviction.
 *
 * The input is a list of candidates, 8 bytes each (connected time, ping,
 * last block, last transaction, keyed group, network, two bytes of flags).
 * Whatever they are: the one chosen is one of them, inbound and not noban;
 * with 20 or fewer evictable candidates nobody is chosen, with 29 or more
 * somebody is; the choice does not depend on the candidates' order (the
 * order is total); and the ratio protection keeps the half it should.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/net/net.h"

#define FE_MAX   512
#define FE_BYTES 8

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_eviction: %s\n", what);
		abort();
	}
}

static size_t decode(const uint8_t *data, size_t size, struct net_evict_candidate *c)
{
	size_t n = size / FE_BYTES;
	if (n > FE_MAX)
		n = FE_MAX;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = data + i * FE_BYTES;
		struct net_evict_candidate *x = c + i;
		memset(x, 0, sizeof(*x));
		x->id = i;
		x->connected = b[0];
		x->min_ping_us = b[1] == 255 ? INT64_MAX : b[1];
		x->last_block_time = b[2];
		x->last_tx_time = b[3];
		x->keyed_netgroup = b[4];
		x->network = (enum net_network)(b[5] % NET_NETWORK__COUNT);
		x->relevant_services = b[6] & 1;
		x->relay_txs = b[6] & 2;
		x->bloom_filter = b[6] & 4;
		x->prefer_evict = b[6] & 8;
		x->is_local = b[6] & 16;
		x->noban = b[6] & 32;
		x->conn_type = (b[6] & 64) ? PEER_CONN_MANUAL : PEER_CONN_INBOUND;
		(void)b[7]; /* reserved: keeps records aligned as the format grows */
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct net_evict_candidate c[FE_MAX], work[FE_MAX];
	size_t n = decode(data, size, c);
	size_t evictable = 0;
	for (size_t i = 0; i < n; i++)
		evictable += !c[i].noban && c[i].conn_type == PEER_CONN_INBOUND;

	memcpy(work, c, n * sizeof(c[0]));
	uint64_t id = UINT64_MAX;
	bool found = net_evict_select(work, n, &id);
	if (found) {
		check(id < n, "chose an id that is not a candidate");
		check(!c[id].noban, "chose a noban peer");
		check(c[id].conn_type == PEER_CONN_INBOUND, "chose a peer that is not inbound");
	}
	if (evictable <= 20)
		check(!found, "chose one of 20 or fewer (all are protected)");
	if (evictable >= 29)
		check(found, "chose none of 29 or more");

	/* Reversed, the same choice. */
	for (size_t i = 0; i < n; i++)
		work[i] = c[n - 1 - i];
	uint64_t id2 = UINT64_MAX;
	bool found2 = net_evict_select(work, n, &id2);
	check(found == found2 && (!found || id == id2), "the choice depends on the order");

	/* The ratio protection: half protected (rounded down), the rest a
	 * subset of the input, youngest first. */
	memcpy(work, c, n * sizeof(c[0]));
	size_t left = net_evict_protect_by_ratio(work, n);
	check(left == n - n / 2, "the ratio protection kept the wrong count");
	static bool seen[FE_MAX];
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < left; i++) {
		check(work[i].id < n && !seen[work[i].id], "a candidate invented or repeated");
		seen[work[i].id] = true;
		check(i == 0 || work[i - 1].connected >= work[i].connected, "not youngest first");
	}
	return 0;
}
