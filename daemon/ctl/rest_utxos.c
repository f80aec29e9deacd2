/*
 * daemon/ctl/rest_utxos.c: Core 29's /rest/getutxos (BIP64): outpoints from
 * the URI (/checkmempool/TXID-N/...) or a binary or hex body, at most 15,
 * looked up with gettxout (with the mempool when asked: an output a mempool
 * transaction spends is gone, one it creates is there at Core's
 * MEMPOOL_HEIGHT), and answered as Core's bitmap and coins in .bin, .hex
 * or .json. Runs on an HTTP worker thread (ctl/rest.c).
 */
#include "daemon/ctl/rest.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "base/alloc.h"

/* Core's MEMPOOL_HEIGHT: the height of a coin a mempool transaction made. */
#define REST_MEMPOOL_HEIGHT 0x7FFFFFFF
/* Attempts at an answer that one tip covers whole. */
#define REST_UTXO_TRIES 3

/* ---- getutxos ---- (kept) ---------------------------------------------------------------------
 */

/* One looked-up outpoint: gettxout's object, or NULL when spent or unknown. */
struct utxo_look {
	json_t *o;
	int64_t sats;
	uint32_t height;
};

/* An amount as Core's ValueFromAmount prints it. */
static void b_amount(struct rest_buf *b, int64_t sats)
{
	uint64_t a = sats < 0 ? (uint64_t)0 - (uint64_t)sats : (uint64_t)sats;
	rest_buf_fmt(b, "%s%llu.%08llu", sats < 0 ? "-" : "", (unsigned long long)(a / 100000000u),
	             (unsigned long long)(a % 100000000u));
}

/* The tip's hash (display hex) and height. */
static bool utxo_tip(const struct rest_ep *e, char hash[65], int64_t *height,
                     struct rest_answer *out)
{
	struct rest_call c;
	size_t n = 0;
	const char *h;
	if (rest_run(e->call, e->ctx, "getbestblockhash", json_array(), &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 500, "%s", c.msg);
		return false;
	}
	h = rest_result_hex(&c, &n);
	if (!h || n != 64) {
		rest_done(&c);
		rest_fail(out, 500, "malformed reply from peerd");
		return false;
	}
	memcpy(hash, h, 64);
	hash[64] = 0;
	rest_done(&c);
	if (!height)
		return true;
	if (rest_run(e->call, e->ctx, "getblockheader", json_pack("[s, b]", hash, 1), &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 500, "%s", c.msg);
		return false;
	}
	json_t *o = rest_parsed(&c);
	rest_done(&c);
	json_t *ht = json_object_get(o, "height");
	bool ok = json_is_integer(ht);
	*height = ok ? json_integer_value(ht) : 0;
	json_decref(o);
	if (!ok)
		rest_fail(out, 500, "malformed reply from peerd");
	return ok;
}

/*
 * Core's lookup under one lock, here as gettxout per outpoint between two
 * reads of the tip: when the tip moved meanwhile, again (the answer then
 * describes one chain state, as Core's).
 */
static bool utxo_lookup(const struct rest_ep *e, const struct rest_outpoint *v, size_t n,
                        bool mempool, struct utxo_look *look, char tip[65], int64_t *height,
                        struct rest_answer *out)
{
	for (int attempt = 0; attempt < REST_UTXO_TRIES; attempt++) {
		if (!utxo_tip(e, tip, height, out))
			return false;
		for (size_t i = 0; i < n; i++) {
			json_decref(look[i].o);
			memset(&look[i], 0, sizeof(look[i]));
			struct rest_call c;
			if (rest_run(e->call, e->ctx, "gettxout",
			             json_pack("[s, I, b]", v[i].txid, (json_int_t)v[i].n, mempool),
			             &c)) {
				if (!rest_common_failure(&c, out))
					rest_fail(out, 500, "%s", c.msg);
				return false;
			}
			json_t *o = rest_parsed(&c);
			rest_done(&c);
			if (!json_is_object(o)) {
				json_decref(o);
				continue; /* null: spent or never there */
			}
			json_t *val = json_object_get(o, "value"),
			       *conf = json_object_get(o, "confirmations");
			if (!json_is_number(val) || !json_is_integer(conf)) {
				json_decref(o);
				rest_fail(out, 500, "malformed reply from peerd");
				return false;
			}
			look[i].o = o;
			look[i].sats = (int64_t)llround(json_number_value(val) * 1e8);
			json_int_t cf = json_integer_value(conf);
			look[i].height =
			    cf <= 0 ? REST_MEMPOOL_HEIGHT : (uint32_t)(*height - cf + 1);
		}
		char again[65];
		if (!utxo_tip(e, again, NULL, out))
			return false;
		if (strcmp(again, tip) == 0)
			return true;
	}
	rest_fail(out, 503, "Service temporarily unavailable: the chain tip kept moving");
	return false;
}

static void utxo_answer(enum rest_format f, const struct utxo_look *look, size_t n,
                        const char tip[65], int64_t height, struct rest_answer *out)
{
	struct rest_buf b = {0};
	if (f == REST_JSON) {
		rest_buf_fmt(&b, "{\"chainHeight\":%lld,\"chaintipHash\":\"%s\",\"bitmap\":\"",
		             (long long)height, tip);
		for (size_t i = 0; i < n; i++)
			rest_buf_str(&b, look[i].o ? "1" : "0");
		rest_buf_str(&b, "\",\"utxos\":[");
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!look[i].o)
				continue;
			char *spk =
			    json_dumps(json_object_get(look[i].o, "scriptPubKey"), JSON_COMPACT);
			rest_buf_fmt(&b, "%s{\"height\":%lld,\"value\":", k++ ? "," : "",
			             (long long)(int32_t)look[i].height);
			b_amount(&b, look[i].sats);
			rest_buf_str(&b, ",\"scriptPubKey\":");
			if (spk)
				rest_buf_str(&b, spk);
			else
				b.failed = true;
			rest_buf_str(&b, "}");
			xfree(spk);
		}
		rest_buf_str(&b, "]}\n");
		rest_give(out, REST_TYPE_JSON, &b);
		return;
	}
	/* BIP64's answer: height, tip, bitmap, then each coin as Core's CCoin. */
	rest_buf_le(&b, (uint64_t)(uint32_t)height, 4);
	b.failed |= !rest_buf_unhex(&b, tip, 64, true);
	size_t nb = (n + 7) / 8, hits = 0;
	uint8_t bitmap[(REST_MAX_OUTPOINTS + 7) / 8] = {0};
	for (size_t i = 0; i < n; i++) {
		if (look[i].o) {
			bitmap[i / 8] |= (uint8_t)(1u << (i % 8));
			hits++;
		}
	}
	rest_buf_compact(&b, nb);
	rest_buf_add(&b, bitmap, nb);
	rest_buf_compact(&b, hits);
	for (size_t i = 0; i < n; i++) {
		if (!look[i].o)
			continue;
		const char *hex = json_string_value(
		    json_object_get(json_object_get(look[i].o, "scriptPubKey"), "hex"));
		size_t hl = hex ? strlen(hex) : 1;
		rest_buf_le(&b, 0, 4); /* Core's nTxVerDummy */
		rest_buf_le(&b, look[i].height, 4);
		rest_buf_le(&b, (uint64_t)look[i].sats, 8);
		rest_buf_compact(&b, hl / 2);
		b.failed |= !hex || !rest_buf_unhex(&b, hex, hl, false);
	}
	if (f == REST_BIN) {
		rest_give(out, REST_TYPE_BIN, &b);
		return;
	}
	struct rest_buf hx = {0};
	rest_buf_hex(&hx, (const uint8_t *)b.p, b.len);
	rest_buf_str(&hx, "\n");
	hx.failed |= b.failed;
	xfree(b.p);
	rest_give(out, REST_TYPE_TEXT, &hx);
}

void rest_ep_getutxos(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	struct rest_outpoint v[REST_MAX_OUTPOINTS];
	size_t n = 0;
	bool mempool = false, from_uri = false;
	if (e->rq->len == 0 && pl <= 1) {
		rest_fail(out, 400, "Error: empty request");
		return;
	}
	if (pl > 1) {
		enum rest_parse_result r = rest_parse_outpoints_uri(e->part, pl, &mempool, v, &n);
		if (r == REST_PARSE_ERROR) {
			rest_fail(out, 400, "Parse error");
			return;
		}
		if (r == REST_PARSE_EMPTY) {
			rest_fail(out, 400, "Error: empty request");
			return;
		}
		from_uri = true;
	}
	if (f == REST_BIN || f == REST_HEX) {
		const uint8_t *body = (const uint8_t *)e->rq->body;
		size_t blen = e->rq->len;
		uint8_t *dec = NULL;
		if (f == REST_HEX && blen) {
			/* Core's ParseHex: invalid hex is no body at all. */
			dec = xmalloc(blen / 2 + 1);
			if (!dec) {
				rest_fail(out, 500, "out of memory");
				return;
			}
			blen = rest_parse_hex(e->rq->body, blen, dec);
			body = dec;
		}
		if (blen) {
			enum rest_parse_result r =
			    from_uri ? REST_PARSE_OK
			             : rest_parse_outpoints_bin(body, blen, &mempool, v, &n);
			xfree(dec);
			if (from_uri) {
				rest_fail(
				    out, 400,
				    "Combination of URI scheme inputs and raw post data is not "
				    "allowed");
				return;
			}
			if (r == REST_PARSE_ERROR) {
				rest_fail(out, 400, "Parse error");
				return;
			}
		} else {
			xfree(dec);
		}
	} else if (f == REST_JSON) {
		if (!from_uri) {
			rest_fail(out, 400, "Error: empty request");
			return;
		}
	} else {
		rest_no_format(out, false);
		return;
	}
	if (n > REST_MAX_OUTPOINTS) {
		rest_fail(out, 400, "Error: max outpoints exceeded (max: %d, tried: %zu)",
		          REST_MAX_OUTPOINTS, n);
		return;
	}
	struct utxo_look look[REST_MAX_OUTPOINTS];
	memset(look, 0, sizeof(look));
	char tip[65];
	int64_t height = 0;
	if (utxo_lookup(e, v, n, mempool, look, tip, &height, out))
		utxo_answer(f, look, n, tip, height, out);
	for (size_t i = 0; i < n; i++)
		json_decref(look[i].o);
}
