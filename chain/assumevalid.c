/*
 * chain/assumevalid.c: Core's assumevalid: the blocks whose scripts
 * ConnectBlock may leave unchecked.
 *
 * A node is configured (or ships, per network) with the hash of a block
 * whose history someone verified: a block on that history, deep enough
 * under the best header, has its scripts taken as valid. Everything else
 * ConnectBlock checks (inputs, amounts, BIP68, sigops, the coinbase, the
 * merkle root and witness commitment before it) still runs. The rule is
 * Core 29's fScriptChecks in validation.cpp, condition for condition: the
 * depth test (two weeks of work at the best header's difficulty) keeps a
 * miner from getting a fresh invalid block accepted by asking users to
 * set -assumevalid to it, and the minimum chain work keeps a node fed
 * only a weak chain from skipping anything.
 */
#include <string.h>

#include "chain/internal.h"

/* Core's "60 * 60 * 24 * 7 * 2" in ConnectBlock. */
#define TWO_WEEKS_SECONDS (60 * 60 * 24 * 7 * 2)

void chain_assume_valid_init(struct chain *c)
{
	memset(&c->assume_valid, 0, sizeof(c->assume_valid));
	if (c->cfg.assume_valid)
		c->assume_valid = *c->cfg.assume_valid;
	else if (c->p->assume_valid && proto_hash_from_hex(c->p->assume_valid, &c->assume_valid))
		memset(&c->assume_valid, 0, sizeof(c->assume_valid)); /* a bad table entry: off */
	static const struct proto_hash zero;
	c->assume_valid_on = !proto_hash_eq(&c->assume_valid, &zero);
	if (c->assume_valid_on) {
		char hex[65];
		proto_hash_to_hex(&c->assume_valid, hex);
		chain_logf(c, CHAIN_LOG_INFO,
		           "Assuming ancestors of block %s have valid signatures.", hex);
	} else {
		chain_logf(c, CHAIN_LOG_INFO, "Validating signatures for all blocks.");
	}
}

const struct proto_hash *chain_assume_valid(const struct chain *c)
{
	return c->assume_valid_on ? &c->assume_valid : NULL;
}

bool chain_assume_valid_skips(struct chain *c, const struct chain_node *n)
{
	if (!c->assume_valid_on)
		return false;
	/* Not yet known (its header has not arrived): check everything. */
	struct chain_node *av = chain_index_find(c->idx, &c->assume_valid);
	if (!av || chain_node_ancestor(av, n->height) != n)
		return false;
	struct chain_node *best = chain_index_best_header(c->idx);
	if (chain_node_ancestor(best, n->height) != n)
		return false;
	if (chain_work_cmp(&best->work, &c->min_work) < 0)
		return false;
	return chain_proof_equivalent_time(best, n, best, c->p) > TWO_WEEKS_SECONDS;
}
