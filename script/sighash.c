/*
 * script/sighash.c: what signatures sign. Legacy (the original
 * serialization, with its SIGHASH_SINGLE bug), BIP143 (witness v0) and
 * BIP341/342 (taproot), plus the per-transaction precomputed hashes and the
 * taproot tree hashes.
 *
 * Everything streams into SHA-256: no serialized copy of the transaction
 * is ever built, so no sighash allocates.
 */
#include "script/internal.h"

#include <string.h>

static void h_u32(struct proto_sha256 *h, uint32_t v)
{
	uint8_t b[4];
	proto_put_le32(b, v);
	proto_sha256_update(h, b, 4);
}

static void h_u64(struct proto_sha256 *h, uint64_t v)
{
	uint8_t b[8];
	proto_put_le64(b, v);
	proto_sha256_update(h, b, 8);
}

static void h_compact(struct proto_sha256 *h, uint64_t v)
{
	uint8_t b[PROTO_COMPACT_MAX];
	proto_sha256_update(h, b, proto_compact_encode(b, v));
}

static void h_outpoint(struct proto_sha256 *h, const struct proto_outpoint *o)
{
	proto_sha256_update(h, o->txid.b, 32);
	h_u32(h, o->n);
}

static void h_txout(struct proto_sha256 *h, const struct proto_tx *tx, const struct proto_txout *o)
{
	h_u64(h, (uint64_t)o->value);
	h_compact(h, o->script_len);
	proto_sha256_update(h, proto_txout_script(tx, o), o->script_len);
}

/* ---- precomputed hashes ------------------------------------------------ */

static void sha_prevouts(const struct proto_tx *tx, uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init(&h);
	for (uint32_t i = 0; i < tx->n_in; i++)
		h_outpoint(&h, &tx->vin[i].prevout);
	proto_sha256_final(&h, out);
}

static void sha_sequences(const struct proto_tx *tx, uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init(&h);
	for (uint32_t i = 0; i < tx->n_in; i++)
		h_u32(&h, tx->vin[i].sequence);
	proto_sha256_final(&h, out);
}

static void sha_outputs(const struct proto_tx *tx, uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init(&h);
	for (uint32_t i = 0; i < tx->n_out; i++)
		h_txout(&h, tx, &tx->vout[i]);
	proto_sha256_final(&h, out);
}

static bool has_witness(const struct proto_txin *in)
{
	return in->wit_count != 0;
}

void script_precompute(struct script_precomputed *pre, const struct proto_tx *tx,
                       const struct script_spent_output *spent, bool force)
{
	bool bip143 = force, bip341 = force;
	memset(pre, 0, sizeof(*pre));
	/* Core's rule: a witness input spending a 34-byte OP_1 output is a
	 * taproot spend, any other witness input a v0 one (P2SH would need
	 * evaluating to be exact; computing too much is harmless). */
	for (uint32_t i = 0; i < tx->n_in && !(bip143 && bip341); i++) {
		if (!has_witness(&tx->vin[i]))
			continue;
		if (spent && spent[i].script_len == 34 && spent[i].script[0] == SCRIPT_OP_1)
			bip341 = true;
		else
			bip143 = true;
	}
	if (bip143 || bip341) {
		sha_prevouts(tx, pre->sha_prevouts);
		sha_sequences(tx, pre->sha_sequences);
		sha_outputs(tx, pre->sha_outputs);
	}
	if (bip143) {
		proto_sha256(pre->sha_prevouts, 32, pre->hash_prevouts);
		proto_sha256(pre->sha_sequences, 32, pre->hash_sequence);
		proto_sha256(pre->sha_outputs, 32, pre->hash_outputs);
		pre->bip143_ready = true;
	}
	if (bip341 && spent) {
		struct proto_sha256 ha, hs;
		proto_sha256_init(&ha);
		proto_sha256_init(&hs);
		for (uint32_t i = 0; i < tx->n_in; i++) {
			h_u64(&ha, (uint64_t)spent[i].amount);
			h_compact(&hs, spent[i].script_len);
			proto_sha256_update(&hs, spent[i].script, spent[i].script_len);
		}
		proto_sha256_final(&ha, pre->sha_amounts);
		proto_sha256_final(&hs, pre->sha_scriptpubkeys);
		pre->bip341_ready = true;
	}
}

/* ---- legacy ------------------------------------------------------------ */

/*
 * The scriptCode with every OP_CODESEPARATOR cut out (Core's
 * SerializeScriptCode). The declared length is the script's minus one per
 * separator; the bytes written stop where the op reader stopped, which on a
 * truncated final push is short of the end. Core hashes exactly that, and
 * so must we.
 */
static void h_script_code(struct proto_sha256 *h, const uint8_t *code, size_t len)
{
	const uint8_t *end = span_end(code, len), *it = code, *from = code;
	uint8_t op;
	size_t seps = 0;
	while (script_get_op(&it, end, &op, NULL, NULL)) {
		if (op == SCRIPT_OP_CODESEPARATOR)
			seps++;
	}
	h_compact(h, len - seps);
	it = code;
	while (script_get_op(&it, end, &op, NULL, NULL)) {
		if (op == SCRIPT_OP_CODESEPARATOR) {
			proto_sha256_update(h, from, (size_t)(it - from - 1));
			from = it;
		}
	}
	if (from != end)
		proto_sha256_update(h, from, (size_t)(it - from));
}

void script_sighash_legacy(const struct proto_tx *tx, uint32_t in, const uint8_t *script_code,
                           size_t code_len, uint32_t hash_type, uint8_t out[32])
{
	const bool anyone = (hash_type & SCRIPT_SIGHASH_ANYONECANPAY) != 0;
	const uint32_t base = hash_type & 0x1f;
	const bool single = base == SCRIPT_SIGHASH_SINGLE, none = base == SCRIPT_SIGHASH_NONE;
	struct proto_sha256 h;

	/* SIGHASH_SINGLE with no output at this index signs the number 1:
	 * a historical bug, kept because it is consensus. */
	if (in >= tx->n_in || (single && in >= tx->n_out)) {
		memset(out, 0, 32);
		out[0] = 1;
		return;
	}

	proto_sha256_init(&h);
	h_u32(&h, (uint32_t)tx->version);
	uint32_t n_in = anyone ? 1 : tx->n_in;
	h_compact(&h, n_in);
	for (uint32_t k = 0; k < n_in; k++) {
		uint32_t i = anyone ? in : k;
		h_outpoint(&h, &tx->vin[i].prevout);
		if (i != in)
			h_compact(&h, 0); /* other inputs' scripts blanked */
		else
			h_script_code(&h, script_code, code_len);
		if (i != in && (single || none))
			h_u32(&h, 0); /* others may update their sequence */
		else
			h_u32(&h, tx->vin[i].sequence);
	}
	uint32_t n_out = none ? 0 : single ? in + 1 : tx->n_out;
	h_compact(&h, n_out);
	for (uint32_t o = 0; o < n_out; o++) {
		if (single && o != in) {
			/* a null output: value -1, empty script */
			h_u64(&h, UINT64_MAX);
			h_compact(&h, 0);
		} else {
			h_txout(&h, tx, &tx->vout[o]);
		}
	}
	h_u32(&h, tx->locktime);
	h_u32(&h, hash_type);
	proto_sha256d_final(&h, out);
}

/* ---- BIP143 ------------------------------------------------------------ */

void script_sighash_v0(const struct proto_tx *tx, uint32_t in, const uint8_t *script_code,
                       size_t code_len, int64_t amount, uint32_t hash_type,
                       const struct script_precomputed *pre, uint8_t out[32])
{
	uint8_t prevouts[32] = {0}, sequence[32] = {0}, outputs[32] = {0}, tmp[32];
	const bool ready = pre && pre->bip143_ready;
	const bool anyone = (hash_type & SCRIPT_SIGHASH_ANYONECANPAY) != 0;
	const uint32_t base = hash_type & 0x1f;
	struct proto_sha256 h;

	if (in >= tx->n_in) {
		memset(out, 0, 32);
		out[0] = 1;
		return;
	}
	if (!anyone) {
		if (ready) {
			memcpy(prevouts, pre->hash_prevouts, 32);
		} else {
			sha_prevouts(tx, tmp);
			proto_sha256(tmp, 32, prevouts);
		}
	}
	if (!anyone && base != SCRIPT_SIGHASH_SINGLE && base != SCRIPT_SIGHASH_NONE) {
		if (ready) {
			memcpy(sequence, pre->hash_sequence, 32);
		} else {
			sha_sequences(tx, tmp);
			proto_sha256(tmp, 32, sequence);
		}
	}
	if (base != SCRIPT_SIGHASH_SINGLE && base != SCRIPT_SIGHASH_NONE) {
		if (ready) {
			memcpy(outputs, pre->hash_outputs, 32);
		} else {
			sha_outputs(tx, tmp);
			proto_sha256(tmp, 32, outputs);
		}
	} else if (base == SCRIPT_SIGHASH_SINGLE && in < tx->n_out) {
		proto_sha256_init(&h);
		h_txout(&h, tx, &tx->vout[in]);
		proto_sha256d_final(&h, outputs);
	}

	proto_sha256_init(&h);
	h_u32(&h, (uint32_t)tx->version);
	proto_sha256_update(&h, prevouts, 32);
	proto_sha256_update(&h, sequence, 32);
	h_outpoint(&h, &tx->vin[in].prevout);
	h_compact(&h, code_len);
	proto_sha256_update(&h, script_code, code_len);
	h_u64(&h, (uint64_t)amount);
	h_u32(&h, tx->vin[in].sequence);
	proto_sha256_update(&h, outputs, 32);
	h_u32(&h, tx->locktime);
	h_u32(&h, hash_type);
	proto_sha256d_final(&h, out);
}

/* ---- BIP341/342 -------------------------------------------------------- */

/* Where a taproot SigMsg goes: into a hash, or (for tests) into a writer. */
struct sink {
	struct proto_sha256 *h;
	struct proto_writer *w;
};

static void put(struct sink *s, const void *p, size_t n)
{
	if (s->h)
		proto_sha256_update(s->h, p, n);
	else
		proto_write_bytes(s->w, p, n);
}

static void put_u8(struct sink *s, uint8_t v)
{
	put(s, &v, 1);
}

static void put_u32(struct sink *s, uint32_t v)
{
	uint8_t b[4];
	proto_put_le32(b, v);
	put(s, b, 4);
}

static void put_u64(struct sink *s, uint64_t v)
{
	uint8_t b[8];
	proto_put_le64(b, v);
	put(s, b, 8);
}

static void put_compact(struct sink *s, uint64_t v)
{
	uint8_t b[PROTO_COMPACT_MAX];
	put(s, b, proto_compact_encode(b, v));
}

static int tap_msg(struct sink *s, const struct proto_tx *tx, uint32_t in, uint8_t hash_type,
                   const struct script_precomputed *pre, const struct script_spent_output *spent_in,
                   const struct script_tap_exec *ex)
{
	const uint8_t output_type =
	    hash_type == SCRIPT_SIGHASH_DEFAULT ? SCRIPT_SIGHASH_ALL : (hash_type & 3);
	const bool anyone = (hash_type & SCRIPT_SIGHASH_ANYONECANPAY) != 0;

	if (in >= tx->n_in)
		return -SCRIPT_ERR_BAD_ARGUMENT;
	if (!pre || !pre->bip341_ready)
		return -SCRIPT_ERR_MISSING_DATA;
	if (!(hash_type <= 0x03 || (hash_type >= 0x81 && hash_type <= 0x83)))
		return -SCRIPT_ERR_SCHNORR_SIG_HASHTYPE;
	/* Core fails this later, after hashing; nothing observable differs. */
	if (output_type == SCRIPT_SIGHASH_SINGLE && in >= tx->n_out)
		return -SCRIPT_ERR_SCHNORR_SIG_HASHTYPE;

	put_u8(s, 0); /* epoch */
	put_u8(s, hash_type);
	put_u32(s, (uint32_t)tx->version);
	put_u32(s, tx->locktime);
	if (!anyone) {
		put(s, pre->sha_prevouts, 32);
		put(s, pre->sha_amounts, 32);
		put(s, pre->sha_scriptpubkeys, 32);
		put(s, pre->sha_sequences, 32);
	}
	if (output_type == SCRIPT_SIGHASH_ALL)
		put(s, pre->sha_outputs, 32);

	/* spend_type: ext_flag * 2 + annex_present */
	put_u8(s, (uint8_t)((ex->tapscript ? 2 : 0) + (ex->annex_present ? 1 : 0)));
	if (anyone) {
		const struct proto_outpoint *o = &tx->vin[in].prevout;
		put(s, o->txid.b, 32);
		put_u32(s, o->n);
		put_u64(s, (uint64_t)spent_in->amount);
		put_compact(s, spent_in->script_len);
		put(s, spent_in->script, spent_in->script_len);
		put_u32(s, tx->vin[in].sequence);
	} else {
		put_u32(s, in);
	}
	if (ex->annex_present)
		put(s, ex->annex_hash, 32);

	if (output_type == SCRIPT_SIGHASH_SINGLE) {
		struct proto_sha256 h;
		uint8_t single[32];
		proto_sha256_init(&h);
		h_txout(&h, tx, &tx->vout[in]);
		proto_sha256_final(&h, single);
		put(s, single, 32);
	}

	if (ex->tapscript) {
		put(s, ex->tapleaf_hash, 32);
		put_u8(s, 0); /* key_version 0: 32-byte keys */
		put_u32(s, ex->codesep_pos);
	}
	return 0;
}

int script_sighash_taproot(const struct proto_tx *tx, uint32_t in, uint8_t hash_type,
                           const struct script_precomputed *pre,
                           const struct script_spent_output *spent_in,
                           const struct script_tap_exec *ex, uint8_t out[32])
{
	struct proto_sha256 h;
	struct sink s = {&h, NULL};
	proto_sha256_init_tagged(&h, "TapSighash");
	int rc = tap_msg(&s, tx, in, hash_type, pre, spent_in, ex);
	if (rc)
		return rc;
	proto_sha256_final(&h, out);
	return 0;
}

int script_sighash_taproot_msg(const struct proto_tx *tx, uint32_t in, uint8_t hash_type,
                               const struct script_precomputed *pre,
                               const struct script_spent_output *spent_in,
                               const struct script_tap_exec *ex, struct proto_writer *w)
{
	struct sink s = {NULL, w};
	int rc = tap_msg(&s, tx, in, hash_type, pre, spent_in, ex);
	if (rc)
		return rc;
	return w->err ? -SCRIPT_ERR_NOMEM : 0;
}

/* ---- taproot tree ------------------------------------------------------ */

void script_tapleaf_hash(uint8_t leaf_version, const uint8_t *script, size_t len, uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init_tagged(&h, "TapLeaf");
	proto_sha256_update(&h, &leaf_version, 1);
	h_compact(&h, len);
	proto_sha256_update(&h, script, len);
	proto_sha256_final(&h, out);
}

void script_tapbranch_hash(const uint8_t a[32], const uint8_t b[32], uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init_tagged(&h, "TapBranch");
	if (memcmp(a, b, 32) < 0) {
		proto_sha256_update(&h, a, 32);
		proto_sha256_update(&h, b, 32);
	} else {
		proto_sha256_update(&h, b, 32);
		proto_sha256_update(&h, a, 32);
	}
	proto_sha256_final(&h, out);
}

void script_taproot_tweak(const uint8_t internal_key[32], const uint8_t *merkle_root,
                          uint8_t out[32])
{
	struct proto_sha256 h;
	proto_sha256_init_tagged(&h, "TapTweak");
	proto_sha256_update(&h, internal_key, 32);
	if (merkle_root)
		proto_sha256_update(&h, merkle_root, 32);
	proto_sha256_final(&h, out);
}
