/*
 * cmpct/build.c: a cmpctblock from a block (Core's
 * CBlockHeaderAndShortTxIDs(block, nonce)): the coinbase prefilled, every
 * other transaction as its short id.
 */
#include "cmpct/cmpct.h"

int cmpct_build(struct proto_block *b, uint64_t nonce, struct proto_cmpctblock *cb)
{
	uint8_t key[16];
	struct proto_writer w;
	int err;

	cb->n_short = cb->n_prefilled = 0;
	if (b->n_tx == 0 || b->n_tx > PROTO_CMPCT_MAX_TXS)
		return PROTO_ECOUNT;
	cb->hdr = b->hdr;
	cb->nonce = nonce;
	proto_cmpct_shortid_key(&b->hdr, nonce, key);
	if ((err = proto_cmpctblock_reserve_shortids(cb, b->n_tx - 1)) ||
	    (err = proto_cmpctblock_reserve_prefilled(cb, 1)))
		return err;
	for (uint32_t i = 1; i < b->n_tx; i++)
		cb->shortids[i - 1] = proto_cmpct_shortid(key, proto_tx_wtxid(&b->txs[i]));

	/* The prefilled coinbase is the message's own copy: the block's
	 * transactions borrow the block's storage. */
	proto_writer_init(&w);
	proto_tx_encode(&b->txs[0], &w);
	err = w.err ? w.err : proto_tx_decode_buf(w.buf, w.len, &cb->prefilled[0].tx, NULL);
	proto_writer_release(&w);
	if (err)
		return err;
	cb->prefilled[0].index = 0;
	cb->n_prefilled = 1;
	cb->n_short = b->n_tx - 1;
	return 0;
}
