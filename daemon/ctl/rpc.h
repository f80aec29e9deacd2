/**
 * daemon/ctl/rpc.h: what the HTTP JSON-RPC door's files share (ctl/ only;
 * the room's public face is ctl/ctl.h).
 *
 * Glossary
 *   door        a way in to the one dispatcher (ctl/request.c): the control
 *               socket, and the HTTP server of ctl/rpc_http.c, which hands
 *               each call to the loop in process (ctl/inproc.c), served
 *               there as one control-socket client of its own.
 *   credential  a user, a salt and HMAC-SHA256(salt, password) in hex: an
 *               -rpcauth line as given, and -rpcuser/-rpcpassword or the
 *               cookie hashed the same way with a random salt (Core's g_rpcauth).
 *   legacy      a JSON-RPC 1.0/1.1 request (no "jsonrpc", or "1.0"): errors
 *               become HTTP errors, as Core's JSONErrorReply.
 *
 * Files: rpc_auth.c (credentials, the cookie), rpc_allow.c (-rpcallowip),
 * rpc_jsonrpc.c (Core's
 * request and reply shapes and HTTP status codes), rpc_http.c (the server
 * on the loop: libmicrohttpd driven by libuv, start and stop, the worker
 * threads), rpc_http_req.c (each request: its checks, the gate, its call).
 */
#ifndef PEERD_DAEMON_CTL_RPC_H
#define PEERD_DAEMON_CTL_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/conf.h"

/* ---- ctl/rpc_auth.c ---------------------------------------------------- */

/** Core's -rpccookiefile default name, in the network's directory. */
#define RPC_COOKIE_NAME ".cookie"
/** Core's cookie user name. */
#define RPC_COOKIE_USER "__cookie__"

struct rpc_cred {
	char *user;
	char *salt;
	char *hash; /**< lower-case hex of HMAC-SHA256(key salt, password) */
};

/** Who may call: the credentials, and the cookie file this process wrote. */
struct rpc_auth {
	struct rpc_cred *v;
	size_t n;
	char *cookie_path; /**< the cookie written (removed by rpc_auth_release), or NULL */
	const char *mode;  /**< for the log: "cookie", "rpcuser/rpcpassword", "none" */
};

/**
 * Core's InitRPCAuthentication: without -rpcpassword the cookie (written
 * to <netdir>/.cookie or -rpccookiefile, mode per -rpccookieperms; none
 * with -norpccookiefile), else -rpcuser/-rpcpassword; then each -rpcauth.
 * 0, or -1 with Core's message in err. a is initialised either way and
 * rpc_auth_release is right after any return. Any thread.
 */
int rpc_auth_init(struct rpc_auth *a, const struct peerd_conf *c, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/** Free the credentials and remove the cookie file this process wrote. Idempotent. */
void rpc_auth_release(struct rpc_auth *a);
/**
 * Core's RPCAuthorized: an Authorization header value ("Basic base64(user:pass)")
 * against every credential, in time independent of the password. Any thread
 * (a is read-only after rpc_auth_init).
 */
bool rpc_auth_check(const struct rpc_auth *a, const char *header);
/**
 * rpc_auth_check, and the user name of the header into user (cap bytes,
 * NUL-terminated; truncated if longer) when it passes. user may be NULL.
 */
bool rpc_auth_user(const struct rpc_auth *a, const char *header, char *user, size_t cap);
/** Core's TimingResistantEqual: equal strings, in time independent of where they differ. */
bool rpc_timing_equal(const char *a, const char *b);

/* ---- ctl/rpc_allow.c ------------------------------------------------- */

/** One -rpcallowip entry: the network and its mask (family's length used). */
struct rpc_subnet {
	int family; /**< AF_INET or AF_INET6 */
	unsigned char net[16], mask[16];
};

/**
 * Core's LookupSubNet for -rpcallowip: "IP", "IP/bits" or "IP/netmask"
 * into n. 0, or -1 when it is none of them. Any thread.
 */
int rpc_subnet_parse(const char *s, struct rpc_subnet *n) __attribute__((warn_unused_result));
struct sockaddr;
/** Whether the client at sa is in one of the n subnets v. Any thread. */
bool rpc_subnets_allow(const struct rpc_subnet *v, size_t n, const struct sockaddr *sa);

/* ---- ctl/rpc_whitelist.c ---------------------------------------------- */

struct rpc_answer;

/** One user's -rpcwhitelist: the methods it may call. */
struct rpc_wl_user {
	char *user;
	char **methods;
	size_t n;
};

/** Core's g_rpc_whitelist and g_rpc_whitelist_default. Read-only after init: any thread. */
struct rpc_whitelist {
	struct rpc_wl_user *v;
	size_t n;
	bool deflt; /**< users without a list may call nothing */
};

/**
 * Core's InitRPCAuthentication for -rpcwhitelist: each "user:m1,m2" (split
 * on ',' and ' '; a user named again keeps the intersection; "user" alone
 * names the user with no method). 0 or -ENOMEM; w is initialised either
 * way and rpc_whitelist_release is right after any return.
 */
int rpc_whitelist_init(struct rpc_whitelist *w, const struct peerd_conf *c)
    __attribute__((warn_unused_result));
/** Free what rpc_whitelist_init made. Idempotent. */
void rpc_whitelist_release(struct rpc_whitelist *w);
/**
 * Core's HTTPReq_JSONRPC checks for an authenticated `user` on the body
 * (len bytes): 0 when the request may go on (no whitelist applies, the
 * body does not parse: that answer is rpc_jsonrpc_answer's), else 1 with
 * out set: 403 and no body when a method is not allowed (the log line,
 * Core's "RPC User U not allowed to call method M" or "... any methods",
 * into msg), or Core's error for a batch member that is not an object or
 * whose method is not a string. Any thread.
 */
int rpc_whitelist_judge(const struct rpc_whitelist *w, const char *user, const char *body,
                        size_t len, struct rpc_answer *out, char *msg, size_t msglen);

/* ---- ctl/rpc_jsonrpc.c ------------------------------------------------- */

/**
 * Run one call on the dispatcher: `line` is a JSON-RPC 2.0 request with id
 * 0 (one line, no newline). Returns the reply line (xmalloc'd, the
 * caller's; *len its length) or NULL when the dispatcher is gone (peerd
 * is stopping). May block: an HTTP worker thread calls it.
 */
typedef char *(*rpc_call_fn)(void *ctx, const char *line, size_t len, size_t *out_len);

/**
 * Run a batch line (a JSON-RPC 2.0 array of requests with ids, one line)
 * on the dispatcher: the reply texts by request (*n of them; the array and
 * the texts are the caller's), *batch false when the dispatcher answered
 * the line with one error instead. NULL when it is gone. May block.
 */
typedef char **(*rpc_batch_fn)(void *ctx, const char *line, size_t len, size_t *n, bool *batch);

/** An HTTP answer: status, and a body (xmalloc'd; NULL: none). */
struct rpc_answer {
	unsigned status;
	char *body;
	size_t len;
};

/**
 * Core's HTTPReq_JSONRPC after authentication: body (len bytes) as one
 * request or a batch, each call through `call`, the answer with Core 29's
 * status codes and reply shapes (1.0 errors as HTTP errors; 2.0 errors in
 * a 200; notifications 204). Out of memory: 500 without a body. Any thread.
 */
void rpc_jsonrpc_answer(const char *body, size_t len, rpc_call_fn call, void *ctx,
                        struct rpc_answer *out);
/**
 * rpc_jsonrpc_answer for a body of one call whose dispatcher reply is
 * known (reply, reply_len bytes; taken): the second pass of a call made
 * from the loop (ctl/rpc_http_req.c), without making the request text
 * again. Any thread.
 */
void rpc_jsonrpc_answer_reply(const char *body, size_t len, char *reply, size_t reply_len,
                              struct rpc_answer *out);
/**
 * rpc_jsonrpc_answer, with a batch's calls sent to the dispatcher up to
 * CTL_MAX_BATCH at a time through `batch` (one hand-off for up to 100
 * calls instead of one each; the dispatcher still takes one call of a line
 * per turn, so other clients are not held up). The answer is the same.
 */
void rpc_jsonrpc_answer_batched(const char *body, size_t len, rpc_call_fn call, rpc_batch_fn batch,
                                void *ctx, struct rpc_answer *out);

struct ctl_result;
struct json_t;
/**
 * Answer a call at once, without the dispatcher's queue, when its method
 * is one the loop answers from a consistent view (getblockcount,
 * getbestblockhash, getblockhash with no validation job out): true with
 * res filled as ctl_call fills it (res->result a new reference, or an
 * error), false to send the call the usual way. Loop thread.
 */
typedef bool (*rpc_direct_fn)(void *ctx, const char *method, struct json_t *params,
                              struct ctl_result *res);

/** A lone call parsed once and kept until its dispatcher reply (rpc_jsonrpc_begin). */
struct rpc_jsonrpc_call;

/**
 * The first half of rpc_jsonrpc_answer for a body that is not a batch
 * (those go to rpc_jsonrpc_answer_batched): the body is parsed once. A
 * call `direct` answers, or one that needs no dispatcher (a parse error,
 * an unknown method), is answered at once: *pending NULL and out set. A
 * call for the dispatcher: *pending set (the caller's) and out empty; its
 * line is rpc_jsonrpc_call_line's, and rpc_jsonrpc_finish makes the
 * answer from the reply with the tree parsed here (the body is not read
 * again and may be freed). Loop thread (direct's).
 */
void rpc_jsonrpc_begin(const char *body, size_t len, rpc_direct_fn direct, void *ctx,
                       struct rpc_answer *out, struct rpc_jsonrpc_call **pending);
/** The dispatcher line of a pending call (valid until it is finished or freed; *len set). */
const char *rpc_jsonrpc_call_line(const struct rpc_jsonrpc_call *pc, size_t *len);
/**
 * The answer to pending call pc from its dispatcher reply (reply_len
 * bytes, taken; NULL: the dispatcher is gone), as rpc_jsonrpc_answer_reply
 * gives it; pc is freed. Any thread.
 */
void rpc_jsonrpc_finish(struct rpc_jsonrpc_call *pc, char *reply, size_t reply_len,
                        struct rpc_answer *out);
/** Free a pending call never finished (its request ended). NULL is fine. */
void rpc_jsonrpc_call_free(struct rpc_jsonrpc_call *pc);

/* ---- ctl/rpc_http.c and ctl/rpc_http_req.c: the server ---------------- */

#include <stdint.h>
#include <uv.h>

struct daemon;
struct MHD_Connection;
struct MHD_Daemon;
struct rpc_http;

/** Where a request is (rpc_req.state). */
enum rpc_req_state {
	RPC_RQ_READING, /**< headers and body arriving */
	RPC_RQ_QUEUED,  /**< suspended, waiting for a free thread slot (the work queue) */
	RPC_RQ_DELAYED, /**< suspended, its 401 waits out Core's 250 ms */
	RPC_RQ_RUNNING, /**< its call is at the dispatcher or on a worker thread */
	RPC_RQ_READY    /**< `ans` holds the answer; queued when the handler runs again */
};

/**
 * One request's state across libmicrohttpd's calls (its con_cls). Loop
 * thread, except `ans`, `ctype` and what a worker reads while RUNNING on it.
 */
struct rpc_req {
	struct rpc_http *h;
	struct MHD_Connection *conn;
	const char *url; /**< libmicrohttpd's, valid until the request completes */
	unsigned early;  /**< an answer decided from the headers (400, 403, 404, 405), or 0 */
	char *body;
	size_t len, cap;
	bool too_big;
	enum rpc_req_state state;
	bool suspended; /**< MHD_suspend_connection'd */
	bool counted;   /**< holds one of the h->threads slots */
	bool rest;      /**< a REST request */
	bool worker;    /**< served on a worker thread (REST, a batch): several calls */
	bool replaying; /**< the second pass over the body, with the reply */
	bool orphan;    /**< the request ended while its call was out: free at the reply */
	struct rpc_jsonrpc_call *pending; /**< a lone call's parsed body while at the dispatcher */
	char *line;                       /**< the dispatcher line the first pass made, or NULL */
	size_t line_len;
	char *reply; /**< the dispatcher's reply, for the second pass */
	size_t reply_len;
	uint8_t *bytes; /**< REST: the reply's bytes out of band, for the second pass */
	size_t n_bytes;
	unsigned n_calls;      /**< REST: calls the handler made in this pass */
	bool line_bytes;       /**< REST: the captured call takes bytes */
	bool needs_worker;     /**< REST: the second pass wanted a second call */
	struct rpc_answer ans; /**< with RPC_RQ_READY */
	const char *ctype;     /**< its content type (static), or NULL */
	bool challenge;        /**< a 401 with Core's WWW-Authenticate */
	uint64_t due_ms;       /**< RPC_RQ_DELAYED: when the 401 goes */
	struct rpc_req *next;  /**< on the work queue, the delayed list or the workers' lists */
};

/** One HTTP connection, for the slow-client watchdog. Loop thread. */
struct rpc_conn {
	int fd;
	uint64_t since_ms; /**< a request has been arriving since; 0: none is */
	bool killed;       /**< the watchdog shut it down */
	/* The Authorization header last accepted on this connection and its
	 * user: the same header again is compared with it (constant time)
	 * instead of decoded and hashed again. Zeroed when the connection goes. */
	char *auth;
	char auth_user[256];
	struct rpc_conn *prev, *next;
};

/**
 * The HTTP server (d->ctl->http). Everything is the loop's but the worker
 * threads' queue (`pool_mu`; a leaf: nothing blocks while holding it).
 */
struct rpc_http {
	struct daemon *d;
	struct MHD_Daemon *mhd[CONF_MAX_LIST];
	uv_poll_t poll[CONF_MAX_LIST]; /**< on each daemon's epoll fd */
	size_t n_mhd;
	uv_timer_t timer;      /**< libmicrohttpd's next timeout */
	uv_timer_t dog;        /**< the slow-client watchdog, each second */
	uv_timer_t delay;      /**< the next delayed 401 */
	uv_async_t wakeup;     /**< a worker finished */
	unsigned open_handles; /**< closing: freed when the last closes */
	bool attached;         /**< the timers and `wakeup` are initialised */
	size_t n_polls;        /**< poll[] initialised */
	struct rpc_auth auth;
	struct rpc_whitelist wl; /**< -rpcwhitelist (ctl/rpc_whitelist.c): read-only */
	struct ctl_inproc *ip;   /**< the dispatcher's door (d->ctl->inproc) */
	struct rpc_subnet *allow;
	size_t n_allow;
	int threads, depth;
	bool rest; /**< -rest: Core's REST endpoints on the same port */
	uint64_t timeout_ms;
	int active, waiting; /**< requests holding a slot; on the work queue */
	int inflight;        /**< requests between their headers and their completion */
	struct rpc_req *queue, **queue_tail; /**< the work queue (Core's -rpcworkqueue) */
	struct rpc_req *delayed, **delayed_tail;
	struct rpc_conn *conns;
	int in_run;    /**< inside MHD_run: libmicrohttpd must not be stopped now */
	int in_reply;  /**< inside a reply callback, i.e. the dispatcher's code */
	bool rerun;    /**< a connection resumed inside MHD_run: run again */
	bool gating;   /**< inside gate_next: a nested one leaves the queue to it */
	bool closing;  /**< rpc_http_close came inside MHD_run: tear down after it */
	bool stopping; /**< tearing down: new requests get 503, queued ones too */
	/* The worker threads (REST, batches: calls that block). */
	uv_mutex_t pool_mu;
	uv_cond_t pool_cond;
	struct rpc_req *todo, **todo_tail; /**< (pool_mu) for a worker */
	struct rpc_req *done;              /**< (pool_mu) answered, for the loop */
	bool pool_stop;                    /**< (pool_mu) */
	uv_thread_t *workers;
	int n_workers;
	uint64_t rejected, timed_out, queue_full, bad_auth, on_loop;
	uint64_t direct; /**< of those, answered from the view without a dispatcher client */
};

/**
 * One libmicrohttpd daemon on sa (port for the log) with the request
 * callbacks of ctl/rpc_http_req.c and `flags` (MHD_USE_*), or NULL. Loop thread.
 */
struct MHD_Daemon *rpc_http_mhd_start(struct rpc_http *h, unsigned flags, uint16_t port,
                                      const struct sockaddr *sa);
/** A request done on a worker thread, back on the loop (ctl/rpc_http.c's wakeup). */
void rpc_http_req_ready(struct rpc_req *r);
/** Have libmicrohttpd run soon (a connection was resumed). Loop thread. */
void rpc_http_kick(struct rpc_http *h);
/** The 401s due (h->delay's callback). */
void rpc_http_delay_cb(uv_timer_t *t);
/**
 * At close: every request not yet answered gets its answer now (queued
 * 503, delayed 401, a call at the dispatcher ends through ctl_inproc_stop
 * before this). Loop thread.
 */
void rpc_http_end_waiting(struct rpc_http *h);
/** Hand r to a worker thread (ctl/rpc_http.c). Loop thread. */
void rpc_http_pool_push(struct rpc_http *h, struct rpc_req *r);
/** The worker's job: r's answer through the blocking door. A worker thread. */
void rpc_http_req_work(struct rpc_req *r);
/** Milliseconds of a monotonic clock. Any thread. */
uint64_t rpc_http_now_ms(void);

#endif
