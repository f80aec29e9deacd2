/**
 * daemon/node/node.h: the node room's declarations: the loop's copy of the active
 * chain (chainview.c), the validation thread and its jobs (validation.c), the
 * hooks it calls after a job and on a new tip (struct node_hooks), a full
 * disk or a fatal chain error (diskspace.c).
 *
 * It may use the rooms below it: none (chain/, mempool/ and mining/ below daemon/).
 */
#ifndef PEERD_DAEMON_NODE_NODE_H
#define PEERD_DAEMON_NODE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/hset.h"
#include "daemon/daemon.h"

struct chain;
struct chain_node;
struct mempool;
struct node_extratxn;

/* ---- node/chainview.c: the loop's copy of the active chain ----------- */

/** A block of the active chain as the loop keeps it: hash and header. */
struct chainview_rec {
	struct proto_hash hash;
	uint8_t header[PROTO_BLOCK_HEADER_SIZE]; /**< serialized, ready for a headers reply */
};

/** The active chain, genesis first; loop thread only. */
struct chainview {
	struct chainview_rec *recs; /**< recs[h] is the block at height h */
	uint32_t n, cap;            /**< n = tip height + 1; 0 before the first update */
	struct hmap idx;            /**< fingerprint of hash -> height */
	bool ibd; /**< initial block download, as of the last update (false before any) */
	/** Core's UNKNOWN_NEW_RULES_ACTIVATED warning: the versionbit first
	 * found active at a new tip, -1 none; never cleared, as Core's. Set by
	 * ctl/warnings.c from chainview_update.unknown_rules_bit. */
	int32_t unknown_rules_bit;
	/** Core's LARGE_WORK_INVALID_CHAIN warning is set; ctl/warnings.c from
	 * chainview_update.fork_warning. */
	bool large_work_invalid;
};

/**
 * What changed in the active chain: blocks above fork_height are gone and
 * recs (heights fork_height + 1 ...) are the new ones, up to the tip.
 * Built on the validation thread, delivered to the loop as a result.
 */
struct chainview_update {
	int32_t fork_height; /**< -1: the whole chain follows */
	int32_t old_height;  /**< the published tip's height before, -1 if none */
	bool ibd;            /**< chain_in_ibd at the new tip */
	/** The lowest versionbit chain_vb_unknown_rules finds ACTIVE at the
	 * tip, -1 none or in IBD (Core checks only outside it, in UpdateTip). */
	int32_t unknown_rules_bit;
	/** chain_fork_warning at the new tip: 1 set, 0 cleared, -1 (in IBD) as it was. */
	int8_t fork_warning;
	/** A block was found invalid and the tip did not move: no block, the
	 * fork warning judged again at the same tip (node_hooks.invalid_chain). */
	bool invalid_found;
	uint32_t n;
	struct chainview_rec recs[];
};

/** An empty view. */
void chainview_init(struct chainview *v);
/** Free the view. */
void chainview_release(struct chainview *v);
/** Height of the active chain's block with this hash, or -1. Loop thread. */
int32_t chainview_find(const struct daemon *d, const struct proto_hash *h);
/** The tip's height, -1 before the chain is known. Loop thread. */
int32_t chainview_height(const struct daemon *d);
/** The record at height, or NULL. Loop thread. */
const struct chainview_rec *chainview_at(const struct daemon *d, int32_t height);
/** Apply an update. 0, -EINVAL (does not fit), -ENOMEM, -EOVERFLOW. Loop thread. */
int chainview_apply(struct daemon *d, const struct chainview_update *u);
/**
 * The validation thread's side: the update that takes a view from
 * *published to the chain's tip, or NULL when nothing changed (or out of
 * memory: *published is then kept, so the next call retries). Moves
 * *published to the tip. The caller owns the result.
 */
struct chainview_update *chainview_update_new(struct chain *c, const struct chain_node **published);
/**
 * The validation thread's side: an update with no block that says the
 * chain's state (ibd, warnings) at the published tip, after a reindex
 * whose blocks went out as initial block download (node/reindex.c).
 * The caller owns it; NULL when out of memory.
 */
struct chainview_update *chainview_update_state(struct chain *c);

/* ---- node/validation.c: the validation thread ------------------------ */

struct val_job;
/**
 * A job's work: runs on the validation thread with what the thread owns,
 * the chain and its mempool (both NULL when no chain is open), as Core's
 * PeerManager is handed its CTxMemPool rather than finding it.
 */
typedef void (*val_work_fn)(struct chain *c, struct mempool *mp, struct val_job *j);
/**
 * A job's completion: runs on the loop thread once the work ran, or with
 * j->cancelled set when it never will (shutdown); it owns and frees j.
 */
typedef void (*val_done_fn)(struct daemon *d, struct val_job *j);

/**
 * A unit of work for the validation thread, embedded first in the
 * caller's own struct. Between validation_post and done, the job belongs
 * to the validation side: the loop must not touch it.
 */
struct val_job {
	struct val_job *next;
	val_work_fn work;
	val_done_fn done;
	bool cancelled; /**< set when work never ran */
	bool counted;   /**< posted by validation_post: counted in `returned` when back */
	/** The work moves the chain (submitblock, generate*, invalidateblock,
	 * reconsiderblock): set by the poster, it waits while a reindex is
	 * pending and runs once it ends, as Core's wait for cs_chainstate,
	 * which its import holds while connecting (node/reindex.c). */
	bool after_reindex;
};

/**
 * The validation thread and its two queues. Fields marked (mu) are
 * guarded by mu; `chain` and `mempool` belong to the thread while it
 * runs; the atomics are published by the thread for the loop's status
 * line.
 */
struct validation {
	struct daemon *d;
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;                         /**< wakes the thread: work, hold changes, stop */
	uv_async_t async;                     /**< wakes the loop: results, exit */
	struct val_job *in_head, **in_tail;   /**< (mu) posted, not started */
	struct val_job *out_head, **out_tail; /**< (mu) finished or cancelled */
	bool stopping;                        /**< (mu) finish the running job, then close */
	bool held;                            /**< (mu) tests: take no job until released */
	bool running;                         /**< (mu) a job is being worked on */
	bool async_open;                      /**< (mu) the thread may uv_async_send */
	bool exited;                          /**< (mu) the chain is closed; join me */
	uint64_t posted, jobs_run;            /**< (mu) counters */
	uint64_t
	    returned; /**< loop thread: posted jobs whose done ran (posted is the loop's too) */
	bool initialized, started, joined; /**< loop thread only */
	struct chain *chain;
	struct mempool *mempool;            /**< the chain's pool, handed to every job (thread) */
	const struct chain_node *published; /**< the tip the loop's view was last given (thread) */
	uint64_t invalid_seen;   /**< chain_invalid_found when the view was last given (thread) */
	_Atomic int32_t height;  /**< the tip's height, -1 when no chain */
	_Atomic int32_t headers; /**< the best header's height */
	_Atomic bool busy;       /**< a job is running */
	_Atomic bool interrupt;  /**< set with stopping: a long job (mining) ends early */
	bool fatal_reported;     /**< the chain's fatal error went to the loop (thread) */
	/** A reindex chain_open started is not finished (node/reindex.c): no
	 * block download, no transactions taken. Cleared by the loop. */
	_Atomic bool reindexing;
	char reindex_status[512]; /**< (mu) its progress lines, each ending in \n, not passed on yet
	                           */
	/** (mu) after_reindex jobs taken while a reindex was pending: back at
	 * the head of the queue, in order, when it ends (node/reindex.c). */
	struct val_job *parked_head, **parked_tail;
	struct node_extratxn
	    *extratxn; /**< node/extratxn.c's ring, made at the first add (thread) */
};

/**
 * Open the chain in validation_netdir with dbcache and par from the
 * configuration and start the thread that owns it. Startup only (before
 * READY=1): opening replays blocks written after the last flush. 0 or a
 * negative error (logged). Loop thread.
 */
int validation_open(struct daemon *d);
/**
 * Start the thread with an already opened chain `c` and its pool `mp` (both
 * taken over; NULL runs jobs with no chain, as the unit tests do). 0 or a
 * libuv error.
 */
int validation_start(struct daemon *d, struct chain *c, struct mempool *mp);
/** The directory of this network's chain state: <datadir>/<network>/. */
const char *validation_netdir(const struct daemon *d);
/**
 * Hand a job to the thread. 0, or -ESHUTDOWN when no thread runs or it is
 * stopping (the job was not taken: the caller still owns it). Loop thread.
 */
int validation_post(struct daemon *d, struct val_job *j);
/**
 * Validation thread, from inside a job's work (a chain listener's call):
 * hand j to the loop now, ahead of the running job's own result, so its
 * done runs without waiting for the job to end (Core relays a new block
 * from AcceptBlock, before connecting it). j->work is not called; done
 * always runs (cancelled only as any result at shutdown). Not counted in
 * validation_settled.
 */
void validation_send_now(struct daemon *d, struct val_job *j);
/** Ask the thread to stop after its current job and close (flush) the chain. Idempotent. */
void validation_stop(struct daemon *d);
/**
 * Every job the loop posted is back and its done ran, so the loop's view
 * (applied before each job's done) is the chain as the validation thread
 * has it, and the thread is idle: a question about the tip may be answered
 * from the view as a chain job would answer it. Loop thread.
 */
bool validation_settled(const struct daemon *d);
/** Tests: keep the thread from starting jobs (true) or let it go on (false). */
void validation_hold(struct daemon *d, bool hold);
/** The loop's handles are being force-closed: close the async handle, the thread stops using it.
 */
void validation_detach(struct daemon *d);
/**
 * Stop, join (waiting for the flush), run the done callback of every result
 * left, free the queues. After the loop ended, or from daemon_release.
 */
void validation_release(struct daemon *d);
/**
 * node/reindex.c: after the loop started, run the reindex chain_open left
 * pending as a sequence of validation jobs (nothing when there is none).
 * 0 or -ENOMEM / -ESHUTDOWN. Loop thread.
 */
int node_reindex_start(struct daemon *d);
/** A reindex is running: Core's LoadingBlocks(). Any thread. */
bool validation_reindexing(const struct daemon *d);
/** "height N" or "height N of M headers (P%)" for STATUS=. Loop thread. */
void validation_status(const struct daemon *d, char *out, size_t len);

/* ---- the hooks node/ calls: what the rooms above want to hear -------- */

/**
 * What node/ tells the rooms above it after a job and on a new tip,
 * without naming them (Core's CValidationInterface, btcd's blockchain
 * notifications): the wiring fills one const table
 * (daemon/node_hooks.c:daemon_node_hooks) and daemon_init points
 * struct daemon's node_hooks at it. A NULL table or member is skipped.
 */
struct node_hooks {
	/**
	 * Loop thread: the update just applied to d->view ended initial block
	 * download. Called before new_tip of that same update (and, as it,
	 * before peers exist too).
	 */
	void (*ibd_over)(struct daemon *d);
	/**
	 * Loop thread: the active chain moved; u was just applied to d->view
	 * (the first update, the chain as opened, included: u->old_height is
	 * then -1). Not called while shutting down (before peers exist too:
	 * the wiring tells the peer rooms only once d->peers is there).
	 */
	void (*new_tip)(struct daemon *d, const struct chainview_update *u);
	/**
	 * Loop thread: a block was found invalid and the tip stayed where it
	 * was (Core's InvalidChainFound judges the fork warning then too); u,
	 * with no block, says the fork warning at that tip. Not called while
	 * shutting down.
	 */
	void (*invalid_chain)(struct daemon *d, const struct chainview_update *u);
	/**
	 * Validation thread, once before the first job and after every job,
	 * with the chain and the pool the thread owns (NULL when none): a job
	 * for the loop carrying what the mempool did since the last call, or
	 * NULL. It is queued for the loop after the chain view's update and
	 * before the job's own result. It must touch no loop state.
	 */
	struct val_job *(*feed_take)(struct daemon *d, struct chain *c, struct mempool *mp);
	/**
	 * Loop thread, during validation_open and a reindex's jobs: a long
	 * step's progress (reindexing), for systemd's STATUS= line.
	 */
	void (*startup_status)(struct daemon *d, const char *text);
};

/* ---- node/extratxn.c: transactions seen but not kept, for compact blocks */

/** Transactions this large or larger stay out of the ring (Core's 100,000
 * bytes, there of RecursiveDynamicUsage; here of the serialized size). */
#define NODE_EXTRATXN_MAX_TX_BYTES 100000u

/**
 * Loop thread: add a transaction (its serialization; copied) to the ring
 * of -blockreconstructionextratxn slots, through a job for the validation
 * thread (Core's AddToCompactExtraTransactions for a rejected transaction
 * or a new orphan). Nothing when the option is 0 or len is at least
 * NODE_EXTRATXN_MAX_TX_BYTES.
 */
void node_extratxn_post(struct daemon *d, const uint8_t *raw, size_t len);
/** Validation thread: add tx (copied; a replaced transaction), overwriting the oldest. */
void node_extratxn_add(struct daemon *d, const struct proto_tx *tx);
/** Validation thread: add a serialized transaction (copied); a bad one is skipped. */
void node_extratxn_add_raw(struct daemon *d, const uint8_t *raw, size_t len);
/** Validation thread: the ring's slots (0 before the first add), for node_extratxn_at. */
uint32_t node_extratxn_count(const struct daemon *d);
/**
 * Validation thread: slot i's transaction (ids computed), or NULL when
 * empty. Valid until the next add.
 */
const struct proto_tx *node_extratxn_at(const struct daemon *d, uint32_t i);
/** Validation thread: transactions added since startup. */
uint64_t node_extratxn_added(const struct daemon *d);
/** Free the ring: after the validation thread is joined (validation_release). */
void node_extratxn_release(struct daemon *d);

/* ---- node/diskspace.c: a full disk is a clean shutdown, as Core's ---- */

/** Startup, before the chain opens: 50 MiB free in the netdir and blocks/, or -ENOSPC (logged). */
int diskspace_startup(struct daemon *d);
/** Every tick: every 5 minutes, blocks/ below 100 MiB free shuts peerd down. Loop thread. */
void diskspace_tick(struct daemon *d, uint64_t now);
/**
 * Validation thread, after a job: when the chain latched a failed write
 * or a damaged database (chain_fatal_error) not yet reported, a job whose
 * done callback logs Core's fatal error and shuts down with exit status 1;
 * else NULL.
 */
struct val_job *diskspace_fatal_job(struct chain *c, bool *reported);

#endif
