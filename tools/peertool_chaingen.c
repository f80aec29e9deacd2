/*
 * tools/peertool_chaingen.c: `peertool chaingen`, a deterministic, signed
 * regtest chain from a seed, written in block-file format (the records of
 * Bitcoin Core's blkNNNNN.dat: network magic, 4-byte little-endian length,
 * raw block), for chain/'s tests and benchmarks.
 *
 * The chain is what Core's miner would build on regtest: version
 * 0x20000000, bits 0x207fffff, time start + 600 * height, the BIP34 height
 * push as `CScript() << height << OP_0`, a coinbase paying subsidy plus
 * fees to a seed-derived key, and always a BIP141 witness commitment with
 * its 32-byte zero witness nonce (GenerateCoinbaseCommitment): the coinbase,
 * commitment and nonce grind are mining/miner.c's, as peerd's generatetoaddress
 * makes them. From height 101 on (coinbase maturity) blocks also carry signed
 * transactions that spend earlier outputs of seven types and create new ones;
 * the in-memory wallet below tracks what is spendable.
 *
 * Same arguments, same bytes: no clock and no OS randomness. Every choice
 * comes from a splitmix64 stream seeded from the seed, keys and Schnorr
 * aux_rand from tagged hashes of it (tools/peertool_wallet.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain/chain.h"
#include "mining/mining.h"
#include "script/script.h"
#include "base/opt.h"
#include "tools/peertool.h"
#include "tools/peertool_chaingen.h"

/** Smallest output the wallet makes: far above every type's dust threshold. */
#define CG_MIN_SPLIT 10000
/** Block weight left for transactions: Core's miner keeps 4,000 for the coinbase. */
#define CG_WEIGHT_BUDGET (PROTO_MAX_BLOCK_WEIGHT - 4000u)
/** Sigop cost allowed (Core's MAX_BLOCK_SIGOPS_COST) less the coinbase's share (miner's 400). */
#define CG_SIGOP_BUDGET (80000u - 400u)
/** Bench block shape, as Core's bench/connectblock.cpp: 5 outputs of 1 BTC. */
#define CG_BENCH_OUTPUTS 5u
/** Owners --grow-utxo pays again and again: deriving a key for each of
 * millions of outputs would take most of the run. */
#define CG_GROW_KEYS 256u
/** Seconds between blocks: regtest's target spacing. */
#define CG_SPACING 600

/* ---- generator state ---------------------------------------------------------- */

struct cg_stats {
	uint64_t txs, inputs, outputs, bytes;
	uint64_t spent[PEERTOOL_COIN__COUNT];
	uint64_t created[PEERTOOL_COIN__COUNT];
};

/** A planned output: value and whose, of which type, with its script. */
struct cg_out {
	int64_t value;
	uint32_t owner;
	uint8_t type;
	uint8_t spk_len;
	uint8_t spk[PEERTOOL_SPK_MAX];
};

struct chaingen {
	const struct peertool_cg_args *a;
	const struct proto_params *p;
	struct peertool_wallet w;
	uint64_t rng;
	uint32_t next_owner;
	unsigned in_rr, out_rr, cb_rr; /* round-robin positions over the types */
	struct peertool_cg_queue spendable[PEERTOOL_COIN__COUNT];
	struct peertool_cg_queue immature; /* coinbase outputs, by height */
	struct peertool_cg_queue funds;    /* --grow-utxo: matured coinbases and the change */
	uint64_t utxos;                    /* the node's UTXO set size after this block */
	struct cg_out grow_keys[PEERTOOL_COIN__COUNT][CG_GROW_KEYS]; /* --grow-utxo's owners */
	bool have_grow_key[PEERTOOL_COIN__COUNT][CG_GROW_KEYS];
	struct peertool_cg_queue pending; /* this block's outputs: spendable from the next */
	struct peertool_cg_coin reserved; /* --bench-block: block 1's coinbase output */
	bool have_reserved;
	struct cg_out bench_outs[CG_BENCH_OUTPUTS]; /* the benchmark's five outputs */
	bool have_bench_outs;
	struct proto_hash bench_tip; /* the last benchmark transaction so far */
	/* the block being built: non-coinbase txs serialized back to back */
	struct proto_writer txs;
	struct proto_hash *txids, *wtxids; /* [0] is the coinbase's */
	size_t n_tx, tx_cap;
	uint64_t weight, sigops; /* of the non-coinbase txs */
	int64_t fees;
	/* scratch, reused across transactions */
	struct proto_writer txw, blk;
	struct proto_tx tx;
	struct peertool_sigdata *sigs;
	struct script_spent_output *spent;
	uint32_t *seqs;
	size_t io_cap;
	struct proto_hash prev;
	uint32_t time0;
	uint32_t time_shift; /* --fork-at: 1 above the fork, so each block differs */
	FILE *out, *spent_out, *utxo_out;
	struct cg_stats st;
};

/* splitmix64: a tiny, well-mixed stream; fine for choices, not for keys. */
static uint64_t rng_next(struct chaingen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned rng_range(struct chaingen *g, const struct peertool_cg_range *r)
{
	return r->lo + (unsigned)(rng_next(g) % (r->hi - r->lo + 1));
}

/* The n-th type of the mix, cycling. */
static uint8_t mix_type(unsigned mix, unsigned n)
{
	unsigned count = (unsigned)__builtin_popcount(mix);
	unsigned k = n % count;
	for (uint8_t t = 0; t < PEERTOOL_COIN__COUNT; t++) {
		if (!(mix & PEERTOOL_CG_BIT(t)))
			continue;
		if (k-- == 0)
			return t;
	}
	return 0;
}

/* Make room for n inputs/outputs in the per-transaction scratch arrays. */
static int reserve_io(struct chaingen *g, size_t n)
{
	if (n <= g->io_cap)
		return 0;
	struct peertool_sigdata *s = xreallocarray(g->sigs, n, sizeof(*s));
	if (!s)
		return -1;
	g->sigs = s;
	struct script_spent_output *sp = xreallocarray(g->spent, n, sizeof(*sp));
	if (!sp)
		return -1;
	g->spent = sp;
	uint32_t *q = xreallocarray(g->seqs, n, sizeof(*q));
	if (!q)
		return -1;
	g->seqs = q;
	g->io_cap = n;
	return 0;
}

static int push_ids(struct chaingen *g, const struct proto_hash *txid,
                    const struct proto_hash *wtxid)
{
	if (g->n_tx == g->tx_cap) {
		size_t cap = g->tx_cap ? g->tx_cap * 2 : 256;
		struct proto_hash *a = xreallocarray(g->txids, cap, sizeof(*a));
		if (!a)
			return -1;
		g->txids = a;
		struct proto_hash *b = xreallocarray(g->wtxids, cap, sizeof(*b));
		if (!b)
			return -1;
		g->wtxids = b;
		g->tx_cap = cap;
	}
	g->txids[g->n_tx] = *txid;
	g->wtxids[g->n_tx] = *wtxid;
	g->n_tx++;
	return 0;
}

/* Fill an output plan for a fresh owner of type t. */
static int plan_output(struct chaingen *g, uint8_t t, int64_t value, struct cg_out *o)
{
	struct peertool_keys k;
	o->owner = g->next_owner++;
	o->type = t;
	o->value = value;
	if (peertool_wallet_keys(&g->w, o->owner, (enum peertool_coin_type)t, &k))
		return -1;
	memcpy(o->spk, k.spk, k.spk_len);
	o->spk_len = (uint8_t)k.spk_len;
	return 0;
}

/* Serialize the transaction into g->txw: signed (with g->sigs) or unsigned. */
static void write_tx(struct chaingen *g, const struct peertool_cg_coin *ins, size_t n_in,
                     const struct cg_out *outs, size_t n_out, bool sign)
{
	struct proto_writer *w = &g->txw;
	bool wit = false;
	w->len = 0;
	w->err = 0;
	for (size_t i = 0; sign && i < n_in; i++)
		wit = wit || g->sigs[i].n_wit;
	proto_write_u32le(w, 2);
	if (wit) {
		proto_write_u8(w, 0); /* BIP144 marker and flag */
		proto_write_u8(w, 1);
	}
	proto_write_compact(w, n_in);
	for (size_t i = 0; i < n_in; i++) {
		struct proto_txin in = {.prevout = ins[i].op, .sequence = g->seqs[i]};
		if (sign)
			proto_txin_encode(&in, g->sigs[i].script_sig,
			                  (uint32_t)g->sigs[i].script_sig_len, w);
		else
			proto_txin_encode(&in, NULL, 0, w);
	}
	proto_write_compact(w, n_out);
	for (size_t o = 0; o < n_out; o++) {
		struct proto_txout out = {.value = outs[o].value};
		proto_txout_encode(&out, outs[o].spk, outs[o].spk_len, w);
	}
	for (size_t i = 0; wit && i < n_in; i++) {
		const struct peertool_sigdata *s = &g->sigs[i];
		proto_write_compact(w, s->n_wit);
		for (size_t k = 0; k < s->n_wit; k++)
			proto_write_varbytes(w, s->wit[k], s->wit_len[k]);
	}
	proto_write_u32le(w, 0); /* nLockTime */
}

static void print_spent(struct chaingen *g, const struct peertool_cg_coin *c)
{
	char txid[65], spk[2 * PEERTOOL_SPK_MAX + 1];
	proto_hash_to_hex(&c->op.txid, txid);
	proto_hex_encode(c->spk, c->spk_len, spk);
	fprintf(g->spent_out, "%s:%" PRIu32 " %" PRId64 " %s\n", txid, c->op.n, c->value, spk);
}

/* Check every input of the signed transaction in g->tx with Core's standard flags. */
static int verify_tx(struct chaingen *g, const struct peertool_cg_coin *ins, int32_t height)
{
	struct script_precomputed pre;
	int check = script_check_transaction(&g->tx);
	if (check) {
		peertool_error(PEERTOOL_CG_CMD,
		               "height %" PRId32 ": generated tx fails CheckTransaction: %s",
		               height, script_tx_reason(check));
		return -1;
	}
	script_precompute(&pre, &g->tx, g->spent, false);
	for (uint32_t i = 0; i < g->tx.n_in; i++) {
		int err = SCRIPT_ERR_OK;
		if (script_verify_input(&g->tx, i, &g->spent[i], SCRIPT_VERIFY_STANDARD, &pre,
		                        &err)) {
			peertool_error(PEERTOOL_CG_CMD,
			               "height %" PRId32 ": input %" PRIu32
			               " (%s) does not verify: %s",
			               height, i, peertool_coin_type_name(ins[i].type),
			               script_error_name(err));
			return -1;
		}
	}
	return 0;
}

/*
 * Build, sign and (unless --no-verify) check one transaction spending ins
 * into outs, and append it to the block. The new outputs' outpoints use
 * *txid, which is set. 0, or -1 after printing why.
 */
static int make_tx(struct chaingen *g, const struct peertool_cg_coin *ins, size_t n_in,
                   const struct cg_out *outs, size_t n_out, int32_t height, bool bench,
                   struct proto_hash *txid)
{
	struct script_precomputed pre;
	if (reserve_io(g, n_in)) {
		peertool_error(PEERTOOL_CG_CMD, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n_in; i++) {
		g->spent[i].amount = ins[i].value;
		g->spent[i].script = ins[i].spk;
		g->spent[i].script_len = ins[i].spk_len;
		/* Both are final with locktime 0; 0xfffffffe is what Core's wallet
		 * sends (anti fee sniping), 0xffffffff what Core's tests use. */
		g->seqs[i] = bench || (rng_next(g) & 1) ? 0xffffffffu : 0xfffffffeu;
	}
	/* The sighashes used read neither scriptSigs nor witnesses: sign the
	 * unsigned form, then write the signed one. */
	write_tx(g, ins, n_in, outs, n_out, false);
	if (g->txw.err || proto_tx_decode_buf(g->txw.buf, g->txw.len, &g->tx, NULL))
		goto fail_internal;
	script_precompute(&pre, &g->tx, g->spent, true);
	for (size_t i = 0; i < n_in; i++) {
		struct peertool_keys k;
		uint64_t r = rng_next(g);
		/* Core's benchmark signs everything SIGHASH_ALL. */
		struct peertool_sign_opts opts = {.multisig_pair = (unsigned)(r % 3),
		                                  .taproot_default = !bench && (r >> 8) & 1};
		if (peertool_wallet_keys(&g->w, ins[i].owner, (enum peertool_coin_type)ins[i].type,
		                         &k) ||
		    peertool_wallet_sign(&g->w, &g->tx, (uint32_t)i, &pre, g->spent, &k, &opts,
		                         &g->sigs[i])) {
			peertool_error(PEERTOOL_CG_CMD,
			               "height %" PRId32 ": cannot sign a %s input", height,
			               peertool_coin_type_name(ins[i].type));
			return -1;
		}
	}
	write_tx(g, ins, n_in, outs, n_out, true);
	if (g->txw.err || proto_tx_decode_buf(g->txw.buf, g->txw.len, &g->tx, NULL))
		goto fail_internal;
	proto_tx_compute_ids(&g->tx);
	if (g->a->verify && verify_tx(g, ins, height))
		return -1;
	proto_write_bytes(&g->txs, g->txw.buf, g->txw.len);
	if (g->txs.err || push_ids(g, &g->tx.txid, &g->tx.wtxid)) {
		peertool_error(PEERTOOL_CG_CMD, "out of memory");
		return -1;
	}
	*txid = g->tx.txid;
	g->weight += proto_tx_weight(&g->tx);
	g->st.txs++;
	g->st.inputs += n_in;
	g->st.outputs += n_out;
	g->utxos = g->utxos + n_out - n_in;
	for (size_t i = 0; i < n_in; i++) {
		g->st.spent[ins[i].type]++;
		if (g->spent_out)
			print_spent(g, &ins[i]);
	}
	for (size_t o = 0; o < n_out; o++)
		g->st.created[outs[o].type]++;
	return 0;
fail_internal:
	peertool_error(PEERTOOL_CG_CMD, "internal error: cannot encode a transaction");
	return -1;
}

/* A coin from an output just made. */
static void coin_from(struct peertool_cg_coin *c, const struct proto_hash *txid, uint32_t n,
                      const struct cg_out *o, int32_t height, bool coinbase)
{
	memset(c, 0, sizeof(*c));
	c->op.txid = *txid;
	c->op.n = n;
	c->value = o->value;
	c->height = height;
	c->owner = o->owner;
	c->type = o->type;
	c->coinbase = coinbase;
	c->spk_len = o->spk_len;
	memcpy(c->spk, o->spk, o->spk_len);
}

/* Sigop cost (Core's GetTransactionSigOpCost) of spending and paying to these types. */
static unsigned input_sigop_cost(uint8_t t)
{
	switch (t) {
	case PEERTOOL_COIN_P2SH_MULTI:
		return 3 * PROTO_WITNESS_SCALE; /* the redeem script's accurate count */
	case PEERTOOL_COIN_P2WSH_MULTI:
		return 3;
	case PEERTOOL_COIN_P2SH_P2WPKH:
	case PEERTOOL_COIN_P2WPKH:
		return 1;
	default:
		return 0; /* P2PKH's CHECKSIG counts where it is created; taproot counts none */
	}
}

static unsigned output_sigop_cost(uint8_t t)
{
	return t == PEERTOOL_COIN_P2PKH ? PROTO_WITNESS_SCALE : 0;
}

/* Pop the next coin to spend: the round-robin type first, else the next one that has any. */
static bool take_coin(struct chaingen *g, struct peertool_cg_coin *c)
{
	uint8_t first = mix_type(g->a->mix, g->in_rr++);
	for (unsigned k = 0; k < PEERTOOL_COIN__COUNT; k++) {
		struct peertool_cg_queue *q = &g->spendable[(first + k) % PEERTOOL_COIN__COUNT];
		if (peertool_cgq_size(q)) {
			*c = *peertool_cgq_front(q);
			peertool_cgq_pop(q);
			return true;
		}
	}
	return false;
}

/*
 * One ordinary transaction: 1+ inputs of the oldest coins, round-robin by
 * type, and outputs of the mix's types splitting what is left after a fee
 * of 2-4 sat/vB. 1 when done, 0 when the wallet or the block is out of
 * room, -1 on error.
 */
static int regular_tx(struct chaingen *g, int32_t height)
{
	struct peertool_cg_coin ins[PEERTOOL_CG_MAX_IO];
	struct cg_out outs[PEERTOOL_CG_MAX_IO];
	unsigned n_in = rng_range(g, &g->a->ins), n_out = rng_range(g, &g->a->outs);
	size_t n = 0, vsize = 11; /* version, locktime, counts, segwit marker */
	int64_t total = 0;
	unsigned sigops = 0;
	uint8_t types[PEERTOOL_CG_MAX_IO];

	for (unsigned o = 0; o < n_out; o++) {
		types[o] = mix_type(g->a->mix, g->out_rr + o);
		vsize += 9 + PEERTOOL_SPK_MAX;
		sigops += output_sigop_cost(types[o]);
	}
	int64_t rate = (int64_t)(2 + rng_next(g) % 3), fee = 0;
	/* The inputs asked for, then more while they cannot pay the fee and
	 * one output: late in a long chain coins can be small. */
	while ((n < n_in || total - fee < CG_MIN_SPLIT) && n < PEERTOOL_CG_MAX_IO &&
	       take_coin(g, &ins[n])) {
		total += ins[n].value;
		vsize += peertool_wallet_input_vsize((enum peertool_coin_type)ins[n].type);
		sigops += input_sigop_cost(ins[n].type);
		fee = (int64_t)vsize * rate;
		n++;
	}
	/* Out of coins, or the block would be over Core's weight or sigop
	 * limit (vsize*4 bounds the weight): put the coins back in front. */
	if (n == 0 || g->weight + 4 * vsize > CG_WEIGHT_BUDGET ||
	    g->sigops + sigops > CG_SIGOP_BUDGET || total - fee < CG_MIN_SPLIT) {
		for (size_t i = n; i-- > 0;)
			peertool_cgq_unpop(&g->spendable[ins[i].type], &ins[i]);
		return 0;
	}
	g->out_rr += n_out;
	/* Split the rest: each output 50-150% of an even share, none under
	 * CG_MIN_SPLIT; fewer outputs when the value is too small for all. */
	int64_t rest = total - fee;
	if ((int64_t)n_out * CG_MIN_SPLIT > rest)
		n_out = rest / CG_MIN_SPLIT > 1 ? (unsigned)(rest / CG_MIN_SPLIT) : 1;
	for (unsigned o = 0; o < n_out; o++) {
		int64_t v = rest;
		unsigned left = n_out - o;
		if (left > 1) {
			int64_t share = rest / left;
			v = share / 2 + (int64_t)(rng_next(g) % (uint64_t)share);
			int64_t max = rest - (int64_t)(left - 1) * CG_MIN_SPLIT;
			v = v < CG_MIN_SPLIT ? CG_MIN_SPLIT : v > max ? max : v;
		}
		if (plan_output(g, types[o], v, &outs[o]))
			goto fail_keys;
		rest -= v;
	}
	struct proto_hash txid;
	if (make_tx(g, ins, n, outs, n_out, height, false, &txid))
		return -1;
	g->fees += fee;
	g->sigops += sigops;
	for (unsigned o = 0; o < n_out; o++) {
		struct peertool_cg_coin c;
		coin_from(&c, &txid, o, &outs[o], height, false);
		if (peertool_cgq_push(&g->pending, &c)) {
			peertool_error(PEERTOOL_CG_CMD, "out of memory");
			return -1;
		}
	}
	return 1;
fail_keys:
	peertool_error(PEERTOOL_CG_CMD, "cannot derive keys");
	return -1;
}

/* --grow-utxo: a random coin of the round-robin type, else of any type that has one. */
static bool take_random_coin(struct chaingen *g, struct peertool_cg_coin *c)
{
	uint8_t first = mix_type(g->a->mix, g->in_rr++);
	for (unsigned k = 0; k < PEERTOOL_COIN__COUNT; k++) {
		struct peertool_cg_queue *q = &g->spendable[(first + k) % PEERTOOL_COIN__COUNT];
		size_t n = peertool_cgq_size(q);
		if (n) {
			peertool_cgq_take_at(q, (size_t)(rng_next(g) % n), c);
			return true;
		}
	}
	return false;
}

/*
 * --grow-utxo's transaction: the wallet's funding coin (the change of the
 * transaction before, in this block too) plus --inputs-per-tx random old
 * coins, paying --outputs-per-tx outputs: small ones (1-2x CG_MIN_SPLIT)
 * and the change last. The UTXO set grows by outputs - inputs a transaction
 * while its spends hit coins of every age, as a set larger than a cache needs.
 * 1 when done, 0 when out of funds or room in the block, -1 on error.
 */
static int grow_tx(struct chaingen *g, int32_t height)
{
	struct peertool_cg_coin ins[PEERTOOL_CG_MAX_IO], change;
	struct cg_out outs[PEERTOOL_CG_MAX_IO];
	unsigned n_rand = rng_range(g, &g->a->ins), n_out = rng_range(g, &g->a->outs);
	size_t n = 0, n_funds = 0, vsize = 11 + (size_t)n_out * (9 + PEERTOOL_SPK_MAX);
	int64_t total = 0, pay = 0, fee, rate = (int64_t)(2 + rng_next(g) % 3);
	unsigned sigops = 0;

	for (unsigned o = 0; o < n_out; o++) {
		outs[o].type = mix_type(g->a->mix, g->out_rr++);
		sigops += output_sigop_cost(outs[o].type);
		outs[o].value = CG_MIN_SPLIT + (int64_t)(rng_next(g) % CG_MIN_SPLIT);
		pay += o + 1 < n_out ? outs[o].value : 0;
	}
	while (n < n_rand && n + 1 < PEERTOOL_CG_MAX_IO && take_random_coin(g, &ins[n]))
		total += ins[n++].value;
	/* Funding coins until the outputs, the fee and a change are paid. */
	const struct peertool_cg_coin *f;
	while (n < PEERTOOL_CG_MAX_IO && (f = peertool_cgq_front(&g->funds))) {
		fee = (int64_t)(vsize + 68 * (n + 1)) * rate;
		if (total - pay - fee >= CG_MIN_SPLIT)
			break;
		ins[n] = *f;
		peertool_cgq_pop(&g->funds);
		total += ins[n++].value;
		n_funds++;
	}
	for (size_t i = 0; i < n; i++) {
		vsize += peertool_wallet_input_vsize((enum peertool_coin_type)ins[i].type);
		sigops += input_sigop_cost(ins[i].type);
	}
	fee = (int64_t)vsize * rate;
	if (n == 0 || total - pay - fee < CG_MIN_SPLIT ||
	    g->weight + 4 * vsize > CG_WEIGHT_BUDGET || g->sigops + sigops > CG_SIGOP_BUDGET) {
		for (size_t i = n; i-- > n - n_funds;)
			peertool_cgq_unpop(&g->funds, &ins[i]);
		for (size_t i = n - n_funds; i-- > 0;)
			peertool_cgq_unpop(&g->spendable[ins[i].type], &ins[i]);
		return 0;
	}
	outs[n_out - 1].value = total - pay - fee;
	for (unsigned o = 0; o < n_out; o++) {
		unsigned k = (unsigned)(rng_next(g) % CG_GROW_KEYS);
		struct cg_out *key = &g->grow_keys[outs[o].type][k];
		if (!g->have_grow_key[outs[o].type][k] &&
		    plan_output(g, outs[o].type, outs[o].value, key)) {
			peertool_error(PEERTOOL_CG_CMD, "cannot derive keys");
			return -1;
		}
		g->have_grow_key[outs[o].type][k] = true;
		int64_t v = outs[o].value;
		outs[o] = *key;
		outs[o].value = v;
	}
	struct proto_hash txid;
	if (make_tx(g, ins, n, outs, n_out, height, false, &txid))
		return -1;
	g->fees += fee;
	g->sigops += sigops;
	for (unsigned o = 0; o + 1 < n_out; o++) {
		struct peertool_cg_coin c;
		coin_from(&c, &txid, o, &outs[o], height, false);
		if (peertool_cgq_push(&g->pending, &c))
			return -1;
	}
	/* The change funds the next transaction, in this block already: a
	 * funding coin was popped, so there is room at the front. */
	coin_from(&change, &txid, n_out - 1, &outs[n_out - 1], height, false);
	peertool_cgq_unpop(&g->funds, &change);
	return 1;
}

/* The benchmark's five outputs (Core's CreateKeysAndOutputs): ECDSA ones first. */
static int bench_outputs(struct chaingen *g, struct cg_out outs[CG_BENCH_OUTPUTS])
{
	unsigned schnorr = g->a->bench == PEERTOOL_CG_BENCH_SCHNORR ? 5
	                   : g->a->bench == PEERTOOL_CG_BENCH_MIXED ? 1
	                                                            : 0;
	/* The same five keys for every transaction, as in Core's benchmark. */
	if (g->have_bench_outs) {
		memcpy(outs, g->bench_outs, sizeof(g->bench_outs));
		return 0;
	}
	for (unsigned o = 0; o < CG_BENCH_OUTPUTS; o++) {
		uint8_t t =
		    o >= CG_BENCH_OUTPUTS - schnorr ? PEERTOOL_COIN_P2TR_KEY : PEERTOOL_COIN_P2WPKH;
		if (plan_output(g, t, PROTO_COIN, &outs[o])) {
			peertool_error(PEERTOOL_CG_CMD, "cannot derive keys");
			return -1;
		}
	}
	memcpy(g->bench_outs, outs, sizeof(g->bench_outs));
	g->have_bench_outs = true;
	return 0;
}

/*
 * Block N-1 of --bench-block: one transaction spending block 1's coinbase
 * into the five outputs, the rest a fee; then block N: the chain of
 * transactions each spending all five outputs of the one before, no fee.
 */
static int bench_block(struct chaingen *g, int32_t height, bool setup)
{
	struct cg_out outs[CG_BENCH_OUTPUTS];
	struct peertool_cg_coin ins[CG_BENCH_OUTPUTS];
	struct proto_hash txid;
	if (bench_outputs(g, outs))
		return -1;
	if (setup) {
		if (!g->have_reserved) {
			peertool_error(PEERTOOL_CG_CMD,
			               "internal error: no coin reserved for the benchmark");
			return -1;
		}
		if (make_tx(g, &g->reserved, 1, outs, CG_BENCH_OUTPUTS, height, true, &txid))
			return -1;
		g->fees += g->reserved.value - (int64_t)CG_BENCH_OUTPUTS * PROTO_COIN;
		g->have_reserved = false;
		/* Not the wallet's: the next block spends them. */
		g->bench_tip = txid;
		return 0;
	}
	txid = g->bench_tip;
	for (uint32_t k = 0; k < g->a->bench_txs; k++) {
		for (uint32_t o = 0; o < CG_BENCH_OUTPUTS; o++)
			coin_from(&ins[o], &txid, o, &outs[o], height - 1, false);
		if (make_tx(g, ins, CG_BENCH_OUTPUTS, outs, CG_BENCH_OUTPUTS, height, true, &txid))
			return -1;
	}
	/* The last transaction's outputs stay in the wallet. */
	for (uint32_t o = 0; o < CG_BENCH_OUTPUTS; o++) {
		struct peertool_cg_coin c;
		coin_from(&c, &txid, o, &outs[o], height, false);
		if (peertool_cgq_push(&g->pending, &c)) {
			peertool_error(PEERTOOL_CG_CMD, "out of memory");
			return -1;
		}
	}
	g->bench_tip = txid;
	return 0;
}

/*
 * The coinbase, written into g->txw: subsidy plus fees to a fresh owner,
 * then the witness commitment over the block's wtxids, and the 32-byte zero
 * witness nonce. Sets *pay (the paid output) and the coinbase's ids.
 */
static int make_coinbase(struct chaingen *g, int32_t height, uint8_t type, struct cg_out *pay)
{
	uint8_t commit[MINING_WITNESS_COMMITMENT_SIZE];
	struct proto_hash root;
	bool mutated;
	struct proto_writer *w = &g->txw;

	if (plan_output(g, type, chain_block_subsidy(height, g->p) + g->fees, pay))
		return -1;
	/* BIP141: the coinbase's own wtxid counts as zero. */
	memset(g->wtxids[0].b, 0, 32);
	if (proto_merkle_root(g->wtxids, g->n_tx, NULL, &root, &mutated))
		return -1;
	mining_commitment(&root, commit);
	struct mining_coinbase cb = {
	    .height = height,
	    .spk = pay->spk,
	    .spk_len = pay->spk_len,
	    .value = pay->value,
	    .commitment = commit,
	};
	w->len = 0;
	w->err = 0;
	mining_write_coinbase(&cb, w);
	if (w->err || proto_tx_decode_buf(w->buf, w->len, &g->tx, NULL))
		return -1;
	proto_tx_compute_ids(&g->tx);
	g->txids[0] = g->tx.txid;
	return 0;
}

/* Append one block-file record: magic, length, bytes. */
static int write_record(struct chaingen *g, const uint8_t *data, size_t len)
{
	uint8_t head[8];
	proto_put_le32(head, g->p->magic);
	proto_put_le32(head + 4, (uint32_t)len);
	if (fwrite(head, 1, 8, g->out) != 8 || fwrite(data, 1, len, g->out) != len) {
		peertool_error(PEERTOOL_CG_CMD, "cannot write %s: %s",
		               g->a->out ? g->a->out : "stdout", strerror(errno));
		return -1;
	}
	g->st.bytes += 8 + len;
	return 0;
}

/* Header, proof of work, the record; the coinbase is in g->txw. */
static int finish_block(struct chaingen *g, int32_t height)
{
	struct proto_block_header h = {
	    .version = MINING_BLOCK_VERSION,
	    .prev = g->prev,
	    .time = g->time0 + (uint32_t)height * CG_SPACING + g->time_shift,
	    .bits = g->p->pow_limit_bits,
	};
	struct proto_hash hash;
	bool mutated;
	if (proto_merkle_root(g->txids, g->n_tx, NULL, &h.merkle_root, &mutated)) {
		peertool_error(PEERTOOL_CG_CMD, "out of memory");
		return -1;
	}
	/* Regtest's target passes about every other hash: no budget needed. */
	uint64_t tries = UINT64_MAX;
	if (mining_grind(&h, &g->p->pow_limit, &tries, NULL, &hash) != MINING_GRIND_FOUND) {
		peertool_error(PEERTOOL_CG_CMD, "height %" PRId32 ": no nonce meets the target",
		               height);
		return -1;
	}
	struct proto_writer *b = &g->blk;
	b->len = 0;
	b->err = 0;
	proto_block_header_encode(&h, b);
	proto_write_compact(b, g->n_tx);
	proto_write_bytes(b, g->txw.buf, g->txw.len);
	proto_write_bytes(b, g->txs.buf, g->txs.len);
	if (b->err) {
		peertool_error(PEERTOOL_CG_CMD, "out of memory");
		return -1;
	}
	if (g->a->verify) {
		/* A last look with peerd's own decoder: every byte accounted for,
		 * and the weight within Core's limit. */
		struct proto_block blk;
		proto_block_init(&blk);
		int err = proto_block_decode(b->buf, b->len, &blk, NULL);
		uint32_t weight = err ? 0 : proto_block_weight(&blk);
		proto_block_release(&blk);
		if (err || weight > PROTO_MAX_BLOCK_WEIGHT) {
			peertool_error(PEERTOOL_CG_CMD, "height %" PRId32 ": block %s", height,
			               err ? proto_strerror(err) : "over the weight limit");
			return -1;
		}
	}
	g->prev = hash;
	return write_record(g, b->buf, b->len);
}

/* Coinbase outputs old enough at `height` become spendable. */
static int mature(struct chaingen *g, int32_t height)
{
	const struct peertool_cg_coin *c;
	while ((c = peertool_cgq_front(&g->immature)) &&
	       height - c->height >= PEERTOOL_CG_COINBASE_MATURITY) {
		if (peertool_cgq_push(g->a->grow ? &g->funds : &g->spendable[c->type], c))
			return -1;
		peertool_cgq_pop(&g->immature);
	}
	return 0;
}

static int make_block(struct chaingen *g, int32_t height)
{
	struct cg_out pay;
	struct peertool_cg_coin cb;
	int32_t n = (int32_t)g->a->blocks;
	bool bench = g->a->bench != PEERTOOL_CG_BENCH_NONE && height >= n - 1;
	uint8_t cb_type;

	g->txs.len = 0;
	g->txs.err = 0;
	g->n_tx = 0;
	g->weight = g->sigops = 0;
	g->fees = 0;
	if (push_ids(g, &g->prev, &g->prev) || mature(g, height))
		goto oom;
	if (bench) {
		if (bench_block(g, height, height == n - 1))
			return -1;
	} else if (height > PEERTOOL_CG_COINBASE_MATURITY) {
		for (uint32_t k = 0; k < g->a->txs_per_block; k++) {
			int rc = g->a->grow ? grow_tx(g, height) : regular_tx(g, height);
			if (rc < 0)
				return -1;
			if (rc == 0)
				break;
		}
	}
	/* Core's benchmark pays its coinbases to a taproot key. */
	cb_type = bench ? PEERTOOL_COIN_P2TR_KEY : mix_type(g->a->mix, g->cb_rr++);
	if (make_coinbase(g, height, cb_type, &pay)) {
		peertool_error(PEERTOOL_CG_CMD, "height %" PRId32 ": cannot build the coinbase",
		               height);
		return -1;
	}
	g->st.created[cb_type]++;
	g->utxos++; /* its payout; the witness commitment is OP_RETURN, never a coin */
	if (finish_block(g, height))
		return -1;
	coin_from(&cb, &g->txids[0], 0, &pay, height, true);
	if (g->a->bench != PEERTOOL_CG_BENCH_NONE && height == 1) {
		/* Core's benchmark spends the first coinbase; keep it for that. */
		g->reserved = cb;
		g->have_reserved = true;
	} else if (cb.value > 0 && peertool_cgq_push(&g->immature, &cb)) {
		goto oom;
	}
	for (size_t i = 0; i < peertool_cgq_size(&g->pending); i++) {
		const struct peertool_cg_coin *c = &g->pending.v[g->pending.head + i];
		if (peertool_cgq_push(&g->spendable[c->type], c))
			goto oom;
	}
	g->pending.head = g->pending.len = 0;
	return 0;
oom:
	peertool_error(PEERTOOL_CG_CMD, "out of memory");
	return -1;
}

/* ---- the command ---------------------------------------------------------------- */

/*
 * --fork-at: from here on the choices come from the fork seed. The wallet
 * (keys, owners, spendable coins) carries on unchanged, so the branch
 * spends the same coins as the unforked chain would, in other transactions.
 */
static void fork_choices(struct chaingen *g)
{
	uint8_t rs[32];
	proto_tagged_hash("peertool/chaingen/fork", (const uint8_t *)g->a->fork_seed,
	                  strlen(g->a->fork_seed), rs);
	g->rng ^= proto_le64(rs);
	g->time_shift = 1;
}

static void print_summary(struct chaingen *g)
{
	char tip[65];
	proto_hash_to_hex(&g->prev, tip);
	printf("{\n  \"chain\": \"regtest\",\n  \"blocks\": %" PRIu32 ",\n  \"tip\": \"%s\",\n",
	       g->a->blocks, tip);
	printf("  \"txs\": %" PRIu64 ",\n  \"inputs\": %" PRIu64 ",\n  \"outputs\": %" PRIu64
	       ",\n  \"bytes\": %" PRIu64 ",\n  \"utxos\": %" PRIu64 ",\n",
	       g->st.txs, g->st.inputs, g->st.outputs, g->st.bytes, g->utxos);
	for (int pass = 0; pass < 2; pass++) {
		const uint64_t *v = pass ? g->st.created : g->st.spent;
		printf("  \"%s\": {", pass ? "created" : "spent");
		for (int t = 0; t < PEERTOOL_COIN__COUNT; t++)
			printf("%s\"%s\": %" PRIu64, t ? ", " : "",
			       peertool_coin_type_name((enum peertool_coin_type)t), v[t]);
		printf("}%s\n", pass ? "" : ",");
	}
	printf("}\n");
}

static void chaingen_release(struct chaingen *g)
{
	for (int t = 0; t < PEERTOOL_COIN__COUNT; t++)
		peertool_cgq_free(&g->spendable[t]);
	peertool_cgq_free(&g->immature);
	peertool_cgq_free(&g->funds);
	peertool_cgq_free(&g->pending);
	proto_writer_release(&g->txs);
	proto_writer_release(&g->txw);
	proto_writer_release(&g->blk);
	proto_tx_release(&g->tx);
	xfree(g->txids);
	xfree(g->wtxids);
	xfree(g->sigs);
	xfree(g->spent);
	xfree(g->seqs);
	peertool_wallet_release(&g->w);
}

/* Whether f is a regular file: only such a file may be removed after a failure
 * (--out /dev/full, or a pipe, must be left alone). */
static bool is_regular(FILE *f)
{
	struct stat st;
	return f && f != stdout && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
}

/* Close a file we opened; 0, or -1 after printing why (a full disk shows here). */
static int close_file(FILE *f, const char *path)
{
	if (!f)
		return 0;
	if (f == stdout) {
		if (fflush(f) == 0)
			return 0;
		peertool_error(PEERTOOL_CG_CMD, "cannot write stdout: %s", strerror(errno));
		return -1;
	}
	if (fclose(f)) {
		peertool_error(PEERTOOL_CG_CMD, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int peertool_chaingen(int argc, char **argv)
{
	struct peertool_cg_args a;
	struct chaingen g;
	int rc = peertool_cg_parse_args(argc, argv, &a);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	memset(&g, 0, sizeof(g));
	g.a = &a;
	g.p = proto_params(PROTO_NET_REGTEST);
	g.prev = g.p->genesis_hash;
	/* The genesis header's time: bytes 68..71. */
	uint32_t genesis_time = proto_le32(g.p->genesis + 68);
	int64_t start = a.start_time < 0 ? genesis_time : a.start_time;
	/* Block 1 must be after genesis (median time past), block N in 32 bits. */
	if (start + CG_SPACING <= genesis_time ||
	    start + (int64_t)CG_SPACING * a.blocks > (int64_t)UINT32_MAX)
		return peertool_cg_usage_error(
		    "--start-time %s puts blocks before genesis or past 2106",
		    a.start_time < 0 ? "(default)" : a.start_text);
	g.time0 = (uint32_t)start;
	proto_writer_init(&g.txs);
	proto_writer_init(&g.txw);
	proto_writer_init(&g.blk);
	proto_tx_init(&g.tx);
	rc = 1;
	if (!a.out && isatty(STDOUT_FILENO)) {
		rc = peertool_cg_usage_error(
		    "%s", "refusing to write blocks to a terminal: use --out FILE");
		goto out;
	}
	if (peertool_wallet_init(&g.w, a.seed)) {
		peertool_error(PEERTOOL_CG_CMD, "cannot create a libsecp256k1 context");
		goto out;
	}
	/* The choice stream's seed: its own tag, so it shares nothing with keys. */
	uint8_t rs[32];
	proto_tagged_hash("peertool/chaingen/rng", g.w.seed, 32, rs);
	g.rng = proto_le64(rs);
	g.out = a.out && strcmp(a.out, "-") ? fopen(a.out, "wb") : stdout;
	if (!g.out) {
		peertool_error(PEERTOOL_CG_CMD, "cannot open %s: %s", a.out, strerror(errno));
		goto out;
	}
	if (a.spent_out && !(g.spent_out = fopen(a.spent_out, "w"))) {
		peertool_error(PEERTOOL_CG_CMD, "cannot open %s: %s", a.spent_out, strerror(errno));
		goto out;
	}
	if (a.utxo_out && !(g.utxo_out = fopen(a.utxo_out, "w"))) {
		peertool_error(PEERTOOL_CG_CMD, "cannot open %s: %s", a.utxo_out, strerror(errno));
		goto out;
	}
	if (a.genesis && write_record(&g, g.p->genesis, g.p->genesis_len))
		goto out;
	for (uint32_t h = 1; h <= a.blocks; h++) {
		if (make_block(&g, (int32_t)h))
			goto out;
		if (g.utxo_out)
			fprintf(g.utxo_out, "%" PRIu32 " %" PRIu64 "\n", h, g.utxos);
		if (h == a.fork_at)
			fork_choices(&g);
	}
	rc = 0;
out:;
	/* A half-written chain must not pass for a whole one. */
	bool out_reg = is_regular(g.out), spent_reg = is_regular(g.spent_out);
	bool utxo_reg = is_regular(g.utxo_out);
	if (close_file(g.spent_out, a.spent_out) || close_file(g.utxo_out, a.utxo_out))
		rc = 1;
	if (close_file(g.out, a.out))
		rc = 1;
	if (rc == 1 && out_reg)
		unlink(a.out);
	if (rc == 1 && spent_reg)
		unlink(a.spent_out);
	if (rc == 1 && utxo_reg)
		unlink(a.utxo_out);
	if (rc == 0 && g.out != stdout)
		print_summary(&g);
	chaingen_release(&g);
	return rc;
}
