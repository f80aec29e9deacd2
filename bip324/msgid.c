/*
 * bip324/msgid.c: BIP324's one-byte message ids, as Core 29 lists them
 * (net.cpp's V2_MESSAGE_IDS): 1-28 name the messages Core implements,
 * 29-32 are assigned by BIP324 to messages Core does not know, and 0
 * means the 12-byte type follows, as in v1's header. The transport sends
 * a known type by its short id and anything else in the long form.
 */
#include <string.h>

#include "bip324/bip324.h"

static const char *const IDS[BIP324_SHORTIDS] = {
    NULL,           "addr",        "block",        "blocktxn",  "cmpctblock",  "feefilter",
    "filteradd",    "filterclear", "filterload",   "getblocks", "getblocktxn", "getdata",
    "getheaders",   "headers",     "inv",          "mempool",   "merkleblock", "notfound",
    "ping",         "pong",        "sendcmpct",    "tx",        "getcfilters", "cfilter",
    "getcfheaders", "cfheaders",   "getcfcheckpt", "cfcheckpt", "addrv2",      NULL,
    NULL,           NULL,          NULL,
};

const char *bip324_msgid_name(uint8_t id)
{
	return id < BIP324_SHORTIDS ? IDS[id] : NULL;
}

uint8_t bip324_msgid_lookup(const char *type)
{
	for (uint8_t i = 1; i < BIP324_SHORTIDS; i++)
		if (IDS[i] && strcmp(IDS[i], type) == 0)
			return i;
	return 0;
}
