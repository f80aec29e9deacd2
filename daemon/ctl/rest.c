/*
 * daemon/ctl/rest.c: Core 29's REST interface (rest.cpp; doc/rest.md):
 * block, block/notxdetails, headers, blockhashbyheight, chaininfo,
 * mempool/info, mempool/contents, getutxos, tx, blockfilter,
 * blockfilterheaders and deploymentinfo, each in Core's formats (.bin,
 * .hex, .json) with Core's status codes and texts.
 *
 * One dispatcher: every answer is made of the same methods the control
 * socket and the JSON-RPC door run (getblock, getblockheader, getblockhash,
 * getblockchaininfo, getmempoolinfo, getrawmempool, gettxout,
 * getrawtransaction, getbestblockhash), called through rpc_call_fn as
 * ctl/rpc_jsonrpc.c calls them; JSON results are spliced as text, so their
 * numbers stay byte for byte what the control socket printed. The
 * binary forms are built here from those results (a block's and a
 * transaction's hex, a header's fields, gettxout's value and script).
 *
 * The optional indexes answer as Core's: tx finds the mempool's and, with
 * -txindex, confirmed transactions; blockfilter and blockfilterheaders
 * need -blockfilterindex ("Index is not enabled ..."; ctl/rest_filter.c);
 * deploymentinfo is served only when the dispatcher has getdeploymentinfo
 * (else 404, as a path no handler takes).
 *
 * Threads: an HTTP worker (ctl/rpc_http.c) calls rest_answer; it may block
 * on the dispatcher. Nothing here is shared between calls.
 */
#include "daemon/ctl/internal.h"
#include "daemon/ctl/rest.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* ---- tx ----------------------------------------------------------------------- */

/*
 * A confirmed transaction (found by -txindex) as Core's rest_tx prints it:
 * TxToUniv with the block hash, so "blockhash" comes before "hex" and there
 * are no confirmations or times (getrawtransaction's TxToJSON adds those
 * after "hex"). The dispatcher's compact text is rearranged rather than
 * parsed and printed again, which would change how amounts are written.
 */
static void tx_json(const struct rest_call *c, struct rest_answer *out)
{
	static const char bh[] = ",\"blockhash\":\"";
	static const char hx[] = ",\"hex\":\"";
	const char *r = c->res, *end = c->res + c->rlen;
	const char *b = memmem(r, c->rlen, bh, sizeof(bh) - 1), *h = NULL;
	for (const char *p = r; b && (p = memmem(p, (size_t)(b - p), hx, sizeof(hx) - 1)); p++)
		h = p;
	size_t blen = sizeof(bh) - 1 + 64 + 1;
	if (!b || !h || (size_t)(end - b) < blen) {
		rest_answer_json(c, out);
		return;
	}
	struct rest_buf o = {0};
	rest_buf_add(&o, r, (size_t)(h - r));
	rest_buf_add(&o, b, blen);
	rest_buf_add(&o, h, (size_t)(b - h));
	rest_buf_str(&o, "}\n");
	rest_give(out, REST_TYPE_JSON, &o);
}

static void ep_tx(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	if (!rest_is_hash(e->part, pl)) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)pl, e->part);
		return;
	}
	char h[65];
	rest_lower_hash(e->part, h);
	/* The mempool, then -txindex's block (getrawtransaction's own order). */
	struct rest_call c;
	if (rest_run_bytes(e, "getrawtransaction", json_pack("[s, i]", h, f == REST_JSON ? 1 : 0),
	                   &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 404, "%.*s not found", (int)pl, e->part);
		return;
	}
	if (f == REST_BIN || f == REST_HEX)
		rest_answer_hex(&c, f, out);
	else if (f == REST_JSON)
		tx_json(&c, out);
	else
		rest_no_format(out, false);
	rest_done(&c);
}

/* ---- block -------------------------------------------------------------------- */

static void block(const struct rest_ep *e, struct rest_answer *out, int verbosity)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	if (!rest_is_hash(e->part, pl)) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)pl, e->part);
		return;
	}
	char h[65];
	rest_lower_hash(e->part, h);
	/* Core reads the block before it looks at the format: a missing one is
	 * "not found" whatever was asked. Without a format the header says whether. */
	struct rest_call c;
	int rc = f == REST_UNDEF
	             ? rest_run(e->call, e->ctx, "getblockheader", json_pack("[s, b]", h, 0), &c)
	             : rest_run_bytes(e, "getblock",
	                              json_pack("[s, i]", h, f == REST_JSON ? verbosity : 0), &c);
	if (rc) {
		if (rest_common_failure(&c, out))
			return;
		/* Core's rest_block: a pruned block says so. */
		if (strcmp(c.msg, "Block not available (pruned data)") == 0)
			rest_fail(out, 404, "%.*s not available (pruned data)", (int)pl, e->part);
		else
			rest_fail(out, 404, "%.*s not found", (int)pl, e->part);
		return;
	}
	if (f == REST_BIN || f == REST_HEX)
		rest_answer_hex(&c, f, out);
	else if (f == REST_JSON)
		rest_answer_json(&c, out);
	else
		rest_no_format(out, false);
	rest_done(&c);
}

/* Core's TxVerbosity::SHOW_DETAILS_AND_PREVOUT: getblock's verbosity 3. */
static void ep_block(const struct rest_ep *e, struct rest_answer *out)
{
	block(e, out, 3);
}

/* Core's TxVerbosity::SHOW_TXID: getblock's verbosity 1. */
static void ep_block_notxdetails(const struct rest_ep *e, struct rest_answer *out)
{
	block(e, out, 1);
}

/* ---- headers -------------------------------------------------------------------- */

/* The 80 bytes of a header from getblockheader's object. */
static bool header_bytes(json_t *o, struct rest_buf *b)
{
	const char *prev = json_string_value(json_object_get(o, "previousblockhash"));
	const char *root = json_string_value(json_object_get(o, "merkleroot"));
	const char *bits = json_string_value(json_object_get(o, "bits"));
	json_t *ver = json_object_get(o, "version"), *t = json_object_get(o, "time"),
	       *nonce = json_object_get(o, "nonce");
	if (!root || !bits || strlen(bits) != 8 || !json_is_integer(ver) || !json_is_integer(t) ||
	    !json_is_integer(nonce))
		return false;
	rest_buf_le(b, (uint64_t)(uint32_t)json_integer_value(ver), 4);
	static const char zero[65] =
	    "0000000000000000000000000000000000000000000000000000000000000000";
	if (!rest_buf_unhex(b, prev ? prev : zero, 64, true) || strlen(prev ? prev : zero) != 64)
		return false;
	if (strlen(root) != 64 || !rest_buf_unhex(b, root, 64, true))
		return false;
	rest_buf_le(b, (uint64_t)json_integer_value(t), 4);
	/* bits is shown most significant first: reversed is little-endian. */
	if (!rest_buf_unhex(b, bits, 8, true))
		return false;
	rest_buf_le(b, (uint64_t)json_integer_value(nonce), 4);
	return true;
}

/*
 * Core's walk: from hash along the active chain, at most count headers;
 * none when hash is unknown or off the active chain. JSON texts into js
 * (comma-separated), raw headers into raw.
 */
static bool walk_headers(const struct rest_ep *e, const char *hash, uint64_t count,
                         struct rest_buf *js, struct rest_buf *raw, struct rest_answer *out)
{
	char h[65];
	rest_lower_hash(hash, h);
	for (uint64_t k = 0; k < count; k++) {
		struct rest_call c;
		if (rest_run(e->call, e->ctx, "getblockheader", json_pack("[s, b]", h, 1), &c)) {
			if (rest_common_failure(&c, out))
				return false;
			break; /* unknown: no headers */
		}
		json_t *o = rest_parsed(&c);
		json_t *conf = json_object_get(o, "confirmations");
		if (!json_is_object(o) || (json_is_integer(conf) && json_integer_value(conf) < 0)) {
			json_decref(o);
			rest_done(&c);
			break; /* off the active chain */
		}
		if (k)
			rest_buf_str(js, ",");
		rest_buf_add(js, c.res, c.rlen);
		bool ok = header_bytes(o, raw);
		const char *next = json_string_value(json_object_get(o, "nextblockhash"));
		bool more = next && strlen(next) == 64;
		if (more)
			memcpy(h, next, 65);
		json_decref(o);
		rest_done(&c);
		if (!ok) {
			rest_fail(out, 500, "malformed reply from peerd");
			return false;
		}
		if (!more)
			break;
	}
	return true;
}

/* A query parameter (NULL: absent); false when the URI did not parse (answered). */
static bool query(const struct rest_ep *e, const char *key, const char **v, struct rest_answer *out)
{
	*v = NULL;
	if (e->rq->query && e->rq->query(e->rq->qctx, key, v)) {
		rest_fail(out, 400,
		          "URI parsing failed, it likely contained RFC 3986 invalid characters");
		return false;
	}
	return true;
}

/* Core's count: a query parameter (default 5) or the older path's segment. */
static bool header_count(const char *raw, uint64_t *count, struct rest_answer *out)
{
	if (!rest_parse_count(raw, REST_MAX_HEADERS, count) || *count < 1) {
		rest_fail(out, 400, "Header count is invalid or out of acceptable range (1-%u): %s",
		          REST_MAX_HEADERS, raw);
		return false;
	}
	return true;
}

static void ep_headers(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	/* /rest/headers/<count>/<hash> (deprecated) or /rest/headers/<hash>?count= */
	const char *slash = memchr(e->part, '/', pl);
	if (slash && memchr(slash + 1, '/', pl - (size_t)(slash - e->part) - 1)) {
		rest_fail(out, 400,
		          "Invalid URI format. Expected /rest/headers/<hash>.<ext>?count=<count>");
		return;
	}
	char raw[64 + 1];
	const char *hash = e->part;
	size_t hl = pl;
	const char *q = NULL;
	if (slash) {
		size_t cl = (size_t)(slash - e->part);
		hash = slash + 1;
		hl = pl - cl - 1;
		snprintf(raw, sizeof(raw), "%.*s", (int)cl, e->part);
		if (cl >= sizeof(raw)) {
			/* Too long to be a count: Core shows it whole. */
			rest_fail(out, 400,
			          "Header count is invalid or out of acceptable range (1-%u): %.*s",
			          REST_MAX_HEADERS, (int)cl, e->part);
			return;
		}
	} else {
		if (!query(e, "count", &q, out))
			return;
	}
	uint64_t count;
	if (!header_count(slash ? raw : q ? q : "5", &count, out))
		return;
	if (!rest_is_hash(hash, hl)) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)hl, hash);
		return;
	}
	if (f == REST_UNDEF) {
		rest_no_format(out, false);
		return;
	}
	struct rest_buf js = {0}, bytes = {0};
	rest_buf_str(&js, "[");
	if (!walk_headers(e, hash, count, &js, &bytes, out)) {
		xfree(js.p);
		xfree(bytes.p);
		return;
	}
	rest_buf_str(&js, "]\n");
	if (f == REST_JSON) {
		rest_give(out, REST_TYPE_JSON, &js);
		xfree(bytes.p);
	} else if (f == REST_BIN) {
		rest_give(out, REST_TYPE_BIN, &bytes);
		xfree(js.p);
	} else {
		struct rest_buf hx = {0};
		rest_buf_hex(&hx, (const uint8_t *)bytes.p, bytes.len);
		rest_buf_str(&hx, "\n");
		hx.failed |= bytes.failed;
		rest_give(out, REST_TYPE_TEXT, &hx);
		xfree(bytes.p);
		xfree(js.p);
	}
}

/* ---- blockhashbyheight ------------------------------------------------------------ */

static void ep_blockhashbyheight(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	int32_t height;
	if (!rest_parse_int32(e->part, pl, &height) || height < 0) {
		char clean[1024];
		rest_sanitize_uri(e->part, pl, clean, sizeof(clean));
		rest_fail(out, 400, "Invalid height: %s", clean);
		return;
	}
	struct rest_call c;
	if (rest_run(e->call, e->ctx, "getblockhash", json_pack("[i]", (json_int_t)height), &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 404, "Block height out of range");
		return;
	}
	size_t n = 0;
	const char *h = rest_result_hex(&c, &n);
	struct rest_buf b = {0};
	if (!h || n != 64) {
		rest_fail(out, 500, "malformed reply from peerd");
	} else if (f == REST_BIN) {
		b.failed |= !rest_buf_unhex(&b, h, n, true);
		rest_give(out, REST_TYPE_BIN, &b);
	} else if (f == REST_HEX) {
		rest_buf_add(&b, h, n);
		rest_buf_str(&b, "\n");
		rest_give(out, REST_TYPE_TEXT, &b);
	} else if (f == REST_JSON) {
		rest_buf_str(&b, "{\"blockhash\":\"");
		rest_buf_add(&b, h, n);
		rest_buf_str(&b, "\"}\n");
		rest_give(out, REST_TYPE_JSON, &b);
	} else {
		rest_no_format(out, false);
	}
	rest_done(&c);
}

/* ---- chaininfo, mempool, deploymentinfo ----------------------------------------------- */

/* A JSON-only endpoint's answer: method(params) spliced. */
static void json_method(const struct rest_ep *e, const char *method, json_t *params,
                        struct rest_answer *out)
{
	struct rest_call c;
	if (rest_run(e->call, e->ctx, method, params, &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 500, "%s", c.msg);
		return;
	}
	rest_answer_json(&c, out);
	rest_done(&c);
}

static void ep_chaininfo(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	if (rest_parse_format(e->part, e->len, &pl) != REST_JSON) {
		rest_no_format(out, true);
		return;
	}
	json_method(e, "getblockchaininfo", json_array(), out);
}

/* A true/false query parameter (Core's texts); false when it answered an error. */
static bool bool_param(const struct rest_ep *e, const char *key, bool dflt, bool *v,
                       struct rest_answer *out)
{
	const char *s;
	if (!query(e, key, &s, out))
		return false;
	if (!s) {
		*v = dflt;
		return true;
	}
	if (strcmp(s, "true") && strcmp(s, "false")) {
		rest_fail(out, 400,
		          "The \"%s\" query parameter must be either \"true\" or \"false\".", key);
		return false;
	}
	*v = strcmp(s, "true") == 0;
	return true;
}

static void ep_mempool(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	bool contents = pl == 8 && memcmp(e->part, "contents", 8) == 0;
	bool info = pl == 4 && memcmp(e->part, "info", 4) == 0;
	if (!contents && !info) {
		rest_fail(out, 400,
		          "Invalid URI format. Expected /rest/mempool/<info|contents>.json");
		return;
	}
	if (f != REST_JSON) {
		rest_no_format(out, true);
		return;
	}
	if (info) {
		json_method(e, "getmempoolinfo", json_array(), out);
		return;
	}
	bool verbose, seq;
	if (!bool_param(e, "verbose", true, &verbose, out) ||
	    !bool_param(e, "mempool_sequence", false, &seq, out))
		return;
	if (verbose && seq) {
		rest_fail(out, 400,
		          "Verbose results cannot contain mempool sequence values. (hint: set "
		          "\"verbose=false\")");
		return;
	}
	json_method(e, "getrawmempool", json_pack("[b, b]", verbose, seq), out);
}

static void ep_deploymentinfo(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	if (rest_parse_format(e->part, e->len, &pl) != REST_JSON) {
		rest_no_format(out, true);
		return;
	}
	/* "/rest/deploymentinfo/" leaves the hash; "/rest/deploymentinfo" nothing. */
	if (!pl) {
		json_method(e, "getdeploymentinfo", json_array(), out);
		return;
	}
	if (!rest_is_hash(e->part, pl)) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)pl, e->part);
		return;
	}
	char h[65];
	rest_lower_hash(e->part, h);
	struct rest_call c;
	if (rest_run(e->call, e->ctx, "getblockheader", json_pack("[s, b]", h, 0), &c)) {
		if (!rest_common_failure(&c, out))
			rest_fail(out, 400, "Block not found");
		return;
	}
	rest_done(&c);
	json_method(e, "getdeploymentinfo", json_pack("[s]", h), out);
}

/* ---- blockfilter, blockfilterheaders: the path; the answer in rest_filter.c ---- */

/* Core's filter type names (BlockFilterTypeByName). */
static bool filter_type_known(const char *s, size_t n)
{
	return n == 5 && memcmp(s, "basic", 5) == 0;
}

/* Splits part[0..len) at '/' into at most max pieces; the count, or max + 1 when more. */
static size_t split(const char *p, size_t len, const char **v, size_t *l, size_t max)
{
	size_t k = 0;
	const char *end = p + len;
	for (;;) {
		const char *s = memchr(p, '/', (size_t)(end - p));
		const char *x = s ? s : end;
		if (k == max)
			return max + 1;
		v[k] = p;
		l[k++] = (size_t)(x - p);
		if (!s)
			return k;
		p = s + 1;
	}
}

static void ep_blockfilter(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	const char *v[2];
	size_t l[2];
	if (split(e->part, pl, v, l, 2) != 2) {
		rest_fail(
		    out, 400,
		    "Invalid URI format. Expected /rest/blockfilter/<filtertype>/<blockhash>");
		return;
	}
	if (!rest_is_hash(v[1], l[1])) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)l[1], v[1]);
		return;
	}
	if (!filter_type_known(v[0], l[0])) {
		rest_fail(out, 400, "Unknown filtertype %.*s", (int)l[0], v[0]);
		return;
	}
	rest_filter_answer(e, v[1], l[1], f, out);
}

static void ep_blockfilterheaders(const struct rest_ep *e, struct rest_answer *out)
{
	size_t pl;
	enum rest_format f = rest_parse_format(e->part, e->len, &pl);
	const char *v[3];
	size_t l[3];
	size_t n = split(e->part, pl, v, l, 3);
	if (n != 2 && n != 3) {
		rest_fail(out, 400,
		          "Invalid URI format. Expected "
		          "/rest/blockfilterheaders/<filtertype>/<blockhash>.<ext>?count=<count>");
		return;
	}
	char raw[64];
	const char *q = NULL;
	if (n == 2 && !query(e, "count", &q, out))
		return;
	if (n == 3) {
		if (l[1] >= sizeof(raw)) {
			rest_fail(out, 400,
			          "Header count is invalid or out of acceptable range (1-%u): %.*s",
			          REST_MAX_HEADERS, (int)l[1], v[1]);
			return;
		}
		snprintf(raw, sizeof(raw), "%.*s", (int)l[1], v[1]);
	}
	uint64_t count;
	if (!header_count(n == 3 ? raw : q ? q : "5", &count, out))
		return;
	const char *hash = v[n - 1];
	size_t hl = l[n - 1];
	if (!rest_is_hash(hash, hl)) {
		rest_fail(out, 400, "Invalid hash: %.*s", (int)hl, hash);
		return;
	}
	if (!filter_type_known(v[0], l[0])) {
		rest_fail(out, 400, "Unknown filtertype %.*s", (int)l[0], v[0]);
		return;
	}
	rest_filter_headers(e, hash, count, f, out);
}

/* ---- the table -------------------------------------------------------------- */

typedef void (*ep_fn)(const struct rest_ep *e, struct rest_answer *out);

/* Core's uri_prefixes, in its order (the first prefix that matches wins). */
static const struct {
	const char *prefix;
	ep_fn fn;
} endpoints[] = {
    {"/rest/tx/", ep_tx},
    {"/rest/block/notxdetails/", ep_block_notxdetails},
    {"/rest/block/", ep_block},
    {"/rest/blockfilter/", ep_blockfilter},
    {"/rest/blockfilterheaders/", ep_blockfilterheaders},
    {"/rest/chaininfo", ep_chaininfo},
    {"/rest/mempool/", ep_mempool},
    {"/rest/headers/", ep_headers},
    {"/rest/getutxos", rest_ep_getutxos},
    {"/rest/deploymentinfo/", ep_deploymentinfo},
    {"/rest/deploymentinfo", ep_deploymentinfo},
    {"/rest/blockhashbyheight/", ep_blockhashbyheight},
};

#define N_ENDPOINTS (sizeof(endpoints) / sizeof(endpoints[0]))

static int endpoint_of(const char *path)
{
	for (size_t i = 0; i < N_ENDPOINTS; i++) {
		/* Served only when the dispatcher has the method (issue 25's). */
		if (endpoints[i].fn == ep_deploymentinfo && !ctl_method_lookup("getdeploymentinfo"))
			continue;
		if (strncmp(path, endpoints[i].prefix, strlen(endpoints[i].prefix)) == 0)
			return (int)i;
	}
	return -1;
}

bool rest_match(const char *path)
{
	return path && endpoint_of(path) >= 0;
}

void rest_answer(const struct rest_request *rq, rpc_call_fn call, void *ctx,
                 struct rest_answer *out)
{
	memset(out, 0, sizeof(*out));
	int i = rq->path ? endpoint_of(rq->path) : -1;
	if (i < 0) {
		/* Core's http_request_cb: no handler, 404 without a body. */
		out->status = 404;
		return;
	}
	size_t pl = strlen(endpoints[i].prefix);
	struct rest_ep e = {.rq = rq,
	                    .call = call,
	                    .ctx = ctx,
	                    .part = rq->path + pl,
	                    .len = strlen(rq->path) - pl};
	endpoints[i].fn(&e, out);
}
