/*
 * tests/unit/test_conf_seeds.c: the seed options as Core 29 reads them:
 * -dnsseed on by default and off (soft) with -connect (even -noconnect or
 * connect=0) or -maxconnections=0, an explicit -dnsseed winning; Core's
 * error for -forcednsseed without DNS seeds; -fixedseeds; and the hidden
 * test option -dnsserver (checked, not in -help).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_conf_fixture.h"

static const char forced_msg[] = "Cannot set -forcednsseed to true when setting -dnsseed to false.";

static void check_seeds(const char *const *args, size_t n, bool dnsseed, bool fixed, bool force)
{
	struct peerd_conf c;
	const char *argv[8] = {0};
	argv[0] = "-datadir=/nonexistent/dd";
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = args[i];
	expect_ok(load_v(&c, argv));
	if (c.dnsseed != dnsseed || c.fixedseeds != fixed || c.forcednsseed != force)
		fail_msg("%s %s: dnsseed %d fixedseeds %d forcednsseed %d, expected %d %d %d",
		         n ? args[0] : "", n > 1 ? args[1] : "", c.dnsseed, c.fixedseeds,
		         c.forcednsseed, dnsseed, fixed, force);
	conf_release(&c);
}

#define CHECK(dns, fixed, force, ...)                                                              \
	do {                                                                                       \
		const char *const a_[] = {__VA_ARGS__};                                            \
		check_seeds(a_, sizeof(a_) / sizeof(a_[0]), dns, fixed, force);                    \
	} while (0)

static void test_dnsseed_defaults(void **state)
{
	(void)state;
	CHECK(true, true, false, "-chain=main");
	CHECK(false, true, false, "-connect=127.0.0.1");
	CHECK(false, true, false, "-connect=0");
	CHECK(false, true, false, "-noconnect");
	CHECK(false, true, false, "-maxconnections=0");
	/* An explicit value wins over the soft setting, as Core's SoftSetBoolArg. */
	CHECK(true, true, false, "-connect=127.0.0.1", "-dnsseed=1");
	CHECK(false, false, false, "-dnsseed=0", "-fixedseeds=0");
	CHECK(true, true, true, "-forcednsseed=1");
	CHECK(true, true, true, "-connect=0", "-dnsseed=1", "-forcednsseed");
}

static void test_forcednsseed_needs_dnsseed(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_error(LOAD(&c, "-dnsseed=0", "-forcednsseed=1"), CONF_EVALUE, forced_msg, &c);
	/* Core: -connect turned -dnsseed off, so the same error. */
	expect_error(LOAD(&c, "-connect=0", "-forcednsseed=1"), CONF_EVALUE, forced_msg, &c);
	expect_error(LOAD(&c, "-maxconnections=0", "-forcednsseed"), CONF_EVALUE, forced_msg, &c);
}

static void test_dnsserver(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd"));
	assert_string_equal(c.dnsserver, "");
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-dnsserver=127.0.0.1:5353"));
	assert_string_equal(c.dnsserver, "127.0.0.1:5353");
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-dnsserver=[::1]:53"));
	assert_string_equal(c.dnsserver, "[::1]:53");
	conf_release(&c);
	/* An address, not a name: the resolver cannot look its own server up. */
	assert_int_equal(LOAD(&c, "-dnsserver=dns.example.org"), CONF_EVALUE);
	conf_release(&c);
	/* A test option: not in -help; Core's seed options are, with Core's words. */
	const char *help = conf_help();
	assert_null(strstr(help, "-dnsserver"));
	assert_non_null(
	    strstr(help, "Query for peer addresses via DNS lookup, if low on addresses"));
	assert_non_null(strstr(help, "Allow fixed seeds if DNS seeds don't provide peers"));
	assert_non_null(strstr(help, "Always query for peer addresses via DNS lookup"));
}

int main(void)
{
	if (tc_begin())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_dnsseed_defaults, setup_env),
	    cmocka_unit_test_setup(test_forcednsseed_needs_dnsseed, setup_env),
	    cmocka_unit_test_setup(test_dnsserver, setup_env),
	};
	return tc_end(cmocka_run_group_tests(tests, NULL, NULL));
}
