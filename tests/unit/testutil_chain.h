/**
 * tests/unit/testutil_chain.h: helpers for the chain/ unit tests: block
 * files of records, a regtest header index, nonce grinding, verdicts.
 * Include after chain/chain.h, cmocka.h and testutil.h.
 */
#ifndef PEERD_TESTUTIL_CHAIN_H
#define PEERD_TESTUTIL_CHAIN_H

#include <stddef.h>
#include <stdint.h>

/** The raw blocks of a block file (`magic | length | block` records), borrowed from data. */
struct tu_records {
	uint8_t *data; /**< the whole file, malloc'd */
	size_t n;
	const uint8_t **blk;
	size_t *len;
};

/** Read every record of the file at path (magic checked); fails the test on a bad file. */
void tu_records_load(const char *path, uint32_t magic, struct tu_records *out);
/** Free what tu_records_load allocated. */
void tu_records_free(struct tu_records *r);
/** The header of record i. */
void tu_record_header(const struct tu_records *r, size_t i, struct proto_block_header *h);

/** Change the nonce until the header satisfies its bits (only for easy targets: regtest). */
void tu_grind(struct proto_block_header *h, const struct proto_params *p);

/** Assert a chain/ error code, naming both codes, the expression and the line. */
#define tu_assert_chain_err(got, want)                                                             \
	tu_assert_chain_err_impl((got), (want), #got, __FILE__, __LINE__)
void tu_assert_chain_err_impl(int got, int want, const char *what, const char *file, int line);

/** Assert a verdict: rc CHAIN_EINVALID with this result and reason. */
#define tu_assert_reject(rc, st, want_result, want_reason)                                         \
	tu_assert_reject_impl((rc), (st), (want_result), (want_reason), __FILE__, __LINE__)
void tu_assert_reject_impl(int rc, const struct chain_state *st, int want_result,
                           const char *want_reason, const char *file, int line);
/** Assert 0, or show the verdict. */
#define tu_assert_ok(rc, st) tu_assert_ok_impl((rc), (st), #rc, __FILE__, __LINE__)
void tu_assert_ok_impl(int rc, const struct chain_state *st, const char *what, const char *file,
                       int line);

#endif
