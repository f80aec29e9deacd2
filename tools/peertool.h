/**
 * tools/peertool.h: subcommands of peertool, the offline multitool.
 *
 * Each subcommand takes the arguments after its name (argv[0] is the
 * subcommand) and returns the process exit code: 0 success, 1 bad input or
 * a failed check, 2 usage error. Output goes to stdout, errors to stderr as
 * one line starting "peertool: ".
 */
#ifndef PEERD_PEERTOOL_H
#define PEERD_PEERTOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct proto_params;

int peertool_decode_tx(int argc, char **argv);
int peertool_decode_block(int argc, char **argv);
int peertool_decode_msg(int argc, char **argv);
int peertool_verify_tx(int argc, char **argv);
int peertool_verify_block(int argc, char **argv);
/** decode-tx's, decode-block's and decode-msg's full help: usage, input forms, examples, exit
 * codes. */
void peertool_decode_tx_help(FILE *f);
void peertool_decode_block_help(FILE *f);
void peertool_decode_msg_help(FILE *f);
/** verify-tx's and verify-block's full help: usage, options, examples, exit codes. */
void peertool_verify_tx_help(FILE *f);
void peertool_verify_block_help(FILE *f);
/** Core's address manager offline: peers.dat and scripted calls (tools/peertool_addrman.c). */
int peertool_addrman(int argc, char **argv);
/** addrman's full help: usage, script lines, output and exit codes. */
void peertool_addrman_help(FILE *f);
/** Write a deterministic signed regtest chain (tools/peertool_chaingen.c). */
int peertool_chaingen(int argc, char **argv);
/** chaingen's full help: usage, options, an example and exit codes. */
void peertool_chaingen_help(FILE *f);

/**
 * The network's directory in a bitcoind-style DATADIR (DATADIR itself for
 * main, else DATADIR/regtest, testnet3, ...: conf_net_subdir), created
 * with DATADIR when `create`, and locked as peerd locks it (an OFD write
 * lock on NETDIR/.lock), so a running peerd and a tool never share it.
 * Writes the path to out (cap bytes) and the lock's descriptor to *lock_fd
 * (the caller closes it: that releases the lock). 0, or -1 after printing
 * why not.
 */
int peertool_netdir(const char *cmd, const char *datadir, const struct proto_params *p, bool create,
                    char *out, size_t cap, int *lock_fd);

/** Core's bitcoin-util grind: a header's nonce found for its bits (tools/peertool_grind.c). */
int peertool_grind(int argc, char **argv);
/** grind's full help. */
void peertool_grind_help(FILE *f);

/** Validate block-file records into a chain on disk (tools/peertool_connect.c). */
int peertool_connect_blocks(int argc, char **argv);
/** connect-blocks' full help: usage, options, an example and exit codes. */
void peertool_connect_help(FILE *f);

/**
 * Read an input argument whole: "-" is stdin, else a file, else (when no
 * such file exists and the argument is hex) the argument itself as hex.
 * Contents that are all hex digits and whitespace are decoded as hex; with
 * `hex` they must be. Returns a new xmalloc'd buffer or NULL after printing
 * an error.
 */
uint8_t *peertool_read_input(const char *cmd, const char *path, int hex, size_t *len);

struct base_opt_cmd;
/**
 * A --chain value in any case (main, test, testnet4, signet, regtest; also
 * Core's -chain names "testnet3"): *out set, 0; or 2 after a usage error
 * listing the names.
 */
int peertool_chain_arg(const struct base_opt_cmd *c, const char *val,
                       const struct proto_params **out);

/** Print "peertool: CMD: message" to stderr (printf-style). */
void peertool_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct proto_tx;
struct script_spent_output;

/**
 * Read a transaction or block from FILE ('-' for stdin), raw or hex
 * (detected as verify-tx does). A new xmalloc'd buffer, or NULL after
 * printing why.
 */
uint8_t *peertool_read_tx_or_block(const char *cmd, const char *path, size_t *len);
/**
 * The outputs tx's inputs spend, from a prevouts file in verify-tx's
 * format: *spent gets one per input (n_in), their scripts in *arena; the
 * caller xfrees both. 0, or 1 after printing why (a missing prevout, a
 * bad line).
 */
int peertool_prevouts_for_tx(const char *cmd, const char *path, const struct proto_tx *tx,
                             struct script_spent_output **spent, uint8_t **arena);

/** Core's standardness rules on one transaction (tools/peertool_policy.c). */
int peertool_check_standard(int argc, char **argv);
/** check-standard's full help: usage, what is checked, output, exit codes. */
void peertool_check_standard_help(FILE *f);

#endif
