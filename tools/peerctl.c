/*
 * tools/peerctl.c: peerd's control client, used like bitcoin-cli.
 *
 *   peerctl [-datadir=DIR | -conf=FILE | -controlsocket=PATH | -regtest ...] METHOD [ARG...]
 *
 * It finds the control socket exactly as peerd does (conf_load with the
 * same keys, file and defaults), sends one JSON-RPC 2.0 request line,
 * reads one reply line and prints the result: a string raw, anything else
 * as indented JSON, null as nothing. An error reply goes to stderr in
 * bitcoin-cli's format; every failure exits 1.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
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

/* getpeerinfo for thousands of peers is a few MB; anything near this is not peerd. */
#define PEERCTL_MAX_REPLY  (256u * 1024 * 1024)
#define PEERCTL_READ_CHUNK 65536

static const char usage[] =
    "Usage: peerctl [options] METHOD [ARG...]\n"
    "\n"
    "Send one JSON-RPC request to peerd's control socket and print the result\n"
    "(strings as they are, everything else as indented JSON). Each ARG becomes\n"
    "a parameter: numbers, true, false, null, and JSON objects or arrays as\n"
    "JSON, anything else as a string. `peerctl help` lists peerd's methods.\n"
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
    "  -rpcclienttimeout=<s>   seconds to wait for the reply (default 30; 0 = forever)\n"
    "  -help                   this text; -version: the version\n"
    "\n"
    "Exit status: 0 on success; 1 on any error, reported on stderr, an error\n"
    "reply as \"error code: N\" and \"error message:\" followed by its text.\n";

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

/* Print a reply: the result on stdout, or the error on stderr. Returns the exit code. */
static int print_reply(const char *line, size_t len)
{
	json_error_t e;
	json_t *reply = json_loadb(line, len, 0, &e);
	int rc = 1;
	if (!reply || !json_is_object(reply)) {
		fprintf(stderr, "peerctl: reply is not a JSON-RPC object: %s\n",
		        reply ? "not an object" : e.text);
		goto out;
	}
	json_t *id = json_object_get(reply, "id");
	if (id && !json_is_null(id) && !(json_is_integer(id) && json_integer_value(id) == 1)) {
		fprintf(stderr, "peerctl: reply is for another request\n");
		goto out;
	}
	json_t *error = json_object_get(reply, "error");
	if (error && !json_is_null(error)) {
		json_t *code = json_object_get(error, "code");
		json_t *msg = json_object_get(error, "message");
		fprintf(stderr, "error code: %lld\nerror message:\n",
		        json_is_integer(code) ? (long long)json_integer_value(code) : 0LL);
		if (json_is_string(msg)) {
			fprintf(stderr, "%s\n", json_string_value(msg));
		} else {
			char *s = json_dumps(error, JSON_INDENT(2) | JSON_ENCODE_ANY);
			fprintf(stderr, "%s\n", s ? s : "(no message)");
			xfree(s);
		}
		goto out;
	}
	json_t *result = json_object_get(reply, "result");
	if (!result) {
		fprintf(stderr, "peerctl: reply has neither result nor error\n");
		goto out;
	}
	if (json_is_string(result)) {
		fwrite(json_string_value(result), 1, json_string_length(result), stdout);
		fputc('\n', stdout);
	} else if (!json_is_null(result)) {
		char *s =
		    json_dumps(result, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
		if (!s) {
			fprintf(stderr, "peerctl: out of memory printing the reply\n");
			goto out;
		}
		printf("%s\n", s);
		xfree(s);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "peerctl: cannot write the result: %s\n", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	json_decref(reply);
	return rc;
}

int main(int argc, char **argv)
{
	struct peerd_conf c;
	char err[512];
	int argi = argc, fd = -1, rc = 1;
	json_t *req = NULL, *params = NULL;
	char *line = NULL, *reply = NULL;

	json_set_alloc_funcs(json_xmalloc, xfree);
	int lr = conf_load_args(&c, argc, argv, CONF_F_POSITIONAL, &argi, err, sizeof(err));
	if (lr == CONF_EHELP) {
		if (c.version)
			printf("peerctl %s\n", PEERD_VERSION_STRING);
		else
			fputs(usage, stdout);
		rc = 0;
		goto out;
	}
	/* As bitcoin-cli: a mistyped -datadir is named, not reported as a missing socket. */
	if (!lr)
		lr = conf_check_datadir(&c, err, sizeof(err));
	if (lr) {
		fprintf(stderr, "peerctl: %s\n", err);
		goto out;
	}
	if (argi >= argc) {
		fprintf(stderr, "peerctl: no method given (peerctl -help for usage)\n");
		goto out;
	}

	params = json_array();
	if (!params)
		goto oom;
	for (int i = argi + 1; i < argc; i++) {
		json_t *v = param_from_arg(argv[i]);
		if (!v) {
			fprintf(stderr, "peerctl: argument %d is not valid UTF-8\n", i - argi);
			goto out;
		}
		if (json_array_append_new(params, v))
			goto oom;
	}
	req = json_pack("{s:s, s:i, s:s, s:O}", "jsonrpc", "2.0", "id", 1, "method", argv[argi],
	                "params", params);
	if (!req) {
		/* Tell a bad method name (jansson refuses invalid UTF-8) from
		 * out of memory. */
		json_t *probe = json_string(argv[argi]);
		bool bad_name = !probe;
		json_decref(probe);
		if (bad_name) {
			fprintf(stderr, "peerctl: method name is not valid UTF-8\n");
			goto out;
		}
		goto oom;
	}
	line = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!line)
		goto oom;
	size_t len = strlen(line);
	char *full = xrealloc(line, len + 2);
	if (!full)
		goto oom;
	line = full;
	memcpy(line + len, "\n", 2);

	fd = connect_socket(c.controlsocket);
	if (fd < 0) {
		fprintf(stderr,
		        "peerctl: cannot connect to control socket %s: %s (is peerd running?)\n",
		        c.controlsocket, strerror(errno));
		goto out;
	}
	long long deadline = c.rpcclienttimeout_s ? now_ms() + c.rpcclienttimeout_s * 1000LL : -1;
	if (send_all(fd, line, len + 1, deadline, c.rpcclienttimeout_s))
		goto out;
	size_t rlen;
	reply = read_line(fd, deadline, c.rpcclienttimeout_s, &rlen);
	if (!reply)
		goto out;
	rc = print_reply(reply, rlen);
	goto out;
oom:
	fprintf(stderr, "peerctl: out of memory\n");
out:
	if (fd >= 0)
		close(fd);
	xfree(reply);
	xfree(line);
	json_decref(req);
	json_decref(params);
	conf_release(&c);
	return rc;
}
