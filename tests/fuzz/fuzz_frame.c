/*
 * tests/fuzz/fuzz_frame.c: the frame header parser and payload checksum on
 * arbitrary bytes.
 *
 * Input: a 24-byte header followed by whatever payload bytes there are. The
 * header is parsed once against mainnet's magic and once against the magic
 * it carries (so every input gets past the magic check). Whatever parses
 * must be consistent: the length within the limit, the command valid, and
 * a frame rebuilt from the parsed fields must parse back to the same
 * header and verify.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

#define MAGIC_MAIN 0xd9b4bef9u

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_frame: invariant broken: %s\n", what);
		abort();
	}
}

static void parsed_ok(const struct proto_frame_header *h, const uint8_t *payload, size_t avail)
{
	check(h->length <= PROTO_MAX_MESSAGE, "accepted length over the limit");
	size_t n = strlen(h->command);
	check(n <= PROTO_COMMAND_SIZE, "command not terminated");
	for (size_t i = 0; i < n; i++)
		check(h->command[i] >= 0x20 && h->command[i] <= 0x7e,
		      "accepted a non-printable command");
	enum proto_cmd c = proto_cmd_lookup(h->command);
	check(c == h->cmd, "lookup disagrees with the parsed command");
	if (c != PROTO_CMD_UNKNOWN)
		check(strcmp(proto_cmd_name(c), h->command) == 0,
		      "name of a known command differs");

	if (h->length > avail)
		return;
	int v = proto_frame_verify(h, payload);
	check(v == 0 || v == PROTO_ECHECKSUM, "verify returned an unexpected code");

	/* Rebuild the frame with the correct checksum: it must parse back to
	 * the same fields and verify. */
	struct proto_writer w;
	proto_writer_init(&w);
	proto_frame_write(&w, h->magic, h->command, payload, h->length);
	check(w.err == 0 || w.err == PROTO_ENOMEM, "frame_write failed on a parsed header");
	if (!w.err) {
		struct proto_frame_header h2;
		check(w.len == PROTO_HEADER_SIZE + h->length, "frame length");
		check(proto_frame_header_parse(w.buf, h->magic, &h2) == 0,
		      "rebuilt frame does not parse");
		check(h2.length == h->length && h2.cmd == h->cmd &&
		          strcmp(h2.command, h->command) == 0,
		      "rebuilt header differs");
		check(proto_frame_verify(&h2, w.buf + PROTO_HEADER_SIZE) == 0,
		      "rebuilt frame does not verify");
		check((v == 0) == (memcmp(h2.checksum, h->checksum, 4) == 0),
		      "checksum verdicts disagree");
		/* The in-place writer must produce the same bytes. */
		struct proto_writer w2;
		proto_writer_init(&w2);
		size_t start = proto_frame_begin(&w2);
		proto_write_bytes(&w2, payload, h->length);
		proto_frame_end(&w2, start, h->magic, h->command);
		if (!w2.err)
			check(w2.len == w.len && memcmp(w2.buf, w.buf, w.len) == 0,
			      "frame_begin/end differs");
		proto_writer_release(&w2);
	}
	proto_writer_release(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < PROTO_HEADER_SIZE)
		return 0;
	const uint8_t *payload = data + PROTO_HEADER_SIZE;
	size_t avail = size - PROTO_HEADER_SIZE;
	struct proto_frame_header h;

	int err = proto_frame_header_parse(data, MAGIC_MAIN, &h);
	check(err <= 0 && err >= PROTO_ERR__MIN, "error code out of range");
	if (proto_le32(data) != MAGIC_MAIN)
		check(err == PROTO_EMAGIC, "wrong magic accepted");
	if (!err)
		parsed_ok(&h, payload, avail);

	err = proto_frame_header_parse(data, proto_le32(data), &h);
	check(err == 0 || err == PROTO_EOVERSIZE || err == PROTO_ECOMMAND,
	      "unexpected parse error");
	if (err == PROTO_EOVERSIZE)
		check(h.length > PROTO_MAX_MESSAGE, "oversize for a small length");
	if (!err)
		parsed_ok(&h, payload, avail);
	return 0;
}
