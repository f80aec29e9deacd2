"""Process lifecycle: -help, bad configuration, SIGTERM under traffic, and
one run under valgrind with no leaks."""
import os
import shutil
import signal
import struct
import subprocess
import threading
import time

import pytest
from bitcoin.messages import msg_getaddr, msg_getheaders, msg_inv, msg_ping, msg_tx
from bitcoin.net import CInv

from conftest import GENESIS_HASH, PEERD_BIN, P2P, Ctl, frame, ser_compact, wait_for
from test_daemon_handshake import make_tx


def test_help_and_bad_config(tmp_path):
    r = subprocess.run([PEERD_BIN, "-help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and "maxconnections" in r.stdout
    # As peerctl's and peertool's: an example and the exit status (issue 12).
    assert "\nExample:\n  peerd -regtest" in r.stdout and "\nExit status: 0 " in r.stdout
    for flag in ("-h", "--help", "-?"):
        assert subprocess.run([PEERD_BIN, flag], capture_output=True, text=True, timeout=10).stdout == r.stdout
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-maxconnections=lots"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "maxconnections" in r.stderr, r.stderr


def test_port_in_use_is_a_clear_error(make_peerd, tmp_path):
    a = make_peerd()
    (tmp_path / "other").mkdir()
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / "other"), "-bind=127.0.0.1",
                        "-port=%d" % a.port], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "Unable to bind to 127.0.0.1:%d on this computer" % a.port in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "other" / "regtest" / "control.sock")


def test_sigterm_under_traffic(make_peerd):
    d = make_peerd("-peertimeout=10")
    peers = [d.connected_peer() for _ in range(20)]
    stop = threading.Event()

    def flood(p, seed):
        # inv floods, pings and getheaders as fast as the socket takes them.
        n = 0
        m = msg_inv()
        m.inv = []
        for i in range(200):
            v = CInv()
            v.type = 5
            v.hash = struct.pack("<II", seed, i) + b"\x00" * 24
            m.inv.append(v)
        try:
            while not stop.is_set():
                p.send(m)
                p.send(msg_ping(nonce=n))
                n += 1
        except OSError:
            pass

    threads = [threading.Thread(target=flood, args=(p, i), daemon=True) for i, p in enumerate(peers[:10])]
    for t in threads:
        t.start()
    ctls = [Ctl(d.sock_path) for _ in range(5)]
    time.sleep(1.0)
    assert ctls[0].call("getstats")["inventory"]["inv_tx"] > 0
    rc, took = d.stop(timeout=5)
    stop.set()
    assert rc == 0, d.log()
    assert took < 5, "shutdown took %.2fs" % took
    assert not os.path.exists(d.sock_path), "control socket left behind"
    assert "shutting down: SIGTERM" in d.log()
    for p in peers:
        assert p.is_closed(2)


def test_sigint_and_banlist_saved(make_peerd):
    d = make_peerd()
    d.rpc("setban", "10.9.0.0/16", "add")
    d.proc.send_signal(signal.SIGINT)
    assert d.proc.wait(timeout=5) == 0
    assert os.path.exists(os.path.join(d.netdir, "banlist.json"))
    assert not os.path.exists(d.sock_path)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_no_leaks_under_valgrind(make_peerd):
    """A short scenario touching every handler, then SIGTERM: valgrind's
    leak check must report nothing definite or indirect (exit 99 otherwise)."""
    vg = ["valgrind", "--quiet", "--leak-check=full", "--show-leak-kinds=definite,indirect",
          "--errors-for-leak-kinds=definite,indirect", "--error-exitcode=99", "--track-fds=no"]
    # -maxtipage: out of initial block download, so the tx inv is asked for.
    d = make_peerd("-peertimeout=20", "-debug=all", "-maxtipage=2147483647", wrapper=vg)
    p = P2P(d.port, timeout=20)
    p.handshake()
    p.recv_until("ping", timeout=20)
    p.send(msg_ping(nonce=3))
    p.recv_until("pong", timeout=20)
    tx = make_tx(9)
    m = msg_inv()
    v = CInv()
    v.type = 5
    v.hash = tx.GetHash()
    m.inv = [v]
    p.send(m)
    p.recv_until("getdata", timeout=20)
    t = msg_tx()
    t.tx = tx
    p.send(t)
    g = msg_getheaders()
    g.locator.nVersion = 70016
    g.hashstop = GENESIS_HASH
    p.send(g)
    p.recv_until("headers", timeout=20)
    entries = b"".join(struct.pack("<IQ", int(time.time()), 1) + b"\0" * 10 + b"\xff\xff" + bytes([9, 9, 9, i])
                       + struct.pack(">H", 8333) for i in range(5))
    # Five addresses (five /16s): getaddr is answered with 23 % of them at
    # once (address relay starts with it; after that the queue waits for its
    # ~30 s timer, as Core's), then an addr of which the token bucket lets one in.
    for i in range(5):
        assert d.rpc("addpeeraddress", "9.%d.9.9" % i, 8333)["success"]
    p.send(msg_getaddr())
    assert len(p.recv_until("addrv2", timeout=20).obj) == 1
    p.send_raw(frame("addr", ser_compact(5) + entries))
    p.send_raw(frame("ping", b"\x00" * 8, checksum=b"\0\0\0\0"))
    bad = P2P(d.port, timeout=20)
    # A v2 key, then garbage with no terminator in 4,095 bytes: closed.
    bad.send_raw(os.urandom(64 + 4096 + 16))
    assert bad.is_closed(10)
    c = Ctl(d.sock_path, timeout=20)
    for method in ("getpeerinfo", "getstats", "getnetworkinfo", "listbanned", "help", "uptime", "getnettotals",
                   "getaddrmaninfo", "getrawaddrman", "getnodeaddresses"):
        c.call(method)
    c.call("setban", "10.0.0.0/8", "add")
    c.call("addnode", "127.0.0.1:1", "add")
    c.send_line("garbage\n")
    wait_for(lambda: d.rpc("getstats")["inventory"]["tx_received"] == 1, timeout=20, what="tx")
    rc, took = d.stop(timeout=30)
    assert rc == 0, "valgrind reported errors or leaks (exit %d):\n%s" % (rc, d.log()[-4000:])


def test_sd_notify(tmp_path):
    """READY=1 once listening, STATUS= with peer counts, STOPPING=1 on SIGTERM."""
    import socket as so

    from conftest import start_with_notify

    d, ns = start_with_notify(tmp_path, "notify.sock", ["-peertimeout=5"], timeout=5)
    try:
        ready = ns.recv(4096).decode()
        assert "READY=1" in ready and "STATUS=0 peers" in ready, ready
        p = d.connected_peer()
        status = ns.recv(4096).decode()
        assert status.startswith("STATUS=1 peers (1 inbound, 0 outbound)"), status
        p.close()
        rc, _ = d.stop()
        assert rc == 0
        ns.settimeout(0.5)
        msgs = []
        try:
            while True:
                msgs.append(ns.recv(4096).decode())
        except so.timeout:
            pass
        assert any("STOPPING=1" in m for m in msgs), msgs
    finally:
        d.kill()
        ns.close()
