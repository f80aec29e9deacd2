"""addrman/ against a real Bitcoin Core: the same calls give the same tables,
and peers.dat goes both ways.

Core runs with -test=addrman (key 1, the deterministic random stream),
-mocktime (so addpeeraddress's "now" is known) and -connect=0 (it never
dials what it is given: the addresses are public ones, and nothing here
may leave this machine). addrman/ is driven through `peertool addrman`,
which makes the same Add and Good calls addpeeraddress makes, and prints
its tables in getrawaddrman's shape.
"""
import base64
import hashlib
import ipaddress
import json
import os
import random
import subprocess

import pytest

import bitcoind
from conftest import BUILD

pytestmark = pytest.mark.interop

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
NOW = 1700000000
CORE_ARGS = ("-test=addrman", "-connect=0", "-mocktime=%d" % NOW)
# Only public addresses get into an addrman; the first octets of ranges that are.
V4_FIRST = [n for n in range(1, 224) if n not in (10, 100, 127, 169, 172, 192, 198, 203)]


def peertool(*args, stdin=None):
    r = subprocess.run([PEERTOOL, "addrman", *args], input=stdin, capture_output=True,
                       text=True, timeout=120)
    return r


def onion(key):
    """A Tor v3 name: base32(key | SHA3-256(".onion checksum" | key | 3)[:2] | 3)."""
    check = hashlib.sha3_256(b".onion checksum" + key + b"\x03").digest()[:2]
    return base64.b32encode(key + check + b"\x03").decode().lower() + ".onion"


def i2p(key):
    return base64.b32encode(key).decode().lower().rstrip("=") + ".b32.i2p"


def addresses(n=2100, seed=20):
    """n (address, port, tried) of many groups: IPv4 across /16s and in a
    few crowded /16s (collisions), a second port for some IPs, IPv6 /32s,
    he.net /36s, 6to4 (IPv4 by group), Tor v3 and I2P (16 groups each)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = rnd.random()
        if kind < 0.04:
            key = bytes(rnd.randrange(256) for _ in range(32))
            if kind < 0.02:
                out.append((onion(key), 8333 if rnd.random() < 0.8 else 9050, rnd.random() < 0.25))
            else:
                out.append((i2p(key), 0, rnd.random() < 0.25))
            continue
        if kind < 0.55:
            a = "%d.%d.%d.%d" % (rnd.choice(V4_FIRST), rnd.randrange(256), rnd.randrange(256),
                                 rnd.randrange(1, 255))
        elif kind < 0.75:
            a = "%d.%d.%d.%d" % (rnd.choice((1, 2, 3)), 7, rnd.randrange(256), rnd.randrange(1, 255))
        elif kind < 0.85:
            a = str(ipaddress.IPv6Address((0x2a00 + rnd.randrange(0x100)) << 112 | rnd.getrandbits(96)))
        elif kind < 0.93:
            a = str(ipaddress.IPv6Address(0x20010470 << 96 | rnd.getrandbits(96)))
        else:
            a = str(ipaddress.IPv6Address(0x2002 << 112 | rnd.randrange(1, 224) << 104 | rnd.getrandbits(96)))
        port = 8333 if rnd.random() < 0.8 else rnd.randrange(1024, 65536)
        out.append((a, port, rnd.random() < 0.25))
        if rnd.random() < 0.05:
            out.append((a, port + 1, rnd.random() < 0.5))
    return out


def script_of(addrs):
    return "".join("%s %s %d %d\n" % ("tried" if t else "peer", a, p, NOW) for a, p, t in addrs)


def norm_addr(a):
    """An address in one spelling: IPs by ipaddress, names as they are."""
    try:
        return str(ipaddress.ip_address(a))
    except ValueError:
        return a


def norm_entry(e):
    """An entry as both sides must agree on it."""
    return (norm_addr(e["address"]), e["port"], e["services"], e["time"], e["network"],
            norm_addr(e["source"]), e["source_network"])


def tables(raw):
    return {t: {k: norm_entry(v) for k, v in raw[t].items()} for t in ("new", "tried")}


def assert_same_tables(core_raw, ours_raw):
    core, ours = tables(core_raw), tables(ours_raw)
    for t in ("new", "tried"):
        only_core = sorted(set(core[t]) - set(ours[t]))[:5]
        only_ours = sorted(set(ours[t]) - set(core[t]))[:5]
        assert not only_core and not only_ours, (
            "%s table: slots only Core fills %s, only peerd fills %s"
            % (t, [(k, core[t][k]) for k in only_core], [(k, ours[t][k]) for k in only_ours]))
        diff = [(k, core[t][k], ours[t][k]) for k in core[t] if core[t][k] != ours[t][k]][:5]
        assert not diff, "%s table: different entries (slot, Core, peerd): %s" % (t, diff)


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(PEERTOOL):
        pytest.fail(f"{PEERTOOL} not built (run make)")


def test_addrman_same_calls_same_tables_and_peers_dat_both_ways(make_bitcoind, tmp_path):
    addrs = addresses()
    core = make_bitcoind(1, args=CORE_ARGS, small=True)[0]
    core_results = []
    for a, p, t in addrs:
        r = core.addpeeraddress(a, p, t)
        core_results.append("ok" if r["success"] else r.get("error"))
    core_raw = core.getrawaddrman()
    info = core.getaddrmaninfo()

    ours_dat = str(tmp_path / "ours.dat")
    r = peertool("--deterministic", "--dump", "--save", ours_dat, "-", stdin=script_of(addrs))
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout)
    # Every call answered alike: placed, refused, collided on the way to tried.
    assert ours["results"] == core_results
    assert core_results.count("failed-adding-to-tried") > 0, "no tried collision exercised"
    assert core_results.count("failed-adding-to-new") > 0, "no new collision exercised"
    assert len(core_raw["tried"]) > 300 and len(core_raw["new"]) > 1000
    nets = {e["network"] for t in ("new", "tried") for e in core_raw[t].values()}
    assert nets == {"ipv4", "ipv6", "onion", "i2p"}, nets
    assert info["all_networks"]["total"] == len(core_raw["new"]) + len(core_raw["tried"])
    assert_same_tables(core_raw, ours)

    # The random stream, draw for draw: announcing a known address again
    # within the hour costs Core's stochastic test a draw, and
    # getnodeaddresses shuffles with GetAddr's draws; the order it returns
    # is the stream's fingerprint.
    later = NOW + 600
    again = [(a, p) for a, p, t in addrs if not t][:80]
    core.setmocktime(later)
    for a, p in again:
        core.addpeeraddress(a, p)
    core_order = [(norm_addr(e["address"]), e["port"]) for e in core.getnodeaddresses(0)]
    core_raw_final = core.getrawaddrman()
    script = script_of(addrs) + "".join("peer %s %d %d\n" % (a, p, later) for a, p in again)
    r = peertool("--deterministic", "--dump", "-", stdin=script + "getaddr 0 0 %d\n" % later)
    assert r.returncode == 0, r.stderr
    ours_order = [(norm_addr(x.rsplit(":", 1)[0].strip("[]")), int(x.rsplit(":", 1)[1]))
                  for x in json.loads(r.stdout)["results"][-1]]
    assert len(core_order) == len(core_raw["new"]) + len(core_raw["tried"])
    assert ours_order == core_order, "first difference at %d" % next(
        (i for i, (x, y) in enumerate(zip(ours_order, core_order)) if x != y), -1)

    # Core's peers.dat loads into addrman/ as the same tables.
    assert core.stop() == 0
    core_dat = os.path.join(core.datadir, "regtest", "peers.dat")
    r = peertool("--load", core_dat, "--dump")
    assert r.returncode == 0, r.stderr
    assert_same_tables(core_raw_final, json.loads(r.stdout))

    # addrman/'s peers.dat loads into Core as the same tables (the next
    # node's datadir is core1: put the file where it will look).
    regtest = tmp_path / "core" / "core1" / "regtest"
    regtest.mkdir(parents=True)
    with open(ours_dat, "rb") as src, open(regtest / "peers.dat", "wb") as dst:
        dst.write(src.read())
    core2 = make_bitcoind(1, args=("-connect=0", "-mocktime=%d" % NOW), small=True)[0]
    assert core2.datadir.endswith("core1")
    assert_same_tables(core_raw, core2.getrawaddrman())
    assert core2.getaddrmaninfo() == info


def run_core_once(tmp_path, name, peers_dat):
    """Start a bitcoind on a datadir holding peers_dat and return (exit code or
    None if it came up, its stderr, the datadir); it is stopped either way."""
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    regtest = tmp_path / name / "regtest"
    regtest.mkdir(parents=True)
    (regtest / "peers.dat").write_bytes(peers_dat)
    node = bitcoind.Bitcoind(binary, tmp_path, name=name, args=("-connect=0",), small=True)
    try:
        node.wait_ready()
        code = None
    except (AssertionError, ValueError):
        # A node stopping on a bad file may answer its RPC with 503 (an
        # HTML page, not JSON) on the way down: it did not come up.
        code = node.proc.wait(timeout=30)
    finally:
        node.stop()
    with open(node.stdout_path, errors="replace") as f:
        out = f.read()
    return code, out, str(tmp_path / name)


def small_peers_dat(tmp_path):
    path = str(tmp_path / "small.dat")
    r = peertool("--deterministic", "--save", path, "-", stdin=script_of(addresses(50, seed=3)))
    assert r.returncode == 0, r.stderr
    with open(path, "rb") as f:
        return f.read()


def test_addrman_corrupt_peers_dat_same_reason_as_core(tmp_path):
    """A bad checksum: Core refuses to start with its message; addrman/ gives the same reason."""
    good = small_peers_dat(tmp_path)
    bad = good[:-1] + bytes([good[-1] ^ 1])
    code, out, _ = run_core_once(tmp_path, "badsum", bad)
    assert code not in (None, 0), "Core started on a peers.dat with a bad checksum"
    assert "Invalid or corrupt peers.dat (Checksum mismatch, data corrupted)" in out, out[-2000:]
    path = tmp_path / "bad.dat"
    path.write_bytes(bad)
    r = peertool("--load", str(path))
    assert r.returncode == 1
    assert "Checksum mismatch, data corrupted" in r.stderr


def test_addrman_newer_format_renamed_by_core_refused_by_addrman(tmp_path):
    """A format whose lowest compatible version is above 4: Core moves it to
    peers.dat.bak and starts; addrman/ reports the version (the caller renames)."""
    good = bytearray(small_peers_dat(tmp_path))
    good[4], good[5] = 5, 32 + 5  # after the magic: format 5, compatible from 5
    code, out, datadir = run_core_once(tmp_path, "newer", bytes(good))
    assert code is None, out[-2000:]
    assert os.path.exists(os.path.join(datadir, "regtest", "peers.dat.bak"))
    path = tmp_path / "newer.dat"
    path.write_bytes(bytes(good))
    r = peertool("--load", str(path))
    assert r.returncode == 1
    assert "newer, incompatible format" in r.stderr
    assert "Unsupported format of addrman database: 5" in r.stderr
