/*
 * tools/peerctl_show.c: what peerctl prints. Results keep the numbers peerd
 * wrote (amounts with eight decimals, doubles with 16 digits, as Core):
 * jansson would re-print a parsed real with 17 digits, so the result's
 * text is re-indented instead of re-serialized. -getinfo and -netinfo
 * are bitcoin-cli's human screens, built from existing methods.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/version.h"
#include "tools/peerctl.h"

/* ---- re-indenting JSON text ------------------------------------------------- */

/* Index just past the string starting at s[i] == '"'. */
static size_t skip_string(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* Index just past the (valid) JSON value starting at s[i]. */
static size_t skip_value(const char *s, size_t i, size_t n)
{
	int depth = 0;
	do {
		i = skip_ws(s, i, n);
		if (i >= n)
			return n;
		char ch = s[i];
		if (ch == '"') {
			i = skip_string(s, i, n);
		} else if (ch == '{' || ch == '[') {
			depth++;
			i++;
		} else if (ch == '}' || ch == ']') {
			depth--;
			i++;
		} else if (ch == ',' || ch == ':') {
			i++;
		} else {
			while (i < n && !strchr(",:]} \t\r\n", s[i]))
				i++;
		}
	} while (depth > 0);
	return i;
}

/*
 * The text of member `key` of the top-level object in s (valid JSON):
 * *start and *end, or false. Keys are compared as written (peerd escapes
 * none of the ones asked for).
 */
static bool member_text(const char *s, const char *key, size_t *start, size_t *end)
{
	size_t n = strlen(s), klen = strlen(key);
	size_t i = skip_ws(s, 0, n);
	if (i >= n || s[i] != '{')
		return false;
	i++;
	for (;;) {
		i = skip_ws(s, i, n);
		if (i >= n || s[i] != '"')
			return false;
		size_t k = i + 1, kend = skip_string(s, i, n);
		bool match = kend - k - 1 == klen && !memcmp(s + k, key, klen);
		i = skip_ws(s, kend, n);
		if (i >= n || s[i] != ':')
			return false;
		i = skip_ws(s, i + 1, n);
		size_t v_end = skip_value(s, i, n);
		if (match) {
			*start = i;
			*end = v_end;
			return true;
		}
		i = skip_ws(s, v_end, n);
		if (i >= n || s[i] != ',')
			return false;
		i++;
	}
}

static void indent(FILE *f, int level)
{
	for (int k = 0; k < level; k++)
		fputs("  ", f);
}

/* Write s[i..end) (valid JSON) with bitcoin-cli's two-space indent. */
static void reindent(FILE *f, const char *s, size_t i, size_t end)
{
	int level = 0;
	while (i < end) {
		char ch = s[i];
		if (ch == '"') {
			size_t j = skip_string(s, i, end);
			fwrite(s + i, 1, j - i, f);
			i = j;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			i++;
			continue;
		}
		if (ch == '{' || ch == '[') {
			size_t j = skip_ws(s, i + 1, end);
			if (j < end && (s[j] == '}' || s[j] == ']')) {
				fputc(ch, f);
				fputc(s[j], f);
				i = j + 1;
				continue;
			}
			fputc(ch, f);
			fputc('\n', f);
			indent(f, ++level);
		} else if (ch == '}' || ch == ']') {
			fputc('\n', f);
			indent(f, --level);
			fputc(ch, f);
		} else if (ch == ',') {
			fputs(",\n", f);
			indent(f, level);
		} else if (ch == ':') {
			fputs(": ", f);
		} else {
			fputc(ch, f);
		}
		i++;
	}
	fputc('\n', f);
}

int peerctl_print_error(const json_t *error)
{
	json_t *code = json_object_get(error, "code");
	json_t *msg = json_object_get(error, "message");
	long long c = json_is_integer(code) ? (long long)json_integer_value(code) : 0;
	fprintf(stderr, "error code: %lld\nerror message:\n", c);
	if (json_is_string(msg)) {
		fprintf(stderr, "%s\n", json_string_value(msg));
	} else {
		char *s = json_dumps(error, JSON_INDENT(2) | JSON_ENCODE_ANY);
		fprintf(stderr, "%s\n", s ? s : "(no message)");
		xfree(s);
	}
	/* bitcoin-cli's exit status: the code's absolute value (1 when there is none). */
	long long rc = c < 0 ? -c : c;
	return rc ? (int)(rc > INT32_MAX ? INT32_MAX : rc) : 1;
}

int peerctl_print_result(const json_t *reply, const char *raw)
{
	json_t *error = json_object_get(reply, "error");
	if (error && !json_is_null(error))
		return peerctl_print_error(error);
	json_t *result = json_object_get(reply, "result");
	if (!result) {
		fprintf(stderr, "peerctl: reply has neither result nor error\n");
		return 1;
	}
	size_t a, b;
	if (json_is_string(result)) {
		fwrite(json_string_value(result), 1, json_string_length(result), stdout);
		fputc('\n', stdout);
	} else if (!json_is_null(result) && raw && member_text(raw, "result", &a, &b)) {
		reindent(stdout, raw, a, b);
	} else if (!json_is_null(result)) {
		char *s =
		    json_dumps(result, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_REAL_PRECISION(16));
		if (!s) {
			fprintf(stderr, "peerctl: out of memory printing the reply\n");
			return 1;
		}
		printf("%s\n", s);
		xfree(s);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "peerctl: cannot write the result: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* ---- -getinfo ------------------------------------------------------------------ */

static long long num(const json_t *o, const char *path)
{
	/* "a.b": nested members; missing is 0. */
	char key[64];
	const json_t *v = o;
	while (v && *path) {
		size_t k = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)k, path);
		v = json_object_get(v, key);
		path += k + (path[k] == '.');
	}
	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return 0;
}

static const char *str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

static void print_warnings(const json_t *w)
{
	size_t i;
	json_t *v;
	if (json_is_string(w) && json_string_length(w)) {
		printf("Warnings: %s\n", json_string_value(w));
		return;
	}
	if (!json_is_array(w) || !json_array_size(w)) {
		printf("Warnings: (none)\n");
		return;
	}
	printf("Warnings:\n");
	json_array_foreach(w, i, v)
	{
		if (json_is_string(v))
			printf("  %s\n", json_string_value(v));
	}
}

static void print_freelist(const char *name, const json_t *fl)
{
	if (!fl)
		return;
	printf("  %-7s %lld of %lld in use (high water %lld), %lld free; %lld hits, %lld misses\n",
	       name, num(fl, "in_use"), num(fl, "capacity"), num(fl, "high_water"), num(fl, "free"),
	       num(fl, "hits"), num(fl, "misses"));
}

int peerctl_getinfo(const struct peerctl *pc)
{
	json_t *net = NULL, *chain = NULL, *stats = NULL;
	int rc = peerctl_result(pc, "getnetworkinfo", &net);
	if (rc)
		return rc;
	/* The chain may not be loaded yet: the rest of the screen still helps. */
	if (peerctl_result(pc, "getblockchaininfo", &chain))
		chain = NULL;
	if ((rc = peerctl_result(pc, "getstats", &stats)))
		goto out;

	printf("peerd %s, version %lld, protocol %lld\n", str(net, "subversion", "?"),
	       num(net, "version"), num(net, "protocolversion"));
	printf("Chain: %s\n", chain ? str(chain, "chain", "?") : str(net, "chain", "?"));
	if (chain) {
		printf("Blocks: %lld\n", num(chain, "blocks"));
		printf("Headers: %lld\n", num(chain, "headers"));
		json_t *vp = json_object_get(chain, "verificationprogress");
		printf("Verification progress: %.4f%%\n",
		       json_is_number(vp) ? json_number_value(vp) * 100.0 : 0.0);
		json_t *diff = json_object_get(chain, "difficulty");
		printf("Difficulty: %.16g\n", json_is_number(diff) ? json_number_value(diff) : 0.0);
		printf("Initial block download: %s\n",
		       json_is_true(json_object_get(chain, "initialblockdownload")) ? "yes" : "no");
	} else {
		printf("Blocks: (chain not loaded)\n");
	}
	printf("\nNetwork: in %lld, out %lld, total %lld (max %lld)\n", num(net, "connections_in"),
	       num(net, "connections_out"), num(net, "connections"), num(net, "maxconnections"));
	printf("Bans: %lld banned, %lld discouraged\n", num(stats, "bans.banned"),
	       num(stats, "bans.discouraged_known"));
	printf("Uptime: %lld s, RSS %.1f MiB, %lld open files\n", num(stats, "process.uptime"),
	       (double)num(stats, "process.rss_bytes") / 1048576.0, num(stats, "process.open_fds"));
	json_t *fl = json_object_get(stats, "freelists");
	printf("\nFree lists:\n");
	const char *name;
	json_t *v;
	json_object_foreach(fl, name, v)
	{
		print_freelist(name, v);
	}
	json_t *cq = json_object_get(stats, "checkqueue");
	if (cq) {
		long long busy = num(cq, "busy_ms"), idle = num(cq, "idle_ms");
		printf(
		    "Check queue: %lld threads, %lld rounds (%lld failed), %lld jobs; busy %lld ms,"
		    " idle %lld ms (%.1f%% busy)\n",
		    num(cq, "threads"), num(cq, "rounds"), num(cq, "rounds_failed"),
		    num(cq, "jobs"), busy, idle,
		    busy + idle ? 100.0 * (double)busy / (double)(busy + idle) : 0.0);
	}
	printf("\n");
	print_warnings(json_object_get(chain ? chain : net, "warnings"));
	if (fflush(stdout) != 0)
		rc = 1;
out:
	json_decref(net);
	json_decref(chain);
	json_decref(stats);
	return rc;
}

/* ---- -netinfo -------------------------------------------------------------------- */

/* Core's short names for connection types. */
static const char *conn_type_short(const char *t)
{
	if (!strcmp(t, "outbound-full-relay") || !strcmp(t, "inbound"))
		return "full";
	if (!strcmp(t, "block-relay-only"))
		return "block";
	if (!strcmp(t, "manual"))
		return "manual";
	if (!strcmp(t, "feeler"))
		return "feeler";
	if (!strcmp(t, "addr-fetch"))
		return "addr";
	return t;
}

enum { NET_IPV4, NET_IPV6, NET_NPR, NET_OTHER, NET__COUNT };
static const char *const NET_NAMES[NET__COUNT] = {"ipv4", "ipv6", "npr", "other"};

static int net_index(const char *n)
{
	if (!strcmp(n, "ipv4"))
		return NET_IPV4;
	if (!strcmp(n, "ipv6"))
		return NET_IPV6;
	if (!strcmp(n, "not_publicly_routable"))
		return NET_NPR;
	return NET_OTHER;
}

/* Milliseconds of a ping field, or "" when absent. */
static void ms_field(const json_t *p, const char *key, char *out, size_t cap)
{
	json_t *v = json_object_get(p, key);
	if (json_is_number(v))
		snprintf(out, cap, "%.0f", json_number_value(v) * 1000.0);
	else
		snprintf(out, cap, "%s", "");
}

static void ago(long long now, long long then, char *out, size_t cap)
{
	if (then <= 0)
		snprintf(out, cap, "%s", "");
	else
		snprintf(out, cap, "%lld", now > then ? now - then : 0);
}

int peerctl_netinfo(const struct peerctl *pc, int level)
{
	json_t *net = NULL, *peers = NULL;
	int rc = peerctl_result(pc, "getnetworkinfo", &net);
	if (rc)
		return rc;
	if ((rc = peerctl_result(pc, "getpeerinfo", &peers)))
		goto out;
	long long now = (long long)time(NULL);
	long long counts[3][NET__COUNT + 1] = {{0}}; /* in, out, total × networks + total */
	long long block_relay = 0, manual = 0;
	printf("peerd client %s - server %lld%s\n\n", PEERD_VERSION_STRING,
	       num(net, "protocolversion"), str(net, "subversion", ""));
	if (level > 0)
		printf("<->   type   net     mping   ping  send  recv  relay    age  id  version  "
		       "address\n");
	size_t i;
	json_t *p;
	json_array_foreach(peers, i, p)
	{
		bool in = json_is_true(json_object_get(p, "inbound"));
		const char *type = conn_type_short(str(p, "connection_type", "?"));
		int ni = net_index(str(p, "network", ""));
		counts[in ? 0 : 1][ni]++;
		counts[in ? 0 : 1][NET__COUNT]++;
		counts[2][ni]++;
		counts[2][NET__COUNT]++;
		if (!strcmp(type, "block"))
			block_relay++;
		if (!strcmp(type, "manual"))
			manual++;
		if (level == 0)
			continue;
		char mping[32], ping[32], send[32], recv[32];
		ms_field(p, "minping", mping, sizeof(mping));
		ms_field(p, "pingtime", ping, sizeof(ping));
		ago(now, num(p, "lastsend"), send, sizeof(send));
		ago(now, num(p, "lastrecv"), recv, sizeof(recv));
		long long conntime = num(p, "conntime");
		printf("%3s  %6s  %-5s %7s %6s %5s %5s  %-5s %5lldm %3lld  %lld%s  %s\n",
		       in ? "in" : "out", type, NET_NAMES[ni], mping, ping, send, recv,
		       json_is_true(json_object_get(p, "relaytxes")) ? "yes" : "no",
		       conntime > 0 && now > conntime ? (now - conntime) / 60 : 0, num(p, "id"),
		       num(p, "version"), str(p, "subver", ""), str(p, "addr", ""));
	}
	if (level > 0)
		printf("  ms     ms   sec   sec  (age in minutes)\n\n");
	printf("        ipv4    ipv6     npr   total   block  manual\n");
	static const char *const DIR[3] = {"in", "out", "total"};
	for (int d = 0; d < 3; d++) {
		printf("%-5s %6lld  %6lld  %6lld  %6lld", DIR[d], counts[d][NET_IPV4],
		       counts[d][NET_IPV6], counts[d][NET_NPR], counts[d][NET__COUNT]);
		if (d == 1)
			printf("  %6lld  %6lld", block_relay, manual);
		printf("\n");
	}
	json_t *local = json_object_get(net, "localaddresses");
	printf("\nLocal addresses: %s\n", json_array_size(local) ? "" : "n/a");
	json_t *a;
	json_array_foreach(local, i, a)
	{
		printf("  %s port %lld\n", str(a, "address", "?"), num(a, "port"));
	}
	if (fflush(stdout) != 0)
		rc = 1;
out:
	json_decref(net);
	json_decref(peers);
	return rc;
}
