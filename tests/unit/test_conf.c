/*
 * tests/unit/test_conf.c: conf/: what a config means: defaults and the data
 * directory, precedence (command line > network section > top of file >
 * default), sections, repeatable keys, negation and chain selection.
 * Errors are in test_conf_errors.c, particular keys in test_conf_keys.c,
 * the shared helpers in test_conf_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_conf_fixture.h"

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
	static const char *const cats[] = {"net",        "msg",   "ctl",       "conf", "mempool",
	                                   "validation", "main",  "handshake", "inv",  "addr",
	                                   "ban",        "bench", "mempoolrej"};
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

int main(void)
{
	if (tc_begin())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_defaults, setup_env),
	    cmocka_unit_test_setup(test_state_directory, setup_env),
	    cmocka_unit_test_setup(test_datadir_picks_conf, setup_env),
	    cmocka_unit_test_setup(test_precedence, setup_env),
	    cmocka_unit_test_setup(test_network_ports, setup_env),
	    cmocka_unit_test_setup(test_sections_only_their_network, setup_env),
	    cmocka_unit_test_setup(test_repeatable, setup_env),
	    cmocka_unit_test_setup(test_debug, setup_env),
	    cmocka_unit_test_setup(test_negation, setup_env),
	    cmocka_unit_test_setup(test_connect_and_listen, setup_env),
	    cmocka_unit_test_setup(test_chain_combinations, setup_env),
	    cmocka_unit_test_setup(test_netdir, setup_env),
	    cmocka_unit_test_setup(test_check_datadir, setup_env),
	};
	return tc_end(cmocka_run_group_tests(tests, NULL, NULL));
}
