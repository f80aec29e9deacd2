/*
 * daemon/sync/cmpct_recent.c: every new block goes to high-bandwidth
 * peers before it is connected, and the last cmpctblock built is kept
 * (Core 29's NewPoWValidBlock and m_most_recent_compact_block).
 *
 * Core calls NewPoWValidBlock from AcceptBlock for any new block that
 * builds on the tip, out of initial block download, once CheckBlock and
 * ContextualCheckBlock passed: whole blocks, blocks completed by a
 * blocktxn, blocks it mined or was given by submitblock alike. peerd's
 * chain tells its listeners the same moment (chain_listener's
 * new_pow_valid_block, inside chain_accept_block on the validation
 * thread); the listener here builds the cmpctblock there and hands it to
 * the loop at once (validation_send_now), ahead of the job that is still
 * storing and connecting the block, and the loop pushes it to the
 * high-bandwidth peers that lack it and have its parent. So a block that
 * then fails to connect has still been relayed, as Core's.
 *
 * The frame pushed is kept as the most recent cmpctblock: the push after
 * connecting (sync/cmpct_hb.c) and a getdata MSG_CMPCT_BLOCK for that
 * block (sync/serve.c) send it again instead of building another, as
 * Core's m_most_recent_compact_block (the same nonce to every peer).
 *
 * Threads: sync_cmpct_attach and the listener run on the validation
 * thread and touch only cmpct_fast_height and cmpct_listening; the rest
 * runs on the loop.
 */
#include "daemon/sync/sync.h"

#include <string.h>

#include "chain/chain.h"
#include "cmpct/cmpct.h"

/* A built cmpctblock on its way to the loop. */
struct early_job {
	struct val_job job;
	struct proto_hash hash, prev;
	int32_t prev_height;
	uint8_t *frame; /* xmalloc'd */
	size_t len;
};

/* Loop thread: push it, then keep it as the most recent. */
static void early_done(struct daemon *d, struct val_job *j)
{
	struct early_job *ej = (struct early_job *)j;
	if (!j->cancelled && !d->shutting_down && d->peers && !d->view->ibd)
		sync_cmpct_hb_push_early(d, &ej->hash, &ej->prev, ej->prev_height, ej->frame,
		                         ej->len);
	if (!j->cancelled)
		sync_cmpct_recent_set(d, &ej->hash, &ej->frame, ej->len);
	xfree(ej->frame);
	xfree(ej);
}

/* Validation thread, inside chain_accept_block: n is new, on the tip, and
 * passed CheckBlock and ContextualCheckBlock. */
static void on_pow_valid(void *ctx, struct chain *c, const struct chain_node *n,
                         struct proto_block *b)
{
	struct daemon *d = ctx;
	/* Core's m_highest_fast_announce: one block a height (a block
	 * rebuilt from a cmpctblock was pushed by sync/cmpct_receive.c already). */
	if (n->height <= d->sync->cmpct_fast_height)
		return;
	d->sync->cmpct_fast_height = n->height;
	struct early_job *ej = xmalloc(sizeof(*ej));
	if (!ej)
		return;
	memset(ej, 0, sizeof(*ej));
	struct proto_cmpctblock cb = {0};
	struct proto_writer w;
	proto_writer_init(&w);
	if (cmpct_build(b, proto_random_u64(), &cb) == 0) {
		size_t start = proto_frame_begin(&w);
		proto_cmpctblock_encode(&cb, &w);
		proto_frame_end(&w, start, chain_params(c)->magic, "cmpctblock");
	}
	proto_cmpctblock_release(&cb);
	if (w.err || !w.len) {
		proto_writer_release(&w);
		xfree(ej);
		return;
	}
	ej->job.done = early_done;
	ej->hash = n->hash;
	ej->prev = n->prev->hash;
	ej->prev_height = n->prev->height;
	ej->frame = w.buf; /* moved */
	ej->len = w.len;
	validation_send_now(d, &ej->job);
}

void sync_cmpct_attach(struct daemon *d, struct chain *c)
{
	if (!c || d->sync->cmpct_listening)
		return;
	d->sync->cmpct_listening = true;
	struct chain_listener l = {.new_pow_valid_block = on_pow_valid, .ctx = d};
	if (chain_listen(c, &l))
		DLOG_ERR(&d->log, DLOG_NET,
		         "compact blocks: cannot listen to the chain: new blocks are pushed "
		         "to high-bandwidth peers only after connecting");
}

void sync_cmpct_recent_set(struct daemon *d, const struct proto_hash *hash, uint8_t **frame,
                           size_t len)
{
	struct sync_state *s = d->sync;
	xfree(s->cmpct_recent);
	s->cmpct_recent = *frame;
	s->cmpct_recent_len = len;
	s->cmpct_recent_hash = *hash;
	*frame = NULL;
}

const uint8_t *sync_cmpct_recent(const struct daemon *d, const struct proto_hash *hash, size_t *len)
{
	const struct sync_state *s = d->sync;
	if (!s->cmpct_recent || !proto_hash_eq(&s->cmpct_recent_hash, hash))
		return NULL;
	*len = s->cmpct_recent_len;
	return s->cmpct_recent;
}
