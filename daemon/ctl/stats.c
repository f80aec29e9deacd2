/*
 * daemon/ctl/stats.c: the getstats result and process statistics.
 *
 * Counters live in struct daemon_stats and are bumped inline where things
 * happen (loop thread only, so plain integers). This file only reads them,
 * plus the free lists (proto_freelist_stats: their own locks), the check
 * queue (pool_queue_stats: its own lock) and /proc.
 */
#include "daemon/ctl/ctl.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "pool/pool.h"

uint64_t stats_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	unsigned long long size = 0, resident = 0;
	int n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	if (n != 2)
		return 0;
	long page = sysconf(_SC_PAGESIZE);
	return resident * (uint64_t)(page > 0 ? page : 4096);
}

int stats_open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	closedir(dir);
	/* The directory stream's own descriptor was counted. */
	return n > 0 ? n - 1 : 0;
}

static json_t *messages_json(const struct daemon_stats *s)
{
	json_t *o = json_object();
	for (int i = 0; o && i < PROTO_CMD__COUNT; i++) {
		const struct stats_msg *m = &s->msg[i];
		const char *name =
		    i == PROTO_CMD_UNKNOWN ? "*other*" : proto_cmd_name((enum proto_cmd)i);
		json_object_set_new(
		    o, name,
		    json_pack("{s:I, s:I, s:I, s:I}", "recv_count", (json_int_t)m->recv_count,
		              "recv_bytes", (json_int_t)m->recv_bytes, "sent_count",
		              (json_int_t)m->sent_count, "sent_bytes", (json_int_t)m->sent_bytes));
	}
	return o;
}

static json_t *errors_json(const struct daemon_stats *s)
{
	json_t *o = json_object();
	for (int i = 1; o && i < STATS_N_ERRS; i++)
		json_object_set_new(o, proto_errname(-i),
		                    json_integer((json_int_t)s->decode_err[i]));
	return o;
}

static json_t *freelists_json(void)
{
	json_t *o = json_object();
	for (int i = 0; o && i < PROTO_FREELIST__COUNT; i++) {
		struct proto_freelist_stats fs;
		proto_freelist_stats((enum proto_freelist_id)i, &fs);
		json_object_set_new(
		    o, fs.name,
		    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "buf_size",
		              (json_int_t)fs.buf_size, "capacity", (json_int_t)fs.capacity,
		              "in_use", (json_int_t)fs.in_use, "free", (json_int_t)fs.free,
		              "high_water", (json_int_t)fs.high_water, "hits", (json_int_t)fs.hits,
		              "misses", (json_int_t)fs.misses, "bypass", (json_int_t)fs.bypass,
		              "dropped", (json_int_t)fs.dropped));
	}
	return o;
}

json_t *stats_checkqueue_json(const struct pool_queue_stats *qs, unsigned workers)
{
	uint64_t busy = 0, idle = 0;
	json_t *threads = json_array();
	for (unsigned i = 0; i < qs->threads && i < POOL_MAX_THREADS; i++) {
		const struct pool_thread_stats *t = &qs->thread[i];
		busy += t->busy_ns;
		idle += t->idle_ns;
		json_array_append_new(
		    threads, json_pack("{s:s, s:I, s:I, s:I, s:I}", "thread",
		                       i == 0 ? "validation" : "worker", "jobs",
		                       (json_int_t)t->jobs_run, "batches", (json_int_t)t->batches,
		                       "busy_ms", (json_int_t)(t->busy_ns / 1000000u), "idle_ms",
		                       (json_int_t)(t->idle_ns / 1000000u)));
	}
	return json_pack(
	    "{s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "threads", (int)qs->threads, "workers",
	    (int)workers, "rounds", (json_int_t)qs->rounds, "rounds_failed",
	    (json_int_t)qs->rounds_failed, "jobs", (json_int_t)qs->jobs_added, "jobs_run",
	    (json_int_t)qs->jobs_run, "busy_ms", (json_int_t)(busy / 1000000u), "idle_ms",
	    (json_int_t)(idle / 1000000u), "per_thread", threads ? threads : json_array());
}

/* What getstats shows when no chain (and so no check queue) is open. */
static json_t *checkqueue_json(struct daemon *d)
{
	(void)d;
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:s}", "threads", 0, "rounds", 0, "jobs", 0,
	                 "busy_ms", 0, "idle_ms", 0, "note", "no chain open");
}

json_t *stats_json(struct daemon *d)
{
	const struct daemon_stats *s = &d->stats;
	int64_t uptime = (int64_t)time(NULL) - d->start_time;
	size_t known_bytes = 0, rx_bytes = 0;
	uint32_t rx_buffers = 0;
	for (uint32_t i = 0; i < d->n_peers; i++) {
		const struct peer *p = d->peers[i];
		if (p->p2p->known_inv)
			known_bytes += hset_bytes(p->p2p->known_inv);
		if (p->rx.buf) {
			rx_buffers++;
			rx_bytes += p->rx.cap;
		}
	}
	json_t *peers = json_pack(
	    "{s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I,"
	    " s:I, s:I, s:I, s:I, s:i, s:I}",
	    "inbound", (int)d->n_inbound, "outbound", (int)d->n_outbound, "max_inbound",
	    (int)net_max_inbound(d), "maxconnections", (int)d->net->maxconnections,
	    "inbound_accepted", (json_int_t)s->inbound_accepted, "inbound_rejected_full",
	    (json_int_t)s->inbound_rejected_full, "inbound_rejected_banned",
	    (json_int_t)s->inbound_rejected_banned, "inbound_rejected_discouraged",
	    (json_int_t)s->inbound_rejected_discouraged, "outbound_attempts",
	    (json_int_t)s->outbound_attempts, "outbound_connected",
	    (json_int_t)s->outbound_connected, "outbound_failed", (json_int_t)s->outbound_failed,
	    "disconnects", (json_int_t)s->disconnects, "self_connections",
	    (json_int_t)s->self_connections, "misbehaving", (json_int_t)s->misbehaving,
	    "discouraged", (json_int_t)s->discouraged, "v2_probes_closed", (json_int_t)s->v2_probes,
	    "handshake_timeouts", (json_int_t)s->handshake_timeouts, "inactivity_timeouts",
	    (json_int_t)s->inactivity_timeouts, "ping_timeouts", (json_int_t)s->ping_timeouts,
	    "send_pauses", (json_int_t)s->send_pauses, "recv_pauses", (json_int_t)s->recv_pauses,
	    "rx_large_buffers", (json_int_t)s->rx_large_buffers, "rx_buffer_failures",
	    (json_int_t)s->rx_pool_fail, "rx_buffers_held", (int)rx_buffers, "rx_bytes_held",
	    (json_int_t)rx_bytes);
	if (peers)
		json_object_set_new(peers, "inbound_evicted",
		                    json_integer((json_int_t)s->inbound_evicted));
	if (peers) { /* net/seeds.c */
		json_object_set_new(peers, "seeds_dns_queries",
		                    json_integer((json_int_t)s->seeds_dns_queries));
		json_object_set_new(peers, "seeds_dns_found",
		                    json_integer((json_int_t)s->seeds_dns_found));
		json_object_set_new(peers, "seeds_fixed_added",
		                    json_integer((json_int_t)s->seeds_fixed_added));
	}
	json_t *inv = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I,"
	    " s:I}",
	    "inv_tx", (json_int_t)s->inv_tx, "inv_block", (json_int_t)s->inv_block, "inv_other",
	    (json_int_t)s->inv_other, "inv_known_duplicates", (json_int_t)s->inv_known_dup,
	    "inv_ignored_limit", (json_int_t)s->inv_ignored_full, "tx_tracked",
	    (json_int_t)txrequest_tracked(d), "tx_requested", (json_int_t)s->tx_requested,
	    "tx_request_timeouts", (json_int_t)s->tx_request_timeouts, "tx_received",
	    (json_int_t)s->tx_received, "tx_unsolicited", (json_int_t)s->tx_unsolicited,
	    "tx_decoded", (json_int_t)s->tx_decoded, "tx_bytes", (json_int_t)s->tx_bytes,
	    "tx_accepted", (json_int_t)s->tx_accepted, "getdata_items",
	    (json_int_t)s->getdata_items, "notfound_sent", (json_int_t)s->notfound_sent,
	    "notfound_received", (json_int_t)s->notfound_recv, "blocks_served",
	    (json_int_t)s->blocks_served, "blocks_received", (json_int_t)s->blocks_recv,
	    "known_inventory_bytes", (json_int_t)known_bytes, "tx_rejected",
	    (json_int_t)s->tx_rejected);
	json_object_set_new(inv, "tx_orphaned", json_integer((json_int_t)s->tx_orphaned));
	json_object_set_new(inv, "tx_already_have", json_integer((json_int_t)s->tx_already_have));
	json_object_set_new(inv, "tx_punished", json_integer((json_int_t)s->tx_punished));
	json_t *headers = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "headers_messages",
	    (json_int_t)s->headers_msgs, "headers_received", (json_int_t)s->headers_entries,
	    "getheaders_answered", (json_int_t)s->getheaders_answered, "getblocks_answered",
	    (json_int_t)s->getblocks_answered, "blocks_not_served",
	    (json_int_t)s->blocks_not_served, "blocks_served_stripped",
	    (json_int_t)s->blocks_served_reencoded, "announced_by_headers",
	    (json_int_t)s->blocks_announced_headers, "announced_by_inv",
	    (json_int_t)s->blocks_announced_inv, "view_height", (int)chainview_height(d));
	json_object_set_new(headers, "getcfilters_answered",
	                    json_integer((json_int_t)s->getcfilters_answered));
	json_object_set_new(headers, "getcfheaders_answered",
	                    json_integer((json_int_t)s->getcfheaders_answered));
	json_object_set_new(headers, "getcfcheckpt_answered",
	                    json_integer((json_int_t)s->getcfcheckpt_answered));
	json_object_set_new(headers, "cf_not_in_index",
	                    json_integer((json_int_t)s->cf_not_in_index));
	json_t *addr = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I}", "known", (json_int_t)addrman_size(d->addrman, -1, -1),
	    "received", (json_int_t)s->addr_entries, "learned", (json_int_t)s->addr_learned,
	    "unroutable", (json_int_t)s->addr_unroutable, "getaddr_answered",
	    (json_int_t)s->getaddr_answered, "getaddr_ignored", (json_int_t)s->getaddr_ignored);
	json_t *bans = json_pack("{s:i, s:I}", "banned", (int)d->ban->n, "discouraged_known",
	                         (json_int_t)hset_count(&d->ban->discouraged));
	json_t *process =
	    json_pack("{s:I, s:i, s:I, s:I, s:I}", "rss_bytes", (json_int_t)stats_rss_bytes(),
	              "open_fds", stats_open_fds(), "uptime", (json_int_t)uptime, "alloc_count",
	              (json_int_t)base_alloc_count(), "bytes_recv", (json_int_t)s->bytes_recv);
	json_object_set_new(process, "bytes_sent", json_integer((json_int_t)s->bytes_sent));
	json_t *out =
	    json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "uptime",
	              (json_int_t)uptime, "messages", messages_json(s), "decode_errors",
	              errors_json(s), "freelists", freelists_json(), "checkqueue",
	              checkqueue_json(d), "sync", sync_stats_json(d), "peers", peers, "inventory",
	              inv, "headers", headers, "addr", addr, "bans", bans, "process", process);
	if (out) {
		json_object_set_new(out, "recv_budget", recvbudget_json(d));
		json_object_set_new(json_object_get(out, "peers"), "bloom_disconnects",
		                    json_integer((json_int_t)s->bloom_disconnects));
		json_object_set_new(out, "control", ctl_stats_json(d));
		json_object_set_new(out, "relay", txrelay_stats_json(d));
	}
	return out;
}

json_t *recvbudget_json(struct daemon *d)
{
	const struct recvbudget *b = d->rxb;
	return json_pack("{s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I}", "limit", (json_int_t)b->limit,
	                 "held", (json_int_t)b->held, "held_max", (json_int_t)b->held_max,
	                 "waiting", (int)b->waiting, "pauses", (json_int_t)b->pauses, "grants",
	                 (json_int_t)b->grants, "evictions", (json_int_t)b->evictions, "trims",
	                 (json_int_t)b->trims);
}
