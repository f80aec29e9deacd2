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
#include "chain/chain.h"

/* Fewest bytes a coin can take: code, amount, kind 6 with no script bytes. */
#define UNDO_MIN_COIN 3u

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
	chain_varint_write(w, (uint64_t)c->height * 2 + (c->coinbase ? 1 : 0));
	if (c->height > 0)
		chain_varint_write(w, 0);
	chain_txout_compress(w, c->value, c->script, c->script_len);
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
	uint64_t code, dummy;
	if (chain_varint_read(r, UINT32_MAX, &code))
		return CHAIN_ECORRUPT;
	if (code / 2 > 0 && chain_varint_read(r, UINT32_MAX, &dummy))
		return CHAIN_ECORRUPT;
	/* Amounts outside the money range and keys off the curve are corrupt:
	 * Core never stored either. */
	uint8_t special[CHAIN_SCRIPT_SPECIAL_MAX];
	const uint8_t *src;
	uint32_t len;
	int64_t value;
	if (chain_txout_decompress(r, &value, special, &src, &len))
		return CHAIN_ECORRUPT;
	if (!c)
		return 0;
	c->value = value;
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
