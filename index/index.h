/**
 * index/index.h: the optional indexes built from the block files, as
 * Bitcoin Core's src/index/: the transaction index (-txindex: txid to the
 * block that holds it) and the BIP158 basic block filter index
 * (-blockfilterindex: each block's filter and filter header). The public
 * face of index/.
 *
 * Glossary
 *   best block  the last block an index has taken in; kept in the index's
 *               own database with what it took, in one transaction, so an
 *               index is never between two blocks. It follows the active
 *               chain: forward block by block, back to the fork on a reorg.
 *   synced      the index's best block is the chain's tip, or was once since
 *               it opened (Core's BaseIndex::m_synced latches: getindexinfo
 *               stays true while the index follows a block behind).
 *   GCS         BIP158's Golomb-coded set: N sorted 64-bit values mapped
 *               into [0, N*M), each delta coded with Golomb-Rice of P bits.
 *   filter header  SHA256d(SHA256d(filter) || previous filter header); the
 *               genesis block's previous header is 32 zero bytes.
 *
 * Layout (Core's names): each index is an LMDB environment of its own,
 * <netdir>/indexes/txindex/ and <netdir>/indexes/blockfilter/basic/.
 * Entries are keyed by transaction id and by block hash, so a block the
 * reorg took away keeps its filter and its transactions' entries (Core
 * keeps them too: getblockfilter answers for a stale block; a txid stays
 * pointed at the stale block until the transaction confirms again).
 *
 * index/ uses chain/ and proto/ and LMDB, never libuv. Threads: an
 * index_set belongs to the thread that owns the chain (the validation
 * thread in peerd); nothing here locks.
 */
#ifndef PEERD_INDEX_H
#define PEERD_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/chain.h"
#include "proto/proto.h"

/** On every fallible call: an ignored error code is a compile error (-Werror). */
#define INDEX_WUR __attribute__((warn_unused_result))

/** index/ error codes: 0 is success, every error is negative. */
enum index_err {
	INDEX_OK = 0,         /**< success */
	INDEX_ENOMEM = -1,    /**< allocation failed */
	INDEX_ENOTFOUND = -2, /**< no such entry */
	INDEX_EDB = -3,       /**< LMDB failed (the log says how) */
	INDEX_EIO = -4,       /**< a directory could not be made */
	INDEX_ECORRUPT = -5,  /**< an entry does not decode */
	INDEX_ECHAIN = -6,    /**< reading a block or its undo data from chain/ failed */
};

/** A one-line English description of an index_err; never NULL. */
const char *index_strerror(int err);

/* ---- BIP158 (index/gcs.c): pure, any thread --------------------------- */

/** BIP158 basic filter's Golomb-Rice parameter. */
#define INDEX_BASIC_P 19
/** BIP158 basic filter's false-positive rate parameter. */
#define INDEX_BASIC_M 784931u

/**
 * The basic filter of block b (hash `block_hash`) into w (growable or
 * fixed; errors in w->err): its elements are every output script but the
 * empty ones and those starting with OP_RETURN, and every script the
 * block spent (the `n_spent` scripts `spent[i]`, `spent_len[i]` bytes,
 * from its undo data), each once. INDEX_OK or INDEX_ENOMEM.
 */
INDEX_WUR int index_filter_basic(const struct proto_block *b, const struct proto_hash *block_hash,
                                 const uint8_t *const *spent, const uint32_t *spent_len,
                                 size_t n_spent, struct proto_writer *w);
/** One element of a Golomb-coded set: bytes borrowed from the caller. */
struct index_gcs_elem {
	const uint8_t *p;
	uint32_t len;
};
/**
 * The GCS (P = INDEX_BASIC_P, M = INDEX_BASIC_M) of the n elements e, which
 * must be distinct (Core's ElementSet), keyed by `key` (SipHash's k0 and k1,
 * little-endian: a block hash's first 16 bytes), into w: N as a compact
 * size, then the sorted hashed values' deltas (Core's GCSFilter made from
 * elements). INDEX_OK (a write error is in w->err) or INDEX_ENOMEM.
 */
INDEX_WUR int index_gcs_encode(const uint8_t key[16], const struct index_gcs_elem *e, size_t n,
                               struct proto_writer *w);
/**
 * Core's decode check of an encoded GCS: N, then exactly N Golomb-Rice
 * values filling the bytes (none short, none left over). INDEX_OK with N
 * in *n (may be NULL), or INDEX_ECORRUPT.
 */
INDEX_WUR int index_gcs_check(const uint8_t *f, size_t len, uint32_t *n);
/**
 * Whether the element (elem, elem_len bytes) is in the GCS f made with
 * `key` (Core's GCSFilter::Match: false positives at 1 in M): INDEX_OK with
 * *match, or INDEX_ECORRUPT when f ends before the answer.
 */
INDEX_WUR int index_gcs_match(const uint8_t key[16], const uint8_t *f, size_t len,
                              const uint8_t *elem, size_t elem_len, bool *match);
/** The filter header of an encoded filter after prev (BIP157). */
void index_filter_header(const uint8_t *filter, size_t len, const struct proto_hash *prev,
                         struct proto_hash *out);

/* ---- MuHash3072 (index/muhash.c): pure, any thread -------------------- */

/** Bytes of a MuHash3072 number (3072 bits, little-endian). */
#define INDEX_MUHASH_BYTES 384

/**
 * Core's MuHash3072 (crypto/muhash.h): a hash of a set of byte strings,
 * kept as numerator / denominator modulo 2^3072 - 1103717, so that
 * inserting and removing commute. Opaque; one thread at a time.
 */
struct index_muhash;

/** A new, empty set's hash (1/1), or NULL when out of memory; index_muhash_free frees it. */
struct index_muhash *index_muhash_new(void);
/** Free m; NULL is fine. */
void index_muhash_free(struct index_muhash *m);
/** Back to the empty set's 1/1. */
void index_muhash_reset(struct index_muhash *m);
/** Core's Insert: multiply the numerator by the element's number. */
void index_muhash_insert(struct index_muhash *m, const void *data, size_t len);
/** Core's Remove: multiply the denominator by the element's number. */
void index_muhash_remove(struct index_muhash *m, const void *data, size_t len);
/** Core's operator*=: m's numerator and denominator times o's. */
void index_muhash_mul(struct index_muhash *m, const struct index_muhash *o);
/** Core's operator/=: m's numerator times o's denominator, and the reverse. */
void index_muhash_div(struct index_muhash *m, const struct index_muhash *o);
/**
 * Core's Finalize: divide (m becomes num/den over 1; still usable) and
 * write SHA-256 of the 384 little-endian bytes, in internal byte order
 * (Core's uint256; its hex is the reverse).
 */
void index_muhash_finalize(struct index_muhash *m, uint8_t out[32]);
/** The state as one number (divides first, as finalize): what index_muhash_load takes back. */
void index_muhash_save(struct index_muhash *m, uint8_t out[INDEX_MUHASH_BYTES]);
/** Set m to a number index_muhash_save wrote (over a denominator of 1). */
void index_muhash_load(struct index_muhash *m, const uint8_t in[INDEX_MUHASH_BYTES]);
/** Core's serialization: numerator then denominator, 384 little-endian bytes each. */
void index_muhash_serialize(const struct index_muhash *m, uint8_t out[2 * INDEX_MUHASH_BYTES]);
/** Read Core's serialization back (a number at or over the modulus is reduced, as Core). */
void index_muhash_deserialize(struct index_muhash *m, const uint8_t in[2 * INDEX_MUHASH_BYTES]);

/* ---- The indexes (index/set.c, index/db.c) ---------------------------- */

/** Which indexes to keep. */
struct index_config {
	const char *netdir; /**< the network's directory: indexes/ goes inside */
	bool txindex;       /**< -txindex */
	bool blockfilter;   /**< -blockfilterindex=basic */
	bool coinstats;     /**< -coinstatsindex */
	bool wipe;          /**< start the indexes over (Core's -reindex wipes them too) */
	chain_log_fn log;   /**< may be NULL */
	void *log_arg;
};

/** The open indexes; opaque. */
struct index_set;

/** Which index of a set. */
enum index_kind {
	INDEX_TX = 0,       /**< Core's "txindex" */
	INDEX_FILTER_BASIC, /**< Core's "basic block filter index" */
	INDEX_COINSTATS,    /**< Core's "coinstatsindex" (index/coinstats.c) */
	INDEX__COUNT,
};

/**
 * Open (creating) the configured indexes' databases. *out is NULL when
 * none is configured. INDEX_OK, INDEX_EIO, INDEX_EDB or INDEX_ENOMEM.
 */
INDEX_WUR int index_set_open(struct index_set **out, const struct index_config *cfg);
/** Close everything; NULL is fine. */
void index_set_close(struct index_set *s);
/** Whether index k is kept. */
bool index_set_has(const struct index_set *s, enum index_kind k);
/** Core's name of index k in getindexinfo ("txindex", "basic block filter index"). */
const char *index_name(enum index_kind k);

/**
 * Start following chain c: register a chain listener that takes each new
 * tip in while the index is synced, and steps back on a disconnect. The
 * chain's thread. INDEX_OK or INDEX_EDB (no listener slot).
 */
INDEX_WUR int index_set_attach(struct index_set *s, struct chain *c);
/**
 * Background catch-up: take in up to `max_blocks` blocks of the active
 * chain after each index's best block (after stepping back to the active
 * chain when a reorg left it off). *more is set when an index is still
 * behind. The chain's thread, between jobs. INDEX_OK or an error (logged;
 * the index stops where it was).
 */
INDEX_WUR int index_set_step(struct index_set *s, struct chain *c, uint32_t max_blocks, bool *more);
/**
 * Index k's best block: *height (-1 before genesis) and whether it is
 * synced (*synced: at the chain's tip, or was since it opened, as Core's
 * m_synced). The chain's thread.
 */
void index_set_status(const struct index_set *s, const struct chain *c, enum index_kind k,
                      int32_t *height, bool *synced);

/**
 * The transaction index: the block that holds txid. INDEX_OK,
 * INDEX_ENOTFOUND, INDEX_EDB. The chain's thread.
 */
INDEX_WUR int index_tx_find(struct index_set *s, const struct proto_hash *txid,
                            struct proto_hash *block);
/**
 * The basic filter of block `block` (xmalloc'd into *filter, *len; the
 * caller frees) and its header. INDEX_OK, INDEX_ENOTFOUND, INDEX_EDB,
 * INDEX_ECORRUPT, INDEX_ENOMEM. The chain's thread.
 */
INDEX_WUR int index_filter_find(struct index_set *s, const struct proto_hash *block,
                                uint8_t **filter, size_t *len, struct proto_hash *header);

/**
 * The coinstats index's record of a block: the UTXO set after it (Core's
 * CoinStatsIndex DBVal). Amounts in satoshis; every total runs from
 * genesis, so a block's own figures are its record minus its parent's.
 */
struct index_coinstats {
	uint8_t muhash[32];                     /**< the set's MuHash3072, internal byte order */
	uint64_t txouts;                        /**< unspent outputs */
	uint64_t bogosize;                      /**< Core's GetBogoSize sum */
	int64_t total_amount;                   /**< value of the set */
	int64_t total_subsidy;                  /**< block subsidies so far */
	int64_t total_unspendable;              /**< every unspendable amount below */
	int64_t total_prevout_spent;            /**< coins spent */
	int64_t total_new_outputs_ex_coinbase;  /**< spendable outputs of other transactions */
	int64_t total_coinbase;                 /**< spendable coinbase outputs */
	int64_t unspendables_genesis_block;     /**< the genesis coinbase */
	int64_t unspendables_bip30;             /**< the two overwritten mainnet coinbases */
	int64_t unspendables_scripts;           /**< OP_RETURN and oversized output scripts */
	int64_t unspendables_unclaimed_rewards; /**< subsidy and fees no output took */
};

/**
 * The coinstats index's record of block `block` (on the active chain or
 * a stale branch it once took in). INDEX_OK, INDEX_ENOTFOUND, INDEX_EDB,
 * INDEX_ECORRUPT. The chain's thread.
 */
INDEX_WUR int index_coinstats_find(struct index_set *s, const struct chain_node *block,
                                   struct index_coinstats *out);

#endif
