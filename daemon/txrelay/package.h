/**
 * daemon/txrelay/package.h: opportunistic 1-parent-1-child package relay (Core
 * 28+'s Find1P1CPackage and ProcessNewPackage from net_processing): a
 * transaction that failed only for its feerate is tried again together
 * with a child waiting in the orphanage.
 *
 * Thread: the loop thread (the package itself is judged on the validation
 * thread by a job this posts).
 */
#ifndef PEERD_DAEMON_TXRELAY_PACKAGE_H
#define PEERD_DAEMON_TXRELAY_PACKAGE_H

#include "daemon/txrelay/txrelay.h"

/**
 * `raw` (len bytes: the transaction with txid `txid`, sent by `peer`) was
 * rejected as reconsiderable, now or before (it is in the reconsiderable
 * filter). When an orphan spends one of its outputs (one `peer` announced
 * first, else any other's), post [parent, child] for package validation.
 * Returns true when a package was posted.
 */
bool txpackage_try_1p1c(struct daemon *d, uint64_t peer, const uint8_t *raw, size_t len,
                        const struct proto_hash *txid);

#endif
