"""Outbound connections: connect=, addnode (config and RPC), reconnect with
backoff, two peerds, self-connection detection."""
import socket
import time

from bitcoin.messages import msg_verack

from conftest import MAGIC, P2P, PeerClosed, free_port, frame, wait_for


class Listener:
    """A test peer's listening socket on 127.0.0.1."""

    def __init__(self, port=None):
        self.port = port or free_port()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(8)
        self.sock.settimeout(10)
        self.v2_refused = 0

    def accept(self, timeout=10):
        """The next connection that speaks v1. As a v1-only node, one whose
        first bytes are not the magic (peerd's BIP324 v2 key) is closed at
        once: peerd then dials again with v1 (Core's ShouldReconnectV1)."""
        deadline = time.monotonic() + timeout
        while True:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            conn, _ = self.sock.accept()
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            first = conn.recv(4, socket.MSG_PEEK)
            if first == MAGIC[:len(first)] and len(first) == 4:
                return P2P(None, sock=conn, timeout=5)
            self.v2_refused += 1
            conn.close()

    def close(self):
        self.sock.close()


def answer_handshake(p):
    """Respond as Core's inbound side does to peerd's outbound version."""
    v = p.recv()
    assert v.command == "version", v
    p.send(p.version_msg())
    p.send_raw(frame("wtxidrelay") + frame("sendaddrv2"))
    p.send(msg_verack())
    return v


def test_outbound_connect_handshake(make_peerd):
    srv = Listener()
    d = make_peerd("-connect=127.0.0.1:%d" % srv.port, "-peertimeout=5", listen=False)
    p = srv.accept()
    v = answer_handshake(p)
    assert v.obj.nVersion == 70016 and v.obj.strSubVer.startswith(b"/peerd:")
    cmds = [p.recv().command for _ in range(7)]
    # peerd's reply to our version (with getaddr, as Core to an outbound
    # peer), then what follows our verack.
    assert cmds == ["wtxidrelay", "sendaddrv2", "verack", "getaddr", "sendcmpct", "ping", "feefilter"], cmds
    info = wait_for(lambda: d.rpc("getpeerinfo"), what="peer listed")[0]
    assert info["inbound"] is False and info["connection_type"] == "manual", info
    assert info["addr"] == "127.0.0.1:%d" % srv.port
    net = d.rpc("getnetworkinfo")
    assert net["connections_out"] == 1 and net["connections_in"] == 0
    srv.close()


def test_reconnect_after_restart(make_peerd):
    srv = Listener()
    port = srv.port
    d = make_peerd("-addnode=127.0.0.1:%d" % port, "-peertimeout=5", listen=False)
    p = srv.accept()
    answer_handshake(p)
    p.recv_until("feefilter")
    # The test peer goes away entirely, then comes back on the same port.
    refused = srv.v2_refused
    p.close()
    srv.close()
    wait_for(lambda: d.rpc("getconnectioncount") == 0, what="connection lost")
    time.sleep(0.5)
    srv = Listener(port)
    t0 = time.monotonic()
    p = srv.accept(timeout=10)
    assert time.monotonic() - t0 < 5, "reconnect took too long"
    answer_handshake(p)
    p.recv_until("feefilter")
    wait_for(lambda: d.rpc("getconnectioncount") == 1, what="reconnected")
    stats = d.rpc("getstats")["peers"]
    # Each time a v2 attempt (closed by this v1-only peer), then v1.
    assert refused == 1 and srv.v2_refused == 1
    assert stats["outbound_connected"] == 2 + 2, stats
    srv.close()


def test_connect_refused_retries_with_backoff(make_peerd):
    port = free_port()
    d = make_peerd("-connect=127.0.0.1:%d" % port, listen=False)
    time.sleep(3.2)
    stats = d.rpc("getstats")["peers"]
    # 1 s, 2 s, 4 s...: in 3 s about three attempts, not dozens.
    assert 2 <= stats["outbound_attempts"] <= 4, stats
    assert stats["outbound_failed"] == stats["outbound_attempts"]


def test_two_peerds_connect(make_peerd):
    a = make_peerd("-peertimeout=5")
    b = make_peerd("-connect=127.0.0.1:%d" % a.port, "-peertimeout=5", listen=False)
    wait_for(lambda: any(i["handshake_complete"] for i in a.rpc("getpeerinfo")), what="a sees b")
    wait_for(lambda: any(i["handshake_complete"] for i in b.rpc("getpeerinfo")), what="b sees a")
    ia = a.rpc("getpeerinfo")[0]
    ib = b.rpc("getpeerinfo")[0]
    assert ia["inbound"] and ia["subver"].startswith("/peerd:"), ia
    assert not ib["inbound"] and ib["connection_type"] == "manual", ib
    assert ib["wtxidrelay"] and ib["addrv2"]
    # Ping both ways completes (each sent one after verack).
    wait_for(lambda: "pingtime" in a.rpc("getpeerinfo")[0] and "pingtime" in b.rpc("getpeerinfo")[0],
             what="ping round trips")


def test_self_connection_detected(make_peerd):
    port = free_port()
    d = make_peerd("-addnode=127.0.0.1:%d" % port, "-peertimeout=5", port=port)
    wait_for(lambda: d.rpc("getstats")["peers"]["self_connections"] >= 1, what="self connection detected")
    assert not any(i["handshake_complete"] for i in d.rpc("getpeerinfo"))


def test_addnode_rpc(make_peerd):
    d = make_peerd("-peertimeout=5")
    srv = Listener()
    name = "127.0.0.1:%d" % srv.port
    assert d.rpc("addnode", name, "add") is None
    p = srv.accept()
    answer_handshake(p)
    p.recv_until("feefilter")
    wait_for(lambda: d.rpc("getconnectioncount") == 1, what="addnode connection")
    err = None
    try:
        d.rpc("addnode", name, "add")
    except Exception as e:
        err = e
    assert err is not None and err.code == -23, err
    assert d.rpc("addnode", name, "remove") is None
    try:
        d.rpc("addnode", name, "remove")
        raise AssertionError("second remove must fail")
    except Exception as e:
        assert getattr(e, "code", None) == -24, e
    # Removing does not disconnect (as Core); disconnectnode does, and
    # with the target gone nothing reconnects.
    assert d.rpc("getconnectioncount") == 1
    assert d.rpc("disconnectnode", name) is None
    assert p.is_closed(2)
    srv.sock.settimeout(2.5)
    try:
        srv.sock.accept()
        raise AssertionError("reconnected after addnode remove")
    except socket.timeout:
        pass
    # onetry: one connection, no retry after it ends.
    assert d.rpc("addnode", name, "onetry") is None
    p2 = srv.accept()
    answer_handshake(p2)
    p2.recv_until("feefilter")
    p2.close()
    wait_for(lambda: d.rpc("getconnectioncount") == 0, what="onetry closed")
    srv.sock.settimeout(2.5)
    try:
        srv.sock.accept()
        raise AssertionError("onetry reconnected")
    except socket.timeout:
        pass
    srv.close()


def test_disconnectnode_by_id(peerd):
    p = peerd.connected_peer()
    pid = peerd.rpc("getpeerinfo")[0]["id"]
    assert peerd.rpc("disconnectnode", "", pid) is None
    assert p.is_closed(2)
    try:
        peerd.rpc("disconnectnode", "", pid)
        raise AssertionError("disconnecting a gone peer must fail")
    except Exception as e:
        assert getattr(e, "code", None) == -29, e
    try:
        peerd.rpc("disconnectnode", "1.2.3.4:5", 3)
        raise AssertionError("both address and id must fail")
    except Exception as e:
        assert getattr(e, "code", None) == -32602, e
    # PeerClosed is what a later read reports.
    try:
        p.recv(timeout=0.2)
    except (PeerClosed, TimeoutError, OSError):
        pass


def test_addnode_hostname(make_peerd):
    """A name is resolved off the loop (uv_getaddrinfo); if "localhost"
    resolves to ::1 first, the next attempt uses 127.0.0.1."""
    srv = Listener()
    d = make_peerd("-addnode=localhost:%d" % srv.port, "-peertimeout=5", listen=False)
    p = srv.accept(timeout=8)
    answer_handshake(p)
    p.recv_until("feefilter")
    wait_for(lambda: d.rpc("getconnectioncount") == 1, what="connected by name")
    srv.close()
