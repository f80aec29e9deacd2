/*
 * chain/rules.c: rules that are a function of a height, a time or a
 * transaction and nothing else: script flags by height (Core's
 * GetBlockScriptFlags), the block subsidy, transaction finality
 * (IsFinalTx) and BIP68 sequence locks (CalculateSequenceLocks,
 * EvaluateSequenceLocks). ConnectBlock and the mempool use them.
 */
#include "chain/chain.h"
#include "script/script.h"

/** BIP68: a time lock counts in units of 2^9 = 512 seconds. */
#define SEQUENCE_GRANULARITY 9
/** The first subsidy, 50 BTC. */
#define INITIAL_SUBSIDY (50 * PROTO_COIN)
/** From this many halvings on, the right shift would be undefined: no subsidy. */
#define MAX_HALVINGS 64

/*
 * Core turns P2SH, WITNESS and TAPROOT on from genesis, because only these
 * blocks broke them before they activated; each gets its own base set
 * (Core's consensus.script_flag_exceptions, per network).
 */
struct flag_exception {
	enum proto_net net;
	const char *hash; /* display order */
	uint32_t flags;
};
static const struct flag_exception FLAG_EXCEPTIONS[] = {
    /* mainnet 170,060: spends a P2SH output without P2SH rules (BIP16) */
    {PROTO_NET_MAIN, "00000000000002dc756eebf4f49723ed8d30cc28a5f108eb94b1ba88ac4f9c22",
     SCRIPT_VERIFY_NONE},
    /* mainnet 692,261: spends a v1 witness output before taproot */
    {PROTO_NET_MAIN, "0000000000000000000f14c35b2d841e986ab5441de8c585d5ffe55ea1e395ad",
     SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS},
    /* testnet3's BIP16 violator */
    {PROTO_NET_TESTNET3, "00000000dd30457c001f4095d208cc1296b0eed002427aa599874af7a432b105",
     SCRIPT_VERIFY_NONE},
};

uint32_t chain_block_script_flags(const struct proto_params *p, const struct proto_hash *hash,
                                  int32_t height)
{
	uint32_t flags = SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS | SCRIPT_VERIFY_TAPROOT;
	if (height < 0)
		height = INT32_MAX;
	for (size_t i = 0; i < sizeof(FLAG_EXCEPTIONS) / sizeof(FLAG_EXCEPTIONS[0]); i++) {
		struct proto_hash h;
		if (FLAG_EXCEPTIONS[i].net != p->net ||
		    proto_hash_from_hex(FLAG_EXCEPTIONS[i].hash, &h) || !proto_hash_eq(&h, hash))
			continue;
		flags = FLAG_EXCEPTIONS[i].flags;
	}
	/* The buried deployments: active from their height on. */
	if (height >= p->bip66_height)
		flags |= SCRIPT_VERIFY_DERSIG;
	if (height >= p->bip65_height)
		flags |= SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY;
	if (height >= p->csv_height)
		flags |= SCRIPT_VERIFY_CHECKSEQUENCEVERIFY;
	/* BIP147 came with segwit */
	if (height >= p->segwit_height)
		flags |= SCRIPT_VERIFY_NULLDUMMY;
	return flags;
}

int64_t chain_block_subsidy(int32_t height, const struct proto_params *p)
{
	if (height < 0 || p->subsidy_halving_interval == 0)
		return 0;
	uint32_t halvings = (uint32_t)height / p->subsidy_halving_interval;
	if (halvings >= MAX_HALVINGS)
		return 0;
	return INITIAL_SUBSIDY >> halvings;
}

bool chain_tx_is_final(const struct proto_tx *tx, int32_t height, int64_t time)
{
	if (tx->locktime == 0)
		return true;
	int64_t limit = tx->locktime < SCRIPT_LOCKTIME_THRESHOLD ? (int64_t)height : time;
	if ((int64_t)tx->locktime < limit)
		return true;
	/* A lock time not yet reached is still void when no input can be
	 * replaced: every sequence final. */
	for (uint32_t i = 0; i < tx->n_in; i++) {
		if (tx->vin[i].sequence != SCRIPT_SEQUENCE_FINAL)
			return false;
	}
	return true;
}

void chain_tx_sequence_locks(const struct proto_tx *tx, bool enforce, const int32_t *prev_heights,
                             const struct chain_node *prev, struct chain_seq_locks *out)
{
	/* nLockTime's semantics: the last invalid height or time; -1 is none. */
	out->min_height = -1;
	out->min_time = -1;
	/* Core compares the version unsigned: 0xffffffff counts as >= 2. */
	if (!enforce || (uint32_t)tx->version < 2)
		return;
	struct chain_node *walk = (struct chain_node *)prev; /* only read */
	for (uint32_t i = 0; i < tx->n_in; i++) {
		uint32_t seq = tx->vin[i].sequence;
		if (seq & SCRIPT_SEQUENCE_LOCKTIME_DISABLE)
			continue;
		int32_t coin_height = prev_heights[i];
		if (coin_height > prev->height + 1)
			coin_height = prev->height + 1;
		int64_t value = seq & SCRIPT_SEQUENCE_LOCKTIME_MASK;
		if (seq & SCRIPT_SEQUENCE_LOCKTIME_TYPE) {
			/* Counted from the earliest time the coin's block could
			 * have had: the MTP of the block before it. */
			int32_t h = coin_height - 1 > 0 ? coin_height - 1 : 0;
			const struct chain_node *anc = chain_node_ancestor(walk, h);
			int64_t coin_time = anc ? chain_node_mtp(anc) : 0;
			int64_t t = coin_time + (value << SEQUENCE_GRANULARITY) - 1;
			if (t > out->min_time)
				out->min_time = t;
		} else {
			int64_t hgt = (int64_t)coin_height + value - 1;
			if (hgt > out->min_height)
				out->min_height = (int32_t)hgt;
		}
	}
}

bool chain_seq_locks_ok(const struct chain_seq_locks *locks, const struct chain_node *prev)
{
	int32_t height = prev->height + 1;
	return locks->min_height < height && locks->min_time < chain_node_mtp(prev);
}

bool chain_tx_sequence_locks_ok(const struct proto_tx *tx, bool enforce,
                                const int32_t *prev_heights, const struct chain_node *prev)
{
	struct chain_seq_locks l;
	chain_tx_sequence_locks(tx, enforce, prev_heights, prev, &l);
	return chain_seq_locks_ok(&l, prev);
}
