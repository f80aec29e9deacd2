/*
 * index/gcs.c: BIP158's basic block filter: the element set of a block, the
 * Golomb-coded set built from it, BIP157's filter header, and the set read
 * back (the decode check and a match, as Core's GCSFilter). Pure; any
 * thread. Checked filter for filter against Bitcoin Core's
 * src/test/data/blockfilters.json (tests/unit/test_index_gcs.c).
 *
 * Speed (bench/bench_gcs.c beside Core's GCSFilter* rows): the bits go
 * through a 64-bit register both ways instead of one bit at a time, the
 * quotient's run of ones is counted with one count-leading-zeros, and the
 * hashed values are radix-sorted on the bits N*M needs.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "index/index.h"

/* Order by length then bytes, so equal scripts sit together and are kept once
 * (Core's ElementSet is a set of byte vectors: a script twice counts once). */
static int elem_cmp(const void *a, const void *b)
{
	const struct index_gcs_elem *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->len ? memcmp(x->p, y->p, x->len) : 0;
}

/* BIP158's exclusions: an empty script and an OP_RETURN one are never
 * spent, so a light client never needs to match them. */
static bool wanted(const uint8_t *p, uint32_t len)
{
	return len > 0 && p[0] != 0x6a;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* An element's place in [0, range): its SipHash's high word of the 128-bit
 * product (Core's FastRange64). */
static uint64_t hash_to_range(const uint8_t key[16], const uint8_t *p, size_t len, uint64_t range)
{
	uint64_t h = proto_siphash(key, p, len);
	return (uint64_t)(((unsigned __int128)h * range) >> 64);
}

/* ---- sorting the hashed values --------------------------------------------- */

#define RADIX_BITS 12
#define RADIX_SIZE (1u << RADIX_BITS)

/* Sort v[0..n) whose values are below `range`, with tmp of n values: least
 * significant digit first, only as many digits as range has bits (three
 * for 65,536 elements, whose range has 36, where a comparison sort makes
 * sixteen passes), every digit's counts taken in one read. */
static void sort_values(uint64_t *v, uint64_t *tmp, size_t n, uint64_t range)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) {
			uint64_t x = v[i];
			size_t k = i;
			for (; k > 0 && v[k - 1] > x; k--)
				v[k] = v[k - 1];
			v[k] = x;
		}
		return;
	}
	int bits = range > 1 ? 64 - __builtin_clzll(range - 1) : 1;
	int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
	uint32_t *count = xcalloc((size_t)passes * RADIX_SIZE, sizeof(*count));
	if (!count) {
		/* Out of memory: the same order, more slowly. */
		qsort(v, n, sizeof(*v), u64_cmp);
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < passes; p++)
			count[p * RADIX_SIZE + ((v[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))]++;
	uint64_t *src = v, *dst = tmp;
	for (int p = 0; p < passes; p++) {
		uint32_t *c = count + p * RADIX_SIZE, sum = 0;
		for (size_t d = 0; d < RADIX_SIZE; d++) {
			uint32_t k = c[d];
			c[d] = sum;
			sum += k;
		}
		int shift = p * RADIX_BITS;
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i] >> shift) & (RADIX_SIZE - 1)]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	xfree(count);
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

/* ---- writing ------------------------------------------------------------------ */

/* Bits written most significant first, as BIP158's BitStreamWriter, into
 * bytes reserved beforehand: `acc` holds the `n` (< 8) bits not yet out. */
struct bit_out {
	uint8_t *p;
	uint64_t acc;
	int n;
};

/* nbits <= 32 of v (the bits above them ignored). */
static inline void put_bits(struct bit_out *b, uint64_t v, int nbits)
{
	b->acc = (b->acc << nbits) | (v & ((1ull << nbits) - 1));
	b->n += nbits;
	while (b->n >= 8) {
		b->n -= 8;
		*b->p++ = (uint8_t)(b->acc >> b->n);
	}
}

/* Golomb-Rice: the quotient in unary (ones ended by a zero), then P bits. */
static inline void golomb_rice_put(struct bit_out *b, uint64_t x)
{
	uint64_t q = x >> INDEX_BASIC_P;
	while (q >= 31) {
		put_bits(b, ~0ull, 31);
		q -= 31;
	}
	/* q ones and the zero that ends them. */
	put_bits(b, ((1ull << q) - 1) << 1, (int)q + 1);
	put_bits(b, x, INDEX_BASIC_P);
}

int index_gcs_encode(const uint8_t key[16], const struct index_gcs_elem *e, size_t n,
                     struct proto_writer *w)
{
	uint64_t *v = n ? xmalloc(2 * n * sizeof(*v)) : NULL;
	if (n && !v)
		return INDEX_ENOMEM;
	uint64_t range = (uint64_t)n * INDEX_BASIC_M;
	for (size_t i = 0; i < n; i++)
		v[i] = hash_to_range(key, e[i].p, e[i].len, range);
	if (n)
		sort_values(v, v + n, n, range);
	proto_write_compact(w, n);
	/* Every value costs P + 1 bits and one more per 2^P of its delta: the
	 * deltas add up to the last value, so the length is known before. */
	uint64_t bits = (uint64_t)n * (INDEX_BASIC_P + 1);
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		bits += (v[i] - last) >> INDEX_BASIC_P;
		last = v[i];
	}
	size_t bytes = (size_t)((bits + 7) / 8);
	if (n && !w->err && proto_writer_reserve(w, bytes) == 0) {
		struct bit_out bo = {.p = w->buf + w->len};
		last = 0;
		for (size_t i = 0; i < n; i++) {
			golomb_rice_put(&bo, v[i] - last);
			last = v[i];
		}
		if (bo.n)
			*bo.p++ = (uint8_t)(bo.acc << (8 - bo.n));
		w->len += bytes;
	}
	xfree(v);
	return INDEX_OK;
}

int index_filter_basic(const struct proto_block *b, const struct proto_hash *block_hash,
                       const uint8_t *const *spent, const uint32_t *spent_len, size_t n_spent,
                       struct proto_writer *w)
{
	size_t cap = n_spent, n = 0;
	for (uint32_t t = 0; t < b->n_tx; t++)
		cap += b->txs[t].n_out;
	struct index_gcs_elem *e = cap ? xcalloc(cap, sizeof(*e)) : NULL;
	if (cap && !e)
		return INDEX_ENOMEM;
	for (uint32_t t = 0; t < b->n_tx; t++) {
		const struct proto_tx *tx = &b->txs[t];
		for (uint32_t o = 0; o < tx->n_out; o++) {
			const uint8_t *p = proto_txout_script(tx, &tx->vout[o]);
			if (wanted(p, tx->vout[o].script_len))
				e[n++] = (struct index_gcs_elem){p, tx->vout[o].script_len};
		}
	}
	for (size_t i = 0; i < n_spent; i++)
		if (wanted(spent[i], spent_len[i]))
			e[n++] = (struct index_gcs_elem){spent[i], spent_len[i]};
	if (n > 1)
		qsort(e, n, sizeof(*e), elem_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || elem_cmp(&e[u - 1], &e[i]) != 0)
			e[u++] = e[i];
	/* Keyed by the block hash's first 16 bytes (Core's GetUint64(0), (1)). */
	int err = index_gcs_encode(block_hash->b, e, u, w);
	xfree(e);
	return err;
}

/* ---- reading ------------------------------------------------------------------ */

/* Bits read most significant first: `buf` holds `n` valid bits at its top;
 * the bits below them are zero or the next ones of the stream. */
struct bit_in {
	const uint8_t *p, *end;
	uint64_t buf;
	int n;
};

static inline uint64_t be64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return __builtin_bswap64(x);
}

static inline void refill(struct bit_in *b)
{
	if (b->end - b->p >= 8) {
		/* Eight bytes at once; only the whole ones that fit are counted. */
		b->buf |= be64(b->p) >> b->n;
		b->p += (63 - b->n) >> 3;
		b->n |= 56;
		return;
	}
	while (b->n <= 56 && b->p < b->end) {
		b->buf |= (uint64_t)*b->p++ << (56 - b->n);
		b->n += 8;
	}
}

static inline void consume(struct bit_in *b, int k)
{
	b->buf = k < 64 ? b->buf << k : 0;
	b->n -= k;
}

/* One Golomb-Rice value into *x; false when the stream ends first. */
static inline bool golomb_rice_get(struct bit_in *b, uint64_t *x)
{
	uint64_t q = 0;
	for (;;) {
		refill(b);
		if (b->n == 0)
			return false;
		uint64_t inv = ~b->buf;
		int ones = inv ? __builtin_clzll(inv) : 64;
		if (ones < b->n) {
			q += (uint64_t)ones;
			consume(b, ones + 1);
			break;
		}
		/* Every valid bit is a one: the run goes on in the next bytes. */
		q += (uint64_t)b->n;
		consume(b, b->n);
	}
	refill(b);
	if (b->n < INDEX_BASIC_P)
		return false;
	uint64_t r = b->buf >> (64 - INDEX_BASIC_P);
	consume(b, INDEX_BASIC_P);
	*x = (q << INDEX_BASIC_P) + r;
	return true;
}

/* The count N at the head of filter f; the bits after it in *b. */
static int open_filter(const uint8_t *f, size_t len, uint64_t *n, struct bit_in *b)
{
	struct proto_reader r;
	proto_reader_init(&r, f, len);
	if (proto_read_compact(&r, PROTO_MAX_SIZE, n) || *n > UINT32_MAX)
		return INDEX_ECORRUPT;
	*b = (struct bit_in){.p = f + proto_reader_offset(&r), .end = f + len};
	return INDEX_OK;
}

int index_gcs_check(const uint8_t *f, size_t len, uint32_t *n_out)
{
	uint64_t n, x;
	struct bit_in b;
	if (open_filter(f, len, &n, &b))
		return INDEX_ECORRUPT;
	const uint8_t *start = b.p;
	for (uint64_t i = 0; i < n; i++)
		if (!golomb_rice_get(&b, &x))
			return INDEX_ECORRUPT;
	/* Core reads a byte when it needs a bit: every byte read, none left. */
	size_t used_bits = (size_t)(b.p - start) * 8 - (size_t)b.n;
	if ((used_bits + 7) / 8 != (size_t)(b.end - start))
		return INDEX_ECORRUPT;
	if (n_out)
		*n_out = (uint32_t)n;
	return INDEX_OK;
}

int index_gcs_match(const uint8_t key[16], const uint8_t *f, size_t len, const uint8_t *elem,
                    size_t elem_len, bool *match)
{
	uint64_t n, x, value = 0;
	struct bit_in b;
	*match = false;
	if (open_filter(f, len, &n, &b))
		return INDEX_ECORRUPT;
	uint64_t want = hash_to_range(key, elem, elem_len, n * INDEX_BASIC_M);
	/* Sorted: the walk ends at the first value not below the query. */
	for (uint64_t i = 0; i < n; i++) {
		if (!golomb_rice_get(&b, &x))
			return INDEX_ECORRUPT;
		value += x;
		if (value >= want) {
			*match = value == want;
			break;
		}
	}
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
