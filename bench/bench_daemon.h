/**
 * bench/bench_daemon.h: the harness the whole-daemon benchmarks share
 * (bench/bench_daemon.c): start a real peerd on regtest and stop it, open
 * and handshake plain non-blocking peer sockets, ask the control socket.
 * Single-threaded, like every benchmark; nothing here is thread-safe.
 */
#ifndef PEERD_BENCH_DAEMON_H
#define PEERD_BENCH_DAEMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/proto.h"

/** Bytes of a peer socket's read buffer (handshake replies, pongs). */
#define BD_RX_BUF 2048
/** Longest wait for one phase of a benchmark (connects, a flood, a block). */
#define BD_PHASE_TIMEOUT_MS 60000

/** A running peerd child: its pid, P2P port, temporary datadir and control socket. */
struct bd_daemon {
	pid_t pid;
	uint16_t port;
	char datadir[64];
	char sock[96];
};

/** One peer socket of a benchmark. */
struct bd_conn {
	int fd;
	bool connected;
	bool done; /* handshake: peerd's verack seen */
	uint32_t rx_len;
	uint8_t rx[BD_RX_BUF];
	/* flood: the frame being written and how far */
	uint32_t frame;
	uint32_t off;
};

/** Sleep ms milliseconds. */
void bd_sleep_ms(unsigned ms);
/** The peerd binary (env PEERD_BIN, else next to this one) into out; false if none. */
bool bd_find_peerd(char *out, size_t len);
/** Raise RLIMIT_NOFILE to its hard limit (thousands of sockets). */
void bd_raise_nofile(void);
/** A non-blocking TCP connect to 127.0.0.1:port started; the fd, or -1. */
int bd_tcp_connect_nb(uint16_t port);
/**
 * Start peerd (-maxconnections=maxconn) on regtest, 127.0.0.1, a free
 * port and a fresh /tmp datadir, and wait until both its P2P port and its
 * control socket answer: 0, or a negative errno (-ENOENT: no peerd binary).
 * Call bd_daemon_stop either way.
 */
int bd_daemon_start(struct bd_daemon *bd, int maxconn);
/** SIGTERM, wait, and remove the datadir; safe on a bd never started. */
void bd_daemon_stop(struct bd_daemon *bd);
/** One JSON-RPC call on a fresh control connection; the result (new reference) or NULL. */
json_t *bd_ctl_call(const struct bd_daemon *bd, const char *method);
/** The integer at root.a[.b[.c]], or -1 when absent. */
long long bd_jget(json_t *root, const char *a, const char *b, const char *c);
/** Resident set size of pid in bytes (0 if unreadable). */
uint64_t bd_rss_of(pid_t pid);
/**
 * The handshake frames a Core 29 inbound peer sends (version, wtxidrelay,
 * sendaddrv2, verack), appended to w; w->err (0 on success).
 */
int bd_handshake_frames(uint32_t magic, struct proto_writer *w);
/**
 * Read what c's socket holds (non-blocking) and call on_pong(arg, nonce)
 * for every 8-byte pong among the complete frames; other frames are
 * skipped, and a bad header or one longer than BD_RX_BUF drops all that
 * was read (nothing that big comes to a pinging peer).
 */
void bd_read_pongs(struct bd_conn *c, uint32_t magic, void (*on_pong)(void *arg, uint64_t nonce),
                   void *arg);
/**
 * Open n connections (conns[0..n), fds added to epoll ep) and send each
 * the handshake hs; returns how many saw peerd's verack within
 * BD_PHASE_TIMEOUT_MS.
 */
int bd_connect_all(const struct bd_daemon *bd, struct bd_conn *conns, int n, int ep,
                   const uint8_t *hs, size_t hs_len, uint32_t magic);
/** Close every open fd of conns[0..n) (fd set to -1). */
void bd_close_all(struct bd_conn *conns, int n);
/** qsort's comparison for uint64_t, ascending (percentiles of round trips). */
int bd_cmp_u64(const void *a, const void *b);

#endif
