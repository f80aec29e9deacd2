"""peerd with a real Bitcoin Core (bitcoind, regtest, loopback) as its peer.

What peerd does today, seen from both sides: Core's v2-then-v1 fallback
with a v1-only peerd (-v2transport=0; v2 itself: test_v2transport.py),
the handshake and ping times, transactions from Core's wallet of every
script type, the genesis block and headers, and 125 inbound peers plus 8
Core nodes at once. bitcoind is found as bitcoind.find_bitcoind() says
($BITCOIND, ../shared/bin, PATH); without one every test here is skipped.

Run alone: `make interop`, or `pytest -m interop tests/integration`.
"""
import json
import os
import subprocess
import time
from decimal import Decimal

import pytest
from bitcoin.messages import msg_getdata, msg_getheaders, msg_ping
from bitcoin.net import CInv

from bitcoind import ADDRESS_TYPES, wait_until
from conftest import BUILD, GENESIS_HASH, P2P, PROTO_VERSION, frame

pytestmark = pytest.mark.interop

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
PEERD_SUBVER = "/peerd:0.1.0/"
MSG_BLOCK = 2


def peertool_json(*args, stdin):
    r = subprocess.run([PEERTOOL, *args], input=stdin.encode(), capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout, parse_float=Decimal)


def peerd_peer(d, pred):
    return next((p for p in d.rpc("getpeerinfo") if pred(p)), None)


def test_core_connects_to_peerd_v1_after_v2(make_peerd, bitcoind_node):
    core = bitcoind_node
    # peerd without BIP324: Core's v2 attempt is closed, Core retries with v1.
    d = make_peerd("-peertimeout=10", "-v2transport=0")
    addr = "127.0.0.1:%d" % d.port
    t0 = time.monotonic()
    core.connect_to(addr)  # Core's default: try v2 first
    # Core redials with v1 at once (ShouldReconnectV1); the bound is loose because the
    # machine may be loaded, and a functional test is no place for a timing target.
    info = core.wait_for_peer(lambda p: p["addr"] == addr and p["version"] > 0, timeout=10.0,
                              what="the v1 handshake with peerd")
    assert time.monotonic() - t0 < 10.0
    # peerd closed Core's v2 hello; Core fell back to v1.
    assert info["transport_protocol_type"] == "v1", info
    assert d.rpc("getstats")["peers"]["v2_probes_closed"] >= 1
    net = d.rpc("getnetworkinfo")
    assert info["version"] == PROTO_VERSION == net["protocolversion"]
    assert info["subver"] == PEERD_SUBVER == net["subversion"]
    assert info["services"] == net["localservices"], (info["services"], net["localservices"])
    assert info["inbound"] is False and info["connection_type"] == "manual"
    assert info["relaytxes"] is True
    # peerd's side: Core's own user agent and version.
    core_net = core.getnetworkinfo()
    mine = wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "peerd's view")
    assert mine["inbound"] is True and mine["connection_type"] == "inbound"
    assert mine["subver"] == core_net["subversion"] and mine["subver"].startswith("/Satoshi:"), mine
    assert mine["version"] == core_net["protocolversion"]
    assert int(mine["services"], 16) == int(core_net["localservices"], 16)
    assert mine["transport_protocol_type"] == "v1"
    assert d.rpc("getconnectioncount") == 1 and core.getconnectioncount() == 1
    # Core hangs up: peerd notices.
    core.disconnect(address=addr)
    wait_until(lambda: d.rpc("getconnectioncount") == 0, 5, "peerd to see Core leave")


def test_peerd_connects_to_core_ping_times(make_peerd, bitcoind_node):
    core = bitcoind_node
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-peertimeout=10", listen=False)
    info = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd's connection")
    assert info["subver"] == PEERD_SUBVER and info["version"] == PROTO_VERSION
    # A manual connection: BIP324 v2, as Core's.
    assert info["transport_protocol_type"] == "v2"
    # Core pings right after the handshake, peerd too: both measure a round trip.
    info = core.wait_for_peer(lambda p: p["inbound"] and "pingtime" in p, 10, "Core's pingtime")
    assert 0 < info["pingtime"] < 5 and info["minping"] <= info["pingtime"], info
    mine = wait_until(lambda: peerd_peer(d, lambda p: "pingtime" in p), 10, "peerd's pingtime")
    assert 0 < mine["pingtime"] < 5 and mine["minping"] <= mine["pingtime"], mine
    assert mine["inbound"] is False and mine["connection_type"] == "manual"
    assert mine["subver"] == core.getnetworkinfo()["subversion"]
    assert mine["handshake_complete"] is True
    # A pong over v2: its 1-byte id and 8-byte nonce, and 20 bytes of
    # length, header and tag (v1: 24 + 8); Core counts the same.
    assert mine["bytesrecv_per_msg"]["pong"] == 29 and mine["bytessent_per_msg"]["pong"] == 29
    theirs = core.wait_for_peer(lambda p: p["inbound"] and "pong" in p["bytesrecv_per_msg"], 10, "Core's pong")
    assert theirs["bytesrecv_per_msg"]["pong"] == 29 and theirs["bytessent_per_msg"]["pong"] == 29
    assert d.rpc("getnetworkinfo")["connections_out"] == 1


def test_core_wallet_transactions_reach_peerd(make_peerd, bitcoind_node):
    core = bitcoind_node
    core.create_wallet()
    coinbases = core.fund_wallet(per_type=5)  # 20 blocks to 4 types, 100 to mature them
    d = make_peerd("-peertimeout=10")
    core.connect_to("127.0.0.1:%d" % d.port)
    core.wait_for_peer(lambda p: p["subver"] == PEERD_SUBVER, 3, "peerd")
    wait_until(lambda: peerd_peer(d, lambda p: p.get("handshake_complete")), 5, "handshake on peerd")
    # Every source type to every destination type, then four more: 20.
    pairs = [(s, t) for s in ADDRESS_TYPES for t in ADDRESS_TYPES]
    pairs += list(zip(ADDRESS_TYPES, reversed(ADDRESS_TYPES)))
    utxos = {t: core.spendable(coinbases[t]) for t in ADDRESS_TYPES}
    assert all(len(utxos[t]) == 5 for t in ADDRESS_TYPES), {t: len(u) for t, u in utxos.items()}
    sent = []
    for src, dst in pairs:
        sent.append(core.send_typed(utxos[src].pop(), dst))
    assert len(core.getrawmempool()) == 20

    def all_received():
        s = d.rpc("getstats")
        return s if s["inventory"]["tx_accepted"] >= 20 else None

    stats = wait_until(all_received, 30, "peerd to receive and accept 20 transactions")
    inv = stats["inventory"]
    assert inv["tx_received"] == 20 and inv["tx_decoded"] == 20, inv
    assert inv["tx_requested"] == 20 and inv["tx_unsolicited"] == 0, inv
    # All 20 are in peerd's mempool, which the relay mirror follows.
    assert inv["tx_accepted"] == 20 and inv["tx_rejected"] == 0, inv
    assert stats["relay"]["mempool_mirror"] == 20, stats["relay"]
    assert stats["messages"]["tx"]["recv_count"] == 20
    # No decode error: Core's v2 hello is answered in v2.
    errors = {k: v for k, v in stats["decode_errors"].items() if v}
    assert errors == {} and stats["peers"]["v2_probes_closed"] == 0, (errors, stats["peers"])
    # Core's view: peerd asked for each one (getdata) and got it.
    info = core.wait_for_peer(lambda p: p["subver"] == PEERD_SUBVER, 1, "peerd")
    assert info["bytesrecv_per_msg"].get("getdata", 0) > 0 and info["bytessent_per_msg"]["tx"] > 0, info
    # Every transaction decodes in peertool exactly as in Core.
    types_out, types_in = set(), set()
    for txid, raw in sent:
        core_json = core.decoderawtransaction(raw)
        ours = peertool_json("decode-tx", "--hex", "--chain", "regtest", "-", stdin=raw)
        assert ours == core_json, "decode-tx differs from decoderawtransaction for %s:\n%s\n%s" % (
            txid, json.dumps(ours, default=str, indent=1), json.dumps(core_json, default=str, indent=1))
        assert ours["txid"] == txid
        types_out.update(o["scriptPubKey"]["type"] for o in ours["vout"])
        types_in.add("witness" if "txinwitness" in ours["vin"][0] else "legacy")
    assert {"pubkeyhash", "scripthash", "witness_v0_keyhash", "witness_v1_taproot"} <= types_out, types_out
    assert types_in == {"witness", "legacy"}


def test_genesis_block_and_headers_match_core(make_peerd, bitcoind_node):
    core = bitcoind_node
    d = make_peerd("-peertimeout=10")
    genesis = core.getblockhash(0)
    assert bytes.fromhex(genesis)[::-1] == GENESIS_HASH
    core_block = bytes.fromhex(core.getblock(genesis, 0))
    core_header = bytes.fromhex(core.getblockheader(genesis, False))
    # Ask peerd for the block and for headers (an independent peer).
    p = P2P(d.port)
    p.handshake()
    g = msg_getdata()
    g.inv = [CInv()]
    g.inv[0].type, g.inv[0].hash = MSG_BLOCK, GENESIS_HASH
    p.send(g)
    served = p.recv_until("block").payload
    assert served == core_block, "peerd's genesis block differs from Core's getblock %s 0" % genesis
    gh = msg_getheaders()
    gh.locator.nVersion = PROTO_VERSION
    gh.locator.vHave = []
    gh.hashstop = GENESIS_HASH
    p.send(gh)
    hdrs = p.recv_until("headers").payload
    assert hdrs == b"\x01" + core_header + b"\x00", "peerd's genesis header differs from Core's"
    # Core's locator today (its tip is genesis): peerd has nothing newer.
    gh.locator.vHave = [bytes.fromhex(core.getbestblockhash())[::-1]]
    gh.hashstop = b"\0" * 32
    p.send(gh)
    assert p.recv_until("headers").payload == b"\x00"
    p.close()
    # peertool decodes the served block as Core's getblock HASH 2 does.
    ours = peertool_json("decode-block", "--hex", "--chain", "regtest", "-", stdin=served.hex())
    core_json = core.getblock(genesis, 2)
    missing = set(ours) - set(core_json)
    assert not missing, "peertool fields Core lacks: %s" % missing
    for k in ours:
        assert ours[k] == core_json[k], "%s: peertool %r, Core %r" % (k, ours[k], core_json[k])
    # Core connected to peerd: a getheaders from Core is answered.
    core.connect_to("127.0.0.1:%d" % d.port)
    info = core.wait_for_peer(lambda p: p["subver"] == PEERD_SUBVER, 3, "peerd")
    time.sleep(1.0)  # what Core sends right after the handshake
    info = core.wait_for_peer(lambda p: p["subver"] == PEERD_SUBVER, 1, "peerd")
    # Core starts headers sync only from a peer that can serve blocks
    # (NODE_NETWORK or NODE_NETWORK_LIMITED): peerd claims NODE_NETWORK.
    assert int(d.rpc("getnetworkinfo")["localservices"], 16) & 1
    assert "getheaders" in info["bytessent_per_msg"], info["bytessent_per_msg"]
    info = core.wait_for_peer(lambda p: p["subver"] == PEERD_SUBVER and "headers" in p["bytesrecv_per_msg"],
                              5, "peerd's headers reply")
    assert d.rpc("getstats")["headers"]["getheaders_answered"] >= 1


def alive(p, nonce):
    p.send(msg_ping(nonce=nonce))
    return p.recv_until("pong", timeout=5).obj.nonce == nonce


def test_125_inbound_and_8_core_nodes(make_peerd, make_bitcoind):
    cores = make_bitcoind(8, small=True)
    # 125 inbound slots (Core's: maxconnections less 11 automatic outbound
    # slots) and the 8 addnode targets beyond maxconnections, as Core's.
    d = make_peerd("-maxconnections=136", "-peertimeout=20",
                   *["-addnode=127.0.0.1:%d" % c.port for c in cores])
    # The 8 Core connections first, and the start-up probe's connection gone
    # (it would take an inbound slot until peerd sees it close).
    wait_until(lambda: (lambda n: n["connections_out"] == 8 and n["connections_in"] == 0)(d.rpc("getnetworkinfo")),
               20, "8 outbound connections to Core and no inbound")
    peers = []
    try:
        peers = [P2P(d.port, timeout=20) for _ in range(125)]
        for p in peers:  # all versions first: the handshakes run concurrently
            p.send(p.version_msg())
            p.send_raw(frame("wtxidrelay") + frame("sendaddrv2") + frame("verack"))
        for p in peers:
            p.recv_until("verack", timeout=20)
        for c in cores:
            c.wait_for_peer(lambda i: i["inbound"] and i["version"] > 0, 20, "peerd's connection")

        def complete():
            info = d.rpc("getpeerinfo")
            return info if len(info) == 133 and all(i["handshake_complete"] for i in info) else None

        info = wait_until(complete, 20, "133 handshaken peers on peerd")
        assert d.rpc("getconnectioncount") == 133
        net = d.rpc("getnetworkinfo")
        assert net["connections_in"] == 125 and net["connections_out"] == 8, net
        out = [i for i in info if not i["inbound"]]
        assert sorted(i["addr"] for i in out) == sorted("127.0.0.1:%d" % c.port for c in cores)
        core_subver = cores[0].getnetworkinfo()["subversion"]
        assert all(i["subver"] == core_subver for i in out), [i["subver"] for i in out]
        # A 126th inbound peer evicts one as Core's SelectNodeToEvict: all
        # 125 share the loopback group and none answered a ping, so the
        # youngest goes; Core's 8 (manual, outbound) are never candidates.
        extra = P2P(d.port)
        extra.handshake()
        assert peers[-1].is_closed(3), "the youngest inbound peer was not evicted"
        peers[-1].close()
        peers[-1] = extra
        assert d.rpc("getstats")["peers"]["inbound_evicted"] == 1
        # Each Core sees exactly one peer: peerd, inbound, handshake done.
        for c in cores:
            cinfo = c.getpeerinfo()
            assert len(cinfo) == 1 and c.getconnectioncount() == 1, cinfo
            assert cinfo[0]["inbound"] and cinfo[0]["subver"] == PEERD_SUBVER
            assert cinfo[0]["version"] == PROTO_VERSION
        # Still all kept a moment later, and answering.
        time.sleep(1.0)
        assert d.rpc("getconnectioncount") == 133
        assert alive(peers[0], 1) and alive(peers[62], 2) and alive(peers[-1], 3)
        assert all(c.getconnectioncount() == 1 for c in cores)
        assert d.rpc("getstats")["peers"]["inbound_rejected_full"] == 0
    finally:
        for p in peers:
            p.close()
