/*
 * chain/check.c: the context-free rules: Core's CheckBlockHeader and
 * CheckBlock. Nothing here needs the index, the parent or the UTXO set,
 * so a block can be judged the moment it is decoded (and fuzzed alone).
 * Also the sigop counts (Core's consensus/tx_verify.cpp) that ConnectBlock
 * and the mempool both apply.
 *
 * Order matters and is Core's: everything that could be a corruption of
 * an otherwise valid block (merkle root, duplicated transactions) is
 * checked before any rule whose failure would mark the block itself
 * invalid, so a peer cannot get a good block marked bad by mangling it.
 */
#include "chain/internal.h"
#include "script/script.h"

int chain_check_header_hashed(const struct proto_block_header *h, const struct proto_hash *hash,
                              const struct proto_params *p, struct chain_state *st)
{
	if (!proto_check_pow(hash, h->bits, &p->pow_limit))
		return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, "high-hash",
		                    "proof of work failed");
	return 0;
}

int chain_check_header(const struct proto_block_header *h, const struct proto_params *p,
                       struct chain_state *st)
{
	struct proto_hash hash;
	proto_block_header_hash(h, &hash);
	return chain_check_header_hashed(h, &hash, p, st);
}

/* Serialized size without witness data (Core's TX_NO_WITNESS(block)). */
static uint64_t block_stripped_size(const struct proto_block *b)
{
	uint64_t size = PROTO_BLOCK_HEADER_SIZE + proto_compact_size(b->n_tx);
	for (uint32_t i = 0; i < b->n_tx; i++)
		size += b->txs[i].stripped_size;
	return size;
}

/* Core's GetLegacySigOpCount: every scriptSig and scriptPubKey, inaccurately. */
static uint64_t legacy_sigops(const struct proto_tx *tx)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < tx->n_in; i++)
		n += script_sigop_count(proto_txin_script(tx, &tx->vin[i]), tx->vin[i].script_len,
		                        false);
	for (uint32_t i = 0; i < tx->n_out; i++)
		n += script_sigop_count(proto_txout_script(tx, &tx->vout[i]),
		                        tx->vout[i].script_len, false);
	return n;
}

static int check_merkle_root(struct proto_block *b, struct chain_state *st)
{
	struct proto_hash root;
	bool mutated = false;
	if (proto_block_merkle_root(b, &root, &mutated))
		return CHAIN_ENOMEM;
	if (!proto_hash_eq(&root, &b->hdr.merkle_root))
		return chain_reject(st, CHAIN_RESULT_MUTATED, "bad-txnmrklroot",
		                    "hashMerkleRoot mismatch");
	/* CVE-2012-2459: a repeated run of transactions leaves the root alone
	 * but makes the block invalid; it is a mutation, not a bad block. */
	if (mutated)
		return chain_reject(st, CHAIN_RESULT_MUTATED, "bad-txns-duplicate",
		                    "duplicate transaction");
	return 0;
}

int chain_check_block(struct proto_block *b, const struct proto_params *p, bool check_pow,
                      bool check_merkle, struct chain_state *st)
{
	int err;
	if (check_pow && (err = chain_check_header(&b->hdr, p, st)))
		return err;
	/* Signet only, and only where proof of work is checked, as Core. */
	if (check_pow && p->signet_challenge && (err = chain_check_signet_block(b, p, st)))
		return err;
	if (check_merkle && (err = check_merkle_root(b, st)))
		return err;

	/* Size limits: weight is not known to be honest before the witness
	 * commitment is checked, so only what cannot be inflated here. */
	if (b->n_tx == 0 || (uint64_t)b->n_tx * PROTO_WITNESS_SCALE > PROTO_MAX_BLOCK_WEIGHT ||
	    block_stripped_size(b) * PROTO_WITNESS_SCALE > PROTO_MAX_BLOCK_WEIGHT)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-blk-length",
		                    "size limits failed");

	if (!proto_tx_is_coinbase(&b->txs[0]))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-cb-missing",
		                    "first tx is not coinbase");
	for (uint32_t i = 1; i < b->n_tx; i++) {
		if (proto_tx_is_coinbase(&b->txs[i]))
			return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-cb-multiple",
			                    "more than one coinbase");
	}

	/* Every transaction, duplicate inputs included (CVE-2018-17144). */
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		int terr = script_check_transaction(tx);
		if (terr == SCRIPT_TX_ENOMEM)
			return CHAIN_ENOMEM;
		if (terr) {
			char hex[65];
			proto_hash_to_hex(proto_tx_txid(tx), hex);
			/* Core's CheckTransaction gives no debug text, hence the
			 * trailing space Core prints too. */
			return chain_reject(st, CHAIN_RESULT_CONSENSUS, script_tx_reason(terr),
			                    "Transaction check failed (tx hash %s) ", hex);
		}
	}

	uint64_t sigops = 0;
	for (uint32_t i = 0; i < b->n_tx; i++)
		sigops += legacy_sigops(&b->txs[i]);
	if (sigops * PROTO_WITNESS_SCALE > CHAIN_MAX_BLOCK_SIGOPS_COST)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-blk-sigops",
		                    "out-of-bounds SigOpCount");
	return 0;
}

/* ---- sigops (Core's consensus/tx_verify.cpp): ConnectBlock and the mempool ---- */

uint32_t chain_tx_legacy_sigops(const struct proto_tx *tx)
{
	uint32_t n = 0;
	for (uint32_t j = 0; j < tx->n_in; j++)
		n += script_sigop_count(proto_txin_script(tx, &tx->vin[j]), tx->vin[j].script_len,
		                        false);
	for (uint32_t k = 0; k < tx->n_out; k++)
		n += script_sigop_count(proto_txout_script(tx, &tx->vout[k]),
		                        tx->vout[k].script_len, false);
	return n;
}

uint32_t chain_input_sigop_cost(const struct proto_tx *tx, uint32_t j, const uint8_t *spk,
                                uint32_t spk_len, uint32_t flags)
{
	const uint8_t *sig = proto_txin_script(tx, &tx->vin[j]);
	uint32_t sig_len = tx->vin[j].script_len;
	uint32_t cost = 0;
	if ((flags & SCRIPT_VERIFY_P2SH) && script_is_p2sh(spk, spk_len))
		cost += script_p2sh_sigop_count(spk, spk_len, sig, sig_len) * PROTO_WITNESS_SCALE;
	cost += script_witness_sigop_count(sig, sig_len, spk, spk_len, tx, j, flags);
	return cost;
}

uint32_t chain_tx_sigop_cost(const struct proto_tx *tx, const struct chain_coin *prev,
                             uint32_t flags)
{
	uint32_t cost = chain_tx_legacy_sigops(tx) * PROTO_WITNESS_SCALE;
	if (proto_tx_is_coinbase(tx))
		return cost;
	for (uint32_t j = 0; j < tx->n_in; j++)
		cost += chain_input_sigop_cost(tx, j, prev[j].script, prev[j].script_len, flags);
	return cost;
}
