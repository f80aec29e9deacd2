/*
 * proto/tx.c: the transaction codec (legacy and BIP144 witness forms), txid
 * and wtxid, and the witness iterator.
 *
 * Decoding is one pass. Input and output counts come before their items, so
 * those go straight into their arrays. The total size of the scripts is only
 * known at the end, so script bytes are staged, packed back to back, in
 * 512-byte buffers from the global script free list (taken a batch per lock,
 * linked through their first word); a script larger than one buffer is not
 * staged but remembered by its offset in the input, which outlives the call.
 * At the end one exactly-sized blob is allocated (or the old one reused), the
 * staged bytes and the large scripts are copied in, in wire order, and the
 * buffers go back in one call per 64.
 *
 * Blob layout: every scriptSig, then every scriptPubKey, then every
 * non-empty witness stack (its items with their length prefixes, without the
 * item count), each in wire order.
 *
 * Blocks do not come through here: proto/block.c decodes all of a block's
 * transactions into block-wide storage with its own two-pass walker. The two
 * must accept exactly the same bytes; the unit tests and fuzz_block check
 * that every block transaction decodes the same way standalone.
 */
#include "proto/proto.h"

/* Bytes of a staging buffer left after its link word. */
#define STAGE_DATA (PROTO_SCRIPT_BUF_SIZE - sizeof(void *))
/* Buffers fetched per free-list lock. */
#define STAGE_BATCH 16u
/* Buffers returned per free-list lock. */
#define STAGE_PUT_BATCH 64u
/* Bytes buffered before each SHA-256 update while hashing a tx. */
#define HASH_BUF 2048u
/* A script longer than this skips staging (one free-list buffer). */
#define STAGE_MAX_SCRIPT PROTO_SCRIPT_BUF_SIZE

struct stage_buf {
	struct stage_buf *next;
	uint8_t data[STAGE_DATA];
};
_Static_assert(sizeof(struct stage_buf) == PROTO_SCRIPT_BUF_SIZE,
               "staging buffer is a script buffer");

/* Script bytes staged during one decode. */
struct stage {
	struct stage_buf *head, *tail;
	size_t tail_used;
	void *spare[STAGE_BATCH]; /* fetched, not yet used */
	size_t n_spare;
	size_t total;       /* bytes that will land in the blob */
	const uint8_t *end; /* end of input: bounds how many buffers are still needed */
};

static void stage_init(struct stage *st, const uint8_t *end)
{
	st->head = st->tail = NULL;
	st->tail_used = 0;
	st->n_spare = 0;
	st->total = 0;
	st->end = end;
}

/* Return every staging buffer to the free list. */
static void stage_release(struct stage *st)
{
	void *batch[STAGE_PUT_BATCH];
	size_t n = 0;
	struct stage_buf *b = st->head;
	while (b) {
		struct stage_buf *next = b->next;
		batch[n++] = b;
		if (n == STAGE_PUT_BATCH) {
			proto_freelist_put_many(PROTO_FREELIST_SCRIPT, batch, n);
			n = 0;
		}
		b = next;
	}
	if (n)
		proto_freelist_put_many(PROTO_FREELIST_SCRIPT, batch, n);
	if (st->n_spare)
		proto_freelist_put_many(PROTO_FREELIST_SCRIPT, st->spare, st->n_spare);
	st->head = st->tail = NULL;
	st->n_spare = 0;
}

/* Append a fresh buffer to the chain, refilling the spares when empty.
 * `src` is where the bytes still to be staged start in the input, so the
 * batch asks for no more buffers than the rest of the input could fill. */
static int stage_grow(struct stage *st, const uint8_t *src)
{
	if (!st->n_spare) {
		size_t left = (size_t)(st->end - src);
		size_t want = left / STAGE_DATA + 1;
		if (want > STAGE_BATCH)
			want = STAGE_BATCH;
		st->n_spare = proto_freelist_get_many(PROTO_FREELIST_SCRIPT, st->spare, want);
		if (!st->n_spare)
			return PROTO_ENOMEM;
	}
	struct stage_buf *b = st->spare[--st->n_spare];
	b->next = NULL;
	if (st->tail)
		st->tail->next = b;
	else
		st->head = b;
	st->tail = b;
	st->tail_used = 0;
	return 0;
}

/* Stage a small script. */
static inline int stage_put(struct stage *st, const uint8_t *src, size_t len)
{
	st->total += len;
	while (len) {
		if (!st->tail || st->tail_used == STAGE_DATA) {
			int err = stage_grow(st, src);
			if (err)
				return err;
		}
		size_t room = STAGE_DATA - st->tail_used;
		size_t n = len < room ? len : room;
		memcpy(st->tail->data + st->tail_used, src, n);
		st->tail_used += n;
		src += n;
		len -= n;
	}
	return 0;
}

/* Sequential reader over the staged bytes. */
struct stage_cursor {
	const struct stage_buf *b;
	size_t pos;
};

static void stage_take(struct stage_cursor *c, uint8_t *dst, size_t len)
{
	while (len) {
		if (c->pos == STAGE_DATA) {
			c->b = c->b->next;
			c->pos = 0;
		}
		size_t room = STAGE_DATA - c->pos;
		size_t n = len < room ? len : room;
		memcpy(dst, c->b->data + c->pos, n);
		c->pos += n;
		dst += n;
		len -= n;
	}
}

/* ---------------------------------------------------------------------- */
/* Inputs and outputs                                                      */

static inline int read_txin(struct proto_reader *r, struct proto_txin *in, const uint8_t **script)
{
	if (proto_reader_left(r) < 36)
		return PROTO_ETRUNC;
	memcpy(in->prevout.txid.b, r->p, 32);
	in->prevout.n = proto_le32(r->p + 32);
	r->p += 36;
	int err = proto_read_varspan(r, script, &in->script_len);
	if (err)
		return err;
	if (proto_reader_left(r) < 4)
		return PROTO_ETRUNC;
	in->sequence = proto_le32(r->p);
	r->p += 4;
	return 0;
}

static inline int read_txout(struct proto_reader *r, struct proto_txout *o, const uint8_t **script)
{
	if (proto_reader_left(r) < 8)
		return PROTO_ETRUNC;
	o->value = (int64_t)proto_le64(r->p);
	r->p += 8;
	return proto_read_varspan(r, script, &o->script_len);
}

int proto_txin_decode(struct proto_reader *r, struct proto_txin *in, struct proto_span *script)
{
	const uint8_t *s;
	int err = read_txin(r, in, &s);
	if (err)
		return err;
	in->script_off = 0;
	in->wit_off = in->wit_len = in->wit_count = 0;
	script->data = s;
	script->len = in->script_len;
	return 0;
}

int proto_txout_decode(struct proto_reader *r, struct proto_txout *out, struct proto_span *script)
{
	const uint8_t *s;
	int err = read_txout(r, out, &s);
	if (err)
		return err;
	out->script_off = 0;
	script->data = s;
	script->len = out->script_len;
	return 0;
}

int proto_outpoint_decode(struct proto_reader *r, struct proto_outpoint *o)
{
	if (proto_reader_left(r) < 36)
		return PROTO_ETRUNC;
	memcpy(o->txid.b, r->p, 32);
	o->n = proto_le32(r->p + 32);
	r->p += 36;
	return 0;
}

/* Writers into a raw buffer known to be large enough. */
static inline uint8_t *put_compact(uint8_t *p, uint64_t v)
{
	/* Early returns, not proto_compact_encode: measured faster on the
	 * SerializeTx/WriteTxOut benchmarks. */
	if (v < 0xfd) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v <= 0xffff) {
		p[0] = 0xfd;
		p[1] = (uint8_t)v;
		p[2] = (uint8_t)(v >> 8);
		return p + 3;
	}
	if (v <= 0xffffffffULL) {
		p[0] = 0xfe;
		proto_put_le32(p + 1, (uint32_t)v);
		return p + 5;
	}
	p[0] = 0xff;
	proto_put_le64(p + 1, v);
	return p + 9;
}

static inline uint8_t *put_txin(uint8_t *p, const struct proto_txin *in, const uint8_t *script,
                                uint32_t len)
{
	memcpy(p, in->prevout.txid.b, 32);
	proto_put_le32(p + 32, in->prevout.n);
	p = put_compact(p + 36, len);
	if (len)
		memcpy(p, script, len);
	p += len;
	proto_put_le32(p, in->sequence);
	return p + 4;
}

static inline uint8_t *put_txout(uint8_t *p, const struct proto_txout *o, const uint8_t *script,
                                 uint32_t len)
{
	proto_put_le64(p, (uint64_t)o->value);
	p = put_compact(p + 8, len);
	if (len)
		memcpy(p, script, len);
	return p + len;
}

void proto_outpoint_encode(const struct proto_outpoint *o, struct proto_writer *w)
{
	if (proto_writer_reserve(w, 36))
		return;
	memcpy(w->buf + w->len, o->txid.b, 32);
	proto_put_le32(w->buf + w->len + 32, o->n);
	w->len += 36;
}

void proto_txin_encode(const struct proto_txin *in, const uint8_t *script, uint32_t script_len,
                       struct proto_writer *w)
{
	size_t n = 40 + proto_compact_size(script_len) + script_len;
	if (proto_writer_reserve(w, n))
		return;
	put_txin(w->buf + w->len, in, script, script_len);
	w->len += n;
}

void proto_txout_encode(const struct proto_txout *o, const uint8_t *script, uint32_t script_len,
                        struct proto_writer *w)
{
	size_t n = 8 + proto_compact_size(script_len) + script_len;
	if (proto_writer_reserve(w, n))
		return;
	put_txout(w->buf + w->len, o, script, script_len);
	w->len += n;
}

/* ---------------------------------------------------------------------- */
/* Storage                                                                 */

/* A decoded tx's blob is never NULL, so blob + offset is always defined;
 * after a failed decode too (then with blob_len 0). */
static const uint8_t empty_blob[1];

void proto_tx_init(struct proto_tx *tx)
{
	memset(tx, 0, sizeof(*tx));
}

void proto_tx_release(struct proto_tx *tx)
{
	if (!tx->borrowed) {
		xfree(tx->vin);
		xfree(tx->vout);
		xfree(tx->blob_mut);
	}
	proto_tx_init(tx);
}

/* Forget everything but owned storage. A tx borrowed from a block gives
 * the block's storage back first: it is not ours to reuse. Also the state a
 * failed decode leaves, whatever it got through, so nobody reads
 * half-filled arrays or a blob pointer that an allocation failure cleared. */
static void tx_reset(struct proto_tx *tx)
{
	if (tx->borrowed) {
		proto_tx_init(tx);
		return;
	}
	tx->n_in = tx->n_out = 0;
	tx->blob = tx->blob_mut ? tx->blob_mut : empty_blob;
	tx->blob_len = 0;
	tx->has_witness = false;
	tx->size = tx->stripped_size = 0;
	tx->ids_valid = tx->txid_valid = false;
}

/* Grow the input or output array to hold n elements. The old contents are
 * not needed, so free then allocate instead of realloc's copy. */
static int grow_vin(struct proto_tx *tx, uint32_t n)
{
	if (n <= tx->vin_cap)
		return 0;
	xfree(tx->vin);
	tx->vin_cap = 0;
	tx->vin = xreallocarray(NULL, n, sizeof(*tx->vin));
	if (!tx->vin)
		return PROTO_ENOMEM;
	tx->vin_cap = n;
	return 0;
}

static int grow_vout(struct proto_tx *tx, uint32_t n)
{
	if (n <= tx->vout_cap)
		return 0;
	xfree(tx->vout);
	tx->vout_cap = 0;
	tx->vout = xreallocarray(NULL, n, sizeof(*tx->vout));
	if (!tx->vout)
		return PROTO_ENOMEM;
	tx->vout_cap = n;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Decoding                                                                */

/* Remember a script: stage it, or for a large one record where it is in the
 * input (t0 is the first byte of the tx) for the copy at the end. */
static inline int note_script(struct stage *st, const uint8_t *t0, const uint8_t *s, uint32_t len,
                              uint32_t *off)
{
	if (len <= STAGE_MAX_SCRIPT)
		return stage_put(st, s, len);
	proto_freelist_note_bypass(PROTO_FREELIST_SCRIPT);
	st->total += len;
	*off = (uint32_t)(s - t0);
	return 0;
}

/* Copy one script into the blob at *pos and point *off at it. */
static inline void place(struct stage_cursor *c, const uint8_t *t0, uint8_t *blob, uint32_t *pos,
                         uint32_t *off, uint32_t len)
{
	if (len > STAGE_MAX_SCRIPT)
		memcpy(blob + *pos, t0 + *off, len);
	else if (len)
		stage_take(c, blob + *pos, len);
	*off = *pos;
	*pos += len;
}

/* The witness section: per input an item count, then the items. Returns
 * the section's byte length in *wit_bytes. */
static int read_witnesses(struct proto_reader *r, struct proto_tx *tx, struct stage *st,
                          const uint8_t *t0, size_t *wit_bytes)
{
	const uint8_t *w0 = r->p;
	bool any = false;
	for (uint32_t i = 0; i < tx->n_in; i++) {
		struct proto_txin *in = &tx->vin[i];
		uint32_t n;
		int err = proto_read_count(r, UINT32_MAX, 1, &n);
		if (err)
			return err;
		const uint8_t *s = r->p;
		for (uint32_t k = 0; k < n; k++) {
			const uint8_t *item;
			uint32_t len;
			err = proto_read_varspan(r, &item, &len);
			if (err)
				return err;
		}
		size_t span = (size_t)(r->p - s);
		if ((size_t)(r->p - t0) > UINT32_MAX)
			return PROTO_EOVERSIZE;
		in->wit_count = n;
		in->wit_len = (uint32_t)span;
		in->wit_off = 0;
		if (n) {
			any = true;
			err = note_script(st, t0, s, (uint32_t)span, &in->wit_off);
			if (err)
				return err;
		}
	}
	/* Core: a witness flag with nothing but empty stacks is
	 * "Superfluous witness record". */
	if (!any) {
		r->p = w0;
		return PROTO_EVALUE;
	}
	*wit_bytes = (size_t)(r->p - w0);
	return 0;
}

static int tx_decode(struct proto_reader *r, struct proto_tx *tx, struct stage *st)
{
	const uint8_t *t0 = r->p;
	uint8_t flag = 0;
	size_t wit_bytes = 0;
	int err;

	if (proto_reader_left(r) < 4)
		return PROTO_ETRUNC;
	tx->version = (int32_t)proto_le32(r->p);
	r->p += 4;

	/* BIP144: an input count of zero is the marker, a flag byte follows. */
	uint32_t n_in = 0, n_out = 0;
	if (r->p < r->end && *r->p == 0) {
		const uint8_t *marker = r->p++;
		if (r->p >= r->end) {
			r->p = marker;
			return PROTO_ETRUNC;
		}
		flag = *r->p;
		/* Core reads a zero flag as a transaction with no inputs and
		 * no outputs; any flag other than 1 is "Unknown transaction
		 * optional data". */
		if (flag > 1)
			return PROTO_EVALUE;
		r->p++;
		if (flag == 0)
			goto locktime;
	}

	err = proto_read_count(r, UINT32_MAX, PROTO_MIN_TXIN_SIZE, &n_in);
	if (err)
		return err;
	err = grow_vin(tx, n_in);
	if (err)
		return err;
	for (uint32_t i = 0; i < n_in; i++) {
		struct proto_txin *in = &tx->vin[i];
		const uint8_t *s;
		err = read_txin(r, in, &s);
		if (err)
			return err;
		if ((size_t)(r->p - t0) > UINT32_MAX)
			return PROTO_EOVERSIZE;
		in->wit_off = in->wit_len = in->wit_count = 0;
		err = note_script(st, t0, s, in->script_len, &in->script_off);
		if (err)
			return err;
	}
	/* Visible to the witness reader; reset by the caller on error. */
	tx->n_in = n_in;

	err = proto_read_count(r, UINT32_MAX, PROTO_MIN_TXOUT_SIZE, &n_out);
	if (err)
		return err;
	err = grow_vout(tx, n_out);
	if (err)
		return err;
	for (uint32_t i = 0; i < n_out; i++) {
		struct proto_txout *o = &tx->vout[i];
		const uint8_t *s;
		err = read_txout(r, o, &s);
		if (err)
			return err;
		if ((size_t)(r->p - t0) > UINT32_MAX)
			return PROTO_EOVERSIZE;
		err = note_script(st, t0, s, o->script_len, &o->script_off);
		if (err)
			return err;
	}
	tx->n_out = n_out;

	if (flag) {
		err = read_witnesses(r, tx, st, t0, &wit_bytes);
		if (err)
			return err;
	}

locktime:
	if (proto_reader_left(r) < 4)
		return PROTO_ETRUNC;
	tx->locktime = proto_le32(r->p);
	r->p += 4;
	if ((size_t)(r->p - t0) > UINT32_MAX)
		return PROTO_EOVERSIZE;

	/* One exactly-sized blob, reused when the old one is big enough. */
	if (st->total > tx->blob_cap) {
		xfree(tx->blob_mut);
		tx->blob_mut = NULL;
		tx->blob = empty_blob;
		tx->blob_cap = 0;
		tx->blob_mut = xmalloc(st->total);
		if (!tx->blob_mut)
			return PROTO_ENOMEM;
		tx->blob_cap = (uint32_t)st->total;
	}
	tx->blob = tx->blob_mut ? tx->blob_mut : empty_blob;
	tx->blob_len = (uint32_t)st->total;

	struct stage_cursor c = {st->head, 0};
	uint8_t *blob = tx->blob_mut;
	uint32_t pos = 0;
	for (uint32_t i = 0; i < n_in; i++)
		place(&c, t0, blob, &pos, &tx->vin[i].script_off, tx->vin[i].script_len);
	for (uint32_t i = 0; i < n_out; i++)
		place(&c, t0, blob, &pos, &tx->vout[i].script_off, tx->vout[i].script_len);
	if (flag) {
		for (uint32_t i = 0; i < n_in; i++) {
			struct proto_txin *in = &tx->vin[i];
			if (in->wit_count)
				place(&c, t0, blob, &pos, &in->wit_off, in->wit_len);
			else
				in->wit_off = pos;
		}
	}

	tx->has_witness = flag != 0;
	tx->size = (uint32_t)(r->p - t0);
	tx->stripped_size = flag ? tx->size - 2 - (uint32_t)wit_bytes : tx->size;
	return 0;
}

int proto_tx_decode(struct proto_reader *r, struct proto_tx *tx)
{
	struct stage st;
	tx_reset(tx);
	stage_init(&st, r->end);
	int err = tx_decode(r, tx, &st);
	stage_release(&st);
	if (err)
		tx_reset(tx);
	return err;
}

int proto_tx_decode_buf(const uint8_t *data, size_t len, struct proto_tx *tx, size_t *err_off)
{
	struct proto_reader r;
	proto_reader_init(&r, data, len);
	int err = proto_tx_decode(&r, tx);
	if (!err && proto_reader_left(&r)) {
		err = PROTO_ETRAILING;
		tx_reset(tx);
	}
	if (err && err_off)
		*err_off = proto_reader_offset(&r);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Encoding                                                                */

/* A span of the blob; tolerates a hand-built tx with a NULL blob and empty
 * scripts. */
static inline const uint8_t *blob_at(const struct proto_tx *tx, uint32_t off, uint32_t len)
{
	return len ? tx->blob + off : empty_blob;
}

/* Core's HasWitness: some input has a non-empty stack. */
static bool tx_any_witness(const struct proto_tx *tx)
{
	for (uint32_t i = 0; i < tx->n_in; i++)
		if (tx->vin[i].wit_count)
			return true;
	return false;
}

size_t proto_tx_serialized_size(const struct proto_tx *tx, bool with_witness)
{
	size_t n = 8 + proto_compact_size(tx->n_in) + proto_compact_size(tx->n_out);
	for (uint32_t i = 0; i < tx->n_in; i++)
		n += 40 + proto_compact_size(tx->vin[i].script_len) + tx->vin[i].script_len;
	for (uint32_t i = 0; i < tx->n_out; i++)
		n += 8 + proto_compact_size(tx->vout[i].script_len) + tx->vout[i].script_len;
	if (with_witness && tx_any_witness(tx)) {
		n += 2;
		for (uint32_t i = 0; i < tx->n_in; i++)
			n += proto_compact_size(tx->vin[i].wit_count) + tx->vin[i].wit_len;
	}
	return n;
}

static void tx_encode(const struct proto_tx *tx, struct proto_writer *w, bool with_witness)
{
	bool wit = with_witness && tx_any_witness(tx);
	size_t n = proto_tx_serialized_size(tx, wit);
	if (proto_writer_reserve(w, n))
		return;
	uint8_t *p = w->buf + w->len;
	proto_put_le32(p, (uint32_t)tx->version);
	p += 4;
	if (wit) {
		*p++ = 0;
		*p++ = 1;
	}
	p = put_compact(p, tx->n_in);
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct proto_txin *in = &tx->vin[i];
		p = put_txin(p, in, blob_at(tx, in->script_off, in->script_len), in->script_len);
	}
	p = put_compact(p, tx->n_out);
	for (uint32_t i = 0; i < tx->n_out; i++) {
		const struct proto_txout *o = &tx->vout[i];
		p = put_txout(p, o, blob_at(tx, o->script_off, o->script_len), o->script_len);
	}
	if (wit) {
		for (uint32_t i = 0; i < tx->n_in; i++) {
			const struct proto_txin *in = &tx->vin[i];
			p = put_compact(p, in->wit_count);
			if (in->wit_len)
				memcpy(p, blob_at(tx, in->wit_off, in->wit_len), in->wit_len);
			p += in->wit_len;
		}
	}
	proto_put_le32(p, tx->locktime);
	w->len += n;
}

void proto_tx_encode(const struct proto_tx *tx, struct proto_writer *w)
{
	tx_encode(tx, w, true);
}

void proto_tx_encode_stripped(const struct proto_tx *tx, struct proto_writer *w)
{
	tx_encode(tx, w, false);
}

/* ---------------------------------------------------------------------- */
/* Hashing                                                                 */

/* The serialization streamed into SHA-256 through a stack buffer, so the
 * hash sees a few large updates instead of one per field. */
struct hstream {
	struct proto_sha256 c;
	size_t n;
	uint8_t buf[HASH_BUF];
};

static void hs_flush_put(struct hstream *h, const uint8_t *p, size_t len)
{
	size_t room = HASH_BUF - h->n;
	memcpy(h->buf + h->n, p, room);
	proto_sha256_update(&h->c, h->buf, HASH_BUF);
	p += room;
	len -= room;
	h->n = 0;
	if (len >= HASH_BUF) {
		/* Whole 64-byte blocks straight from the source. */
		size_t direct = len & ~(size_t)63;
		proto_sha256_update(&h->c, p, direct);
		p += direct;
		len -= direct;
	}
	memcpy(h->buf, p, len);
	h->n = len;
}

static inline void hs_put(struct hstream *h, const void *p, size_t len)
{
	if (!len)
		return;
	if (len <= HASH_BUF - h->n) {
		memcpy(h->buf + h->n, p, len);
		h->n += len;
		return;
	}
	hs_flush_put(h, p, len);
}

/* Fields are assembled in a small scratch then added with one hs_put. */
static inline void hs_compact(struct hstream *h, uint64_t v)
{
	uint8_t b[PROTO_COMPACT_MAX];
	hs_put(h, b, proto_compact_encode(b, v));
}

static void tx_hash(const struct proto_tx *tx, bool wit, uint8_t out[32])
{
	struct hstream h;
	uint8_t b[48];
	proto_sha256_init(&h.c);
	h.n = 0;
	proto_put_le32(b, (uint32_t)tx->version);
	size_t k = 4;
	if (wit) {
		b[k++] = 0;
		b[k++] = 1;
	}
	k = (size_t)(put_compact(b + k, tx->n_in) - b);
	hs_put(&h, b, k);
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct proto_txin *in = &tx->vin[i];
		memcpy(b, in->prevout.txid.b, 32);
		proto_put_le32(b + 32, in->prevout.n);
		k = (size_t)(put_compact(b + 36, in->script_len) - b);
		hs_put(&h, b, k);
		hs_put(&h, blob_at(tx, in->script_off, in->script_len), in->script_len);
		proto_put_le32(b, in->sequence);
		hs_put(&h, b, 4);
	}
	hs_compact(&h, tx->n_out);
	for (uint32_t i = 0; i < tx->n_out; i++) {
		const struct proto_txout *o = &tx->vout[i];
		proto_put_le64(b, (uint64_t)o->value);
		k = (size_t)(put_compact(b + 8, o->script_len) - b);
		hs_put(&h, b, k);
		hs_put(&h, blob_at(tx, o->script_off, o->script_len), o->script_len);
	}
	if (wit) {
		for (uint32_t i = 0; i < tx->n_in; i++) {
			const struct proto_txin *in = &tx->vin[i];
			hs_compact(&h, in->wit_count);
			hs_put(&h, blob_at(tx, in->wit_off, in->wit_len), in->wit_len);
		}
	}
	proto_put_le32(b, tx->locktime);
	hs_put(&h, b, 4);
	proto_sha256_update(&h.c, h.buf, h.n);
	proto_sha256d_final(&h.c, out);
}

const struct proto_hash *proto_tx_txid(struct proto_tx *tx)
{
	if (!tx->txid_valid) {
		tx_hash(tx, false, tx->txid.b);
		tx->txid_valid = true;
	}
	return &tx->txid;
}

void proto_tx_compute_ids(struct proto_tx *tx)
{
	if (tx->ids_valid)
		return;
	proto_tx_txid(tx);
	if (tx_any_witness(tx))
		tx_hash(tx, true, tx->wtxid.b);
	else
		tx->wtxid = tx->txid;
	tx->ids_valid = true;
}

const struct proto_hash *proto_tx_wtxid(struct proto_tx *tx)
{
	proto_tx_compute_ids(tx);
	return &tx->wtxid;
}

/* ---------------------------------------------------------------------- */
/* Witness iterator                                                        */

void proto_witness_iter_init(struct proto_witness_iter *it, const struct proto_tx *tx,
                             const struct proto_txin *in)
{
	if (!in->wit_len) {
		it->p = it->end = NULL;
		return;
	}
	it->p = tx->blob + in->wit_off;
	it->end = it->p + in->wit_len;
}

bool proto_witness_iter_next(struct proto_witness_iter *it, struct proto_span *item)
{
	if (it->p >= it->end)
		return false;
	/* Decode read every item with this same reader, so on a decoded tx it
	 * cannot fail; it only stops a hand-built stack from yielding an item
	 * decode would have refused, or one running past its span. */
	struct proto_reader r = {it->p, it->p, it->end};
	if (proto_read_varspan(&r, &item->data, &item->len)) {
		it->p = it->end;
		return false;
	}
	it->p = r.p;
	return true;
}
