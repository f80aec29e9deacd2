/**
 * proto/msg_cmpct.h: BIP152's messages (cmpctblock, getblocktxn,
 * blocktxn) and short transaction ids.
 *
 * Part of proto/proto.h, the module's one public face: include that,
 * not this file. Split out only to keep each file about one thing.
 *
 * Glossary
 *   short id     the low 48 bits of SipHash-2-4 over a transaction's wtxid,
 *                keyed by the first 16 bytes of SHA-256(header || nonce):
 *                6 bytes on the wire, little-endian.
 *   prefilled    a transaction sent whole inside the cmpctblock (always the
 *                coinbase), at an index given as the difference from the
 *                previous prefilled index minus one (Core's
 *                PrefilledTransaction: a CompactSize that must fit 16 bits).
 *   differential getblocktxn's indexes on the wire: each the gap from the
 *                previous index plus one (Core's DifferenceFormatter); the
 *                struct holds the absolute indexes.
 *
 * Bounds, as Core's blockencodings.h: a cmpctblock stands for at most
 * 65,535 transactions (short ids plus prefilled, "indexes overflowed 16
 * bits"), a getblocktxn index is at most 65,535 ("differential value
 * overflow"). The decoders check each count against these limits and
 * against the bytes left before allocating anything, and grow
 * transaction arrays only as transactions actually decode, so a message
 * never costs more memory than a small multiple of its own size.
 */
#ifndef PEERD_PROTO_MSG_CMPCT_H
#define PEERD_PROTO_MSG_CMPCT_H

#ifndef PEERD_PROTO_H
#error "include proto/proto.h, not proto/msg_cmpct.h"
#endif

/** Bytes of a short transaction id on the wire (BIP152 SHORTTXIDS_LENGTH). */
#define PROTO_CMPCT_SHORTID_SIZE 6u
/** The short ids' mask: 48 bits. */
#define PROTO_CMPCT_SHORTID_MASK 0xffffffffffffULL
/** Most transactions a cmpctblock may stand for (Core: BlockTxCount fits uint16). */
#define PROTO_CMPCT_MAX_TXS 65535u
/** Largest index getblocktxn or a prefilled transaction may name (uint16). */
#define PROTO_CMPCT_MAX_INDEX 65535u
/** Compact block version peerd speaks (2: short ids over wtxids, BIP152 + segwit). */
#define PROTO_CMPCT_VERSION 2u

/** A prefilled transaction of a cmpctblock. */
struct proto_prefilled {
	uint16_t index; /**< differential, as on the wire: gap from the previous one, minus one */
	struct proto_tx tx; /**< owned (decoded with proto_tx_decode) */
};

/**
 * cmpctblock (Core's CBlockHeaderAndShortTxIDs). Storage reused across
 * decodes; released by proto_cmpctblock_release.
 */
struct proto_cmpctblock {
	struct proto_block_header hdr;
	uint64_t nonce;     /**< the short-id salt the sender chose */
	uint64_t *shortids; /**< n_short ids, each < 2^48 (owned) */
	uint32_t n_short;
	uint32_t short_cap;
	struct proto_prefilled *prefilled; /**< n_prefilled entries (owned) */
	uint32_t n_prefilled;
	uint32_t prefilled_cap; /**< entries initialised (proto_tx_init), for reuse */
};

/** getblocktxn (Core's BlockTransactionsRequest). */
struct proto_getblocktxn {
	struct proto_hash block; /**< the block's hash */
	uint16_t *indexes;       /**< n absolute indexes, strictly increasing (owned) */
	uint32_t n;
	uint32_t cap;
};

/** blocktxn (Core's BlockTransactions). */
struct proto_blocktxn {
	struct proto_hash block; /**< the block's hash */
	struct proto_tx *txs;    /**< n transactions (owned) */
	uint32_t n;
	uint32_t cap; /**< entries initialised (proto_tx_init), for reuse */
};

/**
 * The SipHash key of a compact block's short ids: the first 16 bytes of
 * SHA-256(80-byte header || nonce as 8 bytes little-endian), which are
 * BIP152's k0 and k1 as SipHash reads its key.
 */
void proto_cmpct_shortid_key(const struct proto_block_header *hdr, uint64_t nonce, uint8_t key[16]);
/** A transaction's short id under `key`: SipHash-2-4 of its wtxid, low 48 bits. */
uint64_t proto_cmpct_shortid(const uint8_t key[16], const struct proto_hash *wtxid);

/**
 * cmpctblock. PROTO_ECOUNT when short ids plus prefilled transactions are
 * over PROTO_CMPCT_MAX_TXS, PROTO_EOVERSIZE for a prefilled index gap over
 * 65,535; each prefilled transaction as proto_tx_decode. Indexes are not
 * interpreted here (a gap past the end is the reconstruction's
 * "invalid", as Core's InitData, not a decoding error).
 */
PROTO_WUR int proto_cmpctblock_decode(struct proto_reader *r, struct proto_cmpctblock *cb);
/** cmpctblock; a short id over 48 bits sets PROTO_EVALUE. */
void proto_cmpctblock_encode(const struct proto_cmpctblock *cb, struct proto_writer *w);
/**
 * Room for n prefilled transactions, the first cb->n_prefilled kept and
 * every slot initialised: what builders fill. 0 or PROTO_ENOMEM.
 */
PROTO_WUR int proto_cmpctblock_reserve_prefilled(struct proto_cmpctblock *cb, uint32_t n);
/** Room for n short ids, the first cb->n_short kept. 0 or PROTO_ENOMEM. */
PROTO_WUR int proto_cmpctblock_reserve_shortids(struct proto_cmpctblock *cb, uint32_t n);
/** Free everything; cb is then empty and reusable. */
void proto_cmpctblock_release(struct proto_cmpctblock *cb);

/**
 * getblocktxn: an index past 65,535 (or a gap that overflows) is
 * PROTO_EVALUE, as Core's "differential value overflow".
 */
PROTO_WUR int proto_getblocktxn_decode(struct proto_reader *r, struct proto_getblocktxn *g);
/** getblocktxn; indexes not strictly increasing set PROTO_EVALUE. */
void proto_getblocktxn_encode(const struct proto_getblocktxn *g, struct proto_writer *w);
/** Room for n indexes, the first g->n kept. 0 or PROTO_ENOMEM. */
PROTO_WUR int proto_getblocktxn_reserve(struct proto_getblocktxn *g, uint32_t n);
/** Free the indexes; g is then empty and reusable. */
void proto_getblocktxn_release(struct proto_getblocktxn *g);

/** blocktxn: each transaction as proto_tx_decode. */
PROTO_WUR int proto_blocktxn_decode(struct proto_reader *r, struct proto_blocktxn *b);
/** blocktxn, each transaction with its witness; errors in w->err. */
void proto_blocktxn_encode(const struct proto_blocktxn *b, struct proto_writer *w);
/** Room for n transactions, the first b->n kept and every slot initialised. 0 or PROTO_ENOMEM. */
PROTO_WUR int proto_blocktxn_reserve(struct proto_blocktxn *b, uint32_t n);
/** Free everything; b is then empty and reusable. */
void proto_blocktxn_release(struct proto_blocktxn *b);

#endif
