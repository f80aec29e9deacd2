/*
 * tools/peertool_verify.c: verify-tx and verify-block, checking every input
 * script of a transaction or block against spent outputs given in a file,
 * offline. For users checking their own transactions, and for checking
 * peerd's script/ against other implementations.
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
 *
 * verify-block also runs the block rules around the scripts, each verdict
 * Core's reject reason: all of CheckBlock (proof of work unless --no-pow,
 * merkle root, sizes, coinbase, every transaction, legacy sigops), then
 * ContextualCheckBlock. Without a chain the contextual checks get a
 * stand-in parent at the block's height (--height or BIP34) whose
 * median time is just under the block's own: a lock time is called
 * non-final only when it is for certain. With --utxo DATADIR the parent
 * comes from that chain's index, the header's contextual checks run too,
 * the spent outputs come from its UTXO set (no prevouts file), and the
 * whole of ConnectBlock runs in just-check mode (Core's TestBlockValidity):
 * the block must build on that chain's tip, and nothing is written.
 *
 * A block's flags are Bitcoin Core's GetBlockScriptFlags for its height on
 * --chain: given with --height, else read from the coinbase's BIP34 push,
 * else unknown, when today's consensus set applies. --flags overrides.
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
#include "tools/peertool.h"
#include "json/json.h"

/** Longest prevouts line (a 10,000-byte script in hex plus the rest). */
#define VERIFY_MAX_LINE (2u * SCRIPT_MAX_SIZE + 256u)
/** Most threads --par accepts (the check queue's limit). */
#define VERIFY_MAX_PAR POOL_MAX_THREADS
/** Highest --height accepted: Core keeps heights in an int. */
#define VERIFY_MAX_HEIGHT INT32_MAX
/** Longest BIP34 height push: 4 bytes hold every non-negative int32. */
#define VERIFY_BIP34_MAX_PUSH 4u

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
	        "Example:\n"
	        "  peertool verify-tx --prevouts spent.txt tx.hex\n\n"
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
	        "Exit codes: 0 the block is valid; 1 invalid (reject_reason says why),\n"
	        "inconclusive (--utxo and the parent is not the tip) or bad input; 2 usage\n"
	        "error.\n",
	        USAGE_BLOCK);
}

struct verify_args {
	const char *prevouts;
	const char *input;
	uint32_t flags;
	bool flags_given; /* --flags: used as is, whatever the height */
	int par;          /* threads in all; 0 = one per core */
	const struct proto_params *chain;
	int64_t height;   /* --height, or -1 */
	const char *utxo; /* --utxo DATADIR: parent, contextual checks and ConnectBlock from it */
	bool no_pow;      /* --no-pow: CheckBlock without the proof of work (Core's fCheckPOW) */
};

/* ---- spent outputs: the prevouts file and, for blocks, earlier outputs --- */

struct prev_entry {
	struct proto_outpoint op;
	struct script_spent_output out;
	size_t script_off; /* into the arena, until the arena stops moving */
	bool used;
};

struct prevmap {
	struct prev_entry *v; /* open addressing, cap a power of two */
	size_t cap, n;
	uint8_t *arena; /* scripts from the file */
	size_t arena_len, arena_cap;
};

static uint64_t op_hash(const struct proto_outpoint *o)
{
	/* txids are hashes already: mixing in n is enough */
	return proto_le64(o->txid.b) ^ ((uint64_t)o->n * 0x9e3779b97f4a7c15ull);
}

static int map_init(struct prevmap *m, size_t expect)
{
	size_t cap = 16;
	while (cap < 2 * expect + 16)
		cap *= 2;
	memset(m, 0, sizeof(*m));
	m->v = xcalloc(cap, sizeof(*m->v));
	if (!m->v)
		return -1;
	m->cap = cap;
	return 0;
}

static void map_release(struct prevmap *m)
{
	xfree(m->v);
	xfree(m->arena);
	memset(m, 0, sizeof(*m));
}

static struct prev_entry *map_slot(const struct prevmap *m, const struct proto_outpoint *o)
{
	size_t i = (size_t)op_hash(o) & (m->cap - 1);
	while (m->v[i].used) {
		if (m->v[i].op.n == o->n && proto_hash_eq(&m->v[i].op.txid, &o->txid))
			return &m->v[i];
		i = (i + 1) & (m->cap - 1);
	}
	return &m->v[i];
}

static int map_grow(struct prevmap *m)
{
	struct prevmap bigger = *m;
	bigger.cap = m->cap * 2;
	bigger.v = xcalloc(bigger.cap, sizeof(*bigger.v));
	if (!bigger.v)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->v[i].used)
			*map_slot(&bigger, &m->v[i].op) = m->v[i];
	}
	xfree(m->v);
	m->v = bigger.v;
	m->cap = bigger.cap;
	return 0;
}

/* Insert or replace; 0, or -1 when out of memory. */
static int map_put(struct prevmap *m, const struct prev_entry *e)
{
	if (2 * (m->n + 1) > m->cap && map_grow(m))
		return -1;
	struct prev_entry *s = map_slot(m, &e->op);
	if (!s->used)
		m->n++;
	*s = *e;
	s->used = true;
	return 0;
}

static const struct prev_entry *map_get(const struct prevmap *m, const struct proto_outpoint *o)
{
	const struct prev_entry *s = map_slot(m, o);
	return s->used ? s : NULL;
}

static int arena_append(struct prevmap *m, const uint8_t *p, size_t n, size_t *off)
{
	/* An empty script needs no room, and the arena may not exist yet:
	 * memcpy from or to NULL is undefined even for 0 bytes. */
	*off = m->arena_len;
	if (n == 0)
		return 0;
	if (m->arena_cap - m->arena_len < n) {
		size_t cap = m->arena_cap ? m->arena_cap : 4096;
		while (cap - m->arena_len < n)
			cap *= 2;
		uint8_t *a = xrealloc(m->arena, cap);
		if (!a)
			return -1;
		m->arena = a;
		m->arena_cap = cap;
	}
	memcpy(m->arena + m->arena_len, p, n);
	*off = m->arena_len;
	m->arena_len += n;
	return 0;
}

/* One "TXID:VOUT AMOUNT SCRIPTHEX" line; 0 or -1 after printing why. */
static int parse_prevout_line(const char *cmd, const char *path, unsigned lineno, char *line,
                              struct prevmap *m, uint8_t *scratch)
{
	char *save = NULL;
	char *op = strtok_r(line, " \t", &save);
	char *amount = strtok_r(NULL, " \t", &save);
	char *script = strtok_r(NULL, " \t", &save);
	char *extra = strtok_r(NULL, " \t", &save);
	struct prev_entry e = {0};
	char *colon, *end;

	if (!op || !amount || extra) {
		peertool_error(cmd, "%s line %u: expected TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX",
		               path, lineno);
		return -1;
	}
	colon = strchr(op, ':');
	if (!colon || colon - op != 64) {
		peertool_error(cmd, "%s line %u: bad outpoint '%s' (want 64 hex digits:VOUT)", path,
		               lineno, op);
		return -1;
	}
	*colon = 0;
	if (proto_hash_from_hex(op, &e.op.txid)) {
		peertool_error(cmd, "%s line %u: bad txid '%s'", path, lineno, op);
		return -1;
	}
	errno = 0;
	unsigned long long vout = strtoull(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || vout > UINT32_MAX) {
		peertool_error(cmd, "%s line %u: bad output index '%s'", path, lineno, colon + 1);
		return -1;
	}
	e.op.n = (uint32_t)vout;
	errno = 0;
	long long sats = strtoll(amount, &end, 10);
	if (!isdigit((unsigned char)amount[0]) || *end || errno || sats > PROTO_MAX_MONEY) {
		peertool_error(cmd, "%s line %u: bad amount '%s' (satoshis, 0..%lld)", path, lineno,
		               amount, (long long)PROTO_MAX_MONEY);
		return -1;
	}
	e.out.amount = sats;
	size_t slen = 0;
	if (script && proto_hex_decode(script, strlen(script), scratch, VERIFY_MAX_LINE, &slen)) {
		peertool_error(cmd, "%s line %u: bad scriptPubKey hex", path, lineno);
		return -1;
	}
	e.out.script_len = (uint32_t)slen;
	if (arena_append(m, scratch, slen, &e.script_off) || map_put(m, &e)) {
		peertool_error(cmd, "out of memory");
		return -1;
	}
	return 0;
}

/* Point every entry's script into the arena, now that it no longer moves. */
static void map_fix_scripts(struct prevmap *m)
{
	static const uint8_t empty[1];
	for (size_t i = 0; i < m->cap; i++) {
		if (m->v[i].used && !m->v[i].out.script)
			m->v[i].out.script = m->arena ? m->arena + m->v[i].script_off : empty;
	}
}

static int load_prevouts(const char *cmd, const char *path, struct prevmap *m)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	uint8_t *scratch = NULL;
	unsigned lineno = 0;
	int rc = -1;
	if (!f) {
		peertool_error(cmd, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	line = xmalloc(VERIFY_MAX_LINE + 2);
	scratch = xmalloc(VERIFY_MAX_LINE);
	if (!line || !scratch || map_init(m, 64)) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	while (fgets(line, VERIFY_MAX_LINE + 2, f)) {
		size_t len = strlen(line);
		lineno++;
		if (len > VERIFY_MAX_LINE) {
			peertool_error(cmd, "%s line %u: line too long", path, lineno);
			goto out;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == 0 || *p == '#')
			continue;
		if (parse_prevout_line(cmd, path, lineno, p, m, scratch))
			goto out;
	}
	if (ferror(f)) {
		peertool_error(cmd, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	map_fix_scripts(m);
	rc = 0;
out:
	if (f != stdin)
		fclose(f);
	xfree(line);
	xfree(scratch);
	return rc;
}

/* ---- input: raw or hex --------------------------------------------------- */

/* Read TX/BLOCK; hex when every non-space byte is a hex digit. */
static uint8_t *read_tx_or_block(const char *cmd, const char *path, size_t *len)
{
	size_t n;
	uint8_t *buf = peertool_read_input(cmd, path, 0, &n);
	if (!buf)
		return NULL;
	size_t digits = 0;
	bool hex = n > 0;
	for (size_t i = 0; i < n && hex; i++) {
		if (isxdigit(buf[i]))
			digits++;
		else if (!isspace(buf[i]))
			hex = false;
	}
	if (hex && digits > 0) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isspace(buf[i]))
				buf[k++] = buf[i];
		}
		if (proto_hex_decode((const char *)buf, k, buf, k, &n)) {
			peertool_error(cmd, "%s: hex input has odd length %zu", path, k);
			xfree(buf);
			return NULL;
		}
	}
	*len = n;
	return buf;
}

/* ---- arguments ------------------------------------------------------------ */

static int usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "peertool: %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", usage);
	return 2;
}

/* Parse the options; 0, or 2 after printing a usage error. */
static int parse_args(int argc, char **argv, bool block, struct verify_args *a)
{
	const char *usage = block ? USAGE_BLOCK : USAGE_TX;
	const char *cmd = argv[0];
	memset(a, 0, sizeof(*a));
	a->flags = SCRIPT_VERIFY_CONSENSUS;
	a->chain = proto_params(PROTO_NET_MAIN);
	a->height = -1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (block && !strcmp(arg, "--no-pow")) {
			a->no_pow = true;
			continue;
		}
		if (!strcmp(arg, "--prevouts") || !strcmp(arg, "--flags") ||
		    (block && (!strcmp(arg, "--par") || !strcmp(arg, "--chain") ||
		               !strcmp(arg, "--height") || !strcmp(arg, "--utxo")))) {
			if (i + 1 >= argc)
				return usage_error(cmd, usage, "%s needs a value", arg);
			const char *val = argv[++i];
			if (!strcmp(arg, "--prevouts")) {
				a->prevouts = val;
			} else if (!strcmp(arg, "--utxo")) {
				a->utxo = val;
			} else if (!strcmp(arg, "--flags")) {
				const char *bad = NULL;
				if (script_flags_parse(val, &a->flags, &bad))
					return usage_error(cmd, usage, "unknown flag in '%s'", bad);
				a->flags_given = true;
			} else if (!strcmp(arg, "--chain")) {
				a->chain = proto_params_by_name(val);
				if (!a->chain)
					return usage_error(
					    cmd, usage,
					    "unknown chain '%s' (main, test, testnet4, "
					    "signet, regtest)",
					    val);
			} else if (!strcmp(arg, "--height")) {
				char *end;
				errno = 0;
				long long h = strtoll(val, &end, 10);
				if (!isdigit((unsigned char)val[0]) || *end || errno ||
				    h > VERIFY_MAX_HEIGHT)
					return usage_error(
					    cmd, usage, "--height wants 0 to 2147483647, not '%s'",
					    val);
				a->height = h;
			} else {
				char *end;
				long par = strtol(val, &end, 10);
				if (!isdigit((unsigned char)val[0]) || *end || par < 0 ||
				    par > VERIFY_MAX_PAR)
					return usage_error(
					    cmd, usage,
					    "--par wants 0 (one per core) to 64, not '%s'", val);
				a->par = (int)par;
			}
		} else if (arg[0] == '-' && arg[1]) {
			return usage_error(cmd, usage, "unknown option '%s'", arg);
		} else if (!a->input) {
			a->input = arg;
		} else {
			return usage_error(cmd, usage, "unexpected argument '%s'", arg);
		}
	}
	if (a->prevouts && a->utxo)
		return usage_error(cmd, usage, "%s",
		                   "--prevouts and --utxo both name the spent outputs: give one");
	if (!a->prevouts && !a->utxo)
		return usage_error(cmd, usage, "%s",
		                   block ? "--prevouts FILE or --utxo DATADIR is required"
		                         : "--prevouts FILE is required");
	if (!a->input)
		return usage_error(cmd, usage, "%s", "no transaction or block given");
	/* Core refuses these combinations; give what they imply instead. */
	if (a->flags & SCRIPT_VERIFY_CLEANSTACK)
		a->flags |= SCRIPT_VERIFY_WITNESS;
	if (a->flags & SCRIPT_VERIFY_WITNESS)
		a->flags |= SCRIPT_VERIFY_P2SH;
	return 0;
}

/* ---- results ----------------------------------------------------------------- */

static double now_ms(void)
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
static json_t *input_json(const struct proto_tx *tx, uint32_t i,
                          const struct script_spent_output *spent, int err, const char *reject)
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

static json_t *summary_json(size_t txs, size_t inputs, size_t valid, double ms)
{
	json_t *s = json_object();
	json_object_set_new(s, "txs", json_integer((json_int_t)txs));
	json_object_set_new(s, "inputs", json_integer((json_int_t)inputs));
	json_object_set_new(s, "valid", json_integer((json_int_t)valid));
	json_object_set_new(s, "invalid", json_integer((json_int_t)(inputs - valid)));
	json_object_set_new(s, "ms", json_real((double)(long long)(ms * 1000.0 + 0.5) / 1000.0));
	return s;
}

static json_t *flags_json(uint32_t flags)
{
	char buf[1024];
	script_flags_format(flags, buf, sizeof(buf));
	return json_string(buf);
}

/* Printed here rather than with json_print: "ms" is a real, and
 * 9 significant digits keep it readable (0.358, not 0.35799999999999998). */
static int print_result(const char *cmd, json_t *root)
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
	int rc = parse_args(argc, argv, false, &a);
	if (rc)
		return rc;
	proto_tx_init(&tx);
	rc = 1;
	if (load_prevouts(cmd, a.prevouts, &m))
		goto out;
	if (!(data = read_tx_or_block(cmd, a.input, &len)))
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
	for (uint32_t i = 0; i < tx.n_in; i++) {
		const struct prev_entry *e = map_get(&m, &tx.vin[i].prevout);
		if (!e) {
			char hex[65];
			proto_hash_to_hex(&tx.vin[i].prevout.txid, hex);
			peertool_error(cmd, "missing prevout %s:%" PRIu32 " (input %" PRIu32 ")",
			               hex, tx.vin[i].prevout.n, i);
			goto out;
		}
		spent[i] = e->out;
	}

	double t0 = now_ms();
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
		json_array_append_new(inputs, input_json(&tx, i, &spent[i], e, reject));
	}
	double ms = now_ms() - t0;

	json_t *root = json_object();
	json_object_set_new(root, "txid", json_hash(&tx.txid));
	json_object_set_new(root, "flags", flags_json(a.flags));
	json_object_set_new(root, "check", json_string(check ? reject : "ok"));
	json_object_set_new(root, "verdict",
	                    json_string(reject             ? reject
	                                : valid == tx.n_in ? "valid"
	                                                   : "invalid"));
	json_object_set_new(root, "inputs", inputs);
	json_object_set_new(root, "summary", summary_json(1, tx.n_in, valid, ms));
	if (print_result(cmd, root))
		goto out;
	rc = !check && valid == tx.n_in ? 0 : 1;
out:
	xfree(spent);
	xfree(data);
	proto_tx_release(&tx);
	map_release(&m);
	return rc;
}

/* ---- block height: --height, or the coinbase's BIP34 push (flags: chain/rules.c) --- */

/* Where a block's height came from; names as printed in "height_source". */
enum height_source { HEIGHT_UNKNOWN, HEIGHT_OPTION, HEIGHT_BIP34, HEIGHT_PARENT };
static const char *const HEIGHT_SOURCE_NAMES[] = {"unknown", "option", "bip34", "parent"};

/*
 * BIP34's height in a coinbase scriptSig: only when it starts with exactly
 * the bytes Core's check wants, `CScript() << height` (OP_0, OP_1..OP_16,
 * else a minimal little-endian push), so any height read here is one Core
 * would accept. 0 with *height set, or -1.
 */
static int bip34_height(const uint8_t *s, size_t len, int64_t *height)
{
	if (len == 0)
		return -1;
	uint8_t op = s[0];
	if (op == 0x00) { /* OP_0 */
		*height = 0;
		return 0;
	}
	if (op >= 0x51 && op <= 0x60) { /* OP_1..OP_16 */
		*height = op - 0x50;
		return 0;
	}
	if (op < 1 || op > VERIFY_BIP34_MAX_PUSH || len - 1 < op)
		return -1;
	const uint8_t *num = s + 1;
	/* Minimal: no zero top byte unless it holds the sign of the one below;
	 * a set sign bit is a negative number, never a height. */
	if (num[op - 1] & 0x80)
		return -1;
	if (num[op - 1] == 0 && (op == 1 || !(num[op - 2] & 0x80)))
		return -1;
	int64_t v = 0;
	for (unsigned i = 0; i < op; i++)
		v |= (int64_t)num[i] << (8 * i);
	if (v <= 16) /* Core writes these as an opcode, never as a push */
		return -1;
	*height = v;
	return 0;
}

/* The height from the coinbase of a version >= 2 block (BIP34), or -1. */
static int64_t block_bip34_height(const struct proto_block *b)
{
	int64_t h;
	if (b->hdr.version < 2 || b->n_tx == 0 || !proto_tx_is_coinbase(&b->txs[0]))
		return -1;
	const struct proto_tx *cb = &b->txs[0];
	if (bip34_height(proto_txin_script(cb, &cb->vin[0]), cb->vin[0].script_len, &h))
		return -1;
	return h;
}

/* ---- verify-block ---------------------------------------------------------------- */

/* One input check on the queue: plain data, valid after memcpy. */
struct verify_job {
	uint32_t tx;
	uint32_t in;
	const struct script_spent_output *spent; /* into the round's spent array */
	int32_t *result;                         /* this input's slot in the results array */
};

struct verify_round {
	const struct proto_block *b;
	const struct script_precomputed *pre; /* per tx */
	uint32_t flags;
};

/* Never fails the round: every input gets its own result, so a failure
 * does not skip the others. */
static int verify_job_run(void *job, void *arg)
{
	const struct verify_job *j = job;
	const struct verify_round *r = arg;
	int err;
	int rc =
	    script_verify_input(&r->b->txs[j->tx], j->in, j->spent, r->flags, &r->pre[j->tx], &err);
	*j->result = rc ? err : SCRIPT_ERR_OK;
	return 0;
}

static int queue_par(int par)
{
	if (par == 0)
		return POOL_PAR_AUTO;
	if (par == 1)
		return POOL_PAR_NONE;
	return par - 1; /* the controller is one of the threads */
}

/*
 * Resolve every input's spent output, in block order: an output of an
 * earlier transaction of the block, else the prevouts file. 0, or 1 after
 * printing the missing outpoint.
 */
static int resolve_block(const char *cmd, struct proto_block *b, struct prevmap *m,
                         struct script_spent_output *spent, const size_t *first_in, bool quiet)
{
	struct prevmap in_block;
	size_t outs = 0;
	int rc = 1;
	for (uint32_t t = 0; t < b->n_tx; t++)
		outs += b->txs[t].n_out;
	if (map_init(&in_block, outs)) {
		peertool_error(cmd, "out of memory");
		return 1;
	}
	for (uint32_t t = 0; t < b->n_tx; t++) {
		struct proto_tx *tx = &b->txs[t];
		if (!(t == 0 && proto_tx_is_coinbase(tx))) {
			for (uint32_t i = 0; i < tx->n_in; i++) {
				const struct prev_entry *e =
				    map_get(&in_block, &tx->vin[i].prevout);
				if (!e)
					e = map_get(m, &tx->vin[i].prevout);
				if (!e && quiet)
					goto out;
				if (!e) {
					char hex[65];
					proto_hash_to_hex(&tx->vin[i].prevout.txid, hex);
					peertool_error(cmd,
					               "missing prevout %s:%" PRIu32 " (tx %" PRIu32
					               " input %" PRIu32 ")",
					               hex, tx->vin[i].prevout.n, t, i);
					goto out;
				}
				spent[first_in[t] + i] = e->out;
			}
		}
		proto_tx_compute_ids(tx);
		for (uint32_t o = 0; o < tx->n_out; o++) {
			struct prev_entry e = {0};
			e.op.txid = tx->txid;
			e.op.n = o;
			e.out.amount = tx->vout[o].value;
			e.out.script = proto_txout_script(tx, &tx->vout[o]);
			e.out.script_len = tx->vout[o].script_len;
			if (map_put(&in_block, &e)) {
				peertool_error(cmd, "out of memory");
				goto out;
			}
		}
	}
	rc = 0;
out:
	map_release(&in_block);
	return rc;
}

/* Run every job on the check queue; 0, or 1 after printing why not. */
static int run_jobs(const char *cmd, int par, struct verify_round *round, struct pool_vec *jobs)
{
	struct pool_queue *q = NULL;
	struct pool_queue_config cfg = {
	    .job_size = sizeof(struct verify_job),
	    .run = verify_job_run,
	    .release = NULL,
	    .par = queue_par(par),
	};
	int err = pool_queue_new(&q, &cfg);
	if (err) {
		peertool_error(cmd, "cannot start the check queue: %s", pool_strerror(err));
		return 1;
	}
	pool_queue_begin(q, round);
	err = pool_queue_take_vec(q, jobs);
	int verdict = pool_queue_complete(q);
	pool_queue_free(q);
	if (err) {
		peertool_error(cmd, "cannot queue jobs: %s", pool_strerror(err));
		return 1;
	}
	(void)verdict; /* jobs never fail the round; results carry the verdicts */
	return 0;
}

/* ---- the block rules around the scripts ---------------------------------------- */

/* What each stage said: "ok", Core's reject reason, or why it did not run. */
struct block_checks {
	char check[CHAIN_REASON_MAX];   /* CheckBlock */
	char context[CHAIN_REASON_MAX]; /* Contextual{CheckBlockHeader,CheckBlock} */
	char connect[CHAIN_REASON_MAX]; /* ConnectBlock, just checking (--utxo only) */
	const char *reject;             /* the first reason, or NULL */
	bool unsure;                    /* a stage that matters could not run */
	struct chain_node parent;       /* the stand-in parent without --utxo */
};

/* Record a stage's result; the first rejection is the block's reason. */
static int stage(struct block_checks *bc, char *slot, int err, const struct chain_state *st)
{
	if (err == 0) {
		snprintf(slot, CHAIN_REASON_MAX, "ok");
		return 0;
	}
	if (err != CHAIN_EINVALID)
		return err;
	snprintf(slot, CHAIN_REASON_MAX, "%s", st->reason);
	if (!bc->reject)
		bc->reject = slot;
	return 0;
}

/*
 * ContextualCheckBlock without the parent: a stand-in one block below
 * `height` whose median time past is the block's time less a second, the
 * latest Core's time-too-old allows. Lock times at or past the block's time
 * are non-final for certain; earlier ones may pass that the real parent
 * would refuse. The rest (BIP34, witness commitment, weight) needs only the
 * height. 0 or a chain error.
 */
static int context_without_parent(struct block_checks *bc, struct proto_block *b,
                                  const struct proto_params *p, int64_t height)
{
	struct chain_state st;
	chain_state_clear(&st);
	if (height < 0) {
		snprintf(bc->context, sizeof(bc->context), "skipped: height unknown");
		return 0;
	}
	memset(&bc->parent, 0, sizeof(bc->parent));
	bc->parent.height = (int32_t)height - 1;
	bc->parent.time = b->hdr.time ? b->hdr.time - 1 : 0;
	const struct chain_node *prev = height > 0 ? &bc->parent : NULL;
	return stage(bc, bc->context, chain_check_block_contextual(b, prev, p, &st), &st);
}

/*
 * Every spent output the chain's UTXO set holds, into m (outputs of the
 * block itself are found by resolve_block). 0 or a chain error.
 */
static int prevouts_from_coins(struct chain *c, const struct proto_block *b, struct prevmap *m)
{
	struct chain_coins *coins = chain_get_coins(c);
	for (uint32_t t = 1; t < b->n_tx; t++) {
		const struct proto_tx *tx = &b->txs[t];
		for (uint32_t i = 0; i < tx->n_in; i++) {
			struct chain_coin coin;
			struct prev_entry e = {0};
			int err = chain_coins_get(coins, &tx->vin[i].prevout, &coin);
			if (err == CHAIN_ENOTFOUND)
				continue;
			if (err)
				return err;
			e.op = tx->vin[i].prevout;
			e.out.amount = coin.value;
			e.out.script_len = coin.script_len;
			/* The coin's script is borrowed until the next lookup: copy it. */
			if (arena_append(m, coin.script, coin.script_len, &e.script_off) ||
			    map_put(m, &e))
				return CHAIN_ENOMEM;
		}
	}
	map_fix_scripts(m);
	return 0;
}

/*
 * --utxo: the parent from the chain's index, the contextual checks of the
 * header and the block, then ConnectBlock in just-check mode when the
 * block builds on the tip (Core's TestBlockValidity), and the spent
 * outputs for the per-input report. *height gets the block's height.
 * 0, 1 after printing why the chain cannot be used, or a chain error.
 */
static int check_on_chain(const char *cmd, const struct verify_args *a, struct chain **cp,
                          int *lock_fd, struct proto_block *b, bool block_ok,
                          struct block_checks *bc, struct prevmap *m, int64_t *height, json_t *root)
{
	const struct proto_params *p = a->chain;
	char netdir[4096];
	struct chain_config cfg = {.params = p, .dir = netdir, .par = a->par};
	struct chain_state st;
	int err;
	chain_state_clear(&st);
	snprintf(bc->connect, sizeof(bc->connect), "not run");
	/* Not created: chain_open would make a chain where a typo points. */
	if (peertool_netdir(cmd, a->utxo, p, false, netdir, sizeof(netdir), lock_fd))
		return 1;
	if ((err = chain_open(cp, &cfg))) {
		peertool_error(cmd, "cannot open the chain in %s: %s", netdir, chain_strerror(err));
		return 1;
	}
	struct chain *c = *cp;
	struct chain_node *prev = chain_index_find(chain_get_index(c), &b->hdr.prev);
	json_object_set_new(root, "utxo", json_string(a->utxo));
	json_object_set_new(root, "tip", json_hash(&chain_tip(c)->hash));
	if (!prev) {
		snprintf(bc->context, sizeof(bc->context), "prev-blk-not-found");
		bc->reject = bc->context;
		return 0;
	}
	*height = prev->height + 1;
	if (map_init(m, 64))
		return CHAIN_ENOMEM;
	if ((err = prevouts_from_coins(c, b, m)))
		return err;
	/* The header's checks need only the header; the block's assume CheckBlock
	 * passed (a coinbase to read the height from, ids computed). */
	err = chain_check_header_contextual(&b->hdr, prev, (int64_t)time(NULL), p, &st);
	if (err == 0 && block_ok)
		err = chain_check_block_contextual(b, prev, p, &st);
	if ((err = stage(bc, bc->context, err, &st)))
		return err;
	if (!block_ok && !strcmp(bc->context, "ok"))
		snprintf(bc->context, sizeof(bc->context), "not run (the header's passed)");
	if (prev != chain_tip(c)) {
		snprintf(bc->connect, sizeof(bc->connect),
		         "skipped: the parent is not the tip of %s's chain", a->utxo);
		bc->unsure = true;
		return 0;
	}
	if (!block_ok || bc->reject)
		return 0; /* Core connects only what passed the checks before */
	struct chain_node node = {.prev = prev, .height = prev->height + 1};
	proto_block_header_hash(&b->hdr, &node.hash);
	node.version = b->hdr.version;
	node.time = b->hdr.time;
	node.bits = b->hdr.bits;
	node.nonce = b->hdr.nonce;
	node.merkle_root = b->hdr.merkle_root;
	struct chain_connect_info info;
	err = chain_connect_block(chain_get_coins(c), chain_get_checker(c), b, &node, p, true, NULL,
	                          &info, &st);
	if ((err = stage(bc, bc->connect, err, &st)))
		return err;
	if (!strcmp(bc->connect, "ok")) {
		json_t *ci = json_object();
		json_object_set_new(ci, "fees", json_integer(info.fees));
		json_object_set_new(ci, "inputs", json_integer(info.inputs));
		json_object_set_new(ci, "sigops", json_integer(info.sigops));
		json_object_set_new(root, "connect_info", ci);
	}
	return 0;
}

static json_t *checks_json(const struct block_checks *bc, bool utxo)
{
	json_t *o = json_object();
	json_object_set_new(o, "check_block", json_string(bc->check));
	json_object_set_new(o, "contextual", json_string(bc->context));
	if (utxo)
		json_object_set_new(o, "connect", json_string(bc->connect));
	return o;
}

int peertool_verify_block(int argc, char **argv)
{
	const char *cmd = argv[0];
	struct verify_args a;
	struct prevmap m = {0};
	struct proto_block b;
	struct pool_vec jobs;
	struct script_spent_output *spent = NULL;
	struct script_precomputed *pre = NULL;
	size_t *first_in = NULL;
	int32_t *results = NULL;
	int *checks = NULL;
	uint8_t *data = NULL;
	struct chain *chain = NULL;
	int lock_fd = -1;
	struct block_checks bc;
	struct chain_state st;
	json_t *root = NULL;
	bool scripts_run = false;
	size_t len, off = 0, n_inputs = 0, valid = 0, total_in = 0;
	int rc = parse_args(argc, argv, true, &a);
	if (rc)
		return rc;
	proto_block_init(&b);
	pool_vec_init(&jobs, sizeof(struct verify_job));
	memset(&bc, 0, sizeof(bc));
	chain_state_clear(&st);
	rc = 1;
	if (a.prevouts && load_prevouts(cmd, a.prevouts, &m))
		goto out;
	if (!(data = read_tx_or_block(cmd, a.input, &len)))
		goto out;
	int err = proto_block_decode(data, len, &b, &off);
	if (err) {
		peertool_error(cmd, "invalid block at byte %zu: %s (%s)", off, proto_strerror(err),
		               proto_errname(err));
		goto out;
	}
	struct proto_hash hash;
	proto_block_header_hash(&b.hdr, &hash);
	enum height_source hsrc = HEIGHT_OPTION;
	int64_t height = a.height;
	if (height < 0) {
		height = block_bip34_height(&b);
		hsrc = height < 0 ? HEIGHT_UNKNOWN : HEIGHT_BIP34;
	}

	/* CheckBlock, then what needs the parent (or a stand-in), then on a chain
	 * ConnectBlock: Core's order, the first failure the block's reason. */
	if (!(root = json_object()))
		goto oom;
	err = stage(&bc, bc.check, chain_check_block(&b, a.chain, !a.no_pow, true, &st), &st);
	if (!err && a.utxo) {
		int64_t h = -1;
		err = check_on_chain(cmd, &a, &chain, &lock_fd, &b, !bc.reject, &bc, &m, &h, root);
		if (err == 1)
			goto out;
		if (h >= 0) {
			if (a.height >= 0 && a.height != h)
				peertool_error(cmd,
				               "--height %" PRId64
				               " ignored: the parent in %s puts "
				               "the block at %" PRId64,
				               a.height, a.utxo, h);
			height = h;
			hsrc = HEIGHT_PARENT;
		}
		if (!m.v && map_init(&m, 0))
			goto oom;
	} else if (!err && bc.reject) {
		/* ContextualCheckBlock assumes a block that passed CheckBlock. */
		snprintf(bc.context, sizeof(bc.context), "not run");
	} else if (!err) {
		err = context_without_parent(&bc, &b, a.chain, height);
	}
	if (err) {
		peertool_error(cmd, "%s", chain_strerror(err));
		goto out;
	}
	uint32_t flags =
	    a.flags_given ? a.flags : chain_block_script_flags(a.chain, &hash, (int32_t)height);
	if (hsrc == HEIGHT_UNKNOWN && !a.flags_given)
		peertool_error(cmd, "block height unknown (no BIP34 height in a version >= 2 "
		                    "coinbase): using today's consensus flags; --height N gives "
		                    "the rules of its time");

	first_in = xcalloc(b.n_tx + 1, sizeof(*first_in));
	pre = xcalloc(b.n_tx ? b.n_tx : 1, sizeof(*pre));
	checks = xcalloc(b.n_tx ? b.n_tx : 1, sizeof(*checks));
	if (!first_in || !pre || !checks)
		goto oom;
	for (uint32_t t = 0; t < b.n_tx; t++)
		first_in[t + 1] = first_in[t] + b.txs[t].n_in;
	total_in = first_in[b.n_tx];
	spent = xcalloc(total_in ? total_in : 1, sizeof(*spent));
	results = xcalloc(total_in ? total_in : 1, sizeof(*results));
	if (!spent || !results)
		goto oom;
	/* On a chain, a spent output it lacks is ConnectBlock's to report
	 * (bad-txns-inputs-missingorspent): the scripts are then not run. */
	scripts_run = !resolve_block(cmd, &b, &m, spent, first_in, a.utxo != NULL);
	if (!scripts_run && !a.utxo)
		goto out;

	double t0 = now_ms();
	for (uint32_t t = 0; t < b.n_tx && scripts_run; t++) {
		struct proto_tx *tx = &b.txs[t];
		if (t == 0 && proto_tx_is_coinbase(tx))
			continue;
		checks[t] = script_check_transaction(tx);
		if (checks[t])
			continue;
		script_precompute(&pre[t], tx, spent + first_in[t], false);
		for (uint32_t i = 0; i < tx->n_in; i++) {
			struct verify_job j = {t, i, &spent[first_in[t] + i],
			                       &results[first_in[t] + i]};
			if (pool_vec_push(&jobs, &j))
				goto oom;
		}
	}
	struct verify_round round = {&b, pre, flags};
	if (run_jobs(cmd, a.par, &round, &jobs))
		goto out;
	double ms = now_ms() - t0;

	json_t *txs = json_array();
	const char *script_reject = NULL;
	char script_reason[256]; /* Core's longest script error fits */
	for (uint32_t t = 0; t < b.n_tx && scripts_run; t++) {
		struct proto_tx *tx = &b.txs[t];
		json_t *o = json_object(), *ins = json_array();
		const char *reject = checks[t] ? script_tx_reason(checks[t]) : NULL;
		bool coinbase = t == 0 && proto_tx_is_coinbase(tx);
		json_object_set_new(o, "txid", json_hash(&tx->txid));
		json_object_set_new(o, "check", json_string(reject ? reject : "ok"));
		if (coinbase)
			json_object_set_new(o, "coinbase", json_true());
		for (uint32_t i = 0; i < tx->n_in && !coinbase; i++) {
			int e = results[first_in[t] + i];
			n_inputs++;
			valid += !reject && e == SCRIPT_ERR_OK;
			if (!reject && e != SCRIPT_ERR_OK && !script_reject) {
				/* Core's reason for the first failing input in block order */
				snprintf(script_reason, sizeof(script_reason),
				         "mandatory-script-verify-flag-failed (%s)",
				         script_error_core_string(e));
				script_reject = script_reason;
			}
			json_array_append_new(
			    ins, input_json(tx, i, &spent[first_in[t] + i], e, reject));
		}
		json_object_set_new(o, "inputs", ins);
		json_array_append_new(txs, o);
	}
	const char *reject = bc.reject ? bc.reject : script_reject;
	bool ok = !reject && !bc.unsure && scripts_run && valid == n_inputs;
	json_object_set_new(root, "hash", json_hash(&hash));
	json_object_set_new(root, "chain", json_string(a.chain->name));
	json_object_set_new(root, "height", height < 0 ? json_null() : json_integer(height));
	json_object_set_new(root, "height_source", json_string(HEIGHT_SOURCE_NAMES[hsrc]));
	json_object_set_new(root, "flags", flags_json(flags));
	json_object_set_new(root, "flags_source",
	                    json_string(a.flags_given            ? "option"
	                                : hsrc == HEIGHT_UNKNOWN ? "consensus"
	                                                         : "height"));
	json_object_set_new(root, "par", json_integer(a.par));
	json_object_set_new(root, "checks", checks_json(&bc, a.utxo != NULL));
	if (!scripts_run)
		json_object_set_new(root, "scripts", json_string("skipped: spent outputs missing"));
	json_object_set_new(root, "reject_reason", reject ? json_string(reject) : json_null());
	json_object_set_new(root, "verdict",
	                    json_string(ok                           ? "valid"
	                                : reject || valid < n_inputs ? "invalid"
	                                                             : "inconclusive"));
	json_object_set_new(root, "txs", txs);
	json_object_set_new(root, "summary", summary_json(b.n_tx, n_inputs, valid, ms));
	rc = print_result(cmd, root);
	root = NULL; /* print_result took it */
	if (!rc)
		rc = ok ? 0 : 1;
	goto out;
oom:
	peertool_error(cmd, "out of memory");
out:
	json_decref(root);
	if (chain && chain_close(chain))
		peertool_error(cmd, "closing the chain in %s failed", a.utxo);
	if (lock_fd >= 0)
		close(lock_fd);
	pool_vec_release(&jobs, NULL, NULL);
	xfree(first_in);
	xfree(pre);
	xfree(checks);
	xfree(spent);
	xfree(results);
	xfree(data);
	proto_block_release(&b);
	map_release(&m);
	return rc;
}

/* ---- shared with check-standard (tools/peertool_policy.c) ------------------ */

uint8_t *peertool_read_tx_or_block(const char *cmd, const char *path, size_t *len)
{
	return read_tx_or_block(cmd, path, len);
}

int peertool_prevouts_for_tx(const char *cmd, const char *path, const struct proto_tx *tx,
                             struct script_spent_output **spent, uint8_t **arena)
{
	struct prevmap m = {0};
	size_t total = 0, off = 0;
	int rc = 1;
	*spent = NULL;
	*arena = NULL;
	if (load_prevouts(cmd, path, &m))
		goto out;
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct prev_entry *e = map_get(&m, &tx->vin[i].prevout);
		if (!e) {
			char hex[65];
			proto_hash_to_hex(&tx->vin[i].prevout.txid, hex);
			peertool_error(cmd, "missing prevout %s:%" PRIu32 " (input %" PRIu32 ")",
			               hex, tx->vin[i].prevout.n, i);
			goto out;
		}
		total += e->out.script_len;
	}
	/* The scripts move to one buffer of the caller's: the map goes now. */
	*spent = xcalloc(tx->n_in ? tx->n_in : 1, sizeof(**spent));
	*arena = xmalloc(total ? total : 1);
	if (!*spent || !*arena) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct prev_entry *e = map_get(&m, &tx->vin[i].prevout);
		(*spent)[i] = e->out;
		if (e->out.script_len)
			memcpy(*arena + off, e->out.script, e->out.script_len);
		(*spent)[i].script = *arena + off;
		off += e->out.script_len;
	}
	rc = 0;
out:
	if (rc) {
		xfree(*spent);
		xfree(*arena);
		*spent = NULL;
		*arena = NULL;
	}
	map_release(&m);
	return rc;
}
