/*
 * conf/defaults.c: a configuration's built-in values (conf_defaults), the
 * network's directory name, the datadir check, and freeing what conf_load
 * allocated (conf_release). Kept apart from load.c, which reads and
 * applies the settings, so each stays one job.
 */
#include "conf/internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *conf_net_subdir(enum proto_net net)
{
	switch (net) {
	case PROTO_NET_TESTNET3:
		return "testnet3";
	case PROTO_NET_TESTNET4:
		return "testnet4";
	case PROTO_NET_SIGNET:
		return "signet";
	case PROTO_NET_REGTEST:
		return "regtest";
	default:
		return "";
	}
}

int conf_check_datadir(const struct peerd_conf *c, char *err, size_t errlen)
{
	struct stat st;
	if (!c->datadir_set || (stat(c->datadir, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	if (errlen)
		snprintf(err, errlen, "Specified data directory \"%s\" does not exist.",
		         c->datadir);
	return CONF_EVALUE;
}

void conf_defaults(struct peerd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->params = proto_params(PROTO_NET_MAIN);
	c->listen = true;
	c->port = c->params ? c->params->default_port : 8333;
	c->maxconnections = CONF_DEFAULT_MAXCONNECTIONS;
	c->par = 0;
	c->dbcache_mib = CONF_DEFAULT_DBCACHE_MIB;
	c->maxreceivebuffer_kb = CONF_DEFAULT_MAXRECEIVEBUFFER_KB;
	c->maxsendbuffer_kb = CONF_DEFAULT_MAXSENDBUFFER_KB;
	c->peertimeout_s = CONF_DEFAULT_PEERTIMEOUT_S;
	c->maxtipage_s = CONF_DEFAULT_MAXTIPAGE_S;
	c->logtimestamps = true;
	c->binaryfreelist = CONF_DEFAULT_BINARYFREELIST;
	c->scriptfreelist = CONF_DEFAULT_SCRIPTFREELIST;
	c->printtoconsole = true;
	c->rpcclienttimeout_s = CONF_DEFAULT_RPCCLIENTTIMEOUT_S;
	c->controltimeout_s = CONF_DEFAULT_CONTROLTIMEOUT_S;
	c->server = true;
	c->rpcthreads = 16;
	c->rpcworkqueue = 64;
	c->rpcservertimeout_s = 30;
	c->maxmempool_mb = CONF_DEFAULT_MAXMEMPOOL_MB;
	c->blockreconstructionextratxn = CONF_DEFAULT_EXTRATXN;
	c->mempoolexpiry_h = CONF_DEFAULT_MEMPOOLEXPIRY_H;
	c->persistmempool = true;
	c->dnsseed = true;
	c->fixedseeds = true;
	c->minrelaytxfee = CONF_DEFAULT_MINRELAYTXFEE;
	c->blockmaxweight = CONF_DEFAULT_BLOCKMAXWEIGHT;
	c->blockreservedweight = CONF_DEFAULT_BLOCKRESERVEDWEIGHT;
	c->blockmintxfee = CONF_DEFAULT_BLOCKMINTXFEE;
	c->checkblocks = CONF_DEFAULT_CHECKBLOCKS;
	c->checklevel = CONF_DEFAULT_CHECKLEVEL;
	c->blocksxor = true;
	c->incrementalrelayfee = CONF_DEFAULT_INCREMENTALRELAYFEE;
	c->dustrelayfee = CONF_DEFAULT_DUSTRELAYFEE;
	c->permitbaremultisig = true;
	c->datacarrier = true;
	c->datacarriersize = CONF_DEFAULT_DATACARRIERSIZE;
	c->acceptnonstdtxn = -1;
	c->bytespersigop = CONF_DEFAULT_BYTESPERSIGOP;
	c->limitancestorcount = CONF_DEFAULT_LIMIT_COUNT;
	c->limitancestorsize = CONF_DEFAULT_LIMIT_KVB;
	c->limitdescendantcount = CONF_DEFAULT_LIMIT_COUNT;
	c->limitdescendantsize = CONF_DEFAULT_LIMIT_KVB;
	c->proxyrandomize = true;
	c->cjdnsreachable = -1;
	c->discover = true;
	c->v2transport = true;
	for (int i = 0; i < CONF_ZMQ__COUNT; i++)
		c->zmqhwm[i] = 1000;
}

void conf_list_release(struct conf_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		xfree(l->v[i]);
	l->n = 0;
}

void conf_release(struct peerd_conf *c)
{
	xfree(c->conf_file);
	xfree(c->datadir);
	xfree(c->netdir);
	xfree(c->controlsocket);
	conf_list_release(&c->bind);
	conf_list_release(&c->connect);
	conf_list_release(&c->addnode);
	conf_list_release(&c->seednode);
	conf_list_release(&c->signetseednode);
	conf_list_release(&c->debug);
	conf_list_release(&c->debugexclude);
	conf_list_release(&c->test);
	conf_list_release(&c->signetchallenge);
	conf_list_release(&c->ignored);
	conf_list_release(&c->onlynet);
	conf_list_release(&c->externalip);
	conf_list_release(&c->vbparams);
	conf_list_release(&c->rpcbind);
	conf_list_release(&c->rpcallowip);
	conf_list_release(&c->rpcauth);
	for (int i = 0; i < CONF_ZMQ__COUNT; i++)
		conf_list_release(&c->zmqpub[i]);
	conf_list_release(&c->shutdownnotify);
	conf_list_release(&c->rpcwhitelist);
	xfree(c->debuglogfile);
	xfree(c->pidfile);
	xfree(c->controlsocketgroup);
	bool help = c->help, version = c->version;
	conf_defaults(c);
	/* Kept so a caller can still tell -help from -version after an early release. */
	c->help = help;
	c->version = version;
}
