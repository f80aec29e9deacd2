/**
 * daemon/net/seeds_internal.h: net/seeds.c's parts that its unit test
 * (tests/unit/test_seeds.c) drives alone: the seeds of each network, the
 * DNS seeds' schedule as a pure state machine on a given clock (Core's
 * ThreadDNSAddressSeed without its sleeps), the fixed seeds' rule, and
 * what a lookup adds to the addrman. Not part of net/'s public face.
 */
#ifndef PEERD_DAEMON_NET_SEEDS_INTERNAL_H
#define PEERD_DAEMON_NET_SEEDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addrman/addrman.h"
#include "proto/proto.h"

/** Seeds queried before checking the connections again (Core DNSSEEDS_TO_QUERY_AT_ONCE). */
#define SEEDS_AT_ONCE 3
/** Full-relay outbound peers that make seeding unnecessary (SEED_OUTBOUND_CONNECTION_THRESHOLD). */
#define SEEDS_ENOUGH_OUTBOUND 2
/** Wait before the next seeds with few addresses known (DNSSEEDS_DELAY_FEW_PEERS). */
#define SEEDS_DELAY_FEW_MS 11000u
/** ... and with many (DNSSEEDS_DELAY_MANY_PEERS: 5 minutes). */
#define SEEDS_DELAY_MANY_MS 300000u
/** What "many" is (DNSSEEDS_DELAY_PEER_THRESHOLD). */
#define SEEDS_MANY_ADDRESSES 1000u
/** -seednode's head start before the DNS seeds (Core's SEEDNODE_TIMEOUT). */
#define SEEDS_SEEDNODE_WAIT_MS 30000u
/** Fixed seeds after this long with a reachable network still empty (Core: 1 minute). */
#define SEEDS_FIXED_AFTER_MS 60000u
/** Addresses taken from one seed's lookup at most (Core 29's nMaxIPs). */
#define SEEDS_MAX_IPS 32u
/** The service bits asked of the seeds, the "x9." of the name (NODE_NETWORK | NODE_WITNESS). */
#define SEEDS_SERVICES 9u

/** A network's DNS seeds (Core 29's vSeeds): NULL-terminated, none for regtest. */
const char *const *seeds_dns(enum proto_net net);
/** A network's fixed seeds (seeds_fixed.c): BIP155 entries in hex; "" for regtest. */
const char *seeds_fixed_hex(enum proto_net net);
extern const char seeds_fixed_main[];
extern const char seeds_fixed_testnet3[];
extern const char seeds_fixed_testnet4[];
extern const char seeds_fixed_signet[];

/**
 * Decode a network's fixed seeds (Core's ConvertSeeds): each a service
 * with services 9 and a time 1-2 weeks before now (random). *out is
 * xmalloc'd (caller xfrees; NULL when none). The count, or -1 when out of
 * memory or the data is malformed.
 */
long seeds_fixed_decode(enum proto_net net, int64_t now, struct addrman_address **out);

/** Core's CNetAddr::SetInternal: a name as an internal address (SHA-256's first 10 bytes). */
struct addrman_service seeds_internal_addr(const char *name);

/**
 * Add one seed's lookup results to am as Core: each address with the
 * network's port, services 9, a random time 3-7 days before now, from
 * the internal address of `host` (the "x9." name). Returns how many were
 * given (Core's `found`, routable or not).
 */
size_t seeds_add_found(struct addrman *am, const char *host, const struct addrman_service *ips,
                       size_t n, uint16_t port, int64_t now);

/** What the schedule knows of the node each time it is asked. */
struct seeds_view {
	size_t addrman_size;
	int full_outbound; /**< full-relay outbound peers, handshake done */
	bool network_active;
};

/** Why DNS seeding ended (for the log line Core writes). */
enum seeds_end {
	SEEDS_END_NONE = 0,
	SEEDS_END_SKIPPED,     /**< "Skipping DNS seeds. Enough peers have been found" */
	SEEDS_END_PEERS,       /**< "P2P peers available. ..." while waiting */
	SEEDS_END_ALL_QUERIED, /**< every seed queried: "%d addresses found from DNS seeds" */
};

/** What to do now. */
enum seeds_action {
	SEEDS_ACT_NONE = 0, /**< nothing yet: ask again later */
	SEEDS_ACT_WAIT_LOG, /**< "Waiting %d seconds before querying DNS seeds." (then ask again) */
	SEEDS_ACT_INACTIVE, /**< "Waiting for network to be reactivated ..." (once) */
	SEEDS_ACT_QUERY,    /**< query seed `next` now; report with seeds_sched_answered */
	SEEDS_ACT_END,      /**< done (end says why); nothing more ever */
};

enum seeds_state {
	SEEDS_ST_SEEDNODE = 0, /**< -seednode's head start */
	SEEDS_ST_START,
	SEEDS_ST_LOOP,
	SEEDS_ST_WAIT,
	SEEDS_ST_READY,
	SEEDS_ST_QUERYING,
	SEEDS_ST_DONE,
};

/** Core's ThreadDNSAddressSeed as a state machine; see seeds_sched_next. */
struct seeds_sched {
	enum seeds_state state;
	size_t n_seeds, next; /**< seeds in (shuffled) order; the one to query next */
	int right_now;        /**< Core's seeds_right_now */
	bool force;           /**< -forcednsseed */
	uint64_t start_ms;
	uint64_t wait_ms;    /**< the delay chosen at start (11 s or 5 min) */
	uint64_t to_wait_ms; /**< left of this wait */
	uint64_t step_at_ms; /**< end of the current step of it (11 s at most) */
	size_t found;
	bool inactive_logged;
	enum seeds_end end;
};

/** Start the schedule at now_ms: n_seeds seeds, -forcednsseed, -seednode given. */
void seeds_sched_init(struct seeds_sched *s, size_t n_seeds, bool force, bool seednode,
                      uint64_t now_ms);
/** What to do at now_ms with the node as v says. Pure: no clock, no I/O. */
enum seeds_action seeds_sched_next(struct seeds_sched *s, const struct seeds_view *v,
                                   uint64_t now_ms);
/** The query of SEEDS_ACT_QUERY is over; found: addresses it gave. */
void seeds_sched_answered(struct seeds_sched *s, size_t found);

/** Why the fixed seeds are due (for the log line Core writes). */
enum seeds_fixed_why {
	SEEDS_FIXED_NOT_YET = 0,
	SEEDS_FIXED_TIMEOUT,   /**< 60 s passed with a reachable network empty */
	SEEDS_FIXED_NO_OTHERS, /**< no -dnsseed, -seednode nor -addnode */
};

/**
 * Core's rule in ThreadOpenConnections, asked only while a reachable
 * network's part of the addrman is empty: after 60 s, or at once when
 * there is no DNS seeding, no -seednode and no -addnode.
 */
enum seeds_fixed_why seeds_fixed_due(uint64_t start_ms, uint64_t now_ms, bool dnsseed,
                                     bool seednode, bool addnode);

#endif
