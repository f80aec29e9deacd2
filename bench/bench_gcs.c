/*
 * bench/bench_gcs.c: BIP158's Golomb-coded sets (index/gcs.c), the rows of
 * Bitcoin Core's src/bench/gcs_filter.cpp with the same work per op:
 *
 *   GCSFilterConstruct  one set made from Core's test elements (100,000
 *                       32-byte vectors of which the first two bytes vary:
 *                       65,536 distinct), the SipHash key's k0 one more at
 *                       each op as Core's.
 *   GCSFilterDecode     that set's encoding read back with Core's check
 *                       (N values, no byte short or left over).
 *   GCSFilterMatch      one match of the empty element against it (key 0).
 *
 * The elements and the encoding are made once, untimed, as Core's are.
 */
#include "bench/bench.h"

#include <string.h>

#include "index/index.h"

/* Core's GenerateGCSTestElements: i's low two bytes in a 32-byte vector. */
#define GCS_ELEMENTS 65536u
#define GCS_ELEM_LEN 32u

static uint8_t elem_bytes[GCS_ELEMENTS][GCS_ELEM_LEN];
static struct index_gcs_elem elems[GCS_ELEMENTS];
static struct proto_writer encoded;
static bool made;

/* Fills elems and `encoded` (key 0) once; false after bench_fail. */
static bool make_set(struct bench_ctx *ctx)
{
	if (made)
		return true;
	for (uint32_t i = 0; i < GCS_ELEMENTS; i++) {
		elem_bytes[i][0] = (uint8_t)i;
		elem_bytes[i][1] = (uint8_t)(i >> 8);
		elems[i] = (struct index_gcs_elem){elem_bytes[i], GCS_ELEM_LEN};
	}
	static const uint8_t key0[16];
	proto_writer_init(&encoded);
	if (index_gcs_encode(key0, elems, GCS_ELEMENTS, &encoded) || encoded.err) {
		bench_fail(ctx, "GCS of %u elements: cannot encode", GCS_ELEMENTS);
		return false;
	}
	made = true;
	return true;
}

BENCH(GCSFilterConstruct)
{
	if (!make_set(ctx))
		return;
	struct proto_writer w;
	proto_writer_init(&w);
	uint8_t key[16] = {0};
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		/* k0 = i, little-endian; k1 = 0 */
		for (int b = 0; b < 8; b++)
			key[b] = (uint8_t)((uint64_t)i >> (8 * b));
		w.len = 0;
		if (index_gcs_encode(key, elems, GCS_ELEMENTS, &w) || w.err) {
			bench_fail(ctx, "GCSFilterConstruct: encode failed");
			break;
		}
		bench_keep(w.buf[w.len - 1]);
	}
	bench_stop(ctx);
	bench_note(ctx, "%zu bytes for %u elements", w.len, GCS_ELEMENTS);
	proto_writer_release(&w);
}

BENCH(GCSFilterDecode)
{
	if (!make_set(ctx))
		return;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		uint32_t got = 0;
		if (index_gcs_check(encoded.buf, encoded.len, &got) || got != GCS_ELEMENTS) {
			bench_fail(ctx, "GCSFilterDecode: %u elements decoded", got);
			break;
		}
	}
}

BENCH(GCSFilterMatch)
{
	if (!make_set(ctx))
		return;
	static const uint8_t key0[16];
	bool m = false;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		if (index_gcs_match(key0, encoded.buf, encoded.len, NULL, 0, &m)) {
			bench_fail(ctx, "GCSFilterMatch: the filter does not decode");
			break;
		}
		bench_keep(m);
	}
}
