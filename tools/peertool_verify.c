/*
 * tools/peertool_verify.c: verify-tx, and the options and report it
 * shares with verify-block (tools/peertool_verify_block.c): every input
 * script of a transaction or block checked against spent outputs given in
 * a file (tools/peertool_prevouts.c), offline. For users checking their
 * own transactions, and for checking peerd's script/ against other
 * implementations.
 *
 *   peertool verify-tx --prevouts FILE [--flags LIST] TX
 *   peertool verify-block --prevouts FILE [--flags LIST] [--chain NAME]
 *                         [--height N] [--par N] BLOCK
 *
 * TX and BLOCK are raw or hex (detected), '-' for stdin. The prevouts file
 * has one spent output a line, `TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX`
 * (txid in display order), with blank lines and # comments allowed.
 * verify-block runs one job per input on the pool/ check queue; outputs
 * created earlier in the block satisfy later inputs without a prevouts line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "chain/chain.h"
#include "pool/pool.h"
#include "script/script.h"
#include "base/opt.h"
#include "tools/peertool.h"
#include "json/json.h"
#include "tools/peertool_verify.h"

/** Most threads --par accepts (the check queue's limit). */
#define VERIFY_MAX_PAR POOL_MAX_THREADS
/** Highest --height accepted: Core keeps heights in an int. */
#define VERIFY_MAX_HEIGHT INT32_MAX

static const char USAGE_TX[] = "usage: peertool verify-tx --prevouts FILE [--flags LIST] TX|-";
static const char USAGE_BLOCK[] =
    "usage: peertool verify-block --prevouts FILE|--utxo DATADIR [--flags LIST] [--chain NAME]\n"
    "                             [--height N] [--par N] [--no-pow] BLOCK|-";

void peertool_verify_tx_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Verify every input script of a transaction against the outputs it spends,\n"
	        "given in FILE one a line: TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX (# comments\n"
	        "and blank lines allowed). TX is raw or hex, '-' for stdin. --flags picks\n"
	        "script flags by Core's names (default: the consensus set).\n\n"
	        "Options take -key=value, --key=value or --key value. Flag names go in any\n"
	        "case; an unknown one is answered with the list. Every spent output missing\n"
	        "from FILE is named (exit 1). doc/peertool.md shows how to make FILE from\n"
	        "blocks.\n\n"
	        "Example:\n"
	        "  peertool verify-tx --prevouts=spent.txt --flags=P2SH,WITNESS tx.hex\n\n"
	        "Exit codes: 0 every input valid, 1 an input or the transaction invalid or\n"
	        "bad input, 2 usage error.\n",
	        USAGE_TX);
}

void peertool_verify_block_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Check a block as Bitcoin Core would and report Core's reject reason:\n"
	        "CheckBlock (proof of work, merkle root, size, coinbase, transactions,\n"
	        "sigops), ContextualCheckBlock (BIP34 height, finality, witness commitment,\n"
	        "weight), and every input script on N threads (--par; 0 one per core).\n\n"
	        "  --prevouts FILE  the spent outputs, as verify-tx's; the contextual checks\n"
	        "                   use a stand-in parent at the block's height (--height,\n"
	        "                   else its BIP34 height; skipped when unknown)\n"
	        "  --utxo DATADIR   a chain made by peertool connect-blocks or peerd (the\n"
	        "                   network's directory in it, locked): the parent from\n"
	        "                   its index, the header's contextual checks too, the spent\n"
	        "                   outputs from its UTXO set, and the whole of ConnectBlock in\n"
	        "                   just-check mode (fees, maturity, BIP68, sigops, coinbase\n"
	        "                   amount) when the block builds on its tip; nothing written\n"
	        "  --no-pow         skip the proof of work (Core's fCheckPOW=false, as for a\n"
	        "                   block proposal)\n"
	        "  --height N, --flags LIST, --chain NAME: the height whose rules apply, script\n"
	        "                   flags by name, the network (default main)\n\n"
	        "Examples:\n"
	        "  peertool verify-block --chain regtest --prevouts spent.txt block.hex\n"
	        "  peertool verify-block --chain regtest --utxo /tmp/dd block.raw\n\n"
	        "Options take -key=value, --key=value or --key value.\n\n"
	        "Spent outputs missing from FILE: the first 10 are named, the rest counted\n"
	        "(exit 1). A block the checks reject (high-hash, say) needs none for its\n"
	        "verdict: the report gives the reason and says the scripts were not run.\n\n"
	        "Exit codes: 0 the block is valid; 1 invalid (reject_reason says why),\n"
	        "inconclusive (--utxo and the parent is not the tip) or bad input;\n"
	        "2 usage error.\n",
	        USAGE_BLOCK);
}

/* ---- arguments ------------------------------------------------------------ */

enum {
	VOPT_PREVOUTS,
	VOPT_FLAGS,
	VOPT_UTXO,
	VOPT_CHAIN,
	VOPT_HEIGHT,
	VOPT_PAR,
	VOPT_NO_POW,
};

static const struct base_opt_spec TX_OPTS[] = {
    {"prevouts", VOPT_PREVOUTS, true},
    {"flags", VOPT_FLAGS, true},
};
static const struct base_opt_spec BLOCK_OPTS[] = {
    {"prevouts", VOPT_PREVOUTS, true}, {"utxo", VOPT_UTXO, true},     {"flags", VOPT_FLAGS, true},
    {"chain", VOPT_CHAIN, true},       {"height", VOPT_HEIGHT, true}, {"par", VOPT_PAR, true},
    {"no-pow", VOPT_NO_POW, false},
};
static const struct base_opt_cmd CMD_TX = {"peertool",
                                           "verify-tx",
                                           USAGE_TX,
                                           TX_OPTS,
                                           sizeof(TX_OPTS) / sizeof(TX_OPTS[0]),
                                           peertool_verify_tx_help};
static const struct base_opt_cmd CMD_BLOCK = {"peertool",
                                              "verify-block",
                                              USAGE_BLOCK,
                                              BLOCK_OPTS,
                                              sizeof(BLOCK_OPTS) / sizeof(BLOCK_OPTS[0]),
                                              peertool_verify_block_help};

struct verify_parse {
	struct verify_args *a;
	const struct base_opt_cmd *c;
};

/* --flags: Core's names in any case; an unknown one is named with the valid ones. */
static int flags_arg(const struct base_opt_cmd *c, const char *val, struct verify_args *a)
{
	char up[1024], all[1024];
	const char *bad = NULL;
	size_t n = strlen(val);
	if (n >= sizeof(up))
		return base_opt_usage_error(c, "--flags: list longer than %zu characters",
		                            sizeof(up) - 1);
	/* Flag names are upper case, the two sets' names lower case. */
	for (size_t i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)val[i]);
	for (char *t = up; *t;) {
		size_t k = strcspn(t, ",");
		if ((k == 8 && !strncmp(t, "STANDARD", 8)) ||
		    (k == 9 && !strncmp(t, "CONSENSUS", 9)))
			for (size_t i = 0; i < k; i++)
				t[i] = (char)tolower((unsigned char)t[i]);
		t += k + (t[k] == ',');
	}
	if (!script_flags_parse(up, &a->flags, &bad)) {
		a->flags_given = true;
		return 0;
	}
	script_flags_format(UINT32_MAX, all, sizeof(all));
	return base_opt_usage_error(
	    c,
	    "unknown flag in '%s' (valid, comma-separated, any case: consensus, "
	    "standard, NONE or %s)",
	    bad ? val + (bad - up) : val, all);
}

static int set_option(void *ctx, int id, const char *val)
{
	struct verify_parse *vp = ctx;
	struct verify_args *a = vp->a;
	uint64_t v;
	int rc = 0;
	switch (id) {
	case VOPT_PREVOUTS:
		a->prevouts = val;
		break;
	case VOPT_UTXO:
		a->utxo = val;
		break;
	case VOPT_FLAGS:
		rc = flags_arg(vp->c, val, a);
		break;
	case VOPT_CHAIN:
		rc = peertool_chain_arg(vp->c, val, &a->chain);
		break;
	case VOPT_HEIGHT:
		if (!(rc = base_opt_uint(vp->c, "height", val, 0, VERIFY_MAX_HEIGHT, &v)))
			a->height = (int64_t)v;
		break;
	case VOPT_PAR:
		if (!(rc = base_opt_uint(vp->c, "par", val, 0, VERIFY_MAX_PAR, &v)))
			a->par = (int)v;
		break;
	case VOPT_NO_POW:
		a->no_pow = true;
		break;
	}
	return rc;
}

/* Parse the options; 0, BASE_OPT_HELP after the help, or 2 after a usage error. */
int peertool_verify_parse_args(int argc, char **argv, bool block, struct verify_args *a)
{
	const struct base_opt_cmd *c = block ? &CMD_BLOCK : &CMD_TX;
	struct verify_parse vp = {a, c};
	size_t n_pos;
	memset(a, 0, sizeof(*a));
	a->flags = SCRIPT_VERIFY_CONSENSUS;
	a->chain = proto_params(PROTO_NET_MAIN);
	a->height = -1;
	int rc = base_opt_parse(c, argc, argv, set_option, &vp, &a->input, 1, &n_pos);
	if (rc)
		return rc;
	if (a->prevouts && a->utxo)
		return base_opt_usage_error(
		    c, "--prevouts and --utxo both name the spent outputs: give one");
	if (!a->prevouts && !a->utxo)
		return base_opt_usage_error(c, "%s",
		                            block ? "--prevouts FILE or --utxo DATADIR is required"
		                                  : "--prevouts FILE is required");
	if (!n_pos)
		return base_opt_usage_error(c, "no %s given (a file, '-' for stdin, or hex)",
		                            block ? "block" : "transaction");
	/* Core refuses these combinations; give what they imply instead. */
	if (a->flags & SCRIPT_VERIFY_CLEANSTACK)
		a->flags |= SCRIPT_VERIFY_WITNESS;
	if (a->flags & SCRIPT_VERIFY_WITNESS)
		a->flags |= SCRIPT_VERIFY_P2SH;
	return 0;
}

/* ---- results ----------------------------------------------------------------- */

double peertool_verify_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static json_t *outpoint_json(const struct proto_outpoint *o)
{
	char hex[65], buf[80];
	proto_hash_to_hex(&o->txid, hex);
	snprintf(buf, sizeof(buf), "%s:%" PRIu32, hex, o->n);
	return json_string(buf);
}

/* One input's entry: "valid", or the error name and its description. */
json_t *peertool_verify_input_json(const struct proto_tx *tx, uint32_t i,
                                   const struct script_spent_output *spent, int err,
                                   const char *reject)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer(i));
	json_object_set_new(o, "prevout", outpoint_json(&tx->vin[i].prevout));
	if (spent)
		json_object_set_new(o, "amount", json_integer(spent->amount));
	if (reject) {
		json_object_set_new(o, "result", json_string(reject));
		json_object_set_new(o, "error", json_string("transaction failed CheckTransaction"));
	} else if (err == SCRIPT_ERR_OK) {
		json_object_set_new(o, "result", json_string("valid"));
	} else {
		json_object_set_new(o, "result", json_string(script_error_name(err)));
		json_object_set_new(o, "error", json_string(script_error_string(err)));
	}
	return o;
}

json_t *peertool_verify_summary_json(size_t txs, size_t inputs, size_t valid, double ms)
{
	json_t *s = json_object();
	json_object_set_new(s, "txs", json_integer((json_int_t)txs));
	json_object_set_new(s, "inputs", json_integer((json_int_t)inputs));
	json_object_set_new(s, "valid", json_integer((json_int_t)valid));
	json_object_set_new(s, "invalid", json_integer((json_int_t)(inputs - valid)));
	json_object_set_new(s, "ms", json_real((double)(long long)(ms * 1000.0 + 0.5) / 1000.0));
	return s;
}

json_t *peertool_verify_flags_json(uint32_t flags)
{
	char buf[1024];
	script_flags_format(flags, buf, sizeof(buf));
	return json_string(buf);
}

/* Printed here rather than with json_print: "ms" is a real, and
 * 9 significant digits keep it readable (0.358, not 0.35799999999999998). */
int peertool_verify_print(const char *cmd, json_t *root)
{
	char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
	json_decref(root);
	if (!s) {
		peertool_error(cmd, "out of memory");
		return 1;
	}
	puts(s);
	free(s);
	return 0;
}

/* ---- verify-tx ---------------------------------------------------------------- */

int peertool_verify_tx(int argc, char **argv)
{
	const char *cmd = argv[0];
	struct verify_args a;
	struct prevmap m = {0};
	struct proto_tx tx;
	struct script_spent_output *spent = NULL;
	uint8_t *data = NULL;
	size_t len, off = 0, valid = 0;
	int rc = peertool_verify_parse_args(argc, argv, false, &a);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	proto_tx_init(&tx);
	rc = 1;
	if (peertool_prevouts_load(cmd, a.prevouts, &m))
		goto out;
	if (!(data = peertool_read_input(cmd, a.input, 0, &len)))
		goto out;
	int err = proto_tx_decode_buf(data, len, &tx, &off);
	if (err) {
		peertool_error(cmd, "invalid transaction at byte %zu: %s (%s)", off,
		               proto_strerror(err), proto_errname(err));
		goto out;
	}
	proto_tx_compute_ids(&tx);
	spent = xcalloc(tx.n_in ? tx.n_in : 1, sizeof(*spent));
	if (!spent) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	/* Every missing one named: a user fixes the file once, not once per input. */
	uint32_t missing = 0;
	for (uint32_t i = 0; i < tx.n_in; i++) {
		const struct prev_entry *e = peertool_prevmap_get(&m, &tx.vin[i].prevout);
		if (!e) {
			char hex[65];
			proto_hash_to_hex(&tx.vin[i].prevout.txid, hex);
			peertool_error(cmd, "missing prevout %s:%" PRIu32 " (input %" PRIu32 ")",
			               hex, tx.vin[i].prevout.n, i);
			missing++;
			continue;
		}
		spent[i] = e->out;
	}
	if (missing) {
		peertool_error(cmd, "%" PRIu32 " of %" PRIu32 " spent outputs missing from %s",
		               missing, tx.n_in, a.prevouts);
		goto out;
	}

	double t0 = peertool_verify_now_ms();
	int check = script_check_transaction(&tx);
	const char *reject = check ? script_tx_reason(check) : NULL;
	struct script_precomputed pre;
	json_t *inputs = json_array();
	if (!check)
		script_precompute(&pre, &tx, spent, false);
	for (uint32_t i = 0; i < tx.n_in; i++) {
		int e = SCRIPT_ERR_OK;
		if (!check && script_verify_input(&tx, i, &spent[i], a.flags, &pre, &e) == 0)
			valid++;
		json_array_append_new(inputs,
		                      peertool_verify_input_json(&tx, i, &spent[i], e, reject));
	}
	double ms = peertool_verify_now_ms() - t0;

	json_t *root = json_object();
	json_object_set_new(root, "txid", json_hash(&tx.txid));
	json_object_set_new(root, "flags", peertool_verify_flags_json(a.flags));
	json_object_set_new(root, "check", json_string(check ? reject : "ok"));
	json_object_set_new(root, "verdict",
	                    json_string(reject             ? reject
	                                : valid == tx.n_in ? "valid"
	                                                   : "invalid"));
	json_object_set_new(root, "inputs", inputs);
	json_object_set_new(root, "summary", peertool_verify_summary_json(1, tx.n_in, valid, ms));
	if (peertool_verify_print(cmd, root))
		goto out;
	rc = !check && valid == tx.n_in ? 0 : 1;
out:
	xfree(spent);
	xfree(data);
	proto_tx_release(&tx);
	peertool_prevmap_release(&m);
	return rc;
}
