/*
 * bench/bench_serve.c: serving a 1 MB block from the block files.
 *
 *   ServeBlock          what peerd does for a getdata MSG_WITNESS_BLOCK:
 *                       the validation thread reads the stored bytes
 *                       (chain_store_read_block) and takes the frame
 *                       checksum from the index; the loop writes three
 *                       buffers in one writev (constant magic+command
 *                       prefix, length+checksum in an 8-byte binary
 *                       free-list buffer, the block where it lies) to a
 *                       socket drained by another thread. One op = one
 *                       block (block 413567, 999,887 bytes). The block
 *                       file is obfuscated with a key, as a new datadir's
 *                       is (blocks/xor.dat): the read XORs it back.
 *   ServeBlockPlain     the same from an unobfuscated file (a zero key:
 *                       -blocksxor=0, a datadir from before xor.dat, and
 *                       what ServeBlock measured before obfuscation).
 *   ServeBlockReencode  the way it was before: read, decode, re-encode,
 *                       SHA-256d for the checksum, frame into a writer
 *                       (a copy), write.
 *
 * The notes split each op into the validation thread's part (read, and
 * for the old way decode/encode/hash/frame) and the loop's (the write),
 * and count the bytes copied in user space after the read.
 */
#include "bench/bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "chain/chain.h"

/* The peer's side: reads and discards until the socket closes. */
static void *drain(void *arg)
{
	int fd = *(int *)arg;
	static uint8_t buf[1 << 16];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

/* A key as a new datadir gets one (random there, fixed here). */
static const uint8_t BENCH_KEY[CHAIN_XOR_KEY_SIZE] = {0x82, 0x45, 0xfc, 0x3e,
                                                      0x0b, 0x95, 0xba, 0x0c};
static const uint8_t ZERO_KEY[CHAIN_XOR_KEY_SIZE] = {0};

struct serve_fixture {
	char dir[64];
	struct chain_store *store;
	struct chain_pos pos;
	uint32_t csum;
	size_t len;
	int sv[2];
	pthread_t reader;
	bool reader_started;
	uint8_t prefix[16];
};

static int setup(struct bench_ctx *ctx, struct serve_fixture *f, bool xor)
{
	memset(f, 0, sizeof(*f));
	f->sv[0] = f->sv[1] = -1;
	const struct proto_params *p = proto_params(PROTO_NET_MAIN);
	size_t len;
	uint8_t *raw = bench_read_file(bench_vector("blocks/block413567.raw"), &len);
	snprintf(f->dir, sizeof(f->dir), "/tmp/peerd-bench-serve-XXXXXX");
	if (!mkdtemp(f->dir) || chain_store_open(&f->store, f->dir, p->magic) ||
	    (chain_store_set_xor_key(f->store, xor? BENCH_KEY : ZERO_KEY), 0) ||
	    chain_store_write_block(f->store, raw, len, &f->pos) || chain_store_sync(f->store)) {
		bench_fail(ctx, "cannot store the block in %s", f->dir);
		xfree(raw);
		return -1;
	}
	/* What the index keeps: computed once, when the block was stored. */
	uint8_t h[32];
	proto_sha256d(raw, len, h);
	f->csum = proto_le32(h);
	f->len = len;
	xfree(raw);
	proto_put_le32(f->prefix, p->magic);
	memcpy(f->prefix + 4, "block", 5);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, f->sv) ||
	    pthread_create(&f->reader, NULL, drain, &f->sv[1])) {
		bench_fail(ctx, "socketpair/thread failed");
		return -1;
	}
	f->reader_started = true;
	return 0;
}

static void teardown(struct serve_fixture *f)
{
	if (f->sv[0] >= 0)
		close(f->sv[0]);
	if (f->reader_started)
		pthread_join(f->reader, NULL);
	if (f->sv[1] >= 0)
		close(f->sv[1]);
	chain_store_close(f->store);
	if (f->dir[0]) {
		char cmd[96];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench: could not remove %s\n", f->dir);
	}
}

/* Write all of iov (blocking socket); 0 or -1. */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0)
			return -1;
		size_t left = (size_t)w;
		while (n > 0 && left >= iov->iov_len) {
			left -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return 0;
}

static void serve(struct bench_ctx *ctx, size_t n, bool xor)
{
	struct serve_fixture f;
	if (setup(ctx, &f, xor))
		goto out;
	uint64_t t_read = 0, t_write = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();
		uint8_t *raw;
		size_t len;
		if (chain_store_read_block(f.store, &f.pos, &raw, &len)) {
			bench_fail(ctx, "read failed");
			break;
		}
		uint64_t t1 = bench_now_ns();
		uint8_t *lenck = proto_freelist_get(PROTO_FREELIST_BINARY);
		if (!lenck) {
			xfree(raw);
			bench_fail(ctx, "free list empty and out of memory");
			break;
		}
		proto_put_le32(lenck, (uint32_t)len);
		proto_put_le32(lenck + 4, f.csum);
		struct iovec iov[3] = {{f.prefix, 16}, {lenck, 8}, {raw, len}};
		if (writev_all(f.sv[0], iov, 3))
			bench_fail(ctx, "write failed");
		proto_freelist_put(PROTO_FREELIST_BINARY, lenck);
		xfree(raw);
		t_write += bench_now_ns() - t1;
		t_read += t1 - t0;
	}
	bench_stop(ctx);
	bench_note(ctx,
	           "%zu-byte block: validation thread (read) %.0f us, loop (3-buffer writev) %.0f "
	           "us per block; 0 bytes copied or hashed after the read",
	           f.len, (double)t_read / (double)n / 1e3, (double)t_write / (double)n / 1e3);
out:
	teardown(&f);
}

BENCH(ServeBlock)
{
	serve(ctx, n, true);
}

BENCH(ServeBlockPlain)
{
	serve(ctx, n, false);
}

BENCH(ServeBlockReencode)
{
	struct serve_fixture f;
	struct proto_block b;
	struct proto_writer w;
	proto_block_init(&b);
	proto_writer_init(&w);
	if (setup(ctx, &f, true))
		goto out;
	uint32_t magic = proto_params(PROTO_NET_MAIN)->magic;
	uint64_t t_work = 0, t_write = 0;
	size_t copied = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();
		uint8_t *raw;
		size_t len;
		if (chain_store_read_block(f.store, &f.pos, &raw, &len) ||
		    proto_block_decode(raw, len, &b, NULL)) {
			bench_fail(ctx, "read/decode failed");
			break;
		}
		struct proto_writer body;
		proto_writer_init(&body);
		proto_block_header_encode(&b.hdr, &body);
		proto_write_compact(&body, b.n_tx);
		for (uint32_t k = 0; k < b.n_tx; k++)
			proto_tx_encode(&b.txs[k], &body);
		w.len = 0;
		proto_frame_write(&w, magic, "block", body.buf, body.len);
		copied = body.len + w.len;
		proto_writer_release(&body);
		xfree(raw);
		uint64_t t1 = bench_now_ns();
		struct iovec iov[1] = {{w.buf, w.len}};
		if (w.err || writev_all(f.sv[0], iov, 1))
			bench_fail(ctx, "frame/write failed");
		t_write += bench_now_ns() - t1;
		t_work += t1 - t0;
	}
	bench_stop(ctx);
	bench_note(ctx,
	           "validation thread (read, decode, encode, SHA-256d, frame) %.0f us, loop "
	           "(write) %.0f us per block; %zu bytes copied per block after the read",
	           (double)t_work / (double)n / 1e3, (double)t_write / (double)n / 1e3, copied);
out:
	proto_writer_release(&w);
	proto_block_release(&b);
	teardown(&f);
}
