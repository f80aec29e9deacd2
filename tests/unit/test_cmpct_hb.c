/*
 * tests/unit/test_cmpct_hb.c: the choice of high-bandwidth compact-block
 * peers (daemon/sync/cmpct_hb.c, sync_cmpct_hb_pick), as Core 29's
 * MaybeSetPeerAsAnnouncingHeaderAndIDs: at most 3, the newest giver last,
 * the oldest demoted, and an inbound newcomer never pushing out the last
 * outbound peer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "daemon/sync/sync.h"

/* Peer kinds by id: 'o' outbound, 'i' inbound, anything else gone. */
static int kind_of(void *ctx, uint64_t id)
{
	const char *kinds = ctx;
	if (id >= strlen(kinds))
		return -1;
	return kinds[id] == 'o' ? 0 : kinds[id] == 'i' ? 1 : -1;
}

/* Runs one pick on list (n of them) and checks the list after it. */
static struct sync_cmpct_hb_pick pick(uint64_t *list, uint32_t *n, uint64_t id, const char *kinds,
                                      const uint64_t *want, uint32_t n_want)
{
	struct sync_cmpct_hb_pick r = sync_cmpct_hb_pick(
	    list, n, id, kind_of((void *)kinds, id) == 1, kind_of, (void *)kinds);
	assert_int_equal(*n, n_want);
	for (uint32_t i = 0; i < n_want; i++)
		assert_int_equal(list[i], want[i]);
	return r;
}

static void test_fill_and_refresh(void **state)
{
	(void)state;
	/* ids 1..4 outbound */
	const char *k = "xoooo";
	uint64_t l[SYNC_CMPCT_HB_MAX];
	uint32_t n = 0;
	struct sync_cmpct_hb_pick r = pick(l, &n, 1, k, (uint64_t[]){1}, 1);
	assert_true(r.promote);
	assert_false(r.demote);
	pick(l, &n, 2, k, (uint64_t[]){1, 2}, 2);
	pick(l, &n, 3, k, (uint64_t[]){1, 2, 3}, 3);
	/* Already there: moved to the end, no message either way. */
	r = pick(l, &n, 1, k, (uint64_t[]){2, 3, 1}, 3);
	assert_false(r.promote);
	assert_false(r.demote);
	/* A fourth: the oldest (2) is demoted. */
	r = pick(l, &n, 4, k, (uint64_t[]){3, 1, 4}, 3);
	assert_true(r.promote);
	assert_true(r.demote);
	assert_int_equal(r.demoted, 2);
}

static void test_inbound_keeps_last_outbound(void **state)
{
	(void)state;
	/* 1 outbound, 2..4 inbound */
	const char *k = "xoiii";
	uint64_t l[SYNC_CMPCT_HB_MAX] = {1, 2, 3};
	uint32_t n = 3;
	/* The only outbound is the oldest: it swaps with the second, which goes. */
	struct sync_cmpct_hb_pick r = pick(l, &n, 4, k, (uint64_t[]){1, 3, 4}, 3);
	assert_true(r.demote);
	assert_int_equal(r.demoted, 2);
	/* Again: 1 is the oldest and the only outbound once more, 3 goes. */
	r = pick(l, &n, 2, k, (uint64_t[]){1, 4, 2}, 3);
	assert_int_equal(r.demoted, 3);
}

static void test_two_outbound_oldest_goes(void **state)
{
	(void)state;
	const char *k = "xooii";
	uint64_t l[SYNC_CMPCT_HB_MAX] = {1, 2, 3};
	uint32_t n = 3;
	/* Two outbound: an inbound newcomer may demote one of them. */
	struct sync_cmpct_hb_pick r = pick(l, &n, 4, k, (uint64_t[]){2, 3, 4}, 3);
	assert_int_equal(r.demoted, 1);
}

static void test_outbound_newcomer_and_gone(void **state)
{
	(void)state;
	/* An outbound newcomer needs no protection: the oldest goes. */
	const char *k = "xoiio";
	uint64_t l[SYNC_CMPCT_HB_MAX] = {1, 2, 3};
	uint32_t n = 3;
	struct sync_cmpct_hb_pick r = pick(l, &n, 4, k, (uint64_t[]){2, 3, 4}, 3);
	assert_int_equal(r.demoted, 1);
	/* A peer that left (id 1, gone) counts as no outbound: with the
	 * one outbound second, an inbound newcomer demotes the gone one. */
	const char *k2 = "xgoii";
	uint64_t l2[SYNC_CMPCT_HB_MAX] = {1, 2, 3};
	n = 3;
	r = pick(l2, &n, 4, k2, (uint64_t[]){2, 3, 4}, 3);
	assert_int_equal(r.demoted, 1);
	/* No outbound at all: the oldest inbound goes. */
	const char *k3 = "xiiii";
	uint64_t l3[SYNC_CMPCT_HB_MAX] = {1, 2, 3};
	n = 3;
	r = pick(l3, &n, 4, k3, (uint64_t[]){2, 3, 4}, 3);
	assert_int_equal(r.demoted, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fill_and_refresh),
	    cmocka_unit_test(test_inbound_keeps_last_outbound),
	    cmocka_unit_test(test_two_outbound_oldest_goes),
	    cmocka_unit_test(test_outbound_newcomer_and_gone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
