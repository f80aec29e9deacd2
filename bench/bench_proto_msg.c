/*
 * bench/bench_proto_msg.c: CompactSize, var strings and message decoding,
 * mirroring btcd's wire/bench_test.go one to one (same names, same inputs,
 * same counts) so the numbers compare directly.
 *
 * Decode* benches decode into a reused object, the steady state of a peer
 * connection: 0 allocs/op. The *Fresh variants init, decode and release
 * each time, to show the one allocation a cold decode costs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "proto/proto.h"

/* ---- CompactSize ------------------------------------------------------ */

/* Not const: the compiler must not fold the parse of a known buffer. */
static uint8_t varint1[] = {0x01};
static uint8_t varint3[] = {0xfd, 0xff, 0xff};
static uint8_t varint5[] = {0xfe, 0xff, 0xff, 0xff, 0xff};
static uint8_t varint9[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void read_varint(struct bench_ctx *ctx, size_t n, uint8_t *buf, size_t len, uint64_t want)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		bench_keep(buf);
		proto_reader_init(&r, buf, len);
		if (proto_read_compact(&r, UINT64_MAX, &v))
			break;
		bench_keep(v);
	}
	if (v != want)
		bench_fail(ctx, "read %llu, expected %llu", (unsigned long long)v,
		           (unsigned long long)want);
}

BENCH(ReadVarInt1)
{
	read_varint(ctx, n, varint1, sizeof(varint1), 1);
}

BENCH(ReadVarInt3)
{
	read_varint(ctx, n, varint3, sizeof(varint3), 0xffff);
}

BENCH(ReadVarInt5)
{
	read_varint(ctx, n, varint5, sizeof(varint5), 0xffffffffULL);
}

BENCH(ReadVarInt9)
{
	read_varint(ctx, n, varint9, sizeof(varint9), UINT64_MAX);
}

static void write_varint(struct bench_ctx *ctx, size_t n, uint64_t v, size_t want_len)
{
	uint8_t out[9];
	struct proto_writer w;
	proto_writer_init_fixed(&w, out, sizeof(out));
	for (size_t i = 0; i < n; i++) {
		w.len = 0;
		bench_keep(v);
		proto_write_compact(&w, v);
		bench_keep(out);
	}
	if (w.err || w.len != want_len)
		bench_fail(ctx, "wrote %zu bytes (err %d), expected %zu", w.len, w.err, want_len);
}

BENCH(WriteVarInt1)
{
	write_varint(ctx, n, 1, 1);
}

BENCH(WriteVarInt3)
{
	write_varint(ctx, n, 65535, 3);
}

BENCH(WriteVarInt5)
{
	write_varint(ctx, n, 4294967295ULL, 5);
}

BENCH(WriteVarInt9)
{
	write_varint(ctx, n, 18446744073709551615ULL, 9);
}

/* ---- var strings ------------------------------------------------------ */

static uint8_t varstr4[] = {0x04, 't', 'e', 's', 't'};
static uint8_t varstr10[] = {0x0a, 't', 'e', 's', 't', '0', '1', '2', '3', '4', '5'};

static void read_varstr(struct bench_ctx *ctx, size_t n, uint8_t *buf, size_t len, size_t want)
{
	char out[PROTO_MAX_SUBVERSION + 1];
	size_t got = 0;
	for (size_t i = 0; i < n; i++) {
		struct proto_reader r;
		bench_keep(buf);
		proto_reader_init(&r, buf, len);
		if (proto_read_varstr(&r, PROTO_MAX_SUBVERSION, out, sizeof(out), &got))
			break;
		bench_keep(out);
	}
	if (got != want)
		bench_fail(ctx, "read %zu bytes, expected %zu", got, want);
}

BENCH(ReadVarStr4)
{
	read_varstr(ctx, n, varstr4, sizeof(varstr4), 4);
}

BENCH(ReadVarStr10)
{
	read_varstr(ctx, n, varstr10, sizeof(varstr10), 10);
}

static void write_varstr(struct bench_ctx *ctx, size_t n, const char *s)
{
	uint8_t out[32];
	size_t len = strlen(s);
	struct proto_writer w;
	proto_writer_init_fixed(&w, out, sizeof(out));
	for (size_t i = 0; i < n; i++) {
		w.len = 0;
		bench_keep(s);
		proto_write_varbytes(&w, s, len);
		bench_keep(out);
	}
	if (w.err || w.len != len + 1)
		bench_fail(ctx, "wrote %zu bytes (err %d)", w.len, w.err);
}

BENCH(WriteVarStr4)
{
	write_varstr(ctx, n, "test");
}

BENCH(WriteVarStr10)
{
	write_varstr(ctx, n, "test012345");
}

/* ---- message payloads, built once ------------------------------------- */

/* btcd's hashes are chainhash.NewHashFromStr(fmt.Sprintf("%x", i)): the
 * number i in the low (display-last) bytes. Same idea here. */
static void hash_of(uint32_t i, struct proto_hash *h)
{
	memset(h->b, 0, 32);
	proto_put_le32(h->b, i);
}

struct payload {
	struct proto_writer w;
	int built;
};

static const uint8_t *get_payload(struct payload *p, void (*build)(struct proto_writer *w),
                                  size_t *len)
{
	if (!p->built) {
		proto_writer_init(&p->w);
		build(&p->w);
		if (p->w.err) {
			/* Like bench_read_file: no input, no benchmark. */
			fprintf(stderr, "bench_proto_msg: cannot build payload: %s\n",
			        proto_strerror(p->w.err));
			exit(2);
		}
		p->built = 1;
	}
	*len = p->w.len;
	return p->w.buf;
}

static void build_locator(struct proto_writer *w)
{
	struct proto_locator l = {.version = PROTO_VERSION, .n = PROTO_MAX_LOCATOR};
	struct proto_hash hashes[PROTO_MAX_LOCATOR];
	for (uint32_t i = 0; i < PROTO_MAX_LOCATOR; i++)
		hash_of(i, &hashes[i]);
	l.hashes = hashes;
	proto_locator_encode(&l, w);
}

static void build_headers(struct proto_writer *w)
{
	static struct proto_block_header h[PROTO_MAX_HEADERS];
	for (uint32_t i = 0; i < PROTO_MAX_HEADERS; i++) {
		h[i].version = 1;
		hash_of(i, &h[i].prev);
		hash_of(i, &h[i].merkle_root);
		h[i].time = 1700000000u;
		h[i].bits = 0;
		h[i].nonce = i;
	}
	struct proto_headers hs = {.h = h, .n = PROTO_MAX_HEADERS};
	proto_headers_encode(&hs, w);
}

static void build_addr(struct proto_writer *w)
{
	static struct proto_addr_entry e[PROTO_MAX_ADDR];
	for (uint32_t i = 0; i < PROTO_MAX_ADDR; i++) {
		e[i].time = 1700000000u;
		e[i].services = PROTO_NODE_NETWORK;
		e[i].net = PROTO_BIP155_IPV4;
		e[i].addr_len = 4;
		memcpy(e[i].addr, "\x7f\x00\x00\x01", 4);
		e[i].port = (uint16_t)i;
	}
	struct proto_addr a = {.v = e, .n = PROTO_MAX_ADDR};
	proto_addr_encode(&a, w);
}

static void build_inv(struct proto_writer *w)
{
	static struct proto_inv_vec v[PROTO_MAX_INV];
	for (uint32_t i = 0; i < PROTO_MAX_INV; i++) {
		v[i].type = PROTO_INV_BLOCK;
		hash_of(i, &v[i].hash);
	}
	struct proto_inv inv = {.v = v, .n = PROTO_MAX_INV};
	proto_inv_encode(&inv, w);
}

static struct payload p_locator, p_headers, p_addr, p_inv;

/* ---- steady-state decodes (reused object) ----------------------------- */

BENCH(DecodeGetHeaders)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_locator, build_locator, &len);
	struct proto_locator l = {0};
	struct proto_reader r;
	int err = 0;
	proto_reader_init(&r, buf, len);
	err |= proto_locator_decode(&r, &l); /* warm: capacity for 500 */
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_reader_init(&r, buf, len);
		err |= proto_locator_decode(&r, &l);
		bench_keep(l.hashes);
	}
	bench_stop(ctx);
	if (err || l.n != PROTO_MAX_LOCATOR)
		bench_fail(ctx, "decoded %u hashes (err %d)", l.n, err);
	proto_locator_release(&l);
}

BENCH(DecodeGetBlocks)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_locator, build_locator, &len);
	struct proto_msg m;
	int err = 0;
	proto_msg_init(&m);
	err |= proto_msg_decode(PROTO_CMD_GETBLOCKS, buf, len, &m, NULL);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		err |= proto_msg_decode(PROTO_CMD_GETBLOCKS, buf, len, &m, NULL);
		bench_keep(m.locator.hashes);
	}
	bench_stop(ctx);
	if (err || m.locator.n != PROTO_MAX_LOCATOR)
		bench_fail(ctx, "decoded %u hashes (err %d)", m.locator.n, err);
	proto_msg_release(&m);
}

BENCH(DecodeHeaders)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_headers, build_headers, &len);
	struct proto_headers h = {0};
	struct proto_reader r;
	int err = 0;
	proto_reader_init(&r, buf, len);
	err |= proto_headers_decode(&r, &h);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_reader_init(&r, buf, len);
		err |= proto_headers_decode(&r, &h);
		bench_keep(h.h);
	}
	bench_stop(ctx);
	if (err || h.n != PROTO_MAX_HEADERS || h.h[1999].nonce != 1999)
		bench_fail(ctx, "decoded %u headers (err %d)", h.n, err);
	proto_headers_release(&h);
}

BENCH(DecodeAddr)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_addr, build_addr, &len);
	struct proto_addr a = {0};
	struct proto_reader r;
	int err = 0;
	proto_reader_init(&r, buf, len);
	err |= proto_addr_decode(&r, &a);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_reader_init(&r, buf, len);
		err |= proto_addr_decode(&r, &a);
		bench_keep(a.v);
	}
	bench_stop(ctx);
	if (err || a.n != PROTO_MAX_ADDR || a.v[999].port != 999)
		bench_fail(ctx, "decoded %u addresses (err %d)", a.n, err);
	proto_addr_release(&a);
}

BENCH(DecodeInv)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_inv, build_inv, &len);
	struct proto_inv inv = {0};
	struct proto_reader r;
	int err = 0;
	proto_reader_init(&r, buf, len);
	err |= proto_inv_decode(&r, &inv);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		proto_reader_init(&r, buf, len);
		err |= proto_inv_decode(&r, &inv);
		bench_keep(inv.v);
	}
	bench_stop(ctx);
	if (err || inv.n != PROTO_MAX_INV || inv.v[49999].type != PROTO_INV_BLOCK)
		bench_fail(ctx, "decoded %u entries (err %d)", inv.n, err);
	proto_inv_release(&inv);
}

BENCH(DecodeNotFound)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_inv, build_inv, &len);
	struct proto_msg m;
	int err = 0;
	proto_msg_init(&m);
	err |= proto_msg_decode(PROTO_CMD_NOTFOUND, buf, len, &m, NULL);
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		err |= proto_msg_decode(PROTO_CMD_NOTFOUND, buf, len, &m, NULL);
		bench_keep(m.inv.v);
	}
	bench_stop(ctx);
	if (err || m.inv.n != PROTO_MAX_INV)
		bench_fail(ctx, "decoded %u entries (err %d)", m.inv.n, err);
	proto_msg_release(&m);
}

/* ---- cold decodes: init + decode + release per op --------------------- */

BENCH(DecodeGetHeadersFresh)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_locator, build_locator, &len);
	int err = 0;
	uint32_t got = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_locator l = {0};
		struct proto_reader r;
		proto_reader_init(&r, buf, len);
		err |= proto_locator_decode(&r, &l);
		got = l.n;
		proto_locator_release(&l);
	}
	bench_stop(ctx);
	if (err || got != PROTO_MAX_LOCATOR)
		bench_fail(ctx, "decoded %u hashes (err %d)", got, err);
}

BENCH(DecodeHeadersFresh)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_headers, build_headers, &len);
	int err = 0;
	uint32_t got = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_headers h = {0};
		struct proto_reader r;
		proto_reader_init(&r, buf, len);
		err |= proto_headers_decode(&r, &h);
		got = h.n;
		proto_headers_release(&h);
	}
	bench_stop(ctx);
	if (err || got != PROTO_MAX_HEADERS)
		bench_fail(ctx, "decoded %u headers (err %d)", got, err);
}

BENCH(DecodeAddrFresh)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_addr, build_addr, &len);
	int err = 0;
	uint32_t got = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_addr a = {0};
		struct proto_reader r;
		proto_reader_init(&r, buf, len);
		err |= proto_addr_decode(&r, &a);
		got = a.n;
		proto_addr_release(&a);
	}
	bench_stop(ctx);
	if (err || got != PROTO_MAX_ADDR)
		bench_fail(ctx, "decoded %u addresses (err %d)", got, err);
}

BENCH(DecodeInvFresh)
{
	size_t len;
	const uint8_t *buf = get_payload(&p_inv, build_inv, &len);
	int err = 0;
	uint32_t got = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		struct proto_inv inv = {0};
		struct proto_reader r;
		proto_reader_init(&r, buf, len);
		err |= proto_inv_decode(&r, &inv);
		got = inv.n;
		proto_inv_release(&inv);
	}
	bench_stop(ctx);
	if (err || got != PROTO_MAX_INV)
		bench_fail(ctx, "decoded %u entries (err %d)", got, err);
}
