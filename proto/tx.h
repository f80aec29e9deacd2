/**
 * proto/tx.h: transactions, blocks, merkle roots and proof of work.
 *
 * Part of proto/proto.h, the module's one public face: include that,
 * not this file. Split out only to keep each file about one thing.
 */
#ifndef PEERD_PROTO_TX_H
#define PEERD_PROTO_TX_H

#ifndef PEERD_PROTO_H
#error "include proto/proto.h, not proto/tx.h"
#endif

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

#endif
