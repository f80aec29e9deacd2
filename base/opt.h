/**
 * base/opt.h: the one command-line option parser of the tools (peertool's subcommands).
 *
 * Every option is spelled any of Core's and GNU's ways, all meaning the same:
 * `-key=value`, `--key=value`, `--key value` and `-key value`; a flag is
 * `-key` or `--key`. `-h`, `-help` and `--help` print the subcommand's help
 * (exit 0); `--` ends the options; `-` alone is an argument (stdin).
 * Options and arguments may come in any order. Usage errors print
 * "PROG: CMD: what is wrong" and the usage lines, and mean exit code 2.
 *
 * Glossary: a spec names an option (without dashes) and says whether it
 * takes a value; the command's set callback gives each value its meaning.
 */
#ifndef PEERD_BASE_OPT_H
#define PEERD_BASE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** base_opt_parse's answer when it printed the help: the caller exits 0. */
#define BASE_OPT_HELP 3
/** The exit code of a usage error. */
#define BASE_OPT_USAGE 2

/** One option a command accepts. */
struct base_opt_spec {
	const char *name; /**< without dashes: "prevouts" matches -prevouts and --prevouts */
	int id;           /**< handed to the set callback */
	bool value;       /**< takes a value (else a flag: giving it a value is an error) */
};

/** A command's option table, usage text and help. All static data. */
struct base_opt_cmd {
	const char *prog;  /**< "peertool" */
	const char *cmd;   /**< "verify-tx" */
	const char *usage; /**< printed after a usage error, e.g. "usage: peertool ..." */
	const struct base_opt_spec *opts;
	size_t n_opts;
	void (*help)(FILE *out); /**< full help for -h/--help/-help */
};

/**
 * Called for each option in command-line order with its spec's id and its
 * value (NULL for a flag). Returns 0, or BASE_OPT_USAGE after base_opt_usage_error.
 */
typedef int (*base_opt_set_fn)(void *ctx, int id, const char *val);

/**
 * Parse argv[1..argc) (argv[0] is the command). Arguments that are not
 * options go to pos[0..*n_pos) in order (pointers into argv); more than
 * max_pos is a usage error. Returns 0, BASE_OPT_HELP after printing the help on
 * stdout, or BASE_OPT_USAGE after printing a usage error on stderr.
 */
int base_opt_parse(const struct base_opt_cmd *c, int argc, char **argv, base_opt_set_fn set,
                   void *ctx, const char **pos, size_t max_pos, size_t *n_pos);

/** Print "PROG: CMD: <message>" and the usage to stderr; returns BASE_OPT_USAGE. */
int base_opt_usage_error(const struct base_opt_cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * A decimal integer in [lo, hi] (no sign, no spaces). 0, or BASE_OPT_USAGE after
 * naming the option, the range and the value.
 */
int base_opt_uint(const struct base_opt_cmd *c, const char *name, const char *val, uint64_t lo,
                  uint64_t hi, uint64_t *out);

/** True for -h, -help and --help. */
bool base_opt_is_help(const char *arg);

#endif
