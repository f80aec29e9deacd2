"""getblocktemplate and getmininginfo as Bitcoin Core 29's (issue 25).

The two nodes of the parity suite stand on the same chain with the same
mempool (every transaction sent to both); each template must equal Core's
field for field but curtime and longpollid (the clock and a counter of
Core's own). Core keeps a template until the tip changes, or the mempool
changed and 5 seconds passed: both are asked after the same pause. A
block made from peerd's template (coinbase, witness commitment, merkle
root, nonce, all by hand here) is a valid proposal to both and is accepted
by both; broken ones get the same reason from both, and so do the
malformed requests. A longpoll waits on both until a block comes, or
until Core's minute when the id's mempool counter is not the node's, and
answers the same template; peerd's ends at shutdown with Core's -9."""
import base64
import http.client
import json
import struct
import threading
import time
from decimal import Decimal

import pytest

import bitcoind
from conftest import Ctl, Peerd, free_port, RpcError as CtlError, sha256d, ser_compact
from mempool_craft import TRUE, p2wsh
from mempool_parity_env import COIN, SPK, answer, env, norm, spend  # noqa: F401 (env: the module fixture)

pytestmark = pytest.mark.interop

RULES = {"rules": ["segwit"]}
OP_TRUE_ADDR = "bcrt1qft5p2uhsdcdc3l2ua4ap5qqfg4pjaqlp250x7us7a8qqhrxrxfsqseac85"
CLOCK = ("curtime", "longpollid")


def both(env, method, *params):
    """Core's and peerd's answers (a result, or ("error", code, message))."""
    return answer(lambda: env.core.rpc(method, *params)), answer(lambda: env.peerd.rpc(method, *params))


def compare_templates(env):
    a, b = both(env, "getblocktemplate", RULES)
    assert not isinstance(a, tuple) and not isinstance(b, tuple), (a, b)
    for k in CLOCK:
        assert k in a and k in b, k
    ca = {k: v for k, v in a.items() if k not in CLOCK}
    cb = {k: v for k, v in b.items() if k not in CLOCK}
    assert cb == ca, "peerd\n  %r\nCore\n  %r" % (cb, ca)
    return b


def compare_mininginfo(env):
    a, b = both(env, "getmininginfo")
    a.pop("warnings")
    b.pop("warnings")
    assert norm(b) == a


def script_num(n):
    """Core's CScript() << n for a block height."""
    if n == 0:
        return b"\x00"
    if n <= 16:
        return bytes([0x50 + n])
    out = n.to_bytes((n.bit_length() + 8) // 8, "little")
    return bytes([len(out)]) + out


def block_from(t, value_delta=0, bad_root=False):
    """A block of template t, paying coinbasevalue (+ value_delta) to OP_TRUE, ground to its bits."""
    sig = script_num(t["height"]) + b"\x00"
    cb_in = b"\x00" * 32 + b"\xff\xff\xff\xff" + ser_compact(len(sig)) + sig + b"\xff\xff\xff\xff"
    outs = [struct.pack("<q", t["coinbasevalue"] + value_delta) + b"\x01" + TRUE]
    commit = bytes.fromhex(t["default_witness_commitment"])
    outs.append(struct.pack("<q", 0) + ser_compact(len(commit)) + commit)
    body = b"\x01" + cb_in + ser_compact(len(outs)) + b"".join(outs)
    cb_txid = sha256d(struct.pack("<i", 2) + body + b"\x00" * 4)
    cb = struct.pack("<i", 2) + b"\x00\x01" + body + b"\x01\x20" + b"\x00" * 32 + b"\x00" * 4
    leaves = [cb_txid] + [bytes.fromhex(x["txid"])[::-1] for x in t["transactions"]]
    while len(leaves) > 1:
        if len(leaves) % 2:
            leaves.append(leaves[-1])
        leaves = [sha256d(leaves[i] + leaves[i + 1]) for i in range(0, len(leaves), 2)]
    root = leaves[0] if not bad_root else sha256d(leaves[0])
    bits = int(t["bits"], 16)
    target = (bits & 0xFFFFFF) << (8 * ((bits >> 24) - 3))
    prev = bytes.fromhex(t["previousblockhash"])[::-1]
    for nonce in range(1 << 20):
        hdr = struct.pack("<i32s32sIII", t["version"], prev, root, t["curtime"], bits, nonce)
        if int.from_bytes(sha256d(hdr), "little") <= target:
            break
    txs = [cb] + [bytes.fromhex(x["data"]) for x in t["transactions"]]
    return (hdr + ser_compact(len(txs)) + b"".join(txs)).hex()


def test_request_errors_as_core(env):
    for req in ({}, {"rules": []}, {"rules": ["csv"]}, {"mode": "nonsense", "rules": ["segwit"]},
                {"mode": 5}, {"mode": "proposal"}, {"mode": "proposal", "data": 7},
                {"mode": "proposal", "data": "zz"}, {"mode": "proposal", "data": "00"},
                {"rules": ["segwit", 3]}):
        a, b = both(env, "getblocktemplate", req)
        assert isinstance(a, tuple), (req, a)
        assert b == a, req
    a, b = both(env, "getblocktemplate")
    assert a[1] == b[1] == -1


def test_template_as_core(env):
    env.mine(1)
    # An empty mempool, on a new tip: both make a new template.
    t = compare_templates(env)
    assert t["transactions"] == [] and t["version"] == 0x20000000
    compare_mininginfo(env)

    coins = env.fund([(COIN // 10, SPK["wsh_true"])] * 10, ["wsh_true"] * 10)

    def send(t):
        env.send(t)
        return t

    singles = [send(spend([coins.pop()], fee=fee)) for fee in (3_000, 9_000, 1_500, 20_000)]
    parent = send(spend([coins.pop()], [(COIN // 10 - 300 - 50_000, p2wsh(TRUE)), (50_000, p2wsh(TRUE))], fee=300))
    env.send(spend([parent.out(0)], fee=40_000))
    env.send(spend([parent.out(1)], fee=5_000))
    up = send(spend([coins.pop()], fee=1_000))
    assert env.core.rpc("prioritisetransaction", up.txid, 0, 100_000) is True
    assert env.peerd.rpc("prioritisetransaction", up.txid, 0, 100_000) is True
    t = compare_templates(env)  # the tip changed with fund(): new on both
    assert len(t["transactions"]) == 8
    assert t["transactions"][0]["txid"] == up.txid and t["transactions"][0]["fee"] < 100_000
    assert any(x["depends"] for x in t["transactions"])
    compare_mininginfo(env)

    # More transactions: both keep the template for 5 s, then make a new one.
    late = send(spend([coins.pop()], fee=7_000))
    time.sleep(6)
    t = compare_templates(env)
    assert late.txid in [x["txid"] for x in t["transactions"]]
    compare_mininginfo(env)

    # A prioritisation alone is a change of the mempool too (Core's nTransactionsUpdated).
    cheap = singles[2]
    for node in (env.core, env.peerd):
        assert node.rpc("prioritisetransaction", cheap.txid, 0, 500_000) is True
    time.sleep(6)
    t = compare_templates(env)
    assert t["transactions"][0]["txid"] == cheap.txid

    # Proposals: a block of the template is valid for both, and accepted by both.
    good = block_from(t)
    assert both(env, "getblocktemplate", {"mode": "proposal", "data": good}) == (None, None)
    for bad in (block_from(t, value_delta=1), block_from(t, bad_root=True)):
        a, b = both(env, "getblocktemplate", {"mode": "proposal", "data": bad})
        assert isinstance(a, str) and b == a, (a, b)
    assert env.peerd.rpc("submitblock", good) is None
    assert env.core.rpc("submitblock", good) is None
    assert env.core.getbestblockhash() == env.peerd.rpc("getbestblockhash")
    # The same block again, and one no longer on the tip.
    assert both(env, "getblocktemplate", {"mode": "proposal", "data": good}) == ("duplicate", "duplicate")
    stale = block_from(t, value_delta=-1)
    a, b = both(env, "getblocktemplate", {"mode": "proposal", "data": stale})
    assert a == b == "inconclusive-not-best-prevblk"
    t = compare_templates(env)
    assert t["transactions"] == []


def ctl_error(peerd, *params):
    with pytest.raises(CtlError) as e:
        peerd.rpc("getblocktemplate", *params)
    return e.value.code, e.value.message


def test_mainnet_without_peers_and_signet_rules(tmp_path):
    """Core's checks that need another network: on mainnet a template needs a
    peer (-9, Core's RPC_CLIENT_NOT_CONNECTED; the text names peerd where
    Core's names itself); signet wants its own rule and says so in the
    template (rules "!signet", signet_challenge)."""
    main = Peerd(tmp_path, args=("-connect=0",), name="main", listen=False, chain="main")
    try:
        assert ctl_error(main, RULES) == (-9, "peerd is not connected!")
        # The mode and the request's shape are checked first, as Core's.
        assert ctl_error(main, {"mode": "x"}) == (-8, "Invalid mode")
    finally:
        main.stop()
    signet = Peerd(tmp_path, args=("-connect=0",), name="signet", listen=False, chain="signet")
    try:
        assert ctl_error(signet, RULES) == (
            -8, 'getblocktemplate must be called with the signet rule set (call with {"rules": ["segwit", "signet"]})')
        t = signet.rpc("getblocktemplate", {"rules": ["segwit", "signet"]})
        assert t["rules"] == ["csv", "!segwit", "!signet", "taproot"]
        assert t["signet_challenge"].startswith("5121") and t["height"] == 1
        assert "signet_challenge" in signet.rpc("getmininginfo")
    finally:
        signet.stop()


def test_getnetworkhashps_as_core(env):
    tip = env.height()
    seen = set()
    for params in ((), (120,), (-1,), (1,), (5, 10), (1000, tip), (-1, 3), (50, 0),
                   (0,), (-2,), (1, tip + 1), (1, -2), (1.5,), ("x",)):
        a, b = both(env, "getnetworkhashps", *params)
        assert norm(b) == a, params
        seen.add(a if not isinstance(a, tuple) else a[1])
    assert any(isinstance(v, (int, float, Decimal)) and v > 0 for v in seen), seen


# ---- longpoll ---------------------------------------------------------------


def longpoll_in_thread(call):
    """Run call() in a thread; the returned dict gets "answer" and "seconds" when it returns."""
    out = {}

    def run():
        t0 = time.monotonic()
        out["answer"] = answer(call)
        out["seconds"] = time.monotonic() - t0

    th = threading.Thread(target=run, daemon=True)
    th.start()
    out["thread"] = th
    return out


def peerd_call(peerd, method, *params, timeout=120.0):
    """A call on a control connection of its own (a longpoll holds its line)."""
    c = Ctl(peerd.sock_path, timeout=timeout)
    try:
        return c.call(method, *params)
    finally:
        c.close()


def test_longpoll_waits_for_a_block_as_core(env):
    """A longpollid naming the tip waits on both until a block comes (mined by
    another call), then both answer a template on the new tip of the same
    shape; meanwhile peerd answers other calls. An id naming another block,
    or a malformed one, is answered at once, as Core's."""
    env.mine(1)
    a, b = both(env, "getblocktemplate", RULES)
    tip = env.core.getbestblockhash()
    assert a["longpollid"].startswith(tip) and b["longpollid"].startswith(tip)
    req_core = dict(RULES, longpollid=a["longpollid"])
    req_peerd = dict(RULES, longpollid=b["longpollid"])
    core_lp = longpoll_in_thread(lambda: env.core.rpc("getblocktemplate", req_core, timeout=120))
    peerd_lp = longpoll_in_thread(lambda: peerd_call(env.peerd, "getblocktemplate", req_peerd))
    time.sleep(1.5)
    assert "answer" not in core_lp and "answer" not in peerd_lp, (core_lp, peerd_lp)
    # The loop and the validation thread are free while it waits.
    assert env.peerd.rpc("getbestblockhash") == tip
    assert env.peerd.rpc("getblocktemplate", RULES)["previousblockhash"] == tip
    active = [c["method"] for c in env.peerd.rpc("getrpcinfo")["active_commands"]]
    assert "getblocktemplate" in active, active
    new_tip = env.mine(1)[-1]
    for lp in (core_lp, peerd_lp):
        lp["thread"].join(30)
        assert "answer" in lp, "the longpoll did not return after the block"
    ta, tb = core_lp["answer"], peerd_lp["answer"]
    assert not isinstance(ta, tuple) and not isinstance(tb, tuple), (ta, tb)
    assert ta["previousblockhash"] == tb["previousblockhash"] == new_tip
    assert ta["longpollid"].startswith(new_tip) and tb["longpollid"].startswith(new_tip)
    assert list(tb) == list(ta)
    ca = {k: v for k, v in ta.items() if k not in CLOCK}
    cb = {k: v for k, v in tb.items() if k not in CLOCK}
    assert cb == ca, "peerd\n  %r\nCore\n  %r" % (cb, ca)

    # The old tip's id: the tip already moved, so both answer at once.
    t0 = time.monotonic()
    a, b = both(env, "getblocktemplate", req_core), both(env, "getblocktemplate", req_peerd)
    assert time.monotonic() - t0 < 10
    assert a[0]["previousblockhash"] == a[1]["previousblockhash"] == new_tip
    assert b[0]["previousblockhash"] == b[1]["previousblockhash"] == new_tip
    for lpid in ("abc", "zz" * 32, "", new_tip[:63], "g" + new_tip[1:] + "12"):
        a, b = both(env, "getblocktemplate", dict(RULES, longpollid=lpid))
        assert isinstance(a, tuple) and b == a, (lpid, a, b)


def test_longpoll_mempool_counter_after_a_minute_as_core(env):
    """An id on the tip whose mempool counter is not the node's: neither
    answers before Core's minute, both answer at its first check."""
    tip = env.core.getbestblockhash()
    lpid = tip + "4000000000"
    req = dict(RULES, longpollid=lpid)
    core_lp = longpoll_in_thread(lambda: env.core.rpc("getblocktemplate", req, timeout=120))
    peerd_lp = longpoll_in_thread(lambda: peerd_call(env.peerd, "getblocktemplate", req))
    for lp in (core_lp, peerd_lp):
        lp["thread"].join(90)
        assert "answer" in lp, "no answer in 90 s"
    for name, lp in (("Core", core_lp), ("peerd", peerd_lp)):
        assert 58 <= lp["seconds"] <= 75, (name, lp["seconds"])
        assert lp["answer"]["previousblockhash"] == tip, (name, lp["answer"])


def http_call(port, method, *params):
    """One JSON-RPC call over peerd's HTTP door (-rpcuser lp, -rpcpassword lp)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        body = json.dumps({"jsonrpc": "1.0", "id": 1, "method": method, "params": list(params)})
        c.request("POST", "/", body, {"Authorization": "Basic " + base64.b64encode(b"lp:lp").decode(),
                                      "Content-Type": "application/json"})
        reply = json.loads(c.getresponse().read())
    finally:
        c.close()
    if reply.get("error"):
        raise CtlError(reply["error"]["code"], reply["error"]["message"])
    return reply["result"]


def test_longpoll_http_and_shutdown(tmp_path):
    """The same wait through the HTTP door (its worker waits; the loop does
    not), ended by a block from another call; and waiting longpolls, on
    both doors, hold neither the loop nor the shutdown: SIGTERM answers
    them with Core's -9 "Shutting down" and peerd exits at once."""
    port = free_port()
    p = Peerd(tmp_path, args=("-connect=0", "-rpcport=%d" % port, "-rpcuser=lp", "-rpcpassword=lp"),
              name="lp", listen=False)
    try:
        p.rpc("generatetoaddress", 1, OP_TRUE_ADDR)
        t = http_call(port, "getblocktemplate", RULES)
        req = dict(RULES, longpollid=t["longpollid"])
        lp = longpoll_in_thread(lambda: http_call(port, "getblocktemplate", req))
        time.sleep(1.0)
        assert "answer" not in lp
        assert http_call(port, "getblockcount") == 1
        new_tip = p.rpc("generatetoaddress", 1, OP_TRUE_ADDR)[0]
        lp["thread"].join(30)
        assert lp["answer"]["previousblockhash"] == new_tip, lp

        req = dict(RULES, longpollid=new_tip + "0")
        waiting = [longpoll_in_thread(lambda: http_call(port, "getblocktemplate", req)),
                   longpoll_in_thread(lambda: peerd_call(p, "getblocktemplate", req))]
        time.sleep(1.0)
        assert all("answer" not in w for w in waiting)
        rc, took = p.stop(timeout=10)
        assert rc == 0, p.log()
        assert took < 5, took
        for w in waiting:
            w["thread"].join(10)
            assert w.get("answer") == ("error", -9, "Shutting down"), w
    finally:
        p.kill()


def test_many_longpolls_hold_no_other_call(tmp_path):
    """Twenty longpolls waiting (more than the sixteen chain jobs the control
    socket lets out at once) are not jobs out: other clients' calls, loop
    and chain ones, are answered meanwhile; one block answers all twenty."""
    p = Peerd(tmp_path, args=("-connect=0",), name="many", listen=False)
    try:
        p.rpc("generatetoaddress", 1, OP_TRUE_ADDR)
        lpid = p.rpc("getblocktemplate", RULES)["longpollid"]
        req = dict(RULES, longpollid=lpid)
        waiting = [longpoll_in_thread(lambda: peerd_call(p, "getblocktemplate", req)) for _ in range(20)]
        bitcoind.wait_until(lambda: sum(c["method"] == "getblocktemplate"
                                        for c in p.rpc("getrpcinfo")["active_commands"]) == 20,
                            30, "twenty longpolls parked")
        c = Ctl(p.sock_path, timeout=10)
        try:
            assert c.call("getblockcount") == 1
            tip = c.call("getbestblockhash")
            assert c.call("getblockheader", tip)["height"] == 1
            assert c.call("getblocktemplate", RULES)["longpollid"] == lpid
        finally:
            c.close()
        assert all("answer" not in w for w in waiting)
        new_tip = p.rpc("generatetoaddress", 1, OP_TRUE_ADDR)[0]
        for w in waiting:
            w["thread"].join(30)
            assert w["answer"]["previousblockhash"] == new_tip, w
    finally:
        p.stop(timeout=10)
        p.kill()
