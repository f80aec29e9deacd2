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
 * request and reply shapes and HTTP status codes), rpc_http.c (the server,
 * its threads and its way to the loop).
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
 * rpc_jsonrpc_answer, with a batch's calls sent to the dispatcher up to
 * CTL_MAX_BATCH at a time through `batch` (one hand-off for up to 100
 * calls instead of one each; the dispatcher still takes one call of a line
 * per turn, so other clients are not held up). The answer is the same.
 */
void rpc_jsonrpc_answer_batched(const char *body, size_t len, rpc_call_fn call, rpc_batch_fn batch,
                                void *ctx, struct rpc_answer *out);

#endif
