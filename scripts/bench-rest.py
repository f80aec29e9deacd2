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
import hashlib
import http.client
import os
import shutil
import sys
import tempfile
import time

import benchlib
from benchlib import BITCOIND, PEERD, call, free_port, wait_rpc


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
    return benchlib.run_clients(client, (port, path), clients, seconds)


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
        procs.append(benchlib.start_http(BITCOIND, os.path.join(tmp, "core"), cport, core=True, extra=["-rest"]))
        procs.append(benchlib.start_http(PEERD, os.path.join(tmp, "peerd"), pport, extra=["-rest"]))
        bport = None
        if a.base:
            bport = free_port()
            procs.append(benchlib.start_http(a.base, os.path.join(tmp, "base"), bport, extra=["-rest"]))
            wait_rpc(bport, procs[-1], "base peerd")
        wait_rpc(cport, procs[0], "bitcoind")
        wait_rpc(pport, procs[1], "peerd")
        desc = call(cport, "getdescriptorinfo", ["raw(51)"])["descriptor"]
        hashes = call(cport, "generatetodescriptor", [101, desc])
        first_cb = call(cport, "getblock", [hashes[0]])["tx"][0]
        h = call(cport, "generateblock", [desc, [benchlib.big_tx(first_cb, 100)]])["hash"]
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
        benchlib.stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
