/*
 * tools/peertool_grind.c: `peertool grind HEADER`, Core's `bitcoin-util
 * grind`: the header with a nonce (and, once every nonce was tried, a
 * later time) whose hash meets its own bits. Tests use it to make blocks
 * on networks whose minimum difficulty Python cannot grind in time
 * (signet: about five million hashes a block).
 */
#include <stdio.h>
#include <string.h>

#include "base/opt.h"
#include "proto/proto.h"
#include "tools/peertool.h"

static const struct base_opt_cmd CMD_GRIND = {
    "peertool", "grind", "usage: peertool grind HEADER", NULL, 0, peertool_grind_help,
};

void peertool_grind_help(FILE *f)
{
	fprintf(f,
	        "%s\n\n"
	        "HEADER is an 80-byte block header in hex. Prints it in hex with the\n"
	        "first nonce, counting from its own, whose hash is at or below the\n"
	        "target of its bits; when all 2^32 nonces fail, the time goes up by one\n"
	        "second and the nonces start again from 0 (Core's bitcoin-util grind).\n\n"
	        "Example:\n"
	        "  peertool grind 0000002006226e46...ffff7f2000000000\n\n"
	        "Exit codes: 0 found, 1 bad header or bits, 2 usage error.\n",
	        CMD_GRIND.usage);
}

static int no_option(void *ctx, int id, const char *val)
{
	(void)ctx;
	(void)id;
	(void)val;
	return 0; /* there are none: base_opt_parse refuses every one */
}

int peertool_grind(int argc, char **argv)
{
	const char *hex = NULL;
	size_t n = 0;
	int rc = base_opt_parse(&CMD_GRIND, argc, argv, no_option, NULL, &hex, 1, &n);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	if (!n)
		return base_opt_usage_error(&CMD_GRIND, "no header given");
	uint8_t raw[PROTO_BLOCK_HEADER_SIZE];
	size_t len = 0;
	if (strlen(hex) != 2 * sizeof(raw) ||
	    proto_hex_decode(hex, strlen(hex), raw, sizeof(raw), &len) || len != sizeof(raw)) {
		peertool_error("grind", "not an 80-byte header in hex");
		return 1;
	}
	struct proto_block_header h;
	struct proto_reader r;
	proto_reader_init(&r, raw, sizeof(raw));
	if (proto_block_header_decode(&r, &h)) {
		peertool_error("grind", "header does not decode");
		return 1;
	}
	uint8_t target[32];
	if (proto_bits_to_target(h.bits, target)) {
		peertool_error("grind", "bits 0x%08x are not a valid target", h.bits);
		return 1;
	}
	struct proto_hash limit;
	memcpy(limit.b, target, 32);
	for (;;) {
		struct proto_hash hash;
		proto_block_header_hash(&h, &hash);
		if (proto_check_pow(&hash, h.bits, &limit))
			break;
		if (++h.nonce == 0)
			h.time++;
	}
	struct proto_writer w;
	proto_writer_init_fixed(&w, raw, sizeof(raw));
	proto_block_header_encode(&h, &w);
	char out[2 * PROTO_BLOCK_HEADER_SIZE + 1];
	proto_hex_encode(raw, sizeof(raw), out);
	printf("%s\n", out);
	return 0;
}
