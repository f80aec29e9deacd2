/*
 * daemon/ctl/rest_filter.c: /rest/blockfilter and /rest/blockfilterheaders
 * once the path checked out (ctl/rest.c), as Core 29's rest_block_filter
 * and rest_filter_header: answered from -blockfilterindex through the
 * dispatcher's getblockfilter and getblockheader, whose errors become
 * Core's statuses (400 for a disabled index, 404 for a missing block or
 * filter).
 */
#include "daemon/ctl/rest.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* A failed getblockfilter as Core's REST status; true when it answered. */
static bool filter_failure(const struct rest_call *c, const char *hash, size_t hl,
                           struct rest_answer *out)
{
	if (rest_common_failure(c, out))
		return true;
	if (strncmp(c->msg, "Index is not enabled", 20) == 0) {
		rest_fail(out, 400, "%s", c->msg);
		return true;
	}
	if (strcmp(c->msg, "Block not found") == 0) {
		rest_fail(out, 404, "%.*s not found", (int)hl, hash);
		return true;
	}
	return false;
}

void rest_filter_answer(const struct rest_ep *e, const char *hash, size_t hl, enum rest_format f,
                        struct rest_answer *out)
{
	char h[65];
	rest_lower_hash(hash, h);
	struct rest_call c;
	if (rest_run(e->call, e->ctx, "getblockfilter", json_pack("[s]", h), &c)) {
		if (!filter_failure(&c, hash, hl, out))
			rest_fail(out, 404, "%s", c.msg); /* Core's "Filter not found. ..." */
		rest_done(&c);
		return;
	}
	json_t *r = rest_parsed(&c);
	const char *fh = json_string_value(json_object_get(r, "filter"));
	struct rest_buf b = {0};
	if (!fh) {
		rest_fail(out, 500, "filter missing");
	} else if (f == REST_BIN || f == REST_HEX) {
		/* BlockFilter's serialization: type, block hash, the filter as a vector. */
		struct rest_buf raw = {0};
		rest_buf_le(&raw, 0, 1);
		(void)rest_buf_unhex(&raw, h, 64, true);
		rest_buf_compact(&raw, strlen(fh) / 2);
		(void)rest_buf_unhex(&raw, fh, strlen(fh), false);
		if (f == REST_BIN) {
			rest_give(out, REST_TYPE_BIN, &raw);
		} else {
			rest_buf_hex(&b, (const uint8_t *)raw.p, raw.len);
			rest_buf_str(&b, "\n");
			rest_give(out, REST_TYPE_TEXT, &b);
		}
		xfree(raw.p);
	} else if (f == REST_JSON) {
		rest_buf_str(&b, "{\"filter\":\"");
		rest_buf_str(&b, fh);
		rest_buf_str(&b, "\"}\n");
		rest_give(out, REST_TYPE_JSON, &b);
	} else {
		rest_no_format(out, false);
	}
	xfree(b.p);
	json_decref(r);
	rest_done(&c);
}

/* Whether the block is on the active chain, and the next one's hash (64
 * digits and a NUL; "" at the tip). */
static bool active_next(const struct rest_ep *e, const char *h, char next[65])
{
	struct rest_call c;
	bool active = false;
	next[0] = 0;
	if (rest_run(e->call, e->ctx, "getblockheader", json_pack("[s, b]", h, 1), &c) == 0) {
		json_t *r = rest_parsed(&c);
		json_t *conf = json_object_get(r, "confirmations");
		active = json_is_integer(conf) && json_integer_value(conf) >= 0;
		const char *n = json_string_value(json_object_get(r, "nextblockhash"));
		if (n && strlen(n) == 64)
			memcpy(next, n, 65);
		json_decref(r);
	}
	rest_done(&c);
	return active;
}

void rest_filter_headers(const struct rest_ep *e, const char *hash, uint64_t count,
                         enum rest_format f, struct rest_answer *out)
{
	struct rest_buf hdrs = {0}; /* 32 bytes each, in display order's hex */
	uint64_t n = 0;
	char cur[65];
	rest_lower_hash(hash, cur);
	while (n < count && cur[0]) {
		struct rest_call c;
		int err = rest_run(e->call, e->ctx, "getblockfilter", json_pack("[s]", cur), &c);
		if (err && (rest_common_failure(&c, out) ||
		            strncmp(c.msg, "Index is not enabled", 20) == 0)) {
			if (!out->status)
				rest_fail(out, 400, "%s", c.msg);
			rest_done(&c);
			xfree(hdrs.p);
			return;
		}
		char next[65];
		/* Core collects the active chain's blocks from the hash on first. */
		if ((err && strcmp(c.msg, "Block not found") == 0) || !active_next(e, cur, next)) {
			rest_done(&c);
			break;
		}
		if (err) {
			rest_fail(out, 404, "Filter not found. %s",
			          strstr(c.msg, "still in the process")
			              ? "Block filters are still in the process of being indexed."
			              : "This error is unexpected and indicates index corruption.");
			rest_done(&c);
			xfree(hdrs.p);
			return;
		}
		json_t *r = rest_parsed(&c);
		const char *hh = json_string_value(json_object_get(r, "header"));
		if (hh && strlen(hh) == 64) {
			rest_buf_add(&hdrs, hh, 64);
			n++;
		}
		json_decref(r);
		rest_done(&c);
		memcpy(cur, next, sizeof(cur));
	}
	struct rest_buf b = {0};
	if (f == REST_BIN || f == REST_HEX) {
		/* Core writes the headers one after another, with no count. */
		struct rest_buf raw = {0};
		for (uint64_t i = 0; i < n; i++)
			(void)rest_buf_unhex(&raw, hdrs.p + 64 * i, 64, true);
		if (f == REST_BIN) {
			rest_give(out, REST_TYPE_BIN, &raw);
		} else {
			rest_buf_hex(&b, (const uint8_t *)raw.p, raw.len);
			rest_buf_str(&b, "\n");
			rest_give(out, REST_TYPE_TEXT, &b);
		}
		xfree(raw.p);
	} else if (f == REST_JSON) {
		rest_buf_str(&b, "[");
		for (uint64_t i = 0; i < n; i++) {
			rest_buf_str(&b, i ? ",\"" : "\"");
			rest_buf_add(&b, hdrs.p + 64 * i, 64);
			rest_buf_str(&b, "\"");
		}
		rest_buf_str(&b, "]\n");
		rest_give(out, REST_TYPE_JSON, &b);
	} else {
		rest_no_format(out, false);
	}
	xfree(b.p);
	xfree(hdrs.p);
}
