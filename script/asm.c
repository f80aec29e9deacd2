/*
 * script/asm.c: Bitcoin Core's asm-like script notation (the format of its
 * test vectors, core_read.cpp's ParseScript), for tests and peertool.
 *
 *   123, -5        a number, pushed as a script number (OP_0, OP_1NEGATE,
 *                  OP_1..OP_16 where they fit), within +-0xffffffff
 *   0x4c01ff       raw bytes inserted as they are (not pushed)
 *   'text'         the bytes between the quotes, pushed
 *   DUP, OP_DUP    an opcode from OP_NOP up, or OP_RESERVED
 */
#include "script/script.h"

#include <ctype.h>
#include <string.h>

#define ASM_MAX_NUMBER 0xffffffffLL

/* Append a push of data in its shortest form (Core's CScript << vector). */
static void write_push(struct proto_writer *w, const uint8_t *data, size_t len)
{
	if (len < SCRIPT_OP_PUSHDATA1) {
		proto_write_u8(w, (uint8_t)len);
	} else if (len <= 0xff) {
		proto_write_u8(w, SCRIPT_OP_PUSHDATA1);
		proto_write_u8(w, (uint8_t)len);
	} else if (len <= 0xffff) {
		proto_write_u8(w, SCRIPT_OP_PUSHDATA2);
		proto_write_u16le(w, (uint16_t)len);
	} else {
		proto_write_u8(w, SCRIPT_OP_PUSHDATA4);
		proto_write_u32le(w, (uint32_t)len);
	}
	proto_write_bytes(w, data, len);
}

/* Core's CScript << int64: small numbers as opcodes, others as script numbers. */
static void write_number(struct proto_writer *w, int64_t v)
{
	if (v == -1 || (v >= 1 && v <= 16)) {
		proto_write_u8(w, (uint8_t)(v + (SCRIPT_OP_1 - 1)));
		return;
	}
	if (v == 0) {
		proto_write_u8(w, SCRIPT_OP_0);
		return;
	}
	uint8_t b[9];
	size_t n = 0;
	bool neg = v < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	while (a) {
		b[n++] = (uint8_t)a;
		a >>= 8;
	}
	if (b[n - 1] & 0x80)
		b[n++] = neg ? 0x80 : 0x00;
	else if (neg)
		b[n - 1] |= 0x80;
	write_push(w, b, n);
}

static bool all_digits(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* An opcode by name, with or without OP_; only OP_NOP and up, and
 * OP_RESERVED, are named (numbers are spelled as numbers). */
static int lookup_op(const char *s, size_t len)
{
	for (unsigned op = SCRIPT_OP_RESERVED; op <= SCRIPT_OP_CHECKSIGADD; op++) {
		if (op < SCRIPT_OP_NOP && op != SCRIPT_OP_RESERVED)
			continue;
		const char *name = script_op_name(op);
		size_t nlen = strlen(name);
		if (nlen == len && memcmp(name, s, len) == 0)
			return (int)op;
		if (nlen == len + 3 && memcmp(name, "OP_", 3) == 0 && memcmp(name + 3, s, len) == 0)
			return (int)op;
	}
	return -1;
}

/* One word: 0 or a script_asm_err. */
static int parse_word(const char *s, size_t len, struct proto_writer *w)
{
	if (all_digits(s, len) || (len > 1 && s[0] == '-' && all_digits(s + 1, len - 1))) {
		bool neg = s[0] == '-';
		int64_t v = 0;
		for (size_t i = neg ? 1 : 0; i < len; i++) {
			v = v * 10 + (s[i] - '0');
			/* stop before overflow: anything past this is out of range */
			if (v > ASM_MAX_NUMBER)
				return SCRIPT_ASM_ERANGE;
		}
		if (neg)
			v = -v;
		write_number(w, v);
		return 0;
	}
	if (len > 2 && s[0] == '0' && s[1] == 'x' && (len - 2) % 2 == 0) {
		bool hex = true;
		for (size_t i = 2; i < len; i++)
			hex = hex && proto_hex_digit(s[i]) >= 0;
		if (hex) {
			for (size_t i = 2; i < len; i += 2)
				proto_write_u8(w, (uint8_t)(proto_hex_digit(s[i]) << 4 |
				                            proto_hex_digit(s[i + 1])));
			return 0;
		}
	}
	if (len >= 2 && s[0] == '\'' && s[len - 1] == '\'') {
		write_push(w, (const uint8_t *)s + 1, len - 2);
		return 0;
	}
	int op = lookup_op(s, len);
	if (op < 0)
		return SCRIPT_ASM_EWORD;
	proto_write_u8(w, (uint8_t)op);
	return 0;
}

int script_parse_asm(const char *text, struct proto_writer *w, size_t *err_off)
{
	const char *p = text;
	while (*p) {
		size_t len = strcspn(p, " \t\n");
		if (len > 0) {
			int rc = parse_word(p, len, w);
			if (rc) {
				if (err_off)
					*err_off = (size_t)(p - text);
				return rc;
			}
			if (w->err) {
				if (err_off)
					*err_off = (size_t)(p - text);
				return SCRIPT_ASM_ENOMEM;
			}
		}
		p += len;
		if (*p)
			p++;
	}
	return 0;
}
