/*
 * tests/fuzz/fuzz_cfilter.c: BIP157's decoders (proto/msg_cfilter.c) on
 * arbitrary bytes.
 *
 * Input: one byte choosing the message (modulo 6: getcfilters,
 * getcfheaders, getcfcheckpt, cfilter, cfheaders, cfcheckpt), then its
 * payload. Invariants: the error code is proto/'s; a decode consumes no
 * more than the payload and keeps its counts within the limits; what
 * decodes re-encodes to exactly the bytes it consumed (every field is
 * fixed-size or a canonical CompactSize); decoding the same bytes into the
 * used object (storage reused) gives the same message; on an error the
 * lists are empty.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static void check(int cond, const char *what, unsigned kind)
{
	if (!cond) {
		fprintf(stderr, "fuzz_cfilter: invariant broken (message %u): %s\n", kind, what);
		abort();
	}
}

struct msgs {
	struct proto_getcfilters g;
	struct proto_getcfcheckpt c;
	struct proto_cfilter f;
	struct proto_cfhashes h;
};

static int decode(unsigned kind, const uint8_t *p, size_t len, struct msgs *m, size_t *used)
{
	struct proto_reader r;
	proto_reader_init(&r, p, len);
	int err;
	switch (kind) {
	case 0:
	case 1:
		err = proto_getcfilters_decode(&r, &m->g);
		break;
	case 2:
		err = proto_getcfcheckpt_decode(&r, &m->c);
		break;
	case 3:
		err = proto_cfilter_decode(&r, &m->f);
		break;
	case 4:
		err = proto_cfheaders_decode(&r, &m->h);
		break;
	default:
		err = proto_cfcheckpt_decode(&r, &m->h);
		break;
	}
	*used = proto_reader_offset(&r);
	return err;
}

static void encode(unsigned kind, const struct msgs *m, struct proto_writer *w)
{
	switch (kind) {
	case 0:
	case 1:
		proto_getcfilters_encode(&m->g, w);
		break;
	case 2:
		proto_getcfcheckpt_encode(&m->c, w);
		break;
	case 3:
		proto_cfilter_encode(&m->f, w);
		break;
	case 4:
		proto_cfheaders_encode(&m->h, w);
		break;
	default:
		proto_cfcheckpt_encode(&m->h, w);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned kind = data[0] % 6u;
	size_t len = size - 1;
	/* A private copy, so the sanitizers see reads past the payload. */
	uint8_t *payload = malloc(len ? len : 1);
	if (!payload)
		return 0;
	memcpy(payload, data + 1, len);

	struct msgs m;
	memset(&m, 0, sizeof(m));
	struct proto_writer w1, w2;
	proto_writer_init(&w1);
	proto_writer_init(&w2);
	size_t used = SIZE_MAX;
	int err = decode(kind, payload, len, &m, &used);
	check(err <= 0 && err >= PROTO_ERR__MIN, "error code out of range", kind);
	check(used <= len, "offset past the payload", kind);
	if (err) {
		check(m.f.len == 0 && m.h.n == 0, "an error left entries", kind);
		goto out;
	}
	check(m.h.n <= (kind == 4 ? PROTO_MAX_GETCFHEADERS : PROTO_MAX_CFCHECKPT),
	      "count over limit", kind);
	check(m.f.len <= len, "a filter longer than its message", kind);
	encode(kind, &m, &w1);
	check(w1.err == 0, "a decoded message does not encode", kind);
	check(w1.len == used && (used == 0 || memcmp(w1.buf, payload, used) == 0),
	      "re-encoding differs from the input", kind);
	/* Again into the used object: the same message. */
	size_t used2 = 0;
	err = decode(kind, payload, len, &m, &used2);
	check(err == 0 && used2 == used, "decoding into a reused message fails", kind);
	encode(kind, &m, &w2);
	check(w2.err == 0 && w2.len == w1.len &&
	          (w1.len == 0 || memcmp(w1.buf, w2.buf, w1.len) == 0),
	      "decoding into a reused message differs", kind);
out:
	proto_cfilter_release(&m.f);
	proto_cfhashes_release(&m.h);
	proto_writer_release(&w1);
	proto_writer_release(&w2);
	free(payload);
	return 0;
}
