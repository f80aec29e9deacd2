/*
 * script/interp.c: the script interpreter, Core's EvalScript.
 *
 * Every rule and every error below follows Bitcoin Core's interpreter
 * exactly, in Core's order: which check fires first is part of consensus
 * (and of the expected error in Core's test vectors). Where Core throws
 * (script numbers too long or not minimal) we return UNKNOWN_ERROR, as its
 * catch-all does.
 *
 * The signature opcodes' work is in script/checksig.c, the stack's
 * primitives in script/stack.h.
 */
#include "script/internal.h"
#include "script/stack.h"

#include <string.h>

/* ConditionStack: only its size and the position of the first false
 * matter, so IF/ELSE/ENDIF are O(1) however deep they nest (Core's). */
#define COND_NO_FALSE UINT32_MAX

bool script_cast_to_bool(const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		if (p[i] != 0) {
			/* negative zero is false */
			return !(i == len - 1 && p[i] == 0x80);
		}
	}
	return false;
}

#define PUSH_OR_FAIL(slot)                                                                         \
	do {                                                                                       \
		if (!((slot) = push_slot(ex)))                                                     \
			return -SCRIPT_ERR_STACK_SIZE;                                             \
	} while (0)

static bool is_disabled(uint8_t op)
{
	switch (op) {
	case SCRIPT_OP_CAT:
	case SCRIPT_OP_SUBSTR:
	case SCRIPT_OP_LEFT:
	case SCRIPT_OP_RIGHT:
	case SCRIPT_OP_INVERT:
	case SCRIPT_OP_AND:
	case SCRIPT_OP_OR:
	case SCRIPT_OP_XOR:
	case SCRIPT_OP_2MUL:
	case SCRIPT_OP_2DIV:
	case SCRIPT_OP_MUL:
	case SCRIPT_OP_DIV:
	case SCRIPT_OP_MOD:
	case SCRIPT_OP_LSHIFT:
	case SCRIPT_OP_RSHIFT:
		return true;
	default:
		return false;
	}
}

/* Core's CheckLockTime. */
static bool check_locktime(const struct script_exec *ex, int64_t lock)
{
	uint32_t tx_lock = ex->tx->locktime;
	/* Compare heights with heights and times with times only. */
	if (!((tx_lock < SCRIPT_LOCKTIME_THRESHOLD && lock < SCRIPT_LOCKTIME_THRESHOLD) ||
	      (tx_lock >= SCRIPT_LOCKTIME_THRESHOLD && lock >= SCRIPT_LOCKTIME_THRESHOLD)))
		return false;
	if (lock > (int64_t)tx_lock)
		return false;
	/* A final input disables nLockTime, and so would bypass the check. */
	return ex->tx->vin[ex->in].sequence != SCRIPT_SEQUENCE_FINAL;
}

/* Core's CheckSequence. */
static bool check_sequence(const struct script_exec *ex, int64_t seq)
{
	int64_t tx_seq = ex->tx->vin[ex->in].sequence;
	/* BIP68 applies from version 2; Core compares the version unsigned,
	 * so 0xffffffff (-1) qualifies. */
	if ((uint32_t)ex->tx->version < 2)
		return false;
	if (tx_seq & SCRIPT_SEQUENCE_LOCKTIME_DISABLE)
		return false;
	const int64_t mask = SCRIPT_SEQUENCE_LOCKTIME_TYPE | SCRIPT_SEQUENCE_LOCKTIME_MASK;
	int64_t tx_masked = tx_seq & mask, masked = seq & mask;
	if (!((tx_masked < SCRIPT_SEQUENCE_LOCKTIME_TYPE &&
	       masked < SCRIPT_SEQUENCE_LOCKTIME_TYPE) ||
	      (tx_masked >= SCRIPT_SEQUENCE_LOCKTIME_TYPE &&
	       masked >= SCRIPT_SEQUENCE_LOCKTIME_TYPE)))
		return false;
	return masked <= tx_masked;
}

/* The hash opcodes, replacing the top item with its digest. */
static void op_hash(struct script_item *it, uint8_t op)
{
	uint8_t out[32];
	uint32_t n = 20;
	const uint8_t *p = item_data(it);
	switch (op) {
	case SCRIPT_OP_RIPEMD160:
		proto_ripemd160(p, it->len, out);
		break;
	case SCRIPT_OP_SHA1:
		proto_sha1(p, it->len, out);
		break;
	case SCRIPT_OP_SHA256:
		proto_sha256(p, it->len, out);
		n = 32;
		break;
	case SCRIPT_OP_HASH160:
		proto_hash160(p, it->len, out);
		break;
	default: /* HASH256 */
		proto_sha256d(p, it->len, out);
		n = 32;
		break;
	}
	memcpy(it->inl, out, n);
	it->ext = NULL;
	it->len = n;
}

/* Unary numeric opcodes. */
static int op_unary(struct script_exec *ex, uint8_t op, bool minimal)
{
	int64_t a;
	int rc;
	if (ex->n < 1)
		return -SCRIPT_ERR_INVALID_STACK_OPERATION;
	if ((rc = num_decode(top(ex, -1), minimal, NUM_MAX_LEN, &a)))
		return rc;
	switch (op) {
	case SCRIPT_OP_1ADD:
		a += 1;
		break;
	case SCRIPT_OP_1SUB:
		a -= 1;
		break;
	case SCRIPT_OP_NEGATE:
		a = -a;
		break;
	case SCRIPT_OP_ABS:
		if (a < 0)
			a = -a;
		break;
	case SCRIPT_OP_NOT:
		a = a == 0;
		break;
	default: /* 0NOTEQUAL */
		a = a != 0;
		break;
	}
	item_set_num(top(ex, -1), a);
	return 0;
}

/* Binary numeric opcodes (NUMEQUALVERIFY's verify is done by the caller). */
static int op_binary(struct script_exec *ex, uint8_t op, bool minimal)
{
	int64_t a, b, r;
	int rc;
	if (ex->n < 2)
		return -SCRIPT_ERR_INVALID_STACK_OPERATION;
	if ((rc = num_decode(top(ex, -2), minimal, NUM_MAX_LEN, &a)))
		return rc;
	if ((rc = num_decode(top(ex, -1), minimal, NUM_MAX_LEN, &b)))
		return rc;
	switch (op) {
	case SCRIPT_OP_ADD:
		r = a + b;
		break;
	case SCRIPT_OP_SUB:
		r = a - b;
		break;
	case SCRIPT_OP_BOOLAND:
		r = a != 0 && b != 0;
		break;
	case SCRIPT_OP_BOOLOR:
		r = a != 0 || b != 0;
		break;
	case SCRIPT_OP_NUMEQUAL:
	case SCRIPT_OP_NUMEQUALVERIFY:
		r = a == b;
		break;
	case SCRIPT_OP_NUMNOTEQUAL:
		r = a != b;
		break;
	case SCRIPT_OP_LESSTHAN:
		r = a < b;
		break;
	case SCRIPT_OP_GREATERTHAN:
		r = a > b;
		break;
	case SCRIPT_OP_LESSTHANOREQUAL:
		r = a <= b;
		break;
	case SCRIPT_OP_GREATERTHANOREQUAL:
		r = a >= b;
		break;
	case SCRIPT_OP_MIN:
		r = a < b ? a : b;
		break;
	default: /* MAX */
		r = a > b ? a : b;
		break;
	}
	pop(ex);
	item_set_num(top(ex, -1), r);
	return 0;
}

/* Stack shuffling opcodes; 1 if op is not one of them. */
static int op_stack(struct script_exec *ex, uint8_t op, bool minimal)
{
	struct script_item *s, t1, t2;
	switch (op) {
	case SCRIPT_OP_TOALTSTACK:
		if (ex->n < 1)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		ex->items[ex->cap - 1 - ex->alt_n] = *top(ex, -1);
		ex->alt_n++;
		pop(ex);
		return 0;
	case SCRIPT_OP_FROMALTSTACK:
		if (ex->alt_n < 1)
			return -SCRIPT_ERR_INVALID_ALTSTACK_OPERATION;
		t1 = ex->items[ex->cap - ex->alt_n];
		ex->alt_n--;
		PUSH_OR_FAIL(s);
		*s = t1;
		return 0;
	case SCRIPT_OP_2DROP:
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		ex->n -= 2;
		return 0;
	case SCRIPT_OP_2DUP:
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -2);
		t2 = *top(ex, -1);
		PUSH_OR_FAIL(s);
		*s = t1;
		PUSH_OR_FAIL(s);
		*s = t2;
		return 0;
	case SCRIPT_OP_3DUP: {
		if (ex->n < 3)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		struct script_item t3 = *top(ex, -1);
		t1 = *top(ex, -3);
		t2 = *top(ex, -2);
		PUSH_OR_FAIL(s);
		*s = t1;
		PUSH_OR_FAIL(s);
		*s = t2;
		PUSH_OR_FAIL(s);
		*s = t3;
		return 0;
	}
	case SCRIPT_OP_2OVER:
		if (ex->n < 4)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -4);
		t2 = *top(ex, -3);
		PUSH_OR_FAIL(s);
		*s = t1;
		PUSH_OR_FAIL(s);
		*s = t2;
		return 0;
	case SCRIPT_OP_2ROT:
		/* (x1 x2 x3 x4 x5 x6 -- x3 x4 x5 x6 x1 x2) */
		if (ex->n < 6)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -6);
		t2 = *top(ex, -5);
		memmove(top(ex, -6), top(ex, -4), 4 * sizeof(struct script_item));
		*top(ex, -2) = t1;
		*top(ex, -1) = t2;
		return 0;
	case SCRIPT_OP_2SWAP:
		/* (x1 x2 x3 x4 -- x3 x4 x1 x2) */
		if (ex->n < 4)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -4);
		t2 = *top(ex, -3);
		*top(ex, -4) = *top(ex, -2);
		*top(ex, -3) = *top(ex, -1);
		*top(ex, -2) = t1;
		*top(ex, -1) = t2;
		return 0;
	case SCRIPT_OP_IFDUP:
		if (ex->n < 1)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -1);
		if (script_cast_to_bool(item_data(&t1), t1.len)) {
			PUSH_OR_FAIL(s);
			*s = t1;
		}
		return 0;
	case SCRIPT_OP_DEPTH: {
		int64_t depth = (int64_t)ex->n + ex->base;
		PUSH_OR_FAIL(s);
		item_set_num(s, depth);
		return 0;
	}
	case SCRIPT_OP_DROP:
		if (ex->n < 1)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		pop(ex);
		return 0;
	case SCRIPT_OP_DUP:
		if (ex->n < 1)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -1);
		PUSH_OR_FAIL(s);
		*s = t1;
		return 0;
	case SCRIPT_OP_NIP:
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		*top(ex, -2) = *top(ex, -1);
		pop(ex);
		return 0;
	case SCRIPT_OP_OVER:
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -2);
		PUSH_OR_FAIL(s);
		*s = t1;
		return 0;
	case SCRIPT_OP_PICK:
	case SCRIPT_OP_ROLL: {
		int64_t v;
		int rc;
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		if ((rc = num_decode(top(ex, -1), minimal, NUM_MAX_LEN, &v)))
			return rc;
		int n = num_getint(v);
		pop(ex);
		if (n < 0 || (int64_t)n >= (int64_t)ex->n + ex->base)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		/* An uncounted deep item (see SCRIPT_STACK_VISIBLE): the stack
		 * stays over the limit whatever is copied or moved. */
		if (n >= (int)ex->n)
			return -SCRIPT_ERR_STACK_SIZE;
		t1 = *top(ex, -n - 1);
		if (op == SCRIPT_OP_ROLL) {
			memmove(top(ex, -n - 1), top(ex, -n),
			        (size_t)n * sizeof(struct script_item));
			pop(ex);
		}
		PUSH_OR_FAIL(s);
		*s = t1;
		return 0;
	}
	case SCRIPT_OP_ROT:
		/* (x1 x2 x3 -- x2 x3 x1) */
		if (ex->n < 3)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -3);
		*top(ex, -3) = *top(ex, -2);
		*top(ex, -2) = *top(ex, -1);
		*top(ex, -1) = t1;
		return 0;
	case SCRIPT_OP_SWAP:
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -2);
		*top(ex, -2) = *top(ex, -1);
		*top(ex, -1) = t1;
		return 0;
	case SCRIPT_OP_TUCK:
		/* (x1 x2 -- x2 x1 x2) */
		if (ex->n < 2)
			return -SCRIPT_ERR_INVALID_STACK_OPERATION;
		t1 = *top(ex, -2);
		t2 = *top(ex, -1);
		PUSH_OR_FAIL(s);
		*top(ex, -3) = t2;
		*top(ex, -2) = t1;
		*top(ex, -1) = t2;
		return 0;
	default:
		return 1;
	}
}

int script_eval(struct script_exec *ex, const uint8_t *script, size_t len,
                enum script_sigversion sv)
{
	const uint8_t *pc = script, *end = span_end(script, len), *codehash = script;
	const bool minimal = (ex->flags & SCRIPT_VERIFY_MINIMALDATA) != 0;
	/* base and witness v0 share the limits tapscript dropped */
	const bool pre_tap = sv == SCRIPT_SIGVERSION_BASE || sv == SCRIPT_SIGVERSION_WITNESS_V0;
	uint32_t cond_size = 0, cond_first_false = COND_NO_FALSE;
	uint32_t opcode_pos = 0;
	int op_count = 0;
	int rc;

	/* The altstack lives for one script only (Core's is local to EvalScript). */
	ex->alt_n = 0;
	ex->tap.codesep_pos = UINT32_MAX;
	if (pre_tap && len > SCRIPT_MAX_SIZE)
		return -SCRIPT_ERR_SCRIPT_SIZE;

	for (; pc < end; opcode_pos++) {
		const bool exec = cond_first_false == COND_NO_FALSE;
		const uint8_t *data;
		uint32_t dlen;
		uint8_t op;
		struct script_item *s;

		if (!script_get_op(&pc, end, &op, &data, &dlen))
			return -SCRIPT_ERR_BAD_OPCODE;
		if (dlen > SCRIPT_MAX_ELEMENT_SIZE)
			return -SCRIPT_ERR_PUSH_SIZE;
		/* OP_RESERVED (0x50) is not counted. */
		if (pre_tap && op > SCRIPT_OP_16 && ++op_count > SCRIPT_MAX_OPS)
			return -SCRIPT_ERR_OP_COUNT;
		/* Disabled opcodes fail even in an unexecuted branch (CVE-2010-5137). */
		if (is_disabled(op))
			return -SCRIPT_ERR_DISABLED_OPCODE;
		if (op == SCRIPT_OP_CODESEPARATOR && sv == SCRIPT_SIGVERSION_BASE &&
		    (ex->flags & SCRIPT_VERIFY_CONST_SCRIPTCODE))
			return -SCRIPT_ERR_OP_CODESEPARATOR;

		if (exec && op <= SCRIPT_OP_PUSHDATA4) {
			if (minimal && !script_minimal_push(data, dlen, op))
				return -SCRIPT_ERR_MINIMALDATA;
			PUSH_OR_FAIL(s);
			s->ext = data;
			s->len = dlen;
		} else if (exec || (op >= SCRIPT_OP_IF && op <= SCRIPT_OP_ENDIF)) {
			switch (op) {
			case SCRIPT_OP_1NEGATE:
			case SCRIPT_OP_1:
			case SCRIPT_OP_2:
			case SCRIPT_OP_3:
			case SCRIPT_OP_4:
			case SCRIPT_OP_5:
			case SCRIPT_OP_6:
			case SCRIPT_OP_7:
			case SCRIPT_OP_8:
			case SCRIPT_OP_9:
			case SCRIPT_OP_10:
			case SCRIPT_OP_11:
			case SCRIPT_OP_12:
			case SCRIPT_OP_13:
			case SCRIPT_OP_14:
			case SCRIPT_OP_15:
			case SCRIPT_OP_16:
				PUSH_OR_FAIL(s);
				item_set_num(s, (int)op - (SCRIPT_OP_1 - 1));
				break;

			case SCRIPT_OP_NOP:
				break;

			case SCRIPT_OP_CHECKLOCKTIMEVERIFY:
			case SCRIPT_OP_CHECKSEQUENCEVERIFY: {
				const bool cltv = op == SCRIPT_OP_CHECKLOCKTIMEVERIFY;
				int64_t v;
				/* Not enabled: a plain NOP2/NOP3, never discouraged. */
				if (!(ex->flags & (cltv ? SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY
				                        : SCRIPT_VERIFY_CHECKSEQUENCEVERIFY)))
					break;
				if (ex->n < 1)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				/* 5-byte operands: lock times are uint32 and
				 * must not stop at 2^31. */
				if ((rc = num_decode(top(ex, -1), minimal, NUM_MAX_LEN_LOCKTIME,
				                     &v)))
					return rc;
				if (v < 0)
					return -SCRIPT_ERR_NEGATIVE_LOCKTIME;
				if (cltv) {
					if (!check_locktime(ex, v))
						return -SCRIPT_ERR_UNSATISFIED_LOCKTIME;
				} else {
					/* the disable bit keeps CSV a NOP for soft forks */
					if (v & SCRIPT_SEQUENCE_LOCKTIME_DISABLE)
						break;
					if (!check_sequence(ex, v))
						return -SCRIPT_ERR_UNSATISFIED_LOCKTIME;
				}
				break;
			}

			case SCRIPT_OP_NOP1:
			case SCRIPT_OP_NOP4:
			case SCRIPT_OP_NOP5:
			case SCRIPT_OP_NOP6:
			case SCRIPT_OP_NOP7:
			case SCRIPT_OP_NOP8:
			case SCRIPT_OP_NOP9:
			case SCRIPT_OP_NOP10:
				if (ex->flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS)
					return -SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS;
				break;

			case SCRIPT_OP_IF:
			case SCRIPT_OP_NOTIF: {
				bool value = false;
				if (exec) {
					if (ex->n < 1)
						return -SCRIPT_ERR_UNBALANCED_CONDITIONAL;
					const struct script_item *t = top(ex, -1);
					const uint8_t *p = item_data(t);
					/* BIP342: exactly empty or 0x01, as consensus. */
					if (sv == SCRIPT_SIGVERSION_TAPSCRIPT &&
					    (t->len > 1 || (t->len == 1 && p[0] != 1)))
						return -SCRIPT_ERR_TAPSCRIPT_MINIMALIF;
					/* witness v0: the same, as policy */
					if (sv == SCRIPT_SIGVERSION_WITNESS_V0 &&
					    (ex->flags & SCRIPT_VERIFY_MINIMALIF) &&
					    (t->len > 1 || (t->len == 1 && p[0] != 1)))
						return -SCRIPT_ERR_MINIMALIF;
					value = script_cast_to_bool(p, t->len);
					if (op == SCRIPT_OP_NOTIF)
						value = !value;
					pop(ex);
				}
				if (cond_first_false == COND_NO_FALSE && !value)
					cond_first_false = cond_size;
				cond_size++;
				break;
			}

			case SCRIPT_OP_ELSE:
				if (cond_size == 0)
					return -SCRIPT_ERR_UNBALANCED_CONDITIONAL;
				/* Only toggling the first false (or making the top the
				 * first false) is observable. */
				if (cond_first_false == COND_NO_FALSE)
					cond_first_false = cond_size - 1;
				else if (cond_first_false == cond_size - 1)
					cond_first_false = COND_NO_FALSE;
				break;

			case SCRIPT_OP_ENDIF:
				if (cond_size == 0)
					return -SCRIPT_ERR_UNBALANCED_CONDITIONAL;
				cond_size--;
				if (cond_first_false == cond_size)
					cond_first_false = COND_NO_FALSE;
				break;

			case SCRIPT_OP_VERIFY:
				if (ex->n < 1)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				if (!script_cast_to_bool(item_data(top(ex, -1)), top(ex, -1)->len))
					return -SCRIPT_ERR_VERIFY;
				pop(ex);
				break;

			case SCRIPT_OP_RETURN:
				return -SCRIPT_ERR_OP_RETURN;

			case SCRIPT_OP_TOALTSTACK:
			case SCRIPT_OP_FROMALTSTACK:
			case SCRIPT_OP_2DROP:
			case SCRIPT_OP_2DUP:
			case SCRIPT_OP_3DUP:
			case SCRIPT_OP_2OVER:
			case SCRIPT_OP_2ROT:
			case SCRIPT_OP_2SWAP:
			case SCRIPT_OP_IFDUP:
			case SCRIPT_OP_DEPTH:
			case SCRIPT_OP_DROP:
			case SCRIPT_OP_DUP:
			case SCRIPT_OP_NIP:
			case SCRIPT_OP_OVER:
			case SCRIPT_OP_PICK:
			case SCRIPT_OP_ROLL:
			case SCRIPT_OP_ROT:
			case SCRIPT_OP_SWAP:
			case SCRIPT_OP_TUCK:
				if ((rc = op_stack(ex, op, minimal)))
					return rc;
				break;

			case SCRIPT_OP_SIZE: {
				if (ex->n < 1)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				int64_t size = top(ex, -1)->len;
				PUSH_OR_FAIL(s);
				item_set_num(s, size);
				break;
			}

			case SCRIPT_OP_EQUAL:
			case SCRIPT_OP_EQUALVERIFY: {
				if (ex->n < 2)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				const struct script_item *a = top(ex, -2), *b = top(ex, -1);
				bool equal = a->len == b->len &&
				             (a->len == 0 ||
				              memcmp(item_data(a), item_data(b), a->len) == 0);
				pop(ex);
				item_set_bool(top(ex, -1), equal);
				if (op == SCRIPT_OP_EQUALVERIFY) {
					if (!equal)
						return -SCRIPT_ERR_EQUALVERIFY;
					pop(ex);
				}
				break;
			}

			case SCRIPT_OP_1ADD:
			case SCRIPT_OP_1SUB:
			case SCRIPT_OP_NEGATE:
			case SCRIPT_OP_ABS:
			case SCRIPT_OP_NOT:
			case SCRIPT_OP_0NOTEQUAL:
				if ((rc = op_unary(ex, op, minimal)))
					return rc;
				break;

			case SCRIPT_OP_ADD:
			case SCRIPT_OP_SUB:
			case SCRIPT_OP_BOOLAND:
			case SCRIPT_OP_BOOLOR:
			case SCRIPT_OP_NUMEQUAL:
			case SCRIPT_OP_NUMEQUALVERIFY:
			case SCRIPT_OP_NUMNOTEQUAL:
			case SCRIPT_OP_LESSTHAN:
			case SCRIPT_OP_GREATERTHAN:
			case SCRIPT_OP_LESSTHANOREQUAL:
			case SCRIPT_OP_GREATERTHANOREQUAL:
			case SCRIPT_OP_MIN:
			case SCRIPT_OP_MAX:
				if ((rc = op_binary(ex, op, minimal)))
					return rc;
				if (op == SCRIPT_OP_NUMEQUALVERIFY) {
					if (!script_cast_to_bool(item_data(top(ex, -1)),
					                         top(ex, -1)->len))
						return -SCRIPT_ERR_NUMEQUALVERIFY;
					pop(ex);
				}
				break;

			case SCRIPT_OP_WITHIN: {
				int64_t x, lo, hi;
				if (ex->n < 3)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				if ((rc = num_decode(top(ex, -3), minimal, NUM_MAX_LEN, &x)) ||
				    (rc = num_decode(top(ex, -2), minimal, NUM_MAX_LEN, &lo)) ||
				    (rc = num_decode(top(ex, -1), minimal, NUM_MAX_LEN, &hi)))
					return rc;
				ex->n -= 2;
				item_set_bool(top(ex, -1), lo <= x && x < hi);
				break;
			}

			case SCRIPT_OP_RIPEMD160:
			case SCRIPT_OP_SHA1:
			case SCRIPT_OP_SHA256:
			case SCRIPT_OP_HASH160:
			case SCRIPT_OP_HASH256:
				if (ex->n < 1)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				op_hash(top(ex, -1), op);
				break;

			case SCRIPT_OP_CODESEPARATOR:
				/* signatures commit to what follows the last one */
				codehash = pc;
				ex->tap.codesep_pos = opcode_pos;
				break;

			case SCRIPT_OP_CHECKSIG:
			case SCRIPT_OP_CHECKSIGVERIFY: {
				bool ok = false;
				if (ex->n < 2)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				if ((rc = script_checksig(ex, top(ex, -2), top(ex, -1), codehash,
				                          (size_t)(end - codehash), sv, &ok)))
					return rc;
				pop(ex);
				item_set_bool(top(ex, -1), ok);
				if (op == SCRIPT_OP_CHECKSIGVERIFY) {
					if (!ok)
						return -SCRIPT_ERR_CHECKSIGVERIFY;
					pop(ex);
				}
				break;
			}

			case SCRIPT_OP_CHECKSIGADD: {
				int64_t num;
				bool ok = false;
				if (pre_tap)
					return -SCRIPT_ERR_BAD_OPCODE;
				if (ex->n < 3)
					return -SCRIPT_ERR_INVALID_STACK_OPERATION;
				if ((rc = num_decode(top(ex, -2), minimal, NUM_MAX_LEN, &num)))
					return rc;
				if ((rc = script_checksig(ex, top(ex, -3), top(ex, -1), codehash,
				                          (size_t)(end - codehash), sv, &ok)))
					return rc;
				ex->n -= 2;
				item_set_num(top(ex, -1), num + (ok ? 1 : 0));
				break;
			}

			case SCRIPT_OP_CHECKMULTISIG:
			case SCRIPT_OP_CHECKMULTISIGVERIFY: {
				bool ok = false;
				if (sv == SCRIPT_SIGVERSION_TAPSCRIPT)
					return -SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG;
				if ((rc = script_op_checkmultisig(ex, codehash,
				                                  (size_t)(end - codehash), sv,
				                                  &op_count, minimal, &ok)))
					return rc;
				PUSH_OR_FAIL(s);
				item_set_bool(s, ok);
				if (op == SCRIPT_OP_CHECKMULTISIGVERIFY) {
					if (!ok)
						return -SCRIPT_ERR_CHECKMULTISIGVERIFY;
					pop(ex);
				}
				break;
			}

			default:
				return -SCRIPT_ERR_BAD_OPCODE;
			}
		}

		if (ex->n + ex->base + ex->alt_n > SCRIPT_MAX_STACK)
			return -SCRIPT_ERR_STACK_SIZE;
	}

	if (cond_size != 0)
		return -SCRIPT_ERR_UNBALANCED_CONDITIONAL;
	return 0;
}
