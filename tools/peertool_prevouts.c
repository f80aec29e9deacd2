/*
 * tools/peertool_prevouts.c: the spent outputs verify-tx, verify-block
 * and check-standard check against: a map from outpoint to output, filled
 * from a prevouts file (one `TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX` a
 * line, txid in display order, blank lines and # comments allowed) or,
 * for verify-block, from the block's own earlier outputs and a chain's
 * UTXO set. Every line is checked before use: a bad one is named with its
 * file and line number.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/peertool.h"
#include "tools/peertool_verify.h"

/** Longest prevouts line (a 10,000-byte script in hex plus the rest). */
#define VERIFY_MAX_LINE (2u * SCRIPT_MAX_SIZE + 256u)

/* ---- spent outputs: the prevouts file and, for blocks, earlier outputs --- */

static uint64_t op_hash(const struct proto_outpoint *o)
{
	/* txids are hashes already: mixing in n is enough */
	return proto_le64(o->txid.b) ^ ((uint64_t)o->n * 0x9e3779b97f4a7c15ull);
}

int peertool_prevmap_init(struct prevmap *m, size_t expect)
{
	size_t cap = 16;
	while (cap < 2 * expect + 16)
		cap *= 2;
	memset(m, 0, sizeof(*m));
	m->v = xcalloc(cap, sizeof(*m->v));
	if (!m->v)
		return -1;
	m->cap = cap;
	return 0;
}

void peertool_prevmap_release(struct prevmap *m)
{
	xfree(m->v);
	xfree(m->arena);
	memset(m, 0, sizeof(*m));
}

static struct prev_entry *map_slot(const struct prevmap *m, const struct proto_outpoint *o)
{
	size_t i = (size_t)op_hash(o) & (m->cap - 1);
	while (m->v[i].used) {
		if (m->v[i].op.n == o->n && proto_hash_eq(&m->v[i].op.txid, &o->txid))
			return &m->v[i];
		i = (i + 1) & (m->cap - 1);
	}
	return &m->v[i];
}

static int map_grow(struct prevmap *m)
{
	struct prevmap bigger = *m;
	bigger.cap = m->cap * 2;
	bigger.v = xcalloc(bigger.cap, sizeof(*bigger.v));
	if (!bigger.v)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->v[i].used)
			*map_slot(&bigger, &m->v[i].op) = m->v[i];
	}
	xfree(m->v);
	m->v = bigger.v;
	m->cap = bigger.cap;
	return 0;
}

/* Insert or replace; 0, or -1 when out of memory. */
int peertool_prevmap_put(struct prevmap *m, const struct prev_entry *e)
{
	if (2 * (m->n + 1) > m->cap && map_grow(m))
		return -1;
	struct prev_entry *s = map_slot(m, &e->op);
	if (!s->used)
		m->n++;
	*s = *e;
	s->used = true;
	return 0;
}

const struct prev_entry *peertool_prevmap_get(const struct prevmap *m,
                                              const struct proto_outpoint *o)
{
	const struct prev_entry *s = map_slot(m, o);
	return s->used ? s : NULL;
}

int peertool_prevmap_append_script(struct prevmap *m, const uint8_t *p, size_t n, size_t *off)
{
	/* An empty script needs no room, and the arena may not exist yet:
	 * memcpy from or to NULL is undefined even for 0 bytes. */
	*off = m->arena_len;
	if (n == 0)
		return 0;
	if (m->arena_cap - m->arena_len < n) {
		size_t cap = m->arena_cap ? m->arena_cap : 4096;
		while (cap - m->arena_len < n)
			cap *= 2;
		uint8_t *a = xrealloc(m->arena, cap);
		if (!a)
			return -1;
		m->arena = a;
		m->arena_cap = cap;
	}
	memcpy(m->arena + m->arena_len, p, n);
	*off = m->arena_len;
	m->arena_len += n;
	return 0;
}

/* One "TXID:VOUT AMOUNT SCRIPTHEX" line; 0 or -1 after printing why. */
static int parse_prevout_line(const char *cmd, const char *path, unsigned lineno, char *line,
                              struct prevmap *m, uint8_t *scratch)
{
	char *save = NULL;
	char *op = strtok_r(line, " \t", &save);
	char *amount = strtok_r(NULL, " \t", &save);
	char *script = strtok_r(NULL, " \t", &save);
	char *extra = strtok_r(NULL, " \t", &save);
	struct prev_entry e = {0};
	char *colon, *end;

	if (!op || !amount || extra) {
		peertool_error(cmd, "%s line %u: expected TXID:VOUT AMOUNT_SATS SCRIPTPUBKEY_HEX",
		               path, lineno);
		return -1;
	}
	colon = strchr(op, ':');
	if (!colon || colon - op != 64) {
		peertool_error(cmd, "%s line %u: bad outpoint '%s' (want 64 hex digits:VOUT)", path,
		               lineno, op);
		return -1;
	}
	*colon = 0;
	if (proto_hash_from_hex(op, &e.op.txid)) {
		peertool_error(cmd, "%s line %u: bad txid '%s'", path, lineno, op);
		return -1;
	}
	errno = 0;
	unsigned long long vout = strtoull(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || vout > UINT32_MAX) {
		peertool_error(cmd, "%s line %u: bad output index '%s'", path, lineno, colon + 1);
		return -1;
	}
	e.op.n = (uint32_t)vout;
	errno = 0;
	long long sats = strtoll(amount, &end, 10);
	if (!isdigit((unsigned char)amount[0]) || *end || errno || sats > PROTO_MAX_MONEY) {
		peertool_error(cmd, "%s line %u: bad amount '%s' (satoshis, 0..%lld)", path, lineno,
		               amount, (long long)PROTO_MAX_MONEY);
		return -1;
	}
	e.out.amount = sats;
	size_t slen = 0;
	if (script && proto_hex_decode(script, strlen(script), scratch, VERIFY_MAX_LINE, &slen)) {
		peertool_error(cmd, "%s line %u: bad scriptPubKey hex", path, lineno);
		return -1;
	}
	e.out.script_len = (uint32_t)slen;
	if (peertool_prevmap_append_script(m, scratch, slen, &e.script_off) ||
	    peertool_prevmap_put(m, &e)) {
		peertool_error(cmd, "out of memory");
		return -1;
	}
	return 0;
}

/* Point every entry's script into the arena, now that it no longer moves. */
void peertool_prevmap_fix_scripts(struct prevmap *m)
{
	static const uint8_t empty[1];
	for (size_t i = 0; i < m->cap; i++) {
		if (m->v[i].used && !m->v[i].out.script)
			m->v[i].out.script = m->arena ? m->arena + m->v[i].script_off : empty;
	}
}

int peertool_prevouts_load(const char *cmd, const char *path, struct prevmap *m)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	uint8_t *scratch = NULL;
	unsigned lineno = 0;
	int rc = -1;
	if (!f) {
		peertool_error(cmd, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	line = xmalloc(VERIFY_MAX_LINE + 2);
	scratch = xmalloc(VERIFY_MAX_LINE);
	if (!line || !scratch || peertool_prevmap_init(m, 64)) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	while (fgets(line, VERIFY_MAX_LINE + 2, f)) {
		size_t len = strlen(line);
		lineno++;
		if (len > VERIFY_MAX_LINE) {
			peertool_error(cmd, "%s line %u: line too long", path, lineno);
			goto out;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == 0 || *p == '#')
			continue;
		if (parse_prevout_line(cmd, path, lineno, p, m, scratch))
			goto out;
	}
	if (ferror(f)) {
		peertool_error(cmd, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	peertool_prevmap_fix_scripts(m);
	rc = 0;
out:
	if (f != stdin)
		fclose(f);
	xfree(line);
	xfree(scratch);
	return rc;
}

/* ---- shared with check-standard (tools/peertool_policy.c) ------------------ */

uint8_t *peertool_read_tx_or_block(const char *cmd, const char *path, size_t *len)
{
	return peertool_read_input(cmd, path, 0, len);
}

int peertool_prevouts_for_tx(const char *cmd, const char *path, const struct proto_tx *tx,
                             struct script_spent_output **spent, uint8_t **arena)
{
	struct prevmap m = {0};
	size_t total = 0, off = 0;
	int rc = 1;
	*spent = NULL;
	*arena = NULL;
	if (peertool_prevouts_load(cmd, path, &m))
		goto out;
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct prev_entry *e = peertool_prevmap_get(&m, &tx->vin[i].prevout);
		if (!e) {
			char hex[65];
			proto_hash_to_hex(&tx->vin[i].prevout.txid, hex);
			peertool_error(cmd, "missing prevout %s:%" PRIu32 " (input %" PRIu32 ")",
			               hex, tx->vin[i].prevout.n, i);
			goto out;
		}
		total += e->out.script_len;
	}
	/* The scripts move to one buffer of the caller's: the map goes now. */
	*spent = xcalloc(tx->n_in ? tx->n_in : 1, sizeof(**spent));
	*arena = xmalloc(total ? total : 1);
	if (!*spent || !*arena) {
		peertool_error(cmd, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < tx->n_in; i++) {
		const struct prev_entry *e = peertool_prevmap_get(&m, &tx->vin[i].prevout);
		(*spent)[i] = e->out;
		if (e->out.script_len)
			memcpy(*arena + off, e->out.script, e->out.script_len);
		(*spent)[i].script = *arena + off;
		off += e->out.script_len;
	}
	rc = 0;
out:
	if (rc) {
		xfree(*spent);
		xfree(*arena);
		*spent = NULL;
		*arena = NULL;
	}
	peertool_prevmap_release(&m);
	return rc;
}
