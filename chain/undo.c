/*
 * chain/undo.c: undo data (the coins a block spent) in Bitcoin Core's
 * CBlockUndo serialization, byte for byte, so rev files move between
 * peerd and Core.
 *
 * Layout (Core's undo.h and compressor.h):
 *   CBlockUndo  CompactSize n, then n CTxUndo
 *   CTxUndo     CompactSize n, then n coins
 *   coin        VARINT(height*2 + coinbase), VARINT(0) when height > 0
 *               (a version field old Core wrote; read and ignored),
 *               VARINT(CompressAmount(value)), compressed script
 *   script      one VARINT kind: 0 P2PKH hash (20), 1 P2SH hash (20),
 *               2/3 compressed P2PK x (32), 4/5 uncompressed P2PK x with
 *               y's parity in the kind (32); else VARINT(len + 6) and the
 *               script itself
 *
 * VARINT here is Core's serialize.h VarInt (MSB base-128, each non-final
 * group stored minus one so every number has exactly one encoding), not
 * the CompactSize of the wire.
 *
 * Decoding trusts nothing: a first pass walks the whole input and checks
 * every count against the bytes that remain, so the second pass, which
 * allocates, only ever allocates what the input can back.
 */
#include <secp256k1.h>

#include "chain/chain.h"

/* Core's MAX_SCRIPT_SIZE: a longer script in undo data is read as OP_RETURN. */
#define UNDO_MAX_SCRIPT 10000u
/* Script kinds below this are compressed templates (Core's nSpecialScripts). */
#define UNDO_SPECIAL_SCRIPTS 6u
/* Fewest bytes a coin can take: code, amount, kind 6 with no script bytes. */
#define UNDO_MIN_COIN 3u
/* Longest Core VarInt of a 64-bit value: ceil(64 / 7) groups. */
#define UNDO_VARINT_MAX 10u

#define OP_DUP         0x76
#define OP_HASH160     0xa9
#define OP_EQUAL       0x87
#define OP_EQUALVERIFY 0x88
#define OP_CHECKSIG    0xac
#define OP_RETURN      0x6a

/* ---------------------------------------------------------------------- */
/* Core's VarInt                                                           */

static void write_varint(struct proto_writer *w, uint64_t n)
{
	uint8_t tmp[UNDO_VARINT_MAX];
	size_t len = 0;
	/* Built last group first; every group but the last has the high bit
	 * and stands for one more than its bits (the "- 1" below). */
	for (;;) {
		tmp[len] = (uint8_t)((n & 0x7f) | (len ? 0x80 : 0x00));
		if (n <= 0x7f)
			break;
		n = (n >> 7) - 1;
		len++;
	}
	uint8_t out[UNDO_VARINT_MAX];
	for (size_t i = 0; i <= len; i++)
		out[i] = tmp[len - i];
	proto_write_bytes(w, out, len + 1);
}

/*
 * Read a VarInt no larger than `max` (UINT32_MAX for Core's unsigned int
 * fields, UINT64_MAX for uint64_t ones). Core throws on values that would
 * not fit the field; so do we (-1), and on a truncated input.
 */
static int read_varint(struct proto_reader *r, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;
	for (;;) {
		uint8_t c;
		if (proto_read_u8(r, &c))
			return -1;
		if (n > (max >> 7))
			return -1;
		n = (n << 7) | (c & 0x7f);
		if (!(c & 0x80))
			break;
		if (n == max)
			return -1;
		n++;
	}
	*v = n;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Core's amount and script compression                                    */
/* TODO: share with chain/compress.c when merged.                          */

/*
 * Values are mostly round numbers: strip up to nine trailing decimal
 * zeros into an exponent, and when any were left (e < 9) fold the last
 * non-zero digit (1..9) in as well.
 */
static uint64_t compress_amount(uint64_t n)
{
	if (n == 0)
		return 0;
	unsigned e = 0;
	while (n % 10 == 0 && e < 9) {
		n /= 10;
		e++;
	}
	if (e < 9) {
		uint64_t d = n % 10;
		n /= 10;
		return 1 + (n * 9 + d - 1) * 10 + e;
	}
	return 1 + (n - 1) * 10 + 9;
}

/* The inverse; wraps (defined, unsigned) on hostile input, caught by the range check after. */
static uint64_t decompress_amount(uint64_t x)
{
	if (x == 0)
		return 0;
	x--;
	unsigned e = (unsigned)(x % 10);
	x /= 10;
	uint64_t n;
	if (e < 9) {
		uint64_t d = x % 9 + 1;
		x /= 9;
		n = x * 10 + d;
	} else {
		n = x + 1;
	}
	while (e--)
		n *= 10;
	return n;
}

/*
 * The compressed form of a template script into out (kind byte + 20 or
 * 32 bytes), returning its length, or 0 when the script is not one of
 * the templates and is stored as it is.
 */
static size_t compress_script(const uint8_t *s, size_t len, uint8_t out[33])
{
	if (len == 25 && s[0] == OP_DUP && s[1] == OP_HASH160 && s[2] == 20 &&
	    s[23] == OP_EQUALVERIFY && s[24] == OP_CHECKSIG) {
		out[0] = 0x00;
		memcpy(out + 1, s + 3, 20);
		return 21;
	}
	if (len == 23 && s[0] == OP_HASH160 && s[1] == 20 && s[22] == OP_EQUAL) {
		out[0] = 0x01;
		memcpy(out + 1, s + 2, 20);
		return 21;
	}
	if (len == 35 && s[0] == 33 && s[34] == OP_CHECKSIG && (s[1] == 0x02 || s[1] == 0x03)) {
		out[0] = s[1];
		memcpy(out + 1, s + 2, 32);
		return 33;
	}
	if (len == 67 && s[0] == 65 && s[66] == OP_CHECKSIG && s[1] == 0x04) {
		/* Only a key on the curve compresses: decompression must give
		 * back the same 65 bytes. */
		secp256k1_pubkey pk;
		if (!secp256k1_ec_pubkey_parse(secp256k1_context_static, &pk, s + 1, 65))
			return 0;
		out[0] = (uint8_t)(0x04 | (s[65] & 0x01));
		memcpy(out + 1, s + 2, 32);
		return 33;
	}
	return 0;
}

/* Bytes that follow a special kind: 20 for a hash, 32 for a key's x. */
static size_t special_size(uint64_t kind)
{
	return kind < 2 ? 20 : 32;
}

/*
 * Rebuild the script of a special kind from its payload into out (67
 * bytes suffice). The length, or 0 when a kind 4/5 x coordinate is not on
 * the curve (Core then leaves the script empty; corrupt data to us).
 */
static uint32_t decompress_script(uint64_t kind, const uint8_t *in, uint8_t out[67])
{
	switch (kind) {
	case 0:
		out[0] = OP_DUP;
		out[1] = OP_HASH160;
		out[2] = 20;
		memcpy(out + 3, in, 20);
		out[23] = OP_EQUALVERIFY;
		out[24] = OP_CHECKSIG;
		return 25;
	case 1:
		out[0] = OP_HASH160;
		out[1] = 20;
		memcpy(out + 2, in, 20);
		out[22] = OP_EQUAL;
		return 23;
	case 2:
	case 3:
		out[0] = 33;
		out[1] = (uint8_t)kind;
		memcpy(out + 2, in, 32);
		out[34] = OP_CHECKSIG;
		return 35;
	default: {
		uint8_t comp[33];
		secp256k1_pubkey pk;
		size_t n = 65;
		comp[0] = (uint8_t)(kind - 2);
		memcpy(comp + 1, in, 32);
		if (!secp256k1_ec_pubkey_parse(secp256k1_context_static, &pk, comp, 33))
			return 0;
		out[0] = 65;
		secp256k1_ec_pubkey_serialize(secp256k1_context_static, out + 1, &n, &pk,
		                              SECP256K1_EC_UNCOMPRESSED);
		out[66] = OP_CHECKSIG;
		return 67;
	}
	}
}

/* ---------------------------------------------------------------------- */
/* Encoding                                                                */

void chain_block_undo_init(struct chain_block_undo *u)
{
	memset(u, 0, sizeof(*u));
}

void chain_block_undo_release(struct chain_block_undo *u)
{
	if (u->coins)
		for (uint32_t i = 0; i < u->total; i++)
			xfree(u->coins[i].script);
	xfree(u->coins);
	xfree(u->first);
	xfree(u->n_coins);
	chain_block_undo_init(u);
}

static void encode_coin(const struct chain_undo_coin *c, struct proto_writer *w)
{
	/* Core packs height and the coinbase flag into one unsigned int. */
	if (c->height > UINT32_MAX / 2 || c->value < 0 || c->value > PROTO_MAX_MONEY ||
	    (c->script_len && !c->script)) {
		if (!w->err)
			w->err = PROTO_EVALUE;
		return;
	}
	write_varint(w, (uint64_t)c->height * 2 + (c->coinbase ? 1 : 0));
	if (c->height > 0)
		write_varint(w, 0);
	write_varint(w, compress_amount((uint64_t)c->value));
	uint8_t comp[33];
	size_t n = compress_script(c->script, c->script_len, comp);
	if (n) {
		proto_write_bytes(w, comp, n);
	} else {
		write_varint(w, (uint64_t)c->script_len + UNDO_SPECIAL_SCRIPTS);
		proto_write_bytes(w, c->script, c->script_len);
	}
}

void chain_block_undo_encode(const struct chain_block_undo *u, struct proto_writer *w)
{
	proto_write_compact(w, u->n_tx);
	for (uint32_t i = 0; i < u->n_tx && !w->err; i++) {
		uint32_t first = u->first[i], n = u->n_coins[i];
		/* A malformed undo must not make us read past coins[]. */
		if (first > u->total || n > u->total - first) {
			w->err = PROTO_EVALUE;
			return;
		}
		proto_write_compact(w, n);
		for (uint32_t j = 0; j < n && !w->err; j++)
			encode_coin(&u->coins[first + j], w);
	}
}

/* ---------------------------------------------------------------------- */
/* Decoding                                                                */

/*
 * One coin. With c NULL only checks and skips it (the counting pass);
 * otherwise fills c, allocating its script. 0, CHAIN_ECORRUPT or
 * CHAIN_ENOMEM (c then owns nothing).
 */
static int decode_coin(struct proto_reader *r, struct chain_undo_coin *c)
{
	uint64_t code, dummy, amount, kind;
	if (read_varint(r, UINT32_MAX, &code))
		return CHAIN_ECORRUPT;
	if (code / 2 > 0 && read_varint(r, UINT32_MAX, &dummy))
		return CHAIN_ECORRUPT;
	if (read_varint(r, UINT64_MAX, &amount))
		return CHAIN_ECORRUPT;
	uint64_t value = decompress_amount(amount);
	/* Every coin Core ever stored is in the money range. */
	if (value > (uint64_t)PROTO_MAX_MONEY)
		return CHAIN_ECORRUPT;
	if (read_varint(r, UINT32_MAX, &kind))
		return CHAIN_ECORRUPT;

	uint8_t buf[67];
	const uint8_t *src;
	uint32_t len;
	if (kind < UNDO_SPECIAL_SCRIPTS) {
		const uint8_t *payload;
		if (proto_read_span(r, special_size(kind), &payload))
			return CHAIN_ECORRUPT;
		len = decompress_script(kind, payload, buf);
		if (!len)
			return CHAIN_ECORRUPT;
		src = buf;
	} else {
		uint64_t n = kind - UNDO_SPECIAL_SCRIPTS;
		if (n > proto_reader_left(r))
			return CHAIN_ECORRUPT;
		if (n > UNDO_MAX_SCRIPT) {
			/* Core's reading: an overlong (unspendable) script becomes OP_RETURN. */
			buf[0] = OP_RETURN;
			len = 1;
			src = buf;
			r->p += n;
		} else {
			len = (uint32_t)n;
			src = r->p;
			r->p += n;
		}
	}
	if (!c)
		return 0;
	c->value = (int64_t)value;
	c->height = (uint32_t)(code / 2);
	c->coinbase = code & 1;
	c->script_len = len;
	c->script = NULL;
	if (len) {
		c->script = xmalloc(len);
		if (!c->script)
			return CHAIN_ENOMEM;
		memcpy(c->script, src, len);
	}
	return 0;
}

/*
 * Walk the whole serialization. With u NULL, checks it and counts the
 * transactions and coins; with u (arrays sized from that count) fills it.
 */
static int decode_pass(const uint8_t *data, size_t len, struct chain_block_undo *u,
                       uint32_t *n_tx_out, uint32_t *total_out)
{
	struct proto_reader r;
	uint64_t n_tx;
	uint32_t total = 0;
	proto_reader_init(&r, data, len);
	/* Each CTxUndo takes at least its one-byte count. */
	if (proto_read_compact(&r, PROTO_MAX_SIZE, &n_tx) || n_tx > proto_reader_left(&r))
		return CHAIN_ECORRUPT;
	for (uint64_t i = 0; i < n_tx; i++) {
		uint64_t n;
		if (proto_read_compact(&r, PROTO_MAX_SIZE, &n) ||
		    n > proto_reader_left(&r) / UNDO_MIN_COIN)
			return CHAIN_ECORRUPT;
		if (u) {
			u->first[i] = total;
			u->n_coins[i] = (uint32_t)n;
		}
		for (uint64_t j = 0; j < n; j++) {
			int err = decode_coin(&r, u ? &u->coins[total] : NULL);
			if (err)
				return err;
			/* Bounded by len / UNDO_MIN_COIN, so never wraps. */
			total++;
			if (u)
				u->total = total;
		}
	}
	if (proto_reader_left(&r))
		return CHAIN_ECORRUPT;
	*n_tx_out = (uint32_t)n_tx;
	*total_out = total;
	return 0;
}

int chain_block_undo_decode(const uint8_t *data, size_t len, struct chain_block_undo *u)
{
	uint32_t n_tx, total;
	chain_block_undo_init(u);
	int err = decode_pass(data, len, NULL, &n_tx, &total);
	if (err)
		return err;
	/* xcalloc/xmalloc(0) give valid pointers, so an empty undo needs no case. */
	u->first = xcalloc(n_tx, sizeof(*u->first));
	u->n_coins = xcalloc(n_tx, sizeof(*u->n_coins));
	u->coins = xcalloc(total, sizeof(*u->coins));
	if (!u->first || !u->n_coins || !u->coins) {
		chain_block_undo_release(u);
		return CHAIN_ENOMEM;
	}
	u->n_tx = n_tx;
	/* u->total counts the coins filled so far, so a failure frees just those. */
	err = decode_pass(data, len, u, &n_tx, &total);
	if (err) {
		chain_block_undo_release(u);
		return err;
	}
	return 0;
}
