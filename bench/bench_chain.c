/*
 * bench/bench_chain.c: the block index.
 *
 *   HeaderIndex100k   100,000 regtest headers, each on the last, accepted
 *                     into a new index through chain_index_add_header
 *                     (Core's AcceptBlockHeader: hash, PoW, parent lookup,
 *                     next-work and MTP checks, insert, best header). The
 *                     headers are made and their nonces ground once,
 *                     untimed. One op = one header; the note gives
 *                     ns/header and the index's memory per header
 *                     (chain_index_memory: nodes, slabs, table).
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "chain/chain.h"

#define HEADERS 100000u

static struct proto_block_header *headers;

/* The chain, built once: regtest PoW takes two tries a header on average. */
static int make_headers(void)
{
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct proto_reader r;
	struct proto_block_header prev;
	proto_reader_init(&r, p->genesis, p->genesis_len);
	if (proto_block_header_decode(&r, &prev))
		return -1;
	headers = xcalloc(HEADERS, sizeof(*headers));
	if (!headers)
		return -1;
	struct proto_hash prev_hash;
	proto_block_header_hash(&prev, &prev_hash);
	for (uint32_t i = 0; i < HEADERS; i++) {
		struct proto_block_header *h = &headers[i];
		h->version = 0x20000000;
		h->prev = prev_hash;
		/* a different merkle root each, as real blocks have */
		proto_sha256(&i, sizeof(i), h->merkle_root.b);
		h->time = prev.time + 600;
		h->bits = 0x207fffff;
		h->nonce = 0;
		struct proto_hash hash;
		for (;;) {
			proto_block_header_hash(h, &hash);
			if (proto_check_pow(&hash, h->bits, &p->pow_limit))
				break;
			h->nonce++;
		}
		prev = *h;
		prev_hash = hash;
	}
	return 0;
}

BENCH_N(HeaderIndex100k, HEADERS)
{
	struct chain_index *idx;
	struct chain_state st;
	if (!headers && make_headers()) {
		bench_fail(ctx, "could not build the headers");
		return;
	}
	if (chain_index_new(&idx, proto_params(PROTO_NET_REGTEST))) {
		bench_fail(ctx, "chain_index_new failed");
		return;
	}
	int64_t now = (int64_t)headers[HEADERS - 1].time;
	size_t count = n < HEADERS ? n : HEADERS;
	bench_reset(ctx);
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < count; i++) {
		if (chain_index_add_header(idx, &headers[i], now, NULL, &st)) {
			bench_stop(ctx);
			bench_fail(ctx, "header %zu: %s (%s)", i, st.reason, st.debug);
			break;
		}
	}
	bench_stop(ctx);
	uint64_t took = bench_now_ns() - t0;
	struct chain_node *best = chain_index_best_header(idx);
	if (best->height != (int32_t)count)
		bench_fail(ctx, "best header at %d, expected %zu", best->height, count);
	size_t mem = chain_index_memory(idx), nodes = chain_index_count(idx);
	bench_note(ctx,
	           "%.1f ns/header, %.1f bytes/header (%zu headers in %zu bytes: %zu-byte "
	           "nodes in slabs, 4-byte table slots)",
	           (double)took / (double)count, (double)mem / (double)nodes, nodes, mem,
	           sizeof(struct chain_node));
	chain_index_free(idx);
}
