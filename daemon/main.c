/*
 * daemon/main.c: peerd's entry point: configuration, startup, the loop,
 * signals and clean shutdown.
 *
 * Startup order: configuration (conf/), allocation hooks for libuv and
 * jansson (so every allocation is counted like peerd's own), the datadir
 * and the network's directory in it, locked (a second peerd on the same
 * data stops here, before touching anything), file-descriptor limits,
 * bans, the control socket (a live one means another peerd runs: stop
 * before touching the P2P port), listeners,
 * outbound targets, signals, the housekeeping timer, then READY=1.
 *
 * Shutdown (SIGTERM, SIGINT, or the stop method): STOPPING=1, listeners
 * and the control socket closed (its file removed), every peer closed
 * (pending writes are cancelled, not awaited), bans saved. The loop then
 * ends by itself once every handle has closed; a grace timer force-closes
 * whatever is left after DAEMON_SHUTDOWN_GRACE_MS, so peerd exits well
 * within systemd's and the tests' 5 seconds.
 */
#include "daemon/program.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Raise the soft RLIMIT_NOFILE to the hard limit; shrink maxconnections if still short. */
static void fit_fd_limit(struct daemon *d)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	uint64_t need = (uint64_t)d->net->maxconnections + DAEMON_FD_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rlim_t old = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			DLOG_DBG(&d->log, DLOG_MAIN, "raised the open-file limit from %llu to %llu",
			         (unsigned long long)old, (unsigned long long)rl.rlim_cur);
		else
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		uint32_t fit = rl.rlim_cur > DAEMON_FD_RESERVE
		                   ? (uint32_t)(rl.rlim_cur - DAEMON_FD_RESERVE)
		                   : 0;
		DLOG_WARNING(&d->log, DLOG_MAIN,
		             "reducing maxconnections from %u to %u: the open-file limit is %llu "
		             "(raise LimitNOFILE)",
		             d->net->maxconnections, fit, (unsigned long long)rl.rlim_cur);
		d->net->maxconnections = fit;
		/* The outbound slots follow, as Core's CConnman::Init after its fd check. */
		net_init_limits(d);
	}
}

static void on_tick(uv_timer_t *t)
{
	struct daemon *d = t->data;
	uint64_t now = daemon_now_ms(d);
	/* peer_tick may disconnect, which only marks: the array is stable. */
	for (uint32_t i = 0; i < d->n_peers; i++)
		peer_tick(d->peers[i], now);
	sync_tick(d, now);
	recvbudget_tick(d, now);
	ctl_tick(d, now);
	diskspace_tick(d, now);
	if (++d->tick_count % DAEMON_SLOW_TICKS)
		return;
	txrequest_tick(d, (uint64_t)daemon_time_ms(d)); /* Core's GetTime: mockable */
	net_tick(d, now);
	peersdat_tick(d, now);
	ban_sweep(d, daemon_time(d));
	sdnotify_status(d, false);
}

static void close_cb_noop(uv_handle_t *h)
{
	(void)h;
}

static void close_any(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void on_grace(uv_timer_t *t)
{
	struct daemon *d = t->data;
	DLOG_WARNING(&d->log, DLOG_MAIN, "shutdown grace period over: closing what is left");
	/* The validation thread may still be flushing: main() waits for it. */
	validation_detach(d);
	uv_walk(d->loop, close_any, NULL);
}

/* d->shutdown_fn: what daemon_shutdown (context.c) calls, for node/, ctl/
 * and the signals alike. */
static void shutdown_now(struct daemon *d, const char *why)
{
	if (d->shutting_down)
		return;
	d->shutting_down = true;
	DLOG_INFO_(&d->log, DLOG_MAIN, "shutting down: %s", why);
	sdnotify_stopping(d);
	/* Core's Interrupt: -shutdownnotify first; the loop runs until they exit. */
	notify_shutdown(d);
	uv_timer_stop(&d->tick);
	uv_close((uv_handle_t *)&d->tick, close_cb_noop);
	txrelay_stop(d);
	uv_close((uv_handle_t *)&d->sig_term, close_cb_noop);
	uv_close((uv_handle_t *)&d->sig_int, close_cb_noop);
	uv_close((uv_handle_t *)&d->sig_hup, close_cb_noop);
	net_close_listeners(d);
	/* Waiting longpolls get Core's "Shutting down" while their doors are open. */
	ctl_longpoll_stop(d);
	rpc_http_close(d);
	ctl_close(d);
	metrics_close(d);
	/* anchors.dat names the block-relay-only peers still connected. */
	net_outbound_stop(d);
	for (uint32_t i = 0; i < d->n_peers; i++)
		peer_disconnect(d->peers[i], "shutting down");
	net_release_targets(d);
	net_seeds_stop(d);
	net_resolver_release(d);
	validation_stop(d);
	if (ban_save(d) == 0)
		DLOG_DBG(&d->log, DLOG_MAIN, "bans saved");
	peersdat_shutdown(d);
	/* The grace timer must not itself keep the loop alive. */
	uv_timer_start(&d->shutdown_timer, on_grace, DAEMON_SHUTDOWN_GRACE_MS, 0);
	uv_unref((uv_handle_t *)&d->shutdown_timer);
}

/* The command line, kept so SIGHUP can read the configuration again. */
static int saved_argc;
static char **saved_argv;

/* SIGHUP as bitcoind's: reopen the log file (logrotate renamed it) and
 * take debug=/debugexclude= from the config file again. Other keys keep
 * their start-up values: changing them needs a restart. */
static void on_hup(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	if (c->debuglogfile) {
		int err = dlog_open_file(&d->log, c->debuglogfile);
		if (err)
			DLOG_ERR(&d->log, DLOG_MAIN, "SIGHUP: cannot reopen %s: %s",
			         c->debuglogfile, strerror(-err));
	}
	struct peerd_conf fresh;
	char err[512];
	if (conf_load(&fresh, saved_argc, saved_argv, err, sizeof(err)) == 0) {
		dlog_set_debug(&d->log, fresh.debug_mask, fresh.debug_core);
		DLOG_INFO_(&d->log, DLOG_MAIN, "SIGHUP: log reopened, debug categories re-read");
	} else {
		DLOG_WARNING(&d->log, DLOG_MAIN, "SIGHUP: config not re-read: %s", err);
	}
	conf_release(&fresh);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct daemon *d = s->data;
	if (signum == SIGHUP) {
		on_hup(d);
		return;
	}
	daemon_shutdown(d, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static int start_signal(struct daemon *d, uv_signal_t *s, int signum)
{
	int err = uv_signal_init(d->loop, s);
	if (err)
		return err;
	s->data = d;
	err = uv_signal_start(s, on_signal, signum);
	/* Signals must not keep the loop alive once everything else is done. */
	uv_unref((uv_handle_t *)s);
	return err;
}

/* The tick and the shutdown grace timer, which only peerd itself runs. */
static int init_timers(struct daemon *d)
{
	if (uv_timer_init(d->loop, &d->tick) || uv_timer_init(d->loop, &d->shutdown_timer))
		return -ENOMEM;
	d->tick.data = d;
	d->shutdown_timer.data = d;
	return 0;
}

/* -debuglogfile and -pid, once the netdir exists (their default home). */
static int open_operator_files(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	int err;
	if (c->debuglogfile && (err = dlog_open_file(&d->log, c->debuglogfile))) {
		DLOG_ERR(&d->log, DLOG_MAIN, "cannot open -debuglogfile %s: %s", c->debuglogfile,
		         strerror(-err));
		return err;
	}
	if (c->pidfile) {
		FILE *f = fopen(c->pidfile, "w");
		if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f)) {
			err = -errno;
			DLOG_ERR(&d->log, DLOG_MAIN, "cannot write -pid file %s: %s", c->pidfile,
			         strerror(errno));
			return err ? err : -EIO;
		}
		d->pidfile_written = true;
	}
	return 0;
}

static int start(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	/* Signals first: once the control socket exists a supervisor may send
	 * SIGTERM at any moment (opening the chain can take a while), and it
	 * must mean a clean shutdown, never the default action. */
	int err;
	if ((err = start_signal(d, &d->sig_term, SIGTERM)) ||
	    (err = start_signal(d, &d->sig_int, SIGINT)) ||
	    (err = start_signal(d, &d->sig_hup, SIGHUP)))
		return err;
	if ((err = datadir_open(d)))
		return err;
	if ((err = open_operator_files(d)))
		return err;
	/* bitcoind options peerd accepted but does not act on (conf/core_opts.c). */
	for (size_t i = 0; i < c->ignored.n; i++)
		DLOG_WARNING(&d->log, DLOG_MAIN, "%s", c->ignored.v[i]);
	fit_fd_limit(d);
	/* Networks and proxies: bad values stop here with Core's message. */
	if ((err = net_reach_init(d)))
		return err;
	if ((err = ban_init(d)))
		return err;
	/* After the datadir lock: no second peerd reads or writes its file. */
	if ((err = peersdat_load(d)))
		return err;
	if ((err = ctl_start(d)))
		return err;
	if ((err = diskspace_startup(d)))
		return err;
	/* After the control socket and the datadir lock, so another peerd is
	 * found before its chain state is touched; before the loop runs, so no
	 * request arrives before the chain is there. */
	/* The ZMQ sockets before the validation thread, which feeds them. */
	if ((err = notify_zmq_start(d)))
		return err;
	/* The estimator before the validation thread, which feeds it. */
	if ((err = fees_hooks_start(d)))
		return err;
	if ((err = validation_open(d)))
		return err;
	if ((err = daemon_index_start(d)))
		return err;
	if ((err = metrics_start(d)))
		return err;
	if ((err = rpc_http_start(d)))
		return err;
	if ((err = net_resolver_init(d)))
		return err;
	if ((err = net_start_listeners(d)))
		return err;
	if ((err = net_init_targets(d)))
		return err;
	if ((err = net_outbound_start(d)) || (err = net_seeds_start(d)))
		return err;
	if ((err = uv_timer_start(&d->tick, on_tick, DAEMON_TICK_MS, DAEMON_TICK_MS)))
		return err;
	if ((err = txrelay_start(d)))
		return err;
	net_tick(d, daemon_now_ms(d));
	DLOG_INFO_(&d->log, DLOG_MAIN,
	           "peerd %s on %s: datadir %s (this network's in %s), maxconnections %u",
	           DAEMON_VERSION_STRING, d->params->name, c->datadir, c->netdir,
	           d->net->maxconnections);
	daemon_warnings_log(d);
	sdnotify_ready(d);
	notify_startup(d);
	/* Last, as Core's "initload" thread after init: every socket answers
	 * while the reindex runs as validation jobs. */
	return node_reindex_start(d);
}

/* After a failed start: close what was opened so the loop can end. */
static void abort_start(struct daemon *d)
{
	d->shutting_down = true;
	validation_stop(d);
	validation_detach(d);
	rpc_http_close(d);
	ctl_close(d);
	metrics_close(d);
	net_close_listeners(d);
	net_outbound_stop(d);
	net_release_targets(d);
	net_seeds_stop(d);
	net_resolver_release(d);
	uv_walk(d->loop, close_any, NULL);
}

int main(int argc, char **argv)
{
	struct peerd_conf conf;
	char err[512];
	/* Before anything allocates (net/recvbudget.c: memory goes back after floods). */
	recvbudget_malloc_setup();
	/* Before anything allocates: libuv and jansson go through the hook too. */
	uv_replace_allocator(xmalloc, xrealloc, xcalloc, xfree);
	json_set_alloc_funcs(xmalloc, xfree);
	/* A peer closing while we write must be an error code, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	/* As bitcoind (AppInitBasicSetup): whatever peerd creates (the log
	 * file, the pid file, banlist.json, mempool.dat, the chain) is the
	 * owner's alone; -controlsocketgroup chmods its socket explicitly. */
	umask(077);

	saved_argc = argc;
	saved_argv = argv;
	int rc = conf_load(&conf, argc, argv, err, sizeof(err));
	if (rc == CONF_EHELP) {
		if (conf.version)
			printf("peerd version %s\n", DAEMON_VERSION_STRING);
		else
			fputs(conf_help(), stdout);
		conf_release(&conf);
		return 0;
	}
	if (!rc)
		rc = conf_check_datadir(&conf, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "peerd: %s\n", err[0] ? err : "configuration error");
		conf_release(&conf);
		return 1;
	}
	proto_freelist_configure(conf.binaryfreelist, conf.scriptfreelist);

	uv_loop_t loop;
	if (uv_loop_init(&loop)) {
		fprintf(stderr, "peerd: cannot initialise the event loop\n");
		conf_release(&conf);
		return 1;
	}
	struct daemon *d = xcalloc(1, sizeof(*d));
	int exit_code = 0;
	if (!d || daemon_init(d, &loop, &conf) || init_timers(d)) {
		fprintf(stderr, "peerd: out of memory\n");
		if (d)
			daemon_release(d);
		xfree(d);
		uv_loop_close(&loop);
		conf_release(&conf);
		return 1;
	}
	d->shutdown_fn = shutdown_now;
	/* -mocktime after daemon_init: uptime counts from the real start, as
	 * Core's startup time is taken before its SetMockTime. */
	if (conf.mocktime)
		base_clock_set_mock(conf.mocktime);
	if (start(d)) {
		exit_code = 1;
		abort_start(d);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	/* Normally the thread is gone already (its async handle kept the loop
	 * running until the chain was flushed); after the grace timer, wait. */
	validation_release(d);
	/* The thread is gone: the estimator is the loop's again. */
	fees_hooks_close(d);
	/* Whatever is still open (the unref'd grace timer) closes now. */
	uv_walk(&loop, close_any, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (exit_code == 0)
		exit_code = d->exit_status;
	if (exit_code == 0)
		DLOG_INFO_(&d->log, DLOG_MAIN, "peerd stopped");
	if (d->pidfile_written)
		(void)unlink(conf.pidfile);
	dlog_close_file(&d->log);
	daemon_release(d);
	xfree(d);
	if (uv_loop_close(&loop))
		fprintf(stderr, "peerd: event loop not empty at exit\n");
	conf_release(&conf);
	proto_freelist_drain();
	return exit_code;
}
