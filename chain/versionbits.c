/*
 * chain/versionbits.c: BIP9 threshold states as Bitcoin Core 29's
 * versionbits.cpp, with each network's deployments as its
 * kernel/chainparams.cpp sets them.
 *
 * A state is computed for the last block of a period (or NULL before
 * genesis) from the state of the last block of the period before, so a
 * query walks back period by period until it meets a known state (the
 * cache), NULL, or a block whose median time past is before the start
 * (everything earlier is DEFINED), then forward, caching each step. The
 * cache is an open-addressing table from node pointer to state, one per
 * deployment; a failed insertion (out of memory) only costs a recount.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"

/* Core's DeploymentPos names; every deployment of Core 29 is gbt_force. */
static const char *const NAMES[CHAIN_VB_COUNT] = {"testdummy", "taproot"};

/* One cached state. */
struct slot {
	const struct chain_node *key; /* NULL: empty */
	uint8_t state;
};

struct cache {
	struct slot *v;
	size_t cap, n; /* cap a power of two */
};

struct chain_vb {
	struct chain_vb_deployment dep[CHAIN_VB_COUNT];
	struct cache cache[CHAIN_VB_COUNT];
	/* Core's WarningBitsConditionChecker: one pseudo-deployment a bit,
	 * started at genesis, never timing out, with the network's window and
	 * threshold; a block counts only from warn_min_height on. */
	struct chain_vb_deployment warn;
	int32_t warn_min_height;
	struct cache warn_cache[CHAIN_VB_WARN_BITS];
};

/* Core 29's vDeployments of each network. */
static void defaults(const struct proto_params *p, struct chain_vb_deployment *d)
{
	for (int i = 0; i < CHAIN_VB_COUNT; i++)
		d[i].name = NAMES[i];
	d[CHAIN_VB_TESTDUMMY].bit = 28;
	d[CHAIN_VB_TAPROOT].bit = 2;
	for (int i = 0; i < CHAIN_VB_COUNT; i++) {
		d[i].start_time = CHAIN_VB_NEVER_ACTIVE;
		d[i].timeout = CHAIN_VB_NO_TIMEOUT;
		d[i].min_activation_height = 0;
		d[i].period = 2016;
		d[i].threshold = 1815; /* 90 % */
	}
	struct chain_vb_deployment *tr = &d[CHAIN_VB_TAPROOT];
	switch (p->net) {
	case PROTO_NET_MAIN:
		tr->start_time = 1619222400; /* April 24th, 2021 */
		tr->timeout = 1628640000;    /* August 11th, 2021 */
		tr->min_activation_height = 709632;
		break;
	case PROTO_NET_TESTNET3:
		d[CHAIN_VB_TESTDUMMY].threshold = tr->threshold = 1512; /* 75 % */
		tr->start_time = 1619222400;
		tr->timeout = 1628640000;
		break;
	case PROTO_NET_TESTNET4:
		d[CHAIN_VB_TESTDUMMY].threshold = tr->threshold = 1512;
		tr->start_time = CHAIN_VB_ALWAYS_ACTIVE;
		break;
	case PROTO_NET_SIGNET:
		tr->start_time = CHAIN_VB_ALWAYS_ACTIVE;
		break;
	case PROTO_NET_REGTEST:
	default:
		for (int i = 0; i < CHAIN_VB_COUNT; i++) {
			d[i].period = 144;
			d[i].threshold = 108; /* 75 % */
		}
		d[CHAIN_VB_TESTDUMMY].start_time = 0;
		tr->start_time = CHAIN_VB_ALWAYS_ACTIVE;
		break;
	}
}

int chain_vb_new(struct chain_vb **out, const struct proto_params *p,
                 const struct chain_vb_deployment *over)
{
	struct chain_vb *vb = xcalloc(1, sizeof(*vb));
	*out = NULL;
	if (!vb)
		return CHAIN_ENOMEM;
	defaults(p, vb->dep);
	/* Core 29's nMinerConfirmationWindow and nRuleChangeActivationThreshold
	 * (what the warning checker counts with) equal testdummy's period and
	 * threshold on every network; MinBIP9WarningHeight is taproot's
	 * activation height plus a window on main, segwit's plus a window on
	 * testnet3, 0 elsewhere. */
	vb->warn = vb->dep[CHAIN_VB_TESTDUMMY];
	vb->warn.name = "unknown";
	vb->warn.start_time = 0;
	vb->warn.timeout = CHAIN_VB_NO_TIMEOUT;
	vb->warn.min_activation_height = 0;
	vb->warn_min_height = p->net == PROTO_NET_MAIN       ? 709632 + 2016
	                      : p->net == PROTO_NET_TESTNET3 ? 834624 + 2016
	                                                     : 0;
	for (int i = 0; over && i < CHAIN_VB_COUNT; i++) {
		if (!over[i].name)
			continue;
		vb->dep[i].start_time = over[i].start_time;
		vb->dep[i].timeout = over[i].timeout;
		vb->dep[i].min_activation_height = over[i].min_activation_height;
	}
	*out = vb;
	return 0;
}

void chain_vb_free(struct chain_vb *vb)
{
	if (!vb)
		return;
	for (int i = 0; i < CHAIN_VB_COUNT; i++)
		xfree(vb->cache[i].v);
	for (int i = 0; i < CHAIN_VB_WARN_BITS; i++)
		xfree(vb->warn_cache[i].v);
	xfree(vb);
}

const struct chain_vb_deployment *chain_vb_deployment(const struct chain_vb *vb,
                                                      enum chain_vb_pos pos)
{
	return &vb->dep[pos];
}

bool chain_vb_enabled(const struct chain_vb *vb, enum chain_vb_pos pos)
{
	return vb->dep[pos].start_time != CHAIN_VB_NEVER_ACTIVE;
}

const char *chain_vb_state_name(enum chain_vb_state s)
{
	static const char *const n[] = {"defined", "started", "locked_in", "active", "failed"};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "invalid";
}

/* ---- the cache ----------------------------------------------------------- */

static size_t slot_of(const struct cache *k, const struct chain_node *n)
{
	uintptr_t h = (uintptr_t)n;
	h ^= h >> 17;
	h *= (uintptr_t)0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 29)) & (k->cap - 1);
}

static bool cache_get(const struct cache *k, const struct chain_node *n, enum chain_vb_state *s)
{
	if (!k->cap)
		return false;
	for (size_t i = slot_of(k, n);; i = (i + 1) & (k->cap - 1)) {
		if (!k->v[i].key)
			return false;
		if (k->v[i].key == n) {
			*s = (enum chain_vb_state)k->v[i].state;
			return true;
		}
	}
}

static void cache_put_raw(struct cache *k, const struct chain_node *n, enum chain_vb_state s)
{
	size_t i = slot_of(k, n);
	while (k->v[i].key && k->v[i].key != n)
		i = (i + 1) & (k->cap - 1);
	if (!k->v[i].key)
		k->n++;
	k->v[i].key = n;
	k->v[i].state = (uint8_t)s;
}

/* Kept at most half full; out of memory leaves it as it was. */
static void cache_put(struct cache *k, const struct chain_node *n, enum chain_vb_state s)
{
	if (2 * (k->n + 1) > k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		struct slot *v = xcalloc(cap, sizeof(*v));
		if (!v)
			return;
		struct cache nk = {.v = v, .cap = cap};
		for (size_t i = 0; i < k->cap; i++)
			if (k->v[i].key)
				cache_put_raw(&nk, k->v[i].key, (enum chain_vb_state)k->v[i].state);
		xfree(k->v);
		*k = nk;
	}
	cache_put_raw(k, n, s);
}

/* ---- the states ---------------------------------------------------------- */

/* Core's VersionBitsConditionChecker::Condition. */
static bool signals(const struct chain_node *n, int bit)
{
	uint32_t v = (uint32_t)n->version;
	return (v & CHAIN_VB_TOP_MASK) == CHAIN_VB_TOP_BITS && (v & (1u << bit)) != 0;
}

static const struct chain_node *ancestor(const struct chain_node *n, int32_t height)
{
	/* chain_node_ancestor only reads; its parameter is not const. */
	return chain_node_ancestor((struct chain_node *)n, height);
}

/* The last block of the period before the block after prev. */
static const struct chain_node *period_start(const struct chain_node *prev, int32_t period)
{
	if (!prev)
		return NULL;
	return ancestor(prev, prev->height - ((prev->height + 1) % period));
}

/*
 * Core's WarningBitsConditionChecker::Condition: the block signals the bit
 * (from the warning height on) although a block built on its parent by
 * this node would not, so no deployment this node knows explains it.
 */
static bool signals_unknown(struct chain_vb *vb, const struct chain_node *n, int bit)
{
	return n->height >= vb->warn_min_height && signals(n, bit) &&
	       ((uint32_t)chain_vb_block_version(vb, n->prev) & (1u << bit)) == 0;
}

/* Core's AbstractThresholdConditionChecker::GetStateFor, for a known
 * deployment (warn false) or the unknown-bit checker of bit d->bit. */
static enum chain_vb_state state_for(struct chain_vb *vb, const struct chain_vb_deployment *d,
                                     struct cache *k, const struct chain_node *prev, bool warn)
{
	if (d->start_time == CHAIN_VB_ALWAYS_ACTIVE)
		return CHAIN_VB_ACTIVE;
	if (d->start_time == CHAIN_VB_NEVER_ACTIVE)
		return CHAIN_VB_FAILED;
	prev = period_start(prev, d->period);
	/* Back to a known state: the blocks to compute, latest first. */
	const struct chain_node **todo = NULL;
	size_t n = 0, cap = 0;
	enum chain_vb_state s = CHAIN_VB_DEFINED;
	while (prev && !cache_get(k, prev, &s)) {
		if (chain_node_mtp(prev) < d->start_time) {
			/* Everything before the start is DEFINED. */
			s = CHAIN_VB_DEFINED;
			cache_put(k, prev, s);
			break;
		}
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			const struct chain_node **t = xreallocarray(todo, nc, sizeof(*t));
			if (!t)
				break; /* computed from DEFINED below: wrong only without memory */
			todo = t;
			cap = nc;
		}
		todo[n++] = prev;
		prev = ancestor(prev, prev->height - d->period);
		s = CHAIN_VB_DEFINED; /* NULL: genesis is DEFINED by definition */
	}
	/* Forward, a period at a time. */
	while (n > 0) {
		const struct chain_node *at = todo[--n];
		int64_t mtp = chain_node_mtp(at);
		enum chain_vb_state next = s;
		switch (s) {
		case CHAIN_VB_DEFINED:
			if (mtp >= d->start_time)
				next = CHAIN_VB_STARTED;
			break;
		case CHAIN_VB_STARTED: {
			int32_t count = 0;
			const struct chain_node *w = at;
			for (int32_t i = 0; i < d->period && w; i++, w = w->prev)
				count += warn ? signals_unknown(vb, w, d->bit) : signals(w, d->bit);
			if (count >= d->threshold)
				next = CHAIN_VB_LOCKED_IN;
			else if (mtp >= d->timeout)
				next = CHAIN_VB_FAILED;
			break;
		}
		case CHAIN_VB_LOCKED_IN:
			if (at->height + 1 >= d->min_activation_height)
				next = CHAIN_VB_ACTIVE;
			break;
		case CHAIN_VB_FAILED:
		case CHAIN_VB_ACTIVE:
			break;
		}
		cache_put(k, at, next);
		s = next;
	}
	xfree(todo);
	return s;
}

enum chain_vb_state chain_vb_state(struct chain_vb *vb, const struct chain_node *prev,
                                   enum chain_vb_pos pos)
{
	return state_for(vb, &vb->dep[pos], &vb->cache[pos], prev, false);
}

uint32_t chain_vb_unknown_rules(struct chain_vb *vb, const struct chain_node *tip,
                                uint32_t *locked_in)
{
	uint32_t active = 0, locked = 0;
	for (int bit = 0; bit < CHAIN_VB_WARN_BITS; bit++) {
		struct chain_vb_deployment d = vb->warn;
		d.bit = bit;
		enum chain_vb_state s = state_for(vb, &d, &vb->warn_cache[bit], tip, true);
		if (s == CHAIN_VB_ACTIVE)
			active |= 1u << bit;
		else if (s == CHAIN_VB_LOCKED_IN)
			locked |= 1u << bit;
	}
	if (locked_in)
		*locked_in = locked;
	return active;
}

int32_t chain_vb_since(struct chain_vb *vb, const struct chain_node *prev, enum chain_vb_pos pos)
{
	const struct chain_vb_deployment *d = &vb->dep[pos];
	if (d->start_time == CHAIN_VB_ALWAYS_ACTIVE || d->start_time == CHAIN_VB_NEVER_ACTIVE)
		return 0;
	enum chain_vb_state s = chain_vb_state(vb, prev, pos);
	if (s == CHAIN_VB_DEFINED)
		return 0;
	prev = period_start(prev, d->period);
	const struct chain_node *before = ancestor(prev, prev->height - d->period);
	while (before && chain_vb_state(vb, before, pos) == s) {
		prev = before;
		before = ancestor(prev, prev->height - d->period);
	}
	return prev->height + 1;
}

void chain_vb_statistics(const struct chain_vb *vb, const struct chain_node *n,
                         enum chain_vb_pos pos, struct chain_vb_stats *out, char *sig)
{
	const struct chain_vb_deployment *d = &vb->dep[pos];
	memset(out, 0, sizeof(*out));
	out->period = d->period;
	out->threshold = d->threshold;
	if (sig)
		sig[0] = 0;
	if (!n)
		return;
	int32_t in_period = 1 + n->height % d->period;
	if (sig)
		sig[in_period] = 0;
	/* From n back to the period's first block. */
	for (int32_t i = in_period; i > 0 && n; i--, n = n->prev) {
		bool s = signals(n, d->bit);
		out->elapsed++;
		out->count += s;
		if (sig)
			sig[i - 1] = s ? '#' : '-';
	}
	out->possible = out->period - out->threshold >= out->elapsed - out->count;
}

int32_t chain_vb_block_version(struct chain_vb *vb, const struct chain_node *prev)
{
	uint32_t v = CHAIN_VB_TOP_BITS;
	for (int i = 0; i < CHAIN_VB_COUNT; i++) {
		enum chain_vb_state s = chain_vb_state(vb, prev, (enum chain_vb_pos)i);
		if (s == CHAIN_VB_STARTED || s == CHAIN_VB_LOCKED_IN)
			v |= 1u << vb->dep[i].bit;
	}
	return (int32_t)v;
}

/* ---- -vbparams ----------------------------------------------------------- */

/* Core's ToIntegral<int64_t>: an optional '-', then decimal digits only, in range. */
static bool to_int64(const char *s, size_t len, int64_t *out)
{
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	const char *p = buf[0] == '-' ? buf + 1 : buf;
	if (!*p)
		return false;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	errno = 0;
	char *end;
	long long v = strtoll(buf, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int chain_vb_parse(const char *s, struct chain_vb_deployment *over, char *err, size_t err_len)
{
	const char *part[5];
	size_t len[5], n = 0;
	const char *at = s;
	for (;;) {
		const char *colon = strchr(at, ':');
		size_t l = colon ? (size_t)(colon - at) : strlen(at);
		if (n < 5) {
			part[n] = at;
			len[n] = l;
		}
		n++;
		if (!colon)
			break;
		at = colon + 1;
	}
	if (n < 3 || n > 4) {
		snprintf(err, err_len,
		         "Version bits parameters malformed, expecting "
		         "deployment:start:end[:min_activation_height]");
		return -1;
	}
	int64_t start, timeout, min_h = 0;
	if (!to_int64(part[1], len[1], &start)) {
		snprintf(err, err_len, "Invalid nStartTime (%.*s)", (int)len[1], part[1]);
		return -1;
	}
	if (!to_int64(part[2], len[2], &timeout)) {
		snprintf(err, err_len, "Invalid nTimeout (%.*s)", (int)len[2], part[2]);
		return -1;
	}
	if (n == 4 && !to_int64(part[3], len[3], &min_h)) {
		snprintf(err, err_len, "Invalid min_activation_height (%.*s)", (int)len[3],
		         part[3]);
		return -1;
	}
	for (int i = 0; i < CHAIN_VB_COUNT; i++) {
		if (strlen(NAMES[i]) != len[0] || memcmp(NAMES[i], part[0], len[0]))
			continue;
		over[i].name = NAMES[i];
		over[i].start_time = start;
		over[i].timeout = timeout;
		/* Core keeps it in an int: the low 32 bits, as its conversion does. */
		over[i].min_activation_height = (int32_t)(uint32_t)(uint64_t)min_h;
		return 0;
	}
	snprintf(err, err_len, "Invalid deployment (%.*s)", (int)len[0], part[0]);
	return -1;
}
