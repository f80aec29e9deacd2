/**
 * chain/compress.h: Bitcoin Core's compact encodings of coins, shared by
 * the coins database (chain/coinsdb.c) and the undo format (chain/store.h).
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * Glossary
 *   VARINT      Core's serialize.h VARINT: base-128, most significant group
 *               first, each non-last byte with the high bit set and one
 *               subtracted, so every value has exactly one encoding. Not
 *               CompactSize.
 *   amount      Core's CompressAmount: trailing decimal zeros folded into
 *               a small exponent, so round values take one or two bytes.
 *   script      Core's ScriptCompression: P2PKH and P2SH become 21 bytes,
 *               P2PK 33 bytes (type byte 0x00-0x05); any other script is
 *               VARINT(size + 6) and the bytes.
 *
 * Pure functions; any thread.
 */
#ifndef PEERD_CHAIN_COMPRESS_H
#define PEERD_CHAIN_COMPRESS_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/compress.h"
#endif

/** Longest VARINT of a 64-bit value. */
#define CHAIN_VARINT_MAX 10u
/** Longest script a special (type 0x00-0x05) encoding expands to: P2PK uncompressed. */
#define CHAIN_SCRIPT_SPECIAL_MAX 67u

/** Encode v as Core's VARINT into out; returns the length (1..CHAIN_VARINT_MAX). */
size_t chain_varint_encode(uint8_t out[CHAIN_VARINT_MAX], uint64_t v);
/** Append v as Core's VARINT; errors in w->err. */
void chain_varint_write(struct proto_writer *w, uint64_t v);
/**
 * Read a VARINT no larger than `max`. 0, or CHAIN_ECORRUPT when truncated,
 * over `max` or over 64 bits (r is then left unchanged).
 */
CHAIN_WUR int chain_varint_read(struct proto_reader *r, uint64_t max, uint64_t *v);

/** Core's CompressAmount (any uint64_t; values over 21e14 satoshis are fine too). */
uint64_t chain_compress_amount(uint64_t n);
/**
 * Core's DecompressAmount, the inverse of chain_compress_amount on its
 * range. An input no compression produced may wrap (unsigned, defined);
 * callers check the result against PROTO_MAX_MONEY.
 */
uint64_t chain_decompress_amount(uint64_t x);

/**
 * Append a scriptPubKey in Core's ScriptCompression format: the special
 * forms for P2PKH, P2SH, P2PK with a compressed key and P2PK with a valid
 * uncompressed key (checked with libsecp256k1, as Core's IsFullyValid),
 * else VARINT(len + 6) and the bytes. Errors in w->err.
 */
void chain_script_compress(struct proto_writer *w, const uint8_t *script, uint32_t len);
/**
 * Read a compressed script. A special form is expanded into `special`
 * (the caller's, CHAIN_SCRIPT_SPECIAL_MAX bytes) and *script points there;
 * a plain script is not copied: *script points into r's input. A plain
 * script over Core's MAX_SCRIPT_SIZE (10,000) is skipped and read as a
 * lone OP_RETURN, as Core does. 0, or CHAIN_ECORRUPT (truncated, or a
 * 0x04/0x05 key that is not on the curve); r is then at an unspecified
 * place inside the record.
 */
CHAIN_WUR int chain_script_decompress(struct proto_reader *r,
                                      uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX],
                                      const uint8_t **script, uint32_t *len);

/** Append an output as Core's TxOutCompression: VARINT(compressed amount), script. */
void chain_txout_compress(struct proto_writer *w, int64_t value, const uint8_t *script,
                          uint32_t len);
/**
 * Read an output written by chain_txout_compress; `special`, *script and
 * *len as chain_script_decompress. 0, or CHAIN_ECORRUPT (also for a
 * value over PROTO_MAX_MONEY).
 */
CHAIN_WUR int chain_txout_decompress(struct proto_reader *r, int64_t *value,
                                     uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX],
                                     const uint8_t **script, uint32_t *len);

#endif
