/* conf/names.c: the names the loader looks up: keys, [sections] and -debug categories. */
#include "conf/internal.h"

#include <stdio.h>
#include <string.h>

/* Section names are the network names bitcoind uses for them. */
static const struct {
	const char *name;
	enum proto_net net;
} sections[] = {
    {"main", PROTO_NET_MAIN},     {"test", PROTO_NET_TESTNET3},   {"testnet4", PROTO_NET_TESTNET4},
    {"signet", PROTO_NET_SIGNET}, {"regtest", PROTO_NET_REGTEST},
};

/* peerd's own category names (finer than Core's; still accepted). */
static const struct {
	const char *name;
	uint32_t bit;
} debug_cats[] = {
    {"net", CONF_DEBUG_NET},
    {"msg", CONF_DEBUG_MSG},
    {"ctl", CONF_DEBUG_CTL},
    {"conf", CONF_DEBUG_CONF},
    {"mempool", CONF_DEBUG_MEMPOOL},
    {"validation", CONF_DEBUG_VALIDATION},
    {"main", CONF_DEBUG_MAIN},
    {"handshake", CONF_DEBUG_HANDSHAKE},
    {"inv", CONF_DEBUG_INV},
    {"addr", CONF_DEBUG_ADDR},
    {"ban", CONF_DEBUG_BAN},
    {"bench", CONF_DEBUG_BENCH},
    {"mempoolrej", CONF_DEBUG_MEMPOOLREJ},
    {"all", CONF_DEBUG_ALL},
    {"1", CONF_DEBUG_ALL},
};

/*
 * Bitcoin Core 29's categories (bitcoind -regtest, `logging`, at 638a4c0bd8),
 * in its order, each with the peerd categories whose lines are of that kind.
 * Every peerd category belongs to at most one, so turning a Core category
 * off never silences another Core category's lines. Core's net covers
 * connections, each message, the version handshake, inventory and
 * misbehaviour; the rest have no peerd counterpart (peerd has no wallet,
 * Tor, ZMQ, ...) and are only remembered, so `logging` reports them back.
 */
static const struct {
	const char *name;
	uint32_t bits;
} core_cats[CONF_CORE_CATS] = {
    {"addrman", CONF_DEBUG_ADDR},
    {"bench", CONF_DEBUG_BENCH},
    {"blockstorage", 0},
    {"cmpctblock", 0},
    {"coindb", 0},
    {"estimatefee", 0},
    {"http", 0},
    {"i2p", 0},
    {"ipc", 0},
    {"leveldb", 0},
    {"libevent", 0},
    {"mempool", CONF_DEBUG_MEMPOOL},
    {"mempoolrej", CONF_DEBUG_MEMPOOLREJ},
    {"net",
     CONF_DEBUG_NET | CONF_DEBUG_MSG | CONF_DEBUG_HANDSHAKE | CONF_DEBUG_INV | CONF_DEBUG_BAN},
    {"proxy", 0},
    {"prune", 0},
    {"qt", 0},
    {"rand", 0},
    {"reindex", 0},
    {"rpc", CONF_DEBUG_CTL},
    {"scan", 0},
    {"selectcoins", 0},
    {"tor", 0},
    {"txpackages", 0},
    {"txreconciliation", 0},
    {"validation", CONF_DEBUG_VALIDATION},
    {"walletdb", 0},
    {"zmq", 0},
};

/* "addrman, bench, ...; peerd's own: ...": the names for -help. */
const char *conf_debug_names(void)
{
	static char text[640];
	if (!text[0]) {
		size_t n = 0;
		for (size_t i = 0; i < CONF_CORE_CATS; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? ", " : "",
			                      core_cats[i].name);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "; peerd's own, finer:");
		for (size_t i = 0; i < sizeof(debug_cats) / sizeof(debug_cats[0]); i++) {
			if (debug_cats[i].bit == CONF_DEBUG_ALL ||
			    conf_debug_core_index(debug_cats[i].name) >= 0)
				continue;
			n +=
			    (size_t)snprintf(text + n, sizeof(text) - n, " %s", debug_cats[i].name);
		}
	}
	return text;
}

int conf_debug_core_index(const char *name)
{
	for (int i = 0; i < CONF_CORE_CATS; i++) {
		if (strcmp(core_cats[i].name, name) == 0)
			return i;
	}
	return -1;
}

const char *conf_debug_core_name(int i)
{
	return i >= 0 && i < CONF_CORE_CATS ? core_cats[i].name : "?";
}

int conf_debug_apply(const char *name, bool on, uint32_t *mask, uint32_t *core)
{
	uint32_t bits, cbits = 0;
	int ci = conf_debug_core_index(name);
	if (!*name || !strcmp(name, "1") || !strcmp(name, "all")) {
		bits = CONF_DEBUG_ALL;
		cbits = CONF_CORE_ALL;
	} else if (ci >= 0) {
		bits = core_cats[ci].bits;
		cbits = 1u << ci;
	} else if (!(bits = conf_debug_category(name))) {
		return -1;
	}
	if (on) {
		*mask |= bits;
		*core |= cbits;
	} else {
		*mask &= ~bits;
		*core &= ~cbits;
	}
	return 0;
}

int conf_key_find(const char *name, size_t len)
{
	for (int k = 0; k < CONF_K__COUNT; k++) {
		if (strlen(conf_keys[k].name) == len && memcmp(conf_keys[k].name, name, len) == 0)
			return k;
	}
	return -1;
}

int conf_section_net(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (strlen(sections[i].name) == len && memcmp(sections[i].name, name, len) == 0)
			return (int)sections[i].net;
	}
	return -1;
}

uint32_t conf_debug_category(const char *cat)
{
	for (size_t i = 0; i < sizeof(debug_cats) / sizeof(debug_cats[0]); i++) {
		if (strcmp(debug_cats[i].name, cat) == 0)
			return debug_cats[i].bit;
	}
	return 0;
}

bool conf_debug_enabled(const struct peerd_conf *c, const char *cat)
{
	uint32_t bit = conf_debug_category(cat);
	return bit && (c->debug_mask & bit) == bit;
}
