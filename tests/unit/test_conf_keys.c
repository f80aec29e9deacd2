/*
 * tests/unit/test_conf_keys.c: conf/'s particular keys: host:port parsing,
 * the annotated example config (every key in it, every line valid),
 * -blocksonly, the mempool and relay-policy keys as Core reads them, and
 * metricsbind=.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_conf_fixture.h"

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
	    "dnsseed",
	    "fixedseeds",
	    "forcednsseed",
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

/* -blockreconstructionextratxn: Core's default of 100, -no... is 0 (keep
 * nothing), and past peerd's bound an error naming the key. */
static void test_extratxn(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-regtest"));
	assert_int_equal(c.blockreconstructionextratxn, 100);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-blockreconstructionextratxn=7"));
	assert_int_equal(c.blockreconstructionextratxn, 7);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-noblockreconstructionextratxn"));
	assert_int_equal(c.blockreconstructionextratxn, 0);
	conf_release(&c);
	expect_error(LOAD(&c, "-regtest", "-blockreconstructionextratxn=1000001"), CONF_EVALUE,
	             "command line: -blockreconstructionextratxn=1000001: out of range 0-1000000",
	             &c);
}

/* The mempool and relay-policy keys: Core's defaults, amounts as Core's
 * ParseMoney reads them, and Core's cross-key checks with its messages. */
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

/* Block assembly: Core's defaults, a max weight below the reserved part raised to
 * it (Core's ClampOptions), the consensus maximum and Core's 2,000 WU floor. */
static void test_block_keys(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-regtest"));
	assert_int_equal(c.blockmaxweight, 4000000);
	assert_int_equal(c.blockreservedweight, 8000);
	assert_int_equal(c.blockmintxfee, 1000);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-blockmaxweight=5000", "-blockreservedweight=3000",
	               "-blockmintxfee=0.0002"));
	assert_int_equal(c.blockmaxweight, 5000);
	assert_int_equal(c.blockreservedweight, 3000);
	assert_int_equal(c.blockmintxfee, 20000);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-blockmaxweight=1000"));
	assert_int_equal(c.blockmaxweight, 8000);
	conf_release(&c);
	expect_error(LOAD(&c, "-regtest", "-blockmaxweight=4000001"), CONF_EVALUE,
	             "command line: -blockmaxweight=4000001: out of range 0-4000000", &c);
	expect_error(LOAD(&c, "-regtest", "-blockreservedweight=1999"), CONF_EVALUE,
	             "command line: -blockreservedweight=1999: out of range 2000-4000000", &c);
	expect_error(
	    LOAD(&c, "-regtest", "-blockmintxfee=x"), CONF_EVALUE,
	    "command line: -blockmintxfee=x: Invalid amount for -blockmintxfee=<amount>: 'x'", &c);
}

/* Startup verification: Core's defaults (6 blocks, level 3), 0 = all
 * blocks, a level above 4 clamped to 4 as Core's VerifyDB does. */
static void test_check_keys(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-regtest"));
	assert_int_equal(c.checkblocks, 6);
	assert_int_equal(c.checklevel, 3);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-checkblocks=0", "-checklevel=9"));
	assert_int_equal(c.checkblocks, 0);
	assert_int_equal(c.checklevel, 4);
	conf_release(&c);
	expect_ok(LOAD(&c, "-regtest", "-checkblocks=288", "-checklevel=0"));
	assert_int_equal(c.checkblocks, 288);
	assert_int_equal(c.checklevel, 0);
	conf_release(&c);
	expect_error(LOAD(&c, "-regtest", "-checkblocks=x"), CONF_EVALUE,
	             "command line: -checkblocks=x: not a number", &c);
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

/* test= (regtest only, Core's words and peerd's) and checkaddrman= (clamped as Core's). */
static void test_test_options(void **state)
{
	(void)state;
	struct peerd_conf c;
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-regtest", "-test=addrman",
	               "-test=addrmanloopback", "-checkaddrman=5"));
	assert_true(c.test_addrman);
	assert_true(c.test_addrmanloopback);
	assert_int_equal(c.checkaddrman, 5);
	assert_int_equal(c.ignored.n, 0);
	conf_release(&c);
	expect_ok(LOAD(&c, "-datadir=/nonexistent/dd", "-regtest", "-test=foo",
	               "-checkaddrman=2000000000"));
	assert_false(c.test_addrman);
	assert_int_equal(c.checkaddrman, CONF_CLAMP_CHECKADDRMAN);
	assert_int_equal(c.ignored.n, 1);
	assert_string_equal(c.ignored.v[0],
	                    "Unrecognised option \"foo\" provided in -test=<option>.");
	conf_release(&c);
	expect_error(LOAD(&c, "-datadir=/nonexistent/dd", "-test=addrman"), CONF_EVALUE,
	             "-test=<option> can only be used with regtest", &c);
	expect_error(LOAD(&c, "-datadir=/nonexistent/dd", "-regtest", "-test=bip94"), CONF_EVALUE,
	             "-test=bip94: not supported by peerd", &c);
}

/*
 * contrib/conf/: one example per network. Each loads as it stands (a node of
 * that network) and with its "#addnode=" and "#bind=" lines taken in.
 */
static void test_network_examples(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		enum proto_net net;
	} ex[] = {
	    {"contrib/conf/main.conf", PROTO_NET_MAIN},
	    {"contrib/conf/testnet4.conf", PROTO_NET_TESTNET4},
	    {"contrib/conf/signet.conf", PROTO_NET_SIGNET},
	    {"contrib/conf/regtest.conf", PROTO_NET_REGTEST},
	};
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct peerd_conf c;
		size_t len;
		uint8_t *raw = tu_read_file(ex[i].file, &len);
		char *text = malloc(len + 1);
		assert_non_null(text);
		memcpy(text, raw, len);
		text[len] = '\0'; /* tu_read_file's bytes are not a string */
		free(raw);
		const char *p = write_conf("net.conf", text);
		expect_ok(LOAD(&c, opt("-conf=%s", p)));
		if (c.params->net != ex[i].net || c.addnode.n != 0)
			fail_msg("%s: network %s, %zu addnode", ex[i].file, c.params->name,
			         c.addnode.n);
		conf_release(&c);
		/* Uncomment the example peers: two addnode= lines, and bind=. */
		char *out = malloc(len + 1);
		assert_non_null(out);
		size_t o = 0;
		for (size_t k = 0; k < len; k++) {
			bool line_start = k == 0 || text[k - 1] == '\n';
			if (line_start && (strncmp(text + k, "#addnode=", 9) == 0 ||
			                   strncmp(text + k, "#bind=", 6) == 0))
				continue;
			out[o++] = text[k];
		}
		out[o] = '\0';
		p = write_conf("net.conf", out);
		expect_ok(LOAD(&c, opt("-conf=%s", p)));
		if (c.params->net != ex[i].net || c.addnode.n != 2 || c.bind.n != 1)
			fail_msg("%s uncommented: network %s, %zu addnode, %zu bind", ex[i].file,
			         c.params->name, c.addnode.n, c.bind.n);
		conf_release(&c);
		free(out);
		free(text);
	}
}

int main(void)
{
	if (tc_begin())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostport),
	    cmocka_unit_test_setup(test_mempool_keys, setup_env),
	    cmocka_unit_test_setup(test_block_keys, setup_env),
	    cmocka_unit_test_setup(test_blocksonly, setup_env),
	    cmocka_unit_test_setup(test_example_config, setup_env),
	    cmocka_unit_test_setup(test_metricsbind, setup_env),
	    cmocka_unit_test_setup(test_test_options, setup_env),
	    cmocka_unit_test_setup(test_network_examples, setup_env),
	    cmocka_unit_test_setup(test_check_keys, setup_env),
	    cmocka_unit_test_setup(test_extratxn, setup_env),
	};
	return tc_end(cmocka_run_group_tests(tests, NULL, NULL));
}
