/* tests/unit/test_proto_params.c: network parameters, genesis blocks,
 * compact bits, proof of work and retargeting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* ---------------------------------------------------------------------- */
/* Genesis blocks, rebuilt here the way Core's CreateGenesisBlock does     */

/* A data push with the shortest opcode (CScript's operator<< on bytes). */
static void push_data(struct proto_writer *w, const void *data, size_t n)
{
	if (n < 0x4c) {
		proto_write_u8(w, (uint8_t)n);
	} else if (n <= 0xff) {
		proto_write_u8(w, 0x4c);
		proto_write_u8(w, (uint8_t)n);
	} else {
		proto_write_u8(w, 0x4d);
		proto_write_u16le(w, (uint16_t)n);
	}
	proto_write_bytes(w, data, n);
}

struct genesis_spec {
	const char *msg;
	const char *script_hex; /* output script */
	uint32_t time, nonce, bits;
	const char *hash;
};

static const char satoshi_msg[] =
    "The Times 03/Jan/2009 Chancellor on brink of second bailout for banks";
static const char satoshi_script[] =
    "4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51e"
    "c112de5c384df7ba0b8d578a4c702b6bf11d5fac";

static const struct genesis_spec specs[PROTO_NET__COUNT] = {
    [PROTO_NET_MAIN] = {satoshi_msg, satoshi_script, 1231006505, 2083236893, 0x1d00ffff,
                        "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"},
    [PROTO_NET_TESTNET3] = {satoshi_msg, satoshi_script, 1296688602, 414098458, 0x1d00ffff,
                            "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943"},
    [PROTO_NET_TESTNET4] =
        {"03/May/2024 000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e",
         "21000000000000000000000000000000000000000000000000000000000000000000ac", 1714777860,
         393743547, 0x1d00ffff, "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"},
    [PROTO_NET_SIGNET] = {satoshi_msg, satoshi_script, 1598918400, 52613770, 0x1e0377ae,
                          "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6"},
    [PROTO_NET_REGTEST] = {satoshi_msg, satoshi_script, 1296688602, 2, 0x207fffff,
                           "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"},
};

static void build_genesis(const struct genesis_spec *s, struct proto_writer *out)
{
	struct proto_writer sig, tx;
	proto_writer_init(&sig);
	/* CScript() << 486604799 << CScriptNum(4) << message */
	push_data(&sig, (const uint8_t[]){0xff, 0xff, 0x00, 0x1d}, 4);
	push_data(&sig, (const uint8_t[]){0x04}, 1);
	push_data(&sig, s->msg, strlen(s->msg));
	size_t slen;
	uint8_t *script = tu_unhex(s->script_hex, &slen);

	proto_writer_init(&tx);
	proto_write_u32le(&tx, 1);
	proto_write_compact(&tx, 1);
	struct proto_hash zero;
	memset(zero.b, 0, 32);
	proto_write_hash(&tx, &zero);
	proto_write_u32le(&tx, 0xffffffff);
	proto_write_varbytes(&tx, sig.buf, sig.len);
	proto_write_u32le(&tx, 0xffffffff);
	proto_write_compact(&tx, 1);
	proto_write_u64le(&tx, 50 * (uint64_t)PROTO_COIN);
	proto_write_varbytes(&tx, script, slen);
	proto_write_u32le(&tx, 0);
	assert_int_equal(tx.err, 0);

	struct proto_block_header h = {
	    .version = 1, .time = s->time, .bits = s->bits, .nonce = s->nonce};
	proto_sha256d(tx.buf, tx.len, h.merkle_root.b); /* one tx: root = its txid */
	proto_writer_init(out);
	proto_block_header_encode(&h, out);
	proto_write_compact(out, 1);
	proto_write_bytes(out, tx.buf, tx.len);
	assert_int_equal(out->err, 0);
	proto_writer_release(&tx);
	proto_writer_release(&sig);
	free(script);
}

static void test_genesis(void **state)
{
	(void)state;
	struct proto_block b;
	proto_block_init(&b);
	for (int n = 0; n < PROTO_NET__COUNT; n++) {
		const struct proto_params *p = proto_params((enum proto_net)n);
		assert_non_null(p);
		assert_int_equal(p->net, n);
		/* Byte-for-byte what CreateGenesisBlock makes. */
		struct proto_writer w;
		build_genesis(&specs[n], &w);
		tu_assert_bytes_equal(p->genesis, p->genesis_len, w.buf, w.len);
		proto_writer_release(&w);

		size_t off = 0;
		int err = proto_block_decode(p->genesis, p->genesis_len, &b, &off);
		if (err)
			fail_msg("%s genesis: %s at %zu", p->name, proto_errname(err), off);
		assert_int_equal(b.n_tx, 1);
		struct proto_hash h, root;
		proto_block_header_hash(&b.hdr, &h);
		tu_assert_hash_hex(&h, specs[n].hash);
		assert_memory_equal(h.b, p->genesis_hash.b, 32);
		assert_true(proto_hash_is_zero(&b.hdr.prev));
		assert_int_equal(b.hdr.bits, specs[n].bits);
		assert_int_equal(b.hdr.bits, p->pow_limit_bits);
		bool mutated;
		assert_int_equal(proto_block_merkle_root(&b, &root, &mutated), 0);
		assert_memory_equal(root.b, b.hdr.merkle_root.b, 32);
		assert_true(proto_tx_is_coinbase(&b.txs[0]));
		assert_int_equal(b.txs[0].vout[0].value, 50 * PROTO_COIN);
		assert_true(proto_check_pow(&h, b.hdr.bits, &p->pow_limit));
		/* The limit's compact form is the genesis bits. */
		assert_int_equal(proto_target_to_bits(p->pow_limit.b), p->pow_limit_bits);
	}
	/* Satoshi's coinbase: the well-known merkle root. */
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	assert_int_equal(proto_block_decode(m->genesis, m->genesis_len, &b, NULL), 0);
	tu_assert_hash_hex(&b.hdr.merkle_root,
	                   "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b");
	const struct proto_params *t4 = proto_params(PROTO_NET_TESTNET4);
	assert_int_equal(proto_block_decode(t4->genesis, t4->genesis_len, &b, NULL), 0);
	tu_assert_hash_hex(&b.hdr.merkle_root,
	                   "7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e");
	proto_block_release(&b);
}

static void test_network_constants(void **state)
{
	(void)state;
	static const struct {
		enum proto_net net;
		const char *name;
		uint8_t magic[4]; /* wire order */
		uint16_t port;
		const char *hrp;
		uint32_t halving;
	} want[] = {
	    {PROTO_NET_MAIN, "main", {0xf9, 0xbe, 0xb4, 0xd9}, 8333, "bc", 210000},
	    {PROTO_NET_TESTNET3, "test", {0x0b, 0x11, 0x09, 0x07}, 18333, "tb", 210000},
	    {PROTO_NET_TESTNET4, "testnet4", {0x1c, 0x16, 0x3f, 0x28}, 48333, "tb", 210000},
	    {PROTO_NET_SIGNET, "signet", {0x0a, 0x03, 0xcf, 0x40}, 38333, "tb", 210000},
	    {PROTO_NET_REGTEST, "regtest", {0xfa, 0xbf, 0xb5, 0xda}, 18444, "bcrt", 150},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct proto_params *p = proto_params(want[i].net);
		assert_string_equal(p->name, want[i].name);
		assert_int_equal(p->magic, proto_le32(want[i].magic));
		assert_int_equal(p->default_port, want[i].port);
		assert_string_equal(p->bech32_hrp, want[i].hrp);
		assert_int_equal(p->subsidy_halving_interval, want[i].halving);
		assert_int_equal(p->pow_target_spacing, 600);
		assert_ptr_equal(proto_params_by_magic(p->magic), p);
		assert_ptr_equal(proto_params_by_name(p->name), p);
	}
	assert_int_equal(proto_params_retarget_interval(proto_params(PROTO_NET_MAIN)), 2016);
	assert_int_equal(proto_params_retarget_interval(proto_params(PROTO_NET_REGTEST)), 144);
	/* main: the magic as read little-endian from f9 be b4 d9. */
	assert_int_equal(proto_params(PROTO_NET_MAIN)->magic, 0xd9b4bef9u);

	/* Signet's magic comes from its challenge: SHA-256d(varbytes). */
	const struct proto_params *s = proto_params(PROTO_NET_SIGNET);
	assert_non_null(s->signet_challenge);
	assert_int_equal(s->signet_challenge_len, 71);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_write_varbytes(&w, s->signet_challenge, s->signet_challenge_len);
	uint8_t h[32];
	proto_sha256d(w.buf, w.len, h);
	proto_writer_release(&w);
	assert_int_equal(s->magic, proto_le32(h));
	assert_null(proto_params(PROTO_NET_MAIN)->signet_challenge);

	static const struct {
		const char *alias;
		enum proto_net net;
	} names[] = {
	    {"main", PROTO_NET_MAIN},         {"mainnet", PROTO_NET_MAIN},
	    {"test", PROTO_NET_TESTNET3},     {"testnet", PROTO_NET_TESTNET3},
	    {"testnet3", PROTO_NET_TESTNET3}, {"testnet4", PROTO_NET_TESTNET4},
	    {"signet", PROTO_NET_SIGNET},     {"regtest", PROTO_NET_REGTEST},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_ptr_equal(proto_params_by_name(names[i].alias), proto_params(names[i].net));
	assert_null(proto_params_by_name("testnet5"));
	assert_null(proto_params_by_name(""));
	assert_null(proto_params_by_name(NULL));
	assert_null(proto_params_by_magic(0));
	assert_null(proto_params(PROTO_NET__COUNT));
}

static void test_consensus_params(void **state)
{
	(void)state;
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	assert_int_equal(m->bip34_height, 227931);
	assert_int_equal(m->bip65_height, 388381);
	assert_int_equal(m->bip66_height, 363725);
	assert_int_equal(m->csv_height, 419328);
	assert_int_equal(m->segwit_height, 481824);
	assert_int_equal(m->taproot_height, 709632);
	assert_false(m->pow_allow_min_difficulty);
	assert_false(m->pow_no_retargeting);
	assert_false(m->enforce_bip94);
	assert_int_equal(m->pow_target_timespan, 14 * 24 * 3600);
	tu_assert_hash_hex(&m->pow_limit,
	                   "00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff");

	const struct proto_params *t3 = proto_params(PROTO_NET_TESTNET3);
	assert_int_equal(t3->bip34_height, 21111);
	assert_int_equal(t3->bip65_height, 581885);
	assert_int_equal(t3->bip66_height, 330776);
	assert_int_equal(t3->csv_height, 770112);
	assert_int_equal(t3->segwit_height, 834624);
	assert_true(t3->pow_allow_min_difficulty);
	assert_false(t3->enforce_bip94);

	const struct proto_params *t4 = proto_params(PROTO_NET_TESTNET4);
	assert_int_equal(t4->bip34_height, 1);
	assert_int_equal(t4->segwit_height, 1);
	assert_int_equal(t4->taproot_height, 0);
	assert_true(t4->pow_allow_min_difficulty);
	assert_true(t4->enforce_bip94);

	const struct proto_params *s = proto_params(PROTO_NET_SIGNET);
	assert_int_equal(s->segwit_height, 1);
	assert_false(s->pow_allow_min_difficulty);
	tu_assert_hash_hex(&s->pow_limit,
	                   "00000377ae000000000000000000000000000000000000000000000000000000");

	const struct proto_params *r = proto_params(PROTO_NET_REGTEST);
	assert_int_equal(r->bip34_height, 1);
	assert_int_equal(r->bip65_height, 1);
	assert_int_equal(r->bip66_height, 1);
	assert_int_equal(r->csv_height, 1);
	assert_int_equal(r->segwit_height, 0);
	assert_int_equal(r->taproot_height, 0);
	assert_true(r->pow_no_retargeting);
	assert_true(r->pow_allow_min_difficulty);
	tu_assert_hash_hex(&r->pow_limit,
	                   "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
}

/* ---------------------------------------------------------------------- */
/* Compact bits: Core's arith_uint256 SetCompact/GetCompact cases          */

static void check_compact(uint32_t bits, const char *want_hex, int want_rc, uint32_t want_back)
{
	struct proto_hash t;
	int rc = proto_bits_to_target(bits, t.b);
	if (rc != want_rc)
		fail_msg("bits %08x: rc %d, expected %d", bits, rc, want_rc);
	if (want_hex)
		tu_assert_hash_hex(&t, want_hex);
	if (want_back != UINT32_MAX && proto_target_to_bits(t.b) != want_back)
		fail_msg("bits %08x: back to %08x, expected %08x", bits, proto_target_to_bits(t.b),
		         want_back);
}

#define ZERO_HEX "0000000000000000000000000000000000000000000000000000000000000000"

static void test_compact(void **state)
{
	(void)state;
	/* Zero and sign-only forms: zero targets, rejected. */
	static const uint32_t zeros[] = {0,          0x00123456, 0x01003456, 0x02000056,
	                                 0x03000000, 0x04000000, 0x00923456, 0x01803456,
	                                 0x02800056, 0x03800000, 0x04800000};
	for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++)
		check_compact(zeros[i], ZERO_HEX, -1, 0);
	check_compact(0x01123456,
	              "0000000000000000000000000000000000000000000000000000000000000012", 0,
	              0x01120000);
	/* Negative: the value is kept, the call reports -1. */
	check_compact(0x01fedcba,
	              "000000000000000000000000000000000000000000000000000000000000007e", -1,
	              UINT32_MAX);
	check_compact(0x02123456,
	              "0000000000000000000000000000000000000000000000000000000000001234", 0,
	              0x02123400);
	check_compact(0x03123456,
	              "0000000000000000000000000000000000000000000000000000000000123456", 0,
	              0x03123456);
	check_compact(0x04123456,
	              "0000000000000000000000000000000000000000000000000000000012345600", 0,
	              0x04123456);
	check_compact(0x04923456,
	              "0000000000000000000000000000000000000000000000000000000012345600", -1,
	              0x04123456);
	check_compact(0x05009234,
	              "0000000000000000000000000000000000000000000000000000000092340000", 0,
	              0x05009234);
	check_compact(0x20123456,
	              "1234560000000000000000000000000000000000000000000000000000000000", 0,
	              0x20123456);
	/* Overflow. */
	check_compact(0xff123456, NULL, -1, UINT32_MAX);
	check_compact(0x21010000, NULL, -1, UINT32_MAX);
	check_compact(0x22000100, NULL, -1, UINT32_MAX);
	check_compact(0x23000001, NULL, -1, UINT32_MAX);
	check_compact(0x21000100, NULL, 0, UINT32_MAX); /* 1 << 256-... fits: 0x01 << 8*30 */
	/* GetCompact never sets the sign bit: 0x80 becomes 0x02008000. */
	struct proto_hash t;
	memset(t.b, 0, 32);
	t.b[0] = 0x80;
	assert_int_equal(proto_target_to_bits(t.b), 0x02008000);
	/* Mainnet's limit and a real block's bits round-trip. */
	check_compact(0x1d00ffff,
	              "00000000ffff0000000000000000000000000000000000000000000000000000", 0,
	              0x1d00ffff);
	check_compact(0x1b0404cb,
	              "00000000000404cb000000000000000000000000000000000000000000000000", 0,
	              0x1b0404cb);
}

/* ---------------------------------------------------------------------- */
/* Proof of work                                                            */

static void test_check_pow(void **state)
{
	(void)state;
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	const struct proto_params *r = proto_params(PROTO_NET_REGTEST);
	assert_true(proto_check_pow(&m->genesis_hash, 0x1d00ffff, &m->pow_limit));
	/* Harder than the hash meets. */
	assert_false(proto_check_pow(&m->genesis_hash, 0x1a00ffff, &m->pow_limit));
	/* Exactly the target passes; one more fails. */
	struct proto_hash h;
	assert_int_equal(proto_bits_to_target(0x1c00ffff, h.b), 0);
	assert_true(proto_check_pow(&h, 0x1c00ffff, &m->pow_limit));
	h.b[0]++;
	assert_false(proto_check_pow(&h, 0x1c00ffff, &m->pow_limit));
	/* Core's CheckProofOfWork cases: negative, overflow, zero, too easy. */
	struct proto_hash zero;
	memset(zero.b, 0, 32);
	assert_false(proto_check_pow(&zero, 0x1d80ffff, &m->pow_limit)); /* negative */
	assert_false(proto_check_pow(&zero, 0xff123456, &m->pow_limit)); /* overflow */
	assert_false(proto_check_pow(&zero, 0x00000000, &m->pow_limit)); /* zero target */
	assert_false(proto_check_pow(&zero, 0x1e00ffff, &m->pow_limit)); /* above the limit */
	assert_true(proto_check_pow(&zero, 0x1d00ffff, &m->pow_limit));
	/* Regtest's easy target. */
	assert_true(proto_check_pow(&r->genesis_hash, 0x207fffff, &r->pow_limit));
	assert_false(proto_check_pow(&r->genesis_hash, 0x2100ffff, &r->pow_limit));
}

/* Core's pow_tests: CalculateNextWorkRequired on real mainnet periods. */
static void test_retarget(void **state)
{
	(void)state;
	const struct proto_params *m = proto_params(PROTO_NET_MAIN);
	/* get_next_work: blocks 30240..32255. */
	assert_int_equal(
	    proto_next_work_required(m, 0x1d00ffff, 0x1d00ffff, 1261130161, 1262152739),
	    0x1d00d86a);
	/* get_next_work_pow_limit: blocks 0..2015, capped at the limit. */
	assert_int_equal(
	    proto_next_work_required(m, 0x1d00ffff, 0x1d00ffff, 1231006505, 1233061996),
	    0x1d00ffff);
	/* get_next_work_lower_limit_actual: blocks 66528..68543, span clamped to 1/4. */
	assert_int_equal(
	    proto_next_work_required(m, 0x1c05a3f4, 0x1c05a3f4, 1279008237, 1279297671),
	    0x1c0168fd);
	/* get_next_work_upper_limit_actual: span clamped to 4x. */
	assert_int_equal(
	    proto_next_work_required(m, 0x1c387f6f, 0x1c387f6f, 1263163443, 1269211443),
	    0x1d00e1fd);
	/* Exactly two weeks: unchanged. */
	assert_int_equal(
	    proto_next_work_required(m, 0x1b0404cb, 0x1b0404cb, 1000000, 1000000 + 1209600),
	    0x1b0404cb);
	/* Regtest never retargets. */
	const struct proto_params *r = proto_params(PROTO_NET_REGTEST);
	assert_int_equal(proto_next_work_required(r, 0x207fffff, 0x1d00ffff, 0, 100), 0x207fffff);
	/* BIP94 (testnet4) starts from the period's first block's bits, so a
	 * minimum-difficulty last block does not reset difficulty; testnet3
	 * starts from the last block's. */
	const struct proto_params *t4 = proto_params(PROTO_NET_TESTNET4);
	const struct proto_params *t3 = proto_params(PROTO_NET_TESTNET3);
	assert_int_equal(
	    proto_next_work_required(t4, 0x1d00ffff, 0x1c05a3f4, 1279008237, 1279297671),
	    0x1c0168fd);
	assert_int_equal(
	    proto_next_work_required(t3, 0x1d00ffff, 0x1c05a3f4, 1279008237, 1279297671),
	    proto_next_work_required(m, 0x1d00ffff, 0x1d00ffff, 1279008237, 1279297671));
	/* Signet's limit caps an easing retarget. */
	const struct proto_params *s = proto_params(PROTO_NET_SIGNET);
	assert_int_equal(proto_next_work_required(s, 0x1e0377ae, 0x1e0377ae, 0, 10 * 1209600),
	                 0x1e0377ae);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_genesis),          cmocka_unit_test(test_network_constants),
	    cmocka_unit_test(test_consensus_params), cmocka_unit_test(test_compact),
	    cmocka_unit_test(test_check_pow),        cmocka_unit_test(test_retarget),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
