/**
 * daemon/ctl_internal.h: what the control socket's files share: the
 * method table entry and the helpers methods fill their result with.
 *
 * A method runs either on the loop thread (`fn`) or on the validation
 * thread (`chain_fn`, with the chain; then `finish`, if any, on the loop
 * thread with the result so far). ctl.c decides which by the entry alone.
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
};

/** A loop-thread method (or a chain method's loop-thread finish). */
typedef void (*ctl_method_fn)(struct daemon *d, json_t *args, struct ctl_result *res);
/**
 * A chain method: runs on the validation thread. `c` is the chain (never
 * NULL: ctl.c answers for a missing one), `net` the network, `args`
 * positional and owned by the job until this returns.
 */
typedef void (*ctl_chain_fn)(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res);

/** One method. */
struct ctl_method {
	const char *name;
	ctl_method_fn fn;                   /**< loop thread; NULL for a chain method */
	int min, max;                       /**< parameter count */
	const char *params[CTL_MAX_PARAMS]; /**< names, for named calls and help */
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

/**
 * Named parameters into positional ones by m's names (a new reference),
 * or NULL with res set. Any thread (it only touches `params`).
 */
json_t *ctl_positional(const struct ctl_method *m, json_t *params, struct ctl_result *res);
/** Check the count of positional args against m; false with res set. */
bool ctl_check_count(const struct ctl_method *m, json_t *args, struct ctl_result *res);

/** Set an error (drops any result). Any thread. */
void ctl_fail(struct ctl_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Set the result (takes the reference); NULL means out of memory. Any thread. */
void ctl_ok(struct ctl_result *res, json_t *v);
/** The i-th argument, or NULL when absent or null. */
json_t *ctl_arg(json_t *args, size_t i);

/**
 * getrpcinfo's active_commands (ctl.c): `current` (the loop method running
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
/** Core's argument type error (-3) for parameter pos (1-based) called name. */
void ctl_wrong_type(struct ctl_result *res, int pos, const char *name, json_t *v,
                    const char *expected);
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
#endif
