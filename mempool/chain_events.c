/*
 * mempool/chain_events.c: the mempool following the active chain as its
 * listener (Core's removeForBlock and MaybeUpdateMempoolForReorg): a
 * connected block takes its transactions and their conflicts out;
 * disconnected blocks' return, and after a reorg every entry is judged
 * again against the new tip.
 */
#include <stdlib.h>
#include <string.h>

#include "mempool/internal.h"

/* ---- attaching to a chain ------------------------------------------------------- */

/* The chain goes away with the pool still attached (chain_open failed). */
static void mp_chain_closed(void *ctx, struct chain *c)
{
	chain_lend_cache_space(c, 0, NULL, NULL);
	mp_free(ctx);
}

/* What the coins cache may borrow is what this leaves of max_bytes (Core). */
static size_t mp_lent_usage(void *ctx)
{
	return mp_usage(ctx);
}

int mempool_open(struct chain *c, const struct mempool_config *cfg, const char *dir,
                 struct mempool **out)
{
	static const struct mempool_config zero;
	struct mempool *mp;
	int err = mp_new(&mp, c, cfg ? cfg : &zero, dir);
	if (err)
		return err;
	const struct chain_listener l = {
	    .block_connected = mp_block_connected,
	    .block_disconnected = mp_block_disconnected,
	    .chain_settled = mp_chain_settled,
	    .chain_closed = mp_chain_closed,
	    .ctx = mp,
	};
	if ((err = chain_listen(c, &l))) {
		mp_free(mp);
		return err;
	}
	chain_lend_cache_space(c, mp->cfg.max_bytes, mp_lent_usage, mp);
	if (out)
		*out = mp;
	return 0;
}

void mempool_load(struct mempool *mp)
{
	if (mp && mp->cfg.persist)
		mp_load(mp);
}

void mempool_close(struct mempool *mp)
{
	if (!mp)
		return;
	if (mp->cfg.persist && mp->loaded && mempool_save(mp))
		chain_logf(mp->c, CHAIN_LOG_ERROR, "%s", "could not save the mempool");
	chain_unlisten(mp->c, mp);
	chain_lend_cache_space(mp->c, 0, NULL, NULL);
	mp_free(mp);
}

/* ---- block connect / disconnect --------------------------------------------------- */

void mp_block_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	struct mempool *mp = ctx;
	if (!mp)
		return;
	struct mp_refs stage = {0};
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		const struct proto_hash *txid = proto_tx_txid(tx);
		struct mempool_entry *e = mp_find_txid(mp, txid);
		if (e) {
			stage.n = 0;
			if (mp_refs_push(&stage, e) == 0)
				mp_remove_set(mp, &stage, MEMPOOL_REMOVED_BLOCK, true);
		}
		/* Core's removeConflicts: whatever else spends its inputs. */
		if (!proto_tx_is_coinbase(tx)) {
			for (uint32_t j = 0; j < tx->n_in; j++) {
				struct mempool_entry *s = mp_spender(mp, &tx->vin[j].prevout);
				if (s && !proto_hash_eq(&s->tx.txid, txid))
					mp_remove_recursive(mp, s, MEMPOOL_REMOVED_CONFLICT);
			}
		}
		mp_clear_delta(mp, txid);
	}
	mp_refs_release(&stage);
	/* A reorg's kept transactions that this block confirmed are done. */
	for (size_t k = 0; k < mp->n_disconnected;) {
		bool mined = false;
		for (uint32_t i = 0; i < b->n_tx && !mined; i++)
			mined = proto_hash_eq(proto_tx_txid(&b->txs[i]),
			                      proto_tx_txid(&mp->disconnected[k]));
		if (mined) {
			proto_tx_release(&mp->disconnected[k]);
			mp->disconnected[k] = mp->disconnected[--mp->n_disconnected];
		} else {
			k++;
		}
	}
	mp->last_rolling_update = chain_now(c);
	mp->block_since_bump = true;
}

int mp_block_disconnected(void *ctx, struct chain *c, struct proto_block *b)
{
	(void)c;
	struct mempool *mp = ctx;
	if (!mp)
		return 0;
	mp->reorg_pending = true;
	if (b->n_tx < 2)
		return 0;
	/* Keep the block's transactions (coinbase excluded) in block order;
	 * blocks are disconnected newest first, so earlier blocks' go in
	 * front and the list stays in chain order. */
	size_t add = b->n_tx - 1;
	if (mp->n_disconnected + add > mp->cap_disconnected) {
		size_t cap = (mp->n_disconnected + add) * 2;
		struct proto_tx *v = xreallocarray(mp->disconnected, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		mp->disconnected = v;
		mp->cap_disconnected = cap;
	}
	memmove(mp->disconnected + add, mp->disconnected,
	        mp->n_disconnected * sizeof(*mp->disconnected));
	for (size_t i = 0; i < add; i++) {
		proto_tx_init(&mp->disconnected[i]);
		if (mp_tx_copy(&mp->disconnected[i], &b->txs[i + 1])) {
			/* Drop what was copied so far and close the gap. */
			for (size_t k = 0; k <= i; k++)
				proto_tx_release(&mp->disconnected[k]);
			memmove(mp->disconnected, mp->disconnected + add,
			        mp->n_disconnected * sizeof(*mp->disconnected));
			return CHAIN_ENOMEM;
		}
	}
	mp->n_disconnected += add;
	return 0;
}

/* Oldest-first by entry sequence: the order entries can be re-added in (parents first). */
static int cmp_entry_seq(const void *a, const void *b)
{
	const struct mempool_entry *x = *(const struct mempool_entry *const *)a;
	const struct mempool_entry *y = *(const struct mempool_entry *const *)b;
	if (x->anc_count != y->anc_count)
		return x->anc_count < y->anc_count ? -1 : 1;
	if (x->sequence != y->sequence)
		return x->sequence < y->sequence ? -1 : 1;
	return 0;
}

int mp_chain_settled(void *ctx, struct chain *c)
{
	(void)c;
	struct mempool *mp = ctx;
	if (!mp || !mp->reorg_pending)
		return 0;
	mp->reorg_pending = false;
	/*
	 * Core re-adds the disconnected blocks' transactions, links the
	 * entries that spend them, and re-checks every entry against the new
	 * tip (removeForReorg). Here the pool is taken apart and put back
	 * together: the disconnected transactions first (in chain order),
	 * then the old entries, parents before children, each through the
	 * full acceptance rules against the new tip with its old time and
	 * without script checks (they passed before). Whatever fails leaves
	 * with reason "reorg". Reorgs are rare; this keeps one code path.
	 */
	size_t n_old = mp->n;
	struct mempool_entry **old = NULL;
	if (n_old) {
		old = xmalloc(n_old * sizeof(*old));
		if (!old)
			return CHAIN_ENOMEM;
		memcpy(old, mp->entries, n_old * sizeof(*old));
		qsort(old, n_old, sizeof(*old), cmp_entry_seq);
	}
	/* Empty the indexes without freeing the entries. */
	memset(mp->by_txid, 0, (mp->id_mask + 1) * sizeof(*mp->by_txid));
	memset(mp->by_wtxid, 0, (mp->id_mask + 1) * sizeof(*mp->by_wtxid));
	memset(mp->spends, 0, (mp->spend_mask + 1) * sizeof(*mp->spends));
	mp->n_spends = 0;
	mp->n = 0;
	mp->total_vsize = 0;
	mp->total_fee = 0;
	mp->usage = 0;
	mp->n_links = 0; /* rand_cap stays: Core's vector is not touched by a reorg */
	for (size_t i = 0; i < n_old; i++) {
		mp_refs_release(&old[i]->parents);
		mp_refs_release(&old[i]->children);
	}
	int err = 0;
	struct mempool_accept_result r;
	mempool_accept_result_init(&r);
	for (size_t i = 0; i < mp->n_disconnected && !err; i++) {
		struct mp_args a = {.bypass_limits = true,
		                    .allow_replacement = true,
		                    .allow_carveouts = true,
		                    .how = MEMPOOL_ADDED_REORG};
		err = mp_accept(mp, &mp->disconnected[i], &a, &r);
		if (!err && r.accepted)
			mp->stats.reorg_readded++;
	}
	mp_free_disconnected(mp);
	bool quiet = mp->quiet;
	/* Old entries coming back are neither new accepts nor rejects. */
	uint64_t accepted = mp->stats.accepted, rejected = mp->stats.rejected;
	for (size_t i = 0; i < n_old; i++) {
		struct mempool_entry *e = old[i];
		if (!err) {
			struct mp_args a = {.bypass_limits = true,
			                    .allow_replacement = true,
			                    .allow_carveouts = true,
			                    .trusted = true,
			                    .accept_time = e->time,
			                    .how = MEMPOOL_ADDED_REORG};
			uint64_t seq = mp->sequence;
			mp->quiet = true; /* the same entry again: nobody needs to hear of it */
			err = mp_accept(mp, &e->tx, &a, &r);
			mp->quiet = quiet;
			mp->sequence = seq;
			struct mempool_entry *now = err ? NULL : mp_find_wtxid(mp, &e->tx.wtxid);
			if (now) {
				now->sequence = e->sequence;
				now->height = e->height;
				mp_entry_free(e);
				continue;
			}
		}
		/* Gone: tell relay as Core's removeForReorg would. */
		mp->sequence++;
		mp_unbroadcast_drop(mp, &e->tx.txid);
		mp_fire_removed(mp, e, MEMPOOL_REMOVED_REORG);
		mp_entry_free(e);
	}
	mp->stats.accepted = accepted;
	mp->stats.rejected = rejected;
	mempool_accept_result_release(&r);
	xfree(old);
	if (!err)
		mp_limit(mp);
	return err;
}
