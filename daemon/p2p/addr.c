/*
 * daemon/p2p/addr.c: addr, addrv2 and getaddr.
 *
 * Addresses learned from addr and addrv2 go into one bounded set
 * (ADDR_MAX_KNOWN entries, deduplicated by a salted fingerprint of network,
 * address and port; when full, a random old entry makes room). Only
 * addresses Core would consider routable are kept: no loopback, private,
 * link-local, shared, benchmarking or documentation ranges.
 *
 * getaddr is answered as Core 29 does: only for inbound peers (an outbound
 * peer's getaddr is how fingerprinting attacks probe which node is behind
 * an address), at most once per connection, with a random selection of at
 * most 23% of the known addresses and at most 1,000 (MAX_PCT_ADDR_TO_SEND,
 * MAX_ADDR_TO_SEND): as addrv2 to peers that sent sendaddrv2, else as addr
 * (which can carry only IPv4 and IPv6). peerd does not relay addresses and
 * does not rate-limit them (Core's token bucket) yet: nothing it learns is
 * passed on.
 *
 * An addr or addrv2 with more than 1,000 entries is misbehaviour.
 */
#include "daemon/p2p/p2p.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/** Addresses remembered at most. */
#define ADDR_MAX_KNOWN 10000u
/** getaddr answers with at most this percentage of what peerd knows (Core). */
#define ADDR_GETADDR_MAX_PCT 23u
/** A timestamp this far in the future is replaced (Core: 10 minutes). */
#define ADDR_MAX_FUTURE_S 600
/** ...by now minus this (Core: 5 days). */
#define ADDR_PENALTY_S (5 * 24 * 3600)

int addr_init(struct daemon *d)
{
	memset(d->addr, 0, sizeof(*d->addr));
	hmap_init(&d->addr->index);
	return 0;
}

void addr_release(struct daemon *d)
{
	xfree(d->addr->v);
	hmap_release(&d->addr->index);
	memset(d->addr, 0, sizeof(*d->addr));
}

static bool in4(const uint8_t *a, uint8_t b0, uint8_t b1, int bits)
{
	uint32_t ip = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	uint32_t net = (uint32_t)b0 << 24 | (uint32_t)b1 << 16;
	uint32_t mask = bits ? ~0u << (32 - bits) : 0;
	return (ip & mask) == (net & mask);
}

static bool routable4(const uint8_t *a)
{
	if (in4(a, 0, 0, 8) || in4(a, 10, 0, 8) || in4(a, 127, 0, 8) || in4(a, 169, 254, 16) ||
	    in4(a, 172, 16, 12) || in4(a, 192, 168, 16) || in4(a, 100, 64, 10) ||
	    in4(a, 198, 18, 15))
		return false;
	/* RFC5737 documentation ranges. */
	if ((a[0] == 192 && a[1] == 0 && a[2] == 2) || (a[0] == 198 && a[1] == 51 && a[2] == 100) ||
	    (a[0] == 203 && a[1] == 0 && a[2] == 113))
		return false;
	return !(a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
}

static bool routable6(const uint8_t *a)
{
	static const uint8_t zero[16];
	if (memcmp(a, zero, 15) == 0) /* :: and ::1 */
		return false;
	if (net_ip16_is_v4(a))
		return routable4(a + 12);
	if ((a[0] & 0xfe) == 0xfc) /* RFC4193 unique local */
		return false;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) /* link-local */
		return false;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d &&
	    a[3] == 0xb8) /* RFC3849 documentation */
		return false;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 &&
	    (a[3] & 0xf0) == 0x10) /* RFC4843 ORCHID */
		return false;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 &&
	    (a[3] & 0xf0) == 0x20) /* RFC7343 ORCHIDv2 */
		return false;
	return true;
}

static bool routable(const struct proto_addr_entry *e)
{
	if (!e->port)
		return false;
	switch (e->net) {
	case PROTO_BIP155_IPV4:
		return e->addr_len == 4 && routable4(e->addr);
	case PROTO_BIP155_IPV6:
		return e->addr_len == 16 && routable6(e->addr);
	case PROTO_BIP155_TORV3:
	case PROTO_BIP155_I2P:
		return e->addr_len == 32;
	case PROTO_BIP155_CJDNS:
		return e->addr_len == 16 && e->addr[0] == 0xfc;
	default:
		return false;
	}
}

static uint64_t addr_fp(const struct daemon *d, const struct proto_addr_entry *e)
{
	uint8_t key[1 + 32 + 2];
	memset(key, 0, sizeof(key));
	key[0] = e->net;
	memcpy(key + 1, e->addr, e->addr_len <= 32 ? e->addr_len : 32);
	key[33] = (uint8_t)(e->port >> 8);
	key[34] = (uint8_t)e->port;
	return daemon_fingerprint(d, key, sizeof(key));
}

/* Remember one address; 1 if new. */
static int learn(struct daemon *d, const struct proto_addr_entry *in, int64_t now)
{
	struct addr_state *s = d->addr;
	struct proto_addr_entry e = *in;
	if (e.time <= 100000000u || (int64_t)e.time > now + ADDR_MAX_FUTURE_S)
		e.time = (uint32_t)(now - ADDR_PENALTY_S);
	uint64_t fp = addr_fp(d, &e);
	uint32_t slot;
	if (hmap_get(&s->index, fp, &slot)) {
		if (e.time > s->v[slot].time)
			s->v[slot].time = e.time;
		s->v[slot].services |= e.services;
		return 0;
	}
	if (s->n < ADDR_MAX_KNOWN) {
		if (s->n == s->cap) {
			uint32_t ncap = s->cap ? s->cap * 2 : 64;
			if (ncap > ADDR_MAX_KNOWN)
				ncap = ADDR_MAX_KNOWN;
			struct proto_addr_entry *nv = xreallocarray(s->v, ncap, sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			s->v = nv;
			s->cap = ncap;
		}
		slot = s->n;
		if (hmap_put(&s->index, fp, slot))
			return -ENOMEM;
		s->n++;
	} else {
		/* Full: a random victim, so no sender can choose what is kept. */
		slot = (uint32_t)(proto_random_u64() % s->n);
		hmap_del(&s->index, addr_fp(d, &s->v[slot]));
		if (hmap_put(&s->index, fp, slot)) {
			/* Keep the map and the array consistent: drop the slot. */
			s->v[slot] = s->v[--s->n];
			if (slot < s->n)
				(void)hmap_put(&s->index, addr_fp(d, &s->v[slot]), slot);
			return -ENOMEM;
		}
	}
	s->v[slot] = e;
	return 1;
}

static void on_addr(struct peer *p, const struct proto_addr *a)
{
	struct daemon *d = p->d;
	if (a->n > PROTO_MAX_ADDR) {
		ban_misbehaving(p, "addr message size over 1000");
		return;
	}
	int64_t now = (int64_t)time(NULL);
	uint32_t learned = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		d->stats.addr_entries++;
		if (!routable(&a->v[i])) {
			d->stats.addr_unroutable++;
			continue;
		}
		if (learn(d, &a->v[i], now) == 1)
			learned++;
	}
	d->stats.addr_learned += learned;
	DLOG_DBG(&d->log, DLOG_ADDR, "received %u addresses (%u new, %u skipped) from peer=%llu",
	         a->n, learned, a->n_skipped, (unsigned long long)p->id);
}

static int out_reserve(struct proto_addr *out, uint32_t n)
{
	if (out->cap >= n)
		return 0;
	struct proto_addr_entry *nv = xreallocarray(out->v, n, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	out->v = nv;
	out->cap = n;
	return 0;
}

static void on_getaddr(struct peer *p)
{
	struct daemon *d = p->d;
	struct addr_state *s = d->addr;
	if (!p->inbound || p->getaddr_answered) {
		d->stats.getaddr_ignored++;
		DLOG_DBG(&d->log, DLOG_ADDR, "ignoring %s getaddr from peer=%llu",
		         p->inbound ? "repeated" : "outbound", (unsigned long long)p->id);
		return;
	}
	p->getaddr_answered = true;
	uint32_t want = (uint32_t)((uint64_t)s->n * ADDR_GETADDR_MAX_PCT / 100u);
	if (want > PROTO_MAX_ADDR)
		want = PROTO_MAX_ADDR;
	struct proto_addr *out = &d->out.addr;
	out->n = 0;
	out->n_skipped = 0;
	if (want && out_reserve(out, want))
		return;
	/* Partial Fisher-Yates over a scratch index, so the pick is uniform
	 * and without repeats. */
	uint32_t *idx = want ? xreallocarray(NULL, s->n, sizeof(*idx)) : NULL;
	if (want && !idx)
		return;
	for (uint32_t i = 0; i < s->n && want; i++)
		idx[i] = i;
	for (uint32_t i = 0; i < want; i++) {
		uint32_t j = i + (uint32_t)(proto_random_u64() % (s->n - i));
		uint32_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		const struct proto_addr_entry *e = &s->v[idx[i]];
		if (!p->sendaddrv2 && e->net != PROTO_BIP155_IPV4 && e->net != PROTO_BIP155_IPV6)
			continue;
		out->v[out->n++] = *e;
	}
	xfree(idx);
	/* Core sends nothing when it has nothing to send. */
	if (!out->n)
		return;
	d->out.cmd = p->sendaddrv2 ? PROTO_CMD_ADDRV2 : PROTO_CMD_ADDR;
	if (peer_send_msg(p, &d->out) == 0)
		d->stats.getaddr_answered++;
	out->n = 0;
}

void addr_on_addr(struct peer *p, const struct proto_msg *m)
{
	on_addr(p, &m->addr);
}

void addr_on_getaddr(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	on_getaddr(p);
}
