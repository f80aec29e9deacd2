/*
 * daemon/p2p/addrrelay.c: passing addresses on, as Core 29's
 * net_processing (RelayAddress, PushAddress, AddAddressKnown,
 * MaybeSendAddr).
 *
 * Each peer with address relay has a queue of at most 1,000 addresses
 * (a full queue overwrites a random one) and a set of about 5,000
 * addresses it is known to have (it sent them, or we did). A fresh
 * address is relayed to 1 or 2 of the other relaying peers, chosen by a
 * keyed hash of the address, the peer id and a 24-hour window, so that
 * repeating an address to us within the day reaches the same peers (who
 * know it by then) and buys no more spread. The queue is sent on a
 * Poisson timer averaging 30 seconds, as addrv2 to peers that sent
 * sendaddrv2 and addr (IPv4 and IPv6 only) to the rest, without what the
 * peer already knows. About once a day a peer also gets our own address.
 */
#include "daemon/p2p/p2p.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"

/** Core's AVG_ADDRESS_BROADCAST_INTERVAL: 30 seconds. */
#define ADDR_SEND_AVG_US (30.0 * 1e6)
/** Core's AVG_LOCAL_ADDRESS_BROADCAST_INTERVAL: 24 hours. */
#define ADDR_LOCAL_AVG_US (24.0 * 3600.0 * 1e6)
/** Core's ROTATE_ADDR_RELAY_DEST_INTERVAL: 24 hours. */
#define ADDR_RELAY_ROTATE_S 86400u

/* m_addr_known's key: network, address, port (Core's CService::GetKey). */
static uint64_t known_key(const struct daemon *d, const struct addrman_service *s)
{
	uint8_t k[1 + 32 + 2];
	memset(k, 0, sizeof(k));
	k[0] = s->net;
	memcpy(k + 1, s->addr, s->len <= 32 ? s->len : 32);
	k[33] = (uint8_t)(s->port >> 8);
	k[34] = (uint8_t)s->port;
	return daemon_fingerprint(d, k, sizeof(k));
}

/* Core's IsAddrCompatible: addr (v1) carries only IPv4 and IPv6. */
static bool compatible(const struct peer *p, const struct addrman_service *s)
{
	return p->sendaddrv2 || s->net == ADDRMAN_NET_IPV4 || s->net == ADDRMAN_NET_IPV6 ||
	       s->net == ADDRMAN_NET_INTERNAL;
}

void addrrelay_known_add(struct peer *p, const struct addrman_service *s)
{
	struct addr_peer *ap = &p->p2p->addr;
	if (ap->relay_enabled)
		(void)hset_insert(&ap->known, known_key(p->d, s));
}

void addrrelay_push(struct peer *p, const struct addrman_address *a)
{
	struct addr_peer *ap = &p->p2p->addr;
	/* Duplicates are dropped here only to save room; the send filters again. */
	if (!ap->relay_enabled || !addrman_netaddr_valid(&a->svc) ||
	    hset_contains(&ap->known, known_key(p->d, &a->svc)) || !compatible(p, &a->svc))
		return;
	if (ap->n_to_send >= PROTO_MAX_ADDR) {
		ap->to_send[proto_random_u64() % ap->n_to_send] = *a;
		return;
	}
	if (ap->n_to_send == ap->cap_to_send) {
		uint32_t cap = ap->cap_to_send ? ap->cap_to_send * 2 : 8;
		if (cap > PROTO_MAX_ADDR)
			cap = PROTO_MAX_ADDR;
		struct addrman_address *nv = xreallocarray(ap->to_send, cap, sizeof(*nv));
		if (!nv)
			return;
		ap->to_send = nv;
		ap->cap_to_send = cap;
	}
	ap->to_send[ap->n_to_send++] = *a;
}

/* A keyed 64-bit hash of a few words (Core's deterministic randomizer). */
static uint64_t keyed(const struct daemon *d, const uint64_t *w, size_t n)
{
	return proto_siphash(d->addr->relay_key, w, n * sizeof(*w));
}

void addrrelay_relay(struct daemon *d, const struct peer *from, const struct addrman_address *a,
                     bool reachable)
{
	/* Core's IsRelayable: every network but internal names. */
	if (!reachable && a->svc.net == ADDRMAN_NET_INTERNAL)
		return;
	uint8_t k[1 + 32 + 2];
	memset(k, 0, sizeof(k));
	k[0] = a->svc.net;
	memcpy(k + 1, a->svc.addr, a->svc.len <= 32 ? a->svc.len : 32);
	k[33] = (uint8_t)(a->svc.port >> 8);
	k[34] = (uint8_t)a->svc.port;
	static const uint8_t zero[16];
	uint64_t w[3];
	w[0] = proto_siphash(zero, k, sizeof(k)); /* Core's CServiceHash(0, 0) */
	/* The address's hash shifts its window, so windows do not all turn at once. */
	w[1] = ((uint64_t)daemon_time(d) + w[0]) / ADDR_RELAY_ROTATE_S;
	uint64_t h = keyed(d, w, 2);
	unsigned n_relay = (reachable || (h & 1)) ? 2 : 1;
	struct {
		uint64_t key;
		struct peer *p;
	} best[2] = {{0, NULL}, {0, NULL}};
	for (uint32_t i = 0; i < d->n_peers; i++) {
		struct peer *q = d->peers[i];
		if (q == from || q->state != PEER_ACTIVE || !addr_relay_enabled(q) ||
		    !compatible(q, &a->svc))
			continue;
		w[2] = q->id;
		uint64_t hk = keyed(d, w, 3);
		for (unsigned j = 0; j < n_relay; j++) {
			if (hk > best[j].key) {
				if (j + 1 < n_relay)
					best[j + 1] = best[j];
				best[j].key = hk;
				best[j].p = q;
				break;
			}
		}
	}
	for (unsigned j = 0; j < n_relay && best[j].key; j++)
		addrrelay_push(best[j].p, a);
}

/* An exponentially distributed delay of the given mean (Core's rand_exp_duration). */
static uint64_t poisson_us(double mean_us)
{
	double u = (double)(proto_random_u64() >> 11) / 9007199254740992.0; /* [0, 1) */
	return (uint64_t)(-log1p(-u) * mean_us);
}

/*
 * Our own address for p (Core's GetLocalAddrForPeer, net/local.c: false
 * when not listening or nothing routable fits), with our services and
 * the current time, as Core's MaybeSendAddr builds it.
 */
static bool local_addr_for_peer(struct peer *p, struct addrman_address *out)
{
	if (!net_local_addr_for_peer(p->d, p, out))
		return false;
	out->services = daemon_local_services(p->d);
	out->time = daemon_time(p->d);
	return true;
}

/* The queue as one addr or addrv2 message; empties it. */
static void send_queue(struct peer *p)
{
	struct daemon *d = p->d;
	struct addr_peer *ap = &p->p2p->addr;
	struct proto_addr *out = &d->out.addr;
	if (out->cap < ap->n_to_send) {
		struct proto_addr_entry *nv = xreallocarray(out->v, ap->n_to_send, sizeof(*nv));
		if (!nv)
			return;
		out->v = nv;
		out->cap = ap->n_to_send;
	}
	out->n = 0;
	out->n_skipped = 0;
	for (uint32_t i = 0; i < ap->n_to_send; i++) {
		const struct addrman_address *a = &ap->to_send[i];
		struct proto_addr_entry *e = &out->v[out->n];
		const uint8_t *bytes;
		size_t len;
		memset(e, 0, sizeof(*e));
		e->net = addrman_service_bip155(&a->svc, &bytes, &len);
		if (len > sizeof(e->addr))
			continue;
		memcpy(e->addr, bytes, len);
		e->addr_len = (uint8_t)len;
		e->port = a->svc.port;
		e->time = (uint32_t)a->time;
		e->services = a->services;
		out->n++;
	}
	d->out.cmd = p->sendaddrv2 ? PROTO_CMD_ADDRV2 : PROTO_CMD_ADDR;
	(void)peer_send_msg(p, &d->out);
	out->n = 0;
}

void addrrelay_tick(struct peer *p, uint64_t now_ms)
{
	struct addr_peer *ap = &p->p2p->addr;
	if (!ap->relay_enabled || p->state != PEER_ACTIVE)
		return;
	uint64_t now_us = now_ms * 1000u;
	/* Core: only while listening and out of initial block download. */
	if (p->d->net->reach.listen && !p->d->view->ibd && ap->next_local_us < now_us) {
		/* After the first time, forget what the peer knows, so our
		 * self-announcement really goes out (once a day on average). */
		if (ap->next_local_us) {
			hset_release(&ap->known);
			hset_init(&ap->known, ADDR_KNOWN_MAX);
		}
		struct addrman_address self;
		if (local_addr_for_peer(p, &self))
			addrrelay_push(p, &self);
		ap->next_local_us = now_us + poisson_us(ADDR_LOCAL_AVG_US);
	}
	if (now_us <= ap->next_send_us)
		return;
	ap->next_send_us = now_us + poisson_us(ADDR_SEND_AVG_US);
	/* Drop what the peer knows; what goes out, it knows from now on. */
	uint32_t k = 0;
	for (uint32_t i = 0; i < ap->n_to_send; i++) {
		if (hset_insert(&ap->known, known_key(p->d, &ap->to_send[i].svc)) == 1)
			continue;
		ap->to_send[k++] = ap->to_send[i];
	}
	ap->n_to_send = k;
	if (!k)
		return;
	send_queue(p);
	ap->n_to_send = 0;
	/* The big getaddr answer is sent once: its room goes back. */
	if (ap->cap_to_send > 40) {
		xfree(ap->to_send);
		ap->to_send = NULL;
		ap->cap_to_send = 0;
	}
}
