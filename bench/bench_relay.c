/*
 * bench/bench_relay.c: RelayFanout125, one transaction announced to 125
 * peers, in process.
 *
 * Unlike bench_daemon_*.c's rows, which drive a peerd child, this one runs
 * peerd's relay code inside the benchmark (daemon/ is linked in), so the
 * loop's CPU is the benchmark thread's own: 125 handshaken peers on
 * socketpairs (their far ends drained as the benchmark goes; every third
 * announces by txid, the rest by wtxid, half inbound), then per op one
 * transaction enters the relay mirror as the mempool's feed puts it there,
 * is queued for all 125 and trickled: 125 inv messages built and written.
 * The note has the loop's CPU per transaction and per peer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "daemon/program.h"

#define BD_FANOUT_PEERS 125

static void drain_fd(int fd)
{
	uint8_t buf[65536];
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

BENCH(RelayFanout125)
{
	uv_loop_t loop;
	struct peerd_conf conf;
	struct daemon *d = calloc(1, sizeof(*d));
	int remote[BD_FANOUT_PEERS];
	char dir[] = "/tmp/peerd-bench-relay-XXXXXX";
	if (!d || uv_loop_init(&loop) || !mkdtemp(dir)) {
		bench_fail(ctx, "RelayFanout125: setup failed");
		free(d);
		return;
	}
	conf_defaults(&conf);
	conf.params = proto_params(PROTO_NET_REGTEST);
	conf.datadir = xstrdup(dir);
	conf.netdir = xstrdup(dir);
	if (daemon_init(d, &loop, &conf)) {
		bench_fail(ctx, "RelayFanout125: daemon_init failed");
		return;
	}
	d->log.out = fopen("/dev/null", "w");
	for (int i = 0; i < BD_FANOUT_PEERS; i++) {
		struct peer *p = peer_new(d, i % 2 == 0);
		int sv[2];
		if (!p || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
		    uv_tcp_open(&p->tcp, sv[0])) {
			bench_fail(ctx, "RelayFanout125: peer setup failed");
			return;
		}
		remote[i] = sv[1];
		p->state = PEER_ACTIVE;
		p->got_version = p->sent_version = p->handshake_done = true;
		p->version = PROTO_VERSION;
		p->services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
		p->relaytxes = true;
		p->wtxidrelay = i % 3 != 0;
		txrelay_peer_ready(p);
	}
	uint8_t raw[250];
	memset(raw, 0x5a, sizeof(raw));
	uint64_t now = uv_now(&loop), cpu_ns = 0;
	bench_reset(ctx);
	for (size_t i = 0; i < n; i++) {
		uint64_t c0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		struct relay_tx m;
		memset(&m, 0, sizeof(m));
		proto_random(m.txid.b, sizeof(m.txid.b));
		proto_random(m.wtxid.b, sizeof(m.wtxid.b));
		m.fee = m.modified_fee = 2500;
		m.vsize = 141;
		m.ancestors = 1;
		(void)txrelay_mirror_add(d, &m, raw, sizeof(raw), true);
		/* An hour later every Poisson timer is due: all 125 trickle. */
		now += 3600u * 1000u;
		txrelay_trickle(d, now);
		cpu_ns += bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		/* The peers' side reads (not the loop's work; in ns/op only). */
		if (i % 64 == 63) {
			for (int k = 0; k < BD_FANOUT_PEERS; k++)
				drain_fd(remote[k]);
		}
	}
	bench_stop(ctx);
	bench_note(ctx,
	           "loop CPU %.1f us per tx announced to %d peers (%.0f ns per peer; ns/op also "
	           "counts draining the peers' sockets); %llu inv entries in %llu messages",
	           n ? (double)cpu_ns / (double)n / 1e3 : 0.0, BD_FANOUT_PEERS,
	           n ? (double)cpu_ns / (double)n / BD_FANOUT_PEERS : 0.0,
	           (unsigned long long)d->txr->st.announced,
	           (unsigned long long)d->txr->st.inv_msgs);
	for (uint32_t i = 0; i < d->n_peers; i++)
		peer_disconnect(d->peers[i], "done");
	uv_run(&loop, UV_RUN_DEFAULT);
	for (int i = 0; i < BD_FANOUT_PEERS; i++)
		close(remote[i]);
	fclose(d->log.out);
	d->log.out = stderr;
	daemon_release(d);
	free(d);
	(void)uv_loop_close(&loop);
	conf_release(&conf);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)system(cmd);
}
