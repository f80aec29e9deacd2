/*
 * chain/view.c: the coins one block touches, over the coins cache.
 *
 * Lookups go through a small open-addressing table keyed by a salted
 * SipHash of the outpoint; entries stay in first-touched order so they are
 * applied to the cache in a deterministic order. Fetched scripts are copied
 * into chunks that never move: script-check jobs on worker threads may be
 * reading earlier scripts while later inputs are still being fetched.
 */
#include <string.h>

#include "chain/internal.h"

struct chain_view_chunk {
	struct chain_view_chunk *next;
	size_t used, cap;
	uint8_t data[];
};

void chain_view_init(struct chain_view *v, struct chain_coins *base)
{
	memset(v, 0, sizeof(*v));
	v->base = base;
	proto_random(v->key, sizeof(v->key));
}

static void free_chunks(struct chain_view_chunk *c)
{
	while (c) {
		struct chain_view_chunk *next = c->next;
		xfree(c);
		c = next;
	}
}

void chain_view_release(struct chain_view *v)
{
	struct chain_coins *base = v->base;
	xfree(v->entries);
	xfree(v->slots);
	free_chunks(v->chunks);
	chain_view_init(v, base);
}

void chain_view_reset(struct chain_view *v)
{
	v->n = 0;
	if (v->slots)
		memset(v->slots, 0, v->n_slots * sizeof(*v->slots));
	/* Keep the first chunk (the usual case fits in it), free the rest. */
	if (v->chunks) {
		free_chunks(v->chunks->next);
		v->chunks->next = NULL;
		v->chunks->used = 0;
	}
}

static size_t slot_of(const struct chain_view *v, const struct proto_outpoint *op)
{
	uint8_t k[36];
	memcpy(k, op->txid.b, 32);
	memcpy(k + 32, &op->n, 4);
	return (size_t)proto_siphash(v->key, k, sizeof(k)) & (v->n_slots - 1);
}

static bool op_eq(const struct proto_outpoint *a, const struct proto_outpoint *b)
{
	return a->n == b->n && proto_hash_eq(&a->txid, &b->txid);
}

static int rehash(struct chain_view *v, size_t n_slots)
{
	uint32_t *slots = xcalloc(n_slots, sizeof(*slots));
	if (!slots)
		return CHAIN_ENOMEM;
	xfree(v->slots);
	v->slots = slots;
	v->n_slots = n_slots;
	for (size_t i = 0; i < v->n; i++) {
		size_t s = slot_of(v, &v->entries[i].op);
		while (v->slots[s])
			s = (s + 1) & (n_slots - 1);
		v->slots[s] = (uint32_t)i + 1;
	}
	return 0;
}

int chain_view_reserve(struct chain_view *v, size_t n)
{
	if (n > UINT32_MAX / 4)
		return CHAIN_EOVERFLOW;
	if (n > v->cap) {
		struct chain_view_entry *e = xreallocarray(v->entries, n, sizeof(*e));
		if (!e)
			return CHAIN_ENOMEM;
		v->entries = e;
		v->cap = n;
	}
	/* Load factor at most one half. */
	size_t want = 16;
	while (want < 2 * n)
		want *= 2;
	if (want > v->n_slots)
		return rehash(v, want);
	return 0;
}

static struct chain_view_entry *find(const struct chain_view *v, const struct proto_outpoint *op,
                                     size_t *slot)
{
	if (!v->n_slots)
		return NULL;
	size_t s = slot_of(v, op);
	while (v->slots[s]) {
		struct chain_view_entry *e = &v->entries[v->slots[s] - 1];
		if (op_eq(&e->op, op))
			return e;
		s = (s + 1) & (v->n_slots - 1);
	}
	if (slot)
		*slot = s;
	return NULL;
}

/* A new entry for op, which is not in the view. */
static int insert(struct chain_view *v, const struct proto_outpoint *op,
                  struct chain_view_entry **out)
{
	if (v->n + 1 > v->cap || 2 * (v->n + 1) > v->n_slots) {
		size_t want = v->cap ? v->cap * 2 : 64;
		int err = chain_view_reserve(v, want);
		if (err)
			return err;
	}
	size_t s = slot_of(v, op);
	while (v->slots[s])
		s = (s + 1) & (v->n_slots - 1);
	struct chain_view_entry *e = &v->entries[v->n];
	memset(e, 0, sizeof(*e));
	e->op = *op;
	v->slots[s] = (uint32_t)++v->n;
	*out = e;
	return 0;
}

static uint8_t *arena_copy(struct chain_view *v, const uint8_t *p, size_t n)
{
	struct chain_view_chunk *c = v->chunks;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHAIN_VIEW_CHUNK ? n : CHAIN_VIEW_CHUNK;
		struct chain_view_chunk *nc = xmalloc(sizeof(*nc) + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		/* A full chunk goes behind the new one; reset keeps only the head. */
		nc->next = c;
		v->chunks = nc;
		c = nc;
	}
	uint8_t *dst = c->data + c->used;
	if (n)
		memcpy(dst, p, n);
	c->used += n;
	return dst;
}

int chain_view_fetch(struct chain_view *v, const struct proto_outpoint *op,
                     struct chain_view_entry **out)
{
	struct chain_view_entry *e = find(v, op, NULL);
	if (e) {
		if (e->spent)
			return CHAIN_ENOTFOUND;
		*out = e;
		return 0;
	}
	struct chain_coin coin;
	int err = chain_coins_get(v->base, op, &coin);
	if (err)
		return err;
	/* Copy before anything else calls into the cache (the borrow ends then). */
	const uint8_t *script = arena_copy(v, coin.script, coin.script_len);
	if (!script)
		return CHAIN_ENOMEM;
	err = insert(v, op, &e);
	if (err)
		return err;
	e->value = coin.value;
	e->height = coin.height;
	e->coinbase = coin.coinbase;
	e->script = script;
	e->script_len = coin.script_len;
	*out = e;
	return 0;
}

int chain_view_create(struct chain_view *v, const struct proto_outpoint *op, int64_t value,
                      const uint8_t *script, uint32_t script_len, uint32_t height, bool coinbase)
{
	if (chain_script_unspendable(script, script_len))
		return 0;
	struct chain_view_entry *e = find(v, op, NULL);
	if (!e) {
		int err = insert(v, op, &e);
		if (err)
			return err;
	}
	/* Over an entry already here (a duplicate coinbase of the BIP30
	 * exception blocks) the new output replaces the old, as in Core. */
	e->value = value;
	e->height = height;
	e->coinbase = coinbase;
	e->created = true;
	e->spent = false;
	e->script = script;
	e->script_len = script_len;
	return 0;
}

int chain_view_apply(struct chain_view *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct chain_view_entry *e = &v->entries[i];
		int err = 0;
		if (e->created && !e->spent) {
			struct chain_coin c = {
			    .value = e->value,
			    .height = e->height,
			    .coinbase = e->coinbase,
			    .script_len = e->script_len,
			    .script = e->script,
			};
			/* Core's AddCoins: a coinbase may overwrite (BIP30's two exceptions). */
			err = chain_coins_add(v->base, &e->op, &c, e->coinbase);
		} else if (!e->created && e->spent) {
			err = chain_coins_spend(v->base, &e->op);
		}
		if (err)
			return err;
	}
	return 0;
}
