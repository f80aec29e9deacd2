"""Bitcoin Core regtest nodes for the interop tests.

Where bitcoind comes from: $BITCOIND, else ../shared/bin/bitcoind beside
the checkout, else `bitcoind` on PATH (find_bitcoind). Tests that need one
are skipped when none is found or it does not run.

Each node runs on 127.0.0.1 with free ports, in its own directory under the
test's temporary directory, in the foreground (-daemon=0) as a child of the
test, so it is stopped by PID: the `stop` RPC, then SIGTERM, then SIGKILL.
JSON-RPC goes through the cookie file with the standard library only.
Every wait has a deadline.
"""
import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_REASON = "no bitcoind (set BITCOIND=/path)"
# The four address types of Core's wallet, as getnewaddress names them.
ADDRESS_TYPES = ("legacy", "p2sh-segwit", "bech32", "bech32m")
# Options every node gets: loopback only, no outside world, foreground.
BASE_ARGS = (
    "-regtest",
    "-listen=1",
    "-bind=127.0.0.1",
    "-rpcbind=127.0.0.1",
    "-rpcallowip=127.0.0.1",
    "-dnsseed=0",
    "-fixedseeds=0",
    "-natpmp=0",
    "-discover=0",
    "-daemon=0",
    "-printtoconsole=0",
    "-server=1",
    "-shrinkdebugfile=0",
    # Wallet sends on regtest have no fee estimates to go by.
    "-fallbackfee=0.0002",
)
# For many nodes at once: little memory, few threads.
SMALL_ARGS = ("-dbcache=4", "-maxmempool=5", "-par=1", "-rpcthreads=2", "-disablewallet=1",
              # Core keeps 11 of these for its own outbound connections: 5 inbound left.
              "-maxconnections=16")

_ports_given = set()


def _default_path(name):
    """$NAME (upper case), else ../shared/bin/<name> beside the checkout, else PATH."""
    env = os.environ.get(name.upper().replace("-", "_"))
    if env:
        return env
    shared = os.path.join(os.path.dirname(ROOT), "shared", "bin", name)
    if os.access(shared, os.X_OK):
        return shared
    return shutil.which(name)


_found = None


def find_bitcoind():
    """(path, None) for a bitcoind that runs, else (None, reason to skip)."""
    global _found
    if _found is not None:
        return _found
    path = _default_path("bitcoind")
    if not path or not os.access(path, os.X_OK):
        _found = (None, SKIP_REASON)
        return _found
    try:
        # A datadir of its own: this bitcoind writes settings.json into its
        # datadir even for -version, and the plain and ASan passes probe at
        # once (two probes renaming ~/.bitcoin/settings.json.tmp: one failed,
        # and its pass skipped every Core test).
        with tempfile.TemporaryDirectory(prefix="bitcoind-probe-") as tmp:
            r = subprocess.run([path, "-datadir=" + tmp, "-version"], capture_output=True,
                               timeout=20)
        ok = r.returncode == 0
        why = (r.stderr or r.stdout).decode(errors="replace").strip().splitlines()[-1:] if not ok else []
    except (OSError, subprocess.TimeoutExpired) as e:
        ok, why = False, [str(e)]
    if not ok:
        _found = (None, "bitcoind at %s does not run (%s); `make deps` installs its libraries"
                  % (path, "; ".join(why)))
    else:
        _found = (path, None)
    return _found


def find_bitcoin_cli():
    """bitcoin-cli, found like bitcoind ($BITCOIN_CLI, ../shared/bin, PATH); None if absent.
    The fixtures do not need it (RPC goes over HTTP); it is for people reproducing a test."""
    return _default_path("bitcoin-cli")


# Its own generator: a test that seeds `random` for a repeatable run keeps its sequence.
_port_rng = random.Random()


def _port_range():
    """$PEERD_TEST_PORTS ("LO-HI"), or None for the kernel's choice. make test
    runs two pytest processes at once (plain and ASan binaries), each in its
    own range below the kernel's ephemeral ports, so a port one process
    picked and has not yet handed to its daemon is never picked by the other."""
    spec = os.environ.get("PEERD_TEST_PORTS")
    if not spec:
        return None
    lo, hi = (int(x) for x in spec.split("-"))
    if not 1024 <= lo < hi <= 65535:
        raise RuntimeError("PEERD_TEST_PORTS=%s: want LO-HI within 1024-65535" % spec)
    return lo, hi


def _bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    """A loopback port nobody listens on, never one already handed out in this
    process (so two daemons of one test are never given the same port)."""
    rng = _port_range()
    if rng:
        lo, hi = rng
        start = _port_rng.randrange(lo, hi + 1)
        for i in range(hi - lo + 1):
            port = lo + (start - lo + i) % (hi - lo + 1)
            if port not in _ports_given and _bindable(port):
                _ports_given.add(port)
                return port
        raise RuntimeError("no free port in PEERD_TEST_PORTS=%d-%d" % rng)
    for _ in range(100):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in _ports_given:
            _ports_given.add(port)
            return port
    raise RuntimeError("no free port")


def wait_until(pred, timeout=5.0, what="condition", interval=0.02):
    """pred()'s first truthy value, or AssertionError after timeout seconds.
    (conftest.py's wait_for, the name the peerd tests use.)"""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


class RpcError(Exception):
    def __init__(self, method, code, message):
        super().__init__("%s: %d: %s" % (method, code, message))
        self.code = code
        self.message = message


def _die_with_parent():
    """In the child before exec: SIGTERM when the test process dies, so no
    bitcoind outlives a killed pytest (Linux's PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _json_default(o):
    if isinstance(o, Decimal):
        return str(o)  # Core takes amounts as numbers or strings
    raise TypeError(type(o))


class Bitcoind:
    """One regtest bitcoind, a child process of the test."""

    def __init__(self, binary, directory, name="node0", args=(), small=False, start_timeout=60,
                 chain="regtest"):
        self.name = name
        self.binary = binary
        self.datadir = os.path.join(str(directory), name)
        os.makedirs(self.datadir, exist_ok=True)
        self.port = free_port()
        self.rpcport = free_port()
        # Another test network (chain="signet": no seeds, as BASE_ARGS) in its own subdirectory.
        self.cookie_path = os.path.join(self.datadir, chain, ".cookie")
        self.debug_log = os.path.join(self.datadir, chain, "debug.log")
        self.stdout_path = os.path.join(self.datadir, "stdout.log")
        base = [a if a != "-regtest" else "-chain=" + chain for a in BASE_ARGS]
        self.cmd = [binary, "-datadir=" + self.datadir, *base, "-port=%d" % self.port,
                    "-rpcport=%d" % self.rpcport, *(SMALL_ARGS if small else ()), *args]
        self._auth = None
        self._out = open(self.stdout_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self._out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.start_timeout = start_timeout

    # ---- lifecycle ------------------------------------------------------
    @property
    def pid(self):
        return self.proc.pid

    def running(self):
        return self.proc.poll() is None

    def _rpc_ready(self):
        if not self.running():
            raise AssertionError("%s exited with %s before RPC was ready:\n%s"
                                 % (self.name, self.proc.returncode, self.tail()))
        if not os.path.exists(self.cookie_path):
            return False
        self._auth = None  # a restarted node writes a new cookie
        try:
            self.rpc("getblockcount", timeout=5)
            return True
        except RpcError as e:
            if e.code == -28:  # warming up
                return False
            raise
        except (OSError, http.client.HTTPException):
            return False

    def wait_ready(self, timeout=None):
        wait_until(self._rpc_ready, timeout or self.start_timeout, "%s's RPC" % self.name)
        return self

    def stop(self, timeout=20):
        """`stop` RPC, then SIGTERM, then SIGKILL; returns the exit code."""
        if self.running():
            try:
                self.rpc("stop", timeout=5)
            except Exception:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        self._out.close()
        return self.proc.returncode

    def kill(self):
        if self.running():
            self.proc.kill()
            self.proc.wait(timeout=10)

    def tail(self, lines=40):
        """The last lines of debug.log (or of stdout if there is no log yet)."""
        for path in (self.debug_log, self.stdout_path):
            try:
                with open(path, errors="replace") as f:
                    return "".join(f.readlines()[-lines:])
            except OSError:
                continue
        return ""

    # ---- JSON-RPC -------------------------------------------------------
    def _authorization(self):
        if self._auth is None:
            with open(self.cookie_path) as f:
                cookie = f.read().strip()
            self._auth = "Basic " + base64.b64encode(cookie.encode()).decode()
        return self._auth

    def rpc(self, method, *params, wallet=None, timeout=60):
        """Call method; the result (amounts as Decimal) or RpcError."""
        body = json.dumps({"jsonrpc": "1.0", "id": method, "method": method, "params": list(params)},
                          default=_json_default)
        path = "/wallet/" + wallet if wallet is not None else "/"
        conn = http.client.HTTPConnection("127.0.0.1", self.rpcport, timeout=timeout)
        try:
            conn.request("POST", path, body, {"Authorization": self._authorization(),
                                              "Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if resp.status == 401:
            raise RpcError(method, -401, "unauthorized (stale cookie?)")
        reply = json.loads(data, parse_float=Decimal)
        if reply.get("error"):
            raise RpcError(method, reply["error"]["code"], reply["error"]["message"])
        return reply["result"]

    def __getattr__(self, method):
        """node.getblockcount() == node.rpc("getblockcount")."""
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *params, **kw: self.rpc(method, *params, **kw)

    # ---- waits ---------------------------------------------------------
    def wait_for_peer(self, pred, timeout=10, what="a peer"):
        """The first getpeerinfo entry for which pred(entry) is true."""
        return wait_until(lambda: next((p for p in self.rpc("getpeerinfo") if pred(p)), None),
                          timeout, "%s on %s" % (what, self.name))

    def wait_for_blockcount(self, n, timeout=30):
        return wait_until(lambda: self.rpc("getblockcount") >= n, timeout,
                          "%s at height %d" % (self.name, n))

    # ---- peers ---------------------------------------------------------
    def connect_to(self, host_port, v2transport=None):
        """addnode HOST:PORT onetry (v2transport: the node's default unless given)."""
        if v2transport is None:
            return self.rpc("addnode", host_port, "onetry")
        return self.rpc("addnode", host_port, "onetry", v2transport)

    def connect_nodes(self, other, timeout=10):
        """Connect to another Bitcoind and wait until both see the handshake done."""
        self.connect_to("127.0.0.1:%d" % other.port)
        self.wait_for_peer(lambda p: p["addr"] == "127.0.0.1:%d" % other.port and p["version"] > 0,
                           timeout, "connection to %s" % other.name)
        other.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, timeout,
                            "connection from %s" % self.name)

    def disconnect(self, address=None, nodeid=None, timeout=10):
        """disconnectnode by address or id, and wait until it is gone."""
        if nodeid is not None:
            self.rpc("disconnectnode", "", nodeid)
            gone = lambda: all(p["id"] != nodeid for p in self.rpc("getpeerinfo"))
        else:
            self.rpc("disconnectnode", address)
            gone = lambda: all(p["addr"] != address for p in self.rpc("getpeerinfo"))
        wait_until(gone, timeout, "disconnection on %s" % self.name)

    # ---- chain and wallet ----------------------------------------------
    def mine(self, n, address=None):
        """generatetoaddress n blocks (to a fresh wallet address unless given); their hashes."""
        if address is None:
            address = self.rpc("getnewaddress", wallet=self.wallet)
        return self.rpc("generatetoaddress", n, address, timeout=120)

    def mine_op_true(self, n, timeout=120):
        """generatetodescriptor n blocks paying to OP_TRUE (raw(51)): no wallet
        needed, and their coinbases spendable with an empty scriptSig; their hashes."""
        desc = self.rpc("getdescriptorinfo", "raw(51)")["descriptor"]
        return self.rpc("generatetodescriptor", n, desc, timeout=timeout)

    wallet = None

    def create_wallet(self, name="w"):
        """createwallet (descriptor wallet); later wallet calls use it."""
        self.rpc("createwallet", name)
        self.wallet = name
        return name

    def new_address(self, address_type):
        """A fresh wallet address of one of ADDRESS_TYPES."""
        return self.rpc("getnewaddress", "", address_type, wallet=self.wallet)

    def fund_wallet(self, per_type=5, mature=True):
        """Mine per_type coinbases to an address of each type, then 100 blocks so
        they mature. Returns {address type: [coinbase address, ...]}."""
        addrs = {}
        for t in ADDRESS_TYPES:
            a = self.new_address(t)
            addrs[t] = a
            self.mine(per_type, a)
        if mature:
            self.mine(100, self.new_address("bech32"))
        return addrs

    def spendable(self, address):
        """Confirmed, spendable outputs of the wallet paying address."""
        return [u for u in self.rpc("listunspent", 1, 9999999, [address], wallet=self.wallet)
                if u["spendable"]]

    def send_typed(self, utxo, dest_type, amount=Decimal("1"), fee=Decimal("0.0001"),
                   change_type=None):
        """Spend one given wallet output (so the input's script type is known) to a
        new address of dest_type with change back to the wallet; broadcast it.
        Returns (txid, raw hex)."""
        dest = self.new_address(dest_type)
        change = self.rpc("getrawchangeaddress", change_type or dest_type, wallet=self.wallet)
        outs = [{dest: amount}, {change: utxo["amount"] - amount - fee}]
        raw = self.rpc("createrawtransaction", [{"txid": utxo["txid"], "vout": utxo["vout"]}], outs)
        signed = self.rpc("signrawtransactionwithwallet", raw, wallet=self.wallet)
        assert signed["complete"], signed
        txid = self.rpc("sendrawtransaction", signed["hex"])
        return txid, signed["hex"]

    def send_to(self, address, amount):
        """sendtoaddress from the wallet; the txid."""
        return self.rpc("sendtoaddress", address, amount, wallet=self.wallet)

