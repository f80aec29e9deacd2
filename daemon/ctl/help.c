/*
 * daemon/ctl/help.c: `help METHOD` as Core's help text: the usage line,
 * the description, then Arguments, Result and Examples sections. The
 * arguments come from the method's own table entry (names and which are
 * optional); the result's shape from the table below where one is written
 * out, else a pointer to the description. Keyed by name, so the method
 * files (ctl/chain_methods.c, ctl/mempool_methods.c, ...) need no edit for help.
 *
 * `help` alone lists the methods as Core's CRPCTable::help does: by
 * category, the categories and the methods in each in byte order, each
 * method's usage line, and none of Core's "hidden" category (its test and
 * developer methods: generate*, invalidateblock, setmocktime,
 * estimaterawfee, ...), which `help NAME` still describes.
 */
#include "daemon/ctl/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/** Result text (and an optional example's arguments) for one method. */
struct ctl_help_entry {
	const char *name;
	const char *result;
	const char *example_args; /**< e.g. "\"127.0.0.1:8333\" \"add\""; NULL = none */
};

static const struct ctl_help_entry entries[] = {
    {"help", "\"text\"    (string) the help text", "\"getpeerinfo\""},
    {"uptime", "n    (numeric) the number of seconds that peerd has been running", NULL},
    {"stop", "\"str\"    (string) a string with the content 'peerd stopping'", NULL},
    {"setmocktime", "null    (json null)", "1700000000"},
    {"getzmqnotifications",
     "[ { \"type\" : \"str\", \"address\" : \"str\", \"hwm\" : n }, ... ]    (json array)\n"
     "  type: the notification type (pubhashblock, pubhashtx, pubrawblock, pubrawtx,\n"
     "  pubsequence); address: the address of the publisher; hwm: the outbound message\n"
     "  high water mark",
     NULL},
    {"getconnectioncount", "n    (numeric) the connection count", NULL},
    {"getnetworkinfo",
     "{\n  \"version\" : n, \"subversion\" : \"str\", \"protocolversion\" : n,\n"
     "  \"localservices\" : \"hex\", \"localservicesnames\" : [\"str\",...],\n"
     "  \"localrelay\" : true|false, \"timeoffset\" : n, \"networkactive\" : true|false,\n"
     "  \"connections\" : n, \"connections_in\" : n, \"connections_out\" : n,\n"
     "  \"networks\" : [ { \"name\" : \"str\", \"limited\" : true|false,\n"
     "      \"reachable\" : true|false, \"proxy\" : \"host:port\",\n"
     "      \"proxy_randomize_credentials\" : true|false }, ... ],\n"
     "  \"relayfee\" : n, \"incrementalfee\" : n,\n"
     "  \"localaddresses\" : [ { \"address\" : \"str\", \"port\" : n, \"score\" : n }, ... ],\n"
     "  \"maxconnections\" : n, \"chain\" : \"str\", \"warnings\" : []\n}",
     NULL},
    {"getpeerinfo",
     "[ { \"id\" : n, \"addr\" : \"host:port\", \"network\" : \"str\", \"services\" : \"hex\",\n"
     "    \"pingtime\" : n, \"minping\" : n, \"pingwait\" : n, \"version\" : n,\n"
     "    \"subver\" : \"str\", \"inbound\" : true|false, ... }, ... ]",
     NULL},
    {"getnettotals", "{ \"totalbytesrecv\" : n, \"totalbytessent\" : n, \"timemillis\" : n }",
     NULL},
    {"addnode", "null    (json null)", "\"192.168.0.6:8333\" \"onetry\""},
    {"disconnectnode", "null    (json null)", "\"192.168.0.6:8333\""},
    {"addconnection",
     "{\n  \"address\" : \"str\",            (string) Address of newly added connection.\n"
     "  \"connection_type\" : \"str\"     (string) Type of connection opened.\n}",
     "\"192.168.0.6:8333\" \"outbound-full-relay\" false"},
    {"setban", "null    (json null)", "\"192.168.0.6\" \"add\" 86400"},
    {"listbanned",
     "[ { \"address\" : \"str\", \"ban_created\" : n, \"banned_until\" : n,\n"
     "    \"ban_duration\" : n, \"time_remaining\" : n }, ... ]",
     NULL},
    {"clearbanned", "null    (json null)", NULL},
    {"ping", "null    (json null)", NULL},
    {"setnetworkactive", "true|false    (boolean) the value that was passed in", "false"},
    {"getnodeaddresses",
     "[ { \"time\" : n, \"services\" : n, \"address\" : \"str\", \"port\" : n,\n"
     "    \"network\" : \"str\" }, ... ]",
     "8 \"ipv4\""},
    {"getaddrmaninfo",
     "{\n  \"network\" : { \"new\" : n, \"tried\" : n, \"total\" : n },    (object) one per "
     "network\n  ...,\n  \"all_networks\" : { \"new\" : n, \"tried\" : n, \"total\" : n }\n}",
     NULL},
    {"addpeeraddress",
     "{\n  \"success\" : true|false,    (boolean) whether the address was added\n"
     "  \"error\" : \"str\"    (string, optional) failed-adding-to-new or "
     "failed-adding-to-tried\n}",
     "\"1.2.3.4\" 8333 true"},
    {"getrawaddrman",
     "{\n  \"table\" : {    (object) new or tried\n"
     "    \"bucket/position\" : { \"address\" : \"str\", \"port\" : n, \"services\" : n,\n"
     "      \"time\" : n, \"network\" : \"str\", \"source\" : \"str\",\n"
     "      \"source_network\" : \"str\" }, ... }, ...\n}",
     NULL},
    {"getaddednodeinfo",
     "[ { \"addednode\" : \"str\", \"connected\" : true|false,\n"
     "    \"addresses\" : [ { \"address\" : \"str\", \"connected\" : \"outbound\" }, ... ] }, ... "
     "]",
     "\"192.168.0.201\""},
    {"logging", "{ \"category\" : true|false, ... }    (object) keys are the categories",
     "\"[\\\"all\\\"]\" \"[\\\"http\\\"]\""},
    {"submitpackage",
     "{\n  \"package_msg\" : \"str\",    (string) \"success\", or why the package failed\n"
     "  \"tx-results\" : {    (object) one per transaction judged, keyed by wtxid\n"
     "    \"wtxid\" : { \"txid\" : \"hex\", \"other-wtxid\" : \"hex\", \"vsize\" : n,\n"
     "                \"fees\" : { \"base\" : n, \"effective-feerate\" : n,\n"
     "                           \"effective-includes\" : [\"wtxid\",...] },\n"
     "                \"error\" : \"str\" }, ... },\n"
     "  \"replaced-transactions\" : [\"txid\",...]\n}",
     "\"[\\\"rawparent\\\",\\\"rawchild\\\"]\""},
    {"getrpcinfo",
     "{ \"active_commands\" : [ { \"method\" : \"str\", \"duration\" : n }, ... ],\n"
     "  \"logpath\" : \"str\" }",
     NULL},
    {"getdeploymentinfo",
     "{\n  \"hash\" : \"hex\", \"height\" : n,\n"
     "  \"deployments\" : { \"name\" : { \"type\" : \"buried\"|\"bip9\", \"height\" : n,\n"
     "      \"active\" : true|false, \"bip9\" : { \"bit\" : n, \"start_time\" : n,\n"
     "      \"timeout\" : n, \"min_activation_height\" : n, \"status\" : \"str\",\n"
     "      \"since\" : n, \"status_next\" : \"str\", \"statistics\" : { \"period\" : n,\n"
     "      \"threshold\" : n, \"elapsed\" : n, \"count\" : n, \"possible\" : true|false },\n"
     "      \"signalling\" : \"str\" } }, ... }\n}",
     NULL},
    {"getindexinfo",
     "{ \"name\" : { \"synced\" : true|false, \"best_block_height\" : n }, ... }    (json "
     "object)\n  name: txindex, coinstatsindex, basic block filter index",
     "\"txindex\""},
    {"pruneblockchain", "n    (numeric) Height of the last block pruned", "1000"},
    {"getblockfilter",
     "{ \"filter\" : \"hex\", \"header\" : \"hex\" }    (json object) the hex-encoded filter "
     "data\n  and filter header",
     "\"00000000c937983704a73af28acdec37b049d214adbda81d7e2a3dd146f6ed09\" \"basic\""},
    {"estimatesmartfee",
     "{\n  \"feerate\" : n,      (numeric, optional) estimate fee rate in BTC/kvB (only present if "
     "no errors were encountered)\n"
     "  \"errors\" : [ \"str\", ... ],    (json array, optional) Errors encountered during "
     "processing (if there are any)\n"
     "  \"blocks\" : n         (numeric) block number where estimate was found\n}",
     "6"},
    {"estimaterawfee",
     "{\n  \"short\" : {        (json object, optional) estimate for short time horizon\n"
     "    \"feerate\" : n, \"decay\" : n, \"scale\" : n,\n"
     "    \"pass\" : { \"startrange\" : n, \"endrange\" : n, \"withintarget\" : n,\n"
     "      \"totalconfirmed\" : n, \"inmempool\" : n, \"leftmempool\" : n },\n"
     "    \"fail\" : { ... }, \"errors\" : [ \"str\", ... ] },\n"
     "  \"medium\" : { ... }, \"long\" : { ... }\n}",
     "6 0.9"},
    {"gettxoutsetinfo",
     "{\n  \"height\" : n, \"bestblock\" : \"hex\", \"txouts\" : n, \"bogosize\" : n,\n"
     "  \"hash_serialized_3\" : \"hex\",    (string, optional) with hash_type hash_serialized_3\n"
     "  \"muhash\" : \"hex\",    (string, optional) with hash_type muhash\n"
     "  \"total_amount\" : n,\n"
     "  \"transactions\" : n, \"disk_size\" : n,    (numeric, optional) without coinstatsindex\n"
     "  \"total_unspendable_amount\" : n,    (numeric, optional) from coinstatsindex\n"
     "  \"block_info\" : {    (json object, optional) from coinstatsindex: the block's own\n"
     "    \"prevout_spent\" : n, \"coinbase\" : n, \"new_outputs_ex_coinbase\" : n,\n"
     "    \"unspendable\" : n, \"unspendables\" : { \"genesis_block\" : n, \"bip30\" : n,\n"
     "    \"scripts\" : n, \"unclaimed_rewards\" : n } }\n}",
     "\"muhash\" 1000"},
};

static const struct ctl_help_entry *entry(const char *name)
{
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		if (strcmp(entries[i].name, name) == 0)
			return &entries[i];
	}
	return NULL;
}

size_t ctl_help_text(const struct ctl_method *m, char *buf, size_t n)
{
	const struct ctl_help_entry *e = entry(m->name);
	size_t k = 0;
#define PUT(...)                                                                                   \
	do {                                                                                       \
		if (k < n)                                                                         \
			k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__);                        \
	} while (0)
	PUT("%s\n\n%s\n\nArguments:\n", m->usage, m->help);
	int shown = 0;
	for (int i = 0; i < ctl_method_nparams(m); i++) {
		/* The first name; an alias ("verbosity|verbose") is for named calls. */
		const char *name = m->params[i].name, *bar = strchr(name, '|');
		PUT("%d. %.*s    (%s)\n", i + 1, bar ? (int)(bar - name) : (int)strlen(name), name,
		    m->params[i].required ? "required" : "optional");
		shown++;
	}
	if (!shown)
		PUT("None\n");
	PUT("\nResult:\n%s\n\nExamples:\n> peerctl %s%s%s\n",
	    e ? e->result : "See the description above.", m->name, e && e->example_args ? " " : "",
	    e && e->example_args ? e->example_args : "");
	PUT("> peerctl -named %s\n", m->name);
#undef PUT
	return k < n ? k : n - 1;
}

/* ---- `help` alone: the method list by Core's categories ------------------ */

/*
 * Core 29's category of each of its non-wallet methods (its `help` output,
 * and the "hidden" ones it leaves out of it), so a method peerd shares
 * with Core is listed where Core lists it. A method Core lacks is peerd's
 * own and goes under "control" (getstats).
 */
static const struct {
	const char *name, *category;
} categories[] = {
    {"dumptxoutset", "blockchain"},
    {"getbestblockhash", "blockchain"},
    {"getblock", "blockchain"},
    {"getblockchaininfo", "blockchain"},
    {"getblockcount", "blockchain"},
    {"getblockfilter", "blockchain"},
    {"getblockfrompeer", "blockchain"},
    {"getblockhash", "blockchain"},
    {"getblockheader", "blockchain"},
    {"getblockstats", "blockchain"},
    {"getchainstates", "blockchain"},
    {"getchaintips", "blockchain"},
    {"getchaintxstats", "blockchain"},
    {"getdeploymentinfo", "blockchain"},
    {"getdescriptoractivity", "blockchain"},
    {"getdifficulty", "blockchain"},
    {"getmempoolancestors", "blockchain"},
    {"getmempooldescendants", "blockchain"},
    {"getmempoolentry", "blockchain"},
    {"getmempoolinfo", "blockchain"},
    {"getrawmempool", "blockchain"},
    {"gettxout", "blockchain"},
    {"gettxoutproof", "blockchain"},
    {"gettxoutsetinfo", "blockchain"},
    {"gettxspendingprevout", "blockchain"},
    {"importmempool", "blockchain"},
    {"loadtxoutset", "blockchain"},
    {"preciousblock", "blockchain"},
    {"pruneblockchain", "blockchain"},
    {"savemempool", "blockchain"},
    {"scanblocks", "blockchain"},
    {"scantxoutset", "blockchain"},
    {"verifychain", "blockchain"},
    {"verifytxoutproof", "blockchain"},
    {"getmemoryinfo", "control"},
    {"getrpcinfo", "control"},
    {"help", "control"},
    {"logging", "control"},
    {"stop", "control"},
    {"uptime", "control"},
    {"addconnection", "hidden"},
    {"addpeeraddress", "hidden"},
    {"echo", "hidden"},
    {"echoipc", "hidden"},
    {"echojson", "hidden"},
    {"estimaterawfee", "hidden"},
    {"generate", "hidden"},
    {"generateblock", "hidden"},
    {"generatetoaddress", "hidden"},
    {"generatetodescriptor", "hidden"},
    {"getorphantxs", "hidden"},
    {"getrawaddrman", "hidden"},
    {"invalidateblock", "hidden"},
    {"mockscheduler", "hidden"},
    {"reconsiderblock", "hidden"},
    {"sendmsgtopeer", "hidden"},
    {"setmocktime", "hidden"},
    {"syncwithvalidationinterfacequeue", "hidden"},
    {"waitforblock", "hidden"},
    {"waitforblockheight", "hidden"},
    {"waitfornewblock", "hidden"},
    {"getblocktemplate", "mining"},
    {"getmininginfo", "mining"},
    {"getnetworkhashps", "mining"},
    {"getprioritisedtransactions", "mining"},
    {"prioritisetransaction", "mining"},
    {"submitblock", "mining"},
    {"submitheader", "mining"},
    {"addnode", "network"},
    {"clearbanned", "network"},
    {"disconnectnode", "network"},
    {"getaddednodeinfo", "network"},
    {"getaddrmaninfo", "network"},
    {"getconnectioncount", "network"},
    {"getnettotals", "network"},
    {"getnetworkinfo", "network"},
    {"getnodeaddresses", "network"},
    {"getpeerinfo", "network"},
    {"listbanned", "network"},
    {"ping", "network"},
    {"setban", "network"},
    {"setnetworkactive", "network"},
    {"analyzepsbt", "rawtransactions"},
    {"combinepsbt", "rawtransactions"},
    {"combinerawtransaction", "rawtransactions"},
    {"converttopsbt", "rawtransactions"},
    {"createpsbt", "rawtransactions"},
    {"createrawtransaction", "rawtransactions"},
    {"decodepsbt", "rawtransactions"},
    {"decoderawtransaction", "rawtransactions"},
    {"decodescript", "rawtransactions"},
    {"descriptorprocesspsbt", "rawtransactions"},
    {"finalizepsbt", "rawtransactions"},
    {"fundrawtransaction", "rawtransactions"},
    {"getrawtransaction", "rawtransactions"},
    {"joinpsbts", "rawtransactions"},
    {"sendrawtransaction", "rawtransactions"},
    {"signrawtransactionwithkey", "rawtransactions"},
    {"submitpackage", "rawtransactions"},
    {"testmempoolaccept", "rawtransactions"},
    {"utxoupdatepsbt", "rawtransactions"},
    {"enumeratesigners", "signer"},
    {"createmultisig", "util"},
    {"deriveaddresses", "util"},
    {"estimatesmartfee", "util"},
    {"getdescriptorinfo", "util"},
    {"getindexinfo", "util"},
    {"signmessagewithprivkey", "util"},
    {"validateaddress", "util"},
    {"verifymessage", "util"},
    {"getzmqnotifications", "zmq"},
};

static const char *category_of(const char *name)
{
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++) {
		if (strcmp(categories[i].name, name) == 0)
			return categories[i].category;
	}
	return "control";
}

struct listed {
	const char *category;
	const struct ctl_method *m;
};

/* Core's order: category, then name (std::sort over category + name). */
static int listed_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	int c = strcmp(x->category, y->category);
	return c ? c : strcmp(x->m->name, y->m->name);
}

char *ctl_help_index(const struct ctl_method *const *ms, size_t n)
{
	struct listed *v = xcalloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0, len = 1;
	for (size_t i = 0; i < n; i++) {
		const char *cat = category_of(ms[i]->name);
		if (strcmp(cat, "hidden") == 0)
			continue;
		v[k++] = (struct listed){cat, ms[i]};
		len += strlen(ms[i]->usage) + strlen(cat) + 16;
	}
	qsort(v, k, sizeof(*v), listed_cmp);
	char *out = xmalloc(len);
	size_t at = 0;
	for (size_t i = 0; out && i < k; i++) {
		if (!i || strcmp(v[i].category, v[i - 1].category) != 0) {
			/* "== Blockchain ==": the category with a capital. */
			at += (size_t)snprintf(out + at, len - at, "%s== %c%s ==\n", i ? "\n" : "",
			                       v[i].category[0] - 'a' + 'A', v[i].category + 1);
		}
		at += (size_t)snprintf(out + at, len - at, "%s\n", v[i].m->usage);
	}
	if (out) {
		if (at)
			at--; /* Core drops the last newline */
		out[at] = 0;
	}
	xfree(v);
	return out;
}
