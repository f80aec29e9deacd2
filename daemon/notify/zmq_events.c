/*
 * daemon/notify/zmq_events.c: what the validation thread tells the ZMQ
 * publisher, as Core 29's CZMQNotificationInterface hears it from the
 * validation signals.
 *
 *   mempool accept      hashtx, rawtx; sequence "A" with the mempool sequence
 *   mempool removal     sequence "R" with the mempool sequence, for every
 *                       reason but a block (Core's TransactionRemovedFromMempool)
 *   block connected     hashtx, rawtx of each of its transactions; sequence "C"
 *   block disconnected  hashtx, rawtx of each of its transactions; sequence "D"
 *   chain settled       hashblock, rawblock of the new tip when blocks were
 *                       connected and not during initial block download
 *                       (Core's UpdatedBlockTip)
 *
 * The order is Core's because the listeners are told in order: the
 * mempool's chain listener is registered first (its conflict removals
 * come before our "C"), it re-adds a reorg's transactions when the chain
 * settles (their "A" after the last "D" and "C"), and we publish the new
 * tip last. The mempool sequence Core sends is the one before its bump;
 * peerd's pool has bumped it when it tells us, so we send one less.
 *
 * Hashes go out in display order (reversed), as Core's. Validation thread only.
 */
#include "daemon/notify/notify.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "mempool/mempool.h"

/* Publish on every notifier of topic t. */
static void publish(struct notify_state *s, int t, const char *topic, const void *body, size_t len)
{
	for (uint32_t i = 0; i < s->n_pubs; i++)
		if (s->pubs[i].topic == t)
			notify_zmq_queue(s, &s->pubs[i], topic, body, len);
}

static bool wants(const struct notify_state *s, int t)
{
	return (s->wants >> t) & 1u;
}

static void reversed(const struct proto_hash *h, uint8_t out[32])
{
	for (int i = 0; i < 32; i++)
		out[i] = h->b[31 - i];
}

/* sequence: the hash, the label, and for A/R the mempool sequence as 8 bytes LE. */
static void publish_sequence(struct notify_state *s, const struct proto_hash *h, char label,
                             bool with_seq, uint64_t seq)
{
	uint8_t body[32 + 1 + 8];
	reversed(h, body);
	body[32] = (uint8_t)label;
	for (int i = 0; i < 8; i++)
		body[33 + i] = (uint8_t)(seq >> (8 * i));
	publish(s, CONF_ZMQ_SEQUENCE, "sequence", body, with_seq ? sizeof(body) : 33);
}

/* hashtx and rawtx of one transaction (ids computed by the caller). */
static void publish_tx(struct notify_state *s, const struct proto_tx *tx)
{
	if (wants(s, CONF_ZMQ_HASHTX)) {
		uint8_t h[32];
		reversed(&tx->txid, h);
		publish(s, CONF_ZMQ_HASHTX, "hashtx", h, sizeof(h));
	}
	if (wants(s, CONF_ZMQ_RAWTX)) {
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(tx, &w);
		if (!w.err)
			publish(s, CONF_ZMQ_RAWTX, "rawtx", w.buf, w.len);
		proto_writer_release(&w);
	}
}

static void block_txs(struct notify_state *s, struct proto_block *b, char label)
{
	for (uint32_t i = 0; i < b->n_tx; i++) {
		proto_tx_compute_ids(&b->txs[i]);
		publish_tx(s, &b->txs[i]);
	}
	if (wants(s, CONF_ZMQ_SEQUENCE)) {
		struct proto_hash h;
		proto_block_header_hash(&b->hdr, &h);
		publish_sequence(s, &h, label, false, 0);
	}
}

static void on_block_connected(void *ctx, struct chain *c, struct proto_block *b)
{
	(void)c;
	block_txs(ctx, b, 'C');
}

static int on_block_disconnected(void *ctx, struct chain *c, struct proto_block *b)
{
	(void)c;
	block_txs(ctx, b, 'D');
	return 0;
}

static int on_chain_settled(void *ctx, struct chain *c)
{
	struct notify_state *s = ctx;
	struct chain_node *tip = chain_tip(c);
	const struct chain_node *old = s->settled;
	s->settled = tip;
	if (!tip || tip == old)
		return 0;
	/* Only disconnected (the tip is the fork point): nothing new to show. */
	if (old && chain_node_fork((struct chain_node *)old, tip) == tip)
		return 0;
	if (chain_in_ibd(c))
		return 0;
	if (wants(s, CONF_ZMQ_HASHBLOCK)) {
		uint8_t h[32];
		reversed(&tip->hash, h);
		publish(s, CONF_ZMQ_HASHBLOCK, "hashblock", h, sizeof(h));
	}
	if (wants(s, CONF_ZMQ_RAWBLOCK)) {
		uint8_t *raw = NULL;
		size_t len = 0;
		if (chain_read_block(c, tip, &raw, &len) == 0)
			publish(s, CONF_ZMQ_RAWBLOCK, "rawblock", raw, len);
		else
			DLOG_ERR(&s->d->log, DLOG_MAIN, "zmq: Can't read block from disk");
		xfree(raw);
	}
	return 0;
}

static void on_chain_closed(void *ctx, struct chain *c)
{
	struct notify_state *s = ctx;
	(void)c;
	s->chain = NULL;
}

static void on_added(void *arg, const struct mempool_entry *e, enum mempool_addition how)
{
	struct notify_state *s = arg;
	(void)how;
	const struct proto_tx *tx = mempool_entry_tx(e);
	publish_tx(s, tx);
	if (wants(s, CONF_ZMQ_SEQUENCE))
		publish_sequence(s, &tx->txid, 'A', true, mempool_sequence(s->mempool) - 1);
}

static void on_removed(void *arg, const struct mempool_entry *e, enum mempool_removal why)
{
	struct notify_state *s = arg;
	/* A block's transactions are told with the block, as Core's. */
	if (why == MEMPOOL_REMOVED_BLOCK || !wants(s, CONF_ZMQ_SEQUENCE))
		return;
	publish_sequence(s, mempool_entry_txid(e), 'R', true, mempool_sequence(s->mempool) - 1);
}

/* Entries by the sequence they entered with: the order mempool.dat loaded them. */
static int cmp_entry_seq(const void *a, const void *b)
{
	struct mempool_entry_info x, y;
	mempool_entry_info(*(const struct mempool_entry *const *)a, &x);
	mempool_entry_info(*(const struct mempool_entry *const *)b, &y);
	return x.sequence < y.sequence ? -1 : x.sequence > y.sequence;
}

/*
 * mempool.dat was read before we listened; Core's loader accepts each
 * transaction with its ZMQ interface already registered, so each is told
 * as an accept: hashtx, rawtx and A with the sequence it entered with.
 */
static void publish_loaded(struct notify_state *s, struct mempool *mp)
{
	const struct mempool_entry **es = NULL;
	size_t n = 0;
	if (mempool_list(mp, MEMPOOL_ORDER_DEPTH_SCORE, &es, &n) || !n) {
		xfree(es);
		return;
	}
	qsort(es, n, sizeof(*es), cmp_entry_seq);
	for (size_t i = 0; i < n; i++) {
		struct mempool_entry_info info;
		mempool_entry_info(es[i], &info);
		const struct proto_tx *tx = mempool_entry_tx(es[i]);
		publish_tx(s, tx);
		if (wants(s, CONF_ZMQ_SEQUENCE))
			publish_sequence(s, &tx->txid, 'A', true, info.sequence);
	}
	xfree(es);
}

void notify_zmq_attach(struct daemon *d, struct chain *c, struct mempool *mp)
{
	struct notify_state *s = d->notify;
	if (s->attached || !c || !s->zctx)
		return;
	s->attached = true;
	s->chain = c;
	s->mempool = mp;
	s->settled = chain_tip(c);
	struct chain_listener l = {.block_connected = on_block_connected,
	                           .block_disconnected = on_block_disconnected,
	                           .chain_settled = on_chain_settled,
	                           .chain_closed = on_chain_closed,
	                           .ctx = s};
	if (chain_listen(c, &l))
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "zmq: cannot listen to the chain: no block notifications");
	struct mempool_events ev = {.added = on_added, .removed = on_removed, .arg = s};
	if (mp && mempool_listen(mp, &ev))
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "zmq: cannot listen to the mempool: no tx notifications");
	else if (mp)
		publish_loaded(s, mp);
}
