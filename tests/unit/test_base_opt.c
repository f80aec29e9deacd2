/*
 * tests/unit/test_base_opt.c: base/opt.c, the option parser every peertool
 * subcommand uses: each spelling of an option means the same, flags refuse
 * values, help and usage errors give their exit codes, and arguments keep
 * their order around the options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/opt.h"

enum { O_PREVOUTS, O_FLAGS, O_NO_POW };

static const struct base_opt_spec SPECS[] = {
    {"prevouts", O_PREVOUTS, true},
    {"flags", O_FLAGS, true},
    {"no-pow", O_NO_POW, false},
};

static int helped;
static void help(FILE *f)
{
	(void)f;
	helped++;
}

static const struct base_opt_cmd CMD = {"peertool", "verify-block", "usage: test", SPECS, 3, help};

struct seen {
	const char *prevouts, *flags;
	int no_pow;
};

static int set(void *ctx, int id, const char *val)
{
	struct seen *s = ctx;
	if (id == O_PREVOUTS)
		s->prevouts = val;
	else if (id == O_FLAGS)
		s->flags = val;
	else
		s->no_pow++;
	return 0;
}

/* Parse a NULL-terminated list of words after the command name. */
static int parse(struct seen *s, const char **pos, size_t max, size_t *n, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, n);
	argv[argc++] = (char *)"verify-block";
	for (const char *a; (a = va_arg(ap, const char *)) != NULL;)
		argv[argc++] = (char *)a;
	va_end(ap);
	memset(s, 0, sizeof(*s));
	return base_opt_parse(&CMD, argc, argv, set, s, pos, max, n);
}

static void test_every_spelling_is_the_same(void **state)
{
	(void)state;
	static const char *const forms[][3] = {
	    {"--prevouts", "p.txt", NULL},
	    {"--prevouts=p.txt", NULL, NULL},
	    {"-prevouts=p.txt", NULL, NULL},
	    {"-prevouts", "p.txt", NULL},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct seen s;
		const char *pos[2];
		size_t n;
		int rc = parse(&s, pos, 2, &n, forms[i][0], forms[i][1] ? forms[i][1] : "block",
		               forms[i][1] ? "block" : NULL, NULL);
		assert_int_equal(rc, 0);
		assert_non_null(s.prevouts);
		assert_string_equal(s.prevouts, "p.txt");
		assert_int_equal(n, 1);
		assert_string_equal(pos[0], "block");
	}
}

static void test_values_and_order(void **state)
{
	(void)state;
	struct seen s;
	const char *pos[3];
	size_t n;
	/* An '=' inside a value is the value's; a value may start with '-'. */
	assert_int_equal(parse(&s, pos, 3, &n, "a", "--flags=P2SH=x", "b", "--prevouts", "-", "--",
	                       "--no-pow", NULL),
	                 0);
	assert_string_equal(s.flags, "P2SH=x");
	assert_string_equal(s.prevouts, "-");
	assert_int_equal(s.no_pow, 0); /* after "--" it is an argument */
	assert_int_equal(n, 3);
	assert_string_equal(pos[0], "a");
	assert_string_equal(pos[1], "b");
	assert_string_equal(pos[2], "--no-pow");
	/* "-" alone is an argument (stdin) */
	assert_int_equal(parse(&s, pos, 3, &n, "-", "--no-pow", NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(pos[0], "-");
	assert_int_equal(s.no_pow, 1);
}

static void test_usage_errors(void **state)
{
	(void)state;
	struct seen s;
	const char *pos[1];
	size_t n;
	assert_int_equal(parse(&s, pos, 1, &n, "--bogus", NULL), BASE_OPT_USAGE);
	assert_int_equal(parse(&s, pos, 1, &n, "--no-pow=1", NULL), BASE_OPT_USAGE);
	assert_int_equal(parse(&s, pos, 1, &n, "--flags", NULL), BASE_OPT_USAGE);
	assert_int_equal(parse(&s, pos, 1, &n, "a", "b", NULL), BASE_OPT_USAGE);
	/* a prefix is not an option */
	assert_int_equal(parse(&s, pos, 1, &n, "--prev=x", NULL), BASE_OPT_USAGE);
}

static void test_help(void **state)
{
	(void)state;
	struct seen s;
	const char *pos[1];
	size_t n;
	helped = 0;
	assert_int_equal(parse(&s, pos, 1, &n, "-h", NULL), BASE_OPT_HELP);
	assert_int_equal(parse(&s, pos, 1, &n, "x", "-help", NULL), BASE_OPT_HELP);
	assert_int_equal(parse(&s, pos, 1, &n, "--help", "--bogus", NULL), BASE_OPT_HELP);
	assert_int_equal(helped, 3);
}

static void test_uint(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_int_equal(base_opt_uint(&CMD, "par", "64", 0, 64, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(base_opt_uint(&CMD, "par", "65", 0, 64, &v), BASE_OPT_USAGE);
	assert_int_equal(base_opt_uint(&CMD, "par", "-1", 0, 64, &v), BASE_OPT_USAGE);
	assert_int_equal(base_opt_uint(&CMD, "par", "", 0, 64, &v), BASE_OPT_USAGE);
	assert_int_equal(base_opt_uint(&CMD, "par", "1x", 0, 64, &v), BASE_OPT_USAGE);
	assert_int_equal(base_opt_uint(&CMD, "par", "99999999999999999999", 0, 64, &v),
	                 BASE_OPT_USAGE);
	assert_int_equal(v, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_spelling_is_the_same),
	    cmocka_unit_test(test_values_and_order),
	    cmocka_unit_test(test_usage_errors),
	    cmocka_unit_test(test_help),
	    cmocka_unit_test(test_uint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
