/*
 * tests/unit/test_pool_arena.c: pool/'s arena (issue 26): a job vector's
 * scripts over 28 bytes in chunks it owns, held by the check queue's round
 * until it completes. Growth across chunks, jobs moved while the vec and
 * the arena grow, the vec cleared, refilled and released with jobs in
 * flight, steady rounds that allocate nothing, and out-of-memory at each
 * step. Run plain, under ASan (a script read after its chunk was freed)
 * and under TSan (a worker reading bytes the vec writes again).
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

/* The longest script a test makes (one past a chunk: a chunk of its own). */
#define BIG_LEN (POOL_CHUNK_BYTES + 100u)

static uint8_t big[BIG_LEN];

/* Script bytes for job `id` of length `len` (a pattern tests recheck). */
static const uint8_t *script_for(uint32_t id, size_t len)
{
	static uint8_t buf[BIG_LEN];
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 31u + i * 7u + 1u);
	return buf;
}

static void check_script(const struct pool_testjob *job, uint32_t id, size_t len)
{
	assert_int_equal(job->id, id);
	const uint8_t *want = script_for(id, len);
	tu_assert_bytes_equal(pool_sbuf_data(&job->script), pool_sbuf_len(&job->script), want, len);
}

/* Lengths on both sides of the inline limit, P2TR's 34 among them. */
static size_t len_for(uint32_t id)
{
	static const size_t lens[] = {0, 22, 28, 29, 34, 34, 71, 200, 34, 25};
	return lens[id % (sizeof(lens) / sizeof(lens[0]))];
}

static void push(struct pool_vec *v, uint32_t id, size_t len)
{
	struct pool_testjob *j = pool_vec_emplace(v);
	assert_non_null(j);
	assert_int_equal(pool_testjob_init_in(j, v, id, script_for(id, len), len, 0), 0);
}

static struct pool_queue *queue_new(int par, unsigned batch)
{
	struct pool_queue *q;
	struct pool_queue_config cfg = {
	    .job_size = sizeof(struct pool_testjob),
	    .run = pool_testjob_run,
	    .release = pool_testjob_release,
	    .par = par,
	    .batch = batch,
	};
	assert_int_equal(pool_queue_new(&q, &cfg), 0);
	return q;
}

/* ---------------------------------------------------------------------- */

/* Up to 28 bytes inline, beyond borrowed from the arena: one allocation for
 * the first chunk, none for the next scripts; a borrowed sbuf owns
 * nothing, and changing it copies the bytes to its own allocation. */
static void test_arena_inline_and_borrowed(void **state)
{
	(void)state;
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	assert_int_equal(pool_vec_reserve(&v, 16), 0);
	uint64_t a0 = base_alloc_count();
	push(&v, 0, 0);
	push(&v, 1, 28);
	assert_int_equal(base_alloc_count(), a0);
	assert_int_equal(pool_vec_arena_chunks(&v), 0);
	push(&v, 2, 29);
	assert_int_equal(base_alloc_count(), a0 + 1);
	push(&v, 3, 34);
	push(&v, 4, 200);
	assert_int_equal(base_alloc_count(), a0 + 1);
	assert_int_equal(pool_vec_arena_chunks(&v), 1);
	for (uint32_t i = 0; i < 5; i++) {
		struct pool_testjob *j = pool_vec_at(&v, i);
		check_script(j, i, pool_sbuf_len(&j->script));
		assert_int_equal(pool_sbuf_owns(&j->script), 0);
		assert_int_equal(pool_sbuf_on_heap(&j->script), i >= 2);
	}
	/* A change to a borrowed script copies it out; the arena's bytes stay. */
	struct pool_testjob *j3 = pool_vec_at(&v, 3);
	const uint8_t *in_arena = pool_sbuf_data(&j3->script);
	assert_int_equal(pool_sbuf_append(&j3->script, (const uint8_t *)"x", 1), 0);
	assert_int_equal(pool_sbuf_owns(&j3->script), 1);
	assert_int_equal(pool_sbuf_len(&j3->script), 35);
	assert_memory_equal(pool_sbuf_data(&j3->script), script_for(3, 34), 34);
	assert_memory_equal(in_arena, script_for(3, 34), 34);
	/* Too long for an sbuf: refused before the arena is touched. */
	struct pool_sbuf sb;
	uint8_t *cur = v.arena_cur;
	assert_int_equal(pool_sbuf_init_in(&sb, &v, big, (size_t)POOL_SBUF_MAX + 1),
	                 POOL_EOVERFLOW);
	assert_int_equal(pool_sbuf_len(&sb), 0);
	assert_ptr_equal(v.arena_cur, cur);
	pool_vec_release(&v, pool_testjob_release, NULL);
	assert_int_equal(pool_vec_arena_chunks(&v), 0);
	assert_null(v.spare);
}

/* Scripts fill chunk after chunk, one allocation each; a script larger than
 * a chunk gets one of its own and the newest chunk keeps filling. The
 * elements move (the vec reallocates from 8 up) and stay right: their
 * scripts still point at the same bytes. */
static void test_arena_growth_across_chunks(void **state)
{
	(void)state;
	const uint32_t n = 6000; /* ~250 KB of scripts: four chunks and more */
	struct pool_vec v;
	const uint8_t **where = calloc(n, sizeof(*where));
	assert_non_null(where);
	pool_vec_init(&v, sizeof(struct pool_testjob));
	uint64_t a0 = base_alloc_count();
	size_t bytes = 0, vec_grows = 0;
	for (uint32_t id = 0; id < n; id++) {
		size_t len = len_for(id);
		size_t cap_before = v.cap;
		push(&v, id, len);
		if (v.cap != cap_before)
			vec_grows++;
		where[id] = pool_sbuf_data(&((struct pool_testjob *)pool_vec_at(&v, id))->script);
		if (len > POOL_SBUF_INLINE)
			bytes += len;
	}
	size_t chunks = pool_vec_arena_chunks(&v);
	assert_true(chunks >= 4);
	/* A chunk wastes at most one script's worth at its end. */
	assert_true(chunks <= bytes / (POOL_CHUNK_BYTES - 200) + 1);
	assert_true(vec_grows >= 8);
	assert_true(base_alloc_count() - a0 <= chunks + 11); /* chunks + the vec's reallocs */
	for (uint32_t id = 0; id < n; id++) {
		struct pool_testjob *j = pool_vec_at(&v, id);
		check_script(j, id, len_for(id));
		if (len_for(id) > POOL_SBUF_INLINE)
			assert_ptr_equal(pool_sbuf_data(&j->script), where[id]);
	}
	/* Every job moved by memcpy to another array (realloc may have grown
	 * the array in place) reads the same bytes, from v's arena. */
	struct pool_vec w;
	size_t len;
	pool_vec_init(&w, sizeof(struct pool_testjob));
	void *arr = pool_vec_take(&v, &len);
	assert_int_equal(len, n);
	assert_int_equal(pool_vec_append(&w, arr, len), 0);
	memset(arr, 0xa5, len * sizeof(struct pool_testjob));
	xfree(arr);
	for (uint32_t id = 0; id < n; id++)
		check_script(pool_vec_at(&w, id), id, len_for(id));
	assert_int_equal(pool_vec_arena_chunks(&w), 0);
	pool_vec_release(&w, pool_testjob_release, NULL);
	assert_int_equal(pool_vec_arena_chunks(&v), chunks);

	/* One chunk's worth and more: a chunk of its own, put behind the newest. */
	uint8_t *cur = v.arena_cur;
	a0 = base_alloc_count();
	push(&v, n, BIG_LEN);
	assert_int_equal(base_alloc_count(), a0 + 2); /* the vec's array (taken above), the chunk */
	assert_ptr_equal(v.arena_cur, cur);
	assert_int_equal(pool_vec_arena_chunks(&v), chunks + 1);
	push(&v, n + 1, 34);
	assert_int_equal(base_alloc_count(), a0 + 2);
	check_script(pool_vec_at(&v, 0), n, BIG_LEN);
	check_script(pool_vec_at(&v, 1), n + 1, 34);
	pool_vec_release(&v, pool_testjob_release, NULL);
	free(where);
}

/* clear keeps the newest chunk and starts it over: a refill of the same
 * size allocates nothing. */
static void test_arena_clear_reuses(void **state)
{
	(void)state;
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	for (int round = 0; round < 3; round++) {
		uint64_t a0 = base_alloc_count();
		for (uint32_t id = 0; id < 500; id++)
			push(&v, id + (uint32_t)round, 34);
		if (round > 0)
			assert_int_equal(base_alloc_count(), a0);
		for (uint32_t id = 0; id < 500; id++)
			check_script(pool_vec_at(&v, id), id + (uint32_t)round, 34);
		pool_vec_clear(&v, pool_testjob_release, NULL);
		assert_int_equal(pool_vec_arena_chunks(&v), 1);
	}
	pool_vec_release(&v, pool_testjob_release, NULL);
}

/*
 * Jobs in flight: the queue took them with take_vec, workers are running
 * them slowly, and meanwhile the vec is cleared, refilled with other bytes
 * (in the same chunk and new ones) and finally released. Every job still
 * reads its own script (the checksum of the round is exact), nothing is
 * freed early (ASan) and no byte is written while a worker reads it (TSan).
 */
static void test_arena_round_holds_chunks(void **state)
{
	(void)state;
	const uint32_t n = 3000;
	struct pool_queue *q = queue_new(2, 16);
	struct pool_testlog log = {0};
	log.spin = 2000;
	for (int round = 0; round < 3; round++) {
		struct pool_vec v;
		pool_vec_init(&v, sizeof(struct pool_testjob));
		uint64_t want = 0;
		atomic_store(&log.checksum, 0);
		pool_queue_begin(q, &log);
		for (uint32_t id = 0; id < n; id++) {
			push(&v, id, len_for(id));
			want += pool_testjob_digest(pool_vec_at(&v, v.len - 1));
			if (v.len == 64)
				assert_int_equal(pool_queue_take_vec(q, &v), 0);
		}
		assert_int_equal(pool_queue_take_vec(q, &v), 0);
		/* The round holds the chunks: the vec neither rewinds nor frees them. */
		pool_vec_clear(&v, pool_testjob_release, NULL);
		for (uint32_t id = 0; id < n; id++)
			push(&v, n + id, len_for(id) + 1);
		for (uint32_t id = 0; id < n; id++)
			check_script(pool_vec_at(&v, id), n + id, len_for(id) + 1);
		if (round == 1)
			pool_vec_clear(&v, pool_testjob_release, NULL);
		pool_vec_release(&v, pool_testjob_release, NULL);
		assert_int_equal(pool_queue_complete(q), 0);
		assert_int_equal(atomic_load(&log.checksum), want);
	}
	pool_queue_free(q);
}

/* ConnectBlock's shape: 5,000 jobs of 34-byte scripts handed over 64 at a
 * time, round after round from one vec. After the first rounds the chunks
 * come back through the queue's spares: a round allocates nothing. */
static void test_arena_steady_rounds_allocate_nothing(void **state)
{
	(void)state;
	struct pool_queue *q = queue_new(1, 16);
	struct pool_testlog log = {0};
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	uint64_t a0 = 0;
	for (int round = 0; round < 6; round++) {
		if (round == 3)
			a0 = base_alloc_count();
		uint64_t want = 0;
		atomic_store(&log.checksum, 0);
		pool_queue_begin(q, &log);
		for (uint32_t id = 0; id < 5000; id++) {
			push(&v, id * 7u + (uint32_t)round, 34);
			want += pool_testjob_digest(pool_vec_at(&v, v.len - 1));
			if (v.len == 64)
				assert_int_equal(pool_queue_take_vec(q, &v), 0);
		}
		assert_int_equal(pool_queue_take_vec(q, &v), 0);
		pool_vec_clear(&v, pool_testjob_release, NULL);
		assert_int_equal(pool_queue_complete(q), 0);
		assert_int_equal(atomic_load(&log.checksum), want);
	}
	assert_int_equal(base_alloc_count() - a0, 0);
	pool_vec_release(&v, pool_testjob_release, NULL);
	pool_queue_free(q);
}

/* The queue freed with a round open releases the jobs and drops the
 * chunks it held, the vec already gone (ASan: nothing leaks). */
static void test_arena_queue_freed_in_round(void **state)
{
	(void)state;
	struct pool_queue *q = queue_new(1, 0);
	struct pool_vec v;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	pool_queue_begin(q, NULL);
	for (uint32_t id = 0; id < 2000; id++)
		push(&v, id, 34);
	assert_int_equal(pool_queue_take_vec(q, &v), 0);
	pool_vec_release(&v, pool_testjob_release, NULL);
	pool_queue_free(q);
}

/*
 * Out of memory at each step of a round: the pushes (the vec's array, a new
 * chunk, a chunk of its own for a big script) and the take (the queue's
 * segment list, its list of held chunks). Allocation k fails, for every k
 * until a round goes through without a failure. A failing push or take
 * returns POOL_ENOMEM and leaves the vec as it was (length, contents,
 * arena); the caller then carries on, and every job pushed runs exactly
 * once with its own script.
 */
static void test_arena_oom_each_step(void **state)
{
	(void)state;
	const uint32_t n = 2500;
	int push_failures = 0, take_failures = 0;
	for (long k = 0;; k++) {
		/* A new queue each time, so its own lists grow (and fail) too. */
		struct pool_queue *q = queue_new(1, 16);
		struct pool_testlog log = {0};
		struct pool_vec v;
		uint64_t want = 0;
		int failures = 0;
		pool_vec_init(&v, sizeof(struct pool_testjob));
		pool_queue_begin(q, &log);
		base_alloc_fail_after(k);
		for (uint32_t id = 0; id < n; id++) {
			size_t len = id == 1234 ? BIG_LEN : len_for(id);
			size_t len0 = v.len, chunks0 = pool_vec_arena_chunks(&v);
			uint8_t *cur0 = v.arena_cur;
			struct pool_testjob *j = pool_vec_emplace(&v);
			int err = j ? pool_testjob_init_in(j, &v, id, script_for(id, len), len, 0)
			            : POOL_ENOMEM;
			if (err) {
				assert_int_equal(err, POOL_ENOMEM);
				if (j)
					v.len--; /* the slot holds nothing to release */
				assert_int_equal(v.len, len0);
				assert_int_equal(pool_vec_arena_chunks(&v), chunks0);
				assert_ptr_equal(v.arena_cur, cur0);
				failures++;
				push_failures++;
				continue;
			}
			want += pool_testjob_digest(j);
			if (v.len == 64 || id == n - 1) {
				size_t before = v.len;
				err = pool_queue_take_vec(q, &v);
				if (err) {
					assert_int_equal(err, POOL_ENOMEM);
					assert_int_equal(v.len, before);
					failures++;
					take_failures++;
					err =
					    pool_queue_take_vec(q, &v); /* the injector disarmed */
					assert_int_equal(err, 0);
				}
			}
		}
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		assert_int_equal(failures, injected);
		pool_vec_clear(&v, pool_testjob_release, NULL);
		assert_int_equal(pool_queue_complete(q), 0);
		assert_int_equal(atomic_load(&log.checksum), want);
		pool_vec_release(&v, pool_testjob_release, NULL);
		pool_queue_free(q);
		if (!injected)
			break;
		assert_true(k < 100000);
	}
	/* Both kinds of step failed at some k. */
	assert_true(push_failures > 0);
	assert_true(take_failures > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arena_inline_and_borrowed),
	    cmocka_unit_test(test_arena_growth_across_chunks),
	    cmocka_unit_test(test_arena_clear_reuses),
	    cmocka_unit_test(test_arena_round_holds_chunks),
	    cmocka_unit_test(test_arena_steady_rounds_allocate_nothing),
	    cmocka_unit_test(test_arena_queue_freed_in_round),
	    cmocka_unit_test(test_arena_oom_each_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
