/*
 * daemon/sync/internal.h: what download.c and download_work.c share (not
 * a room's header: nothing outside daemon/sync/ includes it): a sync job,
 * what it brings back, and the work functions the validation thread runs.
 */
#ifndef PEERD_SYNC_INTERNAL_H
#define PEERD_SYNC_INTERNAL_H

#include "chain/chain.h"
#include "daemon/sync/sync.h"

/**
 * Core's BlockRequestAllowed (sync/serve.c): a block of the active chain,
 * or a fully validated one less than STALE_RELAY_AGE_LIMIT (30 days) older
 * than the best header both by time and by proof-equivalent time, so old
 * forks cannot fingerprint the node. For getdata and BIP157's stop block.
 * Validation thread.
 */
bool sync_block_request_allowed(struct chain *c, const struct chain_node *n);

/** A peer's best known block, and (computed) how far it shares our best chain. */
struct sync_peer_best {
	uint64_t id;
	struct proto_hash hash;
	int32_t avail;
	bool min_work; /**< its chain has more than the minimum work (Core's sendheaders rule) */
	struct proto_hash bench; /**< in: its chain-sync benchmark (sync/stale.c) */
	bool ge_tip, ge_bench;   /**< out: its block has at least the tip's, the bench's work */
};

/** What every sync job brings back: the window and the best header. */
struct sync_result {
	struct sync_peer_best *peers; /**< in: every peer's best block; out: avail filled */
	uint32_t n_peers;
	int32_t best_height;
	uint32_t best_time;
	struct proto_hash best_hash;
	int32_t tip_height;
	uint32_t n_locator; /**< locator of the best header's parent */
	struct proto_hash locator[SYNC_LOCATOR_MAX];
	uint32_t n_want;
	/** The window, n_want entries (xmalloc'd: a queued block job must not
	 * carry 1,024 of them, or a full queue of small blocks costs ~60 KB
	 * each); take_window adopts it. */
	struct sync_block *want;
	bool no_window; /**< out of memory computing it: keep the old window */
};

enum sync_job_kind { SYNC_JOB_HEADERS, SYNC_JOB_BLOCK, SYNC_JOB_REFRESH, SYNC_JOB_FORGET };

struct sync_job {
	struct val_job job;
	enum sync_job_kind kind;
	uint64_t peer_id;
	/* headers */
	struct proto_block_header *headers;
	uint32_t n_headers;
	int err;
	bool probe;     /**< posted only to learn whether it connects (sync/gate.c) */
	bool connected; /**< its first header's parent is in the index (Core clears the
	                     getheaders timestamp), or presync took it */
	bool announced; /**< its last header was new, with more work than the tip */
	struct chain_state st;
	int32_t last_height; /**< the last header accepted (or the block's height) */
	struct proto_hash last_hash;
	bool ask_more;           /**< send a getheaders from last_locator */
	uint32_t n_last_locator; /**< locator from the last header, or presync's */
	struct proto_hash last_locator[HSYNC_LOCATOR_MAX];
	struct hsync_result hs; /**< what presync made of the message */
	size_t hsync_bytes;     /**< every presync's memory after this job */
	int32_t presync_height; /**< the peer's presync height after this job; -1: none */
	uint32_t hsync_peers;
	struct daemon *d; /**< for the presync table (validation thread's part) */
	/* block */
	uint8_t *raw;
	size_t len;
	uint32_t csum; /**< its frame checksum, checked on receipt */
	enum chain_submit submit;
	/* both */
	struct sync_result res;
};

/* The work of each kind of job, on the validation thread (download_work.c):
 * they touch only their job and the chain. */
void sync_work_headers(struct chain *c, struct mempool *mp, struct val_job *j);
void sync_work_forget(struct chain *c, struct mempool *mp, struct val_job *j);
void sync_work_block(struct chain *c, struct mempool *mp, struct val_job *j);
void sync_work_refresh(struct chain *c, struct mempool *mp, struct val_job *j);

/**
 * gate.c: a reindex is running (Core's LoadingBlocks): a block, headers,
 * cmpctblock or blocktxn message is ignored with Core's debug line
 * ("Unexpected <what> message received from peer N"); true then. Loop thread.
 */
bool sync_importing(struct peer *p, const char *what);
#endif
