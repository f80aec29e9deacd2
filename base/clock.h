/**
 * base/clock.h: the node's one mockable clock (Core's GetTime, NodeClock
 * and SetMockTime).
 *
 * Everything Core times by its mockable clock (address times, version
 * timestamps, ban expiry, the lagging-peer and stale-tip timeouts, a
 * header's time-too-new check) reads base_time()/base_time_ms(); with a
 * mock time set (-mocktime, setmocktime) they return it, frozen until it
 * is set again, as Core's. What Core times by its steady clock (pings,
 * socket timeouts) stays on the loop's clock (daemon_now_ms).
 *
 * The mock time is one process-wide value, as Core's g_mock_time: one
 * process is one node, and chain/'s clock hook takes no context. Any
 * thread may read or set it (an atomic, relaxed: nothing else is ordered
 * by it).
 */
#ifndef PEERD_BASE_CLOCK_H
#define PEERD_BASE_CLOCK_H

#include <stdint.h>

/** Largest mock time in seconds: Core's, the seconds a signed 64-bit count
 * of nanoseconds holds (setmocktime's "Mocktime must be in the range"). */
#define BASE_CLOCK_MAX_MOCK 9223372036LL

/** Seconds since the epoch: the mock time if one is set, else the system
 * clock. Any thread. */
int64_t base_time(void);

/** Milliseconds since the epoch: the mock time times 1,000 if one is set,
 * else the system clock. Any thread. */
int64_t base_time_ms(void);

/** Set the mock time in seconds (0: back to the system clock). The caller
 * checks the range (0..BASE_CLOCK_MAX_MOCK). Any thread. */
void base_clock_set_mock(int64_t seconds);

/** The mock time in seconds, 0 when none is set. Any thread. */
int64_t base_clock_mock(void);

#endif
