/*
 * tests/unit/testutil_pool.c: struct pool_testjob, the job tests and
 * benchmarks run (it was pool/testjob.c: test code no longer in the library).
 *
 * It carries a script in a pool_sbuf like the real script-check job will
 * (chain/), so vector and queue benchmarks pay the same moves, allocations
 * and frees. Without a log it does no work at all: a queue benchmark with it
 * measures the queue's own cost per job, as Bitcoin Core's
 * CCheckQueueSpeedPrevectorJob does.
 */
#include "tests/unit/testutil_pool.h"

/* FNV-1a, 64 bit: a cheap digest that depends on every byte. */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

uint64_t pool_testjob_digest(const struct pool_testjob *job)
{
	uint8_t id[4] = {(uint8_t)job->id, (uint8_t)(job->id >> 8), (uint8_t)(job->id >> 16),
	                 (uint8_t)(job->id >> 24)};
	uint64_t h = fnv1a(FNV_OFFSET, id, sizeof(id));
	h = fnv1a(h, pool_sbuf_data(&job->script), pool_sbuf_len(&job->script));
	/* Final avalanche (splitmix64's) so that sums of digests do not cancel easily. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

int pool_testjob_set_script(struct pool_testjob *job, const uint8_t *script, size_t len)
{
	return pool_sbuf_assign(&job->script, script, len);
}

int pool_testjob_run(void *job, void *arg)
{
	const struct pool_testjob *j = job;
	struct pool_testlog *log = arg;
	if (log) {
		if (log->runs && j->id < log->n_ids)
			atomic_fetch_add_explicit(&log->runs[j->id], 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&log->checksum, pool_testjob_digest(j),
		                          memory_order_relaxed);
		unsigned spin = log->spin;
		for (unsigned i = 0; i < spin; i++)
			__asm__ volatile("");
	}
	return j->fail_code;
}

void pool_testjob_release(void *jobs, size_t n, void *arg)
{
	struct pool_testjob *j = jobs;
	struct pool_testlog *log = arg;
	if (log && log->releases) {
		for (size_t i = 0; i < n; i++)
			if (j[i].id < log->n_ids)
				atomic_fetch_add_explicit(&log->releases[j[i].id], 1,
				                          memory_order_relaxed);
	}
	/* The jobs are being dropped: free their scripts without resetting
	 * them. Eight headers are tested at once, so a run of inline scripts
	 * (the common case) costs a load and an OR per job and the loop's own
	 * few instructions per eight (with four, they were a third of the
	 * JobVecFillDirectReserved row's release). Scripts borrowed from an
	 * arena own nothing (pool_sbuf_owns). */
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const struct pool_testjob *g = j + i;
		uint32_t any = g[0].script.u.in.hdr | g[1].script.u.in.hdr | g[2].script.u.in.hdr |
		               g[3].script.u.in.hdr | g[4].script.u.in.hdr | g[5].script.u.in.hdr |
		               g[6].script.u.in.hdr | g[7].script.u.in.hdr;
		if (__builtin_expect(!(any & POOL_SBUF_HEAP), 1))
			continue;
		for (size_t k = i; k < i + 8; k++)
			if (pool_sbuf_owns(&j[k].script))
				xfree(j[k].script.u.heap.ptr);
	}
	for (; i < n; i++)
		if (pool_sbuf_owns(&j[i].script))
			xfree(j[i].script.u.heap.ptr);
}
