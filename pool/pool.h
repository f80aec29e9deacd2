/**
 * pool/pool.h: the job vector, the small-buffer byte string and the check
 * queue that runs jobs on a worker pool.
 *
 * Glossary
 *   element     a fixed-size value that stays valid after memcpy: it may own
 *               heap memory, but no pointer in it points into the element
 *               itself. Moving one is a memcpy; the old bytes are then simply
 *               forgotten (never released twice).
 *   vec         struct pool_vec, a growable array of elements that grows with
 *               realloc, never by copying element by element.
 *   release     a callback that frees what a range of elements owns.
 *   sbuf        struct pool_sbuf, a byte string (a script) of up to
 *               POOL_SBUF_INLINE bytes stored inline, on the heap beyond,
 *               or borrowed from a vec's arena.
 *   arena       the chunks a vec keeps for the bytes its elements borrow
 *               (pool_sbuf_init_in): no allocation per element, all
 *               dropped at once; a round of the queue holds the chunks its
 *               jobs point into until it completes.
 *   job         an element the queue runs at most once: run(job, arg) returns
 *               0 (pass) or a failure code; release() frees it exactly once,
 *               run or skipped.
 *   round       the jobs of one unit of work (one block): begin, add..., then
 *               complete, which returns the round's verdict.
 *   verdict     0 if every job of the round passed, else the failure code of
 *               the first job that failed; the jobs not yet started are then
 *               skipped (released without running).
 *   controller  the thread running a round (begin, add, complete). It runs
 *               jobs too, inside complete, instead of waiting idle.
 *
 * pool/ is generic: it knows nothing of Bitcoin. The real script-check job
 * lives in chain/; the stand-in the tests and benchmarks use, struct
 * pool_testjob, lives in tests/unit/testutil_pool.h.
 *
 * Errors: functions that can fail return int, 0 on success or a negative
 * enum pool_error code; nothing is changed when they fail.
 *
 * Threads: a vec or an sbuf belongs to whoever initialised it and is not
 * locked; move it to another thread by value. A queue is shared: each
 * function says which thread may call it.
 */
#ifndef PEERD_POOL_H
#define PEERD_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/require.h"

/** On every fallible call: an ignored error code is a compile error (-Werror). */
#define POOL_WUR __attribute__((warn_unused_result))

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */

/** Error codes (negative) returned by fallible pool/ functions. */
enum pool_error {
	/** Success. */
	POOL_OK = 0,
	/** An allocation failed; the object is unchanged. */
	POOL_ENOMEM = -1,
	/** A size computation would overflow; the object is unchanged. */
	POOL_EOVERFLOW = -2,
	/** An argument is out of range (zero job size, too many threads, no run callback). */
	POOL_EINVAL = -3,
	/** A worker thread (or its mutex or condition variable) could not be created. */
	POOL_ETHREAD = -4,
};

/** A static English description of a pool_error code (also of unknown codes). */
const char *pool_strerror(int err);

/**
 * Releases `n` consecutive elements starting at `elems`: frees what they own.
 * `arg` is the context given with the callback. Called on whichever thread
 * drops the elements (a queue worker, for jobs).
 */
typedef void (*pool_release_fn)(void *elems, size_t n, void *arg);

/* ---------------------------------------------------------------------- */
/* pool_vec: a growable array of memcpy-movable elements                   */

/**
 * A growable array of `elem_size`-byte elements. Grows geometrically
 * (doubling, at least 8) through realloc, which is correct only because
 * elements are valid after memcpy. Fields are readable; change them only
 * through the functions below. Owned by one thread at a time.
 */
struct pool_vec {
	/** The elements, NULL until the first allocation; allocated with xmalloc. */
	uint8_t *data;
	/** Number of elements in use. */
	size_t len;
	/** Number of elements allocated. */
	size_t cap;
	/** Bytes per element, fixed at init. */
	size_t elem_size;
	/** Free bytes of the arena's newest chunk: [arena_cur, arena_end). */
	uint8_t *arena_cur;
	/** End of the newest chunk's bytes (NULL with no chunk). */
	uint8_t *arena_end;
	/** The arena's chunks, newest first; the vec holds a reference on each. */
	struct pool_chunk *chunks;
	/** Unused chunks kept for the next growth, a list (NULL if none). */
	struct pool_chunk *spare;
};

/** An empty vec of `size`-byte elements, for static initialisation. */
#define POOL_VEC_INIT(size)                                                                        \
	{                                                                                          \
		NULL, 0, 0, (size), NULL, NULL, NULL, NULL                                         \
	}

/** Initialise an empty vec of `elem_size`-byte elements (> 0). Allocates nothing. */
void pool_vec_init(struct pool_vec *v, size_t elem_size);

/**
 * Release every element with `release` (may be NULL: elements own nothing),
 * free the storage and drop the arena (chunks a round still holds are freed
 * when it completes), and leave `v` empty and reusable (same element size).
 */
void pool_vec_release(struct pool_vec *v, pool_release_fn release, void *arg);

/**
 * Make room for at least `cap` elements in total. Returns 0, POOL_ENOMEM or
 * POOL_EOVERFLOW; on failure `v` is unchanged.
 */
POOL_WUR int pool_vec_reserve(struct pool_vec *v, size_t cap);

/**
 * Make room for `extra` more elements, growing geometrically. The slow path
 * of push, emplace and extend. Returns 0, POOL_ENOMEM or POOL_EOVERFLOW; on failure
 * `v` is unchanged.
 */
POOL_WUR int pool_vec_grow(struct pool_vec *v, size_t extra);

/**
 * Append a new element and return its slot, or NULL when growing failed
 * (out of memory or overflow; `v` is then unchanged). The slot's bytes are
 * unspecified: initialise the element before anything releases the vec. The
 * pointer is valid until the vec next grows.
 */
static inline void *pool_vec_emplace(struct pool_vec *v)
{
	if (__builtin_expect(v->len == v->cap, 0) && pool_vec_grow(v, 1))
		return NULL;
	return v->data + v->len++ * v->elem_size;
}

/**
 * Append `n` (> 0) elements at once and return the first of their `n`
 * consecutive slots, or NULL when growing failed (out of memory or
 * overflow; `v` is then unchanged). Why: pool_vec_emplace checks the
 * capacity and writes the length back to `v` for every element (`v`'s
 * address escapes to the growth path, so the compiler cannot keep the
 * length in a register); when the count is known beforehand (a
 * transaction's inputs, a reserved fill) this does both once, and filling
 * an element costs only its own stores. The slots' bytes are unspecified:
 * initialise every one before anything releases the vec, or give back the
 * slots left unfilled with pool_vec_truncate(v, first_unfilled, NULL,
 * NULL), which releases nothing. Bytes put in the arena while filling
 * (pool_sbuf_init_in) are safe: the length already counts the slots. The
 * pointer is valid until the vec next grows.
 */
static inline void *pool_vec_extend(struct pool_vec *v, size_t n)
{
	require(n > 0);
	size_t len = v->len;
	/* cap >= len always, so the subtraction cannot wrap. */
	if (__builtin_expect(v->cap - len < n, 0) && pool_vec_grow(v, n))
		return NULL;
	v->len = len + n;
	return v->data + len * v->elem_size;
}

/**
 * Append a copy of the element at `elem` (elem_size bytes, copied with
 * memcpy: ownership of whatever it owns moves into the vec). Returns 0,
 * POOL_ENOMEM or POOL_EOVERFLOW; on failure `v` is unchanged and the caller
 * still owns `elem`.
 */
POOL_WUR static inline int pool_vec_push(struct pool_vec *v, const void *elem)
{
	if (__builtin_expect(v->len == v->cap, 0)) {
		int err = pool_vec_grow(v, 1);
		if (err)
			return err;
	}
	memcpy(v->data + v->len++ * v->elem_size, elem, v->elem_size);
	return 0;
}

/**
 * Append `n` elements from `elems` by memcpy (a move: the vec owns them on
 * success). Returns 0, POOL_ENOMEM or POOL_EOVERFLOW; on failure `v` is
 * unchanged and the caller still owns the elements.
 */
POOL_WUR int pool_vec_append(struct pool_vec *v, const void *elems, size_t n);

/** The element at index `i` (< len; checked by require()). */
static inline void *pool_vec_at(const struct pool_vec *v, size_t i)
{
	require(i < v->len);
	return v->data + i * v->elem_size;
}

/**
 * Release the elements from index `len` on (if any) and shrink to `len`.
 * Keeps the storage; their arena bytes stay until the vec is cleared.
 */
void pool_vec_truncate(struct pool_vec *v, size_t len, pool_release_fn release, void *arg);

/**
 * Release every element and set the length to 0. Keeps the storage and the
 * arena's newest chunk for reuse (its bytes are reused only once no round
 * holds them).
 */
void pool_vec_clear(struct pool_vec *v, pool_release_fn release, void *arg);

/**
 * Hand the whole array to the caller without copying: returns the storage
 * (NULL if none was ever allocated) and its element count in `*len`. The
 * caller owns the elements and the storage (free it with xfree after
 * releasing the elements); `v` is left empty with no storage. Bytes the
 * elements borrow stay in `v`'s arena: keep `v` unchanged while they live.
 */
POOL_WUR void *pool_vec_take(struct pool_vec *v, size_t *len);

/*
 * The arena: bytes the elements borrow.
 *
 * Why: a job whose script is longer than fits inline used to cost a malloc
 * and a free of its own (5,000 a block of P2TR spends). Instead the bytes
 * go into chunks the vec owns (POOL_CHUNK_BYTES each, or one as large as a
 * bigger request), filled front to back and dropped all at once. A chunk
 * never moves, so an element that points into one stays valid after a
 * memcpy of the element and after the vec grows (nothing points into the
 * vec's array itself).
 *
 * Lifetime: a chunk is counted (struct pool_chunk, pool/arena.c): the vec
 * holds one reference on each chunk of its list, and pool_queue_take_vec
 * gives the round one on each chunk the taken jobs may point into, dropped
 * at the end of pool_queue_complete after the jobs were released. So a
 * worker reads a job's bytes safely until its round completes, whatever the
 * vec does meanwhile: clearing or releasing the vec with jobs in flight
 * only drops the vec's references, and the vec never writes again over
 * bytes a round still holds (it rewinds a chunk only when nobody else
 * holds it and the vec is empty). A chunk nobody holds is freed, or kept
 * as a spare: the vec keeps a few, the queue keeps a few and hands them back
 * to the vecs it takes jobs from, so a steady stream of rounds allocates
 * nothing.
 *
 * Elements copied out by other means (pool_queue_add, pool_vec_take, a
 * plain memcpy) borrow bytes the vec still owns: the caller keeps the vec
 * unchanged (no clear, no new bytes, no release) until they are dropped.
 */

/** Bytes of an arena chunk (a request larger than this gets a chunk of its own size). */
#define POOL_CHUNK_BYTES (64u << 10)
/** Unused chunks a vec keeps for its next fills (a block's 5,000 P2TR scripts take 3). */
#define POOL_VEC_SPARES 8u

/** Slow path of pool_vec_arena_alloc: a new chunk (or a rewound one). */
void *pool_vec_arena_grow(struct pool_vec *v, size_t n);

/**
 * `n` (> 0) bytes in `v`'s arena, valid until the vec is cleared or
 * released and, for jobs the queue took with pool_queue_take_vec, until
 * their round completes. Returns NULL when a chunk cannot be allocated
 * (`v` is then unchanged). Not aligned: for byte strings.
 */
static inline void *pool_vec_arena_alloc(struct pool_vec *v, size_t n)
{
	if (__builtin_expect((size_t)(v->arena_end - v->arena_cur) >= n, 1)) {
		uint8_t *p = v->arena_cur;
		v->arena_cur += n;
		return p;
	}
	return pool_vec_arena_grow(v, n);
}

/** Chunks `v`'s arena holds (its list, not counting the spare): for tests and stats. */
size_t pool_vec_arena_chunks(const struct pool_vec *v);

/* ---------------------------------------------------------------------- */
/* pool_sbuf: a byte string with a small buffer inline                     */

/** Bytes stored inline; longer strings go to the heap (Core's prevector<28>). */
#define POOL_SBUF_INLINE 28u
/** Largest length an sbuf holds. */
#define POOL_SBUF_MAX 0x7fffffffu
/** Set in the header word when the bytes live on the heap. */
#define POOL_SBUF_HEAP 0x80000000u

/**
 * A byte string (a script) of up to POOL_SBUF_INLINE bytes inline and any
 * length up to POOL_SBUF_MAX on the heap; 32 bytes in all.
 *
 * Why it is shaped like this: a job vector grows with realloc and a job
 * moves to a worker by memcpy, so whatever a job holds must still be right
 * at its new address. Nothing here points into the struct itself: the
 * inline bytes are found from the struct's own address each time
 * (pool_sbuf_data), and the heap case stores only a pointer to a separate
 * allocation, which is equally valid wherever the struct is copied to. A
 * moved-from copy must be forgotten, not released, or the heap bytes would
 * be freed twice. All-zero bytes are a valid empty sbuf.
 *
 * The header word is the length, with POOL_SBUF_HEAP set when the bytes are
 * on the heap (a heap sbuf keeps its allocation when shrunk, so it can grow
 * again without reallocating). Access fields only through the functions.
 *
 * A third form borrows its bytes from a vec's arena (pool_sbuf_init_in):
 * POOL_SBUF_HEAP with cap 0. It owns nothing: releasing it frees nothing,
 * and changing it copies the bytes to a heap allocation of its own first.
 */
struct pool_sbuf {
	union {
		/** Inline form: hdr without POOL_SBUF_HEAP. */
		struct {
			uint32_t hdr;
			uint8_t bytes[POOL_SBUF_INLINE];
		} in;
		/** Heap form: hdr with POOL_SBUF_HEAP; cap bytes at ptr (xmalloc'd). */
		struct {
			uint32_t hdr;
			uint32_t cap;
			uint8_t *ptr;
		} heap;
	} u;
};

/** Initialise an empty, inline sbuf. Allocates nothing. */
static inline void pool_sbuf_init(struct pool_sbuf *sb)
{
	sb->u.in.hdr = 0;
}

/** 1 when the bytes live on the heap, else 0. */
static inline int pool_sbuf_on_heap(const struct pool_sbuf *sb)
{
	return (sb->u.in.hdr & POOL_SBUF_HEAP) != 0;
}

/** Length in bytes. */
static inline size_t pool_sbuf_len(const struct pool_sbuf *sb)
{
	return sb->u.in.hdr & ~POOL_SBUF_HEAP;
}

/** The bytes (len of them); valid until the sbuf is changed, moved or released. */
static inline const uint8_t *pool_sbuf_data(const struct pool_sbuf *sb)
{
	return pool_sbuf_on_heap(sb) ? sb->u.heap.ptr : sb->u.in.bytes;
}

/** Writable bytes (len of them); valid until the sbuf is changed, moved or released. */
static inline uint8_t *pool_sbuf_wdata(struct pool_sbuf *sb)
{
	return pool_sbuf_on_heap(sb) ? sb->u.heap.ptr : sb->u.in.bytes;
}

/** Bytes it can hold without allocating (0 for borrowed bytes: a change copies them). */
static inline size_t pool_sbuf_capacity(const struct pool_sbuf *sb)
{
	return pool_sbuf_on_heap(sb) ? sb->u.heap.cap : POOL_SBUF_INLINE;
}

/** 1 when the bytes are an allocation of the sbuf's own (to free), else 0. */
static inline int pool_sbuf_owns(const struct pool_sbuf *sb)
{
	return pool_sbuf_on_heap(sb) && sb->u.heap.cap != 0;
}

/** Free the heap bytes, if any (borrowed ones stay), and leave `sb` empty and inline. */
static inline void pool_sbuf_release(struct pool_sbuf *sb)
{
	if (pool_sbuf_owns(sb))
		xfree(sb->u.heap.ptr);
	sb->u.in.hdr = 0;
}

/*
 * Copy n <= 64 bytes without calling memcpy: a script is a few dozen bytes,
 * and the call (through the PLT, then libc's dispatch on the length) was
 * 40% of pushing a job whose script goes to the arena (perf, issue 26).
 * Two moves of the largest power of two not above n, overlapping in the
 * middle, as libc does inside; every byte read and written is within n.
 */
static inline void pool_copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n >= 32) {
		memcpy(d, s, 32);
		memcpy(d + n - 32, s + n - 32, 32);
	} else if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/**
 * Initialise `sb` (its previous bytes are ignored: it must own no heap
 * allocation) with a copy of `len` bytes of `data`: inline up to
 * POOL_SBUF_INLINE, else in `v`'s arena, borrowed (see "The arena"). The
 * vec a job is pushed to is the natural `v`. Returns 0, POOL_ENOMEM (the
 * arena could not grow) or POOL_EOVERFLOW (len > POOL_SBUF_MAX); on failure
 * `sb` is an empty inline sbuf and `v` is unchanged.
 */
POOL_WUR static inline int pool_sbuf_init_in(struct pool_sbuf *sb, struct pool_vec *v,
                                             const uint8_t *data, size_t len)
{
	if (len <= POOL_SBUF_INLINE) {
		sb->u.in.hdr = (uint32_t)len;
		pool_copy_small(sb->u.in.bytes, data, len);
		return 0;
	}
	sb->u.in.hdr = 0;
	if (len > POOL_SBUF_MAX)
		return POOL_EOVERFLOW;
	uint8_t *p = pool_vec_arena_alloc(v, len);
	if (!p)
		return POOL_ENOMEM;
	if (len <= 64)
		pool_copy_small(p, data, len);
	else
		memcpy(p, data, len);
	sb->u.heap.hdr = POOL_SBUF_HEAP | (uint32_t)len;
	sb->u.heap.cap = 0;
	sb->u.heap.ptr = p;
	return 0;
}

/** Set the length to 0, keeping any heap allocation for reuse. */
static inline void pool_sbuf_clear(struct pool_sbuf *sb)
{
	sb->u.in.hdr &= POOL_SBUF_HEAP;
}

/**
 * Make room for `cap` bytes in total (moves to the heap beyond
 * POOL_SBUF_INLINE). Returns 0, POOL_ENOMEM or POOL_EOVERFLOW (cap >
 * POOL_SBUF_MAX); on failure `sb` is unchanged.
 */
POOL_WUR int pool_sbuf_reserve(struct pool_sbuf *sb, size_t cap);

/**
 * Replace the contents with `len` bytes from `data` (which must not point
 * into `sb`). Allocates exactly `len` bytes when they do not fit. Returns 0,
 * POOL_ENOMEM or POOL_EOVERFLOW; on failure `sb` is unchanged.
 */
POOL_WUR int pool_sbuf_assign(struct pool_sbuf *sb, const uint8_t *data, size_t len);

/**
 * Append `len` bytes from `data` (which must not point into `sb`), growing
 * the heap allocation geometrically. Returns 0, POOL_ENOMEM or
 * POOL_EOVERFLOW; on failure `sb` is unchanged.
 */
POOL_WUR int pool_sbuf_append(struct pool_sbuf *sb, const uint8_t *data, size_t len);

/**
 * Set the length to `len`; new bytes are zero. Returns 0, POOL_ENOMEM or
 * POOL_EOVERFLOW; on failure `sb` is unchanged.
 */
POOL_WUR int pool_sbuf_resize(struct pool_sbuf *sb, size_t len);

/**
 * Deep copy: make `dst` (an initialised sbuf, distinct from `src`) hold the
 * same bytes as `src`, with its own heap allocation if needed. Returns 0,
 * POOL_ENOMEM or POOL_EOVERFLOW; on failure `dst` is unchanged.
 */
POOL_WUR int pool_sbuf_copy(struct pool_sbuf *dst, const struct pool_sbuf *src);

/* ---------------------------------------------------------------------- */
/* pool_queue: Bitcoin Core's CCheckQueue on a worker pool                 */

/** Most threads a queue runs, the controller included (so at most 63 workers). */
#define POOL_MAX_THREADS 64
/** Jobs a thread takes at most at once (Core's batch size). */
#define POOL_BATCH_DEFAULT 128u
/** par: one worker per core, minus one for the controller. */
#define POOL_PAR_AUTO 0
/** par: no workers; the controller runs every job inside complete. */
#define POOL_PAR_NONE (-POOL_MAX_THREADS)
/** Microseconds a thread out of work polls for more before it sleeps (spin_us = 0). */
#define POOL_SPIN_DEFAULT_US 20

/**
 * Runs one job in place: `job` points at the job's bytes in the queue's
 * storage, which the running thread has to itself for the call; `arg` is
 * the round's argument. Returns 0 when the job passes, else a non-zero
 * failure code of the caller's choosing. Runs on a worker or on the
 * controller: must touch no I/O and only shared state that is safe to use
 * from many threads.
 */
typedef int (*pool_run_fn)(void *job, void *arg);

/** How to build a queue (see pool_queue_new). */
struct pool_queue_config {
	/** Bytes per job (> 0); jobs are memcpy-movable elements. */
	size_t job_size;
	/** Runs a job (required). */
	pool_run_fn run;
	/**
	 * Releases jobs, run or skipped (NULL: jobs own nothing). Called on
	 * the controller at the end of pool_queue_complete (or in
	 * pool_queue_free), with the round's arg: the thread that built the
	 * jobs frees them, which keeps the allocator's caches thread-local.
	 */
	pool_release_fn release;
	/**
	 * Worker threads: > 0 exactly that many (at most POOL_MAX_THREADS - 1);
	 * POOL_PAR_AUTO (0) one per core minus one; < 0 that many fewer than
	 * auto, at least 0 (POOL_PAR_NONE: none, the controller runs every job).
	 */
	int par;
	/** Most jobs a thread takes at once; 0 means POOL_BATCH_DEFAULT. */
	unsigned batch;
	/**
	 * Microseconds a thread that runs out of jobs keeps polling for more
	 * before it sleeps: waking a sleeping thread costs a system call and
	 * tens of microseconds, polling costs only that core's time. 0 means
	 * POOL_SPIN_DEFAULT_US; negative: never poll, sleep at once.
	 */
	int spin_us;
};

/** Counters of one thread of a queue. */
struct pool_thread_stats {
	/** Jobs this thread ran. */
	uint64_t jobs_run;
	/** Jobs this thread released without running (the round had failed). */
	uint64_t jobs_skipped;
	/** Times it took a batch of jobs. */
	uint64_t batches;
	/**
	 * Nanoseconds at work: taking and running jobs (the controller: also
	 * releasing them). A worker's current stretch is added when it next
	 * waits, so read it between rounds for exact figures.
	 */
	uint64_t busy_ns;
	/**
	 * Nanoseconds spent waiting, polling or asleep, for work (the
	 * controller: for the other threads' last jobs).
	 */
	uint64_t idle_ns;
};

/** A snapshot of a queue's counters since it was created. */
struct pool_queue_stats {
	/** Rounds completed. */
	uint64_t rounds;
	/** Rounds whose verdict was a failure. */
	uint64_t rounds_failed;
	/** Jobs added. */
	uint64_t jobs_added;
	/** Jobs run, all threads. */
	uint64_t jobs_run;
	/** Jobs skipped, all threads (not counting those dropped by pool_queue_free). */
	uint64_t jobs_skipped;
	/** Threads: 1 + workers. thread[0] is the controller, thread[1..] the workers. */
	unsigned threads;
	/** Per-thread counters; entries from `threads` on are zero. */
	struct pool_thread_stats thread[POOL_MAX_THREADS];
};

/** A check queue and its worker threads; opaque, made by pool_queue_new. */
struct pool_queue;

/**
 * Create a queue and start its worker threads (with every signal blocked, so
 * signals go to the application's own threads). Stores the queue in `*out`
 * (owned by the caller: pool_queue_free). Returns 0, POOL_EINVAL,
 * POOL_ENOMEM or POOL_ETHREAD; on failure nothing is left running.
 * Any thread may call.
 */
POOL_WUR int pool_queue_new(struct pool_queue **out, const struct pool_queue_config *cfg);

/**
 * Stop and join every worker, then free the queue. Jobs a worker is running
 * finish first; the rest are not run; every job of an open round is
 * released. May be called by the controller with a round open (no complete
 * yet); must not be called while another thread uses the queue. `q` may be
 * NULL.
 */
void pool_queue_free(struct pool_queue *q);

/** Number of worker threads (not counting the controller). Any thread. */
unsigned pool_queue_workers(const struct pool_queue *q);

/**
 * Open a round: the calling thread becomes the controller until it calls
 * pool_queue_complete. Blocks while another thread's round is open (one
 * round at a time). `arg` is passed to run and release for this round's jobs.
 */
void pool_queue_begin(struct pool_queue *q, void *arg);

/**
 * Move `n` jobs from the array `jobs` into the open round (memcpy; on
 * success the queue owns them and will release each exactly once, and the
 * caller must forget them). Bytes the jobs borrow from a vec's arena stay
 * the caller's to keep until the round completes (pool_queue_take_vec
 * holds them for it). Idle workers start on them at once. Allocates
 * only when no recycled buffer has room. Controller only. Returns 0,
 * POOL_ENOMEM or POOL_EOVERFLOW; on failure nothing was added and the
 * caller still owns the jobs.
 */
POOL_WUR int pool_queue_add(struct pool_queue *q, void *jobs, size_t n);

/**
 * Take every job of `v` into the open round by taking the vec's storage
 * itself, without copying. `v` is left empty and reusable, holding a
 * recycled buffer from an earlier round if the queue has one (else no
 * storage). `v->elem_size` must equal the job size. The round also takes
 * a reference on each chunk of `v`'s arena, held until pool_queue_complete
 * has released the jobs, so `v` may be cleared, refilled or released
 * meanwhile (and may receive a spare chunk). Controller only.
 * Returns 0, POOL_ENOMEM or POOL_EOVERFLOW; on failure `v` is unchanged.
 */
POOL_WUR int pool_queue_take_vec(struct pool_queue *q, struct pool_vec *v);

/**
 * Close the round: the controller runs jobs alongside the workers until
 * every job has run or been skipped, then releases them all. Returns the
 * verdict: 0 if all passed, else the failure code of the first job that
 * failed (the round's remaining jobs were skipped). Controller only;
 * afterwards any thread may open the next round.
 */
POOL_WUR int pool_queue_complete(struct pool_queue *q);

/** Copy the queue's counters into `*out`. Any thread; takes the queue's lock briefly. */
void pool_queue_stats(struct pool_queue *q, struct pool_queue_stats *out);

#endif
