/*
 * tests/unit/test_daemon_ctl_args.c: control-call arguments (issue 18),
 * through the real socket of an in-process daemon with a regtest chain on
 * its validation thread, as a client calls them.
 *
 * A required argument left out or given as null once reached the method
 * as NULL and crashed peerd (generatetodescriptor 2 null, submitheader
 * null, prioritisetransaction TXID 1): now Core's check answers before
 * any method runs (daemon/ctl/args.c) with Core's code and text, and the
 * daemon goes on answering. Then the named-argument rules, the method
 * table's own consistency, and a result's bytes out of band for an
 * in-process caller that takes them (ctl_inproc_call_bytes: REST's .bin).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <sys/un.h>

#include "chain/chain.h"
#include "daemon/ctl/internal.h"
#include "mempool/mempool.h"
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* A daemon serving its control socket, with a chain on the validation thread. */
struct af {
	struct tf *t;
	struct chain *c;
	struct mempool *mp; /* c's pool */
	char chaindir[64];
	int fd;
};

/* The pool is attached inside chain_open, as peerd attaches it (Core's
 * defaults): the validation thread hands its events to txrelay after
 * every job, and the mempool methods need one. */
static int attach_mempool(void *arg, struct chain *c)
{
	struct af *a = arg;
	return mempool_open(c, NULL, a->chaindir, &a->mp);
}

static int af_setup(void **state)
{
	struct af *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	a->t = tf_new();
	snprintf(a->chaindir, sizeof(a->chaindir), "/tmp/peerd-args-XXXXXX");
	assert_non_null(mkdtemp(a->chaindir));
	struct chain_config cfg = {.params = proto_params(PROTO_NET_REGTEST),
	                           .dir = a->chaindir,
	                           .par = 1,
	                           .attach = attach_mempool,
	                           .attach_arg = a};
	int err = chain_open(&a->c, &cfg);
	if (err)
		fail_msg("chain_open(%s): %s", a->chaindir, chain_strerror(err));
	mempool_load(a->mp);
	assert_int_equal(ctl_start(a->t->d), 0);
	assert_int_equal(validation_start(a->t->d, a->c, a->mp), 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a->t->d->ctl->path);
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(a->fd >= 0);
	assert_int_equal(connect(a->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(a->fd, F_SETFL, O_NONBLOCK), 0);
	*state = a;
	return 0;
}

static int af_teardown(void **state)
{
	struct af *a = *state;
	close(a->fd);
	tf_free(a->t); /* stops the validation thread, which closes the chain */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", a->chaindir);
	assert_int_equal(system(cmd), 0);
	free(a);
	return 0;
}

/* One request line (no newline) sent; its reply, parsed. The loop runs meanwhile. */
static json_t *call(struct af *a, const char *req)
{
	char line[4096];
	int n = snprintf(line, sizeof(line), "%s\n", req);
	assert_true(n > 0 && (size_t)n < sizeof(line));
	assert_int_equal(send(a->fd, line, (size_t)n, MSG_NOSIGNAL), n);
	static char buf[65536];
	size_t len = 0;
	for (int spins = 0; spins < 50000; spins++) {
		uv_run(&a->t->loop, UV_RUN_NOWAIT);
		ssize_t got = recv(a->fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (got == 0)
			fail_msg("%s: the daemon closed the connection", req);
		if (got < 0 && errno != EAGAIN)
			fail_msg("%s: recv: %s", req, strerror(errno));
		if (got > 0)
			len += (size_t)got;
		char *nl = len ? memchr(buf, '\n', len) : NULL;
		if (nl) {
			json_error_t jerr;
			json_t *v = json_loadb(buf, (size_t)(nl - buf), 0, &jerr);
			if (!v)
				fail_msg("%s: reply not JSON: %.*s", req, (int)(nl - buf), buf);
			return v;
		}
		usleep(100);
	}
	fail_msg("%s: no reply", req);
	return NULL;
}

/* The call answers error `code` with exactly `msg` (or, when prefix, starting with it). */
static void expect(struct af *a, const char *req, int code, const char *msg, bool prefix)
{
	json_t *r = call(a, req);
	json_t *e = json_object_get(r, "error");
	json_t *c = json_object_get(e, "code");
	const char *m = json_string_value(json_object_get(e, "message"));
	char *text = json_dumps(r, JSON_COMPACT);
	if (!json_is_integer(c) || json_integer_value(c) != code || !m)
		fail_msg("%s: expected error %d, got %s", req, code, text);
	if (prefix ? strncmp(m, msg, strlen(msg)) != 0 : strcmp(m, msg) != 0)
		fail_msg("%s: expected message %s\"%s\", got \"%s\"", req,
		         prefix ? "starting " : "", msg, m);
	xfree(text);
	json_decref(r);
}

/* The daemon is still there and the chain still answers. */
static void still_up(struct af *a)
{
	json_t *r = call(a, "{\"method\": \"getblockcount\", \"id\": 99}");
	json_t *v = json_object_get(r, "result");
	if (!json_is_integer(v) || json_integer_value(v) != 0)
		fail_msg("getblockcount after the bad calls: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
}

#define WRONG_TYPE(pos, name, got, want)                                                           \
	"Wrong type passed:\n{\n    \"Position " #pos " (" name ")\": \"JSON value of type " got   \
	" is not of expected type " want "\"\n}"

#define TXID      "\"1111111111111111111111111111111111111111111111111111111111111111\""
#define TXID_TEXT "1111111111111111111111111111111111111111111111111111111111111111"

static void test_null_required_args_do_not_crash(void **state)
{
	struct af *a = *state;
	/* Each of these crashed peerd (SIGSEGV in ctl_want_arg). */
	expect(a, "{\"method\": \"generatetodescriptor\", \"params\": [2, null], \"id\": 1}",
	       CTL_TYPE_ERROR, WRONG_TYPE(2, "descriptor", "null", "string"), false);
	expect(a, "{\"method\": \"submitheader\", \"params\": [null], \"id\": 2}", CTL_TYPE_ERROR,
	       WRONG_TYPE(1, "hexdata", "null", "string"), false);
	expect(a, "{\"method\": \"setnetworkactive\", \"params\": [null], \"id\": 3}",
	       CTL_TYPE_ERROR, WRONG_TYPE(1, "state", "null", "bool"), false);
	/* fee_delta left out: a wrong count for Core (fee_delta is required
	 * after the optional dummy): -1 with the help text. */
	expect(a, "{\"method\": \"prioritisetransaction\", \"params\": [" TXID ", 1], \"id\": 4}",
	       CTL_MISC_ERROR, "prioritisetransaction \"txid\" ( dummy ) fee_delta\n", true);
	expect(a,
	       "{\"method\": \"prioritisetransaction\", \"params\": {\"txid\": " TXID
	       ", \"dummy\": 0}, \"id\": 5}",
	       CTL_MISC_ERROR, "prioritisetransaction \"txid\" ( dummy ) fee_delta\n", true);
	expect(a,
	       "{\"method\": \"prioritisetransaction\", \"params\": [" TXID
	       ", 0, null], \"id\": 6}",
	       CTL_TYPE_ERROR, WRONG_TYPE(3, "fee_delta", "null", "number"), false);
	expect(
	    a, "{\"method\": \"gettxout\", \"params\": [null, null], \"id\": 7}", CTL_TYPE_ERROR,
	    "Wrong type passed:\n{\n"
	    "    \"Position 1 (txid)\": \"JSON value of type null is not of expected type "
	    "string\",\n"
	    "    \"Position 2 (n)\": \"JSON value of type null is not of expected type number\"\n}",
	    false);
	still_up(a);
}

static void test_counts_and_named_args(void **state)
{
	struct af *a = *state;
	expect(a, "{\"method\": \"getblockhash\", \"id\": 1}", CTL_MISC_ERROR,
	       "getblockhash height\n", true);
	expect(a, "{\"method\": \"getblockcount\", \"params\": [1], \"id\": 2}", CTL_MISC_ERROR,
	       "getblockcount\n", true);
	expect(a, "{\"method\": \"getblockhash\", \"params\": {\"heigth\": 0}, \"id\": 3}",
	       CTL_INVALID_PARAMETER, "Unknown named parameter heigth", false);
	expect(a,
	       "{\"method\": \"getblockheader\", \"params\": {\"args\": [\"00\"], \"blockhash\": "
	       "\"00\"}, \"id\": 4}",
	       CTL_INVALID_PARAMETER,
	       "Parameter blockhash specified twice both as positional and named argument", false);
	/* An optional parameter left out between named ones is null: the default. */
	json_t *r =
	    call(a, "{\"method\": \"verifychain\", \"params\": {\"nblocks\": 1}, \"id\": 5}");
	assert_true(json_is_true(json_object_get(r, "result")));
	json_decref(r);
	/* An alias names the same parameter (Core's "verbosity|verbose"). */
	r = call(a, "{\"method\": \"getblockhash\", \"params\": [0], \"id\": 6}");
	char req[256];
	snprintf(req, sizeof(req),
	         "{\"method\": \"getblock\", \"params\": {\"blockhash\": \"%s\", \"verbose\": 0}, "
	         "\"id\": 7}",
	         json_string_value(json_object_get(r, "result")));
	json_decref(r);
	r = call(a, req);
	assert_true(json_is_string(json_object_get(r, "result")));
	json_decref(r);
	still_up(a);
}

/* Core's SaturatingAdd: any int64 fee_delta, twice, stays INT64_MAX (it overflowed). */
static void test_prioritise_saturates(void **state)
{
	struct af *a = *state;
	for (int i = 0; i < 2; i++) {
		json_t *r = call(a, "{\"method\": \"prioritisetransaction\", \"params\": [" TXID
		                    ", 0, 9223372036854775807], \"id\": 1}");
		assert_true(json_is_true(json_object_get(r, "result")));
		json_decref(r);
	}
	json_t *r = call(a, "{\"method\": \"getprioritisedtransactions\", \"id\": 2}");
	json_t *e = json_object_get(json_object_get(r, "result"), TXID_TEXT);
	json_t *delta = json_object_get(e, "fee_delta");
	if (!json_is_integer(delta) || json_integer_value(delta) != INT64_MAX)
		fail_msg("getprioritisedtransactions: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
}

static void test_core_only_methods(void **state)
{
	struct af *a = *state;
	expect(a, "{\"method\": \"getbalance\", \"id\": 1}", CTL_METHOD_NOT_FOUND,
	       "Method not found (getbalance is a Bitcoin Core method peerd does not support)",
	       false);
	expect(a, "{\"method\": \"nosuch\", \"id\": 2}", CTL_METHOD_NOT_FOUND,
	       "Method not found: nosuch (try help)", false);
}

/* Every entry's parameters: names unique, no required one after an optional
 * one except Core's prioritisetransaction dummy, the usage line naming
 * each in order. */
static void test_method_tables(void **state)
{
	(void)state;
	const struct ctl_method *tables[] = {ctl_chain_methods, ctl_mining_methods,
	                                     ctl_mempool_methods, ctl_node_methods};
	const size_t counts[] = {ctl_n_chain_methods, ctl_n_mining_methods, ctl_n_mempool_methods,
	                         ctl_n_node_methods};
	for (size_t k = 0; k < 4; k++) {
		for (size_t i = 0; i < counts[k]; i++) {
			const struct ctl_method *m = &tables[k][i];
			assert_ptr_equal(ctl_method_lookup(m->name), m);
			size_t at = strlen(m->name);
			if (strncmp(m->usage, m->name, at) != 0)
				fail_msg("%s: usage \"%s\"", m->name, m->usage);
			for (int p = 0; p < ctl_method_nparams(m); p++) {
				char name[64];
				snprintf(name, sizeof(name), "%s", m->params[p].name);
				name[strcspn(name, "|")] = 0;
				size_t n = strlen(name);
				const char *found = strstr(m->usage + at, name);
				/* Usage names an array or object parameter by its shape
				 * ("[...]", getblocktemplate's "{...}"), as Core's. */
				if (m->params[p].type != CTL_ARG_ARR &&
				    m->params[p].type != CTL_ARG_OBJ && (!found || found[n] == '_'))
					fail_msg("%s: usage \"%s\" lacks parameter %s", m->name,
					         m->usage, name);
				if (found)
					at = (size_t)(found - m->usage) + n;
			}
		}
	}
}

/* ---- a result's bytes out of band (REST's binary answers) ----------------- */

#define GENESIS "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"

struct bytes_call {
	struct ctl_inproc *ip;
	const char *line;
	bool want_bytes;
	char *reply;
	size_t reply_len;
	uint8_t *bytes;
	size_t n_bytes;
	_Atomic bool done;
};

/* An HTTP worker's side: the call blocks until the loop answers. */
static void bytes_thread(void *arg)
{
	struct bytes_call *bc = arg;
	if (bc->want_bytes)
		bc->reply = ctl_inproc_call_bytes(bc->ip, bc->line, strlen(bc->line),
		                                  &bc->reply_len, &bc->bytes, &bc->n_bytes);
	else
		bc->reply = ctl_inproc_call(bc->ip, bc->line, strlen(bc->line), &bc->reply_len);
	bc->done = true;
}

/* line through ctl/inproc.c from a thread while the loop runs; the reply parsed. */
static json_t *inproc(struct af *a, const char *line, bool want_bytes, struct bytes_call *bc)
{
	memset(bc, 0, sizeof(*bc));
	bc->ip = a->t->d->ctl->inproc;
	bc->line = line;
	bc->want_bytes = want_bytes;
	uv_thread_t th;
	assert_int_equal(uv_thread_create(&th, bytes_thread, bc), 0);
	for (int spins = 0; spins < 50000 && !bc->done; spins++) {
		uv_run(&a->t->loop, UV_RUN_NOWAIT);
		usleep(100);
	}
	assert_int_equal(uv_thread_join(&th), 0);
	assert_non_null(bc->reply);
	json_t *v = json_loadb(bc->reply, bc->reply_len, 0, NULL);
	assert_non_null(v);
	xfree(bc->reply);
	return v;
}

static void test_result_bytes(void **state)
{
	struct af *a = *state;
	const char *req = "{\"method\": \"getblock\", \"params\": [\"" GENESIS "\", 0], \"id\": 1}";
	json_t *r = call(a, req);
	const char *hex = json_string_value(json_object_get(r, "result"));
	assert_non_null(hex);
	size_t n = strlen(hex) / 2;
	uint8_t want[512];
	assert_true(n > 80 && n <= sizeof(want));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &want[i]), 1);
	/* A caller that takes bytes: the block read, its result "". */
	struct bytes_call bc;
	json_t *v = inproc(a, req, true, &bc);
	assert_string_equal(json_string_value(json_object_get(v, "result")), "");
	assert_non_null(bc.bytes);
	assert_int_equal(bc.n_bytes, n);
	assert_memory_equal(bc.bytes, want, n);
	xfree(bc.bytes);
	json_decref(v);
	/* The same caller, a result with no bytes: the JSON as ever. */
	v = inproc(a, "{\"method\": \"getblock\", \"params\": [\"" GENESIS "\", 1], \"id\": 1}",
	           true, &bc);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(v, "result"), "hash")), GENESIS);
	assert_null(bc.bytes);
	json_decref(v);
	/* An error hands nothing over. */
	v = inproc(a, "{\"method\": \"getblock\", \"params\": [\"" GENESIS "\", \"x\"], \"id\": 1}",
	           true, &bc);
	assert_non_null(json_object_get(v, "error"));
	assert_null(bc.bytes);
	json_decref(v);
	/* A batch line gets the hex in each reply: one call, one slot for bytes. */
	char batch[512];
	snprintf(batch, sizeof(batch), "[%s, %s]", req, req);
	v = inproc(a, batch, true, &bc);
	assert_int_equal(json_array_size(v), 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(
		    json_string_value(json_object_get(json_array_get(v, i), "result")), hex);
	assert_null(bc.bytes);
	json_decref(v);
	/* Every other caller gets the hex, as the control socket does. */
	v = inproc(a, req, false, &bc);
	assert_string_equal(json_string_value(json_object_get(v, "result")), hex);
	json_decref(v);
	json_t *again = call(a, req);
	assert_string_equal(json_string_value(json_object_get(again, "result")), hex);
	json_decref(again);
	json_decref(r);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_null_required_args_do_not_crash, af_setup,
	                                    af_teardown),
	    cmocka_unit_test_setup_teardown(test_counts_and_named_args, af_setup, af_teardown),
	    cmocka_unit_test_setup_teardown(test_prioritise_saturates, af_setup, af_teardown),
	    cmocka_unit_test_setup_teardown(test_core_only_methods, af_setup, af_teardown),
	    cmocka_unit_test_setup_teardown(test_result_bytes, af_setup, af_teardown),
	    cmocka_unit_test(test_method_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
