/*
 * chain/contextual.c: the rules that need the parent block and its
 * ancestors but not the UTXO set: Core's GetNextWorkRequired,
 * ContextualCheckBlockHeader and ContextualCheckBlock.
 *
 * "Active after prev" (Core's DeploymentActiveAfter) for a buried
 * deployment is simply: the new block's height is at or above the
 * deployment's height.
 */
#include <stdio.h>

#include "chain/chain.h"
#include "script/script.h"

/** Core's MINIMUM_WITNESS_COMMITMENT: OP_RETURN, push 36, 4-byte tag, 32-byte hash. */
#define WITNESS_COMMITMENT_HASH_OFF 6u
/** Where a header keeps its bits: after version, prev, merkle root and time. */
#define GENESIS_BITS_OFF 72u
/** The coinbase witness reserved value is exactly this long (BIP141). */
#define WITNESS_NONCE_SIZE 32u

uint32_t chain_next_work_required(const struct chain_node *prev, uint32_t time,
                                  const struct proto_params *p)
{
	int64_t interval = proto_params_retarget_interval(p);
	/* chain_node_ancestor hands out mutable nodes; nothing is changed here. */
	struct chain_node *last = (struct chain_node *)prev;
	if ((last->height + 1) % interval != 0) {
		if (!p->pow_allow_min_difficulty)
			return last->bits;
		/* testnet: a block more than twice the spacing after its parent
		 * may be mined at minimum difficulty ... */
		if ((int64_t)time > (int64_t)last->time + p->pow_target_spacing * 2)
			return p->pow_limit_bits;
		/* ... else it needs the difficulty of the last block that did
		 * not use that exception (or a period's first block). Without
		 * retargeting and with genesis at the limit (regtest) every block
		 * is at the limit, so the walk (up to a period of nodes) would
		 * find nothing else: skip it. */
		if (p->pow_no_retargeting && p->genesis_len >= PROTO_BLOCK_HEADER_SIZE &&
		    proto_le32(p->genesis + GENESIS_BITS_OFF) == p->pow_limit_bits)
			return p->pow_limit_bits;
		const struct chain_node *n = last;
		while (n->prev && n->height % interval != 0 && n->bits == p->pow_limit_bits)
			n = n->prev;
		return n->bits;
	}
	/* A new period: measure the one that ends with `last`. */
	struct chain_node *first =
	    chain_node_ancestor(last, last->height - (int32_t)(interval - 1));
	if (!first) /* only a chain shorter than a period, which cannot retarget */
		return last->bits;
	return proto_next_work_required(p, last->bits, first->bits, first->time, last->time);
}

int chain_check_header_contextual(const struct proto_block_header *h, const struct chain_node *prev,
                                  int64_t now, const struct proto_params *p, struct chain_state *st)
{
	int32_t height = prev->height + 1;
	if (h->bits != chain_next_work_required(prev, h->time, p))
		return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, "bad-diffbits",
		                    "incorrect proof of work");
	if ((int64_t)h->time <= chain_node_mtp(prev))
		return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, "time-too-old",
		                    "block's timestamp is too early");
	/* BIP94 (testnet4): a period's first block may not be dated much
	 * before its parent, which closes the timewarp attack. */
	if (p->enforce_bip94 && height % proto_params_retarget_interval(p) == 0 &&
	    (int64_t)h->time < (int64_t)prev->time - CHAIN_MAX_TIMEWARP)
		return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, "time-timewarp-attack",
		                    "block's timestamp is too early on diff adjustment block");
	if ((int64_t)h->time > now + CHAIN_MAX_FUTURE_TIME)
		return chain_reject(st, CHAIN_RESULT_TIME_FUTURE, "time-too-new",
		                    "block timestamp too far in the future");
	if ((h->version < 2 && height >= p->bip34_height) ||
	    (h->version < 3 && height >= p->bip66_height) ||
	    (h->version < 4 && height >= p->bip65_height)) {
		char reason[32];
		snprintf(reason, sizeof(reason), "bad-version(0x%08x)", (uint32_t)h->version);
		return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, reason,
		                    "rejected nVersion=0x%08x block", (uint32_t)h->version);
	}
	return 0;
}

size_t chain_bip34_script(int32_t height, uint8_t out[CHAIN_BIP34_SCRIPT_MAX])
{
	/* CScript::operator<<(int64_t): small numbers are opcodes. */
	if (height == 0) {
		out[0] = SCRIPT_OP_0;
		return 1;
	}
	if (height >= 1 && height <= 16) {
		out[0] = (uint8_t)(SCRIPT_OP_1 + height - 1);
		return 1;
	}
	/* CScriptNum: little-endian magnitude, plus a zero byte when the top
	 * bit is taken (heights are never negative). */
	uint32_t v = (uint32_t)height;
	size_t n = 0;
	while (v) {
		out[1 + n++] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
	if (out[n] & 0x80)
		out[1 + n++] = 0;
	out[0] = (uint8_t)n;
	return n + 1;
}

static bool tx_has_witness(const struct proto_tx *tx)
{
	for (uint32_t i = 0; i < tx->n_in; i++) {
		if (tx->vin[i].wit_count)
			return true;
	}
	return false;
}

/* Core's CheckWitnessMalleation. */
static int check_witness(struct proto_block *b, bool segwit, struct chain_state *st)
{
	int pos = segwit ? proto_block_witness_commitment_index(b) : -1;
	if (pos >= 0) {
		const struct proto_tx *cb = &b->txs[0];
		struct proto_witness_iter it;
		struct proto_span nonce;
		if (cb->n_in == 0)
			return chain_reject(st, CHAIN_RESULT_MUTATED, "bad-witness-nonce-size",
			                    "CheckWitnessMalleation : no coinbase input");
		proto_witness_iter_init(&it, cb, &cb->vin[0]);
		if (cb->vin[0].wit_count != 1 || !proto_witness_iter_next(&it, &nonce) ||
		    nonce.len != WITNESS_NONCE_SIZE)
			return chain_reject(
			    st, CHAIN_RESULT_MUTATED, "bad-witness-nonce-size",
			    "CheckWitnessMalleation : invalid witness reserved value "
			    "size");
		struct proto_hash root;
		uint8_t buf[64], commit[32];
		if (proto_block_witness_merkle_root(b, &root))
			return CHAIN_ENOMEM;
		memcpy(buf, root.b, 32);
		memcpy(buf + 32, nonce.data, 32);
		proto_sha256d(buf, sizeof(buf), commit);
		const struct proto_txout *o = &cb->vout[pos];
		if (memcmp(commit, proto_txout_script(cb, o) + WITNESS_COMMITMENT_HASH_OFF, 32))
			return chain_reject(st, CHAIN_RESULT_MUTATED, "bad-witness-merkle-match",
			                    "CheckWitnessMalleation : witness merkle commitment "
			                    "mismatch");
		return 0;
	}
	/* No commitment (or no segwit yet): witness data would be free,
	 * uncommitted space in the block. */
	for (uint32_t i = 0; i < b->n_tx; i++) {
		if (tx_has_witness(&b->txs[i]))
			return chain_reject(
			    st, CHAIN_RESULT_MUTATED, "unexpected-witness",
			    "CheckWitnessMalleation : unexpected witness data found");
	}
	return 0;
}

int chain_check_block_contextual(struct proto_block *b, const struct chain_node *prev,
                                 const struct proto_params *p, struct chain_state *st)
{
	int32_t height = prev ? prev->height + 1 : 0;
	int err;
	/* BIP113: once CSV is active, lock times count against the parent's
	 * median time past instead of the block's own (minable) time. */
	int64_t cutoff = prev && height >= p->csv_height ? chain_node_mtp(prev) : b->hdr.time;
	for (uint32_t i = 0; i < b->n_tx; i++) {
		if (!chain_tx_is_final(&b->txs[i], height, cutoff))
			return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-txns-nonfinal",
			                    "non-final transaction");
	}

	if (height >= p->bip34_height && b->n_tx > 0) {
		uint8_t want[CHAIN_BIP34_SCRIPT_MAX];
		size_t n = chain_bip34_script(height, want);
		const struct proto_tx *cb = &b->txs[0];
		if (cb->n_in == 0 || cb->vin[0].script_len < n ||
		    memcmp(proto_txin_script(cb, &cb->vin[0]), want, n))
			return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-cb-height",
			                    "block height mismatch in coinbase");
	}

	if ((err = check_witness(b, height >= p->segwit_height, st)))
		return err;

	/* Only now is the weight honest: before the commitment was checked a
	 * peer could have stuffed the coinbase witness. */
	if (proto_block_weight(b) > PROTO_MAX_BLOCK_WEIGHT)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-blk-weight",
		                    "ContextualCheckBlock : weight limit failed");
	return 0;
}
