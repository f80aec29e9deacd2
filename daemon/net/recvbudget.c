/*
 * daemon/net/recvbudget.c: one receive budget for all peers together, and
 * giving memory back to the system once a flood is over.
 *
 * Per peer, a message over 512 bytes gets an exactly-sized rx buffer once
 * its header was checked (net/transport.c). Each such buffer is bounded
 * (PROTO_MAX_MESSAGE), but nothing bounded their sum: maxconnections peers
 * each announcing a 4 MB block and sending all but its last byte held
 * maxconnections x 4 MB. So every large buffer is first reserved here, in
 * full, against `maxrecvmemory`:
 *
 *   fits          the peer gets its buffer and reads on.
 *   does not fit  the peer stops reading (uv_read_stop) and waits, its
 *                 header in its 512-byte buffer. Waiters are served
 *                 smallest message first, then oldest: the largest
 *                 partial messages are the ones kept paused, and a peer
 *                 with an ordinary block goes before a flood of 4 MB ones.
 *   headroom      a message may fill the budget only up to a headroom in
 *                 proportion to its size (a 4 MB one leaves a quarter, a
 *                 1 MB one a sixteenth), so a flood of 4 MB messages
 *                 leaves room for ordinary blocks to go straight through.
 *   stalled       a waiter that does not fit evicts holders that stall:
 *                 no byte for RECV_STALL_MS, or under RECV_MIN_RATE_BPS
 *                 on average once held that long. The largest such buffer
 *                 goes first (the peer is disconnected). A holder that
 *                 keeps sending is never evicted, so a reservation always
 *                 ends in a whole message.
 *
 * Messages of 512 bytes or less (pings, invs, headers of small messages)
 * never wait: their buffers come from the script free list, bounded by
 * its own cap, so honest small traffic keeps flowing during a flood.
 *
 * Memory back: glibc raises its mmap threshold when a mapped block is
 * freed (up to 32 MiB), after which 4 MB buffers come from the heap, where
 * small blocks allocated between them (peers, free-list buffers that are
 * never freed) can pin freed pages, and only the heap's top is given back
 * by free(): issue 13 saw 195 MB kept after floods against a 3.9 MB
 * baseline. So recvbudget_malloc_setup fixes the thresholds instead of
 * leaving them to glibc, caps the malloc arenas, and the tick calls
 * malloc_trim once the loop has freed much memory and is quiet again:
 * malloc_trim gives back every free page of every arena's bins, and the
 * main arena's top, so what a flood leaves scattered over the heap goes
 * back whatever the allocation order (another arena's top goes back in
 * free(), which fastbins would delay: recvbudget_malloc_setup).
 *
 * The mmap threshold was fixed at 128 KiB until session 12, every large
 * buffer its own mapping. That made every block read (REST block.bin,
 * getblock, a block served to a peer) a fresh mapping whose pages all
 * faulted in, zeroed and charged, and were unmapped again after the send:
 * about a fifth of the validation thread's time serving REST block.bin
 * (doc/performance.md). It is now fixed just above the largest block and
 * message (PROTO_MAX_MESSAGE), with a trim threshold of two such buffers:
 * a freed block buffer stays in its arena, already faulted in, for the
 * next read (221 minor faults a 900 kB REST block.bin before, 6 after:
 * test_rest_large.py). Measured in doc/performance.md ("Session 12"): RSS
 * after the floods of test_hardening.py as before, about 6 MiB kept after
 * serving; REST block.bin's median latency about halved.
 *
 * Loop thread only.
 */
#include "daemon/net/net.h"

#include <malloc.h>
#include <string.h>

/** Allocations of this size or more are their own mapping: above every block and message. */
#define RECV_MMAP_THRESHOLD (4u << 20)
/** Free bytes at an arena's top that free() keeps: two of the largest buffers. */
#define RECV_TRIM_THRESHOLD (2u * RECV_MMAP_THRESHOLD)
_Static_assert(PROTO_MAX_MESSAGE + 24u < RECV_MMAP_THRESHOLD,
               "the largest message and block are carved from an arena and reused");
/** malloc arenas at most: the loop, the validation thread and workers share them. */
#define RECV_ARENA_MAX 4
/** Freed since the last trim before malloc_trim is worth a call. Buffers under the 4 MiB
 * mmap threshold stay in their arenas when freed, so the last megabytes of a burst would
 * otherwise wait for the next burst (test_ctl_memory once kept 33 MiB that way). */
#define RECV_TRIM_AFTER_BYTES (1u << 20)
/** A largest message leaves 1/RECV_HEADROOM_DIV of the budget free (smaller: less). */
#define RECV_HEADROOM_DIV 4u
/** The trim waits until no large buffer was taken for this long (the flood is over). */
#define RECV_TRIM_QUIET_MS 1000u

void recvbudget_init(struct daemon *d, const struct peerd_conf *c)
{
	struct recvbudget *b = d->rxb;
	memset(b, 0, sizeof(*b));
	if (c->maxrecvmemory_mib) {
		b->limit = (uint64_t)c->maxrecvmemory_mib << 20;
	} else {
		uint64_t conns = c->maxconnections > 0 ? (uint64_t)c->maxconnections : 0;
		b->limit = conns * RECV_BUDGET_PER_PEER;
		if (b->limit < RECV_BUDGET_MIN)
			b->limit = RECV_BUDGET_MIN;
	}
}

void recvbudget_malloc_setup(void)
{
	/* Both may fail under a sanitizer's allocator; they are only hints. */
	(void)mallopt(M_MMAP_THRESHOLD, (int)RECV_MMAP_THRESHOLD);
	/* Fixing the mmap threshold also fixes glibc's trim threshold (128 KiB
	 * unless set): without this a freed block buffer at an arena's top
	 * would be given back at once, and the next read fault in again. */
	(void)mallopt(M_TRIM_THRESHOLD, (int)RECV_TRIM_THRESHOLD);
	/* No fastbins: a freed small block coalesces at once, so the last one
	 * beside an arena's top grows the top and free() gives it back past the
	 * trim threshold. With fastbins, the small blocks of a big JSON tree
	 * (getblock HASH 3: tens of MB of them on the validation thread) merge
	 * into the top only in malloc_trim's consolidation, and malloc_trim
	 * returns the top of the main arena alone: test_ctl_memory saw 33 MiB
	 * kept that way in the validation thread's arena. The thread caches
	 * (tcache) still serve the hot small sizes. */
	(void)mallopt(M_MXFAST, 0);
	(void)mallopt(M_ARENA_MAX, RECV_ARENA_MAX);
}

static void note_freed(struct daemon *d, uint64_t n)
{
	d->rxb->freed_since_trim += n;
}

/* Reading, as the peer's other state allows (not while send-paused). */
static void start_reading(struct peer *p)
{
	if (p->reading || p->recv_paused || p->state == PEER_CLOSING)
		return;
	int err = uv_read_start((uv_stream_t *)&p->tcp, transport_alloc_cb, transport_read_cb);
	if (err) {
		peer_disconnect(p, uv_strerror(err));
		return;
	}
	p->reading = true;
}

/* Whether holder q is stalling: no progress for RECV_STALL_MS, or a
 * trickle under RECV_MIN_RATE_BPS on average since its grant. */
static bool stalling(const struct peer *q, uint64_t now)
{
	/* A waiter was not read while it waited: its clock starts at the grant. */
	uint64_t last = q->lastrecv_ms > q->rx.grant_ms ? q->lastrecv_ms : q->rx.grant_ms;
	if (now - last >= RECV_STALL_MS)
		return true;
	uint64_t held_ms = now - q->rx.grant_ms;
	if (held_ms < RECV_STALL_MS)
		return false;
	uint64_t got = q->bytes_recv - q->rx.grant_recv;
	return got * 1000u < (uint64_t)RECV_MIN_RATE_BPS * held_ms;
}

/*
 * Whether a message of `need` bytes may be granted now. A message leaves
 * headroom in proportion to its size (a 4 MB one a quarter of the budget,
 * a 1 MB one a sixteenth): a flood of the largest messages cannot take the
 * room ordinary blocks need, so those go on without waiting for a stalled
 * holder's eviction. Alone, any message up to the limit fits.
 */
static bool fits(const struct recvbudget *b, uint64_t need)
{
	if (b->held == 0)
		return need <= b->limit;
	uint64_t headroom = b->limit / RECV_HEADROOM_DIV * need / PROTO_MAX_MESSAGE;
	return b->held + need + headroom <= b->limit;
}

/* Disconnect stalling holders, largest first, until `need` fits. True when it fits. */
static bool evict_for(struct daemon *d, uint64_t need)
{
	struct recvbudget *b = d->rxb;
	uint64_t now = daemon_now_ms(d);
	while (!fits(b, need)) {
		struct peer *victim = NULL;
		for (uint32_t i = 0; i < d->n_peers; i++) {
			struct peer *q = d->peers[i];
			if (q->state == PEER_CLOSING || !q->rx.buf || q->rx.pooled ||
			    !q->rx.granted)
				continue;
			if (!stalling(q, now))
				continue;
			if (!victim || q->rx.cap > victim->rx.cap ||
			    (q->rx.cap == victim->rx.cap && q->lastrecv_ms < victim->lastrecv_ms))
				victim = q;
		}
		if (!victim)
			return false;
		b->evictions++;
		DLOG_DBG(&d->log, DLOG_NET,
		         "peer=%llu stalled holding %u bytes of a message while peers wait for "
		         "maxrecvmemory: disconnecting",
		         (unsigned long long)victim->id, victim->rx.cap);
		peer_disconnect(victim, "stalled holding a large receive buffer");
	}
	return true;
}

static void grant(struct daemon *d, struct peer *p, uint32_t total)
{
	struct recvbudget *b = d->rxb;
	b->held += total;
	if (b->held > b->held_max)
		b->held_max = b->held;
	b->grants++;
	b->last_grant_ms = daemon_now_ms(d);
	p->rx.granted = total;
	p->rx.grant_ms = daemon_now_ms(d);
	p->rx.grant_recv = p->bytes_recv;
}

/* The waiter to serve first: smallest message, then longest waiting. */
static struct peer *first_waiter(struct daemon *d)
{
	struct peer *best = NULL;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *q = d->peers[i];
		if (!q->rx_wait || q->state == PEER_CLOSING)
			continue;
		if (!best || q->rx.want < best->rx.want ||
		    (q->rx.want == best->rx.want && q->rx.wait_ms < best->rx.wait_ms))
			best = q;
	}
	return best;
}

static void unwait(struct daemon *d, struct peer *p)
{
	if (!p->rx_wait)
		return;
	p->rx_wait = false;
	p->rx.want = 0;
	if (d->rxb->waiting)
		d->rxb->waiting--;
}

void recvbudget_pump(struct daemon *d)
{
	struct recvbudget *b = d->rxb;
	if (b->pumping) {
		b->repump = true;
		return;
	}
	b->pumping = true;
	do {
		b->repump = false;
		while (b->waiting) {
			struct peer *p = first_waiter(d);
			if (!p) {
				b->waiting = 0; /* only closing peers were left */
				break;
			}
			uint32_t total = p->rx.want;
			if (!evict_for(d, total))
				break;
			if (p->state == PEER_CLOSING || !p->rx_wait)
				continue; /* an eviction closed it, or reentry served it */
			unwait(d, p);
			grant(d, p, total);
			if (transport_grow(p, total)) {
				peer_disconnect(p, "out of memory for a receive buffer");
				continue;
			}
			start_reading(p);
		}
	} while (b->repump);
	b->pumping = false;
}

bool recvbudget_acquire(struct peer *p, uint32_t total)
{
	struct daemon *d = p->d;
	struct recvbudget *b = d->rxb;
	if (p->rx_wait)
		return false;
	/* Waiters go first; a newcomer only takes what they leave. */
	if (!b->waiting && evict_for(d, total)) {
		grant(d, p, total);
		return true;
	}
	p->rx_wait = true;
	p->rx.want = total;
	p->rx.wait_ms = daemon_now_ms(d);
	b->waiting++;
	b->pauses++;
	if (p->reading)
		uv_read_stop((uv_stream_t *)&p->tcp);
	p->reading = false;
	DLOG_DBG(&d->log, DLOG_NET,
	         "peer=%llu waits for %u bytes of maxrecvmemory (%llu of %llu held): reading "
	         "stopped",
	         (unsigned long long)p->id, total, (unsigned long long)b->held,
	         (unsigned long long)b->limit);
	/* Stalled holders may make room for it (or for a smaller waiter). */
	recvbudget_pump(d);
	return false;
}

void recvbudget_release(struct peer *p)
{
	struct daemon *d = p->d;
	struct recvbudget *b = d->rxb;
	unwait(d, p);
	if (p->rx.granted) {
		b->held = b->held >= p->rx.granted ? b->held - p->rx.granted : 0;
		note_freed(d, p->rx.granted);
		p->rx.granted = 0;
		if (b->waiting)
			recvbudget_pump(d);
	}
}

void recvbudget_tick(struct daemon *d, uint64_t now_ms)
{
	struct recvbudget *b = d->rxb;
	if (b->waiting)
		recvbudget_pump(d);
	/* Peers come and go in bulk too (their structs and tables): count
	 * what the flood made, then trim once it is over. */
	if (b->freed_since_trim >= RECV_TRIM_AFTER_BYTES && b->held == 0 &&
	    now_ms - b->last_grant_ms >= RECV_TRIM_QUIET_MS) {
		b->freed_since_trim = 0;
		b->trims++;
		(void)malloc_trim(0);
	}
}

void recvbudget_note_freed(struct daemon *d, uint64_t bytes)
{
	note_freed(d, bytes);
}
