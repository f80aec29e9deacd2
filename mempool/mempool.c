/*
 * mempool/mempool.c: the mempool's entries and indexes (Core's CTxMemPool):
 * lookup by txid and wtxid, the spender of each outpoint, ancestor and
 * descendant figures kept up to date on every addition and removal,
 * expiry, trimming to the size limit with the rolling minimum fee.
 * Reading it is query.c; following the chain, chain_events.c.
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

#include "mempool/internal.h"

/* ---- small arrays ----------------------------------------------------------- */

int mp_refs_push(struct mp_refs *r, struct mempool_entry *e)
{
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 4;
		struct mempool_entry **v = xreallocarray(r->v, cap, sizeof(*v));
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

static void refs_remove(struct mp_refs *r, const struct mempool_entry *e)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->v[i] == e) {
			r->v[i] = r->v[--r->n];
			return;
		}
	}
}

uint64_t mp_new_epoch(struct mempool *mp)
{
	return ++mp->epoch;
}

/* ---- hash tables ------------------------------------------------------------ */

static size_t hash_slot(const struct mempool *mp, const struct proto_hash *h, size_t mask)
{
	return (size_t)proto_siphash(mp->key, h->b, 32) & mask;
}

static size_t op_slot(const struct mempool *mp, const struct proto_outpoint *op)
{
	uint8_t k[36];
	memcpy(k, op->txid.b, 32);
	memcpy(k + 32, &op->n, 4);
	return (size_t)proto_siphash(mp->key, k, sizeof(k)) & mp->spend_mask;
}

static const struct proto_hash *key_of(struct mempool_entry *e, bool wtxid)
{
	return wtxid ? &e->tx.wtxid : &e->tx.txid;
}

static struct mempool_entry *id_find(const struct mempool *mp, struct mempool_entry **tab,
                                     bool wtxid, const struct proto_hash *h)
{
	size_t s = hash_slot(mp, h, mp->id_mask);
	for (; tab[s]; s = (s + 1) & mp->id_mask) {
		if (proto_hash_eq(key_of(tab[s], wtxid), h))
			return tab[s];
	}
	return NULL;
}

static void id_insert(struct mempool *mp, struct mempool_entry **tab, bool wtxid,
                      struct mempool_entry *e)
{
	size_t s = hash_slot(mp, key_of(e, wtxid), mp->id_mask);
	while (tab[s])
		s = (s + 1) & mp->id_mask;
	tab[s] = e;
}

static void id_delete(struct mempool *mp, struct mempool_entry **tab, bool wtxid,
                      struct mempool_entry *e)
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

static int id_grow(struct mempool *mp)
{
	size_t slots = (mp->id_mask + 1) * 2;
	struct mempool_entry **a = xcalloc(slots, sizeof(*a));
	struct mempool_entry **b = xcalloc(slots, sizeof(*b));
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

struct mempool_entry *mp_find_txid(const struct mempool *mp, const struct proto_hash *h)
{
	return id_find(mp, mp->by_txid, false, h);
}

struct mempool_entry *mp_find_wtxid(const struct mempool *mp, const struct proto_hash *h)
{
	return id_find(mp, mp->by_wtxid, true, h);
}

static bool op_eq(const struct proto_outpoint *a, const struct proto_outpoint *b)
{
	return a->n == b->n && proto_hash_eq(&a->txid, &b->txid);
}

struct mempool_entry *mp_spender(const struct mempool *mp, const struct proto_outpoint *op)
{
	size_t s = op_slot(mp, op);
	for (; mp->spends[s].e; s = (s + 1) & mp->spend_mask) {
		if (op_eq(&mp->spends[s].op, op))
			return mp->spends[s].e;
	}
	return NULL;
}

static void spend_insert(struct mempool *mp, const struct proto_outpoint *op,
                         struct mempool_entry *e)
{
	size_t s = op_slot(mp, op);
	while (mp->spends[s].e)
		s = (s + 1) & mp->spend_mask;
	mp->spends[s].op = *op;
	mp->spends[s].e = e;
	mp->n_spends++;
}

static void spend_delete(struct mempool *mp, const struct proto_outpoint *op)
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

static int spend_reserve(struct mempool *mp, size_t more)
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

int mp_new(struct mempool **out, struct chain *c, const struct mempool_config *cfg, const char *dir)
{
	struct mempool *mp = xcalloc(1, sizeof(*mp));
	if (!mp)
		return CHAIN_ENOMEM;
	mp->c = c;
	mp->cfg = *cfg;
	/* A fresh Core reports 32 bytes for its empty pool: its randomized
	 * transaction vector already holds room for one (measured against
	 * the bitcoind of the tests; see mp_usage). */
	mp->rand_cap = 1;
	if (!mp->cfg.max_bytes)
		mp->cfg.max_bytes = MEMPOOL_DEFAULT_MAX_BYTES;
	if (!mp->cfg.expiry)
		mp->cfg.expiry = MEMPOOL_DEFAULT_EXPIRY;
	if (!mp->cfg.ancestor_count)
		mp->cfg.ancestor_count = MEMPOOL_DEFAULT_CHAIN_COUNT;
	if (!mp->cfg.descendant_count)
		mp->cfg.descendant_count = MEMPOOL_DEFAULT_CHAIN_COUNT;
	if (!mp->cfg.ancestor_vbytes)
		mp->cfg.ancestor_vbytes = MEMPOOL_DEFAULT_CHAIN_VBYTES;
	if (!mp->cfg.descendant_vbytes)
		mp->cfg.descendant_vbytes = MEMPOOL_DEFAULT_CHAIN_VBYTES;
	if (cfg->policy_set)
		mp->policy = cfg->policy;
	else
		mempool_policy_default(&mp->policy, chain_params(c));
	proto_random(mp->key, sizeof(mp->key));
	size_t plen = strlen(dir) + sizeof("/mempool.dat");
	mp->path = xmalloc(plen);
	mp->by_txid = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->by_txid));
	mp->by_wtxid = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->by_wtxid));
	mp->spends = xcalloc(MP_INITIAL_SLOTS, sizeof(*mp->spends));
	if (!mp->path || !mp->by_txid || !mp->by_wtxid || !mp->spends) {
		mp_free(mp);
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

void mp_entry_free(struct mempool_entry *e)
{
	proto_tx_release(&e->tx);
	mp_refs_release(&e->parents);
	mp_refs_release(&e->children);
	xfree(e);
}

void mp_free_disconnected(struct mempool *mp)
{
	for (size_t i = 0; i < mp->n_disconnected; i++)
		proto_tx_release(&mp->disconnected[i]);
	mp->n_disconnected = 0;
}

void mp_free(struct mempool *mp)
{
	if (!mp)
		return;
	for (size_t i = 0; i < mp->n; i++)
		mp_entry_free(mp->entries[i]);
	mp_free_disconnected(mp);
	xfree(mp->disconnected);
	xfree(mp->entries);
	xfree(mp->by_txid);
	xfree(mp->by_wtxid);
	xfree(mp->spends);
	xfree(mp->deltas);
	xfree(mp->unbcast);
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

/*
 * Memory usage as Core counts it (memusage.h, core_memusage.h,
 * txmempool.cpp's DynamicMemoryUsage), so that getmempoolinfo's usage and
 * the -maxmempool trim point are Core's to the byte. Core does not measure
 * its heap: it adds up what each container would ask malloc for, with
 * glibc's rounding on a 64-bit build, using the sizes of its own C++
 * types. Those sizes (64-bit libstdc++) are written down here; peerd's
 * own, smaller, layout does not matter for the number.
 */

/* memusage::MallocUsage on 64-bit: 8 bytes of chunk header, rounded up to
 * 16, never less than 32; nothing allocated costs nothing. */
static size_t core_malloc(size_t n)
{
	return n ? ((n + 31) >> 4) << 4 : 0;
}

/* sizeof of Core's types in a 64-bit build. */
enum {
	CORE_CTRANSACTION = 128,  /* vin, vout, version, locktime, has_witness, txid, wtxid */
	CORE_SHARED_COUNTER = 24, /* memusage's stl_shared_counter (CTransactionRef's block) */
	CORE_CTXIN = 104,         /* prevout, scriptSig, nSequence, scriptWitness */
	CORE_CTXOUT = 40,         /* nValue, scriptPubKey */
	CORE_BYTE_VECTOR = 24,    /* std::vector<unsigned char>: one witness stack item */
	CORE_SCRIPT_INLINE = 28,  /* prevector<28>: longer scripts go to the heap */
	/* CTxMemPoolEntry (272) plus txmempool.cpp's 15 pointers for mapTx's indexes */
	CORE_ENTRY = 272 + 15 * 8,
	/* a std::set/std::map node: colour, three links, then the value */
	CORE_TREE_NODE = 32,
	CORE_NEXTTX_VALUE = 16,    /* mapNextTx (an indirectmap): outpoint pointer, tx pointer */
	CORE_LINK_VALUE = 8,       /* m_parents / m_children: a reference to the entry */
	CORE_DELTA_VALUE = 32 + 8, /* mapDeltas: txid, CAmount */
	CORE_TXREF = 16,           /* txns_randomized element: a CTransactionRef */
};

/* A script's heap part (prevector keeps up to 28 bytes inline; a decoded
 * script's capacity is its length). */
static size_t core_script(uint32_t len)
{
	return len > CORE_SCRIPT_INLINE ? core_malloc(len) : 0;
}

size_t mp_entry_usage(const struct proto_tx *tx)
{
	/* Core's RecursiveDynamicUsage(CTransactionRef): the shared block and
	 * the CTransaction, the vin and vout arrays (a decoded vector's
	 * capacity is its size), each script's heap part, each witness stack
	 * and each of its items. */
	size_t u = core_malloc(CORE_CTRANSACTION) + core_malloc(CORE_SHARED_COUNTER);
	u += core_malloc((size_t)tx->n_in * CORE_CTXIN) +
	     core_malloc((size_t)tx->n_out * CORE_CTXOUT);
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct proto_txin *in = &tx->vin[i];
		u += core_script(in->script_len);
		u += core_malloc((size_t)in->wit_count * CORE_BYTE_VECTOR);
		struct proto_witness_iter it;
		struct proto_span item;
		proto_witness_iter_init(&it, tx, in);
		while (proto_witness_iter_next(&it, &item))
			u += core_malloc(item.len);
	}
	for (uint32_t i = 0; i < tx->n_out; i++)
		u += core_script(tx->vout[i].script_len);
	return u;
}

size_t mp_usage(const struct mempool *mp)
{
	/* Core's CTxMemPool::DynamicMemoryUsage: mapTx at a guessed 15
	 * pointers per entry, mapNextTx (one node per spent outpoint),
	 * mapDeltas, txns_randomized at its capacity, and cachedInnerUsage:
	 * every entry's transaction plus one set node on each side of every
	 * parent-child link. */
	size_t u = mp->n * core_malloc(CORE_ENTRY);
	u += mp->n_spends * core_malloc(CORE_TREE_NODE + CORE_NEXTTX_VALUE);
	u += mp->n_deltas * core_malloc(CORE_TREE_NODE + CORE_DELTA_VALUE);
	u += core_malloc(mp->rand_cap * CORE_TXREF);
	u += mp->usage + mp->n_links * 2 * core_malloc(CORE_TREE_NODE + CORE_LINK_VALUE);
	return u;
}

/* Core's txns_randomized is a std::vector: libstdc++ doubles it when full
 * and Core shrinks it to fit when a removal leaves it less than half used
 * (but never when the last entry goes: clear() keeps the capacity). */
static void rand_added(struct mempool *mp)
{
	if (mp->n > mp->rand_cap)
		mp->rand_cap = mp->rand_cap ? 2 * mp->rand_cap : 1;
}

static void rand_removed(struct mempool *mp)
{
	/* mp->n is the count after the removal */
	if (mp->n > 0 && mp->n * 2 < mp->rand_cap)
		mp->rand_cap = mp->n;
}

/* ---- prioritisation ------------------------------------------------------------ */

int64_t mp_delta_of(const struct mempool *mp, const struct proto_hash *txid)
{
	for (size_t i = 0; i < mp->n_deltas; i++) {
		if (proto_hash_eq(&mp->deltas[i].txid, txid))
			return mp->deltas[i].delta;
	}
	return 0;
}

void mp_clear_delta(struct mempool *mp, const struct proto_hash *txid)
{
	for (size_t i = 0; i < mp->n_deltas; i++) {
		if (proto_hash_eq(&mp->deltas[i].txid, txid)) {
			mp->deltas[i] = mp->deltas[--mp->n_deltas];
			return;
		}
	}
}

/* ---- relatives ---------------------------------------------------------------- */

int mp_collect_descendants(struct mempool *mp, struct mempool_entry *e, uint64_t ep,
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
		struct mempool_entry *x = out->v[i];
		for (uint32_t k = 0; k < x->children.n; k++) {
			struct mempool_entry *ch = x->children.v[k];
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
int mp_collect_ancestors(struct mempool_entry *e, uint64_t ep, struct mp_refs *out)
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
		struct mempool_entry *x = out->v[i];
		for (uint32_t k = 0; k < x->parents.n; k++) {
			struct mempool_entry *p = x->parents.v[k];
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

static void fire_added(struct mempool *mp, struct mempool_entry *e, enum mempool_addition how)
{
	mp_fire_added(mp, e, how);
}

int mp_add_entry(struct mempool *mp, struct mempool_entry *e, const struct mp_refs *parents,
                 enum mempool_addition how)
{
	/* Reserve everything first so that nothing fails half way. */
	if (mp->n == mp->cap) {
		size_t cap = mp->cap ? mp->cap * 2 : 64;
		struct mempool_entry **v = xreallocarray(mp->entries, cap, sizeof(*v));
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
	if (mp_collect_ancestors(e, ep, &anc)) {
		for (uint32_t i = 0; i < parents->n; i++)
			refs_remove(&parents->v[i]->children, e);
		mp_refs_release(&anc);
		return CHAIN_ENOMEM;
	}
	e->anc_count = 1 + anc.n;
	e->anc_size = (uint64_t)e->vsize;
	e->anc_fees = e->modified_fee;
	for (uint32_t i = 0; i < anc.n; i++) {
		struct mempool_entry *a = anc.v[i];
		e->anc_size += (uint64_t)a->vsize;
		e->anc_fees = mempool_fee_add(e->anc_fees, a->modified_fee);
		a->desc_count++;
		a->desc_size += (uint64_t)e->vsize;
		a->desc_fees = mempool_fee_add(a->desc_fees, e->modified_fee);
	}
	mp_refs_release(&anc);
	e->desc_count = 1;
	e->desc_size = (uint64_t)e->vsize;
	e->desc_fees = e->modified_fee;
	e->usage = mp_entry_usage(&e->tx);
	e->pos = (uint32_t)mp->n;
	mp->entries[mp->n++] = e;
	id_insert(mp, mp->by_txid, false, e);
	id_insert(mp, mp->by_wtxid, true, e);
	for (uint32_t j = 0; j < e->tx.n_in; j++)
		spend_insert(mp, &e->tx.vin[j].prevout, e);
	mp->total_vsize += (uint64_t)e->vsize;
	mp->total_fee += e->fee;
	mp->usage += e->usage;
	mp->n_links += parents->n;
	rand_added(mp);
	if (mp->n == 1 || e->time < mp->min_time)
		mp->min_time = e->time;
	mp->sequence++;
	fire_added(mp, e, how);
	return 0;
}

/* ---- removing ----------------------------------------------------------------- */

/* Take e out of the indexes and its relatives' lists; figures are fixed by the caller. */
static void unlink_entry(struct mempool *mp, struct mempool_entry *e)
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
	mp->n_links -= e->parents.n + e->children.n;
	struct mempool_entry *last = mp->entries[--mp->n];
	mp->entries[e->pos] = last;
	last->pos = e->pos;
	rand_removed(mp);
	mp->total_vsize -= (uint64_t)e->vsize;
	mp->total_fee -= e->fee;
	mp->usage -= e->usage;
}

void mp_remove_set(struct mempool *mp, struct mp_refs *set, enum mempool_removal why, bool mined)
{
	/* Core's RemoveStaged: first the figures, then the links. Every
	 * ancestor outside the set loses each removed descendant; with
	 * `mined`, descendants outside the set lose a removed ancestor. */
	uint64_t in_set = mp_new_epoch(mp);
	for (uint32_t i = 0; i < set->n; i++)
		set->v[i]->mark = in_set;
	struct mp_refs rel = {0};
	for (uint32_t i = 0; i < set->n; i++) {
		struct mempool_entry *e = set->v[i];
		rel.n = 0;
		uint64_t ep = mp_new_epoch(mp);
		if (mp_collect_ancestors(e, ep, &rel) == 0) {
			for (uint32_t k = 0; k < rel.n; k++) {
				struct mempool_entry *a = rel.v[k];
				a->desc_count--;
				a->desc_size -= (uint64_t)e->vsize;
				a->desc_fees = mempool_fee_sub(a->desc_fees, e->modified_fee);
			}
		}
		if (mined) {
			rel.n = 0;
			ep = mp_new_epoch(mp);
			if (mp_collect_descendants(mp, e, ep, &rel) == 0) {
				for (uint32_t k = 1; k < rel.n; k++) {
					struct mempool_entry *d = rel.v[k];
					d->anc_count--;
					d->anc_size -= (uint64_t)e->vsize;
					d->anc_fees = mempool_fee_sub(d->anc_fees, e->modified_fee);
				}
			}
		}
	}
	mp_refs_release(&rel);
	for (uint32_t i = 0; i < set->n; i++)
		unlink_entry(mp, set->v[i]);
	for (uint32_t i = 0; i < set->n; i++) {
		struct mempool_entry *e = set->v[i];
		mp->sequence++;
		mp_unbroadcast_drop(mp, &e->tx.txid); /* quiet ones never are in it */
		mp_fire_removed(mp, e, why);
		switch (why) {
		case MEMPOOL_REMOVED_EXPIRY:
			mp->stats.expired++;
			break;
		case MEMPOOL_REMOVED_SIZELIMIT:
			mp->stats.evicted++;
			break;
		case MEMPOOL_REMOVED_BLOCK:
			mp->stats.mined++;
			break;
		case MEMPOOL_REMOVED_CONFLICT:
			mp->stats.conflicted++;
			break;
		case MEMPOOL_REMOVED_REPLACED:
			mp->stats.replaced++;
			break;
		case MEMPOOL_REMOVED_REORG:
			break;
		}
		mp_entry_free(e);
	}
	set->n = 0;
}

void mp_remove_recursive(struct mempool *mp, struct mempool_entry *e, enum mempool_removal why)
{
	struct mp_refs set = {0};
	if (mp_collect_descendants(mp, e, mp_new_epoch(mp), &set) == 0)
		mp_remove_set(mp, &set, why, false);
	mp_refs_release(&set);
}

/* ---- size limit, expiry, min fee ----------------------------------------------- */

int64_t mp_min_fee(struct mempool *mp)
{
	int64_t incr = mp->policy.incremental_relay_feerate;
	if (!mp->block_since_bump || mp->rolling_min == 0)
		return llround(mp->rolling_min);
	int64_t now = chain_now(mp->c);
	if (now > mp->last_rolling_update + 10) {
		double halflife = MEMPOOL_FEE_HALFLIFE;
		size_t usage = mp_usage(mp);
		if (usage < mp->cfg.max_bytes / 4)
			halflife /= 4;
		else if (usage < mp->cfg.max_bytes / 2)
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
int64_t mp_feerate_of(int64_t fee, int64_t vsize)
{
	return vsize > 0 ? fee * 1000 / vsize : 0;
}

/* The descendant score Core trims by: max(own, with descendants) as fee and size. */
static void desc_score(const struct mempool_entry *e, double *fee, double *size)
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
bool mp_desc_less(const struct mempool_entry *a, const struct mempool_entry *b)
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

static struct dscore dscore_of(const struct mempool_entry *e)
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

size_t mp_trim(struct mempool *mp, size_t limit)
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
	struct mempool_entry *cand[MP_TRIM_BATCH];
	struct dscore cs[MP_TRIM_BATCH], bound = {0};
	size_t nc = 0;
	bool bounded = false;
	while (mp->n && mp_usage(mp) > limit) {
		if (!nc) {
			for (size_t i = 0; i < mp->n; i++) {
				struct mempool_entry *e = mp->entries[i];
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
		struct mempool_entry *worst = cand[best];
		int64_t rate = mp_feerate_of(worst->desc_fees, (int64_t)worst->desc_size) +
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
		mp_remove_set(mp, &stage, MEMPOOL_REMOVED_SIZELIMIT, false);
	}
	mp_refs_release(&stage);
	return removed;
}

static size_t expire(struct mempool *mp, int64_t cutoff)
{
	/* Nothing is old enough: no walk (this runs after every accept). */
	if (!mp->n || cutoff <= mp->min_time)
		return 0;
	struct mp_refs stage = {0};
	uint64_t ep = mp_new_epoch(mp);
	int64_t min_time = INT64_MAX;
	for (size_t i = 0; i < mp->n; i++) {
		struct mempool_entry *e = mp->entries[i];
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
		mp_remove_set(mp, &stage, MEMPOOL_REMOVED_EXPIRY, false);
	mp_refs_release(&stage);
	return n;
}

size_t mp_limit(struct mempool *mp)
{
	size_t n = expire(mp, chain_now(mp->c) - mp->cfg.expiry);
	return n + mp_trim(mp, mp->cfg.max_bytes);
}

size_t mempool_limit(struct mempool *mp)
{
	return mp_limit(mp);
}
