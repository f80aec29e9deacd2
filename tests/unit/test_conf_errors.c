/*
 * tests/unit/test_conf_errors.c: conf/'s errors: the exact messages naming
 * file:line key=value, command-line and file syntax, unreadable files,
 * -help and -version, and out-of-memory at every allocation conf_load makes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_conf_fixture.h"

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
	    {"peertimeout=0\n", CONF_EVALUE, "1: peertimeout=0: out of range 1-2147483647"},
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
	/* -blockfilterindex as Core reads it: bare or 1 is every type, basic
	 * the one there is, 0 or negated none, another name Core's error. */
	static const struct {
		const char *arg;
		bool on;
	} bfi[] = {{"-blockfilterindex", true},       {"-blockfilterindex=1", true},
	           {"-blockfilterindex=basic", true}, {"-blockfilterindex=0", false},
	           {"-noblockfilterindex", false},    {"-txindex", false}};
	for (size_t i = 0; i < sizeof(bfi) / sizeof(bfi[0]); i++) {
		expect_ok(LOAD(&c, "-datadir=/d", bfi[i].arg));
		assert_int_equal(c.blockfilterindex, bfi[i].on);
		assert_int_equal(c.txindex, strcmp(bfi[i].arg, "-txindex") == 0);
		conf_release(&c);
	}
	expect_error(LOAD(&c, "-datadir=/d", "-blockfilterindex=extended"), CONF_EVALUE,
	             "Unknown -blockfilterindex value extended.", &c);
	/* -peerblockfilters (BIP157) needs the basic filter index: Core's error. */
	expect_error(LOAD(&c, "-datadir=/d", "-peerblockfilters"), CONF_EVALUE,
	             "Cannot set -peerblockfilters without -blockfilterindex.", &c);
	expect_error(LOAD(&c, "-datadir=/d", "-blockfilterindex=0", "-peerblockfilters=1"),
	             CONF_EVALUE, "Cannot set -peerblockfilters without -blockfilterindex.", &c);
	expect_ok(LOAD(&c, "-datadir=/d", "-blockfilterindex", "-peerblockfilters"));
	assert_true(c.peerblockfilters);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-peerblockfilters=0"));
	assert_false(c.peerblockfilters);
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

/*
 * bitcoind's options peerd lacks (conf/core_opts.c): refused with "not
 * supported by peerd", unless harmless or set to what peerd does anyway;
 * those load, with a note for the log naming where they were.
 */
static void test_bitcoind_options(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_error(LOAD(&c, "-datadir=/d", "-maxuploadtarget=500"), CONF_EUSAGE,
	             "command line: -maxuploadtarget=500: not supported by peerd (a bitcoind "
	             "option: peerd does not limit its upload; see doc/differences.md)",
	             &c);
	/* A bare option is =1 to bitcoind: refused too. */
	expect_error(LOAD(&c, "-datadir=/d", "-maxuploadtarget"), CONF_EUSAGE,
	             "command line: -maxuploadtarget: not supported by peerd (a bitcoind option: "
	             "peerd does not limit its upload; see doc/differences.md)",
	             &c);
	const char *p = write_conf("core.conf", "rpcuser=alice\n[regtest]\nasmap=1\n");
	expect_error(LOAD(&c, opt("-conf=%s", p), "-datadir=/d"), CONF_EKEY,
	             opt("%s:3: asmap=1: not supported by peerd (a bitcoind option: peerd does "
	                 "not bucket peers by AS number; see doc/differences.md)",
	                 p),
	             &c);
	/* -coinstatsindex is peerd's own now (index/coinstats.c). */
	p = write_conf("core.conf", "[regtest]\ncoinstatsindex=1\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-datadir=/d", "-regtest"));
	assert_true(c.coinstatsindex);
	conf_release(&c);
	/* What peerd does anyway, and what cannot matter: loaded, each noted. */
	p = write_conf("core.conf", "rpcdoccheck=1\nmaxuploadtarget=0\n");
	expect_ok(LOAD(&c, opt("-conf=%s", p), "-datadir=/d", "-nonatpmp", "-daemon=0"));
	assert_int_equal(c.ignored.n, 4);
	assert_string_equal(c.ignored.v[0],
	                    "command line: -nonatpmp: ignored, a bitcoind option peerd does not "
	                    "have (peerd opens no port on the router; see doc/differences.md)");
	assert_non_null(strstr(c.ignored.v[1], "command line: -daemon=0: ignored"));
	assert_string_equal(c.ignored.v[2],
	                    opt("%s:1: rpcdoccheck=1: ignored, a bitcoind option peerd does not "
	                        "have (peerd's JSON-RPC server (doc/rpc.md) has no method "
	                        "whitelists or deprecated methods yet; see "
	                        "doc/differences.md)",
	                        p));
	assert_non_null(strstr(c.ignored.v[3], ":2: maxuploadtarget=0: ignored"));
	conf_release(&c);
	assert_int_equal(c.ignored.n, 0);
	/* -natpmp (=1) asks for what peerd does not do. */
	expect_error(LOAD(&c, "-datadir=/d", "-natpmp"), CONF_EUSAGE,
	             "command line: -natpmp: not supported by peerd (a bitcoind option: peerd "
	             "opens no port on the router; see doc/differences.md)",
	             &c);
	/* A name neither has is still unknown, "no" prefix or not. */
	expect_error(LOAD(&c, "-datadir=/d", "-noprunee"), CONF_EUSAGE,
	             "command line: -noprunee: unknown option (-help lists them)", &c);
}

/* -prune as Core's GetIntArg reads it, and Core's checks in Core's order. */
static void test_prune(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-datadir=/d", "-prune=550"));
	assert_true(c.prune_target == (uint64_t)550 << 20);
	assert_false(c.fastprune);
	conf_release(&c);
	/* A bare -prune is prune=1 to bitcoind: manual pruning. */
	expect_ok(LOAD(&c, "-datadir=/d", "-prune", "-fastprune"));
	assert_true(c.prune_target == CONF_PRUNE_MANUAL);
	assert_true(c.fastprune);
	conf_release(&c);
	/* Not a number is 0 to Core; -noprune is 0. */
	expect_ok(LOAD(&c, "-datadir=/d", "-prune=abc"));
	assert_true(c.prune_target == 0);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/d", "-prune=600", "-noprune"));
	assert_true(c.prune_target == 0);
	conf_release(&c);
	expect_error(LOAD(&c, "-datadir=/d", "-prune=549"), CONF_EVALUE,
	             "Prune configured below the minimum of 550 MiB.  Please use a higher number.",
	             &c);
	expect_error(LOAD(&c, "-datadir=/d", "-prune=-1"), CONF_EVALUE,
	             "Prune cannot be configured with a negative value.", &c);
	/* The incompatibilities come first, as Core's AppInitParameterInteraction. */
	expect_error(LOAD(&c, "-datadir=/d", "-prune=-1", "-txindex"), CONF_EVALUE,
	             "Prune mode is incompatible with -txindex.", &c);
	expect_error(LOAD(&c, "-datadir=/d", "-prune=1", "-reindex-chainstate"), CONF_EVALUE,
	             "Prune mode is incompatible with -reindex-chainstate. Use full -reindex "
	             "instead.",
	             &c);
}

int main(void)
{
	if (tc_begin())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_network_only_keys, setup_env),
	    cmocka_unit_test_setup(test_file_errors, setup_env),
	    cmocka_unit_test_setup(test_file_access_errors, setup_env),
	    cmocka_unit_test_setup(test_cmdline_errors, setup_env),
	    cmocka_unit_test_setup(test_help_and_version, setup_env),
	    cmocka_unit_test_setup(test_positional, setup_env),
	    cmocka_unit_test_setup(test_file_syntax_details, setup_env),
	    cmocka_unit_test_setup(test_out_of_memory, setup_env),
	    cmocka_unit_test_setup(test_bitcoind_options, setup_env),
	    cmocka_unit_test_setup(test_prune, setup_env),
	};
	return tc_end(cmocka_run_group_tests(tests, NULL, NULL));
}
