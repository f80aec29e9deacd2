/* chain/errors.c: chain_err descriptions and verdict recording. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chain/chain.h"

static const char *const ERR_TEXT[] = {
    [0] = "success",
    [-CHAIN_ENOMEM] = "out of memory",
    [-CHAIN_ENOTFOUND] = "not found",
    [-CHAIN_EINVALID] = "invalid block, header or transaction",
    [-CHAIN_EIO] = "input/output error",
    [-CHAIN_ECORRUPT] = "corrupt data on disk",
    [-CHAIN_EDB] = "database error",
    [-CHAIN_EEXIST] = "already exists",
    [-CHAIN_EOVERFLOW] = "size or count over its limit",
    [-CHAIN_ELOCKED] = "data directory in use by another process",
    [-CHAIN_EARG] = "argument out of range",
    [-CHAIN_ENOSPC] = "Disk space is too low!",
};

const char *chain_strerror(int err)
{
	if (err > 0 || err < CHAIN_ERR__MIN || !ERR_TEXT[-err])
		return "unknown chain error";
	return ERR_TEXT[-err];
}

int chain_reject(struct chain_state *st, enum chain_result result, const char *reason,
                 const char *fmt, ...)
{
	if (!st)
		return CHAIN_EINVALID;
	st->result = result;
	snprintf(st->reason, sizeof(st->reason), "%s", reason);
	st->debug[0] = '\0';
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(st->debug, sizeof(st->debug), fmt, ap);
		va_end(ap);
	}
	return CHAIN_EINVALID;
}

void chain_state_clear(struct chain_state *st)
{
	memset(st, 0, sizeof(*st));
}
