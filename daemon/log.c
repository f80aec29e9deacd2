/*
 * daemon/log.c: formatted log lines on stderr.
 *
 * One fprintf-style call per line into a stack buffer, then a single
 * fwrite, so lines from different call sites never interleave mid-line
 * even if another thread logs.
 */
#include "daemon/log.h"

#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "conf/conf.h"

/* A longer line is cut (and marked) rather than allocated for. */
#define DLOG_LINE_MAX 2048

static const char *const cat_names[DLOG_CAT__COUNT] = {
    [DLOG_MAIN] = "main",
    [DLOG_NET] = "net",
    [DLOG_MSG] = "msg",
    [DLOG_HANDSHAKE] = "handshake",
    [DLOG_INV] = "inv",
    [DLOG_ADDR] = "addr",
    [DLOG_BAN] = "ban",
    [DLOG_CTL] = "ctl",
    [DLOG_VALIDATION] = "validation",
    [DLOG_BENCH] = "bench",
};

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

const char *dlog_cat_name(enum dlog_cat cat)
{
	if ((unsigned)cat >= DLOG_CAT__COUNT)
		return "?";
	return cat_names[cat];
}

int dlog_cat_lookup(const char *name)
{
	for (int i = 0; i < DLOG_CAT__COUNT; i++) {
		if (strcmp(cat_names[i], name) == 0)
			return i;
	}
	return -1;
}

void dlog_init(struct dlog *l, const struct peerd_conf *c)
{
	l->out = stderr;
	l->debug = 0;
	l->timestamps = c ? c->logtimestamps : true;
	if (!c)
		return;
	for (int i = 0; i < DLOG_CAT__COUNT; i++) {
		if (conf_debug_enabled(c, cat_names[i]))
			l->debug |= 1u << i;
	}
}

void dlog_write(const struct dlog *l, enum dlog_level lvl, enum dlog_cat cat, const char *fmt, ...)
{
	char line[DLOG_LINE_MAX];
	size_t n = 0;
	if (l->timestamps) {
		struct timeval tv;
		struct tm tm;
		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		n += strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof(line) - n, ".%06ldZ ", (long)tv.tv_usec);
	}
	if ((unsigned)lvl > DLOG_DEBUG)
		lvl = DLOG_DEBUG;
	n += (size_t)snprintf(line + n, sizeof(line) - n, "%s [%s] ", level_names[lvl],
	                      dlog_cat_name(cat));
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if ((size_t)m >= sizeof(line) - n) {
		/* Truncated: mark it so a reader knows the line went on. */
		n = sizeof(line) - 5;
		memcpy(line + n, "...", 3);
		n += 3;
	} else {
		n += (size_t)m;
	}
	line[n++] = '\n';
	fwrite(line, 1, n, l->out);
}
