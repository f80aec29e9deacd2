/*
 * proto/msg_cmpct.c: BIP152's cmpctblock, getblocktxn and blocktxn, and
 * short transaction ids.
 *
 *   cmpctblock  header[80] | nonce u64le | n CompactSize | n * shortid[6] |
 *               m CompactSize | m * (index gap CompactSize | tx with witness)
 *   getblocktxn blockhash[32] | n CompactSize | n * index gap CompactSize
 *   blocktxn    blockhash[32] | n CompactSize | n * tx with witness
 *
 * Core reads each vector whole and checks its limits afterwards; here the
 * same limits are checked as soon as the count is read, which rejects
 * exactly the same messages without first allocating for a count that
 * must fail. Transaction arrays grow as transactions decode (a count is
 * backed by at least 10 bytes a transaction, Core's smallest
 * serialization, but a slot costs far more than 10 bytes).
 */
#include "proto/proto.h"

/* Core's smallest serializable transaction: version, empty vin, empty
 * vout, locktime (MIN_SERIALIZABLE_TRANSACTION_WEIGHT / 4). */
#define MIN_TX_WIRE 10u
/* Slots a transaction array starts with when it must grow. */
#define TX_MIN_RESERVE 16u

void proto_cmpct_shortid_key(const struct proto_block_header *hdr, uint64_t nonce, uint8_t key[16])
{
	uint8_t buf[PROTO_BLOCK_HEADER_SIZE + 8];
	uint8_t digest[32];
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	proto_block_header_encode(hdr, &w);
	proto_write_u64le(&w, nonce);
	proto_sha256(buf, sizeof(buf), digest);
	/* k0 and k1 are the digest's first two little-endian words, and
	 * SipHash reads its 16-byte key as exactly those two words. */
	memcpy(key, digest, 16);
}

uint64_t proto_cmpct_shortid(const uint8_t key[16], const struct proto_hash *wtxid)
{
	/* libsodium's SipHash-2-4; a written-out 32-byte version (Core's
	 * SipHashUint256) measured no faster here. */
	return proto_siphash(key, wtxid->b, sizeof(wtxid->b)) & PROTO_CMPCT_SHORTID_MASK;
}

/* Grow an array of transactions-with-something to hold n, initialising
 * each new slot's tx; keeps what is there. */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t elem, size_t tx_off)
{
	if (n <= *cap)
		return 0;
	uint32_t ncap = *cap > UINT32_MAX / 2 ? UINT32_MAX : *cap * 2;
	if (ncap < TX_MIN_RESERVE)
		ncap = TX_MIN_RESERVE;
	if (ncap < n)
		ncap = n;
	uint8_t *a = xreallocarray(*arr, ncap, elem);
	if (!a)
		return PROTO_ENOMEM;
	for (uint32_t i = *cap; i < ncap; i++)
		proto_tx_init((struct proto_tx *)(a + (size_t)i * elem + tx_off));
	*arr = a;
	*cap = ncap;
	return 0;
}

int proto_cmpctblock_reserve_prefilled(struct proto_cmpctblock *cb, uint32_t n)
{
	void *a = cb->prefilled;
	int err = grow(&a, &cb->prefilled_cap, n, sizeof(*cb->prefilled),
	               offsetof(struct proto_prefilled, tx));
	cb->prefilled = a;
	return err;
}

int proto_cmpctblock_reserve_shortids(struct proto_cmpctblock *cb, uint32_t n)
{
	if (n <= cb->short_cap)
		return 0;
	uint64_t *v = xreallocarray(cb->shortids, n, sizeof(*v));
	if (!v)
		return PROTO_ENOMEM;
	cb->shortids = v;
	cb->short_cap = n;
	return 0;
}

int proto_cmpctblock_decode(struct proto_reader *r, struct proto_cmpctblock *cb)
{
	uint32_t n, m;
	int err;

	cb->n_short = cb->n_prefilled = 0;
	if ((err = proto_block_header_decode(r, &cb->hdr)) ||
	    (err = proto_read_u64le(r, &cb->nonce)))
		return err;
	if ((err = proto_read_count(r, PROTO_CMPCT_MAX_TXS, PROTO_CMPCT_SHORTID_SIZE, &n)))
		return err;
	/* Fresh storage, not realloc: the old ids are dead. */
	if (n > cb->short_cap) {
		uint64_t *v = xreallocarray(NULL, n, sizeof(*v));
		if (!v)
			return PROTO_ENOMEM;
		xfree(cb->shortids);
		cb->shortids = v;
		cb->short_cap = n;
	}
	const uint8_t *p = r->p;
	for (uint32_t i = 0; i < n; i++, p += PROTO_CMPCT_SHORTID_SIZE)
		cb->shortids[i] =
		    (uint64_t)proto_le32(p) | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40;
	r->p = p;

	/* A prefilled entry is a one-byte gap and a transaction at least. */
	if ((err = proto_read_count(r, PROTO_CMPCT_MAX_TXS - n, 1 + MIN_TX_WIRE, &m)))
		goto fail;
	for (uint32_t i = 0; i < m; i++) {
		uint64_t gap;
		if ((err = proto_read_compact(r, PROTO_CMPCT_MAX_INDEX, &gap)) ||
		    (err = proto_cmpctblock_reserve_prefilled(cb, i + 1)))
			goto fail;
		cb->prefilled[i].index = (uint16_t)gap;
		if ((err = proto_tx_decode(r, &cb->prefilled[i].tx)))
			goto fail;
	}
	cb->n_short = n;
	cb->n_prefilled = m;
	return 0;
fail:
	cb->n_short = cb->n_prefilled = 0;
	return err;
}

void proto_cmpctblock_encode(const struct proto_cmpctblock *cb, struct proto_writer *w)
{
	proto_block_header_encode(&cb->hdr, w);
	proto_write_u64le(w, cb->nonce);
	proto_write_compact(w, cb->n_short);
	if (proto_writer_reserve(w, (size_t)cb->n_short * PROTO_CMPCT_SHORTID_SIZE))
		return;
	for (uint32_t i = 0; i < cb->n_short; i++) {
		uint64_t id = cb->shortids[i];
		if (id > PROTO_CMPCT_SHORTID_MASK) {
			if (!w->err)
				w->err = PROTO_EVALUE;
			return;
		}
		uint8_t b[8];
		proto_put_le64(b, id);
		proto_write_bytes(w, b, PROTO_CMPCT_SHORTID_SIZE);
	}
	proto_write_compact(w, cb->n_prefilled);
	for (uint32_t i = 0; i < cb->n_prefilled; i++) {
		proto_write_compact(w, cb->prefilled[i].index);
		proto_tx_encode(&cb->prefilled[i].tx, w);
	}
}

void proto_cmpctblock_release(struct proto_cmpctblock *cb)
{
	for (uint32_t i = 0; i < cb->prefilled_cap; i++)
		proto_tx_release(&cb->prefilled[i].tx);
	xfree(cb->prefilled);
	xfree(cb->shortids);
	memset(cb, 0, sizeof(*cb));
}

int proto_getblocktxn_reserve(struct proto_getblocktxn *g, uint32_t n)
{
	if (n <= g->cap)
		return 0;
	uint16_t *v = xreallocarray(g->indexes, n, sizeof(*v));
	if (!v)
		return PROTO_ENOMEM;
	g->indexes = v;
	g->cap = n;
	return 0;
}

int proto_getblocktxn_decode(struct proto_reader *r, struct proto_getblocktxn *g)
{
	uint32_t n;
	int err;

	g->n = 0;
	if ((err = proto_read_hash(r, &g->block)))
		return err;
	/* Strictly increasing indexes of at most 65,535: 65,536 of them at most. */
	if ((err = proto_read_count(r, PROTO_CMPCT_MAX_INDEX + 1u, 1, &n)))
		return err;
	if (n > g->cap) {
		uint16_t *v = xreallocarray(NULL, n, sizeof(*v));
		if (!v)
			return PROTO_ENOMEM;
		xfree(g->indexes);
		g->indexes = v;
		g->cap = n;
	}
	/* Core's DifferenceFormatter: the next index is the previous plus
	 * one plus the gap, and must fit the 16-bit type. */
	uint64_t shift = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *save = r->p;
		uint64_t gap;
		if ((err = proto_read_compact(r, UINT64_MAX, &gap)))
			return err;
		if (gap > PROTO_CMPCT_MAX_INDEX || shift + gap > PROTO_CMPCT_MAX_INDEX) {
			r->p = save;
			return PROTO_EVALUE;
		}
		shift += gap;
		g->indexes[i] = (uint16_t)shift;
		shift++;
	}
	g->n = n;
	return 0;
}

void proto_getblocktxn_encode(const struct proto_getblocktxn *g, struct proto_writer *w)
{
	proto_write_hash(w, &g->block);
	proto_write_compact(w, g->n);
	uint32_t shift = 0;
	for (uint32_t i = 0; i < g->n; i++) {
		if (g->indexes[i] < shift) {
			if (!w->err)
				w->err = PROTO_EVALUE;
			return;
		}
		proto_write_compact(w, g->indexes[i] - shift);
		shift = (uint32_t)g->indexes[i] + 1;
	}
}

void proto_getblocktxn_release(struct proto_getblocktxn *g)
{
	xfree(g->indexes);
	memset(g, 0, sizeof(*g));
}

int proto_blocktxn_reserve(struct proto_blocktxn *b, uint32_t n)
{
	void *a = b->txs;
	int err = grow(&a, &b->cap, n, sizeof(*b->txs), 0);
	b->txs = a;
	return err;
}

int proto_blocktxn_decode(struct proto_reader *r, struct proto_blocktxn *b)
{
	uint32_t n;
	int err;

	b->n = 0;
	if ((err = proto_read_hash(r, &b->block)) ||
	    (err = proto_read_count(r, UINT32_MAX, MIN_TX_WIRE, &n)))
		return err;
	for (uint32_t i = 0; i < n; i++) {
		if ((err = proto_blocktxn_reserve(b, i + 1)) ||
		    (err = proto_tx_decode(r, &b->txs[i])))
			return err;
	}
	b->n = n;
	return 0;
}

void proto_blocktxn_encode(const struct proto_blocktxn *b, struct proto_writer *w)
{
	proto_write_hash(w, &b->block);
	proto_write_compact(w, b->n);
	for (uint32_t i = 0; i < b->n; i++)
		proto_tx_encode(&b->txs[i], w);
}

void proto_blocktxn_release(struct proto_blocktxn *b)
{
	for (uint32_t i = 0; i < b->cap; i++)
		proto_tx_release(&b->txs[i]);
	xfree(b->txs);
	memset(b, 0, sizeof(*b));
}
