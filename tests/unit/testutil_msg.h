/**
 * tests/unit/testutil_msg.h: wire builders and decode checks shared by the
 * P2P message tests. Include after <setjmp.h>, <stdarg.h>, <stddef.h> and
 * <cmocka.h>. Every check fails the running test on a mismatch.
 */
#ifndef PEERD_TESTUTIL_MSG_H
#define PEERD_TESTUTIL_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/** A payload under construction; w.buf holds the bytes (release with tu_wire_free). */
struct tu_wire {
	struct proto_writer w;
};

/** A builder of a payload with n entries into a fresh tu_wire. */
typedef void (*tu_build_fn)(struct tu_wire *b, uint32_t n);

/** Start an empty growable payload. */
void tu_wire_init(struct tu_wire *b);
/** Assert the builder hit no writer error. */
void tu_wire_done(struct tu_wire *b);
/** Free the payload's buffer. */
void tu_wire_free(struct tu_wire *b);
/** Deterministic filler: the same seed always gives the same n bytes. */
void tu_fill(uint8_t *p, size_t n, uint32_t seed);
/** Append n (at most 512) tu_fill bytes of `seed`. */
void tu_put_filled(struct tu_wire *b, size_t n, uint32_t seed);

/** Decode `cmd` from bytes into a fresh message, re-encode and compare byte for byte. */
void tu_msg_round_trip(enum proto_cmd cmd, const uint8_t *buf, size_t len);
/**
 * Decode that must fail with `want` at offset `want_off` (SIZE_MAX: any
 * offset); uses a fresh message, released after.
 */
void tu_msg_decode_fails(enum proto_cmd cmd, const uint8_t *buf, size_t len, int want,
                         size_t want_off);
/**
 * Every proper prefix of a valid payload must fail cleanly (a negative code,
 * offset inside the prefix), except the lengths listed in ok_at (version's
 * optional-field boundaries). Each prefix is a private heap copy, so ASan
 * catches any read past it.
 */
void tu_msg_truncations(enum proto_cmd cmd, const uint8_t *buf, size_t len, const size_t *ok_at,
                        size_t n_ok);
/**
 * Fail each allocation of decoding `cmd` from raw in turn (up to 64): each
 * must give PROTO_ENOMEM, and at least one must have been injected.
 */
void tu_msg_oom_each(enum proto_cmd cmd, const uint8_t *raw, size_t len);

/** Inventory types cycled through by tu_build_inv. */
#define TU_N_INV_TYPES 7
extern const uint32_t tu_inv_types[TU_N_INV_TYPES];
/** inv/getdata/notfound: n entries, type tu_inv_types[i % 7], hash tu_fill(i). */
void tu_build_inv(struct tu_wire *b, uint32_t n);
/** getheaders/getblocks: version, n hashes tu_fill(1000 + i), stop hash tu_fill(7). */
void tu_build_locator(struct tu_wire *b, uint32_t n);
/** headers: n distinct headers, each followed by the tx count byte `txcount`. */
void tu_build_headers(struct tu_wire *b, uint32_t n, uint8_t txcount);
/** tu_build_headers with tx count 0 (a tu_build_fn). */
void tu_build_headers0(struct tu_wire *b, uint32_t n);
/** addr: n entries alternating IPv4-mapped 127.x.y.1 and IPv6 2001:..., port 8333 + i. */
void tu_build_addr(struct tu_wire *b, uint32_t n);

/** A BIP155 network id and its address length. */
struct tu_v2_net {
	uint8_t net;
	uint8_t len;
};
/** The six BIP155 networks with fixed lengths. */
#define TU_N_V2_NETS 6
extern const struct tu_v2_net tu_v2_nets[TU_N_V2_NETS];
/** One addrv2 entry: time 1700000000 + i, address tu_fill(len, i), port 1000 + i. */
void tu_put_v2_entry(struct tu_wire *b, uint32_t i, uint64_t services, uint8_t net, size_t len);
/** addrv2: n entries cycling through tu_v2_nets and five service values. */
void tu_build_addrv2(struct tu_wire *b, uint32_t n);

#endif
