/**
 * tools/peertool_chaingen.h: what peertool chaingen's two files share: its
 * options, parsed by tools/peertool_chaingen_args.c and used by the
 * generator in tools/peertool_chaingen.c. Internal to peertool.
 */
#ifndef PEERD_PEERTOOL_CHAINGEN_H
#define PEERD_PEERTOOL_CHAINGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"
#include "tools/peertool_wallet.h"

#define PEERTOOL_CG_CMD "chaingen"
/** Confirmations before a coinbase output may be spent (Core's COINBASE_MATURITY). */
#define PEERTOOL_CG_COINBASE_MATURITY 100
/** Most blocks one run makes: ~19 years of regtest time, far more than a test needs. */
#define PEERTOOL_CG_MAX_BLOCKS 1000000u
/** Most transactions per block the options accept (the weight budget cuts in first). */
#define PEERTOOL_CG_MAX_TXS 20000u
/** Most inputs or outputs per transaction the options accept. */
#define PEERTOOL_CG_MAX_IO 100u
/** Transactions in the benchmark block, as Core's bench/connectblock.cpp. */
#define PEERTOOL_CG_BENCH_TXS 1000u

/** Bit of a coin type in a --mix set. */
#define PEERTOOL_CG_BIT(t) (1u << (t))
/** Every type. */
#define PEERTOOL_CG_MIX_ALL ((1u << PEERTOOL_COIN__COUNT) - 1)

/** --bench-block's kinds. */
enum peertool_cg_bench {
	PEERTOOL_CG_BENCH_NONE,
	PEERTOOL_CG_BENCH_ECDSA,   /**< five P2WPKH outputs */
	PEERTOOL_CG_BENCH_SCHNORR, /**< five P2TR key-path outputs */
	PEERTOOL_CG_BENCH_MIXED,   /**< four P2WPKH, one P2TR */
};

/** An inclusive range of counts: "N" or "MIN-MAX". */
struct peertool_cg_range {
	unsigned lo, hi;
};

/** The parsed command line; strings point into argv. */
struct peertool_cg_args {
	const char *seed;
	uint32_t blocks;
	uint32_t txs_per_block;
	struct peertool_cg_range ins, outs;
	int64_t start_time; /**< -1: the genesis block's time */
	const char *start_text;
	const char *out;
	const char *spent_out;
	const char *utxo_out; /**< --utxo-out: "HEIGHT COINS" after each block */
	bool grow;            /**< --grow-utxo */
	unsigned mix;         /**< bit per enum peertool_coin_type */
	enum peertool_cg_bench bench;
	uint32_t bench_txs;
	bool genesis;
	bool verify;
	uint32_t fork_at;      /**< --fork-at: 0 for none */
	const char *fork_seed; /**< --fork-seed: the choices above fork_at */
};

/** One output the wallet owns; the owner index and type rebuild its keys. */
struct peertool_cg_coin {
	struct proto_outpoint op;
	int64_t value;
	int32_t height;
	uint32_t owner;
	uint8_t type; /**< enum peertool_coin_type */
	bool coinbase;
	uint8_t spk_len;
	uint8_t spk[PEERTOOL_SPK_MAX];
};

/** A FIFO of coins: oldest first, so no coin waits forever. */
struct peertool_cg_queue {
	struct peertool_cg_coin *v;
	size_t head, len, cap; /**< live coins are v[head..len) */
};

/** Append a copy of c; 0, or -1 when out of memory (q unchanged). */
int peertool_cgq_push(struct peertool_cg_queue *q, const struct peertool_cg_coin *c);
/** Coins in the queue. */
size_t peertool_cgq_size(const struct peertool_cg_queue *q);
/** The oldest coin, or NULL when empty; valid until the next push. */
const struct peertool_cg_coin *peertool_cgq_front(const struct peertool_cg_queue *q);
/** Drop the front coin. Only moves head, so peertool_cgq_unpop can put it back. */
void peertool_cgq_pop(struct peertool_cg_queue *q);
/** Put back the coin taken last (LIFO across several takes from one queue). */
void peertool_cgq_unpop(struct peertool_cg_queue *q, const struct peertool_cg_coin *c);
/**
 * Take the coin at position k (0 is the front, k < size) into *c: the front
 * coin fills its place. An unpop puts *c back at the front.
 */
void peertool_cgq_take_at(struct peertool_cg_queue *q, size_t k, struct peertool_cg_coin *c);
/** Free the queue's memory; it is empty and reusable after. */
void peertool_cgq_free(struct peertool_cg_queue *q);

/**
 * Parse chaingen's arguments (argv[0] is the command name). Returns 0, 2
 * after printing a usage error, or 3 when --help was printed (exit 0).
 */
int peertool_cg_parse_args(int argc, char **argv, struct peertool_cg_args *a);
/** Print "peertool: chaingen: " fmt (one %s: arg), then the usage; returns 2. */
int peertool_cg_usage_error(const char *fmt, const char *arg);

#endif
