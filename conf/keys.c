/* conf/keys.c: the table of keys, value checks, host:port parsing and -help. */
#include "conf/internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x)  STR_(x)

/* -help prints these as text, so they are spelled without proto/'s 'u' suffix. */
_Static_assert(CONF_DEFAULT_BINARYFREELIST == PROTO_BINARY_FREELIST_CAP,
               "binary free list default");
_Static_assert(CONF_DEFAULT_SCRIPTFREELIST == PROTO_SCRIPT_FREELIST_CAP,
               "script free list default");
_Static_assert(PROTO_BINARY_BUF_SIZE == 8 && PROTO_SCRIPT_BUF_SIZE == 512, "buffer sizes in -help");

const struct conf_keydef conf_keys[CONF_K__COUNT] = {
    [CONF_K_CONF] = {"conf", CONF_KIND_PATH, CONF_KF_CMDLINE | CONF_KF_NEGCLR, 0, 0, "<file>",
                     "<datadir>/" CONF_CONF_FILENAME,
                     "Config file to read. A relative path is under the datadir given on the\n"
                     "command line (as bitcoind's). A missing default file is fine; a missing\n"
                     "-conf file is an error. -noconf reads no file. Command line only."},
    [CONF_K_DATADIR] =
        {"datadir", CONF_KIND_PATH, CONF_KF_NONEG, 0, 0, "<dir>",
         "$STATE_DIRECTORY under systemd, else ~/" CONF_DATADIR_NAME,
         "Data directory: the default config file at its top; each network's state\n"
         "(bans, control socket, .lock) in <datadir>/regtest, testnet3, testnet4 or\n"
         "signet, main's in the datadir itself (as bitcoind). A -datadir that does not\n"
         "exist is an error; the default one is created. Only -datadir on the command\n"
         "line decides where the default config file is."},
    [CONF_K_CHAIN] =
        {"chain", CONF_KIND_CHAIN, CONF_KF_TOP | CONF_KF_NONEG, 0, 0, "<net>", "main",
         "Network: main, test (testnet3), testnet4, signet or regtest. At most one of\n"
         "-chain, -regtest, -signet, -testnet and -testnet4 may be given."},
    [CONF_K_REGTEST] = {"regtest", CONF_KIND_BOOL, CONF_KF_TOP, 0, 1, "<0|1>", "0",
                        "Same as chain=regtest."},
    [CONF_K_SIGNET] = {"signet", CONF_KIND_BOOL, CONF_KF_TOP, 0, 1, "<0|1>", "0",
                       "Same as chain=signet."},
    [CONF_K_TESTNET] = {"testnet", CONF_KIND_BOOL, CONF_KF_TOP, 0, 1, "<0|1>", "0",
                        "Same as chain=test (testnet3)."},
    [CONF_K_TESTNET4] = {"testnet4", CONF_KIND_BOOL, CONF_KF_TOP, 0, 1, "<0|1>", "0",
                         "Same as chain=testnet4."},
    [CONF_K_LISTEN] = {"listen", CONF_KIND_BOOL, 0, 0, 1, "<0|1>",
                       "1 (0 when connect= or proxy= is set, unless bind= is)",
                       "Accept inbound connections."},
    [CONF_K_BIND] = {"bind", CONF_KIND_BIND, CONF_KF_NEGCLR, 0, 0, "<addr>[:<port>]",
                     "0.0.0.0 and :: on -port",
                     "Listen on this IPv4 or IPv6 address (IPv6 as [addr]:port or bare addr).\n"
                     "Without a port, -port is used. Repeatable. In the config file\n"
                     "outside a section: main only, as bitcoind."},
    [CONF_K_PORT] = {"port", CONF_KIND_UINT, 0, 1, 65535, "<port>", NULL,
                     "Port to listen on when bind= does not name one. In the config\n"
                     "file outside a section: main only, as bitcoind."},
    [CONF_K_CONNECT] = {"connect", CONF_KIND_PEER, CONF_KF_NEGCLR | CONF_KF_ZEROCLR, 0, 0,
                        "<host>[:<port>]", "none",
                        "Connect only to these peers (addnode= is then ignored); the port\n"
                        "defaults to the network's. Without connect=, peerd chooses its own\n"
                        "outbound peers from its address manager (doc/peers.md). connect=0 or\n"
                        "-noconnect: no automatic outbound connections, on purpose.\n"
                        "Repeatable."},
    [CONF_K_ADDNODE] = {"addnode", CONF_KIND_PEER, CONF_KF_NEGCLR, 0, 0, "<host>[:<port>]", "none",
                        "Keep a connection to this peer, reconnecting with backoff. Repeatable."},
    [CONF_K_MAXCONNECTIONS] = {"maxconnections", CONF_KIND_UINT, 0, 0, CONF_MAX_MAXCONNECTIONS,
                               "<n>", STR(CONF_DEFAULT_MAXCONNECTIONS),
                               "Most peer connections, inbound and outbound together (0-" STR(
                                   CONF_MAX_MAXCONNECTIONS) ")."},
    [CONF_K_PEERTIMEOUT] = {"peertimeout", CONF_KIND_UINT, 0, 1, CONF_MAX_PEERTIMEOUT_S, "<s>",
                            STR(CONF_DEFAULT_PEERTIMEOUT_S),
                            "Seconds after connecting before a peer's inactivity and ping\n"
                            "timeouts apply, by the mockable clock as bitcoind's (1-" STR(
                                CONF_MAX_PEERTIMEOUT_S) ")."},
    [CONF_K_MAXTIPAGE] = {"maxtipage", CONF_KIND_UINT, 0, 1, CONF_MAX_MAXTIPAGE_S, "<s>",
                          STR(CONF_DEFAULT_MAXTIPAGE_S),
                          "While the tip is older than this many seconds peerd is in initial\n"
                          "block download: no transactions asked for, no tips announced\n"
                          "(bitcoind's debug option -maxtipage)."},
    [CONF_K_MINIMUMCHAINWORK] = {"minimumchainwork", CONF_KIND_HEX256, CONF_KF_NONEG, 0, 0, "<hex>",
                                 "the network's",
                                 "Chains with less work than this are not downloaded and keep\n"
                                 "peerd in initial block download; their headers are checked\n"
                                 "without being stored (bitcoind's debug option\n"
                                 "-minimumchainwork; Core 29's value per network, 0 on regtest)."},
    [CONF_K_MAXRECEIVEBUFFER] =
        {"maxreceivebuffer", CONF_KIND_UINT, 0, 1, CONF_MAX_BUFFER_KB, "<n>",
         STR(CONF_DEFAULT_MAXRECEIVEBUFFER_KB),
         "Per-peer receive buffer, in units of 1,000 bytes: a peer with more\n"
         "unprocessed data is not read until it drains."},
    [CONF_K_MAXSENDBUFFER] = {"maxsendbuffer", CONF_KIND_UINT, 0, 1, CONF_MAX_BUFFER_KB, "<n>",
                              STR(CONF_DEFAULT_MAXSENDBUFFER_KB),
                              "Per-peer send buffer, in units of 1,000 bytes: no replies are\n"
                              "generated for a peer with more queued until it drains."},
    [CONF_K_PAR] = {"par", CONF_KIND_UINT, 0, 0, CONF_MAX_PAR, "<n>", "0",
                    "Script verification threads (0 = one per core; at most " STR(
                        CONF_MAX_PAR) ")."},
    [CONF_K_DBCACHE] =
        {"dbcache", CONF_KIND_UINT, 0, 0, CONF_MAX_DBCACHE_MIB, "<n>",
         STR(CONF_DEFAULT_DBCACHE_MIB),
         "UTXO cache size in MiB (at most " STR(CONF_MAX_DBCACHE_MIB) "; below " STR(
             CONF_MIN_DBCACHE_MIB) " counts as " STR(CONF_MIN_DBCACHE_MIB) ").\nThe chain state is "
                                                                           "flushed to disk when "
                                                                           "the cache is full."},
    [CONF_K_BINARYFREELIST] = {"binaryfreelist", CONF_KIND_UINT, 0, 0, CONF_MAX_FREELIST, "<n>",
                               STR(CONF_DEFAULT_BINARYFREELIST),
                               "Capacity of the global free list of 8-byte decode buffers."},
    [CONF_K_SCRIPTFREELIST] = {"scriptfreelist", CONF_KIND_UINT, 0, 0, CONF_MAX_FREELIST, "<n>",
                               STR(CONF_DEFAULT_SCRIPTFREELIST),
                               "Capacity of the global free list of 512-byte script buffers."},
    [CONF_K_CONTROLSOCKET] = {"controlsocket", CONF_KIND_PATH, CONF_KF_NONEG, 0, 0, "<path>",
                              "<datadir>/[<network>/]" CONF_SOCKET_FILENAME,
                              "Unix socket for JSON-RPC control (peerctl), mode 0600. At most " STR(
                                  CONF_MAX_SOCKET_PATH) " bytes."},
    [CONF_K_DEBUG] = {"debug", CONF_KIND_DEBUG, CONF_KF_NEGCLR | CONF_KF_ZEROCLR, 0, 0,
                      "<category>", "none",
                      "Log debug messages of a category (listed below: Core's names, then\n"
                      "peerd's own finer ones); all or 1 for every one; 0 or none for none.\n"
                      "-debug alone means all. Repeatable."},
    [CONF_K_LOGTIMESTAMPS] = {"logtimestamps", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                              "Start every log line with a timestamp."},
    [CONF_K_PRINTTOCONSOLE] =
        {"printtoconsole", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
         "Log to stderr (journald adds the rest under systemd); 0 logs nothing."},
    [CONF_K_RPCCLIENTTIMEOUT] = {"rpcclienttimeout", CONF_KIND_UINT, 0, 0,
                                 CONF_MAX_RPCCLIENTTIMEOUT_S, "<s>",
                                 STR(CONF_DEFAULT_RPCCLIENTTIMEOUT_S),
                                 "peerctl: seconds to wait for peerd's reply (0 = forever)."},
    [CONF_K_MAXRECVMEMORY] =
        {"maxrecvmemory", CONF_KIND_UINT, 0, CONF_MIN_MAXRECVMEMORY_MIB, CONF_MAX_MAXRECVMEMORY_MIB,
         "<n>", "maxconnections x 64 KiB, at least 32",
         "MiB that all peers' partial messages over 512 bytes may hold together\n"
         "(" STR(CONF_MIN_MAXRECVMEMORY_MIB) "-" STR(
             CONF_MAX_MAXRECVMEMORY_MIB) "). A peer whose next message does not fit stops\n"
                                         "being read until it does (smallest message first); one "
                                         "that stalls\n"
                                         "holding a large buffer while others wait is "
                                         "disconnected."},
    [CONF_K_CONTROLTIMEOUT] = {"controltimeout", CONF_KIND_UINT, 0, 0, CONF_MAX_CONTROLTIMEOUT_S,
                               "<s>", STR(CONF_DEFAULT_CONTROLTIMEOUT_S),
                               "Close a control-socket client idle this many seconds (0 = never).\n"
                               "A client waiting for a reply is not idle."},
    [CONF_K_MAXMEMPOOL] = {"maxmempool", CONF_KIND_UINT, CONF_KF_NONEG, 0, CONF_MAX_MAXMEMPOOL_MB,
                           "<n>", STR(CONF_DEFAULT_MAXMEMPOOL_MB),
                           "Keep the transaction memory pool below <n> megabytes (at least\n"
                           "-limitdescendantsize x 40 bytes: 5 with the default)."},
    [CONF_K_MEMPOOLEXPIRY] = {"mempoolexpiry", CONF_KIND_UINT, CONF_KF_NONEG, 1,
                              CONF_MAX_MEMPOOLEXPIRY_H, "<n>", STR(CONF_DEFAULT_MEMPOOLEXPIRY_H),
                              "Do not keep transactions in the mempool longer than <n> hours\n"
                              "(at least 1: bitcoind's 0, expire at once, is refused)."},
    [CONF_K_PERSISTMEMPOOL] = {"persistmempool", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                               "Whether to save the mempool on shutdown (mempool.dat) and load it\n"
                               "on restart."},
    [CONF_K_BLOCKSONLY] = {"blocksonly", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                           "Reject transactions from network peers (a peer that sends or\n"
                           "announces one is disconnected; the version message asks for none).\n"
                           "Transactions from sendrawtransaction are still relayed. Makes\n"
                           "-maxmempool default to " STR(
                               CONF_BLOCKSONLY_MAXMEMPOOL_MB) " when not given."},
    [CONF_K_MINRELAYTXFEE] =
        {"minrelaytxfee", CONF_KIND_AMOUNT, CONF_KF_NONEG, 0, 0, "<amt>", "0.00001",
         "Fees (in BTC/kvB) smaller than this are considered zero fee for relaying\n"
         "and mempool acceptance."},
    [CONF_K_INCREMENTALRELAYFEE] =
        {"incrementalrelayfee", CONF_KIND_AMOUNT, CONF_KF_NONEG, 0, 0, "<amt>", "0.00001",
         "Fee rate (in BTC/kvB) used to define cost of relay, used for mempool\n"
         "limiting and replacement policy (bitcoind's debug option)."},
    [CONF_K_DUSTRELAYFEE] =
        {"dustrelayfee", CONF_KIND_AMOUNT, CONF_KF_NONEG, 0, 0, "<amt>", "0.00003",
         "Fee rate (in BTC/kvB) used to define dust, the value of an output such\n"
         "that it will cost more than its value in fees at this fee rate to spend\n"
         "it (bitcoind's debug option)."},
    [CONF_K_PERMITBAREMULTISIG] = {"permitbaremultisig", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                                   "Relay transactions creating non-P2SH multisig outputs."},
    [CONF_K_DATACARRIER] = {"datacarrier", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                            "Relay and mine data carrier (OP_RETURN) transactions."},
    [CONF_K_DATACARRIERSIZE] =
        {"datacarriersize", CONF_KIND_UINT, 0, 0, CONF_MAX_DATACARRIERSIZE, "<n>",
         STR(CONF_DEFAULT_DATACARRIERSIZE),
         "Relay and mine transactions whose data-carrying raw scriptPubKey is of\n"
         "this size or less."},
    [CONF_K_ACCEPTNONSTDTXN] = {"acceptnonstdtxn", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                                "Relay and mine non-standard transactions (test networks only;\n"
                                "an error on main, as bitcoind's)."},
    [CONF_K_BYTESPERSIGOP] = {"bytespersigop", CONF_KIND_UINT, 0, 0, CONF_MAX_BYTESPERSIGOP, "<n>",
                              STR(CONF_DEFAULT_BYTESPERSIGOP),
                              "Equivalent bytes per sigop in transactions for relay and mining."},
    [CONF_K_LIMITANCESTORCOUNT] =
        {"limitancestorcount", CONF_KIND_UINT, CONF_KF_NONEG, 1, CONF_MAX_LIMIT_COUNT, "<n>",
         STR(CONF_DEFAULT_LIMIT_COUNT),
         "Do not accept transactions if the number of in-mempool ancestors is <n>\n"
         "or more (bitcoind's debug option; peerd's least is 1)."},
    [CONF_K_LIMITANCESTORSIZE] =
        {"limitancestorsize", CONF_KIND_UINT, CONF_KF_NONEG, 1, CONF_MAX_LIMIT_KVB, "<n>",
         STR(CONF_DEFAULT_LIMIT_KVB),
         "Do not accept transactions whose size with all in-mempool ancestors\n"
         "exceeds <n> kilobytes (bitcoind's debug option)."},
    [CONF_K_LIMITDESCENDANTCOUNT] =
        {"limitdescendantcount", CONF_KIND_UINT, CONF_KF_NONEG, 1, CONF_MAX_LIMIT_COUNT, "<n>",
         STR(CONF_DEFAULT_LIMIT_COUNT),
         "Do not accept transactions if any ancestor would have <n> or more\n"
         "in-mempool descendants (bitcoind's debug option; peerd's least is 1)."},
    [CONF_K_LIMITDESCENDANTSIZE] =
        {"limitdescendantsize", CONF_KIND_UINT, CONF_KF_NONEG, 1, CONF_MAX_LIMIT_KVB, "<n>",
         STR(CONF_DEFAULT_LIMIT_KVB),
         "Do not accept transactions if any ancestor would have more than <n>\n"
         "kilobytes of in-mempool descendants (bitcoind's debug option)."},
    [CONF_K_BLOCKMAXWEIGHT] = {"blockmaxweight", CONF_KIND_UINT, CONF_KF_NONEG, 0,
                               CONF_MAX_BLOCKWEIGHT, "<n>", STR(CONF_DEFAULT_BLOCKMAXWEIGHT),
                               "Set maximum BIP141 block weight of the blocks generatetoaddress\n"
                               "mines (raised to -blockreservedweight when below it)."},
    [CONF_K_BLOCKRESERVEDWEIGHT] =
        {"blockreservedweight", CONF_KIND_UINT, CONF_KF_NONEG, CONF_MIN_BLOCKRESERVEDWEIGHT,
         CONF_MAX_BLOCKWEIGHT, "<n>", STR(CONF_DEFAULT_BLOCKRESERVEDWEIGHT),
         "Reserve space for the fixed-size block header plus the largest coinbase\n"
         "transaction the mining software may add to the block."},
    [CONF_K_CHECKBLOCKS] = {"checkblocks", CONF_KIND_UINT, CONF_KF_NONEG, 0, CONF_MAX_CHECKBLOCKS,
                            "<n>", STR(CONF_DEFAULT_CHECKBLOCKS),
                            "How many blocks to check at startup (default: " STR(
                                CONF_DEFAULT_CHECKBLOCKS) ", 0 = all)"},
    [CONF_K_CHECKLEVEL] = {"checklevel", CONF_KIND_UINT, CONF_KF_NONEG, 0, CONF_MAX_CHECKBLOCKS,
                           "<n>", STR(CONF_DEFAULT_CHECKLEVEL),
                           "How thorough the block verification of -checkblocks is: level 0 reads\n"
                           "the blocks from disk, level 1 verifies block validity, level 2\n"
                           "verifies undo data, level 3 checks disconnection of tip blocks,\n"
                           "level 4 tries to reconnect the blocks, each level includes the\n"
                           "checks of the previous levels (0-4, default: " STR(
                               CONF_DEFAULT_CHECKLEVEL) ")"},
    [CONF_K_BLOCKMINTXFEE] =
        {"blockmintxfee", CONF_KIND_AMOUNT, CONF_KF_NONEG, 0, 0, "<amt>", "0.00001",
         "Set lowest fee rate (in BTC/kvB) for transactions to be included in\n"
         "block creation."},
    [CONF_K_METRICSBIND] =
        {"metricsbind", CONF_KIND_ADDR, CONF_KF_NEGCLR | CONF_KF_ZEROCLR, 0, 0, "<addr>[:<port>]",
         "off",
         "Serve Prometheus metrics at http://<addr>:<port>/metrics (port\n"
         "default " STR(
             CONF_DEFAULT_METRICSPORT) "). An IP literal; IPv6\n"
                                       "as [addr]:port. Anyone who can reach it sees the node's\n"
                                       "statistics: keep it on loopback. metricsbind=0 turns it "
                                       "off."},
    [CONF_K_HELP] = {"help", CONF_KIND_BOOL, CONF_KF_CMDLINE | CONF_KF_NONEG, 0, 1, NULL, "",
                     "Print this help and exit (also -h, -?)."},
    [CONF_K_VERSION] = {"version", CONF_KIND_BOOL, CONF_KF_CMDLINE | CONF_KF_NONEG, 0, 1, NULL, "",
                        "Print the version and exit."},
    /* Operator keys (issue 12): log file, pid file, control socket group. */
    [CONF_K_DEBUGLOGFILE] = {"debuglogfile", CONF_KIND_PATH, CONF_KF_NONEG, 0, 0, "<file>", "none",
                             "Also write the log to this file (relative: in the network's\n"
                             "directory, as bitcoind's). SIGHUP reopens it (for logrotate)."},
    [CONF_K_PID] = {"pid", CONF_KIND_PATH, CONF_KF_NONEG, 0, 0, "<file>", "none",
                    "Write peerd's process id to this file at start, removed at exit\n"
                    "(relative: in the network's directory)."},
    [CONF_K_CONTROLSOCKETGROUP] = {"controlsocketgroup", CONF_KIND_PATH, CONF_KF_NONEG, 0, 0,
                                   "<group>", "none",
                                   "Give the control socket to this group, mode 0660, so its\n"
                                   "members can use peerctl."},
    [CONF_K_DEBUGEXCLUDE] = {"debugexclude", CONF_KIND_DEBUG, CONF_KF_NEGCLR, 0, 0, "<category>",
                             "none",
                             "No debug messages of this category, even with -debug=all.\n"
                             "Repeatable. SIGHUP re-reads debug= and debugexclude=."},
    [CONF_K_TEST] = {"test", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<option>", "none",
                     "A test-only option (regtest only), as bitcoind's: addrman (the address\n"
                     "manager's key and random numbers are fixed, so the same calls give the\n"
                     "same tables as bitcoind -test=addrman); peerd's own addrmanloopback\n"
                     "(127.0.0.0/8 addresses are kept, each /16 a network group, so a\n"
                     "network of local nodes can find each other). Repeatable."},
    [CONF_K_CHECKADDRMAN] = {"checkaddrman", CONF_KIND_UINT, 0, 0, CONF_MAX_CHECKADDRMAN, "<n>",
                             "0",
                             "Check the address manager's consistency every <n> operations\n"
                             "(0: never), as bitcoind's debug option."},
    [CONF_K_DNSSEED] = {"dnsseed", CONF_KIND_BOOL, 0, 0, 1, "<0|1>",
                        "1 unless -connect used or -maxconnections=0",
                        "Query for peer addresses via DNS lookup, if low on addresses."},
    [CONF_K_FIXEDSEEDS] = {"fixedseeds", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                           "Allow fixed seeds if DNS seeds don't provide peers."},
    [CONF_K_FORCEDNSSEED] = {"forcednsseed", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                             "Always query for peer addresses via DNS lookup."},
    /* peerd's test option (doc/peers.md), hidden as Core hides its debug options. */
    [CONF_K_DNSSERVER] = {"dnsserver", CONF_KIND_ADDR,
                          CONF_KF_NEGCLR | CONF_KF_ZEROCLR | CONF_KF_HIDDEN, 0, 0, "<ip>[:<port>]",
                          "the system's",
                          "Send every DNS query (seeds, connect=, addnode=) to this server only,\n"
                          "port 53 by default, and read no hosts file. For tests."},
    [CONF_K_PROXY] = {"proxy", CONF_KIND_TEXT, 0, 0, 0, "<ip:port>", "none",
                      "Connect through this SOCKS5 proxy (port default 9050): IPv4, IPv6,\n"
                      "CJDNS and host names; onion too unless -onion says otherwise.\n"
                      "-noproxy or proxy=0: none. Implies -listen=0 and -discover=0 unless\n"
                      "given. See doc/networks.md."},
    [CONF_K_ONION] = {"onion", CONF_KIND_TEXT, 0, 0, 0, "<ip:port>", "-proxy",
                      "SOCKS5 proxy to reach Tor onion services (port default 9050);\n"
                      "-noonion or onion=0: never connect to onion addresses."},
    [CONF_K_PROXYRANDOMIZE] = {"proxyrandomize", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                               "Give the proxy different credentials for every connection, so\n"
                               "Tor puts each on its own circuit (stream isolation)."},
    [CONF_K_ONLYNET] = {"onlynet", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<net>", "all",
                        "Make automatic outbound connections only to this network (ipv4,\n"
                        "ipv6, onion, i2p, cjdns); inbound and manual connections are not\n"
                        "affected. Repeatable."},
    [CONF_K_CJDNSREACHABLE] = {"cjdnsreachable", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                               "This host is on the CJDNS network: fc00::/8 addresses are CJDNS\n"
                               "addresses, dialled directly."},
    [CONF_K_EXTERNALIP] = {"externalip", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<ip>", "none",
                           "Our own public address, announced to peers (an IP literal or a\n"
                           "Tor v3 .onion name, optional port). Repeatable. Implies\n"
                           "-discover=0 unless given."},
    [CONF_K_DISCOVER] = {"discover", CONF_KIND_BOOL, 0, 0, 1, "<0|1>",
                         "1 when listening and no -externalip or -proxy",
                         "Find our own addresses on the local interfaces and announce the\n"
                         "routable ones."},
    [CONF_K_SEEDNODE] = {"seednode", CONF_KIND_PEER, CONF_KF_NEGCLR, 0, 0, "<host>[:<port>]",
                         "none",
                         "Connect to a node to retrieve peer addresses, and disconnect (an\n"
                         "addr-fetch connection). Repeatable; used while fewer than 2\n"
                         "full-relay peers are connected, one every 10 s, as bitcoind."},
    /* HTTP JSON-RPC (issue 23): Core 29's options, texts and defaults (doc/rpc.md). */
    [CONF_K_SERVER] = {"server", CONF_KIND_BOOL, 0, 0, 1, NULL, "1",
                       "Accept command line and JSON-RPC commands"},
    [CONF_K_RPCBIND] = {"rpcbind", CONF_KIND_BIND, CONF_KF_NEGCLR, 0, 0, "<addr>[:port]",
                        "127.0.0.1 and ::1",
                        "Bind to given address to listen for JSON-RPC connections. Do not\n"
                        "expose the RPC server to untrusted networks. This option is ignored\n"
                        "unless -rpcallowip is also passed. Port is optional and overrides\n"
                        "-rpcport. Use [host]:port notation for IPv6."},
    [CONF_K_RPCPORT] = {"rpcport", CONF_KIND_UINT, CONF_KF_NONEG, 1, 65535, "<port>", NULL,
                        "Listen for JSON-RPC connections on <port> (default: 8332, testnet3:\n"
                        "18332, testnet4: 48332, signet: 38332, regtest: 18443)"},
    [CONF_K_RPCALLOWIP] = {"rpcallowip", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<ip>", "none",
                           "Allow JSON-RPC connections from specified source: a single IP\n"
                           "(1.2.3.4), a network/netmask (1.2.3.4/255.255.255.0) or a\n"
                           "network/CIDR (1.2.3.4/24, 0.0.0.0/0, ::/0). Loopback always may."},
    [CONF_K_RPCTHREADS] = {"rpcthreads", CONF_KIND_UINT, CONF_KF_NONEG, 1, 1024, "<n>", "16",
                           "Set the number of threads to service RPC calls"},
    [CONF_K_RPCWORKQUEUE] = {"rpcworkqueue", CONF_KIND_UINT, CONF_KF_NONEG, 1, 65536, "<n>", "64",
                             "Set the depth of the work queue to service RPC calls"},
    [CONF_K_RPCSERVERTIMEOUT] = {"rpcservertimeout", CONF_KIND_UINT, CONF_KF_NONEG, 1, 86400, "<n>",
                                 "30", "Timeout during HTTP requests"},
    [CONF_K_RPCCOOKIEFILE] = {"rpccookiefile", CONF_KIND_TEXT, 0, 0, 0, "<loc>", "data dir",
                              "Location of the auth cookie. Relative paths will be prefixed by a\n"
                              "net-specific datadir location. -norpccookiefile: no cookie."},
    [CONF_K_RPCCOOKIEPERMS] = {"rpccookieperms", CONF_KIND_TEXT, 0, 0, 0, "<readable-by>", "owner",
                               "Set permissions on the RPC auth cookie file so that it is\n"
                               "readable by [owner|group|all]"},
    [CONF_K_RPCAUTH] = {"rpcauth", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<userpw>", "none",
                        "Username and HMAC-SHA-256 hashed password for JSON-RPC connections,\n"
                        "<USERNAME>:<SALT>$<HASH> (Core's share/rpcauth makes one)."},
    [CONF_K_RPCUSER] = {"rpcuser", CONF_KIND_TEXT, 0, 0, 0, "<user>", "none",
                        "Username for JSON-RPC connections"},
    [CONF_K_RPCPASSWORD] = {"rpcpassword", CONF_KIND_TEXT, 0, 0, 0, "<pw>", "none",
                            "Password for JSON-RPC connections"},
    [CONF_K_REST] = {"rest", CONF_KIND_BOOL, 0, 0, 1, NULL, "0",
                     "Accept public REST requests (on the RPC port, without\n"
                     "authentication, as bitcoind; doc/rest.md)"},
    [CONF_K_RPCWHITELIST] = {"rpcwhitelist", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<whitelist>",
                             "none",
                             "Set a whitelist to filter incoming RPC calls for a specific user.\n"
                             "<USERNAME>:<rpc 1>,<rpc 2>,...,<rpc n>; several for one user\n"
                             "are set-intersected."},
    [CONF_K_RPCWHITELISTDEFAULT] = {"rpcwhitelistdefault", CONF_KIND_BOOL, 0, 0, 1, NULL,
                                    "1 if any rpcwhitelist is set",
                                    "Unless 0, users without an rpcwhitelist may call no method\n"
                                    "when any rpcwhitelist is set; 1 with none set: nobody may."},
    [CONF_K_MOCKTIME] = {"mocktime", CONF_KIND_UINT, 0, 0, CONF_MAX_MOCKTIME, "<n>", "0",
                         "Replace actual time with UNIX epoch time, as bitcoind's debug\n"
                         "option: the node's clock stands still there until setmocktime\n"
                         "moves it (doc/operating.md)."},
    [CONF_K_V2TRANSPORT] = {"v2transport", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                            "Support the BIP324 v2 transport protocol (encrypted; advertised\n"
                            "as NODE_P2P_V2): v1 and v2 on the same port, v2 for manual\n"
                            "connections and for peers that advertise it."},
/* Notifications (issue 23, daemon/notify/, doc/operating.md): Core 29's names and texts. */
#define ZMQPUB(K, name, what)                                                                      \
	[CONF_K_##K] = {name,                                                                      \
	                CONF_KIND_TEXTS,                                                           \
	                CONF_KF_NEGCLR,                                                            \
	                0,                                                                         \
	                0,                                                                         \
	                "<address>",                                                               \
	                "none",                                                                    \
	                "Enable publish " what " in <address> (tcp://host:port or ipc://path;\n"   \
	                "repeatable)"}
#define ZMQHWM(K, name, what)                                                                      \
	[CONF_K_##K] = {name,                                                                      \
	                CONF_KIND_UINT,                                                            \
	                CONF_KF_NONEG,                                                             \
	                0,                                                                         \
	                CONF_MAX_ZMQHWM,                                                           \
	                "<n>",                                                                     \
	                "1000",                                                                    \
	                "Set publish " what " outbound message high water mark"}
    ZMQPUB(ZMQPUBHASHBLOCK, "zmqpubhashblock", "hash block"),
    ZMQPUB(ZMQPUBHASHTX, "zmqpubhashtx", "hash transaction"),
    ZMQPUB(ZMQPUBRAWBLOCK, "zmqpubrawblock", "raw block"),
    ZMQPUB(ZMQPUBRAWTX, "zmqpubrawtx", "raw transaction"),
    ZMQPUB(ZMQPUBSEQUENCE, "zmqpubsequence", "hash block and tx sequence"),
    ZMQHWM(ZMQPUBHASHBLOCKHWM, "zmqpubhashblockhwm", "hash block"),
    ZMQHWM(ZMQPUBHASHTXHWM, "zmqpubhashtxhwm", "hash transaction"),
    ZMQHWM(ZMQPUBRAWBLOCKHWM, "zmqpubrawblockhwm", "raw block"),
    ZMQHWM(ZMQPUBRAWTXHWM, "zmqpubrawtxhwm", "raw transaction"),
    ZMQHWM(ZMQPUBSEQUENCEHWM, "zmqpubsequencehwm", "hash sequence"),
    [CONF_K_BLOCKNOTIFY] = {"blocknotify", CONF_KIND_TEXT, CONF_KF_NEGCLR, 0, 0, "<cmd>", "none",
                            "Execute command when the best block changes (%s in cmd is replaced\n"
                            "by block hash)"},
    [CONF_K_STARTUPNOTIFY] = {"startupnotify", CONF_KIND_TEXT, CONF_KF_NEGCLR, 0, 0, "<cmd>",
                              "none", "Execute command on startup."},
    [CONF_K_SHUTDOWNNOTIFY] = {"shutdownnotify", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0, "<cmd>",
                               "none",
                               "Execute command immediately before beginning shutdown. The need\n"
                               "for shutdown may be urgent, so be careful not to delay it long.\n"
                               "Repeatable."},
    [CONF_K_ALERTNOTIFY] = {"alertnotify", CONF_KIND_TEXT, CONF_KF_NEGCLR, 0, 0, "<cmd>", "none",
                            "Execute command when an alert is raised (%s in cmd is replaced by\n"
                            "message)"},
#undef ZMQPUB
#undef ZMQHWM
    [CONF_K_VBPARAMS] = {"vbparams", CONF_KIND_TEXTS, CONF_KF_NEGCLR, 0, 0,
                         "deployment:start:end[:min_activation_height]", "none",
                         "Use given start/end times and min_activation_height for specified\n"
                         "version bits deployment (regtest-only; ignored elsewhere, as Core)."},
    [CONF_K_BLOCKSXOR] = {"blocksxor", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "1",
                          "Whether an XOR-key applies to blocksdir *.dat files. The created\n"
                          "XOR-key will be zeros for an existing blocksdir or when\n"
                          "`-blocksxor=0` is set, and random for a freshly initialized\n"
                          "blocksdir (blocks/xor.dat, as bitcoind 28+)."},
    [CONF_K_REINDEX] = {"reindex", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                        "If enabled, wipe chain state and block index, and rebuild them from\n"
                        "blk*.dat files on disk (before the node starts; an interrupted\n"
                        "reindex starts over at the next start)."},
    [CONF_K_REINDEXCHAINSTATE] = {"reindex-chainstate", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                                  "If enabled, wipe chain state, and rebuild it from blk*.dat\n"
                                  "files on disk (the block index is kept)."},
    [CONF_K_ASSUMEVALID] =
        {"assumevalid", CONF_KIND_HEX256, CONF_KF_NONEG, 0, 0, "<hex>", "the network's",
         "If this block is in the chain assume that it and its ancestors are\n"
         "valid and potentially skip their script verification (0 to verify\n"
         "all; Core 29's block per network, none on regtest; doc/operating.md)."},
    [CONF_K_SIGNETCHALLENGE] =
        {"signetchallenge", CONF_KIND_TEXTS, 0, 0, 0, "<hex>", "the global default signet's",
         "Blocks must satisfy the given script to be considered valid (only\n"
         "for signet networks); the network's message start follows from it\n"
         "and it has no seeds (doc/operating.md)."},
    [CONF_K_BLOCKRECONSTRUCTIONEXTRATXN] =
        {"blockreconstructionextratxn", CONF_KIND_UINT, 0, 0, CONF_MAX_EXTRATXN, "<n>",
         STR(CONF_DEFAULT_EXTRATXN),
         "Extra transactions to keep in memory for compact block reconstructions:\n"
         "the last <n> peerd rejected (under 100 kB), took as orphans or saw\n"
         "replaced (at most " STR(CONF_MAX_EXTRATXN) ")."},
    [CONF_K_TXINDEX] = {"txindex", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                        "Maintain a full transaction index, used by the getrawtransaction rpc\n"
                        "call (indexes/txindex, built in the background)."},
    [CONF_K_BLOCKFILTERINDEX] = {"blockfilterindex", CONF_KIND_TEXT, CONF_KF_NEGCLR, 0, 0, "<type>",
                                 "0",
                                 "Maintain an index of compact filters by block (0, 1 or basic;\n"
                                 "1 is every type: basic). Used by getblockfilter\n"
                                 "(indexes/blockfilter/basic, built in the background)."},
    [CONF_K_ACCEPTSTALEFEEESTIMATES] =
        {"acceptstalefeeestimates", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
         "Read fee estimates even if they are stale (default: 0) fee\n"
         "estimates are considered stale if they are 60 hours old\n"
         "(regtest only)."},
};

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
static const char *debug_names(void)
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

int conf_parse_uint(const char *s, unsigned long long min, unsigned long long max,
                    unsigned long long *out)
{
	const char *p = s;
	bool neg = false;
	unsigned long long v = 0;
	bool overflow = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	/* strtoull would accept leading blanks, '+', "0x" and trailing junk. */
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		unsigned d = (unsigned)(*p - '0');
		if (v > (~0ULL - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (overflow || (neg && v != 0) || v < min || v > max)
		return -2;
	*out = v;
	return 0;
}

int conf_parse_amount(const char *s, int64_t *sat)
{
	/* Core's ParseMoney: blanks around are ignored; at most 10 whole
	 * digits, then optionally '.' and at most 8 fraction digits (a ninth
	 * is an error, even a zero); no sign; at most 21,000,000 BTC. */
	const int64_t coin = 100000000;
	const char *p = s, *end = s + strlen(s);
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p == end)
		return -1;
	int64_t whole = 0, frac = 0;
	int nwhole = 0;
	for (; p < end && *p != '.'; p++) {
		if (!isdigit((unsigned char)*p) || ++nwhole > 10)
			return -1;
		whole = whole * 10 + (*p - '0');
	}
	if (p < end) { /* '.' */
		int64_t mult = coin / 10;
		for (p++; p < end && isdigit((unsigned char)*p) && mult > 0; p++, mult /= 10)
			frac += mult * (*p - '0');
		if (p != end)
			return -1;
	}
	int64_t v = whole * coin + frac;
	if (v > 21000000 * coin)
		return -1;
	*sat = v;
	return 0;
}

static const char *why_set(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *why_set(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return why;
}

/* A DNS name as a resolver would take it: letters, digits, '-', '_' and
 * dots between non-empty labels. Anything all digits and dots must be a
 * dotted-quad IPv4 address instead, so "1.2.3" or "0" is rejected rather
 * than resolved as a name. */
static bool host_name_ok(const char *h)
{
	size_t n = strlen(h);
	bool numeric = true;
	if (n == 0 || n > CONF_MAX_HOST || h[0] == '.' || h[0] == '-' || strstr(h, ".."))
		return false;
	for (const char *p = h; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (!isalnum(ch) && ch != '-' && ch != '.' && ch != '_')
			return false;
		if (!isdigit(ch) && ch != '.')
			numeric = false;
	}
	return !numeric;
}

static bool is_ip(const char *h, int *family)
{
	unsigned char buf[16];
	if (inet_pton(AF_INET, h, buf) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, h, buf) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* The parser behind conf_hostport; NULL or the reason, in why. */
static const char *split_hostport(const char *s, bool ip_only, uint16_t default_port, char *host,
                                  size_t hostlen, uint16_t *port, char *why, size_t whylen)
{
	const char *h = s, *hend, *ps = NULL;
	const char *colon = strchr(s, ':');
	int family = 0;

	if (s[0] == '[') {
		hend = strchr(s, ']');
		if (!hend)
			return why_set(why, whylen, "missing ']' after IPv6 address");
		h = s + 1;
		if (hend[1] == ':')
			ps = hend + 2;
		else if (hend[1] != '\0')
			return why_set(why, whylen, "expected ':<port>' after ']'");
	} else if (colon && !strchr(colon + 1, ':')) {
		hend = colon;
		ps = colon + 1;
	} else {
		/* No colon, or several: a bare IPv6 literal has no port. */
		hend = s + strlen(s);
	}
	size_t hl = (size_t)(hend - h);
	if (hl == 0)
		return why_set(why, whylen, "empty host");
	if (hl >= hostlen || hl > CONF_MAX_HOST)
		return why_set(why, whylen, "host too long (max %d characters)", CONF_MAX_HOST);
	memcpy(host, h, hl);
	host[hl] = '\0';

	if (ps) {
		unsigned long long p;
		int rc = conf_parse_uint(ps, 1, 65535, &p);
		if (rc == -1)
			return why_set(why, whylen, "port is not a number");
		if (rc)
			return why_set(why, whylen, "port out of range 1-65535");
		*port = (uint16_t)p;
	} else {
		*port = default_port;
	}

	bool ip = is_ip(host, &family);
	if (s[0] == '[' && !(ip && family == AF_INET6))
		return why_set(why, whylen, "not an IPv6 address inside []");
	if (ip_only && !ip)
		return why_set(why, whylen, "not an IPv4 or IPv6 address");
	if (!ip && (strchr(host, ':') || !host_name_ok(host)))
		return why_set(why, whylen, "not an IP address or host name");
	return NULL;
}

int conf_hostport(const char *s, uint16_t default_port, char *host, size_t hostlen, uint16_t *port)
{
	char why[128];
	if (!s || !host || hostlen == 0 || !port)
		return CONF_EVALUE;
	return split_hostport(s, false, default_port, host, hostlen, port, why, sizeof(why))
	           ? CONF_EVALUE
	           : 0;
}

const char *conf_check_value(enum conf_key key, const char *v, char *why, size_t whylen)
{
	const struct conf_keydef *k = &conf_keys[key];
	char host[CONF_MAX_HOST + 1];
	uint16_t port;
	unsigned long long n;
	int rc;

	if (*v == '\0' && k->kind != CONF_KIND_TEXT)
		return why_set(why, whylen, "empty value");
	switch (k->kind) {
	case CONF_KIND_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return why_set(why, whylen, "not 0 or 1");
		return NULL;
	case CONF_KIND_UINT:
		rc = conf_parse_uint(v, k->min, k->max, &n);
		if (rc == -1)
			return why_set(why, whylen, "not a number");
		if (rc)
			return why_set(why, whylen, "out of range %llu-%llu", k->min, k->max);
		return NULL;
	case CONF_KIND_PATH:
		if (strlen(v) > CONF_MAX_PATH)
			return why_set(why, whylen, "path too long (max %d bytes)", CONF_MAX_PATH);
		if (key == CONF_K_CONTROLSOCKET && strlen(v) > CONF_MAX_SOCKET_PATH)
			return why_set(why, whylen, "too long for a Unix socket (max %d bytes)",
			               CONF_MAX_SOCKET_PATH);
		return NULL;
	case CONF_KIND_CHAIN:
		if (conf_section_net(v, strlen(v)) < 0)
			return why_set(why, whylen,
			               "unknown network (main, test, testnet4, signet, regtest)");
		return NULL;
	case CONF_KIND_BIND:
		return split_hostport(v, true, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_PEER:
		return split_hostport(v, false, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_ADDR:
		return split_hostport(v, true, 1, host, sizeof(host), &port, why, whylen);
	case CONF_KIND_HEX256: {
		const char *h = v;
		if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
			h += 2;
		size_t len = strlen(h);
		if (len == 0 || len > 64 || strspn(h, "0123456789abcdefABCDEF") != len) {
			if (key ==
			    CONF_K_ASSUMEVALID) /* Core's words (chainstatemanager_args.cpp) */
				return why_set(
				    why, whylen,
				    "Invalid assumevalid block hash specified (%s), must be "
				    "up to 64 hex digits (or 0 to disable)",
				    v);
			return why_set(why, whylen, "not a hex number of 1-64 digits");
		}
		return NULL;
	}
	case CONF_KIND_AMOUNT: {
		int64_t sat;
		if (conf_parse_amount(v, &sat))
			return why_set(why, whylen, "Invalid amount for -%s=<amount>: '%s'",
			               k->name, v);
		return NULL;
	}
	case CONF_KIND_TEXT:
	case CONF_KIND_TEXTS:
		if (key == CONF_K_SIGNETCHALLENGE) { /* Core's words (chainparams.cpp) */
			size_t len = strlen(v);
			if (len % 2 || len > 2 * PROTO_MAX_SIGNET_CHALLENGE ||
			    strspn(v, "0123456789abcdefABCDEF") != len)
				return why_set(why, whylen,
				               "-signetchallenge must be hex, not '%s'.", v);
			return NULL;
		}
		if (strlen(v) > CONF_MAX_HOST + 7)
			return why_set(why, whylen, "too long (max %d bytes)", CONF_MAX_HOST + 7);
		return NULL;
	case CONF_KIND_DEBUG: {
		uint32_t m = 0, c = 0;
		/* Core's words (init's SetLoggingCategories); -help lists the names. */
		if (conf_debug_apply(v, true, &m, &c))
			return why_set(why, whylen, "Unsupported logging category -%s=%s.", k->name,
			               v);
		return NULL;
	}
	}
	return why_set(why, whylen, "internal error: key without a kind");
}

bool conf_debug_enabled(const struct peerd_conf *c, const char *cat)
{
	uint32_t bit = conf_debug_category(cat);
	return bit && (c->debug_mask & bit) == bit;
}

/* ---- -help ---------------------------------------------------------- */

struct hbuf {
	char *p;
	size_t len, cap;
};

static void hb_printf(struct hbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hb_printf(struct hbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->len >= b->cap)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < b->cap - b->len ? (size_t)n : b->cap - b->len - 1;
}

static void hb_indented(struct hbuf *b, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		hb_printf(b, "      %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

const char *conf_help(void)
{
	/* Built once from the table so -help, parsing and defaults cannot drift apart. */
	static char text[32768];
	static bool built;
	if (built)
		return text;

	struct hbuf b = {text, 0, sizeof(text)};
	hb_printf(&b, "Usage: peerd [options]\n"
	              "\n"
	              "Options go on the command line as -key=value (-key alone means key=1,\n"
	              "-nokey means key=0 or an empty list) and in the config file as key=value\n"
	              "(nokey=1 negates; '#' starts a comment). A [main], [test], [testnet4],\n"
	              "[signet] or [regtest] section applies to that network only. The command\n"
	              "line overrides the file, a section overrides the top of the file, and a\n"
	              "repeatable key's list from a higher level replaces the lower one's.\n"
	              "An unknown key or a bad value is an error.\n\n");
	for (int k = 0; k < CONF_K__COUNT; k++) {
		const struct conf_keydef *d = &conf_keys[k];
		if (d->flags & CONF_KF_HIDDEN)
			continue;
		if (d->arg)
			hb_printf(&b, "  -%s=%s\n", d->name, d->arg);
		else
			hb_printf(&b, "  -%s\n", d->name);
		hb_indented(&b, d->help);
		if (k == CONF_K_PORT) {
			hb_printf(&b, "      Default: the network's:");
			for (int net = 0; net < PROTO_NET__COUNT; net++) {
				const struct proto_params *p = proto_params((enum proto_net)net);
				hb_printf(&b, "%s %s %u", net ? "," : "", p->name,
				          (unsigned)p->default_port);
			}
			hb_printf(&b, "\n");
		} else if (k == CONF_K_DEBUG) {
			hb_printf(&b, "      Categories: %s\n", debug_names());
			hb_printf(&b, "      Default: %s\n", d->def);
		} else if (d->def && *d->def) {
			hb_printf(&b, "      Default: %s\n", d->def);
		}
		hb_printf(&b, "\n");
	}
	/* As peerctl's and peertool's help: an example and the exit status. */
	hb_printf(&b, "Example:\n"
	              "  peerd -regtest -datadir=/tmp/dd -bind=127.0.0.1 -debug=net\n"
	              "\n"
	              "Exit status: 0 after a clean shutdown (SIGTERM, SIGINT, the stop method)\n"
	              "and for -help and -version; 1 when startup fails (a bad option or config\n"
	              "value, the data directory locked by another peerd, a port in use), with\n"
	              "one line on stderr saying why.\n");
	built = true;
	return text;
}

const char *conf_strerror(int err)
{
	static const char *const text[] = {
	    [0] = "success",
	    [-CONF_EUSAGE] = "bad command line",
	    [-CONF_EFILE] = "config file unreadable",
	    [-CONF_ESYNTAX] = "config file syntax error",
	    [-CONF_EKEY] = "unknown key",
	    [-CONF_EVALUE] = "bad value",
	    [-CONF_ENOMEM] = "out of memory",
	    [-CONF_EHELP] = "help or version requested",
	};
	if (err > 0 || err < CONF_ERR__MIN)
		return "unknown error";
	return text[-err];
}
