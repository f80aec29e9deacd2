/**
 * daemon/txrelay/internal.h: what announce.c, accept.c, feefilter.c,
 * request.c and unbroadcast.c share (one room's private header: nothing
 * outside daemon/txrelay/ includes it).
 */
#ifndef PEERD_DAEMON_TXRELAY_INTERNAL_H
#define PEERD_DAEMON_TXRELAY_INTERNAL_H

#include <stdint.h>

#include "daemon/txrelay/txrelay.h"

/** A random delay with mean avg_ms (Core's rand_exp_duration). */
uint64_t txrelay_exp_delay_ms(uint64_t avg_ms);

/** Queue e for every peer that has finished its handshake (Core's RelayTransaction). */
void txrelay_relay_to_all(struct daemon *d, const struct relay_tx *e);

/** Fill r's feefilter buckets (Core's FeeFilterRounder). */
void txrelay_feefilter_init(struct txrelay_state *r);

/** Send p a feefilter if it is due or the minimum fee moved far (Core's MaybeSendFeefilter). */
void txrelay_maybe_feefilter(struct peer *p, uint64_t now);

/** A peer fetched e: ask the chain to drop it from the unbroadcast set. */
void txrelay_unbroadcast_served(struct daemon *d, struct relay_tx *e);

/** Every 10-15 minutes, announce the unbroadcast set again. */
void txrelay_rebroadcast_tick(struct daemon *d, uint64_t now);

/* ---- request.c: the transaction request tracker ----------------------- */

/**
 * A transaction announcement from p that peerd lacks: track it, and ask p
 * now if p may be asked (into p2p's getdata batch, inv_batch_add).
 */
void txrequest_add(struct peer *p, const struct proto_inv_vec *v, uint64_t now_ms);
/** Whether p was asked for `h` and has not answered yet. */
bool txrequest_asked(struct peer *p, const struct proto_hash *h);
/**
 * A transaction arrived: the peers (ids) that announced `h` go to out[0..cap)
 * and its tracked announcement is forgotten. Returns how many were written.
 */
uint32_t txrequest_take_announcers(struct daemon *d, const struct proto_hash *h, uint64_t *out,
                                   uint32_t cap);
/** Forget the announcement of `h` (Core's ForgetTxHash): nothing more is asked for it. */
void txrequest_forget(struct daemon *d, const struct proto_hash *h);
/**
 * An orphan's parent: track it by txid as announced by p (Core treats an
 * orphan resolution candidate as announcing every missing parent), and
 * send the getdata batch.
 */
void txrequest_track_parent(struct peer *p, const struct proto_hash *txid);

#endif
