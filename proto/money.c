/*
 * proto/money.c: an amount as text, as Bitcoin Core's FormatMoney
 * (util/moneystr.cpp) writes it in reject reasons and log lines.
 *
 * The one copy: chain/ (ConnectBlock's "value in (...) < value out (...)"),
 * mempool/ (the replacement rules' fee comparisons) and peertool's
 * check-standard all print through it, so their texts cannot drift apart.
 */
#include <stdio.h>

#include "proto/proto.h"

void proto_format_money(int64_t sats, char out[PROTO_MONEY_STRLEN])
{
	/* The magnitude in unsigned arithmetic: -INT64_MIN does not fit an
	 * int64_t, and Core 29 prints that amount too. */
	uint64_t a = sats < 0 ? (uint64_t)0 - (uint64_t)sats : (uint64_t)sats;
	int n = snprintf(out, PROTO_MONEY_STRLEN, "%s%llu.%08llu", sats < 0 ? "-" : "",
	                 (unsigned long long)(a / (uint64_t)PROTO_COIN),
	                 (unsigned long long)(a % (uint64_t)PROTO_COIN));
	/* Trim trailing zeros, but keep two decimals: the loop stops when the
	 * character two to the left is the point ("1.00", "0.10"). */
	while (out[n - 1] == '0' && out[n - 3] != '.')
		out[--n] = '\0';
}
