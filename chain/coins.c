/*
 * chain/coins.c: the UTXO cache over the database, with Core's
 * CCoinsViewCache semantics:
 *   DIRTY  the entry differs from the database and the flush writes it;
 *   FRESH  the database has no such coin, so spending it forgets the
 *          entry and nothing ever reaches LMDB;
 *   SPENT  (with DIRTY, never FRESH) a tombstone: the flush deletes it.
 * Clean entries are unspent copies of database records; a miss is not
 * cached (as Core 29's FetchCoin).
 *
 * Layout, chosen for memory per coin (measured in test_chain_coins):
 *   entries  96-byte structs in chunks of 512 (48 KiB) that never move,
 *            recycled through a free list; scripts up to 40 bytes inline
 *            (P2WPKH 22, P2SH 23, P2PKH 25, P2WSH/P2TR 34, P2PK 35: every
 *            standard template but bare uncompressed P2PK and multisig),
 *            larger ones on the heap;
 *   table    open addressing with linear probing and backward-shift
 *            deletion (no tombstone slots), 8 bytes a slot: the entry's
 *            index and 32 bits of its salted SipHash, so a probe compares
 *            tags before it touches an entry; at most 3/4 full.
 * That is ~96 + 8/load ≈ 107-117 bytes a coin with its script.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "chain/coins_internal.h"

#define CHUNK_SHIFT   9u
#define CHUNK_ENTRIES (1u << CHUNK_SHIFT)
#define CHUNK_BYTES   (CHUNK_ENTRIES * sizeof(struct chain_coin_entry))
#define TABLE_MIN     64u
/* Not a coin state: the entry is on the free list. */
#define ENTRY_FREE 0x80u
#define OP_RETURN  0x6a

_Static_assert(sizeof(struct proto_outpoint) == 36, "outpoint is hashed as 36 raw bytes");
_Static_assert(sizeof(struct chain_coin_entry) == 96, "entry layout measured at 96 bytes");

struct slot {
	uint32_t idx1; /* entry index + 1; 0 = empty */
	uint32_t tag;  /* low 32 bits of the entry's hash; home = tag & mask */
};

struct flush_run;

struct chain_coins {
	struct chain_db *db;
	size_t cache_bytes;
	uint8_t salt[16];
	struct slot *table;
	size_t mask; /* slots - 1 */
	size_t used; /* entries in the table */
	struct chain_coin_entry **chunks;
	size_t n_chunks, chunks_cap;
	size_t n_taken;     /* entries ever handed out of the chunks (high-water) */
	uint32_t free_head; /* index + 1 of the first free entry; chained through height */
	size_t dirty;
	size_t heap_bytes; /* heap scripts, as the allocator charges them */
	struct proto_hash best;
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
	uint8_t val[CHAIN_COIN_VAL_MAX]; /* a record read from the database */
	/* A flush on its own thread (chain_coins_flush_start): the cache as it
	 * was at the hand-off, read by both threads and changed by neither
	 * until the owner joins the flush thread. Lookups go cache, snapshot,
	 * database. */
	struct chain_coins *snap;
	size_t snap_bytes;     /* the snapshot and its order, counted until freed */
	struct flush_run *run; /* the flush thread's job; NULL when joined */
	pthread_t thread;
	int failed; /* a flush thread's error: the database lacks the snapshot for good */
	struct chain_coins_flush_report report; /* the last join's, until polled */
};

static void flush_join(struct chain_coins *c);

/* ---- entries and table ----------------------------------------------- */

static inline struct chain_coin_entry *entry_at(const struct chain_coins *c, uint32_t idx)
{
	return &c->chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_ENTRIES - 1)];
}

static inline uint32_t op_tag(const struct chain_coins *c, const struct proto_outpoint *op)
{
	return (uint32_t)proto_siphash(c->salt, op, sizeof(*op));
}

/* What malloc charges for n bytes (Core's MallocUsage on 64-bit). */
static size_t malloc_usage(size_t n)
{
	return ((n + 31) >> 4) << 4;
}

/* Find op: true and *pos its slot, or false and *pos the empty slot that
 * ends its probe sequence (where it would go). */
static bool table_find(const struct chain_coins *c, const struct proto_outpoint *op, uint32_t tag,
                       size_t *pos)
{
	size_t i = tag & c->mask;
	for (;;) {
		const struct slot *s = &c->table[i];
		if (!s->idx1) {
			*pos = i;
			return false;
		}
		if (s->tag == tag) {
			const struct chain_coin_entry *e = entry_at(c, s->idx1 - 1);
			if (e->op.n == op->n && proto_hash_eq(&e->op.txid, &op->txid)) {
				*pos = i;
				return true;
			}
		}
		i = (i + 1) & c->mask;
	}
}

/* Remove slot pos, shifting back later members of its cluster that may
 * move (their home is not between the hole and them). */
static void table_remove(struct chain_coins *c, size_t pos)
{
	size_t i = pos, j = pos;
	for (;;) {
		j = (j + 1) & c->mask;
		if (!c->table[j].idx1)
			break;
		size_t home = c->table[j].tag & c->mask;
		if (((j - home) & c->mask) >= ((j - i) & c->mask)) {
			c->table[i] = c->table[j];
			i = j;
		}
	}
	c->table[i].idx1 = 0;
	c->used--;
}

static int table_resize(struct chain_coins *c, size_t slots)
{
	struct slot *t = xcalloc(slots, sizeof(*t));
	if (!t)
		return CHAIN_ENOMEM;
	size_t mask = slots - 1;
	for (size_t k = 0; k <= c->mask && c->used; k++) {
		struct slot s = c->table[k];
		if (!s.idx1)
			continue;
		size_t i = s.tag & mask;
		while (t[i].idx1)
			i = (i + 1) & mask;
		t[i] = s;
	}
	xfree(c->table);
	c->table = t;
	c->mask = mask;
	return 0;
}

/* Room for one more entry in the table and in the chunks, so that the
 * change that follows cannot fail half-way. */
static int reserve_one(struct chain_coins *c)
{
	if ((c->used + 1) * 4 > (c->mask + 1) * 3) {
		size_t slots;
		if (c->mask + 1 >= ((size_t)1 << 31) || base_mul_size(c->mask + 1, 2, &slots))
			return CHAIN_EOVERFLOW;
		int err = table_resize(c, slots);
		if (err)
			return err;
	}
	if (c->free_head || c->n_taken < c->n_chunks * CHUNK_ENTRIES)
		return 0;
	if (c->n_chunks * CHUNK_ENTRIES >= UINT32_MAX - CHUNK_ENTRIES)
		return CHAIN_EOVERFLOW;
	if (c->n_chunks == c->chunks_cap) {
		size_t cap = c->chunks_cap ? c->chunks_cap * 2 : 16;
		struct chain_coin_entry **p = xreallocarray(c->chunks, cap, sizeof(*p));
		if (!p)
			return CHAIN_ENOMEM;
		c->chunks = p;
		c->chunks_cap = cap;
	}
	struct chain_coin_entry *chunk = xmalloc(CHUNK_BYTES);
	if (!chunk)
		return CHAIN_ENOMEM;
	c->chunks[c->n_chunks++] = chunk;
	return 0;
}

/* Take the entry reserve_one made room for and put it in slot pos. */
static struct chain_coin_entry *entry_insert(struct chain_coins *c, size_t pos, uint32_t tag,
                                             const struct proto_outpoint *op)
{
	uint32_t idx;
	if (c->free_head) {
		idx = c->free_head - 1;
		c->free_head = entry_at(c, idx)->height;
	} else {
		idx = (uint32_t)c->n_taken++;
	}
	struct chain_coin_entry *e = entry_at(c, idx);
	memset(e, 0, sizeof(*e));
	e->op = *op;
	c->table[pos].idx1 = idx + 1;
	c->table[pos].tag = tag;
	c->used++;
	return e;
}

static void script_drop(struct chain_coins *c, struct chain_coin_entry *e)
{
	if (e->script_len > CHAIN_COIN_INLINE) {
		xfree(e->s.heap);
		c->heap_bytes -= malloc_usage(e->script_len);
	}
	e->script_len = 0;
}

/* Put a copy of script into e (whose old script is already dropped);
 * `heap` is a buffer allocated beforehand when the script is large. */
static void script_set(struct chain_coins *c, struct chain_coin_entry *e, const uint8_t *script,
                       uint32_t len, uint8_t *heap)
{
	e->script_len = len;
	if (len <= CHAIN_COIN_INLINE) {
		if (len)
			memcpy(e->s.inl, script, len);
		return;
	}
	memcpy(heap, script, len);
	e->s.heap = heap;
	c->heap_bytes += malloc_usage(len);
}

/* Forget the entry in slot pos entirely. */
static void entry_erase(struct chain_coins *c, size_t pos)
{
	uint32_t idx = c->table[pos].idx1 - 1;
	struct chain_coin_entry *e = entry_at(c, idx);
	script_drop(c, e);
	if (e->flags & CHAIN_COIN_DIRTY)
		c->dirty--;
	e->flags = ENTRY_FREE;
	e->height = c->free_head;
	c->free_head = idx + 1;
	table_remove(c, pos);
}

static void fill_coin(const struct chain_coin_entry *e, struct chain_coin *out)
{
	out->value = e->value;
	out->height = e->height;
	out->coinbase = e->coinbase;
	out->script_len = e->script_len;
	out->script = chain_coin_entry_script(e);
}

/* ---- the public cache ------------------------------------------------ */

int chain_coins_new(struct chain_coins **out, struct chain_db *db, size_t cache_bytes)
{
	*out = NULL;
	struct chain_coins *c = xcalloc(1, sizeof(*c));
	if (!c)
		return CHAIN_ENOMEM;
	c->db = db;
	c->cache_bytes = cache_bytes;
	proto_random(c->salt, sizeof(c->salt));
	c->table = xcalloc(TABLE_MIN, sizeof(*c->table));
	if (!c->table) {
		xfree(c);
		return CHAIN_ENOMEM;
	}
	c->mask = TABLE_MIN - 1;
	size_t len;
	int err = chain_db_get(db, CHAIN_TABLE_META, "best", 4, c->best.b, sizeof(c->best.b), &len);
	if (err == CHAIN_ENOTFOUND)
		err = 0;
	else if (err == CHAIN_EOVERFLOW || (!err && len != sizeof(c->best.b)))
		err = CHAIN_ECORRUPT;
	if (err) {
		chain_coins_free(c);
		return err;
	}
	*out = c;
	return 0;
}

/* Drop every entry and go back to the smallest table. */
static void drop_all(struct chain_coins *c)
{
	for (size_t i = 0; i < c->n_taken; i++) {
		struct chain_coin_entry *e = entry_at(c, (uint32_t)i);
		if (!(e->flags & ENTRY_FREE))
			script_drop(c, e);
	}
	for (size_t i = 0; i < c->n_chunks; i++)
		xfree(c->chunks[i]);
	xfree(c->chunks);
	c->chunks = NULL;
	c->n_chunks = c->chunks_cap = c->n_taken = 0;
	c->free_head = 0;
	c->used = c->dirty = 0;
	struct slot *t = xcalloc(TABLE_MIN, sizeof(*t));
	if (t) {
		xfree(c->table);
		c->table = t;
		c->mask = TABLE_MIN - 1;
	} else {
		/* Keep the big table rather than fail: it is empty all the same. */
		memset(c->table, 0, (c->mask + 1) * sizeof(*c->table));
	}
}

void chain_coins_free(struct chain_coins *c)
{
	if (!c)
		return;
	flush_join(c);
	chain_coins_free(c->snap); /* kept only by a failed flush */
	drop_all(c);
	xfree(c->table);
	xfree(c);
}

/* op's entry in the snapshot of a flush in flight, or NULL. */
static const struct chain_coin_entry *snap_find(const struct chain_coins *c,
                                                const struct proto_outpoint *op, uint32_t tag)
{
	size_t pos;
	if (!c->snap || !table_find(c->snap, op, tag, &pos))
		return NULL;
	return entry_at(c->snap, c->snap->table[pos].idx1 - 1);
}

/* Read op's record from the database into c->val and decode it. */
static int db_fetch(struct chain_coins *c, const struct proto_outpoint *op, struct chain_coin *coin)
{
	uint8_t key[CHAIN_COIN_KEY_MAX];
	size_t klen = chain_coin_key_encode(key, op), vlen;
	int err = chain_db_get(c->db, CHAIN_TABLE_COINS, key, klen, c->val, sizeof(c->val), &vlen);
	if (err == CHAIN_EOVERFLOW)
		return CHAIN_ECORRUPT;
	if (err)
		return err;
	return chain_coin_value_decode(c->val, vlen, coin, c->special);
}

int chain_coins_get(struct chain_coins *c, const struct proto_outpoint *op, struct chain_coin *out)
{
	uint32_t tag = op_tag(c, op);
	size_t pos;
	if (table_find(c, op, tag, &pos)) {
		const struct chain_coin_entry *e = entry_at(c, c->table[pos].idx1 - 1);
		if (e->flags & CHAIN_COIN_SPENT)
			return CHAIN_ENOTFOUND;
		fill_coin(e, out);
		return 0;
	}
	struct chain_coin coin;
	/* A coin of the snapshot is cached clean: its flush commits before
	 * the next hand-off, so the database has it by the time this cache
	 * is written. */
	const struct chain_coin_entry *s = snap_find(c, op, tag);
	int err = 0;
	if (s && (s->flags & CHAIN_COIN_SPENT))
		return CHAIN_ENOTFOUND;
	if (s)
		fill_coin(s, &coin);
	else if ((err = db_fetch(c, op, &coin)))
		return err;
	uint8_t *heap = NULL;
	if (coin.script_len > CHAIN_COIN_INLINE && !(heap = xmalloc(coin.script_len)))
		return CHAIN_ENOMEM;
	err = reserve_one(c);
	if (err) {
		xfree(heap);
		return err;
	}
	table_find(c, op, tag, &pos); /* the table may have been resized */
	struct chain_coin_entry *e = entry_insert(c, pos, tag, op);
	e->value = coin.value;
	e->height = coin.height;
	e->coinbase = coin.coinbase;
	script_set(c, e, coin.script, coin.script_len, heap);
	fill_coin(e, out);
	return 0;
}

int chain_coins_add(struct chain_coins *c, const struct proto_outpoint *op,
                    const struct chain_coin *coin, bool possible_overwrite)
{
	/* Core's IsUnspendable: never in the UTXO set. */
	if ((coin->script_len && coin->script[0] == OP_RETURN) ||
	    coin->script_len > CHAIN_MAX_COIN_SCRIPT)
		return 0;
	uint32_t tag = op_tag(c, op);
	size_t pos;
	bool found = table_find(c, op, tag, &pos);
	struct chain_coin_entry *e = found ? entry_at(c, c->table[pos].idx1 - 1) : NULL;
	if (e && !(e->flags & CHAIN_COIN_SPENT) && !possible_overwrite)
		return CHAIN_EEXIST;
	uint8_t *heap = NULL;
	if (coin->script_len > CHAIN_COIN_INLINE && !(heap = xmalloc(coin->script_len)))
		return CHAIN_ENOMEM;
	uint8_t flags;
	if (e) {
		/* Over a tombstone the database still holds the old coin, so
		 * the new one is not FRESH; a FRESH entry stays FRESH. */
		flags = e->flags;
		script_drop(c, e);
	} else {
		int err = reserve_one(c);
		if (err) {
			xfree(heap);
			return err;
		}
		table_find(c, op, tag, &pos);
		e = entry_insert(c, pos, tag, op);
		/* Not in the cache: as Core, the caller vouches that the
		 * database has no unspent coin here unless it says it may
		 * (possible_overwrite), so the entry can be FRESH. */
		flags = possible_overwrite ? 0 : CHAIN_COIN_FRESH;
	}
	if (!(flags & CHAIN_COIN_DIRTY))
		c->dirty++;
	e->flags = (uint8_t)((flags & ~CHAIN_COIN_SPENT) | CHAIN_COIN_DIRTY);
	e->value = coin->value;
	e->height = coin->height;
	e->coinbase = coin->coinbase;
	script_set(c, e, coin->script, coin->script_len, heap);
	return 0;
}

int chain_coins_spend(struct chain_coins *c, const struct proto_outpoint *op)
{
	uint32_t tag = op_tag(c, op);
	size_t pos;
	if (!table_find(c, op, tag, &pos)) {
		/* Only the snapshot or the database has it: straight to a
		 * tombstone, without caching the coin first. */
		const struct chain_coin_entry *s = snap_find(c, op, tag);
		struct chain_coin coin;
		int err = 0;
		if (s && (s->flags & CHAIN_COIN_SPENT))
			return CHAIN_ENOTFOUND;
		if (!s)
			err = db_fetch(c, op, &coin);
		if (!err)
			err = reserve_one(c);
		if (err)
			return err;
		table_find(c, op, tag, &pos);
		struct chain_coin_entry *e = entry_insert(c, pos, tag, op);
		e->flags = CHAIN_COIN_DIRTY | CHAIN_COIN_SPENT;
		c->dirty++;
		return 0;
	}
	struct chain_coin_entry *e = entry_at(c, c->table[pos].idx1 - 1);
	if (e->flags & CHAIN_COIN_SPENT)
		return CHAIN_ENOTFOUND;
	if (e->flags & CHAIN_COIN_FRESH) {
		entry_erase(c, pos);
		return 0;
	}
	script_drop(c, e);
	if (!(e->flags & CHAIN_COIN_DIRTY))
		c->dirty++;
	e->flags = CHAIN_COIN_DIRTY | CHAIN_COIN_SPENT;
	e->value = 0;
	return 0;
}

const struct proto_hash *chain_coins_best_block(const struct chain_coins *c)
{
	return &c->best;
}

void chain_coins_set_best_block(struct chain_coins *c, const struct proto_hash *hash)
{
	c->best = *hash;
}

static size_t own_memory(const struct chain_coins *c)
{
	return sizeof(*c) + c->n_chunks * CHUNK_BYTES + c->chunks_cap * sizeof(*c->chunks) +
	       (c->mask + 1) * sizeof(*c->table) + c->heap_bytes;
}

size_t chain_coins_memory(const struct chain_coins *c)
{
	return own_memory(c) + c->snap_bytes;
}

size_t chain_coins_snapshot_memory(const struct chain_coins *c)
{
	return c->snap_bytes;
}

size_t chain_coins_cached(const struct chain_coins *c)
{
	return c->used;
}

size_t chain_coins_dirty(const struct chain_coins *c)
{
	return c->dirty;
}

struct chain_db *chain_coins_db(struct chain_coins *c)
{
	return c->db;
}

/* ---- flush ----------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
	const struct chain_coin_entry *x = *(const struct chain_coin_entry *const *)a;
	const struct chain_coin_entry *y = *(const struct chain_coin_entry *const *)b;
	return chain_coin_key_cmp(&x->op, &y->op);
}

int chain_coins_dirty_sorted(struct chain_coins *c, const struct chain_coin_entry ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	flush_join(c); /* the database must hold the snapshot's changes */
	if (c->failed)
		return c->failed;
	if (!c->dirty)
		return 0;
	const struct chain_coin_entry **v = xcalloc(c->dirty, sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < c->n_taken; i++) {
		const struct chain_coin_entry *e = entry_at(c, (uint32_t)i);
		if ((e->flags & CHAIN_COIN_DIRTY) && !(e->flags & ENTRY_FREE))
			v[k++] = e;
	}
	qsort(v, k, sizeof(*v), cmp_entry);
	*out = v;
	*n = k;
	return 0;
}

/*
 * The flush's order is built in the table's own memory, slot k holding the
 * k-th dirty entry (k never passes the slot being read): in `idx1` its
 * index (not + 1 here), in `tag` the first four bytes of its txid, big
 * endian, so that the sort compares most pairs without touching the
 * entries. A separate array of 3.4 M pointers was 27 MiB on top of a
 * full cache at each large flush, the anonymous peak of the 10.45 M-coin
 * run, and a sort that read two entries scattered over 376 MiB for every
 * comparison missed the CPU's caches each time (issue 24). The table is
 * rebuilt from the entries afterwards (table_rebuild) unless the whole
 * cache is dropped.
 */
static size_t order_into(const struct chain_coins *c, struct slot *out)
{
	size_t k = 0;
	for (size_t j = 0; j <= c->mask; j++) {
		uint32_t idx1 = c->table[j].idx1;
		if (!idx1)
			continue;
		const struct chain_coin_entry *e = entry_at(c, idx1 - 1);
		if (e->flags & CHAIN_COIN_DIRTY) {
			const uint8_t *t = e->op.txid.b;
			out[k].idx1 = idx1 - 1;
			out[k].tag = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 |
			             (uint32_t)t[2] << 8 | t[3];
			k++;
		}
	}
	return k;
}

/* In the table itself (k never passes the slot being read). */
static size_t order_in_table(struct chain_coins *c)
{
	return order_into(c, c->table);
}

static bool order_less(const struct chain_coins *c, const struct slot *x, const struct slot *y)
{
	if (x->tag != y->tag)
		return x->tag < y->tag;
	return chain_coin_key_cmp(&entry_at(c, x->idx1)->op, &entry_at(c, y->idx1)->op) < 0;
}

static void swap_slots(struct slot *a, struct slot *b)
{
	struct slot t = *a;
	*a = *b;
	*b = t;
}

/*
 * In place: glibc's qsort is a merge sort that mallocs a copy of the
 * array (27 MiB at 3.4 M coins, on top of the full cache). A quicksort
 * with the median of three, recursing into the smaller side (depth at
 * most log2 n), and insertion sort for short runs.
 */
static void sort_order(const struct chain_coins *c, struct slot *v, size_t n)
{
	while (n > 16) {
		size_t mid = n / 2;
		if (order_less(c, &v[mid], &v[0]))
			swap_slots(&v[mid], &v[0]);
		if (order_less(c, &v[n - 1], &v[0]))
			swap_slots(&v[n - 1], &v[0]);
		if (order_less(c, &v[n - 1], &v[mid]))
			swap_slots(&v[n - 1], &v[mid]);
		struct slot pivot = v[mid];
		size_t i = 0, j = n - 1;
		for (;;) {
			while (order_less(c, &v[i], &pivot))
				i++;
			while (order_less(c, &pivot, &v[j]))
				j--;
			if (i >= j)
				break;
			swap_slots(&v[i++], &v[j--]);
		}
		/* [0, j] and [j + 1, n): the smaller one by recursion. */
		size_t left = j + 1;
		if (left < n - left) {
			sort_order(c, v, left);
			v += left;
			n -= left;
		} else {
			sort_order(c, v + left, n - left);
			n = left;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct slot x = v[i];
		size_t k = i;
		for (; k > 0 && order_less(c, &x, &v[k - 1]); k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
}

/* Every live entry back into the (overwritten) table. After a committed
 * flush (`written`) the written entries become clean copies and the
 * tombstones go, as Core's cache after a sync. */
static void table_rebuild(struct chain_coins *c, bool written)
{
	memset(c->table, 0, (c->mask + 1) * sizeof(*c->table));
	c->used = 0;
	for (size_t i = 0; i < c->n_taken; i++) {
		struct chain_coin_entry *e = entry_at(c, (uint32_t)i);
		if (e->flags & ENTRY_FREE)
			continue;
		if (written && (e->flags & CHAIN_COIN_DIRTY)) {
			c->dirty--;
			if (e->flags & CHAIN_COIN_SPENT) {
				script_drop(c, e);
				e->flags = ENTRY_FREE;
				e->height = c->free_head;
				c->free_head = (uint32_t)i + 1;
				continue;
			}
			e->flags = 0;
		}
		uint32_t tag = op_tag(c, &e->op);
		size_t pos = tag & c->mask;
		while (c->table[pos].idx1)
			pos = (pos + 1) & c->mask;
		c->table[pos].idx1 = (uint32_t)i + 1;
		c->table[pos].tag = tag;
		c->used++;
	}
}

struct flush_job {
	struct chain_coins *c;
	const struct slot *order; /* see order_in_table */
	size_t n;
	int (*extra)(struct chain_db_txn *t, void *arg);
	void *arg;
};

/* LMDB's default order of keys: bytes, then the shorter first. */
static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/*
 * The changes merged with the old records into a fresh table in key
 * order (chain_db_rewrite_begin). A coin the flush changes replaces its
 * old record, a tombstone drops it, everything else is copied as it is.
 */
static int merge_coins(struct chain_db_txn *t, struct flush_job *j)
{
	int err = chain_db_rewrite_begin(t);
	if (err)
		return err;
	const uint8_t *ok = NULL, *ov = NULL;
	size_t okl = 0, ovl = 0, i = 0, klen = 0;
	int r = chain_db_rewrite_next(t, true, &ok, &okl, &ov, &ovl);
	uint8_t key[CHAIN_COIN_KEY_MAX];
	const struct chain_coin_entry *e = NULL;
	for (;;) {
		if (r && r != CHAIN_ENOTFOUND)
			return r;
		if (!e && i < j->n) {
			e = entry_at(j->c, j->order[i++].idx1);
			klen = chain_coin_key_encode(key, &e->op);
		}
		if (r && !e)
			break;
		int c = r ? 1 : !e ? -1 : key_cmp(ok, okl, key, klen);
		if (c < 0) {
			if ((err = chain_db_rewrite_put(t, ok, okl, ov, ovl)))
				return err;
			r = chain_db_rewrite_next(t, false, &ok, &okl, &ov, &ovl);
			continue;
		}
		if (!(e->flags & CHAIN_COIN_SPENT)) {
			struct chain_coin coin;
			fill_coin(e, &coin);
			size_t vlen = chain_coin_value_encode(j->c->val, &coin);
			if ((err = chain_db_rewrite_put(t, key, klen, j->c->val, vlen)))
				return err;
		} else if (c == 0)
			chain_db_rewrite_dropped(t);
		e = NULL;
		if (c == 0)
			r = chain_db_rewrite_next(t, false, &ok, &okl, &ov, &ovl);
	}
	return chain_db_rewrite_end(t);
}

/* The changes put and deleted one by one, in key order. */
static int update_coins(struct chain_db_txn *t, struct flush_job *j)
{
	uint8_t key[CHAIN_COIN_KEY_MAX];
	for (size_t i = 0; i < j->n; i++) {
		const struct chain_coin_entry *e = entry_at(j->c, j->order[i].idx1);
		size_t klen = chain_coin_key_encode(key, &e->op);
		int err;
		if (e->flags & CHAIN_COIN_SPENT) {
			err = chain_db_del(t, CHAIN_TABLE_COINS, key, klen);
		} else {
			struct chain_coin coin;
			fill_coin(e, &coin);
			size_t vlen = chain_coin_value_encode(j->c->val, &coin);
			err = chain_db_put(t, CHAIN_TABLE_COINS, key, klen, j->c->val, vlen);
		}
		if (err)
			return err;
	}
	return 0;
}

/* Rewrite the table when the flush changes at least a third as many
 * coins as it holds: measured on the 10.45 M-coin chain (issue 24), the
 * leaf-by-leaf update of 3.3 M changes into 6.5 M records took 11-17 s,
 * most of it LMDB copying and splitting leaves at random. */
#define REWRITE_RATIO 3u

/* The write transaction's body: it only reads the cache, so running it
 * again after the map grows, or failing, changes nothing here. */
static int flush_txn(struct chain_db_txn *t, void *arg)
{
	struct flush_job *j = arg;
	uint64_t entries;
	int err = chain_db_txn_entries(t, CHAIN_TABLE_COINS, &entries);
	if (!err)
		err = (uint64_t)j->n * REWRITE_RATIO >= entries && j->n ? merge_coins(t, j)
		                                                        : update_coins(t, j);
	if (!err)
		err = chain_db_put(t, CHAIN_TABLE_META, "best", 4, j->c->best.b, 32);
	if (!err && j->extra)
		err = j->extra(t, j->arg);
	return err;
}

int chain_coins_flush(struct chain_coins *c, bool empty,
                      int (*extra)(struct chain_db_txn *t, void *arg), void *arg)
{
	/* After the flush in flight, whose report waits for the owner's poll. */
	flush_join(c);
	if (c->failed)
		return c->failed;
	/* Room in the map first (a record is ~75 bytes in a full leaf, leaves
	 * are left ~60% full by random inserts: 160 bytes a coin is ample). */
	int err = chain_db_reserve(c->db, (uint64_t)c->dirty * 160u);
	if (err)
		return err;
	/* Written in key order: LMDB then fills its pages front to back
	 * instead of touching a random leaf for every coin. */
	struct flush_job j = {.c = c, .extra = extra, .arg = arg};
	j.n = order_in_table(c);
	j.order = c->table;
	sort_order(c, c->table, j.n);
	err = chain_db_write(c->db, flush_txn, &j);
	if (!err && empty)
		drop_all(c);
	else
		table_rebuild(c, !err);
	return err;
}

/* ---- a flush on its own thread ---------------------------------------- */

/*
 * The owner hands the whole cache over (it becomes the snapshot, a fresh
 * table takes the changes that follow), and one thread sorts the
 * snapshot's changes and writes them in one transaction, as the owner's
 * chain_coins_flush would. Nothing is shared but the snapshot, which
 * neither thread changes, and the job, which the owner reads only after
 * pthread_join (or `finished`, which says the join will not wait).
 */
struct flush_run {
	struct chain_coins *snap;
	struct slot *order; /* the snapshot's dirty entries, sorted by the thread */
	size_t n;
	int (*extra)(struct chain_db_txn *t, void *arg);
	void *arg;
	int err;
	bool map_full;
	struct timespec t0;
	uint64_t ns;
	bool inline_run; /* pthread_create failed: run on the owner's thread */
	atomic_bool finished;
};

static void *flush_thread(void *p)
{
	struct flush_run *r = p;
	r->n = order_into(r->snap, r->order);
	sort_order(r->snap, r->order, r->n);
	struct flush_job j = {
	    .c = r->snap, .order = r->order, .n = r->n, .extra = r->extra, .arg = r->arg};
	r->err = chain_db_write_async(r->snap->db, flush_txn, &j, &r->map_full);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->ns = (uint64_t)(t1.tv_sec - r->t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec -
	        (uint64_t)r->t0.tv_nsec;
	atomic_store_explicit(&r->finished, true, memory_order_release);
	return NULL;
}

/* Wait for the flush thread (if any) and settle its job: the snapshot is
 * freed when its changes are in the database, kept as a layer for good
 * when they are not (the owner must stop: nothing can be flushed after). */
static void flush_join(struct chain_coins *c)
{
	struct flush_run *r = c->run;
	if (!r)
		return;
	if (!r->inline_run)
		pthread_join(c->thread, NULL);
	c->run = NULL;
	chain_db_async_end(c->db);
	int err = r->err;
	if (r->map_full) {
		/* The map could not grow under the owner's reads: grow it now,
		 * and write here (rare: chain_db_async_begin reserved room). */
		struct flush_job j = {
		    .c = r->snap, .order = r->order, .n = r->n, .extra = r->extra, .arg = r->arg};
		err = chain_db_write(c->db, flush_txn, &j);
	}
	c->report = (struct chain_coins_flush_report){
	    .done = true, .err = err, .ns = r->ns, .entries = r->n, .map_full = r->map_full};
	xfree(r->order);
	xfree(r);
	if (err) {
		c->failed = err;
		return;
	}
	chain_coins_free(c->snap);
	c->snap = NULL;
	c->snap_bytes = 0;
}

int chain_coins_flush_start(struct chain_coins *c, int (*extra)(struct chain_db_txn *t, void *arg),
                            void *arg)
{
	if (c->run || c->snap)
		return c->failed ? c->failed : CHAIN_EARG;
	struct flush_run *r = xcalloc(1, sizeof(*r));
	struct chain_coins *snap = xmalloc(sizeof(*snap));
	struct slot *table = xcalloc(TABLE_MIN, sizeof(*table));
	struct slot *order = xcalloc(c->dirty ? c->dirty : 1, sizeof(*order));
	int err = CHAIN_ENOMEM;
	if (!r || !snap || !table || !order)
		goto fail;
	/* Room in the map now: the flush thread cannot grow it. */
	if ((err = chain_db_async_begin(c->db, (uint64_t)c->dirty * 160u)))
		goto fail;
	*snap = *c;
	snap->report = (struct chain_coins_flush_report){0};
	c->snap = snap;
	c->snap_bytes = own_memory(snap) + c->dirty * sizeof(*order);
	c->table = table;
	c->mask = TABLE_MIN - 1;
	c->used = c->dirty = c->heap_bytes = 0;
	c->chunks = NULL;
	c->n_chunks = c->chunks_cap = c->n_taken = 0;
	c->free_head = 0;
	*r = (struct flush_run){.snap = snap, .order = order, .extra = extra, .arg = arg};
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	c->run = r;
	if (pthread_create(&c->thread, NULL, flush_thread, r)) {
		/* No thread: the same work here, joined at once. */
		r->inline_run = true;
		flush_thread(r);
	}
	return 0;
fail:
	xfree(order);
	xfree(table);
	xfree(snap);
	xfree(r);
	return err;
}

bool chain_coins_flush_busy(const struct chain_coins *c)
{
	return c->run != NULL;
}

void chain_coins_flush_poll(struct chain_coins *c, bool wait, struct chain_coins_flush_report *out)
{
	if (c->run && (wait || atomic_load_explicit(&c->run->finished, memory_order_acquire)))
		flush_join(c);
	*out = c->report;
	c->report = (struct chain_coins_flush_report){0};
}

bool chain_coins_in_cache(const struct chain_coins *c, const struct proto_outpoint *op)
{
	size_t pos;
	uint32_t tag = op_tag(c, op);
	return table_find(c, op, tag, &pos) || snap_find(c, op, tag);
}

void chain_coins_uncache(struct chain_coins *c, const struct proto_outpoint *op)
{
	size_t pos;
	if (!table_find(c, op, op_tag(c, op), &pos))
		return;
	/* Only a clean copy of what the database holds may be forgotten. */
	if (entry_at(c, c->table[pos].idx1 - 1)->flags == 0)
		entry_erase(c, pos);
}
