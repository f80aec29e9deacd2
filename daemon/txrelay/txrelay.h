/**
 * daemon/txrelay/txrelay.h: transaction relay (txrelay/announce.c,
 * txrelay/accept.c, txrelay/request.c): the transaction request tracker,
 * the loop's mirror of the mempool, announcements trickled to each peer,
 * getdata served from the mirror or the most recent block, fee filters,
 * and the orphanage's use. It may use the rooms below it: p2p, net and
 * node; never sync, its sibling.
 *
 * Thread: the loop thread owns all of it, except the fields and calls
 * marked "validation thread".
 */
#ifndef PEERD_DAEMON_TXRELAY_TXRELAY_H
#define PEERD_DAEMON_TXRELAY_TXRELAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/hset.h"
#include "daemon/p2p/p2p.h"
#include "daemon/txrelay/orphanage.h"
#include "proto/proto.h"

/** feefilter peerd sends: Core's default minimum relay fee, sat/kvB. */
#define DAEMON_FEEFILTER_SAT_KVB 1000
/**
 * feefilter during initial block download: Core asks for MAX_MONEY per kvB
 * and rounds it down to its top fee bucket (FeeFilterRounder), which is
 * this, so no peer sends transactions.
 */
#define DAEMON_FEEFILTER_IBD_SAT_KVB 9170997

struct chain;
struct chain_node;
struct daemon;
struct json_t;
struct peer;
struct val_job;

/** Average gap between announcements to inbound peers, one timer for all (Core 5 s). */
#define RELAY_INBOUND_INTERVAL_MS 5000u
/** Average gap between announcements to one outbound peer, its own timer (Core 2 s). */
#define RELAY_OUTBOUND_INTERVAL_MS 2000u
/** Core's INVENTORY_BROADCAST_PER_SECOND at 638a4c0bd8. */
#define RELAY_BROADCAST_PER_SECOND 7u
/** Core's INVENTORY_BROADCAST_TARGET: per second times the inbound interval. */
#define RELAY_BROADCAST_TARGET (RELAY_BROADCAST_PER_SECOND * (RELAY_INBOUND_INTERVAL_MS / 1000u))
/** Core's INVENTORY_BROADCAST_MAX: announcements per trickle at most. */
#define RELAY_BROADCAST_MAX 1000u
/** The relay timer's period (Core's message handler wakes every 100 ms). */
#define RELAY_TIMER_MS 100u
/** Average gap between feefilter checks (Core AVG_FEEFILTER_BROADCAST_INTERVAL). */
#define RELAY_FEEFILTER_INTERVAL_MS (10u * 60u * 1000u)
/** A big change of the filter goes out within this (Core MAX_FEEFILTER_CHANGE_DELAY). */
#define RELAY_FEEFILTER_CHANGE_DELAY_MS (5u * 60u * 1000u)
/** Raw bytes of mempool transactions the loop keeps to serve getdata (newest first). */
#define RELAY_RAW_MAX_BYTES (64u << 20)
/** Announcements waiting per peer at most (Core's is unbounded; past it the newest are lost). */
#define RELAY_PEER_QUEUE_MAX 50000u
/** Rejected wtxids remembered (Core's m_lazy_recent_rejects: 120,000). */
#define RELAY_REJECTS_MAX 120000u
/** Recently confirmed txids and wtxids remembered (Core's m_lazy_recent_confirmed_transactions). */
#define RELAY_CONFIRMED_MAX 48000u
/** Connected blocks whose transactions the validation thread reads for relay at most per update. */
#define RELAY_FEED_MAX_BLOCKS 8u
/**
 * Transaction bytes waiting for the validation thread, at most: past it a
 * received transaction is dropped (counted), so a peer flooding large
 * transactions cannot grow the queue without bound (Core reads no further
 * message of a peer until its transaction is done).
 */
#define RELAY_MAX_QUEUE_BYTES (32u << 20)
/** Fee filter buckets (Core's FeeFilterRounder: 500 sat/kvB times 1.1^k up to 1e7). */
#define RELAY_FEE_BUCKETS_MAX 128u

/** A mempool transaction as the loop mirrors it (see txrelay/announce.c). */
struct relay_tx {
	struct proto_hash txid, wtxid;
	int64_t fee;          /**< base fee (feefilter compares it) */
	int64_t modified_fee; /**< with prioritisation (ordering) */
	int64_t vsize;
	uint64_t ancestors; /**< in-mempool ancestors, itself included, when it entered */
	uint64_t seq;       /**< the loop's entry sequence (Core's mempool sequence) */
	uint8_t *raw;       /**< with witness; NULL once past RELAY_RAW_MAX_BYTES */
	uint32_t len;
	uint32_t next_free; /**< free-list link while unused */
	bool used;
	bool unbroadcast; /**< in the chain's unbroadcast set: the first getdata removes it */
};

/** Per-peer relay state, allocated when the handshake is done. */
struct relay_peer {
	uint64_t *q; /**< entry sequences waiting to be announced */
	uint32_t n, cap;
	uint64_t next_inv_ms;  /**< next trickle (Core m_next_inv_send_time) */
	uint64_t last_inv_seq; /**< entries below it may be served (Core m_last_inv_sequence) */
	uint64_t next_feefilter_ms; /**< Core m_next_send_feefilter */
};

/** The most recent block's transactions, for getdata (Core m_most_recent_block_txs). */
struct relay_block_txs {
	uint8_t *buf; /**< every tx with witness, back to back */
	struct relay_block_tx {
		struct proto_hash txid, wtxid;
		uint32_t off, len;
	} * v;
	uint32_t n;
	struct hmap idx; /**< fingerprint of txid and of wtxid -> index in v */
};

struct relay_feed;

/** Relay counters for getstats. */
struct relay_stats {
	uint64_t queued, announced, trickles, inv_msgs, skipped_known, skipped_gone,
	    skipped_feefilter, queue_full;
	uint64_t getdata_tx, served, served_block, notfound;
	uint64_t feefilters_sent, feeds, added, removed, raw_dropped;
	uint64_t orphan_jobs;
	uint64_t queue_bytes, queue_dropped; /**< tx bytes with the validation thread; drops */
};

/** Transaction relay; loop thread except where marked (validation thread). */
struct txrelay_state {
	struct relay_tx *v; /**< slab; free slots chained through next_free */
	uint32_t cap, used, free_head;
	struct hmap by_txid, by_wtxid, by_seq;
	uint64_t seq;       /**< the last entry sequence given */
	uint64_t raw_floor; /**< the oldest sequence that may still hold raw bytes */
	uint64_t raw_bytes;
	struct relay_block_txs block;
	/** The inbound peers' shared trickle time (Core m_next_inv_to_inbounds). */
	uint64_t inbound_next_ms;
	struct hset rejects, reconsiderable, confirmed;
	struct orphanage orphans;
	bool orphan_busy; /**< an orphan is with the validation thread */
	uv_timer_t timer; /**< the trickle and feefilter timer (RELAY_TIMER_MS) */
	bool timer_on;
	double buckets[RELAY_FEE_BUCKETS_MAX];
	uint32_t n_buckets;
	/** The mempool's rolling minimum fee, published by the validation thread. */
	_Atomic int64_t minfee;
	struct relay_stats st;
	const struct relay_tx **pick; /**< trickle scratch, grown to the longest queue */
	uint32_t pick_cap;
	uint64_t next_rebroadcast_ms; /**< re-announce the unbroadcast set (10-15 min, Core) */
	bool rebroadcast_busy;        /**< that job is with the validation thread */
	/* validation thread only */
	struct relay_feed *feed;           /**< events since the last job, NULL when none */
	const struct chain_node *feed_tip; /**< the tip the last feed described */
	bool feed_started;                 /**< events registered, the loaded pool described */
};

/* ---- txrelay/request.c: the transaction request tracker -------------- */

/** Announcements tracked at once, all peers. */
#define TXREQUEST_MAX_TRACKED 100000u
/** Announcements tracked per peer (Core MAX_PEER_TX_ANNOUNCEMENTS). */
#define TXREQUEST_MAX_PEER_ANNOUNCEMENTS 5000u
/** Requests in flight per peer (Core MAX_PEER_TX_REQUEST_IN_FLIGHT). */
#define TXREQUEST_MAX_PEER_INFLIGHT 100u
/** A request unanswered this long falls back to another announcer (Core GETDATA_TX_INTERVAL). */
#define TXREQUEST_GETDATA_TX_INTERVAL_MS 60000u
/** Announcers remembered per transaction. */
#define TXREQUEST_MAX_ANNOUNCERS 4u

/** The transaction request tracker (Core's TxRequestTracker, simplified). */
struct txrequest_state {
	struct hmap req_index;        /**< fingerprint of hash -> slot in reqs */
	struct txrequest_entry *reqs; /**< slab; free slots chained through next_free */
	uint32_t reqs_cap, reqs_used, free_head;
	struct txrequest_pending *pending; /**< scratch for the tick's requests */
	size_t pending_cap;
};

/** What the tracker keeps of one peer (p->txreq; the wiring allocates it with the peer). */
struct txrequest_peer {
	uint32_t tx_announced; /**< tracked announcements naming this peer */
	uint32_t tx_inflight;  /**< getdata requests outstanding to this peer */
};

/** Set up the tracker (allocates nothing yet). 0. Loop thread, from daemon_init. */
int txrequest_init(struct daemon *d);
/** Free the tracker. */
void txrequest_release(struct daemon *d);
/** Request timeouts and fallback to other announcers; batched getdata. now_ms is the
 * mockable clock's (daemon_time_ms), as Core's request times. Loop thread. */
void txrequest_tick(struct daemon *d, uint64_t now_ms);
/** Announcements tracked now. */
uint32_t txrequest_tracked(const struct daemon *d);
/**
 * p2p's tx_notfound hook: if p was asked for v and has not answered, p is
 * no longer a source; the next tick asks another announcer.
 */
void txrequest_on_notfound(struct peer *p, const struct proto_inv_vec *v);

/* ---- txrelay/announce.c, txrelay/accept.c ---------------------------- */

/** Set up (allocates nothing). 0. Loop thread, from daemon_init. */
int txrelay_init(struct daemon *d);
/** Free everything (the timer must be closed already). */
void txrelay_release(struct daemon *d);
/** Start the trickle timer (main.c, once the loop runs). 0 or a libuv error. */
int txrelay_start(struct daemon *d);
/** Stop and close the timer (shutdown). */
void txrelay_stop(struct daemon *d);
/**
 * Validation thread, after every job (and once before the first), with
 * the chain c and its pool mp the thread owns: the mempool's additions
 * and removals since the last call, the transactions
 * of newly connected blocks and the rolling minimum fee, as a job for the
 * loop (NULL when nothing happened). The first call registers the
 * mempool's event callbacks and describes what mempool.dat loaded. node/'s
 * feed_take hook (daemon/node_hooks.c).
 */
struct val_job *txrelay_feed_take(struct daemon *d, struct chain *c, struct mempool *mp);
/** The handshake is done: relay state, the first feefilter (Core's timing). */
void txrelay_peer_ready(struct peer *p);
/** A closing peer: its queue and orphan announcements go. */
void txrelay_peer_gone(struct peer *p);
/**
 * Serve a getdata entry for a transaction (Core's FindTxForGetData): a
 * mempool transaction that entered before the last inv sent to p, or one
 * of the most recent block. True when sent; false: the caller answers
 * notfound. Also sync/'s serve_tx hook (daemon/sync_hooks.c).
 */
bool txrelay_serve(struct peer *p, const struct proto_inv_vec *v);
/** Announce, send feefilters: what the timer runs with the mockable clock's
 * daemon_time_ms, as Core's trickle (tests call it with their clock). */
void txrelay_trickle(struct daemon *d, uint64_t now_ms);
/** The mempool entry with this id (wtxid or txid), or NULL. Loop thread. */
const struct relay_tx *txrelay_find(const struct daemon *d, const struct proto_hash *h, bool wtxid);
/**
 * Put a transaction in the mirror as the mempool's feed does (meta's ids,
 * fees, vsize and ancestors; raw copied) and, with `announce`, queue it
 * for every peer. For tests and benchmarks; the entry, or NULL (out of memory).
 */
const struct relay_tx *txrelay_mirror_add(struct daemon *d, const struct relay_tx *meta,
                                          const uint8_t *raw, size_t len, bool announce);
/** Initial block download ended: peers told the IBD filter get the real one now (node/'s
 * ibd_over hook, daemon/node_hooks.c). */
void txrelay_ibd_over(struct daemon *d);
/** The active chain moved: forget recent rejects (Core's ActiveTipChange); part of node/'s
 * new_tip hook (daemon/node_hooks.c). */
void txrelay_new_tip(struct daemon *d);
/** Core's FeeFilterRounder::round with `coin` (a random value) picking the bucket. */
int64_t txrelay_round_fee(const struct daemon *d, int64_t fee, uint64_t coin);
/**
 * Core's announcement order for p's queue: fewest ancestors first, then
 * higher modified feerate, then hash; returns the entries to announce now
 * (at most Core's broadcast_max for the queue's size) in `out` (xmalloc'd
 * by the caller, room for p->txr->n), dropping what must never be sent
 * (known, gone, under the peer's feefilter) from the queue. Returns the
 * count. Exposed for tests.
 */
uint32_t txrelay_pick(struct peer *p, const struct relay_tx **out);
/** getstats' "relay" object (new reference). */
struct json_t *txrelay_stats_json(struct daemon *d);

/**
 * tx (message table): disconnects under blocksonly, ignored during initial
 * block download, else counted and handed to txaccept_on_tx; m must be
 * d->in (its ids are computed in place).
 */
void txaccept_on_tx_msg(struct peer *p, const struct proto_msg *m);
/** A tx message (ids computed): known-tx bookkeeping, then to the mempool. */
void txaccept_on_tx(struct peer *p, struct proto_tx *tx);
/**
 * An inv entry for a transaction: true when nothing is to be asked for it
 * (Core's AddTxAnnouncement: already have it, or an orphan this peer now
 * helps resolve).
 */
bool txaccept_inv_have(struct peer *p, const struct proto_inv_vec *v);
/**
 * p2p's tx_announced hook (Core's AddTxAnnouncement): unless
 * txaccept_inv_have, the request tracker takes the announcement.
 */
void txaccept_tx_announced(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms);
/** Core's AlreadyHaveTx. */
bool txaccept_already_have(struct daemon *d, const struct proto_hash *h, bool wtxid,
                           bool include_reconsiderable);
/** A transaction entered the mempool: its orphans get reconsidered. */
void txaccept_parent_accepted(struct daemon *d, const struct proto_hash *txid,
                              const struct proto_hash *wtxid, uint32_t n_out);
/** Start the next orphan reconsideration if none is running. */
void txaccept_orphan_kick(struct daemon *d);

#endif
