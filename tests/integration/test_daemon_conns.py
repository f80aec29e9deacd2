"""Many peers, the maxconnections rule, and hostile input: each gets its
treatment while the other peers keep working."""
import os
import socket
import struct
import time

from bitcoin.messages import msg_inv, msg_ping
from bitcoin.net import CInv

from conftest import GENESIS_HASH, MAGIC, P2P, free_port, frame, ser_compact, wait_for


def alive(p, nonce):
    p.send(msg_ping(nonce=nonce))
    return p.recv_until("pong", timeout=3).obj.nonce == nonce


def test_200_concurrent_peers(make_peerd):
    d = make_peerd("-maxconnections=250", "-peertimeout=10")
    peers = [P2P(d.port, timeout=10) for _ in range(200)]
    # All versions first, then collect: the handshakes run concurrently.
    for p in peers:
        p.send(p.version_msg())
        p.send_raw(frame("wtxidrelay") + frame("sendaddrv2") + frame("verack"))
    for p in peers:
        p.recv_until("verack", timeout=10)
    wait_for(lambda: d.rpc("getconnectioncount") == 200, timeout=5, what="200 connections")
    info = d.rpc("getpeerinfo")
    assert len(info) == 200
    assert all(i["handshake_complete"] for i in wait_for(
        lambda: (lambda x: x if all(i["handshake_complete"] for i in x) else None)(d.rpc("getpeerinfo")),
        what="every handshake")), "not all handshakes completed"
    assert alive(peers[0], 1) and alive(peers[-1], 2)
    net = d.rpc("getnetworkinfo")
    assert net["connections"] == 200 and net["connections_in"] == 200 and net["connections_out"] == 0
    for p in peers:
        p.close()
    wait_for(lambda: d.rpc("getconnectioncount") == 0, what="all closed")


def test_past_maxconnections_closed_without_fd_leak(make_peerd):
    # Core's share: 16 connections less 11 automatic outbound slots.
    d = make_peerd("-maxconnections=16", "-peertimeout=10")
    peers = [d.connected_peer() for _ in range(5)]
    assert d.rpc("getconnectioncount") == 5
    fds_before = d.fds()
    # The 6th and later: accepted and closed at once, counted.
    for i in range(20):
        extra = P2P(d.port)
        try:
            extra.send(extra.version_msg())
        except OSError:
            pass
        assert extra.is_closed(2), "connection %d past the limit stayed open" % i
        extra.close()
    stats = d.rpc("getstats")["peers"]
    assert stats["inbound_rejected_full"] == 20, stats
    assert d.rpc("getconnectioncount") == 5
    assert all(alive(p, i + 10) for i, p in enumerate(peers))
    wait_for(lambda: d.fds() == fds_before, what="fd count back to %d (now %d)" % (fds_before, d.fds()))
    # A slot freed is a slot available.
    peers[0].close()
    wait_for(lambda: d.rpc("getconnectioncount") == 4, what="peer gone")
    late = d.connected_peer()
    assert alive(late, 77)


def test_garbage_first_bytes_closed_fast(make_peerd):
    # With -v2transport=0 peerd speaks v1 only. A BIP324 v2 hello starts
    # with 64 key bytes: no magic. peerd must close at once so Core falls
    # back to v1 (< 1 s).
    peerd = make_peerd("-peertimeout=3", "-v2transport=0")
    good = peerd.connected_peer()
    bad = peerd.peer()
    t0 = time.monotonic()
    bad.send_raw(os.urandom(64))
    assert bad.is_closed(1.0), "garbage connection still open after 1s"
    assert time.monotonic() - t0 < 1.0
    # Even a single wrong first byte is enough.
    one = peerd.peer()
    one.send_raw(bytes([MAGIC[0] ^ 0xFF]))
    assert one.is_closed(1.0)
    assert alive(good, 3)
    stats = peerd.rpc("getstats")
    assert stats["peers"]["v2_probes_closed"] == 2, stats["peers"]
    assert stats["decode_errors"]["EMAGIC"] == 2


def test_v2_hello_answered(peerd):
    # With -v2transport (the default) the same 64 bytes are a v2 key: peerd
    # answers with its own key and garbage (64 to 64 + 4,095 bytes), then
    # waits for our terminator; nothing was a framing error.
    bad = peerd.peer()
    bad.send_raw(os.urandom(64))
    deadline = time.monotonic() + 2.0
    while len(bad.buf) < 64:
        bad._fill(deadline)
    assert len(bad.buf) >= 64
    stats = peerd.rpc("getstats")
    assert stats["peers"]["v2_probes_closed"] == 0 and stats["decode_errors"]["EMAGIC"] == 0
    info = peerd.rpc("getpeerinfo")
    assert [p["transport_protocol_type"] for p in info] == ["v2"], info


def test_bad_magic_later_disconnects(peerd):
    p = peerd.connected_peer()
    p.send_raw(frame("ping", struct.pack("<Q", 1), magic=bytes.fromhex("f9beb4d9")))
    assert p.is_closed(2)


def test_bad_checksum_dropped_peer_kept(peerd):
    p = peerd.connected_peer()
    other = peerd.connected_peer()
    p.send_raw(frame("ping", struct.pack("<Q", 41), checksum=b"\0\0\0\0"))
    p.send(msg_ping(nonce=42))
    pong = p.recv_until("pong")
    assert pong.obj.nonce == 42, "the bad-checksum ping must be dropped, the next answered"
    assert peerd.rpc("getstats")["decode_errors"]["ECHECKSUM"] == 1
    assert alive(other, 43)


def test_oversize_length_disconnects(peerd):
    p = peerd.connected_peer()
    other = peerd.connected_peer()
    hdr = MAGIC + b"block".ljust(12, b"\0") + struct.pack("<I", 4000001) + b"\0\0\0\0"
    p.send_raw(hdr)
    assert p.is_closed(2)
    assert peerd.rpc("getstats")["decode_errors"]["EOVERSIZE"] == 1
    assert alive(other, 44)


def test_invalid_command_dropped(peerd):
    p = peerd.connected_peer()
    p.send_raw(frame(b"pi\x01g", b""))
    p.send(msg_ping(nonce=45))
    assert p.recv_until("pong").obj.nonce == 45
    assert peerd.rpc("getstats")["decode_errors"]["ECOMMAND"] == 1


def test_slowloris_and_half_open(peerd):
    """-peertimeout=3: a peer trickling one byte a second and a peer that
    sends nothing are both disconnected; a normal peer stays."""
    good = peerd.connected_peer()
    half_open = peerd.peer(timeout=10)
    slow = peerd.peer(timeout=10)
    version = frame("version", b"")[:4]  # the magic, then one byte a second
    t0 = time.monotonic()
    closed_slow = None
    payload = version + b"version".ljust(12, b"\0")
    for i in range(8):
        try:
            slow.send_raw(payload[i : i + 1])
        except OSError:
            closed_slow = time.monotonic() - t0
            break
        if slow.is_closed(1.0):
            closed_slow = time.monotonic() - t0
            break
    assert closed_slow is not None and 2.5 <= closed_slow <= 6, "slowloris closed after %r s" % closed_slow
    assert half_open.is_closed(3), "half-open peer not disconnected"
    assert time.monotonic() - t0 < 8
    assert alive(good, 46)
    stats = peerd.rpc("getstats")["peers"]
    assert stats["handshake_timeouts"] == 2, stats


def test_handshake_timeout_with_version_but_no_verack(peerd):
    p = peerd.peer(timeout=10)
    p.send(p.version_msg())
    p.recv_until("verack")
    t0 = time.monotonic()
    assert p.is_closed(6)
    assert time.monotonic() - t0 < 5


def test_inv_over_limit_is_misbehaviour(peerd):
    p = peerd.connected_peer()
    other = peerd.connected_peer()
    body = ser_compact(50001) + (struct.pack("<I", 1) + b"\x11" * 32) * 50001
    p.send_raw(frame("inv", body))
    assert p.is_closed(3)
    stats = peerd.rpc("getstats")
    assert stats["peers"]["misbehaving"] == 1
    # Loopback peers are disconnected but never discouraged.
    assert stats["peers"]["discouraged"] == 0
    assert alive(other, 47)
    again = peerd.connected_peer()
    assert alive(again, 48)


def test_addr_over_limit_is_misbehaviour(peerd):
    p = peerd.connected_peer()
    entry = struct.pack("<IQ", int(time.time()), 1) + b"\0" * 10 + b"\xff\xff" + bytes([8, 8, 8, 8]) + struct.pack(">H", 8333)
    p.send_raw(frame("addr", ser_compact(1001) + entry * 1001))
    assert p.is_closed(3)
    assert peerd.rpc("getstats")["peers"]["misbehaving"] == 1


def test_large_message_buffer_returned(peerd):
    """A message over 512 bytes gets an exactly-sized buffer, returned once
    processed: idle peers hold no receive buffer."""
    p = peerd.connected_peer()
    m = msg_inv()
    for i in range(100):
        v = CInv()
        v.type = 2
        v.hash = bytes([i]) * 32
        m.inv.append(v)
    p.send(m)
    assert alive(p, 49)
    stats = peerd.rpc("getstats")
    assert stats["peers"]["rx_large_buffers"] >= 1
    assert stats["inventory"]["inv_block"] == 100
    wait_for(lambda: peerd.rpc("getstats")["peers"]["rx_buffers_held"] == 0, what="buffers returned")
    fl = peerd.rpc("getstats")["freelists"]["script"]
    assert fl["in_use"] == 0 and fl["hits"] + fl["misses"] >= 1, fl


def test_flow_control_pauses_and_resumes(make_peerd):
    """A peer that asks for a lot and reads nothing: once its send queue
    passes maxsendbuffer peerd stops processing its messages (and then
    stops reading); it resumes when the peer drains."""
    import threading

    d = make_peerd("-maxsendbuffer=1", "-peertimeout=30")
    p = d.peer(timeout=20)
    p.handshake()
    # 1,000 genesis blocks per request: ~309 KB of replies per 36 KB asked.
    req = frame("getdata", ser_compact(1000) + (struct.pack("<I", 2) + GENESIS_HASH) * 1000)
    n_req = 40
    sender = threading.Thread(target=lambda: [p.sock.sendall(req) for _ in range(n_req)], daemon=True)
    sender.start()
    info = wait_for(lambda: [i for i in d.rpc("getpeerinfo") if i["send_paused"]], timeout=10,
                    what="send paused")[0]
    assert info["sendq_bytes"] > 1000, info
    wait_for(lambda: d.rpc("getpeerinfo")[0]["recv_paused"], timeout=10, what="reading stopped")
    other = d.connected_peer()
    assert alive(other, 50), "a paused peer must not stall the others"
    # Drain: peerd resumes, serves every request, and answers a last ping.
    blocks = 0
    deadline = time.monotonic() + 60
    while blocks < n_req * 1000 and time.monotonic() < deadline:
        if p.recv(timeout=20).command == "block":
            blocks += 1
    sender.join(timeout=20)
    assert blocks == n_req * 1000, "got %d blocks" % blocks
    p.send(msg_ping(nonce=4242))
    assert p.recv_until("pong", timeout=10).obj.nonce == 4242
    info = d.rpc("getpeerinfo")
    assert not any(i["send_paused"] or i["recv_paused"] for i in info), info
    stats = d.rpc("getstats")["peers"]
    assert stats["send_pauses"] >= 1 and stats["recv_pauses"] >= 1, stats


def test_ipv6_listener(make_peerd):
    port = free_port()
    # listen=False skips the fixture's IPv4 bind; -bind=[::1]:PORT is the only listener.
    d = make_peerd("-bind=[::1]:%d" % port, "-peertimeout=5", listen=False)
    s = socket.socket(socket.AF_INET6)
    s.settimeout(5)
    wait_for(lambda: s.connect_ex(("::1", port)) == 0, what="IPv6 listener")
    p = P2P(None, sock=s)
    p.handshake()
    info = d.rpc("getpeerinfo")[0]
    assert info["addr"].startswith("[::1]:") and info["network"] == "not_publicly_routable", info
    assert info["addrbind"] == "[::1]:%d" % port
    assert alive(p, 51)
