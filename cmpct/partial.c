/*
 * cmpct/partial.c: rebuilding a block from a cmpctblock (Core's
 * PartiallyDownloadedBlock::InitData and FillBlock).
 *
 * The short ids go into an open-addressed table keyed by a random
 * multiplier chosen per block: the ids are the peer's choice, and a table
 * indexed by their raw low bits would let a peer make every lookup walk
 * the whole table. Core guards its unordered_map by failing a block whose
 * buckets grow past 12; with a secret multiplier no peer can aim at a
 * bucket, so no such test is needed, and an equal pair is still a
 * collision (CMPCT_EFAILED), as Core.
 *
 * Matching records candidate pointers only; the serializations of what
 * matched are copied once the walk is over (a slot can still lose its
 * candidate to a second one with the same short id), and the candidates
 * need live only for the call.
 */
#include "cmpct/cmpct.h"

/* Slot states. */
enum { SLOT_MISSING = 0, SLOT_PREFILLED, SLOT_FOUND, SLOT_CONFLICT };

/* A table entry: the short id in the low 48 bits, the slot index plus one
 * in the high 16 (so 0 is an empty entry; slots are at most 65,534). */
#define ENTRY_KEY(e)   ((e)&PROTO_CMPCT_SHORTID_MASK)
#define ENTRY_INDEX(e) ((uint32_t)((e) >> 48) - 1u)

const char *cmpct_strerror(int err)
{
	switch (err) {
	case CMPCT_OK:
		return "success";
	case CMPCT_EINVALID:
		return "invalid compact block";
	case CMPCT_EFAILED:
		return "compact block could not be reconstructed";
	case CMPCT_ENOMEM:
		return "out of memory";
	default:
		return "unknown cmpct error";
	}
}

void cmpct_partial_init_empty(struct cmpct_partial *pb)
{
	memset(pb, 0, sizeof(*pb));
	proto_writer_init(&pb->store);
}

void cmpct_partial_release(struct cmpct_partial *pb)
{
	xfree(pb->slots);
	xfree(pb->ids);
	xfree(pb->table);
	xfree(pb->found);
	proto_writer_release(&pb->store);
	cmpct_partial_init_empty(pb);
}

static inline uint32_t table_pos(const struct cmpct_partial *pb, uint64_t shortid)
{
	/* Multiplicative hashing: the high bits of id times an odd secret. */
	return (uint32_t)((shortid * pb->salt) >> 32) & (pb->table_cap - 1);
}

/* Insert; false when the id is already there (a collision). */
static bool table_put(struct cmpct_partial *pb, uint64_t shortid, uint32_t index)
{
	uint32_t mask = pb->table_cap - 1;
	for (uint32_t pos = table_pos(pb, shortid);; pos = (pos + 1) & mask) {
		uint64_t e = pb->table[pos];
		if (!e) {
			pb->table[pos] = shortid | (uint64_t)(index + 1) << 48;
			return true;
		}
		if (ENTRY_KEY(e) == shortid)
			return false;
	}
}

/* The slot of a short id, or -1. */
static int64_t table_get(const struct cmpct_partial *pb, uint64_t shortid)
{
	uint32_t mask = pb->table_cap - 1;
	for (uint32_t pos = table_pos(pb, shortid);; pos = (pos + 1) & mask) {
		uint64_t e = pb->table[pos];
		if (!e)
			return -1;
		if (ENTRY_KEY(e) == shortid)
			return ENTRY_INDEX(e);
	}
}

/* Room for n slots, all missing, and a table for n_short ids; found[]
 * as long as the slots. */
static int prepare(struct cmpct_partial *pb, uint32_t n, uint32_t n_short)
{
	if (n > pb->slots_cap) {
		struct cmpct_slot *s = xreallocarray(NULL, n, sizeof(*s));
		struct cmpct_candidate *f = xreallocarray(NULL, n, sizeof(*f));
		struct cmpct_ids *ids = xreallocarray(NULL, n, sizeof(*ids));
		if (!s || !f || !ids) {
			xfree(s);
			xfree(f);
			xfree(ids);
			return CMPCT_ENOMEM;
		}
		xfree(pb->slots);
		xfree(pb->found);
		xfree(pb->ids);
		pb->slots = s;
		pb->found = f;
		pb->ids = ids;
		pb->slots_cap = pb->found_cap = n;
	}
	memset(pb->slots, 0, (size_t)n * sizeof(*pb->slots));
	memset(pb->found, 0, (size_t)n * sizeof(*pb->found));
	/* At most half full, so a probe ends quickly. */
	uint32_t cap = 16;
	while (cap < 2 * n_short)
		cap *= 2;
	if (cap > pb->table_cap) {
		uint64_t *t = xreallocarray(NULL, cap, sizeof(*t));
		if (!t)
			return CMPCT_ENOMEM;
		xfree(pb->table);
		pb->table = t;
	}
	pb->table_cap = cap;
	memset(pb->table, 0, (size_t)cap * sizeof(*pb->table));
	proto_random(&pb->salt, sizeof(pb->salt));
	pb->salt |= 1;
	pb->store.len = 0;
	pb->store.err = 0;
	return 0;
}

/* Append tx's serialization to the store as slot i's. */
static int keep(struct cmpct_partial *pb, uint32_t i, const struct proto_tx *tx)
{
	size_t start = pb->store.len;
	proto_tx_encode(tx, &pb->store);
	if (pb->store.err)
		return pb->store.err == PROTO_ENOMEM ? CMPCT_ENOMEM : CMPCT_EFAILED;
	if (pb->store.len - start > UINT32_MAX || pb->store.len > UINT32_MAX)
		return CMPCT_EFAILED;
	pb->slots[i].off = (uint32_t)start;
	pb->slots[i].len = (uint32_t)(pb->store.len - start);
	/* A mempool's transactions have their ids cached: keep them, and the
	 * fill hashes only the merkle tree, not 2,000 transactions again. */
	if (tx->ids_valid) {
		pb->ids[i].txid = tx->txid;
		pb->ids[i].wtxid = tx->wtxid;
		pb->slots[i].has_ids = true;
	}
	return 0;
}

/* The prefilled transactions into their slots (Core's checks, in order). */
static int take_prefilled(struct cmpct_partial *pb, const struct proto_cmpctblock *cb)
{
	int32_t last = -1;
	for (uint32_t i = 0; i < cb->n_prefilled; i++) {
		const struct proto_prefilled *pf = &cb->prefilled[i];
		if (pf->tx.n_in == 0 && pf->tx.n_out == 0)
			return CMPCT_EINVALID; /* Core: tx->IsNull() */
		last += (int32_t)pf->index + 1;
		if (last > (int32_t)PROTO_CMPCT_MAX_INDEX)
			return CMPCT_EINVALID;
		/* Past every short id and prefilled so far: a transaction
		 * that has neither. */
		if ((uint32_t)last > cb->n_short + i)
			return CMPCT_EINVALID;
		int err = keep(pb, (uint32_t)last, &pf->tx);
		if (err)
			return err;
		pb->slots[last].state = SLOT_PREFILLED;
	}
	return 0;
}

/* Each short id to the next slot not prefilled. */
static int map_shortids(struct cmpct_partial *pb, const struct proto_cmpctblock *cb)
{
	uint32_t offset = 0;
	for (uint32_t i = 0; i < cb->n_short; i++) {
		while (i + offset < pb->n_tx && pb->slots[i + offset].state == SLOT_PREFILLED)
			offset++;
		if (i + offset >= pb->n_tx)
			return CMPCT_EINVALID; /* cannot happen after take_prefilled's checks */
		if (!table_put(pb, cb->shortids[i], i + offset))
			return CMPCT_EFAILED; /* a short-id collision inside the block */
	}
	return 0;
}

/* Walk the candidates (Core's two loops, mempool then extra, as one). */
static void walk(struct cmpct_partial *pb, const struct proto_cmpctblock *cb, cmpct_next_fn next,
                 void *ctx)
{
	uint8_t key[16];
	struct cmpct_candidate c;
	proto_cmpct_shortid_key(&cb->hdr, cb->nonce, key);
	while (pb->mempool_count < cb->n_short && next(ctx, &c)) {
		int64_t at = table_get(pb, proto_cmpct_shortid(key, c.wtxid));
		if (at < 0)
			continue;
		struct cmpct_slot *s = &pb->slots[at];
		struct cmpct_candidate *f = &pb->found[at];
		if (s->state == SLOT_MISSING) {
			s->state = SLOT_FOUND;
			*f = c;
			pb->mempool_count++;
			pb->extra_count += c.extra;
		} else if (s->state == SLOT_FOUND && !proto_hash_eq(f->wtxid, c.wtxid)) {
			/* Two transactions for one id: ask for it rather than
			 * guess (the same one seen twice is no conflict). Core
			 * leaves the slot taken, so a third candidate cannot
			 * fill it either. */
			s->state = SLOT_CONFLICT;
			pb->mempool_count--;
			pb->extra_count -= f->extra;
		}
	}
}

int cmpct_partial_init(struct cmpct_partial *pb, const struct proto_cmpctblock *cb,
                       cmpct_next_fn next, void *ctx)
{
	int err;
	if (cb->hdr.bits == 0 || (cb->n_short == 0 && cb->n_prefilled == 0))
		return CMPCT_EINVALID;
	if ((uint64_t)cb->n_short + cb->n_prefilled > CMPCT_MAX_BLOCK_TXS)
		return CMPCT_EINVALID;
	if (pb->started)
		return CMPCT_EINVALID;

	pb->n_tx = cb->n_short + cb->n_prefilled;
	pb->n_missing = 0;
	pb->prefilled_count = pb->mempool_count = pb->extra_count = 0;
	if ((err = prepare(pb, pb->n_tx, cb->n_short)) || (err = take_prefilled(pb, cb)))
		return err;
	pb->prefilled_count = cb->n_prefilled;
	if ((err = map_shortids(pb, cb)))
		return err;
	walk(pb, cb, next, ctx);

	for (uint32_t i = 0; i < pb->n_tx; i++) {
		struct cmpct_slot *s = &pb->slots[i];
		if (s->state == SLOT_FOUND) {
			if ((err = keep(pb, i, pb->found[i].tx)))
				return err;
		} else if (s->state != SLOT_PREFILLED) {
			s->len = 0;
			pb->n_missing++;
		}
		pb->found[i].tx = NULL;
		pb->found[i].wtxid = NULL;
	}
	pb->hdr = cb->hdr;
	pb->started = true;
	return 0;
}

int cmpct_partial_request(const struct cmpct_partial *pb, struct proto_getblocktxn *g)
{
	g->n = 0;
	proto_block_header_hash(&pb->hdr, &g->block);
	if (proto_getblocktxn_reserve(g, pb->n_missing))
		return PROTO_ENOMEM;
	for (uint32_t i = 0; i < pb->n_tx; i++)
		if (!cmpct_partial_have(pb, i))
			g->indexes[g->n++] = (uint16_t)i;
	return 0;
}

bool cmpct_block_mutated(struct proto_block *b, bool check_witness_root)
{
	struct proto_hash root;
	bool dup = false;
	if (proto_block_merkle_root(b, &root, &dup) || !proto_hash_eq(&root, &b->hdr.merkle_root) ||
	    dup)
		return true;
	if (b->n_tx == 0 || !proto_tx_is_coinbase(&b->txs[0])) {
		/* A 64-byte transaction could pose as an inner merkle node. */
		for (uint32_t i = 0; i < b->n_tx; i++)
			if (b->txs[i].stripped_size == 64)
				return true;
		return false;
	}
	if (check_witness_root) {
		int pos = proto_block_witness_commitment_index(b);
		if (pos >= 0) {
			const struct proto_tx *cbtx = &b->txs[0];
			struct proto_witness_iter it;
			struct proto_span item;
			if (cbtx->vin[0].wit_count != 1)
				return true; /* "bad-witness-nonce-size" */
			proto_witness_iter_init(&it, cbtx, &cbtx->vin[0]);
			if (!proto_witness_iter_next(&it, &item) || item.len != 32)
				return true;
			uint8_t pair[64];
			if (proto_block_witness_merkle_root(b, (struct proto_hash *)pair))
				return true;
			memcpy(pair + 32, item.data, 32);
			uint8_t commit[32];
			proto_sha256d(pair, sizeof(pair), commit);
			const uint8_t *script = proto_txout_script(cbtx, &cbtx->vout[pos]);
			return memcmp(commit, script + 6, 32) != 0; /* "bad-witness-merkle-match" */
		}
	}
	/* No witness data without a commitment to it ("unexpected-witness"). */
	for (uint32_t i = 0; i < b->n_tx; i++)
		if (b->txs[i].has_witness)
			return true;
	return false;
}

int cmpct_partial_fill(struct cmpct_partial *pb, const struct proto_tx *missing, uint32_t n_missing,
                       bool segwit_active, struct proto_writer *out, struct proto_block *block)
{
	if (!pb->started)
		return CMPCT_EINVALID;
	pb->started = false; /* no second fill, whatever happens (Core) */
	if (n_missing != pb->n_missing)
		return CMPCT_EINVALID;

	size_t start = out->len;
	proto_block_header_encode(&pb->hdr, out);
	proto_write_compact(out, pb->n_tx);
	uint32_t next_missing = 0;
	for (uint32_t i = 0; i < pb->n_tx; i++) {
		const struct cmpct_slot *s = &pb->slots[i];
		if (s->len)
			proto_write_bytes(out, pb->store.buf + s->off, s->len);
		else
			proto_tx_encode(&missing[next_missing++], out);
	}
	if (out->err)
		return out->err == PROTO_ENOMEM ? CMPCT_ENOMEM : CMPCT_EFAILED;
	/* Every piece was a decoded transaction, so this decodes; if it does
	 * not, the block is not what the header promised. */
	int err = proto_block_decode(out->buf + start, out->len - start, block, NULL);
	if (err)
		return err == PROTO_ENOMEM ? CMPCT_ENOMEM : CMPCT_EFAILED;
	for (uint32_t i = 0; i < pb->n_tx; i++) {
		if (!pb->slots[i].has_ids)
			continue;
		struct proto_tx *tx = &block->txs[i];
		tx->txid = pb->ids[i].txid;
		tx->wtxid = pb->ids[i].wtxid;
		tx->ids_valid = tx->txid_valid = true;
	}
	if (cmpct_block_mutated(block, segwit_active))
		return CMPCT_EFAILED; /* possibly a short-id collision */
	return 0;
}
