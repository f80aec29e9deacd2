"""peerd's address manager against a real Bitcoin Core, through the daemons
themselves: the same addpeeraddress calls and the same addr/addrv2 messages
give the same tables entry for entry, peers.dat goes both ways, and an
address flood is held to Core's token bucket by both.

Both nodes run with -test=addrman (key 1, Core's deterministic random
stream) and -connect=0 (the addresses are public ones: nothing here may be
dialled). The table test runs both with the same -mocktime, so every time
(addpeeraddress stamps the node's clock, messages carry theirs) must match
exactly. Messages come from scripted peers on
127.0.0.2 (addrv2) and 127.0.0.3 (addr) that each node dials (addnode
onetry) and that answer the node's getaddr with up to 1,000 addresses (the bucket's +1,000 for a
getaddr); Core shuffles every message before adding it, so the scripted
addresses are chosen (by a dry run through peertool addrman) to land in
distinct slots, where the order of adding cannot matter.
"""
import ipaddress
import json
import os
import random
import shutil
import socket
import struct
import time

import pytest

import bitcoind
from conftest import P2P, frame, ser_compact, wait_for
from test_addrman_core import NOW, addresses, norm_addr, onion, peertool, script_of

pytestmark = pytest.mark.interop

CORE_ARGS = ("-test=addrman", "-connect=0", "-v2transport=0")
PEERD_ARGS = ("-test=addrman", "-connect=0", "-v2transport=0")  # as Core's: the scripted peers speak v1
# The same clock on both nodes (Core's -mocktime): the same tables to the second.
MOCK_ARGS = ("-mocktime=%d" % NOW,)
# Times carried in messages: an hour ago, so they stay fresh and exact.
MSG_AGE = 3600


def entry_of(e):
    return (norm_addr(e["address"]), e["port"], e["services"], e["network"],
            norm_addr(e["source"]), e["source_network"])


def assert_same_tables(core_raw, ours_raw):
    """Same slots, same entries, the same times."""
    for t in ("new", "tried"):
        core, ours = core_raw[t], ours_raw[t]
        only_core = sorted(set(core) - set(ours))[:5]
        only_ours = sorted(set(ours) - set(core))[:5]
        assert not only_core and not only_ours, (
            "%s table: slots only Core fills %s, only peerd fills %s"
            % (t, [(k, core[k]) for k in only_core], [(k, ours[k]) for k in only_ours]))
        diff = [(k, core[k], ours[k]) for k in core if entry_of(core[k]) != entry_of(ours[k])]
        assert not diff, "%s table: different entries (slot, Core, peerd): %s" % (t, diff[:5])
        for k in core:
            assert core[k]["time"] == ours[k]["time"], (t, k, core[k], ours[k])


def addrv2_payload(entries):
    """entries: (time, services, bip155 net, address bytes, port)."""
    out = ser_compact(len(entries))
    for t, services, net, addr, port in entries:
        out += struct.pack("<I", t) + ser_compact(services) + bytes([net])
        out += ser_compact(len(addr)) + addr + struct.pack(">H", port)
    return out


def addr_v1_payload(entries):
    """entries as addrv2_payload's, IPv4 and IPv6 only, as an addr (v1) payload."""
    out = ser_compact(len(entries))
    for t, services, net, addr, port in entries:
        ip16 = b"\0" * 10 + b"\xff\xff" + addr if net == 1 else addr
        out += struct.pack("<IQ", t, services) + ip16 + struct.pack(">H", port)
    return out


def wire_entry(text, port, t, services=9):
    """A textual address as an addrv2 entry."""
    if text.endswith(".onion"):
        import base64
        raw = base64.b32decode(text[:-6].upper())[:32]
        return (t, services, 4, raw, port)
    ip = ipaddress.ip_address(text)
    return (t, services, 1 if ip.version == 4 else 2, ip.packed, port)


def candidates(rnd, n, taken):
    """n fresh routable addresses (IPv4 over many /16s, IPv6, Tor v3) not in taken."""
    out = []
    while len(out) < n:
        k = rnd.random()
        if k < 0.7:
            a = "%d.%d.%d.%d" % (rnd.choice((31, 37, 41, 43, 47, 53, 59, 61)), rnd.randrange(256),
                                 rnd.randrange(256), rnd.randrange(1, 255))
        elif k < 0.9:
            a = str(ipaddress.IPv6Address((0x2600 + rnd.randrange(0x100)) << 112 | rnd.getrandbits(96)))
        else:
            a = onion(bytes(rnd.randrange(256) for _ in range(32)))
        p = 8333 if rnd.random() < 0.8 else rnd.randrange(1024, 65536)
        if (a, p) not in taken:
            taken.add((a, p))
            out.append((a, p))
    return out


def distinct_slots(base_script, batches, now):
    """Keep, of each (source, [(addr, port)]) batch, the addresses a dry run
    places in a slot of their own after the base script's calls."""
    script = base_script
    order = []
    for src, batch in batches:
        for a, p in batch:
            script += "add %s %d %s %d 9\n" % (a, p, src, now)
            order.append((src, a, p))
    r = peertool("--deterministic", "--dump", "-", stdin=script)
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"][-len(order):]
    kept = {}
    for (src, a, p), res in zip(order, results):
        if res is True:
            kept.setdefault(src, []).append((a, p))
    return kept


class Feeder:
    """A scripted peer listening on host: the node dials it, and it answers
    the node's getaddr with one addr or addrv2 message."""

    def __init__(self, host):
        self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind((host, 0))
        self.srv.listen(1)
        self.srv.settimeout(20)
        self.addr = "%s:%d" % (host, self.srv.getsockname()[1])

    def serve(self, msg):
        conn, _ = self.srv.accept()
        p = P2P(0, sock=conn, timeout=20)
        from bitcoin.messages import msg_verack
        while p.recv(20).command != "version":
            pass
        v = p.version_msg()
        v.nServices = 9
        p.send(v)
        p.send_raw(frame("sendaddrv2"))
        p.send(msg_verack())
        while p.recv(20).command != "getaddr":
            pass
        p.send_raw(frame(*msg))
        p.sync_with_ping(20)
        p.close()

    def close(self):
        self.srv.close()


def feed(node_connect, host, msg):
    f = Feeder(host)
    try:
        node_connect(f.addr)
        f.serve(msg)
    finally:
        f.close()


def test_same_calls_and_messages_same_tables_and_peers_dat(make_bitcoind, make_peerd, tmp_path):
    core = make_bitcoind(1, args=CORE_ARGS + MOCK_ARGS, small=True)[0]
    peerd = make_peerd(*(PEERD_ARGS + MOCK_ARGS))
    now = NOW
    addrs = addresses(2100, seed=21)
    core_res, ours_res = [], []
    for a, p, t in addrs:
        r = core.addpeeraddress(a, p, t)
        core_res.append(r)
        ours_res.append(peerd.rpc("addpeeraddress", a, p, t))
    assert ours_res == core_res
    assert sum(1 for r in core_res if r.get("error") == "failed-adding-to-tried") > 0
    assert sum(1 for r in core_res if r.get("error") == "failed-adding-to-new") > 0

    # Two scripted sources; each batch of 1,000 answers one getaddr.
    rnd = random.Random(22)
    taken = {(a, p) for a, p, _ in addrs}
    msg_time = now - MSG_AGE
    batches = [("127.0.0.2", candidates(rnd, 1000, taken)),
               ("127.0.0.3", candidates(rnd, 1000, taken))]
    kept = distinct_slots(script_of_now(addrs, now), batches, msg_time)
    for host in ("127.0.0.2", "127.0.0.3"):
        batch = kept[host]
        assert len(batch) > 500, len(batch)
        entries = [wire_entry(a, p, msg_time) for a, p in batch]
        if host == "127.0.0.2":
            msg = ("addrv2", addrv2_payload(entries))
        else:  # the other source speaks addr (v1): IPv4 and IPv6 only
            msg = ("addr", addr_v1_payload([e for e in entries if e[2] in (1, 2)]))
        for connect in (lambda hp: core.connect_to(hp, False),
                        lambda hp: peerd.rpc("addnode", hp, "onetry")):
            feed(connect, host, msg)
    core_info = core.getaddrmaninfo()
    assert peerd.rpc("getaddrmaninfo") == core_info, (core_info, peerd.log()[-3000:])
    core_raw, ours_raw = core.getrawaddrman(), peerd.rpc("getrawaddrman")
    sources = {e["source"] for e in core_raw["new"].values()}
    assert {"127.0.0.2", "127.0.0.3"} <= sources, sources
    assert core_info["all_networks"]["total"] > 3000, core_info
    assert {"ipv4", "ipv6", "onion", "i2p"} <= {e["network"] for e in core_raw["new"].values()}
    # The 2-hour penalty on what a peer says of others.
    for e in core_raw["new"].values():
        if e["source"] in ("127.0.0.2", "127.0.0.3"):
            assert e["time"] == msg_time - 7200, e
    assert_same_tables(core_raw, ours_raw)
    assert peerd.rpc("getaddrmaninfo") == core_info

    # peerd's peers.dat (written at shutdown) loads into Core as the same
    # tables, and into peerd again.
    rc, _ = peerd.stop()
    assert rc == 0, peerd.log()
    assert "Creating peers.dat because the file was not found" in peerd.log()
    ours_dat = os.path.join(peerd.netdir, "peers.dat")
    regtest = tmp_path / "core" / "core1" / "regtest"
    regtest.mkdir(parents=True)
    shutil.copy(ours_dat, regtest / "peers.dat")
    core2 = make_bitcoind(1, args=("-connect=0",), small=True)[0]
    assert core2.datadir.endswith("core1")
    assert_same_tables(ours_raw, core2.getrawaddrman())
    again = make_peerd("-connect=0", name=os.path.basename(peerd.datadir))
    assert "Loaded %d addresses from peers.dat" % core_info["all_networks"]["total"] in again.log()
    assert_same_tables(ours_raw, again.rpc("getrawaddrman"))
    # And Core's file into peerd.
    assert core.stop() == 0
    theirs = tmp_path / "fromcore"
    os.makedirs(theirs / "regtest")
    shutil.copy(os.path.join(core.datadir, "regtest", "peers.dat"), theirs / "regtest" / "peers.dat")
    fromcore = make_peerd("-connect=0", name="fromcore")
    assert_same_tables(core_raw, fromcore.rpc("getrawaddrman"))


def script_of_now(addrs, now):
    return "".join("%s %s %d %d\n" % ("tried" if t else "peer", a, p, now) for a, p, t in addrs)


def flood(connect_peer, n_msgs=100, per_msg=1000, seed=23):
    """One inbound scripted peer sends n_msgs addrv2 messages of per_msg
    fresh addresses; returns the seconds it took."""
    rnd = random.Random(seed)
    p = connect_peer()
    p.handshake()
    t0 = time.monotonic()
    now = int(time.time())
    taken = set()
    for _ in range(n_msgs):
        batch = candidates(rnd, per_msg, taken)
        p.send_raw(frame("addrv2", addrv2_payload([wire_entry(a, port, now - 60) for a, port in batch])))
    p.sync_with_ping(60)
    elapsed = time.monotonic() - t0 + 1
    return p, elapsed


def test_address_flood_held_to_the_token_bucket_as_core(make_bitcoind, make_peerd):
    core = make_bitcoind(1, args=CORE_ARGS, small=True)[0]
    peerd = make_peerd(*PEERD_ARGS)
    results = {}
    for name, connect, node_info, node_peers in (
            ("core", lambda: P2P(core.port, timeout=30), core.getaddrmaninfo,
             lambda: [x for x in core.getpeerinfo() if x["inbound"]]),
            ("peerd", lambda: P2P(peerd.port, timeout=30), lambda: peerd.rpc("getaddrmaninfo"),
             lambda: [x for x in peerd.rpc("getpeerinfo") if x["inbound"]])):
        t_connect = time.monotonic()
        p, elapsed = flood(connect)
        lifetime = time.monotonic() - t_connect + 1
        info = wait_for(lambda: (lambda v: v if v and v[0]["addr_processed"] +
                                 v[0]["addr_rate_limited"] == 100000 else None)(node_peers()),
                        timeout=30, what="%s counted every entry" % name)[0]
        total = node_info()["all_networks"]["total"]
        # One token at the start, 0.1 a second since the connection.
        bound = 1 + 0.1 * lifetime + 1
        assert info["addr_processed"] <= bound, (name, info["addr_processed"], lifetime)
        assert total <= info["addr_processed"], (name, total, info)
        results[name] = (info["addr_processed"], total, lifetime)
        p.close()
    print("flood (processed, addrman total, seconds):", results)
    # Both let through the first token's worth and the same trickle.
    assert results["core"][0] >= 1 and results["peerd"][0] >= 1, results
    assert abs(results["core"][0] - results["peerd"][0]) <= 2 + 0.1 * max(
        results["core"][2], results["peerd"][2]), results


def run_peerd_once(tmp_path, name, peers_dat):
    """Start peerd on a datadir holding peers_dat; (exit code or None if it
    came up, its output, its netdir). It is stopped either way."""
    import subprocess
    from conftest import PEERD_BIN
    netdir = tmp_path / name / "regtest"
    netdir.mkdir(parents=True)
    if peers_dat is not None:
        (netdir / "peers.dat").write_bytes(peers_dat)
    cmd = [PEERD_BIN, "-chain=regtest", "-datadir=%s" % (tmp_path / name), "-listen=0",
           "-connect=0", "-logtimestamps=0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sock = netdir / "control.sock"
    deadline = time.monotonic() + 15
    while proc.poll() is None and not os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    code = proc.poll()
    if code is None:
        time.sleep(0.3)
        proc.terminate()
        # A clean stop (under ASan: nothing leaked or overrun).
        assert proc.wait(timeout=15) == 0, proc.stdout.read()
    out = proc.stdout.read()
    return code, out, netdir


def test_peers_dat_missing_corrupt_newer_as_core(tmp_path):
    from test_addrman_core import run_core_once, small_peers_dat
    good = small_peers_dat(tmp_path)
    # Missing: created at start (Core's words), so the next start loads it.
    code, out, netdir = run_peerd_once(tmp_path, "missing", None)
    assert code is None, out
    assert 'Creating peers.dat because the file was not found ("%s/peers.dat")' % netdir in out, out
    assert os.path.exists(netdir / "peers.dat")
    # Good: loaded.
    (tmp_path / "good.dat").write_bytes(good)
    dump = json.loads(peertool("--load", str(tmp_path / "good.dat"), "--dump").stdout)
    n = len(dump["new"]) + len(dump["tried"])
    code, out, _ = run_peerd_once(tmp_path, "good", good)
    assert code is None and "Loaded %d addresses from peers.dat" % n in out, out
    # A bad checksum: both refuse to start with the same reason.
    bad = good[:-1] + bytes([good[-1] ^ 1])
    code, out, netdir = run_peerd_once(tmp_path, "badsum", bad)
    assert code == 1, out
    reason = "Invalid or corrupt peers.dat (Checksum mismatch, data corrupted). If you believe"
    assert reason in out, out
    assert 'you can move the file ("%s/peers.dat") out of the way' % netdir in out, out
    ccode, cout, _ = run_core_once(tmp_path, "core-badsum", bad)
    assert ccode not in (None, 0) and reason in cout, cout[-2000:]
    # A newer format: moved to peers.dat.bak, a new one made, as Core.
    newer = bytearray(good)
    newer[4], newer[5] = 5, 32 + 5
    code, out, netdir = run_peerd_once(tmp_path, "newer", bytes(newer))
    assert code is None, out
    assert os.path.exists(netdir / "peers.dat.bak") and os.path.exists(netdir / "peers.dat")
    assert "Creating new peers.dat because the file version was not compatible" in out, out
    assert (netdir / "peers.dat.bak").read_bytes() == bytes(newer)


def test_fresh_addresses_relayed_to_two_other_peers(make_peerd):
    """Core's RelayAddress: a fresh routable address in a small message goes
    to the 2 other peers with address relay (within MaybeSendAddr's ~30 s
    Poisson timer), never back to the sender; the sender's own entry is
    in the addrman with the sender as source."""
    peerd = make_peerd(*PEERD_ARGS)
    receivers = []
    for _ in range(2):
        r = P2P(peerd.port, timeout=10)
        r.handshake(sendaddrv2=True)
        r.send_raw(frame("getaddr"))  # address relay starts with an addr-related message
        r.sync_with_ping()
        receivers.append(r)
    sender = P2P(peerd.port, timeout=10)
    sender.handshake(sendaddrv2=True)
    now = int(time.time())
    sender.send_raw(frame("addrv2", addrv2_payload([(now - 60, 9, 1, bytes([44, 1, 2, 3]), 8333)])))
    sender.sync_with_ping()
    raw = peerd.rpc("getrawaddrman")["new"]
    assert [(e["address"], e["source"]) for e in raw.values()] == [("44.1.2.3", "127.0.0.1")]

    def got_it(r):
        deadline = time.monotonic() + 300  # P(exp(30 s) > 300 s) = e^-10
        while time.monotonic() < deadline:
            try:
                m = r.recv(max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                break
            if m.command == "addrv2" and any(e[3] == bytes([44, 1, 2, 3]) for e in m.obj):
                return m.obj
        return None

    for r in receivers:
        got = got_it(r)
        assert got is not None, "address not relayed"
        assert [(e[0], e[1], e[4]) for e in got] == [(now - 60, 9, 8333)]
    # Never back to the one who sent it.
    assert "addrv2" not in sender.commands_for(1.0)
    for p in receivers + [sender]:
        p.close()


def relay_waits_for_the_clock(port, setmocktime):
    """Two receivers with address relay, then a fresh address from a third
    peer, all under a clock standing at NOW: whether each receiver got it
    within 2 s, then within 5 s of setmocktime(NOW + 10 minutes)."""
    receivers = []
    for _ in range(2):
        r = P2P(port, timeout=10)
        r.handshake(sendaddrv2=True)
        r.send_raw(frame("getaddr"))
        r.sync_with_ping()
        receivers.append(r)
    # Their first MaybeSendAddr has run: the next waits for the clock.
    time.sleep(1)
    sender = P2P(port, timeout=10)
    sender.handshake(sendaddrv2=True)
    sender.send_raw(frame("addrv2", addrv2_payload([(NOW - 60, 9, 1, bytes([44, 1, 2, 3]), 8333)])))
    sender.sync_with_ping()

    def seen(r, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                m = r.recv(max(0.05, deadline - time.monotonic()))
            except TimeoutError:
                return False
            if m.command == "ping":
                r.send_raw(frame("pong", m.payload))
            if m.command == "addrv2" and any(e[3] == bytes([44, 1, 2, 3]) for e in m.obj):
                return True
        return False

    before = [seen(r, 2) for r in receivers]
    setmocktime(NOW + 600)
    after = [seen(r, 5) for r in receivers]
    for p in receivers + [sender]:
        p.close()
    return before, after


def test_relay_timer_on_the_mockable_clock_as_core(make_bitcoind, make_peerd):
    """Core's MaybeSendAddr runs on its mockable clock (p2p_addr_relay.py
    moves it with setmocktime): with the clock standing still a queued
    address waits; ten minutes later (the Poisson timer's mean is 30 s) it
    goes out at once. peerd's as Core's."""
    core = make_bitcoind(1, args=CORE_ARGS + MOCK_ARGS, small=True)[0]
    peerd = make_peerd(*(PEERD_ARGS + MOCK_ARGS))
    theirs = relay_waits_for_the_clock(core.port, core.setmocktime)
    ours = relay_waits_for_the_clock(peerd.port, lambda t: peerd.rpc("setmocktime", t))
    assert theirs == ([False, False], [True, True]), theirs
    assert ours == theirs


def test_methods_answer_as_core(make_bitcoind, make_peerd):
    """addpeeraddress, getnodeaddresses, getaddrmaninfo, getrawaddrman: the
    same answers and errors (code and message) as bitcoind for the same calls."""
    from conftest import RpcError
    # One clock (the entries' times): a second boundary between the two
    # addpeeraddress calls made them a second apart in one CI run.
    core = make_bitcoind(1, args=CORE_ARGS + MOCK_ARGS, small=True)[0]
    peerd = make_peerd(*PEERD_ARGS, *MOCK_ARGS)

    def ask(call, method, *params):
        try:
            return ("ok", call(method, *params))
        except (RpcError, bitcoind.RpcError) as e:
            return ("error", e.code, e.message)

    calls = [
        ("addpeeraddress", "1.2.3.4", 8333),
        ("addpeeraddress", "1.2.3.4", 8333),
        ("addpeeraddress", "1.2.3.4", 8334, True),
        ("addpeeraddress", "5.6.7.8", 8333, True),
        ("addpeeraddress", "2001:db8::1", 8333),
        ("addpeeraddress", "2a01::1", 8333),
        ("addpeeraddress", "127.0.0.1", 8333),
        ("addpeeraddress", "10.0.0.1", 8333),
        ("addpeeraddress", "not an address", 8333),
        ("addpeeraddress", "1.2.3.5", 65536),
        ("addpeeraddress", "1.2.3.5", -1),
        ("addpeeraddress", "1.2.3.5", 0),
        ("addpeeraddress", "1.2.3.6", 1.5),
        ("addpeeraddress", "1.2.3.6"),
        ("getnodeaddresses", -1),
        ("getnodeaddresses", 2, "foo"),
        ("getnodeaddresses", 0, "internal"),
        ("getnodeaddresses", 0, "IPv4"),
        ("getnodeaddresses", 0, "onion"),
        ("getnodeaddresses", 0, "tor"),
        ("getnodeaddresses", 2 ** 31),
        ("getaddrmaninfo", 1),
        ("getrawaddrman", 1),
    ]
    for c in calls:
        want = ask(core.rpc, *c)
        got = ask(peerd.rpc, *c)
        if want[0] == "error":
            # A usage error carries each program's own help text (several
            # lines): the code alone; any other error word for word.
            usage = "\n" in want[2]
            assert got[0] == "error" and got[1] == want[1], (c, want, got)
            assert usage or got[2] == want[2], (c, want, got)
        elif c[0] == "getnodeaddresses":
            key = lambda a: (a["address"], a["port"])  # noqa: E731 (GetAddr shuffles)
            assert got[0] == "ok" and sorted(map(key, got[1])) == sorted(map(key, want[1])), (c, want, got)
        else:
            assert got == want, (c, want, got)
    assert peerd.rpc("getaddrmaninfo") == core.getaddrmaninfo()
    assert_same_tables(core.getrawaddrman(), peerd.rpc("getrawaddrman"))
