/*
 * tests/unit/test_chain_index.c: the block index against Bitcoin Core's
 * answers about a regtest chain (best header, chain work, tips, reorg),
 * the mainnet-genesis chain, every header reject reason, retargeting
 * (mainnet, testnet3's minimum-difficulty walk, testnet4's BIP94), chain
 * work arithmetic and the database record round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau
#define MAIN_MAGIC    0xd9b4bef9u
#define MAIN_HEIGHT   265
/* later than every header of the vectors, so none is "too new" */
#define NOW 2000000000

struct fixture {
	json_t *json;
	struct tu_records main;  /* heights 1..265 */
	struct tu_records stale; /* heights 261..263 */
};
static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	json_error_t jerr;
	fx.json = json_load_file(tu_vector("regtest/regtest_chain.json"), 0, &jerr);
	if (!fx.json)
		return -1;
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), REGTEST_MAGIC, &fx.main);
	tu_records_load(tu_vector("regtest/regtest_stale_branch.dat"), REGTEST_MAGIC, &fx.stale);
	return fx.main.n == MAIN_HEIGHT && fx.stale.n == 3 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(fx.json);
	tu_records_free(&fx.main);
	tu_records_free(&fx.stale);
	return 0;
}

static const char *main_hash(int height)
{
	return json_string_value(
	    json_array_get(json_object_get(fx.json, "main_chain_hashes"), (size_t)height));
}

static json_t *checkpoint(const char *name)
{
	return json_object_get(json_object_get(fx.json, "checkpoints"), name);
}

static struct chain_node *add(struct chain_index *idx, const struct tu_records *r, size_t i)
{
	struct proto_block_header h;
	struct chain_state st;
	struct chain_node *n = NULL;
	chain_state_clear(&st);
	tu_record_header(r, i, &h);
	tu_assert_ok(chain_index_add_header(idx, &h, NOW, &n, &st), &st);
	assert_non_null(n);
	return n;
}

static struct chain_index *regtest_index(size_t main_upto)
{
	struct chain_index *idx;
	assert_int_equal(chain_index_new(&idx, proto_params(PROTO_NET_REGTEST)), 0);
	for (size_t i = 0; i < main_upto; i++)
		add(idx, &fx.main, i);
	return idx;
}

static void assert_node_hash(const struct chain_node *n, const char *want)
{
	assert_non_null(n);
	tu_assert_hash_hex(&n->hash, want);
}

static void assert_chainwork(const struct chain_node *n, const char *want)
{
	char hex[65];
	chain_work_hex(&n->work, hex);
	assert_string_equal(hex, want);
}

static void assert_best_is(struct chain_index *idx, const char *cp)
{
	json_t *c = checkpoint(cp);
	struct chain_node *best = chain_index_best_header(idx);
	assert_node_hash(best, json_string_value(json_object_get(c, "bestblockhash")));
	assert_int_equal(best->height, json_integer_value(json_object_get(c, "height")));
	assert_chainwork(best, json_string_value(json_object_get(c, "chainwork")));
}

/* ---- Core's regtest chain --------------------------------------------- */

static void test_regtest_headers(void **state)
{
	(void)state;
	struct chain_index *idx = regtest_index(0);
	assert_node_hash(chain_index_genesis(idx), main_hash(0));
	for (size_t i = 0; i < 140; i++) {
		struct chain_node *n = add(idx, &fx.main, i);
		assert_int_equal(n->height, (int)i + 1);
		assert_node_hash(n, main_hash((int)i + 1));
		assert_int_equal(chain_node_level(n), CHAIN_VALID_TREE);
	}
	assert_best_is(idx, "after-maturity");
	for (size_t i = 140; i < 260; i++)
		add(idx, &fx.main, i);
	assert_best_is(idx, "tip");
	/* Core's reorg: the 3-block branch first, then the 5 that beat it */
	for (size_t i = 0; i < fx.stale.n; i++)
		add(idx, &fx.stale, i);
	assert_best_is(idx, "stale-branch-tip");
	for (size_t i = 260; i < MAIN_HEIGHT; i++)
		add(idx, &fx.main, i);
	assert_best_is(idx, "after-reorg");
	assert_int_equal(chain_index_count(idx), 1 + MAIN_HEIGHT + 3);

	/* getchaintips: the active tip and a 3-long valid fork */
	struct proto_hash h;
	json_t *tips = json_object_get(fx.json, "getchaintips");
	struct chain_node *tip = chain_index_best_header(idx);
	for (size_t i = 0; i < json_array_size(tips); i++) {
		json_t *t = json_array_get(tips, i);
		assert_int_equal(
		    proto_hash_from_hex(json_string_value(json_object_get(t, "hash")), &h), 0);
		struct chain_node *n = chain_index_find(idx, &h);
		assert_non_null(n);
		assert_int_equal(n->height, json_integer_value(json_object_get(t, "height")));
		struct chain_node *fork = chain_node_fork(tip, n);
		assert_int_equal(n->height - fork->height,
		                 json_integer_value(json_object_get(t, "branchlen")));
	}

	/* every main-chain ancestor of the tip, through the skip links */
	for (int height = 0; height <= MAIN_HEIGHT; height++)
		assert_node_hash(chain_node_ancestor(tip, height), main_hash(height));
	assert_null(chain_node_ancestor(tip, MAIN_HEIGHT + 1));
	assert_null(chain_node_ancestor(tip, -1));

	/* a known header again: the same node, no error */
	struct proto_block_header hdr;
	struct chain_node *again = NULL;
	struct chain_state st;
	tu_record_header(&fx.main, 99, &hdr);
	tu_assert_ok(chain_index_add_header(idx, &hdr, NOW, &again, &st), &st);
	assert_int_equal(again->height, 100);
	assert_int_equal(chain_index_count(idx), 1 + MAIN_HEIGHT + 3);

	/* the header a node gives back is the one that came in */
	struct proto_block_header back;
	chain_node_header(again, &back);
	assert_memory_equal(&back, &hdr, sizeof(hdr));
	chain_index_free(idx);
}

/* MTP and time_max against a plain computation over the raw headers. */
static void test_mtp_and_time_max(void **state)
{
	(void)state;
	struct chain_index *idx = regtest_index(MAIN_HEIGHT);
	struct chain_node *tip = chain_index_best_header(idx);
	int64_t times[MAIN_HEIGHT + 1];
	struct proto_block_header h;
	times[0] = chain_index_genesis(idx)->time;
	for (int i = 1; i <= MAIN_HEIGHT; i++) {
		tu_record_header(&fx.main, (size_t)i - 1, &h);
		times[i] = h.time;
	}
	uint32_t tmax = 0;
	for (int height = 0; height <= MAIN_HEIGHT; height++) {
		int64_t w[11];
		int k = 0;
		for (int j = height; j >= 0 && k < 11; j--)
			w[k++] = times[j];
		/* bubble sort: the reference should not share code with the index */
		for (int a = 0; a < k; a++)
			for (int b = a + 1; b < k; b++)
				if (w[b] < w[a]) {
					int64_t t = w[a];
					w[a] = w[b];
					w[b] = t;
				}
		struct chain_node *n = chain_node_ancestor(tip, height);
		assert_int_equal(chain_node_mtp(n), w[k / 2]);
		if ((uint32_t)times[height] > tmax)
			tmax = (uint32_t)times[height];
		assert_int_equal(n->time_max, tmax);
	}
	chain_index_free(idx);
}

static void test_locator(void **state)
{
	(void)state;
	struct chain_index *idx = regtest_index(MAIN_HEIGHT);
	struct chain_node *tip = chain_index_best_header(idx);
	struct proto_hash loc[CHAIN_LOCATOR_MAX];
	size_t n = chain_node_locator(tip, loc, CHAIN_LOCATOR_MAX);
	/* Core's LocatorEntries for 265: 265..255 one by one, then steps of
	 * 2, 4, 8, ... and genesis last */
	int want[64], k = 0, height = MAIN_HEIGHT, step = 1;
	for (;;) {
		want[k++] = height;
		if (height == 0)
			break;
		height = height - step > 0 ? height - step : 0;
		if (k > 10)
			step *= 2;
	}
	assert_int_equal(n, (size_t)k);
	assert_int_equal(want[10], 255);
	for (int i = 0; i < k; i++)
		tu_assert_hash_hex(&loc[i], main_hash(want[i]));
	/* a short buffer still ends at genesis */
	n = chain_node_locator(tip, loc, 12);
	assert_int_equal(n, 12);
	tu_assert_hash_hex(&loc[11], main_hash(0));
	/* genesis alone */
	n = chain_node_locator(chain_index_genesis(idx), loc, CHAIN_LOCATOR_MAX);
	assert_int_equal(n, 1);
	chain_index_free(idx);
}

/* Equal work: the header seen first stays best, whichever branch it is on. */
static void test_tie_first_seen(void **state)
{
	(void)state;
	for (int stale_first = 0; stale_first < 2; stale_first++) {
		struct chain_index *idx = regtest_index(260);
		struct chain_node *a, *b;
		if (stale_first) {
			a = add(idx, &fx.stale, 0);
			b = add(idx, &fx.main, 260);
		} else {
			a = add(idx, &fx.main, 260);
			b = add(idx, &fx.stale, 0);
		}
		assert_int_equal(chain_work_cmp(&a->work, &b->work), 0);
		assert_ptr_equal(chain_index_best_header(idx), a);
		chain_index_recompute_best(idx);
		assert_ptr_equal(chain_index_best_header(idx), a);
		/* the first one fails: the other takes over */
		a->status |= CHAIN_FAILED_VALID;
		chain_index_recompute_best(idx);
		assert_ptr_equal(chain_index_best_header(idx), b);
		chain_index_free(idx);
	}
}

static void test_failed_and_missing(void **state)
{
	(void)state;
	struct chain_index *idx = regtest_index(263);
	struct chain_state st;
	struct proto_block_header h;
	struct chain_node *n263 = chain_index_best_header(idx), *out = NULL;
	assert_int_equal(n263->height, 263);
	n263->status |= CHAIN_FAILED_VALID;
	chain_index_recompute_best(idx);
	assert_int_equal(chain_index_best_header(idx)->height, 262);

	/* known and failed */
	tu_record_header(&fx.main, 262, &h);
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, &out, &st), &st,
	                 CHAIN_RESULT_CACHED_INVALID, "duplicate-invalid");
	assert_ptr_equal(out, n263);
	/* child of a failed header */
	tu_record_header(&fx.main, 263, &h);
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, &out, &st), &st,
	                 CHAIN_RESULT_INVALID_PREV, "bad-prevblk");
	assert_null(out);
	/* unknown parent */
	h.prev.b[0] ^= 1;
	tu_grind(&h, proto_params(PROTO_NET_REGTEST));
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, NULL, &st), &st,
	                 CHAIN_RESULT_MISSING_PREV, "prev-blk-not-found");
	assert_int_equal(chain_index_count(idx), 264);
	chain_index_free(idx);
}

/* ---- header rules ------------------------------------------------------ */

static void test_header_rejects(void **state)
{
	(void)state;
	const struct proto_params *p = proto_params(PROTO_NET_REGTEST);
	struct chain_index *idx = regtest_index(20);
	struct chain_state st;
	struct proto_block_header good, h;
	tu_record_header(&fx.main, 20, &good); /* height 21 */
	struct chain_node *prev = chain_index_best_header(idx);

	/* high-hash: a nonce whose hash misses the (easy) target */
	h = good;
	struct proto_hash hash;
	do {
		h.nonce++;
		proto_block_header_hash(&h, &hash);
	} while (proto_check_pow(&hash, h.bits, &p->pow_limit));
	tu_assert_reject(chain_check_header(&h, p, &st), &st, CHAIN_RESULT_INVALID_HEADER,
	                 "high-hash");
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, NULL, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "high-hash");
	assert_string_equal(st.debug, "proof of work failed");

	/* bad-diffbits: valid work for other bits */
	h = good;
	h.bits = 0x207ffffe;
	tu_grind(&h, p);
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, NULL, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "bad-diffbits");

	/* time-too-old: exactly the parent's MTP; one second more is fine */
	h = good;
	h.time = (uint32_t)chain_node_mtp(prev);
	tu_grind(&h, p);
	tu_assert_reject(chain_check_header_contextual(&h, prev, NOW, p, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "time-too-old");
	h.time++;
	tu_assert_ok(chain_check_header_contextual(&h, prev, NOW, p, &st), &st);

	/* time-too-new: more than two hours ahead of now */
	h = good;
	int64_t now = (int64_t)good.time - 2 * 60 * 60 - 1;
	tu_assert_reject(chain_check_header_contextual(&h, prev, now, p, &st), &st,
	                 CHAIN_RESULT_TIME_FUTURE, "time-too-new");
	tu_assert_ok(chain_check_header_contextual(&h, prev, now + 1, p, &st), &st);

	/* bad-version: BIP34, BIP66, BIP65 are active from height 1 on regtest */
	static const char *const reasons[] = {"bad-version(0x00000001)", "bad-version(0x00000002)",
	                                      "bad-version(0x00000003)"};
	for (int v = 1; v <= 3; v++) {
		h = good;
		h.version = v;
		tu_grind(&h, p);
		tu_assert_reject(chain_index_add_header(idx, &h, NOW, NULL, &st), &st,
		                 CHAIN_RESULT_INVALID_HEADER, reasons[v - 1]);
	}
	h = good;
	h.version = 4;
	tu_grind(&h, p);
	tu_assert_ok(chain_check_header_contextual(&h, prev, NOW, p, &st), &st);
	/* a negative version is below 2 too */
	h.version = (int32_t)0x80000000u;
	tu_assert_reject(chain_check_header_contextual(&h, prev, NOW, p, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "bad-version(0x80000000)");
	/* nothing was added by any of these */
	assert_int_equal(chain_index_count(idx), 21);
	chain_index_free(idx);
}

/* Mainnet's genesis and four difficulty-1 blocks on top. */
static const char *const MAIN_CHAIN[5] = {
    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
    "00000000ebe5ec3e94d8dfe18100e5c0f3b1955bc6107fbe24d95732b814551b",
    "00000000952ccb1bf9b799fcd0cc654dd48363f76781f8b1c61dbf1696c39f97",
    "00000000bc3589303953766cc9364130cb97bc3749bae170f476d45f1e23f850",
    "000000002f264d6504013e73b9c913de9098d4d771c1bb219af475d2a01b128e",
};

static void test_mainnet_genesis_chain(void **state)
{
	(void)state;
	struct tu_records r;
	struct chain_index *idx;
	struct chain_state st;
	struct proto_block_header h;
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	tu_records_load(tu_vector("blocks/genesis_chain_0_to_4.dat"), MAIN_MAGIC, &r);
	assert_int_equal(r.n, 5);
	assert_int_equal(chain_index_new(&idx, main), 0);
	assert_node_hash(chain_index_genesis(idx), MAIN_CHAIN[0]);
	assert_chainwork(chain_index_genesis(idx),
	                 "0000000000000000000000000000000000000000000000000000000100010001");
	/* genesis offered again is genesis */
	struct chain_node *n = NULL;
	tu_record_header(&r, 0, &h);
	tu_assert_ok(chain_index_add_header(idx, &h, NOW, &n, &st), &st);
	assert_ptr_equal(n, chain_index_genesis(idx));
	for (size_t i = 1; i < 5; i++) {
		tu_record_header(&r, i, &h);
		tu_assert_ok(chain_check_header(&h, main, &st), &st);
		tu_assert_ok(chain_index_add_header(idx, &h, NOW, &n, &st), &st);
		assert_node_hash(n, MAIN_CHAIN[i]);
		assert_int_equal(n->height, (int)i);
	}
	assert_chainwork(chain_index_best_header(idx),
	                 "0000000000000000000000000000000000000000000000000000000500050005");

	/* with BIP34 from height 1, a version-1 block 1 is outdated */
	struct proto_params early = *main;
	early.bip34_height = 1;
	struct chain_index *idx2;
	assert_int_equal(chain_index_new(&idx2, &early), 0);
	tu_record_header(&r, 1, &h);
	assert_int_equal(h.version, 1);
	tu_assert_reject(chain_index_add_header(idx2, &h, NOW, NULL, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "bad-version(0x00000001)");
	/* a header that is not the chain's (flip the merkle root): high-hash at difficulty 1 */
	h.merkle_root.b[0] ^= 1;
	tu_assert_reject(chain_index_add_header(idx, &h, NOW, NULL, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "high-hash");
	chain_index_free(idx2);
	chain_index_free(idx);
	tu_records_free(&r);
}

/* ---- retargeting on synthetic chains ------------------------------------ */

/*
 * A chain of synthetic nodes up to `top` through insert_loaded (no PoW:
 * only next-work arithmetic is under test). Hashes are the height, so they
 * are unique. times[h] / bits[h] give each node's fields.
 */
static struct chain_node *synth_chain(struct chain_index *idx, int32_t top,
                                      uint32_t (*time_of)(int32_t), uint32_t (*bits_of)(int32_t))
{
	struct chain_node *prev = chain_index_genesis(idx);
	for (int32_t height = 1; height <= top; height++) {
		struct chain_node n;
		memset(&n, 0, sizeof(n));
		proto_put_le32(n.hash.b, (uint32_t)height);
		n.hash.b[31] = 0x5a;
		n.height = height;
		n.time = time_of(height);
		n.bits = bits_of(height);
		n.status = CHAIN_VALID_TREE;
		chain_work_of_bits(n.bits, &n.work);
		chain_work_add(&n.work, &prev->work);
		struct chain_node *out;
		assert_int_equal(chain_index_insert_loaded(idx, &n, &prev->hash, &out), 0);
		prev = out;
	}
	return prev;
}

/* Core's pow_tests get_next_work: period ending at 32255. */
static uint32_t t_32255(int32_t h)
{
	if (h == 32255)
		return 1262152739;
	if (h == 30240)
		return 1261130161;
	return 1261130161 + (uint32_t)(h > 30240 ? h - 30240 : 0) * 500;
}
static uint32_t bits_1d00ffff(int32_t h)
{
	(void)h;
	return 0x1d00ffff;
}
/* Core's get_next_work_lower_limit_actual: last 68543, bits 0x1c05a3f4. */
static uint32_t t_68543(int32_t h)
{
	if (h == 68543)
		return 1279297671;
	if (h >= 66528)
		return 1279008237 + (uint32_t)(h - 66528);
	return 1279008237 - (uint32_t)(66528 - h);
}
static uint32_t bits_1c05a3f4(int32_t h)
{
	(void)h;
	return 0x1c05a3f4;
}

static void test_retarget_mainnet(void **state)
{
	(void)state;
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	struct chain_index *idx;
	assert_int_equal(chain_index_new(&idx, main), 0);
	struct chain_node *last = synth_chain(idx, 32255, t_32255, bits_1d00ffff);
	assert_int_equal(chain_next_work_required(last, last->time + 600, main), 0x1d00d86a);
	/* inside a period the bits stay */
	struct chain_node *mid = chain_node_ancestor(last, 32000);
	assert_int_equal(chain_next_work_required(mid, mid->time + 100000, main), 0x1d00ffff);
	/* the ancestor walk on a chain of 32k nodes agrees with prev links */
	for (int32_t hgt = 0; hgt <= 32255; hgt += 997) {
		struct chain_node *a = chain_node_ancestor(last, hgt), *w = last;
		while (w->height > hgt)
			w = w->prev;
		assert_ptr_equal(a, w);
	}
	assert_true(chain_index_memory(idx) / chain_index_count(idx) < 200);
	chain_index_free(idx);

	assert_int_equal(chain_index_new(&idx, main), 0);
	last = synth_chain(idx, 68543, t_68543, bits_1c05a3f4);
	assert_int_equal(chain_next_work_required(last, last->time + 600, main), 0x1c0168fd);
	chain_index_free(idx);
}

/* testnet3 (and testnet4): period 2016 at 0x1c0fffff; 2017..2019 mined at minimum difficulty. */
#define T0 1700000000u
static uint32_t t_600(int32_t h)
{
	return T0 + (uint32_t)h * 600;
}
static uint32_t bits_min_after_2016(int32_t h)
{
	return h > 2016 ? 0x1d00ffff : 0x1c0fffff;
}
static uint32_t bits_min_from_2016(int32_t h)
{
	return h >= 2016 ? 0x1d00ffff : 0x1c0fffff;
}

static void test_retarget_testnet3_min_difficulty(void **state)
{
	(void)state;
	const struct proto_params *t3 = proto_params(PROTO_NET_TESTNET3);
	struct chain_index *idx;
	assert_int_equal(chain_index_new(&idx, t3), 0);
	struct chain_node *last = synth_chain(idx, 2019, t_600, bits_min_after_2016);
	/* more than 20 minutes after the parent: minimum difficulty */
	assert_int_equal(chain_next_work_required(last, last->time + 1201, t3), 0x1d00ffff);
	/* within 20 minutes: walk back over the minimum-difficulty blocks */
	assert_int_equal(chain_next_work_required(last, last->time + 1200, t3), 0x1c0fffff);
	chain_index_free(idx);

	/* the walk stops at a period's first block, even one at minimum difficulty */
	assert_int_equal(chain_index_new(&idx, t3), 0);
	last = synth_chain(idx, 2019, t_600, bits_min_from_2016);
	assert_int_equal(chain_next_work_required(last, last->time + 1, t3), 0x1d00ffff);
	chain_index_free(idx);

	/* mainnet has no such rule */
	assert_int_equal(chain_index_new(&idx, proto_params(PROTO_NET_MAIN)), 0);
	last = synth_chain(idx, 2019, t_600, bits_min_after_2016);
	assert_int_equal(
	    chain_next_work_required(last, last->time + 5000, proto_params(PROTO_NET_MAIN)),
	    0x1d00ffff);
	chain_index_free(idx);
}

/* testnet4 period 2016..4031: first block 0x1c0fffff, the last at minimum difficulty. */
static uint32_t bits_t4(int32_t h)
{
	return h == 4031 ? 0x1d00ffff : 0x1c0fffff;
}

static void test_retarget_testnet4_bip94(void **state)
{
	(void)state;
	const struct proto_params *t4 = proto_params(PROTO_NET_TESTNET4);
	struct chain_index *idx;
	struct chain_state st;
	assert_int_equal(chain_index_new(&idx, t4), 0);
	struct chain_node *last = synth_chain(idx, 4031, t_600, bits_t4);
	struct chain_node *first = chain_node_ancestor(last, 2016);
	/* BIP94: the period's first block's bits, not the last's */
	uint32_t want =
	    proto_next_work_required(t4, 0x1d00ffff, first->bits, first->time, last->time);
	uint32_t got = chain_next_work_required(last, last->time + 600, t4);
	assert_int_equal(got, want);
	struct proto_params t4_legacy = *t4;
	t4_legacy.enforce_bip94 = false;
	assert_int_not_equal(got, chain_next_work_required(last, last->time + 600, &t4_legacy));

	/* time-timewarp-attack at the boundary: more than 600 s before the parent */
	struct proto_block_header h;
	memset(&h, 0, sizeof(h));
	h.version = 0x20000000;
	h.prev = last->hash;
	h.time = last->time - CHAIN_MAX_TIMEWARP - 1;
	h.bits = chain_next_work_required(last, h.time, t4);
	tu_assert_reject(chain_check_header_contextual(&h, last, NOW, t4, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "time-timewarp-attack");
	h.time++;
	h.bits = chain_next_work_required(last, h.time, t4);
	tu_assert_ok(chain_check_header_contextual(&h, last, NOW, t4, &st), &st);
	/* not at a boundary, or without BIP94: no such rule */
	struct chain_node *mid = last->prev;
	h.time = mid->time - CHAIN_MAX_TIMEWARP - 1;
	h.bits = chain_next_work_required(mid, h.time, t4);
	assert_true((int64_t)h.time > chain_node_mtp(mid));
	tu_assert_ok(chain_check_header_contextual(&h, mid, NOW, t4, &st), &st);
	h.time = last->time - CHAIN_MAX_TIMEWARP - 1;
	h.bits = chain_next_work_required(last, h.time, &t4_legacy);
	tu_assert_ok(chain_check_header_contextual(&h, last, NOW, &t4_legacy, &st), &st);
	chain_index_free(idx);
}

/* ---- work arithmetic ---------------------------------------------------- */

static void test_work(void **state)
{
	(void)state;
	struct chain_work w, sum;
	char hex[65];
	chain_work_of_bits(0x1d00ffff, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "0000000000000000000000000000000000000000000000000000000100010001");
	chain_work_of_bits(0x207fffff, &w);
	assert_int_equal(w.limb[0], 2);
	assert_int_equal(w.limb[1] | w.limb[2] | w.limb[3], 0);
	/* a current mainnet target: Core's GetBlockProof(0x17034219) */
	chain_work_of_bits(0x17034219, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "000000000000000000000000000000000000000000004e9235f043634662e0cb");
	/* no work from zero, negative or overflowing bits */
	chain_work_of_bits(0, &w);
	assert_int_equal(w.limb[0] | w.limb[1] | w.limb[2] | w.limb[3], 0);
	chain_work_of_bits(0x04923456, &w);
	assert_int_equal(w.limb[0] | w.limb[1] | w.limb[2] | w.limb[3], 0);
	chain_work_of_bits(0xff123456, &w);
	assert_int_equal(w.limb[0] | w.limb[1] | w.limb[2] | w.limb[3], 0);
	/* target 1 (0x01010000 is 1): 2^256 / 2 */
	chain_work_of_bits(0x01010000, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "8000000000000000000000000000000000000000000000000000000000000000");

	/* -minimumchainwork's forms, and the networks' values (Core 29) */
	struct chain_work m;
	assert_int_equal(chain_work_from_hex("0x1772", &m), 0);
	assert_int_equal(m.limb[0], 0x1772);
	assert_int_equal(chain_work_from_hex("b1f3b93b65b16d035a82be84", &m), 0);
	chain_work_from_le(proto_params(PROTO_NET_MAIN)->min_chain_work.b, &w);
	assert_int_equal(chain_work_cmp(&m, &w), 0);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "0000000000000000000000000000000000000000b1f3b93b65b16d035a82be84");
	chain_work_from_le(proto_params(PROTO_NET_SIGNET)->min_chain_work.b, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "000000000000000000000000000000000000000000000000000002b517f3d1a1");
	chain_work_from_le(proto_params(PROTO_NET_TESTNET4)->min_chain_work.b, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "0000000000000000000000000000000000000000000001d6dce8651b6094e4c1");
	chain_work_from_le(proto_params(PROTO_NET_TESTNET3)->min_chain_work.b, &w);
	chain_work_hex(&w, hex);
	assert_string_equal(hex,
	                    "0000000000000000000000000000000000000000000015f5e0c9f13455b0eb17");
	chain_work_from_le(proto_params(PROTO_NET_REGTEST)->min_chain_work.b, &w);
	assert_int_equal(w.limb[0] | w.limb[1] | w.limb[2] | w.limb[3], 0);
	assert_int_equal(chain_work_from_hex("", &m), CHAIN_EARG);
	assert_int_equal(chain_work_from_hex("0x", &m), CHAIN_EARG);
	assert_int_equal(chain_work_from_hex("12g4", &m), CHAIN_EARG);
	assert_int_equal(
	    chain_work_from_hex("1"
	                        "0000000000000000000000000000000000000000000000000000000000000000",
	                        &m),
	    CHAIN_EARG);

	/* carries across limbs, saturation, comparison */
	memset(&sum, 0, sizeof(sum));
	sum.limb[0] = UINT64_MAX;
	memset(&w, 0, sizeof(w));
	w.limb[0] = 1;
	chain_work_add(&sum, &w);
	assert_int_equal(sum.limb[0], 0);
	assert_int_equal(sum.limb[1], 1);
	assert_int_equal(chain_work_cmp(&sum, &w), 1);
	assert_int_equal(chain_work_cmp(&w, &sum), -1);
	assert_int_equal(chain_work_cmp(&w, &w), 0);
	memset(&sum, 0xff, sizeof(sum));
	chain_work_add(&sum, &w);
	chain_work_hex(&sum, hex);
	assert_string_equal(hex,
	                    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	memset(&w, 0, sizeof(w));
	w.limb[1] = 1;
	assert_true(chain_work_double(&w) == 18446744073709551616.0);

	/* Core's GetDifficulty */
	assert_true(chain_difficulty(0x1d00ffff) == 1.0);
	assert_true(chain_difficulty(0x207fffff) > 4.65e-10 &&
	            chain_difficulty(0x207fffff) < 4.66e-10);
	double d = chain_difficulty(0x1b0404cb);
	assert_true(d > 16307.4209385 && d < 16307.4209386);
}

/* ---- database records ----------------------------------------------------- */

struct collect {
	uint8_t (*recs)[CHAIN_NODE_RECORD_SIZE];
	size_t n;
};

static int collect_fn(struct chain_node *n, void *arg)
{
	struct collect *c = arg;
	chain_node_encode(n, c->recs[c->n++]);
	return 0;
}

static void assert_same_node(const struct chain_node *a, const struct chain_node *b)
{
	assert_memory_equal(a->hash.b, b->hash.b, 32);
	assert_int_equal(a->height, b->height);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->time, b->time);
	assert_int_equal(a->bits, b->bits);
	assert_int_equal(a->nonce, b->nonce);
	assert_memory_equal(a->merkle_root.b, b->merkle_root.b, 32);
	assert_memory_equal(&a->work, &b->work, sizeof(a->work));
	assert_int_equal(a->time_max, b->time_max);
	assert_int_equal(a->n_tx, b->n_tx);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->file, b->file);
	assert_int_equal(a->data_pos, b->data_pos);
	assert_int_equal(a->undo_pos, b->undo_pos);
	assert_int_equal(a->prev == NULL, b->prev == NULL);
	if (a->prev)
		assert_memory_equal(a->prev->hash.b, b->prev->hash.b, 32);
	assert_int_equal(a->skip == NULL, b->skip == NULL);
	if (a->skip)
		assert_memory_equal(a->skip->hash.b, b->skip->hash.b, 32);
}

static void test_records(void **state)
{
	(void)state;
	struct chain_index *idx = regtest_index(260), *copy;
	for (size_t i = 0; i < fx.stale.n; i++)
		add(idx, &fx.stale, i);
	for (size_t i = 260; i < MAIN_HEIGHT; i++)
		add(idx, &fx.main, i);
	/* as the block store and connect would leave them */
	struct chain_node *g = chain_index_genesis(idx);
	g->status = CHAIN_VALID_SCRIPTS | CHAIN_HAVE_DATA;
	g->file = 0;
	g->data_pos = 8;
	g->n_tx = 1;
	g->seq = 1;
	struct chain_node *tip = chain_index_best_header(idx);
	tip->status |= CHAIN_HAVE_DATA | CHAIN_HAVE_UNDO;
	tip->file = 3;
	tip->data_pos = 123456;
	tip->undo_pos = 654321;
	tip->n_tx = 7;
	tip->seq = 42;

	size_t count = chain_index_count(idx);
	struct collect c = {calloc(count, CHAIN_NODE_RECORD_SIZE), 0};
	assert_non_null(c.recs);
	assert_int_equal(chain_index_foreach(idx, collect_fn, &c), 0);
	assert_int_equal(c.n, count);

	/* reload in the order written (parents first) */
	assert_int_equal(chain_index_new(&copy, proto_params(PROTO_NET_REGTEST)), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct chain_node n;
		struct proto_hash prev;
		assert_int_equal(chain_node_decode(c.recs[i], CHAIN_NODE_RECORD_SIZE, &n, &prev),
		                 0);
		assert_false(n.dirty);
		assert_int_equal(chain_index_insert_loaded(copy, &n, &prev, NULL), 0);
	}
	chain_index_recompute_best(copy);
	assert_int_equal(chain_index_count(copy), count);
	assert_memory_equal(chain_index_best_header(copy)->hash.b, tip->hash.b, 32);
	for (size_t i = 0; i < c.n; i++) {
		struct chain_node n;
		struct proto_hash prev;
		assert_int_equal(chain_node_decode(c.recs[i], CHAIN_NODE_RECORD_SIZE, &n, &prev),
		                 0);
		struct chain_node *a = chain_index_find(idx, &n.hash),
		                  *b = chain_index_find(copy, &n.hash);
		assert_non_null(a);
		assert_non_null(b);
		assert_same_node(a, b);
		assert_false(b->dirty);
	}

	/* twice is refused; an orphan too */
	struct chain_node n;
	struct proto_hash prev;
	assert_int_equal(chain_node_decode(c.recs[5], CHAIN_NODE_RECORD_SIZE, &n, &prev), 0);
	assert_int_equal(chain_index_insert_loaded(copy, &n, &prev, NULL), CHAIN_EEXIST);
	n.hash.b[0] ^= 1;
	prev.b[0] ^= 1;
	assert_int_equal(chain_index_insert_loaded(copy, &n, &prev, NULL), CHAIN_ENOTFOUND);

	/* damaged records: wrong length, unknown format, a header field changed */
	uint8_t rec[CHAIN_NODE_RECORD_SIZE];
	memcpy(rec, c.recs[5], sizeof(rec));
	assert_int_equal(chain_node_decode(rec, sizeof(rec) - 1, &n, &prev), CHAIN_ECORRUPT);
	rec[0] = 9;
	assert_int_equal(chain_node_decode(rec, sizeof(rec), &n, &prev), CHAIN_ECORRUPT);
	memcpy(rec, c.recs[5], sizeof(rec));
	rec[88] ^= 1; /* nonce */
	assert_int_equal(chain_node_decode(rec, sizeof(rec), &n, &prev), CHAIN_ECORRUPT);

	/* The frame checksum rides in bytes 180-187 of a version-1 record: a
	 * record written before it (zeros there) reads as "not known", one
	 * with it reads it back, and the bytes an older peerd checks are
	 * the same either way. */
	assert_int_equal(chain_node_decode(c.recs[5], sizeof(rec), &n, &prev), 0);
	assert_false(n.has_checksum);
	n.has_checksum = true;
	n.checksum = 0xdeadbeef;
	struct chain_node *orig = chain_index_find(idx, &n.hash);
	assert_non_null(orig);
	orig->has_checksum = true;
	orig->checksum = 0xdeadbeef;
	chain_node_encode(orig, rec);
	assert_memory_equal(rec, c.recs[5], 180);
	struct chain_node back;
	assert_int_equal(chain_node_decode(rec, sizeof(rec), &back, &prev), 0);
	assert_true(back.has_checksum);
	assert_int_equal(back.checksum, 0xdeadbeef);
	orig->has_checksum = false;
	free(c.recs);
	chain_index_free(copy);
	chain_index_free(idx);
}

/* The index under allocation failure: every failure is clean (ASan checks leaks). */
static void test_out_of_memory(void **state)
{
	(void)state;
	struct chain_index *idx;
	for (long k = 0; k < 3; k++) {
		base_alloc_fail_after(k);
		int rc = chain_index_new(&idx, proto_params(PROTO_NET_REGTEST));
		base_alloc_fail_after(-1);
		if (rc == 0)
			chain_index_free(idx);
		else
			assert_int_equal(rc, CHAIN_ENOMEM);
	}
	/* growth past the first slab and table under failure injection */
	assert_int_equal(chain_index_new(&idx, proto_params(PROTO_NET_MAIN)), 0);
	base_alloc_fail_after(0);
	struct chain_node n;
	memset(&n, 0, sizeof(n));
	int rc = 0;
	struct chain_node *prev = chain_index_genesis(idx);
	for (int32_t h = 1; h <= 3000 && rc == 0; h++) {
		proto_put_le32(n.hash.b, (uint32_t)h);
		n.hash.b[31] = 1;
		rc = chain_index_insert_loaded(idx, &n, &prev->hash, &prev);
	}
	base_alloc_fail_after(-1);
	assert_int_equal(rc, CHAIN_ENOMEM);
	chain_index_free(idx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regtest_headers),
	    cmocka_unit_test(test_mtp_and_time_max),
	    cmocka_unit_test(test_locator),
	    cmocka_unit_test(test_tie_first_seen),
	    cmocka_unit_test(test_failed_and_missing),
	    cmocka_unit_test(test_header_rejects),
	    cmocka_unit_test(test_mainnet_genesis_chain),
	    cmocka_unit_test(test_retarget_mainnet),
	    cmocka_unit_test(test_retarget_testnet3_min_difficulty),
	    cmocka_unit_test(test_retarget_testnet4_bip94),
	    cmocka_unit_test(test_work),
	    cmocka_unit_test(test_records),
	    cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
