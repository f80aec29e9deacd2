"""A pruned node on the network (BIP159, issue 24's network side), checked
against a pruned Bitcoin Core on the same chain.

-prune=1 (manual pruning: nothing is deleted until pruneblockchain) is
enough: the rules are on the services a node advertises, not on its block
files. Both nodes advertise NODE_NETWORK_LIMITED without NODE_NETWORK, serve
a block at most 288 + 2 below their tip, disconnect a peer that asks for a
deeper one (whatever the block type), and still answer getheaders from
genesis. A scripted peer asks both the same questions and must see the same
outcome. Skipped without a bitcoind.

The download side: peerd asks a pruned peer for no block during initial
block download, and after it for none 286 or more below the peer's best
block (Core's FindNextBlocksToDownload), checked with a scripted pruned
peer that announces a long chain of Core's headers.
"""
import time
from io import BytesIO

import pytest
from bitcoin.messages import msg_getdata, msg_getheaders
from bitcoin.net import CInv

from bitcoin.messages import msg_verack

from conftest import P2P, PeerClosed, PROTO_VERSION, frame, getblocks_inv, peer_claiming, read_compact, ser_compact, wait_for

pytestmark = pytest.mark.interop

MSG_BLOCK, MSG_FILTERED_BLOCK, MSG_CMPCT_BLOCK = 2, 3, 4
MSG_WITNESS_BLOCK = 0x40000002
NODE_NETWORK, NODE_WITNESS, NODE_NETWORK_LIMITED = 1, 8, 1 << 10
LIMIT = 288 + 2  # NODE_NETWORK_LIMITED_MIN_BLOCKS and Core's two-block buffer
CHAIN = LIMIT + 12
DISCONNECT_LINE = "Ignore block request below NODE_NETWORK_LIMITED threshold, disconnecting peer="




def inv(kind, hash_hex):
    v = CInv()
    v.type, v.hash = kind, bytes.fromhex(hash_hex)[::-1]
    return v


def ask_block(port, kind, hash_hex, timeout=5.0):
    """On a new connection, getdata one block: "block" (or "cmpctblock") when
    it comes, "closed" when the node hangs up first, "nothing" otherwise.
    Returns (outcome, the version message's services)."""
    p = P2P(port)
    try:
        p.handshake()
        services = p.received[0].obj.nServices
        g = msg_getdata()
        g.inv = [inv(kind, hash_hex)]
        p.send(g)
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = p.recv(max(0.001, deadline - time.monotonic()))
            except PeerClosed:
                return "closed", services
            except TimeoutError:
                return "nothing", services
            if m.command in ("block", "cmpctblock"):
                return m.command, services
    finally:
        p.close()


def headers_from_genesis(port, genesis_hex):
    p = P2P(port)
    try:
        p.handshake()
        gh = msg_getheaders()
        gh.locator.nVersion = PROTO_VERSION
        gh.locator.vHave = [bytes.fromhex(genesis_hex)[::-1]]
        gh.hashstop = b"\0" * 32
        p.send(gh)
        payload = p.recv_until("headers", timeout=10).payload
        return payload[1] | payload[2] << 8 if payload[0] == 0xFD else payload[0]
    finally:
        p.close()


def test_pruned_peerd_serves_what_pruned_core_serves(make_peerd, make_bitcoind):
    core = make_bitcoind(1, args=("-prune=1", "-fastprune", "-debug=net"))[0]
    hashes = core.mine_op_true(CHAIN)
    d = make_peerd("-prune=1", "-debug=net", "-peertimeout=20")
    d.submit_from(core, hashes)
    assert d.rpc("getbestblockhash") == core.getbestblockhash()
    # The services, as Core's: NETWORK_LIMITED and WITNESS (and P2P_V2), no NETWORK.
    net, core_net = d.rpc("getnetworkinfo"), core.getnetworkinfo()
    assert net["localservices"] == core_net["localservices"], (net, core_net)
    assert net["localservicesnames"] == core_net["localservicesnames"]
    assert "NETWORK" not in net["localservicesnames"] and "NETWORK_LIMITED" in net["localservicesnames"]
    tip = CHAIN
    shallow = hashes[tip - LIMIT - 1]  # height tip - 290: still served
    deep = hashes[tip - LIMIT - 2]  # height tip - 291: below the window
    genesis = core.getblockhash(0)
    got = {}
    for name, port in (("core", core.port), ("peerd", d.port)):
        out = {}
        for kind in (MSG_BLOCK, MSG_WITNESS_BLOCK):
            out[("shallow", kind)], services = ask_block(port, kind, shallow)
            assert services & (NODE_NETWORK | NODE_NETWORK_LIMITED | NODE_WITNESS) == \
                NODE_NETWORK_LIMITED | NODE_WITNESS, (name, hex(services))
        for kind in (MSG_BLOCK, MSG_WITNESS_BLOCK, MSG_FILTERED_BLOCK, MSG_CMPCT_BLOCK):
            out[("deep", kind)], _ = ask_block(port, kind, deep)
        # getheaders is not limited: every header from genesis.
        out["headers"] = headers_from_genesis(port, genesis)
        # getblocks: nothing when the first block after the locator is 288 - 6 or
        # more below the tip.
        for back in (281, 282, 283):
            out[("getblocks", back)] = len(getblocks_inv(port, hashes[tip - back - 1]))
        got[name] = out
    assert got["peerd"] == got["core"], got
    # And what that is, so that two nodes agreeing on nothing cannot pass.
    assert got["peerd"][("shallow", MSG_WITNESS_BLOCK)] == "block"
    assert got["peerd"][("shallow", MSG_BLOCK)] == "block"
    assert all(got["peerd"][("deep", k)] == "closed"
               for k in (MSG_BLOCK, MSG_WITNESS_BLOCK, MSG_FILTERED_BLOCK, MSG_CMPCT_BLOCK)), got
    assert got["peerd"]["headers"] == CHAIN
    assert [got["peerd"][("getblocks", b)] for b in (281, 282, 283)] == [281, 282, 0], got
    # The log says why, in Core's words, once per refused request.
    assert d.log().count(DISCONNECT_LINE) == 4, d.log()[-3000:]
    with open(core.debug_log, errors="replace") as f:
        assert f.read().count(DISCONNECT_LINE) == 4


def test_unpruned_peerd_advertises_network(make_peerd, bitcoind_node):
    """The control: without -prune, NODE_NETWORK beside NODE_NETWORK_LIMITED, as Core."""
    hashes = bitcoind_node.mine_op_true(5)
    d = make_peerd("-peertimeout=20")
    d.submit_from(bitcoind_node, hashes)
    outcome, services = ask_block(d.port, MSG_WITNESS_BLOCK, hashes[0])
    assert outcome == "block"
    assert services & (NODE_NETWORK | NODE_NETWORK_LIMITED) == NODE_NETWORK | NODE_NETWORK_LIMITED


# ---- download from a pruned peer ----------------------------------------------

def announce(p, core, hashes):
    raw = [bytes.fromhex(core.getblockheader(h, False)) + b"\x00" for h in hashes]
    p.send_raw(frame("headers", ser_compact(len(raw)) + b"".join(raw)))


def requested(p, seconds, first=None):
    """Hashes (hex, RPC order) of every block p is asked for within `seconds`;
    with `first`, up to that long for the first request, then `seconds` more
    (a loaded machine may take a while to get to the headers)."""
    out = []
    deadline = time.monotonic() + (first or seconds)
    while True:
        if first and out:
            deadline, first = time.monotonic() + seconds, None
        try:
            m = p.recv(max(0.001, deadline - time.monotonic()))
        except (TimeoutError, PeerClosed):
            return out
        if m.command != "getdata":
            continue
        f = BytesIO(m.payload)
        for _ in range(read_compact(f)):
            kind = int.from_bytes(f.read(4), "little") & 0xFFFF
            h = f.read(32)[::-1].hex()
            if kind in (MSG_BLOCK, MSG_CMPCT_BLOCK):
                out.append(h)


def test_no_block_below_a_pruned_peers_window(make_peerd, bitcoind_node):
    core = bitcoind_node
    hashes = core.mine_op_true(310)
    height = {h: i + 1 for i, h in enumerate(hashes)}
    d = make_peerd("-peertimeout=20")
    d.submit_from(core, hashes[:10])  # recent blocks: out of initial block download
    assert d.rpc("getblockchaininfo")["initialblockdownload"] is False
    p = peer_claiming(d, NODE_NETWORK_LIMITED | NODE_WITNESS, ping=True)
    announce(p, core, hashes[10:])  # 11..310
    got = requested(p, 1.0, first=20.0)
    assert got, "peerd asked the pruned peer for nothing"
    # Best 310: 310 - 25 = 285 < 286 is the deepest block peerd may ask for.
    assert min(height[h] for h in got) == 310 - (288 - 2) + 1, sorted(height[h] for h in got)
    p.close()


def test_no_block_from_a_pruned_peer_during_ibd(make_peerd, bitcoind_node):
    core = bitcoind_node
    hashes = core.mine_op_true(20)
    d = make_peerd("-peertimeout=20")
    assert d.rpc("getblockchaininfo")["initialblockdownload"] is True
    limited = peer_claiming(d, NODE_NETWORK_LIMITED | NODE_WITNESS, ping=True)
    announce(limited, core, hashes)
    assert requested(limited, 3.0) == []
    wait_for(lambda: d.rpc("getblockchaininfo")["headers"] == 20, timeout=20,
             what="the pruned peer's headers taken")
    # The control: a full node announcing the same chain is asked at once.
    full = peer_claiming(d, NODE_NETWORK | NODE_WITNESS, ping=True)
    announce(full, core, hashes)
    assert len(requested(full, 1.0, first=20.0)) == 16  # SYNC_MAX_INFLIGHT_PER_PEER
    limited.close()
    full.close()


# ---- which outbound peers are kept ---------------------------------------------

def outbound_kept(node, services, conn_type):
    """node dials a scripted peer claiming `services` as conn_type (addconnection):
    whether the connection survives the handshake."""
    from test_daemon_outbound_auto import Listener

    lst = Listener("127.0.0.1")
    try:
        node.rpc("addconnection", "127.0.0.1:%d" % lst.port, conn_type, False)
        p = lst.accept()
        v = p.recv()
        assert v.command == "version", v
        mine = p.version_msg()
        mine.nServices = services
        try:
            p.send(mine)
            p.send_raw(frame("wtxidrelay") + frame("sendaddrv2"))
            p.send(msg_verack())
        except OSError:  # closed at our version already
            return False
        return not p.is_closed(5)
    finally:
        lst.close()


def test_pruned_outbound_dropped_during_ibd_as_core(make_peerd, make_bitcoind, tmp_path):
    """Core's GetDesirableServiceFlags: during initial block download an
    automatic outbound peer must be NODE_NETWORK; a pruned one is
    disconnected at its version. A full node is kept."""
    core = make_bitcoind(1, args=("-v2transport=0", "-debug=net"))[0]
    d = make_peerd("-v2transport=0", "-debug=net", "-peertimeout=20")
    limited, full = NODE_NETWORK_LIMITED | NODE_WITNESS, NODE_NETWORK | NODE_WITNESS
    for node in (core, d):
        assert node.rpc("getblockchaininfo")["initialblockdownload"] is True
    got = {}
    for name, node in (("core", core), ("peerd", d)):
        got[name] = [outbound_kept(node, s, t) for s in (limited, full)
                     for t in ("outbound-full-relay", "block-relay-only")]
    assert got["peerd"] == got["core"] == [False, False, True, True], got
    line = ("peer does not offer the expected services (00000408 offered, 00000009 expected), "
            "disconnecting peer=")
    assert d.log().count(line) == 2, d.log()[-3000:]
    with open(core.debug_log, errors="replace") as f:
        assert f.read().count(line) == 2


def test_pruned_outbound_kept_near_the_tip(make_peerd, bitcoind_node):
    """Out of initial block download (a tip under 144 blocks' time old), a
    pruned peer serves what we need: it stays."""
    hashes = bitcoind_node.mine_op_true(2)
    d = make_peerd("-v2transport=0", "-peertimeout=20")
    d.submit_from(bitcoind_node, hashes)
    assert outbound_kept(d, NODE_NETWORK_LIMITED | NODE_WITNESS, "outbound-full-relay")


def test_prune_below_the_minimum_is_refused_as_core(tmp_path):
    """-prune=2..549 stops both nodes with Core's words; 1 (manual) starts."""
    import subprocess

    import bitcoind
    from conftest import PEERD_BIN

    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    text = "Prune configured below the minimum of 550 MiB.  Please use a higher number."
    for n, name in ((549, "core"), (2, "core2")):
        (tmp_path / name).mkdir()
        core = subprocess.run([binary, "-regtest", "-datadir=%s" % (tmp_path / name), "-connect=0",
                               "-listen=0", "-prune=%d" % n], capture_output=True, text=True, timeout=60)
        assert core.returncode != 0 and text in core.stderr, core.stderr
        ours = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / name), "-connect=0",
                               "-listen=0", "-prune=%d" % n], capture_output=True, text=True, timeout=60)
        assert ours.returncode != 0 and text in ours.stderr, ours.stderr
