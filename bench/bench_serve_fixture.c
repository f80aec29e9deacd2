/*
 * bench/bench_serve_fixture.c: the block-serving benchmarks' shared
 * set-up (see bench_serve_fixture.h).
 */
#include "bench/bench_serve_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"

/* The peer's side: reads and discards until the socket closes. */
static void *drain(void *arg)
{
	int fd = *(int *)arg;
	static uint8_t buf[1 << 16];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

int bench_serve_setup(struct bench_ctx *ctx, struct bench_serve_fixture *f, const char *tmpl,
                      const uint8_t *key)
{
	memset(f, 0, sizeof(*f));
	f->sv[0] = f->sv[1] = -1;
	const struct proto_params *p = proto_params(PROTO_NET_MAIN);
	size_t len;
	uint8_t *raw = bench_read_file(bench_vector("blocks/block413567.raw"), &len);
	snprintf(f->dir, sizeof(f->dir), "%s", tmpl);
	if (!mkdtemp(f->dir) || chain_store_open(&f->store, f->dir, p->magic) ||
	    (key && (chain_store_set_xor_key(f->store, key), 0)) ||
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

void bench_serve_teardown(struct bench_serve_fixture *f)
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

int bench_writev_all(int fd, struct iovec *iov, int n)
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
