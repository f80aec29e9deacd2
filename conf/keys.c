/* conf/keys.c: the table of keys: each key's name, kind, bounds, default and -help text. */
#include "conf/internal.h"

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
    [CONF_K_COINSTATSINDEX] = {"coinstatsindex", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                               "Maintain coinstats index used by the gettxoutsetinfo RPC\n"
                               "(indexes/coinstats, built in the background)."},
    [CONF_K_PEERBLOCKFILTERS] = {"peerblockfilters", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                                 "Serve compact block filters to peers per BIP 157 (needs\n"
                                 "-blockfilterindex; doc/p2p.md)."},
    [CONF_K_SIGNETSEEDNODE] =
        {"signetseednode", CONF_KIND_PEER, CONF_KF_NEGCLR, 0, 0, "<host>[:<port>]",
         "the global default signet's seeds",
         "Specify a seed node for the signet network, in the hostname[:port]\n"
         "format, e.g. sig.net:1234 (may be used multiple times to specify\n"
         "multiple seed nodes; signet only: it replaces the network's DNS seeds)."},
    [CONF_K_PRUNE] = {"prune", CONF_KIND_TEXT, 0, 0, 0, "<n>", "0",
                      "Reduce storage requirements by enabling pruning (deleting) of old\n"
                      "blocks. This allows the pruneblockchain RPC to be called to delete\n"
                      "specific blocks and enables automatic pruning of old blocks if a\n"
                      "target size in MiB is provided. This mode is incompatible with\n"
                      "-txindex. Warning: Reverting this setting requires re-downloading the\n"
                      "entire blockchain. (default: 0 = disable pruning blocks, 1 = allow\n"
                      "manual pruning via RPC, >=550 = automatically prune block files to\n"
                      "stay under the specified target size in MiB; doc/operating.md)"},
    [CONF_K_FASTPRUNE] = {"fastprune", CONF_KIND_BOOL, 0, 0, 1, "<0|1>", "0",
                          "Use smaller block files and lower minimum prune height for testing\n"
                          "purposes (blk files of 64 KiB; regtest prunes above height 100)."},
};
