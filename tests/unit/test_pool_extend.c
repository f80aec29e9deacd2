/*
 * tests/unit/test_pool_extend.c: pool_vec_extend, the job vector's bulk
 * push (issue 26): n slots at once with the length written once. Slots
 * where emplace would put them, growth that keeps the contents, a failure
 * (out of memory, overflow) that leaves the vec as it was, slots left
 * unfilled given back without being released, and arena scripts written
 * while filling extended slots, across chunks and after a round took the
 * vec's earlier jobs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_pool.h"

/* Script bytes for job `id` of length `len` (a pattern tests recheck). */
static const uint8_t *script_for(uint32_t id, size_t len)
{
	static uint8_t buf[256];
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 13u + i * 5u + 3u);
	return buf;
}

/* Lengths on both sides of the inline limit (P2TR's 34 among them). */
static size_t len_for(uint32_t id)
{
	static const size_t lens[] = {0, 34, 28, 29, 34, 71, 200, 1, 34};
	return lens[id % (sizeof(lens) / sizeof(lens[0]))];
}

/* The job at index `i` is job `id`, its script intact. */
static void check_job_at(const struct pool_vec *v, size_t i, uint32_t id)
{
	const struct pool_testjob *j = pool_vec_at(v, i);
	assert_int_equal(j->id, id);
	size_t len = len_for(id);
	tu_assert_bytes_equal(pool_sbuf_data(&j->script), pool_sbuf_len(&j->script),
	                      script_for(id, len), len);
	assert_int_equal(pool_sbuf_owns(&j->script), 0);
}

static void check_job(const struct pool_vec *v, uint32_t id)
{
	check_job_at(v, id, id);
}

/* Extend by `n` and fill the slots as jobs first..first+n-1. */
static void extend_fill(struct pool_vec *v, uint32_t first, size_t n)
{
	size_t len = v->len;
	struct pool_testjob *j = pool_vec_extend(v, n);
	assert_non_null(j);
	assert_int_equal(v->len, len + n);
	assert_ptr_equal(j, v->data + len * v->elem_size);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id = first + k;
		assert_int_equal(
		    pool_testjob_init_in(&j[k], v, id, script_for(id, len_for(id)), len_for(id), 0),
		    0);
	}
}

static struct pool_testlog *log_new(size_t n)
{
	struct pool_testlog *log = calloc(1, sizeof(*log));
	assert_non_null(log);
	log->releases = calloc(n, sizeof(*log->releases));
	assert_non_null(log->releases);
	log->n_ids = n;
	return log;
}

static void log_free(struct pool_testlog *log)
{
	free((void *)log->releases);
	free(log);
}

/* ---------------------------------------------------------------------- */

/* From empty: one allocation of at least 8; within the capacity none; past
 * it the vec doubles (or takes exactly what is needed) and the elements
 * moved with it are intact. The same jobs as emplace would make. */
static void test_extend_slots_and_growth(void **state)
{
	(void)state;
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	uint64_t a0 = base_alloc_count();
	extend_fill(&v, 0, 3);
	assert_int_equal(v.cap, 8);
	assert_int_equal(base_alloc_count(), a0 + 2); /* the array, one chunk */
	extend_fill(&v, 3, 5);
	assert_int_equal(v.cap, 8);
	assert_int_equal(base_alloc_count(), a0 + 2);
	extend_fill(&v, 8, 1); /* doubles */
	assert_int_equal(v.cap, 16);
	extend_fill(&v, 9, 40); /* more than double: exactly what is needed */
	assert_int_equal(v.cap, 49);
	assert_int_equal(v.len, 49);
	for (uint32_t id = 0; id < v.len; id++)
		check_job(&v, id);

	/* A vec filled by emplace holds the same bytes. */
	struct pool_vec w;
	pool_vec_init(&w, sizeof(struct pool_testjob));
	for (uint32_t id = 0; id < v.len; id++) {
		struct pool_testjob *j = pool_vec_emplace(&w);
		assert_non_null(j);
		assert_int_equal(
		    pool_testjob_init_in(j, &w, id, script_for(id, len_for(id)), len_for(id), 0),
		    0);
	}
	for (uint32_t id = 0; id < v.len; id++)
		assert_int_equal(pool_testjob_digest(pool_vec_at(&v, id)),
		                 pool_testjob_digest(pool_vec_at(&w, id)));

	/* Reserved first (as the JobVecFill*Reserved rows): no allocation. */
	pool_vec_release(&w, pool_testjob_release, NULL);
	assert_int_equal(pool_vec_reserve(&w, 260), 0);
	uint64_t a1 = base_alloc_count();
	struct pool_testjob *j = pool_vec_extend(&w, 260);
	assert_ptr_equal(j, w.data);
	assert_int_equal(base_alloc_count(), a1);
	for (uint32_t k = 0; k < 260; k++)
		assert_int_equal(pool_testjob_init_in(&j[k], &w, k, NULL, 0, 0), 0);
	assert_int_equal(w.len, 260);
	pool_vec_release(&w, pool_testjob_release, NULL);
	pool_vec_release(&v, pool_testjob_release, NULL);
}

/* Every allocation fails once in turn: a failed extend returns NULL and
 * leaves the length, capacity and storage as they were, the jobs already
 * in are intact and released once each; an overflowing count is refused
 * before anything is allocated. */
static void test_extend_failure_leaves_vec(void **state)
{
	(void)state;
	const uint32_t n = 200;
	int failures = 0;
	for (long k = 0;; k++) {
		struct pool_testlog *log = log_new(n);
		struct pool_vec v;
		pool_vec_init(&v, sizeof(struct pool_testjob));
		int done = 1;
		base_alloc_fail_after(k);
		for (uint32_t id = 0; id < n;) {
			size_t step = 1 + id % 7, len = v.len, cap = v.cap;
			if (step > n - id)
				step = n - id;
			uint8_t *data = v.data;
			struct pool_testjob *j = pool_vec_extend(&v, step);
			if (!j) {
				assert_int_equal(v.len, len);
				assert_int_equal(v.cap, cap);
				assert_ptr_equal(v.data, data);
				done = 0;
				break;
			}
			size_t filled = 0;
			for (; filled < step; filled++, id++) {
				int err = pool_testjob_init_in(&j[filled], &v, id,
				                               script_for(id, len_for(id)),
				                               len_for(id), 0);
				if (err) {
					assert_int_equal(err, POOL_ENOMEM);
					/* The job is valid (empty): keep it, give back the rest. */
					pool_vec_truncate(&v, len + filled + 1, NULL, NULL);
					done = 0;
					break;
				}
			}
			if (!done)
				break;
		}
		base_alloc_fail_after(-1);
		size_t made = v.len;
		for (uint32_t id = 0; id < made; id++) {
			const struct pool_testjob *j = pool_vec_at(&v, id);
			assert_int_equal(j->id, id);
			if (pool_sbuf_len(&j->script))
				check_job(&v, id);
		}
		pool_vec_release(&v, pool_testjob_release, log);
		for (uint32_t id = 0; id < n; id++)
			assert_int_equal(log->releases[id], id < made ? 1 : 0);
		log_free(log);
		if (done)
			break;
		failures++;
	}
	/* Array growths and arena chunks were each a failure point. */
	assert_true(failures >= 5);

	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	extend_fill(&v, 0, 2);
	uint8_t *data = v.data;
	size_t cap = v.cap;
	uint64_t a0 = base_alloc_count();
	assert_null(pool_vec_extend(&v, SIZE_MAX));
	assert_null(pool_vec_extend(&v, SIZE_MAX / sizeof(struct pool_testjob)));
	assert_int_equal(base_alloc_count(), a0);
	assert_int_equal(v.len, 2);
	assert_int_equal(v.cap, cap);
	assert_ptr_equal(v.data, data);
	check_job(&v, 0);
	check_job(&v, 1);
	pool_vec_release(&v, pool_testjob_release, NULL);
}

/* Slots left unfilled go back with pool_vec_truncate(..., NULL, NULL):
 * release never sees them (they hold garbage that would be "freed"). */
static void test_extend_unfilled_given_back(void **state)
{
	(void)state;
	const uint32_t n = 16;
	struct pool_testlog *log = log_new(n);
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	extend_fill(&v, 0, 3);
	struct pool_testjob *j = pool_vec_extend(&v, 10);
	assert_non_null(j);
	memset(j, 0xa5, 10 * sizeof(*j)); /* what an unfilled slot may hold */
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(pool_testjob_init_in(&j[k], &v, 3 + k,
		                                      script_for(3 + k, len_for(3 + k)),
		                                      len_for(3 + k), 0),
		                 0);
	pool_vec_truncate(&v, 7, NULL, NULL);
	assert_int_equal(v.len, 7);
	for (uint32_t id = 0; id < 7; id++)
		check_job(&v, id);
	pool_vec_release(&v, pool_testjob_release, log);
	for (uint32_t id = 0; id < n; id++)
		assert_int_equal(log->releases[id], id < 7 ? 1 : 0);
	log_free(log);
}

/* Scripts written into the arena while filling extended slots: across
 * chunks (jobs in an earlier chunk stay right), and after a round took the
 * vec's earlier jobs and completed (the vec's newest chunk then has one
 * holder again and the vec's length counts the new slots, so the chunk is
 * not started over under the jobs being filled). */
static void test_extend_arena_while_filling(void **state)
{
	(void)state;
	struct pool_queue *q;
	struct pool_queue_config cfg = {
	    .job_size = sizeof(struct pool_testjob),
	    .run = pool_testjob_run,
	    .release = pool_testjob_release,
	    .par = 1,
	    .batch = 16,
	};
	assert_int_equal(pool_queue_new(&q, &cfg), 0);
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));

	/* One round of 300 jobs, then the vec is empty but keeps its chunk. */
	pool_queue_begin(q, NULL);
	extend_fill(&v, 0, 300);
	assert_int_equal(pool_queue_take_vec(q, &v), 0);
	assert_int_equal(v.len, 0);
	assert_int_equal(pool_queue_complete(q), 0);
	assert_int_equal(pool_vec_arena_chunks(&v), 1);

	/* 3,000 jobs (about 170 KB of scripts) in one extend: three more chunks
	 * beside the one the first round used, nothing overwritten. */
	extend_fill(&v, 0, 3000);
	assert_true(pool_vec_arena_chunks(&v) >= 3);
	for (uint32_t id = 0; id < v.len; id++)
		check_job(&v, id);

	/* The same through a round whose workers read every script. */
	struct pool_testlog log = {0};
	uint64_t want = 0;
	for (uint32_t id = 0; id < v.len; id++)
		want += pool_testjob_digest(pool_vec_at(&v, id));
	pool_queue_begin(q, &log);
	assert_int_equal(pool_queue_take_vec(q, &v), 0);
	extend_fill(&v, 3000, 500); /* refilled while the round runs */
	assert_int_equal(pool_queue_complete(q), 0);
	assert_int_equal(log.checksum, want);
	assert_int_equal(v.len, 500);
	for (uint32_t i = 0; i < v.len; i++)
		check_job_at(&v, i, 3000 + i);
	pool_vec_release(&v, pool_testjob_release, NULL);
	pool_queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_extend_slots_and_growth),
	    cmocka_unit_test(test_extend_failure_leaves_vec),
	    cmocka_unit_test(test_extend_unfilled_given_back),
	    cmocka_unit_test(test_extend_arena_while_filling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
