/*
 * index/gcs.c: BIP158's basic block filter: the element set of a block, the
 * Golomb-coded set built from it, and BIP157's filter header. Pure; any
 * thread. Checked filter for filter against Bitcoin Core's
 * src/test/data/blockfilters.json (tests/unit/test_index_gcs.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "index/index.h"

/* One element: a script's bytes, borrowed from the block or the undo data. */
struct elem {
	const uint8_t *p;
	uint32_t len;
};

/* Order by length then bytes, so equal scripts sit together and are kept once
 * (Core's ElementSet is a set of byte vectors: a script twice counts once). */
static int elem_cmp(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->len ? memcmp(x->p, y->p, x->len) : 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* BIP158's exclusions: an empty script and an OP_RETURN one are never
 * spent, so a light client never needs to match them. */
static bool wanted(const uint8_t *p, uint32_t len)
{
	return len > 0 && p[0] != 0x6a;
}

/* A bit stream written most significant bit first, as BIP158's BitStreamWriter. */
struct bits {
	struct proto_writer *w;
	uint8_t cur;
	int n; /* bits in cur */
};

static void bits_put(struct bits *b, uint64_t v, int nbits)
{
	while (nbits > 0) {
		int take = 8 - b->n < nbits ? 8 - b->n : nbits;
		uint8_t chunk = (uint8_t)((v >> (nbits - take)) & ((1u << take) - 1));
		b->cur = (uint8_t)(b->cur | (chunk << (8 - b->n - take)));
		b->n += take;
		nbits -= take;
		if (b->n == 8) {
			proto_write_u8(b->w, b->cur);
			b->cur = 0;
			b->n = 0;
		}
	}
}

static void bits_flush(struct bits *b)
{
	if (b->n)
		proto_write_u8(b->w, b->cur);
	b->cur = 0;
	b->n = 0;
}

/* Golomb-Rice: the quotient in unary (ones ended by a zero), then P bits. */
static void golomb_rice_put(struct bits *b, uint64_t x)
{
	uint64_t q = x >> INDEX_BASIC_P;
	while (q > 0) {
		int nbits = q <= 64 ? (int)q : 64;
		bits_put(b, ~(uint64_t)0, nbits);
		q -= (uint64_t)nbits;
	}
	bits_put(b, 0, 1);
	bits_put(b, x, INDEX_BASIC_P);
}

int index_filter_basic(const struct proto_block *b, const struct proto_hash *block_hash,
                       const uint8_t *const *spent, const uint32_t *spent_len, size_t n_spent,
                       struct proto_writer *w)
{
	size_t cap = n_spent, n = 0;
	for (uint32_t t = 0; t < b->n_tx; t++)
		cap += b->txs[t].n_out;
	struct elem *e = cap ? xcalloc(cap, sizeof(*e)) : NULL;
	uint64_t *v = cap ? xcalloc(cap, sizeof(*v)) : NULL;
	if (cap && (!e || !v)) {
		xfree(e);
		xfree(v);
		return INDEX_ENOMEM;
	}
	for (uint32_t t = 0; t < b->n_tx; t++) {
		const struct proto_tx *tx = &b->txs[t];
		for (uint32_t o = 0; o < tx->n_out; o++) {
			const uint8_t *p = proto_txout_script(tx, &tx->vout[o]);
			if (wanted(p, tx->vout[o].script_len))
				e[n++] = (struct elem){p, tx->vout[o].script_len};
		}
	}
	for (size_t i = 0; i < n_spent; i++)
		if (wanted(spent[i], spent_len[i]))
			e[n++] = (struct elem){spent[i], spent_len[i]};
	if (n > 1)
		qsort(e, n, sizeof(*e), elem_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || elem_cmp(&e[u - 1], &e[i]) != 0)
			e[u++] = e[i];

	/* Each element's SipHash (keyed by the block hash's first 16 bytes)
	 * mapped onto [0, N*M) by the high word of a 128-bit product (Core's
	 * FastRange64), sorted, and the deltas coded. */
	uint64_t range = (uint64_t)u * INDEX_BASIC_M;
	for (size_t i = 0; i < u; i++) {
		uint64_t h = proto_siphash(block_hash->b, e[i].p, e[i].len);
		v[i] = (uint64_t)(((unsigned __int128)h * range) >> 64);
	}
	if (u > 1)
		qsort(v, u, sizeof(*v), u64_cmp);
	proto_write_compact(w, u);
	struct bits bs = {.w = w};
	uint64_t last = 0;
	for (size_t i = 0; i < u; i++) {
		golomb_rice_put(&bs, v[i] - last);
		last = v[i];
	}
	bits_flush(&bs);
	xfree(e);
	xfree(v);
	return INDEX_OK;
}

void index_filter_header(const uint8_t *filter, size_t len, const struct proto_hash *prev,
                         struct proto_hash *out)
{
	uint8_t buf[64];
	proto_sha256d(filter, len, buf);
	memcpy(buf + 32, prev->b, 32);
	proto_sha256d(buf, sizeof(buf), out->b);
}

const char *index_strerror(int err)
{
	switch (err) {
	case INDEX_OK:
		return "success";
	case INDEX_ENOMEM:
		return "out of memory";
	case INDEX_ENOTFOUND:
		return "not found";
	case INDEX_EDB:
		return "index database error";
	case INDEX_EIO:
		return "cannot create the index directory";
	case INDEX_ECORRUPT:
		return "index entry does not decode";
	case INDEX_ECHAIN:
		return "cannot read a block or its undo data";
	default:
		return "unknown index error";
	}
}
