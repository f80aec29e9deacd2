/*
 * index/coinstats.c: the coinstats index (Core's -coinstatsindex,
 * index/coinstatsindex.cpp): for every block, the UTXO set's MuHash3072
 * and running totals after it, so gettxoutsetinfo answers for any height
 * without walking the set.
 *
 * A block's record is its parent's, plus each output it creates (an
 * unspendable one, OP_RETURN or over 10,000 bytes, only counts as
 * unspendable) and minus each coin its undo data says it spent; what the
 * coinbase did not claim of subsidy and fees is unspendable too. The
 * genesis block's 50 coins are unspendable and nothing else.
 *
 * Records are keyed by height and block hash ('s' | height | hash), so a
 * reorg only steps the best block back (set.c): a stale block keeps its
 * record (as Core's DB_BLOCK_HASH copies), and the next block of the new
 * branch starts from its own parent's. The record carries the MuHash state itself (numerator over
 * denominator, 384 bytes), so a block never needs its descendants':
 *   state (384) | muhash (32) | txouts, bogosize, total_amount,
 *   total_subsidy, total_unspendable, prevout_spent, new_outputs_ex_coinbase,
 *   coinbase, unspendables genesis_block, bip30, scripts,
 *   unclaimed_rewards (8 each, LE)
 */
#include <string.h>

#include "base/alloc.h"
#include "index/internal.h"

#define REC_FIELDS 12
#define REC_LEN    (INDEX_MUHASH_BYTES + 32 + 8 * REC_FIELDS)
/* Core's MAX_SCRIPT_SIZE: a longer output script can never be spent. */
#define MAX_SCRIPT 10000u
#define OP_RETURN  0x6a

/* 's' | height (big-endian) | hash: the active chain's records follow one
 * another in key order, so LMDB fills its pages as it appends (keyed by
 * hash alone, inserts land anywhere and pages stay half full: 2.6 times
 * the bytes on chain2000.dat). */
#define KEY_LEN 37

static void key_of(uint8_t key[KEY_LEN], const struct chain_node *n)
{
	uint32_t h = (uint32_t)n->height;
	key[0] = 's';
	key[1] = (uint8_t)(h >> 24);
	key[2] = (uint8_t)(h >> 16);
	key[3] = (uint8_t)(h >> 8);
	key[4] = (uint8_t)h;
	memcpy(key + 5, n->hash.b, 32);
}

/* The totals in record order (so encoding is one loop). */
static int64_t *field(struct index_coinstats *s, int i)
{
	int64_t *f[REC_FIELDS] = {(int64_t *)&s->txouts,
	                          (int64_t *)&s->bogosize,
	                          &s->total_amount,
	                          &s->total_subsidy,
	                          &s->total_unspendable,
	                          &s->total_prevout_spent,
	                          &s->total_new_outputs_ex_coinbase,
	                          &s->total_coinbase,
	                          &s->unspendables_genesis_block,
	                          &s->unspendables_bip30,
	                          &s->unspendables_scripts,
	                          &s->unspendables_unclaimed_rewards};
	return f[i];
}

static int read_rec(MDB_txn *t, MDB_dbi dbi, const struct chain_node *n,
                    struct index_coinstats *out, uint8_t state[INDEX_MUHASH_BYTES])
{
	uint8_t key[KEY_LEN];
	key_of(key, n);
	MDB_val k = {sizeof(key), key}, v;
	int r = mdb_get(t, dbi, &k, &v);
	if (r == MDB_NOTFOUND)
		return INDEX_ENOTFOUND;
	if (r)
		return INDEX_EDB;
	if (v.mv_size != REC_LEN)
		return INDEX_ECORRUPT;
	const uint8_t *p = v.mv_data;
	if (state)
		memcpy(state, p, INDEX_MUHASH_BYTES);
	memcpy(out->muhash, p + INDEX_MUHASH_BYTES, 32);
	p += INDEX_MUHASH_BYTES + 32;
	for (int i = 0; i < REC_FIELDS; i++)
		*field(out, i) = (int64_t)proto_le64(p + 8 * i);
	return INDEX_OK;
}

/* Core's IsBIP30Unspendable: the two mainnet blocks whose coinbase
 * repeated an earlier one's txid, the earlier coins overwritten. */
static bool bip30_unspendable(struct chain *c, const struct chain_node *n)
{
	static const struct {
		int32_t height;
		const char *hash;
	} blocks[] = {
	    {91722, "00000000000271a2dc26e7667f8419f2e15416dc6955e5a6c6cdf3f2574dd08e"},
	    {91812, "00000000000af0aed4792b1acee3d966af36cf5def14935db8de83d6f9306f2f"},
	};
	if (chain_params(c)->net != PROTO_NET_MAIN)
		return false;
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		char hex[65];
		if (n->height != blocks[i].height)
			continue;
		proto_hash_to_hex(&n->hash, hex);
		if (strcmp(hex, blocks[i].hash) == 0)
			return true;
	}
	return false;
}

/* Core's TxOutSer into buf (grown as needed): outpoint, height * 2 +
 * coinbase, value, script. The length, or 0 when out of memory. */
static size_t txout_ser(uint8_t **buf, size_t *cap, const struct proto_outpoint *op,
                        uint32_t height, bool coinbase, int64_t value, const uint8_t *script,
                        uint32_t script_len)
{
	size_t need = 48 + PROTO_COMPACT_MAX + script_len;
	if (need > *cap) {
		uint8_t *p = xrealloc(*buf, need);
		if (!p)
			return 0;
		*buf = p;
		*cap = need;
	}
	uint8_t *b = *buf;
	memcpy(b, op->txid.b, 32);
	proto_put_le32(b + 32, op->n);
	proto_put_le32(b + 36, height << 1 | (coinbase ? 1u : 0u));
	proto_put_le64(b + 40, (uint64_t)value);
	size_t len = 48 + proto_compact_encode(b + 48, script_len);
	memcpy(b + len, script, script_len);
	return len + script_len;
}

/* Core's GetBogoSize. */
static uint64_t bogo(uint32_t script_len)
{
	return 32 + 4 + 4 + 8 + 2 + (uint64_t)script_len;
}

int index_coinstats_take(MDB_txn *t, MDB_dbi dbi, struct chain *c, const struct chain_node *n,
                         const struct proto_block *b)
{
	struct index_coinstats st = {0};
	uint8_t state[INDEX_MUHASH_BYTES];
	struct chain_block_undo u;
	chain_block_undo_init(&u);
	uint8_t *ser = NULL;
	size_t ser_cap = 0;
	struct index_muhash *m = index_muhash_new();
	int err = m ? INDEX_OK : INDEX_ENOMEM;
	if (err)
		goto out;
	const int64_t subsidy = chain_block_subsidy(n->height, chain_params(c));
	if (n->prev) {
		if ((err = read_rec(t, dbi, n->prev, &st, state)))
			goto out;
		index_muhash_load(m, state);
	}
	st.total_subsidy += subsidy;
	if (!n->prev) {
		/* The genesis coinbase is not in the UTXO set. */
		st.total_unspendable += subsidy;
		st.unspendables_genesis_block += subsidy;
		goto write;
	}
	if (chain_read_undo(c, n, &u)) {
		err = INDEX_ECHAIN;
		goto out;
	}
	const bool bip30 = bip30_unspendable(c, n);
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		const bool cb = i == 0;
		if (bip30 && cb) {
			st.total_unspendable += subsidy;
			st.unspendables_bip30 += subsidy;
			continue;
		}
		struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
		for (uint32_t j = 0; j < tx->n_out; j++) {
			const struct proto_txout *o = &tx->vout[j];
			const uint8_t *script = proto_txout_script(tx, o);
			if ((o->script_len > 0 && script[0] == OP_RETURN) ||
			    o->script_len > MAX_SCRIPT) {
				st.total_unspendable += o->value;
				st.unspendables_scripts += o->value;
				continue;
			}
			op.n = j;
			size_t len = txout_ser(&ser, &ser_cap, &op, (uint32_t)n->height, cb,
			                       o->value, script, o->script_len);
			if (!len) {
				err = INDEX_ENOMEM;
				goto out;
			}
			index_muhash_insert(m, ser, len);
			if (cb)
				st.total_coinbase += o->value;
			else
				st.total_new_outputs_ex_coinbase += o->value;
			st.txouts++;
			st.total_amount += o->value;
			st.bogosize += bogo(o->script_len);
		}
		if (cb)
			continue;
		if (i - 1 >= u.n_tx || u.n_coins[i - 1] != tx->n_in) {
			err = INDEX_ECORRUPT;
			goto out;
		}
		for (uint32_t j = 0; j < tx->n_in; j++) {
			const struct chain_undo_coin *coin = &u.coins[u.first[i - 1] + j];
			size_t len =
			    txout_ser(&ser, &ser_cap, &tx->vin[j].prevout, coin->height,
			              coin->coinbase, coin->value, coin->script, coin->script_len);
			if (!len) {
				err = INDEX_ENOMEM;
				goto out;
			}
			index_muhash_remove(m, ser, len);
			st.total_prevout_spent += coin->value;
			st.txouts--;
			st.total_amount -= coin->value;
			st.bogosize -= bogo(coin->script_len);
		}
	}
	/* Whatever subsidy and spent coins paid that no output took, the
	 * miner left unclaimed: unspendable (Core's unclaimed_rewards, over
	 * the running totals). */
	const int64_t unclaimed =
	    (st.total_prevout_spent + st.total_subsidy) -
	    (st.total_new_outputs_ex_coinbase + st.total_coinbase + st.total_unspendable);
	st.total_unspendable += unclaimed;
	st.unspendables_unclaimed_rewards += unclaimed;
write:;
	uint8_t rec[REC_LEN];
	index_muhash_save(m, rec);
	index_muhash_finalize(m, rec + INDEX_MUHASH_BYTES);
	for (int i = 0; i < REC_FIELDS; i++)
		proto_put_le64(rec + INDEX_MUHASH_BYTES + 32 + 8 * i, (uint64_t)*field(&st, i));
	uint8_t key[KEY_LEN];
	key_of(key, n);
	MDB_val kv = {sizeof(key), key}, v = {sizeof(rec), rec};
	/* The active chain's next record is the last key: appended, LMDB
	 * fills each leaf instead of splitting it in the middle (2,000 blocks:
	 * 334 leaves, 6 records each, became 286). A key not past the last (a
	 * branch's block at a height already kept, a block taken again) is
	 * refused as MDB_KEYEXIST and put in its place. */
	int r = mdb_put(t, dbi, &kv, &v, MDB_APPEND);
	if (r == MDB_KEYEXIST)
		r = mdb_put(t, dbi, &kv, &v, 0);
	if (r)
		err = INDEX_EDB;
out:
	index_muhash_free(m);
	xfree(ser);
	chain_block_undo_release(&u);
	return err;
}

int index_coinstats_find(struct index_set *s, const struct chain_node *block,
                         struct index_coinstats *out)
{
	MDB_env *env;
	MDB_dbi dbi;
	index_set_db(s, INDEX_COINSTATS, &env, &dbi);
	if (!env)
		return INDEX_ENOTFOUND;
	MDB_txn *t;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &t))
		return INDEX_EDB;
	int err = read_rec(t, dbi, block, out, NULL);
	mdb_txn_abort(t);
	return err;
}
