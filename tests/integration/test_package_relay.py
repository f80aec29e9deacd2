"""1p1c package relay through peerd (Core 28+'s opportunistic package relay):
a zero-fee TRUC parent and its fee-paying child, submitted as a package on
Core A, reach Core B only through peerd (Core A -> peerd -> Core B, each
knowing only peerd). Neither transaction can travel alone: A and peerd never
announce the zero-fee parent (below the feefilter), and validated alone it
fails for its feerate (reconsiderable). So peerd must hold the child as an
orphan, fetch the parent and validate the two as a package, then B does the
same with peerd. Without package relay the pair never reaches B."""
from decimal import Decimal

import pytest

from bitcoind import wait_until
from mempool_craft import Coin, TRUE, p2wsh
from mempool_parity_env import spend
from test_mempool_relay import line

pytestmark = pytest.mark.interop


def truc_cpfp_pair(a):
    """A P2WSH(OP_TRUE) coin of A's wallet, confirmed; a 0-fee v3 parent spending it and
    a v3 child paying 5,000 sats for both."""
    addr = a.rpc("decodescript", "51")["segwit"]["address"]
    txid = a.rpc("sendtoaddress", addr, Decimal("0.5"), wallet=a.wallet)
    raw = a.rpc("gettransaction", txid, wallet=a.wallet)["hex"]
    tx = a.rpc("decoderawtransaction", raw)
    a.mine(1)
    n = next(o["n"] for o in tx["vout"] if o["scriptPubKey"].get("address") == addr)
    coin = Coin(txid, n, 50_000_000, p2wsh(TRUE), "wsh_true")
    parent = spend([coin], fee=0, version=3)
    child = spend([parent.out(0)], fee=5000, version=3)
    return parent, child


def test_1p1c_core_peerd_core(make_peerd, make_bitcoind):
    a, b, d = line(make_peerd, make_bitcoind, per_type=1)
    parent, child = truc_cpfp_pair(a)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 30, "B at A's tip")
    wait_until(lambda: d.rpc("getbestblockhash") == a.getbestblockhash(), 30, "peerd at A's tip")
    # Alone the parent is refused (its feerate), on every node.
    r = d.rpc("testmempoolaccept", [parent.hex()])[0]
    assert r["allowed"] is False and r["reject-reason"] == "min relay fee not met", r
    r = a.rpc("submitpackage", [parent.hex(), child.hex()])
    assert r["package_msg"] == "success", r
    want = {parent.txid, child.txid}
    wait_until(lambda: want <= set(d.rpc("getrawmempool")), 60, "the pair in peerd's mempool")
    wait_until(lambda: want <= set(b.getrawmempool()), 60, "the pair in B's mempool")
    e = d.rpc("getmempoolentry", child.txid)
    assert e["ancestorcount"] == 2 and e["depends"] == [parent.txid], e
    assert d.rpc("getstats")["relay"] is not None


def test_1p1c_core_core_core(make_bitcoind):
    """The same pair through Core C in peerd's place: Core relays it as peerd does."""
    a, c, b = make_bitcoind(3)
    a.create_wallet()
    a.fund_wallet(per_type=1)
    a.connect_to("127.0.0.1:%d" % c.port)
    c.connect_to("127.0.0.1:%d" % b.port)
    a.mine(1)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B to sync through C")
    parent, child = truc_cpfp_pair(a)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 30, "B at A's tip")
    r = a.rpc("submitpackage", [parent.hex(), child.hex()])
    assert r["package_msg"] == "success", r
    want = {parent.txid, child.txid}
    wait_until(lambda: want <= set(c.getrawmempool()), 60, "the pair in C's mempool")
    wait_until(lambda: want <= set(b.getrawmempool()), 60, "the pair in B's mempool")


def test_1p1c_parent_first(make_peerd, make_bitcoind):
    """The other order, from a scripted peer: the parent first (refused alone and kept in
    the reconsiderable filter), then the child (an orphan: peerd asks for the parent again,
    the filter notwithstanding), then the parent again: the two go in as a package and on
    to Core B."""
    import time

    from conftest import P2P, frame
    from test_mempool_relay import parse_inv

    a, b, d = line(make_peerd, make_bitcoind, per_type=1)
    parent, child = truc_cpfp_pair(a)
    wait_until(lambda: d.rpc("getbestblockhash") == a.getbestblockhash(), 30, "peerd at A's tip")
    p = P2P(d.port)
    p.handshake()
    p.send_raw(frame("tx", bytes.fromhex(parent.hex())))
    wait_until(lambda: d.rpc("getstats")["inventory"]["tx_rejected"] >= 1, 10, "the parent refused")
    assert parent.txid not in d.rpc("getrawmempool")
    p.send_raw(frame("tx", bytes.fromhex(child.hex())))
    deadline = time.monotonic() + 10
    asked = False
    while not asked and time.monotonic() < deadline:
        m = p.recv(max(0.01, deadline - time.monotonic()))
        if m.command == "getdata":
            asked = any(h == parent.txid for _, h in parse_inv(m.payload))
    assert asked, "the parent was not asked for again"
    p.send_raw(frame("tx", bytes.fromhex(parent.hex())))
    want = {parent.txid, child.txid}
    wait_until(lambda: want <= set(d.rpc("getrawmempool")), 15, "the pair in peerd's mempool")
    wait_until(lambda: want <= set(b.getrawmempool()), 60, "the pair in B's mempool")
    p.close()
