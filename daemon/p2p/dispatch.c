/*
 * daemon/p2p/dispatch.c: what a whole, checksum-valid message means:
 * Bitcoin Core's PeerManagerImpl::ProcessMessage, where net/transport.c
 * is its CConnman (framing bytes into messages).
 *
 * net/ frames each message, checks its checksum and counts its bytes by
 * command, then hands it here through the connection events' message
 * callback (the wiring, daemon/netevents.c, registers p2p_dispatch). For
 * each message, in this order:
 *   - an unknown command is how the protocol grows: counted as an error
 *     and skipped; a bloom-filter command (filterload, filteradd,
 *     filterclear) from a peer past its handshake disconnects it (BIP111:
 *     peerd does not offer NODE_BLOOM, as Core 29).
 *   - the handshake gate (the entry's states): Core 29 handles nothing but
 *     version before version, and only verack, wtxidrelay and sendaddrv2
 *     between version and verack; anything else is ignored.
 *   - a raw entry (block) gets the payload undecoded.
 *   - otherwise the payload is decoded into d->in. A payload that does not
 *     decode drops that message only (counted under its error code; a
 *     decoder bug must never cut peerd off from honest peers), unless its
 *     leading count is over the command's limit: that is misbehaviour (or
 *     a plain disconnect, for a locator), as it is after a good decode.
 *   - the entry's handler.
 *
 * What happens to each command is not written here: the message table
 * (struct p2p_msg_entry, p2p.h) that daemon_init registers in
 * d->msg_table (daemon/msgtable.c) names the states it may arrive in, its
 * count limit and its handler, decoded or raw, in whichever room it lives.
 */
#include "daemon/p2p/p2p.h"

#include <string.h>

/* The leading CompactSize of a payload (after `skip` bytes), or 0. */
static uint64_t peek_count(const uint8_t *payload, size_t len, size_t skip)
{
	struct proto_reader r;
	uint64_t n = 0;
	if (len < skip)
		return 0;
	proto_reader_init(&r, payload + skip, len - skip);
	if (proto_read_compact(&r, UINT64_MAX, &n))
		return 0;
	return n;
}

/*
 * Is the message's element count over its command's limit (the table's
 * count_max)? Core reads the vector, then checks its size; the codec
 * refuses counts over its own maximum before reading, so the leading count
 * is checked here: after a decode failure, and after a success too for a
 * handler limit below the codec's (getheaders' 101-hash locator).
 */
static bool over_limit(const struct p2p_msg_entry *e, const uint8_t *payload, size_t len)
{
	return e->limit != P2P_MSG_NO_LIMIT &&
	       peek_count(payload, len, e->count_skip) > e->count_max;
}

/* What a count over the limit costs the peer. */
static void limit_act(struct peer *p, const struct p2p_msg_entry *e)
{
	if (e->limit == P2P_MSG_LIMIT_MISBEHAVING)
		ban_misbehaving(p, e->limit_reason);
	else
		peer_disconnect(p, e->limit_reason);
}

/*
 * Core 29's gates before a message reaches its handler (the table's
 * states): nothing but version until version; between version and verack
 * only verack, wtxidrelay and sendaddrv2. Returns false for a message to
 * ignore.
 */
static bool gate(const struct peer *p, const struct p2p_msg_entry *e)
{
	unsigned state = !p->got_version           ? P2P_MSG_BEFORE_VERSION
	                 : p->state != PEER_ACTIVE ? P2P_MSG_BEFORE_VERACK
	                                           : P2P_MSG_ACTIVE;
	return (e->states & state) != 0;
}

/* filterload, filteradd, filterclear (BIP37): handled by nodes offering NODE_BLOOM only. */
static bool is_bloom_filter_cmd(const char *command)
{
	return strcmp(command, "filterload") == 0 || strcmp(command, "filteradd") == 0 ||
	       strcmp(command, "filterclear") == 0;
}

void p2p_dispatch(struct peer *p, const struct proto_frame_header *h, const uint8_t *payload)
{
	struct daemon *d = p->d;
	enum proto_cmd cmd = h->cmd;
	DLOG_DBG(&d->log, DLOG_MSG, "received: %s (%u bytes) peer=%llu", h->command, h->length,
	         (unsigned long long)p->id);
	if (cmd == PROTO_CMD_UNKNOWN) {
		/* Unknown commands are how the protocol grows: skip, count. */
		stats_err(&d->stats, PROTO_EUNKNOWN);
		/* BIP111: peerd does not offer NODE_BLOOM, so a connected peer
		 * sending a filter message goes, as Core 29 does. */
		if (p->state == PEER_ACTIVE && is_bloom_filter_cmd(h->command)) {
			d->stats.bloom_disconnects++;
			peer_disconnect(p, "bloom filter message without NODE_BLOOM offered");
		}
		return;
	}
	const struct p2p_msg_entry *e = &d->msg_table[cmd];
	if (!gate(p, e)) {
		DLOG_DBG(&d->log, DLOG_MSG,
		         "ignoring %s from peer=%llu before the handshake allows it", h->command,
		         (unsigned long long)p->id);
		return;
	}
	if (e->on_raw) {
		/* Not decoded here (a block goes to the validation thread
		 * undecoded: a 4 MB block would hold the loop for milliseconds). */
		e->on_raw(p, payload, h->length, proto_le32(h->checksum));
		return;
	}
	size_t off = 0;
	int err = proto_msg_decode(cmd, payload, h->length, &d->in, &off);
	if (err) {
		stats_err(&d->stats, err);
		p->decode_errors++;
		if (over_limit(e, payload, h->length)) {
			limit_act(p, e);
			return;
		}
		DLOG_DBG(&d->log, DLOG_MSG, "dropping %s from peer=%llu: %s at offset %zu",
		         h->command, (unsigned long long)p->id, proto_strerror(err), off);
		return;
	}
	if (over_limit(e, payload, h->length)) {
		limit_act(p, e);
		return;
	}
	if (e->on_msg)
		e->on_msg(p, &d->in);
}
