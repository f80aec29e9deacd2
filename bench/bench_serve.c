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

#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "base/alloc.h"
#include "bench/bench_serve_fixture.h"
#include "chain/chain.h"

/* A key as a new datadir gets one (random there, fixed here). */
static const uint8_t BENCH_KEY[CHAIN_XOR_KEY_SIZE] = {0x82, 0x45, 0xfc, 0x3e,
                                                      0x0b, 0x95, 0xba, 0x0c};
static const uint8_t ZERO_KEY[CHAIN_XOR_KEY_SIZE] = {0};
#define SERVE_TMPL "/tmp/peerd-bench-serve-XXXXXX"

static void serve(struct bench_ctx *ctx, size_t n, bool xor)
{
	struct bench_serve_fixture f;
	if (bench_serve_setup(ctx, &f, SERVE_TMPL, xor? BENCH_KEY : ZERO_KEY))
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
		if (bench_writev_all(f.sv[0], iov, 3))
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
	bench_serve_teardown(&f);
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
	struct bench_serve_fixture f;
	struct proto_block b;
	struct proto_writer w;
	proto_block_init(&b);
	proto_writer_init(&w);
	if (bench_serve_setup(ctx, &f, SERVE_TMPL, BENCH_KEY))
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
		if (w.err || bench_writev_all(f.sv[0], iov, 1))
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
	bench_serve_teardown(&f);
}
