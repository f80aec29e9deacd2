/*
 * daemon/ctl/rest_util.c: what the REST endpoints (ctl/rest.c,
 * ctl/rest_utxos.c) share: a growing byte buffer with Bitcoin's
 * little-endian and CompactSize writers, Core's RESTERR answers, and one
 * call to the dispatcher through rpc_call_fn with its result kept as the
 * control socket printed it. Any thread; nothing shared between calls.
 */
#include "daemon/ctl/rest.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* Core's application error code for "still starting" (RPC_IN_WARMUP). */
#define REST_RPC_IN_WARMUP -28

/* ---- a growing buffer ----------------------------------------------------- */

void rest_buf_add(struct rest_buf *b, const void *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = xrealloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void rest_buf_str(struct rest_buf *b, const char *s)
{
	rest_buf_add(b, s, strlen(s));
}

void rest_buf_fmt(struct rest_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		b->failed = true;
	else
		rest_buf_add(b, tmp, (size_t)n);
}

void rest_buf_le(struct rest_buf *b, uint64_t v, size_t width)
{
	uint8_t x[8];
	for (size_t i = 0; i < width; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	rest_buf_add(b, x, width);
}

void rest_buf_compact(struct rest_buf *b, uint64_t n)
{
	if (n < 0xfd) {
		rest_buf_le(b, n, 1);
	} else if (n <= 0xffff) {
		rest_buf_le(b, 0xfd, 1);
		rest_buf_le(b, n, 2);
	} else if (n <= 0xffffffffu) {
		rest_buf_le(b, 0xfe, 1);
		rest_buf_le(b, n, 4);
	} else {
		rest_buf_le(b, 0xff, 1);
		rest_buf_le(b, n, 8);
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex digits into b as bytes; reversed: a hash's display order to wire order. */
bool rest_buf_unhex(struct rest_buf *b, const char *s, size_t len, bool reversed)
{
	if (len % 2)
		return false;
	/* Room first, then the bytes in place: a block is a megabyte of them. */
	size_t n = len / 2, at0 = b->len;
	rest_buf_add(b, "", 0);
	if (b->failed)
		return true;
	if (b->cap < at0 + n + 1) {
		char *p = xrealloc(b->p, at0 + n + 1);
		if (!p) {
			b->failed = true;
			return true;
		}
		b->p = p;
		b->cap = at0 + n + 1;
	}
	uint8_t *out = (uint8_t *)b->p + at0;
	for (size_t i = 0; i < n; i++) {
		size_t at = reversed ? len - 2 * (i + 1) : 2 * i;
		int hi = hexval(s[at]), lo = hexval(s[at + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	b->len = at0 + n;
	b->p[b->len] = 0;
	return true;
}

void rest_buf_hex(struct rest_buf *b, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n && !b->failed; i++) {
		char two[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
		rest_buf_add(b, two, 2);
	}
}

/* ---- answers -------------------------------------------------------------- */

/* Core's RESTERR: text/plain, the message and "\r\n". */
void rest_fail(struct rest_answer *out, unsigned status, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct rest_buf b = {0};
	rest_buf_str(&b, msg);
	rest_buf_str(&b, "\r\n");
	out->status = b.failed ? 500 : status;
	out->type = b.failed ? NULL : REST_TYPE_TEXT;
	out->body = b.failed ? NULL : b.p;
	out->len = b.failed ? 0 : b.len;
	if (b.failed)
		xfree(b.p);
}

/* A body built in b (taken), as type; out of memory: 500. */
void rest_give(struct rest_answer *out, const char *type, struct rest_buf *b)
{
	if (b->failed) {
		xfree(b->p);
		out->status = 500;
		out->type = NULL;
		out->body = NULL;
		out->len = 0;
	} else {
		out->status = 200;
		out->type = type;
		out->body = b->p ? b->p : xstrdup("");
		out->len = b->len;
		if (!out->body) /* an empty body's allocation */
			out->status = 500;
	}
	memset(b, 0, sizeof(*b));
}

void rest_no_format(struct rest_answer *out, bool json_only)
{
	if (json_only)
		rest_fail(out, 404, "output format not found (available: json)");
	else
		rest_fail(out, 404, "output format not found (available: .bin, .hex, .json)");
}

/* ---- the dispatcher --------------------------------------------------------- */

static const char OK_PRE[] = "{\"jsonrpc\":\"2.0\",\"result\":";
static const char OK_POST[] = ",\"id\":0}";

static int run(rpc_call_fn callfn, rest_bytes_fn bytesfn, void *ctx, const char *method,
               json_t *params, struct rest_call *c);

/* method(params...) on the dispatcher; params (stolen) an array. 0: a result. */
int rest_run(rpc_call_fn callfn, void *ctx, const char *method, json_t *params, struct rest_call *c)
{
	return run(callfn, NULL, ctx, method, params, c);
}

int rest_run_bytes(const struct rest_ep *e, const char *method, json_t *params, struct rest_call *c)
{
	return run(e->call, e->rq->call_bytes, e->ctx, method, params, c);
}

static int run(rpc_call_fn callfn, rest_bytes_fn bytesfn, void *ctx, const char *method,
               json_t *params, struct rest_call *c)
{
	memset(c, 0, sizeof(*c));
	json_t *req = params ? json_pack("{s:s, s:s, s:o, s:i}", "jsonrpc", "2.0", "method", method,
	                                 "params", params, "id", 0)
	                     : NULL;
	char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!text) {
		c->code = -1;
		snprintf(c->msg, sizeof(c->msg), "out of memory");
		return -1;
	}
	size_t n = 0;
	char *r = bytesfn ? bytesfn(ctx, text, strlen(text), &n, &c->bytes, &c->n_bytes)
	                  : callfn(ctx, text, strlen(text), &n);
	xfree(text);
	if (!r) {
		xfree(c->bytes); /* no answer: nothing to answer with */
		c->bytes = NULL;
		c->n_bytes = 0;
		c->gone = true;
		c->code = -1;
		snprintf(c->msg, sizeof(c->msg), "peerd is shutting down");
		return -1;
	}
	size_t pre = sizeof(OK_PRE) - 1, post = sizeof(OK_POST) - 1;
	if (n >= pre + post && memcmp(r, OK_PRE, pre) == 0 &&
	    memcmp(r + n - post, OK_POST, post) == 0) {
		c->line = r;
		c->res = r + pre;
		c->rlen = n - pre - post;
		return 0;
	}
	xfree(c->bytes); /* an error's: nothing to answer with */
	c->bytes = NULL;
	c->n_bytes = 0;
	json_t *v = json_loadb(r, n, 0, NULL);
	xfree(r);
	json_t *e = json_object_get(v, "error");
	c->code = json_is_integer(json_object_get(e, "code"))
	              ? (int)json_integer_value(json_object_get(e, "code"))
	              : -1;
	const char *m = json_string_value(json_object_get(e, "message"));
	snprintf(c->msg, sizeof(c->msg), "%s", m ? m : "malformed reply from peerd");
	json_decref(v);
	return -1;
}

void rest_done(struct rest_call *c)
{
	xfree(c->line);
	c->line = NULL;
	xfree(c->bytes);
	c->bytes = NULL;
	c->n_bytes = 0;
}

/* The result parsed (any JSON value), or NULL. */
json_t *rest_parsed(const struct rest_call *c)
{
	return json_loadb(c->res, c->rlen, JSON_DECODE_ANY, NULL);
}

/*
 * A failed call the endpoint has no answer of its own for: Core's warm-up
 * 503, or the dispatcher's word as a 500. Returns true when it answered.
 */
bool rest_common_failure(const struct rest_call *c, struct rest_answer *out)
{
	if (c->code == REST_RPC_IN_WARMUP) {
		rest_fail(out, 503, "Service temporarily unavailable: %s", c->msg);
		return true;
	}
	if (c->gone) {
		rest_fail(out, 503, "Service temporarily unavailable: %s", c->msg);
		return true;
	}
	return false;
}

/* A hash in lower case (the methods' parameters), from 64 hex digits. */
void rest_lower_hash(const char *s, char out[65])
{
	for (size_t i = 0; i < 64; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a' : s[i]);
	out[64] = 0;
}

/* The result as a JSON string's contents (no escapes: hex), or NULL. */
const char *rest_result_hex(const struct rest_call *c, size_t *len)
{
	if (c->rlen < 2 || c->res[0] != '"' || c->res[c->rlen - 1] != '"' || c->rlen % 2)
		return NULL;
	/* The methods print lower-case hex; anything else is not passed on. */
	for (size_t i = 1; i + 1 < c->rlen; i++) {
		char x = c->res[i];
		if (!((x >= '0' && x <= '9') || (x >= 'a' && x <= 'f')))
			return NULL;
	}
	*len = c->rlen - 2;
	return c->res + 1;
}

/* Bytes handed over (taken) as the bin answer as they are, or as hex text. */
static void answer_bytes(struct rest_call *c, enum rest_format f, struct rest_answer *out)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t *p = c->bytes;
	size_t n = c->n_bytes;
	c->bytes = NULL;
	c->n_bytes = 0;
	if (f == REST_BIN) {
		/* The buffer the method read is the body: no copy. */
		struct rest_buf b = {.p = (char *)p, .len = n, .cap = n};
		rest_give(out, REST_TYPE_BIN, &b);
		return;
	}
	char *t = n < (SIZE_MAX - 2) / 2 ? xmalloc(2 * n + 2) : NULL;
	if (!t) {
		xfree(p);
		rest_fail(out, 500, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		t[2 * i] = digits[p[i] >> 4];
		t[2 * i + 1] = digits[p[i] & 15];
	}
	t[2 * n] = '\n';
	t[2 * n + 1] = 0;
	xfree(p);
	struct rest_buf b = {.p = t, .len = 2 * n + 1, .cap = 2 * n + 2};
	rest_give(out, REST_TYPE_TEXT, &b);
}

/* A hex result as the endpoint's bin or hex answer. */
void rest_answer_hex(struct rest_call *c, enum rest_format f, struct rest_answer *out)
{
	if (c->bytes && c->rlen == 2 && memcmp(c->res, "\"\"", 2) == 0) {
		answer_bytes(c, f, out);
		return;
	}
	size_t n = 0;
	const char *h = rest_result_hex(c, &n);
	struct rest_buf b = {0};
	if (!h) {
		rest_fail(out, 500, "malformed reply from peerd");
		return;
	}
	if (f == REST_BIN) {
		if (!rest_buf_unhex(&b, h, n, false)) {
			xfree(b.p);
			rest_fail(out, 500, "malformed reply from peerd");
			return;
		}
		rest_give(out, REST_TYPE_BIN, &b);
	} else {
		rest_buf_add(&b, h, n);
		rest_buf_str(&b, "\n");
		rest_give(out, REST_TYPE_TEXT, &b);
	}
}

/* A result spliced as the JSON answer, with Core's newline. */
void rest_answer_json(const struct rest_call *c, struct rest_answer *out)
{
	struct rest_buf b = {0};
	rest_buf_add(&b, c->res, c->rlen);
	rest_buf_str(&b, "\n");
	rest_give(out, REST_TYPE_JSON, &b);
}
