/*
 * mining/template.c: the block template of getblocktemplate (Bitcoin
 * Core 29's BlockAssembler::CreateNewBlock as rpc/mining.cpp uses it),
 * and TestBlockValidity for its proposal mode and for the miner.
 *
 * A template is what a miner needs to make the block itself: the
 * transactions mining_assemble chooses, each with its fee, sigop cost and
 * weight, the coinbase's value (subsidy and fees), the witness commitment
 * of the block with a coinbase whose wtxid counts as zero, the version
 * (chain_vb_block_version), the bits and the times. It copies what it
 * keeps, so it outlives changes to the pool.
 */
#include <string.h>

#include "base/alloc.h"
#include "mining/mining.h"

void mining_template_release(struct mining_template *t)
{
	for (size_t i = 0; i < t->n; i++)
		xfree(t->txs[i].raw);
	xfree(t->txs);
	memset(t, 0, sizeof(*t));
}

int64_t mining_min_time(struct chain *c, const struct chain_node *prev)
{
	const struct proto_params *p = chain_params(c);
	int64_t t = chain_node_mtp(prev) + 1;
	/* BIP94 (testnet4): a retarget's first block no more than 600 s before its parent. */
	if (p->enforce_bip94 && (prev->height + 1) % proto_params_retarget_interval(p) == 0 &&
	    t < (int64_t)prev->time - CHAIN_MAX_TIMEWARP)
		t = (int64_t)prev->time - CHAIN_MAX_TIMEWARP;
	return t;
}

uint32_t mining_block_time(struct chain *c, const struct chain_node *prev)
{
	int64_t t = mining_min_time(c, prev);
	int64_t now = chain_now(c);
	if (now > t)
		t = now;
	return t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* The chosen entries' copies, and the block's figures. */
static int copy_txs(struct mining_template *t, const struct mempool_entry **es, size_t n)
{
	t->txs = n ? xcalloc(n, sizeof(*t->txs)) : NULL;
	if (n && !t->txs)
		return CHAIN_ENOMEM;
	struct proto_writer w;
	proto_writer_init(&w);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct mining_template_tx *x = &t->txs[i];
		struct mempool_entry_info info;
		mempool_entry_info(es[i], &info);
		struct mempool_entry_figures f;
		mempool_entry_figures(es[i], &f);
		w.len = 0;
		w.err = 0;
		proto_tx_encode(mempool_entry_tx(es[i]), &w);
		if (w.err || !(x->raw = xmalloc(w.len ? w.len : 1))) {
			err = CHAIN_ENOMEM;
			break;
		}
		memcpy(x->raw, w.buf, w.len);
		x->len = w.len;
		x->txid = info.txid;
		x->wtxid = info.wtxid;
		x->fee = info.fee; /* Core's GetFee: the base fee, not the prioritised one */
		x->sigops = f.sigop_cost;
		x->weight = info.weight;
		t->n++;
		t->fees += info.fee;
		t->weight += info.weight;
	}
	proto_writer_release(&w);
	return err;
}

/* Core's GenerateCoinbaseCommitment over the chosen transactions. */
static int commitment(struct mining_template *t)
{
	struct proto_hash *leaves = xcalloc(t->n + 1, sizeof(*leaves));
	if (!leaves)
		return CHAIN_ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		leaves[i + 1] = t->txs[i].wtxid; /* leaves[0]: the coinbase's, zero */
	struct proto_hash root;
	bool mutated;
	int err = proto_merkle_root(leaves, t->n + 1, NULL, &root, &mutated);
	xfree(leaves);
	if (err)
		return CHAIN_ENOMEM;
	mining_commitment(&root, t->commitment);
	t->has_commitment = true;
	return 0;
}

int mining_template_new(struct chain *c, struct mempool *mp, const struct mining_block_opts *opts,
                        struct mining_template *t)
{
	const struct mining_block_opts def = MINING_BLOCK_OPTS_DEFAULT;
	const struct mining_block_opts *o = opts ? opts : &def;
	memset(t, 0, sizeof(*t));
	struct chain_node *tip = chain_tip(c);
	const struct proto_params *p = chain_params(c);
	t->prev = tip->hash;
	t->height = tip->height + 1;
	t->version = chain_vb_block_version(chain_get_vb(c), tip);
	t->weight = o->reserved_weight;
	const struct mempool_entry **es = NULL;
	size_t n = 0;
	int err = mining_assemble(c, mp, o, &es, &n);
	if (!err)
		err = copy_txs(t, es, n);
	xfree(es);
	if (!err && t->height >= p->segwit_height)
		err = commitment(t);
	if (err) {
		mining_template_release(t);
		return err;
	}
	t->coinbase_value = chain_block_subsidy(t->height, p) + t->fees;
	return 0;
}

int mining_test_block(struct chain *c, struct proto_block *b, bool check_merkle, int64_t *fees,
                      struct chain_state *st)
{
	struct chain_node *tip = chain_tip(c);
	const struct proto_params *p = chain_params(c);
	struct chain_node node;
	memset(&node, 0, sizeof(node));
	node.prev = tip;
	node.height = tip->height + 1;
	node.version = b->hdr.version;
	node.time = b->hdr.time;
	node.bits = b->hdr.bits;
	node.merkle_root = b->hdr.merkle_root;
	proto_block_header_hash(&b->hdr, &node.hash);
	chain_state_clear(st);
	int err = chain_check_header_contextual(&b->hdr, tip, chain_now(c), p, st);
	if (!err)
		err = chain_check_block(b, p, false, check_merkle, st);
	if (!err)
		err = chain_check_block_contextual(b, tip, p, st);
	struct chain_connect_info info;
	if (!err)
		err = chain_connect_block(chain_get_coins(c), chain_get_checker(c), b, &node, p,
		                          true, NULL, &info, st);
	if (!err && fees)
		*fees = info.fees;
	return err;
}
