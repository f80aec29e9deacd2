/*
 * tests/unit/test_daemon_msgtable.c: the message table (daemon/msgtable.c)
 * against proto's list of commands and Core 29's rules: every command
 * peerd decodes has exactly one handler, the handshake gates are Core's,
 * and the counted vectors carry Core's limits. A command added to
 * PROTO_CMDS without its table entry fails here, not silently on a peer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_daemon_fixture.h"

static const struct p2p_msg_entry *entry(enum proto_cmd cmd)
{
	return &daemon_msg_table[cmd];
}

static void test_every_command_has_one_handler(void **state)
{
	(void)state;
	const struct p2p_msg_entry *u = entry(PROTO_CMD_UNKNOWN);
	assert_null(u->on_msg);
	assert_null(u->on_raw);
	for (int c = 1; c < PROTO_CMD__COUNT; c++) {
		const struct p2p_msg_entry *e = entry((enum proto_cmd)c);
		if ((e->on_msg != NULL) == (e->on_raw != NULL))
			fail_msg("%s: on_msg %s, on_raw %s; want exactly one",
			         proto_cmd_name((enum proto_cmd)c), e->on_msg ? "set" : "NULL",
			         e->on_raw ? "set" : "NULL");
	}
	/* Blocks go to the validation thread undecoded. */
	assert_non_null(entry(PROTO_CMD_BLOCK)->on_raw);
}

static void test_gates_are_cores(void **state)
{
	(void)state;
	for (int c = 1; c < PROTO_CMD__COUNT; c++) {
		unsigned want;
		switch (c) {
		case PROTO_CMD_VERSION:
			want = P2P_MSG_BEFORE_VERSION | P2P_MSG_BEFORE_VERACK | P2P_MSG_ACTIVE;
			break;
		case PROTO_CMD_VERACK:
		case PROTO_CMD_WTXIDRELAY:
		case PROTO_CMD_SENDADDRV2:
			want = P2P_MSG_BEFORE_VERACK | P2P_MSG_ACTIVE;
			break;
		default:
			want = P2P_MSG_ACTIVE;
			break;
		}
		if (entry((enum proto_cmd)c)->states != want)
			fail_msg("%s: states 0x%x, want 0x%x", proto_cmd_name((enum proto_cmd)c),
			         entry((enum proto_cmd)c)->states, want);
	}
}

static void check_limit(enum proto_cmd cmd, enum p2p_msg_limit limit, uint8_t skip, uint32_t max,
                        const char *reason)
{
	const struct p2p_msg_entry *e = entry(cmd);
	if (e->limit != limit || e->count_skip != skip || e->count_max != max)
		fail_msg("%s: limit %u skip %u max %u, want %u %u %u", proto_cmd_name(cmd),
		         e->limit, e->count_skip, e->count_max, limit, skip, max);
	assert_non_null(e->limit_reason);
	assert_string_equal(e->limit_reason, reason);
}

static void test_limits_are_cores(void **state)
{
	(void)state;
	check_limit(PROTO_CMD_INV, P2P_MSG_LIMIT_MISBEHAVING, 0, 50000,
	            "inv message size over 50000");
	check_limit(PROTO_CMD_GETDATA, P2P_MSG_LIMIT_MISBEHAVING, 0, 50000,
	            "getdata message size over 50000");
	check_limit(PROTO_CMD_HEADERS, P2P_MSG_LIMIT_MISBEHAVING, 0, 2000,
	            "headers message size over 2000");
	check_limit(PROTO_CMD_ADDR, P2P_MSG_LIMIT_MISBEHAVING, 0, 1000,
	            "addr message size over 1000");
	check_limit(PROTO_CMD_ADDRV2, P2P_MSG_LIMIT_MISBEHAVING, 0, 1000,
	            "addr message size over 1000");
	check_limit(PROTO_CMD_GETHEADERS, P2P_MSG_LIMIT_DISCONNECT, 4, 101,
	            "locator over 101 hashes");
	check_limit(PROTO_CMD_GETBLOCKS, P2P_MSG_LIMIT_DISCONNECT, 4, 101,
	            "locator over 101 hashes");
	/* Everything else has no count limit here (notfound: Core ignores). */
	for (int c = 0; c < PROTO_CMD__COUNT; c++) {
		switch (c) {
		case PROTO_CMD_INV:
		case PROTO_CMD_GETDATA:
		case PROTO_CMD_HEADERS:
		case PROTO_CMD_ADDR:
		case PROTO_CMD_ADDRV2:
		case PROTO_CMD_GETHEADERS:
		case PROTO_CMD_GETBLOCKS:
			break;
		default:
			if (entry((enum proto_cmd)c)->limit != P2P_MSG_NO_LIMIT)
				fail_msg("%s has a count limit", proto_cmd_name((enum proto_cmd)c));
		}
	}
}

/* daemon_init registers the table: the receive path reads it from there. */
static void test_daemon_init_registers_it(void **state)
{
	struct tf *t = *state;
	assert_ptr_equal(t->d->msg_table, daemon_msg_table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_command_has_one_handler),
	    cmocka_unit_test(test_gates_are_cores),
	    cmocka_unit_test(test_limits_are_cores),
	    cmocka_unit_test_setup_teardown(test_daemon_init_registers_it, tf_setup, tf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
