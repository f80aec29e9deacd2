/**
 * daemon/log.h: peerd's log lines on stderr.
 *
 * Format: `[TIMESTAMP ]LEVEL [category] message`. The timestamp (UTC,
 * ISO 8601 with microseconds) is written only when logtimestamps=1; under
 * systemd journald adds its own, so `-logtimestamps=0` there.
 *
 * ERROR, WARN and INFO lines are always written; DEBUG lines only for the
 * categories named by -debug=CAT (or all of them with -debug=1 / all).
 *
 * Threads: the loop thread writes; the struct is read-only after
 * dlog_init, so other threads could log too (stdio locks the stream).
 */
#ifndef PEERD_DAEMON_LOG_H
#define PEERD_DAEMON_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct peerd_conf;

/** Severity, most severe first. */
enum dlog_level {
	DLOG_ERROR = 0,
	DLOG_WARN,
	DLOG_INFO,
	DLOG_DEBUG,
};

/**
 * Debug categories, as named by -debug= (peerd's own names; Core's names
 * turn on several or none of them: conf_debug_apply).
 */
enum dlog_cat {
	DLOG_MAIN = 0,   /**< startup, shutdown, signals, systemd */
	DLOG_NET,        /**< listeners, connections, flow control */
	DLOG_MSG,        /**< every message sent and received */
	DLOG_HANDSHAKE,  /**< version/verack and ping */
	DLOG_INV,        /**< inventory, transaction requests */
	DLOG_ADDR,       /**< addr/addrv2/getaddr */
	DLOG_BAN,        /**< misbehaviour, discouragement, bans */
	DLOG_CTL,        /**< control socket */
	DLOG_VALIDATION, /**< the validation thread: blocks, tips, flushes (Core's "validation") */
	DLOG_BENCH,      /**< validation timings (Core's "bench") */
	DLOG_MEMPOOL,    /**< transactions accepted into the mempool (Core's "mempool") */
	DLOG_MEMPOOLREJ, /**< transactions from peers not accepted (Core's "mempoolrej") */
	DLOG_CAT__COUNT
};

/** Logger state; embedded in struct daemon. */
struct dlog {
	FILE *out; /**< stderr, or NULL with printtoconsole=0 */
	/** Bit per enum dlog_cat with debug lines enabled; the logging method
	 * and SIGHUP change it on the loop thread while others read it. */
	_Atomic uint32_t debug;
	/* What -debug=/logging named, in conf/'s terms, for the logging method
	 * (loop thread): CONF_DEBUG_* bits and Core's categories (conf_debug_apply). */
	uint32_t conf_bits, core;
	bool timestamps;
	FILE *file; /**< -debuglogfile, or NULL; swapped under node/log.c's lock */
};

/** Name of a category as -debug= spells it ("net"); never NULL. */
const char *dlog_cat_name(enum dlog_cat cat);
/** Category from its name; -1 if unknown. */
int dlog_cat_lookup(const char *name);

/**
 * Set up from the configuration: timestamps and the debug categories
 * (conf/ has already rejected unknown category names). c may be NULL
 * (defaults: no debug lines, timestamps on).
 */
void dlog_init(struct dlog *l, const struct peerd_conf *c);

/** Whether a line at this level and category would be written. */
static inline bool dlog_enabled(const struct dlog *l, enum dlog_level lvl, enum dlog_cat cat)
{
	return lvl != DLOG_DEBUG || (l->debug >> cat & 1u);
}

/** Write one line (a trailing newline is added). */
void dlog_write(const struct dlog *l, enum dlog_level lvl, enum dlog_cat cat, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define DLOG_ERR(l, cat, ...)     dlog_write((l), DLOG_ERROR, (cat), __VA_ARGS__)
#define DLOG_WARNING(l, cat, ...) dlog_write((l), DLOG_WARN, (cat), __VA_ARGS__)
#define DLOG_INFO_(l, cat, ...)   dlog_write((l), DLOG_INFO, (cat), __VA_ARGS__)
/* Debug lines cost one branch when the category is off: arguments are not evaluated. */
#define DLOG_DBG(l, cat, ...)                                                                      \
	do {                                                                                       \
		if (dlog_enabled((l), DLOG_DEBUG, (cat)))                                          \
			dlog_write((l), DLOG_DEBUG, (cat), __VA_ARGS__);                           \
	} while (0)

/**
 * Open (or, after logrotate renamed it, reopen) the -debuglogfile `path`
 * for appending; lines already being written finish in the old file.
 * 0 or -errno (the old file, if any, stays in use). Loop thread.
 */
int dlog_open_file(struct dlog *l, const char *path);
/** Close the log file (at exit). */
void dlog_close_file(struct dlog *l);
/** The debug categories' mask from a configuration (debug= less debugexclude=). */
uint32_t dlog_mask_from_conf(const struct peerd_conf *c);
/** The debug categories' mask (enum dlog_cat bits) of CONF_DEBUG_* bits. Any thread. */
uint32_t dlog_mask_from_bits(uint32_t conf_bits);
/**
 * Take the categories from a configuration (start, SIGHUP) or from the
 * logging method's CONF_DEBUG_* bits and Core categories. Loop thread.
 */
void dlog_set_debug(struct dlog *l, uint32_t conf_bits, uint32_t core);

#endif
