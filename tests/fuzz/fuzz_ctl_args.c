/*
 * tests/fuzz/fuzz_ctl_args.c: control-socket requests against the method
 * dispatch, so that every method's argument parsing meets arbitrary JSON.
 *
 * Each input is one request line (an object or a batch). A request for a
 * loop method goes whole through ctl_reply (parse, named arguments, the
 * count and type check, the method) on an in-process daemon; one for a
 * chain method through ctl_args_check and then the method itself on a
 * fresh regtest chain in a directory under /dev/shm, as the validation
 * thread would run it. Nothing may crash, leak or answer a request with
 * neither a result nor an error. The seeds are one request per method.
 *
 * Kept off the network and bounded: addnode and setnetworkactive have
 * their arguments checked but do not run (they would dial out); a
 * generate call mines at most 3 blocks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "chain/chain.h"
#include "mempool/mempool.h"
#include "daemon/ctl/internal.h"
#include "daemon/program.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_ctl_args: %s\n", what);
		abort();
	}
}

static uv_loop_t loop;
static struct peerd_conf conf;
static struct daemon *d;
static char datadir[64], chaindir[64];

static void wipe(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	check(system(cmd) == 0, "cannot clean a temporary directory");
}

static void at_exit(void)
{
	wipe(chaindir);
	wipe(datadir);
}

static void setup(void)
{
	snprintf(datadir, sizeof(datadir), "/dev/shm/peerd-fuzz-ctl-%d", (int)getpid());
	snprintf(chaindir, sizeof(chaindir), "/dev/shm/peerd-fuzz-ctl-chain-%d", (int)getpid());
	wipe(datadir);
	check(mkdir(datadir, 0700) == 0, "mkdir datadir");
	atexit(at_exit);
	check(uv_loop_init(&loop) == 0, "uv_loop_init");
	conf_defaults(&conf);
	conf.params = proto_params(PROTO_NET_REGTEST);
	conf.datadir = xstrdup(datadir);
	conf.netdir = xstrdup(datadir);
	d = calloc(1, sizeof(*d));
	check(d && conf.datadir && conf.netdir, "out of memory");
	check(daemon_init(d, &loop, &conf) == 0, "daemon_init");
	d->log.out = NULL; /* quiet: nothing to read, and fast */
	check(ban_init(d) == 0, "ban_init");
}

/* Methods whose bodies would reach the network: arguments only. */
static bool dials_out(const char *name)
{
	return strcmp(name, "addnode") == 0 || strcmp(name, "setnetworkactive") == 0;
}

/* A generate call asking for more than 3 blocks: checked, not mined. */
static bool too_many_blocks(const struct ctl_method *m, json_t *args)
{
	if (strncmp(m->name, "generateto", 10) != 0)
		return false;
	json_t *n = json_array_get(args, 0);
	return !json_is_integer(n) || json_integer_value(n) > 3;
}

/* A reply must be a result or an error with a message. */
static void check_result(struct ctl_result *res)
{
	check(res->err_code ? res->err_msg[0] != 0 && !res->result : res->result != NULL,
	      "a method answered with neither a result nor an error");
	json_decref(res->result);
}

static void chain_request(const struct ctl_method *m, json_t *params)
{
	struct ctl_result res;
	memset(&res, 0, sizeof(res));
	json_t *args = ctl_args_check(m, params, &res);
	if (!args) {
		check(res.err_code != 0, "ctl_args_check failed without an error");
		return;
	}
	if (too_many_blocks(m, args)) {
		json_decref(args);
		return;
	}
	wipe(chaindir);
	struct chain_config cfg = {
	    .params = proto_params(PROTO_NET_REGTEST),
	    .dir = chaindir,
	    .dbcache_bytes = 1 << 20,
	    .par = 1,
	};
	struct chain *c;
	struct mempool *mp;
	check(chain_open(&c, &cfg) == 0, "chain_open");
	check(mempool_open(c, NULL, chaindir, &mp) == 0, "mempool_open");
	_Atomic bool interrupt = false;
	struct ctl_chain_ctx x = {.net = conf.params,
	                          .netdir = chaindir,
	                          .interrupt = &interrupt,
	                          .conf = &conf,
	                          .mempool = mp};
	m->chain_fn(c, &x, args, &res);
	json_decref(args);
	check_result(&res);
	mempool_close(mp);
	check(chain_close(c) == 0, "chain_close");
}

static void loop_request(json_t *req, const struct ctl_method *m, json_t *params)
{
	if (m && dials_out(m->name)) {
		struct ctl_result res;
		memset(&res, 0, sizeof(res));
		json_decref(ctl_args_check(m, params, &res));
		return;
	}
	/* The whole path: a line in, a reply out. */
	char *line = json_dumps(req, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!line)
		return;
	unsigned flags;
	json_t *r = ctl_reply(d, line, strlen(line), &flags);
	check(!r || json_object_get(r, "result") || json_object_get(r, "error"),
	      "a reply without a result or an error");
	json_decref(r);
	xfree(line);
}

static void request(json_t *req)
{
	json_t *method = json_object_get(req, "method");
	json_t *params = json_object_get(req, "params");
	const struct ctl_method *m =
	    json_is_string(method) ? ctl_method_lookup(json_string_value(method)) : NULL;
	bool params_ok = !params || json_is_array(params) || json_is_object(params);
	if (m && m->chain_fn && params_ok)
		chain_request(m, json_is_null(params) ? NULL : params);
	else
		loop_request(req, m, params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!d) {
		setup();
	}
	json_error_t jerr;
	json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
	if (!v)
		return 0;
	if (json_is_array(v) && json_array_size(v) <= CTL_MAX_BATCH) {
		size_t i;
		json_t *req;
		json_array_foreach(v, i, req)
		{
			if (json_is_object(req))
				request(req);
		}
	} else if (json_is_object(v)) {
		request(v);
	}
	json_decref(v);
	return 0;
}
