/* tests/unit/test_proto_money.c: proto_format_money, the one copy of Core's
 * FormatMoney that chain/, mempool/ and peertool print amounts with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "proto/proto.h"

static void check(int64_t sats, const char *want)
{
	char got[PROTO_MONEY_STRLEN];
	memset(got, 'x', sizeof(got));
	proto_format_money(sats, got);
	if (strcmp(got, want) != 0)
		fail_msg("proto_format_money(%lld): got \"%s\", want \"%s\"", (long long)sats, got,
		         want);
}

/* Every power of ten from a satoshi to a hundred million coins: the
 * trimming stops at two decimals and never eats the integer part. */
static void test_powers_of_ten(void **state)
{
	(void)state;
	check(0, "0.00");
	check(1, "0.00000001");
	check(10, "0.0000001");
	check(100, "0.000001");
	check(1000, "0.00001");
	check(10000, "0.0001");
	check(100000, "0.001");
	check(1000000, "0.01");
	check(10000000, "0.10");
	check(PROTO_COIN, "1.00");
	check(10 * PROTO_COIN, "10.00");
	check(100000000 * PROTO_COIN, "100000000.00");
	check(PROTO_MAX_MONEY, "21000000.00");
}

static void test_digits_kept(void **state)
{
	(void)state;
	check(123456789, "1.23456789");
	check(12345678900000LL, "123456.789");
	check(PROTO_COIN / 10000 * 123456789, "12345.6789");
	check(50, "0.0000005");
	check(PROTO_COIN + 1, "1.00000001");
	check(PROTO_COIN + 10000000, "1.10");
}

/* Negative amounts (a modified fee after prioritisetransaction, a fee
 * difference) print with a sign. The three copies this replaced trimmed
 * with different loop guards (`n > 3`, `n > 0`, isdigit) and two negated
 * the amount as a signed int64: INT64_MIN was undefined behaviour there
 * (UBSan: "negation ... cannot be represented"). Core 29 prints it. */
static void test_negative_and_extremes(void **state)
{
	(void)state;
	check(-1, "-0.00000001");
	check(-10000000, "-0.10");
	check(-PROTO_COIN, "-1.00");
	check(-123456789, "-1.23456789");
	check(INT64_MAX, "92233720368.54775807");
	check(INT64_MIN + 1, "-92233720368.54775807");
	check(INT64_MIN, "-92233720368.54775808");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_powers_of_ten),
	    cmocka_unit_test(test_digits_kept),
	    cmocka_unit_test(test_negative_and_extremes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
