#!/usr/bin/python3
"""REST block/<hash>.bin of a 1 MB block, peerd against bitcoind, in one sitting.

    scripts/bench-rest.py [--seconds S] [--clients 1,4] [--format bin] [--base PATH]

Starts a regtest bitcoind (../shared/bin or $BITCOIND) and peerd (build/bin
or $PEERD_BIN), both with -rest, on loopback with free ports; on bitcoind
mines 101 blocks and then one of about 1 MB (a transaction spending the
first coinbase into outputs with 9,000-byte scripts, through generateblock,
which checks consensus only), gives every block to peerd, then for each
client count runs that many processes, each on one HTTP/1.1 keep-alive
connection GETting /rest/block/<hash>.<format> back to back for S seconds
(default 5) from one node, then the other (peerd, bitcoind, peerd,
bitcoind: the better of two runs each). Prints requests/s, p50/p99 in
microseconds and peerd/Core, then each node's peak and idle RSS. Every
answer is checked to be the same bytes from both. --base PATH adds a second peerd binary (an older build) to the
rotation, for an A/B of two builds in the same sitting. Loopback only;
every process started is stopped at the end.
"""
import argparse
import base64
import hashlib
import http.client
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BITCOIND = os.environ.get("BITCOIND") or os.path.join(ROOT, "..", "shared", "bin", "bitcoind")
PEERD = os.environ.get("PEERD_BIN") or os.path.join(ROOT, "build", "bin", "peerd")
AUTH = "Basic " + base64.b64encode(b"bench:bench").decode()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def call(port, method, params=()):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/", json.dumps({"method": method, "params": list(params), "id": 1}),
              {"Authorization": AUTH, "Content-Type": "application/json"})
    r = c.getresponse()
    body = json.loads(r.read())
    c.close()
    if body.get("error"):
        raise RuntimeError(body["error"])
    return body["result"]


def wait_rpc(port, proc, what):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit("%s exited with %s" % (what, proc.returncode))
        try:
            return call(port, "getblockcount")
        except (OSError, RuntimeError, ValueError):
            time.sleep(0.1)
    sys.exit("%s did not answer" % what)


def compact(n):
    if n < 0xfd:
        return bytes([n])
    return b"\xfd" + n.to_bytes(2, "little")


def big_tx(prev_txid, outputs=100, script_len=9000):
    """Spends output 0 of prev_txid (an OP_TRUE coinbase: empty scriptSig) into
    `outputs` zero-value outputs of OP_RETURN and script_len zero bytes."""
    script = b"\x6a" + bytes(script_len)
    tx = (2).to_bytes(4, "little") + b"\x01" + bytes.fromhex(prev_txid)[::-1] + bytes(4)
    tx += b"\x00" + b"\xff\xff\xff\xff" + compact(outputs)
    for _ in range(outputs):
        tx += bytes(8) + compact(len(script)) + script
    return (tx + bytes(4)).hex()


def client(port, path, seconds, out):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    lat = []
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            raise RuntimeError("HTTP %d" % r.status)
        lat.append(time.perf_counter() - t0)
    c.close()
    out.put(lat)


def run(port, path, clients, seconds):
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=client, args=(port, path, seconds, q)) for _ in range(clients)]
    for p in ps:
        p.start()
    lat = []
    for _ in ps:
        lat += q.get()
    for p in ps:
        p.join()
    lat.sort()
    pct = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1e6
    return len(lat) / seconds, pct(0.50), pct(0.99)


def vm(pid, key):
    """/proc/PID/status's key (VmRSS, VmHWM) in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def fetch(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,4")
    ap.add_argument("--format", default="bin", choices=("bin", "hex", "json"))
    ap.add_argument("--base", help="a second peerd binary (an older build) measured in the same rotation: "
                    "an A/B of two builds in one sitting, printed as base req/s and peerd/base")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-rest-")
    procs = []
    try:
        cport, pport = free_port(), free_port()
        os.makedirs(os.path.join(tmp, "core"))
        os.makedirs(os.path.join(tmp, "peerd"))
        procs.append(subprocess.Popen(
            [BITCOIND, "-regtest", "-datadir=" + os.path.join(tmp, "core"), "-listen=0", "-rpcport=%d" % cport,
             "-rpcuser=bench", "-rpcpassword=bench", "-dnsseed=0", "-fixedseeds=0", "-natpmp=0", "-discover=0",
             "-printtoconsole=0", "-server=1", "-rest", "-daemon=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(
            [PEERD, "-chain=regtest", "-datadir=" + os.path.join(tmp, "peerd"), "-listen=0", "-rpcport=%d" % pport,
             "-rpcuser=bench", "-rpcpassword=bench", "-printtoconsole=0", "-rest"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        bport = None
        if a.base:
            bport = free_port()
            os.makedirs(os.path.join(tmp, "base"))
            procs.append(subprocess.Popen(
                [a.base, "-chain=regtest", "-datadir=" + os.path.join(tmp, "base"), "-listen=0",
                 "-rpcport=%d" % bport, "-rpcuser=bench", "-rpcpassword=bench", "-printtoconsole=0",
                 "-rest"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_rpc(bport, procs[-1], "base peerd")
        wait_rpc(cport, procs[0], "bitcoind")
        wait_rpc(pport, procs[1], "peerd")
        desc = call(cport, "getdescriptorinfo", ["raw(51)"])["descriptor"]
        hashes = call(cport, "generatetodescriptor", [101, desc])
        first_cb = call(cport, "getblock", [hashes[0]])["tx"][0]
        h = call(cport, "generateblock", [desc, [big_tx(first_cb)]])["hash"]
        for b in hashes + [h]:
            raw = call(cport, "getblock", [b, 0])
            for port in [pport] + ([bport] if bport else []):
                if call(port, "submitblock", [raw]) is not None:
                    sys.exit("peerd refused block %s" % b)
        path = "/rest/block/%s.%s" % (h, a.format)
        ours, theirs = fetch(pport, path), fetch(cport, path)
        if a.format != "json" and ours != theirs:
            sys.exit("peerd and bitcoind answer %s differently" % path)
        size = len(theirs[1])
        print("block %s: %d bytes in .%s (sha256 %s)" % (h, size, a.format, hashlib.sha256(theirs[1]).hexdigest()[:16]))
        print("%-7s %12s %9s %9s %12s %9s %9s %8s" % ("clients", "peerd req/s", "p50 us", "p99 us",
                                                   "core req/s", "p50 us", "p99 us", "peerd/core"))
        for n in [int(x) for x in a.clients.split(",")]:
            best = {}
            for _ in range(2):
                for name, port in (("peerd", pport), ("core", cport)) + ((("base", bport),) if bport else ()):
                    r = run(port, path, n, a.seconds)
                    if name not in best or r[0] > best[name][0]:
                        best[name] = r
            p, c = best["peerd"], best["core"]
            print("%-7d %12.0f %9.0f %9.0f %12.0f %9.0f %9.0f %8.2fx" % (n, *p, *c, p[0] / c[0]))
            if bport:
                b = best["base"]
                print("%-7d base %7.0f %9.0f %9.0f   base/core %.2fx, peerd/base %.2fx" % (
                    n, *b, b[0] / c[0], p[0] / b[0]))
        # What the rows cost in memory: peak and current RSS of each node
        # (the servers are idle now), as daemon/net/recvbudget.c's malloc
        # settings change it.
        time.sleep(2)
        names = [("peerd", procs[1]), ("core", procs[0])] + ([("base", procs[2])] if bport else [])
        print("RSS MiB after the runs (peak / now): " + ", ".join(
            "%s %.1f / %.1f" % (name, vm(p.pid, "VmHWM") / 2**20, vm(p.pid, "VmRSS") / 2**20)
            for name, p in names))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
