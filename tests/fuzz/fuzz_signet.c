/*
 * tests/fuzz/fuzz_signet.c: the signet block solution (chain/signet.c).
 *
 * Input: [challenge length (1 byte)] [challenge] [a block]. Whatever block
 * decodes is judged under a custom signet of that challenge: the verdict
 * must be one of the documented codes, a rejection must carry Core's
 * reason, and the same block must get the same verdict twice (nothing is
 * kept between calls). The commitment script and the solution inside it
 * are attacker-chosen bytes: no read may leave them (ASan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_signet: invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size - 1 < data[0])
		return 0;
	size_t clen = data[0];
	const struct proto_params *p = proto_params_signet_custom(data + 1, clen);
	check(p != NULL, "a short challenge refused");
	struct proto_block b;
	proto_block_init(&b);
	if (proto_block_decode(data + 1 + clen, size - 1 - clen, &b, NULL) == 0) {
		struct chain_state st;
		chain_state_clear(&st);
		int err = chain_check_signet_block(&b, p, &st);
		check(err == 0 || err == CHAIN_EINVALID || err == CHAIN_ENOMEM,
		      "undocumented code");
		if (err == CHAIN_EINVALID)
			check(strcmp(st.reason, "bad-signet-blksig") == 0, "reason");
		if (err != CHAIN_ENOMEM) {
			int again = chain_check_signet_block(&b, p, NULL);
			check(again == err || again == CHAIN_ENOMEM, "verdict changed");
		}
	}
	proto_block_release(&b);
	return 0;
}
