/*
 * tests/fuzz/fuzz_bip324.c: bip324/'s receive side on arbitrary bytes:
 * ElligatorSwift decoding and XSwiftEC's inverse, then a stream of
 * packets, some encrypted by the other side, some the fuzzer's own.
 *
 * Input: 64 bytes read as their public key's encoding (decoded; every
 * encoding must give a point, and every t the inverse finds for those
 * first 32 bytes as u must decode back to that x, unless xswiftec would
 * alter u or t: u = 0, t = 0, u^3 + t^2 + 7 = 0). Then operations, one
 * byte each and its operands:
 *   even: n = next byte; the other side encrypts the next n input bytes
 *         (a decoy when the op's bit 1 is set, with the op byte as aad
 *         when bit 2 is set); we must decrypt them to the same bytes.
 *   odd:  the next 3 bytes arrive as a length, then as many bytes as that
 *         says (if the input has them) as a packet of the fuzzer's own: it
 *         must fail authentication (a forgery); the stream stops there, as
 *         the transport disconnects.
 * The two sides' keys are fixed, made once; each input starts both fresh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <secp256k1.h>

#include "bip324/bip324.h"
#include "bip324/internal.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_bip324: invariant broken: %s\n", what);
		abort();
	}
}

static struct bip324_cipher proto_ini, proto_res;
static int ready;

static void setup(void)
{
	static const uint8_t k1[32] = {1}, k2[32] = {2};
	static const uint8_t magic[4] = {0xfa, 0xbf, 0xb5, 0xda};
	check(bip324_cipher_init(&proto_ini, k1, NULL) == 0, "init");
	check(bip324_cipher_init(&proto_res, k2, NULL) == 0, "init");
	uint8_t a[64], b[64];
	memcpy(a, proto_ini.our_pubkey, 64);
	memcpy(b, proto_res.our_pubkey, 64);
	check(bip324_cipher_initialize(&proto_ini, b, magic, true, false) == 0, "initialize");
	check(bip324_cipher_initialize(&proto_res, a, magic, false, false) == 0, "initialize");
	ready = 1;
}

static void decode_checks(const uint8_t ell[64])
{
	uint8_t x[32], ser[33] = {0x02};
	bip324_ellswift_decode(ell, x);
	memcpy(ser + 1, x, 32);
	secp256k1_pubkey p;
	check(secp256k1_ec_pubkey_parse(bip324_secp_ctx(), &p, ser, 33) == 1,
	      "decoded x not on the curve");
	for (int c = 0; c < 8; c++) {
		uint8_t t[32], back[32], e2[64];
		int err = bip324_xswiftec_inv(t, x, ell, c);
		check(err == 0 || err == BIP324_ENOINV, "inverse: unexpected error");
		if (err)
			continue;
		struct bip324_fe fu, ft;
		bip324_fe_from_bytes(&fu, ell);
		bip324_fe_from_bytes(&ft, t);
		if (!bip324_xswiftec_plain(&fu, &ft))
			continue; /* xswiftec alters these (u = 0 and the like) */
		memcpy(e2, ell, 32);
		memcpy(e2 + 32, t, 32);
		bip324_ellswift_decode(e2, back);
		check(memcmp(back, x, 32) == 0, "inverse does not decode back");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		setup();
	if (size < 64)
		return 0;
	decode_checks(data);
	data += 64;
	size -= 64;

	struct bip324_cipher ini = proto_ini, res = proto_res;
	static uint8_t pkt[256 + BIP324_EXPANSION], out[1 << 16];
	while (size) {
		uint8_t op = *data++;
		size--;
		if (!(op & 1)) {
			if (!size)
				break;
			size_t n = *data++;
			size--;
			if (n > size)
				n = size;
			bool decoy = op & 2;
			size_t aadlen = op & 4 ? 1 : 0;
			bip324_cipher_encrypt(&ini, data, n, &op, aadlen, decoy, pkt);
			check(bip324_cipher_decrypt_length(&res, pkt) == n, "length lost");
			bool ignore = !decoy;
			check(bip324_cipher_decrypt(&res, pkt + BIP324_LENGTH_LEN, n, &op, aadlen,
			                            &ignore, out) == 0,
			      "our own packet failed");
			check(ignore == decoy, "ignore bit lost");
			check(memcmp(out, data, n) == 0, "contents differ");
			data += n;
			size -= n;
			continue;
		}
		if (size < BIP324_LENGTH_LEN)
			break;
		uint32_t len = bip324_cipher_decrypt_length(&res, data);
		check(len < (1u << 24), "length past 24 bits");
		data += BIP324_LENGTH_LEN;
		size -= BIP324_LENGTH_LEN;
		size_t need = (size_t)len + BIP324_HEADER_LEN + BIP324_TAG_LEN;
		if (need > size || len > sizeof(out))
			break; /* the transport would wait for more, or refuse the size */
		bool ignore;
		int err = bip324_cipher_decrypt(&res, data, len, NULL, 0, &ignore, out);
		check(err == BIP324_EMAC, "a forged packet authenticated");
		break;
	}
	bip324_cipher_release(&ini);
	bip324_cipher_release(&res);
	return 0;
}
