/*
 * script/errors.c: names and descriptions of script errors, and the
 * verification flags by name (Core's spelling, as the test vectors and
 * peertool's --flags use them).
 */
#include "script/script.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	const char *text;
} errs[SCRIPT_ERR__COUNT] = {
    [SCRIPT_ERR_OK] = {"OK", "no error"},
    [SCRIPT_ERR_UNKNOWN_ERROR] = {"UNKNOWN_ERROR", "unknown error (including a malformed number)"},
    [SCRIPT_ERR_EVAL_FALSE] = {"EVAL_FALSE", "script evaluated to false or an empty stack"},
    [SCRIPT_ERR_OP_RETURN] = {"OP_RETURN", "OP_RETURN was executed"},
    [SCRIPT_ERR_SCRIPT_SIZE] = {"SCRIPT_SIZE", "script longer than 10,000 bytes"},
    [SCRIPT_ERR_PUSH_SIZE] = {"PUSH_SIZE", "stack element longer than 520 bytes"},
    [SCRIPT_ERR_OP_COUNT] = {"OP_COUNT", "more than 201 non-push operations"},
    [SCRIPT_ERR_STACK_SIZE] = {"STACK_SIZE", "stack and altstack over 1,000 items"},
    [SCRIPT_ERR_SIG_COUNT] = {"SIG_COUNT", "signature count negative or above the key count"},
    [SCRIPT_ERR_PUBKEY_COUNT] = {"PUBKEY_COUNT", "key count negative or above 20"},
    [SCRIPT_ERR_VERIFY] = {"VERIFY", "OP_VERIFY failed"},
    [SCRIPT_ERR_EQUALVERIFY] = {"EQUALVERIFY", "OP_EQUALVERIFY failed"},
    [SCRIPT_ERR_CHECKMULTISIGVERIFY] = {"CHECKMULTISIGVERIFY", "OP_CHECKMULTISIGVERIFY failed"},
    [SCRIPT_ERR_CHECKSIGVERIFY] = {"CHECKSIGVERIFY", "OP_CHECKSIGVERIFY failed"},
    [SCRIPT_ERR_NUMEQUALVERIFY] = {"NUMEQUALVERIFY", "OP_NUMEQUALVERIFY failed"},
    [SCRIPT_ERR_BAD_OPCODE] = {"BAD_OPCODE", "undefined or malformed opcode"},
    [SCRIPT_ERR_DISABLED_OPCODE] = {"DISABLED_OPCODE", "disabled opcode"},
    [SCRIPT_ERR_INVALID_STACK_OPERATION] = {"INVALID_STACK_OPERATION",
                                            "operation on too few stack items"},
    [SCRIPT_ERR_INVALID_ALTSTACK_OPERATION] = {"INVALID_ALTSTACK_OPERATION",
                                               "operation on an empty altstack"},
    [SCRIPT_ERR_UNBALANCED_CONDITIONAL] = {"UNBALANCED_CONDITIONAL",
                                           "IF/ELSE/ENDIF do not balance"},
    [SCRIPT_ERR_NEGATIVE_LOCKTIME] = {"NEGATIVE_LOCKTIME", "negative lock time"},
    [SCRIPT_ERR_UNSATISFIED_LOCKTIME] = {"UNSATISFIED_LOCKTIME", "lock time not satisfied"},
    [SCRIPT_ERR_SIG_HASHTYPE] = {"SIG_HASHTYPE", "undefined signature hash type"},
    [SCRIPT_ERR_SIG_DER] = {"SIG_DER", "signature is not strict DER"},
    [SCRIPT_ERR_MINIMALDATA] = {"MINIMALDATA", "data not pushed in the smallest way"},
    [SCRIPT_ERR_SIG_PUSHONLY] = {"SIG_PUSHONLY", "scriptSig does more than push"},
    [SCRIPT_ERR_SIG_HIGH_S] = {"SIG_HIGH_S", "signature S above half the curve order"},
    [SCRIPT_ERR_SIG_NULLDUMMY] = {"SIG_NULLDUMMY", "CHECKMULTISIG dummy is not empty"},
    [SCRIPT_ERR_PUBKEYTYPE] = {"PUBKEYTYPE", "public key encoding not accepted"},
    [SCRIPT_ERR_CLEANSTACK] = {"CLEANSTACK", "stack not exactly one item after evaluation"},
    [SCRIPT_ERR_MINIMALIF] = {"MINIMALIF", "IF argument not empty or exactly 1"},
    [SCRIPT_ERR_SIG_NULLFAIL] = {"NULLFAIL", "failed signature check with a non-empty signature"},
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS] = {"DISCOURAGE_UPGRADABLE_NOPS",
                                               "reserved NOP used (policy)"},
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM] =
        {"DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM", "unknown witness program version (policy)"},
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION] = {"DISCOURAGE_UPGRADABLE_TAPROOT_VERSION",
                                                          "unknown taproot leaf version (policy)"},
    [SCRIPT_ERR_DISCOURAGE_OP_SUCCESS] = {"DISCOURAGE_OP_SUCCESS", "OP_SUCCESSx used (policy)"},
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE] = {"DISCOURAGE_UPGRADABLE_PUBKEYTYPE",
                                                     "unknown tapscript public key type (policy)"},
    [SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH] = {"WITNESS_PROGRAM_WRONG_LENGTH",
                                                 "witness v0 program of wrong length"},
    [SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY] = {"WITNESS_PROGRAM_WITNESS_EMPTY",
                                                  "witness program spent with an empty witness"},
    [SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH] = {"WITNESS_PROGRAM_MISMATCH",
                                             "witness does not match the program"},
    [SCRIPT_ERR_WITNESS_MALLEATED] = {"WITNESS_MALLEATED",
                                      "native witness spend with a non-empty scriptSig"},
    [SCRIPT_ERR_WITNESS_MALLEATED_P2SH] = {"WITNESS_MALLEATED_P2SH",
                                           "P2SH witness scriptSig is not one push"},
    [SCRIPT_ERR_WITNESS_UNEXPECTED] = {"WITNESS_UNEXPECTED", "witness on a non-witness spend"},
    [SCRIPT_ERR_WITNESS_PUBKEYTYPE] = {"WITNESS_PUBKEYTYPE",
                                       "uncompressed public key in witness v0"},
    [SCRIPT_ERR_SCHNORR_SIG_SIZE] = {"SCHNORR_SIG_SIZE", "Schnorr signature of wrong size"},
    [SCRIPT_ERR_SCHNORR_SIG_HASHTYPE] = {"SCHNORR_SIG_HASHTYPE",
                                         "Schnorr signature with an invalid hash type"},
    [SCRIPT_ERR_SCHNORR_SIG] = {"SCHNORR_SIG", "invalid Schnorr signature"},
    [SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE] = {"TAPROOT_WRONG_CONTROL_SIZE",
                                               "taproot control block of wrong size"},
    [SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT] = {"TAPSCRIPT_VALIDATION_WEIGHT",
                                                "too many signature checks for the witness size"},
    [SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG] = {"TAPSCRIPT_CHECKMULTISIG",
                                            "CHECKMULTISIG in tapscript"},
    [SCRIPT_ERR_TAPSCRIPT_MINIMALIF] = {"TAPSCRIPT_MINIMALIF",
                                        "tapscript IF argument not empty or exactly 1"},
    [SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY] = {"TAPSCRIPT_EMPTY_PUBKEY",
                                           "empty public key in tapscript"},
    [SCRIPT_ERR_OP_CODESEPARATOR] = {"OP_CODESEPARATOR", "OP_CODESEPARATOR in legacy script"},
    [SCRIPT_ERR_SIG_FINDANDDELETE] = {"SIG_FINDANDDELETE", "signature found in scriptCode"},
    [SCRIPT_ERR_NOMEM] = {"NOMEM", "out of memory"},
    [SCRIPT_ERR_MISSING_DATA] = {"MISSING_DATA", "spent outputs needed but not supplied"},
    [SCRIPT_ERR_BAD_ARGUMENT] = {"BAD_ARGUMENT",
                                 "input index out of range or malformed witness data"},
};

const char *script_error_name(int err)
{
	if (err < 0)
		err = -err;
	if (err >= SCRIPT_ERR__COUNT)
		return "UNKNOWN";
	return errs[err].name;
}

const char *script_error_string(int err)
{
	if (err < 0)
		err = -err;
	if (err >= SCRIPT_ERR__COUNT)
		return "unknown error code";
	return errs[err].text;
}

/*
 * Bitcoin Core's ScriptErrorString for each code: reject reasons quote it
 * ("mandatory-script-verify-flag-failed (...)"), and a node that answers
 * like Core must say it word for word. The descriptions above are ours.
 */
static const char *const core_text[SCRIPT_ERR__COUNT] = {
    [SCRIPT_ERR_OK] = "No error",
    [SCRIPT_ERR_EVAL_FALSE] =
        "Script evaluated without error but finished with a false/empty top stack element",
    [SCRIPT_ERR_VERIFY] = "Script failed an OP_VERIFY operation",
    [SCRIPT_ERR_EQUALVERIFY] = "Script failed an OP_EQUALVERIFY operation",
    [SCRIPT_ERR_CHECKMULTISIGVERIFY] = "Script failed an OP_CHECKMULTISIGVERIFY operation",
    [SCRIPT_ERR_CHECKSIGVERIFY] = "Script failed an OP_CHECKSIGVERIFY operation",
    [SCRIPT_ERR_NUMEQUALVERIFY] = "Script failed an OP_NUMEQUALVERIFY operation",
    [SCRIPT_ERR_SCRIPT_SIZE] = "Script is too big",
    [SCRIPT_ERR_PUSH_SIZE] = "Push value size limit exceeded",
    [SCRIPT_ERR_OP_COUNT] = "Operation limit exceeded",
    [SCRIPT_ERR_STACK_SIZE] = "Stack size limit exceeded",
    [SCRIPT_ERR_SIG_COUNT] = "Signature count negative or greater than pubkey count",
    [SCRIPT_ERR_PUBKEY_COUNT] = "Pubkey count negative or limit exceeded",
    [SCRIPT_ERR_BAD_OPCODE] = "Opcode missing or not understood",
    [SCRIPT_ERR_DISABLED_OPCODE] = "Attempted to use a disabled opcode",
    [SCRIPT_ERR_INVALID_STACK_OPERATION] = "Operation not valid with the current stack size",
    [SCRIPT_ERR_INVALID_ALTSTACK_OPERATION] = "Operation not valid with the current altstack size",
    [SCRIPT_ERR_OP_RETURN] = "OP_RETURN was encountered",
    [SCRIPT_ERR_UNBALANCED_CONDITIONAL] = "Invalid OP_IF construction",
    [SCRIPT_ERR_NEGATIVE_LOCKTIME] = "Negative locktime",
    [SCRIPT_ERR_UNSATISFIED_LOCKTIME] = "Locktime requirement not satisfied",
    [SCRIPT_ERR_SIG_HASHTYPE] = "Signature hash type missing or not understood",
    [SCRIPT_ERR_SIG_DER] = "Non-canonical DER signature",
    [SCRIPT_ERR_MINIMALDATA] = "Data push larger than necessary",
    [SCRIPT_ERR_SIG_PUSHONLY] = "Only push operators allowed in signatures",
    [SCRIPT_ERR_SIG_HIGH_S] = "Non-canonical signature: S value is unnecessarily high",
    [SCRIPT_ERR_SIG_NULLDUMMY] = "Dummy CHECKMULTISIG argument must be zero",
    [SCRIPT_ERR_MINIMALIF] = "OP_IF/NOTIF argument must be minimal",
    [SCRIPT_ERR_SIG_NULLFAIL] = "Signature must be zero for failed CHECK(MULTI)SIG operation",
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS] = "NOPx reserved for soft-fork upgrades",
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM] =
        "Witness version reserved for soft-fork upgrades",
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION] =
        "Taproot version reserved for soft-fork upgrades",
    [SCRIPT_ERR_DISCOURAGE_OP_SUCCESS] = "OP_SUCCESSx reserved for soft-fork upgrades",
    [SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE] =
        "Public key version reserved for soft-fork upgrades",
    [SCRIPT_ERR_PUBKEYTYPE] = "Public key is neither compressed or uncompressed",
    [SCRIPT_ERR_CLEANSTACK] = "Stack size must be exactly one after execution",
    [SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH] = "Witness program has incorrect length",
    [SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY] = "Witness program was passed an empty witness",
    [SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH] = "Witness program hash mismatch",
    [SCRIPT_ERR_WITNESS_MALLEATED] = "Witness requires empty scriptSig",
    [SCRIPT_ERR_WITNESS_MALLEATED_P2SH] = "Witness requires only-redeemscript scriptSig",
    [SCRIPT_ERR_WITNESS_UNEXPECTED] = "Witness provided for non-witness script",
    [SCRIPT_ERR_WITNESS_PUBKEYTYPE] = "Using non-compressed keys in segwit",
    [SCRIPT_ERR_SCHNORR_SIG_SIZE] = "Invalid Schnorr signature size",
    [SCRIPT_ERR_SCHNORR_SIG_HASHTYPE] = "Invalid Schnorr signature hash type",
    [SCRIPT_ERR_SCHNORR_SIG] = "Invalid Schnorr signature",
    [SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE] = "Invalid Taproot control block size",
    [SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT] =
        "Too much signature validation relative to witness weight",
    [SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG] = "OP_CHECKMULTISIG(VERIFY) is not available in tapscript",
    [SCRIPT_ERR_TAPSCRIPT_MINIMALIF] = "OP_IF/NOTIF argument must be minimal in tapscript",
    [SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY] = "Empty public key in tapscript",
    [SCRIPT_ERR_OP_CODESEPARATOR] = "Using OP_CODESEPARATOR in non-witness script",
    [SCRIPT_ERR_SIG_FINDANDDELETE] = "Signature is found in scriptCode",
};

const char *script_error_core_string(int err)
{
	if (err < 0)
		err = -err;
	/* Core's "unknown error" covers its UNKNOWN_ERROR and every code it lacks. */
	if (err >= SCRIPT_ERR__COUNT || !core_text[err])
		return "unknown error";
	return core_text[err];
}

int script_error_from_name(const char *name)
{
	for (int i = 0; i < SCRIPT_ERR__COUNT; i++) {
		if (strcmp(errs[i].name, name) == 0)
			return i;
	}
	/* Core's enum spelling of NULLFAIL, for symmetry */
	if (strcmp(name, "SIG_NULLFAIL") == 0)
		return SCRIPT_ERR_SIG_NULLFAIL;
	return -1;
}

static const struct {
	const char *name;
	uint32_t flag;
} flag_names[] = {
    {"P2SH", SCRIPT_VERIFY_P2SH},
    {"STRICTENC", SCRIPT_VERIFY_STRICTENC},
    {"DERSIG", SCRIPT_VERIFY_DERSIG},
    {"LOW_S", SCRIPT_VERIFY_LOW_S},
    {"NULLDUMMY", SCRIPT_VERIFY_NULLDUMMY},
    {"SIGPUSHONLY", SCRIPT_VERIFY_SIGPUSHONLY},
    {"MINIMALDATA", SCRIPT_VERIFY_MINIMALDATA},
    {"DISCOURAGE_UPGRADABLE_NOPS", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS},
    {"CLEANSTACK", SCRIPT_VERIFY_CLEANSTACK},
    {"CHECKLOCKTIMEVERIFY", SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY},
    {"CHECKSEQUENCEVERIFY", SCRIPT_VERIFY_CHECKSEQUENCEVERIFY},
    {"WITNESS", SCRIPT_VERIFY_WITNESS},
    {"DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM},
    {"MINIMALIF", SCRIPT_VERIFY_MINIMALIF},
    {"NULLFAIL", SCRIPT_VERIFY_NULLFAIL},
    {"WITNESS_PUBKEYTYPE", SCRIPT_VERIFY_WITNESS_PUBKEYTYPE},
    {"CONST_SCRIPTCODE", SCRIPT_VERIFY_CONST_SCRIPTCODE},
    {"TAPROOT", SCRIPT_VERIFY_TAPROOT},
    {"DISCOURAGE_UPGRADABLE_TAPROOT_VERSION", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION},
    {"DISCOURAGE_OP_SUCCESS", SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS},
    {"DISCOURAGE_UPGRADABLE_PUBKEYTYPE", SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE},
};

#define N_FLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

const char *script_flag_name(uint32_t flag)
{
	for (size_t i = 0; i < N_FLAGS; i++) {
		if (flag_names[i].flag == flag)
			return flag_names[i].name;
	}
	return NULL;
}

/* Match the name of length len at s against one table entry or set. */
static int lookup(const char *s, size_t len, uint32_t *flag)
{
	struct {
		const char *name;
		uint32_t flags;
	} sets[] = {
	    {"NONE", SCRIPT_VERIFY_NONE},
	    {"standard", SCRIPT_VERIFY_STANDARD},
	    {"consensus", SCRIPT_VERIFY_CONSENSUS},
	};
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (strlen(sets[i].name) == len && memcmp(sets[i].name, s, len) == 0) {
			*flag = sets[i].flags;
			return 0;
		}
	}
	for (size_t i = 0; i < N_FLAGS; i++) {
		if (strlen(flag_names[i].name) == len && memcmp(flag_names[i].name, s, len) == 0) {
			*flag = flag_names[i].flag;
			return 0;
		}
	}
	return -1;
}

int script_flags_parse(const char *list, uint32_t *flags, const char **bad)
{
	uint32_t f = 0;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		uint32_t one;
		if (len > 0) {
			if (lookup(p, len, &one)) {
				if (bad)
					*bad = p;
				return -1;
			}
			f |= one;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	*flags = f;
	return 0;
}

void script_flags_format(uint32_t flags, char *out, size_t cap)
{
	size_t o = 0;
	if (cap == 0)
		return;
	out[0] = 0;
	for (size_t i = 0; i < N_FLAGS; i++) {
		if (!(flags & flag_names[i].flag))
			continue;
		int n = snprintf(out + o, cap - o, "%s%s", o ? "," : "", flag_names[i].name);
		if (n < 0 || (size_t)n >= cap - o)
			return;
		o += (size_t)n;
	}
}
