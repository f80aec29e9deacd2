/* tools/peertool_json.c: transactions, blocks and headers as bitcoin-cli's JSON. */
#include "tools/peertool_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "script/script.h"
#include "tools/peertool.h"

/* Marks an amount string for peertool_json_print; never appears in hex or
 * in anything a user controls in the positions we print. */
#define RAW_TAG         "\x01raw:" /* 'r' is no hex digit: the escape ends at 01 */
#define RAW_TAG_ESCAPED "\"\\u0001raw:"

json_t *peertool_json_hex(const uint8_t *data, size_t len)
{
	char *s = xmalloc(2 * len + 1);
	if (!s)
		return NULL;
	proto_hex_encode(data, len, s);
	json_t *v = json_string(s);
	xfree(s);
	return v;
}

json_t *peertool_json_hash(const struct proto_hash *h)
{
	char hex[65];
	proto_hash_to_hex(h, hex);
	return json_string(hex);
}

json_t *peertool_json_amount(int64_t sats)
{
	char buf[64];
	uint64_t abs = sats < 0 ? (uint64_t)0 - (uint64_t)sats : (uint64_t)sats;
	snprintf(buf, sizeof(buf), RAW_TAG "%s%" PRIu64 ".%08" PRIu64, sats < 0 ? "-" : "",
	         abs / (uint64_t)PROTO_COIN, abs % (uint64_t)PROTO_COIN);
	return json_string(buf);
}

json_t *peertool_json_u64(uint64_t v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), RAW_TAG "%" PRIu64, v);
	return json_string(buf);
}

/* A double printed as Core's UniValue prints it (%.16g: 1, not 1.0). */
static json_t *json_double(double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), RAW_TAG "%.16g", v);
	return json_string(buf);
}

int peertool_json_print(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
	if (!s)
		return -1;
	/* Unwrap tagged numbers: "\u0001raw:1.50000000" -> 1.50000000 */
	char *out = s, *in = s;
	size_t tag = strlen(RAW_TAG_ESCAPED);
	while (*in) {
		if (!strncmp(in, RAW_TAG_ESCAPED, tag)) {
			in += tag;
			while (*in && *in != '"')
				*out++ = *in++;
			if (*in)
				in++;
		} else {
			*out++ = *in++;
		}
	}
	*out = 0;
	puts(s);
	free(s);
	return 0;
}

/* Core's ScriptToAsmStr as a JSON string. */
static json_t *json_asm(const uint8_t *script, size_t len, bool sighash_decode)
{
	struct proto_writer w;
	json_t *v = NULL;
	proto_writer_init(&w);
	if (script_to_asm(script, len, sighash_decode, &w) == 0)
		v = w.len ? json_stringn((const char *)w.buf, w.len) : json_string("");
	proto_writer_release(&w);
	return v;
}

json_t *peertool_json_script_pubkey(const uint8_t *script, size_t len,
                                    const struct proto_params *net)
{
	struct script_solution sol;
	char addr[SCRIPT_ADDRESS_MAX];
	json_t *o = json_object();
	if (!o)
		return NULL;
	/* Core's ScriptToUniv order: asm, desc, hex, address, type. */
	json_object_set_new(o, "asm", json_asm(script, len, false));
	char *desc = script_descriptor(script, len, net);
	json_object_set_new(o, "desc", desc ? json_string(desc) : NULL);
	xfree(desc);
	json_object_set_new(o, "hex", peertool_json_hex(script, len));
	if (script_address(script, len, net, addr, sizeof(addr)) == 0)
		json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "type",
	                    json_string(script_type_name(script_solve(script, len, &sol))));
	return o;
}

static json_t *json_input(const struct proto_tx *tx, const struct proto_txin *in, int coinbase)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	const uint8_t *script = proto_txin_script(tx, in);
	if (coinbase) {
		json_object_set_new(o, "coinbase", peertool_json_hex(script, in->script_len));
	} else {
		json_object_set_new(o, "txid", peertool_json_hash(&in->prevout.txid));
		json_object_set_new(o, "vout", json_integer(in->prevout.n));
		json_t *ss = json_object();
		json_object_set_new(ss, "asm", json_asm(script, in->script_len, true));
		json_object_set_new(ss, "hex", peertool_json_hex(script, in->script_len));
		json_object_set_new(o, "scriptSig", ss);
	}
	if (in->wit_count) {
		json_t *w = json_array();
		struct proto_witness_iter it;
		struct proto_span item;
		proto_witness_iter_init(&it, tx, in);
		while (proto_witness_iter_next(&it, &item))
			json_array_append_new(w, peertool_json_hex(item.data, item.len));
		json_object_set_new(o, "txinwitness", w);
	}
	json_object_set_new(o, "sequence", json_integer(in->sequence));
	return o;
}

json_t *peertool_json_tx(struct proto_tx *tx, int include_hex, const struct proto_params *net)
{
	proto_tx_compute_ids(tx);
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "txid", peertool_json_hash(&tx->txid));
	json_object_set_new(o, "hash", peertool_json_hash(&tx->wtxid));
	json_object_set_new(o, "version", json_integer(tx->version));
	json_object_set_new(o, "size", json_integer(tx->size));
	json_object_set_new(o, "vsize", json_integer(proto_tx_vsize(tx)));
	json_object_set_new(o, "weight", json_integer(proto_tx_weight(tx)));
	json_object_set_new(o, "locktime", json_integer(tx->locktime));
	json_t *vin = json_array();
	int coinbase = proto_tx_is_coinbase(tx);
	for (uint32_t i = 0; i < tx->n_in; i++)
		json_array_append_new(vin, json_input(tx, &tx->vin[i], coinbase));
	json_object_set_new(o, "vin", vin);
	json_t *vout = json_array();
	for (uint32_t i = 0; i < tx->n_out; i++) {
		const struct proto_txout *out = &tx->vout[i];
		json_t *e = json_object();
		json_object_set_new(e, "value", peertool_json_amount(out->value));
		json_object_set_new(e, "n", json_integer(i));
		json_object_set_new(
		    e, "scriptPubKey",
		    peertool_json_script_pubkey(proto_txout_script(tx, out), out->script_len, net));
		json_array_append_new(vout, e);
	}
	json_object_set_new(o, "vout", vout);
	if (include_hex) {
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(tx, &w);
		if (!w.err)
			json_object_set_new(o, "hex", peertool_json_hex(w.buf, w.len));
		proto_writer_release(&w);
	}
	return o;
}

/* Difficulty as Core's GetDifficulty: the ratio of the easiest target
 * (0x1d00ffff) to this one, computed from the compact form. */
static double difficulty(uint32_t bits)
{
	int shift = (bits >> 24) & 0xff;
	double diff = (double)0x0000ffff / (double)(bits & 0x00ffffff);
	while (shift < 29) {
		diff *= 256.0;
		shift++;
	}
	while (shift > 29) {
		diff /= 256.0;
		shift--;
	}
	return diff;
}

static void header_fields(json_t *o, const struct proto_block_header *h)
{
	struct proto_hash hash;
	char buf[16];
	proto_block_header_hash(h, &hash);
	json_object_set_new(o, "hash", peertool_json_hash(&hash));
	json_object_set_new(o, "version", json_integer(h->version));
	snprintf(buf, sizeof(buf), "%08" PRIx32, (uint32_t)h->version);
	json_object_set_new(o, "versionHex", json_string(buf));
	json_object_set_new(o, "merkleroot", peertool_json_hash(&h->merkle_root));
	json_object_set_new(o, "time", json_integer(h->time));
	json_object_set_new(o, "nonce", json_integer(h->nonce));
	snprintf(buf, sizeof(buf), "%08" PRIx32, h->bits);
	json_object_set_new(o, "bits", json_string(buf));
	json_object_set_new(o, "difficulty", json_double(difficulty(h->bits)));
}

json_t *peertool_json_header(const struct proto_block_header *h)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	header_fields(o, h);
	if (!proto_hash_is_zero(&h->prev))
		json_object_set_new(o, "previousblockhash", peertool_json_hash(&h->prev));
	return o;
}

json_t *peertool_json_block(struct proto_block *b, const struct proto_params *net)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	header_fields(o, &b->hdr);
	json_object_set_new(o, "nTx", json_integer(b->n_tx));
	if (!proto_hash_is_zero(&b->hdr.prev))
		json_object_set_new(o, "previousblockhash", peertool_json_hash(&b->hdr.prev));
	uint32_t weight = proto_block_weight(b);
	json_object_set_new(o, "strippedsize",
	                    json_integer((weight - b->size) / (PROTO_WITNESS_SCALE - 1)));
	json_object_set_new(o, "size", json_integer(b->size));
	json_object_set_new(o, "weight", json_integer(weight));
	json_t *txs = json_array();
	for (uint32_t i = 0; i < b->n_tx; i++)
		json_array_append_new(txs, peertool_json_tx(&b->txs[i], 1, net));
	json_object_set_new(o, "tx", txs);
	return o;
}
