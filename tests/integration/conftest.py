"""Fixtures for peerd's integration tests.

The daemon under test is the real binary ($BUILD/bin/peerd, or $PEERD_BIN),
started on regtest with a temporary datadir and a free loopback port. The
peer side is python-bitcoinlib's message classes over a plain socket: an
implementation independent of peerd's own codec. Frames are cut and their
checksums verified here (hashlib), and the few messages python-bitcoinlib
does not know (wtxidrelay, sendaddrv2, sendcmpct, feefilter, addrv2) are
read with struct, so nothing peerd encodes is checked by peerd's own code.

Everything is bounded in time: every socket has a timeout, every wait a
deadline, and every daemon is stopped (SIGTERM, then SIGKILL) at teardown.
"""
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from io import BytesIO

import pytest

from bitcoin.core import CBlockHeader
from bitcoin.messages import messagemap

# One free-port picker and one deadline wait for peerd and bitcoind alike.
import bitcoind
from bitcoind import ROOT, free_port
from bitcoind import wait_until as wait_for

# $BUILD (as `make test` passes it) or build/, relative to the checkout.
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERD_BIN = os.environ.get("PEERD_BIN", os.path.join(BUILD, "bin", "peerd"))
PEERCTL_BIN = os.environ.get("PEERCTL_BIN", os.path.join(os.path.dirname(PEERD_BIN), "peerctl"))
# Regtest's network magic. Frames are built here rather than with
# python-bitcoinlib's to_bytes(), which reads the library's global network
# (bitcoin.SelectParams) that other test modules may set differently.
MAGIC = bytes.fromhex("fabfb5da")
# Regtest genesis block hash, internal (wire) byte order.
GENESIS_HASH = bytes.fromhex("0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206")[::-1]
PROTO_VERSION = 70016
# peerd (as Core) answers a ping with a pong only above this version (BIP31).
BIP31_VERSION = 60000


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


def frame(command, payload=b"", magic=MAGIC, checksum=None):
    """A v1 frame built here, not by python-bitcoinlib or peerd."""
    if isinstance(command, str):
        command = command.encode()
    cs = sha256d(payload)[:4] if checksum is None else checksum
    return magic + command.ljust(12, b"\0") + struct.pack("<I", len(payload)) + cs + payload


def ser_compact(n):
    if n < 0xFD:
        return bytes([n])
    if n <= 0xFFFF:
        return b"\xfd" + struct.pack("<H", n)
    if n <= 0xFFFFFFFF:
        return b"\xfe" + struct.pack("<I", n)
    return b"\xff" + struct.pack("<Q", n)


def payload_of(msg):
    """A python-bitcoinlib message's payload bytes."""
    f = BytesIO()
    msg.msg_ser(f)
    return f.getvalue()


def read_compact(f):
    b = f.read(1)[0]
    if b < 0xFD:
        return b
    return struct.unpack({0xFD: "<H", 0xFE: "<I", 0xFF: "<Q"}[b], f.read({0xFD: 2, 0xFE: 4, 0xFF: 8}[b]))[0]


class Msg:
    """A received message: command, raw payload, and the decoded object."""

    def __init__(self, command, payload):
        self.command = command
        self.payload = payload
        self.obj = None
        cls = messagemap.get(command.encode())
        if command == "headers":
            f = BytesIO(payload)
            n = read_compact(f)
            self.obj = []
            for _ in range(n):
                self.obj.append(CBlockHeader.stream_deserialize(f))
                read_compact(f)  # tx count, always 0
        elif command == "sendcmpct":
            hb, ver = struct.unpack("<?Q", payload)
            self.obj = {"high_bandwidth": hb, "version": ver}
        elif command == "feefilter":
            self.obj = struct.unpack("<q", payload)[0]
        elif command == "addrv2":
            self.obj = parse_addrv2(payload)
        elif cls is not None:
            self.obj = cls.msg_deser(BytesIO(payload))

    def __repr__(self):
        return "Msg(%s, %d bytes)" % (self.command, len(self.payload))


def parse_addrv2(payload):
    f = BytesIO(payload)
    out = []
    for _ in range(read_compact(f)):
        t = struct.unpack("<I", f.read(4))[0]
        services = read_compact(f)
        net = f.read(1)[0]
        addr = f.read(read_compact(f))
        port = struct.unpack(">H", f.read(2))[0]
        out.append((t, services, net, addr, port))
    return out


class PeerClosed(Exception):
    pass


class P2P:
    """A scripted peer on one TCP connection."""

    def __init__(self, port, host="127.0.0.1", timeout=5.0, sock=None):
        if sock is None:
            sock = socket.create_connection((host, port), timeout=timeout)
        self.sock = sock
        self.sock.settimeout(timeout)
        # As peerd does: without it, a message sent right after another
        # waits for the first one's ACK (Nagle; up to 40 ms on loopback).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.received = []
        self.pending = []  # read while waiting for a pong; recv() returns them first

    def send(self, msg):
        """Send a python-bitcoinlib message (its payload, framed here)."""
        self.sock.sendall(frame(msg.command, payload_of(msg)))

    def send_raw(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message before the deadline")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("no message before the deadline")
        except ConnectionResetError:
            data = b""
        if not data:
            raise PeerClosed("peerd closed the connection")
        self.buf += data

    def recv(self, timeout=5.0):
        if self.pending:
            return self.pending.pop(0)
        return self._recv_wire(timeout)

    def _recv_wire(self, timeout):
        deadline = time.monotonic() + timeout
        while len(self.buf) < 24:
            self._fill(deadline)
        magic, cmd, length, cs = struct.unpack("<4s12sI4s", self.buf[:24])
        assert magic == MAGIC, "frame magic %s, expected %s" % (magic.hex(), MAGIC.hex())
        while len(self.buf) < 24 + length:
            self._fill(deadline)
        payload = self.buf[24 : 24 + length]
        self.buf = self.buf[24 + length :]
        assert sha256d(payload)[:4] == cs, "bad checksum on %r" % cmd
        m = Msg(cmd.rstrip(b"\0").decode(), payload)
        self.received.append(m)
        return m

    def recv_until(self, command, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.0, deadline - time.monotonic()))
            if m.command == command:
                return m

    def commands_for(self, seconds):
        """Every command received within `seconds` (stops early on close)."""
        out = []
        deadline = time.monotonic() + seconds
        try:
            while True:
                out.append(self.recv(max(0.001, deadline - time.monotonic())).command)
        except (TimeoutError, PeerClosed):
            pass
        return out

    def version_msg(self, version=PROTO_VERSION, nonce=None, relay=True):
        from bitcoin.messages import msg_version

        v = msg_version(protover=version)
        v.nVersion = version
        v.nServices = 8
        v.nStartingHeight = 0
        v.fRelay = relay
        if nonce is not None:
            v.nNonce = nonce
        return v

    def handshake(self, wtxidrelay=True, sendaddrv2=True, version=PROTO_VERSION):
        """Inbound handshake as Core would do it; returns peerd's commands up to its verack."""
        from bitcoin.messages import msg_verack

        self.send(self.version_msg(version))
        if wtxidrelay:
            self.send_raw(frame("wtxidrelay"))
        if sendaddrv2:
            self.send_raw(frame("sendaddrv2"))
        self.send(msg_verack())
        seen = []
        while True:
            m = self.recv()
            seen.append(m.command)
            if m.command == "verack":
                break
        # peerd's verack answers our version: ours may still be on its way
        # (the handshake is only complete for peerd once it arrives), and
        # a test that goes on at once races it. As Core's functional tests
        # do (sync_with_ping), wait until peerd has processed everything we
        # sent. Peers older than BIP31 get no pong.
        if version > BIP31_VERSION:
            self.sync_with_ping()
        return seen

    def sync_with_ping(self, timeout=5.0):
        """Ping and wait for the pong: peerd has processed every message sent
        before. Messages read meanwhile stay for recv(). A close or timeout is
        left for the test's next read to find."""
        nonce = os.urandom(8)
        try:
            self.send_raw(frame("ping", nonce))
            deadline = time.monotonic() + timeout
            while True:
                m = self._recv_wire(max(0.0, deadline - time.monotonic()))
                if m.command == "pong" and m.payload == nonce:
                    return
                self.pending.append(m)
        except (TimeoutError, PeerClosed, OSError):
            return

    def is_closed(self, timeout=2.0):
        """True when peerd closes the connection within timeout (data is drained)."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
                self.buf = b""
        except PeerClosed:
            return True
        except (TimeoutError, OSError):
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__("%d: %s" % (code, message))
        self.code = code
        self.message = message


class Ctl:
    """A control-socket client: one request per line."""

    # Generous: make test runs two suites at once on two cores, and a call
    # that writes a large file (setban's banlist.json) can take seconds there.
    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1

    def send_line(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def read_line(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise PeerClosed("control socket closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call_raw(self, method, params=None, id_=None):
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        req = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            req["params"] = params
        self.send_line(json.dumps(req) + "\n")
        return self.read_line()

    def call(self, method, *params):
        r = self.call_raw(method, list(params))
        if "error" in r:
            raise RpcError(r["error"]["code"], r["error"]["message"])
        return r["result"]

    def closed(self, timeout=2.0):
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True  # closed with our unread bytes still queued
        except (socket.timeout, OSError):
            return False

    def close(self):
        self.sock.close()


def stop_core_and_peerd(core, peerd):
    """Stop both whatever happens (peerd by SIGTERM, Core by RPC, then signals);
    then peerd must have exited cleanly, as make_peerd requires."""
    rc = 0
    if peerd is not None:
        try:
            rc, _ = peerd.stop(timeout=15)
        except AssertionError as e:
            rc = str(e)
        peerd.kill()
    if core is not None:
        core.stop()
        core.kill()
    assert rc == 0, "peerd exited with %s:\n%s" % (rc, peerd.log() if peerd else "")


def save_failure_logs(name, core, peerd):
    """A module fixture failed: keep Core's debug.log and peerd's log in
    build/test-logs/NAME for the reader of the CI output."""
    dest = os.path.join(BUILD, "test-logs", name)
    os.makedirs(dest, exist_ok=True)
    if core is not None and os.path.exists(core.debug_log):
        shutil.copy(core.debug_log, os.path.join(dest, "core-debug.log"))
    if peerd is not None:
        shutil.copy(peerd.log_path, os.path.join(dest, "peerd.log"))


def peer_claiming(node, services, ping=False):
    """A scripted inbound peer of node (a Peerd, or anything whose peer()
    is a connected P2P) whose version claims `services`, its side of the
    handshake sent as Core sends it (version, wtxidrelay, sendaddrv2,
    verack) and the node's verack read; with ping, also until the node has
    processed all of it (sync_with_ping)."""
    from bitcoin.messages import msg_verack

    p = node.peer()
    v = p.version_msg()
    v.nServices = services
    p.send(v)
    p.send_raw(frame("wtxidrelay"))
    p.send_raw(frame("sendaddrv2"))
    p.send(msg_verack())
    p.recv_until("verack")
    if ping:
        p.sync_with_ping()
    return p


def getblocks_inv(port, locator_hex, stop_hex=None):
    """The block hashes (hex) of the inv a node on 127.0.0.1:port answers
    one getblocks with: the locator one hash, hash_stop stop_hex (None:
    zero, as far as the node goes); [] when it answers none."""
    from bitcoin.messages import msg_getblocks

    p = P2P(port)
    try:
        p.handshake()
        p.received.clear()
        p.pending.clear()
        gb = msg_getblocks()
        gb.locator.nVersion = PROTO_VERSION
        gb.locator.vHave = [bytes.fromhex(locator_hex)[::-1]]
        gb.hashstop = bytes.fromhex(stop_hex)[::-1] if stop_hex else b"\0" * 32
        p.send(gb)
        p.sync_with_ping()
        p.commands_for(0.5)
        out = []
        for m in p.received:
            if m.command == "inv":
                f = BytesIO(m.payload)
                for _ in range(read_compact(f)):
                    kind = int.from_bytes(f.read(4), "little")
                    h = f.read(32)[::-1].hex()
                    if kind == 2:  # MSG_BLOCK
                        out.append(h)
        return out
    finally:
        p.close()


def rest_get(port, path, timeout=60):
    """(status, content type, body) of a REST GET to 127.0.0.1:port (peerd's
    or bitcoind's rpcport, started with -rest)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("GET", path)
    r = c.getresponse()
    out = r.status, r.getheader("Content-Type"), r.read()
    c.close()
    return out


def netdir_of(datadir, chain):
    """Where a network's state lives in a datadir (Core's GetDataDirNet)."""
    sub = {"main": "", "test": "testnet3", "testnet4": "testnet4", "signet": "signet", "regtest": "regtest"}[chain]
    return os.path.join(datadir, sub) if sub else datadir


class Peerd:
    """One running peerd."""

    def __init__(self, tmp_path, args=(), port=None, wrapper=(), name="peerd", listen=True, chain="regtest",
                 start_timeout=None):
        self.datadir = str(tmp_path / name)
        os.makedirs(self.datadir, exist_ok=True)
        self.chain = chain
        # As bitcoind: main's state at the top of the datadir, every other
        # network's in a directory of its own (bans, control socket, .lock).
        self.netdir = netdir_of(self.datadir, chain)
        self.port = port or free_port()
        self.sock_path = os.path.join(self.netdir, "control.sock")
        self.log_path = os.path.join(self.datadir, "stderr-%s.log" % chain)
        cmd = list(wrapper) + [PEERD_BIN, "-chain=" + chain, "-datadir=" + self.datadir, "-logtimestamps=0"]
        if listen:
            cmd += ["-bind=127.0.0.1", "-port=%d" % self.port]
        elif not any(a.startswith("-bind") for a in args):
            # Never the default port on every address: loopback tests only,
            # and another node on this machine may hold it.
            cmd += ["-listen=0"]
        if chain != "regtest":
            # Seeds (doc/peers.md): a public network's peerd would ask the real
            # DNS seeds and, after 60 s, add the (routable) fixed seeds. Unless
            # a test says otherwise, every lookup goes to a closed loopback
            # port and there are no fixed seeds: nothing leaves the machine.
            if not any(a.startswith("-dnsserver") for a in args):
                cmd += ["-dnsserver=127.0.0.1:%d" % free_port()]
            if not any(a.startswith(("-fixedseeds", "-nofixedseeds")) for a in args):
                cmd += ["-fixedseeds=0"]
        # The HTTP port (JSON-RPC, and REST with -rest): the test's -rpcport=N,
        # else one chosen here; None when it cannot be told.
        self.rpcport = None
        for a in args:
            if a.startswith("-rpcport="):
                try:
                    self.rpcport = int(a.split("=", 1)[1])
                except ValueError:
                    self.rpcport = None
        if not any(a.startswith(("-rpcport", "-server", "-noserver")) for a in args):
            # An HTTP port of its own: on the network's default (18443) every
            # test's peerd but the first would run without HTTP, and a client
            # of one test could reach another test's node.
            self.rpcport = free_port()
            cmd += ["-rpcport=%d" % self.rpcport]
        cmd += list(args)
        self.cmd = cmd
        self.listen = listen
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        self._ctl = None
        try:
            wait_for(self._ready, timeout=start_timeout or (30 if wrapper else 10), what="peerd to start")
        except AssertionError:
            self.kill()
            raise AssertionError("peerd did not start:\n" + self.log())

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("peerd exited with %s:\n%s" % (self.proc.returncode, self.log()))
        if not os.path.exists(self.sock_path):
            return False
        try:
            if not self.listen:
                # The socket file appears at bind(), a moment before listen():
                # ready is when a client can connect.
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(self.sock_path)
                finally:
                    s.close()
                return True
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    @property
    def pid(self):
        return self.proc.pid

    def ctl(self):
        if self._ctl is None:
            self._ctl = Ctl(self.sock_path)
        return self._ctl

    def rpc(self, method, *params):
        return self.ctl().call(method, *params)

    def submit_from(self, core, hashes):
        """submitblock each of core's blocks `hashes`, in order; every one accepted."""
        for h in hashes:
            assert self.rpc("submitblock", core.getblock(h, 0)) is None

    def peer(self, timeout=5.0):
        return P2P(self.port, timeout=timeout)

    def connected_peer(self):
        p = self.peer()
        p.handshake()
        return p

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def log(self):
        self._log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, timeout=5.0):
        """SIGTERM and wait; returns (exit code, seconds taken)."""
        if self._ctl:
            self._ctl.close()
            self._ctl = None
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("peerd did not exit within %.1fs of SIGTERM:\n%s" % (timeout, self.log()))
        return rc, time.monotonic() - t0

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


def start_with_notify(tmp_path, sock_name, args=(), timeout=30, **kw):
    """Peerd(tmp_path, args, **kw) started with NOTIFY_SOCKET bound to
    tmp_path/sock_name (the environment put back after the start), as
    systemd's: (peerd, socket), reads on it timing out after `timeout`
    seconds. The caller kills the peerd and closes the socket."""
    path = str(tmp_path / sock_name)
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(timeout)
    old = os.environ.get("NOTIFY_SOCKET")
    os.environ["NOTIFY_SOCKET"] = path
    try:
        return Peerd(tmp_path, args=list(args), **kw), ns
    finally:
        if old is None:
            del os.environ["NOTIFY_SOCKET"]
        else:
            os.environ["NOTIFY_SOCKET"] = old


@pytest.fixture
def make_peerd(tmp_path):
    """Factory: make_peerd(*args, **kw) starts a peerd; every one is stopped at teardown."""
    started = []

    def make(*args, **kw):
        kw.setdefault("name", "peerd%d" % len(started))
        d = Peerd(tmp_path, args=args, **kw)
        started.append(d)
        return d

    yield make
    for d in started:
        if d.proc.poll() is None:
            rc, _ = d.stop(timeout=10)
            assert rc == 0, "peerd exited with %d:\n%s" % (rc, d.log())


@pytest.fixture
def peerd(make_peerd):
    """A peerd on regtest with a short peertimeout."""
    return make_peerd("-peertimeout=3")


# ---- Bitcoin Core as the peer (tests/integration/bitcoind.py) -------------

def pytest_configure(config):
    config.addinivalue_line("markers", "interop: runs peerd against a real Bitcoin Core (bitcoind)")
    # Long runs (test_chain_connect's 2,000-block crash run) skip unless
    # PEERD_SOAK=1: `make soak`.
    config.addinivalue_line("markers", "soak: a long run, only with PEERD_SOAK=1 (make soak)")


def pytest_collection_modifyitems(config, items):
    # A test that starts a bitcoind is an interop test whether or not its
    # file says so: `make interop` (-m interop) selects every one of them.
    for item in items:
        if "make_bitcoind" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.interop)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Keep each phase's report on the item, so fixtures know at teardown
    # whether the test failed (and keep bitcoind's logs then).
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def _test_failed(node):
    return any(getattr(getattr(node, "rep_" + w, None), "failed", False) for w in ("setup", "call"))


@pytest.fixture
def make_bitcoind(request, tmp_path):
    """Factory: make_bitcoind(count=1, args=(), small=False) starts count regtest
    bitcoinds at once (see bitcoind.Bitcoind) and returns them when all answer
    RPC. Skips the test when no bitcoind is found. Every node is stopped at
    teardown, failure or not; when the test failed, each node's debug.log is
    copied to $BUILD/test-logs/bitcoind/<test>/ and its tail printed."""
    import threading

    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    started = []

    def make(count=1, args=(), small=False, chain="regtest"):
        new = []
        for _ in range(count):
            n = bitcoind.Bitcoind(binary, tmp_path / "core", name="core%d" % len(started), args=args, small=small,
                                  chain=chain)
            started.append(n)
            new.append(n)
        for n in new:
            n.wait_ready()
        return new

    yield make
    # Stop them all at once: each takes about a second.
    codes = {}
    threads = [threading.Thread(target=lambda n=n: codes.__setitem__(n.name, n.stop())) for n in started]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for n in started:
        n.kill()  # only if stop() itself got stuck
    dest = os.path.join(BUILD, "test-logs", "bitcoind", request.node.name.replace("/", "_"))
    shutil.rmtree(dest, ignore_errors=True)  # an earlier failure's logs
    if _test_failed(request.node) and started:
        os.makedirs(dest, exist_ok=True)
        for n in started:
            if os.path.exists(n.debug_log):
                shutil.copy(n.debug_log, os.path.join(dest, n.name + "-debug.log"))
            print("---- %s (exit %s) debug.log tail; full log in %s\n%s"
                  % (n.name, codes.get(n.name), dest, n.tail(30)))


@pytest.fixture
def bitcoind_node(make_bitcoind):
    """One regtest bitcoind with Core's defaults (v2transport on) and a wallet-capable setup."""
    return make_bitcoind(1)[0]
