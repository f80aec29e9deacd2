"""Hostile input against the real binary (DESIGN.md, "Bad input").

40 hostile peers spend ~10 s each sending mutated versions of valid
messages (bit flips, truncations, huge counts, lying lengths, random
commands, interleaved garbage), reconnecting fast and abandoning
half-written frames; meanwhile 4 honest peers ping and must get every pong
within PONG_DEADLINE. Afterwards peerd must be alive and answering on the control
socket, have counted the decode errors, have bounded RSS, have given back
every file descriptor, and stop cleanly on SIGTERM.

Every hostile peer draws from its own random.Random seeded from one
random.Random(1234), so a failure replays with the same byte streams
(thread scheduling aside). Everything is loopback and bounded in time.
"""
import multiprocessing
import os
import random
import socket
import struct
import threading
import time

from conftest import GENESIS_HASH, MAGIC, P2P, frame, ser_compact, sha256d, wait_for

SEED = 1234
HOSTILE_PEERS = 40
HONEST_PEERS = 4
HOSTILE_SECONDS = 10.0
# An honest ping's pong within this: peerd's loop is never held up for long by
# the hostile peers. The honest peers run in a process of their own: while
# they shared this one's GIL with the 40 hostile threads, a loaded machine
# (load 12) starved all four of them at once and the test measured Python
# (CI missed 2.0 s twice in 30 pings at load 8; then 5 s).
PONG_DEADLINE = 5.0
PING_INTERVAL = 0.05
CLOSE_DEADLINE = 30.0
# Under ASan freed memory sits in a quarantine (256 MiB by default) before
# reuse, so RSS there measures the sanitizer more than peerd: the bound is
# the plain one plus a full quarantine. (Since BIP324, every inbound
# connection allocates its responder state until its first bytes say v1,
# and the hostile peers' thousands of connections fill the quarantine
# past 192 MiB; plain, the growth stays under 64 MiB.)
# This test's ASan peerd keeps a 64 MiB quarantine (ASAN_QUARANTINE_MB),
# so the bound is the plain one, that quarantine and its shadow and
# allocator overhead (CI saw 329 MiB over a 320 MiB bound with the default
# 256 MiB quarantine: the sanitizer, not peerd; plain stays under 64).
ASAN = "/asan/" in os.environ.get("PEERD_BIN", "")
ASAN_QUARANTINE_MB = 64
RSS_GROWTH_MAX = ((64 + ASAN_QUARANTINE_MB + 64) if ASAN else 64) << 20
FD_SLACK = 2


def _version_payload(rng):
    ua = b"/hostile:0.1/"
    addr = struct.pack("<Q", 9) + bytes(10) + b"\xff\xff" + bytes([127, 0, 0, 1]) + struct.pack(">H", 18444)
    return (struct.pack("<iQq", 70016, 9, int(time.time())) + addr + addr
            + struct.pack("<Q", rng.getrandbits(64)) + ser_compact(len(ua)) + ua
            + struct.pack("<i", 0) + b"\x01")


def _tx_payload(rng):
    script_sig = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120)))
    return (struct.pack("<i", 2) + ser_compact(1) + rng.randbytes(32) + struct.pack("<I", 0)
            + ser_compact(len(script_sig)) + script_sig + struct.pack("<I", 0xFFFFFFFF)
            + ser_compact(1) + struct.pack("<q", 5000) + ser_compact(22) + b"\x00\x14" + bytes(20)
            + struct.pack("<I", 0))


def _inv_payload(rng):
    n = rng.randrange(1, 20)
    return ser_compact(n) + b"".join(struct.pack("<I", rng.choice((1, 2, 5, 0x40000001))) + rng.randbytes(32)
                                     for _ in range(n))


def _header(rng):
    return (struct.pack("<i", 0x20000000) + GENESIS_HASH + rng.randbytes(32)
            + struct.pack("<III", int(time.time()), 0x207FFFFF, rng.getrandbits(32)))


def _addrv2_payload(rng):
    n = rng.randrange(1, 10)
    out = ser_compact(n)
    for _ in range(n):
        net, alen = rng.choice(((1, 4), (2, 16), (4, 32), (5, 16), (6, 16)))
        out += (struct.pack("<I", int(time.time())) + ser_compact(9) + bytes([net]) + ser_compact(alen)
                + rng.randbytes(alen) + struct.pack(">H", 8333))
    return out


def _addr_payload(rng):
    n = rng.randrange(1, 10)
    return ser_compact(n) + b"".join(struct.pack("<IQ", int(time.time()), 9) + bytes(10) + b"\xff\xff"
                                     + rng.randbytes(4) + struct.pack(">H", 8333) for _ in range(n))


# (command, payload factory, offset of a leading element count or None)
TEMPLATES = [
    ("ping", lambda r: struct.pack("<Q", r.getrandbits(64)), None),
    ("pong", lambda r: struct.pack("<Q", r.getrandbits(64)), None),
    ("inv", _inv_payload, 0),
    ("getdata", _inv_payload, 0),
    ("notfound", _inv_payload, 0),
    ("getheaders", lambda r: struct.pack("<I", 70016) + ser_compact(1) + GENESIS_HASH + bytes(32), 4),
    ("getblocks", lambda r: struct.pack("<I", 70016) + ser_compact(1) + GENESIS_HASH + bytes(32), 4),
    ("headers", lambda r: ser_compact(1) + _header(r) + b"\x00", 0),
    ("addr", _addr_payload, 0),
    ("addrv2", _addrv2_payload, 0),
    ("tx", _tx_payload, None),
    ("feefilter", lambda r: struct.pack("<q", r.randrange(0, 10**6)), None),
    ("sendcmpct", lambda r: struct.pack("<?Q", r.random() < 0.5, 2), None),
    ("sendheaders", lambda r: b"", None),
    ("getaddr", lambda r: b"", None),
    ("mempool", lambda r: b"", None),
    ("version", _version_payload, None),
    ("verack", lambda r: b"", None),
]

HUGE_COUNTS = [b"\xfe\xff\xff\xff\xff", b"\xff" + b"\xff" * 8, ser_compact(50001), ser_compact(2001),
               ser_compact(1001), ser_compact(102), b"\xfd"]


def _header_bytes(command, length, checksum, magic=MAGIC):
    if isinstance(command, str):
        command = command.encode()
    return magic + command[:12].ljust(12, b"\0") + struct.pack("<I", length) + checksum


def mutated_message(rng):
    """One valid message, usually damaged; returns the bytes to send."""
    command, make, count_at = rng.choice(TEMPLATES)
    payload = bytearray(make(rng))
    kind = rng.randrange(9)
    if kind == 0:
        return frame(command, bytes(payload))  # left valid: keeps the handlers busy too
    if kind == 1 and payload:  # bit flips, checksum usually fixed so the decoder sees them
        for _ in range(rng.randrange(1, 5)):
            i = rng.randrange(len(payload))
            payload[i] ^= 1 << rng.randrange(8)
        return frame(command, bytes(payload), checksum=None if rng.random() < 0.8 else b"\0\0\0\0")
    if kind == 2 and payload:  # truncation, header consistent with it
        return frame(command, bytes(payload[: rng.randrange(len(payload))]))
    if kind == 3 and count_at is not None:  # count field set huge
        p = bytes(payload[:count_at]) + rng.choice(HUGE_COUNTS) + bytes(payload[count_at + 1:])
        return frame(command, p)
    if kind == 4:  # the header's length lies (more or less than what follows)
        lie = max(0, len(payload) + rng.choice((-8, -1, 1, 8, 1000, 70000)))
        return _header_bytes(command, lie, sha256d(bytes(payload))[:4]) + bytes(payload)
    if kind == 5:  # random command: printable, or not
        if rng.random() < 0.5:
            name = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(1, 13)))
        else:
            name = rng.randbytes(12)
        return _header_bytes(name, len(payload), sha256d(bytes(payload))[:4]) + bytes(payload)
    if kind == 6:  # garbage interleaved after a valid frame
        return frame(command, bytes(payload)) + rng.randbytes(rng.randrange(1, 64))
    if kind == 7:  # wrong checksum
        return frame(command, bytes(payload), checksum=rng.randbytes(4))
    # wrong magic (another network's)
    return frame(command, bytes(payload), magic=bytes.fromhex("f9beb4d9"))


class Hostile(threading.Thread):
    """One hostile peer slot: connects, misbehaves, reconnects until its time is up."""

    def __init__(self, port, seed, deadline):
        super().__init__(daemon=True)
        self.port = port
        self.rng = random.Random(seed)
        self.deadline = deadline
        self.connections = 0
        self.sent_frames = 0
        self.error = None

    def run(self):
        try:
            while time.monotonic() < self.deadline:
                self.session()
        except Exception as e:  # a bug in this test, not a peerd failure mode
            self.error = "%s: %r" % (type(e).__name__, e)

    def _drain(self, s):
        # With a timeout set, Python polls before recv whatever the flags,
        # so the socket is made non-blocking for the drain.
        s.setblocking(False)
        try:
            while s.recv(65536):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        finally:
            s.settimeout(2)

    def session(self):
        rng = self.rng
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
        except OSError:
            time.sleep(0.01)
            return
        self.connections += 1
        s.settimeout(2)
        try:
            what = rng.random()
            if what < 0.1:  # fast reconnect: connect and go
                return
            if what < 0.2:  # half-written frame, then close
                f = frame(rng.choice(TEMPLATES)[0], rng.randbytes(rng.randrange(0, 600)))
                if rng.random() < 0.5:
                    f = _header_bytes("block", rng.randrange(1000, 4_000_000), b"\0\0\0\0") + f[24:]
                s.sendall(f[: rng.randrange(1, len(f))])
                return
            if rng.random() < 0.85:  # usually a valid handshake first
                s.sendall(frame("version", _version_payload(rng)) + frame("wtxidrelay")
                          + frame("sendaddrv2") + frame("verack"))
            for _ in range(rng.randrange(1, 60)):
                if time.monotonic() >= self.deadline:
                    break
                s.sendall(mutated_message(rng))
                self.sent_frames += 1
                self._drain(s)
        except OSError:
            pass  # peerd closed us: expected for much of what we send
        finally:
            s.close()


class Honest(threading.Thread):
    """A well-behaved peer that pings and times every pong."""

    def __init__(self, port, stop):
        super().__init__(daemon=True)
        self.port = port
        self.stop = stop
        self.pings = 0
        self.worst = 0.0
        self.error = None
        self.peer = None
        self.first_pong = threading.Event()

    def run(self):
        try:
            self.peer = P2P(self.port, timeout=5)
            self.peer.handshake()
            nonce = 1
            while not self.stop.is_set():
                t0 = time.monotonic()
                self.peer.send_raw(frame("ping", struct.pack("<Q", nonce)))
                while True:
                    m = self.peer.recv_until("pong", timeout=max(0.0, t0 + PONG_DEADLINE - time.monotonic()))
                    if struct.unpack("<Q", m.payload)[0] == nonce:
                        break
                self.worst = max(self.worst, time.monotonic() - t0)
                self.pings += 1
                self.first_pong.set()
                nonce += 1
                self.stop.wait(PING_INTERVAL)
        except Exception as e:
            self.error = "%s: %r after %d pings" % (type(e).__name__, e, self.pings)
            self.first_pong.set()


def _honest_process(port, pinging, stop, close, results):
    """The honest peers, in a child process: they say when each has its first
    pong (or failed), ping until `stop`, send back (pings, worst, error) per
    peer, and stay connected until `close`."""
    halt = threading.Event()
    honest = [Honest(port, halt) for _ in range(HONEST_PEERS)]
    for h in honest:
        h.start()
    for h in honest:
        h.first_pong.wait(PONG_DEADLINE + 5)
    pinging.set()
    stop.wait(120)
    halt.set()
    for h in honest:
        h.join(PONG_DEADLINE + 3)
    results.send([(h.pings, h.worst, h.error) for h in honest])
    close.wait(120)
    for h in honest:
        if h.peer:
            h.peer.close()


def _decode_errors(stats):
    return sum(stats["decode_errors"].values())


def test_hostile_peers_do_not_hurt_honest_ones(make_peerd, monkeypatch):
    if ASAN:
        monkeypatch.setenv("ASAN_OPTIONS", "%s:quarantine_size_mb=%d" % (
            os.environ.get("ASAN_OPTIONS", ""), ASAN_QUARANTINE_MB))
    d = make_peerd("-maxconnections=200", "-peertimeout=10")
    stats0 = d.rpc("getstats")
    rss0 = stats0["process"]["rss_bytes"]
    fds0 = d.fds()
    errs0 = _decode_errors(stats0)

    # Forked before any hostile thread exists; its results come back on a pipe.
    mp = multiprocessing.get_context("fork")
    pinging, stop, close = mp.Event(), mp.Event(), mp.Event()
    results, child_end = mp.Pipe(duplex=False)
    child = mp.Process(target=_honest_process, args=(d.port, pinging, stop, close, child_end), daemon=True)
    child.start()
    assert pinging.wait(PONG_DEADLINE + 10), "honest peers not pinging"

    master = random.Random(SEED)
    deadline = time.monotonic() + HOSTILE_SECONDS
    hostile = [Hostile(d.port, master.getrandbits(64), deadline) for _ in range(HOSTILE_PEERS)]
    for h in hostile:
        h.start()
    for h in hostile:
        h.join(HOSTILE_SECONDS + 5)
    stop.set()
    assert results.poll(2 * PONG_DEADLINE + 10), "honest peers did not report"
    honest = results.recv()  # (pings, worst pong, error) per honest peer

    assert d.proc.poll() is None, "peerd died (exit %s):\n%s" % (d.proc.returncode, d.log()[-4000:])
    stuck = [i for i, h in enumerate(hostile) if h.is_alive()]
    assert not stuck, "hostile threads %s did not finish" % stuck
    bugs = [(i, h.error) for i, h in enumerate(hostile) if h.error]
    assert not bugs, "hostile peer errors: %s" % bugs
    failed = [(i, err) for i, (_, _, err) in enumerate(honest) if err]
    assert not failed, "honest peers lost a pong (deadline %.1fs): %s" % (PONG_DEADLINE, failed)
    assert all(pings >= 10 for pings, _, _ in honest), "honest pings: %s" % [h[0] for h in honest]
    connections = sum(h.connections for h in hostile)
    frames = sum(h.sent_frames for h in hostile)
    assert connections >= HOSTILE_PEERS and frames > 1000, (connections, frames)

    # Still serving, with the damage counted.
    assert d.rpc("getconnectioncount") >= HONEST_PEERS
    stats = d.rpc("getstats")
    assert _decode_errors(stats) > errs0, "decode error counters did not move: %s" % stats["decode_errors"]
    for name in ("ECHECKSUM", "EMAGIC", "ECOMMAND"):
        assert stats["decode_errors"][name] > stats0["decode_errors"][name], (name, stats["decode_errors"])
    grew = stats["process"]["rss_bytes"] - rss0
    print("hostile: %d connections, %d frames; honest: %d pings, worst pong %.3fs; RSS +%.1f MiB; "
          "decode errors +%d; misbehaving %d" % (
              connections, frames, sum(h[0] for h in honest), max(h[1] for h in honest),
              grew / 2**20, _decode_errors(stats) - errs0, stats["peers"]["misbehaving"]))
    assert grew < RSS_GROWTH_MAX, "RSS grew %d MiB (limit %d MiB)" % (grew >> 20, RSS_GROWTH_MAX >> 20)

    close.set()
    child.join(10)
    # A paused peer (waiting for receive memory, or for its messages to be
    # handled) reads its EOF only when it reads again: under ASan on a loaded
    # machine the hostile backlog can take a while, hence the margin.
    try:
        wait_for(lambda: d.rpc("getconnectioncount") == 0, timeout=CLOSE_DEADLINE,
                 what="every peer closed")
    except AssertionError:
        # Which peers stayed, and in what state, is what a failure here needs.
        keys = ("id", "addr", "inbound", "version", "conntime", "lastsend", "lastrecv",
                "bytessent", "bytesrecv", "transport_protocol_type")
        left = [{k: p.get(k) for k in keys} for p in d.rpc("getpeerinfo")]
        budget = d.rpc("getstats").get("recv_budget")
        raise AssertionError("peers still connected %.0f s after the honest child (exit %s) "
                             "closed: %s; receive budget: %s" % (CLOSE_DEADLINE, child.exitcode,
                                                                 left, budget))
    wait_for(lambda: d.fds() <= fds0 + FD_SLACK, timeout=5,
             what="open fds back to %d (+%d), now %d" % (fds0, FD_SLACK, d.fds()))
    fl = d.rpc("getstats")["freelists"]["script"]
    assert fl["in_use"] == 0, "script buffers still held with no peers: %s" % fl

    # A fresh honest peer still gets through.
    p = d.connected_peer()
    p.send_raw(frame("ping", struct.pack("<Q", 99)))
    assert struct.unpack("<Q", p.recv_until("pong", timeout=PONG_DEADLINE).payload)[0] == 99
    p.close()

    rc, took = d.stop(timeout=5)
    assert rc == 0, "peerd exited with %d:\n%s" % (rc, d.log()[-4000:])
    assert took < 5, "shutdown took %.1fs" % took
