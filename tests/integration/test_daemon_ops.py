"""Operator methods, signals and files (issue 12): Core's ping, setnetworkactive,
getnodeaddresses, getaddednodeinfo, logging, getrpcinfo; help METHOD's sections;
SIGHUP log reopen and category re-read; -debuglogfile, -pid; controlsocketgroup."""
import grp
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import RpcError, wait_for
import bitcoind as core

NEW_METHODS = ["getaddednodeinfo", "getnodeaddresses", "setnetworkactive", "ping", "logging", "getrpcinfo"]


def err_code(fn):
    try:
        fn()
    except (RpcError, core.RpcError) as e:
        return e.code
    raise AssertionError("expected an error")


def methods_in_help(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith("=="):
            continue
        out.append(line.split()[0])
    return out


def test_help_sections_for_every_method(peerd):
    names = methods_in_help(peerd.rpc("help"))
    assert len(names) > 30
    for m in NEW_METHODS:
        assert m in names, m
    for m in names:
        text = peerd.rpc("help", m)
        assert text.startswith(m), (m, text)
        for section in ("\nArguments:\n", "\nResult:\n", "\nExamples:\n"):
            assert section in text, (m, section, text)
    assert "1. state    (required)" in peerd.rpc("help", "setnetworkactive")
    assert '"networkactive"' in peerd.rpc("help", "getnetworkinfo")


def test_ping_updates_pingtime(peerd):
    from conftest import frame
    p = peerd.connected_peer()
    p.commands_for(0.3)  # the handshake's own ping, unanswered
    n_before = sum(1 for m in p.received if m.command == "ping")
    assert peerd.rpc("ping") is None
    m = p.recv_until("ping")
    assert sum(1 for x in p.received if x.command == "ping") == n_before + 1
    assert "pingwait" in peerd.rpc("getpeerinfo")[0]
    p.send_raw(frame("pong", m.payload))
    wait_for(lambda: "pingtime" in peerd.rpc("getpeerinfo")[0] and
             "pingwait" not in peerd.rpc("getpeerinfo")[0], what="pingtime")
    # Another ping arrives only when asked for.
    assert "ping" not in p.commands_for(0.3)
    assert peerd.rpc("ping") is None
    p.recv_until("ping")
    p.close()


def test_setnetworkactive(peerd):
    assert peerd.rpc("getnetworkinfo")["networkactive"] is True
    p = peerd.connected_peer()
    assert peerd.rpc("setnetworkactive", False) is False
    assert p.is_closed()
    assert peerd.rpc("getnetworkinfo")["networkactive"] is False
    # New connections are dropped while inactive.
    q = peerd.peer()
    assert q.is_closed()
    assert peerd.rpc("getconnectioncount") == 0
    assert err_code(lambda: peerd.rpc("setnetworkactive", "yes")) == -3
    assert peerd.rpc("setnetworkactive", True) is True
    assert peerd.rpc("getnetworkinfo")["networkactive"] is True
    r = peerd.connected_peer()
    wait_for(lambda: peerd.rpc("getconnectioncount") == 1, what="reconnect")
    r.close()


def test_getnodeaddresses_and_addednodeinfo(peerd):
    assert peerd.rpc("getnodeaddresses") == []
    assert peerd.rpc("getnodeaddresses", 0, "ipv4") == []
    assert err_code(lambda: peerd.rpc("getnodeaddresses", -1)) == -8
    assert err_code(lambda: peerd.rpc("getnodeaddresses", 1, "foo")) == -8
    assert peerd.rpc("getaddednodeinfo") == []
    peerd.rpc("addnode", "127.0.0.1:1", "add")
    info = peerd.rpc("getaddednodeinfo")
    assert len(info) == 1 and info[0]["addednode"] == "127.0.0.1:1"
    assert info[0]["connected"] is False and info[0]["addresses"] == []
    assert peerd.rpc("getaddednodeinfo", "127.0.0.1:1") == info
    assert err_code(lambda: peerd.rpc("getaddednodeinfo", "127.0.0.1:2")) == -24


# Bitcoin Core 29's categories as its `logging` lists them (bitcoind at 638a4c0bd8).
CORE_CATEGORIES = ["addrman", "bench", "blockstorage", "cmpctblock", "coindb", "estimatefee", "http",
                   "i2p", "ipc", "leveldb", "libevent", "mempool", "mempoolrej", "net", "proxy", "prune",
                   "qt", "rand", "reindex", "rpc", "scan", "selectcoins", "tor", "txpackages",
                   "txreconciliation", "validation", "walletdb", "zmq"]


def err_of(fn):
    try:
        fn()
    except (RpcError, core.RpcError) as e:
        return e.code, e.message
    raise AssertionError("expected an error")


def test_logging_runtime(peerd):
    cats = peerd.rpc("logging")
    # Core's reply: every one of Core's categories, in Core's order.
    assert list(cats) == CORE_CATEGORIES
    assert not any(cats.values())
    cats = peerd.rpc("logging", ["net", "rpc", "qt"])
    assert cats["net"] is True and cats["rpc"] is True and cats["qt"] is True
    cats = peerd.rpc("logging", [], ["net"])
    assert cats["net"] is False and cats["rpc"] is True
    assert all(peerd.rpc("logging", ["all"]).values())
    assert not any(peerd.rpc("logging", [], ["1"]).values())
    assert all(peerd.rpc("logging", [""]).values())
    peerd.rpc("logging", [], ["all"])
    # As Core: "none"/"0" are -debug='s words, not the method's; case matters.
    for bad in ("nosuch", "none", "0", "NET"):
        assert err_of(lambda: peerd.rpc("logging", [bad])) == (-8, "unknown logging category " + bad)
    # A failed call changes nothing, even the names before the bad one.
    assert not any(peerd.rpc("logging").values())
    assert err_of(lambda: peerd.rpc("logging", ["net", "nosuch"]))[0] == -8
    assert peerd.rpc("logging")["net"] is False
    assert err_code(lambda: peerd.rpc("logging", "net")) == -3
    assert err_code(lambda: peerd.rpc("logging", [1])) == -3
    # Core's names drive peerd's categories: net's lines appear once it is on,
    # rpc's (the control socket's) once that is.
    peerd.rpc("logging", ["net"])
    mark = len(peerd.log())
    peerd.connected_peer().close()
    wait_for(lambda: "DEBUG [net]" in peerd.log()[mark:], what="a net debug line")
    peerd.rpc("uptime")
    assert "DEBUG [ctl]" not in peerd.log()[mark:]
    peerd.rpc("logging", ["rpc"])
    peerd.rpc("uptime")
    wait_for(lambda: "DEBUG [ctl] request uptime" in peerd.log()[mark:], what="an rpc debug line")
    # peerd's own finer names still work (they are not Core categories, so not listed).
    peerd.rpc("logging", [], ["all"])
    assert not any(peerd.rpc("logging", ["msg"]).values())


def test_debug_takes_core_names_at_start(make_peerd, tmp_path):
    d = make_peerd("-debug=addrman", "-debug=rpc", "-debug=qt", "-debugexclude=qt")
    cats = d.rpc("logging")
    assert [c for c in cats if cats[c]] == ["addrman", "rpc"]
    d.rpc("uptime")
    wait_for(lambda: "DEBUG [ctl] request uptime" in d.log(), what="rpc lines from -debug=rpc")
    d2 = make_peerd("-debug=1", "-debugexclude=net")
    cats = d2.rpc("logging")
    assert cats["net"] is False and all(v for c, v in cats.items() if c != "net")
    d3 = make_peerd("-debug=net", "-debug=none")
    assert not any(d3.rpc("logging").values())


@pytest.mark.parametrize("arg", ["-debug=foo", "-debugexclude=none", "-debug=NET"])
def test_debug_unknown_category_is_cores_error(tmp_path, arg):
    from conftest import PEERD_BIN
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-listen=0", arg],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 1
    assert "Unsupported logging category %s." % arg in r.stderr, r.stderr


def test_getrpcinfo_lists_calls_in_flight(peerd):
    addr = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
    from conftest import Ctl
    busy = Ctl(peerd.sock_path, timeout=60)
    # A long chain call, not read yet: it is in flight while getrpcinfo runs.
    busy.send_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "generatetoaddress",
                               "params": [400, addr]}) + "\n")
    seen = None
    deadline = time.time() + 20
    while time.time() < deadline and seen is None:
        active = peerd.rpc("getrpcinfo")["active_commands"]
        assert active[0]["method"] == "getrpcinfo"
        seen = next((a for a in active if a["method"] == "generatetoaddress"), None)
    assert seen is not None, "generatetoaddress never listed"
    assert isinstance(seen["duration"], int) and seen["duration"] >= 0
    assert len(busy.read_line()["result"]) == 400
    busy.close()
    # Once answered it is gone.
    assert [a["method"] for a in peerd.rpc("getrpcinfo")["active_commands"]] == ["getrpcinfo"]


# (method, params): the argument errors of the operator methods, as Core answers them.
ARG_CASES = [
    ("setnetworkactive", []),
    ("setnetworkactive", [True, 1]),
    ("setnetworkactive", ["yes"]),
    ("setnetworkactive", [1]),
    ("ping", [1]),
    ("getrpcinfo", [1]),
    ("getnodeaddresses", [1, "ipv4", 3]),
    ("getnodeaddresses", ["x"]),
    ("getnodeaddresses", [-1]),
    ("getnodeaddresses", [1, "foo"]),
    ("getnodeaddresses", [1, 4]),
    ("getaddednodeinfo", ["a", "b"]),
    ("getaddednodeinfo", [5]),
    ("getaddednodeinfo", ["127.0.0.1:2"]),
    ("logging", [[], [], 1]),
    ("logging", ["net"]),
    ("logging", [[], "net"]),
    ("logging", [[1]]),
    ("logging", [["nosuch"]]),
    ("logging", [[], ["none"]]),
]


def test_argument_errors_as_core(peerd):
    """Without bitcoind: Core's codes and, for a wrong count, Core's help-text message."""
    got = {(m, json.dumps(p)): err_of(lambda: peerd.rpc(m, *p)) for m, p in ARG_CASES}
    code, msg = got[("setnetworkactive", "[]")]
    assert code == -1 and msg.startswith("setnetworkactive state\n\n") and "\nArguments:\n" in msg
    assert got[("ping", "[1]")][0] == -1 and got[("ping", "[1]")][1].startswith("ping\n")
    assert got[("setnetworkactive", '["yes"]')] == (
        -3, 'Wrong type passed:\n{\n    "Position 1 (state)": '
            '"JSON value of type string is not of expected type bool"\n}')
    assert got[("getaddednodeinfo", '["127.0.0.1:2"]')] == (-24, "Error: Node has not been added.")


@pytest.mark.interop
def test_argument_errors_match_core(peerd, bitcoind_node):
    c = bitcoind_node
    for m, p in ARG_CASES:
        pc, pm = err_of(lambda: peerd.rpc(m, *p))
        cc, cm = err_of(lambda: c.rpc(m, *p))
        assert pc == cc, (m, p, pc, pm, cc, cm)
        if cc == -1:
            # Core's message is its help text: the same usage line first.
            assert pm.split("\n")[0] == cm.split("\n")[0], (m, p, pm, cm)
        else:
            assert pm == cm, (m, p, pm, cm)
    assert list(c.rpc("logging")) == list(peerd.rpc("logging")) == CORE_CATEGORIES
    for inc, exc in ([[], ["all"]], [["net", "rpc"], []], [["all"], ["zmq", "mempool"]], [["1"], []]):
        assert c.rpc("logging", inc, exc) == peerd.rpc("logging", inc, exc), (inc, exc)


@pytest.mark.interop
def test_core_same_fields_and_codes(peerd, bitcoind_node):
    c = bitcoind_node
    assert "Satoshi" in c.rpc("getnetworkinfo")["subversion"]
    # Same names, same result shapes.
    assert set(c.rpc("getrpcinfo")) == {"active_commands", "logpath"} <= set(peerd.rpc("getrpcinfo"))
    assert set(c.rpc("getrpcinfo")["active_commands"][0]) == set(peerd.rpc("getrpcinfo")["active_commands"][0])
    assert c.rpc("ping") is None and peerd.rpc("ping") is None
    assert c.rpc("getaddednodeinfo") == [] == peerd.rpc("getaddednodeinfo")
    assert isinstance(c.rpc("logging"), dict) and isinstance(peerd.rpc("logging"), dict)
    c.rpc("addnode", "127.0.0.1:1", "add")
    peerd.rpc("addnode", "127.0.0.1:1", "add")
    ci, pi = c.rpc("getaddednodeinfo")[0], peerd.rpc("getaddednodeinfo")[0]
    assert set(ci) == set(pi)
    for fn in [lambda n: n.rpc("getaddednodeinfo", "127.0.0.1:2"),
               lambda n: n.rpc("getnodeaddresses", -1),
               lambda n: n.rpc("getnodeaddresses", 1, "foo"),
               lambda n: n.rpc("logging", ["nosuch"]),
               lambda n: n.rpc("logging", "net"),
               lambda n: n.rpc("setnetworkactive", "yes")]:
        assert err_code(lambda: fn(c)) == err_code(lambda: fn(peerd))
    assert c.rpc("setnetworkactive", False) is False and peerd.rpc("setnetworkactive", False) is False
    assert c.rpc("getnetworkinfo")["networkactive"] is False
    assert peerd.rpc("getnetworkinfo")["networkactive"] is False
    assert c.rpc("setnetworkactive", True) is True and peerd.rpc("setnetworkactive", True) is True


def test_sighup_reopens_log_and_rereads_categories(make_peerd, tmp_path):
    conf = tmp_path / "peerd.conf"
    conf.write_text("")
    d = make_peerd("-conf=%s" % conf, "-debuglogfile=debug.log")
    logf = os.path.join(d.netdir, "debug.log")
    assert os.path.exists(logf)
    assert "peerd" in open(logf).read()
    assert d.rpc("logging")["net"] is False
    # logrotate without copy: rename, SIGHUP, a new file appears.
    os.rename(logf, logf + ".1")
    conf.write_text("[regtest]\ndebug=net\ndebug=rpc\ndebug=addrman\ndebugexclude=rpc\n")
    os.kill(d.pid, signal.SIGHUP)
    wait_for(lambda: os.path.exists(logf), what="a new log file")
    wait_for(lambda: "SIGHUP" in open(logf).read(), what="the SIGHUP line in the new file")
    cats = d.rpc("logging")
    assert [c for c in cats if cats[c]] == ["addrman", "net"]
    d.connected_peer().close()
    wait_for(lambda: "DEBUG [net]" in open(logf).read(), what="debug lines in the new file")
    assert "DEBUG [net]" not in open(logf + ".1").read()
    rc, _ = d.stop()
    assert rc == 0


def test_pid_file(make_peerd):
    d = make_peerd("-pid=peerd.pid")
    path = os.path.join(d.netdir, "peerd.pid")
    assert open(path).read().strip() == str(d.pid)
    rc, _ = d.stop()
    assert rc == 0
    assert not os.path.exists(path)


def test_controlsocketgroup(make_peerd):
    if os.geteuid() != 0:
        # chown to a group needs root unless we belong to it: use our own.
        gname = grp.getgrgid(os.getegid()).gr_name
        created = False
    else:
        gname = "peerdops%d" % os.getpid()
        if not shutil.which("groupadd"):
            pytest.skip("groupadd not available")
        subprocess.run(["groupadd", gname], check=True)
        created = True
    try:
        d = make_peerd("-controlsocketgroup=" + gname)
        st = os.stat(d.sock_path)
        assert stat.S_IMODE(st.st_mode) == 0o660, oct(st.st_mode)
        assert st.st_gid == grp.getgrnam(gname).gr_gid
        assert d.rpc("uptime") >= 0
        rc, _ = d.stop()
        assert rc == 0
    finally:
        if created:
            subprocess.run(["groupdel", gname], check=False)


def test_controlsocketgroup_unknown_group_fails(tmp_path):
    from conftest import PEERD_BIN
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-listen=0",
                        "-controlsocketgroup=nosuchgroup_peerd"], capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "nosuchgroup_peerd" in r.stderr


def test_unit_has_execreload():
    unit = os.path.join(os.path.dirname(__file__), "..", "..", "systemd", "peerd.service")
    assert re.search(r"^ExecReload=/bin/kill -HUP \$MAINPID$", open(unit).read(), re.M)


def test_getnodeaddresses_returns_learned_addresses(peerd):
    import struct
    from conftest import frame, ser_compact
    p = peerd.connected_peer()
    now = int(time.time())
    # One address from the wire (a new peer has one token: Core's bucket),
    # with the 2-hour penalty of an address heard from someone else.
    payload = ser_compact(1) + struct.pack("<I", now) + ser_compact(9) + bytes([2]) + ser_compact(16)
    payload += bytes.fromhex("2a010000000000000000000000000001") + struct.pack(">H", 18444)
    p.send_raw(frame("addrv2", payload))
    wait_for(lambda: len(peerd.rpc("getnodeaddresses", 0)) == 1, what="one address")
    # Three /16s: an address is its own source, so one /16 is one bucket.
    for i in range(1, 4):
        assert peerd.rpc("addpeeraddress", "8.%d.4.%d" % (i, i), 8333 + i) == {"success": True}
    got = peerd.rpc("getnodeaddresses", 0)
    assert set(got[0]) == {"time", "services", "address", "port", "network"}
    assert {(a["address"], a["port"], a["network"]) for a in got} == {
        ("8.1.4.1", 8334, "ipv4"), ("8.2.4.2", 8335, "ipv4"), ("8.3.4.3", 8336, "ipv4"),
        ("2a01::1", 18444, "ipv6")}
    assert all(a["services"] == 9 for a in got)
    assert [a["time"] for a in got if a["network"] == "ipv6"] == [now - 7200]
    assert len(peerd.rpc("getnodeaddresses")) == 1
    assert len(peerd.rpc("getnodeaddresses", 2, "ipv4")) == 2
    assert [a["network"] for a in peerd.rpc("getnodeaddresses", 0, "IPv6")] == ["ipv6"]
    assert peerd.rpc("getnodeaddresses", 0, "onion") == []
    p.close()
