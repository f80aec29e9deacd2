/*
 * tests/unit/test_script_vectors.c: Bitcoin Core's script_tests.json.
 *
 * Each case is run as Core's script_tests.cpp does: a crediting
 * transaction pays scriptPubKey, a spending transaction spends it with
 * scriptSig and the witness, and VerifyScript must return exactly the
 * expected error. Like Core, a passing case must keep passing with flags
 * removed and a failing one keep failing with flags added (16 random
 * variations each, from a fixed seed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

/* Core's key0 (secret key 1): its x-only public key is G's x coordinate. */
static const char KEY0_XONLY[] = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";

#define MAX_WITNESS 64

struct vec_case {
	uint8_t *wit[MAX_WITNESS];
	size_t wit_len[MAX_WITNESS];
	size_t n_wit;
	int64_t amount;
	struct proto_writer sig, spk;
	uint32_t flags;
	int expect;
};

/* A one-input, one-output transaction built by hand, as Core's
 * BuildSpendingTransaction. */
struct spend {
	struct proto_tx tx;
	struct proto_txin vin;
	struct proto_txout vout;
	uint8_t *blob;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng_bits(unsigned bits)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32) & ((1u << bits) - 1);
}

static void parse_asm_or_fail(const char *text, struct proto_writer *w)
{
	size_t off = 0;
	int rc = script_parse_asm(text, w, &off);
	if (rc)
		fail_msg("cannot parse script '%s' at offset %zu: %d", text, off, rc);
}

/* Core's BuildCreditingTransaction, serialized, and its txid. */
static void credit_txid(const struct proto_writer *spk, int64_t amount, struct proto_hash *txid)
{
	struct proto_writer w;
	static const uint8_t zero[32];
	proto_writer_init(&w);
	proto_write_u32le(&w, 1);
	proto_write_compact(&w, 1);
	proto_write_bytes(&w, zero, 32);
	proto_write_u32le(&w, 0xffffffffu);
	proto_write_compact(&w, 2);
	proto_write_u8(&w, 0); /* CScriptNum(0) twice */
	proto_write_u8(&w, 0);
	proto_write_u32le(&w, 0xffffffffu);
	proto_write_compact(&w, 1);
	proto_write_u64le(&w, (uint64_t)amount);
	proto_write_varbytes(&w, spk->buf, spk->len);
	proto_write_u32le(&w, 0);
	assert_int_equal(w.err, 0);
	proto_sha256d(w.buf, w.len, txid->b);
	proto_writer_release(&w);
}

static void build_spend(struct spend *s, const struct vec_case *c)
{
	size_t blob_len = c->sig.len;
	for (size_t i = 0; i < c->n_wit; i++)
		blob_len += proto_compact_size(c->wit_len[i]) + c->wit_len[i];
	s->blob = malloc(blob_len + 1);
	assert_non_null(s->blob);
	struct proto_writer w;
	proto_writer_init_fixed(&w, s->blob, blob_len + 1);
	if (c->sig.len)
		proto_write_bytes(&w, c->sig.buf, c->sig.len);
	for (size_t i = 0; i < c->n_wit; i++)
		proto_write_varbytes(&w, c->wit[i], c->wit_len[i]);
	assert_int_equal(w.err, 0);

	memset(&s->tx, 0, sizeof(s->tx));
	memset(&s->vin, 0, sizeof(s->vin));
	memset(&s->vout, 0, sizeof(s->vout));
	credit_txid(&c->spk, c->amount, &s->vin.prevout.txid);
	s->vin.prevout.n = 0;
	s->vin.script_off = 0;
	s->vin.script_len = (uint32_t)c->sig.len;
	s->vin.sequence = 0xffffffffu;
	s->vin.wit_off = (uint32_t)c->sig.len;
	s->vin.wit_len = (uint32_t)(blob_len - c->sig.len);
	s->vin.wit_count = (uint32_t)c->n_wit;
	s->vout.value = c->amount;
	s->vout.script_off = (uint32_t)blob_len;
	s->vout.script_len = 0;
	s->tx.version = 1;
	s->tx.locktime = 0;
	s->tx.n_in = 1;
	s->tx.n_out = 1;
	s->tx.vin = &s->vin;
	s->tx.vout = &s->vout;
	s->tx.blob = s->blob;
	s->tx.blob_len = (uint32_t)blob_len;
	s->tx.has_witness = c->n_wit > 0;
}

static int run(const struct vec_case *c, const struct spend *s, uint32_t flags, bool precompute)
{
	int err = -1;
	struct script_precomputed pre;
	struct script_spent_output out = {c->amount, c->spk.buf, (uint32_t)c->spk.len};
	if (precompute)
		script_precompute(&pre, &s->tx, &out, false);
	int rc = script_verify(c->sig.buf, c->sig.len, c->spk.buf, c->spk.len, &s->tx, 0, c->amount,
	                       flags, precompute ? &pre : NULL, &err);
	assert_true(rc == -err);
	return err;
}

static void release_case(struct vec_case *c)
{
	for (size_t i = 0; i < c->n_wit; i++)
		free(c->wit[i]);
	proto_writer_release(&c->sig);
	proto_writer_release(&c->spk);
}

/* Fill the witness from the leading array; returns 0 or -1 if malformed. */
static int load_witness(json_t *arr, struct vec_case *c, uint8_t control[33], bool *have_control)
{
	size_t n = json_array_size(arr);
	if (n == 0 || n - 1 > MAX_WITNESS)
		return -1;
	for (size_t i = 0; i + 1 < n; i++) {
		const char *e = json_string_value(json_array_get(arr, i));
		if (!e)
			return -1;
		if (strncmp(e, "#SCRIPT#", 8) == 0) {
			struct proto_writer w;
			proto_writer_init(&w);
			parse_asm_or_fail(e + 8, &w);
			c->wit[c->n_wit] = malloc(w.len + 1);
			memcpy(c->wit[c->n_wit], w.buf, w.len);
			c->wit_len[c->n_wit++] = w.len;
			proto_writer_release(&w);
		} else if (strcmp(e, "#CONTROLBLOCK#") == 0) {
			/* one leaf at depth 0 under key0: the root is the leaf hash */
			uint8_t internal[32], root[32], q[32];
			size_t klen;
			int parity;
			uint8_t *k = tu_unhex(KEY0_XONLY, &klen);
			memcpy(internal, k, 32);
			free(k);
			assert_true(c->n_wit > 0);
			script_tapleaf_hash(SCRIPT_TAPROOT_LEAF_TAPSCRIPT, c->wit[c->n_wit - 1],
			                    c->wit_len[c->n_wit - 1], root);
			assert_int_equal(script_taproot_output_key(internal, root, q, &parity), 0);
			control[0] = (uint8_t)(SCRIPT_TAPROOT_LEAF_TAPSCRIPT | parity);
			memcpy(control + 1, internal, 32);
			c->wit[c->n_wit] = malloc(33);
			memcpy(c->wit[c->n_wit], control, 33);
			c->wit_len[c->n_wit++] = 33;
			/* the output key goes into #TAPROOTOUTPUT# */
			memcpy(control + 1, q, 32);
			*have_control = true;
		} else {
			c->wit[c->n_wit] = tu_unhex(e, &c->wit_len[c->n_wit]);
			c->n_wit++;
		}
	}
	json_t *amt = json_array_get(arr, n - 1);
	if (!json_is_number(amt))
		return -1;
	c->amount = (int64_t)llround(json_number_value(amt) * 1e8);
	return 0;
}

static void test_script_tests_json(void **state)
{
	(void)state;
	json_error_t jerr;
	const char *path = tu_vector("bitcoin-core/script_tests.json");
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("cannot load %s: %s (line %d)", path, jerr.text, jerr.line);
	size_t total = 0, passed = 0, variations_failed = 0;

	for (size_t idx = 0; idx < json_array_size(root); idx++) {
		json_t *row = json_array_get(root, idx);
		struct vec_case c;
		uint8_t control[33];
		bool have_control = false;
		size_t pos = 0;
		memset(&c, 0, sizeof(c));
		proto_writer_init(&c.sig);
		proto_writer_init(&c.spk);

		if (json_array_size(row) > 0 && json_is_array(json_array_get(row, 0))) {
			if (load_witness(json_array_get(row, 0), &c, control, &have_control))
				fail_msg("bad witness in case %zu", idx);
			pos++;
		}
		if (json_array_size(row) < 4 + pos) {
			release_case(&c);
			continue; /* a comment */
		}
		const char *sig_s = json_string_value(json_array_get(row, pos));
		const char *spk_s = json_string_value(json_array_get(row, pos + 1));
		const char *flags_s = json_string_value(json_array_get(row, pos + 2));
		const char *err_s = json_string_value(json_array_get(row, pos + 3));
		assert_non_null(sig_s);
		assert_non_null(spk_s);
		assert_non_null(flags_s);
		assert_non_null(err_s);
		total++;

		parse_asm_or_fail(sig_s, &c.sig);
		if (strcmp(spk_s, "0x51 0x20 #TAPROOTOUTPUT#") == 0) {
			assert_true(have_control);
			proto_write_u8(&c.spk, SCRIPT_OP_1);
			proto_write_u8(&c.spk, 32);
			proto_write_bytes(&c.spk, control + 1, 32);
		} else {
			parse_asm_or_fail(spk_s, &c.spk);
		}
		const char *bad = NULL;
		if (script_flags_parse(flags_s, &c.flags, &bad))
			fail_msg("case %zu: unknown flag in '%s'", idx, flags_s);
		c.expect = script_error_from_name(err_s);
		if (c.expect < 0)
			fail_msg("case %zu: unknown error name %s", idx, err_s);
		if (c.flags & SCRIPT_VERIFY_CLEANSTACK)
			c.flags |= SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS;

		struct spend s;
		build_spend(&s, &c);
		int got = run(&c, &s, c.flags, false);
		int got_pre = run(&c, &s, c.flags, true);
		bool ok = got == c.expect && got_pre == c.expect;
		if (!ok) {
			printf("FAIL case %zu: [\"%s\", \"%s\", \"%s\"] expected %s, got %s (with "
			       "precomputed: %s)\n",
			       idx, sig_s, spk_s, flags_s, err_s, script_error_name(got),
			       script_error_name(got_pre));
		}

		/* Removing flags must not break a passing case; adding flags
		 * must not fix a failing one. */
		bool expect_ok = c.expect == SCRIPT_ERR_OK;
		for (int v = 0; v < 16 && ok; v++) {
			uint32_t extra = rng_bits(16);
			uint32_t f = expect_ok ? (c.flags & ~extra) : (c.flags | extra);
			if ((f & SCRIPT_VERIFY_CLEANSTACK) &&
			    (~f & (SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS)))
				continue;
			if ((f & SCRIPT_VERIFY_WITNESS) && !(f & SCRIPT_VERIFY_P2SH))
				continue;
			int e = run(&c, &s, f, false);
			if ((e == SCRIPT_ERR_OK) != expect_ok) {
				printf("FAIL case %zu with flags %#x: got %s\n", idx, f,
				       script_error_name(e));
				ok = false;
				variations_failed++;
			}
		}
		if (ok)
			passed++;
		free(s.blob);
		release_case(&c);
	}
	json_decref(root);
	printf("script_tests: %zu/%zu passed\n", passed, total);
	assert_true(total >= 1211);
	if (passed != total)
		fail_msg("script_tests: %zu of %zu cases failed (%zu on flag variations)",
		         total - passed, total, variations_failed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_script_tests_json),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
