/*
 * daemon/sync/cfilters.c: BIP157, compact block filters served to light
 * clients (-peerblockfilters): getcfilters, getcfheaders and getcfcheckpt,
 * answered as Core 29's ProcessGetCFilters, ProcessGetCFHeaders and
 * ProcessGetCFCheckPt.
 *
 * On the loop the filter type is judged (Core's PrepareBlockFilterRequest
 * disconnects a peer asking for a type the node does not offer, and a node
 * without -peerblockfilters offers none). The rest needs the block index
 * and the filter index, both the validation thread's: one job looks the
 * stop hash up, applies Core's checks (known and servable as a block is,
 * a start height not past it, at most 1,000 filters or 2,000 filter
 * hashes) and reads the index, building every answer frame there; the
 * loop then sends them, or disconnects with Core's reason. While the job
 * is out the peer's next messages wait (serve_busy, as sync/serve.c's
 * block reads), so answers keep the order of the requests, as Core's.
 *
 * A block the index does not hold (yet: it catches up in the background)
 * gets no answer at all, as Core's "Failed to find block filter in index".
 * Stale blocks are served, from the index's entries by hash (a reorg
 * keeps them), under Core's BlockRequestAllowed: fully validated, and
 * less than STALE_RELAY_AGE_LIMIT (30 days) older than the best header
 * both by time and by the work between them (so a stale block cannot be
 * used to fingerprint the node long after).
 *
 * Counted in getstats' "headers" section: each request answered by its
 * kind, and those left unanswered because the index lacks a filter.
 */
#include "daemon/sync/internal.h"

#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "index/index.h"

/** One request on its way to the validation thread and back. */
struct cf_job {
	struct val_job job;
	struct daemon *d;
	struct index_set *idx; /**< d->indexes: the validation thread's */
	uint64_t peer_id;
	enum proto_cmd cmd; /**< GETCFILTERS, GETCFHEADERS or GETCFCHECKPT */
	uint8_t filter_type;
	uint32_t start_height;
	struct proto_hash stop_hash;
	/* The answer, built on the validation thread. */
	char why[160];         /**< a disconnect reason; empty: none */
	struct proto_writer w; /**< the answer's frames, back to back */
	uint32_t *ends;        /**< where each frame ends in w (xmalloc'd) */
	uint32_t n_frames;
};

/* Core's PrepareBlockFilterRequest's first check: a type this node offers. */
static bool type_served(const struct peer *p, uint8_t type)
{
	return type == PROTO_FILTER_BASIC &&
	       (daemon_local_services(p->d) & PROTO_NODE_COMPACT_FILTERS) != 0;
}

/* Validation thread: the rest of PrepareBlockFilterRequest. NULL, or the
 * stop block, when the request may be answered. */
static struct chain_node *prepare(struct chain *c, struct cf_job *j, uint32_t max_diff)
{
	struct chain_node *n = c ? chain_index_find(chain_get_index(c), &j->stop_hash) : NULL;
	/* Known, and a block the peer would be allowed to fetch. */
	if (!n || !sync_block_request_allowed(c, n)) {
		char hex[65];
		proto_hash_to_hex(&j->stop_hash, hex);
		snprintf(j->why, sizeof(j->why), "peer requested invalid block hash: %s", hex);
		return NULL;
	}
	uint32_t stop_height = (uint32_t)n->height;
	if (j->start_height > stop_height) {
		snprintf(j->why, sizeof(j->why),
		         "peer sent invalid getcfilters/getcfheaders with start height %u and stop "
		         "height %u",
		         j->start_height, stop_height);
		return NULL;
	}
	if (stop_height - j->start_height >= max_diff) {
		snprintf(j->why, sizeof(j->why),
		         "peer requested too many cfilters/cfheaders: %u / %u",
		         stop_height - j->start_height + 1, max_diff);
		return NULL;
	}
	return n;
}

/* Start a frame in the answer. */
static size_t frame_begin(struct cf_job *j)
{
	return proto_frame_begin(&j->w);
}

/* End it and note where it ends. */
static void frame_end(struct cf_job *j, size_t start, enum proto_cmd cmd)
{
	proto_frame_end(&j->w, start, j->d->params->magic, proto_cmd_name(cmd));
	if (!j->w.err)
		j->ends[j->n_frames++] = (uint32_t)j->w.len;
}

/* Block n's filter hash (SHA256d of the filter) and header; false when
 * the index does not hold it. */
static bool read_filter(struct cf_job *j, const struct chain_node *n, struct proto_hash *hash,
                        struct proto_hash *header)
{
	uint8_t *filter = NULL;
	size_t len = 0;
	struct proto_hash hdr;
	if (index_filter_find(j->idx, &n->hash, &filter, &len, &hdr) != INDEX_OK)
		return false;
	if (hash)
		proto_sha256d(filter, len, hash->b);
	if (header)
		*header = hdr;
	xfree(filter);
	return true;
}

/* getcfilters: one cfilter per block, start height to the stop block. */
static bool answer_cfilters(struct cf_job *j, struct chain_node *stop)
{
	uint32_t n = (uint32_t)stop->height - j->start_height + 1;
	if (!(j->ends = xreallocarray(NULL, n, sizeof(*j->ends))))
		return false;
	/* Read them all first: Core sends nothing when one is missing. */
	for (uint32_t i = 0; i < n; i++) {
		struct chain_node *b = chain_node_ancestor(stop, (int32_t)(j->start_height + i));
		uint8_t *filter = NULL;
		size_t len = 0;
		struct proto_hash hdr;
		if (!b || index_filter_find(j->idx, &b->hash, &filter, &len, &hdr) != INDEX_OK)
			return false;
		size_t at = frame_begin(j);
		proto_write_u8(&j->w, j->filter_type);
		proto_write_hash(&j->w, &b->hash);
		proto_write_compact(&j->w, len);
		proto_write_bytes(&j->w, filter, len);
		xfree(filter);
		frame_end(j, at, PROTO_CMD_CFILTER);
	}
	return !j->w.err;
}

/* getcfheaders: the header before the start, and each block's filter hash. */
static bool answer_cfheaders(struct cf_job *j, struct chain_node *stop)
{
	struct proto_cfhashes h = {.filter_type = j->filter_type, .stop_hash = stop->hash};
	bool ok = false;
	uint32_t n = (uint32_t)stop->height - j->start_height + 1;
	if (j->start_height > 0) {
		struct chain_node *prev = chain_node_ancestor(stop, (int32_t)j->start_height - 1);
		if (!prev || !read_filter(j, prev, NULL, &h.prev_header))
			return false;
	}
	if (proto_cfhashes_reserve(&h, n) || !(j->ends = xmalloc(sizeof(*j->ends))))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		struct chain_node *b = chain_node_ancestor(stop, (int32_t)(j->start_height + i));
		if (!b || !read_filter(j, b, &h.hashes[i], NULL))
			goto out;
	}
	h.n = n;
	size_t at = frame_begin(j);
	proto_cfheaders_encode(&h, &j->w);
	frame_end(j, at, PROTO_CMD_CFHEADERS);
	ok = !j->w.err;
out:
	proto_cfhashes_release(&h);
	return ok;
}

/* getcfcheckpt: the filter header of every 1,000th block up to the stop block. */
static bool answer_cfcheckpt(struct cf_job *j, struct chain_node *stop)
{
	struct proto_cfhashes h = {.filter_type = j->filter_type, .stop_hash = stop->hash};
	bool ok = false;
	uint32_t n = (uint32_t)stop->height / PROTO_CFCHECKPT_INTERVAL;
	if (proto_cfhashes_reserve(&h, n) || !(j->ends = xmalloc(sizeof(*j->ends))))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		int32_t height = (int32_t)((i + 1) * PROTO_CFCHECKPT_INTERVAL);
		struct chain_node *b = chain_node_ancestor(stop, height);
		if (!b || !read_filter(j, b, NULL, &h.hashes[i]))
			goto out;
	}
	h.n = n;
	size_t at = frame_begin(j);
	proto_cfcheckpt_encode(&h, &j->w);
	frame_end(j, at, PROTO_CMD_CFCHECKPT);
	ok = !j->w.err;
out:
	proto_cfhashes_release(&h);
	return ok;
}

static void cf_work(struct chain *c, struct mempool *mp, struct val_job *job)
{
	struct cf_job *j = (struct cf_job *)job;
	(void)mp;
	uint32_t max_diff = j->cmd == PROTO_CMD_GETCFILTERS    ? PROTO_MAX_GETCFILTERS
	                    : j->cmd == PROTO_CMD_GETCFHEADERS ? PROTO_MAX_GETCFHEADERS
	                                                       : UINT32_MAX;
	struct chain_node *stop = prepare(c, j, max_diff);
	if (!stop || !j->idx)
		return;
	bool ok = j->cmd == PROTO_CMD_GETCFILTERS    ? answer_cfilters(j, stop)
	          : j->cmd == PROTO_CMD_GETCFHEADERS ? answer_cfheaders(j, stop)
	                                             : answer_cfcheckpt(j, stop);
	if (!ok)
		j->n_frames = 0; /* all or nothing, as Core */
}

static void cf_free(struct cf_job *j)
{
	proto_writer_release(&j->w);
	xfree(j->ends);
	xfree(j);
}

static void cf_done(struct daemon *d, struct val_job *job)
{
	struct cf_job *j = (struct cf_job *)job;
	struct peer *p = peer_by_id(d, j->peer_id);
	if (!p || p->state == PEER_CLOSING) {
		cf_free(j);
		return;
	}
	p->sync->serve_busy = false;
	if (!job->cancelled && j->why[0]) {
		peer_disconnect(p, j->why);
		cf_free(j);
		return;
	}
	if (!job->cancelled && j->n_frames)
		*(j->cmd == PROTO_CMD_GETCFILTERS    ? &d->stats.getcfilters_answered
		  : j->cmd == PROTO_CMD_GETCFHEADERS ? &d->stats.getcfheaders_answered
		                                     : &d->stats.getcfcheckpt_answered) += 1;
	if (!job->cancelled && !j->n_frames) {
		d->stats.cf_not_in_index++;
		DLOG_DBG(
		    &d->log, DLOG_NET,
		    "Failed to find block filter in index: filter_type=basic, start_height=%u, "
		    "peer=%llu",
		    j->start_height, (unsigned long long)p->id);
	}
	uint32_t from = 0;
	for (uint32_t i = 0; !job->cancelled && i < j->n_frames && p->state != PEER_CLOSING; i++) {
		peer_send_frame(p,
		                j->cmd == PROTO_CMD_GETCFILTERS    ? PROTO_CMD_CFILTER
		                : j->cmd == PROTO_CMD_GETCFHEADERS ? PROTO_CMD_CFHEADERS
		                                                   : PROTO_CMD_CFCHECKPT,
		                j->w.buf + from, j->ends[i] - from);
		from = j->ends[i];
	}
	cf_free(j);
	if (p->state != PEER_CLOSING) {
		serve_next(p);
		/* The answer is out: messages that waited go on. */
		if (!serve_pending(p) && !p->send_paused)
			peer_resume(p);
	}
}

/* The three requests: the type on the loop, the rest on the validation thread. */
static void request(struct peer *p, enum proto_cmd cmd, uint8_t type, uint32_t start,
                    const struct proto_hash *stop)
{
	struct daemon *d = p->d;
	if (!type_served(p, type)) {
		char why[80];
		snprintf(why, sizeof(why), "peer requested unsupported block filter type: %u",
		         (unsigned)type);
		peer_disconnect(p, why);
		return;
	}
	struct cf_job *j = xcalloc(1, sizeof(*j));
	if (!j)
		return;
	j->job.work = cf_work;
	j->job.done = cf_done;
	j->d = d;
	j->idx = d->indexes;
	j->peer_id = p->id;
	j->cmd = cmd;
	j->filter_type = type;
	j->start_height = start;
	j->stop_hash = *stop;
	proto_writer_init(&j->w);
	if (validation_post(d, &j->job)) {
		xfree(j);
		return;
	}
	p->sync->serve_busy = true;
}

void sync_cf_on_getcfilters(struct peer *p, const struct proto_msg *m)
{
	const struct proto_getcfilters *g = &m->getcfilters;
	request(p, m->cmd, g->filter_type, g->start_height, &g->stop_hash);
}

void sync_cf_on_getcfcheckpt(struct peer *p, const struct proto_msg *m)
{
	request(p, m->cmd, m->getcfcheckpt.filter_type, 0, &m->getcfcheckpt.stop_hash);
}

void sync_cf_on_answer(struct peer *p, const uint8_t *payload, size_t len, uint32_t csum)
{
	(void)payload;
	(void)csum;
	/* Core has no handler for the answers: "Unknown command", ignored. */
	DLOG_DBG(&p->d->log, DLOG_NET, "ignoring a BIP157 answer (%zu bytes) from peer=%llu", len,
	         (unsigned long long)p->id);
}
