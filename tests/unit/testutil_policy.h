/*
 * tests/unit/testutil_policy.h: transactions described field by field and
 * the scripts of every kind, for the standardness tests
 * (test_mempool_policy.c: fees, dust, IsStandardTx;
 * test_mempool_policy_inputs.c: inputs, witnesses, sigops, Core's own
 * transactions). Each test file has its own copy of the state below.
 */
#ifndef PEERD_TESTUTIL_POLICY_H
#define PEERD_TESTUTIL_POLICY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "script/script.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau

/* ---- building transactions ---------------------------------------------- */

#define TB_MAX_IN  4
#define TB_MAX_OUT 5
#define TB_MAX_WIT 110

struct span {
	const uint8_t *p;
	size_t n;
};

struct tb_in {
	struct span sig;
	uint32_t nwit;
	struct span wit[TB_MAX_WIT];
};

struct tb_out {
	int64_t value;
	struct span spk;
};

/* A transaction described field by field, serialized and then decoded so
 * that sizes, weight and witness spans are exactly what the decoder gives. */
struct tb {
	int32_t version;
	uint32_t n_in, n_out, locktime;
	struct tb_in in[TB_MAX_IN];
	struct tb_out out[TB_MAX_OUT];
};

static inline struct tb *tb_new(void)
{
	struct tb *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	b->version = 2;
	b->n_in = 1;
	return b;
}

static inline void tb_out_add(struct tb *b, int64_t value, const uint8_t *spk, size_t n)
{
	assert_true(b->n_out < TB_MAX_OUT);
	b->out[b->n_out++] = (struct tb_out){value, {spk, n}};
}

/* A length and the bytes; an empty span may have no pointer at all. */
static inline void tb_varbytes(struct proto_writer *w, struct span sp)
{
	proto_write_compact(w, sp.n);
	if (sp.n)
		proto_write_bytes(w, sp.p, sp.n);
}

static inline void tb_build(const struct tb *b, struct proto_tx *tx)
{
	struct proto_writer w;
	bool wit = false;
	for (uint32_t j = 0; j < b->n_in; j++)
		wit |= b->in[j].nwit > 0;
	proto_writer_init(&w);
	proto_write_u32le(&w, (uint32_t)b->version);
	if (wit) {
		proto_write_u8(&w, 0);
		proto_write_u8(&w, 1);
	}
	proto_write_compact(&w, b->n_in);
	for (uint32_t j = 0; j < b->n_in; j++) {
		struct proto_hash h;
		memset(h.b, 0x11 + (int)j, 32); /* distinct, never null */
		proto_write_hash(&w, &h);
		proto_write_u32le(&w, j);
		tb_varbytes(&w, b->in[j].sig);
		proto_write_u32le(&w, 0xfffffffdu);
	}
	proto_write_compact(&w, b->n_out);
	for (uint32_t k = 0; k < b->n_out; k++) {
		proto_write_u64le(&w, (uint64_t)b->out[k].value);
		tb_varbytes(&w, b->out[k].spk);
	}
	if (wit) {
		for (uint32_t j = 0; j < b->n_in; j++) {
			proto_write_compact(&w, b->in[j].nwit);
			for (uint32_t i = 0; i < b->in[j].nwit; i++)
				tb_varbytes(&w, b->in[j].wit[i]);
		}
	}
	proto_write_u32le(&w, b->locktime);
	assert_int_equal(w.err, 0);
	proto_tx_release(tx);
	tu_assert_err(proto_tx_decode_buf(w.buf, w.len, tx, NULL), 0);
	proto_writer_release(&w);
}

/* ---- scripts ------------------------------------------------------------ */

static uint8_t __attribute__((unused)) P2PKH[25], P2SH[23], P2WPKH[22], P2WSH[34], P2TR[34],
    WV2[34], WV16_40[42];
static uint8_t __attribute__((unused)) P2PK[35], MS_1OF3[105], MS_4OF4[139], MS_2OF3[105];
static const uint8_t __attribute__((unused)) P2A[4] = {0x51, 0x02, 0x4e, 0x73};
static const uint8_t __attribute__((unused)) OP_TRUE[1] = {0x51};
static uint8_t __attribute__((unused)) BIG[4000]; /* filler bytes for pushes and witness items */

static inline size_t multisig(uint8_t *s, unsigned m, unsigned n)
{
	size_t k = 0;
	s[k++] = (uint8_t)(0x50 + m);
	for (unsigned i = 0; i < n; i++) {
		s[k++] = 33;
		s[k++] = 0x02;
		memset(s + k, 0x40 + (int)i, 32);
		k += 32;
	}
	s[k++] = (uint8_t)(0x50 + n);
	s[k++] = SCRIPT_OP_CHECKMULTISIG;
	return k;
}

static inline int setup(void **state)
{
	(void)state;
	memcpy(P2PKH, "\x76\xa9\x14", 3);
	memset(P2PKH + 3, 0xaa, 20);
	memcpy(P2PKH + 23, "\x88\xac", 2);
	memcpy(P2SH, "\xa9\x14", 2);
	memset(P2SH + 2, 0xbb, 20);
	P2SH[22] = 0x87;
	memcpy(P2WPKH, "\x00\x14", 2);
	memset(P2WPKH + 2, 0xcc, 20);
	memcpy(P2WSH, "\x00\x20", 2);
	memset(P2WSH + 2, 0xdd, 32);
	memcpy(P2TR, "\x51\x20", 2);
	memset(P2TR + 2, 0xee, 32);
	memcpy(WV2, "\x52\x20", 2);
	memset(WV2 + 2, 0x12, 32);
	memcpy(WV16_40, "\x60\x28", 2);
	memset(WV16_40 + 2, 0x34, 40);
	P2PK[0] = 33;
	P2PK[1] = 0x03;
	memset(P2PK + 2, 0x56, 32);
	P2PK[34] = SCRIPT_OP_CHECKSIG;
	assert_int_equal(multisig(MS_1OF3, 1, 3), sizeof(MS_1OF3));
	assert_int_equal(multisig(MS_2OF3, 2, 3), sizeof(MS_2OF3));
	assert_int_equal(multisig(MS_4OF4, 4, 4), sizeof(MS_4OF4));
	memset(BIG, 0x5a, sizeof(BIG));
	return 0;
}

/* An OP_RETURN script of exactly `total` bytes: OP_RETURN and one push. */
static inline size_t op_return(uint8_t *s, size_t total)
{
	size_t k = 0;
	s[k++] = SCRIPT_OP_RETURN;
	size_t data = total - 1 - (total - 1 > 76 ? 2 : 1);
	if (total - 1 > 76) {
		s[k++] = SCRIPT_OP_PUSHDATA1;
		s[k++] = (uint8_t)data;
	} else {
		s[k++] = (uint8_t)data;
	}
	memset(s + k, 0x77, data);
	return k + data;
}

/* A push-only scriptSig of exactly `total` bytes (>= 300): one PUSHDATA2. */
static inline size_t pushdata2(uint8_t *s, size_t total)
{
	size_t data = total - 3;
	s[0] = SCRIPT_OP_PUSHDATA2;
	s[1] = (uint8_t)data;
	s[2] = (uint8_t)(data >> 8);
	memset(s + 3, 0x01, data);
	return total;
}

static struct mempool_policy __attribute__((unused)) pol;
static struct chain_state __attribute__((unused)) st;

static inline void defaults(void)
{
	mempool_policy_default(&pol, proto_params(PROTO_NET_REGTEST));
	chain_state_clear(&st);
}

/* A standard one-in one-out tx paying P2WPKH, with scriptSig 0x00 (push). */
static inline struct tb *simple(void)
{
	static const uint8_t sig[1] = {0x00};
	struct tb *b = tb_new();
	b->in[0].sig = (struct span){sig, 1};
	tb_out_add(b, 10000, P2WPKH, sizeof(P2WPKH));
	return b;
}

static inline void expect_standard(struct tb *b)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	tu_assert_ok(mempool_policy_check_standard(&tx, &pol, &st), &st);
	proto_tx_release(&tx);
}

static inline void expect_nonstandard_at(struct tb *b, const char *reason, int line)
{
	struct proto_tx tx;
	proto_tx_init(&tx);
	tb_build(b, &tx);
	chain_state_clear(&st);
	int rc = mempool_policy_check_standard(&tx, &pol, &st);
	tu_assert_reject_impl(rc, &st, CHAIN_RESULT_TX_NOT_STANDARD, reason, __FILE__, line);
	/* IsStandardTx's rejections carry no debug message in Core. */
	assert_string_equal(st.debug, "");
	proto_tx_release(&tx);
}
#define expect_nonstandard(b, reason) expect_nonstandard_at((b), (reason), __LINE__)

#endif
