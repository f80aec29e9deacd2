/*
 * bench/bench_addrman.c: the address manager, mirroring Bitcoin Core's
 * src/bench/addrman.cpp (same names, same shapes): 64 sources of 256
 * random IPv6 addresses each (random bytes, as Core's; the unroutable
 * ones are refused on the way in, as there), a fresh addrman per
 * AddrManAdd/AddrManAddThenGood run, Select and GetAddr on a filled one.
 * Core's bench_bitcoin -filter='AddrMan.*' gives the rows to set beside.
 */
#include <stdio.h>
#include <string.h>

#include "addrman/addrman.h"
#include "addrman/internal.h"
#include "base/alloc.h"
#include "bench/bench.h"

#define NUM_SOURCES              64
#define NUM_ADDRESSES_PER_SOURCE 256
#define NOW                      INT64_C(1700000000)

static struct addrman_service sources[NUM_SOURCES];
static struct addrman_address addresses[NUM_SOURCES][NUM_ADDRESSES_PER_SOURCE];
static bool created;

static uint64_t next(uint64_t *s)
{
	/* splitmix64: any fixed stream of bytes will do */
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static struct addrman_service rand_addr(uint64_t *s)
{
	uint8_t ip[16];
	uint64_t a = next(s), b = next(s);
	memcpy(ip, &a, 8);
	memcpy(ip + 8, &b, 8);
	uint16_t port = (uint16_t)next(s);
	return addrman_service_from_v1(ip, port ? port : 1);
}

static void create_addresses(void)
{
	if (created)
		return;
	uint64_t s = 123;
	for (int i = 0; i < NUM_SOURCES; i++) {
		sources[i] = rand_addr(&s);
		for (int j = 0; j < NUM_ADDRESSES_PER_SOURCE; j++)
			addresses[i][j] = (struct addrman_address){
			    .svc = rand_addr(&s), .time = NOW, .services = 1};
	}
	created = true;
}

static void fill(struct bench_ctx *ctx, struct addrman *am)
{
	create_addresses();
	for (int i = 0; i < NUM_SOURCES; i++)
		if (addrman_add(am, addresses[i], NUM_ADDRESSES_PER_SOURCE, &sources[i], 0, NOW,
		                NULL))
			bench_fail(ctx, "out of memory");
}

BENCH(AddrManAdd)
{
	create_addresses();
	bench_reset(ctx);
	size_t size = 0, heap = 0;
	for (size_t i = 0; i < n; i++) {
		struct addrman *am = addrman_new(false, 0);
		fill(ctx, am);
		size = addrman_size(am, -1, -1);
		heap = am->cap_info * sizeof(*am->info) + am->cap_random * sizeof(*am->vrandom) +
		       hmap_bytes(&am->by_addr);
		addrman_free(am);
	}
	bench_note(ctx,
	           "%zu of %d addresses kept; %zu bytes of entries and index (%.0f a entry) "
	           "beside the %zu bytes of tables",
	           size, NUM_SOURCES * NUM_ADDRESSES_PER_SOURCE, heap,
	           size ? (double)heap / (double)size : 0.0, sizeof(struct addrman));
}

BENCH(AddrManSelect)
{
	struct addrman *am = addrman_new(false, 0);
	fill(ctx, am);
	bench_reset(ctx);
	struct addrman_address out;
	for (size_t i = 0; i < n; i++) {
		if (!addrman_select(am, false, 0, NOW, &out, NULL) || out.svc.port == 0) {
			bench_fail(ctx, "nothing selected");
			break;
		}
	}
	bench_stop(ctx);
	addrman_free(am);
}

BENCH(AddrManSelectFromAlmostEmpty)
{
	struct addrman *am = addrman_new(false, 0);
	struct addrman_address a = {.svc = addrman_service_ipv4(250, 3, 1, 1, 8333)};
	if (addrman_add(am, &a, 1, &a.svc, 0, NOW, NULL))
		bench_fail(ctx, "out of memory");
	bench_reset(ctx);
	struct addrman_address out;
	for (size_t i = 0; i < n; i++)
		bench_keep(addrman_select(am, false, 0, NOW, &out, NULL));
	bench_stop(ctx);
	addrman_free(am);
}

BENCH(AddrManSelectByNetwork)
{
	struct addrman *am = addrman_new(false, 0);
	uint8_t key[32];
	memset(key, 0x5a, sizeof(key));
	struct addrman_address i2p = {.time = NOW};
	struct addrman_service src = addrman_service_ipv4(252, 2, 2, 2, 0);
	if (addrman_service_from_bip155(5, key, 32, 0, &i2p.svc) ||
	    addrman_add(am, &i2p, 1, &src, 0, NOW, NULL))
		bench_fail(ctx, "no i2p address");
	fill(ctx, am);
	bench_reset(ctx);
	struct addrman_address out;
	for (size_t i = 0; i < n; i++)
		bench_keep(addrman_select(am, false, 1u << ADDRMAN_NET_I2P, NOW, &out, NULL));
	bench_stop(ctx);
	addrman_free(am);
}

BENCH(AddrManGetAddr)
{
	struct addrman *am = addrman_new(false, 0);
	fill(ctx, am);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct addrman_address *v;
		long got = addrman_getaddr(am, 2500, 23, -1, true, NOW, &v);
		if (got <= 0) {
			bench_fail(ctx, "getaddr gave %ld", got);
			break;
		}
		xfree(v);
	}
	bench_stop(ctx);
	addrman_free(am);
}

BENCH(AddrManAddThenGood)
{
	create_addresses();
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct addrman *am = addrman_new(false, 0);
		fill(ctx, am);
		for (int s = 0; s < NUM_SOURCES; s++)
			for (int a = 0; a < NUM_ADDRESSES_PER_SOURCE; a++)
				(void)addrman_good(am, &addresses[s][a].svc, NOW);
		addrman_free(am);
	}
}
