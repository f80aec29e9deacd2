/**
 * daemon/ctl_internal.h: what the control socket's files share: the
 * method table entry and the helpers methods fill their result with.
 *
 * A method runs either on the loop thread (`fn`) or on the validation
 * thread (`chain_fn`, with the chain; then `finish`, if any, on the loop
 * thread with the result so far). ctl_request.c decides which by the entry
 * alone.
 */
#ifndef PEERD_DAEMON_CTL_INTERNAL_H
#define PEERD_DAEMON_CTL_INTERNAL_H

#include <jansson.h>

#include "daemon/daemon.h"
/* Results are built with json/: Core's amounts, hashes, blocks, json_format. */
#include "json/json.h"

/** Most parameters a method takes. */
#define CTL_MAX_PARAMS 4

/** What a chain method may know besides the chain (plain values: any thread). */
struct ctl_chain_ctx {
	const struct proto_params *net;
	const char *netdir; /**< the network's directory (blocks/ and chainstate/ inside) */
	const _Atomic bool
	    *interrupt; /**< set when peerd shuts down: a long method returns early */
	const struct peerd_conf *conf; /**< read-only after start: any thread may read it */
};

/** A loop-thread method (or a chain method's loop-thread finish). */
typedef void (*ctl_method_fn)(struct daemon *d, json_t *args, struct ctl_result *res);
/**
 * A chain method: runs on the validation thread. `c` is the chain (never
 * NULL: ctl_request.c answers for a missing one), `net` the network, `args`
 * positional and owned by the job until this returns.
 */
typedef void (*ctl_chain_fn)(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res);

/**
 * What an argument must be, as Core's RPCHelpMan checks it before the
 * method runs (RPCArg::MatchesType): the JSON type, or ANY for what Core
 * leaves to the method (amounts, "string or numeric", skip_type_check).
 */
enum ctl_arg_type {
	CTL_ARG_ANY = 0, /**< not checked here: the method reads it */
	CTL_ARG_STR,     /**< string (Core's STR and STR_HEX) */
	CTL_ARG_NUM,     /**< number, integer or not */
	CTL_ARG_BOOL,    /**< true or false */
	CTL_ARG_ARR,     /**< array */
	CTL_ARG_OBJ,     /**< object */
};

#define CTL_REQUIRED true  /**< ctl_param.required: null or absent is an error */
#define CTL_OPTIONAL false /**< ctl_param.required: null or absent means the default */

/** One parameter of a method. */
struct ctl_param {
	/** Core's m_names: the name, then any alias after '|' ("verbosity|verbose");
	 * every one of them is accepted as a named argument. NULL ends the list. */
	const char *name;
	enum ctl_arg_type type;
	bool required;
};

/** One method. */
struct ctl_method {
	const char *name;
	ctl_method_fn fn; /**< loop thread; NULL for a chain method */
	/** In order; ctl_args_check holds every call to them, so a method never
	 * sees a required argument absent, null or of another type. */
	struct ctl_param params[CTL_MAX_PARAMS];
	const char *usage;
	const char *help;
	ctl_chain_fn chain_fn; /**< validation thread; NULL for a loop method */
	ctl_method_fn finish;  /**< loop thread, after chain_fn (args NULL); may be NULL */
};

/** getstats' chain part: {"chain", "coins", "checkqueue"} (ctl_chain.c). */
void ctl_chain_getstats(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                        struct ctl_result *res);

/** The method called `name` (loop or chain), or NULL. */
const struct ctl_method *ctl_method_lookup(const char *name);
/** The chain methods (ctl_chain.c) and their count. */
extern const struct ctl_method ctl_chain_methods[];
extern const size_t ctl_n_chain_methods;
/** The mempool methods (ctl_mempool.c), chain methods too, and their count. */
extern const struct ctl_method ctl_mempool_methods[];
extern const size_t ctl_n_mempool_methods;
/**
 * Core's ParseHashV for chain methods (ctl_chain.c): a string of 64 hex
 * digits into *out; false with res set (-3 not a string, -8 otherwise).
 */
bool ctl_param_hash(json_t *v, const char *name, struct proto_hash *out, struct ctl_result *res);
/** The mining methods (ctl_mining.c), chain methods too, and their count. */
extern const struct ctl_method ctl_mining_methods[];
extern const size_t ctl_n_mining_methods;

/* ---- arguments (ctl_args.c) ---- */
/** How many parameters m takes (ctl_param entries before the NULL name). */
int ctl_method_nparams(const struct ctl_method *m);
/** The fewest arguments a call of m may give: up to its last required one. */
int ctl_method_nrequired(const struct ctl_method *m);
/**
 * A request's params (NULL, an array or an object of named arguments)
 * as the positional array m's function takes (a new reference), after
 * Core's checks, in Core's order: named arguments placed (-8 for an
 * unknown or repeated one), the count (-1 with the help text), then
 * every argument's type (-3 "Wrong type passed", all mismatches
 * together). NULL with res set on any error. Any thread.
 */
json_t *ctl_args_check(const struct ctl_method *m, json_t *params, struct ctl_result *res);
/**
 * Core's UniValue::getInt<T> on an argument of T's range [lo, hi]: absent
 * or null gives def; not a number is -3; a fraction, an exponent or a
 * value out of range is -1 "JSON integer out of range". Any thread.
 */
bool ctl_arg_int(const json_t *v, int64_t lo, int64_t hi, int64_t def, int64_t *out,
                 struct ctl_result *res);
/**
 * Core's get_str/get_array/... inside a method (an array's element, say):
 * false with -3 "JSON value of type X is not of expected type Y" when v
 * (NULL: null) is not of type t. Any thread.
 */
bool ctl_json_want(const json_t *v, enum ctl_arg_type t, struct ctl_result *res);
/** A method's own "this call is wrong" as Core's: -1 with its help text. */
void ctl_fail_usage(struct ctl_result *res, const char *method);
/** Whether name is one of Core's RPC methods that peerd lacks (ctl_unsupported.c). */
bool ctl_core_only_method(const char *name);
/** -32601 for an unknown method; the message says so when Core has it (ctl_methods.c). */
void ctl_method_not_found(struct ctl_result *res, const char *name);

/** Set an error (drops any result). Any thread. */
void ctl_fail(struct ctl_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Set the result (takes the reference); NULL means out of memory. Any thread. */
void ctl_ok(struct ctl_result *res, json_t *v);
/** The i-th argument, or NULL when absent or null. */
json_t *ctl_arg(json_t *args, size_t i);

/**
 * getrpcinfo's active_commands (ctl_request.c): `current` (the loop method running
 * now, started at uv_hrtime() `current_ns`; NULL for none) and every chain
 * call posted to the validation thread and not back, oldest first, each
 * {method, duration in microseconds}. A new reference (NULL: no memory). Loop thread.
 */
json_t *ctl_active_commands(const struct daemon *d, const char *current, uint64_t current_ns);
/** The operator methods (ctl_ops.c: ping, logging, ...), loop methods, and their count. */
extern const struct ctl_method ctl_ops_methods[];
extern const size_t ctl_n_ops_methods;
/**
 * `help METHOD`'s text for m into buf (n bytes, NUL-terminated): usage,
 * description, Arguments, Result and Examples (ctl_help.c). Returns the length.
 */
size_t ctl_help_text(const struct ctl_method *m, char *buf, size_t n);
/* ---- mempool parameter helpers (ctl_mempool.c), for ctl_package.c ---- */
struct proto_tx;
struct proto_txout;
struct chain_state;
/** Core's AmountFromValue: BTC (number or string) into satoshis; absent/null: def. */
bool ctl_param_amount(json_t *v, int64_t def, int64_t *out, struct ctl_result *res);
/** Core's ParseFeeRate: BTC/kvB into sat/kvB, below 1 BTC/kvB; absent/null: def. */
bool ctl_param_feerate(json_t *v, int64_t def, int64_t *out, struct ctl_result *res);
/** Core's DecodeHexTx into tx (initialised by the caller), ids computed; false if not one tx. */
bool ctl_decode_hex_tx(json_t *v, struct proto_tx *tx);
/** Whether out counts against maxburnamount (unspendable or invalid ops). */
bool ctl_output_burns(const struct proto_tx *tx, const struct proto_txout *out);
/** Core's ValidationState::ToString ("reason" or "reason, debug") into buf. */
void ctl_state_string(const struct chain_state *st, char *buf, size_t cap);
struct chain_package_state;
/** The transactions of a package call (testmempoolaccept, submitpackage) and their
 * results; ptrs[i] == &txs[i], the shape the chain_ package calls take. */
struct ctl_package {
	size_t n;
	struct proto_tx *txs;
	struct proto_tx **ptrs;
	struct chain_accept_result *rs;
};
/** n initialised transactions and results; false (res set) when out of memory. */
bool ctl_package_alloc(struct ctl_package *p, size_t n, struct ctl_result *res);
/** Frees what ctl_package_alloc gave (safe on a zeroed or failed one). */
void ctl_package_release(struct ctl_package *p);
/** A package verdict as Core prints it ("reason" or "reason, debug") into buf. */
void ctl_package_reason(const struct chain_package_state *st, char *buf, size_t cap);
/** submitpackage (ctl_package.c): a chain method in the mempool table. */
void ctl_m_submitpackage(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                         struct ctl_result *res);
/* ---- between the connection (ctl.c) and its requests (ctl_request.c) ---- */
/**
 * Reply bytes queued to all clients together: over it, the client with the
 * most queued is dropped. Two of the largest replies (a getblock of a
 * 4 MB block is 8 MB of hex) always fit.
 */
#define CTL_MAX_QUEUED_TOTAL (64u << 20)

struct ctl_client;

/*
 * One request line being answered: a reply slot per request, filled in
 * request order by loop methods at once and by chain methods when their
 * job comes back. The line, not the client, is what a job points to: a
 * client that closes only clears `c`, and the last job to finish frees the
 * line, so a result that arrives after the client left is dropped safely.
 */
struct ctl_line {
	struct ctl_client *c; /**< NULL: no client (ctl_reply) or it is gone */
	json_t **slots;       /**< replies by request; NULL: none (notification, OOM) */
	size_t n;
	bool batch;
	unsigned flags;       /**< enum ctl_reply_flags so far */
	uint32_t outstanding; /**< chain jobs not yet back */
	json_t *v;            /**< the parsed line while requests remain, else NULL */
	size_t next;          /**< the next request to start */
	/* A client's replies are kept as text (a getstats tree is ~10x its
	 * text): texts[k] replaces slots[k] as soon as it is made. */
	struct daemon *d;
	char **texts;      /**< NULL without a client (ctl_reply keeps trees) */
	size_t text_bytes; /**< counted in d->ctl.line_bytes */
};

/**
 * Start answering one line (len bytes, no newline) for client c (NULL:
 * chain methods cannot wait; ctl_reply). Returns the line when requests
 * or chain jobs remain (c->line; ctl_line_step goes on with it and
 * ctl_line_finish answers it), else NULL with the reply in *reply (a new
 * reference; NULL: nothing to write) and *flags set. Loop thread
 * (ctl_request.c).
 */
struct ctl_line *ctl_line_start(struct daemon *d, struct ctl_client *c, const char *text,
                                size_t len, json_t **reply, unsigned *flags);
/** Start up to `max` more of L's requests; loop methods answer at once. Loop thread. */
void ctl_line_step(struct daemon *d, struct ctl_line *L, size_t max);
/**
 * A client line's reply as one text (xmalloc'd, the caller's; *len bytes),
 * or NULL for none (notifications only, or out of memory). Loop thread.
 */
char *ctl_line_text(struct ctl_line *L, size_t *len);
/** Free L, its replies and its parsed line (not its client). Loop thread. */
void ctl_line_free(struct ctl_line *L);
/**
 * {"jsonrpc":"2.0","error":{code, message},"id":id} (a new reference;
 * NULL: no memory); takes the reference to id (NULL: null). Any thread.
 */
json_t *ctl_error_obj(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/**
 * Every request of L started and every chain job back: write its reply to
 * its client (or free it when the client left) and let the client go on
 * (ctl.c). Frees L. Loop thread.
 */
void ctl_line_finish(struct daemon *d, struct ctl_line *L);
/** The turn idle callback: one line of each ready client (ctl.c). Loop thread. */
void ctl_turn_cb(uv_idle_t *h);
/**
 * All clients' queued and pending reply bytes are over
 * CTL_MAX_QUEUED_TOTAL: close the client holding the most (ctl.c). Loop thread.
 */
void ctl_drop_largest_queue(struct daemon *d);
#endif
