/**
 * daemon/ctl/rest.h: Core 29's REST interface (-rest) for ctl/rpc_http.c
 * (ctl/ only; the room's public face is ctl/ctl.h).
 *
 * Glossary
 *   endpoint   one of Core's URI prefixes (/rest/block/, /rest/headers/,
 *              ...), matched in Core's order by plain prefix comparison.
 *   part       what follows the prefix: the parameters and the format
 *              suffix (.bin, .hex, .json), without the query string.
 *   format     Core's RESTResponseFormat: the suffix, or none (UNDEF).
 *
 * Files: rest_parse.c (the pure parsers: format, hashes, counts, heights,
 * getutxos' outpoints from the URI or the binary body), rest.c (the
 * endpoints, each a few calls to the one dispatcher through rpc_call_fn,
 * and Core's status codes and texts).
 */
#ifndef PEERD_DAEMON_CTL_REST_H
#define PEERD_DAEMON_CTL_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "daemon/ctl/rpc.h"

/** Core's MAX_GETUTXOS_OUTPOINTS. */
#define REST_MAX_OUTPOINTS 15
/** Core's MAX_REST_HEADERS_RESULTS. */
#define REST_MAX_HEADERS 2000

/** Core's RESTResponseFormat. */
enum rest_format {
	REST_UNDEF = 0, /**< no suffix, or one Core does not know */
	REST_BIN,       /**< .bin: application/octet-stream */
	REST_HEX,       /**< .hex: text/plain, hex and a newline */
	REST_JSON,      /**< .json: application/json, compact and a newline */
};

/**
 * A query parameter: 0 with *value its decoded value (NULL when absent),
 * or -1 when the URI is not RFC 3986 (Core's "URI parsing failed").
 * *value lives until the next call. Any thread.
 */
typedef int (*rest_query_fn)(void *qctx, const char *key, const char **value);

/**
 * The dispatcher as rpc_call_fn, for a caller that takes a result's bytes
 * out of band (ctl_inproc_call_bytes): *bytes (xmalloc'd, the caller's) the
 * bytes a method handed over instead of their hex (its result then reads
 * ""), or NULL when it handed none. Any thread but the loop's; may block.
 */
typedef char *(*rest_bytes_fn)(void *ctx, const char *line, size_t len, size_t *out_len,
                               uint8_t **bytes, size_t *n_bytes);

/** One REST request as the HTTP server read it. */
struct rest_request {
	/** The dispatcher taking bytes (same ctx as rest_answer's call), or NULL:
	 * binary answers are made from the results' hex. */
	rest_bytes_fn call_bytes;
	const char *path; /**< the URI's path, from "/rest/", without the query */
	rest_query_fn query;
	void *qctx;
	const char *body; /**< the request body (getutxos' binary or hex outpoints) */
	size_t len;
};

/** A REST answer: status, content type (static, NULL: none) and body (xmalloc'd or NULL). */
struct rest_answer {
	unsigned status;
	const char *type;
	char *body;
	size_t len;
};

/** One outpoint of a getutxos request: the txid in display hex, and the index. */
struct rest_outpoint {
	char txid[65];
	uint32_t n;
};

/* ---- ctl/rest.c --------------------------------------------------------- */

/** Whether one of Core's REST prefixes matches path (then rest_answer answers it). */
bool rest_match(const char *path);

/**
 * Core's REST handler for rq: each endpoint's answer through `call` (the
 * dispatcher, as rpc_jsonrpc_answer uses it), with Core 29's status codes,
 * content types and texts; an unknown path 404 without a body. out->body is
 * the caller's (xfree). May block on `call`: an HTTP worker thread calls it.
 */
void rest_answer(const struct rest_request *rq, rpc_call_fn call, void *ctx,
                 struct rest_answer *out);

/* ---- ctl/rest_http.c ---------------------------------------------------- */

struct MHD_Connection;
/**
 * libmicrohttpd's unescape callback for the HTTP server: the URI and its
 * arguments stay as the client sent them (Core's REST sees them so; the
 * query's values are decoded by the REST side as libevent decodes them).
 */
size_t rest_http_unescape(void *cls, struct MHD_Connection *c, char *s);
/**
 * Answer a whole REST request (url its path, body its body, conn the
 * connection its query is read from): rest_answer through call into *a
 * (a->body the caller's). An HTTP worker thread, conn suspended (the loop
 * queues the answer when it resumes it).
 */
void rest_http_answer(struct MHD_Connection *conn, const char *url, const char *body, size_t len,
                      rpc_call_fn call, rest_bytes_fn call_bytes, void *ctx, struct rest_answer *a);

/* ---- ctl/rest_parse.c --------------------------------------------------- */

/**
 * Core's ParseDataFormat: the format of part[0..len) and, in *param_len,
 * the length of what precedes a known suffix (all of it when none is known).
 */
enum rest_format rest_parse_format(const char *part, size_t len, size_t *param_len);

/** Core's ParseHashStr (uint256::FromHex): exactly 64 hex digits, either case. */
bool rest_is_hash(const char *s, size_t len);

/**
 * Core's ToIntegral<size_t> for a count: decimal digits only, no sign or
 * space. true with *out, or false when empty, not digits or over max.
 */
bool rest_parse_count(const char *s, uint64_t max, uint64_t *out);

/** Core's ToIntegral<int32_t>: an optional '-' and decimal digits that fit. */
bool rest_parse_int32(const char *s, size_t len, int32_t *out);

/**
 * Core's SanitizeString with SAFE_CHARS_URI into out (size outlen, always
 * terminated): the characters of s[0..len) RFC 3986 allows, the rest dropped.
 */
void rest_sanitize_uri(const char *s, size_t len, char *out, size_t outlen);

/** How rest_parse_outpoints_* ended. */
enum rest_parse_result {
	REST_PARSE_OK = 0,
	REST_PARSE_ERROR = -1,    /**< Core's "Parse error" */
	REST_PARSE_EMPTY = -2,    /**< Core's "Error: empty request" */
	REST_PARSE_TOO_MANY = -3, /**< more than REST_MAX_OUTPOINTS: *n says how many were asked */
};

/**
 * getutxos' outpoints from the URI: part[0..len) is what follows
 * "/rest/getutxos" less the format, as Core takes it (its first character
 * dropped, then split at '/'; "checkmempool" first sets *mempool). Each is
 * TXID-N (64 hex digits, a uint32). Up to REST_MAX_OUTPOINTS stored in v;
 * *n is the count asked.
 */
enum rest_parse_result rest_parse_outpoints_uri(const char *part, size_t len, bool *mempool,
                                                struct rest_outpoint *v, size_t *n);

/**
 * getutxos' outpoints from a binary body as Core 29 reads it: the body is
 * first written into a stream as a string (its length as CompactSize, then
 * its bytes), and from that stream come a bool byte (so the length's first
 * byte: BIP64's flag byte is taken as the count, and the mempool is always
 * checked for a non-empty body) and a vector of outpoints (CompactSize
 * count, canonical, at most 0x02000000; 32-byte txid and 4-byte index
 * each). Bytes after the vector are ignored, as Core's. Up to
 * REST_MAX_OUTPOINTS stored; *n is the count asked.
 */
enum rest_parse_result rest_parse_outpoints_bin(const uint8_t *p, size_t len, bool *mempool,
                                                struct rest_outpoint *v, size_t *n);

/**
 * Core's ParseHex as getutxos uses it: hex digit pairs, whitespace allowed
 * between pairs; anything else gives an empty result. Writes at most len/2
 * bytes to out and returns how many (0 on any error).
 */
size_t rest_parse_hex(const char *s, size_t len, uint8_t *out);

/* ---- ctl/rest_util.c: what the endpoint files share ----------------------- */

/** Content types of Core's answers. */
#define REST_TYPE_TEXT "text/plain"
#define REST_TYPE_JSON "application/json"
#define REST_TYPE_BIN  "application/octet-stream"

/** A growing byte buffer (xmalloc'd p, always terminated); `failed` once out of memory. */
struct rest_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

/** Append n bytes. */
void rest_buf_add(struct rest_buf *b, const void *s, size_t n);
/** Append a string. */
void rest_buf_str(struct rest_buf *b, const char *s);
/** Append printf output (up to 127 characters). */
void rest_buf_fmt(struct rest_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append the low `width` bytes of v, little-endian. */
void rest_buf_le(struct rest_buf *b, uint64_t v, size_t width);
/** Append n as Bitcoin's CompactSize. */
void rest_buf_compact(struct rest_buf *b, uint64_t n);
/** Append hex digits as bytes, reversed for a hash in display order; false if not hex. */
bool rest_buf_unhex(struct rest_buf *b, const char *s, size_t len, bool reversed);
/** Append bytes as lower-case hex. */
void rest_buf_hex(struct rest_buf *b, const uint8_t *p, size_t n);

/** Core's RESTERR: status, text/plain, the message and "\r\n". */
void rest_fail(struct rest_answer *out, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** A 200 with b's bytes (taken; b is emptied) as `type`; out of memory: 500. */
void rest_give(struct rest_answer *out, const char *type, struct rest_buf *b);
/** Core's 404 for a format the endpoint lacks (json only, or all three). */
void rest_no_format(struct rest_answer *out, bool json_only);

struct rest_ep;

/** One call's outcome: on success res/rlen point into line (freed by rest_done). */
struct rest_call {
	char *line;
	uint8_t *bytes; /**< the result's bytes out of band (rest_run_bytes), or NULL */
	size_t n_bytes;
	const char *res;
	size_t rlen;
	int code;      /**< the dispatcher's error code; 0: a result */
	char msg[512]; /**< the dispatcher's error message */
	bool gone;     /**< no answer: peerd is stopping */
};

/**
 * method(params) on the dispatcher through callfn; params (an array) is
 * stolen, NULL counts as out of memory. 0 with c's result, or -1 with c's
 * error. rest_done(c) after either.
 */
int rest_run(rpc_call_fn callfn, void *ctx, const char *method, json_t *params,
             struct rest_call *c);
/**
 * rest_run for a result an endpoint answers as bytes: through the
 * request's call_bytes when it has one, so c->bytes may hold the result's
 * bytes (getblock verbosity 0) instead of its hex; else as rest_run.
 */
int rest_run_bytes(const struct rest_ep *e, const char *method, json_t *params,
                   struct rest_call *c);
/** Free a call's reply. Idempotent. */
void rest_done(struct rest_call *c);
/** The result parsed (a new reference), or NULL. */
json_t *rest_parsed(const struct rest_call *c);
/** Core's warm-up 503 (or peerd stopping) for a failed call; true when it answered. */
bool rest_common_failure(const struct rest_call *c, struct rest_answer *out);
/** 64 hex digits in lower case (the methods' parameters). */
void rest_lower_hash(const char *s, char out[65]);
/** A string result of lower-case hex digits, even in number: its contents and length, or NULL. */
const char *rest_result_hex(const struct rest_call *c, size_t *len);
/** A hex string result (or c->bytes, taken) as the .bin (bytes) or .hex (text and a newline)
 * answer. */
void rest_answer_hex(struct rest_call *c, enum rest_format f, struct rest_answer *out);
/** A result spliced as the .json answer, with Core's newline. */
void rest_answer_json(const struct rest_call *c, struct rest_answer *out);

/** What an endpoint works with: the request, the dispatcher, the part after its prefix. */
struct rest_ep {
	const struct rest_request *rq;
	rpc_call_fn call;
	void *ctx;
	const char *part;
	size_t len;
};

/* ---- ctl/rest_filter.c --------------------------------------------------- */

/**
 * Core's /rest/blockfilter/basic/<hash> answer (the path checked): the
 * filter from getblockfilter in format f, or Core's error status.
 */
void rest_filter_answer(const struct rest_ep *e, const char *hash, size_t hl, enum rest_format f,
                        struct rest_answer *out);
/**
 * Core's /rest/blockfilterheaders answer (the path and count checked): up
 * to count filter headers of the active chain from hash on.
 */
void rest_filter_headers(const struct rest_ep *e, const char *hash, uint64_t count,
                         enum rest_format f, struct rest_answer *out);

/* ---- ctl/rest_utxos.c --------------------------------------------------- */

/** Core's /rest/getutxos: outpoints from the URI or the body, BIP64's answer. */
void rest_ep_getutxos(const struct rest_ep *e, struct rest_answer *out);

#endif
