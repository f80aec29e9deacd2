/*
 * chain/mempool.c: the mempool's entries and indexes (Core's CTxMemPool):
 * lookup by txid and wtxid, the spender of each outpoint, ancestor and
 * descendant figures kept up to date on every addition and removal,
 * expiry, trimming to the size limit with the rolling minimum fee, the
 * orders getrawmempool, relay and mining want, info and events.
 *
 * Indexes are open-addressing tables with linear probing and
 * backward-shift deletion (no tombstones to clean), keyed by a salted
 * SipHash: an attacker picking txids cannot aim at one bucket. Orders are
 * computed when asked for (a sort of the entry array) rather than kept as
 * four trees: acceptance, the hot path, then touches only the hash tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/mempool_internal.h"

/* ---- small arrays ----------------------------------------------------------- */

int mp_refs_push(struct mp_refs *r, struct chain_mempool_entry *e)
{
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 4;
		struct chain_mempool_entry **v = xreallocarray(r->v, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = e;
	return 0;
}

void mp_refs_release(struct mp_refs *r)
{
	xfree(r->v);
	memset(r, 0, sizeof(*r));
}

static void refs_remove(struct mp_refs *r, const struct chain_mempool_entry *e)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->v[i] == e) {
			r->v[i] = r->v[--r->n];
			return;
		}
	}
}

uint64_t mp_new_epoch(struct chain_mempool *mp)
{
	return ++mp->epoch;
}

/* ---- hash tables ------------------------------------------------------------ */

static size_t hash_slot(const struct chain_mempool *mp, const struct proto_hash *h, size_t mask)
{
	return (size_t)proto_siphash(mp->key, h->b, 32) & mask;
}

static size_t op_slot(const struct chain_mempool *mp, const struct proto_outpoint *op)
{
	uint8_t k[36];
	memcpy(k, op->txid.b, 32);
	memcpy(k + 32, &op->n, 4);
	return (size_t)proto_siphash(mp->key, k, sizeof(k)) & mp->spend_mask;
}

static const struct proto_hash *key_of(struct chain_mempool_entry *e, bool wtxid)
{
	return wtxid ? &e->tx.wtxid : &e->tx.txid;
}

static struct chain_mempool_entry *id_find(const struct chain_mempool *mp,
                                           struct chain_mempool_entry **tab, bool wtxid,
                                           const struct proto_hash *h)
{
	size_t s = hash_slot(mp, h, mp->id_mask);
	for (; tab[s]; s = (s + 1) & mp->id_mask) {
		if (proto_hash_eq(key_of(tab[s], wtxid), h))
			return tab[s];
	}
	return NULL;
}

static void id_insert(struct chain_mempool *mp, struct chain_mempool_entry **tab, bool wtxid,
                      struct chain_mempool_entry *e)
{
	size_t s = hash_slot(mp, key_of(e, wtxid), mp->id_mask);
	while (tab[s])
		s = (s + 1) & mp->id_mask;
	tab[s] = e;
}

static void id_delete(struct chain_mempool *mp, struct chain_mempool_entry **tab, bool wtxid,
                      struct chain_mempool_entry *e)
{
	size_t mask = mp->id_mask;
	size_t s = hash_slot(mp, key_of(e, wtxid), mask);
	while (tab[s] && tab[s] != e)
		s = (s + 1) & mask;
	if (!tab[s])
		return;
	/* Backward shift: pull later members of the cluster into the hole
	 * when their home slot is not between the hole and them. */
	size_t hole = s;
	for (size_t j = (hole + 1) & mask; tab[j]; j = (j + 1) & mask) {
		size_t home = hash_slot(mp, key_of(tab[j], wtxid), mask);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			tab[hole] = tab[j];
			hole = j;
		}
	}
	tab[hole] = NULL;
}

static int id_grow(struct chain_mempool *mp)
{
	size_t slots = (mp->id_mask + 1) * 2;
	struct chain_mempool_entry **a = xcalloc(slots, sizeof(*a));
	struct chain_mempool_entry **b = xcalloc(slots, sizeof(*b));
	if (!a || !b) {
		xfree(a);
		xfree(b);
		return CHAIN_ENOMEM;
	}
	xfree(mp->by_txid);
	xfree(mp->by_wtxid);
	mp->by_txid = a;
	mp->by_wtxid = b;
	mp->id_mask = slots - 1;
	for (size_t i = 0; i < mp->n; i++) {
		id_insert(mp, a, false, mp->entries[i]);
		id_insert(mp, b, true, mp->entries[i]);
	}
	return 0;
}

struct chain_mempool_entry *mp_find_txid(const struct chain_mempool *mp,
                                         const struct proto_hash *h)
{
	return id_find(mp, mp->by_txid, false, h);
}

struct chain_mempool_entry *mp_find_wtxid(const struct chain_mempool *mp,
                                          const struct proto_hash *h)
{
	return id_find(mp, mp->by_wtxid, true, h);
}

static bool op_eq(const struct proto_outpoint *a, const struct proto_outpoint *b)
{
	return a->n == b->n && proto_hash_eq(&a->txid, &b->txid);
}

struct chain_mempool_entry *mp_spender(const struct chain_mempool *mp,
                                       const struct proto_outpoint *op)
{
	size_t s = op_slot(mp, op);
	for (; mp->spends[s].e; s = (s + 1) & mp->spend_mask) {
		if (op_eq(&mp->spends[s].op, op))
			return mp->spends[s].e;
	}
	return NULL;
}

static void spend_insert(struct chain_mempool *mp, const struct proto_outpoint *op,
                         struct chain_mempool_entry *e)
{
	size_t s = op_slot(mp, op);
	while (mp->spends[s].e)
		s = (s + 1) & mp->spend_mask;
	mp->spends[s].op = *op;
	mp->spends[s].e = e;
	mp->n_spends++;
}

static void spend_delete(struct chain_mempool *mp, const struct proto_outpoint *op)
{
	size_t mask = mp->spend_mask;
	size_t s = op_slot(mp, op);
	while (mp->spends[s].e && !op_eq(&mp->spends[s].op, op))
		s = (s + 1) & mask;
	if (!mp->spends[s].e)
		return;
	size_t hole = s;
	for (size_t j = (hole + 1) & mask; mp->spends[j].e; j = (j + 1) & mask) {
		size_t home = op_slot(mp, &mp->spends[j].op);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			mp->spends[hole] = mp->spends[j];
			hole = j;
		}
	}
	mp->spends[hole].e = NULL;
	mp->n_spends--;
}

static int spend_reserve(struct chain_mempool *mp, size_t more)
{
	if (2 * (mp->n_spends + more) <= mp->spend_mask + 1)
		return 0;
	size_t slots = mp->spend_mask + 1;
	while (2 * (mp->n_spends + more) > slots)
		slots *= 2;
	struct mp_spend *t = xcalloc(slots, sizeof(*t));
	if (!t)
		return CHAIN_ENOMEM;
	struct mp_spend *old = mp->spends;
	size_t old_slots = mp->spend_mask + 1;
	mp->spends = t;
	mp->spend_mask = slots - 1;
	mp->n_spends = 0;
	for (size_t i = 0; i < old_slots; i++) {
		if (old[i].e)
			spend_insert(mp, &old[i].op, old[i].e);
	}
	xfree(old);
	return 0;
}

/* ---- life cycle ------------------------------------------------------------- */

#define MP_INITIAL_SLOTS 64u

int chain_mempool_new(struct chain_mempool **out, struct chain *c,
                      const struct chain_mempool_config *cfg, const char *dir)
{
	struct chain_mempool *mp = xcalloc(1, sizeof(*mp));
	if (!mp)
		return CHAIN_ENOMEM;
	mp->c = c;
	mp->cfg = *cfg;
	if (!mp->cfg.max_bytes)
		mp->cfg.max_bytes = CHAIN_MEMPOOL_DEFAULT_MAX_BYTES;
	if (!mp->cfg.expiry)
		mp->cfg.expiry = CHAIN_MEMPOOL_DEFAULT_EXPIRY;
	if (!mp->cfg.ancestor_count)
		mp->cfg.ancestor_count = CHAIN_MEMPOOL_DEFAULT_CHAIN_COUNT;
	if (!mp->cfg.descendant_count)
		mp->cfg.descendant_count = CHAIN_MEMPOOL_DEFAULT_CHAIN_COUNT;
	if (!mp->cfg.ancestor_vbytes)
		mp->cfg.ancestor_vbytes = CHAIN_MEMPOOL_DEFAULT_CHAIN_VBYTES;
	if (!mp->cfg.descendant_vbytes)
		mp->cfg.descendant_vbytes = CHAIN_MEMPOOL_DEFAULT_CHAIN_VBYTES;
	if (!mp->cfg.script_cache_bytes)
		mp->cfg.script_cache_bytes = CHAIN_SCRIPT_CACHE_DEFAULT_BYTES;
	if (cfg->policy_set)
		mp->policy = cfg->policy;
	else
		chain_policy_default(&mp->policy, c->p);
	proto_random(mp->key, sizeof(mp->key));
	size_t plen = strlen(dir) + sizeof("/mempool.dat");
	mp->path = xmalloc(plen);
	mp->by_txid = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->by_txid));
	mp->by_wtxid = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->by_wtxid));
	mp->spends = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->spends));
	if (!mp->path || !mp->by_txid || !mp->by_wtxid || !mp->spends) {
		chain_mempool_free(mp);
		return CHAIN_ENOMEM;
	}
	snprintf(mp->path, plen, "%s/mempool.dat", dir);
	mp->id_mask = MP_INITIAL_SLOTS - 1;
	mp->spend_mask = MP_INITIAL_SLOTS - 1;
	mp->sequence = 1; /* Core's m_sequence_number starts at 1 */
	mp->loaded = !cfg->persist;
	*out = mp;
	return 0;
}

static void entry_free(struct chain_mempool_entry *e)
{
	proto_tx_release(&e->tx);
	mp_refs_release(&e->parents);
	mp_refs_release(&e->children);
	xfree(e);
}

static void free_disconnected(struct chain_mempool *mp)
{
	for (size_t i = 0; i < mp->n_disconnected; i++)
		proto_tx_release(&mp->disconnected[i]);
	mp->n_disconnected = 0;
}

void chain_mempool_free(struct chain_mempool *mp)
{
	if (!mp)
		return;
	for (size_t i = 0; i < mp->n; i++)
		entry_free(mp->entries[i]);
	free_disconnected(mp);
	xfree(mp->disconnected);
	xfree(mp->entries);
	xfree(mp->by_txid);
	xfree(mp->by_wtxid);
	xfree(mp->spends);
	xfree(mp->deltas);
	xfree(mp->path);
	mp_refs_release(&mp->scratch_a);
	mp_refs_release(&mp->scratch_b);
	mp_refs_release(&mp->scratch_c);
	xfree(mp);
}

int mp_tx_copy(struct proto_tx *dst, struct proto_tx *src)
{
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(src, &w);
	int err = w.err ? CHAIN_ENOMEM : 0;
	if (!err && proto_tx_decode_buf(w.buf, w.len, dst, NULL))
		err = CHAIN_ENOMEM; /* it decoded before: only memory can fail */
	proto_writer_release(&w);
	if (!err)
		proto_tx_compute_ids(dst);
	return err;
}

size_t mp_entry_usage(const struct proto_tx *tx, uint32_t n_parents)
{
	/* The entry, the transaction's three allocations (rounded as malloc
	 * does, 16 bytes of header each), its share of the three index
	 * tables at their worst load (two slots per entry and per input),
	 * and the relative lists. */
	size_t u = sizeof(struct chain_mempool_entry) + 16;
	u += (tx->n_in * sizeof(struct proto_txin) + 31) & ~(size_t)15;
	u += (tx->n_out * sizeof(struct proto_txout) + 31) & ~(size_t)15;
	u += (tx->blob_len + 31) & ~(size_t)15;
	u += 2 * 2 * sizeof(void *);
	u += 2 * tx->n_in * sizeof(struct mp_spend);
	u += 2 * (4 + n_parents) * sizeof(void *) + 32;
	return u;
}

/* ---- prioritisation ------------------------------------------------------------ */

int64_t mp_delta_of(const struct chain_mempool *mp, const struct proto_hash *txid)
{
	for (size_t i = 0; i < mp->n_deltas; i++) {
		if (proto_hash_eq(&mp->deltas[i].txid, txid))
			return mp->deltas[i].delta;
	}
	return 0;
}

static void clear_delta(struct chain_mempool *mp, const struct proto_hash *txid)
{
	for (size_t i = 0; i < mp->n_deltas; i++) {
		if (proto_hash_eq(&mp->deltas[i].txid, txid)) {
			mp->deltas[i] = mp->deltas[--mp->n_deltas];
			return;
		}
	}
}

/* ---- relatives ---------------------------------------------------------------- */

int mp_collect_descendants(struct chain_mempool *mp, struct chain_mempool_entry *e, uint64_t ep,
                           struct mp_refs *out)
{
	(void)mp;
	if (e->mark == ep)
		return 0;
	e->mark = ep;
	size_t start = out->n;
	if (mp_refs_push(out, e))
		return CHAIN_ENOMEM;
	for (size_t i = start; i < out->n; i++) {
		struct chain_mempool_entry *x = out->v[i];
		for (uint32_t k = 0; k < x->children.n; k++) {
			struct chain_mempool_entry *ch = x->children.v[k];
			if (ch->mark == ep)
				continue;
			ch->mark = ep;
			if (mp_refs_push(out, ch))
				return CHAIN_ENOMEM;
		}
	}
	return 0;
}

/* Every ancestor of e (e excluded) into out, marked with ep. */
static int collect_ancestors(struct chain_mempool_entry *e, uint64_t ep, struct mp_refs *out)
{
	size_t start = out->n;
	e->mark = ep;
	for (uint32_t k = 0; k < e->parents.n; k++) {
		if (e->parents.v[k]->mark != ep) {
			e->parents.v[k]->mark = ep;
			if (mp_refs_push(out, e->parents.v[k]))
				return CHAIN_ENOMEM;
		}
	}
	for (size_t i = start; i < out->n; i++) {
		struct chain_mempool_entry *x = out->v[i];
		for (uint32_t k = 0; k < x->parents.n; k++) {
			struct chain_mempool_entry *p = x->parents.v[k];
			if (p->mark == ep)
				continue;
			p->mark = ep;
			if (mp_refs_push(out, p))
				return CHAIN_ENOMEM;
		}
	}
	return 0;
}

/* ---- adding ------------------------------------------------------------------- */

static void fire_added(struct chain_mempool *mp, struct chain_mempool_entry *e,
                       enum chain_mempool_addition how)
{
	if (!mp->quiet && mp->ev.added)
		mp->ev.added(mp->ev.arg, e, how);
}

int mp_add_entry(struct chain_mempool *mp, struct chain_mempool_entry *e,
                 const struct mp_refs *parents, enum chain_mempool_addition how)
{
	/* Reserve everything first so that nothing fails half way. */
	if (mp->n == mp->cap) {
		size_t cap = mp->cap ? mp->cap * 2 : 64;
		struct chain_mempool_entry **v = xreallocarray(mp->entries, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		mp->entries = v;
		mp->cap = cap;
	}
	if (2 * (mp->n + 1) > mp->id_mask + 1 && id_grow(mp))
		return CHAIN_ENOMEM;
	if (spend_reserve(mp, e->tx.n_in))
		return CHAIN_ENOMEM;
	e->parents.n = 0;
	for (uint32_t i = 0; i < parents->n; i++) {
		if (mp_refs_push(&e->parents, parents->v[i]))
			return CHAIN_ENOMEM;
	}
	for (uint32_t i = 0; i < parents->n; i++) {
		if (mp_refs_push(&parents->v[i]->children, e)) {
			for (uint32_t k = 0; k < i; k++)
				refs_remove(&parents->v[k]->children, e);
			return CHAIN_ENOMEM;
		}
	}
	struct mp_refs anc = {0};
	uint64_t ep = mp_new_epoch(mp);
	if (collect_ancestors(e, ep, &anc)) {
		for (uint32_t i = 0; i < parents->n; i++)
			refs_remove(&parents->v[i]->children, e);
		mp_refs_release(&anc);
		return CHAIN_ENOMEM;
	}
	e->anc_count = 1 + anc.n;
	e->anc_size = (uint64_t)e->vsize;
	e->anc_fees = e->modified_fee;
	for (uint32_t i = 0; i < anc.n; i++) {
		struct chain_mempool_entry *a = anc.v[i];
		e->anc_size += (uint64_t)a->vsize;
		e->anc_fees += a->modified_fee;
		a->desc_count++;
		a->desc_size += (uint64_t)e->vsize;
		a->desc_fees += e->modified_fee;
	}
	mp_refs_release(&anc);
	e->desc_count = 1;
	e->desc_size = (uint64_t)e->vsize;
	e->desc_fees = e->modified_fee;
	e->usage = mp_entry_usage(&e->tx, parents->n);
	e->pos = (uint32_t)mp->n;
	mp->entries[mp->n++] = e;
	id_insert(mp, mp->by_txid, false, e);
	id_insert(mp, mp->by_wtxid, true, e);
	for (uint32_t j = 0; j < e->tx.n_in; j++)
		spend_insert(mp, &e->tx.vin[j].prevout, e);
	mp->total_vsize += (uint64_t)e->vsize;
	mp->total_fee += e->fee;
	mp->usage += e->usage;
	if (mp->n == 1 || e->time < mp->min_time)
		mp->min_time = e->time;
	mp->sequence++;
	fire_added(mp, e, how);
	return 0;
}

/* ---- removing ----------------------------------------------------------------- */

/* Take e out of the indexes and its relatives' lists; figures are fixed by the caller. */
static void unlink_entry(struct chain_mempool *mp, struct chain_mempool_entry *e)
{
	id_delete(mp, mp->by_txid, false, e);
	id_delete(mp, mp->by_wtxid, true, e);
	for (uint32_t j = 0; j < e->tx.n_in; j++) {
		if (mp_spender(mp, &e->tx.vin[j].prevout) == e)
			spend_delete(mp, &e->tx.vin[j].prevout);
	}
	for (uint32_t k = 0; k < e->parents.n; k++)
		refs_remove(&e->parents.v[k]->children, e);
	for (uint32_t k = 0; k < e->children.n; k++)
		refs_remove(&e->children.v[k]->parents, e);
	struct chain_mempool_entry *last = mp->entries[--mp->n];
	mp->entries[e->pos] = last;
	last->pos = e->pos;
	mp->total_vsize -= (uint64_t)e->vsize;
	mp->total_fee -= e->fee;
	mp->usage -= e->usage;
}

void mp_remove_set(struct chain_mempool *mp, struct mp_refs *set, enum chain_mempool_removal why,
                   bool mined)
{
	/* Core's RemoveStaged: first the figures, then the links. Every
	 * ancestor outside the set loses each removed descendant; with
	 * `mined`, descendants outside the set lose a removed ancestor. */
	uint64_t in_set = mp_new_epoch(mp);
	for (uint32_t i = 0; i < set->n; i++)
		set->v[i]->mark = in_set;
	struct mp_refs rel = {0};
	for (uint32_t i = 0; i < set->n; i++) {
		struct chain_mempool_entry *e = set->v[i];
		rel.n = 0;
		uint64_t ep = mp_new_epoch(mp);
		if (collect_ancestors(e, ep, &rel) == 0) {
			for (uint32_t k = 0; k < rel.n; k++) {
				struct chain_mempool_entry *a = rel.v[k];
				a->desc_count--;
				a->desc_size -= (uint64_t)e->vsize;
				a->desc_fees -= e->modified_fee;
			}
		}
		if (mined) {
			rel.n = 0;
			ep = mp_new_epoch(mp);
			if (mp_collect_descendants(mp, e, ep, &rel) == 0) {
				for (uint32_t k = 1; k < rel.n; k++) {
					struct chain_mempool_entry *d = rel.v[k];
					d->anc_count--;
					d->anc_size -= (uint64_t)e->vsize;
					d->anc_fees -= e->modified_fee;
				}
			}
		}
	}
	mp_refs_release(&rel);
	for (uint32_t i = 0; i < set->n; i++)
		unlink_entry(mp, set->v[i]);
	for (uint32_t i = 0; i < set->n; i++) {
		struct chain_mempool_entry *e = set->v[i];
		mp->sequence++;
		if (!mp->quiet && mp->ev.removed)
			mp->ev.removed(mp->ev.arg, e, why);
		switch (why) {
		case CHAIN_MEMPOOL_REMOVED_EXPIRY: mp->stats.expired++; break;
		case CHAIN_MEMPOOL_REMOVED_SIZELIMIT: mp->stats.evicted++; break;
		case CHAIN_MEMPOOL_REMOVED_BLOCK: mp->stats.mined++; break;
		case CHAIN_MEMPOOL_REMOVED_CONFLICT: mp->stats.conflicted++; break;
		case CHAIN_MEMPOOL_REMOVED_REPLACED: mp->stats.replaced++; break;
		case CHAIN_MEMPOOL_REMOVED_REORG: break;
		}
		entry_free(e);
	}
	set->n = 0;
}

void mp_remove_recursive(struct chain_mempool *mp, struct chain_mempool_entry *e,
                         enum chain_mempool_removal why)
{
	struct mp_refs set = {0};
	if (mp_collect_descendants(mp, e, mp_new_epoch(mp), &set) == 0)
		mp_remove_set(mp, &set, why, false);
	mp_refs_release(&set);
}

/* ---- size limit, expiry, min fee ----------------------------------------------- */

int64_t mp_min_fee(struct chain_mempool *mp)
{
	int64_t incr = mp->policy.incremental_relay_feerate;
	if (!mp->block_since_bump || mp->rolling_min == 0)
		return llround(mp->rolling_min);
	int64_t now = chain_now(mp->c);
	if (now > mp->last_rolling_update + 10) {
		double halflife = CHAIN_MEMPOOL_FEE_HALFLIFE;
		if (mp->usage < mp->cfg.max_bytes / 4)
			halflife /= 4;
		else if (mp->usage < mp->cfg.max_bytes / 2)
			halflife /= 2;
		mp->rolling_min /= pow(2.0, (double)(now - mp->last_rolling_update) / halflife);
		mp->last_rolling_update = now;
		if (mp->rolling_min < (double)incr / 2) {
			mp->rolling_min = 0;
			return 0;
		}
	}
	int64_t r = llround(mp->rolling_min);
	return r > incr ? r : incr;
}

/* Core's CFeeRate(fee, size).GetFeePerK(). */
static int64_t feerate_of(int64_t fee, int64_t vsize)
{
	return vsize > 0 ? fee * 1000 / vsize : 0;
}

/* The descendant score Core trims by: max(own, with descendants) as fee and size. */
static void desc_score(const struct chain_mempool_entry *e, double *fee, double *size)
{
	double f1 = (double)e->modified_fee * (double)e->desc_size;
	double f2 = (double)e->desc_fees * (double)e->vsize;
	if (f2 > f1) {
		*fee = (double)e->desc_fees;
		*size = (double)e->desc_size;
	} else {
		*fee = (double)e->modified_fee;
		*size = (double)e->vsize;
	}
}

/* Core's CompareTxMemPoolEntryByDescendantScore: a sorts before b (lower score first). */
static bool desc_less(const struct chain_mempool_entry *a, const struct chain_mempool_entry *b)
{
	double af, as, bf, bs;
	desc_score(a, &af, &as);
	desc_score(b, &bf, &bs);
	double f1 = af * bs, f2 = as * bf;
	if (f1 == f2)
		return a->time >= b->time;
	return f1 < f2;
}

/* A descendant score with its tie-breaker, as desc_less compares them. */
struct dscore {
	double fee, size;
	int64_t time;
};

static struct dscore dscore_of(const struct chain_mempool_entry *e)
{
	struct dscore d;
	desc_score(e, &d.fee, &d.size);
	d.time = e->time;
	return d;
}

static bool dscore_less(const struct dscore *a, const struct dscore *b)
{
	double f1 = a->fee * b->size, f2 = a->size * b->fee;
	if (f1 == f2)
		return a->time >= b->time;
	return f1 < f2;
}

/* Candidates kept from one walk over the pool (see mp_trim). */
#define MP_TRIM_BATCH 64

size_t mp_trim(struct chain_mempool *mp, size_t limit)
{
	/*
	 * Core keeps a descendant-score index; here one walk collects the
	 * MP_TRIM_BATCH worst entries and evictions are served from them
	 * until the best of them is no longer below the walk's boundary.
	 * That is exact because evicting a package never lowers a remaining
	 * entry's score: only its ancestors change, and removing a package
	 * whose feerate is at most their score leaves max(own, with
	 * descendants) where it was or higher. So an entry outside the batch
	 * stays at or above the boundary, and a batch member at or below it
	 * is the pool's worst.
	 */
	size_t removed = 0;
	struct mp_refs stage = {0};
	struct chain_mempool_entry *cand[MP_TRIM_BATCH];
	struct dscore cs[MP_TRIM_BATCH], bound = {0};
	size_t nc = 0;
	bool bounded = false;
	while (mp->n && mp->usage > limit) {
		if (!nc) {
			for (size_t i = 0; i < mp->n; i++) {
				struct chain_mempool_entry *e = mp->entries[i];
				struct dscore d = dscore_of(e);
				if (nc == MP_TRIM_BATCH && !dscore_less(&d, &cs[nc - 1]))
					continue;
				size_t k = nc < MP_TRIM_BATCH ? nc++ : nc - 1;
				while (k > 0 && dscore_less(&d, &cs[k - 1])) {
					cs[k] = cs[k - 1];
					cand[k] = cand[k - 1];
					k--;
				}
				cs[k] = d;
				cand[k] = e;
			}
			bounded = mp->n > nc;
			bound = cs[nc - 1];
		}
		size_t best = 0;
		struct dscore bs = dscore_of(cand[0]);
		for (size_t k = 1; k < nc; k++) {
			struct dscore d = dscore_of(cand[k]);
			if (dscore_less(&d, &bs)) {
				bs = d;
				best = k;
			}
		}
		if (bounded && dscore_less(&bound, &bs)) {
			nc = 0; /* the batch rose above the rest: walk again */
			continue;
		}
		struct chain_mempool_entry *worst = cand[best];
		int64_t rate = feerate_of(worst->desc_fees, (int64_t)worst->desc_size) +
		               mp->policy.incremental_relay_feerate;
		if ((double)rate > mp->rolling_min) {
			mp->rolling_min = (double)rate;
			mp->block_since_bump = false;
		}
		stage.n = 0;
		uint64_t ep = mp_new_epoch(mp);
		if (mp_collect_descendants(mp, worst, ep, &stage))
			break;
		/* Drop what is about to be freed from the batch. */
		size_t keep = 0;
		for (size_t k = 0; k < nc; k++) {
			if (cand[k]->mark != ep)
				cand[keep++] = cand[k];
		}
		nc = keep;
		removed += stage.n;
		mp_remove_set(mp, &stage, CHAIN_MEMPOOL_REMOVED_SIZELIMIT, false);
	}
	mp_refs_release(&stage);
	return removed;
}

static size_t expire(struct chain_mempool *mp, int64_t cutoff)
{
	/* Nothing is old enough: no walk (this runs after every accept). */
	if (!mp->n || cutoff <= mp->min_time)
		return 0;
	struct mp_refs stage = {0};
	uint64_t ep = mp_new_epoch(mp);
	int64_t min_time = INT64_MAX;
	for (size_t i = 0; i < mp->n; i++) {
		struct chain_mempool_entry *e = mp->entries[i];
		if (e->time >= cutoff) {
			if (e->time < min_time)
				min_time = e->time;
			continue;
		}
		if (mp_collect_descendants(mp, e, ep, &stage)) {
			min_time = INT64_MIN; /* not all seen: look again next time */
			break;
		}
	}
	mp->min_time = min_time; /* descendants removed with an old parent only raise it */
	size_t n = stage.n;
	if (n)
		mp_remove_set(mp, &stage, CHAIN_MEMPOOL_REMOVED_EXPIRY, false);
	mp_refs_release(&stage);
	return n;
}

size_t mp_limit(struct chain_mempool *mp)
{
	size_t n = expire(mp, chain_now(mp->c) - mp->cfg.expiry);
	return n + mp_trim(mp, mp->cfg.max_bytes);
}

size_t chain_mempool_limit(struct chain *c)
{
	return mp_limit(c->mp);
}

/* ---- block connect / disconnect --------------------------------------------------- */

void chain_mempool_block_connected(struct chain *c, struct proto_block *b)
{
	struct chain_mempool *mp = c->mp;
	if (!mp)
		return;
	struct mp_refs stage = {0};
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		const struct proto_hash *txid = proto_tx_txid(tx);
		struct chain_mempool_entry *e = mp_find_txid(mp, txid);
		if (e) {
			stage.n = 0;
			if (mp_refs_push(&stage, e) == 0)
				mp_remove_set(mp, &stage, CHAIN_MEMPOOL_REMOVED_BLOCK, true);
		}
		/* Core's removeConflicts: whatever else spends its inputs. */
		if (!proto_tx_is_coinbase(tx)) {
			for (uint32_t j = 0; j < tx->n_in; j++) {
				struct chain_mempool_entry *s = mp_spender(mp, &tx->vin[j].prevout);
				if (s && !proto_hash_eq(&s->tx.txid, txid))
					mp_remove_recursive(mp, s, CHAIN_MEMPOOL_REMOVED_CONFLICT);
			}
		}
		clear_delta(mp, txid);
	}
	mp_refs_release(&stage);
	/* A reorg's kept transactions that this block confirmed are done. */
	for (size_t k = 0; k < mp->n_disconnected;) {
		bool mined = false;
		for (uint32_t i = 0; i < b->n_tx && !mined; i++)
			mined = proto_hash_eq(proto_tx_txid(&b->txs[i]),
			                      proto_tx_txid(&mp->disconnected[k]));
		if (mined) {
			proto_tx_release(&mp->disconnected[k]);
			mp->disconnected[k] = mp->disconnected[--mp->n_disconnected];
		} else {
			k++;
		}
	}
	mp->last_rolling_update = chain_now(c);
	mp->block_since_bump = true;
}

int chain_mempool_block_disconnected(struct chain *c, struct proto_block *b)
{
	struct chain_mempool *mp = c->mp;
	if (!mp)
		return 0;
	mp->reorg_pending = true;
	if (b->n_tx < 2)
		return 0;
	/* Keep the block's transactions (coinbase excluded) in block order;
	 * blocks are disconnected newest first, so earlier blocks' go in
	 * front and the list stays in chain order. */
	size_t add = b->n_tx - 1;
	if (mp->n_disconnected + add > mp->cap_disconnected) {
		size_t cap = (mp->n_disconnected + add) * 2;
		struct proto_tx *v = xreallocarray(mp->disconnected, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		mp->disconnected = v;
		mp->cap_disconnected = cap;
	}
	memmove(mp->disconnected + add, mp->disconnected,
	        mp->n_disconnected * sizeof(*mp->disconnected));
	for (size_t i = 0; i < add; i++) {
		proto_tx_init(&mp->disconnected[i]);
		if (mp_tx_copy(&mp->disconnected[i], &b->txs[i + 1])) {
			/* Drop what was copied so far and close the gap. */
			for (size_t k = 0; k <= i; k++)
				proto_tx_release(&mp->disconnected[k]);
			memmove(mp->disconnected, mp->disconnected + add,
			        mp->n_disconnected * sizeof(*mp->disconnected));
			return CHAIN_ENOMEM;
		}
	}
	mp->n_disconnected += add;
	return 0;
}

/* Oldest-first by entry sequence: the order entries can be re-added in (parents first). */
static int cmp_entry_seq(const void *a, const void *b)
{
	const struct chain_mempool_entry *x = *(const struct chain_mempool_entry *const *)a;
	const struct chain_mempool_entry *y = *(const struct chain_mempool_entry *const *)b;
	if (x->anc_count != y->anc_count)
		return x->anc_count < y->anc_count ? -1 : 1;
	if (x->sequence != y->sequence)
		return x->sequence < y->sequence ? -1 : 1;
	return 0;
}

int chain_mempool_update_for_reorg(struct chain *c)
{
	struct chain_mempool *mp = c->mp;
	if (!mp || !mp->reorg_pending)
		return 0;
	mp->reorg_pending = false;
	/*
	 * Core re-adds the disconnected blocks' transactions, links the
	 * entries that spend them, and re-checks every entry against the new
	 * tip (removeForReorg). Here the pool is taken apart and put back
	 * together: the disconnected transactions first (in chain order),
	 * then the old entries, parents before children, each through the
	 * full acceptance rules against the new tip with its old time and
	 * without script checks (they passed before). Whatever fails leaves
	 * with reason "reorg". Reorgs are rare; this keeps one code path.
	 */
	size_t n_old = mp->n;
	struct chain_mempool_entry **old = NULL;
	if (n_old) {
		old = xmalloc(n_old * sizeof(*old));
		if (!old)
			return CHAIN_ENOMEM;
		memcpy(old, mp->entries, n_old * sizeof(*old));
		qsort(old, n_old, sizeof(*old), cmp_entry_seq);
	}
	/* Empty the indexes without freeing the entries. */
	memset(mp->by_txid, 0, (mp->id_mask + 1) * sizeof(*mp->by_txid));
	memset(mp->by_wtxid, 0, (mp->id_mask + 1) * sizeof(*mp->by_wtxid));
	memset(mp->spends, 0, (mp->spend_mask + 1) * sizeof(*mp->spends));
	mp->n_spends = 0;
	mp->n = 0;
	mp->total_vsize = 0;
	mp->total_fee = 0;
	mp->usage = 0;
	for (size_t i = 0; i < n_old; i++) {
		mp_refs_release(&old[i]->parents);
		mp_refs_release(&old[i]->children);
	}
	int err = 0;
	struct chain_accept_result r;
	chain_accept_result_init(&r);
	for (size_t i = 0; i < mp->n_disconnected && !err; i++) {
		struct mp_args a = {.bypass_limits = true,
		                    .allow_replacement = true,
		                    .allow_carveouts = true,
		                    .how = CHAIN_MEMPOOL_ADDED_REORG};
		err = mp_accept(mp, &mp->disconnected[i], &a, &r);
		if (!err && r.accepted)
			mp->stats.reorg_readded++;
	}
	free_disconnected(mp);
	bool quiet = mp->quiet;
	for (size_t i = 0; i < n_old; i++) {
		struct chain_mempool_entry *e = old[i];
		if (!err) {
			struct mp_args a = {.bypass_limits = true,
			                    .allow_replacement = true,
			                    .allow_carveouts = true,
			                    .trusted = true,
			                    .accept_time = e->time,
			                    .how = CHAIN_MEMPOOL_ADDED_REORG};
			uint64_t seq = mp->sequence;
			mp->quiet = true; /* the same entry again: nobody needs to hear of it */
			err = mp_accept(mp, &e->tx, &a, &r);
			mp->quiet = quiet;
			mp->sequence = seq;
			struct chain_mempool_entry *now = err ? NULL : mp_find_wtxid(mp, &e->tx.wtxid);
			if (now) {
				now->sequence = e->sequence;
				now->height = e->height;
				entry_free(e);
				continue;
			}
		}
		/* Gone: tell relay as Core's removeForReorg would. */
		mp->sequence++;
		if (!mp->quiet && mp->ev.removed)
			mp->ev.removed(mp->ev.arg, e, CHAIN_MEMPOOL_REMOVED_REORG);
		entry_free(e);
	}
	chain_accept_result_release(&r);
	xfree(old);
	if (!err)
		mp_limit(mp);
	return err;
}

/* ---- public queries ------------------------------------------------------------- */

const struct chain_mempool_entry *chain_mempool_find(struct chain *c, const struct proto_hash *id,
                                                     bool wtxid)
{
	return wtxid ? mp_find_wtxid(c->mp, id) : mp_find_txid(c->mp, id);
}

static bool signals_rbf(const struct proto_tx *tx)
{
	for (uint32_t j = 0; j < tx->n_in; j++) {
		if (tx->vin[j].sequence <= 0xfffffffdu)
			return true;
	}
	return false;
}

void chain_mempool_entry_info(const struct chain_mempool_entry *e,
                              struct chain_mempool_entry_info *out)
{
	memset(out, 0, sizeof(*out));
	out->txid = e->tx.txid;
	out->wtxid = e->tx.wtxid;
	out->vsize = e->vsize;
	out->weight = e->weight;
	out->fee = e->fee;
	out->modified_fee = e->modified_fee;
	out->time = e->time;
	out->height = e->height;
	out->sequence = e->sequence;
	out->ancestor_count = e->anc_count;
	out->ancestor_size = e->anc_size;
	out->ancestor_fees = e->anc_fees;
	out->descendant_count = e->desc_count;
	out->descendant_size = e->desc_size;
	out->descendant_fees = e->desc_fees;
	out->n_parents = e->parents.n;
	out->n_children = e->children.n;
	out->usage = e->usage;
	/* Core's IsRBFOptIn: the tx or any in-pool ancestor signals. The
	 * walk keeps its own visited list (the entry is const here): each
	 * ancestor is looked at once, so a diamond-shaped family costs no
	 * more than its size. Out of memory: the tx's own answer. */
	bool rbf = signals_rbf(&e->tx);
	struct mp_refs seen = {0};
	for (uint32_t k = 0; k < e->parents.n && !rbf; k++)
		if (mp_refs_push(&seen, e->parents.v[k]))
			break;
	for (uint32_t i = 0; i < seen.n && !rbf; i++) {
		const struct chain_mempool_entry *p = seen.v[i];
		rbf = signals_rbf(&p->tx);
		for (uint32_t k = 0; k < p->parents.n && !rbf; k++) {
			bool dup = false;
			for (uint32_t m = 0; m < seen.n && !dup; m++)
				dup = seen.v[m] == p->parents.v[k];
			if (!dup && mp_refs_push(&seen, p->parents.v[k]))
				break;
		}
	}
	mp_refs_release(&seen);
	out->bip125_replaceable = rbf;
}

const struct proto_tx *chain_mempool_entry_tx(const struct chain_mempool_entry *e)
{
	return &e->tx;
}

const struct proto_hash *chain_mempool_entry_txid(const struct chain_mempool_entry *e)
{
	return &e->tx.txid;
}

const struct proto_hash *chain_mempool_entry_wtxid(const struct chain_mempool_entry *e)
{
	return &e->tx.wtxid;
}

size_t chain_mempool_entry_parents(const struct chain_mempool_entry *e,
                                   const struct chain_mempool_entry **out, size_t cap)
{
	for (uint32_t k = 0; k < e->parents.n && k < cap; k++)
		out[k] = e->parents.v[k];
	return e->parents.n;
}

size_t chain_mempool_entry_children(const struct chain_mempool_entry *e,
                                    const struct chain_mempool_entry **out, size_t cap)
{
	for (uint32_t k = 0; k < e->children.n && k < cap; k++)
		out[k] = e->children.v[k];
	return e->children.n;
}

int chain_mempool_get_raw(struct chain *c, const struct proto_hash *id, bool wtxid, uint8_t **raw,
                          size_t *len)
{
	const struct chain_mempool_entry *e = chain_mempool_find(c, id, wtxid);
	if (!e)
		return CHAIN_ENOTFOUND;
	struct proto_writer w;
	proto_writer_init(&w);
	proto_tx_encode(&e->tx, &w);
	if (w.err) {
		proto_writer_release(&w);
		return CHAIN_ENOMEM;
	}
	*raw = w.buf;
	*len = w.len;
	return 0;
}

const struct chain_mempool_entry *chain_mempool_spender(struct chain *c,
                                                        const struct proto_outpoint *op)
{
	return mp_spender(c->mp, op);
}

/* ---- orders ---------------------------------------------------------------------- */

static int hash_cmp(const struct proto_hash *a, const struct proto_hash *b)
{
	return memcmp(a->b, b->b, 32);
}

/* Core's CompareTxMemPoolEntryByScore: higher modified feerate first, then higher txid. */
static int score_cmp(const struct chain_mempool_entry *a, const struct chain_mempool_entry *b)
{
	double f1 = (double)a->modified_fee * (double)b->vsize;
	double f2 = (double)b->modified_fee * (double)a->vsize;
	if (f1 == f2)
		return -hash_cmp(&a->tx.txid, &b->tx.txid);
	return f1 > f2 ? -1 : 1;
}

int chain_mempool_compare_depth_score(const struct chain_mempool_entry *a,
                                      const struct chain_mempool_entry *b)
{
	if (a->anc_count != b->anc_count)
		return a->anc_count < b->anc_count ? -1 : 1;
	return score_cmp(a, b);
}

static int cmp_depth_score(const void *a, const void *b)
{
	return chain_mempool_compare_depth_score(*(const struct chain_mempool_entry *const *)a,
	                                         *(const struct chain_mempool_entry *const *)b);
}

/* Core's CompareTxMemPoolEntryByAncestorFee: min(own, ancestor) feerate, higher first. */
static void anc_score(const struct chain_mempool_entry *e, double *fee, double *size)
{
	double f1 = (double)e->modified_fee * (double)e->anc_size;
	double f2 = (double)e->anc_fees * (double)e->vsize;
	if (f1 > f2) {
		*fee = (double)e->anc_fees;
		*size = (double)e->anc_size;
	} else {
		*fee = (double)e->modified_fee;
		*size = (double)e->vsize;
	}
}

static int cmp_anc_score(const void *pa, const void *pb)
{
	const struct chain_mempool_entry *a = *(const struct chain_mempool_entry *const *)pa;
	const struct chain_mempool_entry *b = *(const struct chain_mempool_entry *const *)pb;
	double af, as, bf, bs;
	anc_score(a, &af, &as);
	anc_score(b, &bf, &bs);
	double f1 = af * bs, f2 = bf * as;
	if (f1 == f2)
		return hash_cmp(&a->tx.txid, &b->tx.txid);
	return f1 > f2 ? -1 : 1;
}

static int cmp_desc_score(const void *pa, const void *pb)
{
	const struct chain_mempool_entry *a = *(const struct chain_mempool_entry *const *)pa;
	const struct chain_mempool_entry *b = *(const struct chain_mempool_entry *const *)pb;
	if (desc_less(a, b))
		return desc_less(b, a) ? 0 : -1;
	return desc_less(b, a) ? 1 : 0;
}

static int cmp_time(const void *pa, const void *pb)
{
	const struct chain_mempool_entry *a = *(const struct chain_mempool_entry *const *)pa;
	const struct chain_mempool_entry *b = *(const struct chain_mempool_entry *const *)pb;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return hash_cmp(&a->tx.txid, &b->tx.txid);
}

int chain_mempool_list(struct chain *c, enum chain_mempool_order order,
                       const struct chain_mempool_entry ***out, size_t *n)
{
	struct chain_mempool *mp = c->mp;
	*out = NULL;
	*n = 0;
	if (!mp->n)
		return 0;
	const struct chain_mempool_entry **v = xmalloc(mp->n * sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	memcpy(v, mp->entries, mp->n * sizeof(*v));
	int (*cmp)(const void *, const void *) = cmp_depth_score;
	if (order == CHAIN_MEMPOOL_ORDER_ANCESTOR_SCORE)
		cmp = cmp_anc_score;
	else if (order == CHAIN_MEMPOOL_ORDER_DESCENDANT_SCORE)
		cmp = cmp_desc_score;
	else if (order == CHAIN_MEMPOOL_ORDER_TIME)
		cmp = cmp_time;
	qsort(v, mp->n, sizeof(*v), cmp);
	*out = v;
	*n = mp->n;
	return 0;
}

static int relatives(struct chain *c, const struct chain_mempool_entry *ce, bool up,
                     const struct chain_mempool_entry ***out, size_t *n)
{
	struct chain_mempool *mp = c->mp;
	/* The entry is the pool's own: marking it is how walks remember. */
	struct chain_mempool_entry *e = mp->entries[ce->pos];
	struct mp_refs r = {0};
	uint64_t ep = mp_new_epoch(mp);
	int err = up ? collect_ancestors(e, ep, &r) : mp_collect_descendants(mp, e, ep, &r);
	*out = NULL;
	*n = 0;
	if (err) {
		mp_refs_release(&r);
		return err;
	}
	size_t skip = up ? 0 : 1; /* descendants start with e itself */
	if (r.n > skip) {
		const struct chain_mempool_entry **v = xmalloc((r.n - skip) * sizeof(*v));
		if (!v) {
			mp_refs_release(&r);
			return CHAIN_ENOMEM;
		}
		for (size_t i = skip; i < r.n; i++)
			v[i - skip] = r.v[i];
		*out = v;
		*n = r.n - skip;
	}
	mp_refs_release(&r);
	return 0;
}

int chain_mempool_ancestors(struct chain *c, const struct chain_mempool_entry *e,
                            const struct chain_mempool_entry ***out, size_t *n)
{
	return relatives(c, e, true, out, n);
}

int chain_mempool_descendants(struct chain *c, const struct chain_mempool_entry *e,
                              const struct chain_mempool_entry ***out, size_t *n)
{
	return relatives(c, e, false, out, n);
}

/* ---- info, events, stats ------------------------------------------------------------ */

void chain_mempool_get_info(struct chain *c, struct chain_mempool_info *out)
{
	struct chain_mempool *mp = c->mp;
	memset(out, 0, sizeof(*out));
	out->loaded = mp->loaded;
	out->size = mp->n;
	out->bytes = mp->total_vsize;
	out->usage = mp->usage;
	out->total_fee = mp->total_fee;
	out->maxmempool = mp->cfg.max_bytes;
	int64_t minfee = mp_min_fee(mp);
	out->mempoolminfee =
	    minfee > mp->policy.min_relay_feerate ? minfee : mp->policy.min_relay_feerate;
	out->minrelaytxfee = mp->policy.min_relay_feerate;
	out->incrementalrelayfee = mp->policy.incremental_relay_feerate;
	out->fullrbf = true;
}

int64_t chain_mempool_min_fee(struct chain *c)
{
	return mp_min_fee(c->mp);
}

uint64_t chain_mempool_sequence(const struct chain *c)
{
	return c->mp->sequence;
}

const struct chain_policy *chain_mempool_policy(const struct chain *c)
{
	return &c->mp->policy;
}

const char *chain_mempool_removal_str(enum chain_mempool_removal why)
{
	switch (why) {
	case CHAIN_MEMPOOL_REMOVED_EXPIRY: return "expiry";
	case CHAIN_MEMPOOL_REMOVED_SIZELIMIT: return "sizelimit";
	case CHAIN_MEMPOOL_REMOVED_REORG: return "reorg";
	case CHAIN_MEMPOOL_REMOVED_BLOCK: return "block";
	case CHAIN_MEMPOOL_REMOVED_CONFLICT: return "conflict";
	case CHAIN_MEMPOOL_REMOVED_REPLACED: return "replaced";
	}
	return "unknown";
}

void chain_mempool_set_events(struct chain *c, const struct chain_mempool_events *ev)
{
	if (ev)
		c->mp->ev = *ev;
	else
		memset(&c->mp->ev, 0, sizeof(c->mp->ev));
}

int chain_mempool_prioritise(struct chain *c, const struct proto_hash *txid, int64_t delta)
{
	struct chain_mempool *mp = c->mp;
	size_t i = 0;
	while (i < mp->n_deltas && !proto_hash_eq(&mp->deltas[i].txid, txid))
		i++;
	if (i == mp->n_deltas) {
		if (mp->n_deltas == mp->cap_deltas) {
			size_t cap = mp->cap_deltas ? mp->cap_deltas * 2 : 8;
			struct mp_delta *d = xreallocarray(mp->deltas, cap, sizeof(*d));
			if (!d)
				return CHAIN_ENOMEM;
			mp->deltas = d;
			mp->cap_deltas = cap;
		}
		mp->deltas[i].txid = *txid;
		mp->deltas[i].delta = 0;
		mp->n_deltas++;
	}
	mp->deltas[i].delta += delta;
	/* Core's PrioritiseTransaction: the entry, its ancestors' descendant
	 * fees and its descendants' ancestor fees move by delta. */
	struct chain_mempool_entry *e = mp_find_txid(mp, txid);
	if (e) {
		struct mp_refs r = {0};
		e->modified_fee += delta;
		e->anc_fees += delta;
		e->desc_fees += delta;
		if (collect_ancestors(e, mp_new_epoch(mp), &r) == 0) {
			for (uint32_t k = 0; k < r.n; k++)
				r.v[k]->desc_fees += delta;
		}
		r.n = 0;
		if (mp_collect_descendants(mp, e, mp_new_epoch(mp), &r) == 0) {
			for (uint32_t k = 1; k < r.n; k++)
				r.v[k]->anc_fees += delta;
		}
		mp_refs_release(&r);
	}
	if (mp->deltas[i].delta == 0)
		mp->deltas[i] = mp->deltas[--mp->n_deltas];
	return 0;
}

void chain_mempool_get_stats(struct chain *c, struct chain_mempool_stats *out)
{
	*out = c->mp->stats;
	struct chain_script_cache *sc = chain_checker_script_cache(c->ck);
	if (sc)
		chain_script_cache_counters(sc, &out->script_cache_entries,
		                            &out->script_cache_capacity, &out->script_cache_hits,
		                            &out->script_cache_misses);
}

void chain_accept_result_init(struct chain_accept_result *r)
{
	memset(r, 0, sizeof(*r));
}

void chain_accept_result_release(struct chain_accept_result *r)
{
	xfree(r->effective_includes);
	xfree(r->replaced_txids);
	xfree(r->replaced_wtxids);
	xfree(r->missing_parents);
	chain_accept_result_init(r);
}
