/*
 * chain/verify.c: Core's VerifyDB (verifychain): read the last blocks of
 * the active chain back from disk and check them at increasing depth.
 *
 *   0  each block reads back and hashes to its index entry
 *   1  CheckBlock
 *   2  its undo data reads back, passes its checksum and fits the block
 *   3  disconnect the blocks, tip first, from a scratch copy of the coins
 *      (a second cache over the flushed database, never written back): the
 *      coins must match the blocks exactly
 *   4  connect them again on that copy with every rule and script check
 *
 * The real coins and the active chain are never touched: the database is
 * flushed first so the scratch cache starts from exactly the tip.
 */
#include <stdio.h>
#include <string.h>

#include "chain/internal.h"

static int fail(struct chain_state *st, const struct chain_node *n, const char *what)
{
	char hex[65];
	proto_hash_to_hex(&n->hash, hex);
	return chain_reject(st, CHAIN_RESULT_CONSENSUS, "verifychain", "block %s at height %d: %s",
	                    hex, n->height, what);
}

/* Read and decode n into c->blk; level 0's check. */
static int load(struct chain *c, const struct chain_node *n, struct chain_state *st)
{
	uint8_t *raw;
	size_t len;
	int err = chain_read_block(c, n, &raw, &len);
	if (err == CHAIN_ENOTFOUND || err == CHAIN_ECORRUPT)
		return fail(st, n, "cannot read the block back");
	if (err)
		return err;
	int perr = proto_block_decode(raw, len, &c->blk, NULL);
	xfree(raw);
	if (perr == PROTO_ENOMEM)
		return CHAIN_ENOMEM;
	struct proto_hash h;
	if (!perr)
		proto_block_header_hash(&c->blk.hdr, &h);
	if (perr || !proto_hash_eq(&h, &n->hash))
		return fail(st, n, "the block on disk is not this block");
	return 0;
}

static int check_undo(struct chain *c, const struct chain_node *n, struct chain_state *st)
{
	struct chain_block_undo u;
	chain_block_undo_init(&u);
	int err = chain_read_undo(c, n, &u);
	bool fits = err == 0 && u.n_tx + 1 == c->blk.n_tx;
	for (uint32_t i = 0; fits && i < u.n_tx; i++)
		fits = u.n_coins[i] == c->blk.txs[i + 1].n_in;
	chain_block_undo_release(&u);
	if (err == CHAIN_ENOMEM || err == CHAIN_EIO)
		return err;
	return fits ? 0 : fail(st, n, "its undo data is missing, damaged or does not fit");
}

/* Levels 3 and 4 on a scratch cache. */
static int replay(struct chain *c, int32_t lowest, int level, struct chain_state *st)
{
	struct chain_coins *scratch;
	int err = chain_flush(c);
	if (err || (err = chain_coins_new(&scratch, c->db, c->cfg.dbcache_bytes)))
		return err;
	int32_t tip = chain_height(c);
	for (int32_t h = tip; !err && h >= lowest; h--) {
		struct chain_node *n = chain_at(c, h);
		struct chain_block_undo u;
		chain_block_undo_init(&u);
		bool unclean = false;
		if (!(err = load(c, n, st)) && !(err = chain_read_undo(c, n, &u)))
			err = chain_disconnect_block(scratch, &c->blk, n, c->p, &u, &unclean);
		chain_block_undo_release(&u);
		if (!err && unclean)
			err = fail(st, n, "the coins do not match the block (disconnect unclean)");
		if (err == CHAIN_ECORRUPT)
			err = fail(st, n, "its undo data does not fit the block");
	}
	for (int32_t h = lowest; !err && level >= 4 && h <= tip; h++) {
		struct chain_node *n = chain_at(c, h);
		struct chain_block_undo u;
		chain_block_undo_init(&u);
		if (!(err = load(c, n, st))) {
			/* Core's VerifyDB reconnects through ConnectBlock: assumevalid applies. */
			chain_checker_skip_scripts(c->ck, chain_assume_valid_skips(c, n));
			err = chain_connect_block(scratch, c->ck, &c->blk, n, c->p, false, &u, NULL,
			                          st);
		}
		chain_block_undo_release(&u);
	}
	if (!err && level >= 4 &&
	    !proto_hash_eq(chain_coins_best_block(scratch), &chain_tip(c)->hash))
		err = fail(st, chain_tip(c), "reconnecting did not end at the tip");
	chain_coins_free(scratch);
	return err;
}

static int verify(struct chain *c, int level, int32_t nblocks, struct chain_state *st)
{
	if (level < 0 || level > 4)
		return CHAIN_EARG;
	int32_t tip = chain_height(c);
	if (nblocks <= 0 || nblocks > tip)
		nblocks = tip;
	/* Genesis is never checked: nothing spends from it, nothing undoes it. */
	int32_t lowest = tip - nblocks + 1;
	bool missing = false;
	for (int32_t h = tip; h >= lowest; h--) {
		struct chain_node *n = chain_at(c, h);
		if (chain_prune_mode(c) && !(n->status & CHAIN_HAVE_DATA)) {
			/* Core's VerifyDB: a pruned node checks what it still has. */
			chain_logf(
			    c, CHAIN_LOG_INFO,
			    "VerifyDB(): block verification stopping at height %d (no data). "
			    "This could be due to pruning or use of an assumeutxo snapshot.",
			    (int)h);
			lowest = h + 1;
			nblocks = tip - h;
			missing = true;
			break;
		}
		int err = load(c, n, st);
		if (!err && level >= 1 &&
		    (err = chain_check_block(&c->blk, c->p, true, true, st)) == CHAIN_EINVALID) {
			/* Say which block: CheckBlock's verdict does not. */
			char why[sizeof(st->debug)];
			snprintf(why, sizeof(why), "%s", st->debug[0] ? st->debug : st->reason);
			err = fail(st, n, why);
		}
		if (!err && level >= 2)
			err = check_undo(c, n, st);
		if (err)
			return err;
	}
	int err = level >= 3 && nblocks > 0 ? replay(c, lowest, level, st) : 0;
	if (!err && missing)
		snprintf(st->reason, sizeof(st->reason), "%s", CHAIN_VERIFY_MISSING);
	return err;
}

int chain_verify(struct chain *c, int level, int32_t nblocks, struct chain_state *st)
{
	struct chain_state local;
	if (!st)
		st = &local;
	chain_state_clear(st);
	int err = verify(c, level, nblocks, st);
	/* Core answers false and says why in its log. */
	if (err == CHAIN_EINVALID)
		chain_logf(c, CHAIN_LOG_WARN, "verifychain: %s (%s)", st->debug, st->reason);
	return err;
}
