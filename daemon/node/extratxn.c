/*
 * daemon/node/extratxn.c: the ring of transactions peerd saw but did not
 * keep, for rebuilding compact blocks (Core 29's vExtraTxnForCompact and
 * -blockreconstructionextratxn).
 *
 * A block often holds a transaction our mempool turned away (a policy
 * reject, an orphan whose parent we lack, one replaced since): keeping
 * the last few lets the compact-block rebuild find it instead of asking
 * the peer with getblocktxn, a round trip on the block's path.
 *
 * Who fills it: txrelay/ (rejected transactions under 100 kB and new
 * orphans, from the loop, by posting a job) and the mempool's removal
 * event for a replaced transaction (txrelay/announce.c, on this thread).
 * Who reads it: sync/cmpct_receive.c's rebuild job, after the mempool's
 * candidates. sync/ and txrelay/ are siblings that never call each other,
 * and the reader runs on the validation thread, so the ring lives here,
 * below both, owned by that thread: no lock, and a job posted after an
 * add sees it (the thread's queue is first in, first out).
 *
 * As Core: the slots are allocated at the first add, each add overwrites
 * the oldest, and the walk goes in slot order; 0 keeps nothing.
 *
 * Validation thread, but for node_extratxn_post (loop thread) and
 * node_extratxn_release (after the thread is joined).
 */
#include "daemon/node/node.h"

#include <string.h>

/** One slot: a decoded transaction with its ids computed. */
struct extratxn_slot {
	struct proto_tx tx;
	bool used;
};

/** The ring (d->val->extratxn). Validation thread. */
struct node_extratxn {
	struct extratxn_slot *slots; /**< cap of them */
	uint32_t cap;                /**< -blockreconstructionextratxn */
	uint32_t next;               /**< the slot the next add overwrites */
	uint64_t added;              /**< transactions added since startup */
};

static struct node_extratxn *ring(struct daemon *d)
{
	struct validation *v = d->val;
	uint32_t cap = d->conf->blockreconstructionextratxn;
	if (v->extratxn || cap == 0)
		return v->extratxn;
	struct node_extratxn *x = xcalloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->slots = xcalloc(cap, sizeof(*x->slots));
	if (!x->slots) {
		xfree(x);
		return NULL;
	}
	x->cap = cap;
	for (uint32_t i = 0; i < cap; i++)
		proto_tx_init(&x->slots[i].tx);
	v->extratxn = x;
	return x;
}

void node_extratxn_add_raw(struct daemon *d, const uint8_t *raw, size_t len)
{
	struct node_extratxn *x = ring(d);
	if (!x)
		return;
	struct extratxn_slot *s = &x->slots[x->next];
	/* The slot's storage is reused: a decode grows it only when needed. */
	s->used = proto_tx_decode_buf(raw, len, &s->tx, NULL) == 0;
	if (!s->used)
		return;
	s->tx.ids_valid = s->tx.txid_valid = false;
	proto_tx_compute_ids(&s->tx);
	x->next = (x->next + 1) % x->cap;
	x->added++;
}

void node_extratxn_add(struct daemon *d, const struct proto_tx *tx)
{
	if (!d->conf->blockreconstructionextratxn)
		return;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(tx, &w);
	if (!w.err)
		node_extratxn_add_raw(d, w.buf, w.len);
	proto_writer_release(&w);
}

uint32_t node_extratxn_count(const struct daemon *d)
{
	const struct node_extratxn *x = d->val->extratxn;
	return x ? x->cap : 0;
}

const struct proto_tx *node_extratxn_at(const struct daemon *d, uint32_t i)
{
	const struct node_extratxn *x = d->val->extratxn;
	if (!x || i >= x->cap || !x->slots[i].used)
		return NULL;
	return &x->slots[i].tx;
}

uint64_t node_extratxn_added(const struct daemon *d)
{
	const struct node_extratxn *x = d->val->extratxn;
	return x ? x->added : 0;
}

/* ---- from the loop: a job that adds ------------------------------------- */

struct add_job {
	struct val_job job;
	struct daemon *d;
	size_t len;
	uint8_t raw[]; /* the transaction's serialization */
};

static void add_work(struct chain *c, struct mempool *mp, struct val_job *j)
{
	(void)c;
	(void)mp;
	struct add_job *aj = (struct add_job *)j;
	node_extratxn_add_raw(aj->d, aj->raw, aj->len);
}

static void add_done(struct daemon *d, struct val_job *j)
{
	(void)d;
	xfree(j);
}

void node_extratxn_post(struct daemon *d, const uint8_t *raw, size_t len)
{
	if (!d->conf->blockreconstructionextratxn || len >= NODE_EXTRATXN_MAX_TX_BYTES)
		return;
	struct add_job *aj = xmalloc(sizeof(*aj) + len);
	if (!aj)
		return;
	memset(aj, 0, sizeof(*aj));
	aj->job.work = add_work;
	aj->job.done = add_done;
	aj->d = d;
	aj->len = len;
	memcpy(aj->raw, raw, len);
	if (validation_post(d, &aj->job))
		xfree(aj);
}

void node_extratxn_release(struct daemon *d)
{
	struct node_extratxn *x = d->val->extratxn;
	if (!x)
		return;
	for (uint32_t i = 0; i < x->cap; i++)
		proto_tx_release(&x->slots[i].tx);
	xfree(x->slots);
	xfree(x);
	d->val->extratxn = NULL;
}
