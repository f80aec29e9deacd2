/*
 * bip324/cipher.c: BIP324's packet cipher: FSChaCha20 for the lengths,
 * FSChaCha20Poly1305 for the contents (libsodium's ChaCha20 and Poly1305),
 * the keys from HKDF-SHA256 (nettle), as Core's crypto/chacha20.cpp,
 * crypto/chacha20poly1305.cpp and bip324.cpp.
 *
 * The AEAD is RFC 8439's, assembled from libsodium's parts rather than
 * called whole: the plaintext is a header byte and the contents in two
 * places, and gluing them would copy every packet (a megabyte for a
 * block). Keystream block 0 keys Poly1305. A small packet's keystream
 * comes with it in the same call; for a larger one, block 1 covers the
 * header and the contents' first 63 bytes, and from block 2 on the
 * contents are aligned to ChaCha20's blocks and go through libsodium in
 * one call.
 */
#include <string.h>

#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <sodium.h>

#include "base/require.h"
#include "bip324/bip324.h"

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ChaCha20's 96-bit nonce as Core's Nonce96 {first, second}. */
static void nonce96(uint8_t n[12], uint32_t first, uint64_t second)
{
	le32(n, first);
	le64(n + 4, second);
}

/* ---- FSChaCha20 --------------------------------------------------------- */

void bip324_fschacha20_init(struct bip324_fschacha20 *c, const uint8_t key[32])
{
	/* libsodium picks its fastest ChaCha20 and Poly1305 in sodium_init */
	require(sodium_init() >= 0);
	memset(c, 0, sizeof(*c));
	memcpy(c->key, key, 32);
	c->ks_used = 64;
}

/* XOR len bytes of the stream into out (in may be NULL: the keystream). */
static void fschacha20_stream(struct bip324_fschacha20 *c, const uint8_t *in, uint8_t *out,
                              size_t len)
{
	static const uint8_t zero[64];
	uint8_t n[12];
	nonce96(n, 0, c->rekeys);
	while (len) {
		if (c->ks_used == 64) {
			if (len >= 64 && in) {
				/* whole blocks straight through libsodium */
				size_t blocks = len / 64;
				crypto_stream_chacha20_ietf_xor_ic(out, in, blocks * 64, n,
				                                   c->block, c->key);
				c->block += (uint32_t)blocks;
				in += blocks * 64;
				out += blocks * 64;
				len -= blocks * 64;
				continue;
			}
			crypto_stream_chacha20_ietf_xor_ic(c->ks, zero, 64, n, c->block, c->key);
			c->block++;
			c->ks_used = 0;
		}
		size_t take = 64 - c->ks_used;
		if (take > len)
			take = len;
		for (size_t i = 0; i < take; i++)
			out[i] = (uint8_t)((in ? in[i] : 0) ^ c->ks[c->ks_used + i]);
		c->ks_used += (unsigned)take;
		if (in)
			in += take;
		out += take;
		len -= take;
	}
}

void bip324_fschacha20_crypt(struct bip324_fschacha20 *c, const uint8_t *in, uint8_t *out,
                             size_t len)
{
	fschacha20_stream(c, in, out, len);
	if (++c->chunks == BIP324_REKEY_INTERVAL) {
		/* The next 32 bytes of keystream are the new key; the rest of
		 * the block is dropped (Core's SetKey), the nonce counts rekeys. */
		uint8_t key[32];
		fschacha20_stream(c, NULL, key, 32);
		memcpy(c->key, key, 32);
		sodium_memzero(key, sizeof(key));
		c->chunks = 0;
		c->rekeys++;
		c->block = 0;
		c->ks_used = 64;
		sodium_memzero(c->ks, sizeof(c->ks));
	}
}

/* ---- FSChaCha20Poly1305 ------------------------------------------------- */

void bip324_fsaead_init(struct bip324_fsaead *a, const uint8_t key[32])
{
	require(sodium_init() >= 0);
	memset(a, 0, sizeof(*a));
	memcpy(a->key, key, 32);
}

static void fsaead_next(struct bip324_fsaead *a)
{
	if (++a->packets == BIP324_REKEY_INTERVAL) {
		/* The new key is keystream block 1 under the nonce
		 * {0xffffffff, rekeys} (BIP324's rekey). */
		static const uint8_t zero[64];
		uint8_t n[12], block[64];
		nonce96(n, 0xffffffffu, a->rekeys);
		crypto_stream_chacha20_ietf_xor_ic(block, zero, 64, n, 1, a->key);
		memcpy(a->key, block, 32);
		sodium_memzero(block, sizeof(block));
		a->packets = 0;
		a->rekeys++;
	}
}

/* out = a ^ b, n bytes, a word at a time. */
static void xor_bytes(uint8_t *out, const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		x ^= y;
		memcpy(out + i, &x, 8);
	}
	for (; i < n; i++)
		out[i] = a[i] ^ b[i];
}

/* Packets up to this size (header and contents) take their keystream in
 * one libsodium call with the Poly1305 key's block: most messages are
 * small, and a second call costs as much as the bytes. */
#define SMALL_PACKET 448

/*
 * XOR the two-part plaintext (hlen header bytes, then len contents) with
 * keystream from block 1 on, into out; ks holds block 0 and, for a small
 * packet, the keystream the packet needs after it; for a larger one,
 * block 1 only.
 */
static void aead_xor(const struct bip324_fsaead *a, const uint8_t n[12], const uint8_t *ks,
                     const uint8_t *header, size_t hlen, const uint8_t *contents, size_t len,
                     uint8_t *out_header, uint8_t *out_contents)
{
	ks += 64;
	xor_bytes(out_header, header, ks, hlen);
	if (hlen + len <= SMALL_PACKET) {
		xor_bytes(out_contents, contents, ks + hlen, len);
		return;
	}
	/* block 1 covers the header and the first 64 - hlen bytes; from there
	 * the contents are block-aligned and go through libsodium whole */
	size_t first = 64 - hlen;
	xor_bytes(out_contents, contents, ks + hlen, first);
	crypto_stream_chacha20_ietf_xor_ic(out_contents + first, contents + first, len - first, n,
	                                   2, a->key);
}

/* RFC 8439's tag over aad and the ciphertext (ct1 then ct2). */
static void aead_tag(uint8_t tag[16], const uint8_t polykey[32], const uint8_t *aad, size_t aadlen,
                     const uint8_t *ct1, size_t len1, const uint8_t *ct2, size_t len2)
{
	static const uint8_t pad[16];
	crypto_onetimeauth_poly1305_state st;
	crypto_onetimeauth_poly1305_init(&st, polykey);
	crypto_onetimeauth_poly1305_update(&st, aad, aadlen);
	crypto_onetimeauth_poly1305_update(&st, pad, (16 - aadlen % 16) % 16);
	crypto_onetimeauth_poly1305_update(&st, ct1, len1);
	crypto_onetimeauth_poly1305_update(&st, ct2, len2);
	crypto_onetimeauth_poly1305_update(&st, pad, (16 - (len1 + len2) % 16) % 16);
	uint8_t lens[16];
	le64(lens, aadlen);
	le64(lens + 8, len1 + len2);
	crypto_onetimeauth_poly1305_update(&st, lens, sizeof(lens));
	crypto_onetimeauth_poly1305_final(&st, tag);
	sodium_memzero(&st, sizeof(st));
}

/* Keystream from block 0 (the Poly1305 key) for a packet of plen bytes;
 * returns how many bytes of ks it wrote. */
static size_t aead_keystream(const struct bip324_fsaead *a, uint8_t n[12],
                             uint8_t ks[64 + SMALL_PACKET], size_t plen)
{
	nonce96(n, (uint32_t)a->packets, a->rekeys);
	size_t want = 64 + (plen <= SMALL_PACKET ? plen : 64);
	crypto_stream_chacha20_ietf(ks, want, n, a->key);
	return want;
}

/* The plaintext's first part (header) may be up to this long: it must end
 * inside keystream block 1 (aead_xor). */
#define MAX_HEAD 48

/* Encrypt header then contents into out_header and out_contents (which may
 * be contents itself: libsodium and xor_bytes allow in == out), the tag
 * into tag. */
static void fsaead_seal(struct bip324_fsaead *a, const uint8_t *header, size_t hlen,
                        const uint8_t *contents, size_t len, const uint8_t *aad, size_t aadlen,
                        uint8_t *out_header, uint8_t *out_contents, uint8_t tag[16])
{
	require(hlen <= MAX_HEAD);
	uint8_t n[12], ks[64 + SMALL_PACKET];
	size_t used = aead_keystream(a, n, ks, hlen + len);
	aead_xor(a, n, ks, header, hlen, contents, len, out_header, out_contents);
	aead_tag(tag, ks, aad, aadlen, out_header, hlen, out_contents, len);
	sodium_memzero(ks, used);
	fsaead_next(a);
}

void bip324_fsaead_encrypt(struct bip324_fsaead *a, const uint8_t *header, size_t hlen,
                           const uint8_t *contents, size_t len, const uint8_t *aad, size_t aadlen,
                           uint8_t *out)
{
	require(hlen <= BIP324_HEADER_LEN);
	fsaead_seal(a, header, hlen, contents, len, aad, aadlen, out, out + hlen, out + hlen + len);
}

int bip324_fsaead_decrypt(struct bip324_fsaead *a, const uint8_t *in, const uint8_t *aad,
                          size_t aadlen, uint8_t *header, size_t hlen, uint8_t *contents,
                          size_t len)
{
	require(hlen <= BIP324_HEADER_LEN);
	uint8_t n[12], ks[64 + SMALL_PACKET], tag[16];
	size_t used = aead_keystream(a, n, ks, hlen + len);
	aead_tag(tag, ks, aad, aadlen, in, hlen + len, NULL, 0);
	int err = 0;
	if (crypto_verify_16(tag, in + hlen + len) != 0)
		err = BIP324_EMAC;
	else
		aead_xor(a, n, ks, in, hlen, in + hlen, len, header, contents);
	sodium_memzero(ks, used);
	fsaead_next(a);
	return err;
}

/* ---- BIP324Cipher ------------------------------------------------------- */

int bip324_cipher_init(struct bip324_cipher *c, const uint8_t *seckey, const uint8_t *ellswift)
{
	memset(c, 0, sizeof(*c));
	if (seckey)
		memcpy(c->seckey, seckey, 32);
	else
		bip324_seckey_new(c->seckey);
	if (ellswift) {
		memcpy(c->our_pubkey, ellswift, BIP324_ELLSWIFT_LEN);
		return 0;
	}
	int err = bip324_ellswift_create(c->our_pubkey, c->seckey);
	if (err)
		sodium_memzero(c->seckey, sizeof(c->seckey));
	return err;
}

/* HKDF-Expand of one 32-byte key (Core's CHKDF_HMAC_SHA256_L32::Expand32). */
static void expand32(struct hmac_sha256_ctx *prk, const char *info, uint8_t out[32])
{
	struct hmac_sha256_ctx ctx = *prk;
	hkdf_expand(&ctx, (nettle_hash_update_func *)hmac_sha256_update,
	            (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, strlen(info),
	            (const uint8_t *)info, 32, out);
	sodium_memzero(&ctx, sizeof(ctx));
}

int bip324_cipher_initialize(struct bip324_cipher *c, const uint8_t their[64],
                             const uint8_t magic[4], bool initiator, bool self_decrypt)
{
	if (c->ready)
		return BIP324_ESTATE;
	uint8_t secret[32];
	int err = bip324_ecdh(secret, c->seckey, their, c->our_pubkey, initiator);
	sodium_memzero(c->seckey, sizeof(c->seckey));
	if (err)
		return err;

	/* HKDF-Extract: PRK = HMAC(salt, secret); salt = the text and the magic */
	static const char label[] = "bitcoin_v2_shared_secret";
	uint8_t salt[sizeof(label) - 1 + 4], prk[32];
	memcpy(salt, label, sizeof(label) - 1);
	memcpy(salt + sizeof(label) - 1, magic, 4);
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, sizeof(salt), salt);
	hkdf_extract(&ctx, (nettle_hash_update_func *)hmac_sha256_update,
	             (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE,
	             sizeof(secret), secret, prk);
	hmac_sha256_set_key(&ctx, sizeof(prk), prk);

	/* side: we send with the initiator's keys (self_decrypt flips it) */
	bool side = initiator != self_decrypt;
	uint8_t okm[32];
	expand32(&ctx, "initiator_L", okm);
	bip324_fschacha20_init(side ? &c->send_l : &c->recv_l, okm);
	expand32(&ctx, "initiator_P", okm);
	bip324_fsaead_init(side ? &c->send_p : &c->recv_p, okm);
	expand32(&ctx, "responder_L", okm);
	bip324_fschacha20_init(side ? &c->recv_l : &c->send_l, okm);
	expand32(&ctx, "responder_P", okm);
	bip324_fsaead_init(side ? &c->recv_p : &c->send_p, okm);
	expand32(&ctx, "garbage_terminators", okm);
	memcpy(initiator ? c->send_garbage_terminator : c->recv_garbage_terminator, okm,
	       BIP324_GARBAGE_TERMINATOR_LEN);
	memcpy(initiator ? c->recv_garbage_terminator : c->send_garbage_terminator,
	       okm + 32 - BIP324_GARBAGE_TERMINATOR_LEN, BIP324_GARBAGE_TERMINATOR_LEN);
	expand32(&ctx, "session_id", c->session_id);

	sodium_memzero(secret, sizeof(secret));
	sodium_memzero(prk, sizeof(prk));
	sodium_memzero(okm, sizeof(okm));
	sodium_memzero(&ctx, sizeof(ctx));
	c->ready = true;
	return 0;
}

void bip324_cipher_encrypt(struct bip324_cipher *c, const uint8_t *contents, size_t len,
                           const uint8_t *aad, size_t aadlen, bool ignore, uint8_t *out)
{
	require(c->ready && len < (1u << 24));
	uint8_t l[BIP324_LENGTH_LEN] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16)};
	bip324_fschacha20_crypt(&c->send_l, l, out, BIP324_LENGTH_LEN);
	uint8_t header = ignore ? BIP324_IGNORE_BIT : 0;
	bip324_fsaead_encrypt(&c->send_p, &header, 1, contents, len, aad, aadlen,
	                      out + BIP324_LENGTH_LEN);
}

void bip324_cipher_seal(struct bip324_cipher *c, const uint8_t *prefix, size_t plen, uint8_t *rest,
                        size_t len, bool ignore, uint8_t *head, uint8_t tag[16])
{
	size_t total = plen + len;
	require(c->ready && total < (1u << 24) && plen < MAX_HEAD);
	uint8_t l[BIP324_LENGTH_LEN] = {(uint8_t)total, (uint8_t)(total >> 8),
	                                (uint8_t)(total >> 16)};
	bip324_fschacha20_crypt(&c->send_l, l, head, BIP324_LENGTH_LEN);
	/* The AEAD's first part is the header byte and the prefix, so that
	 * the rest is encrypted where it lies. */
	uint8_t first[MAX_HEAD];
	first[0] = ignore ? BIP324_IGNORE_BIT : 0;
	if (plen)
		memcpy(first + 1, prefix, plen);
	fsaead_seal(&c->send_p, first, 1 + plen, rest, len, NULL, 0, head + BIP324_LENGTH_LEN, rest,
	            tag);
}

uint32_t bip324_cipher_decrypt_length(struct bip324_cipher *c, const uint8_t in[BIP324_LENGTH_LEN])
{
	require(c->ready);
	uint8_t l[BIP324_LENGTH_LEN];
	bip324_fschacha20_crypt(&c->recv_l, in, l, BIP324_LENGTH_LEN);
	return (uint32_t)l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16;
}

int bip324_cipher_decrypt(struct bip324_cipher *c, const uint8_t *in, size_t len,
                          const uint8_t *aad, size_t aadlen, bool *ignore, uint8_t *contents)
{
	require(c->ready);
	uint8_t header;
	int err = bip324_fsaead_decrypt(&c->recv_p, in, aad, aadlen, &header, 1, contents, len);
	if (err)
		return err;
	*ignore = (header & BIP324_IGNORE_BIT) != 0;
	return 0;
}

void bip324_cipher_release(struct bip324_cipher *c)
{
	sodium_memzero(c, sizeof(*c));
}
