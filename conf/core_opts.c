/*
 * conf/core_opts.c: what peerd does with a bitcoind option it does not have.
 *
 * The rule (doc/differences.md says the same): an option is ignored, with a
 * warning in the log, only when ignoring it cannot change what the node
 * validates, stores or relays, whom it connects to or who can reach it, and
 * nobody waits for its effect (a notify script, a wallet, an index). Every
 * other option is refused: peerd stops with "not supported by peerd", as it
 * does for a name nobody knows. A refused option whose value asks for what
 * peerd does anyway (natpmp=0, coinstatsindex=0, dnsseed=0, ...: the row's `same`)
 * is accepted with the same warning, so a bitcoin.conf that spells out the
 * defaults still works.
 *
 * One table, Core 29's options (bitcoind -help -help-debug, 638a4c0bd8)
 * that peerd lacks, in Core's alphabetical order. tests/integration/
 * test_operator.py checks it against that bitcoind's -help and against
 * doc/differences.md.
 */
#include "conf/internal.h"

#include <stdio.h>
#include <string.h>

/* The reasons, one per kind of option. */
#define NO_RPC                                                                                     \
	"peerd's JSON-RPC server (doc/rpc.md) has no method whitelists or "                        \
	"deprecated methods yet"
#define NO_WALLET     "peerd has no wallet"
#define NO_PROXY      "peerd has no Tor control port client and no I2P SAM client yet"
#define NO_NOTIFY     "peerd has no wallet to notify about"
#define NO_WHITELIST  "peerd has no peer permissions (whitelists) yet"
#define NO_STARTCHECK "peerd does not re-verify blocks at startup"
#define COSMETIC      "it only changes log output, which peerd formats its own way"
#define TEST_ONLY     "a test option of bitcoind's that peerd does not have"

const struct conf_core_opt conf_core_opts[] = {
    {"addresstype", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"allowignoredconf", CONF_CORE_IGNORE, NULL, "peerd reads only the file -conf names"},
    {"asmap", CONF_CORE_REFUSE, NULL, "peerd does not bucket peers by AS number"},
    {"avoidpartialspends", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"bantime", CONF_CORE_REFUSE, "86400", "peerd bans for 24 hours (Core's default)"},
    {"blocksdir", CONF_CORE_REFUSE, NULL, "peerd keeps blocks/ in the network's datadir"},
    {"blockversion", CONF_CORE_REFUSE, NULL, TEST_ONLY},
    {"capturemessages", CONF_CORE_IGNORE, NULL, "use -debug=msg to see every message"},
    {"changetype", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"checkblockindex", CONF_CORE_REFUSE, "0", TEST_ONLY},
    {"checkblocks", CONF_CORE_REFUSE, NULL, NO_STARTCHECK},
    {"checklevel", CONF_CORE_REFUSE, NULL, NO_STARTCHECK},
    {"checkmempool", CONF_CORE_REFUSE, "0", TEST_ONLY},
    {"consolidatefeerate", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"daemon", CONF_CORE_REFUSE, "0", "peerd stays in the foreground (run it under systemd)"},
    {"daemonwait", CONF_CORE_REFUSE, "0", "peerd stays in the foreground (run it under systemd)"},
    {"dbbatchsize", CONF_CORE_IGNORE, NULL, "peerd flushes its LMDB chain state its own way"},
    {"deprecatedrpc", CONF_CORE_IGNORE, NULL, NO_RPC},
    {"disablewallet", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"discardfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"dns", CONF_CORE_REFUSE, "1", "peerd resolves the names connect= and addnode= give"},
    {"fallbackfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"help-debug", CONF_CORE_IGNORE, NULL, "peerd -help lists every option"},
    {"i2pacceptincoming", CONF_CORE_REFUSE, "0", NO_PROXY},
    {"i2psam", CONF_CORE_REFUSE, NULL, NO_PROXY},
    {"includeconf", CONF_CORE_REFUSE, NULL, "peerd reads one config file"},
    {"keypool", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"listenonion", CONF_CORE_REFUSE, "0", NO_PROXY},
    {"loadblock", CONF_CORE_REFUSE, NULL, "peerd imports no block files"},
    {"logips", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"loglevel", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"loglevelalways", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"logsourcelocations", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"logthreadnames", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"logtimemicros", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"maxapsfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"maxorphantx", CONF_CORE_IGNORE, NULL, "peerd bounds its orphanage as Core 29 does"},
    {"maxsigcachesize", CONF_CORE_IGNORE, NULL, "peerd sizes its script cache itself"},
    {"maxtxfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"maxuploadtarget", CONF_CORE_REFUSE, "0", "peerd does not limit its upload"},
    {"mintxfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"natpmp", CONF_CORE_REFUSE, "0", "peerd opens no port on the router"},
    {"networkactive", CONF_CORE_REFUSE, "1", "use the setnetworkactive method"},
    {"paytxfee", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"peerbloomfilters", CONF_CORE_REFUSE, "0", "peerd serves no BIP37 filters"},
    {"persistmempoolv1", CONF_CORE_REFUSE, "0", "peerd writes mempool.dat in Core 29's format"},
    {"printpriority", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"rpcdoccheck", CONF_CORE_IGNORE, NULL, NO_RPC},
    {"settings", CONF_CORE_REFUSE, "0", "peerd keeps no settings.json"},
    {"shrinkdebugfile", CONF_CORE_IGNORE, NULL, COSMETIC},
    {"signer", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"spendzeroconfchange", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"stopafterblockimport", CONF_CORE_REFUSE, "0", TEST_ONLY},
    {"stopatheight", CONF_CORE_REFUSE, "0", TEST_ONLY},
    {"testactivationheight", CONF_CORE_REFUSE, NULL, TEST_ONLY},
    {"timeout", CONF_CORE_IGNORE, NULL, "peerd leaves connection timeouts to the system"},
    {"torcontrol", CONF_CORE_REFUSE, NULL, NO_PROXY},
    {"torpassword", CONF_CORE_REFUSE, NULL, NO_PROXY},
    {"txconfirmtarget", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"txreconciliation", CONF_CORE_REFUSE, "0", "peerd does not do Erlay (BIP330)"},
    {"uacomment", CONF_CORE_IGNORE, NULL, "peerd's user agent is fixed"},
    {"unsafesqlitesync", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"wallet", CONF_CORE_REFUSE, NULL, NO_WALLET},
    {"walletbroadcast", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"walletcrosschain", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"walletdir", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"walletnotify", CONF_CORE_REFUSE, NULL, NO_NOTIFY},
    {"walletrbf", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"walletrejectlongchains", CONF_CORE_IGNORE, NULL, NO_WALLET},
    {"whitebind", CONF_CORE_REFUSE, NULL, NO_WHITELIST},
    {"whitelist", CONF_CORE_REFUSE, NULL, NO_WHITELIST},
    {"whitelistforcerelay", CONF_CORE_IGNORE, NULL, NO_WHITELIST},
    {"whitelistrelay", CONF_CORE_IGNORE, NULL, NO_WHITELIST},
};

const size_t conf_n_core_opts = sizeof(conf_core_opts) / sizeof(conf_core_opts[0]);

const struct conf_core_opt *conf_core_opt_find(const char *name, size_t len)
{
	for (size_t i = 0; i < conf_n_core_opts; i++) {
		if (strlen(conf_core_opts[i].name) == len &&
		    memcmp(conf_core_opts[i].name, name, len) == 0)
			return &conf_core_opts[i];
	}
	return NULL;
}

int conf_core_opt_judge(const char *name, size_t len, const char *v, char *msg, size_t msglen)
{
	bool negated = false;
	const struct conf_core_opt *o = conf_core_opt_find(name, len);
	if (!o && len > 2 && memcmp(name, "no", 2) == 0) {
		o = conf_core_opt_find(name + 2, len - 2);
		negated = o != NULL;
	}
	if (!o)
		return CONF_CORE_UNKNOWN;
	/* The value as bitcoind reads it: a bare -name is 1, -noname is 0,
	 * -noname=0 a double negative. */
	const char *val = v ? v : "1";
	if (negated)
		val = !v || !*v || strcmp(v, "1") == 0 ? "0" : strcmp(v, "0") == 0 ? "1" : v;
	if (o->action == CONF_CORE_REFUSE && !(o->same && strcmp(val, o->same) == 0)) {
		snprintf(msg, msglen, "not supported by peerd (a bitcoind option: %s; see %s)",
		         o->why, CONF_DIFFERENCES_DOC);
		return CONF_CORE_REFUSED;
	}
	snprintf(msg, msglen, "ignored, a bitcoind option peerd does not have (%s; see %s)", o->why,
	         CONF_DIFFERENCES_DOC);
	return CONF_CORE_IGNORED;
}
