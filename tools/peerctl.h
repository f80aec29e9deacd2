/**
 * tools/peerctl.h: the parts of peerctl, peerd's bitcoin-cli: transport and
 * options (tools/peerctl.c), printing and the -getinfo/-netinfo screens
 * (tools/peerctl_show.c). Single-threaded; everything is the process's.
 */
#ifndef PEERD_PEERCTL_H
#define PEERD_PEERCTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** Where and how to reach peerd. */
struct peerctl {
	const char *socket; /**< the control socket's path */
	int timeout_s;      /**< -rpcclienttimeout: reply deadline, 0 none */
	bool wait;          /**< -rpcwait: retry until the socket answers */
	int wait_timeout_s; /**< -rpcwaittimeout: give up waiting after it, 0 never */
};

/**
 * Send one request and read its reply. 0 with *reply (the parsed object,
 * the caller's reference) and *raw (its text, xmalloc'd, NUL-terminated;
 * may be NULL), or 1 after a message on stderr (a transport error: no
 * socket, timeout, not JSON-RPC).
 */
int peerctl_request(const struct peerctl *pc, const char *method, json_t *params, json_t **reply,
                    char **raw);

/**
 * A method's result: 0 with *result (a new reference), or the exit code
 * after printing the error as bitcoin-cli does (1 transport, else the
 * absolute value of the error code).
 */
int peerctl_result(const struct peerctl *pc, const char *method, json_t **result);

/**
 * Print an error reply as bitcoin-cli does ("error code: N", "error
 * message:", the text) and return its exit code: the code's absolute value.
 */
int peerctl_print_error(const json_t *error);

/**
 * Print a reply's result as bitcoin-cli does: a string as it is, null as
 * nothing, anything else as indented JSON whose numbers are written as
 * peerd sent them (raw is the reply's text; numbers are not re-rounded).
 * Returns the exit code.
 */
int peerctl_print_result(const json_t *reply, const char *raw);

/** -getinfo: one screen from getnetworkinfo, getblockchaininfo and getstats. */
int peerctl_getinfo(const struct peerctl *pc);
/** -netinfo [LEVEL]: peers by direction and network; with LEVEL > 0 one row per peer. */
int peerctl_netinfo(const struct peerctl *pc, int level);

#endif
