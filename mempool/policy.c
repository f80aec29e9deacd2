/*
 * mempool/policy.c: Bitcoin Core 29's standardness rules (policy/policy.cpp,
 * policy/feerate.cpp, policy/ephemeral_policy.cpp, and the few reject
 * strings validation.cpp's PreChecks writes around them).
 *
 * Everything is pure; see mempool/policy.h. The order of the checks inside
 * each function is Core's, because the first rule broken names the reason
 * and peerd's answers are compared with Core's field by field.
 */
#include <math.h>
#include <string.h>

#include "mempool/mempool.h"
#include "script/script.h"

/* ---- knobs and arithmetic ---------------------------------------------- */

void mempool_policy_default(struct mempool_policy *pol, const struct proto_params *p)
{
	memset(pol, 0, sizeof(*pol));
	pol->dust_relay_feerate = MEMPOOL_DUST_RELAY_FEE;
	pol->min_relay_feerate = MEMPOOL_DEFAULT_MIN_RELAY_FEE;
	pol->incremental_relay_feerate = MEMPOOL_DEFAULT_INCREMENTAL_RELAY_FEE;
	pol->bytes_per_sigop = MEMPOOL_DEFAULT_BYTES_PER_SIGOP;
	pol->max_datacarrier_bytes = MEMPOOL_MAX_OP_RETURN_RELAY;
	pol->datacarrier = true;
	pol->permit_bare_multisig = true;
	/* Core's chainparams: only testnet3 leaves fRequireStandard off
	 * (-acceptnonstdtxn defaults to its negation). */
	pol->require_standard = !p || p->net != PROTO_NET_TESTNET3;
}

int64_t mempool_feerate_fee(int64_t sat_per_kvb, int64_t vsize)
{
	/* Core 29's CFeeRate::GetFee: the product in 64 bits, divided as a
	 * double and rounded up, so a fee is never below the rate. Done in
	 * the same arithmetic so that it rounds where Core's rounds. An
	 * overflowing product (far outside any real fee) is computed in
	 * double instead of wrapping. */
	int64_t prod;
	double q;
	if (__builtin_mul_overflow(sat_per_kvb, vsize, &prod))
		q = (double)sat_per_kvb * (double)vsize / 1000.0;
	else
		q = (double)prod / 1000.0;
	double c = ceil(q);
	int64_t fee;
	if (c >= 9.2e18)
		fee = INT64_MAX;
	else if (c <= -9.2e18)
		fee = INT64_MIN;
	else
		fee = (int64_t)c;
	/* A non-zero rate never makes a non-empty transaction free. */
	if (fee == 0 && vsize != 0) {
		if (sat_per_kvb > 0)
			fee = 1;
		if (sat_per_kvb < 0)
			fee = -1;
	}
	return fee;
}

int64_t mempool_policy_vsize(int64_t weight, int64_t sigop_cost, int64_t bytes_per_sigop)
{
	int64_t sig_weight = sigop_cost * bytes_per_sigop;
	int64_t w = weight > sig_weight ? weight : sig_weight;
	return (w + PROTO_WITNESS_SCALE - 1) / PROTO_WITNESS_SCALE;
}

/* ---- dust -------------------------------------------------------------- */

/*
 * What spending an output costs, in bytes, as Core's GetDustThreshold
 * estimates it: an outpoint, a scriptSig length byte, a sequence, and a
 * 107-byte signature and key, discounted to a quarter for a witness
 * program (whatever its version: a taproot key spend is smaller, but Core
 * kept the P2WPKH figure so as not to lower the dust level).
 */
#define DUST_SPEND_LEGACY  (32u + 4u + 1u + 107u + 4u)
#define DUST_SPEND_WITNESS (32u + 4u + 1u + 107u / PROTO_WITNESS_SCALE + 4u)

int64_t mempool_policy_dust_threshold(const uint8_t *spk, size_t len, int64_t dust_feerate)
{
	/* Core's IsUnspendable: never in the UTXO set, so never dust. */
	if ((len > 0 && spk[0] == SCRIPT_OP_RETURN) || len > SCRIPT_MAX_SIZE)
		return 0;
	int version;
	const uint8_t *program;
	size_t program_len;
	/* The output as serialized: value, script length, script. */
	uint64_t size = 8 + proto_compact_size(len) + len;
	if (script_is_witness_program(spk, len, &version, &program, &program_len))
		size += DUST_SPEND_WITNESS;
	else
		size += DUST_SPEND_LEGACY;
	return mempool_feerate_fee(dust_feerate, (int64_t)size);
}

bool mempool_policy_is_dust(const struct proto_tx *tx, uint32_t out, int64_t dust_feerate)
{
	const struct proto_txout *o = &tx->vout[out];
	return o->value < mempool_policy_dust_threshold(proto_txout_script(tx, o), o->script_len,
	                                                dust_feerate);
}

uint32_t mempool_policy_dust_outputs(const struct proto_tx *tx, int64_t dust_feerate, uint32_t *idx,
                                     uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < tx->n_out; k++) {
		if (!mempool_policy_is_dust(tx, k, dust_feerate))
			continue;
		if (n < cap)
			idx[n] = k;
		n++;
	}
	return n;
}

/* ---- IsStandardTx ------------------------------------------------------ */

/* Core's IsStandard for one output script; *type gets the template. */
static bool output_standard(const uint8_t *spk, size_t len, const struct mempool_policy *pol,
                            enum script_type *type)
{
	struct script_solution sol;
	*type = script_solve(spk, len, &sol);
	switch (*type) {
	case SCRIPT_TYPE_NONSTANDARD:
		return false;
	case SCRIPT_TYPE_MULTISIG:
		/* up to x-of-3 bare multisig */
		return sol.n_keys >= 1 && sol.n_keys <= 3 && sol.required >= 1 &&
		       sol.required <= sol.n_keys;
	case SCRIPT_TYPE_NULL_DATA:
		/* -datacarrier=0 is Core's max_datacarrier_bytes = nullopt */
		return pol->datacarrier && len <= pol->max_datacarrier_bytes;
	default:
		/* every other template, WITNESS_UNKNOWN and ANCHOR included */
		return true;
	}
}

int mempool_policy_check_standard(const struct proto_tx *tx, const struct mempool_policy *pol,
                                  struct chain_state *st)
{
	/* Core keeps the version unsigned: 0 and anything over 3 (negative
	 * numbers included) are out. */
	uint32_t version = (uint32_t)tx->version;
	if (version > MEMPOOL_TX_MAX_STANDARD_VERSION || version < 1)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "version", NULL);

	/* Signature hashing is O(inputs * size): cap the size. */
	if (proto_tx_weight(tx) > MEMPOOL_MAX_STANDARD_TX_WEIGHT)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "tx-size", NULL);

	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_txin *in = &tx->vin[j];
		/* room for a 15-of-15 P2SH multisig spend */
		if (in->script_len > MEMPOOL_MAX_STANDARD_SCRIPTSIG_SIZE)
			return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "scriptsig-size",
			                    NULL);
		if (!script_is_push_only(proto_txin_script(tx, in), in->script_len))
			return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD,
			                    "scriptsig-not-pushonly", NULL);
	}

	uint32_t data_outputs = 0;
	for (uint32_t k = 0; k < tx->n_out; k++) {
		const struct proto_txout *o = &tx->vout[k];
		enum script_type type;
		if (!output_standard(proto_txout_script(tx, o), o->script_len, pol, &type))
			return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "scriptpubkey", NULL);
		if (type == SCRIPT_TYPE_NULL_DATA)
			data_outputs++;
		else if (type == SCRIPT_TYPE_MULTISIG && !pol->permit_bare_multisig)
			return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "bare-multisig",
			                    NULL);
	}

	/* One dust output may pass here: mempool_policy_check_ephemeral then
	 * wants the transaction to pay nothing, so that it is only mined
	 * with a child that spends the dust. */
	if (mempool_policy_dust_outputs(tx, pol->dust_relay_feerate, NULL, 0) >
	    MEMPOOL_MAX_DUST_OUTPUTS_PER_TX)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "dust", NULL);

	if (data_outputs > 1)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "multi-op-return", NULL);
	return 0;
}

int mempool_policy_check_nonwitness_size(const struct proto_tx *tx, struct chain_state *st)
{
	/* A 64-byte transaction could pass for an inner merkle node
	 * (CVE-2017-12842); Core refuses everything under 65. */
	if (tx->stripped_size < MEMPOOL_MIN_STANDARD_TX_NONWITNESS_SIZE)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "tx-size-small", NULL);
	return 0;
}

/* ---- inputs ------------------------------------------------------------ */

/*
 * The P2SH redeem script an input offers: what Core's EvalScript(stack,
 * scriptSig, SCRIPT_VERIFY_NONE, BaseSignatureChecker(), BASE) leaves on
 * top of the stack. Only for push-only scriptSigs, which is all Core ever
 * gives it here: AreInputsStandard and IsWitnessStandard run only when
 * IsStandardTx passed, and that refuses any other scriptSig. A scriptSig
 * with another opcode is refused here too (false).
 *
 * False where EvalScript fails (a script over 10,000 bytes, a truncated
 * push, OP_RESERVED, a push over 520 bytes, over 1,000 items) or leaves
 * nothing. A number opcode's value goes to `small` (which must outlive
 * the result), a data push points into the scriptSig.
 */
static bool redeem_script(const uint8_t *sig, size_t len, uint8_t *small, const uint8_t **rs,
                          uint32_t *rs_len)
{
	const uint8_t *pc = sig, *end = sig + len;
	uint32_t depth = 0;
	if (len > SCRIPT_MAX_SIZE)
		return false;
	while (pc < end) {
		uint8_t op;
		const uint8_t *data;
		uint32_t data_len;
		if (!script_get_op(&pc, end, &op, &data, &data_len))
			return false;
		if (op <= SCRIPT_OP_PUSHDATA4) {
			if (data_len > SCRIPT_MAX_ELEMENT_SIZE)
				return false;
			*rs = data;
			*rs_len = data_len;
		} else if (op == SCRIPT_OP_1NEGATE || (op >= SCRIPT_OP_1 && op <= SCRIPT_OP_16)) {
			/* a script number: -1 is 0x81, n is the byte n */
			*small = op == SCRIPT_OP_1NEGATE ? 0x81 : (uint8_t)(op - SCRIPT_OP_1 + 1);
			*rs = small;
			*rs_len = 1;
		} else {
			return false; /* OP_RESERVED is a bad opcode; the rest are not pushes */
		}
		if (++depth > SCRIPT_MAX_STACK)
			return false;
	}
	return depth > 0;
}

int mempool_policy_check_inputs(const struct proto_tx *tx, const struct chain_coin *prev,
                                struct chain_state *st)
{
	if (proto_tx_is_coinbase(tx))
		return 0;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_txin *in = &tx->vin[j];
		struct script_solution sol;
		enum script_type type = script_solve(prev[j].script, prev[j].script_len, &sol);
		/* Spending a future witness version would fail the policy
		 * script flags anyway; Core catches it early, and so do we. */
		if (type == SCRIPT_TYPE_NONSTANDARD || type == SCRIPT_TYPE_WITNESS_UNKNOWN)
			goto bad;
		if (type == SCRIPT_TYPE_SCRIPTHASH) {
			uint8_t small;
			const uint8_t *rs = NULL;
			uint32_t rs_len = 0;
			if (!redeem_script(proto_txin_script(tx, in), in->script_len, &small, &rs,
			                   &rs_len))
				goto bad;
			if (script_sigop_count(rs, rs_len, true) > MEMPOOL_MAX_P2SH_SIGOPS)
				goto bad;
		}
	}
	return 0;
bad:
	/* Core 29 gives no debug message with this reason. */
	return chain_reject(st, CHAIN_RESULT_TX_INPUTS_NOT_STANDARD, "bad-txns-nonstandard-inputs",
	                    NULL);
}

static bool is_anchor(const uint8_t *spk, size_t len)
{
	return len == 4 && spk[0] == SCRIPT_OP_1 && spk[1] == 2 && spk[2] == 0x4e && spk[3] == 0x73;
}

/* Core's P2WSH limits: script, item count, item sizes. */
static bool p2wsh_witness_ok(const struct proto_tx *tx, const struct proto_txin *in)
{
	struct proto_witness_iter it;
	struct proto_span item;
	uint32_t k = 0, last = in->wit_count - 1;
	if (in->wit_count - 1 > MEMPOOL_MAX_STANDARD_P2WSH_STACK_ITEMS)
		return false;
	proto_witness_iter_init(&it, tx, in);
	while (proto_witness_iter_next(&it, &item)) {
		uint32_t limit = k == last ? MEMPOOL_MAX_STANDARD_P2WSH_SCRIPT_SIZE
		                           : MEMPOOL_MAX_STANDARD_P2WSH_STACK_ITEM_SIZE;
		if (item.len > limit)
			return false;
		k++;
	}
	return true;
}

/* Core's taproot limits: no annex, small tapscript stack items. */
static bool taproot_witness_ok(const struct proto_tx *tx, const struct proto_txin *in)
{
	struct proto_witness_iter it;
	struct proto_span item, control = {0};
	uint32_t n = in->wit_count, k = 0;
	if (n < 2)
		return n == 1; /* a key path spend; none at all is a consensus failure */
	/* The control block (or an annex) is the last item. */
	proto_witness_iter_init(&it, tx, in);
	while (proto_witness_iter_next(&it, &item)) {
		if (k == n - 1)
			control = item;
		k++;
	}
	/* Annexes are non-standard while they mean nothing. */
	if (control.len > 0 && control.data[0] == SCRIPT_ANNEX_TAG)
		return false;
	if (control.len == 0)
		return false;
	if ((control.data[0] & SCRIPT_TAPROOT_LEAF_MASK) != SCRIPT_TAPROOT_LEAF_TAPSCRIPT)
		return true; /* an unknown leaf version has no item limit */
	/* Every item below the script and the control block. */
	proto_witness_iter_init(&it, tx, in);
	for (k = 0; k + 2 < n && proto_witness_iter_next(&it, &item); k++) {
		if (item.len > MEMPOOL_MAX_STANDARD_TAPSCRIPT_STACK_ITEM_SIZE)
			return false;
	}
	return true;
}

int mempool_policy_check_witness(const struct proto_tx *tx, const struct chain_coin *prev,
                                 struct chain_state *st)
{
	if (proto_tx_is_coinbase(tx))
		return 0;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct proto_txin *in = &tx->vin[j];
		/* An empty witness cannot be bloated; if it is missing where one
		 * is needed, the scripts fail later. */
		if (in->wit_count == 0)
			continue;
		const uint8_t *spk = prev[j].script;
		uint32_t spk_len = prev[j].script_len;
		bool p2sh = false;
		uint8_t small;
		/* witness stuffing: a pay-to-anchor output is spent without one */
		if (is_anchor(spk, spk_len))
			goto bad;
		if (script_is_p2sh(spk, spk_len)) {
			/* The redeem script, taken casually: the hash and push-only
			 * rules are the scripts' to check later. */
			if (!redeem_script(proto_txin_script(tx, in), in->script_len, &small, &spk,
			                   &spk_len))
				goto bad;
			p2sh = true;
		}
		int version;
		const uint8_t *program;
		size_t program_len;
		/* A witness belongs to a witness program only. */
		if (!script_is_witness_program(spk, spk_len, &version, &program, &program_len))
			goto bad;
		if (version == 0 && program_len == 32 && !p2wsh_witness_ok(tx, in))
			goto bad;
		if (version == 1 && program_len == 32 && !p2sh && !taproot_witness_ok(tx, in))
			goto bad;
	}
	return 0;
bad:
	return chain_reject(st, CHAIN_RESULT_TX_WITNESS_MUTATED, "bad-witness-nonstandard", NULL);
}

int mempool_policy_check_sigops(uint32_t sigop_cost, struct chain_state *st)
{
	if (sigop_cost > MEMPOOL_MAX_STANDARD_TX_SIGOPS_COST)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "bad-txns-too-many-sigops",
		                    "%u", sigop_cost);
	return 0;
}

/* ---- fees -------------------------------------------------------------- */

int mempool_policy_check_ephemeral(const struct proto_tx *tx, int64_t base_fee,
                                   int64_t modified_fee, const struct mempool_policy *pol,
                                   struct chain_state *st)
{
	/* Never an incentive to mine the parent without the child that
	 * sweeps its dust. */
	if ((base_fee != 0 || modified_fee != 0) &&
	    mempool_policy_dust_outputs(tx, pol->dust_relay_feerate, NULL, 0) > 0)
		return chain_reject(st, CHAIN_RESULT_TX_NOT_STANDARD, "dust",
		                    "tx with dust output must be 0-fee");
	return 0;
}

int mempool_policy_check_min_relay_fee(int64_t fee, int64_t vsize, const struct mempool_policy *pol,
                                       struct chain_state *st)
{
	int64_t want = mempool_feerate_fee(pol->min_relay_feerate, vsize);
	if (fee < want)
		return chain_reject(st, CHAIN_RESULT_TX_RECONSIDERABLE, "min relay fee not met",
		                    "%lld < %lld", (long long)fee, (long long)want);
	return 0;
}
