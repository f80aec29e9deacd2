/**
 * conf/internal.h: the key table and value checks shared by conf/load.c
 * (reading settings) and conf/keys.c (the table, checks and -help text).
 * Not part of conf's public face.
 */
#ifndef PEERD_CONF_INTERNAL_H
#define PEERD_CONF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

/** Every key, command-line-only options included. Order is -help's order. */
enum conf_key {
	CONF_K_CONF,
	CONF_K_DATADIR,
	CONF_K_CHAIN,
	CONF_K_REGTEST,
	CONF_K_SIGNET,
	CONF_K_TESTNET,
	CONF_K_TESTNET4,
	CONF_K_LISTEN,
	CONF_K_BIND,
	CONF_K_PORT,
	CONF_K_CONNECT,
	CONF_K_ADDNODE,
	CONF_K_MAXCONNECTIONS,
	CONF_K_PEERTIMEOUT,
	CONF_K_MAXTIPAGE,
	CONF_K_MINIMUMCHAINWORK,
	CONF_K_MAXRECEIVEBUFFER,
	CONF_K_MAXSENDBUFFER,
	CONF_K_PAR,
	CONF_K_DBCACHE,
	CONF_K_BINARYFREELIST,
	CONF_K_SCRIPTFREELIST,
	CONF_K_CONTROLSOCKET,
	CONF_K_DEBUG,
	CONF_K_LOGTIMESTAMPS,
	CONF_K_PRINTTOCONSOLE,
	CONF_K_RPCCLIENTTIMEOUT,
	CONF_K_MAXRECVMEMORY,
	CONF_K_CONTROLTIMEOUT,
	CONF_K_MAXMEMPOOL,
	CONF_K_MEMPOOLEXPIRY,
	CONF_K_PERSISTMEMPOOL,
	CONF_K_BLOCKSONLY,
	CONF_K_MINRELAYTXFEE,
	CONF_K_INCREMENTALRELAYFEE,
	CONF_K_DUSTRELAYFEE,
	CONF_K_PERMITBAREMULTISIG,
	CONF_K_DATACARRIER,
	CONF_K_DATACARRIERSIZE,
	CONF_K_ACCEPTNONSTDTXN,
	CONF_K_BYTESPERSIGOP,
	CONF_K_LIMITANCESTORCOUNT,
	CONF_K_LIMITANCESTORSIZE,
	CONF_K_LIMITDESCENDANTCOUNT,
	CONF_K_LIMITDESCENDANTSIZE,
	CONF_K_BLOCKMAXWEIGHT,
	CONF_K_BLOCKRESERVEDWEIGHT,
	CONF_K_BLOCKMINTXFEE,
	CONF_K_CHECKBLOCKS,
	CONF_K_CHECKLEVEL,
	CONF_K_METRICSBIND,
	CONF_K_HELP,
	CONF_K_VERSION,
	CONF_K_DEBUGLOGFILE,
	CONF_K_PID,
	CONF_K_CONTROLSOCKETGROUP,
	CONF_K_DEBUGEXCLUDE,
	CONF_K_TEST,
	CONF_K_CHECKADDRMAN,
	CONF_K_DNSSEED,
	CONF_K_FIXEDSEEDS,
	CONF_K_FORCEDNSSEED,
	CONF_K_DNSSERVER,
	/* Networks and proxies (issue 20; checked with Core's messages by net/reach.c) */
	CONF_K_PROXY,
	CONF_K_ONION,
	CONF_K_PROXYRANDOMIZE,
	CONF_K_ONLYNET,
	CONF_K_CJDNSREACHABLE,
	CONF_K_EXTERNALIP,
	CONF_K_DISCOVER,
	CONF_K_SEEDNODE,
	/* HTTP JSON-RPC (issue 23; daemon/ctl/rpc_http.c checks them at start, as Core's init) */
	CONF_K_SERVER,
	CONF_K_RPCBIND,
	CONF_K_RPCPORT,
	CONF_K_RPCALLOWIP,
	CONF_K_RPCTHREADS,
	CONF_K_RPCWORKQUEUE,
	CONF_K_RPCSERVERTIMEOUT,
	CONF_K_RPCCOOKIEFILE,
	CONF_K_RPCCOOKIEPERMS,
	CONF_K_RPCAUTH,
	CONF_K_RPCUSER,
	CONF_K_RPCPASSWORD,
	CONF_K_RPCWHITELIST,
	CONF_K_RPCWHITELISTDEFAULT,
	CONF_K_MOCKTIME,
	CONF_K_V2TRANSPORT,
	/* notifications (issue 23: daemon/notify/) */
	CONF_K_ZMQPUBHASHBLOCK,
	CONF_K_ZMQPUBHASHTX,
	CONF_K_ZMQPUBRAWBLOCK,
	CONF_K_ZMQPUBRAWTX,
	CONF_K_ZMQPUBSEQUENCE,
	CONF_K_ZMQPUBHASHBLOCKHWM,
	CONF_K_ZMQPUBHASHTXHWM,
	CONF_K_ZMQPUBRAWBLOCKHWM,
	CONF_K_ZMQPUBRAWTXHWM,
	CONF_K_ZMQPUBSEQUENCEHWM,
	CONF_K_BLOCKNOTIFY,
	CONF_K_STARTUPNOTIFY,
	CONF_K_SHUTDOWNNOTIFY,
	CONF_K_ALERTNOTIFY,
	CONF_K_VBPARAMS,
	CONF_K_REST,
	CONF_K_BLOCKSXOR,
	CONF_K_REINDEX,
	CONF_K_REINDEXCHAINSTATE,
	/* Validation at scale (issue 24) */
	CONF_K_ASSUMEVALID,
	CONF_K_SIGNETCHALLENGE,
	CONF_K_BLOCKRECONSTRUCTIONEXTRATXN,
	CONF_K_TXINDEX,
	CONF_K_BLOCKFILTERINDEX,
	CONF_K_ACCEPTSTALEFEEESTIMATES,
	CONF_K_COINSTATSINDEX,
	CONF_K_PEERBLOCKFILTERS,
	CONF_K_SIGNETSEEDNODE,
	/* Pruning (issue 24, chain/prune.c) */
	CONF_K_PRUNE,
	CONF_K_FASTPRUNE,
	CONF_K__COUNT
};

/** What a key's value is. */
enum conf_kind {
	CONF_KIND_BOOL,   /**< 0 or 1 */
	CONF_KIND_UINT,   /**< decimal integer in [min, max] */
	CONF_KIND_PATH,   /**< non-empty path up to CONF_MAX_PATH bytes */
	CONF_KIND_CHAIN,  /**< a network name */
	CONF_KIND_BIND,   /**< repeatable: IP literal with optional port */
	CONF_KIND_PEER,   /**< repeatable: host with optional port */
	CONF_KIND_DEBUG,  /**< repeatable: debug category */
	CONF_KIND_HEX256, /**< a 256-bit number: optional 0x, 1-64 hex digits */
	CONF_KIND_AMOUNT, /**< BTC as Core's ParseMoney: digits, up to 8 decimals, <= 21e6 */
	CONF_KIND_ADDR,   /**< one IP literal with optional port (metricsbind) */
	CONF_KIND_TEXT,   /**< any text up to CONF_MAX_HOST + 8 bytes, empty too (proxy=) */
	CONF_KIND_TEXTS,  /**< repeatable: as CONF_KIND_TEXT, not empty (onlynet=, externalip=) */
};

/** Key flags. */
enum conf_key_flag {
	CONF_KF_CMDLINE = 1u << 0, /**< only on the command line (conf, help, version) */
	CONF_KF_TOP = 1u << 1,     /**< not in a network section (the chain selectors) */
	CONF_KF_NONEG = 1u << 2,   /**< -nokey is an error (would leave nothing sensible) */
	CONF_KF_ZEROCLR = 1u << 3, /**< value "0" empties the list (connect=0, debug=0) */
	CONF_KF_NEGCLR = 1u << 4,  /**< negation clears (lists; -noconf reads no file) */
	CONF_KF_HIDDEN = 1u << 5,  /**< a test option: not in -help (as Core's -help-debug ones) */
};

struct conf_keydef {
	const char *name;
	enum conf_kind kind;
	unsigned flags;
	unsigned long long min, max; /**< CONF_KIND_UINT range */
	const char *arg;             /**< placeholder in -help ("<n>") */
	const char *def;             /**< default as -help shows it; NULL: computed */
	const char *help;            /**< one paragraph, '\n' between lines */
};

/** The table, indexed by enum conf_key. */
extern const struct conf_keydef conf_keys[CONF_K__COUNT];

/** Index of the key called `name` (len bytes), or -1. */
int conf_key_find(const char *name, size_t len);

/** "addrman, bench, ...; peerd's own, finer: ...": the -debug names for -help. */
const char *conf_debug_names(void);

/** Whether `key` is a repeatable key. */
static inline bool conf_key_is_list(enum conf_key key)
{
	enum conf_kind k = conf_keys[key].kind;
	return k == CONF_KIND_BIND || k == CONF_KIND_PEER || k == CONF_KIND_DEBUG ||
	       k == CONF_KIND_TEXTS;
}

/**
 * Check a value against its key; NULL if fine, else the reason, written
 * into why (whylen bytes) and returned.
 */
const char *conf_check_value(enum conf_key key, const char *v, char *why, size_t whylen);

/** Strict decimal parse; 0 or -1 (not a number), -2 (out of [min, max]). */
int conf_parse_uint(const char *s, unsigned long long min, unsigned long long max,
                    unsigned long long *out);

/** Core's ParseMoney: BTC text -> satoshis; 0, or -1 when not a valid amount. */
int conf_parse_amount(const char *s, int64_t *sat);

/** Section name -> network, or -1 for an unknown name. */
int conf_section_net(const char *name, size_t len);

/** What peerd does with a bitcoind option it lacks (conf/core_opts.c says when which). */
enum conf_core_action {
	CONF_CORE_REFUSE =
	    0,            /**< stop with "not supported by peerd" (unless the value is `same`) */
	CONF_CORE_IGNORE, /**< start, and log that it is ignored */
};

/** One of bitcoind's options that peerd does not have. */
struct conf_core_opt {
	const char *name; /**< as bitcoind spells it, without '-' */
	enum conf_core_action action;
	/** A refused option's value that asks for what peerd does anyway (accepted with a
	 * warning; "0" also matches -noNAME), or NULL. */
	const char *same;
	const char *why; /**< the reason, for the message */
};

/** The table, in Core's alphabetical order, and its length. */
extern const struct conf_core_opt conf_core_opts[];
extern const size_t conf_n_core_opts;
/** The row for bitcoind's option `name` (len bytes, no '-' or "no"), or NULL. */
const struct conf_core_opt *conf_core_opt_find(const char *name, size_t len);

/** Where the differences from bitcoind are listed (named in messages). */
#define CONF_DIFFERENCES_DOC "doc/differences.md"
/** conf_core_opt_judge's verdicts. */
enum { CONF_CORE_UNKNOWN = -1, CONF_CORE_IGNORED = 0, CONF_CORE_REFUSED = 1 };
/**
 * A setting `name` (len bytes, maybe "no"-prefixed) = v (NULL: bare) that
 * is no peerd key: CONF_CORE_UNKNOWN if bitcoind has no such option
 * either; else CONF_CORE_REFUSED or CONF_CORE_IGNORED with the sentence to
 * show after the setting in msg.
 */
int conf_core_opt_judge(const char *name, size_t len, const char *v, char *msg, size_t msglen);

/** Free a list's strings and empty it (conf/defaults.c). */
void conf_list_release(struct conf_list *l);

/*
 * conf/load.c's settings, as conf/apply_areas.c reads them. A loader holds
 * every setting read (command line, file, sections) in order; `levels`
 * lists the levels that count, highest first (the command line, the
 * network's section, the top of the file).
 */
struct conf_loader;
/** Record the first error (later ones are dropped); returns its code. */
int conf_fail(struct conf_loader *L, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Whether key is set at any of the levels (cleared or negated too: Core's IsArgSet). */
bool conf_is_set(const struct conf_loader *L, enum conf_key key, const int *levels, int nl);
/** The winning scalar value of key, or NULL (unset, or cleared). */
const char *conf_scalar(const struct conf_loader *L, enum conf_key key, const int *levels, int nl);
/** A proxy is set (-proxy names one: not "", "0" or -noproxy), as Core 29 asks. */
bool conf_proxy_given(const struct conf_loader *L, const int *levels, int nl);
/** v as an unsigned number (already checked when read), or dflt when NULL. */
unsigned long long conf_uint_or(const char *v, unsigned long long dflt);
/** A fee rate key's value in sat/kvB (already checked), or dflt when NULL. */
int64_t conf_amount_or(const char *v, int64_t dflt);
/** Move a list key's winning values into out (*set: the key was given). */
int conf_fill_list(struct conf_loader *L, enum conf_key key, const int *levels, int nl,
                   struct conf_list *out, bool *set);

/* conf/apply_areas.c: each area's keys into struct peerd_conf, with Core's cross-key checks. */
/** Mempool, relay and block-assembly policy, -checkblocks/-checklevel, block files. */
int conf_apply_mempool(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl);
/** -proxy, -onion, -onlynet, -externalip, -discover, -v2transport (net/reach.c judges them). */
int conf_apply_networks(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl);
/** The RPC server's keys; nl_net counts the levels rpcport and rpcbind may come from. */
int conf_apply_rpc(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl, int nl_net);
/** -zmqpub*, -blocknotify and the other notification commands. */
int conf_apply_notify(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl);
/** -signetchallenge (Core's ReadSigNetArgs): a custom signet's parameters. */
int conf_apply_signet(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl);

#endif
