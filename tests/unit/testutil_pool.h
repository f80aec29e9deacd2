/**
 * tests/unit/testutil_pool.h: struct pool_testjob, the job pool/'s tests and
 * benchmarks run (tests/unit/test_pool.c, bench/bench_pool.c). Test code:
 * it is linked into the unit tests and peerbench, never into libpeerd.a.
 * Needs no cmocka.
 */
#ifndef PEERD_TESTUTIL_POOL_H
#define PEERD_TESTUTIL_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "pool/pool.h"

/**
 * A stand-in for a script-check job: an sbuf script, an id and the code its
 * run returns (0: pass). 40 bytes, valid after memcpy.
 */
struct pool_testjob {
	/** The script (owned). */
	struct pool_sbuf script;
	/** Caller's number for the job (indexes pool_testlog's arrays). */
	uint32_t id;
	/** What pool_testjob_run returns. */
	int32_t fail_code;
};

/**
 * Optional round argument for test jobs: records what ran. Every field may
 * be shared by all threads; arrays may be NULL.
 */
struct pool_testlog {
	/** runs[id] counts runs of job id (for id < n_ids). */
	_Atomic uint32_t *runs;
	/** releases[id] counts releases of job id (for id < n_ids). */
	_Atomic uint32_t *releases;
	/** Length of runs and releases. */
	size_t n_ids;
	/** Sum of pool_testjob_digest over every job run. */
	_Atomic uint64_t checksum;
	/** Busy-loop iterations per run, to make jobs take time. */
	unsigned spin;
};

/** A digest of the job's id and script bytes (what a run adds to the checksum). */
uint64_t pool_testjob_digest(const struct pool_testjob *job);

/**
 * Replace the job's script with a copy of `len` bytes of `script` (the
 * out-of-line part of pool_testjob_init). Returns 0, POOL_ENOMEM or
 * POOL_EOVERFLOW; on failure the job's script is unchanged.
 */
POOL_WUR int pool_testjob_set_script(struct pool_testjob *job, const uint8_t *script, size_t len);

/**
 * Initialise a job with a copy of `script` (`len` bytes; NULL if len is 0).
 * Returns 0, POOL_ENOMEM or POOL_EOVERFLOW; on failure the job is still
 * valid, with an empty script.
 */
POOL_WUR static inline int pool_testjob_init(struct pool_testjob *job, uint32_t id,
                                             const uint8_t *script, size_t len, int32_t fail_code)
{
	job->id = id;
	job->fail_code = fail_code;
	pool_sbuf_init(&job->script);
	return len ? pool_testjob_set_script(job, script, len) : 0;
}

/**
 * Initialise a job whose script borrows from `v`'s arena when longer than
 * POOL_SBUF_INLINE (pool_sbuf_init_in): how a job vector is filled.
 * Returns 0, POOL_ENOMEM or POOL_EOVERFLOW; on failure the job is still
 * valid, with an empty script, and `v` is unchanged.
 */
POOL_WUR static inline int pool_testjob_init_in(struct pool_testjob *job, struct pool_vec *v,
                                                uint32_t id, const uint8_t *script, size_t len,
                                                int32_t fail_code)
{
	job->id = id;
	job->fail_code = fail_code;
	return pool_sbuf_init_in(&job->script, v, script, len);
}

/**
 * pool_run_fn for struct pool_testjob: if `arg` (a struct pool_testlog *) is
 * not NULL, counts the run, adds the digest to the checksum and spins; then
 * returns the job's fail_code. Any thread.
 */
int pool_testjob_run(void *job, void *arg);

/**
 * pool_release_fn for struct pool_testjob: frees each script and, if `arg`
 * (a struct pool_testlog *) is not NULL, counts the release. Any thread.
 */
void pool_testjob_release(void *jobs, size_t n, void *arg);

#endif
