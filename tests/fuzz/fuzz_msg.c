/*
 * tests/fuzz/fuzz_msg.c: every message decoder behind proto_msg_decode.
 *
 * Input: the first byte picks the command (modulo the command count, so
 * unknown is included), the rest is the payload. Whatever decodes must
 * encode without error, and decode -> encode -> decode -> encode must give
 * identical messages and identical bytes. Where the codec keeps everything
 * it read, the re-encoding must also equal the input byte for byte.
 * Errors must be documented codes with an offset inside the payload.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static void check(int cond, const char *what, enum proto_cmd cmd)
{
	if (!cond) {
		fprintf(stderr, "fuzz_msg: %s: invariant broken: %s\n", proto_cmd_name(cmd), what);
		abort();
	}
}

static bool netaddr_eq(const struct proto_netaddr *a, const struct proto_netaddr *b)
{
	return a->services == b->services && memcmp(a->ip, b->ip, 16) == 0 && a->port == b->port;
}

static bool version_eq(const struct proto_version *a, const struct proto_version *b)
{
	return a->version == b->version && a->services == b->services &&
	       a->timestamp == b->timestamp && netaddr_eq(&a->addr_recv, &b->addr_recv) &&
	       netaddr_eq(&a->addr_from, &b->addr_from) && a->nonce == b->nonce &&
	       a->user_agent_len == b->user_agent_len &&
	       memcmp(a->user_agent, b->user_agent, a->user_agent_len) == 0 &&
	       a->start_height == b->start_height && a->relay == b->relay &&
	       a->has_relay == b->has_relay && a->omitted == b->omitted;
}

static bool header_eq(const struct proto_block_header *a, const struct proto_block_header *b)
{
	return a->version == b->version && proto_hash_eq(&a->prev, &b->prev) &&
	       proto_hash_eq(&a->merkle_root, &b->merkle_root) && a->time == b->time &&
	       a->bits == b->bits && a->nonce == b->nonce;
}

static bool addr_eq(const struct proto_addr *a, const struct proto_addr *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct proto_addr_entry *x = &a->v[i], *y = &b->v[i];
		if (x->time != y->time || x->services != y->services || x->net != y->net ||
		    x->addr_len != y->addr_len || memcmp(x->addr, y->addr, x->addr_len) != 0 ||
		    x->port != y->port)
			return false;
	}
	return true;
}

/* Field-by-field equality of what two decodes of `cmd` produced. */
static bool msg_eq(enum proto_cmd cmd, const struct proto_msg *a, const struct proto_msg *b)
{
	switch (cmd) {
	case PROTO_CMD_VERSION:
		return version_eq(&a->version, &b->version);
	case PROTO_CMD_PING:
	case PROTO_CMD_PONG:
		return a->nonce == b->nonce;
	case PROTO_CMD_INV:
	case PROTO_CMD_GETDATA:
	case PROTO_CMD_NOTFOUND:
		if (a->inv.n != b->inv.n)
			return false;
		for (uint32_t i = 0; i < a->inv.n; i++) {
			if (a->inv.v[i].type != b->inv.v[i].type ||
			    !proto_hash_eq(&a->inv.v[i].hash, &b->inv.v[i].hash))
				return false;
		}
		return true;
	case PROTO_CMD_GETHEADERS:
	case PROTO_CMD_GETBLOCKS:
		return a->locator.version == b->locator.version && a->locator.n == b->locator.n &&
		       (a->locator.n == 0 || memcmp(a->locator.hashes, b->locator.hashes,
		                                    (size_t)a->locator.n * 32) == 0) &&
		       proto_hash_eq(&a->locator.stop, &b->locator.stop);
	case PROTO_CMD_HEADERS:
		if (a->headers.n != b->headers.n)
			return false;
		for (uint32_t i = 0; i < a->headers.n; i++) {
			if (!header_eq(&a->headers.h[i], &b->headers.h[i]))
				return false;
		}
		return true;
	case PROTO_CMD_ADDR:
	case PROTO_CMD_ADDRV2:
		return addr_eq(&a->addr, &b->addr);
	case PROTO_CMD_FEEFILTER:
		return a->feerate == b->feerate;
	case PROTO_CMD_SENDCMPCT:
		return a->sendcmpct.high_bandwidth == b->sendcmpct.high_bandwidth &&
		       a->sendcmpct.version == b->sendcmpct.version;
	default:
		/* tx, block: compared through their encodings; empty messages. */
		return true;
	}
}

/* Whether encode(decode(payload)) must reproduce the payload exactly. */
static bool must_be_exact(enum proto_cmd cmd, const struct proto_msg *m, const uint8_t *p,
                          size_t len, size_t consumed)
{
	switch (cmd) {
	case PROTO_CMD_VERSION:
		/* Exact up to what was read, unless the relay byte was 2..255. */
		return !(m->version.has_relay && p[consumed - 1] > 1);
	case PROTO_CMD_HEADERS:
		/* The ignored tx counts re-encode as 0. */
		return false;
	case PROTO_CMD_ADDRV2:
		return m->addr.n_skipped == 0;
	case PROTO_CMD_SENDCMPCT:
		return len > 0 && p[0] <= 1;
	default:
		return true;
	}
}

static bool tolerant(enum proto_cmd cmd)
{
	switch (cmd) {
	case PROTO_CMD_VERSION:
	case PROTO_CMD_VERACK:
	case PROTO_CMD_SENDADDRV2:
	case PROTO_CMD_SENDHEADERS:
	case PROTO_CMD_WTXIDRELAY:
	case PROTO_CMD_GETADDR:
	case PROTO_CMD_MEMPOOL:
	/* BIP157's requests: their fields read, the rest ignored (Core's). */
	case PROTO_CMD_GETCFILTERS:
	case PROTO_CMD_GETCFHEADERS:
	case PROTO_CMD_GETCFCHECKPT:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum proto_cmd cmd = (enum proto_cmd)(data[0] % PROTO_CMD__COUNT);
	const uint8_t *p = data + 1;
	size_t len = size - 1;
	/* A private copy, so the sanitizers see reads past the payload. */
	uint8_t *payload = malloc(len ? len : 1);
	if (!payload)
		return 0;
	memcpy(payload, p, len);

	struct proto_msg m1, m2;
	struct proto_writer w1, w2;
	proto_msg_init(&m1);
	proto_msg_init(&m2);
	proto_writer_init(&w1);
	proto_writer_init(&w2);

	size_t off = SIZE_MAX;
	int err = proto_msg_decode(cmd, payload, len, &m1, &off);
	check(err <= 0 && err >= PROTO_ERR__MIN, "error code out of range", cmd);
	check(off <= len, "offset past the payload", cmd);
	if (cmd == PROTO_CMD_UNKNOWN)
		check(err == PROTO_EUNKNOWN, "unknown command decoded", cmd);
	if (err)
		goto out;
	if (!tolerant(cmd))
		check(off == len, "success without consuming the payload", cmd);

	proto_msg_encode(&m1, &w1);
	check(w1.err == 0, "a decoded message does not encode", cmd);
	if (must_be_exact(cmd, &m1, payload, len, off))
		check(w1.len == off && (off == 0 || memcmp(w1.buf, payload, off) == 0),
		      "re-encoding differs from the input", cmd);

	size_t off2;
	err = proto_msg_decode(cmd, w1.buf, w1.len, &m2, &off2);
	check(err == 0, "re-encoded message does not decode", cmd);
	check(off2 == w1.len, "re-encoded message not fully consumed", cmd);
	check(msg_eq(cmd, &m1, &m2), "decode -> encode -> decode changed the message", cmd);
	proto_msg_encode(&m2, &w2);
	check(w2.err == 0 && w2.len == w1.len &&
	          (w1.len == 0 || memcmp(w1.buf, w2.buf, w1.len) == 0),
	      "second encoding differs", cmd);

	/* Decoding again into the used object must give the same message. */
	err = proto_msg_decode(cmd, payload, len, &m2, NULL);
	check(err == 0 && msg_eq(cmd, &m1, &m2), "decoding into a reused message differs", cmd);

out:
	proto_writer_release(&w1);
	proto_writer_release(&w2);
	proto_msg_release(&m1);
	proto_msg_release(&m2);
	free(payload);
	return 0;
}
