/*
 * tests/unit/test_proto_cfilter.c: BIP157's six messages (proto/msg_cfilter.c):
 * the layouts byte for byte against payloads built here by hand, round
 * trips, every truncation, counts over the limit or over what the bytes
 * hold (refused before any allocation), trailing bytes, storage reuse and
 * injected out-of-memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip324/bip324.h"
#include "proto/proto.h"
#include "tests/unit/testutil_msg.h"

/* type, start height, stop hash: getcfilters and getcfheaders. */
static void build_getcf(struct tu_wire *b, uint8_t type, uint32_t start)
{
	tu_wire_init(b);
	proto_write_u8(&b->w, type);
	proto_write_u32le(&b->w, start);
	tu_put_filled(b, 32, 7);
	tu_wire_done(b);
}

static void test_getcfilters_layout(void **state)
{
	(void)state;
	struct tu_wire b;
	build_getcf(&b, 0, 0x01020304);
	assert_int_equal(b.w.len, 37);
	/* Hand-checked bytes: type, then the height little-endian. */
	assert_memory_equal(b.w.buf, "\x00\x04\x03\x02\x01", 5);
	for (int c = 0; c < 2; c++) {
		enum proto_cmd cmd = c ? PROTO_CMD_GETCFHEADERS : PROTO_CMD_GETCFILTERS;
		struct proto_msg m;
		proto_msg_init(&m);
		size_t off = 0;
		assert_int_equal(proto_msg_decode(cmd, b.w.buf, b.w.len, &m, &off), 0);
		assert_int_equal(off, 37);
		assert_int_equal(m.getcfilters.filter_type, 0);
		assert_int_equal(m.getcfilters.start_height, 0x01020304);
		assert_memory_equal(m.getcfilters.stop_hash.b, b.w.buf + 5, 32);
		proto_msg_release(&m);
		tu_msg_round_trip(cmd, b.w.buf, b.w.len);
		tu_msg_truncations(cmd, b.w.buf, b.w.len, NULL, 0);
	}
	/* Any type decodes: the handler judges it. */
	tu_wire_free(&b);
	build_getcf(&b, 255, 0);
	tu_msg_round_trip(PROTO_CMD_GETCFILTERS, b.w.buf, b.w.len);
	/* Bytes after the fields are not read, as Core's ProcessGetCFilters
	 * reads its three fields and answers: the request stands. */
	uint8_t more[45];
	memcpy(more, b.w.buf, 37);
	memset(more + 37, 0xEE, sizeof(more) - 37);
	for (int c = 0; c < 2; c++) {
		enum proto_cmd cmd = c ? PROTO_CMD_GETCFHEADERS : PROTO_CMD_GETCFILTERS;
		struct proto_msg m;
		proto_msg_init(&m);
		size_t off = 0;
		assert_int_equal(proto_msg_decode(cmd, more, sizeof(more), &m, &off), 0);
		assert_int_equal(off, 37);
		assert_int_equal(m.getcfilters.filter_type, 255);
		assert_memory_equal(m.getcfilters.stop_hash.b, more + 5, 32);
		proto_msg_release(&m);
	}
	tu_wire_free(&b);
}

static void test_getcfcheckpt_layout(void **state)
{
	(void)state;
	struct tu_wire b;
	tu_wire_init(&b);
	proto_write_u8(&b.w, 0);
	tu_put_filled(&b, 32, 9);
	tu_wire_done(&b);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_GETCFCHECKPT, b.w.buf, b.w.len, &m, NULL), 0);
	assert_int_equal(m.getcfcheckpt.filter_type, 0);
	assert_memory_equal(m.getcfcheckpt.stop_hash.b, b.w.buf + 1, 32);
	proto_msg_release(&m);
	tu_msg_round_trip(PROTO_CMD_GETCFCHECKPT, b.w.buf, b.w.len);
	tu_msg_truncations(PROTO_CMD_GETCFCHECKPT, b.w.buf, b.w.len, NULL, 0);
	/* Bytes after the fields: read past, as Core's ProcessGetCFCheckPt. */
	uint8_t more[40];
	memcpy(more, b.w.buf, 33);
	memset(more + 33, 0xEE, sizeof(more) - 33);
	proto_msg_init(&m);
	size_t off = 0;
	assert_int_equal(proto_msg_decode(PROTO_CMD_GETCFCHECKPT, more, sizeof(more), &m, &off), 0);
	assert_int_equal(off, 33);
	assert_memory_equal(m.getcfcheckpt.stop_hash.b, more + 1, 32);
	proto_msg_release(&m);
	tu_wire_free(&b);
}

/* cfilter with a filter of n bytes. */
static void build_cfilter(struct tu_wire *b, uint32_t n)
{
	tu_wire_init(b);
	proto_write_u8(&b->w, 0);
	tu_put_filled(b, 32, 3);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++)
		proto_write_u8(&b->w, (uint8_t)(i * 7));
	tu_wire_done(b);
}

static void test_cfilter(void **state)
{
	(void)state;
	uint32_t sizes[] = {0, 1, 252, 253, 3000};
	struct proto_msg m;
	proto_msg_init(&m);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct tu_wire b;
		build_cfilter(&b, sizes[i]);
		assert_int_equal(proto_msg_decode(PROTO_CMD_CFILTER, b.w.buf, b.w.len, &m, NULL),
		                 0);
		assert_int_equal(m.cfilter.len, sizes[i]);
		assert_memory_equal(m.cfilter.block_hash.b, b.w.buf + 1, 32);
		if (sizes[i])
			assert_memory_equal(m.cfilter.filter, b.w.buf + b.w.len - sizes[i],
			                    sizes[i]);
		tu_msg_round_trip(PROTO_CMD_CFILTER, b.w.buf, b.w.len);
		if (sizes[i] < 300)
			tu_msg_truncations(PROTO_CMD_CFILTER, b.w.buf, b.w.len, NULL, 0);
		tu_wire_free(&b);
	}
	/* Storage reused: a smaller filter after a larger one costs nothing. */
	struct tu_wire b;
	build_cfilter(&b, 100);
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_msg_decode(PROTO_CMD_CFILTER, b.w.buf, b.w.len, &m, NULL), 0);
	assert_int_equal(base_alloc_count(), a0);
	tu_msg_oom_each(PROTO_CMD_CFILTER, b.w.buf, b.w.len);
	tu_wire_free(&b);
	proto_msg_release(&m);

	/* A length past the bytes left: refused before any allocation. */
	uint8_t hostile[40] = {0};
	memcpy(hostile + 33, "\xfe\x00\x00\x00\x01", 5);
	proto_msg_init(&m);
	a0 = base_alloc_count();
	size_t off = 0;
	tu_assert_err(proto_msg_decode(PROTO_CMD_CFILTER, hostile, sizeof(hostile), &m, &off),
	              PROTO_ETRUNC);
	assert_int_equal(base_alloc_count(), a0);
	assert_int_equal(off, 33);
	/* Over Core's MAX_SIZE. */
	memcpy(hostile + 33, "\xfe\x01\x00\x00\x02", 5);
	tu_assert_err(proto_msg_decode(PROTO_CMD_CFILTER, hostile, sizeof(hostile), &m, NULL),
	              PROTO_EOVERSIZE);
	/* Non-canonical length. */
	memcpy(hostile + 33, "\xfd\x05\x00", 3);
	tu_assert_err(proto_msg_decode(PROTO_CMD_CFILTER, hostile, sizeof(hostile), &m, NULL),
	              PROTO_ENONCANON);
	proto_msg_release(&m);
}

/* cfheaders (prev header present) or cfcheckpt with n hashes. */
static void build_hashes(struct tu_wire *b, bool cfheaders, uint32_t n)
{
	tu_wire_init(b);
	proto_write_u8(&b->w, 0);
	tu_put_filled(b, 32, 11);
	if (cfheaders)
		tu_put_filled(b, 32, 12);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++)
		tu_put_filled(b, 32, 100 + i);
	tu_wire_done(b);
}

static void test_cfheaders_cfcheckpt(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		bool hdrs = c == 0;
		enum proto_cmd cmd = hdrs ? PROTO_CMD_CFHEADERS : PROTO_CMD_CFCHECKPT;
		size_t count_at = hdrs ? 65 : 33;
		uint32_t counts[] = {0, 1, 3, 2000};
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			struct tu_wire b;
			build_hashes(&b, hdrs, counts[i]);
			struct proto_msg m;
			proto_msg_init(&m);
			assert_int_equal(proto_msg_decode(cmd, b.w.buf, b.w.len, &m, NULL), 0);
			assert_int_equal(m.cfhashes.n, counts[i]);
			assert_memory_equal(m.cfhashes.stop_hash.b, b.w.buf + 1, 32);
			if (hdrs)
				assert_memory_equal(m.cfhashes.prev_header.b, b.w.buf + 33, 32);
			if (counts[i])
				assert_memory_equal(m.cfhashes.hashes[counts[i] - 1].b,
				                    b.w.buf + b.w.len - 32, 32);
			proto_msg_release(&m);
			tu_msg_round_trip(cmd, b.w.buf, b.w.len);
			if (counts[i] < 10)
				tu_msg_truncations(cmd, b.w.buf, b.w.len, NULL, 0);
			if (counts[i] == 3)
				tu_msg_oom_each(cmd, b.w.buf, b.w.len);
			tu_wire_free(&b);
		}
		/* Hostile counts: refused before any allocation. */
		uint8_t buf[128] = {0};
		memcpy(buf + count_at, "\xfe\xff\xff\xff\xff", 5);
		struct proto_msg m;
		proto_msg_init(&m);
		uint64_t a0 = base_alloc_count();
		size_t off = 0;
		tu_assert_err(proto_msg_decode(cmd, buf, sizeof(buf), &m, &off), PROTO_ECOUNT);
		assert_int_equal(off, count_at);
		/* Within any limit, more than the bytes hold. */
		memcpy(buf + count_at, "\x10", 1);
		tu_assert_err(proto_msg_decode(cmd, buf, sizeof(buf), &m, &off), PROTO_ETRUNC);
		assert_int_equal(off, count_at);
		assert_int_equal(base_alloc_count(), a0);
		proto_msg_release(&m);
	}
	/* cfheaders: Core's 2,000 is the most; 2,001 is over, whatever the bytes. */
	struct tu_wire b;
	build_hashes(&b, true, 2001);
	tu_msg_decode_fails(PROTO_CMD_CFHEADERS, b.w.buf, b.w.len, PROTO_ECOUNT, 65);
	tu_wire_free(&b);
	/* cfcheckpt holds as many as a message may. */
	build_hashes(&b, false, 2001);
	tu_msg_round_trip(PROTO_CMD_CFCHECKPT, b.w.buf, b.w.len);
	tu_wire_free(&b);
}

/* The framing keeps a name that fills all 12 bytes. */
static void test_twelve_byte_names(void **state)
{
	(void)state;
	assert_string_equal(proto_cmd_name(PROTO_CMD_GETCFCHECKPT), "getcfcheckpt");
	assert_string_equal(proto_cmd_name(PROTO_CMD_GETCFHEADERS), "getcfheaders");
	assert_int_equal(proto_cmd_lookup("getcfcheckpt"), PROTO_CMD_GETCFCHECKPT);
	struct proto_msg m;
	proto_msg_init(&m);
	m.cmd = PROTO_CMD_GETCFCHECKPT;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_msg_frame(&m, 0xdab5bffa, &w);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 24 + 33);
	struct proto_frame_header h;
	assert_int_equal(proto_frame_header_parse(w.buf, 0xdab5bffa, &h), 0);
	assert_int_equal(h.cmd, PROTO_CMD_GETCFCHECKPT);
	assert_string_equal(h.command, "getcfcheckpt");
	proto_writer_release(&w);
}

/* BIP324's short ids 22-27 (Core's V2_MESSAGE_IDS) reach the six commands,
 * so a v2 peer's requests are handled as a v1 peer's. */
static void test_v2_short_ids(void **state)
{
	(void)state;
	static const struct {
		uint8_t id;
		enum proto_cmd cmd;
	} ids[] = {{22, PROTO_CMD_GETCFILTERS},  {23, PROTO_CMD_CFILTER},
	           {24, PROTO_CMD_GETCFHEADERS}, {25, PROTO_CMD_CFHEADERS},
	           {26, PROTO_CMD_GETCFCHECKPT}, {27, PROTO_CMD_CFCHECKPT}};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const char *name = bip324_msgid_name(ids[i].id);
		assert_non_null(name);
		assert_int_equal(proto_cmd_lookup(name), ids[i].cmd);
		assert_int_equal(bip324_msgid_lookup(proto_cmd_name(ids[i].cmd)), ids[i].id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_getcfilters_layout),
	    cmocka_unit_test(test_getcfcheckpt_layout),
	    cmocka_unit_test(test_cfilter),
	    cmocka_unit_test(test_cfheaders_cfcheckpt),
	    cmocka_unit_test(test_twelve_byte_names),
	    cmocka_unit_test(test_v2_short_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
