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
import socket
import threading
import time

import pytest

from bitcoind import wait_until
from conftest import PROTO_VERSION, frame

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
