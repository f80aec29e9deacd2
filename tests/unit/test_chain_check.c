/*
 * tests/unit/test_chain_check.c: CheckBlock and ContextualCheckBlock.
 * Every block of Core's regtest chain (and the stale branch, the
 * mainnet-genesis chain and mainnet block 413,567) passes both; then each
 * reject reason from a crafted block made out of a valid one. Also the
 * height rules: BIP34 script, subsidy, script flags, finality and BIP68
 * sequence locks, and that every script failure's reason is kept whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "script/script.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

#define REGTEST_MAGIC 0xdab5bffau
#define MAIN_MAGIC    0xd9b4bef9u
#define NOW           2000000000

static struct tu_records regtest, stale;
static struct chain_index *ridx; /* every regtest header, both branches */
static const struct proto_params *rp;

static int setup(void **state)
{
	(void)state;
	struct chain_state st;
	struct proto_block_header h;
	rp = proto_params(PROTO_NET_REGTEST);
	tu_records_load(tu_vector("regtest/regtest_chain.dat"), REGTEST_MAGIC, &regtest);
	tu_records_load(tu_vector("regtest/regtest_stale_branch.dat"), REGTEST_MAGIC, &stale);
	if (chain_index_new(&ridx, rp))
		return -1;
	for (size_t i = 0; i < regtest.n; i++) {
		tu_record_header(&regtest, i, &h);
		if (chain_index_add_header(ridx, &h, NOW, NULL, &st))
			return -1;
	}
	for (size_t i = 0; i < stale.n; i++) {
		tu_record_header(&stale, i, &h);
		if (chain_index_add_header(ridx, &h, NOW, NULL, &st))
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	chain_index_free(ridx);
	tu_records_free(&regtest);
	tu_records_free(&stale);
	return 0;
}

static void decode(const uint8_t *raw, size_t len, struct proto_block *b)
{
	size_t off;
	int err = proto_block_decode(raw, len, b, &off);
	if (err)
		fail_msg("block decode: %s at %zu", proto_strerror(err), off);
}

static struct chain_node *parent_of(const struct proto_block *b)
{
	struct chain_node *prev = chain_index_find(ridx, &b->hdr.prev);
	assert_non_null(prev);
	return prev;
}

/* ---- valid blocks pass ----------------------------------------------------- */

static void check_all(const struct tu_records *r)
{
	struct proto_block b;
	struct chain_state st;
	proto_block_init(&b);
	for (size_t i = 0; i < r->n; i++) {
		decode(r->blk[i], r->len[i], &b);
		tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
		tu_assert_ok(chain_check_block_contextual(&b, parent_of(&b), rp, &st), &st);
	}
	proto_block_release(&b);
}

static void test_regtest_blocks_pass(void **state)
{
	(void)state;
	check_all(&regtest);
	check_all(&stale);
}

static void test_mainnet_blocks_pass(void **state)
{
	(void)state;
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	struct tu_records r;
	struct chain_index *idx;
	struct chain_state st;
	struct proto_block b;
	struct chain_node *n;
	proto_block_init(&b);
	tu_records_load(tu_vector("blocks/genesis_chain_0_to_4.dat"), MAIN_MAGIC, &r);
	assert_int_equal(chain_index_new(&idx, main), 0);
	for (size_t i = 0; i < r.n; i++) {
		decode(r.blk[i], r.len[i], &b);
		tu_assert_ok(chain_check_block(&b, main, true, true, &st), &st);
		tu_assert_ok(chain_index_add_header(idx, &b.hdr, NOW, &n, &st), &st);
		tu_assert_ok(chain_check_block_contextual(&b, n->prev, main, &st), &st);
	}
	chain_index_free(idx);
	tu_records_free(&r);

	/* block 413,567: a full mainnet block (BIP34 on, segwit not yet) */
	size_t len;
	uint8_t *raw = tu_read_file(tu_vector("blocks/block413567.raw"), &len);
	decode(raw, len, &b);
	tu_assert_ok(chain_check_block(&b, main, true, true, &st), &st);
	struct chain_node prev;
	memset(&prev, 0, sizeof(prev));
	prev.height = 413566;
	prev.time = b.hdr.time - 600;
	tu_assert_ok(chain_check_block_contextual(&b, &prev, main, &st), &st);
	/* at another height its coinbase is wrong */
	prev.height = 413567;
	tu_assert_reject(chain_check_block_contextual(&b, &prev, main, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-cb-height");
	free(raw);
	proto_block_release(&b);
}

/* ---- crafting blocks ------------------------------------------------------------ */

/* What to change while re-serializing a transaction. */
struct tx_edit {
	const uint8_t *sig0; /* new scriptSig of input 0 (NULL: keep) */
	size_t sig0_len;
	int drop_out;        /* output to leave out, -1 none */
	const uint8_t *wit0; /* input 0's witness becomes this one item (NULL: keep) */
	size_t wit0_len;
	bool strip_witness; /* no witness at all */
	bool set_locktime;
	uint32_t locktime;
	bool set_value0;
	int64_t value0;
	const uint8_t *extra_spk; /* append an output of value 0 with this script */
	size_t extra_spk_len;
};

static const struct tx_edit NO_EDIT = {.drop_out = -1};

static bool input_has_witness(const struct proto_tx *tx, uint32_t i, const struct tx_edit *e)
{
	if (e->strip_witness)
		return false;
	if (i == 0 && e->wit0)
		return true;
	return tx->vin[i].wit_count > 0;
}

static void write_tx(struct proto_writer *w, const struct proto_tx *tx, const struct tx_edit *e)
{
	bool wit = false;
	for (uint32_t i = 0; i < tx->n_in; i++)
		wit |= input_has_witness(tx, i, e);
	proto_write_u32le(w, (uint32_t)tx->version);
	if (wit) {
		proto_write_u8(w, 0);
		proto_write_u8(w, 1);
	}
	proto_write_compact(w, tx->n_in);
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct proto_txin *in = &tx->vin[i];
		if (i == 0 && e->sig0)
			proto_txin_encode(in, e->sig0, (uint32_t)e->sig0_len, w);
		else
			proto_txin_encode(in, proto_txin_script(tx, in), in->script_len, w);
	}
	uint32_t n_out = tx->n_out - (e->drop_out >= 0) + (e->extra_spk != NULL);
	proto_write_compact(w, n_out);
	for (uint32_t i = 0; i < tx->n_out; i++) {
		if ((int)i == e->drop_out)
			continue;
		struct proto_txout o = tx->vout[i];
		if (i == 0 && e->set_value0)
			o.value = e->value0;
		proto_txout_encode(&o, proto_txout_script(tx, &tx->vout[i]), o.script_len, w);
	}
	if (e->extra_spk) {
		struct proto_txout o = {0};
		proto_txout_encode(&o, e->extra_spk, (uint32_t)e->extra_spk_len, w);
	}
	if (wit) {
		for (uint32_t i = 0; i < tx->n_in; i++) {
			if (!input_has_witness(tx, i, e)) {
				proto_write_compact(w, 0);
			} else if (i == 0 && e->wit0) {
				proto_write_compact(w, 1);
				proto_write_varbytes(w, e->wit0, e->wit0_len);
			} else {
				struct proto_witness_iter it;
				struct proto_span item;
				proto_write_compact(w, tx->vin[i].wit_count);
				proto_witness_iter_init(&it, tx, &tx->vin[i]);
				while (proto_witness_iter_next(&it, &item))
					proto_write_varbytes(w, item.data, item.len);
			}
		}
	}
	proto_write_u32le(w, e->set_locktime ? e->locktime : tx->locktime);
}

/* A block being put together from transactions, then decoded into `out`. */
struct craft {
	struct proto_writer txs;
	uint32_t n;
};

static void craft_init(struct craft *c)
{
	proto_writer_init(&c->txs);
	c->n = 0;
}

static void craft_tx(struct craft *c, const struct proto_tx *tx, const struct tx_edit *e)
{
	write_tx(&c->txs, tx, e ? e : &NO_EDIT);
	c->n++;
}

/* Decode the crafted block with src's header; fix the merkle root and PoW when asked. */
static void craft_finish(struct craft *c, const struct proto_block_header *hdr, bool fix_merkle,
                         struct proto_block *out)
{
	struct proto_writer w;
	proto_writer_init(&w);
	proto_block_header_encode(hdr, &w);
	proto_write_compact(&w, c->n);
	proto_write_bytes(&w, c->txs.buf, c->txs.len);
	assert_int_equal(w.err, 0);
	decode(w.buf, w.len, out);
	proto_writer_release(&w);
	proto_writer_release(&c->txs);
	if (fix_merkle) {
		bool mutated;
		assert_int_equal(proto_block_merkle_root(out, &out->hdr.merkle_root, &mutated), 0);
		tu_grind(&out->hdr, rp);
	}
}

/* The regtest block used as the base: odd tx count >= 3, with witness data. */
static size_t pick_base(struct proto_block *b)
{
	for (size_t i = 140; i < regtest.n; i++) {
		decode(regtest.blk[i], regtest.len[i], b);
		bool wit = false;
		for (uint32_t t = 1; t < b->n_tx; t++)
			wit |= b->txs[t].has_witness;
		if (b->n_tx >= 3 && b->n_tx % 2 == 1 && wit &&
		    proto_block_witness_commitment_index(b) >= 0)
			return i;
	}
	fail_msg("no suitable base block");
	return 0;
}

/* A second coinbase that is not a copy of the first. */
static const char OTHER_COINBASE[] =
    "01000000010000000000000000000000000000000000000000000000000000"
    "000000000000ffffffff03020304ffffffff0100000000000000000151000"
    "00000";

static void test_check_block_rejects(void **state)
{
	(void)state;
	struct proto_block base, b;
	struct chain_state st;
	struct craft c;
	proto_block_init(&base);
	proto_block_init(&b);
	size_t bi = pick_base(&base);
	int32_t height = (int32_t)bi + 1;
	assert_true(height > 140);

	/* bad-txnmrklroot */
	base.hdr.merkle_root.b[5] ^= 1;
	tu_grind(&base.hdr, rp);
	tu_assert_reject(chain_check_block(&base, rp, true, true, &st), &st, CHAIN_RESULT_MUTATED,
	                 "bad-txnmrklroot");
	/* not looked at when check_merkle is off */
	tu_assert_ok(chain_check_block(&base, rp, true, false, &st), &st);
	decode(regtest.blk[bi], regtest.len[bi], &base);

	/* high-hash */
	struct proto_hash hash;
	struct proto_block_header good = base.hdr;
	do {
		base.hdr.nonce++;
		proto_block_header_hash(&base.hdr, &hash);
	} while (proto_check_pow(&hash, base.hdr.bits, &rp->pow_limit));
	tu_assert_reject(chain_check_block(&base, rp, true, true, &st), &st,
	                 CHAIN_RESULT_INVALID_HEADER, "high-hash");
	tu_assert_ok(chain_check_block(&base, rp, false, true, &st), &st);
	base.hdr = good;

	/* bad-txns-duplicate: the last tx repeated keeps the root (odd count) */
	craft_init(&c);
	for (uint32_t t = 0; t < base.n_tx; t++)
		craft_tx(&c, &base.txs[t], NULL);
	craft_tx(&c, &base.txs[base.n_tx - 1], NULL);
	craft_finish(&c, &base.hdr, false, &b);
	tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st, CHAIN_RESULT_MUTATED,
	                 "bad-txns-duplicate");

	/* bad-cb-missing */
	craft_init(&c);
	for (uint32_t t = 1; t < base.n_tx; t++)
		craft_tx(&c, &base.txs[t], NULL);
	craft_finish(&c, &base.hdr, true, &b);
	tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st, CHAIN_RESULT_CONSENSUS,
	                 "bad-cb-missing");

	/* bad-cb-multiple */
	struct proto_tx other;
	proto_tx_init(&other);
	size_t olen;
	uint8_t *oraw = tu_unhex(OTHER_COINBASE, &olen);
	assert_int_equal(proto_tx_decode_buf(oraw, olen, &other, NULL), 0);
	assert_true(proto_tx_is_coinbase(&other));
	craft_init(&c);
	craft_tx(&c, &base.txs[0], NULL);
	craft_tx(&c, &other, NULL);
	for (uint32_t t = 1; t < base.n_tx; t++)
		craft_tx(&c, &base.txs[t], NULL);
	craft_finish(&c, &base.hdr, true, &b);
	tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st, CHAIN_RESULT_CONSENSUS,
	                 "bad-cb-multiple");

	/* bad-blk-length: no transactions (the root of nothing is zero) */
	craft_init(&c);
	struct proto_block_header empty_hdr = base.hdr;
	memset(&empty_hdr.merkle_root, 0, 32);
	tu_grind(&empty_hdr, rp);
	craft_finish(&c, &empty_hdr, false, &b);
	assert_int_equal(b.n_tx, 0);
	tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st, CHAIN_RESULT_CONSENSUS,
	                 "bad-blk-length");

	/* a transaction's own rule: bad-txns-vout-negative */
	struct tx_edit neg = NO_EDIT;
	neg.set_value0 = true;
	neg.value0 = -1;
	craft_init(&c);
	for (uint32_t t = 0; t < base.n_tx; t++)
		craft_tx(&c, &base.txs[t], t == 1 ? &neg : NULL);
	craft_finish(&c, &base.hdr, true, &b);
	tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st, CHAIN_RESULT_CONSENSUS,
	                 "bad-txns-vout-negative");
	char want[128], hex[65];
	proto_hash_to_hex(proto_tx_txid(&b.txs[1]), hex);
	snprintf(want, sizeof(want), "Transaction check failed (tx hash %s) ", hex);
	assert_string_equal(st.debug, want);

	/* bad-blk-sigops: 20,001 CHECKSIGs in a coinbase output; 20,000 pass */
	static uint8_t sigops[20001];
	memset(sigops, SCRIPT_OP_CHECKSIG, sizeof(sigops));
	for (int over = 0; over < 2; over++) {
		/* the base block's own legacy sigops count too: leave room */
		struct proto_block *bb = &base;
		unsigned have = 0;
		for (uint32_t t = 0; t < bb->n_tx; t++) {
			const struct proto_tx *tx = &bb->txs[t];
			for (uint32_t i = 0; i < tx->n_in; i++)
				have += script_sigop_count(proto_txin_script(tx, &tx->vin[i]),
				                           tx->vin[i].script_len, false);
			for (uint32_t i = 0; i < tx->n_out; i++)
				have += script_sigop_count(proto_txout_script(tx, &tx->vout[i]),
				                           tx->vout[i].script_len, false);
		}
		struct tx_edit e = NO_EDIT;
		e.extra_spk = sigops;
		e.extra_spk_len = 20000 - have + (size_t)over;
		craft_init(&c);
		for (uint32_t t = 0; t < base.n_tx; t++)
			craft_tx(&c, &base.txs[t], t == 0 ? &e : NULL);
		craft_finish(&c, &base.hdr, true, &b);
		if (over)
			tu_assert_reject(chain_check_block(&b, rp, true, true, &st), &st,
			                 CHAIN_RESULT_CONSENSUS, "bad-blk-sigops");
		else
			tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	}

	free(oraw);
	proto_tx_release(&other);
	proto_block_release(&b);
	proto_block_release(&base);
}

/* Rebuild the base with tx t edited (coinbase when t == 0); merkle root and PoW fixed. */
static void rebuild(const struct proto_block *base, uint32_t t, const struct tx_edit *e,
                    struct proto_block *out)
{
	struct craft c;
	craft_init(&c);
	for (uint32_t i = 0; i < base->n_tx; i++)
		craft_tx(&c, &base->txs[i], i == t ? e : NULL);
	craft_finish(&c, &base->hdr, true, out);
}

/* Point the coinbase's witness commitment at the block's actual witness root. */
static void fix_commitment(struct proto_block *b)
{
	struct proto_hash root;
	uint8_t buf[64], commit[32];
	int pos = proto_block_witness_commitment_index(b);
	assert_true(pos >= 0);
	assert_int_equal(proto_block_witness_merkle_root(b, &root), 0);
	struct proto_witness_iter it;
	struct proto_span nonce;
	proto_witness_iter_init(&it, &b->txs[0], &b->txs[0].vin[0]);
	assert_true(proto_witness_iter_next(&it, &nonce));
	memcpy(buf, root.b, 32);
	memcpy(buf + 32, nonce.data, 32);
	proto_sha256d(buf, 64, commit);
	/* a new commitment script, as the last output */
	uint8_t spk[38] = {0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed};
	memcpy(spk + 6, commit, 32);
	struct tx_edit e = NO_EDIT;
	e.drop_out = pos;
	e.extra_spk = spk;
	e.extra_spk_len = sizeof(spk);
	struct proto_block copy;
	proto_block_init(&copy);
	struct proto_writer w;
	proto_writer_init(&w);
	proto_block_encode(b, &w);
	decode(w.buf, w.len, &copy);
	proto_writer_release(&w);
	rebuild(&copy, 0, &e, b);
	proto_block_release(&copy);
}

static void test_contextual_rejects(void **state)
{
	(void)state;
	struct proto_block base, b;
	struct chain_state st;
	proto_block_init(&base);
	proto_block_init(&b);
	size_t bi = pick_base(&base);
	int32_t height = (int32_t)bi + 1;
	struct chain_node *prev = parent_of(&base);
	assert_int_equal(prev->height, height - 1);
	tu_assert_ok(chain_check_block_contextual(&base, prev, rp, &st), &st);

	/* bad-cb-height: the coinbase claims the next height */
	const struct proto_tx *cb = &base.txs[0];
	uint8_t want[CHAIN_BIP34_SCRIPT_MAX], sig[100];
	size_t n = chain_bip34_script(height, want);
	assert_memory_equal(proto_txin_script(cb, &cb->vin[0]), want, n);
	size_t m = chain_bip34_script(height + 1, sig);
	memcpy(sig + m, proto_txin_script(cb, &cb->vin[0]) + n, cb->vin[0].script_len - n);
	struct tx_edit e = NO_EDIT;
	e.sig0 = sig;
	e.sig0_len = m + cb->vin[0].script_len - n;
	rebuild(&base, 0, &e, &b);
	tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-cb-height");
	/* without BIP34 nobody minds */
	struct proto_params nobip34 = *rp;
	nobip34.bip34_height = 100000;
	int rc = chain_check_block_contextual(&b, prev, &nobip34, &st);
	/* the coinbase changed, so its commitment still holds: only the height was wrong */
	tu_assert_ok(rc, &st);

	/* unexpected-witness: the commitment output removed, witnesses kept */
	e = NO_EDIT;
	e.drop_out = proto_block_witness_commitment_index(&base);
	e.strip_witness = true; /* the coinbase's reserved value goes with it */
	rebuild(&base, 0, &e, &b);
	tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st, CHAIN_RESULT_MUTATED,
	                 "unexpected-witness");
	/* ... and witness data before segwit, commitment or not */
	struct proto_params late = *rp;
	late.segwit_height = 100000;
	tu_assert_reject(chain_check_block_contextual(&base, prev, &late, &st), &st,
	                 CHAIN_RESULT_MUTATED, "unexpected-witness");

	/* bad-witness-nonce-size: a 31-byte reserved value */
	static const uint8_t nonce31[31], nonce32[32] = {1};
	e = NO_EDIT;
	e.wit0 = nonce31;
	e.wit0_len = sizeof(nonce31);
	rebuild(&base, 0, &e, &b);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st, CHAIN_RESULT_MUTATED,
	                 "bad-witness-nonce-size");
	/* bad-witness-merkle-match: another 32-byte reserved value */
	e.wit0 = nonce32;
	e.wit0_len = sizeof(nonce32);
	rebuild(&base, 0, &e, &b);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st, CHAIN_RESULT_MUTATED,
	                 "bad-witness-merkle-match");
	/* a witness changed in another tx breaks the commitment too */
	e = NO_EDIT;
	uint32_t wt = 1;
	while (!base.txs[wt].has_witness)
		wt++;
	e.wit0 = nonce32;
	e.wit0_len = sizeof(nonce32);
	rebuild(&base, wt, &e, &b);
	assert_memory_equal(b.hdr.merkle_root.b, base.hdr.merkle_root.b, 32);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st, CHAIN_RESULT_MUTATED,
	                 "bad-witness-merkle-match");
	/* ... and passes once the commitment follows it */
	fix_commitment(&b);
	tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	tu_assert_ok(chain_check_block_contextual(&b, prev, rp, &st), &st);

	/* bad-blk-weight: a 4 MB witness item, committed to */
	static uint8_t big[PROTO_MAX_BLOCK_WEIGHT];
	e.wit0 = big;
	e.wit0_len = sizeof(big);
	rebuild(&base, wt, &e, &b);
	fix_commitment(&b);
	tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	assert_true(proto_block_weight(&b) > PROTO_MAX_BLOCK_WEIGHT);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-blk-weight");

	/* bad-txns-nonfinal: a wallet tx (sequence not final) locked to this height */
	uint32_t nt = 1;
	while (nt < base.n_tx && base.txs[nt].vin[0].sequence == SCRIPT_SEQUENCE_FINAL)
		nt++;
	assert_true(nt < base.n_tx);
	e = NO_EDIT;
	e.set_locktime = true;
	e.locktime = (uint32_t)height;
	rebuild(&base, nt, &e, &b);
	fix_commitment(&b);
	tu_assert_ok(chain_check_block(&b, rp, true, true, &st), &st);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-txns-nonfinal");
	e.locktime = (uint32_t)height - 1;
	rebuild(&base, nt, &e, &b);
	fix_commitment(&b);
	tu_assert_ok(chain_check_block_contextual(&b, prev, rp, &st), &st);
	/* a time lock counts against the parent's MTP once CSV is active */
	int64_t mtp = chain_node_mtp(prev);
	e.locktime = (uint32_t)mtp;
	rebuild(&base, nt, &e, &b);
	fix_commitment(&b);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-txns-nonfinal");
	e.locktime = (uint32_t)mtp - 1;
	rebuild(&base, nt, &e, &b);
	fix_commitment(&b);
	tu_assert_ok(chain_check_block_contextual(&b, prev, rp, &st), &st);
	/* before CSV the block's own time is the cutoff */
	struct proto_params nocsv = *rp;
	nocsv.csv_height = 100000;
	e.locktime = b.hdr.time - 1;
	rebuild(&base, nt, &e, &b);
	fix_commitment(&b);
	assert_true((int64_t)b.hdr.time - 1 >= mtp);
	tu_assert_ok(chain_check_block_contextual(&b, prev, &nocsv, &st), &st);
	tu_assert_reject(chain_check_block_contextual(&b, prev, rp, &st), &st,
	                 CHAIN_RESULT_CONSENSUS, "bad-txns-nonfinal");

	proto_block_release(&b);
	proto_block_release(&base);
}

/* ---- rules by height -------------------------------------------------------------- */

static void test_bip34_script(void **state)
{
	(void)state;
	static const struct {
		int32_t height;
		const char *hex;
	} cases[] = {
	    {0, "00"},
	    {1, "51"},
	    {16, "60"},
	    {17, "0111"},
	    {127, "017f"},
	    {128, "028000"},
	    {255, "02ff00"},
	    {256, "020001"},
	    {32767, "02ff7f"},
	    {32768, "03008000"},
	    {227931, "035b7a03"},
	    {8388608, "0400008000"},
	    {INT32_MAX, "04ffffff7f"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t out[CHAIN_BIP34_SCRIPT_MAX];
		size_t n = chain_bip34_script(cases[i].height, out);
		char *hex = tu_hex(out, n);
		assert_string_equal(hex, cases[i].hex);
		free(hex);
	}
}

static void test_subsidy(void **state)
{
	(void)state;
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	assert_int_equal(chain_block_subsidy(0, main), 50 * PROTO_COIN);
	assert_int_equal(chain_block_subsidy(209999, main), 50 * PROTO_COIN);
	assert_int_equal(chain_block_subsidy(210000, main), 25 * PROTO_COIN);
	assert_int_equal(chain_block_subsidy(840000, main), 3 * PROTO_COIN + PROTO_COIN / 8);
	assert_int_equal(chain_block_subsidy(210000 * 32, main), 1);
	assert_int_equal(chain_block_subsidy(210000 * 33, main), 0);
	assert_int_equal(chain_block_subsidy(210000 * 64, main), 0);
	assert_int_equal(chain_block_subsidy(INT32_MAX, main), 0);
	assert_int_equal(chain_block_subsidy(149, rp), 50 * PROTO_COIN);
	assert_int_equal(chain_block_subsidy(150, rp), 25 * PROTO_COIN);
	assert_int_equal(chain_block_subsidy(150 * 63, rp), 0); /* 50e8 >> 63 */
	assert_int_equal(chain_block_subsidy(150 * 64, rp), 0);
	/* Core's subsidy_limit_test: the sum stays below 21 million */
	int64_t sum = 0;
	for (int32_t h = 0; h < 14000000; h += 1000)
		sum += chain_block_subsidy(h, main) * 1000;
	assert_true(sum <= PROTO_MAX_MONEY);
	assert_int_equal(sum, 2099999997690000LL);
}

static void test_script_flags(void **state)
{
	(void)state;
	const struct proto_params *main = proto_params(PROTO_NET_MAIN);
	struct proto_hash h, other;
	memset(&other, 0x11, sizeof(other));
	const uint32_t base = SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS | SCRIPT_VERIFY_TAPROOT;
	assert_int_equal(chain_block_script_flags(main, &other, 0), base);
	assert_int_equal(chain_block_script_flags(main, &other, 363725),
	                 base | SCRIPT_VERIFY_DERSIG);
	assert_int_equal(chain_block_script_flags(main, &other, 481824), SCRIPT_VERIFY_CONSENSUS);
	assert_int_equal(chain_block_script_flags(main, &other, -1), SCRIPT_VERIFY_CONSENSUS);
	assert_int_equal(
	    proto_hash_from_hex("00000000000002dc756eebf4f49723ed8d30cc28a5f108eb94b1ba88ac4f9c22",
	                        &h),
	    0);
	assert_int_equal(chain_block_script_flags(main, &h, 170060), SCRIPT_VERIFY_NONE);
	/* the same hash means nothing on another network */
	assert_int_equal(chain_block_script_flags(proto_params(PROTO_NET_TESTNET4), &h, 0), base);
	assert_int_equal(
	    proto_hash_from_hex("0000000000000000000f14c35b2d841e986ab5441de8c585d5ffe55ea1e395ad",
	                        &h),
	    0);
	assert_int_equal(chain_block_script_flags(main, &h, 692261),
	                 SCRIPT_VERIFY_CONSENSUS & ~SCRIPT_VERIFY_TAPROOT);
	/* regtest: everything from height 1, NULLDUMMY from 0 (segwit at 0) */
	assert_int_equal(chain_block_script_flags(rp, &other, 0), base | SCRIPT_VERIFY_NULLDUMMY);
	assert_int_equal(chain_block_script_flags(rp, &other, 1), SCRIPT_VERIFY_CONSENSUS);
}

static void test_is_final(void **state)
{
	(void)state;
	struct proto_txin in[2];
	struct proto_tx tx;
	proto_tx_init(&tx);
	memset(in, 0, sizeof(in));
	tx.vin = in;
	tx.n_in = 2;
	in[0].sequence = in[1].sequence = 0xfffffffe;
	tx.locktime = 0;
	assert_true(chain_tx_is_final(&tx, 0, 0));
	tx.locktime = 100;
	assert_false(chain_tx_is_final(&tx, 100, 0));
	assert_true(chain_tx_is_final(&tx, 101, 0));
	tx.locktime = SCRIPT_LOCKTIME_THRESHOLD;
	assert_false(chain_tx_is_final(&tx, 1000000, SCRIPT_LOCKTIME_THRESHOLD));
	assert_true(chain_tx_is_final(&tx, 0, SCRIPT_LOCKTIME_THRESHOLD + 1));
	in[0].sequence = in[1].sequence = SCRIPT_SEQUENCE_FINAL;
	assert_true(chain_tx_is_final(&tx, 0, 0));
	in[1].sequence = 0;
	assert_false(chain_tx_is_final(&tx, 0, 0));
}

static void test_sequence_locks(void **state)
{
	(void)state;
	struct proto_txin in[2];
	struct proto_tx tx;
	struct chain_seq_locks l;
	proto_tx_init(&tx);
	memset(in, 0, sizeof(in));
	tx.vin = in;
	tx.n_in = 2;
	tx.version = 2;
	struct chain_node *tip = chain_index_best_header(ridx);
	struct chain_node *p108 = chain_node_ancestor(tip, 108),
	                  *p109 = chain_node_ancestor(tip, 109);
	int32_t heights[2] = {100, 50};

	/* height lock: 10 blocks after the coin's block 100 */
	in[0].sequence = 10;
	in[1].sequence = SCRIPT_SEQUENCE_LOCKTIME_DISABLE | 5000;
	chain_tx_sequence_locks(&tx, true, heights, p108, &l);
	assert_int_equal(l.min_height, 109);
	assert_int_equal(l.min_time, -1);
	assert_false(chain_seq_locks_ok(&l, p108)); /* block 109 */
	assert_true(chain_seq_locks_ok(&l, p109));  /* block 110 */
	assert_false(chain_tx_sequence_locks_ok(&tx, true, heights, p108));
	/* not enforced: before CSV, or version 1 */
	assert_true(chain_tx_sequence_locks_ok(&tx, false, heights, p108));
	tx.version = 1;
	assert_true(chain_tx_sequence_locks_ok(&tx, true, heights, p108));
	/* the version compares unsigned: -1 is above 2 */
	tx.version = -1;
	assert_false(chain_tx_sequence_locks_ok(&tx, true, heights, p108));
	tx.version = 2;

	/* time lock: 3 x 512 s after the MTP of the block before the coin's */
	in[0].sequence = SCRIPT_SEQUENCE_LOCKTIME_DISABLE;
	in[1].sequence = SCRIPT_SEQUENCE_LOCKTIME_TYPE | 3;
	chain_tx_sequence_locks(&tx, true, heights, tip, &l);
	int64_t want = chain_node_mtp(chain_node_ancestor(tip, 49)) + 3 * 512 - 1;
	assert_int_equal(l.min_time, want);
	assert_int_equal(l.min_height, -1);
	/* the first parent whose MTP passes it satisfies the lock */
	struct chain_node *n = chain_node_ancestor(tip, 49);
	while (chain_node_mtp(n) <= want)
		n = chain_node_ancestor(tip, n->height + 1);
	assert_true(chain_seq_locks_ok(&l, n));
	assert_false(chain_seq_locks_ok(&l, n->prev));

	/* a coin from the block itself (mempool): counts from the parent */
	heights[1] = tip->height + 1;
	chain_tx_sequence_locks(&tx, true, heights, tip, &l);
	assert_int_equal(l.min_time, chain_node_mtp(tip) + 3 * 512 - 1);
	in[1].sequence = 0; /* zero relative height: no lock */
	assert_true(chain_tx_sequence_locks_ok(&tx, true, heights, tip));
	in[1].sequence = 1;
	assert_false(chain_tx_sequence_locks_ok(&tx, true, heights, tip));
}

/* submitblock answers Core's reason word for word: a script failure's
 * reason, the longest kind, must fit a chain_state whatever the error
 * (Core's EVAL_FALSE text once lost its last seven bytes). */
static void test_script_reasons_fit(void **state)
{
	(void)state;
	for (int err = 0; err < SCRIPT_ERR__COUNT; err++) {
		char want[256];
		int n = snprintf(want, sizeof(want), CHAIN_SCRIPT_REASON_PREFIX "%s)",
		                 script_error_core_string(err));
		assert_true(n > 0 && (size_t)n < sizeof(want));
		if ((size_t)n >= CHAIN_REASON_MAX)
			fail_msg("script error %s: reason of %d bytes, CHAIN_REASON_MAX %d",
			         script_error_name(err), n, CHAIN_REASON_MAX);
		struct chain_state st;
		chain_state_clear(&st);
		assert_int_equal(chain_reject(&st, CHAIN_RESULT_CONSENSUS, want, NULL),
		                 CHAIN_EINVALID);
		assert_string_equal(st.reason, want);
	}
	/* The longest, spelled out as Core answers it. */
	struct chain_state st;
	chain_state_clear(&st);
	char reason[CHAIN_REASON_MAX];
	snprintf(reason, sizeof(reason), CHAIN_SCRIPT_REASON_PREFIX "%s)",
	         script_error_core_string(SCRIPT_ERR_EVAL_FALSE));
	assert_string_equal(reason, "mandatory-script-verify-flag-failed (Script evaluated without "
	                            "error but finished with a false/empty top stack element)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regtest_blocks_pass), cmocka_unit_test(test_mainnet_blocks_pass),
	    cmocka_unit_test(test_check_block_rejects), cmocka_unit_test(test_contextual_rejects),
	    cmocka_unit_test(test_bip34_script),        cmocka_unit_test(test_subsidy),
	    cmocka_unit_test(test_script_flags),        cmocka_unit_test(test_is_final),
	    cmocka_unit_test(test_sequence_locks),      cmocka_unit_test(test_script_reasons_fit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
