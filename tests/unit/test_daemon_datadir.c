/*
 * tests/unit/test_daemon_datadir.c: daemon/datadir.c: the network's
 * directory is made, the default datadir too, and <netdir>/.lock keeps a
 * second daemon out until the first lets go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <sys/stat.h>
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* Point a fixture at datadir `dd` on regtest: netdir dd/regtest. */
static void use_datadir(struct tf *t, const char *dd, bool named)
{
	char buf[512];
	xfree(t->conf.datadir);
	xfree(t->conf.netdir);
	snprintf(buf, sizeof(buf), "%s/regtest", dd);
	t->conf.datadir = xstrdup(dd);
	t->conf.netdir = xstrdup(buf);
	t->conf.datadir_set = named;
	assert_non_null(t->conf.datadir);
	assert_non_null(t->conf.netdir);
}

static void rm_netdir(const char *dd)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s/regtest", dd);
	tf_rmdir(buf);
}

static void test_lock_keeps_second_out(void **state)
{
	struct tf *t = *state;
	struct tf *u = tf_new();
	char dd[256];
	snprintf(dd, sizeof(dd), "%s", t->dir);
	use_datadir(t, dd, true);
	use_datadir(u, dd, true);

	assert_int_equal(datadir_open(t->d), 0);
	struct stat st;
	assert_int_equal(stat(t->conf.netdir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	char lock[600];
	snprintf(lock, sizeof(lock), "%s/.lock", t->conf.netdir);
	assert_int_equal(stat(lock, &st), 0);

	/* The second daemon (another open file description, as another
	 * process would have) is refused with Core's words. */
	assert_int_equal(datadir_open(u->d), -EAGAIN);
	char want[600];
	snprintf(want, sizeof(want),
	         "Cannot obtain a lock on directory %s. peerd is probably already running.",
	         u->conf.netdir);
	assert_true(tf_log_contains(u, want));
	assert_false(u->d->locked);

	/* Once the first lets go, the second gets it; closing twice is harmless. */
	datadir_close(t->d);
	datadir_close(t->d);
	assert_int_equal(datadir_open(u->d), 0);
	datadir_close(u->d);
	rm_netdir(dd);
	tf_free(u);
}

/* The default datadir is made (with its parents); a named one is not. */
static void test_default_created(void **state)
{
	struct tf *t = *state;
	char dd[256];
	snprintf(dd, sizeof(dd), "%s/home/.peerd", t->dir);
	use_datadir(t, dd, false);
	assert_int_equal(datadir_open(t->d), 0);
	struct stat st;
	assert_int_equal(stat(t->conf.netdir, &st), 0);
	datadir_close(t->d);
	rm_netdir(dd);
	rmdir(dd);
	snprintf(dd, sizeof(dd), "%s/home", t->dir);
	rmdir(dd);

	snprintf(dd, sizeof(dd), "%s/typo", t->dir);
	use_datadir(t, dd, true);
	assert_int_equal(datadir_open(t->d), -ENOENT);
	assert_int_equal(stat(dd, &st), -1);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lock_keeps_second_out, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_default_created, tf_setup, tf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
