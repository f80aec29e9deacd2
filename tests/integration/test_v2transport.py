"""BIP324 v2 transport (issue 21): peerd against a real Bitcoin Core, both ways.

Core connects to peerd and peerd to Core with v2; both getpeerinfo say v2
with the same session id; blocks and transactions flow over v2;
-v2transport=0 on either side meets over v1; a v1-only peer (a scripted
one) is reached after peerd's v2 attempt is closed. The hostile cases
(truncated key, garbage without terminator, a flipped tag, an oversized
length) run in tests/unit/test_daemon_v2transport.c against the state
machine, and here against a running peerd with the scripted peer.
"""
import os
import time
from decimal import Decimal

import pytest

from bitcoind import wait_until
from conftest import P2P, PROTO_VERSION
from test_daemon_outbound import Listener, answer_handshake

pytestmark = pytest.mark.interop

PEERD_SUBVER = "/peerd:0.1.0/"
NODE_P2P_V2 = 1 << 11


def peerd_peer(d, pred):
    return next((p for p in d.rpc("getpeerinfo") if pred(p)), None)


def core_peer(core, pred):
    return next((p for p in core.getpeerinfo() if pred(p)), None)


def test_core_connects_to_peerd_v2(make_peerd, bitcoind_node):
    core = bitcoind_node
    d = make_peerd("-peertimeout=10")
    addr = "127.0.0.1:%d" % d.port
    t0 = time.monotonic()
    core.connect_to(addr)
    info = core.wait_for_peer(lambda p: p["addr"] == addr and p["version"] > 0, timeout=5,
                              what="the v2 handshake with peerd")
    # No v1 fallback: no half-second retry.
    assert time.monotonic() - t0 < 1.0
    assert info["transport_protocol_type"] == "v2", info
    assert len(info["session_id"]) == 64
    assert d.rpc("getstats")["peers"]["v2_probes_closed"] == 0
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["transport_protocol_type"] == "v2"
    assert mine["session_id"] == info["session_id"]
    # We advertise NODE_P2P_V2, as Core does.
    net = d.rpc("getnetworkinfo")
    assert int(net["localservices"], 16) & NODE_P2P_V2
    assert "P2P_V2" in net["localservicesnames"]
    assert info["services"] == net["localservices"]
    assert mine["subver"] == core.getnetworkinfo()["subversion"]
    # Pings cross over v2.
    info = core.wait_for_peer(lambda p: p["addr"] == addr and "pingtime" in p, 10, "Core's pingtime")
    mine = wait_until(lambda: peerd_peer(d, lambda p: "pingtime" in p), 10, "peerd's pingtime")
    assert mine["bytesrecv_per_msg"]["pong"] > 0
    errors = {k: v for k, v in d.rpc("getstats")["decode_errors"].items() if v}
    assert errors == {}, errors


def test_peerd_connects_to_core_v2(make_peerd, bitcoind_node):
    core = bitcoind_node
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-peertimeout=10", listen=False)
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd's connection")
    assert info["subver"] == PEERD_SUBVER and info["version"] == PROTO_VERSION
    assert info["transport_protocol_type"] == "v2", info
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["transport_protocol_type"] == "v2" and mine["connection_type"] == "manual"
    assert mine["session_id"] == info["session_id"] and len(mine["session_id"]) == 64
    assert core.getconnectioncount() == 1



def test_blocks_and_transactions_flow_over_v2(make_peerd, make_bitcoind):
    """peerd syncs Core A's chain over v2 and gets its wallet's transaction;
    Core B syncs from peerd over v2 (the sync and relay suites run over v2
    too: Core and peerd both speak it by default)."""
    a, b = make_bitcoind(2)
    a.create_wallet()
    a.mine(120)
    d = make_peerd("-connect=127.0.0.1:%d" % a.port, "-peertimeout=20")
    wait_until(lambda: d.rpc("getbestblockhash") == a.getbestblockhash(), 60, "peerd at A's tip")
    mine = peerd_peer(d, lambda p: p.get("handshake_complete"))
    assert mine["transport_protocol_type"] == "v2" and mine["bytesrecv_per_msg"]["block"] > 0, mine
    txid = a.send_to(a.new_address("bech32"), Decimal("1"))
    wait_until(lambda: txid in d.rpc("getrawmempool"), 30, "A's transaction in peerd's mempool")
    b.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B at the tip through peerd")
    theirs = core_peer(b, lambda p: p["version"] > 0)
    assert theirs["transport_protocol_type"] == "v2", theirs
    ours = wait_until(lambda: peerd_peer(d, lambda p: p["inbound"] and p.get("handshake_complete")), 5, "B on peerd")
    assert ours["session_id"] == theirs["session_id"]
    assert ours["bytessent_per_msg"]["block"] > 0, ours["bytessent_per_msg"]
    # A new transaction reaches B through peerd (A -> peerd -> B), over v2.
    assert b.getpeerinfo() and len(b.getpeerinfo()) == 1
    txid2 = a.send_to(a.new_address("bech32"), Decimal("2"))
    wait_until(lambda: txid2 in b.getrawmempool(), 60, "A's transaction in B's mempool")


def test_core_without_v2_meets_peerd_over_v1(make_peerd, make_bitcoind):
    """Core with -v2transport=0 both ways: it connects to peerd with v1, and
    peerd's v2 attempt to it is closed, so peerd comes back with v1."""
    (core,) = make_bitcoind(1, args=("-v2transport=0",))
    d = make_peerd("-peertimeout=10")
    addr = "127.0.0.1:%d" % d.port
    core.connect_to(addr)
    info = core.wait_for_peer(lambda p: p["addr"] == addr and p["version"] > 0, 5, "Core's v1 connection")
    assert info["transport_protocol_type"] == "v1" and info["session_id"] == ""
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["transport_protocol_type"] == "v1" and mine["session_id"] == ""
    core.disconnect(address=addr)
    wait_until(lambda: d.rpc("getconnectioncount") == 0, 5, "Core gone")
    # peerd dials Core: v2 first (a manual connection), closed; then v1.
    d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd's v1 connection")
    assert info["transport_protocol_type"] == "v1"
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["transport_protocol_type"] == "v1" and not mine["inbound"]
    assert "failed v2 connection to 127.0.0.1:%d, reconnecting with v1" % core.port in d.log()


def test_peerd_without_v2_meets_core_over_v1(make_peerd, bitcoind_node):
    """peerd -v2transport=0: no NODE_P2P_V2, v1 out; Core falls back to v1 in."""
    core = bitcoind_node
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-v2transport=0", "-peertimeout=10")
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd's connection")
    assert info["transport_protocol_type"] == "v1"
    assert not int(info["services"], 16) & NODE_P2P_V2
    net = d.rpc("getnetworkinfo")
    assert net["localservicesnames"] == ["NETWORK", "WITNESS", "NETWORK_LIMITED"], net
    # addnode and addconnection refuse v2 as Core's do without -v2transport.
    with pytest.raises(Exception) as e:
        d.rpc("addnode", "127.0.0.1:1", "onetry", True)
    assert "v2transport requested but not enabled (see -v2transport)" in str(e.value)
    with pytest.raises(Exception) as e:
        d.rpc("addconnection", "127.0.0.1:1", "outbound-full-relay", True)
    assert "requires -v2transport init flag to be set" in str(e.value)


def test_addconnection_v2_to_core(make_peerd, bitcoind_node):
    """addconnection's v2transport true opens an automatic connection with v2."""
    core = bitcoind_node
    d = make_peerd("-connect=0", "-peertimeout=10")
    r = d.rpc("addconnection", "127.0.0.1:%d" % core.port, "outbound-full-relay", True)
    assert r["connection_type"] == "outbound-full-relay"
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd's connection")
    assert info["transport_protocol_type"] == "v2"
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["connection_type"] == "outbound-full-relay" and mine["session_id"] == info["session_id"]


def test_v1_only_scripted_peer_reached_after_v2_attempt(make_peerd):
    """A v1-only peer closes peerd's v2 key at once (it is not its magic);
    peerd dials it again with v1 and the handshake completes."""
    srv = Listener()
    try:
        d = make_peerd("-connect=127.0.0.1:%d" % srv.port, "-peertimeout=10", listen=False)
        p = srv.accept()
        answer_handshake(p)
        assert srv.v2_refused == 1
        mine = wait_until(lambda: peerd_peer(d, lambda i: i.get("handshake_complete")), 5, "peerd's view")
        assert mine["transport_protocol_type"] == "v1"
        assert d.rpc("getstats")["peers"]["outbound_connected"] == 2
        p.close()
    finally:
        srv.close()


def test_peerd_to_peerd_over_v2(make_peerd):
    a = make_peerd("-peertimeout=10")
    b = make_peerd("-connect=127.0.0.1:%d" % a.port, "-peertimeout=10", listen=False)
    out = wait_until(lambda: peerd_peer(b, lambda p: p.get("handshake_complete")), 10, "b's view")
    inn = wait_until(lambda: peerd_peer(a, lambda p: p.get("handshake_complete")), 10, "a's view")
    assert out["transport_protocol_type"] == inn["transport_protocol_type"] == "v2"
    assert out["session_id"] == inn["session_id"] and len(out["session_id"]) == 64


def test_hostile_garbage_disconnects(make_peerd):
    """A v2 key then 4,096 bytes with no terminator: disconnected, with the reason logged."""
    d = make_peerd("-peertimeout=10", "-debug=net")
    p = P2P(d.port)
    p.send_raw(os.urandom(64))
    p.send_raw(os.urandom(4096 + 16))
    assert p.is_closed(3)
    wait_until(lambda: "v2 handshake: no garbage terminator within 4095 bytes" in d.log(), 5, "the reason")


def test_automatic_connection_follows_advertised_services(make_peerd, bitcoind_node):
    """An automatic connection uses v2 only when the address's services say
    NODE_P2P_V2: addpeeraddress knows none, so the first one is v1; Core's
    version advertises it (the address manager learns it), so the next one
    is v2. (Not listening: 127.0.0.1 would be our own address.)"""
    core = bitcoind_node
    d = make_peerd("-test=addrmanloopback", "-peertimeout=10", listen=False)
    assert d.rpc("addpeeraddress", "127.0.0.1", core.port)["success"]
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 20, "peerd's automatic connection")
    assert info["transport_protocol_type"] == "v1", info
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["connection_type"] in ("outbound-full-relay", "block-relay-only"), mine
    core.disconnect(nodeid=info["id"])
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 60, "peerd's next connection")
    assert info["transport_protocol_type"] == "v2", info
