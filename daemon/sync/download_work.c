/*
 * daemon/sync/download_work.c: the download's jobs on the validation
 * thread (download.c posts them and takes their results on the loop):
 * accepting headers (with presync and the proof-of-work check first),
 * submitting a block, forgetting a peer's presync, and, after each, the
 * download window and the best header's locator.
 */
#include "daemon/sync/internal.h"

#include <errno.h>
#include <string.h>

/* Validation thread: the window and the best header's locator. */
static void compute_window(struct daemon *d, struct chain *c, struct sync_result *r)
{
	struct chain_index *idx = chain_get_index(c);
	struct chain_node *best = chain_index_best_header(idx);
	struct chain_node *tip = chain_tip(c);
	r->best_height = best->height;
	r->best_time = best->time;
	r->best_hash = best->hash;
	r->tip_height = tip->height;
	r->n_locator = (uint32_t)chain_node_locator(best->prev ? best->prev : best, r->locator,
	                                            SYNC_LOCATOR_MAX);
	r->n_want = 0;
	const struct chain_work *min = chain_min_work(c);
	/* Core's FindNextBlocksToDownload asks a peer only for ancestors of
	 * its best known block, and only when that block's chain has the
	 * minimum work: here, up to its fork with our best chain. */
	for (uint32_t i = 0; i < r->n_peers; i++) {
		struct chain_node *pn = chain_index_find(idx, &r->peers[i].hash);
		bool enough = pn && chain_work_cmp(&pn->work, min) >= 0;
		struct chain_node *f = enough ? chain_node_fork(pn, best) : NULL;
		r->peers[i].avail = f ? f->height : -1;
		r->peers[i].min_work = pn && chain_work_cmp(&pn->work, min) > 0;
		struct chain_node *bn = chain_index_find(idx, &r->peers[i].bench);
		r->peers[i].ge_tip = pn && chain_work_cmp(&pn->work, &tip->work) >= 0;
		r->peers[i].ge_bench = pn && bn && chain_work_cmp(&pn->work, &bn->work) >= 0;
	}
	if (chain_work_cmp(&best->work, &tip->work) <= 0 || chain_work_cmp(&best->work, min) < 0)
		return;
	/* While more sync jobs wait behind this one, only every
	 * SYNC_WINDOW_EVERY-th brings a window: a job done but not yet taken
	 * by the loop holds its window (up to 57 KB), and a burst of small
	 * blocks would otherwise queue hundreds of them. The last job of a
	 * burst always brings one. */
	struct sync_state *ss = d->sync;
	if (atomic_load(&ss->jobs_queued) > 0 && ++ss->window_skips < SYNC_WINDOW_EVERY) {
		r->no_window = true;
		return;
	}
	ss->window_skips = 0;
	struct chain_node *fork = chain_node_fork(tip, best);
	int32_t top = fork->height + (int32_t)SYNC_WINDOW;
	if (top > best->height)
		top = best->height;
	struct chain_node *n = chain_node_ancestor(best, top);
	uint32_t k = 0;
	struct sync_block tmp[SYNC_WINDOW];
	for (; n && n != fork && k < SYNC_WINDOW; n = n->prev) {
		if ((n->status & CHAIN_HAVE_DATA) || chain_node_failed(n))
			continue;
		memset(&tmp[k], 0, sizeof(tmp[k]));
		tmp[k].hash = n->hash;
		tmp[k].height = n->height;
		k++;
	}
	if (!k)
		return;
	r->want = xreallocarray(NULL, k, sizeof(*r->want));
	if (!r->want) {
		r->no_window = true;
		return;
	}
	/* Lowest first: the order the chain needs them in. */
	for (uint32_t i = 0; i < k; i++) {
		r->want[i] = tmp[k - 1 - i];
	}
	r->n_want = k;
}

/* Core's CheckHeadersPoW: every header's proof of work, and each one's
 * parent the one before. 0 or CHAIN_EINVALID (st says which). */
static int check_headers_pow(struct chain *c, const struct proto_block_header *h, uint32_t n,
                             struct chain_state *st)
{
	const struct proto_params *p = chain_params(c);
	struct proto_hash prev;
	for (uint32_t i = 0; i < n; i++) {
		struct proto_hash hash;
		proto_block_header_hash(&h[i], &hash);
		if (i && !proto_hash_eq(&h[i].prev, &prev))
			return chain_reject(st, CHAIN_RESULT_INVALID_HEADER,
			                    "non-continuous headers sequence", NULL);
		if (!proto_check_pow(&hash, h[i].bits, &p->pow_limit))
			return chain_reject(st, CHAIN_RESULT_INVALID_HEADER, "high-hash",
			                    "header with invalid proof of work");
		prev = hash;
	}
	return 0;
}

void sync_work_headers(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct sync_job *sj = (struct sync_job *)j;
	(void)mp;
	atomic_fetch_sub(&sj->d->sync->jobs_queued, 1);
	sj->presync_height = -1;
	if (!c)
		return;
	struct chain_node *last = NULL;
	chain_state_clear(&sj->st);
	struct hsync_table *hs = &sj->d->sync->hsync;
	sj->err = check_headers_pow(c, sj->headers, sj->n_headers, &sj->st);
	bool pow_ok = !sj->err;
	struct proto_hash lh;
	proto_block_header_hash(&sj->headers[sj->n_headers - 1], &lh);
	bool had_last = chain_index_find(chain_get_index(c), &lh) != NULL;
	if (!sj->err)
		sj->err = hsync_on_headers(hs, c, sj->peer_id, sj->headers, sj->n_headers, &sj->hs);
	if (!sj->err && sj->hs.consumed) {
		/* Presync took the message: only what it released (checked
		 * against its commitments) goes to the index. */
		if (sj->hs.n_release)
			sj->err = chain_accept_headers(c, sj->hs.release, sj->hs.n_release, &last,
			                               &sj->st);
		sj->ask_more = sj->hs.request_more;
		sj->n_last_locator = sj->hs.n_locator;
		memcpy(sj->last_locator, sj->hs.locator,
		       sj->hs.n_locator * sizeof(sj->last_locator[0]));
	} else if (!sj->err) {
		sj->err = chain_accept_headers(c, sj->headers, sj->n_headers, &last, &sj->st);
		/* A full message asks for more, unless a presync owns the
		 * peer's getheaders (Core's !have_headers_sync). */
		sj->ask_more = sj->n_headers == PROTO_MAX_HEADERS && !hsync_has(hs, sj->peer_id);
	}
	/* Core's test for a connecting message: CheckHeadersPoW passed and
	 * either presync went on with it or the first parent is known. */
	sj->connected = pow_ok && (sj->hs.consumed || sj->st.result != CHAIN_RESULT_MISSING_PREV);
	xfree(sj->hs.release);
	sj->hs.release = NULL;
	sj->hsync_bytes = hsync_memory(hs);
	sj->hsync_peers = hsync_count(hs);
	sj->presync_height = hsync_presync_height(hs, sj->peer_id);
	bool presync_locator = sj->hs.consumed;
	if (last) {
		sj->announced = !had_last && proto_hash_eq(&last->hash, &lh) &&
		                chain_work_cmp(&last->work, &chain_tip(c)->work) > 0;
		for (uint32_t i = 0; i < sj->res.n_peers; i++) {
			if (sj->res.peers[i].id == sj->peer_id)
				sj->res.peers[i].hash = last->hash;
		}
		sj->last_height = last->height;
		sj->last_hash = last->hash;
		if (!presync_locator)
			sj->n_last_locator =
			    (uint32_t)chain_node_locator(last, sj->last_locator, SYNC_LOCATOR_MAX);
	}
	compute_window(sj->d, c, &sj->res);
}

void sync_work_forget(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct sync_job *sj = (struct sync_job *)j;
	(void)mp;
	(void)c;
	hsync_forget(&sj->d->sync->hsync, sj->peer_id);
}

void sync_work_block(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct sync_job *sj = (struct sync_job *)j;
	(void)mp;
	atomic_fetch_sub(&sj->d->sync->jobs_queued, 1);
	if (!c)
		return;
	struct proto_block b;
	proto_block_init(&b);
	chain_state_clear(&sj->st);
	if (proto_block_decode(sj->raw, sj->len, &b, NULL)) {
		sj->submit = CHAIN_SUBMIT_REJECTED;
		snprintf(sj->st.reason, sizeof(sj->st.reason), "block-decode-failed");
		sj->st.result = CHAIN_RESULT_CONSENSUS;
	} else {
		sj->err = chain_submit_block_csum(c, sj->raw, sj->len, &b, sj->csum, &sj->submit,
		                                  &sj->st);
		proto_block_header_hash(&b.hdr, &sj->last_hash);
		struct chain_node *n = chain_index_find(chain_get_index(c), &sj->last_hash);
		sj->last_height = n ? n->height : -1;
	}
	proto_block_release(&b);
	xfree(sj->raw);
	sj->raw = NULL;
	compute_window(sj->d, c, &sj->res);
}

void sync_work_refresh(struct chain *c, struct mempool *mp, struct val_job *j)
{
	struct sync_job *sj = (struct sync_job *)j;
	(void)mp;
	atomic_fetch_sub(&sj->d->sync->jobs_queued, 1);
	if (c)
		compute_window(sj->d, c, &sj->res);
}

/* ---- the loop side ------------------------------------------------------- */
