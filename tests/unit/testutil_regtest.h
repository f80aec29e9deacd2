/**
 * tests/unit/testutil_regtest.h: Core's regtest chain
 * (tests/data/regtest/regtest_chain.dat) beside a chain opened in a fresh
 * directory, the fixture of the tests that feed it to chain/ and watch
 * what comes out (listeners, indexes, gettxoutsetinfo).
 * Include after chain/chain.h, cmocka.h, testutil.h and testutil_chain.h.
 */
#ifndef PEERD_TESTUTIL_REGTEST_H
#define PEERD_TESTUTIL_REGTEST_H

#include <stddef.h>

/** The records of Core's regtest chain and a chain opened on regtest in dir. */
struct tu_regtest {
	char dir[TU_TMPDIR_MAX];  /**< /tmp/peerd-<tag>-XXXXXX: the chain's, and free for more */
	struct tu_records blocks; /**< the chain's blocks; record i is height i + 1 */
	struct chain *c;          /**< open (par 1), at genesis; NULL once a test closed it */
};

/** Make r's directory, load the blocks and open the chain; fails the test, naming the error. */
void tu_regtest_open(struct tu_regtest *r, const char *tag);
/** Submit records [from, to) (heights from + 1 ...): each decodes and is accepted. */
void tu_regtest_submit(struct tu_regtest *r, size_t from, size_t to);
/** Close the chain (if a test has not), remove the directory, free the blocks. */
void tu_regtest_free(struct tu_regtest *r);

#endif
