"""Lagging outbound peers (daemon/sync/stale.c, Core 29's ConsiderEviction)
driven by the mockable clock, as Core's test/functional/
p2p_outbound_eviction.py: scripted peers connected as outbound-full-relay
with addconnection, the node's clock moved with setmocktime.

- A peer whose best block is behind our tip: 20 minutes (and a second)
  later one getheaders from our tip's parent; 2 minutes more and it is
  disconnected with Core's log line.
- Four peers that showed our tip's work are protected for good: after a new
  block and the same 20 minutes, no getheaders for them; a fifth is not
  protected, gets the getheaders, answers with our new tip and is kept.

The same scenario runs against bitcoind and against peerd, and what each
peer saw is compared. Every connection is on 127.0.0.1; -connect=0 (no
automatic outbound).
"""
import socket
import struct
import time

from bitcoin.messages import msg_verack

from conftest import P2P, PeerClosed, frame, ser_compact, wait_for

CHAIN_SYNC_TIMEOUT = 20 * 60
HEADERS_RESPONSE_TIME = 2 * 60
# Whole seconds of the node's clock: 2024-01-01, so blocks mined at it are
# recent and the node is past its initial download.
MOCK_START = 1704067200
NODE_NETWORK_WITNESS = 1 | 8


class Listener:
    """A scripted peer's listening socket on 127.0.0.1."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]

    def accept(self, timeout=20):
        self.sock.settimeout(timeout)
        conn, _ = self.sock.accept()
        return P2P(None, sock=conn, timeout=20)

    def close(self):
        self.sock.close()


class Node:
    """What the scenario needs of a node: calls and the log."""

    def __init__(self, name, call, log):
        self.name, self.call, self.log = name, call, log


def peerd_node(peerd):
    return Node("peerd", peerd.rpc, peerd.log)


def core_node(core):
    def log():
        with open(core.debug_log, errors="replace") as f:
            return f.read()
    return Node("bitcoind", core.rpc, log)


def header_of(node, height):
    h = node.call("getblockhash", height)
    return h, bytes.fromhex(node.call("getblockheader", h, False))


def headers_msg(raw_headers):
    return frame("headers", ser_compact(len(raw_headers)) + b"".join(h + b"\0" for h in raw_headers))


def locator_first(payload):
    """The first locator hash of a getheaders, as getblockhash prints it."""
    n = payload[4]
    assert n >= 1 and n < 0xfd, payload[:8].hex()
    return payload[5:37][::-1].hex()


def connect_outbound(node, srv):
    """addconnection to our listener; the handshake a full node's side gives;
    returns the peer once the node's first getheaders arrived."""
    node.call("addconnection", "127.0.0.1:%d" % srv.port, "outbound-full-relay", False)
    p = srv.accept()
    v = p.recv(20)
    assert v.command == "version", v
    mine = p.version_msg()
    mine.nServices = NODE_NETWORK_WITNESS
    p.send(mine)
    p.send_raw(frame("wtxidrelay") + frame("sendaddrv2"))
    p.send(msg_verack())
    p.recv_until("getheaders", timeout=20)
    return p


def getheaders_within(p, seconds):
    """The getheaders payloads p receives within `seconds` (pings answered)."""
    got = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            m = p.recv(max(0.01, deadline - time.monotonic()))
        except (TimeoutError, PeerClosed):
            break
        if m.command == "getheaders":
            got.append(m.payload)
        elif m.command == "ping":
            p.send_raw(frame("pong", m.payload))
    return got


def settle(peers):
    """Every message sent has been handled, and the node's loop has ticked
    (peerd checks its peers every 250 ms; Core in SendMessages)."""
    for p in peers:
        p.sync_with_ping(20)
    time.sleep(1.5)


def scenario(node):
    """Run it on one node; returns what the peers saw."""
    seen = {}
    now = MOCK_START
    node.call("setmocktime", now)
    node.call("generatetodescriptor", 10, "raw(51)")
    tip_height = node.call("getblockcount")
    tip_hash, tip_raw = header_of(node, tip_height)
    prev_hash, prev_raw = header_of(node, tip_height - 1)
    listeners = []
    try:
        # ---- a lagging peer -------------------------------------------
        srv = Listener()
        listeners.append(srv)
        lag = connect_outbound(node, srv)
        lag.send_raw(headers_msg([prev_raw]))
        settle([lag])
        now += CHAIN_SYNC_TIMEOUT  # exactly 20 minutes: not yet
        node.call("setmocktime", now)
        seen["lag_getheaders_at_20min"] = len(getheaders_within(lag, 2))
        now += 1
        node.call("setmocktime", now)
        gh = getheaders_within(lag, 3)
        seen["lag_getheaders_after"] = [locator_first(g) for g in gh]
        seen["lag_open_before_2min"] = not lag.is_closed(1)
        now += HEADERS_RESPONSE_TIME + 1
        node.call("setmocktime", now)
        seen["lag_closed"] = lag.is_closed(10)
        wait_for(lambda: "Outbound peer has old chain" in node.log(), timeout=10,
                 what="%s's log line" % node.name)
        line = [x for x in node.log().splitlines() if "Outbound peer has old chain" in x][-1]
        seen["lag_log"] = line[line.index("Outbound peer has old chain"):line.index("peer=")]

        # ---- four protected peers and one that keeps up ----------------
        peers = []
        for _ in range(5):
            srv = Listener()
            listeners.append(srv)
            p = connect_outbound(node, srv)
            p.send_raw(headers_msg([tip_raw]))
            # One at a time: the first four to show our tip are protected.
            settle([p])
            peers.append(p)
        node.call("generatetodescriptor", 1, "raw(51)")
        new_hash, new_raw = header_of(node, tip_height + 1)
        settle(peers)
        now += CHAIN_SYNC_TIMEOUT + 1
        node.call("setmocktime", now)
        got = [getheaders_within(p, 3 if i == 4 else 0.5) for i, p in enumerate(peers)]
        seen["protected_getheaders"] = [len(g) for g in got[:4]]
        seen["keeper_getheaders"] = [locator_first(g) for g in got[4]]
        # It answers with our new tip: caught up.
        peers[4].send_raw(headers_msg([new_raw]))
        settle([peers[4]])
        now += HEADERS_RESPONSE_TIME + 1
        node.call("setmocktime", now)
        time.sleep(1.5)
        seen["open_after"] = [not p.is_closed(0.5) for p in peers]
        n_out = len([x for x in node.call("getpeerinfo")
                     if x["connection_type"] == "outbound-full-relay"])
        seen["outbound_full_relay"] = n_out
        for p in peers + [lag]:
            p.close()
        seen["hashes"] = {"tip": tip_hash, "prev": prev_hash, "new": new_hash}
    finally:
        for s in listeners:
            s.close()
    return seen


def expect(seen):
    h = seen["hashes"]
    assert seen["lag_getheaders_at_20min"] == 0, seen
    # From our tip's parent (Core: GetLocator(m_work_header->pprev)).
    assert seen["lag_getheaders_after"] == [h["prev"]], seen
    assert seen["lag_open_before_2min"], seen
    assert seen["lag_closed"], seen
    assert seen["lag_log"] == ("Outbound peer has old chain, best known block = %s, disconnecting "
                               % h["prev"]), seen
    assert seen["protected_getheaders"] == [0, 0, 0, 0], seen
    assert seen["keeper_getheaders"] == [h["tip"]], seen
    assert seen["open_after"] == [True] * 5, seen
    assert seen["outbound_full_relay"] == 5, seen


def named(seen):
    """seen with every block hash replaced by its role (tip, prev, new)."""
    roles = {v: k for k, v in seen["hashes"].items()}
    out = {}
    for k, v in seen.items():
        if k == "hashes":
            continue
        if isinstance(v, str):
            for hsh, role in roles.items():
                v = v.replace(hsh, role)
        elif isinstance(v, list):
            v = [roles.get(x, x) if isinstance(x, str) else x for x in v]
        out[k] = v
    return out


def test_lagging_outbound_peers_as_core(make_peerd, make_bitcoind):
    # Core's inactivity check runs on its mockable clock too: a 20-minute
    # jump would close every quiet peer (Core's functional tests run with
    # a huge -peertimeout for that). peerd's too, as Core's.
    core = make_bitcoind(1, args=("-connect=0", "-v2transport=0", "-peertimeout=999999999"),
                         small=True)[0]
    peerd = make_peerd("-connect=0", "-debug=net", "-peertimeout=999999999")
    theirs = scenario(core_node(core))
    expect(theirs)
    ours = scenario(peerd_node(peerd))
    expect(ours)
    assert named(ours) == named(theirs)


def test_setmocktime_as_core(make_peerd, make_bitcoind):
    core = make_bitcoind(1, small=True)[0]
    peerd = make_peerd()
    from bitcoind import RpcError as CoreRpcError
    from conftest import RpcError

    def answer(call, *args):
        try:
            return ("ok", call("setmocktime", *args))
        except (CoreRpcError, RpcError) as e:
            return ("error", e.code, e.message)

    cases = [(-1,), (9223372036,), (9223372037,), (2 ** 63 - 1,), (-2 ** 63,), ("1",), (1.5,),
             (0,), (MOCK_START,)]
    ours = [answer(peerd.rpc, *c) for c in cases]
    theirs = [answer(core.rpc, *c) for c in cases]
    assert ours == theirs
    # The wrong number of arguments: -1 with the help text (each its own).
    for c in [(), (1, 2)]:
        assert answer(peerd.rpc, *c)[:2] == answer(core.rpc, *c)[:2] == ("error", -1)
    assert ours[1] == ("ok", None) and ours[0][1] == -8, ours
    # The clock follows it: uptime is Core's GetTime() - startup time.
    assert peerd.rpc("uptime") > MOCK_START - time.time() - 5
    peerd.rpc("setmocktime", int(time.time()) + 1000)
    assert peerd.rpc("uptime") >= 1000
    peerd.rpc("setmocktime", 0)
    assert peerd.rpc("uptime") < 1000
