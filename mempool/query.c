/*
 * mempool/query.c: reading the mempool: entries and their figures,
 * the orders getrawmempool, relay and trimming use (computed when asked,
 * a sort of the entry array), ancestors and descendants, info, events,
 * prioritisation and counters.
 */
#include <stdlib.h>
#include <string.h>

#include "mempool/internal.h"

/* ---- public queries ------------------------------------------------------------- */

const struct mempool_entry *mempool_find(struct mempool *mp, const struct proto_hash *id,
                                         bool wtxid)
{
	return wtxid ? mp_find_wtxid(mp, id) : mp_find_txid(mp, id);
}

static bool signals_rbf(const struct proto_tx *tx)
{
	for (uint32_t j = 0; j < tx->n_in; j++) {
		if (tx->vin[j].sequence <= 0xfffffffdu)
			return true;
	}
	return false;
}

void mempool_entry_info(const struct mempool_entry *e, struct mempool_entry_info *out)
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
	out->in_package = e->in_package;
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
		const struct mempool_entry *p = seen.v[i];
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

void mempool_entry_figures(const struct mempool_entry *e, struct mempool_entry_figures *out)
{
	*out = (struct mempool_entry_figures){
	    .modified_fee = e->modified_fee,
	    .vsize = e->vsize,
	    .weight = e->weight,
	    .sigop_cost = e->sigop_cost,
	    .ancestor_count = e->anc_count,
	    .ancestor_size = e->anc_size,
	    .ancestor_fees = e->anc_fees,
	};
}

size_t mempool_entry_index(const struct mempool_entry *e)
{
	return e->pos;
}

const struct proto_tx *mempool_entry_tx(const struct mempool_entry *e)
{
	return &e->tx;
}

const struct proto_hash *mempool_entry_txid(const struct mempool_entry *e)
{
	return &e->tx.txid;
}

const struct proto_hash *mempool_entry_wtxid(const struct mempool_entry *e)
{
	return &e->tx.wtxid;
}

size_t mempool_entry_parents(const struct mempool_entry *e, const struct mempool_entry **out,
                             size_t cap)
{
	for (uint32_t k = 0; k < e->parents.n && k < cap; k++)
		out[k] = e->parents.v[k];
	return e->parents.n;
}

size_t mempool_entry_children(const struct mempool_entry *e, const struct mempool_entry **out,
                              size_t cap)
{
	for (uint32_t k = 0; k < e->children.n && k < cap; k++)
		out[k] = e->children.v[k];
	return e->children.n;
}

int mempool_get_raw(struct mempool *mp, const struct proto_hash *id, bool wtxid, uint8_t **raw,
                    size_t *len)
{
	const struct mempool_entry *e = mempool_find(mp, id, wtxid);
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

const struct mempool_entry *mempool_spender(struct mempool *mp, const struct proto_outpoint *op)
{
	return mp_spender(mp, op);
}

/* ---- orders ---------------------------------------------------------------------- */

static int hash_cmp(const struct proto_hash *a, const struct proto_hash *b)
{
	return memcmp(a->b, b->b, 32);
}

/* Core's CompareTxMemPoolEntryByScore: higher modified feerate first, then higher txid. */
static int score_cmp(const struct mempool_entry *a, const struct mempool_entry *b)
{
	double f1 = (double)a->modified_fee * (double)b->vsize;
	double f2 = (double)b->modified_fee * (double)a->vsize;
	if (f1 == f2)
		return -hash_cmp(&a->tx.txid, &b->tx.txid);
	return f1 > f2 ? -1 : 1;
}

int mempool_compare_depth_score(const struct mempool_entry *a, const struct mempool_entry *b)
{
	if (a->anc_count != b->anc_count)
		return a->anc_count < b->anc_count ? -1 : 1;
	return score_cmp(a, b);
}

static int cmp_depth_score(const void *a, const void *b)
{
	return mempool_compare_depth_score(*(const struct mempool_entry *const *)a,
	                                   *(const struct mempool_entry *const *)b);
}

void mempool_ancestor_score(const struct mempool_entry *e, int64_t fees, uint64_t size, double *fee,
                            double *sz)
{
	double f1 = (double)e->modified_fee * (double)size;
	double f2 = (double)fees * (double)e->vsize;
	if (f1 > f2) {
		*fee = (double)fees;
		*sz = (double)size;
	} else {
		*fee = (double)e->modified_fee;
		*sz = (double)e->vsize;
	}
}

/* Core's CompareTxMemPoolEntryByAncestorFee: min(own, ancestor) feerate, higher first. */

static int cmp_anc_score(const void *pa, const void *pb)
{
	const struct mempool_entry *a = *(const struct mempool_entry *const *)pa;
	const struct mempool_entry *b = *(const struct mempool_entry *const *)pb;
	double af, as, bf, bs;
	mempool_ancestor_score(a, a->anc_fees, a->anc_size, &af, &as);
	mempool_ancestor_score(b, b->anc_fees, b->anc_size, &bf, &bs);
	double f1 = af * bs, f2 = bf * as;
	if (f1 == f2)
		return hash_cmp(&a->tx.txid, &b->tx.txid);
	return f1 > f2 ? -1 : 1;
}

static int cmp_desc_score(const void *pa, const void *pb)
{
	const struct mempool_entry *a = *(const struct mempool_entry *const *)pa;
	const struct mempool_entry *b = *(const struct mempool_entry *const *)pb;
	if (mp_desc_less(a, b))
		return mp_desc_less(b, a) ? 0 : -1;
	return mp_desc_less(b, a) ? 1 : 0;
}

static int cmp_time(const void *pa, const void *pb)
{
	const struct mempool_entry *a = *(const struct mempool_entry *const *)pa;
	const struct mempool_entry *b = *(const struct mempool_entry *const *)pb;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return hash_cmp(&a->tx.txid, &b->tx.txid);
}

int mempool_list(struct mempool *mp, enum mempool_order order, const struct mempool_entry ***out,
                 size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!mp->n)
		return 0;
	const struct mempool_entry **v = xmalloc(mp->n * sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	memcpy(v, mp->entries, mp->n * sizeof(*v));
	int (*cmp)(const void *, const void *) = cmp_depth_score;
	if (order == MEMPOOL_ORDER_ANCESTOR_SCORE)
		cmp = cmp_anc_score;
	else if (order == MEMPOOL_ORDER_DESCENDANT_SCORE)
		cmp = cmp_desc_score;
	else if (order == MEMPOOL_ORDER_TIME)
		cmp = cmp_time;
	qsort(v, mp->n, sizeof(*v), cmp);
	*out = v;
	*n = mp->n;
	return 0;
}

static int relatives(struct mempool *mp, const struct mempool_entry *ce, bool up,
                     const struct mempool_entry ***out, size_t *n)
{
	/* The entry is the pool's own: marking it is how walks remember. */
	struct mempool_entry *e = mp->entries[ce->pos];
	struct mp_refs r = {0};
	uint64_t ep = mp_new_epoch(mp);
	int err = up ? mp_collect_ancestors(e, ep, &r) : mp_collect_descendants(mp, e, ep, &r);
	*out = NULL;
	*n = 0;
	if (err) {
		mp_refs_release(&r);
		return err;
	}
	size_t skip = up ? 0 : 1; /* descendants start with e itself */
	if (r.n > skip) {
		const struct mempool_entry **v = xmalloc((r.n - skip) * sizeof(*v));
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

int mempool_ancestors(struct mempool *mp, const struct mempool_entry *e,
                      const struct mempool_entry ***out, size_t *n)
{
	return relatives(mp, e, true, out, n);
}

int mempool_descendants(struct mempool *mp, const struct mempool_entry *e,
                        const struct mempool_entry ***out, size_t *n)
{
	return relatives(mp, e, false, out, n);
}

/* ---- info, events, stats ------------------------------------------------------------ */

void mempool_get_info(struct mempool *mp, struct mempool_info *out)
{
	memset(out, 0, sizeof(*out));
	out->loaded = mp->loaded;
	out->size = mp->n;
	out->bytes = mp->total_vsize;
	out->usage = mp_usage(mp);
	out->total_fee = mp->total_fee;
	out->maxmempool = mp->cfg.max_bytes;
	int64_t minfee = mp_min_fee(mp);
	out->mempoolminfee =
	    minfee > mp->policy.min_relay_feerate ? minfee : mp->policy.min_relay_feerate;
	out->minrelaytxfee = mp->policy.min_relay_feerate;
	out->incrementalrelayfee = mp->policy.incremental_relay_feerate;
	out->unbroadcastcount = mp->n_unbcast;
	out->fullrbf = true;
}

int64_t mempool_min_fee(struct mempool *mp)
{
	return mp_min_fee(mp);
}

uint64_t mempool_sequence(const struct mempool *mp)
{
	return mp->sequence;
}

uint64_t mempool_updates(const struct mempool *mp)
{
	return mp->sequence + mp->prioritised;
}

const struct mempool_policy *mempool_get_policy(const struct mempool *mp)
{
	return &mp->policy;
}

const char *mempool_removal_str(enum mempool_removal why)
{
	switch (why) {
	case MEMPOOL_REMOVED_EXPIRY:
		return "expiry";
	case MEMPOOL_REMOVED_SIZELIMIT:
		return "sizelimit";
	case MEMPOOL_REMOVED_REORG:
		return "reorg";
	case MEMPOOL_REMOVED_BLOCK:
		return "block";
	case MEMPOOL_REMOVED_CONFLICT:
		return "conflict";
	case MEMPOOL_REMOVED_REPLACED:
		return "replaced";
	}
	return "unknown";
}

void mempool_set_events(struct mempool *mp, const struct mempool_events *ev)
{
	if (ev)
		mp->ev = *ev;
	else
		memset(&mp->ev, 0, sizeof(mp->ev));
}

int mempool_listen(struct mempool *mp, const struct mempool_events *ev)
{
	for (size_t i = 0; i < MP_MAX_EXTRA_LISTENERS; i++) {
		if (!mp->ev_extra[i].added && !mp->ev_extra[i].removed) {
			mp->ev_extra[i] = *ev;
			return 0;
		}
	}
	return CHAIN_EOVERFLOW;
}

void mp_fire_added(struct mempool *mp, const struct mempool_entry *e, enum mempool_addition how)
{
	if (mp->quiet)
		return;
	if (mp->ev.added)
		mp->ev.added(mp->ev.arg, e, how);
	for (size_t i = 0; i < MP_MAX_EXTRA_LISTENERS; i++)
		if (mp->ev_extra[i].added)
			mp->ev_extra[i].added(mp->ev_extra[i].arg, e, how);
}

void mp_fire_removed(struct mempool *mp, const struct mempool_entry *e, enum mempool_removal why)
{
	if (mp->quiet)
		return;
	if (mp->ev.removed)
		mp->ev.removed(mp->ev.arg, e, why);
	for (size_t i = 0; i < MP_MAX_EXTRA_LISTENERS; i++)
		if (mp->ev_extra[i].removed)
			mp->ev_extra[i].removed(mp->ev_extra[i].arg, e, why);
}

int mempool_prioritise(struct mempool *mp, const struct proto_hash *txid, int64_t delta)
{
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
	mp->deltas[i].delta = mempool_fee_add(mp->deltas[i].delta, delta);
	/* Core's PrioritiseTransaction: the entry, its ancestors' descendant
	 * fees and its descendants' ancestor fees move by delta. */
	struct mempool_entry *e = mp_find_txid(mp, txid);
	if (e) {
		struct mp_refs r = {0};
		mp->prioritised++; /* Core's ++nTransactionsUpdated */
		e->modified_fee = mempool_fee_add(e->modified_fee, delta);
		e->anc_fees = mempool_fee_add(e->anc_fees, delta);
		e->desc_fees = mempool_fee_add(e->desc_fees, delta);
		if (mp_collect_ancestors(e, mp_new_epoch(mp), &r) == 0) {
			for (uint32_t k = 0; k < r.n; k++)
				r.v[k]->desc_fees = mempool_fee_add(r.v[k]->desc_fees, delta);
		}
		r.n = 0;
		if (mp_collect_descendants(mp, e, mp_new_epoch(mp), &r) == 0) {
			for (uint32_t k = 1; k < r.n; k++)
				r.v[k]->anc_fees = mempool_fee_add(r.v[k]->anc_fees, delta);
		}
		mp_refs_release(&r);
	}
	if (mp->deltas[i].delta == 0)
		mp->deltas[i] = mp->deltas[--mp->n_deltas];
	return 0;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct mempool_delta *x = a, *y = b;
	return hash_cmp(&x->txid, &y->txid);
}

int mempool_deltas(struct mempool *mp, struct mempool_delta **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!mp->n_deltas)
		return 0;
	struct mempool_delta *v = xcalloc(mp->n_deltas, sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	for (size_t i = 0; i < mp->n_deltas; i++) {
		const struct mempool_entry *e = mp_find_txid(mp, &mp->deltas[i].txid);
		v[i] = (struct mempool_delta){.txid = mp->deltas[i].txid,
		                              .delta = mp->deltas[i].delta,
		                              .in_mempool = e != NULL,
		                              .modified_fee = e ? e->modified_fee : 0};
	}
	qsort(v, mp->n_deltas, sizeof(*v), cmp_delta);
	*out = v;
	*n = mp->n_deltas;
	return 0;
}

void mempool_get_stats(struct mempool *mp, struct mempool_stats *out)
{
	*out = mp->stats;
	struct chain_script_cache *sc = chain_checker_script_cache(chain_get_checker(mp->c));
	if (sc)
		chain_script_cache_counters(sc, &out->script_cache_entries,
		                            &out->script_cache_capacity, &out->script_cache_hits,
		                            &out->script_cache_misses);
}

void mempool_accept_result_init(struct mempool_accept_result *r)
{
	memset(r, 0, sizeof(*r));
}

void mempool_accept_result_release(struct mempool_accept_result *r)
{
	xfree(r->effective_includes);
	xfree(r->replaced_txids);
	xfree(r->replaced_wtxids);
	xfree(r->missing_parents);
	mempool_accept_result_init(r);
}
