/**
 * daemon/sync/sync.h: headers-first sync and block download (sync/download.c, loop
 * thread) and the low-work headers presync (sync/presync.c, validation thread).
 * It may use the rooms below it: p2p, net and node; never txrelay, its
 * sibling (what both need goes through the wiring's callbacks).
 */
#ifndef PEERD_DAEMON_SYNC_SYNC_H
#define PEERD_DAEMON_SYNC_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/p2p/p2p.h"
#include "proto/proto.h"

struct chain;
struct chain_node;
struct daemon;
struct json_t;
struct peer;

/* ---- sync/download.c: headers-first sync and block download ---------- */

/** Blocks past the last common block that may be asked for (Core BLOCK_DOWNLOAD_WINDOW). */
#define SYNC_WINDOW 1024u
/** Blocks in flight per peer (Core MAX_BLOCKS_IN_TRANSIT_PER_PEER). */
#define SYNC_MAX_INFLIGHT_PER_PEER 16u
/** First stall timeout (Core BLOCK_STALLING_TIMEOUT_DEFAULT). */
#define SYNC_STALL_TIMEOUT_MS 2000u
/** The stall timeout doubles up to this (Core BLOCK_STALLING_TIMEOUT_MAX). */
#define SYNC_STALL_TIMEOUT_MAX_MS 64000u
/** Per new tip the stall timeout shrinks to this percentage (Core: 0.85). */
#define SYNC_STALL_DECAY_PCT 85u
/** A block asked this long ago without an answer: the peer goes (Core's base, 10 min). */
#define SYNC_BLOCK_TIMEOUT_MS (10u * 60u * 1000u)
/** A getheaders unanswered this long may be repeated (Core HEADERS_RESPONSE_TIME). */
#define SYNC_HEADERS_RESPONSE_MS (2u * 60u * 1000u)
/** A best header younger than this: getheaders to every new peer (Core: 24 h). */
#define SYNC_RECENT_HEADER_S (24 * 60 * 60)
/**
 * Received block bytes waiting for the validation thread, at most
 * (back-pressure). Blocks wait here in memory (Core writes them to disk
 * on arrival), so this is most of peerd's memory during a sync: Core's
 * DEFAULT_MAXRECEIVEBUFFER (5,000 kB), past which Core stops reading from
 * a peer, is still seconds of validation work for any block size (a 4 MB
 * block still fits: requested blocks are always taken). At 64 MiB a
 * 2,000-block sync of 24 KB blocks peaked at 42 MiB RSS; at 8 MiB the
 * assumevalid row of make bench-ibd peaked at 30.5-32.2 MiB, above half
 * of Core's 60.6 (issue 24's goal), at 5,000 kB at 27.1-28.9 MiB.
 */
#define SYNC_MAX_QUEUE_BYTES 5000000u
/** While sync jobs queue up, one in this many brings a new download window. */
#define SYNC_WINDOW_EVERY 16u
/** Locator hashes kept (chain/'s CHAIN_LOCATOR_MAX; daemon.h does not include chain/). */
#define SYNC_LOCATOR_MAX 40u

/* ---- sync/presync.c: headers presync (validation thread) ------------- */

/** Headers between two commitment bits (Core 29's HEADER_COMMITMENT_PERIOD). */
#define HSYNC_COMMIT_PERIOD 624u
/** Redownloaded headers held back before any reach the index (Core 29's REDOWNLOAD_BUFFER_SIZE). */
#define HSYNC_BUFFER_SIZE 14827u
/** A presync getheaders: the last header, then the start's locator. */
#define HSYNC_LOCATOR_MAX (SYNC_LOCATOR_MAX + 1u)

struct hsync;
/** Every peer's presync state; the validation thread's alone. */
struct hsync_table {
	struct hsync **v;
	uint32_t n, cap;
};

/** What became of a headers message that went through presync. */
enum hsync_outcome {
	HSYNC_OUT_NONE = 0,   /**< not a low-work chain: the index takes the headers */
	HSYNC_OUT_IGNORED,    /**< a short message of a low-work chain: dropped */
	HSYNC_OUT_PRESYNC,    /**< counted toward the work; more asked for */
	HSYNC_OUT_REDOWNLOAD, /**< enough work: the chain is being fetched again */
	HSYNC_OUT_DONE,       /**< the whole redownloaded chain went to the index */
	HSYNC_OUT_ABORTED,    /**< the sync ended without enough work (or the peer lied) */
};

/** hsync_on_headers' answer. */
struct hsync_result {
	bool consumed;     /**< presync handled the message: do not give it to the index */
	bool had_sync;     /**< the peer was in a presync before this message */
	bool started;      /**< this message started one */
	bool request_more; /**< send a getheaders with `locator` */
	enum hsync_outcome outcome;
	int32_t height;                     /**< how far the peer's chain got */
	struct proto_block_header *release; /**< checked headers for the index (xmalloc'd) */
	uint32_t n_release;
	uint32_t n_locator;
	struct proto_hash locator[HSYNC_LOCATOR_MAX];
};

/**
 * Core's presync for one headers message of peer_id, whose proof of work
 * and continuity were checked: decides whether the message belongs to a
 * chain below the anti-DoS work and, if so, runs it through the peer's
 * presync instead of the index. 0, or CHAIN_ENOMEM. Validation thread.
 */
int hsync_on_headers(struct hsync_table *t, struct chain *c, uint64_t peer_id,
                     const struct proto_block_header *h, uint32_t n, struct hsync_result *r);
/** The peer is gone or sent an empty headers: its presync goes. Validation thread. */
void hsync_forget(struct hsync_table *t, uint64_t peer_id);
/** Free every state (after the validation thread stopped). */
void hsync_release(struct hsync_table *t);
/** Bytes held by every presync. Validation thread. */
size_t hsync_memory(const struct hsync_table *t);
/** Whether peer_id is in presync. Validation thread. */
bool hsync_has(struct hsync_table *t, uint64_t peer_id);
/** Peers in presync. Validation thread. */
uint32_t hsync_count(const struct hsync_table *t);
/** Height peer_id's presync reached (Core's GetPresyncHeight), or -1 when it has none.
 * Validation thread. */
int32_t hsync_presync_height(struct hsync_table *t, uint64_t peer_id);

/* ---- the hooks sync/ calls: registered by the wiring ------------------ */

/**
 * What sync/ asks of a sibling room without naming it (sync/ and txrelay/
 * never call each other): the wiring fills one const table
 * (daemon/sync_hooks.c:daemon_sync_hooks) and daemon_init points
 * sync_state's hooks at it. A NULL table or member is skipped.
 */
struct sync_hooks {
	/**
	 * Serve a getdata entry for a transaction (MSG_TX, MSG_WTX, with or
	 * without the witness flag) to p, in its place among the blocks asked
	 * for. True when sent; false: sync/serve.c answers notfound. Loop thread.
	 */
	bool (*serve_tx)(struct peer *p, const struct proto_inv_vec *v);
};

/** One block of the download window. */
struct sync_block {
	struct proto_hash hash;
	int32_t height;
	bool received;     /**< handed to the validation thread */
	uint64_t peer;     /**< asked of peer id + 1; 0: not in flight */
	uint64_t asked_ms; /**< loop time it was asked */
};

/** High-bandwidth compact-block peers we keep at most (BIP152: 3). */
#define SYNC_CMPCT_HB_MAX 3u

/** The download: window, queue and counters. Loop thread. */
struct sync_state {
	struct sync_block *win; /**< the window, lowest height first */
	uint32_t n_win;
	int32_t best_height, tip_height;
	uint32_t best_time;
	struct proto_hash best_hash; /**< the best header, as the last sync job saw it */
	struct proto_hash locator[SYNC_LOCATOR_MAX]; /**< of the best header's parent */
	uint32_t n_locator;
	uint32_t n_sync_started;
	bool refresh_posted;
	bool refresh_again; /**< asked for while one was posted: post another when it is done */
	uint64_t queue_bytes, queue_bytes_max, queue_blocks;
	uint64_t stall_since_ms, stall_timeout_ms;
	uint64_t blocks_requested, blocks_accepted, blocks_invalid, blocks_dropped;
	uint64_t getheaders_sent, unconnecting, stalls, misbehaving;
	uint64_t getheaders_limited; /**< getheaders not sent: one went under 2 minutes ago */
	uint64_t headers_gated;      /**< headers messages never posted (sync/gate.c) */
	/* low-work headers (sync/presync.c), counted on the loop from job results */
	uint64_t lowwork_ignored, presync_started, presync_done, presync_aborted;
	uint64_t presync_msgs;
	uint32_t presync_peers; /**< peers in presync at the last headers job */
	uint64_t presync_bytes; /**< what their states held then */
	uint64_t presync_bytes_max;
	uint64_t sendheaders_sent;
	/** Validation thread only: every peer's presync. */
	struct hsync_table hsync;
	/**
	 * Sync jobs posted and not yet started that bring a window (headers,
	 * block, refresh; not forget), both threads: a job skips its window
	 * only while one of these is behind it.
	 */
	_Atomic uint32_t jobs_queued;
	uint32_t window_skips; /**< validation thread: jobs since the last window */
	/** The hooks the wiring registered (daemon_init, after sync_init). */
	const struct sync_hooks *hooks;
	/* sync/stale.c */
	uint32_t n_protected;         /**< peers with stale.protect set */
	uint64_t last_tip_ms;         /**< daemon_time_ms of the last new tip, 0 = none yet */
	uint64_t stale_check_ms;      /**< daemon_time_ms of the next stale-tip check */
	uint64_t extra_check_ms;      /**< daemon_time_ms of the next extra-peer check */
	uint64_t lagging_disconnects; /**< outbound peers dropped for an old chain */
	uint64_t extra_disconnects;   /**< extra outbound peers dropped */
	uint64_t stale_tips;          /**< stale tips detected */
	bool initial_sync_finished; /**< the tip was recent once (Core's m_initial_sync_finished) */
	struct sync_cmpct_state
	    *cmpct; /**< sync/cmpct_receive.c's, made on first use; NULL before */
	/** sync/cmpct_hb.c: the peers we asked for high-bandwidth compact
	 * blocks, oldest first (Core's lNodesAnnouncingHeaderAndIDs) */
	uint64_t cmpct_hb[SYNC_CMPCT_HB_MAX];
	uint32_t n_cmpct_hb;
	uint64_t cmpct_pushed;       /**< cmpctblocks pushed unasked to high-bandwidth peers */
	uint64_t cmpct_pushed_early; /**< of those, before the block was connected */
	/** sync/cmpct_recent.c: the last cmpctblock frame built for a new
	 * block (Core's m_most_recent_compact_block), xmalloc'd, or NULL. */
	uint8_t *cmpct_recent;
	size_t cmpct_recent_len;
	struct proto_hash cmpct_recent_hash;
	uint64_t cmpct_recent_reused; /**< sends of that frame after its first push */
	/** Validation thread only: the highest block built for an early push
	 * (Core's m_highest_fast_announce), and the chain listener is in. */
	int32_t cmpct_fast_height;
	bool cmpct_listening;
};

/* ---- sync/stale.c: lagging outbound peers, extra peers, a stale tip --- */

/** An outbound peer behind our tip this long gets a getheaders (Core CHAIN_SYNC_TIMEOUT). */
#define STALE_CHAIN_SYNC_TIMEOUT_MS (20u * 60u * 1000u)
/** Full-relay outbound peers spared the lagging-chain rule (Core
 * MAX_OUTBOUND_PEERS_TO_PROTECT_FROM_DISCONNECT). */
#define STALE_MAX_PROTECTED 4u
/** Between stale-tip checks (Core STALE_CHECK_INTERVAL). */
#define STALE_CHECK_INTERVAL_MS (10u * 60u * 1000u)
/** Between checks for extra outbound peers (Core EXTRA_PEER_CHECK_INTERVAL). */
#define STALE_EXTRA_PEER_CHECK_MS (45u * 1000u)
/** An extra outbound peer is evicted only after this long (Core MINIMUM_CONNECT_TIME). */
#define STALE_MIN_CONNECT_MS (30u * 1000u)

/**
 * One outbound peer's chain-sync timeout (Core's ChainSyncTimeoutState)
 * and what the validation thread last said of its best known block. Loop
 * thread.
 */
struct stale_peer {
	uint64_t timeout_ms;     /**< daemon_time_ms the peer must catch up by; 0 = no timeout */
	struct proto_hash bench; /**< our tip when the timeout was set (m_work_header) */
	bool has_bench;
	bool sent_getheaders;  /**< the one getheaders of this timeout went out */
	bool protect;          /**< one of the STALE_MAX_PROTECTED: never lagging-evicted */
	bool ge_tip;           /**< its best known block has at least our tip's work */
	bool ge_bench;         /**< ... at least the bench's work (for this bench) */
	int64_t last_announce; /**< unix seconds of its last header with more work than our tip */
};

/**
 * What the sync room keeps of one peer (p->sync): what it showed us, what
 * we asked of it, and the blocks it asked of us. Allocated with the peer
 * (sync_peer_open) and freed with it (sync_peer_close).
 */
struct sync_peer {
	/* block serving (sync/serve.c): one getdata's block requests, in order */
	struct proto_inv_vec *serve_q; /**< requests not yet read; xmalloc'd */
	uint32_t serve_head, serve_n;  /**< next to read; entries in serve_q */
	uint32_t serve_cap;
	bool serve_busy; /**< a read job for this peer is out */
	/* sync (sync/download.c) */
	int32_t best_height; /**< highest block it showed us (headers, inv, block); -1 none */
	struct proto_hash best_hash; /**< that block (Core's pindexBestKnownBlock) */
	int32_t avail_height;        /**< its best block's fork with our best header chain: it has
	                                  the window's blocks up to here; -1 none */
	uint32_t blocks_inflight;    /**< blocks asked of it, not yet received */
	uint64_t getheaders_ms;      /**< daemon_time_ms of the unanswered getheaders, 0 = none */
	bool sync_started;           /**< it was sent the first getheaders */
	bool sent_sendheaders;       /**< BIP130 sendheaders went to it */
	bool best_min_work;          /**< its best known block has more than the minimum work */
	/* which of its headers messages need the validation thread (sync/gate.c) */
	uint32_t hdr_jobs_live;          /**< headers jobs out that may connect */
	uint32_t hdr_jobs_probe;         /**< headers jobs out only to learn if they connect */
	struct proto_hash hdr_last;      /**< last header of the last headers message posted */
	struct proto_hash getheaders_at; /**< first locator hash of the last getheaders sent */
	struct stale_peer stale;         /**< lagging-chain state (sync/stale.c) */
	/** Where its headers presync got (Core's presync_height, getpeerinfo's
	 * presynced_headers), as of the last headers job back; -1: none. */
	int32_t presync_height;
};

/** Empty state. */
void sync_init(struct daemon *d);
/** Free the window. */
void sync_release(struct daemon *d);
/** The handshake is done: start headers sync with p if Core would. */
void sync_peer_ready(struct peer *p);
/** A headers message (n <= 2,000): to the validation thread. */
void sync_on_headers(struct peer *p, const struct proto_headers *h);
/** A block inv: getheaders if the block is unknown. */
void sync_on_block_inv(struct peer *p, const struct proto_hash *h);
/**
 * A block message's payload (copied; decoded on the validation thread) and
 * its frame checksum, which net/transport.c checked: kept in the index so the
 * block is served without hashing.
 */
void sync_on_block(struct peer *p, const uint8_t *payload, size_t len, uint32_t csum);
/** The active chain moved: refresh the window. Part of node/'s new_tip hook (daemon/node_hooks.c).
 */
void sync_new_tip(struct daemon *d);
/** Ask peers for the window's blocks. */
void sync_schedule(struct daemon *d);
/** Every tick: stalling and timeouts. */
void sync_tick(struct daemon *d, uint64_t now_ms);
/** A peer closes: its blocks are free to ask of others. */
void sync_peer_gone(struct peer *p);
/** Set up a new peer's p->sync (zeroed memory): nothing shown or asked yet. */
void sync_peer_init(struct peer *p);

/* ---- sync/stale.c: lagging outbound peers, extra peers, a stale tip --- */

/**
 * Every tick: Core's ConsiderEviction for every outbound full-relay and
 * block-relay-only peer, and every STALE_EXTRA_PEER_CHECK_MS Core's
 * CheckForStaleTipAndEvictPeers (EvictExtraOutboundPeers, then the
 * stale-tip check that sets d->net->try_new_outbound). Part of sync_tick,
 * which passes the mockable clock (daemon_time_ms) as now_ms. Loop thread.
 */
void stale_tick(struct daemon *d, uint64_t now_ms);
/** The active chain moved (Core's m_last_tip_update). Part of node/'s new_tip hook. */
void stale_new_tip(struct daemon *d);
/**
 * A sync job placed p's best known block: bench is the benchmark it was
 * placed against, ge_tip and ge_bench what it found. Loop thread.
 */
void stale_placed(struct peer *p, const struct proto_hash *bench, bool ge_tip, bool ge_bench);
/**
 * p's headers job is done (Core's UpdatePeerStateForReceivedHeaders):
 * announced says its last header was new and had more work than our tip;
 * a full-relay outbound peer at our tip's work may become protected.
 * Loop thread.
 */
void stale_on_headers(struct peer *p, bool announced);
/** p goes: its protection is free for another. Loop thread. */
void stale_peer_gone(struct peer *p);
/** getstats' "sync.outbound_checks" object (new reference, NULL when out of memory). */
struct json_t *stale_stats_json(struct daemon *d);

/* ---- sync/gate.c: which headers messages need the validation thread --- */

/**
 * Core's MaybeSendGetHeaders test: false while a getheaders to p younger
 * than SYNC_HEADERS_RESPONSE_MS (at now_ms, the mockable clock's
 * daemon_time_ms, as Core's NodeClock) is unanswered (an empty or a
 * connecting headers message answers one). Loop thread.
 */
bool sync_getheaders_due(const struct peer *p, uint64_t now_ms);
/**
 * Core's MaybeSendGetHeaders: a getheaders to p with locator loc (n
 * hashes; the best header's parent's when loc is NULL) when one is
 * due (counted in getheaders_limited when not). True when sent. Loop
 * thread.
 */
bool sync_maybe_getheaders(struct peer *p, const struct proto_hash *loc, uint32_t n);
/**
 * Whether p's headers message h (n >= 1) goes to the validation thread.
 * False only when its first parent is none the loop knows, no getheaders
 * is due and no job of p that could connect is out: the job could only
 * find the headers unconnecting and then send nothing. When true,
 * *probe says the job goes only to learn whether they connect (see
 * sync/gate.c). Loop thread.
 */
bool sync_gate_headers(struct peer *p, const struct proto_headers *h, bool *probe);
/** A headers job of p was posted (probe as sync_gate_headers said). Loop thread. */
void sync_gate_posted(struct peer *p, const struct proto_headers *h, bool probe);
/** A headers job of the peer with that id is done or cancelled. Loop thread. */
void sync_gate_done(struct daemon *d, uint64_t peer_id, bool probe);

/** getstats' "sync" object (new reference). */
struct json_t *sync_stats_json(struct daemon *d);

/*
 * The rest needs struct peer whole: daemon/daemon.h includes this header
 * after it.
 */

/* ---- sync/serve.c: blocks for getdata, read on the validation thread --- */

/** Blocks (getdata entries) queued per peer; one getdata holds at most PROTO_MAX_INV. */
#define SERVE_MAX_QUEUE PROTO_MAX_INV

/** Queue a getdata entry (answered in order). 0, or -ENOMEM / -ENOSPC (the entry is dropped). */
int serve_queue(struct peer *p, const struct proto_inv_vec *v);
/** Start reading the next queued block unless one is out or the peer is send-paused. */
void serve_next(struct peer *p);
/** Whether the peer waits for blocks to be served: its messages are not processed meanwhile. */
static inline bool serve_pending(const struct peer *p)
{
	return p->sync->serve_busy || p->sync->serve_n > p->sync->serve_head;
}
/** Free a closing peer's queue. */
void serve_peer_gone(struct peer *p);

/* ---- sync/announce.c: announcing new tips ---------------------------- */

/** Blocks announced by headers at most; more go as one inv of the tip (Core
 * MAX_BLOCKS_TO_ANNOUNCE). */
#define RELAY_MAX_BLOCKS_TO_ANNOUNCE 8u

/**
 * The active chain moved (u was just applied to the view): tell every
 * peer, unless in initial block download. Part of node/'s new_tip hook
 * (daemon/node_hooks.c). Loop thread.
 */
void relay_new_tip(struct daemon *d, const struct chainview_update *u);

/* ---- sync/headers.c -------------------------------------------------- */

/*
 * Handlers of the message table (daemon/msgtable.c), one per command. The
 * table checks a locator's 101 hashes and the 2,000 headers before these.
 */
/** getheaders: answer with headers after the locator's fork point. */
void headers_on_getheaders(struct peer *p, const struct proto_msg *m);
/** getblocks: answer with an inv of up to 500 blocks after the fork point. */
void headers_on_getblocks(struct peer *p, const struct proto_msg *m);
/** headers: count them and hand them to the header sync (sync_on_headers). */
void headers_on_headers(struct peer *p, const struct proto_msg *m);

/* ---- sync/cmpct_receive.c --------------------------------------------------- */

/** cmpctblock (BIP152): rebuilt from the mempool on the validation thread. Loop thread. */
void sync_cmpct_on_cmpctblock(struct peer *p, const struct proto_msg *m);
/** getblocktxn (BIP152): blocktxn from the block files (sync/cmpct_serve.c). Loop thread. */
void sync_cmpct_on_getblocktxn(struct peer *p, const struct proto_msg *m);
/** blocktxn (BIP152): fills the peer's waiting compact block. Loop thread. */
void sync_cmpct_on_blocktxn(struct peer *p, const struct proto_msg *m);
/**
 * For getdata MSG_CMPCT_BLOCK (sync/serve.c): when block n (raw, len
 * bytes) is at most 5 below the tip and the tip is recent (Core's
 * MAX_CMPCTBLOCK_DEPTH and CanDirectFetch), its cmpctblock frame (a fresh
 * random nonce) into `frame`, and true; false: send the whole block.
 * Validation thread.
 */
bool sync_cmpct_serve_build(struct chain *c, const struct proto_params *pp,
                            const struct chain_node *n, const uint8_t *raw, size_t len,
                            struct proto_writer *frame);
/**
 * The command of a block getdata in inv (download.c's), after turning a
 * single next-on-tip block's type to MSG_CMPCT_BLOCK where Core would ask
 * compactly (one block, nothing else in flight, a peer of sendcmpct
 * version 2, out of IBD). Always PROTO_CMD_GETDATA. Loop thread.
 */
enum proto_cmd sync_cmpct_getdata_cmd(struct peer *p, struct proto_inv *inv);
/* ---- sync/cmpct_hb.c: high-bandwidth compact blocks ----------------- */

/** What sync_cmpct_hb_pick decided. */
struct sync_cmpct_hb_pick {
	bool promote;     /**< send sendcmpct(1, 2) to the new peer */
	bool demote;      /**< send sendcmpct(0, 2) to demoted */
	uint64_t demoted; /**< the peer dropped from the list (when demote) */
};
/**
 * Core 29's MaybeSetPeerAsAnnouncingHeaderAndIDs on a list of peer ids
 * (ids, *n of them, oldest first, at most SYNC_CMPCT_HB_MAX): a peer
 * already there moves to the end; else it is appended, the oldest going
 * when the list is full, but an inbound newcomer never pushes out the
 * last outbound peer (the oldest outbound, if it is that one, swaps with
 * the second). kind(ctx, id): 1 inbound, 0 outbound, -1 gone. Pure.
 */
struct sync_cmpct_hb_pick sync_cmpct_hb_pick(uint64_t *ids, uint32_t *n, uint64_t id, bool inbound,
                                             int (*kind)(void *ctx, uint64_t id), void *ctx);
/**
 * A block from p became our tip (download.c's block_done; also sets
 * p->last_block_time, Core's m_last_block_time): out of initial block
 * download, make p a high-bandwidth peer if it sent sendcmpct version 2.
 */
void sync_cmpct_hb_block_from(struct peer *p, const struct proto_hash *hash);
/** getpeerinfo's bip152_hb_to: we asked p for high-bandwidth compact blocks. */
bool sync_cmpct_hb_to(const struct peer *p);
/** getpeerinfo's bip152_hb_from: p asked us (sendcmpct(1) of version 2). */
bool sync_cmpct_hb_from(const struct peer *p);
/**
 * Part of relay_new_tip: a one-block step of the tip, out of initial
 * block download, goes as a cmpctblock to every high-bandwidth peer that
 * still lacks it after the push before connecting (sync/cmpct_recent.c):
 * the most recent frame when it is this block's, else one built on the
 * validation thread. Marks those peers as knowing it, so the headers/inv
 * announcement skips them. Loop thread.
 */
void sync_cmpct_hb_push(struct daemon *d, const struct chainview_update *u);

/**
 * Validation thread: Core's NewPoWValidBlock for block b (decoded, whose
 * parent is prev): when prev is the tip, out of initial block download,
 * and b passes CheckBlock and ContextualCheckBlock, its cmpctblock frame
 * (a fresh nonce) into `frame`, and true.
 */
bool sync_cmpct_hb_early_build(struct chain *c, struct proto_block *b,
                               const struct chain_node *prev, struct proto_writer *frame);
/**
 * Loop thread: push that frame (block `hash`, parent `prev` at
 * `prev_height`) to every high-bandwidth peer that lacks it and has the
 * parent; marks them as knowing it, so the push after the connect
 * (sync_cmpct_hb_push) skips them. The caller checked that prev was the
 * tip when the frame was built. Out of initial block download only.
 */
void sync_cmpct_hb_push_early(struct daemon *d, const struct proto_hash *hash,
                              const struct proto_hash *prev, int32_t prev_height,
                              const uint8_t *frame, size_t len);

/* ---- sync/cmpct_recent.c: every new block pushed before connecting ---- */

/**
 * Validation thread, with the chain it owns (NULL: nothing): on the first
 * call, listen to the chain's new_pow_valid_block, so that every new block
 * on the tip (whole, completed by a blocktxn, mined, submitted) is built
 * as a cmpctblock and handed to the loop (validation_send_now), which
 * pushes it to high-bandwidth peers before the block is connected and
 * keeps it as the most recent one. The wiring calls it after every job.
 */
void sync_cmpct_attach(struct daemon *d, struct chain *c);
/**
 * Loop thread: keep frame (moved: *frame is NULL after) as the most
 * recent cmpctblock, of block `hash`, freeing the one before.
 */
void sync_cmpct_recent_set(struct daemon *d, const struct proto_hash *hash, uint8_t **frame,
                           size_t len);
/**
 * Loop thread: the most recent cmpctblock frame when it is of block
 * `hash` (its length in *len), else NULL. Valid until the next set.
 */
const uint8_t *sync_cmpct_recent(const struct daemon *d, const struct proto_hash *hash,
                                 size_t *len);

/** Free sync/cmpct_receive.c's state (sync_release). */
void sync_cmpct_release(struct daemon *d);
/** getstats' sync.cmpct: the compact-block counters. Loop thread. */
struct json_t *sync_cmpct_stats_json(struct daemon *d);

/* ---- sync/cfilters.c: BIP157 compact block filters (-peerblockfilters) -- */

/**
 * getcfilters and getcfheaders (m->cmd says which): the filters or filter
 * hashes of the blocks from the start height to the stop block, read from
 * -blockfilterindex on the validation thread; the peer's next messages
 * wait meanwhile. A type this node does not serve, an unknown stop hash, a
 * start past it or a range over Core's limit disconnects. Loop thread.
 */
void sync_cf_on_getcfilters(struct peer *p, const struct proto_msg *m);
/** getcfcheckpt: the filter header of every 1,000th block to the stop block. Loop thread. */
void sync_cf_on_getcfcheckpt(struct peer *p, const struct proto_msg *m);
/** cfilter, cfheaders, cfcheckpt: peerd asks for none, so ignored (undecoded), as Core. */
void sync_cf_on_answer(struct peer *p, const uint8_t *payload, size_t len, uint32_t csum);

#endif
