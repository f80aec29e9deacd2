/*
 * daemon/sync/cmpct_serve.c: answering getblocktxn (BIP152), as Core 29's
 * net_processing.cpp GETBLOCKTXN branch and SendBlockTransactions.
 *
 * The block is read and the asked transactions gathered on the validation
 * thread (which owns the block files); the finished blocktxn frame comes
 * back to the loop. A block we do not have is not answered. One deeper
 * than 10 below the tip (Core MAX_BLOCKTXN_DEPTH) gets the whole block
 * through the getdata queue instead (Core: a peer asking old blocks
 * transaction by transaction would make us read the disk for small
 * answers; a whole block it must also receive). An index past the
 * block's transactions is misbehaviour ("getblocktxn with out-of-bounds
 * tx indices").
 *
 * And the cmpctblock sync/serve.c sends for getdata MSG_CMPCT_BLOCK near
 * the tip (sync_cmpct_serve_build, Core's ProcessGetBlockData).
 *
 * Loop thread, but for the job's work function (validation thread).
 */
#include "daemon/sync/sync.h"

#include <string.h>
#include <time.h>

#include "chain/chain.h"
#include "cmpct/cmpct.h"

/** Core's MAX_BLOCKTXN_DEPTH. */
#define BLOCKTXN_DEPTH 10
/** Core's MAX_CMPCTBLOCK_DEPTH. */
#define CMPCTBLOCK_DEPTH 5

bool sync_cmpct_serve_build(struct chain *c, const struct proto_params *pp,
                            const struct chain_node *n, const uint8_t *raw, size_t len,
                            struct proto_writer *frame)
{
	const struct chain_node *tip = chain_tip(c);
	/* CanDirectFetch: the tip is younger than 20 block intervals (Core's
	 * mockable clock, which base_time is on every thread). */
	if (n->height < tip->height - CMPCTBLOCK_DEPTH ||
	    (int64_t)tip->time <= base_time() - 20 * pp->pow_target_spacing)
		return false;
	struct proto_block b;
	struct proto_cmpctblock cb = {0};
	bool ok = false;
	proto_block_init(&b);
	if (proto_block_decode(raw, len, &b, NULL) || cmpct_build(&b, proto_random_u64(), &cb))
		goto out;
	size_t start = proto_frame_begin(frame);
	proto_cmpctblock_encode(&cb, frame);
	proto_frame_end(frame, start, pp->magic, "cmpctblock");
	ok = !frame->err;
out:
	proto_cmpctblock_release(&cb);
	proto_block_release(&b);
	return ok;
}

enum answer { ANS_NONE, ANS_BLOCKTXN, ANS_DEEP, ANS_OUT_OF_BOUNDS };

struct txn_job {
	struct val_job job;
	uint64_t peer_id;
	uint32_t magic;
	struct proto_hash hash;
	uint16_t *indexes;
	uint32_t n;
	enum answer ans;
	struct proto_writer frame; /* the blocktxn frame (ANS_BLOCKTXN) */
};

static void txn_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct txn_job *tj = (struct txn_job *)j;
	(void)mp;
	tj->ans = ANS_NONE;
	if (!c)
		return;
	const struct chain_node *n = chain_index_find(chain_get_index(c), &tj->hash);
	if (!n || !(n->status & CHAIN_HAVE_DATA))
		return; /* Core: "a getblocktxn for a block we don't have" */
	if (n->height < chain_tip(c)->height - BLOCKTXN_DEPTH) {
		tj->ans = ANS_DEEP;
		return;
	}
	uint8_t *raw = NULL;
	size_t len = 0;
	struct proto_block b;
	proto_block_init(&b);
	if (chain_read_block(c, n, &raw, &len) || proto_block_decode(raw, len, &b, NULL))
		goto out;
	for (uint32_t i = 0; i < tj->n; i++)
		if (tj->indexes[i] >= b.n_tx) {
			tj->ans = ANS_OUT_OF_BOUNDS;
			goto out;
		}
	size_t start = proto_frame_begin(&tj->frame);
	proto_write_hash(&tj->frame, &tj->hash);
	proto_write_compact(&tj->frame, tj->n);
	for (uint32_t i = 0; i < tj->n; i++)
		proto_tx_encode(&b.txs[tj->indexes[i]], &tj->frame);
	proto_frame_end(&tj->frame, start, tj->magic, "blocktxn");
	if (!tj->frame.err)
		tj->ans = ANS_BLOCKTXN;
out:
	proto_block_release(&b);
	xfree(raw);
}

static void txn_done(struct daemon *d, struct val_job *j)
{
	struct txn_job *tj = (struct txn_job *)j;
	struct peer *p = j->cancelled ? NULL : peer_by_id(d, tj->peer_id);
	if (!p || p->state == PEER_CLOSING)
		goto out;
	switch (tj->ans) {
	case ANS_NONE:
		DLOG_DBG(&d->log, DLOG_MSG,
		         "peer=%llu sent us a getblocktxn for a block we don't have",
		         (unsigned long long)p->id);
		break;
	case ANS_BLOCKTXN:
		peer_send_frame(p, PROTO_CMD_BLOCKTXN, tj->frame.buf, tj->frame.len);
		break;
	case ANS_DEEP: {
		struct proto_inv_vec v = {.type = PROTO_INV_WITNESS_BLOCK, .hash = tj->hash};
		if (serve_queue(p, &v) == 0)
			serve_next(p);
		break;
	}
	case ANS_OUT_OF_BOUNDS:
		ban_misbehaving(p, "getblocktxn with out-of-bounds tx indices");
		break;
	}
out:
	proto_writer_release(&tj->frame);
	xfree(tj->indexes);
	xfree(tj);
}

void sync_cmpct_on_getblocktxn(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	const struct proto_getblocktxn *g = &m->getblocktxn;
	struct txn_job *tj = xmalloc(sizeof(*tj));
	if (!tj)
		return;
	memset(tj, 0, sizeof(*tj));
	proto_writer_init(&tj->frame);
	tj->job.work = txn_work;
	tj->job.done = txn_done;
	tj->peer_id = p->id;
	tj->magic = d->params->magic;
	tj->hash = g->block;
	tj->n = g->n;
	if (g->n) {
		tj->indexes = xreallocarray(NULL, g->n, sizeof(*tj->indexes));
		if (!tj->indexes) {
			xfree(tj);
			return;
		}
		memcpy(tj->indexes, g->indexes, (size_t)g->n * sizeof(*tj->indexes));
	}
	if (validation_post(d, &tj->job)) {
		xfree(tj->indexes);
		xfree(tj);
	}
}
