/*
 * daemon/log.c: formatted log lines on stderr.
 *
 * One fprintf-style call per line into a stack buffer, then a single
 * fwrite, so lines from different call sites never interleave mid-line
 * even if another thread logs.
 */
#include "daemon/log.h"

#include <errno.h>
#include <pthread.h>
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
    [DLOG_MEMPOOL] = "mempool",
    [DLOG_MEMPOOLREJ] = "mempoolrej",
};

/* Guards dlog.file: SIGHUP swaps it while another thread may be writing. */
static pthread_mutex_t file_mu = PTHREAD_MUTEX_INITIALIZER;

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

uint32_t dlog_mask_from_bits(uint32_t conf_bits)
{
	uint32_t m = 0;
	for (int i = 0; i < DLOG_CAT__COUNT; i++) {
		uint32_t bit = conf_debug_category(cat_names[i]);
		if (bit && (conf_bits & bit) == bit)
			m |= 1u << i;
	}
	return m;
}

uint32_t dlog_mask_from_conf(const struct peerd_conf *c)
{
	return dlog_mask_from_bits(c->debug_mask);
}

void dlog_set_debug(struct dlog *l, uint32_t conf_bits, uint32_t core)
{
	l->conf_bits = conf_bits;
	l->core = core;
	l->debug = dlog_mask_from_bits(conf_bits);
}

void dlog_init(struct dlog *l, const struct peerd_conf *c)
{
	l->out = c && !c->printtoconsole ? NULL : stderr;
	l->file = NULL;
	dlog_set_debug(l, c ? c->debug_mask : 0, c ? c->debug_core : 0);
	l->timestamps = c ? c->logtimestamps : true;
}

int dlog_open_file(struct dlog *l, const char *path)
{
	FILE *f = fopen(path, "a");
	if (!f)
		return -errno;
	/* Line-buffered: a line is in the file as soon as it is written. */
	setvbuf(f, NULL, _IOLBF, 0);
	pthread_mutex_lock(&file_mu);
	FILE *old = l->file;
	l->file = f;
	pthread_mutex_unlock(&file_mu);
	if (old)
		fclose(old);
	return 0;
}

void dlog_close_file(struct dlog *l)
{
	pthread_mutex_lock(&file_mu);
	FILE *old = l->file;
	l->file = NULL;
	pthread_mutex_unlock(&file_mu);
	if (old)
		fclose(old);
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
	if (l->out)
		fwrite(line, 1, n, l->out);
	pthread_mutex_lock(&file_mu);
	if (l->file)
		fwrite(line, 1, n, l->file);
	pthread_mutex_unlock(&file_mu);
}
