/*
 * tests/unit/test_index_gcs.c: BIP158's basic filter and BIP157's filter
 * header (index/gcs.c) against Bitcoin Core's src/test/data/blockfilters.json
 * (tests/data/blockfilters/): every block's filter byte for byte and its
 * header from the previous one, the genesis block, duplicate scripts, an
 * unparseable script and witness data among them; each filter read back
 * (Core's decode check: a byte short or one too many is refused) and
 * matched against the block's scripts and against one it does not hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "tests/unit/testutil.h"

/* Filter f of block b: it decodes to its count exactly, every output script
 * the filter holds matches, a script it does not hold does not, and the
 * same bytes cut short or grown by one fail the decode check. */
static void read_back(const struct proto_block *b, const struct proto_hash *bh, const uint8_t *f,
                      size_t len)
{
	uint32_t n = 0;
	assert_int_equal(index_gcs_check(f, len, &n), INDEX_OK);
	assert_int_equal(f[0] < 0xfd ? f[0] : 0xfd, n < 0xfd ? n : 0xfd);
	bool m;
	size_t outs = 0;
	for (uint32_t t = 0; t < b->n_tx; t++)
		for (uint32_t o = 0; o < b->txs[t].n_out; o++) {
			const struct proto_tx *tx = &b->txs[t];
			const uint8_t *p = proto_txout_script(tx, &tx->vout[o]);
			uint32_t pl = tx->vout[o].script_len;
			if (pl == 0 || p[0] == 0x6a)
				continue;
			assert_int_equal(index_gcs_match(bh->b, f, len, p, pl, &m), INDEX_OK);
			if (!m)
				fail_msg("tx %u output %u: its script does not match the filter", t,
				         o);
			outs++;
		}
	static const uint8_t absent[] = "a script no block of the vectors holds";
	assert_int_equal(index_gcs_match(bh->b, f, len, absent, sizeof(absent), &m), INDEX_OK);
	assert_false(m);
	if (n == 0)
		return;
	assert_true(outs > 0);
	assert_int_equal(index_gcs_check(f, len - 1, NULL), INDEX_ECORRUPT);
	uint8_t *more = calloc(1, len + 1);
	memcpy(more, f, len);
	assert_int_equal(index_gcs_check(more, len + 1, NULL), INDEX_ECORRUPT);
	free(more);
}

static void check_row(json_t *row)
{
	const char *block_hex = json_string_value(json_array_get(row, 2));
	json_t *prevouts = json_array_get(row, 3);
	const char *prev_header = json_string_value(json_array_get(row, 4));
	const char *want_filter = json_string_value(json_array_get(row, 5));
	const char *want_header = json_string_value(json_array_get(row, 6));
	assert_non_null(block_hex);
	assert_non_null(want_filter);

	size_t raw_len;
	uint8_t *raw = tu_unhex(block_hex, &raw_len);
	struct proto_block b;
	proto_block_init(&b);
	assert_int_equal(proto_block_decode(raw, raw_len, &b, NULL), 0);
	struct proto_hash bh;
	proto_block_header_hash(&b.hdr, &bh);
	tu_assert_hash_hex(&bh, json_string_value(json_array_get(row, 1)));

	size_t n = json_array_size(prevouts);
	uint8_t **spent = calloc(n + 1, sizeof(*spent));
	uint32_t *spent_len = calloc(n + 1, sizeof(*spent_len));
	for (size_t i = 0; i < n; i++) {
		size_t l;
		spent[i] = tu_unhex(json_string_value(json_array_get(prevouts, i)), &l);
		spent_len[i] = (uint32_t)l;
	}
	struct proto_writer w;
	proto_writer_init(&w);
	assert_int_equal(
	    index_filter_basic(&b, &bh, (const uint8_t *const *)spent, spent_len, n, &w), INDEX_OK);
	assert_int_equal(w.err, 0);
	char *got = tu_hex(w.buf, w.len);
	if (strcmp(got, want_filter) != 0)
		fail_msg("block %s: filter %s, Core's %s",
		         json_string_value(json_array_get(row, 1)), got, want_filter);

	read_back(&b, &bh, w.buf, w.len);

	struct proto_hash prev, header;
	assert_int_equal(proto_hash_from_hex(prev_header, &prev), 0);
	index_filter_header(w.buf, w.len, &prev, &header);
	tu_assert_hash_hex(&header, want_header);

	free(got);
	proto_writer_release(&w);
	for (size_t i = 0; i < n; i++)
		free(spent[i]);
	free(spent);
	free(spent_len);
	proto_block_release(&b);
	free(raw);
}

static void test_core_vectors(void **state)
{
	(void)state;
	json_error_t jerr;
	json_t *root = json_load_file(tu_vector("blockfilters/blockfilters.json"), 0, &jerr);
	if (!root)
		fail_msg("blockfilters.json: %s", jerr.text);
	size_t checked = 0;
	for (size_t i = 0; i < json_array_size(root); i++) {
		json_t *row = json_array_get(root, i);
		if (json_array_size(row) < 7)
			continue; /* the heading */
		check_row(row);
		checked++;
	}
	assert_true(checked >= 6);
	json_decref(root);
}

/* A block whose only output is OP_RETURN and spends nothing: an empty set,
 * encoded as a zero count alone (BIP158), and an empty script is left out
 * just the same. */
static void test_empty_filter(void **state)
{
	(void)state;
	static const uint8_t opret[] = {0x6a, 0x01, 0x00};
	struct proto_txout out[2] = {{.value = 0, .script_off = 0, .script_len = 3},
	                             {.value = 0, .script_off = 3, .script_len = 0}};
	struct proto_tx tx;
	proto_tx_init(&tx);
	tx.n_out = 2;
	tx.vout = out;
	tx.blob = opret;
	tx.blob_len = sizeof(opret);
	struct proto_block b = {.n_tx = 1, .txs = &tx};
	struct proto_hash h = {{1}};
	const uint8_t *spent[1] = {opret};
	uint32_t spent_len[1] = {sizeof(opret)};
	uint8_t buf[8];
	struct proto_writer w;
	proto_writer_init_fixed(&w, buf, sizeof(buf));
	assert_int_equal(index_filter_basic(&b, &h, spent, spent_len, 1, &w), INDEX_OK);
	assert_int_equal(w.len, 1);
	assert_int_equal(buf[0], 0);
}

/* A set large enough for the radix sort (a block's few elements take the
 * insertion sort): read back, N as given, every element found, the bytes
 * those of the same set given in another order. */
static void test_large_set(void **state)
{
	(void)state;
	enum { N = 5000 };
	static uint8_t bytes[N][4];
	static struct index_gcs_elem e[N], r[N];
	for (uint32_t i = 0; i < N; i++) {
		memcpy(bytes[i], &i, 4);
		e[i] = (struct index_gcs_elem){bytes[i], 4};
		r[N - 1 - i] = e[i];
	}
	static const uint8_t key[16] = {7};
	struct proto_writer w, w2;
	proto_writer_init(&w);
	proto_writer_init(&w2);
	assert_int_equal(index_gcs_encode(key, e, N, &w), INDEX_OK);
	assert_int_equal(index_gcs_encode(key, r, N, &w2), INDEX_OK);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, w2.len);
	assert_memory_equal(w.buf, w2.buf, w.len);
	uint32_t n;
	assert_int_equal(index_gcs_check(w.buf, w.len, &n), INDEX_OK);
	assert_int_equal(n, N);
	for (uint32_t i = 0; i < N; i++) {
		bool m = false;
		assert_int_equal(index_gcs_match(key, w.buf, w.len, bytes[i], 4, &m), INDEX_OK);
		if (!m)
			fail_msg("element %u not found", i);
	}
	proto_writer_release(&w);
	proto_writer_release(&w2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_vectors),
	    cmocka_unit_test(test_empty_filter),
	    cmocka_unit_test(test_large_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
