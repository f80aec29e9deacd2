/*
 * chain/utxohash.c: gettxoutsetinfo over the cache merged with the
 * database, as Core 29's ComputeUTXOStats with HASH_SERIALIZED.
 *
 * Two sorted sources read as one (git reftable's merged iterator): the
 * dirty cache entries, sorted by key, and an LMDB cursor over the coins
 * table. Each is advanced only when its head has been used. On equal
 * keys the cache wins: its coin replaces the record, its tombstone hides
 * it. Clean cache entries equal their records, so they are not merged.
 *
 * Core groups the walk by txid and hashes a group's outputs from a
 * std::map, i.e. in numeric order of n, while keys (VARINT(n)) sort
 * differently from 16,512 on. So each txid's outputs are gathered and,
 * only when they arrived out of numeric order, sorted before hashing.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"

/* One coin of the current txid: from the cache (e) or a record (val). */
struct item {
	uint32_t n;
	const struct chain_coin_entry *e;
	const uint8_t *val;
	size_t vlen;
};

struct walk {
	/* the database side */
	struct chain_db_cursor *cur;
	bool db_head; /* db_op/db_val hold a record not yet used */
	bool db_done;
	struct proto_outpoint db_op;
	const uint8_t *db_val;
	size_t db_vlen;
	/* the cache side */
	const struct chain_coin_entry **dirty;
	size_t n_dirty, i_dirty;
	/* the current txid's outputs */
	struct item *group;
	size_t n_group, cap_group;
	bool unordered;
	/* the caller's view of each coin's serialization (may be NULL) */
	chain_coin_ser_fn each;
	void *each_arg;
	uint8_t *ser;
	size_t ser_cap;
	/* results */
	struct proto_sha256 sha;
	struct chain_utxo_stats *st;
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
};

/* Load the database's next record if its head was used. */
static int db_peek(struct walk *w)
{
	if (w->db_head || w->db_done)
		return 0;
	const uint8_t *k;
	size_t klen;
	int err = chain_db_cursor_next(w->cur, &k, &klen, &w->db_val, &w->db_vlen);
	if (err == CHAIN_ENOTFOUND) {
		w->db_done = true;
		return 0;
	}
	if (!err)
		err = chain_coin_key_decode(k, klen, &w->db_op);
	if (!err)
		w->db_head = true;
	return err;
}

/* The merged stream's next coin into *it; 1 when there is one, 0 at the end. */
static int merged_next(struct walk *w, struct item *it, struct proto_outpoint *op)
{
	for (;;) {
		int err = db_peek(w);
		if (err)
			return err;
		const struct chain_coin_entry *e =
		    w->i_dirty < w->n_dirty ? w->dirty[w->i_dirty] : NULL;
		if (!e && !w->db_head)
			return 0;
		int cmp = !e ? 1 : !w->db_head ? -1 : chain_coin_key_cmp(&e->op, &w->db_op);
		if (cmp > 0) {
			w->db_head = false;
			*op = w->db_op;
			*it = (struct item){.n = op->n, .val = w->db_val, .vlen = w->db_vlen};
			return 1;
		}
		w->i_dirty++;
		if (cmp == 0)
			w->db_head = false; /* shadowed */
		if (e->flags & CHAIN_COIN_SPENT)
			continue;
		*op = e->op;
		*it = (struct item){.n = e->op.n, .e = e};
		return 1;
	}
}

static int cmp_item(const void *a, const void *b)
{
	uint32_t x = ((const struct item *)a)->n, y = ((const struct item *)b)->n;
	return x < y ? -1 : x > y;
}

/* Core's TxOutSer for every output of one txid, and ApplyStats. */
static int apply_group(struct walk *w, const struct proto_hash *txid)
{
	if (!w->n_group)
		return 0;
	if (w->unordered)
		qsort(w->group, w->n_group, sizeof(*w->group), cmp_item);
	struct chain_utxo_stats *st = w->st;
	st->transactions++;
	for (size_t i = 0; i < w->n_group; i++) {
		const struct item *it = &w->group[i];
		struct chain_coin coin;
		if (it->e) {
			coin.value = it->e->value;
			coin.height = it->e->height;
			coin.coinbase = it->e->coinbase;
			coin.script_len = it->e->script_len;
			coin.script = chain_coin_entry_script(it->e);
		} else {
			int err = chain_coin_value_decode(it->val, it->vlen, &coin, w->special);
			if (err)
				return err;
		}
		uint8_t b[32 + 4 + 4 + 8 + PROTO_COMPACT_MAX];
		memcpy(b, txid->b, 32);
		proto_put_le32(b + 32, it->n);
		proto_put_le32(b + 36, coin.height << 1 | (coin.coinbase ? 1u : 0u));
		proto_put_le64(b + 40, (uint64_t)coin.value);
		size_t len = 48 + proto_compact_encode(b + 48, coin.script_len);
		proto_sha256_update(&w->sha, b, len);
		proto_sha256_update(&w->sha, coin.script, coin.script_len);
		if (w->each) {
			/* One contiguous TxOutSer for the caller (MuHash hashes each
			 * coin on its own). */
			size_t need = len + coin.script_len;
			if (need > w->ser_cap) {
				uint8_t *p = xrealloc(w->ser, need);
				if (!p)
					return CHAIN_ENOMEM;
				w->ser = p;
				w->ser_cap = need;
			}
			memcpy(w->ser, b, len);
			memcpy(w->ser + len, coin.script, coin.script_len);
			w->each(w->each_arg, w->ser, need);
		}
		st->txouts++;
		/* Core's GetBogoSize: txid, index, height, amount, script length
		 * and script. */
		st->bogosize += 32 + 4 + 4 + 8 + 2 + coin.script_len;
		if (__builtin_add_overflow(st->total_amount, coin.value, &st->total_amount))
			return CHAIN_ECORRUPT;
	}
	w->n_group = 0;
	w->unordered = false;
	return 0;
}

static int walk_all(struct walk *w)
{
	struct proto_hash txid;
	struct proto_outpoint op;
	struct item it;
	int more;
	while ((more = merged_next(w, &it, &op)) > 0) {
		if (w->n_group && !proto_hash_eq(&op.txid, &txid)) {
			int err = apply_group(w, &txid);
			if (err)
				return err;
		}
		txid = op.txid;
		if (w->n_group == w->cap_group) {
			size_t cap = w->cap_group ? w->cap_group * 2 : 64;
			struct item *g = xreallocarray(w->group, cap, sizeof(*g));
			if (!g)
				return CHAIN_ENOMEM;
			w->group = g;
			w->cap_group = cap;
		}
		if (w->n_group && w->group[w->n_group - 1].n > it.n)
			w->unordered = true;
		w->group[w->n_group++] = it;
	}
	if (more < 0)
		return more;
	return apply_group(w, &txid);
}

int chain_coins_stats(struct chain_coins *c, struct chain_utxo_stats *out)
{
	return chain_coins_stats_each(c, out, NULL, NULL);
}

int chain_coins_stats_each(struct chain_coins *c, struct chain_utxo_stats *out,
                           chain_coin_ser_fn each, void *arg)
{
	memset(out, 0, sizeof(*out));
	struct walk w = {.st = out, .each = each, .each_arg = arg};
	proto_sha256_init(&w.sha);
	int err = chain_coins_dirty_sorted(c, &w.dirty, &w.n_dirty);
	if (err)
		return err;
	err = chain_db_cursor_open(chain_coins_db(c), CHAIN_TABLE_COINS, &w.cur);
	if (!err)
		err = walk_all(&w);
	chain_db_cursor_close(w.cur);
	xfree(w.group);
	xfree(w.dirty);
	xfree(w.ser);
	if (err) {
		memset(out, 0, sizeof(*out));
		return err;
	}
	/* HashWriter::GetHash: SHA-256 of the SHA-256 of the stream. */
	proto_sha256d_final(&w.sha, out->hash_serialized);
	out->best_block = *chain_coins_best_block(c);
	out->disk_size = chain_db_disk_size(chain_coins_db(c));
	return 0;
}
