/*
 * daemon/ctl_json.c: JSON as Bitcoin Core prints it, for the control
 * socket: amounts with exactly eight decimals, doubles as UniValue prints
 * them, and transactions in decoderawtransaction's shape (with getblock's
 * fee and prevout fields when the block's undo data is at hand).
 *
 * jansson prints a real as "%.17g" and cannot print 50.00000000 at all, so
 * such numbers are built as strings carrying a tag, and ctl_json_dumps
 * turns each tagged string back into a bare number. A tag only counts as a
 * whole string value whose remaining characters are all number characters,
 * so text quoting a user's input cannot become a number.
 *
 * Any thread: the validation thread builds results with these.
 */
#include "daemon/ctl_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "daemon/ctl_json.h"
#include "script/script.h"

#define NUM_TAG "\x01num:"
/* How json_dumps writes the tag's first byte. */
#define NUM_TAG_DUMPED "\"\\u0001num:"

json_t *ctl_json_amount(int64_t sats)
{
	char buf[64];
	uint64_t abs = sats < 0 ? (uint64_t)0 - (uint64_t)sats : (uint64_t)sats;
	snprintf(buf, sizeof(buf), NUM_TAG "%s%" PRIu64 ".%08" PRIu64, sats < 0 ? "-" : "",
	         abs / (uint64_t)PROTO_COIN, abs % (uint64_t)PROTO_COIN);
	return json_string(buf);
}

json_t *ctl_json_double(double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), NUM_TAG "%.16g", v);
	return json_string(buf);
}

static bool num_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
}

char *ctl_json_dumps(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s)
		return NULL;
	size_t tag = strlen(NUM_TAG_DUMPED);
	char *out = s, *in = s;
	while (*in) {
		if (*in == '"' && !strncmp(in, NUM_TAG_DUMPED, tag)) {
			char *e = in + tag;
			while (num_char(*e))
				e++;
			if (*e == '"' && e > in + tag) {
				size_t n = (size_t)(e - (in + tag));
				memmove(out, in + tag, n);
				out += n;
				in = e + 1;
				continue;
			}
		}
		if (*in == '"') {
			/* Copy a whole string verbatim (escapes included) so a quote
			 * inside one is never taken for the start of a tag. */
			*out++ = *in++;
			while (*in && *in != '"') {
				if (*in == '\\' && in[1])
					*out++ = *in++;
				*out++ = *in++;
			}
			if (*in)
				*out++ = *in++;
			continue;
		}
		*out++ = *in++;
	}
	*out = 0;
	return s;
}

json_t *ctl_json_hex(const uint8_t *data, size_t len)
{
	char *s = xmalloc(2 * len + 1);
	if (!s)
		return NULL;
	proto_hex_encode(data, len, s);
	json_t *v = json_string(s);
	xfree(s);
	return v;
}

json_t *ctl_json_hash(const struct proto_hash *h)
{
	char hex[65];
	proto_hash_to_hex(h, hex);
	return json_string(hex);
}

/* Core's ScriptToAsmStr. */
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

json_t *ctl_json_script_pubkey(const uint8_t *script, size_t len, const struct proto_params *net)
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
	json_object_set_new(o, "hex", ctl_json_hex(script, len));
	if (script_address(script, len, net, addr, sizeof(addr)) == 0)
		json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "type",
	                    json_string(script_type_name(script_solve(script, len, &sol))));
	return o;
}

static json_t *json_input(const struct proto_tx *tx, const struct proto_txin *in, bool coinbase,
                          const struct chain_undo_coin *prev, const struct proto_params *net)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	const uint8_t *script = proto_txin_script(tx, in);
	if (coinbase) {
		json_object_set_new(o, "coinbase", ctl_json_hex(script, in->script_len));
	} else {
		json_object_set_new(o, "txid", ctl_json_hash(&in->prevout.txid));
		json_object_set_new(o, "vout", json_integer(in->prevout.n));
		json_t *ss = json_object();
		json_object_set_new(ss, "asm", json_asm(script, in->script_len, true));
		json_object_set_new(ss, "hex", ctl_json_hex(script, in->script_len));
		json_object_set_new(o, "scriptSig", ss);
	}
	if (in->wit_count) {
		json_t *w = json_array();
		struct proto_witness_iter it;
		struct proto_span item;
		proto_witness_iter_init(&it, tx, in);
		while (proto_witness_iter_next(&it, &item))
			json_array_append_new(w, ctl_json_hex(item.data, item.len));
		json_object_set_new(o, "txinwitness", w);
	}
	if (prev) {
		json_t *p = json_object();
		json_object_set_new(p, "generated", json_boolean(prev->coinbase));
		json_object_set_new(p, "height", json_integer(prev->height));
		json_object_set_new(p, "value", ctl_json_amount(prev->value));
		json_object_set_new(p, "scriptPubKey",
		                    ctl_json_script_pubkey(prev->script, prev->script_len, net));
		json_object_set_new(o, "prevout", p);
	}
	json_object_set_new(o, "sequence", json_integer(in->sequence));
	return o;
}

json_t *ctl_json_tx(struct proto_tx *tx, const struct proto_params *net,
                    const struct chain_undo_coin *spent, bool show_prevout, bool include_hex)
{
	proto_tx_compute_ids(tx);
	json_t *o = json_object();
	if (!o)
		return NULL;
	bool coinbase = proto_tx_is_coinbase(tx);
	json_object_set_new(o, "txid", ctl_json_hash(&tx->txid));
	json_object_set_new(o, "hash", ctl_json_hash(&tx->wtxid));
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
		json_array_append_new(
		    vin, json_input(tx, &tx->vin[i], coinbase, show_prevout ? prev : NULL, net));
	}
	json_object_set_new(o, "vin", vin);
	json_t *vout = json_array();
	for (uint32_t i = 0; i < tx->n_out; i++) {
		const struct proto_txout *out = &tx->vout[i];
		out_total += out->value;
		json_t *e = json_object();
		json_object_set_new(e, "value", ctl_json_amount(out->value));
		json_object_set_new(e, "n", json_integer(i));
		json_object_set_new(
		    e, "scriptPubKey",
		    ctl_json_script_pubkey(proto_txout_script(tx, out), out->script_len, net));
		json_array_append_new(vout, e);
	}
	json_object_set_new(o, "vout", vout);
	/* Core shows a fee only where it knows every input's value. */
	if (spent && !coinbase)
		json_object_set_new(o, "fee", ctl_json_amount(in_total - out_total));
	if (include_hex) {
		struct proto_writer w;
		proto_writer_init(&w);
		proto_tx_encode(tx, &w);
		if (!w.err)
			json_object_set_new(o, "hex", ctl_json_hex(w.buf, w.len));
		proto_writer_release(&w);
	}
	return o;
}
