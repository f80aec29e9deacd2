/*
 * mining/assemble.c: which mempool transactions a new block holds, and
 * in what order: Bitcoin Core 29's BlockAssembler::addPackageTxs.
 *
 * Packages (a transaction with its ancestors not yet in the block) go in
 * best ancestor feerate first. Two sources compete for "best": the pool in
 * its ancestor-score order (min of own and ancestor feerate, as Core's
 * index), and the "modified" entries, whose ancestors are partly in the
 * block already, so their package is smaller than the pool's figures say.
 * Core keeps the modified ones in a multi-index; here they sit in a binary
 * heap whose stale items (the entry changed again, or went into the block)
 * are skipped when they reach the top: each entry carries a version that
 * every change bumps.
 *
 * Everything is Core's, including what looks arbitrary, so that
 * generatetoaddress mines what Core's would from the same pool (the
 * integration tests compare with Core's getblocktemplate): the weight
 * check is on 4 x the package's vsize and fails at equality; a package
 * below the minimum fee rate ends the selection; after 1,000 failures in
 * a row with the block within 4,000 WU of full it stops; a package is
 * sorted by ancestor count, then txid.
 *
 * It reads the pool through mempool/mempool.h alone, as Core's reads
 * CTxMemPool's public face: the ancestor-score list, the ancestor and
 * descendant walks, and each entry's figures, copied once into a side
 * array kept by the entry's index.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "mining/mining.h"

/** Core's MAX_CONSECUTIVE_FAILURES. */
#define BLOCK_MAX_CONSECUTIVE_FAILURES 1000
/** Core's BLOCK_FULL_ENOUGH_WEIGHT_DELTA. */
#define BLOCK_FULL_ENOUGH_WEIGHT_DELTA 4000

/* Per entry (by mempool_entry_index): its figures and the selection's state. */
struct sel {
	struct mempool_entry_figures f; /* the pool's, read once */
	uint64_t size; /* with the ancestors not in the block (valid when modified) */
	int64_t fees;
	int64_t sigops;
	uint32_t ver; /* bumped at each change: older heap items are stale */
	bool modified, in_block, failed, in_package;
};

struct heap_item {
	uint32_t pos, ver;
};

/* A growable list of entries. */
struct refs {
	const struct mempool_entry **v;
	size_t n, cap;
};

struct assembler {
	struct mempool *mp;
	struct sel *s;
	const struct mempool_entry **entries; /* by index */
	struct heap_item *heap;
	size_t n_heap, cap_heap;
	struct refs pkg; /* the package being tried */
	const struct mempool_entry **out;
	size_t n_out;
	uint64_t weight;
	int64_t sigops;
	int32_t height;
	int64_t lock_time_cutoff;
};

static int refs_reserve(struct refs *r, size_t want)
{
	if (want <= r->cap)
		return 0;
	size_t cap = r->cap ? r->cap : 16;
	while (cap < want)
		cap *= 2;
	const struct mempool_entry **v = xreallocarray(r->v, cap, sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	r->v = v;
	r->cap = cap;
	return 0;
}

static struct sel *sel_of(const struct assembler *A, const struct mempool_entry *e)
{
	return &A->s[mempool_entry_index(e)];
}

static int hash_cmp(const struct mempool_entry *a, const struct mempool_entry *b)
{
	return memcmp(mempool_entry_txid(a)->b, mempool_entry_txid(b)->b, 32);
}

/* Core's CompareModifiedEntry: true when a's package feerate is higher (ties: lower txid). */
static bool modified_better(const struct assembler *A, uint32_t a, uint32_t b)
{
	const struct sel *x = &A->s[a], *y = &A->s[b];
	double f1 = (double)y->size * (double)x->fees;
	double f2 = (double)x->size * (double)y->fees;
	if (f1 == f2)
		return hash_cmp(A->entries[a], A->entries[b]) < 0;
	return f1 > f2;
}

/* Core's CompareTxMemPoolEntryByAncestorFee between the best modified entry
 * (its modified figures) and the pool's next (its pool figures). */
static bool modified_beats_pool(const struct assembler *A, uint32_t m,
                                const struct mempool_entry *p)
{
	const struct mempool_entry *me = A->entries[m];
	const struct mempool_entry_figures *pf_ = &sel_of(A, p)->f;
	double mf, ms, pf, ps;
	mempool_ancestor_score(me, A->s[m].fees, A->s[m].size, &mf, &ms);
	mempool_ancestor_score(p, pf_->ancestor_fees, pf_->ancestor_size, &pf, &ps);
	double f1 = mf * ps, f2 = pf * ms;
	if (f1 == f2)
		return hash_cmp(me, p) < 0;
	return f1 > f2;
}

static bool item_better(const struct assembler *A, const struct heap_item *a,
                        const struct heap_item *b)
{
	return modified_better(A, a->pos, b->pos);
}

static int heap_push(struct assembler *A, uint32_t pos)
{
	if (A->n_heap == A->cap_heap) {
		size_t cap = A->cap_heap ? A->cap_heap * 2 : 64;
		struct heap_item *h = xreallocarray(A->heap, cap, sizeof(*h));
		if (!h)
			return CHAIN_ENOMEM;
		A->heap = h;
		A->cap_heap = cap;
	}
	size_t i = A->n_heap++;
	A->heap[i] = (struct heap_item){pos, A->s[pos].ver};
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!item_better(A, &A->heap[i], &A->heap[up]))
			break;
		struct heap_item t = A->heap[i];
		A->heap[i] = A->heap[up];
		A->heap[up] = t;
		i = up;
	}
	return 0;
}

static void heap_pop(struct assembler *A)
{
	A->heap[0] = A->heap[--A->n_heap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		if (l < A->n_heap && item_better(A, &A->heap[l], &A->heap[best]))
			best = l;
		if (r < A->n_heap && item_better(A, &A->heap[r], &A->heap[best]))
			best = r;
		if (best == i)
			break;
		struct heap_item t = A->heap[i];
		A->heap[i] = A->heap[best];
		A->heap[best] = t;
		i = best;
	}
}

/* The best modified entry's pos, or -1 when there is none (stale items go). */
static int64_t heap_top(struct assembler *A)
{
	while (A->n_heap) {
		const struct heap_item *t = &A->heap[0];
		const struct sel *s = &A->s[t->pos];
		if (s->modified && s->ver == t->ver)
			return t->pos;
		heap_pop(A);
	}
	return -1;
}

/* e's ancestors not in the block (e excluded) into A->pkg, with room for e. */
static int unconfirmed_ancestors(struct assembler *A, const struct mempool_entry *e)
{
	const struct mempool_entry **anc;
	size_t n;
	A->pkg.n = 0;
	int err = mempool_ancestors(A->mp, e, &anc, &n);
	if (err)
		return err;
	if (!(err = refs_reserve(&A->pkg, n + 1))) {
		for (size_t i = 0; i < n; i++)
			if (!sel_of(A, anc[i])->in_block)
				A->pkg.v[A->pkg.n++] = anc[i];
	}
	xfree(anc);
	return err;
}

/* e's signature operations with those of `anc` (the pool keeps no such figure). */
static int64_t sigops_with(const struct assembler *A, const struct mempool_entry *e,
                           const struct mempool_entry *const *anc, size_t n)
{
	int64_t ops = sel_of(A, e)->f.sigop_cost;
	for (size_t i = 0; i < n; i++)
		ops += sel_of(A, anc[i])->f.sigop_cost;
	return ops;
}

/* e becomes a modified entry, starting from the pool's figures for its package. */
static int start_modified(struct assembler *A, const struct mempool_entry *e)
{
	struct sel *s = sel_of(A, e);
	const struct mempool_entry **anc;
	size_t n;
	int err = mempool_ancestors(A->mp, e, &anc, &n);
	if (err)
		return err;
	s->size = s->f.ancestor_size;
	s->fees = s->f.ancestor_fees;
	s->sigops = sigops_with(A, e, anc, n);
	s->modified = true;
	xfree(anc);
	return 0;
}

/* Core's UpdatePackagesForAdded: every descendant of what just went in,
 * outside the package, has that much less to bring. */
static int update_descendants(struct assembler *A)
{
	int err = 0;
	for (size_t i = 0; i < A->pkg.n && !err; i++) {
		const struct mempool_entry *it = A->pkg.v[i];
		const struct mempool_entry_figures *itf = &sel_of(A, it)->f;
		const struct mempool_entry **desc;
		size_t n;
		if ((err = mempool_descendants(A->mp, it, &desc, &n)))
			return err;
		for (size_t k = 0; k < n && !err; k++) {
			const struct mempool_entry *d = desc[k];
			struct sel *s = sel_of(A, d);
			if (s->in_package)
				continue;
			if (!s->modified && (err = start_modified(A, d)))
				break;
			s->size -= (uint64_t)itf->vsize;
			s->fees = mempool_fee_sub(s->fees, itf->modified_fee);
			s->sigops -= itf->sigop_cost;
			s->ver++;
			err = heap_push(A, (uint32_t)mempool_entry_index(d));
		}
		xfree(desc);
	}
	return err;
}

/* Core's CompareTxIterByAncestorCount: parents before children. */
static int cmp_for_block(const void *pa, const void *pb)
{
	const struct mempool_entry *a = *(const struct mempool_entry *const *)pa;
	const struct mempool_entry *b = *(const struct mempool_entry *const *)pb;
	struct mempool_entry_figures fa, fb;
	mempool_entry_figures(a, &fa);
	mempool_entry_figures(b, &fb);
	if (fa.ancestor_count != fb.ancestor_count)
		return fa.ancestor_count < fb.ancestor_count ? -1 : 1;
	return hash_cmp(a, b);
}

/* The package (A->pkg, e included) into the block. */
static int add_package(struct assembler *A)
{
	qsort(A->pkg.v, A->pkg.n, sizeof(*A->pkg.v), cmp_for_block);
	for (size_t i = 0; i < A->pkg.n; i++) {
		const struct mempool_entry *e = A->pkg.v[i];
		struct sel *s = sel_of(A, e);
		A->out[A->n_out++] = e;
		A->weight += s->f.weight;
		A->sigops += s->f.sigop_cost;
		s->in_block = s->in_package = true;
		s->modified = false;
	}
	int err = update_descendants(A);
	for (size_t i = 0; i < A->pkg.n; i++)
		sel_of(A, A->pkg.v[i])->in_package = false;
	return err;
}

/* Core's TestPackageTransactions: every one final in the new block. */
static bool package_final(const struct assembler *A)
{
	for (size_t i = 0; i < A->pkg.n; i++)
		if (!chain_tx_is_final(mempool_entry_tx(A->pkg.v[i]), A->height,
		                       A->lock_time_cutoff))
			return false;
	return true;
}

static bool fits(const struct assembler *A, const struct mining_block_opts *o, uint64_t size,
                 int64_t sigops)
{
	if (A->weight + 4 * size >= o->max_weight)
		return false;
	return A->sigops + sigops < (int64_t)CHAIN_MAX_BLOCK_SIGOPS_COST;
}

/* Core: a modified entry that failed leaves the modified set for good. */
static void give_up(struct sel *s)
{
	s->modified = false;
	s->failed = true;
}

static int select_txs(struct assembler *A, const struct mining_block_opts *o,
                      const struct mempool_entry *const *order, size_t n)
{
	size_t mi = 0;
	int failures = 0;
	while (mi < n || heap_top(A) >= 0) {
		if (mi < n) {
			const struct sel *s = sel_of(A, order[mi]);
			if (s->modified || s->in_block || s->failed) {
				mi++;
				continue;
			}
		}
		int64_t top = heap_top(A);
		const struct mempool_entry *e;
		bool using_modified = false;
		if (mi == n) {
			e = A->entries[top];
			using_modified = true;
		} else if (top >= 0 && modified_beats_pool(A, (uint32_t)top, order[mi])) {
			e = A->entries[top];
			using_modified = true;
		} else {
			e = order[mi++];
		}
		struct sel *s = sel_of(A, e);
		/* Its ancestors not in the block: the package, and (for a pool
		 * entry, whose ancestors are all outside) its sigops. */
		int err = unconfirmed_ancestors(A, e);
		if (err)
			return err;
		uint64_t size = using_modified ? s->size : s->f.ancestor_size;
		int64_t fees = using_modified ? s->fees : s->f.ancestor_fees;
		int64_t sigops = using_modified ? s->sigops : sigops_with(A, e, A->pkg.v, A->pkg.n);
		if (fees < mempool_feerate_fee(o->min_fee_rate, (int64_t)size))
			return 0; /* everything left pays less */
		if (!fits(A, o, size, sigops)) {
			if (using_modified)
				give_up(s);
			if (++failures > BLOCK_MAX_CONSECUTIVE_FAILURES &&
			    A->weight > o->max_weight - BLOCK_FULL_ENOUGH_WEIGHT_DELTA)
				return 0;
			continue;
		}
		A->pkg.v[A->pkg.n++] = e; /* unconfirmed_ancestors left room */
		if (!package_final(A)) {
			if (using_modified)
				give_up(s);
			continue;
		}
		failures = 0;
		if ((err = add_package(A)))
			return err;
	}
	return 0;
}

int mining_assemble(struct chain *c, struct mempool *mp, const struct mining_block_opts *opts,
                    const struct mempool_entry ***out, size_t *n)
{
	const struct mining_block_opts def = MINING_BLOCK_OPTS_DEFAULT;
	const struct mining_block_opts *o = opts ? opts : &def;
	*out = NULL;
	*n = 0;
	const struct mempool_entry **order = NULL;
	size_t n_order = 0;
	int err = mempool_list(mp, MEMPOOL_ORDER_ANCESTOR_SCORE, &order, &n_order);
	if (err || !n_order)
		return err;
	const struct chain_node *tip = chain_tip(c);
	struct assembler A = {
	    .mp = mp,
	    .s = xcalloc(n_order, sizeof(struct sel)),
	    .entries = xmalloc(n_order * sizeof(*A.entries)),
	    .out = xmalloc(n_order * sizeof(*A.out)),
	    .weight = o->reserved_weight,
	    .sigops = MINING_BLOCK_RESERVED_SIGOPS,
	    .height = tip->height + 1,
	    .lock_time_cutoff = chain_node_mtp(tip),
	};
	if (!A.s || !A.entries || !A.out) {
		err = CHAIN_ENOMEM;
	} else {
		for (size_t i = 0; i < n_order; i++) {
			size_t k = mempool_entry_index(order[i]);
			A.entries[k] = order[i];
			mempool_entry_figures(order[i], &A.s[k].f);
		}
		err = select_txs(&A, o, order, n_order);
	}
	xfree(order);
	xfree(A.s);
	xfree(A.entries);
	xfree(A.heap);
	xfree(A.pkg.v);
	if (err || !A.n_out) {
		xfree(A.out);
		return err;
	}
	*out = A.out;
	*n = A.n_out;
	return 0;
}
