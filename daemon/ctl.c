/*
 * daemon/ctl.c: the control socket server: newline-delimited JSON-RPC 2.0
 * on a Unix socket, served on the loop thread.
 *
 * Socket: <netdir>/control.sock (the network's directory in the datadir), or controlsocket=;
 * created with mode 0600 (umask around bind, then chmod). At startup an existing socket file that
 * nobody listens on (connect() fails with ECONNREFUSED: a crashed peerd's
 * leftover) is replaced; one that answers means another peerd is running,
 * a clear startup error; anything else at that path is left alone and is
 * also an error. The file is removed at shutdown.
 *
 * Protocol: one request per line; a batch (JSON array) is answered with an
 * array; a request without "id" is a notification and gets no reply, as
 * the spec says. A line that is not JSON gets -32700 and the connection is
 * closed after the reply, as does a line longer than CTL_MAX_LINE (-32600):
 * a client that does not speak the protocol cannot be resynchronised.
 * Every other error (-32600 invalid request, -32601 unknown method, -32602
 * bad params, application errors) leaves the connection open. Other
 * clients and the daemon are never affected by one client's input.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/** Longest request line accepted. */
#define CTL_MAX_LINE 65536u
/** Clients connected at once; more are closed on accept. */
#define CTL_MAX_CLIENTS 128u
/** First read buffer; it doubles up to CTL_MAX_LINE + CTL_READ_CHUNK. */
#define CTL_READ_CHUNK 4096u
#define CTL_BACKLOG    128
/** Replies queued to one client before peerd stops reading its requests. */
#define CTL_MAX_PENDING 32u

struct ctl_client {
	uv_pipe_t pipe;
	struct daemon *d;
	struct ctl_client *prev, *next;
	char *buf;
	size_t len, cap;
	uint32_t pending_writes;
	bool closing;
	bool close_after_write; /**< an unrecoverable error was answered, or EOF */
	bool stop_after_write;  /**< the stop method was answered */
	bool read_paused;       /**< CTL_MAX_PENDING replies queued: not reading */
};

struct ctl_wreq {
	uv_write_t req;
	struct ctl_client *c;
	size_t len;
	char data[];
};

static void client_close_cb(uv_handle_t *h)
{
	struct ctl_client *c = h->data;
	struct daemon *d = c->d;
	if (c->prev)
		c->prev->next = c->next;
	else
		d->ctl.clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	d->ctl.n_clients--;
	xfree(c->buf);
	xfree(c);
}

static void client_close(struct ctl_client *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->pipe, client_close_cb);
}

static void process(struct ctl_client *c);
static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* A client that pipelines requests without reading the replies is paused
 * (its unread requests wait in the socket) until it catches up. */
static void maybe_resume(struct ctl_client *c)
{
	if (!c->read_paused || c->closing || c->close_after_write ||
	    c->pending_writes > CTL_MAX_PENDING / 2)
		return;
	c->read_paused = false;
	process(c);
	if (!c->read_paused && !c->closing && !c->close_after_write &&
	    uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb))
		client_close(c);
}

static void write_cb(uv_write_t *req, int status)
{
	struct ctl_wreq *w = (struct ctl_wreq *)req;
	struct ctl_client *c = w->c;
	xfree(w);
	c->pending_writes--;
	if (c->stop_after_write && c->pending_writes == 0) {
		c->stop_after_write = false;
		daemon_shutdown(c->d, "stop requested on the control socket");
		return;
	}
	if (c->closing)
		return;
	if (status < 0 || (c->close_after_write && c->pending_writes == 0))
		client_close(c);
	else
		maybe_resume(c);
}

/* Queue a JSON value as one line; takes the reference. */
static void send_json(struct ctl_client *c, json_t *v)
{
	if (!v)
		return;
	char *s = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	if (!s || c->closing) {
		xfree(s);
		if (!c->closing)
			client_close(c);
		return;
	}
	size_t n = strlen(s);
	struct ctl_wreq *w = xmalloc(sizeof(*w) + n + 1);
	if (!w) {
		xfree(s);
		client_close(c);
		return;
	}
	memcpy(w->data, s, n);
	w->data[n] = '\n';
	w->len = n + 1;
	w->c = c;
	xfree(s);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)w->len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, write_cb)) {
		xfree(w);
		client_close(c);
		return;
	}
	c->pending_writes++;
}

static json_t *error_obj(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* {"jsonrpc":"2.0","error":{...},"id":id}; takes the reference to id (NULL: null). */
static json_t *error_obj(json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:{s:i, s:s}, s:o}", "jsonrpc", "2.0", "error", "code", code,
	                 "message", msg, "id", id ? id : json_null());
}

/* One request object; a response, or NULL for a notification. */
static json_t *handle_request(struct daemon *d, json_t *req, unsigned *flags)
{
	if (!json_is_object(req))
		return error_obj(NULL, CTL_INVALID_REQUEST,
		                 "Invalid Request: a request must be a JSON object");
	json_t *id = json_object_get(req, "id");
	bool notification = id == NULL;
	if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_real(id) &&
	    !json_is_null(id))
		return error_obj(NULL, CTL_INVALID_REQUEST,
		                 "Invalid Request: id must be a string, a number or null");
	json_t *ver = json_object_get(req, "jsonrpc");
	if (ver && (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0))
		return error_obj(json_incref(id), CTL_INVALID_REQUEST,
		                 "Invalid Request: jsonrpc must be \"2.0\"");
	json_t *method = json_object_get(req, "method");
	if (!json_is_string(method))
		return error_obj(json_incref(id), CTL_INVALID_REQUEST,
		                 "Invalid Request: method must be a string");
	json_t *params = json_object_get(req, "params");
	if (params && !json_is_array(params) && !json_is_object(params) && !json_is_null(params))
		return error_obj(json_incref(id), CTL_INVALID_PARAMS,
		                 "Invalid params: params must be an array or an object");
	if (json_is_null(params))
		params = NULL;

	struct ctl_result res;
	memset(&res, 0, sizeof(res));
	DLOG_DBG(&d->log, DLOG_CTL, "request %s", json_string_value(method));
	ctl_call(d, json_string_value(method), params, &res);
	if (res.stop)
		*flags |= CTL_REPLY_STOP;
	if (notification) {
		json_decref(res.result);
		return NULL;
	}
	if (res.err_code) {
		json_decref(res.result);
		return error_obj(json_incref(id), res.err_code, "%s", res.err_msg);
	}
	json_t *out = json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "result",
	                        res.result ? res.result : json_null(), "id", id);
	return out;
}

json_t *ctl_reply(struct daemon *d, const char *line, size_t len, unsigned *flags)
{
	*flags = 0;
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
		i++;
	if (i == len)
		return NULL; /* blank line */
	json_error_t jerr;
	json_t *v = json_loadb(line, len, JSON_DECODE_ANY, &jerr);
	if (!v) {
		*flags |= CTL_REPLY_CLOSE;
		return error_obj(NULL, CTL_PARSE_ERROR, "Parse error: %s (column %d)", jerr.text,
		                 jerr.column);
	}
	json_t *out;
	if (json_is_array(v)) {
		if (json_array_size(v) == 0) {
			json_decref(v);
			return error_obj(NULL, CTL_INVALID_REQUEST, "Invalid Request: empty batch");
		}
		if (json_array_size(v) > CTL_MAX_BATCH) {
			size_t n = json_array_size(v);
			json_decref(v);
			return error_obj(NULL, CTL_INVALID_REQUEST,
			                 "Invalid Request: batch of %zu requests (max %u)", n,
			                 CTL_MAX_BATCH);
		}
		out = json_array();
		size_t k;
		json_t *req;
		json_array_foreach(v, k, req)
		{
			json_t *r = handle_request(d, req, flags);
			if (r && out)
				json_array_append_new(out, r);
			else
				json_decref(r);
		}
		/* A batch of notifications only gets no reply at all (JSON-RPC 2.0). */
		if (out && !json_array_size(out)) {
			json_decref(out);
			out = NULL;
		}
	} else {
		out = handle_request(d, v, flags);
	}
	json_decref(v);
	return out;
}

static void handle_line(struct ctl_client *c, const char *line, size_t len)
{
	unsigned flags;
	json_t *r = ctl_reply(c->d, line, len, &flags);
	if (flags & CTL_REPLY_STOP)
		c->stop_after_write = true;
	send_json(c, r);
	if (flags & CTL_REPLY_CLOSE)
		c->close_after_write = true;
	/* A stop sent as a notification gets no reply, so write_cb would
	 * never start the shutdown (and the client would never be closed):
	 * start it now. */
	if (c->stop_after_write && !c->pending_writes) {
		c->stop_after_write = false;
		daemon_shutdown(c->d, "stop requested on the control socket");
	}
}

static void process(struct ctl_client *c)
{
	size_t start = 0;
	while (!c->closing && !c->close_after_write) {
		if (c->pending_writes >= CTL_MAX_PENDING) {
			if (!c->read_paused) {
				c->read_paused = true;
				uv_read_stop((uv_stream_t *)&c->pipe);
			}
			break;
		}
		char *nl = memchr(c->buf + start, '\n', c->len - start);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (c->buf + start));
		if (n > CTL_MAX_LINE)
			break;
		handle_line(c, c->buf + start, n);
		start += n + 1;
	}
	if (start) {
		memmove(c->buf, c->buf + start, c->len - start);
		c->len -= start;
	}
	/* Over-long: no newline within the first CTL_MAX_LINE + 1 bytes
	 * (a paused client may have many complete lines buffered). */
	if (!c->closing && !c->close_after_write && c->len > CTL_MAX_LINE &&
	    !memchr(c->buf, '\n', CTL_MAX_LINE + 1)) {
		send_json(c, error_obj(NULL, CTL_INVALID_REQUEST,
		                       "Invalid Request: request line longer than %u bytes",
		                       CTL_MAX_LINE));
		c->close_after_write = true;
	}
	if (c->close_after_write) {
		uv_read_stop((uv_stream_t *)&c->pipe);
		c->len = 0;
		if (!c->pending_writes && !c->closing)
			client_close(c);
	}
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct ctl_client *c = h->data;
	(void)suggested;
	if (c->cap - c->len < CTL_READ_CHUNK / 2 && c->cap < CTL_MAX_LINE + CTL_READ_CHUNK) {
		size_t ncap = c->cap ? c->cap * 2 : CTL_READ_CHUNK;
		if (ncap > CTL_MAX_LINE + CTL_READ_CHUNK)
			ncap = CTL_MAX_LINE + CTL_READ_CHUNK;
		char *nb = xrealloc(c->buf, ncap);
		if (nb) {
			c->buf = nb;
			c->cap = ncap;
		}
	}
	*buf = uv_buf_init(c->buf ? c->buf + c->len : NULL, (unsigned)(c->cap - c->len));
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct ctl_client *c = s->data;
	(void)buf;
	if (c->closing || nread == 0)
		return;
	if (nread < 0) {
		/* EOF: a last request without a newline is still answered. */
		if (nread == UV_EOF && c->len && !c->close_after_write) {
			handle_line(c, c->buf, c->len);
			c->len = 0;
		}
		uv_read_stop(s);
		c->close_after_write = true;
		if (!c->pending_writes && !c->stop_after_write)
			client_close(c);
		return;
	}
	c->len += (size_t)nread;
	process(c);
}

static void reject_close_cb(uv_handle_t *h);

/*
 * Accept a connection peerd cannot serve (out of memory) and close it at
 * once: libuv stops watching a listener whose connection is left
 * unaccepted, which would end the control socket for good. The handle is
 * preallocated in the server; while it is still closing the connection
 * waits for its close callback.
 */
static void reject_client(struct daemon *d)
{
	struct ctl_server *s = &d->ctl;
	if (s->reject_busy) {
		s->reject_pending = true;
		return;
	}
	s->reject_pending = false;
	if (uv_pipe_init(d->loop, &s->reject, 0))
		return;
	s->reject.data = d;
	s->reject_busy = true;
	(void)uv_accept((uv_stream_t *)&s->pipe, (uv_stream_t *)&s->reject);
	uv_close((uv_handle_t *)&s->reject, reject_close_cb);
}

static void reject_close_cb(uv_handle_t *h)
{
	struct daemon *d = h->data;
	struct ctl_server *s = &d->ctl;
	s->reject_busy = false;
	if (s->reject_pending && !uv_is_closing((uv_handle_t *)&s->pipe))
		reject_client(d);
}

static void on_client(uv_stream_t *server, int status)
{
	struct daemon *d = server->data;
	if (status < 0)
		return;
	struct ctl_client *c = xcalloc(1, sizeof(*c));
	if (!c) {
		DLOG_WARNING(&d->log, DLOG_CTL, "out of memory: control client refused");
		reject_client(d);
		return;
	}
	c->d = d;
	if (uv_pipe_init(d->loop, &c->pipe, 0)) {
		xfree(c);
		reject_client(d);
		return;
	}
	c->pipe.data = c;
	c->next = d->ctl.clients;
	if (c->next)
		c->next->prev = c;
	d->ctl.clients = c;
	d->ctl.n_clients++;
	if (uv_accept(server, (uv_stream_t *)&c->pipe)) {
		client_close(c);
		return;
	}
	if (d->ctl.n_clients > CTL_MAX_CLIENTS || d->shutting_down) {
		DLOG_WARNING(&d->log, DLOG_CTL, "control client refused: %u clients is the limit",
		             CTL_MAX_CLIENTS);
		client_close(c);
		return;
	}
	if (uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb))
		client_close(c);
}

/* Is something listening at path? 0: no (stale or absent), 1: yes, <0 error. */
static int probe(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int err = errno;
	close(fd);
	if (rc == 0)
		return 1;
	if (err == ECONNREFUSED || err == ENOENT)
		return 0;
	return -err;
}

int ctl_start(struct daemon *d)
{
	struct ctl_server *s = &d->ctl;
	const struct peerd_conf *c = d->conf;
	if (c->controlsocket && c->controlsocket[0]) {
		s->path = xstrdup(c->controlsocket);
	} else {
		size_t n = strlen(c->netdir) + sizeof("/control.sock");
		s->path = xmalloc(n);
		if (s->path)
			snprintf(s->path, n, "%s/control.sock", c->netdir);
	}
	if (!s->path)
		return -ENOMEM;
	/* libuv before 1.46 silently truncates a longer path in bind(): the
	 * socket would appear elsewhere than peerctl and the unlink at
	 * shutdown look. */
	struct sockaddr_un sa;
	if (strlen(s->path) >= sizeof(sa.sun_path)) {
		DLOG_ERR(&d->log, DLOG_CTL,
		         "control socket path %s is longer than %zu bytes; set a shorter "
		         "controlsocket=",
		         s->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	struct stat st;
	if (lstat(s->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			DLOG_ERR(&d->log, DLOG_CTL,
			         "%s exists and is not a socket; remove it or set controlsocket=",
			         s->path);
			return -EEXIST;
		}
		int rc = probe(s->path);
		if (rc == 1) {
			DLOG_ERR(&d->log, DLOG_CTL,
			         "another process is listening on %s (is peerd already running?)",
			         s->path);
			return -EADDRINUSE;
		}
		if (rc < 0) {
			DLOG_ERR(&d->log, DLOG_CTL, "cannot check %s: %s", s->path, strerror(-rc));
			return rc;
		}
		DLOG_INFO_(&d->log, DLOG_CTL, "replacing stale control socket %s", s->path);
		if (unlink(s->path) != 0 && errno != ENOENT) {
			DLOG_ERR(&d->log, DLOG_CTL, "cannot remove stale %s: %s", s->path,
			         strerror(errno));
			return -errno;
		}
	}
	int err = uv_pipe_init(d->loop, &s->pipe, 0);
	if (err)
		return err;
	s->pipe.data = d;
	s->listening = true;
	/* Created 0600 from the start: no window where others could connect. */
	mode_t old = umask(0177);
	err = uv_pipe_bind(&s->pipe, s->path);
	umask(old);
	if (err) {
		DLOG_ERR(&d->log, DLOG_CTL, "cannot bind control socket %s: %s", s->path,
		         uv_strerror(err));
		return err;
	}
	s->bound = true;
	(void)chmod(s->path, 0600);
	err = uv_listen((uv_stream_t *)&s->pipe, CTL_BACKLOG, on_client);
	if (err) {
		DLOG_ERR(&d->log, DLOG_CTL, "cannot listen on %s: %s", s->path, uv_strerror(err));
		return err;
	}
	DLOG_INFO_(&d->log, DLOG_CTL, "control socket %s", s->path);
	return 0;
}

void ctl_close(struct daemon *d)
{
	struct ctl_server *s = &d->ctl;
	if (s->listening && !uv_is_closing((uv_handle_t *)&s->pipe))
		uv_close((uv_handle_t *)&s->pipe, NULL);
	for (struct ctl_client *c = s->clients; c; c = c->next)
		client_close(c);
	if (s->bound) {
		unlink(s->path);
		s->bound = false;
	}
	xfree(s->path);
	s->path = NULL;
}
