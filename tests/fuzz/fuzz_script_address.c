/*
 * tests/fuzz/fuzz_script_address.c: libFuzzer target for script/address.c,
 * the code that describes output scripts for people (peertool's JSON).
 *
 * Input: the whole buffer is one script, as an output's scriptPubKey or an
 * input's scriptSig would hold it.
 *
 * Checked, beyond the sanitizers' no crash / no leak / no undefined
 * behaviour:
 *   - every function gives the same answer when run again;
 *   - script_solve's spans lie inside the script and its counts fit;
 *   - script_type_name names each type distinctly and never NULL;
 *   - script_to_asm, with and without sighash decoding, into fixed buffers
 *     allocated at exactly the size given (so ASan sees any byte past it):
 *     a buffer one byte larger than the text (the hex writer's NUL) takes
 *     it whole, a smaller one gives PROTO_ENOSPACE with a prefix of it;
 *   - script_address on every network, into exact-size buffers the same
 *     way: an address exactly for the template types, SCRIPT_ADDRESS_ESPACE
 *     when one byte short;
 *   - each address decodes back, with a decoder written here from BIP173,
 *     BIP350 and the base58check definition (script/ has no decoder), to the
 *     network's version byte or hrp, the witness version and the program or
 *     hash script_solve found;
 *   - script_address_decode (script/'s own decoder) gives the script back
 *     from every address, and, given the input as text, either refuses it
 *     or gives a script whose address decodes to that script again.
 * Any failed check aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"

/** Scripts longer than this only slow the search down (Core's limit). */
#define FUZZ_MAX_SCRIPT SCRIPT_MAX_SIZE
/** Largest base58check payload decoded here: version, 32 bytes, checksum. */
#define FUZZ_B58_MAX 37u
/** BIP173: at most 90 characters, a 6-character checksum. */
#define FUZZ_BECH32_MAX      90u
#define FUZZ_BECH32_CHECKSUM 6u
#define FUZZ_BECH32_CONST    1u
#define FUZZ_BECH32M_CONST   0x2bc830a3u
/** Witness programs are 2..40 bytes (BIP141). */
#define FUZZ_PROGRAM_MAX 40u

static void check(int ok)
{
	if (!ok)
		abort();
}

/* ---- an independent address decoder ---------------------------------- */

static int b58_value(char c)
{
	static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
	const char *p = c ? strchr(alphabet, c) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

/* Base58check: *len payload bytes (version first) with the checksum
 * verified and removed. 0, or -1 on any malformation. */
static int b58check_decode(const char *s, uint8_t *out, size_t *len)
{
	uint8_t num[FUZZ_B58_MAX + 8] = {0}; /* big-endian, fixed width */
	size_t ones = 0, n = strlen(s);
	while (ones < n && s[ones] == '1')
		ones++;
	for (size_t i = 0; i < n; i++) {
		int v = b58_value(s[i]);
		if (v < 0)
			return -1;
		unsigned carry = (unsigned)v;
		for (size_t j = sizeof(num); j-- > 0;) {
			carry += 58u * num[j];
			num[j] = (uint8_t)carry;
			carry >>= 8;
		}
		if (carry)
			return -1;
	}
	size_t lead = 0;
	while (lead < sizeof(num) && num[lead] == 0)
		lead++;
	size_t total = ones + sizeof(num) - lead;
	if (total < 5 || total > FUZZ_B58_MAX)
		return -1;
	memset(out, 0, ones);
	memcpy(out + ones, num + lead, sizeof(num) - lead);
	uint8_t sum[32];
	proto_sha256d(out, total - 4, sum);
	if (memcmp(sum, out + total - 4, 4) != 0)
		return -1;
	*len = total - 4;
	return 0;
}

static uint32_t bech32_polymod(const uint8_t *v, size_t n)
{
	static const uint32_t gen[5] = {0x3b6a57b2u, 0x26508e6du, 0x1ea119fau, 0x3d4233ddu,
	                                0x2a1462b3u};
	uint32_t chk = 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t top = chk >> 25;
		chk = ((chk & 0x1ffffffu) << 5) ^ v[i];
		for (int k = 0; k < 5; k++)
			if ((top >> k) & 1)
				chk ^= gen[k];
	}
	return chk;
}

/* A lowercase segwit address: hrp, witness version and program. 0 or -1. */
static int segwit_decode(const char *s, const char *hrp, int *version, uint8_t *prog,
                         size_t *prog_len)
{
	static const char charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
	size_t n = strlen(s), hrp_len = strlen(hrp);
	const char *sep = strrchr(s, '1');
	if (n > FUZZ_BECH32_MAX || !sep || (size_t)(sep - s) != hrp_len ||
	    memcmp(s, hrp, hrp_len) != 0)
		return -1;
	size_t n_data = n - hrp_len - 1;
	if (n_data < 1 + FUZZ_BECH32_CHECKSUM)
		return -1;
	/* the checksum runs over the expanded hrp, then the data */
	uint8_t v[2 * FUZZ_BECH32_MAX + 1];
	size_t k = 0;
	for (size_t i = 0; i < hrp_len; i++)
		v[k++] = (uint8_t)hrp[i] >> 5;
	v[k++] = 0;
	for (size_t i = 0; i < hrp_len; i++)
		v[k++] = (uint8_t)hrp[i] & 31;
	const uint8_t *data = v + k;
	for (size_t i = 0; i < n_data; i++) {
		const char *p = sep[1 + i] ? strchr(charset, sep[1 + i]) : NULL;
		if (!p)
			return -1;
		v[k++] = (uint8_t)(p - charset);
	}
	if (data[0] > 16)
		return -1;
	uint32_t want = data[0] == 0 ? FUZZ_BECH32_CONST : FUZZ_BECH32M_CONST;
	if (bech32_polymod(v, k) != want)
		return -1;
	/* 5-bit groups back to bytes: at most 4 padding bits, all zero */
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;
	for (size_t i = 1; i < n_data - FUZZ_BECH32_CHECKSUM; i++) {
		acc = (acc << 5 | data[i]) & 0xfff;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (o == FUZZ_PROGRAM_MAX)
				return -1;
			prog[o++] = (uint8_t)(acc >> bits);
		}
	}
	if (bits > 4 || (acc & ((1u << bits) - 1)) != 0)
		return -1;
	*version = data[0];
	*prog_len = o;
	return 0;
}

/* ---- the checks -------------------------------------------------------- */

static bool span_inside(const struct script_span *sp, const uint8_t *s, size_t len)
{
	return sp->len == 0 || (sp->data >= s && sp->len <= len && sp->data <= s + len - sp->len);
}

static void check_solution(const uint8_t *s, size_t len, enum script_type *type_out,
                           struct script_solution *sol)
{
	struct script_solution again;
	enum script_type t = script_solve(s, len, sol);
	check(sol->type == t);
	check(script_solve(s, len, &again) == t);
	check(memcmp(sol, &again, sizeof(again)) == 0); /* zeroed first, padding too */
	check(span_inside(&sol->data, s, len));
	check(sol->n_keys <= SCRIPT_MAX_PUBKEYS_PER_MULTISIG);
	for (unsigned i = 0; i < sol->n_keys; i++)
		check(span_inside(&sol->keys[i], s, len));
	if (t == SCRIPT_TYPE_MULTISIG)
		check(sol->required >= 1 && sol->required <= sol->n_keys);

	const char *name = script_type_name(t);
	check(name && name[0]);
	check((strcmp(name, "nonstandard") == 0) == (t == SCRIPT_TYPE_NONSTANDARD));
	*type_out = t;
}

/* The asm text into a growable writer; the caller releases it. */
static void asm_full(const uint8_t *s, size_t len, bool sighash, struct proto_writer *w)
{
	proto_writer_init(w);
	check(script_to_asm(s, len, sighash, w) == 0);
	check(w->err == 0);
}

static void check_asm_fixed(const uint8_t *s, size_t len, bool sighash, const uint8_t *want,
                            size_t want_len, size_t cap)
{
	uint8_t *buf = malloc(cap ? cap : 1);
	check(buf != NULL);
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, cap);
	int err = script_to_asm(s, len, sighash, &w);
	check(err == w.err);
	check(w.len <= cap);
	if (cap >= want_len) {
		/* a buffer exactly the text's size takes it whole */
		check(err == 0);
		check(w.len == want_len);
	} else {
		check(err == PROTO_ENOSPACE);
	}
	check(w.len <= want_len);
	check(w.len == 0 || memcmp(buf, want, w.len) == 0);
	free(buf);
}

static void check_asm(const uint8_t *s, size_t len, bool sighash)
{
	struct proto_writer a, b;
	asm_full(s, len, sighash, &a);
	asm_full(s, len, sighash, &b);
	check(a.len == b.len && (a.len == 0 || memcmp(a.buf, b.buf, a.len) == 0));
	for (size_t i = 0; i < a.len; i++)
		check(a.buf[i] >= 0x20 && a.buf[i] < 0x7f); /* printable, no NUL */
	check_asm_fixed(s, len, sighash, a.buf, a.len, a.len + 1);
	check_asm_fixed(s, len, sighash, a.buf, a.len, a.len);
	if (a.len) {
		check_asm_fixed(s, len, sighash, a.buf, a.len, a.len - 1);
		check_asm_fixed(s, len, sighash, a.buf, a.len, a.len / 2);
	}
	proto_writer_release(&a);
	proto_writer_release(&b);
}

static bool has_address(enum script_type t)
{
	switch (t) {
	case SCRIPT_TYPE_PUBKEYHASH:
	case SCRIPT_TYPE_SCRIPTHASH:
	case SCRIPT_TYPE_WITNESS_V0_KEYHASH:
	case SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH:
	case SCRIPT_TYPE_WITNESS_V1_TAPROOT:
	case SCRIPT_TYPE_ANCHOR:
	case SCRIPT_TYPE_WITNESS_UNKNOWN:
		return true;
	default:
		return false;
	}
}

/* script_address into a buffer of exactly `cap` bytes. */
static int address_into(const uint8_t *s, size_t len, const struct proto_params *net, size_t cap,
                        char **out)
{
	/* malloc(0) is a zero-byte block to ASan: any write to it is caught */
	*out = malloc(cap);
	check(cap == 0 || *out != NULL);
	return script_address(s, len, net, *out, cap);
}

static void check_decodes_back(const char *addr, const struct proto_params *net, enum script_type t,
                               const struct script_solution *sol)
{
	bool is_main = net->net == PROTO_NET_MAIN;
	if (t == SCRIPT_TYPE_PUBKEYHASH || t == SCRIPT_TYPE_SCRIPTHASH) {
		uint8_t raw[FUZZ_B58_MAX];
		size_t n;
		check(b58check_decode(addr, raw, &n) == 0);
		uint8_t want =
		    t == SCRIPT_TYPE_PUBKEYHASH ? (is_main ? 0x00 : 0x6f) : (is_main ? 0x05 : 0xc4);
		check(n == 21 && raw[0] == want);
		check(sol->data.len == 20 && memcmp(raw + 1, sol->data.data, 20) == 0);
		return;
	}
	uint8_t prog[FUZZ_PROGRAM_MAX];
	size_t n;
	int version;
	check(segwit_decode(addr, net->bech32_hrp, &version, prog, &n) == 0);
	check(version == sol->witness_version);
	check(n == sol->data.len && memcmp(prog, sol->data.data, n) == 0);
	if (t == SCRIPT_TYPE_WITNESS_V0_KEYHASH || t == SCRIPT_TYPE_WITNESS_V0_SCRIPTHASH)
		check(version == 0);
	else
		check(version >= 1);
}

static void check_address(const uint8_t *s, size_t len, const struct proto_params *net,
                          enum script_type t, const struct script_solution *sol)
{
	char *a, *b;
	int rc = address_into(s, len, net, SCRIPT_ADDRESS_MAX, &a);
	int rc2 = address_into(s, len, net, SCRIPT_ADDRESS_MAX, &b);
	check(rc == rc2);
	check(rc == (has_address(t) ? 0 : SCRIPT_ADDRESS_ENONE));
	if (rc == 0) {
		size_t n = strlen(a);
		check(n > 0 && n < SCRIPT_ADDRESS_MAX);
		check(strcmp(a, b) == 0);
		check_decodes_back(a, net, t, sol);
		uint8_t spk[SCRIPT_ADDRESS_SPK_MAX];
		size_t spk_len;
		check(script_address_decode(a, net, spk, sizeof(spk), &spk_len, NULL, 0) == 0);
		check(spk_len == len && memcmp(spk, s, len) == 0);
		char *c;
		check(address_into(s, len, net, n + 1, &c) == 0);
		check(strcmp(a, c) == 0);
		free(c);
		check(address_into(s, len, net, n, &c) == SCRIPT_ADDRESS_ESPACE);
		free(c);
		check(address_into(s, len, net, 0, &c) == SCRIPT_ADDRESS_ESPACE);
		free(c);
	} else {
		/* no address is no address whatever the room */
		char *c;
		check(address_into(s, len, net, 0, &c) == SCRIPT_ADDRESS_ENONE);
		free(c);
	}
	free(a);
	free(b);
}

/* The input as text: refused, or a script whose own address decodes to it. */
static void check_text(const uint8_t *data, size_t size, const struct proto_params *net)
{
	char *text = malloc(size + 1);
	check(text != NULL);
	memcpy(text, data, size);
	text[size] = 0;
	uint8_t spk[SCRIPT_ADDRESS_SPK_MAX], again[SCRIPT_ADDRESS_SPK_MAX];
	size_t n, m;
	char why[SCRIPT_ADDRESS_WHY_MAX], addr[SCRIPT_ADDRESS_MAX];
	int rc = script_address_decode(text, net, spk, sizeof(spk), &n, why, sizeof(why));
	check(rc == 0 || (rc == SCRIPT_ADDRESS_EINVALID && why[0]));
	if (rc == 0) {
		check(script_address(spk, n, net, addr, sizeof(addr)) == 0);
		check(script_address_decode(addr, net, again, sizeof(again), &m, NULL, 0) == 0);
		check(m == n && memcmp(spk, again, n) == 0);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_SCRIPT)
		return 0;
	enum script_type t;
	struct script_solution sol;
	check_solution(data, size, &t, &sol);
	check_asm(data, size, false);
	check_asm(data, size, true);
	for (int net = 0; net < PROTO_NET__COUNT; net++)
		check_address(data, size, proto_params((enum proto_net)net), t, &sol);
	for (int net = 0; net < PROTO_NET__COUNT; net++)
		check_text(data, size, proto_params((enum proto_net)net));
	return 0;
}
