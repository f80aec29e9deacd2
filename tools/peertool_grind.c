/*
 * tools/peertool_grind.c: `peertool grind HEADER`, Core's `bitcoin-util
 * grind`: the header with a nonce (and, once every nonce was tried, a
 * later time) whose hash meets its own bits. Tests use it to make blocks
 * on networks whose minimum difficulty Python cannot grind in time
 * (signet: about five million hashes a block).
 */
#include <stdio.h>
#include <string.h>

#include "proto/proto.h"
#include "tools/peertool.h"

void peertool_grind_help(FILE *f)
{
	fprintf(f, "usage: peertool grind HEADER\n\n"
	           "HEADER is an 80-byte block header in hex. Prints it in hex with the\n"
	           "first nonce, counting from its own, whose hash is at or below the\n"
	           "target of its bits; when all 2^32 nonces fail, the time goes up by one\n"
	           "second and the nonces start again from 0 (Core's bitcoin-util grind).\n\n"
	           "Exit codes: 0 found, 1 bad header or bits, 2 usage error.\n");
}

int peertool_grind(int argc, char **argv)
{
	if (argc != 2) {
		peertool_grind_help(stderr);
		return 2;
	}
	uint8_t raw[PROTO_BLOCK_HEADER_SIZE];
	size_t len = 0;
	const char *hex = argv[1];
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
