/*
 * daemon/ctl/json_load.c: a request's text parsed as Core's UniValue reads
 * it, where jansson alone would answer otherwise.
 *
 * Two differences matter to a JSON-RPC client:
 *
 *   - UniValue keeps a number as its text, so any number parses: an
 *     integer past 64 bits reaches the method (whose getInt answers -1
 *     "JSON integer out of range") and an id such as 1e400 or
 *     100000000000000000000000000000 is echoed as written. jansson
 *     refuses the whole text ("too big integer", "real number overflow"),
 *     which would be -32700 "Parse error".
 *   - UniValue keeps every key of an object, so Core's named arguments
 *     see a key given twice (transformNamedArguments: -8 "Parameter X
 *     specified multiple times"); jansson keeps the last one.
 *
 * The common text takes one jansson parse with duplicates refused, as
 * before. Only a text jansson refuses gets a scan: numbers jansson cannot
 * hold are rewritten to ones it can (an integer past 64 bits gains ".0"
 * and becomes the nearest double, which every getInt refuses as Core's
 * does; a double past the largest becomes the largest), each request's
 * id written so is kept as text, and the first repeated key of each
 * request's params object is noted. Then jansson parses the rewritten
 * text keeping the last of a repeated key, as before.
 *
 * Keys are compared as written: "h\u0065ight" and "height" are two keys
 * here (Core decodes them first); nobody writes a parameter name so.
 * Any thread: nothing here touches the daemon.
 */
#include "daemon/ctl/internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* Frames deeper than this are counted, not kept: a request and its params
 * object are at most three deep (batch, request, params). */
#define SCAN_FRAMES 4

struct frame {
	bool obj;       /* an object (else an array) */
	bool want_key;  /* an object's next string is a key */
	bool key_id;    /* the current key is "id" */
	bool key_param; /* the current key is "params" */
	bool params;    /* this object is a request's params: its keys are collected */
	unsigned seen;  /* a request's members seen so far (key_bit) */
	size_t member;  /* an array's element index so far */
};

/* A key of a params object, by place in the text. */
struct key_ref {
	const char *p;
	size_t len;
};

/* The scan's output as it grows. */
struct scan {
	const char *t;
	size_t n;
	char *out;
	size_t out_len, out_cap;
	bool failed; /* out of memory */
	bool rewrote;
	struct ctl_json_notes *notes;
	struct key_ref *keys;
	size_t n_keys, keys_cap;
};

static void emit(struct scan *s, const char *p, size_t n)
{
	if (s->failed)
		return;
	if (s->out_len + n + 1 > s->out_cap) {
		size_t cap = s->out_cap ? s->out_cap : 256;
		while (cap < s->out_len + n + 1)
			cap *= 2;
		char *q = xrealloc(s->out, cap);
		if (!q) {
			s->failed = true;
			return;
		}
		s->out = q;
		s->out_cap = cap;
	}
	memcpy(s->out + s->out_len, p, n);
	s->out_len += n;
	s->out[s->out_len] = 0;
}

/* The note of request `member`, made on first use (NULL: out of memory). */
static struct ctl_json_note *note_of(struct ctl_json_notes *ns, size_t member)
{
	for (size_t i = 0; i < ns->n; i++) {
		if (ns->v[i].member == member)
			return &ns->v[i];
	}
	struct ctl_json_note *v = xrealloc(ns->v, (ns->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	ns->v = v;
	v[ns->n] = (struct ctl_json_note){.member = member};
	return &v[ns->n++];
}

static char *copy_text(const char *p, size_t n)
{
	char *c = xmalloc(n + 1);
	if (c) {
		memcpy(c, p, n);
		c[n] = 0;
	}
	return c;
}

/*
 * A number token (p, n bytes) as jansson can hold it, appended to s:
 * unchanged when it fits, else rewritten (see the top of the file).
 * True when it was rewritten.
 */
static bool emit_number(struct scan *s, const char *p, size_t n)
{
	bool integer = !memchr(p, '.', n) && !memchr(p, 'e', n) && !memchr(p, 'E', n);
	char *c = copy_text(p, n);
	if (!c) {
		s->failed = true;
		return false;
	}
	errno = 0;
	double d = strtod(c, NULL);
	bool huge = errno == ERANGE && isinf(d);
	bool wide = false;
	if (integer && !huge) {
		errno = 0;
		(void)strtoll(c, NULL, 10);
		wide = errno == ERANGE;
	}
	xfree(c);
	if (huge) {
		const char *max =
		    p[0] == '-' ? "-1.7976931348623157e308" : "1.7976931348623157e308";
		emit(s, max, strlen(max));
		return true;
	}
	emit(s, p, n);
	if (wide)
		emit(s, ".0", 2);
	return wide;
}

/* Keys by text, then by place: equal keys end up together, first written first. */
static int key_cmp(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->p, y->p, m);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* The params object of request `member` closed: note its first repeated key. */
static void params_done(struct scan *s, size_t member)
{
	size_t n = s->n_keys;
	s->n_keys = 0;
	if (n < 2)
		return;
	qsort(s->keys, n, sizeof(*s->keys), key_cmp);
	const struct key_ref *best = NULL;
	for (size_t i = 1; i < n; i++) {
		const struct key_ref *a = &s->keys[i - 1], *b = &s->keys[i];
		if (a->len == b->len && memcmp(a->p, b->p, a->len) == 0 &&
		    (i < 2 || s->keys[i - 2].len != a->len ||
		     memcmp(s->keys[i - 2].p, a->p, a->len) != 0) &&
		    (!best || b->p < best->p))
			best = b;
	}
	if (!best)
		return;
	struct ctl_json_note *note = note_of(s->notes, member);
	/* The first one noted stays (text after the first value is jansson's error). */
	if (!note || (!note->dup_key && !(note->dup_key = copy_text(best->p, best->len))))
		s->failed = true;
}

static void add_key(struct scan *s, const char *p, size_t len)
{
	if (s->n_keys == s->keys_cap) {
		size_t cap = s->keys_cap ? s->keys_cap * 2 : 16;
		struct key_ref *k = xrealloc(s->keys, cap * sizeof(*k));
		if (!k) {
			s->failed = true;
			return;
		}
		s->keys = k;
		s->keys_cap = cap;
	}
	s->keys[s->n_keys++] = (struct key_ref){p, len};
}

/* A request's member named (p, n bytes) as a bit, or 0 for any other name. */
static unsigned key_bit(const char *p, size_t n)
{
	static const char *const names[] = {"id", "params", "method", "jsonrpc"};
	for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if (strlen(names[k]) == n && memcmp(names[k], p, n) == 0)
			return 1u << k;
	}
	return 0;
}

/*
 * Which request the frame at depth `depth` (1 = outermost) is, when it is
 * one: the outermost object (0), or an object in the outermost array.
 */
static bool request_frame(const struct frame *f, size_t depth, size_t *member)
{
	if (depth == 1 && f[1].obj) {
		*member = 0;
		return true;
	}
	if (depth == 2 && !f[1].obj && f[2].obj) {
		*member = f[1].member;
		return true;
	}
	return false;
}

/* The scan of s->t; false when out of memory. Malformed text is copied on:
 * jansson then names its error. */
static bool scan_text(struct scan *s)
{
	struct frame f[SCAN_FRAMES + 1];
	memset(f, 0, sizeof(f));
	size_t depth = 0, params_member = 0;
	const char *t = s->t;
	size_t i = 0, n = s->n;
	while (i < n && !s->failed) {
		char ch = t[i];
		struct frame *top = depth && depth <= SCAN_FRAMES ? &f[depth] : NULL;
		if (ch == '"') {
			size_t j = i + 1;
			while (j < n && t[j] != '"')
				j += t[j] == '\\' ? 2 : 1;
			j = j < n ? j + 1 : n;
			size_t member;
			if (top && top->obj && top->want_key) {
				size_t klen = j - i >= 2 ? j - i - 2 : 0;
				unsigned bit =
				    request_frame(f, depth, &member) ? key_bit(t + i + 1, klen) : 0;
				top->want_key = false;
				top->key_id = bit == 1u;
				top->key_param = bit == 2u;
				if (top->params)
					add_key(s, t + i + 1, klen);
				if (bit & top->seen) {
					/* UniValue's find_value takes a request's first
					 * "params" (or id, method): a later one is renamed
					 * out of the way, where jansson would keep it. */
					top->key_id = top->key_param = false;
					s->rewrote = true;
					emit(s, "\" ", 2);
					emit(s, t + i + 1, j - i - 1);
					i = j;
					continue;
				}
				top->seen |= bit;
			}
			emit(s, t + i, j - i);
			i = j;
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			size_t j = i + 1;
			while (j < n && strchr("0123456789.eE+-", t[j]))
				j++;
			size_t member;
			bool rw = emit_number(s, t + i, j - i);
			s->rewrote |= rw;
			if (rw && top && top->key_id && request_frame(f, depth, &member)) {
				struct ctl_json_note *note = note_of(s->notes, member);
				if (!note ||
				    (!note->id_text && !(note->id_text = copy_text(t + i, j - i))))
					s->failed = true;
			}
			i = j;
		} else if (ch == '{' || ch == '[') {
			size_t member;
			bool is_params = ch == '{' && top && top->key_param && !top->want_key &&
			                 request_frame(f, depth, &member);
			depth++;
			if (depth <= SCAN_FRAMES) {
				f[depth] = (struct frame){.obj = ch == '{', .want_key = ch == '{'};
				if (is_params) {
					f[depth].params = true;
					s->n_keys = 0;
					params_member = member;
				}
			}
			emit(s, t + i, 1);
			i++;
		} else if (ch == '}' || ch == ']') {
			if (top && top->params)
				params_done(s, params_member);
			if (depth)
				depth--;
			emit(s, t + i, 1);
			i++;
		} else {
			if (ch == ',' && top) {
				top->want_key = top->obj;
				top->member++;
			}
			emit(s, t + i, 1);
			i++;
		}
	}
	return !s->failed;
}

json_t *ctl_json_load(const char *text, size_t len, json_error_t *err, struct ctl_json_notes *notes)
{
	memset(notes, 0, sizeof(*notes));
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, err);
	if (v)
		return v;
	json_error_t first = *err;
	struct scan s = {.t = text, .n = len, .notes = notes};
	if (!scan_text(&s)) {
		xfree(s.out);
		xfree(s.keys);
		ctl_json_notes_release(notes);
		*err = first;
		return NULL;
	}
	v = json_loadb(s.rewrote ? s.out : text, s.rewrote ? s.out_len : len, JSON_DECODE_ANY, err);
	xfree(s.out);
	xfree(s.keys);
	if (!v) {
		/* The first error is where the text went wrong as written. */
		*err = first;
		ctl_json_notes_release(notes);
	}
	return v;
}

const struct ctl_json_note *ctl_json_note(const struct ctl_json_notes *notes, size_t member)
{
	for (size_t i = 0; notes && i < notes->n; i++) {
		if (notes->v[i].member == member)
			return &notes->v[i];
	}
	return NULL;
}

void ctl_json_notes_release(struct ctl_json_notes *notes)
{
	for (size_t i = 0; i < notes->n; i++) {
		xfree(notes->v[i].id_text);
		xfree(notes->v[i].dup_key);
	}
	xfree(notes->v);
	memset(notes, 0, sizeof(*notes));
}

bool ctl_json_set_id(char **text, size_t *len, const char *id_text)
{
	/* The reply's id is its last "id": (an error object holds only "code"
	 * and "message", and a quote inside a string is escaped). */
	const char *pat = "\"id\":";
	size_t pl = strlen(pat), n = *len;
	char *t = *text;
	size_t at = n;
	for (size_t i = n >= pl ? n - pl + 1 : 0; i-- > 0;) {
		if (memcmp(t + i, pat, pl) == 0) {
			at = i + pl;
			break;
		}
	}
	if (at == n)
		return true;
	size_t end = at;
	while (end < n && strchr("0123456789.eE+-", t[end]))
		end++;
	if (end == at)
		return true; /* null: the id was not taken (an invalid request) */
	size_t il = strlen(id_text), m = n - (end - at) + il;
	char *q = xmalloc(m + 1);
	if (!q)
		return false;
	memcpy(q, t, at);
	memcpy(q + at, id_text, il);
	memcpy(q + at + il, t + end, n - end + 1);
	xfree(t);
	*text = q;
	*len = m;
	return true;
}
