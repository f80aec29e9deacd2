/**
 * daemon/ctl/ctl.h: the ctl room's declarations: the control socket (server.c,
 * request.c, methods.c), getstats' counters (stats.c, with the warnings of
 * node/warnings.c that getstats and getblockchaininfo show) and the
 * Prometheus endpoint (metrics.c, metrics_text.c).
 *
 * A part of daemon/daemon.h, which includes it where the types it uses
 * are known (issue 19: the first step of daemon.h's split into its rooms).
 */
#ifndef PEERD_DAEMON_CTL_CTL_H
#define PEERD_DAEMON_CTL_CTL_H

#ifndef PEERD_DAEMON_H
#error "include daemon/daemon.h, not daemon/ctl/ctl.h"
#endif

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
	struct ctl_job *inflight; /**< chain calls posted and not back (getrpcinfo), linked */
};

/** Bind netdir/control.sock (or controlsocket=), mode 0600. 0 or negative (logged). */
int ctl_start(struct daemon *d);
/** Close the server and every client; remove the socket file. */
void ctl_close(struct daemon *d);
/** Every tick: close idle clients and clients that stopped reading their replies. */
void ctl_tick(struct daemon *d, uint64_t now_ms);

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
};

/** A method's outcome: a result (owned, may be json null) or an error. */
struct ctl_result {
	struct json_t *result;
	int err_code;       /**< 0 when result is set */
	char err_msg[2048]; /**< room for a method's help text (Core's answer to a wrong count) */
	bool stop;          /**< shut down after the reply is written */
};

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

/* ---- ctl/stats.c ----------------------------------------------------- */

/** Counters of one command, all peers. */
struct stats_msg {
	uint64_t recv_count, recv_bytes, sent_count, sent_bytes;
};

/** Number of proto_err codes counted (index -err). */
#define STATS_N_ERRS (-(PROTO_ERR__MIN) + 1)

struct daemon_stats {
	struct stats_msg msg[PROTO_CMD__COUNT]; /**< [PROTO_CMD_UNKNOWN]: "other" */
	uint64_t decode_err[STATS_N_ERRS];      /**< by -proto_err, framing included */
	uint64_t bytes_sent, bytes_recv;
	/* connections */
	uint64_t inbound_accepted;
	uint64_t inbound_rejected_full; /**< the 126th-inbound rule */
	uint64_t inbound_rejected_banned;
	uint64_t inbound_rejected_discouraged;
	uint64_t outbound_attempts, outbound_connected, outbound_failed;
	uint64_t disconnects;
	uint64_t self_connections;
	uint64_t misbehaving;
	uint64_t discouraged;
	uint64_t v2_probes; /**< connections whose first bytes were not our magic */
	uint64_t handshake_timeouts, inactivity_timeouts, ping_timeouts;
	uint64_t send_pauses, recv_pauses;
	uint64_t rx_large_buffers;  /**< exactly-sized rx buffers allocated */
	uint64_t rx_pool_fail;      /**< rx buffer unavailable (OOM): peer dropped */
	uint64_t bloom_disconnects; /**< filterload/filteradd/filterclear without NODE_BLOOM */
	/* inventory */
	uint64_t inv_tx, inv_block, inv_other, inv_known_dup;
	uint64_t inv_ignored_full; /**< tracker full or peer at its announcement limit */
	uint64_t tx_requested, tx_request_timeouts, tx_received, tx_unsolicited;
	uint64_t tx_decoded, tx_bytes;
	uint64_t tx_already_have; /**< received but already known (mempool, orphan, rejected) */
	uint64_t tx_accepted, tx_rejected, tx_orphaned, tx_punished;
	uint64_t getdata_items, notfound_sent, notfound_recv, blocks_served;
	uint64_t blocks_not_served;       /**< asked for, but unknown, not allowed or unreadable */
	uint64_t blocks_served_reencoded; /**< of blocks_served: witnesses stripped (MSG_BLOCK) */
	uint64_t blocks_recv;
	/* headers */
	uint64_t headers_msgs, headers_entries, getheaders_answered;
	uint64_t getblocks_answered, blocks_announced_headers, blocks_announced_inv;
	/* addr */
	uint64_t addr_entries, addr_learned, addr_unroutable, getaddr_answered, getaddr_ignored;
};

/** Count a received message of `cmd` (total frame bytes). */
static inline void stats_recv(struct daemon_stats *s, enum proto_cmd cmd, size_t bytes)
{
	s->msg[cmd].recv_count++;
	s->msg[cmd].recv_bytes += bytes;
}
/** Count an error code (framing or decode). */
static inline void stats_err(struct daemon_stats *s, int err)
{
	if (err < 0 && err >= PROTO_ERR__MIN)
		s->decode_err[-err]++;
}

struct ctl_result;
/** Most warnings shown at once (the table in node/warnings.c is shorter). */
#define DAEMON_MAX_WARNINGS 8
/**
 * The conditions the operator is warned about now (node/warnings.c's table):
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
