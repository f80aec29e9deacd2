/**
 * tests/unit/test_conf_fixture.h: what the test_conf*.c unit tests share:
 * a temporary directory per test binary, config files written into it,
 * conf_load with an argv given inline (LOAD), and the checks on its
 * outcome (expect_ok, expect_error with the exact message).
 *
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>, once
 * per test binary. main() brackets the run with tc_begin() and tc_end().
 */
#ifndef PEERD_TEST_CONF_FIXTURE_H
#define PEERD_TEST_CONF_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "tests/unit/testutil.h"

/* Each test binary uses only some helpers. */
#define TC_FN static __attribute__((unused))

static char tmpdir[PATH_MAX]; /* per test binary, removed at the end */
static char err[512];

/* Write text into tmpdir/name and return the path (static, overwritten by the next call). */
TC_FN const char *write_conf(const char *name, const char *text)
{
	static char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	return path;
}

/* conf_load with argv = {"peerd", args..., NULL}. */
TC_FN int load_v(struct peerd_conf *c, const char *const *args)
{
	char *argv[64];
	int argc = 0;
	argv[argc++] = "peerd";
	for (; *args; args++) {
		assert_true(argc < 63);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	err[0] = '\0';
	return conf_load(c, argc, argv, err, sizeof(err));
}
#define LOAD(c, ...) load_v(c, (const char *const[]){__VA_ARGS__, NULL})

/* An option string built at run time (paths under tmpdir). */
TC_FN const char *opt(const char *fmt, const char *arg)
{
	static char bufs[8][PATH_MAX * 2 + 64]; /* a write_conf path and the option name */
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, sizeof(bufs[0]), fmt, arg);
	return b;
}

/* Expect conf_load to fail with rc and exactly this message. */
TC_FN void expect_error(int rc, int want_rc, const char *want_msg, struct peerd_conf *c)
{
	if (rc != want_rc)
		fail_msg("rc %d (%s) != expected %d; message: \"%s\"", rc, conf_strerror(rc),
		         want_rc, err);
	assert_string_equal(err, want_msg);
	/* A failed load leaves nothing allocated. */
	assert_null(c->datadir);
	assert_null(c->controlsocket);
	assert_int_equal(c->bind.n + c->connect.n + c->addnode.n + c->debug.n, 0);
	conf_release(c);
}

TC_FN void expect_ok(int rc)
{
	if (rc != 0)
		fail_msg("conf_load failed: rc %d: %s", rc, err);
}

TC_FN int setup_env(void **state)
{
	(void)state;
	char home[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/home", tmpdir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	unsetenv("STATE_DIRECTORY");
	return 0;
}

/* A conf_list holds exactly these strings, in this order. */
TC_FN void assert_list(const struct conf_list *l, const char *const *want, size_t n)
{
	if (l->n != n)
		fail_msg("list has %zu entries, expected %zu (first: %s)", l->n, n,
		         l->n ? l->v[0] : "-");
	for (size_t i = 0; i < n; i++)
		assert_string_equal(l->v[i], want[i]);
}
#define ASSERT_LIST(l, ...)                                                                        \
	assert_list(l, (const char *const[]){__VA_ARGS__},                                         \
	            sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/** Make this binary's tmpdir (before the tests run); 0, or 1 after perror. */
TC_FN int tc_begin(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/peerd-test-conf-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	return 0;
}

/** Remove the tmpdir and drain the free lists; returns rc (the tests' verdict). */
TC_FN int tc_end(int rc)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	proto_freelist_drain();
	return rc;
}

#endif
