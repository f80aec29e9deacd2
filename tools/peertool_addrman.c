/*
 * tools/peertool_addrman.c: addrman, Bitcoin Core's address manager
 * (addrman/) driven offline: load a peers.dat, apply a script of calls,
 * save a peers.dat, print the tables as getrawaddrman does.
 *
 *   peertool addrman [--chain NAME] [--deterministic] [--load FILE]
 *                    [--save FILE] [--dump] [SCRIPT|-]
 *
 * Script lines (a '#' starts a comment; times are seconds since the epoch):
 *   add ADDR PORT SOURCE TIME SERVICES   Core's Add of one address (no penalty)
 *   good ADDR PORT TIME                  Core's Good (to tried, or a collision)
 *   attempt ADDR PORT 0|1 TIME           Core's Attempt (1: count the failure)
 *   peer ADDR PORT TIME                  addpeeraddress ADDR PORT: Add from the
 *                                        address itself, NODE_NETWORK|NODE_WITNESS
 *   tried ADDR PORT TIME                 addpeeraddress ADDR PORT true: then Good
 *   getaddr MAX PCT NOW                  GetAddr (getnodeaddresses MAX is 0 0 NOW):
 *                                        the addresses in the order drawn
 * ADDR is IPv4 or IPv6 text, NAME.onion (Tor v3) or NAME.b32.i2p. This is how the tests compare
 * addrman/ with a real bitcoind: the same calls, the same tables.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrman/addrman.h"
#include "base/alloc.h"
#include "base/opt.h"
#include "proto/proto.h"
#include "tools/peertool.h"

static const char USAGE[] =
    "usage: peertool addrman [--chain NAME] [--deterministic] [--load FILE]\n"
    "                        [--save FILE] [--dump] [SCRIPT|-]";

void peertool_addrman_help(FILE *f)
{
	fprintf(
	    f,
	    "%s\n\n"
	    "Bitcoin Core 29's address manager, offline. Loads peers.dat (--load; else an\n"
	    "empty addrman, with Core's -test=addrman key and random stream under\n"
	    "--deterministic), applies the calls of SCRIPT (a file, or '-' for stdin),\n"
	    "writes peers.dat (--save) and with --dump prints\n"
	    "  {\"results\": [...], \"new\": {\"BUCKET/POS\": {...}}, \"tried\": {...}}\n"
	    "in getrawaddrman's shape. --chain (default regtest) picks the file's magic.\n\n"
	    "Script lines:\n"
	    "  add ADDR PORT SOURCE TIME SERVICES   Add (result: placed in a bucket)\n"
	    "  good ADDR PORT TIME                  Good (result: moved to tried)\n"
	    "  attempt ADDR PORT 0|1 TIME           Attempt\n"
	    "  peer ADDR PORT TIME                  addpeeraddress ADDR PORT\n"
	    "  tried ADDR PORT TIME                 addpeeraddress ADDR PORT true\n"
	    "  getaddr MAX PCT NOW                  GetAddr (result: [\"ADDR:PORT\", ...])\n"
	    "(results: one per add/good/peer/tried/getaddr; \"ok\", \"failed-adding-to-new\" or\n"
	    "\"failed-adding-to-tried\" for peer/tried, as addpeeraddress says)\n\n"
	    "Example (the tables Core builds from the same addpeeraddress calls with\n"
	    "-test=addrman and -mocktime=1700000000):\n"
	    "  printf 'peer 1.2.3.4 8333 1700000000\\ntried 5.6.7.8 8333 1700000000\\n' |\n"
	    "    peertool addrman --deterministic --dump --save peers.dat -\n\n"
	    "Exit codes: 0 success; 1 bad script or file (Core's reason on stderr);\n"
	    "2 usage error.\n",
	    USAGE);
}

enum option { OPT_CHAIN, OPT_DETERMINISTIC, OPT_LOAD, OPT_SAVE, OPT_DUMP, OPT__COUNT };
static const struct base_opt_spec OPTIONS[OPT__COUNT] = {
    {"chain", OPT_CHAIN, true}, {"deterministic", OPT_DETERMINISTIC, false},
    {"load", OPT_LOAD, true},   {"save", OPT_SAVE, true},
    {"dump", OPT_DUMP, false},
};
static const struct base_opt_cmd ADDRMAN_CMD = {"peertool", "addrman",  USAGE,
                                                OPTIONS,    OPT__COUNT, peertool_addrman_help};

struct args {
	const struct proto_params *chain;
	bool deterministic, dump;
	const char *load, *save, *script;
};

static int set_option(void *ctx, int id, const char *val)
{
	struct args *a = ctx;
	switch (id) {
	case OPT_CHAIN:
		return peertool_chain_arg(&ADDRMAN_CMD, val, &a->chain);
	case OPT_DETERMINISTIC:
		a->deterministic = true;
		break;
	case OPT_LOAD:
		a->load = val;
		break;
	case OPT_SAVE:
		a->save = val;
		break;
	default:
		a->dump = true;
		break;
	}
	return 0;
}

static bool parse_service(const char *text, const char *port, struct addrman_service *out)
{
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (*port == 0 || *end || p > 65535)
		return false;
	return addrman_service_parse(text, (uint16_t)p, out);
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno)
		return false;
	*out = v;
	return true;
}

struct results {
	char **v;
	size_t n, cap;
};

static int push_result(struct results *r, const char *s)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		char **v = xreallocarray(r->v, cap, sizeof(*v));
		if (!v)
			return -1;
		r->v = v;
		r->cap = cap;
	}
	char *copy = xmalloc(strlen(s) + 1);
	if (!copy)
		return -1;
	strcpy(copy, s);
	r->v[r->n++] = copy;
	return 0;
}

/* GetAddr's addresses as one JSON list of "ADDR:PORT" (Core's ToStringAddrPort). */
static int getaddr_result(struct addrman *am, size_t max, size_t pct, int64_t now,
                          struct results *res)
{
	struct addrman_address *v;
	long n = addrman_getaddr(am, max, pct, -1, true, now, &v);
	if (n < 0)
		goto oom;
	size_t cap = 3 + (size_t)n * 80, len = 0;
	char *text = xmalloc(cap);
	if (!text) {
		xfree(v);
		goto oom;
	}
	text[len++] = '[';
	for (long i = 0; i < n; i++) {
		char a[128];
		addrman_service_str(&v[i].svc, a, sizeof(a));
		len += (size_t)snprintf(text + len, cap - len, "%s\"%s\"", i ? ", " : "", a);
	}
	snprintf(text + len, cap - len, "]");
	xfree(v);
	int r = push_result(res, text);
	xfree(text);
	if (r)
		goto oom;
	return 0;
oom:
	peertool_error("addrman", "out of memory");
	return 1;
}

/* One script line; 0, or 1 after naming the problem. */
static int run_line(struct addrman *am, char *line, unsigned lineno, struct results *res)
{
	char *w[8];
	int n = 0;
	char *save = NULL;
	char *hash = strchr(line, '#');
	if (hash)
		*hash = 0;
	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 8;
	     t = strtok_r(NULL, " \t\r\n", &save))
		w[n++] = t;
	if (n == 0)
		return 0;
	struct addrman_service svc, src;
	int64_t time, x;
	const char *result = NULL;
	if (!strcmp(w[0], "getaddr") && n == 4) {
		int64_t max, pct;
		if (!parse_i64(w[1], &max) || !parse_i64(w[2], &pct) || !parse_i64(w[3], &time) ||
		    max < 0 || pct < 0)
			goto bad;
		return getaddr_result(am, (size_t)max, (size_t)pct, time, res) ? 1 : 0;
	}
	if (n < 3 || !parse_service(w[1], w[2], &svc))
		goto bad;
	if (!strcmp(w[0], "add") && n == 6) {
		if (!parse_service(w[3], "0", &src) || !parse_i64(w[4], &time) ||
		    !parse_i64(w[5], &x))
			goto bad;
		struct addrman_address a = {.svc = svc, .time = time, .services = (uint64_t)x};
		size_t added;
		if (addrman_add(am, &a, 1, &src, 0, time, &added))
			goto oom;
		result = added ? "true" : "false";
	} else if (!strcmp(w[0], "good") && n == 4) {
		if (!parse_i64(w[3], &time))
			goto bad;
		result = addrman_good(am, &svc, time) ? "true" : "false";
	} else if (!strcmp(w[0], "attempt") && n == 5) {
		if (!parse_i64(w[3], &x) || !parse_i64(w[4], &time))
			goto bad;
		addrman_attempt(am, &svc, x != 0, time);
	} else if ((!strcmp(w[0], "peer") || !strcmp(w[0], "tried")) && n == 4) {
		if (!parse_i64(w[3], &time))
			goto bad;
		/* Core's addpeeraddress: the address is its own source, and "now" is its time. */
		struct addrman_address a = {
		    .svc = svc, .time = time, .services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS};
		size_t added;
		if (addrman_add(am, &a, 1, &svc, 0, time, &added))
			goto oom;
		if (!added)
			result = "\"failed-adding-to-new\"";
		else if (!strcmp(w[0], "tried") && !addrman_good(am, &svc, time))
			result = "\"failed-adding-to-tried\"";
		else
			result = "\"ok\"";
	} else {
		goto bad;
	}
	if (result && push_result(res, result))
		goto oom;
	return 0;
bad:
	peertool_error("addrman", "script line %u: not a call this tool knows", lineno);
	return 1;
oom:
	peertool_error("addrman", "out of memory");
	return 1;
}

struct dumper {
	bool first;
};

static void dump_one(void *ctx, const struct addrman_entry *e)
{
	struct dumper *d = ctx;
	char a[128], s[128];
	addrman_netaddr_str(&e->addr.svc, a, sizeof(a));
	addrman_netaddr_str(&e->source, s, sizeof(s));
	printf("%s\n    \"%d/%d\": {\"address\": \"%s\", \"port\": %u, \"services\": %" PRIu64
	       ", \"time\": %" PRId64 ", \"network\": \"%s\", \"source\": \"%s\", "
	       "\"source_network\": \"%s\"}",
	       d->first ? "" : ",", e->bucket, e->position, a, e->addr.svc.port, e->addr.services,
	       e->addr.time, addrman_net_name(addrman_netaddr_class(&e->addr.svc)), s,
	       addrman_net_name(addrman_netaddr_class(&e->source)));
	d->first = false;
}

static void dump(struct addrman *am, const struct results *res)
{
	printf("{\n  \"results\": [");
	for (size_t i = 0; i < res->n; i++)
		printf("%s%s", i ? ", " : "", res->v[i]);
	printf("],\n  \"new\": {");
	struct dumper d = {true};
	addrman_entries(am, false, dump_one, &d);
	printf("\n  },\n  \"tried\": {");
	d.first = true;
	addrman_entries(am, true, dump_one, &d);
	printf("\n  }\n}\n");
}

int peertool_addrman(int argc, char **argv)
{
	struct args a = {.chain = proto_params(PROTO_NET_REGTEST)};
	size_t npos = 0;
	int rc = base_opt_parse(&ADDRMAN_CMD, argc, argv, set_option, &a, &a.script, 1, &npos);
	if (rc)
		return rc == BASE_OPT_HELP ? 0 : rc;
	struct results res = {0};
	struct addrman *am = addrman_new(a.deterministic, 0);
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	rc = 1;
	if (!am) {
		peertool_error("addrman", "out of memory");
		goto out;
	}
	if (a.load) {
		char err[ADDRMAN_ERRMSG_MAX];
		int e = addrman_read_file(am, a.load, a.chain->magic, err, sizeof(err));
		if (e) {
			peertool_error("addrman", "%s: %s%s%s", a.load, addrman_strerror(e),
			               err[0] ? ": " : "", err);
			goto out;
		}
	}
	if (a.script) {
		f = strcmp(a.script, "-") ? fopen(a.script, "r") : stdin;
		if (!f) {
			peertool_error("addrman", "cannot open %s: %s", a.script, strerror(errno));
			goto out;
		}
		while (getline(&line, &cap, f) >= 0)
			if (run_line(am, line, ++lineno, &res))
				goto out;
	}
	if (a.save) {
		int e = addrman_write_file(am, a.save, a.chain->magic);
		if (e) {
			peertool_error("addrman", "%s: %s: %s", a.save, addrman_strerror(e),
			               strerror(errno));
			goto out;
		}
	}
	if (a.dump)
		dump(am, &res);
	rc = 0;
out:
	if (f && f != stdin)
		fclose(f);
	free(line);
	for (size_t i = 0; i < res.n; i++)
		xfree(res.v[i]);
	xfree(res.v);
	addrman_free(am);
	return rc;
}
