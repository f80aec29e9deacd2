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
 *   - getcfilters, getcfheaders, getcfcheckpt: tolerated. Core's
 *     ProcessGetCFilters & co. read their fields and answer; a request
 *     dropped here would leave a light client waiting for an answer
 *     Core gives.
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
	proto_cmpctblock_release(&m->cmpctblock);
	proto_getblocktxn_release(&m->getblocktxn);
	proto_blocktxn_release(&m->blocktxn);
	proto_cfilter_release(&m->cfilter);
	proto_cfhashes_release(&m->cfhashes);
	proto_msg_init(m);
}

/*
 * One codec per payload shape, named by PROTO_CMDS (proto/msg.h): dec_K
 * reads the payload from r into m, enc_K writes it. `exact` says whether
 * bytes left after dec_K are PROTO_ETRAILING (see the top of this file).
 */
struct codec {
	int (*decode)(struct proto_reader *r, struct proto_msg *m);
	void (*encode)(const struct proto_msg *m, struct proto_writer *w);
	bool exact;
};

static int dec_version(struct proto_reader *r, struct proto_msg *m)
{
	return proto_version_decode(r, &m->version);
}

static void enc_version(const struct proto_msg *m, struct proto_writer *w)
{
	proto_version_encode(&m->version, w);
}

/* verack, sendaddrv2, sendheaders, wtxidrelay, getaddr, mempool. */
static int dec_empty(struct proto_reader *r, struct proto_msg *m)
{
	(void)r;
	(void)m;
	return 0;
}

static void enc_empty(const struct proto_msg *m, struct proto_writer *w)
{
	(void)m;
	(void)w;
}

/* ping, pong. */
static int dec_nonce(struct proto_reader *r, struct proto_msg *m)
{
	return proto_read_u64le(r, &m->nonce);
}

static void enc_nonce(const struct proto_msg *m, struct proto_writer *w)
{
	proto_write_u64le(w, m->nonce);
}

/* inv, getdata, notfound. */
static int dec_inv(struct proto_reader *r, struct proto_msg *m)
{
	return proto_inv_decode(r, &m->inv);
}

static void enc_inv(const struct proto_msg *m, struct proto_writer *w)
{
	proto_inv_encode(&m->inv, w);
}

/* getheaders, getblocks. */
static int dec_locator(struct proto_reader *r, struct proto_msg *m)
{
	return proto_locator_decode(r, &m->locator);
}

static void enc_locator(const struct proto_msg *m, struct proto_writer *w)
{
	proto_locator_encode(&m->locator, w);
}

static int dec_headers(struct proto_reader *r, struct proto_msg *m)
{
	return proto_headers_decode(r, &m->headers);
}

static void enc_headers(const struct proto_msg *m, struct proto_writer *w)
{
	proto_headers_encode(&m->headers, w);
}

static int dec_addr(struct proto_reader *r, struct proto_msg *m)
{
	return proto_addr_decode(r, &m->addr);
}

static void enc_addr(const struct proto_msg *m, struct proto_writer *w)
{
	proto_addr_encode(&m->addr, w);
}

static int dec_addrv2(struct proto_reader *r, struct proto_msg *m)
{
	return proto_addrv2_decode(r, &m->addr);
}

static void enc_addrv2(const struct proto_msg *m, struct proto_writer *w)
{
	proto_addrv2_encode(&m->addr, w);
}

static int dec_feerate(struct proto_reader *r, struct proto_msg *m)
{
	return proto_read_i64le(r, &m->feerate);
}

static void enc_feerate(const struct proto_msg *m, struct proto_writer *w)
{
	proto_write_u64le(w, (uint64_t)m->feerate);
}

static int dec_sendcmpct(struct proto_reader *r, struct proto_msg *m)
{
	uint8_t hb;
	int err;
	if ((err = proto_read_u8(r, &hb)) || (err = proto_read_u64le(r, &m->sendcmpct.version)))
		return err;
	m->sendcmpct.high_bandwidth = hb != 0;
	return 0;
}

static void enc_sendcmpct(const struct proto_msg *m, struct proto_writer *w)
{
	proto_write_u8(w, m->sendcmpct.high_bandwidth ? 1 : 0);
	proto_write_u64le(w, m->sendcmpct.version);
}

/* tx and block decode a whole buffer themselves (trailing bytes included):
 * they take what is left of r and leave r at the failing offset, or at
 * the end on success. */
static int dec_tx(struct proto_reader *r, struct proto_msg *m)
{
	size_t off = 0, left = proto_reader_left(r);
	int err = proto_tx_decode_buf(r->p, left, &m->tx, &off);
	r->p += err ? off : left;
	return err;
}

static void enc_tx(const struct proto_msg *m, struct proto_writer *w)
{
	proto_tx_encode(&m->tx, w);
}

static int dec_block(struct proto_reader *r, struct proto_msg *m)
{
	size_t off = 0, left = proto_reader_left(r);
	int err = proto_block_decode(r->p, left, &m->block, &off);
	r->p += err ? off : left;
	return err;
}

static void enc_block(const struct proto_msg *m, struct proto_writer *w)
{
	proto_block_encode(&m->block, w);
}

/* Payloads whose excess Core never reads are not exact; tx and block check
 * their own trailing bytes. */
static const struct codec codec_version = {dec_version, enc_version, false};
/* BIP152: proto/msg_cmpct.c. */
static int dec_cmpctblock(struct proto_reader *r, struct proto_msg *m)
{
	return proto_cmpctblock_decode(r, &m->cmpctblock);
}

static void enc_cmpctblock(const struct proto_msg *m, struct proto_writer *w)
{
	proto_cmpctblock_encode(&m->cmpctblock, w);
}

static int dec_getblocktxn(struct proto_reader *r, struct proto_msg *m)
{
	return proto_getblocktxn_decode(r, &m->getblocktxn);
}

static void enc_getblocktxn(const struct proto_msg *m, struct proto_writer *w)
{
	proto_getblocktxn_encode(&m->getblocktxn, w);
}

static int dec_blocktxn(struct proto_reader *r, struct proto_msg *m)
{
	return proto_blocktxn_decode(r, &m->blocktxn);
}

static void enc_blocktxn(const struct proto_msg *m, struct proto_writer *w)
{
	proto_blocktxn_encode(&m->blocktxn, w);
}

/* BIP157: proto/msg_cfilter.c. */
static int dec_getcfilters(struct proto_reader *r, struct proto_msg *m)
{
	return proto_getcfilters_decode(r, &m->getcfilters);
}

static void enc_getcfilters(const struct proto_msg *m, struct proto_writer *w)
{
	proto_getcfilters_encode(&m->getcfilters, w);
}

static int dec_getcfcheckpt(struct proto_reader *r, struct proto_msg *m)
{
	return proto_getcfcheckpt_decode(r, &m->getcfcheckpt);
}

static void enc_getcfcheckpt(const struct proto_msg *m, struct proto_writer *w)
{
	proto_getcfcheckpt_encode(&m->getcfcheckpt, w);
}

static int dec_cfilter(struct proto_reader *r, struct proto_msg *m)
{
	return proto_cfilter_decode(r, &m->cfilter);
}

static void enc_cfilter(const struct proto_msg *m, struct proto_writer *w)
{
	proto_cfilter_encode(&m->cfilter, w);
}

static int dec_cfheaders(struct proto_reader *r, struct proto_msg *m)
{
	return proto_cfheaders_decode(r, &m->cfhashes);
}

static void enc_cfheaders(const struct proto_msg *m, struct proto_writer *w)
{
	proto_cfheaders_encode(&m->cfhashes, w);
}

static int dec_cfcheckpt(struct proto_reader *r, struct proto_msg *m)
{
	return proto_cfcheckpt_decode(r, &m->cfhashes);
}

static void enc_cfcheckpt(const struct proto_msg *m, struct proto_writer *w)
{
	proto_cfcheckpt_encode(&m->cfhashes, w);
}

static const struct codec codec_empty = {dec_empty, enc_empty, false};
static const struct codec codec_nonce = {dec_nonce, enc_nonce, true};
static const struct codec codec_inv = {dec_inv, enc_inv, true};
static const struct codec codec_locator = {dec_locator, enc_locator, true};
static const struct codec codec_headers = {dec_headers, enc_headers, true};
static const struct codec codec_addr = {dec_addr, enc_addr, true};
static const struct codec codec_addrv2 = {dec_addrv2, enc_addrv2, true};
static const struct codec codec_feerate = {dec_feerate, enc_feerate, true};
static const struct codec codec_sendcmpct = {dec_sendcmpct, enc_sendcmpct, true};
static const struct codec codec_tx = {dec_tx, enc_tx, false};
static const struct codec codec_block = {dec_block, enc_block, false};
static const struct codec codec_cmpctblock = {dec_cmpctblock, enc_cmpctblock, true};
static const struct codec codec_getblocktxn = {dec_getblocktxn, enc_getblocktxn, true};
static const struct codec codec_blocktxn = {dec_blocktxn, enc_blocktxn, true};
static const struct codec codec_getcfilters = {dec_getcfilters, enc_getcfilters, false};
static const struct codec codec_getcfcheckpt = {dec_getcfcheckpt, enc_getcfcheckpt, false};
static const struct codec codec_cfilter = {dec_cfilter, enc_cfilter, true};
static const struct codec codec_cfheaders = {dec_cfheaders, enc_cfheaders, true};
static const struct codec codec_cfcheckpt = {dec_cfcheckpt, enc_cfcheckpt, true};

/* Indexed by command; NULL for PROTO_CMD_UNKNOWN. */
static const struct codec *const codecs[PROTO_CMD__COUNT] = {
#define CODEC_(e, name, codec) [PROTO_CMD_##e] = &codec_##codec,
    PROTO_CMDS(CODEC_)
#undef CODEC_
};

int proto_msg_decode(enum proto_cmd cmd, const uint8_t *payload, size_t len, struct proto_msg *m,
                     size_t *err_off)
{
	/* A reader over NULL + 0 would be pointer arithmetic on NULL. */
	static const uint8_t empty[1];
	struct proto_reader r;
	int err;

	if (!payload) {
		payload = empty;
		len = 0;
	}
	proto_reader_init(&r, payload, len);
	m->cmd = (unsigned)cmd < PROTO_CMD__COUNT ? cmd : PROTO_CMD_UNKNOWN;

	const struct codec *c = codecs[m->cmd];
	if (!c)
		err = PROTO_EUNKNOWN;
	else if (!(err = c->decode(&r, m)) && c->exact && proto_reader_left(&r))
		err = PROTO_ETRAILING;
	if (err_off)
		*err_off = proto_reader_offset(&r);
	return err;
}

void proto_msg_encode(const struct proto_msg *m, struct proto_writer *w)
{
	const struct codec *c = (unsigned)m->cmd < PROTO_CMD__COUNT ? codecs[m->cmd] : NULL;
	if (c)
		c->encode(m, w);
	else if (!w->err)
		w->err = PROTO_EUNKNOWN;
}

void proto_msg_frame(const struct proto_msg *m, uint32_t magic, struct proto_writer *w)
{
	size_t start = proto_frame_begin(w);
	proto_msg_encode(m, w);
	proto_frame_end(w, start, magic, proto_cmd_name(m->cmd));
}
