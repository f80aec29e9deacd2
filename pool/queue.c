/*
 * pool/queue.c: struct pool_queue, Bitcoin Core's CCheckQueue in C.
 *
 * A round: the controller opens it (begin), moves jobs in (add, take_vec)
 * while idle workers start on them, then calls complete and works too until
 * every job has run or been skipped; it then releases the round's jobs and
 * returns the verdict.
 *
 * Where jobs live. A round's jobs sit in segments: the storage of a vec
 * given to take_vec becomes a segment as it is (no copy), and add copies
 * into the free tail of the last segment or into a recycled buffer. A
 * segment never moves during its round, so a thread runs the jobs it took
 * in place. At the end of the round the buffers are kept as spares (up to
 * SPARE_MAX_BYTES) and handed back to vecs by take_vec, so a steady stream
 * of rounds allocates nothing.
 *
 * Arena chunks. take_vec also takes a reference on each chunk of the vec's
 * arena (pool/arena.c): the taken jobs' scripts may point into them. The
 * round holds them (round_chunks) until complete has released its jobs,
 * so a worker reads a job's script safely whatever the vec does meanwhile;
 * a chunk whose last holder was the round becomes a spare chunk, handed to
 * a vec without one at its next take_vec, so steady rounds allocate none.
 *
 * Who releases. The controller releases the round's jobs at the end of
 * complete, after the last one ran. That is the thread that built them, so
 * the allocator stays thread-local: a worker freeing what the controller
 * allocated sends the memory and the allocator's free-list heads bouncing
 * between cores, which costs more than a small job itself (measured here:
 * about three times the whole per-job overhead when the two vCPUs are far
 * apart).
 *
 * Taking. A thread takes max(1, min(batch, queued / (active + idle + 1)))
 * jobs, Core's rule: big batches while there is plenty, smaller ones
 * towards the end so all threads finish together; a batch stops at the end
 * of its segment. It reports the batch (jobs done, first failure, stats) in
 * the same critical section that takes the next one, so a batch costs one
 * lock round trip. Once a job fails, the rest of the round is skipped.
 *
 * Locks, in this order (never take control while holding mu):
 *   control  held by the controller from pool_queue_begin to the end of
 *            pool_queue_complete (Core's m_control_mutex): one round at a
 *            time. Guards in_round and the spares.
 *   mu       guards every field marked GUARDED_BY(mu) (Core's m_mutex).
 *            Held for bookkeeping and for copying jobs in; never while a
 *            job runs or is released, never while signalling a worker.
 * The controller is the only writer of segs and its segments' contents; it
 * writes them with mu held, and reads them without mu once the round's
 * jobs are all done (no other thread looks at them then).
 * Condition variables, all used with mu:
 *   slot->cv   one per worker. A worker sleeps on its own, listed on the
 *              idle stack; a waker pops it and clears its `asleep` flag
 *              under mu, then signals it after unlocking. So a sleeper is
 *              woken at most once per sleep, a waker knows how many it
 *              woke, and the woken thread does not wake into a held lock.
 *   done_cv    the controller waits on it for the other threads' last jobs.
 * Atomic hints, written only with mu held, read without it: `failed`
 * between any two jobs (so a batch stops early once a job failed; the
 * verdict itself is GUARDED_BY(mu)); `queued_hint` and `todo_hint` by a
 * thread that ran out of work and polls for a while before it sleeps, so
 * that while jobs keep coming nobody pays for a sleep and a wake-up.
 *
 * Workers touch no I/O and block every signal.
 */
#include "pool/internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define GUARDED_BY(m) /* documentation: only touched with m held */

/* A new segment holds at least this many jobs, so small adds share one. */
#define SEG_MIN_JOBS 256u
/* Spare segment buffers kept between rounds, in bytes. */
#define SPARE_MAX_BYTES (16u << 20)
/* Spare arena chunks kept between rounds (a block's worth of P2TR scripts
 * is three). */
#define SPARE_MAX_CHUNKS 8u

/* A run of jobs in one buffer (xmalloc'd, cap jobs, the first len in use). */
struct seg {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* One thread of the queue: slot 0 is the controller, 1..workers the workers. */
struct pool_slot {
	struct pool_queue *q;        /* immutable */
	unsigned index;              /* immutable */
	pthread_t thread;            /* workers: set by pool_queue_new */
	pthread_cond_t cv;           /* workers: signalled to wake this one */
	int asleep;                  /* GUARDED_BY(mu): on the idle stack */
	struct pool_thread_stats st; /* GUARDED_BY(mu) */
};

struct pool_queue {
	/* Immutable after pool_queue_new. */
	size_t job_size;
	pool_run_fn run;
	pool_release_fn release;
	size_t batch;
	uint64_t spin_ns;
	unsigned workers;
	struct pool_slot *slots; /* [0] controller, [1..workers] workers */
	unsigned *idle;          /* workers entries */

	/* What pool_queue_new managed to set up, for teardown. */
	unsigned n_started; /* worker threads running */
	unsigned n_cv;      /* slots 1..n_cv have an initialised cv */
	int sync_ok;        /* control, mu and done_cv initialised */

	pthread_mutex_t control;
	int in_round GUARDED_BY(control);
	struct pool_vec spares GUARDED_BY(control); /* of struct seg, len unused */
	size_t spare_bytes GUARDED_BY(control);
	/* Chunks the round's jobs may point into (one reference each), and
	 * unused ones kept for the vecs: both of struct pool_chunk *. */
	struct pool_vec round_chunks GUARDED_BY(control);
	struct pool_vec spare_chunks GUARDED_BY(control);

	/* The shared state every take touches, kept together. */
	pthread_mutex_t mu;
	atomic_size_t queued_hint;           /* == queued */
	size_t queued GUARDED_BY(mu);        /* jobs added and not yet taken */
	size_t todo GUARDED_BY(mu);          /* jobs added and not yet done */
	size_t cur_seg GUARDED_BY(mu);       /* next job to take: segment... */
	size_t cur_off GUARDED_BY(mu);       /* ...and index in it */
	struct pool_vec segs GUARDED_BY(mu); /* of struct seg: the round's jobs */
	void *arg GUARDED_BY(mu);            /* the round's argument */
	unsigned active GUARDED_BY(mu);      /* threads in a work loop (Core's nTotal) */
	unsigned n_idle GUARDED_BY(mu);      /* workers asleep and not yet woken */
	int verdict GUARDED_BY(mu);          /* first failure code of the round */
	int controller_waiting GUARDED_BY(mu);
	int stop GUARDED_BY(mu);
	pthread_cond_t done_cv;
	uint64_t rounds GUARDED_BY(mu);
	uint64_t rounds_failed GUARDED_BY(mu);
	uint64_t jobs_added GUARDED_BY(mu);

	/* Read between every two jobs by every thread, written at most twice a
	 * round: kept on a cache line of its own, away from mu's traffic. */
	char pad0[64];
	atomic_int failed;
	char pad1[64];
	/* Polled by the controller for the last jobs; written with mu held. */
	atomic_size_t todo_hint; /* == todo */
	char pad2[64];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lock(pthread_mutex_t *m)
{
	require(pthread_mutex_lock(m) == 0);
}

static void unlock(pthread_mutex_t *m)
{
	require(pthread_mutex_unlock(m) == 0);
}

static struct seg *seg_at(const struct pool_queue *q, size_t i)
{
	return (struct seg *)pool_vec_at(&q->segs, i);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/*
 * Poll *word without mu, for up to spin_ns, until it is non-zero
 * (want_nonzero) or zero. Drops mu meanwhile. The time counts as the
 * slot's idle time; *t_active restarts. REQUIRES(mu)
 */
static void spin_on(struct pool_queue *q, struct pool_slot *s, atomic_size_t *word,
                    int want_nonzero, uint64_t *t_active)
{
	uint64_t t0 = now_ns(), t;
	unlock(&q->mu);
	for (unsigned i = 1;; i++) {
		size_t v = atomic_load_explicit(word, memory_order_relaxed);
		if ((v != 0) == want_nonzero)
			break;
		/* A clock read costs tens of pauses: look at it now and then. */
		if (i % 64 == 0 && now_ns() - t0 >= q->spin_ns)
			break;
		cpu_relax();
	}
	t = now_ns();
	lock(&q->mu);
	s->st.busy_ns += t0 - *t_active;
	s->st.idle_ns += t - t0;
	*t_active = t;
}

/*
 * Take the next batch by Core's rule, cut at the end of its segment: the
 * jobs are at *jobs, in place; returns how many. REQUIRES(mu), queued > 0
 */
static size_t take_jobs(struct pool_queue *q, uint8_t **jobs)
{
	size_t n = q->queued / ((size_t)q->active + q->n_idle + 1);
	if (n > q->batch)
		n = q->batch;
	if (n == 0)
		n = 1;
	struct seg *sg = seg_at(q, q->cur_seg);
	while (q->cur_off == sg->len) {
		sg = seg_at(q, ++q->cur_seg);
		q->cur_off = 0;
	}
	if (n > sg->len - q->cur_off)
		n = sg->len - q->cur_off;
	*jobs = sg->data + q->cur_off * q->job_size;
	q->cur_off += n;
	q->queued -= n;
	atomic_store_explicit(&q->queued_hint, q->queued, memory_order_relaxed);
	return n;
}

/*
 * Run (or skip) the n jobs at `jobs`; returns how many ran. A failure code
 * goes to *code. Called without mu.
 */
static size_t run_jobs(struct pool_queue *q, uint8_t *jobs, size_t n, int do_work, void *arg,
                       int *code)
{
	size_t i = 0;
	if (!do_work)
		return 0;
	for (; i < n; i++) {
		if (atomic_load_explicit(&q->failed, memory_order_relaxed))
			break;
		int r = q->run(jobs + i * q->job_size, arg);
		if (__builtin_expect(r != 0, 0)) {
			*code = r;
			atomic_store_explicit(&q->failed, 1, memory_order_relaxed);
			return i + 1;
		}
	}
	return i;
}

/* Account for a finished batch of n jobs, `ran` of which ran. REQUIRES(mu) */
static void report(struct pool_queue *q, struct pool_slot *s, size_t n, size_t ran, int code)
{
	q->todo -= n;
	atomic_store_explicit(&q->todo_hint, q->todo, memory_order_relaxed);
	if (code && !q->verdict)
		q->verdict = code;
	s->st.jobs_run += ran;
	s->st.jobs_skipped += n - ran;
	s->st.batches++;
	if (q->todo == 0 && q->controller_waiting)
		pthread_cond_signal(&q->done_cv);
}

static void *worker_main(void *p)
{
	struct pool_slot *s = p;
	struct pool_queue *q = s->q;
	size_t n = 0, ran = 0;
	int code = 0, polled = 0;
	uint64_t t_active = now_ns();

	lock(&q->mu);
	q->active++;
	for (;;) {
		if (n) {
			report(q, s, n, ran, code);
			n = 0;
			code = 0;
		}
		if (q->stop)
			break;
		if (q->queued == 0) {
			if (!polled && q->spin_ns) {
				/* Poll a while first; then look again, and sleep
				 * if there is still nothing. */
				polled = 1;
				spin_on(q, s, &q->queued_hint, 1, &t_active);
				continue;
			}
			polled = 0;
			uint64_t t_sleep = now_ns();
			s->st.busy_ns += t_sleep - t_active;
			s->asleep = 1;
			q->idle[q->n_idle++] = s->index;
			while (s->asleep && !q->stop)
				pthread_cond_wait(&s->cv, &q->mu);
			t_active = now_ns();
			s->st.idle_ns += t_active - t_sleep;
			/* Others may have taken everything meanwhile: look again. */
			continue;
		}
		polled = 0;
		int do_work = q->verdict == 0;
		void *arg = q->arg;
		uint8_t *jobs;
		n = take_jobs(q, &jobs);
		unlock(&q->mu);
		ran = run_jobs(q, jobs, n, do_work, arg, &code);
		lock(&q->mu);
	}
	q->active--;
	s->st.busy_ns += now_ns() - t_active;
	unlock(&q->mu);
	return NULL;
}

/* Pick up to n sleeping workers to wake; their indices go to woken. REQUIRES(mu) */
static unsigned claim_sleepers(struct pool_queue *q, size_t n, unsigned *woken)
{
	unsigned k = 0;
	while (q->n_idle && k < n) {
		unsigned i = q->idle[--q->n_idle];
		q->slots[i].asleep = 0;
		woken[k++] = i;
	}
	return k;
}

/* Signal the workers claim_sleepers picked. Called without mu. */
static void wake(struct pool_queue *q, const unsigned *woken, unsigned k)
{
	for (unsigned i = 0; i < k; i++)
		pthread_cond_signal(&q->slots[woken[i]].cv);
}

/* n jobs were appended: count them, tell pollers, pick sleepers to wake. REQUIRES(mu) */
static unsigned jobs_arrived(struct pool_queue *q, size_t n, unsigned *woken)
{
	q->queued += n;
	q->todo += n;
	q->jobs_added += n;
	atomic_store_explicit(&q->queued_hint, q->queued, memory_order_relaxed);
	atomic_store_explicit(&q->todo_hint, q->todo, memory_order_relaxed);
	return claim_sleepers(q, n, woken);
}

/* A buffer for a new segment of at least n jobs: a spare if there is one
 * (grown if too small), else a new one. REQUIRES(control) */
static int seg_buffer(struct pool_queue *q, size_t n, struct seg *out)
{
	size_t cap = n < SEG_MIN_JOBS ? SEG_MIN_JOBS : n, bytes;
	if (base_mul_size(cap, q->job_size, &bytes))
		return POOL_EOVERFLOW;
	if (q->spares.len) {
		struct seg *sp = pool_vec_at(&q->spares, q->spares.len - 1);
		if (sp->cap < n) {
			uint8_t *p = xrealloc(sp->data, bytes);
			if (!p)
				return POOL_ENOMEM;
			q->spare_bytes += (cap - sp->cap) * q->job_size;
			sp->data = p;
			sp->cap = cap;
		}
		*out = *sp;
		q->spares.len--;
		q->spare_bytes -= out->cap * q->job_size;
		return 0;
	}
	out->data = xmalloc(bytes);
	if (!out->data)
		return POOL_ENOMEM;
	out->cap = cap;
	return 0;
}

int pool_queue_add(struct pool_queue *q, void *jobs, size_t n)
{
	unsigned woken[POOL_MAX_THREADS], k = 0;
	size_t bytes;
	int err = 0;
	require(q->in_round);
	if (n == 0)
		return 0;
	if (base_mul_size(n, q->job_size, &bytes))
		return POOL_EOVERFLOW;
	lock(&q->mu);
	struct seg *last = q->segs.len ? seg_at(q, q->segs.len - 1) : NULL;
	if (last && last->cap - last->len >= n) {
		/* Behind the jobs already there; takers only read those. */
		memcpy(last->data + last->len * q->job_size, jobs, bytes);
		last->len += n;
	} else {
		struct seg sg;
		err = pool_vec_grow(&q->segs, 1);
		if (err)
			goto out;
		err = seg_buffer(q, n, &sg);
		if (err)
			goto out;
		memcpy(sg.data, jobs, bytes);
		sg.len = n;
		*(struct seg *)pool_vec_emplace(&q->segs) = sg; /* room made above */
	}
	k = jobs_arrived(q, n, woken);
out:
	unlock(&q->mu);
	wake(q, woken, k);
	return err;
}

/* The round takes a reference on each chunk of v's arena not yet held
 * (the newest is often still held from the vec's previous take), and the
 * vec keeps only its newest. Room was made in round_chunks. REQUIRES(control) */
static void hold_chunks(struct pool_queue *q, struct pool_vec *v)
{
	struct pool_chunk **held = (struct pool_chunk **)q->round_chunks.data;
	size_t n_held = q->round_chunks.len;
	for (struct pool_chunk *c = v->chunks; c; c = c->next) {
		if (n_held && held[n_held - 1] == c)
			continue;
		pool_chunk_ref(c);
		*(struct pool_chunk **)pool_vec_emplace(&q->round_chunks) = c;
	}
	pool_vec_arena_hand_over(v);
	if (!v->spare && q->spare_chunks.len) {
		size_t last = q->spare_chunks.len - 1;
		v->spare = *(struct pool_chunk **)pool_vec_at(&q->spare_chunks, last);
		v->spare->next = NULL;
		q->spare_chunks.len = last;
	}
}

/* Drop the round's references on its chunks; keep the freed ones as spares
 * up to SPARE_MAX_CHUNKS. The round's jobs are released. REQUIRES(control) */
static void drop_chunks(struct pool_queue *q)
{
	for (size_t i = 0; i < q->round_chunks.len; i++) {
		struct pool_chunk *c = *(struct pool_chunk **)pool_vec_at(&q->round_chunks, i);
		if (!pool_chunk_unref(c))
			continue;
		if (c->size == POOL_CHUNK_BYTES && q->spare_chunks.len < SPARE_MAX_CHUNKS &&
		    pool_vec_push(&q->spare_chunks, &c) == 0)
			continue;
		xfree(c);
	}
	q->round_chunks.len = 0;
}

int pool_queue_take_vec(struct pool_queue *q, struct pool_vec *v)
{
	unsigned woken[POOL_MAX_THREADS], k = 0;
	size_t n = v->len;
	int err = 0;
	require(q->in_round);
	require(v->elem_size == q->job_size);
	if (n == 0)
		return 0;
	/* Room to hold every chunk first, so a failure changes nothing. */
	err = pool_vec_grow(&q->round_chunks, pool_vec_arena_chunks(v));
	if (err)
		return err;
	lock(&q->mu);
	err = pool_vec_grow(&q->segs, 1);
	if (err)
		goto out;
	hold_chunks(q, v);
	*(struct seg *)pool_vec_emplace(&q->segs) = (struct seg){v->data, n, v->cap};
	/* The vec gets a spare buffer in exchange, or none. */
	v->data = NULL;
	v->cap = 0;
	v->len = 0;
	if (q->spares.len) {
		struct seg *sp = pool_vec_at(&q->spares, q->spares.len - 1);
		q->spares.len--;
		q->spare_bytes -= sp->cap * q->job_size;
		v->data = sp->data;
		v->cap = sp->cap;
	}
	k = jobs_arrived(q, n, woken);
out:
	unlock(&q->mu);
	wake(q, woken, k);
	return err;
}

void pool_queue_begin(struct pool_queue *q, void *arg)
{
	lock(&q->control);
	require(!q->in_round);
	q->in_round = 1;
	lock(&q->mu);
	q->arg = arg;
	unlock(&q->mu);
}

/* Release the jobs of segs[0..n) and keep their buffers as spares (or free
 * them beyond SPARE_MAX_BYTES). No other thread may look at them.
 * REQUIRES(control) */
static void drop_segments(struct pool_queue *q, struct seg *segs, size_t n, void *arg)
{
	for (size_t i = 0; i < n; i++) {
		struct seg *sg = &segs[i];
		if (q->release)
			q->release(sg->data, sg->len, arg);
		size_t bytes = sg->cap * q->job_size;
		if (q->spare_bytes + bytes <= SPARE_MAX_BYTES &&
		    pool_vec_push(&q->spares, &(struct seg){sg->data, 0, sg->cap}) == 0) {
			q->spare_bytes += bytes;
			continue;
		}
		xfree(sg->data);
	}
}

int pool_queue_complete(struct pool_queue *q)
{
	struct pool_slot *s = &q->slots[0];
	size_t n = 0, ran = 0;
	int code = 0;
	require(q->in_round);
	uint64_t t_active = now_ns();

	lock(&q->mu);
	q->active++;
	for (;;) {
		if (n) {
			report(q, s, n, ran, code);
			n = 0;
			code = 0;
		}
		if (q->queued == 0) {
			/* Nothing left to take, and only the controller adds:
			 * wait for the jobs other threads are still running,
			 * polling first, as they should finish together. */
			if (q->todo && q->spin_ns)
				spin_on(q, s, &q->todo_hint, 0, &t_active);
			if (q->todo) {
				uint64_t t_wait = now_ns();
				s->st.busy_ns += t_wait - t_active;
				q->controller_waiting = 1;
				while (q->todo)
					pthread_cond_wait(&q->done_cv, &q->mu);
				q->controller_waiting = 0;
				t_active = now_ns();
				s->st.idle_ns += t_active - t_wait;
			}
			break;
		}
		int do_work = q->verdict == 0;
		void *arg = q->arg;
		uint8_t *jobs;
		n = take_jobs(q, &jobs);
		unlock(&q->mu);
		ran = run_jobs(q, jobs, n, do_work, arg, &code);
		lock(&q->mu);
	}
	/* Every job is done: no other thread looks at the segments again. */
	int verdict = q->verdict;
	void *arg = q->arg;
	struct seg *segs = (struct seg *)q->segs.data;
	size_t n_segs = q->segs.len;
	q->verdict = 0;
	atomic_store_explicit(&q->failed, 0, memory_order_relaxed);
	q->segs.len = 0;
	q->cur_seg = 0;
	q->cur_off = 0;
	q->rounds++;
	if (verdict)
		q->rounds_failed++;
	q->active--;
	unlock(&q->mu);

	drop_segments(q, segs, n_segs, arg);
	drop_chunks(q);

	lock(&q->mu);
	s->st.busy_ns += now_ns() - t_active;
	unlock(&q->mu);
	q->in_round = 0;
	unlock(&q->control);
	return verdict;
}

void pool_queue_stats(struct pool_queue *q, struct pool_queue_stats *out)
{
	memset(out, 0, sizeof(*out));
	lock(&q->mu);
	out->rounds = q->rounds;
	out->rounds_failed = q->rounds_failed;
	out->jobs_added = q->jobs_added;
	out->threads = q->workers + 1;
	for (unsigned i = 0; i <= q->workers; i++) {
		out->thread[i] = q->slots[i].st;
		out->jobs_run += q->slots[i].st.jobs_run;
		out->jobs_skipped += q->slots[i].st.jobs_skipped;
	}
	unlock(&q->mu);
}

unsigned pool_queue_workers(const struct pool_queue *q)
{
	return q->workers;
}

/* Stop and join what pool_queue_new started, release the jobs of an open
 * round, free all. Also the error path of a half-built queue. */
static void queue_destroy(struct pool_queue *q)
{
	if (q->n_started) {
		lock(&q->mu);
		q->stop = 1;
		for (unsigned i = 0; i < q->n_idle; i++)
			q->slots[q->idle[i]].asleep = 0;
		q->n_idle = 0;
		unlock(&q->mu);
		for (unsigned i = 1; i <= q->n_started; i++)
			pthread_cond_signal(&q->slots[i].cv);
		for (unsigned i = 1; i <= q->n_started; i++)
			require(pthread_join(q->slots[i].thread, NULL) == 0);
	}
	/* Nothing runs any more: every job of an open round, run or not, is
	 * released here. */
	for (size_t i = 0; i < q->segs.len; i++) {
		struct seg *sg = seg_at(q, i);
		if (q->release)
			q->release(sg->data, sg->len, q->arg);
		xfree(sg->data);
	}
	for (size_t i = 0; i < q->spares.len; i++)
		xfree(((struct seg *)pool_vec_at(&q->spares, i))->data);
	pool_vec_release(&q->segs, NULL, NULL);
	pool_vec_release(&q->spares, NULL, NULL);
	drop_chunks(q);
	for (size_t i = 0; i < q->spare_chunks.len; i++)
		xfree(*(struct pool_chunk **)pool_vec_at(&q->spare_chunks, i));
	pool_vec_release(&q->round_chunks, NULL, NULL);
	pool_vec_release(&q->spare_chunks, NULL, NULL);
	if (q->slots) {
		for (unsigned i = 1; i <= q->n_cv; i++)
			pthread_cond_destroy(&q->slots[i].cv);
	}
	if (q->sync_ok) {
		pthread_cond_destroy(&q->done_cv);
		pthread_mutex_destroy(&q->mu);
		pthread_mutex_destroy(&q->control);
	}
	xfree(q->idle);
	xfree(q->slots);
	xfree(q);
}

void pool_queue_free(struct pool_queue *q)
{
	if (!q)
		return;
	if (q->in_round) {
		/* Freed with a round open: the caller is the controller and
		 * holds control; give it back before destroying it. */
		q->in_round = 0;
		unlock(&q->control);
	}
	queue_destroy(q);
}

/* Workers for cfg->par, or -1 if out of range. */
static long workers_for(int par)
{
	if (par > 0)
		return par <= POOL_MAX_THREADS - 1 ? par : -1;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		cores = 1;
	long w = cores - 1 + par;
	if (w < 0)
		w = 0;
	if (w > POOL_MAX_THREADS - 1)
		w = POOL_MAX_THREADS - 1;
	return w;
}

static int init_sync(struct pool_queue *q)
{
	pthread_mutexattr_t attr;
	if (pthread_mutex_init(&q->control, NULL))
		return POOL_ETHREAD;
	/* mu is held for a few hundred nanoseconds at a time: an adaptive
	 * mutex spins briefly before it sleeps in the kernel, so a contended
	 * lock does not cost a futex sleep and wake-up. */
	if (pthread_mutexattr_init(&attr))
		goto fail_mu;
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	int bad = pthread_mutex_init(&q->mu, &attr);
	pthread_mutexattr_destroy(&attr);
	if (bad)
		goto fail_mu;
	if (pthread_cond_init(&q->done_cv, NULL))
		goto fail_cv;
	q->sync_ok = 1;
	return 0;
fail_cv:
	pthread_mutex_destroy(&q->mu);
fail_mu:
	pthread_mutex_destroy(&q->control);
	return POOL_ETHREAD;
}

/* Start the workers with every signal blocked (they inherit the mask). */
static int start_workers(struct pool_queue *q)
{
	sigset_t all, old;
	int err = 0;
	sigfillset(&all);
	require(pthread_sigmask(SIG_SETMASK, &all, &old) == 0);
	for (unsigned i = 1; i <= q->workers; i++) {
		if (pthread_create(&q->slots[i].thread, NULL, worker_main, &q->slots[i])) {
			err = POOL_ETHREAD;
			break;
		}
		q->n_started = i;
		char name[16];
		snprintf(name, sizeof(name), "pool-%u", i);
		pthread_setname_np(q->slots[i].thread, name);
	}
	require(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
	return err;
}

int pool_queue_new(struct pool_queue **out, const struct pool_queue_config *cfg)
{
	struct pool_queue *q = NULL;
	size_t batch = cfg->batch ? cfg->batch : POOL_BATCH_DEFAULT;
	size_t seg_bytes;
	long workers = workers_for(cfg->par);
	int err;

	*out = NULL;
	if (!cfg->run || cfg->job_size == 0 || workers < 0)
		return POOL_EINVAL;
	if (base_mul_size(SEG_MIN_JOBS, cfg->job_size, &seg_bytes))
		return POOL_EOVERFLOW;
	q = xcalloc(1, sizeof(*q));
	if (!q)
		return POOL_ENOMEM;
	q->job_size = cfg->job_size;
	q->run = cfg->run;
	q->release = cfg->release;
	q->batch = batch;
	q->spin_ns = cfg->spin_us < 0
	                 ? 0
	                 : 1000ull * (uint64_t)(cfg->spin_us ? cfg->spin_us : POOL_SPIN_DEFAULT_US);
	q->workers = (unsigned)workers;
	pool_vec_init(&q->segs, sizeof(struct seg));
	pool_vec_init(&q->spares, sizeof(struct seg));
	pool_vec_init(&q->round_chunks, sizeof(struct pool_chunk *));
	pool_vec_init(&q->spare_chunks, sizeof(struct pool_chunk *));
	atomic_init(&q->failed, 0);
	atomic_init(&q->queued_hint, 0);
	atomic_init(&q->todo_hint, 0);

	err = init_sync(q);
	if (err)
		goto fail;
	err = POOL_ENOMEM;
	q->slots = xcalloc(q->workers + 1, sizeof(*q->slots));
	q->idle = xcalloc(q->workers + 1, sizeof(*q->idle));
	if (!q->slots || !q->idle)
		goto fail;
	for (unsigned i = 0; i <= q->workers; i++) {
		q->slots[i].q = q;
		q->slots[i].index = i;
	}
	err = POOL_ETHREAD;
	for (unsigned i = 1; i <= q->workers; i++) {
		if (pthread_cond_init(&q->slots[i].cv, NULL))
			goto fail;
		q->n_cv = i;
	}
	err = start_workers(q);
	if (err)
		goto fail;
	*out = q;
	return 0;
fail:
	queue_destroy(q);
	return err;
}
