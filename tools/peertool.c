/* tools/peertool.c: peertool's entry point, subcommand table and input reading. */
#include "tools/peertool.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/opt.h"
#include "base/version.h"
#include "proto/proto.h"

/* Inputs are transactions, blocks or messages: bounded by the largest
 * message (hex doubles it). */
#define PEERTOOL_MAX_INPUT (2 * (size_t)PROTO_MAX_MESSAGE + 4096)

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	void (*help)(FILE *out); /* `peertool help NAME` and NAME --help; NULL: the usage */
};

static const struct subcommand subcommands[] = {
    {"decode-tx", peertool_decode_tx,
     "decode-tx [--hex] [--chain NAME] FILE|HEX|-\n"
     "                                print a transaction as JSON (decoderawtransaction shape)",
     peertool_decode_tx_help},
    {"decode-block", peertool_decode_block,
     "decode-block [--hex] [--chain NAME] FILE|HEX|-\n"
     "                                print a block, or each record of a block file, as JSON\n"
     "                                (getblock HASH 2 shape)",
     peertool_decode_block_help},
    {"decode-msg", peertool_decode_msg,
     "decode-msg [--hex] [--chain NAME] FILE|HEX|-\n"
     "                                print framed P2P messages as JSON",
     peertool_decode_msg_help},
    {"verify-tx", peertool_verify_tx,
     "verify-tx --prevouts FILE [--flags LIST] TX\n"
     "                                verify every input's script",
     peertool_verify_tx_help},
    {"verify-block", peertool_verify_block,
     "verify-block --prevouts FILE|--utxo DATADIR [--flags LIST] [--chain NAME] [--height N]\n"
     "             [--par N] [--no-pow] BLOCK\n"
     "                                check a block as Core does (CheckBlock, contextual\n"
     "                                checks, scripts on N threads; with --utxo the whole\n"
     "                                of ConnectBlock against a chain), with Core's reasons",
     peertool_verify_block_help},
    {"chaingen", peertool_chaingen,
     "chaingen --blocks N [--seed S] [--txs-per-block K] [--out FILE] [...]\n"
     "                                write a deterministic signed regtest chain in\n"
     "                                block-file format (peertool help chaingen)",
     peertool_chaingen_help},
    {"connect-blocks", peertool_connect_blocks,
     "connect-blocks [--chain NAME] [--par N] [--dbcache MIB] [--utxo-stats] DATADIR FILE...\n"
     "                                validate block files into the chain at DATADIR\n"
     "                                (peertool help connect-blocks)",
     peertool_connect_help},
    {"check-standard", peertool_check_standard,
     "check-standard [--prevouts FILE] [--chain NAME] [knobs] HEX|FILE|-\n"
     "                                Core's standardness rules on a transaction, with\n"
     "                                testmempoolaccept's reject reason (peertool help\n"
     "                                check-standard)",
     peertool_check_standard_help},
    {"addrman", peertool_addrman,
     "addrman [--chain NAME] [--deterministic] [--load FILE] [--save FILE] [--dump] [SCRIPT|-]\n"
     "                                Core's address manager offline: load, apply calls,\n"
     "                                save peers.dat, print getrawaddrman's tables",
     peertool_addrman_help},
    {"grind", peertool_grind,
     "grind HEADER\n"
     "                                a header's nonce for its own bits (Core's\n"
     "                                bitcoin-util grind)",
     peertool_grind_help},
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: peertool COMMAND [OPTIONS] [ARGS...]\n"
	             "       peertool help COMMAND | -help | -version\n\n"
	             "Offline tools for Bitcoin P2P data. FILE may be '-' for stdin; a\n"
	             "transaction, block or message may also be given as hex, on the command\n"
	             "line or in a file.\n\n"
	             "Commands (peertool help COMMAND, or COMMAND --help, for more):\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %s\n", subcommands[i].usage);
	fprintf(out, "\n--chain (main, test, testnet4, signet, regtest; default main, or the\n"
	             "frame's network for decode-msg) picks the network of addresses, and for\n"
	             "verify-block the heights its soft forks activated at.\n"
	             "Options take -key=value, --key=value or --key value, in any order.\n\n"
	             "Exit codes: 0 success; 1 bad input or a failed check (one line on stderr\n"
	             "naming the problem and the byte offset); 2 usage error.\n\n"
	             "Example:\n"
	             "  peertool decode-block --chain regtest blk00000.dat\n");
}

void peertool_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "peertool: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint8_t *read_all(const char *cmd, const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		peertool_error(cmd, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 65536, n = 0;
	uint8_t *buf = xmalloc(cap);
	while (buf) {
		/* The limit is on bytes read, not on the buffer: the buffer
		 * doubles past PEERTOOL_MAX_INPUT, so checking its size let
		 * up to 8 MiB through. One byte over is enough to refuse. */
		if (n > PEERTOOL_MAX_INPUT) {
			peertool_error(cmd, "%s: input larger than %zu bytes", path,
			               (size_t)PEERTOOL_MAX_INPUT);
			goto fail;
		}
		if (n == cap) {
			size_t ncap =
			    cap * 2 > PEERTOOL_MAX_INPUT ? PEERTOOL_MAX_INPUT + 1 : cap * 2;
			uint8_t *p = xrealloc(buf, ncap);
			if (!p) {
				/* Not a partial input passed off as the whole. */
				xfree(buf);
				buf = NULL;
				break;
			}
			buf = p;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				peertool_error(cmd, "cannot read %s: %s", path, strerror(errno));
				goto fail;
			}
			break;
		}
	}
	if (!buf) {
		peertool_error(cmd, "out of memory");
		goto fail;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
fail:
	if (f != stdin)
		fclose(f);
	xfree(buf);
	return NULL;
}

int peertool_chain_arg(const struct base_opt_cmd *c, const char *val,
                       const struct proto_params **out)
{
	char low[16];
	size_t n = strlen(val);
	if (n < sizeof(low)) {
		for (size_t i = 0; i <= n; i++)
			low[i] = (char)tolower((unsigned char)val[i]);
		*out = proto_params_by_name(!strcmp(low, "testnet3") ? "test" : low);
		if (*out)
			return 0;
	}
	return base_opt_usage_error(c, "unknown chain '%s' (main, test, testnet4, signet, regtest)",
	                            val);
}

/* Whether s is non-empty, even-length hex: a transaction or block typed in. */
static bool is_hex_arg(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return n > 0 && n % 2 == 0;
}

/* Squeeze whitespace out of buf[0..n) and decode the hex in place: 0 with
 * *out_len, or -1 after an error (when `strict`) or when it is not hex. */
static int hex_in_place(const char *cmd, const char *what, uint8_t *buf, size_t n, bool strict,
                        size_t *out_len)
{
	size_t k = 0, bad;
	/* Look before changing anything: a file that is not hex stays raw. */
	for (bad = 0; bad < n; bad++)
		if (!isxdigit(buf[bad]) && !isspace(buf[bad]))
			break;
	if (bad < n && !strict)
		return -1;
	if (bad < n) {
		peertool_error(cmd, "%s: invalid hex character at offset %zu", what, bad);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!isspace(buf[i]))
			buf[k++] = buf[i];
	if (k == 0 && !strict)
		return -1;
	if (k % 2) {
		peertool_error(cmd, "%s: hex input has odd length %zu", what, k);
		return -2;
	}
	if (proto_hex_decode((const char *)buf, k, buf, k, out_len)) {
		peertool_error(cmd, "%s: invalid hex input", what);
		return -2;
	}
	return 0;
}

uint8_t *peertool_read_input(const char *cmd, const char *path, int hex, size_t *len)
{
	size_t n = 0;
	uint8_t *buf = NULL;
	const char *what = strcmp(path, "-") ? path : "stdin";
	if (strcmp(path, "-") && is_hex_arg(path) && access(path, F_OK) != 0) {
		/* Hex on the command line, as bitcoin-cli decoderawtransaction HEX. */
		n = strlen(path);
		if (n > PEERTOOL_MAX_INPUT) {
			peertool_error(cmd, "hex argument longer than %zu characters",
			               (size_t)PEERTOOL_MAX_INPUT);
			return NULL;
		}
		buf = xmalloc(n ? n : 1);
		if (!buf) {
			peertool_error(cmd, "out of memory");
			return NULL;
		}
		memcpy(buf, path, n);
		what = "argument";
		hex = 1;
	} else if (!(buf = read_all(cmd, path, &n))) {
		return NULL;
	}
	size_t out_len;
	int r = hex_in_place(cmd, what, buf, n, hex, &out_len);
	if (r == 0) {
		n = out_len;
	} else if (r == -2 || hex) {
		xfree(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
			if (strcmp(argv[2], subcommands[i].name))
				continue;
			if (subcommands[i].help)
				subcommands[i].help(stdout);
			else
				printf("usage: peertool %s\n", subcommands[i].usage);
			return 0;
		}
		fprintf(stderr, "peertool: unknown command '%s'\n", argv[2]);
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-version") || !strcmp(argv[1], "--version")) {
		printf("peertool %s\n", PEERD_VERSION_STRING);
		return 0;
	}
	if (base_opt_is_help(argv[1]) || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (!strcmp(argv[1], subcommands[i].name)) {
			int rc = subcommands[i].fn(argc - 1, argv + 1);
			proto_freelist_drain();
			return rc;
		}
	}
	fprintf(stderr, "peertool: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
