/*
 * proto/msg_addr.c: addr (v1) and addrv2 (BIP155).
 *
 *   addr:   count CompactSize (<= PROTO_MAX_ADDR) | count * (time u32le |
 *           services u64le | ip[16] | port u16be)
 *   addrv2: count CompactSize (<= PROTO_MAX_ADDR) | count * (time u32le |
 *           services CompactSize | network u8 | address var bytes (<= 512) |
 *           port u16be)
 *
 * Both decode into BIP155 entries. A v1 IPv4-mapped address becomes IPV4
 * and maps back on encode; any other v1 address is kept as IPV6, all 16
 * bytes, so v1 round-trips byte for byte. Which addresses are worth keeping
 * (Tor v2, internal, IPv4 tunnelled in an addrv2 IPV6) is the address
 * manager's call, not the codec's.
 *
 * addrv2 follows Core's CNetAddr::UnserializeV2Stream: an address longer
 * than 512 bytes fails (PROTO_EOVERSIZE); a known network with the wrong
 * length fails (PROTO_EVALUE); an unknown network id is skipped and counted
 * (n_skipped) so addresses from future networks do not break the message.
 * Services are a CompactSize read without Core's size limit (Core's
 * CompactSizeFormatter<false>), but it must be canonical.
 */
#include "proto/proto.h"

#define ADDR_V1_ENTRY_SIZE 30u
/* time 4, services 1, network 1, length 1 (empty address), port 2 */
#define ADDR_V2_ENTRY_MIN 9u

static const uint8_t ipv4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* Address length of a BIP155 network peerd knows; 0 for an unknown id. */
static size_t bip155_len(uint8_t net)
{
	switch (net) {
	case PROTO_BIP155_IPV4:
		return 4;
	case PROTO_BIP155_IPV6:
		return 16;
	case PROTO_BIP155_TORV2:
		return 10;
	case PROTO_BIP155_TORV3:
		return 32;
	case PROTO_BIP155_I2P:
		return 32;
	case PROTO_BIP155_CJDNS:
		return 16;
	default:
		return 0;
	}
}

/* Whether an entry is something the encoders can put on the wire. */
static bool entry_valid(const struct proto_addr_entry *e)
{
	size_t want = bip155_len(e->net);
	return want ? e->addr_len == want : e->addr_len <= sizeof(e->addr);
}

/* Room for n entries; at most one allocation, none if the storage fits. */
static int addr_reserve(struct proto_addr *a, uint32_t n)
{
	if (n <= a->cap)
		return 0;
	/* Fresh storage, not realloc: the old entries are dead. */
	struct proto_addr_entry *v = xreallocarray(NULL, n, sizeof(*v));
	if (!v)
		return PROTO_ENOMEM;
	xfree(a->v);
	a->v = v;
	a->cap = n;
	return 0;
}

int proto_addr_decode(struct proto_reader *r, struct proto_addr *a)
{
	uint32_t n;
	a->n = 0;
	a->n_skipped = 0;
	int err = proto_read_count(r, PROTO_MAX_ADDR, ADDR_V1_ENTRY_SIZE, &n);
	if (err)
		return err;
	if ((err = addr_reserve(a, n)))
		return err;
	/* proto_read_count proved n * 30 bytes are there. */
	const uint8_t *p = r->p;
	for (uint32_t i = 0; i < n; i++, p += ADDR_V1_ENTRY_SIZE) {
		struct proto_addr_entry *e = &a->v[i];
		e->time = proto_le32(p);
		e->services = proto_le64(p + 4);
		if (memcmp(p + 12, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix)) == 0) {
			e->net = PROTO_BIP155_IPV4;
			e->addr_len = 4;
			memcpy(e->addr, p + 24, 4);
		} else {
			e->net = PROTO_BIP155_IPV6;
			e->addr_len = 16;
			memcpy(e->addr, p + 12, 16);
		}
		e->port = (uint16_t)(p[28] << 8 | p[29]);
	}
	r->p = p;
	a->n = n;
	return 0;
}

void proto_addr_encode(const struct proto_addr *a, struct proto_writer *w)
{
	proto_write_compact(w, a->n);
	if (proto_writer_reserve(w, (size_t)a->n * ADDR_V1_ENTRY_SIZE))
		return;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct proto_addr_entry *e = &a->v[i];
		uint8_t ip[16] = {0};
		if (!entry_valid(e)) {
			if (!w->err)
				w->err = PROTO_EVALUE;
			return;
		}
		if (e->net == PROTO_BIP155_IPV4) {
			memcpy(ip, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix));
			memcpy(ip + 12, e->addr, 4);
		} else if (e->net == PROTO_BIP155_IPV6 || e->net == PROTO_BIP155_CJDNS) {
			/* CJDNS lives in fc00::/8, so v1 carries it as IPv6 (as Core). */
			memcpy(ip, e->addr, 16);
		}
		/* Other networks have no v1 form: all zeros, as Core sends them. */
		proto_write_u32le(w, e->time);
		proto_write_u64le(w, e->services);
		proto_write_bytes(w, ip, 16);
		proto_write_u16be(w, e->port);
	}
}

/* One addrv2 entry into e; *skip is set (and e's address left alone) for
 * an unknown network id. The reader stops at the failing field. */
static int addrv2_entry_decode(struct proto_reader *r, struct proto_addr_entry *e, bool *skip)
{
	uint64_t len;
	uint8_t net;
	const uint8_t *addr;
	int err;

	if ((err = proto_read_u32le(r, &e->time)) ||
	    (err = proto_read_compact(r, UINT64_MAX, &e->services)) ||
	    (err = proto_read_u8(r, &net)))
		return err;
	const uint8_t *len_at = r->p;
	if ((err = proto_read_compact(r, PROTO_MAX_ADDRV2_SIZE, &len)))
		return err;
	size_t want = bip155_len(net);
	if (want && len != want) {
		r->p = len_at;
		return PROTO_EVALUE;
	}
	if ((err = proto_read_span(r, (size_t)len, &addr)) || (err = proto_read_u16be(r, &e->port)))
		return err;
	*skip = !want;
	if (want) {
		e->net = net;
		e->addr_len = (uint8_t)len;
		memcpy(e->addr, addr, (size_t)len);
	}
	return 0;
}

int proto_addrv2_decode(struct proto_reader *r, struct proto_addr *a)
{
	uint32_t n, kept = 0;
	a->n = 0;
	a->n_skipped = 0;
	int err = proto_read_count(r, PROTO_MAX_ADDR, ADDR_V2_ENTRY_MIN, &n);
	if (err)
		return err;
	if ((err = addr_reserve(a, n)))
		return err;
	for (uint32_t i = 0; i < n; i++) {
		bool skip;
		if ((err = addrv2_entry_decode(r, &a->v[kept], &skip))) {
			a->n_skipped = 0;
			return err;
		}
		if (skip)
			a->n_skipped++;
		else
			kept++;
	}
	a->n = kept;
	return 0;
}

void proto_addrv2_encode(const struct proto_addr *a, struct proto_writer *w)
{
	proto_write_compact(w, a->n);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct proto_addr_entry *e = &a->v[i];
		if (!entry_valid(e)) {
			if (!w->err)
				w->err = PROTO_EVALUE;
			return;
		}
		proto_write_u32le(w, e->time);
		proto_write_compact(w, e->services);
		proto_write_u8(w, e->net);
		proto_write_varbytes(w, e->addr, e->addr_len);
		proto_write_u16be(w, e->port);
	}
}

void proto_addr_release(struct proto_addr *a)
{
	xfree(a->v);
	a->v = NULL;
	a->n = a->cap = a->n_skipped = 0;
}
