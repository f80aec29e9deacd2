/**
 * proto/proto.h: the Bitcoin P2P wire codec, peerd's lowest layer.
 *
 * Glossary
 *   reader    a bounds-checked cursor over received bytes; a failed read
 *             leaves it where it was, so `r->p - r->start` is the offset of
 *             the item that failed.
 *   writer    a cursor that appends to a fixed buffer or a growable one;
 *             errors are sticky (w->err) so an encoder can write every field
 *             and check once.
 *   payload   the bytes after the 24-byte frame header.
 *   blob      one exactly-sized allocation holding every script and witness
 *             of a transaction (or of a whole block), referenced by offset.
 *   free list a global, capped, thread-safe stack of fixed-size buffers
 *             (8-byte binary, 512-byte script) reused across decodes.
 *
 * proto/ is pure: no I/O, no libuv, no globals but the free lists. Every
 * function here may be called from any thread unless it says otherwise; a
 * struct is owned by whoever initialised it.
 *
 * Byte order: hashes are stored as on the wire (internal order). Display
 * order (block explorers, bitcoin-cli) is reversed; see proto_hash_to_hex.
 */
#ifndef PEERD_PROTO_H
#define PEERD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"

/** On every fallible call: an ignored error code is a compile error (-Werror). */
#define PROTO_WUR __attribute__((warn_unused_result))

/* ---------------------------------------------------------------------- */
/* Limits (Bitcoin Core's where it has one)                                */

/** Largest payload accepted in a frame (Core MAX_PROTOCOL_MESSAGE_LENGTH). */
#define PROTO_MAX_MESSAGE 4000000u
/** Largest CompactSize value accepted as a length or count (Core MAX_SIZE). */
#define PROTO_MAX_SIZE 0x02000000u
/** Entries in inv, getdata, notfound (Core MAX_INV_SZ). */
#define PROTO_MAX_INV 50000u
/** Headers in one headers message (Core MAX_HEADERS_RESULTS). */
#define PROTO_MAX_HEADERS 2000u
/** Locator hashes the codec accepts in getheaders/getblocks (btcd's). */
#define PROTO_MAX_LOCATOR 500u
/** Locator hashes the handler accepts (Core MAX_LOCATOR_SZ); enforced in daemon/. */
#define PROTO_MAX_LOCATOR_HANDLER 101u
/** Entries in addr and addrv2 (Core MAX_ADDR_TO_SEND). */
#define PROTO_MAX_ADDR 1000u
/** Largest addrv2 address field (BIP155 MAX_ADDRV2_SIZE). */
#define PROTO_MAX_ADDRV2_SIZE 512u
/** Longest user agent in version (Core MAX_SUBVERSION_LENGTH). */
#define PROTO_MAX_SUBVERSION 256u
/** Frame header size: magic, command, length, checksum. */
#define PROTO_HEADER_SIZE 24u
/** Command field width in the frame header. */
#define PROTO_COMMAND_SIZE 12u
/** Protocol version peerd speaks (Core 29). */
#define PROTO_VERSION 70016
/** Maximum block weight (BIP141). */
#define PROTO_MAX_BLOCK_WEIGHT 4000000u
/** Weight of a non-witness byte; a witness byte weighs 1 (BIP141). */
#define PROTO_WITNESS_SCALE 4u
/** Satoshis per bitcoin and the money range. */
#define PROTO_COIN      100000000LL
#define PROTO_MAX_MONEY (21000000LL * PROTO_COIN)
/** Smallest serialized input (outpoint 36, empty script 1, sequence 4). */
#define PROTO_MIN_TXIN_SIZE 41u
/** Smallest serialized output (value 8, empty script 1). */
#define PROTO_MIN_TXOUT_SIZE 9u
/** Smallest serialized transaction (version, 1 in, 1 out, locktime). */
#define PROTO_MIN_TX_SIZE 60u
/** Serialized block header size. */
#define PROTO_BLOCK_HEADER_SIZE 80u
/** Free list buffer sizes and default capacities (DESIGN.md). */
#define PROTO_BINARY_BUF_SIZE     8u     /**< bytes per binary buffer */
#define PROTO_BINARY_FREELIST_CAP 1024u  /**< binary buffers kept: 8 KiB */
#define PROTO_SCRIPT_BUF_SIZE     512u   /**< bytes per script buffer */
#define PROTO_SCRIPT_FREELIST_CAP 12500u /**< 100 scripts x 125 peers, ~6.1 MiB */

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */

/** proto/ error codes: 0 is success, every error is negative. */
enum proto_err {
	PROTO_OK = 0,         /**< success */
	PROTO_ETRUNC = -1,    /**< input ended before the item did */
	PROTO_ETRAILING = -2, /**< bytes left over after a complete payload */
	PROTO_EMAGIC = -3,    /**< frame magic is not this network's */
	PROTO_ECOMMAND = -4,  /**< command has non-printable bytes or data after NUL padding */
	PROTO_EOVERSIZE = -5, /**< a length over its limit (payload, string, script, address) */
	PROTO_ECHECKSUM = -6, /**< payload checksum does not match the header */
	PROTO_ECOUNT = -7, /**< an element count over its limit or over what the bytes can hold */
	PROTO_ENONCANON = -8, /**< CompactSize not in its shortest form */
	PROTO_ENOMEM = -9,    /**< allocation failed */
	PROTO_EVALUE = -10, /**< a field value that cannot be (bad flag byte, bad address length) */
	PROTO_ENOSPACE = -11, /**< a fixed writer buffer is full */
	PROTO_EUNKNOWN = -12, /**< unknown command: skippable, not a protocol violation */
	PROTO_EHEX = -13,     /**< text is not valid hex */
	PROTO_ERR__MIN = -13, /**< lowest code, for range checks and tables; not an error itself */
};

/** A one-line English description of a proto_err; never NULL. */
const char *proto_strerror(int err);
/** The enum name without prefix ("ETRUNC"), used as a stats key; never NULL. */
const char *proto_errname(int err);

/* ---------------------------------------------------------------------- */
/* Hashes and hashing (nettle)                                             */

/** A 32-byte hash (txid, block hash, merkle node), bytes in wire order. */
struct proto_hash {
	uint8_t b[32];
};

/** SHA-256 of data. */
void proto_sha256(const void *data, size_t len, uint8_t out[32]);
/** SHA-256(SHA-256(data)): txids, block hashes, checksums, merkle nodes. */
void proto_sha256d(const void *data, size_t len, uint8_t out[32]);
/** SHA-256d of the 64-byte concatenation a||b (merkle node). */
void proto_hash_pair(const uint8_t a[32], const uint8_t b[32], uint8_t out[32]);
/** SHA-1 of data (only for the OP_SHA1 opcode: consensus, not security). */
void proto_sha1(const void *data, size_t len, uint8_t out[20]);
/** RIPEMD-160 of data (OP_RIPEMD160; half of HASH160). */
void proto_ripemd160(const void *data, size_t len, uint8_t out[20]);
/** RIPEMD-160(SHA-256(data)). */
void proto_hash160(const void *data, size_t len, uint8_t out[20]);
/** BIP340 tagged hash: SHA-256(SHA-256(tag)||SHA-256(tag)||data). */
void proto_tagged_hash(const char *tag, const void *data, size_t len, uint8_t out[32]);

/**
 * Streaming SHA-256 (opaque storage big enough for nettle's context), for
 * hashing a serialization without building it first. A plain value: a
 * midstate may be copied with `=` and continued twice. Owned by the caller.
 */
struct proto_sha256 {
	uint64_t opaque[16];
};
/** Start a new hash; no allocation. */
void proto_sha256_init(struct proto_sha256 *c);
/** Absorb len bytes (len may be 0, data then may be NULL). */
void proto_sha256_update(struct proto_sha256 *c, const void *data, size_t len);
/** Write the digest; init c again before hashing anything else with it. */
void proto_sha256_final(struct proto_sha256 *c, uint8_t out[32]);
/** Final, then one more SHA-256 over the digest. */
void proto_sha256d_final(struct proto_sha256 *c, uint8_t out[32]);
/** A context after absorbing the BIP340 tag prefix (64 bytes); precompute once. */
void proto_sha256_init_tagged(struct proto_sha256 *c, const char *tag);

/** Write the hash in display (reversed) order as 64 lowercase hex chars + NUL. */
void proto_hash_to_hex(const struct proto_hash *h, char out[65]);
/** Parse 64 hex chars in display order. 0 or PROTO_EHEX. */
PROTO_WUR int proto_hash_from_hex(const char *hex, struct proto_hash *h);
/** Value of one hex digit (either case), or -1 when c is not one. */
static inline int proto_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
/** Lowercase hex of bytes; out must hold 2*len+1. */
void proto_hex_encode(const uint8_t *data, size_t len, char *out);
/** Decode hex (even length, no prefix) into out (cap bytes); *len = bytes written. */
PROTO_WUR int proto_hex_decode(const char *hex, size_t hexlen, uint8_t *out, size_t cap,
                               size_t *len);

/** Whether two hashes are equal (not constant-time: hashes are public). */
static inline bool proto_hash_eq(const struct proto_hash *a, const struct proto_hash *b)
{
	return memcmp(a->b, b->b, 32) == 0;
}
/** Whether all 32 bytes are zero (a coinbase's prevout, "no stop hash"). */
static inline bool proto_hash_is_zero(const struct proto_hash *h)
{
	static const uint8_t z[32];
	return memcmp(h->b, z, 32) == 0;
}

/* ---------------------------------------------------------------------- */
/* Randomness and SipHash (libsodium)                                      */

/**
 * Fill buf with cryptographically secure random bytes. Never fails: aborts
 * if libsodium cannot initialise (no random source at all).
 */
void proto_random(void *buf, size_t len);
/** A cryptographically secure random 64-bit value (nonces, salts); as proto_random. */
uint64_t proto_random_u64(void);
/** SipHash-2-4 with a 16-byte key (salted hash tables). */
uint64_t proto_siphash(const uint8_t key[16], const void *data, size_t len);

/* ---------------------------------------------------------------------- */
/* Reader and writer cursors                                               */

/**
 * A bounds-checked cursor over bytes the caller keeps alive; reading never
 * copies unless asked to. Every read checks the bytes left first and, on
 * failure, returns PROTO_ETRUNC without moving.
 */
struct proto_reader {
	const uint8_t *start; /**< first byte, for offsets in error messages */
	const uint8_t *p;     /**< next unread byte */
	const uint8_t *end;   /**< one past the last byte */
};

/** Read len bytes from data (not copied; may be NULL when len is 0). */
static inline void proto_reader_init(struct proto_reader *r, const void *data, size_t len)
{
	r->start = r->p = (const uint8_t *)data;
	r->end = r->p + len;
}
/** Bytes not yet read. */
static inline size_t proto_reader_left(const struct proto_reader *r)
{
	return (size_t)(r->end - r->p);
}
/** Bytes read so far: after a failure, the offset of the failing item. */
static inline size_t proto_reader_offset(const struct proto_reader *r)
{
	return (size_t)(r->p - r->start);
}

/** Copy the next n bytes into out and advance; 0 or PROTO_ETRUNC. */
PROTO_WUR static inline int proto_read_bytes(struct proto_reader *r, void *out, size_t n)
{
	if (proto_reader_left(r) < n)
		return PROTO_ETRUNC;
	memcpy(out, r->p, n);
	r->p += n;
	return 0;
}
/**
 * Point *out at the next n bytes (no copy; valid as long as the input) and
 * advance. 0 or PROTO_ETRUNC.
 */
PROTO_WUR static inline int proto_read_span(struct proto_reader *r, size_t n, const uint8_t **out)
{
	if (proto_reader_left(r) < n)
		return PROTO_ETRUNC;
	*out = r->p;
	r->p += n;
	return 0;
}
/** Advance past n bytes; 0 or PROTO_ETRUNC. */
PROTO_WUR static inline int proto_skip(struct proto_reader *r, size_t n)
{
	if (proto_reader_left(r) < n)
		return PROTO_ETRUNC;
	r->p += n;
	return 0;
}
/**
 * Fixed-width integers, little-endian unless named otherwise (the wire's
 * order): 0 and *v set, or PROTO_ETRUNC with *v and r untouched.
 */
PROTO_WUR static inline int proto_read_u8(struct proto_reader *r, uint8_t *v)
{
	if (r->p >= r->end)
		return PROTO_ETRUNC;
	*v = *r->p++;
	return 0;
}
/** See proto_read_u8. */
PROTO_WUR static inline int proto_read_u16le(struct proto_reader *r, uint16_t *v)
{
	if (proto_reader_left(r) < 2)
		return PROTO_ETRUNC;
	*v = (uint16_t)(r->p[0] | r->p[1] << 8);
	r->p += 2;
	return 0;
}
/** Big-endian 16-bit (ports in addr messages). */
PROTO_WUR static inline int proto_read_u16be(struct proto_reader *r, uint16_t *v)
{
	if (proto_reader_left(r) < 2)
		return PROTO_ETRUNC;
	*v = (uint16_t)(r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return 0;
}
/**
 * Load or store a little-endian integer at p, any alignment; the caller has
 * checked the bytes are there. Byte by byte so it is right on any host and
 * compiles to one move on x86.
 */
static inline uint32_t proto_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/** See proto_le32. */
static inline uint64_t proto_le64(const uint8_t *p)
{
	return (uint64_t)proto_le32(p) | (uint64_t)proto_le32(p + 4) << 32;
}
/** See proto_le32: p must have room for 4 bytes. */
static inline void proto_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
/** See proto_le32: p must have room for 8 bytes. */
static inline void proto_put_le64(uint8_t *p, uint64_t v)
{
	proto_put_le32(p, (uint32_t)v);
	proto_put_le32(p + 4, (uint32_t)(v >> 32));
}
/** See proto_read_u8. */
PROTO_WUR static inline int proto_read_u32le(struct proto_reader *r, uint32_t *v)
{
	if (proto_reader_left(r) < 4)
		return PROTO_ETRUNC;
	*v = proto_le32(r->p);
	r->p += 4;
	return 0;
}
/** See proto_read_u8; two's complement, as Core serializes int32_t. */
PROTO_WUR static inline int proto_read_i32le(struct proto_reader *r, int32_t *v)
{
	uint32_t u;
	int err = proto_read_u32le(r, &u);
	if (!err)
		*v = (int32_t)u;
	return err;
}
/** See proto_read_u8. */
PROTO_WUR static inline int proto_read_u64le(struct proto_reader *r, uint64_t *v)
{
	if (proto_reader_left(r) < 8)
		return PROTO_ETRUNC;
	*v = proto_le64(r->p);
	r->p += 8;
	return 0;
}
/** See proto_read_u8; two's complement (output values, timestamps). */
PROTO_WUR static inline int proto_read_i64le(struct proto_reader *r, int64_t *v)
{
	uint64_t u;
	int err = proto_read_u64le(r, &u);
	if (!err)
		*v = (int64_t)u;
	return err;
}
/** 32 bytes, copied in wire order; 0 or PROTO_ETRUNC. */
PROTO_WUR static inline int proto_read_hash(struct proto_reader *r, struct proto_hash *h)
{
	return proto_read_bytes(r, h->b, 32);
}

/**
 * CompactSize with Core's rules: non-canonical encodings fail with
 * PROTO_ENONCANON; values over `max` fail with PROTO_EOVERSIZE. Pass
 * PROTO_MAX_SIZE for any length or count (Core's range check), or
 * UINT64_MAX to read a raw 64-bit value.
 */
PROTO_WUR static inline int proto_read_compact(struct proto_reader *r, uint64_t max, uint64_t *v)
{
	if (r->p >= r->end)
		return PROTO_ETRUNC;
	uint8_t c = r->p[0];
	uint64_t x;
	size_t n;
	if (c < 0xfd) {
		x = c;
		n = 1;
	} else if (c == 0xfd) {
		if (proto_reader_left(r) < 3)
			return PROTO_ETRUNC;
		x = (uint64_t)(r->p[1] | r->p[2] << 8);
		if (x < 0xfd)
			return PROTO_ENONCANON;
		n = 3;
	} else if (c == 0xfe) {
		if (proto_reader_left(r) < 5)
			return PROTO_ETRUNC;
		x = proto_le32(r->p + 1);
		if (x < 0x10000)
			return PROTO_ENONCANON;
		n = 5;
	} else {
		if (proto_reader_left(r) < 9)
			return PROTO_ETRUNC;
		x = proto_le64(r->p + 1);
		if (x < 0x100000000ULL)
			return PROTO_ENONCANON;
		n = 9;
	}
	if (x > max)
		return PROTO_EOVERSIZE;
	r->p += n;
	*v = x;
	return 0;
}

/**
 * A CompactSize length (at most PROTO_MAX_SIZE) and that many bytes, not
 * copied: *data points into the input. A length over what is left fails with
 * PROTO_ETRUNC and leaves r at the length field. The one reader of scripts
 * and witness items, in transactions, blocks and the interpreter.
 */
PROTO_WUR static inline int proto_read_varspan(struct proto_reader *r, const uint8_t **data,
                                               uint32_t *len)
{
	const uint8_t *save = r->p;
	uint64_t n;
	int err = proto_read_compact(r, PROTO_MAX_SIZE, &n);
	if (err)
		return err;
	if (n > proto_reader_left(r)) {
		r->p = save;
		return PROTO_ETRUNC;
	}
	*data = r->p;
	*len = (uint32_t)n;
	r->p += n;
	return 0;
}

/**
 * A count of elements each at least `min_elem` bytes long: PROTO_ECOUNT when
 * over `limit` (or over PROTO_MAX_SIZE), PROTO_ETRUNC when the remaining
 * bytes cannot hold that many elements, so no caller allocates for a count
 * the input cannot back.
 */
PROTO_WUR int proto_read_count(struct proto_reader *r, uint32_t limit, size_t min_elem,
                               uint32_t *n);

/**
 * Length-limited var string into out (cap bytes incl. NUL). A length over
 * max_len fails with PROTO_EOVERSIZE; *len gets the length.
 */
PROTO_WUR int proto_read_varstr(struct proto_reader *r, size_t max_len, char *out, size_t cap,
                                size_t *len);

/**
 * An append-only output buffer: the caller's fixed array, or a heap buffer
 * the writer grows (and proto_writer_release frees). After the first error
 * every write is a no-op, so an encoder writes all its fields and checks
 * err once; len then says how much was written before the failure.
 */
struct proto_writer {
	uint8_t *buf;  /**< the bytes written; NULL for a growable writer until its first write */
	size_t len;    /**< bytes written */
	size_t cap;    /**< bytes buf can hold */
	int err;       /**< first error, sticky; later writes do nothing */
	bool growable; /**< buf is ours and may be reallocated with xrealloc */
};

/** Write into a caller's buffer; overflow sets PROTO_ENOSPACE. */
void proto_writer_init_fixed(struct proto_writer *w, void *buf, size_t cap);
/** Write into a growable heap buffer (none allocated until the first write). */
void proto_writer_init(struct proto_writer *w);
/** Free a growable writer's buffer. */
void proto_writer_release(struct proto_writer *w);
/**
 * Make room for n more bytes: grows a growable writer (PROTO_ENOMEM on
 * failure), or checks a fixed one (PROTO_ENOSPACE). Sets w->err on failure
 * and returns it; returns an earlier error unchanged.
 */
int proto_writer_reserve(struct proto_writer *w, size_t n);

/**
 * Append n bytes (data may be NULL when n is 0). Like every proto_write_*,
 * returns nothing: a failure is recorded in w->err.
 */
static inline void proto_write_bytes(struct proto_writer *w, const void *data, size_t n)
{
	if (w->err)
		return;
	if (w->cap - w->len < n && proto_writer_reserve(w, n))
		return;
	if (n)
		memcpy(w->buf + w->len, data, n);
	w->len += n;
}
/** Append fixed-width integers, little-endian unless named otherwise; errors in w->err. */
static inline void proto_write_u8(struct proto_writer *w, uint8_t v)
{
	proto_write_bytes(w, &v, 1);
}
/** See proto_write_u8. */
static inline void proto_write_u16le(struct proto_writer *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	proto_write_bytes(w, b, 2);
}
/** Big-endian 16-bit (ports in addr messages); see proto_write_u8. */
static inline void proto_write_u16be(struct proto_writer *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	proto_write_bytes(w, b, 2);
}
/** See proto_write_u8. */
static inline void proto_write_u32le(struct proto_writer *w, uint32_t v)
{
	uint8_t b[4];
	proto_put_le32(b, v);
	proto_write_bytes(w, b, 4);
}
/** See proto_write_u8. */
static inline void proto_write_u64le(struct proto_writer *w, uint64_t v)
{
	uint8_t b[8];
	proto_put_le64(b, v);
	proto_write_bytes(w, b, 8);
}
/** 32 bytes in wire order; errors in w->err. */
static inline void proto_write_hash(struct proto_writer *w, const struct proto_hash *h)
{
	proto_write_bytes(w, h->b, 32);
}
/** Encoded size of a CompactSize value: 1, 3, 5 or 9. */
static inline size_t proto_compact_size(uint64_t v)
{
	return v < 0xfd ? 1 : v <= 0xffff ? 3 : v <= 0xffffffffULL ? 5 : 9;
}
/** Longest CompactSize encoding. */
#define PROTO_COMPACT_MAX 9u
/**
 * Encode v as a CompactSize into b, which must hold proto_compact_size(v)
 * bytes (PROTO_COMPACT_MAX always will); returns that length. Shared by the
 * writer, raw-buffer encoders and code that streams into a hash instead.
 */
static inline size_t proto_compact_encode(uint8_t *b, uint64_t v)
{
	size_t n;
	if (v < 0xfd) {
		b[0] = (uint8_t)v;
		n = 1;
	} else if (v <= 0xffff) {
		b[0] = 0xfd;
		b[1] = (uint8_t)v;
		b[2] = (uint8_t)(v >> 8);
		n = 3;
	} else if (v <= 0xffffffffULL) {
		b[0] = 0xfe;
		proto_put_le32(b + 1, (uint32_t)v);
		n = 5;
	} else {
		b[0] = 0xff;
		proto_put_le64(b + 1, v);
		n = 9;
	}
	return n;
}
/** Append v as a CompactSize (always the canonical, shortest form); errors in w->err. */
static inline void proto_write_compact(struct proto_writer *w, uint64_t v)
{
	/* Not written with proto_compact_encode: this form lets the compiler
	 * specialise the copy per branch, measured ~20% faster on WriteVarInt3. */
	uint8_t b[PROTO_COMPACT_MAX];
	size_t n;
	if (v < 0xfd) {
		b[0] = (uint8_t)v;
		n = 1;
	} else if (v <= 0xffff) {
		b[0] = 0xfd;
		b[1] = (uint8_t)v;
		b[2] = (uint8_t)(v >> 8);
		n = 3;
	} else if (v <= 0xffffffffULL) {
		b[0] = 0xfe;
		proto_put_le32(b + 1, (uint32_t)v);
		n = 5;
	} else {
		b[0] = 0xff;
		proto_put_le64(b + 1, v);
		n = 9;
	}
	proto_write_bytes(w, b, n);
}
/** CompactSize length followed by the bytes (data may be NULL when n is 0); errors in w->err. */
static inline void proto_write_varbytes(struct proto_writer *w, const void *data, size_t n)
{
	proto_write_compact(w, n);
	proto_write_bytes(w, data, n);
}

/* ---------------------------------------------------------------------- */
/* Free lists                                                              */

/** The two global free lists. */
enum proto_freelist_id {
	PROTO_FREELIST_BINARY = 0, /**< 8-byte buffers */
	PROTO_FREELIST_SCRIPT = 1, /**< 512-byte buffers */
	PROTO_FREELIST__COUNT
};

/** A snapshot of one free list's counters (for getstats); plain values, no ownership. */
struct proto_freelist_stats {
	const char *name;  /**< "binary" or "script" */
	size_t buf_size;   /**< bytes per buffer */
	size_t capacity;   /**< most buffers the list keeps */
	size_t in_use;     /**< buffers handed out and not yet returned */
	size_t free;       /**< buffers on the list now */
	size_t high_water; /**< most buffers in use at once */
	uint64_t hits;     /**< gets served from the list */
	uint64_t misses;   /**< gets that had to allocate */
	uint64_t bypass;   /**< requests too large for the list (served by xmalloc) */
	uint64_t dropped;  /**< returns freed because the list was full */
};

/**
 * Set capacities (0 keeps the current). Call at startup before decoding
 * starts; buffers already out are still accepted back.
 */
void proto_freelist_configure(size_t binary_cap, size_t script_cap);
/**
 * A buffer of the list's size, from the list or else newly allocated; NULL
 * when out of memory. The caller owns it until proto_freelist_put. Thread-safe.
 */
PROTO_WUR void *proto_freelist_get(enum proto_freelist_id id);
/**
 * Take up to n buffers in one lock; returns how many were filled into out
 * (n unless out of memory). Each goes back with proto_freelist_put(_many).
 * Thread-safe.
 */
PROTO_WUR size_t proto_freelist_get_many(enum proto_freelist_id id, void **out, size_t n);
/** Give a buffer back (NULL is ignored). Thread-safe. */
void proto_freelist_put(enum proto_freelist_id id, void *buf);
/** Give n buffers back in one lock (none may be NULL). Thread-safe. */
void proto_freelist_put_many(enum proto_freelist_id id, void *const *bufs, size_t n);
/** Count a request that was too large for the list (the caller allocated itself). Thread-safe. */
void proto_freelist_note_bypass(enum proto_freelist_id id);
/** Snapshot of one list's counters into *out. Thread-safe; takes the list's lock briefly. */
void proto_freelist_stats(enum proto_freelist_id id, struct proto_freelist_stats *out);
/**
 * Free every idle buffer (at exit, so leak checkers stay quiet). Buffers
 * still out may be put back later. Thread-safe.
 */
void proto_freelist_drain(void);

/* ---------------------------------------------------------------------- */
/* Transactions                                                            */

/** The output an input spends: its transaction's id and output index. */
struct proto_outpoint {
	struct proto_hash txid;
	uint32_t n; /**< 0xffffffff with a zero txid in a coinbase */
};

/**
 * One input. Spans are offsets into tx->blob (for a block's tx, its own
 * slice of the block's blob); read them with proto_txin_script and
 * proto_witness_iter.
 */
struct proto_txin {
	struct proto_outpoint prevout;
	uint32_t script_off; /**< scriptSig */
	uint32_t script_len;
	uint32_t sequence;
	uint32_t wit_off; /**< serialized witness stack items (each a var bytes), after the count */
	uint32_t wit_len; /**< 0 when the input has no witness */
	uint32_t wit_count; /**< number of witness stack items */
};

/** One output; the script is a span of tx->blob (proto_txout_script). */
struct proto_txout {
	int64_t value; /**< satoshis; not range-checked by decode (script_check_transaction does) */
	uint32_t script_off; /**< scriptPubKey */
	uint32_t script_len;
};

/**
 * A decoded transaction. vin, vout and blob are either owned (allocated by
 * proto_tx_decode, reused across decodes, freed by proto_tx_release) or
 * borrowed from a block (`borrowed` set; the block frees them).
 */
struct proto_tx {
	int32_t version;
	uint32_t locktime;
	uint32_t n_in;
	uint32_t n_out;
	struct proto_txin *vin;
	struct proto_txout *vout;
	const uint8_t *blob; /**< scripts and witnesses, contiguous */
	uint32_t blob_len;
	bool has_witness; /**< serialized with BIP144 marker and flag */
	bool borrowed;
	/* sizes, filled by decode */
	uint32_t size;          /**< serialized size with witness */
	uint32_t stripped_size; /**< serialized size without witness */
	/* capacities of owned storage, for reuse without allocation */
	uint32_t vin_cap, vout_cap, blob_cap;
	uint8_t *blob_mut; /**< owned blob storage (NULL when borrowed) */
	/* cached hashes: txid valid when txid_valid, both when ids_valid.
	 * Clear both after changing a decoded or hand-built tx. */
	bool ids_valid;
	bool txid_valid;
	struct proto_hash txid;
	struct proto_hash wtxid;
};

/** Zero a tx so it can be decoded into or released. Allocates nothing. */
void proto_tx_init(struct proto_tx *tx);
/**
 * Free owned storage (a borrowed tx's belongs to its block and is left
 * alone); the tx is then as after init.
 */
void proto_tx_release(struct proto_tx *tx);

/**
 * Decode one transaction (BIP144 witness serialization recognised) from r,
 * reusing tx's owned storage when large enough. Scripts are read into
 * script free-list buffers (larger ones bypass the list and are counted),
 * then copied into one exactly-sized blob; the buffers go straight back.
 * At most three allocations (vin, vout, blob); none when reused (staging
 * buffers are free-list hits once the list is warm). The tx does not point
 * into r's buffer. Rules as Core's UnserializeTransaction: a flag byte
 * other than 0 or 1 is PROTO_EVALUE ("unknown optional data"); marker
 * with flag 0 is a tx with no inputs and no outputs; flag 1 with every
 * witness stack empty is PROTO_EVALUE ("superfluous witness record").
 * Counts are bounded by the bytes left before anything is allocated.
 * On error the tx holds no partial data (n_in = n_out = 0) and storage is
 * kept for reuse; r is left at the failing field. A tx borrowed from a
 * block is detached from the block's storage first.
 */
PROTO_WUR int proto_tx_decode(struct proto_reader *r, struct proto_tx *tx);
/**
 * Decode a whole payload: like proto_tx_decode, plus PROTO_ETRAILING;
 * *err_off (may be NULL) gets the failing offset.
 */
PROTO_WUR int proto_tx_decode_buf(const uint8_t *data, size_t len, struct proto_tx *tx,
                                  size_t *err_off);
/**
 * Serialize. The BIP144 witness form is used when some input has a
 * non-empty witness (Core's HasWitness; for a decoded tx that is exactly
 * has_witness), else the legacy form.
 */
void proto_tx_encode(const struct proto_tx *tx, struct proto_writer *w);
/** Serialize without witness (the txid preimage). */
void proto_tx_encode_stripped(const struct proto_tx *tx, struct proto_writer *w);
/** Serialized size: with witness as proto_tx_encode writes it, or stripped. */
size_t proto_tx_serialized_size(const struct proto_tx *tx, bool with_witness);
/** Compute txid and wtxid (no allocation) and cache them in tx. */
void proto_tx_compute_ids(struct proto_tx *tx);
/** The txid, computed (no allocation) and cached on first use; points into tx. */
const struct proto_hash *proto_tx_txid(struct proto_tx *tx);
/** The wtxid (equal to the txid without witness), cached like proto_tx_txid. */
const struct proto_hash *proto_tx_wtxid(struct proto_tx *tx);
/** Weight = stripped*3 + total (BIP141), from the sizes decode filled in. */
static inline uint32_t proto_tx_weight(const struct proto_tx *tx)
{
	return tx->stripped_size * (PROTO_WITNESS_SCALE - 1) + tx->size;
}
/** Virtual size: ceil(weight / 4), as Core's GetVirtualTransactionSize without sigops. */
static inline uint32_t proto_tx_vsize(const struct proto_tx *tx)
{
	return (proto_tx_weight(tx) + PROTO_WITNESS_SCALE - 1) / PROTO_WITNESS_SCALE;
}
/** An input's scriptSig (script_len bytes), inside tx's blob: valid while tx is unchanged. */
static inline const uint8_t *proto_txin_script(const struct proto_tx *tx,
                                               const struct proto_txin *in)
{
	return tx->blob + in->script_off;
}
/** An output's scriptPubKey (script_len bytes), inside tx's blob: valid while tx is unchanged. */
static inline const uint8_t *proto_txout_script(const struct proto_tx *tx,
                                                const struct proto_txout *o)
{
	return tx->blob + o->script_off;
}
/** Core's IsCoinBase: exactly one input, spending the null outpoint. */
static inline bool proto_tx_is_coinbase(const struct proto_tx *tx)
{
	return tx->n_in == 1 && tx->vin[0].prevout.n == 0xffffffffu &&
	       proto_hash_is_zero(&tx->vin[0].prevout.txid);
}

/** A witness stack item, pointing into the blob. */
struct proto_span {
	const uint8_t *data;
	uint32_t len;
};
/**
 * Iterate an input's witness items, in order, without copying. Lazy: each
 * item is read only when asked for. Item lengths are read with the same
 * bound as decode (PROTO_MAX_SIZE, proto_read_varspan), so on a decoded tx
 * it cannot fail: it yields exactly in->wit_count items, then false. On a
 * hand-built stack it also stops (false, and false again) at a length that
 * is not canonical, over PROTO_MAX_SIZE or past the stack's bytes.
 * A plain value on the caller's stack; valid while tx is unchanged.
 */
struct proto_witness_iter {
	const uint8_t *p;   /**< next item's length prefix */
	const uint8_t *end; /**< end of the input's witness bytes */
};
/** Start at the first item of input `in` of tx (an input without witness yields none). */
void proto_witness_iter_init(struct proto_witness_iter *it, const struct proto_tx *tx,
                             const struct proto_txin *in);
/** The next item into *item (pointing into tx's blob) and true; false at the end. */
bool proto_witness_iter_next(struct proto_witness_iter *it, struct proto_span *item);

/**
 * One input or output as on the wire, without copying: the script span
 * points into the reader's buffer and the struct's script_off/len (and, for
 * an input, wit_*) are left 0. r is left at the failing field on error.
 * proto_tx_decode reads inputs and outputs with the same code.
 */
PROTO_WUR int proto_txin_decode(struct proto_reader *r, struct proto_txin *in,
                                struct proto_span *script);
/** Write an input with the given scriptSig (in->script_off/len are not used). */
void proto_txin_encode(const struct proto_txin *in, const uint8_t *script, uint32_t script_len,
                       struct proto_writer *w);
/** An output as on the wire; see proto_txin_decode (script_off is left 0). */
PROTO_WUR int proto_txout_decode(struct proto_reader *r, struct proto_txout *out,
                                 struct proto_span *script);
/** Write an output with the given scriptPubKey (o->script_off/len are not used). */
void proto_txout_encode(const struct proto_txout *o, const uint8_t *script, uint32_t script_len,
                        struct proto_writer *w);

/* ---------------------------------------------------------------------- */
/* Blocks                                                                  */

/** The 80-byte block header, fields in wire order. */
struct proto_block_header {
	int32_t version;
	struct proto_hash prev;        /**< previous block's hash */
	struct proto_hash merkle_root; /**< over the txids */
	uint32_t time;                 /**< seconds since the epoch */
	uint32_t bits;                 /**< compact target (proto_bits_to_target) */
	uint32_t nonce;
};

/**
 * 80 bytes from r; 0 or PROTO_ETRUNC (r untouched). Checks no rule: see
 * chain/ and proto_check_pow.
 */
PROTO_WUR int proto_block_header_decode(struct proto_reader *r, struct proto_block_header *h);
/** Append the 80-byte serialization; errors in w->err. */
void proto_block_header_encode(const struct proto_block_header *h, struct proto_writer *w);
/** SHA-256d of the 80-byte serialization. */
void proto_block_header_hash(const struct proto_block_header *h, struct proto_hash *out);

/**
 * A decoded block. All transactions share three arrays and one blob owned
 * by the block (txs[i].borrowed is set): decoding a block of any size costs
 * a fixed number of allocations, none when the block object is reused.
 */
struct proto_block {
	struct proto_block_header hdr;
	uint32_t n_tx;
	struct proto_tx *txs;
	uint32_t size; /**< serialized size */
	/* storage, owned */
	struct proto_txin *vin_all;
	struct proto_txout *vout_all;
	uint8_t *blob_all;
	size_t txs_cap, vin_cap, vout_cap, blob_cap;
	/* leaf array reused by the merkle root functions */
	struct proto_hash *hash_scratch;
	size_t hash_cap;
};

/** Zero a block so it can be decoded into or released. Allocates nothing. */
void proto_block_init(struct proto_block *b);
/** Free the block's storage, which its transactions borrow; b is then as after init. */
void proto_block_release(struct proto_block *b);
/**
 * Decode a whole block payload; PROTO_ETRAILING if bytes are left. Every
 * transaction is checked exactly as proto_tx_decode checks it; the tx count
 * is bounded by len / PROTO_MIN_TX_SIZE before anything is allocated. At
 * most four allocations (txs, inputs, outputs, blob), none when b's storage
 * is big enough. On error b->n_tx is 0 and storage is kept; *err_off (may
 * be NULL) gets the offset of the failing item. The block does not point
 * into `data`.
 */
PROTO_WUR int proto_block_decode(const uint8_t *data, size_t len, struct proto_block *b,
                                 size_t *err_off);
/** Serialize the whole block (each tx in the form proto_tx_encode picks); errors in w->err. */
void proto_block_encode(const struct proto_block *b, struct proto_writer *w);
/** Block weight (BIP141), saturating at UINT32_MAX. */
uint32_t proto_block_weight(const struct proto_block *b);

/**
 * Merkle root of n leaf hashes (Core's ComputeMerkleRoot). *mutated is set
 * when two identical hashes are paired at any level (CVE-2012-2459).
 * Uses `scratch` (n hashes) if given, else allocates once; returns 0 or
 * PROTO_ENOMEM. n == 0 gives a zero root.
 */
PROTO_WUR int proto_merkle_root(const struct proto_hash *leaves, size_t n,
                                struct proto_hash *scratch, struct proto_hash *root, bool *mutated);
/**
 * Merkle root over the block's txids (computing and caching ids as needed).
 * The leaf array is kept in the block: allocates only when the block has
 * more transactions than any before. 0 or PROTO_ENOMEM.
 */
PROTO_WUR int proto_block_merkle_root(struct proto_block *b, struct proto_hash *root,
                                      bool *mutated);
/** Witness merkle root: wtxids with the coinbase's replaced by zero. 0 or PROTO_ENOMEM. */
PROTO_WUR int proto_block_witness_merkle_root(struct proto_block *b, struct proto_hash *root);
/**
 * Find the witness commitment in the coinbase (last output whose script
 * starts 6a24aa21a9ed). Returns the output index, or -1 if none.
 */
int proto_block_witness_commitment_index(const struct proto_block *b);

/* ---------------------------------------------------------------------- */
/* Proof of work                                                           */

/** Expand compact bits to a 256-bit little-endian target. Returns -1 if negative/overflow/zero. */
int proto_bits_to_target(uint32_t bits, uint8_t target[32]);
/** Compress a 256-bit little-endian target into compact bits. */
uint32_t proto_target_to_bits(const uint8_t target[32]);
/**
 * Core's CheckProofOfWork: false when bits are negative, zero or overflow,
 * or the target is above pow_limit, or hash > target.
 */
bool proto_check_pow(const struct proto_hash *hash, uint32_t bits,
                     const struct proto_hash *pow_limit);

struct proto_params;
/**
 * Core's CalculateNextWorkRequired: the bits of the first block of a new
 * retarget period. last_bits and last_time are the previous period's last
 * block's; first_time (and first_bits, used instead of last_bits when
 * p->enforce_bip94) its first block's. The measured timespan is clamped to
 * [timespan/4, timespan*4] and the result capped at p->pow_limit. Returns
 * last_bits unchanged when p->pow_no_retargeting. The testnet
 * minimum-difficulty exception and "retarget only every interval" are the
 * caller's (they need the chain).
 */
uint32_t proto_next_work_required(const struct proto_params *p, uint32_t last_bits,
                                  uint32_t first_bits, int64_t first_time, int64_t last_time);

/* ---------------------------------------------------------------------- */
/* Network parameters                                                      */

/** The networks peerd knows, indexes into its parameter table. */
enum proto_net {
	PROTO_NET_MAIN = 0,
	PROTO_NET_TESTNET3,
	PROTO_NET_TESTNET4,
	PROTO_NET_SIGNET,
	PROTO_NET_REGTEST,
	PROTO_NET__COUNT /**< number of networks, not one itself */
};

/**
 * One network's constants (Core's CChainParams, the parts peerd uses).
 * Static, read-only storage: any thread may read it, nobody frees it.
 */
struct proto_params {
	enum proto_net net;
	const char *name; /**< "main", "test", "testnet4", "signet", "regtest" */
	uint32_t magic;   /**< as read little-endian from the wire */
	uint16_t default_port;
	const uint8_t *genesis; /**< raw genesis block */
	size_t genesis_len;
	struct proto_hash genesis_hash;
	struct proto_hash pow_limit;   /**< easiest target allowed, as a hash (wire order) */
	uint32_t pow_limit_bits;       /**< the same in compact form */
	int64_t pow_target_timespan;   /**< seconds: two weeks (regtest one day, as Core) */
	int64_t pow_target_spacing;    /**< seconds, ten minutes */
	bool pow_allow_min_difficulty; /**< testnet's 20-minute minimum-difficulty rule */
	bool pow_no_retargeting;       /**< regtest: difficulty never changes */
	bool enforce_bip94;            /**< testnet4 timewarp rule */
	/* heights from which each soft fork's rules apply */
	int32_t bip34_height;
	int32_t bip65_height;
	int32_t bip66_height;
	int32_t csv_height;
	int32_t segwit_height;
	int32_t taproot_height;            /**< 0: always active */
	uint32_t subsidy_halving_interval; /**< blocks between subsidy halvings */
	const char *bech32_hrp;            /**< segwit address prefix ("bc", "tb", "bcrt") */
	/** BIP325 block challenge (signet only, else NULL/0). */
	const uint8_t *signet_challenge;
	size_t signet_challenge_len;
};

/** Blocks per retarget period (2016; 144 on regtest). */
static inline int64_t proto_params_retarget_interval(const struct proto_params *p)
{
	return p->pow_target_timespan / p->pow_target_spacing;
}

/** Parameters of a network; never NULL for a valid enum. */
const struct proto_params *proto_params(enum proto_net net);
/**
 * Look up by name ("main", "mainnet", "test", "testnet3", "testnet4",
 * "signet", "regtest"); NULL if unknown.
 */
const struct proto_params *proto_params_by_name(const char *name);
/** Look up by wire magic; NULL if unknown. */
const struct proto_params *proto_params_by_magic(uint32_t magic);

/* ---------------------------------------------------------------------- */
/* Framing                                                                 */

/** Every command peerd knows. PROTO_CMD_UNKNOWN for the rest (skippable). */
enum proto_cmd {
	PROTO_CMD_UNKNOWN = 0,
	PROTO_CMD_VERSION,
	PROTO_CMD_VERACK,
	PROTO_CMD_PING,
	PROTO_CMD_PONG,
	PROTO_CMD_INV,
	PROTO_CMD_GETDATA,
	PROTO_CMD_NOTFOUND,
	PROTO_CMD_GETHEADERS,
	PROTO_CMD_GETBLOCKS,
	PROTO_CMD_HEADERS,
	PROTO_CMD_TX,
	PROTO_CMD_BLOCK,
	PROTO_CMD_ADDR,
	PROTO_CMD_ADDRV2,
	PROTO_CMD_SENDADDRV2,
	PROTO_CMD_SENDHEADERS,
	PROTO_CMD_FEEFILTER,
	PROTO_CMD_WTXIDRELAY,
	PROTO_CMD_SENDCMPCT,
	PROTO_CMD_GETADDR,
	PROTO_CMD_MEMPOOL,
	PROTO_CMD__COUNT
};

/** Wire name of a command ("version"); "unknown" for PROTO_CMD_UNKNOWN. */
const char *proto_cmd_name(enum proto_cmd cmd);
/** Command from a NUL-terminated name; PROTO_CMD_UNKNOWN if not known. */
enum proto_cmd proto_cmd_lookup(const char *name);

/** A parsed 24-byte frame header; plain values, no ownership. */
struct proto_frame_header {
	uint32_t magic;
	char command[PROTO_COMMAND_SIZE + 1]; /**< NUL-terminated */
	enum proto_cmd cmd; /**< PROTO_CMD_UNKNOWN for a well-formed name peerd does not know */
	uint32_t length;    /**< payload bytes, at most PROTO_MAX_MESSAGE once parsed */
	uint8_t checksum[4];
};

/**
 * Parse and check a 24-byte header in this order, as Core does before any
 * buffer grows: magic (PROTO_EMAGIC), length <= PROTO_MAX_MESSAGE
 * (PROTO_EOVERSIZE), command printable ASCII NUL-padded with nothing after
 * the first NUL (PROTO_ECOMMAND; h is still filled so the payload can be
 * skipped). An unknown but valid command is not an error (h->cmd is
 * PROTO_CMD_UNKNOWN).
 */
PROTO_WUR int proto_frame_header_parse(const uint8_t buf[PROTO_HEADER_SIZE], uint32_t magic,
                                       struct proto_frame_header *h);
/** First 4 bytes of SHA-256d(payload) (payload may be NULL when len is 0). */
void proto_checksum(const void *payload, size_t len, uint8_t out[4]);
/** 0, or PROTO_ECHECKSUM when the payload (h->length bytes) does not match the header. */
PROTO_WUR int proto_frame_verify(const struct proto_frame_header *h, const uint8_t *payload);
/**
 * Write a 24-byte header plus payload. A command longer than
 * PROTO_COMMAND_SIZE sets w->err to PROTO_ECOMMAND, a payload over
 * PROTO_MAX_MESSAGE to PROTO_EOVERSIZE (a peer would drop it).
 */
void proto_frame_write(struct proto_writer *w, uint32_t magic, const char *command,
                       const uint8_t *payload, size_t len);
/**
 * Start a frame: append a 24-byte placeholder header and return its offset
 * in w->buf. Encode the payload into w, then call proto_frame_end: the
 * payload is written once, in place, with no copy.
 */
size_t proto_frame_begin(struct proto_writer *w);
/**
 * Fill in the header at `start` (from proto_frame_begin) for the payload
 * written since: length and checksum. Errors as proto_frame_write; does
 * nothing when w->err is already set.
 */
void proto_frame_end(struct proto_writer *w, size_t start, uint32_t magic, const char *command);

/* ---------------------------------------------------------------------- */
/* Messages                                                                */

/** Service bits. */
#define PROTO_NODE_NETWORK         (1u << 0)
#define PROTO_NODE_BLOOM           (1u << 2)
#define PROTO_NODE_WITNESS         (1u << 3)
#define PROTO_NODE_COMPACT_FILTERS (1u << 6)
#define PROTO_NODE_NETWORK_LIMITED (1u << 10)
#define PROTO_NODE_P2P_V2          (1u << 11)

/** An address as in version and addr: 16-byte IPv6 (IPv4-mapped for v4). */
struct proto_netaddr {
	uint64_t services;
	uint8_t ip[16];
	uint16_t port; /**< host order (big-endian on the wire) */
};

/** version: the first message each side sends. */
struct proto_version {
	int32_t version;   /**< protocol version (PROTO_VERSION) */
	uint64_t services; /**< PROTO_NODE_* bits */
	int64_t timestamp; /**< sender's clock, seconds since the epoch */
	struct proto_netaddr addr_recv;
	struct proto_netaddr addr_from;
	uint64_t nonce; /**< detects connecting to ourselves */
	char user_agent[PROTO_MAX_SUBVERSION +
	                1]; /**< NUL-terminated, but may hold NULs: use _len */
	uint32_t user_agent_len;
	int32_t start_height; /**< sender's best height */
	bool relay;           /**< BIP37: whether to announce transactions */
	bool has_relay;       /**< the optional relay byte was present */
	uint8_t omitted;      /**< enum proto_version_tail: what the wire left out; 0 to send all */
};

/**
 * How much of version's optional tail was absent, counted from the end.
 * Core reads each part only `if (!vRecv.empty())`, so old peers may stop
 * after any of them; a part cut in the middle is PROTO_ETRUNC. Absent
 * parts decode to Core's defaults (nonce 0, empty user agent, start height
 * -1, relay true). The encoder writes what `omitted` says (and ignores
 * has_relay), so a zeroed struct encodes the full modern message.
 */
enum proto_version_tail {
	PROTO_VERSION_TAIL_FULL = 0,      /**< every field through relay */
	PROTO_VERSION_TAIL_NO_RELAY = 1,  /**< ends after start_height */
	PROTO_VERSION_TAIL_NO_HEIGHT = 2, /**< ends after the user agent */
	PROTO_VERSION_TAIL_NO_UA = 3,     /**< ends after addr_from and nonce */
	PROTO_VERSION_TAIL_NONE = 4,      /**< ends after addr_recv */
};

/** Inventory types. */
enum proto_inv_type {
	PROTO_INV_ERROR = 0,
	PROTO_INV_TX = 1,
	PROTO_INV_BLOCK = 2,
	PROTO_INV_FILTERED_BLOCK = 3,
	PROTO_INV_CMPCT_BLOCK = 4,
	PROTO_INV_WTX = 5,
	PROTO_INV_WITNESS_FLAG = 1u << 30,
	PROTO_INV_WITNESS_TX = PROTO_INV_TX | PROTO_INV_WITNESS_FLAG,
	PROTO_INV_WITNESS_BLOCK = PROTO_INV_BLOCK | PROTO_INV_WITNESS_FLAG,
	PROTO_INV_FILTERED_WITNESS_BLOCK = PROTO_INV_FILTERED_BLOCK | PROTO_INV_WITNESS_FLAG,
};

/** One inventory entry: what kind of object, and its hash. */
struct proto_inv_vec {
	uint32_t type; /**< enum proto_inv_type, but any value as received */
	struct proto_hash hash;
};

/**
 * Name of an inventory type as Core logs it ("tx", "witness_block"), or
 * NULL for a type peerd does not know. The codec accepts any type (Core
 * ignores unknown ones in its handlers); this is for the handler and logs.
 */
const char *proto_inv_type_name(uint32_t type);

/** inv, getdata, notfound. Storage reused across decodes; at most one allocation. */
struct proto_inv {
	struct proto_inv_vec *v; /**< n entries (xmalloc'd, owned; proto_inv_release) */
	uint32_t n;
	uint32_t cap; /**< entries v can hold without growing */
};

/** getheaders and getblocks. Storage reused across decodes; at most one allocation. */
struct proto_locator {
	uint32_t version;          /**< protocol version; ignored by Core */
	struct proto_hash *hashes; /**< n hashes, newest first (owned; proto_locator_release) */
	uint32_t n;
	uint32_t cap;           /**< hashes the array holds without growing */
	struct proto_hash stop; /**< last hash wanted; zero for as many as allowed */
};

/** headers: each header is followed on the wire by a tx count (ignored, as Core). */
struct proto_headers {
	struct proto_block_header *h; /**< n headers (owned; proto_headers_release) */
	uint32_t n;
	uint32_t cap; /**< headers the array holds without growing */
};

/** BIP155 network ids. */
enum proto_bip155_net {
	PROTO_BIP155_IPV4 = 1,
	PROTO_BIP155_IPV6 = 2,
	PROTO_BIP155_TORV2 = 3,
	PROTO_BIP155_TORV3 = 4,
	PROTO_BIP155_I2P = 5,
	PROTO_BIP155_CJDNS = 6,
};

/** One address of addr (v1) or addrv2. */
struct proto_addr_entry {
	uint32_t time;
	uint64_t services;
	uint8_t net;      /**< enum proto_bip155_net */
	uint8_t addr_len; /**< bytes used in addr */
	uint8_t addr[32];
	uint16_t port; /**< host order */
};

/**
 * addr and addrv2. addr v1 entries are stored as BIP155 too: IPv4-mapped
 * IPv6 becomes IPV4 (4 bytes) and is mapped back on encode. addrv2 entries
 * with an unknown network id are skipped (counted in n_skipped), as Core.
 */
struct proto_addr {
	struct proto_addr_entry *v; /**< n entries (owned; proto_addr_release) */
	uint32_t n;
	uint32_t cap;       /**< entries the array holds without growing */
	uint32_t n_skipped; /**< addrv2 entries of unknown networks, not stored */
};

/** sendcmpct (BIP152). */
struct proto_sendcmpct {
	bool high_bandwidth; /**< announce blocks as cmpctblock without inv first */
	uint64_t version; /**< compact block version (2: with witnesses); any value as received */
};

/**
 * Storage for any decoded message. Not a union: each member keeps its own
 * buffers, so decoding the same command again into the same object costs no
 * allocation. Owned by one thread.
 */
struct proto_msg {
	enum proto_cmd cmd;
	struct proto_version version;
	uint64_t nonce;               /**< ping, pong */
	struct proto_inv inv;         /**< inv, getdata, notfound */
	struct proto_locator locator; /**< getheaders, getblocks */
	struct proto_headers headers;
	struct proto_tx tx;
	struct proto_block block;
	struct proto_addr addr; /**< addr, addrv2 */
	int64_t feerate;        /**< feefilter, sat/kvB */
	struct proto_sendcmpct sendcmpct;
};

/** Zero m so it can be decoded into or released. Allocates nothing. */
void proto_msg_init(struct proto_msg *m);
/** Free every member's storage; m is then as after init. */
void proto_msg_release(struct proto_msg *m);

/**
 * Decode the payload of command `cmd` into m (m->cmd set). Every length and
 * count is checked before use; trailing bytes are PROTO_ETRAILING except
 * where Core tolerates them: after version's optional fields, and in the
 * payload-less messages (verack, sendaddrv2, sendheaders, wtxidrelay,
 * getaddr, mempool), whose payload Core never reads. *err_off (may be
 * NULL) gets the offset of the failing item, or on success the bytes
 * consumed. PROTO_EUNKNOWN for PROTO_CMD_UNKNOWN. On error the message's
 * arrays hold no entries (n = 0) but keep their storage for reuse.
 * payload may be NULL when len is 0. Allocates at most once per array
 * message (none when m's storage is large enough); see proto/msg.c.
 */
PROTO_WUR int proto_msg_decode(enum proto_cmd cmd, const uint8_t *payload, size_t len,
                               struct proto_msg *m, size_t *err_off);
/**
 * Encode the payload of m->cmd (no frame header). PROTO_CMD_UNKNOWN (or a
 * value out of range) sets w->err to PROTO_EUNKNOWN.
 */
void proto_msg_encode(const struct proto_msg *m, struct proto_writer *w);
/** Encode m as a complete frame for network `magic`: header then payload, in place. */
void proto_msg_frame(const struct proto_msg *m, uint32_t magic, struct proto_writer *w);

/*
 * Per-message codecs, used by proto_msg_decode/encode and directly by
 * benches. Decoders read from r and leave it after the message (at the
 * failing field on error) without checking for trailing bytes; the array
 * decoders validate the count with proto_read_count before allocating,
 * grow storage at most once (none when it fits) and set n = 0 on error.
 * Encoders set w->err (sticky) and never fail otherwise.
 */
/**
 * version; optional tail as described at enum proto_version_tail. A user
 * agent over PROTO_MAX_SUBVERSION is PROTO_EOVERSIZE. Bytes after the relay
 * flag are not read.
 */
PROTO_WUR int proto_version_decode(struct proto_reader *r, struct proto_version *v);
/** PROTO_EOVERSIZE on a user agent over the limit, PROTO_EVALUE on a bad `omitted`. */
void proto_version_encode(const struct proto_version *v, struct proto_writer *w);
/** inv/getdata/notfound, max PROTO_MAX_INV entries; any type value is kept. */
PROTO_WUR int proto_inv_decode(struct proto_reader *r, struct proto_inv *inv);
/**
 * inv/getdata/notfound; errors in w->err. The count is not capped: keep it
 * within PROTO_MAX_INV or a peer will refuse the message.
 */
void proto_inv_encode(const struct proto_inv *inv, struct proto_writer *w);
/** Free the entries; inv is then empty and reusable. */
void proto_inv_release(struct proto_inv *inv);
/** getheaders/getblocks, max PROTO_MAX_LOCATOR hashes (the handler enforces 101). */
PROTO_WUR int proto_locator_decode(struct proto_reader *r, struct proto_locator *l);
/** getheaders/getblocks; errors in w->err. */
void proto_locator_encode(const struct proto_locator *l, struct proto_writer *w);
/** Free the hashes; l is then empty and reusable. */
void proto_locator_release(struct proto_locator *l);
/**
 * headers, max PROTO_MAX_HEADERS. The tx count after each header must be a
 * canonical CompactSize <= PROTO_MAX_SIZE and is ignored (Core); encode
 * writes 0.
 */
PROTO_WUR int proto_headers_decode(struct proto_reader *r, struct proto_headers *h);
/** headers, each followed by a zero tx count; errors in w->err. */
void proto_headers_encode(const struct proto_headers *h, struct proto_writer *w);
/** Free the headers; h is then empty and reusable. */
void proto_headers_release(struct proto_headers *h);
/** addr (v1), max PROTO_MAX_ADDR; IPv4-mapped becomes IPV4, anything else IPV6. */
PROTO_WUR int proto_addr_decode(struct proto_reader *r, struct proto_addr *a);
/**
 * addr (v1). IPV4 is written IPv4-mapped, IPV6 and CJDNS as is, other
 * networks as 16 zero bytes (Core's V1 form); an entry whose length does not
 * fit its network sets PROTO_EVALUE.
 */
void proto_addr_encode(const struct proto_addr *a, struct proto_writer *w);
/**
 * addrv2 (BIP155), max PROTO_MAX_ADDR: address over PROTO_MAX_ADDRV2_SIZE is
 * PROTO_EOVERSIZE, a known network with the wrong length PROTO_EVALUE, an
 * unknown network id skipped and counted in n_skipped.
 */
PROTO_WUR int proto_addrv2_decode(struct proto_reader *r, struct proto_addr *a);
/** addrv2; PROTO_EVALUE for an entry whose length does not fit its network. */
void proto_addrv2_encode(const struct proto_addr *a, struct proto_writer *w);
/** Free the entries; a is then empty and reusable. */
void proto_addr_release(struct proto_addr *a);
/** Outpoint, txin, txout pieces (benchmarks mirror btcd's): 36 bytes; 0 or PROTO_ETRUNC. */
PROTO_WUR int proto_outpoint_decode(struct proto_reader *r, struct proto_outpoint *o);
/** Append the 36-byte outpoint; errors in w->err. */
void proto_outpoint_encode(const struct proto_outpoint *o, struct proto_writer *w);

#endif
