/*
 * daemon/net/v2transport.c: BIP324's v2 transport as a state machine on
 * byte buffers, Core 29's V2Transport (net.cpp) without its locks and
 * buffers: the caller (net/v2peer.c) keeps the received bytes in the
 * peer's receive buffer and asks for one step at a time.
 *
 * Receiving, as Core's ProcessReceived*Bytes:
 *   MAYBE_V1  (responder) the first 16 bytes equal to v1's magic and
 *             "version" mean a v1 peer: the v1 transport takes over with
 *             every byte still unread. Any other byte means v2: our key
 *             and garbage go out.
 *   KEY       their 64 bytes: the ECDH and keys (bip324_cipher_initialize);
 *             our terminator and version packet go out (READY).
 *   GARBTERM  their garbage up to 4,095 bytes, ended by their terminator;
 *             not found in 4,095 + 16 bytes: disconnect.
 *   VERSION   decoys and the version packet (its contents ignored).
 *   APP       messages: 3 length bytes (over NET_V2_MAX_CONTENTS:
 *             disconnect before anything is buffered), then the packet; a
 *             bad tag disconnects; decoys are dropped.
 * The first packet decrypted, decoy or not, has their garbage as aad.
 *
 * Sending: Core's choices: a random garbage length 0-4,095 of random
 * bytes, no decoys; the version packet has empty contents.
 */
#include "daemon/net/v2_internal.h"

#include <sodium.h>
#include <string.h>

#include "base/require.h"

/* The 12 bytes after v1's magic in a version message's header. */
static const char V1_VERSION_CMD[12] = "version";

static void out_put(struct net_v2 *v, const void *b, size_t n)
{
	require(v->out_len + n <= sizeof(v->out));
	memcpy(v->out + v->out_len, b, n);
	v->out_len += (uint32_t)n;
}

/* Our key and garbage (Core's StartSendingHandshake). */
static void start_handshake(struct net_v2 *v)
{
	out_put(v, v->cipher.our_pubkey, BIP324_ELLSWIFT_LEN);
	out_put(v, v->our_garbage, v->send_garbage);
	v->ss = NET_V2_SEND_AWAITING_KEY;
}

int net_v2_init(struct net_v2 *v, bool initiator, uint32_t magic, const uint8_t *seckey,
                const uint8_t *ellswift, const uint8_t *garbage, int garbage_len)
{
	memset(v, 0, sizeof(*v));
	int err = bip324_cipher_init(&v->cipher, seckey, ellswift);
	if (err)
		return err;
	proto_put_le32(v->magic, magic);
	v->initiator = initiator;
	if (garbage_len < 0)
		garbage_len = (int)randombytes_uniform(BIP324_MAX_GARBAGE_LEN + 1);
	require(garbage_len <= BIP324_MAX_GARBAGE_LEN);
	v->send_garbage = (uint32_t)garbage_len;
	if (garbage)
		memcpy(v->our_garbage, garbage, (size_t)garbage_len);
	else
		randombytes_buf(v->our_garbage, (size_t)garbage_len);
	if (initiator) {
		v->rs = NET_V2_RECV_KEY;
		start_handshake(v);
	} else {
		v->rs = NET_V2_RECV_MAYBE_V1;
		v->ss = NET_V2_SEND_MAYBE_V1;
	}
	return 0;
}

void net_v2_release(struct net_v2 *v)
{
	bip324_cipher_release(&v->cipher);
	sodium_memzero(v, sizeof(*v));
}

void net_v2_out_done(struct net_v2 *v)
{
	/* A v1 header is 24 bytes: a v1 peer would have closed on them. */
	if (v->out_len >= 24 || v->ss == NET_V2_SEND_READY)
		v->sent_v1_header = true;
	v->out_len = 0;
}

bool net_v2_should_reconnect_v1(const struct net_v2 *v, uint64_t bytes_recv)
{
	return v->initiator && v->rs == NET_V2_RECV_KEY && bytes_recv == 0 && v->sent_v1_header;
}

static void fail(struct net_v2_step *st, const char *why)
{
	st->ev = NET_V2_ERROR;
	st->why = why;
}

static void need(struct net_v2_step *st, uint32_t n)
{
	st->ev = NET_V2_NEED;
	st->need = n;
}

static void recv_maybe_v1(struct net_v2 *v, const uint8_t *buf, uint32_t avail,
                          struct net_v2_step *st)
{
	uint8_t prefix[NET_V2_V1_PREFIX_LEN];
	memcpy(prefix, v->magic, 4);
	memcpy(prefix + 4, V1_VERSION_CMD, 12);
	uint32_t n = avail < NET_V2_V1_PREFIX_LEN ? avail : NET_V2_V1_PREFIX_LEN;
	if (memcmp(buf, prefix, n) != 0) {
		/* Not v1: reply with our key and garbage (Core's
		 * ProcessReceivedMaybeV1Bytes). */
		v->rs = NET_V2_RECV_KEY;
		start_handshake(v);
		st->ev = NET_V2_USED;
		return;
	}
	if (n < NET_V2_V1_PREFIX_LEN) {
		need(st, NET_V2_V1_PREFIX_LEN);
		return;
	}
	v->rs = NET_V2_RECV_V1;
	v->ss = NET_V2_SEND_V1;
	st->ev = NET_V2_TO_V1;
}

static void recv_key(struct net_v2 *v, const uint8_t *buf, uint32_t avail, struct net_v2_step *st)
{
	/* Core: a responder's key whose bytes 4-16 are a v1 version's command
	 * (the magic differed, else MAYBE_V1 had switched) is a v1 peer of
	 * another network. */
	if (!v->initiator && avail >= NET_V2_V1_PREFIX_LEN &&
	    memcmp(buf + 4, V1_VERSION_CMD, 12) == 0) {
		fail(st, "v2 handshake: v1 peer with wrong network magic");
		return;
	}
	if (avail < BIP324_ELLSWIFT_LEN) {
		need(st, BIP324_ELLSWIFT_LEN);
		return;
	}
	if (bip324_cipher_initialize(&v->cipher, buf, v->magic, v->initiator, false)) {
		fail(st, "v2 handshake: key agreement failed");
		return;
	}
	/* Our terminator, then the version packet with our garbage as aad. */
	require(v->ss == NET_V2_SEND_AWAITING_KEY);
	out_put(v, v->cipher.send_garbage_terminator, BIP324_GARBAGE_TERMINATOR_LEN);
	uint8_t pkt[BIP324_EXPANSION];
	bip324_cipher_encrypt(&v->cipher, NULL, 0, v->our_garbage, v->send_garbage, false, pkt);
	out_put(v, pkt, sizeof(pkt));
	v->ss = NET_V2_SEND_READY;
	v->rs = NET_V2_RECV_GARBTERM;
	st->ev = NET_V2_USED;
	st->used = BIP324_ELLSWIFT_LEN;
}

static void recv_garbterm(struct net_v2 *v, const uint8_t *buf, uint32_t avail,
                          struct net_v2_step *st)
{
	uint32_t n = avail < NET_V2_MAX_GARBTERM ? avail : NET_V2_MAX_GARBTERM;
	const uint8_t *t =
	    memmem(buf, n, v->cipher.recv_garbage_terminator, BIP324_GARBAGE_TERMINATOR_LEN);
	if (!t) {
		if (n == NET_V2_MAX_GARBTERM)
			fail(st, "v2 handshake: no garbage terminator within 4095 bytes");
		else
			need(st, NET_V2_MAX_GARBTERM);
		return;
	}
	v->recv_garbage = (uint32_t)(t - buf);
	memcpy(v->garbage, buf, v->recv_garbage);
	v->rs = NET_V2_RECV_VERSION;
	st->ev = NET_V2_USED;
	st->used = v->recv_garbage + BIP324_GARBAGE_TERMINATOR_LEN;
}

/* Core's V2Transport::GetMessageType: the short id's type, or the long
 * form's 12 bytes (printable, NUL-padded). False: an invalid type. */
static bool message_type(const uint8_t *c, uint32_t len, char type[13], uint32_t *skip)
{
	if (len < 1)
		return false;
	if (c[0] != 0) {
		const char *name = bip324_msgid_name(c[0]);
		if (!name)
			return false;
		snprintf(type, 13, "%s", name);
		*skip = 1;
		return true;
	}
	if (len < 1 + BIP324_LONG_TYPE_LEN)
		return false;
	uint32_t i = 0;
	while (i < BIP324_LONG_TYPE_LEN && c[1 + i] != 0) {
		if (c[1 + i] < ' ' || c[1 + i] > 0x7e)
			return false;
		type[i] = (char)c[1 + i];
		i++;
	}
	type[i] = 0;
	for (uint32_t j = i; j < BIP324_LONG_TYPE_LEN; j++)
		if (c[1 + j] != 0)
			return false;
	*skip = 1 + BIP324_LONG_TYPE_LEN;
	return true;
}

static void recv_packet(struct net_v2 *v, uint8_t *buf, uint32_t avail, struct net_v2_step *st)
{
	if (!v->have_len) {
		if (avail < BIP324_LENGTH_LEN) {
			need(st, BIP324_LENGTH_LEN);
			return;
		}
		v->len = bip324_cipher_decrypt_length(&v->cipher, buf);
		if (v->len > NET_V2_MAX_CONTENTS) {
			fail(st, "v2 packet too large");
			return;
		}
		v->have_len = true;
		st->ev = NET_V2_USED;
		st->used = BIP324_LENGTH_LEN;
		return;
	}
	uint32_t total = v->len + BIP324_HEADER_LEN + BIP324_TAG_LEN;
	if (avail < total) {
		need(st, total);
		return;
	}
	const uint8_t *aad = v->aad_used ? NULL : v->garbage;
	size_t aadlen = v->aad_used ? 0 : v->recv_garbage;
	bool ignore = false;
	/* The contents land where they were (buf + 1): in place. */
	if (bip324_cipher_decrypt(&v->cipher, buf, v->len, aad, aadlen, &ignore,
	                          buf + BIP324_HEADER_LEN)) {
		fail(st, "v2 packet authentication failed");
		return;
	}
	v->aad_used = true;
	v->have_len = false;
	st->used = total;
	st->ev = NET_V2_USED;
	if (ignore)
		return; /* a decoy */
	if (v->rs == NET_V2_RECV_VERSION) {
		/* The version packet: its contents are for future use. */
		v->rs = NET_V2_RECV_APP;
		return;
	}
	uint32_t skip = 0;
	uint8_t *c = buf + BIP324_HEADER_LEN;
	if (!message_type(c, v->len, st->type, &skip)) {
		st->ev = NET_V2_BADMSG;
		return;
	}
	st->ev = NET_V2_MSG;
	st->payload = c + skip;
	st->payload_len = v->len - skip;
}

void net_v2_recv(struct net_v2 *v, uint8_t *buf, uint32_t avail, struct net_v2_step *st)
{
	memset(st, 0, sizeof(*st));
	switch (v->rs) {
	case NET_V2_RECV_MAYBE_V1:
		recv_maybe_v1(v, buf, avail, st);
		return;
	case NET_V2_RECV_KEY:
		recv_key(v, buf, avail, st);
		return;
	case NET_V2_RECV_GARBTERM:
		recv_garbterm(v, buf, avail, st);
		return;
	case NET_V2_RECV_VERSION:
	case NET_V2_RECV_APP:
		recv_packet(v, buf, avail, st);
		return;
	case NET_V2_RECV_V1:
		st->ev = NET_V2_TO_V1;
		return;
	}
}

size_t net_v2_wire_len(const char *type, size_t len)
{
	return (bip324_msgid_lookup(type) ? 1 : 1 + BIP324_LONG_TYPE_LEN) + len + BIP324_EXPANSION;
}

int net_v2_encrypt(struct net_v2 *v, const char *type, const uint8_t *payload, size_t len,
                   bool decoy, uint8_t *buf)
{
	require(v->ss == NET_V2_SEND_READY);
	/* The contents (the id, the long type if any, the payload) are put
	 * where their ciphertext goes and encrypted in place: the payload is
	 * copied once (bip324_cipher_encrypt allows exactly this overlap). */
	uint8_t id = bip324_msgid_lookup(type);
	size_t hl = id ? 1 : 1 + BIP324_LONG_TYPE_LEN;
	uint8_t *c = buf + BIP324_LENGTH_LEN + BIP324_HEADER_LEN;
	c[0] = id;
	if (!id) {
		memset(c + 1, 0, BIP324_LONG_TYPE_LEN);
		memcpy(c + 1, type, strnlen(type, BIP324_LONG_TYPE_LEN));
	}
	if (len)
		memcpy(c + hl, payload, len);
	bip324_cipher_encrypt(&v->cipher, c, hl + len, NULL, 0, decoy, buf);
	return 0;
}

size_t net_v2_seal(struct net_v2 *v, const char *type, uint8_t *payload, size_t len,
                   uint8_t head[NET_V2_MAX_HEAD], uint8_t tag[BIP324_TAG_LEN])
{
	require(v->ss == NET_V2_SEND_READY);
	uint8_t prefix[1 + BIP324_LONG_TYPE_LEN];
	uint8_t id = bip324_msgid_lookup(type);
	size_t pl = id ? 1 : 1 + BIP324_LONG_TYPE_LEN;
	prefix[0] = id;
	if (!id) {
		memset(prefix + 1, 0, BIP324_LONG_TYPE_LEN);
		memcpy(prefix + 1, type, strnlen(type, BIP324_LONG_TYPE_LEN));
	}
	bip324_cipher_seal(&v->cipher, prefix, pl, payload, len, false, head, tag);
	return BIP324_LENGTH_LEN + BIP324_HEADER_LEN + pl;
}
