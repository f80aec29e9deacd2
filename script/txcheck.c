/*
 * script/txcheck.c: Bitcoin Core's CheckTransaction, the checks a
 * transaction must pass before any context (UTXOs, chain) is looked at.
 * The order of the checks is Core's, so the first failure has Core's
 * reject reason.
 */
#include "script/script.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/** Coinbase scriptSig length bounds. */
#define TXCHECK_CB_MIN 2u
#define TXCHECK_CB_MAX 100u
/** Up to this many inputs, duplicates are found by comparing every pair. */
#define TXCHECK_PAIRWISE_MAX 32u

static const char *const reasons[] = {
    [0] = "ok",
    [-SCRIPT_TX_VIN_EMPTY] = "bad-txns-vin-empty",
    [-SCRIPT_TX_VOUT_EMPTY] = "bad-txns-vout-empty",
    [-SCRIPT_TX_OVERSIZE] = "bad-txns-oversize",
    [-SCRIPT_TX_VOUT_NEGATIVE] = "bad-txns-vout-negative",
    [-SCRIPT_TX_VOUT_TOOLARGE] = "bad-txns-vout-toolarge",
    [-SCRIPT_TX_TXOUTTOTAL_TOOLARGE] = "bad-txns-txouttotal-toolarge",
    [-SCRIPT_TX_INPUTS_DUPLICATE] = "bad-txns-inputs-duplicate",
    [-SCRIPT_TX_CB_LENGTH] = "bad-cb-length",
    [-SCRIPT_TX_PREVOUT_NULL] = "bad-txns-prevout-null",
    [-SCRIPT_TX_ENOMEM] = "out-of-memory",
};

const char *script_tx_reason(int err)
{
	if (err > 0 || err < SCRIPT_TX_ERR__MIN)
		return "unknown";
	return reasons[-err];
}

/* Serialized size without witness, from the fields (the tx may not have
 * come from the decoder). */
static uint64_t stripped_size(const struct proto_tx *tx)
{
	uint64_t n = 8 + proto_compact_size(tx->n_in) + proto_compact_size(tx->n_out);
	for (uint32_t i = 0; i < tx->n_in; i++)
		n += 40 + proto_compact_size(tx->vin[i].script_len) + tx->vin[i].script_len;
	for (uint32_t i = 0; i < tx->n_out; i++)
		n += 8 + proto_compact_size(tx->vout[i].script_len) + tx->vout[i].script_len;
	return n;
}

static int outpoint_cmp(const void *a, const void *b)
{
	const struct proto_outpoint *x = a, *y = b;
	int c = memcmp(x->txid.b, y->txid.b, 32);
	if (c)
		return c;
	return x->n < y->n ? -1 : x->n > y->n;
}

static bool outpoint_eq(const struct proto_outpoint *x, const struct proto_outpoint *y)
{
	return x->n == y->n && memcmp(x->txid.b, y->txid.b, 32) == 0;
}

/* 1 if two inputs spend the same outpoint, 0 if not, SCRIPT_TX_ENOMEM. */
static int has_duplicate(const struct proto_tx *tx)
{
	if (tx->n_in <= TXCHECK_PAIRWISE_MAX) {
		for (uint32_t i = 1; i < tx->n_in; i++) {
			for (uint32_t j = 0; j < i; j++) {
				if (outpoint_eq(&tx->vin[i].prevout, &tx->vin[j].prevout))
					return 1;
			}
		}
		return 0;
	}
	struct proto_outpoint *v = xcalloc(tx->n_in, sizeof(*v));
	if (!v)
		return SCRIPT_TX_ENOMEM;
	for (uint32_t i = 0; i < tx->n_in; i++)
		v[i] = tx->vin[i].prevout;
	qsort(v, tx->n_in, sizeof(*v), outpoint_cmp);
	int dup = 0;
	for (uint32_t i = 1; i < tx->n_in && !dup; i++)
		dup = outpoint_eq(&v[i - 1], &v[i]);
	xfree(v);
	return dup;
}

static bool prevout_is_null(const struct proto_outpoint *o)
{
	return o->n == UINT32_MAX && proto_hash_is_zero(&o->txid);
}

int script_check_transaction(const struct proto_tx *tx)
{
	if (tx->n_in == 0)
		return SCRIPT_TX_VIN_EMPTY;
	if (tx->n_out == 0)
		return SCRIPT_TX_VOUT_EMPTY;
	/* without the witness, whose malleability is not checked yet */
	if (stripped_size(tx) * PROTO_WITNESS_SCALE > PROTO_MAX_BLOCK_WEIGHT)
		return SCRIPT_TX_OVERSIZE;

	/* negative or overflowing values (CVE-2010-5139) */
	int64_t total = 0;
	for (uint32_t i = 0; i < tx->n_out; i++) {
		int64_t v = tx->vout[i].value;
		if (v < 0)
			return SCRIPT_TX_VOUT_NEGATIVE;
		if (v > PROTO_MAX_MONEY)
			return SCRIPT_TX_VOUT_TOOLARGE;
		total += v;
		if (total < 0 || total > PROTO_MAX_MONEY)
			return SCRIPT_TX_TXOUTTOTAL_TOOLARGE;
	}

	/* duplicate inputs (CVE-2018-17144) */
	int dup = has_duplicate(tx);
	if (dup < 0)
		return dup;
	if (dup)
		return SCRIPT_TX_INPUTS_DUPLICATE;

	if (proto_tx_is_coinbase(tx)) {
		uint32_t len = tx->vin[0].script_len;
		if (len < TXCHECK_CB_MIN || len > TXCHECK_CB_MAX)
			return SCRIPT_TX_CB_LENGTH;
	} else {
		for (uint32_t i = 0; i < tx->n_in; i++) {
			if (prevout_is_null(&tx->vin[i].prevout))
				return SCRIPT_TX_PREVOUT_NULL;
		}
	}
	return 0;
}
