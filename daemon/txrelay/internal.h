/**
 * daemon/txrelay/internal.h: what announce.c, feefilter.c and
 * unbroadcast.c share (one room's private header: nothing outside
 * daemon/txrelay/ includes it).
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

#endif
