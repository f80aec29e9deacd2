"""Issue 23: the HTTP JSON-RPC door (doc/rpc.md), checked against Bitcoin Core.

The clients are real and unmodified: ../shared/bin/bitcoin-cli (with
peerd's cookie, with -rpcuser/-rpcpassword, with an -rpcauth line made as
Core's share/rpcauth makes one, with -rpcwait) and python-bitcoinlib's
bitcoin.rpc.Proxy. Where peerd and bitcoind answer the same request (the
read-only methods on the same chain, the JSON-RPC 1.0 and 2.0 envelopes and
their HTTP status codes, batches, a wrong password), both are asked and
the answers compared. Loopback only.
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import socket
import stat
import subprocess
import time

import pytest

import bitcoind
from conftest import free_port, wait_for

CLI = bitcoind.find_bitcoin_cli()
pytestmark = pytest.mark.skipif(CLI is None, reason="no bitcoin-cli")


def cli(datadir, port, *args, timeout=60, check=True):
    r = subprocess.run([CLI, "-regtest", "-datadir=" + datadir, "-rpcport=%d" % port, *args],
                       capture_output=True, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, (args, r.returncode, r.stdout, r.stderr)
    return r


def post(port, body, auth=None, method="POST", path="/", timeout=30):
    """One raw HTTP request; (status, body text, seconds taken)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    if auth is not None:
        h["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    t0 = time.monotonic()
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    out = r.status, r.read().decode(errors="replace")
    c.close()
    return out[0], out[1], time.monotonic() - t0


def post_padded(port, auth, head_bytes, body='{"method":"getblockcount","id":1}'):
    """A raw request whose request line and header lines (without their line
    ends, as libevent counts them against Core's 8,192) add up to head_bytes;
    (status, Content-Type, Connection, body)."""
    lines = ["POST / HTTP/1.1", "Host: x", "Authorization: Basic " + base64.b64encode(auth.encode()).decode(),
             "Content-Length: %d" % len(body)]
    pad = head_bytes - sum(map(len, lines)) - len("X-Pad: ")
    lines.append("X-Pad: " + "a" * pad)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("\r\n".join(lines) + "\r\n\r\n" + body).encode())
    r = http.client.HTTPResponse(s)
    r.begin()
    out = r.status, r.getheader("Content-Type"), r.getheader("Connection"), r.read().decode(errors="replace")
    s.close()
    return out


def rpcauth_line(user, password, salt="d3a0f6b1c2e4a5b6c7d8e9f0a1b2c3d4"):
    """What Core's share/rpcauth/rpcauth.py prints: user:salt$HMAC-SHA256(salt, password)."""
    return "%s:%s$%s" % (user, salt, hmac.new(salt.encode(), password.encode(), hashlib.sha256).hexdigest())


ALICE = rpcauth_line("alice", "wonderland")


@pytest.fixture
def chain(make_bitcoind):
    """A bitcoind with 12 blocks and ALICE's -rpcauth line beside its cookie; the raw blocks."""
    core = make_bitcoind(1, args=("-rpcauth=" + ALICE,))[0]
    desc = core.rpc("getdescriptorinfo", "raw(51)")["descriptor"]
    hashes = core.rpc("generatetodescriptor", 12, desc)
    return core, [core.rpc("getblock", h, 0) for h in hashes]


def synced_peerd(make_peerd, blocks, *args):
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, *args)
    d.rpcport = port
    for b in blocks:
        assert d.rpc("submitblock", b) is None
    return d


# Read-only methods both have, with arguments from the chain; bitcoin-cli's
# printed output must be the same to the byte.
def same_output_calls(core):
    best = core.rpc("getbestblockhash")
    h5 = core.rpc("getblockhash", 5)
    return [
        ("getblockcount",), ("getbestblockhash",), ("getblockhash", "5"), ("getblockheader", h5),
        ("getblockheader", h5, "false"), ("getblock", h5), ("getblock", h5, "0"), ("getblock", best, "2"),
        ("getchaintips",), ("getdifficulty",), ("getrawmempool",),
        ("-named", "getblock", "blockhash=" + h5, "verbosity=1"),
    ]


def test_bitcoin_cli_prints_what_it_prints_against_bitcoind(chain, make_peerd):
    core, blocks = chain
    d = synced_peerd(make_peerd, blocks)
    # The cookie: Core's format, owner only, in the network's directory.
    cookie = os.path.join(d.netdir, ".cookie")
    text = open(cookie).read()
    assert text.startswith("__cookie__:") and len(text) == len("__cookie__:") + 64, text
    int(text.split(":")[1], 16)
    assert stat.S_IMODE(os.stat(cookie).st_mode) == 0o600
    different = []
    for call in same_output_calls(core):
        ours = cli(d.datadir, d.rpcport, *call, check=False)
        theirs = cli(core.datadir, core.rpcport, *call, check=False)
        assert theirs.returncode == 0, (call, theirs.stderr)
        if (ours.returncode, ours.stdout) != (theirs.returncode, theirs.stdout):
            different.append((call, ours.returncode, ours.stdout[:300], ours.stderr[:300], theirs.stdout[:300]))
    assert different == []
    # An error prints as bitcoin-cli prints Core's (1.0: an HTTP 500 with the error object).
    for call in (("getblockhash", "99"), ("getblock", "00" * 32), ("getblockheader", "zz"), ("nosuchmethod",)):
        ours = cli(d.datadir, d.rpcport, *call, check=False)
        theirs = cli(core.datadir, core.rpcport, *call, check=False)
        assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr), call
    # -getinfo is a batch of five calls; its chain lines agree.
    info = cli(d.datadir, d.rpcport, "-getinfo", check=False)
    assert info.returncode == 0 and "Blocks: 12" in info.stdout, (info.stdout, info.stderr)
    # stop over HTTP: Core's envelope, then a clean exit that removes the cookie.
    assert cli(d.datadir, d.rpcport, "stop").stdout.strip()
    assert d.proc.wait(timeout=15) == 0
    assert not os.path.exists(cookie)


ENVELOPES = [
    '{"method":"getblockcount","params":[],"id":1}',
    '{"jsonrpc":"1.0","method":"getblockcount","params":[],"id":"a"}',
    '{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}',
    '{"jsonrpc":"2.0","method":"getblockcount"}',
    '{"method":"getblockcount"}',
    '{"method":"nosuchmethod","id":"x"}',
    '{"jsonrpc":"2.0","method":"nosuchmethod","id":"x"}',
    '{"method":"nosuchmethod"}',
    '{"jsonrpc":"2.0","method":"nosuchmethod"}',
    '{"method":"getblockhash","params":[99],"id":1}',
    '{"jsonrpc":"2.0","method":"getblockhash","params":[99],"id":1}',
    '{"method":"getblockhash","params":["x"],"id":1}',
    '{"method":"getblockhash","params":{"height":3},"id":1}',
    '{"method":"getblockhash","params":{"heigth":3},"id":1}',
    '{"jsonrpc":"3.0","method":"getblockcount","id":1}',
    '{"jsonrpc":2,"method":"getblockcount","id":1}',
    '{"jsonrpc":"2.0","id":1}',
    '{"jsonrpc":"2.0","method":5,"id":1}',
    '{"method":"getblockcount","params":5,"id":1}',
    '{"method":"getblockcount","id":null}',
    '{"method":"getblockcount","id":[1,{"a":2}]}',
    'this is not json',
    '42',
    '[]',
    '[{"method":"getblockcount","id":1},{"jsonrpc":"2.0","method":"getblockhash","params":[0],"id":2},'
    '5,{"method":"nosuchmethod","id":3},{"jsonrpc":"2.0","method":"getblockcount"},"x"]',
    '[{"jsonrpc":"2.0","method":"getblockcount"},{"jsonrpc":"2.0","method":"getbestblockhash"}]',
    '[{"method":"getblockcount"},7]',
]


def test_envelopes_and_status_codes_match_bitcoind(chain, make_peerd):
    """JSON-RPC 1.0 and 2.0, notifications, batches, malformed requests,
    wrong methods and paths, a missing or wrong password: the same HTTP
    status and the same body from both. Both take the same -rpcauth line."""
    core, blocks = chain
    d = synced_peerd(make_peerd, blocks, "-rpcauth=" + ALICE)
    other = core
    if True:
        differ = []
        for body in ENVELOPES:
            a = post(d.rpcport, body, "alice:wonderland")
            b = post(other.rpcport, body, "alice:wonderland")
            if a[:2] != b[:2]:
                differ.append((body, a[:2], b[:2]))
        for kw in (dict(method="GET"), dict(path="/nosuch"), dict(path="/wallet/w"), dict(auth=None)):
            body = '{"method":"getblockcount","id":1}'
            kw.setdefault("auth", "alice:wonderland")
            a = post(d.rpcport, body, **kw)
            b = post(other.rpcport, body, **kw)
            if a[:2] != b[:2]:
                differ.append((kw, a[:2], b[:2]))
        # Core's header limit (libevent's 400 page past 8,192 bytes), at the edge and past it.
        for size in (8192, 8193, 12000):
            a = post_padded(d.rpcport, "alice:wonderland", size)
            b = post_padded(other.rpcport, "alice:wonderland", size)
            if a != b:
                differ.append((size, a, b))
        assert post_padded(d.rpcport, "alice:wonderland", 8193)[0] == 400
        assert differ == []
        # A wrong password: 401 from both, after Core's pause.
        a = post(d.rpcport, '{"method":"getblockcount","id":1}', "alice:rabbit")
        b = post(other.rpcport, '{"method":"getblockcount","id":1}', "alice:rabbit")
        assert a[0] == b[0] == 401 and a[1] == b[1] == ""
        assert a[2] >= 0.24, a
        assert "incorrect password attempt from 127.0.0.1" in d.log()
        # bitcoin-cli with the rpcauth user's password, and a wrong one.
        assert cli(d.datadir, d.rpcport, "-rpcuser=alice", "-rpcpassword=wonderland", "getblockcount").stdout == "12\n"
        bad = cli(d.datadir, d.rpcport, "-rpcuser=alice", "-rpcpassword=rabbit", "getblockcount", check=False)
        assert bad.returncode == 1 and "Incorrect rpcuser or rpcpassword" in bad.stderr, bad.stderr
        # The cookie still works beside the rpcauth line.
        assert cli(d.datadir, d.rpcport, "getblockcount").stdout == "12\n"


def test_rpcuser_rpcpassword_no_cookie_and_bitcoinlib(make_peerd):
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=bob", "-rpcpassword=s3cret")
    assert not os.path.exists(os.path.join(d.netdir, ".cookie"))
    r = cli(d.datadir, port, "-rpcuser=bob", "-rpcpassword=s3cret", "getblockcount")
    assert r.stdout == "0\n"
    assert "rpcuser/rpcpassword is less secure" in d.log()
    # python-bitcoinlib's Proxy, unmodified (Debian's python3-bitcoinlib).
    bitcoin_rpc = pytest.importorskip("bitcoin.rpc")
    import bitcoin
    bitcoin.SelectParams("regtest")
    proxy = bitcoin_rpc.Proxy(service_url="http://bob:s3cret@127.0.0.1:%d" % port)
    assert proxy.getblockcount() == 0
    assert proxy._call("getblockhash", 0) == d.rpc("getblockhash", 0)
    with pytest.raises(bitcoin_rpc.JSONRPCError) as e:
        proxy._call("getblockhash", 5)
    assert e.value.error["code"] == -8
    bad = bitcoin_rpc.Proxy(service_url="http://bob:nope@127.0.0.1:%d" % port)
    with pytest.raises(Exception):
        bad.getblockcount()


def test_cookie_options(make_peerd, tmp_path):
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpccookieperms=group", "-rpccookiefile=mycookie")
    path = os.path.join(d.netdir, "mycookie")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert not os.path.exists(os.path.join(d.netdir, ".cookie"))
    assert cli(d.datadir, port, "-rpccookiefile=" + path, "getblockcount").stdout == "0\n"
    assert d.stop()[0] == 0
    assert not os.path.exists(path)
    # -norpccookiefile: no cookie, nobody can log in.
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-norpccookiefile")
    assert not os.path.exists(os.path.join(d.netdir, ".cookie"))
    assert post(port, '{"method":"getblockcount","id":1}', "__cookie__:x")[0] == 401
    # Core's messages for values it refuses; peerd stops as bitcoind does.
    os.makedirs(str(tmp_path / "bad"))
    os.makedirs(str(tmp_path / "busy"))
    for arg, msg in (("-rpccookieperms=everyone",
                      "Invalid -rpccookieperms=everyone; must be one of 'owner', 'group', or 'all'."),
                     ("-rpcauth=nocolon", "Invalid -rpcauth argument."),
                     ("-rpcallowip=1.2.3.4/99", "Invalid -rpcallowip subnet specification: 1.2.3.4/99.")):
        r = subprocess.run([d.cmd[0], "-chain=regtest", "-datadir=" + str(tmp_path / "bad"), "-listen=0",
                            "-rpcport=%d" % free_port(), arg], capture_output=True, text=True, timeout=20)
        assert r.returncode != 0 and msg in r.stdout + r.stderr, (arg, r.stdout, r.stderr)
    # A port the operator named that is taken: Core's error, no start.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        r = subprocess.run([d.cmd[0], "-chain=regtest", "-datadir=" + str(tmp_path / "busy"), "-listen=0",
                            "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1",
                            "-rpcport=%d" % busy.getsockname()[1]], capture_output=True, text=True, timeout=20)
        assert r.returncode != 0 and "Unable to bind any endpoint for RPC server" in r.stdout + r.stderr
    finally:
        busy.close()
    # Nor one another peerd holds: a node never shares its RPC port (with
    # SO_REUSEPORT the kernel would spread one node's clients over both).
    os.makedirs(str(tmp_path / "second"))
    r = subprocess.run([d.cmd[0], "-chain=regtest", "-datadir=" + str(tmp_path / "second"), "-listen=0",
                        "-rpcport=%d" % port], capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and "Unable to bind any endpoint for RPC server" in r.stdout + r.stderr, (
        r.stdout, r.stderr)


def test_rpcwait_until_peerd_answers(make_peerd, tmp_path):
    """bitcoin-cli -rpcwait started before peerd (no cookie yet, nothing
    listening): it retries until peerd has written its cookie and answers."""
    port = free_port()
    dd = tmp_path / "rpcwait"
    os.makedirs(str(dd))
    wait = subprocess.Popen([CLI, "-regtest", "-datadir=%s" % dd, "-rpcport=%d" % port, "-rpcwait",
                             "-rpcwaittimeout=30", "getblockcount"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert wait.poll() is None
    d = make_peerd("-rpcport=%d" % port, name="rpcwait")
    assert d.datadir == str(dd)
    out, err = wait.communicate(timeout=30)
    assert wait.returncode == 0 and out == "0\n", (out, err)


def test_slow_and_oversized_requests_hold_nothing(make_peerd):
    """A client that sends a byte a second is cut off after -rpcservertimeout;
    one with a body over the bound gets 413; others are served meanwhile."""
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=u", "-rpcpassword=p", "-rpcservertimeout=2")
    slow = socket.create_connection(("127.0.0.1", port))
    head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n"
    t0 = time.monotonic()
    closed = False
    for i in range(len(head)):
        try:
            slow.send(head[i:i + 1])
        except OSError:
            closed = True
            break
        time.sleep(0.25)
        # Served meanwhile.
        if i == 3:
            assert post(port, '{"method":"getblockcount","id":1}', "u:p")[:2] == (200, '{"result":0,"error":null,"id":1}\n')
        if time.monotonic() - t0 > 8:
            break
    if not closed:
        slow.settimeout(5)
        try:
            closed = slow.recv(100) == b""
        except OSError:
            closed = True
    assert closed and time.monotonic() - t0 < 8
    slow.close()
    big = '{"method":"getblockcount","params":["' + "a" * (17 << 20) + '"],"id":1}'
    assert post(port, big, "u:p")[0] == 413
    assert post(port, '{"method":"getblockcount","id":1}', "u:p")[0] == 200
    assert d.rpc("getblockcount") == 0
    # getstats counts what the door turned away (control.http).
    http = d.rpc("getstats")["control"]["http"]
    assert http["timed_out"] >= 1 and http["threads"] == 16 and http["work_queue"] == 64, http


def test_work_queue_depth_exceeded(make_peerd):
    """-rpcthreads=1 -rpcworkqueue=1: one call runs (generatetodescriptor of 30,000 blocks, seconds),
    one waits, the third gets Core's 503 "Work queue depth exceeded"; the
    waiting one is served after the first."""
    import threading
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=u", "-rpcpassword=p", "-rpcthreads=1", "-rpcworkqueue=1")
    results = {}

    def go(name, body):
        results[name] = post(port, body, "u:p", timeout=120) + (time.monotonic(),)

    long_call = threading.Thread(target=go, args=(
        "long", '{"method":"generatetodescriptor","params":[30000,"raw(51)#8lvh9jxk"],"id":1}'))
    long_call.start()
    # getrpcinfo runs on the loop: it lists the chain call while it runs.
    wait_for(lambda: any(c["method"] == "generatetodescriptor" for c in d.rpc("getrpcinfo")["active_commands"]),
             timeout=10, what="the long call to run")
    waiting = threading.Thread(target=go, args=("wait", '{"method":"getblockcount","id":2}'))
    waiting.start()
    time.sleep(0.3)  # its request is in; the long call runs for seconds more
    status, body, _ = post(port, '{"method":"getblockcount","id":3}', "u:p")
    refused_at = time.monotonic()
    long_call.join(120)
    waiting.join(120)
    assert results["long"][3] > refused_at, "the long call ended too soon to fill the queue"
    assert (status, body) == (503, "Work queue depth exceeded")
    assert results["long"][0] == 200, results["long"][1][:300]
    assert len(json.loads(results["long"][1])["result"]) == 30000
    assert results["wait"][:2] == (200, '{"result":30000,"error":null,"id":2}\n')
    # A new control connection: under ASan on a loaded machine the long call can outlast
    # -controltimeout (60 s), which closes the one getrpcinfo used (a broken pipe here).
    d.ctl().close()
    d._ctl = None
    assert d.rpc("getstats")["control"]["http"]["queue_full"] == 1


def test_keepalive_and_bind_warnings(make_peerd):
    """Two requests on one HTTP/1.1 connection; -rpcbind without -rpcallowip
    is ignored with Core's warning (loopback only), as is -rpcallowip alone."""
    port = free_port()
    other = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=u", "-rpcpassword=p", "-rpcbind=127.0.0.1:%d" % other)
    log = d.log()
    assert ("option -rpcbind was ignored because -rpcallowip was not specified, refusing to allow "
            "everyone to connect") in log
    auth = base64.b64encode(b"u:p").decode()
    s = socket.create_connection(("127.0.0.1", port))
    body = b'{"method":"getblockcount","id":1}'
    req = (b"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " + auth.encode() +
           b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    s.sendall(req + req)
    got = b""
    s.settimeout(10)
    while got.count(b'{"result":0,"error":null,"id":1}\n') < 2:
        chunk = s.recv(65536)
        assert chunk, got
        got += chunk
    assert got.count(b"HTTP/1.1 200") == 2
    s.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", other), timeout=2).close()
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcallowip=10.0.0.0/8")
    assert "option -rpcallowip was specified without -rpcbind; this doesn't usually make sense" in d.log()
    assert cli(d.datadir, port, "getblockcount").stdout == "0\n"


def test_http_calls_need_no_control_socket_file(make_peerd):
    """Each HTTP call reaches the dispatcher in process (ctl/inproc.c), not through a
    connection to control.sock: with the socket file moved away, HTTP still answers (it
    failed with the old hop), and every call is counted as an in-process one."""
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=bob", "-rpcpassword=s3cret")
    before = d.rpc("getstats")["control"]["inproc"]["calls"]
    d.ctl().close()
    d._ctl = None
    moved = d.sock_path + ".away"
    os.rename(d.sock_path, moved)
    try:
        for i in range(20):
            status, body, _ = post(port, json.dumps({"method": "getblockhash", "params": [0], "id": i}),
                                   auth="bob:s3cret")
            assert status == 200, body
            assert json.loads(body)["error"] is None, body
        status, body, _ = post(port, json.dumps({"method": "getblockhash", "params": [5], "id": 1}),
                               auth="bob:s3cret")
        assert status == 500 and json.loads(body)["error"]["code"] == -8, body
    finally:
        os.rename(moved, d.sock_path)
    assert d.rpc("getstats")["control"]["inproc"]["calls"] >= before + 21


def test_tip_questions_from_the_view_follow_every_block(chain, make_peerd):
    """getblockcount, getbestblockhash and getblockhash are answered on the loop from its
    chain view when no validation job is out (no thread switch), else by a job queued behind
    the others: either way they see every block submitted before them. A control-socket batch
    [submitblock, getblockcount, ...] asks while the submitblock job may still be out (the view
    is behind then), and so does an HTTP batch (sent as one line too). The answers are
    bitcoind's."""
    core, blocks = chain
    d = synced_peerd(make_peerd, [])
    ctl = d.ctl()
    for height, b in enumerate(blocks[:6], start=1):
        req = [{"jsonrpc": "2.0", "id": 1, "method": "submitblock", "params": [b]},
               {"jsonrpc": "2.0", "id": 2, "method": "getblockcount"},
               {"jsonrpc": "2.0", "id": 3, "method": "getbestblockhash"},
               {"jsonrpc": "2.0", "id": 4, "method": "getblockhash", "params": [height]}]
        ctl.send_line(json.dumps(req) + "\n")
        r = {x["id"]: x for x in ctl.read_line()}
        assert r[1]["result"] is None, r
        assert r[2]["result"] == height, r
        assert r[3]["result"] == r[4]["result"] == core.rpc("getblockhash", height), r
    auth = "__cookie__:" + open(os.path.join(d.netdir, ".cookie")).read().split(":", 1)[1]
    for height, b in enumerate(blocks[6:], start=7):
        req = [{"jsonrpc": "2.0", "id": 1, "method": "submitblock", "params": [b]},
               {"jsonrpc": "2.0", "id": 2, "method": "getblockcount"},
               {"jsonrpc": "2.0", "id": 3, "method": "getbestblockhash"},
               {"jsonrpc": "2.0", "id": 4, "method": "getblockhash", "params": [height]},
               {"jsonrpc": "2.0", "id": 5, "method": "getblockhash", "params": [height + 1]}]
        status, body, _ = post(d.rpcport, json.dumps(req), auth=auth)
        assert status == 200, body
        r = {x["id"]: x for x in json.loads(body)}
        assert r[2]["result"] == height, r
        assert r[3]["result"] == r[4]["result"] == core.rpc("getblockhash", height), r
        assert r[5]["error"] == {"code": -8, "message": "Block height out of range"}, r
    # A batch goes to the dispatcher as one line, so its questions waited behind the
    # submitblock's job. Alone, with nothing out, they come from the view (a job of the
    # loop's own may still be out just after a new tip: then a job answers).
    before = d.rpc("getstats")["control"]["view_answers"]
    for _ in range(50):
        status, body, _ = post(d.rpcport, json.dumps({"method": "getblockcount", "id": 1}), auth=auth)
        assert status == 200 and json.loads(body)["result"] == len(blocks), body
        if d.rpc("getstats")["control"]["view_answers"] > before:
            break
        time.sleep(0.05)
    assert d.rpc("getstats")["control"]["view_answers"] > before


CAROL = rpcauth_line("carol", "looking-glass")


def test_rpcwhitelist_as_bitcoind(make_bitcoind, make_peerd):
    """-rpcwhitelist and -rpcwhitelistdefault: the same options on bitcoind and peerd,
    the same requests, the same HTTP status and body, and the same log lines. alice's two
    lists intersect to getblockcount; carol has none, so with whitelists set (the default
    of -rpcwhitelistdefault) she may call nothing; the cookie user may call what the
    fixtures need."""
    opts = ("-rpcauth=" + ALICE, "-rpcauth=" + CAROL,
            "-rpcwhitelist=alice:getblockcount,getbestblockhash",
            "-rpcwhitelist=alice:getblockcount, getblockhash",
            "-rpcwhitelist=__cookie__:getblockcount,stop,getblockhash")
    core = make_bitcoind(1, args=opts)[0]
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, *opts)
    cases = [
        ("alice:wonderland", {"method": "getblockcount", "id": 1}),
        ("alice:wonderland", {"method": "getbestblockhash", "id": 1}),
        ("alice:wonderland", {"method": "getblockhash", "params": [0], "id": 1}),
        ("alice:wonderland", [{"method": "getblockcount", "id": 1}, {"method": "getblockcount", "id": 2}]),
        ("alice:wonderland", [{"method": "getblockcount", "id": 1}, {"method": "getblockhash", "params": [0], "id": 2}]),
        ("alice:wonderland", [{"method": "getblockcount", "id": 1}, 1]),
        ("alice:wonderland", [{"method": 5, "id": 1}]),
        ("alice:wonderland", [{"id": 1}]),
        ("alice:wonderland", {"id": 1}),
        ("alice:wonderland", []),
        ("alice:wonderland", "nojson"),
        ("carol:looking-glass", {"method": "getblockcount", "id": 1}),
        ("carol:looking-glass", "nojson"),
    ]
    for auth, req in cases:
        body = req if isinstance(req, str) else json.dumps(req)
        want = post(core.rpcport, body, auth=auth)[:2]
        got = post(port, body, auth=auth)[:2]
        assert got[0] == want[0], (req, want, got)
        if want[1]:
            assert json.loads(got[1]) == json.loads(want[1]), (req, want, got)
        else:
            assert got[1] == "", (req, got)
    for line in ("RPC User alice not allowed to call method getbestblockhash",
                 "RPC User alice not allowed to call method getblockhash",
                 "RPC User carol not allowed to call any methods"):
        assert line in open(core.debug_log).read(), line
        assert line in d.log(), line
    # -rpcwhitelistdefault=0: carol, with no list, may call anything again.
    port2 = free_port()
    d2 = make_peerd("-rpcport=%d" % port2, "-rpcwhitelistdefault=0", *opts)
    status, body, _ = post(port2, json.dumps({"method": "getblockcount", "id": 1}), auth="carol:looking-glass")
    assert status == 200 and json.loads(body)["result"] == 0, body
    # -rpcwhitelistdefault=1 with no list at all: nobody may call anything.
    port3 = free_port()
    make_peerd("-rpcport=%d" % port3, "-rpcwhitelistdefault=1", "-rpcauth=" + ALICE)
    status, body, _ = post(port3, json.dumps({"method": "getblockcount", "id": 1}), auth="alice:wonderland")
    assert status == 403 and body == "", (status, body)


def test_getblock_hex_of_a_large_block_as_bitcoind(make_bitcoind, make_peerd):
    """getblock HASH 0 of a block of about 100 kB: its hex is written without jansson's
    dump (ctl/request.c plain_string, for strings of 64 KiB and more) and must be
    bitcoind's to the byte, over HTTP and on the control socket."""
    core = make_bitcoind(1)[0]
    desc = core.rpc("getdescriptorinfo", "raw(51)")["descriptor"]
    hashes = core.rpc("generatetodescriptor", 101, desc)
    cb = core.rpc("getblock", hashes[0], 1)["tx"][0]
    script = b"\x51" * 50000
    raw = (b"\x02\x00\x00\x00\x01" + bytes.fromhex(cb)[::-1] + b"\x00\x00\x00\x00\x00\xff\xff\xff\xff\x01" +
           (5000000000 - 100000).to_bytes(8, "little") + b"\xfd" + len(script).to_bytes(2, "little") + script +
           b"\x00\x00\x00\x00")
    big = core.rpc("generateblock", desc, [raw.hex()])["hash"]
    d = synced_peerd(make_peerd, [core.rpc("getblock", h, 0) for h in hashes + [big]])
    want = core.rpc("getblock", big, 0)
    assert len(want) > 100000
    assert d.rpc("getblock", big, 0) == want
    auth = "__cookie__:" + open(os.path.join(d.netdir, ".cookie")).read().split(":", 1)[1]
    auth_core = "__cookie__:" + open(core.cookie_path).read().split(":", 1)[1]
    # The hex is written as its JSON text on the validation thread (ctl_ok_bytes) and the
    # HTTP reply built around it in the dispatcher's buffer (rpc_jsonrpc.c reply_in_place):
    # every envelope and id shape, a batch and a notification, byte for byte as bitcoind's.
    call = {"method": "getblock", "params": [big, 0]}
    bodies = [dict(call, jsonrpc="2.0", id=7), dict(call), dict(call, id=None), dict(call, jsonrpc="1.0", id="x\u00e9\"y"),
              dict(call, id=123456789012345678901234567890), dict(call, jsonrpc="2.0", id=1.5),
              dict(call, id={"a": [1, 2]}), dict(call, jsonrpc="2.0", id=None), dict(call, jsonrpc="2.0"),
              [dict(call, jsonrpc="2.0", id=1), {"jsonrpc": "2.0", "method": "getblockcount", "id": 2}, dict(call, id=3)]]
    for b in bodies:
        body = json.dumps(b)
        status, got, _ = post(d.rpcport, body, auth=auth)
        status_core, got_core, _ = post(core.rpcport, body, auth=auth_core)
        assert status == status_core, (b, status, status_core)
        assert got == got_core, (b, got[:200], got_core[:200], got[-100:], got_core[-100:])


@pytest.mark.parametrize("how", ["sigterm", "stop over http"])
def test_stop_under_http_load_ends_every_call(make_peerd, how):
    """Calls in every state when peerd stops (queued for the loop, served, waiting for a
    chain job): the in-process door ends them all (ctl_inproc_stop), the HTTP threads are
    joined and peerd exits 0 (under ASan: nothing leaked, nothing used after free). The
    stop method over HTTP starts the shutdown from inside its own in-process client's
    reply."""
    import threading
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=bob", "-rpcpassword=s3cret")
    stop = threading.Event()
    counts = []

    def hammer(method, params):
        n = 0
        body = json.dumps({"method": method, "params": params, "id": 1})
        while not stop.is_set():
            try:
                status, _, _ = post(port, body, auth="bob:s3cret", timeout=10)
                n += status == 200
            except OSError:
                break
        counts.append(n)
    threads = [threading.Thread(target=hammer, args=m) for m in
               [("getblockcount", []), ("getblock", [d.rpc("getblockhash", 0), 2]), ("getblockchaininfo", []),
                ("getblockhash", [0])] * 3]
    for t in threads:
        t.start()
    time.sleep(1.5)
    if how == "sigterm":
        rc, _ = d.stop(timeout=15)
    else:
        status, body, _ = post(port, json.dumps({"method": "stop", "id": 1}), auth="bob:s3cret")
        assert status == 200 and json.loads(body)["error"] is None, body
        rc = d.proc.wait(timeout=15)
    stop.set()
    for t in threads:
        t.join(timeout=15)
    assert rc == 0, d.log()
    assert sum(counts) > 0, counts


def test_http_batch_goes_to_the_dispatcher_100_calls_at_a_time(make_peerd):
    """A batch of 250 calls is three hand-offs to the dispatcher (lines of at most
    CTL_MAX_BATCH = 100), not 250; members that never reach it (not an object, no method,
    an unknown method) are answered in place and in order, notifications run unanswered,
    and every answer is where it was asked."""
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rpcuser=bob", "-rpcpassword=s3cret")
    genesis = d.rpc("getblockhash", 0)
    before = d.rpc("getstats")["control"]["inproc"]["calls"]
    req = []
    for i in range(250):
        req.append({"jsonrpc": "2.0", "method": "getblockhash", "params": [0 if i % 2 else 1], "id": i})
    req[10] = 5
    req[20] = {"jsonrpc": "2.0", "id": 20}
    req[30] = {"jsonrpc": "2.0", "method": "nosuchmethod", "id": 30}
    req[40] = {"jsonrpc": "2.0", "method": "getblockcount"}  # a notification
    status, body, _ = post(port, json.dumps(req), auth="bob:s3cret")
    assert status == 200, body
    out = json.loads(body)
    assert len(out) == 249, len(out)
    assert d.rpc("getstats")["control"]["inproc"]["calls"] - before == 3
    # As Core's loop: a member that is not an object carries the previous member's id.
    assert [r.get("id") for r in out[:12]] == list(range(10)) + [9, 11], out[:12]
    assert out[10]["error"] == {"code": -32600, "message": "Invalid Request object"}, out[10]
    for r in out[:10] + out[11:]:
        i = r["id"]
        if i == 20:
            assert r["error"] == {"code": -32600, "message": "Missing method"}, r
        elif i == 30:
            assert r["error"] == {"code": -32601, "message": "Method not found"}, r
        elif i % 2:
            assert r["result"] == genesis, r
        else:
            assert r["error"] == {"code": -8, "message": "Block height out of range"}, r
