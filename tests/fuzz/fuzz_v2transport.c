/*
 * tests/fuzz/fuzz_v2transport.c: the v2 transport's receive side
 * (daemon/net/v2transport.c) on arbitrary bytes: v1 detection, the key,
 * garbage and terminator search, lengths, tags, ids.
 *
 * Input: byte 0 flags: bit 0 the side under test is the initiator (else
 * the responder), bits 1-3 the chunk size the bytes arrive in (1, 2, 3,
 * 7, 16, 64, 1000, all), bit 4 raw (every further byte goes to the side
 * under test as is, from its first state). Otherwise an honest twin does
 * the handshake (its garbage length byte 1, 0-255) and then the input is
 * operations, one byte and its operands:
 *   0-127    the twin sends a message: type op % NTYPES, payload of the
 *            next byte's count of input bytes; it must arrive the same;
 *   128-191  the same as a decoy: nothing must arrive;
 *   192-255  the next byte's count of input bytes go in raw: from there
 *            the stream is the fuzzer's, nothing is checked but the
 *            step invariants, and no crash or leak.
 * Step invariants: used <= avail; NEED asks for more than there is (the
 * terminator search: for its whole window); a message's payload lies in
 * the buffer. The keys are fixed and made once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/net/v2_internal.h"

#define MAGIC 0xdab5bffau

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_v2transport: invariant broken: %s\n", what);
		abort();
	}
}

static const char *const TYPES[] = {"ping", "version", "block",   "tx", "madeup",
                                    "inv",  "addrv2",  "headers", ""};
#define NTYPES (sizeof(TYPES) / sizeof(TYPES[0]))
static const size_t CHUNKS[] = {1, 2, 3, 7, 16, 64, 1000, SIZE_MAX};

static uint8_t sk_a[32] = {1}, sk_b[32] = {2}, ell_a[64], ell_b[64];
static int ready;

static void setup(void)
{
	struct net_v2 v;
	check(net_v2_init(&v, true, MAGIC, sk_a, NULL, NULL, 0) == 0, "init a");
	memcpy(ell_a, v.cipher.our_pubkey, 64);
	net_v2_release(&v);
	check(net_v2_init(&v, true, MAGIC, sk_b, NULL, NULL, 0) == 0, "init b");
	memcpy(ell_b, v.cipher.our_pubkey, 64);
	net_v2_release(&v);
	ready = 1;
}

/** The side under test with its receive buffer. */
struct rx {
	struct net_v2 v;
	uint8_t *buf;
	size_t len, cap;
	size_t chunk;
	bool dead;     /**< it disconnected (error) or went v1 */
	bool checking; /**< the stream is still the twin's */
	char want[13]; /**< the message expected next ("" none) */
	const uint8_t *want_payload;
	size_t want_len;
	unsigned got;
	uint8_t sent[64]; /**< the first 64 bytes it sent: its key */
	size_t n_sent;
};

/* Run the side on its buffer, as the peer glue does. */
static void run(struct rx *r)
{
	while (!r->dead) {
		struct net_v2_step st;
		net_v2_recv(&r->v, r->buf, (uint32_t)r->len, &st);
		/* What it sends: only its key matters here (the twin needs it). */
		for (uint32_t k = 0; k < r->v.out_len && r->n_sent < sizeof(r->sent); k++)
			r->sent[r->n_sent++] = r->v.out[k];
		net_v2_out_done(&r->v);
		check(st.used <= r->len, "used within avail");
		switch (st.ev) {
		case NET_V2_NEED:
			if (r->v.rs == NET_V2_RECV_GARBTERM)
				check(st.need == NET_V2_MAX_GARBTERM && r->len < st.need,
				      "garbterm need");
			else
				check(st.need > r->len, "need more than avail");
			return;
		case NET_V2_ERROR:
			check(st.why != NULL, "a reason");
			check(!r->checking, "an honest stream failed");
			r->dead = true;
			return;
		case NET_V2_TO_V1:
			check(!r->checking, "an honest stream went v1");
			r->dead = true;
			return;
		case NET_V2_MSG:
			check(st.payload >= r->buf &&
			          st.payload + st.payload_len <= r->buf + r->len,
			      "payload in the buffer");
			if (r->checking) {
				check(strcmp(st.type, r->want) == 0, "the type sent");
				check(st.payload_len == r->want_len &&
				          (!st.payload_len || memcmp(st.payload, r->want_payload,
				                                     st.payload_len) == 0),
				      "the payload sent");
				r->got++;
			}
			break;
		case NET_V2_BADMSG:
			check(!r->checking || r->want[0] == 0, "a valid type dropped");
			if (r->checking)
				r->got++;
			break;
		case NET_V2_USED:
			break;
		}
		memmove(r->buf, r->buf + st.used, r->len - st.used);
		r->len -= st.used;
	}
}

static void deliver(struct rx *r, const uint8_t *b, size_t n)
{
	size_t off = 0;
	while (off < n && !r->dead) {
		size_t k = n - off < r->chunk ? n - off : r->chunk;
		if (r->len + k > r->cap) {
			r->cap = (r->len + k) * 2;
			r->buf = realloc(r->buf, r->cap);
			check(r->buf != NULL, "memory");
		}
		memcpy(r->buf + r->len, b + off, k);
		r->len += k;
		off += k;
		run(r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		setup();
	if (size < 2)
		return 0;
	uint8_t flags = data[0];
	bool initiator = flags & 1;
	struct rx r;
	memset(&r, 0, sizeof(r));
	r.chunk = CHUNKS[(flags >> 1) & 7];
	check(net_v2_init(&r.v, initiator, MAGIC, sk_a, ell_a, NULL, 0) == 0, "init");
	if (flags & 0x10) {
		deliver(&r, data + 1, size - 1);
		goto out;
	}
	/* The honest twin, and the handshake both ways. */
	struct net_v2 twin;
	check(net_v2_init(&twin, !initiator, MAGIC, sk_b, ell_b, NULL, data[1]) == 0, "twin");
	r.checking = true;
	uint8_t hs[sizeof(twin.out)];
	if (initiator) {
		/* the twin (responder) reads our key and answers */
		struct net_v2_step st;
		net_v2_recv(&twin, r.v.out, 64, &st);
		check(st.ev == NET_V2_USED, "twin leaves MAYBE_V1");
		net_v2_recv(&twin, r.v.out, 64, &st);
		check(st.ev == NET_V2_USED && st.used == 64, "twin reads our key");
	} else {
		memcpy(hs, twin.out, twin.out_len);
		size_t n = twin.out_len;
		twin.out_len = 0;
		deliver(&r, hs, n);
		check(r.n_sent == 64 || r.dead, "our key sent");
		struct net_v2_step st;
		net_v2_recv(&twin, r.sent, 64, &st);
		check(st.ev == NET_V2_USED && st.used == 64, "twin reads our key");
	}
	check(twin.ss == NET_V2_SEND_READY, "twin ready");
	memcpy(hs, twin.out, twin.out_len);
	size_t n = twin.out_len;
	twin.out_len = 0;
	deliver(&r, hs, n);
	check(r.dead || r.v.ss == NET_V2_SEND_READY, "ready");
	size_t i = 2;
	while (i < size && !r.dead) {
		uint8_t op = data[i++];
		size_t len = i < size ? data[i++] : 0;
		if (len > size - i)
			len = size - i;
		const uint8_t *payload = data + i;
		i += len;
		if (op >= 192) {
			r.checking = false;
			deliver(&r, payload, len);
			continue;
		}
		const char *type = TYPES[op % NTYPES];
		size_t wl = net_v2_wire_len(type, len);
		uint8_t *pkt = malloc(wl);
		check(pkt != NULL, "memory");
		check(net_v2_encrypt(&twin, type, payload, len, op >= 128, pkt) == 0, "encrypt");
		snprintf(r.want, sizeof(r.want), "%s", type);
		r.want_payload = payload;
		r.want_len = len;
		unsigned before = r.got;
		deliver(&r, pkt, wl);
		if (r.checking)
			check(r.got == before + (op >= 128 ? 0 : 1), "one message a packet");
		free(pkt);
	}
	net_v2_release(&twin);
out:
	net_v2_release(&r.v);
	free(r.buf);
	return 0;
}
