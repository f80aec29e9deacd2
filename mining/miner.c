/*
 * mining/miner.c: blocks as Bitcoin Core's miner makes them, for
 * generatetoaddress and generateblock (and, through the pure half, for
 * peertool's chain generator).
 *
 * A block is assembled three times at most, because two of its parts
 * depend on the rest: the witness commitment needs the other
 * transactions' wtxids (read from a first decoding), and the coinbase's
 * value needs their fees, which only connecting them against the coins
 * tells (the transactions need not be in the mempool, so the block is
 * connected with just_check, which is also Core's TestBlockValidity).
 * Neither the commitment nor the fees depend on the coinbase itself, so
 * the passes converge at once.
 */
#include <stdatomic.h>
#include <string.h>

#include "mining/mining.h"
#include "script/script.h"

/* BIP141's commitment header, after OP_RETURN and the 36-byte push. */
static const uint8_t COMMITMENT_MAGIC[4] = {0xaa, 0x21, 0xa9, 0xed};

/* ---- the pure half ------------------------------------------------------ */

void mining_commitment(const struct proto_hash *witness_root,
                       uint8_t out[MINING_WITNESS_COMMITMENT_SIZE])
{
	uint8_t buf[64];
	memcpy(buf, witness_root->b, 32);
	memset(buf + 32, 0, 32); /* the coinbase's witness nonce */
	out[0] = SCRIPT_OP_RETURN;
	out[1] = 36;
	memcpy(out + 2, COMMITMENT_MAGIC, 4);
	proto_sha256d(buf, sizeof(buf), out + 6);
}

void mining_write_coinbase(const struct mining_coinbase *cb, struct proto_writer *w)
{
	uint8_t sig[CHAIN_BIP34_SCRIPT_MAX + 1];
	size_t sig_len = chain_bip34_script(cb->height, sig);
	/* The extra-nonce slot of Core's `CScript() << height << OP_0`. */
	sig[sig_len++] = SCRIPT_OP_0;

	struct proto_txin in = {.prevout.n = 0xffffffffu, .sequence = 0xffffffffu};
	struct proto_txout pay = {.value = cb->value}, commit = {.value = 0};
	bool wit = cb->commitment != NULL;
	proto_write_u32le(w, MINING_COINBASE_VERSION);
	if (wit) {
		proto_write_u8(w, 0); /* BIP144 marker and flag */
		proto_write_u8(w, 1);
	}
	proto_write_compact(w, 1);
	proto_txin_encode(&in, sig, (uint32_t)sig_len, w);
	proto_write_compact(w, wit ? 2 : 1);
	proto_txout_encode(&pay, cb->spk, cb->spk_len, w);
	if (wit) {
		static const uint8_t nonce[32];
		proto_txout_encode(&commit, cb->commitment, MINING_WITNESS_COMMITMENT_SIZE, w);
		proto_write_compact(w, 1); /* one witness item: the nonce */
		proto_write_varbytes(w, nonce, sizeof(nonce));
	}
	proto_write_u32le(w, 0); /* nLockTime */
}

enum mining_grind_result mining_grind(struct proto_block_header *h,
                                      const struct proto_hash *pow_limit, uint64_t *max_tries,
                                      const _Atomic bool *interrupt, struct proto_hash *hash)
{
	/* Core's loop, test for test: the budget first, then the nonce's
	 * end, then the hash. */
	for (;;) {
		if (*max_tries == 0)
			return MINING_GRIND_NO_TRIES;
		if (h->nonce == UINT32_MAX)
			return MINING_GRIND_WRAPPED;
		if (interrupt && atomic_load_explicit(interrupt, memory_order_relaxed))
			return MINING_GRIND_INTERRUPTED;
		proto_block_header_hash(h, hash);
		if (proto_check_pow(hash, h->bits, pow_limit))
			return MINING_GRIND_FOUND;
		h->nonce++;
		(*max_tries)--;
	}
}

/* ---- a block on the tip --------------------------------------------------- */

void mining_block_release(struct mining_block *m)
{
	xfree(m->raw);
	memset(m, 0, sizeof(*m));
}

/* What one mining_generate call works with. */
struct miner {
	struct chain *c;
	const struct mining_args *a;
	struct chain_node *tip;
	struct proto_block_header hdr;
	int32_t height;
	bool segwit;
	uint8_t commitment[MINING_WITNESS_COMMITMENT_SIZE];
	bool have_commitment;
	struct proto_writer w; /* the block's bytes */
	struct proto_block b;  /* their decoding */
};

/*
 * Write the block with a coinbase paying `value` (and the commitment if
 * one is known yet), decode it, and set the header's merkle root in both
 * the bytes and the decoding. 0, CHAIN_ENOMEM or CHAIN_EARG (a given
 * transaction does not decode, or the block holds too many).
 */
static int assemble(struct miner *m, int64_t value)
{
	struct proto_writer *w = &m->w;
	const struct mining_args *a = m->a;
	w->len = 0;
	w->err = 0;
	proto_block_header_encode(&m->hdr, w);
	proto_write_compact(w, (uint64_t)a->n_txs + 1);
	struct mining_coinbase cb = {
	    .height = m->height,
	    .spk = a->spk,
	    .spk_len = a->spk_len,
	    .value = value,
	    .commitment = m->have_commitment ? m->commitment : NULL,
	};
	mining_write_coinbase(&cb, w);
	for (size_t i = 0; i < a->n_txs; i++)
		proto_write_bytes(w, a->txs[i].raw, a->txs[i].len);
	if (w->err)
		return w->err == PROTO_ENOMEM ? CHAIN_ENOMEM : CHAIN_EARG;
	int err = proto_block_decode(w->buf, w->len, &m->b, NULL);
	if (err)
		return err == PROTO_ENOMEM ? CHAIN_ENOMEM : CHAIN_EARG;
	bool mutated;
	if (proto_block_merkle_root(&m->b, &m->hdr.merkle_root, &mutated))
		return CHAIN_ENOMEM;
	m->b.hdr = m->hdr;
	struct proto_writer hw;
	proto_writer_init_fixed(&hw, w->buf, 80);
	proto_block_header_encode(&m->hdr, &hw);
	return 0;
}

/* Core's TestBlockValidity without proof of work and merkle root (the
 * merkle root is the one just computed). */
static int test_validity(struct miner *m, int64_t *fees, struct chain_state *st)
{
	return mining_test_block(m->c, &m->b, false, fees, st);
}

static int build(struct miner *m, int64_t *fees, struct chain_state *st)
{
	const struct proto_params *p = chain_params(m->c);
	int64_t subsidy = chain_block_subsidy(m->height, p);
	int err = assemble(m, subsidy);
	if (err)
		return err;
	if (m->segwit) {
		struct proto_hash root;
		if (proto_block_witness_merkle_root(&m->b, &root))
			return CHAIN_ENOMEM;
		mining_commitment(&root, m->commitment);
		m->have_commitment = true;
		if ((err = assemble(m, subsidy)))
			return err;
	}
	if ((err = test_validity(m, fees, st)))
		return err;
	if (m->a->subsidy_only)
		*fees = 0; /* checked as it is: the fees go unclaimed */
	if (*fees == 0)
		return 0;
	/* Claim the fees; the second check is for the block as it will be. */
	if ((err = assemble(m, subsidy + *fees)))
		return err;
	int64_t again = 0;
	return test_validity(m, &again, st);
}

int mining_generate(struct chain *c, const struct mining_args *a, uint64_t *max_tries,
                    struct mining_block *out, struct chain_state *st)
{
	struct chain_state local;
	if (!st)
		st = &local;
	chain_state_clear(st);
	memset(out, 0, sizeof(*out));
	struct miner m = {.c = c, .a = a, .tip = chain_tip(c)};
	m.height = m.tip->height + 1;
	m.segwit = m.height >= chain_params(c)->segwit_height;
	/* Core's ComputeBlockVersion: the top bits and every deployment started or locked in. */
	m.hdr.version = chain_vb_block_version(chain_get_vb(c), m.tip);
	m.hdr.prev = m.tip->hash;
	m.hdr.time = mining_block_time(c, m.tip);
	m.hdr.bits = chain_next_work_required(m.tip, m.hdr.time, chain_params(c));
	proto_writer_init(&m.w);
	proto_block_init(&m.b);

	int64_t fees = 0;
	int err = build(&m, &fees, st);
	if (err)
		goto out;
	struct proto_hash hash;
	switch (mining_grind(&m.hdr, &chain_params(c)->pow_limit, max_tries, a->interrupt, &hash)) {
	case MINING_GRIND_FOUND:
		break;
	case MINING_GRIND_NO_TRIES:
	case MINING_GRIND_WRAPPED:
	case MINING_GRIND_INTERRUPTED:
		err = CHAIN_ENOTFOUND;
		goto out;
	}
	m.b.hdr = m.hdr;
	struct proto_writer hw;
	proto_writer_init_fixed(&hw, m.w.buf, 80);
	proto_block_header_encode(&m.hdr, &hw);

	out->hash = hash;
	out->height = m.height;
	out->fees = fees;
	if (a->submit) {
		err = chain_submit_block(c, m.w.buf, m.w.len, &m.b, &out->submitted, st);
		if (err)
			goto out;
	}
	out->raw = m.w.buf;
	out->len = m.w.len;
	m.w.buf = NULL;
out:
	proto_block_release(&m.b);
	proto_writer_release(&m.w);
	return err;
}
