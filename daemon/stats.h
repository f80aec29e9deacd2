/**
 * daemon/stats.h: the counters getstats and the metrics endpoint show.
 *
 * A shared service: every room bumps its counters inline where things
 * happen (loop thread only, so plain integers), and ctl/stats.c reads
 * them. Kept beside daemon.h, below the rooms, so net/ can count frames
 * without naming the control room.
 */
#ifndef PEERD_DAEMON_STATS_H
#define PEERD_DAEMON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/** Counters of one command, all peers. */
struct stats_msg {
	uint64_t recv_count, recv_bytes, sent_count, sent_bytes;
};

/** Number of proto_err codes counted (index -err). */
#define STATS_N_ERRS (-(PROTO_ERR__MIN) + 1)

struct daemon_stats {
	struct stats_msg msg[PROTO_CMD__COUNT]; /**< [PROTO_CMD_UNKNOWN]: "other" */
	uint64_t decode_err[STATS_N_ERRS];      /**< by -proto_err, framing included */
	uint64_t bytes_sent, bytes_recv;
	/* connections */
	uint64_t inbound_accepted;
	uint64_t inbound_rejected_full; /**< inbound slots full and no one to evict */
	uint64_t inbound_evicted;       /**< inbound peers evicted for a newcomer */
	uint64_t inbound_rejected_banned;
	uint64_t inbound_rejected_discouraged;
	uint64_t outbound_attempts, outbound_connected, outbound_failed;
	/* seeds (net/seeds.c): DNS seed lookups answered, addresses they gave, fixed seeds added */
	uint64_t seeds_dns_queries, seeds_dns_found, seeds_fixed_added;
	uint64_t disconnects;
	uint64_t self_connections;
	uint64_t misbehaving;
	uint64_t discouraged;
	uint64_t v2_probes; /**< connections whose first bytes were not our magic */
	uint64_t handshake_timeouts, inactivity_timeouts, ping_timeouts;
	uint64_t send_pauses, recv_pauses;
	uint64_t rx_large_buffers;  /**< exactly-sized rx buffers allocated */
	uint64_t rx_pool_fail;      /**< rx buffer unavailable (OOM): peer dropped */
	uint64_t bloom_disconnects; /**< filterload/filteradd/filterclear without NODE_BLOOM */
	/* inventory */
	uint64_t inv_tx, inv_block, inv_other, inv_known_dup;
	uint64_t inv_ignored_full; /**< tracker full or peer at its announcement limit */
	uint64_t tx_requested, tx_request_timeouts, tx_received, tx_unsolicited;
	uint64_t tx_decoded, tx_bytes;
	uint64_t tx_already_have; /**< received but already known (mempool, orphan, rejected) */
	uint64_t tx_accepted, tx_rejected, tx_orphaned, tx_punished;
	uint64_t getdata_items, notfound_sent, notfound_recv, blocks_served;
	uint64_t blocks_not_served;       /**< asked for, but unknown, not allowed or unreadable */
	uint64_t blocks_served_reencoded; /**< of blocks_served: witnesses stripped (MSG_BLOCK) */
	uint64_t blocks_recv;
	/* headers */
	uint64_t headers_msgs, headers_entries, getheaders_answered;
	uint64_t getblocks_answered, blocks_announced_headers, blocks_announced_inv;
	/* addr */
	uint64_t addr_entries, addr_learned, addr_unroutable, getaddr_answered, getaddr_ignored;
	/* BIP157 (sync/cfilters.c): requests answered, and those the filter
	 * index could not answer yet (no reply, as Core) */
	uint64_t getcfilters_answered, getcfheaders_answered, getcfcheckpt_answered;
	uint64_t cf_not_in_index;
};

/** Count a received message of `cmd` (total frame bytes). */
static inline void stats_recv(struct daemon_stats *s, enum proto_cmd cmd, size_t bytes)
{
	s->msg[cmd].recv_count++;
	s->msg[cmd].recv_bytes += bytes;
}
/** Count an error code (framing or decode). */
static inline void stats_err(struct daemon_stats *s, int err)
{
	if (err < 0 && err >= PROTO_ERR__MIN)
		s->decode_err[-err]++;
}

#endif
