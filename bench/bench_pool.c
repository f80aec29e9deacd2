/*
 * bench/bench_pool.c: the job vector and the check queue, set against
 * Bitcoin Core's benchmarks with the same parameters.
 *
 *   JobVecFill*            Core's PrevectorFillVector{Direct,Indirect}: 260
 *                          jobs whose script is 0 bytes (inline) or 29 bytes
 *                          (the vec's arena: one chunk a fill) pushed into
 *                          an empty vector, which is then released with its
 *                          elements. One op = one fill.
 *                          *Reserved reserves 260 first (as Core's does)
 *                          and takes the 260 slots with one
 *                          pool_vec_extend; *ReservedEmplace fills the
 *                          reserved vector one pool_vec_emplace a job;
 *                          *DeepCopy grows the way a vector of
 *                          non-movable elements must: new array, deep-copy
 *                          every element, destroy the old ones (its scripts
 *                          are heap copies of their own, a malloc each).
 *   CheckQueueSpeedJob     Core's CCheckQueueSpeedPrevectorJob: 101 batches
 *                          of 30 jobs with scripts of random length in
 *                          [0, 56) that do no work, copied from prepared
 *                          batches and added round after round; workers =
 *                          cores - 1 plus the adding thread; batch 128.
 *                          One op = one job.
 *   CheckQueueVerify       4,000 jobs of one real libsecp256k1 ECDSA
 *                          verification each. One op = one round of 4,000;
 *                          the note compares it with the physical limit,
 *                          4,000 x single-thread verify time / threads.
 */
#include "bench/bench.h"

#include <secp256k1.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pool/pool.h"
#include "tests/unit/testutil_pool.h"

/* xorshift64*: deterministic inputs, identical every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* ---------------------------------------------------------------------- */
/* Job vector fills                                                        */

#define FILL_N        260
#define FILL_DIRECT   0  /* script bytes: stays inline */
#define FILL_INDIRECT 29 /* one more than fits inline: forces the heap */

/* A P2PKH-like pattern, 29 bytes. */
static const uint8_t fill_script[FILL_INDIRECT] = {
    0x76, 0xa9, 0x14, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
    0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x88, 0xac, 0x51, 0x52, 0x53, 0x54,
};

/* One fill of 260 into an empty pool_vec, then release it all. Inlined so
 * that `len` and `reserve` are constants in each benchmark. Without
 * reserve, element by element with pool_vec_emplace (the growth is what
 * the row measures). Reserved, as Core's rows do (reserve 260, then 260
 * elements constructed one by one): the 260 slots come from one
 * pool_vec_extend, which checks the capacity and writes the length once
 * instead of per element; each job is still initialised (script header,
 * id, fail code, the script's bytes for Indirect) and released on its
 * own. `emplace` forces the per-element path on a reserved fill (the
 * *ReservedEmplace row, for comparison). */
static inline __attribute__((always_inline)) int fill_vec(size_t len, int reserve, int emplace)
{
	struct pool_vec v;
	int err = 0;
	pool_vec_init(&v, sizeof(struct pool_testjob));
	if (reserve) {
		err = pool_vec_reserve(&v, FILL_N);
		if (err)
			goto out;
	}
	if (reserve && !emplace) {
		struct pool_testjob *j = pool_vec_extend(&v, FILL_N);
		if (!j) {
			err = POOL_ENOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < FILL_N; k++) {
			err = pool_testjob_init_in(&j[k], &v, k, fill_script, len, 0);
			if (err) {
				/* Job k is valid (empty); the slots after it hold nothing. */
				pool_vec_truncate(&v, k + 1, NULL, NULL);
				goto out;
			}
		}
		goto out;
	}
	for (uint32_t k = 0; k < FILL_N; k++) {
		struct pool_testjob *j = pool_vec_emplace(&v);
		if (!j) {
			err = POOL_ENOMEM;
			goto out;
		}
		/* On failure the job is still valid (empty), so releasing it is
		 * fine. A script past the inline bytes goes to the vec's arena. */
		err = pool_testjob_init_in(j, &v, k, fill_script, len, 0);
		if (err)
			goto out;
	}
out:
	pool_vec_release(&v, pool_testjob_release, NULL);
	return err;
}

/* The baseline: a vector whose elements cannot be moved by memcpy. */
struct copy_vec {
	struct pool_testjob *data;
	size_t len;
	size_t cap;
};

/* Grow like pool_vec (double, at least 8), but by allocating a new array
 * and deep-copying each element, script included, then destroying the old
 * elements: what growth costs without move-friendly elements. */
static int copy_vec_grow(struct copy_vec *v)
{
	size_t cap = v->cap ? 2 * v->cap : 8;
	struct pool_testjob *d = xreallocarray(NULL, cap, sizeof(*d));
	if (!d)
		return POOL_ENOMEM;
	for (size_t i = 0; i < v->len; i++) {
		d[i].id = v->data[i].id;
		d[i].fail_code = v->data[i].fail_code;
		pool_sbuf_init(&d[i].script);
		int err = pool_sbuf_copy(&d[i].script, &v->data[i].script);
		if (err) {
			pool_testjob_release(d, i + 1, NULL);
			xfree(d);
			return err;
		}
	}
	pool_testjob_release(v->data, v->len, NULL);
	xfree(v->data);
	v->data = d;
	v->cap = cap;
	return 0;
}

static inline __attribute__((always_inline)) int fill_copy_vec(size_t len)
{
	struct copy_vec v = {NULL, 0, 0};
	int err = 0;
	for (uint32_t k = 0; k < FILL_N; k++) {
		if (v.len == v.cap) {
			err = copy_vec_grow(&v);
			if (err)
				goto out;
		}
		err = pool_testjob_init(&v.data[v.len++], k, fill_script, len, 0);
		if (err)
			goto out;
	}
out:
	pool_testjob_release(v.data, v.len, NULL);
	xfree(v.data);
	return err;
}

BENCH(JobVecFillDirect)
{
	for (size_t i = 0; i < n; i++)
		if (fill_vec(FILL_DIRECT, 0, 1))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillIndirect)
{
	for (size_t i = 0; i < n; i++)
		if (fill_vec(FILL_INDIRECT, 0, 1))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillDirectReserved)
{
	for (size_t i = 0; i < n; i++)
		if (fill_vec(FILL_DIRECT, 1, 0))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillIndirectReserved)
{
	for (size_t i = 0; i < n; i++)
		if (fill_vec(FILL_INDIRECT, 1, 0))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillDirectReservedEmplace)
{
	for (size_t i = 0; i < n; i++)
		if (fill_vec(FILL_DIRECT, 1, 1))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillDirectDeepCopy)
{
	for (size_t i = 0; i < n; i++)
		if (fill_copy_vec(FILL_DIRECT))
			bench_fail(ctx, "fill failed");
}

BENCH(JobVecFillIndirectDeepCopy)
{
	for (size_t i = 0; i < n; i++)
		if (fill_copy_vec(FILL_INDIRECT))
			bench_fail(ctx, "fill failed");
}

/* ---------------------------------------------------------------------- */
/* Check queue: overhead per job                                           */

#define SPEED_BATCHES    101
#define SPEED_BATCH_SIZE 30
#define SPEED_ROUND      (SPEED_BATCHES * SPEED_BATCH_SIZE)
#define SPEED_MAX_SCRIPT (2 * POOL_SBUF_INLINE) /* lengths in [0, 56) */

static struct pool_queue *new_queue(size_t job_size, pool_run_fn run, pool_release_fn release)
{
	struct pool_queue *q;
	struct pool_queue_config cfg = {
	    .job_size = job_size,
	    .run = run,
	    .release = release,
	    .par = POOL_PAR_AUTO,
	    .batch = POOL_BATCH_DEFAULT,
	};
	int err = pool_queue_new(&q, &cfg);
	if (err) {
		fprintf(stderr, "bench: pool_queue_new: %s\n", pool_strerror(err));
		exit(2);
	}
	return q;
}

/* "jobs per thread a/b/..., idle per thread ..." from two stats snapshots. */
static void note_split(struct bench_ctx *ctx, const char *prefix, const struct pool_queue_stats *a,
                       const struct pool_queue_stats *b)
{
	char text[400];
	size_t off =
	    (size_t)snprintf(text, sizeof(text), "%sthreads=%u jobs/thread", prefix, b->threads);
	uint64_t jobs = b->jobs_run - a->jobs_run;
	for (unsigned i = 0; i < b->threads && off < sizeof(text); i++) {
		uint64_t t = b->thread[i].jobs_run - a->thread[i].jobs_run;
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%.1f%%", i ? "/" : " ",
		                        jobs ? 100.0 * (double)t / (double)jobs : 0.0);
	}
	bench_note(ctx, "%s", text);
}

BENCH(CheckQueueSpeedJob)
{
	static struct pool_testjob proto[SPEED_ROUND];
	uint64_t seed = 0x5eed;
	struct pool_queue *q =
	    new_queue(sizeof(struct pool_testjob), pool_testjob_run, pool_testjob_release);
	struct pool_vec stage;
	struct pool_queue_stats st0, st1;
	pool_vec_init(&stage, sizeof(struct pool_testjob));
	if (pool_vec_reserve(&stage, SPEED_BATCH_SIZE)) {
		bench_fail(ctx, "out of memory");
		return;
	}
	uint8_t bytes[SPEED_MAX_SCRIPT];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 3 + 1);
	for (uint32_t i = 0; i < SPEED_ROUND; i++)
		if (pool_testjob_init(&proto[i], i, bytes, rnd(&seed) % SPEED_MAX_SCRIPT, 0))
			bench_fail(ctx, "out of memory");
	pool_queue_stats(q, &st0);
	bench_reset(ctx);

	/* n counts jobs: full rounds of 101 x 30, the last one cut short. */
	for (size_t done = 0; done < n;) {
		size_t round = n - done < SPEED_ROUND ? n - done : SPEED_ROUND;
		pool_queue_begin(q, NULL);
		for (size_t b = 0; b < round; b += SPEED_BATCH_SIZE) {
			size_t k = round - b < SPEED_BATCH_SIZE ? round - b : SPEED_BATCH_SIZE;
			/* Copy the prepared batch, as Core's `for (auto vChecks :
			 * vBatches)` does, then hand it over. */
			for (size_t j = 0; j < k; j++) {
				struct pool_testjob *job = pool_vec_emplace(&stage);
				const struct pool_testjob *src = &proto[b + j];
				if (!job) {
					bench_fail(ctx, "out of memory");
					break;
				}
				job->id = src->id;
				job->fail_code = 0;
				pool_sbuf_init(&job->script);
				if (pool_sbuf_copy(&job->script, &src->script))
					bench_fail(ctx, "out of memory");
			}
			if (pool_queue_take_vec(q, &stage))
				bench_fail(ctx, "out of memory");
		}
		if (pool_queue_complete(q))
			bench_fail(ctx, "a job failed");
		done += round;
	}

	bench_stop(ctx);
	pool_queue_stats(q, &st1);
	note_split(ctx, "", &st0, &st1);
	pool_queue_free(q);
	pool_vec_release(&stage, pool_testjob_release, NULL);
	pool_testjob_release(proto, SPEED_ROUND, NULL);
}

/* ---------------------------------------------------------------------- */
/* Check queue: real signature checks                                      */

#define VERIFY_JOBS   4000
#define VERIFY_ADD    100 /* jobs per add, like a block's transactions */
#define VERIFY_ROUNDS 10

struct verify_job {
	const secp256k1_pubkey *pubkey;
	const secp256k1_ecdsa_signature *sig;
	const uint8_t *msg32;
};

static struct {
	int ready;
	secp256k1_context *ctx; /* one shared context: verification only reads it */
	secp256k1_pubkey pubkey[VERIFY_JOBS];
	secp256k1_ecdsa_signature sig[VERIFY_JOBS];
	uint8_t msg[VERIFY_JOBS][32];
} vd;

static int verify_run(void *job, void *arg)
{
	const struct verify_job *j = job;
	return secp256k1_ecdsa_verify(arg, j->sig, j->msg32, j->pubkey) == 1 ? 0 : 1;
}

static int verify_setup(void)
{
	if (vd.ready)
		return 0;
	uint64_t seed = 0xec5a;
	vd.ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!vd.ctx)
		return -1;
	for (size_t i = 0; i < VERIFY_JOBS; i++) {
		uint8_t key[32];
		do {
			for (size_t b = 0; b < 32; b += 8) {
				uint64_t r = rnd(&seed);
				memcpy(key + b, &r, 8);
			}
		} while (!secp256k1_ec_seckey_verify(vd.ctx, key));
		for (size_t b = 0; b < 32; b += 8) {
			uint64_t r = rnd(&seed);
			memcpy(vd.msg[i] + b, &r, 8);
		}
		if (!secp256k1_ec_pubkey_create(vd.ctx, &vd.pubkey[i], key) ||
		    !secp256k1_ecdsa_sign(vd.ctx, &vd.sig[i], vd.msg[i], key, NULL, NULL))
			return -1;
	}
	vd.ready = 1;
	return 0;
}

/* Time one pass over the jobs on this thread alone; returns min(time, best). */
static uint64_t single_pass(struct bench_ctx *ctx, struct verify_job *jobs, uint64_t best)
{
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < VERIFY_JOBS; i++)
		if (verify_run(&jobs[i], vd.ctx))
			bench_fail(ctx, "signature %zu does not verify", i);
	uint64_t t = bench_now_ns() - t0;
	return t < best ? t : best;
}

BENCH_N(CheckQueueVerify, VERIFY_ROUNDS)
{
	if (verify_setup()) {
		bench_fail(ctx, "secp256k1 setup failed");
		return;
	}
	struct pool_queue *q = new_queue(sizeof(struct verify_job), verify_run, NULL);
	unsigned threads = pool_queue_workers(q) + 1;
	static struct verify_job jobs[VERIFY_JOBS];
	for (size_t i = 0; i < VERIFY_JOBS; i++)
		jobs[i] = (struct verify_job){&vd.pubkey[i], &vd.sig[i], vd.msg[i]};

	/* The physical limit: the same jobs, one thread, no queue. */
	uint64_t single = single_pass(ctx, jobs, UINT64_MAX);
	single = single_pass(ctx, jobs, single);
	/* One untimed round first: starts the workers and fills the queue's
	 * buffers, so timed rounds allocate nothing. */
	pool_queue_begin(q, vd.ctx);
	if (pool_queue_add(q, jobs, VERIFY_JOBS) || pool_queue_complete(q))
		bench_fail(ctx, "warm-up round failed");
	struct pool_queue_stats st0, st1;
	pool_queue_stats(q, &st0);
	uint64_t best = UINT64_MAX;
	bench_reset(ctx);
	uint64_t t_start = bench_now_ns();

	for (size_t r = 0; r < n; r++) {
		uint64_t t0 = bench_now_ns();
		pool_queue_begin(q, vd.ctx);
		for (size_t i = 0; i < VERIFY_JOBS; i += VERIFY_ADD)
			if (pool_queue_add(q, &jobs[i], VERIFY_ADD))
				bench_fail(ctx, "out of memory");
		if (pool_queue_complete(q))
			bench_fail(ctx, "a signature did not verify");
		uint64_t t = bench_now_ns() - t0;
		if (t < best)
			best = t;
	}

	bench_stop(ctx);
	uint64_t total = bench_now_ns() - t_start;
	pool_queue_stats(q, &st1);
	/* Once more after, so the limit is the best of three, taken before
	 * and after: a quiet moment flatters the limit, not the queue. */
	single = single_pass(ctx, jobs, single);
	double limit = (double)single / threads;
	double mean = (double)total / (double)n;
	char prefix[320];
	snprintf(prefix, sizeof(prefix),
	         "single-thread %.1f us/verify; limit (%u threads) %.2f ms/round; "
	         "mean round %.2f ms = efficiency %.1f%% (best round %.1f%%); ",
	         (double)single / VERIFY_JOBS / 1e3, threads, limit / 1e6, mean / 1e6,
	         100.0 * limit / mean, 100.0 * limit / (double)best);
	note_split(ctx, prefix, &st0, &st1);
	pool_queue_free(q);
}
