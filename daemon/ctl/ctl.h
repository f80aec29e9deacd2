/**
 * daemon/ctl/ctl.h: the ctl room's declarations: the control socket (server.c,
 * request.c, methods.c), getstats' counters (stats.c, with the warnings of
 * ctl/warnings.c that getstats and getblockchaininfo show) and the
 * Prometheus endpoint (metrics.c, metrics_text.c).
 *
 * It may use the rooms below it: every other room.
 */
#ifndef PEERD_DAEMON_CTL_CTL_H
#define PEERD_DAEMON_CTL_CTL_H

#include <uv.h>

#include "daemon/net/net.h"
#include "daemon/node/node.h"
#include "daemon/notify/notify.h"
#include "daemon/p2p/p2p.h"
#include "daemon/sync/sync.h"
#include "daemon/txrelay/txrelay.h"

#include "daemon/ctl/budget.h"

/* ---- ctl/server.c / ctl/request.c / ctl/methods.c: the control socket --- */

struct ctl_client;

struct ctl_server {
	uv_pipe_t pipe;
	char *path;
	bool listening;
	bool bound;                 /**< the socket file is ours to remove */
	struct ctl_client *clients; /**< doubly linked */
	uint32_t n_clients;
	uv_pipe_t reject;    /**< accepts and closes a client peerd has no memory for */
	bool reject_busy;    /**< reject is closing */
	bool reject_pending; /**< a connection waits for reject to be free */
	/* fairness (ctl/server.c): limits on what clients hold, lines taken in turn */
	uint32_t n_live;          /**< clients not closing */
	uint64_t queued;          /**< reply bytes queued to all clients */
	uint64_t line_bytes;      /**< reply text of lines still being answered */
	struct ctl_budget budget; /**< reply budget (ctl/budget.c) */
	uint32_t jobs;            /**< chain jobs of clients' lines out now */
	uint64_t read_bytes;      /**< read buffers allocated for all clients */
	struct ctl_client *ready; /**< clients with a request line waiting its turn */
	uv_idle_t turn;           /**< runs one line of each ready client per loop turn */
	bool turn_init;
	uint64_t idle_closed, slot_closed, stall_closed, queue_closed, read_closed;
	struct ctl_job *inflight;  /**< chain calls posted and not back (getrpcinfo), linked */
	struct rpc_http *http;     /**< the HTTP JSON-RPC door (ctl/rpc_http.c), or NULL */
	struct ctl_inproc *inproc; /**< its way to the dispatcher (ctl/inproc.c), or NULL */
	uint64_t view_answers;     /**< chain questions answered from the loop's view (no job) */
	struct ctl_wait *waits;    /**< getblocktemplate longpolls parked (ctl/longpoll.c) */
};

/** Bind netdir/control.sock (or controlsocket=), mode 0600. 0 or negative (logged). */
int ctl_start(struct daemon *d);
/** Close the server and every client; remove the socket file. */
void ctl_close(struct daemon *d);
/** Every tick: close idle clients and clients that stopped reading their replies. */
void ctl_tick(struct daemon *d, uint64_t now_ms);
/**
 * The loop's view has a new tip: every parked getblocktemplate longpoll
 * waiting away from another block runs again (ctl/longpoll.c). Loop thread.
 */
void ctl_longpoll_new_tip(struct daemon *d);
/** Shutting down: every parked longpoll is answered -9 "Shutting down", as Core's. Loop thread. */
void ctl_longpoll_stop(struct daemon *d);

/**
 * JSON-RPC error codes: the JSON-RPC 2.0 ones, then Core's application
 * codes where a method means the same thing.
 */
enum ctl_err {
	CTL_PARSE_ERROR = -32700,
	CTL_INVALID_REQUEST = -32600,
	CTL_METHOD_NOT_FOUND = -32601,
	CTL_INVALID_PARAMS = -32602,
	CTL_INTERNAL_ERROR = -32603,
	CTL_MISC_ERROR = -1,             /**< RPC_MISC_ERROR */
	CTL_TYPE_ERROR = -3,             /**< RPC_TYPE_ERROR */
	CTL_INVALID_ADDRESS_OR_KEY = -5, /**< RPC_INVALID_ADDRESS_OR_KEY ("Block not found") */
	CTL_INVALID_PARAMETER = -8,      /**< RPC_INVALID_PARAMETER */
	CTL_VERIFY_ERROR = -25,          /**< RPC_VERIFY_ERROR */
	CTL_DATABASE_ERROR = -20,        /**< RPC_DATABASE_ERROR */
	CTL_DESERIALIZATION_ERROR = -22, /**< RPC_DESERIALIZATION_ERROR ("Block decode failed") */
	CTL_NODE_ALREADY_ADDED = -23,    /**< RPC_CLIENT_NODE_ALREADY_ADDED */
	CTL_NODE_NOT_ADDED = -24,        /**< RPC_CLIENT_NODE_NOT_ADDED */
	CTL_NODE_NOT_CONNECTED = -29,    /**< RPC_CLIENT_NODE_NOT_CONNECTED */
	CTL_INVALID_IP_OR_SUBNET = -30,  /**< RPC_CLIENT_INVALID_IP_OR_SUBNET */
	CTL_VERIFY_REJECTED = -26,       /**< RPC_VERIFY_REJECTED (the mempool said no) */
	CTL_ALREADY_IN_CHAIN = -27,      /**< RPC_VERIFY_ALREADY_IN_UTXO_SET */
	CTL_NODE_CAPACITY = -34,         /**< RPC_CLIENT_NODE_CAPACITY_REACHED */
};

struct ctl_later;
/**
 * A loop method's reply that must wait for an event (setban: until
 * banlist.json holds the change, as Core's RPC returns after
 * DumpBanlist). Called on the loop right after the method, with the
 * parked reply; whoever the event belongs to calls ctl_later_done(d, w)
 * once it happened (exactly once, on the loop).
 */
typedef void (*ctl_later_fn)(struct daemon *d, struct ctl_later *w);

/** A method's outcome: a result (owned, may be json null) or an error. */
struct ctl_result {
	struct json_t *result;
	int err_code;       /**< 0 when result is set */
	char err_msg[2048]; /**< room for a method's help text (Core's answer to a wrong count) */
	bool stop;          /**< shut down after the reply is written */
	/** Set by a loop method whose successful reply waits (NULL: sent now).
	 * Without a client to answer later (ctl_reply) the reply goes now. */
	ctl_later_fn later;
};

/** The parked reply w goes out now (its result as the method left it). Loop thread. */
void ctl_later_done(struct daemon *d, struct ctl_later *w);

/**
 * Run one method. params is a JSON array (positional) or object (named),
 * or NULL. Always fills res.
 */
void ctl_call(struct daemon *d, const char *method, struct json_t *params, struct ctl_result *res);

/**
 * Requests in one JSON-RPC batch. One line can hold thousands of calls,
 * and each getpeerinfo reply can be large: the bound keeps one line from
 * building a reply of hundreds of MB on the loop thread.
 */
#define CTL_MAX_BATCH 100u
/**
 * Longest request line accepted: a submitblock of the largest block
 * (PROTO_MAX_MESSAGE bytes as hex) with room for the JSON around it, as
 * Core's RPC takes any block. A client's buffer grows only as its bytes
 * arrive.
 */
#define CTL_MAX_LINE (2u * PROTO_MAX_MESSAGE + 65536u)

/** What ctl_reply asks of the connection, besides sending the reply. */
enum ctl_reply_flags {
	CTL_REPLY_CLOSE = 1u << 0, /**< close after the reply: the line was not JSON */
	CTL_REPLY_STOP = 1u << 1,  /**< the stop method ran: shut down after the reply */
};

/**
 * Answer one request line (len bytes, without its newline): a single
 * request, a batch, or a notification. Returns the reply to write as one
 * line (a new reference the caller owns), or NULL when nothing is to be
 * written (a blank line, notifications only, or out of memory). *flags
 * gets enum ctl_reply_flags bits. Methods run here. Loop thread.
 */
struct json_t *ctl_reply(struct daemon *d, const char *line, size_t len, unsigned *flags);

/* ---- ctl/rpc_http.c: the HTTP JSON-RPC door (doc/rpc.md) ------------ */

/**
 * With -server (the default), Core's HTTP JSON-RPC server on -rpcbind /
 * -rpcport with its authentication (the cookie, -rpcauth, -rpcuser),
 * libmicrohttpd driven by the loop; each call goes to the dispatcher in
 * process (ctl/inproc.c) and is served as a control-socket client, so
 * after ctl_start.
 * 0, or a negative errno after logging Core's message (bad -rpcallowip,
 * -rpcauth, -rpccookieperms; no endpoint bound when the operator named
 * one). Loop thread.
 */
int rpc_http_start(struct daemon *d);
/**
 * Stop accepting, end the calls under way, send the answers made (the
 * stop call's own) for up to 500 ms, join the worker threads and remove
 * the cookie. Called from inside the server (a stop answered in its
 * handler), it finishes when libmicrohttpd returns. Idempotent. Loop thread.
 */
void rpc_http_close(struct daemon *d);
/** The HTTP server's counters (new reference; json null without it). Loop thread. */
struct json_t *rpc_http_stats_json(const struct daemon *d);

/* ---- ctl/stats.c: getstats (the counters: daemon/stats.h) ----------- */

struct ctl_result;
/** Most warnings shown at once (the table in ctl/warnings.c is shorter). */
#define DAEMON_MAX_WARNINGS 8
/**
 * The conditions the operator is warned about now (ctl/warnings.c's table):
 * up to max sentences (static storage) into out; returns how many hold
 * (may exceed max). Loop thread.
 */
size_t daemon_warnings(const struct daemon *d, const char **out, size_t max);
/** Core's `warnings` array of those sentences (new reference; NULL: out of memory). Loop thread. */
struct json_t *daemon_warnings_json(const struct daemon *d);
/** Log each warning that holds now at WARN (at start). Loop thread. */
void daemon_warnings_log(const struct daemon *d);
/**
 * A chain method's loop-thread finish (struct ctl_method.finish): set the
 * result object's "warnings" to daemon_warnings_json(d), as Core's
 * getblockchaininfo shows them. Loop thread.
 */
void daemon_warnings_finish(struct daemon *d, struct json_t *args, struct ctl_result *res);
/**
 * A new tip reached the loop (the wiring's node hook): the first versionbit
 * it finds active by Core's unknown-rules check becomes the warning
 * "Unknown new rules activated (versionbit N)", logged and handed to
 * -alertnotify once (notify_alert), as Core's UpdateTip and warningSet;
 * u's fork warning sets or clears Core's LARGE_WORK_INVALID_CHAIN. Also
 * called with no new tip when a block was found invalid (the wiring's
 * invalid_chain hook: only the fork warning is judged then). Loop thread.
 */
void daemon_warnings_new_tip(struct daemon *d, const struct chainview_update *u);

/** getstats' result without the chain's part (new reference). Loop thread. */
struct json_t *stats_json(struct daemon *d);
struct pool_queue_stats;
/** A check queue's counters as getstats shows them (new reference). Any thread. */
struct json_t *stats_checkqueue_json(const struct pool_queue_stats *qs, unsigned workers);
/** getstats' "recv_budget": limit, held, held_max, waiting, pauses, grants, evictions, trims. */
struct json_t *recvbudget_json(struct daemon *d);
/** getstats' "control": clients, limits, queued bytes, idle/stall drops (ctl/server.c). */
struct json_t *ctl_stats_json(struct daemon *d);
/** Resident set size in bytes from /proc/self/statm, 0 if unknown. */
uint64_t stats_rss_bytes(void);
/** Open file descriptors (entries of /proc/self/fd), -1 if unknown. */
int stats_open_fds(void);

/* ---- ctl/metrics.c / ctl/metrics_text.c: the Prometheus endpoint ----- */

struct metrics;
/**
 * Start the HTTP server on metricsbind= (nothing without it) in its own
 * thread, and a 1 s timer that republishes getstats' figures as
 * Prometheus text. After validation_open. 0 or a negative errno (logged).
 * Loop thread.
 */
int metrics_start(struct daemon *d);
/** Stop the HTTP server (joins its thread) and close the timer. Idempotent. Loop thread. */
void metrics_close(struct daemon *d);
/** Free what metrics_start allocated; after validation_release. Loop thread. */
void metrics_release(struct daemon *d);
/**
 * getstats' result `stats` (stats_json merged with ctl_chain_getstats'
 * part) in Prometheus' text exposition format. Returns an xmalloc'd
 * string the caller frees with xfree (its length in *len), or NULL when
 * out of memory. Any thread.
 */
char *metrics_render(struct json_t *stats, size_t *len);

#endif
