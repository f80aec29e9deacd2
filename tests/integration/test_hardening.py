"""Issue 13's findings, each a test against the real binary (loopback, bounded).

1. A global receive budget (maxrecvmemory): a flood of peers each sending
   all but the last byte of a 4 MB block stays under it, while honest peers
   pinging and sending 1 MB messages are served.
2. Memory goes back to the system once the flood's peers have left.
3. The control socket cannot be monopolised: idle clients time out, one slot
   always stays free, a client that never reads its replies is cut off, and
   `peerctl uptime` answers quickly while 200 hostile clients push batches.
4. Bans are not lost: 200,000 entries load and are saved back whole; a
   banlist.json that does not parse is moved aside, never overwritten.
5. filterload/filteradd/filterclear disconnect (no NODE_BLOOM, as Core 29);
   a control socket in a missing directory is reported as such.

The floods run in a child process so the honest peers' timings in this one
do not wait on the flood's Python. Under ASan, freed memory sits in a
quarantine, so the RSS bounds are checked on the plain build only.
"""
import json
import multiprocessing
import os
import resource
import selectors
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import MAGIC, P2P, PEERCTL_BIN, PEERD_BIN, Ctl, frame, wait_for

ASAN = "/asan/" in os.environ.get("PEERD_BIN", "")

# ---- 1 and 2: the receive budget and memory after a flood -----------------

FLOOD_PEERS = 300          # hostile connections at once (the benchmark runs 2,000)
FLOOD_BLOCK = 3_999_999    # each announces a block of this many bytes...
FLOOD_SECONDS = 8.0        # ...and sends all of it but the last byte, reconnecting when cut
BUDGET_MIB = 32            # -maxrecvmemory for the flood
HONEST_PINGERS = 20
HONEST_BIG = 5             # honest peers that also send 1 MB messages
BIG_MESSAGE = 1_000_000
PONG_P99_MAX = 1.0 if not ASAN else 3.0  # seconds, honest pings during the flood
BIG_SERVED_MAX = 15.0      # seconds for an honest 1 MB message to be taken whole
RSS_SLACK = 40 << 20       # peerd's own growth besides the budget (peers, tables)
RETURN_SECONDS = 5.0       # after the peers leave, RSS is back within...
RETURN_FACTOR = 2.0        # ...this factor of the baseline


def _vm(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no %s for pid %d" % (key, pid))


def _raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def _flood(port, n, seconds, reconnect, counts):
    """Child process: n connections each send a block header and all but its
    last byte, as fast as peerd reads; cut connections come back while
    `reconnect`. counts[0] gets connections made, counts[1] those cut."""
    _raise_nofile(n + 64)
    head = MAGIC + b"block".ljust(12, b"\0") + struct.pack("<I", FLOOD_BLOCK) + b"\0\0\0\0"
    data = memoryview(head + bytes(FLOOD_BLOCK - 1))
    sel = selectors.DefaultSelector()
    conns = {}

    def connect():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        conns[s] = 0
        sel.register(s, selectors.EVENT_WRITE)
        counts[0] += 1

    for _ in range(n):
        connect()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            off = conns[s]
            try:
                sent = s.send(data[off : off + 262144])
            except BlockingIOError:
                continue
            except OSError:
                sent = -1
            if sent <= 0:
                sel.unregister(s)
                s.close()
                del conns[s]
                counts[1] += 1
                if reconnect:
                    connect()
                continue
            conns[s] = off + sent
            if conns[s] == len(data):
                sel.unregister(s)  # all but the last byte: stall, holding it
    if not reconnect:
        # Hold the stalled messages until told to leave.
        while counts[2] == 0:
            time.sleep(0.05)
    for s in list(conns):
        s.close()


class _Honest(threading.Thread):
    """A handshaken peer pinging (and, if big, sending 1 MB messages)."""

    def __init__(self, peerd, big, stop):
        super().__init__(daemon=True)
        self.p = peerd.peer(timeout=20)
        self.p.handshake()
        self.big, self.stop, self.rtts, self.big_times, self.error = big, stop, [], [], None

    def ping(self, nonce):
        t0 = time.monotonic()
        self.p.send_raw(frame("ping", struct.pack("<Q", nonce)))
        while True:
            m = self.p.recv_until("pong", timeout=20)
            if struct.unpack("<Q", m.payload[:8])[0] == nonce:
                return time.monotonic() - t0

    def run(self):
        nonce = 1
        try:
            while not self.stop.is_set():
                if self.big:
                    # An unknown command of a block's size: read whole,
                    # counted, dropped; the pong after it proves it was read.
                    t0 = time.monotonic()
                    self.p.send_raw(frame("bigmsg", bytes(BIG_MESSAGE)))
                    self.ping(nonce)
                    self.big_times.append(time.monotonic() - t0)
                else:
                    self.rtts.append(self.ping(nonce))
                nonce += 1
                time.sleep(0.05)
        except Exception as e:  # reported by the test
            self.error = e


def _stats(d):
    return d.rpc("getstats")


def test_recv_budget_bounds_a_flood_and_serves_honest_peers(make_peerd):
    _raise_nofile(FLOOD_PEERS + 256)
    # The flood sends v1 block frames before any version: v1 only (with
    # -v2transport they would be taken for v2 keys, as Core takes them).
    d = make_peerd("-maxconnections=%d" % (FLOOD_PEERS + 100), "-maxrecvmemory=%d" % BUDGET_MIB,
                   "-v2transport=0")
    budget = _stats(d)["recv_budget"]
    assert budget["limit"] == BUDGET_MIB << 20
    base = _vm(d.pid, "VmRSS")
    stop = threading.Event()
    honest = [_Honest(d, i < HONEST_BIG, stop) for i in range(HONEST_PINGERS + HONEST_BIG)]
    for h in honest:
        h.start()
    counts = multiprocessing.Array("l", 3)
    flood = multiprocessing.Process(target=_flood, args=(d.port, FLOOD_PEERS, FLOOD_SECONDS, True, counts))
    flood.start()
    held_seen = 0
    try:
        deadline = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < deadline:
            b = _stats(d)["recv_budget"]
            assert b["held"] <= b["limit"], b
            held_seen = max(held_seen, b["held"])
            time.sleep(0.25)
    finally:
        flood.join(timeout=FLOOD_SECONDS + 30)
        stop.set()
        for h in honest:
            h.join(timeout=30)
    b = _stats(d)["recv_budget"]
    assert b["held_max"] <= b["limit"], b
    # The flood did press on it. Whether a stalled holder also had to be
    # evicted depends on how full the flood got the budget before an honest
    # 1 MB message asked for room, which a loaded machine changes (CI saw 25
    # of 32 MiB held and none needed); test_daemon_recvbudget covers evictions.
    assert b["pauses"] > 0, b
    assert held_seen > b["limit"] // 2, "the flood never filled the budget: %r" % b
    for h in honest:
        assert h.error is None, "honest peer failed: %r" % h.error
    rtts = sorted(r for h in honest for r in h.rtts)
    assert rtts, "no honest pings answered"
    p99 = rtts[int(len(rtts) * 0.99) - 1 if len(rtts) > 1 else 0]
    assert p99 <= PONG_P99_MAX, "honest ping p99 %.3f s over %.1f s" % (p99, PONG_P99_MAX)
    bigs = [t for h in honest[:HONEST_BIG] for t in h.big_times]
    assert len(bigs) >= HONEST_BIG, "honest 1 MB messages served: %d" % len(bigs)
    assert max(bigs) <= BIG_SERVED_MAX, "an honest 1 MB message took %.1f s" % max(bigs)
    if not ASAN:
        hwm = _vm(d.pid, "VmHWM")
        assert hwm <= base + b["limit"] + RSS_SLACK, "peak RSS %.1f MiB, baseline %.1f MiB, budget %d MiB" % (
            hwm / 2**20, base / 2**20, BUDGET_MIB)


RETURN_PEERS = 60          # each holds a 4 MB partial block, 240 MB in all
RETURN_BUDGET_MIB = 512    # room for all of them: what is measured is the giving back


@pytest.mark.skipif(ASAN, reason="ASan's quarantine keeps freed memory resident")
def test_memory_returned_after_peers_leave(make_peerd):
    d = make_peerd("-maxconnections=200", "-maxrecvmemory=%d" % RETURN_BUDGET_MIB,
                   "-v2transport=0")  # v1 frames before version, as above
    time.sleep(0.5)
    base = _vm(d.pid, "VmRSS")
    counts = multiprocessing.Array("l", 3)
    flood = multiprocessing.Process(target=_flood, args=(d.port, RETURN_PEERS, 20.0, False, counts))
    flood.start()
    try:
        # Every peer holds all but the last byte of its block.
        wait_for(lambda: _stats(d)["recv_budget"]["held"] >= RETURN_PEERS * (FLOOD_BLOCK + 24), timeout=20,
                 what="every flood peer to hold its partial block")
        wait_for(lambda: _vm(d.pid, "VmRSS") > base + RETURN_PEERS * (3 << 20), timeout=20,
                 what="the partial blocks to be resident")
    finally:
        counts[2] = 1
        flood.join(timeout=30)
    wait_for(lambda: _stats(d)["peers"]["inbound"] == 0 and _stats(d)["recv_budget"]["held"] == 0, timeout=10,
             what="the flood's peers to be gone")
    time.sleep(RETURN_SECONDS)
    rss = _vm(d.pid, "VmRSS")
    assert rss <= RETURN_FACTOR * base, "RSS %.1f MiB %.0f s after the peers left; baseline %.1f MiB" % (
        rss / 2**20, RETURN_SECONDS, base / 2**20)


# ---- 3: the control socket ---------------------------------------------------

CTL_SLOTS = 128            # CTL_MAX_CLIENTS in daemon/ctl/server.c
HOSTILE_CLIENTS = 200
HOSTILE_BATCHES = 20       # lines of 100 getstats each, never reading a reply
UPTIME_MAX = 0.2 if not ASAN else 1.0  # seconds for `peerctl uptime`
HOSTILE_RSS_MAX = 128 << 20


def _peerctl(d, *args, timeout=10):
    t0 = time.monotonic()
    r = subprocess.run([PEERCTL_BIN, "-datadir=" + d.datadir, "-regtest"] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    return r, time.monotonic() - t0


def test_ctl_idle_client_times_out(make_peerd):
    d = make_peerd("-controltimeout=1")
    idle = Ctl(d.sock_path)
    busy = Ctl(d.sock_path)
    assert _stats(d)["control"]["idle_timeout_s"] == 1
    t0 = time.monotonic()
    for _ in range(8):  # an active client stays past the timeout
        assert busy.call("uptime") >= 0
        time.sleep(0.25)
    assert idle.closed(timeout=3), "an idle client was not closed"
    assert time.monotonic() - t0 < 4
    assert busy.call("getstats")["control"]["idle_closed"] >= 1


def test_ctl_one_slot_always_free(make_peerd):
    d = make_peerd()
    idle = []
    while len(idle) < CTL_SLOTS + 20:
        try:
            idle.append(Ctl(d.sock_path))
        except BlockingIOError:  # the listen backlog is full for a moment
            time.sleep(0.01)
    try:
        r, took = _peerctl(d, "uptime")
        assert r.returncode == 0, r.stderr
        assert _stats(d)["control"]["slot_closed"] >= 20
        # stop gets through too
        r, _ = _peerctl(d, "stop")
        assert r.returncode == 0, r.stderr
        d.proc.wait(timeout=10)
    finally:
        for c in idle:
            c.close()


def _hostile_clients(path, n, batches, ready):
    """Child process: n clients each send batches of 100 getstats and never read."""
    _raise_nofile(n + 64)
    line = (json.dumps([{"jsonrpc": "2.0", "id": i, "method": "getstats"} for i in range(100)]) + "\n").encode()
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except OSError:
            s.close()
            continue
        socks.append(s)
    payload = line * batches
    offs = [0] * len(socks)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(o < len(payload) for o in offs):
        for i, s in enumerate(socks):
            if offs[i] < len(payload):
                try:
                    offs[i] += s.send(payload[offs[i] : offs[i] + 65536])
                except BlockingIOError:
                    pass
                except OSError:
                    offs[i] = len(payload)
        time.sleep(0.01)
    ready.value = 1
    time.sleep(30)
    for s in socks:
        s.close()


def test_ctl_hostile_clients_do_not_starve_uptime(make_peerd):
    d = make_peerd()
    ready = multiprocessing.Value("i", 0)
    proc = multiprocessing.Process(target=_hostile_clients, args=(d.sock_path, HOSTILE_CLIENTS, HOSTILE_BATCHES, ready))
    proc.start()
    try:
        wait_for(lambda: ready.value == 1, timeout=30, what="hostile clients to send their batches")
        times = []
        for _ in range(5):
            r, took = _peerctl(d, "uptime")
            assert r.returncode == 0, r.stderr
            times.append(took)
            time.sleep(0.2)
        st = _stats(d)["control"]
        assert st["queued_bytes"] <= 64 << 20, st
        # peerctl itself starts in ~10 ms; the best of five is peerd's answer time.
        assert sorted(times)[2] <= UPTIME_MAX, "peerctl uptime took %s s with %d hostile clients: %r" % (
            ["%.3f" % t for t in times], HOSTILE_CLIENTS, st)
        if not ASAN:  # 532 MB before issue 13; replies are held as text, at most 64 MiB
            assert _vm(d.pid, "VmRSS") < HOSTILE_RSS_MAX, "RSS %.1f MiB" % (_vm(d.pid, "VmRSS") / 2**20)
    finally:
        proc.terminate()
        proc.join(timeout=10)


def test_ctl_client_not_reading_replies_is_cut_off(make_peerd):
    d = make_peerd()
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(d.sock_path)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    line = (json.dumps([{"jsonrpc": "2.0", "id": i, "method": "getstats"} for i in range(100)]) + "\n").encode()
    c.settimeout(1)
    try:
        for _ in range(200):
            c.sendall(line)
    except (socket.timeout, OSError):
        pass  # peerd stopped reading: the requests wait in the socket
    st = _stats(d)["control"]
    assert st["queued_bytes"] <= 8 << 20, st  # reading stopped at the cap
    # ...then dropped once its replies make no progress (CTL_WRITE_STALL_MS, 10 s).
    wait_for(lambda: _stats(d)["control"]["stall_closed"] >= 1, timeout=20, what="the stalled client to be dropped")
    c.close()


LONG_LINE_CLIENTS = 6      # each sends most of an 8 MB line (CTL_MAX_LINE) and waits
LONG_LINE = 8_000_000


def test_ctl_long_lines_bounded_in_total(make_peerd):
    """One line may be 8 MB (a submitblock); all clients' request buffers
    together are capped (4 such lines): past it the largest goes."""
    d = make_peerd()
    clients = []
    for _ in range(LONG_LINE_CLIENTS):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(d.sock_path)
        c.settimeout(10)
        try:
            c.sendall(b'{"jsonrpc":"2.0","id":1,"method":"submitblock","params":["' + b"0" * LONG_LINE)
        except OSError:
            pass  # dropped while sending: what this test expects of some
        clients.append(c)
    wait_for(lambda: _stats(d)["control"]["read_closed"] >= LONG_LINE_CLIENTS - 4, timeout=20,
             what="clients over the total to be dropped")
    st = _stats(d)["control"]
    assert st["read_bytes"] <= 4 * (8_065_536 + 4096) + (1 << 20), st
    assert d.rpc("uptime") >= 0  # others unaffected
    for c in clients:
        c.close()


# ---- 4: bans -------------------------------------------------------------------

BANS = 200_000


def _banlist(n, until):
    return {"banned_nets": [{"version": 1, "ban_created": int(time.time()) - 10, "banned_until": until,
                             "address": "10.%d.%d.%d/32" % (i >> 16, (i >> 8) & 255, i & 255)} for i in range(n)]}


def test_bans_hold_hundreds_of_thousands(make_peerd, tmp_path):
    d = make_peerd()
    d.stop()
    path = os.path.join(d.netdir, "banlist.json")
    until = int(time.time()) + 86400
    with open(path, "w") as f:
        json.dump(_banlist(BANS, until), f)
    # Reading 200,000 bans takes seconds under ASan on a loaded machine.
    d2 = make_peerd(name=os.path.basename(d.datadir), start_timeout=60)
    assert _stats(d2)["bans"]["banned"] == BANS
    # The last entry bans: a connection from it is refused (127.x is not it, so check by setban).
    r = d2.ctl().call_raw("setban", ["10.%d.%d.%d" % ((BANS - 1) >> 16, ((BANS - 1) >> 8) & 255, (BANS - 1) & 255), "add"])
    assert "error" in r and r["error"]["code"] == -23, r  # already banned
    d2.rpc("setban", "192.0.2.1", "add", 3600)
    rc, _ = d2.stop(timeout=20)
    assert rc == 0
    with open(path) as f:
        saved = json.load(f)["banned_nets"]
    assert len(saved) == BANS + 1


def test_unparsable_banlist_moved_aside(make_peerd):
    d = make_peerd()
    d.stop()
    path = os.path.join(d.netdir, "banlist.json")
    good = json.dumps(_banlist(3, int(time.time()) + 3600))
    broken = good[: len(good) // 2]  # truncated mid-entry: complete entries in it
    with open(path, "w") as f:
        f.write(broken)
    # Reading 200,000 bans takes seconds under ASan on a loaded machine.
    d2 = make_peerd(name=os.path.basename(d.datadir), start_timeout=60)
    assert "moved aside" in d2.log()
    d2.rpc("setban", "192.0.2.7", "add", 3600)
    rc, _ = d2.stop()
    assert rc == 0
    aside = [n for n in os.listdir(d.netdir) if n.startswith("banlist.json.bad-")]
    assert len(aside) == 1, os.listdir(d.netdir)
    with open(os.path.join(d.netdir, aside[0])) as f:
        assert f.read() == broken  # never overwritten
    with open(path) as f:
        assert [e["address"] for e in json.load(f)["banned_nets"]] == ["192.0.2.7/32"]
    assert not os.path.exists(path + ".new")


# ---- 5: bloom filter messages, the control socket's directory -----------------

@pytest.mark.parametrize("command,payload", [
    ("filterload", b"\x01\x00" + struct.pack("<IIB", 1, 0, 0)),
    ("filteradd", b"\x01\x00"),
    ("filterclear", b""),
])
def test_bloom_filter_messages_disconnect(peerd, command, payload):
    p = peerd.connected_peer()
    p.send_raw(frame(command, payload))
    assert p.is_closed(timeout=3), "%s did not disconnect" % command
    q = peerd.connected_peer()  # and only that peer: others stay
    q.send_raw(frame("ping", struct.pack("<Q", 5)))
    assert q.recv_until("pong").command == "pong"


@pytest.mark.interop
def test_bloom_filter_messages_as_core(make_peerd, bitcoind_node):
    """Core 29 (no -peerbloomfilters) and peerd answer each filter message alike: disconnect."""
    d = make_peerd()
    for command, payload in (("filterload", b"\x01\x00" + struct.pack("<IIB", 1, 0, 0)),
                             ("filteradd", b"\x01\x00"), ("filterclear", b"")):
        verdicts = []
        for port in (bitcoind_node.port, d.port):
            p = P2P(port, timeout=10)
            p.handshake()
            p.send_raw(frame(command, payload))
            verdicts.append(p.is_closed(timeout=5))
            p.close()
        assert verdicts == [True, True], "%s: Core closed %s, peerd closed %s" % (command, verdicts[0], verdicts[1])


def test_controlsocket_in_missing_directory_named(tmp_path):
    datadir = tmp_path / "d"
    datadir.mkdir()
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % datadir, "-listen=0",
                        "-controlsocket=/nonexistent/dir/x.sock"], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "/nonexistent/dir" in out and "does not exist" in out, out
    assert "ermission denied" not in out, out
