/**
 * addrman/addrman.h: Bitcoin Core 29's address manager (addrman.cpp,
 * netgroup.cpp without asmap), as a pure data structure: no libuv, no
 * clock (every call that needs the time is given it), no daemon.
 *
 * Glossary (Core's names in brackets):
 *   service   an address and a port [CService]; two ports of one IP are two
 *             entries (Core's V4_MULTIPORT keying).
 *   source    the address of the peer that told us about an entry; its
 *             network group picks the new bucket.
 *   group     the network group [NetGroupManager::GetGroup]: /16 for IPv4
 *             (and IPv4 inside IPv6 tunnels), /32 for IPv6 (/36 for he.net),
 *             the network class and 4 bits for Tor and I2P, 12 bits for
 *             CJDNS, one group for all local and one for all unroutable
 *             addresses.
 *   new       1,024 buckets of 64 slots of addresses heard of; an address
 *             may sit in up to 8 of them (its multiplicity).
 *   tried     256 buckets of 64 slots of addresses we once connected to.
 *   collision an entry whose move to tried would evict another; kept (at
 *             most 10) until a test connection to the old one decides
 *             [m_tried_collisions].
 *
 * Bucket and slot are SHA-256d of a secret key (nKey) and the groups, as
 * Core's, so with the same key (Core's -test=addrman: key 1 and a
 * ChaCha20 stream with a zero key) the same calls give the same tables.
 *
 * peers.dat is Core's file: network magic, the serialized addrman (format
 * 4, V4_MULTIPORT, addresses in BIP155 form) and SHA-256d of both.
 *
 * Threads: an addrman is owned by one thread; no locking.
 * Memory: an addrman holds its tables inline (about 330 KB) plus one
 * entry per address; addrman_free frees all.
 */
#ifndef PEERD_ADDRMAN_H
#define PEERD_ADDRMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Buckets of the new table (Core ADDRMAN_NEW_BUCKET_COUNT). */
#define ADDRMAN_NEW_BUCKET_COUNT 1024
/** Buckets of the tried table (Core ADDRMAN_TRIED_BUCKET_COUNT). */
#define ADDRMAN_TRIED_BUCKET_COUNT 256
/** Slots per bucket (Core ADDRMAN_BUCKET_SIZE). */
#define ADDRMAN_BUCKET_SIZE 64
/** peers.dat format written (Core Format::V4_MULTIPORT). */
#define ADDRMAN_FILE_FORMAT 4
/** Added to the lowest compatible format in the file's second byte (Core). */
#define ADDRMAN_INCOMPATIBILITY_BASE 32

/** Networks, with Core's numbers (enum Network). */
enum addrman_net {
	ADDRMAN_NET_UNROUTABLE = 0, /**< only as a class: never an address's own network */
	ADDRMAN_NET_IPV4 = 1,
	ADDRMAN_NET_IPV6 = 2,
	ADDRMAN_NET_ONION = 3, /**< Tor v3 */
	ADDRMAN_NET_I2P = 4,
	ADDRMAN_NET_CJDNS = 5,
	ADDRMAN_NET_INTERNAL = 6, /**< a name's stand-in (Core's seeds); never routable */
	ADDRMAN_NET__COUNT = 7,
};

/** Errors: 0 is success. */
enum addrman_err {
	ADDRMAN_ENOMEM = -1,   /**< allocation failed; the addrman is unchanged */
	ADDRMAN_ECORRUPT = -2, /**< peers.dat is corrupt (Core refuses to start) */
	ADDRMAN_EVERSION = -3, /**< peers.dat is of a newer, incompatible format (Core renames it
	                          to peers.dat.bak and starts afresh) */
	ADDRMAN_ENOENT = -4,   /**< no peers.dat */
	ADDRMAN_EIO = -5,      /**< reading or writing the file failed (errno is kept) */
};

/** A one-line description of an addrman_err; never NULL. */
const char *addrman_strerror(int err);

/**
 * An address and port [CService]. `net` is the address's own network
 * (never UNROUTABLE), `len` its bytes: 4 (IPv4), 16 (IPv6, CJDNS), 32
 * (Tor v3, I2P), 10 (internal). A bare address (a source) has port 0.
 * Build one with addrman_service_ipv4/_from_v1/_from_bip155, or fill it
 * and zero the unused bytes (comparison looks at len bytes only).
 */
struct addrman_service {
	uint8_t net; /**< enum addrman_net */
	uint8_t len;
	uint16_t port; /**< host order */
	uint8_t addr[32];
};

/** An address as gossiped [CAddress]: service, last-seen time, service bits. */
struct addrman_address {
	struct addrman_service svc;
	int64_t time; /**< seconds since the epoch; stored as 32 bits in peers.dat */
	uint64_t services;
};

/** Where an entry sits and what addrman knows of it (Core's AddrInfo + AddressPosition). */
struct addrman_entry {
	struct addrman_address addr;
	struct addrman_service source; /**< port 0 */
	int64_t last_success;          /**< 0: never */
	int64_t last_try;              /**< 0: never */
	int32_t attempts;              /**< failed attempts since the last success */
	bool tried;
	int multiplicity; /**< new buckets holding it (1 in tried) */
	int bucket;       /**< its tried bucket, or its new bucket by its own source */
	int position;
};

/* ---------------------------------------------------------------------- */
/* Addresses (addrman/netaddr.c)                                          */

/** An IPv4 service a.b.c.d:port (ip in network order, as written). */
struct addrman_service addrman_service_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d,
                                            uint16_t port);
/**
 * From addr v1's 16 bytes (Core's SetLegacyIPv6): IPv4-mapped becomes IPv4,
 * Core's internal prefix internal, the old Tor v2 prefix an invalid
 * address (::), the rest IPv6.
 */
struct addrman_service addrman_service_from_v1(const uint8_t ip[16], uint16_t port);
/**
 * From a BIP155 entry (network id, bytes): as Core's CNetAddr V2 reader.
 * 0, or -1 for a known network with the wrong length (Core throws). An
 * unknown id, Tor v2, and IPv4 or Tor v2 wrapped in IPv6 give an invalid
 * address (::), which addrman never keeps.
 */
int addrman_service_from_bip155(uint8_t bip155_net, const uint8_t *addr, size_t len, uint16_t port,
                                struct addrman_service *out);
/** The BIP155 network id and bytes of an address (internal goes as IPv6); returns the id. */
uint8_t addrman_service_bip155(const struct addrman_service *s, const uint8_t **addr, size_t *len);
/** Same address (network and bytes), ports ignored [CNetAddr ==]. */
bool addrman_netaddr_eq(const struct addrman_service *a, const struct addrman_service *b);
/** Same address and port [CService ==]. */
bool addrman_service_eq(const struct addrman_service *a, const struct addrman_service *b);
/** Core's IsValid. */
bool addrman_netaddr_valid(const struct addrman_service *s);
/**
 * The process's test mode for loopback networks (peerd's -test=addrmanloopback,
 * regtest only): 127.0.0.0/8 counts as a routable IPv4 network, each /16 its
 * own group, so that every function here (routable, network, class, group)
 * and everything built on them treat 127.N.0.0/16 as a separate public
 * network. ::1 stays local. Set once at start, before any other thread runs.
 */
void addrman_netaddr_set_loopback_routable(bool on);
/** Core's IsRoutable: valid, and not private, local, documentation or reserved. */
bool addrman_netaddr_routable(const struct addrman_service *s);
/** Core's GetNetwork: INTERNAL, UNROUTABLE for the unroutable, else the address's network. */
enum addrman_net addrman_netaddr_network(const struct addrman_service *s);
/** Core's GetNetClass: as GetNetwork, but IPv4 for IPv4 inside IPv6 tunnels. */
enum addrman_net addrman_netaddr_class(const struct addrman_service *s);
/** Longest group (class byte + 16). */
#define ADDRMAN_GROUP_MAX 17
/** Core's GetGroup without asmap into out; returns its length. */
size_t addrman_netaddr_group(const struct addrman_service *s, uint8_t out[ADDRMAN_GROUP_MAX]);
/** The address as text, as Core's ToStringAddr ("1.2.3.4", "2001:db8::1", "x.onion"). */
void addrman_netaddr_str(const struct addrman_service *s, char *buf, size_t cap);
/** Core's GetNetworkName of a network ("ipv4", "not_publicly_routable", ...). */
const char *addrman_net_name(enum addrman_net net);
/**
 * An address as text (numeric IPv4 or IPv6, NAME.onion of Tor v3,
 * NAME.b32.i2p) with a port, as Core's LookupHost without name lookups
 * (addrman/parse.c). False when it is none of those.
 */
bool addrman_service_parse(const char *text, uint16_t port, struct addrman_service *out);
/** Text as Core's ToStringAddrPort ("1.2.3.4:8333", "[2001:db8::1]:8333", "x.onion:8333"). */
void addrman_service_str(const struct addrman_service *s, char *buf, size_t cap);

/* ---------------------------------------------------------------------- */
/* The address manager (addrman/addrman.c)                                */

struct addrman;

/**
 * A new, empty addrman. deterministic: Core's -test=addrman (key 1, the
 * ChaCha20 stream with a zero key); else a random key and stream.
 * check_ratio: Core's -checkaddrman (0: never; n: a full consistency
 * check on 1 of n calls, which draws from the random stream as Core's
 * does, so a deterministic run matches Core's with the same ratio).
 * NULL when out of memory.
 */
struct addrman *addrman_new(bool deterministic, int32_t check_ratio);
/** Free an addrman (NULL is fine). */
void addrman_free(struct addrman *am);

/**
 * Entries [Size]: net -1 for all networks, else that network's
 * (addrman_netaddr_network); in_new -1 for both tables, 1 new, 0 tried.
 */
size_t addrman_size(struct addrman *am, int net, int in_new);

/**
 * Add addresses heard from source [Add]: routable ones only; a new one
 * goes to a new bucket chosen by its and the source's group, a known one
 * may gain another new bucket (at most 8, each 2x less likely), takes the
 * services bits, and its time moves forward. time_penalty (seconds) is
 * taken off the times unless the address is the source's own. now is the
 * clock. *n_added (may be NULL) counts the addresses placed in a bucket.
 * 0, or ADDRMAN_ENOMEM (the addresses before the failing one are added).
 */
__attribute__((warn_unused_result)) int addrman_add(struct addrman *am,
                                                    const struct addrman_address *v, size_t n,
                                                    const struct addrman_service *source,
                                                    int64_t time_penalty, int64_t now,
                                                    size_t *n_added);
/**
 * A connection to svc succeeded [Good]: move it to tried. When that would
 * evict another entry, it is kept as a collision instead and false is
 * returned; also false when unknown or already in tried.
 */
bool addrman_good(struct addrman *am, const struct addrman_service *svc, int64_t time);
/** A connection attempt [Attempt]; count_failure counts it against the entry. */
void addrman_attempt(struct addrman *am, const struct addrman_service *svc, bool count_failure,
                     int64_t time);
/** A connected peer is still there [Connected]: its time is refreshed (every 20 minutes). */
void addrman_connected(struct addrman *am, const struct addrman_service *svc, int64_t time);
/** Set the service bits of an entry [SetServices]. */
void addrman_set_services(struct addrman *am, const struct addrman_service *svc, uint64_t services);
/**
 * Choose an address to connect to [Select]: new or tried at even odds (new
 * only with new_only), a random slot, accepted with its chance (fewer
 * after recent tries and failures). nets: bit (1 << enum addrman_net) per
 * network allowed, 0 for all. False when nothing fits; else *out and
 * *last_try (either may be NULL).
 */
bool addrman_select(struct addrman *am, bool new_only, uint32_t nets, int64_t now,
                    struct addrman_address *out, int64_t *last_try);
/**
 * Addresses for a getaddr answer [GetAddr]: at most max_addresses (0: no
 * limit) and max_pct percent (0: no limit) of all, in random order, of
 * class net (-1: any; addrman_netaddr_class), without terrible ones when
 * filtered. *out is xmalloc'd (caller xfrees; NULL when none). Returns
 * the count, or ADDRMAN_ENOMEM.
 */
__attribute__((warn_unused_result)) long addrman_getaddr(struct addrman *am, size_t max_addresses,
                                                         size_t max_pct, int net, bool filtered,
                                                         int64_t now, struct addrman_address **out);
/**
 * Settle the pending collisions [ResolveCollisions]: the new address
 * replaces the old when the old failed its test or did not answer within
 * 40 minutes; the collision is dropped when the old one proved alive.
 */
void addrman_resolve_collisions(struct addrman *am, int64_t now);
/**
 * The tried entry a random pending collision would evict, to test it
 * with a connection [SelectTriedCollision]. False when none.
 */
bool addrman_select_tried_collision(struct addrman *am, struct addrman_address *out,
                                    int64_t *last_try);
/** Whether svc is known, and where [FindAddressEntry]. */
bool addrman_find(struct addrman *am, const struct addrman_service *svc, struct addrman_entry *out);
/**
 * Every entry of one table in bucket and slot order [GetEntries]: calls
 * fn for each (multiplicity: its new buckets; bucket/position: this slot).
 */
void addrman_entries(struct addrman *am, bool tried,
                     void (*fn)(void *ctx, const struct addrman_entry *e), void *ctx);
/** Core's CheckAddrman: 0 when consistent, else Core's negative code. */
int addrman_check(const struct addrman *am);

/* ---------------------------------------------------------------------- */
/* peers.dat (addrman/serial.c)                                           */

/** Room for an error text of addrman_deserialize/addrman_read_file. */
#define ADDRMAN_ERRMSG_MAX 256

/**
 * The serialized addrman (Core's AddrMan::Serialize, format 4) appended to
 * *buf and *len (xmalloc'd growth; caller xfrees *buf). 0 or ADDRMAN_ENOMEM.
 */
__attribute__((warn_unused_result)) int addrman_serialize(const struct addrman *am, uint8_t **buf,
                                                          size_t *len);
/**
 * Load a serialized addrman into an empty one (Core's Unserialize);
 * *used is set to the bytes read. On failure errmsg (may be NULL) gets
 * Core's exception text and am is left empty-or-partial: free it.
 * ADDRMAN_ECORRUPT, ADDRMAN_EVERSION or ADDRMAN_ENOMEM.
 */
__attribute__((warn_unused_result)) int addrman_deserialize(struct addrman *am, const uint8_t *data,
                                                            size_t len, size_t *used, char *errmsg,
                                                            size_t errcap);
/**
 * Write peers.dat atomically (Core's DumpPeerAddresses): a temporary
 * file beside it, fsync, rename, fsync of the directory. magic is the
 * network's (proto_params()->magic). 0, ADDRMAN_ENOMEM or ADDRMAN_EIO.
 */
__attribute__((warn_unused_result)) int addrman_write_file(const struct addrman *am,
                                                           const char *path, uint32_t magic);
/**
 * Read peers.dat into an empty addrman (Core's DeserializeFileDB): the
 * magic must be the network's and the checksum must match. 0,
 * ADDRMAN_ENOENT, ADDRMAN_EVERSION (rename it to peers.dat.bak and start
 * with a new addrman, as Core), ADDRMAN_ECORRUPT (errmsg has Core's
 * reason: stop, as Core), ADDRMAN_EIO or ADDRMAN_ENOMEM.
 */
__attribute__((warn_unused_result)) int addrman_read_file(struct addrman *am, const char *path,
                                                          uint32_t magic, char *errmsg,
                                                          size_t errcap);
/**
 * Core's startup error for a corrupt peers.dat, built from the reason of
 * addrman_read_file: "Invalid or corrupt peers.dat (REASON). If you believe
 * this is a bug, please report it to BUGREPORT. As a workaround, you can
 * move the file ("PATH") out of the way ...".
 */
void addrman_corrupt_message(char *buf, size_t cap, const char *reason, const char *path,
                             const char *bugreport);

#endif
