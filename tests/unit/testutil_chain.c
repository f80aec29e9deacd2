/* tests/unit/testutil_chain.c: helpers for the chain/ unit tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_chain.h"

void tu_records_load(const char *path, uint32_t magic, struct tu_records *out)
{
	size_t len, cap = 0;
	memset(out, 0, sizeof(*out));
	out->data = tu_read_file(path, &len);
	for (size_t off = 0; off < len;) {
		if (len - off < 8 || proto_le32(out->data + off) != magic)
			fail_msg("%s: bad record at %zu", path, off);
		size_t n = proto_le32(out->data + off + 4);
		if (len - off - 8 < n)
			fail_msg("%s: truncated record at %zu", path, off);
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->blk = realloc(out->blk, cap * sizeof(*out->blk));
			out->len = realloc(out->len, cap * sizeof(*out->len));
			assert_non_null(out->blk);
			assert_non_null(out->len);
		}
		out->blk[out->n] = out->data + off + 8;
		out->len[out->n++] = n;
		off += 8 + n;
	}
}

void tu_records_free(struct tu_records *r)
{
	free(r->data);
	free(r->blk);
	free(r->len);
	memset(r, 0, sizeof(*r));
}

void tu_record_header(const struct tu_records *r, size_t i, struct proto_block_header *h)
{
	struct proto_reader rd;
	assert_true(i < r->n);
	proto_reader_init(&rd, r->blk[i], r->len[i]);
	assert_int_equal(proto_block_header_decode(&rd, h), 0);
}

void tu_grind(struct proto_block_header *h, const struct proto_params *p)
{
	struct proto_hash hash;
	for (uint32_t i = 0; i < 1000000; i++) {
		proto_block_header_hash(h, &hash);
		if (proto_check_pow(&hash, h->bits, &p->pow_limit))
			return;
		h->nonce++;
	}
	fail_msg("no nonce found for bits %08x", h->bits);
}

void tu_assert_chain_err_impl(int got, int want, const char *what, const char *file, int line)
{
	if (got != want)
		fail_msg("%s:%d: %s: got %d (%s), want %d (%s)", file, line, what, got,
		         chain_strerror(got), want, chain_strerror(want));
}

void tu_assert_reject_impl(int rc, const struct chain_state *st, int want_result,
                           const char *want_reason, const char *file, int line)
{
	if (rc != CHAIN_EINVALID || (int)st->result != want_result ||
	    strcmp(st->reason, want_reason))
		fail_msg("%s:%d: got rc %d result %d reason '%s' (%s), expected EINVALID result %d "
		         "reason '%s'",
		         file, line, rc, (int)st->result, st->reason, st->debug, want_result,
		         want_reason);
}

void tu_assert_ok_impl(int rc, const struct chain_state *st, const char *what, const char *file,
                       int line)
{
	if (rc)
		fail_msg("%s:%d: %s: rc %d (%s) reason '%s' (%s)", file, line, what, rc,
		         chain_strerror(rc), st->reason, st->debug);
}
