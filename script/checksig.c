/*
 * script/checksig.c: the signature opcodes: CHECKSIG(VERIFY) and
 * CHECKSIGADD's check (Core's EvalChecksig, pre-tapscript and tapscript)
 * and CHECKMULTISIG(VERIFY) (its case of Core's EvalScript).
 *
 * script/interp.c decodes the opcode and owns the stack; this file does
 * what Core does between reading the operands and pushing the verdict:
 * FindAndDelete, the encoding rules, NULLFAIL and NULLDUMMY, in Core's
 * order (which check fires first is consensus). The signature checks
 * themselves are script/sig.c's.
 */
#include "script/internal.h"
#include "script/stack.h"

#include "base/alloc.h"

/*
 * Core's EvalChecksigPreTapscript: *ok is the signature's verdict; the
 * return value is 0 unless the script must fail outright.
 */
static int checksig_ecdsa(struct script_exec *ex, const struct script_item *sig_it,
                          const struct script_item *pub_it, const uint8_t *code, size_t code_len,
                          enum script_sigversion sv, bool *ok)
{
	const uint8_t *sig = item_data(sig_it), *pub = item_data(pub_it);
	uint8_t *owned = NULL;
	int rc = 0;
	if (sv == SCRIPT_SIGVERSION_BASE) {
		size_t new_len;
		int found =
		    script_find_and_delete(code, code_len, sig, sig_it->len, &owned, &new_len);
		if (found < 0)
			return -SCRIPT_ERR_NOMEM;
		if (found > 0) {
			if (ex->flags & SCRIPT_VERIFY_CONST_SCRIPTCODE) {
				rc = -SCRIPT_ERR_SIG_FINDANDDELETE;
				goto out;
			}
			code = owned;
			code_len = new_len;
		}
	}
	rc = script_check_sig_encoding(sig, sig_it->len, ex->flags);
	if (rc)
		goto out;
	rc = script_check_pubkey_encoding(pub, pub_it->len, ex->flags, sv);
	if (rc)
		goto out;
	*ok = script_check_ecdsa(ex, sig, sig_it->len, pub, pub_it->len, code, code_len, sv);
	if (!*ok && (ex->flags & SCRIPT_VERIFY_NULLFAIL) && sig_it->len)
		rc = -SCRIPT_ERR_SIG_NULLFAIL;
out:
	xfree(owned);
	return rc;
}

/* Core's EvalChecksigTapscript (BIP342). */
static int checksig_tapscript(struct script_exec *ex, const struct script_item *sig_it,
                              const struct script_item *pub_it, bool *ok)
{
	bool success = sig_it->len != 0;
	if (success) {
		/* Every non-empty signature spends validation weight, even one
		 * for an upgradable key type. */
		ex->validation_weight_left -= SCRIPT_VALIDATION_WEIGHT_PER_SIGOP;
		if (ex->validation_weight_left < 0)
			return -SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT;
	}
	if (pub_it->len == 0)
		return -SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY;
	if (pub_it->len == 32) {
		if (success) {
			int rc =
			    script_check_schnorr(ex, item_data(sig_it), sig_it->len,
			                         item_data(pub_it), SCRIPT_SIGVERSION_TAPSCRIPT);
			if (rc)
				return rc;
		}
	} else if (ex->flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE) {
		return -SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE;
	}
	*ok = success;
	return 0;
}

int script_checksig(struct script_exec *ex, const struct script_item *sig,
                    const struct script_item *pub, const uint8_t *code, size_t code_len,
                    enum script_sigversion sv, bool *ok)
{
	if (sv == SCRIPT_SIGVERSION_TAPSCRIPT)
		return checksig_tapscript(ex, sig, pub, ok);
	return checksig_ecdsa(ex, sig, pub, code, code_len, sv, ok);
}

/* OP_CHECKMULTISIG(VERIFY), Core's index arithmetic kept as is: i counts
 * items from the top (1 = top). */
int script_op_checkmultisig(struct script_exec *ex, const uint8_t *code, size_t code_len,
                            enum script_sigversion sv, int *op_count, bool minimal, bool *result)
{
	const uint32_t flags = ex->flags;
	uint8_t *owned = NULL;
	int64_t v;
	int rc = 0;
	int i = 1;
	if ((int)ex->n < i)
		return -SCRIPT_ERR_INVALID_STACK_OPERATION;
	if ((rc = num_decode(top(ex, -i), minimal, NUM_MAX_LEN, &v)))
		return rc;
	int keys = num_getint(v);
	if (keys < 0 || keys > SCRIPT_MAX_PUBKEYS_PER_MULTISIG)
		return -SCRIPT_ERR_PUBKEY_COUNT;
	*op_count += keys;
	if (*op_count > SCRIPT_MAX_OPS)
		return -SCRIPT_ERR_OP_COUNT;
	int ikey = ++i;
	/* position of the last non-signature item, for NULLFAIL cleanup */
	int ikey2 = keys + 2;
	i += keys;
	if ((int)ex->n < i)
		return -SCRIPT_ERR_INVALID_STACK_OPERATION;
	if ((rc = num_decode(top(ex, -i), minimal, NUM_MAX_LEN, &v)))
		return rc;
	int sigs = num_getint(v);
	if (sigs < 0 || sigs > keys)
		return -SCRIPT_ERR_SIG_COUNT;
	int isig = ++i;
	i += sigs;
	if ((int)ex->n < i)
		return -SCRIPT_ERR_INVALID_STACK_OPERATION;

	/* Legacy scripts drop every signature from the scriptCode first. */
	if (sv == SCRIPT_SIGVERSION_BASE) {
		for (int k = 0; k < sigs; k++) {
			const struct script_item *s = top(ex, -isig - k);
			uint8_t *next;
			size_t next_len;
			int found = script_find_and_delete(code, code_len, item_data(s), s->len,
			                                   &next, &next_len);
			if (found < 0) {
				rc = -SCRIPT_ERR_NOMEM;
				goto out;
			}
			if (found > 0) {
				if (flags & SCRIPT_VERIFY_CONST_SCRIPTCODE) {
					xfree(next);
					rc = -SCRIPT_ERR_SIG_FINDANDDELETE;
					goto out;
				}
				xfree(owned);
				owned = next;
				code = next;
				code_len = next_len;
			}
		}
	}

	bool success = true;
	while (success && sigs > 0) {
		const struct script_item *s = top(ex, -isig), *k = top(ex, -ikey);
		/* Encoding is checked pair by pair, so the order in which keys
		 * and signatures are tried is observable under STRICTENC. */
		if ((rc = script_check_sig_encoding(item_data(s), s->len, flags)))
			goto out;
		if ((rc = script_check_pubkey_encoding(item_data(k), k->len, flags, sv)))
			goto out;
		if (script_check_ecdsa(ex, item_data(s), s->len, item_data(k), k->len, code,
		                       code_len, sv)) {
			isig++;
			sigs--;
		}
		ikey++;
		keys--;
		/* more signatures left than keys: cannot succeed any more */
		if (sigs > keys)
			success = false;
	}

	while (i-- > 1) {
		if (!success && (flags & SCRIPT_VERIFY_NULLFAIL) && !ikey2 && top(ex, -1)->len) {
			rc = -SCRIPT_ERR_SIG_NULLFAIL;
			goto out;
		}
		if (ikey2 > 0)
			ikey2--;
		pop(ex);
	}
	/* The historical off-by-one: one more item is consumed, unchecked
	 * unless NULLDUMMY. */
	if (ex->n < 1) {
		rc = -SCRIPT_ERR_INVALID_STACK_OPERATION;
		goto out;
	}
	if ((flags & SCRIPT_VERIFY_NULLDUMMY) && top(ex, -1)->len) {
		rc = -SCRIPT_ERR_SIG_NULLDUMMY;
		goto out;
	}
	pop(ex);
	*result = success;
out:
	xfree(owned);
	return rc;
}
