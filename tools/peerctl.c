/*
 * tools/peerctl.c: peerd's control client, used like bitcoin-cli.
 *
 *   peerctl [options] METHOD [ARG...]   |   peerctl -getinfo   |   peerctl -netinfo [LEVEL]
 *
 * It finds the control socket exactly as peerd does (conf_load with the
 * same keys, file and defaults); when none of -datadir, -conf and
 * -controlsocket is given and that socket does not exist, it looks where
 * the systemd unit puts it (/run/peerd/control.sock) and where
 * /etc/peerd/peerd.conf says. It sends one JSON-RPC 2.0 request line,
 * reads one reply line and prints the result: a string raw, anything
 * else as indented JSON, null as nothing. An error reply goes to stderr
 * in bitcoin-cli's format and the exit status is the error code's
 * absolute value; a transport error exits 1.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/version.h"
#include "base/alloc.h"
#include "conf/conf.h"
#include "tools/peerctl.h"

/* getpeerinfo for thousands of peers is a few MB; anything near this is not peerd. */
#define PEERCTL_MAX_REPLY  (256u * 1024 * 1024)
#define PEERCTL_READ_CHUNK 65536

/** The config file and socket of the systemd unit (systemd/peerd.service). */
#define PEERCTL_SYSTEM_CONF   "/etc/peerd/peerd.conf"
#define PEERCTL_SYSTEM_SOCKET "/run/peerd/control.sock"
/** Most lines -stdin reads as arguments. */
#define PEERCTL_MAX_STDIN_ARGS 1024
/** Longest -stdin line. */
#define PEERCTL_MAX_STDIN_LINE (8u * 1024 * 1024 + 2)
/** How often -rpcwait retries the socket. */
#define PEERCTL_WAIT_STEP_MS 250

static const char usage[] =
    "Usage: peerctl [options] METHOD [ARG...]\n"
    "       peerctl [options] -getinfo\n"
    "       peerctl [options] -netinfo [LEVEL]\n"
    "\n"
    "Send one JSON-RPC request to peerd's control socket and print the result\n"
    "(strings as they are, everything else as indented JSON, numbers as peerd\n"
    "wrote them). Each ARG becomes a parameter: numbers, true, false, null, and\n"
    "JSON objects or arrays as JSON, anything else as a string. `peerctl help`\n"
    "lists peerd's methods, `peerctl help METHOD` one of them.\n"
    "\n"
    "Options (the same keys and config file as peerd, so both find the same\n"
    "socket; an option after METHOD is an ARG):\n"
    "  -datadir=<dir>          peerd's data directory (default: $STATE_DIRECTORY,\n"
    "                          else ~/.peerd); the socket is control.sock in the\n"
    "                          network's directory: <datadir>/regtest/ for\n"
    "                          -regtest (testnet3/, testnet4/, signet/), the\n"
    "                          datadir itself for main\n"
    "  -conf=<file>            config file to read (default <datadir>/peerd.conf)\n"
    "  -controlsocket=<path>   the socket itself, overriding the above\n"
    "  -chain=<net>, -regtest, -signet, -testnet, -testnet4\n"
    "                          network, which selects a [section] of the file\n"
    "  -named                  ARGs are NAME=VALUE (named parameters); an ARG\n"
    "                          without '=' is positional\n"
    "  -stdin                  read more ARGs from stdin, one a line, after those\n"
    "                          on the command line (for secrets and long hex)\n"
    "  -rpcwait                wait for peerd's socket to answer (peerd starting)\n"
    "  -rpcwaittimeout=<s>     give up waiting after this many seconds (default 0:\n"
    "                          forever)\n"
    "  -rpcclienttimeout=<s>   seconds to wait for the reply (default 30; 0 = forever)\n"
    "  -getinfo                one screen: version, chain, blocks and headers,\n"
    "                          connections in and out, bans, free lists, check queue\n"
    "  -netinfo [LEVEL]        peers by direction and network; LEVEL 1-4 adds one\n"
    "                          row per peer (type, ping, last send/recv, relay, age,\n"
    "                          version, address)\n"
    "  -help                   this text; -version: the version\n"
    "\n"
    "With none of -datadir, -conf and -controlsocket, and no socket where they\n"
    "default to, peerctl tries the systemd unit's: " PEERCTL_SYSTEM_SOCKET ",\n"
    "then the socket " PEERCTL_SYSTEM_CONF " names (its controlsocket= or datadir=).\n"
    "\n"
    "Example:\n"
    "  peerctl -regtest -datadir=/tmp/dd getblockcount\n"
    "  peerctl -named getblock blockhash=0f91...06 verbosity=2\n"
    "\n"
    "Exit status, as bitcoin-cli's: 0 success; an error reply prints \"error\n"
    "code: N\" and \"error message:\" on stderr and exits with N's absolute value\n"
    "(modulo 256, as every exit status); 1 for every other failure (no socket,\n"
    "timeout, bad option).\n";

static void *json_xmalloc(size_t n)
{
	return xmalloc(n);
}

/* A positional argument as a JSON value: JSON if it parses as JSON, else a string. */
static json_t *param_from_arg(const char *a)
{
	json_error_t e;
	json_t *v = json_loads(a, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
	if (v)
		return v;
	return json_string(a); /* NULL for invalid UTF-8 */
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline for poll(): -1 means no deadline. */
static int left_ms(long long deadline)
{
	if (deadline < 0)
		return -1;
	long long left = deadline - now_ms();
	if (left < 0)
		return 0;
	return left > 1000000000 ? 1000000000 : (int)left;
}

/* Wait for `events` on fd. 1 ready, 0 timed out, -1 error (errno). */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, left_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r;
		return 1;
	}
}

static int connect_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* 0, or -1 with a message on stderr. */
static int send_all(int fd, const char *p, size_t n, long long deadline, int timeout_s)
{
	while (n) {
		int r = wait_fd(fd, POLLOUT, deadline);
		if (r == 0) {
			fprintf(stderr,
			        "peerctl: peerd did not take the request within %d s "
			        "(-rpcclienttimeout)\n",
			        timeout_s);
			return -1;
		}
		/* MSG_NOSIGNAL: a peerd that closes on us is an error message, not SIGPIPE. */
		ssize_t w = r < 0 ? -1 : send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (r > 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			fprintf(stderr, "peerctl: cannot send the request: %s\n", strerror(errno));
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read up to the first '\n'. Returns the line (xmalloc'd, NUL-terminated) or NULL after a message.
 */
static char *read_line(int fd, long long deadline, int timeout_s, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < PEERCTL_READ_CHUNK) {
			if (cap >= PEERCTL_MAX_REPLY) {
				fprintf(stderr, "peerctl: reply longer than %u bytes\n",
				        PEERCTL_MAX_REPLY);
				goto fail;
			}
			size_t ncap = cap ? cap * 2 : PEERCTL_READ_CHUNK * 2;
			char *nb = xrealloc(buf, ncap);
			if (!nb) {
				fprintf(stderr, "peerctl: out of memory reading the reply\n");
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		int r = wait_fd(fd, POLLIN, deadline);
		if (r == 0) {
			fprintf(stderr,
			        "peerctl: no reply from peerd within %d s (-rpcclienttimeout)\n",
			        timeout_s);
			goto fail;
		}
		ssize_t got = r < 0 ? -1 : recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);
		if (got < 0) {
			if (r > 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			fprintf(stderr, "peerctl: cannot read the reply: %s\n", strerror(errno));
			goto fail;
		}
		if (got == 0) {
			fprintf(stderr, "peerctl: peerd closed the connection %s\n",
			        n ? "in the middle of a reply" : "without replying");
			goto fail;
		}
		char *nl = memchr(buf + n, '\n', (size_t)got);
		n += (size_t)got;
		if (nl) {
			*nl = '\0';
			*len = (size_t)(nl - buf);
			return buf;
		}
	}
fail:
	xfree(buf);
	return NULL;
}

/* Connect, retrying while peerd is not up yet when -rpcwait. 0 with *fd, or 1 after a message. */
static int connect_waiting(const struct peerctl *pc, int *fd)
{
	long long deadline = pc->wait_timeout_s ? now_ms() + pc->wait_timeout_s * 1000LL : -1;
	for (;;) {
		*fd = connect_socket(pc->socket);
		if (*fd >= 0)
			return 0;
		int e = errno;
		/* Not there yet, or there but not listening: what a starting peerd looks like. */
		bool starting = e == ENOENT || e == ECONNREFUSED || e == EAGAIN;
		if (!pc->wait || !starting) {
			fprintf(stderr,
			        "peerctl: cannot connect to control socket %s: %s (is peerd "
			        "running?)\n",
			        pc->socket, strerror(e));
			return 1;
		}
		if (deadline >= 0 && now_ms() >= deadline) {
			fprintf(
			    stderr,
			    "peerctl: no control socket at %s after %d s (-rpcwaittimeout): %s\n",
			    pc->socket, pc->wait_timeout_s, strerror(e));
			return 1;
		}
		struct timespec ts = {0, PEERCTL_WAIT_STEP_MS * 1000000L};
		nanosleep(&ts, NULL);
	}
}

int peerctl_request(const struct peerctl *pc, const char *method, json_t *params, json_t **reply,
                    char **raw)
{
	int fd = -1, rc = 1;
	char *line = NULL, *text = NULL;
	json_t *req = json_pack("{s:s, s:i, s:s, s:O}", "jsonrpc", "2.0", "id", 1, "method", method,
	                        "params", params);
	*reply = NULL;
	if (raw)
		*raw = NULL;
	if (!req) {
		/* Tell a bad method name (jansson refuses invalid UTF-8) from out of memory. */
		json_t *probe = json_string(method);
		fprintf(stderr, "peerctl: %s\n",
		        probe ? "out of memory" : "method name is not valid UTF-8");
		json_decref(probe);
		return 1;
	}
	line = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len = line ? strlen(line) : 0;
	char *full = line ? xrealloc(line, len + 2) : NULL;
	if (!full) {
		fprintf(stderr, "peerctl: out of memory\n");
		goto out;
	}
	line = full;
	memcpy(line + len, "\n", 2);
	if (connect_waiting(pc, &fd))
		goto out;
	long long deadline = pc->timeout_s ? now_ms() + pc->timeout_s * 1000LL : -1;
	if (send_all(fd, line, len + 1, deadline, pc->timeout_s))
		goto out;
	size_t rlen;
	text = read_line(fd, deadline, pc->timeout_s, &rlen);
	if (!text)
		goto out;
	json_error_t e;
	json_t *r = json_loadb(text, rlen, 0, &e);
	if (!r || !json_is_object(r)) {
		fprintf(stderr, "peerctl: reply is not a JSON-RPC object: %s\n",
		        r ? "not an object" : e.text);
		json_decref(r);
		goto out;
	}
	json_t *id = json_object_get(r, "id");
	if (id && !json_is_null(id) && !(json_is_integer(id) && json_integer_value(id) == 1)) {
		fprintf(stderr, "peerctl: reply is for another request\n");
		json_decref(r);
		goto out;
	}
	*reply = r;
	if (raw) {
		*raw = text;
		text = NULL;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	xfree(text);
	xfree(line);
	json_decref(req);
	return rc;
}

int peerctl_result(const struct peerctl *pc, const char *method, json_t **result)
{
	json_t *reply, *params = json_array();
	*result = NULL;
	if (!params) {
		fprintf(stderr, "peerctl: out of memory\n");
		return 1;
	}
	int rc = peerctl_request(pc, method, params, &reply, NULL);
	json_decref(params);
	if (rc)
		return rc;
	json_t *error = json_object_get(reply, "error");
	if (error && !json_is_null(error)) {
		rc = peerctl_print_error(error);
	} else if (!(*result = json_incref(json_object_get(reply, "result")))) {
		fprintf(stderr, "peerctl: %s: reply has no result\n", method);
		rc = 1;
	}
	json_decref(reply);
	return rc;
}

/* ---- options of peerctl's own (peerd's keys go to conf_load_args) ----------- */

struct ctl_opts {
	bool named, use_stdin, wait, getinfo, netinfo;
	int wait_timeout_s;
	bool explicit_socket; /* -datadir, -conf or -controlsocket given */
};

/* A whole number of seconds, 0 to a day. */
static int parse_seconds(const char *v, int *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 0 || n > 86400)
		return -1;
	*out = (int)n;
	return 0;
}

static bool is_opt(const char *a, const char *name)
{
	const char *n = a + 1 + (a[1] == '-');
	size_t k = strlen(name);
	return !strncmp(n, name, k) && (n[k] == 0 || n[k] == '=');
}

/* A boolean option's value: -name, -name=1 true; -name=0 false. */
static bool opt_bool(const char *a)
{
	const char *eq = strchr(a, '=');
	return !eq || strcmp(eq + 1, "0") != 0;
}

/*
 * Take peerctl's own options out of argv[1..] up to METHOD, leaving peerd's
 * keys (in order) in out[]; *n_out counts out, argv[0] included. 0, or 1
 * after a message.
 */
static int take_own_options(int argc, char **argv, struct ctl_opts *o, char **out, int *n_out)
{
	int n = 0;
	out[n++] = argv[0];
	memset(o, 0, sizeof(*o));
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (is_opt(a, "named")) {
			o->named = opt_bool(a);
		} else if (is_opt(a, "stdin")) {
			o->use_stdin = opt_bool(a);
		} else if (is_opt(a, "rpcwaittimeout")) {
			const char *eq = strchr(a, '=');
			if (!eq || parse_seconds(eq + 1, &o->wait_timeout_s)) {
				fprintf(
				    stderr,
				    "peerctl: -rpcwaittimeout wants seconds, 0 to 86400: '%s'\n",
				    a);
				return 1;
			}
		} else if (is_opt(a, "rpcwait")) {
			o->wait = opt_bool(a);
		} else if (is_opt(a, "getinfo")) {
			o->getinfo = opt_bool(a);
		} else if (is_opt(a, "netinfo")) {
			o->netinfo = opt_bool(a);
		} else {
			if (is_opt(a, "datadir") || is_opt(a, "conf") || is_opt(a, "controlsocket"))
				o->explicit_socket = true;
			out[n++] = argv[i];
		}
	}
	for (; i < argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	*n_out = n;
	return 0;
}

/* ---- where the socket is -------------------------------------------------------- */

static bool is_socket(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * The socket a peerd run by systemd/peerd.service listens on, when the
 * default one is not there: the unit's runtime directory, else what the
 * system config names (loaded with the user's network options). A new
 * string (xmalloc'd), or NULL.
 */
static char *system_socket(int n_opts, char **opts)
{
	const char *sock = getenv("PEERCTL_SYSTEM_SOCKET"); /* tests and staged installs */
	const char *conf = getenv("PEERCTL_SYSTEM_CONF");
	sock = sock ? sock : PEERCTL_SYSTEM_SOCKET;
	conf = conf ? conf : PEERCTL_SYSTEM_CONF;
	if (is_socket(sock)) {
		char *s = xmalloc(strlen(sock) + 1);
		if (s)
			memcpy(s, sock, strlen(sock) + 1);
		return s;
	}
	if (access(conf, R_OK) != 0)
		return NULL;
	char confarg[CONF_MAX_PATH + 8];
	if ((size_t)snprintf(confarg, sizeof(confarg), "-conf=%s", conf) >= sizeof(confarg))
		return NULL;
	char **argv2 = xcalloc((size_t)n_opts + 2, sizeof(*argv2));
	if (!argv2)
		return NULL;
	int n = 0;
	argv2[n++] = opts[0];
	argv2[n++] = confarg;
	for (int i = 1; i < n_opts && opts[i][0] == '-'; i++)
		argv2[n++] = opts[i];
	struct peerd_conf c;
	char err[256], *out = NULL;
	int argi;
	if (conf_load_args(&c, n, argv2, CONF_F_POSITIONAL, &argi, err, sizeof(err)) == 0) {
		if (is_socket(c.controlsocket)) {
			out = c.controlsocket;
			c.controlsocket = NULL;
		}
		conf_release(&c);
	}
	xfree(argv2);
	return out;
}

/* ---- arguments ---------------------------------------------------------------------- */

/* Lines of stdin appended to args (new strings, xmalloc'd). 0, or 1 after a message. */
static int read_stdin_args(char ***args, int *n)
{
	char *line = xmalloc(PEERCTL_MAX_STDIN_LINE);
	int rc = 1;
	if (!line) {
		fprintf(stderr, "peerctl: out of memory\n");
		return 1;
	}
	while (fgets(line, PEERCTL_MAX_STDIN_LINE, stdin)) {
		size_t len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (len == PEERCTL_MAX_STDIN_LINE - 1) {
			fprintf(stderr, "peerctl: -stdin: line longer than %u bytes\n",
			        PEERCTL_MAX_STDIN_LINE - 2);
			goto out;
		}
		if (len && line[len - 1] == '\r')
			line[--len] = 0;
		if (*n >= PEERCTL_MAX_STDIN_ARGS) {
			fprintf(stderr, "peerctl: -stdin: more than %d arguments\n",
			        PEERCTL_MAX_STDIN_ARGS);
			goto out;
		}
		char **na = xrealloc(*args, (size_t)(*n + 1) * sizeof(**args));
		char *copy = xmalloc(len + 1);
		if (na)
			*args = na;
		if (!na || !copy) {
			xfree(copy);
			fprintf(stderr, "peerctl: out of memory\n");
			goto out;
		}
		memcpy(copy, line, len + 1);
		(*args)[(*n)++] = copy;
	}
	rc = 0;
out:
	xfree(line);
	return rc;
}

/*
 * The params of a request: an array of the arguments, or with -named an
 * object of NAME=VALUE (arguments without '=' go, in order, to "args" as
 * bitcoin-cli sends them). NULL after a message.
 */
static json_t *build_params(char **args, int n, bool named)
{
	json_t *params = named ? json_object() : json_array();
	json_t *pos = NULL;
	if (!params)
		goto oom;
	for (int i = 0; i < n; i++) {
		const char *a = args[i], *eq = named ? strchr(a, '=') : NULL;
		json_t *v = param_from_arg(eq ? eq + 1 : a);
		if (!v) {
			fprintf(stderr, "peerctl: argument %d is not valid UTF-8\n", i + 1);
			goto fail;
		}
		if (!named) {
			if (json_array_append_new(params, v))
				goto oom;
			continue;
		}
		if (!eq || eq == a) {
			if ((!pos &&
			     (!(pos = json_array()) || json_object_set_new(params, "args", pos))) ||
			    json_array_append_new(pos, v)) {
				if (!json_object_get(params, "args"))
					json_decref(pos);
				goto oom;
			}
			continue;
		}
		char key[256];
		if ((size_t)(eq - a) >= sizeof(key)) {
			json_decref(v);
			fprintf(stderr, "peerctl: parameter name too long in argument %d\n", i + 1);
			goto fail;
		}
		memcpy(key, a, (size_t)(eq - a));
		key[eq - a] = 0;
		if (json_object_get(params, key)) {
			json_decref(v);
			fprintf(stderr, "peerctl: parameter %s given more than once\n", key);
			goto fail;
		}
		if (json_object_set_new(params, key, v))
			goto oom;
	}
	return params;
oom:
	fprintf(stderr, "peerctl: out of memory\n");
fail:
	json_decref(params);
	return NULL;
}

int main(int argc, char **argv)
{
	struct peerd_conf c;
	struct ctl_opts o;
	char err[512];
	int argi = argc, rc = 1, n_opts = 0, n_args = 0;
	char **opts = NULL, **args = NULL, *sys = NULL, *raw = NULL;
	bool conf_loaded = false;
	json_t *params = NULL, *reply = NULL;

	json_set_alloc_funcs(json_xmalloc, xfree);
	opts = xcalloc((size_t)argc + 1, sizeof(*opts));
	if (!opts) {
		fprintf(stderr, "peerctl: out of memory\n");
		return 1;
	}
	if (take_own_options(argc, argv, &o, opts, &n_opts))
		goto out;
	int lr = conf_load_args(&c, n_opts, opts, CONF_F_POSITIONAL, &argi, err, sizeof(err));
	if (lr == CONF_EHELP) {
		if (c.version)
			printf("peerctl %s\n", PEERD_VERSION_STRING);
		else
			fputs(usage, stdout);
		rc = 0;
		goto out;
	}
	conf_loaded = lr == 0;
	/* As bitcoin-cli: a mistyped -datadir is named, not reported as a missing socket. */
	if (!lr && (o.explicit_socket || c.datadir_set))
		lr = conf_check_datadir(&c, err, sizeof(err));
	if (lr) {
		fprintf(stderr, "peerctl: %s\n", err);
		goto out;
	}
	struct peerctl pc = {.socket = c.controlsocket,
	                     .timeout_s = c.rpcclienttimeout_s,
	                     .wait = o.wait,
	                     .wait_timeout_s = o.wait_timeout_s};
	/* Under systemd: the unit's socket when the user's default is not there. */
	if (!o.explicit_socket && !c.datadir_set && !is_socket(c.controlsocket) &&
	    (sys = system_socket(argi, opts)) != NULL)
		pc.socket = sys;

	/* The arguments after the options, then -stdin's lines. */
	for (int i = argi; i < n_opts; i++) {
		char **na = xrealloc(args, (size_t)(n_args + 1) * sizeof(*args));
		char *copy = na ? xmalloc(strlen(opts[i]) + 1) : NULL;
		if (na)
			args = na;
		if (!copy) {
			fprintf(stderr, "peerctl: out of memory\n");
			goto out;
		}
		memcpy(copy, opts[i], strlen(opts[i]) + 1);
		args[n_args++] = copy;
	}
	if (o.use_stdin && read_stdin_args(&args, &n_args))
		goto out;

	if (o.getinfo) {
		if (n_args) {
			fprintf(stderr, "peerctl: -getinfo takes no arguments\n");
			goto out;
		}
		rc = peerctl_getinfo(&pc);
		goto out;
	}
	if (o.netinfo) {
		int level = 0;
		if (n_args > 1 || (n_args == 1 && (parse_seconds(args[0], &level) || level > 4))) {
			fprintf(stderr, "peerctl: -netinfo takes one LEVEL, 0 to 4\n");
			goto out;
		}
		rc = peerctl_netinfo(&pc, level);
		goto out;
	}
	if (!n_args) {
		fprintf(stderr, "peerctl: no method given (peerctl -help for usage)\n");
		goto out;
	}
	if (!(params = build_params(args + 1, n_args - 1, o.named)))
		goto out;
	if ((rc = peerctl_request(&pc, args[0], params, &reply, &raw)))
		goto out;
	rc = peerctl_print_result(reply, raw);
out:
	for (int i = 0; i < n_args; i++)
		xfree(args[i]);
	xfree(args);
	xfree(opts);
	xfree(sys);
	xfree(raw);
	json_decref(reply);
	json_decref(params);
	if (conf_loaded)
		conf_release(&c);
	return rc;
}
