/*
 * tests/unit/test_daemon_ban.c: setban bans (daemon/net/ban.c): subnets,
 * matching, expiry, banlist.json persistence and bad files; and the
 * misbehaviour rules: who is discouraged, who is only disconnected, and
 * the bound on the discouraged set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

static enum ban_verdict check(struct tf *t, const char *addr)
{
	union net_addr a;
	if (net_addr_parse(addr, 1, &a))
		fail_msg("test address %s does not parse", addr);
	return ban_check(t->d, &a);
}

static void assert_verdict(struct tf *t, const char *addr, enum ban_verdict want)
{
	enum ban_verdict got = check(t, addr);
	if (got != want)
		fail_msg("%s: verdict %d, expected %d (0 ok, 1 discouraged, 2 banned)", addr, got,
		         want);
}

static void parse_ok(const char *s, uint8_t net[16], uint8_t *prefix)
{
	int rc = ban_parse_subnet(s, net, prefix);
	if (rc)
		fail_msg("ban_parse_subnet(\"%s\") = %d, expected 0", s, rc);
}

static void ban(struct tf *t, const char *subnet, int64_t until)
{
	uint8_t net[16], prefix;
	parse_ok(subnet, net, &prefix);
	int rc = ban_add(t->d, net, prefix, until);
	if (rc)
		fail_msg("ban_add(%s) = %d", subnet, rc);
}

/* Until the writer thread has written the bans (net/ban_writer.c): the
 * slow tick's sweep finds it idle with the file current. */
static void written(struct tf *t)
{
	for (int i = 0; i < 10000 && t->d->ban->dirty; i++) {
		usleep(1000);
		ban_sweep(t->d, (int64_t)time(NULL));
	}
	if (t->d->ban->dirty)
		fail_msg("banlist.json not written within 10 s");
}

static char *banlist_path(struct tf *t)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/banlist.json", t->dir);
	return path;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* ---- subnets -------------------------------------------------------------- */

static void test_parse_and_format(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
		uint8_t prefix;
	} ok[] = {
	    {"1.2.3.4", "1.2.3.4/32", 128},
	    {"1.2.3.77/24", "1.2.3.0/24", 120},
	    {"1.2.3.77/255.255.255.0", "1.2.3.0/24", 120},
	    {"10.20.30.40/255.255.240.0", "10.20.16.0/20", 116},
	    {"0.0.0.0/0", "0.0.0.0/0", 96},
	    {"2001:db8:1:2::5/64", "2001:db8:1:2::/64", 64},
	    {"2001:db8:abcd::1/ffff:ffff::", "2001:db8::/32", 32},
	    {"::1", "::1/128", 128},
	    {"::/0", "::/0", 0},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t net[16], prefix;
		char out[64];
		parse_ok(ok[i].in, net, &prefix);
		if (prefix != ok[i].prefix)
			fail_msg("%s: prefix %u, expected %u", ok[i].in, prefix, ok[i].prefix);
		ban_format_subnet(net, prefix, out, sizeof(out));
		if (strcmp(out, ok[i].out))
			fail_msg("%s formats as %s, expected %s", ok[i].in, out, ok[i].out);
	}
	static const char *const bad[] = {
	    "",
	    "/24",
	    "1.2.3",
	    "1.2.3.4/",
	    "1.2.3.4/33",
	    "1.2.3.4/-1",
	    "1.2.3.4/x",
	    "1.2.3.4/24x",
	    "1.2.3.4/255.0.255.0",
	    "1.2.3.4/255.255.253.0",
	    "1.2.3.4/255.255.255.1",
	    "1.2.3.4/ffff::",
	    "2001:db8::/129",
	    "2001:db8::/ffff:0:ffff::",
	    "hello",
	    "1.2.3.4:8333",
	    "fe80::1%eth0",
	    "1111:2222:3333:4444:5555:6666:7777:8888:9999:0000:aaaa:bbbb:cccc/64",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t net[16], prefix;
		int rc = ban_parse_subnet(bad[i], net, &prefix);
		if (rc != -EINVAL)
			fail_msg("ban_parse_subnet(\"%s\") = %d, expected -EINVAL", bad[i], rc);
	}
}

static void test_subnet_matching(void **state)
{
	struct tf *t = *state;
	int64_t until = (int64_t)time(NULL) + 3600;
	ban(t, "1.2.3.0/24", until);
	assert_verdict(t, "1.2.3.0", BAN_BANNED);
	assert_verdict(t, "1.2.3.1", BAN_BANNED);
	assert_verdict(t, "1.2.3.255:8333", BAN_BANNED);
	assert_verdict(t, "[::ffff:1.2.3.9]:8333", BAN_BANNED);
	assert_verdict(t, "1.2.4.1", BAN_OK);
	assert_verdict(t, "1.2.2.255", BAN_OK);
	assert_verdict(t, "[::102:309]:1", BAN_OK); /* the same low bytes, not IPv4 */

	ban(t, "2001:db8:1:2::/64", until);
	assert_verdict(t, "[2001:db8:1:2::]:1", BAN_BANNED);
	assert_verdict(t, "[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", BAN_BANNED);
	assert_verdict(t, "[2001:db8:1:3::1]:1", BAN_OK);
	assert_verdict(t, "[2001:db8:1:1:ffff:ffff:ffff:ffff]:1", BAN_OK);

	/* All of IPv4 is ::ffff:0:0/96: no IPv6 address is in it. */
	ban(t, "0.0.0.0/0", until);
	assert_verdict(t, "8.8.8.8", BAN_BANNED);
	assert_verdict(t, "[2001:db8:9::1]:1", BAN_OK);
	assert_int_equal(t->d->ban->n, 3);
}

static void test_add_remove(void **state)
{
	struct tf *t = *state;
	uint8_t net[16], prefix;
	int64_t until = (int64_t)time(NULL) + 3600;
	parse_ok("198.51.100.0/24", net, &prefix);
	assert_int_equal(ban_remove(t->d, net, prefix), -ENOENT);
	assert_int_equal(ban_add(t->d, net, prefix, until), 0);
	assert_int_equal(ban_add(t->d, net, prefix, until + 5), -EEXIST);
	/* A different prefix is a different ban. */
	uint8_t net2[16], prefix2;
	parse_ok("198.51.100.0/25", net2, &prefix2);
	assert_int_equal(ban_add(t->d, net2, prefix2, until), 0);
	assert_int_equal(t->d->ban->n, 2);
	assert_int_equal(ban_remove(t->d, net, prefix), 0);
	assert_int_equal(ban_remove(t->d, net, prefix), -ENOENT);
	assert_verdict(t, "198.51.100.1", BAN_BANNED); /* still in the /25 */
	assert_verdict(t, "198.51.100.200", BAN_OK);   /* only the /24 had it */
	ban_clear(t->d);
	assert_int_equal(t->d->ban->n, 0);
	assert_verdict(t, "198.51.100.1", BAN_OK);
}

static void test_ban_disconnects_matching_peers(void **state)
{
	struct tf *t = *state;
	struct peer *in1 = tf_peer(t, true, "198.51.100.5:1000");
	struct peer *in2 = tf_peer(t, true, "198.51.100.6:1001");
	struct peer *out = tf_peer(t, false, "198.51.100.7:18444");
	struct peer *near = tf_peer(t, true, "198.51.100.8:1002");
	struct peer *v6 = tf_peer(t, true, "[2001:db8::5]:1003");
	ban(t, "198.51.100.4/30", (int64_t)time(NULL) + 60);
	/* A ban applies to manual peers too, as Core's setban. */
	assert_int_equal(in1->state, PEER_CLOSING);
	assert_int_equal(in2->state, PEER_CLOSING);
	assert_int_equal(out->state, PEER_CLOSING);
	assert_int_equal(near->state, PEER_ACTIVE);
	assert_int_equal(v6->state, PEER_ACTIVE);
	assert_int_equal(t->d->stats.disconnects, 3);
}

/* ---- expiry ----------------------------------------------------------------- */

static void test_expiry(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	ban(t, "192.0.2.0/24", now + 100);
	ban(t, "2001:db8::/48", now + 200);
	ban_sweep(t->d, now + 99);
	assert_int_equal(t->d->ban->n, 2);
	ban_sweep(t->d, now + 100);
	assert_int_equal(t->d->ban->n, 1);
	assert_verdict(t, "192.0.2.1", BAN_OK);
	assert_verdict(t, "[2001:db8::1]:1", BAN_BANNED);
	/* The file follows. */
	written(t);
	json_error_t jerr;
	json_t *root = json_load_file(banlist_path(t), 0, &jerr);
	assert_non_null(root);
	json_t *arr = json_object_get(root, "banned_nets");
	assert_int_equal(json_array_size(arr), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 0), "address")),
	                    "2001:db8::/48");
	json_decref(root);

	/* An entry whose time passed before any sweep: not banned, not found,
	 * and banning it again is a new ban, not -EEXIST. */
	t->d->ban->v[0].until = now - 1;
	assert_verdict(t, "[2001:db8::1]:1", BAN_OK);
	uint8_t net[16], prefix;
	parse_ok("2001:db8::/48", net, &prefix);
	assert_int_equal(ban_remove(t->d, net, prefix), -ENOENT);
	assert_int_equal(ban_add(t->d, net, prefix, now + 50), 0);
	assert_int_equal(t->d->ban->n, 1);
	assert_verdict(t, "[2001:db8::1]:1", BAN_BANNED);
}

/* ---- banlist.json ----------------------------------------------------------- */

static void test_persistence_round_trip(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	ban(t, "1.2.3.0/24", now + 1000);
	ban(t, "2001:db8:1:2::/64", now + 2000);
	ban(t, "203.0.113.9", now + 3000);
	written(t);
	struct stat st;
	assert_int_equal(stat(banlist_path(t), &st), 0);
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.new", banlist_path(t));
	assert_int_not_equal(stat(tmp, &st), 0); /* renamed into place, none left */

	/* Core's format. */
	json_error_t jerr;
	json_t *root = json_load_file(banlist_path(t), 0, &jerr);
	assert_non_null(root);
	json_t *arr = json_object_get(root, "banned_nets");
	assert_int_equal(json_array_size(arr), 3);
	json_t *e = json_array_get(arr, 1);
	assert_int_equal(json_integer_value(json_object_get(e, "version")), 1);
	assert_string_equal(json_string_value(json_object_get(e, "address")), "2001:db8:1:2::/64");
	assert_int_equal(json_integer_value(json_object_get(e, "banned_until")), now + 2000);
	assert_true(json_is_integer(json_object_get(e, "ban_created")));
	json_decref(root);

	struct ban_entry before[3];
	memcpy(before, t->d->ban->v, sizeof(before));
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	assert_int_equal(t->d->ban->n, 3);
	for (int i = 0; i < 3; i++) {
		const struct ban_entry *a = &before[i], *b = &t->d->ban->v[i];
		tu_assert_bytes_equal(a->net, 16, b->net, 16);
		assert_int_equal(a->prefix, b->prefix);
		assert_int_equal(a->created, b->created);
		assert_int_equal(a->until, b->until);
	}
	assert_verdict(t, "1.2.3.4", BAN_BANNED);
	assert_verdict(t, "203.0.113.9", BAN_BANNED);
	assert_verdict(t, "203.0.113.10", BAN_OK);
	assert_true(tf_log_contains(t, "loaded 3 bans"));
}

/* banlist.json is formatted straight into the file (net/ban.c): byte for
 * byte what jansson's JSON_INDENT(2) dump of the same entries gives, as
 * peerd wrote it before; with no entry and with several. */
static void test_file_bytes_as_jansson(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	for (int round = 0; round < 2; round++) {
		if (round) {
			ban(t, "1.2.3.4", now + 1000);
			ban(t, "2001:db8:1:2::/64", now + 2000);
			ban(t, "10.0.0.0/8", now + 3000);
		}
		assert_int_equal(ban_save(t->d), 0);
		size_t len = 0;
		uint8_t *got = tu_read_file(banlist_path(t), &len);
		assert_non_null(got);
		json_error_t jerr;
		json_t *root = json_load_file(banlist_path(t), 0, &jerr);
		assert_non_null(root);
		char *want = json_dumps(root, JSON_INDENT(2));
		assert_non_null(want);
		tu_assert_bytes_equal(got, len, (const uint8_t *)want, strlen(want));
		free(want);
		json_decref(root);
		free(got);
	}
}

/* ban_wait_written: done only once the file holds the change, the loop
 * running meanwhile (the writer thread wakes it). */
struct wait_probe {
	struct ban_wait bw;
	struct tf *t;
	int calls;
	bool in_file;
};

static void probe_done(struct daemon *d, struct ban_wait *w)
{
	(void)d;
	struct wait_probe *p = (struct wait_probe *)w;
	p->calls++;
	size_t len = 0;
	uint8_t *text = tu_read_file(banlist_path(p->t), &len);
	p->in_file = text && memmem(text, len, "198.51.100.0/24", 15) != NULL;
	free(text);
}

static void test_wait_written(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	ban(t, "1.2.3.4", now + 1000);
	written(t);
	/* The file holds the bans: done at once. */
	struct wait_probe a = {.bw.done = probe_done, .t = t};
	ban_wait_written(t->d, &a.bw);
	assert_int_equal(a.calls, 1);
	/* A change: done after the writer's write of it, not before. */
	ban(t, "198.51.100.0/24", now + 1000);
	struct wait_probe b = {.bw.done = probe_done, .t = t};
	ban_wait_written(t->d, &b.bw);
	for (int i = 0; i < 10000 && !b.calls; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	assert_int_equal(b.calls, 1);
	assert_true(b.in_file);
	assert_null(t->d->ban->waits);
	/* Its handle closes with the last wait: the loop runs dry. */
	uv_run(&t->loop, UV_RUN_DEFAULT);
}

/* A crash mid-save leaves a partial banlist.json.new beside the complete
 * old file: the next start reads the old file whole, and a save that cannot
 * write its .new (here: a directory stands in its way) fails without
 * touching banlist.json. */
static void test_crash_mid_save_keeps_old_file(void **state)
{
	struct tf *t = *state;
	int64_t now = (int64_t)time(NULL);
	ban(t, "1.2.3.0/24", now + 1000);
	ban(t, "198.51.100.7", now + 2000);
	written(t);
	size_t old_len = 0;
	uint8_t *old = tu_read_file(banlist_path(t), &old_len);
	assert_non_null(old);

	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.new", banlist_path(t));
	write_file(tmp, "{\"banned_nets\": [{\"version\": 1, \"ban_cre");
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	assert_int_equal(t->d->ban->n, 2);
	assert_verdict(t, "1.2.3.4", BAN_BANNED);
	assert_verdict(t, "198.51.100.7", BAN_BANNED);

	assert_int_equal(unlink(tmp), 0);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_not_equal(ban_save(t->d), 0);
	size_t now_len = 0;
	uint8_t *after = tu_read_file(banlist_path(t), &now_len);
	assert_non_null(after);
	tu_assert_bytes_equal(old, old_len, after, now_len);
	free(old);
	free(after);
	assert_int_equal(rmdir(tmp), 0);
	assert_int_equal(ban_save(t->d), 0);
	struct stat st;
	assert_int_not_equal(stat(tmp, &st), 0);
}

static void test_load_core_file(void **state)
{
	struct tf *t = *state;
	char text[1024];
	long long now = (long long)time(NULL);
	snprintf(text, sizeof(text),
	         "{\"banned_nets\": ["
	         "{\"version\": 1, \"ban_created\": %lld, \"banned_until\": %lld, "
	         "\"address\": \"10.0.0.0/8\"},"
	         /* expired: dropped on load */
	         "{\"version\": 1, \"ban_created\": %lld, \"banned_until\": %lld, "
	         "\"address\": \"10.1.0.0/16\"},"
	         /* malformed: counted and skipped */
	         "{\"version\": 1, \"banned_until\": %lld, \"address\": \"10.0.0.300\"},"
	         "{\"version\": 1, \"address\": \"11.0.0.0/8\"},"
	         "\"not an object\","
	         /* no ban_created: now */
	         "{\"banned_until\": %lld, \"address\": \"2001:db8::/32\"}"
	         "]}",
	         now - 10, now + 1000, now - 100, now - 1, now + 1000, now + 1000);
	write_file(banlist_path(t), text);
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	assert_int_equal(t->d->ban->n, 2);
	assert_int_equal(t->d->ban->v[0].created, now - 10);
	assert_true(t->d->ban->v[1].created >= now);
	assert_verdict(t, "10.200.1.1", BAN_BANNED);
	assert_verdict(t, "[2001:db8:ffff::1]:1", BAN_BANNED);
	assert_verdict(t, "11.0.0.1", BAN_OK);
	assert_true(tf_log_contains(t, "3 malformed entries ignored"));
}

static void test_corrupt_banlist(void **state)
{
	struct tf *t = *state;
	static const char *const corrupt[] = {
	    "{\"banned_nets\": [{\"address\": \"1.2.3.4\", \"banned_until\": 99999999999}",
	    "",
	    "\x01\x02\x03",
	    "[1, 2, 3]",
	    "{\"banned_nets\": 5}",
	    "{\"other\": []}",
	};
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		write_file(banlist_path(t), corrupt[i]);
		ban_release(t->d);
		fseek(t->log, 0, SEEK_END);
		long mark = ftell(t->log);
		assert_int_equal(ban_init(t->d), 0);
		assert_int_equal(t->d->ban->n, 0);
		assert_verdict(t, "1.2.3.4", BAN_OK);
		/* Reported, naming the file. */
		assert_true(ftell(t->log) > mark);
		assert_true(tf_log_contains(t, "starting with no bans"));
		assert_true(tf_log_contains(t, banlist_path(t)));
	}
	/* Each bad file was moved aside (banlist.json.bad-<time>[-k]), never
	 * overwritten: the last one still holds its bytes. */
	assert_int_not_equal(access(banlist_path(t), F_OK), 0);
	assert_true(tf_log_contains(t, "moved aside to"));
	assert_int_equal(t->d->ban->files_moved, 1);
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	json_error_t jerr;
	ban(t, "1.2.3.4", (int64_t)time(NULL) + 60);
	written(t);
	json_t *root = json_load_file(banlist_path(t), 0, &jerr);
	assert_non_null(root);
	assert_int_equal(json_array_size(json_object_get(root, "banned_nets")), 1);
	json_decref(root);

	/* A directory where the file should be: reported, no crash, and
	 * saving fails cleanly. */
	unlink(banlist_path(t));
	assert_int_equal(mkdir(banlist_path(t), 0700), 0);
	ban_release(t->d);
	assert_int_equal(ban_init(t->d), 0);
	assert_int_equal(t->d->ban->n, 0);
	uint8_t net[16], prefix;
	parse_ok("5.6.7.8", net, &prefix);
	assert_int_equal(ban_add(t->d, net, prefix, (int64_t)time(NULL) + 60), 0);
	assert_int_not_equal(ban_save(t->d), 0);
	assert_verdict(t, "5.6.7.8", BAN_BANNED);
	ban_clear(t->d);
	rmdir(banlist_path(t));
}

/* ---- misbehaviour -------------------------------------------------------------- */

/* A frame whose payload is just a CompactSize count (after `skip` zero bytes). */
static void frame_count(struct tf *t, struct proto_writer *w, const char *cmd, size_t skip,
                        uint64_t count)
{
	struct proto_writer pw;
	proto_writer_init(&pw);
	for (size_t i = 0; i < skip; i++)
		proto_write_u8(&pw, 0);
	proto_write_compact(&pw, count);
	tf_frame(t, w, cmd, pw.buf, pw.len);
	proto_writer_release(&pw);
}

static void send_count(struct tf *t, struct peer *p, const char *cmd, size_t skip, uint64_t count)
{
	struct proto_writer w;
	proto_writer_init(&w);
	frame_count(t, &w, cmd, skip, count);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	proto_writer_release(&w);
}

static void test_misbehaving_inbound_discouraged(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, "198.51.100.20:5000");
	struct peer *same_ip = tf_peer(t, true, "198.51.100.20:5001");
	struct peer *same_ip_manual = tf_peer(t, false, "198.51.100.20:18444");
	struct peer *other = tf_peer(t, true, "198.51.100.21:5000");
	send_count(t, p, "inv", 0, PROTO_MAX_INV + 1);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_false(p->sendheaders); /* nothing after it was handled */
	assert_int_equal(d->stats.misbehaving, 1);
	assert_int_equal(d->stats.discouraged, 1);
	assert_verdict(t, "198.51.100.20", BAN_DISCOURAGED);
	assert_verdict(t, "198.51.100.21", BAN_OK);
	/* Every non-manual connection from that address goes. */
	assert_int_equal(same_ip->state, PEER_CLOSING);
	assert_int_equal(same_ip_manual->state, PEER_ACTIVE);
	assert_int_equal(other->state, PEER_ACTIVE);
	assert_true(tf_log_contains(t, "inv message size over 50000"));
	assert_int_equal(tf_script_in_use(), in_use);
	/* Discouraged is not banned: nothing in banlist.json. */
	assert_int_equal(d->ban->n, 0);
	/* clearbanned forgets it. */
	ban_clear(d);
	assert_verdict(t, "198.51.100.20", BAN_OK);
}

static void test_misbehaving_each_limit(void **state)
{
	struct tf *t = *state;
	static const struct {
		const char *cmd;
		size_t skip;
		uint64_t count;
	} over[] = {
	    {"inv", 0, PROTO_MAX_INV + 1},         {"getdata", 0, PROTO_MAX_INV + 1},
	    {"headers", 0, PROTO_MAX_HEADERS + 1}, {"addr", 0, PROTO_MAX_ADDR + 1},
	    {"addrv2", 0, PROTO_MAX_ADDR + 1},
	};
	char addr[64];
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		snprintf(addr, sizeof(addr), "198.51.100.%zu:1", 100 + i);
		struct peer *p = tf_peer(t, true, addr);
		if (!strcmp(over[i].cmd, "addrv2"))
			p->sendaddrv2 = true;
		send_count(t, p, over[i].cmd, over[i].skip, over[i].count);
		if (p->state != PEER_CLOSING || t->d->stats.misbehaving != i + 1)
			fail_msg("%s with %llu entries: state %d, misbehaving %llu", over[i].cmd,
			         (unsigned long long)over[i].count, p->state,
			         (unsigned long long)t->d->stats.misbehaving);
		assert_verdict(t, addr, BAN_DISCOURAGED);
	}
	/* At the limit (but cut short): only dropped. */
	struct peer *q = tf_peer(t, true, "198.51.100.150:1");
	send_count(t, q, "inv", 0, PROTO_MAX_INV);
	send_count(t, q, "headers", 0, PROTO_MAX_HEADERS);
	send_count(t, q, "addr", 0, PROTO_MAX_ADDR);
	assert_int_equal(q->state, PEER_ACTIVE);
	assert_true(q->sendheaders);
	assert_int_equal(q->decode_errors, 3);
	/* A locator over 101: disconnected, not discouraged (as Core). */
	send_count(t, q, "getheaders", 4, PROTO_MAX_LOCATOR_HANDLER + 1);
	assert_int_equal(q->state, PEER_CLOSING);
	assert_verdict(t, "198.51.100.150:1", BAN_OK);
	assert_int_equal(t->d->stats.misbehaving, 5);
}

static void test_misbehaving_manual_or_local_not_discouraged(void **state)
{
	struct tf *t = *state;
	static const struct {
		const char *addr;
		bool inbound;
	} spared[] = {
	    {"198.51.100.30:18444", false}, {"127.0.0.1:40000", true},
	    {"127.8.9.10:40000", true},     {"[::1]:40000", true},
	    {"[::ffff:127.0.0.5]:1", true},
	};
	for (size_t i = 0; i < sizeof(spared) / sizeof(spared[0]); i++) {
		struct peer *p = tf_peer(t, spared[i].inbound, spared[i].addr);
		send_count(t, p, "inv", 0, PROTO_MAX_INV + 1);
		if (p->state != PEER_CLOSING)
			fail_msg("%s: not disconnected", spared[i].addr);
		assert_verdict(t, spared[i].addr, BAN_OK);
		assert_int_equal(t->d->stats.misbehaving, i + 1);
	}
	assert_int_equal(t->d->stats.discouraged, 0);
	assert_int_equal(hset_count(&t->d->ban->discouraged), 0);
	assert_true(tf_log_contains(t, "disconnecting but not discouraging manual"));
	assert_true(tf_log_contains(t, "disconnecting but not discouraging local"));
}

static void test_discouraged_set_bounded(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	/* Tens of thousands of log lines would only slow this down. */
	FILE *devnull = fopen("/dev/null", "w");
	assert_non_null(devnull);
	d->log.out = devnull;
	d->log.debug = 0;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	const uint32_t total = BAN_DISCOURAGE_MAX + BAN_DISCOURAGE_MAX / 4;
	for (uint32_t i = 0; i < total; i++) {
		/* 10.x.y.z: a distinct address per round, on one peer object. */
		memset(&p->addr, 0, sizeof(p->addr));
		p->addr.in4.sin_family = AF_INET;
		p->addr.in4.sin_addr.s_addr = htonl(0x0a000000u + i);
		ban_misbehaving(p, "test");
		if (hset_count(&d->ban->discouraged) > BAN_DISCOURAGE_MAX)
			fail_msg("after %u addresses: %zu remembered > bound %u", i + 1,
			         hset_count(&d->ban->discouraged), BAN_DISCOURAGE_MAX);
	}
	assert_int_equal(d->stats.discouraged, total);
	/* The most recent half are all still discouraged. */
	for (uint32_t i = total - BAN_DISCOURAGE_MAX / 2; i < total; i++) {
		union net_addr a;
		memset(&a, 0, sizeof(a));
		a.in4.sin_family = AF_INET;
		a.in4.sin_addr.s_addr = htonl(0x0a000000u + i);
		if (ban_check(d, &a) != BAN_DISCOURAGED)
			fail_msg("address #%u of %u forgotten", i, total);
	}
	/* The oldest are gone: memory stays bounded. */
	union net_addr first;
	memset(&first, 0, sizeof(first));
	first.in4.sin_family = AF_INET;
	first.in4.sin_addr.s_addr = htonl(0x0a000000u);
	assert_int_equal(ban_check(d, &first), BAN_OK);
	d->log.out = t->log;
	fclose(devnull);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_and_format),
	    cmocka_unit_test_setup_teardown(test_subnet_matching, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_add_remove, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_ban_disconnects_matching_peers, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_expiry, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_persistence_round_trip, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_file_bytes_as_jansson, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_wait_written, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_crash_mid_save_keeps_old_file, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_load_core_file, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_banlist, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_misbehaving_inbound_discouraged, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_misbehaving_each_limit, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_misbehaving_manual_or_local_not_discouraged,
	                                    tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_discouraged_set_bounded, tf_setup, tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
