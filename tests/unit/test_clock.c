/*
 * tests/unit/test_clock.c: the mockable clock (base/clock.h): the system
 * clock when no mock time is set, the mock time frozen while one is, back
 * to the system clock on 0; and one thread setting it while another reads
 * (built under TSan too: the validation thread reads what the loop's
 * setmocktime writes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/clock.h"

static int reset(void **state)
{
	(void)state;
	base_clock_set_mock(0);
	return 0;
}

static void test_system_clock_without_mock(void **state)
{
	(void)state;
	assert_int_equal(base_clock_mock(), 0);
	int64_t before = (int64_t)time(NULL);
	int64_t s = base_time();
	int64_t ms = base_time_ms();
	int64_t after = (int64_t)time(NULL);
	if (s < before || s > after)
		fail_msg("base_time %lld outside the system clock's [%lld, %lld]", (long long)s,
		         (long long)before, (long long)after);
	if (ms < before * 1000 || ms > (after + 1) * 1000)
		fail_msg("base_time_ms %lld outside [%lld, %lld]", (long long)ms,
		         (long long)before * 1000, (long long)(after + 1) * 1000);
}

static void test_mock_set_and_unset(void **state)
{
	(void)state;
	base_clock_set_mock(1700000000);
	assert_int_equal(base_clock_mock(), 1700000000);
	assert_int_equal(base_time(), 1700000000);
	assert_int_equal(base_time_ms(), 1700000000000LL);
	/* Frozen: it does not move by itself. */
	struct timespec pause = {0, 20 * 1000 * 1000};
	nanosleep(&pause, NULL);
	assert_int_equal(base_time_ms(), 1700000000000LL);
	/* Moved, even backwards, as setmocktime may. */
	base_clock_set_mock(1600000000);
	assert_int_equal(base_time(), 1600000000);
	/* The largest setmocktime accepts: its milliseconds still fit. */
	base_clock_set_mock(BASE_CLOCK_MAX_MOCK);
	assert_int_equal(base_time(), BASE_CLOCK_MAX_MOCK);
	assert_int_equal(base_time_ms(), BASE_CLOCK_MAX_MOCK * 1000);
	/* 0: the system clock again. */
	base_clock_set_mock(0);
	assert_int_equal(base_clock_mock(), 0);
	int64_t now = (int64_t)time(NULL);
	assert_true(base_time() >= now && base_time() <= now + 1);
}

#define ROUNDS 20000

static atomic_bool reader_saw_bad;

/* Reads while the main thread sets: every value read is the system
 * clock's or one of the mock times set (1,000,000,000 + i). */
static void *reader(void *arg)
{
	(void)arg;
	int64_t sys = (int64_t)time(NULL);
	for (int i = 0; i < ROUNDS; i++) {
		int64_t s = base_time();
		int64_t ms = base_time_ms();
		bool is_mock = s >= 1000000000 && s < 1000000000 + ROUNDS;
		bool is_sys = s >= sys && s <= sys + 60;
		bool ms_ok = (ms >= 1000000000000LL && ms < (1000000000LL + ROUNDS) * 1000) ||
		             (ms >= sys * 1000 && ms <= (sys + 61) * 1000);
		if (!(is_mock || is_sys) || !ms_ok)
			atomic_store(&reader_saw_bad, true);
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	(void)state;
	pthread_t th;
	atomic_store(&reader_saw_bad, false);
	assert_int_equal(pthread_create(&th, NULL, reader, NULL), 0);
	for (int i = 0; i < ROUNDS; i++)
		base_clock_set_mock(i % 7 ? 1000000000 + i : 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(atomic_load(&reader_saw_bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_system_clock_without_mock, reset, reset),
	    cmocka_unit_test_setup_teardown(test_mock_set_and_unset, reset, reset),
	    cmocka_unit_test_setup_teardown(test_two_threads, reset, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
