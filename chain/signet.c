/*
 * chain/signet.c: the signet block solution (BIP325, Core's signet.cpp
 * CheckSignetBlockSolution).
 *
 * A signet block carries, in its witness commitment output, one push that
 * starts with the 4 bytes ec c7 da a2 and holds the solution: a scriptSig
 * and a witness stack. They must satisfy the network's challenge script as
 * input 0 of a virtual transaction (to_sign) spending output 0 of another
 * (to_spend), whose scriptSig commits to the block's version, parent,
 * time and a merkle root computed with the solution cut out of the
 * coinbase (so the signature can sign it). No solution at all is allowed
 * through to the script check: a challenge of OP_TRUE needs none.
 *
 * Built from scratch per block, on the validating thread; nothing kept.
 */
#include <string.h>

#include "chain/internal.h"
#include "script/script.h"

/* BIP325's commitment header and Core's BLOCK_SCRIPT_VERIFY_FLAGS. */
static const uint8_t SIGNET_HEADER[4] = {0xec, 0xc7, 0xda, 0xa2};
#define SIGNET_FLAGS                                                                               \
	(SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS | SCRIPT_VERIFY_DERSIG |                       \
	 SCRIPT_VERIFY_NULLDUMMY)

#define OP_PUSHDATA1 0x4c
#define OP_PUSHDATA2 0x4d
#define OP_PUSHDATA4 0x4e

/*
 * One operation of a script as Core's GetScriptOp reads it: *op the
 * opcode, data/len its push (len 0 when none). False at the end or on a
 * truncated push (where Core's loop stops too).
 */
static bool next_op(const uint8_t *s, size_t n, size_t *pc, uint8_t *op, const uint8_t **data,
                    size_t *len)
{
	if (*pc >= n)
		return false;
	*op = s[(*pc)++];
	*data = NULL;
	*len = 0;
	if (*op > OP_PUSHDATA4)
		return true;
	size_t size = *op, width = 0;
	if (*op == OP_PUSHDATA1)
		width = 1;
	else if (*op == OP_PUSHDATA2)
		width = 2;
	else if (*op == OP_PUSHDATA4)
		width = 4;
	if (width) {
		if (n - *pc < width)
			return false;
		size = 0;
		for (size_t i = 0; i < width; i++)
			size |= (size_t)s[*pc + i] << (8 * i);
		*pc += width;
	}
	if (n - *pc < size)
		return false;
	*data = s + *pc;
	*len = size;
	*pc += size;
	return true;
}

/* Core's CScript << vector: the smallest push opcode for the length, then the bytes. */
static void write_push(struct proto_writer *w, const uint8_t *data, size_t len)
{
	if (len < OP_PUSHDATA1) {
		proto_write_u8(w, (uint8_t)len);
	} else if (len <= 0xff) {
		proto_write_u8(w, OP_PUSHDATA1);
		proto_write_u8(w, (uint8_t)len);
	} else if (len <= 0xffff) {
		proto_write_u8(w, OP_PUSHDATA2);
		proto_write_u16le(w, (uint16_t)len);
	} else {
		proto_write_u8(w, OP_PUSHDATA4);
		proto_write_u32le(w, (uint32_t)len);
	}
	proto_write_bytes(w, data, len);
}

/*
 * Core's FetchAndClearCommitmentSection: the commitment script rebuilt
 * into `out` with the first push that starts with the header (and has
 * more) cut down to the header; *sol and *sol_len the rest of that push.
 * False when there is none (then `out` means nothing).
 */
static bool cut_solution(const uint8_t *s, size_t n, struct proto_writer *out, const uint8_t **sol,
                         size_t *sol_len)
{
	bool found = false;
	size_t pc = 0;
	uint8_t op;
	const uint8_t *data;
	size_t len;
	while (next_op(s, n, &pc, &op, &data, &len)) {
		if (len == 0) {
			proto_write_u8(out, op);
			continue;
		}
		if (!found && len > sizeof(SIGNET_HEADER) &&
		    memcmp(data, SIGNET_HEADER, sizeof(SIGNET_HEADER)) == 0) {
			*sol = data + sizeof(SIGNET_HEADER);
			*sol_len = len - sizeof(SIGNET_HEADER);
			len = sizeof(SIGNET_HEADER);
			found = true;
		}
		write_push(out, data, len);
	}
	return found;
}

/* The coinbase's txid with output `cidx`'s script replaced. */
static void modified_coinbase_txid(const struct proto_tx *cb, int cidx, const uint8_t *script,
                                   size_t script_len, struct proto_writer *w,
                                   struct proto_hash *out)
{
	w->len = 0;
	proto_write_u32le(w, (uint32_t)cb->version);
	proto_write_compact(w, cb->n_in);
	for (uint32_t i = 0; i < cb->n_in; i++) {
		const struct proto_txin *in = &cb->vin[i];
		proto_write_hash(w, &in->prevout.txid);
		proto_write_u32le(w, in->prevout.n);
		proto_write_varbytes(w, proto_txin_script(cb, in), in->script_len);
		proto_write_u32le(w, in->sequence);
	}
	proto_write_compact(w, cb->n_out);
	for (uint32_t k = 0; k < cb->n_out; k++) {
		const struct proto_txout *o = &cb->vout[k];
		proto_write_u64le(w, (uint64_t)o->value);
		if ((int)k == cidx)
			proto_write_varbytes(w, script, script_len);
		else
			proto_write_varbytes(w, proto_txout_script(cb, o), o->script_len);
	}
	proto_write_u32le(w, cb->locktime);
	proto_sha256d(w->buf, w->len, out->b);
}

/*
 * Core's SignetTxs::Create and the script check. 0 when the solution
 * satisfies the challenge; CHAIN_EINVALID or CHAIN_ENOMEM.
 */
static int check_solution(struct proto_block *b, const struct proto_params *p)
{
	int cidx = proto_block_witness_commitment_index(b);
	if (b->n_tx == 0 || cidx < 0)
		return CHAIN_EINVALID; /* a commitment is required */
	struct proto_tx *cb = &b->txs[0];
	const struct proto_txout *co = &cb->vout[cidx];
	struct proto_writer script, w;
	proto_writer_init(&script);
	proto_writer_init(&w);
	struct proto_hash *leaves = NULL;
	struct proto_tx to_sign;
	proto_tx_init(&to_sign);
	int err = CHAIN_EINVALID;
	const uint8_t *sol = NULL;
	size_t sol_len = 0;
	const uint8_t *cscript = proto_txout_script(cb, co);
	size_t cscript_len = co->script_len;
	if (cut_solution(cscript, cscript_len, &script, &sol, &sol_len)) {
		if (script.err)
			goto nomem;
		cscript = script.buf;
		cscript_len = script.len;
	}

	/* The solution: a scriptSig and a witness stack, nothing after. */
	const uint8_t *sig = NULL;
	uint32_t sig_len = 0;
	uint64_t n_wit = 0;
	size_t wit_start = 0;
	if (sol) {
		struct proto_reader r;
		proto_reader_init(&r, sol, sol_len);
		if (proto_read_varspan(&r, &sig, &sig_len) ||
		    proto_read_compact(&r, PROTO_MAX_SIZE, &n_wit))
			goto out;
		wit_start = proto_reader_offset(&r);
		for (uint64_t i = 0; i < n_wit; i++) {
			const uint8_t *item;
			uint32_t item_len;
			if (proto_read_varspan(&r, &item, &item_len))
				goto out;
		}
		if (proto_reader_left(&r))
			goto out; /* extraneous data */
	}

	/* The merkle root with the modified coinbase. */
	if (!(leaves = xcalloc(b->n_tx, sizeof(*leaves))))
		goto nomem;
	modified_coinbase_txid(cb, cidx, cscript, cscript_len, &w, &leaves[0]);
	for (uint32_t i = 1; i < b->n_tx; i++)
		leaves[i] = *proto_tx_txid(&b->txs[i]);
	struct proto_hash root;
	bool mutated;
	if (w.err || proto_merkle_root(leaves, b->n_tx, NULL, &root, &mutated))
		goto nomem;

	/* to_spend: version 0, one input (null prevout, scriptSig OP_0 and
	 * the block data), one output of 0 paying the challenge. */
	uint8_t data[4 + 32 + 32 + 4];
	struct proto_writer dw;
	proto_writer_init_fixed(&dw, data, sizeof(data));
	proto_write_u32le(&dw, (uint32_t)b->hdr.version);
	proto_write_hash(&dw, &b->hdr.prev);
	proto_write_hash(&dw, &root);
	proto_write_u32le(&dw, b->hdr.time);
	w.len = 0;
	proto_write_u32le(&w, 0);
	proto_write_compact(&w, 1);
	proto_write_bytes(&w, (uint8_t[32]){0}, 32);
	proto_write_u32le(&w, 0xffffffffu);
	proto_write_compact(&w, 2 + sizeof(data));
	proto_write_u8(&w, 0x00);
	write_push(&w, data, sizeof(data));
	proto_write_u32le(&w, 0);
	proto_write_compact(&w, 1);
	proto_write_u64le(&w, 0);
	proto_write_varbytes(&w, p->signet_challenge, p->signet_challenge_len);
	proto_write_u32le(&w, 0);
	if (w.err)
		goto nomem;
	struct proto_hash to_spend;
	proto_sha256d(w.buf, w.len, to_spend.b);

	/* to_sign: version 0, spends to_spend:0 with the solution, one
	 * output of 0 to OP_RETURN. */
	w.len = 0;
	proto_write_u32le(&w, 0);
	if (n_wit) {
		proto_write_u8(&w, 0x00); /* BIP144 marker and flag */
		proto_write_u8(&w, 0x01);
	}
	proto_write_compact(&w, 1);
	proto_write_hash(&w, &to_spend);
	proto_write_u32le(&w, 0);
	proto_write_varbytes(&w, sig, sig_len);
	proto_write_u32le(&w, 0);
	proto_write_compact(&w, 1);
	proto_write_u64le(&w, 0);
	proto_write_compact(&w, 1);
	proto_write_u8(&w, 0x6a);
	if (n_wit) {
		proto_write_compact(&w, n_wit);
		proto_write_bytes(&w, sol + wit_start, sol_len - wit_start);
	}
	proto_write_u32le(&w, 0);
	if (w.err)
		goto nomem;
	int derr = proto_tx_decode_buf(w.buf, w.len, &to_sign, NULL);
	if (derr == PROTO_ENOMEM)
		goto nomem;
	if (derr)
		goto out; /* a solution no transaction can carry */

	struct script_spent_output spent = {
	    .amount = 0,
	    .script = p->signet_challenge,
	    .script_len = (uint32_t)p->signet_challenge_len,
	};
	struct script_precomputed pre;
	script_precompute(&pre, &to_sign, &spent, false);
	if (script_verify_input(&to_sign, 0, &spent, SIGNET_FLAGS, &pre, NULL) == 0)
		err = 0;
	goto out;
nomem:
	err = CHAIN_ENOMEM;
out:
	proto_tx_release(&to_sign);
	xfree(leaves);
	proto_writer_release(&w);
	proto_writer_release(&script);
	return err;
}

int chain_check_signet_block(struct proto_block *b, const struct proto_params *p,
                             struct chain_state *st)
{
	/* Core: the genesis block's solution is always valid. */
	struct proto_hash hash;
	proto_block_header_hash(&b->hdr, &hash);
	if (proto_hash_eq(&hash, &p->genesis_hash))
		return 0;
	int err = check_solution(b, p);
	if (err == CHAIN_EINVALID)
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-signet-blksig",
		                    "signet block signature validation failure");
	return err;
}
