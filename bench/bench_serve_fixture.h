/**
 * bench/bench_serve_fixture.h: the stored block and the drained socket
 * that the block-serving benchmarks share (bench/bench_serve.c over v1,
 * bench/bench_serve_v2.c over v2): block 413567 (999,887 bytes) written
 * to a block store in a fresh /tmp directory, its frame checksum as the
 * index keeps it, the v1 frame's magic+command prefix, and a socket pair
 * whose far end another thread reads and discards, so a write costs what
 * it costs a peer's socket. Single-threaded apart from that reader.
 */
#ifndef PEERD_BENCH_SERVE_FIXTURE_H
#define PEERD_BENCH_SERVE_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bench/bench.h"
#include "chain/chain.h"

/** One stored block and the socket it is served to. */
struct bench_serve_fixture {
	char dir[64];
	struct chain_store *store;
	struct chain_pos pos; /* where the block lies in the store */
	uint32_t csum;        /* the first 4 bytes of its SHA-256d: the frame checksum */
	size_t len;           /* its bytes */
	int sv[2];            /* sv[0]: the benchmark writes; sv[1]: the reader drains */
	pthread_t reader;
	bool reader_started;
	uint8_t prefix[16]; /* mainnet magic and "block", NUL-padded: a v1 frame's first 16 bytes */
};

/**
 * Store the block in a new directory named after tmpl ("/tmp/...-XXXXXX")
 * and start the reader. key: the store's XOR key (CHAIN_XOR_KEY_SIZE
 * bytes), or NULL for the store's default. 0, or -1 after bench_fail.
 * Call bench_serve_teardown either way.
 */
int bench_serve_setup(struct bench_ctx *ctx, struct bench_serve_fixture *f, const char *tmpl,
                      const uint8_t *key);
/** Close the socket, join the reader, close the store, remove the directory. */
void bench_serve_teardown(struct bench_serve_fixture *f);
/** Write all of iov[0..n) to the blocking fd (iov is consumed); 0 or -1. */
int bench_writev_all(int fd, struct iovec *iov, int n);

#endif
