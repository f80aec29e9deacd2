/*
 * daemon/net/v2peer.c: the BIP324 v2 transport (net/v2transport.c's state
 * machine) on a peer: its receive buffer, its sends, the choice of v1 or
 * v2 and Core's one reconnect with v1.
 *
 * Receiving runs inside transport_process's loop on the same rx buffer as
 * v1, with the same rules: the buffer grows to a packet's size only after
 * its length was decrypted and checked, through the receive budget
 * (recvbudget_acquire); a packet waits while the peer is send-paused or
 * busy; each message goes to the message event with a parsed header, as
 * a v1 message whose checksum passed, and is counted by command. A
 * responder that sees v1's first 16 bytes hands the connection to the v1
 * transport with every byte still unread (Core's ProcessReceivedMaybeV1Bytes).
 *
 * Sending: a message is encrypted into one packet and written (the
 * packet's buffer is given to the write, not copied). Until the handshake
 * is done (our terminator and version packet sent) messages wait in a
 * queue, as in Core's vSendMsg; a responder that turns out to speak v1
 * gets them framed as v1.
 *
 * Choosing (Core's CConnman::ConnectNode and OpenNetworkConnection):
 * with -v2transport, inbound peers may speak either; outbound v2 for
 * manual connections (and addconnection's v2transport) and for addresses
 * whose services have NODE_P2P_V2. A v2 attempt that is closed after we
 * sent 24 bytes or more and before anything came back is dialled once
 * more with v1 (Core's ShouldReconnectV1).
 */
#include "daemon/net/net.h"
#include "daemon/net/v2_internal.h"

#include <stdio.h>
#include <string.h>

#include "base/require.h"

/** A message waiting for the handshake. */
struct v2_pending {
	struct v2_pending *next;
	enum proto_cmd cmd;
	char type[13];
	size_t len;
	uint8_t payload[];
};

struct net_v2_peer {
	struct net_v2 v;
	struct v2_pending *head, **tail;
};

bool net_v2_active(const struct peer *p)
{
	return p->v2 && p->v2->v.rs != NET_V2_RECV_V1;
}

/* Write what the state machine wants sent (the handshake). */
static void flush_out(struct peer *p)
{
	struct net_v2 *v = &p->v2->v;
	if (!v->out_len)
		return;
	uint8_t *b = xmalloc(v->out_len);
	if (!b) {
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	memcpy(b, v->out, v->out_len);
	size_t n = v->out_len;
	net_v2_out_done(v);
	peer_send_pieces(p, PROTO_CMD__COUNT, NULL, 0, b, n, NULL, 0);
}

/* Packets up to this size are encrypted on the stack and written from
 * there (copied only if the socket does not take them at once), as v1's
 * frames are: most messages (inv, ping, tx) then allocate nothing. */
#define V2_STACK_PACKET 1024

static void send_packet(struct peer *p, enum proto_cmd cmd, const char *type,
                        const uint8_t *payload, size_t len)
{
	size_t n = net_v2_wire_len(type, len);
	if (n <= V2_STACK_PACKET) {
		uint8_t sb[V2_STACK_PACKET];
		if (net_v2_encrypt(&p->v2->v, type, payload, len, false, sb)) {
			peer_disconnect(p, "out of memory queueing a send");
			return;
		}
		peer_send_copy(p, cmd, sb, n);
		return;
	}
	uint8_t *b = xmalloc(n);
	if (!b || net_v2_encrypt(&p->v2->v, type, payload, len, false, b)) {
		xfree(b);
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	peer_send_pieces(p, cmd, NULL, 0, b, n, NULL, 0);
}

/* The responder turned to v1: what waited goes as v1 frames. */
static void send_v1(struct peer *p, const struct v2_pending *m)
{
	size_t n = PROTO_HEADER_SIZE + m->len;
	uint8_t *b = xmalloc(n);
	if (!b) {
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	proto_put_le32(b, p->d->params->magic);
	memset(b + 4, 0, PROTO_COMMAND_SIZE);
	memcpy(b + 4, m->type, strlen(m->type));
	proto_put_le32(b + 16, (uint32_t)m->len);
	proto_checksum(m->payload, m->len, b + 20);
	memcpy(b + PROTO_HEADER_SIZE, m->payload, m->len);
	peer_send_pieces(p, m->cmd, NULL, 0, b, n, NULL, 0);
}

/* Send what waited, once the handshake is done or v1 took over. */
static void flush_pending(struct peer *p)
{
	struct net_v2_peer *vp = p->v2;
	bool v1 = vp->v.ss == NET_V2_SEND_V1;
	if (!v1 && vp->v.ss != NET_V2_SEND_READY)
		return;
	while (vp->head && p->state != PEER_CLOSING) {
		struct v2_pending *m = vp->head;
		vp->head = m->next;
		if (v1)
			send_v1(p, m);
		else
			send_packet(p, m->cmd, m->type, m->payload, m->len);
		xfree(m);
	}
	if (!vp->head)
		vp->tail = &vp->head;
}

void net_v2_start(struct peer *p)
{
	struct daemon *d = p->d;
	if (!d->conf->v2transport)
		return;
	if (!p->inbound && (p->v2_off || !(p->v2_want || (p->dial_services & PROTO_NODE_P2P_V2))))
		return;
	struct net_v2_peer *vp = xmalloc(sizeof(*vp));
	if (!vp) {
		peer_disconnect(p, "out of memory for the v2 transport");
		return;
	}
	if (net_v2_init(&vp->v, !p->inbound, d->params->magic, NULL, NULL, NULL, -1)) {
		xfree(vp);
		peer_disconnect(p, "cannot make a v2 key");
		return;
	}
	vp->head = NULL;
	vp->tail = &vp->head;
	p->v2 = vp;
	flush_out(p);
}

void net_v2_free(struct peer *p)
{
	struct net_v2_peer *vp = p->v2;
	if (!vp)
		return;
	while (vp->head) {
		struct v2_pending *m = vp->head;
		vp->head = m->next;
		xfree(m);
	}
	net_v2_release(&vp->v);
	xfree(vp);
	p->v2 = NULL;
}

void net_v2_send(struct peer *p, enum proto_cmd cmd, const uint8_t command[12],
                 const uint8_t *payload, size_t len)
{
	struct net_v2_peer *vp = p->v2;
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING)
		return;
	char type[13];
	memcpy(type, command, 12);
	type[12] = 0;
	if (vp->v.ss == NET_V2_SEND_READY && !vp->head) {
		send_packet(p, cmd, type, payload, len);
		return;
	}
	struct v2_pending *m = xmalloc(sizeof(*m) + len);
	if (!m) {
		peer_disconnect(p, "out of memory queueing a send");
		return;
	}
	m->next = NULL;
	m->cmd = cmd;
	memcpy(m->type, type, sizeof(type));
	m->len = len;
	if (len)
		memcpy(m->payload, payload, len);
	*vp->tail = m;
	vp->tail = &m->next;
}

void net_v2_send_owned(struct peer *p, enum proto_cmd cmd, const uint8_t command[12],
                       uint8_t *payload, size_t len)
{
	struct net_v2_peer *vp = p->v2;
	if (p->state == PEER_CLOSING || p->state == PEER_CONNECTING ||
	    vp->v.ss != NET_V2_SEND_READY || vp->head) {
		net_v2_send(p, cmd, command, payload, len);
		xfree(payload);
		return;
	}
	char type[13];
	memcpy(type, command, 12);
	type[12] = 0;
	uint8_t head[NET_V2_MAX_HEAD], tag[BIP324_TAG_LEN];
	size_t hlen = net_v2_seal(&vp->v, type, payload, len, head, tag);
	peer_send_pieces(p, cmd, head, hlen, payload, len, tag, sizeof(tag));
}

/* A whole message: to the message event, as a v1 message that passed its checksum. */
static void deliver(struct peer *p, const struct net_v2_step *st)
{
	struct daemon *d = p->d;
	struct proto_frame_header h;
	memset(&h, 0, sizeof(h));
	h.magic = d->params->magic;
	memcpy(h.command, st->type, sizeof(h.command));
	h.cmd = proto_cmd_lookup(st->type);
	h.length = st->payload_len;
	/* A block's v1 frame checksum is kept in the block index, so that it
	 * is served later (over v1) without hashing it again: v2 carries none,
	 * so it is computed here, for blocks only (sync/serve.c). */
	if (h.cmd == PROTO_CMD_BLOCK)
		proto_checksum(st->payload, st->payload_len, h.checksum);
	size_t wire = (size_t)st->used + BIP324_LENGTH_LEN;
	stats_recv(&d->stats, h.cmd, wire);
	p->msgbytes->recv[h.cmd] += wire;
	p->rx_busy = true;
	d->net_events->message(p, &h, st->payload);
	p->rx_busy = false;
}

bool net_v2_process(struct peer *p)
{
	struct daemon *d = p->d;
	struct peer_rx *rx = &p->rx;
	struct net_v2 *v = &p->v2->v;
	/* A message waits while replies are owed, as in v1. */
	if (v->rs == NET_V2_RECV_APP && !v->have_len && (p->send_paused || d->net_events->busy(p)))
		return false;
	struct net_v2_step st;
	net_v2_recv(v, rx->buf + rx->start, rx->end - rx->start, &st);
	flush_out(p);
	if (p->state == PEER_CLOSING)
		return false;
	flush_pending(p);
	if (p->state == PEER_CLOSING)
		return false;
	switch (st.ev) {
	case NET_V2_NEED:
		if (st.need > rx->cap) {
			if (!recvbudget_acquire(p, st.need))
				return false;
			if (transport_grow(p, st.need)) {
				peer_disconnect(p, "out of memory for a receive buffer");
				return false;
			}
		} else if (rx->cap - rx->start < st.need) {
			uint32_t avail = rx->end - rx->start;
			memmove(rx->buf, rx->buf + rx->start, avail);
			rx->start = 0;
			rx->end = avail;
		}
		return false;
	case NET_V2_USED:
		rx->start += st.used;
		return true;
	case NET_V2_BADMSG:
		/* Core drops it and keeps the peer; counted as "other". */
		rx->start += st.used;
		stats_recv(&d->stats, PROTO_CMD_UNKNOWN, st.used + BIP324_LENGTH_LEN);
		p->msgbytes->recv[PROTO_CMD_UNKNOWN] += st.used + BIP324_LENGTH_LEN;
		stats_err(&d->stats, PROTO_ECOMMAND);
		DLOG_DBG(&d->log, DLOG_MSG, "dropping v2 message with invalid type from peer=%llu",
		         (unsigned long long)p->id);
		return true;
	case NET_V2_MSG:
		rx->start += st.used;
		if (st.payload_len > PROTO_MAX_MESSAGE) {
			stats_err(&d->stats, PROTO_EOVERSIZE);
			peer_disconnect(p, "message length over 4000000");
			return false;
		}
		deliver(p, &st);
		return true;
	case NET_V2_TO_V1:
		/* What waited went out as v1 (flush_pending): the v2 state
		 * (some 12 KiB) is not needed any more. */
		DLOG_DBG(&d->log, DLOG_NET, "peer=%llu speaks v1", (unsigned long long)p->id);
		net_v2_free(p);
		return true;
	case NET_V2_ERROR:
		peer_disconnect(p, st.why);
		return false;
	}
	return false;
}

const char *net_v2_transport_name(const struct peer *p)
{
	if (!p->v2 || p->v2->v.rs == NET_V2_RECV_V1)
		return "v1";
	if (p->v2->v.rs == NET_V2_RECV_MAYBE_V1)
		return "detecting";
	return "v2";
}

void net_v2_session_id_hex(const struct peer *p, char out[65])
{
	out[0] = 0;
	if (!p->v2 || !p->v2->v.cipher.ready)
		return;
	for (int i = 0; i < BIP324_SESSION_ID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", p->v2->v.cipher.session_id[i]);
}

bool net_v2_reconnect_v1(struct peer *p)
{
	struct daemon *d = p->d;
	if (!p->v2 || d->shutting_down || !net_v2_should_reconnect_v1(&p->v2->v, p->bytes_recv))
		return false;
	char a[NET_ADDRSTRLEN];
	net_addr_format(&p->addr, a);
	if (p->target) {
		DLOG_INFO_(&d->log, DLOG_NET, "failed v2 connection to %s, reconnecting with v1",
		           p->target->name);
		return net_target_retry_v1(p);
	}
	/* An automatic connection: the same address again (through a proxy
	 * it would need its route again: left to the next round). */
	if (p->proxied)
		return false;
	DLOG_INFO_(&d->log, DLOG_NET, "failed v2 connection to %s, reconnecting with v1", a);
	struct peer *q = net_dial(d, &p->addr, p->conn_type, NULL, NULL);
	if (!q)
		return false;
	q->v2_off = true;
	q->dial_services = p->dial_services;
	q->count_failure = p->count_failure;
	return true;
}
