/* tools/peertool.c: peertool's entry point, subcommand table and input reading. */
#include "tools/peertool.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "proto/proto.h"

/* Inputs are transactions, blocks or messages: bounded by the largest
 * message (hex doubles it). */
#define PEERTOOL_MAX_INPUT (2 * (size_t)PROTO_MAX_MESSAGE + 4096)

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	void (*help)(FILE *out); /* `peertool help NAME`; NULL: the usage line */
};

static const struct subcommand subcommands[] = {
    {"decode-tx", peertool_decode_tx,
     "decode-tx [--hex] [--chain NAME] FILE|-\n"
     "                                print a transaction as JSON (decoderawtransaction shape)",
     NULL},
    {"decode-block", peertool_decode_block,
     "decode-block [--hex] [--chain NAME] FILE|-\n"
     "                                print a block as JSON (getblock HASH 2 shape)",
     NULL},
    {"decode-msg", peertool_decode_msg,
     "decode-msg [--hex] [--chain NAME] FILE|-\n"
     "                                print a framed P2P message as JSON",
     NULL},
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
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: peertool COMMAND [ARGS...]\n\n"
	             "Offline tools for Bitcoin P2P data. FILE may be '-' for stdin.\n\n"
	             "Commands (peertool help COMMAND for more):\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %s\n", subcommands[i].usage);
	fprintf(out,
	        "\n--chain (main, test, testnet4, signet, regtest; default main, or the\n"
	        "frame's network for decode-msg) picks the network of addresses, and for\n"
	        "verify-block the heights its soft forks activated at.\n"
	        "Errors print one line naming the problem and the byte offset; exit code 1.\n");
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

uint8_t *peertool_read_input(const char *cmd, const char *path, int hex, size_t *len)
{
	size_t n = 0;
	uint8_t *buf = read_all(cmd, path, &n);
	if (!buf || !hex) {
		*len = n;
		return buf;
	}
	/* Decode in place: squeeze out whitespace, then hex pairs. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isspace(buf[i]))
			buf[k++] = buf[i];
	/* Find a bad character first: decoding in place overwrites the text. */
	size_t bad = 0;
	while (bad < k && isxdigit(buf[bad]))
		bad++;
	size_t out_len;
	if (bad < k || k % 2) {
		if (bad < k)
			peertool_error(cmd, "invalid hex character at offset %zu", bad);
		else
			peertool_error(cmd, "hex input has odd length %zu", k);
		xfree(buf);
		return NULL;
	}
	if (proto_hex_decode((const char *)buf, k, buf, k, &out_len)) {
		peertool_error(cmd, "invalid hex input");
		xfree(buf);
		return NULL;
	}
	*len = out_len;
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
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-help") ||
	    !strcmp(argv[1], "help")) {
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
