"""The control socket: every method, its errors, many clients at once."""
import json
import os
import socket
import stat
import subprocess
import threading
import time

import pytest

from conftest import PEERCTL_BIN, Ctl, RpcError, wait_for


def expect_error(fn, code, contains=None):
    try:
        fn()
    except RpcError as e:
        assert e.code == code, "expected %d, got %d: %s" % (code, e.code, e.message)
        if contains:
            assert contains in e.message, e.message
        return e
    raise AssertionError("expected error %d" % code)


def test_socket_mode_and_basic_methods(peerd):
    st = os.stat(peerd.sock_path)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    help_all = peerd.rpc("help")
    for m in ["help", "uptime", "stop", "getnetworkinfo", "getconnectioncount", "getpeerinfo", "getnettotals",
              "getstats", "addnode", "disconnectnode", "setban", "listbanned", "clearbanned"]:
        assert m in help_all, m
    assert "nodeid" in peerd.rpc("help", "disconnectnode")
    assert "unknown command" in peerd.rpc("help", "nosuch")
    assert isinstance(peerd.rpc("uptime"), int)
    net = peerd.rpc("getnetworkinfo")
    assert net["subversion"].startswith("/peerd:") and net["subversion"].endswith("/")
    assert net["protocolversion"] == 70016
    assert net["localservices"] == "0000000000000c09"
    assert net["localservicesnames"] == ["NETWORK", "WITNESS", "NETWORK_LIMITED", "P2P_V2"]
    assert net["connections"] == 0
    assert peerd.rpc("getconnectioncount") == 0
    assert peerd.rpc("getpeerinfo") == []
    p = peerd.connected_peer()
    totals = peerd.rpc("getnettotals")
    assert totals["totalbytesrecv"] > 0 and totals["totalbytessent"] > 0
    assert abs(totals["timemillis"] / 1000 - time.time()) < 60
    info = peerd.rpc("getpeerinfo")[0]
    for k in ["id", "addr", "addrbind", "inbound", "conntime", "lastsend", "lastrecv", "bytessent", "bytesrecv",
              "bytessent_per_msg", "bytesrecv_per_msg", "version", "subver", "services", "startingheight",
              "relaytxes", "connection_type"]:
        assert k in info, k
    assert info["addrbind"] == "127.0.0.1:%d" % peerd.port
    assert info["bytesrecv_per_msg"]["version"] > 0
    p.close()


def test_getstats_shape(peerd):
    p = peerd.connected_peer()
    s = peerd.rpc("getstats")
    assert s["messages"]["version"]["recv_count"] == 1 and s["messages"]["version"]["sent_count"] == 1
    assert s["messages"]["version"]["recv_bytes"] > 24
    assert set(["ETRUNC", "EMAGIC", "ECHECKSUM", "EOVERSIZE", "EUNKNOWN"]) <= set(s["decode_errors"])
    for name in ("binary", "script"):
        fl = s["freelists"][name]
        for k in ("capacity", "in_use", "high_water", "hits", "misses"):
            assert k in fl, (name, k)
    assert s["freelists"]["script"]["capacity"] == 12500
    cq = s["checkqueue"]
    for k in ("threads", "rounds", "jobs", "busy_ms", "idle_ms"):
        assert k in cq, k
    assert cq["threads"] >= 1
    proc = s["process"]
    assert proc["rss_bytes"] > 1 << 20 and proc["open_fds"] > 3 and proc["uptime"] >= 0
    p.close()


def test_errors(peerd):
    c = peerd.ctl()
    expect_error(lambda: c.call("nosuchmethod"), -32601, "nosuchmethod")
    # Core's codes (test_ctl_args_parity.py compares them with Core's):
    # a wrong count or an unknown command is -1 with the help text, a
    # wrong type -3.
    expect_error(lambda: c.call("getconnectioncount", 1), -1)
    expect_error(lambda: c.call("addnode", "1.2.3.4"), -1)
    expect_error(lambda: c.call("addnode", "1.2.3.4", "sideways"), -1)
    expect_error(lambda: c.call("addnode", 5, "add"), -3)
    expect_error(lambda: c.call("setban", "not-an-ip", "add"), -30)
    expect_error(lambda: c.call("setban", "1.2.3.4", "add", "soon"), -3)
    expect_error(lambda: c.call("disconnectnode"), -32602)
    # Invalid requests keep the connection open.
    c.send_line('{"jsonrpc":"2.0","id":7,"method":5}\n')
    r = c.read_line()
    assert r["error"]["code"] == -32600 and r["id"] == 7, r
    c.send_line('"just a string"\n')
    assert c.read_line()["error"]["code"] == -32600
    c.send_line("[]\n")
    assert c.read_line()["error"]["code"] == -32600
    c.send_line('{"jsonrpc":"3.0","id":1,"method":"uptime"}\n')
    assert c.read_line()["error"]["code"] == -32600
    c.send_line('{"jsonrpc":"2.0","id":2,"method":"uptime","params":"x"}\n')
    assert c.read_line()["error"]["code"] == -32602
    # Named parameters, batches, notifications.
    r = c.call_raw("help", {"command": "uptime"})
    assert "uptime" in r["result"], r
    r = c.call_raw("help", {"bogus": 1})
    assert r["error"] == {"code": -8, "message": "Unknown named parameter bogus"}, r
    c.send_line('[{"jsonrpc":"2.0","id":1,"method":"uptime"},{"jsonrpc":"2.0","method":"uptime"},'
                '{"jsonrpc":"2.0","id":3,"method":"nosuch"}]\n')
    batch = c.read_line()
    assert [x["id"] for x in batch] == [1, 3] and "result" in batch[0] and batch[1]["error"]["code"] == -32601
    c.send_line('{"jsonrpc":"2.0","method":"uptime"}\n{"jsonrpc":"2.0","id":9,"method":"getconnectioncount"}\n')
    assert c.read_line() == {"jsonrpc": "2.0", "result": 0, "id": 9}


def test_garbage_gets_parse_error_and_close(peerd):
    other = Ctl(peerd.sock_path)
    c = Ctl(peerd.sock_path)
    c.send_line("this is not json\n")
    r = c.read_line()
    assert r["error"]["code"] == -32700 and r["id"] is None, r
    assert c.closed(2)
    assert other.call("getconnectioncount") == 0
    p = peerd.connected_peer()
    assert peerd.rpc("getconnectioncount") == 1
    p.close()


def test_overlong_line(peerd):
    c = Ctl(peerd.sock_path)
    try:
        c.send_line("[" + "1," * 4100000)  # 8.2 MB, past the largest submitblock, no newline
    except BrokenPipeError:
        pass  # peerd stopped reading at the limit and closed; its answer is still there
    r = c.read_line()
    assert r["error"]["code"] == -32600 and "longer than" in r["error"]["message"], r
    assert c.closed(2)
    assert peerd.rpc("uptime") >= 0
    # A long but legal line is fine.
    c2 = Ctl(peerd.sock_path)
    c2.send_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "help", "params": ["x" * 60000]}) + "\n")
    assert "unknown command" in c2.read_line()["result"]


def test_64_clients_at_once(peerd):
    results = []
    errors = []

    def client(i):
        try:
            c = Ctl(peerd.sock_path)
            for _ in range(5):
                results.append(c.call("getconnectioncount"))
            results.append(len(c.call("getstats")["messages"]))
            c.close()
        except Exception as e:  # collected and reported below
            errors.append(repr(e))

    # 32 idle clients first, then 64 busy ones: 96 open together, below
    # CTL_MAX_CLIENTS (128), where the longest-idle client gives its slot up.
    clients = [Ctl(peerd.sock_path) for _ in range(32)]
    threads = [threading.Thread(target=client, args=(i,)) for i in range(64)]
    for t in threads:
        t.start()
    for c in clients:
        assert c.call("uptime") >= 0
    for t in threads:
        t.join(timeout=20)
    for c in clients:
        c.close()
    assert not errors, errors[:3]
    assert len(results) == 64 * 6


def test_setban_listbanned_persist(make_peerd, tmp_path):
    d = make_peerd("-peertimeout=5", name="banner")
    p = d.connected_peer()
    assert d.rpc("setban", "127.0.0.1", "add", 3600) is None
    # A new ban disconnects matching peers and refuses new ones.
    assert p.is_closed(2)
    q = d.peer()
    assert q.is_closed(2)
    expect_error(lambda: d.rpc("setban", "127.0.0.1", "add"), -23)
    assert d.rpc("setban", "10.0.0.0/8", "add", 2000000000, True) is None
    assert d.rpc("setban", "2001:db8::/32", "add") is None
    banned = {b["address"]: b for b in d.rpc("listbanned")}
    assert set(banned) == {"127.0.0.1/32", "10.0.0.0/8", "2001:db8::/32"}, banned
    assert banned["10.0.0.0/8"]["banned_until"] == 2000000000
    assert 3500 < banned["127.0.0.1/32"]["time_remaining"] <= 3600
    assert d.rpc("getstats")["peers"]["inbound_rejected_banned"] >= 1
    rc, _ = d.stop()
    assert rc == 0
    with open(os.path.join(d.netdir, "banlist.json")) as f:
        saved = json.load(f)
    assert len(saved["banned_nets"]) == 3 and all(e["version"] == 1 for e in saved["banned_nets"])
    # Loaded at startup.
    d2 = make_peerd("-peertimeout=5", name="banner", port=d.port)
    assert {b["address"] for b in d2.rpc("listbanned")} == set(banned)
    assert d2.peer().is_closed(2)
    expect_error(lambda: d2.rpc("setban", "1.2.3.4", "remove"), -30)
    assert d2.rpc("setban", "127.0.0.1", "remove") is None
    ok = d2.connected_peer()
    assert d2.rpc("getconnectioncount") == 1
    assert d2.rpc("clearbanned") is None
    assert d2.rpc("listbanned") == []
    ok.close()


def test_stop_method(make_peerd):
    d = make_peerd()
    assert d.rpc("stop") == "peerd stopping"
    assert d.proc.wait(timeout=5) == 0
    assert not os.path.exists(d.sock_path)


def test_stale_socket_replaced_live_socket_refused(make_peerd, tmp_path):
    netdir = tmp_path / "stale" / "regtest"
    netdir.mkdir(parents=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(netdir / "control.sock"))
    s.close()  # the file stays: a crashed daemon's leftover
    d = make_peerd(name="stale")
    assert d.rpc("uptime") >= 0
    # A second peerd on another datadir but told to use the same socket
    # finds it live: clear error. (On the same datadir the .lock stops it
    # first: test_daemon_datadir.py.)
    other = tmp_path / "other"
    other.mkdir()
    r = subprocess.run([d.cmd[0], "-regtest", "-datadir=%s" % other, "-controlsocket=" + d.sock_path,
                        "-listen=0"], capture_output=True, timeout=10, text=True)
    assert r.returncode == 1
    assert "is peerd already running?" in r.stderr, r.stderr
    assert d.rpc("getconnectioncount") == 0


@pytest.mark.skipif(not os.path.exists(PEERCTL_BIN), reason="peerctl not built")
def test_peerctl(peerd):
    def run(*args):
        return subprocess.run([PEERCTL_BIN, "-regtest", "-datadir=" + peerd.datadir, *args], capture_output=True,
                              text=True, timeout=10)
    r = run("getconnectioncount")
    assert r.returncode == 0 and r.stdout.strip() == "0", (r.stdout, r.stderr)
    r = run("getnetworkinfo")
    assert r.returncode == 0 and json.loads(r.stdout)["protocolversion"] == 70016
    r = run("help", "uptime")
    assert r.returncode == 0 and "uptime" in r.stdout
    r = run("nosuchmethod")
    assert r.returncode == 32601 % 256 and r.stderr  # bitcoin-cli's: abs(code)
    r = run("setban", "10.1.0.0/16", "add", "60")
    assert r.returncode == 0, r.stderr
    assert "10.1.0.0/16" in run("listbanned").stdout


def test_pipelined_requests_without_reading(peerd):
    """A client that sends 2,000 requests before reading any reply gets all
    of them, in order, while other clients are served meanwhile."""
    c = Ctl(peerd.sock_path)
    reqs = "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "getstats"}) + "\n" for i in range(2000))
    t = threading.Thread(target=lambda: c.send_line(reqs), daemon=True)
    t.start()
    time.sleep(0.3)
    assert peerd.rpc("getconnectioncount") == 0
    ids = [c.read_line()["id"] for _ in range(2000)]
    t.join(timeout=10)
    assert ids == list(range(2000))
