/**
 * daemon/ctl/internal.h: what the control socket's files share: the
 * method table entry and the helpers methods fill their result with.
 *
 * A method runs either on the loop thread (`fn`) or on the validation
 * thread (`chain_fn`, with the chain; then `finish`, if any, on the loop
 * thread with the result so far). ctl/request.c decides which by the entry
 * alone.
 */
#ifndef PEERD_DAEMON_CTL_INTERNAL_H
#define PEERD_DAEMON_CTL_INTERNAL_H

#include <jansson.h>

#include "daemon/ctl/ctl.h"
/* Results are built with json/: Core's amounts, hashes, blocks, json_format. */
#include "json/json.h"

/** Most parameters a method takes. */
#define CTL_MAX_PARAMS 4

struct ctl_job;

/**
 * A chain call that asks to be run again later instead of answering now
 * (getblocktemplate's longpoll; ctl/longpoll.c keeps it). The method sets
 * `wanted` and `tip` and leaves the result empty; the loop parks the call
 * and posts it again when its view of the tip is no longer `tip`, or on
 * the clock (60 s after the first park, then every 10 s, as Core's), with
 * `pool_check` set. Embedded in the call (ctl/request.c's struct ctl_job).
 */
struct ctl_wait {
	bool wanted;           /**< validation thread sets it: run me again later */
	struct proto_hash tip; /**< validation thread sets it: the tip waited away from */
	bool pool_check;       /**< loop sets it: this run comes from the clock */
	bool parked_once;      /**< loop: next_ms is set (the first park) */
	uint64_t next_ms;      /**< loop: daemon_now_ms of the next clock run */
	struct ctl_job *job;   /**< the call it belongs to */
	struct ctl_wait *next; /**< loop: on d->ctl->waits while parked */
};

/** What a chain method may know besides the chain: plain values, and the chain's pool. */
struct ctl_chain_ctx {
	const struct proto_params *net;
	const char *netdir; /**< the network's directory (blocks/ and chainstate/ inside) */
	const _Atomic bool
	    *interrupt; /**< set when peerd shuts down: a long method returns early */
	const struct peerd_conf *conf; /**< read-only after start: any thread may read it */
	/** The chain's pool, as the validation thread hands it to the job (set
	 * there, just before the method runs): validation thread only. */
	struct mempool *mempool;
	/** -txindex and -blockfilterindex (NULL: none): validation thread only. */
	struct index_set *indexes;
	uint32_t n_peers; /**< connections when the request was posted (getblocktemplate on main) */
	/** The fee estimator (NULL under -blocksonly): validation thread only. */
	struct fees_estimator *fees;
	/** Set when the caller takes a method's bytes as they are (ctl/inproc.c's
	 * ctl_inproc_call_bytes, for REST's .bin and .hex): a method that has them
	 * (getblock verbosity 0) stores them here and answers "" instead of their
	 * hex. NULL for every other caller: their answers are unchanged. */
	struct ctl_bytes *bytes;
	/** The call may wait (ctl_wait; a control or HTTP client's call): NULL
	 * when the method must answer at once. */
	struct ctl_wait *wait;
	/** Set when the job renders its result as text on the validation thread
	 * (ctl/request.c): a method with a long string result (a block's hex)
	 * may write its JSON text here instead, with no tree and no copy. NULL
	 * for every other caller. */
	struct ctl_bytes *text;
};

/** A method's result as raw bytes, handed out of band (ctl_chain_ctx.bytes),
 * or as its JSON text (ctl_chain_ctx.text). */
struct ctl_bytes {
	uint8_t *p; /**< xmalloc'd, or NULL: the method gave none */
	size_t len;
};

/** A loop-thread method (or a chain method's loop-thread finish). */
typedef void (*ctl_method_fn)(struct daemon *d, json_t *args, struct ctl_result *res);
/**
 * A chain method: runs on the validation thread. `c` is the chain (never
 * NULL: ctl/request.c answers for a missing one), `net` the network, `args`
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

/** getstats' chain part: {"chain", "coins", "checkqueue"} (ctl/chain_methods.c). */
void ctl_chain_getstats(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                        struct ctl_result *res);

/** The network methods (net_methods.c), loop methods, and their count. */
extern const struct ctl_method ctl_net_methods[];
extern const size_t ctl_n_net_methods;
/**
 * chain method m's answer from the loop's chain view (ctl/chain_methods.c:
 * getblockcount, getbestblockhash, getblockhash), or NULL: always a job.
 */
ctl_method_fn ctl_view_fn(const struct ctl_method *m);
/**
 * m has a view answer and the view is the chain now (validation_settled:
 * no job out): it runs on the loop, no thread switch. Loop thread.
 */
bool ctl_view_answers(const struct daemon *d, const struct ctl_method *m);
/** The method called `name` (loop or chain), or NULL. */
const struct ctl_method *ctl_method_lookup(const char *name);
/** m moves the chain (submitblock, generate*, invalidateblock, ...): its job
 * waits while a reindex is pending, as Core's (ctl/reindex_wait.c). */
bool ctl_method_moves_chain(const struct ctl_method *m);
/** The chain methods (ctl/chain_methods.c) and their count. */
extern const struct ctl_method ctl_chain_methods[];
extern const size_t ctl_n_chain_methods;
/** The mempool methods (ctl/mempool_methods.c), chain methods too, and their count. */
extern const struct ctl_method ctl_mempool_methods[];
extern const size_t ctl_n_mempool_methods;
/**
 * Core's ParseHashV for chain methods (ctl/chain_methods.c): a string of 64 hex
 * digits into *out; false with res set (-3 not a string, -8 otherwise).
 */
bool ctl_param_hash(json_t *v, const char *name, struct proto_hash *out, struct ctl_result *res);
/** getindexinfo (ctl/index_methods.c), in ctl_chain_methods' table. */
void ctl_m_getindexinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                        struct ctl_result *res);
/** pruneblockchain (ctl/prune_methods.c), in ctl_chain_methods' table. */
void ctl_m_pruneblockchain(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res);
/** getblockchaininfo's pruned, pruneheight, automatic_pruning, prune_target_size (Core's order). */
void ctl_prune_info(struct chain *c, json_t *o);
/** getblockfilter (ctl/index_methods.c), in ctl_chain_methods' table. */
void ctl_m_getblockfilter(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                          struct ctl_result *res);
/** gettxoutsetinfo (ctl/utxoset_methods.c), in ctl_chain_methods' table. */
void ctl_m_gettxoutsetinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                           struct ctl_result *res);
/** The mining methods (ctl/mining_methods.c), chain methods too, and their count. */
extern const struct ctl_method ctl_mining_methods[];
extern const size_t ctl_n_mining_methods;
/** estimatesmartfee, estimaterawfee (ctl/fees_methods.c), chain methods, and their count. */
extern const struct ctl_method ctl_fees_methods[];
extern const size_t ctl_n_fees_methods;
/** getdeploymentinfo (ctl/deploy_methods.c), in ctl_mining_methods' table. */
void ctl_m_getdeploymentinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res);
/** getblocktemplate and getmininginfo (ctl/template_methods.c), in the same table. */
void ctl_m_getblocktemplate(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res);
void ctl_m_getmininginfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                         struct ctl_result *res);
void ctl_m_getnetworkhashps(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res);
/** A block was assembled with this weight (reserved included) and these transactions
 * (coinbase excluded): getmininginfo's currentblockweight and currentblocktx. Validation thread. */
void ctl_mining_note_block(uint64_t weight, uint64_t n_tx);

/* ---- arguments (ctl/args.c) ------------------------------------------ */
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
/** Whether name is one of Core's RPC methods that peerd lacks (ctl/unsupported.c). */
bool ctl_core_only_method(const char *name);
/** -32601 for an unknown method; the message says so when Core has it (ctl/methods.c). */
void ctl_method_not_found(struct ctl_result *res, const char *name);

/* ---- calls that wait (ctl/longpoll.c, with ctl/request.c) ------------------ */
/** Keep call w (its job came back with w->wanted) until it is posted again. Loop thread. */
void ctl_longpoll_park(struct daemon *d, struct ctl_wait *w);
/** Every tick: parked longpolls whose clock came run again; those whose client left end. */
void ctl_longpoll_tick(struct daemon *d, uint64_t now_ms);
/** Post parked job j to the validation thread again; false when it cannot go. Loop thread. */
bool ctl_job_repost(struct daemon *d, struct ctl_job *j);
/** Answer parked job j with an error now; its line goes on as after any job. Loop thread. */
void ctl_job_fail(struct daemon *d, struct ctl_job *j, int code, const char *msg);
/** Whether parked job j's client has gone (its answer would be dropped). Loop thread. */
bool ctl_job_orphaned(const struct ctl_job *j);

/** Set an error (drops any result). Any thread. */
void ctl_fail(struct ctl_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Set the result (takes the reference); NULL means out of memory. Any thread. */
void ctl_ok(struct ctl_result *res, json_t *v);
/** The i-th argument, or NULL when absent or null. */
json_t *ctl_arg(json_t *args, size_t i);

/**
 * getrpcinfo's active_commands (ctl/request.c): `current` (the loop method running
 * now, started at uv_hrtime() `current_ns`; NULL for none) and every chain
 * call posted to the validation thread and not back, oldest first, each
 * {method, duration in microseconds}. A new reference (NULL: no memory). Loop thread.
 */
json_t *ctl_active_commands(const struct daemon *d, const char *current, uint64_t current_ns);
/** The node methods (node_methods.c: ping, logging, ...), loop methods, and their count. */
extern const struct ctl_method ctl_node_methods[];
extern const size_t ctl_n_node_methods;
/** The address manager's methods (addrman_methods.c), loop methods, and their count. */
extern const struct ctl_method ctl_addrman_methods[];
extern const size_t ctl_n_addrman_methods;
/**
 * `help METHOD`'s text for m into buf (n bytes, NUL-terminated): usage,
 * description, Arguments, Result and Examples (ctl/help.c). Returns the length.
 */
size_t ctl_help_text(const struct ctl_method *m, char *buf, size_t n);
/**
 * `help`'s list of the n methods ms as Core's: by Core's category (a
 * method Core lacks: "control"), usage lines, Core's hidden ones left out
 * (ctl/help.c). xmalloc'd text, or NULL when out of memory.
 */
char *ctl_help_index(const struct ctl_method *const *ms, size_t n);
/* ---- mempool parameter helpers (ctl/mempool_params.c), for the mempool and package methods --- */
struct proto_tx;
struct chain_state;
/** Core's AmountFromValue: BTC (number or string) into satoshis; absent/null: def. */
bool ctl_param_amount(json_t *v, int64_t def, int64_t *out, struct ctl_result *res);
/** Core's ParseFeeRate: BTC/kvB into sat/kvB, below 1 BTC/kvB; absent/null: def. */
bool ctl_param_feerate(json_t *v, int64_t def, int64_t *out, struct ctl_result *res);
/** Core's DecodeHexTx into tx (initialised by the caller), ids computed; false if not one tx. */
bool ctl_decode_hex_tx(json_t *v, struct proto_tx *tx);
/**
 * sendrawtransaction's and submitpackage's maxburnamount: false (res set, as
 * Core) when an output that burns (unspendable or invalid ops) carries more.
 */
bool ctl_check_burn(const struct proto_tx *tx, int64_t maxburn, struct ctl_result *res);
/** Core's DEFAULT_MAX_RAW_TX_FEE_RATE: 0.10 BTC/kvB, in sat/kvB (maxfeerate's default). */
#define CTL_DEFAULT_MAX_FEERATE 10000000LL
/** Core's ValidationState::ToString ("reason" or "reason, debug") into buf. */
void ctl_state_string(const struct chain_state *st, char *buf, size_t cap);
struct mempool_package_state;
/** The transactions of a package call (testmempoolaccept, submitpackage) and their
 * results; ptrs[i] == &txs[i], the shape the chain_ package calls take. */
struct ctl_package {
	size_t n;
	struct proto_tx *txs;
	struct proto_tx **ptrs;
	struct mempool_accept_result *rs;
};
/** A package call's array size into *n: false (res set, as Core) unless 1..25. */
bool ctl_package_count(json_t *raws, size_t *n, struct ctl_result *res);
/** One member of a package call: a hex string decoding to one tx; false (res set) if not. */
bool ctl_package_decode_tx(json_t *h, struct proto_tx *tx, struct ctl_result *res);
/** n initialised transactions and results; false (res set) when out of memory. */
bool ctl_package_alloc(struct ctl_package *p, size_t n, struct ctl_result *res);
/** Frees what ctl_package_alloc gave (safe on a zeroed or failed one). */
void ctl_package_release(struct ctl_package *p);
/** A package verdict as Core prints it ("reason" or "reason, debug") into buf. */
void ctl_package_reason(const struct mempool_package_state *st, char *buf, size_t cap);
/** submitpackage (ctl/package_methods.c): a chain method in the mempool table. */
void ctl_m_submitpackage(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                         struct ctl_result *res);
/* ---- request text as Core's UniValue reads it (ctl/json_load.c) ---------- */
/** What the text of request `member` (its place in a batch; 0 alone) said that jansson's tree
 * cannot. */
struct ctl_json_note {
	size_t member;
	char *id_text; /**< its id as written, when jansson could not hold that number; or NULL */
	char *dup_key; /**< the first key its params object repeats, as written; or NULL */
};
/** The notes of one parsed text (usually none). */
struct ctl_json_notes {
	struct ctl_json_note *v;
	size_t n;
};
/**
 * json_loadb(text, len, JSON_DECODE_ANY) that also takes what Core's
 * UniValue takes: numbers past what jansson holds (rewritten to the
 * nearest it holds; an id so written is kept as text) and repeated keys
 * (the last one kept, as jansson; a request's repeated params key noted).
 * A new reference, or NULL with *err as jansson's. *notes always set;
 * release it with ctl_json_notes_release. Any thread.
 */
json_t *ctl_json_load(const char *text, size_t len, json_error_t *err,
                      struct ctl_json_notes *notes);
/** The note of request `member`, or NULL (notes may be NULL). */
const struct ctl_json_note *ctl_json_note(const struct ctl_json_notes *notes, size_t member);
/** Frees what ctl_json_load noted. */
void ctl_json_notes_release(struct ctl_json_notes *notes);
/**
 * A reply's text (*text, xmalloc'd, *len bytes) with its top-level id's
 * number replaced by id_text; false (the text unchanged) when out of memory.
 */
bool ctl_json_set_id(char **text, size_t *len, const char *id_text);

/* ---- between the connection (ctl/server.c) and its requests (ctl/request.c) --- */
/**
 * Reply bytes of all clients together, queued or waiting for the rest of
 * their line: no request starts while these and what the chain jobs out
 * are likely to bring reach it, and over it the client holding the most
 * is dropped. Two of the largest replies (a getblock of a 4 MB block is 8
 * MB of hex) always fit.
 */
#define CTL_MAX_QUEUED_TOTAL (64u << 20)
/**
 * A reply's JSON tree is about this many times its text (measured with
 * mallinfo2: getblock HASH 3 of 20,001 outputs, 27 MB against 2.7 MB).
 */
#define CTL_TREE_PER_TEXT 10u

/** One control-socket connection (ctl/server.c); the budget (ctl/budget.c) reads it too. */
struct ctl_client {
	uv_pipe_t pipe;
	struct daemon *d;
	struct ctl_client *prev, *next;
	char *buf;
	size_t len, cap;
	uint32_t pending_writes;
	struct ctl_line *line; /**< the line whose chain requests run now, or NULL */
	bool closing;
	bool close_after_write; /**< an unrecoverable error was answered, or EOF */
	bool stop_after_write;  /**< the stop method was answered */
	bool read_paused;       /**< CTL_MAX_PENDING replies queued: not reading */
	bool reading;           /**< uv_read_start in effect */
	bool eof;               /**< the client shut down its side */
	bool ready;             /**< on the server's ready list (a line waits its turn) */
	struct ctl_client *next_ready;
	bool room_wait; /**< on room_q: its line's next call waits for reply room */
	struct ctl_client *next_room;
	size_t queued;      /**< reply bytes not yet written */
	uint64_t active_ms; /**< loop time of the last request byte or written reply */
	uint64_t wrote_ms;  /**< loop time a reply was last written (or queued into empty) */
	/* An in-process client (ctl/inproc.c) has no pipe: one line, then EOF. */
	bool in_process;                /**< served for ctl/inproc.c: `pipe` unused */
	struct ctl_inproc_call *inproc; /**< its waiting call; NULL once answered */
	struct ctl_client *next_dead;   /**< on ctl/inproc.c's list of closed ones */
};

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
	char **texts;                /**< NULL without a client (ctl_reply keeps trees) */
	size_t text_bytes;           /**< counted in d->ctl->line_bytes */
	bool orphan;                 /**< its client is closing: replies still coming are dropped */
	struct ctl_json_notes notes; /**< what the text said beyond the tree (ctl/json_load.c) */
};

/**
 * Start answering one line (len bytes, no newline) for client c (NULL:
 * chain methods cannot wait; ctl_reply). Returns the line when requests
 * or chain jobs remain (c->line; ctl_line_step goes on with it and
 * ctl_line_finish answers it), else NULL with the reply in *reply (a new
 * reference; NULL: nothing to write) and *flags set. Loop thread
 * (ctl/request.c).
 */
struct ctl_line *ctl_line_start(struct daemon *d, struct ctl_client *c, const char *text,
                                size_t len, json_t **reply, unsigned *flags);
/**
 * Start up to `max` more of L's requests; loop methods answer at once.
 * False when it stopped at a chain call for lack of reply room
 * (ctl_reply_room): the line waits for ctl_reply_kick. Loop thread.
 */
bool ctl_line_step(struct daemon *d, struct ctl_line *L, size_t max);
/**
 * A finished client line's replies, as texts by request (*n of them, NULL
 * for a request without one; the array and the texts are the caller's, to
 * xfree), or NULL when there is none. They no longer count in line_bytes:
 * the caller queues them. Loop thread.
 */
char **ctl_line_take_texts(struct ctl_line *L, size_t *n);
/**
 * L's client is closing: free its replies now (their bytes leave
 * line_bytes) and drop those its chain jobs bring back. Loop thread.
 */
void ctl_line_orphan(struct ctl_line *L);
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
 * (ctl/server.c). Frees L. Loop thread.
 */
void ctl_line_finish(struct daemon *d, struct ctl_line *L);
/** The turn idle callback: one line of each ready client (ctl/server.c). Loop thread. */
void ctl_turn_cb(uv_idle_t *h);
/**
 * While all live clients' queued and pending reply bytes are over
 * CTL_MAX_QUEUED_TOTAL, close the client holding the most (ctl/budget.c). Loop thread.
 */
void ctl_budget_check(struct daemon *d);
/**
 * May a chain call of client `asker` start? The reply bytes held and
 * those the jobs out and it are likely to bring must fit
 * CTL_MAX_QUEUED_TOTAL: a call is counted before its reply is built. If
 * they do not, clients holding more than `asker` are dropped, largest
 * first, to make room; false when that is not enough (ctl/budget.c). Loop thread.
 */
bool ctl_reply_room(struct daemon *d, const struct ctl_client *asker);
/** Reply bytes were written or freed, or a job came back: lines waiting for room go on. */
void ctl_reply_kick(struct daemon *d);
/** c's line waits for reply room: on room_q (last) until ctl_reply_kick. Loop thread. */
void ctl_budget_wait(struct ctl_client *c);
/** c leaves room_q, if on it (it is closing, or got its turn). Loop thread. */
void ctl_budget_unwait(struct ctl_client *c);
/** A chain reply of n bytes came back: what the next are likely to be. Loop thread. */
void ctl_budget_note_reply(struct daemon *d, size_t n);
/**
 * Every tick: a waiter claims room nothing else makes, or after
 * CTL_STARVED_MS the largest holder goes (ctl/budget.c). Loop thread.
 */
void ctl_budget_tick(struct daemon *d, uint64_t now_ms);
/** Close c (uv_close; freed at its close callback); what it holds is given back now (ctl/server.c).
 */
void ctl_client_close(struct ctl_client *c);
/**
 * A client for one in-process call (ctl/inproc.c): line (len bytes, no
 * newline) copied as its only request, linked with the others and
 * waiting its turn. NULL when out of memory or stopping. Loop thread.
 */
struct ctl_client *ctl_client_inproc_new(struct daemon *d, struct ctl_inproc_call *call,
                                         const char *line, size_t len);
/** Unlink and free a closed client and what it holds (ctl/server.c). Loop thread. */
void ctl_client_free(struct ctl_client *c);

/* ---- ctl/inproc.c: the HTTP door's way in to the dispatcher ---------- */
struct ctl_inproc;
/** Set d->ctl->inproc up (an unreferenced uv_async). 0 or a negative errno. Loop thread. */
int ctl_inproc_init(struct daemon *d) __attribute__((warn_unused_result));
/**
 * Run one request line (len bytes, no newline; JSON-RPC 2.0 with an id)
 * on the dispatcher, as a control-socket client would. Blocks until the
 * loop answers. Returns the reply line (xmalloc'd, the caller's; *out_len
 * its length), or NULL when peerd is stopping or out of memory. Any
 * thread but the loop's; ip stays valid until ctl_inproc_close, which
 * the HTTP door's threads are joined before.
 */
char *ctl_inproc_call(struct ctl_inproc *ip, const char *line, size_t len, size_t *out_len);
/**
 * ctl_inproc_call for a batch line, with the replies by request as the
 * dispatcher made them: the texts (*n; the array and the texts are the
 * caller's, NULL entries for requests without a reply), *batch false when
 * the line got one error instead. NULL when stopping or out of memory.
 */
char **ctl_inproc_call_texts(struct ctl_inproc *ip, const char *line, size_t len, size_t *n,
                             bool *batch);
/** An in-process client's reply (send_texts' arguments, taken) to its worker. Loop thread. */
/**
 * ctl_inproc_call for a caller that takes a result's bytes out of band: as
 * ctl_inproc_call, and *bytes (the caller's, xfree) the bytes a method
 * stored in ctl_chain_ctx.bytes (its result then reads ""), or NULL when
 * it stored none. Any thread but the loop's.
 */
char *ctl_inproc_call_bytes(struct ctl_inproc *ip, const char *line, size_t len, size_t *out_len,
                            uint8_t **bytes, size_t *n_bytes);
/**
 * A method's bytes as its result (raw xmalloc'd, taken): handed over in
 * x->bytes with "" as the result when the caller takes bytes, else their
 * hex (Core's answer), written straight into x->text as a quoted JSON
 * string when the job renders text. Validation thread (a chain method's).
 */
void ctl_ok_bytes(const struct ctl_chain_ctx *x, struct ctl_result *res, uint8_t *raw, size_t len);
/**
 * A loop caller's reply: reply (xmalloc'd, the callee's; no newline) of
 * len bytes, or NULL when the call failed (peerd stopping, the client
 * dropped); with want_bytes, the bytes a method handed out of band
 * (xmalloc'd, the callee's; NULL: none), as ctl_inproc_call_bytes. Loop
 * thread; called exactly once per accepted call.
 */
typedef void (*ctl_inproc_done_fn)(void *arg, char *reply, size_t len, uint8_t *bytes,
                                   size_t n_bytes);
/**
 * ctl_inproc_call (ctl_inproc_call_bytes with want_bytes) for a caller on
 * the loop (the HTTP server): line (len bytes, copied) is queued as a
 * client of its own; fn(arg, ...) gets the
 * reply, before this returns when `now` and the loop answers it at once.
 * `now` false from inside the dispatcher (a reply callback): the turn
 * comes on the next loop iteration. 0, or a negative errno (then fn is
 * never called). Loop thread.
 */
int ctl_inproc_submit(struct ctl_inproc *ip, const char *line, size_t len, bool want_bytes,
                      bool now, ctl_inproc_done_fn fn, void *arg)
    __attribute__((warn_unused_result));
/**
 * A call of the loop's (the HTTP server's) answered at once, without a
 * client and its line, when `method` is one the loop answers from its
 * chain view now (ctl_view_answers: no validation job out, so the view is
 * the chain's state after every call made before): true with res filled
 * as ctl_call fills it; false (res untouched) for everything else, which
 * goes through ctl_inproc_submit. Counted as a call served. Loop thread.
 */
bool ctl_inproc_direct(struct ctl_inproc *ip, const char *method, struct json_t *params,
                       struct ctl_result *res);
/** Whether c's waiting call takes bytes (ctl_inproc_call_bytes). Loop thread. */
bool ctl_inproc_wants_bytes(const struct ctl_client *c);
/** Hand c's waiting call a method's bytes (b->p taken; freed when nobody takes them). Loop thread.
 */
void ctl_inproc_give_bytes(struct ctl_client *c, struct ctl_bytes *b);
void ctl_inproc_deliver(struct ctl_client *c, char **texts, size_t n, bool batch);
/** An in-process client closed: its worker, if still waiting, gets NULL. Loop thread. */
void ctl_inproc_closed(struct ctl_client *c);
/** Refuse new calls and end every waiting one with NULL. Idempotent. Loop thread. */
void ctl_inproc_stop(struct daemon *d);
/** Stop, and close the handle (freed at its close callback). Loop thread. */
void ctl_inproc_close(struct daemon *d);
/** {"calls", "failed"} (a new reference; json null when closed). Loop thread. */
json_t *ctl_inproc_stats_json(const struct daemon *d);

/** c has a line (or a close) waiting: it gets the next turn (ctl/server.c). Loop thread. */
void ctl_ready_add(struct ctl_client *c);
#endif
