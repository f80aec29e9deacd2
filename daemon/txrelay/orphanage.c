/*
 * daemon/txrelay/orphanage.c: the orphanage (see daemon/txrelay/orphanage.h).
 *
 * A flat array of at most ORPHAN_MAX + 1 entries (one over the limit for
 * the moment between orphan_add and orphan_limit): every lookup by wtxid,
 * by spent outpoint or by announcer is a scan of at most 101 entries,
 * which costs less than keeping Core's three indexes in step. Removing
 * moves the last entry into the hole, as Core's m_orphan_list does for
 * its random eviction.
 */
#include "daemon/txrelay/orphanage.h"

#include <errno.h>
#include <string.h>

#include "base/alloc.h"

static uint64_t default_rand(void *arg, uint64_t n)
{
	(void)arg;
	return proto_random_u64() % n;
}

void orphan_init(struct orphanage *o, orphan_rand_fn rand, void *rand_arg)
{
	memset(o, 0, sizeof(*o));
	o->rand = rand ? rand : default_rand;
	o->rand_arg = rand_arg;
}

static void free_entry(struct orphan_tx *e)
{
	xfree(e->raw);
	xfree(e->prevouts);
	xfree(e->announcers);
	memset(e, 0, sizeof(*e));
}

void orphan_release(struct orphanage *o)
{
	for (uint32_t i = 0; i < o->n; i++)
		free_entry(&o->v[i]);
	xfree(o->v);
	xfree(o->work);
	orphan_rand_fn r = o->rand;
	void *arg = o->rand_arg;
	memset(o, 0, sizeof(*o));
	o->rand = r;
	o->rand_arg = arg;
}

static int find(const struct orphanage *o, const struct proto_hash *wtxid)
{
	for (uint32_t i = 0; i < o->n; i++) {
		if (proto_hash_eq(&o->v[i].wtxid, wtxid))
			return (int)i;
	}
	return -1;
}

const struct orphan_tx *orphan_get(const struct orphanage *o, const struct proto_hash *wtxid)
{
	int i = find(o, wtxid);
	return i < 0 ? NULL : &o->v[i];
}

static bool has_announcer(const struct orphan_tx *e, uint64_t peer)
{
	for (uint32_t i = 0; i < e->n_ann; i++) {
		if (e->announcers[i] == peer)
			return true;
	}
	return false;
}

bool orphan_have_from_peer(const struct orphanage *o, const struct proto_hash *wtxid, uint64_t peer)
{
	const struct orphan_tx *e = orphan_get(o, wtxid);
	return e && has_announcer(e, peer);
}

static int push_announcer(struct orphan_tx *e, uint64_t peer)
{
	if (e->n_ann == e->cap_ann) {
		uint32_t ncap = e->cap_ann ? e->cap_ann * 2 : 2;
		uint64_t *a = xreallocarray(e->announcers, ncap, sizeof(*a));
		if (!a)
			return -ENOMEM;
		e->announcers = a;
		e->cap_ann = ncap;
	}
	e->announcers[e->n_ann++] = peer;
	return 0;
}

bool orphan_add_announcer(struct orphanage *o, const struct proto_hash *wtxid, uint64_t peer)
{
	int i = find(o, wtxid);
	if (i < 0 || has_announcer(&o->v[i], peer))
		return false;
	if (push_announcer(&o->v[i], peer))
		return false;
	o->total_announcements++;
	return true;
}

int orphan_add(struct orphanage *o, const struct proto_tx *tx, const uint8_t *raw, size_t len,
               uint64_t peer, int64_t now)
{
	if (find(o, &tx->wtxid) >= 0) {
		(void)orphan_add_announcer(o, &tx->wtxid, peer);
		return 0;
	}
	/* Core ignores big orphans: a peer with a real large transaction
	 * missing a parent sends it again once the parent is in. */
	uint32_t weight = proto_tx_weight(tx);
	if (weight > ORPHAN_MAX_WEIGHT) {
		o->too_heavy++;
		return 0;
	}
	if (o->n == o->cap) {
		uint32_t ncap = o->cap ? o->cap * 2 : 16;
		struct orphan_tx *v = xreallocarray(o->v, ncap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = ncap;
	}
	struct orphan_tx e;
	memset(&e, 0, sizeof(e));
	e.txid = tx->txid;
	e.wtxid = tx->wtxid;
	e.weight = weight;
	e.n_out = tx->n_out;
	e.n_in = tx->n_in;
	e.expire = now + ORPHAN_EXPIRE_S;
	e.raw = xmalloc(len ? len : 1);
	e.prevouts = xreallocarray(NULL, tx->n_in ? tx->n_in : 1, sizeof(*e.prevouts));
	if (!e.raw || !e.prevouts || push_announcer(&e, peer)) {
		free_entry(&e);
		return -ENOMEM;
	}
	memcpy(e.raw, raw, len);
	e.len = (uint32_t)len;
	for (uint32_t i = 0; i < tx->n_in; i++)
		e.prevouts[i] = tx->vin[i].prevout;
	o->v[o->n++] = e;
	o->total_weight += weight;
	o->total_announcements++;
	o->added++;
	return 1;
}

static void remove_at(struct orphanage *o, uint32_t i)
{
	struct orphan_tx *e = &o->v[i];
	o->total_weight -= e->weight;
	o->total_announcements -= e->n_ann;
	free_entry(e);
	if (i + 1 != o->n)
		o->v[i] = o->v[o->n - 1];
	o->n--;
}

int orphan_erase(struct orphanage *o, const struct proto_hash *wtxid)
{
	int i = find(o, wtxid);
	if (i < 0)
		return 0;
	remove_at(o, (uint32_t)i);
	return 1;
}

unsigned orphan_erase_for_peer(struct orphanage *o, uint64_t peer)
{
	unsigned erased = 0;
	/* Its work set goes with it. */
	uint32_t k = 0;
	for (uint32_t i = 0; i < o->n_work; i++) {
		if (o->work[i].peer != peer)
			o->work[k++] = o->work[i];
	}
	o->n_work = k;
	for (uint32_t i = o->n; i-- > 0;) {
		struct orphan_tx *e = &o->v[i];
		for (uint32_t j = 0; j < e->n_ann; j++) {
			if (e->announcers[j] != peer)
				continue;
			e->announcers[j] = e->announcers[--e->n_ann];
			o->total_announcements--;
			break;
		}
		if (!e->n_ann) {
			remove_at(o, i);
			erased++;
		}
	}
	return erased;
}

unsigned orphan_limit(struct orphanage *o, uint32_t max, int64_t now)
{
	unsigned gone = 0;
	if (o->next_sweep <= now) {
		/* The next sweep comes ORPHAN_SWEEP_S after the next expiry, so
		 * the scan runs in batches. */
		int64_t min_exp = now + ORPHAN_EXPIRE_S - ORPHAN_SWEEP_S;
		for (uint32_t i = o->n; i-- > 0;) {
			if (o->v[i].expire <= now) {
				remove_at(o, i);
				o->expired++;
				gone++;
			} else if (o->v[i].expire < min_exp) {
				min_exp = o->v[i].expire;
			}
		}
		o->next_sweep = min_exp + ORPHAN_SWEEP_S;
	}
	while (o->n > max) {
		remove_at(o, (uint32_t)o->rand(o->rand_arg, o->n));
		o->evicted++;
		gone++;
	}
	return gone;
}

static void push_work(struct orphanage *o, uint64_t peer, const struct proto_hash *wtxid)
{
	for (uint32_t i = 0; i < o->n_work; i++) {
		if (o->work[i].peer == peer && proto_hash_eq(&o->work[i].wtxid, wtxid))
			return;
	}
	if (o->n_work >= ORPHAN_MAX_WORK)
		return;
	if (o->n_work == o->cap_work) {
		uint32_t ncap = o->cap_work ? o->cap_work * 2 : 16;
		struct orphan_work *w = xreallocarray(o->work, ncap, sizeof(*w));
		if (!w)
			return;
		o->work = w;
		o->cap_work = ncap;
	}
	o->work[o->n_work++] = (struct orphan_work){.peer = peer, .wtxid = *wtxid};
}

unsigned orphan_add_children_to_workset(struct orphanage *o, const struct proto_hash *txid,
                                        uint32_t n_out)
{
	unsigned queued = 0;
	for (uint32_t i = 0; i < o->n; i++) {
		struct orphan_tx *e = &o->v[i];
		bool spends = false;
		for (uint32_t j = 0; j < e->n_in && !spends; j++)
			spends =
			    e->prevouts[j].n < n_out && proto_hash_eq(&e->prevouts[j].txid, txid);
		if (!spends || !e->n_ann)
			continue;
		/* One announcer does the work: if the orphan still misses a
		 * parent, only one peer's time was spent on it. */
		uint64_t peer = e->announcers[o->rand(o->rand_arg, e->n_ann)];
		push_work(o, peer, &e->wtxid);
		queued++;
	}
	return queued;
}

const struct orphan_tx *orphan_take_work(struct orphanage *o, uint64_t peer)
{
	for (uint32_t i = 0; i < o->n_work;) {
		if (o->work[i].peer != peer) {
			i++;
			continue;
		}
		struct proto_hash w = o->work[i].wtxid;
		memmove(&o->work[i], &o->work[i + 1], (o->n_work - i - 1) * sizeof(*o->work));
		o->n_work--;
		int k = find(o, &w);
		if (k >= 0)
			return &o->v[k];
	}
	return NULL;
}

bool orphan_next_worker(const struct orphanage *o, uint64_t *peer)
{
	if (!o->n_work)
		return false;
	*peer = o->work[0].peer;
	return true;
}

unsigned orphan_erase_spending(struct orphanage *o, const struct proto_outpoint *spent,
                               size_t n_spent)
{
	unsigned erased = 0;
	if (!o->n)
		return 0;
	for (uint32_t i = o->n; i-- > 0;) {
		const struct orphan_tx *e = &o->v[i];
		bool hit = false;
		for (uint32_t j = 0; j < e->n_in && !hit; j++) {
			for (size_t k = 0; k < n_spent && !hit; k++)
				hit = e->prevouts[j].n == spent[k].n &&
				      proto_hash_eq(&e->prevouts[j].txid, &spent[k].txid);
		}
		if (hit) {
			remove_at(o, i);
			o->erased_for_block++;
			erased++;
		}
	}
	return erased;
}
