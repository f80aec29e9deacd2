"""Inbound eviction (issue 20): one address holding every inbound slot must
not lock honest peers out. 125 idle connections from 127.0.0.1 (the 114
inbound slots of the default maxconnections=125, as Core's, fill and the
flood's own extras evict its youngest; they finish
the version handshake, then never read nor answer a ping), then 3 honest
peers from 127.0.0.2-4 that finish the handshake and answer pings: each
newcomer evicts one of the flood's connections as Core's SelectNodeToEvict
does (the honest peers already in are protected by their ping), so all 3 get
in and stay. The same scenario against a real bitcoind shows Core letting 3
of 3 in.
"""
import socket
import time

from bitcoin.messages import msg_ping, msg_pong

from conftest import P2P, PeerClosed, frame, wait_for

FLOOD = 125
# Core's m_max_inbound: maxconnections less 8 full-relay, 2 block-relay-only
# and 1 feeler outbound slots.
INBOUND = 114
HONEST = ("127.0.0.2", "127.0.0.3", "127.0.0.4")


def flood(port, n=FLOOD):
    """n connections from 127.0.0.1 that complete the version handshake and
    then stay idle: they read nothing more and answer no ping."""
    peers = [P2P(port, timeout=30) for _ in range(n)]
    for p in peers:  # all versions first: the handshakes run concurrently
        try:
            p.send(p.version_msg())
            p.send_raw(frame("wtxidrelay") + frame("sendaddrv2") + frame("verack"))
        except OSError:
            pass  # already evicted for one of the flood's own extras
    for p in peers:
        try:
            p.recv_until("verack", timeout=30)
        except (PeerClosed, OSError):
            pass  # Core (114 inbound slots) evicts the flood's own extras
    return peers


class Honest:
    """A peer from another loopback address that completes the handshake and
    answers the node's pings (so the node measures its round trip)."""

    def __init__(self, port, ip):
        self.ip = ip
        s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(ip, 0))
        self.p = P2P(None, sock=s, timeout=10)
        self.in_ = False
        try:
            self.p.send(self.p.version_msg())
            self.p.send_raw(frame("wtxidrelay") + frame("sendaddrv2") + frame("verack"))
            self.p.recv_until("verack", timeout=10)
            self.in_ = True
        except Exception:  # closed at once: refused
            return
        self.answer_pings(5)

    def answer_pings(self, seconds):
        """Answer every ping that arrives within `seconds`; False once closed."""
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                try:
                    m = self.p.recv(timeout=max(0.05, deadline - time.monotonic()))
                except TimeoutError:
                    break
                if m.command == "ping":
                    pong = msg_pong()
                    pong.nonce = int.from_bytes(m.payload[:8], "little")
                    self.p.send(pong)
        except Exception:
            return False
        return True

    def alive(self, nonce):
        """Still connected: our ping is answered (answering the node's meanwhile)."""
        try:
            self.p.send(msg_ping(nonce=nonce))
            while True:
                m = self.p.recv(timeout=5)
                if m.command == "pong" and int.from_bytes(m.payload[:8], "little") == nonce:
                    return True
                if m.command == "ping":
                    pong = msg_pong()
                    pong.nonce = int.from_bytes(m.payload[:8], "little")
                    self.p.send(pong)
        except Exception:
            return False

    def close(self):
        self.p.close()


def closed_count(peers):
    return sum(1 for p in peers if p.is_closed(0.05))


def run_scenario(port, connected_addrs):
    """The measurement: the flood, then the 3 honest peers one by one.
    Returns (honest peers in and still connected, flood connections closed,
    addresses the node lists)."""
    peers = flood(port)
    honest = []
    try:
        # Let the node ping the flood (unanswered) before the newcomers come.
        time.sleep(1.0)
        for ip in HONEST:
            h = Honest(port, ip)
            honest.append(h)
        # Every honest peer still there a moment later, answering.
        for h in honest:
            h.answer_pings(0.5)
        stayed = [h.ip for h in honest if h.in_ and h.alive(7000 + int(h.ip.rsplit(".", 1)[1]))]
        gone = closed_count(peers)
        return stayed, gone, connected_addrs()
    finally:
        for h in honest:
            h.close()
        for p in peers:
            p.close()


def test_flood_from_one_address_does_not_lock_out_honest_peers(make_peerd):
    d = make_peerd("-peertimeout=120", "-debug=net")
    assert d.rpc("getstats")["peers"]["max_inbound"] == INBOUND

    def addrs():
        return [i["addr"].rsplit(":", 1)[0] for i in d.rpc("getpeerinfo")]

    stayed, gone, listed = run_scenario(d.port, addrs)
    assert stayed == list(HONEST), "honest peers in: %s of %s" % (stayed, HONEST)
    # One of the flood's connections made room for each of its own extras
    # and for each of them, and the node stayed full: nobody else was dropped.
    extras = FLOOD - INBOUND
    assert gone == extras + len(HONEST), "%d flood connections closed" % gone
    assert sorted(a for a in listed if a != "127.0.0.1") == sorted(HONEST), listed
    assert len(listed) == INBOUND, len(listed)
    stats = d.rpc("getstats")["peers"]
    assert stats["inbound_evicted"] == extras + len(HONEST), stats
    assert stats["inbound_rejected_full"] == 0, stats
    wait_for(lambda: "selected inbound connection for eviction, disconnecting peer=" in d.log(),
             what="Core's eviction line in the log")


def test_full_of_protected_peers_refuses_newcomer(make_peerd):
    """When no one can be evicted (20 or fewer inbound peers are always all
    protected), the newcomer is refused, with Core's log line."""
    # 21 connections: 11 automatic outbound slots and 10 inbound, as Core.
    d = make_peerd("-maxconnections=21", "-peertimeout=120", "-debug=net")
    peers = [d.connected_peer() for _ in range(10)]
    extra = P2P(d.port)
    assert extra.is_closed(3), "the newcomer stayed although no one could be evicted"
    stats = d.rpc("getstats")["peers"]
    assert stats["inbound_rejected_full"] == 1 and stats["inbound_evicted"] == 0, stats
    assert not any(p.is_closed(0.05) for p in peers)
    wait_for(lambda: "failed to find an eviction candidate - connection dropped (full)" in d.log(),
             what="Core's refusal line in the log")


def test_core_lets_honest_peers_in(make_bitcoind):
    """The same measurement against Bitcoin Core 29 (its 114 inbound slots
    are full after the flood): 3 of 3 honest peers get in."""
    core = make_bitcoind(1, args=("-maxconnections=125", "-peertimeout=120"))[0]

    def addrs():
        return [i["addr"].rsplit(":", 1)[0] for i in core.getpeerinfo()]

    stayed, gone, listed = run_scenario(core.port, addrs)
    assert stayed == list(HONEST), "Core let in %s of %s" % (stayed, HONEST)
    assert sorted(a for a in listed if a != "127.0.0.1") == sorted(HONEST), listed
    # Core keeps 11 slots for its outbound connections: 114 inbound.
    assert len(listed) == INBOUND, len(listed)
