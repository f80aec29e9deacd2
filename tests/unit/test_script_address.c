/*
 * tests/unit/test_script_address.c: script/address.c against published
 * values: Core's Solver templates and their edges, ScriptToAsmStr as Core's
 * rpc_decodescript.py expects it, and addresses from BIP173/BIP350's valid
 * vectors, Core's regtest vectors and well-known mainnet addresses.
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

/* A 33-byte compressed key push and a 65-byte uncompressed one (Core's
 * rpc_decodescript.py keys). */
#define KEY_C "2103b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb2"
#define KEY_U                                                                                      \
	"4104b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb25e01fc8fde47c96c98a4" \
	"f3"                                                                                       \
	"a8123e33a38a50cf9025cc8c4494a518f991792bb7"

static enum script_type solve_hex(const char *hex, struct script_solution *sol, uint8_t **keep)
{
	size_t len;
	uint8_t *s = tu_unhex(hex, &len);
	enum script_type t = script_solve(s, len, sol);
	if (keep)
		*keep = s;
	else
		free(s);
	return t;
}

static void expect_type(const char *hex, const char *want)
{
	struct script_solution sol;
	const char *got = script_type_name(solve_hex(hex, &sol, NULL));
	if (strcmp(got, want))
		fail_msg("script %s: type %s, expected %s", hex, got, want);
}

static void test_solve_types(void **state)
{
	(void)state;
	expect_type("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", "pubkeyhash");
	expect_type("a914eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee87", "scripthash");
	expect_type(KEY_C "ac", "pubkey");
	expect_type(KEY_U "ac", "pubkey");
	expect_type("0014751e76e8199196d454941c45d1b3a323f1433bd6", "witness_v0_keyhash");
	expect_type("0020"
	            "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
	            "witness_v0_scripthash");
	expect_type("5120"
	            "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
	            "witness_v1_taproot");
	expect_type("51024e73", "anchor");
	expect_type("5102eeee", "witness_unknown");
	expect_type("6002751e", "witness_unknown");
	expect_type("52" KEY_C KEY_C KEY_C "53ae", "multisig");
	expect_type("52" KEY_C KEY_U "52ae", "multisig");
	expect_type("6a00", "nulldata");
	expect_type("6a", "nulldata");
	expect_type("6a4c0100", "nulldata"); /* non-minimal pushes are still pushes */
	expect_type("6a50", "nulldata");     /* OP_RESERVED counts as a push, as in Core */
	/* near misses */
	expect_type("", "nonstandard");
	expect_type("6aee", "nonstandard");
	expect_type("6a02ee", "nonstandard");
	expect_type("0015"
	            "751e76e8199196d454941c45d1b3a323f1433bd600",
	            "nonstandard");                   /* v0, 21 */
	expect_type("51034e7300", "witness_unknown"); /* not the anchor */
	expect_type("2106b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb2ac",
	            "nonstandard"); /* 06 wants 65 bytes */
	expect_type("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac00", "nonstandard");
	expect_type("51" KEY_C "52ae", "nonstandard");       /* says 2 keys, has 1 */
	expect_type("53" KEY_C KEY_C "52ae", "nonstandard"); /* 3 of 2 */
	expect_type("00" KEY_C "51ae", "nonstandard");       /* 0 required */
	expect_type("51" KEY_C "51ae51", "nonstandard");     /* trailing byte */
	expect_type("0101" KEY_C "51ae", "nonstandard");     /* count not a minimal push */
	expect_type("51" KEY_C "51", "nonstandard");         /* no CHECKMULTISIG */
}

static void test_solve_multisig_counts(void **state)
{
	(void)state;
	char hex[4096];
	struct script_solution sol;
	uint8_t *s;

	/* 20 keys: counts past 16 are minimal one-byte pushes */
	strcpy(hex, "0111");
	for (int i = 0; i < 20; i++)
		strcat(hex, KEY_C);
	strcat(hex, "0114ae");
	assert_int_equal(solve_hex(hex, &sol, &s), SCRIPT_TYPE_MULTISIG);
	assert_int_equal(sol.required, 17);
	assert_int_equal(sol.n_keys, 20);
	assert_int_equal(sol.keys[19].len, 33);
	assert_ptr_equal(sol.keys[0].data, s + 3);
	free(s);

	/* 21 keys are more than any multisig */
	strcpy(hex, "51");
	for (int i = 0; i < 21; i++)
		strcat(hex, KEY_C);
	strcat(hex, "0115ae");
	assert_int_equal(solve_hex(hex, &sol, NULL), SCRIPT_TYPE_NONSTANDARD);
	assert_int_equal(sol.n_keys, 0);

	assert_int_equal(solve_hex("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", &sol, &s),
	                 SCRIPT_TYPE_PUBKEYHASH);
	assert_ptr_equal(sol.data.data, s + 3);
	assert_int_equal(sol.data.len, 20);
	free(s);
	assert_int_equal(solve_hex("5102eeee", &sol, NULL), SCRIPT_TYPE_WITNESS_UNKNOWN);
	assert_int_equal(sol.witness_version, 1);
	assert_int_equal(sol.data.len, 2);
}

static void expect_asm(const char *hex, bool sighash, const char *want)
{
	size_t len;
	uint8_t *s = tu_unhex(hex, &len);
	struct proto_writer w;
	proto_writer_init(&w);
	assert_int_equal(script_to_asm(s, len, sighash, &w), 0);
	proto_write_u8(&w, 0);
	assert_int_equal(w.err, 0);
	if (strcmp((const char *)w.buf, want))
		fail_msg("asm of %s:\n  got      %s\n  expected %s", hex, (const char *)w.buf,
		         want);
	proto_writer_release(&w);
	free(s);
}

/* A DER signature from a mainnet scriptSig (rpc_decodescript.py), without
 * its sequence header so a test can break that header. */
#define SIG_DER_BODY                                                                               \
	"02207174775824bec6c2700023309a168231ec80b82c6069282f5133e6f11cbb04460220570edc55c7c5"     \
	"da2ca687ebd0372d3546ebc3f810516a002350cac72dfe192dfb"
#define SIG_DER "3044" SIG_DER_BODY

static void test_asm(void **state)
{
	(void)state;
	/* numbers: up to 4 bytes as CScriptNum, any encoding */
	expect_asm("", false, "");
	expect_asm("5100", false, "1 0");
	expect_asm("4f", false, "-1");
	expect_asm("02eeee", false, "-28398");
	expect_asm("0480000000", false, "128");
	expect_asm("0400000080", false, "0"); /* negative zero */
	expect_asm("04ffffffff", false, "-2147483647");
	expect_asm("0500000000ff", false, "00000000ff");
	expect_asm("0320a107b175", false, "500000 OP_CHECKLOCKTIMEVERIFY OP_DROP");
	expect_asm("4c00", false, "0");
	expect_asm("6aee", false, "OP_RETURN OP_UNKNOWN");
	expect_asm("6a02ee", false, "OP_RETURN [error]");
	expect_asm("ba50ff", false, "OP_CHECKSIGADD OP_RESERVED OP_INVALIDOPCODE");
	/* signatures: decoded in scriptSigs only */
	expect_asm("47" SIG_DER "01", true, SIG_DER "[ALL]");
	expect_asm("47" SIG_DER "82", true, SIG_DER "[NONE|ANYONECANPAY]");
	expect_asm("47" SIG_DER "83", true, SIG_DER "[SINGLE|ANYONECANPAY]");
	expect_asm("47" SIG_DER "01", false, SIG_DER "01");
	expect_asm("47" SIG_DER "04", true, SIG_DER "04"); /* undefined hash type */
	expect_asm("00"
	           "47" SIG_DER "01"
	           "47" SIG_DER "81",
	           true, "0 " SIG_DER "[ALL] " SIG_DER "[ALL|ANYONECANPAY]");
	/* OP_RETURN data is never read as a signature */
	expect_asm("6a"
	           "47" SIG_DER "01",
	           true, "OP_RETURN " SIG_DER "01");
	/* a broken DER length is not a signature */
	expect_asm("47"
	           "3045" SIG_DER_BODY "01",
	           true, "3045" SIG_DER_BODY "01");
}

static void test_asm_writer_full(void **state)
{
	(void)state;
	uint8_t buf[8];
	size_t len;
	uint8_t *s = tu_unhex("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", &len);
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	tu_assert_err(script_to_asm(s, len, false, &w), PROTO_ENOSPACE);
	free(s);
}

static void expect_address(const char *hex, enum proto_net net, const char *want)
{
	size_t len;
	char out[SCRIPT_ADDRESS_MAX];
	uint8_t *s = tu_unhex(hex, &len);
	int rc = script_address(s, len, proto_params(net), out, sizeof(out));
	if (rc)
		fail_msg("script %s on %s: no address (%d), expected %s", hex,
		         proto_params(net)->name, rc, want);
	if (strcasecmp(out, want))
		fail_msg("script %s on %s:\n  got      %s\n  expected %s", hex,
		         proto_params(net)->name, out, want);
	/* Core prints addresses in lowercase (bech32) or as base58 makes them */
	for (const char *p = out; *p; p++) {
		if (out[0] != '1' && out[0] != '2' && out[0] != '3' && out[0] != 'm' &&
		    out[0] != 'n' && *p >= 'A' && *p <= 'Z')
			fail_msg("bech32 address %s is not lowercase", out);
	}
	/* and back: the address decodes to the script, in the vector's case */
	uint8_t spk[SCRIPT_ADDRESS_SPK_MAX];
	size_t spk_len = 0;
	char why[SCRIPT_ADDRESS_WHY_MAX];
	rc = script_address_decode(want, proto_params(net), spk, sizeof(spk), &spk_len, why,
	                           sizeof(why));
	if (rc)
		fail_msg("address %s on %s does not decode (%d): %s", want, proto_params(net)->name,
		         rc, why);
	if (spk_len != len || memcmp(spk, s, len)) {
		char *got = tu_hex(spk, spk_len);
		fail_msg("address %s decodes to\n  %s\nexpected\n  %s", want, got, hex);
	}
	free(s);
}

/* An address that must not decode on net, and Core's reason for it. */
static void expect_invalid(const char *addr, enum proto_net net, const char *reason)
{
	uint8_t spk[SCRIPT_ADDRESS_SPK_MAX];
	size_t spk_len = 0;
	char why[SCRIPT_ADDRESS_WHY_MAX];
	int rc = script_address_decode(addr, proto_params(net), spk, sizeof(spk), &spk_len, why,
	                               sizeof(why));
	if (rc != SCRIPT_ADDRESS_EINVALID)
		fail_msg("address %s on %s: got %d, expected EINVALID (%s)", addr,
		         proto_params(net)->name, rc, reason);
	if (reason && strcmp(why, reason))
		fail_msg("address %s on %s:\n  reason   %s\n  expected %s", addr,
		         proto_params(net)->name, why, reason);
}

static void test_address_decode_invalid(void **state)
{
	(void)state;
	static const char *const bad_b32 =
	    "Invalid or unsupported Segwit (Bech32) or Base58 encoding.";
	static const char *const want_m = "Version 1+ witness address must use Bech32m checksum";
	static const char *const want_b = "Version 0 witness address must use Bech32 checksum";
	static const char *const padding = "Invalid padding in Bech32 data section";
	/* BIP350's invalid addresses, with Core 29's DecodeDestination reasons */
	expect_invalid("tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut",
	               PROTO_NET_MAIN, bad_b32);
	expect_invalid("bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
	               PROTO_NET_MAIN, want_m);
	expect_invalid("tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf",
	               PROTO_NET_TESTNET3, want_m);
	expect_invalid("BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL",
	               PROTO_NET_MAIN, want_m);
	expect_invalid("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", PROTO_NET_MAIN, want_b);
	expect_invalid("tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47",
	               PROTO_NET_TESTNET3, want_b);
	expect_invalid("bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
	               PROTO_NET_MAIN, "Invalid Base 32 character");
	expect_invalid("BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R",
	               PROTO_NET_MAIN, "Invalid Bech32 address witness version");
	expect_invalid("bc1pw5dgrnzv", PROTO_NET_MAIN,
	               "Invalid Bech32 address program size (1 byte)");
	expect_invalid(
	    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav",
	    PROTO_NET_MAIN, "Invalid Bech32 address program size (41 bytes)");
	expect_invalid("BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", PROTO_NET_MAIN,
	               "Invalid Bech32 v0 address program size (16 bytes), per BIP141");
	expect_invalid("tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
	               PROTO_NET_TESTNET3, "Invalid character or mixed case");
	expect_invalid("bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf",
	               PROTO_NET_MAIN, padding);
	expect_invalid("tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
	               PROTO_NET_TESTNET3, padding);
	expect_invalid("bc1gmk9yu", PROTO_NET_MAIN, "Empty Bech32 data section");
	/* BIP173's invalid addresses: still invalid under BIP350, some for new reasons */
	expect_invalid("tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty", PROTO_NET_MAIN, bad_b32);
	expect_invalid("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", PROTO_NET_MAIN,
	               "Invalid Bech32 checksum");
	expect_invalid("BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2", PROTO_NET_MAIN, want_m);
	expect_invalid("bc1rw5uspcuh", PROTO_NET_MAIN, want_m);
	expect_invalid(
	    "bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90",
	    PROTO_NET_MAIN, NULL);
	expect_invalid("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7",
	               PROTO_NET_TESTNET3, "Invalid character or mixed case");
	expect_invalid("bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du", PROTO_NET_MAIN, NULL);
	expect_invalid("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv",
	               PROTO_NET_TESTNET3, padding);
	/* a valid address of another network */
	expect_invalid("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", PROTO_NET_REGTEST, bad_b32);
	expect_invalid("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", PROTO_NET_MAIN, bad_b32);
	expect_invalid("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", PROTO_NET_REGTEST,
	               "Invalid or unsupported Base58-encoded address.");
	expect_invalid("mpXwg4jMtRhuSpVq4xS3HFHmCmWp9NyGKt", PROTO_NET_MAIN,
	               "Invalid or unsupported Base58-encoded address.");
	/* base58: a typo breaks the checksum; '0' is no digit; too short */
	expect_invalid("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", PROTO_NET_MAIN,
	               "Invalid checksum or length of Base58 address (P2PKH or P2SH)");
	expect_invalid("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0", PROTO_NET_MAIN, bad_b32);
	expect_invalid("", PROTO_NET_MAIN,
	               "Invalid checksum or length of Base58 address (P2PKH or P2SH)");
	expect_invalid("bcrt1", PROTO_NET_REGTEST, "Invalid separator position");
	expect_invalid("bcrt", PROTO_NET_REGTEST, "Missing separator");
	/* a bech32m address of 91 characters */
	expect_invalid("bcrt1pamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhqz6nvlhqqqqqqqqqqq"
	               "qqqqqqqqqqq",
	               PROTO_NET_REGTEST, NULL);
}

static void test_address_decode_forms(void **state)
{
	(void)state;
	uint8_t spk[SCRIPT_ADDRESS_SPK_MAX];
	size_t len = 0;
	/* Core's DecodeBase58 skips white space around the digits */
	assert_int_equal(script_address_decode(" 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa\n",
	                                       proto_params(PROTO_NET_MAIN), spk, sizeof(spk), &len,
	                                       NULL, 0),
	                 0);
	assert_int_equal(len, 25);
	/* the scriptPubKey must fit */
	assert_int_equal(script_address_decode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	                                       proto_params(PROTO_NET_MAIN), spk, 24, &len, NULL,
	                                       0),
	                 SCRIPT_ADDRESS_ESPACE);
	/* an upper-case regtest address is the same address */
	assert_int_equal(script_address_decode("BCRT1PAMHQK96EDN", proto_params(PROTO_NET_REGTEST),
	                                       spk, sizeof(spk), &len, NULL, 0),
	                 0);
	assert_int_equal(len, 4);
	assert_memory_equal(spk, "\x51\x02\xee\xee", 4);
}

static void test_address_vectors(void **state)
{
	(void)state;
	/* BIP350's valid segwit addresses (BIP173's v0 ones among them) */
	expect_address("0014751e76e8199196d454941c45d1b3a323f1433bd6", PROTO_NET_MAIN,
	               "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4");
	expect_address("00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262",
	               PROTO_NET_TESTNET3,
	               "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7");
	expect_address(
	    "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a"
	    "323f1433bd6",
	    PROTO_NET_MAIN,
	    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y");
	expect_address("6002751e", PROTO_NET_MAIN, "BC1SW50QGDZ25J");
	expect_address("5210751e76e8199196d454941c45d1b3a323", PROTO_NET_MAIN,
	               "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs");
	expect_address("0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
	               PROTO_NET_TESTNET3,
	               "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy");
	expect_address("5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
	               PROTO_NET_TESTNET3,
	               "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c");
	expect_address("512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
	               PROTO_NET_MAIN,
	               "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0");
	/* Core's rpc_decodescript.json (regtest) */
	expect_address("5102eeee", PROTO_NET_REGTEST, "bcrt1pamhqk96edn");
	expect_address("a914eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee87", PROTO_NET_REGTEST,
	               "2NF2b3KS8xXb9XHvbRMXdZh8s5g92rUZHtp");
	expect_address("51024e73", PROTO_NET_MAIN, "bc1pfeessrawgf");
	/* base58check: the genesis key's address, and leading zero bytes */
	expect_address("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", PROTO_NET_MAIN,
	               "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa");
	expect_address("76a914000000000000000000000000000000000000000088ac", PROTO_NET_MAIN,
	               "1111111111111111111114oLvT2");
	expect_address("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", PROTO_NET_SIGNET,
	               "mpXwg4jMtRhuSpVq4xS3HFHmCmWp9NyGKt");
}

static void test_address_none_and_space(void **state)
{
	(void)state;
	static const char *const none[] = {
	    KEY_C "ac", "52" KEY_C KEY_C "52ae",
	    "6a00",     "",
	    "50",       "0015751e76e8199196d454941c45d1b3a323f1433bd600",
	};
	char out[SCRIPT_ADDRESS_MAX];
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		size_t len;
		uint8_t *s = tu_unhex(none[i], &len);
		int rc = script_address(s, len, proto_params(PROTO_NET_MAIN), out, sizeof(out));
		if (rc != SCRIPT_ADDRESS_ENONE)
			fail_msg("script '%s': got %d, expected ENONE", none[i], rc);
		free(s);
	}
	size_t len;
	uint8_t *s = tu_unhex("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", &len);
	/* 34 characters need 35 bytes */
	assert_int_equal(script_address(s, len, proto_params(PROTO_NET_MAIN), out, 34),
	                 SCRIPT_ADDRESS_ESPACE);
	assert_int_equal(script_address(s, len, proto_params(PROTO_NET_MAIN), out, 35), 0);
	free(s);
	s = tu_unhex("0014751e76e8199196d454941c45d1b3a323f1433bd6", &len);
	assert_int_equal(script_address(s, len, proto_params(PROTO_NET_MAIN), out, 42),
	                 SCRIPT_ADDRESS_ESPACE);
	assert_int_equal(script_address(s, len, proto_params(PROTO_NET_MAIN), out, 43), 0);
	free(s);
}

static void test_xonly(void **state)
{
	(void)state;
	uint8_t k[32] = {0};
	assert_false(script_xonly_pubkey_valid(k)); /* x = 0: 7 is no square mod p */
	k[31] = 1;
	assert_true(script_xonly_pubkey_valid(k));
	memset(k, 0xff, sizeof(k)); /* not below the field size */
	assert_false(script_xonly_pubkey_valid(k));
	memset(k, 0xee, sizeof(k));
	assert_true(script_xonly_pubkey_valid(k)); /* Core's rawtr() vector */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_solve_types),
	    cmocka_unit_test(test_solve_multisig_counts),
	    cmocka_unit_test(test_asm),
	    cmocka_unit_test(test_asm_writer_full),
	    cmocka_unit_test(test_address_vectors),
	    cmocka_unit_test(test_address_none_and_space),
	    cmocka_unit_test(test_address_decode_invalid),
	    cmocka_unit_test(test_address_decode_forms),
	    cmocka_unit_test(test_xonly),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
