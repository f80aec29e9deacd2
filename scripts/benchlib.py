"""What the scripts/bench-*.py scripts share: where the binaries are, starting
bitcoind and peerd on loopback with free ports, waiting for them, calling
them (HTTP JSON-RPC with user and password bench:bench, or peerd's control
socket), stopping them, reading a process's memory and CPU time, client
processes and their percentiles, and regtest block files (the tip of one,
empty blocks to append).

A script imports it as `import benchlib` (a script's own folder is first on
sys.path). Core nodes that need cookies, waits and the integration tests'
options come from tests/integration/bitcoind.py, re-exported here (Bitcoind,
find_bitcoind, free_port, wait_until) so a script needs one import.
Everything listens on 127.0.0.1 only; nothing here dials out.
"""
import base64
import hashlib
import http.client
import json
import multiprocessing
import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from bitcoind import Bitcoind, find_bitcoind, free_port, wait_until  # noqa: E402,F401

# $BUILD (default build) is relative to the checkout, as the Makefile and
# conftest.py read it, so a script started from elsewhere finds the same build.
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
BENCH_DATA = os.environ.get("BENCH_DATA", os.path.join(BUILD, "bench"))
BITCOIND = os.environ.get("BITCOIND") or os.path.join(ROOT, "..", "shared", "bin", "bitcoind")
# Every HTTP JSON-RPC node a bench starts gets this user and password.
AUTH = "Basic " + base64.b64encode(b"bench:bench").decode()
# Core's regtest defaults turn on consistency checks mainnet never runs
# (-checkblockindex walks the whole block index after every block): off,
# so Core runs as it does on mainnet. Everything else is Core's default.
CORE_AS_MAINNET = ["-checkblockindex=0", "-checkmempool=0"]
REGTEST_MAGIC = bytes.fromhex("fabfb5da")
REGTEST_GENESIS_TIME = 1296688602


def tool(name):
    """A binary of the build: $NAME_BIN (peerd: $PEERD_BIN), else BUILD/bin/NAME."""
    return os.environ.get(name.upper() + "_BIN") or os.path.join(BUILD, "bin", name)


PEERD = tool("peerd")
PEERCTL = tool("peerctl")
PEERTOOL = tool("peertool")


# ---- HTTP JSON-RPC (Core and peerd with -rpcport, bench:bench) ------------

def post(port, body, timeout=120):
    """POST body (a request or a batch) to 127.0.0.1:port; the parsed reply."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("POST", "/", json.dumps(body), {"Authorization": AUTH, "Content-Type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read())
    c.close()
    return out


def call(port, method, params=(), timeout=120):
    """method's result, or RuntimeError with the node's error object."""
    out = post(port, {"method": method, "params": list(params), "id": 1}, timeout)
    if out.get("error"):
        raise RuntimeError(out["error"])
    return out["result"]


def wait_rpc(port, proc, what):
    """getblockcount's first answer within 60 s; exits the script if proc
    exited first or never answered."""
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit("%s exited with %s" % (what, proc.returncode))
        try:
            return call(port, "getblockcount")
        except (OSError, RuntimeError, ValueError):
            time.sleep(0.1)
    sys.exit("%s did not answer" % what)


# Core and peerd as HTTP servers: regtest, no seeds; -listen=0 unless the
# caller asks for a listening socket (and gives its -bind and -port).
CORE_HTTP_ARGS = ["-regtest", "-dnsseed=0", "-fixedseeds=0", "-natpmp=0", "-discover=0",
                  "-server=1", "-daemon=0"]
PEERD_HTTP_ARGS = ["-chain=regtest"]


def start_http(binary, datadir, port, core=False, extra=(), log=None, listen=False):
    """Start binary (bitcoind if core, else a peerd) on datadir (made here)
    answering HTTP JSON-RPC on 127.0.0.1:port as bench:bench; extra are
    more options; listen leaves out -listen=0. Its console goes to the
    file object log, else nowhere.
    The caller waits (wait_rpc) and stops it (stop_all)."""
    os.makedirs(datadir, exist_ok=True)
    args = (CORE_HTTP_ARGS if core else PEERD_HTTP_ARGS) + ([] if listen else ["-listen=0"])
    out = log if log is not None else subprocess.DEVNULL
    return subprocess.Popen(
        [binary, "-datadir=" + datadir, "-rpcport=%d" % port, "-rpcuser=bench", "-rpcpassword=bench",
         "-printtoconsole=%d" % (log is not None), *args, *extra],
        stdout=out, stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        stdin=subprocess.DEVNULL)


def stop_all(procs, timeout=30):
    """SIGTERM to every process, then wait for each (SIGKILL after timeout)."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()


# ---- peerd's control socket -----------------------------------------------

def ctl_call(sock, method, timeout=5, failed=None):
    """method's result over the control socket sock, or failed if the
    socket does not answer (not there yet, refused, timed out) or errs."""
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"%s"}\n' % method.encode())
        buf = b""
        while not buf.endswith(b"\n"):
            d = s.recv(4096)
            if not d:
                break
            buf += d
        s.close()
        return json.loads(buf)["result"]
    except (OSError, ValueError, KeyError):
        return failed


class _Polled:
    """What a bench polls a node for while it syncs: its height (-1 while
    it does not answer) and uptime (answered without the chain)."""

    def blockcount(self):
        r = self.call("getblockcount")
        return -1 if r is None else r

    def uptime(self):
        return self.call("uptime")

    def stop(self):
        """Stops the node (its own way, within stop_timeout s); its exit code."""
        return self._stop(self.stop_timeout)


class PeerdProcess(_Polled):
    """peerd on workdir/peerd (kept across restarts) with its console in
    log_path, answering on its control socket; args are its options after
    -chain=regtest -listen=0. $PEERD_EXTRA adds more; with wrapper,
    $PEERD_WRAPPER (e.g. a profiler) runs it. call(method) is the result,
    or failed if the socket did not answer within call_timeout s."""

    def __init__(self, workdir, args, log_mode="w", wrapper=False, call_timeout=5, failed=None,
                 stop_timeout=120):
        self.datadir = os.path.join(workdir, "peerd")
        os.makedirs(self.datadir, exist_ok=True)
        self.sock = os.path.join(self.datadir, "regtest", "control.sock")
        self.chainstate = os.path.join(self.datadir, "regtest", "chainstate")
        self.log_path = os.path.join(workdir, "peerd.log")
        self.log = open(self.log_path, log_mode)
        self.call_timeout, self.failed, self.stop_timeout = call_timeout, failed, stop_timeout
        wrap = os.environ.get("PEERD_WRAPPER", "").split() if wrapper else []
        self.proc = subprocess.Popen(
            wrap + [PEERD, "-chain=regtest", "-datadir=" + self.datadir, "-listen=0",
                    "-printtoconsole=1", *args] + os.environ.get("PEERD_EXTRA", "").split(),
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid

    def call(self, method):
        return ctl_call(self.sock, method, self.call_timeout, self.failed)

    def _stop(self, timeout):
        self.proc.terminate()
        rc = self.proc.wait(timeout=timeout)
        self.log.close()
        return rc


class CoreProcess(_Polled):
    """A Bitcoind (tests/integration/bitcoind.py) with the calls a bench polls:
    call(method) is its result, or failed if the node did not answer."""

    def __init__(self, workdir, name, args, start_timeout=120, call_timeout=5, failed=-1, stop_timeout=120):
        self.node = Bitcoind(find_bitcoind()[0], workdir, name=name, args=args,
                             start_timeout=start_timeout)
        self.chainstate = os.path.join(self.node.datadir, "regtest", "chainstate")
        self.log_path = self.node.debug_log
        self.pid = self.node.pid
        self.proc = self.node.proc
        self.call_timeout, self.failed, self.stop_timeout = call_timeout, failed, stop_timeout

    def call(self, method):
        try:
            return self.node.rpc(method, timeout=self.call_timeout)
        except Exception:
            return self.failed

    def _stop(self, timeout):
        return self.node.stop(timeout=timeout)


# ---- peerctl, and a chain loaded into both nodes --------------------------

def peerctl(datadir, *args):
    """peerctl -regtest on datadir; the CompletedProcess (text)."""
    return subprocess.run([PEERCTL, "-regtest", "-datadir=" + datadir, *args], capture_output=True, text=True)


def start_peerd_ctl(datadir, *extra):
    """peerd -regtest on datadir, not listening, dialling nobody, silent;
    stop it with stop_peerd_ctl."""
    return subprocess.Popen([PEERD, "-regtest", "-datadir=" + datadir, "-listen=0", "-connect=0", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_peerd_ctl(datadir, proc):
    peerctl(datadir, "stop")
    proc.wait(timeout=60)


def load_chain(binary, tmp, chain, core_args=()):
    """chain (a block file, genesis first) into tmp/peerd (peertool
    connect-blocks) and into Core's tmp/core (-loadblock, then stopped);
    the chain's height."""
    r = subprocess.run([PEERTOOL, "connect-blocks", os.path.join(tmp, "peerd"), chain],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    height = json.loads(r.stdout)["height"]
    n = Bitcoind(binary, tmp, name="core", args=("-loadblock=" + chain, "-connect=0", *core_args))
    n.wait_ready(300)
    wait_until(lambda: n.getblockcount() == height, 600, "Core's import")
    n.stop()
    return height


def core_until(binary, directory, args, done, what, interval):
    """Core on directory/core with args (and -connect=0), timed from its
    start until done(node) holds (polled every interval s, at most 600 s);
    (the seconds, the node, stopped)."""
    t0 = time.monotonic()
    n = Bitcoind(binary, directory, name="core", args=(*args, "-connect=0"))
    try:
        n.wait_ready(300)
        wait_until(lambda: done(n), 600, what, interval=interval)
        return time.monotonic() - t0, n
    finally:
        n.stop()


# ---- a process's memory and CPU, a directory's bytes ----------------------

def status_kb(pid, key):
    """A kB field of /proc/PID/status (VmRSS, VmHWM, RssAnon, ...); 0 if absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User and system CPU time of the process so far (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def disk_bytes(path):
    """(sum of file sizes, bytes of blocks allocated) under path; a file
    that vanished while walked counts for nothing."""
    size = alloc = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(d, f))
            except OSError:
                continue
            size += st.st_size
            alloc += st.st_blocks * 512
    return size, alloc


# ---- load generators ------------------------------------------------------

def rate_p50_p99(lat, seconds):
    """(requests/s, p50 and p99 in microseconds) of latencies lat (seconds)
    gathered over seconds."""
    lat = sorted(lat)
    pct = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1e6
    return len(lat) / seconds, pct(0.50), pct(0.99)


def run_clients(target, args, clients, seconds):
    """clients processes of target(*args, seconds, queue), each putting its
    list of latencies on the queue; rate_p50_p99 of them all."""
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=target, args=(*args, seconds, q)) for _ in range(clients)]
    for p in ps:
        p.start()
    lat = []
    for _ in ps:
        lat += q.get()
    for p in ps:
        p.join()
    return rate_p50_p99(lat, seconds)


# ---- regtest blocks -------------------------------------------------------

def compact(n):
    """A CompactSize below 65,536."""
    return bytes([n]) if n < 0xfd else b"\xfd" + n.to_bytes(2, "little")


def big_tx(prev_txid, outputs, script_len=9000):
    """Spends output 0 of prev_txid (an OP_TRUE coinbase: empty scriptSig) into
    `outputs` zero-value outputs of OP_RETURN and script_len zero bytes."""
    script = b"\x6a" + bytes(script_len)
    tx = (2).to_bytes(4, "little") + b"\x01" + bytes.fromhex(prev_txid)[::-1] + bytes(4)
    tx += b"\x00" + b"\xff\xff\xff\xff" + compact(outputs)
    for _ in range(outputs):
        tx += bytes(8) + compact(len(script)) + script
    return (tx + bytes(4)).hex()


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


def script_num_push(n):
    """Core's CScript() << n for a block height (BIP34)."""
    if n <= 16:
        return bytes([0x50 + n]) if n else b"\x00"
    v = bytearray()
    while n:
        v.append(n & 0xFF)
        n >>= 8
    if v[-1] & 0x80:  # the top bit is the sign: a zero byte keeps it positive
        v.append(0)
    return bytes([len(v)]) + bytes(v)


def empty_block(prev, height):
    """A regtest block of one coinbase (BIP34 height, the subsidy to OP_TRUE),
    dated as chaingen dates its blocks; proof of work found here (two tries)."""
    subsidy = (50 * 100000000) >> (height // 150) if height // 150 < 64 else 0
    sig = script_num_push(height) + b"\x00"
    cb = (struct.pack("<i", 1) + b"\x01" + bytes(32) + b"\xff" * 4 + bytes([len(sig)]) + sig
          + b"\xff" * 4 + b"\x01" + struct.pack("<q", subsidy) + b"\x01\x51" + bytes(4))
    root = sha256d(cb)
    t = REGTEST_GENESIS_TIME + 600 * height
    for nonce in range(1 << 20):
        hdr = struct.pack("<i32s32sIII", 0x20000000, prev, root, t, 0x207FFFFF, nonce)
        h = sha256d(hdr)
        if int.from_bytes(h, "little") < (0x7FFFFF << 232):
            return hdr + b"\x01" + cb, h
    raise SystemExit("no nonce")


def last_header(data):
    """The 80-byte header of the last block in a block file's bytes
    (records: magic, length, block)."""
    off, last = 0, None
    while off < len(data):
        size = struct.unpack_from("<I", data, off + 4)[0]
        last = data[off + 8:off + 8 + 80]
        off += 8 + size
    return last


def empty_records(tip, first, last):
    """Block-file records of empty blocks at heights first..last on tip (the
    internal byte order hash); (the records' bytes, the new tip)."""
    out = bytearray()
    for h in range(first, last + 1):
        raw, tip = empty_block(tip, h)
        out += REGTEST_MAGIC + struct.pack("<I", len(raw)) + raw
    return bytes(out), tip
