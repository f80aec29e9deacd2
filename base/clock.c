/* base/clock.c: the mockable clock (base/clock.h). */
#include "base/clock.h"

#include <stdatomic.h>
#include <time.h>

/* 0: no mock time. Relaxed: a reader needs the value, not an ordering
 * with other memory (Core's g_mock_time is relaxed too). */
static _Atomic int64_t mock_seconds;

int64_t base_time(void)
{
	int64_t m = atomic_load_explicit(&mock_seconds, memory_order_relaxed);
	return m ? m : (int64_t)time(NULL);
}

int64_t base_time_ms(void)
{
	int64_t m = atomic_load_explicit(&mock_seconds, memory_order_relaxed);
	if (m)
		return m * 1000;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void base_clock_set_mock(int64_t seconds)
{
	atomic_store_explicit(&mock_seconds, seconds, memory_order_relaxed);
}

int64_t base_clock_mock(void)
{
	return atomic_load_explicit(&mock_seconds, memory_order_relaxed);
}
