/*
 * chain/accept.c: taking blocks and headers in (Core's ProcessNewBlock,
 * AcceptBlock, ProcessNewBlockHeaders and submitblock's answers).
 *
 * A block is checked without context first (CheckBlock: a failure here
 * says nothing about the header, which is not even added), then its
 * header is accepted, then the checks that need its parent; a block that
 * fails those is marked invalid unless the failure says the data was
 * mutated in transit. Then it is stored and linked: a block whose
 * ancestors all have data becomes a candidate tip, and so do the stored
 * descendants that were waiting for it.
 */
#include <string.h>

#include "chain/internal.h"

/* Link n and every waiting descendant (Core's ReceivedBlockTransactions). */
static int link_from(struct chain *c, struct chain_node *first)
{
	struct chain_nodes work = {0};
	int err = chain_nodes_push(&work, first);
	while (!err && work.n) {
		struct chain_node *n = work.v[--work.n];
		n->linked = true;
		if (!chain_node_failed(n) && (err = chain_nodes_push(&c->candidates, n)))
			break;
		for (size_t i = 0; i < c->unlinked.n;) {
			struct chain_node *u = c->unlinked.v[i];
			if (u->prev == n) {
				chain_nodes_remove(&c->unlinked, i);
				if ((err = chain_nodes_push(&work, u)))
					break;
			} else {
				i++;
			}
		}
	}
	chain_nodes_release(&work);
	return err;
}

int chain_block_stored(struct chain *c, struct chain_node *n, const struct chain_pos *pos,
                       uint32_t n_tx)
{
	n->file = pos->file;
	n->data_pos = pos->pos;
	n->n_tx = n_tx;
	n->status |= CHAIN_HAVE_DATA;
	if (chain_node_level(n) < CHAIN_VALID_TRANSACTIONS)
		n->status = (n->status & ~(uint32_t)CHAIN_VALID_MASK) | CHAIN_VALID_TRANSACTIONS;
	n->seq = c->next_seq++;
	n->dirty = true;
	if (!n->prev || n->prev->linked)
		return link_from(c, n);
	return chain_nodes_push(&c->unlinked, n);
}

int chain_accept_block(struct chain *c, const uint8_t *raw, size_t len, struct proto_block *b,
                       const struct chain_pos *pos, struct chain_node **node,
                       struct chain_state *st)
{
	struct proto_hash hash;
	proto_block_header_hash(&b->hdr, &hash);
	struct chain_node *n = chain_index_find(c->idx, &hash);
	*node = n;
	/* Core's ProcessNewBlock: CheckBlock before anything is looked up, so
	 * a mangled copy of a block we know (same header, a transaction
	 * repeated or dropped) is answered with what is wrong with it, not
	 * with what is known of the header. Then AcceptBlockHeader's
	 * "duplicate-invalid", then AcceptBlock's "already have it". */
	int err = chain_check_block(b, c->p, true, true, st);
	if (err)
		return err;
	if (!n) {
		err = chain_index_add_header(c->idx, &b->hdr, chain_now(c), &n, st);
		if (err)
			return err;
		*node = n;
	} else if (chain_node_failed(n)) {
		return chain_reject(st, CHAIN_RESULT_CACHED_INVALID, "duplicate-invalid", NULL);
	} else if (n->status & CHAIN_HAVE_DATA) {
		return 0;
	}
	/* Genesis has no parent to check against: it is the network's. */
	err = n->prev ? chain_check_block_contextual(b, n->prev, c->p, st) : 0;
	if (err) {
		if (err == CHAIN_EINVALID && st && st->result != CHAIN_RESULT_MUTATED)
			chain_mark_invalid(c, n);
		return err;
	}
	/* Core's AcceptBlock: relay now, before the block is written and
	 * connected (NewPoWValidBlock), when it is new, builds on the tip and
	 * we are out of initial block download; a replay from disk (pos given)
	 * is not news. */
	if (!pos && n->prev && n->prev == chain_tip(c) && !chain_in_ibd(c)) {
		for (size_t i = 0; i < c->n_listeners; i++)
			if (c->listeners[i].new_pow_valid_block)
				c->listeners[i].new_pow_valid_block(c->listeners[i].ctx, c, n, b);
	}
	struct chain_pos written;
	if (!pos) {
		if ((err = chain_store_write_block(c->store, raw, len, &written))) {
			chain_disk_failed(c, err, false, "Failed to write block.");
			return err;
		}
		pos = &written;
		/* The frame checksum, for serving without hashing: the one the
		 * block arrived with when the caller knows it, else computed
		 * here, once. */
		if (c->csum_hint_set) {
			n->checksum = c->csum_hint;
		} else {
			uint8_t h[32];
			proto_sha256d(raw, len, h);
			n->checksum = proto_le32(h);
		}
		n->has_checksum = true;
	}
	return chain_block_stored(c, n, pos, b->n_tx);
}

int chain_submit_block_csum(struct chain *c, const uint8_t *raw, size_t len, struct proto_block *b,
                            uint32_t csum, enum chain_submit *result, struct chain_state *st)
{
	c->csum_hint = csum;
	c->csum_hint_set = true;
	int err = chain_submit_block(c, raw, len, b, result, st);
	c->csum_hint_set = false;
	return err;
}

int chain_read_block_framed(struct chain *c, struct chain_node *n, uint8_t **raw, size_t *len,
                            uint32_t *csum)
{
	int err = chain_read_block(c, n, raw, len);
	if (err)
		return err;
	if (!n->has_checksum) {
		/* Stored before checksums were kept, replayed, or genesis:
		 * computed now, once, and written with the next flush. */
		uint8_t h[32];
		proto_sha256d(*raw, *len, h);
		n->checksum = proto_le32(h);
		n->has_checksum = true;
		n->dirty = true;
	}
	*csum = n->checksum;
	return 0;
}

int chain_submit_block(struct chain *c, const uint8_t *raw, size_t len, struct proto_block *b,
                       enum chain_submit *result, struct chain_state *st)
{
	struct chain_state local;
	chain_state_clear(&local);
	if (!st)
		st = &local;
	chain_state_clear(st);
	/* No answer from the index before the block is checked: since
	 * bitcoin/bitcoin#31175 (Core 29) submitblock looks nothing up first,
	 * and "duplicate" / "duplicate-invalid" come out of acceptance. */
	struct proto_hash hash;
	proto_block_header_hash(&b->hdr, &hash);
	struct chain_node *n = chain_index_find(c->idx, &hash);
	bool had_data = n && (n->status & CHAIN_HAVE_DATA);
	int err = chain_accept_block(c, raw, len, b, NULL, &n, st);
	if (err == CHAIN_EINVALID) {
		if (st->result == CHAIN_RESULT_CACHED_INVALID) {
			*result = CHAIN_SUBMIT_DUPLICATE_INVALID;
			return 0;
		}
		c->stats.blocks_rejected++;
		*result = CHAIN_SUBMIT_REJECTED;
		return 0;
	}
	if (err)
		return err;
	bool found = false;
	struct chain_state wst;
	chain_state_clear(&wst);
	if ((err = chain_activate(c, n, &found, &wst)))
		return err;
	if (had_data) {
		*result = CHAIN_SUBMIT_DUPLICATE;
	} else if (!found) {
		*result = CHAIN_SUBMIT_INCONCLUSIVE;
	} else if (wst.result != CHAIN_RESULT_UNSET) {
		*st = wst;
		*result = CHAIN_SUBMIT_REJECTED;
	} else {
		*result = CHAIN_SUBMIT_ACCEPTED;
	}
	return 0;
}

int chain_accept_headers(struct chain *c, const struct proto_block_header *h, size_t n,
                         struct chain_node **last, struct chain_state *st)
{
	for (size_t i = 0; i < n; i++) {
		struct chain_node *node;
		int err = chain_index_add_header(c->idx, &h[i], chain_now(c), &node, st);
		if (err)
			return err;
		if (last)
			*last = node;
	}
	return 0;
}

int chain_read_block(struct chain *c, const struct chain_node *n, uint8_t **raw, size_t *len)
{
	if (!(n->status & CHAIN_HAVE_DATA))
		return CHAIN_ENOTFOUND;
	struct chain_pos pos = {.file = n->file, .pos = n->data_pos};
	return chain_store_read_block(c->store, &pos, raw, len);
}

int chain_read_undo(struct chain *c, const struct chain_node *n, struct chain_block_undo *u)
{
	if (!(n->status & CHAIN_HAVE_UNDO) || !n->prev)
		return CHAIN_ENOTFOUND;
	struct chain_pos pos = {.file = n->file, .pos = n->undo_pos};
	return chain_store_read_undo(c->store, &pos, &n->prev->hash, u);
}
