/*
 * tools/peertool_chaingen_args.c: peertool chaingen's command line: every
 * option in both spellings ('--key value' and '--key=value'), its checks,
 * and the help text (usage, an example, exit codes).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/opt.h"
#include "tools/peertool.h"
#include "tools/peertool_chaingen.h"

static const char USAGE[] =
    "usage: peertool chaingen --blocks N [--seed S] [--txs-per-block K]\n"
    "                         [--inputs-per-tx N|MIN-MAX] [--outputs-per-tx N|MIN-MAX]\n"
    "                         [--mix all|TYPE[,TYPE...]] [--start-time T] [--out FILE]\n"
    "                         [--bench-block ecdsa|schnorr|mixed] [--bench-txs N]\n"
    "                         [--genesis] [--spent-out FILE] [--no-verify]\n"
    "                         [--fork-at H [--fork-seed S]] [--grow-utxo] [--utxo-out FILE]";

void peertool_chaingen_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Write a deterministic, signed regtest chain of N blocks on top of regtest's\n"
	        "genesis, in block-file format (records: magic fabfb5da, 4-byte LE length,\n"
	        "raw block). The same arguments always give byte-identical output.\n\n"
	        "  --seed S            text all keys and choices derive from (default \"peerd\")\n"
	        "  --blocks N          blocks to make, heights 1..N (required, 1..%u)\n"
	        "  --txs-per-block K   transactions per block once coins mature (default 5)\n"
	        "  --inputs-per-tx R   inputs per transaction, N or MIN-MAX (default 1-3)\n"
	        "  --outputs-per-tx R  outputs per transaction, N or MIN-MAX (default 2-3)\n"
	        "  --mix LIST          output types to create, comma-separated: all (default),\n"
	        "                      p2pkh, p2sh-multisig, p2sh-p2wpkh, p2wpkh, p2wsh-multisig,\n"
	        "                      p2tr-key, p2tr-script; groups p2sh, p2wsh, p2tr,\n"
	        "                      multisig, ecdsa, schnorr\n"
	        "  --start-time T      block h has time T + 600*h (default: genesis time)\n"
	        "  --out FILE          output file (default stdout, never a terminal)\n"
	        "  --bench-block KIND  end with Core's ConnectBlock benchmark: block N-1 spends\n"
	        "                      block 1's coinbase into 5 outputs of 1 BTC (P2WPKH for\n"
	        "                      ecdsa, P2TR key path for schnorr, 4 and 1 for mixed);\n"
	        "                      block N holds --bench-txs transactions (default %u),\n"
	        "                      each spending all 5 outputs of the one before. Load\n"
	        "                      records 1..N-1, then time connecting record N. N >= 102.\n"
	        "  --genesis           write regtest's genesis block as the first record\n"
	        "  --spent-out FILE    write every spent output as 'TXID:VOUT SATS SPK_HEX',\n"
	        "                      the prevouts format of verify-tx and verify-block\n"
	        "  --no-verify         skip checking every input with peerd's script/ (faster)\n"
	        "  --fork-at H         blocks 1..H as without it; above H the choices come from\n"
	        "                      --fork-seed (default \"fork\") and every block is 1 s\n"
	        "                      later, so each differs: two runs with different fork\n"
	        "                      seeds (or one without --fork-at) are competing branches\n"
	        "                      from H, spending the same coins differently. H < N.\n"
	        "  --grow-utxo         grow the UTXO set: each transaction spends the change\n"
	        "                      of the one before (in the same block) and\n"
	        "                      --inputs-per-tx coins picked at random among all\n"
	        "                      spendable ones, and pays --outputs-per-tx outputs of\n"
	        "                      10,000-20,000 sat, the change last. E.g.\n"
	        "                      --grow-utxo --mix p2wpkh --txs-per-block 400\n"
	        "                      --inputs-per-tx 2 --outputs-per-tx 100: ~28,000 more\n"
	        "                      coins a block\n"
	        "  --utxo-out FILE     write 'HEIGHT COINS' after each block: the size of the\n"
	        "                      node's UTXO set (OP_RETURN outputs are not coins)\n\n"
	        "Options take -key=value, --key=value or --key value. Spends start at 101;\n"
	        "transactions are version 2, locktime 0, fee 2-4 sat/vB, standard.\n\n"
	        "Example:\n"
	        "  peertool chaingen --seed test --blocks 150 --out chain.dat\n\n"
	        "Exit codes: 0 written, 1 generation or I/O failure, 2 usage error.\n"
	        "With --out, a JSON summary (tip hash, counts) goes to stdout.\n",
	        USAGE, PEERTOOL_CG_MAX_BLOCKS, PEERTOOL_CG_BENCH_TXS);
}

#define CG_MIX_TR                                                                                  \
	(PEERTOOL_CG_BIT(PEERTOOL_COIN_P2TR_KEY) | PEERTOOL_CG_BIT(PEERTOOL_COIN_P2TR_SCRIPT))
#define CG_MIX_MULT                                                                                \
	(PEERTOOL_CG_BIT(PEERTOOL_COIN_P2SH_MULTI) | PEERTOOL_CG_BIT(PEERTOOL_COIN_P2WSH_MULTI))

static const struct {
	const char *name;
	unsigned bits;
} MIX_NAMES[] = {
    {"all", PEERTOOL_CG_MIX_ALL},
    {"p2sh", PEERTOOL_CG_BIT(PEERTOOL_COIN_P2SH_MULTI)},
    {"p2wsh", PEERTOOL_CG_BIT(PEERTOOL_COIN_P2WSH_MULTI)},
    {"p2tr", CG_MIX_TR},
    {"multisig", CG_MIX_MULT},
    {"ecdsa", PEERTOOL_CG_MIX_ALL & ~CG_MIX_TR},
    {"schnorr", CG_MIX_TR},
};

int peertool_cg_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "peertool: %s: ", PEERTOOL_CG_CMD);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", USAGE);
	return 2;
}

/* A decimal in [lo, hi]; 0, or -1 when not one. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end || errno || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* "N" or "MIN-MAX" within 1..PEERTOOL_CG_MAX_IO. */
static int parse_range(const char *s, struct peertool_cg_range *r)
{
	char buf[32];
	uint64_t lo, hi;
	const char *dash = strchr(s, '-');
	if (!dash) {
		if (parse_u64(s, 1, PEERTOOL_CG_MAX_IO, &lo))
			return -1;
		r->lo = r->hi = (unsigned)lo;
		return 0;
	}
	if ((size_t)(dash - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(dash - s));
	buf[dash - s] = 0;
	if (parse_u64(buf, 1, PEERTOOL_CG_MAX_IO, &lo) ||
	    parse_u64(dash + 1, 1, PEERTOOL_CG_MAX_IO, &hi) || lo > hi)
		return -1;
	r->lo = (unsigned)lo;
	r->hi = (unsigned)hi;
	return 0;
}

/* Comma-separated type and group names; 0, or -1 with *bad at the unknown word. */
static int parse_mix(const char *s, unsigned *mix, char *bad, size_t bad_cap)
{
	*mix = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		bool found = false;
		for (int t = 0; t < PEERTOOL_COIN__COUNT && !found; t++) {
			const char *name = peertool_coin_type_name((enum peertool_coin_type)t);
			if (strlen(name) == n && !strncmp(s, name, n)) {
				*mix |= PEERTOOL_CG_BIT(t);
				found = true;
			}
		}
		for (size_t i = 0; i < sizeof(MIX_NAMES) / sizeof(MIX_NAMES[0]) && !found; i++) {
			if (strlen(MIX_NAMES[i].name) == n && !strncmp(s, MIX_NAMES[i].name, n)) {
				*mix |= MIX_NAMES[i].bits;
				found = true;
			}
		}
		if (!found) {
			snprintf(bad, bad_cap, "%.*s", (int)n, s);
			return -1;
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return *mix ? 0 : -1;
}

static int apply_option(struct peertool_cg_args *a, const char *name, const char *val)
{
	uint64_t v;
	char bad[64];
	if (!strcmp(name, "--seed")) {
		a->seed = val;
	} else if (!strcmp(name, "--blocks")) {
		if (parse_u64(val, 1, PEERTOOL_CG_MAX_BLOCKS, &v))
			return peertool_cg_usage_error("--blocks wants 1 to 1000000, not '%s'",
			                               val);
		a->blocks = (uint32_t)v;
	} else if (!strcmp(name, "--txs-per-block")) {
		if (parse_u64(val, 0, PEERTOOL_CG_MAX_TXS, &v))
			return peertool_cg_usage_error("--txs-per-block wants 0 to 20000, not '%s'",
			                               val);
		a->txs_per_block = (uint32_t)v;
	} else if (!strcmp(name, "--inputs-per-tx")) {
		if (parse_range(val, &a->ins))
			return peertool_cg_usage_error(
			    "--inputs-per-tx wants N or MIN-MAX in 1..100, not '%s'", val);
	} else if (!strcmp(name, "--outputs-per-tx")) {
		if (parse_range(val, &a->outs))
			return peertool_cg_usage_error(
			    "--outputs-per-tx wants N or MIN-MAX in 1..100, not '%s'", val);
	} else if (!strcmp(name, "--start-time")) {
		if (parse_u64(val, 0, UINT32_MAX, &v))
			return peertool_cg_usage_error(
			    "--start-time wants seconds since 1970, not '%s'", val);
		a->start_time = (int64_t)v;
		a->start_text = val;
	} else if (!strcmp(name, "--out")) {
		a->out = val;
	} else if (!strcmp(name, "--utxo-out")) {
		a->utxo_out = val;
	} else if (!strcmp(name, "--spent-out")) {
		a->spent_out = val;
	} else if (!strcmp(name, "--mix")) {
		if (parse_mix(val, &a->mix, bad, sizeof(bad)))
			return peertool_cg_usage_error("unknown output type '%s' in --mix", bad);
	} else if (!strcmp(name, "--bench-block")) {
		if (!strcmp(val, "ecdsa"))
			a->bench = PEERTOOL_CG_BENCH_ECDSA;
		else if (!strcmp(val, "schnorr"))
			a->bench = PEERTOOL_CG_BENCH_SCHNORR;
		else if (!strcmp(val, "mixed"))
			a->bench = PEERTOOL_CG_BENCH_MIXED;
		else
			return peertool_cg_usage_error(
			    "--bench-block wants ecdsa, schnorr or mixed, not '%s'", val);
	} else if (!strcmp(name, "--fork-at")) {
		if (parse_u64(val, 1, PEERTOOL_CG_MAX_BLOCKS, &v))
			return peertool_cg_usage_error("--fork-at wants 1 to 1000000, not '%s'",
			                               val);
		a->fork_at = (uint32_t)v;
	} else if (!strcmp(name, "--fork-seed")) {
		a->fork_seed = val;
	} else if (!strcmp(name, "--bench-txs")) {
		if (parse_u64(val, 1, PEERTOOL_CG_MAX_TXS, &v))
			return peertool_cg_usage_error("--bench-txs wants 1 to 20000, not '%s'",
			                               val);
		a->bench_txs = (uint32_t)v;
	} else {
		return peertool_cg_usage_error("unknown option '%s'", name);
	}
	return 0;
}

enum { CG_OPT_GENESIS = 100, CG_OPT_NO_VERIFY, CG_OPT_GROW };

/* Valued options: id is the index, apply_option matches the name. */
static const struct base_opt_spec CG_OPTS[] = {
    {"seed", 0, true},
    {"blocks", 1, true},
    {"txs-per-block", 2, true},
    {"inputs-per-tx", 3, true},
    {"outputs-per-tx", 4, true},
    {"start-time", 5, true},
    {"out", 6, true},
    {"spent-out", 7, true},
    {"mix", 8, true},
    {"bench-block", 9, true},
    {"bench-txs", 10, true},
    {"fork-at", 11, true},
    {"fork-seed", 12, true},
    {"utxo-out", 13, true},
    {"genesis", CG_OPT_GENESIS, false},
    {"no-verify", CG_OPT_NO_VERIFY, false},
    {"grow-utxo", CG_OPT_GROW, false},
};
static const struct base_opt_cmd CG_CMD = {"peertool",
                                           PEERTOOL_CG_CMD,
                                           USAGE,
                                           CG_OPTS,
                                           sizeof(CG_OPTS) / sizeof(CG_OPTS[0]),
                                           peertool_chaingen_help};

static int set_option(void *ctx, int id, const char *val)
{
	struct peertool_cg_args *a = ctx;
	char name[32];
	if (id == CG_OPT_GENESIS) {
		a->genesis = true;
		return 0;
	}
	if (id == CG_OPT_NO_VERIFY) {
		a->verify = false;
		return 0;
	}
	if (id == CG_OPT_GROW) {
		a->grow = true;
		return 0;
	}
	snprintf(name, sizeof(name), "--%s", CG_OPTS[id].name);
	return apply_option(a, name, val);
}

int peertool_cg_parse_args(int argc, char **argv, struct peertool_cg_args *a)
{
	size_t n_pos;
	memset(a, 0, sizeof(*a));
	a->seed = "peerd";
	a->txs_per_block = 5;
	a->ins = (struct peertool_cg_range){1, 3};
	a->outs = (struct peertool_cg_range){2, 3};
	a->start_time = -1;
	a->mix = PEERTOOL_CG_MIX_ALL;
	a->bench_txs = PEERTOOL_CG_BENCH_TXS;
	a->verify = true;
	a->fork_seed = "fork";
	int rc = base_opt_parse(&CG_CMD, argc, argv, set_option, a, NULL, 0, &n_pos);
	if (rc)
		return rc;
	if (!a->blocks)
		return peertool_cg_usage_error("%s", "--blocks N is required");
	if (a->fork_at && a->fork_at >= a->blocks)
		return peertool_cg_usage_error("%s", "--fork-at H wants H below --blocks N");
	if (a->bench != PEERTOOL_CG_BENCH_NONE && a->blocks < PEERTOOL_CG_COINBASE_MATURITY + 2)
		return peertool_cg_usage_error(
		    "%s", "--bench-block needs --blocks 102 or more (block 1's "
		          "coinbase matures at 101)");
	return 0;
}
