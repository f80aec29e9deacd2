#!/usr/bin/python3
"""HTTP JSON-RPC throughput and latency, peerd against bitcoind, in one sitting.

    scripts/bench-rpc-http.py [--seconds S] [--clients 1,16] [--method getblockcount]

Starts a regtest bitcoind (../shared/bin or $BITCOIND) and peerd (build/bin
or $PEERD_BIN) on loopback with free ports and the same -rpcuser/-rpcpassword,
mines a block on bitcoind and gives it to peerd, then for each client
count runs that many processes, each on one HTTP/1.1 keep-alive connection
sending the method back to back for S seconds (default 5) to one node,
then the other (peerd, bitcoind, peerd, bitcoind: the better of two runs
each, so both see the same machine load). Prints requests/s and the
p50/p99 latency in microseconds, and peerd/Core. The clients are Python:
on a fast server they are part of what is measured (a floor the same for
both), so the ratio understates peerd's lead rather than overstating it.
Loopback only; every process started is stopped at the end.
"""
import argparse
import base64
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
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
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


def client(port, body, seconds, out):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    hdr = {"Authorization": AUTH, "Content-Type": "application/json"}
    lat = []
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        c.request("POST", "/", body, hdr)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            raise RuntimeError("HTTP %d" % r.status)
        lat.append(time.perf_counter() - t0)
    c.close()
    out.put(lat)


def run(port, body, clients, seconds):
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=client, args=(port, body, seconds, q)) for _ in range(clients)]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,16")
    ap.add_argument("--method", default="getblockcount")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-rpc-")
    procs = []
    try:
        cport, pport = free_port(), free_port()
        os.makedirs(os.path.join(tmp, "core"))
        os.makedirs(os.path.join(tmp, "peerd"))
        procs.append(subprocess.Popen(
            [BITCOIND, "-regtest", "-datadir=" + os.path.join(tmp, "core"), "-listen=0", "-rpcport=%d" % cport,
             "-rpcuser=bench", "-rpcpassword=bench", "-dnsseed=0", "-fixedseeds=0", "-natpmp=0", "-discover=0",
             "-printtoconsole=0", "-server=1", "-daemon=0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(
            [PEERD, "-chain=regtest", "-datadir=" + os.path.join(tmp, "peerd"), "-listen=0", "-rpcport=%d" % pport,
             "-rpcuser=bench", "-rpcpassword=bench", "-printtoconsole=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_rpc(cport, procs[0], "bitcoind")
        wait_rpc(pport, procs[1], "peerd")
        h = call(cport, "generatetodescriptor", [1, call(cport, "getdescriptorinfo", ["raw(51)"])["descriptor"]])[0]
        call(pport, "submitblock", [call(cport, "getblock", [h, 0])])
        params = {"getblock": [h, 2], "getblockhash": [1]}.get(a.method, [])
        body = json.dumps({"method": a.method, "params": params, "id": 1})
        print("%-14s %7s %12s %9s %9s %12s %9s %9s %8s" % ("method", "clients", "peerd req/s", "p50 us", "p99 us",
                                                            "core req/s", "p50 us", "p99 us", "peerd/core"))
        for n in [int(x) for x in a.clients.split(",")]:
            best = {}
            for _ in range(2):
                for name, port in (("peerd", pport), ("core", cport)):
                    r = run(port, body, n, a.seconds)
                    if name not in best or r[0] > best[name][0]:
                        best[name] = r
            p, c = best["peerd"], best["core"]
            print("%-14s %7d %12.0f %9.0f %9.0f %12.0f %9.0f %9.0f %8.2fx" % (a.method, n, *p, *c, p[0] / c[0]))
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
