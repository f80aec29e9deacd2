/*
 * tests/fuzz/fuzz_policy.c: the standardness rules (mempool/policy.c) on
 * any transaction and any spent outputs.
 *
 * Input: a 2-byte little-endian length L, L bytes of transaction, then
 * the spent outputs' scripts, each a length byte and that many bytes
 * (reused round-robin when there are fewer than inputs; empty when there
 * are none). Every check must return 0 or CHAIN_EINVALID with the verdict
 * kind and one of the reasons Core gives; dust and sigop figures must be
 * consistent with each other; nothing may read outside the transaction
 * or the scripts (ASan) or overflow (UBSan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/chain.h"
#include "mempool/mempool.h"
#include "script/script.h"

/** Most spent outputs one input gets (inputs beyond reuse them). */
#define FUZZ_MAX_PREV 64u

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_policy: invariant broken: %s\n", what);
		abort();
	}
}

static void check_verdict(int rc, const struct chain_state *st, enum chain_result kind,
                          const char *const *reasons)
{
	if (rc == 0)
		return;
	check(rc == CHAIN_EINVALID, "error code");
	check(st->result == kind, "verdict kind");
	for (size_t i = 0; reasons[i]; i++)
		if (!strcmp(st->reason, reasons[i]))
			return;
	check(0, "unknown reason");
}

static const char *const STANDARD_REASONS[] = {
    "version",      "tx-size",       "scriptsig-size", "scriptsig-not-pushonly",
    "scriptpubkey", "bare-multisig", "dust",           "multi-op-return",
    NULL,
};
static const char *const INPUT_REASONS[] = {"bad-txns-nonstandard-inputs", NULL};
static const char *const WITNESS_REASONS[] = {"bad-witness-nonstandard", NULL};
static const char *const DUST_REASONS[] = {"dust", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proto_tx tx; /* reused: storage reuse is fuzzed too */
	static const uint8_t empty[1];
	struct chain_coin prev[FUZZ_MAX_PREV];
	struct chain_state st;
	struct mempool_policy pol;
	if (size < 2)
		return 0;
	size_t len = (size_t)data[0] | (size_t)data[1] << 8;
	if (len > size - 2)
		len = size - 2;
	if (proto_tx_decode_buf(data + 2, len, &tx, NULL))
		return 0;

	/* the spent outputs' scripts */
	const uint8_t *p = data + 2 + len, *end = data + size;
	uint32_t n_prev = 0;
	while (n_prev < FUZZ_MAX_PREV && p < end) {
		size_t l = *p++;
		if (l > (size_t)(end - p))
			l = (size_t)(end - p);
		prev[n_prev++] = (struct chain_coin){
		    .value = (int64_t)l * 1000, .script = p, .script_len = (uint32_t)l};
		p += l;
	}
	if (n_prev == 0)
		prev[n_prev++] = (struct chain_coin){.script = empty};
	struct chain_coin *coins = calloc(tx.n_in ? tx.n_in : 1, sizeof(*coins));
	check(coins != NULL, "allocation");
	for (uint32_t j = 0; j < tx.n_in; j++)
		coins[j] = prev[j % n_prev];

	mempool_policy_default(&pol, proto_params(PROTO_NET_REGTEST));
	pol.permit_bare_multisig = data[0] & 1;
	pol.datacarrier = data[0] & 2;
	pol.dust_relay_feerate = (data[1] & 3) * 1500;

	chain_state_clear(&st);
	check_verdict(mempool_policy_check_standard(&tx, &pol, &st), &st,
	              CHAIN_RESULT_TX_NOT_STANDARD, STANDARD_REASONS);
	int rc = mempool_policy_check_nonwitness_size(&tx, &st);
	check((rc == 0) == (tx.stripped_size >= MEMPOOL_MIN_STANDARD_TX_NONWITNESS_SIZE),
	      "tx-size-small");
	check_verdict(mempool_policy_check_inputs(&tx, coins, &st), &st,
	              CHAIN_RESULT_TX_INPUTS_NOT_STANDARD, INPUT_REASONS);
	check_verdict(mempool_policy_check_witness(&tx, coins, &st), &st,
	              CHAIN_RESULT_TX_WITNESS_MUTATED, WITNESS_REASONS);

	/* dust: the list, the count and IsDust agree */
	uint32_t idx[8];
	uint32_t n_dust = mempool_policy_dust_outputs(&tx, pol.dust_relay_feerate, idx, 8);
	check(n_dust <= tx.n_out, "dust count");
	uint32_t seen = 0;
	for (uint32_t k = 0; k < tx.n_out; k++) {
		if (!mempool_policy_is_dust(&tx, k, pol.dust_relay_feerate))
			continue;
		check(seen >= 8 || idx[seen] == k, "dust index");
		seen++;
	}
	check(seen == n_dust, "dust list");
	rc = mempool_policy_check_ephemeral(&tx, 1, 0, &pol, &st);
	check_verdict(rc, &st, CHAIN_RESULT_TX_NOT_STANDARD, DUST_REASONS);
	check((rc == 0) == (n_dust == 0), "ephemeral dust");
	check(mempool_policy_check_ephemeral(&tx, 0, 0, &pol, &st) == 0, "zero fee");

	/* sigops: at least the legacy part, exactly it without P2SH/WITNESS */
	uint32_t legacy = chain_tx_legacy_sigops(&tx) * PROTO_WITNESS_SCALE;
	uint32_t cost = chain_tx_sigop_cost(&tx, coins, SCRIPT_VERIFY_STANDARD);
	check(cost >= legacy, "sigop cost below legacy");
	check(chain_tx_sigop_cost(&tx, coins, 0) == legacy, "sigop cost without flags");
	int64_t vsize = mempool_policy_vsize(proto_tx_weight(&tx), cost, pol.bytes_per_sigop);
	check(vsize >= (int64_t)proto_tx_vsize(&tx), "vsize");
	check(mempool_feerate_fee(pol.min_relay_feerate, vsize) >= vsize, "fee at 1 sat/vB");
	free(coins);
	return 0;
}
