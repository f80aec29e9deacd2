/*
 * tests/unit/test_proto_msg.c: every P2P message peerd decodes: round trips
 * at counts 0, 1, the limit and one over; byte-exact re-encoding; every
 * truncation; a version message from the Bitcoin developer reference;
 * framing; tx and block dispatch against the shared vectors. Hostile counts,
 * allocation counts and out-of-memory are in test_proto_msg_limits.c.
 *
 * Wire bytes are built field by field with the writer primitives (tested in
 * test_proto_cursor), not with the encoders under test (testutil_msg.c).
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

/* The edges of a counted message: one over `limit` fails at the count,
 * every prefix of an n-entry payload fails, a trailing byte fails at the end. */
static void check_edges(enum proto_cmd cmd, tu_build_fn build, uint32_t limit, uint32_t n)
{
	struct tu_wire b;
	build(&b, limit + 1);
	tu_msg_decode_fails(cmd, b.w.buf, b.w.len, PROTO_ECOUNT, 0);
	tu_wire_free(&b);
	build(&b, n);
	tu_msg_truncations(cmd, b.w.buf, b.w.len, NULL, 0);
	size_t full = b.w.len;
	proto_write_u8(&b.w, 0);
	tu_msg_decode_fails(cmd, b.w.buf, b.w.len, PROTO_ETRAILING, full);
	tu_wire_free(&b);
}

/* ---- version ---------------------------------------------------------- */

/*
 * The version message of the Bitcoin developer reference's P2P section
 * (Bitcoin Core 0.9.3, protocol 70002), laid out from the field table.
 */
/* clang-format off */
static const char *devref_version =
	"72110100"                                 /* version 70002 */
	"0100000000000000"                         /* services NODE_NETWORK */
	"bc8f5e5400000000"                         /* timestamp 1415483324 */
	"0100000000000000"                         /* addr_recv services */
	"00000000000000000000ffffc61b6409"         /* ::ffff:198.27.100.9 */
	"208d"                                     /* port 8333 */
	"0100000000000000"                         /* addr_from services */
	"00000000000000000000ffffcb0071c0"         /* ::ffff:203.0.113.192 */
	"208d"                                     /* port 8333 */
	"128035cbc97953f8"                         /* nonce */
	"0f2f5361746f7368693a302e392e332f"         /* "/Satoshi:0.9.3/" */
	"cf050500"                                 /* start height 329167 */
	"01";                                      /* relay */
/* clang-format on */

static void test_version_known_answer(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = tu_unhex(devref_version, &len);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_VERSION, buf, len, &m, NULL), 0);
	const struct proto_version *v = &m.version;
	assert_int_equal(v->version, 70002);
	assert_true(v->services == PROTO_NODE_NETWORK);
	assert_true(v->timestamp == 1415483324);
	assert_true(v->addr_recv.services == 1);
	static const uint8_t recv_ip[16] = {0, 0, 0,    0,    0,   0,  0,   0,
	                                    0, 0, 0xff, 0xff, 198, 27, 100, 9};
	static const uint8_t from_ip[16] = {0, 0, 0,    0,    0,   0, 0,   0,
	                                    0, 0, 0xff, 0xff, 203, 0, 113, 192};
	assert_memory_equal(v->addr_recv.ip, recv_ip, 16);
	assert_int_equal(v->addr_recv.port, 8333);
	assert_memory_equal(v->addr_from.ip, from_ip, 16);
	assert_int_equal(v->addr_from.port, 8333);
	assert_true(v->nonce == 0xf85379c9cb358012ULL);
	assert_int_equal(v->user_agent_len, 15);
	assert_string_equal(v->user_agent, "/Satoshi:0.9.3/");
	assert_int_equal(v->start_height, 329167);
	assert_true(v->relay);
	assert_true(v->has_relay);
	assert_int_equal(v->omitted, PROTO_VERSION_TAIL_FULL);
	proto_msg_release(&m);
	tu_msg_round_trip(PROTO_CMD_VERSION, buf, len);
	free(buf);
}

/* A modern version payload built field by field. */
static void build_version(struct tu_wire *b, size_t ua_len, bool relay_byte)
{
	tu_wire_init(b);
	proto_write_u32le(&b->w, PROTO_VERSION);
	proto_write_u64le(&b->w,
	                  PROTO_NODE_NETWORK | PROTO_NODE_WITNESS | PROTO_NODE_NETWORK_LIMITED);
	proto_write_u64le(&b->w, 1700000000);
	proto_write_u64le(&b->w, 0);
	tu_put_filled(b, 16, 1);
	proto_write_u16be(&b->w, 18444);
	proto_write_u64le(&b->w, PROTO_NODE_NETWORK | PROTO_NODE_WITNESS);
	tu_put_filled(b, 16, 2);
	proto_write_u16be(&b->w, 0);
	proto_write_u64le(&b->w, 0x0123456789abcdefULL);
	proto_write_compact(&b->w, ua_len);
	for (size_t i = 0; i < ua_len; i++)
		proto_write_u8(&b->w, (uint8_t)('a' + i % 26));
	proto_write_u32le(&b->w, 850000);
	if (relay_byte)
		proto_write_u8(&b->w, 0);
	tu_wire_done(b);
}

static void test_version_optional_tail(void **state)
{
	(void)state;
	struct tu_wire b;
	build_version(&b, 16, true);
	size_t full = b.w.len;
	/* Boundaries where Core stops reading: after addr_recv (46), after the
	 * nonce (80), after the user agent (97), after start height (101). */
	const size_t ok_at[] = {46, 80, 97, 101};
	assert_int_equal(full, 102);
	static const struct {
		size_t len;
		uint8_t omitted;
	} tails[] = {
	    {46, PROTO_VERSION_TAIL_NONE},      {80, PROTO_VERSION_TAIL_NO_UA},
	    {97, PROTO_VERSION_TAIL_NO_HEIGHT}, {101, PROTO_VERSION_TAIL_NO_RELAY},
	    {102, PROTO_VERSION_TAIL_FULL},
	};
	for (size_t i = 0; i < 5; i++) {
		struct proto_msg m;
		proto_msg_init(&m);
		assert_int_equal(
		    proto_msg_decode(PROTO_CMD_VERSION, b.w.buf, tails[i].len, &m, NULL), 0);
		const struct proto_version *v = &m.version;
		assert_int_equal(v->omitted, tails[i].omitted);
		assert_int_equal(v->version, PROTO_VERSION);
		assert_int_equal(v->addr_recv.port, 18444);
		/* Core's defaults for what is absent. */
		if (tails[i].len < 80) {
			assert_true(v->nonce == 0);
			assert_int_equal(v->addr_from.port, 0);
		} else {
			assert_true(v->nonce == 0x0123456789abcdefULL);
		}
		if (tails[i].len < 97)
			assert_int_equal(v->user_agent_len, 0);
		else
			assert_string_equal(v->user_agent, "abcdefghijklmnop");
		assert_int_equal(v->start_height, tails[i].len < 101 ? -1 : 850000);
		assert_int_equal(v->relay, tails[i].len < 102);
		assert_int_equal(v->has_relay, tails[i].len == 102);
		proto_msg_release(&m);
		tu_msg_round_trip(PROTO_CMD_VERSION, b.w.buf, tails[i].len);
	}
	tu_msg_truncations(PROTO_CMD_VERSION, b.w.buf, full, ok_at, 4);

	/* Bytes after the relay flag are left unread, as Core leaves them. */
	proto_write_bytes(&b.w, "junk", 4);
	struct proto_msg m;
	size_t off;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_VERSION, b.w.buf, b.w.len, &m, &off), 0);
	assert_int_equal(off, full);
	assert_false(m.version.relay);
	assert_true(m.version.has_relay);

	/* Any non-zero relay byte is true (Core's bool), re-encoded as 1. */
	b.w.buf[full - 1] = 0x02;
	assert_int_equal(proto_msg_decode(PROTO_CMD_VERSION, b.w.buf, full, &m, NULL), 0);
	assert_true(m.version.relay);

	/* A zeroed struct encodes the full modern message. */
	struct proto_version v;
	memset(&v, 0, sizeof(v));
	v.version = PROTO_VERSION;
	v.start_height = 5;
	v.relay = true;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_version_encode(&v, &w);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 4 + 8 + 8 + 26 + 26 + 8 + 1 + 4 + 1);
	assert_int_equal(w.buf[w.len - 1], 1);
	proto_writer_release(&w);

	/* Encoder refuses what no peer would accept. */
	v.user_agent_len = PROTO_MAX_SUBVERSION + 1;
	proto_writer_init(&w);
	proto_version_encode(&v, &w);
	tu_assert_err(w.err, PROTO_EOVERSIZE);
	proto_writer_release(&w);
	v.user_agent_len = 0;
	v.omitted = 5;
	proto_writer_init(&w);
	proto_version_encode(&v, &w);
	tu_assert_err(w.err, PROTO_EVALUE);
	proto_writer_release(&w);

	proto_msg_release(&m);
	tu_wire_free(&b);
}

static void test_version_user_agent_limit(void **state)
{
	(void)state;
	struct tu_wire b;
	build_version(&b, PROTO_MAX_SUBVERSION, true);
	tu_msg_round_trip(PROTO_CMD_VERSION, b.w.buf, b.w.len);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_VERSION, b.w.buf, b.w.len, &m, NULL), 0);
	assert_int_equal(m.version.user_agent_len, PROTO_MAX_SUBVERSION);
	assert_int_equal(strlen(m.version.user_agent), PROTO_MAX_SUBVERSION);
	proto_msg_release(&m);
	tu_wire_free(&b);

	/* 257 bytes: Core's LIMITED_STRING throws; the offset is the length. */
	build_version(&b, PROTO_MAX_SUBVERSION + 1, true);
	tu_msg_decode_fails(PROTO_CMD_VERSION, b.w.buf, b.w.len, PROTO_EOVERSIZE, 80);
	tu_wire_free(&b);
	/* A huge declared length fails the same way, without reading on. */
	build_version(&b, 0, false);
	b.w.len = 80;
	proto_write_bytes(&b.w, "\xfe\xff\xff\xff\x7f", 5);
	tu_msg_decode_fails(PROTO_CMD_VERSION, b.w.buf, b.w.len, PROTO_EOVERSIZE, 80);
	tu_wire_free(&b);
}

/* ---- inv, getdata, notfound ------------------------------------------ */

static void test_inv_counts(void **state)
{
	(void)state;
	static const enum proto_cmd cmds[] = {PROTO_CMD_INV, PROTO_CMD_GETDATA, PROTO_CMD_NOTFOUND};
	const uint32_t counts[] = {0, 1, 7, PROTO_MAX_INV};
	for (size_t c = 0; c < 3; c++) {
		for (size_t k = 0; k < 4; k++) {
			struct tu_wire b;
			tu_build_inv(&b, counts[k]);
			tu_msg_round_trip(cmds[c], b.w.buf, b.w.len);
			if (counts[k] == 7) {
				struct proto_msg m;
				proto_msg_init(&m);
				assert_int_equal(
				    proto_msg_decode(cmds[c], b.w.buf, b.w.len, &m, NULL), 0);
				assert_int_equal(m.inv.n, 7);
				for (uint32_t i = 0; i < 7; i++) {
					uint8_t want[32];
					tu_fill(want, 32, i);
					assert_int_equal(m.inv.v[i].type, tu_inv_types[i]);
					assert_memory_equal(m.inv.v[i].hash.b, want, 32);
				}
				proto_msg_release(&m);
			}
			tu_wire_free(&b);
		}
		/* limit + 1: count error at offset 0, before any allocation. */
		struct tu_wire b;
		tu_build_inv(&b, PROTO_MAX_INV + 1);
		uint64_t a0 = base_alloc_count();
		tu_msg_decode_fails(cmds[c], b.w.buf, b.w.len, PROTO_ECOUNT, 0);
		assert_int_equal(base_alloc_count(), a0);
		tu_wire_free(&b);
	}
}

static void test_inv_truncation_trailing(void **state)
{
	(void)state;
	struct tu_wire b;
	tu_build_inv(&b, 3);
	tu_msg_truncations(PROTO_CMD_INV, b.w.buf, b.w.len, NULL, 0);
	size_t full = b.w.len;
	proto_write_u8(&b.w, 0);
	tu_msg_decode_fails(PROTO_CMD_INV, b.w.buf, b.w.len, PROTO_ETRAILING, full);
	tu_wire_free(&b);
	/* A count the bytes cannot back is refused before allocating. */
	tu_build_inv(&b, 3);
	b.w.buf[0] = 4;
	uint64_t a0 = base_alloc_count();
	tu_msg_decode_fails(PROTO_CMD_INV, b.w.buf, b.w.len, PROTO_ETRUNC, 0);
	assert_int_equal(base_alloc_count(), a0);
	tu_wire_free(&b);
}

static void test_inv_type_names(void **state)
{
	(void)state;
	assert_string_equal(proto_inv_type_name(PROTO_INV_TX), "tx");
	assert_string_equal(proto_inv_type_name(PROTO_INV_WTX), "wtx");
	assert_string_equal(proto_inv_type_name(PROTO_INV_WITNESS_BLOCK), "witness_block");
	assert_string_equal(proto_inv_type_name(PROTO_INV_CMPCT_BLOCK), "cmpctblock");
	for (size_t i = 0; i < 7; i++)
		assert_non_null(proto_inv_type_name(tu_inv_types[i]));
	assert_null(proto_inv_type_name(0));
	assert_null(proto_inv_type_name(6));
	assert_null(proto_inv_type_name(PROTO_INV_WITNESS_FLAG));
	assert_null(proto_inv_type_name(0xffffffffu));

	/* Unknown types still decode (Core ignores them in the handler). */
	uint8_t buf[37] = {1, 0x99, 0x99, 0, 0};
	tu_msg_round_trip(PROTO_CMD_INV, buf, sizeof(buf));
}

/* ---- getheaders, getblocks ------------------------------------------- */

static void test_locator(void **state)
{
	(void)state;
	static const enum proto_cmd cmds[] = {PROTO_CMD_GETHEADERS, PROTO_CMD_GETBLOCKS};
	const uint32_t counts[] = {0, 1, PROTO_MAX_LOCATOR_HANDLER, PROTO_MAX_LOCATOR};
	for (size_t c = 0; c < 2; c++) {
		for (size_t k = 0; k < 4; k++) {
			struct tu_wire b;
			tu_build_locator(&b, counts[k]);
			tu_msg_round_trip(cmds[c], b.w.buf, b.w.len);
			struct proto_msg m;
			proto_msg_init(&m);
			assert_int_equal(proto_msg_decode(cmds[c], b.w.buf, b.w.len, &m, NULL), 0);
			assert_int_equal(m.locator.n, counts[k]);
			assert_int_equal(m.locator.version, PROTO_VERSION);
			uint8_t stop[32];
			tu_fill(stop, 32, 7);
			assert_memory_equal(m.locator.stop.b, stop, 32);
			if (counts[k]) {
				uint8_t last[32];
				tu_fill(last, 32, 1000 + counts[k] - 1);
				assert_memory_equal(m.locator.hashes[counts[k] - 1].b, last, 32);
			}
			proto_msg_release(&m);
			tu_wire_free(&b);
		}
		struct tu_wire b;
		tu_build_locator(&b, PROTO_MAX_LOCATOR + 1);
		tu_msg_decode_fails(cmds[c], b.w.buf, b.w.len, PROTO_ECOUNT, 4);
		tu_wire_free(&b);
	}
	struct tu_wire b;
	tu_build_locator(&b, 3);
	tu_msg_truncations(PROTO_CMD_GETHEADERS, b.w.buf, b.w.len, NULL, 0);
	/* Hashes all there but no stop hash: refused before allocating. */
	uint64_t a0 = base_alloc_count();
	tu_msg_decode_fails(PROTO_CMD_GETHEADERS, b.w.buf, b.w.len - 32, PROTO_ETRUNC, 4);
	assert_int_equal(base_alloc_count(), a0);
	size_t full = b.w.len;
	proto_write_u8(&b.w, 0);
	tu_msg_decode_fails(PROTO_CMD_GETBLOCKS, b.w.buf, b.w.len, PROTO_ETRAILING, full);
	tu_wire_free(&b);
}

/* ---- headers ---------------------------------------------------------- */

static void test_headers(void **state)
{
	(void)state;
	const uint32_t counts[] = {0, 1, 2, PROTO_MAX_HEADERS};
	for (size_t k = 0; k < 4; k++) {
		struct tu_wire b;
		tu_build_headers(&b, counts[k], 0);
		tu_msg_round_trip(PROTO_CMD_HEADERS, b.w.buf, b.w.len);
		struct proto_msg m;
		proto_msg_init(&m);
		assert_int_equal(proto_msg_decode(PROTO_CMD_HEADERS, b.w.buf, b.w.len, &m, NULL),
		                 0);
		assert_int_equal(m.headers.n, counts[k]);
		for (uint32_t i = 0; i < counts[k]; i += 997) {
			const struct proto_block_header *h = &m.headers.h[i];
			uint8_t want[64];
			tu_fill(want, 64, i);
			assert_int_equal(h->version, (int32_t)(0x20000000u + i));
			assert_memory_equal(h->prev.b, want, 32);
			assert_memory_equal(h->merkle_root.b, want + 32, 32);
			assert_int_equal(h->time, 1700000000u + i * 600);
			assert_int_equal(h->bits, 0x1d00ffffu);
			assert_int_equal(h->nonce, i * 7919u);
		}
		proto_msg_release(&m);
		tu_wire_free(&b);
	}
	check_edges(PROTO_CMD_HEADERS, tu_build_headers0, PROTO_MAX_HEADERS, 3);
}

static void test_headers_tx_count(void **state)
{
	(void)state;
	/* Core reads the tx count and ignores it: a non-zero count decodes,
	 * and re-encodes as the 0 every node sends. */
	struct tu_wire b, zero;
	tu_build_headers(&b, 2, 5);
	tu_build_headers(&zero, 2, 0);
	struct proto_msg m;
	struct proto_writer w;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_HEADERS, b.w.buf, b.w.len, &m, NULL), 0);
	proto_writer_init(&w);
	proto_msg_encode(&m, &w);
	tu_assert_bytes_equal(w.buf, w.len, zero.w.buf, zero.w.len);
	proto_writer_release(&w);
	tu_wire_free(&b);

	/* A multi-byte tx count is read through; non-canonical is refused at
	 * its offset; over MAX_SIZE is refused as Core's ReadCompactSize does. */
	static const struct {
		const char *hex;
		int err;
	} cases[] = {
	    {"fdfd00", 0},
	    {"fd0100", PROTO_ENONCANON},
	    {"fe00000002", 0},
	    {"fe01000002", PROTO_EOVERSIZE},
	    {"ff0000000000000000", PROTO_ENONCANON},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t clen;
		uint8_t *c = tu_unhex(cases[i].hex, &clen);
		tu_wire_init(&b);
		proto_write_u8(&b.w, 1);
		proto_write_bytes(&b.w, zero.w.buf + 1, 80);
		proto_write_bytes(&b.w, c, clen);
		tu_wire_done(&b);
		int err = proto_msg_decode(PROTO_CMD_HEADERS, b.w.buf, b.w.len, &m, NULL);
		if (err != cases[i].err)
			fail_msg("tx count %s: %s, expected %s", cases[i].hex, proto_errname(err),
			         proto_errname(cases[i].err));
		if (err)
			assert_int_equal(m.headers.n, 0);
		free(c);
		tu_wire_free(&b);
	}
	proto_msg_release(&m);
	tu_wire_free(&zero);
}

/* ---- addr (v1) -------------------------------------------------------- */

static void test_addr(void **state)
{
	(void)state;
	const uint32_t counts[] = {0, 1, 2, PROTO_MAX_ADDR};
	for (size_t k = 0; k < 4; k++) {
		struct tu_wire b;
		tu_build_addr(&b, counts[k]);
		tu_msg_round_trip(PROTO_CMD_ADDR, b.w.buf, b.w.len);
		struct proto_msg m;
		proto_msg_init(&m);
		assert_int_equal(proto_msg_decode(PROTO_CMD_ADDR, b.w.buf, b.w.len, &m, NULL), 0);
		assert_int_equal(m.addr.n, counts[k]);
		assert_int_equal(m.addr.n_skipped, 0);
		for (uint32_t i = 0; i < counts[k] && i < 2; i++) {
			const struct proto_addr_entry *e = &m.addr.v[i];
			assert_int_equal(e->time, 1700000000u + i);
			assert_int_equal(e->port, 8333 + i);
			assert_true(e->services == (PROTO_NODE_NETWORK | PROTO_NODE_WITNESS));
			if (i == 0) {
				static const uint8_t lo[4] = {127, 0, 0, 1};
				assert_int_equal(e->net, PROTO_BIP155_IPV4);
				assert_int_equal(e->addr_len, 4);
				assert_memory_equal(e->addr, lo, 4);
			} else {
				assert_int_equal(e->net, PROTO_BIP155_IPV6);
				assert_int_equal(e->addr_len, 16);
				assert_int_equal(e->addr[0], 0x20);
				assert_int_equal(e->addr[1], 0x01);
			}
		}
		proto_msg_release(&m);
		tu_wire_free(&b);
	}
	check_edges(PROTO_CMD_ADDR, tu_build_addr, PROTO_MAX_ADDR, 3);
}

static void test_addr_v1_encode_networks(void **state)
{
	(void)state;
	/* v1 has no form for Tor v3 / I2P: all zeros, as Core sends them;
	 * CJDNS travels as the IPv6 it is. An impossible entry is refused. */
	struct proto_addr a = {0};
	struct proto_addr_entry e[3];
	memset(e, 0, sizeof(e));
	e[0].net = PROTO_BIP155_TORV3;
	e[0].addr_len = 32;
	memset(e[0].addr, 0xaa, 32);
	e[1].net = PROTO_BIP155_CJDNS;
	e[1].addr_len = 16;
	memset(e[1].addr, 0xfc, 16);
	e[2].net = PROTO_BIP155_IPV4;
	e[2].addr_len = 16;
	a.v = e;
	a.n = 2;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_addr_encode(&a, &w);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 1 + 2 * 30);
	static const uint8_t zero16[16] = {0};
	assert_memory_equal(w.buf + 1 + 12, zero16, 16);
	assert_int_equal(w.buf[1 + 30 + 12], 0xfc);
	proto_writer_release(&w);
	a.n = 3;
	proto_writer_init(&w);
	proto_addr_encode(&a, &w);
	tu_assert_err(w.err, PROTO_EVALUE);
	proto_writer_release(&w);
	proto_writer_init(&w);
	proto_addrv2_encode(&a, &w);
	tu_assert_err(w.err, PROTO_EVALUE);
	proto_writer_release(&w);
}

/* ---- addrv2 ----------------------------------------------------------- */

static void test_addrv2(void **state)
{
	(void)state;
	const uint32_t counts[] = {0, 1, 6, PROTO_MAX_ADDR};
	for (size_t k = 0; k < 4; k++) {
		struct tu_wire b;
		tu_build_addrv2(&b, counts[k]);
		tu_msg_round_trip(PROTO_CMD_ADDRV2, b.w.buf, b.w.len);
		struct proto_msg m;
		proto_msg_init(&m);
		assert_int_equal(proto_msg_decode(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, &m, NULL), 0);
		assert_int_equal(m.addr.n, counts[k]);
		assert_int_equal(m.addr.n_skipped, 0);
		for (uint32_t i = 0; i < counts[k] && i < 6; i++) {
			const struct proto_addr_entry *e = &m.addr.v[i];
			uint8_t want[32];
			tu_fill(want, tu_v2_nets[i].len, i);
			assert_int_equal(e->net, tu_v2_nets[i].net);
			assert_int_equal(e->addr_len, tu_v2_nets[i].len);
			assert_memory_equal(e->addr, want, tu_v2_nets[i].len);
			assert_int_equal(e->port, 1000 + i);
			assert_int_equal(e->time, 1700000000u + i);
		}
		if (counts[k] >= 5)
			assert_true(m.addr.v[4].services == 0xffffffffffffffffULL);
		proto_msg_release(&m);
		tu_wire_free(&b);
	}
	check_edges(PROTO_CMD_ADDRV2, tu_build_addrv2, PROTO_MAX_ADDR, 6);
}

static void test_addrv2_lengths(void **state)
{
	(void)state;
	/* Wrong length for each known network: PROTO_EVALUE at the length. */
	for (size_t k = 0; k < 6; k++) {
		const size_t wrong[] = {0, (size_t)tu_v2_nets[k].len - 1,
		                        (size_t)tu_v2_nets[k].len + 1};
		for (size_t j = 0; j < 3; j++) {
			struct tu_wire b;
			tu_wire_init(&b);
			proto_write_compact(&b.w, 2);
			tu_put_v2_entry(&b, 0, 1, PROTO_BIP155_IPV4, 4);
			size_t entry2 = b.w.len;
			tu_put_v2_entry(&b, 1, 1, tu_v2_nets[k].net, wrong[j]);
			tu_wire_done(&b);
			/* time 4 + services 1 + network 1 */
			tu_msg_decode_fails(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, PROTO_EVALUE,
			                    entry2 + 6);
			tu_wire_free(&b);
		}
	}
	/* 513 bytes: over BIP155's maximum, for any network id. */
	struct tu_wire b;
	tu_wire_init(&b);
	proto_write_compact(&b.w, 1);
	proto_write_u32le(&b.w, 0);
	proto_write_compact(&b.w, 0);
	proto_write_u8(&b.w, 200);
	proto_write_compact(&b.w, PROTO_MAX_ADDRV2_SIZE + 1);
	for (int i = 0; i < 520; i++)
		proto_write_u8(&b.w, 0);
	tu_wire_done(&b);
	tu_msg_decode_fails(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, PROTO_EOVERSIZE, 7);
	tu_wire_free(&b);
	/* Non-canonical services. */
	tu_wire_init(&b);
	proto_write_compact(&b.w, 1);
	proto_write_u32le(&b.w, 0);
	proto_write_bytes(&b.w, "\xfd\x01\x00", 3);
	proto_write_u8(&b.w, PROTO_BIP155_IPV4);
	proto_write_bytes(&b.w, "\x04\x01\x02\x03\x04\x00\x01", 7);
	tu_wire_done(&b);
	tu_msg_decode_fails(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, PROTO_ENONCANON, 5);
	tu_wire_free(&b);
}

static void test_addrv2_unknown_network(void **state)
{
	(void)state;
	/* Unknown ids (0, 7, 255) with any length up to 512 are skipped and
	 * counted, and the known addresses around them are kept. */
	struct tu_wire b;
	tu_wire_init(&b);
	proto_write_compact(&b.w, 5);
	tu_put_v2_entry(&b, 0, 1, 0, 5);
	tu_put_v2_entry(&b, 1, 1, PROTO_BIP155_IPV6, 16);
	tu_put_v2_entry(&b, 2, 1, 7, 0);
	tu_put_v2_entry(&b, 3, 1, 255, 300);
	tu_put_v2_entry(&b, 4, 1, PROTO_BIP155_TORV3, 32);
	tu_wire_done(&b);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, &m, NULL), 0);
	assert_int_equal(m.addr.n, 2);
	assert_int_equal(m.addr.n_skipped, 3);
	assert_int_equal(m.addr.v[0].net, PROTO_BIP155_IPV6);
	assert_int_equal(m.addr.v[0].port, 1001);
	assert_int_equal(m.addr.v[1].net, PROTO_BIP155_TORV3);
	assert_int_equal(m.addr.v[1].port, 1004);
	/* A 512-byte unknown address is fine too. */
	tu_wire_free(&b);
	tu_wire_init(&b);
	proto_write_compact(&b.w, 1);
	proto_write_u32le(&b.w, 0);
	proto_write_compact(&b.w, 0);
	proto_write_u8(&b.w, 42);
	proto_write_compact(&b.w, PROTO_MAX_ADDRV2_SIZE);
	tu_put_filled(&b, PROTO_MAX_ADDRV2_SIZE, 3);
	proto_write_u16be(&b.w, 1);
	tu_wire_done(&b);
	assert_int_equal(proto_msg_decode(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, &m, NULL), 0);
	assert_int_equal(m.addr.n, 0);
	assert_int_equal(m.addr.n_skipped, 1);
	/* A later error clears the skip count with the entries. */
	tu_wire_free(&b);
	tu_wire_init(&b);
	proto_write_compact(&b.w, 2);
	tu_put_v2_entry(&b, 0, 1, 9, 3);
	tu_put_v2_entry(&b, 1, 1, PROTO_BIP155_IPV4, 4);
	tu_wire_done(&b);
	b.w.len -= 1;
	tu_assert_err(proto_msg_decode(PROTO_CMD_ADDRV2, b.w.buf, b.w.len, &m, NULL), PROTO_ETRUNC);
	assert_int_equal(m.addr.n, 0);
	assert_int_equal(m.addr.n_skipped, 0);
	proto_msg_release(&m);
	tu_wire_free(&b);
}

/* ---- small messages --------------------------------------------------- */

static void test_small_messages(void **state)
{
	(void)state;
	static const uint8_t nonce[8] = {1, 2, 3, 4, 5, 6, 7, 0x88};
	struct proto_msg m;
	proto_msg_init(&m);
	/* ping, pong */
	for (int c = PROTO_CMD_PING; c <= PROTO_CMD_PONG; c++) {
		tu_msg_round_trip((enum proto_cmd)c, nonce, 8);
		assert_int_equal(proto_msg_decode((enum proto_cmd)c, nonce, 8, &m, NULL), 0);
		assert_true(m.nonce == 0x8807060504030201ULL);
		tu_msg_truncations((enum proto_cmd)c, nonce, 8, NULL, 0);
		uint8_t nine[9] = {0};
		tu_msg_decode_fails((enum proto_cmd)c, nine, 9, PROTO_ETRAILING, 8);
	}
	/* feefilter: kept as sent, even negative or over the money range
	 * (Core checks MoneyRange in the handler). */
	uint8_t ff[8];
	proto_put_le64(ff, 1000);
	tu_msg_round_trip(PROTO_CMD_FEEFILTER, ff, 8);
	assert_int_equal(proto_msg_decode(PROTO_CMD_FEEFILTER, ff, 8, &m, NULL), 0);
	assert_true(m.feerate == 1000);
	proto_put_le64(ff, (uint64_t)-5);
	tu_msg_round_trip(PROTO_CMD_FEEFILTER, ff, 8);
	assert_int_equal(proto_msg_decode(PROTO_CMD_FEEFILTER, ff, 8, &m, NULL), 0);
	assert_true(m.feerate == -5);
	proto_put_le64(ff, (uint64_t)PROTO_MAX_MONEY + 1);
	tu_msg_round_trip(PROTO_CMD_FEEFILTER, ff, 8);
	tu_msg_truncations(PROTO_CMD_FEEFILTER, ff, 8, NULL, 0);
	/* sendcmpct */
	static const uint8_t sc[9] = {1, 2, 0, 0, 0, 0, 0, 0, 0};
	tu_msg_round_trip(PROTO_CMD_SENDCMPCT, sc, 9);
	assert_int_equal(proto_msg_decode(PROTO_CMD_SENDCMPCT, sc, 9, &m, NULL), 0);
	assert_true(m.sendcmpct.high_bandwidth);
	assert_true(m.sendcmpct.version == 2);
	static const uint8_t sc0[9] = {0, 1, 0, 0, 0, 0, 0, 0, 0};
	tu_msg_round_trip(PROTO_CMD_SENDCMPCT, sc0, 9);
	assert_int_equal(proto_msg_decode(PROTO_CMD_SENDCMPCT, sc0, 9, &m, NULL), 0);
	assert_false(m.sendcmpct.high_bandwidth);
	tu_msg_truncations(PROTO_CMD_SENDCMPCT, sc, 9, NULL, 0);
	uint8_t sc10[10] = {0};
	tu_msg_decode_fails(PROTO_CMD_SENDCMPCT, sc10, 10, PROTO_ETRAILING, 9);
	/* Any non-zero announce byte is true (Core's bool). */
	static const uint8_t sc7[9] = {7, 2, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(proto_msg_decode(PROTO_CMD_SENDCMPCT, sc7, 9, &m, NULL), 0);
	assert_true(m.sendcmpct.high_bandwidth);

	/* Payload-less messages: empty round trip; extra bytes tolerated and
	 * ignored, since Core never reads these payloads. */
	static const enum proto_cmd empty[] = {PROTO_CMD_VERACK,      PROTO_CMD_SENDADDRV2,
	                                       PROTO_CMD_SENDHEADERS, PROTO_CMD_WTXIDRELAY,
	                                       PROTO_CMD_GETADDR,     PROTO_CMD_MEMPOOL};
	for (size_t i = 0; i < 6; i++) {
		tu_msg_round_trip(empty[i], NULL, 0);
		size_t off = 77;
		assert_int_equal(proto_msg_decode(empty[i], (const uint8_t *)"xyz", 3, &m, &off),
		                 0);
		assert_int_equal(off, 0);
		assert_int_equal(m.cmd, empty[i]);
		struct proto_writer w;
		proto_writer_init(&w);
		proto_msg_encode(&m, &w);
		assert_int_equal(w.err, 0);
		assert_int_equal(w.len, 0);
		proto_writer_release(&w);
	}
	proto_msg_release(&m);
}

static void test_unknown_command(void **state)
{
	(void)state;
	struct proto_msg m;
	proto_msg_init(&m);
	size_t off = 5;
	tu_assert_err(proto_msg_decode(PROTO_CMD_UNKNOWN, (const uint8_t *)"ab", 2, &m, &off),
	              PROTO_EUNKNOWN);
	assert_int_equal(m.cmd, PROTO_CMD_UNKNOWN);
	tu_assert_err(proto_msg_decode(PROTO_CMD__COUNT, NULL, 0, &m, NULL), PROTO_EUNKNOWN);
	tu_assert_err(proto_msg_decode((enum proto_cmd) - 3, NULL, 0, &m, NULL), PROTO_EUNKNOWN);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_msg_encode(&m, &w);
	tu_assert_err(w.err, PROTO_EUNKNOWN);
	proto_writer_release(&w);
	proto_writer_init(&w);
	proto_msg_frame(&m, 0xd9b4bef9u, &w);
	tu_assert_err(w.err, PROTO_EUNKNOWN);
	proto_writer_release(&w);
	proto_msg_release(&m);
}

/* ---- framing a message ------------------------------------------------ */

static void test_msg_frame(void **state)
{
	(void)state;
	struct tu_wire b;
	tu_build_inv(&b, 5);
	struct proto_msg m, back;
	proto_msg_init(&m);
	proto_msg_init(&back);
	assert_int_equal(proto_msg_decode(PROTO_CMD_GETDATA, b.w.buf, b.w.len, &m, NULL), 0);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_msg_frame(&m, 0xdab5bffau, &w);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 24 + b.w.len);
	struct proto_frame_header h;
	assert_int_equal(proto_frame_header_parse(w.buf, 0xdab5bffau, &h), 0);
	assert_int_equal(h.cmd, PROTO_CMD_GETDATA);
	assert_int_equal(h.length, b.w.len);
	assert_int_equal(proto_frame_verify(&h, w.buf + 24), 0);
	tu_assert_bytes_equal(w.buf + 24, h.length, b.w.buf, b.w.len);
	assert_int_equal(proto_msg_decode(h.cmd, w.buf + 24, h.length, &back, NULL), 0);
	assert_int_equal(back.inv.n, 5);
	proto_writer_release(&w);

	/* A verack frame is the well-known 24 bytes. */
	m.cmd = PROTO_CMD_VERACK;
	proto_writer_init(&w);
	proto_msg_frame(&m, 0xd9b4bef9u, &w);
	size_t len;
	uint8_t *want = tu_unhex("f9beb4d976657261636b000000000000000000005df6e0e2", &len);
	tu_assert_bytes_equal(w.buf, w.len, want, len);
	free(want);
	proto_writer_release(&w);
	proto_msg_release(&m);
	proto_msg_release(&back);
	tu_wire_free(&b);
}

/* ---- tx and block dispatch -------------------------------------------- */

static void test_block_dispatch(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/block413567.raw"), &len);
	tu_msg_round_trip(PROTO_CMD_BLOCK, raw, len);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_BLOCK, raw, len, &m, NULL), 0);
	struct proto_hash h;
	char hex[65];
	proto_block_header_hash(&m.block.hdr, &h);
	proto_hash_to_hex(&h, hex);
	assert_string_equal(hex,
	                    "0000000000000000025aff8be8a55df8f89c77296db6198f272d6577325d4069");
	/* Trailing byte and truncation go through the block decoder's checks. */
	uint8_t *more = malloc(len + 1);
	assert_non_null(more);
	memcpy(more, raw, len);
	more[len] = 0;
	size_t off = 0;
	tu_assert_err(proto_msg_decode(PROTO_CMD_BLOCK, more, len + 1, &m, &off), PROTO_ETRAILING);
	assert_int_equal(off, len);
	assert_true(proto_msg_decode(PROTO_CMD_BLOCK, raw, len - 1, &m, &off) < 0);
	assert_true(proto_msg_decode(PROTO_CMD_BLOCK, raw, 80, &m, &off) < 0);
	free(more);
	proto_msg_release(&m);
	free(raw);
}

static void test_tx_dispatch(void **state)
{
	(void)state;
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/megatx.bin"), &len);
	tu_msg_round_trip(PROTO_CMD_TX, raw, len);
	struct proto_msg m;
	proto_msg_init(&m);
	assert_int_equal(proto_msg_decode(PROTO_CMD_TX, raw, len, &m, NULL), 0);
	assert_int_equal(m.tx.n_in, 5569);
	proto_tx_compute_ids(&m.tx);
	char hex[65];
	proto_hash_to_hex(&m.tx.txid, hex);
	assert_string_equal(hex,
	                    "bb41a757f405890fb0f5856228e23b715702d714d59bf2b1feb70d8b2b4e3e08");
	size_t off = 0;
	assert_true(proto_msg_decode(PROTO_CMD_TX, raw, len - 1, &m, &off) < 0);
	assert_true(off <= len - 1);
	proto_msg_release(&m);

	/* Each allocation of a tx decode, failed in turn: ENOMEM, no leak. */
	tu_msg_oom_each(PROTO_CMD_TX, raw, len);
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version_known_answer),
	    cmocka_unit_test(test_version_optional_tail),
	    cmocka_unit_test(test_version_user_agent_limit),
	    cmocka_unit_test(test_inv_counts),
	    cmocka_unit_test(test_inv_truncation_trailing),
	    cmocka_unit_test(test_inv_type_names),
	    cmocka_unit_test(test_locator),
	    cmocka_unit_test(test_headers),
	    cmocka_unit_test(test_headers_tx_count),
	    cmocka_unit_test(test_addr),
	    cmocka_unit_test(test_addr_v1_encode_networks),
	    cmocka_unit_test(test_addrv2),
	    cmocka_unit_test(test_addrv2_lengths),
	    cmocka_unit_test(test_addrv2_unknown_network),
	    cmocka_unit_test(test_small_messages),
	    cmocka_unit_test(test_unknown_command),
	    cmocka_unit_test(test_msg_frame),
	    cmocka_unit_test(test_block_dispatch),
	    cmocka_unit_test(test_tx_dispatch),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
