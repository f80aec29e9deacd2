/**
 * bip324/bip324.h: BIP324's cryptography (the v2 P2P transport's keys and
 * packet cipher), as Bitcoin Core 29's bip324.cpp, crypto/chacha20.cpp,
 * crypto/chacha20poly1305.cpp and libsecp256k1's ellswift module, built on
 * libsecp256k1 0.2.0's public calls, libsodium and nettle. No I/O, no
 * libuv: the transport (daemon/net/) will drive it.
 *
 * Glossary (Core's names in brackets):
 *   ElligatorSwift  a 64-byte encoding (u, t) of a public key's x
 *                   coordinate that looks like uniform random bytes
 *                   [EllSwiftPubKey]; every 64 bytes decode to some x.
 *   XSwiftEC        the map from (u, t) to x; its inverse, given x and u,
 *                   finds the t of one of eight cases, or none.
 *   x-only ECDH     the shared point's x, hashed with both encodings into
 *                   the tagged hash "bip324_ellswift_xonly_ecdh" (initiator's
 *                   encoding first) [ComputeBIP324ECDHSecret]; the secret
 *                   key is only ever handed to libsecp256k1.
 *   FSChaCha20      ChaCha20 as one stream over many chunks (the 3-byte
 *                   lengths), rekeyed with its own next 32 bytes of keystream
 *                   every 224 chunks.
 *   FSChaCha20Poly1305  ChaCha20-Poly1305 (RFC 8439) with the nonce
 *                   (packet mod 224, packet / 224), rekeyed every 224 packets.
 *   L and P keys    the length cipher's and the packet AEAD's keys, one pair
 *                   a direction, from HKDF-SHA256 with the salt
 *                   "bitcoin_v2_shared_secret" and the network magic.
 *   packet          3 encrypted length bytes, then the AEAD of one header
 *                   byte (bit 7: ignore, a decoy) and the contents, then a
 *                   16-byte tag: BIP324_EXPANSION bytes more than the
 *                   contents.
 *
 * Threads: a cipher belongs to one thread; the functions without a cipher
 * may be called from any thread (libsecp256k1's context is made once,
 * under pthread_once, and only read after). Memory: a cipher is plain
 * data, embedded by its owner; nothing goes through xmalloc. GMP's
 * inverse (ElligatorSwift's decoding and encoding) takes one short-lived
 * allocation of its own per call, and the context is made once and kept.
 */
#ifndef PEERD_BIP324_H
#define PEERD_BIP324_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Bytes of an ElligatorSwift-encoded public key. */
#define BIP324_ELLSWIFT_LEN 64
/** Bytes of the session id (Core SESSION_ID_LEN). */
#define BIP324_SESSION_ID_LEN 32
/** Bytes of a garbage terminator (Core GARBAGE_TERMINATOR_LEN). */
#define BIP324_GARBAGE_TERMINATOR_LEN 16
/** The most garbage a side may send before its terminator (BIP324). */
#define BIP324_MAX_GARBAGE_LEN 4095
/** Chunks or packets between rekeys (Core REKEY_INTERVAL). */
#define BIP324_REKEY_INTERVAL 224
/** Bytes of the encrypted length (Core LENGTH_LEN). */
#define BIP324_LENGTH_LEN 3
/** Bytes of the packet header (Core HEADER_LEN). */
#define BIP324_HEADER_LEN 1
/** Bytes of the Poly1305 tag. */
#define BIP324_TAG_LEN 16
/** A packet's bytes beyond its contents (Core BIP324Cipher::EXPANSION, 20). */
#define BIP324_EXPANSION (BIP324_LENGTH_LEN + BIP324_HEADER_LEN + BIP324_TAG_LEN)
/** The header's ignore bit: the packet is a decoy (Core IGNORE_BIT). */
#define BIP324_IGNORE_BIT 0x80
/** Short message ids Core 29 knows, 0 (the long form) included (V2_MESSAGE_IDS). */
#define BIP324_SHORTIDS 33
/** Bytes of a long message type after the 0 id (as v1's command field). */
#define BIP324_LONG_TYPE_LEN 12

/** Errors (negative); 0 is success. */
enum bip324_error {
	BIP324_EKEY = -1,    /**< the secret key is zero or not below the group order */
	BIP324_EMAC = -2,    /**< a packet's tag does not match: altered or out of step */
	BIP324_ENOINV = -3,  /**< this x has no t for this u and case (XSwiftEC's inverse) */
	BIP324_ESTATE = -4,  /**< the cipher is used before its keys are set, or set twice */
	BIP324_ELENGTH = -5, /**< a buffer's length does not fit the call */
};

/** A short text for a bip324_error code. */
const char *bip324_strerror(int err);

/**
 * Decode an ElligatorSwift encoding to the x coordinate it stands for
 * (BIP324's ellswift_decode). Every 64 bytes decode. Variable time: the
 * encoding is public.
 */
void bip324_ellswift_decode(const uint8_t ellswift[BIP324_ELLSWIFT_LEN], uint8_t x[32]);

/**
 * XSwiftEC's inverse (BIP324's xswiftec_inv): the t with xswiftec(u, t) =
 * x for case c (0-7), in 32 big-endian bytes. 0, or BIP324_ENOINV when that
 * case has none. x and u are reduced modulo p.
 */
__attribute__((warn_unused_result)) int bip324_xswiftec_inv(uint8_t t[32], const uint8_t x[32],
                                                            const uint8_t u[32], int c);

/**
 * Make a new secret key (libsodium's randomness). Any thread.
 */
void bip324_seckey_new(uint8_t seckey[32]);

/**
 * The public key of seckey, ElligatorSwift-encoded with random u and case
 * (libsodium's randomness) [CKey::EllSwiftCreate]. 0, or BIP324_EKEY.
 */
__attribute__((warn_unused_result)) int bip324_ellswift_create(uint8_t ellswift[64],
                                                               const uint8_t seckey[32]);

/**
 * BIP324's shared secret [CKey::ComputeBIP324ECDHSecret]: the tagged hash
 * of the initiator's encoding, the responder's, and the x of seckey times
 * their point. 0, or BIP324_EKEY.
 */
__attribute__((warn_unused_result)) int bip324_ecdh(uint8_t secret[32], const uint8_t seckey[32],
                                                    const uint8_t their[64], const uint8_t ours[64],
                                                    bool initiator);

/** FSChaCha20: the length cipher [FSChaCha20]. Plain data: copy freely. */
struct bip324_fschacha20 {
	uint8_t key[32];
	uint64_t chunks;  /**< chunks since the last rekey */
	uint64_t rekeys;  /**< rekeys so far: the nonce's 64-bit part */
	uint32_t block;   /**< the next keystream block */
	uint8_t ks[64];   /**< the current block's keystream */
	unsigned ks_used; /**< bytes of ks used (64: none left) */
};

/** Set the key (32 bytes) and start at chunk 0. */
void bip324_fschacha20_init(struct bip324_fschacha20 *c, const uint8_t key[32]);
/** En- or decrypt one chunk of len bytes (out may be in); rekeys after every 224th. */
void bip324_fschacha20_crypt(struct bip324_fschacha20 *c, const uint8_t *in, uint8_t *out,
                             size_t len);

/** FSChaCha20Poly1305: the packet AEAD [FSChaCha20Poly1305]. Plain data. */
struct bip324_fsaead {
	uint8_t key[32];
	uint64_t packets; /**< packets since the last rekey: the nonce's 32-bit part */
	uint64_t rekeys;  /**< rekeys so far: the nonce's 64-bit part */
};

/** Set the key and start at packet 0. */
void bip324_fsaead_init(struct bip324_fsaead *a, const uint8_t key[32]);
/**
 * Encrypt header (hlen bytes: 0 or 1) then contents (len) with aad into out,
 * which gets hlen + len + 16 bytes (ciphertext, then the tag). out must not
 * overlap the inputs.
 */
void bip324_fsaead_encrypt(struct bip324_fsaead *a, const uint8_t *header, size_t hlen,
                           const uint8_t *contents, size_t len, const uint8_t *aad, size_t aadlen,
                           uint8_t *out);
/**
 * Check and decrypt in (hlen + len + 16 bytes) with aad into header and
 * contents. 0, or BIP324_EMAC (nothing written); the packet counts either
 * way, as Core's.
 */
__attribute__((warn_unused_result)) int
bip324_fsaead_decrypt(struct bip324_fsaead *a, const uint8_t *in, const uint8_t *aad, size_t aadlen,
                      uint8_t *header, size_t hlen, uint8_t *contents, size_t len);

/**
 * One side's BIP324 cipher [BIP324Cipher]: our key pair, then, once the
 * other side's public key is known, the four ciphers, the terminators and
 * the session id. Embedded: bip324_cipher_init, bip324_cipher_release
 * (wipes it).
 */
struct bip324_cipher {
	uint8_t seckey[32];
	uint8_t our_pubkey[BIP324_ELLSWIFT_LEN];
	bool ready; /**< bip324_cipher_initialize has run */
	struct bip324_fschacha20 send_l, recv_l;
	struct bip324_fsaead send_p, recv_p;
	uint8_t session_id[BIP324_SESSION_ID_LEN];
	uint8_t send_garbage_terminator[BIP324_GARBAGE_TERMINATOR_LEN];
	uint8_t recv_garbage_terminator[BIP324_GARBAGE_TERMINATOR_LEN];
};

/**
 * Set our key pair: seckey (NULL: a new random one) and its encoding
 * (NULL: bip324_ellswift_create's; given: the tests' fixed encodings).
 * 0, or BIP324_EKEY.
 */
__attribute__((warn_unused_result)) int
bip324_cipher_init(struct bip324_cipher *c, const uint8_t *seckey, const uint8_t *ellswift);
/**
 * Derive everything from their public key [Initialize]: ECDH, then HKDF
 * with salt "bitcoin_v2_shared_secret" and magic (the network's 4 message
 * start bytes). initiator: we opened the connection. self_decrypt (tests
 * only) swaps the directions, so a cipher decrypts what a twin encrypts.
 * The secret key is wiped. 0, BIP324_EKEY or BIP324_ESTATE (already done).
 */
__attribute__((warn_unused_result)) int bip324_cipher_initialize(struct bip324_cipher *c,
                                                                 const uint8_t their[64],
                                                                 const uint8_t magic[4],
                                                                 bool initiator, bool self_decrypt);
/**
 * Encrypt a packet [Encrypt]: contents (len < 2^24) and aad into out,
 * len + BIP324_EXPANSION bytes, not overlapping, except that contents
 * may be exactly out + BIP324_LENGTH_LEN + BIP324_HEADER_LEN: then it is
 * encrypted in place (the transport builds a message there, so a block
 * is not copied twice). ignore: a decoy.
 */
void bip324_cipher_encrypt(struct bip324_cipher *c, const uint8_t *contents, size_t len,
                           const uint8_t *aad, size_t aadlen, bool ignore, uint8_t *out);
/**
 * Encrypt a packet whose contents are prefix (plen bytes, under 47: a
 * message id and type) then rest (len bytes), without aad, leaving the
 * bulk where it lies [Encrypt, in pieces]: head gets the encrypted length,
 * header byte and prefix (BIP324_LENGTH_LEN + BIP324_HEADER_LEN + plen
 * bytes), rest is encrypted in place, tag gets the 16-byte tag. On the
 * wire: head, rest, tag. The same bytes as bip324_cipher_encrypt of the
 * joined contents. ignore: a decoy.
 */
void bip324_cipher_seal(struct bip324_cipher *c, const uint8_t *prefix, size_t plen, uint8_t *rest,
                        size_t len, bool ignore, uint8_t *head, uint8_t tag[16]);
/** Decrypt the next packet's 3 length bytes [DecryptLength]: its contents' length. */
uint32_t bip324_cipher_decrypt_length(struct bip324_cipher *c, const uint8_t in[BIP324_LENGTH_LEN]);
/**
 * Check and decrypt the rest of the packet [Decrypt]: in is
 * len + BIP324_HEADER_LEN + BIP324_TAG_LEN bytes (len from
 * bip324_cipher_decrypt_length), contents gets len. 0 (and *ignore), or
 * BIP324_EMAC.
 */
__attribute__((warn_unused_result)) int bip324_cipher_decrypt(struct bip324_cipher *c,
                                                              const uint8_t *in, size_t len,
                                                              const uint8_t *aad, size_t aadlen,
                                                              bool *ignore, uint8_t *contents);
/** Wipe the cipher (keys, state). */
void bip324_cipher_release(struct bip324_cipher *c);

/**
 * The message type of short id `id` (BIP324's table as Core 29 lists it in
 * net.cpp's V2_MESSAGE_IDS: 1-28 assigned and known, 29-32 assigned but
 * unknown to Core), or NULL: 0 (the long form), the unknown ones and ids
 * past the table.
 */
const char *bip324_msgid_name(uint8_t id);
/** The short id of a message type, or 0 when it has none (send the long form). */
uint8_t bip324_msgid_lookup(const char *type);

#endif
