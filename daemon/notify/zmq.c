/*
 * daemon/notify/zmq.c: the ZMQ sockets and the thread that publishes on
 * them (Core's CZMQNotificationInterface and CZMQAbstractPublishNotifier).
 *
 * The validation thread never touches a socket: it queues each message
 * (topic, body, number) under the mutex and signals; the publisher thread
 * takes the whole queue at once and sends it with the mutex released. A
 * PUB socket never blocks a send (past the high water mark libzmq drops
 * for that subscriber), so the publisher keeps up; should it not, the
 * queue's bound drops the newest message, counted and logged, and the
 * number it was given shows the subscriber a gap, as a message libzmq
 * dropped does.
 *
 * Lock order: mu is a leaf.
 */
#include "daemon/notify/notify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "base/alloc.h"
#include "daemon/notify/internal.h"

/* Core's names, in conf's topic order. */
static const char *const topic_type[CONF_ZMQ__COUNT] = {
    "pubhashblock", "pubhashtx", "pubrawblock", "pubrawtx", "pubsequence",
};

/* Core's order of notifiers: its factories are a std::map, so by type name. */
static const int type_order[CONF_ZMQ__COUNT] = {
    CONF_ZMQ_HASHBLOCK, CONF_ZMQ_HASHTX, CONF_ZMQ_RAWBLOCK, CONF_ZMQ_RAWTX, CONF_ZMQ_SEQUENCE,
};

static void free_list(struct notify_msg *m)
{
	while (m) {
		struct notify_msg *next = m->next;
		xfree(m);
		m = next;
	}
}

/* Three frames: topic, body, the number as 4 bytes little-endian. */
static int send_msg(void *sock, const struct notify_msg *m)
{
	uint8_t seq[4] = {(uint8_t)m->seq, (uint8_t)(m->seq >> 8), (uint8_t)(m->seq >> 16),
	                  (uint8_t)(m->seq >> 24)};
	if (zmq_send(sock, m->topic, strlen(m->topic), ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, m->body, m->len, ZMQ_SNDMORE) < 0 || zmq_send(sock, seq, 4, 0) < 0)
		return -1;
	return 0;
}

static void publisher(void *arg)
{
	struct notify_state *s = arg;
	uv_mutex_lock(&s->mu);
	for (;;) {
		while (!s->head && !s->stopping)
			uv_cond_wait(&s->cv, &s->mu);
		struct notify_msg *batch = s->head;
		if (!batch && s->stopping)
			break;
		s->head = NULL;
		s->tail = &s->head;
		s->queued_bytes = 0;
		s->queued_msgs = 0;
		uv_mutex_unlock(&s->mu);
		uint64_t ok = 0, bad = 0;
		for (struct notify_msg *m = batch; m; m = m->next) {
			if (send_msg(s->socks[m->sock], m) == 0)
				ok++;
			else
				bad++;
		}
		free_list(batch);
		uv_mutex_lock(&s->mu);
		s->sent += ok;
		s->failed += bad;
	}
	uv_mutex_unlock(&s->mu);
}

void notify_zmq_queue(struct notify_state *s, struct notify_zmq_pub *p, const char *topic,
                      const void *body, size_t len)
{
	/* The number is taken even when the message is dropped: a gap tells. */
	uint32_t seq = p->seq++;
	struct notify_msg *m = xmalloc(sizeof(*m) + len);
	bool dropped = !m;
	if (m) {
		m->next = NULL;
		m->sock = p->sock;
		m->seq = seq;
		snprintf(m->topic, sizeof(m->topic), "%s", topic);
		m->len = len;
		memcpy(m->body, body, len);
	}
	uv_mutex_lock(&s->mu);
	if (m &&
	    (s->queued_bytes + len > s->max_bytes || s->queued_msgs >= s->max_msgs || s->stopping))
		dropped = true;
	if (!dropped) {
		*s->tail = m;
		s->tail = &m->next;
		s->queued_bytes += len;
		s->queued_msgs++;
		uv_cond_signal(&s->cv);
	} else {
		s->dropped++;
	}
	uint64_t n_dropped = s->dropped;
	uv_mutex_unlock(&s->mu);
	if (dropped) {
		xfree(m);
		/* The first, then every 1,000th: a stuck publisher must not flood the log. */
		if (n_dropped % 1000 == 1)
			DLOG_WARNING(&s->d->log, DLOG_MAIN,
			             "zmq: publish queue full: %s dropped (%llu so far)", topic,
			             (unsigned long long)n_dropped);
	}
}

/* Core's zmqError: the message and libzmq's reason. */
static void zmq_fail(struct daemon *d, const char *what, const char *address)
{
	DLOG_ERR(&d->log, DLOG_MAIN, "zmq: %s %s: %s", what, address, zmq_strerror(zmq_errno()));
}

/* Make and bind the socket of one address (Core's Initialize). */
static void *open_socket(struct daemon *d, void *ctx, const char *address, int hwm)
{
	void *sock = zmq_socket(ctx, ZMQ_PUB);
	if (!sock) {
		zmq_fail(d, "Failed to create socket for", address);
		return NULL;
	}
	int one = 1, zero = 0;
	/* Core: the high water mark, TCP keepalive, IPv6 for a bracketed address. */
	if (zmq_setsockopt(sock, ZMQ_SNDHWM, &hwm, sizeof(hwm)) ||
	    zmq_setsockopt(sock, ZMQ_TCP_KEEPALIVE, &one, sizeof(one)) ||
	    zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof(zero)) ||
	    (strchr(address, '[') && zmq_setsockopt(sock, ZMQ_IPV6, &one, sizeof(one)))) {
		zmq_fail(d, "Failed to set socket options for", address);
		zmq_close(sock);
		return NULL;
	}
	if (zmq_bind(sock, address)) {
		zmq_fail(d, "Failed to bind address", address);
		zmq_close(sock);
		return NULL;
	}
	return sock;
}

static void close_all(struct notify_state *s)
{
	for (uint32_t i = 0; i < s->n_socks; i++)
		if (s->socks[i])
			zmq_close(s->socks[i]);
	xfree(s->socks);
	s->socks = NULL;
	s->n_socks = 0;
	if (s->zctx)
		zmq_ctx_term(s->zctx);
	s->zctx = NULL;
	for (uint32_t i = 0; i < s->n_pubs; i++)
		xfree((char *)s->pubs[i].address);
	xfree(s->pubs);
	s->pubs = NULL;
	s->n_pubs = 0;
	s->wants = 0;
}

/* The notifiers of the configuration, in Core's order; "unix:" is libzmq's "ipc:". */
static int collect(struct notify_state *s, const struct peerd_conf *c)
{
	uint32_t n = 0;
	for (int t = 0; t < CONF_ZMQ__COUNT; t++)
		n += (uint32_t)c->zmqpub[t].n;
	if (!n)
		return 0;
	s->pubs = xcalloc(n, sizeof(*s->pubs));
	s->socks = xcalloc(n, sizeof(*s->socks));
	if (!s->pubs || !s->socks)
		return -ENOMEM;
	for (int k = 0; k < CONF_ZMQ__COUNT; k++) {
		int t = type_order[k];
		for (size_t i = 0; i < c->zmqpub[t].n; i++) {
			const char *a = c->zmqpub[t].v[i];
			bool unix_ = strncmp(a, "unix:", 5) == 0;
			size_t len = strlen(a) + 2;
			char *addr = xmalloc(len);
			if (!addr)
				return -ENOMEM;
			snprintf(addr, len, "%s%s", unix_ ? "ipc://" : "", unix_ ? a + 5 : a);
			struct notify_zmq_pub *p = &s->pubs[s->n_pubs++];
			p->topic = t;
			p->address = addr;
			p->hwm = c->zmqhwm[t];
			s->wants |= 1u << t;
		}
	}
	return 0;
}

int notify_zmq_start(struct daemon *d)
{
	struct notify_state *s = d->notify;
	s->d = d;
	s->tail = &s->head;
	s->max_bytes = NOTIFY_ZMQ_QUEUE_BYTES;
	s->max_msgs = NOTIFY_ZMQ_QUEUE_MSGS;
	int err = collect(s, d->conf);
	if (err || !s->n_pubs) {
		close_all(s);
		return err;
	}
	int major, minor, patch;
	zmq_version(&major, &minor, &patch);
	DLOG_DBG(&d->log, DLOG_MAIN, "zmq: version %d.%d.%d", major, minor, patch);
	s->zctx = zmq_ctx_new();
	if (!s->zctx) {
		zmq_fail(d, "Unable to initialize context for", "");
		close_all(s);
		return 0;
	}
	for (uint32_t i = 0; i < s->n_pubs; i++) {
		struct notify_zmq_pub *p = &s->pubs[i];
		uint32_t k;
		/* An address an earlier notifier named: share its socket, as Core. */
		for (k = 0; k < i; k++)
			if (strcmp(s->pubs[k].address, p->address) == 0)
				break;
		if (k < i) {
			p->sock = s->pubs[k].sock;
			continue;
		}
		void *sock = open_socket(d, s->zctx, p->address, p->hwm);
		if (!sock) {
			/* As Core: one notifier failing leaves ZMQ off; the node runs on. */
			DLOG_ERR(&d->log, DLOG_MAIN, "zmq: Notifier %s failed (address = %s)",
			         topic_type[p->topic], p->address);
			close_all(s);
			return 0;
		}
		p->sock = s->n_socks;
		s->socks[s->n_socks++] = sock;
		DLOG_INFO_(&d->log, DLOG_MAIN, "zmq: Notifier %s ready (address = %s)",
		           topic_type[p->topic], p->address);
	}
	if ((err = uv_mutex_init(&s->mu)))
		goto fail;
	if ((err = uv_cond_init(&s->cv))) {
		uv_mutex_destroy(&s->mu);
		goto fail;
	}
	if ((err = uv_thread_create(&s->thread, publisher, s))) {
		uv_cond_destroy(&s->cv);
		uv_mutex_destroy(&s->mu);
		goto fail;
	}
	s->thread_started = true;
	return 0;
fail:
	DLOG_ERR(&d->log, DLOG_MAIN, "zmq: cannot start the publisher: %s", uv_strerror(err));
	close_all(s);
	return err;
}

void notify_zmq_stop(struct daemon *d)
{
	struct notify_state *s = d->notify;
	if (!s)
		return;
	if (s->thread_started) {
		uv_mutex_lock(&s->mu);
		s->stopping = true;
		uv_cond_signal(&s->cv);
		uv_mutex_unlock(&s->mu);
		uv_thread_join(&s->thread);
		s->thread_started = false;
		free_list(s->head);
		s->head = NULL;
		s->tail = &s->head;
		DLOG_DBG(&d->log, DLOG_MAIN, "zmq: %llu sent, %llu dropped, %llu failed",
		         (unsigned long long)s->sent, (unsigned long long)s->dropped,
		         (unsigned long long)s->failed);
		uv_cond_destroy(&s->cv);
		uv_mutex_destroy(&s->mu);
	}
	close_all(s);
}

json_t *notify_zmq_list(const struct daemon *d)
{
	const struct notify_state *s = d->notify;
	json_t *a = json_array();
	for (uint32_t i = 0; a && s->zctx && i < s->n_pubs; i++) {
		const struct notify_zmq_pub *p = &s->pubs[i];
		if (json_array_append_new(a,
		                          json_pack("{s:s, s:s, s:i}", "type", topic_type[p->topic],
		                                    "address", p->address, "hwm", p->hwm))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
