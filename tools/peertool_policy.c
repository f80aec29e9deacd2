/*
 * tools/peertool_policy.c: check-standard, Bitcoin Core's mempool
 * standardness rules on one transaction, offline (mempool/policy.h).
 *
 *   peertool check-standard [--prevouts FILE] [--chain NAME] [knobs] TX
 *
 * The checks of Core's MemPoolAccept::PreChecks that need neither a chain
 * tip nor a mempool, in Core's order, each with Core's reject reason:
 * CheckTransaction, coinbase, IsStandardTx, tx-size-small; then, with the
 * spent outputs from a prevouts file (verify-tx's format), the input
 * values, AreInputsStandard, IsWitnessStandard, ephemeral dust, the
 * sigop limit and the min relay fee. Finality, conflicts, BIP68,
 * coinbase maturity, replacement, package limits and the scripts
 * themselves (verify-tx) are not checked. The answer is testmempoolaccept's
 * fields: "reject-reason", and "reject-details" as Core 29 builds it
 * (the reason, then ", " and the debug message when there is one).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "mempool/mempool.h"
#include "json/json.h"
#include "script/script.h"
#include "base/opt.h"
#include "tools/peertool.h"

static const char USAGE[] =
    "usage: peertool check-standard [--prevouts FILE] [--chain NAME] [--acceptnonstdtxn 0|1]\n"
    "                               [--permitbaremultisig 0|1] [--datacarrier 0|1]\n"
    "                               [--datacarriersize N] [--bytespersigop N]\n"
    "                               [--dustrelayfee SAT_PER_KVB] [--minrelaytxfee SAT_PER_KVB]\n"
    "                               HEX|FILE|-";

/** Largest value a knob takes (sat/kvB, bytes): far over any sensible setting. */
#define POLICY_MAX_KNOB 2100000000000000LL

void peertool_check_standard_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "Check one transaction against Bitcoin Core's standardness rules, in the order\n"
	        "Core's mempool applies them, and print Core's verdict as JSON:\n"
	        "  {\"standard\", \"reject-reason\", \"reject-details\", \"result\", \"vsize\",\n"
	        "   \"sigopcost\", \"weight\", \"fee\", \"txid\", \"wtxid\"}\n"
	        "reject-reason and reject-details are testmempoolaccept's (null when standard);\n"
	        "result is Core's TxValidationResult name.\n\n"
	        "Without --prevouts: CheckTransaction, coinbase, IsStandardTx, tx-size-small;\n"
	        "sigopcost then counts only the legacy sigops, and fee is null. With --prevouts\n"
	        "FILE (one spent output a line: TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX, as\n"
	        "verify-tx): also the input values, AreInputsStandard, IsWitnessStandard,\n"
	        "ephemeral dust, the sigop limit and the min relay fee. Not checked: finality,\n"
	        "mempool conflicts, BIP68, coinbase maturity, replacement, package limits, and\n"
	        "the scripts (use verify-tx).\n\n"
	        "TX is hex on the command line, or a file (raw or hex), '-' for stdin.\n"
	        "--chain (default main) sets Core's -acceptnonstdtxn default; the other\n"
	        "options are Core's knobs of the same names, fees in sat/kvB.\n\n"
	        "Example:\n"
	        "  peertool check-standard --prevouts spent.txt 0200000001...\n\n"
	        "Exit codes: 0 standard, 1 rejected or bad input, 2 usage error.\n",
	        USAGE);
}

/* Core's TxValidationResult names, by enum chain_result. */
static const char *result_name(enum chain_result r)
{
	switch (r) {
	case CHAIN_RESULT_UNSET:
		return "TX_RESULT_UNSET";
	case CHAIN_RESULT_CONSENSUS:
		return "TX_CONSENSUS";
	case CHAIN_RESULT_TX_INPUTS_NOT_STANDARD:
		return "TX_INPUTS_NOT_STANDARD";
	case CHAIN_RESULT_TX_NOT_STANDARD:
		return "TX_NOT_STANDARD";
	case CHAIN_RESULT_TX_MISSING_INPUTS:
		return "TX_MISSING_INPUTS";
	case CHAIN_RESULT_TX_PREMATURE_SPEND:
		return "TX_PREMATURE_SPEND";
	case CHAIN_RESULT_TX_WITNESS_MUTATED:
		return "TX_WITNESS_MUTATED";
	case CHAIN_RESULT_TX_WITNESS_STRIPPED:
		return "TX_WITNESS_STRIPPED";
	case CHAIN_RESULT_TX_CONFLICT:
		return "TX_CONFLICT";
	case CHAIN_RESULT_TX_MEMPOOL_POLICY:
		return "TX_MEMPOOL_POLICY";
	case CHAIN_RESULT_TX_NO_MEMPOOL:
		return "TX_NO_MEMPOOL";
	case CHAIN_RESULT_TX_RECONSIDERABLE:
		return "TX_RECONSIDERABLE";
	case CHAIN_RESULT_TX_UNKNOWN:
		return "TX_UNKNOWN";
	default:
		return "UNKNOWN";
	}
}

struct policy_args {
	const char *prevouts;
	const char *input;
	struct mempool_policy pol;
};

/* A knob's value: 0..max; 0 or -1. */
static int parse_num(const char *s, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || *end || errno || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The options, by index into OPTIONS; the 0|1 ones first after the two names. */
enum option {
	OPT_PREVOUTS,
	OPT_CHAIN,
	OPT_ACCEPTNONSTDTXN,
	OPT_PERMITBAREMULTISIG,
	OPT_DATACARRIER,
	OPT_DATACARRIERSIZE, /* the numbers from here on */
	OPT_BYTESPERSIGOP,
	OPT_DUSTRELAYFEE,
	OPT_MINRELAYTXFEE,
	OPT__COUNT,
};
static const struct base_opt_spec OPTIONS[OPT__COUNT] = {
    {"prevouts", OPT_PREVOUTS, true},
    {"chain", OPT_CHAIN, true},
    {"acceptnonstdtxn", OPT_ACCEPTNONSTDTXN, true},
    {"permitbaremultisig", OPT_PERMITBAREMULTISIG, true},
    {"datacarrier", OPT_DATACARRIER, true},
    {"datacarriersize", OPT_DATACARRIERSIZE, true},
    {"bytespersigop", OPT_BYTESPERSIGOP, true},
    {"dustrelayfee", OPT_DUSTRELAYFEE, true},
    {"minrelaytxfee", OPT_MINRELAYTXFEE, true},
};
static const struct base_opt_cmd POLICY_CMD = {
    "peertool", "check-standard", USAGE, OPTIONS, OPT__COUNT, peertool_check_standard_help};

/* Apply one knob's value (already range-checked) to pol. */
static void set_knob(struct mempool_policy *pol, enum option o, long long v)
{
	switch (o) {
	case OPT_ACCEPTNONSTDTXN:
		pol->require_standard = v == 0;
		break;
	case OPT_PERMITBAREMULTISIG:
		pol->permit_bare_multisig = v != 0;
		break;
	case OPT_DATACARRIER:
		pol->datacarrier = v != 0;
		break;
	case OPT_DATACARRIERSIZE:
		pol->max_datacarrier_bytes = (uint32_t)v;
		break;
	case OPT_BYTESPERSIGOP:
		pol->bytes_per_sigop = v;
		break;
	case OPT_DUSTRELAYFEE:
		pol->dust_relay_feerate = v;
		break;
	case OPT_MINRELAYTXFEE:
		pol->min_relay_feerate = v;
		break;
	default:
		break;
	}
}

struct policy_parse {
	struct policy_args *a;
	const struct proto_params *chain;
	int pass;
};

/* base/opt.c's callback: pass 0 takes --chain, pass 1 the knobs over its defaults. */
static int set_option(void *ctx, int id, const char *val)
{
	struct policy_parse *pp = ctx;
	long long v;
	if (id == OPT_CHAIN)
		return peertool_chain_arg(&POLICY_CMD, val, &pp->chain);
	if (pp->pass == 0)
		return 0;
	if (id == OPT_PREVOUTS) {
		pp->a->prevouts = val;
		return 0;
	}
	bool flag = id < OPT_DATACARRIERSIZE;
	long long max = id == OPT_DATACARRIERSIZE ? UINT32_MAX : POLICY_MAX_KNOB;
	if (parse_num(val, flag ? 1 : max, &v))
		return base_opt_usage_error(
		    &POLICY_CMD, flag ? "--%s: '%s' is not 0 or 1" : "--%s: bad number '%s'",
		    OPTIONS[id].name, val);
	set_knob(&pp->a->pol, (enum option)id, v);
	return 0;
}

/* 0, BASE_OPT_HELP after the help, or 2 after a usage error. */
static int parse_args(int argc, char **argv, struct policy_args *a)
{
	struct policy_parse pp = {a, proto_params(PROTO_NET_MAIN), 0};
	size_t n;
	/* Two passes: --chain sets the defaults the other knobs change. */
	for (pp.pass = 0; pp.pass < 2; pp.pass++) {
		memset(a, 0, sizeof(*a));
		mempool_policy_default(&a->pol, pp.chain);
		int rc = base_opt_parse(&POLICY_CMD, argc, argv, set_option, &pp, &a->input, 1, &n);
		if (rc)
			return rc;
	}
	if (!a->input)
		return base_opt_usage_error(&POLICY_CMD,
		                            "a transaction (HEX, FILE or -) is required");
	return 0;
}

/* TX from the command line: '-' and file names are read, hex taken as is. */
static uint8_t *read_tx_arg(const char *cmd, const char *arg, size_t *len)
{
	size_t n = strlen(arg), i = 0;
	while (i < n && isxdigit((unsigned char)arg[i]))
		i++;
	if (strcmp(arg, "-") && n > 0 && i == n) {
		uint8_t *buf = xmalloc(n / 2 + 1);
		if (!buf) {
			peertool_error(cmd, "out of memory");
			return NULL;
		}
		if (proto_hex_decode(arg, n, buf, n / 2 + 1, len)) {
			peertool_error(cmd, "hex input has odd length %zu", n);
			xfree(buf);
			return NULL;
		}
		return buf;
	}
	return peertool_read_tx_or_block(cmd, arg, len);
}

/* What the checks found; *st says why when rc is CHAIN_EINVALID. */
struct verdict {
	uint32_t sigops;
	int64_t vsize;
	bool have_fee;
	int64_t fee;
};

/*
 * Core's PreChecks, the parts that need no chain or mempool, in its order.
 * prev is NULL without a prevouts file. 0 or CHAIN_EINVALID.
 */
static int run_checks(const struct proto_tx *tx, const struct chain_coin *prev,
                      const struct mempool_policy *pol, struct verdict *v, struct chain_state *st)
{
	int err;
	v->sigops = chain_tx_legacy_sigops(tx) * PROTO_WITNESS_SCALE;
	v->vsize = mempool_policy_vsize(proto_tx_weight(tx), v->sigops, pol->bytes_per_sigop);
	if ((err = script_check_transaction(tx)))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, script_tx_reason(err), NULL);
	/* a coinbase is only valid in a block */
	if (proto_tx_is_coinbase(tx))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "coinbase", NULL);
	if (pol->require_standard && (err = mempool_policy_check_standard(tx, pol, st)))
		return err;
	if ((err = mempool_policy_check_nonwitness_size(tx, st)))
		return err;
	if (!prev)
		return 0;

	/* Consensus::CheckTxInputs, without maturity (no heights here) */
	int64_t in = 0, out = 0;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		in += prev[j].value;
		if (prev[j].value < 0 || prev[j].value > PROTO_MAX_MONEY || in > PROTO_MAX_MONEY)
			return chain_reject(st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-inputvalues-outofrange", NULL);
	}
	for (uint32_t k = 0; k < tx->n_out; k++)
		out += tx->vout[k].value; /* CheckTransaction bounded each and the sum */
	if (in < out) {
		char a[PROTO_MONEY_STRLEN], b[PROTO_MONEY_STRLEN];
		proto_format_money(in, a);
		proto_format_money(out, b);
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-txns-in-belowout",
		                    "value in (%s) < value out (%s)", a, b);
	}
	v->have_fee = true;
	v->fee = in - out;

	if (pol->require_standard && (err = mempool_policy_check_inputs(tx, prev, st)))
		return err;
	if (tx->has_witness && pol->require_standard &&
	    (err = mempool_policy_check_witness(tx, prev, st)))
		return err;
	v->sigops = chain_tx_sigop_cost(tx, prev, SCRIPT_VERIFY_STANDARD);
	v->vsize = mempool_policy_vsize(proto_tx_weight(tx), v->sigops, pol->bytes_per_sigop);
	/* Core judges ephemeral dust before the sigop limit (no prioritisation
	 * here: the modified fee is the fee) */
	if (pol->require_standard &&
	    (err = mempool_policy_check_ephemeral(tx, v->fee, v->fee, pol, st)))
		return err;
	if ((err = mempool_policy_check_sigops(v->sigops, st)))
		return err;
	return mempool_policy_check_min_relay_fee(v->fee, v->vsize, pol, st);
}

int peertool_check_standard(int argc, char **argv)
{
	const char *cmd = argv[0];
	struct policy_args a;
	struct proto_tx tx;
	struct script_spent_output *spent = NULL;
	struct chain_coin *prev = NULL;
	uint8_t *arena = NULL, *data = NULL;
	size_t len, off = 0;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	rc = 1;
	proto_tx_init(&tx);
	if (!(data = read_tx_arg(cmd, a.input, &len)))
		goto out;
	int err = proto_tx_decode_buf(data, len, &tx, &off);
	if (err) {
		peertool_error(cmd, "invalid transaction at byte %zu: %s (%s)", off,
		               proto_strerror(err), proto_errname(err));
		goto out;
	}
	proto_tx_compute_ids(&tx);
	if (a.prevouts) {
		if (peertool_prevouts_for_tx(cmd, a.prevouts, &tx, &spent, &arena))
			goto out;
		prev = xcalloc(tx.n_in ? tx.n_in : 1, sizeof(*prev));
		if (!prev) {
			peertool_error(cmd, "out of memory");
			goto out;
		}
		for (uint32_t j = 0; j < tx.n_in; j++)
			prev[j] = (struct chain_coin){.value = spent[j].amount,
			                              .script = spent[j].script,
			                              .script_len = spent[j].script_len};
	}

	struct chain_state st;
	struct verdict v = {0};
	chain_state_clear(&st);
	bool ok = run_checks(&tx, prev, &a.pol, &v, &st) == 0;

	json_t *root = json_object();
	json_object_set_new(root, "txid", json_hash(&tx.txid));
	json_object_set_new(root, "wtxid", json_hash(&tx.wtxid));
	json_object_set_new(root, "standard", json_boolean(ok));
	if (ok) {
		json_object_set_new(root, "reject-reason", json_null());
		json_object_set_new(root, "reject-details", json_null());
	} else {
		char details[CHAIN_REASON_MAX + CHAIN_DEBUG_MAX + 2];
		snprintf(details, sizeof(details), "%s%s%s", st.reason, st.debug[0] ? ", " : "",
		         st.debug);
		json_object_set_new(root, "reject-reason", json_string(st.reason));
		json_object_set_new(root, "reject-details", json_string(details));
	}
	json_object_set_new(root, "result", json_string(result_name(st.result)));
	json_object_set_new(root, "vsize", json_integer(v.vsize));
	json_object_set_new(root, "sigopcost", json_integer(v.sigops));
	json_object_set_new(root, "weight", json_integer(proto_tx_weight(&tx)));
	json_object_set_new(root, "fee", v.have_fee ? json_integer(v.fee) : json_null());
	char *s = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	if (!s) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	puts(s);
	free(s);
	rc = ok ? 0 : 1;
out:
	xfree(prev);
	xfree(spent);
	xfree(arena);
	xfree(data);
	proto_tx_release(&tx);
	return rc;
}
