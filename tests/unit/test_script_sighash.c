/*
 * tests/unit/test_script_sighash.c: signature hashes against published
 * vectors: Bitcoin Core's sighash.json (legacy) and BIP341's wallet vectors
 * (output key construction, every intermediary hash, SigMsg and sighash of
 * the key path spends, and the fully signed transaction verifying).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tests/unit/testutil.h"

static json_t *load_json(const char *rel)
{
	json_error_t jerr;
	const char *path = tu_vector(rel);
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("cannot load %s: %s (line %d)", path, jerr.text, jerr.line);
	return root;
}

static void decode_tx_hex(const char *hex, struct proto_tx *tx)
{
	size_t len, off = 0;
	uint8_t *raw = tu_unhex(hex, &len);
	proto_tx_init(tx);
	int rc = proto_tx_decode_buf(raw, len, tx, &off);
	free(raw);
	if (rc)
		fail_msg("cannot decode tx: %s at %zu", proto_errname(rc), off);
}

/* Compare 32 bytes with the hex string want (natural byte order). */
static bool hex_eq(const uint8_t b[32], const char *want)
{
	char got[65];
	proto_hex_encode(b, 32, got);
	return want && strcmp(got, want) == 0;
}

static void expect_hex(const char *what, const uint8_t *b, size_t len, const char *want)
{
	char *got = tu_hex(b, len);
	if (!want || strcmp(got, want) != 0)
		fail_msg("%s: got %s, want %s", what, got, want ? want : "(null)");
	free(got);
}

/* ---- sighash.json ------------------------------------------------------ */

static void test_legacy_sighash_json(void **state)
{
	(void)state;
	json_t *root = load_json("bitcoin-core/sighash.json");
	size_t total = 0, passed = 0;
	for (size_t i = 0; i < json_array_size(root); i++) {
		json_t *row = json_array_get(root, i);
		if (json_array_size(row) != 5)
			continue;
		const char *tx_hex = json_string_value(json_array_get(row, 0));
		const char *script_hex = json_string_value(json_array_get(row, 1));
		uint32_t in = (uint32_t)json_integer_value(json_array_get(row, 2));
		uint32_t hash_type = (uint32_t)(int32_t)json_integer_value(json_array_get(row, 3));
		const char *want = json_string_value(json_array_get(row, 4));
		struct proto_tx tx;
		size_t slen;
		uint8_t out[32];
		struct proto_hash h;
		char got[65];

		total++;
		decode_tx_hex(tx_hex, &tx);
		uint8_t *script = tu_unhex(script_hex, &slen);
		int rc = script_check_transaction(&tx);
		if (rc)
			printf("case %zu: CheckTransaction: %s\n", i, script_tx_reason(rc));
		script_sighash_legacy(&tx, in, script, slen, hash_type, out);
		memcpy(h.b, out, 32);
		proto_hash_to_hex(&h, got);
		if (rc == 0 && strcmp(got, want) == 0)
			passed++;
		else
			printf("FAIL sighash case %zu: got %s want %s\n", i, got, want);
		free(script);
		proto_tx_release(&tx);
	}
	json_decref(root);
	printf("sighash: %zu/%zu passed\n", passed, total);
	assert_int_equal(total, 500);
	if (passed != total)
		fail_msg("sighash: %zu of %zu failed", total - passed, total);
}

/* ---- BIP341: scriptPubKey construction --------------------------------- */

#define MAX_LEAVES 16
#define MAX_DEPTH  16

struct leaf_info {
	int id;
	uint8_t version;
	uint8_t hash[32];
	uint8_t path[MAX_DEPTH][32]; /* siblings, leaf to root */
	size_t depth;
};

struct tree {
	struct leaf_info leaves[MAX_LEAVES];
	size_t n;
};

/* Hash a (sub)tree; every leaf below gets the sibling hash appended to its path. */
static void tree_hash(json_t *node, struct tree *t, uint8_t out[32])
{
	if (json_is_object(node)) {
		struct leaf_info *l = &t->leaves[t->n++];
		size_t len;
		assert_true(t->n <= MAX_LEAVES);
		l->id = (int)json_integer_value(json_object_get(node, "id"));
		l->version = (uint8_t)json_integer_value(json_object_get(node, "leafVersion"));
		uint8_t *script =
		    tu_unhex(json_string_value(json_object_get(node, "script")), &len);
		script_tapleaf_hash(l->version, script, len, l->hash);
		free(script);
		l->depth = 0;
		memcpy(out, l->hash, 32);
		return;
	}
	assert_int_equal(json_array_size(node), 2);
	size_t first = t->n;
	uint8_t a[32], b[32];
	tree_hash(json_array_get(node, 0), t, a);
	size_t mid = t->n;
	tree_hash(json_array_get(node, 1), t, b);
	for (size_t i = first; i < t->n; i++) {
		struct leaf_info *l = &t->leaves[i];
		assert_true(l->depth < MAX_DEPTH);
		memcpy(l->path[l->depth++], i < mid ? b : a, 32);
	}
	script_tapbranch_hash(a, b, out);
}

static void test_bip341_script_pubkey(void **state)
{
	(void)state;
	json_t *root = load_json("bitcoin-core/bip341_wallet_vectors.json");
	json_t *cases = json_object_get(root, "scriptPubKey");
	size_t n = json_array_size(cases);
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_array_get(cases, i);
		json_t *given = json_object_get(c, "given");
		json_t *inter = json_object_get(c, "intermediary");
		json_t *expected = json_object_get(c, "expected");
		json_t *tree_j = json_object_get(given, "scriptTree");
		struct tree t = {0};
		uint8_t root_hash[32], tweak[32], q[32], spk[34];
		const uint8_t *mr = NULL;
		int parity;
		size_t klen;
		uint8_t *internal =
		    tu_unhex(json_string_value(json_object_get(given, "internalPubkey")), &klen);
		assert_int_equal(klen, 32);

		if (!json_is_null(tree_j)) {
			tree_hash(tree_j, &t, root_hash);
			mr = root_hash;
			expect_hex("merkleRoot", root_hash, 32,
			           json_string_value(json_object_get(inter, "merkleRoot")));
			json_t *lh = json_object_get(inter, "leafHashes");
			for (size_t k = 0; k < t.n; k++) {
				const char *want =
				    json_string_value(json_array_get(lh, (size_t)t.leaves[k].id));
				expect_hex("leafHash", t.leaves[k].hash, 32, want);
			}
		}
		script_taproot_tweak(internal, mr, tweak);
		expect_hex("tweak", tweak, 32, json_string_value(json_object_get(inter, "tweak")));
		assert_int_equal(script_taproot_output_key(internal, mr, q, &parity), 0);
		expect_hex("tweakedPubkey", q, 32,
		           json_string_value(json_object_get(inter, "tweakedPubkey")));
		spk[0] = SCRIPT_OP_1;
		spk[1] = 32;
		memcpy(spk + 2, q, 32);
		expect_hex("scriptPubKey", spk, 34,
		           json_string_value(json_object_get(expected, "scriptPubKey")));

		json_t *cbs = json_object_get(expected, "scriptPathControlBlocks");
		for (size_t k = 0; k < t.n; k++) {
			const struct leaf_info *l = &t.leaves[k];
			uint8_t cb[33 + 32 * MAX_DEPTH];
			cb[0] = (uint8_t)(l->version | parity);
			memcpy(cb + 1, internal, 32);
			for (size_t d = 0; d < l->depth; d++)
				memcpy(cb + 33 + 32 * d, l->path[d], 32);
			expect_hex("controlBlock", cb, 33 + 32 * l->depth,
			           json_string_value(json_array_get(cbs, (size_t)l->id)));
		}
		free(internal);
	}
	json_decref(root);
	printf("bip341 scriptPubKey: %zu/%zu passed\n", n, n);
	assert_true(n >= 7);
}

/* ---- BIP341: key path spending ------------------------------------------ */

struct utxos {
	struct script_spent_output *v;
	uint8_t **scripts;
	size_t n;
};

static void load_utxos(json_t *arr, struct utxos *u)
{
	u->n = json_array_size(arr);
	u->v = calloc(u->n, sizeof(*u->v));
	u->scripts = calloc(u->n, sizeof(*u->scripts));
	for (size_t i = 0; i < u->n; i++) {
		json_t *e = json_array_get(arr, i);
		size_t len;
		u->scripts[i] =
		    tu_unhex(json_string_value(json_object_get(e, "scriptPubKey")), &len);
		u->v[i].script = u->scripts[i];
		u->v[i].script_len = (uint32_t)len;
		u->v[i].amount = json_integer_value(json_object_get(e, "amountSats"));
	}
}

static void free_utxos(struct utxos *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->scripts[i]);
	free(u->scripts);
	free(u->v);
}

static void check_input(secp256k1_context *sctx, const struct proto_tx *tx,
                        const struct script_precomputed *pre, const struct utxos *u, json_t *in)
{
	json_t *given = json_object_get(in, "given");
	json_t *inter = json_object_get(in, "intermediary");
	uint32_t idx = (uint32_t)json_integer_value(json_object_get(given, "txinIndex"));
	uint8_t hash_type = (uint8_t)json_integer_value(json_object_get(given, "hashType"));
	const char *mr_hex = json_string_value(json_object_get(given, "merkleRoot"));
	size_t len;
	uint8_t *priv =
	    tu_unhex(json_string_value(json_object_get(given, "internalPrivkey")), &len);
	uint8_t *mr = mr_hex ? tu_unhex(mr_hex, &len) : NULL;
	secp256k1_keypair kp;
	secp256k1_xonly_pubkey xpk;
	uint8_t internal[32], tweak[32], tweaked_priv[32], sighash[32], sig[64];

	assert_int_equal(secp256k1_keypair_create(sctx, &kp, priv), 1);
	assert_int_equal(secp256k1_keypair_xonly_pub(sctx, &xpk, NULL, &kp), 1);
	assert_int_equal(secp256k1_xonly_pubkey_serialize(sctx, internal, &xpk), 1);
	expect_hex("internalPubkey", internal, 32,
	           json_string_value(json_object_get(inter, "internalPubkey")));
	script_taproot_tweak(internal, mr, tweak);
	expect_hex("tweak", tweak, 32, json_string_value(json_object_get(inter, "tweak")));
	assert_int_equal(secp256k1_keypair_xonly_tweak_add(sctx, &kp, tweak), 1);
	assert_int_equal(secp256k1_keypair_sec(sctx, tweaked_priv, &kp), 1);
	expect_hex("tweakedPrivkey", tweaked_priv, 32,
	           json_string_value(json_object_get(inter, "tweakedPrivkey")));

	struct script_tap_exec ex = {0};
	ex.codesep_pos = UINT32_MAX;
	struct proto_writer w;
	proto_writer_init(&w);
	assert_int_equal(script_sighash_taproot_msg(tx, idx, hash_type, pre, &u->v[idx], &ex, &w),
	                 0);
	expect_hex("sigMsg", w.buf, w.len, json_string_value(json_object_get(inter, "sigMsg")));
	proto_writer_release(&w);
	assert_int_equal(script_sighash_taproot(tx, idx, hash_type, pre, &u->v[idx], &ex, sighash),
	                 0);
	expect_hex("sigHash", sighash, 32, json_string_value(json_object_get(inter, "sigHash")));

	/* BIP341's vectors sign with an all-zero auxiliary random value. */
	static const uint8_t aux[32];
	assert_int_equal(secp256k1_schnorrsig_sign32(sctx, sig, sighash, &kp, aux), 1);
	json_t *wit = json_object_get(json_object_get(in, "expected"), "witness");
	uint8_t full[65];
	memcpy(full, sig, 64);
	full[64] = hash_type;
	expect_hex("witness signature", full, hash_type ? 65 : 64,
	           json_string_value(json_array_get(wit, 0)));
	free(priv);
	free(mr);
}

static void test_bip341_key_path(void **state)
{
	(void)state;
	json_t *root = load_json("bitcoin-core/bip341_wallet_vectors.json");
	json_t *kps = json_object_get(root, "keyPathSpending");
	secp256k1_context *sctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	size_t n_inputs = 0, n_verified = 0;
	assert_non_null(sctx);
	for (size_t i = 0; i < json_array_size(kps); i++) {
		json_t *c = json_array_get(kps, i);
		json_t *given = json_object_get(c, "given");
		json_t *inter = json_object_get(c, "intermediary");
		struct proto_tx tx, signed_tx;
		struct utxos u;
		struct script_precomputed pre;

		decode_tx_hex(json_string_value(json_object_get(given, "rawUnsignedTx")), &tx);
		load_utxos(json_object_get(given, "utxosSpent"), &u);
		assert_int_equal(u.n, tx.n_in);
		/* unsigned: no witness yet, so force the BIP341 hashes */
		script_precompute(&pre, &tx, u.v, true);
		assert_true(pre.bip341_ready);
		assert_true(hex_eq(pre.sha_amounts,
		                   json_string_value(json_object_get(inter, "hashAmounts"))));
		assert_true(hex_eq(pre.sha_outputs,
		                   json_string_value(json_object_get(inter, "hashOutputs"))));
		assert_true(hex_eq(pre.sha_prevouts,
		                   json_string_value(json_object_get(inter, "hashPrevouts"))));
		assert_true(hex_eq(pre.sha_scriptpubkeys,
		                   json_string_value(json_object_get(inter, "hashScriptPubkeys"))));
		assert_true(hex_eq(pre.sha_sequences,
		                   json_string_value(json_object_get(inter, "hashSequences"))));

		json_t *ins = json_object_get(c, "inputSpending");
		for (size_t k = 0; k < json_array_size(ins); k++) {
			check_input(sctx, &tx, &pre, &u, json_array_get(ins, k));
			n_inputs++;
		}

		/* Every input of the fully signed transaction verifies, under
		 * consensus and standard rules alike. */
		json_t *aux = json_object_get(c, "auxiliary");
		decode_tx_hex(json_string_value(json_object_get(aux, "fullySignedTx")), &signed_tx);
		struct script_precomputed spre;
		script_precompute(&spre, &signed_tx, u.v, false);
		for (uint32_t k = 0; k < signed_tx.n_in; k++) {
			int err;
			int rc = script_verify_input(&signed_tx, k, &u.v[k], SCRIPT_VERIFY_STANDARD,
			                             &spre, &err);
			if (rc)
				fail_msg("signed input %u: %s", k, script_error_name(err));
			rc = script_verify_input(&signed_tx, k, &u.v[k], SCRIPT_VERIFY_CONSENSUS,
			                         &spre, &err);
			assert_int_equal(rc, 0);
			/* and the wrong amount breaks every segwit signature */
			struct script_spent_output wrong = u.v[k];
			wrong.amount += 1;
			rc = script_verify_input(&signed_tx, k, &wrong, SCRIPT_VERIFY_CONSENSUS,
			                         &spre, &err);
			if (signed_tx.vin[k].wit_count == 0)
				assert_int_equal(rc, 0);
			n_verified++;
		}
		proto_tx_release(&signed_tx);
		free_utxos(&u);
		proto_tx_release(&tx);
	}
	secp256k1_context_destroy(sctx);
	json_decref(root);
	printf("bip341 keyPathSpending: %zu/%zu inputs matched, %zu signed inputs verified\n",
	       n_inputs, n_inputs, n_verified);
	assert_true(n_inputs >= 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_legacy_sighash_json),
	    cmocka_unit_test(test_bip341_script_pubkey),
	    cmocka_unit_test(test_bip341_key_path),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
