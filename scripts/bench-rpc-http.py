#!/usr/bin/python3
"""HTTP JSON-RPC throughput and latency, peerd against bitcoind, in one sitting.

    scripts/bench-rpc-http.py [--seconds S] [--clients 1,16] [--method getblockcount]
                              [--params JSON] [--big] [--client c|python] [--base PATH]

Starts a regtest bitcoind (../shared/bin or $BITCOIND) and peerd (build/bin
or $PEERD_BIN) on loopback with free ports and the same -rpcuser/-rpcpassword,
mines a block on bitcoind (with --big, a block of about 900 kB after 190
others) and gives peerd the chain, then for each client count runs that
many clients, each on one HTTP/1.1 keep-alive connection sending the method
back to back for S seconds (default 5) to one node, then the other (peerd,
bitcoind, peerd, bitcoind: the better of two runs each, so both see the same
machine load). Prints requests/s and the p50/p99 latency in microseconds,
and peerd/Core. The clients are threads of bench/http/rpc_load.c, compiled
with cc into the run's directory (--client python: processes of Python,
whose own cost hid the servers'); they share the machine with the servers,
the same floor for both. --params gives the method's parameters as JSON
(BLOCK stands for the block's hash), e.g. --method getblock --params
'["BLOCK", 0]' --big. Loopback only; every process started is stopped at
the end. --base PATH adds a second peerd binary (an older build) to the
rotation, for an A/B of two builds in the same sitting.
"""
import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import time

import benchlib
from benchlib import AUTH, BITCOIND, PEERD, ROOT, call, free_port, wait_rpc


def big_block(cport, desc, n_tx=90, script_len=9900):
    """A block of about n_tx * script_len bytes (900 KB by default): each transaction spends a
    mature OP_TRUE coinbase (raw(51): no signature) into one output whose script is script_len
    bytes of OP_TRUE. Not standard, so it goes in through generateblock, which takes raw
    transactions and checks only consensus."""
    hashes = call(cport, "generatetodescriptor", [n_tx + 100, desc])
    txs = []
    for bh in hashes[:n_tx]:
        cb = call(cport, "getblock", [bh, 1])["tx"][0]
        value = 5000000000 - 100000
        script = b"\x51" * script_len
        raw = (b"\x02\x00\x00\x00" + b"\x01" + bytes.fromhex(cb)[::-1] + b"\x00\x00\x00\x00" + b"\x00" +
               b"\xff\xff\xff\xff" + b"\x01" + value.to_bytes(8, "little") + b"\xfd" +
               len(script).to_bytes(2, "little") + script + b"\x00\x00\x00\x00")
        txs.append(raw.hex())
    return call(cport, "generateblock", [desc, txs])["hash"]


def client(port, body, seconds, out):
    # A raw keep-alive client: the request is encoded once and the reply read
    # by its Content-Length (http.client cost more than either server).
    req = ("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\n"
           "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (AUTH, len(body))).encode() + body.encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lat = []
    buf = b""
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        s.sendall(req)
        while b"\r\n\r\n" not in buf:
            d = s.recv(1 << 20)
            if not d:
                raise RuntimeError("connection closed")
            buf += d
        head, _, buf = buf.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.split(b"\r\n")[0].decode())
        n = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v)
        while len(buf) < n:
            d = s.recv(max(1 << 20, n - len(buf)))
            if not d:
                raise RuntimeError("connection closed")
            buf += d
        buf = buf[n:]
        lat.append(time.perf_counter() - t0)
    s.close()
    out.put(lat)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_c(exe, port, body, clients, seconds):
    out = subprocess.run([exe, str(port), str(clients), str(seconds), AUTH, body], check=True,
                         stdout=subprocess.PIPE).stdout.split()
    return benchlib.rate_p50_p99([int(x) / 1e9 for x in out[1:]], seconds)


def run(port, body, clients, seconds):
    return benchlib.run_clients(client, (port, body), clients, seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,16")
    ap.add_argument("--method", default="getblockcount")
    ap.add_argument("--params", help="JSON array of the method's parameters (default: the block's hash and 2 "
                    "for getblock, 1 for getblockhash, none for the rest; BLOCK stands for the block's hash)")
    ap.add_argument("--client", choices=("c", "python"), default="c",
                    help="the load generator: bench/http/rpc_load.c compiled with cc (default), or Python")
    ap.add_argument("--big", action="store_true",
                    help="mine a block of about 1 MB on bitcoind first (its own coinbase outputs spent into "
                    "large OP_RETURN-free transactions) and ask for that one")
    ap.add_argument("--base", help="a second peerd binary (an older build) measured in the same rotation: "
                    "an A/B of two builds in one sitting, printed as base req/s and peerd/base")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-rpc-")
    procs = []
    try:
        exe = None
        if a.client == "c":
            exe = os.path.join(tmp, "rpc_load")
            subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-pthread", "-o", exe, os.path.join(ROOT, "bench", "http", "rpc_load.c")],
                           check=True)
        cport, pport = free_port(), free_port()
        procs.append(benchlib.start_http(BITCOIND, os.path.join(tmp, "core"), cport, core=True))
        procs.append(benchlib.start_http(PEERD, os.path.join(tmp, "peerd"), pport))
        bport = None
        if a.base:
            bport = free_port()
            procs.append(benchlib.start_http(a.base, os.path.join(tmp, "base"), bport))
            wait_rpc(bport, procs[-1], "base peerd")
        wait_rpc(cport, procs[0], "bitcoind")
        wait_rpc(pport, procs[1], "peerd")
        desc = call(cport, "getdescriptorinfo", ["raw(51)"])["descriptor"]
        if a.big:
            h = big_block(cport, desc)
        else:
            h = call(cport, "generatetodescriptor", [1, desc])[0]
        # peerd gets bitcoind's chain, block by block.
        for height in range(1, call(cport, "getblockcount") + 1):
            raw = call(cport, "getblock", [call(cport, "getblockhash", [height]), 0])
            for port in [pport] + ([bport] if bport else []):
                call(port, "submitblock", [raw])
        params = {"getblock": [h, 2], "getblockhash": [1]}.get(a.method, [])
        if a.params:
            params = json.loads(a.params.replace("BLOCK", h))
        body = json.dumps({"method": a.method, "params": params, "id": 1})
        print("%-14s %7s %12s %9s %9s %12s %9s %9s %8s" % ("method", "clients", "peerd req/s", "p50 us", "p99 us",
                                                            "core req/s", "p50 us", "p99 us", "peerd/core"))
        for n in [int(x) for x in a.clients.split(",")]:
            best, cpu = {}, {}
            pids = {"peerd": procs[1].pid, "core": procs[0].pid, "base": procs[2].pid if bport else None}
            for _ in range(2):
                for name, port in (("peerd", pport), ("core", cport)) + ((("base", bport),) if bport else ()):
                    s0, c0 = sum(benchlib.cpu_seconds(pids[name])), children_cpu()
                    r = run_c(exe, port, body, n, a.seconds) if exe else run(port, body, n, a.seconds)
                    s1, c1 = sum(benchlib.cpu_seconds(pids[name])), children_cpu()
                    if name not in best or r[0] > best[name][0]:
                        best[name] = r
                        # CPU a request of the server and of the clients (the best run's).
                        done = r[0] * a.seconds
                        cpu[name] = ((s1 - s0) / done * 1e6, (c1 - c0) / done * 1e6) if done else (0, 0)
            p, c = best["peerd"], best["core"]
            print("%-14s %7d %12.0f %9.0f %9.0f %12.0f %9.0f %9.0f %8.2fx" % (a.method, n, *p, *c, p[0] / c[0]))
            if bport:
                b = best["base"]
                print("%-14s %7d base %7.0f %9.0f %9.0f   base/core %.2fx, peerd/base %.2fx" % (
                    a.method, n, *b, b[0] / c[0], p[0] / b[0]))
            print("%-14s %7d cpu us/req (server, clients): %s; load %s" % (
                a.method, n, ", ".join("%s %.1f, %.1f" % (k, *v) for k, v in cpu.items()),
                " ".join(open("/proc/loadavg").read().split()[:3])))
    finally:
        benchlib.stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
