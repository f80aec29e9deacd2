/*
 * daemon/net/peer.c: a peer's lifecycle, its send queue and flow control.
 *
 * Memory per connected idle peer: one allocation holding struct peer and
 * its per-command byte counters (about 1.3 KiB), plus the subver string.
 * The rx buffer, the known-inventory set and every other per-peer table are
 * taken only when data arrives and given back when it is consumed, so an
 * idle peer holds nothing else.
 *
 * Sending: a frame is first offered to the socket with uv_try_write; only
 * the part the kernel did not take is copied into a write request. So on an
 * uncongested connection a send allocates nothing. sendq_bytes counts what
 * libuv still holds; over maxsendbuffer the peer is send_paused and its
 * messages wait (nothing new is generated for it, Core's fPauseSend); the
 * write callback resumes it when the queue drains to the limit.
 *
 * The rooms above learn of a peer's life only through the connection
 * events the wiring registered (struct net_events in net/net.h, filled
 * by daemon/netevents.c; Core's NetEventsInterface): opened when it is
 * up, disconnected when it goes, closed just before it is freed, drained
 * when its send queue has room again, busy while replies are owed, and
 * tick. This file names no handshake, inventory, serving, sync or
 * sd_notify function.
 */
#include "daemon/net/net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/require.h"

/** A queued write: the bytes the kernel did not take at once. */
struct peer_wreq {
	uv_write_t req;
	uint32_t len;
	uint8_t data[];
};

const char *peer_conn_type_name(enum peer_conn_type t)
{
	switch (t) {
	case PEER_CONN_INBOUND:
		return "inbound";
	case PEER_CONN_MANUAL:
		return "manual";
	case PEER_CONN_OUTBOUND_FULL:
		return "outbound-full-relay";
	case PEER_CONN_BLOCK_RELAY:
		return "block-relay-only";
	case PEER_CONN_FEELER:
		return "feeler";
	case PEER_CONN_ADDR_FETCH:
		return "addr-fetch";
	}
	return "unknown";
}

static void peer_close_cb(uv_handle_t *h);

static int peers_append(struct daemon *d, struct peer *p)
{
	if (d->n_peers == d->cap_peers) {
		uint32_t ncap = d->cap_peers ? d->cap_peers * 2 : 64;
		struct peer **np = xreallocarray(d->peers, ncap, sizeof(*np));
		if (!np)
			return -ENOMEM;
		d->peers = np;
		d->cap_peers = ncap;
	}
	d->peers[d->n_peers++] = p;
	return 0;
}

static uint32_t peers_find(const struct daemon *d, uint64_t id, bool *found)
{
	uint32_t lo = 0, hi = d->n_peers;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->peers[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < d->n_peers && d->peers[lo]->id == id;
	return lo;
}

struct peer *peer_by_id(struct daemon *d, uint64_t id)
{
	bool found;
	uint32_t i = peers_find(d, id, &found);
	return found ? d->peers[i] : NULL;
}

static void peers_remove(struct daemon *d, struct peer *p)
{
	bool found;
	uint32_t i = peers_find(d, p->id, &found);
	if (!BASE_CHECK(found))
		return;
	memmove(d->peers + i, d->peers + i + 1, (d->n_peers - i - 1) * sizeof(*d->peers));
	d->n_peers--;
}

struct peer *peer_new(struct daemon *d, bool inbound)
{
	/* One allocation: the peer, then its counters. */
	size_t sz = sizeof(struct peer) + sizeof(struct peer_msgbytes);
	struct peer *p = xcalloc(1, sz);
	if (!p)
		return NULL;
	p->msgbytes = (struct peer_msgbytes *)(p + 1);
	p->d = d;
	p->inbound = inbound;
	p->conn_type = inbound ? PEER_CONN_INBOUND : PEER_CONN_MANUAL;
	p->state = inbound ? PEER_HANDSHAKE : PEER_CONNECTING;
	p->ping_us = -1;
	p->minping_us = -1;
	p->start_height = -1;
	p->connect_ms = daemon_now_ms(d);
	p->conntime = daemon_time(d);
	if (d->net_events->created(p)) {
		d->net_events->destroyed(p);
		xfree(p);
		return NULL;
	}
	int err = uv_tcp_init(d->loop, &p->tcp);
	if (err) {
		d->net_events->destroyed(p);
		xfree(p);
		return NULL;
	}
	p->tcp.data = p;
	p->id = d->next_peer_id;
	if (peers_append(d, p)) {
		/* The handle is initialised: it must be closed, not freed. Mark
		 * it orphaned (data NULL) so the close callback just frees. */
		d->net_events->destroyed(p);
		p->tcp.data = NULL;
		uv_close((uv_handle_t *)&p->tcp, peer_close_cb);
		return NULL;
	}
	d->next_peer_id++;
	return p;
}

void peer_start(struct peer *p)
{
	struct daemon *d = p->d;
	int len = sizeof(p->addr);
	/* Through a proxy the far end is the proxy: net/socks5.c set the address (p->proxied). */
	if (!p->proxied && uv_tcp_getpeername(&p->tcp, &p->addr.sa, &len))
		memset(&p->addr, 0, sizeof(p->addr));
	len = sizeof(p->local);
	if (uv_tcp_getsockname(&p->tcp, &p->local.sa, &len))
		memset(&p->local, 0, sizeof(p->local));
	/* Small messages both ways: latency matters more than coalescing. */
	uv_tcp_nodelay(&p->tcp, 1);
	p->state = PEER_HANDSHAKE;
	p->connect_ms = daemon_now_ms(d);
	p->conntime = daemon_time(p->d);
	p->counted = true;
	if (p->inbound)
		d->n_inbound++;
	else
		d->n_outbound++;
	net_v2_start(p);
	if (p->state == PEER_CLOSING)
		return;
	int err = uv_read_start((uv_stream_t *)&p->tcp, transport_alloc_cb, transport_read_cb);
	if (err) {
		peer_disconnect(p, uv_strerror(err));
		return;
	}
	p->reading = true;
	char a[NET_ADDRSTRLEN];
	net_addr_format(&p->addr, a);
	DLOG_DBG(&d->log, DLOG_NET, "peer=%llu %s %s connected", (unsigned long long)p->id,
	         p->inbound ? "inbound from" : "outbound to", a);
	d->net_events->opened(p);
}

static void peer_close_cb(uv_handle_t *h)
{
	struct peer *p = h->data;
	if (!p) {
		/* Orphaned by peer_new: tcp is the first member, so h is the peer. */
		xfree(h);
		return;
	}
	struct daemon *d = p->d;
	transport_release(p);
	net_socks5_free(p);
	net_outbound_peer_gone(p);
	d->net_events->closed(p);
	d->net_events->destroyed(p);
	/* A v2 attempt closed before anything came back: once more with v1. */
	if (!net_v2_reconnect_v1(p) && p->target)
		net_peer_closed(p);
	net_v2_free(p);
	peers_remove(d, p);
	recvbudget_note_freed(d, sizeof(*p) + sizeof(*p->msgbytes));
	xfree(p->subver);
	xfree(p);
}

void peer_disconnect(struct peer *p, const char *why)
{
	if (p->state == PEER_CLOSING)
		return;
	struct daemon *d = p->d;
	if (p->counted) {
		if (p->inbound)
			d->n_inbound--;
		else
			d->n_outbound--;
		p->counted = false;
	}
	if (p->state != PEER_CONNECTING)
		d->stats.disconnects++;
	p->state = PEER_CLOSING;
	if (dlog_enabled(&d->log, DLOG_DEBUG, DLOG_NET)) {
		char a[NET_ADDRSTRLEN];
		net_addr_format(&p->addr, a);
		DLOG_DBG(&d->log, DLOG_NET, "peer=%llu %s disconnected: %s",
		         (unsigned long long)p->id, a, why ? why : "");
	}
	/* The rx buffer goes back now, not in the close callback: a peer in
	 * its last loop iteration should not pin a buffer. */
	if (p->reading)
		uv_read_stop((uv_stream_t *)&p->tcp);
	p->reading = false;
	if (!p->rx_busy)
		transport_release(p);
	uv_close((uv_handle_t *)&p->tcp, peer_close_cb);
	d->net_events->disconnected(p);
}

/* ---- sending ------------------------------------------------------------ */

/* A queued write of `len` bytes finished (or was cancelled). */
static void write_finished(struct peer *p, uint64_t len, int status)
{
	if (!p)
		return;
	if (BASE_CHECK(p->sendq_bytes >= len))
		p->sendq_bytes -= len;
	else
		p->sendq_bytes = 0;
	if (p->sendq_reqs)
		p->sendq_reqs--;
	if (status < 0 && status != UV_ECANCELED)
		peer_disconnect(p, uv_strerror(status));
	else if (p->state != PEER_CLOSING)
		peer_flow_update(p);
}

static void peer_write_cb(uv_write_t *req, int status)
{
	struct peer_wreq *w = (struct peer_wreq *)req;
	write_finished(req->handle->data, w->len, status);
	xfree(w);
}

/* Account a message about to be sent (counters, log). */
static void count_sent(struct peer *p, enum proto_cmd cmd, size_t len)
{
	struct daemon *d = p->d;
	d->stats.bytes_sent += len;
	p->bytes_sent += len;
	if (cmd == PROTO_CMD__COUNT)
		return; /* v2's handshake: bytes, no message */
	d->stats.msg[cmd].sent_count++;
	d->stats.msg[cmd].sent_bytes += len;
	p->msgbytes->sent[cmd] += len;
	p->bytes_sent += len;
	p->lastsend = daemon_time(p->d);
	p->lastsend_ms = daemon_now_ms(d);
	DLOG_DBG(&d->log, DLOG_MSG, "send %s (%zu bytes) peer=%llu", proto_cmd_name(cmd), len,
	         (unsigned long long)p->id);
}

/* Pause the peer once its queue passed maxsendbuffer (Core's fPauseSend). */
static void queued(struct peer *p, size_t rest)
{
	struct daemon *d = p->d;
	p->sendq_bytes += rest;
	p->sendq_reqs++;
	if (!p->send_paused && p->sendq_bytes > d->net->max_sendq) {
		p->send_paused = true;
		d->stats.send_pauses++;
		DLOG_DBG(&d->log, DLOG_NET,
		         "peer=%llu send queue %llu bytes > maxsendbuffer: pausing",
		         (unsigned long long)p->id, (unsigned long long)p->sendq_bytes);
	}
}

/*
 * Every send writes what the kernel takes at once and queues the rest in a
 * record that keeps its bytes alive until libuv is done with them; only the
 * records differ (a copy, a free-list length, an owned payload).
 */

/* Write b[0..n) (total bytes) now, unless earlier writes are queued (order):
 * the bytes the kernel took, or -1 after disconnecting on an error. */
static ssize_t write_now(struct peer *p, uv_buf_t *b, unsigned n)
{
	if (p->sendq_reqs)
		return 0;
	int r = uv_try_write((uv_stream_t *)&p->tcp, b, n);
	if (r >= 0 || r == UV_EAGAIN)
		return r >= 0 ? r : 0;
	peer_disconnect(p, uv_strerror(r));
	return -1;
}

/* Queue b[0..n) from byte `done` on as `req` (its record holds the bytes, and
 * `rest` = total - done); false after disconnecting, the record the caller's. */
static bool write_rest(struct peer *p, uv_write_t *req, uv_buf_t *b, unsigned n, size_t done,
                       size_t rest, uv_write_cb cb)
{
	unsigned first = 0;
	while (first < n && done >= b[first].len) {
		done -= b[first].len;
		first++;
	}
	b[first].base += done;
	b[first].len -= done;
	int err = uv_write(req, (uv_stream_t *)&p->tcp, b + first, n - first, cb);
	if (err) {
		peer_disconnect(p, uv_strerror(err));
		return false;
	}
	queued(p, rest);
	return true;
}

/** A write whose pieces stay where they are until it completes. */
struct peer_wref {
	uv_write_t req;
	uint64_t len;     /**< bytes queued */
	void *lenck;      /**< the frame's length and checksum: an 8-byte binary free-list buffer */
	uint8_t *payload; /**< owned; freed when written */
};

static void peer_wref_cb(uv_write_t *req, int status)
{
	struct peer_wref *w = (struct peer_wref *)req;
	write_finished(req->handle->data, w->len, status);
	proto_freelist_put(PROTO_FREELIST_BINARY, w->lenck);
	xfree(w->payload);
	xfree(w);
}

void peer_send_owned(struct peer *p, enum proto_cmd cmd, const uint8_t prefix[16], uint8_t *payload,
                     size_t len, uint32_t csum)
{
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING || len > PROTO_MAX_MESSAGE) {
		xfree(payload);
		return;
	}
	if ((unsigned)cmd >= PROTO_CMD__COUNT)
		cmd = PROTO_CMD_UNKNOWN;
	if (net_v2_active(p)) {
		net_v2_send_owned(p, cmd, prefix + 4, payload, len);
		return;
	}
	/* The frame: a 16-byte prefix (magic, command) that lives as long
	 * as the daemon, 8 bytes of length and checksum that must live
	 * until the write completes (the binary free list's job), then the
	 * payload where it lies: nothing is copied or hashed. */
	uint8_t *lenck = proto_freelist_get(PROTO_FREELIST_BINARY);
	if (!lenck) {
		xfree(payload);
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	proto_put_le32(lenck, (uint32_t)len);
	proto_put_le32(lenck + 4, csum);
	size_t total = PROTO_HEADER_SIZE + len;
	count_sent(p, cmd, total);
	uv_buf_t b[3] = {uv_buf_init((char *)prefix, 16), uv_buf_init((char *)lenck, 8),
	                 uv_buf_init((char *)payload, (unsigned)len)};
	ssize_t done = write_now(p, b, 3);
	struct peer_wref *w = NULL;
	if (done >= 0 && (size_t)done < total) {
		w = xmalloc(sizeof(*w));
		if (!w)
			peer_disconnect(p, "out of memory queueing a send");
	}
	if (w) {
		w->len = total - (size_t)done;
		w->lenck = lenck;
		w->payload = payload;
		if (write_rest(p, &w->req, b, 3, (size_t)done, w->len, peer_wref_cb))
			return;
		xfree(w);
	}
	proto_freelist_put(PROTO_FREELIST_BINARY, lenck);
	xfree(payload);
}

void peer_send_frame(struct peer *p, enum proto_cmd cmd, const uint8_t *frame, size_t len)
{
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING)
		return;
	if ((unsigned)cmd >= PROTO_CMD__COUNT)
		cmd = PROTO_CMD_UNKNOWN;
	if (net_v2_active(p) && len >= PROTO_HEADER_SIZE) {
		net_v2_send(p, cmd, frame + 4, frame + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE);
		return;
	}
	peer_send_copy(p, cmd, frame, len);
}

void peer_send_copy(struct peer *p, enum proto_cmd cmd, const uint8_t *frame, size_t len)
{
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING)
		return;
	if ((unsigned)cmd > PROTO_CMD__COUNT)
		cmd = PROTO_CMD_UNKNOWN;
	count_sent(p, cmd, len);

	uv_buf_t b = uv_buf_init((char *)frame, (unsigned)len);
	ssize_t done = write_now(p, &b, 1);
	if (done < 0 || (size_t)done == len)
		return;
	size_t rest = len - (size_t)done;
	struct peer_wreq *w = xmalloc(sizeof(*w) + rest);
	if (!w) {
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	w->len = (uint32_t)rest;
	memcpy(w->data, frame + done, rest);
	b = uv_buf_init((char *)w->data, (unsigned)rest);
	if (!write_rest(p, &w->req, &b, 1, 0, rest, peer_write_cb))
		xfree(w);
}

/** A write of small head and tail pieces around an owned payload (v2's packets). */
struct peer_wpkt {
	uv_write_t req;
	uint64_t len;     /**< bytes queued */
	uint8_t *payload; /**< owned; freed when written */
	uint8_t head[PEER_SEND_PIECE_MAX];
	uint8_t tail[PEER_SEND_PIECE_MAX];
};

static void peer_wpkt_cb(uv_write_t *req, int status)
{
	struct peer_wpkt *w = (struct peer_wpkt *)req;
	write_finished(req->handle->data, w->len, status);
	xfree(w->payload);
	xfree(w);
}

void peer_send_pieces(struct peer *p, enum proto_cmd cmd, const uint8_t *head, size_t hlen,
                      uint8_t *payload, size_t len, const uint8_t *tail, size_t tlen)
{
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING ||
	    !BASE_CHECK(hlen <= PEER_SEND_PIECE_MAX && tlen <= PEER_SEND_PIECE_MAX)) {
		xfree(payload);
		return;
	}
	size_t total = hlen + len + tlen;
	count_sent(p, cmd, total);
	/* The pieces are written where they are; only what the kernel did
	 * not take at once needs a request, which keeps head and tail. */
	uv_buf_t b[3] = {uv_buf_init((char *)head, (unsigned)hlen),
	                 uv_buf_init((char *)payload, (unsigned)len),
	                 uv_buf_init((char *)tail, (unsigned)tlen)};
	ssize_t done = write_now(p, b, 3);
	struct peer_wpkt *w = NULL;
	if (done >= 0 && (size_t)done < total) {
		w = xmalloc(sizeof(*w));
		if (!w)
			peer_disconnect(p, "out of memory queueing a send");
	}
	if (w) {
		if (hlen)
			memcpy(w->head, head, hlen);
		if (tlen)
			memcpy(w->tail, tail, tlen);
		w->payload = payload;
		w->len = total - (size_t)done;
		b[0].base = (char *)w->head;
		b[2].base = (char *)w->tail;
		if (write_rest(p, &w->req, b, 3, (size_t)done, w->len, peer_wpkt_cb))
			return;
		xfree(w);
	}
	xfree(payload);
}

int peer_send_msg(struct peer *p, const struct proto_msg *m)
{
	struct daemon *d = p->d;
	d->txw.len = 0;
	d->txw.err = 0;
	proto_msg_frame(m, d->params->magic, &d->txw);
	if (d->txw.err) {
		DLOG_WARNING(&d->log, DLOG_MSG, "cannot encode %s for peer=%llu: %s",
		             proto_cmd_name(m->cmd), (unsigned long long)p->id,
		             proto_strerror(d->txw.err));
		return d->txw.err;
	}
	peer_send_frame(p, m->cmd, d->txw.buf, d->txw.len);
	return 0;
}

void peer_flow_update(struct peer *p)
{
	struct daemon *d = p->d;
	if (!p->send_paused || p->sendq_bytes > d->net->max_sendq)
		return;
	p->send_paused = false;
	DLOG_DBG(&d->log, DLOG_NET, "peer=%llu send queue drained: resuming",
	         (unsigned long long)p->id);
	/* What waited for room (deferred getdata, queued blocks) goes first,
	 * as Core's ProcessGetData runs before new messages; it may pause the
	 * peer again. */
	d->net_events->drained(p);
	if (p->send_paused || d->net_events->busy(p) || p->state == PEER_CLOSING)
		return;
	peer_resume(p);
}

void peer_resume(struct peer *p)
{
	if (p->state == PEER_CLOSING)
		return;
	/* Messages that waited in the rx buffer are processed now; reading
	 * restarts once the buffer has room again. */
	transport_process(p);
	if (p->state != PEER_CLOSING && p->recv_paused && !p->send_paused &&
	    !p->d->net_events->busy(p)) {
		p->recv_paused = false;
		/* A peer waiting for maxrecvmemory reads again when granted. */
		if (p->rx_wait)
			return;
		int err =
		    uv_read_start((uv_stream_t *)&p->tcp, transport_alloc_cb, transport_read_cb);
		if (err)
			peer_disconnect(p, uv_strerror(err));
		else
			p->reading = true;
	}
}

void peer_tick(struct peer *p, uint64_t now_ms)
{
	struct daemon *d = p->d;
	if (p->state == PEER_CLOSING)
		return;
	if (p->state == PEER_CONNECTING) {
		uint64_t limit = p->socks_busy ? NET_SOCKS5_TIMEOUT_MS : PEER_CONNECT_TIMEOUT_MS;
		if (now_ms - p->connect_ms >= limit) {
			d->stats.outbound_failed++;
			peer_disconnect(p, "connect timeout");
		}
		return;
	}
	d->net_events->tick(p, now_ms);
}
