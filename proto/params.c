/*
 * proto/params.c: network parameters of main, testnet3, testnet4, signet
 * (default challenge) and regtest, as in Bitcoin Core's
 * src/kernel/chainparams.cpp.
 *
 * The genesis blocks are laid out here byte by byte the way Core's
 * CreateGenesisBlock builds them: an 80-byte header whose merkle root is the
 * txid of the only transaction, then that coinbase transaction: version 1,
 * one input spending the null outpoint with scriptSig
 * `<486604799> <4> <timestamp message>`, one 50 BTC output paying the
 * network's genesis output script, locktime 0. The unit tests rebuild each
 * block from those parameters and check the bytes and the known hashes.
 */
#include "proto/proto.h"

/* Hand-aligned byte layouts and tables: kept out of clang-format. */
/* clang-format off */
/* ---------------------------------------------------------------------- */
/* Genesis blocks                                                          */

#define Z4 "\x00\x00\x00\x00"
#define Z32 Z4 Z4 Z4 Z4 Z4 Z4 Z4 Z4

/* Header: version 1, no previous block, then merkle root, time, bits, nonce. */
#define GENESIS_HEADER(merkle, time, bits, nonce) "\x01\x00\x00\x00" Z32 merkle time bits nonce

/* The coinbase up to its scriptSig's message push. */
#define COINBASE_HEAD(script_sig_len)                                                              \
	"\x01\x00\x00\x00"     /* version */                                                       \
	"\x01"                 /* one input */                                                     \
	Z32 "\xff\xff\xff\xff" /* null outpoint */                                                 \
	script_sig_len "\x04\xff\xff\x00\x1d" /* push 486604799 (0x1d00ffff) */                   \
	"\x01\x04"                            /* push CScriptNum(4) */

/* After the message: sequence, one 50 BTC output, its script, locktime. */
#define COINBASE_TAIL(script)                                                                      \
	"\xff\xff\xff\xff"                 /* sequence */                                          \
	"\x01"                             /* one output */                                        \
	"\x00\xf2\x05\x2a\x01\x00\x00\x00" /* 5,000,000,000 satoshis */                            \
	script Z4                          /* locktime */

/* Satoshi's message (69 bytes, a direct push) and output script. */
#define SATOSHI_MSG "The Times 03/Jan/2009 Chancellor on brink of second bailout for banks"
#define SATOSHI_SCRIPT                                                                             \
	"\x43\x41" /* 67-byte script: push 65 */                                                   \
	"\x04\x67\x8a\xfd\xb0\xfe\x55\x48\x27\x19\x67\xf1\xa6\x71\x30\xb7\x10\x5c\xd6\xa8\x28\xe0" \
	"\x39\x09\xa6\x79\x62\xe0\xea\x1f\x61\xde\xb6\x49\xf6\xbc\x3f\x4c\xef\x38\xc4\xf3\x55\x04" \
	"\xe5\x1e\xc1\x12\xde\x5c\x38\x4d\xf7\xba\x0b\x8d\x57\x8a\x4c\x70\x2b\x6b\xf1\x1d\x5f"     \
	"\xac" /* OP_CHECKSIG */
/* scriptSig: 5 + 2 + 1 + 69 = 77 bytes. */
#define SATOSHI_COINBASE COINBASE_HEAD("\x4d") "\x45" SATOSHI_MSG COINBASE_TAIL(SATOSHI_SCRIPT)
/* Its txid, 4a5e1e4b...eda33b in display order. */
#define SATOSHI_MERKLE                                                                             \
	"\x3b\xa3\xed\xfd\x7a\x7b\x12\xb2\x7a\xc7\x2c\x3e\x67\x76\x8f\x61\x7f\xc8\x1b\xc3\x88\x8a" \
	"\x51\x32\x3a\x9f\xb8\xaa\x4b\x1e\x5e\x4a"

/* testnet4: a 76-byte message (needs OP_PUSHDATA1) and a 33-zero-byte key. */
#define TESTNET4_MSG "03/May/2024 000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e"
#define TESTNET4_SCRIPT "\x23\x21" Z32 "\x00" "\xac"
/* scriptSig: 5 + 2 + 2 + 76 = 85 bytes. */
#define TESTNET4_COINBASE COINBASE_HEAD("\x55") "\x4c\x4c" TESTNET4_MSG COINBASE_TAIL(TESTNET4_SCRIPT)
/* 7aa0a7ae...2b7b4e in display order. */
#define TESTNET4_MERKLE                                                                            \
	"\x4e\x7b\x2b\x91\x28\xfe\x02\x91\xdb\x06\x93\xaf\x2a\xe4\x18\xb7\x67\xe6\x57\xcd\x40\x7e" \
	"\x80\xcb\x14\x34\x22\x1e\xae\xa7\xa0\x7a"

/* Times, bits and nonces little-endian: main 1231006505 / 0x1d00ffff /
 * 2083236893; testnet3 1296688602 / 0x1d00ffff / 414098458; testnet4
 * 1714777860 / 0x1d00ffff / 393743547; signet 1598918400 / 0x1e0377ae /
 * 52613770; regtest 1296688602 / 0x207fffff / 2. Each block has one tx. */
static const uint8_t genesis_main[] =
	GENESIS_HEADER(SATOSHI_MERKLE, "\x29\xab\x5f\x49", "\xff\xff\x00\x1d", "\x1d\xac\x2b\x7c")
	"\x01" SATOSHI_COINBASE;
static const uint8_t genesis_testnet3[] =
	GENESIS_HEADER(SATOSHI_MERKLE, "\xda\xe5\x49\x4d", "\xff\xff\x00\x1d", "\x1a\xa4\xae\x18")
	"\x01" SATOSHI_COINBASE;
static const uint8_t genesis_testnet4[] =
	GENESIS_HEADER(TESTNET4_MERKLE, "\x04\x6f\x35\x66", "\xff\xff\x00\x1d", "\xbb\x0c\x78\x17")
	"\x01" TESTNET4_COINBASE;
static const uint8_t genesis_signet[] =
	GENESIS_HEADER(SATOSHI_MERKLE, "\x00\x8f\x4d\x5f", "\xae\x77\x03\x1e", "\x8a\xd2\x22\x03")
	"\x01" SATOSHI_COINBASE;
static const uint8_t genesis_regtest[] =
	GENESIS_HEADER(SATOSHI_MERKLE, "\xda\xe5\x49\x4d", "\xff\xff\x7f\x20", "\x02\x00\x00\x00")
	"\x01" SATOSHI_COINBASE;

/* String literals carry a NUL the block does not have. */
#define GENESIS(a) .genesis = a, .genesis_len = sizeof(a) - 1

/* BIP325 default signet challenge: 1-of-2 multisig. */
static const uint8_t signet_challenge[] = {
	0x51, 0x21, 0x03, 0xad, 0x5e, 0x0e, 0xda, 0xd1, 0x8c, 0xb1, 0xf0, 0xfc, 0x0d, 0x28, 0xa3,
	0xd4, 0xf1, 0xf3, 0xe4, 0x45, 0x64, 0x03, 0x37, 0x48, 0x9a, 0xbb, 0x10, 0x40, 0x4f, 0x2d,
	0x1e, 0x08, 0x6b, 0xe4, 0x30, 0x21, 0x03, 0x59, 0xef, 0x50, 0x21, 0x96, 0x4f, 0xe2, 0x2d,
	0x6f, 0x8e, 0x05, 0xb2, 0x46, 0x3c, 0x95, 0x40, 0xce, 0x96, 0x88, 0x3f, 0xe3, 0xb2, 0x78,
	0x76, 0x0f, 0x04, 0x8f, 0x51, 0x89, 0xf2, 0xe6, 0xc4, 0x52, 0xae,
};

/* ---------------------------------------------------------------------- */
/* Proof-of-work limits (little-endian)                                    */

#define FF4 0xff, 0xff, 0xff, 0xff
/* 00000000ffff...ff */
#define LIMIT_1D00FFFF {{FF4, FF4, FF4, FF4, FF4, FF4, FF4, 0, 0, 0, 0}}
/* 00000377ae00...00 */
#define LIMIT_SIGNET {{[27] = 0xae, [28] = 0x77, [29] = 0x03}}
/* 7fffff...ff */
#define LIMIT_REGTEST {{FF4, FF4, FF4, FF4, FF4, FF4, FF4, 0xff, 0xff, 0xff, 0x7f}}

#define TWO_WEEKS (14 * 24 * 60 * 60)
#define TEN_MINUTES (10 * 60)

/* Taproot: mainnet's BIP341 activation height. Core applies the taproot
 * script rules from genesis wherever segwit's are, except in a few named
 * blocks (mainnet 692261 among them) that take script flags by hash; the
 * flag choice by height and the exception table live in peertool's
 * verify-block (chain/ will own them). On the other networks 0 is exactly
 * Core's behaviour. */
static const struct proto_params params[PROTO_NET__COUNT] = {
	[PROTO_NET_MAIN] = {
		.net = PROTO_NET_MAIN,
		.name = "main",
		.magic = 0xd9b4bef9,
		.default_port = 8333,
		GENESIS(genesis_main),
		.genesis_hash = {{0x6f, 0xe2, 0x8c, 0x0a, 0xb6, 0xf1, 0xb3, 0x72, 0xc1, 0xa6, 0xa2,
				  0x46, 0xae, 0x63, 0xf7, 0x4f, 0x93, 0x1e, 0x83, 0x65, 0xe1, 0x5a,
				  0x08, 0x9c, 0x68, 0xd6, 0x19, 0x00, 0x00, 0x00, 0x00, 0x00}},
		.pow_limit = LIMIT_1D00FFFF,
		.pow_limit_bits = 0x1d00ffff,
		.pow_target_timespan = TWO_WEEKS,
		.pow_target_spacing = TEN_MINUTES,
		.pow_allow_min_difficulty = false,
		.pow_no_retargeting = false,
		.enforce_bip94 = false,
		/* 0xb1f3b93b65b16d035a82be84 */
		.min_chain_work = {{0x84, 0xbe, 0x82, 0x5a, 0x03, 0x6d, 0xb1, 0x65, 0x3b, 0xb9, 0xf3, 0xb1}},
		.assume_valid = "00000000000000000001b658dd1120e82e66d2790811f89ede9742ada3ed6d77",
		.bip34_height = 227931,
		.bip65_height = 388381,
		.bip66_height = 363725,
		.csv_height = 419328,
		.segwit_height = 481824,
		.taproot_height = 709632,
		.subsidy_halving_interval = 210000,
		.bech32_hrp = "bc",
	},
	[PROTO_NET_TESTNET3] = {
		.net = PROTO_NET_TESTNET3,
		.name = "test",
		.magic = 0x0709110b,
		.default_port = 18333,
		GENESIS(genesis_testnet3),
		.genesis_hash = {{0x43, 0x49, 0x7f, 0xd7, 0xf8, 0x26, 0x95, 0x71, 0x08, 0xf4, 0xa3,
				  0x0f, 0xd9, 0xce, 0xc3, 0xae, 0xba, 0x79, 0x97, 0x20, 0x84, 0xe9,
				  0x0e, 0xad, 0x01, 0xea, 0x33, 0x09, 0x00, 0x00, 0x00, 0x00}},
		.pow_limit = LIMIT_1D00FFFF,
		.pow_limit_bits = 0x1d00ffff,
		.pow_target_timespan = TWO_WEEKS,
		.pow_target_spacing = TEN_MINUTES,
		.pow_allow_min_difficulty = true,
		.pow_no_retargeting = false,
		.enforce_bip94 = false,
		/* 0x15f5e0c9f13455b0eb17 */
		.min_chain_work = {{0x17, 0xeb, 0xb0, 0x55, 0x34, 0xf1, 0xc9, 0xe0, 0xf5, 0x15}},
		.assume_valid = "00000000000003fc7967410ba2d0a8a8d50daedc318d43e8baf1a9782c236a57",
		.bip34_height = 21111,
		.bip65_height = 581885,
		.bip66_height = 330776,
		.csv_height = 770112,
		.segwit_height = 834624,
		.taproot_height = 0,
		.subsidy_halving_interval = 210000,
		.bech32_hrp = "tb",
	},
	[PROTO_NET_TESTNET4] = {
		.net = PROTO_NET_TESTNET4,
		.name = "testnet4",
		.magic = 0x283f161c,
		.default_port = 48333,
		GENESIS(genesis_testnet4),
		.genesis_hash = {{0x43, 0xf0, 0x8b, 0xda, 0xb0, 0x50, 0xe3, 0x5b, 0x56, 0x7c, 0x86,
				  0x4b, 0x91, 0xf4, 0x7f, 0x50, 0xae, 0x72, 0x5a, 0xe2, 0xde, 0x53,
				  0xbc, 0xfb, 0xba, 0xf2, 0x84, 0xda, 0x00, 0x00, 0x00, 0x00}},
		.pow_limit = LIMIT_1D00FFFF,
		.pow_limit_bits = 0x1d00ffff,
		.pow_target_timespan = TWO_WEEKS,
		.pow_target_spacing = TEN_MINUTES,
		.pow_allow_min_difficulty = true,
		.pow_no_retargeting = false,
		.enforce_bip94 = true,
		/* 0x1d6dce8651b6094e4c1 */
		.min_chain_work = {{0xc1, 0xe4, 0x94, 0x60, 0x1b, 0x65, 0xe8, 0xdc, 0xd6, 0x01}},
		.assume_valid = "0000000000003ed4f08dbdf6f7d6b271a6bcffce25675cb40aa9fa43179a89f3",
		.bip34_height = 1,
		.bip65_height = 1,
		.bip66_height = 1,
		.csv_height = 1,
		.segwit_height = 1,
		.taproot_height = 0,
		.subsidy_halving_interval = 210000,
		.bech32_hrp = "tb",
	},
	[PROTO_NET_SIGNET] = {
		.net = PROTO_NET_SIGNET,
		.name = "signet",
		/* First four bytes of SHA-256d(CompactSize || challenge). */
		.magic = 0x40cf030a,
		.default_port = 38333,
		GENESIS(genesis_signet),
		.genesis_hash = {{0xf6, 0x1e, 0xee, 0x3b, 0x63, 0xa3, 0x80, 0xa4, 0x77, 0xa0, 0x63,
				  0xaf, 0x32, 0xb2, 0xbb, 0xc9, 0x7c, 0x9f, 0xf9, 0xf0, 0x1f, 0x2c,
				  0x42, 0x25, 0xe9, 0x73, 0x98, 0x81, 0x08, 0x00, 0x00, 0x00}},
		.pow_limit = LIMIT_SIGNET,
		.pow_limit_bits = 0x1e0377ae,
		.pow_target_timespan = TWO_WEEKS,
		.pow_target_spacing = TEN_MINUTES,
		.pow_allow_min_difficulty = false,
		.pow_no_retargeting = false,
		.enforce_bip94 = false,
		/* 0x2b517f3d1a1 */
		.min_chain_work = {{0xa1, 0xd1, 0xf3, 0x17, 0xb5, 0x02}},
		.assume_valid = "000000895a110f46e59eb82bbc5bfb67fa314656009c295509c21b4999f5180a",
		.bip34_height = 1,
		.bip65_height = 1,
		.bip66_height = 1,
		.csv_height = 1,
		.segwit_height = 1,
		.taproot_height = 0,
		.subsidy_halving_interval = 210000,
		.bech32_hrp = "tb",
		.signet_challenge = signet_challenge,
		.signet_challenge_len = sizeof(signet_challenge),
	},
	[PROTO_NET_REGTEST] = {
		.net = PROTO_NET_REGTEST,
		.name = "regtest",
		.magic = 0xdab5bffa,
		.default_port = 18444,
		GENESIS(genesis_regtest),
		.genesis_hash = {{0x06, 0x22, 0x6e, 0x46, 0x11, 0x1a, 0x0b, 0x59, 0xca, 0xaf, 0x12,
				  0x60, 0x43, 0xeb, 0x5b, 0xbf, 0x28, 0xc3, 0x4f, 0x3a, 0x5e, 0x33,
				  0x2a, 0x1f, 0xc7, 0xb2, 0xb7, 0x3c, 0xf1, 0x88, 0x91, 0x0f}},
		.pow_limit = LIMIT_REGTEST,
		.pow_limit_bits = 0x207fffff,
		/* Core gives regtest a one-day period (144 blocks). */
		.pow_target_timespan = 24 * 60 * 60,
		.pow_target_spacing = TEN_MINUTES,
		.pow_allow_min_difficulty = true,
		.pow_no_retargeting = true,
		.enforce_bip94 = false,
		.min_chain_work = {{0}}, /* none: any chain counts */
		.bip34_height = 1,
		.bip65_height = 1,
		.bip66_height = 1,
		.csv_height = 1,
		.segwit_height = 0,
		.taproot_height = 0,
		.subsidy_halving_interval = 150,
		.bech32_hrp = "bcrt",
	},
};

/* clang-format on */

const struct proto_params *proto_params(enum proto_net net)
{
	if ((unsigned)net >= PROTO_NET__COUNT)
		return NULL;
	return &params[net];
}

static const struct {
	const char *name;
	enum proto_net net;
} aliases[] = {
    {"main", PROTO_NET_MAIN},         {"mainnet", PROTO_NET_MAIN},
    {"test", PROTO_NET_TESTNET3},     {"testnet", PROTO_NET_TESTNET3},
    {"testnet3", PROTO_NET_TESTNET3}, {"testnet4", PROTO_NET_TESTNET4},
    {"signet", PROTO_NET_SIGNET},     {"regtest", PROTO_NET_REGTEST},
};

const struct proto_params *proto_params_signet_custom(const uint8_t *challenge, size_t len)
{
	static struct proto_params custom;
	static uint8_t bytes[PROTO_MAX_SIGNET_CHALLENGE];
	if (len > sizeof(bytes))
		return NULL;
	if (len)
		memcpy(bytes, challenge, len);
	custom = params[PROTO_NET_SIGNET];
	custom.signet_challenge = bytes;
	custom.signet_challenge_len = len;
	custom.signet_custom = true;
	memset(&custom.min_chain_work, 0, sizeof(custom.min_chain_work));
	custom.assume_valid = NULL;
	/* Core's HashWriter << challenge: a CompactSize length, then the bytes. */
	uint8_t pre[9 + PROTO_MAX_SIGNET_CHALLENGE], h[32];
	struct proto_writer w;
	proto_writer_init_fixed(&w, pre, sizeof(pre));
	proto_write_varbytes(&w, bytes, len);
	proto_sha256d(pre, w.len, h);
	custom.magic = proto_le32(h);
	return &custom;
}

const struct proto_params *proto_params_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcmp(name, aliases[i].name) == 0)
			return &params[aliases[i].net];
	}
	return NULL;
}

const struct proto_params *proto_params_by_magic(uint32_t magic)
{
	for (int i = 0; i < PROTO_NET__COUNT; i++) {
		if (params[i].magic == magic)
			return &params[i];
	}
	return NULL;
}
