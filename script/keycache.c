/*
 * script/keycache.c: parsed public keys, remembered per thread.
 *
 * Parsing a public key is not free: a compressed or x-only key is only an
 * x coordinate, and libsecp256k1 finds y with a field square root, about
 * 12% of the cost of the verification that follows (measured here: 6.6 us
 * against 55 us). A key that signs again and again (a reused address, the
 * five keys of Core's ConnectBlock benchmark block) need only be parsed
 * once. The result of a parse depends on the key's bytes alone, so
 * remembering it changes no verdict: only keys that parsed are kept, and a
 * hit is the very struct a parse would have produced (libsecp256k1 says
 * its key structs may be copied).
 *
 * One small direct-mapped table per thread (C11 _Thread_local), so the
 * worker threads of the check queue share nothing and take no lock; the
 * slot is picked from bytes of the x coordinate, which are uniform for real
 * keys. Keys made to collide only evict each other: a miss costs one
 * compare and one copy on top of the parse, never more. This is the one
 * piece of mutable state in script/ outside the free lists; it is a pure
 * memo of a pure function, so fuzzing and benchmarks see the same results.
 */
#include "script/internal.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <stdatomic.h>
#include <string.h>

/** Slots per thread (a power of two): ~100 bytes each. */
#define KEY_CACHE_SLOTS 128u

enum key_kind { KEY_NONE = 0, KEY_COMPRESSED, KEY_XONLY };

struct key_slot {
	uint8_t kind;    /* enum key_kind; KEY_NONE: empty */
	uint8_t ser[33]; /* the key as it appeared: 33 bytes, or 32 for x-only */
	union {
		secp256k1_pubkey pk;
		secp256k1_xonly_pubkey xk;
	} u;
};

static _Thread_local struct key_slot cache[KEY_CACHE_SLOTS];
static atomic_bool cache_off;

void script_key_cache_set_enabled(bool on)
{
	atomic_store_explicit(&cache_off, !on, memory_order_relaxed);
}

static struct key_slot *slot_for(const uint8_t x[32])
{
	uint32_t h;
	memcpy(&h, x + 1, sizeof(h));
	return &cache[h & (KEY_CACHE_SLOTS - 1)];
}

bool script_parse_pubkey(secp256k1_pubkey *pk, const uint8_t *pub, size_t len)
{
	const secp256k1_context *ctx = secp256k1_context_static;
	if (len != 33 || atomic_load_explicit(&cache_off, memory_order_relaxed))
		return secp256k1_ec_pubkey_parse(ctx, pk, pub, len) == 1;
	struct key_slot *s = slot_for(pub + 1);
	if (s->kind == KEY_COMPRESSED && !memcmp(s->ser, pub, 33)) {
		*pk = s->u.pk;
		return true;
	}
	if (!secp256k1_ec_pubkey_parse(ctx, pk, pub, len))
		return false;
	s->kind = KEY_COMPRESSED;
	memcpy(s->ser, pub, 33);
	s->u.pk = *pk;
	return true;
}

bool script_parse_xonly(secp256k1_xonly_pubkey *pk, const uint8_t pub[32])
{
	const secp256k1_context *ctx = secp256k1_context_static;
	if (atomic_load_explicit(&cache_off, memory_order_relaxed))
		return secp256k1_xonly_pubkey_parse(ctx, pk, pub) == 1;
	struct key_slot *s = slot_for(pub);
	if (s->kind == KEY_XONLY && !memcmp(s->ser, pub, 32)) {
		*pk = s->u.xk;
		return true;
	}
	if (!secp256k1_xonly_pubkey_parse(ctx, pk, pub))
		return false;
	s->kind = KEY_XONLY;
	memcpy(s->ser, pub, 32);
	s->u.xk = *pk;
	return true;
}
