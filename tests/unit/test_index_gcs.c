/*
 * tests/unit/test_index_gcs.c: BIP158's basic filter and BIP157's filter
 * header (index/gcs.c) against Bitcoin Core's src/test/data/blockfilters.json
 * (tests/data/blockfilters/): every block's filter byte for byte and its
 * header from the previous one, the genesis block, duplicate scripts, an
 * unparseable script and witness data among them.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_vectors),
	    cmocka_unit_test(test_empty_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
