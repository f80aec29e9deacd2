"""Minimum chain work (Core's nMinimumChainWork, -minimumchainwork) and
headers presync: a flood of low-work headers never enters peerd's block
index and leaves its memory bounded; a chain with less work than the
minimum is not downloaded and keeps peerd in initial block download; a
real chain above the minimum still syncs (through presync and redownload)
and only then is sendheaders sent, as Core does.

On regtest the network's minimum is zero, so every test sets
-minimumchainwork: a regtest block proves work 2, so a chain of height h
has work 2 * (h + 1)."""
import os
import struct
import time

import pytest

from bitcoind import wait_until
from conftest import GENESIS_HASH, P2P, frame, peer_claiming, ser_compact, sha256d

NODE_NETWORK_WITNESS = 9
# Under ASan freed memory sits in a quarantine before reuse, so RSS there
# measures the sanitizer; the index count is the bound that matters there.
ASAN = "/asan/" in os.environ.get("PEERD_BIN", "")
RSS_GROWTH_MAX_KB = (48 if ASAN else 6) * 1024
REGTEST_TARGET = 0x7fffff << (8 * (0x20 - 3))


def work_hex(height):
    """-minimumchainwork for a regtest chain of this height."""
    return "%x" % (2 * (height + 1))



class FakeChain:
    """Regtest headers with real proof of work (about 2 tries each), grown on demand."""

    def __init__(self, tag):
        self.hashes = [GENESIS_HASH]
        self.raw = [None]
        self.tag = tag
        self.t = 1296688602

    def grow(self, height):
        while len(self.hashes) <= height:
            self.t += 1
            prev = self.hashes[-1]
            for nonce in range(1 << 20):
                hdr = struct.pack("<i", 0x20000000) + prev + self.tag + struct.pack("<III", self.t, 0x207fffff, nonce)
                h = sha256d(hdr)
                if int.from_bytes(h, "little") <= REGTEST_TARGET:
                    break
            self.hashes.append(h)
            self.raw.append(hdr)

    def payload(self, start, n):
        """Headers start+1 .. start+n."""
        self.grow(start + n)
        return ser_compact(n) + b"".join(h + b"\x00" for h in self.raw[start + 1:start + n + 1])

    def height_of(self, h):
        return self.hashes.index(h)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def presync(d):
    return d.rpc("getstats")["sync"]["presync"]


def test_low_work_header_flood_stays_out_of_the_index(make_peerd):
    # The minimum: a chain of 10 million blocks. The flooder's chain never gets there.
    d = make_peerd("-peertimeout=60", "-minimumchainwork=" + work_hex(10_000_000))
    chain = FakeChain(b"\x11" * 32)
    rounds = 60  # 120,000 headers
    chain.grow(2000 * rounds)
    p = peer_claiming(d, NODE_NETWORK_WITNESS)
    p.recv_until("getheaders", timeout=5)
    # Baseline after the handshake; the flood follows peerd's getheaders.
    time.sleep(0.3)
    rss0 = rss_kb(d.pid)
    p.send_raw(frame("headers", chain.payload(0, 2000)))
    sent = 2000
    for _ in range(rounds - 1):
        gh = p.recv_until("getheaders", timeout=10)
        # Presync's locator: the last header it took, then its start (genesis).
        first = gh.payload[5:37]
        start = chain.height_of(first)
        assert start == sent, (start, sent)
        assert gh.payload[-64:-32] == GENESIS_HASH
        p.send_raw(frame("headers", chain.payload(start, 2000)))
        sent += 2000
    wait_until(lambda: presync(d)["messages"] >= rounds, 20, "peerd to take every headers message")
    info = d.rpc("getblockchaininfo")
    assert info["headers"] == 0 and info["blocks"] == 0, info
    assert info["initialblockdownload"] is True
    st = d.rpc("getstats")
    assert st["chain"]["index_nodes"] == 1, st["chain"]
    ps = st["sync"]["presync"]
    assert ps["started"] == 1 and ps["peers"] == 1, ps
    # One commitment bit per 624 headers: the state is a few hundred bytes.
    assert ps["bytes_max"] < 4096, ps
    grew = rss_kb(d.pid) - rss0
    print("flood of %d headers: RSS %d -> %d KiB, presync %r" % (sent, rss0, rss0 + grew, ps))
    # 120,000 headers in the index would be ~21 MB (179 B each); presync keeps ~nothing.
    assert grew < RSS_GROWTH_MAX_KB, "RSS grew %d KiB during the flood" % grew
    # A short message of a low-work chain (a second peer, from genesis) is
    # dropped outright: no presync, nothing stored.
    q = peer_claiming(d, NODE_NETWORK_WITNESS)
    q.send_raw(frame("headers", FakeChain(b"\x22" * 32).payload(0, 1500)))
    wait_until(lambda: presync(d)["lowwork_ignored"] >= 1, 10, "the short low-work chain to be ignored")
    assert d.rpc("getblockchaininfo")["headers"] == 0
    # The flooder stops with a short message: its presync ends and its memory goes.
    p.send_raw(frame("headers", chain.payload(sent, 10)))
    wait_until(lambda: presync(d)["aborted"] >= 1, 10, "the presync to end")
    assert presync(d)["peers"] == 0
    assert not p.is_closed(timeout=0.2), "a low-work peer is not misbehaving"
    # No sendheaders to peers whose chains lack the minimum work (Core's rule).
    assert presync(d)["sendheaders_sent"] == 0


@pytest.mark.interop
def test_chain_above_minimum_syncs_below_it_does_not(make_peerd, bitcoind_node):
    core = bitcoind_node
    hashes = core.mine_op_true(2300, timeout=300)
    # Above: the minimum at height 2,100 (so the first 2,000 headers go to
    # presync, the chain is fetched again and released to the index).
    above = make_peerd("-peertimeout=60", "-minimumchainwork=" + work_hex(2100), name="above")
    # Below: the minimum at height 5,000, more than Core's chain has.
    below = make_peerd("-peertimeout=60", "-minimumchainwork=" + work_hex(5000), name="below")
    for d in (above, below):
        d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    wait_until(lambda: above.rpc("getbestblockhash") == hashes[-1], 120, "peerd to sync Core's chain")
    ps = presync(above)
    assert ps["started"] >= 1 and ps["done"] >= 1, ps
    info = above.rpc("getblockchaininfo")
    assert info["initialblockdownload"] is False, info
    assert info["chainwork"] == core.getblockchaininfo()["chainwork"]
    # The peer's chain has the minimum work now: sendheaders went to Core.
    wait_until(lambda: presync(above)["sendheaders_sent"] >= 1, 10, "sendheaders to Core")
    # Below the minimum: the headers never reached the index, no block was asked for.
    wait_until(lambda: presync(below)["aborted"] >= 1, 30, "the low-work presync to end")
    info = below.rpc("getblockchaininfo")
    assert info["headers"] == 0 and info["blocks"] == 0, info
    assert info["initialblockdownload"] is True
    s = below.rpc("getstats")["sync"]
    assert s["blocks_requested"] == 0, s
    assert s["presync"]["sendheaders_sent"] == 0


@pytest.mark.interop
def test_presynced_headers_in_getpeerinfo_as_core(make_peerd, make_bitcoind):
    """getpeerinfo's presynced_headers (Core 29): -1 until a peer's headers
    presync starts, then the height it reached, -1 again once it ends;
    peerd and bitcoind fed the same low-work headers say the same, and
    peerd's object has Core's keys in Core's order."""
    minwork = "-minimumchainwork=" + work_hex(1_000_000)
    d = make_peerd("-peertimeout=60", minwork)
    core = make_bitcoind(1, args=(minwork,))[0]
    chain = FakeChain(b"\x33" * 32)
    chain.grow(4010)

    class CoreNode:
        def peer(self):
            return P2P(core.port)

    seen = {}
    for name, node, info in (("peerd", d, lambda: d.rpc("getpeerinfo")),
                             ("core", CoreNode(), lambda: core.rpc("getpeerinfo"))):
        p = peer_claiming(node, NODE_NETWORK_WITNESS)
        p.recv_until("getheaders", timeout=10)
        heights = [info()[0]["presynced_headers"]]
        for start in (0, 2000):
            p.send_raw(frame("headers", chain.payload(start, 2000)))
            p.recv_until("getheaders", timeout=10)
            # The getheaders comes once the job is back: the height is there.
            wait_until(lambda: info()[0]["presynced_headers"] == start + 2000, 10,
                       "%s's presync height" % name)
            heights.append(info()[0]["presynced_headers"])
        p.send_raw(frame("headers", chain.payload(4000, 10)))  # too short: the presync ends
        wait_until(lambda: info()[0]["presynced_headers"] == -1, 10, "%s's presync to end" % name)
        heights.append(-1)
        seen[name] = (heights, list(info()[0].keys()))
        p.close()
    assert seen["peerd"][0] == seen["core"][0] == [-1, 2000, 4000, -1], seen
    ours, theirs = seen["peerd"][1], seen["core"][1]
    common = [k for k in theirs if k in ours]
    assert [k for k in ours if k in theirs] == common, (ours, theirs)
    assert "presynced_headers" in common
