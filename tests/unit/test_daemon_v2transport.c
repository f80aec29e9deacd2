/*
 * tests/unit/test_daemon_v2transport.c: the BIP324 v2 transport
 * (daemon/net/v2transport.c's state machine, daemon/net/v2peer.c on a
 * peer). First two state machines talk to each other through byte pipes
 * in chunks of every size (handshake, short and long ids, decoys, rekeys,
 * garbage up to 4,095 bytes); then the hostile cases, each ending with a
 * named reason; then a fixture peer (tests/unit/test_daemon_fixture.h)
 * served as responder: v2 through to p2p/'s handshake, v1 on the same
 * port, and the hostile cases disconnecting it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdint.h>

#include "daemon/net/v2_internal.h"
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

#define REGTEST_MAGIC (proto_params(PROTO_NET_REGTEST)->magic)

/* ---- two state machines through pipes --------------------------------- */

/** What one side has received and not yet consumed, and what it got. */
struct side {
	struct net_v2 v;
	uint8_t *in;
	size_t in_len, in_cap;
	/* messages received, in order */
	char types[64][13];
	size_t lens[64];
	uint8_t *payloads[64];
	unsigned n_msgs;
	unsigned n_bad;
	enum net_v2_event last;
	const char *why;
};

static void side_free(struct side *s)
{
	free(s->in);
	for (unsigned i = 0; i < s->n_msgs; i++)
		free(s->payloads[i]);
	net_v2_release(&s->v);
}

static void append(struct side *s, const uint8_t *b, size_t n)
{
	if (s->in_len + n > s->in_cap) {
		s->in_cap = (s->in_len + n) * 2;
		s->in = realloc(s->in, s->in_cap);
		assert_non_null(s->in);
	}
	memcpy(s->in + s->in_len, b, n);
	s->in_len += n;
}

/* Move `from`'s handshake bytes to `to`'s input. */
static void move_out(struct side *from, struct side *to)
{
	append(to, from->v.out, from->v.out_len);
	net_v2_out_done(&from->v);
}

/* Run s's state machine on what it has, as the peer glue does. */
static void run(struct side *s, struct side *other)
{
	for (;;) {
		struct net_v2_step st;
		net_v2_recv(&s->v, s->in, (uint32_t)s->in_len, &st);
		if (other)
			move_out(s, other);
		s->last = st.ev;
		if (st.ev == NET_V2_ERROR)
			s->why = st.why;
		if (st.ev == NET_V2_NEED || st.ev == NET_V2_ERROR || st.ev == NET_V2_TO_V1)
			return;
		if (st.ev == NET_V2_MSG) {
			assert_true(s->n_msgs < 64);
			snprintf(s->types[s->n_msgs], 13, "%s", st.type);
			s->lens[s->n_msgs] = st.payload_len;
			s->payloads[s->n_msgs] = malloc(st.payload_len + 1);
			memcpy(s->payloads[s->n_msgs], st.payload, st.payload_len);
			s->n_msgs++;
		} else if (st.ev == NET_V2_BADMSG) {
			s->n_bad++;
		}
		memmove(s->in, s->in + st.used, s->in_len - st.used);
		s->in_len -= st.used;
	}
}

/* Deliver bytes b to s in chunks of `chunk`, running it after each. */
static void feed(struct side *s, struct side *other, const uint8_t *b, size_t n, size_t chunk)
{
	size_t off = 0;
	do {
		size_t k = n - off < chunk ? n - off : chunk;
		append(s, b + off, k);
		off += k;
		run(s, other);
	} while (off < n && s->last != NET_V2_ERROR);
}

/* Both sides' pending bytes cross over (in chunks) until neither has any. */
static void exchange(struct side *a, struct side *b, size_t chunk)
{
	for (int round = 0; round < 16; round++) {
		uint8_t *ab = malloc(a->v.out_len + 1), *ba = malloc(b->v.out_len + 1);
		size_t nab = a->v.out_len, nba = b->v.out_len;
		memcpy(ab, a->v.out, nab);
		memcpy(ba, b->v.out, nba);
		net_v2_out_done(&a->v);
		net_v2_out_done(&b->v);
		/* What each sends in reply waits in its out for the next round. */
		if (nab)
			feed(b, NULL, ab, nab, chunk);
		if (nba)
			feed(a, NULL, ba, nba, chunk);
		free(ab);
		free(ba);
		if (!nab && !nba)
			return;
	}
}

static void pair(struct side *ini, struct side *res, int ini_garbage, int res_garbage)
{
	memset(ini, 0, sizeof(*ini));
	memset(res, 0, sizeof(*res));
	assert_int_equal(net_v2_init(&ini->v, true, REGTEST_MAGIC, NULL, NULL, NULL, ini_garbage),
	                 0);
	assert_int_equal(net_v2_init(&res->v, false, REGTEST_MAGIC, NULL, NULL, NULL, res_garbage),
	                 0);
}

/* Encrypt one message from s and hand it to dst in chunks. */
static void send_msg(struct side *s, struct side *dst, const char *type, const uint8_t *payload,
                     size_t len, bool decoy, size_t chunk)
{
	size_t n = net_v2_wire_len(type, len);
	uint8_t *b = malloc(n);
	assert_int_equal(net_v2_encrypt(&s->v, type, payload, len, decoy, b), 0);
	feed(dst, NULL, b, n, chunk);
	free(b);
}

static void test_handshake_and_messages(void **state)
{
	(void)state;
	static const size_t chunks[] = {1, 3, 17, 64, 4096, SIZE_MAX};
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		struct side ini, res;
		/* Garbage of the largest size and none at all. */
		pair(&ini, &res, c % 2 ? BIP324_MAX_GARBAGE_LEN : 0, c % 2 ? 0 : -1);
		exchange(&ini, &res, chunks[c]);
		assert_int_equal(ini.v.ss, NET_V2_SEND_READY);
		assert_int_equal(res.v.ss, NET_V2_SEND_READY);
		assert_int_equal(ini.v.rs, NET_V2_RECV_APP);
		assert_int_equal(res.v.rs, NET_V2_RECV_APP);
		assert_memory_equal(ini.v.cipher.session_id, res.v.cipher.session_id, 32);
		uint8_t big[100000];
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7);
		/* A short id (ping), the long form (version, an unknown type),
		 * a decoy dropped between them, and a large payload. */
		send_msg(&ini, &res, "ping", big, 8, false, chunks[c]);
		send_msg(&ini, &res, "ping", big, 8, true, chunks[c]);
		send_msg(&ini, &res, "version", big, 100, false, chunks[c]);
		send_msg(&ini, &res, "madeupcmd", NULL, 0, false, chunks[c]);
		send_msg(&res, &ini, "block", big, sizeof(big), false, chunks[c]);
		send_msg(&res, &ini, "verack", NULL, 0, false, chunks[c]);
		assert_int_equal(res.n_msgs, 3);
		assert_string_equal(res.types[0], "ping");
		assert_int_equal(res.lens[0], 8);
		assert_memory_equal(res.payloads[0], big, 8);
		assert_string_equal(res.types[1], "version");
		assert_int_equal(res.lens[1], 100);
		assert_string_equal(res.types[2], "madeupcmd");
		assert_int_equal(ini.n_msgs, 2);
		assert_string_equal(ini.types[0], "block");
		assert_int_equal(ini.lens[0], sizeof(big));
		assert_memory_equal(ini.payloads[0], big, sizeof(big));
		assert_string_equal(ini.types[1], "verack");
		/* Short ids are one byte, the long form thirteen. */
		assert_int_equal(net_v2_wire_len("ping", 8), 1 + 8 + BIP324_EXPANSION);
		assert_int_equal(net_v2_wire_len("version", 0), 13 + BIP324_EXPANSION);
		side_free(&ini);
		side_free(&res);
	}
}

/*
 * net_v2_seal (the payload encrypted in place between head and tag) gives
 * the bytes net_v2_encrypt gives, packet after packet across a rekey, for
 * short ids and the long form, for sizes on both sides of the cipher's
 * small-packet and block boundaries; the peer reads each.
 */
static void test_seal_as_encrypt(void **state)
{
	(void)state;
	static const size_t sizes[] = {0,   1,   40,  63,  64,   430,   431,
	                               432, 447, 448, 449, 1000, 300001};
	static const char *const types[] = {"block", "madeupcmd", "tx"};
	struct side ini, res;
	pair(&ini, &res, 5, 9);
	exchange(&ini, &res, SIZE_MAX);
	assert_int_equal(ini.v.ss, NET_V2_SEND_READY);
	struct net_v2 copy = ini.v;
	size_t max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
	uint8_t *src = malloc(max), *inplace = malloc(max), *want = malloc(max + 64);
	uint8_t *wire = malloc(max + 64);
	for (size_t i = 0; i < max; i++)
		src[i] = (uint8_t)(i * 31 + 5);
	unsigned packets = 0, delivered = 0;
	for (unsigned round = 0; packets < 2 * BIP324_REKEY_INTERVAL + 3; round++) {
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++, packets++) {
			const char *type = types[(round + k) % 3];
			size_t len = sizes[k];
			/* the big one a few times only: the test stays fast */
			if (len > 2000 && round % 8)
				len = 2000 + round;
			size_t n = net_v2_wire_len(type, len);
			assert_int_equal(net_v2_encrypt(&ini.v, type, src, len, false, want), 0);
			memcpy(inplace, src, len);
			uint8_t head[NET_V2_MAX_HEAD], tag[BIP324_TAG_LEN];
			size_t hlen = net_v2_seal(&copy, type, inplace, len, head, tag);
			assert_int_equal(hlen + len + BIP324_TAG_LEN, n);
			memcpy(wire, head, hlen);
			memcpy(wire + hlen, inplace, len);
			memcpy(wire + hlen + len, tag, BIP324_TAG_LEN);
			assert_memory_equal(wire, want, n);
			/* the receiver reads the sealed packet (a few: it keeps 64) */
			if (packets % 16 == 0) {
				unsigned before = res.n_msgs;
				feed(&res, NULL, wire, n, SIZE_MAX);
				assert_int_equal(res.n_msgs, before + 1);
				assert_string_equal(res.types[before], type);
				assert_int_equal(res.lens[before], len);
				assert_memory_equal(res.payloads[before], src, len);
				delivered++;
			} else {
				/* the receiver's cipher must stay in step: read, drop */
				unsigned before = res.n_msgs;
				feed(&res, NULL, wire, n, SIZE_MAX);
				assert_int_equal(res.n_msgs, before + 1);
				free(res.payloads[--res.n_msgs]);
			}
		}
	}
	assert_true(delivered > 20);
	assert_int_equal(res.n_bad, 0);
	free(src);
	free(inplace);
	free(want);
	free(wire);
	net_v2_release(&copy);
	side_free(&ini);
	side_free(&res);
}

/* Across rekeys (every 224 packets and lengths), both ways. */
static void test_rekeys(void **state)
{
	(void)state;
	struct side ini, res;
	pair(&ini, &res, -1, -1);
	exchange(&ini, &res, SIZE_MAX);
	uint8_t b[32];
	for (unsigned i = 0; i < 500; i++) {
		memset(b, (int)i, sizeof(b));
		send_msg(&ini, &res, "inv", b, i % 32, false, SIZE_MAX);
		send_msg(&res, &ini, "tx", b, 32 - i % 32, i % 5 == 0, SIZE_MAX);
		assert_int_equal(res.last, NET_V2_NEED);
		assert_int_equal(ini.last, NET_V2_NEED);
		/* keep the message arrays small */
		for (unsigned k = 0; k < res.n_msgs; k++)
			free(res.payloads[k]);
		for (unsigned k = 0; k < ini.n_msgs; k++)
			free(ini.payloads[k]);
		assert_int_equal(res.n_msgs, 1);
		assert_int_equal(ini.n_msgs, i % 5 == 0 ? 0 : 1);
		res.n_msgs = ini.n_msgs = 0;
	}
	side_free(&ini);
	side_free(&res);
}

static void v1_prefix(uint8_t b[24])
{
	memset(b, 0, 24);
	proto_put_le32(b, REGTEST_MAGIC);
	memcpy(b + 4, "version", 7);
}

/* A responder hands a v1 peer to the v1 transport after 16 bytes, byte by byte. */
static void test_responder_detects_v1(void **state)
{
	(void)state;
	struct side res;
	memset(&res, 0, sizeof(res));
	assert_int_equal(net_v2_init(&res.v, false, REGTEST_MAGIC, NULL, NULL, NULL, -1), 0);
	uint8_t b[24];
	v1_prefix(b);
	for (size_t i = 1; i < 16; i++) {
		struct net_v2_step st;
		net_v2_recv(&res.v, b, (uint32_t)i, &st);
		assert_int_equal(st.ev, NET_V2_NEED);
		assert_int_equal(st.need, 16);
		assert_int_equal(res.v.out_len, 0); /* nothing sent while detecting */
	}
	struct net_v2_step st;
	net_v2_recv(&res.v, b, 24, &st);
	assert_int_equal(st.ev, NET_V2_TO_V1);
	assert_int_equal(st.used, 0);
	assert_int_equal(res.v.rs, NET_V2_RECV_V1);
	assert_int_equal(res.v.ss, NET_V2_SEND_V1);
	side_free(&res);

	/* The 16th byte differs: v2, and our key goes out. */
	memset(&res, 0, sizeof(res));
	assert_int_equal(net_v2_init(&res.v, false, REGTEST_MAGIC, NULL, NULL, NULL, 10), 0);
	b[15] = 1;
	net_v2_recv(&res.v, b, 16, &st);
	assert_int_equal(st.ev, NET_V2_USED);
	assert_int_equal(res.v.rs, NET_V2_RECV_KEY);
	assert_int_equal(res.v.out_len, 64 + 10);
	side_free(&res);
}

/* A v1 version of another network (bytes 4-16 match, the magic not). */
static void test_other_network_v1(void **state)
{
	(void)state;
	struct side res;
	memset(&res, 0, sizeof(res));
	assert_int_equal(net_v2_init(&res.v, false, REGTEST_MAGIC, NULL, NULL, NULL, -1), 0);
	uint8_t b[24];
	v1_prefix(b);
	proto_put_le32(b, proto_params(PROTO_NET_MAIN)->magic);
	feed(&res, NULL, b, sizeof(b), SIZE_MAX);
	assert_int_equal(res.last, NET_V2_ERROR);
	assert_string_equal(res.why, "v2 handshake: v1 peer with wrong network magic");
	side_free(&res);
}

/* A truncated key: the responder waits for the rest (the peer's timeout ends it). */
static void test_truncated_key(void **state)
{
	(void)state;
	struct side ini, res;
	pair(&ini, &res, 0, 0);
	feed(&res, NULL, ini.v.out, 63, SIZE_MAX);
	assert_int_equal(res.last, NET_V2_NEED);
	assert_int_equal(res.v.rs, NET_V2_RECV_KEY);
	assert_false(res.v.cipher.ready);
	side_free(&ini);
	side_free(&res);
}

/* 4,095 bytes of garbage and the terminator pass; 4,096 without one fail. */
static void test_garbage_limit(void **state)
{
	(void)state;
	struct side ini, res;
	pair(&ini, &res, BIP324_MAX_GARBAGE_LEN, 0);
	exchange(&ini, &res, 1000);
	assert_int_equal(res.v.rs, NET_V2_RECV_APP);
	assert_int_equal(res.v.recv_garbage, BIP324_MAX_GARBAGE_LEN);
	side_free(&ini);
	side_free(&res);

	pair(&ini, &res, 0, 0);
	uint8_t key[64];
	memcpy(key, ini.v.out, 64);
	net_v2_out_done(&ini.v);
	feed(&res, NULL, key, sizeof(key), SIZE_MAX);
	assert_int_equal(res.v.rs, NET_V2_RECV_GARBTERM);
	uint8_t junk[4096 + 16];
	randombytes_buf(junk, sizeof(junk));
	feed(&res, NULL, junk, 4096 + 15 - 1, 512);
	assert_int_equal(res.last, NET_V2_NEED);
	feed(&res, NULL, junk, 1, 1);
	assert_int_equal(res.last, NET_V2_ERROR);
	assert_string_equal(res.why, "v2 handshake: no garbage terminator within 4095 bytes");
	side_free(&ini);
	side_free(&res);
}

/* A flipped bit in a packet's tag (or anywhere) disconnects. */
static void test_flipped_tag(void **state)
{
	(void)state;
	for (size_t flip = 3; flip < 3 + 1 + 4 + 16; flip++) {
		struct side ini, res;
		pair(&ini, &res, -1, -1);
		exchange(&ini, &res, SIZE_MAX);
		uint8_t p[1 + 4 + BIP324_EXPANSION];
		assert_int_equal(
		    net_v2_encrypt(&ini.v, "ping", (const uint8_t *)"abcd", 4, false, p), 0);
		p[flip] ^= 0x20;
		feed(&res, NULL, p, sizeof(p), SIZE_MAX);
		assert_int_equal(res.last, NET_V2_ERROR);
		assert_string_equal(res.why, "v2 packet authentication failed");
		assert_int_equal(res.n_msgs, 0);
		side_free(&ini);
		side_free(&res);
	}
}

/* A length over the largest contents disconnects before anything is buffered. */
static void test_oversized_length(void **state)
{
	(void)state;
	static const uint32_t lens[] = {NET_V2_MAX_CONTENTS, NET_V2_MAX_CONTENTS + 1, 0xffffff};
	for (size_t i = 0; i < 3; i++) {
		struct side ini, res;
		pair(&ini, &res, -1, -1);
		exchange(&ini, &res, SIZE_MAX);
		uint8_t l[3] = {(uint8_t)lens[i], (uint8_t)(lens[i] >> 8),
		                (uint8_t)(lens[i] >> 16)};
		bip324_fschacha20_crypt(&ini.v.cipher.send_l, l, l, 3);
		feed(&res, NULL, l, 3, SIZE_MAX);
		if (i == 0) {
			assert_int_equal(res.last, NET_V2_NEED);
			assert_int_equal(res.v.len, NET_V2_MAX_CONTENTS);
		} else {
			assert_int_equal(res.last, NET_V2_ERROR);
			assert_string_equal(res.why, "v2 packet too large");
		}
		side_free(&ini);
		side_free(&res);
	}
}

/* Packets with no valid type are dropped, the connection stays. */
static void test_invalid_types(void **state)
{
	(void)state;
	struct side ini, res;
	pair(&ini, &res, -1, -1);
	exchange(&ini, &res, SIZE_MAX);
	static const uint8_t contents[][14] = {
	    {29},                                          /* assigned by BIP324, unknown to Core */
	    {255},                                         /* past the table */
	    {0, 'p', 'i', 'n', 'g'},                       /* long form cut short (5 bytes) */
	    {0, 'p', 'i', 0, 'g', 0, 0, 0, 0, 0, 0, 0, 0}, /* a byte after the NUL */
	    {0, 'p', 0x01, 'n', 'g', 0, 0, 0, 0, 0, 0, 0, 0}, /* not printable */
	};
	static const size_t lens[] = {1, 1, 5, 13, 13};
	for (size_t i = 0; i < 5; i++) {
		uint8_t p[14 + BIP324_EXPANSION];
		bip324_cipher_encrypt(&ini.v.cipher, contents[i], lens[i], NULL, 0, false, p);
		feed(&res, NULL, p, lens[i] + BIP324_EXPANSION, SIZE_MAX);
		assert_int_equal(res.n_bad, i + 1);
	}
	/* Empty contents too. */
	uint8_t p[BIP324_EXPANSION];
	bip324_cipher_encrypt(&ini.v.cipher, NULL, 0, NULL, 0, false, p);
	feed(&res, NULL, p, sizeof(p), SIZE_MAX);
	assert_int_equal(res.n_bad, 6);
	send_msg(&ini, &res, "pong", (const uint8_t *)"12345678", 8, false, SIZE_MAX);
	assert_int_equal(res.n_msgs, 1);
	assert_string_equal(res.types[0], "pong");
	side_free(&ini);
	side_free(&res);
}

/* Core's ShouldReconnectV1: we dialled, sent our key, and got nothing. */
static void test_should_reconnect_v1(void **state)
{
	(void)state;
	struct side ini, res;
	pair(&ini, &res, 0, -1);
	assert_false(net_v2_should_reconnect_v1(&ini.v, 0)); /* nothing sent yet */
	net_v2_out_done(&ini.v);
	assert_true(net_v2_should_reconnect_v1(&ini.v, 0));
	assert_false(net_v2_should_reconnect_v1(&ini.v, 1));
	assert_false(net_v2_should_reconnect_v1(&res.v, 0)); /* responders never */
	side_free(&ini);
	side_free(&res);
}

/* ---- a fixture peer as responder -------------------------------------- */

/* Read what peerd sent peer `id` into s's input and run s on it. */
static void read_into(struct tf *t, struct peer *p, struct side *s)
{
	uint8_t b[65536];
	for (;;) {
		ssize_t n = recv(t->remote[p->id], b, sizeof(b), MSG_DONTWAIT);
		if (n <= 0)
			break;
		append(s, b, (size_t)n);
	}
	run(s, NULL);
}

/* A v2 connection in to the fixture, through its handshake. */
static struct peer *v2_conn(struct tf *t, struct side *ini, size_t chunk)
{
	struct peer *p = tf_new_conn(t, TF_ADDR);
	net_v2_start(p);
	assert_non_null(p->v2);
	assert_string_equal(net_v2_transport_name(p), "detecting");
	memset(ini, 0, sizeof(*ini));
	assert_int_equal(net_v2_init(&ini->v, true, t->d->params->magic, NULL, NULL, NULL, -1), 0);
	tf_feed(p, ini->v.out, ini->v.out_len, chunk);
	net_v2_out_done(&ini->v);
	assert_string_equal(net_v2_transport_name(p), "v2");
	read_into(t, p, ini);
	assert_int_equal(ini->v.ss, NET_V2_SEND_READY);
	/* our terminator and version packet */
	uint8_t b[BIP324_GARBAGE_TERMINATOR_LEN + BIP324_EXPANSION];
	memcpy(b, ini->v.out, ini->v.out_len);
	size_t n = ini->v.out_len;
	net_v2_out_done(&ini->v);
	tf_feed(p, b, n, chunk);
	return p;
}

static void feed_msg(struct peer *p, struct side *ini, const char *type, const uint8_t *payload,
                     size_t len, size_t chunk)
{
	size_t n = net_v2_wire_len(type, len);
	uint8_t *b = malloc(n);
	assert_int_equal(net_v2_encrypt(&ini->v, type, payload, len, false, b), 0);
	tf_feed(p, b, n, chunk);
	free(b);
}

static bool got(const struct side *s, const char *type)
{
	for (unsigned i = 0; i < s->n_msgs; i++)
		if (strcmp(s->types[i], type) == 0)
			return true;
	return false;
}

/* Read what p wrote, running the loop so queued writes go on, until s
 * has `want` messages or nothing moves any more. */
static void read_all(struct tf *t, struct peer *p, struct side *s, unsigned want)
{
	for (int idle = 0; idle < 50 && s->n_msgs < want;) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		size_t before = s->in_len;
		unsigned msgs = s->n_msgs;
		read_into(t, p, s);
		idle = s->in_len == before && s->n_msgs == msgs ? idle + 1 : 0;
	}
}

/*
 * Sends over v2: a small message is encrypted on the stack and written
 * with no allocation (as v1's frames); a block given away
 * (peer_send_owned) is encrypted in place and written between the
 * packet's head and tag, past what the socket takes at once.
 */
static void test_peer_v2_sends(void **state)
{
	struct tf *t = *state;
	struct side ini;
	struct peer *p = v2_conn(t, &ini, SIZE_MAX);
	unsigned n0 = ini.n_msgs;
	uint8_t fr[PROTO_HEADER_SIZE + 8];
	struct proto_writer w;
	proto_writer_init_fixed(&w, fr, sizeof(fr));
	proto_frame_write(&w, t->d->params->magic, "ping", (const uint8_t *)"abcdefgh", 8);
	assert_int_equal(w.err, 0);
	uint64_t a0 = base_alloc_count();
	peer_send_frame(p, PROTO_CMD_PING, fr, sizeof(fr));
	assert_int_equal(base_alloc_count() - a0, 0);
	size_t big = 3000000;
	uint8_t *block = xmalloc(big);
	assert_non_null(block);
	for (size_t i = 0; i < big; i++)
		block[i] = (uint8_t)(i * 13 + (i >> 16));
	uint8_t *want = malloc(big);
	memcpy(want, block, big);
	uint8_t prefix[16] = {0};
	proto_put_le32(prefix, t->d->params->magic);
	memcpy(prefix + 4, "block", 5);
	peer_send_owned(p, PROTO_CMD_BLOCK, prefix, block, big, 0);
	assert_true(p->sendq_reqs > 0); /* the socket did not take 3 MB at once */
	peer_send_frame(p, PROTO_CMD_PING, fr, sizeof(fr));
	read_all(t, p, &ini, n0 + 3);
	assert_int_equal(ini.n_msgs, n0 + 3);
	assert_string_equal(ini.types[n0], "ping");
	assert_memory_equal(ini.payloads[n0], "abcdefgh", 8);
	assert_string_equal(ini.types[n0 + 1], "block");
	assert_int_equal(ini.lens[n0 + 1], big);
	assert_memory_equal(ini.payloads[n0 + 1], want, big);
	assert_string_equal(ini.types[n0 + 2], "ping");
	assert_int_equal(p->sendq_reqs, 0);
	free(want);
	side_free(&ini);
}

static void test_peer_v2_handshake(void **state)
{
	struct tf *t = *state;
	static const size_t chunks[] = {1, 7, SIZE_MAX};
	for (size_t c = 0; c < 3; c++) {
		struct side ini;
		struct peer *p = v2_conn(t, &ini, chunks[c]);
		struct proto_msg m;
		proto_msg_init(&m);
		tf_version_msg(&m, "/v2peer:1.0/", 7, 0x1122334455667788ull + c);
		struct proto_writer w;
		proto_writer_init(&w);
		tf_msg_frame(t, &w, &m);
		feed_msg(p, &ini, "version", w.buf + PROTO_HEADER_SIZE, w.len - PROTO_HEADER_SIZE,
		         chunks[c]);
		feed_msg(p, &ini, "wtxidrelay", NULL, 0, chunks[c]);
		assert_true(p->got_version);
		assert_true(p->wtxidrelay);
		assert_string_equal(p->subver, "/v2peer:1.0/");
		read_into(t, p, &ini);
		assert_int_equal(ini.last, NET_V2_NEED);
		assert_true(got(&ini, "version") && got(&ini, "verack") && got(&ini, "wtxidrelay"));
		/* our version says NODE_P2P_V2 */
		assert_true(ini.lens[0] > 12);
		assert_string_equal(ini.types[0], "version");
		uint64_t services = 0;
		memcpy(&services, ini.payloads[0] + 4, 8);
		assert_true(services & PROTO_NODE_P2P_V2);
		feed_msg(p, &ini, "verack", NULL, 0, chunks[c]);
		assert_int_equal(p->state, PEER_ACTIVE);
		/* getpeerinfo's session id is the one both sides hold */
		char hex[65], want[65];
		net_v2_session_id_hex(p, hex);
		for (int i = 0; i < 32; i++)
			snprintf(want + 2 * i, 3, "%02x", ini.v.cipher.session_id[i]);
		assert_string_equal(hex, want);
		/* a ping answered by a pong, counted as received messages */
		uint64_t before = t->d->stats.msg[PROTO_CMD_PING].recv_count;
		feed_msg(p, &ini, "ping", (const uint8_t *)"87654321", 8, chunks[c]);
		assert_int_equal(t->d->stats.msg[PROTO_CMD_PING].recv_count, before + 1);
		read_into(t, p, &ini);
		assert_true(got(&ini, "pong"));
		proto_writer_release(&w);
		proto_msg_release(&m);
		side_free(&ini);
	}
}

/* v1 on the same port: magic and "version" are served as v1. */
static void test_peer_v1_on_v2_port(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	net_v2_start(p);
	struct proto_msg m;
	proto_msg_init(&m);
	tf_version_msg(&m, "/v1peer:1.0/", 7, 42);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_msg_frame(t, &w, &m);
	tf_frame(t, &w, "wtxidrelay", NULL, 0);
	tf_feed(p, w.buf, w.len, 5);
	assert_true(p->got_version);
	assert_null(p->v2); /* its v2 state is freed once it is v1 */
	assert_string_equal(net_v2_transport_name(p), "v1");
	struct tf_sent s;
	tf_read_sent(t, p->id, &s); /* v1 frames, every one well formed */
	assert_int_equal(s.count[PROTO_CMD_VERSION], 1);
	assert_int_equal(s.count[PROTO_CMD_VERACK], 1);
	tf_sent_free(&s);
	char hex[65];
	net_v2_session_id_hex(p, hex);
	assert_string_equal(hex, "");
	proto_writer_release(&w);
	proto_msg_release(&m);
}

static void test_peer_hostile(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	/* 4,096 bytes of garbage */
	struct side ini;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	net_v2_start(p);
	memset(&ini, 0, sizeof(ini));
	assert_int_equal(net_v2_init(&ini.v, true, t->d->params->magic, NULL, NULL, NULL, 0), 0);
	uint8_t junk[64 + 4096 + 16];
	memcpy(junk, ini.v.out, 64);
	randombytes_buf(junk + 64, sizeof(junk) - 64);
	tf_feed(p, junk, sizeof(junk), 1000);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_true(tf_log_contains(t, "disconnected: v2 handshake: no garbage terminator"));
	side_free(&ini);

	/* a flipped tag */
	p = v2_conn(t, &ini, SIZE_MAX);
	uint8_t b[1 + 8 + BIP324_EXPANSION];
	assert_int_equal(net_v2_encrypt(&ini.v, "ping", (const uint8_t *)"12345678", 8, false, b),
	                 0);
	b[sizeof(b) - 1] ^= 1;
	tf_feed(p, b, sizeof(b), SIZE_MAX);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_true(tf_log_contains(t, "disconnected: v2 packet authentication failed"));
	side_free(&ini);

	/* an oversized length */
	p = v2_conn(t, &ini, SIZE_MAX);
	uint8_t l[3] = {0xff, 0xff, 0xff};
	bip324_fschacha20_crypt(&ini.v.cipher.send_l, l, l, 3);
	tf_feed(p, l, 3, SIZE_MAX);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_true(tf_log_contains(t, "disconnected: v2 packet too large"));
	side_free(&ini);

	/* a short id message over 4,000,000 payload bytes: v1's limit holds */
	p = v2_conn(t, &ini, SIZE_MAX);
	size_t big = PROTO_MAX_MESSAGE + 12;
	uint8_t *payload = calloc(1, big);
	feed_msg(p, &ini, "block", payload, big, SIZE_MAX);
	free(payload);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_true(tf_log_contains(t, "disconnected: message length over 4000000"));
	side_free(&ini);
	assert_int_equal(tf_script_in_use(), in_use);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_handshake_and_messages),
	    cmocka_unit_test(test_rekeys),
	    cmocka_unit_test(test_responder_detects_v1),
	    cmocka_unit_test(test_other_network_v1),
	    cmocka_unit_test(test_truncated_key),
	    cmocka_unit_test(test_garbage_limit),
	    cmocka_unit_test(test_flipped_tag),
	    cmocka_unit_test(test_oversized_length),
	    cmocka_unit_test(test_invalid_types),
	    cmocka_unit_test(test_seal_as_encrypt),
	    cmocka_unit_test(test_should_reconnect_v1),
	    cmocka_unit_test_setup_teardown(test_peer_v2_handshake, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_peer_v2_sends, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_peer_v1_on_v2_port, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_peer_hostile, tf_setup, tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
