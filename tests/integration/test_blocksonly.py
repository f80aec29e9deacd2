"""-blocksonly (issue 11), as Core 29's: the version message asks peers for
no transactions (relay flag 0), no feefilter is sent, a peer that sends or
announces a transaction anyway is disconnected, getnetworkinfo's localrelay
is false, and a sendrawtransaction is still relayed to peers that asked for
transactions. Each scripted scenario runs against peerd and against a Core
started with -blocksonly, and their answers are compared."""
import struct

import pytest

from bitcoind import wait_until
from conftest import P2P, frame, ser_compact
from test_mempool_relay import confirmed_utxos, signed_spend

pytestmark = pytest.mark.interop

MSG_TX, MSG_WTX = 1, 5


def some_tx():
    """A well-formed (unvalidated) legacy transaction: one input, one output."""
    txin = b"\x11" * 32 + struct.pack("<I", 0) + ser_compact(0) + struct.pack("<I", 0xFFFFFFFF)
    txout = struct.pack("<q", 1000) + ser_compact(1) + b"\x51"
    return (struct.pack("<i", 2) + ser_compact(1) + txin + ser_compact(1) + txout
            + struct.pack("<I", 0))


def connect(port):
    """A scripted inbound peer (relay=1, wtxidrelay) after the handshake, and
    the version message the node sent it."""
    p = P2P(port)
    p.handshake()
    version = next(m for m in p.received if m.command == "version")
    return p, version.obj


def scenario(port, rpc):
    """What a node on `port` does with a peer that wants transactions:
    its relay flag, the peer's relaytxes in its getpeerinfo, whether a
    feefilter comes within 3 s, whether a tx message closes the
    connection, whether a tx inv does."""
    out = {}
    p, v = connect(port)
    out["relay"] = bool(v.fRelay)
    out["relaytxes"] = [x["relaytxes"] for x in rpc("getpeerinfo")]
    out["feefilter"] = "feefilter" in p.commands_for(3)
    p.send_raw(frame("tx", some_tx()))
    out["tx_closes"] = p.is_closed(3)
    p.close()
    p, _ = connect(port)
    p.send_raw(frame("inv", ser_compact(1) + struct.pack("<I", MSG_WTX) + b"\x34" * 32))
    out["inv_closes"] = p.is_closed(3)
    p.close()
    return out


def test_blocksonly_peer_treatment_as_core(make_peerd, make_bitcoind):
    core = make_bitcoind(1, args=("-blocksonly",))[0]
    d = make_peerd("-peertimeout=20", "-blocksonly")
    want = {"relay": False, "relaytxes": [True], "feefilter": False, "tx_closes": True,
            "inv_closes": True}
    assert scenario(core.port, core.rpc) == want, "Core -blocksonly"
    assert scenario(d.port, d.rpc) == want, "peerd -blocksonly"
    assert core.rpc("getnetworkinfo")["localrelay"] is False
    assert d.rpc("getnetworkinfo")["localrelay"] is False
    # Neither counts the violators as banned or discouraged for good: a
    # new connection still completes.
    p, _ = connect(d.port)
    p.close()


def test_without_blocksonly_transactions_are_welcome(make_peerd):
    """The same scenario on a default peerd: relay=1, a feefilter, and a tx
    or tx inv keeps the connection (so the test above can fail)."""
    d = make_peerd("-peertimeout=20")
    got = scenario(d.port, d.rpc)
    assert got == {"relay": True, "relaytxes": [True], "feefilter": True,
                   "tx_closes": False, "inv_closes": False}, got
    assert d.rpc("getnetworkinfo")["localrelay"] is True


def test_blocksonly_sendrawtransaction_reaches_core(make_peerd, make_bitcoind):
    a = make_bitcoind(1)[0]
    a.create_wallet()
    a.fund_wallet(per_type=1)
    utxo = confirmed_utxos(a, 1)[0]
    hx, txid, _wtxid = signed_spend(a, utxo)
    d = make_peerd("-peertimeout=20", "-blocksonly")
    d.rpc("addnode", "127.0.0.1:%d" % a.port, "add")
    wait_until(lambda: d.rpc("getblockchaininfo")["blocks"] == a.getblockcount(), 60,
               "peerd to sync from A")
    wait_until(lambda: not d.rpc("getblockchaininfo")["initialblockdownload"], 10,
               "peerd out of IBD")
    # Core sees peerd ask for no transactions; peerd shows Core's own
    # flag (Core's getpeerinfo shows the peer's, blocksonly or not).
    (pa,) = a.getpeerinfo()
    assert pa["relaytxes"] is False, pa
    (pd,) = d.rpc("getpeerinfo")
    assert pd["relaytxes"] is True, pd
    assert txid not in a.getrawmempool()
    assert d.rpc("sendrawtransaction", hx) == txid
    assert txid in d.rpc("getrawmempool")
    wait_until(lambda: txid in a.getrawmempool(), 20, "peerd's own transaction in A's mempool")
    # The connection survived: Core, told relay=0, announced nothing back.
    assert len(d.rpc("getpeerinfo")) == 1
