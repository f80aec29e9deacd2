/*
 * daemon/sync/serve.c: blocks for getdata, read from the block files on the
 * validation thread (which owns the store) and sent when they come back.
 *
 * As Core's ProcessGetData: the block requests of a getdata are kept in
 * order and served one at a time, and while any is left the peer's later
 * messages wait in its receive buffer (net/transport.c checks serve_pending),
 * which is what bounds the queue to one getdata (50,000 entries). A
 * request is read only while the peer is not send-paused, so a slow reader
 * holds at most maxsendbuffer plus one block. A block peerd lacks is
 * skipped without an answer, as Core does (notfound is for transactions:
 * those of the same getdata are answered in their place in the order).
 *
 * What may be served (Core's BlockRequestAllowed): a block of the active
 * chain, or one on a fork that was fully validated and is less than 30
 * days older than the best header (by time and by the work between
 * them); another is skipped without an answer, as Core's "ignoring
 * request ... for old block that isn't in the main chain". A MSG_BLOCK request
 * gets the block without witnesses (re-encoded on the validation thread),
 * MSG_WITNESS_BLOCK and MSG_CMPCT_BLOCK the stored bytes as they are.
 *
 * A pruned node (-prune: our services lack NODE_NETWORK) serves, as Core's
 * ProcessGetBlockData, only blocks at most PEER_LIMITED_MIN_BLOCKS + 2
 * below its tip: a request for a deeper one, of any block type (filtered
 * too, which is otherwise ignored), disconnects the peer, which would
 * otherwise wait for it, and hides how far back we still have blocks. A
 * block whose data is gone (pruned) is skipped like one never had; one
 * that cannot be read disconnects the peer, as Core's.
 *
 * Serving is cheap: the validation thread reads the stored bytes and takes
 * the frame checksum from the block index (kept when the block was
 * stored: chain_read_block_framed), nothing is decoded or hashed; the
 * loop hands the buffer to peer_send_owned, which writes a constant
 * prefix, 8 bytes of length and checksum from the binary free list and
 * the block where it lies. Only a stripped block (MSG_BLOCK) is decoded,
 * re-encoded and hashed.
 */
#include "daemon/sync/internal.h"

#include <errno.h>
#include <string.h>

#include "chain/chain.h"

/* First size of a peer's queue; a getdata usually names one to 16 blocks. */
#define SERVE_INITIAL_CAP 16u

/** A read on its way to the validation thread and back. */
struct serve_job {
	struct val_job job;
	struct daemon *d;
	uint64_t peer_id;
	struct proto_hash hash;
	bool witness;
	uint8_t *payload; /**< the block to send (xmalloc'd), NULL when not served */
	size_t len;
	uint32_t csum;               /**< its frame checksum */
	bool copied;                 /**< only for getstats: the payload was re-encoded */
	bool cmpct;                  /**< asked as MSG_CMPCT_BLOCK */
	bool filtered;               /**< asked as MSG_FILTERED_BLOCK: checked, never sent */
	bool limited;                /**< we are pruned: only the last blocks are served */
	bool too_deep;               /**< below the limited window: disconnect */
	bool unreadable;             /**< stored but not read back: disconnect */
	struct proto_writer compact; /**< the cmpctblock frame, when one is sent instead */
};

/* Validation thread: the block without witnesses, re-encoded in place of raw. */
static int strip_witness(uint8_t **raw, size_t *len, uint32_t *csum)
{
	struct proto_block b;
	proto_block_init(&b);
	struct proto_writer w;
	proto_writer_init(&w);
	int err = 0;
	if (proto_block_decode(*raw, *len, &b, NULL)) {
		err = CHAIN_ECORRUPT;
		goto out;
	}
	proto_block_header_encode(&b.hdr, &w);
	proto_write_compact(&w, b.n_tx);
	for (uint32_t i = 0; i < b.n_tx; i++)
		proto_tx_encode_stripped(&b.txs[i], &w);
	if (w.err) {
		err = CHAIN_ENOMEM;
		goto out;
	}
	xfree(*raw);
	*raw = w.buf;
	*len = w.len;
	w.buf = NULL;
	/* Other bytes, another checksum: the one case that hashes. */
	uint8_t h[32];
	proto_sha256d(*raw, *len, h);
	*csum = proto_le32(h);
out:
	proto_writer_release(&w);
	proto_block_release(&b);
	return err;
}

/* Core's STALE_RELAY_AGE_LIMIT: a month, in seconds. */
#define SYNC_STALE_RELAY_AGE_LIMIT (30 * 24 * 60 * 60)

bool sync_block_request_allowed(struct chain *c, const struct chain_node *n)
{
	if (chain_contains(c, n))
		return true;
	if (chain_node_failed(n) || chain_node_level(n) < CHAIN_VALID_SCRIPTS)
		return false;
	const struct chain_node *best = chain_index_best_header(chain_get_index(c));
	if (!best || (int64_t)best->time - (int64_t)n->time >= SYNC_STALE_RELAY_AGE_LIMIT)
		return false;
	return chain_proof_equivalent_time(best, n, best, chain_params(c)) <
	       SYNC_STALE_RELAY_AGE_LIMIT;
}

static void serve_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct serve_job *sj = (struct serve_job *)j;
	(void)mp;
	const struct proto_params *pp = sj->d->params;
	if (!c) {
		/* No chain open (unit tests): only the genesis block exists. */
		if (proto_hash_eq(&sj->hash, &pp->genesis_hash) &&
		    (sj->payload = xmalloc(pp->genesis_len))) {
			memcpy(sj->payload, pp->genesis, pp->genesis_len);
			sj->len = pp->genesis_len;
			uint8_t h[32];
			proto_sha256d(sj->payload, sj->len, h);
			sj->csum = proto_le32(h);
		}
		return;
	}
	struct chain_node *n = chain_index_find(chain_get_index(c), &sj->hash);
	if (!n || !sync_block_request_allowed(c, n))
		return;
	/* Core checks the depth before the data: a pruned block is refused
	 * the same way as a deep one we still have. */
	if (sj->limited && chain_height(c) - n->height > PEER_LIMITED_MIN_BLOCKS + 2) {
		sj->too_deep = true;
		return;
	}
	if (!(n->status & CHAIN_HAVE_DATA) || sj->filtered)
		return;
	/* The stored bytes and the checksum from the index: no decode, no hash. */
	if (chain_read_block_framed(c, n, &sj->payload, &sj->len, &sj->csum)) {
		sj->unreadable = true;
		goto fail;
	}
	/* Near the tip, a compact block instead (sync/cmpct_serve.c). */
	if (sj->cmpct && sync_cmpct_serve_build(c, pp, n, sj->payload, sj->len, &sj->compact)) {
		xfree(sj->payload);
		sj->payload = NULL;
		return;
	}
	if (!sj->witness) {
		sj->copied = true;
		if (strip_witness(&sj->payload, &sj->len, &sj->csum))
			goto fail;
	}
	return;
fail:
	xfree(sj->payload);
	sj->payload = NULL;
}

/* Magic and command of a block frame (written each time: the same bytes). */
static const uint8_t *block_prefix(struct daemon *d)
{
	memset(d->block_prefix, 0, sizeof(d->block_prefix));
	proto_put_le32(d->block_prefix, d->params->magic);
	memcpy(d->block_prefix + 4, "block", 5);
	return d->block_prefix;
}

static void serve_done(struct daemon *d, struct val_job *j)
{
	struct serve_job *sj = (struct serve_job *)j;
	struct peer *p = peer_by_id(d, sj->peer_id);
	if (p && p->state != PEER_CLOSING && !j->cancelled && (sj->too_deep || sj->unreadable)) {
		/* Core's words; logips is off: no address. */
		if (sj->too_deep)
			DLOG_DBG(&d->log, DLOG_NET,
			         "Ignore block request below NODE_NETWORK_LIMITED threshold, "
			         "disconnecting peer=%llu",
			         (unsigned long long)p->id);
		else
			DLOG_ERR(&d->log, DLOG_NET,
			         "Cannot load block from disk, disconnecting peer=%llu",
			         (unsigned long long)p->id);
		d->stats.blocks_not_served++;
		p->sync->serve_busy = false;
		peer_disconnect(p, sj->too_deep
		                       ? "block request below NODE_NETWORK_LIMITED threshold"
		                       : "block not read");
	} else if (p && p->state != PEER_CLOSING) {
		p->sync->serve_busy = false;
		if (!j->cancelled && sj->compact.len) {
			peer_send_frame(p, PROTO_CMD_CMPCTBLOCK, sj->compact.buf, sj->compact.len);
			d->stats.blocks_served++;
		} else if (!j->cancelled && sj->payload) {
			peer_send_owned(p, PROTO_CMD_BLOCK, block_prefix(d), sj->payload, sj->len,
			                sj->csum);
			sj->payload = NULL;
			d->stats.blocks_served++;
			d->stats.blocks_served_reencoded += sj->copied;
		} else if (!j->cancelled) {
			d->stats.blocks_not_served++;
		}
		if (p->state != PEER_CLOSING) {
			serve_next(p);
			/* The queue is done: messages that waited go on. */
			if (!serve_pending(p) && !p->send_paused)
				peer_resume(p);
		}
	}
	xfree(sj->payload);
	proto_writer_release(&sj->compact);
	xfree(sj);
}

int serve_queue(struct peer *p, const struct proto_inv_vec *v)
{
	if (p->sync->serve_head == p->sync->serve_n)
		p->sync->serve_head = p->sync->serve_n = 0;
	if (p->sync->serve_n >= SERVE_MAX_QUEUE)
		return -ENOSPC;
	if (p->sync->serve_n == p->sync->serve_cap) {
		uint32_t ncap = p->sync->serve_cap ? p->sync->serve_cap * 2 : SERVE_INITIAL_CAP;
		if (ncap > SERVE_MAX_QUEUE)
			ncap = SERVE_MAX_QUEUE;
		struct proto_inv_vec *q = xreallocarray(p->sync->serve_q, ncap, sizeof(*q));
		if (!q)
			return -ENOMEM;
		p->sync->serve_q = q;
		p->sync->serve_cap = ncap;
	}
	p->sync->serve_q[p->sync->serve_n++] = *v;
	return 0;
}

/* Send the transactions gathered for notfound, if any. */
static void flush_notfound(struct peer *p)
{
	struct daemon *d = p->d;
	if (!d->out.inv.n || p->state == PEER_CLOSING) {
		d->out.inv.n = 0;
		return;
	}
	d->stats.notfound_sent += d->out.inv.n;
	d->out.cmd = PROTO_CMD_NOTFOUND;
	(void)peer_send_msg(p, &d->out);
	d->out.inv.n = 0;
}

/* Gather a transaction peerd does not serve (not in the relay mirror). */
static void add_notfound(struct daemon *d, const struct proto_inv_vec *v)
{
	struct proto_inv *inv = &d->out.inv;
	if (proto_inv_reserve(inv, inv->n + 1))
		return;
	inv->v[inv->n++] = *v;
}

/*
 * getdata MSG_CMPCT_BLOCK of the block whose cmpctblock was built last
 * (pushed to high-bandwidth peers, sync/cmpct_recent.c): that frame, with
 * no job, when the block is on our chain within Core's
 * MAX_CMPCTBLOCK_DEPTH of a tip fit for direct fetch (the conditions
 * sync_cmpct_serve_build applies), as Core's m_most_recent_compact_block.
 */
static bool serve_recent(struct peer *p, const struct proto_hash *hash)
{
	struct daemon *d = p->d;
	size_t len;
	const uint8_t *frame = sync_cmpct_recent(d, hash, &len);
	int32_t height = chainview_height(d);
	int32_t h = frame ? chainview_find(d, hash) : -1;
	const struct chainview_rec *tip = chainview_at(d, height);
	if (h < 0 || h < height - 5 || !tip)
		return false;
	int64_t tip_time = (int64_t)proto_le32(tip->header + 68);
	if (tip_time <= base_time() - 20 * d->params->pow_target_spacing)
		return false;
	peer_send_frame(p, PROTO_CMD_CMPCTBLOCK, frame, len);
	d->stats.blocks_served++;
	d->sync->cmpct_recent_reused++;
	return true;
}

void serve_next(struct peer *p)
{
	struct daemon *d = p->d;
	d->out.inv.n = 0;
	while (!p->sync->serve_busy && p->sync->serve_head < p->sync->serve_n && !p->send_paused &&
	       p->state != PEER_CLOSING) {
		const struct proto_inv_vec *v = &p->sync->serve_q[p->sync->serve_head++];
		uint32_t base = v->type & ~(uint32_t)PROTO_INV_WITNESS_FLAG;
		if (base == PROTO_INV_TX || base == PROTO_INV_WTX) {
			/* Through the serve_tx hook (the relay mirror, as the
			 * wiring registers it), else notfound. */
			const struct sync_hooks *h = d->sync->hooks;
			if (!h || !h->serve_tx || !h->serve_tx(p, v))
				add_notfound(d, v);
			continue;
		}
		/* A compact block request (Core asks for one after a headers
		 * announcement) gets a cmpctblock near the tip, else the
		 * whole block, as Core; filtered blocks (BIP37) are not
		 * offered, but a pruned node checks their depth as Core's. */
		bool cmpct = base == PROTO_INV_CMPCT_BLOCK;
		bool filtered = base == PROTO_INV_FILTERED_BLOCK;
		bool limited = !(daemon_local_services(d) & PROTO_NODE_NETWORK);
		if (base != PROTO_INV_BLOCK && !cmpct && !(filtered && limited))
			continue;
		/* Answers go out in the order asked, as Core's. */
		flush_notfound(p);
		if (cmpct && serve_recent(p, &v->hash))
			continue;
		struct serve_job *sj = xmalloc(sizeof(*sj));
		if (!sj)
			continue;
		memset(sj, 0, sizeof(*sj));
		sj->job.work = serve_work;
		sj->job.done = serve_done;
		sj->d = d;
		sj->peer_id = p->id;
		sj->hash = v->hash;
		sj->witness = cmpct || (v->type & PROTO_INV_WITNESS_FLAG) != 0;
		sj->cmpct = cmpct;
		sj->filtered = filtered;
		sj->limited = limited;
		proto_writer_init(&sj->compact);
		if (validation_post(d, &sj->job)) {
			xfree(sj);
			continue;
		}
		p->sync->serve_busy = true;
	}
	flush_notfound(p);
	if (p->sync->serve_head == p->sync->serve_n && !p->sync->serve_busy) {
		/* Done: the queue's memory goes back until the next getdata. */
		xfree(p->sync->serve_q);
		p->sync->serve_q = NULL;
		p->sync->serve_head = p->sync->serve_n = p->sync->serve_cap = 0;
	}
}

void serve_peer_gone(struct peer *p)
{
	xfree(p->sync->serve_q);
	p->sync->serve_q = NULL;
	p->sync->serve_head = p->sync->serve_n = p->sync->serve_cap = 0;
}
