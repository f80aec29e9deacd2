"""bitcoin-cli -netinfo against peerd prints what it prints against bitcoind.

Core's -netinfo (bitcoin-cli.cpp's NetinfoRequestHandler) refuses a server whose
getnetworkinfo "version" is under 209900 and reads getpeerinfo's fields
(connection_type, network, transport_protocol_type, minping, addr_processed,
addr_rate_limited, addr_relay_enabled, mapped_as, bip152_hb_*, last_block, ...).
peerd answers "version" 290000, the Core interface it implements, and keeps its
own name and version in "subversion" (doc/differences.md).

The same connections on both: bitcoind A, bitcoind B, and the node asked (peerd
P, or bitcoind Q): it connects out to A (-connect: manual) and B connects to it
(inbound). Levels 0 to 4 must print the same text but for what is measured or
named differently: ping times, seconds and minutes, peer ids, the inbound's
port (masked as N), and the server's own subversion in the first line.
peerctl -netinfo's counts by direction, network and connection type must be
bitcoin-cli's. Loopback only.
"""
import json
import os
import re
import subprocess

import pytest

import bitcoind
from conftest import free_port, wait_for

CLI = bitcoind.find_bitcoin_cli()
PEERCTL = os.environ.get("PEERCTL_BIN") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "bin", "peerctl")
pytestmark = pytest.mark.skipif(CLI is None, reason="no bitcoin-cli")


def netinfo(datadir, rpcport, *args):
    r = subprocess.run([CLI, "-regtest", "-datadir=" + datadir, "-rpcport=%d" % rpcport, "-netinfo", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (args, r.returncode, r.stdout, r.stderr)
    return r.stdout


def normalized(text, subversion):
    """The first line without the server's subversion; in the peer rows (between the
    "<->" header and the units line) every number is N and runs of spaces are one."""
    lines = text.split("\n")
    assert subversion in lines[0], (subversion, lines[0])
    lines[0] = lines[0].replace(subversion, "SUBVERSION")
    out, in_rows = [], False
    for line in lines:
        if line.startswith("<->"):
            in_rows = True
        elif in_rows and line.strip().startswith("ms"):
            in_rows = False
            line = " ".join(line.split())
        elif in_rows:
            line = " ".join(re.sub(r"\d+", "N", line).split())
        out.append(line)
    return "\n".join(out)


def counts(text):
    """The totals table: {(row, column): count} ("in", "out", "total" by network,
    total, block, manual)."""
    lines = text.split("\n")
    head = next(i for i, l in enumerate(lines) if l.split()[-3:-1] == ["total", "block"]
                or l.split()[-2:] == ["total", "block"])
    cols = lines[head].split()
    got = {}
    for line in lines[head + 1:head + 4]:
        row, *vals = line.split()
        for c, v in zip(cols, vals):
            got[(row, c)] = int(v)
    return got


def test_netinfo_levels_match_bitcoind(make_bitcoind, make_peerd):
    a, b = make_bitcoind(2)
    q = make_bitcoind(1, args=("-connect=127.0.0.1:%d" % a.port,))[0]
    rpcport = free_port()
    p = make_peerd("-connect=127.0.0.1:%d" % a.port, "-rpcport=%d" % rpcport)
    b.connect_to("127.0.0.1:%d" % q.port)
    b.connect_to("127.0.0.1:%d" % p.port)

    def settled(node_peers):
        peers = node_peers()
        return (len(peers) == 2 and all(x["version"] > 0 and "pingtime" in x for x in peers)
                and {x["connection_type"] for x in peers} == {"manual", "inbound"})
    wait_for(lambda: settled(lambda: q.rpc("getpeerinfo")), timeout=30, what="bitcoind's two peers")
    wait_for(lambda: settled(lambda: p.rpc("getpeerinfo")), timeout=30, what="peerd's two peers")

    info = p.rpc("getnetworkinfo")
    assert info["version"] >= 209900 and info["subversion"].startswith("/peerd:"), info
    core_sub = q.rpc("getnetworkinfo")["subversion"]
    for level in ("0", "1", "2", "3", "4"):
        want = netinfo(q.datadir, q.rpcport, level)
        got = netinfo(p.datadir, rpcport, level)
        assert normalized(got, info["subversion"]) == normalized(want, core_sub), (level, want, got)
    # The counts are not masked anywhere: both have one inbound and one manual outbound.
    c = counts(netinfo(p.datadir, rpcport))
    assert c[("in", "total")] == 1 and c[("out", "total")] == 1 and c[("out", "manual")] == 1, c

    # peerctl -netinfo counts the same connections the same way.
    r = subprocess.run([PEERCTL, "-regtest", "-datadir=" + p.datadir, "-netinfo"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    mine = counts(r.stdout)
    for key, n in counts(netinfo(p.datadir, rpcport)).items():
        assert mine.get(key) == n, (key, n, r.stdout)
