/*
 * conf/apply_areas.c: the winning values of each area's keys put into
 * struct peerd_conf, with Core's cross-key checks (mempool and relay
 * policy, networks and proxies, the RPC server, notifications, a custom
 * signet). conf/load.c resolves the settings and calls these from its
 * apply(); they read the settings only through its conf_scalar,
 * conf_fill_list and friends (conf/internal.h).
 */
#include <ctype.h>

#include "conf/internal.h"

#include <stdio.h>
#include <string.h>

int64_t conf_amount_or(const char *v, int64_t dflt)
{
	int64_t sat;
	return v && conf_parse_amount(v, &sat) == 0 ? sat : dflt;
}

/* Core's GetIntArg of a text: LocaleIndependentAtoi (an optional sign, the
 * leading digits; nothing readable is 0; out of range saturates). */
static int64_t core_atoi(const char *v)
{
	const char *p = v;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		return 0;
	int64_t n = 0;
	for (; isdigit((unsigned char)*p); p++) {
		int d = *p - '0';
		if (n > (INT64_MAX - d) / 10)
			return neg ? INT64_MIN : INT64_MAX;
		n = n * 10 + d;
	}
	return neg ? -n : n;
}

/* -prune and -fastprune with Core's checks, in Core's order: the
 * incompatibilities of AppInitParameterInteraction, then
 * blockmanager_args.cpp's value checks. */
static int apply_prune(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	const char *v = conf_scalar(L, CONF_K_PRUNE, lv, nl);
	int64_t mib = v ? core_atoi(v) : 0;
	c->fastprune = conf_uint_or(conf_scalar(L, CONF_K_FASTPRUNE, lv, nl), 0) != 0;
	c->prune_target = 0;
	if (!mib)
		return 0;
	if (c->txindex)
		return conf_fail(L, CONF_EVALUE, "Prune mode is incompatible with -txindex.");
	if (c->reindex_chainstate)
		return conf_fail(L, CONF_EVALUE,
		                 "Prune mode is incompatible with "
		                 "-reindex-chainstate. Use full -reindex instead.");
	if (mib < 0)
		return conf_fail(L, CONF_EVALUE,
		                 "Prune cannot be configured with a negative value.");
	if (mib == 1) {
		c->prune_target = CONF_PRUNE_MANUAL;
		return 0;
	}
	if (mib < CONF_PRUNE_MIN_MIB)
		return conf_fail(L, CONF_EVALUE,
		                 "Prune configured below the minimum of %d MiB.  Please use a "
		                 "higher number.",
		                 CONF_PRUNE_MIN_MIB);
	/* Core multiplies without a check; a target past 2^64 bytes is "keep all". */
	c->prune_target = (uint64_t)mib > (UINT64_MAX >> 20) ? UINT64_MAX - 1 : (uint64_t)mib << 20;
	return 0;
}

/* Mempool and relay policy keys, with Core's cross-key checks
 * (mempool_args.cpp): -acceptnonstdtxn only on a test chain, and a
 * -maxmempool that holds 40 times the descendant size limit. */
int conf_apply_mempool(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	const char *v;
	c->blocksonly = conf_uint_or(conf_scalar(L, CONF_K_BLOCKSONLY, lv, nl), 0) != 0;
	c->blockreconstructionextratxn = (uint32_t)conf_uint_or(
	    conf_scalar(L, CONF_K_BLOCKRECONSTRUCTIONEXTRATXN, lv, nl), CONF_DEFAULT_EXTRATXN);
	/* Core soft-sets -maxmempool=5 under -blocksonly: a node that takes no
	 * peer transactions needs little room; a given -maxmempool still wins. */
	c->maxmempool_mb = (size_t)conf_uint_or(conf_scalar(L, CONF_K_MAXMEMPOOL, lv, nl),
	                                        c->blocksonly ? CONF_BLOCKSONLY_MAXMEMPOOL_MB
	                                                      : CONF_DEFAULT_MAXMEMPOOL_MB);
	c->mempoolexpiry_h = (int64_t)conf_uint_or(conf_scalar(L, CONF_K_MEMPOOLEXPIRY, lv, nl),
	                                           CONF_DEFAULT_MEMPOOLEXPIRY_H);
	c->persistmempool = conf_uint_or(conf_scalar(L, CONF_K_PERSISTMEMPOOL, lv, nl), 1) != 0;
	c->minrelaytxfee = conf_amount_or(conf_scalar(L, CONF_K_MINRELAYTXFEE, lv, nl),
	                                  CONF_DEFAULT_MINRELAYTXFEE);
	c->incrementalrelayfee = conf_amount_or(conf_scalar(L, CONF_K_INCREMENTALRELAYFEE, lv, nl),
	                                        CONF_DEFAULT_INCREMENTALRELAYFEE);
	c->dustrelayfee =
	    conf_amount_or(conf_scalar(L, CONF_K_DUSTRELAYFEE, lv, nl), CONF_DEFAULT_DUSTRELAYFEE);
	c->permitbaremultisig =
	    conf_uint_or(conf_scalar(L, CONF_K_PERMITBAREMULTISIG, lv, nl), 1) != 0;
	c->datacarrier = conf_uint_or(conf_scalar(L, CONF_K_DATACARRIER, lv, nl), 1) != 0;
	c->datacarriersize = (uint32_t)conf_uint_or(conf_scalar(L, CONF_K_DATACARRIERSIZE, lv, nl),
	                                            CONF_DEFAULT_DATACARRIERSIZE);
	c->acceptnonstdtxn = -1;
	if ((v = conf_scalar(L, CONF_K_ACCEPTNONSTDTXN, lv, nl)))
		c->acceptnonstdtxn = strcmp(v, "1") == 0;
	c->bytespersigop = (uint32_t)conf_uint_or(conf_scalar(L, CONF_K_BYTESPERSIGOP, lv, nl),
	                                          CONF_DEFAULT_BYTESPERSIGOP);
	c->limitancestorcount = (uint32_t)conf_uint_or(
	    conf_scalar(L, CONF_K_LIMITANCESTORCOUNT, lv, nl), CONF_DEFAULT_LIMIT_COUNT);
	c->limitancestorsize = (uint32_t)conf_uint_or(
	    conf_scalar(L, CONF_K_LIMITANCESTORSIZE, lv, nl), CONF_DEFAULT_LIMIT_KVB);
	c->limitdescendantcount = (uint32_t)conf_uint_or(
	    conf_scalar(L, CONF_K_LIMITDESCENDANTCOUNT, lv, nl), CONF_DEFAULT_LIMIT_COUNT);
	c->limitdescendantsize = (uint32_t)conf_uint_or(
	    conf_scalar(L, CONF_K_LIMITDESCENDANTSIZE, lv, nl), CONF_DEFAULT_LIMIT_KVB);
	c->blockreservedweight = conf_uint_or(conf_scalar(L, CONF_K_BLOCKRESERVEDWEIGHT, lv, nl),
	                                      CONF_DEFAULT_BLOCKRESERVEDWEIGHT);
	c->blockmaxweight = conf_uint_or(conf_scalar(L, CONF_K_BLOCKMAXWEIGHT, lv, nl),
	                                 CONF_DEFAULT_BLOCKMAXWEIGHT);
	/* Core's ClampOptions: a block can always hold its reserved part. */
	if (c->blockmaxweight < c->blockreservedweight)
		c->blockmaxweight = c->blockreservedweight;
	c->blockmintxfee = conf_amount_or(conf_scalar(L, CONF_K_BLOCKMINTXFEE, lv, nl),
	                                  CONF_DEFAULT_BLOCKMINTXFEE);
	c->checkblocks = (int32_t)conf_uint_or(conf_scalar(L, CONF_K_CHECKBLOCKS, lv, nl),
	                                       CONF_DEFAULT_CHECKBLOCKS);
	c->checklevel =
	    (int)conf_uint_or(conf_scalar(L, CONF_K_CHECKLEVEL, lv, nl), CONF_DEFAULT_CHECKLEVEL);
	/* Core's VerifyDB clamps the level rather than refusing it. */
	if (c->checklevel > CONF_MAX_CHECKLEVEL)
		c->checklevel = CONF_MAX_CHECKLEVEL;
	c->blocksxor = conf_uint_or(conf_scalar(L, CONF_K_BLOCKSXOR, lv, nl), 1) != 0;
	c->reindex = conf_uint_or(conf_scalar(L, CONF_K_REINDEX, lv, nl), 0) != 0;
	c->reindex_chainstate =
	    conf_uint_or(conf_scalar(L, CONF_K_REINDEXCHAINSTATE, lv, nl), 0) != 0;
	c->txindex = conf_uint_or(conf_scalar(L, CONF_K_TXINDEX, lv, nl), 0) != 0;
	c->coinstatsindex = conf_uint_or(conf_scalar(L, CONF_K_COINSTATSINDEX, lv, nl), 0) != 0;
	int prc = apply_prune(L, c, lv, nl);
	if (prc)
		return prc;
	/* Core's -blockfilterindex: 0 (or none) off, 1 every type, else a type name. */
	const char *bf = conf_scalar(L, CONF_K_BLOCKFILTERINDEX, lv, nl);
	c->blockfilterindex = bf && strcmp(bf, "0") != 0;
	if (c->blockfilterindex && strcmp(bf, "1") != 0 && strcmp(bf, "basic") != 0)
		return conf_fail(L, CONF_EVALUE, "Unknown -blockfilterindex value %s.", bf);
	/* Core's init.cpp: serving BIP157 needs the basic filter index. */
	c->peerblockfilters = conf_uint_or(conf_scalar(L, CONF_K_PEERBLOCKFILTERS, lv, nl), 0) != 0;
	if (c->peerblockfilters && !c->blockfilterindex)
		return conf_fail(L, CONF_EVALUE,
		                 "Cannot set -peerblockfilters without -blockfilterindex.");
	c->acceptstalefeeestimates =
	    conf_uint_or(conf_scalar(L, CONF_K_ACCEPTSTALEFEEESTIMATES, lv, nl), 0) != 0;
	if (c->acceptstalefeeestimates && c->params->net != PROTO_NET_REGTEST)
		return conf_fail(L, CONF_EVALUE,
		                 "acceptstalefeeestimates is not supported on %s chain.",
		                 c->params->name);

	if (c->acceptnonstdtxn == 1 && c->params->net == PROTO_NET_MAIN)
		return conf_fail(L, CONF_EVALUE,
		                 "acceptnonstdtxn is not currently supported for main chain");
	/* Core: max_size_bytes < descendant_size_vbytes * 40 is refused, the
	 * message rounding the least size up to whole MB. */
	uint64_t least = (uint64_t)c->limitdescendantsize * 1000u * CONF_MAXMEMPOOL_DESCENDANT_MULT;
	if ((uint64_t)c->maxmempool_mb * 1000000u < least)
		return conf_fail(L, CONF_EVALUE, "-maxmempool must be at least %llu MB",
		                 (unsigned long long)((least + 999999u) / 1000000u));
	return 0;
}

/* -proxy, -onion, -onlynet, -externalip, ... as given (net/reach.c judges
 * them); -discover after Core's parameter interaction. */
int conf_apply_networks(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	const char *v;
	bool set;
	int rc;
	c->proxy_set = conf_proxy_given(L, lv, nl);
	if ((v = conf_scalar(L, CONF_K_PROXY, lv, nl)))
		snprintf(c->proxy, sizeof(c->proxy), "%s", v);
	if ((v = conf_scalar(L, CONF_K_ONION, lv, nl)))
		snprintf(c->onion, sizeof(c->onion), "%s", v);
	c->proxyrandomize = conf_uint_or(conf_scalar(L, CONF_K_PROXYRANDOMIZE, lv, nl), 1) != 0;
	c->cjdnsreachable = -1;
	if (conf_is_set(L, CONF_K_CJDNSREACHABLE, lv, nl))
		c->cjdnsreachable =
		    conf_uint_or(conf_scalar(L, CONF_K_CJDNSREACHABLE, lv, nl), 0) != 0;
	if ((rc = conf_fill_list(L, CONF_K_ONLYNET, lv, nl, &c->onlynet, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_EXTERNALIP, lv, nl, &c->externalip, &set)))
		return rc;
	/* Core's soft-sets: -proxy, -listen=0 and -externalip each turn
	 * discovery off unless -discover is given. */
	if ((v = conf_scalar(L, CONF_K_DISCOVER, lv, nl)))
		c->discover = strcmp(v, "1") == 0;
	else
		c->discover = !c->proxy_set && c->listen && c->externalip.n == 0;
	if ((v = conf_scalar(L, CONF_K_V2TRANSPORT, lv, nl)))
		c->v2transport = strcmp(v, "1") == 0;
	return 0;
}

/* Core's RPC options as given; rpcport and rpcbind are network-only as Core's. */
int conf_apply_rpc(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl, int nl_net)
{
	static const uint16_t ports[PROTO_NET__COUNT] = {8332, 18332, 48332, 38332, 18443};
	const char *v;
	bool set;
	int rc;
	c->server = conf_uint_or(conf_scalar(L, CONF_K_SERVER, lv, nl), 1) != 0;
	c->rest = conf_uint_or(conf_scalar(L, CONF_K_REST, lv, nl), 0) != 0;
	c->rpcport_set = (v = conf_scalar(L, CONF_K_RPCPORT, lv, nl_net)) != NULL;
	c->rpcport = (uint16_t)conf_uint_or(v, ports[c->params->net]);
	c->rpcthreads = (int)conf_uint_or(conf_scalar(L, CONF_K_RPCTHREADS, lv, nl), 16);
	c->rpcworkqueue = (int)conf_uint_or(conf_scalar(L, CONF_K_RPCWORKQUEUE, lv, nl), 64);
	c->rpcservertimeout_s =
	    (int)conf_uint_or(conf_scalar(L, CONF_K_RPCSERVERTIMEOUT, lv, nl), 30);
	/* -norpccookiefile: no cookie (Core's DISABLED). */
	if (conf_is_set(L, CONF_K_RPCCOOKIEFILE, lv, nl))
		snprintf(c->rpccookiefile, sizeof(c->rpccookiefile), "%s",
		         (v = conf_scalar(L, CONF_K_RPCCOOKIEFILE, lv, nl)) ? v : "0");
	if ((v = conf_scalar(L, CONF_K_RPCCOOKIEPERMS, lv, nl)))
		snprintf(c->rpccookieperms, sizeof(c->rpccookieperms), "%s", v);
	if ((v = conf_scalar(L, CONF_K_RPCUSER, lv, nl)))
		snprintf(c->rpcuser, sizeof(c->rpcuser), "%s", v);
	if ((v = conf_scalar(L, CONF_K_RPCPASSWORD, lv, nl)))
		snprintf(c->rpcpassword, sizeof(c->rpcpassword), "%s", v);
	if ((rc = conf_fill_list(L, CONF_K_RPCBIND, lv, nl_net, &c->rpcbind, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_RPCALLOWIP, lv, nl, &c->rpcallowip, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_RPCAUTH, lv, nl, &c->rpcauth, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_RPCWHITELIST, lv, nl, &c->rpcwhitelist, &set)))
		return rc;
	/* Core's GetBoolArg("-rpcwhitelistdefault", IsArgSet("-rpcwhitelist")). */
	c->rpcwhitelistdefault = conf_uint_or(conf_scalar(L, CONF_K_RPCWHITELISTDEFAULT, lv, nl),
	                                      c->rpcwhitelist.n ? 1 : 0) != 0;
	return 0;
}

/* The notifications as given (daemon/notify/ opens the sockets at start). */
int conf_apply_notify(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	const char *v;
	bool set;
	int rc;
	for (int i = 0; i < CONF_ZMQ__COUNT; i++) {
		if ((rc = conf_fill_list(L, (enum conf_key)(CONF_K_ZMQPUBHASHBLOCK + i), lv, nl,
		                         &c->zmqpub[i], &set)))
			return rc;
		c->zmqhwm[i] = (int)conf_uint_or(
		    conf_scalar(L, (enum conf_key)(CONF_K_ZMQPUBHASHBLOCKHWM + i), lv, nl), 1000);
	}
	if ((v = conf_scalar(L, CONF_K_BLOCKNOTIFY, lv, nl)))
		snprintf(c->blocknotify, sizeof(c->blocknotify), "%s", v);
	if ((v = conf_scalar(L, CONF_K_STARTUPNOTIFY, lv, nl)))
		snprintf(c->startupnotify, sizeof(c->startupnotify), "%s", v);
	if ((v = conf_scalar(L, CONF_K_ALERTNOTIFY, lv, nl)))
		snprintf(c->alertnotify, sizeof(c->alertnotify), "%s", v);
	return conf_fill_list(L, CONF_K_SHUTDOWNNOTIFY, lv, nl, &c->shutdownnotify, &set);
}

/*
 * -signetchallenge, as Core's ReadSigNetArgs: on signet only (elsewhere
 * it is ignored), one value, hex (checked with the key); the network is
 * then a signet of that challenge, with its own message start.
 */
int conf_apply_signet(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	bool set;
	int rc = conf_fill_list(L, CONF_K_SIGNETCHALLENGE, lv, nl, &c->signetchallenge, &set);
	if (rc || c->params->net != PROTO_NET_SIGNET || !c->signetchallenge.n)
		return rc;
	if (c->signetchallenge.n != 1)
		return conf_fail(L, CONF_EVALUE, "-signetchallenge cannot be multiple values.");
	const char *hex = c->signetchallenge.v[0];
	static uint8_t bytes[PROTO_MAX_SIGNET_CHALLENGE];
	size_t len = 0;
	if (proto_hex_decode(hex, strlen(hex), bytes, sizeof(bytes), &len))
		return conf_fail(L, CONF_EVALUE, "-signetchallenge must be hex, not '%s'.", hex);
	c->params = proto_params_signet_custom(bytes, len);
	if (!c->params)
		return conf_fail(L, CONF_EVALUE, "-signetchallenge must be hex, not '%s'.", hex);
	return 0;
}
