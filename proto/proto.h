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
/** The least capacity proto_inv_reserve gives a list that grows (entries). */
#define PROTO_INV_MIN_RESERVE 64u
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
/** Room for any amount as proto_format_money writes it ("-92233720368.54775808"). */
#define PROTO_MONEY_STRLEN 32
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

/**
 * An amount in satoshis as Bitcoin Core's FormatMoney writes it: BTC with
 * eight decimals, trailing zeros trimmed down to two ("0.00", "0.10",
 * "0.00001", "-1.23456789"). Any int64_t, INT64_MIN included. Pure; any thread.
 */
void proto_format_money(int64_t sats, char out[PROTO_MONEY_STRLEN]);

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

/* Reader and writer cursors: proto/cursor.h */
#include "proto/cursor.h"

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
/* Transactions, blocks, merkle, proof of work: proto/tx.h */
#include "proto/tx.h"
/* Network parameters: proto/params.h */
#include "proto/params.h"
/* Framing and messages: proto/msg.h */
#include "proto/msg.h"

#endif
