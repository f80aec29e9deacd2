/**
 * chain/store.h: the block store: blocks appended to blocks/blkNNNNN.dat
 * and their undo data to blocks/revNNNNN.dat, in Bitcoin Core's formats,
 * so Core's -loadblock and peertool read peerd's files and the other way
 * round.
 *
 * Part of chain/chain.h: include that, not this file.
 *
 * Record formats (Core's):
 *   blk: magic (4, LE) | size (4, LE) | block
 *   rev: magic (4, LE) | size (4, LE) | CBlockUndo | SHA256d(prev block hash | CBlockUndo)
 * A CBlockUndo is a CompactSize count of CTxUndo (one per non-coinbase
 * transaction), each a CompactSize count of spent coins in input order,
 * each coin as Core's TxInUndoFormatter: VARINT(height*2+coinbase), a
 * VARINT 0 when height > 0, then the output with Core's amount
 * compression and script compression.
 *
 * Obfuscation (Core 28+): every byte of both kinds of file is stored XORed
 * with the key in blocks/xor.dat, byte i of the key for file offset o
 * with o % 8 == i (chain/xorkey.c); a zero key is the plain format.
 *
 * Threads: one thread owns a store; chain_store_read_block_shared is the
 * one call any thread may make.
 */
#ifndef PEERD_CHAIN_STORE_H
#define PEERD_CHAIN_STORE_H

#ifndef PEERD_CHAIN_PARTS
#error "include chain/chain.h, not chain/store.h"
#endif

/** A blk file is closed once it would pass this size (Core MAX_BLOCKFILE_SIZE). */
#define CHAIN_MAX_BLOCKFILE_SIZE 0x8000000u

/** Where a record is: file number and the offset of the data after magic and size. */
struct chain_pos {
	int32_t file;
	uint32_t pos;
};

/** One spent coin, owned (script from xmalloc). */
struct chain_undo_coin {
	int64_t value;
	uint32_t height;
	bool coinbase;
	uint32_t script_len;
	uint8_t *script;
};

/**
 * The coins a block spent: for each non-coinbase transaction (tx i + 1 of
 * the block is entry i) the coins its inputs spent, in input order.
 * n_coins[i] coins start at coins[first[i]]. Owned; chain_block_undo_release.
 */
struct chain_block_undo {
	uint32_t n_tx;
	uint32_t *first;
	uint32_t *n_coins;
	uint32_t total;
	struct chain_undo_coin *coins;
};

/** Zero an undo so it can be filled or released. */
void chain_block_undo_init(struct chain_block_undo *u);
/** Free everything an undo owns; it is then as after init. */
void chain_block_undo_release(struct chain_block_undo *u);
/** Core's serialization of a CBlockUndo into w (errors in w->err). */
void chain_block_undo_encode(const struct chain_block_undo *u, struct proto_writer *w);
/**
 * Decode Core's serialization (every count checked against the bytes
 * left before anything is allocated). 0, CHAIN_ECORRUPT or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_block_undo_decode(const uint8_t *data, size_t len, struct chain_block_undo *u);

/** Bytes in Core's block-file obfuscation key (blocks/xor.dat). */
#define CHAIN_XOR_KEY_SIZE 8

/**
 * XOR len bytes of buf, which sit at offset `off` of a block or undo file,
 * with the key (Core's util::Xor): the same call obfuscates and
 * deobfuscates. A zero key changes nothing and costs nothing. Any thread.
 */
void chain_xor(uint8_t *buf, size_t len, const uint8_t key[CHAIN_XOR_KEY_SIZE], uint64_t off);
/** Whether all eight bytes of the key are zero (the plain format). */
bool chain_xor_key_is_zero(const uint8_t key[CHAIN_XOR_KEY_SIZE]);
/**
 * Read <blocks_dir>/xor.dat into key (zeroed first). 0, CHAIN_ENOTFOUND
 * (no such file: the key stays zero), CHAIN_ECORRUPT (shorter than 8
 * bytes) or CHAIN_EIO. Any thread.
 */
CHAIN_WUR int chain_xor_key_read(const char *blocks_dir, uint8_t key[CHAIN_XOR_KEY_SIZE]);
/**
 * Core's InitBlocksdirXorKey for the blocks directory (which must exist):
 * the stored key if xor.dat is there; else a new xor.dat with a random key
 * when use_xor and the directory holds only hidden files (a first start),
 * a zero key otherwise. With !use_xor a non-zero stored key is refused.
 * On failure msg (cap bytes) says why in Core's words. 0, CHAIN_EARG
 * (refused), CHAIN_ECORRUPT or CHAIN_EIO.
 */
CHAIN_WUR int chain_xor_key_init(const char *blocks_dir, bool use_xor,
                                 uint8_t key[CHAIN_XOR_KEY_SIZE], char *msg, size_t cap);

/** The store; opaque. */
struct chain_store;

/**
 * Open the store in `dir`, the directory that holds the blk and rev files
 * (peerd's <netdir>/blocks; created if missing), for the network with wire
 * magic `magic`: finds the last blk file and appends there. 0, CHAIN_EIO
 * or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_store_open(struct chain_store **out, const char *dir, uint32_t magic);
/**
 * Use this obfuscation key for every read and write from now on (the
 * store starts with a zero key: the plain format). Set it right after
 * opening, before any record is read or written.
 */
void chain_store_set_xor_key(struct chain_store *s, const uint8_t key[CHAIN_XOR_KEY_SIZE]);
/** fsync and close; NULL is fine. */
void chain_store_close(struct chain_store *s);

/**
 * Append a block (raw serialization) to the current blk file, moving to
 * the next file when this one would pass CHAIN_MAX_BLOCKFILE_SIZE.
 * *pos gets where it is. 0, CHAIN_EIO, CHAIN_ENOSPC (nothing written:
 * the disk would keep less than CHAIN_MIN_DISK_SPACE, or the write found
 * it full) or CHAIN_EOVERFLOW.
 */
CHAIN_WUR int chain_store_write_block(struct chain_store *s, const uint8_t *raw, size_t len,
                                      struct chain_pos *pos);
/**
 * Read the block at pos into an xmalloc'd buffer (*raw, *len; the caller
 * frees). Checks the record's magic and size. 0, CHAIN_ENOTFOUND,
 * CHAIN_ECORRUPT, CHAIN_EIO or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_store_read_block(struct chain_store *s, const struct chain_pos *pos,
                                     uint8_t **raw, size_t *len);
/**
 * chain_store_read_block into the caller's buffer *buf of *cap bytes, kept
 * between reads: it is replaced by a larger one (xmalloc'd, *cap updated)
 * only when the block does not fit, and stays the caller's either way
 * (NULL and 0 to start; xfree it when done). *len gets the block's size.
 * On failure *buf still holds a valid buffer (or NULL), its bytes
 * unspecified. Errors as chain_store_read_block.
 */
CHAIN_WUR int chain_store_read_block_into(struct chain_store *s, const struct chain_pos *pos,
                                          uint8_t **buf, size_t *cap, size_t *len);
/**
 * chain_store_read_block_into for any thread, beside the owner's work: the
 * file is opened for this read alone, under a lock that
 * chain_store_remove_file (pruning) takes exclusively, so a file never
 * goes mid-read; a pruned block's file is CHAIN_ENOTFOUND. The store must
 * outlive the call (chain_store_close only once no shared read runs).
 * Errors as chain_store_read_block.
 */
CHAIN_WUR int chain_store_read_block_shared(struct chain_store *s, const struct chain_pos *pos,
                                            uint8_t **buf, size_t *cap, size_t *len);
/**
 * Append undo data for a block whose parent is `prev`, to rev file
 * `file` (the block's blk file number, as Core). *pos gets where. 0,
 * CHAIN_EIO, CHAIN_ENOSPC (as chain_store_write_block) or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_store_write_undo(struct chain_store *s, int32_t file,
                                     const struct chain_block_undo *u,
                                     const struct proto_hash *prev, struct chain_pos *pos);
/**
 * Read undo data back and check its checksum against `prev`. 0,
 * CHAIN_ENOTFOUND, CHAIN_ECORRUPT, CHAIN_EIO or CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_store_read_undo(struct chain_store *s, const struct chain_pos *pos,
                                    const struct proto_hash *prev, struct chain_block_undo *u);
/** Where the next block would go: the current blk file and its length. */
void chain_store_tell(const struct chain_store *s, struct chain_pos *end);
/**
 * Read every block record from `from` (a chain_store_tell position) to the
 * end of the last blk file, in order, calling fn with each block's
 * position and bytes (valid during the call). A torn or corrupt record ends
 * the walk quietly: it is what a crash leaves at the tail. fn's non-zero
 * return stops the walk and is returned. 0, fn's error, CHAIN_EIO or
 * CHAIN_ENOMEM.
 */
CHAIN_WUR int chain_store_scan(struct chain_store *s, const struct chain_pos *from,
                               int (*fn)(const struct chain_pos *pos, const uint8_t *raw,
                                         size_t len, void *arg),
                               void *arg);

/**
 * Whether blk (rev false) or rev file `file` is there; `path` (cap bytes)
 * gets its name either way. 0, CHAIN_ENOTFOUND, CHAIN_EIO or CHAIN_EARG.
 */
CHAIN_WUR int chain_store_file_present(const struct chain_store *s, bool rev, int32_t file,
                                       char *path, size_t cap);
/**
 * chain_disk_space for the store's directory: 0 when CHAIN_MIN_DISK_SPACE
 * plus `additional` bytes are free there, CHAIN_ENOSPC or CHAIN_EIO.
 */
CHAIN_WUR int chain_store_space(const struct chain_store *s, uint64_t additional);
/**
 * Delete every rev file (a full reindex writes all undo data again, from
 * the start of each file, as Core's wiped block-file info does). 0 or
 * CHAIN_EIO.
 */
CHAIN_WUR int chain_store_drop_undo(struct chain_store *s);
/** The last blk file's number (the one appended to). */
int32_t chain_store_last_file(const struct chain_store *s);
/** fsync the files written since the last sync (before a database flush). 0 or CHAIN_EIO. */
CHAIN_WUR int chain_store_sync(struct chain_store *s);
/**
 * Delete blk and rev file `file` (pruning; Core's UnlinkPrunedFiles),
 * closing their descriptors first. Never the file being appended to
 * (CHAIN_EARG). A file already gone is fine. 0, CHAIN_EARG or CHAIN_EIO.
 */
CHAIN_WUR int chain_store_remove_file(struct chain_store *s, int32_t file);
/** Bytes of blk (rev false) or rev file `file`; 0 when it is not there. */
uint64_t chain_store_file_size(const struct chain_store *s, bool rev, int32_t file);
/**
 * Start a new blk file once one would reach `max` bytes instead of
 * CHAIN_MAX_BLOCKFILE_SIZE (0 restores that): -fastprune's 64 KiB files,
 * and tests that cross file boundaries with a few small blocks.
 */
void chain_store_set_max_file_size(struct chain_store *s, uint32_t max);

#endif
