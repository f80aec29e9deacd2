/**
 * daemon/notify/notify.h: the notify room: what peerd tells the world
 * outside the P2P network and the control socket, as Bitcoin Core 29 does
 * (doc/operating.md, "Notifications").
 *
 *   ZMQ (zmq.c, zmq_events.c)  Core's -zmqpub* topics (hashblock, hashtx,
 *                  rawblock, rawtx, sequence) on libzmq PUB sockets: each
 *                  message is three frames, the topic, the body and the
 *                  topic's 4-byte little-endian message number at that
 *                  address. The events come from the validation thread
 *                  (a chain listener and the mempool's events), which only
 *                  queues them: one publisher thread owns the sockets and
 *                  sends, so neither the loop nor validation ever waits for
 *                  a subscriber.
 *   commands (commands.c)  -blocknotify, -startupnotify, -shutdownnotify and
 *                  -alertnotify: /bin/sh -c CMD started with uv_spawn on
 *                  the loop, a non-zero exit logged as Core logs it.
 *
 * Glossary
 *   notifier       one (topic, address) pair of the configuration, with its
 *                  own message number (Core's CZMQAbstractNotifier).
 *   socket         one PUB socket per distinct address; the notifiers that
 *                  name the same address share it (and its high water mark
 *                  is the first one's, as Core's).
 *
 * It may use node/ (and through it chain/ and mempool/) and the shared
 * services; the wiring (daemon/node_hooks.c, daemon/main.c) calls it.
 *
 * Threads: notify_zmq_start, notify_zmq_stop, notify_zmq_list and the
 * commands run on the loop thread; notify_zmq_attach on the validation
 * thread. Lock order: the queue's mutex is a leaf (nothing is called while
 * it is held).
 */
#ifndef PEERD_DAEMON_NOTIFY_NOTIFY_H
#define PEERD_DAEMON_NOTIFY_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include <jansson.h>

#include "daemon/node/node.h"

struct chain;
struct chain_node;
struct mempool;
struct notify_msg;

/** Most bytes of messages waiting for the publisher; past it a message is dropped (counted). */
#define NOTIFY_ZMQ_QUEUE_BYTES (256u << 20)
/** Most messages waiting for the publisher. */
#define NOTIFY_ZMQ_QUEUE_MSGS 100000u
/** Most notification commands running at once; past it one is skipped (logged). */
#define NOTIFY_MAX_COMMANDS 64u

/** One -zmqpub<topic>=<address>. */
struct notify_zmq_pub {
	int topic;           /**< enum conf_zmq_topic */
	const char *address; /**< as given, "unix:" turned into "ipc:" (owned by the state) */
	int hwm;             /**< -zmqpub<topic>hwm */
	uint32_t sock;       /**< index into the sockets */
	uint32_t seq;        /**< the next message number (validation thread) */
};

/**
 * The room's state (d->notify). Fields marked (mu) are guarded by mu; the
 * sockets belong to the publisher thread once it runs.
 */
struct notify_state {
	struct daemon *d;
	struct notify_zmq_pub *pubs; /**< every notifier, in Core's order */
	uint32_t n_pubs;
	uint32_t wants; /**< bit per topic with at least one notifier */
	void *zctx;     /**< the libzmq context; NULL: ZMQ is off */
	void **socks;   /**< one PUB socket per distinct address */
	uint32_t n_socks;
	bool thread_started; /**< loop thread */
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;
	struct notify_msg *head, **tail;  /**< (mu) waiting to be sent */
	size_t queued_bytes, queued_msgs; /**< (mu) */
	size_t max_bytes,
	    max_msgs;  /**< the queue's bounds (NOTIFY_ZMQ_QUEUE_*; tests lower them) */
	bool stopping; /**< (mu) send what is queued, then exit */
	uint64_t sent, dropped, failed; /**< (mu) counters: sent, queue full, zmq_send failed */
	/* validation thread */
	bool attached;                    /**< the chain listener and mempool events are set */
	struct chain *chain;              /**< the chain listened to, NULL once it closed */
	struct mempool *mempool;          /**< its pool (for the mempool sequence) */
	const struct chain_node *settled; /**< the tip when the chain last settled */
	/* loop thread: the commands */
	uint32_t running; /**< commands not yet exited */
};

/* ---- zmq.c: the sockets and the publisher thread ---------------------- */

/**
 * Open a PUB socket for every address of the -zmqpub* options and start
 * the publisher thread. As Core, a socket that cannot be made or bound is
 * logged and leaves ZMQ off for this run (getzmqnotifications then lists
 * nothing); the node runs on. 0, or -ENOMEM. Loop thread, at start, before
 * the validation thread takes its first job.
 */
int notify_zmq_start(struct daemon *d);
/**
 * Stop the publisher after what is queued (libzmq's linger is 0: what a
 * subscriber has not taken is dropped), join it, close the sockets and the
 * context, free the state. Idempotent; after the validation thread ended.
 */
void notify_zmq_stop(struct daemon *d);
/** getzmqnotifications' answer: [{type, address, hwm}] (a new reference). Loop thread. */
json_t *notify_zmq_list(const struct daemon *d);
/**
 * Queue one message for notifier p: topic, body (copied) and p's next
 * message number. Dropped and counted when the queue is full. Validation
 * thread (the only producer, so the numbers are in queue order).
 */
void notify_zmq_queue(struct notify_state *s, struct notify_zmq_pub *p, const char *topic,
                      const void *body, size_t len);

/* ---- zmq_events.c: what the validation thread sees --------------------- */

/**
 * Validation thread, after every job (the wiring's feed_take): the first
 * call with a chain registers the chain listener and the mempool's events
 * when any -zmqpub* is set. Cheap otherwise.
 */
void notify_zmq_attach(struct daemon *d, struct chain *c, struct mempool *mp);

/* ---- commands.c: -blocknotify, -startupnotify, -shutdownnotify, -alertnotify */

/** -startupnotify, once the node runs (the end of start). Loop thread. */
void notify_startup(struct daemon *d);
/**
 * -shutdownnotify, every one at once, as shutdown begins; the loop runs
 * until they exit (within the shutdown grace period). Loop thread.
 */
void notify_shutdown(struct daemon *d);
/**
 * -blocknotify with the new tip's hash for %s, as Core's: not during
 * initial block download, and only when a block was connected. Loop thread.
 */
void notify_block_tip(struct daemon *d, const struct chainview_update *u);
/**
 * -alertnotify with the message for %s, sanitised and single-quoted as
 * Core's AlertNotify. Loop thread.
 */
void notify_alert(struct daemon *d, const char *message);
/**
 * Core's AlertNotify substitution: cmd with every %s replaced by message
 * kept to Core's safe characters and put in single quotes. 0, or -ENOSPC
 * when it does not fit in out (outlen bytes). Any thread.
 */
int notify_alert_command(const char *cmd, const char *message, char *out, size_t outlen);
/**
 * Start `/bin/sh -c cmd` without waiting; its exit is logged when
 * non-zero. 0 or a libuv error (logged). Loop thread.
 */
int notify_run(struct daemon *d, const char *cmd);

#endif
