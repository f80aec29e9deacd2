/*
 * tests/unit/test_proto_msg_limits.c: what hostile or unlucky input costs a
 * message decode: counts over the limit or over what the bytes can hold
 * (refused before any allocation), non-canonical CompactSize counts, the
 * allocation count of each array message (one fresh, none reused), and
 * injected out-of-memory while decoding and encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil_msg.h"

/* ---- hostile counts, CompactSize forms -------------------------------- */

/* Commands whose payload starts with (or, for locators, has at offset 4) a
 * count, and that offset. */
static const struct {
	enum proto_cmd cmd;
	size_t count_at;
} counted[] = {
    {PROTO_CMD_INV, 0},        {PROTO_CMD_GETDATA, 0},   {PROTO_CMD_NOTFOUND, 0},
    {PROTO_CMD_GETHEADERS, 4}, {PROTO_CMD_GETBLOCKS, 4}, {PROTO_CMD_HEADERS, 0},
    {PROTO_CMD_ADDR, 0},       {PROTO_CMD_ADDRV2, 0},
};

static void test_huge_count_no_alloc(void **state)
{
	(void)state;
	/* 0xfe ff ff ff ff: a count of 2^32-1 followed by a little data. */
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		uint8_t buf[64] = {0};
		memcpy(buf + counted[i].count_at, "\xfe\xff\xff\xff\xff", 5);
		struct proto_msg m;
		proto_msg_init(&m);
		uint64_t a0 = base_alloc_count();
		size_t off = 99;
		int err = proto_msg_decode(counted[i].cmd, buf, sizeof(buf), &m, &off);
		uint64_t a1 = base_alloc_count();
		if (err != PROTO_ECOUNT)
			fail_msg("%s: %s, expected ECOUNT", proto_cmd_name(counted[i].cmd),
			         proto_errname(err));
		if (a1 != a0)
			fail_msg("%s: %llu allocations for a hostile count",
			         proto_cmd_name(counted[i].cmd), (unsigned long long)(a1 - a0));
		assert_int_equal(off, counted[i].count_at);
		/* Also the 9-byte form and a count just over MAX_SIZE. */
		memcpy(buf + counted[i].count_at, "\xff\xff\xff\xff\xff\xff\xff\xff\xff", 9);
		tu_assert_err(proto_msg_decode(counted[i].cmd, buf, sizeof(buf), &m, NULL),
		              PROTO_ECOUNT);
		memcpy(buf + counted[i].count_at, "\xfe\x01\x00\x00\x02", 5);
		tu_assert_err(proto_msg_decode(counted[i].cmd, buf, sizeof(buf), &m, NULL),
		              PROTO_ECOUNT);
		/* Within the limit but more than 64 bytes can hold. */
		memcpy(buf + counted[i].count_at, "\x0a", 1);
		tu_assert_err(proto_msg_decode(counted[i].cmd, buf, sizeof(buf), &m, NULL),
		              PROTO_ETRUNC);
		assert_int_equal(base_alloc_count(), a0);
		proto_msg_release(&m);
	}
}

static void test_noncanonical_counts(void **state)
{
	(void)state;
	/* Count 1 in the 3-, 5- and 9-byte forms: each must be refused. */
	static const char *forms[] = {"fd0100", "fe01000000", "ff0100000000000000"};
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		for (size_t f = 0; f < 3; f++) {
			size_t flen;
			uint8_t *form = tu_unhex(forms[f], &flen);
			uint8_t buf[128] = {0};
			memcpy(buf + counted[i].count_at, form, flen);
			tu_msg_decode_fails(counted[i].cmd, buf, sizeof(buf), PROTO_ENONCANON,
			                    counted[i].count_at);
			free(form);
		}
	}
	/* 0xfd in the 3-byte form is canonical: a count of 253 inv entries. */
	struct tu_wire b;
	tu_build_inv(&b, 253);
	assert_int_equal(b.w.buf[0], 0xfd);
	tu_msg_round_trip(PROTO_CMD_INV, b.w.buf, b.w.len);
	tu_wire_free(&b);
}

/* ---- allocations ------------------------------------------------------ */

static const struct {
	enum proto_cmd cmd;
	tu_build_fn build;
	uint32_t limit;
} arrays[] = {
    {PROTO_CMD_INV, tu_build_inv, PROTO_MAX_INV},
    {PROTO_CMD_GETDATA, tu_build_inv, PROTO_MAX_INV},
    {PROTO_CMD_NOTFOUND, tu_build_inv, PROTO_MAX_INV},
    {PROTO_CMD_GETHEADERS, tu_build_locator, PROTO_MAX_LOCATOR},
    {PROTO_CMD_GETBLOCKS, tu_build_locator, PROTO_MAX_LOCATOR},
    {PROTO_CMD_ADDR, tu_build_addr, PROTO_MAX_ADDR},
    {PROTO_CMD_ADDRV2, tu_build_addrv2, PROTO_MAX_ADDR},
};

static void check_alloc_counts(enum proto_cmd cmd, tu_build_fn build, uint32_t limit)
{
	struct tu_wire big, small;
	build(&big, limit);
	build(&small, 3);
	struct proto_msg m;
	proto_msg_init(&m);
	/* Fresh: exactly one allocation for the limit. */
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_msg_decode(cmd, big.w.buf, big.w.len, &m, NULL), 0);
	uint64_t a1 = base_alloc_count();
	if (a1 - a0 != 1)
		fail_msg("%s: %llu allocations decoding %u entries fresh, expected 1",
		         proto_cmd_name(cmd), (unsigned long long)(a1 - a0), limit);
	/* Reused: none, for the same size and for a smaller one. */
	assert_int_equal(proto_msg_decode(cmd, big.w.buf, big.w.len, &m, NULL), 0);
	assert_int_equal(proto_msg_decode(cmd, small.w.buf, small.w.len, &m, NULL), 0);
	assert_int_equal(proto_msg_decode(cmd, big.w.buf, big.w.len, &m, NULL), 0);
	uint64_t a2 = base_alloc_count();
	if (a2 != a1)
		fail_msg("%s: %llu allocations decoding into a reused message, expected 0",
		         proto_cmd_name(cmd), (unsigned long long)(a2 - a1));
	proto_msg_release(&m);
	/* Empty: no allocation at all. */
	proto_msg_init(&m);
	struct tu_wire none;
	build(&none, 0);
	a0 = base_alloc_count();
	assert_int_equal(proto_msg_decode(cmd, none.w.buf, none.w.len, &m, NULL), 0);
	assert_int_equal(base_alloc_count(), a0);
	proto_msg_release(&m);
	tu_wire_free(&none);
	tu_wire_free(&big);
	tu_wire_free(&small);
}

static void test_alloc_counts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		check_alloc_counts(arrays[i].cmd, arrays[i].build, arrays[i].limit);
	check_alloc_counts(PROTO_CMD_HEADERS, tu_build_headers0, PROTO_MAX_HEADERS);
}

static void check_oom(enum proto_cmd cmd, tu_build_fn build)
{
	struct tu_wire b;
	build(&b, 10);
	struct proto_msg m;
	proto_msg_init(&m);
	/* Storage from an earlier, smaller decode survives a failed growth. */
	struct tu_wire two;
	build(&two, 2);
	assert_int_equal(proto_msg_decode(cmd, two.w.buf, two.w.len, &m, NULL), 0);
	base_alloc_fail_after(0);
	size_t off;
	int err = proto_msg_decode(cmd, b.w.buf, b.w.len, &m, &off);
	int injected = base_alloc_injected();
	base_alloc_fail_after(-1);
	if (err != PROTO_ENOMEM || !injected)
		fail_msg("%s: %s under injected OOM (injected=%d)", proto_cmd_name(cmd),
		         proto_errname(err), injected);
	/* No partial data, and the old storage still works without allocating. */
	uint64_t a0 = base_alloc_count();
	assert_int_equal(proto_msg_decode(cmd, two.w.buf, two.w.len, &m, NULL), 0);
	assert_int_equal(base_alloc_count(), a0);
	assert_int_equal(proto_msg_decode(cmd, b.w.buf, b.w.len, &m, NULL), 0);
	proto_msg_release(&m);

	/* Fresh object. */
	proto_msg_init(&m);
	base_alloc_fail_after(0);
	err = proto_msg_decode(cmd, b.w.buf, b.w.len, &m, NULL);
	base_alloc_fail_after(-1);
	tu_assert_err(err, PROTO_ENOMEM);
	proto_msg_release(&m);

	/* Encoding into a growable writer under OOM: sticky ENOMEM. */
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(cmd, b.w.buf, b.w.len, &m, NULL), 0);
	struct proto_writer w;
	proto_writer_init(&w);
	base_alloc_fail_after(0);
	proto_msg_encode(&m, &w);
	base_alloc_fail_after(-1);
	tu_assert_err(w.err, PROTO_ENOMEM);
	proto_writer_release(&w);
	proto_msg_release(&m);
	tu_wire_free(&two);
	tu_wire_free(&b);
}

static void test_oom(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		check_oom(arrays[i].cmd, arrays[i].build);
	check_oom(PROTO_CMD_HEADERS, tu_build_headers0);
}

static void test_block_oom(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/block413567.raw"), &len);
	tu_msg_oom_each(PROTO_CMD_BLOCK, raw, len);
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_huge_count_no_alloc), cmocka_unit_test(test_noncanonical_counts),
	    cmocka_unit_test(test_alloc_counts),        cmocka_unit_test(test_oom),
	    cmocka_unit_test(test_block_oom),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
