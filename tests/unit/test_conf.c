/*
 * tests/unit/test_conf.c: conf/: defaults, precedence (command line >
 * network section > top of file > default), sections, repeatable keys,
 * negation, chain selection, exact error messages, host:port parsing,
 * -help, the annotated example config, and out-of-memory at every
 * allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "tests/unit/testutil.h"

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */

static char tmpdir[PATH_MAX]; /* per test binary, removed at the end */
static char err[512];

/* Write text into tmpdir/name and return the path (static, overwritten by the next call). */
static const char *write_conf(const char *name, const char *text)
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
static int load_v(struct peerd_conf *c, const char *const *args)
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
static const char *opt(const char *fmt, const char *arg)
{
	static char bufs[8][PATH_MAX * 2];
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, sizeof(bufs[0]), fmt, arg);
	return b;
}

/* Expect conf_load to fail with rc and exactly this message. */
static void expect_error(int rc, int want_rc, const char *want_msg, struct peerd_conf *c)
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

static void expect_ok(int rc)
{
	if (rc != 0)
		fail_msg("conf_load failed: rc %d: %s", rc, err);
}

static int setup_env(void **state)
{
	(void)state;
	char home[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/home", tmpdir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	unsetenv("STATE_DIRECTORY");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* defaults and the data directory                                         */

static void test_defaults(void **state)
{
	(void)state;
	struct peerd_conf c;
	char want[PATH_MAX * 2];

	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd"));
	assert_int_equal(c.params->net, PROTO_NET_MAIN);
	assert_int_equal(c.port, 8333);
	assert_true(c.listen);
	assert_int_equal(c.maxconnections, 125);
	assert_int_equal(c.par, 0);
	assert_int_equal(c.maxreceivebuffer_kb, 5000);
	assert_int_equal(c.maxsendbuffer_kb, 1000);
	assert_int_equal(c.peertimeout_s, 60);
	assert_true(c.logtimestamps);
	assert_true(c.printtoconsole);
	assert_int_equal(c.binaryfreelist, 1024);
	assert_int_equal(c.scriptfreelist, 12500);
	assert_int_equal(c.rpcclienttimeout_s, 30);
	assert_int_equal(c.bind.n + c.connect.n + c.addnode.n + c.debug.n, 0);
	assert_false(c.connect_set);
	assert_int_equal(c.debug_mask, 0);
	assert_null(c.conf_file); /* /nonexistent/dd/peerd.conf is absent: fine */
	assert_string_equal(c.datadir, "/nonexistent/dd");
	assert_string_equal(c.controlsocket, "/nonexistent/dd/control.sock");
	conf_release(&c);
	conf_release(&c); /* twice is harmless */

	/* No -datadir: ~/.peerd. */
	expect_ok(LOAD(&c, "-regtest"));
	snprintf(want, sizeof(want), "%s/.peerd", getenv("HOME"));
	assert_string_equal(c.datadir, want);
	conf_release(&c);

	/* conf_defaults alone allocates nothing and matches. */
	conf_defaults(&c);
	assert_int_equal(c.maxconnections, CONF_DEFAULT_MAXCONNECTIONS);
	assert_int_equal(c.port, 8333);
	assert_null(c.datadir);
	conf_release(&c);
}

static void test_state_directory(void **state)
{
	(void)state;
	struct peerd_conf c;
	char dir[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/state", tmpdir);
	mkdir(dir, 0700);
	char env[PATH_MAX * 2];
	snprintf(env, sizeof(env), "%s:/var/cache/other", dir);
	setenv("STATE_DIRECTORY", env, 1);
	write_conf("state/peerd.conf", "maxconnections=7\n");
	expect_ok(LOAD(&c, "-regtest"));
	assert_string_equal(c.datadir, dir);
	assert_int_equal(c.maxconnections, 7);
	assert_non_null(c.conf_file);
	conf_release(&c);

	/* -datadir wins over $STATE_DIRECTORY. */
	expect_ok(LOAD(&c, "-datadir=/x"));
	assert_string_equal(c.datadir, "/x");
	conf_release(&c);
	unsetenv("STATE_DIRECTORY");

	unsetenv("HOME");
	expect_error(LOAD(&c, "-regtest"), CONF_EVALUE,
	             "cannot find the data directory: HOME is not set (use -datadir)", &c);
}

static void test_datadir_picks_conf(void **state)
{
	(void)state;
	struct peerd_conf c;
	char dd[PATH_MAX + 16];

	snprintf(dd, sizeof(dd), "%s/dd1", tmpdir);
	mkdir(dd, 0700);
	write_conf("dd1/peerd.conf", "datadir=/elsewhere\nport=1234\n");
	expect_ok(LOAD(&c, opt("-datadir=%s", dd)));
	/* The command line's datadir wins; the file was still read from it. */
	assert_string_equal(c.datadir, dd);
	assert_int_equal(c.port, 1234);
	assert_string_equal(c.conf_file, opt("%s/peerd.conf", dd));
	conf_release(&c);

	/* Relative -conf is under the datadir, as bitcoind's. */
	write_conf("dd1/other.conf", "port=4321\n");
	expect_ok(LOAD(&c, opt("-datadir=%s", dd), "-conf=other.conf"));
	assert_int_equal(c.port, 4321);
	assert_string_equal(c.conf_file, opt("%s/other.conf", dd));
	conf_release(&c);

	/* datadir= in the file moves the datadir, not the file. */
	const char *p = write_conf("dd.conf", "datadir=/from/file\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_string_equal(c.datadir, "/from/file");
	assert_string_equal(c.controlsocket, "/from/file/control.sock");
	conf_release(&c);

	/* -noconf: the default file (with an error in it) is not read at all. */
	write_conf("dd1/peerd.conf", "nonsense=1\n");
	expect_ok(LOAD(&c, opt("-datadir=%s", dd), "-noconf"));
	assert_null(c.conf_file);
	conf_release(&c);
	expect_error(LOAD(&c, opt("-datadir=%s", dd)), CONF_EKEY,
	             opt("%s/peerd.conf:1: nonsense=1: unknown key (peerd -help lists them)", dd),
	             &c);
}

/* ---------------------------------------------------------------------- */
/* precedence and sections                                                 */

static void test_precedence(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p = write_conf("prec.conf", "maxconnections=10\n"
	                                        "peertimeout=5\n"
	                                        "[regtest]\n"
	                                        "maxconnections=20\n"
	                                        "[main]\n"
	                                        "maxconnections=40\n");
	const char *conf = opt("-conf=%s", p);

	/* command line > section > top > default */
	expect_ok(LOAD(&c, conf, "-regtest", "-maxconnections=30"));
	assert_int_equal(c.maxconnections, 30);
	assert_int_equal(c.peertimeout_s, 5);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-regtest"));
	assert_int_equal(c.maxconnections, 20);
	assert_int_equal(c.params->net, PROTO_NET_REGTEST);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-chain=signet"));
	assert_int_equal(c.maxconnections, 10);
	assert_int_equal(c.params->net, PROTO_NET_SIGNET);
	conf_release(&c);
	expect_ok(LOAD(&c, conf));
	assert_int_equal(c.maxconnections, 40); /* [main] is the default network */
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-chain=testnet4", "-peertimeout=9"));
	assert_int_equal(c.maxconnections, 10);
	assert_int_equal(c.peertimeout_s, 9);
	assert_int_equal(c.par, 0); /* never set anywhere: default */
	conf_release(&c);

	/* The last value at one level wins. */
	expect_ok(LOAD(&c, conf, "-regtest", "-maxconnections=1", "-maxconnections=2"));
	assert_int_equal(c.maxconnections, 2);
	conf_release(&c);

	/* regtest.key= at the top is [regtest] key=. */
	p = write_conf("dotted.conf", "port=1000\nregtest.port=2000\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-regtest"));
	assert_int_equal(c.port, 2000);
	conf_release(&c);
	/* port= at the top is main's only, as bitcoind's network-only keys:
	 * signet keeps its own default. */
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-signet"));
	assert_int_equal(c.port, 38333);
	conf_release(&c);
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_int_equal(c.port, 1000);
	conf_release(&c);
}

static void test_network_ports(void **state)
{
	(void)state;
	static const struct {
		const char *arg;
		enum proto_net net;
		uint16_t port;
	} cases[] = {
	    {"-chain=main", PROTO_NET_MAIN, 8333},
	    {"-chain=test", PROTO_NET_TESTNET3, 18333},
	    {"-testnet=1", PROTO_NET_TESTNET3, 18333},
	    {"-chain=testnet4", PROTO_NET_TESTNET4, 48333},
	    {"-testnet4", PROTO_NET_TESTNET4, 48333},
	    {"-chain=signet", PROTO_NET_SIGNET, 38333},
	    {"-signet", PROTO_NET_SIGNET, 38333},
	    {"-chain=regtest", PROTO_NET_REGTEST, 18444},
	    {"-regtest", PROTO_NET_REGTEST, 18444},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct peerd_conf c;
		expect_ok(LOAD(&c, "-datadir=/d", cases[i].arg));
		if (c.params->net != cases[i].net || c.port != cases[i].port)
			fail_msg("%s: net %d port %u, expected net %d port %u", cases[i].arg,
			         (int)c.params->net, c.port, (int)cases[i].net, cases[i].port);
		conf_release(&c);
	}
}

static void test_sections_only_their_network(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p = write_conf("sect.conf", "[main]\nport=1111\n"
	                                        "[regtest]\nport=2222\nlisten=0\n"
	                                        "[test]\nport=3333\n"
	                                        "[testnet4]\nport=4444\n"
	                                        "[signet]\n");
	const char *conf = opt("-conf=%s", p);

	expect_ok(LOAD(&c, conf, "-regtest"));
	assert_int_equal(c.port, 2222);
	assert_false(c.listen);
	conf_release(&c);
	expect_ok(LOAD(&c, conf));
	assert_int_equal(c.port, 1111);
	assert_true(c.listen);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-testnet"));
	assert_int_equal(c.port, 3333);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-testnet4"));
	assert_int_equal(c.port, 4444);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-signet"));
	assert_int_equal(c.port, 38333);
	conf_release(&c);
}

/* ---------------------------------------------------------------------- */
/* repeatable keys and negation                                            */

static void assert_list(const struct conf_list *l, const char *const *want, size_t n)
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

static void test_repeatable(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p = write_conf("rep.conf", "addnode=10.0.0.1\n"
	                                       "addnode=node.example:18444\n"
	                                       "bind=127.0.0.1\n"
	                                       "debug=net\n"
	                                       "[regtest]\n"
	                                       "bind=[::1]:18555\n"
	                                       "bind=127.0.0.2:18556\n");
	const char *conf = opt("-conf=%s", p);

	expect_ok(LOAD(&c, conf));
	ASSERT_LIST(&c.addnode, "10.0.0.1", "node.example:18444");
	ASSERT_LIST(&c.bind, "127.0.0.1");
	ASSERT_LIST(&c.debug, "net");
	conf_release(&c);

	/* A section's list replaces the top's; the command line replaces both. */
	expect_ok(LOAD(&c, conf, "-regtest"));
	ASSERT_LIST(&c.bind, "[::1]:18555", "127.0.0.2:18556");
	ASSERT_LIST(&c.addnode, "10.0.0.1", "node.example:18444");
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-regtest", "-addnode=1.2.3.4", "-addnode=[2001:db8::1]:1"));
	ASSERT_LIST(&c.addnode, "1.2.3.4", "[2001:db8::1]:1");
	conf_release(&c);

	/* Negation empties a list at its level, which then still overrides lower levels. */
	expect_ok(LOAD(&c, conf, "-noaddnode"));
	assert_int_equal(c.addnode.n, 0);
	conf_release(&c);
	expect_ok(LOAD(&c, conf, "-addnode=1.1.1.1", "-noaddnode", "-addnode=2.2.2.2"));
	ASSERT_LIST(&c.addnode, "2.2.2.2");
	conf_release(&c);
	p = write_conf("rep2.conf", "addnode=1.1.1.1\nnoaddnode=1\naddnode=3.3.3.3\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	ASSERT_LIST(&c.addnode, "3.3.3.3");
	conf_release(&c);

	/* 64 entries fit; the 65th is an error naming it. */
	char big[64 * 24 + 64] = "";
	for (int i = 0; i < CONF_MAX_LIST; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "addnode=10.0.0.%d\n",
		         i + 1);
	p = write_conf("many.conf", big);
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_int_equal(c.addnode.n, CONF_MAX_LIST);
	conf_release(&c);
	snprintf(big + strlen(big), sizeof(big) - strlen(big), "addnode=10.0.1.1\n");
	p = write_conf("many.conf", big);
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EVALUE,
	             opt("%s:65: addnode=10.0.1.1: too many values (max 64)", p), &c);
}

static void test_debug(void **state)
{
	(void)state;
	struct peerd_conf c;

	expect_ok(LOAD(&c, "-datadir=/d", "-debug=inv", "-debug=ctl"));
	assert_int_equal(c.debug_mask, CONF_DEBUG_INV | CONF_DEBUG_CTL);
	assert_int_equal(c.debug_core, 0);
	assert_true(conf_debug_enabled(&c, "inv"));
	assert_true(conf_debug_enabled(&c, "ctl"));
	assert_false(conf_debug_enabled(&c, "msg"));
	assert_false(conf_debug_enabled(&c, "bogus"));
	conf_release(&c);

	/* Core's names: net is peerd's connection, message, handshake, inventory
	 * and misbehaviour lines; rpc the control socket's; addrman addr's; one
	 * with no peerd lines (qt) is only remembered. debugexclude wins. */
	expect_ok(LOAD(&c, "-datadir=/d", "-debug=net", "-debug=rpc", "-debug=qt", "-debug=addrman",
	               "-debugexclude=addrman"));
	assert_int_equal(c.debug_mask, CONF_DEBUG_NET | CONF_DEBUG_MSG | CONF_DEBUG_HANDSHAKE |
	                                   CONF_DEBUG_INV | CONF_DEBUG_BAN | CONF_DEBUG_CTL);
	assert_int_equal(c.debug_core, 1u << conf_debug_core_index("net") |
	                                   1u << conf_debug_core_index("rpc") |
	                                   1u << conf_debug_core_index("qt"));
	conf_release(&c);
	assert_int_equal(conf_debug_core_index("addrman"), 0);
	assert_int_equal(conf_debug_core_index("zmq"), CONF_CORE_CATS - 1);
	assert_int_equal(conf_debug_core_index("msg"), -1);
	assert_string_equal(conf_debug_core_name(conf_debug_core_index("txreconciliation")),
	                    "txreconciliation");
	expect_ok(LOAD(&c, "-datadir=/d", "-debug=1", "-debugexclude=net"));
	assert_int_equal(c.debug_core, CONF_CORE_ALL & ~(1u << conf_debug_core_index("net")));
	assert_false(conf_debug_enabled(&c, "msg"));
	assert_true(conf_debug_enabled(&c, "main"));
	conf_release(&c);

	/* -debug alone, debug=1 and debug=all: every category. */
	const char *all[] = {"-debug", "-debug=1", "-debug=all"};
	for (size_t i = 0; i < 3; i++) {
		expect_ok(LOAD(&c, "-datadir=/d", all[i]));
		assert_int_equal(c.debug_mask, CONF_DEBUG_ALL);
		assert_true(conf_debug_enabled(&c, "validation"));
		assert_true(conf_debug_enabled(&c, "mempool"));
		conf_release(&c);
	}
	/* debug=0 / none / -nodebug: none (from there on). */
	expect_ok(LOAD(&c, "-datadir=/d", "-debug=net", "-debug=0"));
	assert_int_equal(c.debug_mask, 0);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-debug=net", "-debug=none", "-debug=msg"));
	assert_int_equal(c.debug_mask, CONF_DEBUG_MSG);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-nodebug"));
	assert_int_equal(c.debug_mask, 0);
	conf_release(&c);

	/* An unknown name gets Core's words; so does "none" where Core refuses it. */
	expect_error(LOAD(&c, "-datadir=/d", "-debug=nett"), CONF_EVALUE,
	             "command line: -debug=nett: Unsupported logging category -debug=nett.", &c);
	expect_error(LOAD(&c, "-datadir=/d", "-debugexclude=none"), CONF_EVALUE,
	             "command line: -debugexclude=none: Unsupported logging category "
	             "-debugexclude=none.",
	             &c);
	/* The daemon's own categories are known too, and bits are distinct. */
	static const char *const cats[] = {"net",     "msg",        "ctl",  "conf",
	                                   "mempool", "validation", "main", "handshake",
	                                   "inv",     "addr",       "ban",  "bench"};
	uint32_t seen = 0;
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		uint32_t bit = conf_debug_category(cats[i]);
		if (!bit || (bit & (bit - 1)) || (seen & bit) || (bit & ~(uint32_t)CONF_DEBUG_ALL))
			fail_msg("category %s has bit 0x%x (seen 0x%x)", cats[i], bit, seen);
		seen |= bit;
	}
	assert_int_equal(seen, CONF_DEBUG_ALL);
	expect_ok(LOAD(&c, "-datadir=/d", "-debug=handshake", "-debug=ban"));
	assert_true(conf_debug_enabled(&c, "handshake"));
	assert_true(conf_debug_enabled(&c, "ban"));
	assert_false(conf_debug_enabled(&c, "inv"));
	conf_release(&c);
	assert_int_equal(conf_debug_category("validation"), CONF_DEBUG_VALIDATION);
	assert_int_equal(conf_debug_category("all"), CONF_DEBUG_ALL);
	assert_int_equal(conf_debug_category("x"), 0);
}

static void test_negation(void **state)
{
	(void)state;
	struct peerd_conf c;

	expect_ok(LOAD(&c, "-datadir=/d", "-nolisten", "-nologtimestamps", "-noprinttoconsole"));
	assert_false(c.listen);
	assert_false(c.logtimestamps);
	assert_false(c.printtoconsole);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-nolisten=0", "-nomaxconnections", "-nopar"));
	assert_true(c.listen); /* a double negative, as bitcoind */
	assert_int_equal(c.maxconnections, 0);
	assert_int_equal(c.par, 0);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-listen=0", "-listen"));
	assert_true(c.listen);
	conf_release(&c);

	const char *p = write_conf("neg.conf", "nolisten=1\nnologtimestamps=1\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_false(c.listen);
	assert_false(c.logtimestamps);
	conf_release(&c);
	/* The command line still overrides a negation in the file. */
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-listen=1"));
	assert_true(c.listen);
	conf_release(&c);

	expect_error(LOAD(&c, "-datadir=/d", "-noport"), CONF_EVALUE,
	             "command line: -noport: out of range 1-65535", &c);
	expect_error(LOAD(&c, "-nodatadir"), CONF_EVALUE,
	             "command line: -nodatadir: cannot be negated", &c);
	expect_error(LOAD(&c, "-datadir=/d", "-nolisten=yes"), CONF_EVALUE,
	             "command line: -nolisten=yes: not 0 or 1", &c);
	p = write_conf("neg2.conf", "\nnocontrolsocket=1\n");
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EVALUE,
	             opt("%s:2: nocontrolsocket=1: cannot be negated", p), &c);
	/* -minimumchainwork: Core's hex forms, kept as given; nothing else. */
	assert_int_equal(LOAD(&c, "-datadir=/d", "-minimumchainwork=0x1772"), 0);
	assert_string_equal(c.minimumchainwork, "0x1772");
	conf_release(&c);
	assert_int_equal(LOAD(&c, "-datadir=/d"), 0);
	assert_string_equal(c.minimumchainwork, "");
	conf_release(&c);
	expect_error(LOAD(&c, "-datadir=/d", "-minimumchainwork=12g4"), CONF_EVALUE,
	             "command line: -minimumchainwork=12g4: not a hex number of 1-64 digits", &c);
	expect_error(LOAD(&c, "-datadir=/d", "-minimumchainwork=0x"), CONF_EVALUE,
	             "command line: -minimumchainwork=0x: not a hex number of 1-64 digits", &c);
}

static void test_connect_and_listen(void **state)
{
	(void)state;
	struct peerd_conf c;

	expect_ok(LOAD(&c, "-datadir=/d", "-regtest", "-connect=127.0.0.1:18444"));
	assert_true(c.connect_set);
	ASSERT_LIST(&c.connect, "127.0.0.1:18444");
	assert_false(c.listen); /* as bitcoind: connect implies nolisten */
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-connect=127.0.0.1", "-listen=1"));
	assert_true(c.listen);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-connect=127.0.0.1", "-bind=127.0.0.1"));
	assert_true(c.listen); /* bind implies listen */
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-noconnect"));
	assert_true(c.connect_set);
	assert_int_equal(c.connect.n, 0);
	assert_true(c.listen);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-connect=0"));
	assert_true(c.connect_set);
	assert_int_equal(c.connect.n, 0);
	conf_release(&c);

	const char *p = write_conf("conn.conf", "connect=10.1.1.1\nlisten=1\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_true(c.listen);
	ASSERT_LIST(&c.connect, "10.1.1.1");
	conf_release(&c);
}

/* ---------------------------------------------------------------------- */
/* chain selection                                                         */

static void test_chain_combinations(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *msg =
	    "Invalid combination of -regtest, -signet, -testnet, -testnet4 and -chain. "
	    "Can use at most one.";

	expect_error(LOAD(&c, "-datadir=/d", "-chain=regtest", "-regtest"), CONF_EVALUE, msg, &c);
	expect_error(LOAD(&c, "-datadir=/d", "-regtest", "-signet"), CONF_EVALUE, msg, &c);
	expect_error(LOAD(&c, "-datadir=/d", "-testnet", "-testnet4=1"), CONF_EVALUE, msg, &c);

	/* In the file too, and across file and command line. */
	const char *p = write_conf("chain.conf", "chain=regtest\nregtest=1\n");
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EVALUE, msg, &c);
	p = write_conf("chain2.conf", "signet=1\n");
	expect_error(LOAD(&c, opt("-conf=%s", p), "-regtest"), CONF_EVALUE, msg, &c);
	/* ... unless the command line switches the file's flag off. */
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-nosignet", "-regtest"));
	assert_int_equal(c.params->net, PROTO_NET_REGTEST);
	conf_release(&c);
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_int_equal(c.params->net, PROTO_NET_SIGNET);
	conf_release(&c);
	/* A flag set to 0 does not count. */
	expect_ok(LOAD(&c, "-datadir=/d", "-regtest=0", "-chain=signet"));
	assert_int_equal(c.params->net, PROTO_NET_SIGNET);
	conf_release(&c);

	expect_error(LOAD(&c, "-datadir=/d", "-chain=mainnet"), CONF_EVALUE,
	             "command line: -chain=mainnet: unknown network (main, test, testnet4, signet, "
	             "regtest)",
	             &c);
	p = write_conf("chain3.conf", "[regtest]\nchain=regtest\n");
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EKEY,
	             opt("%s:2: chain=regtest: only valid at the top of the file or on the command "
	                 "line",
	                 p),
	             &c);
	p = write_conf("chain4.conf", "regtest.regtest=1\n");
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EKEY,
	             opt("%s:1: regtest.regtest=1: only valid at the top of the file or on the "
	                 "command line",
	                 p),
	             &c);
}

/* ---------------------------------------------------------------------- */
/* errors: exact messages naming file:line key=value                       */

static void test_file_errors(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p;
	static const struct {
		const char *text;
		int rc;
		const char *msg; /* after "PATH:" */
	} cases[] = {
	    {"# comment\n\nmaxconnections=abc\n", CONF_EVALUE,
	     "3: maxconnections=abc: not a number"},
	    {"maxconnections=12x\n", CONF_EVALUE, "1: maxconnections=12x: not a number"},
	    {"maxconnections= 12\n", CONF_OK, NULL}, /* inih trims blanks around values */
	    {"maxconnections=0x10\n", CONF_EVALUE, "1: maxconnections=0x10: not a number"},
	    {"maxconnections=+5\n", CONF_EVALUE, "1: maxconnections=+5: not a number"},
	    {"maxconnections=-1\n", CONF_EVALUE, "1: maxconnections=-1: out of range 0-100000"},
	    {"maxconnections=100001\n", CONF_EVALUE,
	     "1: maxconnections=100001: out of range 0-100000"},
	    {"maxconnections=99999999999999999999999\n", CONF_EVALUE,
	     "1: maxconnections=99999999999999999999999: out of range 0-100000"},
	    {"maxconnections=\n", CONF_EVALUE, "1: maxconnections=: empty value"},
	    {"port=0\n", CONF_EVALUE, "1: port=0: out of range 1-65535"},
	    {"port=65536\n", CONF_EVALUE, "1: port=65536: out of range 1-65535"},
	    {"par=65\n", CONF_EVALUE, "1: par=65: out of range 0-64"},
	    {"maxreceivebuffer=0\n", CONF_EVALUE, "1: maxreceivebuffer=0: out of range 1-4000000"},
	    {"maxsendbuffer=0\n", CONF_EVALUE, "1: maxsendbuffer=0: out of range 1-4000000"},
	    {"peertimeout=0\n", CONF_EVALUE, "1: peertimeout=0: out of range 1-86400"},
	    {"listen=yes\n", CONF_EVALUE, "1: listen=yes: not 0 or 1"},
	    {"logtimestamps=2\n", CONF_EVALUE, "1: logtimestamps=2: not 0 or 1"},
	    {"maxconn=5\n", CONF_EKEY, "1: maxconn=5: unknown key (peerd -help lists them)"},
	    {"conf=/etc/x.conf\n", CONF_EKEY,
	     "1: conf=/etc/x.conf: only valid on the command line"},
	    {"help=1\n", CONF_EKEY, "1: help=1: only valid on the command line"},
	    {"bind=300.1.1.1\n", CONF_EVALUE, "1: bind=300.1.1.1: not an IPv4 or IPv6 address"},
	    {"bind=localhost\n", CONF_EVALUE, "1: bind=localhost: not an IPv4 or IPv6 address"},
	    {"bind=[::1\n", CONF_EVALUE, "1: bind=[::1: missing ']' after IPv6 address"},
	    {"bind=[::1]:0\n", CONF_EVALUE, "1: bind=[::1]:0: port out of range 1-65535"},
	    {"bind=[::1]x\n", CONF_EVALUE, "1: bind=[::1]x: expected ':<port>' after ']'"},
	    {"bind=[1.2.3.4]:5\n", CONF_EVALUE,
	     "1: bind=[1.2.3.4]:5: not an IPv6 address inside []"},
	    {"bind=1.2.3.4:http\n", CONF_EVALUE, "1: bind=1.2.3.4:http: port is not a number"},
	    {"connect=:8333\n", CONF_EVALUE, "1: connect=:8333: empty host"},
	    {"connect=1.2.3\n", CONF_EVALUE, "1: connect=1.2.3: not an IP address or host name"},
	    {"addnode=bad..name\n", CONF_EVALUE,
	     "1: addnode=bad..name: not an IP address or host name"},
	    {"addnode=host:99999\n", CONF_EVALUE,
	     "1: addnode=host:99999: port out of range 1-65535"},
	    {"addnode=0\n", CONF_EVALUE, "1: addnode=0: not an IP address or host name"},
	    {"justtext\n", CONF_ESYNTAX, "1: justtext: expected key=value"},
	    {"port=1\n  [regtest\n", CONF_ESYNTAX, "2: [regtest: missing ']'"},
	    {"[regtest] x\n", CONF_ESYNTAX, "1: [regtest] x: text after the section header"},
	    {"[testnet]\nport=1\n", CONF_ESYNTAX,
	     "1: [testnet]: unknown section (main, test, testnet4, signet, regtest)"},
	    /* The first error is the one reported, syntax or value. */
	    {"port=x\njusttext\n", CONF_EVALUE, "1: port=x: not a number"},
	    {"justtext\nport=x\n", CONF_ESYNTAX, "1: justtext: expected key=value"},
	    /* A section of another network is checked too. */
	    {"[signet]\nport=abc\n", CONF_EVALUE, "2: port=abc: not a number"},
	    {"[regtest]\nnoport=1\n", CONF_EVALUE, "2: noport=1: out of range 1-65535"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = write_conf("err.conf", cases[i].text);
		int rc = LOAD(&c, opt("-conf=%s", p), "-regtest");
		if (cases[i].rc == CONF_OK) {
			expect_ok(rc);
			conf_release(&c);
			continue;
		}
		char want[PATH_MAX * 3];
		snprintf(want, sizeof(want), "%s:%s", p, cases[i].msg);
		if (rc != cases[i].rc || strcmp(err, want) != 0)
			fail_msg("case %zu: got rc %d \"%s\"\n  expected rc %d \"%s\"", i, rc, err,
			         cases[i].rc, want);
		conf_release(&c);
	}

	/* A line longer than inih's buffer is refused, not split. */
	char longline[400];
	memset(longline, 'a', sizeof(longline));
	memcpy(longline, "datadir=/", 9);
	memcpy(longline + sizeof(longline) - 2, "\n", 2);
	p = write_conf("long.conf", longline);
	assert_int_equal(LOAD(&c, opt("-conf=%s", p)), CONF_ESYNTAX);
	assert_non_null(strstr(err, ":1: line too long (max "));
	conf_release(&c);

	/* A NUL byte. */
	p = write_conf("nul.conf", "port=1\n");
	FILE *f = fopen(p, "ab");
	assert_non_null(f);
	fwrite("por\0t=2\n", 1, 8, f);
	fclose(f);
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_ESYNTAX,
	             opt("%s:2: NUL byte in the line", p), &c);
}

static void test_file_access_errors(void **state)
{
	(void)state;
	struct peerd_conf c;
	char missing[PATH_MAX + 32];

	snprintf(missing, sizeof(missing), "%s/missing.conf", tmpdir);
	expect_error(LOAD(&c, opt("-conf=%s", missing)), CONF_EFILE,
	             opt("%s: cannot read config file: No such file or directory", missing), &c);
	expect_error(LOAD(&c, opt("-conf=%s", tmpdir)), CONF_EFILE,
	             opt("%s: cannot read config file: is a directory", tmpdir), &c);

	/* Over CONF_MAX_FILE_SIZE. */
	const char *p = write_conf("huge.conf", "");
	assert_int_equal(truncate(p, CONF_MAX_FILE_SIZE + 1), 0);
	expect_error(LOAD(&c, opt("-conf=%s", p)), CONF_EFILE,
	             opt("%s: config file larger than 1048576 bytes", p), &c);
}

static void test_cmdline_errors(void **state)
{
	(void)state;
	struct peerd_conf c;
	static const struct {
		const char *arg;
		int rc;
		const char *msg;
	} cases[] = {
	    {"-port=99999", CONF_EVALUE, "command line: -port=99999: out of range 1-65535"},
	    {"--port=99999", CONF_EVALUE, "command line: --port=99999: out of range 1-65535"},
	    {"-port=", CONF_EVALUE, "command line: -port=: empty value"},
	    {"-foo=1", CONF_EUSAGE, "command line: -foo=1: unknown option (-help lists them)"},
	    {"-nofoo", CONF_EUSAGE, "command line: -nofoo: unknown option (-help lists them)"},
	    {"-datadir", CONF_EUSAGE, "command line: -datadir: missing value (use -key=value)"},
	    {"-maxconnections", CONF_EUSAGE,
	     "command line: -maxconnections: missing value (use -key=value)"},
	    {"regtest", CONF_EUSAGE,
	     "command line: unexpected argument 'regtest' (options start with '-')"},
	    {"-", CONF_EUSAGE, "command line: unexpected argument '-' (options start with '-')"},
	    {"--", CONF_EUSAGE, "command line: unexpected argument '--'"},
	    {"-controlsocket=/"
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     "aaaaaaaaaaaaaaaaaaaaaaaa",
	     CONF_EVALUE,
	     "command line: -controlsocket=/"
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     "aaaaaaaaaaaaaaaaaaaaaaaa: too long for a Unix socket (max 107 bytes)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = LOAD(&c, "-datadir=/d", cases[i].arg);
		if (rc != cases[i].rc || strcmp(err, cases[i].msg) != 0)
			fail_msg("%s: got rc %d \"%s\"\n  expected rc %d \"%s\"", cases[i].arg, rc,
			         err, cases[i].rc, cases[i].msg);
		conf_release(&c);
	}

	/* A datadir whose default socket path would not fit in sun_path. */
	char dd[200];
	memset(dd, 'd', sizeof(dd));
	dd[0] = '/';
	dd[sizeof(dd) - 1] = '\0';
	assert_int_equal(LOAD(&c, opt("-datadir=%s", dd)), CONF_EVALUE);
	assert_non_null(strstr(err, "too long for a Unix socket (max 107 bytes); set a shorter "
	                            "-controlsocket"));
	conf_release(&c);
	/* ... which an explicit short socket fixes. */
	expect_ok(LOAD(&c, opt("-datadir=%s", dd), "-controlsocket=/run/p.sock"));
	assert_string_equal(c.controlsocket, "/run/p.sock");
	conf_release(&c);
}

static void test_help_and_version(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *h = conf_help();
	static const char *const keys[] = {
	    "chain",
	    "regtest",
	    "signet",
	    "testnet",
	    "testnet4",
	    "conf",
	    "datadir",
	    "listen",
	    "bind",
	    "port",
	    "connect",
	    "addnode",
	    "maxconnections",
	    "par",
	    "maxreceivebuffer",
	    "maxsendbuffer",
	    "peertimeout",
	    "controlsocket",
	    "debug",
	    "logtimestamps",
	    "binaryfreelist",
	    "scriptfreelist",
	    "printtoconsole",
	    "rpcclienttimeout",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char needle[64];
		snprintf(needle, sizeof(needle), "\n  -%s=", keys[i]);
		if (!strstr(h, needle))
			fail_msg("-help does not list -%s=", keys[i]);
		/* ... and each one parses (so help and parser agree). */
		snprintf(needle, sizeof(needle), "-no%s", keys[i]);
		int rc = LOAD(&c, "-datadir=/d", needle);
		if (rc == CONF_EUSAGE)
			fail_msg("%s: %s", needle, err);
		conf_release(&c);
	}
	static const char *const defaults[] = {
	    "Default: 125\n",       "Default: 5000\n", "Default: 1000\n",
	    "Default: 60\n",        "Default: 1024\n", "Default: 12500\n",
	    "Default: 30\n",        "main 8333",       "regtest 18444",
	    "signet 38333",         "testnet4 48333",  "<datadir>/[<network>/]control.sock",
	    "<datadir>/peerd.conf", "~/.peerd",        "\n  -help\n",
	    "\n  -version\n",
	};
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if (!strstr(h, defaults[i]))
			fail_msg("-help lacks \"%s\"", defaults[i]);
	}
	assert_ptr_equal(conf_help(), h);

	assert_int_equal(LOAD(&c, "-regtest", "-help", "-bogus"), CONF_EHELP);
	assert_true(c.help);
	assert_false(c.version);
	conf_release(&c);
	assert_true(c.help); /* kept across release */
	assert_int_equal(LOAD(&c, "-h"), CONF_EHELP);
	assert_true(c.help);
	conf_release(&c);
	assert_int_equal(LOAD(&c, "-?"), CONF_EHELP);
	conf_release(&c);
	assert_int_equal(LOAD(&c, "-version"), CONF_EHELP);
	assert_true(c.version);
	assert_false(c.help);
	conf_release(&c);
	/* An error before -help is still an error. */
	assert_int_equal(LOAD(&c, "-bogus", "-help"), CONF_EUSAGE);
	conf_release(&c);
	assert_string_equal(conf_strerror(CONF_EKEY), "unknown key");
	assert_string_equal(conf_strerror(5), "unknown error");
	assert_string_equal(conf_strerror(-100), "unknown error");
}

static void test_positional(void **state)
{
	(void)state;
	struct peerd_conf c;
	int argi = -1;
	char *argv[] = {"peerctl", "-datadir=/d", "-regtest", "getpeerinfo", "-1", "x", NULL};

	expect_ok(conf_load_args(&c, 6, argv, CONF_F_POSITIONAL, &argi, err, sizeof(err)));
	assert_int_equal(argi, 3);
	assert_int_equal(c.params->net, PROTO_NET_REGTEST);
	conf_release(&c);

	char *argv2[] = {"peerctl", "-datadir=/d", "--", "-method", NULL};
	expect_ok(conf_load_args(&c, 4, argv2, CONF_F_POSITIONAL, &argi, err, sizeof(err)));
	assert_int_equal(argi, 3);
	conf_release(&c);

	char *argv3[] = {"peerctl", "-datadir=/d", NULL};
	expect_ok(conf_load_args(&c, 2, argv3, CONF_F_POSITIONAL, &argi, err, sizeof(err)));
	assert_int_equal(argi, 2);
	conf_release(&c);
}

static void test_network_only_keys(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p = write_conf("netonly.conf", "port=1111\nbind=127.0.0.9\nmaxconnections=7\n");
	const char *conf = opt("-conf=%s", p);
	/* main: the top of the file applies */
	expect_ok(LOAD(&c, conf));
	assert_int_equal(c.port, 1111);
	ASSERT_LIST(&c.bind, "127.0.0.9");
	conf_release(&c);
	/* regtest: port and bind need [regtest]; other keys still apply */
	expect_ok(LOAD(&c, conf, "-regtest"));
	assert_int_equal(c.port, 18444);
	assert_int_equal(c.bind.n, 0);
	assert_int_equal(c.maxconnections, 7);
	conf_release(&c);
	/* the command line applies on every network */
	expect_ok(LOAD(&c, conf, "-regtest", "-port=2222", "-bind=127.0.0.8"));
	assert_int_equal(c.port, 2222);
	ASSERT_LIST(&c.bind, "127.0.0.8");
	conf_release(&c);
}

static void test_file_syntax_details(void **state)
{
	(void)state;
	struct peerd_conf c;
	/* BOM, CRLF, indentation, '#' anywhere, ';' comments, blank lines, key : value. */
	const char *p = write_conf("syn.conf", "\xEF\xBB\xBF# peerd\r\n"
	                                       "  port = 1234 # trailing comment\r\n"
	                                       "; a semicolon comment\n"
	                                       "\n"
	                                       "\tmaxconnections : 9\n"
	                                       "addnode=1.2.3.4 ; inline\n"
	                                       "   [regtest]   \n"
	                                       "   par=3\n"
	                                       "datadir=/with space/dir");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_int_equal(c.port, 1234); /* main's: port= at the top is network-only */
	conf_release(&c);
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-regtest"));
	assert_int_equal(c.port, 18444);
	assert_int_equal(c.maxconnections, 9);
	assert_int_equal(c.par, 3);
	ASSERT_LIST(&c.addnode, "1.2.3.4");
	assert_string_equal(c.datadir, "/with space/dir");
	assert_string_equal(c.conf_file, p);
	conf_release(&c);

	/* An empty file is fine. */
	p = write_conf("empty.conf", "");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	conf_release(&c);
}

static void test_hostport(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *host;
		uint16_t port;
	} good[] = {
	    {"1.2.3.4", "1.2.3.4", 8333},
	    {"1.2.3.4:18444", "1.2.3.4", 18444},
	    {"[::1]", "::1", 8333},
	    {"[::1]:1", "::1", 1},
	    {"::1", "::1", 8333},
	    {"2001:db8::5", "2001:db8::5", 8333},
	    {"[2001:db8::5]:65535", "2001:db8::5", 65535},
	    {"node.example.org", "node.example.org", 8333},
	    {"node-1.example:42", "node-1.example", 42},
	    {"localhost", "localhost", 8333},
	};
	static const char *const bad[] = {
	    "",     ":1",     "host:",  "host:0", "host:abc", "host:65536", "[1.2.3.4]:1",
	    "[::1", "[::1]:", "[::1]x", "[]:1",   "1.2.3",    "256.1.1.1",  "a..b",
	    "-a",   ".a",     "a b",    "::g",    "a:b:c:d",  "0",          "12345",
	};
	char host[64];
	uint16_t port;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (conf_hostport(good[i].in, 8333, host, sizeof(host), &port) != 0)
			fail_msg("\"%s\" rejected", good[i].in);
		assert_string_equal(host, good[i].host);
		assert_int_equal(port, good[i].port);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (conf_hostport(bad[i], 8333, host, sizeof(host), &port) != CONF_EVALUE)
			fail_msg("\"%s\" accepted as host \"%s\" port %u", bad[i], host, port);
	}
	/* A host that does not fit the caller's buffer. */
	assert_int_equal(conf_hostport("node.example.org", 1, host, 5, &port), CONF_EVALUE);
}

/* The annotated example: every key is in it, and every "#key=value" line is valid. */
static void test_example_config(void **state)
{
	(void)state;
	struct peerd_conf c;
	size_t len;
	uint8_t *text = tu_read_file("conf/peerd.conf", &len);
	char *out = malloc(len + 1);
	assert_non_null(out);
	size_t o = 0;
	int uncommented = 0;
	/* Drop the '#' of every line that is a commented-out setting or section. */
	for (size_t i = 0; i < len;) {
		const char *line = (const char *)text + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) + 1 : len - i;
		size_t skip = 0;
		if (n > 1 && line[0] == '#' && line[1] >= 'a' && line[1] <= 'z') {
			size_t k = 1;
			while (k < n && ((line[k] >= 'a' && line[k] <= 'z') || line[k] == '4'))
				k++;
			if (k < n && line[k] == '=')
				skip = 1;
		} else if (n > 1 && line[0] == '#' && line[1] == '[') {
			skip = 1;
		}
		uncommented += skip ? 1 : 0;
		memcpy(out + o, line + skip, n - skip);
		o += n - skip;
		i += n;
	}
	out[o] = '\0';
	assert_true(uncommented > 20);

	static const char *const keys[] = {
	    "chain",
	    "datadir",
	    "listen",
	    "bind",
	    "port",
	    "connect",
	    "addnode",
	    "maxconnections",
	    "par",
	    "maxreceivebuffer",
	    "maxsendbuffer",
	    "peertimeout",
	    "controlsocket",
	    "debug",
	    "logtimestamps",
	    "binaryfreelist",
	    "scriptfreelist",
	    "printtoconsole",
	    "rpcclienttimeout",
	    "regtest",
	    "signet",
	    "testnet",
	    "testnet4",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char needle[64];
		/* After uncommenting, "#key=" lines start with "key=". */
		snprintf(needle, sizeof(needle), "\n%s=", keys[i]);
		if (!strstr(out, needle) && !strstr(out, needle + 1))
			fail_msg("conf/peerd.conf does not show %s=", keys[i]);
	}

	const char *p = write_conf("example.conf", out);
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	conf_release(&c);
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-chain=regtest"));
	conf_release(&c);
	free(out);
	free(text);
}

/* Every allocation conf_load makes can fail: clean CONF_ENOMEM, no leak, no crash. */
static void test_out_of_memory(void **state)
{
	(void)state;
	struct peerd_conf c;
	const char *p = write_conf("oom.conf", "addnode=1.2.3.4\naddnode=5.6.7.8\ndebug=net\n"
	                                       "[regtest]\nbind=127.0.0.1\nport=1\n");
	const char *conf = opt("-conf=%s", p);
	int failures = 0;
	for (long n = 0; n < 1000; n++) {
		base_alloc_fail_after(n);
		int rc = LOAD(&c, conf, "-regtest", "-connect=9.9.9.9");
		int injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (!injected) {
			expect_ok(rc);
			assert_int_equal(c.port, 1);
			conf_release(&c);
			break;
		}
		failures++;
		if (rc != CONF_ENOMEM)
			fail_msg("allocation %ld failed but conf_load returned %d: %s", n, rc, err);
		assert_null(c.datadir);
		conf_release(&c);
	}
	assert_true(failures > 5);
}

/* Each network's directory under the datadir (Core's layout) and the socket in it. */
static void test_netdir(void **state)
{
	(void)state;
	struct peerd_conf c;
	static const struct {
		const char *arg, *netdir;
	} cases[] = {
	    {"-chain=main", "/d"},
	    {"-regtest", "/d/regtest"},
	    {"-chain=regtest", "/d/regtest"},
	    {"-testnet", "/d/testnet3"},
	    {"-chain=test", "/d/testnet3"},
	    {"-testnet4", "/d/testnet4"},
	    {"-signet", "/d/signet"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		expect_ok(LOAD(&c, "-datadir=/d", cases[i].arg));
		assert_string_equal(c.datadir, "/d");
		assert_string_equal(c.netdir, cases[i].netdir);
		assert_string_equal(c.controlsocket, opt("%s/control.sock", cases[i].netdir));
		assert_true(c.datadir_set);
		conf_release(&c);
		assert_null(c.netdir);
	}
	/* A trailing slash on the datadir is not doubled. */
	expect_ok(LOAD(&c, "-datadir=/d/", "-regtest"));
	assert_string_equal(c.netdir, "/d/regtest");
	conf_release(&c);
	/* The config file stays at the top of the datadir, whatever the network. */
	char dd[PATH_MAX + 16];
	snprintf(dd, sizeof(dd), "%s/nd", tmpdir);
	mkdir(dd, 0700);
	write_conf("nd/peerd.conf", "[regtest]\nport=1234\n");
	expect_ok(LOAD(&c, opt("-datadir=%s", dd), "-regtest"));
	assert_string_equal(c.conf_file, opt("%s/peerd.conf", dd));
	assert_int_equal(c.port, 1234);
	assert_string_equal(c.netdir, opt("%s/regtest", dd));
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), 0);
	conf_release(&c);
	/* datadir= in the file moves the network directory with it. */
	const char *p = write_conf("nd.conf", "signet=1\ndatadir=/from/file\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p)));
	assert_string_equal(c.netdir, "/from/file/signet");
	assert_true(c.datadir_set);
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), CONF_EVALUE);
	assert_string_equal(err, "Specified data directory \"/from/file\" does not exist.");
	conf_release(&c);
}

/* A named datadir must exist (Core's message); the default need not yet. */
static void test_check_datadir(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-regtest"));
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), CONF_EVALUE);
	assert_string_equal(err, "Specified data directory \"/nonexistent/dd\" does not exist.");
	conf_release(&c);
	/* A file is not a directory either. */
	const char *f = write_conf("plainfile", "x");
	expect_ok(LOAD(&c, opt("-datadir=%s", f)));
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), CONF_EVALUE);
	conf_release(&c);
	expect_ok(LOAD(&c, opt("-datadir=%s", tmpdir)));
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), 0);
	conf_release(&c);
	/* The default (~/.peerd, or $STATE_DIRECTORY) is created by peerd when missing. */
	char home[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/nohome", tmpdir);
	setenv("HOME", home, 1);
	unsetenv("STATE_DIRECTORY");
	expect_ok(LOAD(&c, "-regtest"));
	assert_false(c.datadir_set);
	assert_string_equal(c.netdir, opt("%s/.peerd/regtest", home));
	tu_assert_err(conf_check_datadir(&c, err, sizeof(err)), 0);
	conf_release(&c);
}

/* The mempool and relay-policy keys: Core's defaults, amounts as Core's
 * ParseMoney reads them, and Core's cross-key checks with its messages. */
/* -blocksonly: off by default; on, it soft-sets -maxmempool to 5 as Core's
 * init does, and an explicit -maxmempool (either order) still wins. */
static void test_blocksonly(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-regtest"));
	assert_false(c.blocksonly);
	conf_release(&c);

	expect_ok(LOAD(&c, "-regtest", "-blocksonly"));
	assert_true(c.blocksonly);
	assert_int_equal(c.maxmempool_mb, 5);
	conf_release(&c);

	expect_ok(LOAD(&c, "-regtest", "-maxmempool=40", "-blocksonly=1"));
	assert_true(c.blocksonly);
	assert_int_equal(c.maxmempool_mb, 40);
	conf_release(&c);

	expect_ok(LOAD(&c, "-regtest", "-blocksonly", "-noblocksonly"));
	assert_false(c.blocksonly);
	assert_int_equal(c.maxmempool_mb, 300);
	conf_release(&c);

	expect_error(LOAD(&c, "-regtest", "-blocksonly=yes"), CONF_EVALUE,
	             "command line: -blocksonly=yes: not 0 or 1", &c);
}

static void test_mempool_keys(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-regtest"));
	assert_int_equal(c.maxmempool_mb, 300);
	assert_int_equal(c.mempoolexpiry_h, 336);
	assert_true(c.persistmempool && c.permitbaremultisig && c.datacarrier);
	assert_int_equal(c.minrelaytxfee, 1000);
	assert_int_equal(c.incrementalrelayfee, 1000);
	assert_int_equal(c.dustrelayfee, 3000);
	assert_int_equal(c.datacarriersize, 83);
	assert_int_equal(c.acceptnonstdtxn, -1);
	assert_int_equal(c.bytespersigop, 20);
	assert_int_equal(c.limitancestorcount, 25);
	assert_int_equal(c.limitdescendantsize, 101);
	conf_release(&c);

	static const struct {
		const char *v;
		int64_t sat; /* -1: refused */
	} amounts[] = {
	    {"0.00001", 1000},
	    {" 1 ", 100000000},
	    {"1.", 100000000},
	    {".5", 50000000},
	    {"0", 0},
	    {"21000000", 2100000000000000},
	    {"0.12345678", 12345678},
	    {"1.123456789", -1},
	    {"-1", -1},
	    {"+1", -1},
	    {"21000001", -1},
	    {"1e3", -1},
	    {"12345678901", -1},
	    {"1 2", -1},
	    {"0x10", -1},
	};
	for (size_t i = 0; i < sizeof(amounts) / sizeof(amounts[0]); i++) {
		const char *a = opt("-minrelaytxfee=%s", amounts[i].v);
		int rc = LOAD(&c, "-regtest", a);
		if (amounts[i].sat < 0) {
			char want[128];
			snprintf(
			    want, sizeof(want),
			    "command line: %s: Invalid amount for -minrelaytxfee=<amount>: '%s'", a,
			    amounts[i].v);
			expect_error(rc, CONF_EVALUE, want, &c);
		} else {
			expect_ok(rc);
			assert_int_equal(c.minrelaytxfee, amounts[i].sat);
			conf_release(&c);
		}
	}

	expect_ok(LOAD(&c, "-regtest", "-maxmempool=5", "-datacarrier=0", "-datacarriersize=0",
	               "-acceptnonstdtxn=1", "-limitdescendantsize=125"));
	assert_int_equal(c.maxmempool_mb, 5);
	assert_false(c.datacarrier);
	assert_int_equal(c.datacarriersize, 0);
	assert_int_equal(c.acceptnonstdtxn, 1);
	conf_release(&c);
	expect_error(LOAD(&c, "-regtest", "-maxmempool=4"), CONF_EVALUE,
	             "-maxmempool must be at least 5 MB", &c);
	expect_error(LOAD(&c, "-regtest", "-limitdescendantsize=126", "-maxmempool=5"), CONF_EVALUE,
	             "-maxmempool must be at least 6 MB", &c);
	expect_error(LOAD(&c, "-acceptnonstdtxn=1"), CONF_EVALUE,
	             "acceptnonstdtxn is not currently supported for main chain", &c);
	expect_error(LOAD(&c, "-regtest", "-mempoolexpiry=0"), CONF_EVALUE,
	             "command line: -mempoolexpiry=0: out of range 1-1000000", &c);
}

/* metricsbind=: an IP literal with an optional port; 0 or -nometricsbind turns it off. */
static void test_metricsbind(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd"));
	assert_string_equal(c.metricsbind, "");
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-metricsbind=127.0.0.1:9400"));
	assert_string_equal(c.metricsbind, "127.0.0.1:9400");
	char host[CONF_MAX_HOST + 1];
	uint16_t port;
	assert_int_equal(
	    conf_hostport(c.metricsbind, CONF_DEFAULT_METRICSPORT, host, sizeof(host), &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9400);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-metricsbind=[::1]", "-nometricsbind"));
	assert_string_equal(c.metricsbind, "");
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-metricsbind=::1", "-metricsbind=0"));
	assert_string_equal(c.metricsbind, "");
	conf_release(&c);
	expect_error(LOAD(&c, "-datadir=/nonexistent/dd", "-metricsbind=localhost:9332"),
	             CONF_EVALUE,
	             "command line: -metricsbind=localhost:9332: not an IPv4 or IPv6 address", &c);
	expect_error(LOAD(&c, "-datadir=/nonexistent/dd", "-metricsbind=127.0.0.1:70000"),
	             CONF_EVALUE,
	             "command line: -metricsbind=127.0.0.1:70000: port out of range 1-65535", &c);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/peerd-test-conf-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_defaults, setup_env),
	    cmocka_unit_test_setup(test_state_directory, setup_env),
	    cmocka_unit_test_setup(test_datadir_picks_conf, setup_env),
	    cmocka_unit_test_setup(test_precedence, setup_env),
	    cmocka_unit_test_setup(test_network_only_keys, setup_env),
	    cmocka_unit_test_setup(test_network_ports, setup_env),
	    cmocka_unit_test_setup(test_sections_only_their_network, setup_env),
	    cmocka_unit_test_setup(test_repeatable, setup_env),
	    cmocka_unit_test_setup(test_debug, setup_env),
	    cmocka_unit_test_setup(test_negation, setup_env),
	    cmocka_unit_test_setup(test_connect_and_listen, setup_env),
	    cmocka_unit_test_setup(test_chain_combinations, setup_env),
	    cmocka_unit_test_setup(test_file_errors, setup_env),
	    cmocka_unit_test_setup(test_file_access_errors, setup_env),
	    cmocka_unit_test_setup(test_cmdline_errors, setup_env),
	    cmocka_unit_test_setup(test_help_and_version, setup_env),
	    cmocka_unit_test_setup(test_positional, setup_env),
	    cmocka_unit_test_setup(test_file_syntax_details, setup_env),
	    cmocka_unit_test(test_hostport),
	    cmocka_unit_test_setup(test_netdir, setup_env),
	    cmocka_unit_test_setup(test_check_datadir, setup_env),
	    cmocka_unit_test_setup(test_mempool_keys, setup_env),
	    cmocka_unit_test_setup(test_blocksonly, setup_env),
	    cmocka_unit_test_setup(test_example_config, setup_env),
	    cmocka_unit_test_setup(test_out_of_memory, setup_env),
	    cmocka_unit_test_setup(test_metricsbind, setup_env),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	proto_freelist_drain();
	return rc;
}
