/*
 * daemon/txrelay/request.c: the transaction request tracker (Bitcoin
 * Core's TxRequestTracker, simplified): which peers announced a
 * transaction peerd lacks, which one it was asked of, and when to ask
 * another.
 *
 *   - each announced transaction peerd does not already have (the caller,
 *     txrelay/accept.c, checks the mempool, orphanage, recent rejects and
 *     recently confirmed) is requested once, from one announcer at a time:
 *     up to 100 requests in flight per peer, up to 5,000 tracked
 *     announcements per peer, 100,000 in all.
 *   - a request unanswered after 60 s (GETDATA_TX_INTERVAL), or answered
 *     with notfound, falls back to the next announcer; when none is left
 *     the announcement is forgotten.
 *   - an orphan's missing parents are tracked here too, by txid, as
 *     announced by each of its announcers.
 *   - a peer's tx_announced and tx_inflight count its share of the tracker.
 *
 * Requests go into the getdata batch p2p/inv.c keeps in d->out.inv
 * (inv_batch_add): inside an inv they leave with that inv's other
 * requests, once p2p has read it all. The known-inventory sets and the
 * parsing of inv, getdata and notfound stay in p2p/inv.c, which hands the
 * transaction entries up through its hooks (daemon/p2p_hooks.c).
 */
#include "daemon/txrelay/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TXREQUEST_NONE UINT32_MAX

/** One tracked announcement. Peer references are id + 1 (0 = none). */
struct txrequest_entry {
	struct proto_hash hash;
	uint32_t type;      /**< PROTO_INV_TX or PROTO_INV_WTX, as announced */
	uint32_t next_free; /**< free-list link while unused */
	uint64_t requested; /**< peer asked (id + 1), 0 while waiting */
	uint64_t expiry_ms;
	uint64_t ann[TXREQUEST_MAX_ANNOUNCERS];
	uint8_t n_ann;
	bool used;
};

/** A request chosen by the tick, sent grouped by peer. */
struct txrequest_pending {
	uint64_t peer;
	uint32_t slot;
};

int txrequest_init(struct daemon *d)
{
	struct txrequest_state *s = d->txreq;
	memset(s, 0, sizeof(*s));
	hmap_init(&s->req_index);
	s->free_head = TXREQUEST_NONE;
	return 0;
}

void txrequest_release(struct daemon *d)
{
	struct txrequest_state *s = d->txreq;
	hmap_release(&s->req_index);
	xfree(s->reqs);
	s->reqs = NULL;
	xfree(s->pending);
	s->pending = NULL;
	s->pending_cap = 0;
}

uint32_t txrequest_tracked(const struct daemon *d)
{
	return d->txreq->reqs_used;
}

static inline uint64_t ref(const struct peer *p)
{
	return p->id + 1;
}

/* The live peer behind a reference, or NULL once it is closing or gone. */
static struct peer *deref(struct daemon *d, uint64_t r)
{
	if (!r)
		return NULL;
	struct peer *p = peer_by_id(d, r - 1);
	return p && p->state == PEER_ACTIVE ? p : NULL;
}

static uint64_t hash_fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

static int req_alloc(struct txrequest_state *s, uint32_t *slot)
{
	if (s->free_head != TXREQUEST_NONE) {
		*slot = s->free_head;
		s->free_head = s->reqs[*slot].next_free;
		return 0;
	}
	if (s->reqs_cap <= s->reqs_used) {
		uint32_t ncap = s->reqs_cap ? s->reqs_cap * 2 : 256;
		if (ncap > TXREQUEST_MAX_TRACKED)
			ncap = TXREQUEST_MAX_TRACKED;
		if (ncap <= s->reqs_cap)
			return -ENOSPC;
		struct txrequest_entry *n = xreallocarray(s->reqs, ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		/* New slots go on the free list, lowest first. */
		for (uint32_t i = ncap; i-- > s->reqs_cap;) {
			n[i].used = false;
			n[i].next_free = s->free_head;
			s->free_head = i;
		}
		s->reqs = n;
		s->reqs_cap = ncap;
	}
	*slot = s->free_head;
	s->free_head = s->reqs[*slot].next_free;
	return 0;
}

static void drop_announcer(struct daemon *d, struct txrequest_entry *e, uint8_t i)
{
	struct peer *q = peer_by_id(d, e->ann[i] - 1);
	if (q && q->txreq->tx_announced)
		q->txreq->tx_announced--;
	e->ann[i] = e->ann[--e->n_ann];
}

static void clear_request(struct daemon *d, struct txrequest_entry *e)
{
	if (!e->requested)
		return;
	struct peer *q = peer_by_id(d, e->requested - 1);
	if (q && q->txreq->tx_inflight)
		q->txreq->tx_inflight--;
	e->requested = 0;
}

static void req_delete(struct daemon *d, uint32_t slot)
{
	struct txrequest_state *s = d->txreq;
	struct txrequest_entry *e = &s->reqs[slot];
	clear_request(d, e);
	while (e->n_ann)
		drop_announcer(d, e, (uint8_t)(e->n_ann - 1));
	hmap_del(&s->req_index, hash_fp(d, &e->hash));
	e->used = false;
	e->next_free = s->free_head;
	s->free_head = slot;
	s->reqs_used--;
}

static bool req_find(struct daemon *d, uint64_t fp, uint32_t *slot)
{
	return hmap_get(&d->txreq->req_index, fp, slot);
}

/* The inv entry to ask `p` for e: wtxid, or txid with the witness flag. */
static void request_vec(const struct peer *p, const struct txrequest_entry *e,
                        struct proto_inv_vec *v)
{
	v->hash = e->hash;
	if (e->type == PROTO_INV_WTX)
		v->type = PROTO_INV_WTX;
	else
		v->type = PROTO_INV_TX |
		          ((p->services & PROTO_NODE_WITNESS) ? PROTO_INV_WITNESS_FLAG : 0);
}

static bool can_ask(const struct peer *p)
{
	return p->state == PEER_ACTIVE && !p->send_paused &&
	       p->txreq->tx_inflight < TXREQUEST_MAX_PEER_INFLIGHT;
}

static void mark_requested(struct daemon *d, struct peer *p, struct txrequest_entry *e,
                           uint64_t now_ms)
{
	e->requested = ref(p);
	e->expiry_ms = now_ms + TXREQUEST_GETDATA_TX_INTERVAL_MS;
	p->txreq->tx_inflight++;
	d->stats.tx_requested++;
}

void txrequest_add(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms)
{
	struct daemon *d = p->d;
	struct txrequest_state *s = d->txreq;
	uint64_t fp = hash_fp(d, &v->hash);
	uint32_t slot;
	if (p->txreq->tx_announced >= TXREQUEST_MAX_PEER_ANNOUNCEMENTS) {
		d->stats.inv_ignored_full++;
		return;
	}
	struct txrequest_entry *e;
	if (req_find(d, fp, &slot)) {
		e = &s->reqs[slot];
		for (uint8_t i = 0; i < e->n_ann; i++) {
			if (e->ann[i] == ref(p))
				return;
		}
		if (e->n_ann >= TXREQUEST_MAX_ANNOUNCERS)
			return;
	} else {
		if (s->reqs_used >= TXREQUEST_MAX_TRACKED || req_alloc(s, &slot)) {
			d->stats.inv_ignored_full++;
			return;
		}
		if (hmap_put(&s->req_index, fp, slot)) {
			s->reqs[slot].next_free = s->free_head;
			s->free_head = slot;
			d->stats.inv_ignored_full++;
			return;
		}
		e = &s->reqs[slot];
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->hash = v->hash;
		e->type = v->type == PROTO_INV_WTX ? PROTO_INV_WTX : PROTO_INV_TX;
		s->reqs_used++;
	}
	e->ann[e->n_ann++] = ref(p);
	p->txreq->tx_announced++;
	if (!e->requested && can_ask(p)) {
		struct proto_inv_vec rv;
		request_vec(p, e, &rv);
		if (inv_batch_add(d, &rv) == 0)
			mark_requested(d, p, e, now_ms);
	}
}

void txrequest_on_notfound(struct peer *p, const struct proto_inv_vec *v)
{
	struct daemon *d = p->d;
	uint32_t slot;
	if (!req_find(d, hash_fp(d, &v->hash), &slot))
		return;
	struct txrequest_entry *e = &d->txreq->reqs[slot];
	if (e->requested != ref(p))
		return;
	/* p does not have it after all: forget p as a source; the next
	 * tick asks another announcer. */
	clear_request(d, e);
	for (uint8_t j = 0; j < e->n_ann; j++) {
		if (e->ann[j] == ref(p)) {
			drop_announcer(d, e, j);
			break;
		}
	}
	if (!e->n_ann)
		req_delete(d, slot);
}

bool txrequest_asked(struct peer *p, const struct proto_hash *h)
{
	struct daemon *d = p->d;
	uint32_t slot;
	return req_find(d, hash_fp(d, h), &slot) && d->txreq->reqs[slot].requested == ref(p);
}

uint32_t txrequest_take_announcers(struct daemon *d, const struct proto_hash *h, uint64_t *out,
                                   uint32_t cap)
{
	uint32_t slot, n = 0;
	if (!req_find(d, hash_fp(d, h), &slot))
		return 0;
	struct txrequest_entry *e = &d->txreq->reqs[slot];
	if (!proto_hash_eq(&e->hash, h))
		return 0;
	for (uint8_t i = 0; i < e->n_ann && n < cap; i++)
		out[n++] = e->ann[i] - 1;
	req_delete(d, slot);
	return n;
}

void txrequest_forget(struct daemon *d, const struct proto_hash *h)
{
	uint32_t slot;
	if (req_find(d, hash_fp(d, h), &slot) && proto_hash_eq(&d->txreq->reqs[slot].hash, h))
		req_delete(d, slot);
}

void txrequest_track_parent(struct peer *p, const struct proto_hash *txid)
{
	struct daemon *d = p->d;
	struct proto_inv_vec v = {.type = PROTO_INV_TX, .hash = *txid};
	/* Inside an inv the batch holds that inv's requests, to this same
	 * peer: sending them with the parent's keeps the order. */
	txrequest_add(p, &v, (uint64_t)daemon_time_ms(d));
	inv_batch_send(p, PROTO_CMD_GETDATA);
}

static int cmp_pending(const void *a, const void *b)
{
	const struct txrequest_pending *x = a, *y = b;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int pending_add(struct txrequest_state *s, size_t *n, uint64_t peer, uint32_t slot)
{
	if (*n == s->pending_cap) {
		size_t ncap = s->pending_cap ? s->pending_cap * 2 : 256;
		struct txrequest_pending *np = xreallocarray(s->pending, ncap, sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->pending = np;
		s->pending_cap = ncap;
	}
	s->pending[(*n)++] = (struct txrequest_pending){peer, slot};
	return 0;
}

void txrequest_tick(struct daemon *d, uint64_t now_ms)
{
	struct txrequest_state *s = d->txreq;
	size_t n_pending = 0;
	for (uint32_t slot = 0; slot < s->reqs_cap; slot++) {
		struct txrequest_entry *e = &s->reqs[slot];
		if (!e->used)
			continue;
		if (e->requested) {
			struct peer *q = deref(d, e->requested);
			bool expired = now_ms >= e->expiry_ms;
			if (q && !expired)
				continue;
			if (expired)
				d->stats.tx_request_timeouts++;
			uint64_t r = e->requested;
			clear_request(d, e);
			for (uint8_t j = 0; j < e->n_ann; j++) {
				if (e->ann[j] == r) {
					drop_announcer(d, e, j);
					break;
				}
			}
		}
		/* Forget announcers that went away. */
		for (uint8_t j = e->n_ann; j-- > 0;) {
			if (!deref(d, e->ann[j]))
				drop_announcer(d, e, j);
		}
		if (!e->n_ann) {
			req_delete(d, slot);
			continue;
		}
		for (uint8_t j = 0; j < e->n_ann; j++) {
			struct peer *q = deref(d, e->ann[j]);
			if (q && can_ask(q)) {
				mark_requested(d, q, e, now_ms);
				if (pending_add(s, &n_pending, e->requested, slot))
					clear_request(d, e);
				break;
			}
		}
	}
	if (!n_pending)
		return;
	struct txrequest_pending *pending = s->pending;
	qsort(pending, n_pending, sizeof(*pending), cmp_pending);
	for (size_t i = 0; i < n_pending;) {
		struct peer *q = deref(d, pending[i].peer);
		size_t j = i;
		d->out.inv.n = 0;
		for (; j < n_pending && pending[j].peer == pending[i].peer; j++) {
			struct proto_inv_vec v;
			if (!q)
				continue;
			request_vec(q, &s->reqs[pending[j].slot], &v);
			(void)inv_batch_add(d, &v);
		}
		if (q)
			inv_batch_send(q, PROTO_CMD_GETDATA);
		i = j;
	}
}
