/*
 * tests/unit/testutil_msg.c: wire builders and decode checks shared by the
 * P2P message tests (test_proto_msg*.c). Payloads are built field by field
 * with the writer primitives, never with the encoders under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil_msg.h"

void tu_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

void tu_wire_init(struct tu_wire *b)
{
	proto_writer_init(&b->w);
}

void tu_wire_done(struct tu_wire *b)
{
	assert_int_equal(b->w.err, 0);
}

void tu_wire_free(struct tu_wire *b)
{
	proto_writer_release(&b->w);
}

void tu_put_filled(struct tu_wire *b, size_t n, uint32_t seed)
{
	uint8_t tmp[512];
	assert_true(n <= sizeof(tmp));
	tu_fill(tmp, n, seed);
	proto_write_bytes(&b->w, tmp, n);
}

void tu_msg_round_trip(enum proto_cmd cmd, const uint8_t *buf, size_t len)
{
	struct proto_msg m;
	struct proto_writer w;
	size_t off = 12345;
	proto_msg_init(&m);
	int err = proto_msg_decode(cmd, buf, len, &m, &off);
	if (err)
		fail_msg("%s: decode failed: %s at offset %zu of %zu", proto_cmd_name(cmd),
		         proto_errname(err), off, len);
	assert_int_equal(off, len);
	assert_int_equal(m.cmd, cmd);
	proto_writer_init(&w);
	proto_msg_encode(&m, &w);
	assert_int_equal(w.err, 0);
	tu_assert_bytes_equal(w.buf, w.len, buf, len);
	proto_writer_release(&w);
	proto_msg_release(&m);
}

void tu_msg_decode_fails(enum proto_cmd cmd, const uint8_t *buf, size_t len, int want,
                         size_t want_off)
{
	struct proto_msg m;
	size_t off = 99999999;
	proto_msg_init(&m);
	int err = proto_msg_decode(cmd, buf, len, &m, &off);
	if (err != want)
		fail_msg("%s (%zu bytes): %s, expected %s", proto_cmd_name(cmd), len,
		         proto_errname(err), proto_errname(want));
	if (want_off != SIZE_MAX && off != want_off)
		fail_msg("%s: error offset %zu, expected %zu", proto_cmd_name(cmd), off, want_off);
	proto_msg_release(&m);
}

void tu_msg_truncations(enum proto_cmd cmd, const uint8_t *buf, size_t len, const size_t *ok_at,
                        size_t n_ok)
{
	struct proto_msg m;
	proto_msg_init(&m);
	for (size_t cut = 0; cut < len; cut++) {
		/* A private copy, so ASan catches any read past the prefix. */
		uint8_t *p = malloc(cut ? cut : 1);
		assert_non_null(p);
		memcpy(p, buf, cut);
		size_t off = 99999999;
		int err = proto_msg_decode(cmd, p, cut, &m, &off);
		bool may_pass = false;
		for (size_t i = 0; i < n_ok; i++)
			may_pass |= ok_at[i] == cut;
		if (may_pass) {
			if (err)
				fail_msg("%s cut at %zu: %s, expected success", proto_cmd_name(cmd),
				         cut, proto_errname(err));
		} else {
			if (err >= 0 || err < PROTO_ERR__MIN)
				fail_msg("%s cut at %zu of %zu: got %d, expected an error",
				         proto_cmd_name(cmd), cut, len, err);
			if (off > cut)
				fail_msg("%s cut at %zu: error offset %zu past the end",
				         proto_cmd_name(cmd), cut, off);
		}
		free(p);
	}
	proto_msg_release(&m);
}

const uint32_t tu_inv_types[TU_N_INV_TYPES] = {
    PROTO_INV_TX,          PROTO_INV_BLOCK,         PROTO_INV_WTX,
    PROTO_INV_WITNESS_TX,  PROTO_INV_WITNESS_BLOCK, PROTO_INV_FILTERED_BLOCK,
    PROTO_INV_CMPCT_BLOCK,
};

void tu_build_inv(struct tu_wire *b, uint32_t n)
{
	tu_wire_init(b);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++) {
		proto_write_u32le(&b->w, tu_inv_types[i % 7]);
		tu_put_filled(b, 32, i);
	}
	tu_wire_done(b);
}

void tu_build_locator(struct tu_wire *b, uint32_t n)
{
	tu_wire_init(b);
	proto_write_u32le(&b->w, PROTO_VERSION);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++)
		tu_put_filled(b, 32, 1000 + i);
	tu_put_filled(b, 32, 7);
	tu_wire_done(b);
}

void tu_build_headers(struct tu_wire *b, uint32_t n, uint8_t txcount)
{
	tu_wire_init(b);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++) {
		proto_write_u32le(&b->w, 0x20000000u + i);
		tu_put_filled(b, 64, i);
		proto_write_u32le(&b->w, 1700000000u + i * 600);
		proto_write_u32le(&b->w, 0x1d00ffffu);
		proto_write_u32le(&b->w, i * 7919u);
		proto_write_u8(&b->w, txcount);
	}
	tu_wire_done(b);
}

void tu_build_headers0(struct tu_wire *b, uint32_t n)
{
	tu_build_headers(b, n, 0);
}

void tu_build_addr(struct tu_wire *b, uint32_t n)
{
	tu_wire_init(b);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++) {
		proto_write_u32le(&b->w, 1700000000u + i);
		proto_write_u64le(&b->w, PROTO_NODE_NETWORK | PROTO_NODE_WITNESS);
		if (i % 2 == 0) {
			static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
			proto_write_bytes(&b->w, pre, 12);
			proto_write_u32le(&b->w, 0x0100007fu + (i << 8)); /* 127.x.y.1 */
		} else {
			proto_write_u16be(&b->w, 0x2001);
			tu_put_filled(b, 14, i);
		}
		proto_write_u16be(&b->w, (uint16_t)(8333 + i));
	}
	tu_wire_done(b);
}

const struct tu_v2_net tu_v2_nets[TU_N_V2_NETS] = {
    {PROTO_BIP155_IPV4, 4},   {PROTO_BIP155_IPV6, 16}, {PROTO_BIP155_TORV2, 10},
    {PROTO_BIP155_TORV3, 32}, {PROTO_BIP155_I2P, 32},  {PROTO_BIP155_CJDNS, 16},
};

void tu_put_v2_entry(struct tu_wire *b, uint32_t i, uint64_t services, uint8_t net, size_t len)
{
	proto_write_u32le(&b->w, 1700000000u + i);
	proto_write_compact(&b->w, services);
	proto_write_u8(&b->w, net);
	proto_write_compact(&b->w, len);
	tu_put_filled(b, len, i);
	proto_write_u16be(&b->w, (uint16_t)(1000 + i));
}

void tu_build_addrv2(struct tu_wire *b, uint32_t n)
{
	static const uint64_t services[] = {0, 1, 0x409, 0x10000, 0xffffffffffffffffULL};
	tu_wire_init(b);
	proto_write_compact(&b->w, n);
	for (uint32_t i = 0; i < n; i++)
		tu_put_v2_entry(b, i, services[i % 5], tu_v2_nets[i % 6].net,
		                tu_v2_nets[i % 6].len);
	tu_wire_done(b);
}

void tu_msg_oom_each(enum proto_cmd cmd, const uint8_t *raw, size_t len)
{
	struct proto_msg m;
	int failures = 0;
	for (long k = 0; k < 64; k++) {
		proto_msg_init(&m);
		base_alloc_fail_after(k);
		int err = proto_msg_decode(cmd, raw, len, &m, NULL);
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		proto_msg_release(&m);
		if (!injected) {
			assert_int_equal(err, 0);
			break;
		}
		tu_assert_err(err, PROTO_ENOMEM);
		failures++;
	}
	assert_true(failures >= 1);
}
