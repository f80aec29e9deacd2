"""Issue 25: -peerblockfilters, BIP157's getcfilters, getcfheaders and
getcfcheckpt (daemon/sync/cfilters.c, proto/msg_cfilter.c), asked of peerd
and of Bitcoin Core with the same options on the same chain.

Core mines a chain past 2,000 blocks (a few wallet transactions in it, so
the filters are not all alike) and a two-block fork that a reorg leaves
stale; peerd follows it over P2P. Then a scripted peer (tests/integration's
P2P, frames built here) sends each node the same requests: valid ranges,
the limits exactly at and one past (1,000 filters, 2,000 filter hashes), a
start past the stop block, an unknown stop hash, a filter type neither
serves, a stale stop block, a truncated request. Both must give the same
answer bytes, or both close the connection. Nodes without
-peerblockfilters refuse every request the same way; the service bit
(NODE_COMPACT_FILTERS, 1 << 6) and its name are compared, and the startup
error without -blockfilterindex. Loopback only.
"""
import struct
import subprocess
import time

import pytest

from bitcoind import wait_until
from conftest import P2P, PeerClosed, frame

pytestmark = pytest.mark.interop

CF_ARGS = ("-blockfilterindex", "-peerblockfilters")
NODE_COMPACT_FILTERS = 1 << 6
BASIC = 0
ANSWERS = ("cfilter", "cfheaders", "cfcheckpt")


def wire(h):
    """A block hash as RPC prints it, in wire byte order."""
    return bytes.fromhex(h)[::-1]


def getcfilters(start, stop, ftype=BASIC, cmd="getcfilters"):
    return cmd, struct.pack("<BI", ftype, start) + wire(stop)


def getcfheaders(start, stop, ftype=BASIC):
    return getcfilters(start, stop, ftype, "getcfheaders")


def getcfcheckpt(stop, ftype=BASIC):
    return "getcfcheckpt", struct.pack("<B", ftype) + wire(stop)


class Asker:
    """One scripted peer on a node: sends a request and a ping, and reads
    until the pong (what the node answered before it) or the close."""

    def __init__(self, port):
        self.port = port
        self.p = None
        self.services = None

    def connect(self):
        self.p = P2P(self.port, timeout=30)
        self.p.send(self.p.version_msg())
        self.p.send_raw(frame("verack"))
        while True:
            m = self.p.recv(30)
            if m.command == "version":
                self.services = struct.unpack("<Q", m.payload[4:12])[0]
            if m.command == "verack":
                break

    def ask(self, cmd, payload):
        if self.p is None:
            self.connect()
        nonce = struct.pack("<Q", int(time.monotonic() * 1e6))
        self.p.send_raw(frame(cmd, payload) + frame("ping", nonce))
        got = []
        deadline = time.monotonic() + 60
        try:
            while True:
                m = self.p.recv(max(0.0, deadline - time.monotonic()))
                if m.command in ANSWERS:
                    got.append((m.command, m.payload))
                elif m.command == "pong" and m.payload == nonce:
                    return got
        except PeerClosed:
            self.p.close()
            self.p = None
            return ("closed", got)

    def close(self):
        if self.p:
            self.p.close()


def same_answer(peerd, core, cmd, payload):
    ours, theirs = peerd.ask(cmd, payload), core.ask(cmd, payload)
    assert ours == theirs, (cmd, payload.hex(), summary(ours), summary(theirs))
    return ours


def summary(a):
    if isinstance(a, tuple):
        return a[0], summary(a[1])
    return [(c, len(p), p[:48].hex()) for c, p in a]


def index_synced(call):
    tip = call("getblockcount")
    info = call("getindexinfo").get("basic block filter index")
    return info and info["synced"] and info["best_block_height"] == tip


def test_bip157_as_bitcoind(make_bitcoind, make_peerd):
    core = make_bitcoind(1, args=CF_ARGS)[0]
    core.create_wallet()
    addr = core.new_address("bech32")
    core.mine(110, addr)
    for kind in ("bech32", "legacy", "p2sh-segwit", "bech32m"):
        core.send_to(core.new_address(kind), 1)
    core.mine(1, addr)
    core.mine(1899, addr)  # height 2010
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-listen=1", "-peertimeout=60", *CF_ARGS)
    wait_until(lambda: d.rpc("getbestblockhash") == core.rpc("getbestblockhash"), 180,
               "peerd to reach Core's tip")
    # A fork: two blocks peerd takes, then three others replace them.
    stale = core.mine(2, addr)
    wait_until(lambda: d.rpc("getbestblockhash") == stale[-1], 30, "peerd at the stale tip")
    core.rpc("invalidateblock", stale[0])
    core.send_to(core.new_address("bech32"), 3)
    fork = core.mine(3, addr)
    core.rpc("reconsiderblock", stale[0])
    assert core.rpc("getbestblockhash") == fork[-1]
    wait_until(lambda: d.rpc("getbestblockhash") == fork[-1], 30, "peerd on the fork")
    wait_until(lambda: index_synced(core.rpc), 120, "bitcoind's filter index")
    wait_until(lambda: index_synced(d.rpc), 120, "peerd's filter index")
    tip = core.rpc("getblockcount")
    assert tip == 2013
    h = [core.rpc("getblockhash", i) for i in range(tip + 1)]

    ours, theirs = Asker(d.port), Asker(core.port)
    ours.connect()
    theirs.connect()
    # The service bit, in version and in getnetworkinfo, and its name.
    assert ours.services & NODE_COMPACT_FILTERS and theirs.services & NODE_COMPACT_FILTERS
    for node in (d, core):
        info = node.rpc("getnetworkinfo")
        assert int(info["localservices"], 16) & NODE_COMPACT_FILTERS, info
        assert "COMPACT_FILTERS" in info["localservicesnames"], info
    # Core sees peerd's bit too (peerd's outbound connection to it).
    peer = core.wait_for_peer(lambda p: p["inbound"] and p["subver"].startswith("/peerd"))
    assert "COMPACT_FILTERS" in peer["servicesnames"], peer

    valid = [
        getcfilters(0, h[0]),
        getcfilters(1, h[10]),
        getcfilters(0, h[999]),  # 1,000: the limit
        getcfilters(tip - 999, h[tip]),
        getcfilters(2010, stale[1]),  # stale blocks, by their hashes
        getcfheaders(0, h[0]),
        getcfheaders(1, h[10]),
        getcfheaders(0, h[1999]),  # 2,000: the limit
        getcfheaders(14, h[2013]),
        getcfheaders(tip, h[tip]),
        getcfheaders(100, stale[1]),
        getcfheaders(2011, stale[0]),
        getcfcheckpt(h[0]),
        getcfcheckpt(h[999]),
        getcfcheckpt(h[1000]),
        getcfcheckpt(h[2000]),
        getcfcheckpt(h[tip]),
        getcfcheckpt(stale[0]),
    ]
    for cmd, payload in valid:
        got = same_answer(ours, theirs, cmd, payload)
        assert got and not isinstance(got, tuple), (cmd, payload.hex())
    # The counts, so the comparison above is not of two empty answers.
    assert len(ours.ask(*getcfilters(0, h[999]))) == 1000
    cfh = ours.ask(*getcfheaders(0, h[1999]))
    assert len(cfh) == 1 and cfh[0][1][65] == 0xFD and struct.unpack("<H", cfh[0][1][66:68])[0] == 2000

    # A truncated request is dropped by both without an answer or a close.
    assert same_answer(ours, theirs, "getcfilters", getcfilters(0, h[5])[1][:-1]) == []

    # Requests back to back: the answers in the order asked, before the pong.
    both = frame(*getcfheaders(3, h[40])) + frame(*getcfilters(5, h[9]))
    for a in (ours, theirs):
        a.p.send_raw(both)
    got = [a.ask(*getcfcheckpt(h[1000])) for a in (ours, theirs)]
    assert got[0] == got[1] and [c for c, _ in got[0]] == ["cfheaders"] + ["cfilter"] * 5 + [
        "cfcheckpt"], summary(got[0])

    # A peer that leaves while its answer is being read: peerd goes on.
    for _ in range(5):
        gone = P2P(d.port, timeout=30)
        gone.handshake()
        gone.send_raw(frame(*getcfilters(1000, h[1999])))
        gone.close()

    refused = [
        getcfilters(0, h[1000]),  # 1,001 filters
        getcfilters(1013, h[tip]),  # 1,001 filters
        getcfheaders(0, h[2000]),  # 2,001 hashes
        getcfilters(11, h[10]),  # start past the stop block
        getcfheaders(tip + 1, h[tip]),
        getcfilters(0, "ab" * 32),  # unknown stop hash
        getcfheaders(0, "ab" * 32),
        getcfcheckpt("ab" * 32),
        getcfilters(0, h[1], ftype=1),  # a type neither serves
        getcfheaders(0, h[1], ftype=255),
        getcfcheckpt(h[1], ftype=1),
    ]
    for cmd, payload in refused:
        assert same_answer(ours, theirs, cmd, payload) == ("closed", []), (cmd, payload.hex())
    ours.close()
    theirs.close()
    assert d.rpc("getblockcount") == tip  # peerd is still up


def test_without_peerblockfilters_both_refuse(make_bitcoind, make_peerd):
    """-blockfilterindex alone: no service bit, and every request closes the
    connection (Core: "unsupported block filter type")."""
    core = make_bitcoind(1, args=("-blockfilterindex",), small=True)[0]
    d = make_peerd("-blockfilterindex")
    genesis = core.rpc("getblockhash", 0)
    ours, theirs = Asker(d.port), Asker(core.port)
    ours.connect()
    theirs.connect()
    assert not ours.services & NODE_COMPACT_FILTERS
    assert not theirs.services & NODE_COMPACT_FILTERS
    for node in (d, core):
        assert "COMPACT_FILTERS" not in node.rpc("getnetworkinfo")["localservicesnames"]
    for cmd, payload in (getcfilters(0, genesis), getcfheaders(0, genesis), getcfcheckpt(genesis)):
        assert same_answer(ours, theirs, cmd, payload) == ("closed", []), cmd


def run_to_exit(cmd, timeout=60):
    r = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout + r.stderr).decode()


def test_peerblockfilters_needs_blockfilterindex(make_bitcoind, make_peerd):
    """Core's startup error, in its words, from both."""
    (core,) = make_bitcoind(1, small=True)
    core.stop()
    want = "Cannot set -peerblockfilters without -blockfilterindex."
    rc, out = run_to_exit(core.cmd + ["-peerblockfilters"])
    assert rc != 0 and "Error: " + want in out, out
    d = make_peerd(listen=False)
    assert d.stop()[0] == 0
    for extra in (["-peerblockfilters"], ["-peerblockfilters=1", "-blockfilterindex=0"]):
        rc, out = run_to_exit(d.cmd + extra)
        assert rc != 0 and want in out, (extra, out)
    # -peerblockfilters=0 is the default, and fine alone.
    d2 = make_peerd("-peerblockfilters=0", listen=False)
    assert d2.rpc("getblockcount") == 0


def test_bytes_after_fields_and_month_old_fork(make_bitcoind, make_peerd):
    """Core reads a request's fields and ignores what follows them, so a
    request with bytes after its fields is answered; and a stale stop block
    more than STALE_RELAY_AGE_LIMIT (30 days) older than the best header is
    refused as an unknown one (BlockRequestAllowed), by both. getstats counts
    the requests peerd answered."""
    core = make_bitcoind(1, args=CF_ARGS)[0]
    core.create_wallet()
    addr = core.new_address("bech32")
    now = int(time.time())
    # Forty days ago: the base and a block that will be left stale.
    core.rpc("setmocktime", now - 40 * 86400)
    core.mine(5, addr)
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-listen=1", "-peertimeout=60", *CF_ARGS)
    old = core.mine(1, addr)[0]
    wait_until(lambda: d.rpc("getbestblockhash") == old, 60, "peerd at the month-old tip")
    # Today: two blocks on another branch take the tip; the old block stays known.
    core.rpc("invalidateblock", old)
    core.rpc("setmocktime", 0)
    fresh = core.mine(2, addr)
    core.rpc("reconsiderblock", old)
    assert core.rpc("getbestblockhash") == fresh[-1]
    wait_until(lambda: d.rpc("getbestblockhash") == fresh[-1], 60, "peerd on today's branch")
    wait_until(lambda: index_synced(core.rpc), 60, "bitcoind's filter index")
    wait_until(lambda: index_synced(d.rpc), 60, "peerd's filter index")
    tip = core.rpc("getblockcount")
    h = [core.rpc("getblockhash", i) for i in range(tip + 1)]

    ours, theirs = Asker(d.port), Asker(core.port)
    before = d.rpc("getstats")["headers"]
    tail = b"\xee" * 7
    for cmd, payload in (getcfilters(1, h[tip]), getcfheaders(0, h[tip]), getcfcheckpt(h[tip])):
        got = same_answer(ours, theirs, cmd, payload + tail)
        assert got and not isinstance(got, tuple), (cmd, got)
        # The same answer as without the tail.
        assert got == ours.ask(cmd, payload), cmd
    after = d.rpc("getstats")["headers"]
    for k in ("getcfilters_answered", "getcfheaders_answered", "getcfcheckpt_answered"):
        assert after[k] == before[k] + 2, (k, before, after)

    # The month-old stale block: refused (the connection closed) by both,
    # whatever the request; a stale block of today is served (test above).
    for cmd, payload in (getcfilters(6, old), getcfheaders(6, old), getcfcheckpt(old)):
        assert same_answer(ours, theirs, cmd, payload) == ("closed", []), cmd
    ours.close()
    theirs.close()

    # The same rule for getdata (Core's ProcessGetBlockData: "ignoring
    # request ... for old block that isn't in the main chain"): no block,
    # no notfound; a block of the active chain is served.
    def blocks_for(port, block_hash):
        a = Asker(port)
        a.connect()
        nonce = struct.pack("<Q", int(time.monotonic() * 1e6))
        inv = b"\x01" + struct.pack("<I", 0x40000002) + wire(block_hash)  # MSG_WITNESS_BLOCK
        a.p.send_raw(frame("getdata", inv) + frame("ping", nonce))
        got = []
        while True:
            m = a.p.recv(30)
            if m.command in ("block", "notfound"):
                got.append((m.command, m.payload))
            elif m.command == "pong" and m.payload == nonce:
                a.close()
                return got
    for block_hash, want in ((old, 0), (fresh[-1], 1)):
        ours_got, theirs_got = blocks_for(d.port, block_hash), blocks_for(core.port, block_hash)
        assert ours_got == theirs_got and len(ours_got) == want, (block_hash, len(ours_got),
                                                                  len(theirs_got))
