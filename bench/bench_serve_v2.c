/*
 * bench/bench_serve_v2.c: serving a 1 MB block over BIP324 v2 against v1.
 *
 *   ServeBlockV2    ServeBlock's work (bench/bench_serve.c: the stored block
 *                   read back, written to a socket drained by another
 *                   thread) over the v2 transport, as daemon/net/v2peer.c
 *                   sends it (net_v2_send_owned): the block encrypted in
 *                   place in the buffer it was read into (net_v2_seal),
 *                   one writev of the packet's head, the block and the
 *                   tag. One op = one block (block 413567, 999,887 bytes).
 *   ServeBlockV2Copy  the way it was before: a packet buffer allocated,
 *                   the short id and the block copied into it and
 *                   encrypted there (net_v2_encrypt), one write.
 *   ServeBlockV1    the same harness without the cipher: ServeBlock's
 *                   three-buffer writev (prefix, length and checksum, the
 *                   block where it lies), so the two rows differ only by v2.
 *
 * The notes split each op into the read, the encryption and the write.
 */
#include "bench/bench.h"

#include <string.h>
#include <sys/uio.h>

#include "base/alloc.h"
#include "bench/bench_serve_fixture.h"
#include "chain/chain.h"
#include "daemon/net/v2_internal.h"

/* ServeBlock's stored block and drained socket, and a v2 pair past its handshake. */
struct v2_fixture {
	struct bench_serve_fixture s;
	struct net_v2 ini, res;
};

/* Two state machines through their handshake, in memory. */
static int v2_pair(struct v2_fixture *f, uint32_t magic)
{
	if (net_v2_init(&f->ini, true, magic, NULL, NULL, NULL, -1) ||
	    net_v2_init(&f->res, false, magic, NULL, NULL, NULL, -1))
		return -1;
	uint8_t buf[2 * sizeof(f->ini.out)];
	size_t n = f->ini.out_len, used = 0;
	memcpy(buf, f->ini.out, n);
	net_v2_out_done(&f->ini);
	struct net_v2_step st;
	do { /* the responder: MAYBE_V1, then the key */
		net_v2_recv(&f->res, buf + used, (uint32_t)(n - used), &st);
		used += st.used;
	} while (st.ev == NET_V2_USED && f->res.rs == NET_V2_RECV_KEY);
	if (f->res.ss != NET_V2_SEND_READY)
		return -1;
	net_v2_recv(&f->ini, f->res.out, f->res.out_len, &st);
	return f->ini.ss == NET_V2_SEND_READY ? 0 : -1;
}

static int v2_setup(struct bench_ctx *ctx, struct v2_fixture *f)
{
	memset(f, 0, sizeof(*f));
	if (bench_serve_setup(ctx, &f->s, "/tmp/peerd-bench-servev2-XXXXXX", NULL))
		return -1;
	if (v2_pair(f, proto_params(PROTO_NET_MAIN)->magic)) {
		bench_fail(ctx, "v2 handshake failed");
		return -1;
	}
	return 0;
}

static void v2_teardown(struct v2_fixture *f)
{
	bench_serve_teardown(&f->s);
	net_v2_release(&f->ini);
	net_v2_release(&f->res);
}

enum serve_mode { SERVE_V1, SERVE_V2, SERVE_V2_COPY };

static void serve(struct bench_ctx *ctx, size_t n, enum serve_mode mode)
{
	struct v2_fixture f;
	if (v2_setup(ctx, &f))
		goto out;
	uint64_t t_read = 0, t_enc = 0, t_write = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();
		uint8_t *raw;
		size_t len;
		if (chain_store_read_block(f.s.store, &f.s.pos, &raw, &len)) {
			bench_fail(ctx, "read failed");
			break;
		}
		uint64_t t1 = bench_now_ns(), t2 = t1;
		int err;
		if (mode == SERVE_V2) {
			uint8_t head[NET_V2_MAX_HEAD], tag[BIP324_TAG_LEN];
			size_t hl = net_v2_seal(&f.ini, "block", raw, len, head, tag);
			t2 = bench_now_ns();
			struct iovec iov[3] = {{head, hl}, {raw, len}, {tag, sizeof(tag)}};
			err = bench_writev_all(f.s.sv[0], iov, 3);
			xfree(raw);
		} else if (mode == SERVE_V2_COPY) {
			size_t wl = net_v2_wire_len("block", len);
			uint8_t *pkt = xmalloc(wl);
			if (!pkt || net_v2_encrypt(&f.ini, "block", raw, len, false, pkt)) {
				xfree(pkt);
				xfree(raw);
				bench_fail(ctx, "out of memory");
				break;
			}
			xfree(raw);
			t2 = bench_now_ns();
			struct iovec iov = {pkt, wl};
			err = bench_writev_all(f.s.sv[0], &iov, 1);
			xfree(pkt);
		} else {
			uint8_t lenck[8];
			proto_put_le32(lenck, (uint32_t)len);
			proto_put_le32(lenck + 4, f.s.csum);
			struct iovec iov[3] = {{f.s.prefix, 16}, {lenck, 8}, {raw, len}};
			err = bench_writev_all(f.s.sv[0], iov, 3);
			xfree(raw);
		}
		if (err)
			bench_fail(ctx, "write failed");
		uint64_t t3 = bench_now_ns();
		t_read += t1 - t0;
		t_enc += t2 - t1;
		t_write += t3 - t2;
	}
	bench_stop(ctx);
	bench_note(ctx, "%zu-byte block: read %.0f us, %s %.0f us, write %.0f us per block",
	           f.s.len, (double)t_read / (double)n / 1e3,
	           mode != SERVE_V1 ? "encrypt" : "no cipher", (double)t_enc / (double)n / 1e3,
	           (double)t_write / (double)n / 1e3);
out:
	v2_teardown(&f);
}

BENCH(ServeBlockV2)
{
	serve(ctx, n, SERVE_V2);
}

BENCH(ServeBlockV2Copy)
{
	serve(ctx, n, SERVE_V2_COPY);
}

BENCH(ServeBlockV1)
{
	serve(ctx, n, SERVE_V1);
}
