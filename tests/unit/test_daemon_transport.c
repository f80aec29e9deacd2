/*
 * tests/unit/test_daemon_transport.c: v1 framing on a peer's receive
 * buffer (daemon/net/transport.c), driven in-process through the same alloc
 * and read callbacks libuv calls, with byte chunks of the test's choosing,
 * and on through the message event the wiring registers to p2p/'s dispatch
 * (daemon/p2p/dispatch.c: the unknown commands, the handshake gate,
 * decoding and count limits), as in peerd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* ---- frames ------------------------------------------------------------ */

static void frame_feefilter(struct tf *t, struct proto_writer *w, int64_t rate)
{
	uint8_t b[8];
	proto_put_le64(b, (uint64_t)rate);
	tf_frame(t, w, "feefilter", b, sizeof(b));
}

static void frame_ping(struct tf *t, struct proto_writer *w, uint64_t nonce)
{
	uint8_t b[8];
	proto_put_le64(b, nonce);
	tf_frame(t, w, "ping", b, sizeof(b));
}

/* An inv payload of n entries of one type, hashes tf_hash(tag, i). */
static void inv_payload(struct proto_writer *pw, uint32_t type, uint32_t n, uint8_t tag)
{
	proto_write_compact(pw, n);
	for (uint32_t i = 0; i < n; i++) {
		struct proto_hash h = tf_hash(tag, i);
		proto_write_u32le(pw, type);
		proto_write_hash(pw, &h);
	}
	assert_int_equal(pw->err, 0);
}

static void frame_inv(struct tf *t, struct proto_writer *w, uint32_t type, uint32_t n, uint8_t tag)
{
	struct proto_writer pw;
	proto_writer_init(&pw);
	inv_payload(&pw, type, n, tag);
	tf_frame(t, w, "inv", pw.buf, pw.len);
	proto_writer_release(&pw);
}

/* A frame of an unknown command with `len` payload bytes. */
static void frame_unknown(struct tf *t, struct proto_writer *w, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	assert_non_null(b);
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 7);
	tf_frame(t, w, "peerdtest", b, len);
	free(b);
}

/* One idle script buffer, so the next get is a hit, not an allocation. */
static void warm_freelist(void)
{
	void *b = proto_freelist_get(PROTO_FREELIST_SCRIPT);
	assert_non_null(b);
	proto_freelist_put(PROTO_FREELIST_SCRIPT, b);
}

static uint64_t recv_count(struct tf *t, enum proto_cmd cmd)
{
	return t->d->stats.msg[cmd].recv_count;
}

static void assert_idle(struct peer *p, size_t in_use_before)
{
	if (p->rx.buf)
		fail_msg("rx buffer still held: cap %u start %u end %u pooled %d", p->rx.cap,
		         p->rx.start, p->rx.end, p->rx.pooled);
	if (tf_script_in_use() != in_use_before)
		fail_msg("script free list in use %zu, was %zu before", tf_script_in_use(),
		         in_use_before);
}

/* ---- reassembly ---------------------------------------------------------- */

/*
 * feefilter, an inv whose payload (505 bytes) needs an exactly-sized
 * buffer, ping and sendheaders, split into two reads at every byte
 * boundary, then fed one byte per read: each message is handled exactly
 * once, the ping answered once, and the buffer given back every time.
 */
static void test_split_every_boundary(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	frame_feefilter(t, &w, 1234);
	frame_inv(t, &w, PROTO_INV_BLOCK, 14, 0x5a);
	frame_ping(t, &w, 0x0102030405060708ull);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	assert_true(w.len > PROTO_SCRIPT_BUF_SIZE);
	size_t in_use = tf_script_in_use();

	for (size_t k = 0; k <= w.len; k++) {
		bool bytewise = k == w.len;
		uint64_t ff = recv_count(t, PROTO_CMD_FEEFILTER),
		         inv = recv_count(t, PROTO_CMD_INV), ping = recv_count(t, PROTO_CMD_PING),
		         sh = recv_count(t, PROTO_CMD_SENDHEADERS), blocks = d->stats.inv_block,
		         large = d->stats.rx_large_buffers;
		p->feefilter = 0;
		p->sendheaders = false;
		if (bytewise) {
			assert_int_equal(tf_feed(p, w.buf, w.len, 1), w.len);
		} else {
			assert_int_equal(tf_feed(p, w.buf, k, SIZE_MAX), k);
			assert_int_equal(tf_feed(p, w.buf + k, w.len - k, SIZE_MAX), w.len - k);
		}
		if (p->state == PEER_CLOSING)
			fail_msg("split at %zu: peer closed", k);
		if (recv_count(t, PROTO_CMD_FEEFILTER) != ff + 1 ||
		    recv_count(t, PROTO_CMD_INV) != inv + 1 ||
		    recv_count(t, PROTO_CMD_PING) != ping + 1 ||
		    recv_count(t, PROTO_CMD_SENDHEADERS) != sh + 1)
			fail_msg(
			    "split at %zu: handled feefilter %llu inv %llu ping %llu sendheaders "
			    "%llu times, expected once each",
			    k, (unsigned long long)(recv_count(t, PROTO_CMD_FEEFILTER) - ff),
			    (unsigned long long)(recv_count(t, PROTO_CMD_INV) - inv),
			    (unsigned long long)(recv_count(t, PROTO_CMD_PING) - ping),
			    (unsigned long long)(recv_count(t, PROTO_CMD_SENDHEADERS) - sh));
		assert_int_equal(p->feefilter, 1234);
		assert_true(p->sendheaders);
		assert_int_equal(d->stats.inv_block, blocks + 14);
		/* The inv never fits a free-list buffer: one exact buffer each time. */
		assert_int_equal(d->stats.rx_large_buffers, large + 1);
		assert_idle(p, in_use);
		struct tf_sent sent;
		tf_read_sent(t, p->id, &sent);
		if (sent.count[PROTO_CMD_PONG] != 1)
			fail_msg("split at %zu: %u pongs sent, expected 1", k,
			         sent.count[PROTO_CMD_PONG]);
		tf_sent_free(&sent);
	}
	for (int e = 1; e < STATS_N_ERRS; e++)
		assert_int_equal(d->stats.decode_err[e], 0);
	assert_int_equal(p->decode_errors, 0);
	struct proto_hash last = tf_hash(0x5a, 13);
	assert_true(
	    hset_contains(p->p2p->known_inv, daemon_fingerprint(d, last.b, sizeof(last.b))));
	proto_writer_release(&w);
}

/* ---- closing on the first bytes ------------------------------------------ */

static void test_bad_magic_first_byte(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	/* A TLS ClientHello: wrong from its first byte. */
	static const uint8_t tls[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc};
	struct peer *p = tf_new_conn(t, TF_ADDR);
	assert_int_equal(tf_feed(p, tls, sizeof(tls), 1), 1);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_int_equal(tf_err_count(t, PROTO_EMAGIC), 1);
	assert_int_equal(t->d->stats.v2_probes, 1);
	assert_idle(p, in_use);
	assert_true(tf_log_contains(t, "first bytes are not the network magic"));
}

static void test_bad_magic_fourth_byte(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	uint8_t hdr[PROTO_HEADER_SIZE] = {0};
	proto_put_le32(hdr, t->d->params->magic);
	hdr[3] ^= 0x01;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	assert_int_equal(tf_feed(p, hdr, 3, 1), 3);
	assert_int_equal(p->state, PEER_HANDSHAKE);
	assert_int_equal(tf_err_count(t, PROTO_EMAGIC), 0);
	assert_int_equal(tf_feed(p, hdr + 3, 1, 1), 1);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_int_equal(tf_err_count(t, PROTO_EMAGIC), 1);
	assert_idle(p, in_use);
}

static void test_bad_magic_after_handshake(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	/* Then mainnet's magic on a regtest connection, in one read. */
	proto_frame_write(&w, proto_params(PROTO_NET_MAIN)->magic, "sendheaders", NULL, 0);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_int_equal(recv_count(t, PROTO_CMD_SENDHEADERS), 1);
	assert_int_equal(tf_err_count(t, PROTO_EMAGIC), 1);
	/* A v2 probe is only counted before the version message. */
	assert_int_equal(t->d->stats.v2_probes, 0);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

/* ---- lengths ------------------------------------------------------------ */

static void header_for(struct tf *t, uint8_t hdr[PROTO_HEADER_SIZE], const char *cmd, uint32_t len)
{
	memset(hdr, 0, PROTO_HEADER_SIZE);
	proto_put_le32(hdr, t->d->params->magic);
	memcpy(hdr + 4, cmd, strlen(cmd));
	proto_put_le32(hdr + 16, len);
}

static void test_oversize_closes_before_allocating(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	for (int split = 0; split < 2; split++) {
		struct peer *p = tf_peer(t, true, TF_ADDR);
		uint8_t hdr[PROTO_HEADER_SIZE];
		header_for(t, hdr, "tx", PROTO_MAX_MESSAGE + 1);
		size_t first = split ? 17 : 0; /* the length field arrives in two reads */
		if (first)
			assert_int_equal(tf_feed(p, hdr, first, SIZE_MAX), first);
		/* Deliver the rest by hand so the count is taken after the
		 * buffer for this read exists, as libuv has it. */
		uv_buf_t b;
		transport_alloc_cb((uv_handle_t *)&p->tcp, 65536, &b);
		assert_true(b.len >= sizeof(hdr) - first);
		memcpy(b.base, hdr + first, sizeof(hdr) - first);
		uint64_t allocs = base_alloc_count();
		transport_read_cb((uv_stream_t *)&p->tcp, (ssize_t)(sizeof(hdr) - first), &b);
		assert_int_equal(p->state, PEER_CLOSING);
		if (base_alloc_count() != allocs)
			fail_msg("split %d: %llu allocations after an oversize header", split,
			         (unsigned long long)(base_alloc_count() - allocs));
		assert_int_equal(tf_err_count(t, PROTO_EOVERSIZE), (uint64_t)split + 1);
		assert_int_equal(t->d->stats.rx_large_buffers, 0);
		assert_idle(p, in_use);
	}
	assert_true(tf_log_contains(t, "message length over 4000000"));
}

/* The largest message allowed gets one buffer of exactly its size. */
static void test_max_message_exact_buffer(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	frame_unknown(t, &w, PROTO_MAX_MESSAGE);
	warm_freelist();
	uint64_t allocs = base_alloc_count();
	assert_int_equal(tf_feed(p, w.buf, PROTO_HEADER_SIZE + 100, SIZE_MAX),
	                 PROTO_HEADER_SIZE + 100);
	assert_int_equal(base_alloc_count() - allocs, 1);
	assert_non_null(p->rx.buf);
	assert_false(p->rx.pooled);
	assert_int_equal(p->rx.cap, PROTO_HEADER_SIZE + PROTO_MAX_MESSAGE);
	/* The free-list buffer went back as soon as the data moved. */
	assert_int_equal(tf_script_in_use(), in_use);
	assert_int_equal(
	    tf_feed(p, w.buf + PROTO_HEADER_SIZE + 100, w.len - PROTO_HEADER_SIZE - 100, SIZE_MAX),
	    w.len - PROTO_HEADER_SIZE - 100);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(recv_count(t, PROTO_CMD_UNKNOWN), 1);
	assert_int_equal(tf_err_count(t, PROTO_EUNKNOWN), 1);
	assert_int_equal(base_alloc_count() - allocs, 1);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

/*
 * 488 payload bytes fill the 512-byte free-list buffer exactly; 489 need an
 * exactly-sized one, and reads into it stop at the message's end, so the
 * message after it starts a fresh free-list buffer.
 */
static void test_exact_buffer_boundary(void **state)
{
	struct tf *t = *state;
	struct daemon *d = t->d;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	const size_t fits = PROTO_SCRIPT_BUF_SIZE - PROTO_HEADER_SIZE;
	assert_int_equal(fits, 488);

	struct proto_writer w;
	proto_writer_init(&w);
	frame_unknown(t, &w, fits);
	tf_feed(p, w.buf, w.len - 1, SIZE_MAX);
	assert_true(p->rx.pooled);
	assert_int_equal(p->rx.cap, PROTO_SCRIPT_BUF_SIZE);
	tf_feed(p, w.buf + w.len - 1, 1, SIZE_MAX);
	assert_int_equal(d->stats.rx_large_buffers, 0);
	assert_int_equal(recv_count(t, PROTO_CMD_UNKNOWN), 1);
	assert_idle(p, in_use);

	w.len = 0;
	frame_unknown(t, &w, fits + 1);
	frame_feefilter(t, &w, 777);
	/* Header plus 100 bytes: the header alone decides the buffer. */
	tf_feed(p, w.buf, PROTO_HEADER_SIZE + 100, SIZE_MAX);
	assert_false(p->rx.pooled);
	assert_int_equal(p->rx.cap, PROTO_HEADER_SIZE + fits + 1);
	assert_int_equal(d->stats.rx_large_buffers, 1);
	/* The rest, offered in one go: the exact buffer takes its message only. */
	uv_buf_t b;
	transport_alloc_cb((uv_handle_t *)&p->tcp, 65536, &b);
	assert_int_equal(b.len, fits + 1 - 100);
	tf_feed(p, w.buf + PROTO_HEADER_SIZE + 100, w.len - PROTO_HEADER_SIZE - 100, SIZE_MAX);
	assert_int_equal(recv_count(t, PROTO_CMD_UNKNOWN), 2);
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), 1);
	assert_int_equal(p->feefilter, 777);
	assert_int_equal(d->stats.rx_large_buffers, 1);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

/* ---- dropped messages ---------------------------------------------------- */

static void test_bad_checksum_dropped(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	frame_feefilter(t, &w, 5000);
	w.buf[PROTO_HEADER_SIZE] ^= 0xff; /* payload no longer matches the checksum */
	tf_frame(t, &w, "sendheaders", NULL, 0);
	frame_feefilter(t, &w, 6000);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(tf_err_count(t, PROTO_ECHECKSUM), 1);
	/* The bad one was not applied; both after it were. */
	assert_int_equal(p->feefilter, 6000);
	assert_true(p->sendheaders);
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), 2);
	assert_int_equal(recv_count(t, PROTO_CMD_SENDHEADERS), 1);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

static void test_bad_command_dropped(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	w.buf[6] = 0x01; /* "se\x01dheaders": not printable */
	tf_frame(t, &w, "sendheaders", NULL, 0);
	tf_feed(p, w.buf, w.len, 5);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(tf_err_count(t, PROTO_ECOMMAND), 1);
	assert_int_equal(recv_count(t, PROTO_CMD_UNKNOWN), 1);
	assert_int_equal(recv_count(t, PROTO_CMD_SENDHEADERS), 1);
	assert_int_equal(p->msgbytes->recv[PROTO_CMD_UNKNOWN], PROTO_HEADER_SIZE);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

static void test_undecodable_dropped(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	static const uint8_t seven[7] = {1, 2, 3, 4, 5, 6, 7};
	tf_frame(t, &w, "feefilter", seven, sizeof(seven)); /* one byte short */
	frame_feefilter(t, &w, 42);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_ACTIVE);
	assert_int_equal(tf_err_count(t, PROTO_ETRUNC), 1);
	assert_int_equal(p->decode_errors, 1);
	assert_int_equal(p->feefilter, 42);
	assert_int_equal(t->d->stats.misbehaving, 0);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

/* Core's gate: before version nothing else is handled (but all is counted). */
static void test_gate_before_version(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	frame_feefilter(t, &w, 99);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_HANDSHAKE);
	assert_false(p->sendheaders);
	assert_int_equal(p->feefilter, 0);
	assert_int_equal(recv_count(t, PROTO_CMD_SENDHEADERS), 1);
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), 1);
	proto_writer_release(&w);
}

/* version then verack through the receive path: the replies Core sends. */
static void test_handshake_through_transport(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_new_conn(t, TF_ADDR);
	struct proto_msg m;
	proto_msg_init(&m);
	tf_version_msg(&m, "/test\x01peer:1.0/", 7, 0x1122334455667788ull);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_msg_frame(t, &w, &m);
	tf_frame(t, &w, "wtxidrelay", NULL, 0);
	tf_feed(p, w.buf, w.len, 3);
	assert_true(p->got_version);
	assert_true(p->wtxidrelay);
	assert_int_equal(p->state, PEER_HANDSHAKE);
	assert_int_equal(p->start_height, 7);
	/* The control byte is dropped from the user agent. */
	assert_string_equal(p->subver, "/testpeer:1.0/");
	struct tf_sent s;
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_VERSION], 1);
	assert_int_equal(s.count[PROTO_CMD_VERACK], 1);
	assert_int_equal(s.count[PROTO_CMD_WTXIDRELAY], 1);
	assert_int_equal(s.count[PROTO_CMD_SENDADDRV2], 1);
	tf_sent_free(&s);

	w.len = 0;
	tf_frame(t, &w, "verack", NULL, 0);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_ACTIVE);
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_SENDCMPCT], 1);
	assert_int_equal(s.count[PROTO_CMD_PING], 1);
	assert_int_equal(s.count[PROTO_CMD_FEEFILTER], 1);
	tf_sent_free(&s);

	/* wtxidrelay after verack is a protocol violation: disconnect. */
	w.len = 0;
	tf_frame(t, &w, "wtxidrelay", NULL, 0);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_CLOSING);
	proto_writer_release(&w);
	proto_msg_release(&m);
}

/* A handler disconnects mid-buffer: what follows is not handled, the buffer goes back. */
static void test_disconnect_mid_buffer(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	tf_frame(t, &w, "mempool", NULL, 0);
	tf_frame(t, &w, "sendheaders", NULL, 0);
	tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_false(p->sendheaders);
	assert_int_equal(recv_count(t, PROTO_CMD_SENDHEADERS), 0);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

/* ---- the buffer's life ---------------------------------------------------- */

static void test_freelist_buffer_returned(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	assert_null(p->rx.buf);
	struct proto_writer w;
	proto_writer_init(&w);
	frame_feefilter(t, &w, 1);
	frame_feefilter(t, &w, 2);
	size_t one = w.len / 2;
	/* Half a message: the buffer is held. */
	tf_feed(p, w.buf, 10, SIZE_MAX);
	assert_non_null(p->rx.buf);
	assert_true(p->rx.pooled);
	assert_int_equal(tf_script_in_use(), in_use + 1);
	/* One and a half: the tail moves to the front, still held. */
	tf_feed(p, w.buf + 10, one, SIZE_MAX);
	assert_int_equal(p->feefilter, 1);
	assert_int_equal(p->rx.start, 0);
	assert_int_equal(p->rx.end, 10);
	assert_int_equal(tf_script_in_use(), in_use + 1);
	/* Done: given back at once. */
	tf_feed(p, w.buf + 10 + one, w.len - 10 - one, SIZE_MAX);
	assert_int_equal(p->feefilter, 2);
	assert_idle(p, in_use);

	/* A read of 0 bytes (EAGAIN) leaves nothing held either. */
	uv_buf_t b;
	transport_alloc_cb((uv_handle_t *)&p->tcp, 65536, &b);
	assert_int_equal(tf_script_in_use(), in_use + 1);
	transport_read_cb((uv_stream_t *)&p->tcp, 0, &b);
	assert_idle(p, in_use);

	/* Neither does a disconnect halfway through a message. */
	tf_feed(p, w.buf, 30, SIZE_MAX);
	assert_int_equal(tf_script_in_use(), in_use + 1);
	transport_alloc_cb((uv_handle_t *)&p->tcp, 65536, &b);
	transport_read_cb((uv_stream_t *)&p->tcp, UV_EOF, &b);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_idle(p, in_use);
	assert_true(tf_log_contains(t, "closed by peer"));
	proto_writer_release(&w);
}

static void test_rx_buffer_oom(void **state)
{
	struct tf *t = *state;
	struct peer *p = tf_peer(t, true, TF_ADDR);
	size_t in_use = tf_script_in_use();
	/* No idle buffers, so the next get must allocate; make that fail. */
	proto_freelist_drain();
	base_alloc_fail_after(0);
	uint8_t byte = 0;
	tf_feed(p, &byte, 1, 1);
	assert_int_equal(base_alloc_injected(), 1);
	assert_int_equal(t->d->stats.rx_pool_fail, 1);
	assert_int_equal(p->state, PEER_CLOSING);
	assert_idle(p, in_use);

	/* Out of memory for an exactly-sized buffer: dropped, nothing held. */
	struct peer *q = tf_peer(t, true, TF_ADDR);
	struct proto_writer w;
	proto_writer_init(&w);
	frame_unknown(t, &w, 1000);
	tf_feed(q, w.buf, 10, SIZE_MAX);
	base_alloc_fail_after(0);
	tf_feed(q, w.buf + 10, 100, SIZE_MAX);
	assert_int_equal(base_alloc_injected(), 1);
	assert_int_equal(q->state, PEER_CLOSING);
	assert_idle(q, in_use);
	assert_true(tf_log_contains(t, "out of memory for a receive buffer"));
	proto_writer_release(&w);
}

/*
 * Flow control: while send-paused, messages wait in the buffer; when it is
 * full reading stops; when the send queue drains they are handled and
 * reading resumes.
 */
static void test_send_paused_waits(void **state)
{
	struct tf *t = *state;
	size_t in_use = tf_script_in_use();
	struct peer *p = tf_peer(t, true, TF_ADDR);
	assert_int_equal(
	    uv_read_start((uv_stream_t *)&p->tcp, transport_alloc_cb, transport_read_cb), 0);
	p->reading = true;
	p->send_paused = true;
	struct proto_writer w;
	proto_writer_init(&w);
	for (int i = 1; i <= 20; i++) /* 20 x 32 bytes: more than one buffer */
		frame_feefilter(t, &w, i);
	size_t fed = tf_feed(p, w.buf, w.len, SIZE_MAX);
	assert_int_equal(fed, PROTO_SCRIPT_BUF_SIZE);
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), 0);
	assert_true(p->recv_paused);
	assert_false(p->reading);
	assert_int_equal(t->d->stats.recv_pauses, 1);
	assert_int_equal(p->state, PEER_ACTIVE);

	peer_flow_update(p);
	assert_false(p->send_paused);
	assert_false(p->recv_paused);
	assert_true(p->reading);
	/* 16 whole messages were in the buffer. */
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), PROTO_SCRIPT_BUF_SIZE / 32);
	assert_int_equal(p->feefilter, PROTO_SCRIPT_BUF_SIZE / 32);
	tf_feed(p, w.buf + fed, w.len - fed, SIZE_MAX);
	assert_int_equal(recv_count(t, PROTO_CMD_FEEFILTER), 20);
	assert_int_equal(p->feefilter, 20);
	assert_idle(p, in_use);
	proto_writer_release(&w);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_split_every_boundary, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_magic_first_byte, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_magic_fourth_byte, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_magic_after_handshake, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_oversize_closes_before_allocating, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_max_message_exact_buffer, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_exact_buffer_boundary, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_checksum_dropped, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_command_dropped, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_undecodable_dropped, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_gate_before_version, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_handshake_through_transport, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_disconnect_mid_buffer, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_freelist_buffer_returned, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_buffer_oom, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_send_paused_waits, tf_setup, tf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	proto_freelist_drain();
	return rc;
}
