/*
 * chain/coinsdb.c: a coin as a database record, in Core's own format
 * (txdb.cpp's CoinEntry key without the 'C' prefix, Coin::Serialize for
 * the value), so the walk over the table is in Core's order and a record
 * is as small as Core's: ~30 bytes for a P2PKH or P2WPKH coin.
 */
#include <string.h>

#include "chain/chain.h"
#include "chain/coins_internal.h"

size_t chain_coin_key_encode(uint8_t out[CHAIN_COIN_KEY_MAX], const struct proto_outpoint *op)
{
	uint8_t v[CHAIN_VARINT_MAX];
	size_t n = chain_varint_encode(v, op->n); /* at most 5 for 32 bits */
	memcpy(out, op->txid.b, 32);
	memcpy(out + 32, v, n);
	return 32 + n;
}

int chain_coin_key_decode(const uint8_t *key, size_t len, struct proto_outpoint *op)
{
	if (len < 33 || len > CHAIN_COIN_KEY_MAX)
		return CHAIN_ECORRUPT;
	struct proto_reader r;
	proto_reader_init(&r, key + 32, len - 32);
	uint64_t n;
	if (chain_varint_read(&r, UINT32_MAX, &n) || proto_reader_left(&r))
		return CHAIN_ECORRUPT;
	memcpy(op->txid.b, key, 32);
	op->n = (uint32_t)n;
	return 0;
}

/* Compare two VARINT encodings of 32-bit values as memcmp of their bytes. */
int chain_coin_key_cmp(const struct proto_outpoint *a, const struct proto_outpoint *b)
{
	int c = memcmp(a->txid.b, b->txid.b, 32);
	if (c || a->n == b->n)
		return c;
	/* Below 128 both are one byte and the byte is the value: the common
	 * case needs no encoding. */
	if (a->n < 0x80 && b->n < 0x80)
		return a->n < b->n ? -1 : 1;
	uint8_t ea[CHAIN_VARINT_MAX], eb[CHAIN_VARINT_MAX];
	size_t la = chain_varint_encode(ea, a->n), lb = chain_varint_encode(eb, b->n);
	c = memcmp(ea, eb, la < lb ? la : lb);
	if (c)
		return c;
	return la < lb ? -1 : la > lb ? 1 : 0;
}

size_t chain_coin_value_encode(uint8_t *out, const struct chain_coin *coin)
{
	struct proto_writer w;
	proto_writer_init_fixed(&w, out, CHAIN_COIN_VAL_MAX);
	chain_varint_write(&w, (uint64_t)coin->height * 2 + (coin->coinbase ? 1 : 0));
	chain_txout_compress(&w, coin->value, coin->script, coin->script_len);
	/* The cache refuses scripts over CHAIN_MAX_COIN_SCRIPT, so the fixed
	 * buffer always fits. */
	return w.err ? 0 : w.len;
}

int chain_coin_value_decode(const uint8_t *val, size_t len, struct chain_coin *coin,
                            uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX])
{
	struct proto_reader r;
	proto_reader_init(&r, val, len);
	uint64_t code;
	int err = chain_varint_read(&r, UINT32_MAX, &code);
	if (err)
		return err;
	err = chain_txout_decompress(&r, &coin->value, special, &coin->script, &coin->script_len);
	if (err)
		return err;
	if (proto_reader_left(&r) || coin->script_len > CHAIN_MAX_COIN_SCRIPT)
		return CHAIN_ECORRUPT;
	coin->height = (uint32_t)(code >> 1);
	coin->coinbase = code & 1;
	return 0;
}
