/*
 * tests/fuzz/fuzz_script.c: libFuzzer target for the script interpreter.
 *
 * Input layout (little-endian):
 *   0..3    verification flags (unknown bits dropped, implied ones added)
 *   4..11   amount of the spent output
 *   12..15  transaction version; 16..19 lock time; 20..23 input sequence
 *   then chunks of a 2-byte length and that many bytes: the scriptSig, the
 *   scriptPubKey, then witness items (a length of 0xffff repeats the
 *   previous item 256 times, to reach very large witness stacks cheaply).
 *
 * Checked: no crash, no leak, no undefined behaviour (the build's
 * sanitizers), a verdict that is the same when run again, that matches the
 * return value, and that does not depend on precomputed data except where
 * that data is needed (taproot signatures). The sighash, sigop, asm and
 * CheckTransaction entry points see the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"

#define FUZZ_HEADER       24u
#define FUZZ_MAX_ITEMS    20000u
#define FUZZ_REPEAT       0xffffu
#define FUZZ_REPEAT_COUNT 256u
/** Serialized witness bytes at most, so repeats stay cheap to run. */
#define FUZZ_MAX_WITNESS_BYTES (1u << 20)

struct chunk {
	const uint8_t *p;
	size_t len;
};

static int verify(const struct proto_tx *tx, const struct chunk *sig, const struct chunk *spk,
                  int64_t amount, uint32_t flags, const struct script_precomputed *pre)
{
	int err = -1;
	int rc = script_verify(sig->p, sig->len, spk->p, spk->len, tx, 0, amount, flags, pre, &err);
	if (rc != -err || err < 0 || err >= SCRIPT_ERR__COUNT)
		abort();
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct chunk items[FUZZ_MAX_ITEMS];
	struct chunk sig = {NULL, 0}, spk = {NULL, 0};
	size_t n_items = 0, pos = FUZZ_HEADER;
	if (size < FUZZ_HEADER)
		return 0;

	uint32_t flags = proto_le32(data) & SCRIPT_VERIFY_ALL;
	/* Core refuses CLEANSTACK without WITNESS and WITNESS without P2SH */
	if (flags & SCRIPT_VERIFY_CLEANSTACK)
		flags |= SCRIPT_VERIFY_WITNESS;
	if (flags & SCRIPT_VERIFY_WITNESS)
		flags |= SCRIPT_VERIFY_P2SH;
	int64_t amount = (int64_t)(proto_le64(data + 4) % (uint64_t)(PROTO_MAX_MONEY + 1));

	/* chunks */
	for (int k = 0; pos + 2 <= size; k++) {
		size_t len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
		pos += 2;
		if (len == FUZZ_REPEAT && n_items > 0) {
			for (unsigned r = 0; r < FUZZ_REPEAT_COUNT && n_items < FUZZ_MAX_ITEMS;
			     r++) {
				items[n_items] = items[n_items - 1];
				n_items++;
			}
			continue;
		}
		if (len > size - pos)
			len = size - pos;
		struct chunk c = {data + pos, len};
		pos += len;
		if (k == 0)
			sig = c;
		else if (k == 1)
			spk = c;
		else if (n_items < FUZZ_MAX_ITEMS)
			items[n_items++] = c;
	}

	/* the spending transaction: blob = scriptSig, witness, one output script */
	size_t wit_len = 0;
	for (size_t i = 0; i < n_items; i++) {
		size_t one = proto_compact_size(items[i].len) + items[i].len;
		if (wit_len + one > FUZZ_MAX_WITNESS_BYTES) {
			n_items = i;
			break;
		}
		wit_len += one;
	}
	size_t blob_len = sig.len + wit_len + 1;
	uint8_t *blob = malloc(blob_len);
	if (!blob)
		return 0;
	struct proto_writer w;
	proto_writer_init_fixed(&w, blob, blob_len);
	proto_write_bytes(&w, sig.p, sig.len);
	for (size_t i = 0; i < n_items; i++)
		proto_write_varbytes(&w, items[i].p, items[i].len);
	proto_write_u8(&w, SCRIPT_OP_1);
	if (w.err)
		abort();

	struct proto_txin in = {0};
	struct proto_txout out = {0};
	struct proto_tx tx = {0};
	memset(in.prevout.txid.b, 0x5a, 32);
	in.script_len = (uint32_t)sig.len;
	in.sequence = proto_le32(data + 20);
	in.wit_off = (uint32_t)sig.len;
	in.wit_len = (uint32_t)wit_len;
	in.wit_count = (uint32_t)n_items;
	out.value = amount;
	out.script_off = (uint32_t)(blob_len - 1);
	out.script_len = 1;
	tx.version = (int32_t)proto_le32(data + 12);
	tx.locktime = proto_le32(data + 16);
	tx.n_in = tx.n_out = 1;
	tx.vin = &in;
	tx.vout = &out;
	tx.blob = blob;
	tx.blob_len = (uint32_t)blob_len;
	tx.has_witness = n_items > 0;

	struct script_spent_output spent = {amount, spk.p, (uint32_t)spk.len};
	struct script_precomputed pre, pre_forced;
	script_precompute(&pre, &tx, &spent, false);
	script_precompute(&pre_forced, &tx, &spent, true);

	int e1 = verify(&tx, &sig, &spk, amount, flags, &pre);
	int e2 = verify(&tx, &sig, &spk, amount, flags, &pre);
	int e3 = verify(&tx, &sig, &spk, amount, flags, &pre_forced);
	int e4 = verify(&tx, &sig, &spk, amount, flags, NULL);
	if (e1 != e2 || e1 != e3)
		abort();
	if (e4 != e1 && e4 != SCRIPT_ERR_MISSING_DATA && e1 != SCRIPT_ERR_MISSING_DATA)
		abort();
	/* Flags only ever add rules (soft forks): valid with them, valid without. */
	if (e1 == SCRIPT_ERR_OK && verify(&tx, &sig, &spk, amount, 0, &pre) != SCRIPT_ERR_OK)
		abort();

	/* the other entry points on the same bytes */
	uint8_t h[32];
	struct script_tap_exec ex = {0};
	ex.codesep_pos = UINT32_MAX;
	script_sighash_legacy(&tx, 0, spk.p, spk.len, proto_le32(data), h);
	script_sighash_v0(&tx, 0, spk.p, spk.len, amount, proto_le32(data), &pre, h);
	(void)script_sighash_taproot(&tx, 0, data[0], &pre_forced, &spent, &ex, h);
	(void)script_sigop_count(spk.p, spk.len, true);
	(void)script_p2sh_sigop_count(spk.p, spk.len, sig.p, sig.len);
	(void)script_witness_sigop_count(sig.p, sig.len, spk.p, spk.len, &tx, 0, flags);
	(void)script_is_push_only(sig.p, sig.len);
	(void)script_check_transaction(&tx);

	/* the asm parser on the scriptPubKey bytes as text */
	char text[512];
	size_t tl = spk.len < sizeof(text) - 1 ? spk.len : sizeof(text) - 1;
	if (tl)
		memcpy(text, spk.p, tl);
	text[tl] = 0;
	struct proto_writer aw;
	proto_writer_init(&aw);
	(void)script_parse_asm(text, &aw, NULL);
	proto_writer_release(&aw);

	free(blob);
	return 0;
}
