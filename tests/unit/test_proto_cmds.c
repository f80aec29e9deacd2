/*
 * tests/unit/test_proto_cmds.c: proto/msg.h's list of commands (PROTO_CMDS)
 * keeps its order. Stats and metrics index by the enum, and the fuzz
 * corpora pick a command as a byte modulo PROTO_CMD__COUNT (fuzz_msg.c,
 * fuzz_transport.c), so a reordered or inserted line would silently turn
 * every seed into another message: new commands go at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "proto/proto.h"

static void test_order_is_the_corpora(void **state)
{
	(void)state;
	static const char *const want[] = {
	    "unknown",     "version",      "verack",       "ping",        "pong",
	    "inv",         "getdata",      "notfound",     "getheaders",  "getblocks",
	    "headers",     "tx",           "block",        "addr",        "addrv2",
	    "sendaddrv2",  "sendheaders",  "feefilter",    "wtxidrelay",  "sendcmpct",
	    "getaddr",     "mempool",      "cmpctblock",   "getblocktxn", "blocktxn",
	    "getcfilters", "getcfheaders", "getcfcheckpt", "cfilter",     "cfheaders",
	    "cfcheckpt",
	};
	assert_int_equal(PROTO_CMD__COUNT, sizeof(want) / sizeof(want[0]));
	for (int c = 0; c < PROTO_CMD__COUNT; c++)
		if (strcmp(proto_cmd_name((enum proto_cmd)c), want[c]) != 0)
			fail_msg("command %d is %s, want %s", c, proto_cmd_name((enum proto_cmd)c),
			         want[c]);
}

/* Every command of the list reaches a codec: none answers PROTO_EUNKNOWN. */
static void test_every_command_has_a_codec(void **state)
{
	(void)state;
	struct proto_msg m;
	proto_msg_init(&m);
	for (int c = 1; c < PROTO_CMD__COUNT; c++) {
		int err = proto_msg_decode((enum proto_cmd)c, NULL, 0, &m, NULL);
		if (err == PROTO_EUNKNOWN)
			fail_msg("%s has no codec", proto_cmd_name((enum proto_cmd)c));
	}
	assert_int_equal(proto_msg_decode(PROTO_CMD_UNKNOWN, NULL, 0, &m, NULL), PROTO_EUNKNOWN);
	proto_msg_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_is_the_corpora),
	    cmocka_unit_test(test_every_command_has_a_codec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
