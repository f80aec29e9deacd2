/*
 * chain/index.c: the block index: every accepted header in memory.
 *
 * Memory layout (the per-header cost is the point):
 *   nodes  live in slabs of CHAIN_SLAB nodes, allocated whole and never
 *          moved or freed before the index, so a node pointer is stable and
 *          a header costs sizeof(struct chain_node) with no malloc header.
 *          A node's id is its arrival number: slab id / CHAIN_SLAB, slot
 *          id % CHAIN_SLAB.
 *   table  an open-addressing hash table (linear probing) of 32-bit
 *          id + 1 (0 = empty slot), at most 70% full: 4 bytes a slot, so
 *          about 6-12 bytes a header instead of a pointer-chasing node.
 * Block hashes are already uniformly random in their low bytes (the PoW
 * zeros are the high ones), but a peer on a network with trivial PoW
 * (regtest, signet's challenge aside) could grind them; the slot is a
 * keyed mix of two 64-bit words with a random per-index salt, so collisions
 * cannot be prepared in advance. SipHash would cost more per lookup than
 * the whole probe.
 *
 * One thread owns an index (chain/index.h); nothing here locks.
 */
#include "chain/internal.h"

/** Nodes per slab: 1,024 x 168 bytes is 168 KiB, one allocation. */
#define CHAIN_SLAB_SHIFT 10
#define CHAIN_SLAB       (1u << CHAIN_SLAB_SHIFT)
/** Grow the table when it would be fuller than LOAD_NUM / LOAD_DEN. */
#define LOAD_NUM 7
#define LOAD_DEN 10
/** Initial table size (a power of two). */
#define TABLE_MIN 1024u
/** Node record format version (first 4 bytes of a record). */
#define RECORD_VERSION 1u
/* Flags at byte 184 of a version-1 record (zero in records that predate them). */
#define RECORD_FLAG_CHECKSUM 1u

struct chain_index {
	const struct proto_params *params;
	struct chain_node **slabs;
	size_t n_slabs, slabs_cap;
	size_t count; /* nodes, also the next id */
	uint32_t *table;
	size_t table_cap;     /* power of two */
	unsigned table_shift; /* 64 - log2(table_cap) */
	uint64_t salt[2];
	struct chain_node *genesis;
	struct chain_node *best;
	/* one-entry cache of chain_work_of_bits: bits change once per period */
	bool work_cached;
	uint32_t work_bits;
	struct chain_work work_of_bits;
};

static inline struct chain_node *node_at(const struct chain_index *idx, size_t id)
{
	return &idx->slabs[id >> CHAIN_SLAB_SHIFT][id & (CHAIN_SLAB - 1)];
}

static inline size_t slot_of(const struct chain_index *idx, const struct proto_hash *h)
{
	uint64_t a = proto_le64(h->b) ^ idx->salt[0];
	uint64_t b = proto_le64(h->b + 8) ^ idx->salt[1];
	uint64_t x = (a ^ (b << 29 | b >> 35)) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(x >> idx->table_shift);
}

static struct chain_node *lookup(const struct chain_index *idx, const struct proto_hash *h)
{
	size_t mask = idx->table_cap - 1;
	for (size_t i = slot_of(idx, h);; i = (i + 1) & mask) {
		uint32_t v = idx->table[i];
		if (!v)
			return NULL;
		struct chain_node *n = node_at(idx, v - 1);
		if (proto_hash_eq(&n->hash, h))
			return n;
	}
}

static void table_put(struct chain_index *idx, size_t id)
{
	size_t mask = idx->table_cap - 1;
	size_t i = slot_of(idx, &node_at(idx, id)->hash);
	while (idx->table[i])
		i = (i + 1) & mask;
	idx->table[i] = (uint32_t)(id + 1);
}

static int table_resize(struct chain_index *idx, size_t cap)
{
	uint32_t *t = xcalloc(cap, sizeof(*t));
	if (!t)
		return CHAIN_ENOMEM;
	xfree(idx->table);
	idx->table = t;
	idx->table_cap = cap;
	idx->table_shift = 64u - (unsigned)__builtin_ctzll(cap);
	for (size_t id = 0; id < idx->count; id++)
		table_put(idx, id);
	return 0;
}

/* A zeroed node at the next id, not yet in the table. */
static struct chain_node *node_alloc(struct chain_index *idx)
{
	if (idx->count >= UINT32_MAX - 1)
		return NULL;
	/* Make room in the table first so a failure leaves nothing half done. */
	if ((idx->count + 1) * LOAD_DEN > idx->table_cap * LOAD_NUM &&
	    table_resize(idx, idx->table_cap * 2))
		return NULL;
	if (idx->count == idx->n_slabs * CHAIN_SLAB) {
		if (idx->n_slabs == idx->slabs_cap) {
			size_t cap = idx->slabs_cap ? idx->slabs_cap * 2 : 16;
			struct chain_node **s = xreallocarray(idx->slabs, cap, sizeof(*s));
			if (!s)
				return NULL;
			idx->slabs = s;
			idx->slabs_cap = cap;
		}
		struct chain_node *slab = xmalloc(CHAIN_SLAB * sizeof(*slab));
		if (!slab)
			return NULL;
		idx->slabs[idx->n_slabs++] = slab;
	}
	struct chain_node *n = node_at(idx, idx->count);
	memset(n, 0, sizeof(*n));
	return n;
}

/* Make the node allocated last part of the index. */
static void node_commit(struct chain_index *idx)
{
	table_put(idx, idx->count);
	idx->count++;
}

/* Core's GetSkipHeight: clear the lowest set bit (twice for odd heights). */
static inline int32_t invert_lowest_one(int32_t n)
{
	return n & (n - 1);
}

static int32_t skip_height(int32_t height)
{
	if (height < 2)
		return 0;
	return (height & 1) ? invert_lowest_one(invert_lowest_one(height - 1)) + 1
	                    : invert_lowest_one(height);
}

struct chain_node *chain_node_ancestor(struct chain_node *n, int32_t height)
{
	if (!n || height > n->height || height < 0)
		return NULL;
	struct chain_node *walk = n;
	int32_t h = n->height;
	while (h > height) {
		int32_t hs = skip_height(h), hs_prev = skip_height(h - 1);
		/* Take the skip unless the parent's skip lands closer without
		 * overshooting (Core's rule; at most ~110 steps over 2^18). */
		if (walk->skip &&
		    (hs == height || (hs > height && !(hs_prev < hs - 2 && hs_prev >= height)))) {
			walk = walk->skip;
			h = hs;
		} else {
			walk = walk->prev;
			h--;
		}
	}
	return walk;
}

static void node_link(struct chain_node *n, struct chain_node *prev)
{
	n->prev = prev;
	n->height = prev ? prev->height + 1 : 0;
	n->skip = prev ? chain_node_ancestor(prev, skip_height(n->height)) : NULL;
	n->time_max = prev && prev->time_max > n->time ? prev->time_max : n->time;
}

static void work_of(struct chain_index *idx, uint32_t bits, struct chain_work *out)
{
	if (!idx->work_cached || idx->work_bits != bits) {
		chain_work_of_bits(bits, &idx->work_of_bits);
		idx->work_bits = bits;
		idx->work_cached = true;
	}
	*out = idx->work_of_bits;
}

static void header_to_node(const struct proto_block_header *h, const struct proto_hash *hash,
                           struct chain_node *n)
{
	n->hash = *hash;
	n->version = h->version;
	n->time = h->time;
	n->bits = h->bits;
	n->nonce = h->nonce;
	n->merkle_root = h->merkle_root;
}

int chain_index_new(struct chain_index **out, const struct proto_params *params)
{
	struct proto_reader r;
	struct proto_block_header gh;
	*out = NULL;
	proto_reader_init(&r, params->genesis, params->genesis_len);
	if (proto_block_header_decode(&r, &gh))
		return CHAIN_ECORRUPT;
	struct chain_index *idx = xcalloc(1, sizeof(*idx));
	if (!idx)
		return CHAIN_ENOMEM;
	idx->params = params;
	proto_random(idx->salt, sizeof(idx->salt));
	if (table_resize(idx, TABLE_MIN))
		goto oom;
	struct chain_node *g = node_alloc(idx);
	if (!g)
		goto oom;
	struct proto_hash hash;
	proto_block_header_hash(&gh, &hash);
	header_to_node(&gh, &hash, g);
	node_link(g, NULL);
	work_of(idx, g->bits, &g->work);
	g->status = CHAIN_VALID_TREE;
	g->dirty = true;
	node_commit(idx);
	idx->genesis = idx->best = g;
	*out = idx;
	return 0;
oom:
	chain_index_free(idx);
	return CHAIN_ENOMEM;
}

void chain_index_free(struct chain_index *idx)
{
	if (!idx)
		return;
	for (size_t i = 0; i < idx->n_slabs; i++)
		xfree(idx->slabs[i]);
	xfree(idx->slabs);
	xfree(idx->table);
	xfree(idx);
}

const struct proto_params *chain_index_params(const struct chain_index *idx)
{
	return idx->params;
}

struct chain_node *chain_index_find(const struct chain_index *idx, const struct proto_hash *hash)
{
	return lookup(idx, hash);
}

struct chain_node *chain_index_genesis(const struct chain_index *idx)
{
	return idx->genesis;
}

struct chain_node *chain_index_best_header(const struct chain_index *idx)
{
	return idx->best;
}

size_t chain_index_count(const struct chain_index *idx)
{
	return idx->count;
}

size_t chain_index_memory(const struct chain_index *idx)
{
	return sizeof(*idx) + idx->n_slabs * CHAIN_SLAB * sizeof(struct chain_node) +
	       idx->slabs_cap * sizeof(*idx->slabs) + idx->table_cap * sizeof(*idx->table);
}

int chain_index_add_header(struct chain_index *idx, const struct proto_block_header *h, int64_t now,
                           struct chain_node **out, struct chain_state *st)
{
	struct proto_hash hash;
	char hex[65];
	int err;
	if (out)
		*out = NULL;
	proto_block_header_hash(h, &hash);
	struct chain_node *known = lookup(idx, &hash);
	if (known) {
		/* Known: the same answer as the first time, without the checks. */
		if (out)
			*out = known;
		if (chain_node_failed(known)) {
			proto_hash_to_hex(&hash, hex);
			return chain_reject(st, CHAIN_RESULT_CACHED_INVALID, "duplicate-invalid",
			                    "block %s was previously marked invalid", hex);
		}
		return 0;
	}
	if ((err = chain_check_header_hashed(h, &hash, idx->params, st)))
		return err;
	struct chain_node *prev = lookup(idx, &h->prev);
	if (!prev) {
		proto_hash_to_hex(&h->prev, hex);
		return chain_reject(st, CHAIN_RESULT_MISSING_PREV, "prev-blk-not-found",
		                    "prev block %s not found", hex);
	}
	if (chain_node_failed(prev)) {
		proto_hash_to_hex(&h->prev, hex);
		return chain_reject(st, CHAIN_RESULT_INVALID_PREV, "bad-prevblk",
		                    "prev block %s is invalid", hex);
	}
	if ((err = chain_check_header_contextual(h, prev, now, idx->params, st)))
		return err;

	struct chain_node *n = node_alloc(idx);
	if (!n)
		return CHAIN_ENOMEM;
	header_to_node(h, &hash, n);
	node_link(n, prev);
	work_of(idx, n->bits, &n->work);
	chain_work_add(&n->work, &prev->work);
	n->status = CHAIN_VALID_TREE;
	n->dirty = true;
	node_commit(idx);
	/* Strictly more work: on a tie the header seen first stays best. */
	if (chain_work_cmp(&n->work, &idx->best->work) > 0)
		idx->best = n;
	if (out)
		*out = n;
	return 0;
}

int chain_index_insert_loaded(struct chain_index *idx, const struct chain_node *loaded,
                              const struct proto_hash *prev_hash, struct chain_node **out)
{
	struct chain_node *known = lookup(idx, &loaded->hash);
	if (out)
		*out = known;
	if (known == idx->genesis && proto_hash_is_zero(prev_hash)) {
		/* chain_index_new made genesis from the parameters; the database
		 * knows what became of it since (data, undo, validity). */
		known->status = loaded->status;
		known->n_tx = loaded->n_tx;
		known->seq = loaded->seq;
		known->file = loaded->file;
		known->data_pos = loaded->data_pos;
		known->undo_pos = loaded->undo_pos;
		known->has_checksum = loaded->has_checksum;
		known->checksum = loaded->checksum;
		known->dirty = false;
		return 0;
	}
	if (known)
		return CHAIN_EEXIST;
	struct chain_node *prev = lookup(idx, prev_hash);
	if (!prev)
		return CHAIN_ENOTFOUND;
	struct chain_node *n = node_alloc(idx);
	if (!n)
		return CHAIN_ENOMEM;
	*n = *loaded;
	node_link(n, prev);
	n->dirty = false;
	node_commit(idx);
	if (!chain_node_failed(n) && chain_work_cmp(&n->work, &idx->best->work) > 0)
		idx->best = n;
	if (out)
		*out = n;
	return 0;
}

void chain_index_recompute_best(struct chain_index *idx)
{
	/* Core's CBlockIndexWorkComparator order: most work, then lowest
	 * sequence id, then (Core: address) here arrival in this index. */
	struct chain_node *best = idx->genesis;
	for (size_t id = 0; id < idx->count; id++) {
		struct chain_node *n = node_at(idx, id);
		if (chain_node_failed(n))
			continue;
		int c = chain_work_cmp(&n->work, &best->work);
		if (c > 0 || (c == 0 && n->seq < best->seq))
			best = n;
	}
	idx->best = best;
}

int chain_index_foreach(struct chain_index *idx, int (*fn)(struct chain_node *n, void *arg),
                        void *arg)
{
	for (size_t id = 0; id < idx->count; id++) {
		int rc = fn(node_at(idx, id), arg);
		if (rc)
			return rc;
	}
	return 0;
}

int64_t chain_node_mtp(const struct chain_node *n)
{
	int64_t t[CHAIN_MTP_SPAN];
	int k = 0;
	for (; k < CHAIN_MTP_SPAN && n; k++, n = n->prev) {
		/* insertion sort as we go: at most 11 values */
		int64_t v = n->time;
		int j = k;
		while (j > 0 && t[j - 1] > v) {
			t[j] = t[j - 1];
			j--;
		}
		t[j] = v;
	}
	return k ? t[k / 2] : 0;
}

void chain_node_header(const struct chain_node *n, struct proto_block_header *out)
{
	out->version = n->version;
	if (n->prev)
		out->prev = n->prev->hash;
	else
		memset(&out->prev, 0, sizeof(out->prev));
	out->merkle_root = n->merkle_root;
	out->time = n->time;
	out->bits = n->bits;
	out->nonce = n->nonce;
}

struct chain_node *chain_node_fork(struct chain_node *a, struct chain_node *b)
{
	if (!a || !b)
		return NULL;
	if (a->height > b->height)
		a = chain_node_ancestor(a, b->height);
	else if (b->height > a->height)
		b = chain_node_ancestor(b, a->height);
	while (a != b && a && b) {
		a = a->prev;
		b = b->prev;
	}
	return a == b ? a : NULL;
}

size_t chain_node_locator(const struct chain_node *n, struct proto_hash *out, size_t cap)
{
	size_t k = 0;
	int32_t step = 1;
	/* chain_node_ancestor takes a mutable node only because it returns one. */
	struct chain_node *walk = (struct chain_node *)n;
	if (cap > CHAIN_LOCATOR_MAX)
		cap = CHAIN_LOCATOR_MAX;
	while (walk && k < cap) {
		out[k++] = walk->hash;
		if (walk->height == 0)
			break;
		int32_t h = walk->height - step;
		walk = chain_node_ancestor(walk, h > 0 ? h : 0);
		if (k > 10)
			step *= 2;
	}
	/* Cut short by cap: genesis must still end the list (Core's always does). */
	if (k == cap && k > 0 && walk && walk->height != 0) {
		struct chain_node *g = chain_node_ancestor(walk, 0);
		if (g)
			out[k - 1] = g->hash;
	}
	return k;
}

/* ---- database records ------------------------------------------------- */

/*
 * Record layout, little-endian, CHAIN_NODE_RECORD_SIZE bytes:
 *   0 format version (4)   4 hash (32)       36 prev hash (32)
 *  68 height               72 status         76 version      80 time
 *  84 bits                 88 nonce          92 merkle root (32)
 * 124 chain work (32, least significant limb first)
 * 156 time_max  160 n_tx  164 seq  168 file  172 data_pos  176 undo_pos
 * 180 reserved, zero (12)
 */
void chain_node_encode(const struct chain_node *n, uint8_t out[CHAIN_NODE_RECORD_SIZE])
{
	memset(out, 0, CHAIN_NODE_RECORD_SIZE);
	proto_put_le32(out, RECORD_VERSION);
	memcpy(out + 4, n->hash.b, 32);
	if (n->prev)
		memcpy(out + 36, n->prev->hash.b, 32);
	proto_put_le32(out + 68, (uint32_t)n->height);
	proto_put_le32(out + 72, n->status);
	proto_put_le32(out + 76, (uint32_t)n->version);
	proto_put_le32(out + 80, n->time);
	proto_put_le32(out + 84, n->bits);
	proto_put_le32(out + 88, n->nonce);
	memcpy(out + 92, n->merkle_root.b, 32);
	for (int i = 0; i < 4; i++)
		proto_put_le64(out + 124 + 8 * i, n->work.limb[i]);
	proto_put_le32(out + 156, n->time_max);
	proto_put_le32(out + 160, n->n_tx);
	proto_put_le32(out + 164, n->seq);
	proto_put_le32(out + 168, (uint32_t)n->file);
	proto_put_le32(out + 172, n->data_pos);
	proto_put_le32(out + 176, n->undo_pos);
	if (n->has_checksum) {
		proto_put_le32(out + 180, n->checksum);
		proto_put_le32(out + 184, RECORD_FLAG_CHECKSUM);
	}
}

int chain_node_decode(const uint8_t *rec, size_t len, struct chain_node *out,
                      struct proto_hash *prev_hash)
{
	if (len != CHAIN_NODE_RECORD_SIZE || proto_le32(rec) != RECORD_VERSION)
		return CHAIN_ECORRUPT;
	memset(out, 0, sizeof(*out));
	memcpy(out->hash.b, rec + 4, 32);
	memcpy(prev_hash->b, rec + 36, 32);
	out->height = (int32_t)proto_le32(rec + 68);
	out->status = proto_le32(rec + 72);
	out->version = (int32_t)proto_le32(rec + 76);
	out->time = proto_le32(rec + 80);
	out->bits = proto_le32(rec + 84);
	out->nonce = proto_le32(rec + 88);
	memcpy(out->merkle_root.b, rec + 92, 32);
	for (int i = 0; i < 4; i++)
		out->work.limb[i] = proto_le64(rec + 124 + 8 * i);
	out->time_max = proto_le32(rec + 156);
	out->n_tx = proto_le32(rec + 160);
	out->seq = proto_le32(rec + 164);
	out->file = (int32_t)proto_le32(rec + 168);
	out->data_pos = proto_le32(rec + 172);
	out->undo_pos = proto_le32(rec + 176);
	if (proto_le32(rec + 184) & RECORD_FLAG_CHECKSUM) {
		out->checksum = proto_le32(rec + 180);
		out->has_checksum = true;
	}
	if (out->height < 0)
		return CHAIN_ECORRUPT;
	/* As Core's LoadBlockIndexGuts, the hash is the header's own: a
	 * record whose fields were damaged cannot pass for its block. */
	struct proto_block_header h;
	struct proto_hash check;
	h.version = out->version;
	h.prev = *prev_hash;
	h.merkle_root = out->merkle_root;
	h.time = out->time;
	h.bits = out->bits;
	h.nonce = out->nonce;
	proto_block_header_hash(&h, &check);
	if (!proto_hash_eq(&check, &out->hash))
		return CHAIN_ECORRUPT;
	return 0;
}
