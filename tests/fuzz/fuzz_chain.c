/*
 * tests/fuzz/fuzz_chain.c: blocks and headers against a real chain.
 *
 * Each input is a script of operations on a fresh regtest chain in a
 * directory under /dev/shm (so the database and block files cost no disk
 * I/O): op 0 submits a block, op 1 offers headers, op 2 invalidates and
 * op 3 reconsiders a block by index into what was accepted. The seeds are
 * the first blocks of Core's regtest chain, so the fuzzer starts from
 * blocks that connect and mutates from there. After every operation the
 * chain must hold its invariants: the tip is a valid, linked block on the
 * best chain, the coins are at the tip, and nothing crashes or leaks.
 * Input: repeated [op (1 byte)] [length (2 bytes LE)] [payload].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/chain.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_chain: invariant broken: %s\n", what);
		abort();
	}
}

static char dir[64];

static void wipe(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	check(system(cmd) == 0, "cannot clean the chain directory");
}

static void invariants(struct chain *c)
{
	struct chain_node *tip = chain_tip(c);
	check(tip != NULL, "no tip");
	check(!chain_node_failed(tip), "the tip is marked invalid");
	check(chain_node_level(tip) >= CHAIN_VALID_SCRIPTS, "the tip is not fully validated");
	check(tip->linked, "the tip lacks data");
	check(proto_hash_eq(chain_coins_best_block(chain_get_coins(c)), &tip->hash),
	      "the coins are not at the tip");
	check(chain_at(c, tip->height) == tip, "the active chain does not end at the tip");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/peerd-fuzz-chain-%d", (int)getpid());
		atexit(wipe);
	}
	wipe();
	struct chain_config cfg = {
	    .params = proto_params(PROTO_NET_REGTEST),
	    .dir = dir,
	    .dbcache_bytes = 1 << 20,
	    .par = 1,
	};
	struct chain *c;
	check(chain_open(&c, &cfg) == 0, "chain_open");
	struct proto_block b;
	proto_block_init(&b);
	struct chain_node *seen[64];
	size_t n_seen = 0;
	size_t off = 0;
	while (off + 3 <= size) {
		uint8_t op = data[off] & 3;
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
		off += 3;
		if (len > size - off)
			len = size - off;
		const uint8_t *p = data + off;
		off += len;
		struct chain_state st;
		chain_state_clear(&st);
		if (op == 0) {
			if (proto_block_decode(p, len, &b, NULL))
				continue;
			enum chain_submit res;
			int err = chain_submit_block(c, p, len, &b, &res, &st);
			check(err == 0, "submitblock failed hard");
			check(res != CHAIN_SUBMIT_REJECTED || st.reason[0],
			      "a reject without a reason");
			struct proto_hash h;
			proto_block_header_hash(&b.hdr, &h);
			struct chain_node *n = chain_index_find(chain_get_index(c), &h);
			if (n && n_seen < 64)
				seen[n_seen++] = n;
		} else if (op == 1) {
			struct proto_block_header hdrs[16];
			size_t n = 0;
			struct proto_reader r;
			proto_reader_init(&r, p, len);
			while (n < 16 && proto_block_header_decode(&r, &hdrs[n]) == 0)
				n++;
			struct chain_node *last = NULL;
			int err = chain_accept_headers(c, hdrs, n, &last, &st);
			check(err == 0 || err == CHAIN_EINVALID, "headers failed hard");
		} else if (n_seen && len >= 1) {
			struct chain_node *n = seen[p[0] % n_seen];
			int err =
			    op == 2 ? chain_invalidate(c, n, &st) : chain_reconsider(c, n, &st);
			check(err == 0 || err == CHAIN_EINVALID,
			      "invalidate/reconsider failed hard");
		}
		invariants(c);
	}
	proto_block_release(&b);
	check(chain_close(c) == 0, "chain_close");
	return 0;
}
