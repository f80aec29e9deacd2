"""Proxies and networks (issue 20): -proxy, -onion, -proxyrandomize,
-onlynet, -cjdnsreachable, -externalip, getnetworkinfo's networks and
localaddresses, each checked against a real bitcoind where both answer.

Every connection here goes to 127.0.0.1: the SOCKS5 proxy of
socks5_server.py relays a request only to the loopback peer the test
mapped its destination to, and a destination peerd would have to dial
directly is always a loopback one. Names are "localhost" (never a DNS
query: /etc/hosts answers) or onion names (never resolved).
"""
import base64
import hashlib
import os
import re
import subprocess

import pytest

import bitcoind
from conftest import PEERD_BIN, free_port, wait_for
from socks5_server import Socks5Server
from test_daemon_outbound import Listener, answer_handshake

# Core's stream isolation credentials: 8 random bytes in hex, '-', a counter.
CRED = re.compile(r"^([0-9a-f]{16}-)(\d+)$")


def onion_name(seed):
    """A valid Tor v3 name (key, checksum, version 3) from a seed."""
    key = hashlib.sha256(seed).digest()
    check = hashlib.sha3_256(b".onion checksum" + key + b"\x03").digest()[:2]
    return base64.b32encode(key + check + b"\x03").decode().lower() + ".onion"


@pytest.fixture
def proxy():
    p = Socks5Server()
    yield p
    p.close()


def test_proxy_name_connect_with_fresh_credentials(make_peerd, proxy):
    """-proxy: a host name goes to the proxy unresolved (a domain CONNECT),
    with credentials never used before, and the peer behind the proxy gets
    peerd's handshake; reconnecting uses new credentials."""
    srv = Listener()
    proxy.route("localhost", srv.port, srv.port)
    d = make_peerd("-proxy=" + proxy.addr, "-connect=localhost:%d" % srv.port, listen=False)
    p = srv.accept()
    v = answer_handshake(p)
    assert v.obj.strSubVer.startswith(b"/peerd:")
    r1 = proxy.wait_requests(1)[0]
    assert r1.methods == [0, 2] and r1.method == 2, r1
    assert r1.atyp == 3 and r1.host == "localhost" and r1.port == srv.port, r1
    assert r1.username == r1.password and CRED.match(r1.username), r1
    info = wait_for(lambda: d.rpc("getpeerinfo"), what="peer listed")[0]
    assert info["addr"] == "localhost:%d" % srv.port, info
    assert info["connection_type"] == "manual"
    p.close()  # peerd reconnects through the proxy, with new credentials
    p2 = srv.accept(timeout=15)
    answer_handshake(p2)
    r2 = proxy.wait_requests(2)[1]
    assert r2.username != r1.username and r2.username == r2.password
    m1, m2 = CRED.match(r1.username), CRED.match(r2.username)
    assert m1.group(1) == m2.group(1) and int(m2.group(2)) == int(m1.group(2)) + 1, (r1, r2)
    p2.close()
    srv.close()


def test_proxyrandomize_0_offers_no_credentials(make_peerd, proxy):
    srv = Listener()
    proxy.route("localhost", srv.port, srv.port)
    make_peerd("-proxy=" + proxy.addr, "-proxyrandomize=0", "-connect=localhost:%d" % srv.port,
               listen=False)
    p = srv.accept()
    answer_handshake(p)
    r = proxy.wait_requests(1)[0]
    assert r.methods == [0] and r.username is None, r
    p.close()
    srv.close()


def test_credentials_as_core(make_bitcoind, make_peerd, proxy):
    """bitcoind and peerd ask a proxy the same way: the same methods, a
    domain CONNECT for a name, Core's credential shape."""
    core = make_bitcoind(1, args=("-proxy=" + proxy.addr, "-connect=localhost:18999",
                                  "-v2transport=0"))[0]
    rc = proxy.wait_requests(1, timeout=30)[0]
    make_peerd("-proxy=" + proxy.addr, "-connect=localhost:18999", listen=False)
    wait_for(lambda: len([r for r in proxy.requests if r.reply is not None]) >= 2,
             timeout=15, what="peerd's request")
    rp = [r for r in proxy.requests if r.reply is not None and r is not rc][0]
    for r in (rc, rp):
        assert r.reply == 4  # not mapped: host unreachable
    assert (rc.methods, rc.method, rc.atyp, rc.host, rc.port) == \
           (rp.methods, rp.method, rp.atyp, rp.host, rp.port), (rc, rp)
    assert CRED.match(rc.username) and CRED.match(rp.username), (rc, rp)
    assert rc.username == rc.password and rp.username == rp.password
    core.stop()


def test_onion_addnode_through_onion_proxy(make_peerd, proxy):
    """-onion alone: a .onion addnode is a domain CONNECT to the onion
    proxy; IPv4 keeps no proxy."""
    srv = Listener()
    name = onion_name(b"peerd test")
    proxy.route(name, 8333, srv.port)
    d = make_peerd("-onion=" + proxy.addr, "-connect=0", listen=False)
    nets = {n["name"]: n for n in d.rpc("getnetworkinfo")["networks"]}
    assert nets["onion"]["reachable"] and nets["onion"]["proxy"] == proxy.addr, nets
    assert nets["ipv4"]["proxy"] == "" and nets["ipv4"]["reachable"], nets
    d.rpc("addnode", name + ":8333", "onetry")
    p = srv.accept()
    answer_handshake(p)
    r = proxy.wait_requests(1)[0]
    assert r.atyp == 3 and r.host == name and r.port == 8333, r
    info = wait_for(lambda: d.rpc("getpeerinfo"), what="peer listed")[0]
    assert info["addr"] == name + ":8333" and info["network"] == "onion", info
    p.close()
    srv.close()


def test_onion_without_proxy_is_not_dialled(make_peerd, proxy):
    """No onion proxy: an onion name cannot be dialled (Core: no socket for
    it) and no proxy hears of it."""
    d = make_peerd("-proxy=" + proxy.addr, "-onion=0", "-connect=0", listen=False)
    nets = {n["name"]: n for n in d.rpc("getnetworkinfo")["networks"]}
    assert not nets["onion"]["reachable"] and nets["onion"]["proxy"] == "", nets
    d.rpc("addnode", onion_name(b"nowhere") + ":8333", "onetry")
    wait_for(lambda: "Cannot create a socket for connecting to" in d.log(),
             what="the refusal logged")
    assert proxy.requests == []
    assert d.rpc("getpeerinfo") == []


def test_onlynet_onion_leaves_manual_ipv4_direct(make_peerd, make_bitcoind, proxy):
    """-onlynet limits automatic connections only (Core: "inbound and
    manual connections are not affected"): an IPv4 -connect is dialled
    directly, with no proxy for IPv4, while ipv4 shows as limited; and
    bitcoind does the same with an IPv4 addnode."""
    srv = Listener()
    core = make_bitcoind(1, args=("-onlynet=onion", "-onion=" + proxy.addr, "-connect=0"))[0]
    core.rpc("addnode", "127.0.0.1:%d" % srv.port, "onetry")
    srv.accept().close()  # Core dialled it directly
    assert proxy.requests == []
    d = make_peerd("-onlynet=onion", "-onion=" + proxy.addr, "-connect=127.0.0.1:%d" % srv.port,
                   listen=False)
    p = srv.accept()
    answer_handshake(p)
    nets = {n["name"]: n for n in d.rpc("getnetworkinfo")["networks"]}
    assert nets["ipv4"]["limited"] and not nets["ipv4"]["reachable"], nets
    assert nets["onion"]["reachable"] and not nets["onion"]["limited"], nets
    assert proxy.requests == []
    p.close()
    srv.close()


def test_loopback_goes_direct_even_with_proxy(make_peerd, make_bitcoind, proxy):
    """Core: 127.0.0.1 is on no network (unroutable), so no proxy serves it
    (bitcoind dials it directly too)."""
    srv = Listener()
    core = make_bitcoind(1, args=("-proxy=" + proxy.addr, "-connect=0"))[0]
    core.rpc("addnode", "127.0.0.1:%d" % srv.port, "onetry")
    srv.accept().close()
    assert proxy.requests == []
    make_peerd("-proxy=" + proxy.addr, "-connect=127.0.0.1:%d" % srv.port, listen=False)
    p = srv.accept()
    answer_handshake(p)
    assert proxy.requests == []
    p.close()
    srv.close()


def test_proxy_refusal_retries(make_peerd, proxy):
    """The proxy cannot reach the destination (REP 4): the peer is not
    connected and the target is tried again later."""
    d = make_peerd("-proxy=" + proxy.addr, "-connect=localhost:1", "-debug=net", listen=False)
    proxy.wait_requests(2, timeout=15)
    assert "Socks5() connect to localhost:1 failed: host unreachable" in d.log()
    assert d.rpc("getpeerinfo") == []


# ---- bad values: Core's messages -------------------------------------------

BAD = [
    ("-onlynet=foo",),
    ("-onlynet=cjdns",),
    ("-onlynet=i2p",),
    ("-proxy=1.2.3.4:abc",),
    ("-onion=[::1]:x",),
    ("-proxy=0.0.0.0",),
    ("-onion=0.0.0.0:9050",),
    ("-onlynet=onion", "-listenonion=0"),
    ("-onlynet=onion", "-proxy=127.0.0.1:9", "-onion=0"),
]


def _core_error(binary, tmp_path, args):
    d = tmp_path / "core"
    d.mkdir(exist_ok=True)
    r = subprocess.run([binary, "-regtest", "-datadir=%s" % d, "-server=0", "-listen=0",
                        "-printtoconsole=0", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, (args, r.stdout, r.stderr)
    m = re.search(r"Error: (.*)", r.stderr)
    assert m, r.stderr
    return m.group(1).strip()


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a) for a in BAD])
def test_bad_values_core_messages(tmp_path, args):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    want = _core_error(binary, tmp_path, args)
    d = tmp_path / "peerd"
    d.mkdir()
    # -listenonion=0 is what peerd does anyway (no Tor control).
    pargs = [a for a in args if a != "-listenonion=0"]
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % d, "-listen=0", *pargs],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0, (args, r.stdout, r.stderr)
    assert want in r.stdout + r.stderr, (want, r.stdout + r.stderr)


# ---- getnetworkinfo against bitcoind ------------------------------------------

CASES = [
    # A proxy for everything, two networks only, addresses of each kind.
    ("-onlynet=ipv4", "-onlynet=onion", "-proxy=127.0.0.1:9", "-externalip=1.2.3.4:8333",
     "-externalip=2001:4860::8888", "-externalip=%s" % onion_name(b"ours"),
     "-externalip=10.1.2.3", "-externalip=8.8.4.4:1"),
    # An onion proxy alone, without stream isolation; CJDNS reachable.
    ("-onion=[::1]:9", "-proxyrandomize=0", "-cjdnsreachable", "-externalip=[fc00::1]:8333",
     "-externalip=1.2.3.4", "-externalip=1.2.3.4:9"),
    # IPv6 proxy, onion forbidden: an onion -externalip is not ours then.
    ("-proxy=[::1]:9050", "-onion=0", "-externalip=%s:8333" % onion_name(b"x"),
     "-minrelaytxfee=0.00002", "-incrementalrelayfee=0.00003",
     "-externalip=5.6.7.8"),
    # Nothing set: every network but I2P and CJDNS, no proxy, no address.
    (),
    # CJDNS only; an IPv4 address is then not ours.
    ("-onlynet=cjdns", "-cjdnsreachable", "-externalip=[fc00::2]:1", "-externalip=1.2.3.4"),
    # Core tests -cjdnsreachable with IsArgSet: =0 keeps CJDNS reachable.
    ("-cjdnsreachable=0", "-externalip=fc12::1"),
]


@pytest.mark.parametrize("args", CASES, ids=["proxy-onlynet", "onion-cjdns", "noonion", "none",
                                             "cjdns-only", "cjdnsreachable-0"])
def test_getnetworkinfo_as_core(make_bitcoind, make_peerd, args):
    core = make_bitcoind(1, args=("-connect=0",) + args)[0]
    d = make_peerd("-connect=0", "-discover=0", *args)
    want, got = core.getnetworkinfo(), d.rpc("getnetworkinfo")
    for key in ("networks", "localrelay"):
        assert got[key] == want[key], (key, got[key], want[key])
    for key in ("relayfee", "incrementalfee"):  # BTC amounts, Decimal from bitcoind
        assert "%.8f" % got[key] == "%.8f" % want[key], (key, got[key], want[key])
    # A local address without a port takes the node's own listening port.
    mine = [dict(a, port=0 if a["port"] == d.port else a["port"]) for a in got["localaddresses"]]
    theirs = [dict(a, port=0 if a["port"] == core.port else a["port"])
              for a in want["localaddresses"]]
    assert mine == theirs, (mine, theirs)
    # Core's fields in Core's order (peerd's own, maxconnections and chain,
    # after them, before warnings).
    core_keys = [k for k in want if k in got]
    assert [k for k in got if k in want] == core_keys, (list(got), list(want))


def test_two_peerds_through_the_proxy(make_peerd, proxy):
    """A peerd reaches a second peerd through the proxy (by name, with
    stream isolation) and a block mined at the second reaches the first."""
    b = make_peerd("-peertimeout=10", name="behind")
    proxy.route("localhost", b.port, b.port)
    a = make_peerd("-proxy=" + proxy.addr, "-connect=localhost:%d" % b.port, listen=False,
                   name="front")
    wait_for(lambda: any(p.get("handshake_complete") for p in a.rpc("getpeerinfo")),
             timeout=15, what="a's handshake with b through the proxy")
    r = proxy.wait_requests(1)[0]
    assert r.host == "localhost" and r.port == b.port and CRED.match(r.username), r
    inbound = b.rpc("getpeerinfo")
    assert len(inbound) == 1 and inbound[0]["inbound"], inbound
    # Any valid regtest address does (test_chain_mining.py's TAPROOT).
    addr = "bcrt1pamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhqz6nvlh"
    tip = b.rpc("generatetoaddress", 1, addr)[-1]
    wait_for(lambda: a.rpc("getbestblockhash") == tip, timeout=15, what="the block at a")


def test_proxy_down_is_retried(make_peerd):
    """Nothing listens on the proxy's port: the failure names the proxy, and
    the destination is tried again (Core: the proxy connection failed)."""
    port = free_port()
    d = make_peerd("-proxy=127.0.0.1:%d" % port, "-connect=localhost:1", listen=False)
    line = "connect() to 127.0.0.1:%d failed after wait: Connection refused (111)" % port
    wait_for(lambda: d.log().count(line) >= 2, timeout=15, what="two attempts at the proxy")
    assert d.rpc("getpeerinfo") == []
