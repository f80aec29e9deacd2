"""How peerd finds its first peers (daemon/net/seeds.c, doc/peers.md), offline.

A DNS responder on loopback (dns_responder.py) stands in for the DNS seeds:
peerd's test option -dnsserver=127.0.0.1:PORT sends every lookup there, and
the responder hands out loopback addresses only. A mainnet peerd with
default options asks the x9. name of every one of Core's mainnet seeds by
itself; a seed that gives nothing becomes an addr-fetch connection to its
own name, which the responder resolves to a scripted listener on loopback.
These runs have no fixed seeds (conftest.py's default for a public
network), and end well before their 60 seconds anyway.

The fixed seeds are routable addresses: the test that adds them runs peerd
(and bitcoind, for the count to compare) in a network namespace of its own
(`unshare -n`, loopback down), where no connection can leave the machine
whatever the node tries.
"""
import os
import random
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from bitcoind import find_bitcoind
from conftest import wait_for
from dns_responder import DnsResponder

MAIN_SEEDS = [
    "seed.bitcoin.sipa.be",
    "dnsseed.bluematt.me",
    "dnsseed.bitcoin.dashjr-list-of-p2p-nodes.us",
    "seed.bitcoin.jonasschnelli.ch",
    "seed.btc.petertodd.net",
    "seed.bitcoin.sprovoost.nl",
    "dnsseed.emzy.de",
    "seed.bitcoin.wiz.biz",
    "seed.mainnet.achownodes.xyz",
]
MAIN_MAGIC = bytes.fromhex("f9beb4d9")
FIXED_SEEDS_LOG = "Added %d fixed seeds from reachable networks."


@pytest.fixture
def responder():
    r = DnsResponder()
    yield r
    r.close()


class Listener:
    """A scripted peer on 127.a.b.c:port: accepts, reads the first frame's
    magic and command, and hangs up (as a seed with nothing to say would
    after the handshake), so each connection's slot frees again."""

    def __init__(self, port):
        for _ in range(50):
            ip = "127.%d.%d.%d" % (random.randint(1, 254), random.randint(0, 254), random.randint(1, 254))
            s = socket.socket()
            try:
                s.bind((ip, port))
                break
            except OSError:
                s.close()
        else:
            pytest.skip("no free loopback address for port %d" % port)
        s.listen(32)
        s.settimeout(0.2)
        self.ip, self.port, self.sock = ip, port, s
        self.first_frames = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            c.settimeout(5)
            try:
                head = b""
                while len(head) < 24:
                    chunk = c.recv(24 - len(head))
                    if not chunk:
                        break
                    head += chunk
                self.first_frames.append((head[:4], head[4:16].rstrip(b"\0").decode(errors="replace")))
            except OSError:
                pass
            c.close()

    def close(self):
        self._stop = True
        self._thread.join(timeout=2)
        self.sock.close()


def stats(d):
    return d.rpc("getstats")["peers"]


def test_mainnet_defaults_query_every_seed_then_addr_fetch(make_peerd, responder):
    """(1) No options but the resolver's (and the fixture's -listen=0,
    -fixedseeds=0): Core's nine mainnet seeds are asked
    for their x9. names, all at once (empty addrman); none answers, so each
    becomes an addr-fetch connection to the seed's own name."""
    listener = Listener(8333)
    try:
        for name in MAIN_SEEDS:
            responder.set(name, [listener.ip])
        d = make_peerd("-dnsserver=" + responder.addr, chain="main", listen=False)
        wait_for(lambda: all(responder.count("x9." + s, "A") for s in MAIN_SEEDS), timeout=20,
                 what="an x9. query for every mainnet seed")
        assert responder.names() <= {"x9." + s for s in MAIN_SEEDS} | set(MAIN_SEEDS), responder.names()
        # Each once: a lookup is an A and an AAAA question, nothing repeated.
        for s in MAIN_SEEDS:
            assert responder.count("x9." + s, "A") == 1, responder.queries
        # A BIP324 v2 attempt first (this v1 listener closes it), then v1.
        wait_for(lambda: len(listener.first_frames) >= 2, timeout=20, what="an addr-fetch connection")
        assert listener.first_frames[0][0] != MAIN_MAGIC, listener.first_frames
        assert listener.first_frames[1] == (MAIN_MAGIC, "version"), listener.first_frames
        # Every seed's own name was resolved for its addr-fetch connection.
        wait_for(lambda: all(responder.count(s, "A") for s in MAIN_SEEDS), timeout=20,
                 what="every seed's name looked up for addr-fetch")
        wait_for(lambda: stats(d)["seeds_dns_queries"] == 9, timeout=10, what="nine seeds answered")
        st = stats(d)
        assert st["seeds_dns_found"] == 0 and st["seeds_fixed_added"] == 0, st
        log = d.log()
        assert "Loading addresses from DNS seed seed.bitcoin.sipa.be." in log, log
        wait_for(lambda: "0 addresses found from DNS seeds" in d.log(), timeout=10, what="the summary")
    finally:
        listener.close()


def test_seed_answers_are_taken_without_addr_fetch(make_peerd, responder):
    """A seed whose x9. name answers gives addresses (counted as Core's
    `found`) and no addr-fetch: its own name is never looked up."""
    for i, name in enumerate(MAIN_SEEDS):
        responder.set("x9." + name, ["127.0.%d.1" % (i + 1), "127.0.%d.2" % (i + 1), "::1"])
    d = make_peerd("-dnsserver=" + responder.addr, chain="main", listen=False)
    wait_for(lambda: stats(d)["seeds_dns_queries"] == 9, timeout=20, what="nine seeds answered")
    assert stats(d)["seeds_dns_found"] == 27, stats(d)
    wait_for(lambda: "27 addresses found from DNS seeds" in d.log(), timeout=10, what="the summary")
    assert not any(responder.count(s) for s in MAIN_SEEDS), responder.queries


@pytest.mark.parametrize("args", [("-dnsseed=0",), ("-connect=0",), ("-noconnect",), ("-maxconnections=0",)])
def test_no_dns_seeds(make_peerd, responder, args):
    """(2) -dnsseed=0, and -connect / -maxconnections=0 (Core's soft
    -dnsseed=0): not one query."""
    d = make_peerd("-dnsserver=" + responder.addr, *args, chain="main", listen=False)
    wait_for(lambda: "DNS seeding disabled" in d.log(), timeout=10, what="DNS seeding disabled")
    time.sleep(1.5)
    assert not responder.queries, responder.queries
    assert stats(d)["seeds_dns_queries"] == 0


def test_connect_names_go_to_the_dns_server(make_peerd, responder):
    """connect= names are looked up by the same resolver (so -dnsserver
    covers every lookup), and -connect turns the DNS seeds off."""
    listener = Listener(18444)
    try:
        responder.set("node.seeds.test", [listener.ip])
        make_peerd("-dnsserver=" + responder.addr, "-connect=node.seeds.test:18444", listen=False)
        # A BIP324 v2 attempt first (this v1 listener closes it), then v1.
        wait_for(lambda: len(listener.first_frames) >= 2, timeout=20, what="the connect= peer")
        assert listener.first_frames[0][0] != bytes.fromhex("fabfb5da"), listener.first_frames
        assert listener.first_frames[1] == (bytes.fromhex("fabfb5da"), "version"), listener.first_frames
        assert responder.names() == {"node.seeds.test"}, responder.queries
    finally:
        listener.close()


def run_bitcoind_error(tmp_path, *args):
    binary, why = find_bitcoind()
    if binary is None:
        return None
    dd = tmp_path / "core"
    dd.mkdir(exist_ok=True)
    r = subprocess.run([binary, "-regtest", "-datadir=%s" % dd, "-printtoconsole=0", "-listen=0",
                        "-server=0", "-daemon=0"] + list(args), capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, r.stdout + r.stderr
    return r.stderr


@pytest.mark.parametrize("args", [("-dnsseed=0", "-forcednsseed=1"), ("-connect=0", "-forcednsseed=1")])
def test_forcednsseed_needs_dnsseed_as_core(tmp_path, args):
    """Core's startup error, word for word, when bitcoind is there to ask."""
    from conftest import PEERD_BIN

    msg = "Cannot set -forcednsseed to true when setting -dnsseed to false."
    dd = tmp_path / "peerd"
    dd.mkdir()
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % dd] + list(args), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and msg in r.stderr, r.stderr
    core = run_bitcoind_error(tmp_path, *args)
    if core is not None:
        assert msg in core, core


def have_netns():
    if not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10)
    return r.returncode == 0


def core_fixed_seeds_added(tmp_path):
    """The count a mainnet bitcoind adds with -dnsseed=0, in a namespace of its own."""
    binary, _ = find_bitcoind()
    if binary is None:
        return None
    dd = tmp_path / "core-main"
    dd.mkdir()
    p = subprocess.Popen(["unshare", "-n", binary, "-datadir=%s" % dd, "-dnsseed=0", "-listen=0", "-server=0",
                          "-daemon=0", "-printtoconsole=1", "-natpmp=0", "-discover=0", "-logtimestamps=0"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        for line in p.stdout:
            if line.startswith("Added ") and line.rstrip().endswith("fixed seeds from reachable networks."):
                return int(line.split()[1])
            if time.monotonic() > deadline:
                break
        raise AssertionError("bitcoind never added its fixed seeds")
    finally:
        p.kill()
        p.wait(timeout=20)


@pytest.mark.skipif(not have_netns(), reason="no network namespace (unshare -n): fixed seeds are routable")
def test_fixed_seeds_added_but_never_dialled(make_peerd, tmp_path):
    """(3) -dnsseed=0, no addnode=: the fixed seeds of the reachable
    networks (IPv4, IPv6) go into the addrman at once, as Core's. peerd runs
    where nothing can be dialled (its own network namespace)."""
    d = make_peerd("-dnsseed=0", "-fixedseeds=1", chain="main", listen=False, wrapper=("unshare", "-n"))
    wait_for(lambda: stats(d)["seeds_fixed_added"] > 0, timeout=10, what="fixed seeds")
    added = stats(d)["seeds_fixed_added"]
    # Core's arrays: 512 IPv4 and 485 IPv6 mainnet seeds.
    assert added == 997, added
    log = d.log()
    assert FIXED_SEEDS_LOG % added in log, log
    assert ("Adding fixed seeds as -dnsseed=0 (or IPv4/IPv6 connections are disabled via -onlynet) "
            "and neither -addnode nor -seednode are provided") in log, log
    core = core_fixed_seeds_added(tmp_path)
    if core is not None:
        assert core == added, (core, added)


@pytest.mark.skipif(not have_netns(), reason="no network namespace (unshare -n): fixed seeds are routable")
@pytest.mark.parametrize("args", [("-dnsseed=0", "-fixedseeds=0"), ("-connect=0", "-fixedseeds=1"),
                                  ("-dnsseed=0", "-fixedseeds=1", "-addnode=127.0.0.1:1")])
def test_fixed_seeds_not_added(make_peerd, args):
    """-fixedseeds=0; -connect (Core opens no automatic connections, so it
    adds none); with -addnode the 60 s wait (not reached here)."""
    d = make_peerd(*args, chain="main", listen=False, wrapper=("unshare", "-n"))
    time.sleep(2)
    assert stats(d)["seeds_fixed_added"] == 0
    if "-fixedseeds=0" in args:
        assert "Fixed seeds are disabled" in d.log()


def test_fixed_seed_data_is_cores():
    """daemon/net/seeds_fixed.c is exactly what scripts/fixed-seeds.py reads
    out of the bitcoind the tests run against (its provenance)."""
    from bitcoind import ROOT

    binary, why = find_bitcoind()
    if binary is None:
        pytest.skip(why)
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "fixed-seeds.py"), binary],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(ROOT, "daemon", "net", "seeds_fixed.c")) as f:
        assert f.read() == r.stdout, "daemon/net/seeds_fixed.c differs from %s's seeds" % binary


def test_regtest_has_no_seeds(make_peerd):
    """regtest has neither DNS nor fixed seeds (Core's have only a dummy
    name): nothing is asked, nothing added, nothing said about seeds."""
    d = make_peerd(listen=False)
    time.sleep(1)
    assert stats(d)["seeds_dns_queries"] == 0 and stats(d)["seeds_fixed_added"] == 0
    assert not re.search(r"DNS seed|fixed seeds", d.log(), re.I), d.log()
