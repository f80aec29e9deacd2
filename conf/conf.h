/**
 * conf/conf.h: peerd's configuration: defaults, the config file (libinih),
 * command-line overrides, validation, and -help text.
 *
 * Keys follow bitcoin.conf where they mean the same thing. Precedence, as
 * bitcoind: command line > network section ([regtest], [signet], [test],
 * [testnet4], [main]) > top of file > built-in default. Repeatable keys
 * (bind, connect, addnode, debug) accumulate; a command-line value of a
 * repeatable key replaces the file's list.
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
#define CONF_DEFAULT_MAXCONNECTIONS 125
#define CONF_MAX_MAXCONNECTIONS 100000
#define CONF_DEFAULT_MAXRECEIVEBUFFER_KB 5000
#define CONF_DEFAULT_MAXSENDBUFFER_KB 1000
#define CONF_DEFAULT_PEERTIMEOUT_S 60
#define CONF_MAX_LIST 64 /**< entries in a repeatable key (bind, connect, addnode, debug) */
#define CONF_MAX_PAR 64

/** Error codes of conf_load. */
enum conf_err {
	CONF_OK = 0,
	CONF_EUSAGE = -1,   /**< bad command line (unknown option, missing value) */
	CONF_EFILE = -2,    /**< config file unreadable */
	CONF_ESYNTAX = -3,  /**< config file syntax error */
	CONF_EKEY = -4,     /**< unknown key */
	CONF_EVALUE = -5,   /**< bad value for a known key */
	CONF_ENOMEM = -6,   /**< out of memory */
	CONF_EHELP = -7,    /**< -help or -version was given: print and exit 0 */
};

/** A string list for repeatable keys. */
struct conf_list {
	char *v[CONF_MAX_LIST];
	size_t n;
};

struct peerd_conf {
	const struct proto_params *params; /**< chain= / regtest=1 etc. (default main) */
	char *conf_file;      /**< -conf, or datadir/peerd.conf if present */
	char *datadir;        /**< default ~/.peerd, or $STATE_DIRECTORY under systemd */
	bool listen;          /**< default 1 (0 when connect= is set, as bitcoind) */
	struct conf_list bind; /**< host:port or host; IPv6 in [brackets] */
	uint16_t port;        /**< default: the network's port */
	struct conf_list connect; /**< when set: no other outbound */
	struct conf_list addnode;
	int maxconnections;
	int par;              /**< script threads, 0 = auto */
	size_t maxreceivebuffer_kb;
	size_t maxsendbuffer_kb;
	int peertimeout_s;
	char *controlsocket;  /**< default datadir/control.sock */
	struct conf_list debug; /**< categories; "1" or "all" = every one */
	bool logtimestamps;
	size_t binaryfreelist;
	size_t scriptfreelist;
	bool printtoconsole;
	bool help;            /**< -help given */
	bool version;         /**< -version given */
};

/** Fill c with built-in defaults for network `params` (the datadir etc. are resolved in conf_load). */
void conf_defaults(struct peerd_conf *c);

/**
 * Parse argv (-key=value, -key, -nokey), then the config file, then apply
 * and validate. On error returns a conf_err and writes a one-line message
 * naming the file, line, key and value into err (errlen bytes).
 * CONF_EHELP means -help/-version: the caller prints conf_help() and exits 0.
 */
__attribute__((warn_unused_result)) int conf_load(struct peerd_conf *c, int argc, char **argv,
						  char *err, size_t errlen);
/** Free everything conf_load allocated. */
void conf_release(struct peerd_conf *c);
/** Text for -help: usage and every key with its default and meaning. Static storage. */
const char *conf_help(void);
/** Whether debug category `cat` is enabled. */
bool conf_debug_enabled(const struct peerd_conf *c, const char *cat);

#endif
