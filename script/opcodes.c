/*
 * script/opcodes.c: reading scripts without running them: opcode names,
 * the op reader, templates (P2SH, witness programs), sigop counting, and
 * FindAndDelete.
 */
#include "script/internal.h"

#include <string.h>

#include "base/alloc.h"

static const char *const op_names[256] = {
    [SCRIPT_OP_0] = "0",
    [SCRIPT_OP_PUSHDATA1] = "OP_PUSHDATA1",
    [SCRIPT_OP_PUSHDATA2] = "OP_PUSHDATA2",
    [SCRIPT_OP_PUSHDATA4] = "OP_PUSHDATA4",
    [SCRIPT_OP_1NEGATE] = "-1",
    [SCRIPT_OP_RESERVED] = "OP_RESERVED",
    [0x51] = "1",
    [0x52] = "2",
    [0x53] = "3",
    [0x54] = "4",
    [0x55] = "5",
    [0x56] = "6",
    [0x57] = "7",
    [0x58] = "8",
    [0x59] = "9",
    [0x5a] = "10",
    [0x5b] = "11",
    [0x5c] = "12",
    [0x5d] = "13",
    [0x5e] = "14",
    [0x5f] = "15",
    [0x60] = "16",
    [SCRIPT_OP_NOP] = "OP_NOP",
    [SCRIPT_OP_VER] = "OP_VER",
    [SCRIPT_OP_IF] = "OP_IF",
    [SCRIPT_OP_NOTIF] = "OP_NOTIF",
    [SCRIPT_OP_VERIF] = "OP_VERIF",
    [SCRIPT_OP_VERNOTIF] = "OP_VERNOTIF",
    [SCRIPT_OP_ELSE] = "OP_ELSE",
    [SCRIPT_OP_ENDIF] = "OP_ENDIF",
    [SCRIPT_OP_VERIFY] = "OP_VERIFY",
    [SCRIPT_OP_RETURN] = "OP_RETURN",
    [SCRIPT_OP_TOALTSTACK] = "OP_TOALTSTACK",
    [SCRIPT_OP_FROMALTSTACK] = "OP_FROMALTSTACK",
    [SCRIPT_OP_2DROP] = "OP_2DROP",
    [SCRIPT_OP_2DUP] = "OP_2DUP",
    [SCRIPT_OP_3DUP] = "OP_3DUP",
    [SCRIPT_OP_2OVER] = "OP_2OVER",
    [SCRIPT_OP_2ROT] = "OP_2ROT",
    [SCRIPT_OP_2SWAP] = "OP_2SWAP",
    [SCRIPT_OP_IFDUP] = "OP_IFDUP",
    [SCRIPT_OP_DEPTH] = "OP_DEPTH",
    [SCRIPT_OP_DROP] = "OP_DROP",
    [SCRIPT_OP_DUP] = "OP_DUP",
    [SCRIPT_OP_NIP] = "OP_NIP",
    [SCRIPT_OP_OVER] = "OP_OVER",
    [SCRIPT_OP_PICK] = "OP_PICK",
    [SCRIPT_OP_ROLL] = "OP_ROLL",
    [SCRIPT_OP_ROT] = "OP_ROT",
    [SCRIPT_OP_SWAP] = "OP_SWAP",
    [SCRIPT_OP_TUCK] = "OP_TUCK",
    [SCRIPT_OP_CAT] = "OP_CAT",
    [SCRIPT_OP_SUBSTR] = "OP_SUBSTR",
    [SCRIPT_OP_LEFT] = "OP_LEFT",
    [SCRIPT_OP_RIGHT] = "OP_RIGHT",
    [SCRIPT_OP_SIZE] = "OP_SIZE",
    [SCRIPT_OP_INVERT] = "OP_INVERT",
    [SCRIPT_OP_AND] = "OP_AND",
    [SCRIPT_OP_OR] = "OP_OR",
    [SCRIPT_OP_XOR] = "OP_XOR",
    [SCRIPT_OP_EQUAL] = "OP_EQUAL",
    [SCRIPT_OP_EQUALVERIFY] = "OP_EQUALVERIFY",
    [SCRIPT_OP_RESERVED1] = "OP_RESERVED1",
    [SCRIPT_OP_RESERVED2] = "OP_RESERVED2",
    [SCRIPT_OP_1ADD] = "OP_1ADD",
    [SCRIPT_OP_1SUB] = "OP_1SUB",
    [SCRIPT_OP_2MUL] = "OP_2MUL",
    [SCRIPT_OP_2DIV] = "OP_2DIV",
    [SCRIPT_OP_NEGATE] = "OP_NEGATE",
    [SCRIPT_OP_ABS] = "OP_ABS",
    [SCRIPT_OP_NOT] = "OP_NOT",
    [SCRIPT_OP_0NOTEQUAL] = "OP_0NOTEQUAL",
    [SCRIPT_OP_ADD] = "OP_ADD",
    [SCRIPT_OP_SUB] = "OP_SUB",
    [SCRIPT_OP_MUL] = "OP_MUL",
    [SCRIPT_OP_DIV] = "OP_DIV",
    [SCRIPT_OP_MOD] = "OP_MOD",
    [SCRIPT_OP_LSHIFT] = "OP_LSHIFT",
    [SCRIPT_OP_RSHIFT] = "OP_RSHIFT",
    [SCRIPT_OP_BOOLAND] = "OP_BOOLAND",
    [SCRIPT_OP_BOOLOR] = "OP_BOOLOR",
    [SCRIPT_OP_NUMEQUAL] = "OP_NUMEQUAL",
    [SCRIPT_OP_NUMEQUALVERIFY] = "OP_NUMEQUALVERIFY",
    [SCRIPT_OP_NUMNOTEQUAL] = "OP_NUMNOTEQUAL",
    [SCRIPT_OP_LESSTHAN] = "OP_LESSTHAN",
    [SCRIPT_OP_GREATERTHAN] = "OP_GREATERTHAN",
    [SCRIPT_OP_LESSTHANOREQUAL] = "OP_LESSTHANOREQUAL",
    [SCRIPT_OP_GREATERTHANOREQUAL] = "OP_GREATERTHANOREQUAL",
    [SCRIPT_OP_MIN] = "OP_MIN",
    [SCRIPT_OP_MAX] = "OP_MAX",
    [SCRIPT_OP_WITHIN] = "OP_WITHIN",
    [SCRIPT_OP_RIPEMD160] = "OP_RIPEMD160",
    [SCRIPT_OP_SHA1] = "OP_SHA1",
    [SCRIPT_OP_SHA256] = "OP_SHA256",
    [SCRIPT_OP_HASH160] = "OP_HASH160",
    [SCRIPT_OP_HASH256] = "OP_HASH256",
    [SCRIPT_OP_CODESEPARATOR] = "OP_CODESEPARATOR",
    [SCRIPT_OP_CHECKSIG] = "OP_CHECKSIG",
    [SCRIPT_OP_CHECKSIGVERIFY] = "OP_CHECKSIGVERIFY",
    [SCRIPT_OP_CHECKMULTISIG] = "OP_CHECKMULTISIG",
    [SCRIPT_OP_CHECKMULTISIGVERIFY] = "OP_CHECKMULTISIGVERIFY",
    [SCRIPT_OP_NOP1] = "OP_NOP1",
    [SCRIPT_OP_CHECKLOCKTIMEVERIFY] = "OP_CHECKLOCKTIMEVERIFY",
    [SCRIPT_OP_CHECKSEQUENCEVERIFY] = "OP_CHECKSEQUENCEVERIFY",
    [SCRIPT_OP_NOP4] = "OP_NOP4",
    [SCRIPT_OP_NOP5] = "OP_NOP5",
    [SCRIPT_OP_NOP6] = "OP_NOP6",
    [SCRIPT_OP_NOP7] = "OP_NOP7",
    [SCRIPT_OP_NOP8] = "OP_NOP8",
    [SCRIPT_OP_NOP9] = "OP_NOP9",
    [SCRIPT_OP_NOP10] = "OP_NOP10",
    [SCRIPT_OP_CHECKSIGADD] = "OP_CHECKSIGADD",
    [SCRIPT_OP_INVALIDOPCODE] = "OP_INVALIDOPCODE",
};

const char *script_op_name(unsigned op)
{
	if (op > 0xff || !op_names[op])
		return "OP_UNKNOWN";
	return op_names[op];
}

bool script_get_op(const uint8_t **pc, const uint8_t *end, uint8_t *opcode, const uint8_t **data,
                   uint32_t *data_len)
{
	const uint8_t *p = *pc;
	*opcode = SCRIPT_OP_INVALIDOPCODE;
	if (data) {
		*data = NULL;
		*data_len = 0;
	}
	if (p >= end)
		return false;
	uint8_t op = *p++;
	if (op <= SCRIPT_OP_PUSHDATA4) {
		uint32_t n;
		/* On a truncated push Core has already consumed the opcode and
		 * any length bytes it could read; the legacy sighash's
		 * scriptCode serialization depends on where it stopped. */
		if (op < SCRIPT_OP_PUSHDATA1) {
			n = op;
		} else if (op == SCRIPT_OP_PUSHDATA1) {
			if (end - p < 1) {
				*pc = p;
				return false;
			}
			n = *p++;
		} else if (op == SCRIPT_OP_PUSHDATA2) {
			if (end - p < 2) {
				*pc = p;
				return false;
			}
			n = (uint32_t)p[0] | (uint32_t)p[1] << 8;
			p += 2;
		} else {
			if (end - p < 4) {
				*pc = p;
				return false;
			}
			n = proto_le32(p);
			p += 4;
		}
		if ((size_t)(end - p) < n) {
			*pc = p;
			return false;
		}
		if (data) {
			*data = p;
			*data_len = n;
		}
		p += n;
	}
	*opcode = op;
	*pc = p;
	return true;
}

bool script_is_push_only(const uint8_t *script, size_t len)
{
	const uint8_t *pc = script, *end = span_end(script, len);
	while (pc < end) {
		uint8_t op;
		if (!script_get_op(&pc, end, &op, NULL, NULL))
			return false;
		if (op > SCRIPT_OP_16)
			return false;
	}
	return true;
}

bool script_is_p2sh(const uint8_t *s, size_t len)
{
	return len == 23 && s[0] == SCRIPT_OP_HASH160 && s[1] == 0x14 && s[22] == SCRIPT_OP_EQUAL;
}

bool script_is_witness_program(const uint8_t *s, size_t len, int *version, const uint8_t **program,
                               size_t *program_len)
{
	if (len < 4 || len > 42)
		return false;
	if (s[0] != SCRIPT_OP_0 && (s[0] < SCRIPT_OP_1 || s[0] > SCRIPT_OP_16))
		return false;
	if ((size_t)s[1] + 2 != len)
		return false;
	if (version)
		*version = s[0] == SCRIPT_OP_0 ? 0 : s[0] - (SCRIPT_OP_1 - 1);
	if (program) {
		*program = s + 2;
		*program_len = len - 2;
	}
	return true;
}

unsigned script_sigop_count(const uint8_t *script, size_t len, bool accurate)
{
	unsigned n = 0;
	const uint8_t *pc = script, *end = span_end(script, len);
	uint8_t last = SCRIPT_OP_INVALIDOPCODE;
	while (pc < end) {
		uint8_t op;
		if (!script_get_op(&pc, end, &op, NULL, NULL))
			break;
		if (op == SCRIPT_OP_CHECKSIG || op == SCRIPT_OP_CHECKSIGVERIFY) {
			n++;
		} else if (op == SCRIPT_OP_CHECKMULTISIG || op == SCRIPT_OP_CHECKMULTISIGVERIFY) {
			if (accurate && last >= SCRIPT_OP_1 && last <= SCRIPT_OP_16)
				n += (unsigned)(last - (SCRIPT_OP_1 - 1));
			else
				n += SCRIPT_MAX_PUBKEYS_PER_MULTISIG;
		}
		last = op;
	}
	return n;
}

/* The last push of a push-only scriptSig (the P2SH redeem script); false if
 * the scriptSig is not push-only. */
static bool last_push(const uint8_t *sig, size_t sig_len, const uint8_t **data, uint32_t *len)
{
	const uint8_t *pc = sig, *end = span_end(sig, sig_len);
	*data = NULL;
	*len = 0;
	while (pc < end) {
		uint8_t op;
		if (!script_get_op(&pc, end, &op, data, len))
			return false;
		if (op > SCRIPT_OP_16)
			return false;
	}
	return true;
}

unsigned script_p2sh_sigop_count(const uint8_t *spk, size_t spk_len, const uint8_t *script_sig,
                                 size_t sig_len)
{
	if (!script_is_p2sh(spk, spk_len))
		return script_sigop_count(spk, spk_len, true);
	const uint8_t *sub;
	uint32_t sub_len;
	if (!last_push(script_sig, sig_len, &sub, &sub_len))
		return 0;
	return sub ? script_sigop_count(sub, sub_len, true) : 0;
}

/* The last witness item of input `in`, if any. */
static bool last_witness_item(const struct proto_tx *tx, uint32_t in, const uint8_t **data,
                              uint32_t *len)
{
	const struct proto_txin *txin = &tx->vin[in];
	struct proto_reader r;
	if (txin->wit_count == 0)
		return false;
	proto_reader_init(&r, tx->blob + txin->wit_off, txin->wit_len);
	for (uint32_t i = 0; i < txin->wit_count; i++) {
		if (proto_read_varspan(&r, data, len))
			return false;
	}
	return true;
}

static unsigned witness_sigops(int version, size_t prog_len, const struct proto_tx *tx, uint32_t in)
{
	if (version != 0)
		return 0;
	if (prog_len == 20)
		return 1;
	if (prog_len == 32) {
		const uint8_t *ws;
		uint32_t ws_len;
		if (last_witness_item(tx, in, &ws, &ws_len))
			return script_sigop_count(ws, ws_len, true);
	}
	return 0;
}

unsigned script_witness_sigop_count(const uint8_t *script_sig, size_t sig_len, const uint8_t *spk,
                                    size_t spk_len, const struct proto_tx *tx, uint32_t in,
                                    uint32_t flags)
{
	int version;
	const uint8_t *prog;
	size_t prog_len;
	if (!(flags & SCRIPT_VERIFY_WITNESS) || in >= tx->n_in)
		return 0;
	if (script_is_witness_program(spk, spk_len, &version, &prog, &prog_len))
		return witness_sigops(version, prog_len, tx, in);
	if (script_is_p2sh(spk, spk_len)) {
		const uint8_t *sub;
		uint32_t sub_len;
		if (last_push(script_sig, sig_len, &sub, &sub_len) && sub &&
		    script_is_witness_program(sub, sub_len, &version, &prog, &prog_len))
			return witness_sigops(version, prog_len, tx, in);
	}
	return 0;
}

bool script_op_is_success(uint8_t op)
{
	return op == 80 || op == 98 || (op >= 126 && op <= 129) || (op >= 131 && op <= 134) ||
	       (op >= 137 && op <= 138) || (op >= 141 && op <= 142) || (op >= 149 && op <= 153) ||
	       (op >= 187 && op <= 254);
}

bool script_minimal_push(const uint8_t *data, uint32_t len, uint8_t opcode)
{
	if (len == 0)
		return opcode == SCRIPT_OP_0;
	if (len == 1 && data[0] >= 1 && data[0] <= 16)
		return opcode == SCRIPT_OP_1 + (data[0] - 1);
	if (len == 1 && data[0] == 0x81)
		return opcode == SCRIPT_OP_1NEGATE;
	if (len <= 75)
		return opcode == len;
	if (len <= 255)
		return opcode == SCRIPT_OP_PUSHDATA1;
	if (len <= 65535)
		return opcode == SCRIPT_OP_PUSHDATA2;
	return true;
}

/* The serialization of `CScript() << sig`: the shortest push prefix, then sig. */
static size_t push_prefix(uint32_t len, uint8_t pre[5])
{
	if (len < SCRIPT_OP_PUSHDATA1) {
		pre[0] = (uint8_t)len;
		return 1;
	}
	if (len <= 0xff) {
		pre[0] = SCRIPT_OP_PUSHDATA1;
		pre[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		pre[0] = SCRIPT_OP_PUSHDATA2;
		pre[1] = (uint8_t)len;
		pre[2] = (uint8_t)(len >> 8);
		return 3;
	}
	pre[0] = SCRIPT_OP_PUSHDATA4;
	proto_put_le32(pre + 1, len);
	return 5;
}

/* Whether the pattern (prefix + sig) starts at p, with at least its length left. */
static bool pattern_at(const uint8_t *p, const uint8_t *end, const uint8_t *pre, size_t pre_len,
                       const uint8_t *sig, uint32_t sig_len)
{
	if ((size_t)(end - p) < pre_len + sig_len)
		return false;
	return memcmp(p, pre, pre_len) == 0 &&
	       (sig_len == 0 || memcmp(p + pre_len, sig, sig_len) == 0);
}

/*
 * One pass of Core's FindAndDelete: at every op boundary, drop as many
 * back-to-back copies of the pattern as start there. With `out` NULL it only
 * counts, so the common case (no match) never allocates.
 */
static int find_and_delete_pass(const uint8_t *s, size_t len, const uint8_t *pre, size_t pre_len,
                                const uint8_t *sig, uint32_t sig_len, uint8_t *out, size_t *out_len)
{
	const uint8_t *pc = s, *copy_from = s, *end = span_end(s, len);
	size_t o = 0;
	int found = 0;
	uint8_t op;
	do {
		if (out) {
			memcpy(out + o, copy_from, (size_t)(pc - copy_from));
			o += (size_t)(pc - copy_from);
		}
		while (pattern_at(pc, end, pre, pre_len, sig, sig_len)) {
			pc += pre_len + sig_len;
			found++;
		}
		copy_from = pc;
	} while (script_get_op(&pc, end, &op, NULL, NULL));
	if (out) {
		memcpy(out + o, copy_from, (size_t)(end - copy_from));
		o += (size_t)(end - copy_from);
		*out_len = o;
	}
	return found;
}

int script_find_and_delete(const uint8_t *script, size_t len, const uint8_t *sig, uint32_t sig_len,
                           uint8_t **out, size_t *out_len)
{
	uint8_t pre[5];
	size_t pre_len = push_prefix(sig_len, pre);
	*out = NULL;
	*out_len = len;
	int found = find_and_delete_pass(script, len, pre, pre_len, sig, sig_len, NULL, NULL);
	if (found == 0)
		return 0;
	uint8_t *buf = xmalloc(len ? len : 1);
	if (!buf)
		return -1;
	find_and_delete_pass(script, len, pre, pre_len, sig, sig_len, buf, out_len);
	*out = buf;
	return found;
}
