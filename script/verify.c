/*
 * script/verify.c: verifying one input, Core's VerifyScript: scriptSig then
 * scriptPubKey on one stack, P2SH, witness programs (v0 P2WPKH and P2WSH,
 * v1 taproot key path and script path, P2SH-wrapped), CLEANSTACK and
 * unexpected witnesses.
 */
#include "script/internal.h"

#include <string.h>

/** P2WPKH's implied script: DUP HASH160 <20> EQUALVERIFY CHECKSIG. */
#define P2WPKH_SCRIPT_LEN          25u
#define WITNESS_V0_KEYHASH_SIZE    20u
#define WITNESS_V0_SCRIPTHASH_SIZE 32u
#define WITNESS_V1_TAPROOT_SIZE    32u

/* A parsed witness: item spans into the transaction's blob. */
struct witness {
	const uint8_t *p; /* serialized items (after the count) */
	uint32_t len;
	uint32_t count;
};

static void exec_init(struct script_exec *ex, const struct proto_tx *tx, uint32_t in,
                      int64_t amount, uint32_t flags, const struct script_precomputed *pre,
                      const uint8_t *spk, size_t spk_len)
{
	ex->items = ex->scratch;
	ex->cap = SCRIPT_STACK_SLOTS;
	ex->n = ex->alt_n = ex->base = 0;
	ex->flags = flags;
	ex->tx = tx;
	ex->in = in;
	ex->amount = amount;
	ex->pre = pre;
	ex->spk = spk;
	ex->spk_len = (uint32_t)spk_len;
	memset(&ex->tap, 0, sizeof(ex->tap));
	ex->tap.codesep_pos = UINT32_MAX;
	ex->validation_weight_left = 0;
}

/* Item i of the witness (0-based), validating the encoding as it goes. */
static int witness_item(const struct witness *w, uint32_t i, const uint8_t **data, uint32_t *len)
{
	struct proto_reader r;
	proto_reader_init(&r, w->p, w->len);
	for (uint32_t k = 0; k <= i; k++) {
		if (proto_read_varspan(&r, data, len))
			return -SCRIPT_ERR_BAD_ARGUMENT;
	}
	return 0;
}

/*
 * Put the first `count` witness items on the stack. Up to
 * SCRIPT_STACK_VISIBLE of them are materialized; of a bigger stack only the
 * top SCRIPT_STACK_VISIBLE are, the rest counted in ex->base (see
 * internal.h for why that is exact).
 */
static int load_witness(struct script_exec *ex, const struct witness *w, uint32_t count)
{
	struct proto_reader r;
	uint32_t skip = count > SCRIPT_STACK_VISIBLE ? count - SCRIPT_STACK_VISIBLE : 0;
	proto_reader_init(&r, w->p, w->len);
	ex->n = ex->alt_n = 0;
	ex->base = skip;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;
		const uint8_t *d;
		if (proto_read_varspan(&r, &d, &len))
			return -SCRIPT_ERR_BAD_ARGUMENT;
		if (i < skip)
			continue;
		struct script_item *it = &ex->items[ex->n++];
		it->ext = d;
		it->len = len;
	}
	return 0;
}

/* Whether any of the first `count` witness items is over the element limit. */
static int witness_push_size(const struct witness *w, uint32_t count)
{
	struct proto_reader r;
	proto_reader_init(&r, w->p, w->len);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *d;
		uint32_t len;
		if (proto_read_varspan(&r, &d, &len))
			return -SCRIPT_ERR_BAD_ARGUMENT;
		if (len > SCRIPT_MAX_ELEMENT_SIZE)
			return -SCRIPT_ERR_PUSH_SIZE;
	}
	return 0;
}

/* Core's ExecuteWitnessScript: run script on the first `count` witness items. */
static int execute_witness_script(struct script_exec *ex, const struct witness *w, uint32_t count,
                                  const uint8_t *script, size_t len, enum script_sigversion sv)
{
	int rc;
	if (sv == SCRIPT_SIGVERSION_TAPSCRIPT) {
		/* OP_SUCCESSx anywhere makes the script succeed, before any
		 * other rule, even a stack limit; a malformed push before it
		 * is still an error. */
		const uint8_t *pc = script, *end = span_end(script, len);
		while (pc < end) {
			uint8_t op;
			if (!script_get_op(&pc, end, &op, NULL, NULL))
				return -SCRIPT_ERR_BAD_OPCODE;
			if (script_op_is_success(op)) {
				if (ex->flags & SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS)
					return -SCRIPT_ERR_DISCOURAGE_OP_SUCCESS;
				return 0;
			}
		}
		if (count > SCRIPT_MAX_STACK)
			return -SCRIPT_ERR_STACK_SIZE;
	}
	if ((rc = witness_push_size(w, count)))
		return rc;
	if ((rc = load_witness(ex, w, count)))
		return rc;
	if ((rc = script_eval(ex, script, len, sv)))
		return rc;
	/* witness scripts must leave exactly one true item */
	if (ex->n + ex->base != 1)
		return -SCRIPT_ERR_CLEANSTACK;
	if (!script_cast_to_bool(item_data(&ex->items[0]), ex->items[0].len))
		return -SCRIPT_ERR_EVAL_FALSE;
	return 0;
}

/* Serialized size of the witness stack (count + items): the tapscript
 * validation weight budget. */
static int64_t witness_size(const struct witness *w)
{
	return (int64_t)proto_compact_size(w->count) + w->len;
}

static int verify_taproot(struct script_exec *ex, const struct witness *w, const uint8_t *program)
{
	uint32_t count = w->count;
	const uint8_t *last, *control, *script;
	uint32_t last_len, control_len, script_len;
	int rc;

	if (count == 0)
		return -SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY;
	if ((rc = witness_item(w, count - 1, &last, &last_len)))
		return rc;
	if (count >= 2 && last_len > 0 && last[0] == SCRIPT_ANNEX_TAG) {
		/* the annex: committed to by signatures, otherwise unused */
		struct proto_sha256 h;
		uint8_t pre[9];
		struct proto_writer pw;
		proto_writer_init_fixed(&pw, pre, sizeof(pre));
		proto_write_compact(&pw, last_len);
		proto_sha256_init(&h);
		proto_sha256_update(&h, pre, pw.len);
		proto_sha256_update(&h, last, last_len);
		proto_sha256_final(&h, ex->tap.annex_hash);
		ex->tap.annex_present = true;
		count--;
	}

	if (count == 1) {
		/* key path */
		const uint8_t *sig;
		uint32_t sig_len;
		if ((rc = witness_item(w, 0, &sig, &sig_len)))
			return rc;
		return script_check_schnorr(ex, sig, sig_len, program, SCRIPT_SIGVERSION_TAPROOT);
	}

	/* script path: ... script control [annex] */
	if ((rc = witness_item(w, count - 1, &control, &control_len)) ||
	    (rc = witness_item(w, count - 2, &script, &script_len)))
		return rc;
	if (control_len < SCRIPT_TAPROOT_CONTROL_BASE_SIZE ||
	    control_len > SCRIPT_TAPROOT_CONTROL_MAX_SIZE ||
	    (control_len - SCRIPT_TAPROOT_CONTROL_BASE_SIZE) % SCRIPT_TAPROOT_CONTROL_NODE_SIZE !=
	        0)
		return -SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE;
	const uint8_t leaf_version = control[0] & SCRIPT_TAPROOT_LEAF_MASK;
	script_tapleaf_hash(leaf_version, script, script_len, ex->tap.tapleaf_hash);

	uint8_t k[32];
	memcpy(k, ex->tap.tapleaf_hash, 32);
	for (uint32_t off = SCRIPT_TAPROOT_CONTROL_BASE_SIZE; off < control_len;
	     off += SCRIPT_TAPROOT_CONTROL_NODE_SIZE)
		script_tapbranch_hash(k, control + off, k);
	if (!script_check_tap_tweak(program, control + 1, k, control[0] & 1))
		return -SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH;

	if (leaf_version == SCRIPT_TAPROOT_LEAF_TAPSCRIPT) {
		ex->validation_weight_left = witness_size(w) + SCRIPT_VALIDATION_WEIGHT_OFFSET;
		return execute_witness_script(ex, w, count - 2, script, script_len,
		                              SCRIPT_SIGVERSION_TAPSCRIPT);
	}
	/* unknown leaf versions are anyone-can-spend, for future soft forks */
	if (ex->flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION)
		return -SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION;
	return 0;
}

/* Core's VerifyWitnessProgram. */
static int verify_witness_program(struct script_exec *ex, const struct witness *w, int version,
                                  const uint8_t *program, size_t prog_len, bool is_p2sh)
{
	int rc;
	if (version == 0) {
		if (prog_len == WITNESS_V0_SCRIPTHASH_SIZE) {
			const uint8_t *script;
			uint32_t script_len;
			uint8_t h[32];
			if (w->count == 0)
				return -SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY;
			if ((rc = witness_item(w, w->count - 1, &script, &script_len)))
				return rc;
			proto_sha256(script, script_len, h);
			if (memcmp(h, program, 32) != 0)
				return -SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH;
			return execute_witness_script(ex, w, w->count - 1, script, script_len,
			                              SCRIPT_SIGVERSION_WITNESS_V0);
		}
		if (prog_len == WITNESS_V0_KEYHASH_SIZE) {
			uint8_t script[P2WPKH_SCRIPT_LEN];
			if (w->count != 2)
				return -SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH;
			script[0] = SCRIPT_OP_DUP;
			script[1] = SCRIPT_OP_HASH160;
			script[2] = WITNESS_V0_KEYHASH_SIZE;
			memcpy(script + 3, program, WITNESS_V0_KEYHASH_SIZE);
			script[23] = SCRIPT_OP_EQUALVERIFY;
			script[24] = SCRIPT_OP_CHECKSIG;
			/* items may point into `script`, which lives until we return */
			return execute_witness_script(ex, w, 2, script, sizeof(script),
			                              SCRIPT_SIGVERSION_WITNESS_V0);
		}
		return -SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH;
	}
	if (version == 1 && prog_len == WITNESS_V1_TAPROOT_SIZE && !is_p2sh) {
		if (!(ex->flags & SCRIPT_VERIFY_TAPROOT))
			return 0;
		return verify_taproot(ex, w, program);
	}
	/* Pay-to-anchor (OP_1 <4e73>, not P2SH-wrapped) is spendable by anyone
	 * and not an upgrade hook: Core 28+ exempts it from the discouragement. */
	if (version == 1 && prog_len == 2 && program[0] == 0x4e && program[1] == 0x73 && !is_p2sh)
		return 0;
	/* other versions and sizes stay anyone-can-spend for future soft forks */
	if (ex->flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)
		return -SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM;
	return 0;
}

static bool top_true(const struct script_exec *ex)
{
	const struct script_item *t = &ex->items[ex->n - 1];
	return script_cast_to_bool(item_data(t), t->len);
}

/* Whether script_sig is exactly one minimal-form push of `data` (Core
 * compares against `CScript() << redeemScript`). */
static bool is_single_push_of(const uint8_t *sig, size_t sig_len, const uint8_t *data, uint32_t len)
{
	size_t pre;
	if (len < SCRIPT_OP_PUSHDATA1)
		pre = 1;
	else if (len <= 0xff)
		pre = 2;
	else if (len <= 0xffff)
		pre = 3;
	else
		pre = 5;
	if (sig_len != pre + len)
		return false;
	const uint8_t *pc = sig;
	uint8_t op;
	const uint8_t *d;
	uint32_t dlen;
	if (!script_get_op(&pc, sig + sig_len, &op, &d, &dlen))
		return false;
	uint8_t want = len < SCRIPT_OP_PUSHDATA1 ? (uint8_t)len
	               : len <= 0xff             ? SCRIPT_OP_PUSHDATA1
	               : len <= 0xffff           ? SCRIPT_OP_PUSHDATA2
	                                         : SCRIPT_OP_PUSHDATA4;
	return op == want && dlen == len && pc == sig + sig_len && memcmp(d, data, len) == 0;
}

static int verify_script(struct script_exec *ex, const uint8_t *sig, size_t sig_len,
                         const uint8_t *spk, size_t spk_len, const struct witness *w)
{
	const uint32_t flags = ex->flags;
	bool had_witness = false;
	int version, rc;
	const uint8_t *prog;
	size_t prog_len;

	if ((flags & SCRIPT_VERIFY_SIGPUSHONLY) && !script_is_push_only(sig, sig_len))
		return -SCRIPT_ERR_SIG_PUSHONLY;

	/* scriptSig and scriptPubKey run one after the other on one stack,
	 * never concatenated (CVE-2010-5141) */
	if ((rc = script_eval(ex, sig, sig_len, SCRIPT_SIGVERSION_BASE)))
		return rc;
	if ((rc = script_eval(ex, spk, spk_len, SCRIPT_SIGVERSION_BASE)))
		return rc;
	if (ex->n == 0 || !top_true(ex))
		return -SCRIPT_ERR_EVAL_FALSE;

	if ((flags & SCRIPT_VERIFY_WITNESS) &&
	    script_is_witness_program(spk, spk_len, &version, &prog, &prog_len)) {
		had_witness = true;
		if (sig_len != 0)
			return -SCRIPT_ERR_WITNESS_MALLEATED;
		if ((rc = verify_witness_program(ex, w, version, prog, prog_len, false)))
			return rc;
		/* the witness stack is not clean by design; CLEANSTACK below
		 * must see one item */
		ex->n = 1;
	}

	if ((flags & SCRIPT_VERIFY_P2SH) && script_is_p2sh(spk, spk_len)) {
		if (!script_is_push_only(sig, sig_len))
			return -SCRIPT_ERR_SIG_PUSHONLY;
		/* Core restores a copy of the stack as the scriptSig left it.
		 * A push-only scriptSig is cheap to run again and gives the
		 * same stack, so we do that instead of keeping a second one. */
		ex->n = ex->alt_n = 0;
		if ((rc = script_eval(ex, sig, sig_len, SCRIPT_SIGVERSION_BASE)))
			return rc;
		/* cannot be empty: HASH160 on an empty stack failed above */
		if (ex->n == 0)
			return -SCRIPT_ERR_UNKNOWN_ERROR;
		/* A copy: the slot is reused. A data push points into sig; an
		 * OP_n keeps its byte inside the copy, which lives until we
		 * return. */
		const struct script_item redeem = ex->items[ex->n - 1];
		const uint8_t *rs = item_data(&redeem);
		ex->n--;
		if ((rc = script_eval(ex, rs, redeem.len, SCRIPT_SIGVERSION_BASE)))
			return rc;
		if (ex->n == 0 || !top_true(ex))
			return -SCRIPT_ERR_EVAL_FALSE;

		if ((flags & SCRIPT_VERIFY_WITNESS) &&
		    script_is_witness_program(rs, redeem.len, &version, &prog, &prog_len)) {
			had_witness = true;
			if (!is_single_push_of(sig, sig_len, rs, redeem.len))
				return -SCRIPT_ERR_WITNESS_MALLEATED_P2SH;
			if ((rc = verify_witness_program(ex, w, version, prog, prog_len, true)))
				return rc;
			ex->n = 1;
		}
	}

	/* Only after P2SH: the plain run of a P2SH spend leaves its inputs. */
	if ((flags & SCRIPT_VERIFY_CLEANSTACK) && ex->n != 1)
		return -SCRIPT_ERR_CLEANSTACK;

	if ((flags & SCRIPT_VERIFY_WITNESS) && !had_witness && w->count != 0)
		return -SCRIPT_ERR_WITNESS_UNEXPECTED;
	return 0;
}

int script_verify(const uint8_t *script_sig, size_t sig_len, const uint8_t *script_pubkey,
                  size_t spk_len, const struct proto_tx *tx, uint32_t input_index, int64_t amount,
                  uint32_t flags, const struct script_precomputed *pre, int *error)
{
	struct script_exec ex;
	struct witness w = {NULL, 0, 0};
	int rc;

	if (!tx || input_index >= tx->n_in) {
		rc = -SCRIPT_ERR_BAD_ARGUMENT;
		goto out_noexec;
	}
	const struct proto_txin *in = &tx->vin[input_index];
	if (in->wit_count) {
		w.p = tx->blob + in->wit_off;
		w.len = in->wit_len;
		w.count = in->wit_count;
	} else {
		/* never NULL, so readers need no special case */
		w.p = (const uint8_t *)"";
	}
	exec_init(&ex, tx, input_index, amount, flags, pre, script_pubkey, spk_len);
	rc = verify_script(&ex, script_sig, sig_len, script_pubkey, spk_len, &w);
out_noexec:
	if (error)
		*error = -rc;
	return rc;
}

int script_verify_input(const struct proto_tx *tx, uint32_t input_index,
                        const struct script_spent_output *spent, uint32_t flags,
                        const struct script_precomputed *pre, int *error)
{
	if (!tx || !spent || input_index >= tx->n_in) {
		if (error)
			*error = SCRIPT_ERR_BAD_ARGUMENT;
		return -SCRIPT_ERR_BAD_ARGUMENT;
	}
	const struct proto_txin *in = &tx->vin[input_index];
	return script_verify(proto_txin_script(tx, in), in->script_len, spent->script,
	                     spent->script_len, tx, input_index, spent->amount, flags, pre, error);
}
