/* tests/unit/test_bip324.c: bip324/ against BIP324's own test vectors
 * (tests/data/bip324/, from the BIPs repository): ElligatorSwift decoding,
 * XSwiftEC's inverse in all eight cases, and every packet vector from the
 * secret key to the ciphertext; then what the vectors do not reach: both
 * sides of a real exchange, tampering, the rekeys and the short ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <secp256k1.h>
#include <sodium.h>

#include "bip324/bip324.h"
#include "bip324/internal.h"
#include "proto/proto.h"
#include "tests/unit/testutil.h"

/* ---- a CSV file without quoting (BIP324's vectors have none) ---------- */

#define MAX_COLS 24

struct csv {
	char *text;
	char *head[MAX_COLS];
	int ncols;
	char *next; /* the next row */
};

static char *split_line(char **p)
{
	char *line = *p;
	if (!line || !*line)
		return NULL;
	char *nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = line + strlen(line);
	}
	size_t n = strlen(line);
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	return line;
}

static int split_fields(char *line, char **out)
{
	int n = 0;
	for (;;) {
		assert_true(n < MAX_COLS);
		out[n++] = line;
		char *comma = strchr(line, ',');
		if (!comma)
			return n;
		*comma = '\0';
		line = comma + 1;
	}
}

static void csv_open(struct csv *c, const char *rel)
{
	size_t len;
	uint8_t *data = tu_read_file(tu_vector(rel), &len);
	c->text = realloc(data, len + 1);
	assert_non_null(c->text);
	c->text[len] = '\0';
	c->next = c->text;
	char *line = split_line(&c->next);
	assert_non_null(line);
	c->ncols = split_fields(line, c->head);
}

/* The next row's fields in the header's order; false at the end. */
static bool csv_row(struct csv *c, char **f)
{
	char *line = split_line(&c->next);
	if (!line)
		return false;
	int n = split_fields(line, f);
	assert_int_equal(n, c->ncols);
	return true;
}

static const char *col(const struct csv *c, char **f, const char *name)
{
	for (int i = 0; i < c->ncols; i++)
		if (strcmp(c->head[i], name) == 0)
			return f[i];
	fail_msg("no column %s", name);
	return NULL;
}

static void unhex_fixed(const char *hex, uint8_t *out, size_t want)
{
	size_t len;
	uint8_t *b = tu_unhex(hex, &len);
	assert_int_equal(len, want);
	memcpy(out, b, len);
	free(b);
}

static void assert_hex(const uint8_t *got, size_t len, const char *want)
{
	char *h = tu_hex(got, len);
	if (strcmp(h, want) != 0)
		fail_msg("got %s, want %s", h, want);
	free(h);
}

/* ---- the vectors ------------------------------------------------------- */

static void test_ellswift_decode_vectors(void **state)
{
	(void)state;
	struct csv c;
	csv_open(&c, "bip324/ellswift_decode_test_vectors.csv");
	char *f[MAX_COLS];
	int rows = 0;
	while (csv_row(&c, f)) {
		uint8_t ell[64], x[32];
		unhex_fixed(col(&c, f, "ellswift"), ell, 64);
		bip324_ellswift_decode(ell, x);
		assert_hex(x, 32, col(&c, f, "x"));
		rows++;
	}
	assert_int_equal(rows, 76);
	free(c.text);
}

static void test_xswiftec_inv_vectors(void **state)
{
	(void)state;
	struct csv c;
	csv_open(&c, "bip324/xswiftec_inv_test_vectors.csv");
	char *f[MAX_COLS];
	int rows = 0, found = 0;
	while (csv_row(&c, f)) {
		uint8_t u[32], x[32];
		unhex_fixed(col(&c, f, "u"), u, 32);
		unhex_fixed(col(&c, f, "x"), x, 32);
		for (int k = 0; k < 8; k++) {
			char name[24];
			snprintf(name, sizeof(name), "case%d_t", k);
			const char *want = col(&c, f, name);
			uint8_t t[32];
			int err = bip324_xswiftec_inv(t, x, u, k);
			if (!*want) {
				if (err != BIP324_ENOINV)
					fail_msg("row %d case %d: found a t, the vector has none",
					         rows, k);
				continue;
			}
			assert_int_equal(err, 0);
			assert_hex(t, 32, want);
			/* and forward again: xswiftec(u, t) = x */
			uint8_t ell[64], back[32];
			memcpy(ell, u, 32);
			memcpy(ell + 32, t, 32);
			bip324_ellswift_decode(ell, back);
			assert_memory_equal(back, x, 32);
			found++;
		}
		rows++;
	}
	assert_int_equal(rows, 32);
	assert_true(found > 64);
	free(c.text);
}

static const uint8_t MAINNET_MAGIC[4] = {0xf9, 0xbe, 0xb4, 0xd9};

static void test_packet_vectors(void **state)
{
	(void)state;
	struct csv c;
	csv_open(&c, "bip324/packet_encoding_test_vectors.csv");
	char *f[MAX_COLS];
	int rows = 0;
	while (csv_row(&c, f)) {
		uint8_t priv[32], ours[64], theirs[64], x[32];
		unhex_fixed(col(&c, f, "in_priv_ours"), priv, 32);
		unhex_fixed(col(&c, f, "in_ellswift_ours"), ours, 64);
		unhex_fixed(col(&c, f, "in_ellswift_theirs"), theirs, 64);
		bool initiating = atoi(col(&c, f, "in_initiating")) != 0;

		/* our public key's x: from the secret key and from our encoding */
		secp256k1_pubkey pub;
		uint8_t ser[33];
		size_t serlen = sizeof(ser);
		assert_true(secp256k1_ec_pubkey_create(bip324_secp_ctx(), &pub, priv));
		assert_true(secp256k1_ec_pubkey_serialize(bip324_secp_ctx(), ser, &serlen, &pub,
		                                          SECP256K1_EC_COMPRESSED));
		assert_hex(ser + 1, 32, col(&c, f, "mid_x_ours"));
		bip324_ellswift_decode(ours, x);
		assert_hex(x, 32, col(&c, f, "mid_x_ours"));
		bip324_ellswift_decode(theirs, x);
		assert_hex(x, 32, col(&c, f, "mid_x_theirs"));
		assert_int_equal(bip324_ecdh_x(x, priv, theirs), 0);
		assert_hex(x, 32, col(&c, f, "mid_x_shared"));
		uint8_t secret[32];
		assert_int_equal(bip324_ecdh(secret, priv, theirs, ours, initiating), 0);
		assert_hex(secret, 32, col(&c, f, "mid_shared_secret"));

		struct bip324_cipher ci, twin;
		assert_int_equal(bip324_cipher_init(&ci, priv, ours), 0);
		assert_int_equal(bip324_cipher_init(&twin, priv, ours), 0);
		assert_int_equal(
		    bip324_cipher_initialize(&ci, theirs, MAINNET_MAGIC, initiating, false), 0);
		assert_int_equal(
		    bip324_cipher_initialize(&twin, theirs, MAINNET_MAGIC, initiating, true), 0);
		assert_int_equal(
		    bip324_cipher_initialize(&ci, theirs, MAINNET_MAGIC, initiating, false),
		    BIP324_ESTATE);
		const struct bip324_cipher *k = &ci;
		assert_hex(initiating ? k->send_l.key : k->recv_l.key, 32,
		           col(&c, f, "mid_initiator_l"));
		assert_hex(initiating ? k->send_p.key : k->recv_p.key, 32,
		           col(&c, f, "mid_initiator_p"));
		assert_hex(initiating ? k->recv_l.key : k->send_l.key, 32,
		           col(&c, f, "mid_responder_l"));
		assert_hex(initiating ? k->recv_p.key : k->send_p.key, 32,
		           col(&c, f, "mid_responder_p"));
		assert_hex(k->send_garbage_terminator, 16,
		           col(&c, f, "mid_send_garbage_terminator"));
		assert_hex(k->recv_garbage_terminator, 16,
		           col(&c, f, "mid_recv_garbage_terminator"));
		assert_hex(k->session_id, 32, col(&c, f, "out_session_id"));

		/* in_idx empty packets first, each decrypted by the twin */
		int idx = atoi(col(&c, f, "in_idx"));
		for (int i = 0; i < idx; i++) {
			uint8_t pkt[BIP324_EXPANSION];
			bip324_cipher_encrypt(&ci, NULL, 0, NULL, 0, false, pkt);
			assert_int_equal(bip324_cipher_decrypt_length(&twin, pkt), 0);
			bool ign = true;
			assert_int_equal(bip324_cipher_decrypt(&twin, pkt + BIP324_LENGTH_LEN, 0,
			                                       NULL, 0, &ign, NULL),
			                 0);
			assert_false(ign);
		}
		size_t clen, aadlen;
		uint8_t *one = tu_unhex(col(&c, f, "in_contents"), &clen);
		uint8_t *aad = tu_unhex(col(&c, f, "in_aad"), &aadlen);
		int mult = atoi(col(&c, f, "in_multiply"));
		size_t len = clen * (size_t)mult;
		uint8_t *contents = malloc(len + 1);
		for (int i = 0; i < mult; i++)
			memcpy(contents + (size_t)i * clen, one, clen);
		bool ignore = atoi(col(&c, f, "in_ignore")) != 0;
		uint8_t *pkt = malloc(len + BIP324_EXPANSION);
		bip324_cipher_encrypt(&ci, contents, len, aad, aadlen, ignore, pkt);
		const char *whole = col(&c, f, "out_ciphertext");
		const char *tail = col(&c, f, "out_ciphertext_endswith");
		if (*whole)
			assert_hex(pkt, len + BIP324_EXPANSION, whole);
		if (*tail) {
			size_t tl = strlen(tail) / 2;
			assert_true(tl <= len + BIP324_EXPANSION);
			assert_hex(pkt + len + BIP324_EXPANSION - tl, tl, tail);
		}
		/* the twin reads it back */
		assert_int_equal(bip324_cipher_decrypt_length(&twin, pkt), len);
		uint8_t *back = malloc(len + 1);
		bool ign = !ignore;
		assert_int_equal(bip324_cipher_decrypt(&twin, pkt + BIP324_LENGTH_LEN, len, aad,
		                                       aadlen, &ign, back),
		                 0);
		assert_int_equal(ign, ignore);
		assert_memory_equal(back, contents, len);

		free(back);
		free(pkt);
		free(contents);
		free(aad);
		free(one);
		bip324_cipher_release(&ci);
		bip324_cipher_release(&twin);
		rows++;
	}
	assert_int_equal(rows, 7);
	free(c.text);
}

/* ---- beyond the vectors ------------------------------------------------ */

static void test_field(void **state)
{
	(void)state;
	/* random elements: a * (1/a) = 1, sqrt(a^2)^2 = a^2, (a+b)-b = a */
	struct bip324_fe one, zero, a, b, r, s;
	bip324_fe_set_int(&one, 1);
	bip324_fe_set_int(&zero, 0);
	for (int i = 0; i < 200; i++) {
		uint8_t rnd[64];
		proto_random(rnd, sizeof(rnd));
		if (i == 0)
			memset(rnd, 0xff, 32); /* 2^256 - 1: reduced on the way in */
		if (i == 1)
			memset(rnd, 0xff, 28); /* within 2^32 of 2^256, near p: the carries */
		bip324_fe_from_bytes(&a, rnd);
		bip324_fe_from_bytes(&b, rnd + 32);
		bip324_fe_inv(&r, &a);
		bip324_fe_mul(&r, &r, &a);
		assert_true(bip324_fe_equal(&r, &one));
		bip324_fe_sqr(&r, &a);
		assert_true(bip324_fe_is_square(&r));
		assert_true(bip324_fe_sqrt(&s, &r));
		bip324_fe_sqr(&s, &s);
		assert_true(bip324_fe_equal(&s, &r));
		bip324_fe_mul(&r, &a, &a); /* the squaring's own routine agrees */
		bip324_fe_sqr(&s, &a);
		assert_true(bip324_fe_equal(&r, &s));
		bip324_fe_add(&r, &a, &b);
		bip324_fe_sub(&r, &r, &b);
		assert_true(bip324_fe_equal(&r, &a));
		bip324_fe_neg(&r, &a);
		bip324_fe_add(&r, &r, &a);
		assert_true(bip324_fe_is_zero(&r));
	}
	/* -1 is not a square (p = 3 mod 4); 1/0 is 0 as in the reference */
	bip324_fe_neg(&a, &one);
	assert_false(bip324_fe_is_square(&a));
	assert_false(bip324_fe_sqrt(&r, &a));
	bip324_fe_inv(&r, &zero);
	assert_true(bip324_fe_is_zero(&r));
	/* p itself reads as 0 */
	uint8_t pbytes[32];
	memset(pbytes, 0xff, 32);
	pbytes[27] = 0xfe;
	pbytes[30] = 0xfc;
	pbytes[31] = 0x2f;
	bip324_fe_from_bytes(&r, pbytes);
	assert_true(bip324_fe_is_zero(&r));
}

/* Both sides with fresh keys: the same secret, session id and crossed terminators. */
static void test_exchange(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++) {
		struct bip324_cipher ini, res;
		assert_int_equal(bip324_cipher_init(&ini, NULL, NULL), 0);
		assert_int_equal(bip324_cipher_init(&res, NULL, NULL), 0);
		/* our encoding decodes to our public key's x */
		uint8_t x[32], ser[33];
		size_t serlen = sizeof(ser);
		secp256k1_pubkey pub;
		assert_true(secp256k1_ec_pubkey_create(bip324_secp_ctx(), &pub, ini.seckey));
		assert_true(secp256k1_ec_pubkey_serialize(bip324_secp_ctx(), ser, &serlen, &pub,
		                                          SECP256K1_EC_COMPRESSED));
		bip324_ellswift_decode(ini.our_pubkey, x);
		assert_memory_equal(x, ser + 1, 32);

		uint8_t ip[64], rp[64];
		memcpy(ip, ini.our_pubkey, 64);
		memcpy(rp, res.our_pubkey, 64);
		assert_int_equal(bip324_cipher_initialize(&ini, rp, MAINNET_MAGIC, true, false), 0);
		assert_int_equal(bip324_cipher_initialize(&res, ip, MAINNET_MAGIC, false, false),
		                 0);
		assert_memory_equal(ini.session_id, res.session_id, 32);
		assert_memory_equal(ini.send_garbage_terminator, res.recv_garbage_terminator, 16);
		assert_memory_equal(ini.recv_garbage_terminator, res.send_garbage_terminator, 16);
		/* the secret key is gone once the keys are derived */
		static const uint8_t zero[32];
		assert_memory_equal(ini.seckey, zero, 32);

		/* a few packets each way, some decoys, some with aad */
		for (int i = 0; i < 5; i++) {
			uint8_t msg[300], pkt[300 + BIP324_EXPANSION], back[300];
			size_t len = (size_t)(round * 13 + i * 61) % 300;
			proto_random(msg, len);
			struct bip324_cipher *from = i & 1 ? &res : &ini, *to = i & 1 ? &ini : &res;
			bip324_cipher_encrypt(from, msg, len, msg, i, i == 3, pkt);
			assert_int_equal(bip324_cipher_decrypt_length(to, pkt), len);
			bool ign;
			assert_int_equal(
			    bip324_cipher_decrypt(to, pkt + 3, len, msg, i, &ign, back), 0);
			assert_int_equal(ign, i == 3);
			assert_memory_equal(back, msg, len);
		}
		/* another network's magic gives other keys */
		struct bip324_cipher other;
		assert_int_equal(bip324_cipher_init(&other, NULL, NULL), 0);
		uint8_t op[64];
		memcpy(op, other.our_pubkey, 64);
		static const uint8_t regtest[4] = {0xfa, 0xbf, 0xb5, 0xda};
		struct bip324_cipher o2;
		assert_int_equal(bip324_cipher_init(&o2, NULL, NULL), 0);
		uint8_t o2p[64];
		memcpy(o2p, o2.our_pubkey, 64);
		assert_int_equal(bip324_cipher_initialize(&other, o2p, regtest, true, false), 0);
		assert_int_equal(bip324_cipher_initialize(&o2, op, MAINNET_MAGIC, false, false), 0);
		assert_memory_not_equal(other.session_id, o2.session_id, 32);
		bip324_cipher_release(&other);
		bip324_cipher_release(&o2);
		bip324_cipher_release(&ini);
		bip324_cipher_release(&res);
	}
}

/* Contents placed at out + 4 encrypt in place to the same packet. */
static void test_encrypt_in_place(void **state)
{
	(void)state;
	static const size_t lens[] = {0, 1, 59, 60, 447, 448, 449, 5000, 100000};
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct bip324_cipher a, b;
		assert_int_equal(bip324_cipher_init(&a, NULL, NULL), 0);
		assert_int_equal(bip324_cipher_init(&b, NULL, NULL), 0);
		uint8_t ap[64], bp[64];
		memcpy(ap, a.our_pubkey, 64);
		memcpy(bp, b.our_pubkey, 64);
		assert_int_equal(bip324_cipher_initialize(&a, bp, MAINNET_MAGIC, true, false), 0);
		assert_int_equal(bip324_cipher_initialize(&b, ap, MAINNET_MAGIC, false, false), 0);
		struct bip324_cipher twin = a;
		size_t len = lens[k];
		uint8_t *msg = malloc(len + 1), *want = malloc(len + BIP324_EXPANSION);
		uint8_t *pkt = malloc(len + BIP324_EXPANSION);
		proto_random(msg, len);
		bip324_cipher_encrypt(&twin, msg, len, msg, len % 7, false, want);
		memcpy(pkt + BIP324_LENGTH_LEN + BIP324_HEADER_LEN, msg, len);
		bip324_cipher_encrypt(&a, pkt + BIP324_LENGTH_LEN + BIP324_HEADER_LEN, len, msg,
		                      len % 7, false, pkt);
		assert_memory_equal(pkt, want, len + BIP324_EXPANSION);
		free(msg);
		free(want);
		free(pkt);
		bip324_cipher_release(&a);
		bip324_cipher_release(&b);
		bip324_cipher_release(&twin);
	}
}

/* The two-part AEAD (header byte and contents apart, keystream in one
 * call for small packets, block-aligned after the first block for large
 * ones) equals libsodium's whole ChaCha20-Poly1305 over the glued
 * plaintext, at every length across both paths and their edges. */
static void test_aead_against_libsodium(void **state)
{
	(void)state;
	uint8_t key[32], aad[20];
	proto_random(key, sizeof(key));
	proto_random(aad, sizeof(aad));
	static uint8_t plain[1 + 1200], ours[1 + 1200 + 16], theirs[1 + 1200 + 16], back[1200];
	proto_random(plain, sizeof(plain));
	/* with the header byte (packets) and without (FSChaCha20Poly1305 alone) */
	for (size_t hlen = 0; hlen <= 1; hlen++) {
		struct bip324_fsaead enc, dec;
		bip324_fsaead_init(&enc, key);
		bip324_fsaead_init(&dec, key);
		for (size_t len = 0; len <= 1200; len += (len < 520 ? 1 : 37)) {
			uint8_t n[12] = {0};
			for (int i = 0; i < 4; i++)
				n[i] = (uint8_t)(enc.packets >> (8 * i));
			for (int i = 0; i < 8; i++)
				n[4 + i] = (uint8_t)(enc.rekeys >> (8 * i));
			unsigned long long clen;
			crypto_aead_chacha20poly1305_ietf_encrypt(theirs, &clen, plain, hlen + len,
			                                          aad, len % 21, NULL, n, enc.key);
			assert_int_equal(clen, hlen + len + 16);
			bip324_fsaead_encrypt(&enc, plain, hlen, plain + hlen, len, aad, len % 21,
			                      ours);
			if (memcmp(ours, theirs, hlen + len + 16) != 0)
				fail_msg("header %zu, length %zu: differs from libsodium's AEAD",
				         hlen, len);
			uint8_t h = 0;
			assert_int_equal(
			    bip324_fsaead_decrypt(&dec, ours, aad, len % 21, &h, hlen, back, len),
			    0);
			if (hlen)
				assert_int_equal(h, plain[0]);
			assert_memory_equal(back, plain + hlen, len);
		}
	}
}

/* A flipped bit anywhere (ciphertext, tag, aad) fails with BIP324_EMAC
 * and writes nothing. */
static void test_tamper(void **state)
{
	(void)state;
	uint8_t key[32];
	proto_random(key, 32);
	uint8_t msg[100], pkt[1 + 100 + 16], aad[5] = {1, 2, 3, 4, 5};
	proto_random(msg, sizeof(msg));
	for (size_t bit = 0; bit < (sizeof(pkt) + sizeof(aad)) * 8; bit += 7) {
		struct bip324_fsaead enc, dec;
		bip324_fsaead_init(&enc, key);
		bip324_fsaead_init(&dec, key);
		uint8_t hdr = 0x80;
		bip324_fsaead_encrypt(&enc, &hdr, 1, msg, sizeof(msg), aad, sizeof(aad), pkt);
		uint8_t a2[5];
		memcpy(a2, aad, 5);
		if (bit < sizeof(pkt) * 8)
			pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		else
			a2[bit / 8 - sizeof(pkt)] ^= (uint8_t)(1u << (bit % 8));
		uint8_t out[100], h2 = 0x55;
		memset(out, 0xaa, sizeof(out));
		assert_int_equal(
		    bip324_fsaead_decrypt(&dec, pkt, a2, sizeof(a2), &h2, 1, out, sizeof(out)),
		    BIP324_EMAC);
		assert_int_equal(h2, 0x55);
		for (size_t i = 0; i < sizeof(out); i++)
			assert_int_equal(out[i], 0xaa);
	}
	/* out of step: a packet decrypted with the next packet's nonce fails */
	struct bip324_fsaead enc, dec;
	bip324_fsaead_init(&enc, key);
	bip324_fsaead_init(&dec, key);
	bip324_fsaead_encrypt(&enc, NULL, 0, msg, 10, NULL, 0, pkt);
	uint8_t out[10];
	assert_int_equal(bip324_fsaead_decrypt(&dec, pkt, NULL, 0, NULL, 0, out, 10), 0);
	assert_int_equal(bip324_fsaead_decrypt(&dec, pkt, NULL, 0, NULL, 0, out, 10), BIP324_EMAC);
}

/*
 * FSChaCha20 over 3-byte chunks is one ChaCha20 stream per key; after 224
 * chunks the next 32 bytes of that stream are the key and the nonce's
 * 64-bit half counts the rekeys. Rebuilt here from plain ChaCha20 blocks
 * (as BIP324's reference does), for chunk sizes that leave part of a
 * block behind too (Core drops it at a rekey).
 */
static void test_fschacha20_rekey(void **state)
{
	(void)state;
	static const size_t sizes[] = {3, 1, 64, 100};
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t sz = sizes[si];
		uint8_t key[32], rkey[32];
		proto_random(key, 32);
		memcpy(rkey, key, 32);
		struct bip324_fschacha20 fs;
		bip324_fschacha20_init(&fs, key);
		uint64_t rekeys = 0;
		static uint8_t stream[64 * 400]; /* 224 chunks of 100 bytes and a key */
		size_t pos = 0;
		for (int chunk = 0; chunk < 3 * BIP324_REKEY_INTERVAL + 5; chunk++) {
			if (pos == 0) {
				/* the reference's keystream for this key */
				uint8_t n[12] = {0};
				for (int i = 0; i < 8; i++)
					n[4 + i] = (uint8_t)(rekeys >> (8 * i));
				memset(stream, 0, sizeof(stream));
				crypto_stream_chacha20_ietf_xor_ic(stream, stream, sizeof(stream),
				                                   n, 0, rkey);
			}
			uint8_t in[100], out[100];
			memset(in, chunk, sz);
			bip324_fschacha20_crypt(&fs, in, out, sz);
			for (size_t i = 0; i < sz; i++)
				assert_int_equal(out[i], (uint8_t)(in[i] ^ stream[pos + i]));
			pos += sz;
			if ((chunk + 1) % BIP324_REKEY_INTERVAL == 0) {
				memcpy(rkey, stream + pos, 32);
				rekeys++;
				pos = 0;
				assert_memory_equal(fs.key, rkey, 32);
			}
		}
	}
}

/* Which (u, t) xswiftec takes as they are: a t from the inverse decodes
 * back only then, so bip324_ellswift_create skips the others. */
static void test_xswiftec_plain(void **state)
{
	(void)state;
	struct bip324_fe u, t, zero, one;
	bip324_fe_set_int(&zero, 0);
	bip324_fe_set_int(&one, 1);
	uint8_t rnd[64];
	proto_random(rnd, sizeof(rnd));
	bip324_fe_from_bytes(&u, rnd);
	bip324_fe_from_bytes(&t, rnd + 32);
	assert_true(bip324_xswiftec_plain(&u, &t));
	assert_false(bip324_xswiftec_plain(&zero, &t));
	assert_false(bip324_xswiftec_plain(&u, &zero));
	/* u^3 = -8 (the decode vectors' "(u'^3+t'^2+7)%p=0" row, t' = 1) */
	uint8_t ub[32];
	unhex_fixed("0a2d2ba93507f1df233770c2a797962cc61f6d15da14ecd47d8d27ae1cd5f853", ub, 32);
	bip324_fe_from_bytes(&u, ub);
	assert_false(bip324_xswiftec_plain(&u, &one));
	/* and the encodings create makes all decode to their key's x */
	for (int i = 0; i < 50; i++) {
		uint8_t key[32], ell[64], x[32], ser[33];
		size_t serlen = sizeof(ser);
		secp256k1_pubkey pub;
		bip324_seckey_new(key);
		assert_int_equal(bip324_ellswift_create(ell, key), 0);
		bip324_ellswift_decode(ell, x);
		assert_true(secp256k1_ec_pubkey_create(bip324_secp_ctx(), &pub, key));
		assert_true(secp256k1_ec_pubkey_serialize(bip324_secp_ctx(), ser, &serlen, &pub,
		                                          SECP256K1_EC_COMPRESSED));
		assert_memory_equal(x, ser + 1, 32);
	}
}

static void test_msgids(void **state)
{
	(void)state;
	assert_null(bip324_msgid_name(0));
	assert_string_equal(bip324_msgid_name(1), "addr");
	assert_string_equal(bip324_msgid_name(2), "block");
	assert_string_equal(bip324_msgid_name(14), "inv");
	assert_string_equal(bip324_msgid_name(21), "tx");
	assert_string_equal(bip324_msgid_name(28), "addrv2");
	for (int id = 29; id < 256; id++)
		assert_null(bip324_msgid_name((uint8_t)id));
	for (int id = 1; id <= 28; id++)
		assert_int_equal(bip324_msgid_lookup(bip324_msgid_name((uint8_t)id)), id);
	/* the handshake's and newer messages go in the long form */
	assert_int_equal(bip324_msgid_lookup("version"), 0);
	assert_int_equal(bip324_msgid_lookup("verack"), 0);
	assert_int_equal(bip324_msgid_lookup("wtxidrelay"), 0);
	assert_int_equal(bip324_msgid_lookup("sendaddrv2"), 0);
	assert_int_equal(bip324_msgid_lookup(""), 0);
}

static void test_errors(void **state)
{
	(void)state;
	uint8_t zero[32] = {0}, ell[64];
	assert_int_equal(bip324_ellswift_create(ell, zero), BIP324_EKEY);
	struct bip324_cipher c;
	assert_int_equal(bip324_cipher_init(&c, zero, NULL), BIP324_EKEY);
	memset(ell, 0x11, sizeof(ell));
	assert_int_equal(bip324_ecdh(zero, zero, ell, ell, true), BIP324_EKEY);
	assert_string_equal(bip324_strerror(BIP324_EMAC), "packet authentication failed");
	assert_string_equal(bip324_strerror(0), "success");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ellswift_decode_vectors),
	    cmocka_unit_test(test_xswiftec_inv_vectors),
	    cmocka_unit_test(test_packet_vectors),
	    cmocka_unit_test(test_field),
	    cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_encrypt_in_place),
	    cmocka_unit_test(test_aead_against_libsodium),
	    cmocka_unit_test(test_tamper),
	    cmocka_unit_test(test_fschacha20_rekey),
	    cmocka_unit_test(test_xswiftec_plain),
	    cmocka_unit_test(test_msgids),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
