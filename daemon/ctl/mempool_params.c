/*
 * daemon/ctl/mempool_params.c: what the mempool methods (mempool_methods.c)
 * and the package methods (package_methods.c) share: Core's parsers for
 * amounts, feerates and hex transactions, the maxburnamount check, the
 * reject reason's text, and a package's size check, members and arrays.
 * Moved out of mempool_methods.c (issue 19); what sendrawtransaction,
 * testmempoolaccept and submitpackage each wrote again is here once.
 */
#include "daemon/ctl/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"

#define fail ctl_fail

/** Satoshis in a bitcoin. */
#define CTL_COIN PROTO_COIN
/** Core's MAX_MONEY. */
#define CTL_MAX_MONEY PROTO_MAX_MONEY
/** Core's ParseFixedPoint's bound: satoshis below 10^18. */
#define CTL_FIXED_MAX 1000000000000000000LL

/* ---- parameters ----------------------------------------------------------- */

/* A decimal amount string with at most eight decimals (Core's
 * ParseFixedPoint, exponents aside) into satoshis; false when malformed. */
static bool parse_fixed(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	if (neg)
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	int64_t whole = 0, frac = 0;
	int ndig = 0, nfrac = 0;
	for (; isdigit((unsigned char)*s); s++) {
		if (++ndig > 11) /* more than MAX_MONEY's digits: out of range */
			return false;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return false;
		for (; isdigit((unsigned char)*s); s++) {
			if (++nfrac > 8)
				return false;
			frac = frac * 10 + (*s - '0');
		}
	}
	if (*s)
		return false;
	for (; nfrac < 8; nfrac++)
		frac *= 10;
	*out = (whole * CTL_COIN + frac) * (neg ? -1 : 1);
	return true;
}

/*
 * Core's AmountFromValue(v, 8): BTC as a number or a string into
 * satoshis, 0 to MAX_MONEY; absent or null is `def`.
 */
bool ctl_param_amount(json_t *v, int64_t def, int64_t *out, struct ctl_result *res)
{
	int64_t sats;
	if (!v || json_is_null(v)) {
		*out = def;
		return true;
	}
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		/* Core's ParseFixedPoint holds under 10^18 satoshis: "Invalid amount". */
		if (i >= CTL_FIXED_MAX / CTL_COIN || i <= -(CTL_FIXED_MAX / CTL_COIN)) {
			fail(res, CTL_TYPE_ERROR, "Invalid amount");
			return false;
		}
		sats = (int64_t)i * CTL_COIN;
	} else if (json_is_real(v)) {
		double d = json_real_value(v) * (double)CTL_COIN;
		if (!isfinite(d) || fabs(d) >= (double)CTL_FIXED_MAX) {
			fail(res, CTL_TYPE_ERROR, "Invalid amount");
			return false;
		}
		sats = llround(d);
		/* More than eight decimals: Core's parser refuses the text. */
		if (fabs(d - (double)sats) > 1e-3) {
			fail(res, CTL_TYPE_ERROR, "Invalid amount");
			return false;
		}
	} else if (json_is_string(v)) {
		if (!parse_fixed(json_string_value(v), &sats)) {
			fail(res, CTL_TYPE_ERROR, "Invalid amount");
			return false;
		}
	} else {
		fail(res, CTL_TYPE_ERROR, "Amount is not a number or string");
		return false;
	}
	if (sats < 0 || sats > CTL_MAX_MONEY) {
		fail(res, CTL_TYPE_ERROR, "Amount out of range");
		return false;
	}
	*out = sats;
	return true;
}

/* Core's ParseFeeRate: an amount in BTC/kvB into sat/kvB, below 1 BTC/kvB. */
bool ctl_param_feerate(json_t *v, int64_t def, int64_t *out, struct ctl_result *res)
{
	int64_t sats;
	if (!ctl_param_amount(v, def, &sats, res))
		return false;
	if (sats >= CTL_COIN) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Fee rates larger than or equal to 1BTC/kvB are not accepted");
		return false;
	}
	*out = sats;
	return true;
}

/*
 * Hex into a decoded transaction (Core's DecodeHexTx): false when it is
 * not hex or not one whole transaction. tx must be initialised.
 */
bool ctl_decode_hex_tx(json_t *v, struct proto_tx *tx)
{
	if (!json_is_string(v))
		return false;
	size_t hl = json_string_length(v);
	if (hl == 0 || hl % 2)
		return false;
	uint8_t *raw = xmalloc(hl / 2);
	size_t len = 0;
	bool good = raw && proto_hex_decode(json_string_value(v), hl, raw, hl / 2, &len) == 0 &&
	            proto_tx_decode_buf(raw, len, tx, NULL) == 0;
	xfree(raw);
	if (good)
		proto_tx_compute_ids(tx);
	return good;
}

/* ---- shared pieces ---------------------------------------------------------- */

/* Core's CScript::HasValidOps: every push complete, no opcode above OP_NOP10. */
static bool script_valid_ops(const uint8_t *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		uint8_t op = s[i++];
		size_t n = 0;
		if (op >= 1 && op <= 75) {
			n = op;
		} else if (op == 0x4c || op == 0x4d || op == 0x4e) {
			size_t w = op == 0x4c ? 1 : op == 0x4d ? 2 : 4;
			if (len - i < w)
				return false;
			for (size_t k = 0; k < w; k++)
				n |= (size_t)s[i + k] << (8 * k);
			i += w;
		} else if (op > 0xb9) {
			return false;
		}
		if (len - i < n)
			return false;
		i += n;
	}
	return true;
}

/* Core's IsUnspendable (OP_RETURN first, or longer than MAX_SCRIPT_SIZE) or not HasValidOps. */
static bool output_burns(const struct proto_tx *tx, const struct proto_txout *out)
{
	const uint8_t *s = tx->blob + out->script_off;
	size_t len = out->script_len;
	return (len > 0 && s[0] == 0x6a) || len > 10000 || !script_valid_ops(s, len);
}

/* Core's ValidationState::ToString: the reason, then ", debug" when there
 * is one. A transaction's state and a package's print the same way. */
static void reason_debug(const char *reason, const char *debug, char *buf, size_t cap)
{
	if (debug[0])
		snprintf(buf, cap, "%s, %s", reason, debug);
	else
		snprintf(buf, cap, "%s", reason);
}

void ctl_state_string(const struct chain_state *st, char *buf, size_t cap)
{
	reason_debug(st->reason, st->debug, buf, cap);
}

bool ctl_check_burn(const struct proto_tx *tx, int64_t maxburn, struct ctl_result *res)
{
	for (uint32_t o = 0; o < tx->n_out; o++) {
		if (output_burns(tx, &tx->vout[o]) && tx->vout[o].value > maxburn) {
			fail(res, CTL_VERIFY_ERROR,
			     "Unspendable output exceeds maximum configured by user "
			     "(maxburnamount)");
			return false;
		}
	}
	return true;
}

bool ctl_package_count(json_t *raws, size_t *n, struct ctl_result *res)
{
	*n = json_array_size(raws);
	if (*n < 1 || *n > MEMPOOL_MAX_PACKAGE_COUNT) {
		fail(res, CTL_INVALID_PARAMETER,
		     "Array must contain between 1 and %u transactions.",
		     MEMPOOL_MAX_PACKAGE_COUNT);
		return false;
	}
	return true;
}

bool ctl_package_decode_tx(json_t *h, struct proto_tx *tx, struct ctl_result *res)
{
	if (!ctl_json_want(h, CTL_ARG_STR, res))
		return false;
	if (!ctl_decode_hex_tx(h, tx)) {
		fail(res, CTL_DESERIALIZATION_ERROR,
		     "TX decode failed: %s Make sure the tx has at least one input.",
		     json_is_string(h) ? json_string_value(h) : "");
		return false;
	}
	return true;
}

bool ctl_package_alloc(struct ctl_package *p, size_t n, struct ctl_result *res)
{
	*p = (struct ctl_package){0};
	p->txs = xcalloc(n, sizeof(*p->txs));
	p->ptrs = xcalloc(n, sizeof(*p->ptrs));
	p->rs = xcalloc(n, sizeof(*p->rs));
	if (!p->txs || !p->ptrs || !p->rs) {
		ctl_package_release(p);
		fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return false;
	}
	p->n = n;
	for (size_t i = 0; i < n; i++) {
		proto_tx_init(&p->txs[i]);
		mempool_accept_result_init(&p->rs[i]);
		p->ptrs[i] = &p->txs[i];
	}
	return true;
}

void ctl_package_release(struct ctl_package *p)
{
	for (size_t i = 0; i < p->n; i++) {
		proto_tx_release(&p->txs[i]);
		mempool_accept_result_release(&p->rs[i]);
	}
	xfree(p->txs);
	xfree(p->ptrs);
	xfree(p->rs);
	*p = (struct ctl_package){0};
}

void ctl_package_reason(const struct mempool_package_state *st, char *buf, size_t cap)
{
	reason_debug(st->reason, st->debug, buf, cap);
}
