/*
 * script/stack.h: the stack's primitives and script numbers, shared by the
 * opcodes of script/interp.c and script/checksig.c and nobody else.
 *
 * Static inline on purpose: they run once or more per opcode, and were
 * inlined into the interpreter's loop when they lived in interp.c; a call
 * across files for each would cost the hot path (ConnectBlock*,
 * VerifyScript* benchmarks). See script/internal.h for the stack's layout.
 */
#ifndef PEERD_SCRIPT_STACK_H
#define PEERD_SCRIPT_STACK_H

#ifndef PEERD_SCRIPT_INTERNAL_H
#error "include script/internal.h first"
#endif

#include <limits.h>

/** Script numbers: 4-byte operands, 5 for CHECKLOCKTIMEVERIFY/CHECKSEQUENCEVERIFY. */
#define NUM_MAX_LEN          4u
#define NUM_MAX_LEN_LOCKTIME 5u

/* Core's CScriptNum(vch, fRequireMinimal, nMaxNumSize). */
static inline int num_decode(const struct script_item *it, bool minimal, uint32_t max_len,
                             int64_t *out)
{
	uint32_t len = it->len;
	const uint8_t *p = item_data(it);
	if (len > max_len)
		return -SCRIPT_ERR_UNKNOWN_ERROR;
	if (len == 0) {
		*out = 0;
		return 0;
	}
	/* Minimal: the top byte (sign bit aside) may be zero only when the
	 * byte below needs its high bit for magnitude. */
	if (minimal && (p[len - 1] & 0x7f) == 0 && (len <= 1 || (p[len - 2] & 0x80) == 0))
		return -SCRIPT_ERR_UNKNOWN_ERROR;
	uint64_t v = 0;
	for (uint32_t i = 0; i < len; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (p[len - 1] & 0x80) {
		v &= ~((uint64_t)0x80 << (8 * (len - 1)));
		*out = -(int64_t)v;
	} else {
		*out = (int64_t)v;
	}
	return 0;
}

/* CScriptNum::getint(): saturate to int. */
static inline int num_getint(int64_t v)
{
	if (v > INT_MAX)
		return INT_MAX;
	if (v < INT_MIN)
		return INT_MIN;
	return (int)v;
}

static inline void item_set_num(struct script_item *it, int64_t v)
{
	uint32_t n = 0;
	it->ext = NULL;
	if (v == 0) {
		it->len = 0;
		return;
	}
	bool neg = v < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	while (a) {
		it->inl[n++] = (uint8_t)a;
		a >>= 8;
	}
	/* The sign lives in the top bit of the last byte; add a byte if the
	 * magnitude already uses it. */
	if (it->inl[n - 1] & 0x80)
		it->inl[n++] = neg ? 0x80 : 0x00;
	else if (neg)
		it->inl[n - 1] |= 0x80;
	it->len = n;
}

static inline void item_set_bool(struct script_item *it, bool b)
{
	it->ext = NULL;
	it->len = b ? 1 : 0;
	it->inl[0] = 1;
}

static inline struct script_item *top(struct script_exec *ex, int i)
{
	return &ex->items[(int)ex->n + i];
}

/* A fresh slot on top of the main stack, or NULL when the scratch area is
 * full (cannot happen while the 1,000-item limit holds; see internal.h). */
static inline struct script_item *push_slot(struct script_exec *ex)
{
	if (ex->n + ex->alt_n >= ex->cap)
		return NULL;
	return &ex->items[ex->n++];
}

static inline void pop(struct script_exec *ex)
{
	ex->n--;
}

#endif
