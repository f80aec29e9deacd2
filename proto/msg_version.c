/*
 * proto/msg_version.c: the version message.
 *
 *   version i32le | services u64le | timestamp i64le |
 *   addr_recv (services u64le | ip[16] | port u16be)            -- required
 *   addr_from (same 26 bytes) | nonce u64le                      -- optional
 *   user agent var string (<= PROTO_MAX_SUBVERSION)              -- optional
 *   start height i32le                                           -- optional
 *   relay u8                                                     -- optional
 *
 * Mirrors Core's ProcessMessage("version"): the required part must be
 * there; each optional part is read only if bytes remain (`if
 * (!vRecv.empty())`), and a part cut in the middle is an error. Bytes after
 * the relay flag are left unread, as Core leaves them: the caller decides
 * (proto_msg_decode tolerates them). Values are kept as sent; policy
 * (minimum version, negative timestamp, sanitising the user agent) is the
 * handler's.
 */
#include "proto/proto.h"

/* Bytes of the addr_from + nonce part. */
#define VERSION_FROM_NONCE_SIZE 34u

static int netaddr_decode(struct proto_reader *r, struct proto_netaddr *a)
{
	if (proto_reader_left(r) < 26)
		return PROTO_ETRUNC;
	a->services = proto_le64(r->p);
	memcpy(a->ip, r->p + 8, 16);
	a->port = (uint16_t)(r->p[24] << 8 | r->p[25]);
	r->p += 26;
	return 0;
}

static void netaddr_encode(const struct proto_netaddr *a, struct proto_writer *w)
{
	proto_write_u64le(w, a->services);
	proto_write_bytes(w, a->ip, 16);
	proto_write_u16be(w, a->port);
}

int proto_version_decode(struct proto_reader *r, struct proto_version *v)
{
	int err;
	size_t ua_len;

	memset(&v->addr_from, 0, sizeof(v->addr_from));
	v->nonce = 0;
	v->user_agent[0] = 0;
	v->user_agent_len = 0;
	v->start_height = -1;
	v->relay = true;
	v->has_relay = false;
	v->omitted = PROTO_VERSION_TAIL_NONE;

	if ((err = proto_read_i32le(r, &v->version)) || (err = proto_read_u64le(r, &v->services)) ||
	    (err = proto_read_i64le(r, &v->timestamp)) || (err = netaddr_decode(r, &v->addr_recv)))
		return err;

	if (!proto_reader_left(r))
		return 0;
	if (proto_reader_left(r) < VERSION_FROM_NONCE_SIZE)
		return PROTO_ETRUNC;
	if ((err = netaddr_decode(r, &v->addr_from)) || (err = proto_read_u64le(r, &v->nonce)))
		return err;
	v->omitted = PROTO_VERSION_TAIL_NO_UA;

	if (!proto_reader_left(r))
		return 0;
	err = proto_read_varstr(r, PROTO_MAX_SUBVERSION, v->user_agent, sizeof(v->user_agent),
	                        &ua_len);
	if (err)
		return err;
	v->user_agent_len = (uint32_t)ua_len;
	v->omitted = PROTO_VERSION_TAIL_NO_HEIGHT;

	if (!proto_reader_left(r))
		return 0;
	if ((err = proto_read_i32le(r, &v->start_height)))
		return err;
	v->omitted = PROTO_VERSION_TAIL_NO_RELAY;

	if (!proto_reader_left(r))
		return 0;
	uint8_t relay;
	if ((err = proto_read_u8(r, &relay)))
		return err;
	/* Core reads a bool: any non-zero byte is true. */
	v->relay = relay != 0;
	v->has_relay = true;
	v->omitted = PROTO_VERSION_TAIL_FULL;
	return 0;
}

void proto_version_encode(const struct proto_version *v, struct proto_writer *w)
{
	unsigned omitted = v->omitted;
	if (omitted > PROTO_VERSION_TAIL_NONE) {
		if (!w->err)
			w->err = PROTO_EVALUE;
		return;
	}
	proto_write_u32le(w, (uint32_t)v->version);
	proto_write_u64le(w, v->services);
	proto_write_u64le(w, (uint64_t)v->timestamp);
	netaddr_encode(&v->addr_recv, w);
	if (omitted >= PROTO_VERSION_TAIL_NONE)
		return;
	netaddr_encode(&v->addr_from, w);
	proto_write_u64le(w, v->nonce);
	if (omitted >= PROTO_VERSION_TAIL_NO_UA)
		return;
	if (v->user_agent_len > PROTO_MAX_SUBVERSION) {
		/* Every peer would reject it; make the caller's bug visible. */
		if (!w->err)
			w->err = PROTO_EOVERSIZE;
		return;
	}
	proto_write_varbytes(w, v->user_agent, v->user_agent_len);
	if (omitted >= PROTO_VERSION_TAIL_NO_HEIGHT)
		return;
	proto_write_u32le(w, (uint32_t)v->start_height);
	if (omitted >= PROTO_VERSION_TAIL_NO_RELAY)
		return;
	proto_write_u8(w, v->relay ? 1 : 0);
}
