/*
 * proto/merkle.c: merkle roots (Core's ComputeMerkleRoot) and the BIP141
 * witness commitment.
 *
 * The tree is computed level by level in one array: the pair (2i, 2i+1)
 * is already 64 contiguous bytes, so each node is one SHA-256d call over
 * the array with no copying, and its result overwrites slot i. An odd last
 * node is paired with itself, as Core does.
 */
#include "proto/proto.h"

/* BIP141: OP_RETURN, push 36, then the 4-byte tag aa21a9ed. */
#define WITNESS_COMMITMENT_MIN 38u
static const uint8_t witness_commitment_tag[6] = {0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed};

/* Reduce h[0..n) to its root in place. Returns the mutation flag: two
 * identical hashes paired at some level (CVE-2012-2459). */
static bool reduce(struct proto_hash *h, size_t n)
{
	bool mutated = false;
	while (n > 1) {
		size_t pairs = n / 2;
		for (size_t i = 0; i < pairs; i++) {
			if (proto_hash_eq(&h[2 * i], &h[2 * i + 1]))
				mutated = true;
			proto_sha256d(h[2 * i].b, 64, h[i].b);
		}
		if (n & 1) {
			/* The last one pairs with itself; not a mutation (Core
			 * only compares pairs that were both present). */
			proto_hash_pair(h[n - 1].b, h[n - 1].b, h[pairs].b);
			pairs++;
		}
		n = pairs;
	}
	return mutated;
}

int proto_merkle_root(const struct proto_hash *leaves, size_t n, struct proto_hash *scratch,
                      struct proto_hash *root, bool *mutated)
{
	if (mutated)
		*mutated = false;
	if (n == 0) {
		memset(root->b, 0, 32);
		return 0;
	}
	if (n == 1) {
		*root = leaves[0];
		return 0;
	}
	struct proto_hash *h = scratch;
	if (!h) {
		h = xreallocarray(NULL, n, sizeof(*h));
		if (!h)
			return PROTO_ENOMEM;
	}
	if (h != leaves)
		memcpy(h, leaves, n * sizeof(*h));
	bool m = reduce(h, n);
	*root = h[0];
	if (mutated)
		*mutated = m;
	if (!scratch)
		xfree(h);
	return 0;
}

/* The block's reusable leaf array, n entries. */
static struct proto_hash *block_scratch(struct proto_block *b, size_t n)
{
	if (n <= b->hash_cap)
		return b->hash_scratch;
	struct proto_hash *h = xreallocarray(NULL, n, sizeof(*h));
	if (!h)
		return NULL;
	xfree(b->hash_scratch);
	b->hash_scratch = h;
	b->hash_cap = n;
	return h;
}

int proto_block_merkle_root(struct proto_block *b, struct proto_hash *root, bool *mutated)
{
	if (b->n_tx == 0)
		return proto_merkle_root(NULL, 0, NULL, root, mutated);
	struct proto_hash *h = block_scratch(b, b->n_tx);
	if (!h)
		return PROTO_ENOMEM;
	for (uint32_t i = 0; i < b->n_tx; i++)
		h[i] = *proto_tx_txid(&b->txs[i]);
	return proto_merkle_root(h, b->n_tx, h, root, mutated);
}

int proto_block_witness_merkle_root(struct proto_block *b, struct proto_hash *root)
{
	if (b->n_tx == 0)
		return proto_merkle_root(NULL, 0, NULL, root, NULL);
	struct proto_hash *h = block_scratch(b, b->n_tx);
	if (!h)
		return PROTO_ENOMEM;
	/* The coinbase's wtxid is taken as zero (BIP141). */
	memset(h[0].b, 0, 32);
	for (uint32_t i = 1; i < b->n_tx; i++)
		h[i] = *proto_tx_wtxid(&b->txs[i]);
	return proto_merkle_root(h, b->n_tx, h, root, NULL);
}

int proto_block_witness_commitment_index(const struct proto_block *b)
{
	if (b->n_tx == 0)
		return -1;
	const struct proto_tx *cb = &b->txs[0];
	int found = -1;
	/* The last matching output counts, as in Core. */
	for (uint32_t i = 0; i < cb->n_out && i <= INT32_MAX; i++) {
		const struct proto_txout *o = &cb->vout[i];
		if (o->script_len >= WITNESS_COMMITMENT_MIN &&
		    memcmp(proto_txout_script(cb, o), witness_commitment_tag,
		           sizeof(witness_commitment_tag)) == 0)
			found = (int)i;
	}
	return found;
}
