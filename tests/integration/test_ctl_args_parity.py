"""Hostile arguments to every method peerd and Bitcoin Core both have (issue 18):
the same call to both, the same error code and message back.

The methods are those peerd's `help` lists that Core's `help NAME` knows
(its hidden ones too: generate*, invalidateblock). Each is called first
with a baseline argument list that both answer the same way without
changing anything the later calls depend on (a missing block, a node not
added, submit false, 0 blocks to mine), then with that list changed one
argument at a time: left out, one more, null, each JSON type it is not,
and for numbers negative, fractional and huge values, for strings
malformed ones. Both stand on the same 5-block regtest chain (Core's
blocks given to peerd by submitblock) with empty mempools.

Compared: the error code and message; where the message is Core's whole
help text (a wrong count, -1), the code and the first line (the usage
line): peerd's help text is its own, its usage line is Core's. Two
successes count as the same (the results are the other parity tests'
business). EXCEPTIONS lists where peerd answers otherwise on purpose.

Left out: stop (it would stop the nodes; only a wrong count is sent), and
integers past 64 bits (test_ctl_json_text.py sends those as text: Python's
json would not write them as Core's clients may).
"""
import http.client
import json

import pytest

import bitcoind
from conftest import Peerd, save_failure_logs, stop_core_and_peerd

pytestmark = pytest.mark.interop

# Values that are none of a parameter's JSON type, by type.
WRONG = {"STR": [1, True, [], {}], "NUM": ["1", True, [], {}], "BOOL": ["true", 1, [], {}],
         "ARR": ["x", 1, True, {}], "ANY": []}
# Per type: values of the right JSON type that a method must refuse or clamp.
HOSTILE = {
    "NUM": [-1, 0.5, 2147483648, -2147483649, 9223372036854775807, 1e300],
    "STR": ["", "zz", "00" * 31 + "0", "x" * 300],
    "ANY": [-1, "x", 1e300],
    "ARR": [[None], [1], ["zz"]],
    "BOOL": [],
}

# Where peerd deliberately answers otherwise: (method, predicate on the args, why).
EXCEPTIONS = [
    ("addnode", lambda a: a[:1] == ["1.2.3.4:99999"],
     "an address peerd cannot parse (port past 65535): refused now (-8); Core takes any text"
     " and fails to connect later, silently"),
]


def excepted(method, args):
    """Why peerd answers (method, positional args) otherwise, or None."""
    return next((why for m, pred, why in EXCEPTIONS
                 if m == method and isinstance(args, list) and pred(args)), None)


def outcome(fn):
    """("ok",) for a result, else ("error", code, message)."""
    try:
        fn()
        return ("ok",)
    except bitcoind.RpcError as e:
        return ("error", e.code, e.message)


def core_call(core, method, params):
    """Core's answer to params as given: a list (positional) or a dict (named)."""
    if isinstance(params, list):
        return core.rpc(method, *params)
    body = json.dumps({"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
    conn = http.client.HTTPConnection("127.0.0.1", core.rpcport, timeout=60)
    try:
        conn.request("POST", "/", body, {"Authorization": core._authorization(),
                                         "Content-Type": "application/json"})
        reply = json.loads(conn.getresponse().read())
    finally:
        conn.close()
    if reply.get("error"):
        raise bitcoind.RpcError(method, reply["error"]["code"], reply["error"]["message"])
    return reply["result"]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("ctlargs")
    core = peerd = None
    try:
        core = bitcoind.Bitcoind(binary, tmp / "core", name="core0", small=True)
        core.wait_ready()
        peerd = Peerd(tmp, name="peerd", listen=False)
        core.rpc("generatetodescriptor", 5, "raw(51)")
        for h in range(1, 6):
            assert peerd.rpc("submitblock", core.getblock(core.getblockhash(h), 0)) is None
        assert peerd.rpc("getbestblockhash") == core.getbestblockhash()
        yield core, peerd
    except BaseException:
        save_failure_logs("ctl_args_parity", core, peerd)
        raise
    finally:
        stop_core_and_peerd(core, peerd)


def peerd_outcome(peerd, method, args):
    r = peerd.ctl().call_raw(method, args)
    if "error" in r:
        return ("error", r["error"]["code"], r["error"]["message"])
    return ("ok",)


def comparable(method, o):
    """A wrong count's help text (-1, several lines, opening with the
    method's usage line) compared by its first line."""
    if o[0] == "error" and o[1] == -1 and o[2].startswith(method) and "\n" in o[2]:
        return (o[0], o[1], o[2].split("\n", 1)[0] + " [help text]")
    return o


def core_knows(core, name):
    return not core.rpc("help", name).startswith("help: unknown command")


# Core's hidden methods peerd has too: help lists neither's, help NAME knows them.
HIDDEN = ["addconnection", "addpeeraddress", "estimaterawfee", "generateblock", "generatetoaddress",
          "generatetodescriptor", "getrawaddrman", "invalidateblock", "reconsiderblock", "setmocktime"]


def methods_of(core, peerd):
    """The methods both have: peerd's help list and the hidden ones, each known to Core's help."""
    names = [line.split()[0] for line in peerd.rpc("help").splitlines()
             if line and not line.startswith("==")]
    names += [n for n in HIDDEN if n not in names and peerd.rpc("help", n).split()[0] == n]
    return [n for n in names if core_knows(core, n)]


def help_sections(text):
    """`help`'s list as [(category, method, usage line)] in printed order."""
    out, cat = [], None
    for line in text.splitlines():
        if line.startswith("== "):
            cat = line
        elif line:
            out.append((cat, line.split()[0], line))
    return out


def test_help_lists_as_core(nodes):
    """`help` alone: the methods both list in the same category, in the same
    order, with the same usage line; Core's hidden ones listed by neither;
    what only peerd lists is its own (getstats) or in a category this Core
    build lacks (getzmqnotifications: Core without ZMQ)."""
    core, peerd = nodes
    ours, theirs = help_sections(peerd.rpc("help")), help_sections(core.rpc("help"))
    theirs_names = {m for _, m, _ in theirs}
    both = [x for x in ours if x[1] in theirs_names]
    assert both == [x for x in theirs if x[1] in {m for _, m, _ in both}]
    assert len(both) > 45
    only_ours = [(c, m) for c, m, _ in ours if m not in theirs_names]
    assert only_ours == [("== Control ==", "getstats"), ("== Zmq ==", "getzmqnotifications")], only_ours
    for m in HIDDEN:
        assert core_knows(core, m) and peerd.rpc("help", m).split()[0] == m, m


def test_hostile_arguments_answer_as_core(nodes):
    core, peerd = nodes
    h1 = core.getblockhash(1)
    cb1 = core.getblock(h1)["tx"][0]
    unknown = "00" * 32
    desc = "raw(0014%s)" % ("11" * 20)
    addr = core.deriveaddresses(core.getdescriptorinfo(desc)["descriptor"])[0]
    # Each method's parameters (Core's types) and a baseline both answer
    # alike without changing state the other calls depend on.
    spec = {
        "addnode": (["STR", "STR", "BOOL"], ["127.0.0.1:1", "remove", False]),
        "disconnectnode": (["STR", "NUM"], ["127.0.0.1:1"]),
        "getaddednodeinfo": (["STR"], ["127.0.0.1:1"]),
        "getnodeaddresses": (["NUM", "STR"], [1, "ipv4"]),
        "setban": (["STR", "STR", "NUM", "BOOL"], ["127.0.0.2", "remove", 0, False]),
        "setnetworkactive": (["BOOL"], [True]),
        "logging": (["ARR", "ARR"], [[], []]),
        "help": (["STR"], ["getblockcount"]),
        "getblockhash": (["NUM"], [1]),
        "getblockheader": (["STR", "BOOL"], [h1, True]),
        "getblock": (["STR", "ANY"], [h1, 1]),
        "gettxout": (["STR", "NUM", "BOOL"], [cb1, 0, True]),
        "gettxoutsetinfo": (["STR", "ANY", "BOOL"], ["none"]),
        "verifychain": (["NUM", "NUM"], [3, 1]),
        "invalidateblock": (["STR"], [unknown]),
        "reconsiderblock": (["STR"], [unknown]),
        "submitblock": (["STR", "STR"], ["00"]),
        "submitheader": (["STR"], ["00"]),
        "generatetoaddress": (["NUM", "STR", "NUM"], [0, addr, 1]),
        "generatetodescriptor": (["NUM", "STR", "NUM"], [0, "raw(51)", 1]),
        "generateblock": (["STR", "ARR", "BOOL"], ["raw(51)", ["00"], False]),
        "getrawmempool": (["BOOL", "BOOL"], [False, False]),
        "getmempoolentry": (["STR"], [unknown]),
        "getmempoolancestors": (["STR", "BOOL"], [unknown, False]),
        "getmempooldescendants": (["STR", "BOOL"], [unknown, False]),
        "getrawtransaction": (["STR", "ANY", "STR"], [cb1, 0, h1]),
        "sendrawtransaction": (["STR", "ANY", "ANY"], ["00", 0.1, 0]),
        "testmempoolaccept": (["ARR", "ANY"], [["00"], 0.1]),
        "submitpackage": (["ARR", "ANY", "ANY"], [["00"], 0.1, 0]),
        "prioritisetransaction": (["STR", "NUM", "NUM"], ["11" * 32, 0, 1000]),
    }
    common = methods_of(core, peerd)
    calls = []
    for m in common:
        if m == "stop":
            # Would stop the nodes: Core's stop takes a hidden (test-only)
            # wait argument, so only two arguments are an error to both.
            calls.append((m, [1, 1]))
            continue
        types, base = spec.get(m, ([], []))
        if m != "savemempool":
            calls.append((m, list(base)))
        calls.append((m, list(base) + [None] * (len(types) - len(base)) + [1]))  # one too many
        if types:
            calls.append((m, [None] * (len(types) + 1)))
        if base:
            calls.append((m, base[:-1]))  # one left out (fine when it was optional)
            calls.append((m, []))
        full = list(base) + [None] * (len(types) - len(base))
        for i, t in enumerate(types):
            for v in [None] + WRONG[t] + HOSTILE[t]:
                calls.append((m, full[:i] + [v] + full[i + 1:]))
    # The cases the issue names.
    calls += [("getblockhash", [2147483648]), ("verifychain", [-1]), ("verifychain", [5, -1]),
              ("addnode", ["1.2.3.4:99999", "onetry"]), ("addnode", ["127.0.0.1:1", "remove", True]),
              ("gettxoutsetinfo", ["muhash"]),
              ("generatetodescriptor", [2, None]), ("submitheader", [None]),
              ("prioritisetransaction", ["11" * 32, 1])]
    # Named arguments (a dict goes as JSON-RPC named params): holes, aliases,
    # unknown names, "args" with names, a name given twice that way.
    t = "11" * 32
    calls += [("getblockhash", {"height": 1}), ("getblockhash", {"heigth": 1}), ("getblockhash", {}),
              ("getblockhash", {"height": None}), ("getblock", {"blockhash": h1, "verbose": 0}),
              ("getblock", {"args": [h1], "verbosity": 0}), ("getblock", {"args": [h1], "blockhash": h1}),
              ("verifychain", {"nblocks": 1}), ("prioritisetransaction", {"txid": t, "fee_delta": 1}),
              ("prioritisetransaction", {"txid": t, "dummy": 0}),
              ("gettxout", {"txid": cb1, "n": 0, "include_mempool": "x"}),
              ("gettxout", {"n": "x", "txid": 5}), ("help", {"command": "getblockcount"}),
              ("setban", {"subnet": "127.0.0.2", "command": "remove", "absolute": 1})]
    # State-changing, last: genesis invalidated (Core accepts it) and reconsidered.
    genesis = core.getblockhash(0)
    calls += [("invalidateblock", [genesis]), ("reconsiderblock", [genesis])]
    mismatches, excused = [], []
    for m, args in calls:
        a = outcome(lambda: core_call(core, m, args))
        b = peerd_outcome(peerd, m, args)
        if comparable(m, a) == comparable(m, b):
            continue
        why = excepted(m, args)
        line = "%s %s:\n    Core  %r\n    peerd %r" % (m, json.dumps(args)[:120], comparable(m, a), comparable(m, b))
        (excused if why else mismatches).append(line + ("\n    (%s)" % why if why else ""))
    print("%d calls to %d methods; %d answered otherwise on purpose:\n%s"
          % (len(calls), len(common), len(excused), "\n".join(excused)))
    assert not mismatches, "%d of %d calls answered otherwise than Core:\n%s" % (
        len(mismatches), len(calls), "\n".join(mismatches))
    # Both chains are whole again.
    assert peerd.rpc("getbestblockhash") == core.getbestblockhash()


def test_core_only_method_says_not_supported(nodes):
    core, peerd = nodes
    for m in ("getblockfrompeer", "createrawtransaction", "getblockstats", "echo"):
        assert core_knows(core, m)
        r = peerd.ctl().call_raw(m, [])
        # Core's code for an unknown method, which scripts test for; a message saying why.
        assert r["error"] == {"code": -32601, "message": "Method not found (%s is a Bitcoin Core "
                              "method peerd does not support)" % m}, r
