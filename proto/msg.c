/*
 * proto/msg.c: decode and encode any message by command, and the small
 * fixed-size messages that need no file of their own.
 *
 * Trailing bytes, per message, mirroring Bitcoin Core's net_processing:
 *   - version: tolerated. Core reads the optional tail only while bytes
 *     remain and never looks past the relay flag; the message has grown
 *     fields that way before.
 *   - verack, sendaddrv2, sendheaders, wtxidrelay, getaddr, mempool:
 *     tolerated and ignored. Core never reads these payloads at all.
 *   - everything else: PROTO_ETRAILING. Core would ignore the excess after
 *     its last read, but no implementation sends any, no extension was ever
 *     negotiated that way for these messages, and a payload that is not
 *     exactly its message is more likely corruption or probing than
 *     evolution. The handler can still choose to only log it.
 *
 * ping and pong need their 8-byte nonce (a nonce-less ping is from peers
 * older than BIP31, below any version peerd accepts). Booleans (version's
 * relay, sendcmpct's announce flag) accept any non-zero byte as true, as
 * Core's bool deserializer does; they re-encode as 1. feefilter's value is
 * kept as sent: Core checks MoneyRange in the handler, not the codec.
 */
#include "proto/proto.h"

void proto_msg_init(struct proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	proto_tx_init(&m->tx);
	proto_block_init(&m->block);
}

void proto_msg_release(struct proto_msg *m)
{
	proto_inv_release(&m->inv);
	proto_locator_release(&m->locator);
	proto_headers_release(&m->headers);
	proto_addr_release(&m->addr);
	proto_tx_release(&m->tx);
	proto_block_release(&m->block);
	proto_msg_init(m);
}

static int sendcmpct_decode(struct proto_reader *r, struct proto_sendcmpct *s)
{
	uint8_t hb;
	int err;
	if ((err = proto_read_u8(r, &hb)) || (err = proto_read_u64le(r, &s->version)))
		return err;
	s->high_bandwidth = hb != 0;
	return 0;
}

/* tx and block decode a whole buffer themselves. */
static int decode_whole(enum proto_cmd cmd, const uint8_t *payload, size_t len, struct proto_msg *m,
                        size_t *err_off)
{
	size_t off = 0;
	int err = cmd == PROTO_CMD_TX ? proto_tx_decode_buf(payload, len, &m->tx, &off)
	                              : proto_block_decode(payload, len, &m->block, &off);
	if (err_off)
		*err_off = err ? off : len;
	return err;
}

int proto_msg_decode(enum proto_cmd cmd, const uint8_t *payload, size_t len, struct proto_msg *m,
                     size_t *err_off)
{
	/* A reader over NULL + 0 would be pointer arithmetic on NULL. */
	static const uint8_t empty[1];
	struct proto_reader r;
	bool exact = true;
	int err;

	if (!payload) {
		payload = empty;
		len = 0;
	}
	proto_reader_init(&r, payload, len);
	m->cmd = (unsigned)cmd < PROTO_CMD__COUNT ? cmd : PROTO_CMD_UNKNOWN;

	switch (m->cmd) {
	case PROTO_CMD_VERSION:
		err = proto_version_decode(&r, &m->version);
		exact = false;
		break;
	case PROTO_CMD_VERACK:
	case PROTO_CMD_SENDADDRV2:
	case PROTO_CMD_SENDHEADERS:
	case PROTO_CMD_WTXIDRELAY:
	case PROTO_CMD_GETADDR:
	case PROTO_CMD_MEMPOOL:
		err = 0;
		exact = false;
		break;
	case PROTO_CMD_PING:
	case PROTO_CMD_PONG:
		err = proto_read_u64le(&r, &m->nonce);
		break;
	case PROTO_CMD_INV:
	case PROTO_CMD_GETDATA:
	case PROTO_CMD_NOTFOUND:
		err = proto_inv_decode(&r, &m->inv);
		break;
	case PROTO_CMD_GETHEADERS:
	case PROTO_CMD_GETBLOCKS:
		err = proto_locator_decode(&r, &m->locator);
		break;
	case PROTO_CMD_HEADERS:
		err = proto_headers_decode(&r, &m->headers);
		break;
	case PROTO_CMD_ADDR:
		err = proto_addr_decode(&r, &m->addr);
		break;
	case PROTO_CMD_ADDRV2:
		err = proto_addrv2_decode(&r, &m->addr);
		break;
	case PROTO_CMD_FEEFILTER:
		err = proto_read_i64le(&r, &m->feerate);
		break;
	case PROTO_CMD_SENDCMPCT:
		err = sendcmpct_decode(&r, &m->sendcmpct);
		break;
	case PROTO_CMD_TX:
	case PROTO_CMD_BLOCK:
		return decode_whole(m->cmd, payload, len, m, err_off);
	case PROTO_CMD_UNKNOWN:
	default:
		err = PROTO_EUNKNOWN;
		break;
	}
	if (!err && exact && proto_reader_left(&r))
		err = PROTO_ETRAILING;
	if (err_off)
		*err_off = proto_reader_offset(&r);
	return err;
}

void proto_msg_encode(const struct proto_msg *m, struct proto_writer *w)
{
	switch (m->cmd) {
	case PROTO_CMD_VERSION:
		proto_version_encode(&m->version, w);
		break;
	case PROTO_CMD_VERACK:
	case PROTO_CMD_SENDADDRV2:
	case PROTO_CMD_SENDHEADERS:
	case PROTO_CMD_WTXIDRELAY:
	case PROTO_CMD_GETADDR:
	case PROTO_CMD_MEMPOOL:
		break;
	case PROTO_CMD_PING:
	case PROTO_CMD_PONG:
		proto_write_u64le(w, m->nonce);
		break;
	case PROTO_CMD_INV:
	case PROTO_CMD_GETDATA:
	case PROTO_CMD_NOTFOUND:
		proto_inv_encode(&m->inv, w);
		break;
	case PROTO_CMD_GETHEADERS:
	case PROTO_CMD_GETBLOCKS:
		proto_locator_encode(&m->locator, w);
		break;
	case PROTO_CMD_HEADERS:
		proto_headers_encode(&m->headers, w);
		break;
	case PROTO_CMD_ADDR:
		proto_addr_encode(&m->addr, w);
		break;
	case PROTO_CMD_ADDRV2:
		proto_addrv2_encode(&m->addr, w);
		break;
	case PROTO_CMD_FEEFILTER:
		proto_write_u64le(w, (uint64_t)m->feerate);
		break;
	case PROTO_CMD_SENDCMPCT:
		proto_write_u8(w, m->sendcmpct.high_bandwidth ? 1 : 0);
		proto_write_u64le(w, m->sendcmpct.version);
		break;
	case PROTO_CMD_TX:
		proto_tx_encode(&m->tx, w);
		break;
	case PROTO_CMD_BLOCK:
		proto_block_encode(&m->block, w);
		break;
	case PROTO_CMD_UNKNOWN:
	default:
		if (!w->err)
			w->err = PROTO_EUNKNOWN;
		break;
	}
}

void proto_msg_frame(const struct proto_msg *m, uint32_t magic, struct proto_writer *w)
{
	size_t start = proto_frame_begin(w);
	proto_msg_encode(m, w);
	proto_frame_end(w, start, magic, proto_cmd_name(m->cmd));
}
