/*
 * json/render.c: scripts, transactions, headers and blocks in the shapes
 * and field orders of Bitcoin Core 29's TxToUniv, ScriptToUniv,
 * blockheaderToJSON and blockToJSON (core_write.cpp, rpc/blockchain.cpp).
 * tests/integration/test_interop_core.py compares the results with Core's.
 */
#include "json/json.h"

#include "base/alloc.h"
#include "chain/chain.h"
#include "script/script.h"

/* Core's ScriptToAsmStr. */
static json_t *script_asm(const uint8_t *script, size_t len, bool sighash_decode)
{
	struct proto_writer w;
	json_t *v = NULL;
	proto_writer_init(&w);
	if (script_to_asm(script, len, sighash_decode, &w) == 0)
		v = w.len ? json_stringn((const char *)w.buf, w.len) : json_string("");
	proto_writer_release(&w);
	return v;
}

json_t *json_script_pubkey(const uint8_t *script, size_t len, const struct proto_params *net)
{
	struct script_solution sol;
	char addr[SCRIPT_ADDRESS_MAX];
	json_t *o = json_object();
	if (!o)
		return NULL;
	/* Core's ScriptToUniv order: asm, desc, hex, address, type. */
	json_object_set_new(o, "asm", script_asm(script, len, false));
	char *desc = script_descriptor(script, len, net);
	json_object_set_new(o, "desc", desc ? json_string(desc) : NULL);
	xfree(desc);
	json_object_set_new(o, "hex", json_hex(script, len));
	if (script_address(script, len, net, addr, sizeof(addr)) == 0)
		json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "type",
	                    json_string(script_type_name(script_solve(script, len, &sol))));
	return o;
}

json_t *json_script_sig(const uint8_t *script, size_t len)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "asm", script_asm(script, len, true));
	json_object_set_new(o, "hex", json_hex(script, len));
	return o;
}

/* The coin an input spent, as getblock 3's "prevout". */
static json_t *prevout(const struct chain_undo_coin *prev, const struct proto_params *net)
{
	json_t *p = json_object();
	if (!p)
		return NULL;
	json_object_set_new(p, "generated", json_boolean(prev->coinbase));
	json_object_set_new(p, "height", json_integer(prev->height));
	json_object_set_new(p, "value", json_amount(prev->value));
	json_object_set_new(p, "scriptPubKey",
	                    json_script_pubkey(prev->script, prev->script_len, net));
	return p;
}

static json_t *input(const struct proto_tx *tx, const struct proto_txin *in, bool coinbase,
                     const struct chain_undo_coin *prev, const struct proto_params *net)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	const uint8_t *script = proto_txin_script(tx, in);
	if (coinbase) {
		json_object_set_new(o, "coinbase", json_hex(script, in->script_len));
	} else {
		json_object_set_new(o, "txid", json_hash(&in->prevout.txid));
		json_object_set_new(o, "vout", json_integer(in->prevout.n));
		json_object_set_new(o, "scriptSig", json_script_sig(script, in->script_len));
	}
	if (in->wit_count) {
		json_t *w = json_array();
		struct proto_witness_iter it;
		struct proto_span item;
		proto_witness_iter_init(&it, tx, in);
		while (proto_witness_iter_next(&it, &item))
			json_array_append_new(w, json_hex(item.data, item.len));
		json_object_set_new(o, "txinwitness", w);
	}
	if (prev)
		json_object_set_new(o, "prevout", prevout(prev, net));
	json_object_set_new(o, "sequence", json_integer(in->sequence));
	return o;
}

json_t *json_tx(struct proto_tx *tx, const struct proto_params *net,
                const struct chain_undo_coin *spent, unsigned flags)
{
	proto_tx_compute_ids(tx);
	json_t *o = json_object();
	if (!o)
		return NULL;
	bool coinbase = proto_tx_is_coinbase(tx);
	json_object_set_new(o, "txid", json_hash(&tx->txid));
	json_object_set_new(o, "hash", json_hash(&tx->wtxid));
	json_object_set_new(o, "version", json_integer(tx->version));
	json_object_set_new(o, "size", json_integer(tx->size));
	json_object_set_new(o, "vsize", json_integer(proto_tx_vsize(tx)));
	json_object_set_new(o, "weight", json_integer(proto_tx_weight(tx)));
	json_object_set_new(o, "locktime", json_integer(tx->locktime));
	json_t *vin = json_array();
	int64_t in_total = 0, out_total = 0;
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct chain_undo_coin *prev = spent && !coinbase ? &spent[i] : NULL;
		if (prev)
			in_total += prev->value;
		json_array_append_new(vin, input(tx, &tx->vin[i], coinbase,
		                                 flags & JSON_TX_PREVOUT ? prev : NULL, net));
	}
	json_object_set_new(o, "vin", vin);
	json_t *vout = json_array();
	for (uint32_t i = 0; i < tx->n_out; i++) {
		const struct proto_txout *out = &tx->vout[i];
		out_total += out->value;
		json_t *e = json_object();
		json_object_set_new(e, "value", json_amount(out->value));
		json_object_set_new(e, "n", json_integer(i));
		json_object_set_new(
		    e, "scriptPubKey",
		    json_script_pubkey(proto_txout_script(tx, out), out->script_len, net));
		json_array_append_new(vout, e);
	}
	json_object_set_new(o, "vout", vout);
	/* Core shows a fee only where it knows every input's value. */
	if (spent && !coinbase)
		json_object_set_new(o, "fee", json_amount(in_total - out_total));
	if (flags & JSON_TX_HEX) {
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(tx, &w);
		if (!w.err)
			json_object_set_new(o, "hex", json_hex(w.buf, w.len));
		proto_writer_release(&w);
	}
	return o;
}

/*
 * blockheaderToJSON's fields in its order into o. Without info only the
 * header's own fields; n_tx < 0 leaves "nTx" out (a bare header).
 */
static void header_fields(json_t *o, const struct proto_block_header *h,
                          const struct json_block_info *info, int64_t n_tx)
{
	struct proto_hash hash;
	char work[65];
	proto_block_header_hash(h, &hash);
	json_object_set_new(o, "hash", json_hash(&hash));
	if (info) {
		json_object_set_new(o, "confirmations", json_integer(info->confirmations));
		json_object_set_new(o, "height", json_integer(info->height));
	}
	json_object_set_new(o, "version", json_integer(h->version));
	json_object_set_new(o, "versionHex", json_hex32((uint32_t)h->version));
	json_object_set_new(o, "merkleroot", json_hash(&h->merkle_root));
	json_object_set_new(o, "time", json_integer(h->time));
	if (info)
		json_object_set_new(o, "mediantime", json_integer(info->mediantime));
	json_object_set_new(o, "nonce", json_integer(h->nonce));
	json_object_set_new(o, "bits", json_hex32(h->bits));
	if (info)
		json_object_set_new(o, "target", json_target(h->bits));
	json_object_set_new(o, "difficulty", json_double(chain_difficulty(h->bits)));
	if (info) {
		chain_work_hex(info->chainwork, work);
		json_object_set_new(o, "chainwork", json_string(work));
	}
	if (n_tx >= 0)
		json_object_set_new(o, "nTx", json_integer(n_tx));
	if (!proto_hash_is_zero(&h->prev))
		json_object_set_new(o, "previousblockhash", json_hash(&h->prev));
	if (info && info->next)
		json_object_set_new(o, "nextblockhash", json_hash(info->next));
}

json_t *json_block_header(const struct proto_block_header *h, const struct json_block_info *info)
{
	json_t *o = json_object();
	if (o)
		header_fields(o, h, info, info ? (int64_t)info->n_tx : -1);
	return o;
}

json_t *json_block(struct proto_block *b, const struct json_block_info *info,
                   const struct proto_params *net, int verbosity,
                   const struct chain_block_undo *undo)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	header_fields(o, &b->hdr, info, b->n_tx);
	uint32_t weight = proto_block_weight(b);
	json_object_set_new(o, "strippedsize",
	                    json_integer((weight - b->size) / (PROTO_WITNESS_SCALE - 1)));
	json_object_set_new(o, "size", json_integer(b->size));
	json_object_set_new(o, "weight", json_integer(weight));
	/* Undo data that is not this block's (a count differs) gives no fees. */
	if (undo && undo->n_tx + 1 != b->n_tx)
		undo = NULL;
	unsigned flags = JSON_TX_HEX | (verbosity >= 3 ? JSON_TX_PREVOUT : 0);
	json_t *txs = json_array();
	for (uint32_t i = 0; txs && i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		if (verbosity <= 1) {
			proto_tx_compute_ids(tx);
			json_array_append_new(txs, json_hash(&tx->txid));
			continue;
		}
		/* Undo entry i - 1 is tx i's: the coinbase spends nothing. */
		const struct chain_undo_coin *spent = NULL;
		if (undo && i > 0 && undo->n_coins[i - 1] == tx->n_in)
			spent = &undo->coins[undo->first[i - 1]];
		json_array_append_new(txs, json_tx(tx, net, spent, flags));
	}
	json_object_set_new(o, "tx", txs);
	return o;
}
