/*
 * tests/unit/test_script_tx_vectors.c: Bitcoin Core's tx_valid.json and
 * tx_invalid.json, run as Core's transaction_tests.cpp runs them.
 *
 * tx_valid lists the flags EXCLUDED: the transaction must pass with every
 * other flag, still pass with any flag (or random flags) removed, and fail
 * when any one excluded flag is put back (the list is maximal).
 * tx_invalid lists the flags to verify WITH: the transaction must fail with
 * them, still fail with any flag added, and pass with any one removed (the
 * list is minimal); BADTX means CheckTransaction rejects it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

#define MAX_PREVOUTS 64
/** Core's mapFlagNames has one entry per flag plus NONE. */
#define N_FLAG_BITS 21

struct prevout {
	struct proto_outpoint op;
	struct proto_writer spk;
	int64_t amount;
};

struct txcase {
	struct prevout prev[MAX_PREVOUTS];
	size_t n_prev;
	struct proto_tx tx;
	struct script_spent_output spent[MAX_PREVOUTS];
	struct script_precomputed pre;
	const char *text; /* for messages */
};

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint32_t rng_bits(unsigned bits)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32) & ((1u << bits) - 1);
}

/* Core's TrimFlags: drop flags whose prerequisites are missing. */
static uint32_t trim_flags(uint32_t f)
{
	if (!(f & SCRIPT_VERIFY_P2SH))
		f &= ~SCRIPT_VERIFY_WITNESS;
	if (!(f & SCRIPT_VERIFY_WITNESS))
		f &= ~SCRIPT_VERIFY_CLEANSTACK;
	return f;
}

/* Core's FillFlags: add the prerequisites of the flags present. */
static uint32_t fill_flags(uint32_t f)
{
	if (f & SCRIPT_VERIFY_CLEANSTACK)
		f |= SCRIPT_VERIFY_WITNESS;
	if (f & SCRIPT_VERIFY_WITNESS)
		f |= SCRIPT_VERIFY_P2SH;
	return f;
}

/* Each TrimFlags(flags minus one flag) that differs from flags, without repeats. */
static size_t exclude_individual(uint32_t flags, uint32_t out[N_FLAG_BITS])
{
	size_t n = 0;
	for (unsigned b = 0; b < N_FLAG_BITS; b++) {
		uint32_t f = trim_flags(flags & ~(1u << b));
		if (f == flags)
			continue;
		bool seen = false;
		for (size_t i = 0; i < n; i++)
			seen = seen || out[i] == f;
		if (!seen)
			out[n++] = f;
	}
	return n;
}

static void release_case(struct txcase *c)
{
	for (size_t i = 0; i < c->n_prev; i++)
		proto_writer_release(&c->prev[i].spk);
	proto_tx_release(&c->tx);
}

static int load_case(json_t *row, struct txcase *c)
{
	json_t *inputs = json_array_get(row, 0);
	const char *hex = json_string_value(json_array_get(row, 1));
	proto_tx_init(&c->tx);
	if (!hex || json_array_size(inputs) > MAX_PREVOUTS)
		return -1;
	for (size_t i = 0; i < json_array_size(inputs); i++) {
		json_t *in = json_array_get(inputs, i);
		struct prevout *p = &c->prev[c->n_prev++];
		proto_writer_init(&p->spk);
		if (json_array_size(in) < 3 || json_array_size(in) > 4)
			return -1;
		if (proto_hash_from_hex(json_string_value(json_array_get(in, 0)), &p->op.txid))
			return -1;
		p->op.n = (uint32_t)json_integer_value(json_array_get(in, 1));
		if (script_parse_asm(json_string_value(json_array_get(in, 2)), &p->spk, NULL))
			return -1;
		p->amount =
		    json_array_size(in) == 4 ? json_integer_value(json_array_get(in, 3)) : 0;
	}
	size_t len;
	uint8_t *raw = tu_unhex(hex, &len);
	size_t off = 0;
	int rc = proto_tx_decode_buf(raw, len, &c->tx, &off);
	free(raw);
	if (rc) {
		printf("cannot decode tx (%s at %zu): %s\n", proto_errname(rc), off, c->text);
		return -1;
	}
	for (uint32_t i = 0; i < c->tx.n_in; i++) {
		const struct prevout *found = NULL;
		for (size_t k = 0; k < c->n_prev && !found; k++) {
			if (proto_hash_eq(&c->prev[k].op.txid, &c->tx.vin[i].prevout.txid) &&
			    c->prev[k].op.n == c->tx.vin[i].prevout.n)
				found = &c->prev[k];
		}
		if (!found) {
			printf("input %u has no prevout: %s\n", i, c->text);
			return -1;
		}
		c->spent[i].amount = found->amount;
		c->spent[i].script = found->spk.buf;
		c->spent[i].script_len = (uint32_t)found->spk.len;
	}
	script_precompute(&c->pre, &c->tx, c->spent, false);
	return 0;
}

/* Core's CheckTxScripts: verify inputs in order, stopping at the first
 * failure; true when the verdict is the expected one. */
static bool check_scripts(const struct txcase *c, uint32_t flags, bool expect_valid, int *first_err)
{
	bool valid = true;
	*first_err = 0;
	for (uint32_t i = 0; i < c->tx.n_in && valid; i++) {
		int err;
		valid = script_verify_input(&c->tx, i, &c->spent[i], flags, &c->pre, &err) == 0;
		if (!valid)
			*first_err = err;
	}
	return valid == expect_valid;
}

static bool run_valid(const struct txcase *c, uint32_t excluded)
{
	int err;
	char buf[512];
	bool ok = true;
	int rc = script_check_transaction(&c->tx);
	if (rc) {
		printf("FAIL tx_valid: CheckTransaction: %s: %s\n", script_tx_reason(rc), c->text);
		return false;
	}
	if (~excluded != fill_flags(~excluded)) {
		printf("FAIL tx_valid: bad flag combination: %s\n", c->text);
		return false;
	}
	if (!check_scripts(c, ~excluded, true, &err)) {
		printf("FAIL tx_valid: %s: %s\n", script_error_name(err), c->text);
		return false;
	}
	for (unsigned b = 0; b < N_FLAG_BITS && ok; b++) {
		uint32_t f = trim_flags(~(excluded | (1u << b)));
		if (!check_scripts(c, f, true, &err)) {
			script_flags_format(1u << b, buf, sizeof(buf));
			printf("FAIL tx_valid with %s unset: %s: %s\n", buf, script_error_name(err),
			       c->text);
			ok = false;
		}
		f = trim_flags(~(excluded | rng_bits(N_FLAG_BITS + 1)));
		if (ok && !check_scripts(c, f, true, &err)) {
			printf("FAIL tx_valid with random flags %#x: %s: %s\n", f,
			       script_error_name(err), c->text);
			ok = false;
		}
	}
	uint32_t combos[N_FLAG_BITS];
	size_t n = exclude_individual(excluded, combos);
	for (size_t i = 0; i < n && ok; i++) {
		if (!check_scripts(c, ~combos[i], false, &err)) {
			printf("FAIL tx_valid: too many flags excluded (passes with %#x): %s\n",
			       ~combos[i] & SCRIPT_VERIFY_ALL, c->text);
			ok = false;
		}
	}
	return ok;
}

static bool run_invalid(const struct txcase *c, const char *flags_s)
{
	int err;
	bool ok = true;
	int rc = script_check_transaction(&c->tx);
	if (rc) {
		if (strcmp(flags_s, "BADTX") != 0) {
			printf("FAIL tx_invalid: CheckTransaction %s but flags are %s: %s\n",
			       script_tx_reason(rc), flags_s, c->text);
			return false;
		}
		return true;
	}
	if (strcmp(flags_s, "BADTX") == 0) {
		printf("FAIL tx_invalid: CheckTransaction passed a BADTX: %s\n", c->text);
		return false;
	}
	uint32_t flags;
	if (script_flags_parse(flags_s, &flags, NULL))
		fail_msg("unknown flags %s", flags_s);
	if (flags != fill_flags(flags)) {
		printf("FAIL tx_invalid: bad flag combination: %s\n", c->text);
		return false;
	}
	if (!check_scripts(c, flags, false, &err)) {
		printf("FAIL tx_invalid: passes: %s\n", c->text);
		return false;
	}
	for (unsigned b = 0; b < N_FLAG_BITS && ok; b++) {
		uint32_t f = fill_flags(flags | (1u << b));
		if (!check_scripts(c, f, false, &err)) {
			printf("FAIL tx_invalid: passes with flag bit %u added: %s\n", b, c->text);
			ok = false;
		}
		f = fill_flags(flags | rng_bits(N_FLAG_BITS + 1));
		if (ok && !check_scripts(c, f, false, &err)) {
			printf("FAIL tx_invalid: passes with random flags %#x: %s\n", f, c->text);
			ok = false;
		}
	}
	uint32_t combos[N_FLAG_BITS];
	size_t n = exclude_individual(flags, combos);
	for (size_t i = 0; i < n && ok; i++) {
		if (!check_scripts(c, combos[i], true, &err)) {
			printf("FAIL tx_invalid: too many flags (fails with %#x: %s): %s\n",
			       combos[i], script_error_name(err), c->text);
			ok = false;
		}
	}
	return ok;
}

static void run_file(const char *name, bool valid)
{
	json_error_t jerr;
	const char *path = tu_vector(name);
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("cannot load %s: %s (line %d)", path, jerr.text, jerr.line);
	size_t total = 0, passed = 0;
	for (size_t idx = 0; idx < json_array_size(root); idx++) {
		json_t *row = json_array_get(root, idx);
		if (!json_is_array(json_array_get(row, 0)))
			continue; /* comment */
		struct txcase *c = calloc(1, sizeof(*c));
		assert_non_null(c);
		char *text = json_dumps(row, JSON_COMPACT);
		const char *flags_s = json_string_value(json_array_get(row, 2));
		total++;
		c->text = text;
		if (load_case(row, c) == 0 && flags_s) {
			uint32_t excluded = 0;
			bool ok;
			if (valid) {
				if (script_flags_parse(flags_s, &excluded, NULL))
					fail_msg("unknown flags %s", flags_s);
				ok = run_valid(c, excluded);
			} else {
				ok = run_invalid(c, flags_s);
			}
			passed += ok;
		} else {
			printf("FAIL bad test case %zu: %s\n", idx, text);
		}
		release_case(c);
		free(c);
		free(text);
	}
	json_decref(root);
	printf("%s: %zu/%zu passed\n", valid ? "tx_valid" : "tx_invalid", passed, total);
	assert_true(total > 0);
	if (passed != total)
		fail_msg("%s: %zu of %zu cases failed", name, total - passed, total);
}

static void test_tx_valid(void **state)
{
	(void)state;
	run_file("bitcoin-core/tx_valid.json", true);
}

static void test_tx_invalid(void **state)
{
	(void)state;
	run_file("bitcoin-core/tx_invalid.json", false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tx_valid),
	    cmocka_unit_test(test_tx_invalid),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
