"""peerctl against a scripted control socket (no peerd needed): the request
line it sends, how it prints results and errors, its exit codes, timeouts,
and finding the socket from -datadir, -conf and network sections.

Run with /usr/bin/python3 -m pytest.
"""
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERCTL = os.environ.get("PEERCTL_BIN", os.path.join(BUILD, "bin", "peerctl"))


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.access(PEERCTL, os.X_OK):
        pytest.fail(f"{PEERCTL} not built (run make)")


@pytest.fixture
def tmp():
    # Short: a Unix socket path must fit in 107 bytes.
    d = tempfile.mkdtemp(prefix="peerctl-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


class FakePeerd:
    """Accepts one connection on a Unix socket, records the request line and
    answers with `reply` (bytes, sent in `chunks` pieces), or closes
    ('close'), or keeps silent ('silent')."""

    def __init__(self, path, reply=b"", chunks=1):
        self.path, self.reply, self.chunks = path, reply, chunks
        self.request = None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(1)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        # Poll rather than block in accept(): close() must never close the
        # listening socket under a thread still inside accept() on it (a
        # later FakePeerd reusing the descriptor number could then have its
        # connection taken, or refused, by this stale thread).
        while not select.select([self.sock], [], [], 0.05)[0]:
            if self.done.is_set():
                return
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(10)
            buf = b""
            while b"\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    break
                buf += data
            self.request = buf
            if self.reply == "silent":
                self.done.wait(10)
                return
            if self.reply == "close":
                return
            step = max(1, len(self.reply) // self.chunks)
            for i in range(0, len(self.reply), step):
                conn.sendall(self.reply[i:i + step])
                time.sleep(0.05)
            self.done.wait(2)

    def close(self):
        self.done.set()
        # Bounded: the thread waits at most 10 s in recv() and 2 s after replying.
        self.thread.join(30)
        assert not self.thread.is_alive(), "FakePeerd's thread did not finish"
        self.sock.close()
        os.unlink(self.path)

    def request_json(self):
        assert self.request is not None, "peerctl sent nothing"
        assert self.request.endswith(b"\n") and self.request.count(b"\n") == 1, self.request
        return json.loads(self.request)


def peerctl(*args, timeout=30):
    return subprocess.run([PEERCTL, *args], capture_output=True, text=True, timeout=timeout)


def reply_line(**fields):
    return (json.dumps({"jsonrpc": "2.0", "id": 1, **fields}) + "\n").encode()


def call(tmp, reply, *args, chunks=1):
    path = os.path.join(tmp, "ctl.sock")
    srv = FakePeerd(path, reply, chunks)
    try:
        r = peerctl(f"-controlsocket={path}", *args)
    finally:
        srv.close()
    return r, srv


def test_help_and_version():
    r = peerctl("-help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: peerctl"), r
    for key in ("-datadir=", "-conf=", "-controlsocket=", "-rpcclienttimeout=", "-named", "-stdin",
                "-rpcwait", "-rpcwaittimeout=", "-getinfo", "-netinfo", "Exit status", "Example"):
        assert key in r.stdout
    assert r.stderr == ""
    r = peerctl("-version")
    assert r.returncode == 0 and r.stdout.startswith("peerctl "), r
    for flag in ("-h", "--help", "-?"):
        h = peerctl(flag)
        assert h.returncode == 0 and h.stdout == peerctl("-help").stdout, flag
    assert peerctl("--version").stdout == r.stdout


def test_no_socket(tmp):
    path = os.path.join(tmp, "none.sock")
    r = peerctl(f"-controlsocket={path}", "getconnectioncount")
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == (f"peerctl: cannot connect to control socket {path}: "
                        "No such file or directory (is peerd running?)\n")


def test_usage_errors(tmp):
    r = peerctl(f"-datadir={tmp}")
    assert r.returncode == 1 and r.stderr == "peerctl: no method given (peerctl -help for usage)\n"
    r = peerctl("-bogus=1", "uptime")
    assert r.returncode == 1
    assert r.stderr == "peerctl: command line: -bogus=1: unknown option (-help lists them)\n"
    r = peerctl(f"-datadir={tmp}", "-rpcclienttimeout=x", "uptime")
    assert r.returncode == 1
    assert r.stderr == "peerctl: command line: -rpcclienttimeout=x: not a number\n"
    r = peerctl(f"-conf={tmp}/missing.conf", "uptime")
    assert r.returncode == 1
    assert r.stderr == f"peerctl: {tmp}/missing.conf: cannot read config file: No such file or directory\n"


def test_request_line_and_params(tmp):
    result = {"a": 1, "b": [True, None], "c": "x"}
    r, srv = call(tmp, reply_line(result=result), "addnode", "1.2.3.4:18444", "add", "5", "-7", "1.5",
                  "true", "false", "null", '{"x": 1}', "[1, 2]", '"quoted"', "007", "", "two words")
    req = srv.request_json()
    assert req == {"jsonrpc": "2.0", "id": 1, "method": "addnode",
                   "params": ["1.2.3.4:18444", "add", 5, -7, 1.5, True, False, None, {"x": 1}, [1, 2],
                              "quoted", "007", "", "two words"]}
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == result
    assert r.stdout.startswith('{\n  "a": 1,'), r.stdout  # indented, keys in reply order
    assert r.stderr == ""


def test_no_params_is_empty_array(tmp):
    r, srv = call(tmp, reply_line(result=3), "getconnectioncount")
    assert srv.request_json()["params"] == []
    assert r.returncode == 0 and r.stdout == "3\n"


def test_string_result_raw(tmp):
    r, _ = call(tmp, reply_line(result="peerd stopping"), "stop")
    assert r.returncode == 0 and r.stdout == "peerd stopping\n"


def test_null_result_prints_nothing(tmp):
    r, _ = call(tmp, reply_line(result=None), "addnode", "1.2.3.4", "add")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""


def test_error_reply(tmp):
    r, _ = call(tmp, reply_line(result=None, error={"code": -32601, "message": "Method not found"}),
                "nosuchmethod")
    # bitcoin-cli's exit status: the code's absolute value (the OS keeps its low 8 bits).
    assert r.returncode == 32601 % 256
    assert r.stdout == ""
    assert r.stderr == "error code: -32601\nerror message:\nMethod not found\n"


@pytest.mark.parametrize("code", [-8, -1, -5, -28, -32602])
def test_error_exit_status_is_the_code(tmp, code):
    r, _ = call(tmp, reply_line(error={"code": code, "message": "m"}), "x")
    assert r.returncode == abs(code) % 256, (code, r.returncode)


def test_reply_in_pieces(tmp):
    result = {"peers": [{"id": i, "addr": f"127.0.0.1:{20000 + i}"} for i in range(300)]}
    r, _ = call(tmp, reply_line(result=result), "getpeerinfo", chunks=7)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == result


def test_bad_replies(tmp):
    r, _ = call(tmp, b"hello\n", "uptime")
    assert r.returncode == 1 and r.stderr.startswith("peerctl: reply is not a JSON-RPC object"), r.stderr
    r, _ = call(tmp, b'{"jsonrpc":"2.0","id":1}\n', "uptime")
    assert r.returncode == 1 and r.stderr == "peerctl: reply has neither result nor error\n"
    r, _ = call(tmp, b'{"jsonrpc":"2.0","id":2,"result":1}\n', "uptime")
    assert r.returncode == 1 and r.stderr == "peerctl: reply is for another request\n"
    r, _ = call(tmp, "close", "uptime")
    assert r.returncode == 1
    assert r.stderr == "peerctl: peerd closed the connection without replying\n"
    r, _ = call(tmp, b'{"jsonrpc":"2.0",', "uptime")  # no newline, then close
    assert r.returncode == 1
    assert r.stderr == "peerctl: peerd closed the connection in the middle of a reply\n"


def test_timeout(tmp):
    t0 = time.monotonic()
    r, _ = call(tmp, "silent", "-rpcclienttimeout=1", "uptime")
    took = time.monotonic() - t0
    assert r.returncode == 1
    assert r.stderr == "peerctl: no reply from peerd within 1 s (-rpcclienttimeout)\n"
    assert 0.9 <= took < 5, took


def test_mistyped_datadir(tmp):
    """As bitcoin-cli: a -datadir that does not exist is named as such."""
    missing = os.path.join(tmp, "no-such-dir")
    r = peerctl(f"-datadir={missing}", "-regtest", "uptime")
    assert r.returncode == 1
    assert r.stderr == f'peerctl: Specified data directory "{missing}" does not exist.\n', r.stderr
    assert not os.path.exists(missing)


def test_finds_socket_like_peerd(tmp):
    """-datadir, -conf (controlsocket= in the file) and a network section."""
    datadir = os.path.join(tmp, "dd")
    os.mkdir(datadir)
    sock = os.path.join(datadir, "control.sock")
    srv = FakePeerd(sock, reply_line(result="via datadir"))
    try:
        r = peerctl(f"-datadir={datadir}", "uptime")
    finally:
        srv.close()
    assert r.returncode == 0 and r.stdout == "via datadir\n", r.stderr

    # Another network's socket is in its own directory, found from the same
    # network flags peerd takes.
    os.mkdir(os.path.join(datadir, "regtest"))
    sock = os.path.join(datadir, "regtest", "control.sock")
    for flag in ("-regtest", "-chain=regtest"):
        srv = FakePeerd(sock, reply_line(result="via " + flag))
        try:
            r = peerctl(f"-datadir={datadir}", flag, "uptime")
        finally:
            srv.close()
        assert r.returncode == 0 and r.stdout == f"via {flag}\n", r.stderr
    r = peerctl(f"-datadir={datadir}", "-signet", "uptime")
    assert r.returncode == 1
    assert f"control socket {datadir}/signet/control.sock:" in r.stderr, r.stderr

    other = os.path.join(tmp, "other.sock")
    conf = os.path.join(tmp, "peerd.conf")
    with open(conf, "w") as f:
        f.write(f"maxconnections=10\n[regtest]\ncontrolsocket={other}\n")
    srv = FakePeerd(other, reply_line(result="via section"))
    try:
        r = peerctl(f"-conf={conf}", "-regtest", "uptime")
    finally:
        srv.close()
    assert r.returncode == 0 and r.stdout == "via section\n", r.stderr
    # On main the section does not apply: the default socket under ~/.peerd.
    env = dict(os.environ, HOME=tmp)
    env.pop("STATE_DIRECTORY", None)
    r = subprocess.run([PEERCTL, f"-conf={conf}", "uptime"], capture_output=True, text=True,
                       timeout=30, env=env)
    assert r.returncode == 1
    assert f"control socket {tmp}/.peerd/control.sock:" in r.stderr, r.stderr


# ---- bitcoin-cli's habits: -named, -stdin, -rpcwait, numbers as sent ---------


def test_named_params(tmp):
    r, srv = call(tmp, reply_line(result="h"), "-named", "getblock", "blockhash=00ff", "verbosity=2")
    assert r.returncode == 0, r.stderr
    assert srv.request_json()["params"] == {"blockhash": "00ff", "verbosity": 2}
    # Positional arguments mixed in go to "args", as bitcoin-cli sends them.
    r, srv = call(tmp, reply_line(result="h"), "-named", "getblock", "00ff", "verbosity=0")
    assert srv.request_json()["params"] == {"args": ["00ff"], "verbosity": 0}
    r = peerctl(f"-controlsocket={tmp}/x.sock", "-named", "m", "a=1", "a=2")
    assert r.returncode == 1 and "parameter a given more than once" in r.stderr


def test_stdin_args(tmp):
    path = os.path.join(tmp, "ctl.sock")
    srv = FakePeerd(path, reply_line(result=None))
    try:
        r = subprocess.run([PEERCTL, f"-controlsocket={path}", "-stdin", "addnode", "1.2.3.4"],
                           input="add\n7\n\n", capture_output=True, text=True, timeout=30)
    finally:
        srv.close()
    assert r.returncode == 0, r.stderr
    assert srv.request_json()["params"] == ["1.2.3.4", "add", 7, ""]


def test_rpcwait(tmp):
    path = os.path.join(tmp, "late.sock")
    proc = subprocess.Popen([PEERCTL, f"-controlsocket={path}", "-rpcwait", "-rpcwaittimeout=20", "uptime"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    assert proc.poll() is None, proc.communicate()
    srv = FakePeerd(path, reply_line(result=42))
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        srv.close()
    assert proc.returncode == 0 and out == "42\n", err
    # Without a peerd, -rpcwaittimeout ends the wait: exit 1.
    t0 = time.monotonic()
    r = peerctl(f"-controlsocket={path}", "-rpcwait", "-rpcwaittimeout=1", "uptime")
    took = time.monotonic() - t0
    assert r.returncode == 1 and "after 1 s (-rpcwaittimeout)" in r.stderr, r.stderr
    assert 0.9 <= took < 5, took
    r = peerctl(f"-controlsocket={path}", "-rpcwaittimeout=x", "uptime")
    assert r.returncode == 1 and "-rpcwaittimeout wants seconds" in r.stderr


def test_numbers_printed_as_sent(tmp):
    """Amounts keep eight decimals, doubles 16 digits: nothing re-rounded."""
    raw = (b'{"jsonrpc":"2.0","result":{"minfeefilter":0.00001000,"pingtime":0.000452,'
           b'"difficulty":4.656542373906925e-10,"n":[1,2.50000000,{}],"e":[],"s":"a,b:{c}"},"id":1}\n')
    r, _ = call(tmp, raw, "getpeerinfo")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        '{\n  "minfeefilter": 0.00001000,\n  "pingtime": 0.000452,\n'
        '  "difficulty": 4.656542373906925e-10,\n  "n": [\n    1,\n    2.50000000,\n    {}\n  ],\n'
        '  "e": [],\n  "s": "a,b:{c}"\n}\n'), r.stdout


def test_finds_systemd_socket(tmp):
    """No -datadir/-conf/-controlsocket and no ~/.peerd socket: the unit's."""
    env = dict(os.environ, HOME=tmp)
    env.pop("STATE_DIRECTORY", None)
    run_sock = os.path.join(tmp, "run.sock")
    env["PEERCTL_SYSTEM_SOCKET"] = run_sock
    env["PEERCTL_SYSTEM_CONF"] = os.path.join(tmp, "none.conf")
    srv = FakePeerd(run_sock, reply_line(result="via unit"))
    try:
        r = subprocess.run([PEERCTL, "uptime"], capture_output=True, text=True, timeout=30, env=env)
    finally:
        srv.close()
    assert r.returncode == 0 and r.stdout == "via unit\n", r.stderr
    # No runtime socket: the system config's controlsocket= (its [regtest] section for -regtest).
    conf_sock = os.path.join(tmp, "conf.sock")
    conf = os.path.join(tmp, "system.conf")
    with open(conf, "w") as f:
        f.write(f"[regtest]\ncontrolsocket={conf_sock}\n")
    env["PEERCTL_SYSTEM_CONF"] = conf
    srv = FakePeerd(conf_sock, reply_line(result="via conf"))
    try:
        r = subprocess.run([PEERCTL, "-regtest", "uptime"], capture_output=True, text=True, timeout=30, env=env)
    finally:
        srv.close()
    assert r.returncode == 0 and r.stdout == "via conf\n", r.stderr
    # An explicit -datadir is never second-guessed.
    os.mkdir(os.path.join(tmp, "dd"))
    r = subprocess.run([PEERCTL, f"-datadir={tmp}/dd", "uptime"], capture_output=True, text=True,
                       timeout=30, env=env)
    assert r.returncode == 1 and f"{tmp}/dd/control.sock" in r.stderr, r.stderr


# ---- against a real peerd -----------------------------------------------------


def run_peerctl(d, *args, **kw):
    return subprocess.run([PEERCTL, "-regtest", f"-datadir={d.datadir}", *args], capture_output=True,
                          text=True, timeout=30, **kw)


def test_real_peerd_numbers_and_warnings(peerd):
    p = peerd.connected_peer()
    try:
        r = run_peerctl(peerd, "getpeerinfo")
        assert r.returncode == 0, r.stderr
        # An amount as Core prints it: eight decimals, from peerd's own text.
        assert '"minfeefilter": 0.00000000' in r.stdout, r.stdout
        r = run_peerctl(peerd, "getblockchaininfo")
        assert '"difficulty": 4.656542373906925e-10,' in r.stdout, r.stdout
        r = run_peerctl(peerd, "getnetworkinfo")
        assert json.loads(r.stdout)["warnings"] == []
        r = run_peerctl(peerd, "getblockheader", "00")
        assert r.returncode == 8 and r.stderr.startswith("error code: -8\n"), (r.returncode, r.stderr)
        # -named reaches peerd's named parameters.
        r = run_peerctl(peerd, "-named", "getblockhash", "height=0")
        assert r.returncode == 0 and r.stdout == "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206\n"
        # -getinfo: one screen
        r = run_peerctl(peerd, "-getinfo")
        assert r.returncode == 0, r.stderr
        for want in ("Chain: regtest", "Blocks: 0", "Headers: 0", "Network: in 1, out 0, total 1",
                     "Free lists:", "binary", "script", "Check queue:", "Warnings: (none)"):
            assert want in r.stdout, (want, r.stdout)
        # -netinfo: counts, and a row per peer from level 1
        r = run_peerctl(peerd, "-netinfo")
        assert r.returncode == 0, r.stderr
        rows = {l.split()[0]: l.split()[1:] for l in r.stdout.splitlines() if l.split()[:1] in (["in"], ["out"], ["total"])}
        assert rows["in"][3] == "1" and rows["out"][3] == "0" and rows["total"][3] == "1", r.stdout
        r = run_peerctl(peerd, "-netinfo", "4")
        assert r.returncode == 0, r.stderr
        peer_rows = [l for l in r.stdout.splitlines() if l.startswith(" in ")]
        assert len(peer_rows) == 1 and "full" in peer_rows[0] and "127.0.0.1:" in peer_rows[0], r.stdout
        r = run_peerctl(peerd, "-netinfo", "9")
        assert r.returncode == 1 and "LEVEL, 0 to 4" in r.stderr
    finally:
        p.close()


def test_jsonrpc_1_0_requests(peerd):
    """Core's curl examples send JSON-RPC 1.0: answered in its shape."""
    ctl = peerd.ctl()
    ctl.send_line('{"jsonrpc":"1.0","id":"curltest","method":"getblockcount","params":[]}\n')
    assert ctl.read_line() == {"result": 0, "error": None, "id": "curltest"}
    ctl.send_line('{"jsonrpc":"1.0","id":"curltest","method":"nosuch","params":[]}\n')
    r = ctl.read_line()
    assert r["result"] is None and r["error"]["code"] == -32601 and r["id"] == "curltest", r
    # a chain method (answered from the validation thread) too
    ctl.send_line('{"jsonrpc":"1.0","id":7,"method":"getbestblockhash","params":[]}\n')
    r = ctl.read_line()
    assert r == {"result": "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206",
                 "error": None, "id": 7}, r
    # 2.0 is unchanged
    r = ctl.call_raw("getblockcount", [])
    assert r == {"jsonrpc": "2.0", "result": 0, "id": r["id"]}
    ctl.send_line('{"jsonrpc":"3.0","id":1,"method":"getblockcount"}\n')
    assert ctl.read_line()["error"]["code"] == -32600
