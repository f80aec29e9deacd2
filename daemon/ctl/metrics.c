/*
 * daemon/ctl/metrics.c: the Prometheus endpoint (metricsbind=).
 *
 * Three threads meet here, and none waits for another:
 *  - the loop thread rebuilds the exposition text every second from
 *    stats_json (what getstats shows) plus the validation thread's last
 *    getstats part, and publishes it under `mu`;
 *  - the validation thread runs ctl_chain_getstats for it as a val_job
 *    (at most one outstanding), whose result the loop keeps for the next
 *    rebuilds: chain and mempool figures arrive as the thread gets to them,
 *    never by the loop waiting;
 *  - libmicrohttpd's own thread (MHD_USE_INTERNAL_POLLING_THREAD) parses
 *    HTTP and answers GET /metrics with a copy of the published text.
 *
 * Lock order: `mu` is a leaf. Whoever holds it takes no other lock and
 * calls nothing that may (no logging, no xmalloc: MHD copies with its own
 * malloc). MHD's internal locks are never held by our code while taking mu
 * other than inside MHD's own callback, and the loop never calls into MHD
 * while holding mu.
 */
#include "daemon/ctl/internal.h"

#include <errno.h>
#include <microhttpd.h>
#include <string.h>

/** The text is rebuilt this often (Prometheus' fastest usual scrape interval is 1 s). */
#define METRICS_REBUILD_MS 1000
/*
 * Slow clients must not hold the endpoint (issue 18). MHD's one polling
 * thread (epoll) never waits on a connection, but a connection counts
 * against the limit until it closes or times out, and at the limit new
 * ones wait in the listen backlog: 16 idle connections stopped /metrics,
 * and a burst of 200 half requests held it for ~2.5 minutes (16 every 10
 * s). So the limit is far above what scrapers need, and a connection that
 * sends nothing for a few seconds goes. Each may cost MHD's 32 KiB pool
 * and a file descriptor.
 */
/** HTTP connections open at once (a scraper needs one; slow clients get the rest). */
#define METRICS_MAX_CLIENTS 256
/** A connection idle this many seconds (no request, or half of one) is closed. */
#define METRICS_CONN_TIMEOUT_S 5

struct metrics {
	struct daemon *d;
	uv_timer_t timer;
	bool timer_open;    /**< loop thread */
	bool job_pending;   /**< loop thread: a getstats job is at the validation thread */
	bool closed;        /**< loop thread: a job coming back late is dropped */
	json_t *chain_part; /**< loop thread: the validation thread's last getstats part */
	struct MHD_Daemon *mhd;
	uv_mutex_t mu;
	char *text; /**< (mu) the published exposition text; NULL before the first */
	size_t len; /**< (mu) */
};

struct metrics_job {
	struct val_job base;
	struct metrics *m;
	struct ctl_chain_ctx ctx;
	struct ctl_result res;
};

/* ---- the HTTP thread ----------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *body)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's thread: one call per request (no request body is read). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	struct metrics *m = cls;
	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (*upload_data_size)
		return reply(conn, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0)
		return reply(conn, MHD_HTTP_NOT_FOUND, "peerd serves /metrics\n");
	struct MHD_Response *r = NULL;
	uv_mutex_lock(&m->mu);
	if (m->text) {
		r = MHD_create_response_from_buffer(m->len, m->text, MHD_RESPMEM_MUST_COPY);
	}
	uv_mutex_unlock(&m->mu);
	if (!r)
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no metrics yet\n");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        "text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- the validation thread's part ------------------------------------------------- */

/* Validation thread: getstats' own chain part. */
static void job_work(struct chain *c, struct mempool *mp, struct val_job *vj)
{
	struct metrics_job *j = (struct metrics_job *)vj;
	j->ctx.mempool = mp;
	if (c)
		ctl_chain_getstats(c, &j->ctx, NULL, &j->res);
}

/* Loop thread: keep the result for the next rebuilds. */
static void job_done(struct daemon *d, struct val_job *vj)
{
	struct metrics_job *j = (struct metrics_job *)vj;
	struct metrics *m = j->m;
	(void)d;
	if (!vj->cancelled && !m->closed && j->res.result && !j->res.err_code) {
		json_decref(m->chain_part);
		m->chain_part = j->res.result;
		j->res.result = NULL;
	}
	json_decref(j->res.result);
	m->job_pending = false;
	xfree(j);
}

static void post_job(struct metrics *m)
{
	struct daemon *d = m->d;
	if (m->job_pending || !d->val->started || d->shutting_down)
		return;
	struct metrics_job *j = xcalloc(1, sizeof(*j));
	if (!j)
		return;
	j->base.work = job_work;
	j->base.done = job_done;
	j->m = m;
	j->ctx.net = d->params;
	j->ctx.netdir = validation_netdir(d);
	j->ctx.interrupt = &d->val->interrupt;
	j->ctx.conf = d->conf;
	if (validation_post(d, &j->base)) {
		xfree(j);
		return;
	}
	m->job_pending = true;
}

/* ---- the loop thread ------------------------------------------------------------ */

/* Build the text from getstats' figures and publish it. */
static void rebuild(struct metrics *m)
{
	json_t *s = stats_json(m->d);
	if (!s)
		return;
	/* As getstats: the validation thread's part replaces the placeholder checkqueue. */
	if (m->chain_part)
		json_object_update(s, m->chain_part);
	size_t len = 0;
	char *text = metrics_render(s, &len);
	json_decref(s);
	if (!text)
		return;
	uv_mutex_lock(&m->mu);
	char *old = m->text;
	m->text = text;
	m->len = len;
	uv_mutex_unlock(&m->mu);
	xfree(old);
}

static void on_timer(uv_timer_t *t)
{
	struct metrics *m = t->data;
	rebuild(m);
	post_job(m);
}

static void close_noop(uv_handle_t *h)
{
	(void)h;
}

int metrics_start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	if (!c->metricsbind[0])
		return 0;
	char host[CONF_MAX_HOST + 1];
	uint16_t port;
	if (conf_hostport(c->metricsbind, CONF_DEFAULT_METRICSPORT, host, sizeof(host), &port))
		return -EINVAL; /* conf/ checked it already */
	struct sockaddr_storage sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) != 0) {
		if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa) != 0)
			return -EINVAL;
		flags |= MHD_USE_IPv6;
	}
	struct metrics *m = xcalloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->d = d;
	int err = uv_mutex_init(&m->mu);
	if (err) {
		xfree(m);
		return err;
	}
	d->metrics = m;
	if ((err = uv_timer_init(d->loop, &m->timer)))
		return err;
	m->timer_open = true;
	m->timer.data = m;
	/* A first text before anyone can ask, and the chain's part on its way. */
	rebuild(m);
	post_job(m);
	errno = 0;
	m->mhd = MHD_start_daemon(flags, port, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
	                          (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
	                          (unsigned)METRICS_MAX_CLIENTS, MHD_OPTION_CONNECTION_TIMEOUT,
	                          (unsigned)METRICS_CONN_TIMEOUT_S, MHD_OPTION_END);
	if (!m->mhd) {
		err = errno ? -errno : -EADDRNOTAVAIL;
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "metricsbind=%s: cannot listen for HTTP on %s port %u: %s", c->metricsbind,
		         host, (unsigned)port, uv_strerror(err));
		return err;
	}
	if ((err = uv_timer_start(&m->timer, on_timer, METRICS_REBUILD_MS, METRICS_REBUILD_MS)))
		return err;
	/* The timer alone must not keep the loop alive at shutdown. */
	uv_unref((uv_handle_t *)&m->timer);
	DLOG_INFO_(&d->log, DLOG_MAIN, "metrics on http://%s%s%s:%u/metrics",
	           flags & MHD_USE_IPv6 ? "[" : "", host, flags & MHD_USE_IPv6 ? "]" : "",
	           (unsigned)port);
	return 0;
}

void metrics_close(struct daemon *d)
{
	struct metrics *m = d->metrics;
	if (!m || m->closed)
		return;
	m->closed = true;
	/* Joins MHD's thread: no request is in on_request after this. */
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	m->mhd = NULL;
	if (m->timer_open && !uv_is_closing((uv_handle_t *)&m->timer)) {
		uv_timer_stop(&m->timer);
		uv_close((uv_handle_t *)&m->timer, close_noop);
	}
}

void metrics_release(struct daemon *d)
{
	struct metrics *m = d->metrics;
	if (!m)
		return;
	metrics_close(d);
	/* validation_release ran first: no job is out that could point here. */
	json_decref(m->chain_part);
	xfree(m->text);
	uv_mutex_destroy(&m->mu);
	xfree(m);
	d->metrics = NULL;
}
