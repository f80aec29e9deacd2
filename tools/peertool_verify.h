/**
 * tools/peertool_verify.h: what verify-tx (tools/peertool_verify.c),
 * verify-block (tools/peertool_verify_block.c) and the prevouts file
 * (tools/peertool_prevouts.c) share: the parsed options, the map of spent
 * outputs, and the pieces of the JSON report. Internal to peertool; one
 * thread (peertool's main), except where a comment says otherwise.
 */
#ifndef PEERD_PEERTOOL_VERIFY_H
#define PEERD_PEERTOOL_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/proto.h"
#include "script/script.h"

/** verify-tx's and verify-block's options, as peertool_verify_parse_args leaves them. */

struct verify_args {
	const char *prevouts;
	const char *input;
	uint32_t flags;
	bool flags_given; /* --flags: used as is, whatever the height */
	int par;          /* threads in all; 0 = one per core */
	const struct proto_params *chain;
	int64_t height;   /* --height, or -1 */
	const char *utxo; /* --utxo DATADIR: parent, contextual checks and ConnectBlock from it */
	bool no_pow;      /* --no-pow: CheckBlock without the proof of work (Core's fCheckPOW) */
};

/* ---- spent outputs (tools/peertool_prevouts.c) --------------------------- */

/** One spent output, by the outpoint that names it. */
struct prev_entry {
	struct proto_outpoint op;
	struct script_spent_output out;
	size_t script_off; /* into the arena, until the arena stops moving */
	bool used;
};

/** Spent outputs by outpoint: open addressing, scripts in one arena. */
struct prevmap {
	struct prev_entry *v; /* open addressing, cap a power of two */
	size_t cap, n;
	uint8_t *arena; /* scripts from the file */
	size_t arena_len, arena_cap;
};

/** An empty map with room for about `expect` entries; 0, or -1 out of memory. */
int peertool_prevmap_init(struct prevmap *m, size_t expect);
/** Free the map and its arena (safe on a zeroed one); m is zeroed. */
void peertool_prevmap_release(struct prevmap *m);
/** Insert or replace e (copied); 0, or -1 when out of memory. */
int peertool_prevmap_put(struct prevmap *m, const struct prev_entry *e);
/** The entry for outpoint o (the map's), or NULL. */
const struct prev_entry *peertool_prevmap_get(const struct prevmap *m,
                                              const struct proto_outpoint *o);
/**
 * Copy n script bytes into the arena; *off gets where they start. The
 * arena may move: entries point into it only after
 * peertool_prevmap_fix_scripts. 0, or -1 out of memory.
 */
int peertool_prevmap_append_script(struct prevmap *m, const uint8_t *p, size_t n, size_t *off);
/** Point every entry's script into the arena, now that it no longer moves. */
void peertool_prevmap_fix_scripts(struct prevmap *m);
/**
 * Read the prevouts file at path ('-': stdin) into m (initialised here;
 * the caller releases it even on failure). 0, or -1 after printing why
 * (file and line) under cmd's name.
 */
int peertool_prevouts_load(const char *cmd, const char *path, struct prevmap *m);

/* ---- options and report (tools/peertool_verify.c) ------------------------- */

/**
 * Parse verify-tx's (block false) or verify-block's options into *a:
 * 0, BASE_OPT_HELP after printing the help, or 2 after a usage error.
 * a's strings are argv's.
 */
int peertool_verify_parse_args(int argc, char **argv, bool block, struct verify_args *a);
/** Monotonic milliseconds, for the report's "ms". */
double peertool_verify_now_ms(void);
/**
 * One input's report entry: "valid", or the error name and its
 * description (reject: the transaction's CheckTransaction reason, or
 * NULL). spent may be NULL. A new reference.
 */
json_t *peertool_verify_input_json(const struct proto_tx *tx, uint32_t i,
                                   const struct script_spent_output *spent, int err,
                                   const char *reject);
/** The report's "summary" object (a new reference). */
json_t *peertool_verify_summary_json(size_t txs, size_t inputs, size_t valid, double ms);
/** flags by Core's names, comma-separated (a new reference). */
json_t *peertool_verify_flags_json(uint32_t flags);
/** Print root (taken) on stdout; 0, or 1 after printing why not. */
int peertool_verify_print(const char *cmd, json_t *root);

#endif
