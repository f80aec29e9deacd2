/*
 * tests/unit/test_script_ops.c: the interpreter opcode family by opcode
 * family, every consensus limit at and just past its edge, conditionals,
 * lock times, the asm notation, flag and error names, sigop counting and
 * CheckTransaction. Signatures are in test_script_sig.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

/* ---- a one-input spending transaction built by hand --------------------- */

struct txparams {
	int32_t version;
	uint32_t locktime;
	uint32_t sequence;
};

static const struct txparams DEFAULT_TX = {1, 0, 0xffffffffu};

static uint8_t *parse_asm(const char *text, size_t *len)
{
	struct proto_writer w;
	size_t off = 0;
	proto_writer_init(&w);
	int rc = script_parse_asm(text, &w, &off);
	if (rc)
		fail_msg("asm '%s' does not parse at %zu (%d)", text, off, rc);
	uint8_t *out = malloc(w.len + 1);
	if (w.len)
		memcpy(out, w.buf, w.len);
	*len = w.len;
	proto_writer_release(&w);
	return out;
}

/* Verify raw scripts with an optional witness; returns the error code. */
static int verify_raw(const uint8_t *sig, size_t sig_len, const uint8_t *spk, size_t spk_len,
                      const uint8_t *const *wit, const size_t *wit_len, size_t n_wit,
                      uint32_t flags, const struct txparams *p)
{
	size_t blob_len = sig_len;
	for (size_t i = 0; i < n_wit; i++)
		blob_len += proto_compact_size(wit_len[i]) + wit_len[i];
	uint8_t *blob = malloc(blob_len + 1);
	struct proto_writer w;
	proto_writer_init_fixed(&w, blob, blob_len + 1);
	proto_write_bytes(&w, sig, sig_len);
	for (size_t i = 0; i < n_wit; i++)
		proto_write_varbytes(&w, wit[i], wit_len[i]);
	assert_int_equal(w.err, 0);

	struct proto_txin in = {0};
	struct proto_txout out = {0};
	struct proto_tx tx = {0};
	memset(in.prevout.txid.b, 0x11, 32);
	in.script_len = (uint32_t)sig_len;
	in.sequence = p->sequence;
	in.wit_off = (uint32_t)sig_len;
	in.wit_len = (uint32_t)(blob_len - sig_len);
	in.wit_count = (uint32_t)n_wit;
	out.script_off = (uint32_t)blob_len;
	tx.version = p->version;
	tx.locktime = p->locktime;
	tx.n_in = tx.n_out = 1;
	tx.vin = &in;
	tx.vout = &out;
	tx.blob = blob;
	tx.blob_len = (uint32_t)blob_len;
	tx.has_witness = n_wit > 0;

	int err = -1;
	int rc = script_verify(sig, sig_len, spk, spk_len, &tx, 0, 0, flags, NULL, &err);
	assert_int_equal(rc, -err);
	free(blob);
	return err;
}

static int run_tx(const char *sig_asm, const char *spk_asm, uint32_t flags,
                  const struct txparams *p)
{
	size_t sl, pl;
	uint8_t *sig = parse_asm(sig_asm, &sl), *spk = parse_asm(spk_asm, &pl);
	int err = verify_raw(sig, sl, spk, pl, NULL, NULL, 0, flags, p);
	free(sig);
	free(spk);
	return err;
}

static int run(const char *sig_asm, const char *spk_asm, uint32_t flags)
{
	return run_tx(sig_asm, spk_asm, flags, &DEFAULT_TX);
}

/* The script alone (empty scriptSig). */
static int run1(const char *spk_asm, uint32_t flags)
{
	return run("", spk_asm, flags);
}

/* ---- numbers ------------------------------------------------------------- */

static void test_numbers(void **state)
{
	(void)state;
	/* results may be 5 bytes, operands may not */
	tu_expect_script_err(SCRIPT_ERR_OK, run1("2147483647 1ADD 0x05 0x0000008000 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_UNKNOWN_ERROR, run1("2147483647 1ADD 1ADD", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("2147483647 DUP ADD 4294967294 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("-2147483647 1SUB 0x05 0x0000008080 EQUAL", 0));
	/* negative zero is zero, but not minimal */
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0x01 0x80 NOT", 0));
	tu_expect_script_err(SCRIPT_ERR_UNKNOWN_ERROR,
	                     run1("0x01 0x80 NOT", SCRIPT_VERIFY_MINIMALDATA));
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, run1("0x01 0x80", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0x02 0x0100 1 NUMEQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, run1("0x02 0x0100 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_UNKNOWN_ERROR,
	                     run1("0x02 0x0100 1 NUMEQUAL", SCRIPT_VERIFY_MINIMALDATA));
	/* 0x0080 is minimal: the high bit of 0x80 needs the extra byte */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0x02 0x8000 128 NUMEQUAL", SCRIPT_VERIFY_MINIMALDATA));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0x02 0x8080 -128 NUMEQUAL", SCRIPT_VERIFY_MINIMALDATA));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("-1 1ADD 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 NEGATE -1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("-128 ABS 128 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("5 1SUB 4 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 NOT 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("7 NOT 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("7 0NOTEQUAL 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 0NOTEQUAL 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 4 ADD 7 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 4 SUB -1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 0 BOOLAND 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 0 BOOLOR 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 4 NUMNOTEQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 4 LESSTHAN", 0));
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, run1("4 4 LESSTHAN", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("4 4 LESSTHANOREQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("5 4 GREATERTHAN", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("4 4 GREATERTHANOREQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 -4 MIN -4 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 -4 MAX 3 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("2 2 3 WITHIN", 0));
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, run1("3 2 3 WITHIN", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("3 3 NUMEQUALVERIFY 1", 0));
	tu_expect_script_err(SCRIPT_ERR_NUMEQUALVERIFY, run1("3 4 NUMEQUALVERIFY 1", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 ADD", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 2 WITHIN", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("NEGATE", 0));
}

/* ---- stack operations ------------------------------------------------------ */

static void test_stack_ops(void **state)
{
	(void)state;
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 3 ROT 1 EQUALVERIFY 3 EQUALVERIFY 2 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 2 SWAP 1 EQUALVERIFY 2 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 TUCK 2 EQUALVERIFY 1 EQUALVERIFY 2 EQUAL", 0));
	tu_expect_script_err(
	    SCRIPT_ERR_OK,
	    run1("1 2 3 4 2SWAP 2 EQUALVERIFY 1 EQUALVERIFY 4 EQUALVERIFY 3 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 3 4 5 6 2ROT 2 EQUALVERIFY 1 EQUALVERIFY 6 EQUALVERIFY "
	                          "5 EQUALVERIFY 4 EQUALVERIFY 3 EQUAL",
	                          0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 3 4 2OVER 2 EQUALVERIFY 1 EQUALVERIFY 4 EQUALVERIFY "
	                          "3 EQUALVERIFY 2 EQUALVERIFY 1 EQUAL",
	                          0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 3 3DUP DEPTH 6 EQUALVERIFY 3 EQUALVERIFY 2 EQUALVERIFY "
	                          "1 EQUALVERIFY 2DROP 1 EQUAL",
	                          0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 2DUP 2 EQUALVERIFY 1 EQUALVERIFY 2 EQUALVERIFY 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 2 NIP 2 EQUALVERIFY DEPTH 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 2 OVER 1 EQUALVERIFY 2 EQUALVERIFY 1 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("10 11 12 2 PICK 10 EQUALVERIFY DEPTH 3 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("10 11 12 2 ROLL 10 EQUALVERIFY 12 EQUALVERIFY 11 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("10 11 0 ROLL 11 EQUALVERIFY 10 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 1 PICK", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 -1 PICK", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 1 ROLL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 IFDUP DEPTH 1 EQUALVERIFY 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 IFDUP DEPTH 2 EQUALVERIFY EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("'abc' SIZE 3 EQUALVERIFY 'abc' EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 SIZE 0 EQUALVERIFY 0 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("DROP 1", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 2DROP 1", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 2 3DUP", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 2 3 4 5 2ROT", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 SWAP", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("1 EQUAL", 0));
	/* the altstack, and that it does not survive from scriptSig to scriptPubKey */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 TOALTSTACK 2 FROMALTSTACK 1 EQUALVERIFY 2 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_ALTSTACK_OPERATION, run1("FROMALTSTACK", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_ALTSTACK_OPERATION,
	                     run("1 TOALTSTACK", "FROMALTSTACK", 0));
	/* but the main stack does */
	tu_expect_script_err(SCRIPT_ERR_OK, run("1 2", "ADD 3 EQUAL", 0));
}

/* ---- control flow ----------------------------------------------------------- */

static void test_conditionals(void **state)
{
	(void)state;
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 IF 2 ELSE 3 ENDIF 2 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 IF 2 ELSE 3 ENDIF 3 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 IF 0 IF 5 ELSE 6 ENDIF ELSE 7 ENDIF 6 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0 IF 0 IF 5 ELSE 6 ENDIF ELSE 7 ENDIF 7 EQUAL", 0));
	/* ELSE toggles every time */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 IF 2 ELSE 3 ELSE 4 ENDIF 4 EQUALVERIFY 2 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 NOTIF 1 ENDIF", 0));
	tu_expect_script_err(SCRIPT_ERR_UNBALANCED_CONDITIONAL, run1("1 IF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_UNBALANCED_CONDITIONAL, run1("1 ENDIF", 0));
	tu_expect_script_err(SCRIPT_ERR_UNBALANCED_CONDITIONAL, run1("1 ELSE", 0));
	tu_expect_script_err(SCRIPT_ERR_UNBALANCED_CONDITIONAL, run1("IF 1 ENDIF", 0));
	tu_expect_script_err(SCRIPT_ERR_UNBALANCED_CONDITIONAL, run("1 IF", "1 ENDIF", 0));
	/* unexecuted branches: VERIF and disabled opcodes still fail */
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("0 IF VERIF ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("0 IF VERNOTIF ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_DISABLED_OPCODE, run1("0 IF CAT ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_DISABLED_OPCODE, run1("0 IF 2MUL ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 IF RESERVED VER 0xba 0xff RETURN ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 IF 0xba ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 RESERVED", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 VER", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 RESERVED1", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 0xff", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 CHECKSIGADD", 0));
	tu_expect_script_err(SCRIPT_ERR_VERIFY, run1("0 VERIFY 1", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 VERIFY 1", 0));
	tu_expect_script_err(SCRIPT_ERR_OP_RETURN, run1("1 RETURN", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 IF RETURN ENDIF 1", 0));
	tu_expect_script_err(SCRIPT_ERR_EQUALVERIFY, run1("1 2 EQUALVERIFY 1", 0));
	/* a truncated push is a bad opcode, executed or not */
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("1 0x4c", 0));
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run1("0 IF 0x05 0x0102 ENDIF", 0));
	/* disabled opcodes */
	const char *disabled[] = {"CAT", "SUBSTR", "LEFT", "RIGHT",  "INVERT",
	                          "AND", "OR",     "XOR",  "2MUL",   "2DIV",
	                          "MUL", "DIV",    "MOD",  "LSHIFT", "RSHIFT"};
	for (size_t i = 0; i < sizeof(disabled) / sizeof(disabled[0]); i++) {
		char s[64];
		snprintf(s, sizeof(s), "1 1 %s", disabled[i]);
		tu_expect_script_err(SCRIPT_ERR_DISABLED_OPCODE, run1(s, 0));
	}
}

static void test_nops(void **state)
{
	(void)state;
	const char *nops[] = {"NOP1", "NOP4", "NOP5", "NOP6", "NOP7", "NOP8", "NOP9", "NOP10"};
	for (size_t i = 0; i < sizeof(nops) / sizeof(nops[0]); i++) {
		char s[32];
		snprintf(s, sizeof(s), "1 %s", nops[i]);
		tu_expect_script_err(SCRIPT_ERR_OK, run1(s, 0));
		tu_expect_script_err(SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS,
		                     run1(s, SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS));
	}
	/* CLTV and CSV when not enabled are plain NOPs, not discouraged */
	tu_expect_script_err(
	    SCRIPT_ERR_OK, run1("1 CHECKLOCKTIMEVERIFY", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS));
	tu_expect_script_err(
	    SCRIPT_ERR_OK, run1("1 CHECKSEQUENCEVERIFY", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("1 NOP", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS));
}

/* ---- hashes ------------------------------------------------------------------ */

static void test_hashes(void **state)
{
	(void)state;
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0 SHA256 0x20 0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b"
	                          "934ca495991b7852b855 EQUAL",
	                          0));
	tu_expect_script_err(
	    SCRIPT_ERR_OK,
	    run1("0 RIPEMD160 0x14 0x9c1185a5c5e9fc54612808977ee8f548b2258d31 EQUAL", 0));
	tu_expect_script_err(
	    SCRIPT_ERR_OK, run1("0 SHA1 0x14 0xda39a3ee5e6b4b0d3255bfef95601890afd80709 EQUAL", 0));
	tu_expect_script_err(
	    SCRIPT_ERR_OK,
	    run1("0 HASH160 0x14 0xb472a266d0bd89c13706a4132ccfb16f7c3b9fcb EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0 HASH256 0x20 0x5df6e0e2761359d30a8275058e299fcc038153454"
	                          "5f55cf43e41983f5d4c9456 EQUAL",
	                          0));
	/* a hash of a hash: computed values are inputs like any other */
	tu_expect_script_err(SCRIPT_ERR_OK, run1("'abc' SHA256 SHA256 'abc' HASH256 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("SHA256", 0));
}

/* ---- limits ------------------------------------------------------------------ */

static uint8_t *repeat_script(const char *prefix, const char *word, size_t n, const char *suffix,
                              size_t *len)
{
	size_t cap = strlen(prefix) + n * (strlen(word) + 1) + strlen(suffix) + 2;
	char *s = malloc(cap);
	size_t o = (size_t)sprintf(s, "%s ", prefix);
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "%s ", word);
	sprintf(s + o, "%s", suffix);
	uint8_t *out = parse_asm(s, len);
	free(s);
	return out;
}

static int run_bytes(const uint8_t *spk, size_t len, uint32_t flags)
{
	return verify_raw(NULL, 0, spk, len, NULL, NULL, 0, flags, &DEFAULT_TX);
}

static void test_limits(void **state)
{
	(void)state;
	size_t len;
	uint8_t *s;

	/* 520-byte elements: pushes, even unexecuted */
	uint8_t push[4 + 521 + 8];
	push[0] = SCRIPT_OP_PUSHDATA2;
	push[1] = 520 & 0xff;
	push[2] = 520 >> 8;
	memset(push + 3, 1, 521);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(push, 3 + 520, 0));
	push[1] = 521 & 0xff;
	push[2] = 521 >> 8;
	tu_expect_script_err(SCRIPT_ERR_PUSH_SIZE, run_bytes(push, 3 + 521, 0));
	uint8_t hidden[2 + 3 + 521 + 2];
	hidden[0] = SCRIPT_OP_0;
	hidden[1] = SCRIPT_OP_IF;
	memcpy(hidden + 2, push, 3 + 521);
	hidden[2 + 3 + 521] = SCRIPT_OP_ENDIF;
	hidden[2 + 3 + 521 + 1] = SCRIPT_OP_1;
	tu_expect_script_err(SCRIPT_ERR_PUSH_SIZE, run_bytes(hidden, sizeof(hidden), 0));

	/* 10,000-byte scripts: 131 pushes of 75 bytes and 44 OP_1s */
	uint8_t *big = malloc(10001);
	size_t o = 0;
	for (int i = 0; i < 131; i++) {
		big[o++] = 75;
		memset(big + o, 7, 75);
		o += 75;
	}
	while (o < 10000)
		big[o++] = SCRIPT_OP_1;
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(big, 10000, 0));
	big[10000] = SCRIPT_OP_1;
	tu_expect_script_err(SCRIPT_ERR_SCRIPT_SIZE, run_bytes(big, 10001, 0));
	free(big);

	/* 201 non-push opcodes; CHECKMULTISIG adds its key count */
	s = repeat_script("1", "NOP", 201, "", &len);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("1", "NOP", 202, "", &len);
	tu_expect_script_err(SCRIPT_ERR_OP_COUNT, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("", "NOP", 180,
	                  "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 20 CHECKMULTISIG", &len);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(s, len, SCRIPT_VERIFY_NULLDUMMY));
	free(s);
	s = repeat_script("", "NOP", 181,
	                  "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 20 CHECKMULTISIG", &len);
	tu_expect_script_err(SCRIPT_ERR_OP_COUNT, run_bytes(s, len, 0));
	free(s);
	/* pushes, OP_1..16 and OP_RESERVED do not count */
	s = repeat_script("0 IF", "RESERVED", 300, "ENDIF 1", &len);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(s, len, 0));
	free(s);

	/* 1,000 items, stack and altstack together */
	s = repeat_script("", "1", 1000, "", &len);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("", "1", 1001, "", &len);
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("", "1", 999, "TOALTSTACK 1 1", &len);
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("", "1", 998, "TOALTSTACK 1 1", &len);
	tu_expect_script_err(SCRIPT_ERR_OK, run_bytes(s, len, 0));
	free(s);
	s = repeat_script("", "1", 998, "3DUP", &len);
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_bytes(s, len, 0));
	free(s);

	/* CHECKMULTISIG counts */
	tu_expect_script_err(SCRIPT_ERR_PUBKEY_COUNT, run1("0 0 21 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_PUBKEY_COUNT, run1("0 0 -1 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_SIG_COUNT, run1("0 0 0 2 0 1 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_SIG_COUNT, run1("0 0 -1 0 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("0 1 0 1 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION, run1("CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0 0 0 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_CHECKMULTISIGVERIFY,
	                     run1("0 0 1 0 1 CHECKMULTISIGVERIFY 1", 0));
	/* the dummy */
	tu_expect_script_err(SCRIPT_ERR_OK, run1("1 0 0 CHECKMULTISIG", 0));
	tu_expect_script_err(SCRIPT_ERR_SIG_NULLDUMMY,
	                     run1("1 0 0 CHECKMULTISIG", SCRIPT_VERIFY_NULLDUMMY));
}

/* ---- flags on whole spends ------------------------------------------------------ */

static void test_spend_flags(void **state)
{
	(void)state;
	const uint32_t sw = SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS;
	tu_expect_script_err(SCRIPT_ERR_OK, run1("0x01 0x05 5 EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_MINIMALDATA,
	                     run1("0x01 0x05 5 EQUAL", SCRIPT_VERIFY_MINIMALDATA));
	tu_expect_script_err(SCRIPT_ERR_MINIMALDATA,
	                     run1("0x4c 0x01 0x07", SCRIPT_VERIFY_MINIMALDATA));
	/* unexecuted pushes are not checked */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run1("0 IF 0x01 0x05 ENDIF 1", SCRIPT_VERIFY_MINIMALDATA));
	tu_expect_script_err(SCRIPT_ERR_OK, run("1", "1", sw));
	tu_expect_script_err(SCRIPT_ERR_CLEANSTACK, run("1", "1", sw | SCRIPT_VERIFY_CLEANSTACK));
	tu_expect_script_err(SCRIPT_ERR_OK, run("1 DUP", "EQUAL", 0));
	tu_expect_script_err(SCRIPT_ERR_SIG_PUSHONLY,
	                     run("1 DUP", "EQUAL", SCRIPT_VERIFY_SIGPUSHONLY));
	/* OP_RESERVED counts as a push for IsPushOnly (and fails when run) */
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE,
	                     run("RESERVED", "1", SCRIPT_VERIFY_SIGPUSHONLY));
	/* P2SH: redeem script "1" (0x51), its HASH160 */
	uint8_t redeem = SCRIPT_OP_1, h[20];
	char spk[128], hex[41];
	proto_hash160(&redeem, 1, h);
	proto_hex_encode(h, 20, hex);
	snprintf(spk, sizeof(spk), "HASH160 0x14 0x%s EQUAL", hex);
	tu_expect_script_err(SCRIPT_ERR_OK, run("0x01 0x51", spk, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_SIG_PUSHONLY,
	                     run("1 DROP 0x01 0x51", spk, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_OK, run("1 DROP 0x01 0x51", spk, 0));
	/* redeem script that leaves false */
	redeem = SCRIPT_OP_0;
	proto_hash160(&redeem, 1, h);
	proto_hex_encode(h, 20, hex);
	snprintf(spk, sizeof(spk), "HASH160 0x14 0x%s EQUAL", hex);
	tu_expect_script_err(SCRIPT_ERR_EVAL_FALSE, run("0x01 0x00", spk, SCRIPT_VERIFY_P2SH));
	tu_expect_script_err(SCRIPT_ERR_OK, run("0x01 0x00", spk, 0));
	/* a redeem script pushed by OP_n: the P2SH of script "\x01" */
	uint8_t one = 1;
	proto_hash160(&one, 1, h);
	proto_hex_encode(h, 20, hex);
	snprintf(spk, sizeof(spk), "HASH160 0x14 0x%s EQUAL", hex);
	tu_expect_script_err(SCRIPT_ERR_BAD_OPCODE, run("1", spk, SCRIPT_VERIFY_P2SH));
}

/* ---- lock times ------------------------------------------------------------------- */

static void test_locktime(void **state)
{
	(void)state;
	const uint32_t F = SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY;
	struct txparams p = {1, 100, 0};
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "100 CHECKLOCKTIMEVERIFY", F, &p));
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "99 CHECKLOCKTIMEVERIFY", F, &p));
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "101 CHECKLOCKTIMEVERIFY", F, &p));
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "101 CHECKLOCKTIMEVERIFY", 0, &p));
	tu_expect_script_err(SCRIPT_ERR_NEGATIVE_LOCKTIME,
	                     run_tx("", "-1 CHECKLOCKTIMEVERIFY", F, &p));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION,
	                     run_tx("", "CHECKLOCKTIMEVERIFY", F, &p));
	/* times and heights do not compare */
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "500000000 CHECKLOCKTIMEVERIFY", F, &p));
	/* 5-byte operands are allowed here, 6 are not */
	p.locktime = 0xffffffffu;
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "4294967295 CHECKLOCKTIMEVERIFY", F, &p));
	tu_expect_script_err(SCRIPT_ERR_UNKNOWN_ERROR,
	                     run_tx("", "0x06 0x000000000000 CHECKLOCKTIMEVERIFY", F, &p));
	/* a final input would disable the lock: refused */
	p.locktime = 100;
	p.sequence = 0xffffffffu;
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "100 CHECKLOCKTIMEVERIFY", F, &p));

	const uint32_t G = SCRIPT_VERIFY_CHECKSEQUENCEVERIFY;
	struct txparams q = {2, 0, 10};
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "10 CHECKSEQUENCEVERIFY", G, &q));
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "11 CHECKSEQUENCEVERIFY", G, &q));
	tu_expect_script_err(SCRIPT_ERR_NEGATIVE_LOCKTIME,
	                     run_tx("", "-1 CHECKSEQUENCEVERIFY", G, &q));
	/* the operand's disable bit makes it a NOP */
	tu_expect_script_err(SCRIPT_ERR_OK,
	                     run_tx("", "0x05 0x0000008000 CHECKSEQUENCEVERIFY", G, &q));
	/* blocks and time units do not compare */
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "4194304 CHECKSEQUENCEVERIFY", G, &q));
	q.version = 1;
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "10 CHECKSEQUENCEVERIFY", G, &q));
	/* Core compares the version unsigned: -1 is version 0xffffffff */
	q.version = -1;
	tu_expect_script_err(SCRIPT_ERR_OK, run_tx("", "10 CHECKSEQUENCEVERIFY", G, &q));
	q.version = 2;
	q.sequence = 10 | SCRIPT_SEQUENCE_LOCKTIME_DISABLE;
	tu_expect_script_err(SCRIPT_ERR_UNSATISFIED_LOCKTIME,
	                     run_tx("", "10 CHECKSEQUENCEVERIFY", G, &q));
}

/* ---- witness stacks far over the limit ------------------------------------------ */

/* P2WSH of `script` with `n` empty items (the top one replaced by top/top_len). */
static int run_big_witness(const char *script_asm, size_t n, const uint8_t *top, size_t top_len)
{
	size_t slen;
	uint8_t *script = parse_asm(script_asm, &slen);
	const uint8_t **wit = calloc(n + 1, sizeof(*wit));
	size_t *wl = calloc(n + 1, sizeof(*wl));
	static const uint8_t empty[1];
	for (size_t i = 0; i < n; i++) {
		wit[i] = empty;
		wl[i] = 0;
	}
	if (top) {
		wit[n - 1] = top;
		wl[n - 1] = top_len;
	}
	wit[n] = script;
	wl[n] = slen;
	uint8_t spk[34];
	spk[0] = SCRIPT_OP_0;
	spk[1] = 32;
	proto_sha256(script, slen, spk + 2);
	uint64_t a0 = base_alloc_count();
	int err = verify_raw(NULL, 0, spk, 34, wit, wl, n + 1,
	                     SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS, &DEFAULT_TX);
	/* however big the witness, the stack is not on the heap */
	assert_int_equal(base_alloc_count() - a0, 0);
	free(wit);
	free(wl);
	free(script);
	return err;
}

static void test_big_witness_stack(void **state)
{
	(void)state;
	uint8_t idx[2];
	/* exactly at the edge: dropping to 1,000 continues */
	tu_expect_script_err(SCRIPT_ERR_CLEANSTACK, run_big_witness("DROP", 1001, NULL, 0));
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_big_witness("DROP", 1002, NULL, 0));
	/* far over: only the first opcode runs */
	tu_expect_script_err(SCRIPT_ERR_CLEANSTACK, run_big_witness("", 5000, NULL, 0));
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_big_witness("DROP", 5000, NULL, 0));
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_big_witness("DEPTH", 5000, NULL, 0));
	tu_expect_script_err(SCRIPT_ERR_VERIFY, run_big_witness("VERIFY", 5000, NULL, 0));
	tu_expect_script_err(SCRIPT_ERR_INVALID_ALTSTACK_OPERATION,
	                     run_big_witness("FROMALTSTACK", 5000, NULL, 0));
	/* PICK deep into the uncounted part, and just past the bottom */
	idx[0] = 0xce; /* 4046 = 0x0fce */
	idx[1] = 0x0f;
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_big_witness("PICK", 5000, idx, 2));
	idx[0] = 0x87; /* 4999 = 0x1387: 4999 items remain after the pop */
	idx[1] = 0x13;
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION,
	                     run_big_witness("PICK", 5000, idx, 2));
	tu_expect_script_err(SCRIPT_ERR_INVALID_STACK_OPERATION,
	                     run_big_witness("ROLL", 5000, idx, 2));
	idx[0] = 0x86; /* 4998 */
	tu_expect_script_err(SCRIPT_ERR_STACK_SIZE, run_big_witness("ROLL", 5000, idx, 2));
	/* elements over 520 bytes anywhere in the witness */
	static uint8_t big[521];
	tu_expect_script_err(SCRIPT_ERR_PUSH_SIZE, run_big_witness("DROP", 5000, big, sizeof(big)));
}

/* ---- asm, names, sigops, CheckTransaction --------------------------------------- */

static void test_asm(void **state)
{
	(void)state;
	struct proto_writer w;
	size_t off;
	proto_writer_init(&w);
	assert_int_equal(
	    script_parse_asm("0 -1 1 16 17 -2 128 0x4c01ff 'ab' DUP OP_DUP NOP2", &w, &off),
	    SCRIPT_ASM_EWORD);
	assert_int_equal(off, 45);
	proto_writer_release(&w);
	proto_writer_init(&w);
	assert_int_equal(script_parse_asm("  0 -1 1 16 17 -2 128\t0x4c01ff\n'ab' DUP OP_DUP "
	                                  "CHECKLOCKTIMEVERIFY RESERVED",
	                                  &w, NULL),
	                 0);
	tu_assert_bytes_equal(w.buf, w.len,
	                      "\x00\x4f\x51\x60\x01\x11\x01\x82\x02\x80\x00\x4c\x01\xff\x02"
	                      "ab\x76\x76\xb1\x50",
	                      21);
	proto_writer_release(&w);
	proto_writer_init(&w);
	assert_int_equal(script_parse_asm("4294967295 -4294967295", &w, NULL), 0);
	tu_assert_bytes_equal(w.buf, w.len, "\x05\xff\xff\xff\xff\x00\x05\xff\xff\xff\xff\x80", 12);
	proto_writer_release(&w);
	proto_writer_init(&w);
	assert_int_equal(script_parse_asm("4294967296", &w, NULL), SCRIPT_ASM_ERANGE);
	assert_int_equal(script_parse_asm("0x4", &w, NULL), SCRIPT_ASM_EWORD);
	assert_int_equal(script_parse_asm("0x", &w, NULL), SCRIPT_ASM_EWORD);
	assert_int_equal(script_parse_asm("OP_0", &w, NULL), SCRIPT_ASM_EWORD);
	assert_int_equal(script_parse_asm("99999999999999999999999", &w, NULL), SCRIPT_ASM_ERANGE);
	proto_writer_release(&w);
	/* a 300-byte string uses PUSHDATA2 */
	char s[310];
	s[0] = '\'';
	memset(s + 1, 'x', 300);
	s[301] = '\'';
	s[302] = 0;
	proto_writer_init(&w);
	assert_int_equal(script_parse_asm(s, &w, NULL), 0);
	assert_int_equal(w.len, 303);
	assert_int_equal(w.buf[0], SCRIPT_OP_PUSHDATA2);
	proto_writer_release(&w);
}

static void test_names(void **state)
{
	(void)state;
	uint32_t f;
	const char *bad = NULL;
	char buf[512];
	assert_int_equal(script_flags_parse("P2SH,WITNESS", &f, NULL), 0);
	assert_int_equal(f, SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS);
	assert_int_equal(script_flags_parse("", &f, NULL), 0);
	assert_int_equal(f, 0);
	assert_int_equal(script_flags_parse("NONE", &f, NULL), 0);
	assert_int_equal(f, 0);
	assert_int_equal(script_flags_parse("standard", &f, NULL), 0);
	assert_int_equal(f, SCRIPT_VERIFY_STANDARD);
	assert_int_equal(script_flags_parse("P2SH,BOGUS", &f, &bad), -1);
	assert_string_equal(bad, "BOGUS");
	script_flags_format(SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_TAPROOT, buf, sizeof(buf));
	assert_string_equal(buf, "P2SH,TAPROOT");
	for (int e = 0; e < SCRIPT_ERR__COUNT; e++) {
		assert_int_equal(script_error_from_name(script_error_name(e)), e);
		assert_non_null(script_error_string(e));
	}
	assert_string_equal(script_error_name(SCRIPT_ERR_SIG_NULLFAIL), "NULLFAIL");
	assert_string_equal(script_error_name(-SCRIPT_ERR_EVAL_FALSE), "EVAL_FALSE");
	assert_string_equal(script_error_name(1000), "UNKNOWN");
	assert_int_equal(script_error_from_name("NOPE"), -1);
	assert_string_equal(script_op_name(SCRIPT_OP_CHECKSIG), "OP_CHECKSIG");
	assert_string_equal(script_op_name(0xbb), "OP_UNKNOWN");
	for (uint32_t b = 0; b < 21; b++)
		assert_non_null(script_flag_name(1u << b));
	assert_null(script_flag_name(1u << 21));
}

static void test_inspection(void **state)
{
	(void)state;
	size_t len;
	uint8_t *s;
	s = parse_asm("CHECKSIG CHECKSIGVERIFY 3 CHECKMULTISIG CHECKMULTISIGVERIFY", &len);
	assert_int_equal(script_sigop_count(s, len, true), 1 + 1 + 3 + 20);
	assert_int_equal(script_sigop_count(s, len, false), 1 + 1 + 20 + 20);
	free(s);
	/* counting stops at a truncated push */
	s = parse_asm("CHECKSIG 0x4c", &len);
	assert_int_equal(script_sigop_count(s, len, true), 1);
	free(s);
	/* P2SH: the redeem script's sigops */
	uint8_t redeem[] = {SCRIPT_OP_2, SCRIPT_OP_CHECKMULTISIG, SCRIPT_OP_CHECKSIG};
	uint8_t sig[1 + sizeof(redeem)];
	uint8_t spk[23] = {SCRIPT_OP_HASH160, 20};
	spk[22] = SCRIPT_OP_EQUAL;
	sig[0] = sizeof(redeem);
	memcpy(sig + 1, redeem, sizeof(redeem));
	assert_true(script_is_p2sh(spk, 23));
	assert_int_equal(script_p2sh_sigop_count(spk, 23, sig, sizeof(sig)), 3);
	uint8_t notpush[] = {SCRIPT_OP_NOP};
	assert_int_equal(script_p2sh_sigop_count(spk, 23, notpush, 1), 0);

	int v;
	const uint8_t *prog;
	size_t plen;
	uint8_t wp[34] = {SCRIPT_OP_1, 32};
	assert_true(script_is_witness_program(wp, 34, &v, &prog, &plen));
	assert_int_equal(v, 1);
	assert_int_equal(plen, 32);
	wp[0] = SCRIPT_OP_1NEGATE;
	assert_false(script_is_witness_program(wp, 34, &v, &prog, &plen));
	assert_false(script_is_witness_program(wp, 3, NULL, NULL, NULL));

	/* Core's GetOp: a truncated push stops after what it could read */
	const uint8_t t1[] = {SCRIPT_OP_PUSHDATA2, 0x05};
	const uint8_t *pc = t1;
	uint8_t op;
	assert_false(script_get_op(&pc, t1 + 2, &op, NULL, NULL));
	assert_ptr_equal(pc, t1 + 1);
	const uint8_t t2[] = {0x05, 0x01};
	pc = t2;
	assert_false(script_get_op(&pc, t2 + 2, &op, NULL, NULL));
	assert_ptr_equal(pc, t2 + 1);
	assert_true(script_is_push_only((const uint8_t *)"\x00\x50\x60\x01\x07", 5));
	assert_false(script_is_push_only((const uint8_t *)"\x61", 1));
}

/* A transaction for CheckTransaction with n_in inputs and n_out outputs. */
struct ctx_tx {
	struct proto_tx tx;
	struct proto_txin vin[40];
	struct proto_txout vout[3];
	uint8_t blob[4];
};

static void ctx_init(struct ctx_tx *c, uint32_t n_in, uint32_t n_out)
{
	memset(c, 0, sizeof(*c));
	for (uint32_t i = 0; i < n_in; i++) {
		memset(c->vin[i].prevout.txid.b, 0x22, 32);
		c->vin[i].prevout.n = i;
	}
	for (uint32_t i = 0; i < n_out; i++)
		c->vout[i].value = 1000;
	c->tx.n_in = n_in;
	c->tx.n_out = n_out;
	c->tx.vin = c->vin;
	c->tx.vout = c->vout;
	c->tx.blob = c->blob;
}

static void test_check_transaction(void **state)
{
	(void)state;
	struct ctx_tx c;
	ctx_init(&c, 2, 2);
	assert_int_equal(script_check_transaction(&c.tx), 0);
	ctx_init(&c, 0, 1);
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_VIN_EMPTY);
	assert_string_equal(script_tx_reason(SCRIPT_TX_VIN_EMPTY), "bad-txns-vin-empty");
	ctx_init(&c, 1, 0);
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_VOUT_EMPTY);
	ctx_init(&c, 1, 2);
	c.vout[1].value = -1;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_VOUT_NEGATIVE);
	c.vout[1].value = PROTO_MAX_MONEY + 1;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_VOUT_TOOLARGE);
	c.vout[0].value = PROTO_MAX_MONEY;
	c.vout[1].value = 1;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_TXOUTTOTAL_TOOLARGE);
	assert_string_equal(script_tx_reason(SCRIPT_TX_TXOUTTOTAL_TOOLARGE),
	                    "bad-txns-txouttotal-toolarge");
	/* duplicates, both the pairwise and the sorted path */
	ctx_init(&c, 3, 1);
	c.vin[2].prevout = c.vin[0].prevout;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_INPUTS_DUPLICATE);
	ctx_init(&c, 40, 1);
	assert_int_equal(script_check_transaction(&c.tx), 0);
	c.vin[39].prevout = c.vin[17].prevout;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_INPUTS_DUPLICATE);
	base_alloc_fail_after(0);
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_ENOMEM);
	base_alloc_fail_after(-1);
	/* coinbase script length, null prevouts elsewhere */
	ctx_init(&c, 1, 1);
	memset(c.vin[0].prevout.txid.b, 0, 32);
	c.vin[0].prevout.n = 0xffffffffu;
	c.vin[0].script_len = 1;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_CB_LENGTH);
	c.vin[0].script_len = 2;
	assert_int_equal(script_check_transaction(&c.tx), 0);
	c.vin[0].script_len = 101;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_CB_LENGTH);
	ctx_init(&c, 2, 1);
	memset(c.vin[1].prevout.txid.b, 0, 32);
	c.vin[1].prevout.n = 0xffffffffu;
	assert_int_equal(script_check_transaction(&c.tx), SCRIPT_TX_PREVOUT_NULL);
	assert_string_equal(script_tx_reason(1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_stack_ops),
	    cmocka_unit_test(test_conditionals),
	    cmocka_unit_test(test_nops),
	    cmocka_unit_test(test_hashes),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_spend_flags),
	    cmocka_unit_test(test_locktime),
	    cmocka_unit_test(test_big_witness_stack),
	    cmocka_unit_test(test_asm),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_inspection),
	    cmocka_unit_test(test_check_transaction),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
