/*
 * daemon/ctl/metrics_text.c: getstats' result as Prometheus' text exposition
 * format (version 0.0.4).
 *
 * The figures are not gathered a second time: this renders the very JSON
 * getstats answers with (stats_json on the loop thread, merged with
 * ctl_chain_getstats' part from the validation thread). Naming follows
 * Prometheus' rules: every family starts with "peerd_", counters end in
 * "_total", times are in seconds (getstats' *_ms and *_s keys are
 * converted), sizes in bytes. Families with a natural label (message
 * command, decode error, free list, check-queue thread, peer direction)
 * are rendered by hand; every other number of a section becomes
 * peerd_<section>_<key>, a gauge if the section's table lists it, else a
 * counter. Pure: no I/O, any thread (allocation through xmalloc).
 */
#include "daemon/ctl/ctl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/** Longest metric name built from a section and a key. */
#define MT_MAX_NAME 128

struct mbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void mb_printf(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mb_printf(struct mbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 16384;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		char *p = xrealloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* HELP text escapes backslash and newline; label values also the double quote. */
static void mb_escaped(struct mbuf *b, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			mb_printf(b, "\\\\");
		else if (*s == '\n')
			mb_printf(b, "\\n");
		else if (quote && *s == '"')
			mb_printf(b, "\\\"");
		else
			mb_printf(b, "%c", *s);
	}
}

static void family(struct mbuf *b, const char *name, const char *type, const char *help)
{
	mb_printf(b, "# HELP %s ", name);
	mb_escaped(b, help, false);
	mb_printf(b, "\n# TYPE %s %s\n", name, type);
}

/* One sample; `label` (may be NULL) is a label name, `value_label` its value. */
static void sample(struct mbuf *b, const char *name, const char *label, const char *lvalue,
                   const char *label2, const char *lvalue2, double v)
{
	mb_printf(b, "%s", name);
	if (label) {
		mb_printf(b, "{%s=\"", label);
		mb_escaped(b, lvalue, true);
		mb_printf(b, "\"");
		if (label2) {
			mb_printf(b, ",%s=\"", label2);
			mb_escaped(b, lvalue2, true);
			mb_printf(b, "\"");
		}
		mb_printf(b, "}");
	}
	/* %.17g prints integers exactly up to 2^53 and fractions of seconds. */
	mb_printf(b, " %.17g\n", v);
}

static double num(json_t *v)
{
	if (json_is_integer(v))
		return (double)json_integer_value(v);
	if (json_is_real(v))
		return json_real_value(v);
	if (json_is_boolean(v))
		return json_is_true(v) ? 1.0 : 0.0;
	return 0.0;
}

/* ---- labelled families ---------------------------------------------------- */

static void render_messages(struct mbuf *b, json_t *msgs)
{
	static const struct {
		const char *key, *name, *help;
	} f[] = {
	    {"recv_count", "peerd_messages_received_total", "P2P messages received, by command."},
	    {"recv_bytes", "peerd_message_received_bytes_total",
	     "Bytes of P2P messages received (header and payload), by command."},
	    {"sent_count", "peerd_messages_sent_total", "P2P messages sent, by command."},
	    {"sent_bytes", "peerd_message_sent_bytes_total",
	     "Bytes of P2P messages sent (header and payload), by command."},
	};
	if (!json_is_object(msgs))
		return;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		family(b, f[i].name, "counter", f[i].help);
		const char *cmd;
		json_t *m;
		json_object_foreach(msgs, cmd, m)
		{
			sample(b, f[i].name, "command", cmd, NULL, NULL,
			       num(json_object_get(m, f[i].key)));
		}
	}
}

static void render_errors(struct mbuf *b, json_t *errs)
{
	if (!json_is_object(errs))
		return;
	family(b, "peerd_decode_errors_total", "counter",
	       "P2P messages that failed to decode, by proto/ error.");
	const char *name;
	json_t *v;
	json_object_foreach(errs, name, v)
	{
		sample(b, "peerd_decode_errors_total", "error", name, NULL, NULL, num(v));
	}
}

static void render_freelists(struct mbuf *b, json_t *lists)
{
	static const struct {
		const char *key, *name, *type, *help;
	} f[] = {
	    {"buf_size", "peerd_freelist_buffer_bytes", "gauge", "Size of one buffer of the list."},
	    {"capacity", "peerd_freelist_capacity", "gauge", "Buffers the list may hold."},
	    {"in_use", "peerd_freelist_in_use", "gauge", "Buffers handed out and not returned."},
	    {"free", "peerd_freelist_free", "gauge", "Buffers waiting in the list."},
	    {"high_water", "peerd_freelist_high_water", "gauge", "Most buffers in use at once."},
	    {"hits", "peerd_freelist_hits_total", "counter", "Buffers taken from the list."},
	    {"misses", "peerd_freelist_misses_total", "counter",
	     "Buffers allocated because the list was empty."},
	    {"bypass", "peerd_freelist_bypass_total", "counter",
	     "Requests too large for the list's buffers."},
	    {"dropped", "peerd_freelist_dropped_total", "counter",
	     "Buffers freed because the list was full."},
	};
	if (!json_is_object(lists))
		return;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		family(b, f[i].name, f[i].type, f[i].help);
		const char *list;
		json_t *l;
		json_object_foreach(lists, list, l)
		{
			sample(b, f[i].name, "list", list, NULL, NULL,
			       num(json_object_get(l, f[i].key)));
		}
	}
}

static void render_checkqueue(struct mbuf *b, json_t *q)
{
	static const struct {
		const char *key, *name, *type, *help;
		double scale;
	} f[] = {
	    {"threads", "peerd_checkqueue_threads", "gauge",
	     "Threads checking scripts (the validation thread and its workers).", 1},
	    {"workers", "peerd_checkqueue_workers", "gauge", "Worker threads of the check queue.",
	     1},
	    {"rounds", "peerd_checkqueue_rounds_total", "counter", "Batches of checks run.", 1},
	    {"rounds_failed", "peerd_checkqueue_rounds_failed_total", "counter",
	     "Batches of checks with a failure.", 1},
	    {"jobs", "peerd_checkqueue_jobs_added_total", "counter", "Checks queued.", 1},
	    {"jobs_run", "peerd_checkqueue_jobs_run_total", "counter", "Checks run.", 1},
	};
	static const struct {
		const char *key, *name, *help;
		double scale;
	} t[] = {
	    {"busy_ms", "peerd_checkqueue_thread_busy_seconds_total",
	     "Time a check-queue thread spent checking.", 1e-3},
	    {"idle_ms", "peerd_checkqueue_thread_idle_seconds_total",
	     "Time a check-queue thread spent waiting for checks.", 1e-3},
	    {"jobs", "peerd_checkqueue_thread_jobs_total", "Checks a thread ran.", 1},
	    {"batches", "peerd_checkqueue_thread_batches_total", "Batches a thread took.", 1},
	};
	if (!json_is_object(q))
		return;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		json_t *v = json_object_get(q, f[i].key);
		if (!json_is_number(v))
			continue;
		family(b, f[i].name, f[i].type, f[i].help);
		sample(b, f[i].name, NULL, NULL, NULL, NULL, num(v) * f[i].scale);
	}
	json_t *threads = json_object_get(q, "per_thread");
	if (!json_is_array(threads) || json_array_size(threads) == 0)
		return;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		family(b, t[i].name, "counter", t[i].help);
		size_t k;
		json_t *th;
		json_array_foreach(threads, k, th)
		{
			char idx[24];
			snprintf(idx, sizeof(idx), "%zu", k);
			const char *role = json_string_value(json_object_get(th, "thread"));
			sample(b, t[i].name, "thread", idx, "role", role ? role : "worker",
			       num(json_object_get(th, t[i].key)) * t[i].scale);
		}
	}
}

static void render_peers(struct mbuf *b, json_t *peers)
{
	if (!json_is_object(peers))
		return;
	family(b, "peerd_peers", "gauge", "Connected peers, by direction.");
	sample(b, "peerd_peers", "direction", "inbound", NULL, NULL,
	       num(json_object_get(peers, "inbound")));
	sample(b, "peerd_peers", "direction", "outbound", NULL, NULL,
	       num(json_object_get(peers, "outbound")));
}

/* ---- every other number: one family per key --------------------------------- */

struct section {
	const char *path;   /**< getstats key, "a.b" for a nested object */
	const char *prefix; /**< after "peerd_" */
	const char *gauges; /**< keys that are gauges, space-separated with spaces around */
	const char *skip;   /**< keys rendered elsewhere */
	const char *what;   /**< start of every HELP line */
};

static const struct section sections[] = {
    {"peers", "peers", " max_inbound maxconnections rx_buffers_held rx_bytes_held ",
     " inbound outbound ", "Connections"},
    {"inventory", "inventory", " tx_tracked seen_txs known_inventory_bytes seen_txs_bytes ", "",
     "Inventory and transaction relay"},
    {"headers", "headers", " view_height ", "", "Headers and blocks served"},
    {"addr", "addr", " known ", "", "Addresses"},
    {"bans", "bans", " banned discouraged_known ", "", "Bans"},
    {"process", "process", " rss_bytes open_fds uptime alloc_count ", "", "The process"},
    {"sync", "sync",
     " best_header_height tip_height window in_flight received_waiting sync_peers queue_blocks "
     "queue_bytes queue_bytes_max queue_bytes_cap stall_timeout_ms initialblockdownload ",
     "", "Headers sync and block download"},
    {"sync.presync", "sync_presync", " peers bytes bytes_max ", "", "Headers presync"},
    {"recv_budget", "recv_budget", " limit held held_max waiting ", "",
     "Receive memory budget (maxrecvmemory)"},
    {"control", "control", " clients max_clients idle_timeout_s queued_bytes max_queued_bytes ", "",
     "Control socket"},
    {"chain", "chain", " height index_nodes index_bytes ", "", "Validation"},
    {"coins_cache", "coins_cache", " bytes entries dirty ", "", "UTXO cache"},
    {"mempool", "mempool", " size bytes usage total_fee maxmempool mempoolminfee minrelaytxfee ",
     "", "Mempool"},
    {"mempool.script_cache", "mempool_script_cache", " entries capacity ", "", "Script cache"},
};

/* Names that would break a naming rule or say too little as they are. */
static const struct {
	const char *prefix, *key, *name;
} renames[] = {
    {"process", "alloc_count", "peerd_process_allocations"}, /* _count is a summary's */
    {"process", "uptime", "peerd_process_uptime_seconds"},
    {"bans", "banned", "peerd_bans"},
    {"mempool", "size", "peerd_mempool_transactions"},
    {"mempool", "bytes", "peerd_mempool_vsize_vbytes"},
    {"mempool", "usage", "peerd_mempool_usage_bytes"},
    {"mempool", "total_fee", "peerd_mempool_fees_satoshis"},
    {"mempool", "maxmempool", "peerd_mempool_max_bytes"},
    {"mempool", "mempoolminfee", "peerd_mempool_min_fee_sat_per_kvb"},
    {"mempool", "minrelaytxfee", "peerd_mempool_min_relay_fee_sat_per_kvb"},
    {"coins_cache", "bytes", "peerd_coins_cache_usage_bytes"},
    {"chain", "index_bytes", "peerd_chain_index_usage_bytes"},
};

static bool listed(const char *list, const char *key)
{
	char pat[MT_MAX_NAME + 2];
	snprintf(pat, sizeof(pat), " %s ", key);
	return strstr(list, pat) != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Metric name and scale for one key; false when the key does not fit. */
static bool metric_name(const struct section *sec, const char *key, bool counter, char *out,
                        size_t outlen, double *scale)
{
	*scale = 1.0;
	for (size_t i = 0; i < sizeof(renames) / sizeof(renames[0]); i++) {
		if (strcmp(renames[i].prefix, sec->prefix) == 0 &&
		    strcmp(renames[i].key, key) == 0) {
			snprintf(out, outlen, "%s%s", renames[i].name, counter ? "_total" : "");
			return true;
		}
	}
	char base[MT_MAX_NAME];
	size_t kl = strlen(key);
	if (kl >= sizeof(base))
		return false;
	memcpy(base, key, kl + 1);
	const char *unit = "";
	if (ends_with(base, "_ms")) {
		base[kl - 3] = '\0';
		unit = "_seconds";
		*scale = 1e-3;
	} else if (ends_with(base, "_s")) {
		base[kl - 2] = '\0';
		unit = "_seconds";
	}
	for (char *p = base; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	}
	int n = snprintf(out, outlen, "peerd_%s_%s%s%s", sec->prefix, base, unit,
	                 counter ? "_total" : "");
	return n > 0 && (size_t)n < outlen;
}

static void render_section(struct mbuf *b, json_t *root, const struct section *sec)
{
	char path[64];
	snprintf(path, sizeof(path), "%s", sec->path);
	char *dot = strchr(path, '.');
	if (dot)
		*dot = '\0';
	json_t *o = json_object_get(root, path);
	if (dot)
		o = json_object_get(o, dot + 1);
	if (!json_is_object(o))
		return;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v)
	{
		if (!json_is_number(v) && !json_is_boolean(v))
			continue;
		if (listed(sec->skip, key))
			continue;
		bool counter = !listed(sec->gauges, key) && !json_is_boolean(v);
		char name[MT_MAX_NAME + 32];
		double scale;
		if (!metric_name(sec, key, counter, name, sizeof(name), &scale))
			continue;
		char help[160];
		snprintf(help, sizeof(help), "%s: getstats' %s.%s%s.", sec->what, sec->path, key,
		         scale != 1.0 ? " in seconds" : "");
		family(b, name, counter ? "counter" : "gauge", help);
		sample(b, name, NULL, NULL, NULL, NULL, num(v) * scale);
	}
}

char *metrics_render(json_t *stats, size_t *len)
{
	struct mbuf b = {0};
	render_peers(&b, json_object_get(stats, "peers"));
	render_messages(&b, json_object_get(stats, "messages"));
	render_errors(&b, json_object_get(stats, "decode_errors"));
	render_freelists(&b, json_object_get(stats, "freelists"));
	render_checkqueue(&b, json_object_get(stats, "checkqueue"));
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		render_section(&b, stats, &sections[i]);
	if (b.oom || !b.p) {
		xfree(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
