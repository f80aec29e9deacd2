/**
 * conf/conf.h: peerd's configuration: defaults, the config file (libinih),
 * command-line overrides, validation, and -help text.
 *
 * Keys follow bitcoin.conf where they mean the same thing. Precedence, as
 * bitcoind: command line > network section ([regtest], [signet], [test],
 * [testnet4], [main]) > top of file > built-in default. Repeatable keys
 * (bind, connect, addnode, debug) accumulate; a command-line value of a
 * repeatable key replaces the file's list, and a network section's list
 * replaces the top-level list.
 *
 * Glossary
 *   level     where a value comes from: the command line, a network
 *             section of the file, or the top of the file.
 *   negation  -nokey on the command line, nokey=1 in the file: key=0 for a
 *             scalar, an empty list for a repeatable key, no file for conf.
 *
 * Every function here runs on the main thread at startup; the resulting
 * struct is read-only afterwards and may be read from any thread.
 */
#ifndef PEERD_CONF_H
#define PEERD_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/** Limits and defaults (named so -help, docs and validation agree). */
#define CONF_DEFAULT_MAXCONNECTIONS 125 /**< bitcoind's default */
/** conf's prune_target for -prune=1: manual pruning only (Core's PRUNE_TARGET_MANUAL). */
#define CONF_PRUNE_MANUAL UINT64_MAX
/** Least -prune target, MiB (Core's MIN_DISK_SPACE_FOR_BLOCK_FILES). */
#define CONF_PRUNE_MIN_MIB               550
#define CONF_MAX_MAXCONNECTIONS          100000 /**< a sanity bound on the setting */
#define CONF_DEFAULT_MAXRECEIVEBUFFER_KB 5000   /**< bitcoind's -maxreceivebuffer */
#define CONF_DEFAULT_MAXSENDBUFFER_KB    1000   /**< bitcoind's -maxsendbuffer */
#define CONF_DEFAULT_PEERTIMEOUT_S       60     /**< bitcoind's -peertimeout */
/** Entries in a repeatable key (bind, connect, addnode, debug). */
#define CONF_MAX_LIST 64
/** Script threads at most. */
#define CONF_MAX_PAR 64
/** dbcache= default, MiB (bitcoind's DEFAULT_DB_CACHE). */
#define CONF_DEFAULT_DBCACHE_MIB 450
/** Smaller dbcache= values are raised to this, as bitcoind's MIN_DB_CACHE. */
#define CONF_MIN_DBCACHE_MIB 4
/** Largest dbcache= accepted (1 TiB). */
#define CONF_MAX_DBCACHE_MIB 1048576
/** Buffers are in units of 1,000 bytes, as bitcoind's; 4 GB is far past any sane setting. */
#define CONF_MAX_BUFFER_KB 4000000
/** peertimeout= at most: Core takes any positive count, and its tests that move
 * the mock clock run with 999999999 (the checks run on that clock). */
#define CONF_MAX_PEERTIMEOUT_S 2147483647
/** maxtipage= default, seconds (bitcoind's DEFAULT_MAX_TIP_AGE: 24 h). */
#define CONF_DEFAULT_MAXTIPAGE_S 86400
/** maxtipage= at most: about 68 years, so a regtest genesis of 2011 is young. */
#define CONF_MAX_MAXTIPAGE_S 2147483647
/**
 * Free-list capacities: the defaults equal proto/'s (spelled as plain
 * numbers for -help); 1,048,576 script buffers are 512 MiB.
 */
#define CONF_DEFAULT_BINARYFREELIST 1024    /**< PROTO_BINARY_FREELIST_CAP */
#define CONF_DEFAULT_SCRIPTFREELIST 12500   /**< PROTO_SCRIPT_FREELIST_CAP */
#define CONF_MAX_FREELIST           1048576 /**< buffers per list at most */
/** peerctl: seconds to wait for a reply (0 = forever). */
#define CONF_DEFAULT_RPCCLIENTTIMEOUT_S 30
#define CONF_MAX_RPCCLIENTTIMEOUT_S     86400 /**< a day */
/** maxrecvmemory= range, MiB: one largest message fits; 1 TiB is far past any sane setting. */
#define CONF_MIN_MAXRECVMEMORY_MIB 5
#define CONF_MAX_MAXRECVMEMORY_MIB 1048576
/** controltimeout= default and limit, seconds: an idle control client is closed. */
#define CONF_DEFAULT_CONTROLTIMEOUT_S 60
#define CONF_MAX_CONTROLTIMEOUT_S     86400
/** Mempool and relay policy, Core 29's defaults and units (-maxmempool MB, -mempoolexpiry h). */
#define CONF_DEFAULT_MAXMEMPOOL_MB   300
#define CONF_MAX_MAXMEMPOOL_MB       1000000 /**< 1 TB: far past any sane setting */
#define CONF_DEFAULT_MEMPOOLEXPIRY_H 336
#define CONF_MAX_MEMPOOLEXPIRY_H     1000000 /**< over a century */
#define CONF_DEFAULT_DATACARRIERSIZE 83      /**< Core's MAX_OP_RETURN_RELAY */
#define CONF_MAX_DATACARRIERSIZE     4000000 /**< a block's weight: no script is larger */
#define CONF_DEFAULT_BYTESPERSIGOP   20
#define CONF_MAX_BYTESPERSIGOP       1000000
#define CONF_DEFAULT_LIMIT_COUNT     25  /**< -limitancestorcount, -limitdescendantcount */
#define CONF_DEFAULT_LIMIT_KVB       101 /**< -limitancestorsize, -limitdescendantsize */
#define CONF_MAX_LIMIT_COUNT         1000000
#define CONF_MAX_LIMIT_KVB           4000000 /**< so kvB x 1,000 fits 32 bits */
/** -maxmempool's default under -blocksonly (Core's DEFAULT_BLOCKSONLY_MAX_MEMPOOL_SIZE_MB). */
#define CONF_BLOCKSONLY_MAXMEMPOOL_MB 5
/** -blockreconstructionextratxn's default (Core's DEFAULT_BLOCK_RECONSTRUCTION_EXTRA_TXN). */
#define CONF_DEFAULT_EXTRATXN 100
/** -blockreconstructionextratxn's bound (Core's is 2^32 - 1 slots, allocated at the first add). */
#define CONF_MAX_EXTRATXN 1000000
/** Core's check: -maxmempool at least this many times -limitdescendantsize (in bytes). */
#define CONF_MAXMEMPOOL_DESCENDANT_MULT 40
/** Fee rates in satoshis per 1,000 vbytes (Core's defaults for -minrelaytxfee etc.). */
#define CONF_DEFAULT_MINRELAYTXFEE       1000
#define CONF_DEFAULT_INCREMENTALRELAYFEE 1000
#define CONF_DEFAULT_DUSTRELAYFEE        3000
/** Block assembly (Core's -blockmaxweight, -blockreservedweight, -blockmintxfee defaults). */
#define CONF_MAX_BLOCKWEIGHT             4000000 /**< Core's MAX_BLOCK_WEIGHT */
#define CONF_DEFAULT_BLOCKMAXWEIGHT      4000000
#define CONF_DEFAULT_BLOCKRESERVEDWEIGHT 8000
#define CONF_MIN_BLOCKRESERVEDWEIGHT     2000 /**< Core's MINIMUM_BLOCK_RESERVED_WEIGHT */
#define CONF_DEFAULT_BLOCKMINTXFEE       1000 /**< sat/kvB */
/** Startup verification of the last blocks (Core's DEFAULT_CHECKBLOCKS, DEFAULT_CHECKLEVEL). */
#define CONF_DEFAULT_CHECKBLOCKS 6
#define CONF_DEFAULT_CHECKLEVEL  3
#define CONF_MAX_CHECKLEVEL      4          /**< a higher checklevel= counts as this, as Core */
#define CONF_MAX_CHECKBLOCKS     2147483647 /**< Core's int */
/** checkaddrman= is read as Core's int32 and clamped to this, as Core's init. */
#define CONF_MAX_CHECKADDRMAN   2147483647
#define CONF_CLAMP_CHECKADDRMAN 1000000
/** mocktime='s largest value: setmocktime's (base/clock.h's BASE_CLOCK_MAX_MOCK). */
#define CONF_MAX_MOCKTIME 9223372036LL
/** -zmqpub*hwm: libzmq's ZMQ_SNDHWM is an int. */
#define CONF_MAX_ZMQHWM 2147483647
/** The ZMQ topics, in conf's order (peerd_conf.zmqpub, .zmqhwm). */
enum conf_zmq_topic {
	CONF_ZMQ_HASHBLOCK,
	CONF_ZMQ_HASHTX,
	CONF_ZMQ_RAWBLOCK,
	CONF_ZMQ_RAWTX,
	CONF_ZMQ_SEQUENCE,
	CONF_ZMQ__COUNT
};
/** metricsbind= port when none is given. */
#define CONF_DEFAULT_METRICSPORT 9332
/** A config file larger than this is refused (a real one is a few KB). */
#define CONF_MAX_FILE_SIZE (1024 * 1024)
/** Settings (file lines plus arguments) accepted in total. */
#define CONF_MAX_SETTINGS 10000
/** Longest -minimumchainwork value: "0x" and 64 hex digits. */
#define CONF_MAX_HEX256 66
/** Longest path accepted for datadir, conf and controlsocket. */
#define CONF_MAX_PATH 4095
/** sun_path holds 108 bytes including the NUL. */
#define CONF_MAX_SOCKET_PATH 107
/** Longest host name in connect/addnode (DNS limit). */
#define CONF_MAX_HOST 253
/** The config file looked for in the datadir when -conf is not given. */
#define CONF_CONF_FILENAME "peerd.conf"
/** The control socket's name in the network's directory (default controlsocket). */
#define CONF_SOCKET_FILENAME "control.sock"
/** The default datadir's name under $HOME (outside systemd). */
#define CONF_DATADIR_NAME ".peerd"

/**
 * Debug categories, as bits of peerd_conf.debug_mask. The names are
 * conf_debug_category()'s; a name not listed there is a config error, so a
 * module that logs under a new category adds it here and in conf/keys.c.
 */
enum conf_debug {
	CONF_DEBUG_NET = 1u << 0,         /**< "net": listeners, connections, flow control */
	CONF_DEBUG_MSG = 1u << 1,         /**< "msg": every message sent and received */
	CONF_DEBUG_CTL = 1u << 2,         /**< "ctl": control socket requests */
	CONF_DEBUG_CONF = 1u << 3,        /**< "conf": the configuration in effect */
	CONF_DEBUG_MEMPOOL = 1u << 4,     /**< "mempool": transaction acceptance */
	CONF_DEBUG_VALIDATION = 1u << 5,  /**< "validation": block and header validation */
	CONF_DEBUG_MAIN = 1u << 6,        /**< "main": startup, shutdown, signals, systemd */
	CONF_DEBUG_HANDSHAKE = 1u << 7,   /**< "handshake": version/verack and ping */
	CONF_DEBUG_INV = 1u << 8,         /**< "inv": inventory, transaction requests */
	CONF_DEBUG_ADDR = 1u << 9,        /**< "addr": addr/addrv2/getaddr */
	CONF_DEBUG_BAN = 1u << 10,        /**< "ban": misbehaviour, discouragement, bans */
	CONF_DEBUG_BENCH = 1u << 11,      /**< "bench": validation timings */
	CONF_DEBUG_MEMPOOLREJ = 1u << 12, /**< "mempoolrej": transactions not accepted (Core's) */
	CONF_DEBUG_ALL = (1u << 13) - 1,  /**< "all" or "1" */
};

/** Bitcoin Core 29's debug categories (addrman ... zmq), as bits of peerd_conf.debug_core. */
#define CONF_CORE_CATS 28
/** Every Core category's bit. */
#define CONF_CORE_ALL ((1u << CONF_CORE_CATS) - 1)
/** Index of Core's category `name` (0..CONF_CORE_CATS-1, Core's order), or -1. Any thread. */
int conf_debug_core_index(const char *name);
/** Core's name of category i ("?" out of range). Any thread. */
const char *conf_debug_core_name(int i);
/**
 * Turn one -debug=/logging name on (on) or off: a Core category (its bit
 * in *core, and the peerd categories of that kind in *mask), one of peerd's
 * own names (its CONF_DEBUG_* bit), or "", "1", "all" (every one of both).
 * Returns 0, or -1 for an unknown name (nothing changed). Any thread.
 */
int conf_debug_apply(const char *name, bool on, uint32_t *mask, uint32_t *core);

/** Error codes of conf_load. */
enum conf_err {
	CONF_OK = 0,        /**< success */
	CONF_EUSAGE = -1,   /**< bad command line (unknown option, missing value) */
	CONF_EFILE = -2,    /**< config file unreadable */
	CONF_ESYNTAX = -3,  /**< config file syntax error */
	CONF_EKEY = -4,     /**< unknown key */
	CONF_EVALUE = -5,   /**< bad value for a known key */
	CONF_ENOMEM = -6,   /**< out of memory */
	CONF_EHELP = -7,    /**< -help or -version was given: print and exit 0 */
	CONF_ERR__MIN = -7, /**< lowest code, for range checks; not an error itself */
};

/** A string list for repeatable keys; more than CONF_MAX_LIST entries is CONF_EVALUE. */
struct conf_list {
	char *v[CONF_MAX_LIST]; /**< n NUL-terminated strings, owned by the peerd_conf */
	size_t n;
};

/**
 * The configuration in effect. Strings and list entries are owned by the
 * struct (conf_release frees them); read-only after conf_load.
 */
struct peerd_conf {
	const struct proto_params *params; /**< chain= / regtest=1 etc. (default main) */
	char *conf_file; /**< -conf, or datadir/peerd.conf if present; NULL if no file was read */
	char *datadir;   /**< default ~/.peerd, or $STATE_DIRECTORY under systemd */
	/** datadir given by -datadir or datadir=: it must exist (conf_check_datadir). */
	bool datadir_set;
	/**
	 * Everything one network owns (bans, control socket, .lock, later
	 * blocks/ and chainstate/): datadir itself for main, else
	 * datadir/conf_net_subdir(), as bitcoind's GetDataDirNet.
	 */
	char *netdir;
	bool listen; /**< default 1 (0 when connect= is set, as bitcoind; 1 when bind= is) */
	/** IP[:port], IPv6 in [brackets] or bare: split with conf_hostport(v, c->port). */
	struct conf_list bind;
	uint16_t port; /**< default: the network's port */
	/** host[:port], conf_hostport(v, params->default_port); no other automatic outbound. */
	struct conf_list connect;
	/** connect given at all (even -noconnect / connect=0): no automatic outbound. */
	bool connect_set;
	struct conf_list addnode; /**< host[:port], as connect */
	int maxconnections;       /**< peers, inbound and outbound together */
	int par;                  /**< script threads, 0 = auto */
	size_t dbcache_mib;       /**< UTXO cache budget in MiB (bitcoind's -dbcache) */
	/** Per peer, in 1,000 bytes: a peer with more unprocessed input is not read. */
	size_t maxreceivebuffer_kb;
	/** Per peer, in 1,000 bytes: no replies are made for a peer with more queued. */
	size_t maxsendbuffer_kb;
	/** All peers' partial messages together, MiB; 0 = scaled to maxconnections. */
	size_t maxrecvmemory_mib;
	int peertimeout_s;   /**< seconds a new peer has to finish the handshake */
	int64_t maxtipage_s; /**< a tip older than this: initial block download */
	/** -minimumchainwork as given (validated hex), empty: the network's. */
	char minimumchainwork[CONF_MAX_HEX256 + 1];
	/** -assumevalid as given (validated hex; "0" off), empty: the network's. */
	char assumevalid[CONF_MAX_HEX256 + 1];
	char *controlsocket;    /**< default netdir/control.sock */
	int controltimeout_s;   /**< an idle control client is closed after this; 0 = never */
	struct conf_list debug; /**< categories; "1" or "all" = every one */
	uint32_t debug_mask;    /**< the same as CONF_DEBUG_* bits, for cheap checks on hot paths */
	uint32_t debug_core;    /**< Core's categories named (bit i: conf_debug_core_name(i)) */
	bool logtimestamps;     /**< prefix log lines with a timestamp */
	size_t binaryfreelist;  /**< capacity for proto_freelist_configure */
	size_t scriptfreelist;  /**< capacity for proto_freelist_configure */
	bool printtoconsole;    /**< log to stderr; 0 logs nothing */
	int rpcclienttimeout_s; /**< peerctl only: reply timeout, 0 = none */
	/* Mempool and relay policy (Core's -maxmempool ... -limitdescendantsize). */
	size_t maxmempool_mb;        /**< MB (10^6 bytes) of mempool memory usage */
	int64_t mempoolexpiry_h;     /**< hours an entry may stay */
	bool persistmempool;         /**< mempool.dat read at start, written at shutdown */
	bool blocksonly;             /**< no transactions from peers (version relay=0) */
	int64_t minrelaytxfee;       /**< sat/kvB */
	int64_t incrementalrelayfee; /**< sat/kvB */
	int64_t dustrelayfee;        /**< sat/kvB */
	bool permitbaremultisig;     /**< relay bare multisig outputs */
	bool datacarrier;            /**< relay OP_RETURN outputs */
	uint32_t datacarriersize;    /**< largest OP_RETURN scriptPubKey relayed, bytes */
	/** -acceptnonstdtxn: -1 not given (the network's default), else 0/1 (test chains only). */
	int acceptnonstdtxn;
	uint32_t bytespersigop;        /**< vbytes charged per sigop */
	uint32_t limitancestorcount;   /**< entries, itself included */
	uint32_t limitancestorsize;    /**< kvB */
	uint32_t limitdescendantcount; /**< entries, itself included */
	uint32_t limitdescendantsize;  /**< kvB */
	/* Block assembly for generatetoaddress (Core's BlockAssembler options). */
	uint64_t blockmaxweight;      /**< at least blockreservedweight (raised to it, as Core) */
	uint64_t blockreservedweight; /**< header and coinbase: counted as used */
	int64_t blockmintxfee;        /**< sat/kvB */
	/* Startup verification (Core's -checkblocks, -checklevel). */
	int32_t checkblocks; /**< blocks below the tip checked at startup; 0 = all */
	int checklevel;      /**< 0-4 (a higher value is clamped to 4, as Core) */
	/* Block files and rebuilding from them (Core's -blocksxor, -reindex,
	 * -reindex-chainstate; doc/operating.md). */
	bool blocksxor;          /**< default 1: a new blocks/ gets a random xor.dat key */
	bool reindex;            /**< rebuild the block index and chain state */
	bool reindex_chainstate; /**< rebuild the chain state */
	/* Optional indexes (Core's -txindex, -blockfilterindex; index/). */
	bool txindex;          /**< keep indexes/txindex */
	bool blockfilterindex; /**< keep indexes/blockfilter/basic (=basic or =1) */
	bool coinstatsindex;   /**< keep indexes/coinstats (Core's -coinstatsindex) */
	bool peerblockfilters; /**< serve BIP157 filters, offer NODE_COMPACT_FILTERS */
	/**
	 * Core's -prune as a target in bytes: 0 off, CONF_PRUNE_MANUAL for
	 * -prune=1 (pruneblockchain only), else at least 550 MiB (chain/prune.c).
	 * Pruning is on whenever it is not 0: NODE_NETWORK_LIMITED instead of
	 * NODE_NETWORK (daemon/p2p/p2p.h), and getblocks as a pruned node's.
	 */
	uint64_t prune_target;
	bool fastprune; /**< Core's -fastprune: 64 KiB blk files, regtest prunes above 100 */
	/** fee_estimates.dat older than 60 hours is read too (regtest only, Core's option). */
	bool acceptstalefeeestimates;
	bool help;    /**< -help given */
	bool version; /**< -version given */

	/** metricsbind= as given (a checked IP[:port]); empty: no metrics endpoint. */
	char metricsbind[CONF_MAX_HOST + 8];
	char *debuglogfile; /**< log file (absolute, under netdir if given relative), or NULL */
	char *pidfile;      /**< pid file (absolute as debuglogfile), or NULL */
	char *controlsocketgroup;      /**< group owning the control socket, or NULL */
	struct conf_list debugexclude; /**< categories never logged at debug level */
	struct conf_list test;         /**< test= words as given (regtest only) */
	/** -signetchallenge as given (hex; on signet params is then the custom signet's). */
	struct conf_list signetchallenge;
	bool test_addrman;         /**< test=addrman: Core's deterministic address manager */
	bool test_addrmanloopback; /**< test=addrmanloopback: 127.0.0.0/8 kept, by /16 */
	int32_t checkaddrman;      /**< checkaddrman=, clamped to 0..1,000,000 as Core */
	int64_t mocktime; /**< -mocktime: the clock's start (base/clock.h), 0 = the system clock */
	struct conf_list vbparams; /**< -vbparams as given (daemon/node/validation.c parses them) */
	/* Networks and proxies as given; daemon/net/reach.c checks them with
	 * Core's messages when the node starts (Core's AppInitMain step 6). */
	char proxy[CONF_MAX_HOST + 8]; /**< -proxy: "" none, "0" -noproxy */
	bool proxy_set; /**< -proxy names a proxy (Core's soft-sets of -listen, -discover) */
	char onion[CONF_MAX_HOST + 8]; /**< -onion: "" as -proxy, "0" -noonion */
	bool proxyrandomize;           /**< default 1 */
	struct conf_list onlynet;      /**< network names as given; none: every network */
	int cjdnsreachable;            /**< -1 not given (Core tests IsArgSet), else 0/1 */
	struct conf_list externalip;   /**< addresses as given */
	bool discover;             /**< after Core's soft-sets (-proxy, -listen=0, -externalip) */
	bool v2transport;          /**< BIP324 v2 transport (Core's -v2transport, default 1) */
	struct conf_list seednode; /**< host[:port]: addr-fetch connections (net/outbound.c) */
	/** -signetseednode host[:port]: on signet, the DNS seeds instead of the network's
	 * (net/seeds.c) */
	struct conf_list signetseednode;
	/** bitcoind options given that peerd ignores (conf/core_opts.c), one
	 * message each naming where and why, for peerd to log at start. */
	struct conf_list ignored;
	/* Seeds (Core's -dnsseed, -fixedseeds, -forcednsseed; doc/peers.md). */
	bool dnsseed;      /**< default 1 unless connect= is given or maxconnections=0 */
	bool fixedseeds;   /**< default 1 */
	bool forcednsseed; /**< default 0; needs dnsseed */
	/** dnsserver= as given (a checked IP[:port]); empty: the system's resolvers. */
	char dnsserver[CONF_MAX_HOST + 8];
	/* HTTP JSON-RPC as given (Core's -server, -rpc*); daemon/ctl/rpc_http.c
	 * checks them at start with Core's messages (doc/rpc.md). */
	bool server;                            /**< default 1 */
	struct conf_list rpcbind;               /**< addr[:port] as given */
	uint16_t rpcport;                       /**< default: the network's (Core's) */
	bool rpcport_set;                       /**< -rpcport given */
	struct conf_list rpcallowip;            /**< subnets as given */
	int rpcthreads;                         /**< default 16 */
	int rpcworkqueue;                       /**< default 64 */
	int rpcservertimeout_s;                 /**< default 30 */
	char rpccookiefile[CONF_MAX_HOST + 8];  /**< "" default .cookie, "0" none */
	char rpccookieperms[CONF_MAX_HOST + 8]; /**< "" not given */
	struct conf_list rpcauth;               /**< user:salt$hash as given */
	char rpcuser[CONF_MAX_HOST + 8];        /**< "" none */
	char rpcpassword[CONF_MAX_HOST + 8];    /**< "" none: the cookie */
	/* Notifications as given (Core's -zmqpub*, -*notify); daemon/notify/. */
	struct conf_list zmqpub[CONF_ZMQ__COUNT]; /**< addresses per topic */
	int zmqhwm[CONF_ZMQ__COUNT];              /**< default 1000 */
	char blocknotify[CONF_MAX_HOST + 8];      /**< "" none */
	char startupnotify[CONF_MAX_HOST + 8];    /**< "" none */
	char alertnotify[CONF_MAX_HOST + 8];      /**< "" none */
	struct conf_list shutdownnotify;          /**< commands, run together */
	bool rest;                                /**< -rest: Core's REST interface; default 0 */
	/** -blockreconstructionextratxn: transactions seen but not kept, for
	 * compact blocks (daemon/node/extratxn.c) */
	uint32_t blockreconstructionextratxn;
	struct conf_list rpcwhitelist; /**< user:method,method... as given */
	bool rpcwhitelistdefault;      /**< default: whether any rpcwhitelist is given (Core's) */
};

/**
 * Fill c with built-in defaults for network main. Allocates nothing:
 * datadir, controlsocket and conf_file stay NULL until conf_load.
 */
void conf_defaults(struct peerd_conf *c);

/**
 * Parse argv (-key=value, -key, -nokey; argv[0] is the program name), then
 * the config file, then apply and validate. c need not be initialised; it
 * is always left initialised, so conf_release(c) is right after any return.
 * On error returns a conf_err and writes a one-line message naming the
 * file, line, key and value into err (errlen bytes), e.g.
 * "/etc/peerd/peerd.conf:12: maxconnections=abc: not a number".
 * CONF_EHELP means -help/-version: the caller prints conf_help() (or its
 * version when c->version) and exits 0.
 */
__attribute__((warn_unused_result)) int conf_load(struct peerd_conf *c, int argc, char **argv,
                                                  char *err, size_t errlen);

/** conf_load_args flag: stop at the first argument not starting with '-' (peerctl's METHOD). */
#define CONF_F_POSITIONAL 1u

/**
 * conf_load with flags. With CONF_F_POSITIONAL, *argi (if not NULL) gets
 * the index of the first positional argument (argc if none; "--" ends the
 * options and is skipped). Without it a positional argument is CONF_EUSAGE.
 */
__attribute__((warn_unused_result)) int conf_load_args(struct peerd_conf *c, int argc, char **argv,
                                                       unsigned flags, int *argi, char *err,
                                                       size_t errlen);

/**
 * The subdirectory of the datadir where a network's state lives, as
 * bitcoind's: "" for main (its state is at the top), "testnet3",
 * "testnet4", "signet", "regtest". Static storage; any thread.
 */
const char *conf_net_subdir(enum proto_net net);

/**
 * A datadir named by -datadir or datadir= must exist (bitcoind's rule: a
 * mistyped path is an error, not a new directory); the default one is
 * created by whoever uses it. 0, or CONF_EVALUE with Core's message
 * ("Specified data directory \"X\" does not exist.") in err. Separate from
 * conf_load, which never looks at the file system beyond the config file.
 */
__attribute__((warn_unused_result)) int conf_check_datadir(const struct peerd_conf *c, char *err,
                                                           size_t errlen);

/** Free everything conf_load allocated and reset c to defaults; safe to call twice. */
void conf_release(struct peerd_conf *c);
/**
 * Text for -help: usage and every key with its default and meaning. Static
 * storage (main thread).
 */
const char *conf_help(void);
/** Whether debug category `cat` is enabled (false for an unknown name). Any thread. */
bool conf_debug_enabled(const struct peerd_conf *c, const char *cat);
/**
 * The CONF_DEBUG_* bit of a category name, CONF_DEBUG_ALL for "all" or "1",
 * 0 if unknown. Any thread.
 */
uint32_t conf_debug_category(const char *cat);

/**
 * Split "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 literal
 * into host (without brackets, NUL-terminated, hostlen bytes) and port
 * (default_port when none is given). The host must be an IPv4/IPv6 literal
 * or a plausible DNS name. Returns 0 or CONF_EVALUE. Any thread.
 */
__attribute__((warn_unused_result)) int conf_hostport(const char *s, uint16_t default_port,
                                                      char *host, size_t hostlen, uint16_t *port);

/** A one-line English description of a conf_err; never NULL. */
const char *conf_strerror(int err);

#endif
