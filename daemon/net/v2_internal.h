/**
 * daemon/net/v2_internal.h: the BIP324 v2 transport's state machine (Core
 * 29's V2Transport, net.cpp) as pure code on byte buffers, so that its
 * unit test and fuzz target drive it without sockets; daemon/net/v2peer.c
 * runs it on a peer's receive buffer and send path. Not part of net/'s
 * public face (net/net.h has what the other rooms see).
 *
 * Glossary (Core's names in brackets):
 *   receive states  MAYBE_V1 (responder: the first 16 bytes may still be
 *                   v1's magic and "version"), KEY (their 64-byte key),
 *                   GARBTERM (their garbage, up to 4,095 bytes, and the
 *                   terminator), VERSION (the version packet, decoys before
 *                   it), APP (messages), V1 (the v1 transport has the
 *                   connection) [RecvState].
 *   send states     MAYBE_V1 (responder, nothing sent), AWAITING_KEY (our
 *                   key and garbage sent), READY (terminator and version
 *                   packet sent: messages go), V1 [SendState].
 *   out             handshake bytes the state machine wants sent; the
 *                   caller writes them and calls net_v2_out_done.
 */
#ifndef PEERD_DAEMON_NET_V2_INTERNAL_H
#define PEERD_DAEMON_NET_V2_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bip324/bip324.h"
#include "proto/proto.h"

/** A packet's contents at most: the id, a long type, the largest message (MAX_CONTENTS_LEN). */
#define NET_V2_MAX_CONTENTS (1u + BIP324_LONG_TYPE_LEN + PROTO_MAX_MESSAGE)
/** Garbage and terminator at most: searched this far for the terminator. */
#define NET_V2_MAX_GARBTERM (BIP324_MAX_GARBAGE_LEN + BIP324_GARBAGE_TERMINATOR_LEN)
/** v1's first 16 bytes: the magic and "version" NUL-padded (V1_PREFIX_LEN). */
#define NET_V2_V1_PREFIX_LEN 16u

enum net_v2_recv_state {
	NET_V2_RECV_MAYBE_V1 = 0,
	NET_V2_RECV_KEY,
	NET_V2_RECV_GARBTERM,
	NET_V2_RECV_VERSION,
	NET_V2_RECV_APP,
	NET_V2_RECV_V1,
};

enum net_v2_send_state {
	NET_V2_SEND_MAYBE_V1 = 0,
	NET_V2_SEND_AWAITING_KEY,
	NET_V2_SEND_READY,
	NET_V2_SEND_V1,
};

/** One connection's v2 transport. Made by net_v2_init, freed by net_v2_release. */
struct net_v2 {
	struct bip324_cipher cipher;
	uint8_t magic[4];
	bool initiator;
	enum net_v2_recv_state rs;
	enum net_v2_send_state ss;
	bool have_len;         /**< the current packet's length is decrypted */
	bool sent_v1_header;   /**< 24 bytes or more went out (Core's m_sent_v1_header_worth) */
	bool aad_used;         /**< the first packet (their garbage its aad) was decrypted */
	uint32_t len;          /**< the current packet's contents length */
	uint32_t recv_garbage; /**< bytes of their garbage in garbage[] */
	uint32_t send_garbage; /**< bytes of our garbage in our_garbage[] */
	uint8_t garbage[BIP324_MAX_GARBAGE_LEN];
	uint8_t our_garbage[BIP324_MAX_GARBAGE_LEN];
	/* bytes to send (handshake) */
	uint8_t out[BIP324_ELLSWIFT_LEN + BIP324_MAX_GARBAGE_LEN + BIP324_GARBAGE_TERMINATOR_LEN +
	            BIP324_EXPANSION];
	uint32_t out_len;
};

/** What one net_v2_recv step did. */
enum net_v2_event {
	NET_V2_NEED = 0, /**< need: bytes that must be there (from buf) before the next step */
	NET_V2_USED,     /**< used bytes consumed (handshake, decoy, version packet) */
	NET_V2_MSG,      /**< used bytes consumed: a message (type, payload, len) */
	NET_V2_BADMSG,   /**< used bytes consumed: a packet whose type is invalid: dropped */
	NET_V2_TO_V1,    /**< the responder saw v1: the v1 transport takes the connection */
	NET_V2_ERROR,    /**< disconnect: why */
};

/** The outcome of a step. */
struct net_v2_step {
	enum net_v2_event ev;
	uint32_t used;        /**< bytes of buf consumed */
	uint32_t need;        /**< NET_V2_NEED: bytes wanted from buf's start */
	const char *why;      /**< NET_V2_ERROR: the reason */
	char type[13];        /**< NET_V2_MSG: the message type, NUL-terminated */
	uint8_t *payload;     /**< NET_V2_MSG: inside buf, decrypted in place */
	uint32_t payload_len; /**< NET_V2_MSG */
};

/**
 * Start a transport: initiator (we dialled: our key and garbage are in
 * out at once) or responder (MAYBE_V1: nothing sent yet). magic is the
 * network's. seckey/ellswift/garbage NULL: random (tests give fixed
 * ones); garbage_len < 0: a random length 0-4,095, as Core. 0 or a
 * bip324_error.
 */
int net_v2_init(struct net_v2 *v, bool initiator, uint32_t magic, const uint8_t *seckey,
                const uint8_t *ellswift, const uint8_t *garbage, int garbage_len);
/** Wipe it. */
void net_v2_release(struct net_v2 *v);
/**
 * One step on the received bytes buf[0..avail): see enum net_v2_event.
 * buf is written (packets are decrypted in place). Call again while it
 * consumes bytes; send `out` after each call.
 */
void net_v2_recv(struct net_v2 *v, uint8_t *buf, uint32_t avail, struct net_v2_step *st);
/** out was sent: empty it. */
void net_v2_out_done(struct net_v2 *v);
/** Bytes an encrypted message of type and len payload bytes takes on the wire. */
size_t net_v2_wire_len(const char *type, size_t len);
/**
 * Encrypt one message (type, payload) as a packet into buf
 * (net_v2_wire_len bytes): the short id when BIP324 has one, else 0 and
 * the type in 12 bytes, built in buf and encrypted there. Only in the
 * READY send state. 0 (an int so that a future allocation can fail).
 */
int net_v2_encrypt(struct net_v2 *v, const char *type, const uint8_t *payload, size_t len,
                   bool decoy, uint8_t *buf);
/** Bytes before the payload in a packet at most: length, header, id, a long type. */
#define NET_V2_MAX_HEAD (BIP324_LENGTH_LEN + BIP324_HEADER_LEN + 1u + BIP324_LONG_TYPE_LEN)
/**
 * Encrypt one message as net_v2_encrypt does, but in three pieces, so
 * that a large payload is neither copied nor given a second buffer: the
 * payload is encrypted in place, head gets what goes before it (the
 * return value: its length), tag the 16 bytes after it. The wire bytes
 * are those of net_v2_encrypt. Only in the READY send state.
 */
size_t net_v2_seal(struct net_v2 *v, const char *type, uint8_t *payload, size_t len,
                   uint8_t head[NET_V2_MAX_HEAD], uint8_t tag[BIP324_TAG_LEN]);
/** Core's ShouldReconnectV1: we dialled, sent a v1 header's worth and got nothing back. */
bool net_v2_should_reconnect_v1(const struct net_v2 *v, uint64_t bytes_recv);

#endif
