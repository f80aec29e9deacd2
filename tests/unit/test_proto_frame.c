/*
 * tests/unit/test_proto_frame.c: the 24-byte frame header, checksums,
 * command names and the frame writers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* Mainnet magic as read little-endian from f9 be b4 d9. */
#define MAGIC_MAIN    0xd9b4bef9u
#define MAGIC_REGTEST 0xdab5bffau

/* A header with the given fields, checksum of `payload`. */
static void make_header(uint8_t hdr[24], uint32_t magic, const char cmd[12], uint32_t len,
                        const uint8_t *payload, size_t plen)
{
	proto_put_le32(hdr, magic);
	memcpy(hdr + 4, cmd, 12);
	proto_put_le32(hdr + 16, len);
	proto_checksum(payload, plen, hdr + 20);
}

static void test_verack_known_answer(void **state)
{
	(void)state;
	/* A mainnet verack as every node sends it. */
	size_t len;
	uint8_t *want = tu_unhex("f9beb4d976657261636b000000000000000000005df6e0e2", &len);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_frame_write(&w, MAGIC_MAIN, "verack", NULL, 0);
	assert_int_equal(w.err, 0);
	tu_assert_bytes_equal(w.buf, w.len, want, len);

	struct proto_frame_header h;
	assert_int_equal(proto_frame_header_parse(want, MAGIC_MAIN, &h), 0);
	assert_int_equal(h.magic, MAGIC_MAIN);
	assert_string_equal(h.command, "verack");
	assert_int_equal(h.cmd, PROTO_CMD_VERACK);
	assert_int_equal(h.length, 0);
	assert_int_equal(proto_frame_verify(&h, NULL), 0);
	proto_writer_release(&w);
	free(want);
}

static void test_parse_and_verify(void **state)
{
	(void)state;
	static const uint8_t payload[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	struct proto_writer w;
	proto_writer_init(&w);
	proto_frame_write(&w, MAGIC_REGTEST, "ping", payload, sizeof(payload));
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 24 + sizeof(payload));

	struct proto_frame_header h;
	assert_int_equal(proto_frame_header_parse(w.buf, MAGIC_REGTEST, &h), 0);
	assert_int_equal(h.cmd, PROTO_CMD_PING);
	assert_string_equal(h.command, "ping");
	assert_int_equal(h.length, sizeof(payload));
	assert_int_equal(proto_frame_verify(&h, w.buf + 24), 0);
	uint8_t sum[4];
	proto_checksum(payload, sizeof(payload), sum);
	assert_memory_equal(h.checksum, sum, 4);

	/* Any flipped payload bit breaks the checksum. */
	for (size_t i = 0; i < sizeof(payload) * 8; i++) {
		w.buf[24 + i / 8] ^= (uint8_t)(1u << (i % 8));
		tu_assert_err(proto_frame_verify(&h, w.buf + 24), PROTO_ECHECKSUM);
		w.buf[24 + i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	/* And a flipped checksum byte. */
	h.checksum[3] ^= 0x80;
	tu_assert_err(proto_frame_verify(&h, w.buf + 24), PROTO_ECHECKSUM);

	/* Wrong network. */
	tu_assert_err(proto_frame_header_parse(w.buf, MAGIC_MAIN, &h), PROTO_EMAGIC);
	proto_writer_release(&w);
}

static void test_bad_magic_first(void **state)
{
	(void)state;
	uint8_t hdr[24];
	struct proto_frame_header h;
	/* Bad magic and oversize and a bad command: magic is reported. */
	make_header(hdr, 0x12345678,
	            "\x01"
	            "bad\0\0\0\0\0\0\0\0",
	            PROTO_MAX_MESSAGE + 1, NULL, 0);
	tu_assert_err(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), PROTO_EMAGIC);
	/* Oversize and a bad command: size is checked before the command, as
	 * Core's readHeader does, before any buffer grows. */
	make_header(hdr, MAGIC_MAIN,
	            "\x01"
	            "bad\0\0\0\0\0\0\0\0",
	            PROTO_MAX_MESSAGE + 1, NULL, 0);
	tu_assert_err(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), PROTO_EOVERSIZE);
	assert_int_equal(h.length, PROTO_MAX_MESSAGE + 1);
}

static void test_oversize(void **state)
{
	(void)state;
	uint8_t hdr[24];
	struct proto_frame_header h;
	make_header(hdr, MAGIC_MAIN, "block\0\0\0\0\0\0\0", 4000001, NULL, 0);
	tu_assert_err(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), PROTO_EOVERSIZE);
	make_header(hdr, MAGIC_MAIN, "block\0\0\0\0\0\0\0", 0xffffffffu, NULL, 0);
	tu_assert_err(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), PROTO_EOVERSIZE);
	make_header(hdr, MAGIC_MAIN, "block\0\0\0\0\0\0\0", 4000000, NULL, 0);
	assert_int_equal(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), 0);
	assert_int_equal(h.cmd, PROTO_CMD_BLOCK);
	assert_int_equal(h.length, 4000000);
}

static void test_bad_command(void **state)
{
	(void)state;
	static const char *bad[] = {
	    "ver\0ack\0\0\0\0\0",   /* data after the first NUL */
	    "version\0\0\0\0x",     /* data in the last byte after NUL */
	    "\x01version\0\0\0\0",  /* control character */
	    "vers\x7fon\0\0\0\0\0", /* DEL */
	    "vers\x80on\0\0\0\0\0", /* high bit */
	    "version\t\0\0\0\0",    /* tab */
	    "\0version\0\0\0\0",    /* empty then data */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t hdr[24];
		struct proto_frame_header h;
		make_header(hdr, MAGIC_MAIN, bad[i], 7, NULL, 0);
		int err = proto_frame_header_parse(hdr, MAGIC_MAIN, &h);
		if (err != PROTO_ECOMMAND)
			fail_msg("command case %zu: %s, expected ECOMMAND", i, proto_errname(err));
		/* Still filled in, so the caller can skip the payload. */
		assert_int_equal(h.length, 7);
		assert_int_equal(h.cmd, PROTO_CMD_UNKNOWN);
	}
}

static void test_unknown_command(void **state)
{
	(void)state;
	static const char *ok[] = {
	    "foo\0\0\0\0\0\0\0\0\0",
	    "sendtxrcncl\0",            /* real (Erlay), but not one peerd decodes */
	    "abcdefghijkl",             /* all 12 bytes, no NUL: valid */
	    "\0\0\0\0\0\0\0\0\0\0\0\0", /* empty: valid in Core, unknown */
	    " ~!\0\0\0\0\0\0\0\0\0",
	    "VERSION\0\0\0\0\0", /* names are case-sensitive */
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t hdr[24];
		struct proto_frame_header h;
		make_header(hdr, MAGIC_MAIN, ok[i], 3, NULL, 0);
		int err = proto_frame_header_parse(hdr, MAGIC_MAIN, &h);
		if (err)
			fail_msg("command case %zu: %s, expected success", i, proto_errname(err));
		assert_int_equal(h.cmd, PROTO_CMD_UNKNOWN);
		assert_int_equal(strlen(h.command), strnlen(ok[i], 12));
		assert_memory_equal(h.command, ok[i], strlen(h.command));
	}
}

static void test_command_names(void **state)
{
	(void)state;
	for (int c = 1; c < PROTO_CMD__COUNT; c++) {
		const char *name = proto_cmd_name((enum proto_cmd)c);
		assert_true(strlen(name) > 0 && strlen(name) <= PROTO_COMMAND_SIZE);
		assert_int_equal(proto_cmd_lookup(name), c);

		/* And through a wire header. */
		uint8_t hdr[24];
		char field[12] = {0};
		memcpy(field, name, strlen(name));
		make_header(hdr, MAGIC_MAIN, field, 0, NULL, 0);
		struct proto_frame_header h;
		assert_int_equal(proto_frame_header_parse(hdr, MAGIC_MAIN, &h), 0);
		assert_int_equal(h.cmd, c);
		assert_string_equal(h.command, name);
	}
	assert_string_equal(proto_cmd_name(PROTO_CMD_UNKNOWN), "unknown");
	assert_string_equal(proto_cmd_name(PROTO_CMD__COUNT), "unknown");
	assert_string_equal(proto_cmd_name((enum proto_cmd) - 1), "unknown");
	assert_string_equal(proto_cmd_name(PROTO_CMD_SENDHEADERS), "sendheaders");
	assert_string_equal(proto_cmd_name(PROTO_CMD_ADDRV2), "addrv2");
	assert_int_equal(proto_cmd_lookup("unknown"), PROTO_CMD_UNKNOWN);
	assert_int_equal(proto_cmd_lookup(""), PROTO_CMD_UNKNOWN);
	assert_int_equal(proto_cmd_lookup("versionversionversion"), PROTO_CMD_UNKNOWN);
	assert_int_equal(proto_cmd_lookup("versio"), PROTO_CMD_UNKNOWN);
	assert_int_equal(proto_cmd_lookup("getheaders"), PROTO_CMD_GETHEADERS);
	assert_int_equal(proto_cmd_lookup("mempool"), PROTO_CMD_MEMPOOL);
}

static void test_frame_write_errors(void **state)
{
	(void)state;
	struct proto_writer w;
	uint8_t small[30];
	/* 13-byte command. */
	proto_writer_init(&w);
	proto_frame_write(&w, MAGIC_MAIN, "thirteenchars", NULL, 0);
	tu_assert_err(w.err, PROTO_ECOMMAND);
	assert_int_equal(w.len, 0);
	proto_writer_release(&w);
	/* Oversize payload: refused before the payload is read. */
	static const uint8_t one = 0;
	proto_writer_init(&w);
	proto_frame_write(&w, MAGIC_MAIN, "block", &one, PROTO_MAX_MESSAGE + 1);
	tu_assert_err(w.err, PROTO_EOVERSIZE);
	proto_writer_release(&w);
	/* Fixed buffer too small for header + payload: nothing partial. */
	uint8_t payload[8] = {0};
	proto_writer_init_fixed(&w, small, sizeof(small));
	proto_frame_write(&w, MAGIC_MAIN, "ping", payload, sizeof(payload));
	tu_assert_err(w.err, PROTO_ENOSPACE);
	assert_int_equal(w.len, 0);
	/* A sticky error stops later writes. */
	proto_frame_write(&w, MAGIC_MAIN, "verack", NULL, 0);
	assert_int_equal(w.len, 0);
	/* 12-character command exactly fits. */
	proto_writer_init(&w);
	proto_frame_write(&w, MAGIC_MAIN, "abcdefghijkl", NULL, 0);
	assert_int_equal(w.err, 0);
	struct proto_frame_header h;
	assert_int_equal(proto_frame_header_parse(w.buf, MAGIC_MAIN, &h), 0);
	assert_string_equal(h.command, "abcdefghijkl");
	proto_writer_release(&w);
}

static void test_frame_begin_end(void **state)
{
	(void)state;
	uint8_t payload[100];
	for (int i = 0; i < 100; i++)
		payload[i] = (uint8_t)(i * 7);
	struct proto_writer a, b;
	proto_writer_init(&a);
	proto_writer_init(&b);
	/* Two frames back to back, the second built in place. */
	proto_frame_write(&a, MAGIC_MAIN, "verack", NULL, 0);
	proto_frame_write(&a, MAGIC_MAIN, "inv", payload, sizeof(payload));
	proto_frame_write(&b, MAGIC_MAIN, "verack", NULL, 0);
	size_t start = proto_frame_begin(&b);
	assert_int_equal(start, 24);
	proto_write_bytes(&b, payload, sizeof(payload));
	proto_frame_end(&b, start, MAGIC_MAIN, "inv");
	assert_int_equal(a.err, 0);
	assert_int_equal(b.err, 0);
	tu_assert_bytes_equal(a.buf, a.len, b.buf, b.len);

	/* A start that is not one: caller bug reported, buffer untouched. */
	proto_frame_end(&b, b.len - 3, MAGIC_MAIN, "inv");
	tu_assert_err(b.err, PROTO_EVALUE);
	/* Command too long at the end. */
	proto_writer_release(&b);
	proto_writer_init(&b);
	start = proto_frame_begin(&b);
	proto_frame_end(&b, start, MAGIC_MAIN, "waytoolongcommand");
	tu_assert_err(b.err, PROTO_ECOMMAND);
	proto_writer_release(&a);
	proto_writer_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verack_known_answer), cmocka_unit_test(test_parse_and_verify),
	    cmocka_unit_test(test_bad_magic_first),     cmocka_unit_test(test_oversize),
	    cmocka_unit_test(test_bad_command),         cmocka_unit_test(test_unknown_command),
	    cmocka_unit_test(test_command_names),       cmocka_unit_test(test_frame_write_errors),
	    cmocka_unit_test(test_frame_begin_end),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
