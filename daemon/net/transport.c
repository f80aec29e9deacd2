/*
 * daemon/net/transport.c: v1 framing on a peer's receive buffer: Bitcoin
 * Core's V1Transport and CConnman's receive side.
 *
 * The receive buffer (Knot Resolver's daemon/io.c hands libuv a per-peer
 * buffer the same way) lives only while there are unprocessed bytes:
 *
 *   idle            no buffer at all.
 *   data arrives    a 512-byte buffer from the global script free list. It
 *                   holds the 24-byte header and any payload of up to 488
 *                   bytes: version, verack, ping, pong, feefilter, small inv
 *                   and getdata, ... Steady small-message traffic so costs
 *                   no allocation on the receive path.
 *   a header says   the header's magic and length are checked first (Core's
 *   "more"          V1Transport::readHeader); only then is an exactly-sized
 *                   heap buffer allocated for that one message and the
 *                   bytes so far copied over. Reads into it stop at the
 *                   message's end, so it never holds two messages.
 *   consumed        the buffer goes back (free list or xfree) as soon as
 *                   every byte in it was processed, and on disconnect.
 *
 * Errors, as Core 29: the first bytes of a message not being the network
 * magic, or a length over PROTO_MAX_MESSAGE, disconnect at once (a BIP324
 * v2 hello from Core 29 is 64 bytes with no magic: closing right away lets
 * it retry with v1 within half a second instead of waiting 60 s). A bad
 * checksum or an invalid command drops that message only: it is counted
 * under its error code and the peer stays.
 *
 * Each whole message is counted by command here (getstats' and the peer's
 * bytes per message type, as Core's CNode::ReceiveMsgBytes counts
 * mapRecvBytesPerMsgType in net). What it means is not net/'s business:
 * a checksum-valid message goes to the one connection event `message`
 * (struct net_events), which the wiring (daemon/netevents.c) points at
 * p2p/'s dispatch (p2p/dispatch.c, Core's ProcessMessage): the unknown
 * commands, the handshake gate, decoding, count limits and the handlers.
 * net/ knows no command's handler and no message table.
 */
#include "daemon/net/net.h"

#include <string.h>
#include <time.h>

#include "base/require.h"

void transport_release(struct peer *p)
{
	struct peer_rx *rx = &p->rx;
	recvbudget_release(p);
	if (!rx->buf)
		return;
	if (rx->pooled)
		proto_freelist_put(PROTO_FREELIST_SCRIPT, rx->buf);
	else
		xfree(rx->buf);
	memset(rx, 0, sizeof(*rx));
}

void transport_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct peer *p = h->data;
	struct peer_rx *rx = &p->rx;
	(void)suggested;
	if (!rx->buf) {
		rx->buf = proto_freelist_get(PROTO_FREELIST_SCRIPT);
		if (!rx->buf) {
			p->d->stats.rx_pool_fail++;
			*buf = uv_buf_init(NULL, 0);
			return;
		}
		rx->cap = PROTO_SCRIPT_BUF_SIZE;
		rx->start = rx->end = 0;
		rx->pooled = true;
	}
	*buf = uv_buf_init((char *)rx->buf + rx->end, rx->cap - rx->end);
}

static void stop_reading(struct peer *p)
{
	if (p->reading)
		uv_read_stop((uv_stream_t *)&p->tcp);
	p->reading = false;
	if (!p->recv_paused) {
		p->recv_paused = true;
		p->d->stats.recv_pauses++;
		DLOG_DBG(&p->d->log, DLOG_NET,
		         "peer=%llu send-paused with a full receive buffer: reading stopped",
		         (unsigned long long)p->id);
	}
}

void transport_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct peer *p = s->data;
	struct daemon *d = p->d;
	(void)buf;
	if (p->state == PEER_CLOSING)
		return;
	if (nread == 0) {
		if (p->rx.buf && p->rx.start == p->rx.end)
			transport_release(p);
		return;
	}
	if (nread < 0) {
		if (nread == UV_ENOBUFS && p->rx.buf && p->rx.end == p->rx.cap) {
			/* Only possible while send-paused: wait for the drain. */
			stop_reading(p);
			return;
		}
		peer_disconnect(p, nread == UV_EOF ? "closed by peer" : uv_strerror((int)nread));
		return;
	}
	p->rx.end += (uint32_t)nread;
	p->bytes_recv += (uint64_t)nread;
	d->stats.bytes_recv += (uint64_t)nread;
	p->lastrecv = daemon_time(d);
	p->lastrecv_ms = daemon_now_ms(d);
	transport_process(p);
}

/* Whether the first n (< 4) or 4 bytes can still be the network magic. */
static bool magic_prefix_ok(const struct daemon *d, const uint8_t *at, uint32_t n)
{
	uint8_t m[4];
	proto_put_le32(m, d->params->magic);
	return memcmp(at, m, n < 4 ? n : 4) == 0;
}

/* The buffer holds the start of a message of `total` bytes that does not
 * fit: move it into an exactly-sized heap buffer. 0 or -1 (out of memory). */
int transport_grow(struct peer *p, uint32_t total)
{
	struct peer_rx *rx = &p->rx;
	uint32_t avail = rx->end - rx->start;
	uint8_t *nb = xmalloc(total);
	if (!nb)
		return -1;
	memcpy(nb, rx->buf + rx->start, avail);
	if (rx->pooled)
		proto_freelist_put(PROTO_FREELIST_SCRIPT, rx->buf);
	else
		xfree(rx->buf);
	rx->buf = nb;
	rx->cap = total;
	rx->start = 0;
	rx->end = avail;
	rx->pooled = false;
	p->d->stats.rx_large_buffers++;
	return 0;
}

void transport_process(struct peer *p)
{
	struct daemon *d = p->d;
	struct peer_rx *rx = &p->rx;
	while (rx->buf && p->state != PEER_CLOSING) {
		/* BIP324 v2 (net/v2peer.c) until it hands the connection to v1. */
		if (net_v2_active(p)) {
			if (net_v2_process(p))
				continue;
			break;
		}
		uint32_t avail = rx->end - rx->start;
		const uint8_t *at = rx->buf + rx->start;
		if (avail < PROTO_HEADER_SIZE) {
			if (avail && !magic_prefix_ok(d, at, avail)) {
				stats_err(&d->stats, PROTO_EMAGIC);
				if (!p->got_version)
					d->stats.v2_probes++;
				peer_disconnect(p, "first bytes are not the network magic");
				return;
			}
			break;
		}
		/* Replies are owed (send queue full, blocks being read): the
		 * next message waits, as Core's ProcessMessages does. */
		if (p->send_paused || d->net_events->busy(p))
			break;
		struct proto_frame_header h;
		int err = proto_frame_header_parse(at, d->params->magic, &h);
		if (err == PROTO_EMAGIC || err == PROTO_EOVERSIZE) {
			stats_err(&d->stats, err);
			if (err == PROTO_EMAGIC && !p->got_version)
				d->stats.v2_probes++;
			peer_disconnect(p, err == PROTO_EMAGIC ? "bad magic"
			                                       : "message length over 4000000");
			return;
		}
		uint32_t total = PROTO_HEADER_SIZE + h.length;
		if (avail < total) {
			if (total > rx->cap) {
				/* maxrecvmemory: without room the peer
				 * stops reading until it is granted. */
				if (!recvbudget_acquire(p, total))
					return;
				if (transport_grow(p, total)) {
					peer_disconnect(p, "out of memory for a receive buffer");
					return;
				}
			} else if (rx->cap - rx->start < total) {
				memmove(rx->buf, rx->buf + rx->start, avail);
				rx->start = 0;
				rx->end = avail;
			}
			break;
		}
		const uint8_t *payload = at + PROTO_HEADER_SIZE;
		if (err == PROTO_ECOMMAND) {
			/* Counted as received ("other") and as an error; dropped. */
			stats_recv(&d->stats, PROTO_CMD_UNKNOWN, total);
			p->msgbytes->recv[PROTO_CMD_UNKNOWN] += total;
			stats_err(&d->stats, err);
			DLOG_DBG(&d->log, DLOG_MSG,
			         "dropping message with invalid command from peer=%llu",
			         (unsigned long long)p->id);
		} else if ((err = proto_frame_verify(&h, payload)) != 0) {
			stats_err(&d->stats, err);
			stats_recv(&d->stats, h.cmd, total);
			p->msgbytes->recv[h.cmd] += total;
			DLOG_DBG(&d->log, DLOG_MSG, "dropping %s from peer=%llu: bad checksum",
			         h.command, (unsigned long long)p->id);
		} else {
			/* What the message means is p2p/'s (the message
			 * event), and its handler may disconnect the peer:
			 * the buffer then stays until this loop ends
			 * (peer_disconnect leaves it alone while rx_busy is
			 * set). */
			rx->start += total;
			stats_recv(&d->stats, h.cmd, total);
			p->msgbytes->recv[h.cmd] += total;
			p->rx_busy = true;
			d->net_events->message(p, &h, payload);
			p->rx_busy = false;
			continue;
		}
		rx->start += total;
	}
	if (p->state == PEER_CLOSING) {
		transport_release(p);
		return;
	}
	if (!rx->buf)
		return;
	if (rx->start == rx->end) {
		transport_release(p);
		return;
	}
	if (rx->start > 0 && rx->pooled) {
		uint32_t avail = rx->end - rx->start;
		memmove(rx->buf, rx->buf + rx->start, avail);
		rx->start = 0;
		rx->end = avail;
	}
	if ((p->send_paused || d->net_events->busy(p)) && p->reading &&
	    (rx->end == rx->cap || (uint64_t)(rx->end - rx->start) >= d->net->max_recvq))
		stop_reading(p);
}
